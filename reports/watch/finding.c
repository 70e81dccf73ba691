/* The parts of a watch finding shared by the judgements (judge.c, judge_node.c): a finding from
 * the check table's row, and a not_judged entry. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nettune/checks.h"
#include "watch.h"

/* -1, 0 or 1 as a is below, at or above b. */
static int nt_watch_side(double a, double b)
{
    return a < b ? -1 : a > b;
}

const char *nt_watch_fmt_vs(char *buf, size_t len, double v, double threshold, int dmin)
{
    char t[64];
    snprintf(t, sizeof(t), "%.*f", dmin, threshold);
    double shown_t = strtod(t, NULL); /* the threshold as the reader sees it */
    int d = dmin;
    for (; d < 3 && isfinite(v); d++) {
        snprintf(buf, len, "%.*f", d, v);
        if (nt_watch_side(strtod(buf, NULL), shown_t) == nt_watch_side(v, shown_t))
            return buf;
    }
    snprintf(buf, len, "%.*f", d, v);
    return buf;
}

int nt_watch_not_judged_add(cJSON *arr, const char *check, const char *comm, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o))
        return cJSON_Delete(o), -1;
    if (!cJSON_AddStringToObject(o, "check", check) ||
        !(comm ? cJSON_AddStringToObject(o, "comm_id", comm) : cJSON_AddNullToObject(o, "comm_id")) ||
        !cJSON_AddStringToObject(o, "reason", reason))
        return -1;
    return 0;
}

cJSON *nt_watch_finding_add(cJSON *arr, const char *code, const char *status,
                                   nt_watch_who_t w, const char *verdict, const char *reason)
{
    const nt_check_row_t *row = nt_check_by_code(code);
    cJSON *o = cJSON_CreateObject();
    if (!row || !o || !cJSON_AddItemToArray(arr, o))
        return cJSON_Delete(o), NULL;
    if (!cJSON_AddStringToObject(o, "code", row->code) ||
        !cJSON_AddStringToObject(o, "check", row->check) ||
        !cJSON_AddStringToObject(o, "category", nt_category_name(row->category)) ||
        !cJSON_AddStringToObject(o, "status", status) ||
        !cJSON_AddStringToObject(o, "comm_id", w.comm_id) ||
        !cJSON_AddStringToObject(o, "comm_name", w.comm_name) ||
        !(w.rank >= 0 ? cJSON_AddNumberToObject(o, "rank", w.rank)
                      : cJSON_AddNullToObject(o, "rank")) ||
        !(w.host[0] ? cJSON_AddStringToObject(o, "host", w.host)
                    : cJSON_AddNullToObject(o, "host")) ||
        !(w.pid >= 0 ? cJSON_AddNumberToObject(o, "pid", (double)w.pid)
                     : cJSON_AddNullToObject(o, "pid")) ||
        !cJSON_AddStringToObject(o, "verdict", verdict) ||
        !cJSON_AddStringToObject(o, "reason", reason) ||
        !cJSON_AddStringToObject(o, "action", row->action))
        return NULL;
    return o;
}

