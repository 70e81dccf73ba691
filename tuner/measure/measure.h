/* nettune-tune-measure: times the plan's candidates (nettune tune --plan-out) on the
 * real GPUs through NCCL, one communicator per shape and ncclConfig_t, every candidate forced
 * per call through the plugin's control interface (plugins/nccl-tuner/src/nt_control.h), and
 * writes nettune.measured/1 (tuner/measured_fmt.h) for nettune tune --measured.
 *
 * The parts:
 *   main.c          params, then run (or --verify's child)
 *   params.c        the command line into nt_measure_params_t, checked
 *   run.c           the run: plan, ranks, backend, sweep or --verify, the written document
 *   verify_peer.c   --verify: the A/B driver and the defaults side's child process
 *   measure_plan.c  the plan reader (nettune.plan/1) and the ncclConfig_t / launch lists
 *   measure.c       the sweep: lockstep over the launcher, warm-up, timing as nccl-tests (host
 *                   timer around a loop of iterations, averaged over ranks), confirmation of
 *                   what ran; results into nettune.measured/1
 *   backend_fake.c  a backend with a cost model and IGNORE cells, for the tests
 *   backend_nccl.c  the real one: dlopen libnccl.so.2 and libcuda.so.1 at run time
 *   launcher_tcp.c  the launcher over TCP (rank 0 is the hub) for Open MPI / Slurm / --local-ranks
 * No MPI, CUDA or NCCL is linked: the binary starts on any host. */
#ifndef NETTUNE_TUNER_MEASURE_H
#define NETTUNE_TUNER_MEASURE_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nettune/launcher.h"
#include "nettune/status.h"

#define NT_MEASURE_MAX_CANDS 32
#define NT_MEASURE_MAX_SIZES 64
#define NT_MEASURE_MAX_SHAPES 64
#define NT_MEASURE_MAX_CONFIGS 8

/* One candidate: a forced (algo, proto, nchannels) or NCCL's own choice (is_default). */
typedef struct nt_measure_cand {
    int algo, proto; /* NCCL_ALGO_* / NCCL_PROTO_* indices (= nt_algo_t / nt_proto_t) */
    int nchannels;   /* 0: NCCL's */
    int is_default;  /* 1: nothing forced, NCCL's choice */
    unsigned chunk_bytes; /* > 0: also force this chunk size (tuner API v6 getChunkSize) */
    double predicted_us;
} nt_measure_cand_t;

typedef struct nt_measure_size {
    unsigned long long bytes;
    nt_measure_cand_t cand[NT_MEASURE_MAX_CANDS];
    size_t ncand;
} nt_measure_size_t;

/* ncclConfig_t fields varied per communicator (-1: NCCL's default). NVIDIA/nccl v2.28.9-1
 * src/nccl.h.in ncclConfig_t. */
typedef struct nt_measure_comm_cfg {
    int min_ctas, max_ctas, cga_cluster_size;
} nt_measure_comm_cfg_t;

typedef struct nt_measure_shape {
    int coll; /* nt_coll_t = ncclFunc_t */
    int nnodes, nranks;
    nt_measure_size_t size[NT_MEASURE_MAX_SIZES];
    size_t nsizes;
} nt_measure_shape_t;

/* One process launch: environment knobs NCCL reads once per process (NCCL_BUFFSIZE, ...). */
typedef struct nt_measure_launch {
    char **env; /* "NCCL_X=V" */
    size_t nenv;
} nt_measure_launch_t;

typedef struct nt_measure_plan {
    nt_measure_shape_t *shape;
    size_t nshapes;
    nt_measure_comm_cfg_t cfg[NT_MEASURE_MAX_CONFIGS];
    size_t ncfg; /* at least 1 (all -1) */
    nt_measure_launch_t *launch;
    size_t nlaunches; /* 0: one launch with the environment as it is */
} nt_measure_plan_t;

/* nt_measure_plan_read - read nettune.plan/1 (tuner/search.c writes it: shapes[] of coll,
 * nnodes, nranks, sizes[] of bytes and candidates[] of algo, proto, predicted_us, default), plus
 * the optional "comm_configs": [{"min_ctas", "max_ctas", "cga_cluster_size"}] and "launches":
 * [{"env": {"NCCL_BUFFSIZE": "4194304"}}], and a size's optional "chunks": {"algo", "proto",
 * "predicted_us", "chunk_bytes": [N...]} (nettune tune --plan-chunks): one candidate per chunk
 * size, forcing (algo, proto) and that chunk size, plus (algo, proto) with NCCL's chunk size
 * when the candidates lack it; a chunk size must be a positive multiple of the protocol's grain
 * (nt_proto_grain_bytes). A candidate marked default is also forced (the model
 * says NCCL picks it); NCCL's own choice is added to every size as one more candidate.
 * Errors: NT_ERR_NOT_FOUND/IO/PARSE from the file, NT_ERR_INVALID with one line in err. */
nt_status_t nt_measure_plan_read(const char *path, nt_measure_plan_t *plan, char *err,
                                 size_t errlen);
nt_status_t nt_measure_plan_from_json(const cJSON *doc, nt_measure_plan_t *plan, char *err,
                                      size_t errlen);
void nt_measure_plan_free(nt_measure_plan_t *plan);

/* What one rank saw run (from the plugin's control interface, nt_control.h). */
typedef struct nt_measure_ran {
    int algo, proto, nchannels; /* -1: unknown */
    int applied;                /* 1: the forced candidate ran (or nothing was forced) */
    int chunk_applied;          /* 1: a forced chunk size was asked for by NCCL (or none forced) */
} nt_measure_ran_t;

/* The measuring backend. Every call is made on every rank in the same order (lockstep). */
typedef struct nt_measure_backend_ops {
    const char *name;
    /* init - load the libraries, pick the device (local rank). NT_ERR_UNSUPPORTED: no GPU,
     * NCCL or plugin (a skip: the reason in err). */
    nt_status_t (*init)(void *self, nt_launcher_t *l, char *err, size_t errlen);
    /* comm_create - one communicator of size(l) ranks with cfg; rank 0 makes NCCL's unique id
     * and broadcasts it over l. */
    nt_status_t (*comm_create)(void *self, nt_launcher_t *l, const nt_measure_comm_cfg_t *cfg,
                               char *err, size_t errlen);
    /* run - force c (or clear for the default), warmup calls untimed, then iters calls timed
     * on the host (start, iters enqueues, stream sync, stop), *time_us = per call;
     * *ran = what the control interface says the last call ran. */
    nt_status_t (*run)(void *self, int coll, unsigned long long bytes, const nt_measure_cand_t *c,
                       int warmup, int iters, double *time_us, nt_measure_ran_t *ran, char *err,
                       size_t errlen);
    void (*comm_destroy)(void *self);
    void (*finalize)(void *self);
    /* tuner_loaded - after comm_create: 1 when nettune's plugin is loaded in this process (its
     * control interface is found), 0 when not (--verify's defaults side must see 0). */
    int (*tuner_loaded)(void *self);
} nt_measure_backend_ops_t;

typedef struct nt_measure_backend {
    const nt_measure_backend_ops_t *ops;
    void *self;
} nt_measure_backend_t;

typedef struct nt_measure_opts {
    int warmup, iters; /* per candidate and size (nccl-tests: -w 5 -n 20 by default) */
    int trials;        /* timed loops per candidate; the spread is over trials and ranks */
    double timeout_s;  /* every launcher wait */
    double budget_s;   /* <= 0: none; else stop starting new candidates after it */
} nt_measure_opts_t;

/* nt_measure_sweep - run plan (shapes whose nranks equals size(l); others are skipped with a
 * note) with backend b on every rank; rank 0 fills *doc with the nettune.measured/1 document
 * (points, not_applied, skipped notes); other ranks get NULL. Lockstep: before every candidate
 * the ranks allgather (shape, cfg, size, candidate) and stop with NT_ERR_PEER when they differ.
 * A candidate is applied only when every rank's control interface says so, all ranks ran
 * the same (algo, proto) and, for a forced chunk size, NCCL asked every rank's plugin for one
 * (chunk_applied); otherwise it goes to not_applied with what ran. Time per point = mean
 * over ranks of each rank's mean over trials (nccl-tests averages over ranks), spread =
 * (max - min) / mean over ranks and trials. NT_ERR_INTERRUPTED when the budget stopped it (what
 * was measured is kept). On any error rank 0's *doc still holds what was measured, with
 * "completed": false. */
nt_status_t nt_measure_sweep(nt_launcher_t *l, const nt_measure_backend_t *b,
                             const nt_measure_plan_t *plan, const nt_measure_opts_t *o, cJSON **doc,
                             char *err, size_t errlen);

/* ---- --verify: the A/B proof of a tuning file, with the plugin and the file loaded and with
 * neither. NCCL loads its tuner plugin once per process and keeps it (and keeps "none") for
 * every later communicator (NVIDIA/nccl v2.28.9-1 src/plugin/tuner.cc:35-54: the load status is
 * process-wide; :56-59 NCCL_TUNER_PLUGIN is read only on the first load, "none" disables it;
 * unset it tries libnccl-tuner.so, src/plugin/plugin_open.cc:72, then the net plugin's own
 * tuner, tuner.cc:63), so "neither" is a second process group: every rank (the "tuned" side:
 * plugin + NETTUNE_TUNING_FILE) starts one child (re-exec of the binary, the "defaults" side:
 * NCCL_TUNER_PLUGIN=none, no NETTUNE_TUNING_FILE or NCCL_TUNER_CONFIG_FILE, its own NCCL debug
 * file), the children meet over their own TCP launcher (child 0 is the hub, on a socket rank 0
 * bound and broadcast) and create their own communicator. Parent and child take turns through
 * a token on a socket pair: the parent runs its turn, sends the child a STEP, waits for DONE;
 * a parent's turn ends only after every rank's run (the results' allgather), and so does a
 * child's, so the two sides never run on the GPU at the same time. */

/* How long one side's turn may take, in --timeout units: a turn is two launcher waits (lockstep
 * and results, each at most --timeout) and one timed loop. */
#define NT_MEASURE_TURN_TIMEOUTS 3

/* This rank's child (the defaults side). */
typedef struct nt_measure_peer {
    int fd;   /* socket pair end to the child (-1: none) */
    int pid;  /* the child's pid (0: no process, e.g. a test's thread) */
    int rank; /* this rank */
    double timeout_s;
    char log[4096]; /* the child's NCCL_DEBUG_FILE */
} nt_measure_peer_t;

/* nt_measure_peer_spawn - collective over l (every rank calls it): rank 0 binds a listening
 * socket for the children's hub (127.0.0.1 when hub_host is a loopback address, else every
 * interface; port 0: the kernel picks) and broadcasts its port; every rank forks and execs
 * exe (e.g. "/proc/self/exe") as
 *   exe --verify-child RANK,SIZE,PORT,HUBFD,FD,TIMEOUT HUB_HOST LOG BACKEND
 * (the child dies with its parent: PR_SET_PDEATHSIG). log is the child's NCCL_DEBUG_FILE
 * (copied to p->log). Errors: NT_ERR_SYSTEM (socket, fork) with err; the launcher's errors. */
nt_status_t nt_measure_peer_spawn(nt_measure_peer_t *p, nt_launcher_t *l, const char *hub_host,
                                  const char *exe, const char *log, const char *backend,
                                  double timeout_s, char *err, size_t errlen);

/* nt_measure_peer_ready - wait (NT_MEASURE_TURN_TIMEOUTS x timeout) for the child's READY:
 * its communicator exists; *plugin_loaded = its backend's tuner_loaded. The child's error comes
 * back as its status with its line in err; a child that ended: NT_ERR_PEER naming its exit. */
nt_status_t nt_measure_peer_ready(nt_measure_peer_t *p, int *plugin_loaded, char *err,
                                  size_t errlen);

/* nt_measure_peer_step - the child's turn: it runs (nothing forced) coll at bytes (size index
 * z, round) with warmup untimed and iters timed calls on its communicator, and *mean_us is the
 * mean over the children's ranks. Waits at most NT_MEASURE_TURN_TIMEOUTS x timeout
 * (NT_ERR_TIMEOUT); a child that ended: NT_ERR_PEER with its pid and exit status in err. */
nt_status_t nt_measure_peer_step(nt_measure_peer_t *p, int coll, int z, unsigned long long bytes,
                                 int round, int warmup, int iters, double *mean_us, char *err,
                                 size_t errlen);

/* nt_measure_peer_close - STOP the child, wait up to timeout for it to exit, then SIGKILL and
 * reap it (p->pid > 0 only); closes the socket. Safe on a peer never spawned (fd -1). */
void nt_measure_peer_close(nt_measure_peer_t *p);

/* nt_measure_child_main - the child's whole life (the --verify-child command line, argv[0] being
 * the "RANK,SIZE,PORT,HUBFD,FD,TIMEOUT" spec, argv[1] the hub host, argv[2] the NCCL log):
 * sets NCCL_TUNER_PLUGIN=none, unsets NETTUNE_TUNING_FILE and NCCL_TUNER_CONFIG_FILE, sets
 * NCCL_DEBUG_FILE=argv[2] (and NCCL_DEBUG/SUBSYS as nt_measure_capture_setup), joins the
 * children's launcher, b->ops->init, creates its communicator, sends READY, then serves STEPs
 * until STOP or the parent's end closes. Waits for a token at most NT_MEASURE_TURN_TIMEOUTS x
 * timeout. Returns an exit code (nettune/exitcode.h). */
int nt_measure_child_main(int argc, char **argv, const nt_measure_backend_t *b);

/* nt_measure_verify_run - one side's run of --verify on every rank of l: nothing forced, on
 * this process's communicator, after the ranks' lockstep check of (coll, z, bytes, round);
 * o->warmup untimed and o->iters timed calls; *mean_us = the mean over ranks of the per-call
 * time. Errors as the sweep's (NT_ERR_PEER: out of lockstep or a rank's run failed). */
nt_status_t nt_measure_verify_run(nt_launcher_t *l, const nt_measure_backend_t *b,
                                  const nt_measure_opts_t *o, int coll, int z,
                                  unsigned long long bytes, int round, double *mean_us, char *err,
                                  size_t errlen);

/* The A/B statistics of one size: rounds pairs of (defaults, tuned) times in us. speedup =
 * mean over rounds of default / tuned, speedup_min/max over rounds, default_us/tuned_us the
 * means; verdict "faster" (every round faster), "slower" (every round slower) or "same" (the
 * rounds disagree: within the spread). */
typedef struct nt_measure_ab {
    double default_us, tuned_us, speedup, speedup_min, speedup_max;
    const char *verdict;
} nt_measure_ab_t;
void nt_measure_ab_stats(const double *default_us, const double *tuned_us, int rounds,
                         nt_measure_ab_t *out);

/* nt_measure_verify_defaults_first - 1 when round r runs the defaults side first: even rounds
 * (ABBA order: D T, T D, D T, ...). */
int nt_measure_verify_defaults_first(int round);

/* nt_measure_verify - the parent's (tuned side's) half of --verify, on every rank after
 * nt_measure_peer_spawn: its communicator created with NETTUNE_TUNING_FILE=tuning_path (the
 * plugin loaded: b's tuner_loaded), the child's READY, then for every collective the file has
 * a rule for at size(l) (nranks 0 or equal), every size from min_bytes to max_bytes (x2),
 * o->trials rounds, each round one run per side in nt_measure_verify_defaults_first order; each
 * run as nccl-tests times it (o->warmup on the first round, o->iters timed), averaged over
 * ranks. Rank 0 gets *doc (nettune.verify/1): per size default_us, tuned_us, speedup and its
 * spread (nt_measure_ab_stats), verdict; "sides": what each side had loaded (NCCL_TUNER_PLUGIN,
 * NETTUNE_TUNING_FILE, on how many ranks the plugin was found in the process, pids); a summary
 * with the geometric mean; "completed" false with "error" when it stopped early (the sizes
 * measured so far are kept). o->budget_s > 0: no size is started after it (rank 0's clock,
 * broadcast; NT_ERR_INTERRUPTED). Errors: NT_ERR_INVALID (file unreadable, no rule for this size,
 * the defaults side has the plugin loaded) with err; NT_ERR_PEER / NT_ERR_TIMEOUT (a child or a
 * rank failed or ended); launcher errors. */
nt_status_t nt_measure_verify(nt_launcher_t *l, const nt_measure_backend_t *b,
                              nt_measure_peer_t *peer, const char *tuning_path,
                              unsigned long long min_bytes, unsigned long long max_bytes,
                              const nt_measure_opts_t *o, cJSON **doc, char *err, size_t errlen);

/* nt_measure_side_evidence - what NCCL's debug log at path says this side had loaded, added to
 * side as "nccl_log": {log, NCCL_TUNER_PLUGIN (NCCL's echo), tuner_loaded (the plugin NCCL says
 * it loaded, src/plugin/tuner.cc:86), tuning_file (what nettune's plugin said it loaded),
 * confirmed, why}. want_plugin 1 (tuned): confirmed when NCCL loaded nettune's plugin and the
 * plugin loaded tuning_path; 0 (defaults): when the log has NCCL lines, NCCL loaded no tuner
 * plugin and nettune's plugin said nothing. Returns confirmed (0 or 1). */
int nt_measure_side_evidence(cJSON *side, const char *path, int want_plugin,
                             const char *tuning_path);

/* nt_measure_capture_setup - before NCCL loads: NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with TUNING
 * and NCCL_DEBUG_FILE=path, each unless the user set it. */
void nt_measure_capture_setup(const char *path);

/* nt_measure_capture_attach - add "nccl" to doc from NCCL's debug file at path: the printed
 * tuning table (lib/nccl/nccl_table.c: entries of coll, algo, proto, lat_us, bw_GBps), NCCL's version,
 * the per-call TUNING lines (lib/nccl/nccllog.c; the first max_calls listed, all counted), and, when
 * there is a table, "model_check": the model against it cell by cell, the same document as
 * `nettune tune --nccl-log path --print-model --format json [--sm sm] [--shape ...]` (sm: compute
 * capability, 0 unknown; shape: used when the log has no comm line, may be NULL), so that every
 * measuring run checks the model against NCCL on its machine. NT_ERR_NOT_FOUND when there is no
 * file (noted in doc). */
struct nt_tune_shape;
nt_status_t nt_measure_capture_attach(cJSON *doc, const char *path, size_t max_calls, int sm,
                                      const struct nt_tune_shape *shape);

/* The fake backend (tests, --backend fake): time = predicted_us (or 10 + bytes / 1e4 us when 0)
 * times (1 + 0.01 * rank); cells with algo NT_ALGO_NVLS are IGNORE (not applied: the default
 * ran, which is ring/LL below 64 KiB and ring/simple above). Counts calls for the tests.
 * "The plugin" is loaded unless NCCL_TUNER_PLUGIN=none at init. Test hooks read at init:
 *   NETTUNE_FAKE_FILE_FACTOR=X   default runs on a communicator made with a tuning file take X
 *   NETTUNE_FAKE_SLEEP_US=N      every run sleeps N us (so that overlapping sides would show)
 *   NETTUNE_FAKE_JITTER=J        default runs with a tuning file take x (1 - J), 1, (1 + J) in
 *                                turn (the run count modulo 3): a spread over --verify's rounds
 *   NETTUNE_FAKE_TRACE=path      every run appends "side pid rank coll bytes t0 t1" (side tuned
 *                                or defaults, CLOCK_MONOTONIC seconds) to path
 *   NETTUNE_FAKE_DEFAULTS_FAIL=MODE:RANK:N   in a process without the plugin, rank RANK's N-th
 *                                run (1-based) dies (MODE die: _exit 9), hangs (hang) or fails
 *                                (error: NT_ERR_SYSTEM)
 *   NETTUNE_FAKE_PLUGIN_ALWAYS=1  the plugin counts as loaded even with NCCL_TUNER_PLUGIN=none
 *   NETTUNE_FAKE_CHUNK_BEST=N    a forced chunk size of N bytes runs a candidate in (1 - G) x
 *                                its time (G: NETTUNE_FAKE_CHUNK_GAIN, default 0.2), any other
 *                                forced chunk size in 1.02 x; on --verify's
 *                                tuned side the chunk size the plugin's own reader and index
 *                                give for the size (a measured rule's chunk_bytes) does the same
 *                                to NCCL's choice. Unset: a chunk size changes nothing.
 *   NETTUNE_FAKE_API_V5=1        NCCL as before 2.30: it never asks for a chunk size, so a
 *                                forced one is reported not applied */
typedef struct nt_measure_fake {
    int rank;
    int comms;                         /* comm_create calls */
    unsigned long calls, warmup_calls; /* collective calls; of them, warm-up */
    unsigned long runs;                /* run calls */
    int last_algo, last_proto;         /* last forced (-1: default) */
    int fail_comm;                     /* test hook: comm_create fails */
    int file;                          /* NETTUNE_TUNING_FILE was set at comm_create */
    int plugin;                        /* "the plugin is loaded" (see above) */
    double file_factor; /* default runs on a communicator with a file take this x (0: 1) */
    long sleep_us;
    double jitter;
    char trace[1024];
    char fail_mode[8];
    int fail_rank;
    unsigned long fail_at;
    unsigned chunk_best; /* NETTUNE_FAKE_CHUNK_BEST, 0: none */
    double chunk_gain;   /* NETTUNE_FAKE_CHUNK_GAIN, default 0.2 */
    int api_v5;          /* NETTUNE_FAKE_API_V5=1 */
    int nranks;          /* the launcher's size */
    void *rules;         /* the tuning file's rules on the tuned side (nt_index_t), or NULL */
} nt_measure_fake_t;
extern const nt_measure_backend_ops_t nt_measure_fake_ops;

/* The NCCL backend (backend_nccl.c): self is an opaque object from nt_measure_nccl_create. */
extern const nt_measure_backend_ops_t nt_measure_nccl_ops;
/* nt_measure_nccl_create - want_plugin 1: comm_create fails (NT_ERR_UNSUPPORTED) unless NCCL
 * loaded nettune's plugin (the sweep and --verify's tuned side force through it); 0: the
 * defaults side, which runs without it. NULL when out of memory. */
void *nt_measure_nccl_create(int want_plugin);
void nt_measure_nccl_free(void *self);
/* nt_measure_nccl_sm - the compute capability of the backend's GPU (major x 10 + minor, 90 on an
 * H100/H200) after init, 0 unknown. */
int nt_measure_nccl_sm(void *self);


/* ---- params.c, run.c: the command ---- */

/* The most ranks --local-ranks forks: NCCL_MAX_LOCAL_RANKS (v2.28.9-1 src/include/device.h:87),
 * the most NCCL ranks one node runs, one GPU each. */
#define NT_MEASURE_MAX_LOCAL_RANKS 72

/* nettune-tune-measure's options (set by nt_measure_params_parse, then only read). */
typedef struct nt_measure_params {
    const char *plan_path, *output, *backend, *verify; /* --plan, --output, --backend, --verify */
    unsigned long long min_bytes, max_bytes;           /* --verify's sizes, bytes */
    nt_measure_opts_t o;                               /* --warmup ... --budget-seconds */
    int local_ranks, launch, separate_nodes;           /* --local-ranks, --launch (-1 all) */
} nt_measure_params_t;

typedef enum nt_measure_action {
    NT_MEASURE_ACTION_RUN = 0,
    NT_MEASURE_ACTION_HELP,
    NT_MEASURE_ACTION_VERSION
} nt_measure_action_t;

/* nt_measure_params_parse - argv into p, defaults first (measured.json, backend nccl, -w 5
 * -n 20, 3 trials, --timeout 120 s, --verify sizes 1024..268435456; --verify writes
 * verify.json unless --output is given), each value checked. NT_ERR_INVALID with one line
 * naming the option (an unknown one too) and the fix in err. */
nt_status_t nt_measure_params_parse(int argc, char **argv, nt_measure_params_t *p,
                                    nt_measure_action_t *action, char *err, size_t errlen);

/* nt_measure_params_usage - the --help text. */
void nt_measure_params_usage(FILE *f);

/* nt_measure_run - the run of parsed options: read the plan, start the ranks (--local-ranks
 * forks them; else this process is one rank of Open MPI or Slurm, meeting at
 * NETTUNE_MEASURE_ADDR), sweep or --verify, rank 0 writes the document. Returns the exit code:
 * 0 written, 1 --verify found a size slower, 2 bad input or no backend, 3 stopped early (budget,
 * a lost rank) with what was measured written. */
int nt_measure_run(const nt_measure_params_t *p);

/* nt_measure_child_run - the process nt_measure_peer_spawn starts (argv as it passes it:
 * exe --verify-child SPEC HUB_HOST LOG BACKEND): the backend named by argv[5] without the
 * plugin, then nt_measure_child_main. Returns its exit code. */
int nt_measure_child_run(int argc, char **argv);

#endif
