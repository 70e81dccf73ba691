/* NCCL's cost model (tuner/model.h): ncclTopoTuneModel() and ncclTopoGetAlgoTime() of
 * NVIDIA/nccl src/graph/tuning.cc, with the per-release constants in tuner/nccl_versions.c.
 * Line numbers are of v2.28.9-1 tuning.cc unless stated ("214:" = v2.14.3-1, "227:" =
 * v2.27.7-1); docs/tuner-model.md lists every formula. Arithmetic mirrors NCCL's types (float
 * cells and graph bandwidths, double constants) so the printed %.1f values come out the same. */
#include "model.h"

#include <math.h>
#include <string.h>

#include "nccl_versions.h"

#define NT_PATTERN_TREE 3 /* NCCL_TOPO_PATTERN_TREE, src/graph/topo.h */
#define NT_PCI_BW 12.0    /* PCI_BW, v2.28.9-1 src/graph/topo.h:18 */
#define NT_WARP 32
#define NT_MAX_NTHREADS 640        /* NCCL_MAX_NTHREADS, v2.28.9-1 src/include/device.h:88 */
#define NT_SIMPLE_MAX_NTHREADS 512 /* device.h:90 */
#define NT_LL_MAX_NTHREADS 512     /* device.h:92 */
#define NT_LL128_MAX_NTHREADS 640  /* device.h:109 */
#define NT_WORK_BATCH                                                                              \
    9 /* NCCL_MAX_DEV_WORK_BATCH_COLLS = 1024 / sizeof(ncclDevWorkColl) (112),                     \
         device.h:362-363; 2.14 NCCL_MAX_WORK_ELEMENTS == 9 (devcomm.h:206) */

nt_status_t nt_model_input_init(nt_model_input_t *in, int version, int nranks, int nnodes)
{
    if (!in || nranks < 1 || nnodes < 1 || nnodes > nranks)
        return NT_ERR_INVALID;
    memset(in, 0, sizeof(*in));
    in->version = version;
    in->nranks = nranks;
    in->nnodes = nnodes;
    in->ppn = nranks / nnodes;
    in->min_sm = in->max_sm = 90;
    in->cpu_arch = NT_CPU_ARCH_X86;
    in->cpu_vendor = NT_CPU_VENDOR_INTEL;
    in->cuda_runtime = 12090;
    in->comm_nchannels = 1;
    in->net_device_host = 1;
    in->env_nthreads = in->env_ll128_nthreads = in->env_pat_enable = -2;
    in->env_ll128_c2c = 1;
    in->env_net_overhead_ns = -2;
    in->collnet_chain_support = 1;
    for (int a = 0; a < NT_NUM_ALGOS; a++) {
        nt_model_graph_t *g = &in->graph[a];
        g->nchannels = 1;
        g->type_intra = NT_PATH_NVL;
        g->type_inter = NT_PATH_PIX;
        g->pattern = a == NT_ALGO_TREE ? 1 : a == NT_ALGO_RING ? 4 : 0;
        g->same_channels = 1;
    }
    in->graph[NT_ALGO_NVLS].nchannels = in->graph[NT_ALGO_NVLS_TREE].nchannels = 0;
    in->graph[NT_ALGO_COLLNET_DIRECT].nchannels = in->graph[NT_ALGO_COLLNET_CHAIN].nchannels = 0;
    /* labels: NT_FACT_ASSUMED (0) everywhere, except what the caller gave */
    in->label[NT_CF_VERSION] = in->label[NT_CF_NRANKS] = in->label[NT_CF_NNODES] = NT_FACT_MEASURED;
    return NT_OK;
}

int nt_model_version_supported(int version)
{
    return nt_model_version_find(version) != NULL;
}

/* log2i: v2.28.9-1 src/include/utils.h:42 = log2Down (bitops.h:273-300), -1 for 0;
 * v2.14.3-1 utils.h:39-43 and v2.21.5-1 utils.h:46-50 give 0 for 0. */
static long nt_log2i_v(const nt_model_version_t *v, long n)
{
    if (n <= 0)
        return v->log2i_zero ? 0 : -1;
    long l = 0;
    while (n >>= 1)
        l++;
    return l;
}

/* getNthreads: tuning.cc:16-33 */
static int nt_get_nthreads(int env, int min, int max, int def)
{
    if (env <= 0)
        return def;
    if (env % NT_WARP != 0)
        return max;
    if (env > max)
        return max;
    if (env < min)
        return min;
    return env;
}

/* compCapIndex: tuning.cc:249 (>= 100 Blackwell, >= 90 Hopper, >= 80 Ampere, else Volta);
 * 214:97 compCap80 (1 only when every GPU is SM80). */
static int nt_compcap_index(const nt_model_version_t *v, int min_sm, int max_sm)
{
    if (v->family == NT_FAMILY_214)
        return (min_sm == 80 && max_sm == 80) ? 1 : 0;
    int idx = min_sm >= 100 ? 3 : min_sm >= 90 ? 2 : min_sm >= 80 ? 1 : 0;
    return idx > v->max_cc_idx ? v->max_cc_idx : idx; /* v2.24.3-1: no Blackwell index */
}

/* The graph NCCL hands tuning for each algorithm: v2.28.9-1 src/init.cc:854 (NVLS_TREE uses the
 * NVLS graph, PAT the Tree graph); v2.14.3-1 tuning.cc:109 (both CollNets use the CollNet graph).
 */
static const nt_model_graph_t *nt_graph_of(const nt_model_version_t *v, const nt_model_input_t *in,
                                        int a)
{
    static const int g227[NT_NUM_ALGOS] = {0, 1, 2, 3, 4, 4, 0};
    static const int g214[NT_NUM_ALGOS] = {0, 1, 2, 2, 4, 4, 0};
    return &in->graph[v->family == NT_FAMILY_214 ? g214[a] : g227[a]];
}

/* getNetOverhead: tuning.cc:214-219 (us): NCCL_NET_OVERHEAD (ns) wins; x86 Intel 1, x86 AMD 2,
 * else 1. */
static float nt_net_overhead(const nt_model_input_t *in)
{
    if (in->env_net_overhead_ns != -2)
        return (float)(in->env_net_overhead_ns * .001);
    if (in->cpu_arch == NT_CPU_ARCH_X86 && in->cpu_vendor == NT_CPU_VENDOR_AMD)
        return 2.0f;
    return 1.0f;
}

/* ncclPatEnable: tuning.cc:201-209 */
static int nt_pat_enable(const nt_model_version_t *v, const nt_model_input_t *in)
{
    if (v->pat_sm60 && in->min_sm < 60)
        return 0;
    if (in->env_pat_enable != 2 && in->env_pat_enable != -2)
        return in->env_pat_enable;
    if (in->nnodes != in->nranks)
        return 0;
    if (!in->net_device_host)
        return 0;
    return 1;
}

/* The LL128 default gate (protoEnable == 2): 214:214-218, v2.27.3-1:457-463, tuning.cc:480-494. */
static int nt_ll128_default(const nt_model_version_t *v, const nt_model_input_t *in, int c, int a)
{
    const nt_model_graph_t *g = nt_graph_of(v, in, a);
    int ok = 1;
    if (v->ll128_gate == NT_LL128_GATE_214)
        return g->type_inter <= NT_PATH_PXB && g->type_intra <= NT_PATH_NVL &&
               ((in->min_sm == 70 && in->max_sm == 70) || (in->min_sm == 80 && in->max_sm == 80));
    if (v->ll128_gate == NT_LL128_GATE_226 ||
        v->ll128_gate == NT_LL128_GATE_224) { /* v2.26.6-1 tuning.cc:429-439 */
        ok &= g->type_inter <= NT_PATH_PXB || (in->min_sm >= 90 && g->type_inter <= NT_PATH_PXN);
        ok &= g->type_intra <= NT_PATH_NVB;
        ok &= in->min_sm == in->max_sm;
        switch (in->min_sm) {
        case 70:
        case 80:
            break;
        case 100: /* from 2.25 (v2.25.1-1) */
        case 120:
            if (v->ll128_gate == NT_LL128_GATE_224)
                ok = 0;
            break;
        case 90:
            ok &= !(in->cuda_runtime == 11080 && c == NT_COLL_ALLREDUCE && a == NT_ALGO_RING &&
                    in->nranks == 2);
            break;
        default:
            ok = 0;
        }
        return ok;
    }
    if (v->ll128_gate == NT_LL128_GATE_2273) {
        ok &=
            g->type_inter <= NT_PATH_PXB ||
            (in->min_sm >= 90 && g->type_inter <= (in->env_ll128_c2c ? NT_PATH_P2C : NT_PATH_PXN));
    } else if (in->env_ll128_c2c && in->min_sm >= 90) {
        ok &= g->type_inter <= NT_PATH_PXN;
    } else {
        ok &= g->type_inter <= NT_PATH_PXB;
    }
    ok &= g->type_intra <= NT_PATH_NVB;
    /* v2.30.7-1:533: mixed compute capabilities from Hopper up */
    ok &= in->min_sm == in->max_sm || (v->ll128_gate == NT_LL128_GATE_230 && in->min_sm >= 90);
    /* the CUDA 11.8 exception: Hopper, Ring AllReduce on 2 ranks, NCCL built with CUDA 11.8 */
    ok &= !(in->min_sm < 70 || (in->min_sm == 90 && in->cuda_runtime == 11080 &&
                                c == NT_COLL_ALLREDUCE && a == NT_ALGO_RING && in->nranks == 2));
    return ok;
}

static void nt_set_threads(const nt_model_version_t *v, const nt_model_input_t *in,
                        nt_model_table_t *t)
{
    /* tuning.cc:231-243 (214:81-91: CollNet Simple 512, no NVLS) */
    const nt_model_graph_t *ring = &in->graph[NT_ALGO_RING];
    int simple_def =
        (float)ring->bw_intra_GBps * ring->nchannels <= NT_PCI_BW ? 256 : NT_SIMPLE_MAX_NTHREADS;
    memset(t->max_threads, 0, sizeof(t->max_threads));
    t->max_threads[NT_ALGO_RING][NT_PROTO_SIMPLE] =
        nt_get_nthreads(in->env_nthreads, 2 * NT_WARP, NT_SIMPLE_MAX_NTHREADS, simple_def);
    t->max_threads[NT_ALGO_TREE][NT_PROTO_SIMPLE] = nt_get_nthreads(
        in->env_nthreads, 2 * NT_WARP, NT_SIMPLE_MAX_NTHREADS, NT_SIMPLE_MAX_NTHREADS);
    int collnet_simple = v->family == NT_FAMILY_214 ? NT_SIMPLE_MAX_NTHREADS : NT_MAX_NTHREADS;
    t->max_threads[NT_ALGO_COLLNET_DIRECT][NT_PROTO_SIMPLE] = collnet_simple;
    t->max_threads[NT_ALGO_COLLNET_CHAIN][NT_PROTO_SIMPLE] = collnet_simple;
    if (v->nalgos > NT_ALGO_NVLS_TREE)
        t->max_threads[NT_ALGO_NVLS][NT_PROTO_SIMPLE] =
            t->max_threads[NT_ALGO_NVLS_TREE][NT_PROTO_SIMPLE] = NT_MAX_NTHREADS;
    t->max_threads[NT_ALGO_RING][NT_PROTO_LL] = t->max_threads[NT_ALGO_TREE][NT_PROTO_LL] =
        nt_get_nthreads(in->env_nthreads, 2 * NT_WARP, NT_LL_MAX_NTHREADS, NT_LL_MAX_NTHREADS);
    t->max_threads[NT_ALGO_RING][NT_PROTO_LL128] = t->max_threads[NT_ALGO_TREE][NT_PROTO_LL128] =
        nt_get_nthreads(in->env_ll128_nthreads, NT_LL128_MAX_NTHREADS / 4, NT_LL128_MAX_NTHREADS,
                     NT_LL128_MAX_NTHREADS);
}

static int nt_model_validate(const nt_model_input_t *in)
{
    if (in->nranks < 1 || in->nnodes < 1 || in->nnodes > in->nranks ||
        in->nranks > NT_MODEL_MAX_RANKS) /* 2 * nRanks below: signed overflow beyond */
        return 0;
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        if (in->graph[a].nchannels < 0 || in->graph[a].bw_intra_GBps < 0 ||
            in->graph[a].bw_inter_GBps < 0 || in->graph[a].type_intra >= NT_NUM_PATHS ||
            in->graph[a].type_inter >= NT_NUM_PATHS)
            return 0;
    return 1;
}

nt_status_t nt_model_compute(const nt_model_input_t *in, const nt_model_env_filter_t *env,
                             nt_model_table_t *out)
{
    return nt_model_compute_masked(in, env, out, ~0u);
}

nt_status_t nt_model_compute_masked(const nt_model_input_t *in, const nt_model_env_filter_t *env,
                                    nt_model_table_t *out, unsigned algo_mask)
{
    if (!in || !out || !nt_model_validate(in))
        return NT_ERR_INVALID;
    const nt_model_version_t *v = nt_model_version_find(in->version);
    if (!v)
        return NT_ERR_UNSUPPORTED;
    const int f214 = v->family == NT_FAMILY_214;
    memset(out, 0, sizeof(*out));
    out->version = in->version;
    for (int c = 0; c < NT_NUM_COLLS; c++)
        for (int a = 0; a < NT_NUM_ALGOS; a++)
            for (int p = 0; p < NT_NUM_PROTOS; p++)
                out->cell[c][a][p].why = NT_CELL_NOT_COVERED;
    nt_set_threads(v, in, out);

    const int nNodes = in->nnodes, nRanks = in->nranks;
    if (nRanks <= 1)
        return NT_OK; /* tuning.cc:247 */

    const int cc = nt_compcap_index(v, in->min_sm, in->max_sm);
    const int index2 = nNodes <= 2 ? nNodes - 1 : 2; /* :250 scale: 1, 2, 3+ nodes */
    /* :252-253 LL: one node -> GPU row; across nodes -> CPU row (AMD/mixed 1, else 0);
     * 214:102 and to 2.23 (v2.23.4-1:151) AMD only */
    const int amd = in->cpu_vendor == NT_CPU_VENDOR_AMD ||
                    (v->ll_row_mixed && in->cpu_vendor == NT_CPU_VENDOR_MIXED);
    const int index1 = nNodes == 1 ? cc : amd ? 1 : 0;
    const double llMaxBw = v->ll_max_bw[index1][index2];
    const double perChMaxTreeBw = v->per_ch_tree[cc][index2];
    const double perChMaxRingLL128Bw = v->per_ch_ring_ll128[cc][index2];
    const double perChMaxTreeLL128Bw = v->per_ch_tree_ll128[cc][index2];
    const double perChMaxNVLSTreeBw = v->per_ch_nvls_tree[cc][index2];
    double hwLat[NT_NUM_HW][NT_NUM_ALGOS][NT_NUM_PROTOS];
    memcpy(hwLat, v->hw_lat, sizeof(hwLat));
    /* :260 (214:106) POWER: Tree/Simple PCI latency = Ring/Simple PCI latency */
    if (in->cpu_arch == NT_CPU_ARCH_POWER)
        hwLat[NT_HW_PCI][NT_ALGO_TREE][NT_PROTO_SIMPLE] =
            hwLat[NT_HW_PCI][NT_ALGO_RING][NT_PROTO_SIMPLE];
    const float ppn = (float)nRanks / nNodes; /* :261 */
    /* comm->maxTreePattern from 2.26; to 2.25 the Tree graph's own pattern */
    const int tree_pattern = (in->max_tree_pattern && !v->tree_pattern_graph)
                                 ? in->max_tree_pattern
                                 : in->graph[NT_ALGO_TREE].pattern;

    int intraHw[NT_NUM_ALGOS], hw[NT_NUM_ALGOS];
    for (int a = 0; a < NT_NUM_ALGOS; a++) { /* :263-265: typeIntra == LINK_NVL -> NVLINK row */
        intraHw[a] = nt_graph_of(v, in, a)->type_intra == NT_PATH_NVL ? NT_HW_NVLINK : NT_HW_PCI;
        hw[a] = nNodes == 1 ? intraHw[a] : NT_HW_NET;
    }

    for (int coll = 0; coll < NT_NUM_COLLS; coll++) {
        const int AR = coll == NT_COLL_ALLREDUCE,
                  AGRS = coll == NT_COLL_ALLGATHER || coll == NT_COLL_REDUCESCATTER;
        const int BR = coll == NT_COLL_BROADCAST || coll == NT_COLL_REDUCE;
        const int nsteps = AR ? 2 * (nRanks - 1) : AGRS ? nRanks - 1 : nRanks; /* :268-270 */
        for (int a = 0; a < v->nalgos; a++) {
            if (!(algo_mask & (1u << a)))
                continue;
            /* coverage :273-277; 214:123 (AllReduce all algorithms, others Ring only) */
            if (f214) {
                if (!AR && a != NT_ALGO_RING)
                    continue;
            } else {
                if (BR && a != NT_ALGO_RING)
                    continue;
                if (AGRS && a != NT_ALGO_PAT && a != NT_ALGO_RING && a != NT_ALGO_NVLS &&
                    a != NT_ALGO_COLLNET_DIRECT)
                    continue;
                if (AR && a == NT_ALGO_PAT)
                    continue;
            }
            const nt_model_graph_t *g = nt_graph_of(v, in, a);
            const int nvls = a == NT_ALGO_NVLS || a == NT_ALGO_NVLS_TREE;
            for (int p = 0; p < NT_NUM_PROTOS; p++) {
                nt_model_cell_t *cell = &out->cell[coll][a][p];
                if (!f214) {
                    if (nvls && p != NT_PROTO_SIMPLE)
                        continue; /* :280 */
                    if (AGRS && a == NT_ALGO_PAT && (p != NT_PROTO_SIMPLE || !nt_pat_enable(v, in)))
                        continue; /* :281-282 */
                }
                const int collnet = a == NT_ALGO_COLLNET_DIRECT || a == NT_ALGO_COLLNET_CHAIN;
                /* :284 bwIntra up to 2 nodes, bwInter beyond; CollNet always bwIntra */
                float bw =
                    (nNodes <= 2 || collnet) ? (float)g->bw_intra_GBps : (float)g->bw_inter_GBps;
                if (nvls && v->nvls_bw_228) {
                    if (g->nchannels < 2) { /* :288 NVLS/NVLS_TREE need 2+ channels */
                        cell->why = NT_CELL_ALGO_DISABLED;
                        continue;
                    }
                    /* :290-299 */
                    float intraBw = (float)g->bw_intra_GBps * v->nvls_eff[cc] * (g->nchannels - 1) /
                                    g->nchannels;
                    if (AR)
                        intraBw *= 2.0f;
                    else
                        intraBw *= (ppn - 1) / ppn;
                    float interBw =
                        (float)g->bw_inter_GBps * ((nNodes <= 2 && a == NT_ALGO_NVLS_TREE) ? 2 : 1);
                    bw = fminf(intraBw, interBw);
                    if (a == NT_ALGO_NVLS_TREE)
                        bw = fminf(bw, (float)perChMaxNVLSTreeBw);
                } else if (a == NT_ALGO_NVLS &&
                           !f214) { /* 227:267-274; v2.26.6-1:251 min() always */
                    if (AR || v->v226)
                        bw = fminf((float)g->bw_intra_GBps, (float)g->bw_inter_GBps);
                    else
                        bw = fminf((float)g->bw_intra_GBps * (ppn - 1.0f) / ppn,
                                   (float)g->bw_inter_GBps * 0.9f);
                } else if (a == NT_ALGO_NVLS_TREE && !f214) { /* 227:275 */
                    bw = fminf((float)g->bw_intra_GBps,
                               nNodes <= 2 ? (float)g->bw_inter_GBps : (float)g->bw_inter_GBps / 2);
                }
                float busBw = g->nchannels * bw; /* :301 */

                if (f214) { /* 214:131-145 */
                    if (cc == 1)
                        busBw = fminf(busBw, 235.0f);
                    if (a == NT_ALGO_RING && p == NT_PROTO_LL)
                        busBw = (float)fmin(llMaxBw,
                                            busBw * ((nNodes > 1 || AR || coll == NT_COLL_REDUCE)
                                                         ? 1.0 / 4.0
                                                         : 1.0 / 3.0));
                    if (a == NT_ALGO_RING && p == NT_PROTO_LL128)
                        busBw = (float)fmin(busBw * (ppn < 2 ? 0.7 : 0.92),
                                            perChMaxRingLL128Bw * g->nchannels);
                    if (a == NT_ALGO_TREE)
                        busBw = (float)fmin(busBw * .92, g->nchannels * perChMaxTreeBw);
                    if (a == NT_ALGO_TREE && p == NT_PROTO_LL)
                        busBw = (float)fmin(busBw * 1.0 / 3.8, llMaxBw);
                    if (a == NT_ALGO_TREE && p == NT_PROTO_LL128)
                        busBw = (float)fmin(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                            perChMaxTreeLL128Bw * g->nchannels);
                    if (collnet && p != NT_PROTO_SIMPLE)
                        busBw = 0;
                    if (a == NT_ALGO_COLLNET_DIRECT && p == NT_PROTO_SIMPLE) {
                        float factor = (float)(ppn / (1.0 * g->nchannels));
                        factor -= (factor - 1) / 2;
                        busBw /= factor;
                    }
                    if (a == NT_ALGO_COLLNET_CHAIN && p == NT_PROTO_SIMPLE)
                        busBw *= .75;
                } else { /* :304-343 */
                    if (a == NT_ALGO_RING && p == NT_PROTO_LL)
                        busBw = (float)fmin(llMaxBw, busBw * .5);
                    if (a == NT_ALGO_RING && p == NT_PROTO_LL128)
                        busBw = (float)fmin(busBw * (v->ring_ll128_ppn1 && ppn < 2 ? 0.7 : 0.92),
                                            g->nchannels * perChMaxRingLL128Bw);
                    if (a == NT_ALGO_TREE && AR)
                        busBw = (float)fmin(busBw * .92, g->nchannels * perChMaxTreeBw);
                    if (a == NT_ALGO_TREE && p == NT_PROTO_LL)
                        busBw = (float)fmin(busBw * 1.0 / 3.8, llMaxBw);
                    if (a == NT_ALGO_TREE && p == NT_PROTO_LL128)
                        busBw = (float)fmin(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                                            g->nchannels * perChMaxTreeLL128Bw);
                    if (a == NT_ALGO_TREE && tree_pattern == NT_PATTERN_TREE)
                        busBw *= .85; /* :309 */
                    if (a == NT_ALGO_PAT)
                        busBw *= v->pat_bw; /* :310 */
                    if (collnet && p != NT_PROTO_SIMPLE)
                        busBw = 0;                                             /* :311-312 */
                    if (a == NT_ALGO_COLLNET_DIRECT && p == NT_PROTO_SIMPLE) { /* :313-323 */
                        if (AGRS && v->v226) {
                            /* v2.26.6-1 tuning.cc:266-279: ppn x bw, 1:1 GPU:NIC, and a
                             * corrective ratio interpolated between 1 ppn (.95) and 8 (.85) */
                            busBw = ppn * bw;
                            if (nNodes > 1 && (!in->collnet_ag_rs || ppn > in->collnet_heads))
                                busBw = 0;
                            float w = (ppn - 1) / (8 - 1);
                            busBw *= w * 0.85 + (1 - w) * 0.95;
                        } else if (AGRS) {
                            busBw = ppn *
                                    fminf((float)g->bw_intra_GBps, (float)g->bw_inter_GBps * 0.9f);
                        } else {
                            float factor = (float)(ppn / (1.0 * g->nchannels));
                            factor -= (factor - 1) / 2;
                            busBw /= factor;
                            if (in->min_sm >= 90)
                                busBw *= .85;
                        }
                    }
                    /* :326-343 AllGather/ReduceScatter over NVLS or CollNetDirect across nodes need
                     * the CollNet plugin's iallgather/ireducescatter and a head per local rank */
                    if (!v->v226 && (a == NT_ALGO_NVLS || a == NT_ALGO_COLLNET_DIRECT) &&
                        p == NT_PROTO_SIMPLE && AGRS && nNodes > 1) {
                        int nHeads = 0;
                        if (!in->collnet_ag_rs)
                            busBw = 0.0f;
                        if (in->collnet_enable)
                            nHeads = in->collnet_heads;
                        else
                            busBw = 0.0f;
                        if (busBw > 0.0f && in->ppn > nHeads)
                            busBw = 0.0f;
                    }
                }

                /* bus bandwidth -> algorithm bandwidth: :346-351; 214:148 */
                if (f214) {
                    busBw *= (a != NT_ALGO_RING) ? .5f : (float)((1.0 * nRanks) / nsteps);
                } else if (!(AGRS && (v->algbw_collnet_only ? a == NT_ALGO_COLLNET_DIRECT
                                                            : a != NT_ALGO_RING))) {
                    float ratio = 1.0f;
                    if (a == NT_ALGO_RING || (nvls && v->nvls_bw_228))
                        ratio *= (float)((1.0 * nRanks) / nsteps);
                    else if (nvls)
                        ratio *= (float)(5.0 / 6.0); /* 227:324 */
                    else
                        ratio *= .5;
                    busBw *= ratio;
                }
                cell->bw_GBps = busBw;
                cell->why = busBw > 0 ? NT_CELL_OK : NT_CELL_ZERO_BW;

                /* latencies :353-401; 214:151-176 */
                float lat = (float)v->base_lat[a][p];
                float intraLat = (float)hwLat[intraHw[a]][a][p];
                float interLat;
                if (f214) {
                    interLat = g->latency_inter_us ? (float)g->latency_inter_us
                                                   : (float)hwLat[NT_HW_NET][a][p];
                    if (nNodes > 1 && p == NT_PROTO_LL)
                        intraLat *= 1.8f; /* 214:155 */
                } else {
                    /* :356 one GPU per node: the Tree NET row; :357-359 + latencyInter (twice for
                     * Simple) */
                    interLat = (ppn == 1 && !v->inter_lat_plain)
                                   ? (float)hwLat[NT_HW_NET][NT_ALGO_TREE][p]
                                   : (float)hwLat[NT_HW_NET][a][p];
                    interLat += (float)g->latency_inter_us;
                    if (p == NT_PROTO_SIMPLE)
                        interLat += (float)g->latency_inter_us;
                }
                if (a == NT_ALGO_RING) {
                    float l = (float)hwLat[hw[a]][a][p];
                    if (BR) { /* :363-369 */
                        if (g->same_channels) {
                            lat += l;
                        } else {
                            if (p == NT_PROTO_SIMPLE)
                                l = (float)hwLat[hw[a]][NT_ALGO_TREE][p];
                            lat += nsteps * l;
                        }
                    } else if (f214) { /* 214:118-120, 166 */
                        int nInter = AR     ? (nNodes > 1 ? 2 * nNodes : 0)
                                     : AGRS ? nNodes - 1
                                            : nNodes;
                        lat += (nsteps - nInter) * intraLat + nInter * interLat;
                    } else { /* :371-379 */
                        float netOverhead = 0.0f;
                        if (nNodes > 1) {
                            netOverhead = nt_net_overhead(in);
                            if (p == NT_PROTO_SIMPLE)
                                netOverhead *= 3;
                        }
                        intraLat = fmaxf(intraLat, netOverhead);
                        int nInter = v->ring_inter_old ? (AR ? (nNodes > 1 ? 2 * nNodes : 0)
                                                             : nNodes - 1) /* v2.22.3-1:159 */
                                     : nNodes == 1     ? 0
                                     : AR              ? 2 * (nNodes - 1)
                                                       : nNodes - 1;
                        lat += (nsteps - nInter) * intraLat + nInter * interLat;
                    }
                } else if (a ==
                           NT_ALGO_TREE) { /* :381-385 (nRanks/nNodes is an integer division) */
                    if (AR || f214)
                        lat += 2 * ((nRanks / nNodes - 1) * intraLat +
                                    nt_log2i_v(v, nNodes) * interLat);
                } else if (a ==
                           NT_ALGO_COLLNET_DIRECT) { /* :386-388 (0.4 us arity; 214:173 0.5 us) */
                    int q = nRanks / nNodes - 1;
                    lat += (float)(2 * ((q < 1 ? q : 1) * intraLat + q * (f214 ? 0.5 : 0.4)) +
                                   interLat);
                } else if (a == NT_ALGO_COLLNET_CHAIN) { /* :389-390; 214:175 without interLat */
                    lat += 2 * (nRanks / nNodes - 1) * intraLat + (f214 ? 0 : interLat);
                } else if (a == NT_ALGO_NVLS) { /* :391-393 */
                    lat = intraLat;
                    if (nNodes > 1)
                        lat += interLat;
                } else if (a == NT_ALGO_NVLS_TREE) { /* :394-395 */
                    lat += intraLat + 2 * nt_log2i_v(v, nNodes) * interLat;
                } else if (a == NT_ALGO_PAT && AGRS) { /* :396-400; 227:374 assigns 8 + ... */
                    double add = nt_log2i_v(v, nNodes) * (interLat / 3.5) + nRanks * 2.8;
                    lat = v->pat_lat_assign ? (float)(8 + add) : (float)(lat + add);
                }
                cell->lat_us = lat;
            }
        }
    }

    /* enable rules and user overrides: :406-497; 214:181-222 */
    nt_model_env_filter_t def;
    if (!env) {
        memset(&def, 0, sizeof(def));
        env = &def;
    }
    /* the Ring fallback of 2.21-2.23: comm->ringbdw, Ring's bandwidth before the enable rules */
    float ring_bw[NT_NUM_COLLS][NT_NUM_PROTOS];
    for (int c = 0; c < NT_NUM_COLLS; c++)
        for (int p = 0; p < NT_NUM_PROTOS; p++)
            ring_bw[c][p] = out->cell[c][NT_ALGO_RING][p].bw_GBps;
    for (int c = 0; c < NT_NUM_COLLS; c++) {
        const int *ea = env->algo_set ? env->algo[c] : NULL;
        /* v2.23.4-1:306-315: without CollNet, NVLS off across nodes and NVLS_TREE on one node;
         * if NCCL_ALGO left none of Ring, Tree, NVLS, NVLS_TREE, Ring and Tree come back */
        const int ring_tree_back = v->collnet_off_override && !in->collnet_enable && ea &&
                                   !ea[NT_ALGO_RING] && !ea[NT_ALGO_TREE] &&
                                   (nNodes > 1 || !ea[NT_ALGO_NVLS]) &&
                                   (nNodes == 1 || !ea[NT_ALGO_NVLS_TREE]);
        for (int a = 0; a < v->nalgos; a++) {
            int algo_env = env->algo_set ? env->algo[c][a] : 1;
            if (ring_tree_back && (a == NT_ALGO_RING || a == NT_ALGO_TREE))
                algo_env = 1;
            if (f214 && c != NT_COLL_ALLREDUCE)
                algo_env = 1; /* 214:220-221 AllReduce only */
            int algo_rule = 1;
            if (f214) { /* 214:196-210 */
                if (!in->collnet_enable &&
                    (a == NT_ALGO_COLLNET_DIRECT || a == NT_ALGO_COLLNET_CHAIN))
                    algo_rule = 0;
                if (in->collnet_enable && in->nvs_count == 0 && a == NT_ALGO_COLLNET_DIRECT)
                    algo_rule = 0;
                if (!in->collnet_enable && env->algo_set && c == NT_COLL_ALLREDUCE &&
                    !env->algo[c][NT_ALGO_RING] && !env->algo[c][NT_ALGO_TREE] &&
                    (a == NT_ALGO_RING || a == NT_ALGO_TREE))
                    algo_env = 1; /* 214:201-204: NCCL_ALGO=COLLNET without CollNet is ignored */
            } else {              /* :462-476 */
                if (nNodes == 1 && a == NT_ALGO_NVLS_TREE)
                    algo_rule = 0;
                if (!in->collnet_enable &&
                    (a == NT_ALGO_COLLNET_DIRECT || a == NT_ALGO_COLLNET_CHAIN ||
                     (a == NT_ALGO_NVLS && nNodes > 1)))
                    algo_rule = 0;
                if (in->nvs_count == 0 && a == NT_ALGO_COLLNET_DIRECT)
                    algo_rule = 0;
                if (v->collnet_chain_rule && in->collnet_enable && !in->collnet_chain_support &&
                    a == NT_ALGO_COLLNET_CHAIN)
                    algo_rule = 0; /* v2.30.7-1:507 */
            }
            for (int p = 0; p < NT_NUM_PROTOS; p++) {
                nt_model_cell_t *cell = &out->cell[c][a][p];
                int pe = env->proto_set ? env->proto[c][p] : (p == NT_PROTO_LL128 ? 2 : 1);
                int proto_rule = 1;
                if (pe == 2 && p == NT_PROTO_LL128) {
                    pe = 1;
                    proto_rule = nt_ll128_default(v, in, c, a);
                }
                int covered =
                    cell->why != NT_CELL_NOT_COVERED && cell->why != NT_CELL_ALGO_DISABLED;
                if (!pe || !proto_rule || !algo_env || !algo_rule)
                    cell->bw_GBps = 0;
                if (a == NT_ALGO_RING && (!pe || !proto_rule) &&
                    v->ring_backup == NT_RING_BACKUP_ENABLED)
                    ring_bw[c][p] = 0; /* v2.22.3-1:318 */
                if (!covered)
                    continue;
                if (cell->why == NT_CELL_OK ||
                    cell->why == NT_CELL_ZERO_BW) { /* a rule or the env says more than "0" */
                    if (!algo_rule)
                        cell->why = NT_CELL_ALGO_DISABLED;
                    else if (!proto_rule)
                        cell->why = NT_CELL_PROTO_DISABLED;
                    else if (!pe || !algo_env)
                        cell->why = NT_CELL_ENV;
                }
            }
        }
    }
    /* v2.23.4-1:342-356 (v2.21.5-1:322-336): a function with no bandwidth left gets Ring's
     * back. Only for the whole table: a masked one cannot tell. */
    if (v->ring_backup != NT_RING_BACKUP_NONE && algo_mask == ~0u) {
        for (int c = 0; c < NT_NUM_COLLS; c++) {
            int available = 0;
            for (int a = 0; a < v->nalgos; a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++)
                    available |= out->cell[c][a][p].bw_GBps != 0;
            if (available)
                continue;
            for (int p = 0; p < NT_NUM_PROTOS; p++) {
                nt_model_cell_t *cell = &out->cell[c][NT_ALGO_RING][p];
                cell->bw_GBps = ring_bw[c][p];
                if (ring_bw[c][p] > 0)
                    cell->why = NT_CELL_OK;
            }
        }
    }
    return NT_OK;
}

double nt_model_time_us(const nt_model_input_t *in, const nt_model_table_t *table, nt_coll_t coll,
                        nt_algo_t algo, nt_proto_t proto, size_t nbytes, int num_pipe_ops,
                        nt_model_time_t *t)
{
    nt_model_time_t r = {0, 0, 1.0, 1.0, 0, -1.0};
    const nt_model_version_t *v = in ? nt_model_version_find(in->version) : NULL;
    if (!v || !table || (unsigned)coll >= NT_NUM_COLLS || (unsigned)algo >= NT_NUM_ALGOS ||
        (unsigned)proto >= NT_NUM_PROTOS) {
        if (t)
            *t = r;
        return -1.0;
    }
    if (num_pipe_ops < 1)
        num_pipe_ops = 1;
    /* ncclTopoGetAlgoTime: tuning.cc:584-600; 214:294-308 */
    float bw = table->cell[coll][algo][proto].bw_GBps;
    float lat = table->cell[coll][algo][proto].lat_us;
    r.lat_us = lat;
    r.bw_GBps = bw;
    if (bw == 0) {
        if (t)
            *t = r;
        return -1.0;
    }
    long logSize = nt_log2i_v(v, (long)(nbytes >> 6));
    if (algo == NT_ALGO_TREE && (coll == NT_COLL_ALLREDUCE || v->family == NT_FAMILY_214) &&
        logSize >= 0 && logSize < 23)
        r.tree_correction = nt_model_tree_correction[proto][logSize]; /* :592 */
    if (v->nvls_tree_correction && algo == NT_ALGO_NVLS_TREE && coll == NT_COLL_ALLREDUCE &&
        logSize >= 0 && logSize < 24 && in->min_sm >= 100 && in->cpu_arch == NT_CPU_ARCH_X86)
        r.tree_correction = nt_model_tree_correction[proto][logSize]; /* v2.29.7-1:596 */
    if (algo == NT_ALGO_RING && proto == NT_PROTO_SIMPLE && in->nnodes > 1 &&
        coll == NT_COLL_ALLREDUCE) {
        if (v->family == NT_FAMILY_214) { /* 214:303-304 */
            if ((double)nbytes >= in->nranks / 16.0 * 65536)
                r.plateau = 1.9;
        } else { /* :593-596: the communicator's channel count */
            int nch = in->comm_nchannels > 0 ? in->comm_nchannels : 1;
            if (nbytes / ((size_t)nch * in->nranks) >= 64)
                r.plateau = in->min_sm < 80 ? 1.9 : 1.4;
        }
    }
    /* :598 Ring: one latency per op; others DIVUP(numPipeOps, NCCL_MAX_DEV_WORK_BATCH_COLLS) */
    r.lat_count =
        algo == NT_ALGO_RING ? num_pipe_ops : (num_pipe_ops + NT_WORK_BATCH - 1) / NT_WORK_BATCH;
    float bwc = bw * (float)r.tree_correction;
    float latp = lat * (float)r.plateau;
    r.time_us = latp * r.lat_count + nbytes / (1000 * bwc);
    if (t)
        *t = r;
    return r.time_us;
}
