/* NCCL's tuning constants and formula variants per release (tuner/nccl_versions.c): a version is
 * data, not a fork. Internal to the tuner model (tuner/model.c). */
#ifndef NETTUNE_TUNER_NCCL_VERSIONS_H
#define NETTUNE_TUNER_NCCL_VERSIONS_H

#include "model.h"

#define NT_NUM_COMPCAPS                                                                            \
    4 /* Volta, Ampere, Hopper, Blackwell (v2.28.9-1 src/include/plugin/nccl_tuner.h:48-51) */
#define NT_NUM_SCALES 3 /* 1 node, 2 nodes, 3+ nodes (tuning.cc:250) */
#define NT_NUM_HW 3     /* NVLINK, PCI, NET */
#define NT_HW_NVLINK 0
#define NT_HW_PCI 1
#define NT_HW_NET 2

/* The model family: 2.14 computes differently in many small places (see model.c, "F214"). */
typedef enum nt_model_family { NT_FAMILY_214 = 0, NT_FAMILY_227 } nt_model_family_t;

/* LL128 default gating (the protoEnable == 2 branch). */
typedef enum nt_ll128_gate {
    NT_LL128_GATE_214 =
        0, /* v2.14.3-1 tuning.cc:216-217: inter <= PXB, intra <= NVL, SM 70 or 80 only */
    NT_LL128_GATE_2273, /* v2.27.3-1 tuning.cc:460: inter <= PXB, or SM90+ and inter <= P2C
                           (LL128_C2C) / PXN */
    NT_LL128_GATE_2275, /* v2.27.5-1+ (v2.28.9-1 tuning.cc:480-494): SM90+ && LL128_C2C: inter <=
                           PXN, else <= PXB */
    NT_LL128_GATE_224,  /* v2.24.3-1 tuning.cc: as 2.26 with SM 70/80/90 only */
    NT_LL128_GATE_226,  /* v2.26.6-1 tuning.cc:429-439: inter <= PXB, or SM90+ and <= PXN; SM
                           70/80/90/100/120 only */
    NT_LL128_GATE_230   /* v2.30.3-1+ (v2.30.7-1 tuning.cc:518-536): the 2.27.5 gate, and mixed
                           compute capabilities allowed when the lowest is SM90+ (:533) */
} nt_ll128_gate_t;

/* The Ring fallback of 2.21-2.23 (comm->ringbdw): a function left with no bandwidth at all gets
 * its Ring cells back. */
typedef enum nt_ring_backup {
    NT_RING_BACKUP_NONE = 0, /* 2.14, 2.24+ */
    NT_RING_BACKUP_ALL,      /* v2.21.5-1 tuning.cc:322-335: every Ring protocol's bandwidth */
    NT_RING_BACKUP_ENABLED   /* v2.22.3-1 tuning.cc:318 (= v2.23.4-1:339): only the protocols that
                                stay enabled (LL128 gate and NCCL_PROTO) */
} nt_ring_backup_t;

typedef struct nt_model_version {
    int from, to;    /* NCCL_VERSION_CODE range (inclusive) */
    const char *tag; /* the NVIDIA/nccl tag the data was read from */
    nt_model_family_t family;
    int nalgos; /* NCCL_NUM_ALGORITHMS: 4 (2.14), 6 (2.21-2.22), 7 (2.23+) */
    double base_lat[NT_NUM_ALGOS][NT_NUM_PROTOS];
    double hw_lat[NT_NUM_HW][NT_NUM_ALGOS][NT_NUM_PROTOS];
    double ll_max_bw[NT_NUM_COMPCAPS][NT_NUM_SCALES];
    double per_ch_ring_ll128[NT_NUM_COMPCAPS][NT_NUM_SCALES];
    double per_ch_tree_ll128[NT_NUM_COMPCAPS][NT_NUM_SCALES];
    double per_ch_tree[NT_NUM_COMPCAPS][NT_NUM_SCALES];
    double per_ch_nvls_tree[NT_NUM_COMPCAPS][NT_NUM_SCALES];
    float nvls_eff[NT_NUM_COMPCAPS];
    /* variant switches */
    int nvls_bw_228;        /* 1: 2.28+ NVLS/NVLS_TREE busBw (nvlsEfficiency, >= 2 channels, ratio
                               nRanks/nsteps) */
    int v226;               /* 1: 2.26: NVLS bw min(bwIntra, bwInter) for every function (v2.26.6-1
                             * tuning.cc:251); CollNetDirect AllGather/ReduceScatter ppn x bw with its
                             * own heads check and a 0.95..0.85 ratio by ppn (:265-279); no NVLS heads
                             * rule (2.27 :301-318 adds it) */
    int pat_sm60;           /* 1: ncclPatEnable needs SM60+ (from 2.26; v2.28.9-1 tuning.cc:204) */
    int tree_pattern_graph; /* 1: Tree x.85 tests the Tree graph's own pattern (to 2.25), else
                             * comm->maxTreePattern (from 2.26, v2.26.2-1 tuning.cc) */
    int max_cc_idx;         /* highest compCapIndex: 2 (Hopper) in 2.24, 3 (Blackwell) from 2.25 */
    int pat_lat_assign; /* 1: 2.27 sets PAT latency to 8 + ... (base row 0); 0: adds to the base row
                         */
    nt_ll128_gate_t ll128_gate;
    int nvls_tree_correction; /* 1: 2.29.2+ applies the Tree correction to NVLS_TREE AllReduce on
                                 SM100+ x86 */
    int tree_corr_len;        /* entries of treeCorrectionFactor used (23; the 2.29 table has 24) */
    int env_per_coll;         /* 1: NCCL_ALGO/NCCL_PROTO take "func:list;..." (2.24+) */
    /* 2.21-2.23 (the differences from 2.24, v2.23.4-1 vs v2.24.3-1 tuning.cc) */
    int log2i_zero;   /* 1: log2i(0) is 0 (2.14, v2.21.5-1 src/include/utils.h:46-50), else -1 */
    int ll_row_mixed; /* 1: a MIXED CPU vendor takes the AMD llMaxBws row (2.24+,
                         v2.24.3-1 tuning.cc:213-214); before, AMD only (v2.23.4-1:151) */
    double
        pat_bw; /* PAT busBw factor: .85 in 2.23 (v2.23.4-1:193), .75 from 2.24 (v2.24.3-1:256) */
    int ring_inter_old;     /* 1: Ring inter-node steps 2*nNodes for AllReduce (v2.22.3-1:159-161),
                               else 2*(nNodes-1) (v2.23.4-1:258) */
    int ring_ll128_ppn1;    /* 1: Ring LL128 x0.7 below 2 ranks per node (v2.22.3-1:179) */
    int algbw_collnet_only; /* 1: only CollNetDirect AllGather/ReduceScatter skip the busBw ->
                               algBw ratio (v2.22.3-1:211), NVLS ones take 5/6; else every
                               non-Ring algorithm does (v2.23.4-1:221) */
    int inter_lat_plain;    /* 1: interLat is the algorithm's NET row (v2.22.3-1:225); else with one
                               rank per node the Tree NET row (v2.23.4-1:235-237) */
    int collnet_off_override; /* 1: without CollNet, NCCL_ALGO naming only CollNet turns Ring and
                                 Tree back on (v2.23.4-1:305-320, v2.22.3-1:284-299) */
    nt_ring_backup_t ring_backup;
    int collnet_chain_rule; /* 1: CollNetChain off where the communicator lacks chain support
                               (comm->collNetChainSupport, v2.30.7-1 tuning.cc:508) */
} nt_model_version_t;

/* nt_model_version_find - the data for VERSION (NCCL_VERSION_CODE), NULL when not modelled. */
const nt_model_version_t *nt_model_version_find(int version);

/* Tree correction factors by log2(nBytes/64) (v2.28.9-1 tuning.cc:578-582, v2.29.7-1:581-585). */
extern const float nt_model_tree_correction[NT_NUM_PROTOS][24];

/* nt_model_compute_masked - nt_model_compute() for the algorithms in ALGO_MASK (bit a) only;
 * the other cells stay "not covered". For the fitter (tuner/model_fit.c). */
nt_status_t nt_model_compute_masked(const nt_model_input_t *in, const nt_model_env_filter_t *env,
                                    nt_model_table_t *out, unsigned algo_mask);

#endif
