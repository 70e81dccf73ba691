/* The judge (judge.h; probes/judge/README.md gives its files): creating and destroying it, and
 * nt_judge_finish, the final judgement of a report, as named phases over one nt_finish_t with
 * one cleanup. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge_int.h"
#include "nettune/log.h"
#include "nettune/rdoc.h"

/* The --baseline report's software and environment objects, copied out of it (the one report
 * reader, lib/core/rdoc.c); a report with no node's software is refused: nothing to hold the
 * job against. */
static nt_status_t nt_judge_load_baseline(nt_judge_t *j, const char *path)
{
    nt_rdoc_t doc;
    nt_status_t st = nt_rdoc_open(path, &doc);
    int nsw = 0;

    if (st != NT_OK) /* nt_rdoc_open said why, naming the file */
        return st;
    j->base_sw = cJSON_CreateArray();
    j->base_env = cJSON_CreateArray();
    st = j->base_sw && j->base_env ? NT_OK : NT_ERR_NOMEM;
    for (size_t i = 0; st == NT_OK && i < doc.nnodes; i++) {
        const cJSON *sw, *env;
        cJSON *a, *b;
        if (!doc.nodes[i].j)
            continue;
        sw = cJSON_GetObjectItemCaseSensitive(doc.nodes[i].j, "software");
        env = cJSON_GetObjectItemCaseSensitive(doc.nodes[i].j, "environment");
        if (!cJSON_IsObject(sw))
            continue;
        a = cJSON_Duplicate(sw, 1);
        b = cJSON_IsObject(env) ? cJSON_Duplicate(env, 1) : cJSON_CreateNull();
        if (!a || !b || !cJSON_AddItemToArray(j->base_sw, a) ||
            !cJSON_AddItemToArray(j->base_env, b)) {
            st = NT_ERR_NOMEM;
            break;
        }
        nsw++;
    }
    nt_rdoc_close(&doc);
    if (st == NT_OK && nsw == 0) {
        NT_ERROR(VERDICT,
                 "--baseline %s: no node of it has a software section (give the report "
                 "of a nettune probe run, not a tuning or older document)",
                 path);
        st = NT_ERR_INVALID;
    }
    return st;
}

nt_status_t nt_judge_create(const nt_probe_params_t *params, nt_judge_t **out)
{
    nt_judge_t *j = calloc(1, sizeof(*j));
    char err[512];
    nt_status_t st;

    *out = NULL;
    if (!j)
        return NT_ERR_NOMEM;
    st = params->thresholds
             ? nt_thresholds_load(params->thresholds, &j->thresholds, err, sizeof(err))
             : nt_thresholds_defaults(&j->thresholds);
    if (st != NT_OK) {
        if (params->thresholds)
            NT_ERROR(VERDICT, "%s (fix the file, or start from nettune probe --print-thresholds)",
                     err);
        free(j);
        return st;
    }
    nt_expect_init(&j->expect_override);
    if (params->expect && (st = nt_expect_parse(params->expect, NT_EXPECT_FOR_PROBE,
                                                &j->expect_override, err, sizeof(err))) != NT_OK) {
        NT_ERROR(VERDICT, "%s", err);
        nt_thresholds_destroy(j->thresholds);
        free(j);
        return st;
    }
    j->require = params->require;
    j->strict = params->strict;
    if (params->baseline && (st = nt_judge_load_baseline(j, params->baseline)) != NT_OK) {
        nt_judge_destroy(j);
        return st;
    }
    if (params->fabric_topology) {
        st = (j->fabric_topo = calloc(1, sizeof(*j->fabric_topo)))
                 ? nt_ibtopo_load(params->fabric_topology, j->fabric_topo)
                 : NT_ERR_NOMEM;
        if (st != NT_OK) { /* nt_ibtopo_load said why, naming the file */
            nt_judge_destroy(j);
            return st;
        }
    }
    *out = j;
    return NT_OK;
}

void nt_judge_destroy(nt_judge_t *j)
{
    if (!j)
        return;
    nt_thresholds_destroy(j->thresholds);
    cJSON_Delete(j->base_sw);
    cJSON_Delete(j->base_env);
    free(j->silent);
    nt_idset_free(&j->ctl);
    nt_idset_free(&j->target);
    nt_ibtopo_free(j->fabric_topo);
    free(j->fabric_topo);
    free(j);
}

void nt_judge_node_silent(nt_judge_t *j, const char *host, const char *why)
{
    nt_silent_t *grown;
    if (!j || !host || !*host)
        return;
    for (int i = 0; i < j->nsilent; i++)
        if (strcmp(j->silent[i].host, host) == 0)
            return; /* the first reason stands */
    grown = realloc(j->silent, sizeof(*grown) * (size_t)(j->nsilent + 1));
    if (!grown)
        return;
    j->silent = grown;
    snprintf(grown[j->nsilent].host, sizeof(grown->host), "%s", host);
    snprintf(grown[j->nsilent].why, sizeof(grown->why), "%s",
             why && *why ? why : "stopped answering");
    j->nsilent++;
}

nt_status_t nt_judge_print_thresholds(FILE *f)
{
    nt_thresholds_t *t = NULL;
    cJSON *doc = NULL;
    char *txt;
    nt_status_t st = nt_thresholds_defaults(&t);

    if (st == NT_OK)
        st = nt_thresholds_to_json(t, &doc);
    nt_thresholds_destroy(t);
    if (st != NT_OK)
        return st;
    txt = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!txt)
        return NT_ERR_NOMEM;
    fprintf(f, "%s\n", txt);
    free(txt);
    return NT_OK;
}






/* Phase "summary": a fresh summary object with its lists, and the unstable-machine warning. */
static nt_status_t nt_finish_summary_open(nt_finish_t *f)
{
    cJSON_DeleteItemFromObjectCaseSensitive(f->doc, "summary");
    if (!(f->summary = nt_json_add_obj(f->doc, "summary")))
        return NT_ERR_NOMEM;
    nt_json_add_str(f->summary, "verdict", "pass");
    /* The verdict covers what was measured; an incomplete run says so next to it (exit 3). */
    nt_json_add_bool(f->summary, "completed", !f->stopped_early);
    f->failed_nodes = nt_json_add_arr(f->summary, "failed_nodes");
    f->failed_links = nt_json_add_arr(f->summary, "failed_links");
    f->warnings = nt_json_add_arr(f->summary, "warnings");
    f->not_judged = nt_json_add_arr(f->summary, "not_judged");
    if (f->unstable[0]) {
        char w[300];
        snprintf(w, sizeof(w),
                 "measurements unstable: %d of %d links failed their first measurement and passed "
                 "their retest (a busy or oversubscribed machine?): peer findings are warnings, "
                 "nobody is blamed by peers; rerun on a quiet machine",
                 f->unstable[0], f->unstable[1]);
        cJSON_AddItemToArray(f->warnings, cJSON_CreateString(w));
    }
    return NT_OK;
}

/* Phase "checks": the NVLink expectations nothing judged, every check's code, and the checks'
 * part of the summary (counts, warnings, not judged). */
static void nt_finish_checks(nt_finish_t *f)
{
    cJSON *it;

    nt_judge_nvlinks_unjudged(f->j, f->nodes, f->checks);
    nt_finish_check_codes(f->checks);
    cJSON_ArrayForEach (it, f->checks) {
        nt_verdict_t v = nt_get_verdict(it);
        const char *host = nt_json_get_str(it, "host", NULL);
        char w[600];
        f->cnt[v]++;
        /* what judged it: an expectation of the thresholds (the inventory checks), or the
         * figure the check's own rule expects (a port ACTIVE, a link at its capability) */
        if ((v == NT_PASS || v == NT_WARN || v == NT_FAIL) &&
            !cJSON_GetObjectItemCaseSensitive(it, "judged_by"))
            nt_add_str_unique(nt_arr(it, "judged_by"),
                              strcmp(nt_json_get_str(it, "name", ""), "inventory") == 0
                                  ? "thresholds"
                                  : "expected");
        if (v == NT_NOT_JUDGED) {
            snprintf(w, sizeof(w), "%s%s%s: %s", host ? host : "", host ? ": " : "",
                     nt_json_get_str(it, "target", ""), nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(f->not_judged, cJSON_CreateString(w));
            continue;
        }
        if (v == NT_SKIPPED)
            continue;
        f->overall = nt_verdict_worse(f->overall, v);
        if (v == NT_WARN) {
            snprintf(w, sizeof(w), "%s%s%s", host ? host : "", host ? ": " : "",
                     nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(f->warnings, cJSON_CreateString(w));
        }
    }
}

/* Phase "verdict": the overall verdict and the counts. */
static void nt_finish_verdict(nt_finish_t *f)
{
    cJSON *counts;

    /* "pass" only when something was judged: otherwise the run judged nothing */
    if (f->overall == NT_PASS && !f->cnt[NT_PASS] && !f->cnt[NT_WARN] && !f->cnt[NT_FAIL])
        f->overall = NT_NOT_JUDGED;
    nt_set_str(f->summary, "verdict", nt_verdict_string(f->overall));
    counts = nt_json_add_obj(f->summary, "counts");
    nt_json_add_num(counts, "pass", f->cnt[NT_PASS]);
    nt_json_add_num(counts, "warn", f->cnt[NT_WARN]);
    nt_json_add_num(counts, "fail", f->cnt[NT_FAIL]);
    nt_json_add_num(counts, "skipped", f->cnt[NT_SKIPPED]);
    nt_json_add_num(counts, "not_judged", f->cnt[NT_NOT_JUDGED]);
}

/* The one cleanup of nt_judge_finish: every phase's allocations, whichever phase stopped. */
static void nt_finish_cleanup(nt_finish_t *f)
{
    free(f->nf);
    free(f->judged);
    free(f->gl);
    free(f->lv);
    free(f->nv);
    nt_figs_free(&f->fs);
}

int nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                    const nt_probe_params_t *params)
{
    nt_finish_t f = {.j = j,
                     .doc = doc,
                     .links = cJSON_GetObjectItemCaseSensitive(doc, "links"),
                     .checks = cJSON_GetObjectItemCaseSensitive(doc, "checks"),
                     .nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes"),
                     .params = params,
                     .stopped_early = stopped_early,
                     .overall = NT_PASS};
    int code = NT_EXIT_USAGE;

    (void)p;
    nt_finish_software(&f);
    if (nt_finish_links_fold(&f) != NT_OK) /* figures judged and folded into their links */
        goto cleanup;
    /* GPU blame inside each node, and failed GPU links failing their node (gpu_rules.c). */
    if (!f.usage && f.checks)
        nt_judge_gpu_pass(f.doc, f.links, f.checks, f.frozen, f.gl, f.ngl, f.lv);
    nt_finish_check_codes(f.checks); /* before the node policy quotes a check's code */
    f.nnodes = cJSON_GetArraySize(f.nodes);
    if (nt_finish_summary_open(&f) != NT_OK || nt_finish_nodes(&f) != NT_OK)
        goto cleanup;
    nt_finish_links_summary(&f);
    nt_finish_checks(&f);
    if (nt_finish_fabric(&f) != NT_OK) /* the fabric section's groups and cuts (fabric_doc.c) */
        goto cleanup;
    nt_finish_verdict(&f);
    code = nt_exit_code(f.usage, f.overall == NT_FAIL, stopped_early, f.overall == NT_WARN,
                        params->strict);
cleanup:
    nt_finish_cleanup(&f);
    return code;
}
