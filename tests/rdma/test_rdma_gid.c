/* GID choice as NCCL makes it, on GID tables captured from real ports: the soft-RoCE rxe0 of
 * the test VM (tests/fixtures/sysfs-rxe) and a ConnectX RoCE port as show_gids prints it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "rdma.h"

typedef struct { int index; const char *gid, *type, *ndev; } row_t;

static int build(const row_t *rows, int n, int eth, nt_gid_entry_t *out)
{
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        out[i].index = rows[i].index;
        assert_int_equal(nt_gid_parse(rows[i].gid, out[i].raw), NT_OK);
        out[i].type = nt_gid_type_parse(rows[i].type, eth);
        snprintf(out[i].netdev, sizeof(out[i].netdev), "%s", rows[i].ndev);
    }
    return n;
}

/* rxe0 in the VM: sysfs gids/0..2 and gid_attrs/types (all RoCE v2 on rxe) */
static const row_t rxe0[] = {
    {0, "fe80:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2", "eth0"},
    {1, "0000:0000:0000:0000:0000:ffff:0a00:020f", "RoCE v2", "eth0"},
    {2, "fec0:0000:0000:0000:5054:00ff:fe12:3456", "RoCE v2", "eth0"},
};
/* ConnectX-5 RoCE port (show_gids): v1 and v2 of a link-local and of an IPv4 address */
static const row_t cx5[] = {
    {0, "fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54", "IB/RoCE v1", "eth05"},
    {1, "fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54", "RoCE v2", "eth05"},
    {2, "0000:0000:0000:0000:0000:ffff:0a6e:0021", "IB/RoCE v1", "eth05"},
    {3, "0000:0000:0000:0000:0000:ffff:0a6e:0021", "RoCE v2", "eth05"},
};
/* two IPv4 subnets on one port (a VLAN interface): NCCL_IB_ADDR_RANGE picks one */
static const row_t twonets[] = {
    {0, "fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54", "IB/RoCE v1", "eth0"},
    {1, "fe80:0000:0000:0000:0ac0:ebff:fe3d:ca54", "RoCE v2", "eth0"},
    {2, "0000:0000:0000:0000:0000:ffff:0a6e:0021", "IB/RoCE v1", "eth0"},
    {3, "0000:0000:0000:0000:0000:ffff:0a6e:0021", "RoCE v2", "eth0"},
    {4, "0000:0000:0000:0000:0000:ffff:c0a8:0a05", "IB/RoCE v1", "eth0.100"},
    {5, "0000:0000:0000:0000:0000:ffff:c0a8:0a05", "RoCE v2", "eth0.100"},
};

static void clear_env(void)
{
    unsetenv("NCCL_IB_GID_INDEX");
    unsetenv("NCCL_IB_ROCE_VERSION_NUM");
    unsetenv("NCCL_IB_ADDR_FAMILY");
    unsetenv("NCCL_IB_ADDR_RANGE");
    unsetenv("NCCL_IB_ROUTABLE_FLID_GID_INDEX");
}

static int choose(const row_t *rows, int n, int eth, int override, char *why)
{
    nt_gid_entry_t t[16];
    nt_gid_pref_t pf;
    nt_gid_pref_from_env(&pf);
    build(rows, n, eth, t);
    return nt_gid_choose(t, n, 0, eth, &pf, override, why, 256);
}

static void test_parse_format(void **state)
{
    uint8_t raw[16];
    char txt[64];
    (void)state;
    assert_int_equal(nt_gid_parse("0000:0000:0000:0000:0000:ffff:0a00:020f", raw), NT_OK);
    nt_gid_format(raw, txt, sizeof(txt));
    assert_string_equal(txt, "::ffff:10.0.2.15");
    assert_true(nt_gid_is_ipv4(raw));
    assert_true(nt_gid_valid(raw));
    assert_int_equal(nt_gid_parse("fe80:0000:0000:0000:5054:00ff:fe12:3456", raw), NT_OK);
    assert_false(nt_gid_is_ipv4(raw));
    assert_false(nt_gid_valid(raw)); /* link-local */
    assert_int_equal(nt_gid_parse("fe80::1", raw), NT_ERR_PARSE);
    assert_int_equal(nt_gid_parse(NULL, raw), NT_ERR_PARSE);
    assert_int_equal(nt_gid_type_parse("IB/RoCE v1", 0), NT_GID_TYPE_IB);
    assert_int_equal(nt_gid_type_parse("IB/RoCE v1", 1), NT_GID_TYPE_ROCE_V1);
    assert_int_equal(nt_gid_type_parse("RoCE v2", 1), NT_GID_TYPE_ROCE_V2);
    assert_int_equal(nt_gid_type_parse("", 1), NT_GID_TYPE_UNKNOWN);
}

static void test_defaults(void **state)
{
    char why[256];
    (void)state;
    clear_env();
    /* default: IPv4-mapped RoCE v2 */
    assert_int_equal(choose(rxe0, 3, 1, -1, why), 1);
    assert_non_null(strstr(why, "::ffff:10.0.2.15"));
    assert_int_equal(choose(cx5, 4, 1, -1, why), 3);
    assert_non_null(strstr(why, "RoCE v2"));
}

static void test_env(void **state)
{
    char why[256];
    (void)state;
    clear_env();
    setenv("NCCL_IB_ROCE_VERSION_NUM", "1", 1);
    assert_int_equal(choose(cx5, 4, 1, -1, why), 2);
    clear_env();
    setenv("NCCL_IB_ADDR_FAMILY", "AF_INET6", 1);
    assert_int_equal(choose(rxe0, 3, 1, -1, why), 2); /* fec0:: is IPv6 and not link-local */
    clear_env();
    setenv("NCCL_IB_GID_INDEX", "0", 1);
    assert_int_equal(choose(cx5, 4, 1, -1, why), 0);
    assert_string_equal(why, "NCCL_IB_GID_INDEX=0");
    /* --gid-index wins over everything */
    assert_int_equal(choose(cx5, 4, 1, 7, why), 7);
    assert_string_equal(why, "--gid-index 7");
    clear_env();
    /* two subnets: without a range NCCL keeps the first IPv4 v2 GID; the range moves it */
    assert_int_equal(choose(twonets, 6, 1, -1, why), 3);
    setenv("NCCL_IB_ADDR_RANGE", "192.168.10.0/24", 1);
    assert_int_equal(choose(twonets, 6, 1, -1, why), 5);
    setenv("NCCL_IB_ADDR_RANGE", "10.110.0.0/16", 1);
    assert_int_equal(choose(twonets, 6, 1, -1, why), 3);
    setenv("NCCL_IB_ADDR_RANGE", "10.110.0.0", 1); /* no "/": ignored, as NCCL does */
    assert_int_equal(choose(twonets, 6, 1, -1, why), 3);
    clear_env();
}

static void test_infiniband(void **state)
{
    static const row_t ib[] = {{0, "fe80:0000:0000:0000:88e9:a4ff:ff25:a462", "IB/RoCE v1", ""}};
    static const row_t flid[] = {{0, "fe80:0000:0000:0000:88e9:a4ff:ff25:a462", "IB/RoCE v1", ""},
                                 {1, "fe80:0000:0012:0001:88e9:a4ff:ff25:a462", "IB/RoCE v1", ""}};
    char why[256];
    (void)state;
    clear_env();
    assert_int_equal(choose(ib, 1, 0, -1, why), 0);
    setenv("NCCL_IB_GID_INDEX", "3", 1); /* ignored on IB, as in NCCL */
    assert_int_equal(choose(ib, 1, 0, -1, why), 0);
    clear_env();
    assert_int_equal(choose(flid, 2, 0, -1, why), 1);
    assert_non_null(strstr(why, "FLID"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_format), cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_env), cmocka_unit_test(test_infiniband),
    };
    return cmocka_run_group_tests_name("rdma_gid", tests, NULL, NULL);
}
