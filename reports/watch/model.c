/* nettune watch --report: a communicator's busbw against what the pre-job probe report's
 * measured links give, through the tuner's model of NCCL's cost model (tuner/model.h).
 *
 * The model's input is the tuner's own (nt_tune_model_input: the report's inventory through
 * NCCL's search rules); the measured part is the report's inter-node RDMA links between the
 * communicator's hosts: the slowest of them, as a share of the NIC line rate the inferred
 * graphs assume, scales the graphs' inter-node bandwidth (a ring runs at its slowest link).
 * The prediction is NCCL's own choice: the cheapest eligible algorithm and protocol for the
 * call's bytes (ncclTopoGetAlgoTime, tuning.cc), no faster than the measured links carry the
 * bytes each node must move (nt_model_cut_us), its time turned into busbw with the factors
 * Inspector uses (v2.30.7-1 plugins/profiler/inspector/inspector.cc:1450-1491). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/checks.h"
#include "nettune/nccllog.h"
#include "nettune/report.h"
#include "tuner/tune.h"
#include "watch.h"

/* The rule of evidence: at least this many calls of a collective and size, and their median
 * busbw below this share of the prediction. */
static const struct {
    int min_calls;
    double max_ratio;
} nt_model_rules = {8, 0.70};

struct nt_watch_model {
    nt_tune_t *t;       /* the tuner's context: only its report and version are set */
    const char *path;   /* --report as given */
    char why_none[256]; /* why nothing can be judged with this report ("" when it can) */
};

/* The NCCL version the report's nodes name (software.nccl), when the model has it. */
static int nt_watch_model_version(const nt_rdoc_t *r, char *why, size_t len)
{
    for (size_t i = 0; i < r->nnodes; i++) {
        const cJSON *sw = cJSON_GetObjectItemCaseSensitive(r->nodes[i].j, "software");
        const char *s = nt_json_get_str(sw, "nccl", NULL);
        int v = s ? nt_nccllog_version_parse(s) : 0;
        if (v > 0 && nt_model_version_supported(v))
            return v;
        if (v > 0) {
            snprintf(why, len, "the report's NCCL %s is not modelled (docs/tuner-model.md)", s);
            return 0;
        }
    }
    snprintf(why, len, "the report names no NCCL version (nodes[].software.nccl)");
    return 0;
}

nt_watch_model_t *nt_watch_model_open(const char *path, char *err, size_t errlen)
{
    nt_watch_model_t *m = calloc(1, sizeof(*m));
    err[0] = '\0';
    if (!m || !(m->t = calloc(1, sizeof(*m->t)))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    m->path = path;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read --report '%s': %s: give the job's nettune probe report",
                 path, strerror(errno));
        goto fail;
    }
    fclose(f);
    /* A file that does not parse is named by the reader's own line: err stays empty. */
    nt_status_t st = nt_rdoc_open(path, &m->t->report);
    if (st != NT_OK)
        goto fail;
    if (m->t->report.kind != NT_DOC_REPORT) {
        snprintf(err, errlen, "--report '%s' is a %s, not a nettune probe report (nettune.report/1)",
                 path, m->t->report.schema ? m->t->report.schema : "document");
        nt_rdoc_close(&m->t->report);
        goto fail;
    }
    m->t->have_report = 1;
    m->t->p.cpu_vendor = -1;
    m->t->p.quiet = 1;
    m->t->target_version = nt_watch_model_version(&m->t->report, m->why_none, sizeof(m->why_none));
    m->t->version_label = NT_FACT_MEASURED;
    if (m->t->target_version)
        m->why_none[0] = '\0';
    return m;
fail:
    if (m)
        free(m->t);
    free(m);
    return NULL;
}

void nt_watch_model_close(nt_watch_model_t *m)
{
    if (!m)
        return;
    if (m->t->have_report)
        nt_rdoc_close(&m->t->report);
    free(m->t);
    free(m);
}

static int nt_model_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The communicator's hosts (distinct, in rank order) into hosts; their count, or -1 when a
 * rank has no record (the shape is then unknown). The ranks per node, or 0 when they differ. */
static int nt_model_hosts(const nt_jobcomm_t *c, const char **hosts, int *ppn)
{
    int n = 0;
    for (int i = 0; i < c->nranks; i++) {
        if (!c->ranks[i].seen)
            return -1;
        int k = 0;
        while (k < n && strcmp(hosts[k], c->ranks[i].host) != 0)
            k++;
        if (k == n)
            hosts[n++] = c->ranks[i].host;
    }
    *ppn = n && c->nranks % n == 0 ? c->nranks / n : 0;
    for (int k = 0; k < n && *ppn; k++) {
        int on = 0;
        for (int i = 0; i < c->nranks; i++)
            on += strcmp(hosts[k], c->ranks[i].host) == 0;
        if (on != *ppn)
            *ppn = 0;
    }
    return n;
}

static int nt_model_in(const char *h, const char **hosts, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(h, hosts[k]) == 0)
            return 1;
    return 0;
}

/* The slowest measured inter-node RDMA link between two of the hosts (GB/s), and the NIC line
 * rate the inferred graphs assume: the slowest ACTIVE port of those hosts / 8 (GB/s). NaN when
 * there is none. */
static void nt_model_links(const nt_rdoc_t *r, const char **hosts, int n, double *measured,
                           double *nominal, int *nlinks, int *nics)
{
    *measured = *nominal = NAN;
    *nlinks = 0;
    *nics = 0;
    for (size_t i = 0; i < r->nlinks; i++) {
        const nt_rlink_t *l = &r->links[i];
        if (strcmp(l->kind, "rdma") != 0 || !l->scope || strcmp(l->scope, "inter") != 0 ||
            !isfinite(l->peak_bw_GBps) || !nt_model_in(l->src_host, hosts, n) ||
            !nt_model_in(l->dst_host, hosts, n))
            continue;
        (*nlinks)++;
        if (!(l->peak_bw_GBps >= *measured))
            *measured = l->peak_bw_GBps;
    }
    for (size_t i = 0; i < r->nnodes; i++) {
        const nt_rnode_t *nd = &r->nodes[i];
        if (!nt_model_in(nd->host, hosts, n))
            continue;
        int active = 0;
        for (int k = 0; k < nd->nnics && nd->nics; k++)
            if (strcmp(nd->nics[k].state, "ACTIVE") == 0 && isfinite(nd->nics[k].rate_Gbps)) {
                active++;
                if (!(nd->nics[k].rate_Gbps / 8 >= *nominal))
                    *nominal = nd->nics[k].rate_Gbps / 8;
            }
        if (!*nics || active < *nics)
            *nics = active;
    }
}

/* busbw from NCCL's time for `bytes` of traffic (NCCL's nBytes: Inspector's message size, times
 * the ranks for AllGather and ReduceScatter), with Inspector's factors. */
static double nt_model_busbw(nt_coll_t coll, int nranks, double traffic, double time_us)
{
    double algbw = traffic / (time_us * 1e-6) / 1e9;
    switch (coll) {
    case NT_COLL_ALLREDUCE: return algbw * 2.0 * (nranks - 1) / nranks;
    case NT_COLL_ALLGATHER:
    case NT_COLL_REDUCESCATTER: return algbw * (nranks - 1) / nranks;
    default: return algbw;
    }
}

/* The least time the network allows: the bytes each node must move across it, at its NICs'
 * measured bandwidth (node_GBps: the slowest measured link times the ACTIVE ports of the
 * least-equipped host). Per node, AllReduce moves 2 (nnodes - 1) / nnodes of the message in and
 * out, AllGather and ReduceScatter (nnodes - 1) / nnodes of the whole traffic, Broadcast and
 * Reduce the message once (the bandwidth-optimal algorithms: Patarasuk and Yuan, "Bandwidth
 * optimal all-reduce algorithms for clusters of workstations", JPDC 69(2), 2009). In us. */
static double nt_model_cut_us(nt_coll_t coll, int nnodes, double traffic, double node_GBps)
{
    double share = coll == NT_COLL_ALLREDUCE ? 2.0 * (nnodes - 1) / nnodes
                   : coll == NT_COLL_ALLGATHER || coll == NT_COLL_REDUCESCATTER
                       ? (double)(nnodes - 1) / nnodes
                       : 1.0;
    return traffic * share / (node_GBps * 1e9) * 1e6;
}

/* One collective and size of a communicator: its median busbw against the prediction. */
static int nt_model_series(const nt_watch_model_t *m, const nt_jobcomm_t *c,
                           const nt_model_input_t *in, const nt_model_table_t *tab,
                           const char *op, double bytes, const double *bw, int n, double scale,
                           double node_GBps, const char *links_note, cJSON *findings, cJSON *nj,
                           nt_watch_outcome_t *out)
{
    int coll = nt_model_coll_parse(op);
    char size[32];
    nt_bytes_str(size, sizeof(size), isfinite(bytes) && bytes > 0 ? (unsigned long long)bytes : 0);
    if (coll < 0 || !isfinite(bytes) || bytes <= 0)
        return nt_watch_not_judged_add(nj, "watch_below_model", c->id, "%s of %s: not a collective the model has (Broadcast, "
                                      "Reduce, AllGather, ReduceScatter, AllReduce)",
                           op, size);
    if (n < nt_model_rules.min_calls)
        return nt_watch_not_judged_add(nj, "watch_below_model", c->id, "%s of %s: %d call(s) with a busbw, at least %d are needed",
                           op, size, n, nt_model_rules.min_calls);
    double traffic = bytes * (coll == NT_COLL_ALLGATHER || coll == NT_COLL_REDUCESCATTER ? c->nranks : 1);
    double best = -1;
    int ba = -1, bp = -1;
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        for (int p = 0; p < NT_NUM_PROTOS; p++) {
            if (!nt_model_eligible(in, tab, coll, a, p, NT_DTYPE_FLOAT32,
                                   coll == NT_COLL_ALLGATHER || coll == NT_COLL_BROADCAST
                                       ? NT_REDOP_NONE
                                       : NT_REDOP_SUM))
                continue;
            double t = nt_model_time_us(in, tab, coll, a, p, (size_t)traffic, 1, NULL);
            if (t > 0 && (best < 0 || t < best)) {
                best = t;
                ba = a;
                bp = p;
            }
        }
    if (best <= 0)
        return nt_watch_not_judged_add(nj, "watch_below_model", c->id, "%s of %s: the model offers no algorithm for shape %dx%d",
                           op, size, in->nnodes, in->ppn);
    /* NCCL's model knows the links only through its graphs; the measured links bound it. */
    double model_us = best, cut_us = nt_model_cut_us(coll, in->nnodes, traffic, node_GBps);
    if (cut_us > best)
        best = cut_us;
    double predicted = nt_model_busbw(coll, c->nranks, traffic, best);
    double *s = malloc((size_t)n * sizeof(*s));
    if (!s)
        return -1;
    memcpy(s, bw, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), nt_model_cmp_double);
    double observed = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    double ratio = observed / predicted;
    if (ratio >= nt_model_rules.max_ratio)
        return 0;
    char verdict[512], reason[768], pct[32];
    snprintf(verdict, sizeof(verdict),
             "%s of %s in comm %s runs at %s%% of what its measured links give (busbw %.1f of "
             "%.1f GB/s)",
             op, size, c->id,
             nt_watch_fmt_vs(pct, sizeof(pct), ratio * 100, nt_model_rules.max_ratio * 100, 0),
             observed, predicted);
    snprintf(reason, sizeof(reason),
             "median busbw of %d call(s) against the tuner's model of NCCL %d.%d.%d for shape "
             "%dx%d (NCCL's choice %s/%s, %.1f us), bounded by the measured links (%.1f GB/s per "
             "node across the network: %.1f us), on the links of %s: %s (inter-node bandwidth "
             "x%.2f); below %.0f%% is a finding",
             n, in->version / 10000, in->version / 100 % 100, in->version % 100, in->nnodes,
             in->ppn, nt_model_algo_name(ba), nt_model_proto_name(bp), model_us, node_GBps,
             cut_us, m->path, links_note, scale, nt_model_rules.max_ratio * 100);
    nt_watch_who_t who = {c->id, c->name, "", -1, -1};
    cJSON *f = nt_watch_finding_add(findings, "NT-JOB-206", "warn", who, verdict, reason);
    if (!f || !cJSON_AddStringToObject(f, "coll", op) || !cJSON_AddNumberToObject(f, "bytes", bytes) ||
        !cJSON_AddNumberToObject(f, "calls_judged", n) ||
        !cJSON_AddNumberToObject(f, "expected_busbw_GBps", predicted) ||
        !cJSON_AddNumberToObject(f, "observed_busbw_GBps", observed) ||
        !cJSON_AddNumberToObject(f, "ratio", ratio) ||
        !cJSON_AddStringToObject(f, "algo", nt_model_algo_name(ba)) ||
        !cJSON_AddStringToObject(f, "proto", nt_model_proto_name(bp)))
        return -1;
    out->warn++;
    return 0;
}

/* One communicator: its shape, its links, then each collective and size of the window. */
static int nt_model_comm(const nt_watch_model_t *m, const nt_jobcomm_t *c, cJSON *findings,
                         cJSON *nj, nt_watch_outcome_t *out)
{
    const nt_rdoc_t *r = &m->t->report;
    const char **hosts = calloc((size_t)c->nranks + 1, sizeof(*hosts));
    double *bw = NULL;
    char *done = NULL;
    int rc = 0, ppn = 0, nnodes;
    if (!hosts)
        return -1;
    nnodes = nt_model_hosts(c, hosts, &ppn);
    if (nnodes < 0) {
        rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "ranks without a record: the communicator's shape (nodes x "
                                    "ranks per node) is unknown");
        goto out;
    }
    if (!ppn) {
        rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "%d ranks on %d hosts, not the same number on each: the "
                                    "model takes one shape",
                         c->nranks, nnodes);
        goto out;
    }
    for (int k = 0; k < nnodes; k++)
        if (nt_rdoc_find_node(r, hosts[k]) < 0) {
            rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "host '%s' is not in the report %s: its links were not "
                                        "measured",
                             hosts[k], m->path);
            goto out;
        }
    if (nnodes < 2) {
        rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "one node (%s): the report measures links between nodes, "
                                    "not the NVLink or PCIe paths inside one",
                         hosts[0]);
        goto out;
    }
    double measured, nominal;
    int nlinks, nics;
    nt_model_links(r, hosts, nnodes, &measured, &nominal, &nlinks, &nics);
    if (!nlinks || !isfinite(nominal) || !nics) {
        rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "%s between the communicator's %d hosts",
                         nlinks ? "no ACTIVE RDMA port with a rate"
                                : "the report measured no inter-node RDMA link",
                         nnodes);
        goto out;
    }
    double scale = measured < nominal ? measured / nominal : 1.0;
    char note[160];
    snprintf(note, sizeof(note), "the slowest of %d measured RDMA link(s) %.1f GB/s, NICs %.1f GB/s",
             nlinks, measured, nominal);
    nt_tune_shape_t sh = {nnodes, ppn, c->nranks};
    nt_model_input_t in;
    nt_model_table_t tab;
    if (nt_tune_model_input(m->t, &sh, &in, NULL, 0) != NT_OK) {
        rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "the model takes no input for shape %dx%d", nnodes, ppn);
        goto out;
    }
    for (int a = 0; a < NT_NUM_ALGOS; a++) {
        in.graph[a].bw_inter_GBps *= scale;
        in.graph[a].label[NT_GF_BW_INTER] = NT_FACT_MEASURED;
    }
    if (nt_model_compute(&in, NULL, &tab) != NT_OK) {
        rc = nt_watch_not_judged_add(nj, "watch_below_model", c->id, "the model cannot compute shape %dx%d", nnodes, ppn);
        goto out;
    }
    size_t w = c->window;
    bw = malloc(w * sizeof(*bw));
    done = calloc(w, 1);
    if (!bw || !done) {
        rc = -1;
        goto out;
    }
    uint64_t lo = c->max_seq + 1 > w ? c->max_seq + 1 - w : 0;
    for (uint64_t s0 = lo; rc == 0 && c->any_seq && s0 <= c->max_seq; s0++) {
        const nt_jobcall_t *k0 = nt_jobcomm_call(c, s0);
        int n = nt_watch_series_take(c, s0, done, bw, NULL, NULL);
        if (n < 0)
            continue;
        rc = nt_model_series(m, c, &in, &tab, k0->op, k0->bytes, bw, n, scale, measured * nics,
                             note, findings, nj, out);
    }
out:
    free(hosts);
    free(bw);
    free(done);
    return rc;
}

int nt_watch_model_judge(const nt_watch_model_t *m, const nt_jobalign_t *a, cJSON *findings,
                         cJSON *nj, nt_watch_outcome_t *out)
{
    size_t n = nt_jobalign_ncomms(a);
    if (!n)
        return 0;
    if (!m)
        return nt_watch_not_judged_add(nj, "watch_below_model", NULL, "no --report: give the job's pre-job nettune probe report "
                                     "to compare busbw with what its measured links give");
    if (m->why_none[0])
        return nt_watch_not_judged_add(nj, "watch_below_model", NULL, "--report %s: %s", m->path, m->why_none);
    for (size_t i = 0; i < n; i++)
        if (nt_model_comm(m, nt_jobalign_comm(a, i), findings, nj, out) < 0)
            return -1;
    return 0;
}
