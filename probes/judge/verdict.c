/* The link verdict engine: expected figures, peer populations judged node-first with a limit
 * widened by the population's noise, retest confirmation and node blame (docs/verdicts.md
 * has the rules and the numbers).
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

#include "nettune/report.h"
#include "nettune/stats.h"

nt_peer_rules_t nt_peer_rules_default(void)
{
    /* ClusterKit's 93% (docs/reference.md section 4); 2.0 for latency (ClusterKit: 2.1 x minimum,
     * we compare with a median, see docs/verdicts.md); 5 members as docs/verdicts.md says. */
    return (nt_peer_rules_t){
        .bw_ratio = 0.93, .lat_ratio = 2.0, .tail_ratio = 10.0, .min_population = 5};
}

/* Noise: the limit of a population is never tighter than NT_NOISE_SIGMAS standard deviations
 * of its log values (sigma = 1.4826 x MAD, robust to the outliers being looked for), and with
 * fewer than NT_NOISE_MIN_REF reference values sigma is at least NT_NOISE_SIGMA_FLOOR: a
 * reference from 1-4 links says little about the spread. Node medians are compared from
 * NT_MIN_NODES scored nodes up. docs/verdicts.md "Noise" gives the reasoning. */
#define NT_NOISE_SIGMAS 3.0
#define NT_NOISE_MIN_REF 5
#define NT_NOISE_SIGMA_FLOOR 0.2
#define NT_MIN_NODES 3
/* However noisy a population, its bandwidth limit is never wider than NT_NOISE_WIDEST_BW of
 * the reference: the spread it is widened by is measured on the links under judgement, and a
 * fault on one side's transmit path splits its node's links into a slow and a healthy group
 * whose spread is the fault itself (a CI run of rate10-egress: h3 sent at 0.17 GB/s and
 * received at 0.95-1.9, sigma 0.79 widened the limit to 9% of the reference and no link and
 * no node failed). A link at a fifth of its population twice over is not noise; the
 * oversubscribed 2-core test machine's healthy spread (sigma about 0.6) widened to 17%. */
#define NT_NOISE_WIDEST_BW 0.2
/* A link fails by the peer rule alone only far from its population, confirmed by a retest:
 * bandwidth under NT_FAIL_BW of the reference, latency over NT_FAIL_LAT x lat_ratio, p99 over
 * NT_FAIL_TAIL x tail_ratio (or the noise limit, when that is wider). Between the ratio and
 * these it is marginal: a warning, which counts towards blaming a node once confirmed. */
#define NT_FAIL_BW 0.5
#define NT_FAIL_LAT 2.0
#define NT_FAIL_TAIL 3.0
/* Under advisory peer rules (an unstable run) a confirmed peer finding still fails when its
 * first measurement and its retest are within this factor of each other. */
#define NT_CONSISTENT 1.5

/* ---- formatting -------------------------------------------------------------------------- */

/* Three significant figures, no exponent for the figures links produce ("10.5", "0.35",
 * "393", "1234"). */
static const char *nt_verdict_fmt_num(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (fabs(v) >= 1000)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.3g", v);
    return buf;
}

static const char *nt_unit_of(int metric)
{
    return metric == NT_METRIC_BW ? "GB/s" : "us";
}

const char *nt_fmt_fig(char *buf, size_t len, double v)
{
    return nt_verdict_fmt_num(buf, len, v);
}

const char *nt_metric_unit(int metric)
{
    return nt_unit_of(metric);
}

const char *nt_metric_check(int metric)
{
    return metric == NT_METRIC_BW ? "bw" : metric == NT_METRIC_LAT ? "lat" : "p99";
}

const char *nt_metric_cause(int metric)
{
    return metric == NT_METRIC_BW    ? "bandwidth"
           : metric == NT_METRIC_LAT ? "latency"
                                     : "tail_latency";
}

/* "latency " / "p99 latency " / "" before a figure in link reasons. */
static const char *nt_what_of(int metric)
{
    return metric == NT_METRIC_BW ? "" : metric == NT_METRIC_LAT ? "latency " : "p99 latency ";
}

/* Append to a fixed buffer; a reason that does not fit is cut (it stays a valid string). */
static void nt_verdict_cat(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void nt_verdict_cat(char *buf, size_t len, const char *fmt, ...)
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

static const char *nt_node_name(const nt_node_verdict_t *nodes, int i, char *buf, size_t len)
{
    if (nodes && nodes[i].host && nodes[i].host[0])
        return nodes[i].host;
    snprintf(buf, len, "node %d", i);
    return buf;
}

/* ---- judgement helpers ------------------------------------------------------------------- */

static int nt_is_worse(int metric, double v, double limit)
{
    return metric == NT_METRIC_BW ? v < limit : v > limit;
}

/* The value a link is judged on: the retest's when there is one, else the first. */
static double nt_judged_value(const nt_vlink_t *l)
{
    if (l->retested && !isnan(l->retest_value))
        return l->retest_value;
    return l->value;
}

static double nt_ratio_of(const nt_peer_rules_t *p, int metric)
{
    return metric == NT_METRIC_BW    ? p->bw_ratio
           : metric == NT_METRIC_LAT ? p->lat_ratio
                                     : p->tail_ratio;
}

/* Which judgements a value fails: NT_FIRED_EXPECTED and/or NT_FIRED_PEER. */
static unsigned nt_failing_bits(const nt_vlink_t *l, double v, const nt_peer_rules_t *p)
{
    unsigned bits = 0;
    if (!isnan(l->expected) && nt_is_worse(l->metric, v, l->expected))
        bits |= NT_FIRED_EXPECTED;
    (void)p;
    if (!isnan(l->reference) && !isnan(l->factor) &&
        nt_is_worse(l->metric, v, l->factor * l->reference))
        bits |= NT_FIRED_PEER;
    return bits;
}

/* 1 when v is beyond the link-fault limit of the peer rule (fail_factor x reference). */
static int nt_peer_bad(const nt_vlink_t *l, double v)
{
    return !isnan(l->reference) && !isnan(l->fail_factor) &&
           nt_is_worse(l->metric, v, l->fail_factor * l->reference);
}

/* "at 1 MiB: 5 GB/s, below the expected 10 GB/s and below 50% of the population median ...";
 * f: the factor quoted (the marginal or the link-fault one). */
static void nt_describe(char *buf, size_t len, const nt_vlink_t *l, double v, unsigned bits,
                     double f_used)
{
    char a[32], b[32], sz[32];
    const int bw = l->metric == NT_METRIC_BW;
    buf[0] = '\0';
    nt_verdict_cat(buf, len, "at %s: %s%s %s", nt_bytes_str(sz, sizeof(sz), l->bytes),
                   nt_what_of(l->metric), nt_verdict_fmt_num(a, sizeof(a), v),
                   nt_unit_of(l->metric));
    if (bits & NT_FIRED_EXPECTED)
        nt_verdict_cat(buf, len, ", %s the expected %s%s %s", bw ? "below" : "above",
                       bw ? "" : "maximum ", nt_verdict_fmt_num(b, sizeof(b), l->expected),
                       nt_unit_of(l->metric));
    if (bits & NT_FIRED_PEER) {
        char f[32];
        if (bw)
            nt_verdict_cat(buf, len, "%s below %.0f%% of the population median %s GB/s (%zu links)",
                (bits & NT_FIRED_EXPECTED) ? " and" : ",", f_used * 100,
                nt_verdict_fmt_num(b, sizeof(b), l->reference), l->population);
        else
            nt_verdict_cat(buf, len, "%s above %sx the population median %s us (%zu links)",
                (bits & NT_FIRED_EXPECTED) ? " and" : ",", nt_verdict_fmt_num(f, sizeof(f), f_used),
                nt_verdict_fmt_num(b, sizeof(b), l->reference), l->population);
    }
}

/* ---- populations ------------------------------------------------------------------------- */

static int nt_verdict_cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int nt_cmp_pop(const void *pa, const void *pb, void *ctx)
{
    const nt_vlink_t *L = ctx;
    const nt_vlink_t *a = &L[*(const size_t *)pa], *b = &L[*(const size_t *)pb];
    int c = nt_verdict_cmp_str(a->kind, b->kind);
    if (!c)
        c = nt_verdict_cmp_str(a->scope, b->scope);
    if (!c)
        c = (a->metric > b->metric) - (a->metric < b->metric);
    if (!c)
        c = (a->bytes > b->bytes) - (a->bytes < b->bytes);
    if (!c)
        c = (*(const size_t *)pa > *(const size_t *)pb) -
            (*(const size_t *)pa < *(const size_t *)pb);
    return c;
}

static int nt_same_pop(const nt_vlink_t *a, const nt_vlink_t *b)
{
    return !nt_verdict_cmp_str(a->kind, b->kind) && !nt_verdict_cmp_str(a->scope, b->scope) &&
           a->metric == b->metric && a->bytes == b->bytes;
}

static int nt_verdict_cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* A node's score: the median of its links, and for an even count the better of the two middle
 * values, so that a node is an outlier only when more than half of its links are (the same
 * "more than half" as the blame rule, for both metrics). values is reordered. */
static double nt_node_median(double *values, size_t n, int metric)
{
    qsort(values, n, sizeof(double), nt_verdict_cmp_double);
    if (n % 2)
        return values[n / 2];
    return metric == NT_METRIC_BW ? values[n / 2] : values[n / 2 - 1];
}

/* One of a node's link values with the partner node at its other end. */
typedef struct pval {
    int partner;
    double v;
} pval_t;

static int nt_cmp_pval(const void *pa, const void *pb)
{
    const pval_t *a = pa, *b = pb;
    if (a->partner != b->partner)
        return (a->partner > b->partner) - (a->partner < b->partner);
    return (a->v > b->v) - (a->v < b->v);
}

/* A node's score: with links to at least 2 distinct partners, the best of its partners'
 * medians (nt_node_median over the links to each partner); else the median of all its links.
 * A link runs at the pace of its slower end, so a healthy node's best partner shows its own
 * figure however many of its partners are slow (two slow hosts among 8 in the --quick shape:
 * their common partners have 2 slow partners of 3, and their plain medians are as slow as
 * theirs), while every partner of a slow node is slow. pv is reordered; tmp holds n values. */
static double nt_node_best_partner(pval_t *pv, size_t n, int metric, double *tmp, size_t *npartners)
{
    qsort(pv, n, sizeof(*pv), nt_cmp_pval);
    double best = NAN;
    size_t groups = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && pv[j].partner == pv[i].partner)
            j++;
        for (size_t k = i; k < j; k++)
            tmp[k - i] = pv[k].v;
        double m = nt_node_median(tmp, j - i, metric);
        if (isnan(best) || nt_is_worse(metric, best, m))
            best = m;
        groups++;
        i = j;
    }
    if (npartners)
        *npartners = groups;
    if (groups >= 2)
        return best;
    for (size_t k = 0; k < n; k++)
        tmp[k] = pv[k].v;
    return nt_node_median(tmp, n, metric);
}

/* The worst evidence against a node over all populations, for its blame reason. */
typedef struct evidence {
    double badness; /* >1: how many times worse than the reference its median is */
    double median, reference;
    const char *role;          /* "", " sent", " received": which of its links the median is of */
    const nt_vlink_t *example; /* a link of that population (kind, bytes, metric) */
} evidence_t;

typedef struct work {
    double *eff;   /* per link: the value judged (the retest's, else the first) */
    size_t *order; /* judged link indices, sorted into populations */
    size_t nordered;
    int *cnt, *off;  /* per node: links in the current population, and offsets */
    int *cs, *cd;    /* per node: links it sends / receives in the current population */
    double *vals;    /* per node slices of link values (2 per link at most) */
    double *vs, *vd; /* per node slices of sent / received link values */
    double *meds;    /* per node median in the current population */
    double *score;   /* per node score (nt_node_best_partner) in the current population */
    pval_t *pv;      /* per node slices of (partner, value), all / sent / received */
    pval_t *pvs, *pvd;
    double *scratch; /* node medians / link values for a median */
    double *tmp;     /* per node slices of the values its spread is taken from */
    int *cx;         /* per node: how many of them */
    double *ms, *md; /* per node: median of sent / received links (NaN: fewer than 2 each) */
    double *ss, *sd; /* per node: score of sent / received links (NaN: fewer than 2 each) */
    char *susp;      /* per node: suspect in the current population */
    evidence_t *ev;  /* per node */
} work_t;

/* The median with the mean of the two middle values for an even count (for the spread: the
 * nearest-rank median of 2 values would make every MAD 0). vals is reordered. */
static double nt_mid_median(double *vals, size_t n)
{
    qsort(vals, n, sizeof(double), nt_verdict_cmp_double);
    return n % 2 ? vals[n / 2] : 0.5 * (vals[n / 2 - 1] + vals[n / 2]);
}

/* sigma of the log values (1.4826 x their MAD): the population's own spread, robust to the
 * outliers the rules look for. vals is reordered. */
static double nt_log_sigma(double *vals, size_t n)
{
    if (n < 2)
        return 0;
    for (size_t i = 0; i < n; i++)
        vals[i] = log(fmax(vals[i], 1e-12));
    double med = nt_mid_median(vals, n);
    for (size_t i = 0; i < n; i++)
        vals[i] = fabs(vals[i] - med);
    return 1.4826 * nt_mid_median(vals, n);
}

/* Note one score of node i (nt_node_best_partner) against the node reference (the median of
 * the node scores): suspect when worse than the limit. The evidence quoted is the median of
 * the same links against the median of all nodes' medians (median_ref) when that is beyond
 * the limit too (it is for a node slow with every partner), else the score itself. */
static void nt_node_score(work_t *w, int i, int metric, double score, double median,
                          double node_ref, double median_ref, double factor, const char *role,
                          const nt_vlink_t *first, nt_node_verdict_t *nodes)
{
    if (isnan(score) || isnan(node_ref) || !nt_is_worse(metric, score, factor * node_ref))
        return;
    w->susp[i] = 1;
    if (nodes)
        nodes[i].suspect = 1;
    if (isnan(median) || isnan(median_ref) || !nt_is_worse(metric, median, factor * median_ref)) {
        median = score;
        median_ref = node_ref;
    }
    node_ref = median_ref;
    double bad = metric == NT_METRIC_BW ? node_ref / median : median / node_ref;
    /* Evidence is kept only for medians beyond the limit, so the reason quotes a failure. */
    if (nt_is_worse(metric, median, factor * node_ref) && isfinite(bad) && bad > w->ev[i].badness) {
        w->ev[i].badness = bad;
        w->ev[i].median = median;
        w->ev[i].reference = node_ref;
        w->ev[i].role = role;
        w->ev[i].example = first;
    }
}

/* The marginal limit as a factor of the reference: the peer ratio, widened to NT_NOISE_SIGMAS
 * sigma of the population's log values (bandwidth: never wider than NT_NOISE_WIDEST_BW). */
static double nt_noise_factor(int metric, double ratio, double sigma)
{
    if (metric == NT_METRIC_BW)
        return fmin(ratio, fmax(exp(-NT_NOISE_SIGMAS * sigma), NT_NOISE_WIDEST_BW));
    return fmax(ratio, exp(NT_NOISE_SIGMAS * sigma));
}

double nt_verdict_noise_factor(int metric, double ratio, double *vals, size_t n)
{
    return nt_noise_factor(metric, ratio, nt_log_sigma(vals, n));
}

/* The link-fault limit as a factor of the reference: NT_FAIL_BW of it for bandwidth,
 * NT_FAIL_LAT / NT_FAIL_TAIL x the ratio for latency and its tail, or the noise-widened limit
 * factor where that is wider. */
static double nt_fail_limit(int metric, double ratio, double factor)
{
    return metric == NT_METRIC_BW    ? fmin(NT_FAIL_BW, factor)
           : metric == NT_METRIC_LAT ? fmax(NT_FAIL_LAT * ratio, factor)
                                     : fmax(NT_FAIL_TAIL * ratio, factor);
}

/* Of the nodes marked in w->susp, keeps those whose score, sent or received score is worse
 * than limit; returns how many are left. */
static size_t nt_keep_beyond(work_t *w, int nnodes, int metric, double limit)
{
    size_t n = 0;
    for (int i = 0; i < nnodes; i++) {
        double m3[3] = {w->score[i], w->ss[i], w->sd[i]};
        int cand = w->susp[i];
        w->susp[i] = 0;
        for (int k = 0; cand && k < 3; k++)
            if (!isnan(m3[k]) && nt_is_worse(metric, m3[k], limit))
                w->susp[i] = 1;
        n += (size_t)w->susp[i];
    }
    return n;
}

static void nt_judge_population(nt_vlink_t *L, work_t *w, size_t g0, size_t g1, int nnodes,
                             const nt_peer_rules_t *p, nt_node_verdict_t *nodes)
{
    size_t m = g1 - g0;
    for (size_t k = g0; k < g1; k++)
        L[w->order[k]].population = m;
    const nt_vlink_t *first = &L[w->order[g0]];
    const int metric = first->metric;
    double ratio = nt_ratio_of(p, metric);
    if (isnan(ratio))
        return;
    const int full = m >= (size_t)(p->min_population > 0 ? p->min_population : 1);

    /* Node scores: the median of the values of the links touching each node, and of the links
     * it sends and receives apart. */
    memset(w->cnt, 0, sizeof(int) * (size_t)nnodes);
    memset(w->cs, 0, sizeof(int) * (size_t)nnodes);
    memset(w->cd, 0, sizeof(int) * (size_t)nnodes);
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
        int s = l->src_node, d = l->dst_node;
        if (s >= 0) {
            w->pv[w->off[s] + w->cnt[s]] = (pval_t){d >= 0 ? d : s, w->eff[li]};
            w->vals[w->off[s] + w->cnt[s]++] = w->eff[li];
        }
        if (d >= 0 && d != s) {
            w->pv[w->off[d] + w->cnt[d]] = (pval_t){s >= 0 ? s : d, w->eff[li]};
            w->vals[w->off[d] + w->cnt[d]++] = w->eff[li];
        }
        if (s >= 0 && d >= 0 && d != s) {
            w->pvs[w->off[s] + w->cs[s]] = (pval_t){d, w->eff[li]};
            w->vs[w->off[s] + w->cs[s]++] = w->eff[li];
            w->pvd[w->off[d] + w->cd[d]] = (pval_t){s, w->eff[li]};
            w->vd[w->off[d] + w->cd[d]++] = w->eff[li];
        }
    }
    size_t nscored = 0;
    for (int i = 0; i < nnodes; i++) {
        w->meds[i] = w->score[i] = NAN;
        w->susp[i] = 0;
        /* A node is scored with at least 2 links: one link is a link's figure, not a node's. */
        if (w->cnt[i] >= 2) {
            w->meds[i] = nt_node_median(w->vals + w->off[i], (size_t)w->cnt[i], metric);
            w->score[i] = nt_node_best_partner(w->pv + w->off[i], (size_t)w->cnt[i], metric,
                                            w->vals + w->off[i], NULL);
            w->tmp[nscored] = w->meds[i];
            w->scratch[nscored++] = w->score[i];
        }
    }
    /* The node reference is the median of node scores: one bad node moves it by at most one
     * rank, so it cannot drag the reference the way a mean or ClusterKit's maximum can. Node
     * scores are compared from NT_MIN_NODES nodes up. */
    double node_ref = nscored >= NT_MIN_NODES ? nt_stats_median(w->scratch, nscored) : NAN;
    /* The median of the plain node medians: the lenient bound of the link reference below,
     * and what a blamed node's reason quotes its own median against. Once suspects are known
     * it is taken again with the other nodes' links to suspects left out. */
    double median_ref = nscored >= NT_MIN_NODES ? nt_stats_median(w->tmp, nscored) : NAN;

    /* Role medians: a node that sends and receives at least 2 links each is also scored by
     * its sent and received links apart (a transmit-side fault halves the combined median's
     * evidence). A role score needs links with at least 2 partners: links with one partner
     * only are that partner's figure as much as the node's (--quick on 4 hosts measures
     * latency one way per pair: h3 sent its 8 B links to h4 alone, h4 at 12x, and h3's
     * sent score made it a second suspect of 4, so the half-the-nodes rule cleared both). */
    for (int i = 0; i < nnodes; i++) {
        w->ms[i] = w->md[i] = w->ss[i] = w->sd[i] = NAN;
        if (w->cs[i] >= 2 && w->cd[i] >= 2) {
            size_t ps = 0, pd = 0;
            w->ms[i] = nt_node_median(w->vs + w->off[i], (size_t)w->cs[i], metric);
            w->md[i] = nt_node_median(w->vd + w->off[i], (size_t)w->cd[i], metric);
            w->ss[i] = nt_node_best_partner(w->pvs + w->off[i], (size_t)w->cs[i], metric,
                                         w->vs + w->off[i], &ps);
            w->sd[i] = nt_node_best_partner(w->pvd + w->off[i], (size_t)w->cd[i], metric,
                                         w->vd + w->off[i], &pd);
            if (ps < 2)
                w->ss[i] = NAN;
            if (pd < 2)
                w->sd[i] = NAN;
        }
    }
    double node_sigma = 0;
    if (isnan(node_ref))
        goto links;

    /* Candidates: nodes with a score worse than the plain ratio x the node reference. */
    for (int i = 0; i < nnodes; i++) {
        double m3[3] = {w->score[i], w->ss[i], w->sd[i]};
        for (int k = 0; k < 3; k++)
            if (!isnan(m3[k]) && nt_is_worse(metric, m3[k], ratio * node_ref))
                w->susp[i] = 1;
    }
    /* The limit: ratio x reference, widened to NT_NOISE_SIGMAS sigma of the log values. For
     * the node medians sigma is the spread of each node's links around its own median (the
     * median of those over the nodes), a candidate's over all its links, another node's over
     * its links to non-candidates: a faulty node's links are all slow alike, and the links to
     * it do not widen its partners' spread. */
    {
        double sigma, factor;
        size_t nsig = 0;
        memset(w->cx, 0, sizeof(int) * (size_t)nnodes);
        for (size_t k = g0; k < g1; k++) {
            size_t li = w->order[k];
            const nt_vlink_t *l = &L[li];
            int ends[2] = {l->src_node, l->dst_node};
            for (int e = 0; e < 2; e++) {
                int i = ends[e], o = ends[1 - e];
                if (i < 0 || (e == 1 && i == ends[0]))
                    continue;
                if (w->susp[i] || o < 0 || o == i || !w->susp[o])
                    w->tmp[w->off[i] + w->cx[i]++] = w->eff[li];
            }
        }
        /* The deviations of every node's log values from its own median, pooled (the role
         * slices are free again: their medians are taken): one MAD over all of them is far
         * steadier than one per node. */
        size_t npool = 0;
        for (int i = 0; i < nnodes; i++) {
            if (w->cx[i] < 2)
                continue;
            double *v = w->tmp + w->off[i];
            for (int k = 0; k < w->cx[i]; k++)
                v[k] = log(fmax(v[k], 1e-12));
            double med = nt_mid_median(v, (size_t)w->cx[i]);
            for (int k = 0; k < w->cx[i]; k++)
                w->vs[npool++] = fabs(v[k] - med);
            nsig++;
        }
        sigma = npool ? 1.4826 * nt_mid_median(w->vs, npool) : 0;
        if (nsig < NT_MIN_NODES && sigma < NT_NOISE_SIGMA_FLOOR)
            sigma = NT_NOISE_SIGMA_FLOOR;
        node_sigma = sigma;
        factor = nt_noise_factor(metric, ratio, sigma);
        /* Suspects: the candidates beyond the widened limit, and fewer than half of the
         * scored nodes: the reference is the majority's, so when half of the nodes look slow
         * the population is noisy, not half broken. */
        size_t nsusp = nt_keep_beyond(w, nnodes, metric, factor * node_ref);
        if (2 * nsusp >= nscored) {
            /* Half or more look slow: the population is noisy, unless fewer than half are
             * beyond the link-fault limit (two hosts at a tenth among 8: their partners' sent
             * or received scores dip 7-15% on a shared machine, which made 5 of 8 candidates
             * and hid both slow hosts). Those are the suspects then; the marginal rest is
             * noise. */
            nsusp =
                nt_keep_beyond(w, nnodes, metric, nt_fail_limit(metric, ratio, factor) * node_ref);
            if (2 * nsusp >= nscored)
                memset(w->susp, 0, (size_t)nnodes);
        }
        if (nsusp && 2 * nsusp < nscored) {
            /* Two slow hosts among 8 in the --quick shape slow most links of their common
             * partners: a median over those would make the slow figure the reference. */
            size_t nm = 0;
            for (int i = 0; i < nnodes && nsusp; i++) {
                if (isnan(w->score[i]))
                    continue;
                if (w->susp[i]) {
                    w->tmp[nm++] = w->meds[i];
                    continue;
                }
                size_t c = 0;
                for (int k = 0; k < w->cnt[i]; k++)
                    if (!w->susp[w->pv[w->off[i] + k].partner])
                        w->vals[w->off[i] + c++] = w->pv[w->off[i] + k].v;
                if (c)
                    w->tmp[nm++] = nt_node_median(w->vals + w->off[i], c, metric);
            }
            if (nm >= NT_MIN_NODES)
                median_ref = nt_stats_median(w->tmp, nm);
            for (int i = 0; i < nnodes; i++) {
                if (!w->susp[i])
                    continue;
                nt_node_score(w, i, metric, w->score[i], w->meds[i], node_ref, median_ref, factor,
                              "", first, nodes);
                nt_node_score(w, i, metric, w->ss[i], w->ms[i], node_ref, median_ref, factor,
                              " sent", first, nodes);
                nt_node_score(w, i, metric, w->sd[i], w->md[i], node_ref, median_ref, factor,
                           " received", first, nodes);
            }
        }
    }

links:;
    /* The link reference: the median of the links that touch no suspect node (all links when
     * every link touches one, which cannot happen with fewer than half the nodes suspect), and
     * the noise of those links. */
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
    /* The wider of the two spreads: one sample of a few dozen links can look tighter than
     * its population is. */
    double sigma = fmax(nt_log_sigma(w->scratch, nref), node_sigma);
    if (nref < NT_NOISE_MIN_REF && sigma < NT_NOISE_SIGMA_FLOOR)
        sigma = NT_NOISE_SIGMA_FLOOR;
    /* Links are held to the more lenient of the link median and the median of node medians:
     * leaving a wrongly suspected node's links out of a small noisy population can move the
     * link median to its fast end. */
    if (!isnan(median_ref))
        ref = metric == NT_METRIC_BW ? fmin(ref, median_ref) : fmax(ref, median_ref);
    double factor = nt_noise_factor(metric, ratio, sigma);
    for (size_t k = g0; k < g1; k++) {
        nt_vlink_t *l = &L[w->order[k]];
        /* Under min_population links only the links of a suspect node are judged. */
        if (!full && !((l->src_node >= 0 && w->susp[l->src_node]) ||
                       (l->dst_node >= 0 && w->susp[l->dst_node])))
            continue;
        l->reference = ref;
        l->factor = factor;
        l->src_suspect = l->src_node >= 0 && w->susp[l->src_node];
        l->dst_suspect = l->dst_node >= 0 && w->susp[l->dst_node];
        l->fail_factor = nt_fail_limit(metric, ratio, factor);
    }
}

/* ---- node blame -------------------------------------------------------------------------- */

typedef struct npair {
    int a, b;   /* a < b */
    int fa, fb; /* the pair fails for a / for b (see nt_blame_nodes) */
    int any;    /* a link of the pair failed (or was marginal), whoever is blamed */
} npair_t;

static int nt_cmp_npair(const void *pa, const void *pb)
{
    const npair_t *x = pa, *y = pb;
    if (x->a != y->a)
        return (x->a > y->a) - (x->a < y->a);
    return (x->b > y->b) - (x->b < y->b);
}

/* Distinct endpoints seen at one node: the first, and whether there was another. An unknown
 * endpoint (NULL) is not counted. */
typedef struct nt_eps {
    const char *first;
    int several;
} nt_eps_t;

typedef struct nt_node_eps {
    nt_eps_t all, bad;
} nt_node_eps_t;

static void nt_eps_note(nt_eps_t *e, const char *ep)
{
    if (!ep)
        return;
    if (!e->first)
        e->first = ep;
    else if (strcmp(e->first, ep) != 0)
        e->several = 1;
}

/* Whether the node's failing suspect links all leave one of its several endpoints. */
static int nt_eps_one_of_many(const nt_node_eps_t *e)
{
    return e->all.several && e->bad.first && !e->bad.several;
}

/* A judged link between two nodes: the links node blame counts. */
static int nt_between_nodes(const nt_vlink_t *l)
{
    return l->verdict != NT_SKIPPED && l->src_node >= 0 && l->dst_node >= 0 &&
           l->src_node != l->dst_node;
}

/* A failing or confirmed marginal link: one that counts against its ends. */
static int nt_counts_bad(const nt_vlink_t *l)
{
    return l->verdict == NT_FAIL || l->marginal;
}

static nt_status_t nt_blame_nodes(nt_vlink_t *L, size_t n, int nnodes, nt_node_verdict_t *nodes,
                               const work_t *w)
{
    npair_t *pairs = malloc(sizeof(*pairs) * (n ? n : 1));
    nt_node_eps_t *eps = calloc((size_t)nnodes + 1, sizeof(*eps));
    if (!pairs || !eps) {
        free(pairs);
        free(eps);
        return NT_ERR_NOMEM;
    }
    /* The endpoints of each node: all those its links between nodes use, and those of its
     * links that count against it as a suspect (below). */
    for (size_t i = 0; i < n; i++) {
        const nt_vlink_t *l = &L[i];
        if (!nt_between_nodes(l))
            continue;
        int bad = nt_counts_bad(l);
        nt_eps_note(&eps[l->src_node].all, l->src_ep);
        nt_eps_note(&eps[l->dst_node].all, l->dst_ep);
        if (bad && l->src_suspect)
            nt_eps_note(&eps[l->src_node].bad, l->src_ep);
        if (bad && l->dst_suspect)
            nt_eps_note(&eps[l->dst_node].bad, l->dst_ep);
    }
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        const nt_vlink_t *l = &L[i];
        if (!nt_between_nodes(l))
            continue;
        /* A failing (or confirmed marginal) link counts against an end only when that end is
         * slow as a whole in the link's population (suspect: its median, or that of its sent
         * or received links, beyond the limit), or when it failed its expected (hardware)
         * figure. Slow links to most partners from one rank of a node are link faults, not
         * the node's: a rank starved by the scheduler looks like that, a broken host not.
         * So a node with two or more endpoints is a suspect only when links of two or more
         * of them fail: one slow rank can make its node's sent (or received) median slow
         * when that rank's links run one way (a CI-style run drained fake1 for its rank lr1
         * alone, 3 of 3 partners). */
        int bad = nt_counts_bad(l);
        int exp = bad && (l->fired & NT_FIRED_EXPECTED);
        int ss = l->src_suspect && !nt_eps_one_of_many(&eps[l->src_node]);
        int ds = l->dst_suspect && !nt_eps_one_of_many(&eps[l->dst_node]);
        int fs = bad && (exp || ss), fd = bad && (exp || ds);
        if (l->src_node < l->dst_node)
            pairs[np++] = (npair_t){l->src_node, l->dst_node, fs, fd, bad};
        else
            pairs[np++] = (npair_t){l->dst_node, l->src_node, fd, fs, bad};
    }
    qsort(pairs, np, sizeof(*pairs), nt_cmp_npair);
    /* One entry per node pair: failed (for each end) when any of its figures failed. */
    size_t nu = 0;
    for (size_t i = 0; i < np;) {
        size_t j = i;
        int fa = 0, fb = 0, any = 0;
        for (; j < np && pairs[j].a == pairs[i].a && pairs[j].b == pairs[i].b; j++) {
            fa |= pairs[j].fa;
            fb |= pairs[j].fb;
            any |= pairs[j].any;
        }
        pairs[nu] = pairs[i];
        pairs[nu].fa = fa;
        pairs[nu].fb = fb;
        pairs[nu++].any = any;
        i = j;
    }
    /* Blame one node at a time, the one failing with the most partners first, and count the
     * others' partners without the nodes already blamed: a good node whose only bad partner is
     * the blamed node is not blamed along with it (ClusterKit reports the bad node alone). */
    unsigned char *blamed = calloc((size_t)nnodes + 1, 1);
    if (!blamed) {
        free(pairs);
        free(eps);
        return NT_ERR_NOMEM;
    }
    for (;;) {
        int best = -1;
        for (int i = 0; i < nnodes; i++)
            nodes[i].partners = nodes[i].failed_partners = 0;
        for (size_t i = 0; i < nu; i++) {
            int ends[2] = {pairs[i].a, pairs[i].b}, f[2] = {pairs[i].fa, pairs[i].fb};
            for (int e = 0; e < 2; e++) {
                int other = ends[1 - e];
                if (blamed[other] && !blamed[ends[e]])
                    continue;
                nodes[ends[e]].partners++;
                nodes[ends[e]].failed_partners += f[e];
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
        nodes[pairs[i].a].failed_partners += pairs[i].any;
        nodes[pairs[i].b].failed_partners += pairs[i].any;
    }
    free(pairs);

    for (int i = 0; i < nnodes; i++) {
        nt_node_verdict_t *nv = &nodes[i];
        if (!blamed[i])
            continue;
        nv->blamed = 1;
        nv->verdict = NT_FAIL;
        char a[32], b[32], sz[32], part[64];
        const evidence_t *ev = &w->ev[i];
        const nt_vlink_t *ex = NULL;
        snprintf(part, sizeof(part), "fails with %d of %d partners", nv->failed_partners,
                 nv->partners);
        /* The reason quotes a figure that failed, check and figure first (sinfo -R shows 20
         * characters): the node's median when it was an outlier of its population (suspect),
         * else one of its failing links against the figure that failed it (expected first,
         * then the population reference). */
        if (ev->example && nv->suspect && ev->badness > 1) {
            ex = ev->example;
            nv->observed = ev->median;
            nv->expected = ev->reference;
            snprintf(nv->reason, sizeof(nv->reason),
                     "nettune:%s %s/%s%s median of its%s %s %s links vs all nodes, %s",
                     nt_metric_check(ex->metric), nt_verdict_fmt_num(a, sizeof(a), ev->median),
                     nt_verdict_fmt_num(b, sizeof(b), ev->reference), nt_unit_of(ex->metric),
                     ev->role, ex->kind, nt_bytes_str(sz, sizeof(sz), ex->bytes), part);
        } else {
            const nt_vlink_t *by_exp = NULL, *by_peer = NULL;
            size_t ke = 0, kp = 0;
            for (size_t k = 0; k < n; k++) {
                const nt_vlink_t *l = &L[k];
                if ((l->verdict != NT_FAIL && !l->marginal) ||
                    (l->src_node != i && l->dst_node != i))
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
            ex = by_exp ? by_exp : by_peer;
            if (ex) {
                size_t kx = by_exp ? ke : kp;
                nv->observed = w->eff[kx];
                nv->expected = by_exp ? ex->expected : ex->reference;
                snprintf(
                    nv->reason, sizeof(nv->reason), "nettune:%s %s/%s%s e.g. %s %s link vs %s, %s",
                    nt_metric_check(ex->metric), nt_verdict_fmt_num(a, sizeof(a), nv->observed),
                    nt_verdict_fmt_num(b, sizeof(b), nv->expected), nt_unit_of(ex->metric),
                    ex->kind, nt_bytes_str(sz, sizeof(sz), ex->bytes),
                    by_exp ? "expected" : "population median", part);
            } else {
                snprintf(nv->reason, sizeof(nv->reason), "nettune:links %s", part);
            }
        }
        nv->metric = ex ? ex->metric : -1;
        nv->cause = ex ? nt_metric_cause(ex->metric) : "links";
        nv->kind = ex ? ex->kind : NULL;
    }

    /* The blamed node's failing (and confirmed marginal) links are its fault, not separate
     * link faults: they fail, caused by the node. */
    for (size_t k = 0; k < n; k++) {
        nt_vlink_t *l = &L[k];
        if (l->verdict != NT_FAIL && !l->marginal)
            continue;
        int bs = l->src_node >= 0 && nodes[l->src_node].blamed;
        int bd = l->dst_node >= 0 && l->dst_node != l->src_node && nodes[l->dst_node].blamed;
        if (!bs && !bd)
            continue;
        char n1[32], n2[32], old[sizeof(l->reason)];
        l->fired |= NT_FIRED_BLAME;
        l->verdict = NT_FAIL;
        memcpy(old, l->reason, sizeof(old));
        if (bs && bd)
            snprintf(l->reason, sizeof(l->reason), "caused by blamed nodes %s and %s; ",
                     nt_node_name(nodes, l->src_node, n1, sizeof(n1)),
                     nt_node_name(nodes, l->dst_node, n2, sizeof(n2)));
        else
            snprintf(l->reason, sizeof(l->reason), "caused by blamed node %s; ",
                     nt_node_name(nodes, bs ? l->src_node : l->dst_node, n1, sizeof(n1)));
        nt_verdict_cat(l->reason, sizeof(l->reason), "%s", old);
    }
    free(blamed);
    free(eps);
    return NT_OK;
}

/* ---- the engine -------------------------------------------------------------------------- */

static void nt_work_free(work_t *w)
{
    free(w->tmp);
    free(w->score);
    free(w->ss);
    free(w->sd);
    free(w->pv);
    free(w->pvs);
    free(w->pvd);
    free(w->cx);
    free(w->ms);
    free(w->md);
    free(w->cs);
    free(w->cd);
    free(w->vs);
    free(w->vd);
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
        if (!l->kind ||
            (l->metric != NT_METRIC_BW && l->metric != NT_METRIC_LAT &&
             l->metric != NT_METRIC_TAIL) ||
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
    w.scratch = malloc(sizeof(double) * (n + 2 * nn + 1));
    w.tmp = malloc(sizeof(double) * (2 * n + 1));
    w.cs = malloc(sizeof(int) * (nn ? nn : 1));
    w.cx = malloc(sizeof(int) * (nn ? nn : 1));
    w.ms = malloc(sizeof(double) * (nn ? nn : 1));
    w.md = malloc(sizeof(double) * (nn ? nn : 1));
    w.cd = malloc(sizeof(int) * (nn ? nn : 1));
    w.vs = malloc(sizeof(double) * (2 * n + 1));
    w.vd = malloc(sizeof(double) * (2 * n + 1));
    w.score = malloc(sizeof(double) * (nn ? nn : 1));
    w.ss = malloc(sizeof(double) * (nn ? nn : 1));
    w.sd = malloc(sizeof(double) * (nn ? nn : 1));
    w.pv = malloc(sizeof(pval_t) * (2 * n + 1));
    w.pvs = malloc(sizeof(pval_t) * (2 * n + 1));
    w.pvd = malloc(sizeof(pval_t) * (2 * n + 1));
    w.susp = calloc(nn ? nn : 1, 1);
    w.ev = calloc(nn ? nn : 1, sizeof(evidence_t));
    if (!w.eff || !w.order || !w.cnt || !w.off || !w.vals || !w.meds || !w.scratch || !w.susp ||
        !w.ev || !w.tmp || !w.cx || !w.ms || !w.md || !w.cs || !w.cd || !w.vs || !w.vd ||
        !w.score || !w.ss || !w.sd || !w.pv || !w.pvs || !w.pvd) {
        nt_work_free(&w);
        return NT_ERR_NOMEM;
    }

    if (nodes)
        for (int i = 0; i < nnodes; i++) {
            nodes[i].verdict = NT_SKIPPED;
            nodes[i].blamed = nodes[i].suspect = 0;
            nodes[i].partners = nodes[i].failed_partners = 0;
            nodes[i].reason[0] = '\0';
            nodes[i].cause = NULL;
            nodes[i].kind = NULL;
            nodes[i].metric = -1;
            nodes[i].observed = nodes[i].expected = NAN;
        }

    /* Which value is judged: the retest's when there is one, else the first measurement. */
    for (size_t i = 0; i < n; i++) {
        nt_vlink_t *l = &L[i];
        l->verdict = NT_PASS;
        l->reason[0] = '\0';
        l->fired = 0;
        l->reference = NAN;
        l->factor = NAN;
        l->fail_factor = NAN;
        l->marginal = 0;
        l->src_suspect = l->dst_suspect = 0;
        l->population = 0;
        l->needs_retest = 0;
        w.eff[i] = nt_judged_value(l);
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
    qsort_r(w.order, w.nordered, sizeof(size_t), nt_cmp_pop, L);
    for (size_t g0 = 0; g0 < w.nordered;) {
        size_t g1 = g0 + 1;
        while (g1 < w.nordered && nt_same_pop(&L[w.order[g0]], &L[w.order[g1]]))
            g1++;
        nt_judge_population(L, &w, g0, g1, nnodes, &p, nodes);
        g0 = g1;
    }

    /* Steps 1 and 3: expected figures and the peer limits, on the value judged (the retest's
     * when there is one) and on the first measurement. A link fault by the peer rule alone
     * (beyond the link-fault limit) is a warning until a retest confirms it; between the ratio
     * and that limit a link is marginal (a warning that counts for node blame once confirmed);
     * a retest that passes makes a failure a warning (flaky), and a marginal link a pass. */
    for (size_t k = 0; k < w.nordered; k++) {
        size_t i = w.order[k];
        nt_vlink_t *l = &L[i];
        unsigned now = nt_failing_bits(l, w.eff[i], &p);
        int bad = (now & NT_FIRED_PEER) && nt_peer_bad(l, w.eff[i]);
        int retest = l->retested && !isnan(l->retest_value);
        unsigned before = retest && !isnan(l->value) ? nt_failing_bits(l, l->value, &p) : now;
        char a[32], b[32], sz[32];
        /* 2: a failure (expected figure, or beyond the link-fault limit), 1: marginal */
        int lnow = (now & NT_FIRED_EXPECTED) || bad ? 2 : now ? 1 : 0;
        int lfirst =
            !retest ? lnow
            : (before & NT_FIRED_EXPECTED) || ((before & NT_FIRED_PEER) && nt_peer_bad(l, l->value))
                ? 2
            : before ? 1
                     : 0;
        l->marginal = 0;
        l->unconfirmed = 0;
        l->flaky = 0;
        /* Under advisory rules a peer finding stays a failure only when its two measurements
         * agree (within NT_CONSISTENT): a fault gives the same slow figure every time, the
         * disturbances of a busy machine do not. */
        double hi = fmax(l->value, l->retest_value), lo = fmin(l->value, l->retest_value);
        int consistent = retest && lo > 0 && hi <= NT_CONSISTENT * lo;
        if (p.advisory && retest && lnow == 2 && lfirst == 2 && !consistent &&
            !(now & NT_FIRED_EXPECTED) && !(before & NT_FIRED_EXPECTED)) {
            /* an unstable run: the peer finding is reported, not trusted */
            l->verdict = NT_WARN;
            l->unconfirmed = 1;
            l->fired = now | (retest ? NT_FIRED_RETEST : 0);
            nt_describe(l->reason, sizeof(l->reason), l, w.eff[i], now, l->fail_factor);
            nt_verdict_cat(l->reason, sizeof(l->reason),
                           "; not trusted: the run's measurements were unstable (%s then %s %s)",
                           nt_verdict_fmt_num(a, sizeof(a), l->value),
                           nt_verdict_fmt_num(b, sizeof(b), l->retest_value),
                           nt_unit_of(l->metric));
            continue;
        }
        if (now && retest && !before) {
            l->unconfirmed = 1;
            /* Passed first, failed on retest only: not confirmed (a failure needs both). */
            l->verdict = NT_WARN;
            l->fired = now | NT_FIRED_RETEST;
            nt_describe(l->reason, sizeof(l->reason), l, w.eff[i], now,
                     bad ? l->fail_factor : l->factor);
            nt_verdict_cat(l->reason, sizeof(l->reason), "; on retest only (first %s %s passed)",
                nt_verdict_fmt_num(a, sizeof(a), l->value), nt_unit_of(l->metric));
        } else if ((!retest && (now & NT_FIRED_EXPECTED)) || (retest && lnow == 2 && lfirst == 2)) {
            unsigned shown = (now & NT_FIRED_EXPECTED) && !bad ? NT_FIRED_EXPECTED : now;
            l->verdict = NT_FAIL;
            l->fired = shown | (retest ? NT_FIRED_RETEST : 0);
            l->needs_retest = !l->retested;
            nt_describe(l->reason, sizeof(l->reason), l, w.eff[i], shown, l->fail_factor);
            if (retest)
                nt_verdict_cat(
                    l->reason, sizeof(l->reason), "; failed again on retest (%s then %s %s)",
                    nt_verdict_fmt_num(a, sizeof(a), l->value),
                    nt_verdict_fmt_num(b, sizeof(b), l->retest_value), nt_unit_of(l->metric));
        } else if (now) {
            l->verdict = NT_WARN;
            l->fired = now | (retest ? NT_FIRED_RETEST : 0);
            /* failed twice, once only marginally: marginal */
            nt_describe(l->reason, sizeof(l->reason), l, w.eff[i], now,
                     bad && !retest ? l->fail_factor : l->factor);
            if (!retest) {
                l->unconfirmed = 1;
                l->needs_retest = !l->retested;
                nt_verdict_cat(l->reason, sizeof(l->reason), "; not confirmed: %s",
                    l->retested ? "the retest gave no figure" : "not retested");
            } else {
                l->marginal = !p.advisory;
                nt_verdict_cat(
                    l->reason, sizeof(l->reason), "; marginal, again on retest (%s then %s %s)",
                    nt_verdict_fmt_num(a, sizeof(a), l->value),
                    nt_verdict_fmt_num(b, sizeof(b), l->retest_value), nt_unit_of(l->metric));
            }
        } else if (before && lfirst == 1) {
            /* Marginal first, passed on retest: the retest's figure is the one judged and it
             * passes; the first stays in the report under "first". A 7-10% dip once is the
             * noise of a shared machine, not a flaky link. */
            l->verdict = NT_PASS;
            l->fired = 0;
            l->reason[0] = '\0';
        } else if (before) {
            l->verdict = NT_WARN;
            l->flaky = 1;
            l->fired = before | NT_FIRED_RETEST;
            snprintf(l->reason, sizeof(l->reason),
                     "flaky at %s: failed first measurement %s %s, passed retest %s %s",
                     nt_bytes_str(sz, sizeof(sz), l->bytes),
                     nt_verdict_fmt_num(a, sizeof(a), l->value), nt_unit_of(l->metric),
                     nt_verdict_fmt_num(b, sizeof(b), l->retest_value), nt_unit_of(l->metric));
        }
    }

    /* Step 4: node blame. */
    nt_status_t st = NT_OK;
    if (nodes && nnodes > 0)
        st = nt_blame_nodes(L, n, nnodes, nodes, &w);
    /* On an oversubscribed machine one pair's figure moves with the scheduler (a rank starved
     * twice in a row gives a link at a tenth of its peers' figure twice): a link that failed
     * its retest by the peer rule alone, blamed on no node, is a warning there. Node blame,
     * which rests on a node's links to all its partners, and expected figures still fail. */
    for (size_t k = 0; st == NT_OK && p.shared_cpus && k < w.nordered; k++) {
        nt_vlink_t *l = &L[w.order[k]];
        if (l->verdict != NT_FAIL || !l->retested ||
            (l->fired & (NT_FIRED_BLAME | NT_FIRED_EXPECTED)))
            continue;
        l->verdict = NT_WARN;
        l->unconfirmed = 1;
        nt_verdict_cat(l->reason, sizeof(l->reason),
            "; not a link fault on its own: the ranks shared an oversubscribed machine");
    }
    nt_work_free(&w);
    return st;
}

size_t nt_verdict_retest_list(const nt_vlink_t *links, size_t n, size_t *idx, size_t cap)
{
    size_t count = 0;
    for (size_t i = 0; links && i < n; i++) {
        if (!links[i].needs_retest || links[i].retested)
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
