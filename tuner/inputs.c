/* The model's inputs, each labelled: see tune.h and docs/tuner-cli.md. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tune.h"

/* GPU names to compute capability (NVIDIA's CUDA GPU list). Substrings, first match wins. */
static const struct {
    const char *match;
    int sm;
} gpu_sm[] = {{"GB200", 100}, {"B200", 100},  {"B100", 100},   {"B300", 103},         {"GH200", 90},
              {"H200", 90},   {"H100", 90},   {"H800", 90},    {"H20", 90},           {"L40", 89},
              {"L4", 89},     {"RTX 40", 89}, {"RTX 50", 120}, {"RTX PRO 6000", 120}, {"A100", 80},
              {"A800", 80},   {"A30", 80},    {"A10", 86},     {"A40", 86},           {"RTX A", 86},
              {"RTX 30", 86}, {"V100", 70},   {"T4", 75},      {"RTX 20", 75},        {"P100", 60},
              {"M2070", 20}};

int nt_tune_sm_from_gpu_name(const char *name)
{
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof(gpu_sm) / sizeof(gpu_sm[0]); i++)
        if (strstr(name, gpu_sm[i].match))
            return gpu_sm[i].sm;
    return 0;
}

int nt_tune_cpu_vendor_from_model(const char *model)
{
    if (!model || !*model)
        return -1;
    if (strcasestr(model, "intel") || strcasestr(model, "xeon"))
        return NT_CPU_VENDOR_INTEL;
    if (strcasestr(model, "amd") || strcasestr(model, "epyc"))
        return NT_CPU_VENDOR_AMD;
    if (strcasestr(model, "zhaoxin"))
        return NT_CPU_VENDOR_ZHAOXIN;
    return NT_CPU_VENDOR_OTHER;
}

nt_status_t nt_tune_shape_parse(const char *s, nt_tune_shape_t *out)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || n < 1 || n > 1000000)
        return NT_ERR_INVALID;
    const char *p = end + 1;
    long ppn = strtol(p, &end, 10);
    if (end == p || *end || ppn < 1 || ppn > 1024)
        return NT_ERR_INVALID;
    out->nnodes = (int)n;
    out->ppn = (int)ppn;
    out->nranks = (int)(n * ppn);
    return NT_OK;
}

/* Log graph slots to the model's per-algorithm graphs (NVIDIA/nccl v2.28.9-1 src/init.cc
 * graphs[]: Tree and PAT use the tree graph, NVLS and NVLS_TREE the NVLS graph). */
static const struct {
    int slot, algo;
} slot_algo[] = {{NT_NCCLLOG_TREE, NT_ALGO_TREE},
                 {NT_NCCLLOG_RING, NT_ALGO_RING},
                 {NT_NCCLLOG_COLLNET_DIRECT, NT_ALGO_COLLNET_DIRECT},
                 {NT_NCCLLOG_COLLNET_CHAIN, NT_ALGO_COLLNET_CHAIN},
                 {NT_NCCLLOG_NVLS, NT_ALGO_NVLS},
                 {NT_NCCLLOG_NVLS, NT_ALGO_NVLS_TREE},
                 {NT_NCCLLOG_TREE, NT_ALGO_PAT}};

int nt_tune_input_from_log(nt_model_input_t *in, const nt_nccllog_t *log)
{
    int n = 0, maxch = 0;
    for (size_t i = 0; i < sizeof(slot_algo) / sizeof(slot_algo[0]); i++) {
        const nt_nccllog_graph_t *g = &log->graph[slot_algo[i].slot];
        if (!g->present)
            continue;
        nt_model_graph_t *m = &in->graph[slot_algo[i].algo];
        m->nchannels = g->nchannels;
        m->bw_intra_GBps = g->bw_intra_GBps;
        m->bw_inter_GBps = g->bw_inter_GBps;
        int ti = nt_model_path_parse(g->type_intra), te = nt_model_path_parse(g->type_inter);
        if (ti >= 0)
            m->type_intra = (nt_path_t)ti;
        if (te >= 0)
            m->type_inter = (nt_path_t)te;
        m->pattern = g->pattern;
        m->same_channels = g->same_channels;
        for (int f = 0; f < NT_NUM_GRAPH_FACTS; f++)
            if (f != NT_GF_LATENCY_INTER)
                m->label[f] = NT_FACT_MEASURED;
        if (g->nchannels > maxch)
            maxch = g->nchannels;
        n++;
    }
    if (maxch) {
        in->comm_nchannels = maxch; /* comm->nChannels: the largest graph's (init.cc) */
        in->label[NT_CF_COMM_NCHANNELS] = NT_FACT_INFERRED;
    }
    if (log->cuda_runtime) {
        in->cuda_runtime = log->cuda_runtime;
        in->label[NT_CF_CUDA] = NT_FACT_MEASURED;
    }
    return n;
}

nt_status_t nt_tune_log_input(const nt_nccllog_t *g, int version, const nt_tune_shape_t *shape,
                              int sm, int cpu_vendor, nt_model_input_t *in)
{
    /* the shape: the log's comm line, else `shape` (a log of NCCL_DEBUG_SUBSYS=TUNING only) */
    int nranks = g->nranks > 0 ? g->nranks : shape ? shape->nranks : 2;
    int nnodes = g->nnodes > 0 ? g->nnodes : shape ? shape->nnodes : 1;
    nt_status_t st = nt_model_input_init(in, version, nranks, nnodes);
    if (st != NT_OK)
        return st;
    in->label[NT_CF_VERSION] = NT_FACT_MEASURED;
    if (g->nranks <= 0 && !shape)
        in->label[NT_CF_NRANKS] = in->label[NT_CF_NNODES] = NT_FACT_ASSUMED;
    if (g->local_ranks > 0)
        in->ppn = g->local_ranks;
    else if (shape)
        in->ppn = shape->ppn;
    if (sm) {
        in->min_sm = in->max_sm = sm;
        in->label[NT_CF_SM] = NT_FACT_MEASURED;
    }
    if (cpu_vendor >= 0) {
        in->cpu_vendor = (nt_cpu_vendor_t)cpu_vendor;
        in->label[NT_CF_CPU] = NT_FACT_MEASURED;
    }
    nt_tune_input_from_log(in, g);
    return NT_OK;
}

/* NCCL's search speeds (v2.28.9-1 src/graph/search.cc:976-989), per compute capability. */
static const float speed_intra_def[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                        9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
static const float speed_inter_def[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
static const float speed_intra_90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                       15.0, 12.0, 11.0, 6.0,  3.0};
static const float speed_inter_90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                       15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
static const float speed_intra_100[] = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0,
                                        30.0, 24.0, 20.0, 19.0, 18.0};
static const float speed_inter_100[] = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                        17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

/* The largest search speed not above `bw`; the smallest of the array if none. */
static double nt_quantise(const float *a, size_t n, double bw)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] <= bw + 1e-9)
            return a[i];
    return a[n - 1];
}

/* NVLink bandwidth per link (src/graph/topo.h: SM80 20, SM90 20.6, SM100 40.1; earlier 20) and
 * links per GPU of the SXM parts when the report lists none. */
static double nt_nvlink_bw(int sm)
{
    return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : 20.0;
}

static int nt_default_nvlinks(const char *name)
{
    if (!name || strstr(name, "PCIe") || strstr(name, "PCIE"))
        return 0;
    if (strstr(name, "H100") || strstr(name, "H200") || strstr(name, "H800") ||
        strstr(name, "B200") || strstr(name, "GB200"))
        return 18;
    if (strstr(name, "A100") || strstr(name, "A800"))
        return 12;
    if (strstr(name, "V100"))
        return 6;
    return 0;
}

/* Facts from the probe report through NCCL's search rules on nominal speeds (labelled inferred):
 * intra bandwidth per GPU = NVLinks x per-link speed (or the PCIe x16 rate), inter = the NIC line
 * rate / 8; one channel per NIC across nodes; the speed quantised as ncclTopoCompute does and the
 * channels doubled as ncclTopoDupChannels does (search.cc:961-972). */
static void nt_input_from_report(const nt_tune_t *t, const nt_tune_shape_t *sh,
                                 nt_model_input_t *in)
{
    const nt_rdoc_t *r = &t->report;
    const nt_rnode_t *nd = NULL;
    for (size_t i = 0; i < r->nnodes && !nd; i++)
        if (r->nodes[i].j && r->nodes[i].ngpus > 0)
            nd = &r->nodes[i];
    if (!nd)
        return;
    int sm = in->min_sm;
    int nvl = 0;
    const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(nd->j, "gpus"), 0);
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(g0, "nvlinks"), *l;
    cJSON_ArrayForEach (l, links) {
        const char *st = nt_json_get_str(l, "state", "");
        if (strcasecmp(st, "active") == 0 || strcasecmp(st, "up") == 0)
            nvl++;
    }
    if (!nvl)
        nvl = nt_default_nvlinks(nd->gpu_model);
    const cJSON *pcie = cJSON_GetObjectItemCaseSensitive(g0, "pcie");
    double gen = nt_json_get_num(pcie, "gen", 4), width = nt_json_get_num(pcie, "width", 16);
    double pcie_bw = (gen >= 5 ? 48.0 : gen >= 4 ? 24.0 : 12.0) * width / 16.0;
    double intra = nvl ? nvl * nt_nvlink_bw(sm) : pcie_bw;
    double nic = 0;
    int nnics = 0;
    for (int k = 0; k < nd->nnics && nd->nics; k++)
        if (strcmp(nd->nics[k].state, "ACTIVE") == 0 && !isnan(nd->nics[k].rate_Gbps)) {
            nnics++;
            if (nic == 0 || nd->nics[k].rate_Gbps / 8.0 < nic)
                nic = nd->nics[k].rate_Gbps / 8.0;
        }
    /* the NIC speeds NCCL printed (INFO from 2.27) win over the report's: they are what NCCL's
     * search used (NIC bandwidth = speed / 8000, src/graph/topo.cc) */
    double log_nic = 0;
    size_t log_n = 0;
    const nt_nccllog_t *logs[2 * NT_TUNE_MAX_SOURCES];
    size_t nl = 0;
    for (size_t i = 0; i < t->p.nlogs; i++)
        logs[nl++] = &t->logs[i];
    for (size_t i = 0; i < t->nsources; i++)
        logs[nl++] = &t->sources[i].log;
    for (size_t i = 0; i < nl && !log_n; i++)
        for (size_t k = 0; k < logs[i]->nnics; k++) {
            if (log_nic == 0 || logs[i]->nic_Gbps[k] / 8.0 < log_nic)
                log_nic = logs[i]->nic_Gbps[k] / 8.0;
            log_n = logs[i]->nnics;
        }
    if (log_n) {
        nic = log_nic;
        nnics = (int)log_n;
    }
    const float *ai = sm >= 100 ? speed_intra_100 : sm >= 90 ? speed_intra_90 : speed_intra_def;
    size_t ni = sm >= 100  ? sizeof(speed_intra_100) / sizeof(float)
                : sm >= 90 ? sizeof(speed_intra_90) / sizeof(float)
                           : sizeof(speed_intra_def) / sizeof(float);
    const float *ae = sm >= 100 ? speed_inter_100 : sm >= 90 ? speed_inter_90 : speed_inter_def;
    size_t ne = sm >= 100  ? sizeof(speed_inter_100) / sizeof(float)
                : sm >= 90 ? sizeof(speed_inter_90) / sizeof(float)
                           : sizeof(speed_inter_def) / sizeof(float);
    int nch;
    double bw;
    nt_path_t ti = nvl ? NT_PATH_NVL : NT_PATH_PHB;
    if (sh->nnodes > 1 && nic > 0) {
        bw = nt_quantise(ae, ne, nic);
        nch = nnics < sh->ppn ? (nnics ? nnics : 1) : sh->ppn;
        if (bw * nch > intra)
            bw = nt_quantise(ai, ni, intra / nch);
    } else {
        bw = nt_quantise(ai, ni, intra);
        /* 1..16, clamped as a double: the report's PCIe width is any JSON number, and a cast of
         * one beyond an int (a width of 1e300) is UB */
        double c = floor(intra / bw);
        nch = c < 1 ? 1 : c > 16 ? 16 : (int)c;
    }
    /* ncclTopoDupChannels: double the channels at half the speed unless slow links */
    if (bw >= 25.0 && !(sm > 80 && bw < 50.0 && nch > 4)) {
        nch *= 2;
        bw /= 2;
    }
    for (int a = 0; a < NT_NUM_ALGOS; a++) {
        nt_model_graph_t *m = &in->graph[a];
        int nvls = a == NT_ALGO_NVLS || a == NT_ALGO_NVLS_TREE;
        int collnet = a == NT_ALGO_COLLNET_DIRECT || a == NT_ALGO_COLLNET_CHAIN;
        if (collnet)
            continue; /* no CollNet (SHARP) is inferred from a report */
        if (nvls && !(sm >= 90 && nvl >= 12))
            continue;
        m->nchannels = nvls ? 16 : nch;
        m->bw_intra_GBps = nvls ? nt_quantise(ai, ni, intra / 16) : bw;
        m->bw_inter_GBps = sh->nnodes > 1 ? bw : m->bw_intra_GBps;
        m->type_intra = ti;
        m->type_inter = sh->nnodes > 1 ? NT_PATH_PIX : NT_PATH_PIX;
        for (int f = 0; f < NT_NUM_GRAPH_FACTS; f++)
            if (f != NT_GF_LATENCY_INTER && f != NT_GF_PATTERN && f != NT_GF_SAME_CHANNELS)
                m->label[f] = NT_FACT_INFERRED;
    }
    in->comm_nchannels = nch;
    in->label[NT_CF_COMM_NCHANNELS] = NT_FACT_INFERRED;
    if (nnics)
        in->net_device_host = 1;
}

/* The first GPU name among the inputs: report, then the replayed tables. */
static const char *nt_gpu_name(const nt_tune_t *t)
{
    if (t->have_report)
        for (size_t i = 0; i < t->report.nnodes; i++)
            if (t->report.nodes[i].gpu_model)
                return t->report.nodes[i].gpu_model;
    for (size_t s = 0; s < t->nsources; s++)
        for (size_t k = 0; k < nt_ncclt_reader_ntables(t->sources[s].tests); k++) {
            const nt_ncclt_table_t *tab = nt_ncclt_reader_table(t->sources[s].tests, k);
            if (tab->gpu_model)
                return tab->gpu_model;
        }
    return NULL;
}

/* A log (--nccl-log or a replay source's interleaved lines) whose comm shape is `sh`. */
static const nt_nccllog_t *nt_log_for_shape(const nt_tune_t *t, const nt_tune_shape_t *sh)
{
    for (size_t i = 0; i < t->p.nlogs; i++)
        if (t->logs[i].nranks == sh->nranks && t->logs[i].nnodes == sh->nnodes)
            return &t->logs[i];
    for (size_t s = 0; s < t->nsources; s++) {
        const nt_nccllog_t *g = &t->sources[s].log;
        if (g->nranks == sh->nranks && g->nnodes == sh->nnodes &&
            (g->graph[NT_NCCLLOG_RING].present || g->graph[NT_NCCLLOG_TREE].present))
            return g;
    }
    return NULL;
}

nt_status_t nt_tune_model_input(const nt_tune_t *t, const nt_tune_shape_t *sh, nt_model_input_t *in,
                                char *why, size_t whylen)
{
    nt_status_t st = nt_model_input_init(in, t->target_version, sh->nranks, sh->nnodes);
    if (st != NT_OK)
        return st;
    in->ppn = sh->ppn;
    in->label[NT_CF_VERSION] = t->version_label;
    /* SM: --sm, else the GPU name (report or nccl-tests device lines) */
    int sm = t->p.sm ? t->p.sm : nt_tune_sm_from_gpu_name(nt_gpu_name(t));
    if (sm) {
        in->min_sm = in->max_sm = sm;
        in->label[NT_CF_SM] = t->p.sm ? NT_FACT_MEASURED : NT_FACT_INFERRED;
    }
    int vendor = t->p.cpu_vendor;
    if (vendor < 0 && t->have_report)
        for (size_t i = 0; i < t->report.nnodes && vendor < 0; i++)
            vendor = nt_tune_cpu_vendor_from_model(t->report.nodes[i].cpu_model);
    if (vendor >= 0) {
        in->cpu_vendor = (nt_cpu_vendor_t)vendor;
        in->label[NT_CF_CPU] = NT_FACT_MEASURED;
    }
    const nt_nccllog_t *log = nt_log_for_shape(t, sh);
    const char *from = "nettune's defaults (assumed)";
    if (log && nt_tune_input_from_log(in, log) > 0) {
        from = "NCCL's graph lines (measured)";
    } else if (t->have_report) {
        nt_input_from_report(t, sh, in);
        from = "the probe report through NCCL's search rules (inferred)";
    }
    if (why)
        snprintf(why, whylen, "shape %dx%d: graphs from %s, SM %d (%s)", sh->nnodes, sh->ppn, from,
                 in->min_sm,
                 in->label[NT_CF_SM] == NT_FACT_ASSUMED    ? "assumed"
                 : in->label[NT_CF_SM] == NT_FACT_INFERRED ? "inferred from the GPU name"
                                                           : "given");
    return NT_OK;
}
