/* The GPU probes' rules, without CUDA: expected figures of GPU links, the path class of a GPU
 * pair, the measurement plan with its time budgets, link ids, and the GPU verdict rules
 * (NVLink state, PCIe under load, peer access, counters, GPU blame). docs/gpu.md explains them.
 * The measurements themselves are in probes/gpu/ (through lib/node/cuda.c). */
#ifndef NETTUNE_GPU_H
#define NETTUNE_GPU_H

#include <stddef.h>

#include "nettune/nvml.h"
#include "nettune/report.h"
#include "nettune/status.h"

/* --gpu-probes bits. */
#define NT_GPU_PROBE_H2D 0x01u
#define NT_GPU_PROBE_D2H 0x02u
#define NT_GPU_PROBE_BIDIR 0x04u
#define NT_GPU_PROBE_P2P 0x08u
#define NT_GPU_PROBE_LATENCY 0x10u
#define NT_GPU_PROBE_LOCAL 0x20u
#define NT_GPU_PROBE_ALL 0x3fu

/* nt_gpu_probes_parse - "h2d,d2h,bidir,p2p,latency,local" (any subset, any order; "all") into
 * NT_GPU_PROBE_* bits. NT_ERR_INVALID with err "unknown GPU probe 'x' in --gpu-probes (use
 * h2d, d2h, bidir, p2p, latency, local)" or "--gpu-probes is empty". */
nt_status_t nt_gpu_probes_parse(const char *s, unsigned *mask, char *err, size_t errlen);

/* nt_nvlink_link_GBps - data rate of one NVLink, one direction, GB/s, by NVLink version:
 * 1 (P100) 20, 2 (V100) 25, 3 (A100) 25, 4 (H100/H200) 25, 5 (B200/GB200) 50; NaN unknown.
 * NVIDIA's per-GPU totals: P100 160 GB/s bidirectional over 4 links, V100 300 over 6, A100 600
 * over 12, H100 900 over 18, B200 1800 over 18 (product briefs); REFERENCE: H100 pair via
 * NVSwitch 450 GB/s per direction. */
double nt_nvlink_link_GBps(int version);

/* nt_gpu_model_nvlinks - NVLinks a GPU model has up in a healthy system: SXM/NVSwitch parts
 * V100-SXM2/SXM3 6, A100-SXM 12, A800 8, H100 SXM ("H100 80GB HBM3", "H100 SXM") 18, H800 8,
 * H200 18, B200/GB200 18; 0 for PCIe boards ("PCIe" in the name, L40, T4 ...); -1 unknown
 * (then no NVLink-down verdict without --expect nvlinks=N). */
int nt_gpu_model_nvlinks(const char *name);

/* nt_gpu_nearest_numa - the remote NUMA node for the .remote_numa figure: among nodes (NUMA
 * nodes with memory, n of them) other than local, the one with the smallest distance in
 * distance_line (the local node's /sys/devices/system/node/node<local>/distance: one distance
 * per node id, space-separated); without distances the lowest other id. -1 when none. */
int nt_gpu_nearest_numa(const char *distance_line, int local, const int *nodes, int n);

/* nt_gpu_pcie_line_GBps - one direction of the GPU's PCIe link at its maximum generation and
 * width (what H2D/D2H are held to); NaN when NVML does not say. */
double nt_gpu_pcie_line_GBps(const nt_gpu_info_t *g);

/* nt_gpu_nvlinks_between - active NVLinks that carry a's traffic to b: links of a whose remote
 * end is b's bus id, or, when both GPUs reach an NVSwitch, the smaller of their active switch
 * links. *version gets the lowest NVLink version of those links (0 unknown). 0 = none. */
int nt_gpu_nvlinks_between(const nt_gpu_info_t *a, const nt_gpu_info_t *b, int *version);

/* nt_gpu_pair_path - the path class of a GPU pair for the report's "path": "NV<n>" when n
 * NVLinks connect them, else pcie_path ("PIX", "PXB", "PHB", "NODE", "SYS" from NVML or hwloc;
 * NULL/"" = "unknown"). *line_GBps = n x per-link rate for NVLink; for PIX/PXB the lower PCIe
 * line rate of the two GPUs; NaN otherwise (host-bridge and CPU paths are judged by peers
 * only: their P2P rate depends on the CPU, not on the link). */
void nt_gpu_pair_path(const nt_gpu_info_t *a, const nt_gpu_info_t *b, const char *pcie_path,
                      char *path, size_t len, double *line_GBps);

/* One measurement of the plan. */
typedef enum nt_gpu_test_kind {
    NT_GPU_T_H2D,       /* host -> device copy */
    NT_GPU_T_D2H,       /* device -> host copy */
    NT_GPU_T_BIDIR,     /* both at once (two links: pcie_h2d.bidir, pcie_d2h.bidir) */
    NT_GPU_T_HOST_LAT,  /* host <-> device flag latency (a sample of the pcie_h2d link) */
    NT_GPU_T_LOCAL,     /* device-local copy (gpu_local) */
    NT_GPU_T_P2P_WRITE, /* CE copy gpu -> peer, issued on gpu (p2p.write) */
    NT_GPU_T_P2P_READ,  /* CE copy peer -> gpu, issued on gpu (p2p.read) */
    NT_GPU_T_P2P_BIDIR, /* both directions at once (p2p.bidir) */
    NT_GPU_T_P2P_SM,    /* SM-kernel copy gpu -> peer (p2p.sm) */
    NT_GPU_T_P2P_LAT,   /* flag ping-pong (a sample of the p2p.write link) */
    NT_GPU_T_COUNT
} nt_gpu_test_kind_t;

typedef struct nt_gpu_test {
    nt_gpu_test_kind_t kind;
    int gpu, peer;   /* NVML indices; peer -1 for single-GPU tests */
    int remote_numa; /* host memory on the nearest remote NUMA node (variant .remote_numa) */
    int sm;          /* an SM kernel copies instead of the copy engine (variant .sm) */
    double budget_s; /* time this test may take (copies are cut to fit) */
} nt_gpu_test_t;

typedef struct nt_gpu_plan_params {
    int ngpus;
    unsigned probes;    /* NT_GPU_PROBE_* */
    size_t bytes;       /* --gpu-buffer-size */
    int full;           /* --full: every variant, more samples */
    int remote_numa;    /* the node has a second NUMA node with memory */
    int sm_ok;          /* kernels load (else the .sm variants and latency are left out) */
    const int *peer_ok; /* ngpus x ngpus: 1 when a may access b (NULL = all) */
} nt_gpu_plan_params_t;

/* Per-test budgets, seconds (docs/gpu.md "Time"): a host copy 0.04, a host latency 0.01, a
 * device-local copy 0.02, a pair copy 0.01, a pair latency 0.003; --full doubles them. */
#define NT_GPU_BUDGET_HOST 0.04
#define NT_GPU_BUDGET_HOST_LAT 0.01
#define NT_GPU_BUDGET_LOCAL 0.02
#define NT_GPU_BUDGET_PAIR 0.01
#define NT_GPU_BUDGET_PAIR_LAT 0.003
/* Setup time the plan leaves for contexts, allocations and the kernel module of 8 GPUs in
 * the 8 s of a prolog: the plan itself must stay under 8 - 2.5 s. */
#define NT_GPU_PLAN_LIMIT_S 5.5

/* nt_gpu_plan - the measurements of one node, in run order: per GPU H2D, D2H, bidir (local
 * NUMA CE; .remote_numa CE when remote_numa; .sm when sm_ok), host latency, local copy; then
 * per ordered pair with peer access write, read, SM copy and latency, per unordered pair bidir.
 * Only the families of params->probes. *out is malloc'ed (free it), *n may be 0.
 * NT_ERR_INVALID (ngpus < 0), NT_ERR_NOMEM. */
nt_status_t nt_gpu_plan(const nt_gpu_plan_params_t *params, nt_gpu_test_t **out, size_t *n);

/* nt_gpu_plan_budget - the sum of the tests' budgets, seconds. */
double nt_gpu_plan_budget(const nt_gpu_test_t *t, size_t n);

/* nt_gpu_copies_per_sample - copies of bytes in one sample so that `samples` samples fit in
 * budget_s, given one copy took first_s: clamp(budget / (samples x first_s), 1, max_copies). */
int nt_gpu_copies_per_sample(double budget_s, int samples, double first_s, int max_copies);

/* GPU pairs across ranks (docs/gpu.md "Ranks that see one GPU each"): when the ranks of a node
 * each see only some of its GPUs (Slurm --gpus-per-task=1, CUDA_VISIBLE_DEVICES per rank),
 * every GPU is measured by one rank, its owner, and a pair of GPUs of two owners is measured
 * through CUDA IPC handles exchanged over the launcher.
 *
 * nt_gpu_owners - the owner (local rank) of every GPU: sees is nranks x ngpus (row r: 1 where
 * local rank r sees NVML GPU g through CUDA). When one rank sees every GPU any rank sees, the
 * lowest such rank owns them all (the one-rank path); else each GPU goes to the lowest rank
 * that sees it. owner[g] = -1 for a GPU no rank sees. Returns the number of distinct owners
 * (0: no GPU seen, 1: one rank measures everything), -1 on bad arguments. */
int nt_gpu_owners(const unsigned char *sees, int nranks, int ngpus, int *owner);

/* nt_gpu_test_ranks - who takes part in a test of the plan, given the owners: *issuer (the
 * owner of the GPU whose stream issues the copies: gpu for host, local, write, SM, bidir and
 * latency tests; peer for read) runs it and writes its link; *partner is the other GPU's owner
 * where that GPU must act during the test (bidir: the reverse copy; latency: the second
 * kernel) and it is another rank, else -1. Write, read and SM copies need no partner: the peer
 * buffer is opened from its IPC handle. Every rank computes the same answer from the same plan
 * and owners, so both ends agree on the schedule without a message. */
void nt_gpu_test_ranks(const nt_gpu_test_t *t, const int *owner, int *issuer, int *partner);

/* nt_gpu_link_id - the report id of a GPU link: kind[.variant]:<host>/<src>-><host>/<dst>,
 * or kind:<host>/<src> when dst is NULL (gpu_local). Endpoints: "gpu<i>", "numa<n>". */
void nt_gpu_link_id(char *buf, size_t len, const char *kind, const char *variant, const char *host,
                    const char *src, const char *dst);

/* Verdict rules (each writes a one-line message with figures; NT_SKIPPED when there is nothing
 * to judge or the fact is unknown: the message then says "not judged"). */

/* nt_gpu_nvlink_verdict - NVLinks of g: expected = expect_nvlinks when >= 0, else the
 * model's (nt_gpu_model_nvlinks). NT_SKIPPED when the GPU has no peer on the node (single
 * GPU) or nothing is expected (unknown model, 0 links expected and none present); NT_FAIL when
 * fewer links are up than expected ("2 of 18 NVLinks down: 3, 7"). */
nt_verdict_t nt_gpu_nvlink_verdict(const nt_gpu_info_t *g, int expect_nvlinks, int has_peers,
                                   char *msg, size_t len);

/* nt_gpu_pcie_verdict - the GPU's PCIe link: the width is judged always (narrower than the
 * maximum fails); the generation only under_load (an idle GPU trains down), else it is
 * NT_SKIPPED for the generation alone ("generation not judged: no load"); an unknown width
 * (NVML gives none): NT_NOT_JUDGED. */
nt_verdict_t nt_gpu_pcie_verdict(int gen, int width, int max_gen, int max_width, int under_load,
                                 char *msg, size_t len);

/* nt_gpu_counters_verdict - NVLink error counters read before and after the run: NT_FAIL
 * naming each link and counter that grew ("link 3 crc_flit +12"); NT_SKIPPED without NVLinks
 * or counters. */
nt_verdict_t nt_gpu_counters_verdict(const nt_gpu_info_t *before, const nt_gpu_info_t *after,
                                     char *msg, size_t len);

/* nt_gpu_peer_verdict - a pair without peer access (cuDeviceCanAccessPeer 0): NT_FAIL when the
 * topology says it should have it (an NV# path, or NVML's P2P status OK), else NT_SKIPPED
 * (P2P through the CPU is not supported there: not a fault). NT_PASS when it has access. */
nt_verdict_t nt_gpu_peer_verdict(const char *path, int nvml_p2p_ok, int cuda_can_access, char *msg,
                                 size_t len);

/* nt_gpu_blame - GPU blame inside one node, as nodes are blamed between nodes
 * (probes/judge/verdict.c): a GPU that fails with more than half of its distinct partners, and with
 * at least 2, is blamed. pairs[i] = {a, b} (GPU indices < ngpus), failed[i] its verdict is
 * NT_FAIL. blamed[g] = 1 for a blamed GPU; partners/fails (may be NULL) get the counts.
 * Returns the number of blamed GPUs, -1 on bad input. */
int nt_gpu_blame(const int (*pairs)[2], const int *failed, size_t n, int ngpus, int *blamed,
                 int *partners, int *fails);

#endif

/* nt_gpu_judge_report - the GPU pass of the judge over a report whose links have their
 * verdicts (probes/judge/ calls it after the link engine). Per node: GPU blame over its p2p
 * links (nt_gpu_blame on the failing ones): the failing pairs of a blamed GPU become "warn"
 * ("blamed_on_gpu": "gpu3", judged_by "gpu_blame") and the node gets a failing "gpu_blame"
 * check naming the GPU by bus id ("gpu3 (0000:3b:00.0) fails with 7 of 7 partners"); GPU links
 * (pcie_h2d, pcie_d2h, p2p, gpu_local) that still fail give one failing "gpu_links" check on
 * their node, so a failed GPU link fails its node. checks is the report's checks array.
 * Returns the number of blamed GPUs. */
int nt_gpu_judge_report(cJSON *doc, cJSON *checks);

/* nt_gpu_is_link_kind - whether a link kind is one of the GPU probe's (pcie_h2d, pcie_d2h,
 * p2p, gpu_local): the links nt_gpu_judge_report reads and changes. */
int nt_gpu_is_link_kind(const char *kind);

/* nt_gpu_peer_class - the peer population of a GPU link: "<kind>.<variant>" plus " <path>" for
 * p2p ("p2p.write NV18"): links are peers only with the same operation over the same path
 * class. Written into the link as "peer_class". */
void nt_gpu_peer_class(char *buf, size_t len, const char *kind, const char *variant,
                       const char *path);
