/* End to end: a probe report and replayed nccl-tests logs -> nettune tune -> the tuning
 * file -> the plugin driven as NCCL drives it (dlopen RTLD_NOW|RTLD_LOCAL, ncclTunerPlugin_v5,
 * a contiguous float[7][3] cost table passed as float **, -1 for the cells NCCL ignores; see
 * plugins/nccl-tuner/tests/test_driver.c) -> the algorithm/protocol NCCL would then run at each
 * size: Ring/Simple where the replay measured it faster (16 MiB up to the next predicted size),
 * NCCL's own choice elsewhere, and never a cell NCCL marked IGNORE. The same through NCCL's
 * example-tuner CSV. Usage: test_tune_e2e NETTUNE-TUNE LIBNCCL-TUNER-NETTUNE.SO (from the
 * repository root). */
#include <dlfcn.h>
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

#include "nccl_tuner_abi.h"
#include "tuner/tune.h"

static const char *tune_bin, *plugin_path;
static char dir[] = "/tmp/nt-tune-e2e-XXXXXX";

#define REPORT "tests/fixtures/tuner/h100-2x8-ib400-report.json"
#define BASE "tests/fixtures/tuner/allreduce-2x8-default.log"
#define RING "tests/fixtures/tuner/allreduce-2x8-ring-simple.log"

static void quiet_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                      const char *fmt, ...)
{
    (void)level;
    (void)flags;
    (void)file;
    (void)line;
    (void)fmt;
}

static int run_tune(const char *extra)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "%s " REPORT " --replay " BASE " --replay " RING
             " --label algo=ring,proto=simple --colls allreduce --shape 2x8 --output %s/tuning.json"
             " --env-out %s/nccl.env --csv-out %s/nccl_tuner.csv --quiet %s",
             tune_bin, dir, dir, dir, extra);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The model's table for the 2x8 shape from the same report, as the tuner builds it. */
static void model_for_shape(nt_model_input_t *in, nt_model_table_t *tab)
{
    static nt_tune_t t;
    memset(&t, 0, sizeof(t));
    assert_int_equal(nt_rdoc_open(REPORT, &t.report), NT_OK);
    t.have_report = 1;
    t.target_version = 22809;
    t.version_label = NT_FACT_MEASURED;
    t.p.cpu_vendor = -1;
    nt_tune_shape_t sh = {2, 8, 16};
    assert_int_equal(nt_tune_model_input(&t, &sh, in, NULL, 0), NT_OK);
    assert_int_equal(nt_model_compute(in, NULL, tab), NT_OK);
    nt_rdoc_close(&t.report);
}

/* NCCL's pick from a cost table: the smallest entry >= 0 (src/graph/tuning.cc topoGetAlgoInfo). */
static void pick(float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int *a, int *p)
{
    float best = -1;
    *a = *p = -1;
    for (int i = 0; i < NCCL_NUM_ALGORITHMS; i++)
        for (int j = 0; j < NCCL_NUM_PROTOCOLS; j++)
            if (t[i][j] >= 0 && (best < 0 || t[i][j] < best)) {
                best = t[i][j];
                *a = i;
                *p = j;
            }
}

static void drive(const char *env, const char *file)
{
    nt_model_input_t in;
    nt_model_table_t tab;
    model_for_shape(&in, &tab);
    unsetenv("NETTUNE_TUNING_FILE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    setenv(env, file, 1);
    void *lib = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    const ncclTuner_v5_t *v5 = dlsym(lib, "ncclTunerPlugin_v5");
    assert_non_null(v5);
    void *ctx = NULL;
    ncclNvlDomainInfo_v5_t nvl = {2, 8, 8};
    assert_int_equal(v5->init(&ctx, 0x42, 16, 2, quiet_log, &nvl, NULL), ncclSuccess);
    int ring_sizes = 0, default_sizes = 0;
    for (unsigned long long b = 1024; b <= (8ull << 30); b <<= 1) {
        for (int half = 0; half < 2; half++) { /* the grid size and one between two grid sizes */
            unsigned long long bytes = half ? b + b / 2 : b;
            float cost[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS],
                orig[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
            for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
                for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++) {
                    /* what NCCL's cost table holds for a float sum call (IGNORE = -1) */
                    int ok = nt_model_eligible(&in, &tab, NT_COLL_ALLREDUCE, (nt_algo_t)a,
                                               (nt_proto_t)p, NT_DTYPE_FLOAT32, NT_REDOP_SUM);
                    cost[a][p] =
                        ok ? (float)nt_model_time_us(&in, &tab, NT_COLL_ALLREDUCE, (nt_algo_t)a,
                                                     (nt_proto_t)p, (size_t)bytes, 1, NULL)
                           : -1.0f; /* NCCL_ALGO_PROTO_IGNORE */
                    orig[a][p] = cost[a][p];
                }
            int da, dp;
            pick(orig, &da, &dp); /* NCCL's own choice */
            int nch = 0;
            assert_int_equal(v5->getCollInfo(ctx, ncclFuncAllReduce, bytes, 1, (float **)cost,
                                             NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0, &nch),
                             ncclSuccess);
            int a, p;
            pick(cost, &a, &p);
            /* never an IGNORE cell, and the plugin never wrote into one */
            assert_true(a >= 0 && orig[a][p] >= 0);
            for (int i = 0; i < NCCL_NUM_ALGORITHMS; i++)
                for (int j = 0; j < NCCL_NUM_PROTOCOLS; j++)
                    if (orig[i][j] < 0)
                        assert_true(cost[i][j] < 0);
            assert_int_equal(nch, 0);
            /* the measured rule ends at the largest size measured (1 GiB, the logs' last
             * row): 1.5 GiB is NCCL's own again */
            if (bytes >= (16ull << 20) && bytes <= (1ull << 30)) {
                if (a != NT_ALGO_RING || p != NT_PROTO_SIMPLE)
                    fail_msg("%llu B: expected Ring/Simple (measured), got %d/%d", bytes, a, p);
                ring_sizes++;
            } else {
                if (a != da || p != dp)
                    fail_msg("%llu B: expected NCCL's own %d/%d, got %d/%d", bytes, da, dp, a, p);
                default_sizes++;
            }
        }
    }
    printf("%s: Ring/Simple at %d sizes (16 MiB .. 1 GiB), NCCL's own choice at %d sizes, no "
           "IGNORE cell\n",
           env, ring_sizes, default_sizes);
    assert_int_equal(ring_sizes, 13);
    assert_int_equal(default_sizes, 35);
    v5->finalize(ctx);
    dlclose(lib);
}

static void test_json(void **state)
{
    (void)state;
    assert_int_equal(run_tune(""), 0);
    char path[256];
    snprintf(path, sizeof(path), "%s/tuning.json", dir);
    drive("NETTUNE_TUNING_FILE", path);
}

static void test_csv(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof(path), "%s/nccl_tuner.csv", dir);
    drive("NCCL_TUNER_CONFIG_FILE", path);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s NETTUNE-TUNE LIBNCCL-TUNER-NETTUNE.SO\n", argv[0]);
        return 2;
    }
    tune_bin = argv[1];
    plugin_path = argv[2];
    if (!mkdtemp(dir))
        return 2;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_csv),
    };
    int rc = cmocka_run_group_tests_name("nettune tune end to end", tests, NULL, NULL);
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
