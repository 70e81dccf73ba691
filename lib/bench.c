/* The measurement driver: warm-up, iteration count from a time budget, samples, statistics. */
#include <math.h>
#include <stdlib.h>

#include "nettune/bench.h"
#include "nettune/clock.h"

void nt_bench_params_default(nt_bench_params_t *p)
{
    p->metric = NT_BENCH_LATENCY;
    p->initiator = 1;
    p->warmup_iters = 10;
    p->min_iters = 5;
    p->max_iters = 10000;
    p->budget_s = 0.2;
}

unsigned nt_bench_iters_for_budget(const nt_bench_params_t *p, double per_iter_s)
{
    double n;

    if (!(per_iter_s > 0.0) || !isfinite(per_iter_s))
        return p->max_iters;
    n = floor(p->budget_s / per_iter_s);
    if (n < p->min_iters)
        return p->min_iters;
    if (n > p->max_iters)
        return p->max_iters;
    return (unsigned)n;
}

nt_status_t nt_bench_run(const nt_bench_ops_t *ops, void *ctx, const nt_bench_params_t *p,
                         size_t bytes, nt_bench_result_t *out)
{
    double *samples = NULL, t0, per_iter;
    unsigned iters = p->max_iters, warm = p->warmup_iters ? p->warmup_iters : 1;
    nt_status_t st;

    if (!ops || !ops->run || p->min_iters == 0 || p->max_iters < p->min_iters)
        return NT_ERR_INVALID;
    out->bytes = bytes;
    out->iters = 0;
    out->stats.n = 0;

    /* Warm-up: also the initiator's estimate of one iteration's time. At least one iteration
     * always runs so that the estimate exists. */
    samples = malloc((size_t)(warm > p->max_iters ? warm : p->max_iters) * sizeof(*samples));
    if (!samples)
        return NT_ERR_NOMEM;
    t0 = nt_clock_s();
    st = ops->run(ctx, bytes, warm, p->initiator ? samples : NULL);
    if (st != NT_OK)
        goto out;
    per_iter = (nt_clock_s() - t0) / warm;
    if (p->initiator)
        iters = nt_bench_iters_for_budget(p, per_iter);
    if (ops->agree) {
        st = ops->agree(ctx, &iters);
        if (st != NT_OK)
            goto out;
    }
    if (iters < 1 || iters > p->max_iters) {
        st = NT_ERR_PEER;
        goto out;
    }
    st = ops->run(ctx, bytes, iters, p->initiator ? samples : NULL);
    if (st != NT_OK)
        goto out;
    out->iters = iters;
    if (p->initiator)
        st = nt_stats_compute(samples, iters, &out->stats);
out:
    free(samples);
    return st;
}
