/* The measurement driver with a fake probe on a fake clock: a size bounded by time (first
 * message, window and iteration growth), agreement of the two ends, statistics, errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nettune/bench.h"

/* The fake clock: every message of the fake link advances it by msg_s. */
static double fake_now;
static double fake_clock(void)
{
    return fake_now;
}

typedef struct fake {
    unsigned calls, agrees;
    unsigned long msgs;   /* messages sent in all */
    double msg_s;         /* time of one message on this link */
    double first_extra_s; /* the first message costs this much more (connection set-up) */
    unsigned max_window_seen;
    int fail_on_call;
    nt_bench_plan_t script[8]; /* the responder's view: plans handed over, in order */
    unsigned nscript, next;
    int responder;
} fake_t;

static nt_status_t fake_run(void *ctx, size_t bytes, unsigned window, unsigned iters,
                            double *samples)
{
    fake_t *f = ctx;
    f->calls++;
    if (f->fail_on_call && f->calls == (unsigned)f->fail_on_call)
        return NT_ERR_TIMEOUT;
    if (window > f->max_window_seen)
        f->max_window_seen = window;
    for (unsigned i = 0; i < iters; i++) {
        double t = f->msg_s * window + (f->msgs == 0 ? f->first_extra_s : 0);
        fake_now += t;
        f->msgs += window;
        if (samples)
            samples[i] = (double)bytes * window / t; /* bandwidth of the iteration */
    }
    return NT_OK;
}

static nt_status_t fake_agree(void *ctx, nt_bench_plan_t *plan)
{
    fake_t *f = ctx;
    f->agrees++;
    if (f->responder) {
        *plan = f->next < f->nscript ? f->script[f->next++] : (nt_bench_plan_t){1, 0};
    } else if (f->nscript < 8) {
        f->script[f->nscript++] = *plan; /* what the initiator hands over */
    }
    return NT_OK;
}

static const nt_bench_ops_t fake_ops = {.name = "fake", .run = fake_run, .agree = fake_agree};

static void bw_params(nt_bench_params_t *p, double budget)
{
    nt_bench_params_default(p);
    p->metric = NT_BENCH_BANDWIDTH;
    p->budget_s = budget;
    p->max_iters = 1000;
    p->clock = fake_clock;
}

/* A fast link: the window grows to its maximum, iterations fill the budget, and the size costs
 * at most its budget plus one message. */
static void test_fast_link_fills_budget(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 1e-4}; /* 4 MiB at ~40 GB/s */
    (void)state;
    bw_params(&p, 0.05);
    fake_now = 100.0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 4 << 20, &r), NT_OK);
    assert_int_equal(r.window, 64);
    assert_int_equal(f.max_window_seen, 64);
    assert_true(r.elapsed_s <= p.budget_s + f.msg_s + 1e-12);
    assert_true(r.elapsed_s >= 0.8 * p.budget_s); /* the budget is used, not wasted */
    assert_true(r.iters >= 3);
    assert_int_equal(r.stats.n, r.iters);
    assert_true(fabs(r.stats.p50 - (4 << 20) / 1e-4) < 1.0);
    assert_true(fabs(r.one_msg_s - 1e-4) < 1e-12);
    assert_int_equal(f.script[f.nscript - 1].iters, 0); /* the end is handed over */
}

/* A link 100x slower: still measured within budget + one message, fewer iterations, and the
 * figures are the slow link's (never a timeout). */
static void test_slow_link_bounded(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 1e-2}; /* 4 MiB at ~0.4 GB/s */
    (void)state;
    bw_params(&p, 0.05);
    fake_now = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 4 << 20, &r), NT_OK);
    assert_true(r.elapsed_s <= p.budget_s + f.msg_s + 1e-12);
    assert_true(r.iters >= 1);
    assert_true(fabs(r.stats.p50 - (4 << 20) / 1e-2) < 1.0);
}

/* A first message slower than the whole budget is the one sample. */
static void test_first_message_over_budget(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 0.3};
    (void)state;
    bw_params(&p, 0.05);
    fake_now = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 4 << 20, &r), NT_OK);
    assert_int_equal(f.calls, 1);
    assert_int_equal(r.iters, 1);
    assert_int_equal(r.window, 1);
    assert_int_equal(r.stats.n, 1);
    assert_true(fabs(r.elapsed_s - 0.3) < 1e-12);
}

/* Latency: window 1 always; a slow first message (connection set-up) makes the first estimate
 * pessimistic, the growth corrects it, and the first message is no sample. */
static void test_latency_growth(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 1e-5, .first_extra_s = 1e-3};
    (void)state;
    nt_bench_params_default(&p);
    p.budget_s = 0.05;
    p.max_iters = 100000;
    p.clock = fake_clock;
    fake_now = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 8, &r), NT_OK);
    assert_int_equal(f.max_window_seen, 1);
    assert_int_equal(r.window, 1);
    assert_true(r.elapsed_s <= p.budget_s + 1e-3 + 1e-5);
    assert_true(r.iters >= 3000);                /* (0.05 - 0.001) / 1e-5 = 4900 fit */
    assert_true(r.stats.max <= 8 / 1e-5 + 1e-6); /* the slow first message is not a sample */
    assert_true(f.agrees <= 12);                 /* a few batches, not one per iteration */
}

/* max_iters caps the samples whatever the budget. */
static void test_max_iters(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 1e-7};
    (void)state;
    nt_bench_params_default(&p);
    p.budget_s = 1.0;
    p.max_iters = 50;
    p.clock = fake_clock;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 8, &r), NT_OK);
    assert_int_equal(r.iters, 50);
    assert_int_equal(r.stats.n, 50);
}

/* The responder runs exactly the batches it is handed and computes nothing. */
static void test_responder_follows(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 1e-4, .responder = 1, .nscript = 3, .script = {{16, 1}, {64, 5}, {64, 0}}};
    (void)state;
    bw_params(&p, 0.05);
    p.initiator = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 1 << 20, &r), NT_OK);
    assert_int_equal(f.calls, 3); /* first message + two batches */
    assert_int_equal(f.msgs, 1 + 16 + 64 * 5);
    assert_int_equal(r.iters, 5);
    assert_int_equal(r.window, 64);
    assert_int_equal(r.stats.n, 0);
    /* A plan beyond the params is the peer's error. */
    fake_t g = {.msg_s = 1e-4, .responder = 1, .nscript = 1, .script = {{65, 1}}};
    assert_int_equal(nt_bench_run(&fake_ops, &g, &p, 1 << 20, &r), NT_ERR_PEER);
}

static void test_next_pure(void **state)
{
    nt_bench_params_t p;
    nt_bench_plan_t n;
    (void)state;
    bw_params(&p, 1.0);
    /* budget spent: done */
    n = nt_bench_next(&p, &(nt_bench_progress_t){1.2, 1e-3, 64, 10, 640});
    assert_int_equal(n.iters, 0);
    /* the window grows by at most 16x a batch, and the iterations by 8x the messages sent */
    n = nt_bench_next(&p, &(nt_bench_progress_t){1e-3, 1e-3, 1, 0, 1});
    assert_int_equal(n.window, 16);
    assert_int_equal(n.iters, 1);
    n = nt_bench_next(&p, &(nt_bench_progress_t){0.02, 1e-3, 16, 1, 17});
    assert_int_equal(n.window, 64);
    assert_int_equal(n.iters, 2);
    /* no room for one more iteration: done */
    n = nt_bench_next(&p, &(nt_bench_progress_t){0.99, 1e-3, 64, 10, 640});
    assert_int_equal(n.iters, 0);
    /* latency never grows the window */
    p.metric = NT_BENCH_LATENCY;
    n = nt_bench_next(&p, &(nt_bench_progress_t){1e-3, 1e-5, 1, 0, 1});
    assert_int_equal(n.window, 1);
    assert_int_equal(n.iters, 8);
    /* the deadline of a step: budgets + one message each + the peer timeout */
    assert_true(fabs(nt_bench_deadline_s(4, 0.05, 0.01, 2.0) - 2.24) < 1e-12);
    assert_true(fabs(nt_bench_deadline_s(2, 0.05, 0, 30.0) - 30.1) < 1e-12);
}

static void test_error_propagates(void **state)
{
    nt_bench_params_t p;
    nt_bench_result_t r;
    fake_t f = {.msg_s = 1e-4, .fail_on_call = 2};
    (void)state;
    bw_params(&p, 0.05);
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
    nt_bench_params_default(&p);
    p.budget_s = 0;
    assert_int_equal(nt_bench_run(&fake_ops, &f, &p, 8, &r), NT_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_link_fills_budget),
        cmocka_unit_test(test_slow_link_bounded),
        cmocka_unit_test(test_first_message_over_budget),
        cmocka_unit_test(test_latency_growth),
        cmocka_unit_test(test_max_iters),
        cmocka_unit_test(test_responder_follows),
        cmocka_unit_test(test_next_pure),
        cmocka_unit_test(test_error_propagates),
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests_name("core_bench", tests, NULL, NULL);
}
