/* Verdicts for the report (see judge.h), on the engine of lib/verdict.c and the rules of
 * lib/thresholds.c. One nt_vlink_t per (link, message size, metric): a bandwidth sample gives a
 * bandwidth figure (its p50), a latency sample a latency figure (its p50). The link's verdict
 * is the worst of its figures' verdicts, with every reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"
#include "nettune/verdict.h"

struct nt_judge {
    nt_thresholds_t *thresholds;
    nt_expect_t expect_override; /* --expect */
    unsigned require;            /* --require */
    int strict;
    /* Hosts that stopped answering (nt_judge_node_silent), with why. */
    struct nt_silent {
        char host[NT_HOST_MAX];
        char why[256];
    } * silent;
    int nsilent;
};

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
    free(j);
}

void nt_judge_node_silent(nt_judge_t *j, const char *host, const char *why)
{
    struct nt_silent *v;
    if (!j || !host)
        return;
    for (int i = 0; i < j->nsilent; i++)
        if (strcmp(j->silent[i].host, host) == 0)
            return;
    v = realloc(j->silent, (size_t)(j->nsilent + 1) * sizeof(*v));
    if (!v)
        return;
    j->silent = v;
    snprintf(v[j->nsilent].host, sizeof(v->host), "%s", host);
    snprintf(v[j->nsilent].why, sizeof(v->why), "%s", why ? why : "stopped answering");
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
    int active = 0;
    double min_rate = NAN;

    nt_rules_for(j, host, node_json, &r);
    cJSON_ArrayForEach (it, nics) {
        if (strcmp(nt_json_get_str(it, "state", ""), "ACTIVE") != 0)
            continue;
        double rate = nt_json_get_num(it, "rate_Gbps", NAN);
        active++;
        if (isfinite(rate) && (!isfinite(min_rate) || rate < min_rate))
            min_rate = rate;
    }
    nt_inventory_check(&r.expect, j->require, cJSON_GetArraySize(gpus), active, min_rate, host,
                       checks);
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
                        "inventory", host, label, NT_SKIPPED, NAN, NAN, NULL,
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

/* The figure of a sample list at (metric, bytes): the p50, NaN when absent. */
static double nt_sample_value(const cJSON *samples, int metric, size_t bytes)
{
    const cJSON *s;
    cJSON_ArrayForEach (s, samples) {
        if ((size_t)nt_json_get_num(s, "bytes", -1) != bytes)
            continue;
        const cJSON *st =
            cJSON_GetObjectItemCaseSensitive(s, metric == NT_METRIC_BW ? "bw_GBps" : "lat_us");
        if (st)
            return nt_json_get_num(st, "p50", NAN);
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
        const cJSON *retest = cJSON_GetObjectItemCaseSensitive(l, "retest");
        const cJSON *s;

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
        cJSON_ArrayForEach (s, cJSON_GetObjectItemCaseSensitive(l, "samples")) {
            size_t bytes = (size_t)nt_json_get_num(s, "bytes", 0);
            const cJSON *bw = cJSON_GetObjectItemCaseSensitive(s, "bw_GBps");
            const cJSON *lat = cJSON_GetObjectItemCaseSensitive(s, "lat_us");
            /* Only the peak size is held to the expected bandwidth: line rate needs large
             * messages; smaller sizes are judged against their peers only. The latency limit
             * holds for the smallest size (small_msg_lat_bytes). */
            int peak = (size_t)nt_json_get_num(l, "peak_bw_bytes", -1) == bytes;
            int small = (size_t)nt_json_get_num(l, "small_msg_lat_bytes", -1) == bytes;
            if (bw && nt_figs_push(fs, l, NT_METRIC_BW, bytes, nt_json_get_num(bw, "p50", NAN),
                                   peak ? exp_bw : NAN, sn, dn))
                return NT_ERR_NOMEM;
            if (lat && nt_figs_push(fs, l, NT_METRIC_LAT, bytes, nt_json_get_num(lat, "p50", NAN),
                                    small ? exp_lat : NAN, sn, dn))
                return NT_ERR_NOMEM;
            if (retest && (bw || lat)) {
                nt_vlink_t *last = &fs->v[fs->n - 1];
                const cJSON *rs = cJSON_GetObjectItemCaseSensitive(retest, "samples");
                for (int b = 0; b < (bw && lat ? 2 : 1); b++) {
                    nt_vlink_t *x = last - b;
                    x->retested = 1;
                    x->retest_value = nt_sample_value(rs, x->metric, bytes);
                }
            }
        }
    }
    return NT_OK;
}

static nt_status_t nt_figs_judge(const nt_judge_t *j, nt_figs_t *fs, nt_node_verdict_t *nv)
{
    nt_peer_rules_t peer;
    nt_thresholds_peer_for_run(j->thresholds, (const char *const *)fs->hosts, fs->models,
                               fs->nnodes, &peer);
    for (int i = 0; nv && i < fs->nnodes; i++)
        nv[i].host = fs->hosts[i];
    return nt_verdict_judge(fs->v, fs->n, fs->nnodes, &peer, nv);
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
        st = nt_figs_judge(j, &fs, NULL);
    if (st != NT_OK || fs.n == 0)
        goto out;
    idx = malloc(fs.n * sizeof(*idx));
    *pairs = calloc(fs.n, sizeof(**pairs));
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

void nt_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links)
{
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    const cJSON *r;

    (void)j;
    cJSON_ArrayForEach (r, retest_links) {
        const char *id = nt_json_get_str(r, "id", NULL);
        cJSON *l, *rt;
        if (!id)
            continue;
        cJSON_ArrayForEach (l, links) {
            if (strcmp(nt_json_get_str(l, "id", ""), id) != 0)
                continue;
            rt = cJSON_CreateObject();
            if (!rt)
                return;
            nt_json_add_num(rt, "peak_bw_GBps", nt_json_get_num(r, "peak_bw_GBps", NAN));
            nt_json_add_num(rt, "small_msg_lat_us", nt_json_get_num(r, "small_msg_lat_us", NAN));
            cJSON_AddItemToObject(
                rt, "samples", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r, "samples"), 1));
            if (cJSON_GetObjectItemCaseSensitive(r, "errors"))
                cJSON_AddItemToObject(
                    rt, "errors",
                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r, "errors"), 1));
            cJSON_DeleteItemFromObjectCaseSensitive(l, "retest");
            cJSON_AddItemToObject(l, "retest", rt);
            break;
        }
    }
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

/* failed_nodes: one entry per host, with its first reason (and how many more). */
static void nt_failed_node(cJSON *failed_nodes, const char *host, const char *reason)
{
    cJSON *it;
    cJSON_ArrayForEach (it, failed_nodes) {
        if (strcmp(nt_json_get_str(it, "host", ""), host) == 0) {
            int more = (int)nt_json_get_num(it, "more_reasons", 0) + 1;
            cJSON_DeleteItemFromObjectCaseSensitive(it, "more_reasons");
            nt_json_add_num(it, "more_reasons", more);
            return;
        }
    }
    it = cJSON_CreateObject();
    if (!it)
        return;
    nt_json_add_str(it, "host", host);
    nt_json_add_str(it, "reason", reason);
    cJSON_AddItemToArray(failed_nodes, it);
}

/* The NIC firmware versions of a node (its nics[].firmware, distinct, sorted) as one software
 * entry "nic_firmware", so that a node whose NICs run other firmware than the majority is a
 * software_consistency warning like a different driver (DESIGN.md "Health verdicts"). */
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
    cJSON *summary, *failed_nodes, *failed_links, *warnings, *counts, *it;
    nt_node_verdict_t *nv = NULL;
    nt_figs_t fs;
    int cnt[4] = {0}, usage = 0;
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
        nt_figs_judge(j, &fs, nv) != NT_OK) {
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
    if (!summary) {
        nt_figs_free(&fs);
        free(nv);
        return NT_EXIT_USAGE;
    }
    nt_json_add_str(summary, "verdict", "pass");
    /* The verdict covers what was measured; an incomplete run says so next to it (exit 3). */
    nt_json_add_bool(summary, "completed", !stopped_early);
    failed_nodes = nt_json_add_arr(summary, "failed_nodes");
    failed_links = nt_json_add_arr(summary, "failed_links");
    warnings = nt_json_add_arr(summary, "warnings");
    /* A node that stopped answering is a failure found (a hung or dead node): first. */
    for (int i = 0; i < j->nsilent; i++) {
        char reason[320];
        cJSON *fn;
        snprintf(reason, sizeof(reason), "nettune:no_answer %s", j->silent[i].why);
        nt_failed_node(failed_nodes, j->silent[i].host, reason);
        fn = cJSON_GetArrayItem(failed_nodes, cJSON_GetArraySize(failed_nodes) - 1);
        if (fn && strcmp(nt_json_get_str(fn, "host", ""), j->silent[i].host) == 0 &&
            !cJSON_GetObjectItemCaseSensitive(fn, "cause"))
            nt_json_add_str(fn, "cause", "no_answer");
        overall = NT_FAIL;
    }
    /* Blamed nodes first: a node that fails with most of its partners is the finding. */
    for (int i = 0; nv && i < fs.nnodes; i++) {
        if (nv[i].blamed) {
            nt_failed_node(failed_nodes, fs.hosts[i], nv[i].reason);
            overall = NT_FAIL;
        }
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
        if (v != NT_SKIPPED)
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
        if (v == NT_PASS && !params->samples_all)
            cJSON_DeleteItemFromObjectCaseSensitive(it, "samples");
    }
    cJSON_ArrayForEach (it, checks) {
        nt_verdict_t v = nt_get_verdict(it);
        const char *host = nt_json_get_str(it, "host", NULL);
        cnt[v]++;
        if (v == NT_SKIPPED)
            continue;
        overall = nt_verdict_worse(overall, v);
        if (v == NT_FAIL && host) {
            char reason[600];
            snprintf(reason, sizeof(reason), "%s: %s", nt_json_get_str(it, "name", "check"),
                     nt_json_get_str(it, "message", ""));
            nt_failed_node(failed_nodes, host, reason);
        } else if (v == NT_WARN) {
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
    nt_figs_free(&fs);
    free(nv);
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
