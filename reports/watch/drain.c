/* nettune watch --drain: the findings of a drain row of the check table that name a host become the failed nodes of a
 * summary in the probe report's shape, which goes through the probe's own drain path
 * (probes/drain.c: sinfo for the node names, an administrator's drain left alone, one
 * `scontrol update ... State=DRAIN Reason=...` per node). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "drain.h"
#include "nettune/checks.h"
#include "nettune/report.h"
#include "watch.h"

/* The figures a finding's reason shows, per check: "<observed>/<expected><unit>". A check not
 * listed shows none. */
static const struct {
    const char *check, *observed, *expected, *unit;
} nt_watch_reason_figures[] = {
    {"watch_hang", "last_seq", "max_seq", "calls"},
    {"watch_straggler", "calls_fastest", "calls_judged", "calls"},
    {"watch_onset", "observed_busbw_GBps", "expected_busbw_GBps", "GB/s"},
    {"watch_below_model", "observed_busbw_GBps", "expected_busbw_GBps", "GB/s"},
};

char *nt_watch_drain_reason(const cJSON *f, char *buf, size_t len)
{
    const char *check = nt_json_get_str(f, "check", "?");
    const char *word = strncmp(check, "watch_", 6) == 0 ? check + 6 : check;
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(f, "rank");
    const cJSON *pid = cJSON_GetObjectItemCaseSensitive(f, "pid");
    size_t k = 0;
    int w = snprintf(buf, len, "%s%s %s", NT_DRAIN_REASON_PREFIX, "watch", word);
    k = w > 0 && (size_t)w < len ? (size_t)w : len - 1;
    for (size_t i = 0; i < sizeof(nt_watch_reason_figures) / sizeof(nt_watch_reason_figures[0]);
         i++) {
        if (strcmp(nt_watch_reason_figures[i].check, check) != 0)
            continue;
        double o = nt_json_get_num(f, nt_watch_reason_figures[i].observed, NAN);
        double e = nt_json_get_num(f, nt_watch_reason_figures[i].expected, NAN);
        if (isfinite(o) && isfinite(e) && k < len)
            w = snprintf(buf + k, len - k, " %.3g/%.3g%s", o, e, nt_watch_reason_figures[i].unit);
        else
            w = 0;
        k += w > 0 && (size_t)w < len - k ? (size_t)w : 0;
    }
    if (k < len && cJSON_IsNumber(rank)) {
        w = snprintf(buf + k, len - k, " rank %d", rank->valueint);
        k += w > 0 && (size_t)w < len - k ? (size_t)w : 0;
    }
    if (k < len && cJSON_IsNumber(pid)) {
        w = snprintf(buf + k, len - k, " pid %.0f", pid->valuedouble);
        k += w > 0 && (size_t)w < len - k ? (size_t)w : 0;
    }
    if (k < len)
        snprintf(buf + k, len - k, " comm %s", nt_json_get_str(f, "comm_id", "?"));
    return buf;
}

cJSON *nt_watch_failed_nodes(const cJSON *findings)
{
    cJSON *doc = cJSON_CreateObject(), *sum, *failed;
    const cJSON *f;
    if (!doc || !(sum = cJSON_AddObjectToObject(doc, "summary")) ||
        !(failed = cJSON_AddArrayToObject(sum, "failed_nodes")) ||
        !cJSON_AddFalseToObject(sum, "completed"))
        goto oom;
    cJSON_ArrayForEach (f, findings) {
        const char *host = nt_json_get_str(f, "host", NULL);
        const cJSON *e, *dup = NULL;
        char reason[NT_DRAIN_REASON_MAX];
        /* The check table's row decides, and only it: a finding drains its host when its row's
         * category is drain (NT-JOB-202 hang, NT-JOB-203 a rank RAS lists as missing), so the
         * code in the Slurm reason, the finding's category and docs/codes.md say the same. */
        const nt_check_row_t *row = nt_check_by_code(nt_json_get_str(f, "code", ""));
        if (!host || !*host || !row || row->category != NT_CAT_DRAIN)
            continue;
        cJSON_ArrayForEach (e, failed)
            if (strcmp(nt_json_get_str(e, "host", ""), host) == 0)
                dup = e;
        if (dup) {
            cJSON *more = cJSON_GetObjectItemCaseSensitive(dup, "more_reasons");
            if (more)
                cJSON_SetNumberValue(more, more->valuedouble + 1);
            else if (!cJSON_AddNumberToObject((cJSON *)dup, "more_reasons", 1))
                goto oom;
            continue;
        }
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(failed, o))
            goto oom_o;
        if (!cJSON_AddStringToObject(o, "host", host) ||
            !cJSON_AddStringToObject(o, "reason", nt_watch_drain_reason(f, reason, sizeof(reason))) ||
            !cJSON_AddStringToObject(o, "code", row->code) ||
            !cJSON_AddStringToObject(o, "category", nt_category_name(row->category)))
            goto oom;
        continue;
    oom_o:
        cJSON_Delete(o);
        goto oom;
    }
    return doc;
oom:
    cJSON_Delete(doc);
    return NULL;
}

int nt_watch_drain(const nt_watch_params_t *p, const cJSON *doc)
{
    if (p->drain == NT_WATCH_DRAIN_OFF)
        return 0;
    cJSON *failed = nt_watch_failed_nodes(cJSON_GetObjectItemCaseSensitive(doc, "findings"));
    if (!failed) {
        fprintf(stderr, "nettune watch: --drain: out of memory: nothing drained\n");
        return -1;
    }
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(failed, "summary"), "failed_nodes");
    /* The summary goes to stderr when stdout carries the document or the textfile. */
    FILE *out = p->format == NT_WATCH_TEXT ? stdout : stderr;
    nt_status_t st = NT_OK;
    if (!cJSON_GetArraySize(list))
        fprintf(out, "drain: no failing finding names a host: nothing to drain\n");
    else
        st = nt_drain_run_doc(failed, "the watch's judgement", "nettune watch",
                              p->drain == NT_WATCH_DRAIN_DRY_RUN ? NT_DRAIN_DRY_RUN
                                                                 : NT_DRAIN_APPLY,
                              0, 0, out);
    cJSON_Delete(failed);
    return st == NT_OK ? 0 : -1;
}
