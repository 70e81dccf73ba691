/* Rate tables: every IB speed x width, the coding rules, sysfs rate strings, RoCE Ethernet
 * speeds, PCIe link bandwidth. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rdma.h"

static void test_every_speed_and_width(void **state)
{
    /* code, per-lane data, per-lane signalling */
    static const struct { int code; const char *name; double data, sig; } sp[] = {
        {1, "SDR", 2.0, 2.5},        {2, "DDR", 4.0, 5.0},           {4, "QDR", 8.0, 10.0},
        {8, "FDR10", 10.0, 10.3125}, {16, "FDR", 13.636363, 14.0625}, {32, "EDR", 25.0, 25.78125},
        {64, "HDR", 50.0, 51.5625},  {128, "NDR", 100.0, 103.125},    {256, "XDR", 200.0, 206.25},
    };
    static const struct { int code, lanes; } wd[] = {{1, 1}, {16, 2}, {2, 4}, {4, 8}, {8, 12}};
    (void)state;
    for (size_t s = 0; s < sizeof(sp) / sizeof(sp[0]); s++) {
        const nt_ib_speed_t *x = nt_ib_speed_from_code(sp[s].code);
        assert_non_null(x);
        assert_string_equal(x->name, sp[s].name);
        assert_ptr_equal(nt_ib_speed_from_name(sp[s].name), x);
        for (size_t w = 0; w < sizeof(wd) / sizeof(wd[0]); w++) {
            nt_port_rate_t r;
            int lanes = nt_ib_width_lanes(wd[w].code);
            assert_int_equal(lanes, wd[w].lanes);
            assert_int_equal(nt_port_rate_compute(lanes, x, 0, &r), NT_OK);
            assert_true(fabs(r.data_Gbps - lanes * sp[s].data) < 1e-3);
            assert_true(fabs(r.signal_Gbps - lanes * sp[s].sig) < 1e-3);
            assert_string_equal(r.encoding, sp[s].code <= 4 ? "8b/10b" : "64b/66b");
        }
    }
    assert_null(nt_ib_speed_from_code(0));
    assert_null(nt_ib_speed_from_code(3));
    assert_int_equal(nt_ib_width_lanes(0), 0);
}

static void test_well_known_rates(void **state)
{
    nt_port_rate_t r;
    (void)state;
    /* 4x QDR signals 40 Gb/s but carries 32 (the example) */
    nt_port_rate_compute(4, nt_ib_speed_from_name("QDR"), 0, &r);
    assert_true(r.signal_Gbps == 40.0 && r.data_Gbps == 32.0);
    nt_port_rate_compute(4, nt_ib_speed_from_name("HDR"), 0, &r);
    assert_true(r.nominal_Gbps == 200.0 && r.data_Gbps == 200.0);
    nt_port_rate_compute(4, nt_ib_speed_from_name("NDR"), 0, &r);
    assert_true(r.data_Gbps == 400.0);
    nt_port_rate_compute(4, nt_ib_speed_from_name("XDR"), 0, &r);
    assert_true(r.data_Gbps == 800.0);
    assert_int_equal(nt_port_rate_compute(0, nt_ib_speed_from_name("XDR"), 0, &r), NT_ERR_INVALID);
    assert_int_equal(nt_port_rate_compute(4, NULL, 0, &r), NT_ERR_INVALID);
}

static void test_roce_ethernet_speeds(void **state)
{
    /* How mlx5/rxe report Ethernet speeds as IB width x speed: data = nominal */
    static const struct { int lanes; const char *sp; double gbe; } e[] = {
        {1, "SDR", 2.5},  {1, "QDR", 10},  {1, "EDR", 25},  {4, "QDR", 40},  {4, "FDR10", 40},
        {2, "EDR", 50},   {1, "HDR", 50},  {4, "EDR", 100}, {2, "HDR", 100}, {4, "HDR", 200},
        {4, "NDR", 400},  {8, "HDR", 400}, {8, "NDR", 800},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
        nt_port_rate_t r;
        assert_int_equal(nt_port_rate_compute(e[i].lanes, nt_ib_speed_from_name(e[i].sp), 1, &r), NT_OK);
        assert_true(fabs(r.data_Gbps - e[i].gbe) < 1e-9);
        assert_true(r.signal_Gbps == r.data_Gbps);
        assert_string_equal(r.encoding, "ethernet");
    }
}

static void test_sysfs_rate_strings(void **state)
{
    nt_port_rate_t r;
    (void)state;
    assert_int_equal(nt_port_rate_parse_sysfs("100 Gb/sec (4X EDR)", 0, &r), NT_OK);
    assert_true(r.lanes == 4 && r.data_Gbps == 100.0 && r.speed && r.speed->ibv_code == 32);
    assert_int_equal(nt_port_rate_parse_sysfs("2.5 Gb/sec (1X SDR)", 1, &r), NT_OK);
    assert_true(r.lanes == 1 && r.data_Gbps == 2.5);
    assert_int_equal(nt_port_rate_parse_sysfs("2.5 Gb/sec (1X SDR)", 0, &r), NT_OK);
    assert_true(r.data_Gbps == 2.0 && r.signal_Gbps == 2.5);
    assert_int_equal(nt_port_rate_parse_sysfs("40 Gb/sec (4X QDR)", 0, &r), NT_OK);
    assert_true(r.data_Gbps == 32.0);
    /* XDR: libibverbs 44 cannot name it; sysfs can */
    assert_int_equal(nt_port_rate_parse_sysfs("800 Gb/sec (4X XDR)", 0, &r), NT_OK);
    assert_true(r.data_Gbps == 800.0 && r.speed && !strcmp(r.speed->name, "XDR"));
    assert_int_equal(nt_port_rate_parse_sysfs("56 Gb/sec (4X FDR)", 0, &r), NT_OK);
    assert_true(fabs(r.data_Gbps - 54.545) < 0.01);
    /* unknown speed name, or none: the figure alone */
    assert_int_equal(nt_port_rate_parse_sysfs("1600 Gb/sec (4X GDR)", 0, &r), NT_OK);
    assert_true(r.data_Gbps == 1600.0 && r.lanes == 4 && r.speed == NULL);
    assert_int_equal(nt_port_rate_parse_sysfs("10 Gb/sec (4X)", 0, &r), NT_OK);
    assert_true(r.data_Gbps == 10.0);
    assert_int_equal(nt_port_rate_parse_sysfs("", 0, &r), NT_ERR_PARSE);
    assert_int_equal(nt_port_rate_parse_sysfs("fast", 0, &r), NT_ERR_PARSE);
    assert_int_equal(nt_port_rate_parse_sysfs(NULL, 0, &r), NT_ERR_PARSE);
}

static void test_pcie(void **state)
{
    (void)state;
    assert_true(fabs(nt_pcie_link_GBps(8.0, 16) - 15.754) < 0.01);
    assert_true(fabs(nt_pcie_link_GBps(16.0, 16) - 31.508) < 0.01);
    assert_true(fabs(nt_pcie_link_GBps(32.0, 16) - 63.015) < 0.01);
    assert_true(fabs(nt_pcie_link_GBps(2.5, 8) - 2.0) < 1e-9);
    assert_true(fabs(nt_pcie_link_GBps(5.0, 4) - 2.0) < 1e-9);
    assert_true(isnan(nt_pcie_link_GBps(0, 16)));
    assert_true(isnan(nt_pcie_link_GBps(16, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_speed_and_width), cmocka_unit_test(test_well_known_rates),
        cmocka_unit_test(test_roce_ethernet_speeds), cmocka_unit_test(test_sysfs_rate_strings),
        cmocka_unit_test(test_pcie),
    };
    return cmocka_run_group_tests_name("rdma_rates", tests, NULL, NULL);
}
