/* The one nccl-tests output reader (lib/nccl/nccltests.c), shared by nettune doctor and nettune tune.
 *
 * nccl-tests (github.com/NVIDIA/nccl-tests) prints, per run, a "# nThread ..." header, the
 * "# Using devices" block ("#  Rank  0 Group  0 Pid 12 on node01 device  0 [0x18] NVIDIA H100"),
 * a table header ("#  size  count  type  redop  root  time  algbw  busbw  #wrong ..."), one row
 * per size (out-of-place then in-place: time in us, algbw and busbw in GB/s = 1e9 B/s, #wrong or
 * N/A) and "# Avg bus bandwidth : X" (nccl-tests v2.19.6 src/util.cu writeBenchmarkLineBody,
 * src/common.cu). Older versions print no Group column and no "Collective test starting" line;
 * alltoall leaves the redop column empty. With -J FILE.json the same run is written as JSON
 * (src/util.cu jsonOutputInit, writeBenchmarkLinePreamble: "results"[] of {size, count, type,
 * redop, root, out_of_place{time, alg_bw, bus_bw, nwrong}, in_place{...}}).
 *
 * The reader is fed line bodies (launcher and NCCL prefixes removed by nt_line_parse, see
 * nettune/logline.h) one at a time, so a caller can interleave it with its own reading of the
 * NCCL lines of the same file. Memory is bounded: at most NT_NCCLT_MAX_TABLES tables of at most
 * NT_NCCLT_MAX_ROWS rows are kept; past that only counts grow. */
#ifndef NETTUNE_NCCLTESTS_H
#define NETTUNE_NCCLTESTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#define NT_NCCLT_MAX_TABLES 256
#define NT_NCCLT_MAX_ROWS 4096

/* The per-iteration report of nccl-tests -I in a -J document ("out_of_place_per_iter",
 * "in_place_per_iter": nccl-tests v2.19.6 src/util.cu:569-602): the summary over the iterations
 * after `skipped`, each iteration's time being the max over the GPUs of a process and then over
 * the processes; and from "per_process_max_times_us" (one row per process, more than one
 * process only), the process whose mean is highest. Times in us. */
typedef struct nt_ncclt_iters {
    int has;
    int skipped, niters, nprocs; /* nprocs 0 when the document has no per-process rows */
    double min_us, max_us, avg_us, p50_us, p95_us, p99_us, stdev_us, cv_pct;
    int slowest_proc;     /* row index (process) with the highest mean time, -1 none */
    double slowest_ratio; /* its mean over the median of the process means; NAN none */
} nt_ncclt_iters_t;

/* One row: [0] out-of-place, [1] in-place. */
typedef struct nt_ncclt_row {
    unsigned long long bytes, count;
    char type[16];     /* "float", "bfloat16", ...; "" when the column is absent */
    char redop[16];    /* "sum", "none", ...; "" when empty or absent */
    int typesize;      /* bytes per element of `type`, 0 unknown */
    int redop_kind;    /* 1 a reduction, 0 "none" or an empty column, -1 no redop column */
    long root;         /* the root column, -1 when absent or -1 */
    double time_us[2]; /* as printed */
    double algbw_GBps[2];
    double busbw_GBps[2];
    long wrong[2];      /* -1 for N/A (-c 0) or JSON null */
    int has_ip;         /* 0 when the in-place half is missing (JSON without in_place) */
    unsigned long line; /* line of the file (0 for JSON) */
    nt_ncclt_iters_t iters[2]; /* -I in a -J document; has 0 otherwise */
} nt_ncclt_row_t;

/* One table (one run of one collective). */
typedef struct nt_ncclt_table {
    unsigned input;            /* the caller's input number given to nt_ncclt_reader_new_input */
    unsigned long header_line; /* line of the column header (0 for JSON) */
    char *coll;                /* nccl-tests name without _perf: "all_reduce", ...; NULL unknown */
    char *gpu_model;           /* from the first device line, NULL unknown */
    int nranks;                /* device lines of the run, -1 unknown */
    int nhosts;                /* distinct host names among them, -1 unknown */
    int gpus_per_host;         /* most device lines on one host, -1 unknown */
    nt_ncclt_row_t *rows;      /* in file order */
    size_t nrows;
    unsigned long rows_total;     /* rows read, including those past NT_NCCLT_MAX_ROWS */
    double avg_busbw_GBps;        /* "# Avg bus bandwidth", -1 if absent (never judge by it) */
    int complete;                 /* the table ended with "Avg bus bandwidth" */
    long oob_values;              /* "# Out of bounds values : N FAILED|OK" (-J: out_of_bounds.count):
                                     checks that found wrong data (-c 1), -1 when not printed */
    unsigned long oob_line;       /* its line, 0 none (JSON) */
    unsigned long long max_bytes; /* the run header's "maxBytes" (nccl-tests -e), 0 unknown */
    unsigned long run_line;       /* line of that "# nThread ... maxBytes" header, 0 none */
    unsigned long partial_line;   /* a line of the open table that starts like a row but does not
                                     parse (the run was cut mid-row), 0 none */
    int json;                     /* read from a -J JSON document */
} nt_ncclt_table_t;

/* A parsed "# Using devices" line. Pointers point into the line given to the reader. */
typedef struct nt_ncclt_device {
    long rank;
    const char *host;
    size_t host_len;
    const char *model; /* GPU name after "[bus id]", NULL if none */
    size_t model_len;
} nt_ncclt_device_t;

typedef enum nt_ncclt_event {
    NT_NCCLT_NONE = 0, /* not an nccl-tests line */
    NT_NCCLT_RUN,      /* "# nThread ... minBytes": a new run (closes the open table) */
    NT_NCCLT_META,     /* another nccl-tests line (version, "Using devices", column units, ...) */
    NT_NCCLT_DEVICE,   /* a device line: nt_ncclt_reader_device() */
    NT_NCCLT_TABLE,    /* a column header opened a table: the last of nt_ncclt_reader_table() */
    NT_NCCLT_ROW,      /* a row of the open table: nt_ncclt_reader_row() */
    NT_NCCLT_END       /* "# Avg bus bandwidth": closes the open table, if any */
} nt_ncclt_event_t;

typedef struct nt_ncclt_reader nt_ncclt_reader_t;

/* nt_ncclt_reader_create - an empty reader; NULL when out of memory. */
nt_ncclt_reader_t *nt_ncclt_reader_create(void);

/* nt_ncclt_reader_destroy - frees the reader and its tables; NULL is fine. */
void nt_ncclt_reader_destroy(nt_ncclt_reader_t *r);

/* nt_ncclt_reader_new_input - the next lines come from input number `input` (the caller's
 * numbering, kept in each table): closes the open table and forgets the run context. */
void nt_ncclt_reader_new_input(nt_ncclt_reader_t *r, unsigned input);

/* nt_ncclt_reader_feed - reads one line body (NUL-terminated, prefixes removed) found at 1-based
 * line `lineno`. Returns what the line was. A row is only taken while a table of the current
 * input is open. Never fails: out of memory drops the table or row (counted). */
nt_ncclt_event_t nt_ncclt_reader_feed(nt_ncclt_reader_t *r, const char *body, unsigned long lineno);

/* nt_ncclt_reader_scan_coll - a line that names a test binary ("<coll>_perf", e.g. a command
 * line or "# Collective test starting: all_reduce_perf") sets the collective of the tables that
 * follow. Returns 1 when it did. */
int nt_ncclt_reader_scan_coll(nt_ncclt_reader_t *r, const char *s);

/* nt_ncclt_reader_device / _row - the device line of the last NT_NCCLT_DEVICE event and the row
 * of the last NT_NCCLT_ROW event (valid until the next feed). */
const nt_ncclt_device_t *nt_ncclt_reader_device(const nt_ncclt_reader_t *r);
const nt_ncclt_row_t *nt_ncclt_reader_row(const nt_ncclt_reader_t *r);

/* nt_ncclt_reader_ntables / _table / _dropped - the tables read so far, in file order, and the
 * number of tables not kept (past NT_NCCLT_MAX_TABLES or out of memory). */
size_t nt_ncclt_reader_ntables(const nt_ncclt_reader_t *r);
const nt_ncclt_table_t *nt_ncclt_reader_table(const nt_ncclt_reader_t *r, size_t i);
unsigned long nt_ncclt_reader_dropped(const nt_ncclt_reader_t *r);

/* nt_ncclt_reader_add_json - adds the run of an nccl-tests -J document (one table) as input
 * `input`. Returns 1 when it held a results array, 0 when `doc` is not such a document. A device
 * whose rank is not in 0..INT_MAX and a result whose size or count is not in 0..2^64 are skipped
 * (nccl-tests writes an int and size_t); an nwrong beyond LONG_MAX is kept as LONG_MAX. The
 * -I per-iteration objects fill row.iters (nt_ncclt_iters_t). */
int nt_ncclt_reader_add_json(nt_ncclt_reader_t *r, const cJSON *doc, unsigned input);

/* nt_ncclt_parse_row - parses a data row "size count [type [redop [root]]] time algbw busbw
 * wrong time algbw busbw wrong". The row is read from both ends because columns differ between
 * versions and collectives. Returns 1 and fills `row` (line left 0), 0 if it is not a row. */
int nt_ncclt_parse_row(const char *s, nt_ncclt_row_t *row);

/* nt_ncclt_parse_device - parses a "# Using devices" entry; 1 and `dev` filled, else 0 (also for
 * a rank that is negative or beyond INT_MAX: nccl-tests numbers its ranks with an int). */
int nt_ncclt_parse_device(const char *s, nt_ncclt_device_t *dev);

/* nt_ncclt_busbw_factor - busbw / algbw as nccl-tests computes it for `coll` (nccl-tests name)
 * on `nranks` ranks (src/all_reduce.cu AllReduceGetBw: 2(n-1)/n; all_gather, reduce_scatter,
 * alltoall: (n-1)/n; broadcast, reduce, sendrecv, gather, scatter: 1). -1 if unknown. */
double nt_ncclt_busbw_factor(const char *coll, int nranks);

/* nt_ncclt_infer_coll - the collective of a table whose log does not name the test, from the
 * table itself: nccl-tests reports busbw = algbw x a factor that depends on the collective and
 * the rank count (nt_ncclt_busbw_factor); the redop column (a reduction or none) and the root
 * column (broadcast and reduce have one) narrow it down. Judged on the largest size whose algbw
 * is printed as 1.00 or more (two decimals). Returns the one collective that fits, or NULL; `how`
 * (may be NULL) gets the reasoning, and the candidates when several fit ("all_reduce or sendrecv:
 * busbw = algbw, as both report with 2 ranks"). `nranks` overrides t->nranks when > 0. */
const char *nt_ncclt_infer_coll(const nt_ncclt_table_t *t, int nranks, char *how, size_t howlen);

/* nt_ncclt_row_best_busbw - the better of the row's out-of-place and in-place busbw. */
double nt_ncclt_row_best_busbw(const nt_ncclt_row_t *row);

#endif
