/* The fabric phases (probes/fabric/fabric.c) run for real over loopback sockets, with the
 * in-process launcher: several "nodes" as threads. The report's "fabric" section has the
 * contract's shape, every flow of a loaded round was in flight at one instant (they run at
 * once, not one after another), a node whose sockets are gone makes its flows "ok": false
 * without a hang, and one node, --local or a missing interface give "skipped" with the reason.
 * The RDMA path on this machine (no RDMA device): the run chooses the sockets and says why
 * (its pure parts: test_probe_fabric_rdma.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fabric/fabric.h"
#include "nettune/clock.h"
#include "nettune/sysfs.h"

typedef struct world {
    int nnodes, per_node;
    nt_node_t *nodes;
    nt_probe_params_t params;
    cJSON *section;        /* rank 0's */
    nt_fab_trace_t trace;  /* rank 0's */
    int others_null;       /* every other rank got no section */
    nt_status_t st0;
} world_t;

static volatile int no_stop;

static int rank_fn(nt_launcher_t *l, void *arg)
{
    world_t *w = arg;
    nt_probe_t p = {0};
    cJSON *sec = NULL;
    nt_fab_trace_t tr;
    nt_status_t st;

    p.params = &w->params;
    p.launcher = l;
    p.rank = nt_launcher_rank(l);
    p.size = nt_launcher_size(l);
    p.nodes = w->nodes;
    p.nnodes = w->nnodes;
    p.my_node = p.rank / w->per_node;
    p.local_rank = p.rank % w->per_node;
    p.stop = (volatile int *)&no_stop;
    st = nt_fabric_run(&p, &sec, p.rank == 0 ? &tr : NULL);
    if (p.rank == 0) {
        w->section = sec;
        w->trace = tr;
        w->st0 = st;
    } else if (sec) {
        w->others_null = 0;
        cJSON_Delete(sec);
    }
    return 0;
}

static void world_run(world_t *w, int nnodes, int per_node, const char *ifaces, double budget,
                      size_t bytes, double peer_timeout_s)
{
    memset(w, 0, sizeof(*w));
    w->nnodes = nnodes;
    w->per_node = per_node;
    w->others_null = 1;
    w->nodes = calloc((size_t)nnodes, sizeof(nt_node_t));
    for (int n = 0; n < nnodes; n++) {
        snprintf(w->nodes[n].host, sizeof(w->nodes[n].host), "h%d", n + 1);
        w->nodes[n].nranks = per_node;
        w->nodes[n].ranks = calloc((size_t)per_node, sizeof(int));
        for (int i = 0; i < per_node; i++)
            w->nodes[n].ranks[i] = n * per_node + i;
    }
    w->params.fabric = 1;
    w->params.fabric_budget_s = budget;
    w->params.fabric_bytes = bytes;
    w->params.fabric_ifaces = ifaces;
    w->params.fabric_seed = 12345;
    w->params.fabric_seed_set = 1;
    w->params.peer_timeout_s = peer_timeout_s;
    assert_int_equal(nt_inproc_run(nnodes * per_node, per_node, rank_fn, w, NULL), 0);
}

static void world_free(world_t *w)
{
    for (int n = 0; n < w->nnodes; n++)
        free(w->nodes[n].ranks);
    free(w->nodes);
    cJSON_Delete(w->section);
    nt_fabric_trace_free(&w->trace);
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* The section's shape; returns the number of flows, and counts those that failed. */
static int check_shape(const cJSON *sec, int nnodes, int rails, int *failed)
{
    static const char *const names[] = {"alone", "bisection", "alltoall",
                                        "ring",  "rail_all",  "rail_one"};
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(sec, "nodes");
    const cJSON *phases = cJSON_GetObjectItemCaseSensitive(sec, "phases"), *ph;
    int i = 0, nflows = 0;

    assert_string_equal(str(sec, "transport"), "tcp");
    assert_int_equal((int)num(sec, "rails"), rails);
    assert_int_equal((int)num(sec, "seed"), 12345);
    assert_true(num(sec, "elapsed_s") > 0);
    assert_int_equal(cJSON_GetArraySize(nodes), nnodes);
    assert_string_equal(cJSON_GetArrayItem(nodes, 1)->valuestring, "h2");
    assert_int_equal(cJSON_GetArraySize(phases), 6);
    *failed = 0;
    cJSON_ArrayForEach(ph, phases)
    {
        const cJSON *rd, *fl;
        assert_string_equal(str(ph, "phase"), names[i]);
        assert_string_equal(str(ph, "transport"), str(sec, "transport"));
        cJSON_ArrayForEach(rd, cJSON_GetObjectItemCaseSensitive(ph, "rounds"))
        {
            const cJSON *flows = cJSON_GetObjectItemCaseSensitive(rd, "flows");
            if (i == 0)
                assert_int_equal(cJSON_GetArraySize(flows), 1);
            cJSON_ArrayForEach(fl, flows)
            {
                int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fl, "ok"));
                assert_true(num(fl, "src") >= 0 && num(fl, "src") < nnodes);
                assert_true(num(fl, "dst") >= 0 && num(fl, "dst") < nnodes);
                assert_true(num(fl, "src") != num(fl, "dst"));
                assert_true(num(fl, "rail") >= 0 && num(fl, "rail") < rails);
                assert_true(num(fl, "bytes") >= 1);
                if (ok) {
                    double t = num(fl, "time_us"), bw = num(fl, "bw_GBps");
                    assert_true(t > 0 && bw > 0);
                    /* bw = bytes / time, to the 4 digits written */
                    assert_true(fabs(bw - num(fl, "bytes") / (t * 1e-6) / 1e9) < 2e-3 * bw);
                } else {
                    assert_null(cJSON_GetObjectItemCaseSensitive(fl, "bw_GBps"));
                    (*failed)++;
                }
                nflows++;
            }
        }
        i++;
    }
    return nflows;
}

/* Whether every loaded round of w had an instant when all its flows were in flight: the last
 * first byte went out before the first ack came back. */
static int rounds_overlap(const world_t *w, size_t *loaded_rounds)
{
    int all = 1;
    *loaded_rounds = 0;
    for (size_t r = 0; r < w->trace.sched.nrounds; r++) {
        const nt_fab_round_t *rd = &w->trace.sched.rounds[r];
        double last_first = 0, first_end = 1e300;
        if (rd->phase == NT_FAB_ALONE)
            continue;
        for (size_t f = rd->first; f < rd->first + rd->nflows; f++) {
            const nt_fab_result_t *res = &w->trace.results[f];
            assert_true(res->ok);
            assert_true(res->start_s > 0 && res->end_s > res->start_s);
            last_first = res->start_s > last_first ? res->start_s : last_first;
            first_end = res->end_s < first_end ? res->end_s : first_end;
        }
        all &= last_first < first_end;
        (*loaded_rounds)++;
    }
    return all;
}

/* 4 nodes, one rail: every phase but the rail ones runs, every flow completes, the flows of a
 * loaded round were in flight together, the alone rounds measured every loaded pair. Flows of
 * 64 MiB take tens of milliseconds on loopback, longer than the scheduler keeps a runnable
 * thread waiting; a thread starved anyway (8 busy processes on 2 cores) gets the run repeated,
 * up to 3 times: flows run one after another would fail every time. */
static void test_four_nodes(void **state)
{
    world_t w;
    int failed, nflows, overlap = 0;
    size_t loaded_rounds = 0;
    (void)state;
    for (int attempt = 0; attempt < 3 && !overlap; attempt++) {
        world_run(&w, 4, 1, "lo", 20, 64u << 20, 5);
        assert_int_equal(w.st0, NT_OK);
        assert_non_null(w.section);
        assert_true(w.others_null);
        assert_string_equal(str(w.section, "status"), "ran");
        assert_null(cJSON_GetObjectItemCaseSensitive(w.section, "reason"));
        nflows = check_shape(w.section, 4, 1, &failed);
        assert_int_equal(failed, 0);
        assert_int_equal((size_t)nflows, w.trace.sched.nflows);
        assert_int_equal(w.trace.rounds_run, w.trace.sched.nrounds);
        /* 4 nodes: 3 cuts, 1 all-to-all round, 6 rings; 12 ordered pairs alone */
        assert_int_equal(w.trace.sched.phase_rounds[NT_FAB_BISECTION], 3);
        assert_int_equal(w.trace.sched.phase_rounds[NT_FAB_ALLTOALL], 1);
        assert_int_equal(w.trace.sched.phase_rounds[NT_FAB_RING], 6);
        assert_int_equal(w.trace.sched.phase_rounds[NT_FAB_ALONE], 12);
        overlap = rounds_overlap(&w, &loaded_rounds);
        assert_int_equal(loaded_rounds, 10);
        world_free(&w);
    }
    assert_true(overlap);
}

/* 3 nodes of 2 ranks, two rails (two listeners on lo): one rank per node takes part, the rail
 * phases run, every rail_all round holds a flow per node and rail. */
static void test_rails_leaders(void **state)
{
    world_t w;
    int failed;
    const cJSON *ph;
    (void)state;
    world_run(&w, 3, 2, "lo,lo", 10, 1u << 20, 5);
    assert_non_null(w.section);
    assert_true(w.others_null);
    assert_string_equal(str(w.section, "status"), "ran");
    check_shape(w.section, 3, 2, &failed);
    assert_int_equal(failed, 0);
    ph = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(w.section, "phases"), 4);
    assert_string_equal(str(ph, "phase"), "rail_all");
    assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ph, "rounds")) >= 1);
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ph, "rounds"), 0), "flows")),
        6);
    world_free(&w);
}

/* On this machine (no RDMA port carries lo, and none exists here at all): the phases run over
 * the sockets, and the section says why, naming the node and the rail. Under a captured tree
 * no live device is assumed. */
static void test_no_rdma_device(void **state)
{
    world_t w;
    int failed;
    const char *why;
    (void)state;
    world_run(&w, 2, 1, "lo", 2, 1u << 20, 5);
    assert_string_equal(str(w.section, "status"), "ran");
    check_shape(w.section, 2, 1, &failed);
    assert_int_equal(failed, 0);
    why = str(w.section, "transport_reason");
    assert_non_null(why);
    assert_true(strncmp(why, "no RDMA path on h1, rail 0 (lo): ", 33) == 0);
    assert_non_null(strstr(why, "; 2 of 2 nodes lack one: the probe's own TCP sockets"));
    if (access("/sys/class/infiniband", F_OK) != 0)
        assert_non_null(strstr(why, "(lo): no RDMA device: /sys/class/infiniband is absent"));
    else
        assert_non_null(strstr(why, "(lo): no RDMA port carries lo"));
    world_free(&w);
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-rxe");
    world_run(&w, 2, 1, "lo", 2, 1u << 20, 5);
    nt_sysfs_set_root(NULL);
    assert_string_equal(str(w.section, "transport"), "tcp");
    assert_non_null(strstr(str(w.section, "transport_reason"), "is a captured tree: no live "
                                                               "RDMA device; 2 of 2 nodes"));
    world_free(&w);
}

/* A node whose sockets are gone (it still answers the launcher): its flows fail, the others
 * complete, and the run ends within the budget and the waits, never hangs. */
static void test_dead_peer(void **state)
{
    world_t w;
    int failed;
    double t0 = nt_clock_s();
    const cJSON *ph, *rd, *fl;
    int touching = 0;
    (void)state;
    setenv("NETTUNE_TEST_FABRIC_MUTE", "2", 1);
    world_run(&w, 4, 1, "lo", 1.5, 1u << 20, 0.3);
    unsetenv("NETTUNE_TEST_FABRIC_MUTE");
    assert_non_null(w.section);
    /* the budget, then at most a round's waits (connect, accept, transfer: 0.3 s each) */
    assert_true(nt_clock_s() - t0 < 1.5 + 3 * 0.3 + 2);
    check_shape(w.section, 4, 1, &failed);
    assert_true(failed > 0);
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(w.section, "phases"))
        cJSON_ArrayForEach(rd, cJSON_GetObjectItemCaseSensitive(ph, "rounds"))
            cJSON_ArrayForEach(fl, cJSON_GetObjectItemCaseSensitive(rd, "flows"))
    {
        int dead = num(fl, "src") == 2 || num(fl, "dst") == 2;
        int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fl, "ok"));
        touching += dead;
        assert_int_equal(ok, !dead);
    }
    assert_true(touching > 0);
    world_free(&w);
}

static void test_skipped(void **state)
{
    world_t w;
    (void)state;
    world_run(&w, 1, 2, "lo", 10, 1u << 20, 5);
    assert_string_equal(str(w.section, "status"), "skipped");
    assert_string_equal(str(w.section, "reason"), "one node: no fabric between nodes to load");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(w.section, "phases")), 0);
    world_free(&w);
    world_run(&w, 3, 1, "lo,nosuch0", 10, 1u << 20, 5);
    assert_string_equal(str(w.section, "status"), "skipped");
    assert_non_null(strstr(str(w.section, "reason"), "h1: interface 'nosuch0' has no IPv4"));
    world_free(&w);
}

/* A name of --fabric-ifaces that is no interface of a node (mistyped) is a bad option: every
 * rank gets NT_ERR_NOT_FOUND before anything runs (run.c: exit 2), and rank 0 the one line
 * naming the interface, the node and the interfaces it has. Names that exist pass. */
typedef struct iface_world {
    world_t w;
    nt_status_t st[4];
    char err[NT_FAB_IFACE_ERR_MAX];
} iface_world_t;

static int ifaces_fn(nt_launcher_t *l, void *arg)
{
    iface_world_t *iw = arg;
    nt_probe_t p = {0};
    char err[NT_FAB_IFACE_ERR_MAX];
    p.params = &iw->w.params;
    p.launcher = l;
    p.rank = nt_launcher_rank(l);
    p.size = nt_launcher_size(l);
    p.nodes = iw->w.nodes;
    p.nnodes = iw->w.nnodes;
    p.my_node = p.rank / iw->w.per_node;
    p.local_rank = p.rank % iw->w.per_node;
    iw->st[p.rank] = nt_fabric_ifaces_check(&p, err, sizeof(err));
    if (p.rank == 0)
        memcpy(iw->err, err, sizeof(err));
    return 0;
}

static void test_iface_mistyped(void **state)
{
    static const char *const lists[] = {"lo,nosuch0", "lo"};
    (void)state;
    for (int k = 0; k < 2; k++) {
        iface_world_t iw;
        memset(&iw, 0, sizeof(iw));
        iw.w.nnodes = 2;
        iw.w.per_node = 2;
        iw.w.nodes = calloc(2, sizeof(nt_node_t));
        for (int n = 0; n < 2; n++) {
            snprintf(iw.w.nodes[n].host, sizeof(iw.w.nodes[n].host), "h%d", n + 1);
            iw.w.nodes[n].nranks = 2;
            iw.w.nodes[n].ranks = calloc(2, sizeof(int));
            iw.w.nodes[n].ranks[0] = 2 * n;
            iw.w.nodes[n].ranks[1] = 2 * n + 1;
        }
        iw.w.params.fabric = 1;
        iw.w.params.fabric_budget_s = 10;
        iw.w.params.fabric_ifaces = lists[k];
        iw.w.params.peer_timeout_s = 5;
        assert_int_equal(nt_inproc_run(4, 2, ifaces_fn, &iw, NULL), 0);
        for (int r = 0; r < 4; r++)
            assert_int_equal(iw.st[r], k == 0 ? NT_ERR_NOT_FOUND : NT_OK);
        if (k == 0) {
            print_message("%s\n", iw.err);
            assert_non_null(strstr(iw.err, "no interface 'nosuch0' on h1 (--fabric-ifaces "
                                           "lo,nosuch0): give the rails by the names of its "
                                           "interfaces: "));
            /* the interfaces it has: lo is one */
            assert_non_null(strstr(strstr(iw.err, "interfaces: "), "lo"));
        } else
            assert_string_equal(iw.err, "");
        world_free(&iw.w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_four_nodes),
        cmocka_unit_test(test_rails_leaders),
        cmocka_unit_test(test_no_rdma_device),
        cmocka_unit_test(test_dead_peer),
        cmocka_unit_test(test_skipped),
        cmocka_unit_test(test_iface_mistyped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
