/* The measurement driver: one driver, many probes (UCX ucx_perf_run style). A probe supplies
 * an ops table; the driver owns warm-up, the iteration count sized to a time budget, the
 * per-iteration samples and the statistics.
 *
 * Both ends of a link run the driver with the same params. The iteration count is decided by
 * the initiator from its warm-up timing and handed to the responder through ops->agree, so
 * the two ends always run the same number of iterations. */
#ifndef NETTUNE_BENCH_H
#define NETTUNE_BENCH_H

#include <stddef.h>

#include "nettune/stats.h"
#include "nettune/status.h"

typedef enum nt_bench_metric {
    NT_BENCH_LATENCY = 0,  /* samples are one-way latency in seconds */
    NT_BENCH_BANDWIDTH = 1 /* samples are bytes per second */
} nt_bench_metric_t;

typedef struct nt_bench_ops {
    const char *name;
    /* Run iters iterations of bytes-sized messages; write one sample per iteration into
     * samples (seconds for latency, bytes/s for bandwidth; samples has room for iters), or,
     * on the responder side, nothing (samples may be NULL there). */
    nt_status_t (*run)(void *ctx, size_t bytes, unsigned iters, double *samples);
    /* Make both ends use the same iteration count: the initiator sends *iters, the responder
     * receives it into *iters. NULL when the probe has one end only (a loopback). */
    nt_status_t (*agree)(void *ctx, unsigned *iters);
} nt_bench_ops_t;

typedef struct nt_bench_params {
    nt_bench_metric_t metric;
    int initiator;         /* 1 on the end that times and decides, 0 on the responder */
    unsigned warmup_iters; /* untimed iterations before measuring (default 10) */
    unsigned min_iters;    /* at least this many timed iterations (default 5) */
    unsigned max_iters;    /* at most (default 10000) */
    double budget_s;       /* time budget for the timed iterations of one size (default 0.2) */
} nt_bench_params_t;

typedef struct nt_bench_result {
    size_t bytes;
    unsigned iters;
    nt_stats_t stats; /* of the samples, in the metric's unit (seconds or bytes/s) */
} nt_bench_result_t;

/* nt_bench_params_default - the defaults above. */
void nt_bench_params_default(nt_bench_params_t *p);

/* nt_bench_iters_for_budget - iterations that fit budget_s given a measured per-iteration time,
 * clamped to [min_iters, max_iters]. Pure; exposed for tests. */
unsigned nt_bench_iters_for_budget(const nt_bench_params_t *p, double per_iter_s);

/* nt_bench_run - warm up, size the iteration count (initiator), agree on it, run, and compute
 * statistics (initiator only; the responder's result has iters set and stats.n == 0).
 * Returns the first error of the ops calls, NT_ERR_NOMEM, or NT_ERR_INVALID for bad params. */
nt_status_t nt_bench_run(const nt_bench_ops_t *ops, void *ctx, const nt_bench_params_t *p,
                         size_t bytes, nt_bench_result_t *out);

#endif
