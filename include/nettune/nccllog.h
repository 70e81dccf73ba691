/* The one reader of an NCCL debug log's facts for tuning (lib/nccl/nccllog.c): the version banner,
 * the communicator shape, the topology-search graph lines, the NIC speeds, the environment NCCL
 * echoes and the per-call TUNING lines. NCCL's printed latency/bandwidth table has its own
 * reader (nettune/nccl_table.h). Fed one parsed line at a time (nettune/logline.h), so it reads
 * a pure debug log and an nccl-tests output with interleaved NCCL lines alike.
 *
 * Formats (NVIDIA/nccl v2.28.9-1 unless stated):
 *   "NCCL version 2.28.9+cuda12.9"                        src/init.cc:603 VERSION_STRING
 *   "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d"  src/init.cc:1170
 *   "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d"
 *       (bw is bwIntra/bwInter)                            src/graph/search.cc:1201 (2.14: 905)
 *     printed per process in the order ring, tree, [collnet chain, collnet direct], [nvls]
 *     (src/init.cc:1017-1058); older logs print "speed" for "bw"
 *   "NET/IB: [%d] %s:%s:%d/%s provider=%s speed=%d ..." (Mb/s)   src/transport/net_ib.cc:801
 *     (INFO from 2.27: v2.27.3-1 net_ib.cc:716)
 *   "%s set by environment to %s"                          src/misc/param.cc, src/graph/tuning.cc
 *   "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"   src/enqueue.cc:741 (2.24+)
 *   "%s: %ld Bytes -> Algo %d proto %d time %f"            v2.23.4-1 src/enqueue.cc
 *   "%ld Bytes -> Algo %d proto %d time %f"                v2.20.5-1 .. v2.22.3-1 src/enqueue.cc
 *   "Successfully loaded external tuner plugin %s"         src/plugin/tuner.cc:86
 *   "External tuner plugin %s is unsupported"              src/plugin/tuner.cc:83
 *   "TUNER/nettune: tuning file '%s' (...)" / "TUNER/nettune: no tuning file (...)"  nettune's
 *       plugin at communicator creation (plugins/nccl-tuner/src/plugin.c init_common)
 */
#ifndef NETTUNE_NCCLLOG_H
#define NETTUNE_NCCLLOG_H

#include <stddef.h>

#include "nettune/logline.h"

/* Graph slots in the order NCCL computes them (src/init.cc). */
typedef enum nt_nccllog_graph_slot {
    NT_NCCLLOG_RING = 0,
    NT_NCCLLOG_TREE,
    NT_NCCLLOG_COLLNET_CHAIN,
    NT_NCCLLOG_COLLNET_DIRECT,
    NT_NCCLLOG_NVLS,
    NT_NCCLLOG_NUM_GRAPHS
} nt_nccllog_graph_slot_t;

typedef struct nt_nccllog_graph {
    int present; /* a line was read for this slot */
    int pattern; /* NCCL_TOPO_PATTERN_*: 1 BALANCED_TREE 2 SPLIT_TREE 3 TREE 4 RING 5 NVLS
                    6 COLLNET_DIRECT */
    int cross_nic, nchannels, same_channels;
    double bw_intra_GBps, bw_inter_GBps; /* per channel, as printed */
    char type_intra[8], type_inter[8];   /* NCCL's path names: "NVL", "PIX", "NET", ... */
    unsigned long line;
} nt_nccllog_graph_t;

typedef struct nt_nccllog_env {
    char *name, *value;
    unsigned long line;
} nt_nccllog_env_t;

/* One per-call TUNING line: the algorithm and protocol NCCL chose for a call. */
typedef struct nt_nccllog_call {
    char coll[24];            /* "AllReduce", ... ("" for 2.20-2.22 lines, which do not say) */
    unsigned long long bytes; /* as printed: count x type size (2.24+), NCCL's nBytes before */
    char algo[24], proto[16]; /* as printed: a name ("RING", 2.24+) or NCCL's index ("1") */
    unsigned long line;
} nt_nccllog_call_t;

typedef struct nt_nccllog {
    int version;                     /* NCCL_VERSION_CODE (2.28.9 = 22809), 0 when no banner */
    int cuda_runtime;                /* "+cuda12.9" -> 12090, 0 unknown */
    int nranks, nnodes, local_ranks; /* the first comm line; -1 unknown */
    unsigned long comm_line;
    nt_nccllog_graph_t graph[NT_NCCLLOG_NUM_GRAPHS]; /* of the first process printing graphs */
    double *nic_Gbps; /* "speed=" of each NET/IB device line of that process, Gb/s */
    size_t nnics;
    nt_nccllog_env_t *env; /* first value per name, in log order */
    size_t nenv;
    nt_nccllog_call_t *calls; /* every per-call TUNING line (at most NT_NCCLLOG_MAX_CALLS) */
    size_t ncalls;
    unsigned long nccl_lines; /* lines with NCCL's INFO/WARN prefix */
    /* the tuner plugin this log says NCCL loaded ("" none said; NCCL_TUNER_PLUGIN's echo is in
     * env), and what nettune's plugin said of its file: 1 a file loaded (its path in
     * tuner_file), -1 "no tuning file", 0 nothing said */
    char tuner_loaded[256];
    int tuner_unsupported; /* "External tuner plugin %s is unsupported" seen */
    int nettune_file;
    char tuner_file[256];
    /* reader state */
    char graph_proc[128]; /* "host:pid" of the process whose graphs are kept */
    int graph_next;
} nt_nccllog_t;

#define NT_NCCLLOG_MAX_CALLS 65536
#define NT_NCCLLOG_MAX_ENV 1024

/* nt_nccllog_init - an empty log (version 0, shape -1). */
void nt_nccllog_init(nt_nccllog_t *g);

/* nt_nccllog_cleanup - frees what the reader allocated; the log is empty again. */
void nt_nccllog_cleanup(nt_nccllog_t *g);

/* nt_nccllog_feed - reads one line (parsed by nt_line_parse) found at line `lineno`. Returns 1
 * when the line gave a fact, 0 otherwise. Never fails (out of memory drops the fact). The
 * numbers of the comm and graph lines are decimals in 0..INT_MAX: a line with another is no
 * fact. */
int nt_nccllog_feed(nt_nccllog_t *g, const nt_logline_t *l, unsigned long lineno);

/* nt_nccllog_env_get - the value NCCL echoed for `name`, or NULL. */
const char *nt_nccllog_env_get(const nt_nccllog_t *g, const char *name);

/* nt_nccllog_version_parse - the one NCCL version parser (logs, --nccl-version, the model's
 * tags): "2.28.9" (also "2.28.9-1", "2.28.9+cuda12.9", "2.28" = patch 0, leading spaces, a
 * space and more after it) to NCCL_VERSION_CODE (major*10000 + minor*100 + patch, NCCL >= 2.9
 * numbering, NVIDIA/nccl src/nccl.h.in); -1 if not one (major below 2, a part above 99, other
 * characters right after the number). */
int nt_nccllog_version_parse(const char *s);

#endif
