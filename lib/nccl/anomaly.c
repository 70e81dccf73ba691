/* The one anomaly rule for nccl-tests sweeps: see include/nettune/anomaly.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/anomaly.h"

const char *nt_anomaly_kind_string(nt_anomaly_kind_t k)
{
    static const char *const names[] = {"mid_sweep_drop", "outlier", "runs_differ", "env_differs",
                                        "model_far",      "confounded", "baseline_degraded"};
    return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "unknown";
}

static void nt_emit(nt_anomaly_t *out, size_t max, size_t *n, const nt_anomaly_t *a)
{
    if (*n < max)
        out[*n] = *a;
    (*n)++;
}

size_t nt_anomaly_sweep(const nt_ncclt_table_t *t, nt_anomaly_t *out, size_t max)
{
    size_t n = 0;
    double best = -1; /* highest busbw at smaller sizes */
    unsigned long long best_bytes = 0;
    nt_anomaly_t run; /* the current run of flagged rows */
    size_t nrun = 0;
    unsigned long long last_bytes = 0;
    int have_last = 0;
    for (size_t i = 0; i <= t->nrows; i++) {
        int flagged = 0;
        double b = 0;
        if (i < t->nrows) {
            const nt_ncclt_row_t *r = &t->rows[i];
            if (r->bytes == 0 || (have_last && r->bytes <= last_bytes))
                continue; /* 0-byte rows, repeated or out-of-order sizes */
            b = nt_ncclt_row_best_busbw(r);
            flagged = best >= NT_ANOMALY_MIN_GBPS && b <= (1 - NT_ANOMALY_DROP) * best &&
                      r->bytes > best_bytes;
            last_bytes = r->bytes;
            have_last = 1;
        }
        if (flagged) {
            if (nrun == 0) {
                memset(&run, 0, sizeof(run));
                run.first = i;
                run.bytes_first = t->rows[i].bytes;
                run.ref_GBps = best;
                run.busbw_GBps = b;
            }
            run.last = i;
            run.bytes_last = t->rows[i].bytes;
            if (b < run.busbw_GBps)
                run.busbw_GBps = b;
            nrun++;
        } else if (nrun) {
            run.kind = nrun >= 2 ? NT_ANOMALY_MID_SWEEP_DROP : NT_ANOMALY_OUTLIER;
            run.severity = nrun >= 2 ? NT_ANOMALY_SEV_WARN : NT_ANOMALY_SEV_INFO;
            run.ratio = run.ref_GBps > 0 ? run.busbw_GBps / run.ref_GBps : 0;
            nt_emit(out, max, &n, &run);
            nrun = 0;
        }
        if (i < t->nrows && b > best) {
            best = b;
            best_bytes = t->rows[i].bytes;
        }
    }
    return n;
}

int nt_anomaly_same_shape(const nt_ncclt_table_t *a, const nt_ncclt_table_t *b)
{
    if ((a->coll == NULL) != (b->coll == NULL))
        return 0;
    if (a->coll && strcmp(a->coll, b->coll) != 0)
        return 0;
    return a->nranks == b->nranks && a->nhosts == b->nhosts;
}

/* The row of `t` with `bytes`, the last one when repeated; NULL if none. */
static const nt_ncclt_row_t *nt_row_at(const nt_ncclt_table_t *t, unsigned long long bytes)
{
    const nt_ncclt_row_t *f = NULL;
    for (size_t i = 0; i < t->nrows; i++)
        if (t->rows[i].bytes == bytes)
            f = &t->rows[i];
    return f;
}

size_t nt_anomaly_compare(const nt_ncclt_table_t *a, const nt_ncclt_table_t *b, nt_anomaly_t *out,
                          size_t max)
{
    size_t n = 0, nrun = 0;
    int dir = 0; /* -1: a slower, +1: b slower */
    nt_anomaly_t run;
    memset(&run, 0, sizeof(run));
    unsigned long long prev = 0;
    int have_prev = 0;
    for (size_t i = 0; i <= a->nrows; i++) {
        int d = 0;
        double va = 0, vb = 0;
        if (i < a->nrows) {
            const nt_ncclt_row_t *ra = &a->rows[i];
            if (ra->bytes == 0 || (have_prev && ra->bytes <= prev))
                continue;
            const nt_ncclt_row_t *rb = nt_row_at(b, ra->bytes);
            if (!rb)
                continue; /* only sizes both measured are consecutive for this rule */
            prev = ra->bytes;
            have_prev = 1;
            va = nt_ncclt_row_best_busbw(ra);
            vb = nt_ncclt_row_best_busbw(rb);
            double fast = va > vb ? va : vb;
            if (fast >= NT_ANOMALY_MIN_GBPS &&
                (fast - (va < vb ? va : vb)) >= NT_ANOMALY_DIFFER * fast)
                d = va < vb ? -1 : 1;
        }
        if (nrun && d != dir) {
            if (nrun >= 2) {
                run.kind = NT_ANOMALY_RUNS_DIFFER;
                run.severity = NT_ANOMALY_SEV_WARN;
                run.slower = dir < 0 ? 0 : 1;
                nt_emit(out, max, &n, &run);
            }
            nrun = 0;
        }
        if (d) {
            double slow = d < 0 ? va : vb, fast = d < 0 ? vb : va;
            if (nrun == 0) {
                memset(&run, 0, sizeof(run));
                run.first = i;
                run.bytes_first = a->rows[i].bytes;
                run.ratio = 2;
                dir = d;
            }
            run.last = i;
            run.bytes_last = a->rows[i].bytes;
            if (slow / fast < run.ratio) {
                run.ratio = slow / fast;
                run.busbw_GBps = slow;
                run.ref_GBps = fast;
            }
            nrun++;
        }
    }
    return n;
}

/* The value of NCCL_ setting `name` (length n) in list l, or NULL. */
static const char *nt_env_get(const char *const *l, size_t nl, const char *name, size_t n)
{
    for (size_t i = 0; i < nl; i++)
        if (strncmp(l[i], name, n) == 0 && l[i][n] == '=')
            return l[i] + n + 1;
    return NULL;
}

static int nt_env_one_way(const char *const *a, size_t na, const char *const *b, size_t nb,
                          char *name, size_t namelen)
{
    for (size_t i = 0; i < na; i++) {
        const char *eq = strchr(a[i], '=');
        if (!eq || strncmp(a[i], "NCCL_", 5) != 0)
            continue;
        size_t n = (size_t)(eq - a[i]);
        const char *v = nt_env_get(b, nb, a[i], n);
        if (!v || strcmp(v, eq + 1) != 0) {
            snprintf(name, namelen, "%.*s", (int)n, a[i]);
            return 1;
        }
    }
    return 0;
}

int nt_anomaly_env_diff(const char *const *a, size_t na, const char *const *b, size_t nb,
                        char *name, size_t namelen)
{
    return nt_env_one_way(a, na, b, nb, name, namelen) ||
           nt_env_one_way(b, nb, a, na, name, namelen);
}
