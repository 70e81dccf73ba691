/* The fabric section in the renderers (render_fabric.h). Figures are the section's: bw_GBps
 * shown as GB/s, exported as bytes per second. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render_fabric.h"

/* Most hosts listed in a group's box or line; the rest are counted. */
#define NT_FAB_HOSTS_SHOWN 12

static const cJSON *nt_fab_section(const cJSON *root)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "fabric");
    return cJSON_IsObject(f) ? f : NULL;
}

/* "{h1, h2, h3, +5 more}" of group g of the section (its "groups" array of host names). */
static void nt_fab_group_text(const cJSON *fab, int g, char *buf, size_t len)
{
    const cJSON *grp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fab, "groups"), g), *h;
    int n = cJSON_GetArraySize(grp), i = 0;
    size_t off = (size_t)snprintf(buf, len, "{");
    cJSON_ArrayForEach (h, grp) {
        if (off >= len)
            break;
        if (i == NT_FAB_HOSTS_SHOWN && n > NT_FAB_HOSTS_SHOWN + 1) {
            off += (size_t)snprintf(buf + off, len - off, ", +%d more", n - i);
            break;
        }
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i++ ? ", " : "",
                                cJSON_IsString(h) ? h->valuestring : "?");
    }
    if (off < len)
        snprintf(buf + off, len - off, "}");
}

static nt_verdict_t nt_fab_status(const cJSON *o)
{
    nt_verdict_t v = NT_NOT_JUDGED;
    nt_verdict_parse(nt_json_get_str(o, "status", "not_judged"), &v);
    return v;
}

/* Why the phases stopped early, or NULL: the probe writes it with the status; a skipped
 * section's reason is in its not_judged line already. */
static const char *nt_fab_stop_reason(const cJSON *fab)
{
    const char *why = nt_json_get_str(fab, "reason", "");
    return *why && strcmp(nt_json_get_str(fab, "status", ""), "skipped") != 0 ? why : NULL;
}

void nt_render_fabric_text(const cJSON *root, nt_table_style_t style, int color, nt_buf_t *out)
{
    const cJSON *fab = nt_fab_section(root), *it;
    const char *b = style == NT_TABLE_MD ? "- " : "  ", *why;
    char g[800];
    int ng;

    if (!fab)
        return;
    ng = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fab, "groups"));
    nt_buf_printf(out, "%s%s, %s, %d nodes, %.2f s of %g s budget\n",
                  style == NT_TABLE_MD ? "\n## Fabric\n\n" : "\nFabric: ",
                  nt_json_get_str(fab, "status", "?"), nt_json_get_str(fab, "transport", "?"),
                  cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fab, "nodes")),
                  nt_json_get_num(fab, "elapsed_s", NAN), nt_json_get_num(fab, "budget_s", NAN));
    if ((why = nt_fab_stop_reason(fab))) {
        nt_buf_printf(out, "%s%s: ", b, nt_json_get_str(fab, "status", "?"));
        nt_buf_put_plain(out, why);
        nt_buf_puts(out, "\n");
    }
    for (int i = 0; i < ng; i++) {
        nt_fab_group_text(fab, i, g, sizeof(g));
        nt_buf_printf(out, "%sgroup %d: ", b, i);
        nt_buf_put_plain(out, g);
        nt_buf_puts(out, "\n");
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "checks")) {
        nt_verdict_t v = nt_fab_status(it);
        nt_buf_puts(out, b);
        if (color)
            nt_buf_puts(out, nt_ansi_verdict(v));
        nt_buf_printf(out, "%s", nt_verdict_string(v));
        if (color)
            nt_buf_puts(out, nt_ansi_reset);
        nt_buf_printf(out, " %s %s: ", nt_json_get_str(it, "code", ""),
                      nt_json_get_str(it, "check", ""));
        nt_buf_put_plain(out, nt_json_get_str(it, "message", ""));
        nt_buf_puts(out, "\n");
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "not_judged")) {
        nt_buf_printf(out, "%snot judged %s: ", b, nt_json_get_str(it, "what", ""));
        nt_buf_put_plain(out, nt_json_get_str(it, "reason", ""));
        nt_buf_puts(out, "\n");
    }
}

void nt_render_fabric_html(const cJSON *root, nt_buf_t *out)
{
    const cJSON *fab = nt_fab_section(root), *groups, *it;
    const char *why;
    int ng, w, h = 0;
    char g[800];

    if (!fab)
        return;
    groups = cJSON_GetObjectItemCaseSensitive(fab, "groups");
    ng = cJSON_GetArraySize(groups);
    nt_buf_puts(out, "<section id=\"fabric\"><h2>Fabric under load</h2>\n<p class=\"note\">");
    nt_buf_put_html(out, nt_json_get_str(fab, "status", "?"));
    if ((why = nt_fab_stop_reason(fab))) {
        nt_buf_puts(out, " (");
        nt_buf_put_html(out, why);
        nt_buf_puts(out, ")");
    }
    nt_buf_printf(out, ", %d nodes; nodes whose cross traffic slows together form a group; a red "
                       "arc is a cut, labelled with its shared bottleneck</p>\n",
                  cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fab, "nodes")));
    for (int i = 0; i < ng; i++) {
        int n = cJSON_GetArraySize(cJSON_GetArrayItem(groups, i));
        int bh = 28 + 14 * (n > NT_FAB_HOSTS_SHOWN ? NT_FAB_HOSTS_SHOWN + 1 : n);
        if (bh > h)
            h = bh;
    }
    if (ng > 0) {
        /* boxes in a row, 150 wide with 50 between; arcs below them, the deepest (between the
         * groups farthest apart) 30 + 40 per group between, its label under its lowest point */
        w = ng * 200;
        nt_buf_printf(out,
                      "<svg id=\"fabric-svg\" width=\"%d\" height=\"%d\" role=\"img\" "
                      "aria-label=\"groups and cuts\">\n",
                      w, h + 4 + 30 + 40 * (ng > 1 ? ng - 1 : 0) + 22);
        for (int i = 0; i < ng; i++) {
            const cJSON *grp = cJSON_GetArrayItem(groups, i);
            int n = cJSON_GetArraySize(grp), k = 0, x = 10 + 200 * i;
            nt_fab_group_text(fab, i, g, sizeof(g));
            nt_buf_printf(out, "<g><title>group %d: ", i);
            nt_buf_put_html(out, g);
            nt_buf_printf(out,
                          "</title><rect x=\"%d\" y=\"4\" width=\"150\" height=\"%d\" rx=\"6\" "
                          "fill=\"#f0f6fc\" stroke=\"#2271b1\"/>"
                          "<text x=\"%d\" y=\"20\" font-size=\"12\" font-weight=\"600\">group %d "
                          "(%d)</text>\n",
                          x, h, x + 8, i, n);
            cJSON_ArrayForEach (it, grp) {
                if (k == NT_FAB_HOSTS_SHOWN && n > NT_FAB_HOSTS_SHOWN + 1) {
                    nt_buf_printf(out,
                                  "<text x=\"%d\" y=\"%d\" font-size=\"11\">+%d more</text>\n",
                                  x + 8, 36 + 14 * k, n - k);
                    break;
                }
                nt_buf_printf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">", x + 8,
                              36 + 14 * k++);
                nt_buf_put_html(out, cJSON_IsString(it) ? it->valuestring : "?");
                nt_buf_puts(out, "</text>\n");
            }
            nt_buf_puts(out, "</g>\n");
        }
        cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "cuts")) {
            const cJSON *cg = cJSON_GetObjectItemCaseSensitive(it, "groups");
            double da = cJSON_GetNumberValue(cJSON_GetArrayItem(cg, 0));
            double dc = cJSON_GetNumberValue(cJSON_GetArrayItem(cg, 1));
            int a = da >= 0 && da < ng ? (int)da : -1, c = dc >= 0 && dc < ng ? (int)dc : -1;
            int xa, xc, depth;
            if (a < 0 || c < 0 || a >= ng || c >= ng)
                continue;
            xa = 85 + 200 * a;
            xc = 85 + 200 * c;
            depth = 30 + 40 * (c - a > 0 ? c - a : a - c);
            nt_buf_puts(out, "<g><title>");
            nt_buf_put_html(out, nt_json_get_str(it, "detail", ""));
            nt_buf_printf(out,
                          "</title><path d=\"M%d %d Q%d %d %d %d\" fill=\"none\" "
                          "stroke=\"#d63638\" stroke-width=\"3\"/>"
                          "<text x=\"%d\" y=\"%d\" font-size=\"12\" fill=\"#d63638\" "
                          "text-anchor=\"middle\">%.2g GB/s</text></g>\n",
                          xa, h + 4, (xa + xc) / 2, h + 4 + 2 * depth, xc, h + 4, (xa + xc) / 2,
                          h + 4 + depth + 16, nt_json_get_num(it, "bottleneck_GBps", NAN));
        }
        nt_buf_puts(out, "</svg>\n");
    }
    nt_buf_puts(out, "<ul>");
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "checks")) {
        nt_verdict_t v = nt_fab_status(it);
        nt_buf_printf(out, "<li><span class=\"v %s\">%s</span> ", nt_verdict_string(v),
                      nt_verdict_string(v));
        nt_buf_put_html(out, nt_json_get_str(it, "code", ""));
        nt_buf_puts(out, " ");
        nt_buf_put_html(out, nt_json_get_str(it, "message", ""));
        nt_buf_puts(out, "</li>\n");
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "not_judged")) {
        nt_buf_puts(out, "<li>not judged ");
        nt_buf_put_html(out, nt_json_get_str(it, "what", ""));
        nt_buf_puts(out, ": ");
        nt_buf_put_html(out, nt_json_get_str(it, "reason", ""));
        nt_buf_puts(out, "</li>\n");
    }
    nt_buf_puts(out, "</ul></section>\n");
}

/* The labels of a cut: its groups' names and its code. */
static void nt_fab_cut_labels(nt_buf_t *out, const cJSON *fab, const cJSON *cut)
{
    const cJSON *cg = cJSON_GetObjectItemCaseSensitive(cut, "groups");
    char a[800], b[800];
    nt_fab_group_text(fab, (int)cJSON_GetNumberValue(cJSON_GetArrayItem(cg, 0)), a, sizeof(a));
    nt_fab_group_text(fab, (int)cJSON_GetNumberValue(cJSON_GetArrayItem(cg, 1)), b, sizeof(b));
    nt_prom_label(out, 1, "group_a", a);
    nt_prom_label(out, 0, "group_b", b);
    nt_prom_label(out, 0, "code", nt_json_get_str(cut, "code", ""));
}

void nt_render_fabric_prom(const cJSON *root, nt_buf_t *out)
{
    const cJSON *fab = nt_fab_section(root), *cuts, *it;
    static const struct {
        const char *name, *help, *key;
        double scale;
    } fam[] = {
        {"nettune_fabric_cut_bottleneck_bytes_per_second",
         "Shared bottleneck of a cut between two groups: its cross flows of one round together.",
         "bottleneck_GBps", 1e9},
        {"nettune_fabric_cut_flows", "Cross flows at once in a slowed round of the cut (median).",
         "flows", 1},
    };
    int nloaded = 0, judged = 0;
    nt_verdict_t cutv = NT_NOT_JUDGED;

    if (!fab)
        return;
    /* The cuts' verdict: the worst of the fabric_cut checks (a warn per cut, one pass for no
     * shared bottleneck); none when the judge could not draw cuts (every node a group of its
     * own, too few flows, the phases skipped). */
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "checks")) {
        nt_verdict_t v = nt_fab_status(it);
        if (strcmp(nt_json_get_str(it, "check", ""), "fabric_cut") != 0 ||
            (v != NT_PASS && v != NT_WARN && v != NT_FAIL))
            continue;
        cutv = judged++ ? nt_verdict_worse(cutv, v) : v;
    }
    nt_prom_family(out, "nettune_fabric_cut_verdict",
                   "Verdict of the fabric judge on cuts between groups of nodes: 0 pass (no "
                   "shared bottleneck), 1 warn (a cut), -2 not judged (no cut could be drawn).");
    nt_buf_puts(out, "nettune_fabric_cut_verdict");
    nt_prom_value(out, nt_prom_verdict(cutv));
    /* The groups mean something only where the cuts were judged: the groups of the cuts found,
     * 1 where none was (the groups without a confirmed cut between them are one as far as the
     * fabric shows); not exported where nothing was judged. */
    if (judged) {
        nt_prom_family(out, "nettune_fabric_groups",
                       "Groups of nodes with a confirmed cut between them (1: no cut found); "
                       "absent when the cuts were not judged (nettune_fabric_cut_verdict -2).");
        nt_buf_puts(out, "nettune_fabric_groups");
        nt_prom_value(out, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fab, "cuts"))
                               ? cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fab, "groups"))
                               : 1);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "phases")) {
        const cJSON *rd;
        if (strcmp(nt_json_get_str(it, "phase", ""), "alone") == 0)
            continue;
        cJSON_ArrayForEach (rd, cJSON_GetObjectItemCaseSensitive(it, "rounds"))
            nloaded += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rd, "flows"));
    }
    nt_prom_family(out, "nettune_fabric_flows", "Flows measured under load by the fabric phases.");
    nt_buf_puts(out, "nettune_fabric_flows");
    nt_prom_value(out, nloaded);
    cuts = cJSON_GetObjectItemCaseSensitive(fab, "cuts");
    if (!cJSON_GetArraySize(cuts))
        return;
    for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
        nt_prom_family(out, fam[f].name, fam[f].help);
        cJSON_ArrayForEach (it, cuts) {
            nt_buf_puts(out, fam[f].name);
            nt_fab_cut_labels(out, fab, it);
            nt_buf_puts(out, "}");
            nt_prom_value(out, nt_json_get_num(it, fam[f].key, NAN) * fam[f].scale);
        }
    }
    nt_prom_family(out, "nettune_fabric_cut_flow_bytes_per_second",
                   "Bandwidth per cross flow of a cut, under load and of the same pairs alone.");
    cJSON_ArrayForEach (it, cuts) {
        for (int k = 0; k < 2; k++) {
            nt_buf_puts(out, "nettune_fabric_cut_flow_bytes_per_second");
            nt_fab_cut_labels(out, fab, it);
            nt_prom_label(out, 0, "when", k ? "alone" : "loaded");
            nt_buf_puts(out, "}");
            nt_prom_value(out, nt_json_get_num(it, k ? "alone_bw_GBps" : "loaded_bw_GBps", NAN) *
                                   1e9);
        }
    }
}

/* ---- nettune report --diff ---- */

/* A cut's key: its two groups' host names, each group joined with ',', the pair in order. */
static void nt_fab_cut_key(const cJSON *fab, const cJSON *cut, char *buf, size_t len)
{
    const cJSON *cg = cJSON_GetObjectItemCaseSensitive(cut, "groups");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(fab, "groups");
    char side[2][1024];
    for (int k = 0; k < 2; k++) {
        const cJSON *grp = cJSON_GetArrayItem(groups, (int)cJSON_GetNumberValue(
                                                          cJSON_GetArrayItem(cg, k))),
                    *h;
        size_t off = 0;
        side[k][0] = '\0';
        cJSON_ArrayForEach (h, grp) {
            if (off < sizeof(side[k]))
                off += (size_t)snprintf(side[k] + off, sizeof(side[k]) - off, "%s%s",
                                        off ? "," : "", cJSON_IsString(h) ? h->valuestring : "?");
        }
    }
    if (strcmp(side[0], side[1]) <= 0)
        snprintf(buf, len, "{%s} | {%s}", side[0], side[1]);
    else
        snprintf(buf, len, "{%s} | {%s}", side[1], side[0]);
}

static const cJSON *nt_fab_find_cut(const cJSON *fab, const char *key)
{
    const cJSON *it;
    char k[2100];
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "cuts")) {
        nt_fab_cut_key(fab, it, k, sizeof(k));
        if (strcmp(k, key) == 0)
            return it;
    }
    return NULL;
}

/* What --diff compares of a finding: cuts by their bottleneck, rail findings by the figure
 * they were judged on. The JSON keys are kind, "old_" figure and "new_" figure. */
typedef struct nt_fab_finding_kind {
    const char *kind;   /* "cut", "rail" */
    const char *figure; /* the finding's key of GB/s: "bottleneck_GBps", "bw_GBps" */
    const char *label;  /* "bottleneck", "per flow" */
} nt_fab_finding_kind_t;

static const nt_fab_finding_kind_t nt_fab_cut_kind = {"cut", "bottleneck_GBps", "bottleneck"};
static const nt_fab_finding_kind_t nt_fab_rail_kind = {"rail", "bw_GBps", "per flow"};

/* One compared finding (o old, n new, either NULL) into out and arr; returns 1 when it is a
 * regression (it appeared, or its figure fell by more than thr percent). */
static int nt_diff_fabric_finding(const nt_fab_finding_kind_t *k, const char *key,
                                  const cJSON *o, const cJSON *n, double thr,
                                  nt_table_style_t style, nt_buf_t *out, cJSON *arr)
{
    double ob = o ? nt_json_get_num(o, k->figure, NAN) : NAN;
    double nb = n ? nt_json_get_num(n, k->figure, NAN) : NAN;
    double pct = ob > 0 && nb >= 0 ? 100.0 * (nb - ob) / ob : NAN;
    const char *status = !o ? "appeared" : !n ? "vanished"
                         : pct < -thr     ? "regressed"
                         : pct > thr      ? "improved"
                                          : "same";
    char name[64];
    if (out) {
        char a[32], b[32];
        nt_buf_printf(out, "%s%s %s: ", style == NT_TABLE_MD ? "- " : "  ", k->kind, status);
        nt_buf_put_plain(out, key);
        nt_buf_printf(out, ": %s %s -> %s GB/s\n", k->label, nt_fmt_bw(a, sizeof(a), ob),
                      nt_fmt_bw(b, sizeof(b), nb));
    }
    if (arr) {
        cJSON *c = cJSON_CreateObject();
        if (c && cJSON_AddItemToArray(arr, c)) {
            nt_json_add_str(c, k->kind, key);
            nt_json_add_str(c, "status", status);
            snprintf(name, sizeof(name), "old_%s", k->figure);
            if (o && isfinite(ob))
                nt_json_add_num(c, name, ob);
            snprintf(name, sizeof(name), "new_%s", k->figure);
            if (n && isfinite(nb))
                nt_json_add_num(c, name, nb);
            if (isfinite(pct))
                nt_json_add_num(c, "change_pct", pct);
        } else {
            cJSON_Delete(c);
        }
    }
    return !o || strcmp(status, "regressed") == 0;
}

/* A rail finding of the section: a fabric_rail check that warns (or fails). */
static int nt_fab_is_rail_finding(const cJSON *c)
{
    const char *st = nt_json_get_str(c, "status", "");
    return strcmp(nt_json_get_str(c, "check", ""), "fabric_rail") == 0 &&
           (strcmp(st, "warn") == 0 || strcmp(st, "fail") == 0);
}

/* A rail finding's key: "NT-FAB-202 rail 1 of h3", "NT-FAB-203 rail 0"; a check without its
 * rail field (an older report) by its message up to the first ':'. */
static void nt_fab_rail_key(const cJSON *c, char *buf, size_t len)
{
    const cJSON *rail = cJSON_GetObjectItemCaseSensitive(c, "rail");
    const char *node = nt_json_get_str(c, "node", NULL), *msg = nt_json_get_str(c, "message", "");
    if (cJSON_IsNumber(rail))
        snprintf(buf, len, "%s rail %d%s%s", nt_json_get_str(c, "code", "?"),
                 (int)rail->valuedouble, node ? " of " : "", node ? node : "");
    else
        snprintf(buf, len, "%s %.*s", nt_json_get_str(c, "code", "?"),
                 (int)(strchr(msg, ':') ? (size_t)(strchr(msg, ':') - msg) : strlen(msg)), msg);
}

static const cJSON *nt_fab_find_rail(const cJSON *fab, const char *key)
{
    const cJSON *it;
    char k[300];
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "checks")) {
        if (!nt_fab_is_rail_finding(it))
            continue;
        nt_fab_rail_key(it, k, sizeof(k));
        if (strcmp(k, key) == 0)
            return it;
    }
    return NULL;
}

/* The rail findings of both sides: as the cuts, a new one or a worse figure is a regression.
 * Returns 1 on a regression; *any gets whether either side has one. */
static int nt_diff_fabric_rails(const cJSON *a, const cJSON *b, double thr,
                                nt_table_style_t style, nt_buf_t *out, cJSON *arr, int *any)
{
    const cJSON *it;
    char key[300];
    int regressed = 0;
    *any = 0;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(b, "checks")) {
        if (!nt_fab_is_rail_finding(it))
            continue;
        *any = 1;
        nt_fab_rail_key(it, key, sizeof(key));
        regressed |= nt_diff_fabric_finding(&nt_fab_rail_kind, key, nt_fab_find_rail(a, key),
                                            it, thr, style, out, arr);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(a, "checks")) {
        if (!nt_fab_is_rail_finding(it))
            continue;
        *any = 1;
        nt_fab_rail_key(it, key, sizeof(key));
        if (!nt_fab_find_rail(b, key))
            nt_diff_fabric_finding(&nt_fab_rail_kind, key, it, NULL, thr, style, out, arr);
    }
    return regressed;
}

int nt_diff_fabric(const cJSON *old_root, const cJSON *new_root, double threshold_pct,
                   nt_table_style_t style, nt_buf_t *out, cJSON *json)
{
    const cJSON *a = nt_fab_section(old_root), *b = nt_fab_section(new_root), *it;
    cJSON *obj = NULL, *arr = NULL;
    int regressed = 0;
    char key[2100];

    if (!a && !b)
        return 0;
    if (json && (obj = nt_json_add_obj(json, "fabric"))) {
        nt_json_add_bool(obj, "old", a != NULL);
        nt_json_add_bool(obj, "new", b != NULL);
        arr = nt_json_add_arr(obj, "cuts");
    }
    if (out)
        nt_buf_printf(out, "%sFabric%s\n", style == NT_TABLE_MD ? "\n## " : "\n",
                      !a ? ": only the new run has a fabric section"
                      : !b ? ": only the old run has a fabric section"
                           : "");
    if (!a || !b)
        return 0;
    if (obj) {
        nt_json_add_num(obj, "old_groups",
                        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "groups")));
        nt_json_add_num(obj, "new_groups",
                        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(b, "groups")));
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(b, "cuts")) {
        nt_fab_cut_key(b, it, key, sizeof(key));
        regressed |= nt_diff_fabric_finding(&nt_fab_cut_kind, key, nt_fab_find_cut(a, key), it,
                                            threshold_pct, style, out, arr);
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(a, "cuts")) {
        nt_fab_cut_key(a, it, key, sizeof(key));
        if (!nt_fab_find_cut(b, key))
            nt_diff_fabric_finding(&nt_fab_cut_kind, key, it, NULL, threshold_pct, style, out,
                                   arr);
    }
    if (out && !cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, "cuts")) &&
        !cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(b, "cuts")))
        nt_buf_printf(out, "%sno cut in either run\n", style == NT_TABLE_MD ? "- " : "  ");
    {
        int any, several = nt_json_get_int(a, "rails", 1) > 1 || nt_json_get_int(b, "rails", 1) > 1;
        regressed |= nt_diff_fabric_rails(a, b, threshold_pct, style, out,
                                          obj ? nt_json_add_arr(obj, "rails") : NULL, &any);
        if (out && !any && several)
            nt_buf_printf(out, "%sno rail finding in either run\n",
                          style == NT_TABLE_MD ? "- " : "  ");
    }
    if (obj)
        nt_json_add_bool(obj, "regression", regressed);
    return regressed;
}
