/* nettune-probe internals: the run context shared by every probe and the ops table a link
 * probe supplies (UCX perftest style: one driver in probes/main.c, one table per probe kind). */
#ifndef NETTUNE_PROBE_H
#define NETTUNE_PROBE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/launcher.h"
#include "nettune/report.h"
#include "nettune/schedule.h"
#include "nettune/status.h"
#include "nettune/thresholds.h"
#include "nettune/topo.h"

#define NT_MAX_SIZES 32
#define NT_HOST_MAX 64

/* One params struct for the command: parsed, checked, adjusted (adjustments logged), then run. */
typedef struct nt_probe_params {
    int local;                      /* --local: one node, no launcher */
    nt_schedule_mode_t mode;        /* --quick (default) / --full */
    size_t lat_sizes[NT_MAX_SIZES]; /* --sizes: sizes below 64 KiB are latency sizes */
    size_t nlat_sizes;
    size_t bw_sizes[NT_MAX_SIZES]; /* ... and 64 KiB and above bandwidth sizes */
    size_t nbw_sizes;
    double budget_s;        /* --budget: timed seconds per size and link (default 0.05) */
    double time_limit_s;    /* --time-limit (0 = none) */
    double peer_timeout_s;  /* --peer-timeout: deadline of one exchange (default 30) */
    const char *output;     /* --output (default nettune-report.json, "-" = stdout) */
    const char *thresholds; /* --thresholds FILE */
    const char *expect;     /* --expect gpus=N,nics=N,nic_rate_Gbps=R,pcie=genXxW */
    const char *baseline;   /* --baseline REPORT: a known-good run (config_drift) */
    const char *tuning_file; /* --tuning-file F: the same loadable file on every node */
    unsigned require;       /* --require gpu,rdma: NT_REQUIRE_* bits */
    const char *topology;   /* --topology FILE: hwloc XML instead of the live machine */
    const char *probes;     /* --probes mpi,rdma,... (default all) */
    int samples_all;        /* --samples all */
    int strict;             /* --strict: warnings exit 1 */
    int quiet;              /* --quiet */
    int no_retest;          /* --no-retest */
    int drain;              /* --drain[=dry-run]: nt_drain_mode_t (probes/drain.h) */
    int resume_passing;     /* --resume-passing */
    /* RDMA (probes/rdma) */
    int rdma_qps;          /* --rdma-qps (default 1) */
    int gid_index;         /* --gid-index (-1 = choose as NCCL does) */
    int rdma_loopback;     /* --rdma-loopback */
    size_t rdma_max_bytes; /* --rdma-max-size (default 8 MiB) */
    /* GPU (probes/gpu) */
    unsigned gpu_probes; /* --gpu-probes: NT_GPU_PROBE_* bits (0 = all) */
    size_t gpu_bytes;    /* --gpu-buffer-size (0 = 256 MiB) */
    int checks_only;     /* --checks-only: no traffic, no GPU memory */
    /* Fabric phases under load (probes/fabric) */
    int fabric;                /* --fabric: the fabric phases only, no pairwise rounds */
    double fabric_budget_s;    /* --fabric-budget (default 60; 0: none after --full) */
    size_t fabric_bytes;       /* --fabric-bytes: bytes per flow (default 16M) */
    const char *fabric_ifaces; /* --fabric-ifaces eth0,eth1: the rails (NULL: see fabric.h) */
    unsigned long long fabric_seed; /* --fabric-seed */
    int fabric_seed_set;            /* 0: the seed is drawn from the clock by rank 0 */
} nt_probe_params_t;

/* A node of the job, in hostname order. */
typedef struct nt_node {
    char host[NT_HOST_MAX];
    int *ranks; /* world ranks on this node, ascending; ranks[i] is local rank i */
    int nranks;
} nt_node_t;

/* The run context every probe sees. */
typedef struct nt_probe {
    const nt_probe_params_t *params;
    nt_launcher_t *launcher;
    int rank, size;
    nt_node_t *nodes; /* sorted by hostname */
    int nnodes;
    int my_node;        /* index into nodes */
    int local_rank;     /* index into nodes[my_node].ranks */
    int cores_per_node; /* CPUs this rank may run on (its affinity mask, cgroup cpusets) */
    /* Probe ranks on this machine: ranks whose kernel has the same boot_id
     * (/proc/sys/kernel/random/boot_id), so namespaces and pods of one host count together. */
    int host_ranks;
    /* Pairs run one after another, their two ends pinned to different CPUs, and waits give the
     * CPU up: some machine runs more probe ranks than it has cores (report run.serialized). */
    int serialized;
    nt_topo_t *topo;      /* this node's inventory (every rank loads it; NULL if it failed) */
    double deadline;      /* nt_clock_s() value at which the run stops (0 = none) */
    double pair_budget_s; /* the longest pair's time budget over the probes (engine-set) */
    /* The run's one stop flag (nt_probe_interrupt, set by the SIGTERM/SIGINT handler to the
     * signal number): every wait of a probe watches it. */
    volatile int *stop; /* sig_atomic_t (int): signal.h stays out of this header */
} nt_probe_t;

/* Scope of a link. */
typedef enum nt_scope { NT_SCOPE_INTRA = 0, NT_SCOPE_INTER = 1 } nt_scope_t;
/* nt_scope_string - "intra" (inside one node) or "inter" (between nodes). */
const char *nt_scope_string(nt_scope_t s);

/* A link probe: one ops table per probe kind, listed once in the registry (below).
 *
 * The engine (run.c) calls, in this order: init on every rank (a probe not selected by
 * --probes, or one with live_hw under --topology, is skipped without init); gathers
 * availability (a pair runs only when both ends are available); for every step of the schedule
 * calls run_pair on both ends of each pair at once, then run_local on each node's first rank;
 * then finish; then cleanup. Link objects (report "links" entries, samples in report units) are
 * appended to out_links by the initiator only; the engine sends them to rank 0, which judges
 * them. Both directions of a pair are the probe's to measure: the reverse direction is a link
 * of its own (same kind, src and dst swapped, its own id), appended by the initiator too. */
typedef struct nt_link_probe_ops {
    const char *kind; /* the link kind in the report and the name in --probes */
    const char *what; /* one line for --help and messages, e.g. "MPI point-to-point" */
    /* 1: measures this host's own devices, which --topology FILE stands in for: the probe is
     * skipped under --topology (the node's devices come from the file). */
    int live_hw;
    /* Local set-up. NT_ERR_UNSUPPORTED with why filled means "skipped: why". node_json is this
     * node's report object when this rank is local rank 0, else NULL: add inventory there
     * ("nics"), checks go to checks (may be NULL on other ranks). */
    nt_status_t (*init)(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks, char *why,
                        size_t whylen);
    /* Measure the link(s) between this rank and peer_rank. initiator: 1 on the rank whose
     * node comes first in the pair. Each size is bounded by time (nt_bench_run: --budget plus
     * about one message); a peer that makes no progress for --peer-timeout is dead
     * (NT_ERR_TIMEOUT), a signal (*p->stop) ends it with NT_ERR_INTERRUPTED: never hang. */
    nt_status_t (*run_pair)(void *state, nt_probe_t *p, int peer_rank, int initiator,
                            nt_scope_t scope, cJSON *out_links);
    /* The time budget of one run_pair in seconds (its sizes' budgets, both directions, every
     * variant); the engine adds --peer-timeout for liveness. NULL: the engine estimates it from
     * --sizes and --budget. */
    double (*pair_budget_s)(const nt_probe_t *p);
    /* Node-local tests without a peer (RDMA loopback); NULL if none. */
    nt_status_t (*run_local)(void *state, nt_probe_t *p, cJSON *out_links, cJSON *out_checks);
    /* 1: run_local runs on every rank of the node that init made available, at the same time
     * (the probe's ranks coordinate among themselves and the node's first rank returns every
     * link: the GPU probe when each rank sees only its own GPU); 0: on the first rank only. */
    int run_local_all;
    /* After the run: final checks (e.g. error counters read again); NULL if none. */
    nt_status_t (*finish)(void *state, nt_probe_t *p, cJSON *node_json, cJSON *checks);
    void (*cleanup)(void *state);
} nt_link_probe_ops_t;

extern const nt_link_probe_ops_t nt_mpi_probe_ops;
extern const nt_link_probe_ops_t nt_rdma_probe_ops;
extern const nt_link_probe_ops_t nt_gpu_probe_ops;

/* Registry (probes/registry.c): the one table of link probes, in the order they run. Adding a
 * probe = its folder (probes/<kind>/, with a module.mk adding its sources), its ops table and
 * one row in that table; --probes, --help, the schedule, the retest and the report follow. */

/* nt_probe_registry - the table; *n gets its length. */
const nt_link_probe_ops_t *const *nt_probe_registry(int *n);
/* nt_probe_registry_find - index of kind in the table, -1 if none. */
int nt_probe_registry_find(const char *kind);
/* nt_probe_registry_names - the kinds joined by sep ("mpi, rdma") into buf (cut to len). */
void nt_probe_registry_names(char *buf, size_t len, const char *sep);
/* nt_probe_selected - whether kind is in a --probes list ("mpi,rdma"; NULL = all). */
int nt_probe_selected(const char *list, const char *kind);

#endif
