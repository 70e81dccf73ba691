/* The tuner model on hand-computed cases, one per version difference and per trap
 * (docs/tuner-model.md), each citing the NVIDIA/nccl source line the expected value comes from (tuning.cc
 * lines at v2.28.9-1 unless a tag is named). Also the eligibility layers (tuner/model.h), the table
 * reader's layouts and the printer. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "nettune/nccl_table.h"
#include "nettune/nccllog.h"
#include "tuner/print_model.h"

#define V2147 21403
#define V2243 22403
#define V2251 22501
#define V2266 22606
#define V2273 22703
#define V2277 22707
#define V2287 22807
#define V2289 22809
#define V2293 22903
#define V2297 22907
#define V2215 22105
#define V2223 22203
#define V2234 22304
#define V2304 23004
#define V2307 23007

/* a communicator of NRANKS over NNODES, SM, every graph NCH channels of BW GB/s over NVLink
 * (type NVL/PIX: LL128 allowed) */
static nt_model_input_t comm(int version, int nranks, int nnodes, int sm, int nch, double bw)
{
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, version, nranks, nnodes), NT_OK);
    in.min_sm = in.max_sm = sm;
    for (int a = 0; a < NT_NUM_ALGOS; a++) {
        in.graph[a].nchannels = nch;
        in.graph[a].bw_intra_GBps = in.graph[a].bw_inter_GBps = bw;
        in.graph[a].type_intra = NT_PATH_NVL;
        in.graph[a].type_inter = NT_PATH_PIX;
    }
    in.comm_nchannels = nch;
    return in;
}

static nt_model_cell_t cell(const nt_model_input_t *in, int c, int a, int p)
{
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(in, NULL, &t), NT_OK);
    return t.cell[c][a][p];
}

#define AR NT_COLL_ALLREDUCE
#define AG NT_COLL_ALLGATHER
#define RS NT_COLL_REDUCESCATTER
#define BC NT_COLL_BROADCAST

/* NVLS bandwidth: 2.27 min(bwIntra, bwInter) x 5/6 (v2.27.7-1 tuning.cc:268-269, :324);
 * 2.28 bwIntra x nvlsEfficiency(.85 Hopper) x (nCh-1)/nCh x 2 for AllReduce, x nRanks/nsteps
 * (tuning.cc:290-299, :348). 1 node x 8 H100, NVLS graph 16 channels, bwIntra 40, bwInter 100. */
static void test_nvls_bw_227_vs_228(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2277, 8, 1, 90, 16, 40);
    in.graph[NT_ALGO_NVLS].bw_inter_GBps = 100;
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps, 16 * 40 * 5.0 / 6.0,
                       1e-3);
    in.version = V2289;
    /* 40 x .85 x 15/16 x 2 = 63.75 < 100; 16 x 63.75 x 8/14 */
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps,
                       16 * 63.75 * 8.0 / 14.0, 1e-2);
    /* NVLS latency on one node: hwLat[NVLINK][NVLS][Simple] = 25 (:153, :392) in both */
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE).lat_us, 25.0, 1e-4);
    /* 2.28 needs 2+ channels (:288): one channel leaves the cell untouched (0/0) */
    in.graph[NT_ALGO_NVLS].nchannels = 1;
    nt_model_cell_t c1 = cell(&in, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE);
    assert_float_equal(c1.lat_us, 0, 0);
    assert_float_equal(c1.bw_GBps, 0, 0);
    assert_int_equal(c1.why, NT_CELL_ALGO_DISABLED);
    in.version = V2277; /* 2.27 has no such rule: 1 x 40 x 5/6 */
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps, 40 * 5.0 / 6.0, 1e-3);
}

/* 2.24-2.26 (v2.26.6-1 tuning.cc:251, :265-279; v2.25.1-1; v2.24.3-1): NVLS AllGather bandwidth
 * min(bwIntra, bwInter) before 2.27 (2.27: min(bwIntra (ppn-1)/ppn, .9 bwInter), v2.27.7-1:272);
 * CollNetDirect AllGather ppn x bw x (.95..85 by ppn) before 2.27; SM100 is Hopper in 2.24
 * (llMaxBw 141 on one node, LL128 off), Blackwell from 2.25 (282); the Tree x.85 tests the Tree
 * graph's pattern to 2.25, maxTreePattern from 2.26; PAT needs SM60 from 2.26. */
static void test_224_to_226(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2266, 8, 1, 90, 16, 40);
    assert_float_equal(cell(&in, AG, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps, 16 * 40, 1e-3);
    in.version = V2277;
    assert_float_equal(cell(&in, AG, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps, 16 * 40 * 7.0 / 8,
                       1e-3);

    nt_model_input_t cd = comm(V2266, 16, 2, 90, 8, 40);
    cd.collnet_enable = 1;
    cd.collnet_heads = 8;
    cd.collnet_ag_rs = 1;
    cd.nvs_count = 1;
    /* w = (8-1)/7 = 1: 8 x 40 x .85 */
    assert_float_equal(cell(&cd, AG, NT_ALGO_COLLNET_DIRECT, NT_PROTO_SIMPLE).bw_GBps, 8 * 40 * .85,
                       1e-3);
    cd.version = V2277; /* 8 x min(40, 36) (v2.27.7-1:290) */
    assert_float_equal(cell(&cd, AG, NT_ALGO_COLLNET_DIRECT, NT_PROTO_SIMPLE).bw_GBps, 8 * 36,
                       1e-3);

    nt_model_input_t bw = comm(V2243, 8, 1, 100, 8, 80);
    assert_float_equal(cell(&bw, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 141.0 * 8 / 14, 1e-3);
    assert_float_equal(cell(&bw, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 0, 0);
    bw.version = V2251;
    assert_float_equal(cell(&bw, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 282.0 * 8 / 14, 1e-3);
    assert_true(cell(&bw, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps > 0);

    nt_model_input_t tp = comm(V2251, 16, 2, 90, 2, 20);
    tp.graph[NT_ALGO_TREE].pattern = 1;
    tp.max_tree_pattern = 3; /* another rank's Tree graph */
    assert_float_equal(cell(&tp, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).bw_GBps, 18.4, 1e-3);
    tp.version = V2266;
    assert_float_equal(cell(&tp, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).bw_GBps, 18.4 * .85, 1e-3);

    nt_model_input_t pat = comm(V2251, 4, 4, 52, 2, 12);
    assert_int_equal(cell(&pat, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).why, NT_CELL_OK);
    pat.version = V2266;
    assert_int_equal(cell(&pat, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
}

/* NVLS_TREE NET latency 14 to 2.28.7, 20.9 from 2.28.9 (v2.28.7-1 / v2.28.9-1 tuning.cc:165):
 * 2 nodes x 8, latency = 0 + hwLat[NVLINK][NVLS_TREE][Simple] 25 + 2 log2i(2) x interLat (:395). */
static void test_nvls_tree_net_latency(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2287, 16, 2, 90, 16, 40);
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).lat_us, 25 + 2 * 14.0,
                       1e-4);
    in.version = V2289;
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).lat_us, 25 + 2 * 20.9,
                       1e-3);
    /* bandwidth (:290-299): intra 40 x .85 x 15/16 x 2 = 63.75, inter 40 x 2 (2 nodes) = 80,
     * perChMaxNVLSTreeBw Hopper N2 57.7 (:196) -> 57.7 x 16 x 16/30 */
    in.graph[NT_ALGO_NVLS].bw_inter_GBps = 40;
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).bw_GBps,
                       57.7 * 16 * 16.0 / 30.0, 1e-2);
    /* NVLS_TREE needs more than one node (:466) */
    nt_model_input_t one = comm(V2289, 8, 1, 90, 16, 40);
    assert_int_equal(cell(&one, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).why, NT_CELL_ALGO_DISABLED);
    assert_float_equal(cell(&one, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).bw_GBps, 0, 0);
}

/* Blackwell perChMaxRingLL128Bws (v2.28.9-1:179 {2*36.7, 34.6, 2*36.7}, v2.29.3-1:179
 * {34.5, 34.6, 34.5}, v2.29.7-1:180 {40, 40, 40}); Ring LL128 = min(0.92 busBw, nCh x cap) (:305).
 * 1 node x 8 SM100, 8 channels of 40: 0.92 x 320 = 294.4; AllReduce x 8/14. */
static void test_blackwell_ring_ll128(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 8, 1, 100, 8, 40);
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 294.4 * 8 / 14, 1e-2);
    in.version = V2293;
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 8 * 34.5 * 8 / 14,
                       1e-2);
    in.version = V2297;
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 294.4 * 8 / 14, 1e-2);
    /* 2 nodes: N2 column 34.6 in 2.28.9 and 2.29.3, 40 in 2.29.7; bwIntra up to 2 nodes (:284) */
    nt_model_input_t two = comm(V2289, 16, 2, 100, 8, 40);
    assert_float_equal(cell(&two, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 8 * 34.6 * 16 / 30,
                       1e-2);
    two.version = V2297;
    assert_float_equal(cell(&two, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 294.4 * 16 / 30, 1e-2);
}

static nt_model_cell_t cell_env(const nt_model_input_t *in, const char *algo, int c, int a, int p)
{
    nt_model_env_filter_t env;
    assert_int_equal(nt_model_env_filter_parse(in->version, algo, NULL, &env, NULL, 0), NT_OK);
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(in, &env, &t), NT_OK);
    return t.cell[c][a][p];
}

/* 2.21-2.23 against 2.24 (v2.22.3-1 and v2.23.4-1 tuning.cc, docs/tuner-model.md): 6
 * algorithms, Tree Simple latency 28 us per hop, Ring LL128 x0.7 at one rank per node, NVLS
 * AllGather x5/6, PAT x.85, the CollNet override and the Ring fallback. */
static void test_221_to_223(void **state)
{
    (void)state;
    /* 1 node x 8, NVLink: Tree AllReduce Simple 0 + 2 x 7 x 28 (v2.22.3-1:56, :67, :252-253);
     * 2.23: 8.4 + 2 x 7 x 4.0 */
    nt_model_input_t in = comm(V2223, 8, 1, 90, 2, 20);
    assert_float_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).lat_us, 392.0, 1e-3);
    assert_int_equal(cell(&in, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
    /* NVLS AllGather: min(20, 20) x 2 channels, x 5/6 to 2.22 (:211-216), none from 2.23 */
    assert_float_equal(cell(&in, AG, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps, 40.0 * 5 / 6, 1e-3);
    in.version = V2234;
    assert_float_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).lat_us, 64.4, 1e-3);
    assert_float_equal(cell(&in, AG, NT_ALGO_NVLS, NT_PROTO_SIMPLE).bw_GBps, 40.0, 1e-3);
    /* 4 nodes x 1: PAT AllGather 2 x 20 x .85 in 2.23 (v2.23.4-1:193), x .75 in 2.24 */
    nt_model_input_t pat = comm(V2234, 4, 4, 90, 2, 20);
    assert_float_equal(cell(&pat, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).bw_GBps, 34.0, 1e-3);
    pat.version = V2243;
    assert_float_equal(cell(&pat, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).bw_GBps, 30.0, 1e-3);
    /* 2 nodes x 1: Ring LL128 min(2 x 20 x 0.7, 2 x 36.7) in 2.22 (:179), x .92 in 2.23 */
    nt_model_input_t two = comm(V2223, 2, 2, 90, 2, 20);
    assert_float_equal(cell(&two, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 28.0, 1e-3);
    two.version = V2234;
    assert_float_equal(cell(&two, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 36.8, 1e-3);
    /* NCCL_ALGO naming only CollNet, CollNet off: Ring and Tree come back (v2.23.4-1:310-314);
     * 2.24 leaves AllReduce with nothing */
    nt_model_input_t cn = comm(V2234, 8, 1, 90, 2, 20);
    assert_true(cell_env(&cn, "CollNetDirect", AR, NT_ALGO_RING, NT_PROTO_SIMPLE).bw_GBps > 0);
    assert_true(cell_env(&cn, "CollNetDirect", AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).bw_GBps > 0);
    cn.version = V2243;
    assert_int_equal(cell_env(&cn, "CollNetDirect", AR, NT_ALGO_RING, NT_PROTO_SIMPLE).why,
                     NT_CELL_ENV);
    /* NCCL_ALGO=Tree leaves Broadcast nothing: the Ring fallback (v2.22.3-1:321-335) gives back
     * the enabled protocols' bandwidth in 2.22, every protocol's in 2.21 (no :318); LL128 is
     * gated here (intra PHB) */
    nt_model_input_t bc = comm(V2223, 8, 1, 90, 2, 20);
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        bc.graph[a].type_intra = NT_PATH_PHB;
    nt_model_cell_t s = cell_env(&bc, "Tree", BC, NT_ALGO_RING, NT_PROTO_SIMPLE);
    assert_int_equal(s.why, NT_CELL_OK);
    assert_float_equal(s.bw_GBps, 40.0 * 8 / 8, 1e-3);
    assert_float_equal(cell_env(&bc, "Tree", BC, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 0, 0);
    bc.version = V2215;
    assert_true(cell_env(&bc, "Tree", BC, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps > 0);
    bc.version = V2243;
    assert_float_equal(cell_env(&bc, "Tree", BC, NT_ALGO_RING, NT_PROTO_SIMPLE).bw_GBps, 0, 0);
}

/* 2.30: Blackwell N4 NVLS_TREE cap 43.8 -> 80.0 (v2.30.4-1 tuning.cc:205), LL128 with mixed
 * compute capabilities from SM90 (:501), and 2.30.7's CollNetChain support rule
 * (v2.30.7-1:507). */
static void test_230(void **state)
{
    (void)state;
    /* 4 nodes x 8 SM100, NVLS graph 8 channels of 1000 GB/s: the cap binds; x 32/62 */
    nt_model_input_t in = comm(V2297, 32, 4, 100, 8, 1000);
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).bw_GBps,
                       8 * 43.8 * 32 / 62, 1e-2);
    in.version = V2304;
    assert_float_equal(cell(&in, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE).bw_GBps,
                       8 * 80.0 * 32 / 62, 1e-2);
    nt_model_input_t mixed = comm(V2297, 8, 1, 90, 8, 20);
    mixed.max_sm = 100;
    assert_int_equal(cell(&mixed, AR, NT_ALGO_RING, NT_PROTO_LL128).why, NT_CELL_PROTO_DISABLED);
    mixed.version = V2304;
    assert_int_equal(cell(&mixed, AR, NT_ALGO_RING, NT_PROTO_LL128).why, NT_CELL_OK);
    mixed.min_sm = 80;
    assert_int_equal(cell(&mixed, AR, NT_ALGO_RING, NT_PROTO_LL128).why, NT_CELL_PROTO_DISABLED);
    nt_model_input_t cn = comm(V2304, 16, 2, 90, 4, 20);
    cn.collnet_enable = 1;
    cn.collnet_chain_support = 0;
    assert_int_equal(cell(&cn, AR, NT_ALGO_COLLNET_CHAIN, NT_PROTO_SIMPLE).why, NT_CELL_OK);
    cn.version = V2307;
    assert_int_equal(cell(&cn, AR, NT_ALGO_COLLNET_CHAIN, NT_PROTO_SIMPLE).why,
                     NT_CELL_ALGO_DISABLED);
    cn.collnet_chain_support = 1;
    assert_int_equal(cell(&cn, AR, NT_ALGO_COLLNET_CHAIN, NT_PROTO_SIMPLE).why, NT_CELL_OK);
}

/* The reader on the printer's 2.21 (two blocks of 3 algorithms) and 2.30.7 (three blocks)
 * layouts: every printed cell reads back to NCCL's %.1f. No public NCCL 2.21-2.23 or 2.30 table
 * was found (docs/tuner-model.md); the format strings are unchanged (v2.30.7-1 tuning.cc:548-580
 * against v2.29.7-1:505-535, only re-wrapped). */
static void test_print_read_221_230(void **state)
{
    (void)state;
    const int versions[] = {V2215, V2307};
    for (int i = 0; i < 2; i++) {
        nt_model_input_t in = comm(versions[i], 16, 2, 90, 4, 20);
        nt_model_table_t m;
        assert_int_equal(nt_model_compute(&in, NULL, &m), NT_OK);
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        nt_model_print_table(mem, &m, "host:1:1 [0] NCCL INFO");
        fclose(mem);
        nt_nccl_table_t t;
        assert_int_equal(nt_nccl_table_parse(buf, len, &t, NULL, 0), NT_OK);
        assert_int_equal(t.nblocks, i == 0 ? 2 : 3);
        assert_int_equal(t.ncells, NT_NUM_COLLS * (i == 0 ? 6 : 7) * NT_NUM_PROTOS);
        for (int c = 0; c < NT_NUM_COLLS; c++)
            for (int a = 0; a < (i == 0 ? 6 : 7); a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++) {
                    assert_true(t.has[c][a][p]);
                    assert_float_equal(t.bw_GBps[c][a][p], m.cell[c][a][p].bw_GBps, 0.051);
                    assert_float_equal(t.lat_us[c][a][p], m.cell[c][a][p].lat_us, 0.051);
                }
        free(buf);
    }
}

/* The 2.29 NVLS_TREE correction (v2.29.7-1 tuning.cc:596): SM100+ on x86, AllReduce, the Tree
 * factor by log2(nBytes/64): 64 KiB -> index 10 -> Simple .6 (:581-585). Absent in 2.28.9. */
static void test_nvls_tree_correction_229(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2297, 16, 2, 100, 16, 40);
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
    nt_model_time_t tm;
    size_t n = 64 << 10;
    double us = nt_model_time_us(&in, &t, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE, n, 1, &tm);
    assert_float_equal(tm.tree_correction, 0.6, 1e-6);
    const nt_model_cell_t *c = &t.cell[AR][NT_ALGO_NVLS_TREE][NT_PROTO_SIMPLE];
    assert_float_equal(us, c->lat_us + n / (1000.0 * c->bw_GBps * 0.6), 1e-3);
    in.version = V2289;
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
    nt_model_time_us(&in, &t, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE, n, 1, &tm);
    assert_float_equal(tm.tree_correction, 1.0, 0);
    in.version = V2297;
    in.cpu_arch = NT_CPU_ARCH_ARM; /* not on Arm */
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
    nt_model_time_us(&in, &t, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE, n, 1, &tm);
    assert_float_equal(tm.tree_correction, 1.0, 0);
}

/* Tree correction (:592) and the Ring Simple plateau (:593-596) are per-call factors, not in the
 * table: Tree AllReduce LL at 4 KiB -> index 6 -> .7; Ring Simple multi-node AllReduce latency
 * x1.4 (SM80+) once nBytes / (comm nChannels x nRanks) >= 64, x1.9 below SM80. */
static void test_per_call_factors(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 16, 2, 90, 4, 20);
    in.comm_nchannels = 8;
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
    nt_model_time_t tm;
    nt_model_time_us(&in, &t, AR, NT_ALGO_TREE, NT_PROTO_LL, 4096, 1, &tm);
    assert_float_equal(tm.tree_correction, 0.7, 1e-6);
    /* 8 channels x 16 ranks x 64 = 8192 B: below no plateau, at it x1.4 */
    double lat = t.cell[AR][NT_ALGO_RING][NT_PROTO_SIMPLE].lat_us,
           bw = t.cell[AR][NT_ALGO_RING][NT_PROTO_SIMPLE].bw_GBps;
    assert_float_equal(nt_model_time_us(&in, &t, AR, NT_ALGO_RING, NT_PROTO_SIMPLE, 8191, 1, &tm),
                       lat + 8191 / (1000 * bw), 1e-3);
    assert_float_equal(tm.plateau, 1.0, 0);
    assert_float_equal(nt_model_time_us(&in, &t, AR, NT_ALGO_RING, NT_PROTO_SIMPLE, 8192, 1, &tm),
                       lat * 1.4 + 8192 / (1000 * bw), 1e-3);
    in.min_sm = in.max_sm = 70;
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
    nt_model_time_us(&in, &t, AR, NT_ALGO_RING, NT_PROTO_SIMPLE, 8192, 1, &tm);
    assert_float_equal(tm.plateau, 1.9, 1e-6);
    /* aggregation: Ring pays numPipeOps latencies, Tree DIVUP(numPipeOps, 9) (:598) */
    nt_model_time_us(&in, &t, AR, NT_ALGO_RING, NT_PROTO_LL, 1024, 10, &tm);
    assert_int_equal(tm.lat_count, 10);
    nt_model_time_us(&in, &t, AR, NT_ALGO_TREE, NT_PROTO_LL, 1024, 10, &tm);
    assert_int_equal(tm.lat_count, 2);
    /* a disabled cell has no time (:588-590) */
    assert_float_equal(nt_model_time_us(&in, &t, BC, NT_ALGO_TREE, NT_PROTO_LL, 1024, 1, NULL),
                       -1.0, 0);
}

/* llMaxBws (:252-254, :169-174): one node -> the GPU row (Hopper 141); across nodes the CPU row:
 * Intel 39.0 (2 nodes) / 20.4 (3+ nodes: scale index 2, :250), AMD 22.5 / 19.0.
 * Ring LL = min(llMaxBw, busBw/2) (:304), AllReduce x nRanks/nsteps. 8 channels of 40. */
static void test_ll_max_bw_by_cpu(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 16, 2, 90, 8, 40);
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 39.0 * 16 / 30, 1e-3);
    in.cpu_vendor = NT_CPU_VENDOR_AMD;
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 22.5 * 16 / 30, 1e-3);
    nt_model_input_t three = comm(V2289, 24, 3, 90, 8, 40);
    assert_float_equal(cell(&three, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 20.4 * 24 / 46, 1e-3);
    three.cpu_vendor = NT_CPU_VENDOR_AMD;
    assert_float_equal(cell(&three, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 19.0 * 24 / 46, 1e-3);
    nt_model_input_t one = comm(V2289, 8, 1, 90, 8, 40);
    assert_float_equal(cell(&one, AR, NT_ALGO_RING, NT_PROTO_LL).bw_GBps, 141.0 * 8 / 14, 1e-3);
}

/* bwIntra up to 2 nodes, bwInter beyond (:284); CollNet always bwIntra. */
static void test_bw_intra_inter(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 24, 3, 90, 4, 40);
    in.graph[NT_ALGO_RING].bw_inter_GBps = 10;
    in.graph[NT_ALGO_COLLNET_CHAIN].bw_inter_GBps = 10;
    in.collnet_enable = 1;
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_SIMPLE).bw_GBps, 4 * 10 * 24.0 / 46,
                       1e-3);
    /* CollNetChain Simple: 4 x 40 (bwIntra), x .5 (:349) */
    assert_float_equal(cell(&in, AR, NT_ALGO_COLLNET_CHAIN, NT_PROTO_SIMPLE).bw_GBps, 4 * 40 * 0.5,
                       1e-3);
    in.nnodes = 2;
    in.nranks = 16;
    in.ppn = 8;
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_SIMPLE).bw_GBps, 4 * 40 * 16.0 / 30,
                       1e-3);
}

/* Latency traps: Ring AllReduce = base + (nsteps - nInter) max(intraLat, netOverhead) + nInter
 * interLat (:371-379); with one GPU per node interLat is Tree's NET row (:356); Tree AllReduce
 * uses the integer log2 (:384); POWER Tree/Simple PCI latency = Ring's (:260). */
static void test_latencies(void **state)
{
    (void)state;
    /* 2 nodes x 1: Ring AllReduce LL = 6.6 + 0 + 2 x 5.0 (Tree NET LL, :163) = 16.6 */
    nt_model_input_t in = comm(V2289, 2, 2, 90, 2, 12);
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL).lat_us, 16.6, 1e-4);
    /* 2 nodes x 8: nsteps 30, nInter 2: 6.6 + 28 x max(0.6, 1.0 Intel) + 2 x 2.7 = 40.0;
     * AMD netOverhead 2 (:217): 6.6 + 56 + 5.4 = 68.0; Simple netOverhead x3 (:375) */
    nt_model_input_t r = comm(V2289, 16, 2, 90, 2, 12);
    assert_float_equal(cell(&r, AR, NT_ALGO_RING, NT_PROTO_LL).lat_us, 6.6 + 28 * 1.0 + 2 * 2.7,
                       1e-3);
    assert_float_equal(cell(&r, AR, NT_ALGO_RING, NT_PROTO_SIMPLE).lat_us,
                       8.4 + 28 * 3.4 + 2 * 14.0, 1e-3);
    r.cpu_vendor = NT_CPU_VENDOR_AMD;
    assert_float_equal(cell(&r, AR, NT_ALGO_RING, NT_PROTO_LL).lat_us, 6.6 + 28 * 2.0 + 2 * 2.7,
                       1e-3);
    assert_float_equal(cell(&r, AR, NT_ALGO_RING, NT_PROTO_SIMPLE).lat_us,
                       8.4 + 28 * 6.0 + 2 * 14.0, 1e-3);
    /* Tree AllReduce LL, 3 nodes x 8: log2i(3) = 1: 6.8 + 2 (7 x 0.6 + 1 x 5.0) = 25.2 */
    nt_model_input_t t3 = comm(V2289, 24, 3, 90, 2, 12);
    assert_float_equal(cell(&t3, AR, NT_ALGO_TREE, NT_PROTO_LL).lat_us, 25.2, 1e-3);
    /* POWER: 1 node x 4 over PCI, Tree Simple 8.4 + 2 x 3 x 4.0 -> 8.4 + 2 x 3 x 5.7 */
    nt_model_input_t pw = comm(V2289, 4, 1, 80, 2, 12);
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        pw.graph[a].type_intra = NT_PATH_PHB;
    assert_float_equal(cell(&pw, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).lat_us, 8.4 + 2 * 3 * 4.0,
                       1e-3);
    pw.cpu_arch = NT_CPU_ARCH_POWER;
    assert_float_equal(cell(&pw, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).lat_us, 8.4 + 2 * 3 * 5.7,
                       1e-3);
}

/* Tree bandwidth (:306-309): AllReduce min(.92 busBw, nCh x perChMaxTreeBw), LL / 3.8, LL128
 * x 120/128 across nodes (7/9 on one), x .85 with pattern TREE; x .5 to algorithm bandwidth. */
static void test_tree_bw(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 16, 2, 90, 2, 20);
    in.graph[NT_ALGO_TREE].pattern = 1;
    /* busBw 40: Simple min(36.8, 2 x 41.4) = 36.8 -> 18.4 */
    assert_float_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).bw_GBps, 18.4, 1e-3);
    /* LL: min(36.8 / 3.8, 39.0) -> 4.842 */
    assert_float_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_LL).bw_GBps, 36.8 / 3.8 / 2, 1e-3);
    /* LL128: min(36.8 x 120/128, 2 x 36.7) = 34.5 -> 17.25 */
    assert_float_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_LL128).bw_GBps, 36.8 * 120 / 128 / 2,
                       1e-3);
    in.graph[NT_ALGO_TREE].pattern = 3;
    assert_float_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).bw_GBps, 18.4 * .85, 1e-3);
}

/* LL128 gating at its default (:480-494): SM90 typeInter PXN allowed since 2.27.5 (v2.27.3-1:460
 * allowed only up to P2C); the CUDA 11.8 exception: SM90, Ring AllReduce, 2 ranks; typeIntra
 * beyond NVB off; NCCL_PROTO forcing LL128 skips the gate. */
static void test_ll128_gating(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2277, 16, 2, 90, 2, 20);
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        in.graph[a].type_inter = NT_PATH_PXN;
    assert_true(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps > 0);
    in.version = V2273;
    assert_int_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL128).why, NT_CELL_PROTO_DISABLED);
    in.min_sm = in.max_sm = 80; /* below SM90: PXB at most, in every version */
    in.version = V2289;
    assert_float_equal(cell(&in, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 0, 0);

    nt_model_input_t c = comm(V2289, 2, 1, 90, 2, 20);
    c.cuda_runtime = 11080;
    assert_int_equal(cell(&c, AR, NT_ALGO_RING, NT_PROTO_LL128).why, NT_CELL_PROTO_DISABLED);
    assert_true(cell(&c, AG, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps > 0);
    assert_true(cell(&c, AR, NT_ALGO_TREE, NT_PROTO_LL128).bw_GBps > 0);
    c.cuda_runtime = 12090;
    assert_true(cell(&c, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps > 0);

    nt_model_input_t p = comm(V2289, 4, 1, 90, 2, 20);
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        p.graph[a].type_intra = NT_PATH_PHB;
    assert_float_equal(cell(&p, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 0, 0);
    nt_model_env_filter_t env;
    assert_int_equal(nt_model_env_filter_parse(V2289, NULL, "^LL", &env, NULL, 0), NT_OK);
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(&p, &env, &t), NT_OK);
    assert_true(t.cell[AR][NT_ALGO_RING][NT_PROTO_LL128].bw_GBps > 0); /* forced: no gate */
    assert_int_equal(t.cell[AR][NT_ALGO_RING][NT_PROTO_LL].why, NT_CELL_ENV);
    /* 2.14: LL128 only on SM70/SM80 with typeIntra <= NVL (v2.14.3-1 tuning.cc:216-217) */
    nt_model_input_t o = comm(V2147, 4, 1, 90, 2, 20);
    assert_float_equal(cell(&o, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps, 0, 0);
    o.min_sm = o.max_sm = 80;
    assert_true(cell(&o, AR, NT_ALGO_RING, NT_PROTO_LL128).bw_GBps > 0);
}

/* PAT (:201-209, :396-400): 1 GPU per node, host network; latency 8 + log2i(nNodes) interLat/3.5
 * + 2.8 nRanks; bandwidth x .75 on the Tree graph. 2.27 sets 8 + ... with hwLat[NET][PAT] = 0
 * (v2.27.7-1 tuning.cc:374, no PAT row in :143-156), 2.28 adds to baseLat 8 with NET PAT 14. */
static void test_pat(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 4, 4, 90, 2, 12);
    nt_model_cell_t c = cell(&in, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE);
    assert_float_equal(c.lat_us, 8 + 2 * 14.0 / 3.5 + 4 * 2.8, 1e-3);
    assert_float_equal(c.bw_GBps, 2 * 12 * .75, 1e-4);
    in.version = V2277;
    assert_float_equal(cell(&in, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).lat_us,
                       8 + 2 * 14.0 / 3.5 + 4 * 2.8, 1e-3);
    /* forced with 2 GPUs per node: 2.27 interLat is PAT's own NET row (0), 2.28 14 */
    nt_model_input_t f = comm(V2277, 8, 4, 90, 2, 12);
    f.env_pat_enable = 1;
    assert_float_equal(cell(&f, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).lat_us, 8 + 8 * 2.8, 1e-3);
    f.version = V2289;
    assert_float_equal(cell(&f, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).lat_us,
                       8 + 2 * 14.0 / 3.5 + 8 * 2.8, 1e-3);
    /* not with more than one GPU per node by default, nor on a device network (:206-207) */
    f.env_pat_enable = -2;
    assert_int_equal(cell(&f, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
    in.version = V2289;
    in.net_device_host = 0;
    assert_int_equal(cell(&in, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
}

/* Coverage (:273-282): Broadcast/Reduce Ring only; AllReduce no PAT; NVLS Simple only; 2.14
 * AllReduce every algorithm, the rest Ring only (v2.14.3-1 tuning.cc:123). */
static void test_coverage(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 8, 1, 90, 2, 20);
    assert_int_equal(cell(&in, BC, NT_ALGO_TREE, NT_PROTO_LL).why, NT_CELL_NOT_COVERED);
    assert_int_equal(cell(&in, AR, NT_ALGO_PAT, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
    assert_int_equal(cell(&in, AR, NT_ALGO_NVLS, NT_PROTO_LL).why, NT_CELL_NOT_COVERED);
    assert_int_equal(cell(&in, AG, NT_ALGO_TREE, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
    assert_int_equal(cell(&in, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE).why, NT_CELL_OK);
    /* CollNet off (no collnetEnable) keeps its latency, bandwidth 0 (:468-474) */
    nt_model_cell_t cn = cell(&in, AR, NT_ALGO_COLLNET_CHAIN, NT_PROTO_SIMPLE);
    assert_int_equal(cn.why, NT_CELL_ALGO_DISABLED);
    assert_true(cn.lat_us > 0);
    nt_model_input_t o = comm(V2147, 8, 1, 80, 2, 20);
    assert_int_equal(cell(&o, AG, NT_ALGO_RING, NT_PROTO_SIMPLE).why, NT_CELL_OK);
    assert_int_equal(cell(&o, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE).why, NT_CELL_NOT_COVERED);
}

/* Layer 2: NCCL drops per call (v2.28.9-1 enqueue.cc:384, :1802, :1805; device.h:544-558). */
static void test_call_allows(void **state)
{
    (void)state;
    assert_true(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                     NT_REDOP_SUM));
    assert_true(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_BFLOAT16,
                                     NT_REDOP_SUM));
    assert_true(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_BFLOAT16,
                                     NT_REDOP_MAX));
    assert_false(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                      NT_REDOP_MAX));
    assert_false(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                      NT_REDOP_AVG));
    assert_false(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS_TREE, NT_PROTO_SIMPLE,
                                      NT_DTYPE_BFLOAT16, NT_REDOP_AVG));
    assert_false(nt_model_call_allows(V2289, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_INT8,
                                      NT_REDOP_SUM));
    assert_false(nt_model_call_allows(V2289, RS, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                      NT_REDOP_PROD));
    assert_true(nt_model_call_allows(V2289, AG, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_INT8,
                                     NT_REDOP_NONE));
    assert_false(nt_model_call_allows(V2289, RS, NT_ALGO_PAT, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                      NT_REDOP_AVG));
    assert_true(nt_model_call_allows(V2289, RS, NT_ALGO_PAT, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                     NT_REDOP_SUM));
    assert_true(nt_model_call_allows(V2289, AG, NT_ALGO_PAT, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                     NT_REDOP_NONE));
    assert_true(
        nt_model_call_allows(V2289, AR, NT_ALGO_RING, NT_PROTO_LL, NT_DTYPE_FLOAT32, NT_REDOP_AVG));
    assert_false(nt_model_call_allows(V2147, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                      NT_REDOP_SUM));
}

/* All three layers for one call (nt_model_eligible): the tuner never writes a rule on an IGNORE
 * cell for float/bf16 sum. 1 node x 8 H100 with NVLS (16 channels), NCCL_ALGO=^Tree. */
static void test_eligible(void **state)
{
    (void)state;
    nt_model_input_t in = comm(V2289, 8, 1, 90, 16, 40);
    nt_model_env_filter_t env;
    assert_int_equal(nt_model_env_filter_parse(V2289, "^Tree", NULL, &env, NULL, 0), NT_OK);
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(&in, &env, &t), NT_OK);
    assert_true(nt_model_eligible(&in, &t, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_BFLOAT16,
                                  NT_REDOP_SUM));
    assert_false(nt_model_eligible(&in, &t, AR, NT_ALGO_NVLS, NT_PROTO_SIMPLE, NT_DTYPE_BFLOAT16,
                                   NT_REDOP_AVG));
    assert_false(nt_model_eligible(&in, &t, AR, NT_ALGO_TREE, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                   NT_REDOP_SUM));
    assert_true(nt_model_eligible(&in, &t, AR, NT_ALGO_RING, NT_PROTO_LL128, NT_DTYPE_FLOAT32,
                                  NT_REDOP_SUM));
    assert_false(
        nt_model_eligible(&in, &t, AR, NT_ALGO_NVLS, NT_PROTO_LL, NT_DTYPE_FLOAT32, NT_REDOP_SUM));
    assert_false(nt_model_eligible(&in, &t, BC, NT_ALGO_TREE, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                   NT_REDOP_NONE));
    /* CollNetDirect at most 8 local ranks from 2.23 (v2.23.4-1 enqueue.cc:1793), not before */
    nt_model_input_t cd = comm(V2234, 32, 2, 90, 4, 20);
    cd.collnet_enable = 1;
    cd.nvs_count = 1;
    assert_int_equal(nt_model_compute(&cd, NULL, &t), NT_OK);
    assert_true(t.cell[AR][NT_ALGO_COLLNET_DIRECT][NT_PROTO_SIMPLE].bw_GBps > 0);
    assert_false(nt_model_eligible(&cd, &t, AR, NT_ALGO_COLLNET_DIRECT, NT_PROTO_SIMPLE,
                                   NT_DTYPE_FLOAT32, NT_REDOP_SUM));
    cd.version = V2223;
    assert_int_equal(nt_model_compute(&cd, NULL, &t), NT_OK);
    assert_true(nt_model_eligible(&cd, &t, AR, NT_ALGO_COLLNET_DIRECT, NT_PROTO_SIMPLE,
                                  NT_DTYPE_FLOAT32, NT_REDOP_SUM));
    /* a one-rank communicator: Ring/Simple only (enqueue.cc:1792-1795) */
    nt_model_input_t one;
    assert_int_equal(nt_model_input_init(&one, V2289, 1, 1), NT_OK);
    assert_int_equal(nt_model_compute(&one, NULL, &t), NT_OK);
    assert_true(nt_model_eligible(&one, &t, AR, NT_ALGO_RING, NT_PROTO_SIMPLE, NT_DTYPE_FLOAT32,
                                  NT_REDOP_SUM));
    assert_false(
        nt_model_eligible(&one, &t, AR, NT_ALGO_RING, NT_PROTO_LL, NT_DTYPE_FLOAT32, NT_REDOP_SUM));
    /* ... whose table NCCL leaves empty but for the thread counts (tuning.cc:247) */
    assert_float_equal(t.cell[AR][NT_ALGO_RING][NT_PROTO_SIMPLE].lat_us, 0, 0);
    assert_int_equal(t.max_threads[NT_ALGO_TREE][NT_PROTO_SIMPLE], 512);
}

/* Layer 3: NCCL_ALGO / NCCL_PROTO as parseList() reads them (v2.28.9-1 tuning.cc:54-131; one
 * list before 2.24, unknown tokens ignored, v2.14.3-1 tuning.cc:34-51). */
static void test_env_filter(void **state)
{
    (void)state;
    nt_model_env_filter_t f;
    char err[256];
    assert_int_equal(nt_model_env_filter_parse(V2289, "Tree", NULL, &f, err, sizeof(err)), NT_OK);
    assert_int_equal(f.algo[AR][NT_ALGO_TREE], 1);
    assert_int_equal(f.algo[AR][NT_ALGO_RING], 0);
    assert_int_equal(f.proto[AR][NT_PROTO_LL128], 2);
    assert_int_equal(nt_model_env_filter_parse(V2289, "ring;allreduce:tree,collnetdirect", "^LL128",
                                               &f, err, sizeof(err)),
                     NT_OK);
    assert_int_equal(f.algo[BC][NT_ALGO_RING], 1);
    assert_int_equal(f.algo[BC][NT_ALGO_TREE], 0);
    assert_int_equal(f.algo[AR][NT_ALGO_RING], 0);
    assert_int_equal(f.algo[AR][NT_ALGO_COLLNET_DIRECT], 1);
    assert_int_equal(f.proto[AR][NT_PROTO_LL128], 0);
    assert_int_equal(f.proto[AR][NT_PROTO_LL], 1);
    assert_int_equal(nt_model_env_filter_parse(V2289, "ring;tree", NULL, &f, err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_non_null(strstr(err, "prefix"));
    assert_int_equal(nt_model_env_filter_parse(V2289, "ring,bogus", NULL, &f, err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_non_null(strstr(err, "bogus"));
    assert_int_equal(nt_model_env_filter_parse(V2289, "sendrecv:ring", NULL, &f, err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_int_equal(nt_model_env_filter_parse(V2147, "ring,bogus", NULL, &f, err, sizeof(err)),
                     NT_OK);
    assert_int_equal(f.algo[AR][NT_ALGO_RING], 1);
    assert_int_equal(f.algo[AR][NT_ALGO_TREE], 0);
    /* the filter lands in the table as NCCL applies it (:495-496) */
    nt_model_input_t in = comm(V2289, 16, 2, 90, 2, 20);
    assert_int_equal(nt_model_env_filter_parse(V2289, "Tree", NULL, &f, err, sizeof(err)), NT_OK);
    nt_model_table_t t;
    assert_int_equal(nt_model_compute(&in, &f, &t), NT_OK);
    assert_int_equal(t.cell[AR][NT_ALGO_RING][NT_PROTO_SIMPLE].why, NT_CELL_ENV);
    assert_float_equal(t.cell[AR][NT_ALGO_RING][NT_PROTO_SIMPLE].bw_GBps, 0, 0);
    assert_true(t.cell[AR][NT_ALGO_RING][NT_PROTO_SIMPLE].lat_us > 0);
    assert_true(t.cell[AR][NT_ALGO_TREE][NT_PROTO_SIMPLE].bw_GBps > 0);
}

/* A communicator beyond NT_MODEL_MAX_RANKS (a log's "nRanks 2147483647") is refused: NCCL's
 * int nsteps = 2 * (nRanks - 1) overflowed in the model (signed overflow, UB; gcc wrapped to a
 * negative step count and the cells came out with negative latencies). */
static void test_rank_limit(void **state)
{
    (void)state;
    nt_model_table_t t;
    nt_model_input_t in = comm(V2289, 2147483647, 1, 90, 16, 20);
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_ERR_INVALID);
    in = comm(V2289, 2147483647, 2147483647, 90, 16, 20);
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_ERR_INVALID);
    in = comm(V2147, NT_MODEL_MAX_RANKS + 1, 1 << 29, 90, 16, 20);
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_ERR_INVALID);
    in = comm(V2289, NT_MODEL_MAX_RANKS, 1, 90, 16, 20);
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
    in = comm(V2147, NT_MODEL_MAX_RANKS, NT_MODEL_MAX_RANKS, 90, 16, 20);
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_OK);
}

static void test_names_versions(void **state)
{
    (void)state;
    assert_int_equal(nt_nccllog_version_parse("2.28.9-1"), 22809);
    assert_int_equal(nt_nccllog_version_parse("2.29.7+cuda12.9"), 22907);
    assert_int_equal(nt_nccllog_version_parse("2.27"), 22700);
    assert_int_equal(nt_nccllog_version_parse("v2"), -1);
    assert_int_equal(nt_nccllog_version_parse(" 2.14.3 cuda"), 21403);
    assert_int_equal(nt_nccllog_version_parse("2.28x"), -1);
    assert_int_equal(nt_nccllog_version_parse("1.3.4"), -1);
    assert_int_equal(nt_nccllog_version_parse("2.100"), -1);
    assert_int_equal(nt_nccllog_version_parse("2."), -1);
    assert_int_equal(nt_nccllog_version_parse("2.28."), -1);
    assert_int_equal(nt_nccllog_version_parse(NULL), -1);
    assert_true(nt_model_version_supported(22809));
    assert_true(nt_model_version_supported(21403));
    assert_true(nt_model_version_supported(22105));
    assert_true(nt_model_version_supported(22304));
    assert_true(nt_model_version_supported(22403));
    assert_true(nt_model_version_supported(23003)); /* v2.30.3-1 = v2.30.4-1 */
    assert_true(nt_model_version_supported(23007));
    assert_false(nt_model_version_supported(21503));
    assert_false(nt_model_version_supported(22004));
    assert_false(nt_model_version_supported(23100));
    assert_int_equal(nt_model_algo_parse("nvls_tree"), NT_ALGO_NVLS_TREE);
    assert_int_equal(nt_model_algo_parse("CollNetDirect"), NT_ALGO_COLLNET_DIRECT);
    assert_int_equal(nt_model_proto_parse("simple"), NT_PROTO_SIMPLE);
    assert_int_equal(nt_model_coll_parse("allreduce"), AR);
    assert_int_equal(nt_model_path_parse("PXN"), NT_PATH_PXN);
    assert_string_equal(nt_model_algo_name(NT_ALGO_NVLS_TREE), "NVLSTree");
    assert_null(nt_model_algo_name(7));
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, V2289, 2, 3), NT_ERR_INVALID);
    nt_model_table_t t;
    assert_int_equal(nt_model_input_init(&in, 22004, 2, 1), NT_OK);
    assert_int_equal(nt_model_compute(&in, NULL, &t), NT_ERR_UNSUPPORTED);
}

/* The reader: hard-wrapped rows, cut cells, a missing "Algorithm" row. */
static void test_table_reader(void **state)
{
    (void)state;
    nt_nccl_table_t t;
    char err[256];
    assert_int_equal(
        nt_nccl_table_read(
            "tests/fixtures/nccl-tuning-tables/ultralytics-12905-4x-rtx3090-pcie-old9col-rows.log",
            &t, err, sizeof(err)),
        NT_OK);
    assert_int_equal(t.ncells, 45);
    /* AllReduce Ring LL128 "25.0/0.0" sits on the wrapped continuation line */
    assert_float_equal(t.lat_us[AR][NT_ALGO_RING][NT_PROTO_LL128], 25.0, 1e-6);
    assert_float_equal(t.lat_us[AR][NT_ALGO_COLLNET_DIRECT][NT_PROTO_SIMPLE], 29.7, 1e-5);
    assert_float_equal(t.lat_us[AR][NT_ALGO_TREE][NT_PROTO_SIMPLE], 168.0, 1e-5);
    assert_int_equal(
        nt_nccl_table_read(
            "tests/fixtures/nccl-tuning-tables/nccl-1519-2node-8xH100-nvswitch-8nic-block1.log", &t,
            err, sizeof(err)),
        NT_OK);
    assert_int_equal(t.layout, NT_NCCL_TABLE_BLOCKS);
    assert_int_equal(t.ncells, 40);
    assert_true(t.has[AR][NT_ALGO_RING][NT_PROTO_LL]);
    assert_false(t.has[AR][NT_ALGO_RING][NT_PROTO_LL128]); /* "79.4" was cut mid-cell */
    assert_float_equal(t.lat_us[AR][NT_ALGO_TREE][NT_PROTO_SIMPLE], 448.0, 1e-5);
    assert_int_equal(t.max_threads[NT_ALGO_COLLNET_DIRECT][NT_PROTO_SIMPLE], 640);
    /* a second communicator's table (block 0 again) is not mixed into the first; CRLF lines */
    const char *two =
        "h:1:1 [0] NCCL INFO   Algorithm   |   Tree  |   Ring  |   CollNetDirect |\r\n"
        "h:1:1 [0] NCCL INFO     AllReduce |    16.8/   0.5 |    31.0/   0.0 |\r\n"
        "h:1:1 [0] NCCL INFO   Algorithm   |   Tree  |   Ring  |   CollNetDirect |\r\n"
        "h:1:1 [0] NCCL INFO     AllReduce |    99.9/   9.9 |    31.0/   0.0 |    7.0/   1.0 |\r\n";
    assert_int_equal(nt_nccl_table_parse(two, strlen(two), &t, err, sizeof(err)), NT_OK);
    assert_int_equal(t.ncells, 2);
    assert_float_equal(t.lat_us[AR][NT_ALGO_TREE][NT_PROTO_LL], 16.8, 1e-5);
    assert_false(t.has[AR][NT_ALGO_TREE][NT_PROTO_SIMPLE]);
    /* NCCL's Func/Proto/Algo matrix (0/1/2 flags, function rows with '|') is not the tuning
     * table: alone it is no table; before a table it does not end that table */
    assert_int_equal(
        nt_nccl_table_read(
            "tests/fixtures/nccl-tests-logs/allreduce-2node-1xH100-roce-ring-single-nic.log", &t,
            err, sizeof(err)),
        NT_ERR_NOT_FOUND);
    const char *matrix =
        "h:1:1 [0] NCCL INFO Enabled NCCL Func/Proto/Algo Matrix:\n"
        "     Function |       LL     LL128    Simple   |          Tree           Ring\n"
        "    AllReduce |        1         2         1   |             0              1\n"
        "\n"
        "h:1:1 [0] NCCL INFO   Algorithm   |   Tree  |   Ring  |   CollNetDirect |\n"
        "h:1:1 [0] NCCL INFO     AllReduce |    16.8/   0.5 |    31.0/   0.0 |\n";
    assert_int_equal(nt_nccl_table_parse(matrix, strlen(matrix), &t, err, sizeof(err)), NT_OK);
    assert_int_equal(t.layout, NT_NCCL_TABLE_BLOCKS);
    assert_int_equal(t.ncells, 2);
    assert_float_equal(t.lat_us[AR][NT_ALGO_TREE][NT_PROTO_LL], 16.8, 1e-5);
    assert_int_equal(nt_nccl_table_parse("NCCL INFO Init COMPLETE\n", 24, &t, err, sizeof(err)),
                     NT_ERR_NOT_FOUND);
    assert_non_null(strstr(err, "NCCL_DEBUG_SUBSYS=TUNING"));
    assert_int_equal(
        nt_nccl_table_read("tests/fixtures/nccl-tuning-tables/absent.log", &t, err, sizeof(err)),
        NT_ERR_NOT_FOUND);
}

/* The reader on damaged logs (bytes changed, lines cut, at random with a fixed seed): it returns
 * a table or NOT_FOUND, never more cells than NCCL prints, and the undamaged prefix's cells. */
static void test_table_reader_damaged(void **state)
{
    (void)state;
    const char *fix = "tests/fixtures/nccl-tuning-tables/"
                      "repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log";
    FILE *f = fopen(fix, "rb");
    assert_non_null(f);
    static char orig[1 << 16], buf[1 << 16];
    size_t n = fread(orig, 1, sizeof(orig), f);
    fclose(f);
    unsigned long long x = 42;
    static const char junk[] = "|/ .0123456789\nABCxyz";
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, orig, n);
        size_t len = n;
        int k = 1 + (int)(x % 8);
        for (int j = 0; j < k; j++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t pos = (size_t)(x >> 33) % len;
            buf[pos] = junk[(x >> 20) % (sizeof(junk) - 1)];
        }
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        if (x & 1)
            len = (size_t)(x >> 33) % len;
        nt_nccl_table_t t;
        nt_status_t rc = nt_nccl_table_parse(buf, len, &t, NULL, 0);
        assert_true(rc == NT_OK || rc == NT_ERR_NOT_FOUND);
        assert_true(t.ncells >= 0 && t.ncells <= NT_NUM_COLLS * NT_NUM_ALGOS * NT_NUM_PROTOS);
    }
}

/* The printer: the model's 2.29.7 table in NCCL's layout equals the fixture's table lines. */
static void test_print_layout(void **state)
{
    (void)state;
    const char *fix = "tests/fixtures/nccl-tuning-tables/"
                      "repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log";
    nt_nccl_table_t t;
    assert_int_equal(nt_nccl_table_read(fix, &t, NULL, 0), NT_OK);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, t.version, 2, 2), NT_OK);
    nt_model_fit_t fit;
    nt_model_table_t m;
    assert_int_equal(nt_model_fit_table(&in, &t, NULL, &m, &fit), NT_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    nt_model_print_table(mem, &m, NULL);
    fclose(mem);
    /* the fixture's lines after "NCCL INFO " for the 24 table lines */
    FILE *f = fopen(fix, "r");
    assert_non_null(f);
    char line[2048];
    size_t off = 0;
    int compared = 0;
    while (fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "NCCL INFO ");
        if (!p)
            continue;
        p += strlen("NCCL INFO ");
        if (!strstr(p, " |"))
            continue;
        if (strstr(p, "Bytes ->"))
            continue;
        size_t n = strlen(p);
        assert_true(off + n <= len);
        assert_memory_equal(buf + off, p, n);
        off += n;
        compared++;
    }
    fclose(f);
    assert_int_equal(compared, 24);
    assert_int_equal(off, len);
    free(buf);

    /* 2.14's row layout (v2.14.3-1 tuning.cc:224-249) against the transformers-20438 lines
     * (header, Max NThreads, Broadcast, Reduce, AllGather; the rest of its table is cut) */
    const char *fix14 =
        "tests/fixtures/nccl-tuning-tables/transformers-20438-2gpu-pcie-phb-12col.log";
    assert_int_equal(nt_nccl_table_read(fix14, &t, NULL, 0), NT_OK);
    assert_int_equal(nt_model_input_init(&in, 21403, 2, 1), NT_OK);
    nt_model_graph_t *ring = &in.graph[NT_ALGO_RING], *tree = &in.graph[NT_ALGO_TREE];
    ring->nchannels = tree->nchannels = 2;
    ring->bw_intra_GBps = ring->bw_inter_GBps = 12;
    tree->bw_intra_GBps = tree->bw_inter_GBps = 22;
    ring->type_intra = tree->type_intra = NT_PATH_PHB;
    ring->type_inter = tree->type_inter = NT_PATH_PIX;
    assert_int_equal(nt_model_compute(&in, NULL, &m), NT_OK);
    mem = open_memstream(&buf, &len);
    nt_model_print_table(mem, &m, NULL);
    fclose(mem);
    f = fopen(fix14, "r");
    assert_non_null(f);
    off = 0;
    compared = 0;
    while (fgets(line, sizeof(line), f)) {
        char *p = strstr(line, "NCCL INFO ");
        if (!p || !strstr(p, " |"))
            continue;
        p += strlen("NCCL INFO ");
        size_t n = strlen(p);
        assert_true(off + n <= len);
        assert_memory_equal(buf + off, p, n);
        off += n;
        compared++;
    }
    fclose(f);
    assert_int_equal(compared, 5);
    free(buf);
}

/* --print-model --format json: model and NCCL side by side, the largest difference, facts. */
static void test_print_json(void **state)
{
    (void)state;
    nt_nccl_table_t t;
    assert_int_equal(
        nt_nccl_table_read(
            "tests/fixtures/nccl-tuning-tables/transformers-20438-2gpu-pcie-phb-12col.log", &t,
            NULL, 0),
        NT_OK);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, 21403, 2, 1), NT_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    nt_model_fit_t fit;
    assert_int_equal(nt_tune_print_model(mem, &in, &t, NULL, NULL, 1, &fit), NT_OK);
    fclose(mem);
    cJSON *doc = cJSON_Parse(buf);
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "nccl_version")->valuestring, "2.14.3");
    assert_string_equal(cJSON_GetObjectItem(doc, "modelled_from")->valuestring, "v2.14.3-1");
    cJSON *cells = cJSON_GetObjectItem(doc, "cells");
    assert_int_equal(cJSON_GetArraySize(cells), 5 * 4 * 3);
    cJSON *c0 = cJSON_GetArrayItem(cells, 3); /* Broadcast Ring LL */
    assert_string_equal(cJSON_GetObjectItem(c0, "algo")->valuestring, "Ring");
    assert_float_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "nccl"), "bw_GBps")->valuedouble,
                       8.0, 1e-9);
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "model"), "lat_us"));
    assert_non_null(cJSON_GetObjectItem(doc, "max_difference"));
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(doc, "assumed")));
    assert_int_equal(cJSON_GetObjectItem(doc, "compared_cells")->valueint, 36);
    cJSON_Delete(doc);
    free(buf);
    /* text: NCCL's 2.14 row layout and the summary line */
    mem = open_memstream(&buf, &len);
    assert_int_equal(nt_tune_print_model(mem, &in, NULL, NULL, NULL, 0, NULL), NT_OK);
    fclose(mem);
    /* the model alone (no NCCL table to set beside it), without NCCL's line prefix */
    assert_non_null(strstr(buf, "Latency/AlgBw |    Tree/    LL |"));
    assert_null(strstr(buf, "NCCL INFO"));
    assert_non_null(strstr(buf, "not verified: no NCCL table in the log (NCCL prints it with "
                                "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING)"));
    free(buf);
    /* a bad NCCL_ALGO is bad input */
    mem = open_memstream(&buf, &len);
    assert_int_equal(nt_tune_print_model(mem, &in, NULL, "ring;tree", NULL, 0, NULL), NT_OK);
    fclose(mem);
    free(buf);
    in.version = V2289;
    mem = open_memstream(&buf, &len);
    assert_int_equal(nt_tune_print_model(mem, &in, NULL, "ring;tree", NULL, 0, NULL),
                     NT_ERR_INVALID);
    fclose(mem);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nvls_bw_227_vs_228),
        cmocka_unit_test(test_224_to_226),
        cmocka_unit_test(test_nvls_tree_net_latency),
        cmocka_unit_test(test_blackwell_ring_ll128),
        cmocka_unit_test(test_nvls_tree_correction_229),
        cmocka_unit_test(test_221_to_223),
        cmocka_unit_test(test_230),
        cmocka_unit_test(test_print_read_221_230),
        cmocka_unit_test(test_per_call_factors),
        cmocka_unit_test(test_ll_max_bw_by_cpu),
        cmocka_unit_test(test_bw_intra_inter),
        cmocka_unit_test(test_latencies),
        cmocka_unit_test(test_tree_bw),
        cmocka_unit_test(test_ll128_gating),
        cmocka_unit_test(test_pat),
        cmocka_unit_test(test_coverage),
        cmocka_unit_test(test_call_allows),
        cmocka_unit_test(test_env_filter),
        cmocka_unit_test(test_eligible),
        cmocka_unit_test(test_rank_limit),
        cmocka_unit_test(test_names_versions),
        cmocka_unit_test(test_table_reader),
        cmocka_unit_test(test_table_reader_damaged),
        cmocka_unit_test(test_print_layout),
        cmocka_unit_test(test_print_json),
    };
    return cmocka_run_group_tests_name("tuner model versions", tests, NULL, NULL);
}
