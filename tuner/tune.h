/* nettune tune: the parts around the model (inputs, replay, search, advice, outputs). Internal to tuner/.
 *
 *   inputs.c      the model's inputs per communicator shape, each fact labelled: NCCL's graph
 *                 lines and comm line from a log (measured), a probe report's links run through
 *                 NCCL's search rules (inferred), --sm / --cpu-vendor, else nettune's defaults
 *   replay.c      nccl-tests outputs as sources: labels, rows, the busbw re-check, anomalies
 *   search.c      per collective, shape and size: the eligible candidates ranked by the model,
 *                 overridden by replayed or measured figures; rules; --plan-out / --measured
 *   write.c       tuning.json (the plugin's key list), NCCL's example-tuner CSV, the
 *                 summary
 *   env_advice.c  environment advice, each line with its reason, in NCCL's conf-file format
 *   baseline.c    each baseline judged by nettune doctor's busbw rule
 *   params.c      the command line into the options below (parsed, checked, defaults)
 *   run.c         the run: inputs, search, writers, exit code
 *   main.c        params, then run
 * Units: bytes, microseconds, GB/s = 1e9 B/s. Nothing here links MPI, CUDA or NCCL. */
#ifndef NETTUNE_TUNER_TUNE_H
#define NETTUNE_TUNER_TUNE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "model.h"
#include "nettune/anomaly.h"
#include "nettune/nccllog.h"
#include "nettune/nccltests.h"
#include "nettune/rdoc.h"
#include "nettune/status.h"

#define NT_TUNE_MAX_SHAPES 16
#define NT_TUNE_MAX_SOURCES 64
#define NT_TUNE_MAX_SIZES 64
#define NT_TUNE_NOISE_MIN 0.03 /* choices change only when they win by more than this */
#define NT_TUNE_TOPK 3         /* model candidates per size in --plan-out */
#define NT_TUNE_PLAN_CHUNKS 3  /* chunk sizes below NCCL's per size in --plan-out --plan-chunks */
#define NT_TUNE_FAR_RATIO 2.0  /* measured vs model beyond x2 either way: a finding */
/* Tuner rules reach NCCL from 2.21 (tuner API v2, REFERENCE: v2 adapter); below, env only. */
#define NT_TUNE_MIN_RULE_VERSION 22100

typedef enum { NT_OBJ_NO_REGRESS = 0, NT_OBJ_TOTAL, NT_OBJ_GEOMEAN } nt_objective_t;

/* How we know which algorithm/protocol ran. */
typedef enum {
    NT_RAN_UNKNOWN = 0,
    NT_RAN_LABEL,    /* --label algo=/proto= on the source, or the NCCL_ALGO/NCCL_PROTO it echoes */
    NT_RAN_MEASURED, /* per-call TUNING lines show it */
    NT_RAN_PREDICTED /* the model, fed only from evidence, says so */
} nt_ran_how_t;

typedef struct nt_tune_shape {
    int nnodes, ppn, nranks;
} nt_tune_shape_t;

/* A replay source (--replay F [--label ...]). */
typedef struct nt_tune_source {
    char *path;
    uint64_t hash; /* FNV-1a 64 of the file's bytes */
    int json;      /* an nccl-tests -J document */
    nt_ncclt_reader_t *tests;
    nt_nccllog_t log;
    /* labels (-1 / 0 = not given) */
    int label_algo, label_proto, label_nchannels;
    char *label_text; /* as given, for messages */
    char **env;       /* "NCCL_X=V": the command line's, labels env.NCCL_X, the file's echoes */
    size_t nenv;
    char **cmd_env; /* "NCCL_X=V" set on the file's command line (-x, NAME=V, env, --export) */
    size_t ncmd_env;
    char *hosts;       /* the device lines' host names, distinct, sorted, ","; NULL unknown */
    char *devices;     /* the device lines' "host:[bus id]" per rank, ","; NULL unknown */
    int confounded;    /* differs from a baseline in more than its label sets: no rule from it */
    int labelled;             /* any label: not a baseline */
    unsigned long rows;       /* rows parsed */
    double busbw_max_rel_err; /* the re-check of busbw from size and time */
    unsigned long busbw_checked, busbw_bad;
} nt_tune_source_t;

/* One measured point. */
typedef struct nt_tune_point {
    int coll; /* nt_coll_t */
    nt_tune_shape_t shape;
    unsigned long long bytes; /* NCCL's nBytes */
    int algo, proto;          /* what ran; -1 unknown */
    nt_ran_how_t how;
    int is_default; /* NCCL's own choice (a baseline source, or a measured default) */
    double time_us; /* the better of out-of-place and in-place */
    double spread;  /* |oop - ip| / max: the run's own noise */
    int src;        /* source index (or -1 for --measured) */
    int table;      /* table index in the source */
    int reg_buff;   /* -1 unknown */
    unsigned chunk_bytes; /* the chunk size forced for it (tuner API v6); 0: NCCL's */
} nt_tune_point_t;

typedef struct nt_tune_finding {
    nt_anomaly_kind_t kind;
    nt_anomaly_sev_t severity;
    char *text;
} nt_tune_finding_t;

/* One rule to write. */
typedef struct nt_tune_rule {
    int coll;
    nt_tune_shape_t shape;
    unsigned long long min_bytes, max_bytes; /* inclusive */
    int algo, proto;
    int basis;                        /* NT_BASIS_* (plugins/nccl-tuner/src/nt_tuning.h) */
    double predicted_us, measured_us; /* at min_bytes; < 0 none */
    int reg_buff;                     /* -1 any */
    unsigned chunk_bytes;             /* a measured winning chunk size; 0: NCCL's */
} nt_tune_rule_t;

/* One line of the summary: a size range of one collective and shape. */
typedef struct nt_tune_summary {
    int coll;
    nt_tune_shape_t shape;
    unsigned long long min_bytes, max_bytes;
    int def_algo, def_proto; /* NCCL's default (the model's argmin, or what ran) */
    int algo, proto;         /* ours */
    double def_us, our_us;   /* at min_bytes */
    int basis;
    char *tradeoff; /* objective trade-off note, or NULL */
    /* the measured gain at each size of the range where both NCCL's default and ours ran:
     * default time / our time - 1 (0.333 = 33.3% faster), in size order */
    size_t ngains;
    unsigned long long gain_bytes[NT_TUNE_MAX_SIZES];
    double gain[NT_TUNE_MAX_SIZES];
    double gain_def_us[NT_TUNE_MAX_SIZES], gain_our_us[NT_TUNE_MAX_SIZES];
} nt_tune_summary_t;

/* nt_tune_gain_stats - a range's measured gains: first, last, smallest and geometric mean
 * (of the speed ratios, minus 1). Returns 0 (and leaves the outputs) when none was measured. */
int nt_tune_gain_stats(const nt_tune_summary_t *s, double *first, double *last, double *min,
                       double *geomean);

/* A --replay source as given: the file and the --label that follows it. A second --label for one
 * file is refused when the labels are applied (nt_tune_source_label), so two are kept. */
#define NT_TUNE_MAX_LABELS 2
typedef struct nt_tune_replay {
    const char *path;
    const char *labels[NT_TUNE_MAX_LABELS];
    size_t nlabels;
} nt_tune_replay_t;

/* nettune tune's options: set by nt_tune_params_parse (params.c), then read by the run. */
typedef struct nt_tune_params {
    const char *report_path;
    const char *nccl_logs[NT_TUNE_MAX_SOURCES];
    size_t nlogs;
    int version;    /* --nccl-version, 0 = from the inputs */
    int sm;         /* --sm, 0 = from the inputs */
    int cpu_vendor; /* --cpu-vendor, -1 = from the inputs */
    nt_tune_shape_t shapes[NT_TUNE_MAX_SHAPES];
    size_t nshapes;
    int colls[NT_NUM_COLLS]; /* --colls */
    unsigned long long min_bytes, max_bytes;
    nt_objective_t objective;
    double time_limit_s; /* 0 none */
    const char *plan_out;
    const char *measured[NT_TUNE_MAX_SOURCES];
    size_t nmeasured;
    const char *output;           /* --output, default tuning.json ("-": stdout) */
    const char *env_out, *csv_out; /* --env-out, --csv-out: NULL = not written */
    int print_model, json, quiet;
    int pin_predicted; /* --pin-predicted: write the model's own choices as rules too */
    int plan_chunks;   /* --plan-chunks: the plan asks for chunk sizes too */
    int coll_named; /* --coll: 1 + the nt_coll_t of tables that do not name their test; 0 none */
    const char *expect; /* --expect K=V,...: the hardware for judging baselines, NULL none */

    nt_tune_replay_t replays[NT_TUNE_MAX_SOURCES]; /* --replay [--label], in order */
    size_t nreplays;
} nt_tune_params_t;

typedef struct nt_tune {
    /* the options, the run's own copy (run.c adds the default shapes when none was given) */
    nt_tune_params_t p;

    /* inputs */
    nt_rdoc_t report;
    int have_report;
    uint64_t report_hash;
    nt_tune_source_t sources[NT_TUNE_MAX_SOURCES];
    size_t nsources;
    nt_nccllog_t logs[NT_TUNE_MAX_SOURCES];
    uint64_t log_hash[NT_TUNE_MAX_SOURCES];
    uint64_t measured_hash[NT_TUNE_MAX_SOURCES];

    /* derived */
    int target_version; /* the NCCL version modelled */
    nt_fact_label_t version_label;
    nt_tune_point_t *points;
    size_t npoints, cap_points;
    nt_tune_finding_t *findings;
    size_t nfindings;
    nt_tune_rule_t *rules;
    size_t nrules, cap_rules;
    nt_tune_summary_t *summary;
    size_t nsummary, cap_summary;
    cJSON *plan;      /* --plan-out document being built */
    int completed;    /* 0 when --time-limit stopped the search */
    size_t nmodelled; /* collective x shape searches whose model had facts (not all assumed) */
    char *env_job_algo, *env_job_proto; /* the job's NCCL_ALGO / NCCL_PROTO seen in the inputs */
    double t_start;
} nt_tune_t;

/* ---- inputs.c ---- */

/* nt_tune_sm_from_gpu_name - SM (compute capability x 10) from a GPU name as nccl-tests or the
 * probe prints it ("NVIDIA H100 80GB HBM3" 90, "A100-SXM4-40GB" 80, "Tesla V100" 70, ...);
 * 0 when unknown. */
int nt_tune_sm_from_gpu_name(const char *name);

/* nt_tune_cpu_vendor_from_model - NT_CPU_VENDOR_* from a CPU model string, -1 unknown. */
int nt_tune_cpu_vendor_from_model(const char *model);

/* nt_tune_shape_parse - "NNODESxPPN" (e.g. "2x8"). NT_ERR_INVALID otherwise. */
nt_status_t nt_tune_shape_parse(const char *s, nt_tune_shape_t *out);

/* nt_tune_model_input - the model's input for `shape`: the log whose comm shape matches
 * (graph lines, measured), else the report's links through NCCL's search rules (inferred), else
 * nettune's defaults (assumed). `why` (may be NULL) gets one line naming the sources. */
nt_status_t nt_tune_model_input(const nt_tune_t *t, const nt_tune_shape_t *shape,
                                nt_model_input_t *in, char *why, size_t whylen);

/* nt_tune_input_from_log - fill the comm and graph facts of `in` from an NCCL log (labelled
 * measured). Returns the number of graphs taken. */
int nt_tune_input_from_log(nt_model_input_t *in, const nt_nccllog_t *log);

/* nt_tune_log_input - the model's input for the communicator an NCCL log shows (--print-model,
 * and nettune-tune-measure's check of the model against the table it captured): version (the
 * caller's pick), the shape from the log's comm line, else `shape` (NULL: 2 ranks on 1 node,
 * labelled assumed), ppn from the comm line's localRanks (else shape's), sm (compute capability,
 * 0: not given) and cpu_vendor (-1: not given) labelled measured when given, and the log's graph
 * and comm facts (nt_tune_input_from_log). Errors: those of nt_model_input_init (bad shape or
 * version). */
nt_status_t nt_tune_log_input(const nt_nccllog_t *g, int version, const nt_tune_shape_t *shape,
                              int sm, int cpu_vendor, nt_model_input_t *in);

/* ---- replay.c ---- */

/* nt_tune_source_read - read replay source `path` (nccl-tests text, -J JSON, with launcher
 * prefixes and interleaved NCCL lines). NT_ERR_NOT_FOUND / NT_ERR_IO / NT_ERR_PARSE with one
 * line in err. */
nt_status_t nt_tune_source_read(nt_tune_source_t *s, const char *path, char *err, size_t errlen);

/* nt_tune_source_label - apply "--label K=V,..." (keys algo, proto, nchannels, env.NCCL_X;
 * NCCL's or our spelling, any case). NT_ERR_INVALID with a message naming the key, or the label
 * and the file's own NCCL line it contradicts. */
nt_status_t nt_tune_source_label(nt_tune_source_t *s, const char *label, char *err, size_t errlen);

/* nt_tune_source_name - the source's file name without its folder: what the outputs quote (no
 * path in a written file, so the same inputs give the same bytes wherever they lie). */
const char *nt_tune_source_name(const nt_tune_source_t *s);

/* nt_tune_source_free - frees a source. */
void nt_tune_source_free(nt_tune_source_t *s);

/* nt_tune_source_diff - what candidate c and baseline b differ in besides what c sets (its
 * labelled algo/proto and env names, NCCL_ALGO/NCCL_PROTO when it forces them; NCCL_DEBUG* are
 * logging and never count): every other NCCL_* setting ("NCCL_MIN_CTAS=24 vs unset"), the
 * hosts, the GPUs' PCI addresses under the same host names, the GPU model, the NCCL version
 * (each only when both sources show it). Writes "; "-separated items to out; returns their
 * count (0: like with like). */
int nt_tune_source_diff(const nt_tune_source_t *c, const nt_tune_source_t *b, char *out,
                        size_t outlen);

/* nt_tune_coll_from_nccltests - the NCCL function of an nccl-tests collective name ("all_reduce"
 * -> NT_COLL_ALLREDUCE); -1 for those the tuner cannot steer (alltoall, sendrecv, ...). */
int nt_tune_coll_from_nccltests(const char *name);

/* nt_tune_nccltests_name - nccl-tests' name of the test that calls NCCL function coll
 * ("all_reduce" for NT_COLL_ALLREDUCE); NULL for one no test calls alone. */
const char *nt_tune_nccltests_name(int coll);

/* nt_tune_source_is_baseline - 1 when the source is NCCL's own choice: no label and no
 * NCCL_ALGO / NCCL_PROTO on its command line or in NCCL's echo. */
int nt_tune_source_is_baseline(const nt_tune_source_t *s);

/* nt_tune_judge_baselines - every baseline source judged by nettune doctor's busbw rule (the
 * doctor's own code, reports/doctor: busbw_below_expected against --expect, the report or the
 * log's NET/IB lines); one it fails (below its error_efficiency) is a warn finding
 * (baseline_degraded). NT_ERR_INVALID when the doctor's knowledge base does not load. */
nt_status_t nt_tune_judge_baselines(nt_tune_t *t);

/* nt_tune_table_coll - the nccl-tests name of a table's test: named in the file, else inferred
 * from its busbw/algbw factor (nt_ncclt_infer_coll), else --coll; NULL unknown. */
const char *nt_tune_table_coll(const nt_tune_t *t, const nt_ncclt_table_t *tab);

/* nt_tune_replay - turn every source's rows into points (what ran, time, noise), recheck busbw
 * and record anomalies as findings. A source that forces something (a label, or NCCL_ALGO /
 * NCCL_PROTO on its command line or in NCCL's echo) is compared with every baseline of its test
 * and shape (nt_tune_source_diff); one that differs in more is marked confounded, with a warn
 * finding naming the difference, and gives no rule or advice. */
nt_status_t nt_tune_replay(nt_tune_t *t);

/* nt_tune_baseline_us - the best time (us) of NCCL's default at p's collective, shape and size
 * among the points (replayed baselines and --measured defaults); -1 when none ran there. */
double nt_tune_baseline_us(const nt_tune_t *t, const nt_tune_point_t *p);

/* nt_tune_busbw_recheck - busbw recomputed from size and time (nccl-tests' formula) against the
 * printed value, for every row and half of `tab` (coll and nranks known). A value is bad when it
 * differs by more than 0.3% or 0.005 (half a unit of the two decimals printed, which is what
 * decides rows below 1.67 GB/s and those printed as 0.00). *max_rel is the largest relative
 * difference among values where 0.3% is the bound. Returns the number of values checked. */
unsigned long nt_tune_busbw_recheck(const nt_ncclt_table_t *tab, double *max_rel,
                                    unsigned long *bad);

/* nt_tune_add_finding - records a finding (printf-style text). */
void nt_tune_add_finding(nt_tune_t *t, nt_anomaly_kind_t kind, nt_anomaly_sev_t sev,
                         const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- search.c ---- */

/* nt_tune_search - rules and summary for every collective and shape. NT_ERR_INTERRUPTED when
 * --time-limit stopped it (what was decided is kept, t->completed = 0). */
nt_status_t nt_tune_search(nt_tune_t *t);

/* nt_tune_measured_read - read a --measured file (nettune.measured/1: {"points": [{coll, nnodes,
 * nranks, bytes, algo, proto, time_us, [default], [spread]}]}) into points. */
nt_status_t nt_tune_measured_read(nt_tune_t *t, const char *path, char *err, size_t errlen);

/* The candidate choice of one size: what the search picks (exposed for the tests). */
typedef struct nt_tune_choice {
    int algo, proto;
    int basis;          /* NT_BASIS_*, -1 when NCCL's default is kept */
    double time_us;     /* ours */
    double def_time_us; /* NCCL's default */
    int def_algo, def_proto;
    double predicted_us;
    double measured_us;
    unsigned chunk_bytes; /* a chunk size that won for (algo, proto); 0: NCCL's */
    char tradeoff[160];
} nt_tune_choice_t;

/* nt_tune_choose - the choice at one size of one collective and shape: the model's eligible
 * candidates (when have_model) ranked, the default being the model's best (or what the TUNING
 * lines show ran); a measured candidate replaces it only when it wins by more than the noise
 * (the larger of 3% and the out-of-place/in-place spread) under t->objective. Without a winning
 * measurement the model's choice is kept as a predicted rule when model_from_evidence. Points
 * with a forced chunk size are compared only with the same algorithm and protocol at NCCL's
 * chunk size (the final choice's, or NCCL's own without a rule): a winner under nt_tune_beats
 * sets ch->chunk_bytes (and makes a measured choice). Returns 1 when there is a choice to write
 * (ch->basis >= 0). */
int nt_tune_choose(const nt_tune_t *t, int coll, const nt_tune_shape_t *sh,
                   unsigned long long bytes, const nt_model_input_t *in,
                   const nt_model_table_t *tab, int have_model, int model_from_evidence,
                   nt_tune_choice_t *ch);

/* nt_tune_beats - the noise rule of every measured choice: 1 when cand_us beats base_us by more
 * than the noise, the larger of NT_TUNE_NOISE_MIN and spread (a fraction: the runs' own
 * (max - min) / mean), i.e. cand_us < base_us x (1 - noise). Times in us. */
int nt_tune_beats(double cand_us, double base_us, double spread);

/* nt_tune_nccl_chunk_bytes - NCCL's own chunk size for coll (nt_coll_t) with algo and proto at
 * the default buffer sizes (NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE unset): one
 * step of the protocol's buffer (buffer / NCCL_STEPS 8), times the collective's chunk steps for
 * ring Simple (4 for allreduce, allgather and reducescatter, 1 for broadcast and reduce), halved
 * for LL, and 15/16 of it for LL128 (the data elements of a line). NVIDIA/nccl v2.30.7-1
 * src/enqueue.cc:2222-2227 (calcCollChunking), src/init.cc:810-813 (the buffers: LL 8 lines x
 * 512 threads x 8 steps x 16 B, LL128 120 x 640 x 8 x 8 B, Simple 4 MiB),
 * src/include/device.h:26,97-98,110-115, src/include/collectives.h:20-34. A tuner's larger
 * value is clamped back to it (enqueue.cc:2229, :2312-2316), so candidates lie below it.
 * Returns 0 for CollNet and NVLS (their chunk sizes follow the size, :2232-2274) and for an
 * unknown index. */
unsigned nt_tune_nccl_chunk_bytes(int coll, int algo, int proto);

/* ---- write.c ---- */

/* nt_tune_write_tuning - the nettune.tuning/1 document (caller deletes it). */
cJSON *nt_tune_tuning_json(const nt_tune_t *t);

/* nt_tune_write_csv - NCCL's example-tuner CSV of the rules. */
char *nt_tune_csv(const nt_tune_t *t);

/* nt_tune_write_summary - the summary per collective, shape and size range, text or JSON. */
void nt_tune_print_summary(const nt_tune_t *t, FILE *out);
cJSON *nt_tune_summary_json(const nt_tune_t *t);

/* nt_tune_print_lost - "NCCL's default wins at every measured size", then per collective, shape
 * and size each alternative measured (what ran, its time, NCCL's default's, the difference):
 * the answer when no alternative won. */
void nt_tune_print_lost(const nt_tune_t *t, FILE *out);

/* ---- env_advice.c ---- */

/* One line of advice. */
typedef struct nt_env_advice {
    char name[48], value[64];
    char reason[256];
    int set;         /* 1: a NAME=VALUE line of --env-out; 0: reported only (site setting) */
    int new_process; /* NCCL reads it once per process */
} nt_env_advice_t;

/* nt_tune_env_advice - the advice for this tuning (only knobs safe to search, never
 * NCCL_ALGO/NCCL_PROTO beside rules, never LL128 forced, GDR level only from a measurement,
 * site settings reported, not set). Returns the number written to `out` (at most max). */
size_t nt_tune_env_advice(const nt_tune_t *t, nt_env_advice_t *out, size_t max);

/* nt_tune_env_text - the --env-out file in NCCL's own conf-file format (what NCCL reads from
 * NCCL_CONF_FILE, else ~/.nccl.conf, then /etc/nccl.conf: NVIDIA/nccl v2.28.9-1
 * src/misc/param.cc:27-69): "NAME=VALUE" lines, each after a "# reason" comment line; settings
 * only reported (site settings) are comment lines. Caller frees; NULL when out of memory. */
char *nt_tune_env_text(const nt_tune_t *t);

/* nt_tune_finding_code - the check-table code of a kind of finding ("NT-RUN-203" for
 * confounded; the busbw kinds are the doctor's rows), written with its category beside each
 * finding of tuning.json. NULL for a kind outside the table. */
const char *nt_tune_finding_code(nt_anomaly_kind_t kind);

/* ---- params.c ---- */

typedef enum nt_tune_action {
    NT_TUNE_ACTION_RUN = 0,
    NT_TUNE_ACTION_HELP,
    NT_TUNE_ACTION_VERSION
} nt_tune_action_t;

/* nt_tune_params_parse - argv into the options p (zeroed by the caller), defaults first, every
 * value checked; the files are only named here (run.c reads them; a --label applies to the
 * --replay before it). *action says what to do next. On a bad option (an unknown one too):
 * NT_ERR_INVALID with one line naming the option and the fix in err. */
nt_status_t nt_tune_params_parse(int argc, char **argv, nt_tune_params_t *p,
                                 nt_tune_action_t *action, char *err, size_t errlen);

/* nt_tune_params_usage - the --help text. */
void nt_tune_params_usage(FILE *out);

/* ---- run.c ---- */

/* nt_tune_run - the run of parsed options p: read the --replay files (with their labels), the
 * logs, the report and the --measured files, replay, search, write the outputs and the summary.
 * Returns the exit code (0 written, 1 written with warn findings, 2 bad input or nothing to tune
 * with one line on stderr, 3 stopped by --time-limit). */
int nt_tune_run(const nt_tune_params_t *p);

/* nt_tune_free - frees what the run read and derived (the report, sources, logs, findings,
 * summary, rules, points and plan). */
void nt_tune_free(nt_tune_t *t);

#endif
