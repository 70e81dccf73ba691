/* nettune-tune-measure without a GPU (make test-measure): the plan reader, the sweep's lockstep,
 * warm-up, confirmation (not applied), averaging over ranks and budget on the fake backend with
 * the in-process launcher, the nettune.measured/1 round trip, and the TCP launcher over
 * loopback with forked ranks, and its rendezvous' refusals (wrong secret, duplicate rank, silent
 * client, another interface). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "measure.h"
#include "measured_fmt.h"
#include "tune.h"
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
    /* numbers beyond the integer they fill are not converted (UB): a negative size was read as
     * 2^64 - 5 bytes, a CTA count of 1e300 as INT_MIN */
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [{\"coll\": \"allreduce\", "
              "\"nnodes\": 1, \"nranks\": 2, \"sizes\": [{\"bytes\": -5}]}]}",
              &p, NT_ERR_INVALID, "needs bytes > 0");
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [{\"coll\": \"allreduce\", "
              "\"nnodes\": 1e300, \"nranks\": 2, \"sizes\": []}]}",
              &p, NT_ERR_INVALID, "nnodes >= 1");
    plan_from("{\"schema\": \"nettune.plan/1\", \"shapes\": [], \"comm_configs\": [{\"min_ctas\": "
              "1e300, \"cga_cluster_size\": -1e300}]}",
              &p, NT_OK, NULL);
    assert_int_equal(p.ncfg, 1);
    assert_int_equal(p.cfg[0].min_ctas, -1);
    assert_int_equal(p.cfg[0].cga_cluster_size, -1);
    nt_measure_plan_free(&p);
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
    /* numbers beyond the integer they fill are not converted (UB): a negative size was read as
     * 2^64 - 5 bytes and taken, a reg_buff of 1e300 as INT_MIN */
    o = cJSON_Parse("{\"coll\": \"allreduce\", \"nnodes\": 1, \"nranks\": 2, \"bytes\": -5, "
                    "\"time_us\": 3, \"default\": true}");
    assert_int_equal(nt_measured_point_parse(o, &r), -1);
    cJSON_Delete(o);
    o = cJSON_Parse("{\"coll\": \"allreduce\", \"nnodes\": 1, \"nranks\": 2, \"bytes\": 8, "
                    "\"time_us\": 3, \"default\": true, \"reg_buff\": 1e300}");
    assert_int_equal(nt_measured_point_parse(o, &r), 0);
    assert_int_equal(r.reg_buff, -1);
    cJSON_Delete(o);
}

/* ---- the TCP launcher: forked ranks over loopback */

#define SECRET_A "00112233445566778899aabbccddeeff"
#define SECRET_B "ffeeddccbbaa99887766554433221100"

/* A TCP port for a test's rendezvous: below Linux's ephemeral range (32768-60999 by default,
 * net.ipv4.ip_local_port_range), where another suite's connections take theirs, and free now
 * (a bind with SO_REUSEADDR, as the launcher binds, succeeds), the pid spreading concurrent
 * runs. A port drawn from 20000-39999 by the pid alone failed rank 0's bind once in a make
 * test run. */
static int test_port(int salt)
{
    for (int k = 0; k < 200; k++) {
        int port = 20000 + (int)((getpid() + salt + 61 * k) % 12000), one = 1;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0)
            break;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        int ok = bind(s, (struct sockaddr *)&a, sizeof(a)) == 0;
        close(s);
        if (ok)
            return port;
    }
    return 20000 + (int)((getpid() + salt) % 12000);
}

static void test_tcp_launcher(void **state)
{
    (void)state;
    setenv("NETTUNE_MEASURE_SECRET", SECRET_A, 1);
    const int n = 3;
    int port = test_port(0);
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

/* A connection to 127.0.0.x:port, or -1. */
static int tcp_to(const char *ip, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &a.sin_addr);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(s);
        s = -1;
    }
    return s;
}

/* Connect until rank 0 listens (up to 5 s). */
static int tcp_to_wait(const char *ip, int port)
{
    int s = -1;
    for (int i = 0; i < 100 && s < 0; i++)
        if ((s = tcp_to(ip, port)) < 0)
            usleep(50000);
    return s;
}

/* The rank a launcher child of this test ends up as: 0, or 20 + the line's kind. */
static pid_t tcp_rank_child(int rank, int size, const char *host, int port, const char *secret,
                            const char *errfile)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        char err[512] = "";
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(30);
        if (secret)
            setenv("NETTUNE_MEASURE_SECRET", secret, 1);
        else
            unsetenv("NETTUNE_MEASURE_SECRET");
        nt_launcher_t *l = nt_launcher_tcp_create(rank, size, host, port, -1, 6, err, sizeof(err));
        if (!l) {
            dprintf(2, "%s\n", err);
            _exit(strstr(err, "refused the hello") ? 21 : strstr(err, "no job secret") ? 22 : 23);
        }
        int32_t v = rank, all[3] = {0};
        nt_status_t st = l->ops->allgather(l, &v, all, sizeof(v), 5);
        nt_launcher_tcp_destroy(l);
        _exit(st == NT_OK && all[1] == 1 && all[2] == 2 ? 0 : 24);
    }
    return pid;
}

static int exit_of(pid_t pid)
{
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static int file_has(const char *path, const char *s)
{
    char buf[8192] = "";
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = 0;
    fclose(f);
    return strstr(buf, s) != NULL;
}

/* Rank 0 of 3 on 127.0.0.2 takes only its job's ranks: a client silent since it connected, one
 * with another secret, a second rank 1 and a raw hello with a wrong secret are refused with a line
 * naming their address, while the real ranks 1 and 2 are taken at once (rank 2 after the silent
 * client's 2 s, so its refusal is seen too); 127.0.0.1 is not listened on. */
static void test_tcp_rendezvous_refusals(void **state)
{
    (void)state;
    char dir[64], e0[128], e1[128], e1b[128], ebad[128], e2[128], enone[128];
    snprintf(dir, sizeof(dir), "/tmp/nt-rdv-%d", (int)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(e0, sizeof(e0), "%s/r0.err", dir);
    snprintf(e1, sizeof(e1), "%s/r1.err", dir);
    snprintf(e1b, sizeof(e1b), "%s/r1b.err", dir);
    snprintf(ebad, sizeof(ebad), "%s/bad.err", dir);
    snprintf(e2, sizeof(e2), "%s/r2.err", dir);
    snprintf(enone, sizeof(enone), "%s/none.err", dir);
    int port = test_port(7);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t r0 = tcp_rank_child(0, 3, "127.0.0.2", port, SECRET_A, e0);
    int silent = tcp_to_wait("127.0.0.2", port);
    assert_true(silent >= 0);
    assert_int_equal(tcp_to("127.0.0.1", port), -1); /* the address given, not every one */
    struct sockaddr_in me;
    socklen_t ml = sizeof(me);
    assert_int_equal(getsockname(silent, (struct sockaddr *)&me, &ml), 0);
    char silent_name[64];
    snprintf(silent_name, sizeof(silent_name), "refused 127.0.0.1:%d: no hello within 2 s",
             ntohs(me.sin_port));
    pid_t r1 = tcp_rank_child(1, 3, "127.0.0.2", port, SECRET_A, e1);
    pid_t bad = tcp_rank_child(2, 3, "127.0.0.2", port, SECRET_B, ebad);
    assert_int_equal(exit_of(bad), 21); /* refused, and says so */
    assert_true(file_has(ebad, "rank 0 at 127.0.0.2:"));
    usleep(200000); /* rank 1 is in */
    pid_t r1b = tcp_rank_child(1, 3, "127.0.0.2", port, SECRET_A, e1b);
    assert_int_equal(exit_of(r1b), 21);
    /* a raw hello of the right shape, another secret: refused, the connection closed */
    int raw = tcp_to("127.0.0.2", port);
    assert_true(raw >= 0);
    uint8_t hello[40] = {'N', 'T', 'R', '1', 0, 0, 0, 2};
    memset(hello + 8, 0x5a, 32);
    assert_int_equal(write(raw, hello, sizeof(hello)), (ssize_t)sizeof(hello));
    char c;
    assert_int_equal(read(raw, &c, 1), 0);
    close(raw);
    pid_t none = tcp_rank_child(2, 3, "127.0.0.2", port, NULL, enone);
    assert_int_equal(exit_of(none), 22); /* no secret: one line, no connection */
    assert_true(file_has(enone, "NETTUNE_MEASURE_SECRET"));
    usleep(2300000); /* the silent client's 2 s run out while rank 0 waits for rank 2 */
    pid_t r2 = tcp_rank_child(2, 3, "127.0.0.2", port, SECRET_A, e2);
    assert_int_equal(exit_of(r2), 0);
    assert_int_equal(exit_of(r1), 0);
    assert_int_equal(exit_of(r0), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(silent);
    /* rank 0 waited for nobody: done soon after rank 2 came (2.5 s in), not at its 6 s deadline */
    assert_true((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < 4.5);
    assert_true(file_has(e0, silent_name));
    assert_true(file_has(e0, "wrong secret (not a rank of this job)"));
    assert_true(file_has(e0, ": rank 1 is connected already, from 127.0.0.1:"));
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "grep -c 'tcp launcher: refused 127.0.0.1:' %s > %s/n", e0, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "%s/n", dir);
    assert_true(file_has(cmd, "4\n")); /* silent, two wrong secrets, the duplicate */
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* The secret through a file: rank 0 creates it (mode 0600, 64 hex digits), rank 1 reads it; a
 * file others can read is refused with one line saying to chmod it. */
static void test_tcp_secret_file(void **state)
{
    (void)state;
    char dir[64], file[96], e0[96], e1[96];
    snprintf(dir, sizeof(dir), "/tmp/nt-rdvf-%d", (int)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    snprintf(file, sizeof(file), "%s/secret", dir);
    snprintf(e0, sizeof(e0), "%s/r0.err", dir);
    snprintf(e1, sizeof(e1), "%s/r1.err", dir);
    unsetenv("NETTUNE_MEASURE_SECRET");
    setenv("NETTUNE_MEASURE_SECRET_FILE", file, 1);
    int port = test_port(13);
    fflush(NULL);
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        pid[r] = fork();
        if (pid[r] == 0) {
            char err[512];
            nt_launcher_t *l =
                nt_launcher_tcp_create(r, 2, "127.0.0.1", port, -1, 5, err, sizeof(err));
            if (!l)
                _exit(10);
            nt_launcher_tcp_destroy(l);
            _exit(0);
        }
    }
    assert_int_equal(exit_of(pid[0]), 0);
    assert_int_equal(exit_of(pid[1]), 0);
    struct stat st;
    assert_int_equal(stat(file, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, 65);
    assert_int_equal(chmod(file, 0644), 0);
    char err[512] = "";
    assert_null(nt_launcher_tcp_create(1, 2, "127.0.0.1", port, -1, 0.5, err, sizeof(err)));
    assert_non_null(strstr(err, "only you can read (mode 0644"));
    unsetenv("NETTUNE_MEASURE_SECRET_FILE");
    setenv("NETTUNE_MEASURE_SECRET", "abc", 1);
    assert_null(nt_launcher_tcp_create(1, 2, "127.0.0.1", port, -1, 0.5, err, sizeof(err)));
    assert_non_null(strstr(err, "32 to 64 hex digits"));
    setenv("NETTUNE_MEASURE_SECRET", SECRET_A, 1);
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- --verify: A/B, the tuned side in this process (threads of the in-process launcher), the
 * defaults side in one child process per rank (this test binary re-executed with
 * --verify-child: main() below), on the fake backend */

typedef struct {
    const char *tuning, *exe;
    double factor, timeout, budget;
    int rounds;
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
    memset(&v->fake[r], 0, sizeof(v->fake[r]));
    v->fake[r].file_factor = v->factor;
    nt_measure_backend_t b = {&nt_measure_fake_ops, &v->fake[r]};
    b.ops->init(b.self, l, err, sizeof(err));
    nt_measure_opts_t o = {.warmup = 2,
                           .iters = 4,
                           .trials = v->rounds ? v->rounds : 3,
                           .timeout_s = v->timeout > 0 ? v->timeout : 10,
                           .budget_s = v->budget};
    cJSON *doc = NULL;
    nt_measure_peer_t peer;
    char log[64];
    snprintf(log, sizeof(log), "/tmp/nt-measure-test-defaults-%d.log", r);
    v->st[r] = nt_measure_peer_spawn(&peer, l, "127.0.0.1", v->exe ? v->exe : "/proc/self/exe", log,
                                     "fake", o.timeout_s, v->err[r], sizeof(v->err[r]));
    if (v->st[r] == NT_OK)
        v->st[r] = nt_measure_verify(l, &b, &peer, v->tuning, 1024, 8192, &o, &doc, v->err[r],
                                     sizeof(v->err[r]));
    nt_measure_peer_close(&peer);
    if (r == 0)
        v->doc = doc;
    else
        cJSON_Delete(doc);
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

static verify_t *verify_setup(double factor)
{
    static verify_t v;
    memset(&v, 0, sizeof(v));
    v.tuning = write_tuning("{\"coll\": \"allreduce\", \"nranks\": 2, \"algo\": \"tree\"},"
                            "{\"coll\": \"allgather\", \"nranks\": 8, \"algo\": \"ring\"}");
    v.factor = factor;
    return &v;
}

/* One line of the fake's trace (NETTUNE_FAKE_TRACE). */
typedef struct {
    char side[16];
    long pid;
    int rank, coll;
    unsigned long long bytes;
    double t0, t1;
} trace_t;

static int trace_read(const char *path, trace_t *t, int max)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int n = 0;
    while (n < max && fscanf(f, "%15s %ld %d %d %llu %lf %lf", t[n].side, &t[n].pid, &t[n].rank,
                             &t[n].coll, &t[n].bytes, &t[n].t0, &t[n].t1) == 7)
        n++;
    fclose(f);
    return n;
}

static void test_verify(void **state)
{
    (void)state;
    const char *trace = "/tmp/nt-measure-test-trace";
    unlink(trace);
    setenv("NETTUNE_FAKE_TRACE", trace, 1);
    setenv("NETTUNE_FAKE_SLEEP_US", "2000", 1); /* overlapping sides would show */
    verify_t *v = verify_setup(0.8);            /* the file's side runs 1.25x faster */
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    unsetenv("NETTUNE_FAKE_TRACE");
    unsetenv("NETTUNE_FAKE_SLEEP_US");
    if (v->st[0] != NT_OK)
        print_error("%s\n", v->err[0]);
    assert_int_equal(v->st[0], NT_OK);
    assert_int_equal(v->st[1], NT_OK);
    assert_non_null(v->doc);
    /* the trace first: no run of one side overlaps a run of the other on any rank */
    trace_t t[128];
    int n = trace_read(trace, t, 128);
    assert_int_equal(n, 2 * 4 * 3 * 2);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (strcmp(t[i].side, t[j].side) && t[i].t0 < t[j].t1 && t[j].t0 < t[i].t1) {
                print_error("%s rank %d [%.6f %.6f] overlaps %s rank %d [%.6f %.6f]\n", t[i].side,
                            t[i].rank, t[i].t0, t[i].t1, t[j].side, t[j].rank, t[j].t0, t[j].t1);
                fail();
            }
    const cJSON *sz = cJSON_GetObjectItemCaseSensitive(v->doc, "sizes");
    assert_int_equal(cJSON_GetArraySize(sz), 4); /* allreduce only (allgather is for 8 ranks) */
    const cJSON *e;
    cJSON_ArrayForEach (e, sz) {
        assert_string_equal(nt_json_get_str(e, "coll", ""), "allreduce");
        assert_true(fabs(nt_json_get_num(e, "speedup", 0) - 1.25) < 1e-3);
        assert_string_equal(nt_json_get_str(e, "verdict", ""), "faster");
    }
    /* 8 KiB: defaults (10 + 0.8192) x (1, 1.01) averaged over ranks, tuned 0.8 x that */
    e = cJSON_GetArrayItem(sz, 3);
    assert_true(fabs(nt_json_get_num(e, "default_us", 0) - 10.8192 * 1.005) < 1e-3);
    assert_true(fabs(nt_json_get_num(e, "tuned_us", 0) - 10.8192 * 1.005 * 0.8) < 1e-3);
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(v->doc, "summary");
    assert_int_equal((int)nt_json_get_num(sm, "faster", 0), 4);
    assert_true(fabs(nt_json_get_num(sm, "geomean_speedup", 0) - 1.25) < 1e-3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v->doc, "completed")));
    /* which side had what: the plugin on both tuned ranks, on no defaults rank */
    const cJSON *sides = cJSON_GetObjectItemCaseSensitive(v->doc, "sides");
    const cJSON *tu = cJSON_GetObjectItemCaseSensitive(sides, "tuned");
    const cJSON *de = cJSON_GetObjectItemCaseSensitive(sides, "defaults");
    assert_int_equal((int)nt_json_get_num(tu, "plugin_loaded_ranks", -1), 2);
    assert_int_equal((int)nt_json_get_num(de, "plugin_loaded_ranks", -1), 0);
    assert_string_equal(nt_json_get_str(de, "NCCL_TUNER_PLUGIN", ""), "none");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(de, "NETTUNE_TUNING_FILE")));
    assert_string_equal(nt_json_get_str(tu, "NETTUNE_TUNING_FILE", ""), v->tuning);
    const cJSON *dp = cJSON_GetObjectItemCaseSensitive(de, "pids");
    long c0 = (long)cJSON_GetArrayItem(dp, 0)->valuedouble;
    long c1 = (long)cJSON_GetArrayItem(dp, 1)->valuedouble;
    assert_true(c0 > 0 && c1 > 0 && c0 != c1 && c0 != getpid());
    /* the tuned side: one communicator made with the file, warm-up once per size, 3 rounds x
     * 4 timed calls */
    assert_int_equal(v->fake[1].comms, 1);
    assert_int_equal(v->fake[1].file, 1);
    assert_int_equal(v->fake[1].warmup_calls, 4 * 2);
    assert_int_equal(v->fake[1].calls, 4 * 2 + 4 * 3 * 4);
    /* the trace: per rank and size D T T D D T (ABBA), the defaults runs in the children, the
     * tuned ones here */
    for (int r = 0; r < 2; r++) {
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (t[i].rank != r)
                continue;
            int size = k / 6, round = k % 6 / 2, first = k % 2 == 0;
            int defaults = first == nt_measure_verify_defaults_first(round);
            assert_int_equal(t[i].bytes, 1024ull << size);
            assert_string_equal(t[i].side, defaults ? "defaults" : "tuned");
            assert_int_equal(t[i].pid, defaults ? (r ? c1 : c0) : getpid());
            k++;
        }
        assert_int_equal(k, 24);
    }
    unlink(trace);
    cJSON_Delete(v->doc);

    /* no effect: every size "same"; slower: verdict slower */
    v = verify_setup(0);
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    sm = cJSON_GetObjectItemCaseSensitive(v->doc, "summary");
    assert_int_equal((int)nt_json_get_num(sm, "same", 0), 4);
    assert_int_equal((int)nt_json_get_num(sm, "slower", 0), 0);
    cJSON_Delete(v->doc);
    v = verify_setup(1.5);
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    sm = cJSON_GetObjectItemCaseSensitive(v->doc, "summary");
    assert_int_equal((int)nt_json_get_num(sm, "slower", 0), 4);
    cJSON_Delete(v->doc);
    unlink(v->tuning);

    /* a file with no rule for 2 ranks: one line, nothing run */
    memset(v, 0, sizeof(*v));
    v->tuning = write_tuning("{\"coll\": \"allreduce\", \"nranks\": 16, \"algo\": \"tree\"}");
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    assert_int_equal(v->st[0], NT_ERR_INVALID);
    assert_non_null(strstr(v->err[0], "no rule applies to 2 ranks"));
    assert_int_equal(v->fake[0].calls, 0);
    unlink(v->tuning);
}

/* The defaults side fails: dies, hangs, errs, never starts, or has the plugin after all. Each
 * ends every rank with a clear error and a partial result (the sizes before are kept). */
static void test_verify_child_fails(void **state)
{
    (void)state;
    /* rank 1's child dies at its 5th run (size 2, round 2): size 1 is kept */
    setenv("NETTUNE_FAKE_DEFAULTS_FAIL", "die:1:5", 1);
    verify_t *v = verify_setup(0.8);
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    assert_int_equal(v->st[1], NT_ERR_PEER);
    assert_non_null(strstr(v->err[1], "defaults process of rank 1"));
    assert_non_null(strstr(v->err[1], "exit 9"));
    assert_int_not_equal(v->st[0], NT_OK); /* child 0 lost its peer: rank 0 stops too */
    assert_non_null(v->doc);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v->doc, "completed")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v->doc, "sizes")), 1);
    assert_non_null(strstr(nt_json_get_str(v->doc, "error", ""), "defaults process of rank 0"));
    cJSON_Delete(v->doc);
    unlink(v->tuning);

    /* rank 1's child hangs at its 2nd run: every wait has a deadline (1 s timeout: 3 s a turn) */
    setenv("NETTUNE_FAKE_DEFAULTS_FAIL", "hang:1:2", 1);
    v = verify_setup(0.8);
    v->timeout = 1;
    struct timespec a, z;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    clock_gettime(CLOCK_MONOTONIC, &z);
    assert_int_equal(v->st[1], NT_ERR_TIMEOUT);
    assert_non_null(strstr(v->err[1], "no answer within 3 s"));
    assert_int_not_equal(v->st[0], NT_OK);
    assert_true(z.tv_sec - a.tv_sec < 15);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v->doc, "sizes")), 0);
    cJSON_Delete(v->doc);
    unlink(v->tuning);

    /* rank 0's child's first run fails: its line reaches rank 0 */
    setenv("NETTUNE_FAKE_DEFAULTS_FAIL", "error:0:1", 1);
    v = verify_setup(0.8);
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    unsetenv("NETTUNE_FAKE_DEFAULTS_FAIL");
    assert_int_equal(v->st[0], NT_ERR_PEER);
    assert_non_null(strstr(v->err[0], "the defaults process of rank 0: fake: run 1 fails"));
    assert_non_null(strstr(nt_json_get_str(v->doc, "error", ""), "run 1 fails"));
    cJSON_Delete(v->doc);
    unlink(v->tuning);

    /* the child cannot be executed: it "did not start", with its exit status */
    v = verify_setup(0.8);
    v->exe = "/nonexistent/nettune-tune-measure";
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    assert_int_equal(v->st[0], NT_ERR_PEER);
    assert_non_null(strstr(v->err[0], "did not start: exit 127"));
    assert_int_equal(v->fake[0].runs, 0); /* nothing measured */
    cJSON_Delete(v->doc);
    unlink(v->tuning);

    /* --budget-seconds: no size starts after it (each size takes 6 x 50 ms here, the budget is
     * 0.2 s: the first size only), and the children are stopped */
    setenv("NETTUNE_FAKE_SLEEP_US", "50000", 1);
    v = verify_setup(0.8);
    v->budget = 0.2;
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    unsetenv("NETTUNE_FAKE_SLEEP_US");
    assert_int_equal(v->st[0], NT_ERR_INTERRUPTED);
    assert_int_equal(v->st[1], NT_ERR_INTERRUPTED);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v->doc, "sizes")), 1);
    assert_non_null(strstr(nt_json_get_str(v->doc, "error", ""), "--budget-seconds"));
    assert_int_equal(v->fake[0].runs, 3);
    cJSON_Delete(v->doc);
    unlink(v->tuning);

    /* the defaults side has the plugin loaded after all: no A/B */
    setenv("NETTUNE_FAKE_PLUGIN_ALWAYS", "1", 1);
    v = verify_setup(0.8);
    assert_int_equal(nt_inproc_run(2, 1, verify_fn, v, NULL), 0);
    unsetenv("NETTUNE_FAKE_PLUGIN_ALWAYS");
    assert_int_equal(v->st[0], NT_ERR_INVALID);
    assert_non_null(strstr(v->err[0], "defaults side has nettune's plugin loaded on 2 of 2"));
    assert_int_equal(v->fake[0].runs, 0);
    cJSON_Delete(v->doc);
    unlink(v->tuning);
}

/* The per-size statistics: the mean of the rounds' ratios, their spread, the verdict. */
static void test_ab_stats(void **state)
{
    (void)state;
    nt_measure_ab_t ab;
    const double d1[] = {10, 12, 9}, t1[] = {8, 8, 10}; /* ratios 1.25 1.5 0.9 */
    nt_measure_ab_stats(d1, t1, 3, &ab);
    assert_true(fabs(ab.speedup - (1.25 + 1.5 + 0.9) / 3) < 1e-9);
    assert_true(fabs(ab.speedup_min - 0.9) < 1e-9);
    assert_true(fabs(ab.speedup_max - 1.5) < 1e-9);
    assert_true(fabs(ab.default_us - 31.0 / 3) < 1e-9);
    assert_true(fabs(ab.tuned_us - 26.0 / 3) < 1e-9);
    assert_string_equal(ab.verdict, "same"); /* faster on average, not in every round */
    const double d2[] = {10, 10}, t2[] = {9, 8};
    nt_measure_ab_stats(d2, t2, 2, &ab);
    assert_string_equal(ab.verdict, "faster");
    nt_measure_ab_stats(t2, d2, 2, &ab);
    assert_string_equal(ab.verdict, "slower");
    assert_true(fabs(ab.speedup - (0.9 + 0.8) / 2) < 1e-9);
    assert_int_equal(nt_measure_verify_defaults_first(0), 1);
    assert_int_equal(nt_measure_verify_defaults_first(1), 0);
    assert_int_equal(nt_measure_verify_defaults_first(2), 1);
}

/* What NCCL's logs say each side had loaded (hand-built logs in NCCL 2.28's formats, and a
 * real 2.29.7 log of a run without any tuner plugin) */
static void test_side_evidence(void **state)
{
    (void)state;
    const char *F = "tests/fixtures/measure/";
    char p[256];
    cJSON *s = cJSON_CreateObject();
    snprintf(p, sizeof(p), "%sverify-tuned-rank0.log", F);
    assert_int_equal(nt_measure_side_evidence(s, p, 1, "/tmp/tuning.json"), 1);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(s, "nccl_log");
    assert_string_equal(nt_json_get_str(o, "tuner_loaded", ""),
                        "/opt/nettune/lib/libnccl-tuner-nettune.so");
    assert_string_equal(nt_json_get_str(o, "tuning_file", ""), "/tmp/tuning.json");
    cJSON_Delete(s);
    s = cJSON_CreateObject(); /* the plugin loaded another file: not confirmed */
    assert_int_equal(nt_measure_side_evidence(s, p, 1, "/tmp/other.json"), 0);
    o = cJSON_GetObjectItemCaseSensitive(s, "nccl_log");
    assert_non_null(strstr(nt_json_get_str(o, "why", ""), "another tuning file"));
    cJSON_Delete(s);
    s = cJSON_CreateObject(); /* the tuned log is no defaults log */
    assert_int_equal(nt_measure_side_evidence(s, p, 0, NULL), 0);
    cJSON_Delete(s);
    snprintf(p, sizeof(p), "%sverify-defaults-rank0.log", F);
    s = cJSON_CreateObject();
    assert_int_equal(nt_measure_side_evidence(s, p, 0, NULL), 1);
    o = cJSON_GetObjectItemCaseSensitive(s, "nccl_log");
    assert_string_equal(nt_json_get_str(o, "NCCL_TUNER_PLUGIN", ""), "none");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "tuner_loaded")));
    assert_non_null(strstr(nt_json_get_str(o, "why", ""), "NCCL_TUNER_PLUGIN=none"));
    cJSON_Delete(s);
    s = cJSON_CreateObject(); /* the defaults log is no tuned log */
    assert_int_equal(nt_measure_side_evidence(s, p, 1, "/tmp/tuning.json"), 0);
    cJSON_Delete(s);
    s = cJSON_CreateObject(); /* a real log without a tuner plugin */
    assert_int_equal(nt_measure_side_evidence(s,
                                              "tests/fixtures/nccl-tuning-tables/"
                                              "repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-"
                                              "COMPLETE.log",
                                              0, NULL),
                     1);
    cJSON_Delete(s);
    s = cJSON_CreateObject(); /* no log: not confirmed, said why */
    assert_int_equal(nt_measure_side_evidence(s, "/nonexistent.log", 0, NULL), 0);
    o = cJSON_GetObjectItemCaseSensitive(s, "nccl_log");
    assert_non_null(strstr(nt_json_get_str(o, "why", ""), "no debug file"));
    cJSON_Delete(s);
}

/* ---- NCCL's table and per-call lines from a real 2-rank socket log (NCCL 2.29.7) */

static void test_capture(void **state)
{
    (void)state;
    /* the log has no comm line: NCCL saw 2 nodes x 1 rank, compute capability 12.0 */
    nt_tune_shape_t shape = {2, 1, 2};
    cJSON *d = cJSON_CreateObject();
    assert_int_equal(nt_measure_capture_attach(d,
                                               "tests/fixtures/nccl-tuning-tables/"
                                               "repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-"
                                               "COMPLETE.log",
                                               5, 120, &shape),
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
    /* the model checked against the captured table, cell by cell: verified here */
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(n, "model_check");
    assert_string_equal(nt_json_get_str(mc, "verdict", ""), "verified");
    assert_int_equal((int)nt_json_get_num(mc, "mismatched_cells", -1), 0);
    assert_true(nt_json_get_num(mc, "compared_cells", 0) >= 100);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(mc, "cells")),
                     (int)nt_json_get_num(mc, "compared_cells", 0));
    cJSON_Delete(d);
    /* without the compute capability the NVLS cells differ: the check says so */
    d = cJSON_CreateObject();
    assert_int_equal(nt_measure_capture_attach(d,
                                               "tests/fixtures/nccl-tuning-tables/"
                                               "repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-"
                                               "COMPLETE.log",
                                               5, 0, NULL),
                     NT_OK);
    mc = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "nccl"),
                                          "model_check");
    assert_non_null(strstr(nt_json_get_str(mc, "verdict", ""), "mismatch"));
    assert_true(nt_json_get_num(mc, "mismatched_cells", 0) > 0);
    cJSON_Delete(d);
    d = cJSON_CreateObject();
    assert_int_equal(nt_measure_capture_attach(d, "/nonexistent/nccl.log", 5, 0, NULL),
                     NT_ERR_NOT_FOUND);
    cJSON_Delete(d);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--verify-child")) { /* test_verify's defaults side */
        nt_measure_fake_t f;
        memset(&f, 0, sizeof(f));
        nt_measure_backend_t b = {&nt_measure_fake_ops, &f};
        return nt_measure_child_main(argc - 2, argv + 2, &b);
    }
    /* the job secret of the TCP launcher's ranks (test_verify's defaults side among them) */
    setenv("NETTUNE_MEASURE_SECRET", SECRET_A, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_read),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_sweep_two_ranks),
        cmocka_unit_test(test_sweep_out_of_lockstep),
        cmocka_unit_test(test_sweep_budget),
        cmocka_unit_test(test_sweep_comm_fails),
        cmocka_unit_test(test_measured_round_trip),
        cmocka_unit_test(test_tcp_launcher),
        cmocka_unit_test(test_tcp_rendezvous_refusals),
        cmocka_unit_test(test_tcp_secret_file),
        cmocka_unit_test(test_verify),
        cmocka_unit_test(test_verify_child_fails),
        cmocka_unit_test(test_ab_stats),
        cmocka_unit_test(test_side_evidence),
        cmocka_unit_test(test_capture),
    };
    return cmocka_run_group_tests_name("nettune-tune-measure (fake backend)", tests, NULL, NULL);
}
