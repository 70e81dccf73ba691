/* The link glue of the judge: links -> figures (nt_vlink_t) -> verdicts (verdict.c), folded
 * back into the links, and the links' part of the summary. One nt_vlink_t per (link, message
 * size, metric): a bandwidth sample gives a bandwidth figure (its p50), a latency sample a
 * latency figure (its p50). The link's verdict is the worst of its figures' verdicts, with every
 * reason. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge_int.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"


/* ---- links -> figures -> verdicts ---- */


const char *nt_strs_intern(nt_strs_t *t, const char *str)
{
    char **grown;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->s[i], str) == 0)
            return t->s[i];
    grown = realloc(t->s, sizeof(*grown) * (size_t)(t->n + 1));
    if (!grown)
        return NULL;
    t->s = grown;
    if (!(t->s[t->n] = strdup(str)))
        return NULL;
    return t->s[t->n++];
}

void nt_strs_free(nt_strs_t *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    t->s = NULL;
    t->n = 0;
}



void nt_figs_free(nt_figs_t *fs)
{
    free(fs->v);
    free(fs->f);
    free(fs->hosts);
    free(fs->models);
    free(fs->node_objs);
    nt_strmap_free(&fs->hostix);
    nt_strs_free(&fs->strs);
    memset(fs, 0, sizeof(*fs));
}

static int nt_figs_push(nt_figs_t *fs, cJSON *item, size_t li, const cJSON *link, int metric,
                        size_t bytes, double value, double expected, int src, int dst)
{
    const char *kind, *scope;
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 64;
        nt_vlink_t *nv = realloc(fs->v, cap * sizeof(*nv));
        nt_fig_t *nf;
        if (!nv)
            return -1;
        fs->v = nv;
        nf = realloc(fs->f, cap * sizeof(*nf));
        if (!nf)
            return -1;
        fs->f = nf;
        fs->cap = cap;
    }
    memset(&fs->v[fs->n], 0, sizeof(nt_vlink_t));
    /* Links of one kind form one population, except RDMA from GPU memory, whose figures are
     * not those of host memory (PCIe P2P to the NIC, GPUDirect). */
    kind = nt_strs_intern(&fs->strs,
                          strcmp(nt_json_get_str(link, "memory", "host"), "gpu") == 0
                              ? "rdma (GPU memory)"
                              : nt_json_get_str(link, "peer_class", /* GPU links: docs/gpu.md */
                                                nt_json_get_str(link, "kind", "?")));
    scope = nt_strs_intern(&fs->strs, nt_json_get_str(link, "scope", ""));
    if (!kind || !scope)
        return -1;
    const char *sep = nt_json_get_str(cJSON_GetObjectItemCaseSensitive(link, "src"), "device", NULL);
    const char *dep = nt_json_get_str(cJSON_GetObjectItemCaseSensitive(link, "dst"), "device", NULL);
    fs->v[fs->n].kind = kind;
    fs->v[fs->n].scope = scope;
    fs->v[fs->n].bytes = bytes;
    fs->v[fs->n].metric = metric;
    fs->v[fs->n].value = value;
    fs->v[fs->n].expected = expected;
    fs->v[fs->n].src_node = src;
    fs->v[fs->n].dst_node = dst;
    fs->v[fs->n].src_ep = sep ? nt_strs_intern(&fs->strs, sep) : NULL;
    fs->v[fs->n].dst_ep = dep ? nt_strs_intern(&fs->strs, dep) : NULL;
    fs->v[fs->n].retest_value = NAN;
    fs->f[fs->n] = (nt_fig_t){item, li, metric, bytes};
    fs->n++;
    return 0;
}

/* The figure of a sample list at (metric, bytes): the p50 (the p99 for NT_METRIC_TAIL), NaN
 * when absent. */
static double nt_sample_value(const cJSON *samples, int metric, size_t bytes)
{
    const cJSON *s;
    cJSON_ArrayForEach (s, samples) {
        if (nt_json_get_u64(s, "bytes", ULLONG_MAX) != bytes)
            continue;
        const cJSON *st =
            cJSON_GetObjectItemCaseSensitive(s, metric == NT_METRIC_BW ? "bw_GBps" : "lat_us");
        if (st)
            return nt_json_get_num(st, metric == NT_METRIC_TAIL ? "p99" : "p50", NAN);
    }
    return NAN;
}

/* The figures of one link l (the tree of links[li], item). *changed: l was changed (its
 * expected bandwidth). */
static nt_status_t nt_figs_link(const nt_judge_t *j, nt_figs_t *fs, cJSON *item, size_t li,
                                cJSON *l, int *changed)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(l, "src");
    const cJSON *dst = cJSON_GetObjectItemCaseSensitive(l, "dst");
    const char *sh = nt_json_get_str(src, "host", ""), *dh = nt_json_get_str(dst, "host", "");
    int sn = nt_node_index(fs, sh), dn = nt_node_index(fs, dh);
    nt_verdict_t v = NT_PASS;
    nt_node_rules_t r;
    int kind = nt_link_kind_parse(nt_json_get_str(l, "kind", ""));
    double exp_bw, exp_lat, line;
    const cJSON *first, *fsamples, *s;
    int retested;

    nt_verdict_parse(nt_json_get_str(l, "verdict", "pass"), &v);
    if (v == NT_SKIPPED || cJSON_GetObjectItemCaseSensitive(l, "errors") || kind < 0)
        return NT_OK;
    /* GPU pairs over NVLink are held to the NVLink rules (docs/gpu.md). */
    if (kind == NT_KIND_P2P && strncmp(nt_json_get_str(l, "path", ""), "NV", 2) == 0)
        kind = NT_KIND_NVLINK;
    nt_rules_for(j, sh, sn >= 0 ? fs->node_objs[sn] : NULL, &r);
    /* Expected bandwidth: the probe's own (hardware line rate x efficiency) or the line
     * rate it reports times this node class's efficiency, or the class minimum. */
    /* The thresholds decide the efficiency: a line rate the probe reports is multiplied
     * by this node class's efficiency (and floored by its min_bw_GBps); a probe that knows
     * no line rate may still state an expected figure of its own. */
    line = nt_json_get_num(l, "line_rate_GBps", NAN);
    exp_bw = nt_link_expected_bw(&r.links[kind], line);
    if (!isfinite(line) && !isfinite(exp_bw))
        exp_bw = nt_json_get_num(l, "expected_bw_GBps", NAN);
    if (isfinite(exp_bw)) {
        cJSON_DeleteItemFromObjectCaseSensitive(l, "expected_bw_GBps");
        nt_json_add_num(l, "expected_bw_GBps", exp_bw);
        *changed = 1;
    }
    exp_lat = nt_link_expected_lat(&r.links[kind]);
    /* A retested link carries the retest's figures and its first measurement under
     * "first" (nt_judge_apply_retest): the first is value, the retest retest_value. */
    first = cJSON_GetObjectItemCaseSensitive(l, "first");
    retested = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "retested"));
    fsamples = cJSON_GetObjectItemCaseSensitive(first ? first : l, "samples");
    cJSON_ArrayForEach (s, fsamples) {
        size_t bytes = (size_t)nt_json_get_u64(s, "bytes", 0);
        const cJSON *bw = cJSON_GetObjectItemCaseSensitive(s, "bw_GBps");
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(s, "lat_us");
        /* Only the peak size is held to the expected bandwidth: line rate needs large
         * messages; smaller sizes are judged against their peers only. The latency limit
         * holds for the smallest size (small_msg_lat_bytes), and so does the tail rule
         * (its p99: loss shows there as retransmission timeouts). */
        /* absent (a bandwidth-only link has no latency size): no size is it; a cast of the
         * -1.0 default to size_t was UB */
        int peak = nt_json_get_u64(l, "peak_bw_bytes", ULLONG_MAX) == bytes;
        int small = nt_json_get_u64(l, "small_msg_lat_bytes", ULLONG_MAX) == bytes;
        int metrics[3], nm = 0;
        if (bw)
            metrics[nm++] = NT_METRIC_BW;
        if (lat)
            metrics[nm++] = NT_METRIC_LAT;
        if (lat && small && cJSON_GetObjectItemCaseSensitive(lat, "p99"))
            metrics[nm++] = NT_METRIC_TAIL;
        for (int k = 0; k < nm; k++) {
            int m = metrics[k];
            double expv = m == NT_METRIC_BW    ? (peak ? exp_bw : NAN)
                          : m == NT_METRIC_LAT ? (small ? exp_lat : NAN)
                                               : NAN;
            if (nt_figs_push(fs, item, li, l, m, bytes, nt_sample_value(fsamples, m, bytes), expv,
                             sn, dn))
                return NT_ERR_NOMEM;
            if (retested) {
                nt_vlink_t *x = &fs->v[fs->n - 1];
                x->retested = 1;
                x->retest_value =
                    first
                        ? nt_sample_value(cJSON_GetObjectItemCaseSensitive(l, "samples"), m, bytes)
                        : NAN;
            }
        }
    }
    return NT_OK;
}

/* Build the figures of every measured link of doc. Links with errors give none: they fail on
 * their own account (nt_judge_finish). */
nt_status_t nt_figs_build(const nt_judge_t *j, cJSON *doc, nt_figs_t *fs)
{
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    cJSON *item, *it;
    nt_status_t st = NT_OK;
    size_t li = 0;
    int i = 0;

    memset(fs, 0, sizeof(*fs));
    fs->nnodes = cJSON_GetArraySize(nodes);
    fs->hosts = calloc((size_t)fs->nnodes + 1, sizeof(char *));
    fs->models = calloc((size_t)fs->nnodes + 1, sizeof(char *));
    fs->node_objs = calloc((size_t)fs->nnodes + 1, sizeof(cJSON *));
    if (!fs->hosts || !fs->models || !fs->node_objs ||
        nt_strmap_init(&fs->hostix, (size_t)fs->nnodes) != NT_OK)
        return NT_ERR_NOMEM;
    cJSON_ArrayForEach (it, nodes) {
        fs->models[i] = nt_node_gpu_model(it);
        fs->node_objs[i] = it;
        fs->hosts[i] = (char *)nt_json_get_str(it, "hostname", "?");
        nt_strmap_add(&fs->hostix, fs->hosts[i], (size_t)i);
        i++;
    }
    cJSON_ArrayForEach (item, links) {
        int changed = 0;
        cJSON *l = nt_json_thaw(item);
        if (l)
            st = nt_figs_link(j, fs, item, li, l, &changed);
        nt_json_thaw_end(item, l, changed);
        li++;
        if (st != NT_OK)
            return st;
    }
    return NT_OK;
}

/* Judge the figures. A run whose measurements were unstable (at least 3 links, and a fifth
 * of the links measured, failed their first measurement and passed their retest: the machine,
 * not the links, moved) is judged again with advisory peer rules: peer findings become
 * warnings, nobody is blamed by peers; *unstable (may be NULL) says so with the counts. */
nt_status_t nt_figs_judge(const nt_judge_t *j, nt_figs_t *fs, const cJSON *doc,
                                 nt_node_verdict_t *nv, int unstable[2])
{
    nt_peer_rules_t peer;
    nt_status_t st;
    int nflaky = 0, nlinks = 0;
    nt_thresholds_peer_for_run(j->thresholds, (const char *const *)fs->hosts, fs->models,
                               fs->nnodes, &peer);
    /* Ranks that shared an oversubscribed machine (run.serialized): see nt_peer_rules_t. */
    peer.shared_cpus = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "run"), "serialized"));
    fs->min_population = peer.min_population;
    for (int i = 0; nv && i < fs->nnodes; i++)
        nv[i].host = fs->hosts[i];
    if (unstable)
        unstable[0] = unstable[1] = 0;
    st = nt_verdict_judge(fs->v, fs->n, fs->nnodes, &peer, nv);
    if (st != NT_OK || !unstable)
        return st;
    /* per link (its figures are consecutive): flaky when any of its figures is */
    for (size_t i = 0; i < fs->n;) {
        size_t k = i;
        int fl = 0;
        for (; k < fs->n && fs->f[k].link == fs->f[i].link; k++)
            fl |= fs->v[k].flaky;
        nflaky += fl;
        nlinks++;
        i = k;
    }
    if (nflaky >= 3 && 5 * nflaky >= nlinks) {
        unstable[0] = nflaky;
        unstable[1] = nlinks;
        peer.advisory = 1;
        st = nt_verdict_judge(fs->v, fs->n, fs->nnodes, &peer, nv);
    }
    return st;
}



void nt_endpoints_add(nt_endpoints_t *e, const cJSON *link)
{
    static const char *const ends[2] = {"src", "dst"};
    e->nlinks++;
    for (int k = 0; k < 2; k++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(link, ends[k]);
        char buf[320];
        if (!o)
            continue;
        snprintf(buf, sizeof(buf), "%s/%s", nt_json_get_str(o, "host", "?"),
                 nt_json_get_str(o, "device", "?"));
        if (e->n == e->cap) {
            char **g = realloc(e->key, (e->cap = e->cap ? 2 * e->cap : 32) * sizeof(*g));
            if (!g)
                return;
            e->key = g;
        }
        if ((e->key[e->n] = strdup(buf)) != NULL)
            e->n++;
    }
}

/* One endpoint shared by most failed or warned links (3 or more, more than half) is a rail, a NIC
 * or a GPU of one rank, or one starved rank: the node is not blamed for one endpoint
 * (docs/verdicts.md section 4), but the summary says which endpoint the failures have in common, so
 * the operator knows where to look. Frees e. */
void nt_endpoints_warn(nt_endpoints_t *e, cJSON *warnings)
{
    size_t best = 0, best_n = 0;
    if (e->n) /* qsort of NULL, 0 is undefined (UBSan) */
        qsort(e->key, e->n, sizeof(*e->key), nt_cmp_strp);
    for (size_t i = 0; i < e->n;) {
        size_t k = i;
        while (k < e->n && strcmp(e->key[k], e->key[i]) == 0)
            k++;
        if (k - i > best_n)
            best_n = k - i, best = i;
        i = k;
    }
    if (best_n >= 3 && 2 * best_n > e->nlinks) {
        char w[512];
        snprintf(w, sizeof(w),
                 "%zu of the %zu failed or warned links share the endpoint %s: look at that "
                 "rank's NIC, GPU or CPU binding (one endpoint does not blame its node)",
                 best_n, e->nlinks, e->key[best]);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
    for (size_t i = 0; i < e->n; i++)
        free(e->key[i]);
    free(e->key);
    memset(e, 0, sizeof(*e));
}


/* Phase "figures": every link's figures, judged (expected values, peers, retest, node blame). */
static void nt_finish_links_judge(nt_finish_t *f)
{
    if (nt_figs_build(f->j, f->doc, &f->fs) != NT_OK ||
        !(f->nv = calloc((size_t)f->fs.nnodes + 1, sizeof(*f->nv))) ||
        nt_figs_judge(f->j, &f->fs, f->doc, f->nv, f->unstable) != NT_OK) {
        NT_ERROR(VERDICT, "out of memory judging the links");
        f->usage = 1;
    }
}

/* A link's own verdict before its figures: a measurement that did not complete fails it (or,
 * cut by a signal or a silent peer, leaves it not judged); its code says which. */
static nt_verdict_t nt_link_start(cJSON *it)
{
    nt_verdict_t v;
    const char *by;

    cJSON_DeleteItemFromObjectCaseSensitive(it, "reasons");
    cJSON_DeleteItemFromObjectCaseSensitive(it, "judged_by");
    cJSON_DeleteItemFromObjectCaseSensitive(it, "unconfirmed");
    cJSON_DeleteItemFromObjectCaseSensitive(it, "code");
    cJSON_DeleteItemFromObjectCaseSensitive(it, "category");
    v = NT_PASS;
    if (cJSON_GetObjectItemCaseSensitive(it, "errors")) {
        by = nt_json_get_str(it, "stopped_by", "error");
        if (strcmp(by, "signal") == 0 || strcmp(by, "peer_timeout") == 0) {
            /* The run stopped early (exit 3 unless something failed): the link is not judged
             * on a cut measurement. */
            v = NT_SKIPPED;
            nt_add_str_unique(nt_arr(it, "reasons"),
                              strcmp(by, "signal") == 0
                                  ? "measurement interrupted by a signal or the time limit"
                                  : "the peer stopped answering: measurement not finished");
        } else {
            v = NT_FAIL;
            nt_add_str_unique(nt_arr(it, "reasons"),
                              "the measurement did not complete (see errors)");
            nt_add_str_unique(nt_arr(it, "judged_by"), "error");
        }
    }
    nt_set_str(it, "verdict", nt_verdict_string(v));
    return v;
}

/* One figure's verdict into its link l (a failed or warned figure: reason, judged_by, the
 * unconfirmed and blamed_on_node marks, and the code of the first such figure). */
static void nt_link_take_figure(cJSON *l, const nt_vlink_t *x, const char *kind)
{
    nt_verdict_t lvv = nt_get_verdict(l);

    nt_set_str(l, "verdict", nt_verdict_string(nt_verdict_worse(lvv, x->verdict)));
    if (x->reason[0])
        nt_add_str_unique(nt_arr(l, "reasons"), x->reason);
    if (x->fired & NT_FIRED_EXPECTED)
        nt_add_str_unique(nt_arr(l, "judged_by"), "expected");
    if (x->fired & NT_FIRED_PEER)
        nt_add_str_unique(nt_arr(l, "judged_by"), "peer");
    if (x->fired & NT_FIRED_RETEST)
        nt_add_str_unique(nt_arr(l, "judged_by"), "retest");
    if (x->unconfirmed && !cJSON_GetObjectItemCaseSensitive(l, "unconfirmed"))
        cJSON_AddTrueToObject(l, "unconfirmed");
    if (x->fired & NT_FIRED_BLAME) {
        nt_add_str_unique(nt_arr(l, "judged_by"), "node_blame");
        if (!cJSON_GetObjectItemCaseSensitive(l, "blamed_on_node"))
            cJSON_AddTrueToObject(l, "blamed_on_node");
    }
    if (!cJSON_GetObjectItemCaseSensitive(l, "code"))
        nt_judge_code_add(l, nt_link_code(kind, x->metric, x->flaky));
}

/* What judged a link's figures: an expected figure, its population (the peer rule), and the
 * largest population they had. */
typedef struct nt_link_by {
    int measured, expected, peer;
    size_t population;
} nt_link_by_t;

static void nt_link_by_add(nt_link_by_t *by, const nt_vlink_t *x)
{
    if (x->verdict == NT_SKIPPED)
        return;
    by->measured = 1;
    by->expected |= !isnan(x->expected);
    by->peer |= !isnan(x->factor);
    if (x->population > by->population)
        by->population = x->population;
}

/* A link whose figures all passed: judged_by says which rules it passed; a link that no rule
 * judged (no expected figure, a population below the peer rule's minimum) is not judged, with
 * the reason, never a silent pass. */
static void nt_link_passed(cJSON *l, const nt_link_by_t *by, int min_population)
{
    char why[256];

    if (!by->measured)
        return;
    if (by->expected)
        nt_add_str_unique(nt_arr(l, "judged_by"), "expected");
    if (by->peer)
        nt_add_str_unique(nt_arr(l, "judged_by"), "peer");
    if (by->expected || by->peer)
        return;
    if (by->population < (size_t)min_population)
        snprintf(why, sizeof(why),
                 "not judged: %zu link%s in its population, below the peer rule's minimum of "
                 "%d, and no expected figure",
                 by->population, by->population == 1 ? "" : "s", min_population);
    else
        snprintf(why, sizeof(why),
                 "not judged: the peer rule is off for its figures, and no expected figure");
    nt_set_str(l, "verdict", nt_verdict_string(NT_NOT_JUDGED));
    nt_add_str_unique(nt_arr(l, "reasons"), why);
}

/* The populations the peer rule judged links against (the report's populations[]): one
 * entry per (kind, scope, size, figure), found through a small cache by the figure's place in
 * its link (links list their figures in the same order), so 499,500 links stay one pass. */
typedef struct nt_pops {
    cJSON *arr;
    const nt_vlink_t **first; /* the figure that made each entry (its key) */
    size_t n, cap, cache[8];
} nt_pops_t;

static const char *const nt_pop_metric[] = {"bw_GBps", "lat_us", "lat_p99_us"};

static int nt_pop_same(const nt_vlink_t *a, const nt_vlink_t *b)
{
    return a->metric == b->metric && a->bytes == b->bytes && strcmp(a->kind, b->kind) == 0 &&
           strcmp(a->scope ? a->scope : "", b->scope ? b->scope : "") == 0;
}

/* v to 4 significant digits: the limits are a factor times the reference, and their noise
 * is far above the fifth digit; shorter numbers keep the table small. */
static double nt_pop_round(double v)
{
    char b[32];
    snprintf(b, sizeof(b), "%.4g", v);
    return strtod(b, NULL);
}

/* The index of x's population in p (added when new), -1 on NOMEM. */
static long nt_pop_index(nt_pops_t *p, const nt_vlink_t *x, size_t place)
{
    size_t c = p->cache[place % 8];
    cJSON *o;

    if (c < p->n && nt_pop_same(p->first[c], x))
        return (long)c;
    for (c = 0; c < p->n; c++)
        if (nt_pop_same(p->first[c], x)) {
            p->cache[place % 8] = c;
            return (long)c;
        }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        const nt_vlink_t **g = realloc(p->first, cap * sizeof(*g));
        if (!g)
            return -1;
        p->first = g;
        p->cap = cap;
    }
    o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(p->arr, o)) {
        cJSON_Delete(o);
        return -1;
    }
    nt_json_add_str(o, "kind", x->kind);
    nt_json_add_str(o, "scope", x->scope ? x->scope : "");
    nt_json_add_num(o, "bytes", (double)x->bytes);
    nt_json_add_str(o, "figure", nt_pop_metric[x->metric]);
    nt_json_add_num(o, "members", (double)x->population);
    nt_json_add_num(o, "reference", nt_pop_round(x->reference));
    nt_json_add_num(o, "limit", nt_pop_round(x->factor * x->reference));
    nt_json_add_num(o, "fail_limit", nt_pop_round(x->fail_factor * x->reference));
    p->first[p->n] = x;
    p->cache[place % 8] = p->n;
    return (long)p->n++;
}

nt_status_t nt_finish_links_fold(nt_finish_t *f)
{
    cJSON *item;
    size_t li = 0, k = 0;
    nt_link_by_t by;
    nt_pops_t pops = {0};

    nt_finish_links_judge(f);
    /* Fold the figures' verdicts back into their links, link by link (a link held as text
     * is parsed once here), and note what the node verdicts need of each link. */
    pops.arr = cJSON_CreateArray();
    f->nlinks = (size_t)cJSON_GetArraySize(f->links);
    f->lv = calloc(f->nlinks + 1, sizeof(*f->lv));
    f->gl = calloc(f->nlinks + 1, sizeof(*f->gl));
    f->judged = calloc((size_t)f->fs.nnodes + 1, 1);
    if (!f->lv || !f->gl || !f->judged) {
        NT_ERROR(VERDICT, "out of memory judging the links");
        return NT_ERR_NOMEM;
    }
    cJSON_ArrayForEach (item, f->links) {
        cJSON *it = nt_json_thaw(item);
        nt_verdict_t v = nt_get_verdict(it);
        const char *kind;
        f->lv[li].v = f->lv[li].own = NT_SKIPPED;
        f->lv[li].src = f->lv[li].dst = -1;
        if (!it) {
            li++;
            continue;
        }
        kind = nt_json_get_str(it, "kind", "");
        if (v != NT_SKIPPED) {
            v = nt_link_start(it);
            if (v == NT_FAIL)
                nt_judge_code_add(it, nt_link_error_code(kind));
        }
        f->lv[li].own = v;
        memset(&by, 0, sizeof(by));
        cJSON_DeleteItemFromObjectCaseSensitive(it, "judged_against");
        /* its figures (consecutive, in link order) */
        for (size_t place = 0; !f->usage && k < f->fs.n && f->fs.f[k].li == li; k++, place++) {
            const nt_vlink_t *x = &f->fs.v[k];
            nt_link_by_add(&by, x);
            if (pops.arr && x->verdict != NT_SKIPPED && !isnan(x->factor) && !isnan(x->reference)) {
                long pi = nt_pop_index(&pops, x, place);
                cJSON *ja = nt_arr(it, "judged_against"), *e;
                int dup = 0;
                cJSON_ArrayForEach (e, ja)
                    dup |= e->valuedouble == (double)pi;
                if (pi < 0 || !ja ||
                    (!dup && !cJSON_AddItemToArray(ja, cJSON_CreateNumber((double)pi)))) {
                    NT_ERROR(VERDICT, "out of memory judging the links");
                    f->usage = 1;
                }
            }
            if (x->verdict == NT_PASS || x->verdict == NT_SKIPPED)
                continue;
            if (!(x->fired & NT_FIRED_BLAME))
                f->lv[li].own = nt_verdict_worse(f->lv[li].own, x->verdict);
            nt_link_take_figure(it, x, kind);
        }
        if (v == NT_PASS && nt_get_verdict(it) == NT_PASS)
            nt_link_passed(it, &by, f->fs.min_population);
        f->lv[li].v = nt_get_verdict(it);
        f->lv[li].src = nt_node_index(
            &f->fs, nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "src"), "host", ""));
        f->lv[li].dst = nt_node_index(
            &f->fs, nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "dst"), "host", ""));
        if (f->lv[li].v == NT_PASS || f->lv[li].v == NT_WARN || f->lv[li].v == NT_FAIL)
            for (int e = 0; e < 2; e++) {
                int n = e ? f->lv[li].dst : f->lv[li].src;
                if (n >= 0 && n < f->fs.nnodes)
                    f->judged[n] = 1;
            }
        if (nt_gpu_is_link_kind(kind))
            f->gl[f->ngl++] = li;
        f->frozen |= it != item;
        nt_json_thaw_end(item, it, 1);
        li++;
    }
    free(pops.first);
    cJSON_DeleteItemFromObjectCaseSensitive(f->doc, "populations");
    if (pops.arr && !cJSON_AddItemToObject(f->doc, "populations", pops.arr))
        cJSON_Delete(pops.arr);
    return NT_OK;
}

void nt_finish_links_summary(nt_finish_t *f)
{
    nt_endpoints_t eps = {0};
    cJSON *item;

    cJSON_ArrayForEach (item, f->links) {
        cJSON *it = nt_json_thaw(item);
        nt_verdict_t v = nt_get_verdict(it);
        if (!it)
            continue;
        if (strcmp(nt_json_get_str(it, "stopped_by", ""), "peer_timeout") == 0) {
            char w[600];
            const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "errors"), 0);
            snprintf(w, sizeof(w), "%s: %s (a hung or dead node?)",
                     nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "dst"), "host", "?"),
                     cJSON_IsString(e0) ? e0->valuestring : "stopped answering");
            cJSON_AddItemToArray(f->warnings, cJSON_CreateString(w));
        }
        f->cnt[v]++;
        if (v != NT_SKIPPED && v != NT_NOT_JUDGED)
            f->overall = nt_verdict_worse(f->overall, v);
        /* A link failing because of a blamed node is not a link fault of its own. */
        if (v == NT_FAIL && !cJSON_GetObjectItemCaseSensitive(it, "blamed_on_node")) {
            cJSON_AddItemToArray(f->failed_links,
                                 cJSON_CreateString(nt_json_get_str(it, "id", "")));
            nt_endpoints_add(&eps, it);
        } else if (v == NT_WARN) {
            char w[512];
            nt_endpoints_add(&eps, it);
            const cJSON *r0 =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "reasons"), 0);
            snprintf(w, sizeof(w), "%s: %s", nt_json_get_str(it, "id", ""),
                     cJSON_IsString(r0) ? r0->valuestring : "warning");
            cJSON_AddItemToArray(f->warnings, cJSON_CreateString(w));
        } else if (v == NT_NOT_JUDGED) {
            /* counted in summary.counts.not_judged, so listed with its reason as a check is:
             * the summary's "N not judged" is its lines (docs/verdicts.md). A link is not
             * judged only in a population below the peer rule's minimum, so the list stays
             * short at any scale. */
            char w[600];
            const cJSON *r0 =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "reasons"), 0);
            const char *why = cJSON_IsString(r0) ? r0->valuestring : "no rule judged it";
            if (strncmp(why, "not judged: ", 12) == 0)
                why += 12;
            snprintf(w, sizeof(w), "%s: %s", nt_json_get_str(it, "id", ""), why);
            cJSON_AddItemToArray(f->not_judged, cJSON_CreateString(w));
        }
        if (v == NT_PASS && !f->params->samples_all) {
            cJSON_DeleteItemFromObjectCaseSensitive(it, "samples");
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "first"),
                                                    "samples");
            nt_json_thaw_end(item, it, 1);
        } else {
            nt_json_thaw_end(item, it, 0);
        }
    }
    nt_endpoints_warn(&eps, f->warnings);
}
