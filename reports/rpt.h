/* nettune report: the internal API shared by the renderers, the exporter, diff and validation.
 *
 * A document (nettune.report/1 or nettune.tuning/1) is read once with cJSON and indexed into
 * nt_rdoc_t: nodes sorted by hostname, links and checks with their fields looked up once and
 * each tied to its node. Renderers write into a growable buffer (nt_buf_t) that the command
 * writes out in one go, to a temporary file renamed into place, so a dashboard scraping the
 * file never sees half of it. Units stay those of the JSON keys (bw_GBps = 1e9 B/s, lat_us);
 * the Prometheus exporter converts to base units where it writes. */
#ifndef NETTUNE_REPORTS_RPT_H
#define NETTUNE_REPORTS_RPT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "nettune/rdoc.h"
#include "nettune/verdict.h"
#include "nettune/report.h"
#include "nettune/status.h"

#define NT_PLUGIN_REPORT_SCHEMA "nettune.plugin-report/1"
#define NT_DIFF_SCHEMA "nettune.diff/1"
#define NT_HISTORY_SCHEMA "nettune.history/1"
#define NT_VALIDATION_SCHEMA "nettune.validation/1"
/* Largest input read: a --full report at 1,000 nodes with every sample stays well below. */
#define NT_RPT_MAX_BYTES NT_RDOC_MAX_BYTES
/* Above this many nodes the HTML page aggregates instead of drawing the node x node matrix. */
#define NT_HEATMAP_MAX_NODES 100

/* ---- output buffer (buf.c) ---- */

typedef struct nt_buf {
    char *data;  /* NUL-terminated text, NULL until the first write */
    size_t len;
    size_t cap;
    int oom;     /* set once an allocation failed; later writes are dropped */
} nt_buf_t;

/* nt_buf_init - an empty buffer (no allocation). */
void nt_buf_init(nt_buf_t *b);
/* nt_buf_cleanup - free the text; the buffer is empty and usable again. */
void nt_buf_cleanup(nt_buf_t *b);
/* nt_buf_put - append len bytes of s. On allocation failure sets b->oom and drops the text. */
void nt_buf_put(nt_buf_t *b, const char *s, size_t len);
/* nt_buf_puts - append a NUL-terminated string (NULL appends nothing). */
void nt_buf_puts(nt_buf_t *b, const char *s);
/* nt_render_diagnosis - a nettune.diagnosis/1 document (nettune doctor) as "text" or "md": the
 * NOT JUDGED line, inputs, findings with evidence, why, here, fix; NT_ERR_INVALID for another
 * format (reports/render_diagnosis.c). */
nt_status_t nt_render_diagnosis(const cJSON *root, const char *format, struct nt_buf *out);

/* nt_buf_printf - append printf-style text. */
void nt_buf_printf(nt_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* nt_buf_put_plain - append s with every control character (line breaks, ESC) as a space,
 * for terminal text: a report cannot move the cursor or change colours. */
void nt_buf_put_plain(nt_buf_t *b, const char *s);
/* nt_buf_put_html - append s escaped for HTML text and attribute values (& < > " '). */
void nt_buf_put_html(nt_buf_t *b, const char *s);
/* nt_buf_put_md - append s for a Markdown table cell: | and \ ` * _ < > [ ] escaped with a
 * backslash, line breaks turned into spaces. */
void nt_buf_put_md(nt_buf_t *b, const char *s);
/* nt_buf_put_csv - append one CSV field per RFC 4180: quoted (with "" for ") when it holds a
 * comma, a double quote, CR or LF, or starts or ends with a space; as is otherwise. */
void nt_buf_put_csv(nt_buf_t *b, const char *s);
/* nt_buf_put_prom_label - append a Prometheus label value escaped per the text exposition
 * format 0.0.4: backslash, double quote and line feed as \\ \" \n (no quotes added). */
void nt_buf_put_prom_label(nt_buf_t *b, const char *s);
/* nt_buf_write - write the buffer to path: "-" or NULL is stdout. A regular file (or a new
 * one) is written to a temporary file "<path>.tmp.<pid>" in the same folder, fsync'd and
 * renamed over path, so readers see the old or the new file, never a partial one. A symbolic
 * link is followed: its target (realpath; for a dangling link, the path it names) is replaced
 * that way and the link stays. A device, FIFO or socket, or a file reached through /dev/fd or
 * /proc (/dev/stdout), is opened and written as it is, never replaced. A directory is
 * NT_ERR_INVALID. NT_ERR_NOMEM when the buffer overflowed memory, NT_ERR_IO (logged with the
 * path and errno: ENOSPC on /dev/full) when writing failed; a temporary file is removed. */
nt_status_t nt_buf_write(const nt_buf_t *b, const char *path);

/* ---- number formatting (buf.c) ---- */

/* nt_fmt_num - v with up to `digits` significant digits ("%.*g" without exponent below 1e15),
 * or "-" when v is NaN. Returns buf. */
const char *nt_fmt_num(char *buf, size_t len, double v, int digits);
/* nt_fmt_bw - a bandwidth in GB/s for people: "23.4", "9.87", "0.123"; "-" when NaN. */
const char *nt_fmt_bw(char *buf, size_t len, double gbps);

/* ---- the indexed document: lib/core/rdoc.c, include/nettune/rdoc.h ---- */

/* ---- tables for text and Markdown (table.c) ---- */

typedef enum nt_table_style { NT_TABLE_TEXT = 0, NT_TABLE_MD = 1 } nt_table_style_t;

typedef struct nt_table {
    size_t ncols;
    const char *align;           /* one 'l' or 'r' per column */
    char **cells;                /* nrows x ncols, row 0 the header */
    unsigned char *tone;         /* per cell: an nt_verdict_t + 1 to colour it, or 0 */
    size_t nrows, ncells, cap;
    int oom;
} nt_table_t;

/* nt_table_init - a table with ncols columns; align is "l"/"r" per column (NULL: all left);
 * headers are the ncols column titles. */
void nt_table_init(nt_table_t *t, size_t ncols, const char *align, const char *const *headers);
/* nt_table_cell - append one printf-style cell to the current row (a new row starts every
 * ncols cells); tone: 0, or 1 + the nt_verdict_t whose colour the cell takes in text. */
void nt_table_cell(nt_table_t *t, int tone, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* nt_table_emit - write the table: aligned columns indented by indent spaces (text, with ANSI
 * colours when color), or a GitHub-flavoured Markdown table (cells escaped). */
void nt_table_emit(const nt_table_t *t, nt_buf_t *out, nt_table_style_t style, int color,
                   int indent);
/* nt_table_cleanup - free the cells. */
void nt_table_cleanup(nt_table_t *t);
/* nt_ansi_verdict - the ANSI colour sequence of a verdict (red fail, yellow warn, green pass,
 * dim skipped), and nt_ansi_reset the sequence that ends it. */
const char *nt_ansi_verdict(nt_verdict_t v);
extern const char nt_ansi_reset[];

/* ---- renderers (render_*.c) ---- */

typedef struct nt_render_opts {
    int color;          /* ANSI colours in text output */
    const char *node;   /* prom/csv: only this host's metrics/links (NULL: all) */
    size_t top;         /* length of worst-first lists in text, md and html (0: all) */
} nt_render_opts_t;

/* nt_render_text - the terminal summary: verdict, failed nodes, failed links, failed checks,
 * warnings, per-kind figures, skipped probes. NT_ERR_NOMEM only. */
nt_status_t nt_render_text(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out);
/* nt_render_summary - the shared body of text and Markdown: header, failed nodes, links and
 * checks worst first, warnings, per-kind figures, nodes worst first, skipped probes. */
nt_status_t nt_render_summary(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                              nt_table_style_t style, nt_buf_t *out);
/* nt_check_value - a check's observed or expected value as text ("DOWN", "8 GT/s"), "-" when
 * absent. Returns buf. */
const char *nt_check_value(const cJSON *check, const char *key, char *buf, size_t len);
/* nt_link_reasons - the link's reasons joined with "; "; text that does not fit in len bytes
 * is cut at a word (or mid-word for one word longer than half of len) and ends in "…"
 * (U+2026). Returns buf. */
const char *nt_link_reasons(const nt_rlink_t *l, char *buf, size_t len);
/* nt_code_prefix - "NT-NET-001 " for an object (a check, a link, a failed node) that carries a
 * check table code, "" for one that does not: the text, Markdown and HTML renderers show it
 * before the check, the reason or the link's reasons. */
const char *nt_code_prefix(const cJSON *obj, char *buf, size_t len);

/* nt_render_probe_summary - nettune probe's closing summary of its report doc (judged):
 * verdict, failed nodes (with a reason fit for `scontrol update NodeName=... State=DRAIN
 * Reason=...`), failed links, warnings, skips grouped, and the report's path (output). */
void nt_render_probe_summary(const cJSON *doc, const char *output, nt_buf_t *out);

/* nt_summary_print - nt_render_probe_summary printed: on stdout, or on stderr when the report
 * itself goes to standard output (output "-", or the file stdout is redirected to). */
void nt_summary_print(const cJSON *doc, const char *output);

/* nt_render_md - the same content as GitHub-flavoured Markdown tables. */
nt_status_t nt_render_md(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out);
/* nt_render_html - one self-contained HTML page (inline CSS and SVG, no script, no fetch; a
 * Content-Security-Policy forbids any). */
nt_status_t nt_render_html(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out);
/* nt_render_prom - Prometheus text exposition 0.0.4 for node_exporter's textfile collector;
 * o->node limits it to one host. NT_ERR_NOT_FOUND when o->node is not in the report. */
nt_status_t nt_render_prom(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out);
/* nt_render_csv - the links as RFC 4180 CSV with a header line; o->node keeps the links whose
 * source is that host (NT_ERR_NOT_FOUND when absent). */
nt_status_t nt_render_csv(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out);
/* nt_render_tuning - a nettune.tuning/1 document's rules (and env) as text, md, html or csv
 * (format is one of those names). NT_ERR_UNSUPPORTED for another format. */
nt_status_t nt_render_tuning(const nt_rdoc_t *doc, const char *format,
                             const nt_render_opts_t *o, nt_buf_t *out);

/* ---- diff (diff.c) ---- */

typedef struct nt_diff_opts {
    double threshold_pct;   /* regression beyond this change (default 5) */
    int fail_on_vanished;   /* vanished links/checks count as regressions */
    size_t top;             /* list lengths in text/md (0: all) */
    int color;
} nt_diff_opts_t;

/* nt_diff - compare two reports: links by id, checks by name+host+target, failed nodes by host.
 * Writes format ("text", "md", "json" or "csv") to out and sets *regressed by the rule of
 * docs/verdicts.md ("Comparing runs"): a link whose bandwidth fell, or latency rose, by more
 * than threshold_pct (also from NEW's best sample where there are samples) and by more than
 * the noise band of its population (kind, variant, scope: k = max(4, 1 + sqrt(2 ln n)) sigma
 * from 5 links; below, the run's band, at least 15% bandwidth / 30% latency), counted from
 * the population's shift where its median got worse beyond the threshold (3+ links; then a
 * link that moved with it regresses only below its expected bandwidth); a link, check or
 * node newly failed; a summary verdict that became fail; a node of OLD not in NEW; a link
 * that vanished from NEW's own plan (same run.mode, its probe in NEW's run.schedule, both ends
 * in NEW: hosts, ranks, devices; NEW's schedule pairs them); with fail_on_vanished any vanished
 * link or check. NT_ERR_UNSUPPORTED for another format, NT_ERR_NOMEM. */
nt_status_t nt_diff(const nt_rdoc_t *old_doc, const nt_rdoc_t *new_doc, const nt_diff_opts_t *o,
                    const char *format, nt_buf_t *out, int *regressed);

/* ---- Prometheus text exposition helpers (render_prom.c) ---- */

/* nt_prom_family - "# HELP name help" and "# TYPE name gauge" lines. */
void nt_prom_family(nt_buf_t *out, const char *name, const char *help);
/* nt_prom_label - one label: first opens the braces ("{name=..."), later ones add ",name=...";
 * the value escaped per the exposition format (NULL: ""). The caller closes with "}". */
void nt_prom_label(nt_buf_t *out, int first, const char *name, const char *value);
/* nt_prom_verdict - a verdict as the gauges give it: 0 pass, 1 warn, 2 fail, -1 skipped, -2 not
 * judged (so that `> 0` alerts on anything worse than pass). */
int nt_prom_verdict(nt_verdict_t v);
/* nt_prom_value - " value\n": integers exactly, others with 15 significant digits. */
void nt_prom_value(nt_buf_t *out, double v);
/* nt_rfc3339_seconds - RFC 3339 UTC "2026-11-29T17:47:34Z" (a fraction allowed) as seconds
 * since the epoch; NaN for NULL or another shape. */
double nt_rfc3339_seconds(const char *s);

/* ---- history (history.c) ---- */

typedef struct nt_history_opts {
    nt_peer_rules_t peer; /* the probe's peer ratios the noise rule widens (the defaults) */
    size_t top;           /* rows of the text/md trend table (0: all) */
    int color;
} nt_history_opts_t;

/* nt_history - read the nettune.report/1 files of paths (a folder: its *.json, sorted, not
 * recursive) and write format ("text", "md", "json": nettune.history/1,
 * reports/schema/history.schema.json; "prom") to out: per node, link kind (kind, variant,
 * scope) and figure (peak bandwidth in GB/s, small-message latency in us) the series of the
 * medians of the node's links over the runs, ordered by run.started_at, and whether it drifted:
 * with 4 runs or more, the median of the later half beyond nt_verdict_noise_factor (the peer
 * ratio widened to 3 sigma of the earlier half's log values) x the earlier half's median.
 * Files that are not reports, or lack run.started_at, are skipped and listed. *drifted = 1 when
 * a series drifted. NT_ERR_IO for an unreadable folder, NT_ERR_NOT_FOUND (logged) when no file
 * given is a report, NT_ERR_UNSUPPORTED for another format, NT_ERR_NOMEM. */
nt_status_t nt_history(char **paths, int npaths, const nt_history_opts_t *o, const char *format,
                       nt_buf_t *out, int *drifted);

/* ---- validation (validate.c) ---- */

typedef struct nt_problem {
    char *path;     /* JSON path, "$.links[3].verdict" */
    char *message;  /* "expected one of pass, warn, fail, skipped" */
    int semantic;   /* 0: the schema's; 1: a check beyond it (message ends in "(semantic)") */
} nt_problem_t;

typedef struct nt_problems {
    nt_problem_t *v;
    size_t n, cap;
    int oom;
} nt_problems_t;

/* nt_problems_cleanup - free the list (accepts an empty one). */
void nt_problems_cleanup(nt_problems_t *p);

/* nt_validate - check root against the schema its "schema" key names: nettune.report/1 against
 * the JSON Schema compiled into the binary (reports/schema/report.schema.json, interpreted:
 * type, const, enum, required, properties, additionalProperties, items, $ref, anyOf, minimum,
 * exclusiveMinimum, maximum, minLength, pattern), then the semantic checks the schema cannot
 * express (duplicate link ids, a stopped run without not_done, summary verdict and counts
 * against the links and checks; their problems have semantic set); nettune.diagnosis/1
 * (nettune doctor's output) likewise when the tree has its schema; nettune.plugin-report/1
 * (the tuner plugin's run summary) against reports/schema/plugin-report.schema.json;
 * nettune.watch/1 and nettune.history/1 against theirs; nettune.tuning/1 by the rules the NCCL
 * tuner plugin applies; nettune.thresholds/1 and nettune.doctor-kb/1 by their own parsers (the
 * table of nt_schema_list). An unknown or missing schema id is a problem. Appends one problem per error to out (path of the offending value; for a
 * missing key, the path of its object) and returns NT_OK, or NT_ERR_NOMEM. *schema_id gets
 * the id it validated against (NULL if none). */
nt_status_t nt_validate(const cJSON *root, nt_problems_t *out, const char **schema_id);

/* The schema ids nettune report knows are one table (reports/validate.c): id, schema file,
 * how --validate checks it, whether it renders. --validate, rendering, the "known:" lists and
 * --help all read it.
 * nt_schema_renders - whether nettune report FILE renders documents of id (nettune.report/1,
 * nettune.tuning/1, nettune.diagnosis/1, nettune.watch/1); 0 for NULL or an unknown id. */
int nt_schema_renders(const char *id);
/* nt_schema_validates - whether --validate checks documents of id: against its compiled-in
 * schema (nettune.diagnosis/1 only when the tree had its schema) or its own parser. */
int nt_schema_validates(const char *id);
/* nt_schema_list - the ids rendered (rendered 1) or validated (0), ", "-separated in the
 * table's order, into buf (len bytes; cut at an id that does not fit); returns buf. */
const char *nt_schema_list(char *buf, size_t len, int rendered);

#endif
