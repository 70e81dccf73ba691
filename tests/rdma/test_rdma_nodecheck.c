/* The RDMA node checks (probes/rdma/nodecheck_rdma.c) on the inventory of the soft-RoCE VM's
 * captured tree (tests/fixtures/sysfs-rxe) and the ConnectX-6 HDR tree (sysfs-mlx5-hdr). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/nodecheck.h"
#include "nettune/sysfs.h"
#include "rdma.h"

static void test_rxe_roce_v2(void **state)
{
    nt_rdma_inv_t inv;
    nt_nodecheck_t o[4];
    char why[256];
    (void)state;
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-rxe");
    assert_int_equal(nt_rdma_inventory_read(&inv, why, sizeof(why)), NT_OK);
    assert_int_equal(inv.nports, 2);
    /* rxe0: eth0 MTU 1500 -> 1024; rxe1 is down and not judged */
    assert_int_equal(nt_rdma_port_mtu(&inv.ports[0]), 1024);
    assert_int_equal(nt_rdma_mtu_judge(inv.ports, inv.nports, o), 1);
    assert_int_equal(o[0].verdict, NT_PASS);
    assert_string_equal(o[0].observed, "1024 B");
    assert_int_equal(o[1].verdict, NT_NOT_JUDGED);
    nt_rdma_roce_v2_judge(&inv.ports[0], &o[0]);
    assert_int_equal(o[0].verdict, NT_PASS);
    assert_string_equal(o[0].observed, "RoCE v2 GID 1");
    /* the same port with its RoCE v2 entries turned into RoCE v1 (cma_roce_mode 1) */
    for (int i = 0; i < inv.ports[0].ngids; i++)
        if (inv.ports[0].gids[i].type == NT_GID_TYPE_ROCE_V2)
            inv.ports[0].gids[i].type = NT_GID_TYPE_ROCE_V1;
    nt_rdma_roce_v2_judge(&inv.ports[0], &o[0]);
    assert_int_equal(o[0].verdict, NT_WARN);
    assert_string_equal(o[0].code, "NT-RDMA-015");
    nt_rdma_inventory_free(&inv);
    nt_sysfs_set_root(NULL);
}

static void test_mtu_odd_port_warns(void **state)
{
    nt_rdma_port_t p[4];
    nt_nodecheck_t o[4];
    (void)state;
    memset(p, 0, sizeof(p));
    for (int i = 0; i < 4; i++) {
        snprintf(p[i].dev, sizeof(p[i].dev), "mlx5_%d", i);
        p[i].port = 1, p[i].state_num = 4, p[i].is_ethernet = 1, p[i].netdev_mtu = 9000;
    }
    p[2].netdev_mtu = 1500; /* one interface left at the default */
    assert_int_equal(nt_rdma_mtu_judge(p, 4, o), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(o[i].verdict, i == 2 ? NT_WARN : NT_PASS);
    assert_string_equal(o[2].code, "NT-RDMA-014");
    assert_string_equal(o[2].target, "mlx5_2:1");
    assert_string_equal(o[2].observed, "1024 B");
    assert_string_equal(o[2].expected, "4096 B (most of the node's ports)");
    p[1].active_mtu = 2048; /* verbs' active MTU wins over the netdev's */
    assert_int_equal(nt_rdma_port_mtu(&p[1]), 2048);
}

static void test_mlx5_infiniband(void **state)
{
    nt_rdma_inv_t inv;
    nt_nodecheck_t o;
    char why[256];
    (void)state;
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-mlx5-hdr");
    assert_int_equal(nt_rdma_inventory_read(&inv, why, sizeof(why)), NT_OK);
    nt_rdma_roce_v2_judge(&inv.ports[0], &o);
    assert_int_equal(o.verdict, NT_PASS);
    assert_string_equal(o.observed, "InfiniBand");
    assert_int_equal(nt_rdma_port_mtu(&inv.ports[0]), 0); /* no verbs here: IB MTU unknown */
    nt_rdma_inventory_free(&inv);
    nt_sysfs_set_root(NULL);
}

/* The ConnectX-6 HDR tree's two devices (sysfs-mlx5-hdr: the same fw_ver) pass; a node with one
 * device left at an older firmware (hand-built: 28.39.1002 x3, 28.36.1010 x1) warns on it. */
static void test_firmware(void **state)
{
    nt_rdma_inv_t inv;
    nt_rdma_port_t p[4];
    nt_nodecheck_t o[8];
    char why[256];
    (void)state;
    nt_sysfs_set_root(NT_TEST_FIXTURES "/sysfs-mlx5-hdr");
    assert_int_equal(nt_rdma_inventory_read(&inv, why, sizeof(why)), NT_OK);
    assert_true(inv.nports >= 2 && inv.nports <= 8);
    assert_int_equal(nt_rdma_firmware_judge(inv.ports, (int)inv.nports, o), (int)inv.nports);
    for (int i = 0; i < (int)inv.nports; i++)
        assert_int_equal(o[i].verdict, NT_PASS);
    nt_rdma_inventory_free(&inv);
    nt_sysfs_set_root(NULL);
    memset(p, 0, sizeof(p));
    for (int i = 0; i < 4; i++) {
        snprintf(p[i].dev, sizeof(p[i].dev), "mlx5_%d", i);
        snprintf(p[i].hca_type, sizeof(p[i].hca_type), "MT4129");
        snprintf(p[i].fw_ver, sizeof(p[i].fw_ver), "%s", i == 3 ? "28.36.1010" : "28.39.1002");
        p[i].port = 1;
    }
    nt_rdma_firmware_judge(p, 4, o);
    for (int i = 0; i < 4; i++)
        assert_int_equal(o[i].verdict, i == 3 ? NT_WARN : NT_PASS);
    assert_string_equal(o[3].code, "NT-RDMA-016");
    assert_string_equal(o[3].expected, "28.39.1002 (3 of the node's 4 MT4129 ports)");
    snprintf(p[2].fw_ver, sizeof(p[2].fw_ver), "28.36.1010"); /* 2 and 2: no majority */
    nt_rdma_firmware_judge(p, 4, o);
    for (int i = 0; i < 4; i++)
        assert_int_equal(o[i].verdict, NT_WARN);
    snprintf(p[3].hca_type, sizeof(p[3].hca_type), "MT41692"); /* another type: its own group */
    snprintf(p[2].fw_ver, sizeof(p[2].fw_ver), "28.39.1002");
    nt_rdma_firmware_judge(p, 4, o);
    for (int i = 0; i < 4; i++)
        assert_int_equal(o[i].verdict, NT_PASS);
}

/* openucx/ucx #10868's ibstat (maxim-masterov): two Ethernet ports (MT4127, 26.43.1014) and
 * ConnectX-7 InfiniBand ports (MT4129, 28.43.2026) in one node, the four CAs the post shows:
 * each type runs one firmware, so every port passes; the types are not compared. */
static void test_firmware_mixed_types_capture(void **state)
{
    static const struct {
        const char *dev, *type, *fw;
    } ca[] = {{"mlx5_0", "MT4127", "26.43.1014"},
              {"mlx5_1", "MT4127", "26.43.1014"},
              {"mlx5_2", "MT4129", "28.43.2026"},
              {"mlx5_3", "MT4129", "28.43.2026"}};
    nt_rdma_port_t p[4];
    nt_nodecheck_t o[4];
    (void)state;
    memset(p, 0, sizeof(p));
    for (int i = 0; i < 4; i++) {
        snprintf(p[i].dev, sizeof(p[i].dev), "%s", ca[i].dev);
        snprintf(p[i].hca_type, sizeof(p[i].hca_type), "%s", ca[i].type);
        snprintf(p[i].fw_ver, sizeof(p[i].fw_ver), "%s", ca[i].fw);
        p[i].port = 1;
    }
    assert_int_equal(nt_rdma_firmware_judge(p, 4, o), 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(o[i].verdict, NT_PASS);
        assert_string_equal(o[i].code, "NT-RDMA-016");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rxe_roce_v2),
        cmocka_unit_test(test_mtu_odd_port_warns),
        cmocka_unit_test(test_mlx5_infiniband),
        cmocka_unit_test(test_firmware),
        cmocka_unit_test(test_firmware_mixed_types_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
