/* Verdicts for the report (see judge.h), on the engine of lib/verdict.c and the rules of
 * lib/thresholds.c. One nt_vlink_t per (link, message size, metric): a bandwidth sample gives a
 * bandwidth figure (its p50), a latency sample a latency figure (its p50). The link's verdict
 * is the worst of its figures' verdicts, with every reason. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"
#include "nettune/verdict.h"

typedef struct nt_silent {
    char host[256];
    char why[256];
} nt_silent_t;

struct nt_judge {
    nt_thresholds_t *thresholds;
    nt_expect_t expect_override; /* --expect */
    unsigned require;            /* --require */
    int strict;
    nt_silent_t *silent; /* nodes that stopped answering (nt_judge_node_silent) */
    int nsilent;
    char **ctl; /* ids of the control links of the last retest (nt_judge_retest_pairs) */
    int nctl;
};

static void nt_judge_ctl_free(nt_judge_t *j)
{
    for (int i = 0; i < j->nctl; i++)
        free(j->ctl[i]);
    free(j->ctl);
    j->ctl = NULL;
    j->nctl = 0;
}

static int nt_judge_is_ctl(const nt_judge_t *j, const char *id)
{
    for (int i = 0; i < j->nctl; i++)
        if (strcmp(j->ctl[i], id) == 0)
            return 1;
    return 0;
}

nt_status_t nt_judge_create(const nt_probe_params_t *params, nt_judge_t **out)
{
    nt_judge_t *j = calloc(1, sizeof(*j));
    char err[512];
    nt_status_t st;

    *out = NULL;
    if (!j)
        return NT_ERR_NOMEM;
    st = params->thresholds
             ? nt_thresholds_load(params->thresholds, &j->thresholds, err, sizeof(err))
             : nt_thresholds_defaults(&j->thresholds);
    if (st != NT_OK) {
        if (params->thresholds)
            NT_ERROR(VERDICT, "%s (fix the file, or start from nettune probe --print-thresholds)",
                     err);
        free(j);
        return st;
    }
    nt_expect_init(&j->expect_override);
    if (params->expect &&
        (st = nt_expect_parse(params->expect, &j->expect_override, err, sizeof(err))) != NT_OK) {
        NT_ERROR(VERDICT, "%s", err);
        nt_thresholds_destroy(j->thresholds);
        free(j);
        return st;
    }
    j->require = params->require;
    j->strict = params->strict;
    *out = j;
    return NT_OK;
}

void nt_judge_destroy(nt_judge_t *j)
{
    if (!j)
        return;
    nt_thresholds_destroy(j->thresholds);
    free(j->silent);
    nt_judge_ctl_free(j);
    free(j);
}

void nt_judge_node_silent(nt_judge_t *j, const char *host, const char *why)
{
    nt_silent_t *grown;
    if (!j || !host || !*host)
        return;
    for (int i = 0; i < j->nsilent; i++)
        if (strcmp(j->silent[i].host, host) == 0)
            return; /* the first reason stands */
    grown = realloc(j->silent, sizeof(*grown) * (size_t)(j->nsilent + 1));
    if (!grown)
        return;
    j->silent = grown;
    snprintf(grown[j->nsilent].host, sizeof(grown->host), "%s", host);
    snprintf(grown[j->nsilent].why, sizeof(grown->why), "%s",
             why && *why ? why : "stopped answering");
    j->nsilent++;
}

nt_status_t nt_judge_print_thresholds(FILE *f)
{
    nt_thresholds_t *t = NULL;
    cJSON *doc = NULL;
    char *txt;
    nt_status_t st = nt_thresholds_defaults(&t);

    if (st == NT_OK)
        st = nt_thresholds_to_json(t, &doc);
    nt_thresholds_destroy(t);
    if (st != NT_OK)
        return st;
    txt = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!txt)
        return NT_ERR_NOMEM;
    fprintf(f, "%s\n", txt);
    free(txt);
    return NT_OK;
}

static const char *nt_node_gpu_model(const cJSON *node)
{
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "gpus"), 0);
    return g ? nt_json_get_str(g, "name", NULL) : NULL;
}

static void nt_rules_for(const nt_judge_t *j, const char *host, const cJSON *node,
                         nt_node_rules_t *r)
{
    nt_thresholds_for_host(j->thresholds, host, node ? nt_node_gpu_model(node) : NULL, r);
    nt_expect_override(&r->expect, &j->expect_override);
}

void nt_judge_node_checks(const nt_judge_t *j, const char *host, const cJSON *node_json,
                          cJSON *checks)
{
    nt_node_rules_t r;
    const cJSON *nics = cJSON_GetObjectItemCaseSensitive(node_json, "nics");
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(node_json, "gpus");
    const cJSON *it;
    int active = 0, unknown_state = 0, unknown_rate = 0;
    double min_rate = NAN;

    nt_rules_for(j, host, node_json, &r);
    cJSON_ArrayForEach (it, nics) {
        const char *state = nt_json_get_str(it, "state", "");
        /* A state hwloc or sysfs did not record is unknown, not "not ACTIVE". */
        if (!*state || strcasecmp(state, "unknown") == 0) {
            unknown_state++;
            continue;
        }
        if (strcmp(state, "ACTIVE") != 0)
            continue;
        double rate = nt_json_get_num(it, "rate_Gbps", NAN);
        active++;
        if (!(rate > 0))
            unknown_rate++;
        else if (!isfinite(min_rate) || rate < min_rate)
            min_rate = rate;
    }
    nt_inventory_check(&r.expect, j->require, cJSON_GetArraySize(gpus), active, unknown_state,
                       min_rate, unknown_rate, host, checks);
    /* pcie=genXxW: each GPU's and NIC's capability against the expectation. */
    if (r.expect.pcie_gen > 0) {
        const cJSON *lists[2] = {gpus, nics};
        for (int k = 0; k < 2; k++) {
            cJSON_ArrayForEach (it, lists[k]) {
                const cJSON *pc = cJSON_GetObjectItemCaseSensitive(it, "pcie");
                char msg[256] = "", label[64];
                const char *bdf = nt_json_get_str(it, "pci_bus_id", "?");
                nt_verdict_t v;
                if (k == 0)
                    snprintf(label, sizeof(label), "GPU %d", (int)nt_json_get_num(it, "index", -1));
                else
                    snprintf(label, sizeof(label), "%s", nt_json_get_str(it, "name", "NIC"));
                if (!pc) {
                    /* Never a silent pass: say that the expectation could not be judged. */
                    cJSON *c = nt_check_create(
                        "inventory", host, label, NT_NOT_JUDGED, NAN, NAN, NULL,
                        "%s (%s): PCIe link state unknown (no sysfs link files here, or a "
                        "topology file from another machine): gen%dx%d expected, not judged",
                        bdf, label, r.expect.pcie_gen, r.expect.pcie_width);
                    if (c)
                        cJSON_AddItemToArray(checks, c);
                    continue;
                }
                v = nt_expect_pcie_judge(&r.expect, bdf, label,
                                         (int)nt_json_get_num(pc, "max_gen", 0),
                                         (int)nt_json_get_num(pc, "max_width", 0),
                                         (int)nt_json_get_num(pc, "width", 0), msg, sizeof(msg));
                {
                    cJSON *c =
                        nt_check_create("inventory", host, label, v, NAN, NAN, NULL, "%s",
                                        msg[0] ? msg : "PCIe capability unknown: not judged");
                    if (c)
                        cJSON_AddItemToArray(checks, c);
                }
            }
        }
    }
}

/* ---- links -> figures -> verdicts ---- */

typedef struct nt_fig {
    cJSON *link;
    int metric;
    size_t bytes;
} nt_fig_t;

typedef struct nt_figs {
    nt_vlink_t *v;
    nt_fig_t *f;
    size_t n, cap;
    char **hosts;        /* node index -> host */
    const char **models; /* node index -> GPU model (NULL: none), for thresholds classes */
    int nnodes;
} nt_figs_t;

static int nt_node_index(const nt_figs_t *fs, const char *host)
{
    for (int i = 0; i < fs->nnodes; i++)
        if (strcmp(fs->hosts[i], host) == 0)
            return i;
    return -1;
}

static void nt_figs_free(nt_figs_t *fs)
{
    free(fs->v);
    free(fs->f);
    free(fs->hosts);
    free(fs->models);
    memset(fs, 0, sizeof(*fs));
}

static int nt_figs_push(nt_figs_t *fs, cJSON *link, int metric, size_t bytes, double value,
                        double expected, int src, int dst)
{
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
    fs->v[fs->n].kind = strcmp(nt_json_get_str(link, "memory", "host"), "gpu") == 0
                            ? "rdma (GPU memory)"
                            : nt_json_get_str(link, "peer_class", /* GPU links: docs/gpu.md */
                                              nt_json_get_str(link, "kind", "?"));
    fs->v[fs->n].scope = nt_json_get_str(link, "scope", "");
    fs->v[fs->n].bytes = bytes;
    fs->v[fs->n].metric = metric;
    fs->v[fs->n].value = value;
    fs->v[fs->n].expected = expected;
    fs->v[fs->n].src_node = src;
    fs->v[fs->n].dst_node = dst;
    fs->v[fs->n].retest_value = NAN;
    fs->f[fs->n] = (nt_fig_t){link, metric, bytes};
    fs->n++;
    return 0;
}

/* The figure of a sample list at (metric, bytes): the p50 (the p99 for NT_METRIC_TAIL), NaN
 * when absent. */
static double nt_sample_value(const cJSON *samples, int metric, size_t bytes)
{
    const cJSON *s;
    cJSON_ArrayForEach (s, samples) {
        if ((size_t)nt_json_get_num(s, "bytes", -1) != bytes)
            continue;
        const cJSON *st =
            cJSON_GetObjectItemCaseSensitive(s, metric == NT_METRIC_BW ? "bw_GBps" : "lat_us");
        if (st)
            return nt_json_get_num(st, metric == NT_METRIC_TAIL ? "p99" : "p50", NAN);
    }
    return NAN;
}

/* Build the figures of every measured link of doc. Links with errors give none: they fail on
 * their own account (nt_judge_finish). */
static nt_status_t nt_figs_build(const nt_judge_t *j, cJSON *doc, nt_figs_t *fs)
{
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    cJSON *l, *it;
    int i = 0;

    memset(fs, 0, sizeof(*fs));
    fs->nnodes = cJSON_GetArraySize(nodes);
    fs->hosts = calloc((size_t)fs->nnodes + 1, sizeof(char *));
    fs->models = calloc((size_t)fs->nnodes + 1, sizeof(char *));
    if (!fs->hosts || !fs->models)
        return NT_ERR_NOMEM;
    cJSON_ArrayForEach (it, nodes) {
        fs->models[i] = nt_node_gpu_model(it);
        fs->hosts[i++] = (char *)nt_json_get_str(it, "hostname", "?");
    }
    cJSON_ArrayForEach (l, links) {
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
            continue;
        /* GPU pairs over NVLink are held to the NVLink rules (docs/gpu.md). */
        if (kind == NT_KIND_P2P && strncmp(nt_json_get_str(l, "path", ""), "NV", 2) == 0)
            kind = NT_KIND_NVLINK;
        nt_rules_for(j, sh, sn >= 0 ? cJSON_GetArrayItem(nodes, sn) : NULL, &r);
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
        }
        exp_lat = nt_link_expected_lat(&r.links[kind]);
        /* A retested link carries the retest's figures and its first measurement under
         * "first" (nt_judge_apply_retest): the first is value, the retest retest_value. */
        first = cJSON_GetObjectItemCaseSensitive(l, "first");
        retested = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "retested"));
        fsamples = cJSON_GetObjectItemCaseSensitive(first ? first : l, "samples");
        cJSON_ArrayForEach (s, fsamples) {
            size_t bytes = (size_t)nt_json_get_num(s, "bytes", 0);
            const cJSON *bw = cJSON_GetObjectItemCaseSensitive(s, "bw_GBps");
            const cJSON *lat = cJSON_GetObjectItemCaseSensitive(s, "lat_us");
            /* Only the peak size is held to the expected bandwidth: line rate needs large
             * messages; smaller sizes are judged against their peers only. The latency limit
             * holds for the smallest size (small_msg_lat_bytes), and so does the tail rule
             * (its p99: loss shows there as retransmission timeouts). */
            int peak = (size_t)nt_json_get_num(l, "peak_bw_bytes", -1) == bytes;
            int small = (size_t)nt_json_get_num(l, "small_msg_lat_bytes", -1) == bytes;
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
                if (nt_figs_push(fs, l, m, bytes, nt_sample_value(fsamples, m, bytes), expv, sn,
                                 dn))
                    return NT_ERR_NOMEM;
                if (retested) {
                    nt_vlink_t *x = &fs->v[fs->n - 1];
                    x->retested = 1;
                    x->retest_value =
                        first ? nt_sample_value(cJSON_GetObjectItemCaseSensitive(l, "samples"), m,
                                                bytes)
                              : NAN;
                }
            }
        }
    }
    return NT_OK;
}

/* Judge the figures. A run whose measurements were unstable (at least 3 links, and a fifth
 * of the links measured, failed their first measurement and passed their retest: the machine,
 * not the links, moved) is judged again with advisory peer rules: peer findings become
 * warnings, nobody is blamed by peers; *unstable (may be NULL) says so with the counts. */
static nt_status_t nt_figs_judge(const nt_judge_t *j, nt_figs_t *fs, const cJSON *doc,
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

nt_status_t nt_judge_retest_pairs(nt_judge_t *j, const nt_probe_t *p, cJSON *doc,
                                  const nt_link_probe_ops_t *const *table, int ntable,
                                  int (**pairs)[3], int *n)
{
    nt_figs_t fs;
    size_t *idx = NULL, nidx;
    nt_status_t st;

    (void)p;
    *pairs = NULL;
    *n = 0;
    st = nt_figs_build(j, doc, &fs);
    if (st == NT_OK)
        st = nt_figs_judge(j, &fs, doc, NULL, NULL);
    if (st != NT_OK || fs.n == 0)
        goto out;
    idx = malloc(fs.n * sizeof(*idx));
    *pairs = calloc(2 * fs.n, sizeof(**pairs));
    if (!idx || !*pairs) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    nidx = nt_verdict_retest_list(fs.v, fs.n, idx, fs.n);
    for (size_t i = 0; i < nidx; i++) {
        const cJSON *l = fs.f[idx[i]].link;
        int a = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"), "rank", -1);
        int b = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"), "rank", -1);
        int k, dup = 0;
        for (k = 0; k < ntable; k++)
            if (strcmp(table[k]->kind, nt_json_get_str(l, "kind", "")) == 0)
                break;
        if (k == ntable || a < 0 || b < 0 || a == b)
            continue;
        for (int m = 0; m < *n; m++)
            dup |= (*pairs)[m][0] == a && (*pairs)[m][1] == b && (*pairs)[m][2] == k;
        if (!dup) {
            (*pairs)[*n][0] = a;
            (*pairs)[*n][1] = b;
            (*pairs)[*n][2] = k;
            (*n)++;
        }
    }
    /* Every pair twice, the second time after all the others: a disturbance of the machine
     * (another job, the scheduler) rarely hits one pair at two moments apart, a fault always
     * does. nt_judge_apply_retest keeps the better of the two. Each measurement is followed by
     * a control: the best passing link of the same kind and scope between two other ranks; a
     * control much worse than its own first measurement means the machine was disturbed then,
     * and the retest before it does not count. */
    {
        int nf = *n, m = 0;
        int(*seq)[3] = calloc((size_t)nf * 4 + 1, sizeof(*seq));
        if (!seq) {
            st = NT_ERR_NOMEM;
            goto out;
        }
        nt_judge_ctl_free(j);
        for (int rnd = 0; rnd < 2; rnd++)
            for (int q = 0; q < nf; q++) {
                const cJSON *best = NULL, *l;
                double best_bw = -1;
                int a = (*pairs)[q][0], b = (*pairs)[q][1], k = (*pairs)[q][2];
                const char *scope = NULL;
                memcpy(seq[m++], (*pairs)[q], sizeof(seq[0]));
                cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(doc, "links")) {
                    int la = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"),
                                                  "rank", -1);
                    int lb = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"),
                                                  "rank", -1);
                    if ((la == a && lb == b) || (la == b && lb == a))
                        scope = nt_json_get_str(l, "scope", "");
                }
                cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(doc, "links")) {
                    int la = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"),
                                                  "rank", -1);
                    int lb = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"),
                                                  "rank", -1);
                    double bw = nt_json_get_num(l, "peak_bw_GBps", NAN);
                    if (strcmp(nt_json_get_str(l, "kind", ""), table[k]->kind) != 0 ||
                        strcmp(nt_json_get_str(l, "scope", ""), scope ? scope : "") != 0 ||
                        strcmp(nt_json_get_str(l, "verdict", "pass"), "pass") != 0 ||
                        cJSON_GetObjectItemCaseSensitive(l, "retested") ||
                        cJSON_GetObjectItemCaseSensitive(l, "errors") || la < 0 || lb < 0 ||
                        la == a || la == b || lb == a || lb == b || !(bw > best_bw))
                        continue;
                    best = l;
                    best_bw = bw;
                }
                if (!best)
                    continue;
                seq[m][0] =
                    (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(best, "src"), "rank", -1);
                seq[m][1] =
                    (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(best, "dst"), "rank", -1);
                seq[m++][2] = k;
                /* every link between the control's ranks (both directions) is a control */
                cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(doc, "links")) {
                    int la = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"),
                                                  "rank", -1);
                    int lb = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"),
                                                  "rank", -1);
                    const char *id = nt_json_get_str(l, "id", "");
                    char **grown;
                    if (!((la == seq[m - 1][0] && lb == seq[m - 1][1]) ||
                          (la == seq[m - 1][1] && lb == seq[m - 1][0])) ||
                        nt_judge_is_ctl(j, id))
                        continue;
                    grown = realloc(j->ctl, sizeof(*grown) * (size_t)(j->nctl + 1));
                    if (!grown)
                        break;
                    j->ctl = grown;
                    if ((j->ctl[j->nctl] = strdup(id)))
                        j->nctl++;
                }
            }
        free(*pairs);
        *pairs = seq;
        *n = m;
    }
out:
    free(idx);
    nt_figs_free(&fs);
    if (st != NT_OK) {
        free(*pairs);
        *pairs = NULL;
        *n = 0;
    }
    return st;
}

/* Move key from one object to another (replacing it there); absent keys are left absent. */
static void nt_move_key(cJSON *from, cJSON *to, const char *key)
{
    cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(from, key);
    if (!it)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(to, key);
    cJSON_AddItemToObject(to, key, it);
}

static void nt_set_num(cJSON *obj, const char *key, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    nt_json_add_num(obj, key, v);
}

/* 1 when sample b is better than sample a at the same size: higher bandwidth p50, else lower
 * latency p50 (a sample has one of the two). */
static int nt_sample_better(const cJSON *a, const cJSON *b)
{
    const cJSON *ba = cJSON_GetObjectItemCaseSensitive(a, "bw_GBps");
    const cJSON *bb = cJSON_GetObjectItemCaseSensitive(b, "bw_GBps");
    if (ba || bb)
        return nt_json_get_num(bb, "p50", -1) > nt_json_get_num(ba, "p50", -1);
    return nt_json_get_num(cJSON_GetObjectItemCaseSensitive(b, "lat_us"), "p50", INFINITY) <
           nt_json_get_num(cJSON_GetObjectItemCaseSensitive(a, "lat_us"), "p50", INFINITY);
}

/* Merge a second retest of a link into the first (dst): per message size the better sample,
 * the summary figures recomputed from them (peak bandwidth and its size, the latency of the
 * smallest latency size) and the shorter elapsed_s. A retest with errors or no samples adds
 * nothing. */
static void nt_retest_merge(cJSON *dst, const cJSON *r)
{
    cJSON *ds = cJSON_GetObjectItemCaseSensitive(dst, "samples"), *s;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(r, "samples"), *x;
    double peak = -1, lat = NAN;
    size_t peak_bytes = 0, lat_bytes = SIZE_MAX;

    if (cJSON_GetObjectItemCaseSensitive(r, "errors") || cJSON_GetArraySize(rs) == 0)
        return;
    if (cJSON_GetObjectItemCaseSensitive(dst, "errors") || cJSON_GetArraySize(ds) == 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(dst, "errors");
        cJSON_DeleteItemFromObjectCaseSensitive(dst, "samples");
        cJSON_AddItemToObject(dst, "samples", cJSON_Duplicate(rs, 1));
        ds = cJSON_GetObjectItemCaseSensitive(dst, "samples");
    } else {
        cJSON_ArrayForEach (x, rs) {
            int k = 0;
            cJSON_ArrayForEach (s, ds) {
                if (nt_json_get_num(s, "bytes", -1) == nt_json_get_num(x, "bytes", -2)) {
                    if (nt_sample_better(s, x))
                        cJSON_ReplaceItemInArray(ds, k, cJSON_Duplicate(x, 1));
                    break;
                }
                k++;
            }
        }
    }
    cJSON_ArrayForEach (s, ds) {
        size_t bytes = (size_t)nt_json_get_num(s, "bytes", 0);
        const cJSON *bw = cJSON_GetObjectItemCaseSensitive(s, "bw_GBps");
        const cJSON *lt = cJSON_GetObjectItemCaseSensitive(s, "lat_us");
        if (bw && nt_json_get_num(bw, "p50", -1) > peak) {
            peak = nt_json_get_num(bw, "p50", -1);
            peak_bytes = bytes;
        }
        if (lt && bytes < lat_bytes) {
            lat_bytes = bytes;
            lat = nt_json_get_num(lt, "p50", NAN);
        }
    }
    /* the shorter of the two measurements' times goes with the better figures */
    if (nt_json_get_num(r, "elapsed_s", INFINITY) < nt_json_get_num(dst, "elapsed_s", INFINITY))
        nt_set_num(dst, "elapsed_s", nt_json_get_num(r, "elapsed_s", 0));
    if (peak >= 0) {
        nt_set_num(dst, "peak_bw_GBps", peak);
        nt_set_num(dst, "peak_bw_bytes", (double)peak_bytes);
    }
    if (lat_bytes != SIZE_MAX) {
        nt_set_num(dst, "small_msg_lat_us", lat);
        nt_set_num(dst, "small_msg_lat_bytes", (double)lat_bytes);
    }
}

/* Whether a control measurement r ran much worse than its link's first measurement in doc:
 * bandwidth under half, or latency over 4 times, at any size (the link-fault limits: a
 * sub-microsecond latency doubles with scheduling jitter alone). */
static int nt_ctl_disturbed(const cJSON *doc, const cJSON *r)
{
    const cJSON *l, *x, *s;
    const char *id = nt_json_get_str(r, "id", "");
    if (cJSON_GetObjectItemCaseSensitive(r, "errors"))
        return 1;
    cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(doc, "links"))
        if (strcmp(nt_json_get_str(l, "id", ""), id) == 0)
            break;
    if (!l)
        return 0;
    cJSON_ArrayForEach (x, cJSON_GetObjectItemCaseSensitive(r, "samples")) {
        cJSON_ArrayForEach (s, cJSON_GetObjectItemCaseSensitive(l, "samples")) {
            if (nt_json_get_num(s, "bytes", -1) != nt_json_get_num(x, "bytes", -2))
                continue;
            double b0 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(s, "bw_GBps"), "p50", NAN);
            double b1 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(x, "bw_GBps"), "p50", NAN);
            double l0 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(s, "lat_us"), "p50", NAN);
            double l1 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(x, "lat_us"), "p50", NAN);
            if ((b1 < 0.5 * b0) || (l1 > 4.0 * l0))
                return 1;
        }
    }
    return 0;
}

void nt_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links)
{
    /* The figures a link's summary is made of; they move together. */
    static const char *const figs[] = {"samples",          "peak_bw_GBps",        "peak_bw_bytes",
                                       "small_msg_lat_us", "small_msg_lat_bytes", "elapsed_s"};
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    const cJSON *r;

    (void)j;
    cJSON *merged = cJSON_CreateArray();
    if (!merged)
        return;
    /* In measurement order: a retest counts once the control measured after it held its
     * own first figures (nt_ctl_disturbed); the retests of one link (each pair is measured
     * twice) give the better figures per size. */
    cJSON *pending = cJSON_CreateArray();
    int disturbed = 0;
    for (r = retest_links ? retest_links->child : NULL;; r = r->next) {
        const char *id = r ? nt_json_get_str(r, "id", NULL) : NULL;
        int ctl = id && nt_judge_is_ctl(j, id);
        if (!r || ctl) {
            /* a control (or the end) closes the pending retests */
            const cJSON *p2;
            if (ctl && nt_ctl_disturbed(doc, r))
                disturbed++;
            else
                cJSON_ArrayForEach (p2, pending) {
                    const char *pid = nt_json_get_str(p2, "id", "");
                    cJSON *m;
                    cJSON_ArrayForEach (m, merged)
                        if (strcmp(nt_json_get_str(m, "id", ""), pid) == 0)
                            break;
                    if (m)
                        nt_retest_merge(m, p2);
                    else
                        cJSON_AddItemToArray(merged, cJSON_Duplicate(p2, 1));
                }
            while (pending && cJSON_GetArraySize(pending) > 0)
                cJSON_DeleteItemFromArray(pending, 0);
            if (!r)
                break;
            continue;
        }
        if (id && pending)
            cJSON_AddItemToArray(pending, cJSON_Duplicate(r, 1));
    }
    cJSON_Delete(pending);
    if (disturbed)
        NT_INFO(VERDICT,
                "%d retest(s) not counted: their control link ran slow too (the machine "
                "was busy then)",
                disturbed);
    cJSON_ArrayForEach (r, merged) {
        const char *id = nt_json_get_str(r, "id", NULL);
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(r, "samples");
        cJSON *l;
        if (!id)
            continue;
        cJSON_ArrayForEach (l, links) {
            if (strcmp(nt_json_get_str(l, "id", ""), id) != 0 ||
                cJSON_GetObjectItemCaseSensitive(l, "retested"))
                continue;
            cJSON_AddTrueToObject(l, "retested");
            if (cJSON_GetArraySize(rs) > 0 && !cJSON_GetObjectItemCaseSensitive(r, "errors")) {
                /* The verdict rests on the retest: its figures become the link's, the first
                 * measurement is kept beside them. */
                cJSON *first = cJSON_AddObjectToObject(l, "first");
                cJSON *copy = cJSON_Duplicate(r, 1);
                if (!first || !copy) {
                    cJSON_Delete(copy);
                    break;
                }
                for (size_t k = 0; k < sizeof(figs) / sizeof(figs[0]); k++) {
                    nt_move_key(l, first, figs[k]);
                    nt_move_key(copy, l, figs[k]);
                }
                cJSON_Delete(copy);
            } else {
                const cJSON *errs = cJSON_GetObjectItemCaseSensitive(r, "errors");
                cJSON *e = errs ? cJSON_Duplicate(errs, 1) : cJSON_CreateArray();
                if (e && !errs)
                    cJSON_AddItemToArray(e, cJSON_CreateString("the retest gave no figures"));
                if (e)
                    cJSON_AddItemToObject(l, "retest_errors", e);
            }
            break;
        }
    }
    cJSON_Delete(merged);
}

static void nt_add_str_unique(cJSON *arr, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, arr)
        if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
            return;
    cJSON_AddItemToArray(arr, cJSON_CreateString(s));
}

static cJSON *nt_arr(cJSON *obj, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    return a ? a : cJSON_AddArrayToObject(obj, key);
}

static void nt_set_str(cJSON *obj, const char *key, const char *val)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    nt_json_add_str(obj, key, val);
}

static nt_verdict_t nt_get_verdict(const cJSON *obj)
{
    nt_verdict_t v = NT_PASS;
    nt_verdict_parse(nt_json_get_str(obj, "verdict", "pass"), &v);
    return v;
}

/* One failed node: its first reason (the one DRAIN lines and the Slurm drain print) and cause,
 * and how many more reasons it has. */
typedef struct nt_nodefail {
    nt_verdict_t verdict; /* the node verdict */
    char reason[320];     /* "" until it fails */
    const char *cause;
    int more;
} nt_nodefail_t;

static void nt_node_fails(nt_nodefail_t *nf, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void nt_node_fails(nt_nodefail_t *nf, const char *cause, const char *fmt, ...)
{
    va_list ap;
    nf->verdict = NT_FAIL;
    if (nf->reason[0]) {
        nf->more++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(nf->reason, sizeof(nf->reason), fmt, ap);
    va_end(ap);
    nf->cause = cause;
}

/* "7/8count" is no unit: units that are words are left out of the figure. */
static const char *nt_fig_unit(const char *unit)
{
    return !unit || strcmp(unit, "count") == 0 ? "" : unit;
}

const char *nt_judge_check_word(const cJSON *c)
{
    const char *t = nt_json_get_str(c, "target", "");
    if (strcmp(nt_json_get_str(c, "name", ""), "inventory") == 0 && *t &&
        strspn(t, "abcdefghijklmnopqrstuvwxyz_") == strlen(t))
        return t;
    return nt_json_get_str(c, "name", "check");
}

/* The NIC firmware versions of a node (its nics[].firmware, distinct, sorted) as one software
 * entry "nic_firmware", so that a node whose NICs run other firmware than the majority is a
 * software_consistency warning like a different driver (docs/design.md "Health verdicts"). */
static int nt_cmp_fw(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void nt_node_nic_firmware(cJSON *node)
{
    cJSON *sw = cJSON_GetObjectItemCaseSensitive(node, "software"), *it;
    char fw[16][64], out[1100] = "";
    int n = 0;

    if (!sw || cJSON_GetObjectItemCaseSensitive(sw, "nic_firmware"))
        return;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(node, "nics")) {
        const char *v = nt_json_get_str(it, "firmware", NULL);
        int dup = 0;
        if (!v || !*v)
            continue;
        for (int k = 0; k < n; k++)
            dup |= strcmp(fw[k], v) == 0;
        if (!dup && n < 16)
            snprintf(fw[n++], sizeof(fw[0]), "%s", v);
    }
    if (n == 0)
        return;
    qsort(fw, (size_t)n, sizeof(fw[0]), nt_cmp_fw);
    for (int k = 0; k < n; k++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", k ? ", " : "", fw[k]);
    nt_json_add_str(sw, "nic_firmware", out);
}

int nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                    const nt_probe_params_t *params)
{
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(doc, "checks");
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    cJSON *summary, *failed_nodes, *failed_links, *warnings, *not_judged, *counts, *it;
    nt_node_verdict_t *nv = NULL;
    nt_nodefail_t *nf = NULL, *nf_grow;
    int nnodes, unstable[2] = {0, 0};
    nt_figs_t fs;
    int cnt[NT_NVERDICTS] = {0}, usage = 0;
    nt_verdict_t overall = NT_PASS;

    (void)p;
    /* Software versions that differ from the majority (kernel, driver, CUDA, NCCL, ...). */
    {
        int nn = cJSON_GetArraySize(nodes), i = 0;
        const cJSON **sw = calloc((size_t)nn + 1, sizeof(*sw));
        const char **hosts = calloc((size_t)nn + 1, sizeof(*hosts));
        if (sw && hosts) {
            cJSON_ArrayForEach (it, nodes) {
                nt_node_nic_firmware(it);
                sw[i] = cJSON_GetObjectItemCaseSensitive(it, "software");
                hosts[i++] = nt_json_get_str(it, "hostname", "?");
            }
            if (nn > 1)
                nt_software_consistency(sw, hosts, nn, j->strict, checks);
        }
        free(sw);
        free(hosts);
    }

    if (nt_figs_build(j, doc, &fs) != NT_OK || !(nv = calloc((size_t)fs.nnodes + 1, sizeof(*nv))) ||
        nt_figs_judge(j, &fs, doc, nv, unstable) != NT_OK) {
        NT_ERROR(VERDICT, "out of memory judging the links");
        usage = 1;
    }
    /* Fold the figures' verdicts back into their links. */
    cJSON_ArrayForEach (it, links) {
        nt_verdict_t v = nt_get_verdict(it);
        if (v == NT_SKIPPED)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(it, "reasons");
        cJSON_DeleteItemFromObjectCaseSensitive(it, "judged_by");
        cJSON_DeleteItemFromObjectCaseSensitive(it, "unconfirmed");
        v = NT_PASS;
        if (cJSON_GetObjectItemCaseSensitive(it, "errors")) {
            const char *by = nt_json_get_str(it, "stopped_by", "error");
            if (strcmp(by, "signal") == 0 || strcmp(by, "peer_timeout") == 0) {
                /* The run stopped early (exit 3 unless something failed): the link is not
                 * judged on a cut measurement. */
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
    }
    for (size_t i = 0; !usage && i < fs.n; i++) {
        cJSON *l = fs.f[i].link;
        nt_verdict_t v = nt_get_verdict(l);
        const nt_vlink_t *x = &fs.v[i];
        if (x->verdict == NT_PASS || x->verdict == NT_SKIPPED)
            continue;
        nt_set_str(l, "verdict", nt_verdict_string(nt_verdict_worse(v, x->verdict)));
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
    }
    /* GPU blame inside each node, and failed GPU links failing their node (lib/gpu_judge.c). */
    if (!usage && checks)
        nt_gpu_judge_report(doc, checks);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "summary");
    summary = nt_json_add_obj(doc, "summary");
    nnodes = cJSON_GetArraySize(nodes);
    nf = calloc((size_t)nnodes + (size_t)j->nsilent + 1, sizeof(*nf));
    if (!summary || !nf) {
        nt_figs_free(&fs);
        free(nv);
        free(nf);
        return NT_EXIT_USAGE;
    }
    for (int i = 0; i < nnodes; i++)
        nf[i].verdict = nv && i < fs.nnodes ? nv[i].verdict : NT_SKIPPED;
    nt_json_add_str(summary, "verdict", "pass");
    /* The verdict covers what was measured; an incomplete run says so next to it (exit 3). */
    nt_json_add_bool(summary, "completed", !stopped_early);
    failed_nodes = nt_json_add_arr(summary, "failed_nodes");
    failed_links = nt_json_add_arr(summary, "failed_links");
    warnings = nt_json_add_arr(summary, "warnings");
    not_judged = nt_json_add_arr(summary, "not_judged");
    if (unstable[0]) {
        char w[300];
        snprintf(w, sizeof(w),
                 "measurements unstable: %d of %d links failed their first measurement and passed "
                 "their retest (a busy or oversubscribed machine?): peer findings are warnings, "
                 "nobody is blamed by peers; rerun on a quiet machine",
                 unstable[0], unstable[1]);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }

    /* Node verdicts, computed here once (every renderer reads nodes[].verdict). A node fails
     * only when it stopped answering, is blamed, has a link of its own (inside the node) that
     * failed its expected figure, or fails a check of its own; a failed or warned link makes
     * it warn. */
    nf_grow = realloc(nf, sizeof(*nf) * ((size_t)nnodes + (size_t)j->nsilent + 1));
    if (!nf_grow) {
        nt_figs_free(&fs);
        free(nv);
        free(nf);
        return NT_EXIT_USAGE;
    }
    nf = nf_grow;
    memset(nf + nnodes, 0, sizeof(*nf) * ((size_t)j->nsilent + 1));
    for (int s = 0; s < j->nsilent; s++) {
        int k = nt_node_index(&fs, j->silent[s].host);
        if (k < 0 || k >= nnodes)
            k = nnodes + s; /* a host without a nodes[] entry still goes to failed_nodes */
        nt_node_fails(&nf[k], "no_answer", "nettune:no_answer %s", j->silent[s].why);
    }
    for (int i = 0; nv && i < fs.nnodes && i < nnodes; i++)
        if (nv[i].blamed)
            nt_node_fails(&nf[i], nv[i].cause ? nv[i].cause : "links", "%s", nv[i].reason);
    for (size_t i = 0; !usage && i < fs.n; i++) {
        const nt_vlink_t *x = &fs.v[i];
        char a[32], b[32];
        /* A link inside the node (a GPU's PCIe or NVLink, a device) that fails its expected
         * hardware figure is the node's own failure; a peer finding alone inside one node
         * (two ranks on one host) stays a link fault: the node warns. */
        if (!nt_vlink_is_link_fault(x) || !(x->fired & NT_FIRED_EXPECTED) || x->src_node < 0 ||
            x->src_node >= nnodes || (x->dst_node >= 0 && x->dst_node != x->src_node))
            continue;
        nt_node_fails(
            &nf[x->src_node], nt_metric_cause(x->metric), "nettune:%s %s/%s%s %s: %s",
            nt_metric_check(x->metric),
            nt_fmt_fig(a, sizeof(a),
                       x->retested && !isnan(x->retest_value) ? x->retest_value : x->value),
            nt_fmt_fig(b, sizeof(b), (x->fired & NT_FIRED_EXPECTED) ? x->expected : x->reference),
            nt_metric_unit(x->metric), nt_json_get_str(fs.f[i].link, "id", "?"), x->reason);
    }
    cJSON_ArrayForEach (it, links) {
        nt_verdict_t v = nt_get_verdict(it);
        const char *ends[2] = {
            nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "src"), "host", ""),
            nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "dst"), "host", "")};
        if (v != NT_FAIL && v != NT_WARN)
            continue;
        for (int e = 0; e < 2; e++) {
            int k = nt_node_index(&fs, ends[e]);
            if (k >= 0 && k < nnodes)
                nf[k].verdict = nt_verdict_worse(nf[k].verdict, NT_WARN);
        }
    }
    cJSON_ArrayForEach (it, checks) {
        nt_verdict_t v = nt_get_verdict(it);
        int k = nt_node_index(&fs, nt_json_get_str(it, "host", ""));
        if (k < 0 || k >= nnodes)
            continue;
        if (v == NT_FAIL) {
            double o = nt_json_get_num(it, "observed", NAN),
                   e = nt_json_get_num(it, "expected", NAN);
            char a[32], b[32];
            if (isfinite(o) || isfinite(e))
                nt_node_fails(&nf[k], "check", "nettune:%s %s/%s%s %s", nt_judge_check_word(it),
                              nt_fmt_fig(a, sizeof(a), o), nt_fmt_fig(b, sizeof(b), e),
                              nt_fig_unit(nt_json_get_str(it, "unit", NULL)),
                              nt_json_get_str(it, "message", ""));
            else
                nt_node_fails(&nf[k], "check", "nettune:%s %s", nt_judge_check_word(it),
                              nt_json_get_str(it, "message", ""));
        } else if (v == NT_NOT_JUDGED && nf[k].verdict == NT_SKIPPED) {
            nf[k].verdict = NT_NOT_JUDGED;
        } else if (v != NT_NOT_JUDGED) {
            nf[k].verdict = nt_verdict_worse(nf[k].verdict, v);
        }
    }
    {
        int i = 0;
        cJSON_ArrayForEach (it, nodes) {
            nt_set_str(it, "verdict", nt_verdict_string(nf[i].verdict));
            i++;
        }
    }
    /* failed_nodes: one entry per failed node, in node order, then hosts without an entry. */
    for (int k = 0; k < nnodes + j->nsilent; k++) {
        cJSON *o;
        if (!nf[k].reason[0])
            continue;
        overall = NT_FAIL;
        o = cJSON_CreateObject();
        if (!o)
            break;
        nt_json_add_str(o, "host",
                        k < nnodes ? nt_json_get_str(cJSON_GetArrayItem(nodes, k), "hostname", "?")
                                   : j->silent[k - nnodes].host);
        nt_json_add_str(o, "reason", nf[k].reason);
        nt_json_add_str(o, "cause", nf[k].cause ? nf[k].cause : "check");
        if (nf[k].more)
            nt_json_add_num(o, "more_reasons", nf[k].more);
        cJSON_AddItemToArray(failed_nodes, o);
    }
    cJSON_ArrayForEach (it, links) {
        nt_verdict_t v = nt_get_verdict(it);
        if (strcmp(nt_json_get_str(it, "stopped_by", ""), "peer_timeout") == 0) {
            char w[600];
            const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "errors"), 0);
            snprintf(w, sizeof(w), "%s: %s (a hung or dead node?)",
                     nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "dst"), "host", "?"),
                     cJSON_IsString(e0) ? e0->valuestring : "stopped answering");
            cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
        }
        cnt[v]++;
        if (v != NT_SKIPPED && v != NT_NOT_JUDGED)
            overall = nt_verdict_worse(overall, v);
        /* A link failing because of a blamed node is not a link fault of its own. */
        if (v == NT_FAIL && !cJSON_GetObjectItemCaseSensitive(it, "blamed_on_node"))
            cJSON_AddItemToArray(failed_links, cJSON_CreateString(nt_json_get_str(it, "id", "")));
        else if (v == NT_WARN) {
            char w[512];
            const cJSON *r0 =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "reasons"), 0);
            snprintf(w, sizeof(w), "%s: %s", nt_json_get_str(it, "id", ""),
                     cJSON_IsString(r0) ? r0->valuestring : "warning");
            cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
        }
        if (v == NT_PASS && !params->samples_all) {
            cJSON_DeleteItemFromObjectCaseSensitive(it, "samples");
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "first"),
                                                    "samples");
        }
    }
    cJSON_ArrayForEach (it, checks) {
        nt_verdict_t v = nt_get_verdict(it);
        const char *host = nt_json_get_str(it, "host", NULL);
        cnt[v]++;
        if (v == NT_NOT_JUDGED) {
            char w[600];
            snprintf(w, sizeof(w), "%s%s%s: %s", host ? host : "", host ? ": " : "",
                     nt_json_get_str(it, "target", ""), nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(not_judged, cJSON_CreateString(w));
            continue;
        }
        if (v == NT_SKIPPED)
            continue;
        overall = nt_verdict_worse(overall, v);
        if (v == NT_WARN) {
            char w[600];
            snprintf(w, sizeof(w), "%s%s%s", host ? host : "", host ? ": " : "",
                     nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
        }
    }
    nt_set_str(summary, "verdict", nt_verdict_string(overall));
    counts = nt_json_add_obj(summary, "counts");
    nt_json_add_num(counts, "pass", cnt[NT_PASS]);
    nt_json_add_num(counts, "warn", cnt[NT_WARN]);
    nt_json_add_num(counts, "fail", cnt[NT_FAIL]);
    nt_json_add_num(counts, "skipped", cnt[NT_SKIPPED]);
    nt_json_add_num(counts, "not_judged", cnt[NT_NOT_JUDGED]);
    nt_figs_free(&fs);
    free(nv);
    free(nf);
    return nt_exit_code(usage, overall == NT_FAIL, stopped_early, overall == NT_WARN,
                        params->strict);
}

/* Whether the report goes to standard output ("-", /dev/stdout, or the file stdout is
 * redirected to): the human summary then goes to stderr, so stdout holds the document alone. */
static int nt_output_is_stdout(const char *output)
{
    struct stat a, b;
    if (strcmp(output, "-") == 0)
        return 1;
    return fstat(STDOUT_FILENO, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

void nt_summary_print(const cJSON *doc, const char *output)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sum, "counts");
    const cJSON *it;
    FILE *f = nt_output_is_stdout(output) ? stderr : stdout;

    fprintf(f, "nettune probe: %s  (%d nodes, %d ranks, %s, %.1f s%s)\n",
            nt_json_get_str(sum, "verdict", "?"), (int)nt_json_get_num(run, "nnodes", 0),
            (int)nt_json_get_num(run, "nranks", 0), nt_json_get_str(run, "mode", "?"),
            nt_json_get_num(run, "duration_s", 0),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "completed")) ? "" : ", INCOMPLETE");
    fprintf(f, "  checks and links: %d pass, %d warn, %d fail, %d skipped\n",
            (int)nt_json_get_num(counts, "pass", 0), (int)nt_json_get_num(counts, "warn", 0),
            (int)nt_json_get_num(counts, "fail", 0), (int)nt_json_get_num(counts, "skipped", 0));
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "failed_nodes"))
        fprintf(f, "  DRAIN %s: %s\n", nt_json_get_str(it, "host", "?"),
                nt_json_get_str(it, "reason", ""));
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "failed_links"))
        fprintf(f, "  failed link %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "warnings"))
        fprintf(f, "  warning: %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "not_judged"))
        fprintf(f, "  not judged: %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(run, "not_done"))
        fprintf(f, "  not done: %s\n", it->valuestring);
    /* Skips are grouped: the same probe and reason on 1,000 nodes is one line. */
    {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes"), *sk;
        int nn = cJSON_GetArraySize(nodes);
        cJSON_ArrayForEach (it, nodes) {
            cJSON_ArrayForEach (sk, cJSON_GetObjectItemCaseSensitive(it, "skipped")) {
                const char *pr = nt_json_get_str(sk, "probe", "?");
                const char *re = nt_json_get_str(sk, "reason", "");
                int first = 1, count = 0;
                const char *firsthost = nt_json_get_str(it, "hostname", "?");
                const cJSON *o, *s2;
                /* Print each (probe, reason) once, at its first node, with a node count. */
                cJSON_ArrayForEach (o, nodes) {
                    cJSON_ArrayForEach (s2, cJSON_GetObjectItemCaseSensitive(o, "skipped")) {
                        if (strcmp(pr, nt_json_get_str(s2, "probe", "")) ||
                            strcmp(re, nt_json_get_str(s2, "reason", "")))
                            continue;
                        if (o == it && s2 == sk && count)
                            first = 0;
                        if (o != it || s2 != sk)
                            count += 1;
                        else if (!count)
                            count = 0;
                    }
                }
                (void)first;
                /* count holds the other nodes' matches; print only on the first node. */
                {
                    int before = 0;
                    cJSON_ArrayForEach (o, nodes) {
                        if (o == it)
                            break;
                        cJSON_ArrayForEach (s2, cJSON_GetObjectItemCaseSensitive(o, "skipped"))
                            if (!strcmp(pr, nt_json_get_str(s2, "probe", "")) &&
                                !strcmp(re, nt_json_get_str(s2, "reason", "")))
                                before = 1;
                    }
                    if (before)
                        continue;
                }
                if (count + 1 == nn && nn > 1)
                    fprintf(f, "  skipped %s on all %d nodes: %s\n", pr, nn, re);
                else if (count)
                    fprintf(f, "  skipped %s on %s and %d other node(s): %s\n", pr, firsthost,
                            count, re);
                else
                    fprintf(f, "  skipped %s on %s: %s\n", pr, firsthost, re);
            }
        }
    }
    fprintf(f, "  report: %s\n", output);
}
