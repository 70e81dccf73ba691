/* nettune-tune-measure (issue 10): times the plan's candidates (nettune tune --plan-out) on the
 * real GPUs through NCCL, one communicator per shape and ncclConfig_t, every candidate forced
 * per call through the plugin's control interface (plugins/nccl-tuner/src/nt_control.h), and
 * writes nettune.measured/1 (tuner/measured_fmt.h) for nettune tune --measured.
 *
 * The parts:
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
 * [{"env": {"NCCL_BUFFSIZE": "4194304"}}]. A candidate marked default is also forced (the model
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
    /* comm_select - make slot 0 or 1 the communicator that comm_create, run and comm_destroy
     * act on (--verify holds two: NCCL's defaults and the tuning file). Starts at 0. */
    void (*comm_select)(void *self, int slot);
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
 * A candidate is applied only when every rank's control interface says so and all ranks ran
 * the same (algo, proto); otherwise it goes to not_applied with what ran. Time per point = mean
 * over ranks of each rank's mean over trials (nccl-tests averages over ranks), spread =
 * (max - min) / mean over ranks and trials. NT_ERR_INTERRUPTED when the budget stopped it (what
 * was measured is kept). On any error rank 0's *doc still holds what was measured, with
 * "completed": false. */
nt_status_t nt_measure_sweep(nt_launcher_t *l, const nt_measure_backend_t *b,
                             const nt_measure_plan_t *plan, const nt_measure_opts_t *o, cJSON **doc,
                             char *err, size_t errlen);

/* nt_measure_verify - the A/B proof of a tuning file (--verify): two communicators on every
 * rank, one created without a tuning file (the plugin leaves every choice to NCCL: the
 * defaults) and one with NETTUNE_TUNING_FILE=tuning_path; for every collective the file has a
 * rule for at this size(l) (nranks 0 or equal), every size from min_bytes to max_bytes (x2),
 * o->trials rounds, alternating which of the two runs first; each run as nccl-tests times it
 * (o->warmup on the first round, o->iters timed), averaged over ranks. Rank 0 gets *doc
 * (nettune.verify/1): per size default_us, tuned_us, speedup = default / tuned (mean of the
 * rounds' ratios) with speedup_min/max and verdict faster (every round faster), slower (every
 * round slower) or same (within the rounds' spread); a summary with the geometric mean.
 * Errors: NT_ERR_INVALID (file unreadable, no rule for this size) with err, launcher errors. */
nt_status_t nt_measure_verify(nt_launcher_t *l, const nt_measure_backend_t *b,
                              const char *tuning_path, unsigned long long min_bytes,
                              unsigned long long max_bytes, const nt_measure_opts_t *o, cJSON **doc,
                              char *err, size_t errlen);

/* nt_measure_capture_setup - before NCCL loads: NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS with TUNING
 * and NCCL_DEBUG_FILE=path, each unless the user set it. */
void nt_measure_capture_setup(const char *path);

/* nt_measure_capture_attach - add "nccl" to doc from NCCL's debug file at path: the printed
 * tuning table (lib/nccl_table.c: entries of coll, algo, proto, lat_us, bw_GBps), NCCL's version
 * and the per-call TUNING lines (lib/nccllog.c; the first max_calls listed, all counted).
 * NT_ERR_NOT_FOUND when there is no file (noted in doc). */
nt_status_t nt_measure_capture_attach(cJSON *doc, const char *path, size_t max_calls);

/* The fake backend (tests, --backend fake): time = predicted_us (or 10 + bytes / 1e4 us when 0)
 * times (1 + 0.01 * rank); cells with algo NT_ALGO_NVLS are IGNORE (not applied: the default
 * ran, which is ring/LL below 64 KiB and ring/simple above). Counts calls for the tests. */
typedef struct nt_measure_fake {
    int rank;
    int comms;                         /* comm_create calls */
    unsigned long calls, warmup_calls; /* collective calls; of them, warm-up */
    int last_algo, last_proto;         /* last forced (-1: default) */
    int fail_comm;                     /* test hook: comm_create fails */
    int slot;                          /* comm_select */
    int file[2];                       /* NETTUNE_TUNING_FILE was set at comm_create */
    double file_factor; /* default runs on a communicator with a file take this x (0: 1) */
} nt_measure_fake_t;
extern const nt_measure_backend_ops_t nt_measure_fake_ops;

/* The NCCL backend (backend_nccl.c): self is an opaque object from nt_measure_nccl_create. */
extern const nt_measure_backend_ops_t nt_measure_nccl_ops;
void *nt_measure_nccl_create(void);
void nt_measure_nccl_free(void *self);

#endif
