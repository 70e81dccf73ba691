/* The report builder (nettune.report/1, docs/report.md and reports/schema/report.schema.json) on
 * cJSON, plus the small JSON helpers every module uses. Every cJSON_Add* result is checked:
 * the helpers return NT_ERR_NOMEM when cJSON could not allocate. Values are written in the unit
 * their key names (bw_GBps = 1e9 B/s, lat_us = microseconds); absent values are left out,
 * never written as a fake 0. */
#ifndef NETTUNE_REPORT_H
#define NETTUNE_REPORT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/stats.h"
#include "nettune/status.h"

#define NT_REPORT_SCHEMA "nettune.report/1"

/* not_judged: the thing exists but a figure needed to judge it is unknown (a port's rate or
 * state, a PCIe link state): never a failure, listed in summary.not_judged. */
typedef enum nt_verdict {
    NT_PASS = 0,
    NT_WARN = 1,
    NT_FAIL = 2,
    NT_SKIPPED = 3,
    NT_NOT_JUDGED = 4
} nt_verdict_t;
#define NT_NVERDICTS 5

/* nt_verdict_string - "pass", "warn", "fail", "skipped", "not_judged". */
const char *nt_verdict_string(nt_verdict_t v);
/* nt_verdict_parse - the reverse; NT_ERR_INVALID for anything else. */
nt_status_t nt_verdict_parse(const char *s, nt_verdict_t *out);
/* nt_verdict_worse - the worse of two verdicts (fail > warn > pass > not_judged > skipped). */
nt_verdict_t nt_verdict_worse(nt_verdict_t a, nt_verdict_t b);

/* nt_verdict_judged_note - what a pass rests on, for a summary's headline (docs/verdicts.md: a
 * pass is only as good as what was judged): ", nothing judged" when no check or link was
 * judged (npass + nwarn + nfail == 0), ", N not judged" when nnj of them could not be judged,
 * "" otherwise. The probe's summary and nettune report's text, md and html share it. Writes
 * into buf (len bytes, 32 are enough) and returns buf. */
const char *nt_verdict_judged_note(char *buf, size_t len, size_t npass, size_t nwarn,
                                   size_t nfail, size_t nnj);

/* JSON helpers: add a number / string / bool / null to an object. */
nt_status_t nt_json_add_num(cJSON *obj, const char *key, double value);
nt_status_t nt_json_add_str(cJSON *obj, const char *key, const char *value);
nt_status_t nt_json_add_bool(cJSON *obj, const char *key, int value);
/* nt_json_add_obj / add_arr - a new empty object/array under key (NULL on allocation failure). */
cJSON *nt_json_add_obj(cJSON *obj, const char *key);
cJSON *nt_json_add_arr(cJSON *obj, const char *key);
/* nt_json_add_stats - {"min","p50","p99","max"} (p99 only when with_p99) of s, each value
 * multiplied by scale (e.g. 1e6 for seconds -> lat_us, 1e-9 for B/s -> bw_GBps). */
nt_status_t nt_json_add_stats(cJSON *obj, const char *key, const nt_stats_t *s, double scale,
                              int with_p99);
/* nt_json_get_num / get_str - object member lookups with a default when absent or mistyped. */
double nt_json_get_num(const cJSON *obj, const char *key, double dflt);
const char *nt_json_get_str(const cJSON *obj, const char *key, const char *dflt);
/* nt_json_get_int / get_u64 - an integer member: the number truncated toward zero, as a C cast
 * would, when it lies in [INT_MIN, INT_MAX] (get_int) or [0, 2^64) (get_u64); dflt when absent,
 * mistyped or out of range. A JSON number is any double (1e300): casting one beyond the type is
 * undefined behaviour, so every integer read from a document goes through these. */
int nt_json_get_int(const cJSON *obj, const char *key, int dflt);
unsigned long long nt_json_get_u64(const cJSON *obj, const char *key, unsigned long long dflt);

/* nt_json_parse_text - parse len bytes of text (NUL-terminated at text[len]) into *out. The
 * one JSON reader of the project: NT_ERR_PARSE with why set (not logged) when the text is
 * empty or white space, holds a NUL byte, is a document cut short ("truncated JSON": closing
 * its open strings and brackets makes it parse), or is not JSON ("not valid JSON near line
 * L, column C", from cJSON's error position). */
nt_status_t nt_json_parse_text(const char *text, size_t len, cJSON **out, char *why,
                               size_t whylen);
/* nt_json_read_file_why - read the file at path ("-": standard input; at most max_bytes) and
 * parse it with nt_json_parse_text. Logs nothing: why gets the reason, without the path (the
 * caller names the file, once: under mpirun only rank 0 prints). NT_ERR_NOT_FOUND /
 * NT_ERR_IO when it cannot be read (a missing file, a directory), NT_ERR_INVALID when larger
 * than max_bytes, NT_ERR_NOMEM, NT_ERR_PARSE when it is not JSON. */
nt_status_t nt_json_read_file_why(const char *path, size_t max_bytes, cJSON **out, char *why,
                                  size_t whylen);
/* nt_json_read_file - nt_json_read_file_why with the failure logged: "'<path>': <why>". */
nt_status_t nt_json_read_file(const char *path, size_t max_bytes, cJSON **out);

/* nt_json_write_atomic - print doc to a temporary file beside path, fsync, then
 * rename it over path, so the file on disk is always a complete document. A symbolic link is
 * followed (its target is replaced, the link stays); a replaced file keeps its owner, group and
 * mode (as far as the caller may give them); an existing device, FIFO or socket is
 * written in place (never replaced); "-" writes to stdout. NT_ERR_INVALID for an empty path or
 * a directory, NT_ERR_IO with the path and errno logged on failure (the temporary file is
 * removed). */
nt_status_t nt_json_write_atomic(const cJSON *doc, const char *path);

/* nt_json_fill - write doc as JSON text to fd, ending in a newline, without ever holding the
 * text of the whole: an object's members one by one, those that are non-empty arrays (a
 * report's nodes, links, checks) one element per line, unformatted, the others formatted;
 * cJSON_Raw items (a report's links kept as their text) as they are. Through a 64 KiB buffer.
 * ctx is the const cJSON * (the nt_output_fill_fn shape). 0, or -1 with errno (ENOMEM, or the
 * write's). */
int nt_json_fill(int fd, void *ctx);

/* A filler of nt_output_write_fn: writes the output to fd; 0, or -1 with errno. */
typedef int (*nt_output_fill_fn)(int fd, void *ctx);

/* nt_output_write_fn - nt_output_write with the bytes written by fill (a streaming writer:
 * nt_json_fill) instead of a buffer; the same places, the same errors. */
nt_status_t nt_output_write_fn(const char *path, nt_output_fill_fn fill, void *ctx);

/* nt_output_write - write len bytes of data to path as nt_json_write_atomic describes (stdout,
 * a regular file replaced atomically, links followed, devices/FIFOs/fd aliases in place; a FIFO
 * without a reader is an error, not a wait). NT_ERR_INVALID for an empty path, a directory or a
 * link loop, NT_ERR_IO with the path and errno logged. */
nt_status_t nt_output_write(const char *path, const char *data, size_t len);

/* nt_output_resolve - where nt_json_write_atomic will write path: real gets the path with
 * symbolic links followed, *direct = 1 when it is written in place (stdout, a device, a FIFO).
 * NT_ERR_INVALID for an empty path or a directory (logged). */
nt_status_t nt_output_resolve(const char *path, char *real, size_t len, int *direct);

/* nt_output_stash - keep data as the document to write to path if the run is stopped by a
 * signal (nt_output_write_stash, from the signal handler). Only for outputs that are replaced
 * (regular files): NT_ERR_INVALID for stdout, devices and FIFOs; NT_ERR_NOMEM. A later stash
 * replaces an earlier one. */
nt_status_t nt_output_stash(const char *path, const char *data, size_t len);
/* nt_output_stash_json - nt_output_stash of doc as nt_json_fill writes it, streamed into an
 * unnamed file beside path (O_TMPFILE) with nothing kept in memory; where the filesystem has no
 * O_TMPFILE, its text is kept in memory instead. The same errors. */
nt_status_t nt_output_stash_json(const char *path, const cJSON *doc);
/* nt_output_stash_drop - forget the stashed document (the run wrote its final report). */
void nt_output_stash_drop(void);
/* nt_output_write_stash - write the stashed document as nt_output_write replaces a file
 * (O_TMPFILE where the filesystem has it, else temporary file, rename; no fsync: the launcher's
 * SIGKILL follows within ~10 ms, and an fsync can take longer). Async-signal-
 * safe: call it from a SIGTERM/SIGINT handler, so the report on disk says the run was stopped
 * even when the launcher kills the process a second later. Once per process: 0 written, -1
 * nothing stashed, already written, or failed (errno kept). */
int nt_output_write_stash(void);
/* nt_output_stash_written - whether nt_output_write_stash wrote the stashed document. */
int nt_output_stash_written(void);
/* nt_output_stash_rearm - the run goes on after all (a SIGCONT without a SIGTERM): the next
 * nt_output_write_stash writes again. */
void nt_output_stash_rearm(void);

/* nt_output_check - check before any work that path can be written (creates and removes the
 * temporary file beside it), and remove temporary files of earlier runs that were killed
 * mid-write (their process is gone). NT_ERR_IO / NT_ERR_INVALID with the reason logged. */
nt_status_t nt_output_check(const char *path);

/* One output of a command, for nt_output_preflight: the option as the user wrote it
 * ("--output", "--env-out"; a default can say so: "the default --output"), for the message, and
 * the path (NULL: not asked for; "-": stdout). */
typedef struct nt_output_opt {
    const char *opt;
    const char *path;
} nt_output_opt_t;

/* nt_output_preflight - the option check of a command's outputs, before any work: a run that
 * read or measured for minutes and then cannot write, or writes over what it read, or writes
 * one output over another, loses it all. outs: the nouts outputs, checked in their order;
 * inputs: the ninputs paths the tool reads ("-": standard input, compared when it is
 * redirected from a file; NULL entries skipped); dir_reads: what the tool reads of an input
 * that is a folder: NULL nothing, "" every file but dot files, ".json" the files with that
 * ending. Refused at the first output found wrong, with the reason in why (one line naming the
 * option, the file and the fix, without a tool's prefix, which the caller adds; nothing logged):
 *   NT_ERR_INVALID  an output is an input (compared by device and inode, after the links, so a
 *                   link, a hard link or another spelling of the input is caught), or lies in
 *                   an input folder among the files read there; an empty path, a directory, a
 *                   link loop; two outputs are one file (the same way, or the same new name in
 *                   the same folder; both "-" when standard output is not a terminal), except
 *                   a character device such as a terminal or /dev/null, which takes both;
 *   NT_ERR_IO       its folder does not exist or takes no new file (the writer's temporary
 *                   file is created and removed there; stale ones of killed runs are removed),
 *                   or a device/FIFO output is not writable (not opened: that would end a
 *                   FIFO reader's input);
 *   NT_ERR_NOMEM    out of memory.
 * Outputs "-" or NULL are never refused alone. Missing inputs are not reported here (the tool
 * names them when it reads them). */
nt_status_t nt_output_preflight(const nt_output_opt_t *outs, size_t nouts,
                                const char *const *inputs, size_t ninputs, const char *dir_reads,
                                char *why, size_t whylen);

/* nt_output_set_tool - the tool whose outputs these are ("nettune doctor"): from then on the
 * writer's error lines (nt_output_write, nt_output_check, ...) read "<tool>: <reason>: <fix>" on
 * stderr, as that tool's other lines do. Unset (the probe) they are logged as REPORT errors
 * with host and rank. tool must outlive the process (a string literal). */
void nt_output_set_tool(const char *tool);

/* Links held as their text. Rank 0 of a 1,000-node --full run keeps 499,500 links: as cJSON
 * trees about 4 KB each (2 GB), as their unformatted JSON text in one cJSON_Raw item about
 * 600 B. Such a links[] entry is opened (parsed) one at a time where it is read or changed;
 * cJSON prints a Raw item as it is, so the report is written from it directly.
 * nt_json_freeze - obj (deleted) as a cJSON_Raw item with its unformatted text; a Raw item or
 * NULL is returned as it is; NULL out of memory (obj then untouched). */
cJSON *nt_json_freeze(cJSON *obj);
/* nt_json_thaw - the tree of item: item itself when it is not a Raw item, else a new parse of
 * its text (NULL: out of memory, or not JSON). End with nt_json_thaw_end. */
cJSON *nt_json_thaw(const cJSON *item);
/* nt_json_thaw_end - after nt_json_thaw(item): when item is a Raw item, its text becomes tree's
 * if changed (kept as it was when out of memory) and tree is deleted; else nothing. */
void nt_json_thaw_end(cJSON *item, cJSON *tree, int changed);

/* nt_link_id - the stable link id of docs/report.md:
 * "<kind>[.<variant>]:<src host>/<src endpoint>-><dst host>/<dst endpoint>". variant may be
 * NULL or "". NT_ERR_INVALID when it does not fit in buf. */
nt_status_t nt_link_id(char *buf, size_t len, const char *kind, const char *variant,
                       const char *src_host, const char *src_ep, const char *dst_host,
                       const char *dst_ep);

/* nt_check_create - a checks[] entry {"name","host","target","verdict","observed","expected",
 * "unit","message"} with numeric observed/expected (NaN = left out). message is printf-style.
 * Check names are the documented list (README "Checks"): pcie_link, inventory, port_state,
 * port_rate, error_counters, gpudirect, software_consistency, ... Returns NULL on NOMEM. */
cJSON *nt_check_create(const char *name, const char *host, const char *target, nt_verdict_t v,
                       double observed, double expected, const char *unit, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));
/* nt_check_create_str - the same with string observed/expected (NULL = left out). */
cJSON *nt_check_create_str(const char *name, const char *host, const char *target, nt_verdict_t v,
                           const char *observed, const char *expected, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* nt_skipped_add - append {"probe","reason"} to a node's skipped array. */
nt_status_t nt_skipped_add(cJSON *skipped_arr, const char *probe, const char *reason);

/* nt_failed_node_reason - the reason of a summary.failed_nodes entry as Slurm is given it and
 * the probe's DRAIN line prints it: "nettune:<code> <reason without its prefix>" when the entry
 * has a code ("nettune:NT-NET-001 bw 0.82/2.77GB/s ..."), else its reason as it is. Written into
 * buf of len bytes (cut to fit); returns buf. One format for the drain path and the renderers. */
char *nt_failed_node_reason(const cJSON *failed_node, char *buf, size_t len);

/* nt_bytes_str - a byte count in the largest binary unit that divides it exactly ("4 MiB",
 * "8 GiB", "1000 B"), as nccl-tests' -b/-e and the verdict messages write sizes; into buf,
 * which it returns (24 bytes are enough). */
const char *nt_bytes_str(char *buf, size_t len, unsigned long long bytes);

#endif
