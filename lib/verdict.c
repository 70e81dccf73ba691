/* The link verdict engine: expected figures, peer populations judged node-first, retest and
 * node blame (DESIGN.md "Health verdicts"; docs/verdicts.md has the rules and the numbers).
 *
 * Everything is recomputed from the inputs on every call, so judging again after a retest is
 * the same code path as the first judgement. Work is O(L log L) for L links plus O(nnodes) per
 * population, so a --full run at 1,000 nodes (half a million pairs times a few sizes) is fine. */
#include "nettune/verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/stats.h"

nt_peer_rules_t nt_peer_rules_default(void)
{
    /* ClusterKit's 93% (REFERENCE.md section 4); 2.0 for latency (ClusterKit: 2.1 x minimum,
     * we compare with a median, see docs/verdicts.md); 5 members as DESIGN.md asks. */
    return (nt_peer_rules_t){.bw_ratio = 0.93, .lat_ratio = 2.0, .min_population = 5};
}

/* ---- formatting -------------------------------------------------------------------------- */

/* Three significant figures, no exponent for the figures links produce ("10.5", "0.35",
 * "393", "1234"). */
static const char *fmt_num(char *buf, size_t len, double v)
{
    if (fabs(v) >= 1000)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.3g", v);
    return buf;
}

static const char *fmt_bytes(char *buf, size_t len, size_t b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    size_t v = b;
    while (u < 4 && v >= 1024 && v % 1024 == 0) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%zu %s", v, unit[u]);
    return buf;
}

static const char *unit_of(int metric)
{
    return metric == NT_METRIC_BW ? "GB/s" : "us";
}

/* Append to a fixed buffer; a reason that does not fit is cut (it stays a valid string). */
static void cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strnlen(buf, len);
    if (used + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
    (void)n;
}

static const char *node_name(const nt_node_verdict_t *nodes, int i, char *buf, size_t len)
{
    if (nodes && nodes[i].host && nodes[i].host[0])
        return nodes[i].host;
    snprintf(buf, len, "node %d", i);
    return buf;
}

/* ---- judgement helpers ------------------------------------------------------------------- */

static int is_worse(int metric, double v, double limit)
{
    return metric == NT_METRIC_BW ? v < limit : v > limit;
}

static double better(int metric, double a, double b)
{
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return metric == NT_METRIC_BW ? fmax(a, b) : fmin(a, b);
}

static double ratio_of(const nt_peer_rules_t *p, int metric)
{
    return metric == NT_METRIC_BW ? p->bw_ratio : p->lat_ratio;
}

/* Which judgements a value fails: NT_FIRED_EXPECTED and/or NT_FIRED_PEER. */
static unsigned failing_bits(const nt_vlink_t *l, double v, const nt_peer_rules_t *p)
{
    unsigned bits = 0;
    if (!isnan(l->expected) && is_worse(l->metric, v, l->expected))
        bits |= NT_FIRED_EXPECTED;
    double r = ratio_of(p, l->metric);
    if (!isnan(l->reference) && !isnan(r) && is_worse(l->metric, v, r * l->reference))
        bits |= NT_FIRED_PEER;
    return bits;
}

/* "at 1 MiB: 5 GB/s, below the expected 10 GB/s; below 93% of the population median ..." */
static void describe(char *buf, size_t len, const nt_vlink_t *l, double v, unsigned bits,
                     const nt_peer_rules_t *p)
{
    char a[32], b[32], sz[32];
    const int bw = l->metric == NT_METRIC_BW;
    buf[0] = '\0';
    cat(buf, len, "at %s: %s%s %s", fmt_bytes(sz, sizeof(sz), l->bytes), bw ? "" : "latency ",
        fmt_num(a, sizeof(a), v), unit_of(l->metric));
    if (bits & NT_FIRED_EXPECTED)
        cat(buf, len, ", %s the expected %s%s %s", bw ? "below" : "above", bw ? "" : "maximum ",
            fmt_num(b, sizeof(b), l->expected), unit_of(l->metric));
    if (bits & NT_FIRED_PEER) {
        if (bw)
            cat(buf, len, "%s below %.0f%% of the population median %s GB/s (%zu links)",
                (bits & NT_FIRED_EXPECTED) ? " and" : ",", p->bw_ratio * 100,
                fmt_num(b, sizeof(b), l->reference), l->population);
        else
            cat(buf, len, "%s above %gx the population median %s us (%zu links)",
                (bits & NT_FIRED_EXPECTED) ? " and" : ",", p->lat_ratio,
                fmt_num(b, sizeof(b), l->reference), l->population);
    }
}

/* ---- populations ------------------------------------------------------------------------- */

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int cmp_pop(const void *pa, const void *pb, void *ctx)
{
    const nt_vlink_t *L = ctx;
    const nt_vlink_t *a = &L[*(const size_t *)pa], *b = &L[*(const size_t *)pb];
    int c = cmp_str(a->kind, b->kind);
    if (!c)
        c = cmp_str(a->scope, b->scope);
    if (!c)
        c = (a->metric > b->metric) - (a->metric < b->metric);
    if (!c)
        c = (a->bytes > b->bytes) - (a->bytes < b->bytes);
    if (!c)
        c = (*(const size_t *)pa > *(const size_t *)pb) -
            (*(const size_t *)pa < *(const size_t *)pb);
    return c;
}

static int same_pop(const nt_vlink_t *a, const nt_vlink_t *b)
{
    return !cmp_str(a->kind, b->kind) && !cmp_str(a->scope, b->scope) && a->metric == b->metric &&
           a->bytes == b->bytes;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* A node's score: the median of its links, and for an even count the better of the two middle
 * values, so that a node is an outlier only when more than half of its links are (the same
 * "more than half" as the blame rule, for both metrics). values is reordered. */
static double node_median(double *values, size_t n, int metric)
{
    qsort(values, n, sizeof(double), cmp_double);
    if (n % 2)
        return values[n / 2];
    return metric == NT_METRIC_BW ? values[n / 2] : values[n / 2 - 1];
}

/* The worst evidence against a node over all populations, for its blame reason. */
typedef struct evidence {
    double badness; /* >1: how many times worse than the reference its median is */
    double median, reference;
    const nt_vlink_t *example; /* a link of that population (kind, bytes, metric) */
} evidence_t;

typedef struct work {
    double *eff;   /* per link: the value judged (better of value and retest) */
    size_t *order; /* judged link indices, sorted into populations */
    size_t nordered;
    int *cnt, *off;  /* per node: links in the current population, and offsets */
    double *vals;    /* per node slices of link values (2 per link at most) */
    double *meds;    /* per node median in the current population */
    double *scratch; /* node medians / link values for a median */
    char *susp;      /* per node: suspect in the current population */
    evidence_t *ev;  /* per node */
} work_t;

static void judge_population(nt_vlink_t *L, work_t *w, size_t g0, size_t g1, int nnodes,
                             const nt_peer_rules_t *p, nt_node_verdict_t *nodes)
{
    size_t m = g1 - g0;
    for (size_t k = g0; k < g1; k++)
        L[w->order[k]].population = m;
    const nt_vlink_t *first = &L[w->order[g0]];
    const int metric = first->metric;
    double ratio = ratio_of(p, metric);
    if (m < (size_t)(p->min_population > 0 ? p->min_population : 1) || isnan(ratio))
        return;

    /* Node scores: the median of the values of the links touching each node. */
    memset(w->cnt, 0, sizeof(int) * (size_t)nnodes);
    for (size_t k = g0; k < g1; k++) {
        const nt_vlink_t *l = &L[w->order[k]];
        if (l->src_node >= 0)
            w->cnt[l->src_node]++;
        if (l->dst_node >= 0 && l->dst_node != l->src_node)
            w->cnt[l->dst_node]++;
    }
    int pos = 0;
    for (int i = 0; i < nnodes; i++) {
        w->off[i] = pos;
        pos += w->cnt[i];
        w->cnt[i] = 0;
    }
    for (size_t k = g0; k < g1; k++) {
        size_t li = w->order[k];
        const nt_vlink_t *l = &L[li];
        if (l->src_node >= 0)
            w->vals[w->off[l->src_node] + w->cnt[l->src_node]++] = w->eff[li];
        if (l->dst_node >= 0 && l->dst_node != l->src_node)
            w->vals[w->off[l->dst_node] + w->cnt[l->dst_node]++] = w->eff[li];
    }
    size_t nscored = 0;
    for (int i = 0; i < nnodes; i++) {
        w->meds[i] = NAN;
        if (w->cnt[i] > 0) {
            w->meds[i] = node_median(w->vals + w->off[i], (size_t)w->cnt[i], metric);
            w->scratch[nscored++] = w->meds[i];
        }
    }
    /* The node reference is the median of node medians: one bad node moves it by at most one
     * rank, so it cannot drag the reference the way a mean or ClusterKit's maximum can. */
    double node_ref = nscored ? nt_stats_median(w->scratch, nscored) : NAN;
    for (int i = 0; i < nnodes; i++) {
        w->susp[i] = 0;
        if (isnan(w->meds[i]) || isnan(node_ref))
            continue;
        w->susp[i] = (char)is_worse(metric, w->meds[i], ratio * node_ref);
        if (w->susp[i] && nodes)
            nodes[i].suspect = 1;
        double bad = metric == NT_METRIC_BW ? node_ref / w->meds[i] : w->meds[i] / node_ref;
        if (isfinite(bad) && bad > w->ev[i].badness) {
            w->ev[i].badness = bad;
            w->ev[i].median = w->meds[i];
            w->ev[i].reference = node_ref;
            w->ev[i].example = first;
        }
    }

    /* The link reference: the median of the links that touch no suspect node (all links when
     * every link touches one, which cannot happen with fewer than half the nodes suspect). */
    size_t nref = 0;
    for (size_t k = g0; k < g1; k++) {
        size_t li = w->order[k];
        const nt_vlink_t *l = &L[li];
        if ((l->src_node >= 0 && w->susp[l->src_node]) ||
            (l->dst_node >= 0 && w->susp[l->dst_node]))
            continue;
        w->scratch[nref++] = w->eff[li];
    }
    if (nref == 0)
        for (size_t k = g0; k < g1; k++)
            w->scratch[nref++] = w->eff[w->order[k]];
    double ref = nt_stats_median(w->scratch, nref);
    for (size_t k = g0; k < g1; k++)
        L[w->order[k]].reference = ref;
}

/* ---- node blame -------------------------------------------------------------------------- */

typedef struct npair {
    int a, b; /* a < b */
    int failed;
} npair_t;

static int cmp_npair(const void *pa, const void *pb)
{
    const npair_t *x = pa, *y = pb;
    if (x->a != y->a)
        return (x->a > y->a) - (x->a < y->a);
    return (x->b > y->b) - (x->b < y->b);
}

static nt_status_t blame_nodes(nt_vlink_t *L, size_t n, int nnodes, nt_node_verdict_t *nodes,
                               const work_t *w)
{
    npair_t *pairs = malloc(sizeof(*pairs) * (n ? n : 1));
    if (!pairs)
        return NT_ERR_NOMEM;
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        const nt_vlink_t *l = &L[i];
        if (l->verdict == NT_SKIPPED || l->src_node < 0 || l->dst_node < 0 ||
            l->src_node == l->dst_node)
            continue;
        int a = l->src_node < l->dst_node ? l->src_node : l->dst_node;
        int b = l->src_node < l->dst_node ? l->dst_node : l->src_node;
        pairs[np++] = (npair_t){a, b, l->verdict == NT_FAIL};
    }
    qsort(pairs, np, sizeof(*pairs), cmp_npair);
    /* One entry per node pair: failed when any of its figures failed. */
    size_t nu = 0;
    for (size_t i = 0; i < np;) {
        size_t j = i;
        int failed = 0;
        for (; j < np && pairs[j].a == pairs[i].a && pairs[j].b == pairs[i].b; j++)
            failed |= pairs[j].failed;
        pairs[nu] = pairs[i];
        pairs[nu++].failed = failed;
        i = j;
    }
    /* Blame one node at a time, the one failing with the most partners first, and count the
     * others' partners without the nodes already blamed: a good node whose only bad partner is
     * the blamed node is not blamed along with it (ClusterKit reports the bad node alone). */
    unsigned char *blamed = calloc((size_t)nnodes + 1, 1);
    if (!blamed) {
        free(pairs);
        return NT_ERR_NOMEM;
    }
    for (;;) {
        int best = -1;
        for (int i = 0; i < nnodes; i++)
            nodes[i].partners = nodes[i].failed_partners = 0;
        for (size_t i = 0; i < nu; i++) {
            int ends[2] = {pairs[i].a, pairs[i].b};
            for (int e = 0; e < 2; e++) {
                int other = ends[1 - e];
                if (blamed[other] && !blamed[ends[e]])
                    continue;
                nodes[ends[e]].partners++;
                nodes[ends[e]].failed_partners += pairs[i].failed;
            }
        }
        for (int i = 0; i < nnodes; i++) {
            const nt_node_verdict_t *nv = &nodes[i];
            if (blamed[i] || !(nv->failed_partners >= 2 && 2 * nv->failed_partners > nv->partners))
                continue;
            if (best < 0 ||
                nv->failed_partners * nodes[best].partners >
                    nodes[best].failed_partners * nv->partners ||
                (nv->failed_partners * nodes[best].partners ==
                     nodes[best].failed_partners * nv->partners &&
                 nv->failed_partners > nodes[best].failed_partners))
                best = i;
        }
        if (best < 0)
            break;
        blamed[best] = 1;
    }
    /* The counts reported are over every partner, blamed ones included. */
    for (int i = 0; i < nnodes; i++)
        nodes[i].partners = nodes[i].failed_partners = 0;
    for (size_t i = 0; i < nu; i++) {
        nodes[pairs[i].a].partners++;
        nodes[pairs[i].b].partners++;
        nodes[pairs[i].a].failed_partners += pairs[i].failed;
        nodes[pairs[i].b].failed_partners += pairs[i].failed;
    }
    free(pairs);

    for (int i = 0; i < nnodes; i++) {
        nt_node_verdict_t *nv = &nodes[i];
        if (!blamed[i])
            continue;
        nv->blamed = 1;
        nv->verdict = NT_FAIL;
        snprintf(nv->reason, sizeof(nv->reason), "fails with %d of %d partners",
                 nv->failed_partners, nv->partners);
        char a[32], b[32], sz[32];
        const evidence_t *ev = &w->ev[i];
        /* The reason quotes a figure that failed: the node's median when it was an outlier of
         * its population (suspect), else one of its failing links against the figure that
         * failed it (expected first, then the population reference). */
        if (ev->example && nv->suspect && ev->badness > 1) {
            cat(nv->reason, sizeof(nv->reason), ": %s %s median %s %s vs %s %s population",
                ev->example->kind, fmt_bytes(sz, sizeof(sz), ev->example->bytes),
                fmt_num(a, sizeof(a), ev->median), unit_of(ev->example->metric),
                fmt_num(b, sizeof(b), ev->reference), unit_of(ev->example->metric));
        } else {
            const nt_vlink_t *by_exp = NULL, *by_peer = NULL;
            size_t ke = 0, kp = 0;
            for (size_t k = 0; k < n; k++) {
                const nt_vlink_t *l = &L[k];
                if (l->verdict != NT_FAIL || (l->src_node != i && l->dst_node != i))
                    continue;
                if (!by_exp && (l->fired & NT_FIRED_EXPECTED) && !isnan(l->expected)) {
                    by_exp = l;
                    ke = k;
                }
                if (!by_peer && (l->fired & NT_FIRED_PEER) && !isnan(l->reference)) {
                    by_peer = l;
                    kp = k;
                }
            }
            if (by_exp)
                cat(nv->reason, sizeof(nv->reason), ": e.g. %s %s %s %s vs expected %s %s",
                    by_exp->kind, fmt_bytes(sz, sizeof(sz), by_exp->bytes),
                    fmt_num(a, sizeof(a), w->eff[ke]), unit_of(by_exp->metric),
                    fmt_num(b, sizeof(b), by_exp->expected), unit_of(by_exp->metric));
            else if (by_peer)
                cat(nv->reason, sizeof(nv->reason), ": e.g. %s %s %s %s vs %s %s population",
                    by_peer->kind, fmt_bytes(sz, sizeof(sz), by_peer->bytes),
                    fmt_num(a, sizeof(a), w->eff[kp]), unit_of(by_peer->metric),
                    fmt_num(b, sizeof(b), by_peer->reference), unit_of(by_peer->metric));
        }
    }

    /* The blamed node's failing links are its fault, not separate link faults. */
    for (size_t k = 0; k < n; k++) {
        nt_vlink_t *l = &L[k];
        if (l->verdict != NT_FAIL)
            continue;
        int bs = l->src_node >= 0 && nodes[l->src_node].blamed;
        int bd = l->dst_node >= 0 && l->dst_node != l->src_node && nodes[l->dst_node].blamed;
        if (!bs && !bd)
            continue;
        char n1[32], n2[32], old[sizeof(l->reason)];
        l->fired |= NT_FIRED_BLAME;
        memcpy(old, l->reason, sizeof(old));
        if (bs && bd)
            snprintf(l->reason, sizeof(l->reason), "caused by blamed nodes %s and %s; ",
                     node_name(nodes, l->src_node, n1, sizeof(n1)),
                     node_name(nodes, l->dst_node, n2, sizeof(n2)));
        else
            snprintf(l->reason, sizeof(l->reason), "caused by blamed node %s; ",
                     node_name(nodes, bs ? l->src_node : l->dst_node, n1, sizeof(n1)));
        cat(l->reason, sizeof(l->reason), "%s", old);
    }
    free(blamed);
    return NT_OK;
}

/* ---- the engine -------------------------------------------------------------------------- */

static void work_free(work_t *w)
{
    free(w->ev);
    free(w->susp);
    free(w->scratch);
    free(w->meds);
    free(w->vals);
    free(w->off);
    free(w->cnt);
    free(w->order);
    free(w->eff);
}

nt_status_t nt_verdict_judge(nt_vlink_t *L, size_t n, int nnodes, const nt_peer_rules_t *peer,
                             nt_node_verdict_t *nodes)
{
    if ((n > 0 && !L) || nnodes < 0)
        return NT_ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        const nt_vlink_t *l = &L[i];
        if (!l->kind || (l->metric != NT_METRIC_BW && l->metric != NT_METRIC_LAT) ||
            l->src_node < -1 || l->src_node >= nnodes || l->dst_node < -1 || l->dst_node >= nnodes)
            return NT_ERR_INVALID;
    }
    nt_peer_rules_t p = peer ? *peer : nt_peer_rules_default();
    size_t nn = (size_t)nnodes;
    work_t w = {0};
    w.eff = malloc(sizeof(double) * (n ? n : 1));
    w.order = malloc(sizeof(size_t) * (n ? n : 1));
    w.cnt = malloc(sizeof(int) * (nn ? nn : 1));
    w.off = malloc(sizeof(int) * (nn ? nn : 1));
    w.vals = malloc(sizeof(double) * (2 * n + 1));
    w.meds = malloc(sizeof(double) * (nn ? nn : 1));
    w.scratch = malloc(sizeof(double) * (n + nn + 1));
    w.susp = calloc(nn ? nn : 1, 1);
    w.ev = calloc(nn ? nn : 1, sizeof(evidence_t));
    if (!w.eff || !w.order || !w.cnt || !w.off || !w.vals || !w.meds || !w.scratch || !w.susp ||
        !w.ev) {
        work_free(&w);
        return NT_ERR_NOMEM;
    }

    if (nodes)
        for (int i = 0; i < nnodes; i++) {
            nodes[i].verdict = NT_SKIPPED;
            nodes[i].blamed = nodes[i].suspect = 0;
            nodes[i].partners = nodes[i].failed_partners = 0;
            nodes[i].reason[0] = '\0';
        }

    /* Which value is judged: the better of the first measurement and the retest. */
    for (size_t i = 0; i < n; i++) {
        nt_vlink_t *l = &L[i];
        l->verdict = NT_PASS;
        l->reason[0] = '\0';
        l->fired = 0;
        l->reference = NAN;
        l->population = 0;
        w.eff[i] = better(l->metric, l->value, l->retested ? l->retest_value : NAN);
        if (isnan(w.eff[i])) {
            l->verdict = NT_SKIPPED;
            snprintf(l->reason, sizeof(l->reason), "not measured");
            continue;
        }
        w.order[w.nordered++] = i;
        if (nodes) {
            if (l->src_node >= 0)
                nodes[l->src_node].verdict = NT_PASS;
            if (l->dst_node >= 0)
                nodes[l->dst_node].verdict = NT_PASS;
        }
    }

    /* Step 2: populations of the same kind, scope, metric and size. */
    qsort_r(w.order, w.nordered, sizeof(size_t), cmp_pop, L);
    for (size_t g0 = 0; g0 < w.nordered;) {
        size_t g1 = g0 + 1;
        while (g1 < w.nordered && same_pop(&L[w.order[g0]], &L[w.order[g1]]))
            g1++;
        judge_population(L, &w, g0, g1, nnodes, &p, nodes);
        g0 = g1;
    }

    /* Steps 1 and 3: expected figures and the peer reference, on the first measurement and on
     * the judged (better) value; a retest that passes turns a failure into a warning. */
    for (size_t k = 0; k < w.nordered; k++) {
        size_t i = w.order[k];
        nt_vlink_t *l = &L[i];
        unsigned now = failing_bits(l, w.eff[i], &p);
        int retest = l->retested && !isnan(l->retest_value);
        unsigned before = retest && !isnan(l->value) ? failing_bits(l, l->value, &p) : now;
        char a[32], b[32], sz[32];
        if (now) {
            l->verdict = NT_FAIL;
            l->fired = now | (retest ? NT_FIRED_RETEST : 0);
            describe(l->reason, sizeof(l->reason), l, w.eff[i], now, &p);
            if (retest)
                cat(l->reason, sizeof(l->reason), "; failed again on retest (%s then %s %s)",
                    fmt_num(a, sizeof(a), l->value), fmt_num(b, sizeof(b), l->retest_value),
                    unit_of(l->metric));
        } else if (before) {
            l->verdict = NT_WARN;
            l->fired = before | NT_FIRED_RETEST;
            snprintf(l->reason, sizeof(l->reason),
                     "flaky at %s: failed first measurement %s %s, passed retest %s %s",
                     fmt_bytes(sz, sizeof(sz), l->bytes), fmt_num(a, sizeof(a), l->value),
                     unit_of(l->metric), fmt_num(b, sizeof(b), l->retest_value),
                     unit_of(l->metric));
        }
    }

    /* Step 4: node blame. */
    nt_status_t st = NT_OK;
    if (nodes && nnodes > 0)
        st = blame_nodes(L, n, nnodes, nodes, &w);
    work_free(&w);
    return st;
}

size_t nt_verdict_retest_list(const nt_vlink_t *links, size_t n, size_t *idx, size_t cap)
{
    size_t count = 0;
    for (size_t i = 0; links && i < n; i++) {
        if (links[i].verdict != NT_FAIL || links[i].retested)
            continue;
        if (idx && count < cap)
            idx[count] = i;
        count++;
    }
    return count;
}

int nt_vlink_is_link_fault(const nt_vlink_t *l)
{
    return l && l->verdict == NT_FAIL && !(l->fired & NT_FIRED_BLAME);
}
