/* The RDMA path of the fabric phases (probes/fabric/fabric_rdma.c) without its verbs calls (no
 * RDMA device on the development machine; the soft-RoCE VM, tests/rdma-vm, runs them): the
 * rail-to-port check on the captured soft-RoCE tree and the hand-made ConnectX-6 one, the
 * transport choice over nodes and its sentences, and the QP records of a round. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fabric/fabric.h"
#include "nettune/sysfs.h"

/* The inventory of a captured tree, selected as the RDMA probe selects (NCCL_IB_HCA hca, GID
 * override gid). */
static void inv_read(nt_rdma_inv_t *inv, const char *tree, const char *hca, int gid)
{
    char why[256];
    nt_hca_filter_t f;
    nt_gid_pref_t pf;
    nt_sysfs_set_root(tree);
    assert_int_equal(nt_rdma_inventory_read(inv, why, sizeof(why)), NT_OK);
    nt_sysfs_set_root(NULL);
    unsetenv("NCCL_IB_GID_INDEX");
    nt_hca_filter_parse(hca, &f);
    nt_gid_pref_from_env(&pf);
    nt_rdma_port_select(inv, &f, &pf, gid);
}

/* Soft-RoCE captured in the VM: rxe0 on eth0 (ACTIVE, NCCL's GID index 1 = ::ffff:10.0.2.15),
 * rxe1 on dummy0 (DOWN). */
static void test_rail_check_rxe(void **state)
{
    nt_rdma_inv_t inv;
    nt_fab_rdma_rail_t r;
    (void)state;
    inv_read(&inv, NT_TEST_FIXTURES "/sysfs-rxe", NULL, -1);
    nt_fab_rdma_rail_check(&inv, NULL, "eth0", "", 0, &r);
    assert_int_equal(r.ok, 1);
    assert_string_equal(r.dev, "rxe0");
    assert_int_equal(r.port, 1);
    assert_int_equal(r.gid_index, 1);
    assert_int_equal(r.is_ethernet, 1);
    assert_string_equal(r.ifname, "eth0");
    assert_string_equal(r.why, "");
    nt_fab_rdma_rail_check(&inv, NULL, "dummy0", "", 0, &r);
    assert_int_equal(r.ok, 0);
    assert_string_equal(r.dev, "rxe1");
    assert_string_equal(r.why, "rxe1:1, the RDMA port of dummy0, is DOWN (physical state "
                               "Disabled): not ACTIVE");
    nt_fab_rdma_rail_check(&inv, NULL, "lo", "", 0, &r);
    assert_int_equal(r.ok, 0);
    assert_string_equal(r.dev, "");
    assert_string_equal(r.why, "no RDMA port carries lo (none has it as its network device or "
                               "shares its PCI function)");
    nt_rdma_inventory_free(&inv);
    /* NCCL_IB_HCA that leaves the rail's port out: NCCL would not use it, nor do we */
    inv_read(&inv, NT_TEST_FIXTURES "/sysfs-rxe", "rxe1", -1);
    nt_fab_rdma_rail_check(&inv, NULL, "eth0", "", 0, &r);
    assert_int_equal(r.ok, 0);
    assert_non_null(strstr(r.why, "rxe0:1, the RDMA port of eth0, is not used: "));
    assert_non_null(strstr(r.why, "NCCL_IB_HCA=rxe1"));
    nt_rdma_inventory_free(&inv);
    /* --gid-index 9: an empty entry (the table holds 0 and 1) */
    inv_read(&inv, NT_TEST_FIXTURES "/sysfs-rxe", NULL, 9);
    nt_fab_rdma_rail_check(&inv, NULL, "eth0", "", 0, &r);
    assert_int_equal(r.ok, 0);
    assert_int_equal(r.gid_index, 9);
    assert_string_equal(r.why, "rxe0:1, the RDMA port of eth0, has no GID at index 9: RoCE "
                               "needs one (an IP address on eth0; check --gid-index / "
                               "NCCL_IB_GID_INDEX)");
    nt_rdma_inventory_free(&inv);
    /* no inventory: the inventory's reason as it is */
    nt_fab_rdma_rail_check(NULL, "no RDMA device: /sys/class/infiniband is absent", "eth0", "",
                           0, &r);
    assert_int_equal(r.ok, 0);
    assert_string_equal(r.why, "no RDMA device: /sys/class/infiniband is absent");
}

/* InfiniBand (hand-made ConnectX-6 HDR tree): IPoIB interfaces have no netdev in the GID
 * table; the port is found by the interface's PCI function and dev_port. mlx5_0 (0000:18:00.0)
 * is ACTIVE, mlx5_1 (0000:19:00.0) DOWN. No GID is needed on InfiniBand. */
static void test_rail_check_ib(void **state)
{
    nt_rdma_inv_t inv;
    nt_fab_rdma_rail_t r;
    (void)state;
    inv_read(&inv, NT_TEST_FIXTURES "/sysfs-mlx5-hdr", NULL, -1);
    nt_fab_rdma_rail_check(&inv, NULL, "ib0", "0000:18:00.0", 1, &r);
    assert_int_equal(r.ok, 1);
    assert_string_equal(r.dev, "mlx5_0");
    assert_int_equal(r.port, 1);
    assert_int_equal(r.is_ethernet, 0);
    nt_fab_rdma_rail_check(&inv, NULL, "ib1", "0000:19:00.0", 0, &r);
    assert_int_equal(r.ok, 0);
    assert_string_equal(r.dev, "mlx5_1");
    assert_non_null(strstr(r.why, "mlx5_1:1, the RDMA port of ib1, is DOWN"));
    /* a port the device does not have */
    nt_fab_rdma_rail_check(&inv, NULL, "ib2", "0000:18:00.0", 2, &r);
    assert_int_equal(r.ok, 0);
    assert_non_null(strstr(r.why, "no RDMA port carries ib2"));
    nt_rdma_inventory_free(&inv);
}

static nt_fab_rdma_rail_t rail(int ok, const char *ifname, const char *dev, int gid,
                               const char *why)
{
    nt_fab_rdma_rail_t r;
    memset(&r, 0, sizeof(r));
    r.ok = ok;
    r.port = 1;
    r.gid_index = gid;
    snprintf(r.ifname, sizeof(r.ifname), "%s", ifname);
    snprintf(r.dev, sizeof(r.dev), "%s", dev);
    snprintf(r.why, sizeof(r.why), "%s", why);
    return r;
}

/* One transport for every phase: RDMA only when every rail of every node has it. */
static void test_transport_choose(void **state)
{
    const char *hosts[] = {"fake0", "fake1", "fake2", "fake3"};
    nt_fab_rdma_rail_t f[8];
    char why[512];
    (void)state;
    for (int n = 0; n < 4; n++) {
        f[2 * n] = rail(1, "eth2", "mlx5_0", 3, "");
        f[2 * n + 1] = rail(1, "eth3", "mlx5_1", 3, "");
    }
    assert_int_equal(nt_fab_transport_choose(f, 4, 2, hosts, why, sizeof(why)), 1);
    assert_string_equal(why, "every rail of the 4 nodes has an ACTIVE RDMA port (fake0: eth2 "
                             "mlx5_0:1 GID index 3, eth3 mlx5_1:1 GID index 3): one RC QP per "
                             "flow, RDMA WRITE");
    /* fake3 has no RDMA device at all; fake1's second rail is down */
    f[6] = rail(0, "eth2", "", 0, "no RDMA device: /sys/class/infiniband is absent");
    f[7] = rail(0, "eth3", "", 0, "no RDMA device: /sys/class/infiniband is absent");
    assert_int_equal(nt_fab_transport_choose(f, 4, 2, hosts, why, sizeof(why)), 0);
    assert_string_equal(why, "no RDMA path on fake3, rail 0 (eth2): no RDMA device: "
                             "/sys/class/infiniband is absent; 1 of 4 nodes lack one: the "
                             "probe's own TCP sockets, one per flow, bound to the rail's "
                             "interface");
    f[3] = rail(0, "eth3", "mlx5_1", 3, "mlx5_1:1, the RDMA port of eth3, is DOWN");
    assert_int_equal(nt_fab_transport_choose(f, 4, 2, hosts, why, sizeof(why)), 0);
    assert_non_null(strstr(why, "no RDMA path on fake1, rail 1 (eth3): mlx5_1:1, the RDMA port "
                                "of eth3, is DOWN; 2 of 4 nodes lack one"));
    assert_int_equal(nt_fab_transport_choose(f, 0, 2, hosts, why, sizeof(why)), 0);
}

/* The QP records of a round: the fields survive, the layout is little-endian whatever the
 * host, an empty slot and a foreign record are told apart. */
static void test_qp_pack(void **state)
{
    nt_rdma_ep_info_t ep, back;
    uint8_t b[NT_FAB_QP_MSG_BYTES];
    uint32_t flow;
    int32_t status;
    int end;
    (void)state;
    memset(&ep, 0, sizeof(ep));
    ep.qpn[0] = 0x00abcdef;
    ep.psn = 0x123456;
    ep.rkey = 0xdeadbeef;
    ep.addr = 0x00007f1234567000ull;
    ep.lid = 0;
    ep.gid_index = 1;
    ep.mtu = 3; /* IBV_MTU_1024 */
    ep.port = 1;
    for (int i = 0; i < 16; i++)
        ep.gid[i] = (uint8_t)(i == 10 || i == 11 ? 0xff : i >= 12 ? 10 + i : 0);
    nt_fab_qp_pack(70000, 0, 1, &ep, b);
    assert_memory_equal(b, "ntFq", 4);
    assert_int_equal(b[4], 0x70); /* 70000 = 0x11170 */
    assert_int_equal(b[5], 0x11);
    assert_int_equal(b[6], 0x01);
    assert_int_equal(b[7], 0x00);
    assert_int_equal(b[20], 0xef); /* rkey */
    assert_int_equal(b[23], 0xde);
    assert_int_equal(b[24], 0x00); /* addr low word first */
    assert_int_equal(b[25], 0x70);
    assert_int_equal(b[29], 0x7f);
    assert_int_equal(b[64], 1);
    assert_int_equal(nt_fab_qp_unpack(b, &flow, &status, &end, &back), NT_OK);
    assert_int_equal(flow, 70000);
    assert_int_equal(status, 0);
    assert_int_equal(end, 1);
    assert_int_equal(back.magic, NT_RDMA_INFO_MAGIC);
    assert_int_equal(back.nqps, 1);
    assert_int_equal(back.qpn[0], 0x00abcdef);
    assert_int_equal(back.psn, 0x123456);
    assert_int_equal(back.rkey, 0xdeadbeef);
    assert_true(back.addr == 0x00007f1234567000ull);
    assert_int_equal(back.gid_index, 1);
    assert_int_equal(back.mtu, 3);
    assert_int_equal(back.port, 1);
    assert_memory_equal(back.gid, ep.gid, 16);
    assert_string_equal(back.dev, "");
    /* a failed set-up travels as its status */
    nt_fab_qp_pack(5, (int32_t)NT_ERR_NOT_FOUND, 2, &ep, b);
    assert_int_equal(nt_fab_qp_unpack(b, &flow, &status, &end, &back), NT_OK);
    assert_int_equal(status, NT_ERR_NOT_FOUND);
    assert_int_equal(end, 2);
    b[64] = 3;
    assert_int_equal(nt_fab_qp_unpack(b, &flow, &status, &end, &back), NT_ERR_PARSE);
    b[64] = 2;
    b[0] ^= 1;
    assert_int_equal(nt_fab_qp_unpack(b, &flow, &status, &end, &back), NT_ERR_PARSE);
    memset(b, 0, sizeof(b));
    assert_int_equal(nt_fab_qp_unpack(b, &flow, &status, &end, &back), NT_ERR_NOT_FOUND);
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rail_check_rxe),
        cmocka_unit_test(test_rail_check_ib),
        cmocka_unit_test(test_transport_choose),
        cmocka_unit_test(test_qp_pack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
