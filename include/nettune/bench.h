/* The measurement driver: one driver, many probes (UCX ucx_perf_run style). A probe supplies
 * an ops table; the driver owns the growth of the window and of the iteration count, the
 * per-iteration samples and the statistics.
 *
 * A size is bounded by time, not bytes: its first iteration is one message (the warm-up and
 * the first estimate of a message's time); then, batch by batch, the window (messages in
 * flight per iteration, bandwidth only) and the iteration count grow to fill the budget, each
 * batch sized from the time the previous ones took. A batch runs only when its estimate fits
 * what is left of the budget, so a size costs at most about its budget plus one message, on a
 * fast link and on a link 100x slower alike; on a link so slow that the first message takes
 * the whole budget, that message is the one sample (iters 1).
 *
 * Both ends of a link run the driver with the same params. The initiator plans every batch
 * (window, iterations) and hands it to the responder through ops->agree before running it;
 * a plan of 0 iterations ends the size. The two ends thus always run the same batches. */
#ifndef NETTUNE_BENCH_H
#define NETTUNE_BENCH_H

#include <stddef.h>

#include "nettune/stats.h"
#include "nettune/status.h"

typedef enum nt_bench_metric {
    NT_BENCH_LATENCY = 0,  /* samples are one-way latency in seconds */
    NT_BENCH_BANDWIDTH = 1 /* samples are bytes per second */
} nt_bench_metric_t;

/* One batch: iters iterations of window messages each (iters 0 = the size is done). */
typedef struct nt_bench_plan {
    unsigned window;
    unsigned iters;
} nt_bench_plan_t;

typedef struct nt_bench_ops {
    const char *name;
    /* Run iters iterations of window messages of bytes bytes (latency: window is 1, one round
     * trip per iteration); write one sample per iteration into samples (seconds one-way for
     * latency, bytes/s of the iteration's window for bandwidth; room for iters), or, on the
     * responder side, nothing (samples is NULL there). */
    nt_status_t (*run)(void *ctx, size_t bytes, unsigned window, unsigned iters, double *samples);
    /* Make both ends run the same batch: the initiator sends *plan, the responder receives it
     * into *plan. NULL when the probe has one end only (a loopback). */
    nt_status_t (*agree)(void *ctx, nt_bench_plan_t *plan);
} nt_bench_ops_t;

typedef struct nt_bench_params {
    nt_bench_metric_t metric;
    int initiator;         /* 1 on the end that times and decides, 0 on the responder */
    unsigned max_window;   /* bandwidth: messages in flight per iteration at most (default 64,
                            * osu_bw's window); latency always uses 1 */
    unsigned min_iters;    /* the window grows only while this many iterations of it still fit
                            * the budget (default 5) */
    unsigned max_iters;    /* timed iterations at most (default 10000) */
    double budget_s;       /* time budget of one size, first message included (default 0.2) */
    double (*clock)(void); /* seconds, monotonic; NULL = nt_clock_s (tests pass a fake one) */
} nt_bench_params_t;

typedef struct nt_bench_result {
    size_t bytes;
    unsigned iters;   /* timed iterations the statistics are of */
    unsigned window;  /* messages per iteration of those iterations */
    unsigned batches; /* batches run, the first message included */
    double elapsed_s; /* the size's whole time, from its first message (initiator) */
    double one_msg_s; /* the first message's time: what one message of this size costs */
    nt_stats_t stats; /* of the samples, in the metric's unit (seconds or bytes/s) */
} nt_bench_result_t;

/* nt_bench_params_default - the defaults above. */
void nt_bench_params_default(nt_bench_params_t *p);

/* Where the initiator stands within one size, for nt_bench_next. */
typedef struct nt_bench_progress {
    double elapsed_s;   /* since the size's first message */
    double per_msg_s;   /* the latest batch's time per message */
    unsigned window;    /* the latest batch's window */
    unsigned kept;      /* timed samples kept at that window (the first message is not one
                         * once another batch has run) */
    unsigned long msgs; /* messages sent so far */
} nt_bench_progress_t;

/* nt_bench_next - the next batch given the progress so far: the window grows (by at most 16x
 * a batch, up to max_window) while min_iters iterations of the larger window fit what is left
 * of the budget; the iterations fill what is left (at most 8x the messages sent so far, so a
 * wrong first estimate costs little; at most max_iters samples in all). iters 0 when the
 * budget is spent or no further iteration fits. Pure; exposed for tests. */
nt_bench_plan_t nt_bench_next(const nt_bench_params_t *p, const nt_bench_progress_t *g);

/* nt_bench_deadline_s - how long a peer may take over one measurement of nsizes sizes before
 * it is called dead: the sizes' budgets, plus one message each (one_msg_s, 0 if unknown),
 * plus peer_timeout_s without progress. Pure. */
double nt_bench_deadline_s(unsigned nsizes, double budget_s, double one_msg_s,
                           double peer_timeout_s);

/* nt_bench_run - one size: the first message, then the batches of nt_bench_next (planned by
 * the initiator, agreed with the responder), and statistics of the samples of the last window
 * (initiator only; the responder's result has iters and window set and stats.n == 0).
 * Returns the first error of the ops calls, NT_ERR_NOMEM, NT_ERR_PEER when the responder is
 * handed a plan outside the params, or NT_ERR_INVALID for bad params. */
nt_status_t nt_bench_run(const nt_bench_ops_t *ops, void *ctx, const nt_bench_params_t *p,
                         size_t bytes, nt_bench_result_t *out);

#endif
