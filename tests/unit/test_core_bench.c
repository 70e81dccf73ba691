/* The measurement driver with a fake probe: warm-up, budget sizing, agreement, statistics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nettune/bench.h"

typedef struct fake {
    unsigned calls, total_iters, agreed_from, agree_to;
    double value;
    int fail_on_call;
} fake_t;

static nt_status_t fake_run(void *ctx, size_t bytes, unsigned iters, double *samples)
{
    fake_t *f = ctx;
    (void)bytes;
    f->calls++;
    if (f->fail_on_call && f->calls == (unsigned)f->fail_on_call)
        return NT_ERR_TIMEOUT;
    f->total_iters += iters;
    for (unsigned i = 0; samples && i < iters; i++)
        samples[i] = f->value + i; /* samples value .. value+iters-1 */
    return NT_OK;
}

static nt_status_t fake_agree(void *ctx, unsigned *iters)
{
    fake_t *f = ctx;
    f->agreed_from = *iters;
    if (f->agree_to)
        *iters = f->agree_to; /* the responder takes the initiator's count */
    return NT_OK;
}

static const nt_bench_ops_t fake_ops = {.name = "fake", .run = fake_run, .agree = fake_agree};

static void test_iters_for_budget(void **state)
{
    nt_bench_params_t p;
    (void)state;
    nt_bench_params_default(&p);
    p.budget_s = 1.0;
    assert_int_equal(nt_bench_iters_for_budget(&p, 0.01), 100);
    assert_int_equal(nt_bench_iters_for_budget(&p, 10.0), p.min_iters);
    assert_int_equal(nt_bench_iters_for_budget(&p, 1e-9), p.max_iters);
    assert_int_equal(nt_bench_iters_for_budget(&p, 0.0), p.max_iters);
}

static void test_run_initiator(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.value = 10.0};
    (void)state;
    nt_bench_params_default(&p);
    p.max_iters = 50; /* the fake is instantaneous: budget gives max_iters */
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 4096, &r), NT_OK);
    assert_int_equal(f.calls, 2); /* warm-up, then measure */
    assert_int_equal(f.agreed_from, 50);
    assert_int_equal(r.iters, 50);
    assert_int_equal(r.bytes, 4096);
    assert_int_equal(r.stats.n, 50);
    assert_true(r.stats.min == 10.0 && r.stats.max == 59.0 && r.stats.p50 == 34.0);
    assert_int_equal(f.total_iters, p.warmup_iters + 50);
}

static void test_run_responder_follows(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.agree_to = 17};
    (void)state;
    nt_bench_params_default(&p);
    p.initiator = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 8, &r), NT_OK);
    assert_int_equal(r.iters, 17);
    assert_int_equal(r.stats.n, 0); /* the responder computes nothing */
}

static void test_run_error_propagates(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.fail_on_call = 2};
    (void)state;
    nt_bench_params_default(&p);
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 8, &r), NT_ERR_TIMEOUT);
    assert_int_equal(r.iters, 0);
}

static void test_bad_params(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {0};
    (void)state;
    nt_bench_params_default(&p);
    p.min_iters = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 8, &r), NT_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iters_for_budget), cmocka_unit_test(test_run_initiator),
        cmocka_unit_test(test_run_responder_follows), cmocka_unit_test(test_run_error_propagates),
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests_name("core_bench", tests, NULL, NULL);
}
