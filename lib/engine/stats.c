/* Statistics with nearest-rank percentiles (see stats.h for the method). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/stats.h"

static int nt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double nt_stats_percentile_sorted(const double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return NAN;
    /* Nearest rank: the smallest sample with at least p% of the samples at or below it.
     * The epsilon keeps 0.99 * 100 = 98.99999 from rounding up past the exact rank. */
    rank = (size_t)ceil(p / 100.0 * (double)n - 1e-9);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

nt_status_t nt_stats_compute(const double *samples, size_t n, nt_stats_t *out)
{
    double *s, sum = 0.0;

    if (!samples || n == 0 || !out)
        return NT_ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (isnan(samples[i]))
            return NT_ERR_INVALID;
    s = malloc(n * sizeof(*s));
    if (!s)
        return NT_ERR_NOMEM;
    memcpy(s, samples, n * sizeof(*s));
    qsort(s, n, sizeof(*s), nt_cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += s[i];
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->p50 = nt_stats_percentile_sorted(s, n, 50.0);
    out->p99 = nt_stats_percentile_sorted(s, n, 99.0);
    out->mean = sum / (double)n;
    free(s);
    return NT_OK;
}

double nt_stats_median(double *values, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(values, n, sizeof(*values), nt_cmp_double);
    return nt_stats_percentile_sorted(values, n, 50.0);
}
