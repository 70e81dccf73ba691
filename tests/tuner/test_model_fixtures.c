/* The tuner model against every real NCCL tuning table in tests/fixtures/nccl-tuning-tables/
 * (the fixture INDEX.md says where each came from). Each test parses the table,
 * gives the model what the source states (labelled), fits what is missing from the fewest
 * cells, and checks every other printed cell to 0.05 (NCCL prints %.1f). The counts are
 * printed per file: "FIXTURE: fitted N, verified M, mismatched K of T cells (VERDICT)".
 * Run from the repository root (make test-tuner-model does). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/nccl_table.h"
#include "tuner/print_model.h"

#define FIX "tests/fixtures/nccl-tuning-tables/"

static void report(const char *file, const nt_model_fit_t *f)
{
    printf("%s: fitted %d, verified %d, mismatched %d of %d cells (%s)\n", file, f->fitted_cells,
           f->verified_cells, f->mismatched_cells, f->compared_cells, f->verdict);
    for (int i = 0; i < f->fitted_cells && i < NT_MODEL_FIT_MAX_LIST; i++)
        printf("  fitted from %s %s/%s\n", nt_model_coll_name(f->fitted_at[i][0]),
               nt_model_algo_name(f->fitted_at[i][1]), nt_model_proto_name(f->fitted_at[i][2]));
}

/* NCCL's "Max NThreads" row against the model's (v2.28.9-1 tuning.cc:231-243; 2.14:81-91) */
static void check_threads(const nt_nccl_table_t *t, const nt_model_table_t *m)
{
    int n = 0;
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        for (int p = 0; p < NT_NUM_PROTOS; p++)
            if (t->has_threads[a][p]) {
                assert_int_equal(m->max_threads[a][p], t->max_threads[a][p]);
                n++;
            }
    assert_true(n > 0);
}

static void read_table(const char *file, nt_nccl_table_t *t)
{
    char path[512], err[256];
    snprintf(path, sizeof(path), FIX "%s", file);
    assert_int_equal(nt_nccl_table_read(path, t, err, sizeof(err)), NT_OK);
}

static void set_graph(nt_model_graph_t *g, int nch, double bw_intra, double bw_inter, nt_path_t ti,
                      nt_path_t te, int pattern, int same)
{
    g->nchannels = nch;
    g->bw_intra_GBps = bw_intra;
    g->bw_inter_GBps = bw_inter;
    g->type_intra = ti;
    g->type_inter = te;
    g->pattern = pattern;
    g->same_channels = same;
    for (int f = 0; f < NT_NUM_GRAPH_FACTS; f++)
        g->label[f] = NT_FACT_MEASURED;
    g->label[NT_GF_LATENCY_INTER] = NT_FACT_ASSUMED; /* not printed before 2.27 */
}

/* The only complete table: NCCL 2.29.7 (version line), 2 ranks as 2 nodes x 1 (different
 * NCCL_HOSTID per rank; the same repository reports nNodes 2 localRanks 1 for this setup, so
 * labelled inferred), Socket transport, no graph lines: every graph fact is fitted. */
static void test_2_29_7_complete(void **state)
{
    (void)state;
    nt_nccl_table_t t;
    read_table("repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log", &t);
    assert_int_equal(t.version, 22907);
    assert_int_equal(t.ncells, 105);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, t.version, 2, 2), NT_OK);
    in.label[NT_CF_NNODES] = NT_FACT_INFERRED;
    nt_model_fit_t fit;
    nt_model_table_t m;
    assert_int_equal(nt_model_fit_table(&in, &t, NULL, &m, &fit), NT_OK);
    report("repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log", &fit);
    assert_true(fit.modelled);
    assert_int_equal(fit.compared_cells, 105);
    assert_int_equal(fit.mismatched_cells, 0);
    assert_true(fit.fitted_cells <= 5);
    assert_int_equal(fit.fitted_cells + fit.verified_cells, 105);
    assert_true(fit.verified_cells > fit.fitted_cells);
    assert_string_equal(fit.verdict, "verified");
    assert_true(fit.max_lat_diff_us <= 0.05 && fit.max_bw_diff_GBps <= 0.05);
    /* what the cells pin down: Ring nChannels x bw = 2.4 (Ring Simple AllReduce 2.4 GB/s,
     * tuning.cc:301/348), the Tree graph 4.8 with pattern TREE (AllReduce Tree Simple
     * 4.8 x .92 x .85 x .5 = 1.9, :306/:309/:349; PAT on the Tree graph 4.8 x .75 = 3.6, :310),
     * typeInter beyond PXN or typeIntra beyond NVB (LL128 off, :484-491; the table cannot
     * tell which, so both stay assumed) */
    const nt_model_graph_t *ring = &in.graph[NT_ALGO_RING], *tree = &in.graph[NT_ALGO_TREE];
    assert_float_equal(ring->nchannels * ring->bw_intra_GBps, 2.4, 1e-6);
    assert_float_equal(tree->nchannels * tree->bw_intra_GBps, 4.8, 1e-6);
    assert_int_equal(tree->pattern, 3);
    assert_true(ring->type_inter > NT_PATH_PXN || ring->type_intra > NT_PATH_NVB);
    assert_int_equal(in.graph[NT_ALGO_RING].label[NT_GF_BW_INTRA], NT_FACT_INFERRED);
    /* the Max NThreads row too: Ring Simple 256 because bwIntra x nChannels <= PCI_BW (:231) */
    check_threads(&t, &m);
    assert_int_equal(m.max_threads[NT_ALGO_RING][NT_PROTO_SIMPLE], 256);
}

/* 12 columns = NCCL 2.14-2.16 (modelled as 2.14.3, an assumption); 1 node, 2 GPUs; the Ring and
 * Tree graph lines are in the log, so nothing about the graphs is fitted. */
static void test_transformers_2_14(void **state)
{
    (void)state;
    nt_nccl_table_t t;
    read_table("transformers-20438-2gpu-pcie-phb-12col.log", &t);
    assert_int_equal(t.layout, NT_NCCL_TABLE_ROWS);
    assert_int_equal(t.ncols, 12);
    assert_int_equal(t.ncells, 36);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, 21403, 2, 1), NT_OK);
    in.label[NT_CF_VERSION] = NT_FACT_ASSUMED;
    /* Pattern 4, nChannels 2, bw 12.000000/12.000000, type PHB/PIX, sameChannels 1 (Ring);
     * Pattern 1, nChannels 2, bw 22.000000/22.000000, type PHB/PIX, sameChannels 0 (Tree) */
    set_graph(&in.graph[NT_ALGO_RING], 2, 12, 12, NT_PATH_PHB, NT_PATH_PIX, 4, 1);
    set_graph(&in.graph[NT_ALGO_TREE], 2, 22, 22, NT_PATH_PHB, NT_PATH_PIX, 1, 0);
    nt_model_fit_t fit;
    nt_model_table_t m;
    assert_int_equal(nt_model_fit_table(&in, &t, NULL, &m, &fit), NT_OK);
    report("transformers-20438-2gpu-pcie-phb-12col.log", &fit);
    check_threads(&t, &m);
    assert_int_equal(fit.mismatched_cells, 0);
    assert_int_equal(fit.fitted_cells, 0);
    assert_int_equal(fit.verified_cells, 36);
    assert_string_equal(fit.verdict, "verified");
    /* Broadcast Ring LL 8.0 = 24 x 1/3 and Reduce 6.0 = 24 x 1/4 (v2.14.3-1 tuning.cc:132) */
    assert_float_equal(t.bw_GBps[NT_COLL_BROADCAST][NT_ALGO_RING][NT_PROTO_LL], 8.0, 1e-6);
    assert_float_equal(t.bw_GBps[NT_COLL_REDUCE][NT_ALGO_RING][NT_PROTO_LL], 6.0, 1e-6);
}

/* 12 columns (2.14-2.16, modelled as 2.14.3), no graph lines, shape not in the log: 8 ranks on
 * one node is the assumption (Ring AllGather LL 6.9 = 3.6 + 7 x 0.47, v2.14.3-1 tuning.cc:56/65).
 */
static void test_830_2_14(void **state)
{
    (void)state;
    nt_nccl_table_t t;
    read_table("nccl-830-kwen2501-example-12col-collnetdirect-chain.log", &t);
    assert_int_equal(t.ncells, 34);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, 21403, 8, 1), NT_OK);
    in.label[NT_CF_VERSION] = in.label[NT_CF_NRANKS] = in.label[NT_CF_NNODES] = NT_FACT_ASSUMED;
    nt_model_fit_t fit;
    nt_model_table_t m;
    assert_int_equal(nt_model_fit_table(&in, &t, NULL, &m, &fit), NT_OK);
    report("nccl-830-kwen2501-example-12col-collnetdirect-chain.log", &fit);
    check_threads(&t, &m);
    assert_int_equal(fit.mismatched_cells, 0);
    assert_true(fit.verified_cells > fit.fitted_cells);
    assert_int_equal(fit.fitted_cells + fit.verified_cells, 34);
    /* Ring Simple 235.0: the A100 cap (v2.14.3-1 tuning.cc:131), so SM80 is fitted */
    assert_int_equal(in.min_sm, 80);
    assert_true(fit.fitted_comm_facts & (1u << NT_CF_SM));
}

/* Tables of versions that are not modelled: parsed, counted, and "not verified". */
static void not_modelled(const char *file, int version, int ncells)
{
    nt_nccl_table_t t;
    read_table(file, &t);
    assert_int_equal(t.ncells, ncells);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, version, 2, 1), NT_OK);
    nt_model_fit_t fit;
    assert_int_equal(nt_model_fit_table(&in, &t, NULL, NULL, &fit), NT_OK);
    report(file, &fit);
    assert_false(fit.modelled);
    assert_int_equal(fit.fitted_cells, 0);
    assert_int_equal(fit.verified_cells, 0);
    assert_string_equal(fit.verdict, "not verified: version not modelled");
}

static void test_not_modelled(void **state)
{
    (void)state;
    /* 9 columns = 2.6-2.13; 2.6.4 from the issue title; 2.18+ and 2.20+ without a version line */
    not_modelled("ultralytics-12905-4x-rtx3090-pcie-old9col-rows.log", 0, 45);
    not_modelled("nccl-754-autodl-container-old9col-collnet.log", 0, 26);
    not_modelled("nccl-340-2.6.4-2gpu-nvlink-maxnchannels1-nthreads256.log", 20604, 0);
    not_modelled("nccl-1154-h800-ndr400x8-tree-forced-header-only.log", 0, 2);
    not_modelled("nccl-1519-2node-8xH100-nvswitch-8nic-block1.log", 0, 40);
}

/* A version the table's layout contradicts is not checked: 12 columns are 2.14-2.16 only. */
static void test_layout_contradicts_version(void **state)
{
    (void)state;
    nt_nccl_table_t t;
    read_table("transformers-20438-2gpu-pcie-phb-12col.log", &t);
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, 22809, 2, 1), NT_OK);
    nt_model_fit_t fit;
    assert_int_equal(nt_model_fit_table(&in, &t, NULL, NULL, &fit), NT_OK);
    assert_false(fit.modelled);
    assert_int_equal(fit.verified_cells, 0);
    assert_string_equal(fit.verdict,
                        "not verified: this table layout is printed by NCCL 2.14-2.16, not 2.28.9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_2_29_7_complete),
        cmocka_unit_test(test_transformers_2_14),
        cmocka_unit_test(test_830_2_14),
        cmocka_unit_test(test_not_modelled),
        cmocka_unit_test(test_layout_contradicts_version),
    };
    return cmocka_run_group_tests_name("tuner model vs NCCL's tables", tests, NULL, NULL);
}
