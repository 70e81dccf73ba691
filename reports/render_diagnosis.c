/* nettune report on a nettune.diagnosis/1 document (nettune doctor's output): the diagnosis as
 * text or Markdown, the same content the doctor prints (docs/doctor-inputs.md). */
#include <string.h>

#include "rpt.h"

static const char *nt_render_diagnosis_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A count of the summary: cJSON's valueint (saturated at INT_MIN/INT_MAX), 0 when absent; a cast
 * of the double itself is UB for NAN (absent) and beyond an int. */
static int nt_count(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valueint : 0;
}

nt_status_t nt_render_diagnosis(const cJSON *root, const char *format, nt_buf_t *out)
{
    int md = strcmp(format, "md") == 0;
    if (!md && strcmp(format, "text") != 0)
        return NT_ERR_INVALID;
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(root, "summary");
    const cJSON *nj = cJSON_GetObjectItemCaseSensitive(sum, "not_judged"), *x;
    if (cJSON_GetArraySize(nj) > 0) {
        nt_buf_printf(out, "%sNOT JUDGED: ", md ? "**" : "nettune doctor: ");
        int i = 0;
        cJSON_ArrayForEach (x, nj)
            nt_buf_printf(out, "%s%s", i++ ? "; " : "", cJSON_GetStringValue(x));
        nt_buf_printf(out, "%s\n", md ? "**\n" : "");
    }
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    nt_buf_printf(out, "%sdiagnosis of %d input(s)%s\n",
                  md ? "# nettune doctor: " : "nettune doctor: ", cJSON_GetArraySize(inputs),
                  md ? "\n" : "");
    cJSON_ArrayForEach (x, inputs) {
        const char *st = nt_render_diagnosis_str(x, "status");
        nt_buf_printf(out, "%s%s: %s%s%s\n", md ? "- " : "  input ",
                      nt_render_diagnosis_str(x, "path") ? nt_render_diagnosis_str(x, "path") : "?",
                      st ? st : "?", nt_render_diagnosis_str(x, "message") ? ": " : "",
                      nt_render_diagnosis_str(x, "message") ? nt_render_diagnosis_str(x, "message")
                                                            : "");
    }
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(root, "findings"), *f;
    cJSON_ArrayForEach (f, findings) {
        const char *sev = nt_render_diagnosis_str(f, "severity");
        nt_buf_printf(out, "\n%s[%s] %s: %s%s\n", md ? "## " : "", sev ? sev : "?",
                      nt_render_diagnosis_str(f, "key"),
                      nt_render_diagnosis_str(f, "title") ? nt_render_diagnosis_str(f, "title")
                                                          : "",
                      md ? "\n" : "");
        const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(f, "hosts"), *h;
        if (cJSON_GetArraySize(hosts) > 0) {
            nt_buf_printf(out, "%shosts:", md ? "- " : "  ");
            cJSON_ArrayForEach (h, hosts)
                nt_buf_printf(out, " %s", cJSON_GetStringValue(h));
            nt_buf_printf(out, "\n");
        }
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(f, "evidence"), *e;
        nt_buf_printf(out, "%sevidence:\n", md ? "- " : "  ");
        cJSON_ArrayForEach (e, ev) {
            const cJSON *line = cJSON_GetObjectItemCaseSensitive(e, "line");
            if (cJSON_IsNumber(line))
                nt_buf_printf(
                    out, "%s%s:%d: %s%s\n", md ? "    `" : "    ",
                    nt_render_diagnosis_str(e, "file"), line->valueint,
                    nt_render_diagnosis_str(e, "text") ? nt_render_diagnosis_str(e, "text") : "",
                    md ? "`" : "");
            else
                nt_buf_printf(
                    out, "%s%s: %s%s\n", md ? "    `" : "    ", nt_render_diagnosis_str(e, "file"),
                    nt_render_diagnosis_str(e, "text") ? nt_render_diagnosis_str(e, "text") : "",
                    md ? "`" : "");
        }
        static const char *const parts[][2] = {
            {"why", "why"}, {"detail", "here"}, {"fix", "fix"}, {"reference", "reference"}};
        for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
            if (nt_render_diagnosis_str(f, parts[i][0]))
                nt_buf_printf(out, "%s%s: %s\n", md ? "- " : "  ", parts[i][1],
                              nt_render_diagnosis_str(f, parts[i][0]));
    }
    const cJSON *pf = cJSON_GetObjectItemCaseSensitive(root, "per_file");
    cJSON_ArrayForEach (x, pf) {
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(x, "superseded_by"), *b;
        nt_buf_printf(out, "%s%s of %s: superseded by", md ? "- " : "  ",
                      nt_render_diagnosis_str(x, "key"), nt_render_diagnosis_str(x, "file"));
        cJSON_ArrayForEach (b, by)
            nt_buf_printf(out, " %s", cJSON_GetStringValue(b));
        nt_buf_printf(out, "\n");
    }
    nt_buf_printf(out, "\n%d error, %d warn, %d info\n", nt_count(sum, "errors"),
                  nt_count(sum, "warnings"), nt_count(sum, "infos"));
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
