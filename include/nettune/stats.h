/* Summary statistics of measurement samples.
 *
 * Percentiles use the nearest-rank method on the sorted samples: p-th percentile = the sample
 * at 1-based rank ceil(p/100 * n) (so p50 of 4 samples is the 2nd, p99 of 100 is the 99th,
 * and p99 of fewer than 100 samples is the maximum). No interpolation: every reported figure
 * is a value that was actually measured. */
#ifndef NETTUNE_STATS_H
#define NETTUNE_STATS_H

#include <stddef.h>

#include "nettune/status.h"

typedef struct nt_stats {
    size_t n;
    double min, p50, p99, max, mean;
} nt_stats_t;

/* nt_stats_compute - statistics of n samples (any unit; the caller's). samples is not changed.
 * Returns NT_ERR_INVALID when n == 0 or samples is NULL, NT_ERR_NOMEM when the sorted copy
 * cannot be allocated. NaN samples are rejected with NT_ERR_INVALID. */
nt_status_t nt_stats_compute(const double *samples, size_t n, nt_stats_t *out);

/* nt_stats_percentile_sorted - nearest-rank percentile (0 < p <= 100) of n >= 1 sorted samples. */
double nt_stats_percentile_sorted(const double *sorted, size_t n, double p);

/* nt_stats_median - median (nearest rank, lower middle for even n) of n values; values is
 * reordered. Returns NaN for n == 0. Used by the verdicts to judge a node by its own links. */
double nt_stats_median(double *values, size_t n);

#endif
