/* The one anomaly rule for nccl-tests sweeps (lib/nccl/anomaly.c), shared by nettune doctor and
 * nettune tune (anomalies are findings, never tuning rules).
 *
 *  - Mid-sweep drop: a row whose busbw (the better of out-of-place and in-place) is at least
 *    NT_ANOMALY_DROP (15%) below the highest busbw at smaller sizes. Two or more consecutive such
 *    rows are a finding (NT_ANOMALY_SEV_WARN); a single one is an outlier note (INFO).
 *  - Runs that differ: two tables of the same test and shape whose busbw differs by at least
 *    NT_ANOMALY_DIFFER (10%) of the faster, the same way, at two or more consecutive common sizes.
 *  - Environments that differ: two sources whose NCCL_* settings are not the same.
 * Rows whose reference busbw is below NT_ANOMALY_MIN_GBPS are not judged: nccl-tests prints two
 * decimals, so 0.01 against 0.02 GB/s is rounding, not a drop. */
#ifndef NETTUNE_ANOMALY_H
#define NETTUNE_ANOMALY_H

#include <stddef.h>

#include "nettune/nccltests.h"

#define NT_ANOMALY_DROP 0.15
#define NT_ANOMALY_DIFFER 0.10
#define NT_ANOMALY_MIN_GBPS 0.05

typedef enum nt_anomaly_kind {
    NT_ANOMALY_MID_SWEEP_DROP = 0,
    NT_ANOMALY_OUTLIER,
    NT_ANOMALY_RUNS_DIFFER,
    NT_ANOMALY_ENV_DIFFERS,
    NT_ANOMALY_MODEL_FAR,  /* measured far from the model (nettune tune only) */
    NT_ANOMALY_CONFOUNDED, /* two runs compared differ in more than the rule sets (tune only) */
    NT_ANOMALY_BASELINE_DEGRADED /* the baseline is far below the hardware (tune only) */
} nt_anomaly_kind_t;

typedef enum nt_anomaly_sev { NT_ANOMALY_SEV_INFO = 0, NT_ANOMALY_SEV_WARN = 1 } nt_anomaly_sev_t;

typedef struct nt_anomaly {
    nt_anomaly_kind_t kind;
    nt_anomaly_sev_t severity;
    size_t first, last; /* row indices (in the first table) of the run of flagged rows */
    unsigned long long bytes_first, bytes_last;
    double busbw_GBps; /* the lowest flagged busbw (drop), or the slower run's at the worst size */
    double ref_GBps;   /* the highest busbw at smaller sizes (drop), or the faster run's */
    double ratio;      /* busbw_GBps / ref_GBps at the worst row */
    int slower;        /* runs_differ: 0 the first table is slower, 1 the second */
} nt_anomaly_t;

/* nt_anomaly_kind_string - "mid_sweep_drop", "outlier", "runs_differ", "env_differs",
 * "model_far", "confounded", "baseline_degraded". */
const char *nt_anomaly_kind_string(nt_anomaly_kind_t k);

/* nt_anomaly_sweep - applies the mid-sweep drop rule to the rows of `t` (file order; rows of
 * 0 bytes and repeated sizes are skipped). Writes up to `max` anomalies to `out` and returns how
 * many were found (possibly more than `max`). */
size_t nt_anomaly_sweep(const nt_ncclt_table_t *t, nt_anomaly_t *out, size_t max);

/* nt_anomaly_same_shape - 1 when `a` and `b` are the same test (collective) on the same shape
 * (ranks and hosts) and so may be compared; unknown collective or shape compare only with the
 * same unknown. */
int nt_anomaly_same_shape(const nt_ncclt_table_t *a, const nt_ncclt_table_t *b);

/* nt_anomaly_compare - applies the runs-differ rule to two tables (the caller checks
 * nt_anomaly_same_shape). Sizes present in both are compared in increasing order; first/last
 * index the rows of `a`. Returns the number of anomalies found, up to `max` written. */
size_t nt_anomaly_compare(const nt_ncclt_table_t *a, const nt_ncclt_table_t *b, nt_anomaly_t *out,
                          size_t max);

/* nt_anomaly_env_diff - compares two lists of "NAME=VALUE" settings; names that do not start with
 * "NCCL_" are ignored. Returns 1 and writes the first differing name (absent on one side counts)
 * to `name` when they differ, 0 when they agree. */
int nt_anomaly_env_diff(const char *const *a, size_t na, const char *const *b, size_t nb,
                        char *name, size_t namelen);

#endif
