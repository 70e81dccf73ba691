/* Statistics: nearest-rank percentiles, median, bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nettune/stats.h"

static void test_percentiles_1_to_100(void **state)
{
    double v[100];
    nt_stats_t s;
    (void)state;
    /* Reversed input: the function must sort a copy, not the caller's array. */
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i;
    assert_int_equal(nt_stats_compute(v, 100, &s), NT_OK);
    assert_int_equal(s.n, 100);
    assert_true(s.min == 1.0 && s.max == 100.0);
    assert_true(s.p50 == 50.0); /* rank ceil(0.5*100) = 50 */
    assert_true(s.p99 == 99.0); /* rank ceil(0.99*100) = 99 */
    assert_true(fabs(s.mean - 50.5) < 1e-12);
    assert_true(v[0] == 100.0);
}

static void test_percentiles_small(void **state)
{
    double v[4] = {4, 1, 3, 2};
    nt_stats_t s;
    (void)state;
    assert_int_equal(nt_stats_compute(v, 4, &s), NT_OK);
    assert_true(s.p50 == 2.0); /* nearest rank: the lower middle, a measured value */
    assert_true(s.p99 == 4.0); /* fewer than 100 samples: p99 is the maximum */
    double one = 7.5;
    assert_int_equal(nt_stats_compute(&one, 1, &s), NT_OK);
    assert_true(s.min == 7.5 && s.p50 == 7.5 && s.p99 == 7.5 && s.max == 7.5);
}

static void test_p99_of_1000(void **state)
{
    double v[1000];
    nt_stats_t s;
    (void)state;
    for (int i = 0; i < 1000; i++)
        v[i] = i + 1;
    v[999] = 1e9; /* one outlier moves max, not p99 */
    assert_int_equal(nt_stats_compute(v, 1000, &s), NT_OK);
    assert_true(s.p99 == 990.0);
    assert_true(s.max == 1e9);
}

static void test_bad_input(void **state)
{
    double v[2] = {1.0, NAN};
    nt_stats_t s;
    (void)state;
    assert_int_equal(nt_stats_compute(v, 0, &s), NT_ERR_INVALID);
    assert_int_equal(nt_stats_compute(NULL, 3, &s), NT_ERR_INVALID);
    assert_int_equal(nt_stats_compute(v, 2, &s), NT_ERR_INVALID);
}

static void test_median(void **state)
{
    double v[5] = {9, 1, 5, 3, 7};
    (void)state;
    assert_true(nt_stats_median(v, 5) == 5.0);
    assert_true(isnan(nt_stats_median(v, 0)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles_1_to_100), cmocka_unit_test(test_percentiles_small),
        cmocka_unit_test(test_p99_of_1000),          cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_median),
    };
    return cmocka_run_group_tests_name("core_stats", tests, NULL, NULL);
}
