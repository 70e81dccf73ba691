/* One self-contained HTML page: inline CSS and SVG, no script, and a Content-Security-Policy
 * that forbids fetching anything, so the page opens the same from a laptop, a ticket
 * attachment or an air-gapped cluster. What failed comes first; pictures follow: the node x
 * node bandwidth heatmap (ClusterKit's picture; above NT_HEATMAP_MAX_NODES nodes a per-node
 * map sorted worst first instead, readable at 1,000 nodes), measured vs expected bandwidth
 * per link kind, and each node's GPU x GPU matrix. Every cell has a <title> tooltip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/version.h"
#include "render_fabric.h"
#include "rpt.h"

/* Most GPU matrices drawn (worst nodes first); the rest are summarised in one line. */
#define NT_HTML_GPU_MATRICES 16

const char nt_html_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2327;"
    "background:#f6f7f9}"
    "header{background:#1d2327;color:#fff;padding:14px 24px}"
    "header h1{margin:0 0 4px;font-size:22px}header p{margin:2px 0;color:#c3c4c7;font-size:13px}"
    "main{padding:8px 24px 32px}"
    "section{background:#fff;border:1px solid #dcdcde;border-radius:6px;margin:14px 0;"
    "padding:10px 16px}"
    "h2{font-size:17px;margin:6px 0 10px}h3{font-size:14px;margin:10px 0 4px}"
    "table{border-collapse:collapse;font-size:12.5px;margin:4px 0}"
    "th,td{border-bottom:1px solid #e6e6e6;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f1;position:sticky;top:0}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}"
    ".v{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12px}"
    ".fail{background:#d63638;color:#fff}.warn{background:#f0b849;color:#1d2327}"
    ".pass{background:#00a32a;color:#fff}.skipped{background:#c3c4c7;color:#1d2327}"
    "header .v{font-size:16px;vertical-align:middle}"
    ".cards{display:flex;gap:10px;flex-wrap:wrap;margin-top:8px}"
    ".card{background:#2c3338;border-radius:6px;padding:6px 12px;font-size:12px;color:#c3c4c7}"
    ".card b{display:block;font-size:18px;color:#fff}"
    ".note{color:#50575e;font-size:12.5px;margin:4px 0}"
    ".grid{display:flex;flex-wrap:wrap;gap:14px}"
    "svg text{font-family:system-ui,sans-serif}"
    "nav a{color:#72aee6;margin-right:14px;font-size:13px}ul{font-size:13px;margin:4px 0}";

static void nt_h(nt_buf_t *out, const char *s)
{
    nt_buf_put_html(out, s);
}

/* The check table code of obj, when it has one, before its check or reason (docs/codes.md),
 * with its category as the title. */
static void nt_html_code(nt_buf_t *out, const cJSON *obj)
{
    const char *code = nt_json_get_str(obj, "code", NULL);
    if (!code)
        return;
    nt_buf_puts(out, "<code title=\"");
    nt_h(out, nt_json_get_str(obj, "category", ""));
    nt_buf_puts(out, "\">");
    nt_h(out, code);
    nt_buf_puts(out, "</code> ");
}

static void nt_vbadge(nt_buf_t *out, nt_verdict_t v)
{
    nt_buf_printf(out, "<span class=\"v %s\">%s</span>", nt_verdict_string(v),
                  nt_verdict_string(v));
}

/* Red at or below half the reference, green from 95% of it, through yellow; grey when the
 * value is unknown. */
static void nt_ratio_color(char *buf, size_t len, double ratio)
{
    double t;
    if (isnan(ratio)) {
        snprintf(buf, len, "#dcdcde");
        return;
    }
    t = (ratio - 0.5) / 0.45;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    snprintf(buf, len, "hsl(%.0f,68%%,%.0f%%)", 120 * t, 42 + 8 * (1 - fabs(2 * t - 1)));
}

static void nt_html_legend(nt_buf_t *out, double ref, const char *what)
{
    char c[40], r[32];
    nt_buf_puts(out, "<svg width=\"640\" height=\"30\" role=\"img\" aria-label=\"colour scale\">");
    for (int i = 0; i <= 10; i++) {
        nt_ratio_color(c, sizeof(c), 0.5 + 0.045 * i);
        nt_buf_printf(out, "<rect x=\"%d\" y=\"2\" width=\"20\" height=\"12\" fill=\"%s\"/>",
                      110 + 20 * i, c);
    }
    nt_buf_printf(out,
                  "<text x=\"105\" y=\"12\" font-size=\"11\" text-anchor=\"end\">&lt;= 50%%"
                  "</text><text x=\"335\" y=\"12\" font-size=\"11\">&gt;= 95%% of %s GB/s ",
                  nt_fmt_bw(r, sizeof(r), ref));
    nt_h(out, what);
    nt_buf_puts(out, "</text><rect x=\"110\" y=\"18\" width=\"20\" height=\"10\" fill=\"#dcdcde\"/>"
                     "<text x=\"135\" y=\"27\" font-size=\"10\">not measured</text>"
                     "<rect x=\"215\" y=\"18\" width=\"20\" height=\"10\" fill=\"none\" "
                     "stroke=\"#d63638\" stroke-width=\"2\"/>"
                     "<text x=\"240\" y=\"27\" font-size=\"10\">failed</text></svg>\n");
}

static void nt_html_header(const nt_rdoc_t *doc, nt_buf_t *out)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc->root, "run");
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(doc->root, "tool");
    char dur[32], note[48];

    /* the probe's own headline rule: a pass says when nothing, or not everything, was judged */
    nt_verdict_judged_note(note, sizeof(note), doc->counts[NT_PASS], doc->counts[NT_WARN],
                           doc->counts[NT_FAIL], doc->counts[NT_NOT_JUDGED]);
    /* a report that judged nothing says so in words, as text and md do, and once */
    const char *vword =
        doc->verdict == NT_NOT_JUDGED ? "nothing judged" : nt_verdict_string(doc->verdict);
    if (doc->verdict == NT_NOT_JUDGED)
        note[0] = '\0';

    nt_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'; img-src data:\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n"
                     "<title>nettune report: ");
    /* a run that stopped early says so before any verdict */
    if (!doc->completed)
        nt_buf_puts(out, "STOPPED EARLY: ");
    nt_buf_puts(out, vword);
    nt_buf_puts(out, note);
    nt_buf_puts(out, " - ");
    nt_h(out, nt_json_get_str(run, "id", ""));
    nt_buf_printf(out, "</title>\n<style>%s</style></head>\n<body>\n<header><h1>nettune report ",
                  nt_html_css);
    if (!doc->completed)
        nt_buf_puts(out, "<span class=\"v warn\">STOPPED EARLY</span> ");
    nt_buf_printf(out, "<span class=\"v %s\">%s</span>", nt_verdict_string(doc->verdict), vword);
    if (note[0])
        nt_buf_printf(out, " <span class=\"note\">%s</span>", note + 2);
    nt_buf_puts(out, "</h1>\n<p>run ");
    nt_h(out, nt_json_get_str(run, "id", "?"));
    nt_buf_puts(out, " &middot; started ");
    nt_h(out, nt_json_get_str(run, "started_at", "?"));
    nt_buf_printf(out, " &middot; %s s &middot; mode ",
                  nt_fmt_num(dur, sizeof(dur), nt_json_get_num(run, "duration_s", NAN), 3));
    nt_h(out, nt_json_get_str(run, "mode", "?"));
    nt_buf_puts(out, " &middot; ");
    nt_h(out, nt_json_get_str(tool, "name", "nettune"));
    nt_buf_puts(out, " ");
    nt_h(out, nt_json_get_str(tool, "version", "?"));
    nt_buf_puts(out, "</p>\n<p>");
    nt_h(out, nt_json_get_str(run, "command_line", ""));
    nt_buf_puts(out, "</p>\n");
    if (!doc->completed) {
        const cJSON *it, *nd = cJSON_GetObjectItemCaseSensitive(run, "not_done");
        nt_buf_puts(out, "<p>not done:</p>\n<ul>");
        cJSON_ArrayForEach (it, nd) {
            if (!cJSON_IsString(it))
                continue;
            nt_buf_puts(out, "<li>");
            nt_h(out, it->valuestring);
            nt_buf_puts(out, "</li>");
        }
        nt_buf_puts(out, "</ul>\n");
    }
    nt_buf_printf(out,
                  "<div class=\"cards\"><div class=\"card\"><b>%zu</b>nodes</div>"
                  "<div class=\"card\"><b>%g</b>ranks</div>"
                  "<div class=\"card\"><b>%zu</b>links</div>"
                  "<div class=\"card\"><b>%zu</b>checks</div>"
                  "<div class=\"card\"><b>%zu</b>pass</div>"
                  "<div class=\"card\"><b>%zu</b>warn</div>"
                  "<div class=\"card\"><b>%zu</b>fail</div>"
                  "<div class=\"card\"><b>%zu</b>skipped</div>"
                  "<div class=\"card\"><b>%zu</b>not judged</div></div>\n",
                  doc->nnodes, nt_json_get_num(run, "nranks", 0), doc->nlinks, doc->nchecks,
                  doc->counts[NT_PASS], doc->counts[NT_WARN], doc->counts[NT_FAIL],
                  doc->counts[NT_SKIPPED], doc->counts[NT_NOT_JUDGED]);
    nt_buf_puts(out, "<nav><a href=\"#failures\">failures</a><a href=\"#heatmap\">node x node"
                     "</a><a href=\"#kinds\">by link kind</a><a href=\"#gpus\">GPUs</a>"
                     "<a href=\"#nodes\">nodes</a><a href=\"#skipped\">skipped</a></nav>"
                     "</header>\n<main>\n");
}

static size_t nt_cut(const nt_render_opts_t *o, size_t n)
{
    return o->top && o->top < n ? o->top : n;
}

static void nt_html_more(nt_buf_t *out, size_t shown, size_t total, const char *what)
{
    if (shown < total)
        nt_buf_printf(out,
                      "<p class=\"note\">... and %zu more %s (render with --top 0 to list "
                      "all).</p>\n",
                      total - shown, what);
}

/* A list of strings under its heading (attrs: attributes of the h3), cut at --top. */
static void nt_html_list(nt_buf_t *out, const nt_render_opts_t *o, const cJSON *arr,
                         const char *attrs, const char *title, const char *what)
{
    size_t n = (size_t)cJSON_GetArraySize(arr), shown = nt_cut(o, n), i = 0;
    const cJSON *it;
    if (n == 0)
        return;
    nt_buf_printf(out, "<h3%s>%s (%zu)</h3>\n<ul>\n", attrs, title, n);
    cJSON_ArrayForEach (it, arr) {
        if (i++ >= shown)
            break;
        nt_buf_puts(out, "<li>");
        nt_h(out, cJSON_IsString(it) ? it->valuestring : "");
        nt_buf_puts(out, "</li>\n");
    }
    nt_buf_puts(out, "</ul>\n");
    nt_html_more(out, shown, n, what);
}

static void nt_html_failures(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc->root, "summary");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes");
    const cJSON *warn = cJSON_GetObjectItemCaseSensitive(summary, "warnings"), *it;
    const cJSON *nj = cJSON_GetObjectItemCaseSensitive(summary, "not_judged");
    size_t nfn = (size_t)cJSON_GetArraySize(fn), nl, nc, shown, i = 0;
    size_t *li = nt_rdoc_sorted_links(doc, 1, &nl), *ci = nt_rdoc_sorted_checks(doc, 1, &nc);

    nt_buf_puts(out, "<section id=\"failures\"><h2>Failures and warnings</h2>\n");
    if (!nfn && !nl && !nc && !cJSON_GetArraySize(warn))
        nt_buf_puts(out, cJSON_GetArraySize(nj) > 0
                             ? "<p>Nothing failed and nothing warned; some checks could not be "
                               "judged (below).</p>\n"
                             : "<p>Nothing failed and nothing warned.</p>\n");
    if (nfn) {
        shown = nt_cut(o, nfn);
        nt_buf_printf(out,
                      "<h3>Failed nodes (%zu)</h3>\n<table id=\"failed-nodes\"><tr><th>node"
                      "</th><th>reason</th></tr>\n",
                      nfn);
        cJSON_ArrayForEach (it, fn) {
            if (i++ >= shown)
                break;
            nt_buf_puts(out, "<tr><td>");
            nt_h(out, nt_json_get_str(it, "host", "?"));
            nt_buf_puts(out, "</td><td>");
            nt_html_code(out, it);
            nt_h(out, nt_json_get_str(it, "reason", ""));
            nt_buf_puts(out, "</td></tr>\n");
        }
        nt_buf_puts(out, "</table>\n");
        nt_html_more(out, shown, nfn, "failed nodes");
    }
    if (li && nl) {
        shown = nt_cut(o, nl);
        nt_buf_printf(out,
                      "<h3>Failed and warned links (%zu, worst first)</h3>\n<table "
                      "id=\"bad-links\"><tr><th>verdict</th><th>link</th><th>peak GB/s</th>"
                      "<th>expected</th><th>eff</th><th>lat us</th><th>reasons</th></tr>\n",
                      nl);
        for (size_t k = 0; k < shown; k++) {
            const nt_rlink_t *l = &doc->links[li[k]];
            char a[32], b[32], c[32], r[1024];
            double eff = nt_link_efficiency(l);
            nt_buf_puts(out, "<tr><td>");
            nt_vbadge(out, l->verdict);
            nt_buf_puts(out, "</td><td>");
            nt_h(out, l->id);
            nt_buf_printf(out, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>",
                          nt_fmt_bw(a, sizeof(a), l->peak_bw_GBps),
                          nt_fmt_bw(b, sizeof(b), l->expected_bw_GBps));
            if (isnan(eff))
                nt_buf_puts(out, "<td class=\"n\">-</td>");
            else
                nt_buf_printf(out, "<td class=\"n\">%.0f%%</td>", 100 * eff);
            nt_buf_printf(out, "<td class=\"n\">%s</td><td>",
                          nt_fmt_num(c, sizeof(c), l->small_msg_lat_us, 3));
            nt_html_code(out, l->j);
            nt_h(out, nt_link_reasons(l, r, sizeof(r)));
            nt_buf_puts(out, "</td></tr>\n");
        }
        nt_buf_puts(out, "</table>\n");
        nt_html_more(out, shown, nl, "links");
    }
    if (ci && nc) {
        shown = nt_cut(o, nc);
        nt_buf_printf(out,
                      "<h3>Failed and warned checks (%zu)</h3>\n<table id=\"bad-checks\">"
                      "<tr><th>verdict</th><th>node</th><th>check</th><th>target</th>"
                      "<th>observed</th><th>expected</th><th>reason</th></tr>\n",
                      nc);
        for (size_t k = 0; k < shown; k++) {
            const nt_rcheck_t *c = &doc->checks[ci[k]];
            char ob[128], ex[128];
            nt_buf_puts(out, "<tr><td>");
            nt_vbadge(out, c->verdict);
            nt_buf_puts(out, "</td><td>");
            nt_h(out, c->host ? c->host : "-");
            nt_buf_puts(out, "</td><td>");
            nt_html_code(out, c->j);
            nt_h(out, c->name);
            nt_buf_puts(out, "</td><td>");
            nt_h(out, c->target);
            nt_buf_puts(out, "</td><td>");
            nt_h(out, nt_check_value(c->j, "observed", ob, sizeof(ob)));
            nt_buf_puts(out, "</td><td>");
            nt_h(out, nt_check_value(c->j, "expected", ex, sizeof(ex)));
            nt_buf_puts(out, "</td><td>");
            nt_h(out, c->message);
            nt_buf_puts(out, "</td></tr>\n");
        }
        nt_buf_puts(out, "</table>\n");
        nt_html_more(out, shown, nc, "checks");
    }
    nt_html_list(out, o, warn, "", "Warnings", "warnings");
    nt_html_list(out, o, nj, " id=\"not-judged\"", "Not judged", "not judged");
    nt_buf_puts(out, "</section>\n");
    free(li);
    free(ci);
}

/* The colour reference of a set of links: the median expected bandwidth where the report has
 * expectations, else the median measured one (then colours show the spread around it). */
static double nt_reference(const nt_rdoc_t *doc, int (*want)(const nt_rdoc_t *, const nt_rlink_t *),
                           const char **what)
{
    double *e = malloc((doc->nlinks + 1) * sizeof(*e)), *m = malloc((doc->nlinks + 1) * sizeof(*m));
    size_t ne = 0, nm = 0;
    double ref = NAN;

    if (e && m) {
        for (size_t i = 0; i < doc->nlinks; i++) {
            const nt_rlink_t *l = &doc->links[i];
            if (!want(doc, l))
                continue;
            if (!isnan(l->expected_bw_GBps))
                e[ne++] = l->expected_bw_GBps;
            if (!isnan(l->peak_bw_GBps))
                m[nm++] = l->peak_bw_GBps;
        }
        if (ne) {
            ref = nt_median(e, ne);
            *what = "expected";
        } else {
            ref = nt_median(m, nm);
            *what = "(median measured)";
        }
    }
    free(e);
    free(m);
    return ref;
}

static int nt_want_inter(const nt_rdoc_t *doc, const nt_rlink_t *l)
{
    return strcmp(l->scope, "inter") == 0 && strcmp(l->kind, doc->inter_kind) == 0;
}

static int nt_want_gpu(const nt_rdoc_t *doc, const nt_rlink_t *l)
{
    (void)doc;
    /* One figure per GPU pair: the CE write (nettune's p2p links have read, sm and bidir
     * variants too, docs/gpu.md). */
    return strcmp(l->scope, "intra") == 0 && l->src_gpu >= 0 && l->dst_gpu >= 0 &&
           (strcmp(l->kind, "p2p") == 0 || strcmp(l->kind, "nvlink") == 0) &&
           (!l->variant[0] || strcmp(l->variant, "write") == 0);
}

/* The full node x node matrix: the worst link of each ordered pair (a pair measured in one
 * direction only is drawn both ways). */
static void nt_html_heatmap_full(const nt_rdoc_t *doc, double ref, const char *what, nt_buf_t *out)
{
    size_t n = doc->nnodes, maxlab = 4;
    double *v = malloc((n * n + 1) * sizeof(*v));
    unsigned char *vd = calloc(n * n + 1, 1), *own = calloc(n * n + 1, 1);
    int cell, left, top, w, h;
    size_t drawn = 0;

    if (!v || !vd || !own) {
        out->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < n * n; i++)
        v[i] = NAN;
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        size_t k;
        if (!nt_want_inter(doc, l) || l->src_node < 0 || l->dst_node < 0)
            continue;
        k = (size_t)l->src_node * n + (size_t)l->dst_node;
        if (!isnan(l->peak_bw_GBps) && (isnan(v[k]) || l->peak_bw_GBps < v[k]))
            v[k] = l->peak_bw_GBps;
        if (!own[k] || nt_verdict_rank(l->verdict) < nt_verdict_rank((nt_verdict_t)(vd[k] - 1)))
            vd[k] = (unsigned char)(1 + l->verdict);
        own[k] = 1;
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            if (!own[a * n + b] && own[b * n + a] == 1) {
                v[a * n + b] = v[b * n + a];
                vd[a * n + b] = vd[b * n + a];
                own[a * n + b] = 2;
            }
    for (size_t k = 0; k < n; k++)
        if (strlen(doc->nodes[k].host) > maxlab)
            maxlab = strlen(doc->nodes[k].host);
    if (maxlab > 24)
        maxlab = 24;
    cell = (int)(720 / (n ? n : 1));
    cell = cell > 28 ? 28 : cell < 7 ? 7 : cell;
    left = cell >= 10 ? (int)maxlab * 7 + 8 : 8;
    top = cell >= 10 ? (int)maxlab * 5 + 12 : 8;
    w = left + cell * (int)n + 10;
    h = top + cell * (int)n + 10;
    nt_buf_printf(out,
                  "<svg id=\"heatmap-svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                  "aria-label=\"node by node bandwidth\">\n",
                  w, h);
    for (size_t a = 0; cell >= 10 && a < n; a++) {
        nt_buf_printf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">",
                      left - 4, top + cell * (int)a + cell / 2 + 4);
        nt_h(out, doc->nodes[a].host);
        nt_buf_printf(out,
                      "</text><text transform=\"translate(%d,%d) rotate(-60)\" "
                      "font-size=\"11\">",
                      left + cell * (int)a + cell / 2 + 3, top - 4);
        nt_h(out, doc->nodes[a].host);
        nt_buf_puts(out, "</text>\n");
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            size_t k = a * n + b;
            char col[40], bw[32];
            if (a == b)
                continue;
            nt_ratio_color(col, sizeof(col), v[k] / ref);
            nt_buf_printf(out,
                          "<rect class=\"hm\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                          "fill=\"%s\"%s><title>",
                          left + cell * (int)b, top + cell * (int)a, cell - 1, cell - 1, col,
                          own[k] && vd[k] == 1 + NT_FAIL ? " stroke=\"#d63638\" stroke-width=\"2\""
                                                         : "");
            nt_h(out, doc->nodes[a].host);
            nt_buf_puts(out, " -&gt; ");
            nt_h(out, doc->nodes[b].host);
            if (own[k])
                nt_buf_printf(out, ": %s GB/s, %s%s", nt_fmt_bw(bw, sizeof(bw), v[k]),
                              nt_verdict_string((nt_verdict_t)(vd[k] - 1)),
                              own[k] == 2 ? " (measured the other way)" : "");
            else
                nt_buf_puts(out, ": not measured");
            nt_buf_puts(out, "</title></rect>\n");
            drawn++;
        }
    nt_buf_puts(out, "</svg>\n");
    nt_buf_printf(out,
                  "<p class=\"note\">%zu cells: row = source node, column = destination; "
                  "each cell is the worst %s link of the pair.</p>\n",
                  drawn, doc->inter_kind);
    nt_html_legend(out, ref, what);
out:
    free(v);
    free(vd);
    free(own);
}

/* Above NT_HEATMAP_MAX_NODES: one square per node, worst median first, and the slowest links. */
static void nt_html_heatmap_agg(const nt_rdoc_t *doc, const nt_render_opts_t *o, double ref,
                                const char *what, nt_buf_t *out)
{
    size_t n, *idx = nt_rdoc_sorted_nodes(doc, &n), nl = 0, *li;
    const int per_row = 50, cell = 14;
    int rows;

    if (!idx) {
        out->oom = 1;
        return;
    }
    rows = (int)((n + per_row - 1) / per_row);
    nt_buf_printf(out,
                  "<p class=\"note\">%zu nodes: too many for a readable %zu x %zu matrix. "
                  "Each square is one node's median %s bandwidth to its partners, nodes "
                  "sorted worst first (failed nodes first, outlined), left to right, top "
                  "to bottom. Hover for the node.</p>\n",
                  n, n, n, doc->inter_kind);
    nt_buf_printf(out,
                  "<svg id=\"nodemap-svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                  "aria-label=\"per-node median bandwidth, worst first\">\n",
                  per_row * cell + 10, rows * cell + 10);
    for (size_t i = 0; i < n; i++) {
        const nt_rnode_t *nd = &doc->nodes[idx[i]];
        char col[40], a[32], b[32];
        nt_ratio_color(col, sizeof(col), nd->inter_median_bw / ref);
        nt_buf_printf(out,
                      "<rect class=\"nm\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                      "fill=\"%s\"%s><title>",
                      (int)(i % per_row) * cell, (int)(i / per_row) * cell, cell - 2, cell - 2, col,
                      nd->verdict == NT_FAIL ? " stroke=\"#d63638\" stroke-width=\"2\"" : "");
        nt_h(out, nd->host);
        nt_buf_printf(out, ": median %s GB/s, worst %s GB/s over %zu links, %s</title></rect>\n",
                      nt_fmt_bw(a, sizeof(a), nd->inter_median_bw),
                      nt_fmt_bw(b, sizeof(b), nd->inter_min_bw), nd->n_inter,
                      nt_verdict_string(nd->verdict));
    }
    nt_buf_puts(out, "</svg>\n");
    nt_html_legend(out, ref, what);
    free(idx);

    /* The slowest inter-node links, whatever their verdict. */
    li = malloc((doc->nlinks + 1) * sizeof(*li));
    if (!li) {
        out->oom = 1;
        return;
    }
    for (size_t i = 0; i < doc->nlinks; i++)
        if (nt_want_inter(doc, &doc->links[i]) && !isnan(doc->links[i].peak_bw_GBps))
            li[nl++] = i;
    {
        /* Selection of the k slowest: k is small (--top), n may be 100k. */
        size_t k = nt_cut(o, nl) < 25 ? nt_cut(o, nl) : 25;
        if (o->top == 0)
            k = nl;
        for (size_t i = 0; i < k; i++) {
            size_t best = i;
            for (size_t j = i + 1; j < nl; j++)
                if (doc->links[li[j]].peak_bw_GBps < doc->links[li[best]].peak_bw_GBps)
                    best = j;
            size_t t = li[i];
            li[i] = li[best];
            li[best] = t;
        }
        nt_buf_printf(out,
                      "<h3>Slowest %s links</h3>\n<table id=\"slowest-links\"><tr><th>link"
                      "</th><th>peak GB/s</th><th>expected</th><th>verdict</th></tr>\n",
                      doc->inter_kind);
        for (size_t i = 0; i < k; i++) {
            const nt_rlink_t *l = &doc->links[li[i]];
            char a[32], b[32];
            nt_buf_puts(out, "<tr><td>");
            nt_h(out, l->id);
            nt_buf_printf(out, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td>",
                          nt_fmt_bw(a, sizeof(a), l->peak_bw_GBps),
                          nt_fmt_bw(b, sizeof(b), l->expected_bw_GBps));
            nt_vbadge(out, l->verdict);
            nt_buf_puts(out, "</td></tr>\n");
        }
        nt_buf_puts(out, "</table>\n");
    }
    free(li);
}

static void nt_html_heatmap(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    const char *what = "";
    double ref = nt_reference(doc, nt_want_inter, &what);
    size_t have = 0;

    for (size_t i = 0; i < doc->nlinks; i++)
        have += nt_want_inter(doc, &doc->links[i]);
    nt_buf_printf(out, "<section id=\"heatmap\"><h2>Node x node bandwidth (%s, peak GB/s)</h2>\n",
                  doc->inter_kind);
    if (!have || isnan(ref))
        nt_buf_puts(out, "<p>No inter-node link with a bandwidth in this report.</p>\n");
    else if (doc->nnodes <= NT_HEATMAP_MAX_NODES)
        nt_html_heatmap_full(doc, ref, what, out);
    else
        nt_html_heatmap_agg(doc, o, ref, what, out);
    nt_buf_puts(out, "</section>\n");
}

/* Measured (median, min-max whisker) against expected bandwidth, one row per link kind, each
 * row on its own scale (NVLink and MPI differ by 100x). */
static void nt_html_kinds(const nt_rdoc_t *doc, nt_buf_t *out)
{
    nt_kind_stats_t *ks;
    size_t nk;
    const int label_w = 170, bar_w = 480, row_h = 40;

    if (nt_rdoc_kind_stats(doc, &ks, &nk) != NT_OK) {
        out->oom = 1;
        return;
    }
    nt_buf_puts(out, "<section id=\"kinds\"><h2>Measured vs expected bandwidth per link kind"
                     "</h2>\n");
    if (!nk) {
        nt_buf_puts(out, "<p>No links in this report.</p>\n");
    } else {
        nt_buf_printf(out,
                      "<svg id=\"kinds-svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                      "aria-label=\"measured vs expected bandwidth\">\n",
                      label_w + bar_w + 440, (int)nk * row_h + 26);
        nt_buf_printf(out,
                      "<rect x=\"%d\" y=\"4\" width=\"14\" height=\"8\" fill=\"#9ec5e8\"/>"
                      "<text x=\"%d\" y=\"12\" font-size=\"11\">expected (median)</text>"
                      "<rect x=\"%d\" y=\"4\" width=\"14\" height=\"8\" fill=\"#2271b1\"/>"
                      "<text x=\"%d\" y=\"12\" font-size=\"11\">measured peak, median; "
                      "line: min to max</text>\n",
                      label_w, label_w + 18, label_w + 140, label_w + 158);
        for (size_t k = 0; k < nk; k++) {
            const nt_kind_stats_t *s = &ks[k];
            double top = s->bw_max;
            int y = 22 + (int)k * row_h;
            char a[32], b[32], c[32], d[32];
            if (!isnan(s->exp_med) && (isnan(top) || s->exp_med > top))
                top = s->exp_med;
            nt_buf_printf(out,
                          "<g class=\"kind\"><text x=\"0\" y=\"%d\" font-size=\"12\" "
                          "font-weight=\"600\">",
                          y + 14);
            nt_h(out, s->label);
            nt_buf_printf(out,
                          "</text><text x=\"0\" y=\"%d\" font-size=\"10\" fill=\"#50575e\">"
                          "%s, %zu links, %zu fail, %zu warn</text>\n",
                          y + 27, s->scope, s->n, s->by_verdict[NT_FAIL], s->by_verdict[NT_WARN]);
            if (isnan(top) || top <= 0) {
                nt_buf_printf(out,
                              "<text x=\"%d\" y=\"%d\" font-size=\"11\">no bandwidth "
                              "measured</text></g>\n",
                              label_w, y + 16);
                continue;
            }
            if (!isnan(s->exp_med))
                nt_buf_printf(out,
                              "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"10\" "
                              "fill=\"#9ec5e8\"><title>expected %s GB/s</title></rect>\n",
                              label_w, y + 2, bar_w * s->exp_med / top,
                              nt_fmt_bw(a, sizeof(a), s->exp_med));
            if (!isnan(s->bw_med)) {
                char col[40];
                nt_ratio_color(col, sizeof(col), s->eff_med);
                nt_buf_printf(out,
                              "<rect class=\"measured\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                              "height=\"14\" fill=\"%s\"><title>measured median %s GB/s"
                              "</title></rect>\n",
                              label_w, y + 14, bar_w * s->bw_med / top,
                              isnan(s->eff_med) ? "#2271b1" : col,
                              nt_fmt_bw(b, sizeof(b), s->bw_med));
                nt_buf_printf(out,
                              "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
                              "stroke=\"#1d2327\" stroke-width=\"1.5\"/>\n",
                              label_w + bar_w * s->bw_min / top, label_w + bar_w * s->bw_max / top,
                              y + 21, y + 21);
            }
            nt_buf_printf(out,
                          "<text x=\"%d\" y=\"%d\" font-size=\"11\">%s GB/s median (%s to %s), "
                          "expected %s",
                          label_w + bar_w + 8, y + 14, nt_fmt_bw(a, sizeof(a), s->bw_med),
                          nt_fmt_bw(b, sizeof(b), s->bw_min), nt_fmt_bw(c, sizeof(c), s->bw_max),
                          nt_fmt_bw(d, sizeof(d), s->exp_med));
            if (!isnan(s->eff_med))
                nt_buf_printf(out, " (%.0f%%)", 100 * s->eff_med);
            nt_buf_puts(out, "</text></g>\n");
        }
        nt_buf_puts(out, "</svg>\n");
    }
    nt_buf_puts(out, "</section>\n");
    free(ks);
}

typedef struct nt_gpu_node {
    size_t node;
    int ngpus;
    nt_verdict_t worst;
    double min_bw;
} nt_gpu_node_t;

static int nt_cmp_gpu_node(const void *a, const void *b)
{
    const nt_gpu_node_t *x = a, *y = b;
    int c = nt_verdict_rank(x->worst) - nt_verdict_rank(y->worst);
    if (c)
        return c;
    if (x->min_bw != y->min_bw && !isnan(x->min_bw) && !isnan(y->min_bw))
        return x->min_bw < y->min_bw ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static void nt_html_gpu_matrix(const nt_rdoc_t *doc, const nt_gpu_node_t *g, double ref,
                               nt_buf_t *out)
{
    int n = g->ngpus, cell = n > 16 ? 18 : 24, left = 44, top = 30;
    size_t nn = (size_t)n * (size_t)n;
    double *v = malloc((nn + 1) * sizeof(*v));
    unsigned char *vd = calloc(nn + 1, 1);

    if (!v || !vd) {
        out->oom = 1;
        free(v);
        free(vd);
        return;
    }
    for (size_t i = 0; i < nn; i++)
        v[i] = NAN;
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        size_t k;
        if (!nt_want_gpu(doc, l) || l->src_node != (int)g->node || l->src_gpu >= n ||
            l->dst_gpu >= n)
            continue;
        k = (size_t)l->src_gpu * (size_t)n + (size_t)l->dst_gpu;
        if (!isnan(l->peak_bw_GBps) && (isnan(v[k]) || l->peak_bw_GBps < v[k]))
            v[k] = l->peak_bw_GBps;
        if (!vd[k] || nt_verdict_rank(l->verdict) < nt_verdict_rank((nt_verdict_t)(vd[k] - 1)))
            vd[k] = (unsigned char)(1 + l->verdict);
    }
    nt_buf_puts(out, "<div class=\"gpu\"><h3>");
    nt_h(out, doc->nodes[g->node].host);
    nt_buf_puts(out, " ");
    nt_vbadge(out, g->worst);
    nt_buf_puts(out, "</h3>\n");
    nt_buf_printf(out,
                  "<svg class=\"gpu-svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                  "aria-label=\"GPU by GPU bandwidth\">\n",
                  left + cell * n + 6, top + cell * n + 6);
    for (int i = 0; i < n; i++)
        nt_buf_printf(out,
                      "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">gpu%d"
                      "</text><text x=\"%d\" y=\"%d\" font-size=\"10\" "
                      "text-anchor=\"middle\">%d</text>\n",
                      left - 4, top + cell * i + cell / 2 + 4, i, left + cell * i + cell / 2,
                      top - 6, i);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            size_t k = (size_t)a * (size_t)n + (size_t)b;
            char col[40], bw[32];
            if (a == b) {
                nt_buf_printf(out,
                              "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                              "fill=\"#50575e\"/>\n",
                              left + cell * b, top + cell * a, cell - 1, cell - 1);
                continue;
            }
            nt_ratio_color(col, sizeof(col), v[k] / ref);
            nt_buf_printf(out,
                          "<rect class=\"gc\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                          "fill=\"%s\"%s><title>",
                          left + cell * b, top + cell * a, cell - 1, cell - 1, col,
                          vd[k] == 1 + NT_FAIL ? " stroke=\"#d63638\" stroke-width=\"2\"" : "");
            nt_h(out, doc->nodes[g->node].host);
            if (vd[k])
                nt_buf_printf(out, " gpu%d -&gt; gpu%d: %s GB/s, %s</title></rect>\n", a, b,
                              nt_fmt_bw(bw, sizeof(bw), v[k]),
                              nt_verdict_string((nt_verdict_t)(vd[k] - 1)));
            else
                nt_buf_printf(out, " gpu%d -&gt; gpu%d: not measured</title></rect>\n", a, b);
        }
    nt_buf_puts(out, "</svg></div>\n");
    free(v);
    free(vd);
}

/* GPU inventory of a node without GPU links: model, PCIe link against its maximum. */
static void nt_html_gpu_inventory(const nt_rdoc_t *doc, size_t node, nt_buf_t *out)
{
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(doc->nodes[node].j, "gpus"), *g;

    nt_buf_puts(out, "<div class=\"gpu\"><h3>");
    nt_h(out, doc->nodes[node].host);
    nt_buf_puts(out, "</h3><table class=\"gpu-inv\"><tr><th>GPU</th><th>model</th><th>PCI</th>"
                     "<th>PCIe link (max)</th><th>NUMA</th></tr>\n");
    cJSON_ArrayForEach (g, gpus) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(g, "pcie");
        double gen = nt_json_get_num(p, "gen", NAN), wid = nt_json_get_num(p, "width", NAN);
        double mg = nt_json_get_num(p, "max_gen", NAN), mw = nt_json_get_num(p, "max_width", NAN);
        int low =
            (!isnan(wid) && !isnan(mw) && wid < mw) || (!isnan(gen) && !isnan(mg) && gen < mg);
        nt_buf_printf(out, "<tr><td>%g</td><td>", nt_json_get_num(g, "index", -1));
        nt_h(out, nt_json_get_str(g, "name", "-"));
        nt_buf_puts(out, "</td><td>");
        nt_h(out, nt_json_get_str(g, "pci_bus_id", "-"));
        nt_buf_printf(out, "</td><td%s>", low ? " class=\"warn\"" : "");
        if (!isnan(gen) || !isnan(wid))
            nt_buf_printf(out, "gen%g x%g (gen%g x%g)", gen, wid, mg, mw);
        else
            nt_buf_puts(out, "-");
        nt_buf_printf(out, "</td><td>%g</td></tr>\n", nt_json_get_num(g, "numa_node", NAN));
    }
    nt_buf_puts(out, "</table></div>\n");
}

static void nt_html_gpus(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    nt_gpu_node_t *gn = calloc(doc->nnodes + 1, sizeof(*gn));
    size_t ng = 0, ninv = 0, shown;
    const char *what = "";
    double ref = nt_reference(doc, nt_want_gpu, &what);
    size_t cap = o->top == 0 ? (size_t)-1 : NT_HTML_GPU_MATRICES;

    if (!gn) {
        out->oom = 1;
        return;
    }
    for (size_t k = 0; k < doc->nnodes; k++) {
        gn[k].node = k;
        gn[k].worst = NT_SKIPPED;
        gn[k].min_bw = NAN;
    }
    for (size_t i = 0; i < doc->nlinks; i++) {
        const nt_rlink_t *l = &doc->links[i];
        nt_gpu_node_t *g;
        if (!nt_want_gpu(doc, l) || l->src_node < 0)
            continue;
        g = &gn[l->src_node];
        if (g->ngpus <= l->src_gpu)
            g->ngpus = l->src_gpu + 1;
        if (g->ngpus <= l->dst_gpu)
            g->ngpus = l->dst_gpu + 1;
        g->worst = nt_verdict_worse(g->worst, l->verdict);
        if (!isnan(l->peak_bw_GBps) && (isnan(g->min_bw) || l->peak_bw_GBps < g->min_bw))
            g->min_bw = l->peak_bw_GBps;
    }
    for (size_t k = 0; k < doc->nnodes; k++) {
        if (gn[k].ngpus > 0 && gn[k].ngpus < doc->nodes[k].ngpus)
            gn[k].ngpus = doc->nodes[k].ngpus;
        if (gn[k].ngpus > 0)
            gn[ng++] = gn[k];
        else if (doc->nodes[k].ngpus > 0 &&
                 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc->nodes[k].j, "gpus")))
            ninv++;
    }
    qsort(gn, ng, sizeof(*gn), nt_cmp_gpu_node);
    nt_buf_puts(out, "<section id=\"gpus\"><h2>GPU x GPU bandwidth per node (P2P / NVLink, "
                     "peak GB/s)</h2>\n");
    if (ng) {
        shown = ng < cap ? ng : cap;
        nt_buf_printf(out,
                      "<p class=\"note\">%zu node%s with GPU links; %s first. Row = source "
                      "GPU, column = destination.</p>\n<div class=\"grid\">\n",
                      ng, ng == 1 ? "" : "s", shown < ng ? "the worst" : "worst");
        for (size_t i = 0; i < shown; i++)
            nt_html_gpu_matrix(doc, &gn[i], ref, out);
        nt_buf_puts(out, "</div>\n");
        nt_html_legend(out, ref, what);
        if (shown < ng)
            nt_buf_printf(out,
                          "<p class=\"note\">%zu more nodes not drawn (the best ones; "
                          "render with --top 0 to draw all).</p>\n",
                          ng - shown);
    } else if (ninv) {
        size_t drawn = 0;
        nt_buf_printf(out,
                      "<p class=\"note\">No GPU links were measured; the GPU inventory of "
                      "%zu node%s:</p>\n<div class=\"grid\">\n",
                      ninv, ninv == 1 ? "" : "s");
        for (size_t k = 0; k < doc->nnodes && drawn < cap; k++)
            if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc->nodes[k].j, "gpus"))) {
                nt_html_gpu_inventory(doc, k, out);
                drawn++;
            }
        nt_buf_puts(out, "</div>\n");
        if (drawn < ninv)
            nt_buf_printf(out, "<p class=\"note\">... and %zu more nodes.</p>\n", ninv - drawn);
    } else {
        nt_buf_puts(out, "<p>No GPUs in this report.</p>\n");
    }
    nt_buf_puts(out, "</section>\n");
    free(gn);
}

static void nt_html_nodes(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    size_t n, *idx = nt_rdoc_sorted_nodes(doc, &n), shown;

    if (!idx) {
        out->oom = 1;
        return;
    }
    shown = nt_cut(o, n);
    nt_buf_printf(out,
                  "<section id=\"nodes\"><h2>Nodes (%zu, worst first)</h2>\n<table "
                  "id=\"nodes-table\"><tr><th>node</th><th>verdict</th><th>reason</th>"
                  "<th>GPUs</th><th>NIC ports up</th><th>%s GB/s median</th><th>min</th>"
                  "<th>links fail/warn</th><th>checks fail/warn</th></tr>\n",
                  n, doc->inter_kind);
    for (size_t i = 0; i < shown; i++) {
        const nt_rnode_t *nd = &doc->nodes[idx[i]];
        char a[32], b[32];
        nt_buf_puts(out, "<tr><td>");
        nt_h(out, nd->host);
        nt_buf_puts(out, "</td><td>");
        nt_vbadge(out, nd->verdict);
        nt_buf_puts(out, "</td><td>");
        nt_h(out, nd->fail_reason ? nd->fail_reason : "");
        nt_buf_printf(out, "</td><td class=\"n\">%d", nd->ngpus);
        if (nd->gpu_model) {
            nt_buf_puts(out, " x ");
            nt_h(out, nd->gpu_model);
        }
        nt_buf_printf(out,
                      "</td><td class=\"n\">%d/%d</td><td class=\"n\">%s</td>"
                      "<td class=\"n\">%s</td><td class=\"n\">%zu/%zu</td>"
                      "<td class=\"n\">%zu/%zu</td></tr>\n",
                      nd->nics_active, nd->nnics, nt_fmt_bw(a, sizeof(a), nd->inter_median_bw),
                      nt_fmt_bw(b, sizeof(b), nd->inter_min_bw), nd->links_fail, nd->links_warn,
                      nd->checks_fail, nd->checks_warn);
    }
    nt_buf_puts(out, "</table>\n");
    nt_html_more(out, shown, n, "nodes");
    nt_buf_puts(out, "</section>\n");
    free(idx);
}

/* Per node (worst first, as the nodes table): its RDMA NIC ports, the GPU x NIC path-class
 * matrix (nodes[].affinity, the classes of nvidia-smi topo -m) and its software versions. */
static void nt_html_node_details(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    static const char *const sw_keys[] = {"kernel",    "cuda_driver", "cuda_runtime", "nccl",
                                          "rdma_core", "hwloc",       "mpi",          NULL};
    size_t n, *idx = nt_rdoc_sorted_nodes(doc, &n), shown;

    if (!idx) {
        out->oom = 1;
        return;
    }
    shown = nt_cut(o, n);
    nt_buf_puts(out, "<section id=\"node-details\"><h2>NICs, GPU x NIC paths and software per "
                     "node</h2>\n");
    /* Software: one row per node, so that a minority version stands out. */
    nt_buf_puts(out, "<table id=\"software\"><tr><th>node</th>");
    for (int k = 0; sw_keys[k]; k++)
        nt_buf_printf(out, "<th>%s</th>", sw_keys[k]);
    nt_buf_puts(out, "</tr>\n");
    for (size_t i = 0; i < shown; i++) {
        const cJSON *sw = cJSON_GetObjectItemCaseSensitive(doc->nodes[idx[i]].j, "software");
        nt_buf_puts(out, "<tr><td>");
        nt_h(out, doc->nodes[idx[i]].host);
        nt_buf_puts(out, "</td>");
        for (int k = 0; sw_keys[k]; k++) {
            const char *v = nt_json_get_str(sw, sw_keys[k], "-");
            nt_buf_puts(out, "<td>");
            nt_h(out, k == 6 && strlen(v) > 40 ? "(see report)" : v);
            nt_buf_puts(out, "</td>");
        }
        nt_buf_puts(out, "</tr>\n");
    }
    nt_buf_puts(out, "</table>\n<div class=\"grid\">\n");
    for (size_t i = 0; i < shown; i++) {
        const cJSON *nj = doc->nodes[idx[i]].j, *it;
        const cJSON *nics = cJSON_GetObjectItemCaseSensitive(nj, "nics");
        const cJSON *aff = cJSON_GetObjectItemCaseSensitive(nj, "affinity");
        const char *names[64];
        int nn = 0, maxg = -1;
        if (!cJSON_GetArraySize(nics) && !cJSON_GetArraySize(aff))
            continue;
        nt_buf_puts(out, "<div class=\"gpu\"><h3>");
        nt_h(out, doc->nodes[idx[i]].host);
        nt_buf_puts(out, "</h3>\n");
        if (cJSON_GetArraySize(nics)) {
            nt_buf_puts(out, "<table class=\"nics\"><tr><th>NIC port</th><th>state</th>"
                             "<th>rate Gb/s</th><th>link</th><th>NUMA</th><th>PCI</th>"
                             "<th>firmware</th></tr>\n");
            cJSON_ArrayForEach (it, nics) {
                const char *st = nt_json_get_str(it, "state", "-");
                nt_buf_puts(out, "<tr><td>");
                nt_h(out, nt_json_get_str(it, "name", "?"));
                nt_buf_printf(out, ":%g</td><td%s>", nt_json_get_num(it, "port", 1),
                              strcmp(st, "ACTIVE") == 0 ? "" : " class=\"fail\"");
                nt_h(out, st);
                nt_buf_printf(out, "</td><td class=\"n\">%g</td><td>",
                              nt_json_get_num(it, "rate_Gbps", NAN));
                nt_h(out, nt_json_get_str(it, "link_layer", "-"));
                nt_buf_printf(out, "</td><td class=\"n\">%g</td><td>",
                              nt_json_get_num(it, "numa_node", NAN));
                nt_h(out, nt_json_get_str(it, "pci_bus_id", "-"));
                nt_buf_puts(out, "</td><td>");
                nt_h(out, nt_json_get_str(it, "firmware", "-"));
                nt_buf_puts(out, "</td></tr>\n");
            }
            nt_buf_puts(out, "</table>\n");
        }
        /* GPU x NIC: columns in the order the NICs first appear. */
        cJSON_ArrayForEach (it, aff) {
            const char *nic = nt_json_get_str(it, "nic", "?");
            int g = nt_json_get_int(it, "gpu", -1), k;
            for (k = 0; k < nn && strcmp(names[k], nic) != 0; k++)
                ;
            if (k == nn && nn < 64)
                names[nn++] = nic;
            if (g > maxg)
                maxg = g;
        }
        if (nn && maxg >= 0) {
            nt_buf_puts(out, "<table class=\"paths\"><tr><th>GPU \\ NIC</th>");
            for (int k = 0; k < nn; k++) {
                nt_buf_puts(out, "<th>");
                nt_h(out, names[k]);
                nt_buf_puts(out, "</th>");
            }
            nt_buf_puts(out, "</tr>\n");
            for (int g = 0; g <= maxg && g < 1024; g++) {
                nt_buf_printf(out, "<tr><th>gpu%d</th>", g);
                for (int k = 0; k < nn; k++) {
                    const char *path = "-";
                    cJSON_ArrayForEach (it, aff)
                        if (nt_json_get_int(it, "gpu", -1) == g &&
                            strcmp(nt_json_get_str(it, "nic", ""), names[k]) == 0)
                            path = nt_json_get_str(it, "path", "-");
                    nt_buf_printf(out, "<td class=\"path-%s\">", path);
                    nt_h(out, path);
                    nt_buf_puts(out, "</td>");
                }
                nt_buf_puts(out, "</tr>\n");
            }
            nt_buf_puts(out, "</table>\n");
        }
        nt_buf_puts(out, "</div>\n");
    }
    nt_buf_puts(out, "</div>\n");
    nt_html_more(out, shown, n, "nodes");
    nt_buf_puts(out, "</section>\n");
    free(idx);
}

static void nt_html_skipped(const nt_rdoc_t *doc, nt_buf_t *out)
{
    nt_skip_group_t *g;
    size_t ng;

    if (nt_rdoc_skip_groups(doc, &g, &ng) != NT_OK) {
        out->oom = 1;
        return;
    }
    nt_buf_puts(out, "<section id=\"skipped\"><h2>Skipped probes</h2>\n<p class=\"note\">"
                     "Probes that did not run on a node; the skipped count above counts checks "
                     "and links.</p>\n");
    if (!ng)
        nt_buf_puts(out, "<p>None.</p>\n");
    else
        nt_buf_puts(out, "<table><tr><th>probe</th><th>nodes</th><th>reason</th></tr>\n");
    for (size_t i = 0; i < ng; i++) {
        nt_buf_puts(out, "<tr><td>");
        nt_h(out, g[i].probe);
        nt_buf_puts(out, "</td><td>");
        if (g[i].nnodes == 1)
            nt_h(out, g[i].first_host);
        else
            nt_buf_printf(out, "%s%zu", g[i].nnodes == doc->nnodes ? "all " : "", g[i].nnodes);
        nt_buf_puts(out, "</td><td>");
        nt_h(out, g[i].reason);
        nt_buf_puts(out, "</td></tr>\n");
    }
    if (ng)
        nt_buf_puts(out, "</table>\n");
    nt_buf_puts(out, "</section>\n");
    free(g);
}

nt_status_t nt_render_html(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    nt_html_header(doc, out);
    nt_html_failures(doc, o, out);
    nt_html_heatmap(doc, o, out);
    nt_html_kinds(doc, out);
    nt_html_gpus(doc, o, out);
    nt_html_nodes(doc, o, out);
    nt_html_node_details(doc, o, out);
    nt_html_skipped(doc, out);
    nt_render_fabric_html(doc->root, out); /* render_fabric.c */
    nt_buf_puts(out, "</main>\n<footer class=\"note\" style=\"padding:0 24px 16px\">nettune "
                     "report ");
    nt_h(out, nt_version());
    nt_buf_puts(out, " from ");
    nt_h(out, doc->path);
    nt_buf_puts(out, "</footer>\n</body></html>\n");
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
