/* nettune tune around the model (inputs, replay, search, outputs): the lib/ readers, the anomaly rule,
 * replay on every nccl-tests fixture (rows per fixture, busbw recomputed within 0.3%), labels, the
 * search against a synthetic measurement function with a known optimum and noise, and the one
 * tuning-format definition against reports/schema/tuning.schema.json.
 * Run from the repository root (make test-tune does). */
#include <limits.h>
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

#include "nettune/anomaly.h"
#include "nettune/nccllog.h"
#include "nettune/nccltests.h"
#include "nettune/checks.h"
#include "nt_tuning.h"
#include "tuner/tune.h"

#define FIX "tests/fixtures/nccl-tests-logs/"

/* ---- replay on every nccl-tests fixture ---- */

static const struct {
    const char *file;
    const char *coll;     /* the first table's, as the reader names it (NULL: the log does not) */
    const char *actual;   /* the test that ran (fixtures MANIFEST), for the busbw re-check */
    const char *inferred; /* nt_ncclt_infer_coll on the table (NULL: ambiguous or named) */
    size_t tables;
    unsigned long rows; /* every row of every table */
    int nranks, nhosts;
} fixtures[] = {
    {"allreduce-1node-8xH100-nvls.log", NULL, "all_reduce", "all_reduce", 1, 6, 8, 1},
    {"allreduce-2node-1xH100-roce-ring-single-nic.log", NULL, "all_reduce", NULL, 1, 13, 2, 2},
    {"allreduce-2node-8xH100-hgx-ib-default-tree.log", "all_reduce", "all_reduce", NULL, 1, 32, 16,
     2},
    {"allreduce-2node-8xH100-ib-default-srun-prefix.log", NULL, "all_reduce", "all_reduce", 1, 11,
     16, 2},
    {"allreduce-2node-8xH100-ib-ring-forced-minctas.log", "all_reduce", "all_reduce", NULL, 1, 14,
     16, 2},
    {"allreduce-8node-8xH100-ib-default.log", NULL, "all_reduce", "all_reduce", 1, 14, 64, 8},
    {"allreduce-8xA100-sxm4-single-node-nvswitch-c0.log", NULL, "all_reduce", "all_reduce", 1, 34,
     8, 1},
    {"alltoall-8xA100-sxm4-single-node-nvswitch-c0.log", NULL, "alltoall", NULL, 1, 34, 8, 1},
    {"sendrecv-2node-4xH100-roce-one-nic-shared.log", NULL, "sendrecv", "sendrecv", 1, 13, 8, 2},
};

static void test_replay_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        char path[256], err[512];
        nt_tune_source_t s;
        snprintf(path, sizeof(path), FIX "%s", fixtures[i].file);
        assert_int_equal(nt_tune_source_read(&s, path, err, sizeof(err)), NT_OK);
        size_t nt = nt_ncclt_reader_ntables(s.tests);
        unsigned long rows = 0, checked = 0, bad = 0;
        double worst = 0;
        for (size_t k = 0; k < nt; k++) {
            const nt_ncclt_table_t *tab = nt_ncclt_reader_table(s.tests, k);
            rows += tab->rows_total;
            double rel;
            unsigned long b;
            nt_ncclt_table_t copy = *tab;
            copy.coll = (char *)fixtures[i].actual;
            checked += nt_tune_busbw_recheck(&copy, &rel, &b);
            bad += b;
            if (rel > worst)
                worst = rel;
        }
        const nt_ncclt_table_t *t0 = nt_ncclt_reader_table(s.tests, 0);
        printf("%s: %zu table(s), %lu rows, busbw recomputed on %lu values, worst %.3f%%, %lu "
               "outside 0.3%%\n",
               fixtures[i].file, nt, rows, checked, 100 * worst, bad);
        assert_int_equal(nt, fixtures[i].tables);
        assert_int_equal(rows, fixtures[i].rows);
        assert_int_equal(t0->nranks, fixtures[i].nranks);
        assert_int_equal(t0->nhosts, fixtures[i].nhosts);
        if (fixtures[i].coll)
            assert_string_equal(t0->coll, fixtures[i].coll);
        else
            assert_null(t0->coll);
        const char *inf = t0->coll ? NULL : nt_ncclt_infer_coll(t0, 0, NULL, 0);
        if (fixtures[i].inferred)
            assert_string_equal(inf, fixtures[i].inferred);
        else
            assert_null(inf);
        assert_true(checked >= rows); /* every row, out-of-place and in-place */
        assert_int_equal(bad, 0);
        nt_tune_source_free(&s);
    }
}

/* alltoall and sendrecv never reach the tuner: replaying them yields no point, hence no rule */
static void test_alltoall_sendrecv_no_rules(void **state)
{
    (void)state;
    static const char *files[] = {"alltoall-8xA100-sxm4-single-node-nvswitch-c0.log",
                                  "sendrecv-2node-4xH100-roce-one-nic-shared.log"};
    for (size_t i = 0; i < 2; i++) {
        static nt_tune_t t;
        char path[256], err[512];
        memset(&t, 0, sizeof(t));
        snprintf(path, sizeof(path), FIX "%s", files[i]);
        assert_int_equal(nt_tune_source_read(&t.sources[0], path, err, sizeof(err)), NT_OK);
        t.nsources = 1;
        t.target_version = 22809;
        t.p.min_bytes = 1;
        t.p.max_bytes = 1ull << 34;
        for (int c = 0; c < NT_NUM_COLLS; c++)
            t.p.colls[c] = 1;
        t.p.shapes[0] = (nt_tune_shape_t){2, 4, 8};
        t.p.nshapes = 1;
        assert_int_equal(nt_tune_replay(&t), NT_OK);
        assert_int_equal(t.npoints, 0);
        nt_tune_search(&t);
        assert_int_equal(t.nrules, 0);
        nt_tune_source_free(&t.sources[0]);
        for (size_t k = 0; k < t.nfindings; k++)
            free(t.findings[k].text);
        free(t.findings);
        free(t.points);
        free(t.rules);
        free(t.summary);
    }
}

/* ---- the nccl-tests reader: -J JSON and an srun prefix ---- */

static void test_nccltests_json(void **state)
{
    (void)state;
    const char *doc =
        "{\"version\":1,\"args\":[\"./build/all_gather_perf\",\"-b\",\"8\"],"
        "\"env\":[\"NCCL_ALGO=Ring\",\"PATH=/bin\"],\"nccl_version\":22809,"
        "\"devices\":[{\"rank\":0,\"hostname\":\"a\",\"device_info\":\"NVIDIA H100 80GB HBM3\"},"
        "{\"rank\":1,\"hostname\":\"b\",\"device_info\":\"NVIDIA H100 80GB HBM3\"}],"
        "\"results\":[{\"size\":1048576,\"count\":131072,\"type\":\"float\",\"redop\":\"none\","
        "\"root\":\"    -1\",\"out_of_place\":{\"time\":100.0,\"alg_bw\":10.48576,\"bus_bw\":"
        "5.24288,\"nwrong\":0},\"in_place\":{\"time\":110.0,\"alg_bw\":9.532509,\"bus_bw\":"
        "4.766255,\"nwrong\":null}}],\"out_of_bounds\":{\"count\":0,\"okay\":true},"
        "\"average_bus_bandwidth\":{\"bandwidth\":5.0}}";
    cJSON *j = cJSON_Parse(doc);
    nt_ncclt_reader_t *r = nt_ncclt_reader_create();
    assert_int_equal(nt_ncclt_reader_add_json(r, j, 0), 1);
    const nt_ncclt_table_t *t = nt_ncclt_reader_table(r, 0);
    assert_string_equal(t->coll, "all_gather");
    assert_int_equal(t->nranks, 2);
    assert_int_equal(t->nhosts, 2);
    assert_int_equal(t->nrows, 1);
    assert_true(t->json && t->complete && t->oob_values == 0);
    assert_true(fabs(t->rows[0].busbw_GBps[0] - 5.24288) < 1e-9);
    assert_int_equal(t->rows[0].wrong[1], -1);
    assert_true(fabs(nt_ncclt_busbw_factor("all_gather", 2) - 0.5) < 1e-12);
    double rel;
    unsigned long bad;
    assert_int_equal(nt_tune_busbw_recheck(t, &rel, &bad), 2);
    assert_int_equal(bad, 0);
    cJSON_Delete(j);
    nt_ncclt_reader_destroy(r);
}

/* Numbers beyond what nccl-tests writes (an int rank, size_t size and count, an nwrong count)
 * are not converted (UB in C, flagged by UBSan): the device and the row are skipped, the count
 * saturates. Before the fix the rank-1e300 device was counted as a host, the 1e300-byte row kept,
 * and nwrong read as LONG_MIN (N/A). */
static void test_nccltests_json_out_of_range(void **state)
{
    (void)state;
    const char *doc =
        "{\"devices\":[{\"rank\":0,\"hostname\":\"a\"},{\"rank\":1e300,\"hostname\":\"b\"},"
        "{\"rank\":3e9,\"hostname\":\"c\"}],"
        "\"results\":[{\"size\":1e300,\"count\":8,\"type\":\"float\",\"redop\":\"sum\","
        "\"out_of_place\":{\"time\":1,\"alg_bw\":1,\"bus_bw\":1,\"nwrong\":0}},"
        "{\"size\":1024,\"count\":1e20,\"out_of_place\":{\"time\":1,\"alg_bw\":1,\"bus_bw\":1}},"
        "{\"size\":1024,\"count\":256,\"type\":\"float\",\"redop\":\"sum\","
        "\"out_of_place\":{\"time\":1,\"alg_bw\":1,\"bus_bw\":1,\"nwrong\":1e300},"
        "\"in_place\":{\"time\":1,\"alg_bw\":1,\"bus_bw\":1,\"nwrong\":-1e300}}]}";
    cJSON *j = cJSON_Parse(doc);
    assert_non_null(j);
    nt_ncclt_reader_t *r = nt_ncclt_reader_create();
    assert_int_equal(nt_ncclt_reader_add_json(r, j, 0), 1);
    const nt_ncclt_table_t *t = nt_ncclt_reader_table(r, 0);
    assert_non_null(t);
    assert_int_equal(t->nhosts, 1);
    assert_int_equal(t->nranks, 1);
    assert_int_equal(t->nrows, 1);
    assert_true(t->rows[0].bytes == 1024 && t->rows[0].count == 256);
    assert_true(t->rows[0].wrong[0] == LONG_MAX);
    assert_true(t->rows[0].wrong[1] == -1);
    cJSON_Delete(j);
    nt_ncclt_reader_destroy(r);
}

/* The report's PCIe width is any JSON number: one far beyond a real link (1e300, -1e300) clamps
 * the channels inferred from it (1..16, then doubled at half speed) instead of converting an
 * out-of-range double to int (UB; INT_MIN on x86, so 2 channels instead of 32 before the fix). */
static void test_report_pcie_width_out_of_range(void **state)
{
    (void)state;
    static const struct {
        const char *width;
        int nch;
    } cases[] = {{"16", 1}, {"1e300", 32}, {"-1e300", 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char doc[512];
        snprintf(doc, sizeof(doc),
                 "{\"schema\":\"nettune.report/1\",\"nodes\":[{\"hostname\":\"a\",\"gpus\":"
                 "[{\"name\":\"Some GPU\",\"pcie\":{\"gen\":4,\"width\":%s}}]}]}",
                 cases[i].width);
        static nt_tune_t t;
        memset(&t, 0, sizeof(t));
        cJSON *root = cJSON_Parse(doc);
        assert_non_null(root);
        assert_int_equal(nt_rdoc_from_json(root, "mem.json", &t.report), NT_OK);
        t.have_report = 1;
        t.target_version = 22809;
        t.version_label = NT_FACT_MEASURED;
        t.p.cpu_vendor = -1;
        t.p.sm = 90;
        nt_tune_shape_t sh = {1, 8, 8};
        nt_model_input_t in;
        assert_int_equal(nt_tune_model_input(&t, &sh, &in, NULL, 0), NT_OK);
        if (in.comm_nchannels != cases[i].nch)
            fail_msg("width %s: %d channels, expected %d", cases[i].width, in.comm_nchannels,
                     cases[i].nch);
        nt_rdoc_close(&t.report);
    }
}

static void test_nccltests_rows(void **state)
{
    (void)state;
    nt_ncclt_row_t row;
    /* new header: type redop root */
    assert_int_equal(nt_ncclt_parse_row("   134217728      33554432     float     sum      -1    "
                                        "613.3  218.85  382.99      0    612.1  219.28  383.74     "
                                        " 0",
                                        &row),
                     1);
    assert_true(row.bytes == 134217728ull && row.count == 33554432ull);
    assert_string_equal(row.redop, "sum");
    assert_int_equal(row.root, -1);
    assert_true(fabs(row.busbw_GBps[1] - 383.74) < 1e-9);
    assert_true(fabs(nt_ncclt_row_best_busbw(&row) - 383.74) < 1e-9);
    /* alltoall: redop empty; -c 0: N/A */
    assert_int_equal(
        nt_ncclt_parse_row("     1048576        262144     float          -1    50.0   "
                           "20.97   18.35    N/A    51.0   20.56   17.99    N/A",
                           &row),
        1);
    assert_int_equal(row.wrong[0], -1);
    assert_string_equal(row.redop, "");
    /* two runs in one file (srun prefixes stripped by nt_line_parse): two tables */
    static const char *const lines[] = {
        " 0: # nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5",
        " 0: #  Rank  0 Group  0 Pid 1 on a device  0 [0x18] NVIDIA A100-SXM4-40GB",
        " 0: #  Rank  1 Group  0 Pid 2 on a device  1 [0x19] NVIDIA A100-SXM4-40GB",
        " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong",
        " 0:            8             2     float     sum      -1    10.00    0.00    0.00      0  "
        "  "
        "10.00    0.00    0.00      0",
        " 0: # Avg bus bandwidth    : 0.00",
        " 0: # nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5",
        " 0: #  Rank  0 Group  0 Pid 1 on a device  0 [0x18] NVIDIA A100-SXM4-40GB",
        " 0: #       size         count      type   redop    root     time   algbw   busbw #wrong",
        " 0:           16             4     float     sum      -1    10.00    0.00    0.00      0  "
        "  "
        "10.00    0.00    0.00      0",
        " 0:           32             8     float     sum      -1    10.00    0.00    0.00      0  "
        "  "
        "10.00    0.00    0.00      0",
        /* a third run as a Markdown page shows it, every '#' gone (log 257), with wrong data */
        "all_gather_perf -g 8 -b 4294967296 -e 4294967296 -n 100",
        "       size         count    type     time   algbw   busbw  error     time   algbw   "
        "busbw  error",
        "        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
        "(GB/s)",
        "  4294967296     134217728   float    29122  129.05  129.05  1e+00    29169  128.84  "
        "128.84  1e+00",
        " Out of bounds values : 2 FAILED",
        " Avg bus bandwidth    : 128.942"};
    nt_ncclt_reader_t *r = nt_ncclt_reader_create();
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
        nt_logline_t l;
        nt_line_parse(lines[i], &l);
        nt_ncclt_reader_feed(r, l.body, i + 1);
    }
    assert_int_equal(nt_ncclt_reader_ntables(r), 3);
    assert_true(nt_ncclt_reader_table(r, 0)->nrows == 1 && nt_ncclt_reader_table(r, 0)->complete);
    /* "# Out of bounds values : 0 OK" is not printed in these two; the third's says 2 FAILED */
    assert_int_equal(nt_ncclt_reader_table(r, 0)->oob_values, -1);
    const nt_ncclt_table_t *md = nt_ncclt_reader_table(r, 2);
    assert_true(md->nrows == 1 && md->complete && md->oob_values == 2 && md->oob_line == 16);
    assert_true(fabs(md->avg_busbw_GBps - 128.942) < 1e-9);
    assert_int_equal(nt_ncclt_reader_table(r, 0)->nranks, 2);
    assert_true(nt_ncclt_reader_table(r, 1)->nrows == 2 && !nt_ncclt_reader_table(r, 1)->complete);
    assert_int_equal(nt_ncclt_reader_table(r, 1)->nranks, 1);
    assert_string_equal(nt_ncclt_reader_table(r, 1)->gpu_model, "NVIDIA A100-SXM4-40GB");
    nt_ncclt_reader_destroy(r);
    /* not rows */
    assert_int_equal(nt_ncclt_parse_row("#  size count type", &row), 0);
    assert_int_equal(nt_ncclt_parse_row("NCCL INFO Launch mode Parallel", &row), 0);
}

/* ---- the anomaly rule (lib/nccl/anomaly.c) ---- */

static nt_ncclt_table_t table_of(const double *busbw, size_t n, nt_ncclt_row_t *rows)
{
    nt_ncclt_table_t t;
    memset(&t, 0, sizeof(t));
    for (size_t i = 0; i < n; i++) {
        memset(&rows[i], 0, sizeof(rows[i]));
        rows[i].bytes = 1048576ull << i;
        rows[i].busbw_GBps[0] = busbw[i];
        rows[i].busbw_GBps[1] = busbw[i] * 0.99; /* the better of the two counts */
    }
    t.rows = rows;
    t.nrows = t.rows_total = n;
    t.coll = "all_reduce";
    t.nranks = 16;
    t.nhosts = 2;
    return t;
}

static void test_anomaly_sweep(void **state)
{
    (void)state;
    nt_ncclt_row_t rows[8];
    nt_anomaly_t a[4];
    /* two consecutive sizes 15%+ below the best at smaller sizes: a finding */
    const double drop[] = {100, 200, 300, 250, 240, 310, 320};
    nt_ncclt_table_t t = table_of(drop, 7, rows);
    assert_int_equal(nt_anomaly_sweep(&t, a, 4), 1);
    assert_int_equal(a[0].kind, NT_ANOMALY_MID_SWEEP_DROP);
    assert_int_equal(a[0].severity, NT_ANOMALY_SEV_WARN);
    assert_true(a[0].bytes_first == 1048576ull << 3 && a[0].bytes_last == 1048576ull << 4);
    assert_true(fabs(a[0].ref_GBps - 300) < 1e-9 && fabs(a[0].busbw_GBps - 240) < 1e-9);
    /* one such row: an outlier note */
    const double one[] = {100, 200, 300, 250, 300, 310};
    t = table_of(one, 6, rows);
    assert_int_equal(nt_anomaly_sweep(&t, a, 4), 1);
    assert_int_equal(a[0].kind, NT_ANOMALY_OUTLIER);
    assert_int_equal(a[0].severity, NT_ANOMALY_SEV_INFO);
    /* 14% below: nothing */
    const double small[] = {100, 200, 300, 259, 258, 310};
    t = table_of(small, 6, rows);
    assert_int_equal(nt_anomaly_sweep(&t, a, 4), 0);
}

static void test_anomaly_compare_env(void **state)
{
    (void)state;
    nt_ncclt_row_t ra[6], rb[6];
    nt_anomaly_t a[4];
    const double x[] = {100, 200, 300, 300, 300, 300};
    const double y[] = {100, 195, 260, 265, 300, 300}; /* 13% and 12% slower at sizes 2, 3 */
    nt_ncclt_table_t ta = table_of(x, 6, ra), tb = table_of(y, 6, rb);
    assert_true(nt_anomaly_same_shape(&ta, &tb));
    assert_int_equal(nt_anomaly_compare(&ta, &tb, a, 4), 1);
    assert_int_equal(a[0].kind, NT_ANOMALY_RUNS_DIFFER);
    assert_int_equal(a[0].slower, 1);
    assert_true(a[0].first == 2 && a[0].last == 3);
    const double z[] = {100, 195, 260, 300, 300, 300}; /* one size only: not a finding */
    tb = table_of(z, 6, rb);
    assert_int_equal(nt_anomaly_compare(&ta, &tb, a, 4), 0);
    tb.nranks = 8;
    assert_false(nt_anomaly_same_shape(&ta, &tb));
    const char *e1[] = {"NCCL_ALGO=Ring", "PATH=/bin"}, *e2[] = {"NCCL_ALGO=Ring"},
               *e3[] = {"NCCL_ALGO=Tree"};
    char name[64];
    assert_int_equal(nt_anomaly_env_diff(e1, 2, e2, 1, name, sizeof(name)), 0);
    assert_int_equal(nt_anomaly_env_diff(e1, 2, e3, 1, name, sizeof(name)), 1);
    assert_string_equal(name, "NCCL_ALGO");
}

/* ---- the NCCL log reader (lib/nccl/nccllog.c) ---- */

static void feed(nt_nccllog_t *g, const char *line, unsigned long no)
{
    nt_logline_t l;
    nt_line_parse(line, &l);
    nt_nccllog_feed(g, &l, no);
}

static void test_nccllog(void **state)
{
    (void)state;
    nt_nccllog_t g;
    nt_nccllog_init(&g);
    feed(&g, "node01:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9", 1);
    feed(&g,
         " 0: node01:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 "
         "localRank 0 MNNVL 0",
         2);
    feed(&g,
         "node01:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 20.000000/"
         "20.000000, type NVL/PIX, sameChannels 1",
         3);
    feed(&g,
         "node01:1:2 [0] NCCL INFO Pattern 1, crossNic 0, nChannels 16, bw 22.000000/"
         "20.000000, type NVL/PIX, sameChannels 0",
         4);
    feed(&g,
         "node01:1:2 [0] NCCL INFO Pattern 5, crossNic 0, nChannels 16, bw 30.000000/"
         "24.000000, type NVL/PIX, sameChannels 0",
         5);
    feed(&g,
         "node02:7:8 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 2, bw 1.000000/1.000000, "
         "type PHB/PIX, sameChannels 1",
         6); /* another process: ignored */
    feed(&g,
         "node01:1:2 [0] NCCL INFO NET/IB: [0] mlx5_0:uverbs0:1/IB provider=Mlx5 "
         "speed=400000 context=0x1 pciPath=/sys ar=0",
         7);
    feed(&g, "node01:1:2 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set by environment to 2.", 8);
    feed(&g,
         "node01:1:2 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE "
         "channel{Lo..Hi}={0..15}",
         9);
    feed(&g, "node01:1:2 [0] NCCL INFO 4096 Bytes -> Algo 0 proto 0 time 12.5", 10);
    assert_int_equal(g.version, 22809);
    assert_int_equal(g.cuda_runtime, 12090);
    assert_true(g.nranks == 16 && g.nnodes == 2 && g.local_ranks == 8);
    assert_true(g.graph[NT_NCCLLOG_RING].present && g.graph[NT_NCCLLOG_RING].nchannels == 16);
    assert_true(fabs(g.graph[NT_NCCLLOG_TREE].bw_intra_GBps - 22) < 1e-9);
    assert_true(fabs(g.graph[NT_NCCLLOG_TREE].bw_inter_GBps - 20) < 1e-9);
    assert_true(g.graph[NT_NCCLLOG_NVLS].present);
    assert_string_equal(g.graph[NT_NCCLLOG_RING].type_intra, "NVL");
    assert_string_equal(g.graph[NT_NCCLLOG_RING].type_inter, "PIX");
    assert_int_equal(g.nnics, 1);
    assert_true(fabs(g.nic_Gbps[0] - 400) < 1e-9);
    assert_string_equal(nt_nccllog_env_get(&g, "NCCL_IB_QPS_PER_CONNECTION"), "2");
    assert_int_equal(g.ncalls, 2);
    assert_string_equal(g.calls[0].coll, "AllReduce");
    assert_string_equal(g.calls[0].algo, "RING");
    assert_string_equal(g.calls[0].proto, "SIMPLE");
    assert_true(g.calls[1].bytes == 4096 && strcmp(g.calls[1].algo, "0") == 0);
    /* into the model's input: measured labels */
    nt_model_input_t in;
    assert_int_equal(nt_model_input_init(&in, 22809, 16, 2), NT_OK);
    assert_int_equal(nt_tune_input_from_log(&in, &g), 5); /* ring, tree, nvls, nvls_tree, pat */
    assert_int_equal(in.graph[NT_ALGO_RING].nchannels, 16);
    assert_int_equal(in.graph[NT_ALGO_NVLS_TREE].nchannels, 16);
    assert_int_equal(in.graph[NT_ALGO_RING].label[NT_GF_BW_INTRA], NT_FACT_MEASURED);
    nt_nccllog_cleanup(&g);
    assert_int_equal(nt_nccllog_version_parse("2.14.3-1"), 21403);
    assert_int_equal(nt_nccllog_version_parse("x"), -1);
    /* a number beyond an int is no fact: %d sscanf of it was UB, and glibc truncated
     * "nRanks 4294967298" to 2 and "nChannels 4294967312" to 16 */
    nt_nccllog_init(&g);
    feed(&g,
         "node01:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 4294967298 nNodes 1 localRanks 2 "
         "localRank 0 MNNVL 0",
         1);
    feed(&g,
         "node01:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 4294967312, bw 20.000000/"
         "20.000000, type NVL/PIX, sameChannels 1",
         2);
    assert_int_equal(g.nranks, -1);
    assert_false(g.graph[NT_NCCLLOG_RING].present);
    feed(&g, "node01:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0",
         3);
    feed(&g,
         "node01:1:2 [0] NCCL INFO Pattern 4, crossNic 0, nChannels 16, bw 20.000000/20.000000, "
         "type NVL/PIX, sameChannels 99999999999",
         4);
    assert_true(g.nranks == 16 && g.nnodes == 2 && g.local_ranks == 8);
    assert_true(g.graph[NT_NCCLLOG_RING].present && g.graph[NT_NCCLLOG_RING].nchannels == 16);
    assert_int_equal(g.graph[NT_NCCLLOG_RING].same_channels, 0);
    nt_nccllog_cleanup(&g);
}

/* The 2.14 fixture's graph lines: ring, tree, then a pattern-3 CollNet chain graph. */
static void test_nccllog_fixture_214(void **state)
{
    (void)state;
    nt_tune_source_t s;
    char err[256];
    nt_linereader_t *r = nt_linereader_open(
        "tests/fixtures/nccl-tuning-tables/transformers-20438-2gpu-pcie-phb-12col.log");
    assert_non_null(r);
    nt_nccllog_t g;
    nt_nccllog_init(&g);
    const char *line;
    size_t len;
    while (nt_linereader_next(r, &line, &len) == 1)
        feed(&g, line, nt_linereader_lineno(r));
    nt_linereader_close(r);
    assert_true(g.graph[NT_NCCLLOG_RING].present && g.graph[NT_NCCLLOG_TREE].present);
    assert_int_equal(g.graph[NT_NCCLLOG_RING].nchannels, 2);
    assert_true(fabs(g.graph[NT_NCCLLOG_RING].bw_intra_GBps - 12) < 1e-9);
    assert_int_equal(g.graph[NT_NCCLLOG_TREE].pattern, 1);
    assert_int_equal(g.graph[NT_NCCLLOG_COLLNET_CHAIN].pattern, 3);
    assert_string_equal(g.graph[NT_NCCLLOG_TREE].type_intra, "PHB");
    nt_nccllog_cleanup(&g);
    (void)s;
    (void)err;
}

/* ---- labels ---- */

static void test_labels(void **state)
{
    (void)state;
    nt_tune_source_t s;
    char err[512];
    const char *ring = "tests/fixtures/tuner/allreduce-2x8-ring-simple.log";
    assert_int_equal(nt_tune_source_read(&s, ring, err, sizeof(err)), NT_OK);
    /* the file says NCCL_ALGO=Ring: a label of Tree contradicts it, naming both */
    assert_int_equal(nt_tune_source_label(&s, "algo=TREE", err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "algo=Tree"));
    assert_non_null(strstr(err, "NCCL_ALGO=Ring"));
    nt_tune_source_free(&s);
    assert_int_equal(nt_tune_source_read(&s, ring, err, sizeof(err)), NT_OK);
    /* NCCL's spelling or ours, any case */
    assert_int_equal(
        nt_tune_source_label(&s, "algo=Ring,proto=SIMPLE,nchannels=8", err, sizeof(err)), NT_OK);
    assert_true(s.label_algo == NT_ALGO_RING && s.label_proto == NT_PROTO_SIMPLE &&
                s.label_nchannels == 8);
    /* given twice */
    assert_int_equal(nt_tune_source_label(&s, "proto=ll", err, sizeof(err)), NT_ERR_INVALID);
    assert_non_null(strstr(err, "given twice"));
    nt_tune_source_free(&s);
    assert_int_equal(nt_tune_source_read(&s, ring, err, sizeof(err)), NT_OK);
    assert_int_equal(nt_tune_source_label(&s, "env.NCCL_ALGO=Tree", err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_non_null(strstr(err, "contradicts"));
    nt_tune_source_free(&s);
    assert_int_equal(nt_tune_source_read(&s, ring, err, sizeof(err)), NT_OK);
    assert_int_equal(nt_tune_source_label(&s, "colour=blue", err, sizeof(err)), NT_ERR_INVALID);
    assert_int_equal(nt_tune_source_label(&s, "algo=ring,algo=tree", err, sizeof(err)),
                     NT_ERR_INVALID);
    nt_tune_source_free(&s);
}

/* ---- the search against a synthetic measurement function ---- */

/* A deterministic generator: the same noise every run. */
static unsigned long long rng_state;
static double noise(double amp)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(rng_state >> 11) / 9007199254740992.0; /* [0, 1) */
    return 1 + amp * (2 * u - 1);
}

/* Four candidates; the true time of each at size b (us). Tree/LL is NCCL's default. The optimum:
 * Tree/LL below 64 KiB, Ring/LL128 from 64 KiB to 4 MiB, Ring/Simple above. NVLS/Simple is 1%
 * faster than the default where the default is best (within the noise: never taken) and 15% above
 * the optimum elsewhere. */
static const int cand[4][2] = {{NT_ALGO_TREE, NT_PROTO_LL},
                               {NT_ALGO_RING, NT_PROTO_LL128},
                               {NT_ALGO_RING, NT_PROTO_SIMPLE},
                               {NT_ALGO_NVLS, NT_PROTO_SIMPLE}};
static double true_us(int c, double b)
{
    double tree_ll = 10 + b / 2e3, ring_ll128 = 25 + b / 8e3, ring_simple = 60 + b / 20e3;
    double best = fmin(tree_ll, fmin(ring_ll128, ring_simple));
    switch (c) {
    case 0:
        return tree_ll;
    case 1:
        return ring_ll128;
    case 2:
        return ring_simple;
    default: /* within the noise of NCCL's default where that is best, clearly worse elsewhere */
        return best * (best == tree_ll ? 0.99 : 1.15);
    }
}

static void test_search_synthetic(void **state)
{
    (void)state;
    static nt_tune_t t;
    memset(&t, 0, sizeof(t));
    t.p.objective = NT_OBJ_NO_REGRESS;
    t.target_version = 22809;
    nt_tune_shape_t sh = {2, 8, 16};
    rng_state = 42;
    const double amp = 0.02; /* +-2% measurement noise, below the 3% floor */
    t.points = calloc(4096, sizeof(*t.points));
    t.cap_points = 4096;
    for (int k = 0; k < 24; k++) { /* 1 KiB .. 8 GiB */
        unsigned long long bytes = 1024ull << k;
        double b = (double)bytes;
        for (int c = 0; c < 4; c++) {
            nt_tune_point_t *p = &t.points[t.npoints++];
            memset(p, 0, sizeof(*p));
            p->coll = NT_COLL_ALLREDUCE;
            p->shape = sh;
            p->bytes = bytes;
            p->algo = cand[c][0];
            p->proto = cand[c][1];
            p->time_us = true_us(c, b) * noise(amp);
            p->spread = 0.04; /* what the runs show: the noise (+-2% each) */
            p->src = c;
            p->is_default = c == 0;
        }
    }
    int found = 0, kept = 0;
    for (int k = 0; k < 24; k++) {
        unsigned long long bytes = 1024ull << k;
        nt_tune_choice_t ch;
        nt_model_input_t in;
        nt_model_table_t tab;
        memset(&in, 0, sizeof(in));
        memset(&tab, 0, sizeof(tab));
        nt_tune_choose(&t, NT_COLL_ALLREDUCE, &sh, bytes, &in, &tab, 0, 0, &ch);
        /* the optimum, unless it is within the noise of NCCL's default */
        int opt = 0;
        for (int c = 1; c < 3; c++)
            if (true_us(c, (double)bytes) < true_us(opt, (double)bytes))
                opt = c;
        double gain = true_us(0, (double)bytes) / true_us(opt, (double)bytes) - 1;
        if (gain > 0.08) { /* clearly beyond noise + 3%: must be found */
            assert_int_equal(ch.basis, NT_BASIS_MEASURED);
            assert_int_equal(ch.algo, cand[opt][0]);
            assert_int_equal(ch.proto, cand[opt][1]);
            found++;
        } else if (gain < 0.005) { /* within the noise: NCCL's default is never changed */
            assert_true(ch.basis < 0 || (ch.algo == cand[0][0] && ch.proto == cand[0][1]));
            kept++;
        }
        /* NVLS/Simple (within the noise, or worse) is never chosen */
        assert_false(ch.algo == NT_ALGO_NVLS);
    }
    printf("synthetic search: optimum found at %d sizes, default kept at %d sizes within the "
           "noise\n",
           found, kept);
    assert_true(found >= 15 && kept >= 4);
    free(t.points);
}

/* no-regress keeps the default where one run of a candidate is slower; total takes it */
static void test_objectives(void **state)
{
    (void)state;
    static nt_tune_t t;
    memset(&t, 0, sizeof(t));
    nt_tune_shape_t sh = {2, 8, 16};
    nt_tune_point_t pts[4] = {
        {NT_COLL_ALLREDUCE, {2, 8, 16}, 1 << 20, -1, -1, NT_RAN_UNKNOWN, 1, 100, 0, 0, 0, -1, 0},
        {NT_COLL_ALLREDUCE, {2, 8, 16}, 1 << 20, -1, -1, NT_RAN_UNKNOWN, 1, 100, 0, 1, 0, -1, 0},
        {NT_COLL_ALLREDUCE,
         {2, 8, 16},
         1 << 20,
         NT_ALGO_RING,
         NT_PROTO_SIMPLE,
         NT_RAN_LABEL,
         0,
         60,
         0,
         2,
         0,
         -1,
         0},
        {NT_COLL_ALLREDUCE,
         {2, 8, 16},
         1 << 20,
         NT_ALGO_RING,
         NT_PROTO_SIMPLE,
         NT_RAN_LABEL,
         0,
         110,
         0,
         3,
         0,
         -1,
         0}};
    t.points = pts;
    t.npoints = 4;
    nt_tune_choice_t ch;
    static nt_model_input_t in;
    static nt_model_table_t tab;
    t.p.objective = NT_OBJ_NO_REGRESS;
    nt_tune_choose(&t, NT_COLL_ALLREDUCE, &sh, 1 << 20, &in, &tab, 0, 0, &ch);
    assert_true(ch.basis < 0);
    assert_non_null(strstr(ch.tradeoff, "no-regress"));
    t.p.objective = NT_OBJ_TOTAL;
    nt_tune_choose(&t, NT_COLL_ALLREDUCE, &sh, 1 << 20, &in, &tab, 0, 0, &ch);
    assert_int_equal(ch.basis, NT_BASIS_MEASURED);
    assert_int_equal(ch.algo, NT_ALGO_RING);
    assert_non_null(strstr(ch.tradeoff, "slower in one run"));
}

/* ---- what ran (per-call TUNING lines) and the monotone envelope ---- */

/* A temporary nccl-tests log of 16 ranks on 2 nodes of 8 (run header, device lines, column
 * header) for minBytes..maxBytes, open for the rows; path is a mkstemp template. */
static FILE *replay_log_open(char *path, unsigned long long min, unsigned long long max)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    fprintf(fp,
            "# nThread 1 nGpus 1 minBytes %llu maxBytes %llu step: 2(factor) warmup iters: 5 "
            "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n",
            min, max);
    for (int r = 0; r < 16; r++)
        fprintf(fp,
                "#  Rank %2d Group  0 Pid %d on node%02d device  %d [0x18] NVIDIA H100 80GB HBM3\n",
                r, 100 + r, r / 8 + 1, r % 8);
    fprintf(fp, "#       size         count      type   redop    root     time   algbw   busbw "
                "#wrong     time   algbw   busbw #wrong\n");
    return fp;
}

/* Replays the log at path as the one AllReduce source of t (2 nodes x 8 GPUs, NCCL 2.28.9). */
static void replay_log(nt_tune_t *t, const char *path, unsigned long long min,
                       unsigned long long max)
{
    char err[512];
    memset(t, 0, sizeof(*t));
    assert_int_equal(nt_tune_source_read(&t->sources[0], path, err, sizeof(err)), NT_OK);
    t->nsources = 1;
    t->target_version = 22809;
    t->p.cpu_vendor = -1;
    t->p.min_bytes = min;
    t->p.max_bytes = max;
    t->p.colls[NT_COLL_ALLREDUCE] = 1;
    t->p.shapes[0] = (nt_tune_shape_t){2, 8, 16};
    t->p.nshapes = 1;
    assert_int_equal(nt_tune_replay(t), NT_OK);
}

static void replay_log_free(nt_tune_t *t, const char *path)
{
    unlink(path);
    nt_tune_source_free(&t->sources[0]);
    for (size_t k = 0; k < t->nfindings; k++)
        free(t->findings[k].text);
    for (size_t k = 0; k < t->nsummary; k++)
        free(t->summary[k].tradeoff);
    free(t->findings);
    free(t->points);
    free(t->rules);
    free(t->summary);
}

/* A baseline whose 8 MiB call took longer than its 16 MiB call; NCCL's TUNING lines say Tree/LL128
 * ran at 8 MiB and Ring/Simple at 16 MiB: an inferred Ring/Simple choice at 8 MiB. */
static void test_envelope_tuning_lines(void **state)
{
    (void)state;
    char path[] = "/tmp/nt-tune-env-XXXXXX";
    FILE *fp = replay_log_open(path, 4194304, 33554432);
    static const struct {
        unsigned long long b;
        double us;
        const char *algo, *proto;
    } rows[] = {{4194304, 60.0, "TREE", "LL128"},
                {8388608, 120.0, "TREE", "LL128"},
                {16777216, 100.0, "RING", "SIMPLE"},
                {33554432, 190.0, "RING", "SIMPLE"}};
    for (size_t i = 0; i < 4; i++) {
        fprintf(fp,
                "node01:100:100 [0] NCCL INFO AllReduce: %llu Bytes -> Algo %s proto %s "
                "channel{Lo..Hi}={0..15}\n",
                rows[i].b, rows[i].algo, rows[i].proto);
        double alg = (double)rows[i].b / (rows[i].us * 1e3), bus = alg * 30 / 16;
        fprintf(fp,
                "%12llu  %12llu     float     sum      -1  %7.1f  %6.2f  %6.2f      0  %7.1f  "
                "%6.2f  %6.2f      0\n",
                rows[i].b, rows[i].b / 4, rows[i].us, alg, bus, rows[i].us, alg, bus);
    }
    fprintf(fp, "# Avg bus bandwidth    : 100.0\n");
    fclose(fp);
    static nt_tune_t t;
    replay_log(&t, path, 4194304, 33554432);
    assert_int_equal(t.npoints, 4);
    assert_int_equal(t.points[1].how, NT_RAN_MEASURED); /* from the TUNING line */
    assert_int_equal(t.points[1].algo, NT_ALGO_TREE);
    assert_int_equal(t.points[2].proto, NT_PROTO_SIMPLE);
    assert_int_equal(nt_tune_search(&t), NT_OK);
    assert_int_equal(t.nrules, 1);
    assert_int_equal(t.rules[0].basis, NT_BASIS_INFERRED);
    assert_true(t.rules[0].min_bytes == 8388608 && t.rules[0].max_bytes == 8388608);
    assert_true(t.rules[0].algo == NT_ALGO_RING && t.rules[0].proto == NT_PROTO_SIMPLE);
    replay_log_free(&t, path);
}

/* A TUNING line's algorithm or protocol index beyond an int ("Algo 4294967297", as NCCL
 * 2.20-2.23 print indices) is no index: atoi of it is UB, and glibc's truncation read it as 1
 * (RING) and the protocol 4294967298 as 2 (SIMPLE), a "measured" choice the log never showed. */
static void test_tuning_line_index_range(void **state)
{
    (void)state;
    char path[] = "/tmp/nt-tune-idx-XXXXXX";
    FILE *fp = replay_log_open(path, 8388608, 8388608);
    fprintf(fp, "node01:100:100 [0] NCCL INFO AllReduce: 8388608 Bytes -> Algo 4294967297 proto "
                "4294967298 channel{Lo..Hi}={0..15}\n");
    fprintf(fp,
            "     8388608       2097152     float     sum      -1    120.0   69.91  131.07      0"
            "    120.0   69.91  131.07      0\n# Avg bus bandwidth    : 100.0\n");
    fclose(fp);
    static nt_tune_t t;
    replay_log(&t, path, 8388608, 8388608);
    assert_int_equal(t.npoints, 1);
    assert_int_not_equal(t.points[0].how, NT_RAN_MEASURED);
    replay_log_free(&t, path);
}

/* ---- one definition of the rule format ---- */

/* NCCL 2.30.7's own chunk sizes at the default buffers (calcCollChunking, src/enqueue.cc:2222-2227)
 * and the noise rule every measured win goes through. */
static void test_nccl_chunk_and_noise(void **state)
{
    (void)state;
    assert_int_equal(nt_tune_nccl_chunk_bytes(NT_COLL_ALLREDUCE, NT_ALGO_RING, NT_PROTO_SIMPLE),
                     2097152); /* 4 MiB / 8 steps x 4 chunk steps */
    assert_int_equal(nt_tune_nccl_chunk_bytes(NT_COLL_BROADCAST, NT_ALGO_RING, NT_PROTO_SIMPLE),
                     524288);  /* BROADCAST_CHUNKSTEPS 1 */
    assert_int_equal(nt_tune_nccl_chunk_bytes(NT_COLL_ALLREDUCE, NT_ALGO_TREE, NT_PROTO_SIMPLE),
                     524288);  /* chunk steps only for ring */
    assert_int_equal(nt_tune_nccl_chunk_bytes(NT_COLL_ALLREDUCE, NT_ALGO_RING, NT_PROTO_LL),
                     32768);   /* 512 KiB / 8 / 2 */
    assert_int_equal(nt_tune_nccl_chunk_bytes(NT_COLL_ALLREDUCE, NT_ALGO_RING, NT_PROTO_LL128),
                     576000);  /* 4915200 / 8 x 15/16 = 300 grains of 1920 */
    assert_int_equal(nt_tune_nccl_chunk_bytes(NT_COLL_ALLREDUCE, NT_ALGO_NVLS, NT_PROTO_SIMPLE),
                     0);
    assert_true(nt_tune_beats(96.9, 100, 0));   /* beyond the 3 % floor */
    assert_false(nt_tune_beats(97.1, 100, 0));  /* within it */
    assert_false(nt_tune_beats(94.0, 100, 0.08)); /* within the runs' own 8 % spread */
}

static void test_schema_keys(void **state)
{
    (void)state;
    cJSON *s = NULL;
    assert_int_equal(nt_json_read_file("reports/schema/tuning.schema.json", 1 << 20, &s), NT_OK);
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    props = cJSON_GetObjectItemCaseSensitive(props, "rules");
    props = cJSON_GetObjectItemCaseSensitive(props, "items");
    props = cJSON_GetObjectItemCaseSensitive(props, "properties");
    assert_non_null(props);
    assert_int_equal(cJSON_GetArraySize(props), NT_RK_COUNT);
    for (int k = 0; k < NT_RK_COUNT; k++)
        assert_non_null(cJSON_GetObjectItemCaseSensitive(props, nt_rule_keys[k]));
    cJSON_Delete(s);
}

/* Every kind of finding has its row of the check table (tuning.json carries code and category
 * beside each finding); a kind the table lacks has none. */
static void test_finding_codes(void **state)
{
    (void)state;
    for (int k = NT_ANOMALY_MID_SWEEP_DROP; k <= NT_ANOMALY_BASELINE_DEGRADED; k++) {
        const char *code = nt_tune_finding_code((nt_anomaly_kind_t)k);
        assert_non_null(code);
        assert_non_null(nt_check_by_code(code));
    }
    assert_string_equal(nt_tune_finding_code(NT_ANOMALY_CONFOUNDED), "NT-RUN-203");
    assert_string_equal(nt_category_name(nt_check_by_code("NT-RUN-203")->category), "config");
    assert_string_equal(nt_tune_finding_code(NT_ANOMALY_BASELINE_DEGRADED), "NT-RUN-101");
    assert_null(nt_tune_finding_code((nt_anomaly_kind_t)(NT_ANOMALY_BASELINE_DEGRADED + 1)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_fixtures),
        cmocka_unit_test(test_alltoall_sendrecv_no_rules),
        cmocka_unit_test(test_nccltests_json),
        cmocka_unit_test(test_nccltests_json_out_of_range),
        cmocka_unit_test(test_report_pcie_width_out_of_range),
        cmocka_unit_test(test_nccltests_rows),
        cmocka_unit_test(test_anomaly_sweep),
        cmocka_unit_test(test_anomaly_compare_env),
        cmocka_unit_test(test_nccllog),
        cmocka_unit_test(test_nccllog_fixture_214),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_search_synthetic),
        cmocka_unit_test(test_objectives),
        cmocka_unit_test(test_envelope_tuning_lines),
        cmocka_unit_test(test_tuning_line_index_range),
        cmocka_unit_test(test_schema_keys),
        cmocka_unit_test(test_nccl_chunk_and_noise),
        cmocka_unit_test(test_finding_codes),
    };
    return cmocka_run_group_tests_name("nettune tune", tests, NULL, NULL);
}
