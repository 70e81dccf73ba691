/* What a running job's NCCL telemetry says, one record per collective per rank, and the readers
 * of the formats that carry it (lib/nccl/inspector.c): NCCL Inspector's JSON logs and its
 * Prometheus textfiles. All readers stream through the bounded line reader
 * (lib/core/linereader.c) and yield the same nt_jobrec_t. The alignment of records across ranks
 * (lib/nccl/jobalign.c) is declared here too. */
#ifndef NETTUNE_JOBREC_H
#define NETTUNE_JOBREC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The record kinds: one collective call of one rank, one point-to-point operation of one rank
 * (Inspector from 2.30.3), a per-GPU aggregate over a dump interval (Prometheus mode), or a
 * rank's state in NCCL RAS's report. */
typedef enum nt_jobrec_kind {
    NT_JOBREC_COLL,
    NT_JOBREC_P2P,
    NT_JOBREC_AGG,
    NT_JOBREC_RAS /* one rank of a communicator as NCCL RAS lists it (ncclras -f json) */
} nt_jobrec_kind_t;

/* How the exec time was measured, as Inspector names it (NCCL v2.30.7-1
 * plugins/profiler/inspector/inspector.cc:322-326): "kernel_gpu", "kernel_cpu",
 * "collective_cpu"; NT_TIMING_UNKNOWN when the record does not say (no such key). */
typedef enum nt_timing {
    NT_TIMING_UNKNOWN,
    NT_TIMING_KERNEL_GPU,
    NT_TIMING_KERNEL_CPU,
    NT_TIMING_COLLECTIVE_CPU
} nt_timing_t;

/* nt_timing_name - Inspector's spelling of a timing source; "unknown" for NT_TIMING_UNKNOWN. */
const char *nt_timing_name(nt_timing_t t);

#define NT_JOBREC_ID_MAX 40    /* "0x7f8c496ae9f661": a 64-bit hash in hex */
#define NT_JOBREC_NAME_MAX 64  /* comm_name, gpu, message-size range, algo_proto */
#define NT_JOBREC_HOST_MAX 256 /* gethostname's 255 and a NUL (inspector_json.cc:65-66) */
#define NT_JOBREC_OP_MAX 32    /* "ReduceScatter", "Send" */

/* One record. Fields a format does not carry are empty strings, -1 (rank, nranks, pid, peer) or
 * NAN (times and bandwidths); `seq` is valid only when has_seq is set. Units: bytes, us, GB/s
 * (1e9 B/s, algbw/busbw as nccl-tests defines them; Inspector computes them the same way). */
typedef struct nt_jobrec {
    nt_jobrec_kind_t kind;
    char comm_id[NT_JOBREC_ID_MAX];     /* header.id */
    char comm_name[NT_JOBREC_NAME_MAX]; /* header.comm_name (2.30.3 on) or the prom label */
    int rank, nranks, nnodes;           /* header.rank, n_ranks, nnodes */
    char host[NT_JOBREC_HOST_MAX];      /* metadata.hostname, prom label node */
    long pid;                           /* metadata.pid */
    char gpu[NT_JOBREC_NAME_MAX];       /* prom label gpu ("GPU0") */
    char op[NT_JOBREC_OP_MAX];          /* coll_perf.coll / p2p_perf.p2p / prom collective */
    int has_seq;
    uint64_t seq;                       /* coll_sn / p2p_sn */
    int peer;                           /* p2p_peer */
    double bytes;                       /* coll_msg_size_bytes; NAN for a prom size range */
    char size_range[NT_JOBREC_NAME_MAX]; /* prom label message_size ("4-5GB") */
    double exec_us;                     /* coll_exec_time_us */
    nt_timing_t timing;                 /* coll_timing_source */
    double algbw_GBps, busbw_GBps;      /* coll_algobw_gbs, coll_busbw_gbs */
    double dump_ts_us;                  /* metadata.dump_timestamp_us: the writer's clock */
    /* the reader's clock (CLOCK_REALTIME, us) when the record was read, for records written
     * while it was being followed; NAN otherwise (a file's content at the first read may be of
     * any age). Not in any format: the watch sets it. */
    double seen_us;
    double start_ts_us, stop_ts_us;     /* verbose event_trace_ts.coll_start_ts/_stop_ts */
    int nchannels;                      /* verbose kernel_events entries */
    /* RAS (NCCL v2.30.7-1 src/ras/client_support.cc:1931-2000): the rank is in the
     * communicator's "missing_ranks" (with status.unresponsive, status.considered_dead) or in
     * its "ranks" (status.async_error, status.abort_flag; collective_counts summed). */
    int ras_missing, ras_unresponsive, ras_dead, ras_async_error, ras_abort;
    double coll_count; /* NAN when not given */
} nt_jobrec_t;

/* The formats a reader knows. */
typedef enum nt_jobfmt {
    NT_JOBFMT_UNKNOWN,
    NT_JOBFMT_INSPECTOR_JSON, /* <dir>/<host>-pid<pid>.log */
    NT_JOBFMT_INSPECTOR_PROM, /* <dir>/nccl_inspector_metrics_<uuid>.prom */
    NT_JOBFMT_RAS_JSON        /* ncclras -f json (NCCL 2.29.2 on) */
} nt_jobfmt_t;

/* nt_jobfmt_name - "inspector_json", "inspector_prom", "ras_json", "unknown". */
const char *nt_jobfmt_name(nt_jobfmt_t f);

/* nt_jobfmt_sniff - the format of a file from its first non-blank bytes `head` (NUL-terminated):
 * '{' is Inspector JSON, a line starting "nccl_" or "# " with an nccl_ metric is Prometheus.
 * Detection is by content, never by the version string, because every Inspector release from
 * v2.28.3-1 writes "v4.0" (v2.28.3-1 ext-profiler/inspector/inspector.cc:367, v2.30.7-1
 * plugins/profiler/inspector/inspector_json.cc:61). */
nt_jobfmt_t nt_jobfmt_sniff(const char *head);

/* nt_inspector_parse - parses one Inspector JSON record (`text`, `len` bytes, need not be
 * NUL-terminated) into `rec`. Knows the writers of v2.28.3-1 .. v2.29.x (inspector.cc) and of
 * v2.30.3-1 on (inspector_json.cc): "header" {id, comm_name (2.30.3 on), rank, n_ranks, nnodes},
 * "metadata" {hostname, pid, dump_timestamp_us}, and either "coll_perf" {coll, coll_sn,
 * coll_msg_size_bytes, coll_exec_time_us, coll_timing_source, coll_algobw_gbs, coll_busbw_gbs,
 * verbose event_trace_ts} or "p2p_perf" {p2p, p2p_sn, p2p_peer, p2p_msg_size_bytes, ...} (2.30.3
 * on). Returns 0, or -1 when the text is not JSON or lacks header.id, header.rank or an op
 * object with its name and sequence number. */
int nt_inspector_parse(const char *text, size_t len, nt_jobrec_t *rec);

/* nt_inspector_prom_parse - parses one line of an Inspector Prometheus textfile into `rec`
 * (kind NT_JOBREC_AGG). Metrics nccl_bus_bandwidth_gbs and nccl_p2p_bus_bandwidth_gbs fill
 * busbw_GBps, nccl_collective_exec_time_microseconds and nccl_p2p_exec_time_microseconds fill
 * exec_us (v2.30.7-1 inspector_prom.cc:457-458); labels node, gpu, comm_name, nranks, n_nodes,
 * collective or p2p_operation, message_size (inspector_prom.cc:246-249). Returns 1 with a
 * record, 0 for a comment, blank or foreign metric line, -1 for a malformed nccl_ line. */
int nt_inspector_prom_parse(const char *line, nt_jobrec_t *rec);

/* nt_ras_rank_parse - parses one rank object of an ncclras -f json document (`text`, `len`
 * bytes) into `rec` (kind NT_JOBREC_RAS): rank, host, pid, status and collective_counts
 * (v2.30.7-1 src/ras/client_support.cc:1944-1976 for "ranks", :1986-2000 for "missing_ranks").
 * `comm` and `size` are the communicator's hash and size, `missing` says which list it came
 * from. Returns 0, or -1 when it is not JSON or has no rank. */
int nt_ras_rank_parse(const char *text, size_t len, const char *comm, int size, int missing,
                      nt_jobrec_t *rec);

typedef struct nt_jobreader nt_jobreader_t;

/* Largest record a reader accepts (a verbose record with many channels is a few KiB); a longer
 * one is skipped and counted. */
#define NT_JOBREC_TEXT_MAX (256 * 1024)

/* nt_jobreader_open - opens `path` ("-" = stdin, gzip read through zlib) and detects its format
 * from the content. An ncclras -f json document is told from a pretty-printed Inspector record
 * by its second line, "nccl_version" (client_support.cc:1921-1922); it is read rank object by
 * rank object in the writer's layout (one key a line), so memory stays bounded. Returns NULL with errno set when the file cannot be opened. */
nt_jobreader_t *nt_jobreader_open(const char *path);

/* nt_jobreader_open_stream - the same on an already open stream (not closed by
 * nt_jobreader_close). Used by the fuzz targets. NULL when out of memory. */
nt_jobreader_t *nt_jobreader_open_stream(FILE *fp);

/* nt_jobreader_next - the next record into `rec`. Returns 1 with a record, 0 at the end, -1 on
 * a read error. Records that do not parse are skipped and counted; a record cut short at the end
 * of the file (one still being written) is counted as partial, not as an error. */
int nt_jobreader_next(nt_jobreader_t *r, nt_jobrec_t *rec);

/* nt_jobreader_follow - with `on`, the end of the file is not the end of the input: a record cut
 * there is kept, and the next nt_jobreader_next reads what was appended since. Called before
 * the first read it also makes the read block small (8 KiB): a followed file gains a dump at a
 * time, and thousands of them stay open. */
void nt_jobreader_follow(nt_jobreader_t *r, int on);

/* 1 while a record cut at the end of the file is held (follow mode), 0 otherwise. */
unsigned long nt_jobreader_pending(const nt_jobreader_t *r);

/* The format detected (NT_JOBFMT_UNKNOWN until the first nt_jobreader_next). */
nt_jobfmt_t nt_jobreader_format(const nt_jobreader_t *r);

/* Records returned, skipped (unparsable or too long), and cut short at the end so far. */
unsigned long nt_jobreader_records(const nt_jobreader_t *r);
unsigned long nt_jobreader_skipped(const nt_jobreader_t *r);
unsigned long nt_jobreader_partial(const nt_jobreader_t *r);

/* Line of the input the first unparsable record started on, 0 if none. */
unsigned long nt_jobreader_first_bad_line(const nt_jobreader_t *r);

/* nt_jobreader_offset - the position in the file read so far (nt_linereader_offset), -1 when
 * not known. */
int64_t nt_jobreader_offset(const nt_jobreader_t *r);

/* nt_jobreader_skip - starts the reading `bytes` into the file (nt_linereader_skip), before the
 * first nt_jobreader_next. 0, -1 when it cannot. */
int nt_jobreader_skip(nt_jobreader_t *r, int64_t bytes);

/* nt_jobreader_fd - the descriptor of a plain file (nt_linereader_fd), -1 otherwise. */
int nt_jobreader_fd(const nt_jobreader_t *r);

/* nt_jobreader_close - closes and frees; NULL is fine. */
void nt_jobreader_close(nt_jobreader_t *r);

/* ---- lib/nccl/jobalign.c: records aligned across ranks ----------------------------------------- */

/* Distinct dump times kept per rank: enough to tell "it dumped again since" from "it stopped". */
#define NT_JOBRANK_DUMPS 4
/* Records of one rank and communicator whose dump times are at most this far apart (chained:
 * each from the one before) are one dump: Inspector stamps each record as it writes it. A dump
 * interval this short reads as one dump. */
#define NT_JOBREC_DUMP_BURST_US 10000.0

/* What is known of one rank of a communicator. */
typedef struct nt_jobrank {
    int seen;                      /* any record of this rank */
    uint64_t last_seq;             /* highest coll_sn seen (valid when seen) */
    unsigned long records;
    char host[NT_JOBREC_HOST_MAX];
    long pid;
    double last_dump_ts_us;        /* the writer's clock at its latest dump (NAN if unknown) */
    double dumps_us[NT_JOBRANK_DUMPS]; /* its latest distinct dump times, newest first */
    int ndumps;
    /* How far the reader's clock is ahead of this rank's writer, plus the read's own delay: the
     * least seen_us - dump_ts_us of its records read while followed (NAN: none yet). The delay
     * is never negative, so the least is the closest to the clocks' difference. A clock that
     * steps (NTP) moves it: at once when the difference shrinks, and after
     * NT_JOBREC_CLOCK_STEP_DUMPS dumps in a row each more than NT_JOBREC_CLOCK_STEP_US above it
     * when it grows (then to the least of those; until then nt_jobrank_ahead_us takes the
     * latest). */
    double ahead_us;
    double last_us;           /* seen_us - dump_ts_us of its latest record read while followed */
    int above_dumps;          /* dumps in a row above ahead_us by more than the step */
    double above_us, above_dump_us; /* the least of them, and the dump time of the last */
} nt_jobrank_t;

/* A read's own delay stays under this (the watch reads a dump within 0.3 s of its write when
 * the write wakes it); a rank's (read - dump) time further above its estimate for this many
 * dumps in a row is its writer's clock stepping back, or the watch's stepping forward. */
#define NT_JOBREC_CLOCK_STEP_US 0.3e6
#define NT_JOBREC_CLOCK_STEP_DUMPS 3

/* One collective call (one sequence number) of a communicator across its ranks. exec_us and
 * busbw_GBps have nranks entries, NAN where that rank's record has not been seen. */
typedef struct nt_jobcall {
    int used;
    uint64_t seq;
    char op[NT_JOBREC_OP_MAX];
    double bytes;
    int nseen;
    double *exec_us, *busbw_GBps;
    double dump_ts_us; /* earliest dump time among its records: when the call was seen */
    int dump_rank;     /* the rank whose record that was (its writer's clock), -1 none */
} nt_jobcall_t;

/* One communicator: its ranks and a bounded window of its latest calls (a ring indexed by
 * sequence number). */
typedef struct nt_jobcomm {
    char id[NT_JOBREC_ID_MAX];
    char name[NT_JOBREC_NAME_MAX];
    int nranks;
    nt_jobrank_t *ranks;
    size_t window;
    nt_jobcall_t *calls; /* calls[seq % window] */
    int any_seq;
    uint64_t max_seq;
    unsigned long records, stale, duplicate;
    unsigned long cpu_timed; /* records timed on the CPU (kernel_cpu, collective_cpu) */
} nt_jobcomm_t;

typedef struct nt_jobalign nt_jobalign_t;

/* nt_jobrank_dump_interval_us - a rank's dump interval: the shortest gap between its latest
 * distinct dump times (a dump with nothing new is skipped, which doubles one gap); NAN when it
 * has fewer than two. */
double nt_jobrank_dump_interval_us(const nt_jobrank_t *r);

/* nt_jobrank_ahead_us - how far the reader's clock is ahead of rank r's writer clock, the read's
 * delay included (ahead_us), or, when its latest record read is above that by more than
 * NT_JOBREC_CLOCK_STEP_US and the rank's dump interval, the latest one's (a very late read, or
 * a clock that stepped back: the larger difference counts a silence shorter, never longer).
 * NAN when nothing of the rank was read while followed. */
double nt_jobrank_ahead_us(const nt_jobrank_t *r);

/* nt_jobalign_create - an empty alignment keeping the latest `window` calls of each
 * communicator (at least 1), and at most `max_ranks` ranks per communicator (a record claiming
 * more is rejected). NULL when out of memory. */
nt_jobalign_t *nt_jobalign_create(size_t window, int max_ranks);

/* nt_jobalign_destroy - frees everything; NULL is fine. */
void nt_jobalign_destroy(nt_jobalign_t *a);

/* nt_jobalign_add - files one collective record under its communicator (header.id) and sequence
 * number (coll_sn). Returns 0 when filed; 1 when it is not aligned: not a collective record (P2P
 * and Prometheus aggregates carry no per-call identity across ranks), no rank count, a rank out
 * of range, a rank count other than the communicator's first, a call older than the window
 * (counted in stale) or one already filed for that rank (counted in duplicate); -1 when out of
 * memory. */
int nt_jobalign_add(nt_jobalign_t *a, const nt_jobrec_t *rec);

/* Records nt_jobalign_add refused with 1. */
unsigned long nt_jobalign_rejected(const nt_jobalign_t *a);

/* The communicators in the order first seen. */
size_t nt_jobalign_ncomms(const nt_jobalign_t *a);
const nt_jobcomm_t *nt_jobalign_comm(const nt_jobalign_t *a, size_t i);

/* nt_jobcomm_call - the call of sequence number `seq` in the window, or NULL. */
const nt_jobcall_t *nt_jobcomm_call(const nt_jobcomm_t *c, uint64_t seq);

/* nt_jobrank_dumps_after - how many of the rank's latest distinct dump times (at most
 * NT_JOBRANK_DUMPS) are later than `t_us`; 0 when t_us is NAN. */
int nt_jobrank_dumps_after(const nt_jobrank_t *r, double t_us);

/* nt_jobcall_spread - over the ranks seen in a call: the shortest and longest exec time (us)
 * and the rank with the shortest. Returns the number of ranks with a time (0: min/max NAN,
 * argmin -1). */
int nt_jobcall_spread(const nt_jobcomm_t *c, const nt_jobcall_t *k, double *min_us,
                      double *max_us, int *argmin);

/* nt_jobcall_median_busbw - the median busbw (GB/s) over the ranks seen in a call, NAN if none:
 * the communicator's bandwidth for that call, robust to one rank's odd record. */
double nt_jobcall_median_busbw(const nt_jobcomm_t *c, const nt_jobcall_t *k);

#endif
