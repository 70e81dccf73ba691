/* Node identification (fake nodes, natural hostname order) and the steps of a run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "nettune/launcher.h"
#include "nettune/sysfs.h"
#include "tree_put.h"
#include "params.h"
#include "run.h"

static char *hosts_of(int n, const char *const *names)
{
    char *h = calloc((size_t)n, NT_HOST_MAX);
    for (int i = 0; i < n; i++)
        snprintf(h + (size_t)i * NT_HOST_MAX, NT_HOST_MAX, "%s", names[i]);
    return h;
}

static void test_natural_order(void **state)
{
    const char *names[] = {"node10", "node10", "node2", "node2", "node1", "node1"};
    int leaders[] = {0, 0, 2, 2, 4, 4};
    char *h = hosts_of(6, names);
    nt_node_t *nodes;
    int n;
    (void)state;
    assert_int_equal(nt_nodes_build(6, h, leaders, 0, &nodes, &n), NT_OK);
    assert_int_equal(n, 3);
    assert_string_equal(nodes[0].host, "node1");
    assert_string_equal(nodes[1].host, "node2");
    assert_string_equal(nodes[2].host, "node10");
    assert_int_equal(nodes[2].nranks, 2);
    assert_int_equal(nodes[2].ranks[0], 0);
    assert_int_equal(nodes[2].ranks[1], 1);
    assert_int_equal(nodes[0].ranks[0], 4);
    nt_nodes_free(nodes, n);
    free(h);
}

static void test_fake_nodes(void **state)
{
    const char *names[] = {"vm", "vm", "vm", "vm", "vm", "vm", "vm", "vm"};
    char *h = hosts_of(8, names);
    nt_node_t *nodes;
    int n;
    (void)state;
    assert_int_equal(nt_nodes_build(8, h, NULL, 4, &nodes, &n), NT_OK);
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++) {
        char want[16];
        snprintf(want, sizeof(want), "fake%d", i);
        assert_string_equal(nodes[i].host, want);
        assert_int_equal(nodes[i].nranks, 2);
        assert_int_equal(nodes[i].ranks[0], 2 * i);
    }
    nt_nodes_free(nodes, n);
    /* More fake nodes than ranks: one rank per node. */
    assert_int_equal(nt_nodes_build(3, h, NULL, 10, &nodes, &n), NT_OK);
    assert_int_equal(n, 3);
    nt_nodes_free(nodes, n);
    free(h);
}

/* NETTUNE_FAKE_NODES: 20 digits said "give a count >= 1" (atoi overflowed); now too large,
 * with the limit, and taken as one node per rank. */
static void test_fake_nodes_parse(void **state)
{
    char why[200];
    (void)state;
    assert_int_equal(nt_fake_nodes_parse("4", 8, why, sizeof(why)), 4);
    assert_string_equal(why, "");
    assert_int_equal(nt_fake_nodes_parse("10", 3, why, sizeof(why)), 10);
    assert_string_equal(why, "");
    assert_int_equal(nt_fake_nodes_parse("99999999999999999999", 8, why, sizeof(why)), 8);
    assert_string_equal(why, "NETTUNE_FAKE_NODES='99999999999999999999' is too large: at most 8 "
                             "here, one fake node per rank of this run; using 8");
    assert_int_equal(nt_fake_nodes_parse("4294967296", 2, why, sizeof(why)), 2);
    assert_non_null(strstr(why, "too large: at most 2"));
    const char *bad[] = {"0", "-3", "x", "4x", "-99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(nt_fake_nodes_parse(bad[i], 8, why, sizeof(why)), 0);
        assert_non_null(strstr(why, "give a count >= 1"));
    }
}

static void test_same_name_two_domains(void **state)
{
    const char *names[] = {"box", "box", "box", "box"};
    int leaders[] = {0, 0, 2, 2};
    char *h = hosts_of(4, names);
    nt_node_t *nodes;
    int n;
    (void)state;
    assert_int_equal(nt_nodes_build(4, h, leaders, 0, &nodes, &n), NT_OK);
    assert_int_equal(n, 2);
    assert_string_not_equal(nodes[0].host, nodes[1].host);
    nt_nodes_free(nodes, n);
    free(h);
}

/* A host name as a peer sent it fills its NT_HOST_MAX slot without a NUL (the allgather takes
 * the bytes as they come): it is read within its slot, not on into the next rank's or past the
 * buffer (AddressSanitizer: heap-buffer-overflow in snprintf before the fix). */
static void test_host_slot_unterminated(void **state)
{
    (void)state;
    char *h = malloc(2 * NT_HOST_MAX);
    assert_non_null(h);
    memset(h, 'a', NT_HOST_MAX);
    memset(h + NT_HOST_MAX, 'b', NT_HOST_MAX);
    nt_node_t *nodes;
    int n;
    assert_int_equal(nt_nodes_build(2, h, NULL, 0, &nodes, &n), NT_OK);
    assert_int_equal(n, 2);
    char want[NT_HOST_MAX];
    memset(want, 'a', NT_HOST_MAX - 1);
    want[NT_HOST_MAX - 1] = '\0';
    assert_string_equal(nodes[0].host, want);
    assert_int_equal(nodes[1].host[0], 'b');
    assert_int_equal((int)strlen(nodes[1].host), NT_HOST_MAX - 1);
    nt_nodes_free(nodes, n);
    free(h);
}

/* Steps for 4 nodes x 2 ranks, full: 6 node pairs x 2 lanes inter, 4 nodes x 1 pair intra,
 * then the local step(s). */
/* Leader keys from host names and boot ids, whatever the rank order: mpirun --map-by node
 * puts rank r on host r mod N. Two domains of one name on two kernels (boot ids) stay apart. */
static void test_leaders_non_consecutive(void **state)
{
    const char *names[] = {"h1", "h2", "h3", "h1", "h2", "h3", "box", "box"};
    char boots[8][NT_BOOT_ID_MAX] = {"k1", "k2", "k3", "k1", "k2", "k3", "kA", "kB"};
    int leaders[8];
    char *h = hosts_of(8, names);
    (void)state;
    nt_nodes_leaders(8, h, &boots[0][0], NT_BOOT_ID_MAX, leaders);
    const int want[8] = {0, 1, 2, 0, 1, 2, 6, 7};
    for (int r = 0; r < 8; r++)
        assert_int_equal(leaders[r], want[r]);
    free(h);
}

/* Node identification through the in-process launcher with the ranks of each host spread
 * as --map-by node spreads them (rank r on host n<r mod 4>; the launcher's own shared-memory
 * groups are consecutive pairs, which rank - local_rank used to take for hosts): 4 nodes of
 * 2 ranks, {i, i + 4}, and every rank counts 8 ranks on its kernel (one boot id). */
typedef struct ident_result {
    int nnodes[8], ranks[8][4][2], nranks[8][4], machine[8];
    nt_status_t st[8];
} ident_result_t;

static int ident_fn(nt_launcher_t *l, void *arg)
{
    ident_result_t *res = arg;
    int r = l->ops->rank(l);
    char host[16];
    nt_node_t *nodes = NULL;
    int n = 0;
    snprintf(host, sizeof(host), "n%d", r % 4);
    res->st[r] = nt_nodes_identify(l, host, "one-kernel", 0, 5.0, &nodes, &n, &res->machine[r]);
    res->nnodes[r] = n;
    for (int i = 0; i < n && i < 4; i++) {
        res->nranks[r][i] = nodes[i].nranks;
        for (int k = 0; k < nodes[i].nranks && k < 2; k++)
            res->ranks[r][i][k] = nodes[i].ranks[k];
    }
    nt_nodes_free(nodes, n);
    return 0;
}

static void test_identify_map_by_node(void **state)
{
    ident_result_t res;
    (void)state;
    memset(&res, 0, sizeof(res));
    assert_int_equal(nt_inproc_run(8, 2, ident_fn, &res, NULL), 0);
    for (int r = 0; r < 8; r++) {
        assert_int_equal(res.st[r], NT_OK);
        assert_int_equal(res.nnodes[r], 4);
        assert_int_equal(res.machine[r], 8);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(res.nranks[r][i], 2);
            assert_int_equal(res.ranks[r][i][0], i);
            assert_int_equal(res.ranks[r][i][1], i + 4);
        }
    }
}

static void test_steps_full(void **state)
{
    const char *names[8] = {"a", "a", "b", "b", "c", "c", "d", "d"};
    int leaders[8] = {0, 0, 2, 2, 4, 4, 6, 6};
    char *h = hosts_of(8, names);
    nt_node_t *nodes;
    nt_step_t *steps;
    int n, ns, inter = 0, intra = 0, local = 0;
    int seen[8][8] = {{0}};
    (void)state;
    assert_int_equal(nt_nodes_build(8, h, leaders, 0, &nodes, &n), NT_OK);
    /* Serial: one pair per step. */
    assert_int_equal(nt_steps_build(nodes, n, NT_SCHED_FULL, 0, &steps, &ns), NT_OK);
    for (int s = 0; s < ns; s++) {
        if (steps[s].local) {
            local += steps[s].npairs;
            assert_int_equal(steps[s].pairs[0][1], -1);
            continue;
        }
        assert_int_equal(steps[s].npairs, 1);
        int a = steps[s].pairs[0][0], b = steps[s].pairs[0][1];
        seen[a][b]++;
        if (steps[s].scopes[0] == NT_SCOPE_INTER) {
            inter++;
            assert_int_equal(a % 2, b % 2); /* local rank i with local rank i */
        } else {
            intra++;
            assert_int_equal(a / 2, b / 2);
        }
    }
    assert_int_equal(inter, 12);
    assert_int_equal(intra, 4);
    assert_int_equal(local, 4);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            assert_true(seen[a][b] <= 1);
    nt_steps_free(steps, ns);
    /* Concurrent: 3 inter rounds + 1 intra round + 1 local step. */
    assert_int_equal(nt_steps_build(nodes, n, NT_SCHED_FULL, 1, &steps, &ns), NT_OK);
    assert_int_equal(ns, 5);
    assert_int_equal(steps[0].npairs, 4); /* 2 node pairs x 2 lanes */
    assert_int_equal(steps[3].npairs, 4); /* one intra pair per node */
    assert_int_equal(steps[4].local, 1);
    nt_steps_free(steps, ns);
    nt_nodes_free(nodes, n);
    free(h);
}

/* Uneven ranks per node (3, 2, 2 on 3 nodes): every rank gets an inter-node partner; the
 * extra local rank 2 of the first node is paired with local rank 0 of each other node. */
static void test_steps_uneven(void **state)
{
    const char *names[7] = {"a", "a", "a", "b", "b", "c", "c"};
    int leaders[7] = {0, 0, 0, 3, 3, 5, 5};
    char *h = hosts_of(7, names);
    nt_node_t *nodes;
    nt_step_t *steps;
    int n, ns, inter_of[7] = {0}, lr2_partners = 0;
    (void)state;
    assert_int_equal(nt_nodes_build(7, h, leaders, 0, &nodes, &n), NT_OK);
    assert_int_equal(nt_steps_build(nodes, n, NT_SCHED_FULL, 1, &steps, &ns), NT_OK);
    for (int s = 0; s < ns; s++) {
        for (int i = 0; i < steps[s].npairs && !steps[s].local; i++) {
            int a = steps[s].pairs[i][0], b = steps[s].pairs[i][1];
            if (steps[s].scopes[i] != NT_SCOPE_INTER)
                continue;
            inter_of[a]++;
            inter_of[b]++;
            if (a == 2 || b == 2) {
                lr2_partners++;
                assert_int_equal(steps[s].npairs, 1); /* its own step: partners are busy */
                assert_true(a == 3 || b == 3 || a == 5 || b == 5); /* local rank 0 there */
            }
        }
    }
    for (int r = 0; r < 7; r++)
        assert_true(inter_of[r] >= 1);
    assert_int_equal(lr2_partners, 2);
    nt_steps_free(steps, ns);
    nt_nodes_free(nodes, n);
    free(h);
}

static void test_sizes_and_options(void **state)
{
    nt_probe_params_t p;
    nt_params_action_t a;
    char err[512];
    size_t v;
    (void)state;
    assert_int_equal(nt_parse_size("4K", &v), NT_OK);
    assert_int_equal(v, 4096);
    assert_int_equal(nt_parse_size("1MiB", &v), NT_OK);
    assert_int_equal(v, 1 << 20);
    assert_int_equal(nt_parse_size("2g", &v), NT_OK);
    assert_true(v == (size_t)2 << 30);
    assert_int_equal(nt_parse_size("12X", &v), NT_ERR_INVALID);
    assert_int_equal(nt_parse_size("-1", &v), NT_ERR_INVALID);
    /* at most 1 TiB, checked before the multiplication wraps (nettune tune read 17179869185G,
     * 2^64 + 2^30 bytes, as 1 GiB when it had its own reader) */
    assert_int_equal(nt_parse_size("1024G", &v), NT_OK);
    assert_true(v == (size_t)1 << 40);
    assert_int_equal(nt_parse_size("1025G", &v), NT_ERR_INVALID);
    assert_int_equal(nt_parse_size("17179869185G", &v), NT_ERR_INVALID);
    assert_int_equal(nt_parse_size("99999999999999999999999", &v), NT_ERR_INVALID);
    assert_int_equal(nt_parse_size(" 4K", &v), NT_ERR_INVALID);

    char *ok[] = {"nettune-probe",
                  "--full",
                  "--sizes",
                  "8,64K,4M",
                  "--time-limit",
                  "30",
                  "--peer-timeout",
                  "60",
                  "--require",
                  "gpu,rdma",
                  NULL};
    assert_int_equal(nt_params_parse(10, ok, &p, &a, err, sizeof(err)), NT_OK);
    assert_int_equal(p.mode, NT_SCHED_FULL);
    assert_int_equal(p.nlat_sizes, 1);
    assert_int_equal(p.nbw_sizes, 2);
    assert_int_equal(p.bw_sizes[0], 65536);
    assert_int_equal(p.require, NT_REQUIRE_GPU | NT_REQUIRE_RDMA);
    assert_true(p.peer_timeout_s == 30.0); /* lowered to the time limit, and logged */

    char *bad1[] = {"nettune-probe", "--sizes", "8,huge", NULL};
    assert_int_equal(nt_params_parse(3, bad1, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "'huge'"));
    char *bad2[] = {"nettune-probe", "--bogus", NULL};
    assert_int_equal(nt_params_parse(2, bad2, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--bogus"));
    char *bad3[] = {"nettune-probe", "--require", "tpu", NULL};
    assert_int_equal(nt_params_parse(3, bad3, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "'tpu'"));
    char *bad4[] = {"nettune-probe", "--output", NULL};
    assert_int_equal(nt_params_parse(2, bad4, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "needs a value"));
    char *bad5[] = {"nettune-probe", "--probes", "mpi,frob", NULL};
    assert_int_equal(nt_params_parse(3, bad5, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    /* GPU options (docs/gpu.md) */
    char *gpu[] = {"nettune-probe", "--probes",      "gpu",
                   "--gpu-probes",  "h2d,local",     "--gpu-buffer-size",
                   "64M",           "--checks-only", NULL};
    assert_int_equal(nt_params_parse(8, gpu, &p, &a, err, sizeof(err)), NT_OK);
    assert_int_equal(p.gpu_probes, 0x21u); /* NT_GPU_PROBE_H2D | NT_GPU_PROBE_LOCAL */
    assert_true(p.gpu_bytes == (size_t)64 << 20);
    assert_int_equal(p.checks_only, 1);
    char *bad6[] = {"nettune-probe", "--gpu-probes", "h2d,nvlink", NULL};
    assert_int_equal(nt_params_parse(3, bad6, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "unknown GPU probe 'nvlink'"));
    char *bad7[] = {"nettune-probe", "--gpu-buffer-size", "1K", NULL};
    assert_int_equal(nt_params_parse(3, bad7, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--gpu-buffer-size: give 64K to 4G"));
    char *bad8[] = {"nettune-probe", "--sizes", "8,,4K", NULL};
    assert_int_equal(nt_params_parse(3, bad8, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "empty item in --sizes '8,,4K': give e.g. --sizes 8,4K,1M,4M");
    char *bad9[] = {"nettune-probe", "--sizes", "8,4K,", NULL};
    assert_int_equal(nt_params_parse(3, bad9, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    char *bad10[] = {"nettune-probe", "--local", "--full", NULL};
    assert_int_equal(nt_params_parse(3, bad10, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--local measures no links between nodes, so --full"));
    /* an option of a probe that --probes leaves out is an error, not silently unused */
    char *bad11[] = {"nettune-probe", "--probes", "mpi", "--gpu-probes", "p2p", NULL};
    assert_int_equal(nt_params_parse(5, bad11, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "--gpu-probes configures the gpu probe, which --probes mpi leaves "
                             "out: add gpu to --probes, or drop --gpu-probes");
    char *bad12[] = {"nettune-probe", "--rdma-qps", "4", "--probes", "mpi,gpu", NULL};
    assert_int_equal(nt_params_parse(5, bad12, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--rdma-qps configures the rdma probe"));
    char *ok2[] = {"nettune-probe", "--rdma-qps", "4", "--probes", "mpi,rdma", NULL};
    assert_int_equal(nt_params_parse(5, ok2, &p, &a, err, sizeof(err)), NT_OK);
    char *help[] = {"nettune-probe", "--help", NULL};
    assert_int_equal(nt_params_parse(2, help, &p, &a, err, sizeof(err)), NT_OK);
    assert_int_equal(a, NT_ACTION_HELP);
}

/* The machine's CPUs for the job, not one rank's binding: hwloc's allowed PUs (or the online
 * CPUs), bounded by the cgroup v2 quota of the process's cgroup and its parents. */
/* The fabric phases' options: defaults, values, and options that configure nothing. */
static void test_fabric_options(void **state)
{
    nt_probe_params_t p;
    nt_params_action_t a;
    char err[256];
    (void)state;

    char *dflt[] = {"nettune-probe", NULL};
    assert_int_equal(nt_params_parse(1, dflt, &p, &a, err, sizeof(err)), NT_OK);
    assert_int_equal(p.fabric, 0);
    assert_true(p.fabric_budget_s == 60.0);
    assert_int_equal(p.fabric_bytes, 16u << 20);
    assert_null(p.fabric_ifaces);
    assert_int_equal(p.fabric_seed_set, 0);
    char *ok[] = {"nettune-probe", "--fabric", "--fabric-budget", "12.5", "--fabric-bytes", "4M",
                  "--fabric-ifaces", "eth0,eth1", "--fabric-seed", "42", NULL};
    assert_int_equal(nt_params_parse(10, ok, &p, &a, err, sizeof(err)), NT_OK);
    assert_int_equal(p.fabric, 1);
    assert_true(p.fabric_budget_s == 12.5);
    assert_int_equal(p.fabric_bytes, 4u << 20);
    assert_string_equal(p.fabric_ifaces, "eth0,eth1");
    assert_true(p.fabric_seed == 42 && p.fabric_seed_set);
    /* --full runs them too; --fabric-budget 0 turns them off there */
    char *full0[] = {"nettune-probe", "--full", "--fabric-budget", "0", NULL};
    assert_int_equal(nt_params_parse(4, full0, &p, &a, err, sizeof(err)), NT_OK);
    assert_true(p.fabric_budget_s == 0);
    char *b1[] = {"nettune-probe", "--fabric-budget", "10", NULL};
    assert_int_equal(nt_params_parse(3, b1, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "--fabric-budget configures the fabric phases, which run with "
                             "--fabric or --full: add one of them, or drop --fabric-budget");
    char *b2[] = {"nettune-probe", "--fabric", "--fabric-budget", "0", NULL};
    assert_int_equal(nt_params_parse(4, b2, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--fabric with --fabric-budget 0 runs nothing"));
    char *b3[] = {"nettune-probe", "--fabric", "--fabric-ifaces", "eth0,,eth1", NULL};
    assert_int_equal(nt_params_parse(4, b3, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "empty item in --fabric-ifaces 'eth0,,eth1'"));
    char *b4[] = {"nettune-probe", "--fabric", "--fabric-ifaces", "a,b,c,d,e,f,g,h,i", NULL};
    assert_int_equal(nt_params_parse(4, b4, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "at most 8 rails"));
    char *b5[] = {"nettune-probe", "--fabric", "--fabric-ifaces", "averyveryverylongname0", NULL};
    assert_int_equal(nt_params_parse(4, b5, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "bad interface name"));
    char *b6[] = {"nettune-probe", "--fabric", "--fabric-seed", "-1", NULL};
    assert_int_equal(nt_params_parse(4, b6, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--fabric-seed: give an integer from 0 to 2^53-1"));
    char *b7[] = {"nettune-probe", "--fabric", "--fabric-bytes", "1K", NULL};
    assert_int_equal(nt_params_parse(4, b7, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--fabric-bytes: give 4K to 1G"));
    char *b8[] = {"nettune-probe", "--fabric", "--checks-only", NULL};
    assert_int_equal(nt_params_parse(3, b8, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--checks-only sends no traffic"));
    /* one interface twice would be one rail measured as two ("cross-wired" to the judge) */
    char *b9[] = {"nettune-probe", "--fabric", "--fabric-ifaces", "eth0,lo,eth0", NULL};
    assert_int_equal(nt_params_parse(4, b9, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "interface 'eth0' twice in --fabric-ifaces 'eth0,lo,eth0': name "
                             "each rail once");
    char *b10[] = {"nettune-probe", "--fabric-topology", "x.ibnetdiscover", NULL};
    assert_int_equal(nt_params_parse(3, b10, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "--fabric-topology configures the fabric phases"));
}

static void test_machine_cpus(void **state)
{
    char root[] = "/tmp/nt-cpus-XXXXXX";
    (void)state;
    assert_non_null(mkdtemp(root));
    tree_put(root, "/proc/self/cgroup", "0::/job/step\n");
    tree_put(root, "/sys/fs/cgroup/job/step/cpu.max", "max 100000\n");
    nt_sysfs_set_root(root);
    assert_int_equal(nt_machine_cpus(64), 64); /* no quota anywhere */
    tree_put(root, "/sys/fs/cgroup/job/cpu.max", "150000 100000\n");
    assert_int_equal(nt_machine_cpus(64), 2); /* the parent's 1.5 CPUs, rounded up */
    assert_int_equal(nt_machine_cpus(1), 1);
    tree_put(root, "/proc/self/cgroup", "0::/\n"); /* a cgroup namespace: the root is the pod's */
    tree_put(root, "/sys/fs/cgroup/cpu.max", "400000 100000\n");
    assert_int_equal(nt_machine_cpus(64), 4);
    tree_put(root, "/proc/self/cgroup", "4:memory:/x\n"); /* cgroup v1 only: no quota read */
    assert_int_equal(nt_machine_cpus(8), 8);
    assert_true(nt_machine_cpus(0) >= 1); /* unknown: the online CPUs */
    nt_sysfs_set_root(NULL);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* Ranks of one kernel (same boot id) are one machine, whatever their host names. */
static void test_machine_ranks(void **state)
{
    char keys[5][40] = {"boot-a", "boot-b", "boot-a", "boot-a", "boot-b"};
    (void)state;
    assert_int_equal(nt_machine_ranks(5, &keys[0][0], 40, 0), 3);
    assert_int_equal(nt_machine_ranks(5, &keys[0][0], 40, 4), 2);
    assert_int_equal(nt_machine_ranks(5, &keys[0][0], 40, 5), 0);
    assert_int_equal(nt_machine_ranks(1, &keys[0][0], 40, 0), 1);
}

/* The registry is the one list of probes: --probes and its messages read it. */
static void test_registry(void **state)
{
    char names[64], err[256];
    nt_probe_params_t p;
    nt_params_action_t a;
    int n;
    const nt_link_probe_ops_t *const *t = nt_probe_registry(&n);
    (void)state;
    assert_int_equal(n, 3);
    assert_string_equal(t[0]->kind, "mpi");
    assert_int_equal(nt_probe_registry_find("rdma"), 1);
    assert_int_equal(nt_probe_registry_find("rdm"), -1);
    assert_int_equal(nt_probe_registry_find("gpu"), 2);
    nt_probe_registry_names(names, sizeof(names), ", ");
    assert_string_equal(names, "mpi, rdma, gpu");
    assert_true(nt_probe_selected(NULL, "rdma"));
    assert_true(nt_probe_selected("mpi,rdma", "rdma"));
    assert_false(nt_probe_selected("mpi,rdmax", "rdma"));
    assert_false(nt_probe_selected("mpi", "mp"));
    char *bad[] = {"nettune-probe", "--probes", "frob", NULL};
    assert_int_equal(nt_params_parse(3, bad, &p, &a, err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "'frob'"));
    assert_non_null(strstr(err, "use mpi, rdma, gpu"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_natural_order),
        cmocka_unit_test(test_fake_nodes),
        cmocka_unit_test(test_fake_nodes_parse),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_machine_ranks),
        cmocka_unit_test(test_machine_cpus),
        cmocka_unit_test(test_same_name_two_domains),
        cmocka_unit_test(test_host_slot_unterminated),
        cmocka_unit_test(test_leaders_non_consecutive),
        cmocka_unit_test(test_identify_map_by_node),
        cmocka_unit_test(test_steps_full),
        cmocka_unit_test(test_steps_uneven),
        cmocka_unit_test(test_sizes_and_options),
        cmocka_unit_test(test_fabric_options),
    };
    return cmocka_run_group_tests_name("probe_nodes", tests, NULL, NULL);
}
