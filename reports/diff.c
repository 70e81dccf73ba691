/* `nettune report --diff OLD NEW`: how a cluster changed since a baseline (its acceptance run,
 * before maintenance). Links are matched by their stable id, checks by name + host + target,
 * failed nodes by host. A link regressed when its bandwidth fell, or its latency rose, by more
 * than the threshold (also from NEW's best iteration where the report has samples) and by
 * more than the noise of its population's changes (k sigma of the log ratios of the links of
 * its kind, variant and scope, sigma = 1.4826 x MAD, k = max(4, 1 + sqrt(2 ln n)) for n links;
 * fewer than 5 links: the run's noise, never below a floor), counted from the population's
 * shift when the population as a whole got worse (a busier machine: a warning, not a
 * regression, unless links fell below their expected figure). Newly failed links, checks and
 * nodes are regressions too, and so are a verdict that became fail, a node that vanished and
 * a link that vanished from NEW's own plan (same mode, its probe ran, both ends present: their
 * hosts, ranks and devices, NEW's schedule pairs them). The rule and its numbers:
 * docs/verdicts.md, "Comparing runs". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/schedule.h"
#include "render_fabric.h"
#include "rpt.h"

typedef enum nt_dstatus {
    NT_D_UNCHANGED = 0,
    NT_D_IMPROVED,
    NT_D_FIXED,
    NT_D_REGRESSED,
    NT_D_NEW_FAIL,
    NT_D_APPEARED,
    NT_D_VANISHED,
    NT_D_VERDICT, /* the verdict changed, the figures did not beyond the threshold and noise */
    NT_D_COUNT
} nt_dstatus_t;

static const char *const nt_dstatus_names[NT_D_COUNT] = {
    "unchanged", "improved", "fixed",   "regressed",
    "new_failure", "appeared", "vanished", "verdict_changed"};

/* Whether a vanished link was in NEW's own plan, or why not (nt_in_new_plan). */
typedef enum nt_dplan {
    NT_PLAN_YES = 0,  /* NEW should have measured it: a regression */
    NT_PLAN_MODE,     /* NEW ran another run.mode */
    NT_PLAN_PROBE,    /* NEW did not run its probe */
    NT_PLAN_NODE,     /* an end's host is not a node of NEW (a vanished node, judged as such) */
    NT_PLAN_END,      /* an end's rank or device is not in NEW (fewer ranks per node, a device
                       * NEW's inventory does not list) */
    NT_PLAN_SCHEDULE, /* NEW's schedule does not pair its ends */
    NT_PLAN_COUNT
} nt_dplan_t;

/* nettune.diff/1 links[].not_in_plan, and the text of the note. */
static const char *const nt_dplan_names[NT_PLAN_COUNT] = {"",     "mode", "probe",
                                                          "node", "end",  "schedule"};
static const char *const nt_dplan_text[NT_PLAN_COUNT] = {
    "",
    "measured in another run.mode",
    "of a probe the new run did not run",
    "with an end on a node the new run did not have (see nodes vanished)",
    "with an end (rank or device) the new run did not have",
    "whose ends the new run's schedule does not pair"};

typedef enum nt_noise_from { NT_NZ_POPULATION = 0, NT_NZ_RUN, NT_NZ_FLOOR } nt_noise_from_t;
static const char *const nt_noise_from_names[] = {"population", "run", "floor"};

/* One figure of one population: the log ratios ln(new/old) of its compared links. */
typedef struct nt_dpfig {
    size_t n;      /* links with the figure in both runs */
    size_t moved;  /* of them, worse beyond the threshold with the shift (NT_WHY_SHIFT) */
    size_t raised; /* of those, regressed: below their expected figure */
    size_t warned; /* of those, pass -> warn */
    double median; /* median log ratio */
    double band;   /* k x sigma (NT_NZ_POPULATION), or the run's or the floor (smaller ones) */
    nt_noise_from_t from;
    int shifted; /* n >= NT_DIFF_SHIFT_MIN_LINKS and the median worse beyond the threshold */
} nt_dpfig_t;

typedef struct nt_dlink {
    const nt_rlink_t *o, *n;
    double bw_pct, lat_pct;
    nt_dstatus_t status;
    int pop;               /* index in nt_diff_state_t.pops; -1: not compared */
    double best_pct[2];    /* per figure (NT_M_*): the change from OLD's figure to NEW's best
                            * iteration at that size (nt_best_sample); NaN: no samples */
    double band[2];        /* the noise band its change was held to (log ratio) */
    unsigned why[2];       /* NT_WHY_* per figure */
    nt_dplan_t plan;       /* vanished links only */
    const char *gone_host; /* NT_PLAN_END: the end NEW does not have */
    const char *gone_dev;
    int unconfirmed;       /* a side is "unconfirmed": compared against held[], outside pops */
    struct nt_dpfig held_fig[2]; /* unconfirmed: its population's figures as it was held to */
} nt_dlink_t;

typedef struct nt_dcheck {
    const nt_rcheck_t *o, *n;
    double obs_pct;
    nt_dstatus_t status;
} nt_dcheck_t;

typedef struct nt_dnode {
    const char *host, *reason;
    int fixed; /* 0: newly failed, 1: failed before, not now, 2: vanished from NEW, 3: its
                * verdict changed otherwise (reason: NULL) */
    nt_verdict_t was, is;
} nt_dnode_t;

typedef struct nt_diff_state {
    const nt_rdoc_t *a, *b;
    const nt_diff_opts_t *opt;
    nt_dlink_t *links;
    size_t nlinks;
    nt_dcheck_t *checks;
    size_t nchecks;
    nt_dnode_t *nodes;
    size_t nnodes;
    size_t lcount[NT_D_COUNT], ccount[NT_D_COUNT];
    size_t ucount[NT_D_COUNT]; /* of lcount, the links with an unconfirmed side */
    size_t lmatched, cmatched;
    size_t planned_vanished;           /* vanished links that NEW's plan held */
    size_t vanished_by[NT_PLAN_COUNT]; /* vanished links by nt_dplan_t */
    nt_schedule_t plan;   /* NEW's inter-node schedule, built at the first vanished link */
    int plan_state;       /* 0: not built, 1: built, -1: none (local mode, no nodes) */
    struct nt_dend *ends; /* NEW's link ends sorted by host, device (nt_new_ends) */
    size_t nends;
    int ends_state;       /* 0: not built, 1: built */
    struct nt_dpop *pops; /* populations of the compared links (nt_diff_pops) */
    size_t npops;
    int verdict_worse; /* summary.verdict became fail */
    int regressed;
} nt_diff_state_t;

/* The two figures a link is compared by (nt_dlink_t.best_pct, band, why). */
enum { NT_M_BW = 0, NT_M_LAT = 1, NT_M_COUNT = 2 };
static const char *const nt_metric_names[NT_M_COUNT] = {"bandwidth", "latency"};
static const char *const nt_metric_keys[NT_M_COUNT] = {"bw", "lat"};
/* The worse direction of each: bandwidth falls (-1), latency rises (+1). */
static const int nt_metric_dir[NT_M_COUNT] = {-1, 1};

/* A population estimates its own noise from this many links with the figure up. */
#define NT_DIFF_NOISE_MIN_LINKS 5
/* A population's median change is a shift of the whole population from this many links up
 * (the median of 3 stands one outlier). */
#define NT_DIFF_SHIFT_MIN_LINKS 3
/* The noise band of a smaller population: the whole run's noise (every compared link with
 * that figure, from 5 up), never below these floors (per cent of the figure, the worse way).
 * Two healthy runs of 2 fake nodes on this shared 2-core machine, one second apart
 * (tests/fixtures/tester-found/probe-report, healthy-2fake-a/-b and -2rpn/-1rpn), differed by
 * up to 9.3% in bandwidth and 15.8% in 8 B latency with 2 to 4 links of a kind and scope; the
 * floors are 1.6 and 1.9 times that, and a link at half its bandwidth or at twice its latency
 * is still far beyond them. */
#define NT_DIFF_FLOOR_BW_PCT 15.0
#define NT_DIFF_FLOOR_LAT_PCT 30.0

/* Why a link's figure changed as it did (nt_dlink_t.why). */
#define NT_WHY_NOISE 1u /* worse beyond the threshold and beyond its noise band */
#define NT_WHY_SHIFT 2u /* worse beyond the threshold with its population's shift */
#define NT_WHY_VERDICT                                                                             \
    4u                     /* ... and its verdict went pass -> warn (reported: a warning is        \
                            * marginal, as for checks; a new failure is one always) */
#define NT_WHY_EXPECTED 8u /* ... and it fell below its expected bandwidth: a regression */
#define NT_WHY_REGRESSION (NT_WHY_NOISE | NT_WHY_EXPECTED)

/* Links of one kind, variant and scope that both runs measured and trusted. */
typedef struct nt_dpop {
    const char *kind, *variant, *scope;
    nt_dpfig_t f[NT_M_COUNT];
} nt_dpop_t;

/* How many sigmas a change must exceed: 4, more in large populations, where the largest of n
 * healthy changes grows like sqrt(2 ln n) sigma (1 more for margin). */
static double nt_noise_k(size_t n)
{
    double k = n > 1 ? sqrt(2.0 * log((double)n)) + 1.0 : 4.0;
    return k > 4.0 ? k : 4.0;
}

/* 1.4826 x the MAD of v[0..n) around med (v is overwritten): sigma for normal noise. */
static double nt_mad_sigma(double *v, size_t n, double med)
{
    for (size_t i = 0; i < n; i++)
        v[i] = fabs(v[i] - med);
    return 1.4826 * nt_median(v, n);
}

/* A log-ratio band as the per cent change it allows the worse way (a fall for bandwidth). */
static double nt_band_pct(int m, double band)
{
    return m == NT_M_BW ? -100.0 * expm1(-band) : 100.0 * expm1(band);
}

/* The best iteration of link l at the size its figure m was taken at (peak_bw_bytes,
 * small_msg_lat_bytes): the max of samples[].bw_GBps, the min of samples[].lat_us. A stalled
 * iteration lowers a bandwidth and raises a latency, never the other way, so the best
 * iteration is the link's capability in that run, free of the stalls that make its worst
 * side wide (tests/fixtures/tester-found/probe-report/healthy-ns4-a: p50 42.9 GB/s, min 8.5,
 * max 46.8). NaN when the report has no samples there. */
static double nt_best_sample(const nt_rlink_t *l, int m)
{
    double bytes = nt_json_get_num(l->j, m ? "small_msg_lat_bytes" : "peak_bw_bytes", NAN);
    const cJSON *e;
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(l->j, "samples")) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, m ? "lat_us" : "bw_GBps");
        if (f && nt_json_get_num(e, "bytes", NAN) == bytes)
            return nt_json_get_num(f, m ? "min" : "max", NAN);
    }
    return NAN;
}

/* Whether the run of doc measured probe kind (run.schedule names the probes that ran; an
 * older report without it: any link of that kind). */
static int nt_doc_ran(const nt_rdoc_t *doc, const char *kind)
{
    const cJSON *sched = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc->root, "run"), "schedule");
    if (cJSON_IsObject(sched))
        return cJSON_GetObjectItemCaseSensitive(sched, kind) != NULL;
    for (size_t i = 0; i < doc->nlinks; i++)
        if (strcmp(doc->links[i].kind, kind) == 0)
            return 1;
    return 0;
}

/* Whether schedule sc pairs x and y (either way round). */
static int nt_sched_has(const nt_schedule_t *sc, int x, int y)
{
    for (size_t r = 0; r < sc->nrounds; r++)
        for (size_t k = 0; k < sc->rounds[r].npairs; k++) {
            const nt_pair_t *p = &sc->rounds[r].pairs[k];
            if ((p->a == x && p->b == y) || (p->a == y && p->b == x))
                return 1;
        }
    return 0;
}

/* Position of rank in the nodes[].ranks of node j (a nodes[] object), -1 when absent. */
static int nt_local_index(const cJSON *j, int rank)
{
    const cJSON *r;
    int i = 0;
    cJSON_ArrayForEach (r, cJSON_GetObjectItemCaseSensitive(j, "ranks")) {
        if (cJSON_IsNumber(r) && r->valueint == rank)
            return i;
        i++;
    }
    return -1;
}

/* Whether NEW's own schedule pairs the two ends of link l of OLD. The probe pairs nodes by
 * lib/engine/schedule.c over its nodes in schedule order, which is the order of the report's nodes[]
 * (probes/run.c writes them as probes/nodes.c sorted them), and the ranks of one node by the
 * same schedule over that node's nodes[].ranks. A grown cluster's --quick run pairs other
 * nodes than a smaller one's: a link it never planned did not vanish from its plan. Where the
 * report does not tell (local mode, a link of one rank, no ranks listed) the link counts as
 * planned. Returns -1 on allocation failure. */
static int nt_new_schedule_has(nt_diff_state_t *s, const nt_rlink_t *l, int ks, int kd)
{
    const char *mode =
        nt_json_get_str(cJSON_GetObjectItemCaseSensitive(s->b->root, "run"), "mode", "");
    nt_schedule_mode_t m;
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(s->b->root, "nodes");

    if (strcmp(mode, "quick") == 0)
        m = NT_SCHED_QUICK;
    else if (strcmp(mode, "full") == 0)
        m = NT_SCHED_FULL;
    else
        return 1;
    if (ks != kd) {
        if (s->plan_state == 0) {
            int n = cJSON_GetArraySize(nodes);
            if (n < 1)
                s->plan_state = -1;
            else if (nt_schedule_create(n, m, &s->plan) != NT_OK)
                return -1;
            else
                s->plan_state = 1;
        }
        return s->plan_state < 0 ||
               nt_sched_has(&s->plan, s->b->nodes[ks].index, s->b->nodes[kd].index);
    }
    /* Within one node: the ends' local ranks in OLD, paired by NEW's per-node schedule. */
    {
        const cJSON *nr = cJSON_GetObjectItemCaseSensitive(s->b->nodes[ks].j, "ranks");
        int ls = l->src_node >= 0 ? nt_local_index(s->a->nodes[l->src_node].j, l->src_rank) : -1;
        int ld = l->dst_node >= 0 ? nt_local_index(s->a->nodes[l->dst_node].j, l->dst_rank) : -1;
        int n = cJSON_IsArray(nr) ? cJSON_GetArraySize(nr) : 0;
        nt_schedule_t sc;
        int has;
        if (ls < 0 || ld < 0 || ls == ld || n < 1)
            return 1;
        if (ls >= n || ld >= n)
            return 0;
        if (nt_schedule_create(n, m, &sc) != NT_OK)
            return -1;
        has = nt_sched_has(&sc, ls, ld);
        nt_schedule_destroy(&sc);
        return has;
    }
}

/* Whether array arr (of objects) has an entry whose key is the number v. */
static int nt_has_index(const cJSON *arr, const char *key, long v)
{
    const cJSON *e;
    cJSON_ArrayForEach (e, arr)
        if (nt_json_get_num(e, key, NAN) == (double)v)
            return 1;
    return 0;
}

/* One end of a link: its host and device. */
typedef struct nt_dend {
    const char *host, *dev;
} nt_dend_t;

static int nt_cmp_dend(const void *a, const void *b)
{
    const nt_dend_t *x = a, *y = b;
    int c = strcmp(x->host, y->host);
    return c ? c : strcmp(x->dev, y->dev);
}

/* NEW's link ends, sorted, built at the first vanished link: a diff of two large runs looks
 * ends up by binary search. NT_ERR_NOMEM. */
static nt_status_t nt_new_ends(nt_diff_state_t *s)
{
    if (s->ends_state)
        return NT_OK;
    s->ends = malloc((2 * s->b->nlinks + 1) * sizeof(*s->ends));
    if (!s->ends)
        return NT_ERR_NOMEM;
    for (size_t x = 0; x < s->b->nlinks; x++) {
        s->ends[s->nends++] = (nt_dend_t){s->b->links[x].src_host, s->b->links[x].src_dev};
        s->ends[s->nends++] = (nt_dend_t){s->b->links[x].dst_host, s->b->links[x].dst_dev};
    }
    qsort(s->ends, s->nends, sizeof(*s->ends), nt_cmp_dend);
    s->ends_state = 1;
    return NT_OK;
}

/* Whether node k of NEW (s->b) has the end (host, dev) of a link of OLD. An end NEW measured
 * (an end of one of its links) is there. Else by the device's form (the link ids of
 * docs/report.md and the probes): "lr<i>", an MPI rank, when the node ran more than i
 * ranks (nodes[].ranks); "<nic>:<port>" and "<nic>:<port>/gpu<i>" when nodes[].nics lists that
 * port (and nodes[].gpus the GPU); "gpu<i>" by nodes[].gpus[].index; "numa<i>" by
 * numa_nodes[].index. Where NEW's node does not list that kind of device, or the form is
 * another, the end counts as there. */
static int nt_new_has_end(const nt_diff_state_t *s, int k, const char *host, const char *dev)
{
    const cJSON *j = s->b->nodes[k].j, *arr;
    const char *colon = strchr(dev, ':'), *slash = strrchr(dev, '/');
    char *end;
    long i;

    nt_dend_t key = {host, dev};

    if (bsearch(&key, s->ends, s->nends, sizeof(*s->ends), nt_cmp_dend))
        return 1;
    if (!strncmp(dev, "lr", 2) && dev[2] >= '0' && dev[2] <= '9') {
        i = strtol(dev + 2, &end, 10);
        arr = cJSON_GetObjectItemCaseSensitive(j, "ranks");
        return *end || !cJSON_IsArray(arr) || i < cJSON_GetArraySize(arr);
    }
    if (slash && !strncmp(slash + 1, "gpu", 3)) {
        i = strtol(slash + 4, &end, 10);
        arr = cJSON_GetObjectItemCaseSensitive(j, "gpus");
        if (!*end && end != slash + 4 && cJSON_IsArray(arr) && !nt_has_index(arr, "index", i))
            return 0;
    }
    if (colon && colon != dev) {
        const cJSON *nic;
        long port = strtol(colon + 1, &end, 10);
        arr = cJSON_GetObjectItemCaseSensitive(j, "nics");
        if (end == colon + 1 || (*end && *end != '/') || !cJSON_IsArray(arr))
            return 1;
        cJSON_ArrayForEach (nic, arr) {
            const char *name = nt_json_get_str(nic, "name", "");
            if (strlen(name) == (size_t)(colon - dev) && !strncmp(name, dev, colon - dev) &&
                nt_json_get_num(nic, "port", NAN) == (double)port)
                return 1;
        }
        return 0;
    }
    if (!strncmp(dev, "gpu", 3) || !strncmp(dev, "numa", 4)) {
        int gpu = dev[0] == 'g';
        i = strtol(dev + (gpu ? 3 : 4), &end, 10);
        arr = cJSON_GetObjectItemCaseSensitive(j, gpu ? "gpus" : "numa_nodes");
        return *end || end == dev + (gpu ? 3 : 4) || !cJSON_IsArray(arr) ||
               nt_has_index(arr, "index", i);
    }
    return 1;
}

/* Whether a link of OLD was in NEW's own plan: the same mode, NEW ran its probe, both its
 * ends' hosts are nodes of NEW and both ends (rank or device, nt_new_has_end) are in NEW, and
 * NEW's schedule pairs them (nt_new_schedule_has); else why not. d->gone_host/gone_dev get
 * the missing end. -1 on allocation failure. */
static int nt_in_new_plan(nt_diff_state_t *s, nt_dlink_t *d)
{
    const nt_rlink_t *l = d->o;
    const char *ma =
        nt_json_get_str(cJSON_GetObjectItemCaseSensitive(s->a->root, "run"), "mode", "");
    const char *mb =
        nt_json_get_str(cJSON_GetObjectItemCaseSensitive(s->b->root, "run"), "mode", "");
    int ks = nt_rdoc_find_node(s->b, l->src_host), kd = nt_rdoc_find_node(s->b, l->dst_host);
    int has;

    if (strcmp(ma, mb) != 0)
        return NT_PLAN_MODE;
    if (!nt_doc_ran(s->b, l->kind))
        return NT_PLAN_PROBE;
    if (ks < 0 || kd < 0 || !s->b->nodes[ks].j || !s->b->nodes[kd].j)
        return NT_PLAN_NODE;
    if (nt_new_ends(s) != NT_OK)
        return -1;
    for (int e = 0; e < 2; e++) {
        const char *h = e ? l->dst_host : l->src_host, *dev = e ? l->dst_dev : l->src_dev;
        if (!nt_new_has_end(s, e ? kd : ks, h, dev)) {
            d->gone_host = h;
            d->gone_dev = dev;
            return NT_PLAN_END;
        }
    }
    has = nt_new_schedule_has(s, l, ks, kd);
    return has < 0 ? -1 : has ? NT_PLAN_YES : NT_PLAN_SCHEDULE;
}

static double nt_pct(double old_v, double new_v)
{
    if (isnan(old_v) || isnan(new_v) || old_v <= 0)
        return NAN;
    return 100.0 * (new_v - old_v) / old_v;
}

/* qsort/bsearch context: see doc.c. */
static const nt_rdoc_t *nt_diff_doc;

static int nt_cmp_link_id(const void *a, const void *b)
{
    return strcmp(nt_diff_doc->links[*(const size_t *)a].id,
                  nt_diff_doc->links[*(const size_t *)b].id);
}

static int nt_check_key_cmp(const nt_rcheck_t *x, const nt_rcheck_t *y)
{
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
    return c ? c : strcmp(x->target, y->target);
}

static int nt_cmp_check_idx(const void *a, const void *b)
{
    return nt_check_key_cmp(&nt_diff_doc->checks[*(const size_t *)a],
                            &nt_diff_doc->checks[*(const size_t *)b]);
}

static size_t *nt_index(const nt_rdoc_t *doc, int checks)
{
    size_t n = checks ? doc->nchecks : doc->nlinks;
    size_t *idx = malloc((n + 1) * sizeof(*idx));
    if (!idx)
        return NULL;
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    nt_diff_doc = doc;
    qsort(idx, n, sizeof(*idx), checks ? nt_cmp_check_idx : nt_cmp_link_id);
    nt_diff_doc = NULL;
    return idx;
}

static long nt_find_link(const nt_rdoc_t *doc, const size_t *idx, const char *id)
{
    size_t lo = 0, hi = doc->nlinks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(doc->links[idx[mid]].id, id);
        if (c == 0)
            return (long)idx[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static long nt_find_check(const nt_rdoc_t *doc, const size_t *idx, const nt_rcheck_t *key)
{
    size_t lo = 0, hi = doc->nchecks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = nt_check_key_cmp(&doc->checks[idx[mid]], key);
        if (c == 0)
            return (long)idx[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Whether both runs measured link d and trusted the figures: an "unconfirmed" figure (a
 * warning the retest did not settle) is neither compared nor part of a population. */
static int nt_dlink_compared(const nt_dlink_t *d)
{
    return d->o && d->n && !d->o->unconfirmed && !d->n->unconfirmed;
}

/* Whether link d fell below its expected bandwidth (NEW's, else OLD's) from at or above it. */
static int nt_crossed_expected(const nt_dlink_t *d)
{
    double e = isnan(d->n->expected_bw_GBps) ? d->o->expected_bw_GBps : d->n->expected_bw_GBps;
    return !isnan(e) && d->o->peak_bw_GBps >= e && d->n->peak_bw_GBps < e;
}

/* The status of a matched link (docs/verdicts.md, "Comparing runs"). Per figure, with x its
 * log ratio ln(new/old), p its population's figure and b p's noise band: the change counts
 * against the shift, r = (x - p's median when p shifted, else 0) the worse way round. A
 * change worse than the threshold, from NEW's figure and from NEW's best iteration
 * (nt_best_sample) where it has samples, is a regression when r > b (NT_WHY_NOISE); within b
 * but in a population that shifted the worse way it moved with the shift (NT_WHY_SHIFT): a
 * regression only when its bandwidth fell below its expected figure (pass -> warn is
 * reported). A better change beyond the threshold with -r > b is an improvement, unless the
 * other figure got worse beyond the threshold (a link whose bandwidth fell 30% is not
 * improved by a lower latency). A newly failed link is a new failure whatever its figures; a
 * link whose figures did not change beyond threshold and noise but whose verdict did is
 * NT_D_VERDICT. Updates p's moved and raised counts. */
static nt_dstatus_t nt_link_status(nt_dlink_t *d, double thr, nt_dpop_t *p)
{
    int was_fail = d->o->verdict == NT_FAIL, is_fail = d->n->verdict == NT_FAIL, better = 0;
    int worse_thr = 0;
    unsigned worse = 0;

    if (is_fail && !was_fail)
        return NT_D_NEW_FAIL;
    for (int m = 0; p && m < NT_M_COUNT; m++) {
        nt_dpfig_t *f = &p->f[m];
        int dir = nt_metric_dir[m];
        double pct = m == NT_M_BW ? d->bw_pct : d->lat_pct, r;
        if (isnan(pct) || !f->n)
            continue;
        r = dir * (log1p(pct / 100.0) - (f->shifted ? f->median : 0));
        d->band[m] = f->band;
        /* Worse beyond the threshold, also from NEW's best iteration where it has samples. */
        if (dir * pct > thr && (isnan(d->best_pct[m]) || dir * d->best_pct[m] > thr)) {
            worse_thr = 1;
            if (r > d->band[m]) {
                d->why[m] |= NT_WHY_NOISE;
            } else if (f->shifted) {
                d->why[m] |= NT_WHY_SHIFT;
                if (d->o->verdict == NT_PASS && d->n->verdict == NT_WARN)
                    d->why[m] |= NT_WHY_VERDICT;
                if (m == NT_M_BW && nt_crossed_expected(d))
                    d->why[m] |= NT_WHY_EXPECTED;
                f->moved++;
                f->raised += (d->why[m] & NT_WHY_REGRESSION) != 0;
                f->warned += (d->why[m] & NT_WHY_VERDICT) != 0;
            }
            worse |= d->why[m];
        } else if (dir * pct < -thr && -r > d->band[m]) {
            better = 1;
        }
    }
    if (worse & NT_WHY_REGRESSION)
        return NT_D_REGRESSED;
    if (was_fail && !is_fail)
        return NT_D_FIXED;
    if (better && !worse_thr)
        return NT_D_IMPROVED;
    return d->o->verdict != d->n->verdict ? NT_D_VERDICT : NT_D_UNCHANGED;
}

/* The figures a link with an unconfirmed side is held to: its population's (kind, variant and
 * scope), which it is no part of, else the floors. Into d->held_fig; a copy, so that the
 * population's counts stay those of its own links. */
static void nt_unconfirmed_pop(const nt_diff_state_t *s, nt_dlink_t *d, nt_dpop_t *p)
{
    memset(p, 0, sizeof(*p));
    for (size_t k = 0; k < s->npops; k++)
        if (!strcmp(s->pops[k].kind, d->n->kind) && !strcmp(s->pops[k].scope, d->n->scope) &&
            !strcmp(s->pops[k].variant, d->n->variant))
            *p = s->pops[k];
    for (int m = 0; m < NT_M_COUNT; m++)
        if (!p->f[m].n) {
            p->f[m].n = 1;
            p->f[m].from = NT_NZ_FLOOR;
            p->f[m].band = m == NT_M_BW ? -log1p(-NT_DIFF_FLOOR_BW_PCT / 100.0)
                                        : log1p(NT_DIFF_FLOOR_LAT_PCT / 100.0);
        }
}

/* The figures link d was held to (NULL: not compared). */
static const nt_dpfig_t *nt_dlink_fig(const nt_diff_state_t *s, const nt_dlink_t *d, int m)
{
    if (d->unconfirmed)
        return &d->held_fig[m];
    return d->pop >= 0 ? &s->pops[d->pop].f[m] : NULL;
}

/* Whether a side of link d carries "unconfirmed": true. */
static int nt_dlink_unconfirmed(const nt_dlink_t *d)
{
    return (d->o && d->o->unconfirmed) || (d->n && d->n->unconfirmed);
}

/* The populations of the compared links (kind, variant and scope of NEW's link) and, per
 * figure, their median change, noise band and shift: from NT_DIFF_NOISE_MIN_LINKS links a
 * band of k x sigma (sigma = 1.4826 x MAD of the log ratios, k = nt_noise_k(n)); below, the
 * larger of the whole run's band (the same over every compared link with the figure, from 5
 * up) and the floor (NT_DIFF_FLOOR_*_PCT). Sets each link's pop. */
static nt_status_t nt_diff_pops(nt_diff_state_t *s, double thr)
{
    double *v = malloc((s->nlinks + 1) * sizeof(*v));

    s->pops = calloc(s->nlinks + 1, sizeof(*s->pops));
    if (!v || !s->pops) {
        free(v);
        return NT_ERR_NOMEM;
    }
    for (size_t i = 0; i < s->nlinks; i++) {
        nt_dlink_t *d = &s->links[i];
        size_t k;
        d->pop = -1;
        if (!nt_dlink_compared(d))
            continue;
        for (k = 0; k < s->npops; k++)
            if (!strcmp(s->pops[k].kind, d->n->kind) && !strcmp(s->pops[k].scope, d->n->scope) &&
                !strcmp(s->pops[k].variant, d->n->variant))
                break;
        if (k == s->npops) {
            s->pops[k].kind = d->n->kind;
            s->pops[k].variant = d->n->variant;
            s->pops[k].scope = d->n->scope;
            s->npops++;
        }
        d->pop = (int)k;
    }
    for (int m = 0; m < NT_M_COUNT; m++) {
        double floor = m == NT_M_BW ? -log1p(-NT_DIFF_FLOOR_BW_PCT / 100.0)
                                    : log1p(NT_DIFF_FLOOR_LAT_PCT / 100.0);
        double run_band = floor;
        nt_noise_from_t run_from = NT_NZ_FLOOR;
        size_t nv = 0;
        for (size_t i = 0; i < s->nlinks; i++) {
            double pct = m == NT_M_BW ? s->links[i].bw_pct : s->links[i].lat_pct;
            if (s->links[i].pop >= 0 && !isnan(pct))
                v[nv++] = log1p(pct / 100.0);
        }
        if (nv >= NT_DIFF_NOISE_MIN_LINKS) {
            double b = nt_noise_k(nv) * nt_mad_sigma(v, nv, nt_median(v, nv));
            if (b > floor) {
                run_band = b;
                run_from = NT_NZ_RUN;
            }
        }
        for (size_t k = 0; k < s->npops; k++) {
            nt_dpfig_t *f = &s->pops[k].f[m];
            nv = 0;
            for (size_t i = 0; i < s->nlinks; i++) {
                double pct = m == NT_M_BW ? s->links[i].bw_pct : s->links[i].lat_pct;
                if (s->links[i].pop == (int)k && !isnan(pct))
                    v[nv++] = log1p(pct / 100.0);
            }
            f->n = nv;
            if (!nv)
                continue;
            f->median = nt_median(v, nv);
            if (nv >= NT_DIFF_NOISE_MIN_LINKS) {
                f->band = nt_noise_k(nv) * nt_mad_sigma(v, nv, f->median);
                f->from = NT_NZ_POPULATION;
            } else {
                f->band = run_band;
                f->from = run_from;
            }
            /* Only a shift the worse way excuses links: held against a population that got
             * better, a link that stayed would stand out of it. */
            f->shifted =
                nv >= NT_DIFF_SHIFT_MIN_LINKS && nt_metric_dir[m] * 100.0 * expm1(f->median) > thr;
        }
    }
    free(v);
    return NT_OK;
}

static nt_status_t nt_diff_links(nt_diff_state_t *s)
{
    size_t *ia = nt_index(s->a, 0), *ib = nt_index(s->b, 0);
    nt_status_t st = NT_ERR_NOMEM;

    s->links = calloc(s->a->nlinks + s->b->nlinks + 1, sizeof(*s->links));
    if (!ia || !ib || !s->links)
        goto out;
    for (size_t i = 0; i < s->b->nlinks; i++) {
        nt_dlink_t *d = &s->links[s->nlinks++];
        long k = nt_find_link(s->a, ia, s->b->links[i].id);
        d->n = &s->b->links[i];
        d->bw_pct = d->lat_pct = NAN;
        if (k < 0) {
            /* A new link that fails is a new failure (its old side is empty). */
            d->status = d->n->verdict == NT_FAIL ? NT_D_NEW_FAIL : NT_D_APPEARED;
        } else {
            d->o = &s->a->links[k];
            d->bw_pct = nt_pct(d->o->peak_bw_GBps, d->n->peak_bw_GBps);
            d->lat_pct = nt_pct(d->o->small_msg_lat_us, d->n->small_msg_lat_us);
            d->best_pct[NT_M_BW] = nt_pct(d->o->peak_bw_GBps, nt_best_sample(d->n, NT_M_BW));
            d->best_pct[NT_M_LAT] = nt_pct(d->o->small_msg_lat_us, nt_best_sample(d->n, NT_M_LAT));
            s->lmatched++;
        }
    }
    if (nt_diff_pops(s, s->opt->threshold_pct) != NT_OK)
        goto out;
    for (size_t i = 0; i < s->nlinks; i++) {
        nt_dlink_t *d = &s->links[i];
        if (d->o && d->o->unconfirmed + d->n->unconfirmed) {
            /* Compared too, against its population's band, and marked: a link the retest
             * could not settle still shows what it measured. */
            nt_dpop_t held;
            nt_unconfirmed_pop(s, d, &held);
            d->unconfirmed = 1;
            d->status = nt_link_status(d, s->opt->threshold_pct, &held);
            memcpy(d->held_fig, held.f, sizeof(d->held_fig));
        } else if (d->o) {
            d->status =
                nt_link_status(d, s->opt->threshold_pct, d->pop >= 0 ? &s->pops[d->pop] : NULL);
        }
        s->lcount[d->status]++;
        s->ucount[d->status] += d->unconfirmed;
    }
    for (size_t i = 0; i < s->a->nlinks; i++) {
        if (nt_find_link(s->b, ib, s->a->links[i].id) >= 0)
            continue;
        nt_dlink_t *d = &s->links[s->nlinks++];
        d->o = &s->a->links[i];
        d->bw_pct = d->lat_pct = NAN;
        d->pop = -1;
        d->status = NT_D_VANISHED;
        s->lcount[NT_D_VANISHED]++;
        {
            int plan = nt_in_new_plan(s, d);
            if (plan < 0) {
                st = NT_ERR_NOMEM;
                goto out;
            }
            d->plan = (nt_dplan_t)plan;
            s->vanished_by[plan]++;
            s->planned_vanished += plan == NT_PLAN_YES;
        }
    }
    st = NT_OK;
out:
    free(ia);
    free(ib);
    return st;
}

static nt_status_t nt_diff_checks(nt_diff_state_t *s)
{
    size_t *ia = nt_index(s->a, 1), *ib = nt_index(s->b, 1);
    nt_status_t st = NT_ERR_NOMEM;

    s->checks = calloc(s->a->nchecks + s->b->nchecks + 1, sizeof(*s->checks));
    if (!ia || !ib || !s->checks)
        goto out;
    for (size_t i = 0; i < s->b->nchecks; i++) {
        nt_dcheck_t *d = &s->checks[s->nchecks++];
        long k = nt_find_check(s->a, ia, &s->b->checks[i]);
        d->n = &s->b->checks[i];
        d->obs_pct = NAN;
        if (k < 0) {
            d->status = d->n->verdict == NT_FAIL ? NT_D_NEW_FAIL : NT_D_APPEARED;
        } else {
            d->o = &s->a->checks[k];
            d->obs_pct = nt_pct(nt_json_get_num(d->o->j, "observed", NAN),
                                nt_json_get_num(d->n->j, "observed", NAN));
            if (d->n->verdict == NT_FAIL && d->o->verdict != NT_FAIL)
                d->status = NT_D_NEW_FAIL;
            else if (d->o->verdict == NT_FAIL && d->n->verdict != NT_FAIL)
                d->status = NT_D_FIXED;
            else if (nt_verdict_rank(d->n->verdict) < nt_verdict_rank(d->o->verdict))
                d->status = NT_D_REGRESSED; /* pass -> warn: worse, though not failed */
            else if (nt_verdict_rank(d->n->verdict) > nt_verdict_rank(d->o->verdict))
                d->status = NT_D_IMPROVED;
            else
                d->status = NT_D_UNCHANGED;
            s->cmatched++;
        }
        s->ccount[d->status]++;
    }
    for (size_t i = 0; i < s->a->nchecks; i++) {
        if (nt_find_check(s->b, ib, &s->a->checks[i]) >= 0)
            continue;
        nt_dcheck_t *d = &s->checks[s->nchecks++];
        d->o = &s->a->checks[i];
        d->obs_pct = NAN;
        d->status = NT_D_VANISHED;
        s->ccount[NT_D_VANISHED]++;
    }
    st = NT_OK;
out:
    free(ia);
    free(ib);
    return st;
}

static nt_status_t nt_diff_nodes(nt_diff_state_t *s)
{
    s->nodes = calloc(s->a->nnodes + s->b->nnodes + 1, sizeof(*s->nodes));
    if (!s->nodes)
        return NT_ERR_NOMEM;
    for (size_t k = 0; k < s->b->nnodes; k++) {
        const nt_rnode_t *nd = &s->b->nodes[k];
        int ko = nt_rdoc_find_node(s->a, nd->host);
        if (nd->fail_reason && (ko < 0 || !s->a->nodes[ko].fail_reason))
            s->nodes[s->nnodes++] = (nt_dnode_t){nd->host, nd->fail_reason, 0, 0, 0};
        else if (ko >= 0 && nd->j && s->a->nodes[ko].j && !nd->fail_reason &&
                 !s->a->nodes[ko].fail_reason && nd->verdict != s->a->nodes[ko].verdict)
            s->nodes[s->nnodes++] =
                (nt_dnode_t){nd->host, NULL, 3, s->a->nodes[ko].verdict, nd->verdict};
    }
    for (size_t k = 0; k < s->a->nnodes; k++) {
        const nt_rnode_t *nd = &s->a->nodes[k];
        int kn = nt_rdoc_find_node(s->b, nd->host);
        if (nd->fail_reason && kn >= 0 && !s->b->nodes[kn].fail_reason)
            s->nodes[s->nnodes++] = (nt_dnode_t){nd->host, nd->fail_reason, 1, 0, 0};
        /* A node of OLD's run (a nodes[] entry) that NEW's run does not have. */
        if (nd->j && (kn < 0 || !s->b->nodes[kn].j))
            s->nodes[s->nnodes++] = (nt_dnode_t){nd->host, "not in the new run", 2, 0, 0};
    }
    return NT_OK;
}

/* Worst first: new failures, then regressions by their largest loss, then the rest. */
static double nt_dlink_badness(const nt_dlink_t *d)
{
    double loss = 0;
    if (!isnan(d->bw_pct) && -d->bw_pct > loss)
        loss = -d->bw_pct;
    if (!isnan(d->lat_pct) && d->lat_pct > loss)
        loss = d->lat_pct;
    return loss;
}

static int nt_cmp_dlink(const void *a, const void *b)
{
    const nt_dlink_t *x = a, *y = b;
    double bx = nt_dlink_badness(x), by = nt_dlink_badness(y);
    const char *ix = x->n ? x->n->id : x->o->id, *iy = y->n ? y->n->id : y->o->id;

    if (x->status != y->status)
        return (int)y->status - (int)x->status;
    if (bx != by)
        return bx < by ? 1 : -1;
    return strcmp(ix, iy);
}

static void nt_fmt_pct(char *buf, size_t len, double pct)
{
    if (isnan(pct))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%+.1f%%", pct);
}

/* One table of the links of a status (text or Markdown). */
/* Why a regressed link is one: per figure, beyond which noise band, or with which verdict or
 * expected figure while its population shifted. */
static void nt_dlink_why(const nt_diff_state_t *s, const nt_dlink_t *d, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int m = 0; m < NT_M_COUNT && nt_dlink_fig(s, d, m); m++) {
        const nt_dpfig_t *f = nt_dlink_fig(s, d, m);
        const char *key = nt_metric_keys[m];
        char from[48];
        int w;
        if (!(d->why[m] & NT_WHY_REGRESSION))
            continue;
        if (f->from == NT_NZ_POPULATION)
            snprintf(from, sizeof(from), "%zu links", f->n);
        else
            snprintf(from, sizeof(from), "%s", f->from == NT_NZ_RUN ? "the run's" : "floor");
        if (d->why[m] & NT_WHY_NOISE)
            w = snprintf(buf + at, len - at, "%s%s beyond noise %.1f%% (%s)", at ? "; " : "", key,
                         nt_band_pct(m, d->band[m]), from);
        else
            w = snprintf(buf + at, len - at,
                         "%s%s with a population shift, below its expected "
                         "figure",
                         at ? "; " : "", key);
        if (w < 0 || (size_t)w >= len - at)
            return;
        at += (size_t)w;
    }
}

static void nt_diff_link_table(const nt_diff_state_t *s, nt_dstatus_t status, const char *title,
                               nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"link", "bw GB/s old", "new",     "change", "lat us old",
                                       "new",  "change",      "verdict", "why"};
    int why = status == NT_D_REGRESSED;
    size_t total = s->lcount[status], shown = 0;
    size_t cap = s->opt->top ? s->opt->top : total;
    nt_table_t t;

    if (!total)
        return;
    if (style == NT_TABLE_MD)
        nt_buf_printf(out, "\n## %s (%zu)\n\n", title, total);
    else
        nt_buf_printf(out, "\n%s%s (%zu)%s\n", s->opt->color ? "\033[1m" : "", title, total,
                      s->opt->color ? nt_ansi_reset : "");
    nt_table_init(&t, why ? 9 : 8, "lrrrrrrll", head);
    for (size_t i = 0; i < s->nlinks && shown < cap; i++) {
        const nt_dlink_t *d = &s->links[i];
        char a[32], b[32], c[32], e[32], f[32], g[32];
        if (d->status != status)
            continue;
        shown++;
        nt_table_cell(&t, 0, "%s", d->n ? d->n->id : d->o->id);
        nt_table_cell(&t, 0, "%s", nt_fmt_bw(a, sizeof(a), d->o ? d->o->peak_bw_GBps : NAN));
        nt_table_cell(&t, 0, "%s", nt_fmt_bw(b, sizeof(b), d->n ? d->n->peak_bw_GBps : NAN));
        nt_fmt_pct(c, sizeof(c), d->bw_pct);
        nt_table_cell(&t, !isnan(d->bw_pct) && d->bw_pct < -s->opt->threshold_pct ? 1 + NT_FAIL : 0,
                      "%s", c);
        nt_table_cell(&t, 0, "%s",
                      nt_fmt_num(e, sizeof(e), d->o ? d->o->small_msg_lat_us : NAN, 3));
        nt_table_cell(&t, 0, "%s",
                      nt_fmt_num(f, sizeof(f), d->n ? d->n->small_msg_lat_us : NAN, 3));
        nt_fmt_pct(g, sizeof(g), d->lat_pct);
        nt_table_cell(&t,
                      !isnan(d->lat_pct) && d->lat_pct > s->opt->threshold_pct ? 1 + NT_FAIL : 0,
                      "%s", g);
        nt_table_cell(&t, d->n ? 1 + d->n->verdict : 0, "%s%s%s%s",
                      d->o ? nt_verdict_string(d->o->verdict) : "", d->o && d->n ? " -> " : "",
                      d->n ? nt_verdict_string(d->n->verdict) : "",
                      nt_dlink_unconfirmed(d) ? " (unconfirmed)" : "");
        if (why) {
            char w[256];
            nt_dlink_why(s, d, w, sizeof(w));
            nt_table_cell(&t, 0, "%s", w);
        }
    }
    nt_table_emit(&t, out, style, s->opt->color, 2);
    nt_table_cleanup(&t);
    if (shown < total)
        nt_buf_printf(out,
                      style == NT_TABLE_MD ? "\n_... and %zu more (--top 0 shows all)._\n"
                                           : "  ... and %zu more (--top 0 shows all)\n",
                      total - shown);
}

static void nt_diff_check_table(const nt_diff_state_t *s, nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"change",  "node",         "check", "target",
                                       "verdict", "observed old", "new",   "message"};
    size_t total = 0, shown = 0, cap;
    nt_table_t t;

    for (size_t i = 0; i < s->nchecks; i++)
        total += s->checks[i].status != NT_D_UNCHANGED;
    if (!total)
        return;
    cap = s->opt->top ? s->opt->top : total;
    if (style == NT_TABLE_MD)
        nt_buf_printf(out, "\n## Checks that changed (%zu)\n\n", total);
    else
        nt_buf_printf(out, "\n%sChecks that changed (%zu)%s\n", s->opt->color ? "\033[1m" : "",
                      total, s->opt->color ? nt_ansi_reset : "");
    nt_table_init(&t, 8, "llllllll", head);
    /* New failures first, then regressions, vanished, appeared, fixed, improved. */
    static const nt_dstatus_t order[] = {NT_D_NEW_FAIL, NT_D_REGRESSED, NT_D_VANISHED,
                                         NT_D_APPEARED, NT_D_FIXED,     NT_D_IMPROVED};
    for (size_t oi = 0; oi < sizeof(order) / sizeof(order[0]); oi++) {
        for (size_t i = 0; i < s->nchecks && shown < cap; i++) {
            const nt_dcheck_t *d = &s->checks[i];
            const nt_rcheck_t *c = d->n ? d->n : d->o;
            char ob[96], nb[96];
            if (d->status != order[oi])
                continue;
            shown++;
            nt_table_cell(&t,
                          d->status == NT_D_NEW_FAIL    ? 1 + NT_FAIL
                          : d->status == NT_D_REGRESSED ? 1 + NT_WARN
                                                        : 0,
                          "%s", nt_dstatus_names[d->status]);
            nt_table_cell(&t, 0, "%s", c->host ? c->host : "-");
            nt_table_cell(&t, 0, "%s", c->name);
            nt_table_cell(&t, 0, "%s", c->target);
            nt_table_cell(&t, 0, "%s%s%s", d->o ? nt_verdict_string(d->o->verdict) : "",
                          d->o && d->n ? " -> " : "", d->n ? nt_verdict_string(d->n->verdict) : "");
            nt_table_cell(&t, 0, "%s",
                          d->o ? nt_check_value(d->o->j, "observed", ob, sizeof(ob)) : "-");
            nt_table_cell(&t, 0, "%s",
                          d->n ? nt_check_value(d->n->j, "observed", nb, sizeof(nb)) : "-");
            nt_table_cell(&t, 0, "%s", c->message);
        }
    }
    nt_table_emit(&t, out, style, s->opt->color, 2);
    nt_table_cleanup(&t);
    if (shown < total)
        nt_buf_printf(out,
                      style == NT_TABLE_MD ? "\n_... and %zu more (--top 0 shows all)._\n"
                                           : "  ... and %zu more (--top 0 shows all)\n",
                      total - shown);
}

static void nt_diff_side(nt_buf_t *out, const char *label, const nt_rdoc_t *d, int md)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(d->root, "run");
    nt_buf_printf(out, "%s%s: %s, run %s, started %s, %s, %zu node%s, %zu link%s, %zu check%s\n",
                  md ? "- " : "  ", label, d->path, nt_json_get_str(run, "id", "?"),
                  nt_json_get_str(run, "started_at", "?"), nt_verdict_string(d->verdict), d->nnodes,
                  d->nnodes == 1 ? "" : "s", d->nlinks, d->nlinks == 1 ? "" : "s", d->nchecks,
                  d->nchecks == 1 ? "" : "s");
}

/* The note on vanished links that NEW's plan did not hold: how many, why, and the ends NEW
 * did not have (the first few). */
static void nt_diff_unplanned_note(const nt_diff_state_t *s, int md, nt_buf_t *out)
{
    size_t total = s->lcount[NT_D_VANISHED] - s->planned_vanished;
    const char *sep = ": ";

    if (!total)
        return;
    nt_buf_printf(out,
                  "%snote: %zu vanished link%s %s not in the new run's plan, no regression of "
                  "%s own",
                  md ? "- " : "  ", total, total == 1 ? "" : "s", total == 1 ? "was" : "were",
                  total == 1 ? "its" : "their");
    for (int r = NT_PLAN_MODE; r < NT_PLAN_COUNT; r++) {
        size_t shown = 0;
        if (!s->vanished_by[r])
            continue;
        nt_buf_printf(out, "%s%zu %s", sep, s->vanished_by[r], nt_dplan_text[r]);
        sep = "; ";
        for (size_t i = 0; r == NT_PLAN_END && i < s->nlinks && shown < 4; i++) {
            const nt_dlink_t *d = &s->links[i];
            int dup = 0;
            if (d->status != NT_D_VANISHED || d->plan != NT_PLAN_END)
                continue;
            for (size_t k = 0; k < i && !dup; k++)
                dup = s->links[k].status == NT_D_VANISHED && s->links[k].plan == NT_PLAN_END &&
                      !strcmp(s->links[k].gone_host, d->gone_host) &&
                      !strcmp(s->links[k].gone_dev, d->gone_dev);
            if (dup)
                continue;
            nt_buf_printf(out, "%s%s/%s", shown++ ? ", " : ": ", d->gone_host, d->gone_dev);
        }
    }
    nt_buf_puts(out, "\n");
}

/* A population's label: "mpi inter", "rdma.write inter". */
static void nt_dpop_label(const nt_dpop_t *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s %s", p->kind, p->variant[0] ? "." : "", p->variant, p->scope);
}

/* The verdict line, the population shifts (warnings) and the noise bands the links were held
 * to. */
static void nt_diff_populations(const nt_diff_state_t *s, int md, nt_buf_t *out)
{
    const char *ind = md ? "- " : "  ";
    char lab[96];

    if (s->verdict_worse)
        nt_buf_printf(out, "%sverdict %s -> %s: a worse verdict is a regression\n", ind,
                      nt_verdict_string(s->a->verdict), nt_verdict_string(s->b->verdict));
    for (size_t k = 0; k < s->npops; k++)
        for (int m = 0; m < NT_M_COUNT; m++) {
            const nt_dpfig_t *f = &s->pops[k].f[m];
            if (!f->shifted)
                continue;
            nt_dpop_label(&s->pops[k], lab, sizeof(lab));
            nt_buf_printf(out,
                          "%swarning: population shift: %s %s %+.1f%% (median of %zu links, %zu "
                          "moved with it beyond %g%%): the population moved as a whole, as on a "
                          "busier machine; its links are judged against the shift, not "
                          "regressions of their own",
                          ind, lab, nt_metric_names[m], 100.0 * expm1(f->median), f->n, f->moved,
                          s->opt->threshold_pct);
            if (f->raised)
                nt_buf_printf(out, "; %zu of them regressed: below the expected figure", f->raised);
            if (f->warned)
                nt_buf_printf(out, "; %zu of them pass -> warn", f->warned);
            nt_buf_puts(out, "\n");
        }
    if (!s->npops)
        return;
    nt_buf_printf(out, "%snoise bands (a change counts beyond %g%% and beyond these):", ind,
                  s->opt->threshold_pct);
    for (size_t k = 0; k < s->npops; k++) {
        int first = 1;
        nt_dpop_label(&s->pops[k], lab, sizeof(lab));
        for (int m = 0; m < NT_M_COUNT; m++) {
            const nt_dpfig_t *f = &s->pops[k].f[m];
            if (!f->n)
                continue;
            if (first)
                nt_buf_printf(out, "%s%s", k ? "; " : " ", lab);
            nt_buf_printf(out, "%s %s %.1f%% (%zu link%s%s%s)", first ? "" : ",", nt_metric_keys[m],
                          nt_band_pct(m, f->band), f->n, f->n == 1 ? "" : "s",
                          f->from == NT_NZ_POPULATION ? "" : ", ",
                          f->from == NT_NZ_POPULATION ? ""
                          : f->from == NT_NZ_RUN      ? "too few: the run's"
                                                      : "too few: floor");
            first = 0;
        }
    }
    nt_buf_puts(out, "\n");
}

static void nt_diff_human(const nt_diff_state_t *s, nt_table_style_t style, nt_buf_t *out)
{
    int md = style == NT_TABLE_MD, color = !md && s->opt->color;
    const char *word = s->regressed ? "REGRESSION" : "no regression";
    char unc[96] = "";

    if (!s->regressed && s->ucount[NT_D_REGRESSED])
        snprintf(unc, sizeof(unc), " (%zu unconfirmed link%s regressed)",
                 s->ucount[NT_D_REGRESSED], s->ucount[NT_D_REGRESSED] == 1 ? "" : "s");

    if (md)
        nt_buf_printf(out, "# nettune report --diff: %s%s\n\n", word, unc);
    else
        nt_buf_printf(out, "nettune report --diff: %s%s%s%s",
                      color ? nt_ansi_verdict(s->regressed ? NT_FAIL : NT_PASS) : "", word,
                      color ? nt_ansi_reset : "", unc);
    nt_buf_printf(out, "%sthreshold %g%%: bandwidth down or latency up%s\n", md ? "- " : "  (",
                  s->opt->threshold_pct, md ? "" : ")");
    nt_diff_side(out, "old", s->a, md);
    nt_diff_side(out, "new", s->b, md);
    nt_buf_printf(out,
                  "%slinks: %zu matched, %zu regressed, %zu improved, %zu new failures, "
                  "%zu fixed, %zu verdict changed, %zu unchanged, %zu appeared, %zu vanished\n",
                  md ? "- " : "  ", s->lmatched, s->lcount[NT_D_REGRESSED],
                  s->lcount[NT_D_IMPROVED], s->lcount[NT_D_NEW_FAIL], s->lcount[NT_D_FIXED],
                  s->lcount[NT_D_VERDICT], s->lcount[NT_D_UNCHANGED], s->lcount[NT_D_APPEARED],
                  s->lcount[NT_D_VANISHED]);
    {
        size_t nu = 0;
        for (int k = 0; k < NT_D_COUNT; k++)
            nu += s->ucount[k];
        if (nu)
            nt_buf_printf(out,
                          "%s%zu matched link%s unconfirmed (a warning the retest could not "
                          "settle): compared against their population's noise and listed, marked "
                          "(unconfirmed); %zu of them regressed, not counted as a regression\n",
                          md ? "- " : "  ", nu, nu == 1 ? " is" : "s are",
                          s->ucount[NT_D_REGRESSED]);
    }
    nt_buf_printf(out,
                  "%schecks: %zu matched, %zu new failures, %zu worse, %zu fixed, "
                  "%zu better, %zu appeared, %zu vanished\n",
                  md ? "- " : "  ", s->cmatched, s->ccount[NT_D_NEW_FAIL],
                  s->ccount[NT_D_REGRESSED], s->ccount[NT_D_FIXED], s->ccount[NT_D_IMPROVED],
                  s->ccount[NT_D_APPEARED], s->ccount[NT_D_VANISHED]);
    if (s->planned_vanished && s->b->completed)
        nt_buf_printf(out,
                      "%s%zu vanished link%s were in the new run's plan (same mode, probe "
                      "ran, both ends present)\n",
                      md ? "- " : "  ", s->planned_vanished, s->planned_vanished == 1 ? "" : "s");
    else if (s->planned_vanished)
        nt_buf_printf(out,
                      "%s%zu vanished link%s were in the new run's plan, but the new run did not "
                      "complete (run.not_done): not judged, no regression\n",
                      md ? "- " : "  ", s->planned_vanished, s->planned_vanished == 1 ? "" : "s");
    nt_diff_unplanned_note(s, md, out);
    nt_diff_populations(s, md, out);
    for (int fixed = 0; fixed < 4; fixed++) {
        static const char *const what[4] = {"nodes newly failed: ", "nodes no longer failed: ",
                                            "nodes vanished: ", "nodes whose verdict changed: "};
        int any = 0;
        for (size_t i = 0; i < s->nnodes; i++) {
            if (s->nodes[i].fixed != fixed)
                continue;
            if (!any++)
                nt_buf_printf(out, "%s%s", md ? "- " : "  ", what[fixed]);
            else
                nt_buf_puts(out, ", ");
            if (fixed == 2)
                nt_buf_printf(out, "%s", s->nodes[i].host);
            else if (fixed == 3)
                nt_buf_printf(out, "%s (%s -> %s)", s->nodes[i].host,
                              nt_verdict_string(s->nodes[i].was), nt_verdict_string(s->nodes[i].is));
            else
                nt_buf_printf(out, "%s (%s)", s->nodes[i].host, s->nodes[i].reason);
        }
        if (any)
            nt_buf_puts(out, "\n");
    }
    nt_diff_link_table(s, NT_D_NEW_FAIL, "New link failures", style, out);
    nt_diff_link_table(s, NT_D_REGRESSED, "Regressed links (worst first)", style, out);
    nt_diff_link_table(s, NT_D_VANISHED, "Vanished links", style, out);
    nt_diff_link_table(s, NT_D_APPEARED, "Appeared links", style, out);
    nt_diff_link_table(s, NT_D_FIXED, "Fixed links", style, out);
    nt_diff_link_table(s, NT_D_IMPROVED, "Improved links", style, out);
    nt_diff_link_table(s, NT_D_VERDICT,
                       "Links whose verdict changed, figures within threshold and noise", style,
                       out);
    nt_diff_check_table(s, style, out);
    nt_diff_fabric(s->a->root, s->b->root, s->opt->threshold_pct, style, out, NULL);
}

static cJSON *nt_dlink_side(const nt_rlink_t *l)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    if (nt_json_add_num(o, "peak_bw_GBps", l->peak_bw_GBps) ||
        nt_json_add_num(o, "small_msg_lat_us", l->small_msg_lat_us) ||
        nt_json_add_str(o, "verdict", nt_verdict_string(l->verdict))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static int nt_json_side(cJSON *parent, const char *key, cJSON *side)
{
    if (!side)
        return cJSON_AddNullToObject(parent, key) ? 0 : -1;
    cJSON_AddItemToObject(parent, key, side);
    return 0;
}

static nt_status_t nt_diff_json(const nt_diff_state_t *s, nt_buf_t *out)
{
    cJSON *root = cJSON_CreateObject(), *sides[2] = {NULL, NULL}, *links, *checks, *nodes, *cnt;
    const nt_rdoc_t *docs[2] = {s->a, s->b};
    char *text;
    nt_status_t st = NT_ERR_NOMEM;
    int bad = 0;

    if (!root)
        return NT_ERR_NOMEM;
    bad |= nt_json_add_str(root, "schema", NT_DIFF_SCHEMA) != NT_OK;
    bad |= nt_json_add_num(root, "threshold_pct", s->opt->threshold_pct) != NT_OK;
    bad |= nt_json_add_bool(root, "regression", s->regressed) != NT_OK;
    bad |= nt_json_add_num(root, "planned_vanished_links", (double)s->planned_vanished) != NT_OK;
    nt_diff_fabric(s->a->root, s->b->root, s->opt->threshold_pct, NT_TABLE_TEXT, NULL, root);
    bad |= nt_json_add_bool(root, "verdict_worse", s->verdict_worse) != NT_OK;
    {
        cJSON *pops = nt_json_add_arr(root, "populations");
        bad |= !pops;
        for (size_t k = 0; pops && k < s->npops; k++)
            for (int m = 0; m < NT_M_COUNT; m++) {
                const nt_dpfig_t *f = &s->pops[k].f[m];
                cJSON *o;
                if (!f->n)
                    continue;
                o = cJSON_CreateObject();
                if (!o || !cJSON_AddItemToArray(pops, o)) {
                    cJSON_Delete(o);
                    bad = 1;
                    break;
                }
                bad |= nt_json_add_str(o, "kind", s->pops[k].kind) ||
                       nt_json_add_str(o, "variant",
                                       s->pops[k].variant[0] ? s->pops[k].variant : NULL) ||
                       nt_json_add_str(o, "scope", s->pops[k].scope) ||
                       nt_json_add_str(o, "figure", nt_metric_keys[m]) ||
                       nt_json_add_num(o, "links", (double)f->n) ||
                       nt_json_add_num(o, "median_change_pct", 100.0 * expm1(f->median)) ||
                       nt_json_add_num(o, "noise_pct", nt_band_pct(m, f->band)) ||
                       nt_json_add_str(o, "noise_from", nt_noise_from_names[f->from]) ||
                       nt_json_add_bool(o, "shift", f->shifted) ||
                       nt_json_add_num(o, "moved_with_shift", (double)f->moved) ||
                       nt_json_add_num(o, "regressed_with_shift", (double)f->raised) ||
                       nt_json_add_num(o, "warned_with_shift", (double)f->warned);
            }
    }
    {
        cJSON *np = nt_json_add_obj(root, "unplanned_vanished_links");
        bad |= !np;
        for (int r = NT_PLAN_MODE; np && r < NT_PLAN_COUNT; r++)
            bad |= nt_json_add_num(np, nt_dplan_names[r], (double)s->vanished_by[r]) != NT_OK;
    }
    for (int i = 0; i < 2; i++) {
        const cJSON *run = cJSON_GetObjectItemCaseSensitive(docs[i]->root, "run");
        sides[i] = nt_json_add_obj(root, i ? "new" : "old");
        bad |= !sides[i];
        if (sides[i])
            bad |=
                nt_json_add_str(sides[i], "path", docs[i]->path) ||
                nt_json_add_str(sides[i], "run_id", nt_json_get_str(run, "id", NULL)) ||
                nt_json_add_str(sides[i], "started_at", nt_json_get_str(run, "started_at", NULL)) ||
                nt_json_add_str(sides[i], "verdict", nt_verdict_string(docs[i]->verdict));
    }
    cnt = nt_json_add_obj(root, "counts");
    bad |= !cnt;
    for (int what = 0; cnt && what < 2; what++) {
        cJSON *c = nt_json_add_obj(cnt, what ? "checks" : "links");
        const size_t *v = what ? s->ccount : s->lcount;
        bad |= !c || nt_json_add_num(c, "matched", (double)(what ? s->cmatched : s->lmatched));
        for (int k = 0; c && k < NT_D_COUNT; k++)
            bad |= nt_json_add_num(c, nt_dstatus_names[k], (double)v[k]) != NT_OK;
    }
    nodes = nt_json_add_obj(root, "nodes");
    for (int fixed = 0; nodes && fixed < 4; fixed++) {
        static const char *const key[4] = {"new_failed", "fixed", "vanished", "verdict_changed"};
        cJSON *arr = nt_json_add_arr(nodes, key[fixed]);
        bad |= !arr;
        for (size_t i = 0; arr && i < s->nnodes; i++) {
            cJSON *o;
            if (s->nodes[i].fixed != fixed)
                continue;
            o = cJSON_CreateObject();
            bad |= !o || nt_json_add_str(o, "host", s->nodes[i].host) ||
                   (fixed == 3
                        ? nt_json_add_str(o, "old_verdict", nt_verdict_string(s->nodes[i].was)) ||
                              nt_json_add_str(o, "new_verdict", nt_verdict_string(s->nodes[i].is))
                        : nt_json_add_str(o, "reason", s->nodes[i].reason)) ||
                   !cJSON_AddItemToArray(arr, o);
        }
    }
    links = nt_json_add_arr(root, "links");
    for (size_t i = 0; links && i < s->nlinks; i++) {
        const nt_dlink_t *d = &s->links[i];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(links, o)) {
            cJSON_Delete(o);
            bad = 1;
            break;
        }
        bad |= nt_json_add_str(o, "id", d->n ? d->n->id : d->o->id) ||
               nt_json_add_str(o, "status", nt_dstatus_names[d->status]) ||
               nt_json_side(o, "old", d->o ? nt_dlink_side(d->o) : NULL) ||
               nt_json_side(o, "new", d->n ? nt_dlink_side(d->n) : NULL) ||
               nt_json_add_num(o, "bw_change_pct", d->bw_pct) ||
               nt_json_add_num(o, "lat_change_pct", d->lat_pct);
        bad |= nt_json_add_bool(o, "unconfirmed", nt_dlink_unconfirmed(d)) != NT_OK;
        for (int m = 0; nt_dlink_fig(s, d, m) && m < NT_M_COUNT; m++) {
            static const char *const nkey[NT_M_COUNT] = {"bw_noise_pct", "lat_noise_pct"};
            static const char *const bkey[NT_M_COUNT] = {"bw_basis", "lat_basis"};
            const char *basis = d->why[m] & NT_WHY_NOISE      ? "beyond_noise"
                                : d->why[m] & NT_WHY_EXPECTED ? "shift_and_below_expected"
                                : d->why[m] & NT_WHY_SHIFT    ? "moved_with_shift"
                                                              : NULL;
            if (!nt_dlink_fig(s, d, m)->n || isnan(m == NT_M_BW ? d->bw_pct : d->lat_pct))
                continue;
            bad |= nt_json_add_num(o, nkey[m], nt_band_pct(m, d->band[m])) != NT_OK;
            if (basis)
                bad |= nt_json_add_str(o, bkey[m], basis) != NT_OK;
        }
        if (d->status == NT_D_VANISHED)
            bad |= nt_json_add_bool(o, "in_new_plan", d->plan == NT_PLAN_YES) ||
                   nt_json_add_str(o, "not_in_plan",
                                   d->plan == NT_PLAN_YES ? NULL : nt_dplan_names[d->plan]);
    }
    checks = nt_json_add_arr(root, "checks");
    for (size_t i = 0; checks && i < s->nchecks; i++) {
        const nt_dcheck_t *d = &s->checks[i];
        const nt_rcheck_t *c = d->n ? d->n : d->o;
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(checks, o)) {
            cJSON_Delete(o);
            bad = 1;
            break;
        }
        bad |= nt_json_add_str(o, "name", c->name) || nt_json_add_str(o, "host", c->host) ||
               nt_json_add_str(o, "target", c->target) ||
               nt_json_add_str(o, "status", nt_dstatus_names[d->status]) ||
               nt_json_add_str(o, "old_verdict", d->o ? nt_verdict_string(d->o->verdict) : NULL) ||
               nt_json_add_str(o, "new_verdict", d->n ? nt_verdict_string(d->n->verdict) : NULL) ||
               nt_json_add_num(o, "observed_change_pct", d->obs_pct);
    }
    if (!bad && links && checks && (text = cJSON_Print(root))) {
        nt_buf_puts(out, text);
        nt_buf_puts(out, "\n");
        free(text);
        st = NT_OK;
    }
    cJSON_Delete(root);
    return st;
}

static void nt_diff_csv(const nt_diff_state_t *s, nt_buf_t *out)
{
    nt_buf_puts(out, "type,id,status,old_peak_bw_GBps,new_peak_bw_GBps,bw_change_pct,"
                     "old_small_msg_lat_us,new_small_msg_lat_us,lat_change_pct,old_verdict,"
                     "new_verdict\r\n");
    for (size_t i = 0; i < s->nlinks; i++) {
        const nt_dlink_t *d = &s->links[i];
        char v[6][40];
        nt_buf_puts(out, "link,");
        nt_buf_put_csv(out, d->n ? d->n->id : d->o->id);
        nt_buf_printf(out, ",%s,%s,%s,%s,%s,%s,%s,%s,%s\r\n", nt_dstatus_names[d->status],
                      d->o ? nt_fmt_num(v[0], 40, d->o->peak_bw_GBps, 10) : "",
                      d->n ? nt_fmt_num(v[1], 40, d->n->peak_bw_GBps, 10) : "",
                      nt_fmt_num(v[2], 40, d->bw_pct, 6),
                      d->o ? nt_fmt_num(v[3], 40, d->o->small_msg_lat_us, 10) : "",
                      d->n ? nt_fmt_num(v[4], 40, d->n->small_msg_lat_us, 10) : "",
                      nt_fmt_num(v[5], 40, d->lat_pct, 6),
                      d->o ? nt_verdict_string(d->o->verdict) : "",
                      d->n ? nt_verdict_string(d->n->verdict) : "");
    }
    for (size_t i = 0; i < s->nchecks; i++) {
        const nt_dcheck_t *d = &s->checks[i];
        const nt_rcheck_t *c = d->n ? d->n : d->o;
        char key[512];
        snprintf(key, sizeof(key), "%s:%s/%s", c->name, c->host ? c->host : "", c->target);
        nt_buf_puts(out, "check,");
        nt_buf_put_csv(out, key);
        nt_buf_printf(out, ",%s,,,,,,,%s,%s\r\n", nt_dstatus_names[d->status],
                      d->o ? nt_verdict_string(d->o->verdict) : "",
                      d->n ? nt_verdict_string(d->n->verdict) : "");
    }
}

nt_status_t nt_diff(const nt_rdoc_t *old_doc, const nt_rdoc_t *new_doc, const nt_diff_opts_t *o,
                    const char *format, nt_buf_t *out, int *regressed)
{
    nt_diff_state_t s;
    nt_status_t st;

    memset(&s, 0, sizeof(s));
    s.a = old_doc;
    s.b = new_doc;
    s.opt = o;
    *regressed = 0;
    st = nt_diff_links(&s);
    if (st == NT_OK)
        st = nt_diff_checks(&s);
    if (st == NT_OK)
        st = nt_diff_nodes(&s);
    if (st != NT_OK)
        goto out;
    qsort(s.links, s.nlinks, sizeof(*s.links), nt_cmp_dlink);
    for (size_t i = 0; i < s.nnodes; i++)
        s.regressed |= s.nodes[i].fixed == 0 || s.nodes[i].fixed == 2;
    /* A regressed link with an unconfirmed side is listed, not counted: the probe itself could
     * not settle its figure (an oversubscribed machine). */
    s.regressed |= s.lcount[NT_D_REGRESSED] > s.ucount[NT_D_REGRESSED] ||
                   s.lcount[NT_D_NEW_FAIL] || s.ccount[NT_D_NEW_FAIL];
    /* A verdict that got worse is a regression whatever the figures. */
    s.verdict_worse = s.b->verdict == NT_FAIL && s.a->verdict != NT_FAIL;
    s.regressed |= s.verdict_worse;
    /* An incomplete NEW run may not have reached a planned pair: that is not judged. */
    s.regressed |= s.planned_vanished > 0 && s.b->completed;
    if (o->fail_on_vanished)
        s.regressed |= s.lcount[NT_D_VANISHED] || s.ccount[NT_D_VANISHED];
    /* a new or narrower shared bottleneck between groups (render_fabric.c) */
    s.regressed |= nt_diff_fabric(s.a->root, s.b->root, o->threshold_pct, NT_TABLE_TEXT, NULL, NULL);
    *regressed = s.regressed;
    if (strcmp(format, "json") == 0)
        st = nt_diff_json(&s, out);
    else if (strcmp(format, "csv") == 0)
        nt_diff_csv(&s, out);
    else if (strcmp(format, "md") == 0)
        nt_diff_human(&s, NT_TABLE_MD, out);
    else if (strcmp(format, "text") == 0)
        nt_diff_human(&s, NT_TABLE_TEXT, out);
    else
        st = NT_ERR_UNSUPPORTED;
    if (st == NT_OK && out->oom)
        st = NT_ERR_NOMEM;
out:
    nt_schedule_destroy(&s.plan);
    free(s.links);
    free(s.ends);
    free(s.pops);
    free(s.checks);
    free(s.nodes);
    return st;
}
