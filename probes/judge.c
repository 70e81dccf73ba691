/* Verdicts for the report: see judge.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "nettune/log.h"

struct nt_judge {
    int dummy;
};

int nt_exit_code(int usage_error, int any_fail, int stopped_early, int any_warn, int strict)
{
    if (usage_error)
        return NT_EXIT_USAGE;
    if (any_fail || (strict && any_warn))
        return NT_EXIT_FAIL;
    if (stopped_early)
        return NT_EXIT_INCOMPLETE;
    return NT_EXIT_OK;
}

nt_status_t nt_judge_create(const nt_probe_params_t *params, nt_judge_t **out)
{
    (void)params;
    *out = calloc(1, sizeof(**out));
    return *out ? NT_OK : NT_ERR_NOMEM;
}

void nt_judge_destroy(nt_judge_t *j) { free(j); }

void nt_judge_node_checks(const nt_judge_t *j, const char *host, const cJSON *node_json,
                          cJSON *checks)
{
    (void)j, (void)host, (void)node_json, (void)checks;
}

static void nt_add_reason(cJSON *link, const char *msg)
{
    cJSON *r = cJSON_GetObjectItemCaseSensitive(link, "reasons");
    if (!r)
        r = cJSON_AddArrayToObject(link, "reasons");
    if (r)
        cJSON_AddItemToArray(r, cJSON_CreateString(msg));
}

static void nt_set_verdict(cJSON *link, nt_verdict_t v)
{
    cJSON *old = cJSON_GetObjectItemCaseSensitive(link, "verdict");
    if (old)
        cJSON_ReplaceItemInObjectCaseSensitive(link, "verdict",
                                               cJSON_CreateString(nt_verdict_string(v)));
    else
        nt_json_add_str(link, "verdict", nt_verdict_string(v));
}

static nt_verdict_t nt_get_verdict(const cJSON *obj)
{
    nt_verdict_t v = NT_PASS;
    nt_verdict_parse(nt_json_get_str(obj, "verdict", "pass"), &v);
    return v;
}

nt_status_t nt_judge_retest_pairs(nt_judge_t *j, const nt_probe_t *p, cJSON *doc,
                                  const nt_link_probe_ops_t *const *table, int ntable,
                                  int (**pairs)[3], int *n)
{
    (void)j, (void)p, (void)doc, (void)table, (void)ntable;
    *pairs = NULL;
    *n = 0;
    return NT_OK;
}

void nt_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links)
{
    (void)j, (void)doc, (void)retest_links;
}

int nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                    const nt_probe_params_t *params)
{
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(doc, "checks");
    cJSON *summary, *failed_nodes, *failed_links, *warnings, *counts;
    int cnt[4] = {0};
    nt_verdict_t overall = NT_PASS;
    cJSON *it;

    (void)j;
    (void)p;
    /* Link verdicts: a measurement that stopped, or below its expected bandwidth, fails. */
    cJSON_ArrayForEach(it, links)
    {
        nt_verdict_t v = nt_get_verdict(it);
        double exp_bw = nt_json_get_num(it, "expected_bw_GBps", NAN);
        double peak = nt_json_get_num(it, "peak_bw_GBps", NAN);
        if (v == NT_SKIPPED) {
            cnt[NT_SKIPPED]++;
            continue;
        }
        if (cJSON_GetObjectItemCaseSensitive(it, "errors")) {
            v = NT_FAIL;
            nt_add_reason(it, "measurement did not complete (see errors)");
        }
        if (isfinite(exp_bw) && isfinite(peak) && peak < exp_bw) {
            char msg[200];
            v = NT_FAIL;
            snprintf(msg, sizeof(msg), "bandwidth %.3g GB/s below the expected %.3g GB/s", peak,
                     exp_bw);
            nt_add_reason(it, msg);
        }
        nt_set_verdict(it, v);
        cnt[v]++;
        overall = nt_verdict_worse(overall, v);
        if (v == NT_PASS && !params->samples_all)
            cJSON_DeleteItemFromObjectCaseSensitive(it, "samples");
    }
    cJSON_ArrayForEach(it, checks)
    {
        nt_verdict_t v = nt_get_verdict(it);
        cnt[v]++;
        if (v != NT_SKIPPED)
            overall = nt_verdict_worse(overall, v);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "summary");
    summary = nt_json_add_obj(doc, "summary");
    if (!summary)
        return NT_EXIT_USAGE;
    nt_json_add_str(summary, "verdict", nt_verdict_string(overall));
    failed_nodes = nt_json_add_arr(summary, "failed_nodes");
    failed_links = nt_json_add_arr(summary, "failed_links");
    warnings = nt_json_add_arr(summary, "warnings");
    cJSON_ArrayForEach(it, checks)
    {
        nt_verdict_t v = nt_get_verdict(it);
        const char *host = nt_json_get_str(it, "host", NULL);
        if (v == NT_FAIL && host) {
            cJSON *fn = cJSON_CreateObject();
            nt_json_add_str(fn, "host", host);
            nt_json_add_str(fn, "reason", nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(failed_nodes, fn);
        } else if (v == NT_WARN) {
            cJSON_AddItemToArray(warnings, cJSON_CreateString(nt_json_get_str(it, "message", "")));
        }
    }
    cJSON_ArrayForEach(it, links)
    {
        if (nt_get_verdict(it) == NT_FAIL)
            cJSON_AddItemToArray(failed_links, cJSON_CreateString(nt_json_get_str(it, "id", "")));
    }
    counts = nt_json_add_obj(summary, "counts");
    nt_json_add_num(counts, "pass", cnt[NT_PASS]);
    nt_json_add_num(counts, "warn", cnt[NT_WARN]);
    nt_json_add_num(counts, "fail", cnt[NT_FAIL]);
    nt_json_add_num(counts, "skipped", cnt[NT_SKIPPED]);
    return nt_exit_code(0, overall == NT_FAIL, stopped_early, overall == NT_WARN, params->strict);
}

void nt_summary_print(const cJSON *doc, const char *output)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sum, "counts");
    const cJSON *it;
    FILE *f = strcmp(output, "-") == 0 ? stderr : stdout;

    fprintf(f, "nettune probe: %s  (%d nodes, %d ranks, %s, %.1f s%s)\n",
            nt_json_get_str(sum, "verdict", "?"), (int)nt_json_get_num(run, "nnodes", 0),
            (int)nt_json_get_num(run, "nranks", 0), nt_json_get_str(run, "mode", "?"),
            nt_json_get_num(run, "duration_s", 0),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "completed")) ? ""
                                                                            : ", INCOMPLETE");
    fprintf(f, "  checks and links: %d pass, %d warn, %d fail, %d skipped\n",
            (int)nt_json_get_num(counts, "pass", 0), (int)nt_json_get_num(counts, "warn", 0),
            (int)nt_json_get_num(counts, "fail", 0), (int)nt_json_get_num(counts, "skipped", 0));
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sum, "failed_nodes"))
        fprintf(f, "  DRAIN %s: %s\n", nt_json_get_str(it, "host", "?"),
                nt_json_get_str(it, "reason", ""));
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sum, "failed_links"))
        fprintf(f, "  failed link %s\n", it->valuestring);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(sum, "warnings"))
        fprintf(f, "  warning: %s\n", it->valuestring);
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(run, "not_done"))
        fprintf(f, "  not done: %s\n", it->valuestring);
    /* Skips are grouped: the same probe and reason on 1,000 nodes is one line. */
    {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes"), *sk;
        int nn = cJSON_GetArraySize(nodes);
        cJSON_ArrayForEach(it, nodes)
        {
            cJSON_ArrayForEach(sk, cJSON_GetObjectItemCaseSensitive(it, "skipped"))
            {
                const char *pr = nt_json_get_str(sk, "probe", "?");
                const char *re = nt_json_get_str(sk, "reason", "");
                int first = 1, count = 0;
                const char *firsthost = nt_json_get_str(it, "hostname", "?");
                const cJSON *o, *s2;
                /* Print each (probe, reason) once, at its first node, with a node count. */
                cJSON_ArrayForEach(o, nodes)
                {
                    cJSON_ArrayForEach(s2, cJSON_GetObjectItemCaseSensitive(o, "skipped"))
                    {
                        if (strcmp(pr, nt_json_get_str(s2, "probe", "")) ||
                            strcmp(re, nt_json_get_str(s2, "reason", "")))
                            continue;
                        if (o == it && s2 == sk && count)
                            first = 0;
                        if (o != it || s2 != sk)
                            count += 1;
                        else if (!count)
                            count = 0;
                    }
                }
                (void)first;
                /* count holds the other nodes' matches; print only on the first node. */
                {
                    int before = 0;
                    cJSON_ArrayForEach(o, nodes)
                    {
                        if (o == it)
                            break;
                        cJSON_ArrayForEach(s2, cJSON_GetObjectItemCaseSensitive(o, "skipped"))
                            if (!strcmp(pr, nt_json_get_str(s2, "probe", "")) &&
                                !strcmp(re, nt_json_get_str(s2, "reason", "")))
                                before = 1;
                    }
                    if (before)
                        continue;
                }
                if (count + 1 == nn && nn > 1)
                    fprintf(f, "  skipped %s on all %d nodes: %s\n", pr, nn, re);
                else if (count)
                    fprintf(f, "  skipped %s on %s and %d other node(s): %s\n", pr, firsthost,
                            count, re);
                else
                    fprintf(f, "  skipped %s on %s: %s\n", pr, firsthost, re);
            }
        }
    }
    fprintf(f, "  report: %s\n", output);
}

nt_status_t nt_judge_print_thresholds(FILE *f)
{
    fputs("{\"schema\": \"nettune.thresholds/1\", \"classes\": [], \"defaults\": {}}\n", f);
    return NT_OK;
}
