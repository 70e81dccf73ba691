/* Reading NCCL debug logs and nccl-tests outputs line by line: a bounded-memory line reader and
 * the split of one line into launcher label, NCCL's "host:pid:tid [dev] NCCL INFO" prefix and
 * message. Shared by nettune doctor and nettune tune (lib/core/linereader.c, lib/nccl/logline.c). NCCL's
 * prefix is printed by src/debug.cc (NVIDIA/nccl v2.28.9-1 src/debug.cc, ncclDebugLog). */
#ifndef NETTUNE_LOGLINE_H
#define NETTUNE_LOGLINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longest line kept, in bytes; the rest of a longer line is skipped and counted. */
#define NT_LINE_MAX 4096
/* ---- lib/core/linereader.c ------------------------------------------------------------------------ */

typedef struct nt_linereader nt_linereader_t;

/* Opens `path` ("-" = stdin) for line-by-line reading with a fixed-size buffer, so memory
 * stays bounded whatever the file size or line length. Reads through zlib: a gzip file (.gz,
 * whatever its name) is decompressed, any other file is read as it is. Returns NULL and sets
 * errno on failure (EISDIR for a directory). */
nt_linereader_t *nt_linereader_open(const char *path);

/* Wraps an already open stream (not closed by nt_linereader_close). Used by the fuzz target. */
nt_linereader_t *nt_linereader_open_stream(FILE *fp);

/* Reads the next line into an internal buffer, NUL-terminated, without '\n' or a trailing '\r'.
 * A run of NUL bytes (the padding a node crash or a damaged filesystem leaves in a log) ends a
 * line like '\n' does and is skipped; the bytes are counted (nt_linereader_nul_bytes), and text
 * after the run is returned as its own line, numbered like the line it sits on.
 * Lines longer than NT_LINE_MAX - 1 bytes are cut there (the rest is skipped and counted in
 * nt_linereader_truncated). Returns 1 with a line, 0 at end of file, -1 on a read error (errno
 * set). */
int nt_linereader_next(nt_linereader_t *r, const char **line, size_t *len);

/* nt_linereader_set_block - reads in blocks of `bytes` (1 KiB to 64 KiB; zlib's buffers are
 * sized from it) instead of 64 KiB: for many files open at once that each gain little between
 * reads. Only before the first read. Returns 0, or -1 (already read, or out of range). */
int nt_linereader_set_block(nt_linereader_t *r, size_t bytes);

/* With `on` set, a line longer than NT_LINE_MAX - 1 bytes is returned in pieces of that size
 * instead of being cut: nt_linereader_piece says the line returned last continues in the next
 * call. For readers of records that span long lines (Inspector's verbose JSON), which bound
 * their own record size. */
void nt_linereader_set_split(nt_linereader_t *r, int on);

/* 1 if the line returned last was a piece of a longer line (set_split), or the end of the file
 * came before its newline (with set_split: a writer may still be at it); 0 if it ended there. */
int nt_linereader_piece(const nt_linereader_t *r);

/* nt_linereader_rearm - after nt_linereader_next returned 0 at the end of a file that is still
 * being written, lets the next call read what was appended since (zlib's gzclearerr: "useful for
 * continuing to read a gzip file that is being written concurrently"). */
void nt_linereader_rearm(nt_linereader_t *r);

/* 1 if the first block of the file is not text: a binary or compressed format (ELF, gzip, bzip2,
 * xz, zstd, zip by their magic numbers, after gzip is decompressed), or mostly control characters or non-UTF-8 bytes once NUL
 * bytes are left out; 2 for UTF-16 text (a byte-order mark). Decided on the first
 * nt_linereader_next call. NUL bytes alone do not make a file binary. */
int nt_linereader_is_binary(const nt_linereader_t *r);

/* Number of the line (counted in '\n', 1-based) the last returned line starts on. */
unsigned long nt_linereader_lineno(const nt_linereader_t *r);

/* Lines cut at NT_LINE_MAX so far. */
unsigned long nt_linereader_truncated(const nt_linereader_t *r);

/* NUL bytes skipped so far. */
uint64_t nt_linereader_nul_bytes(const nt_linereader_t *r);

/* Bytes consumed so far. */
uint64_t nt_linereader_bytes(const nt_linereader_t *r);

/* The position in the file read so far (compressed bytes for gzip, read-ahead included), -1
 * when not known: a followed file now shorter than this was truncated. */
int64_t nt_linereader_offset(const nt_linereader_t *r);

/* Starts the reading `bytes` into a file opened by path, before its first line is read (line
 * numbers then count from there). 0, -1 when it cannot (a stream, a read begun, gzip's seek
 * failed). */
int nt_linereader_skip(nt_linereader_t *r, int64_t bytes);

/* The descriptor of a file opened by path and read as it is (not gzip), for a pread of what it
 * holds now; -1 for a stream or gzip. Not to be read from or closed. */
int nt_linereader_fd(const nt_linereader_t *r);

/* Closes the file (unless it was given with _open_stream) and frees the reader; NULL is fine. */
void nt_linereader_close(nt_linereader_t *r);

/* 1 if the input was gzip-compressed (read through zlib, decompressed). */
int nt_linereader_gzip(const nt_linereader_t *r);

/* 1 if the gzip stream was damaged or cut short (then nt_linereader_next returned -1). */
int nt_linereader_gzip_damaged(const nt_linereader_t *r);

/* ---- lib/nccl/logline.c ----------------------------------------------------------------------------
 */

typedef enum { NT_LVL_NONE = 0, NT_LVL_INFO, NT_LVL_WARN } nt_level_t;

/* Launcher labels recorded per line (more are stripped, not named). */
#define NT_LINE_PREFIXES 4

/* One log line split into its parts. Pointers point into the line given to nt_line_parse. */
typedef struct {
    const char *body; /* the line without launcher prefix and timestamp */
    const char *host; /* NCCL prefix host, else the launcher label's host (pdsh, journald, Ray), or NULL */
    size_t host_len;
    long pid;         /* NCCL prefix pid, or -1 */
    int dev;          /* NCCL prefix [dev], or -1 */
    long task;        /* launcher task: srun "N:", Open MPI "[job,N]<stdout>:", torchrun; -1 */
    nt_level_t level; /* NCCL INFO / WARN (also "file.cc:NN WARN" without the NCCL word) */
    const char *msg;  /* text after "NCCL INFO " / "NCCL WARN " (or body when level NONE) */
    const char *prefix[NT_LINE_PREFIXES]; /* names of the launcher labels stripped, outermost first */
    int nprefix;
    unsigned long prefix_rows; /* bit i: row i of the prefix table (nt_line_prefix_at) stripped */
} nt_logline_t;

/* Splits `line` (NUL-terminated) into launcher labels, NCCL prefix and message. The labels are
 * the rows of one table in lib/logline.c (each with its source): Open MPI `[1,0]<stdout>:`,
 * torchrun/elastic and PyTorch `[default0]:` `[trainer3]:` `[rank3]:`, Lightning `[rank: 1] `,
 * Ray `(pid=1, ip=10.0.0.2) `, kubectl `--timestamps`, journald, a bracketed time (DeepSpeed),
 * srun `12: `, pdsh `host: `; then NCCL's `host:pid:tid [dev]` prefix (NCCL 2.7 and later print
 * it from src/debug.cc). The task and host come from the labels where NCCL's prefix lacks them.
 * Never fails: unknown lines come back with level NONE. */
void nt_line_parse(const char *line, nt_logline_t *out);

/* The length of the host name of a pdsh/clush "host: " label at the start of `s` (the prefix
 * table's pdsh row, lib/nccl/logline.c nt_m_pdsh: lowercase letters, digits, '.', '-', '_', with a
 * digit or '-', at most 64 characters, then ": "), or 0 when `s` (NULL is fine) has none or the
 * name is digits only (srun's "12: "). The operator-file reader uses it for "node01: " prefixes,
 * so that one rule decides what a host label is. */
size_t nt_line_pdsh_host(const char *s);

/* The prefix table: row count, and row i's name with an example and its source (NULL past the
 * end). */
size_t nt_line_prefix_count(void);
const char *nt_line_prefix_at(size_t i, const char **example, const char **source);

/* The row of the prefix table named `name` ("pdsh", "openmpi", ...), its bit in
 * nt_logline_t.prefix_rows being 1ul << row; -1 when no row has that name. */
int nt_line_prefix_row(const char *name);

#endif
