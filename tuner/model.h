/* nettune tuner: NCCL's cost model, per NCCL version, as data (docs/tuner-model.md).
 *
 * Re-implements NCCL's ncclTopoTuneModel() and ncclTopoGetAlgoTime() (NVIDIA/nccl
 * src/graph/tuning.cc) for the versions in tuner/nccl_versions.c
 * (2.14, 2.21 to 2.30): the per-version constants are tables and the formula
 * differences small variant switches (tuner/nccl_versions.c), so a version is data, not a fork.
 * docs/tuner-model.md gives every formula with its source line.
 *
 * Indices are NCCL's own (NVIDIA/nccl v2.28.9-1 src/include/device.h and nccl.h), so a table
 * here and NCCL's comm->latencies/bandwidths[coll][algo][proto] line up cell for cell:
 *   algorithms TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6
 *   protocols  LL 0, LL128 1, SIMPLE 2
 *   functions  Broadcast 0, Reduce 1, AllGather 2, ReduceScatter 3, AllReduce 4
 * Versions before 2.23 have fewer algorithms (no PAT; no NVLS before 2.17); their cells for the
 * missing algorithms are "not covered".
 *
 * Layers of eligibility:
 *   1. the model offers a cell (coverage loops, enable rules, LL128 gating, NVLS >= 2 channels,
 *      NVLS_TREE > 1 node, PAT conditions): nt_model_cell_t.why == NT_CELL_OK;
 *   2. NCCL drops a cell per call by datatype / reduction op: nt_model_call_allows();
 *   3. the job's NCCL_ALGO / NCCL_PROTO: nt_model_env_filter_parse(), applied by
 *      nt_model_compute() when given (as NCCL applies it at init, so the printed table shows it).
 *
 * Every input fact carries a label (measured | assumed | inferred) that the printer reports.
 * No MPI, CUDA or NCCL is linked: the model is plain arithmetic on the inputs. */
#ifndef NETTUNE_TUNER_MODEL_H
#define NETTUNE_TUNER_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nettune/status.h"

typedef enum nt_algo {
    NT_ALGO_TREE = 0,
    NT_ALGO_RING = 1,
    NT_ALGO_COLLNET_DIRECT = 2,
    NT_ALGO_COLLNET_CHAIN = 3,
    NT_ALGO_NVLS = 4,
    NT_ALGO_NVLS_TREE = 5,
    NT_ALGO_PAT = 6,
    NT_NUM_ALGOS = 7
} nt_algo_t;

typedef enum nt_proto {
    NT_PROTO_LL = 0,
    NT_PROTO_LL128 = 1,
    NT_PROTO_SIMPLE = 2,
    NT_NUM_PROTOS = 3
} nt_proto_t;

typedef enum nt_coll {
    NT_COLL_BROADCAST = 0,
    NT_COLL_REDUCE = 1,
    NT_COLL_ALLGATHER = 2,
    NT_COLL_REDUCESCATTER = 3,
    NT_COLL_ALLREDUCE = 4,
    NT_NUM_COLLS = 5
} nt_coll_t;

/* ncclDataType_t values (NVIDIA/nccl v2.28.9-1 src/nccl.h.in): fp8 types exist from 2.24. */
typedef enum nt_dtype {
    NT_DTYPE_INT8 = 0,
    NT_DTYPE_UINT8 = 1,
    NT_DTYPE_INT32 = 2,
    NT_DTYPE_UINT32 = 3,
    NT_DTYPE_INT64 = 4,
    NT_DTYPE_UINT64 = 5,
    NT_DTYPE_FLOAT16 = 6,
    NT_DTYPE_FLOAT32 = 7,
    NT_DTYPE_FLOAT64 = 8,
    NT_DTYPE_BFLOAT16 = 9,
    NT_DTYPE_FP8_E4M3 = 10,
    NT_DTYPE_FP8_E5M2 = 11,
    NT_NUM_DTYPES = 12
} nt_dtype_t;

/* ncclRedOp_t values (src/nccl.h.in): sum 0, prod 1, max 2, min 3, avg 4. NT_REDOP_NONE for
 * collectives that do not reduce (Broadcast, AllGather). */
typedef enum nt_redop {
    NT_REDOP_SUM = 0,
    NT_REDOP_PROD = 1,
    NT_REDOP_MAX = 2,
    NT_REDOP_MIN = 3,
    NT_REDOP_AVG = 4,
    NT_REDOP_NONE = 5
} nt_redop_t;

/* NCCL's path types (src/graph/topo.h, v2.27.7-1:62-98), in NCCL's order, which the model
 * compares (LL128 gating: typeIntra <= NVB, typeInter <= PXB or PXN). 2.14 lacks C2C and P2C;
 * its order is the same. Spelled as NCCL prints them in graph lines ("type NVL/PIX"). */
typedef enum nt_path {
    NT_PATH_LOC = 0,
    NT_PATH_NVL,
    NT_PATH_NVB,
    NT_PATH_C2C,
    NT_PATH_PIX,
    NT_PATH_PXB,
    NT_PATH_P2C,
    NT_PATH_PXN,
    NT_PATH_PHB,
    NT_PATH_SYS,
    NT_PATH_NET,
    NT_PATH_DIS,
    NT_NUM_PATHS
} nt_path_t;

typedef enum nt_cpu_arch {
    NT_CPU_ARCH_X86 = 0,
    NT_CPU_ARCH_POWER,
    NT_CPU_ARCH_ARM,
    NT_CPU_ARCH_OTHER
} nt_cpu_arch_t;
typedef enum nt_cpu_vendor {
    NT_CPU_VENDOR_INTEL = 0,
    NT_CPU_VENDOR_AMD,
    NT_CPU_VENDOR_ZHAOXIN,
    NT_CPU_VENDOR_MIXED,
    NT_CPU_VENDOR_OTHER
} nt_cpu_vendor_t;

/* Where an input fact came from. */
typedef enum nt_fact_label {
    NT_FACT_ASSUMED = 0, /* a default nettune chose; nothing said otherwise */
    NT_FACT_MEASURED,    /* printed by NCCL (log) or measured by the probe */
    NT_FACT_INFERRED /* derived: NCCL's search rules on nominal speeds, or fitted from table cells
                      */
} nt_fact_label_t;

/* Graph facts of one algorithm's topology graph (struct ncclTopoGraph, src/graph/topo.h). */
typedef enum nt_graph_fact {
    NT_GF_NCHANNELS = 0,
    NT_GF_BW_INTRA,
    NT_GF_BW_INTER,
    NT_GF_TYPE_INTRA,
    NT_GF_TYPE_INTER,
    NT_GF_PATTERN,
    NT_GF_LATENCY_INTER,
    NT_GF_SAME_CHANNELS,
    NT_NUM_GRAPH_FACTS
} nt_graph_fact_t;

typedef struct nt_model_graph {
    int nchannels;        /* graph->nChannels */
    double bw_intra_GBps; /* graph->bwIntra, per channel */
    double bw_inter_GBps; /* graph->bwInter, per channel */
    nt_path_t type_intra; /* graph->typeIntra */
    nt_path_t type_inter; /* graph->typeInter */
    int pattern; /* graph->pattern: NCCL_TOPO_PATTERN_* (BALANCED_TREE 1, SPLIT_TREE 2, TREE 3, RING
                    4, NVLS 5, COLLNET_DIRECT 6) */
    double
        latency_inter_us; /* graph->latencyInter (2.19+; 0 unless the net plugin reports latency) */
    int same_channels;    /* graph->sameChannels (Ring Broadcast/Reduce latency) */
    nt_fact_label_t label[NT_NUM_GRAPH_FACTS];
} nt_model_graph_t;

/* Communicator-level facts. */
typedef enum nt_comm_fact {
    NT_CF_VERSION = 0,
    NT_CF_NRANKS,
    NT_CF_NNODES,
    NT_CF_SM,
    NT_CF_CPU,
    NT_CF_CUDA,
    NT_CF_COMM_NCHANNELS,
    NT_CF_COLLNET,
    NT_CF_NVS,
    NT_CF_NET_DEVICE,
    NT_NUM_COMM_FACTS
} nt_comm_fact_t;

typedef struct nt_model_input {
    int version; /* NCCL version as NCCL_VERSION_CODE: major*10000 + minor*100 + patch (22807) */
    int nranks;  /* comm->nRanks */
    int nnodes;  /* comm->nNodes */
    int ppn;     /* ranks per node (localRanks); NCCL itself uses nRanks/nNodes */
    int min_sm, max_sm; /* minCompCap / maxCompCap, e.g. 90 */
    nt_cpu_arch_t cpu_arch;
    nt_cpu_vendor_t cpu_vendor;
    int cuda_runtime;   /* CUDART_VERSION NCCL was built with, e.g. 12090 (the 11.8 LL128 rule) */
    int comm_nchannels; /* comm->nChannels (Ring Simple plateau, tuner channel cap) */
    int collnet_enable; /* comm->config.collnetEnable (CollNet usable) */
    int collnet_heads;  /* comm->collNetHeadsNum */
    int collnet_ag_rs;  /* the CollNet plugin offers iallgather/ireducescatter */
    int collnet_chain_support; /* comm->collNetChainSupport (read from 2.30.7; assumed 1) */
    int nvs_count;             /* NVSwitches in the topology (CollNetDirect needs one) */
    int net_device_host;       /* netDeviceType == NCCL_NET_DEVICE_HOST (PAT) */
    int max_tree_pattern;      /* comm->maxTreePattern (Tree x0.85 when NCCL_TOPO_PATTERN_TREE) */
    /* Per algorithm, as NCCL indexes them; NCCL feeds NVLS_TREE the NVLS graph and PAT the Tree
     * graph (v2.28.9-1 src/init.cc:854), 2.14 both CollNets the CollNet graph, so graph[NVLS_TREE],
     * graph[PAT] (and graph[COLLNET_CHAIN] for 2.14) are not read. NCCL sets the Tree and Ring
     * nChannels both to their minimum (init.cc:1192). */
    nt_model_graph_t graph[NT_NUM_ALGOS];
    nt_fact_label_t label[NT_NUM_COMM_FACTS];
    /* NCCL parameters read by tuning.cc (-2 = NCCL's default) */
    int env_nthreads, env_ll128_nthreads, env_pat_enable, env_ll128_c2c;
    double env_net_overhead_ns;
} nt_model_input_t;

/* nt_model_input_init - fill IN with the defaults nettune assumes (all labelled assumed):
 * VERSION, NRANKS, NNODES as given (labelled measured), ppn = nranks/nnodes, SM 90, x86 Intel,
 * CUDA 12.9, host network, Tree/Ring graphs 1 channel at 0 GB/s of type NVL/PIX, the CollNet
 * and NVLS graphs empty (0 channels), CollNet off (chain support 1), NCCL's parameter defaults.
 * Errors: NT_ERR_INVALID for nranks < 1, nnodes < 1 or nnodes > nranks. */
nt_status_t nt_model_input_init(nt_model_input_t *in, int version, int nranks, int nnodes);

/* Why a cell has bandwidth 0 (NCCL prints it as "lat/0.0"). */
typedef enum nt_cell_why {
    NT_CELL_OK = 0,         /* offered: bandwidth > 0 */
    NT_CELL_NOT_COVERED,    /* the coverage loops skip it (latency stays 0): e.g. Tree Broadcast */
    NT_CELL_ALGO_DISABLED,  /* an enable rule: NVLS_TREE on 1 node, CollNet off, no NVSwitch, NVLS <
                               2 channels */
    NT_CELL_PROTO_DISABLED, /* LL128 gating at its default setting */
    NT_CELL_ZERO_BW, /* the formula gives 0 (CollNet LL/LL128, graph bw 0, AG/RS heads rule) */
    NT_CELL_ENV      /* the job's NCCL_ALGO / NCCL_PROTO */
} nt_cell_why_t;

typedef struct nt_model_cell {
    float lat_us;  /* comm->latencies[c][a][p] as NCCL computes it (float, as NCCL stores it) */
    float bw_GBps; /* comm->bandwidths[c][a][p] (algorithm bandwidth), 0 when disabled */
    nt_cell_why_t why;
} nt_model_cell_t;

typedef struct nt_model_table {
    int version; /* the version the table is for */
    nt_model_cell_t cell[NT_NUM_COLLS][NT_NUM_ALGOS][NT_NUM_PROTOS];
    int max_threads[NT_NUM_ALGOS][NT_NUM_PROTOS]; /* comm->maxThreads, as printed */
} nt_model_table_t;

/* Layer 3: the job's NCCL_ALGO / NCCL_PROTO, per function (the "func:list;..." syntax of
 * NVIDIA/nccl v2.24+ tuning.cc parseList(); older versions take one list for all functions). */
typedef struct nt_model_env_filter {
    int algo[NT_NUM_COLLS][NT_NUM_ALGOS]; /* 1 enabled, 0 disabled */
    int proto[NT_NUM_COLLS]
             [NT_NUM_PROTOS]; /* 1 enabled, 0 disabled, 2 default (LL128 gating applies) */
    int algo_set, proto_set;  /* the variable was given */
} nt_model_env_filter_t;

/* nt_model_env_filter_parse - parse NCCL_ALGO (ALGO, may be NULL) and NCCL_PROTO (PROTO, may be
 * NULL) as NCCL VERSION would (names case-insensitive, "^" negates, "func:list;..." from 2.24).
 * ERR (may be NULL) receives one line naming the bad token. Errors: NT_ERR_INVALID. */
nt_status_t nt_model_env_filter_parse(int version, const char *algo, const char *proto,
                                      nt_model_env_filter_t *f, char *err, size_t errlen);

/* NT_MODEL_MAX_RANKS - the most ranks the model computes for: NCCL's own int arithmetic
 * (v2.28.9-1 tuning.cc:268 nsteps = 2 * (nRanks - 1); v2.14.3-1 tuning.cc:118-120 2 * nNodes)
 * stays an int. */
#define NT_MODEL_MAX_RANKS ((1 << 30) - 1)

/* nt_model_compute - compute the table NCCL VERSION (in->version) would print for IN, with ENV
 * (may be NULL: no NCCL_ALGO/NCCL_PROTO) applied as NCCL applies it. Errors: NT_ERR_UNSUPPORTED
 * when the version is not modelled (nt_model_version_supported), NT_ERR_INVALID for bad inputs
 * (among them more than NT_MODEL_MAX_RANKS ranks). */
nt_status_t nt_model_compute(const nt_model_input_t *in, const nt_model_env_filter_t *env,
                             nt_model_table_t *out);

/* nt_model_version_supported - 1 when VERSION (NCCL_VERSION_CODE) is modelled, else 0. */
int nt_model_version_supported(int version);

/* Per-call factors NCCL applies in ncclTopoGetAlgoTime() (v2.28.9-1 tuning.cc:584-600) and
 * leaves out of its printed table, kept separate from the table's cell. */
typedef struct nt_model_time {
    double lat_us;          /* the table's latency */
    double bw_GBps;         /* the table's bandwidth */
    double tree_correction; /* Tree AllReduce bandwidth factor by size (1 otherwise) */
    double plateau;         /* Ring Simple multi-node AllReduce latency factor (1 otherwise) */
    int lat_count;          /* latency multiples: numPipeOps (Ring) or DIVUP(numPipeOps, batch) */
    double time_us; /* lat_us*plateau*lat_count + nBytes/(1000*bw_GBps*tree_correction); -1 if bw is
                       0 */
} nt_model_time_t;

/* nt_model_time_us - NCCL's time estimate for one call of NBYTES (the collective's nBytes as
 * NCCL counts it) with NUM_PIPE_OPS aggregated ops (1 for a lone call) on IN's table TABLE.
 * Returns time_us (-1 when the cell is disabled) and fills T (may be NULL) with the factors. */
double nt_model_time_us(const nt_model_input_t *in, const nt_model_table_t *table, nt_coll_t coll,
                        nt_algo_t algo, nt_proto_t proto, size_t nbytes, int num_pipe_ops,
                        nt_model_time_t *t);

/* Layer 2: nt_model_call_allows - 1 when NCCL VERSION would still consider ALGO/PROTO for a
 * call of COLL with DTYPE and OP (NVLS only for some types and ops, never avg; no PAT
 * ReduceScatter with avg; CollNet type limits), else 0. Source: enqueue.cc (see
 * docs/tuner-model.md). */
int nt_model_call_allows(int version, nt_coll_t coll, nt_algo_t algo, nt_proto_t proto,
                         nt_dtype_t dtype, nt_redop_t op);

/* nt_model_eligible - all three layers for one call: 1 when NCCL would time ALGO/PROTO for a
 * call of COLL with DTYPE/OP on the communicator IN whose table is TABLE (the cell has bandwidth,
 * i.e. the model offers it and the job's NCCL_ALGO/NCCL_PROTO allow it; nt_model_call_allows();
 * and the shape rules of updateCollCostTable, v2.28.9-1 src/enqueue.cc:1792-1806: one rank ->
 * Ring/Simple only, CollNetDirect (and from 2.28 CollNetChain) at most 8 local ranks, NVLS other
 * than AllReduce at most 32 local ranks). 0 means NCCL's cost table holds IGNORE for the cell. */
int nt_model_eligible(const nt_model_input_t *in, const nt_model_table_t *table, nt_coll_t coll,
                      nt_algo_t algo, nt_proto_t proto, nt_dtype_t dtype, nt_redop_t op);

/* Names: NCCL's spellings ("Tree", "CollNetDirect", "LL128", "AllReduce"); NULL when out of range.
 */
const char *nt_model_algo_name(int algo);
const char *nt_model_proto_name(int proto);
const char *nt_model_coll_name(int coll);
const char *nt_model_path_name(int path);
/* Parsers of those names (case-insensitive, also "NVLS_TREE"/"COLLNET_DIRECT"); -1 when unknown. */
int nt_model_algo_parse(const char *s);
int nt_model_proto_parse(const char *s);
int nt_model_coll_parse(const char *s);
int nt_model_path_parse(const char *s);

/* nt_model_print_table - write TABLE in NCCL's own INFO(NCCL_TUNING) layout for table->version
 * (9/12/15 columns before 2.18, block layout from 2.18, three blocks from 2.23), each line
 * prefixed by PREFIX (e.g. "host:1:1 [0] NCCL INFO", may be NULL: none). */
void nt_model_print_table(FILE *out, const nt_model_table_t *table, const char *prefix);

#endif
