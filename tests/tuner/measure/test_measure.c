/* nettune-tune-measure without a GPU (make test-measure): the plan reader, the sweep's lockstep,
 * warm-up, confirmation (not applied), averaging over ranks and budget on the fake backend with
 * the in-process launcher, the nettune.measured/1 round trip, and the TCP launcher over
 * loopback with forked ranks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure.h"
#include "measured_fmt.h"
#include "nettune/report.h"
#include "tuner/model.h"

static const char *PLAN2 =
    "{\"schema\": \"nettune.plan/1\", \"shapes\": ["
    " {\"coll\": \"allreduce\", \"nnodes\": 2, \"nranks\": 2, \"sizes\": ["
    "  {\"bytes\": 1024, \"candidates\": [{\"algo\": \"ring\", \"proto\": \"ll\", "
    "\"predicted_us\": 20, \"default\": true}, {\"algo\": \"tree\", \"proto\": \"ll\", "
    "\"predicted_us\": 15}, {\"algo\": \"nvls\", \"proto\": \"simple\", \"predicted_us\": 5}]},"
    "  {\"bytes\": 1048576, \"candidates\": [{\"algo\": \"ring\", \"proto\": \"simple\", "
    "\"predicted_us\": 200}, {\"algo\": \"tree\", \"proto\": \"ll128\", \"predicted_us\": 150, "
    "\"nchannels\": 4}]}]},"
    " {\"coll\": \"allgather\", \"nnodes\": 4, \"nranks\": 4, \"sizes\": [{\"bytes\": 4096, "
    "\"candidates\": [{\"algo\": \"ring\", \"proto\": \"ll\"}]}]}]}";

static void plan_from(const char *text, nt_measure_plan_t *p, nt_status_t want, const char *msg)
{
    cJSON *d = cJSON_Parse(text);
    assert_non_null(d);
    char err[512] = "";
    nt_status_t st = nt_measure_plan_from_json(d, p, err, sizeof(err));
    cJSON_Delete(d);
    if (st != want)
        print_error("status %d, want %d: %s\n", st, want, err);
    assert_int_equal(st, want);
    if (msg)
        assert_non_null(strstr(err, msg));
}

static void test_plan_read(void **state)
{
    (void)state;
    nt_measure_plan_t p;
    plan_from(PLAN2, &p, NT_OK, NULL);
    assert_int_equal(p.nshapes, 2);
    assert_int_equal(p.shape[0].coll, NT_COLL_ALLREDUCE);
    assert_int_equal(p.shape[0].nsizes, 2);
    /* three candidates and NCCL's own choice appended */
    assert_int_equal(p.shape[0].size[0].ncand, 4);
    assert_int_equal(p.shape[0].size[0].cand[3].is_default, 1);
    assert_int_equal(p.shape[0].size[0].cand[0].is_default,
                     0); /* the model's default is forced too */
    assert_int_equal(p.shape[0].size[0].cand[2].algo, NT_ALGO_NVLS);
    assert_int_equal(p.shape[0].size[1].cand[1].nchannels, 4);
    assert_true(p.shape[0].size[1].bytes == 1048576);
    assert_int_equal(p.ncfg, 1);
    assert_int_equal(p.cfg[0].min_ctas, -1);
    assert_int_equal(p.nlaunches, 0);
    nt_measure_plan_free(&p);

    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [], \"comm_configs\": [{\"min_ctas\": "
              "4, \"max_ctas\": 16}, {\"cga_cluster_size\": 2}], \"launches\": [{\"env\": "
              "{\"NCCL_BUFFSIZE\": \"4194304\"}}, {\"env\": {}}]}",
              &p, NT_OK, NULL);
    assert_int_equal(p.ncfg, 2);
    assert_int_equal(p.cfg[0].min_ctas, 4);
    assert_int_equal(p.cfg[0].max_ctas, 16);
    assert_int_equal(p.cfg[1].cga_cluster_size, 2);
    assert_int_equal(p.nlaunches, 2);
    assert_string_equal(p.launch[0].env[0], "NCCL_BUFFSIZE=4194304");
    assert_int_equal(p.launch[1].nenv, 0);
    nt_measure_plan_free(&p);
}

static void test_plan_errors(void **state)
{
    (void)state;
    nt_measure_plan_t p;
    plan_from("{\"schema\": \"nettune.tuning/1\", \"shapes\": []}", &p, NT_ERR_INVALID,
              "nettune.plan/1");
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [{\"coll\": \"allreduce\", "
              "\"nnodes\": 2, \"nranks\": 1}]}",
              &p, NT_ERR_INVALID, "shapes[0]");
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [{\"coll\": \"allreduce\", "
              "\"nnodes\": 1, \"nranks\": 2, \"sizes\": [{\"bytes\": 8, \"candidates\": "
              "[{\"algo\": \"warp\", \"proto\": \"ll\"}]}]}]}",
              &p, NT_ERR_INVALID, "candidates[0]");
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [], \"comm_configs\": [{\"min_ctas\": "
              "8, \"max_ctas\": 2}]}",
              &p, NT_ERR_INVALID, "min_ctas");
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [], \"launches\": [{\"env\": "
              "{\"LD_PRELOAD\": \"x\"}}]}",
              &p, NT_ERR_INVALID, "NCCL_*");
}

/* ---- the sweep on the fake backend, in-process ranks */

typedef struct {
    const char *plan_text[4]; /* per rank (NULL: PLAN2) */
    nt_measure_opts_t o;
    nt_measure_fake_t fake[4];
    cJSON *doc;
    nt_status_t st[4];
    char err[4][512];
} sweep_t;

static int sweep_fn(nt_launcher_t *l, void *arg)
{
    sweep_t *s = arg;
    int r = nt_launcher_rank(l);
    nt_measure_plan_t p;
    cJSON *d = cJSON_Parse(s->plan_text[r] ? s->plan_text[r] : PLAN2);
    char err[256];
    if (nt_measure_plan_from_json(d, &p, err, sizeof(err)) != NT_OK)
        return 1;
    cJSON_Delete(d);
    nt_measure_backend_t b = {&nt_measure_fake_ops, &s->fake[r]};
    b.ops->init(b.self, l, err, sizeof(err));
    cJSON *doc = NULL;
    s->st[r] = nt_measure_sweep(l, &b, &p, &s->o, &doc, s->err[r], sizeof(s->err[r]));
    b.ops->finalize(b.self);
    if (r == 0)
        s->doc = doc;
    else if (doc)
        return 2; /* only rank 0 has the document */
    nt_measure_plan_free(&p);
    return 0;
}

static const cJSON *find_point(const cJSON *arr, unsigned long long bytes, const char *algo,
                               const char *proto, int is_default)
{
    const cJSON *p;
    cJSON_ArrayForEach (p, arr)
        if ((unsigned long long)nt_json_get_num(p, "bytes", 0) == bytes &&
            !strcmp(nt_json_get_str(p, "algo", ""), algo) &&
            !strcmp(nt_json_get_str(p, "proto", ""), proto) &&
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "default")) == is_default)
            return p;
    return NULL;
}

static void test_sweep_two_ranks(void **state)
{
    (void)state;
    static sweep_t s;
    memset(&s, 0, sizeof(s));
    s.o = (nt_measure_opts_t){.warmup = 5, .iters = 20, .trials = 3, .timeout_s = 10};
    assert_int_equal(nt_inproc_run(2, 1, sweep_fn, &s, NULL), 0);
    assert_int_equal(s.st[0], NT_OK);
    assert_int_equal(s.st[1], NT_OK);
    assert_non_null(s.doc);
    assert_string_equal(nt_json_get_str(s.doc, "schema", ""), NT_MEASURED_SCHEMA);
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(s.doc, "points");
    const cJSON *na = cJSON_GetObjectItemCaseSensitive(s.doc, "not_applied");
    /* size 1024: ring/ll, tree/ll, default (nvls not applied); 1 MiB: ring/simple, tree/ll128,
     * default */
    assert_int_equal(cJSON_GetArraySize(pts), 6);
    assert_int_equal(cJSON_GetArraySize(na), 1);
    const cJSON *n = cJSON_GetArrayItem(na, 0);
    assert_string_equal(nt_json_get_str(n, "forced_algo", ""), "nvls");
    assert_string_equal(nt_json_get_str(n, "algo", ""), "ring"); /* what ran instead */
    assert_non_null(strstr(nt_json_get_str(n, "why", ""), "IGNORE"));
    /* time: mean over ranks of 15 us x (1 + 0.01 rank) = 15.075; spread 0.15 / 15.075 */
    const cJSON *t = find_point(pts, 1024, "tree", "ll", 0);
    assert_non_null(t);
    assert_true(fabs(nt_json_get_num(t, "time_us", 0) - 15.075) < 1e-3);
    assert_true(fabs(nt_json_get_num(t, "spread", 0) - 0.00995) < 1e-3);
    /* NCCL's own choice is measured and marked default, with what ran */
    const cJSON *d = find_point(pts, 1048576, "ring", "simple", 1);
    assert_non_null(d);
    assert_true(fabs(nt_json_get_num(d, "time_us", 0) - (10 + 104.8576) * 1.005) < 1e-2);
    assert_int_equal(
        (int)nt_json_get_num(find_point(pts, 1048576, "tree", "ll128", 0), "nchannels", 0), 4);
    /* the 4-rank allgather shape is skipped with the reason */
    const cJSON *sk = cJSON_GetObjectItemCaseSensitive(s.doc, "skipped");
    assert_int_equal(cJSON_GetArraySize(sk), 1);
    assert_non_null(strstr(cJSON_GetArrayItem(sk, 0)->valuestring, "4 ranks"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s.doc, "completed")));
    /* every rank: one communicator, each of the 7 candidates warmed up once (5 calls), 3 timed
     * trials of 20 */
    for (int r = 0; r < 2; r++) {
        assert_int_equal(s.fake[r].comms, 1);
        assert_int_equal(s.fake[r].warmup_calls, 7 * 5);
        assert_int_equal(s.fake[r].calls, 7 * (5 + 3 * 20));
    }
    cJSON_Delete(s.doc);
}

static void test_sweep_out_of_lockstep(void **state)
{
    (void)state;
    static sweep_t s;
    memset(&s, 0, sizeof(s));
    s.o = (nt_measure_opts_t){.warmup = 1, .iters = 1, .trials = 1, .timeout_s = 10};
    /* rank 1 has another size: stopped before anything runs on it */
    s.plan_text[1] =
        "{\"schema\": \"nettune.plan/1\", \"shapes\": [{\"coll\": \"allreduce\", \"nnodes\": 2, "
        "\"nranks\": 2, \"sizes\": [{\"bytes\": 2048, \"candidates\": [{\"algo\": \"ring\", "
        "\"proto\": \"ll\"}]}]}]}";
    assert_int_equal(nt_inproc_run(2, 1, sweep_fn, &s, NULL), 0);
    assert_int_equal(s.st[0], NT_ERR_PEER);
    assert_int_equal(s.st[1], NT_ERR_PEER);
    assert_non_null(strstr(s.err[0], "out of lockstep"));
    assert_int_equal(s.fake[0].calls, 0);
    assert_int_equal(s.fake[1].calls, 0);
    assert_non_null(s.doc); /* partial document kept */
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s.doc, "completed")));
    cJSON_Delete(s.doc);
}

static void test_sweep_budget(void **state)
{
    (void)state;
    static sweep_t s;
    memset(&s, 0, sizeof(s));
    s.o = (nt_measure_opts_t){
        .warmup = 1, .iters = 1, .trials = 1, .timeout_s = 10, .budget_s = 1e-9};
    assert_int_equal(nt_inproc_run(2, 1, sweep_fn, &s, NULL), 0);
    assert_int_equal(s.st[0], NT_ERR_INTERRUPTED);
    assert_int_equal(s.st[1], NT_ERR_INTERRUPTED);
    assert_int_equal(s.fake[0].calls, s.fake[1].calls); /* both stopped at the same candidate */
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s.doc, "completed")));
    assert_non_null(strstr(s.err[0], "--budget-seconds"));
    cJSON_Delete(s.doc);
}

/* The fake's communicator creation fails on every rank: an error, no hang. */
static void test_sweep_comm_fails(void **state)
{
    (void)state;
    static sweep_t s;
    memset(&s, 0, sizeof(s));
    s.o = (nt_measure_opts_t){.warmup = 1, .iters = 1, .trials = 1, .timeout_s = 10};
    s.fake[0].fail_comm = s.fake[1].fail_comm = 1;
    assert_int_equal(nt_inproc_run(2, 1, sweep_fn, &s, NULL), 0);
    assert_int_equal(s.st[0], NT_ERR_SYSTEM);
    assert_non_null(strstr(s.err[0], "communicator"));
    cJSON_Delete(s.doc);
}

/* ---- nettune.measured/1: what measure writes, tune reads back */

static void test_measured_round_trip(void **state)
{
    (void)state;
    nt_tune_point_t q = {.coll = NT_COLL_ALLGATHER,
                         .shape = {.nnodes = 2, .nranks = 16},
                         .bytes = 1ull << 33,
                         .algo = NT_ALGO_PAT,
                         .proto = NT_PROTO_SIMPLE,
                         .time_us = 1234.5678,
                         .spread = 0.0421,
                         .reg_buff = 1};
    cJSON *o = nt_measured_point_json(&q);
    nt_tune_point_t r;
    assert_int_equal(nt_measured_point_parse(o, &r), 0);
    assert_int_equal(r.coll, NT_COLL_ALLGATHER);
    assert_int_equal(r.shape.nranks, 16);
    assert_int_equal(r.shape.ppn, 8);
    assert_true(r.bytes == 1ull << 33);
    assert_int_equal(r.algo, NT_ALGO_PAT);
    assert_int_equal(r.proto, NT_PROTO_SIMPLE);
    assert_true(fabs(r.time_us - 1234.568) < 1e-9);
    assert_int_equal(r.reg_buff, 1);
    assert_int_equal(r.how, NT_RAN_MEASURED);
    cJSON_Delete(o);
    /* a forced point without algo is refused; a default one without algo is taken */
    q.algo = -1;
    o = nt_measured_point_json(&q);
    assert_int_equal(nt_measured_point_parse(o, &r), -1);
    cJSON_Delete(o);
    q.is_default = 1;
    o = nt_measured_point_json(&q);
    assert_int_equal(nt_measured_point_parse(o, &r), 0);
    cJSON_Delete(o);
}

/* ---- the TCP launcher: forked ranks over loopback */

static void test_tcp_launcher(void **state)
{
    (void)state;
    const int n = 3;
    int port = 20000 + (int)(getpid() % 20000);
    pid_t pid[3];
    for (int r = 0; r < n; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            char err[256];
            nt_launcher_t *l =
                nt_launcher_tcp_create(r, n, "127.0.0.1", port, -1, 10, err, sizeof(err));
            if (!l)
                _exit(10);
            int32_t v = 100 + r, all[3] = {0};
            if (l->ops->allgather(l, &v, all, sizeof(v), 5) != NT_OK || all[0] != 100 ||
                all[1] != 101 || all[2] != 102)
                _exit(11);
            char id[128] = {0};
            if (r == 2)
                strcpy(id, "unique-id-from-rank-2");
            if (l->ops->bcast(l, id, sizeof(id), 2, 5) != NT_OK ||
                strcmp(id, "unique-id-from-rank-2"))
                _exit(12);
            if (l->ops->barrier(l, 5) != NT_OK)
                _exit(13);
            /* a rank that leaves: the others see NT_ERR_PEER, not a hang */
            if (r == 1) {
                nt_launcher_tcp_destroy(l);
                _exit(0);
            }
            nt_status_t st = l->ops->barrier(l, 5);
            nt_launcher_tcp_destroy(l);
            _exit(st == NT_ERR_PEER || st == NT_ERR_TIMEOUT ? 0 : 14);
        }
    }
    for (int r = 0; r < n; r++) {
        int status = 0;
        waitpid(pid[r], &status, 0);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status))
            print_error("rank %d exited %d\n", r, WEXITSTATUS(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    /* nobody listening: rank 1 gives up at its deadline with one line */
    char err[256];
    nt_launcher_t *l =
        nt_launcher_tcp_create(1, 2, "127.0.0.1", port + 1, -1, 0.3, err, sizeof(err));
    assert_null(l);
    assert_non_null(strstr(err, "cannot reach rank 0"));
}

/* ---- --verify: A/B, interleaved, on the fake backend */

typedef struct {
    const char *tuning;
    double factor;
    nt_measure_fake_t fake[2];
    cJSON *doc;
    nt_status_t st[2];
    char err[2][512];
} verify_t;

static int verify_fn(nt_launcher_t *l, void *arg)
{
    verify_t *v = arg;
    int r = nt_launcher_rank(l);
    char err[256];
    v->fake[r].file_factor = v->factor;
    nt_measure_backend_t b = {&nt_measure_fake_ops, &v->fake[r]};
    b.ops->init(b.self, l, err, sizeof(err));
    nt_measure_opts_t o = {.warmup = 2, .iters = 4, .trials = 3, .timeout_s = 10};
    cJSON *doc = NULL;
    v->st[r] =
        nt_measure_verify(l, &b, v->tuning, 1024, 8192, &o, &doc, v->err[r], sizeof(v->err[r]));
    if (r == 0)
        v->doc = doc;
    return 0;
}

static char *write_tuning(const char *rules)
{
    static char path[64];
    strcpy(path, "/tmp/nt-measure-tuning-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char text[1024];
    int n =
        snprintf(text, sizeof(text), "{\"schema\": \"nettune.tuning/1\", \"rules\": [%s]}", rules);
    assert_int_equal(write(fd, text, (size_t)n), n);
    close(fd);
    return path;
}

static void test_verify(void **state)
{
    (void)state;
    static verify_t v;
    memset(&v, 0, sizeof(v));
    v.tuning = write_tuning("{\"coll\": \"allreduce\", \"nranks\": 2, \"algo\": \"tree\"},"
                            "{\"coll\": \"allgather\", \"nranks\": 8, \"algo\": \"ring\"}");
    v.factor = 0.8; /* the file's communicator runs 1.25x faster */
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, &v, NULL), 0);
    assert_int_equal(v.st[0], NT_OK);
    assert_non_null(v.doc);
    const cJSON *sz = cJSON_GetObjectItemCaseSensitive(v.doc, "sizes");
    assert_int_equal(cJSON_GetArraySize(sz), 4); /* allreduce only (allgather is for 8 ranks) */
    const cJSON *e;
    cJSON_ArrayForEach (e, sz) {
        assert_string_equal(nt_json_get_str(e, "coll", ""), "allreduce");
        assert_true(fabs(nt_json_get_num(e, "speedup", 0) - 1.25) < 1e-3);
        assert_string_equal(nt_json_get_str(e, "verdict", ""), "faster");
    }
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(v.doc, "summary");
    assert_int_equal((int)nt_json_get_num(sm, "faster", 0), 4);
    assert_true(fabs(nt_json_get_num(sm, "geomean_speedup", 0) - 1.25) < 1e-3);
    /* two communicators per rank: one without the file, one with it */
    assert_int_equal(v.fake[1].comms, 2);
    assert_int_equal(v.fake[1].file[0], 0);
    assert_int_equal(v.fake[1].file[1], 1);
    /* warm-up once per size and communicator, 3 rounds x 2 runs x 4 iterations timed */
    assert_int_equal(v.fake[1].warmup_calls, 4 * 2 * 2);
    assert_int_equal(v.fake[1].calls, 4 * 2 * 2 + 4 * 3 * 2 * 4);
    cJSON_Delete(v.doc);

    /* no effect: every size "same" */
    memset(&v.fake, 0, sizeof(v.fake));
    v.factor = 0;
    v.doc = NULL;
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, &v, NULL), 0);
    sm = cJSON_GetObjectItemCaseSensitive(v.doc, "summary");
    assert_int_equal((int)nt_json_get_num(sm, "same", 0), 4);
    assert_int_equal((int)nt_json_get_num(sm, "slower", 0), 0);
    cJSON_Delete(v.doc);

    /* slower: verdict slower */
    memset(&v.fake, 0, sizeof(v.fake));
    v.factor = 1.5;
    v.doc = NULL;
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, &v, NULL), 0);
    sm = cJSON_GetObjectItemCaseSensitive(v.doc, "summary");
    assert_int_equal((int)nt_json_get_num(sm, "slower", 0), 4);
    cJSON_Delete(v.doc);

    /* a file with no rule for 2 ranks: one line, nothing run */
    unlink(v.tuning);
    v.tuning = write_tuning("{\"coll\": \"allreduce\", \"nranks\": 16, \"algo\": \"tree\"}");
    memset(&v.fake, 0, sizeof(v.fake));
    v.doc = NULL;
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, &v, NULL), 0);
    assert_int_equal(v.st[0], NT_ERR_INVALID);
    assert_non_null(strstr(v.err[0], "no rule applies to 2 ranks"));
    assert_int_equal(v.fake[0].calls, 0);
    unlink(v.tuning);
}

/* ---- NCCL's table and per-call lines from a real 2-rank socket log (NCCL 2.29.7) */

static void test_capture(void **state)
{
    (void)state;
    cJSON *d = cJSON_CreateObject();
    assert_int_equal(nt_measure_capture_attach(d,
                                               "tests/fixtures/nccl-tuning-tables/"
                                               "repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-"
                                               "COMPLETE.log",
                                               5),
                     NT_OK);
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "nccl");
    assert_int_equal((int)nt_json_get_num(n, "version", 0), 22907);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(n, "table");
    assert_non_null(t);
    assert_true(nt_json_get_num(t, "cells", 0) > 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(t, "entries")),
                     (int)nt_json_get_num(t, "cells", 0));
    assert_true(nt_json_get_num(n, "tuning_calls", 0) > 5);
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(n, "calls");
    assert_int_equal(cJSON_GetArraySize(calls), 5);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(calls, 0), "algo", ""), "RING");
    cJSON_Delete(d);
    d = cJSON_CreateObject();
    assert_int_equal(nt_measure_capture_attach(d, "/nonexistent/nccl.log", 5), NT_ERR_NOT_FOUND);
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_read),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_sweep_two_ranks),
        cmocka_unit_test(test_sweep_out_of_lockstep),
        cmocka_unit_test(test_sweep_budget),
        cmocka_unit_test(test_sweep_comm_fails),
        cmocka_unit_test(test_measured_round_trip),
        cmocka_unit_test(test_tcp_launcher),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_capture),
    };
    return cmocka_run_group_tests_name("nettune-tune-measure (fake backend)", tests, NULL, NULL);
}
