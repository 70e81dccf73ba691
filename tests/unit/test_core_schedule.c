/* Round-robin schedules: every pair once, rounds disjoint, N-1 rounds for even N, quick
 * rounds constant; N from 1 to 1024 including odd N. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nettune/schedule.h"

static void check_disjoint(const nt_schedule_t *s, int n)
{
    unsigned char *busy = malloc((size_t)n);
    for (size_t r = 0; r < s->nrounds; r++) {
        memset(busy, 0, (size_t)n);
        for (size_t k = 0; k < s->rounds[r].npairs; k++) {
            nt_pair_t p = s->rounds[r].pairs[k];
            assert_true(p.a >= 0 && p.a < n && p.b >= 0 && p.b < n && p.a < p.b);
            assert_false(busy[p.a]);
            assert_false(busy[p.b]);
            busy[p.a] = busy[p.b] = 1;
        }
    }
    free(busy);
}

static void test_full_every_pair_once(void **state)
{
    (void)state;
    for (int n = 1; n <= 1024; n += (n < 40 ? 1 : n < 200 ? 17 : 131)) {
        nt_schedule_t s;
        unsigned char *seen = calloc((size_t)n * (size_t)n, 1);
        assert_int_equal(nt_schedule_create(n, NT_SCHED_FULL, &s), NT_OK);
        check_disjoint(&s, n);
        if (n == 1)
            assert_int_equal(s.nrounds, 0);
        else
            assert_int_equal(s.nrounds, n % 2 ? (size_t)n : (size_t)n - 1);
        assert_int_equal(s.npairs, (size_t)n * (size_t)(n - 1) / 2);
        for (size_t r = 0; r < s.nrounds; r++)
            for (size_t k = 0; k < s.rounds[r].npairs; k++) {
                nt_pair_t p = s.rounds[r].pairs[k];
                assert_int_equal(seen[(size_t)p.a * (size_t)n + (size_t)p.b], 0);
                seen[(size_t)p.a * (size_t)n + (size_t)p.b] = 1;
            }
        /* Even n: every node plays in every round. */
        if (n % 2 == 0)
            for (size_t r = 0; r < s.nrounds; r++)
                assert_int_equal(s.rounds[r].npairs, (size_t)n / 2);
        free(seen);
        nt_schedule_destroy(&s);
    }
}

static void test_full_1024(void **state)
{
    nt_schedule_t s;
    (void)state;
    assert_int_equal(nt_schedule_create(1024, NT_SCHED_FULL, &s), NT_OK);
    assert_int_equal(s.nrounds, 1023);
    assert_int_equal(s.npairs, 1024 * 1023 / 2);
    check_disjoint(&s, 1024);
    nt_schedule_destroy(&s);
}

static void test_quick_constant(void **state)
{
    (void)state;
    for (int n = 2; n <= 1024; n++) {
        nt_schedule_t s;
        unsigned char *seen = calloc((size_t)n * (size_t)n, 1);
        assert_int_equal(nt_schedule_create(n, NT_SCHED_QUICK, &s), NT_OK);
        check_disjoint(&s, n);
        assert_true(s.nrounds >= 1 && s.nrounds <= NT_SCHED_QUICK_MAX_ROUNDS);
        if (n >= 6)
            assert_int_equal(s.nrounds, n % 2 ? 6u : 3u);
        /* never more rounds than --full: small N gets every pair */
        if (n <= 5)
            assert_int_equal(s.npairs, (size_t)n * (size_t)(n - 1) / 2);
        assert_true(s.nrounds <= (size_t)(n % 2 ? n : n - 1));
        for (size_t r = 0; r < s.nrounds; r++)
            for (size_t k = 0; k < s.rounds[r].npairs; k++) {
                nt_pair_t p = s.rounds[r].pairs[k];
                assert_int_equal(seen[(size_t)p.a * (size_t)n + (size_t)p.b], 0); /* no dup */
                seen[(size_t)p.a * (size_t)n + (size_t)p.b] = 1;
            }
        /* Every ring neighbour pair is tested. */
        for (int i = 0; i < n; i++) {
            int a = i, b = (i + 1) % n, lo = a < b ? a : b, hi = a < b ? b : a;
            assert_int_equal(seen[(size_t)lo * (size_t)n + (size_t)hi], 1);
        }
        free(seen);
        nt_schedule_destroy(&s);
    }
}

static void test_bad_n(void **state)
{
    nt_schedule_t s;
    (void)state;
    assert_int_equal(nt_schedule_create(0, NT_SCHED_FULL, &s), NT_ERR_INVALID);
    assert_int_equal(nt_schedule_create(-3, NT_SCHED_QUICK, &s), NT_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_every_pair_once),
        cmocka_unit_test(test_full_1024),
        cmocka_unit_test(test_quick_constant),
        cmocka_unit_test(test_bad_n),
    };
    return cmocka_run_group_tests_name("core_schedule", tests, NULL, NULL);
}
