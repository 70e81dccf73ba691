/* The terminal summary, and the body it shares with Markdown: what failed comes first, then
 * figures per link kind and per node, worst first, so the first screen is the one to act on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rpt.h"

const char *nt_check_value(const cJSON *check, const char *key, char *buf, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(check, key);
    const char *unit = nt_json_get_str(check, "unit", NULL);
    char num[64];

    if (cJSON_IsString(v))
        snprintf(buf, len, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, len, "%s%s%s", nt_fmt_num(num, sizeof(num), v->valuedouble, 6),
                 unit ? " " : "", unit ? unit : "");
    else
        snprintf(buf, len, "-");
    return buf;
}

const char *nt_link_reasons(const nt_rlink_t *l, char *buf, size_t len)
{
    const cJSON *r;
    size_t used = 0;

    buf[0] = '\0';
    if (!l->reasons)
        return buf;
    if (len < 8) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    cJSON_ArrayForEach (r, l->reasons) {
        if (!cJSON_IsString(r))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? "; " : "", r->valuestring);
        if (n < 0 || (size_t)n >= len - used) {
            /* Cut: at the last word that fits with the ellipsis (3 bytes in UTF-8). */
            size_t end = len - 4, sp = end;
            while (sp > 0 && buf[sp] != ' ')
                sp--;
            if (sp > end / 2)
                end = sp;
            while (end > 0 && (buf[end - 1] == ' ' || buf[end - 1] == ';' || buf[end - 1] == ','))
                end--;
            /* never inside a UTF-8 sequence */
            while (end > 0 && ((unsigned char)buf[end] & 0xC0) == 0x80)
                end--;
            memcpy(buf + end, "\xe2\x80\xa6", 4);
            break;
        }
        used += (size_t)n;
    }
    return buf;
}

static void nt_heading(nt_buf_t *out, nt_table_style_t style, int color, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void nt_heading(nt_buf_t *out, nt_table_style_t style, int color, const char *fmt, ...)
{
    char text[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (style == NT_TABLE_MD) {
        nt_buf_puts(out, "\n## ");
        nt_buf_put_md(out, text);
        nt_buf_puts(out, "\n\n");
    } else {
        nt_buf_printf(out, "\n%s%s%s\n", color ? "\033[1m" : "", text, color ? nt_ansi_reset : "");
    }
}

/* "... and 12 more" under a cut list. */
static void nt_more(nt_buf_t *out, nt_table_style_t style, size_t shown, size_t total,
                    const char *what)
{
    if (shown >= total)
        return;
    if (style == NT_TABLE_MD)
        nt_buf_printf(out, "\n_... and %zu more %s (--top 0 shows all)._\n", total - shown, what);
    else
        nt_buf_printf(out, "  ... and %zu more %s (--top 0 shows all)\n", total - shown, what);
}

static size_t nt_cut(const nt_render_opts_t *o, size_t n)
{
    return o->top && o->top < n ? o->top : n;
}

static void nt_summary_header(const nt_rdoc_t *doc, nt_table_style_t style, int color,
                              nt_buf_t *out)
{
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc->root, "run");
    const cJSON *tool = cJSON_GetObjectItemCaseSensitive(doc->root, "tool");
    const cJSON *nd = cJSON_GetObjectItemCaseSensitive(run, "not_done"), *it;
    char vword[16], dur[32], note[48];
    int md = style == NT_TABLE_MD;

    snprintf(vword, sizeof(vword), "%s", nt_verdict_string(doc->verdict));
    for (char *c = vword; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    nt_fmt_num(dur, sizeof(dur), nt_json_get_num(run, "duration_s", NAN), 3);
    /* the probe's own headline rule: a pass says when nothing, or not everything, was judged */
    nt_verdict_judged_note(note, sizeof(note), doc->counts[NT_PASS], doc->counts[NT_WARN],
                           doc->counts[NT_FAIL], doc->counts[NT_NOT_JUDGED]);
    if (md)
        nt_buf_printf(out, "# nettune report: %s%s\n\n", vword, note);
    else
        nt_buf_printf(out, "nettune report: %s%s%s%s", color ? nt_ansi_verdict(doc->verdict) : "",
                      vword, color ? nt_ansi_reset : "", note);
    nt_buf_printf(out, "%s%zu nodes, %g ranks, %s, %s s%s\n", md ? "- " : "  (", doc->nnodes,
                  nt_json_get_num(run, "nranks", 0), nt_json_get_str(run, "mode", "?"), dur,
                  md ? "" : ")");
    nt_buf_printf(out, "%srun ", md ? "- " : "  ");
    if (md)
        nt_buf_put_md(out, nt_json_get_str(run, "id", "?"));
    else
        nt_buf_put_plain(out, nt_json_get_str(run, "id", "?"));
    nt_buf_puts(out, ", started ");
    nt_buf_put_plain(out, nt_json_get_str(run, "started_at", "?"));
    nt_buf_puts(out, ", ");
    nt_buf_put_plain(out, nt_json_get_str(tool, "name", "nettune"));
    nt_buf_puts(out, " ");
    nt_buf_put_plain(out, nt_json_get_str(tool, "version", "?"));
    nt_buf_puts(out, "\n");
    if (!doc->completed) {
        nt_buf_printf(out, "%s%sSTOPPED EARLY%s: not done:", md ? "- " : "  ",
                      md      ? "**"
                      : color ? nt_ansi_verdict(NT_WARN)
                              : "",
                      md      ? "**"
                      : color ? nt_ansi_reset
                              : "");
        nt_buf_puts(out, "\n");
        /* One item a line: each is a sentence of its own ("...(time limit reached)"). */
        cJSON_ArrayForEach (it, nd) {
            if (!cJSON_IsString(it))
                continue;
            nt_buf_puts(out, md ? "  - " : "    - ");
            if (md)
                nt_buf_put_md(out, it->valuestring);
            else
                nt_buf_put_plain(out, it->valuestring);
            nt_buf_puts(out, "\n");
        }
    }
    nt_buf_printf(out,
                  "%schecks and links: %zu pass, %zu warn, %zu fail, %zu skipped, %zu not judged\n",
                  md ? "- " : "  ", doc->counts[NT_PASS], doc->counts[NT_WARN],
                  doc->counts[NT_FAIL], doc->counts[NT_SKIPPED], doc->counts[NT_NOT_JUDGED]);
}

static void nt_summary_failed_nodes(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                                    nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"node", "reason"};
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc->root, "summary");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes"), *it;
    size_t total = (size_t)cJSON_GetArraySize(fn), shown = nt_cut(o, total), i = 0;
    nt_table_t t;

    if (!total)
        return;
    nt_heading(out, style, o->color, "Failed nodes (%zu)", total);
    nt_table_init(&t, 2, "ll", head);
    cJSON_ArrayForEach (it, fn) {
        if (i++ >= shown)
            break;
        nt_table_cell(&t, 1 + NT_FAIL, "%s", nt_json_get_str(it, "host", "?"));
        nt_table_cell(&t, 0, "%s", nt_json_get_str(it, "reason", ""));
    }
    nt_table_emit(&t, out, style, o->color, 2);
    nt_table_cleanup(&t);
    nt_more(out, style, shown, total, "failed nodes");
}

static void nt_summary_links(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                             nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"verdict", "link",   "peak GB/s", "expected",
                                       "eff",     "lat us", "reasons"};
    size_t n, *idx = nt_rdoc_sorted_links(doc, 1, &n), shown;
    nt_table_t t;

    if (!idx) {
        out->oom = 1;
        return;
    }
    if (n) {
        shown = nt_cut(o, n);
        nt_heading(out, style, o->color, "Failed and warned links (%zu, worst first)", n);
        nt_table_init(&t, 7, "llrrrrl", head);
        for (size_t i = 0; i < shown; i++) {
            const nt_rlink_t *l = &doc->links[idx[i]];
            char a[32], b[32], c[32], r[512];
            double eff = nt_link_efficiency(l);
            nt_table_cell(&t, 1 + l->verdict, "%s", nt_verdict_string(l->verdict));
            nt_table_cell(&t, 0, "%s", l->id);
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(a, sizeof(a), l->peak_bw_GBps));
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(b, sizeof(b), l->expected_bw_GBps));
            if (isnan(eff))
                nt_table_cell(&t, 0, "-");
            else
                nt_table_cell(&t, 0, "%.0f%%", 100 * eff);
            nt_table_cell(&t, 0, "%s", nt_fmt_num(c, sizeof(c), l->small_msg_lat_us, 3));
            nt_table_cell(&t, 0, "%s", nt_link_reasons(l, r, style == NT_TABLE_MD ? 512 : 100));
        }
        nt_table_emit(&t, out, style, o->color, 2);
        nt_table_cleanup(&t);
        nt_more(out, style, shown, n, "links");
    }
    free(idx);
}

static void nt_summary_checks(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                              nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"verdict",  "node",     "check",  "target",
                                       "observed", "expected", "message"};
    size_t n, *idx = nt_rdoc_sorted_checks(doc, 1, &n), shown;
    nt_table_t t;

    if (!idx) {
        out->oom = 1;
        return;
    }
    if (n) {
        shown = nt_cut(o, n);
        nt_heading(out, style, o->color, "Failed and warned checks (%zu)", n);
        nt_table_init(&t, 7, "lllllll", head);
        for (size_t i = 0; i < shown; i++) {
            const nt_rcheck_t *c = &doc->checks[idx[i]];
            char ob[128], ex[128];
            nt_table_cell(&t, 1 + c->verdict, "%s", nt_verdict_string(c->verdict));
            nt_table_cell(&t, 0, "%s", c->host ? c->host : "-");
            nt_table_cell(&t, 0, "%s", c->name);
            nt_table_cell(&t, 0, "%s", c->target);
            nt_table_cell(&t, 0, "%s", nt_check_value(c->j, "observed", ob, sizeof(ob)));
            nt_table_cell(&t, 0, "%s", nt_check_value(c->j, "expected", ex, sizeof(ex)));
            nt_table_cell(&t, 0, "%s", c->message);
        }
        nt_table_emit(&t, out, style, o->color, 2);
        nt_table_cleanup(&t);
        nt_more(out, style, shown, n, "checks");
    }
    free(idx);
}

/* A list of sentences of the summary (summary.warnings, summary.not_judged) under title. */
static void nt_summary_list(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_table_style_t style,
                            const char *key, const char *title, const char *what, nt_buf_t *out)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(doc->root, "summary");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(summary, key), *it;
    size_t total = (size_t)cJSON_GetArraySize(w), shown = nt_cut(o, total), i = 0;

    if (!total)
        return;
    nt_heading(out, style, o->color, "%s (%zu)", title, total);
    cJSON_ArrayForEach (it, w) {
        if (i++ >= shown)
            break;
        if (!cJSON_IsString(it))
            continue;
        nt_buf_puts(out, style == NT_TABLE_MD ? "- " : "  ");
        if (style == NT_TABLE_MD)
            nt_buf_put_md(out, it->valuestring);
        else
            nt_buf_put_plain(out, it->valuestring);
        nt_buf_puts(out, "\n");
    }
    nt_more(out, style, shown, total, what);
}

static void nt_summary_kinds(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                             nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"kind",     "scope",         "links",        "fail",
                                       "warn",     "peak GB/s min", "median",       "max",
                                       "expected", "eff median",    "lat us median"};
    nt_kind_stats_t *ks;
    size_t nk;
    nt_table_t t;

    if (nt_rdoc_kind_stats(doc, &ks, &nk) != NT_OK) {
        out->oom = 1;
        return;
    }
    if (nk) {
        nt_heading(out, style, o->color, "Links by kind");
        nt_table_init(&t, 11, "llrrrrrrrrr", head);
        for (size_t k = 0; k < nk; k++) {
            char a[32], b[32], c[32], d[32], e[32];
            nt_table_cell(&t, 0, "%s", ks[k].label);
            nt_table_cell(&t, 0, "%s", ks[k].scope);
            nt_table_cell(&t, 0, "%zu", ks[k].n);
            nt_table_cell(&t, ks[k].by_verdict[NT_FAIL] ? 1 + NT_FAIL : 0, "%zu",
                          ks[k].by_verdict[NT_FAIL]);
            nt_table_cell(&t, ks[k].by_verdict[NT_WARN] ? 1 + NT_WARN : 0, "%zu",
                          ks[k].by_verdict[NT_WARN]);
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(a, sizeof(a), ks[k].bw_min));
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(b, sizeof(b), ks[k].bw_med));
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(c, sizeof(c), ks[k].bw_max));
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(d, sizeof(d), ks[k].exp_med));
            if (isnan(ks[k].eff_med))
                nt_table_cell(&t, 0, "-");
            else
                nt_table_cell(&t, 0, "%.0f%%", 100 * ks[k].eff_med);
            nt_table_cell(&t, 0, "%s", nt_fmt_num(e, sizeof(e), ks[k].lat_med, 3));
        }
        nt_table_emit(&t, out, style, o->color, 2);
        nt_table_cleanup(&t);
    }
    free(ks);
}

static void nt_summary_nodes(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                             nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"node",
                                       "verdict",
                                       "GPUs",
                                       "NIC ports up",
                                       "inter GB/s median",
                                       "min",
                                       "links fail/warn",
                                       "checks fail/warn"};
    size_t n, *idx = nt_rdoc_sorted_nodes(doc, &n), shown;
    nt_table_t t;

    if (!idx) {
        out->oom = 1;
        return;
    }
    if (n) {
        shown = nt_cut(o, n);
        nt_heading(out, style, o->color, "Nodes (%zu, worst first; inter-node figures: %s links)",
                   n, doc->inter_kind);
        nt_table_init(&t, 8, "llrrrrrr", head);
        for (size_t i = 0; i < shown; i++) {
            const nt_rnode_t *nd = &doc->nodes[idx[i]];
            char a[32], b[32];
            nt_table_cell(&t, 0, "%s", nd->host);
            nt_table_cell(&t, 1 + nd->verdict, "%s", nt_verdict_string(nd->verdict));
            if (nd->gpu_model)
                nt_table_cell(&t, 0, "%d x %s", nd->ngpus, nd->gpu_model);
            else
                nt_table_cell(&t, 0, "%d", nd->ngpus);
            nt_table_cell(&t, nd->nics_active < nd->nnics ? 1 + NT_WARN : 0, "%d/%d",
                          nd->nics_active, nd->nnics);
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(a, sizeof(a), nd->inter_median_bw));
            nt_table_cell(&t, 0, "%s", nt_fmt_bw(b, sizeof(b), nd->inter_min_bw));
            nt_table_cell(&t, 0, "%zu/%zu", nd->links_fail, nd->links_warn);
            nt_table_cell(&t, 0, "%zu/%zu", nd->checks_fail, nd->checks_warn);
        }
        nt_table_emit(&t, out, style, o->color, 2);
        nt_table_cleanup(&t);
        nt_more(out, style, shown, n, "nodes");
    }
    free(idx);
}

static void nt_summary_skipped(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                               nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"probe", "nodes", "reason"};
    nt_skip_group_t *g;
    size_t ng;
    nt_table_t t;

    if (nt_rdoc_skip_groups(doc, &g, &ng) != NT_OK) {
        out->oom = 1;
        return;
    }
    if (ng) {
        /* probes, per node: not the checks and links that the headline's counts count */
        nt_heading(out, style, o->color, "Skipped probes (not in the counts above)");
        nt_table_init(&t, 3, "lrl", head);
        for (size_t i = 0; i < ng; i++) {
            nt_table_cell(&t, 0, "%s", g[i].probe);
            if (g[i].nnodes == 1)
                nt_table_cell(&t, 0, "%s", g[i].first_host);
            else if (g[i].nnodes == doc->nnodes)
                nt_table_cell(&t, 0, "all %zu", g[i].nnodes);
            else
                nt_table_cell(&t, 0, "%zu", g[i].nnodes);
            nt_table_cell(&t, 0, "%s", g[i].reason);
        }
        nt_table_emit(&t, out, style, o->color, 2);
        nt_table_cleanup(&t);
    }
    free(g);
}

nt_status_t nt_render_summary(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                              nt_table_style_t style, nt_buf_t *out)
{
    int color = style == NT_TABLE_TEXT && o->color;
    nt_render_opts_t oo = *o;

    oo.color = color;
    nt_summary_header(doc, style, color, out);
    nt_summary_failed_nodes(doc, &oo, style, out);
    nt_summary_links(doc, &oo, style, out);
    nt_summary_checks(doc, &oo, style, out);
    nt_summary_list(doc, &oo, style, "warnings", "Warnings", "warnings", out);
    nt_summary_list(doc, &oo, style, "not_judged", "Not judged", "not judged", out);
    nt_summary_kinds(doc, &oo, style, out);
    nt_summary_nodes(doc, &oo, style, out);
    nt_summary_skipped(doc, &oo, style, out);
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}

nt_status_t nt_render_text(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    return nt_render_summary(doc, o, NT_TABLE_TEXT, out);
}
