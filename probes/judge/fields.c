/* Small helpers every part of the judge calls: fields of the report's JSON objects, a host's
 * rules (thresholds and --expect), a host's node index. They sit below links.c, nodes.c, gpu.c
 * and judge.c so that those files call down to them and never to each other's helpers. */
#include <stdint.h>
#include <string.h>

#include "judge_int.h"

void nt_add_str_unique(cJSON *arr, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, arr)
        if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
            return;
    cJSON_AddItemToArray(arr, cJSON_CreateString(s));
}

cJSON *nt_arr(cJSON *obj, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    return a ? a : cJSON_AddArrayToObject(obj, key);
}

void nt_set_str(cJSON *obj, const char *key, const char *val)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    nt_json_add_str(obj, key, val);
}

nt_verdict_t nt_get_verdict(const cJSON *obj)
{
    nt_verdict_t v = NT_PASS;
    nt_verdict_parse(nt_json_get_str(obj, "verdict", "pass"), &v);
    return v;
}

const char *nt_node_gpu_model(const cJSON *node)
{
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "gpus"), 0);
    return g ? nt_json_get_str(g, "name", NULL) : NULL;
}

void nt_rules_for(const nt_judge_t *j, const char *host, const cJSON *node,
                         nt_node_rules_t *r)
{
    nt_thresholds_for_host(j->thresholds, host, node ? nt_node_gpu_model(node) : NULL, r);
    nt_expect_override(&r->expect, &j->expect_override);
}

int nt_node_index(const nt_figs_t *fs, const char *host)
{
    size_t i = nt_strmap_get(&fs->hostix, host);
    return i == SIZE_MAX ? -1 : (int)i;
}
