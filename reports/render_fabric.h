/* The fabric section of a report (docs/fabric.md) in the renderers: text and Markdown, HTML
 * (the groups and the cuts drawn) and Prometheus. Each writes nothing when the report has no
 * "fabric" object. reports/render_fabric.c. */
#ifndef NETTUNE_REPORTS_RENDER_FABRIC_H
#define NETTUNE_REPORTS_RENDER_FABRIC_H

#include "rpt.h"

/* nt_render_fabric_text - a "Fabric" part: the run's figures, the groups, each check (cut,
 * rail, topology) with its status and message, and what was not judged. */
void nt_render_fabric_text(const cJSON *root, nt_table_style_t style, int color, nt_buf_t *out);

/* nt_render_fabric_html - a <section> with an inline SVG: one box per group with its hosts, a
 * red arc between the two groups of each cut labelled with its bottleneck in GB/s, then the
 * checks' lines. Text is HTML-escaped. */
void nt_render_fabric_html(const cJSON *root, nt_buf_t *out);

/* nt_render_fabric_prom - the families nettune_fabric_cut_verdict (the fabric_cut checks'
 * worst verdict as the verdict gauges give it; -2 not judged when there is none),
 * nettune_fabric_groups (only where the cuts were judged: the groups when a cut was found, 1
 * when none was), nettune_fabric_flows (label
 * judged: loaded, slowed), nettune_fabric_cut_bottleneck_bytes_per_second and
 * nettune_fabric_cut_flow_bytes_per_second (label when: loaded, alone) and
 * nettune_fabric_cut_flows, the cut labelled by its groups' names and code. Units: bytes per
 * second, as the other families. */
void nt_render_fabric_prom(const cJSON *root, nt_buf_t *out);

/* nt_diff_fabric - compare two reports' fabric cuts and rail findings (nettune report --diff).
 * A cut is known by the host names of its two groups, a rail finding (a fabric_rail check that
 * warns) by its code, rail and node; each is "appeared" (a new bottleneck: a regression),
 * "vanished" (fixed), "regressed" (its bottleneck_GBps, or the rail's bw_GBps, down by more
 * than threshold_pct), "improved" (up by more) or "same". Writes a "Fabric" part to out in
 * style (NT_TABLE_TEXT or NT_TABLE_MD) when out is not NULL, and a "fabric" object (its
 * "cuts" and "rails") into json when json is not NULL. Returns 1 when a cut or rail finding
 * appeared or regressed, else 0 (also when a side has no fabric section). */
int nt_diff_fabric(const cJSON *old_root, const cJSON *new_root, double threshold_pct,
                   nt_table_style_t style, nt_buf_t *out, cJSON *json);

#endif
