/* The GPU health rules (lib/node/gpu_health.c) through the NVML wrapper on the simulated
 * 8-GPU NVML (tests/gpu/fake_nvml.c): the healthy node passes every rule on every GPU, and each
 * fault knob makes exactly its own rule on its own GPU give its own code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/nodecheck.h"
#include "nettune/nvml.h"

#define FAKE_NVML NT_TEST_FAKE_DIR "/libnt-fake-nvml.so"
#define NRULES 6

typedef void (*rule_fn)(const nt_gpu_health_t *, nt_nodecheck_t *);
static const rule_fn rules[NRULES] = {nt_gpu_ecc_judge, nt_gpu_remap_judge, nt_gpu_throttle_judge,
                                      nt_gpu_persistence_judge, nt_gpu_reset_judge,
                                      nt_gpu_retired_judge};

/* Judge every rule on every GPU into out[gpu][rule]; returns the count of warnings and failures
 * (a rule that does not apply to the GPU is not judged, and not counted). */
static int judge_node(nt_nodecheck_t out[8][NRULES])
{
    char why[256];
    int n = 0, bad = 0;

    nt_nvml_reset();
    assert_int_equal(nt_nvml_load(FAKE_NVML, why, sizeof(why)), NT_OK);
    assert_int_equal(nt_nvml_gpu_count(&n), NT_OK);
    assert_int_equal(n, 8);
    for (int g = 0; g < n; g++) {
        nt_gpu_health_t h;
        assert_int_equal(nt_nvml_health(g, &h), NT_OK);
        for (int r = 0; r < NRULES; r++) {
            rules[r](&h, &out[g][r]);
            bad += out[g][r].verdict == NT_WARN || out[g][r].verdict == NT_FAIL;
        }
    }
    nt_nvml_reset();
    return bad;
}

static void test_healthy_node(void **state)
{
    nt_nodecheck_t out[8][NRULES];
    (void)state;
    assert_int_equal(judge_node(out), 0);
    assert_string_equal(out[0][0].observed, "uncorrectable volatile 0, aggregate 0");
    assert_string_equal(out[7][2].observed, "0x1"); /* idle: not a fault */
    assert_string_equal(out[3][4].target, "gpu3");
    /* an H100 remaps rows and retires no pages: that rule does not apply */
    {
        nt_gpu_health_t h = {.remap_ok = 1};
        assert_int_equal(nt_gpu_retired_applies(&h), 0);
        h.retired_ok = 1;
        assert_int_equal(nt_gpu_retired_applies(&h), 1);
    }
    for (int g = 0; g < 8; g++)
        for (int r = 0; r < NRULES; r++)
            assert_int_equal(out[g][r].verdict, r == 5 ? NT_NOT_JUDGED : NT_PASS);
}

/* A GPU before Ampere: page retirement instead of row remapping. */
static void test_old_gpu_retired_pages(void **state)
{
    nt_nodecheck_t out[8][NRULES];
    (void)state;
    setenv("NT_FAKE_NVML_OLD_GPU", "1", 1);
    setenv("NT_FAKE_NVML_RETIRED", "6", 1);
    assert_int_equal(judge_node(out), 1);
    unsetenv("NT_FAKE_NVML_OLD_GPU");
    unsetenv("NT_FAKE_NVML_RETIRED");
    assert_int_equal(out[6][5].verdict, NT_WARN);
    assert_string_equal(out[6][5].code, "NT-GPU-019");
    assert_int_equal(out[6][1].verdict, NT_NOT_JUDGED); /* no row remapping */
    assert_int_equal(out[0][5].verdict, NT_PASS);
}

static void test_each_fault_its_own_check(void **state)
{
    static const struct {
        const char *knob;
        int rule;
        nt_verdict_t v;
        const char *code, *observed;
    } cases[] = {
        {"NT_FAKE_NVML_ECC", 0, NT_FAIL, "NT-GPU-012", "uncorrectable volatile 2, aggregate 2"},
        {"NT_FAKE_NVML_REMAP", 1, NT_WARN, "NT-GPU-014",
         "pending yes, failure no, uncorrectable rows 4"},
        {"NT_FAKE_NVML_THROTTLE", 2, NT_WARN, "NT-GPU-016",
         "0x48 hw_slowdown hw_thermal_slowdown"},
        {"NT_FAKE_NVML_PM_OFF", 3, NT_WARN, "NT-GPU-017", "disabled"},
        {"NT_FAKE_NVML_RESET", 4, NT_FAIL, "NT-GPU-018", "yes"},
    };
    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        nt_nodecheck_t out[8][NRULES];
        setenv(cases[c].knob, "5", 1);
        assert_int_equal(judge_node(out), 1);
        unsetenv(cases[c].knob);
        assert_int_equal(out[5][cases[c].rule].verdict, cases[c].v);
        assert_string_equal(out[5][cases[c].rule].code, cases[c].code);
        assert_string_equal(out[5][cases[c].rule].observed, cases[c].observed);
    }
}

/* The simulated NVML set from captured figures (tests/fixtures/nodecheck/opfiles/MANIFEST.md):
 * l4rz's C4130 (HW Slowdown + HW Power Brake = 0x88) warns, open_clip #703's SW Power Cap
 * alone (0x4) passes, the GH200's one lifetime uncorrectable error warns NT-GPU-013. */
static void test_captured_figures(void **state)
{
    nt_nodecheck_t out[8][NRULES];
    (void)state;
    setenv("NT_FAKE_NVML_THROTTLE", "3", 1);
    setenv("NT_FAKE_NVML_THROTTLE_MASK", "0x88", 1);
    assert_int_equal(judge_node(out), 1);
    assert_int_equal(out[3][2].verdict, NT_WARN);
    assert_string_equal(out[3][2].code, "NT-GPU-016");
    assert_string_equal(out[3][2].observed, "0x88 hw_slowdown hw_power_brake_slowdown");
    setenv("NT_FAKE_NVML_THROTTLE_MASK", "0x4", 1);
    assert_int_equal(judge_node(out), 0);
    assert_string_equal(out[3][2].observed, "0x4");
    unsetenv("NT_FAKE_NVML_THROTTLE");
    unsetenv("NT_FAKE_NVML_THROTTLE_MASK");
    setenv("NT_FAKE_NVML_ECC_AGG", "2", 1);
    assert_int_equal(judge_node(out), 1);
    unsetenv("NT_FAKE_NVML_ECC_AGG");
    assert_int_equal(out[2][0].verdict, NT_WARN);
    assert_string_equal(out[2][0].code, "NT-GPU-013");
    assert_string_equal(out[2][0].observed, "uncorrectable volatile 0, aggregate 1");
}

static void test_old_driver_not_judged(void **state)
{
    nt_nodecheck_t out[8][NRULES];
    (void)state;
    setenv("NT_FAKE_NVML_NO_HEALTH", "1", 1);
    assert_int_equal(judge_node(out), 0);
    unsetenv("NT_FAKE_NVML_NO_HEALTH");
    for (int r = 0; r < NRULES; r++) {
        assert_int_equal(out[2][r].verdict, NT_NOT_JUDGED);
        assert_non_null(strstr(out[2][r].message, "NVML gives no"));
    }
}

/* The rules on facts alone: the lifetime-only ECC warning and a failed remap. */
static void test_rules_on_facts(void **state)
{
    nt_gpu_health_t h = {.index = 1, .ecc_ok = 1, .ecc_uncorr_aggregate = 3, .remap_ok = 1,
                         .remap_failed = 1, .remap_pending = 1};
    nt_nodecheck_t o;
    (void)state;
    nt_gpu_ecc_judge(&h, &o);
    assert_int_equal(o.verdict, NT_WARN);
    assert_string_equal(o.code, "NT-GPU-013");
    nt_gpu_remap_judge(&h, &o);
    assert_int_equal(o.verdict, NT_FAIL);
    assert_string_equal(o.code, "NT-GPU-015");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthy_node),
        cmocka_unit_test(test_each_fault_its_own_check),
        cmocka_unit_test(test_old_gpu_retired_pages),
        cmocka_unit_test(test_old_driver_not_judged),
        cmocka_unit_test(test_captured_figures),
        cmocka_unit_test(test_rules_on_facts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
