/* The measurement driver: a size bounded by time (first message, then window and iteration
 * count grown to fit the budget), samples, statistics. See nettune/bench.h. */
#include <math.h>
#include <stdlib.h>

#include "nettune/bench.h"
#include "nettune/clock.h"

#define NT_BENCH_WINDOW_GROWTH 16u /* a batch's window is at most 16x the previous one */
#define NT_BENCH_ITER_GROWTH 8.0   /* a batch sends at most 8x the messages sent before it */

void nt_bench_params_default(nt_bench_params_t *p)
{
    p->metric = NT_BENCH_LATENCY;
    p->initiator = 1;
    p->max_window = 64;
    p->min_iters = 5;
    p->max_iters = 10000;
    p->budget_s = 0.2;
    p->clock = NULL;
}

nt_bench_plan_t nt_bench_next(const nt_bench_params_t *p, const nt_bench_progress_t *g)
{
    nt_bench_plan_t plan = {g->window ? g->window : 1, 0};
    double rem = p->budget_s - g->elapsed_s, per = g->per_msg_s, n, cap;
    unsigned maxw = p->metric == NT_BENCH_BANDWIDTH && p->max_window ? p->max_window : 1;
    unsigned kept = g->kept;

    if (!(rem > 0.0) || !isfinite(per) || per < 0.0)
        return plan;
    if (per < 1e-9)
        per = 1e-9; /* a clock that did not move: the next batch measures it */
    /* The window: as large as still leaves min_iters iterations of it in the budget. */
    if (plan.window < maxw) {
        double fit = floor(rem / ((p->min_iters ? p->min_iters : 1) * per));
        unsigned w = plan.window;
        unsigned lim = w > maxw / NT_BENCH_WINDOW_GROWTH ? maxw : w * NT_BENCH_WINDOW_GROWTH;
        if (fit > w)
            w = fit >= lim ? lim : (unsigned)fit;
        if (w != plan.window) {
            plan.window = w;
            kept = 0; /* samples of a smaller window are replaced */
        }
    }
    if (kept >= p->max_iters)
        return plan;
    n = floor(rem / (per * plan.window));
    cap = floor(NT_BENCH_ITER_GROWTH * (double)(g->msgs ? g->msgs : 1) / plan.window);
    if (n > cap)
        n = cap < 1 ? 1 : cap;
    if (n > p->max_iters - kept)
        n = p->max_iters - kept;
    plan.iters = n >= 1 ? (unsigned)n : 0;
    return plan;
}

double nt_bench_deadline_s(unsigned nsizes, double budget_s, double one_msg_s,
                           double peer_timeout_s)
{
    return nsizes * (budget_s + (one_msg_s > 0 ? one_msg_s : 0)) + peer_timeout_s;
}

nt_status_t nt_bench_run(const nt_bench_ops_t *ops, void *ctx, const nt_bench_params_t *p,
                         size_t bytes, nt_bench_result_t *out)
{
    double (*now)(void) = p->clock ? p->clock : nt_clock_s;
    double *samples = NULL, t0, tb, first;
    unsigned maxw = p->metric == NT_BENCH_BANDWIDTH && p->max_window ? p->max_window : 1;
    nt_bench_progress_t g = {0};
    nt_bench_plan_t plan = {1, 1};
    nt_status_t st;

    if (!ops || !ops->run || p->min_iters == 0 || p->max_iters == 0 || !(p->budget_s > 0))
        return NT_ERR_INVALID;
    out->bytes = bytes;
    out->iters = 0;
    out->window = 1;
    out->batches = 0;
    out->elapsed_s = 0;
    out->one_msg_s = 0;
    out->stats.n = 0;
    if (p->initiator && !(samples = malloc((size_t)p->max_iters * sizeof(*samples))))
        return NT_ERR_NOMEM;

    /* The first message: warm-up, first estimate, and the sample of a link too slow for more. */
    t0 = now();
    st = ops->run(ctx, bytes, 1, 1, samples);
    if (st != NT_OK)
        goto out;
    first = now() - t0;
    out->batches = 1;
    out->one_msg_s = first;
    g.elapsed_s = first;
    g.per_msg_s = first;
    g.window = 1;
    g.kept = 1;
    g.msgs = 1;
    for (;;) {
        nt_bench_progress_t before = g;
        if (p->initiator) {
            /* The first message is a sample only while nothing else has run. */
            nt_bench_progress_t q = g;
            if (out->batches == 1)
                q.kept = 0;
            plan = nt_bench_next(p, &q);
        }
        if (ops->agree && (st = ops->agree(ctx, &plan)) != NT_OK)
            goto out;
        if (plan.iters == 0)
            break;
        if (plan.window < 1 || plan.window > maxw || plan.iters > p->max_iters) {
            st = NT_ERR_PEER;
            goto out;
        }
        /* A new window (or the first batch after the first message) starts the samples anew. */
        if (plan.window != g.window || out->batches == 1)
            g.kept = 0;
        if (p->initiator && g.kept + plan.iters > p->max_iters) {
            st = NT_ERR_INVALID;
            goto out;
        }
        tb = now();
        st = ops->run(ctx, bytes, plan.window, plan.iters, samples ? samples + g.kept : NULL);
        if (st != NT_OK)
            goto out;
        out->batches++;
        g.per_msg_s = (now() - tb) / ((double)plan.window * plan.iters);
        g.window = plan.window;
        g.kept += plan.iters;
        g.msgs += (unsigned long)plan.window * plan.iters;
        g.elapsed_s = now() - t0;
        (void)before;
    }
    out->iters = g.kept;
    out->window = g.window;
    out->elapsed_s = now() - t0;
    if (p->initiator)
        st = nt_stats_compute(samples, g.kept, &out->stats);
out:
    free(samples);
    return st;
}
