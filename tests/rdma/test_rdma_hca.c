/* NCCL_IB_HCA parsing and matching, cases taken from NCCL's documented forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rdma.h"

static int m(const char *env, const char *dev, int port)
{
    nt_hca_filter_t f;
    nt_hca_filter_parse(env, &f);
    return nt_hca_filter_match(&f, dev, port);
}

static void test_parse(void **state)
{
    nt_hca_filter_t f;
    (void)state;
    nt_hca_filter_parse("^=mlx5_0:1,mlx5_1,,mlx5_2:2", &f);
    assert_true(f.set && f.exclude && f.exact);
    assert_int_equal(f.n, 3);
    assert_string_equal(f.e[0].prefix, "mlx5_0");
    assert_int_equal(f.e[0].port, 1);
    assert_string_equal(f.e[1].prefix, "mlx5_1");
    assert_int_equal(f.e[1].port, -1);
    assert_string_equal(f.e[2].prefix, "mlx5_2");
    assert_int_equal(f.e[2].port, 2);
    nt_hca_filter_parse(NULL, &f);
    assert_false(f.set);
    assert_int_equal(f.n, 0);
    nt_hca_filter_parse("", &f);
    assert_true(f.set);
    assert_int_equal(f.n, 0);
    /* at most 32 entries, as NCCL's MAX_IB_DEVS */
    {
        char big[1024] = "";
        for (int i = 0; i < 40; i++)
            snprintf(big + strlen(big), sizeof(big) - strlen(big), "d%d,", i);
        nt_hca_filter_parse(big, &f);
        assert_int_equal(f.n, NT_HCA_MAX);
    }
}

static void test_match(void **state)
{
    (void)state;
    /* unset or empty: everything */
    assert_true(m(NULL, "mlx5_0", 1));
    assert_true(m("", "mlx5_0", 1));
    /* prefix match: mlx5 matches mlx5_0 and mlx5_10; mlx5_1 also matches mlx5_10 */
    assert_true(m("mlx5", "mlx5_0", 1));
    assert_true(m("mlx5_1", "mlx5_10", 1));
    assert_false(m("mlx5_1", "mlx5_0", 1));
    /* '=' exact */
    assert_true(m("=mlx5_1", "mlx5_1", 1));
    assert_false(m("=mlx5_1", "mlx5_10", 1));
    /* ports */
    assert_true(m("mlx5_0:1", "mlx5_0", 1));
    assert_false(m("mlx5_0:1", "mlx5_0", 2));
    assert_true(m("mlx5_0:1,mlx5_0:2", "mlx5_0", 2));
    /* '^' excludes */
    assert_false(m("^mlx5_0", "mlx5_0", 1));
    assert_true(m("^mlx5_0", "mlx4_0", 1));
    assert_true(m("^mlx5_0:1", "mlx5_0", 2));
    assert_false(m("^=mlx5_1", "mlx5_1", 1));
    assert_true(m("^=mlx5_1", "mlx5_10", 1));
    /* a lone '^' excludes everything (empty list matches, xor exclude) as in NCCL */
    assert_false(m("^", "mlx5_0", 1));
    /* rxe in the VM */
    assert_true(m("rxe0", "rxe0", 1));
    assert_false(m("rxe0", "rxe1", 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_parse), cmocka_unit_test(test_match)};
    return cmocka_run_group_tests_name("rdma_hca", tests, NULL, NULL);
}
