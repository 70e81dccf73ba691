/* A nettune.tuning/1 file for people: its rules in order (first match wins), the environment
 * advice, and which NCCL constant tables it overrides. */
#include <math.h>
#include <string.h>

#include "rpt.h"
#include "nt_tuning.h" /* the plugin's definition of the rule format */

/* The columns: "#" then the rule keys of the plugin's definition of the format
 * (plugins/nccl-tuner/src/nt_tuning.c nt_rule_keys), in that order. */
#define NT_RULE_NCOLS (1 + NT_RK_COUNT)
static const char *nt_rule_col(size_t c)
{
    return c == 0 ? "#" : nt_rule_keys[c - 1];
}

/* One rule value as text: absent or null is "any" (plugins/nccl-tuner/README.md), "" in CSV. */
static void nt_rule_value(const cJSON *rule, const char *key, int csv, char *buf, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(rule, key);
    char num[64];

    if (cJSON_IsString(v))
        snprintf(buf, len, "%s", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(buf, len, "%s", nt_fmt_num(num, sizeof(num), v->valuedouble, 10));
    else if (cJSON_IsBool(v))
        snprintf(buf, len, "%d", cJSON_IsTrue(v));
    else if (csv)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "%s", strstr(key, "_us") ? "-" : "any");
}

static void nt_tuning_table(const nt_rdoc_t *doc, nt_table_t *t)
{
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(doc->root, "rules"), *r;
    int i = 0;

    static const char *cols[NT_RULE_NCOLS];
    static char align[NT_RULE_NCOLS + 1];
    for (size_t c = 0; c < NT_RULE_NCOLS; c++) {
        int k = (int)c - 1;
        cols[c] = nt_rule_col(c);
        align[c] =
            k == NT_RK_COLL || k == NT_RK_ALGO || k == NT_RK_PROTO || k == NT_RK_BASIS ? 'l' : 'r';
    }
    align[NT_RULE_NCOLS] = '\0';
    nt_table_init(t, NT_RULE_NCOLS, align, cols);
    cJSON_ArrayForEach (r, rules) {
        nt_table_cell(t, 0, "%d", i++);
        for (size_t c = 1; c < NT_RULE_NCOLS; c++) {
            char v[128];
            nt_rule_value(r, nt_rule_col(c), 0, v, sizeof(v));
            nt_table_cell(t, 0, "%s", v);
        }
    }
}

static void nt_tuning_html(const nt_rdoc_t *doc, nt_buf_t *out)
{
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(doc->root, "rules"), *r;
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc->root, "env");
    int i = 0;

    nt_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                     "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                     "style-src 'unsafe-inline'\">\n<title>nettune tuning file</title>\n<style>"
                     "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}"
                     "table{border-collapse:collapse;font-size:13px}"
                     "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
                     "th{background:#eee}td.l{text-align:left}</style></head><body>\n");
    nt_buf_puts(out, "<h1>nettune tuning file</h1>\n<p>source report: ");
    nt_buf_put_html(out, nt_json_get_str(doc->root, "source_report", "-"));
    nt_buf_printf(out, "; %d rules, first match wins.</p>\n<table><tr>", cJSON_GetArraySize(rules));
    for (size_t c = 0; c < NT_RULE_NCOLS; c++)
        nt_buf_printf(out, "<th>%s</th>", nt_rule_col(c));
    nt_buf_puts(out, "</tr>\n");
    cJSON_ArrayForEach (r, rules) {
        nt_buf_printf(out, "<tr><td>%d</td>", i++);
        for (size_t c = 1; c < NT_RULE_NCOLS; c++) {
            char v[128];
            nt_rule_value(r, nt_rule_col(c), 0, v, sizeof(v));
            int k = (int)c - 1;
            nt_buf_puts(out,
                        k == NT_RK_COLL || k == NT_RK_ALGO || k == NT_RK_PROTO || k == NT_RK_BASIS
                            ? "<td class=\"l\">"
                            : "<td>");
            nt_buf_put_html(out, v);
            nt_buf_puts(out, "</td>");
        }
        nt_buf_puts(out, "</tr>\n");
    }
    nt_buf_puts(out, "</table>\n");
    if (cJSON_GetArraySize(env) > 0) {
        const cJSON *e;
        nt_buf_puts(out, "<h2>Environment for the launcher</h2>\n<pre>");
        cJSON_ArrayForEach (e, env) {
            nt_buf_put_html(out, e->string);
            nt_buf_puts(out, "=");
            nt_buf_put_html(out, cJSON_IsString(e) ? e->valuestring : "?");
            nt_buf_puts(out, "\n");
        }
        nt_buf_puts(out, "</pre>\n");
    }
    nt_buf_puts(out, "</body></html>\n");
}

nt_status_t nt_render_tuning(const nt_rdoc_t *doc, const char *format, const nt_render_opts_t *o,
                             nt_buf_t *out)
{
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(doc->root, "rules"), *r;
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc->root, "env");
    const cJSON *consts = cJSON_GetObjectItemCaseSensitive(doc->root, "constants");
    int md = strcmp(format, "md") == 0;
    nt_table_t t;

    (void)o;
    if (strcmp(format, "html") == 0) {
        nt_tuning_html(doc, out);
        return out->oom ? NT_ERR_NOMEM : NT_OK;
    }
    if (strcmp(format, "csv") == 0) {
        for (size_t c = 0; c < NT_RULE_NCOLS; c++)
            nt_buf_printf(out, "%s%s", c ? "," : "", c ? nt_rule_col(c) : "index");
        nt_buf_puts(out, "\r\n");
        int i = 0;
        cJSON_ArrayForEach (r, rules) {
            nt_buf_printf(out, "%d", i++);
            for (size_t c = 1; c < NT_RULE_NCOLS; c++) {
                char v[128];
                nt_rule_value(r, nt_rule_col(c), 1, v, sizeof(v));
                nt_buf_puts(out, ",");
                nt_buf_put_csv(out, v);
            }
            nt_buf_puts(out, "\r\n");
        }
        return out->oom ? NT_ERR_NOMEM : NT_OK;
    }
    if (strcmp(format, "text") != 0 && !md)
        return NT_ERR_UNSUPPORTED;
    nt_buf_printf(out, "%snettune tuning file: %d rules (first match wins), source report %s%s\n",
                  md ? "# " : "", cJSON_GetArraySize(rules),
                  nt_json_get_str(doc->root, "source_report", "-"),
                  cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(doc->root, "completed"))
                      ? " (partial: the tuner stopped at its time limit)"
                      : "");
    nt_buf_puts(out, md ? "\n" : "");
    nt_tuning_table(doc, &t);
    nt_table_emit(&t, out, md ? NT_TABLE_MD : NT_TABLE_TEXT, 0, md ? 0 : 2);
    nt_table_cleanup(&t);
    if (cJSON_GetArraySize(env) > 0) {
        const cJSON *e;
        nt_buf_puts(out, md ? "\n## Environment for the launcher\n\n```\n"
                            : "\nEnvironment for the launcher:\n");
        cJSON_ArrayForEach (e, env)
            nt_buf_printf(out, "%s%s=%s\n", md ? "" : "  ", e->string,
                          cJSON_IsString(e) ? e->valuestring : "?");
        nt_buf_puts(out, md ? "```\n" : "");
    }
    if (cJSON_GetArraySize(consts) > 0) {
        const cJSON *c;
        nt_buf_puts(out,
                    md ? "\nNCCL constant tables overridden:" : "\nNCCL constants overridden:");
        cJSON_ArrayForEach (c, consts)
            nt_buf_printf(out, " %s", c->string);
        nt_buf_puts(out, "\n");
    }
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
