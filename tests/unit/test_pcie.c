/* PCIe link check without traffic, on the captured sysfs trees of tests/fixtures/sysfs/
 * (README.md there lists each case) and on this machine's real /sys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/pcie.h"
#include "nettune/sysfs.h"

#define CASE(name) NT_TEST_FIXTURES "/sysfs/" name

static int teardown(void **state)
{
    (void)state;
    nt_sysfs_set_root(NULL);
    return 0;
}

static void read_case(const char *root, const char *bdf, nt_pcie_link_t *l)
{
    nt_sysfs_set_root(root);
    assert_int_equal(nt_pcie_read(bdf, l), NT_OK);
    assert_string_equal(l->bdf, bdf);
}

static void test_gen(void **state)
{
    (void)state;
    assert_int_equal(nt_pcie_gen(2.5), 1);
    assert_int_equal(nt_pcie_gen(5.0), 2);
    assert_int_equal(nt_pcie_gen(8.0), 3);
    assert_int_equal(nt_pcie_gen(16.0), 4);
    assert_int_equal(nt_pcie_gen(32.0), 5);
    assert_int_equal(nt_pcie_gen(64.0), 6);
    assert_int_equal(nt_pcie_gen(0), 0);
    assert_int_equal(nt_pcie_gen(10.0), 0);
    assert_true(nt_pcie_parse_speed("8.0 GT/s PCIe") == 8.0);
    assert_true(nt_pcie_parse_speed("8 GT/s") == 8.0);
    assert_true(nt_pcie_parse_speed("2.5 GT/s") == 2.5);
    assert_true(nt_pcie_parse_speed("32.0 GT/s PCIe") == 32.0);
    assert_true(nt_pcie_parse_speed("Unknown") == 0);
    assert_true(nt_pcie_parse_speed("Unknown speed") == 0);
    assert_true(nt_pcie_parse_speed("16") == 0);
    assert_true(nt_pcie_parse_speed("") == 0);
    assert_true(nt_pcie_parse_speed(NULL) == 0);
}

static void test_healthy_gen4_behind_switch(void **state)
{
    nt_pcie_link_t l;
    char msg[256];
    (void)state;

    read_case(CASE("gen4-x16-healthy"), "0000:1a:00.0", &l);
    /* The upstream port is the switch's downstream port, the parent directory. */
    assert_string_equal(l.upstream_bdf, "0000:19:08.0");
    assert_true(l.cur_gts == 16.0 && l.max_gts == 16.0 && l.up_max_gts == 16.0);
    assert_int_equal(l.cur_width, 16);
    assert_int_equal(l.max_width, 16);
    assert_int_equal(l.up_max_width, 16);
    assert_int_equal(nt_pcie_judge(&l, "GPU 0", msg, sizeof(msg)), NT_PASS);
    assert_non_null(strstr(msg, "0000:1a:00.0 (GPU 0)"));

    /* The switch's upstream port hangs below the root port. */
    read_case(CASE("gen4-x16-healthy"), "0000:18:00.0", &l);
    assert_string_equal(l.upstream_bdf, "0000:17:00.0");
    /* The root port's parent is pci0000:17, the host bridge: no upstream port. */
    read_case(CASE("gen4-x16-healthy"), "0000:17:00.0", &l);
    assert_string_equal(l.upstream_bdf, "");
    assert_true(l.up_max_gts == 0 && l.up_max_width == 0);
    assert_int_equal(nt_pcie_judge(&l, NULL, msg, sizeof(msg)), NT_PASS);
}

static void test_idle_gpu_is_warn_not_fail(void **state)
{
    nt_pcie_link_t l;
    char msg[256];
    cJSON *c;
    (void)state;

    read_case(CASE("gpu-idle-2.5gts"), "0000:3b:00.0", &l);
    assert_string_equal(l.upstream_bdf, "0000:3a:00.0");
    assert_true(l.cur_gts == 2.5 && l.max_gts == 16.0);
    assert_int_equal(nt_pcie_judge(&l, "GPU 1", msg, sizeof(msg)), NT_WARN);
    assert_non_null(
        strstr(msg, "0000:3b:00.0 (GPU 1) runs 2.5 GT/s (Gen1), capable of 16 GT/s (Gen4)"));

    c = nt_pcie_check_create(&l, "node01", "GPU 1");
    assert_non_null(c);
    assert_string_equal(cJSON_GetObjectItem(c, "name")->valuestring, "pcie_link");
    assert_string_equal(cJSON_GetObjectItem(c, "verdict")->valuestring, "warn");
    assert_string_equal(cJSON_GetObjectItem(c, "unit")->valuestring, "GT/s");
    assert_true(cJSON_GetObjectItem(c, "observed")->valuedouble == 2.5);
    assert_true(cJSON_GetObjectItem(c, "expected")->valuedouble == 16.0);
    cJSON_Delete(c);
}

static void test_x8_in_x16_fails(void **state)
{
    nt_pcie_link_t l;
    char msg[256];
    cJSON *c, *o = cJSON_CreateObject(), *p;
    (void)state;

    read_case(CASE("x8-in-x16-slot"), "0000:86:00.0", &l);
    assert_int_equal(l.cur_width, 8);
    assert_int_equal(l.max_width, 16);
    assert_int_equal(l.up_max_width, 16);
    assert_int_equal(nt_pcie_judge(&l, "GPU 2", msg, sizeof(msg)), NT_FAIL);
    assert_string_equal(msg, "0000:86:00.0 (GPU 2) runs x8, capable of x16");

    c = nt_pcie_check_create(&l, "node01", "GPU 2");
    assert_string_equal(cJSON_GetObjectItem(c, "verdict")->valuestring, "fail");
    assert_string_equal(cJSON_GetObjectItem(c, "unit")->valuestring, "lanes");
    assert_int_equal(cJSON_GetObjectItem(c, "observed")->valueint, 8);
    assert_int_equal(cJSON_GetObjectItem(c, "expected")->valueint, 16);
    assert_string_equal(cJSON_GetObjectItem(c, "target")->valuestring, "0000:86:00.0 (GPU 2)");
    cJSON_Delete(c);

    assert_int_equal(nt_pcie_to_json(&l, o), NT_OK);
    p = cJSON_GetObjectItem(o, "pcie");
    assert_int_equal(cJSON_GetObjectItem(p, "gen")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(p, "width")->valueint, 8);
    assert_int_equal(cJSON_GetObjectItem(p, "max_gen")->valueint, 4);
    assert_int_equal(cJSON_GetObjectItem(p, "max_width")->valueint, 16);
    cJSON_Delete(o);
}

static void test_x16_card_in_x8_slot_passes(void **state)
{
    nt_pcie_link_t l;
    char msg[256];
    double gts;
    int width;
    (void)state;

    read_case(CASE("x16-card-x8-slot"), "0000:5e:00.0", &l);
    /* The older kernel format "8 GT/s" without the "PCIe" suffix. */
    assert_true(l.cur_gts == 8.0 && l.max_gts == 8.0 && l.up_max_gts == 8.0);
    assert_int_equal(l.max_width, 16);
    assert_int_equal(l.up_max_width, 8);
    nt_pcie_expected(&l, &gts, &width);
    assert_int_equal(width, 8);
    assert_true(gts == 8.0);
    assert_int_equal(nt_pcie_judge(&l, "mlx5_0", msg, sizeof(msg)), NT_PASS);
    assert_non_null(strstr(msg, "0000:5e:00.0 (mlx5_0) runs x8"));
    assert_non_null(strstr(msg, "capable of x16"));

    /* The same link read without its upstream port would be a failure: the slot matters. */
    l.up_max_width = 0;
    assert_int_equal(nt_pcie_judge(&l, "mlx5_0", msg, sizeof(msg)), NT_FAIL);
}

static void test_no_link_files(void **state)
{
    nt_pcie_link_t l;
    char msg[256];
    (void)state;

    nt_sysfs_set_root(CASE("no-link-files"));
    assert_int_equal(nt_pcie_read("0000:00:04.0", &l), NT_ERR_UNSUPPORTED);
    assert_int_equal(nt_pcie_read("0000:00:09.0", &l), NT_ERR_NOT_FOUND);
    assert_int_equal(nt_pcie_read("not-a-bdf-that-fits-in-16", &l), NT_ERR_INVALID);

    /* Link down: "Unknown" speed, width 0 -> unknown, so the check is skipped, not failed. */
    assert_int_equal(nt_pcie_read("0000:00:05.0", &l), NT_OK);
    assert_true(l.cur_gts == 0 && l.max_gts == 16.0);
    assert_int_equal(l.cur_width, 0);
    assert_string_equal(l.upstream_bdf, "");
    assert_int_equal(nt_pcie_judge(&l, "GPU 0", msg, sizeof(msg)), NT_SKIPPED);
    assert_non_null(strstr(msg, "0000:00:05.0 (GPU 0)"));
}

/* Judge logic on synthetic links, independent of the trees. */
static void test_judge_matrix(void **state)
{
    nt_pcie_link_t l = {.bdf = "0000:18:00.0", .upstream_bdf = "0000:17:00.0", .cur_gts = 8.0,
                        .max_gts = 16.0, .cur_width = 8, .max_width = 16, .up_max_gts = 16.0,
                        .up_max_width = 16};
    char msg[256];
    (void)state;

    /* Narrower and slower: a failure whose message carries both. */
    assert_int_equal(nt_pcie_judge(&l, "GPU 0", msg, sizeof(msg)), NT_FAIL);
    assert_string_equal(msg, "0000:18:00.0 (GPU 0) runs x8, capable of x16 (and 8 GT/s, capable "
                             "of 16 GT/s)");
    /* A Gen5 card in a Gen4 slot running Gen4: pass. */
    l.cur_gts = 16.0, l.max_gts = 32.0, l.cur_width = 16, l.up_max_gts = 16.0;
    assert_int_equal(nt_pcie_judge(&l, NULL, msg, sizeof(msg)), NT_PASS);
    /* ... running Gen3: warn against the slot's Gen4. */
    l.cur_gts = 8.0;
    assert_int_equal(nt_pcie_judge(&l, NULL, msg, sizeof(msg)), NT_WARN);
    assert_non_null(strstr(msg, "capable of 16 GT/s (Gen4)"));
    /* Wider than the maximum (should not happen) is not a fault. */
    l.cur_gts = 16.0, l.cur_width = 16, l.max_width = 8, l.up_max_width = 0;
    assert_int_equal(nt_pcie_judge(&l, NULL, msg, sizeof(msg)), NT_PASS);
}

/* This machine's real /sys: every PCI device reads as OK or unsupported (a VM's conventional
 * PCI devices have no link files), never an error or a crash. */
static void test_live(void **state)
{
    char **names = NULL;
    size_t n = 0;
    int ok = 0, unsupported = 0;
    (void)state;

    nt_sysfs_set_root("");
    if (nt_sysfs_list("/sys/bus/pci/devices", &names, &n) != NT_OK)
        skip();
    for (size_t i = 0; i < n; i++) {
        nt_pcie_link_t l;
        char msg[256];
        nt_status_t st = nt_pcie_read(names[i], &l);
        if (st == NT_ERR_UNSUPPORTED) {
            unsupported++;
            continue;
        }
        assert_int_equal(st, NT_OK);
        ok++;
        assert_true(l.max_width == 0 || l.cur_width <= 32);
        nt_verdict_t v = nt_pcie_judge(&l, NULL, msg, sizeof(msg));
        assert_true(v == NT_PASS || v == NT_WARN || v == NT_FAIL || v == NT_SKIPPED);
        print_message("live %s: %s\n", names[i], msg);
    }
    print_message("live: %zu PCI devices, %d with link state, %d without\n", n, ok, unsupported);
    assert_int_equal((size_t)(ok + unsupported), n);
    nt_sysfs_list_free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_gen, teardown),
        cmocka_unit_test_teardown(test_healthy_gen4_behind_switch, teardown),
        cmocka_unit_test_teardown(test_idle_gpu_is_warn_not_fail, teardown),
        cmocka_unit_test_teardown(test_x8_in_x16_fails, teardown),
        cmocka_unit_test_teardown(test_x16_card_in_x8_slot_passes, teardown),
        cmocka_unit_test_teardown(test_no_link_files, teardown),
        cmocka_unit_test_teardown(test_judge_matrix, teardown),
        cmocka_unit_test_teardown(test_live, teardown),
    };
    return cmocka_run_group_tests_name("pcie", tests, NULL, NULL);
}
