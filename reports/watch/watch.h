/* nettune-watch: judges a running (or finished) job from NCCL's own telemetry (docs/watch.md).
 * main.c chooses the exit code, params.c parses the command line, run.c reads, aligns and
 * writes, judge.c holds the judgements and their rules of evidence. */
#ifndef NETTUNE_WATCH_H
#define NETTUNE_WATCH_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "nettune/jobrec.h"
#include "nettune/status.h"

typedef enum nt_watch_format { NT_WATCH_TEXT, NT_WATCH_JSON, NT_WATCH_PROM } nt_watch_format_t;

/* --drain: off, run scontrol, or print the scontrol lines (the probe's grammar, probes/drain.h). */
typedef enum nt_watch_drain { NT_WATCH_DRAIN_OFF = 0, NT_WATCH_DRAIN_APPLY, NT_WATCH_DRAIN_DRY_RUN } nt_watch_drain_t;

/* The command's options, parsed and checked once. */
typedef struct nt_watch_params {
    char **inputs; /* directories or files, as given */
    int ninputs;
    nt_watch_format_t format; /* what stdout shows */
    const char *output;       /* the nettune.watch/1 document's path (with --format prom the
                                 textfile's), NULL = none, "-" = stdout */
    const char *report;       /* --report: the pre-job nettune.report/1, NULL = none */
    nt_watch_drain_t drain;   /* --drain */
    size_t window;            /* calls kept per communicator */
    int strict;               /* warnings fail (the probe's --strict) */
    int follow;               /* re-read the inputs as they grow, judge after each read */
    unsigned interval_s;      /* seconds between reads in --follow */
    unsigned long polls;      /* --follow stops after this many reads, 0 = at SIGINT/SIGTERM */
    int quiet;
} nt_watch_params_t;

typedef enum nt_watch_action { NT_WATCH_RUN, NT_WATCH_HELP, NT_WATCH_VERSION } nt_watch_action_t;

/* nt_watch_params_parse - argv into p (defaults first). On a bad option writes one line naming
 * the option and the fix into err and returns NT_ERR_INVALID. */
nt_status_t nt_watch_params_parse(int argc, char **argv, nt_watch_params_t *p,
                                  nt_watch_action_t *action, char *err, size_t errlen);

/* nt_watch_usage - the --help text. */
void nt_watch_usage(FILE *f);

/* The outcome of judging: counts of findings by status. */
typedef struct nt_watch_outcome {
    int fail, warn;
} nt_watch_outcome_t;

/* nt_watch_ras_judge - a rank NCCL RAS lists as missing (ncclras -f json "missing_ranks",
 * v2.30.7-1 src/ras/client_support.cc:1986-2000) is a finding NT-JOB-203 of status fail; other
 * records add nothing. Returns 0, or -1 when out of memory. */
int nt_watch_ras_judge(const nt_jobrec_t *rec, cJSON *findings, nt_watch_outcome_t *out);

/* nt_watch_judge - adds the judgements of every communicator of `a` to the document: findings
 * (array "findings") and what could not be judged with the reason (array "not_judged"). The
 * counts are added to `out` (zero it first).
 * `prom_records` is the number of Prometheus aggregates read: they carry no rank, communicator
 * id or sequence number, so their own not_judged entry says what they cannot show. `now_us`
 * is the wall clock (us since the epoch) while following a running job, NAN otherwise: a rank
 * behind that has missed two of its own dumps by then is hung. Returns 0, or -1 when out of
 * memory (a cJSON_Add failed). */
int nt_watch_judge(const nt_jobalign_t *a, unsigned long prom_records, double now_us,
                   cJSON *findings, cJSON *not_judged, nt_watch_outcome_t *out);

/* Who a finding names: host "" and rank or pid -1 when it names none. */
typedef struct nt_watch_who {
    const char *comm_id, *comm_name, *host;
    int rank;
    long pid;
} nt_watch_who_t;

/* nt_watch_finding_add - appends a finding to `arr`: the check table's row for `code` gives its
 * check name, category and action; status "warn" or "fail"; verdict and reason as given.
 * Returns the finding (to add keys to), NULL when out of memory or the code is not a row. */
cJSON *nt_watch_finding_add(cJSON *arr, const char *code, const char *status, nt_watch_who_t w,
                            const char *verdict, const char *reason);

/* nt_watch_fmt_vs - `v` printed with `dmin` decimals, or with more (at most 3) when fewer would
 * round it onto `threshold` as the text prints it (with `dmin` decimals) or past it, so that a
 * value compared with a threshold never reads as the threshold it missed: a ratio of 69.94%
 * beside "below 70% is a finding" is "69.9", not "70". Writes into buf (len bytes), returns
 * buf. */
const char *nt_watch_fmt_vs(char *buf, size_t len, double v, double threshold, int dmin);

/* nt_watch_not_judged_add - appends {check, comm_id (null when `comm` is NULL), reason} to
 * `arr`, the reason from printf-style `fmt`. Returns 0, -1 when out of memory. */
int nt_watch_not_judged_add(cJSON *arr, const char *check, const char *comm, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* nt_watch_node_settings - adds the slow-node rules of evidence to the "settings" object `s`
 * (keys slow_node_*). Returns 0, -1 when out of memory. */
int nt_watch_node_settings(cJSON *s);

/* nt_watch_node_judge - the slow node, NIC or link (NT-JOB-205, reports/watch/judge_node.c):
 * the communicators that contain a host are slower than those of the same shape (ranks, nodes)
 * and calls without it, in the shortest exec time of each call (the rank that arrives last),
 * the median of each communicator's latest calls. One finding naming the host (or the two
 * hosts of a link), or a not_judged entry with the reason. `slow_comms` (NULL, or one flag per
 * communicator of `a`, in its order) is set for each communicator slower than the typical one
 * of its shape by the same rule, whichever node it blames. now_us: the clock when following a
 * running job (NAN otherwise), for the stall rule's calls still held. Returns 0, -1 when out of
 * memory. */
int nt_watch_node_judge(const nt_jobalign_t *a, double now_us, cJSON *findings,
                        cJSON *not_judged, nt_watch_outcome_t *out, char *slow_comms);

/* The hang rule's evidence (reports/watch/behind.c): a rank is behind when the others are this
 * many calls ahead, and silent after this many of its own dump intervals. */
extern const int nt_watch_hang_min_lag;
extern const double nt_watch_hang_min_dumps;
/* ...and a silent rank whose network stalled is a hang only after this many; a second rank
 * behind with it counts (a transfer held between them) once silent for this many. */
extern const double nt_watch_hang_stall_dumps;
extern const double nt_watch_hang_also_dumps;

/* nt_watch_rank_ts_us - a time of rank r's writer clock (us, a dump_timestamp_us) on the
 * watch's clock: plus how far the watch's clock is ahead of that writer's
 * (nt_jobrank_ahead_us), unless that is at most nt_watch_read_delay_us and not negative (the
 * read's own delay). ts_us itself when the rank has no estimate (nothing of it was read after
 * its file's first read). While following, every time compared with the watch's clock or with
 * another rank's goes through this first. */
extern const double nt_watch_read_delay_us;
double nt_watch_rank_ts_us(const nt_jobrank_t *r, double ts_us);

/* nt_watch_dump_interval_us - a rank's dump interval: the shortest gap between its latest
 * distinct dump times (a dump with nothing new is skipped, which doubles one gap); NAN when it
 * has fewer than two. */
double nt_watch_dump_interval_us(const nt_jobrank_t *r);

/* nt_watch_rank_behind - whether rank i of c is behind by the hang rule (reports/watch/behind.c:
 * at least hang_min_lag calls behind the communicator's furthest, with most of the other ranks
 * seen that far ahead). *every_us gets its dump interval (the shortest gap between its latest
 * dumps, else another rank's), *ref_us the time it is judged at (now_us when following, else
 * the latest dump of the ranks ahead), *missed its dump intervals of silence (NAN when not
 * known): since its last dump, or since one interval before the others' first record past its
 * last call when that is later (they were silent until then too). Returns the count of ranks
 * ahead, 0 when it is not behind. */
int nt_watch_rank_behind(const nt_jobcomm_t *c, int i, double now_us, double *every_us,
                         double *ref_us, double *missed);

/* nt_watch_joined_due_us - for rank i of c, 2 or more calls behind the furthest: when its call
 * last_seq + 1 is overdue, nt_watch_hang_joined_dumps of its dump intervals (every_us) after
 * the others' first record of call last_seq + 2 was dumped (on the watch's clock while
 * following, now_us finite; else the writer's). It joined that call after it completed call
 * last_seq + 1, and a live rank dumps what it completed within one of its intervals. NAN when
 * it is less than 2 behind, every_us is not known or that call is not seen. */
extern const double nt_watch_hang_joined_dumps;
double nt_watch_joined_due_us(const nt_jobcomm_t *c, int i, double every_us, double now_us);

/* nt_watch_next_mark_us - while following (now_us: the watch's clock, us since the epoch), the
 * earliest time at which a rank behind in a communicator of `a` will have been silent for one
 * of the marks the hang and stall rules compare with (nt_watch_hang_also_dumps,
 * hang_min_dumps, hang_stall_dumps of its dump intervals, counted as nt_watch_rank_behind
 * does), or, 2 or more behind, nt_watch_joined_due_us;
 * NAN when no rank is behind, or without now_us. Nothing is written while every rank is
 * blocked behind one that stopped, so --follow reads again then rather than at its interval:
 * a hang, and a held call the stall rule counts, come when they are due. Notes that name
 * nobody (a communicator that stands still, a job that stopped) wait for the next write or
 * --interval. */
double nt_watch_next_mark_us(const nt_jobalign_t *a, double now_us);

/* nt_watch_also_behind - another rank of c than i that is behind and silent for
 * nt_watch_hang_also_dumps of its dump intervals (every_us where it has none of its own): at
 * now_us while following (its dumps on the watch's clock, nt_watch_rank_ts_us), else at ref_us;
 * or -1. */
int nt_watch_also_behind(const nt_jobcomm_t *c, int i, double every_us, double ref_us,
                         double now_us);

/* nt_watch_two_behind - whether two ranks of c on two hosts are behind together in one call (the
 * same last call), one silent for hang_min_dumps of its dump intervals and the other for
 * hang_also_dumps, neither yet for hang_stall_dumps, while the others went on: a transfer
 * between them stalls (a stopped process holds back only itself; past hang_stall_dumps it is
 * no longer slow). *silent_us gets how long the later of the two has been silent. Returns 1
 * or 0. */
int nt_watch_two_behind(const nt_jobcomm_t *c, double now_us, double *silent_us);

/* nt_watch_comm_stalls - the stalls among communicator c's latest calls, by the stall rule of
 * NT-JOB-205 (reports/watch/judge_node.c: a call whose shortest exec time, the rank that arrives
 * last, is at least stall_min_us and stall_ratio times its series' fastest, as a TCP
 * retransmission timeout holds one), and a call two ranks on two hosts are held in now
 * (nt_watch_two_behind at now_us, NAN when not following). *worst_us (NULL: not wanted) gets
 * the longest completed one; *fresh (NULL: not wanted) is 1 when a completed one is among the
 * latest stall_fresh_calls complete calls (12: the stalls are not over). Returns the count, -1
 * when out of memory. */
int nt_watch_comm_stalls(const nt_jobcomm_t *c, double now_us, double *worst_us, int *fresh);

/* The --report comparison (model.c). */
typedef struct nt_watch_model nt_watch_model_t;

/* nt_watch_model_open - reads the pre-job nettune probe report at path for the comparison.
 * NULL with one line in err (naming the file and the fix) when it cannot be opened or is not a
 * nettune.report/1; NULL with err "" when it does not parse (the reader said where, once). A report whose NCCL version the model lacks opens, and judges nothing:
 * nt_watch_model_judge says why. */
nt_watch_model_t *nt_watch_model_open(const char *path, char *err, size_t errlen);

/* nt_watch_model_close - frees; NULL is fine. */
void nt_watch_model_close(nt_watch_model_t *m);

/* nt_watch_model_judge - for each communicator of `a` and each collective and size of its
 * window: the median busbw of its calls against the busbw NCCL's cost model predicts for its
 * shape (nodes x ranks per node, from its ranks' hosts) on the report's links (tuner/model.h
 * through nt_tune_model_input; the report's slowest measured inter-node RDMA link between the
 * communicator's hosts, as a share of its NICs' line rate, scales the inter-node bandwidth).
 * At least 8 calls and a median below 70% of the prediction: finding NT-JOB-206
 * (watch_below_model, warn) with coll, bytes, calls_judged, expected_busbw_GBps,
 * observed_busbw_GBps, ratio, algo and proto. What cannot be judged is a not_judged entry with
 * the reason: no report (m NULL), no modelled NCCL version, ranks without records, uneven or
 * one-node shapes, hosts or links the report lacks, a collective the model has not. Returns 0,
 * or -1 when out of memory. */
int nt_watch_model_judge(const nt_watch_model_t *m, const nt_jobalign_t *a, cJSON *findings,
                         cJSON *nj, nt_watch_outcome_t *out);

/* nt_watch_series_take - the series of the call at sequence number s0 of c's window: every
 * call from s0 on of the same collective and bytes not yet taken (done[seq % window] is set for
 * each taken), its median busbw (GB/s) into bw, its sequence number into seq and its dump time
 * (us) into ts (seq, ts may be NULL), for the calls with a busbw; each array holds c->window
 * entries. Returns how many, or -1 when s0 has no call or was taken by an earlier series (no
 * new series starts there). Series: reports/watch/series.c. */
int nt_watch_series_take(const nt_jobcomm_t *c, uint64_t s0, char *done, double *bw,
                         uint64_t *seq, double *ts);

/* nt_watch_settings - the rules of evidence as the document's "settings" object; NULL when out
 * of memory. */
cJSON *nt_watch_settings(size_t window);

/* nt_watch_run - reads every input, aligns, judges, writes the text summary (stdout unless
 * quiet or format json) and the document. With follow, reads on every interval_s seconds what
 * was appended, rewrites the document after each read, and writes the summary at the end. Returns the exit code
 * (include/nettune/exitcode.h): 2 when an input is unusable (one line says which and why). */
int nt_watch_run(const nt_watch_params_t *p);

/* nt_watch_drain_reason - the Slurm reason of a finding (drain.c), in the probe's format
 * "nettune:watch <check> <observed>/<expected><unit> rank R pid P comm ID": the check without
 * its "watch_" prefix, the figures where the check has them (hang: last and furthest call;
 * straggler: calls it was fastest in, calls judged; onset and below-model: busbw in GB/s).
 * nt_failed_node_reason puts the finding's code after the prefix, as for the probe's nodes.
 * Written into buf (len bytes, cut to fit); returns buf. */
char *nt_watch_drain_reason(const cJSON *finding, char *buf, size_t len);

/* nt_watch_failed_nodes - a document {"summary": {"failed_nodes": [...], "completed": false}}
 * in the probe report's shape: one entry (host, reason, code, category; "more_reasons" for a
 * host's further findings) per host named by a finding whose check table row
 * (include/nettune/checks.def) has category drain, in finding order; code and category are the
 * row's. Other rows (a straggler, a slow node, an onset: monitor) drain nothing. NULL when out of
 * memory. */
cJSON *nt_watch_failed_nodes(const cJSON *findings);

/* nt_watch_drain - --drain: the hosts of nt_watch_failed_nodes through the probe's drain path
 * (nt_drain_run_doc: sinfo's node names, an administrator's drain left alone, scontrol, or the
 * lines printed with --drain=dry-run); nothing is resumed. A node running a job goes DRAINING
 * and is DRAINED when its jobs end (scontrol(1), State=DRAIN). Lines go to stdout with
 * --format text, else to stderr. Returns 0, or -1 when a drain failed (already said). */
int nt_watch_drain(const nt_watch_params_t *p, const cJSON *doc);

#endif
