/* Reading a report once and indexing it for the renderers, the exporter and diff. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/log.h"
#include "nettune/rdoc.h"

int nt_verdict_rank(nt_verdict_t v)
{
    switch (v) {
    case NT_FAIL: return 0;
    case NT_WARN: return 1;
    case NT_PASS: return 2;
    case NT_NOT_JUDGED: return 3;
    default: return 4;
    }
}

static const char *nt_str(const cJSON *o, const char *key)
{
    return nt_json_get_str(o, key, "");
}

static nt_verdict_t nt_get_verdict(const cJSON *o, const char *key)
{
    nt_verdict_t v = NT_SKIPPED;
    nt_verdict_parse(nt_json_get_str(o, key, NULL), &v);
    return v;
}

static int nt_get_int(const cJSON *o, const char *key)
{
    double d = nt_json_get_num(o, key, -1);
    return d >= 0 && d < 1e9 ? (int)d : -1;
}

/* "gpu3", "mlx5_0:1/gpu3" -> 3; anything else -1. */
static int nt_device_gpu(const char *dev)
{
    const char *p = dev;
    const char *slash = strrchr(dev, '/');
    char *end;
    long i;

    if (slash)
        p = slash + 1;
    if (strncmp(p, "gpu", 3) != 0 || p[3] < '0' || p[3] > '9')
        return -1;
    i = strtol(p + 3, &end, 10);
    /* No node has a thousand GPUs; a larger index is garbage and would size a matrix. */
    return *end == '\0' && i < 1024 ? (int)i : -1;
}

static int nt_cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int nt_rdoc_find_node(const nt_rdoc_t *doc, const char *host)
{
    size_t lo = 0, hi = doc->nnodes;

    if (!host)
        return -1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(doc->nodes[mid].host, host);
        if (c == 0)
            return (int)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static int nt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double nt_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof(*v), nt_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double nt_link_efficiency(const nt_rlink_t *l)
{
    if (isnan(l->peak_bw_GBps) || isnan(l->expected_bw_GBps) || l->expected_bw_GBps <= 0)
        return NAN;
    return l->peak_bw_GBps / l->expected_bw_GBps;
}

/* Every host named anywhere (nodes, links, checks, failed nodes), sorted and unique. */
static nt_status_t nt_rdoc_collect_hosts(nt_rdoc_t *doc)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc->root, "nodes");
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc->root, "summary");
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes");
    const cJSON *it;
    size_t cap = (size_t)cJSON_GetArraySize(nodes) + 2 * doc->nlinks + doc->nchecks +
                 (size_t)cJSON_GetArraySize(failed);
    const char **names = calloc(cap ? cap : 1, sizeof(*names));
    size_t n = 0, u = 0;

    if (!names)
        return NT_ERR_NOMEM;
    cJSON_ArrayForEach(it, nodes) {
        const char *h = nt_json_get_str(it, "hostname", NULL);
        if (h && *h)
            names[n++] = h;
    }
    for (size_t i = 0; i < doc->nlinks; i++) {
        if (*doc->links[i].src_host)
            names[n++] = doc->links[i].src_host;
        if (*doc->links[i].dst_host)
            names[n++] = doc->links[i].dst_host;
    }
    for (size_t i = 0; i < doc->nchecks; i++)
        if (doc->checks[i].host && *doc->checks[i].host)
            names[n++] = doc->checks[i].host;
    cJSON_ArrayForEach(it, failed) {
        const char *h = nt_json_get_str(it, "host", NULL);
        if (h && *h)
            names[n++] = h;
    }
    qsort(names, n, sizeof(*names), nt_cmp_str);
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(names[u - 1], names[i]) != 0)
            names[u++] = names[i];
    doc->nodes = calloc(u ? u : 1, sizeof(*doc->nodes));
    if (!doc->nodes) {
        free(names);
        return NT_ERR_NOMEM;
    }
    for (size_t i = 0; i < u; i++) {
        doc->nodes[i].host = names[i];
        doc->nodes[i].verdict = NT_SKIPPED;
        doc->nodes[i].inter_median_bw = NAN;
        doc->nodes[i].inter_min_bw = NAN;
    }
    doc->nnodes = u;
    free(names);
    for (size_t i = 0; i < u; i++)
        doc->nodes[i].index = -1;
    int pos = 0;
    cJSON_ArrayForEach(it, nodes) {
        int k = nt_rdoc_find_node(doc, nt_json_get_str(it, "hostname", NULL));
        if (k >= 0 && !doc->nodes[k].j) {
            doc->nodes[k].j = it;
            doc->nodes[k].index = pos;
        }
        pos++;
    }
    cJSON_ArrayForEach(it, failed) {
        int k = nt_rdoc_find_node(doc, nt_json_get_str(it, "host", NULL));
        if (k >= 0 && !doc->nodes[k].fail_reason)
            doc->nodes[k].fail_reason = nt_json_get_str(it, "reason", "");
    }
    return NT_OK;
}

static void nt_rlink_fill(nt_rlink_t *l, const cJSON *j)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "src");
    const cJSON *dst = cJSON_GetObjectItemCaseSensitive(j, "dst");
    const char *dot;
    size_t klen;

    l->j = j;
    l->id = nt_str(j, "id");
    l->kind = nt_str(j, "kind");
    l->scope = nt_str(j, "scope");
    /* The id carries the variant: "rdma.write:..." (docs/report.md link ids). */
    klen = strlen(l->kind);
    dot = l->id + klen;
    l->variant[0] = '\0';
    if (nt_json_get_str(j, "variant", NULL)) {
        snprintf(l->variant, sizeof(l->variant), "%s", nt_json_get_str(j, "variant", ""));
    } else if (klen && strncmp(l->id, l->kind, klen) == 0 && *dot == '.') {
        const char *colon = strchr(dot, ':');
        if (colon && (size_t)(colon - dot - 1) < sizeof(l->variant))
            snprintf(l->variant, sizeof(l->variant), "%.*s", (int)(colon - dot - 1), dot + 1);
    }
    l->src_host = nt_str(src, "host");
    l->dst_host = nt_str(dst, "host");
    l->src_dev = nt_str(src, "device");
    l->dst_dev = nt_str(dst, "device");
    l->src_rank = nt_get_int(src, "rank");
    l->dst_rank = nt_get_int(dst, "rank");
    l->src_gpu = nt_device_gpu(l->src_dev);
    l->dst_gpu = nt_device_gpu(l->dst_dev);
    l->peak_bw_GBps = nt_json_get_num(j, "peak_bw_GBps", NAN);
    l->small_msg_lat_us = nt_json_get_num(j, "small_msg_lat_us", NAN);
    l->expected_bw_GBps = nt_json_get_num(j, "expected_bw_GBps", NAN);
    l->verdict = nt_get_verdict(j, "verdict");
    l->unconfirmed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "unconfirmed"));
    l->reasons = cJSON_GetObjectItemCaseSensitive(j, "reasons");
    if (!cJSON_IsArray(l->reasons))
        l->reasons = NULL;
}

/* Per-node medians of inter-node bandwidth over links of doc->inter_kind (either end). */
static nt_status_t nt_rdoc_node_bw(nt_rdoc_t *doc)
{
    size_t *off = calloc(doc->nnodes + 1, sizeof(*off));
    size_t *fill = calloc(doc->nnodes + 1, sizeof(*fill));
    double *vals = NULL;
    nt_status_t st = NT_ERR_NOMEM;

    if (!off || !fill)
        goto out;
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        if (strcmp(l->scope, "inter") != 0 || strcmp(l->kind, doc->inter_kind) != 0 ||
            isnan(l->peak_bw_GBps))
            continue;
        if (l->src_node >= 0)
            off[l->src_node + 1]++;
        if (l->dst_node >= 0 && l->dst_node != l->src_node)
            off[l->dst_node + 1]++;
    }
    for (size_t k = 0; k < doc->nnodes; k++)
        off[k + 1] += off[k];
    vals = malloc((off[doc->nnodes] ? off[doc->nnodes] : 1) * sizeof(*vals));
    if (!vals)
        goto out;
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        if (strcmp(l->scope, "inter") != 0 || strcmp(l->kind, doc->inter_kind) != 0 ||
            isnan(l->peak_bw_GBps))
            continue;
        if (l->src_node >= 0)
            vals[off[l->src_node] + fill[l->src_node]++] = l->peak_bw_GBps;
        if (l->dst_node >= 0 && l->dst_node != l->src_node)
            vals[off[l->dst_node] + fill[l->dst_node]++] = l->peak_bw_GBps;
    }
    for (size_t k = 0; k < doc->nnodes; k++) {
        nt_rnode_t *nd = &doc->nodes[k];
        nd->n_inter = off[k + 1] - off[k];
        nd->inter_median_bw = nt_median(vals + off[k], nd->n_inter);
        nd->inter_min_bw = nd->n_inter ? vals[off[k]] : NAN; /* sorted by nt_median */
    }
    st = NT_OK;
out:
    free(off);
    free(fill);
    free(vals);
    return st;
}

static void nt_rnode_inventory(nt_rnode_t *nd)
{
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(nd->j, "gpus");
    const cJSON *nics = cJSON_GetObjectItemCaseSensitive(nd->j, "nics");
    const cJSON *it;

    nd->ngpus = cJSON_IsArray(gpus) ? cJSON_GetArraySize(gpus) : 0;
    if (nd->ngpus)
        nd->gpu_model = nt_json_get_str(cJSON_GetArrayItem(gpus, 0), "name", NULL);
    nd->cpu_model = nt_json_get_str(cJSON_GetObjectItemCaseSensitive(nd->j, "cpus"), "model", NULL);
    nd->nics = calloc((size_t)cJSON_GetArraySize(nics) + 1, sizeof(*nd->nics));
    cJSON_ArrayForEach(it, nics) {
        if (nd->nics) {
            nt_rnic_t *c = &nd->nics[nd->nnics];
            c->name = nt_str(it, "name");
            c->state = nt_str(it, "state");
            c->link_layer = nt_str(it, "link_layer");
            c->port = nt_get_int(it, "port");
            c->rate_Gbps = nt_json_get_num(it, "rate_Gbps", NAN);
        }
        nd->nnics++;
        nd->nics_active += strcmp(nt_str(it, "state"), "ACTIVE") == 0;
    }
}

static void nt_rdoc_verdicts(nt_rdoc_t *doc)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc->root, "summary");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(summary, "counts");
    nt_verdict_t worst = NT_SKIPPED;
    size_t counted[NT_NVERDICTS] = {0};

    /* The node verdict is the judge's (nodes[].verdict); a node only named elsewhere (a
     * failed_nodes entry without a nodes[] object) is failed when failed_nodes names it. */
    for (size_t k = 0; k < doc->nnodes; k++) {
        nt_rnode_t *nd = &doc->nodes[k];
        nd->verdict = nt_get_verdict(nd->j, "verdict");
        if (!nd->j || !nt_json_get_str(nd->j, "verdict", NULL))
            nd->verdict = nd->fail_reason ? NT_FAIL : NT_SKIPPED;
        nt_rnode_inventory(nd);
    }
    for (size_t i = 0; i < doc->nchecks; i++) {
        const nt_rcheck_t *c = &doc->checks[i];
        counted[c->verdict]++;
        worst = nt_verdict_worse(worst, c->verdict);
        if (c->node < 0)
            continue;
        nt_rnode_t *nd = &doc->nodes[c->node];
        nd->checks_fail += c->verdict == NT_FAIL;
        nd->checks_warn += c->verdict == NT_WARN;
    }
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        int ends[2] = {l->src_node, l->dst_node};
        counted[l->verdict]++;
        worst = nt_verdict_worse(worst, l->verdict);
        for (int e = 0; e < 2; e++) {
            int k = ends[e];
            if (k < 0 || (e == 1 && k == ends[0]))
                continue;
            doc->nodes[k].links_fail += l->verdict == NT_FAIL;
            doc->nodes[k].links_warn += l->verdict == NT_WARN;
            if (doc->nodes[k].ngpus <= l->src_gpu && e == 0 && strcmp(l->scope, "intra") == 0)
                doc->nodes[k].ngpus = l->src_gpu + 1;
            if (doc->nodes[k].ngpus <= l->dst_gpu && e == 0 && strcmp(l->scope, "intra") == 0)
                doc->nodes[k].ngpus = l->dst_gpu + 1;
        }
    }
    for (size_t k = 0; k < doc->nnodes; k++)
        if (doc->nodes[k].fail_reason)
            worst = nt_verdict_worse(worst, NT_FAIL);
    if (nt_verdict_parse(nt_json_get_str(summary, "verdict", NULL), &doc->verdict) != NT_OK)
        doc->verdict = worst == NT_SKIPPED && doc->nlinks + doc->nchecks == 0 ? NT_PASS : worst;
    if (cJSON_IsObject(counts)) {
        static const char *const keys[NT_NVERDICTS] = {"pass", "warn", "fail", "skipped",
                                                       "not_judged"};
        for (int v = 0; v < NT_NVERDICTS; v++) {
            double d = nt_json_get_num(counts, keys[v], -1);
            doc->counts[v] = d >= 0 && d < 1e15 ? (size_t)d : counted[v];
        }
    } else {
        memcpy(doc->counts, counted, sizeof(counted));
    }
    /* A run that judged nothing has the verdict not_judged, not pass (docs/verdicts.md). Probes
     * before that rule wrote "pass" for it (their reports are still read, and two such
     * reports must not render one as PASS and the other as NOTHING JUDGED): the counts
     * decide. */
    if (doc->verdict == NT_PASS && !doc->counts[NT_PASS] && !doc->counts[NT_WARN] &&
        !doc->counts[NT_FAIL])
        doc->verdict = NT_NOT_JUDGED;
}

/* What nt_rdoc_open indexes (one nt_doc_kind each), for the refusals below. Said as what the
 * file is not, rather than as what "this command" reads: the callers want less than the reader
 * takes (doctor --report and the probe's --baseline a report only) and add their own fix. This
 * is the reader's own list, beside the comparisons it sums up, not nettune report's table of
 * schema ids (reports/validate.c): that one lists what nettune report renders and validates, a
 * larger set, and lib/ must not depend on reports/. */
#define NT_RDOC_KINDS                                                                              \
    "a nettune report (" NT_REPORT_SCHEMA ") or tuning file (" NT_TUNING_SCHEMA ")"

/* Why a document is refused: into why when the caller gives a buffer (it prints one line of its
 * own), else logged. */
#define NT_RDOC_REFUSE(...)                                                                        \
    do {                                                                                           \
        if (why && whylen)                                                                         \
            snprintf(why, whylen, __VA_ARGS__);                                                    \
        else                                                                                       \
            NT_ERROR(REPORT, __VA_ARGS__);                                                         \
    } while (0)

nt_status_t nt_rdoc_from_json_why(cJSON *root, const char *path, nt_rdoc_t *doc, char *why,
                                  size_t whylen)
{
    const cJSON *links, *checks, *run, *it;
    nt_status_t st;
    size_t i;

    memset(doc, 0, sizeof(*doc));
    doc->root = root;
    doc->path = path;
    doc->completed = 1;
    doc->inter_kind = "mpi";
    if (!cJSON_IsObject(root)) {
        NT_RDOC_REFUSE("'%s' is not a nettune document: the top level is not an object", path);
        return NT_ERR_INVALID;
    }
    doc->schema = nt_json_get_str(root, "schema", NULL);
    if (!doc->schema) {
        NT_RDOC_REFUSE("'%s' is not a nettune document: it has no \"schema\" key", path);
        return NT_ERR_INVALID;
    }
    if (strcmp(doc->schema, NT_TUNING_SCHEMA) == 0) {
        doc->kind = NT_DOC_TUNING;
        doc->verdict = NT_PASS;
        return NT_OK;
    }
    if (strcmp(doc->schema, NT_DIAGNOSIS_SCHEMA) == 0) {
        NT_RDOC_REFUSE("'%s' is a nettune doctor diagnosis (nettune report FILE renders it), "
                       "not " NT_RDOC_KINDS,
                       path);
        return NT_ERR_INVALID;
    }
    if (strcmp(doc->schema, NT_REPORT_SCHEMA) != 0) {
        NT_RDOC_REFUSE("'%s' has the schema '%s': not " NT_RDOC_KINDS, path, doc->schema);
        return NT_ERR_INVALID;
    }
    doc->kind = NT_DOC_REPORT;
    run = cJSON_GetObjectItemCaseSensitive(root, "run");
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(run, "completed")))
        doc->completed = 0;
    links = cJSON_GetObjectItemCaseSensitive(root, "links");
    checks = cJSON_GetObjectItemCaseSensitive(root, "checks");
    doc->links = calloc((size_t)cJSON_GetArraySize(links) + 1, sizeof(*doc->links));
    doc->checks = calloc((size_t)cJSON_GetArraySize(checks) + 1, sizeof(*doc->checks));
    if (!doc->links || !doc->checks)
        return NT_ERR_NOMEM;
    if (cJSON_IsArray(links)) {
        cJSON_ArrayForEach(it, links) {
            if (!cJSON_IsObject(it))
                continue;
            nt_rlink_fill(&doc->links[doc->nlinks++], it);
        }
    }
    if (cJSON_IsArray(checks)) {
        cJSON_ArrayForEach(it, checks) {
            nt_rcheck_t *c;
            if (!cJSON_IsObject(it))
                continue;
            c = &doc->checks[doc->nchecks++];
            c->j = it;
            c->name = nt_str(it, "name");
            c->host = nt_json_get_str(it, "host", NULL);
            c->target = nt_str(it, "target");
            c->message = nt_str(it, "message");
            c->unit = nt_json_get_str(it, "unit", NULL);
            c->verdict = nt_get_verdict(it, "verdict");
        }
    }
    for (i = 0; i < doc->nlinks; i++)
        if (strcmp(doc->links[i].kind, "rdma") == 0 && strcmp(doc->links[i].scope, "inter") == 0)
            doc->inter_kind = "rdma";
    st = nt_rdoc_collect_hosts(doc);
    if (st != NT_OK)
        return st;
    for (i = 0; i < doc->nlinks; i++) {
        doc->links[i].src_node = nt_rdoc_find_node(doc, doc->links[i].src_host);
        doc->links[i].dst_node = nt_rdoc_find_node(doc, doc->links[i].dst_host);
    }
    for (i = 0; i < doc->nchecks; i++)
        doc->checks[i].node = nt_rdoc_find_node(doc, doc->checks[i].host);
    nt_rdoc_verdicts(doc);
    return nt_rdoc_node_bw(doc);
}

nt_status_t nt_rdoc_from_json(cJSON *root, const char *path, nt_rdoc_t *doc)
{
    return nt_rdoc_from_json_why(root, path, doc, NULL, 0);
}

nt_status_t nt_rdoc_open_why(const char *path, nt_rdoc_t *doc, char *why, size_t whylen)
{
    cJSON *root = NULL;
    nt_status_t st;
    char reason[160];

    memset(doc, 0, sizeof(*doc));
    st = nt_json_read_file_why(path, NT_RDOC_MAX_BYTES, &root, reason, sizeof(reason));
    if (st != NT_OK) {
        if (why && whylen)
            snprintf(why, whylen, "'%s': %s", path, reason);
        else
            NT_ERROR(REPORT, "'%s': %s", path, reason);
        return st;
    }
    return nt_rdoc_from_json_why(root, path, doc, why, whylen);
}

nt_status_t nt_rdoc_open(const char *path, nt_rdoc_t *doc)
{
    return nt_rdoc_open_why(path, doc, NULL, 0);
}

void nt_rdoc_close(nt_rdoc_t *doc)
{
    for (size_t i = 0; doc->nodes && i < doc->nnodes; i++)
        free(doc->nodes[i].nics);
    free(doc->nodes);
    free(doc->links);
    free(doc->checks);
    cJSON_Delete(doc->root);
    memset(doc, 0, sizeof(*doc));
}

/* qsort has no context argument: the comparators read the document through this pointer,
 * set for the duration of one sort (the command is single-threaded). */
static const nt_rdoc_t *nt_sort_doc;

static int nt_cmp_nan_last(double x, double y)
{
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

static int nt_cmp_link(const void *a, const void *b)
{
    const nt_rlink_t *x = &nt_sort_doc->links[*(const size_t *)a];
    const nt_rlink_t *y = &nt_sort_doc->links[*(const size_t *)b];
    int c = nt_verdict_rank(x->verdict) - nt_verdict_rank(y->verdict);
    double ex = nt_link_efficiency(x), ey = nt_link_efficiency(y);

    if (c)
        return c;
    c = nt_cmp_nan_last(ex, ey);
    if (c)
        return c;
    c = nt_cmp_nan_last(x->peak_bw_GBps, y->peak_bw_GBps);
    return c ? c : strcmp(x->id, y->id);
}

static int nt_cmp_check(const void *a, const void *b)
{
    const nt_rcheck_t *x = &nt_sort_doc->checks[*(const size_t *)a];
    const nt_rcheck_t *y = &nt_sort_doc->checks[*(const size_t *)b];
    int c = nt_verdict_rank(x->verdict) - nt_verdict_rank(y->verdict);

    if (c)
        return c;
    c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
    if (c)
        return c;
    c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->target, y->target);
}

static int nt_cmp_node(const void *a, const void *b)
{
    const nt_rnode_t *x = &nt_sort_doc->nodes[*(const size_t *)a];
    const nt_rnode_t *y = &nt_sort_doc->nodes[*(const size_t *)b];
    int c = nt_verdict_rank(x->verdict) - nt_verdict_rank(y->verdict);

    if (c)
        return c;
    c = nt_cmp_nan_last(x->inter_median_bw, y->inter_median_bw);
    return c ? c : strcmp(x->host, y->host);
}

static size_t *nt_sorted(const nt_rdoc_t *doc, size_t total, int only_bad, int what, size_t *n)
{
    size_t *idx = malloc((total ? total : 1) * sizeof(*idx));
    size_t m = 0;

    *n = 0;
    if (!idx)
        return NULL;
    for (size_t i = 0; i < total; i++) {
        nt_verdict_t v = what == 0 ? doc->links[i].verdict
                         : what == 1 ? doc->checks[i].verdict
                                     : doc->nodes[i].verdict;
        if (!only_bad || v == NT_FAIL || v == NT_WARN)
            idx[m++] = i;
    }
    nt_sort_doc = doc;
    qsort(idx, m, sizeof(*idx), what == 0 ? nt_cmp_link : what == 1 ? nt_cmp_check : nt_cmp_node);
    nt_sort_doc = NULL;
    *n = m;
    return idx;
}

size_t *nt_rdoc_sorted_links(const nt_rdoc_t *doc, int only_bad, size_t *n)
{
    return nt_sorted(doc, doc->nlinks, only_bad, 0, n);
}

size_t *nt_rdoc_sorted_checks(const nt_rdoc_t *doc, int only_bad, size_t *n)
{
    return nt_sorted(doc, doc->nchecks, only_bad, 1, n);
}

size_t *nt_rdoc_sorted_nodes(const nt_rdoc_t *doc, size_t *n)
{
    return nt_sorted(doc, doc->nnodes, 0, 2, n);
}

static int nt_cmp_kind(const void *a, const void *b)
{
    const nt_kind_stats_t *x = a, *y = b;
    int c = strcmp(x->scope, y->scope); /* "inter" before "intra" */
    return c ? c : strcmp(x->label, y->label);
}

nt_status_t nt_rdoc_kind_stats(const nt_rdoc_t *doc, nt_kind_stats_t **out, size_t *n)
{
    nt_kind_stats_t *ks = calloc(doc->nlinks + 1, sizeof(*ks));
    double *bw = malloc((doc->nlinks + 1) * sizeof(*bw));
    double *ex = malloc((doc->nlinks + 1) * sizeof(*ex));
    double *ef = malloc((doc->nlinks + 1) * sizeof(*ef));
    double *la = malloc((doc->nlinks + 1) * sizeof(*la));
    size_t nk = 0;

    *out = NULL;
    *n = 0;
    if (!ks || !bw || !ex || !ef || !la) {
        free(ks), free(bw), free(ex), free(ef), free(la);
        return NT_ERR_NOMEM;
    }
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        char label[48];
        size_t k;
        snprintf(label, sizeof(label), "%s%s%s", l->kind, *l->variant ? "." : "", l->variant);
        for (k = 0; k < nk; k++)
            if (strcmp(ks[k].label, label) == 0 && strcmp(ks[k].scope, l->scope) == 0)
                break;
        if (k == nk) {
            snprintf(ks[nk].label, sizeof(ks[nk].label), "%s", label);
            ks[nk].kind = l->kind;
            ks[nk].scope = l->scope;
            nk++;
        }
        ks[k].n++;
        ks[k].by_verdict[l->verdict]++;
    }
    for (size_t k = 0; k < nk; k++) {
        nt_kind_stats_t *s = &ks[k];
        size_t nb = 0, ne = 0, nf = 0, nl = 0;
        for (size_t i = 0; i < doc->nlinks; i++) {
            const nt_rlink_t *l = &doc->links[i];
            char label[48];
            double e;
            snprintf(label, sizeof(label), "%s%s%s", l->kind, *l->variant ? "." : "",
                     l->variant);
            if (strcmp(label, s->label) != 0 || strcmp(l->scope, s->scope) != 0)
                continue;
            if (!isnan(l->peak_bw_GBps))
                bw[nb++] = l->peak_bw_GBps;
            if (!isnan(l->expected_bw_GBps))
                ex[ne++] = l->expected_bw_GBps;
            if (!isnan(l->small_msg_lat_us))
                la[nl++] = l->small_msg_lat_us;
            e = nt_link_efficiency(l);
            if (!isnan(e))
                ef[nf++] = e;
        }
        s->n_bw = nb;
        s->n_exp = ne;
        s->n_lat = nl;
        s->bw_med = nt_median(bw, nb);
        s->bw_min = nb ? bw[0] : NAN;
        s->bw_max = nb ? bw[nb - 1] : NAN;
        s->exp_med = nt_median(ex, ne);
        s->eff_med = nt_median(ef, nf);
        s->eff_min = nf ? ef[0] : NAN;
        s->lat_med = nt_median(la, nl);
    }
    qsort(ks, nk, sizeof(*ks), nt_cmp_kind);
    free(bw), free(ex), free(ef), free(la);
    *out = ks;
    *n = nk;
    return NT_OK;
}

static int nt_cmp_skip(const void *a, const void *b)
{
    const nt_skip_group_t *x = a, *y = b;
    if (x->nnodes != y->nnodes)
        return x->nnodes > y->nnodes ? -1 : 1;
    int c = strcmp(x->probe, y->probe);
    return c ? c : strcmp(x->reason, y->reason);
}

nt_status_t nt_rdoc_skip_groups(const nt_rdoc_t *doc, nt_skip_group_t **out, size_t *n)
{
    size_t cap = 16, ng = 0;
    nt_skip_group_t *g = malloc(cap * sizeof(*g));

    *out = NULL;
    *n = 0;
    if (!g)
        return NT_ERR_NOMEM;
    for (size_t k = 0; k < doc->nnodes; k++) {
        const cJSON *sk = cJSON_GetObjectItemCaseSensitive(doc->nodes[k].j, "skipped"), *it;
        cJSON_ArrayForEach(it, sk) {
            const char *probe = nt_str(it, "probe"), *reason = nt_str(it, "reason");
            size_t i;
            for (i = 0; i < ng; i++)
                if (strcmp(g[i].probe, probe) == 0 && strcmp(g[i].reason, reason) == 0)
                    break;
            if (i == ng) {
                if (ng == cap) {
                    nt_skip_group_t *ng2 = realloc(g, 2 * cap * sizeof(*g));
                    if (!ng2) {
                        free(g);
                        return NT_ERR_NOMEM;
                    }
                    g = ng2;
                    cap *= 2;
                }
                g[ng].probe = probe;
                g[ng].reason = reason;
                g[ng].nnodes = 0;
                g[ng].first_host = doc->nodes[k].host;
                ng++;
            }
            g[i].nnodes++;
        }
    }
    qsort(g, ng, sizeof(*g), nt_cmp_skip);
    *out = g;
    *n = ng;
    return NT_OK;
}
