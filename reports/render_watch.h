/* The writers of a nettune.watch/1 document (nettune watch, docs/watch.md): the text summary,
 * the Prometheus textfile and the HTML page. nettune watch writes the first two as it judges;
 * nettune report renders a document it is given with the same functions
 * (reports/render_watch.c). */
#ifndef NETTUNE_REPORTS_RENDER_WATCH_H
#define NETTUNE_REPORTS_RENDER_WATCH_H

#include <cjson/cJSON.h>

#include "nettune/status.h"
#include "rpt.h"

#define NT_WATCH_SCHEMA "nettune.watch/1"

/* nt_render_watch_text - the summary: record counts, each finding (status, code, check,
 * category, verdict, reason) and each not_judged entry with its reason; "no finding" when
 * there is none. Reads summary.*, findings[], not_judged[] (missing members print as 0 / "?").
 * NT_ERR_NOMEM only. */
nt_status_t nt_render_watch_text(const cJSON *doc, nt_buf_t *out);

/* nt_render_watch_prom - the document as a Prometheus textfile (exposition 0.0.4) with the
 * probe's conventions (render_prom.c: gauges, base units, verdicts 0 pass 1 warn 2 fail, the
 * check table's "code" and "category" labels on findings): one nettune_watch_finding series per
 * finding (labels host, check, comm_id, rank, code, category; value 1 warn, 2 fail), the latest
 * busbw of each communicator's collective and size (nettune_watch_busbw_bytes_per_second,
 * busbw_GBps x 1e9), and the summary counts. A finding whose labels repeat an earlier one's
 * keeps the worst value (the collector drops a file with a duplicate series). NT_ERR_NOMEM
 * only. */
nt_status_t nt_render_watch_prom(const cJSON *doc, nt_buf_t *out);

/* nt_render_watch_html - one self-contained page (the probe report's CSS, inline SVG, no
 * script): the findings, then per communicator its busbw over the calls of the window, one
 * line per collective and size, with each onset (NT-JOB-204 onset_seq) marked by a vertical
 * line; the not_judged entries last. NT_ERR_NOMEM only. */
nt_status_t nt_render_watch_html(const cJSON *doc, nt_buf_t *out);

/* nt_render_watch_exit - the exit code the document records (summary.exit_code, the probe's
 * codes of include/nettune/exitcode.h), 2 when it has none. */
int nt_render_watch_exit(const cJSON *doc);

/* nt_html_css - the probe report page's style sheet (reports/render_html.c), which the watch
 * page uses too, so the two pages look alike from one definition. */
extern const char nt_html_css[];

#endif
