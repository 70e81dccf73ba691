/* GPU pairs across ranks that each see one GPU (docs/gpu.md "Ranks that see one GPU each"),
 * without a GPU: the ranks are threads of the in-process launcher (lib/engine/launcher_inproc.c), the
 * GPUs those of tests/gpu/fake_cuda_sim.c (each thread narrowed to its own GPU, IPC between
 * threads) and tests/gpu/fake_nvml.c (NT_FAKE_NVML_GPUS of them, NVLink through NVSwitch).
 * The GPU probe's ops run as the engine runs them (init on every rank, run_local on every rank
 * of the node, finish, cleanup), and the links of rank 0 are compared with the one-rank path's. */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nettune/cuda.h"
#include "nettune/gpu.h"
#include "nettune/launcher.h"
#include "nettune/nvml.h"
#include "nettune/report.h"
#include "probe.h"
#include "probe_gpu.h"

/* A stand-in kernel image: the simulated driver loads any (its kernels go by name). */
const unsigned char nt_gpu_fatbin[] = {0};
const unsigned long long nt_gpu_fatbin_size = 1;

#define SIM NT_TEST_FAKE_DIR "/libnt-fake-cuda-sim.so"
#define NVML NT_TEST_FAKE_DIR "/libnt-fake-nvml.so"

typedef struct run {
    int nranks;
    const char *vis[4]; /* per rank: the GPUs its CUDA sees */
    int die;            /* this rank goes silent after init (-1: none) */
    volatile int over;  /* rank 0 is done: the silent rank may free its GPU memory */
    nt_probe_params_t params;
    cJSON *node, *checks, *links; /* rank 0's */
} run_t;

static void (*visible)(const char *);

static int rank_fn(nt_launcher_t *l, void *arg)
{
    run_t *c = arg;
    int r = nt_launcher_rank(l), ranks[4] = {0, 1, 2, 3};
    nt_node_t node = {"node01", ranks, c->nranks};
    volatile int stop = 0;
    nt_probe_t p;
    void *st = NULL;
    char why[256] = "";
    nt_status_t s;

    visible(c->vis[r]);
    memset(&p, 0, sizeof(p));
    p.params = &c->params;
    p.launcher = l;
    p.rank = r;
    p.size = c->nranks;
    p.nodes = &node;
    p.nnodes = 1;
    p.local_rank = r;
    p.host_ranks = c->nranks;
    p.stop = &stop;
    s = nt_gpu_probe_ops.init(&p, &st, r == 0 ? c->node : NULL, r == 0 ? c->checks : NULL, why,
                              sizeof(why));
    if (s == NT_OK && r != c->die) {
        cJSON *links = cJSON_CreateArray(), *chk = cJSON_CreateArray();
        nt_gpu_probe_ops.run_local(st, &p, links, chk);
        if (r == 0) {
            nt_gpu_probe_ops.finish(st, &p, c->node, c->checks);
            while (cJSON_GetArraySize(chk) > 0)
                cJSON_AddItemToArray(c->checks, cJSON_DetachItemFromArray(chk, 0));
            cJSON_Delete(c->links);
            c->links = links;
            links = NULL;
        }
        cJSON_Delete(links);
        cJSON_Delete(chk);
    }
    if (r == 0)
        c->over = 1;
    while (r == c->die && !c->over) /* silent, but its memory stays mapped by the others */
        usleep(10000);
    if (st)
        nt_gpu_probe_ops.cleanup(st);
    visible(NULL);
    return 0;
}

static void run(run_t *c, int nranks, const char *v0, const char *v1, const char *v2,
                const char *v3)
{
    memset(c, 0, sizeof(*c));
    c->nranks = nranks;
    c->vis[0] = v0, c->vis[1] = v1, c->vis[2] = v2, c->vis[3] = v3;
    c->die = -1;
    c->params.gpu_bytes = 1 << 20;
    c->params.peer_timeout_s = 1;
    c->params.gpu_probes = NT_GPU_PROBE_ALL;
    c->node = cJSON_CreateObject();
    nt_json_add_arr(c->node, "skipped");
    c->checks = cJSON_CreateArray();
}

static void go(run_t *c)
{
    assert_int_equal(nt_inproc_run(c->nranks, c->nranks, rank_fn, c, NULL), 0);
    assert_non_null(c->links);
}

static void done(run_t *c)
{
    cJSON_Delete(c->node);
    cJSON_Delete(c->checks);
    cJSON_Delete(c->links);
}

static cJSON *link_of(const run_t *c, const char *id)
{
    cJSON *l;
    cJSON_ArrayForEach (l, c->links)
        if (strcmp(nt_json_get_str(l, "id", ""), id) == 0)
            return l;
    return NULL;
}

static int has_error(const cJSON *l, const char *needle)
{
    const cJSON *e;
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(l, "errors"))
        if (cJSON_IsString(e) && strstr(e->valuestring, needle))
            return 1;
    return 0;
}

/* The sorted ids of the links, joined. */
static char *ids(const run_t *c)
{
    int n = cJSON_GetArraySize(c->links);
    const char **v = calloc((size_t)n, sizeof(*v));
    size_t len = 1;
    char *out;
    for (int i = 0; i < n; i++) {
        v[i] = nt_json_get_str(cJSON_GetArrayItem(c->links, i), "id", "");
        len += strlen(v[i]) + 1;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            const char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    out = calloc(1, len);
    for (int i = 0; i < n; i++) {
        strcat(out, v[i]);
        strcat(out, "\n");
    }
    free(v);
    return out;
}

static int setup(void **state)
{
    char why[256];
    void *h;
    (void)state;
    setenv("NETTUNE_TEST_LIBCUDA", SIM, 1);
    setenv("NETTUNE_TEST_LIBNVML", NVML, 1);
    setenv("NETTUNE_TEST_GPU_LAT_ITERS", "20", 1);
    setenv("NT_FAKE_NVML_GPUS", "4", 1);
    if (nt_cuda_load(NULL, why, sizeof(why)) != NT_OK ||
        nt_nvml_load(NULL, why, sizeof(why)) != NT_OK)
        return -1;
    h = dlopen(SIM, RTLD_NOW | RTLD_NOLOAD);
    visible = h ? (void (*)(const char *))dlsym(h, "nt_fake_cuda_visible") : NULL;
    return visible ? 0 : -1;
}

/* Owners: one rank that sees all takes all; else the lowest rank that sees each GPU. */
static void test_owners(void **state)
{
    unsigned char all[2 * 4] = {1, 1, 1, 1, 1, 1, 1, 1}, one[4 * 4] = {0};
    unsigned char late[2 * 4] = {0, 0, 0, 0, 1, 1, 1, 1}, over[2 * 3] = {1, 1, 0, 0, 1, 1};
    int o[4];
    (void)state;
    assert_int_equal(nt_gpu_owners(all, 2, 4, o), 1);
    assert_true(o[0] == 0 && o[1] == 0 && o[2] == 0 && o[3] == 0);
    for (int r = 0; r < 4; r++)
        one[r * 4 + r] = 1;
    assert_int_equal(nt_gpu_owners(one, 4, 4, o), 4);
    assert_true(o[0] == 0 && o[1] == 1 && o[2] == 2 && o[3] == 3);
    assert_int_equal(nt_gpu_owners(late, 2, 4, o), 1); /* rank 1 sees all, rank 0 none */
    assert_true(o[0] == 1 && o[3] == 1);
    assert_int_equal(nt_gpu_owners(over, 2, 3, o), 2);
    assert_true(o[0] == 0 && o[1] == 0 && o[2] == 1);
    one[0] = 0; /* nobody sees gpu0 */
    assert_int_equal(nt_gpu_owners(one, 4, 4, o), 3);
    assert_int_equal(o[0], -1);
}

/* The schedule: every ordered pair once per direction (write, read, SM, latency), every
 * unordered pair once (bidir); the issuer owns the issuing GPU, the partner the other one. */
static void test_schedule(void **state)
{
    nt_gpu_plan_params_t pp = {4, NT_GPU_PROBE_ALL, 1 << 20, 0, 0, 1, NULL};
    int owner[4] = {0, 1, 2, 3}, cnt[NT_GPU_T_COUNT][4][4];
    nt_gpu_test_t *plan;
    size_t n;
    (void)state;
    memset(cnt, 0, sizeof(cnt));
    assert_int_equal(nt_gpu_plan(&pp, &plan, &n), NT_OK);
    for (size_t i = 0; i < n; i++) {
        int iss, par;
        nt_gpu_test_ranks(&plan[i], owner, &iss, &par);
        if (plan[i].peer < 0) {
            assert_int_equal(iss, plan[i].gpu);
            assert_int_equal(par, -1);
            continue;
        }
        cnt[plan[i].kind][plan[i].gpu][plan[i].peer]++;
        switch (plan[i].kind) {
        case NT_GPU_T_P2P_READ:
            assert_int_equal(iss, plan[i].peer);
            assert_int_equal(par, -1);
            break;
        case NT_GPU_T_P2P_BIDIR:
        case NT_GPU_T_P2P_LAT:
            assert_int_equal(iss, plan[i].gpu);
            assert_int_equal(par, plan[i].peer);
            break;
        default:
            assert_int_equal(iss, plan[i].gpu);
            assert_int_equal(par, -1);
        }
    }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int want = a != b;
            assert_int_equal(cnt[NT_GPU_T_P2P_WRITE][a][b], want);
            assert_int_equal(cnt[NT_GPU_T_P2P_READ][a][b], want);
            assert_int_equal(cnt[NT_GPU_T_P2P_SM][a][b], want);
            assert_int_equal(cnt[NT_GPU_T_P2P_LAT][a][b], want);
            assert_int_equal(cnt[NT_GPU_T_P2P_BIDIR][a][b], a < b);
        }
    /* one rank owning all: nobody partners */
    memset(owner, 0, sizeof(owner));
    for (size_t i = 0; i < n; i++) {
        int iss, par;
        nt_gpu_test_ranks(&plan[i], owner, &iss, &par);
        assert_true(iss == 0 && par == -1);
    }
    free(plan);
}

/* 4 ranks with one GPU each, 2 ranks with two each, 1 rank with all four: the same links. */
static void test_ipc_same_links_as_one_rank(void **state)
{
    run_t one, four, two;
    char *a, *b, *c;
    cJSON *w, *bi;
    (void)state;
    run(&one, 1, "0,1,2,3", NULL, NULL, NULL);
    go(&one);
    run(&four, 4, "0", "1", "2", "3");
    go(&four);
    run(&two, 2, "0,1", "2,3", NULL, NULL);
    go(&two);
    assert_string_equal(nt_json_get_str(one.node, "gpu_pair_mode", ""), "one_rank");
    assert_string_equal(nt_json_get_str(four.node, "gpu_pair_mode", ""), "ipc");
    assert_string_equal(nt_json_get_str(two.node, "gpu_pair_mode", ""), "ipc");
    a = ids(&one), b = ids(&four), c = ids(&two);
    /* 12 ordered pairs x (write, read, sm), 6 bidir, besides the per-GPU links */
    {
        int np = 0;
        for (cJSON *l = one.links->child; l; l = l->next)
            np += strcmp(nt_json_get_str(l, "kind", ""), "p2p") == 0;
        assert_int_equal(np, 12 * 3 + 6);
    }
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    free(a), free(b), free(c);
    /* the figures are the simulated links': 376 GB/s one way, both ways at once twice that */
    w = link_of(&four, "p2p.write:node01/gpu0->node01/gpu3");
    bi = link_of(&four, "p2p.bidir:node01/gpu1->node01/gpu2");
    assert_non_null(w);
    assert_non_null(bi);
    assert_null(cJSON_GetObjectItemCaseSensitive(w, "errors"));
    assert_true(fabs(nt_json_get_num(w, "peak_bw_GBps", 0) - 376) < 2);
    assert_true(fabs(nt_json_get_num(bi, "peak_bw_GBps", 0) - 752) < 4);
    assert_string_equal(nt_json_get_str(w, "path", ""), "NV18");
    assert_true(nt_json_get_num(w, "small_msg_lat_us", 0) > 0); /* the ping-pong across ranks */
    for (cJSON *l = four.links->child; l; l = l->next)
        assert_null(cJSON_GetObjectItemCaseSensitive(l, "errors"));
    done(&one), done(&four), done(&two);
}

/* A handle that does not open: the pairs needing it carry the reason, the others measure. */
static void test_ipc_open_fails(void **state)
{
    run_t c;
    cJSON *bad, *ok, *rd, *bi;
    (void)state;
    setenv("NT_FAKE_IPC_OPEN_FAIL", "2", 1);
    run(&c, 4, "0", "1", "2", "3");
    go(&c);
    unsetenv("NT_FAKE_IPC_OPEN_FAIL");
    bad = link_of(&c, "p2p.write:node01/gpu0->node01/gpu2");
    rd = link_of(&c, "p2p.read:node01/gpu2->node01/gpu1");
    bi = link_of(&c, "p2p.bidir:node01/gpu1->node01/gpu2");
    ok = link_of(&c, "p2p.write:node01/gpu0->node01/gpu1");
    assert_non_null(bad);
    assert_non_null(rd);
    assert_non_null(bi);
    assert_non_null(ok);
    assert_true(has_error(bad, "CUDA_ERROR_MAP_FAILED"));
    assert_true(has_error(rd, "CUDA_ERROR_MAP_FAILED"));
    assert_true(has_error(bi, "CUDA_ERROR_MAP_FAILED"));
    assert_null(cJSON_GetObjectItemCaseSensitive(ok, "errors"));
    /* gpu2's writes into the others' memory open their handles: measured; its ping-pong
     * with gpu0 needs gpu2's flags opened on gpu0's rank: that latency carries the reason */
    ok = link_of(&c, "p2p.write:node01/gpu2->node01/gpu0");
    assert_non_null(ok);
    assert_true(fabs(nt_json_get_num(ok, "peak_bw_GBps", 0) - 376) < 2);
    assert_true(has_error(ok, "pair latency"));
    assert_null(cJSON_GetObjectItemCaseSensitive(link_of(&c, "p2p.write:node01/gpu0->node01/gpu1"),
                                                 "errors"));
    done(&c);
}

/* A GPU whose memory has no IPC handle: named in the node's skips, its pairs with the other
 * ranks' GPUs not measured (nor judged for peer access), its own links measured. */
static void test_ipc_no_handle(void **state)
{
    run_t c;
    cJSON *sk;
    int named = 0, np = 0;
    (void)state;
    setenv("NT_FAKE_IPC_GET_FAIL", "1", 1);
    run(&c, 4, "0", "1", "2", "3");
    go(&c);
    unsetenv("NT_FAKE_IPC_GET_FAIL");
    cJSON_ArrayForEach (sk, cJSON_GetObjectItemCaseSensitive(c.node, "skipped"))
        if (strstr(nt_json_get_str(sk, "reason", ""),
                   "gpu1 (0000:2a:00.0): local rank 1: IPC handle"))
            named = 1;
    assert_true(named);
    for (cJSON *l = c.links->child; l; l = l->next)
        if (strstr(nt_json_get_str(l, "id", ""), "/gpu1"))
            np += strcmp(nt_json_get_str(l, "kind", ""), "p2p") == 0;
    assert_int_equal(np, 0);
    assert_non_null(link_of(&c, "gpu_local:node01/gpu1"));
    assert_non_null(link_of(&c, "p2p.write:node01/gpu0->node01/gpu2"));
    cJSON_ArrayForEach (sk, c.checks)
        assert_false(strcmp(nt_json_get_str(sk, "name", ""), "gpu_peer_access") == 0 &&
                     strstr(nt_json_get_str(sk, "target", ""), "gpu1"));
    done(&c);
}

/* A rank that leaves after set-up: its pairs carry the reason, the run ends (no hang), the
 * node's gpu_ranks check fails naming it. */
static void test_ipc_rank_dies(void **state)
{
    run_t c;
    cJSON *bi, *ch, *w;
    int found = 0;
    (void)state;
    setenv("NT_FAKE_NVML_GPUS", "3", 1);
    run(&c, 3, "0", "1", "2", NULL);
    c.die = 2;
    go(&c);
    setenv("NT_FAKE_NVML_GPUS", "4", 1);
    cJSON_ArrayForEach (ch, c.checks)
        if (strcmp(nt_json_get_str(ch, "name", ""), "gpu_ranks") == 0 &&
            strcmp(nt_json_get_str(ch, "target", ""), "local rank 2") == 0 &&
            strcmp(nt_json_get_str(ch, "verdict", ""), "fail") == 0)
            found = 1;
    assert_true(found);
    bi = link_of(&c, "p2p.bidir:node01/gpu0->node01/gpu2");
    assert_non_null(bi);
    assert_true(has_error(bi, "did not answer"));
    w = link_of(&c, "p2p.write:node01/gpu0->node01/gpu1"); /* between the living: measured */
    assert_non_null(w);
    assert_null(cJSON_GetObjectItemCaseSensitive(w, "errors"));
    done(&c);
}

/* Peer access across ranks is NVML's P2P status (the opener cannot ask CUDA about a device it
 * does not see): NVML says no for gpu0-gpu1, so that pair is not measured and fails its
 * gpu_peer_access check (NVLink connects it); the others are measured. */
static void test_ipc_nvml_decides_peer_access(void **state)
{
    run_t c;
    cJSON *ch;
    int fail01 = 0;
    (void)state;
    setenv("NT_FAKE_NVML_NO_P2P", "0,1", 1);
    run(&c, 4, "0", "1", "2", "3");
    go(&c);
    unsetenv("NT_FAKE_NVML_NO_P2P");
    cJSON_ArrayForEach (ch, c.checks)
        if (strcmp(nt_json_get_str(ch, "name", ""), "gpu_peer_access") == 0 &&
            strncmp(nt_json_get_str(ch, "target", ""), "gpu0->gpu1", 10) == 0 &&
            strcmp(nt_json_get_str(ch, "verdict", ""), "fail") == 0)
            fail01 = 1;
    assert_true(fail01);
    assert_null(link_of(&c, "p2p.write:node01/gpu0->node01/gpu1"));
    assert_null(link_of(&c, "p2p.write:node01/gpu1->node01/gpu0"));
    assert_null(link_of(&c, "p2p.bidir:node01/gpu0->node01/gpu1"));
    assert_non_null(link_of(&c, "p2p.write:node01/gpu0->node01/gpu2"));
    done(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owners),
        cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_ipc_same_links_as_one_rank),
        cmocka_unit_test(test_ipc_open_fails),
        cmocka_unit_test(test_ipc_no_handle),
        cmocka_unit_test(test_ipc_rank_dies),
        cmocka_unit_test(test_ipc_nvml_decides_peer_access),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
