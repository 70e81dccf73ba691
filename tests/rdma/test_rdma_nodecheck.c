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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rxe_roce_v2),
        cmocka_unit_test(test_mtu_odd_port_warns),
        cmocka_unit_test(test_mlx5_infiniband),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
