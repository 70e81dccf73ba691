/* The writers of a nettune.watch/1 document: text, Prometheus textfile, HTML. They read the
 * document only (never the judge's state), so nettune watch and nettune report show the same
 * thing from one code path. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/exitcode.h"
#include "nettune/report.h"
#include "nettune/version.h"
#include "render_watch.h"

static const char *nt_rw_str(const cJSON *o, const char *k)
{
    return nt_json_get_str(o, k, "?");
}

static double nt_rw_num(const cJSON *o, const char *k)
{
    return nt_json_get_num(o, k, 0);
}

int nt_render_watch_exit(const cJSON *doc)
{
    const cJSON *code =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "summary"), "exit_code");
    return cJSON_IsNumber(code) ? code->valueint : NT_EXIT_USAGE;
}

/* The strings of `arr`, comma-separated: the first 8 and how many more. */
static void nt_render_watch_list(nt_buf_t *out, const cJSON *arr)
{
    const cJSON *it;
    int n = cJSON_GetArraySize(arr), i = 0;
    cJSON_ArrayForEach (it, arr) {
        if (i == 8) {
            nt_buf_printf(out, ", and %d more", n - i);
            break;
        }
        nt_buf_puts(out, i++ ? ", " : "");
        nt_buf_put_plain(out, cJSON_IsString(it) ? it->valuestring : "?");
    }
}

/* One line for a list of paths of the summary ("ignored 2 file(s) that are not Inspector dumps:
 * d/a.json, d/notes.txt"), the first 8 and how many more; nothing for an empty list. */
static void nt_render_watch_paths(nt_buf_t *out, const cJSON *arr, const char *verb,
                                  const char *noun, const char *what)
{
    int n = cJSON_GetArraySize(arr);
    if (n <= 0)
        return;
    nt_buf_printf(out, "%s %d %s %s: ", verb, n, noun, what);
    nt_render_watch_list(out, arr);
    nt_buf_puts(out, "\n");
}

nt_status_t nt_render_watch_text(const cJSON *doc, nt_buf_t *out)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary"), *it;
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(doc, "findings");
    nt_buf_printf(out,
                  "nettune watch: %.0f record(s) (%.0f P2P, %.0f Prometheus, %.0f RAS), %.0f "
                  "communicator(s)",
                  nt_rw_num(sum, "records"), nt_rw_num(sum, "p2p_records"),
                  nt_rw_num(sum, "prom_records"), nt_rw_num(sum, "ras_records"),
                  nt_rw_num(sum, "communicators"));
    /* RAS lists every communicator of the job, Inspector only those whose calls it timed: a
     * communicator known from RAS alone is not among those counted, and its calls are not
     * judged (only the ranks RAS lists as missing) */
    const cJSON *ras_only = cJSON_GetObjectItemCaseSensitive(sum, "ras_only_communicators");
    int nras = cJSON_GetArraySize(ras_only);
    if (nras > 0) {
        nt_buf_printf(out, " with Inspector records, and %d that only RAS lists (", nras);
        nt_render_watch_list(out, ras_only);
        nt_buf_puts(out, "): no Inspector record of their calls, only RAS's list of missing ranks "
                         "judged");
    }
    if (nt_rw_num(sum, "skipped")) {
        /* where the first skipped line is, so that nothing is dropped unsaid */
        const char *where = nt_json_get_str(sum, "first_skipped", NULL);
        nt_buf_printf(out, ", %.0f skipped (not a record%s", nt_rw_num(sum, "skipped"),
                      where ? ": the first at " : "");
        nt_buf_put_plain(out, where ? where : "");
        nt_buf_puts(out, ")");
    }
    if (nt_rw_num(sum, "partial"))
        nt_buf_printf(out, ", %.0f cut short at the end", nt_rw_num(sum, "partial"));
    nt_buf_puts(out, "\n");
    /* A difference beyond the read's own delay (0.3 s) is taken off each rank's silence: say it,
     * as the operator should fix the clocks */
    const cJSON *ahead = cJSON_GetObjectItemCaseSensitive(sum, "clock_ahead_us"),
                *most = cJSON_GetObjectItemCaseSensitive(sum, "clock_most_off");
    double most_us = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(most, "ahead_us"));
    if (cJSON_IsNumber(ahead) && fabs(ahead->valuedouble) > 0.3e6)
        nt_buf_printf(out, "clocks: the watch's clock is %.2f s %s the job's writers' (median): "
                           "silence is counted on each writer's clock; make the hosts' clocks "
                           "agree (NTP, chrony)\n",
                      fabs(ahead->valuedouble) / 1e6, ahead->valuedouble > 0 ? "ahead of" : "behind");
    else if (cJSON_IsObject(most) && isfinite(most_us)) {
        nt_buf_puts(out, "clocks: host ");
        nt_buf_put_plain(out, nt_rw_str(most, "host"));
        nt_buf_printf(out, "'s writer clock reads %.2f s %s the watch's, the furthest off: its "
                           "silence is counted on its own clock; make the hosts' clocks agree "
                           "(NTP, chrony)\n",
                      fabs(most_us) / 1e6, most_us > 0 ? "behind" : "ahead of");
    }
    nt_render_watch_paths(out, cJSON_GetObjectItemCaseSensitive(sum, "unread_inputs"), "not read",
                          "input(s)", "(missing, unreadable or not Inspector's: a partial judgement, exit 2)");
    nt_render_watch_paths(out, cJSON_GetObjectItemCaseSensitive(sum, "ignored_files"), "ignored",
                          "file(s)", "that are not Inspector dumps");
    cJSON_ArrayForEach (it, findings) {
        nt_buf_printf(out, "%s %s [%s, %s]: ", nt_rw_str(it, "status"), nt_rw_str(it, "code"),
                      nt_rw_str(it, "check"), nt_rw_str(it, "category"));
        nt_buf_put_plain(out, nt_rw_str(it, "verdict"));
        nt_buf_puts(out, "\n    ");
        nt_buf_put_plain(out, nt_rw_str(it, "reason"));
        nt_buf_puts(out, "\n");
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(doc, "not_judged")) {
        const char *comm = nt_json_get_str(it, "comm_id", NULL);
        nt_buf_printf(out, "not judged %s%s", nt_rw_str(it, "check"), comm ? " " : "");
        nt_buf_put_plain(out, comm ? comm : "");
        nt_buf_puts(out, ": ");
        nt_buf_put_plain(out, nt_rw_str(it, "reason"));
        nt_buf_puts(out, "\n");
    }
    if (!cJSON_GetArraySize(findings))
        nt_buf_puts(out, "no finding\n");
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}

/* ---- Prometheus ---- */

static int nt_rw_status_value(const char *status)
{
    return strcmp(status, "fail") == 0 ? 2 : strcmp(status, "warn") == 0 ? 1 : 0;
}

/* The labels of a finding's series, in one string, so that two findings with the same labels
 * are told apart before they are written. */
static void nt_rw_finding_labels(nt_buf_t *b, const cJSON *f)
{
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(f, "rank");
    char r[24] = "";
    if (cJSON_IsNumber(rank))
        snprintf(r, sizeof(r), "%d", rank->valueint);
    nt_prom_label(b, 1, "host", nt_json_get_str(f, "host", ""));
    nt_prom_label(b, 0, "check", nt_json_get_str(f, "check", ""));
    nt_prom_label(b, 0, "comm_id", nt_json_get_str(f, "comm_id", ""));
    nt_prom_label(b, 0, "rank", r);
    nt_prom_label(b, 0, "code", nt_json_get_str(f, "code", ""));
    nt_prom_label(b, 0, "category", nt_json_get_str(f, "category", ""));
    nt_buf_puts(b, "}");
}

static void nt_rw_prom_findings(const cJSON *doc, nt_buf_t *out)
{
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(doc, "findings");
    int n = cJSON_GetArraySize(findings);
    nt_buf_t *lab = calloc((size_t)n + 1, sizeof(*lab));
    int *val = calloc((size_t)n + 1, sizeof(*val));
    if (!lab || !val) {
        out->oom = 1;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *f = cJSON_GetArrayItem(findings, i);
        nt_buf_init(&lab[i]);
        nt_rw_finding_labels(&lab[i], f);
        val[i] = nt_rw_status_value(nt_json_get_str(f, "status", ""));
        if (lab[i].oom)
            out->oom = 1;
    }
    nt_prom_family(out, "nettune_watch_finding",
                   "A finding of nettune watch: 1 warn, 2 fail (labels: the check table's code "
                   "and category).");
    for (int i = 0; i < n && !out->oom; i++) {
        int dup = 0;
        for (int k = 0; k < i && !dup; k++)
            dup = strcmp(lab[k].data, lab[i].data) == 0;
        if (dup)
            continue;
        int v = val[i];
        for (int k = i + 1; k < n; k++)
            if (strcmp(lab[k].data, lab[i].data) == 0 && val[k] > v)
                v = val[k];
        nt_buf_puts(out, "nettune_watch_finding");
        nt_buf_puts(out, lab[i].data);
        nt_prom_value(out, v);
    }
out:
    for (int i = 0; lab && i < n; i++)
        nt_buf_cleanup(&lab[i]);
    free(lab);
    free(val);
}

/* The latest point of each busbw series: what a dashboard shows now. */
static void nt_rw_prom_busbw(const cJSON *doc, nt_buf_t *out)
{
    const cJSON *c, *s;
    int header = 0;
    cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(doc, "communicators")) {
        cJSON_ArrayForEach (s, cJSON_GetObjectItemCaseSensitive(c, "busbw")) {
            const cJSON *pts = cJSON_GetObjectItemCaseSensitive(s, "points");
            const cJSON *last = cJSON_GetArrayItem(pts, cJSON_GetArraySize(pts) - 1);
            const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(s, "bytes");
            double bw = nt_json_get_num(last, "busbw_GBps", NAN);
            char b[32] = "";
            if (!last || !isfinite(bw))
                continue;
            if (cJSON_IsNumber(bytes))
                snprintf(b, sizeof(b), "%.0f", bytes->valuedouble);
            if (!header++)
                nt_prom_family(out, "nettune_watch_busbw_bytes_per_second",
                               "busbw (nccl-tests' definition) of the latest call of a "
                               "communicator's collective and size, the median over its ranks.");
            nt_buf_puts(out, "nettune_watch_busbw_bytes_per_second");
            nt_prom_label(out, 1, "comm_id", nt_json_get_str(c, "id", ""));
            nt_prom_label(out, 0, "comm_name", nt_json_get_str(c, "name", ""));
            nt_prom_label(out, 0, "coll", nt_json_get_str(s, "coll", ""));
            nt_prom_label(out, 0, "bytes", b);
            nt_buf_puts(out, "}");
            nt_prom_value(out, bw * 1e9);
        }
    }
}

nt_status_t nt_render_watch_prom(const cJSON *doc, nt_buf_t *out)
{
    static const struct {
        const char *name, *key, *help;
    } counts[] = {
        {"nettune_watch_records", "records", "Inspector records read."},
        {"nettune_watch_communicators", "communicators", "Communicators seen."},
        {"nettune_watch_findings_failed", "fail", "Findings of status fail."},
        {"nettune_watch_findings_warned", "warn", "Findings of status warn."},
        {"nettune_watch_not_judged", "not_judged", "Judgements that could not be made (the "
                                                   "document's not_judged says why)."},
        {"nettune_watch_exit_code", "exit_code", "The exit code of the judgement: 0 ok, 1 fail, "
                                                 "2 usage."},
    };
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        double v = nt_json_get_num(sum, counts[i].key, NAN);
        if (!isfinite(v))
            continue;
        nt_prom_family(out, counts[i].name, counts[i].help);
        nt_buf_puts(out, counts[i].name);
        nt_prom_value(out, v);
    }
    nt_rw_prom_findings(doc, out);
    nt_rw_prom_busbw(doc, out);
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}

/* ---- HTML ---- */

#define NT_RW_W 640
#define NT_RW_H 200
#define NT_RW_LEFT 56
#define NT_RW_BOTTOM 28

static const char *const nt_rw_colors[] = {"#2271b1", "#d63638", "#00a32a", "#dba617",
                                           "#8c5fc5", "#135e96", "#b32d2e", "#3c434a"};

static void nt_rw_h(nt_buf_t *out, const char *s)
{
    nt_buf_put_html(out, s);
}

/* One communicator's chart: x the call's sequence number, y busbw in GB/s from 0. */
static void nt_rw_html_chart(const cJSON *doc, const cJSON *c, nt_buf_t *out)
{
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(c, "busbw"), *s, *p, *f;
    const char *id = nt_json_get_str(c, "id", "");
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
    cJSON_ArrayForEach (s, series)
        cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive(s, "points")) {
            double x = nt_json_get_num(p, "seq", NAN), y = nt_json_get_num(p, "busbw_GBps", NAN);
            if (!isfinite(x) || !isfinite(y))
                continue;
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            ymax = fmax(ymax, y);
        }
    if (!isfinite(xmin) || ymax <= 0) {
        nt_buf_puts(out, "<p class=\"note\">no call with a busbw in the window</p>\n");
        return;
    }
    if (xmax == xmin)
        xmax = xmin + 1;
    ymax *= 1.1;
    double pw = NT_RW_W - NT_RW_LEFT - 10, ph = NT_RW_H - NT_RW_BOTTOM - 10;
#define NT_RW_X(x) (NT_RW_LEFT + ((x) - xmin) / (xmax - xmin) * pw)
#define NT_RW_Y(y) (10 + ph - (y) / ymax * ph)
    nt_buf_printf(out, "<svg width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"busbw over "
                       "time of communicator ", NT_RW_W, NT_RW_H);
    nt_rw_h(out, id);
    nt_buf_puts(out, "\">");
    nt_buf_printf(out,
                  "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%.1f\" stroke=\"#8c8f94\"/>"
                  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#8c8f94\"/>",
                  NT_RW_LEFT, NT_RW_LEFT, 10 + ph, NT_RW_LEFT, 10 + ph, NT_RW_W - 10, 10 + ph);
    for (int t = 0; t <= 4; t++) {
        char v[32];
        nt_buf_printf(out,
                      "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s</text>",
                      NT_RW_LEFT - 4, NT_RW_Y(ymax * t / 4) + 3,
                      t ? nt_fmt_bw(v, sizeof(v), ymax * t / 4) : "0");
    }
    nt_buf_printf(out,
                  "<text x=\"12\" y=\"%.1f\" font-size=\"10\" transform=\"rotate(-90 12 %.1f)\" "
                  "text-anchor=\"middle\">busbw GB/s</text>"
                  "<text x=\"%d\" y=\"%d\" font-size=\"10\">call %.0f</text>"
                  "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\">call %.0f</text>",
                  10 + ph / 2, 10 + ph / 2, NT_RW_LEFT, NT_RW_H - 6, xmin, NT_RW_W - 10,
                  NT_RW_H - 6, xmax);
    int k = 0;
    cJSON_ArrayForEach (s, series) {
        const char *col = nt_rw_colors[k++ % (sizeof(nt_rw_colors) / sizeof(nt_rw_colors[0]))];
        char b[32] = "?";
        const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(s, "bytes");
        if (cJSON_IsNumber(bytes) && bytes->valuedouble >= 0)
            nt_bytes_str(b, sizeof(b), (unsigned long long)bytes->valuedouble);
        nt_buf_printf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                      col);
        cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive(s, "points")) {
            double x = nt_json_get_num(p, "seq", NAN), y = nt_json_get_num(p, "busbw_GBps", NAN);
            if (isfinite(x) && isfinite(y))
                nt_buf_printf(out, "%.1f,%.1f ", NT_RW_X(x), NT_RW_Y(y));
        }
        nt_buf_puts(out, "\"><title>");
        nt_rw_h(out, nt_json_get_str(s, "coll", "?"));
        nt_buf_printf(out, " %s</title></polyline>", b);
        nt_buf_printf(out, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"%s\">", NT_RW_LEFT + 8,
                      20 + 12 * (k - 1), col);
        nt_rw_h(out, nt_json_get_str(s, "coll", "?"));
        nt_buf_printf(out, " %s</text>", b);
    }
    /* The onsets of this communicator: a dashed line at the first call after the drop. */
    cJSON_ArrayForEach (f, cJSON_GetObjectItemCaseSensitive(doc, "findings")) {
        double x = nt_json_get_num(f, "onset_seq", NAN);
        if (strcmp(nt_json_get_str(f, "comm_id", ""), id) != 0 || !isfinite(x) || x < xmin ||
            x > xmax)
            continue;
        nt_buf_printf(out,
                      "<line x1=\"%.1f\" y1=\"10\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d63638\" "
                      "stroke-dasharray=\"4 3\"><title>onset at call %.0f: ",
                      NT_RW_X(x), NT_RW_X(x), 10 + ph, x);
        nt_rw_h(out, nt_json_get_str(f, "verdict", ""));
        nt_buf_printf(out, "</title></line><text x=\"%.1f\" y=\"20\" font-size=\"10\" "
                           "fill=\"#d63638\">onset</text>",
                      NT_RW_X(x) + 3);
    }
#undef NT_RW_X
#undef NT_RW_Y
    nt_buf_puts(out, "</svg>\n");
}

nt_status_t nt_render_watch_html(const cJSON *doc, nt_buf_t *out)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary"), *it;
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(doc, "findings");
    const char *verdict = nt_rw_num(sum, "fail") > 0   ? "fail"
                          : nt_rw_num(sum, "warn") > 0 ? "warn"
                                                       : "pass";
    nt_buf_printf(out,
                  "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                  "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                  "style-src 'unsafe-inline'; img-src data:\">\n"
                  "<title>nettune watch: %s</title>\n<style>%s</style></head>\n<body>\n"
                  "<header><h1>nettune watch <span class=\"v %s\">%s</span></h1>\n",
                  verdict, nt_html_css, verdict, verdict);
    nt_buf_printf(out,
                  "<div class=\"cards\"><div class=\"card\"><b>%.0f</b>records</div>"
                  "<div class=\"card\"><b>%.0f</b>communicators</div>"
                  "<div class=\"card\"><b>%.0f</b>fail</div>"
                  "<div class=\"card\"><b>%.0f</b>warn</div>"
                  "<div class=\"card\"><b>%.0f</b>not judged</div></div>\n</header>\n<main>\n",
                  nt_rw_num(sum, "records"), nt_rw_num(sum, "communicators"),
                  nt_rw_num(sum, "fail"), nt_rw_num(sum, "warn"), nt_rw_num(sum, "not_judged"));
    nt_buf_puts(out, "<section id=\"findings\"><h2>Findings</h2>\n");
    if (!cJSON_GetArraySize(findings))
        nt_buf_puts(out, "<p class=\"note\">no finding</p>\n");
    else
        nt_buf_puts(out, "<table><tr><th>status</th><th>code</th><th>check</th><th>who</th>"
                         "<th>verdict</th><th>reason</th></tr>\n");
    cJSON_ArrayForEach (it, findings) {
        const char *st = nt_json_get_str(it, "status", "?");
        const cJSON *rank = cJSON_GetObjectItemCaseSensitive(it, "rank");
        nt_buf_printf(out, "<tr><td><span class=\"v %s\">%s</span></td><td><code title=\"",
                      strcmp(st, "fail") == 0 ? "fail" : "warn", strcmp(st, "fail") == 0 ? "fail" : "warn");
        nt_rw_h(out, nt_json_get_str(it, "category", ""));
        nt_buf_puts(out, "\">");
        nt_rw_h(out, nt_json_get_str(it, "code", ""));
        nt_buf_puts(out, "</code></td><td>");
        nt_rw_h(out, nt_json_get_str(it, "check", ""));
        nt_buf_puts(out, "</td><td>comm ");
        nt_rw_h(out, nt_json_get_str(it, "comm_id", ""));
        if (cJSON_IsNumber(rank))
            nt_buf_printf(out, " rank %d", rank->valueint);
        if (nt_json_get_str(it, "host", NULL)) {
            nt_buf_puts(out, " on ");
            nt_rw_h(out, nt_json_get_str(it, "host", ""));
        }
        nt_buf_puts(out, "</td><td>");
        nt_rw_h(out, nt_json_get_str(it, "verdict", ""));
        nt_buf_puts(out, "</td><td>");
        nt_rw_h(out, nt_json_get_str(it, "reason", ""));
        nt_buf_puts(out, "</td></tr>\n");
    }
    if (cJSON_GetArraySize(findings))
        nt_buf_puts(out, "</table>\n");
    nt_buf_puts(out, "</section>\n<section id=\"busbw\"><h2>busbw over time per "
                     "communicator</h2>\n<p class=\"note\">The median busbw over the ranks of "
                     "each call of the window; a dashed red line marks an onset.</p>\n");
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(doc, "communicators")) {
        nt_buf_puts(out, "<h3>communicator ");
        nt_rw_h(out, nt_json_get_str(it, "id", "?"));
        if (*nt_json_get_str(it, "name", "")) {
            nt_buf_puts(out, " (");
            nt_rw_h(out, nt_json_get_str(it, "name", ""));
            nt_buf_puts(out, ")");
        }
        nt_buf_printf(out, ", %.0f ranks</h3>\n", nt_rw_num(it, "nranks"));
        nt_rw_html_chart(doc, it, out);
    }
    nt_buf_puts(out, "</section>\n<section id=\"not_judged\"><h2>Not judged</h2>\n<ul>");
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(doc, "not_judged")) {
        nt_buf_puts(out, "<li>");
        nt_rw_h(out, nt_json_get_str(it, "check", "?"));
        if (nt_json_get_str(it, "comm_id", NULL)) {
            nt_buf_puts(out, " ");
            nt_rw_h(out, nt_json_get_str(it, "comm_id", ""));
        }
        nt_buf_puts(out, ": ");
        nt_rw_h(out, nt_json_get_str(it, "reason", ""));
        nt_buf_puts(out, "</li>");
    }
    nt_buf_puts(out, "</ul></section>\n</main>\n<footer class=\"note\" style=\"padding:0 24px "
                     "16px\">nettune ");
    nt_rw_h(out, nt_json_get_str(doc, "nettune_version", "?"));
    nt_buf_puts(out, "</footer>\n</body></html>\n");
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
