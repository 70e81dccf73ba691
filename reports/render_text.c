/* The terminal summary, and the body it shares with Markdown: what failed comes first, then
 * figures per link kind and per node, worst first, so the first screen is the one to act on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render_fabric.h"
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

const char *nt_code_prefix(const cJSON *obj, char *buf, size_t len)
{
    const char *code = nt_json_get_str(obj, "code", NULL);
    snprintf(buf, len, "%s%s", code ? code : "", code ? " " : "");
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

    /* a report that judged nothing says so in words, not as a verdict */
    snprintf(vword, sizeof(vword), "%s",
             doc->verdict == NT_NOT_JUDGED ? "nothing judged" : nt_verdict_string(doc->verdict));
    for (char *c = vword; *c; c++)
        *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
    nt_fmt_num(dur, sizeof(dur), nt_json_get_num(run, "duration_s", NAN), 3);
    /* the probe's own headline rule: a pass says when nothing, or not everything, was judged */
    nt_verdict_judged_note(note, sizeof(note), doc->counts[NT_PASS], doc->counts[NT_WARN],
                           doc->counts[NT_FAIL], doc->counts[NT_NOT_JUDGED]);
    if (doc->verdict == NT_NOT_JUDGED)
        note[0] = '\0';
    /* A run that stopped early says so before any verdict: the verdict covers only what was
     * measured (the not-done items follow below). */
    if (md)
        nt_buf_printf(out, "# nettune report: %s%s%s\n\n", doc->completed ? "" : "STOPPED EARLY: ",
                      vword, note);
    else
        nt_buf_printf(out, "nettune report: %s%s%s%s%s%s%s",
                      !doc->completed && color ? nt_ansi_verdict(NT_WARN) : "",
                      doc->completed ? "" : "STOPPED EARLY: ",
                      !doc->completed && color ? nt_ansi_reset : "",
                      color ? nt_ansi_verdict(doc->verdict) : "", vword, color ? nt_ansi_reset : "",
                      note);
    double nranks = nt_json_get_num(run, "nranks", 0);
    nt_buf_printf(out, "%s%zu node%s, %g rank%s, %s, %s s%s\n", md ? "- " : "  (", doc->nnodes,
                  doc->nnodes == 1 ? "" : "s", nranks, nranks == 1 ? "" : "s",
                  nt_json_get_str(run, "mode", "?"), dur, md ? "" : ")");
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
        char code[32];
        if (i++ >= shown)
            break;
        nt_table_cell(&t, 1 + NT_FAIL, "%s", nt_json_get_str(it, "host", "?"));
        nt_table_cell(&t, 0, "%s%s", nt_code_prefix(it, code, sizeof(code)),
                      nt_json_get_str(it, "reason", ""));
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
            char a[32], b[32], c[32], r[512], code[32];
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
            nt_table_cell(&t, 0, "%s%s", nt_code_prefix(l->j, code, sizeof(code)),
                          nt_link_reasons(l, r, style == NT_TABLE_MD ? 512 : 100));
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
            char ob[128], ex[128], code[32];
            nt_table_cell(&t, 1 + c->verdict, "%s", nt_verdict_string(c->verdict));
            nt_table_cell(&t, 0, "%s", c->host ? c->host : "-");
            nt_table_cell(&t, 0, "%s%s", nt_code_prefix(c->j, code, sizeof(code)), c->name);
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

/* The populations the peer rule judged links against (populations[]; the links name theirs
 * in judged_against): reference and limits, so that a reader sees what a pass or a failure
 * was measured against. */
static void nt_summary_populations(const nt_rdoc_t *doc, const nt_render_opts_t *o,
                                   nt_table_style_t style, nt_buf_t *out)
{
    static const char *const head[] = {"#",     "kind",      "scope",       "size",       "figure",
                                       "links", "reference", "warn beyond", "fail beyond"};
    const cJSON *pops = cJSON_GetObjectItemCaseSensitive(doc->root, "populations"), *it;
    nt_table_t t;
    int i = 0;

    if (cJSON_GetArraySize(pops) == 0)
        return;
    nt_heading(out, style, o->color, "Judged against: the peer rule's populations");
    nt_table_init(&t, 9, "rlllrrrrr", head);
    cJSON_ArrayForEach (it, pops) {
        char a[32], b[32], c[32], sz[24];
        nt_table_cell(&t, 0, "%d", i++);
        nt_table_cell(&t, 0, "%s", nt_json_get_str(it, "kind", ""));
        nt_table_cell(&t, 0, "%s", nt_json_get_str(it, "scope", ""));
        nt_table_cell(&t, 0, "%s", nt_bytes_str(sz, sizeof(sz), nt_json_get_u64(it, "bytes", 0)));
        nt_table_cell(&t, 0, "%s", nt_json_get_str(it, "figure", ""));
        nt_table_cell(&t, 0, "%.0f", nt_json_get_num(it, "members", NAN));
        nt_table_cell(&t, 0, "%s",
                      nt_fmt_num(a, sizeof(a), nt_json_get_num(it, "reference", NAN), 4));
        nt_table_cell(&t, 0, "%s", nt_fmt_num(b, sizeof(b), nt_json_get_num(it, "limit", NAN), 4));
        nt_table_cell(&t, 0, "%s",
                      nt_fmt_num(c, sizeof(c), nt_json_get_num(it, "fail_limit", NAN), 4));
    }
    nt_table_emit(&t, out, style, o->color, 2);
    nt_table_cleanup(&t);
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
    nt_summary_populations(doc, &oo, style, out);
    nt_summary_nodes(doc, &oo, style, out);
    nt_summary_skipped(doc, &oo, style, out);
    nt_render_fabric_text(doc->root, style, color, out); /* render_fabric.c */
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}

nt_status_t nt_render_text(const nt_rdoc_t *doc, const nt_render_opts_t *o, nt_buf_t *out)
{
    return nt_render_summary(doc, o, NT_TABLE_TEXT, out);
}

/* ---- nettune probe's closing summary ---- */

/* Whether the report goes to standard output ("-", /dev/stdout, or the file stdout is
 * redirected to): the human summary then goes to stderr, so stdout holds the document alone. */
static int nt_output_is_stdout(const char *output)
{
    struct stat a, b;
    if (strcmp(output, "-") == 0)
        return 1;
    return fstat(STDOUT_FILENO, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* One skip of one node, for grouping. */
typedef struct nt_skip_ent {
    const char *probe, *reason;
    int node;    /* index in nodes[] */
    size_t ord;  /* in document order */
    int printed; /* 1: its line is printed (the group's first node), with count others */
    int count;
} nt_skip_ent_t;

static int nt_cmp_skip(const void *pa, const void *pb)
{
    const nt_skip_ent_t *a = *(nt_skip_ent_t *const *)pa, *b = *(nt_skip_ent_t *const *)pb;
    int c = strcmp(a->probe, b->probe);
    if (!c)
        c = strcmp(a->reason, b->reason);
    return c ? c : (a->ord > b->ord) - (a->ord < b->ord);
}

/* Skips are grouped: the same probe and reason on 1,000 nodes is one line, printed at the
 * first node that has it, with the count of the group's other entries (sorted, n log n). */
static void nt_skips_print(nt_buf_t *out, const cJSON *nodes)
{
    const cJSON *it, *sk;
    int nn = cJSON_GetArraySize(nodes), node = 0;
    size_t n = 0, cap = 0;
    nt_skip_ent_t *e = NULL;
    nt_skip_ent_t **by = NULL;
    const cJSON **objs = calloc((size_t)nn + 1, sizeof(*objs));

    if (!objs)
        return;
    cJSON_ArrayForEach (it, nodes) {
        objs[node] = it;
        cJSON_ArrayForEach (sk, cJSON_GetObjectItemCaseSensitive(it, "skipped")) {
            if (n == cap) {
                nt_skip_ent_t *grown = realloc(e, sizeof(*e) * (cap = cap ? 2 * cap : 64));
                if (!grown)
                    goto out;
                e = grown;
            }
            e[n] = (nt_skip_ent_t){nt_json_get_str(sk, "probe", "?"),
                                   nt_json_get_str(sk, "reason", ""),
                                   node,
                                   n,
                                   0,
                                   0};
            n++;
        }
        node++;
    }
    by = malloc((n + 1) * sizeof(*by));
    if (!by)
        goto out;
    for (size_t i = 0; i < n; i++)
        by[i] = &e[i];
    qsort(by, n, sizeof(*by), nt_cmp_skip);
    for (size_t g = 0; g < n;) {
        size_t h = g;
        while (h < n && strcmp(by[h]->probe, by[g]->probe) == 0 &&
               strcmp(by[h]->reason, by[g]->reason) == 0)
            h++;
        /* by[g] is the group's first entry in document order: its node prints them */
        for (size_t k = g; k < h && by[k]->node == by[g]->node; k++) {
            by[k]->printed = 1;
            by[k]->count = (int)(h - g) - 1;
        }
        g = h;
    }
    for (size_t i = 0; i < n; i++) {
        const char *host = nt_json_get_str(objs[e[i].node], "hostname", "?");
        if (!e[i].printed)
            continue;
        if (e[i].count + 1 == nn && nn > 1)
            nt_buf_printf(out, "  skipped %s on all %d nodes: %s\n", e[i].probe, nn, e[i].reason);
        else if (e[i].count)
            nt_buf_printf(out, "  skipped %s on %s and %d other node(s): %s\n", e[i].probe, host,
                    e[i].count, e[i].reason);
        else
            nt_buf_printf(out, "  skipped %s on %s: %s\n", e[i].probe, host, e[i].reason);
    }
out:
    free(by);
    free(e);
    free(objs);
}

void nt_render_probe_summary(const cJSON *doc, const char *output, nt_buf_t *out)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sum, "counts");
    const cJSON *it;

    int npass = (int)nt_json_get_num(counts, "pass", 0),
        nwarn = (int)nt_json_get_num(counts, "warn", 0),
        nfail = (int)nt_json_get_num(counts, "fail", 0),
        nnj = (int)nt_json_get_num(counts, "not_judged", 0);
    char also[48];
    int nskip = 0;
    /* A pass is only as good as what was judged: say so in the headline (docs/verdicts.md),
     * by the rule nettune report's text, md and html use too (lib/report.c). */
    nt_verdict_judged_note(also, sizeof(also), (size_t)npass, (size_t)nwarn, (size_t)nfail,
                           (size_t)nnj);
    /* "pass" only when something was judged: a run that judged nothing says that instead */
    if (strcmp(nt_json_get_str(sum, "verdict", ""), "not_judged") == 0)
        also[0] = '\0';
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(doc, "nodes"))
        nskip += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(it, "skipped"));
    int nnodes = (int)nt_json_get_num(run, "nnodes", 0), nranks = (int)nt_json_get_num(run, "nranks", 0);
    nt_buf_printf(out, "nettune probe: %s%s%s  (%d node%s, %d rank%s, %s, %.1f s%s)\n",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "completed")) ? "" : "STOPPED EARLY: ",
            strcmp(nt_json_get_str(sum, "verdict", "?"), "not_judged") == 0
                ? "nothing judged"
                : nt_json_get_str(sum, "verdict", "?"),
            also, nnodes, nnodes == 1 ? "" : "s", nranks, nranks == 1 ? "" : "s",
            nt_json_get_str(run, "mode", "?"),
            nt_json_get_num(run, "duration_s", 0),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "completed")) ? "" : ", INCOMPLETE");
    /* the skipped count counts checks and links; the "skipped <probe>" lines below are probes */
    nt_buf_printf(out, "  checks and links: %d pass, %d warn, %d fail, %d skipped, %d not judged", npass,
            nwarn, nfail, (int)nt_json_get_num(counts, "skipped", 0), nnj);
    if (nskip)
        nt_buf_puts(out, "; skipped probes below, not in these counts");
    nt_buf_puts(out, "\n");
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "failed_nodes")) {
        char reason[256]; /* Slurm's reason as the drain path gives it (NT_DRAIN_REASON_MAX) */
        nt_buf_printf(out, "  DRAIN %s: %s\n", nt_json_get_str(it, "host", "?"),
                nt_failed_node_reason(it, reason, sizeof(reason)));
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "failed_links"))
        nt_buf_printf(out, "  failed link %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "warnings"))
        nt_buf_printf(out, "  warning: %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "not_judged"))
        nt_buf_printf(out, "  not judged: %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(run, "not_done"))
        nt_buf_printf(out, "  not done: %s\n", it->valuestring);
    nt_skips_print(out, cJSON_GetObjectItemCaseSensitive(doc, "nodes"));
    nt_buf_printf(out, "  report: %s\n", output);
}

void nt_summary_print(const cJSON *doc, const char *output)
{
    nt_buf_t out;

    nt_buf_init(&out);
    nt_render_probe_summary(doc, output, &out);
    if (out.data)
        fputs(out.data, nt_output_is_stdout(output) ? stderr : stdout);
    nt_buf_cleanup(&out);
}
