/* Prometheus text exposition (format 0.0.4) for node_exporter's textfile collector, which runs
 * on each node and reads *.prom files from one folder. Base units with the conventional
 * suffixes (bytes per second, seconds), gauges only, no sample timestamps (the collector
 * rejects them), every series of a family together after its HELP and TYPE, and no duplicate
 * series (the collector drops the whole file for one). Verdicts are gauges:
 * 0 pass, 1 warn, 2 fail, -1 skipped, so `> 0` alerts on anything worse than pass. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nettune/log.h"
#include "render_fabric.h"
#include "rpt.h"

/* RFC 3339 UTC "2026-11-29T17:47:34Z" or with a fraction, as seconds since the epoch. */
double nt_rfc3339_seconds(const char *s)
{
    struct tm tm;
    const char *rest;
    double frac = 0;

    if (!s)
        return NAN;
    memset(&tm, 0, sizeof(tm));
    rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return NAN;
    if (*rest == '.') {
        char *end;
        frac = strtod(rest, &end);
        rest = end;
    }
    if (strcmp(rest, "Z") != 0)
        return NAN;
    return (double)timegm(&tm) + frac;
}

/* qsort context: see doc.c. */
static const nt_rdoc_t *nt_prom_doc;

static int nt_cmp_link_src(const void *a, const void *b)
{
    const nt_rlink_t *x = &nt_prom_doc->links[*(const size_t *)a];
    const nt_rlink_t *y = &nt_prom_doc->links[*(const size_t *)b];
    int c = strcmp(x->src_host, y->src_host);
    return c ? c : strcmp(x->id, y->id);
}

static int nt_cmp_check_key(const void *a, const void *b)
{
    const nt_rcheck_t *x = &nt_prom_doc->checks[*(const size_t *)a];
    const nt_rcheck_t *y = &nt_prom_doc->checks[*(const size_t *)b];
    int c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
    if (c)
        return c;
    c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->target, y->target);
}

static int nt_prom_node_wanted(const nt_render_opts_t *o, const char *host)
{
    return !o->node || (host && strcmp(o->node, host) == 0);
}

/* The check table code of a failing or warning series (docs/codes.md) and its category, as
 * its "code" and "category" labels: when on is set and obj carries them, so that an alert rule
 * can route on what to do (drain, reset, config, monitor) without a table of its own. */
static void nt_prom_code(nt_buf_t *out, const cJSON *obj, int on)
{
    const char *code = on ? nt_json_get_str(obj, "code", NULL) : NULL;
    const char *category = code ? nt_json_get_str(obj, "category", NULL) : NULL;
    if (code)
        nt_prom_label(out, 0, "code", code);
    if (category)
        nt_prom_label(out, 0, "category", category);
}

/* The summary.failed_nodes entry of host, NULL when it has none. */
static const cJSON *nt_prom_failed_node(const nt_rdoc_t *doc, const char *host)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc->root, "summary"), *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes"))
        if (strcmp(nt_json_get_str(it, "host", ""), host) == 0)
            return it;
    return NULL;
}

/* The labels of a link's series; verdict: the verdict series (a failing one gets its code). */
static void nt_prom_link_labels(nt_buf_t *out, const nt_rlink_t *l, int verdict)
{
    nt_prom_label(out, 1, "host", l->src_host);
    nt_prom_label(out, 0, "link", l->id);
    nt_prom_label(out, 0, "kind", l->kind);
    nt_prom_label(out, 0, "variant", l->variant);
    nt_prom_label(out, 0, "scope", l->scope);
    nt_prom_label(out, 0, "src_device", l->src_dev);
    nt_prom_label(out, 0, "dst_host", l->dst_host);
    nt_prom_label(out, 0, "dst_device", l->dst_dev);
    nt_prom_code(out, l->j, verdict && (l->verdict == NT_FAIL || l->verdict == NT_WARN));
    nt_buf_puts(out, "}");
}

static void nt_prom_links(const nt_rdoc_t *doc, const nt_render_opts_t *o, const size_t *idx,
                          size_t n, nt_buf_t *out)
{
    static const struct {
        const char *name, *help;
        int what;
    } fam[] = {
        {"nettune_link_bandwidth_bytes_per_second",
         "Peak median bandwidth of the link over its bandwidth message sizes.", 0},
        {"nettune_link_expected_bandwidth_bytes_per_second",
         "Bandwidth the link's hardware should reach (line rate x efficiency).", 1},
        {"nettune_link_latency_seconds",
         "Median one-way latency of the link's smallest message size.", 2},
        {"nettune_link_verdict", "Link verdict: 0 pass, 1 warn, 2 fail, -1 skipped, -2 not judged.", 3},
    };
    for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
        int header = 0;
        for (size_t i = 0; i < n; i++) {
            const nt_rlink_t *l = &doc->links[idx[i]];
            double v = fam[f].what == 0   ? l->peak_bw_GBps * 1e9
                       : fam[f].what == 1 ? l->expected_bw_GBps * 1e9
                       : fam[f].what == 2 ? l->small_msg_lat_us * 1e-6
                                          : nt_prom_verdict(l->verdict);
            if (!nt_prom_node_wanted(o, l->src_host) || isnan(v))
                continue;
            /* Ids are unique in a valid report; a duplicate would void the whole file. */
            if (i && strcmp(doc->links[idx[i - 1]].id, l->id) == 0 &&
                strcmp(doc->links[idx[i - 1]].src_host, l->src_host) == 0)
                continue;
            if (!header++)
                nt_prom_family(out, fam[f].name, fam[f].help);
            nt_buf_puts(out, fam[f].name);
            nt_prom_link_labels(out, l, fam[f].what == 3);
            nt_prom_value(out, v);
        }
    }
}

static void nt_prom_checks(const nt_rdoc_t *doc, const nt_render_opts_t *o, const size_t *idx,
                           size_t n, nt_buf_t *out)
{
    int header = 0;

    for (size_t i = 0; i < n;) {
        const nt_rcheck_t *c = &doc->checks[idx[i]];
        nt_verdict_t v = c->verdict;
        size_t j = i + 1;
        /* Several checks with one key (name, host, target): one series, the worst verdict. */
        const nt_rcheck_t *worst = c; /* its code labels the series */
        while (j < n && nt_cmp_check_key(&idx[i], &idx[j]) == 0) {
            nt_verdict_t w = doc->checks[idx[j]].verdict;
            if (nt_verdict_worse(v, w) != v)
                worst = &doc->checks[idx[j]];
            v = nt_verdict_worse(v, w);
            j++;
        }
        if (c->host && nt_prom_node_wanted(o, c->host)) {
            if (!header++)
                nt_prom_family(out, "nettune_check_verdict",
                               "Check verdict: 0 pass, 1 warn, 2 fail, -1 skipped, -2 not judged.");
            nt_buf_puts(out, "nettune_check_verdict");
            nt_prom_label(out, 1, "host", c->host);
            nt_prom_label(out, 0, "check", c->name);
            nt_prom_label(out, 0, "target", c->target);
            nt_prom_code(out, worst->j, v == NT_FAIL || v == NT_WARN);
            nt_buf_puts(out, "}");
            nt_prom_value(out, nt_prom_verdict(v));
        }
        i = j;
    }
}

static void nt_prom_nodes(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc->root, "run");
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(doc->root, "tool");
    double start = nt_rfc3339_seconds(nt_json_get_str(run, "started_at", NULL));
    double dur = nt_json_get_num(run, "duration_s", NAN);
    double end = start + (isnan(dur) ? 0 : dur);
    static const struct {
        const char *name, *help;
    } fam[] = {
        {"nettune_run_info", "The nettune run these metrics come from (value always 1)."},
        {"nettune_last_run_timestamp_seconds",
         "When the last nettune run ended (run.started_at + run.duration_s), Unix time."},
        {"nettune_run_duration_seconds", "How long the last nettune run took."},
        {"nettune_run_completed", "1 when the last run measured everything it planned, 0 when "
                                  "it stopped early."},
        {"nettune_node_verdict", "Node verdict (nodes[].verdict): 0 pass, 1 warn, 2 fail, -1 skipped, -2 not judged."},
        {"nettune_node_gpus", "GPUs found on the node."},
        {"nettune_node_nic_ports", "RDMA ports found on the node."},
        {"nettune_node_nic_ports_active", "RDMA ports in state ACTIVE."},
    };

    if (isnan(start))
        NT_WARN(REPORT, "'%s': run.started_at is not RFC 3339 UTC: "
                        "nettune_last_run_timestamp_seconds left out", doc->path);
    for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
        int header = 0;
        for (size_t k = 0; k < doc->nnodes; k++) {
            const nt_rnode_t *nd = &doc->nodes[k];
            double v;
            if (!nt_prom_node_wanted(o, nd->host))
                continue;
            switch (f) {
            case 0: v = 1; break;
            case 1: v = end; break;
            case 2: v = dur; break;
            case 3: v = doc->completed; break;
            case 4: v = nt_prom_verdict(nd->verdict); break;
            case 5:
                v = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(nd->j, "gpus")) ? nd->ngpus
                                                                                    : NAN;
                break;
            case 6:
            case 7:
                v = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(nd->j, "nics"))
                        ? (f == 6 ? nd->nnics : nd->nics_active)
                        : NAN;
                break;
            default: v = NAN;
            }
            if (isnan(v))
                continue;
            if (!header++)
                nt_prom_family(out, fam[f].name, fam[f].help);
            nt_buf_puts(out, fam[f].name);
            nt_prom_label(out, 1, "host", nd->host);
            if (f == 0) {
                nt_prom_label(out, 0, "run_id", nt_json_get_str(run, "id", ""));
                nt_prom_label(out, 0, "mode", nt_json_get_str(run, "mode", ""));
                nt_prom_label(out, 0, "version", nt_json_get_str(tool, "version", ""));
            }
            if (f == 4 && nd->verdict == NT_FAIL)
                nt_prom_code(out, nt_prom_failed_node(doc, nd->host), 1);
            nt_buf_puts(out, "}");
            nt_prom_value(out, v);
        }
    }
}

nt_status_t nt_render_prom(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    size_t *li, *ci;

    if (o->node && nt_rdoc_find_node(doc, o->node) < 0)
        return NT_ERR_NOT_FOUND;
    li = malloc((doc->nlinks + 1) * sizeof(*li));
    ci = malloc((doc->nchecks + 1) * sizeof(*ci));
    if (!li || !ci) {
        free(li);
        free(ci);
        return NT_ERR_NOMEM;
    }
    for (size_t i = 0; i < doc->nlinks; i++)
        li[i] = i;
    for (size_t i = 0; i < doc->nchecks; i++)
        ci[i] = i;
    nt_prom_doc = doc;
    /* A run that stopped early says so before any verdict (a comment line; the figure is
     * nettune_run_completed 0). */
    if (!doc->completed)
        nt_buf_puts(out, "# STOPPED EARLY: the run did not finish; its verdicts cover what was "
                         "measured (run.not_done)\n");
    qsort(li, doc->nlinks, sizeof(*li), nt_cmp_link_src);
    qsort(ci, doc->nchecks, sizeof(*ci), nt_cmp_check_key);
    nt_prom_nodes(doc, o, out);
    nt_prom_links(doc, o, li, doc->nlinks, out);
    nt_prom_checks(doc, o, ci, doc->nchecks, out);
    if (!o->node) /* the fabric is no node's: not in a per-node export */
        nt_render_fabric_prom(doc->root, out); /* render_fabric.c */
    nt_prom_doc = NULL;
    free(li);
    free(ci);
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
