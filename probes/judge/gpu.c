/* The GPU glue of the judge: the GPU rules (gpu_rules.c) over the report's GPU links, and the
 * NVLink expectations that nothing judged. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge_int.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"


/* The GPU pass (nt_gpu_judge_report) over the report's GPU links gl[] (indices into links[]).
 * A report whose links are all trees is passed as it is; one holding links as text gets a
 * view of its nodes and of its GPU links only, opened (a few per node, not 499,500), and what
 * the pass changed is written back. lv[].v follows. */
void nt_judge_gpu_pass(cJSON *doc, cJSON *links, cJSON *checks, int frozen, const size_t *gl,
                              size_t ngl, nt_link_note_t *lv)
{
    static const char *const keys[] = {"verdict", "blamed_on_gpu", "judged_by", "reasons"};
    cJSON *view, *vlinks, **items, *item, *t;
    size_t li = 0, g = 0;

    if (!frozen) {
        nt_gpu_judge_report(doc, checks);
        li = 0;
        cJSON_ArrayForEach (item, links) {
            if (g < ngl && gl[g] == li) {
                lv[li].v = lv[li].own = nt_get_verdict(item);
                g++;
            }
            li++;
        }
        return;
    }
    view = cJSON_CreateObject();
    vlinks = cJSON_CreateArray();
    items = calloc(ngl + 1, sizeof(*items));
    if (!view || !vlinks || !items ||
        !cJSON_AddItemReferenceToObject(view, "nodes",
                                        cJSON_GetObjectItemCaseSensitive(doc, "nodes")) ||
        !cJSON_AddItemToObject(view, "links", vlinks)) {
        if (!cJSON_GetObjectItemCaseSensitive(view, "links"))
            cJSON_Delete(vlinks);
        cJSON_Delete(view);
        free(items);
        NT_ERROR(VERDICT, "out of memory judging the GPU links");
        return;
    }
    cJSON_ArrayForEach (item, links) {
        if (g < ngl && gl[g] == li) {
            cJSON *l = nt_json_thaw(item);
            t = l == item ? cJSON_Duplicate(item, 1) : l;
            if (t) {
                items[g] = item;
                cJSON_AddItemToArray(vlinks, t);
            }
            g++;
        }
        li++;
    }
    nt_gpu_judge_report(view, checks);
    g = 0;
    while ((t = cJSON_DetachItemFromArray(vlinks, 0))) {
        while (g < ngl && !items[g])
            g++;
        if (g == ngl) {
            cJSON_Delete(t);
            continue;
        }
        lv[gl[g]].v = lv[gl[g]].own = nt_get_verdict(t);
        if (cJSON_IsRaw(items[g])) {
            nt_json_thaw_end(items[g], t, 1);
        } else {
            /* a tree among text links: the pass's keys copied back */
            for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                cJSON *x = cJSON_GetObjectItemCaseSensitive(t, keys[k]);
                cJSON_DeleteItemFromObjectCaseSensitive(items[g], keys[k]);
                if (x)
                    cJSON_AddItemToObject(items[g], keys[k], cJSON_Duplicate(x, 1));
            }
            cJSON_Delete(t);
        }
        g++;
    }
    cJSON_Delete(view);
    free(items);
}

/* An NVLink count stated for a node (--expect nvlinks=N or its class) is judged by the GPU
 * probe's nvlink_state checks; where none was filed for the node (no GPU, no NVML, the GPU probe
 * skipped) the expectation gets one not_judged check with the reason, never a silent pass. */
void nt_judge_nvlinks_unjudged(const nt_judge_t *j, const cJSON *nodes, cJSON *checks)
{
    const cJSON *node, *c;
    char **judged = NULL;
    size_t njudged = 0, cap = 0;
    int scanned = 0;
    cJSON_ArrayForEach (node, nodes) {
        const char *host = nt_json_get_str(node, "hostname", NULL);
        nt_node_rules_t r;
        if (!host)
            continue;
        nt_rules_for(j, host, node, &r);
        if (r.expect.nvlinks < 0)
            continue;
        if (!scanned) { /* the hosts that have an nvlink_state check: one walk, sorted */
            scanned = 1;
            cJSON_ArrayForEach (c, checks) {
                const char *h = nt_json_get_str(c, "host", NULL);
                if (!h || strcmp(nt_json_get_str(c, "name", ""), "nvlink_state") != 0)
                    continue;
                if (njudged == cap) {
                    char **g = realloc(judged, (cap = cap ? 2 * cap : 16) * sizeof(*g));
                    if (!g)
                        break;
                    judged = g;
                }
                judged[njudged++] = (char *)h;
            }
            if (njudged)
                qsort(judged, njudged, sizeof(*judged), nt_cmp_strp);
        }
        if (njudged && bsearch(&host, judged, njudged, sizeof(*judged), nt_cmp_strp))
            continue;
        const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(node, "gpus");
        const char *why = "NVLink state unknown (no NVML inventory of the GPUs)";
        cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(node, "skipped"))
            if (strcmp(nt_json_get_str(c, "probe", ""), "gpu") == 0)
                why = nt_json_get_str(c, "reason", why);
        if (cJSON_GetArraySize(gpus) == 0)
            why = "no GPU found";
        cJSON *chk = nt_check_create(
            "inventory", host, "nvlinks", NT_NOT_JUDGED, NAN, r.expect.nvlinks, "links",
            "%d NVLinks per GPU expected; %s: not judged", r.expect.nvlinks, why);
        if (chk)
            cJSON_AddItemToArray(checks, chk);
    }
    free(judged);
}

