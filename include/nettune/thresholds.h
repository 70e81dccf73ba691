/* Expected inventory and link thresholds: the `nettune.thresholds/1` file (docs/verdicts.md
 * "Thresholds"), the built-in defaults (`nettune probe --print-thresholds`), the
 * `--expect` and `--require` options, and the inventory check. docs/verdicts.md explains every
 * number and where it comes from.
 *
 * Error reporting: functions that parse operator input take (char *err, size_t errlen). The
 * message is one line naming the input (file name) and the JSON path or key of the problem,
 * e.g. "t.json: classes[0].peer.bw_ratio: must be in (0, 1], got -0.5". When err is NULL the
 * message is logged once with NT_ERROR(VERDICT, ...) instead. */
#ifndef NETTUNE_THRESHOLDS_H
#define NETTUNE_THRESHOLDS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/report.h"
#include "nettune/status.h"

#define NT_THRESHOLDS_SCHEMA "nettune.thresholds/1"

/* Link kinds that carry thresholds; the names are the report's link "kind" values. */
typedef enum nt_link_kind {
    NT_KIND_MPI = 0,
    NT_KIND_RDMA,
    NT_KIND_PCIE_H2D,
    NT_KIND_PCIE_D2H,
    NT_KIND_P2P,
    NT_KIND_NVLINK,
    NT_KIND_GPU_LOCAL, /* device-local copy of one GPU (docs/gpu.md): peers only by default */
    NT_KIND_COUNT
} nt_link_kind_t;

/* nt_link_kind_name - "mpi", "rdma", "pcie_h2d", "pcie_d2h", "p2p", "nvlink", "gpu_local"; "?"
 * otherwise. */
const char *nt_link_kind_name(nt_link_kind_t kind);
/* nt_link_kind_parse - the kind of a report kind string; a variant suffix is ignored
 * ("rdma.write" -> NT_KIND_RDMA). Returns -1 for an unknown or NULL name. */
int nt_link_kind_parse(const char *name);

/* Per-kind link rules. NaN = no threshold (JSON null). */
typedef struct nt_link_rules {
    double efficiency;  /* fraction (0, 1] of the line rate a healthy link reaches */
    double min_bw_GBps; /* absolute bandwidth floor, GB/s (1e9 B/s) */
    double max_lat_us;  /* absolute ceiling of small-message one-way latency, microseconds */
} nt_link_rules_t;

/* Peer-population rules (docs/verdicts.md "Peers"). */
typedef struct nt_peer_rules {
    double bw_ratio;   /* bandwidth below bw_ratio x reference is an outlier; (0, 1]; NaN = off */
    double lat_ratio;  /* latency above lat_ratio x reference is an outlier; >= 1; NaN = off */
    double tail_ratio; /* p99 latency above tail_ratio x reference is an outlier; >= 1; NaN = off */
    int min_population; /* a population is used only with at least this many links (>= 2) */
    int advisory;       /* 1: peer findings are warnings unless their two measurements agree
                         * within 1.5x (the judge sets it for a run whose measurements were
                         * unstable; not a thresholds file key) */
    int shared_cpus;    /* 1: the ranks shared an oversubscribed machine (run.serialized): a
                         * link that fails by the peer rule alone, blamed on no node, is a
                         * warning (the judge sets it; not a thresholds file key) */
} nt_peer_rules_t;

/* Expected inventory of a node. Unstated fields: gpus/nics/nvlinks -1, nic_rate_Gbps NaN,
 * pcie_gen and pcie_width 0. */
typedef struct nt_expect {
    int gpus;             /* NVIDIA GPUs the node must have */
    int nics;             /* RDMA ports that must be ACTIVE */
    double nic_rate_Gbps; /* the slowest ACTIVE RDMA port must run at least this rate, Gb/s */
    int pcie_gen;         /* every GPU and NIC link must be capable of at least gen x width */
    int pcie_width;
    int nvlinks; /* NVLinks every GPU must have up (-1 = the GPU model decides, docs/gpu.md) */
    /* nettune doctor's busbw verdicts (--expect of every command is parsed by nt_expect_parse;
     * the probe does not use these): "" / NaN = unstated */
    char gpu_model[64];      /* the GPU for single-node figures when the log does not name it */
    char collective[32];     /* the nccl-tests collective when the log does not name it */
    double efficiency;       /* warn below this fraction of the expected busbw */
    double error_efficiency; /* error below this fraction */
    double min_busbw_GBps;   /* an explicit busbw floor */
} nt_expect_t;

/* The rules that apply to one node: its class resolved against the defaults. */
typedef struct nt_node_rules {
    int class_index;     /* index in classes[], -1 = the defaults */
    char class_name[64]; /* "" for the defaults */
    nt_expect_t expect;
    nt_link_rules_t links[NT_KIND_COUNT];
    nt_peer_rules_t peer;
} nt_node_rules_t;

typedef struct nt_thresholds
    nt_thresholds_t; /* opaque: classes (with compiled regexes), defaults */

/* nt_thresholds_defaults - the built-in defaults (no classes):
 *   peer  bw_ratio 0.93, lat_ratio 2.0, tail_ratio 10, min_population 5 (after ClusterKit: a pair
 * is bad below 93% of the best bandwidth or above 2.1x the best latency; docs/reference.md section
 * 4; nettune compares with a median, see docs/verdicts.md) rdma      efficiency 0.90 (healthy
 * ib_write_bw: ~190 of 200 Gb/s HDR, 392-399 of 400 NDR, docs/reference.md section 5),
 * max_lat_us 2.5 ("ib_write_lat > 2.5 us is a fail") pcie_h2d, pcie_d2h  efficiency 0.70 (healthy:
 * ~26 of 32 GB/s Gen4 x16, 47-55 of 64 Gen5 x16) nvlink    efficiency 0.74 (Azure NHC's 335 GB/s
 * floor on 450 GB/s NVLink4) p2p       efficiency 0.70 (may run over PCIe, so the PCIe figure) mpi
 * no hardware expectation: every field null (the path may be shared memory, TCP or RDMA); MPI links
 * are judged by their peers only expect    nothing stated. NT_ERR_NOMEM. Free with
 * nt_thresholds_destroy. */
nt_status_t nt_thresholds_defaults(nt_thresholds_t **out);

/* nt_thresholds_parse - parse a nettune.thresholds/1 document from text. origin names it in
 * messages (a file name; NULL = "thresholds"). Fields the file's "defaults" leave out keep the
 * built-in defaults; fields a class leaves out fall back to the (resulting) defaults; JSON null
 * means "no threshold" and overrides the fallback. Validation: the schema id must be exactly
 * NT_THRESHOLDS_SCHEMA; unknown keys are rejected (except "comment" and "description");
 * class names are unique and non-empty; match has hostname_regex (POSIX ERE, regcomp
 * REG_EXTENDED; unanchored, use ^...$; at most 256 characters; refused: back-references, two
 * repetition operators in a row, a {m,n} of a group holding one, bounds above 255, because
 * glibc's regcomp cost on them is unbounded) and/or gpu_model; efficiency and bw_ratio in (0, 1];
 * lat_ratio and tail_ratio >= 1; min_population an integer >= 2; gpus and nics integers >= 0;
 * nic_rate_Gbps, min_bw_GBps and max_lat_us > 0; pcie "gen<1-6>x<1|2|4|8|16|32>". Errors:
 * NT_ERR_PARSE (not JSON: line and column given), NT_ERR_INVALID (a value or key is wrong: its JSON
 * path given), NT_ERR_NOMEM. *out is NULL on error. */
nt_status_t nt_thresholds_parse(const char *text, const char *origin, nt_thresholds_t **out,
                                char *err, size_t errlen);

/* nt_thresholds_load - nt_thresholds_parse on the file at path (at most 4 MiB).
 * NT_ERR_NOT_FOUND / NT_ERR_IO when it cannot be read (errno reason in the message), else as
 * nt_thresholds_parse. Messages start with the path. */
nt_status_t nt_thresholds_load(const char *path, nt_thresholds_t **out, char *err, size_t errlen);

/* nt_thresholds_destroy - free t (NULL is fine). */
void nt_thresholds_destroy(nt_thresholds_t *t);

/* nt_thresholds_to_json - t as a valid thresholds document: schema, classes (with only the
 * fields each class states; null where it states "none") and the complete defaults (every
 * link kind, peer and expect key, null where there is no threshold). For the built-in defaults
 * this is what --print-thresholds prints. Loading the printed text gives the same rules
 * (tested). NT_ERR_NOMEM. The caller frees *out with cJSON_Delete. */
nt_status_t nt_thresholds_to_json(const nt_thresholds_t *t, cJSON **out);

/* nt_thresholds_nclasses - the number of classes; nt_thresholds_class_name - the name of class i
 * (NULL when out of range). */
int nt_thresholds_nclasses(const nt_thresholds_t *t);
const char *nt_thresholds_class_name(const nt_thresholds_t *t, int i);

/* nt_thresholds_for_host - the rules for a node: the first class whose match fits (the
 * hostname regex, when given, matches host; gpu_model, when given, is a case-insensitive
 * substring of the node's gpu_model, so "H100" fits "NVIDIA H100 80GB HBM3"; a class with
 * gpu_model never fits a node without GPUs, gpu_model NULL or ""), else the defaults. Fields
 * the class leaves out come from the defaults. NT_ERR_INVALID when t, host or out is NULL. */
nt_status_t nt_thresholds_for_host(const nt_thresholds_t *t, const char *host,
                                   const char *gpu_model, nt_node_rules_t *out);

/* nt_thresholds_peer_for_run - the one set of peer rules for a run's populations, which span
 * nodes: the class's peer rules when all nnodes nodes resolve to the same class, else the
 * defaults' (gpu_models may be NULL). NT_ERR_INVALID on NULL t/out. */
nt_status_t nt_thresholds_peer_for_run(const nt_thresholds_t *t, const char *const *hosts,
                                       const char *const *gpu_models, int nnodes,
                                       nt_peer_rules_t *out);

/* nt_link_expected_bw - the minimum bandwidth a link must reach, GB/s: the larger of
 * line_rate_GBps x efficiency and min_bw_GBps, whichever are known (line_rate_GBps NaN or
 * <= 0 = unknown line rate). NaN when neither applies (then only peers judge the link). */
double nt_link_expected_bw(const nt_link_rules_t *r, double line_rate_GBps);
/* nt_link_expected_lat - the largest acceptable small-message latency, us (max_lat_us), NaN. */
double nt_link_expected_lat(const nt_link_rules_t *r);

/* nt_expect_init - every field unstated. */
void nt_expect_init(nt_expect_t *e);

/* The commands whose --expect keys nt_expect_parse accepts (a mask). */
enum { NT_EXPECT_FOR_PROBE = 1u, NT_EXPECT_FOR_DOCTOR = 2u };

/* nt_expect_parse - parse --expect "gpus=N,nics=N,nic_rate_Gbps=R,pcie=genXxW" into e: the one
 * --expect grammar of every command. scope (NT_EXPECT_FOR_*; 0 = both) says which command's
 * keys are valid: nettune probe judges gpus (alias gpus_per_node), nics (nics_per_node),
 * nic_rate_Gbps, pcie and nvlinks; nettune doctor gpus, nics, nic_rate_Gbps and, for its busbw
 * verdicts, gpu_model, collective (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv,
 * broadcast, reduce, gather, scatter, hypercube), efficiency, error_efficiency, min_busbw_GBps
 * (alias min_bw_GBps, the thresholds file's spelling). Only the keys given are written (so parse
 * into a copy of the class expectation, or use nt_expect_override). Keys and the pcie value are
 * case-insensitive (nic_rate_gbps works). Errors (NT_ERR_INVALID, e unchanged): an empty spec
 * or item, an item without '=', an unknown key or one of the other command (the message names
 * it and lists the valid keys), a key given twice, a value out of range (gpus/nics integer >= 0,
 * nic_rate_Gbps > 0, pcie gen 1-6, width 1/2/4/8/16/32, efficiencies in (0, 2], min_busbw_GBps
 * > 0), an unknown collective. */
nt_status_t nt_expect_parse(const char *spec, unsigned scope, nt_expect_t *e, char *err,
                            size_t errlen);

/* nt_expect_override - copy every stated field of over into e (--expect over the class). */
void nt_expect_override(nt_expect_t *e, const nt_expect_t *over);

/* nt_expect_is_empty - 1 when nothing is stated. */
int nt_expect_is_empty(const nt_expect_t *e);

/* --require parts. */
#define NT_REQUIRE_GPU 0x1u
#define NT_REQUIRE_RDMA 0x2u

/* nt_require_parse - parse --require "gpu,rdma" (case-insensitive; "gpus" is accepted for gpu)
 * into a mask of NT_REQUIRE_*. NT_ERR_INVALID for an empty spec or an unknown part (named, with
 * the valid ones listed). */
nt_status_t nt_require_parse(const char *spec, unsigned *out, char *err, size_t errlen);

/* The two judges below live with the judge (probes/judge/expect.c, in libntjudge); the rest
 * of this header is lib/core/thresholds.c.
 *
 * nt_inventory_check - judge a node's inventory against its expectation and the --require
 * mask, appending "inventory" checks (nt_check_create) to the checks array:
 *   target "gpus":       fail when ngpus_found < expect->gpus ("6 GPUs found, 8 expected"),
 *                        or when NT_REQUIRE_GPU and no GPU was found (and no gpus >= 1 stated)
 *   target "rdma_ports": fail when active_rdma_ports < expect->nics, or NT_REQUIRE_RDMA and no
 *                        ACTIVE port (units "count"; only ACTIVE ports count); not_judged when
 *                        the ports of unknown state (unknown_state_ports) could make up the
 *                        difference
 *   target "nic_rate":   fail when the slowest ACTIVE port of known rate (min_port_rate_Gbps,
 *                        NaN = none) runs below expect->nic_rate_Gbps, or there is no ACTIVE
 *                        port and none of unknown state; not_judged when some ACTIVE ports have
 *                        no known rate (unknown_rate_ports) and the known ones pass, or no port
 *                        is ACTIVE but some have an unknown state. Unknown is never a failure.
 * A stated expectation that is met gives a "pass" check with both numbers. Nothing stated and
 * nothing required: no check is added, whatever was found (an absent part is then "skipped",
 * which the caller records). The pcie expectation is judged per device by nt_expect_pcie_judge.
 * expect may be NULL (= nothing stated). NT_ERR_INVALID on NULL checks, NT_ERR_NOMEM. */
nt_status_t nt_inventory_check(const nt_expect_t *expect, unsigned require, int ngpus_found,
                               int active_rdma_ports, int unknown_state_ports,
                               double min_port_rate_Gbps, int unknown_rate_ports, const char *host,
                               cJSON *checks);

/* nt_expect_pcie_judge - a device's PCIe capability against the stated pcie expectation:
 * cap_gen x cap_width is what the link can do (the lower of the device's and its upstream
 * port's maximum, as nt_pcie_judge uses), cur_width the negotiated width. NT_FAIL when cap_gen
 * or cap_width is below the expectation, or cur_width below the expected width; the current
 * speed is not judged (idle GPUs lower it). NT_SKIPPED when no pcie expectation is stated,
 * NT_NOT_JUDGED when the capability is unknown (0); NT_PASS otherwise. msg (may be NULL) gets a
 * sentence: "0000:18:00.0 (GPU 0) capable of gen4x16, gen5x16 expected". */
nt_verdict_t nt_expect_pcie_judge(const nt_expect_t *e, const char *bdf, const char *label,
                                  int cap_gen, int cap_width, int cur_width, char *msg, size_t len);

#endif
