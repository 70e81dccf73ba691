/* The GPU pass of the judge on a report (include/nettune/gpu.h nt_gpu_judge_report). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/gpu.h"
#include "nettune/report.h"

void nt_gpu_peer_class(char *buf, size_t len, const char *kind, const char *variant,
                       const char *path)
{
    snprintf(buf, len, "%s%s%s%s%s", kind, variant && *variant ? "." : "",
             variant && *variant ? variant : "", path && *path ? " " : "",
             path && *path ? path : "");
}

int nt_gpu_is_link_kind(const char *k)
{
    return strcmp(k, "pcie_h2d") == 0 || strcmp(k, "pcie_d2h") == 0 || strcmp(k, "p2p") == 0 ||
           strcmp(k, "gpu_local") == 0;
}

/* "gpu<i>" -> i, else -1. */
static int nt_gpu_ep(const cJSON *end)
{
    const char *d = nt_json_get_str(end, "device", "");
    char *e = NULL;
    long v;
    if (strncmp(d, "gpu", 3) != 0)
        return -1;
    v = strtol(d + 3, &e, 10);
    return e != d + 3 && !*e && v >= 0 && v < 4096 ? (int)v : -1;
}

static const char *nt_node_gpu_bus(const cJSON *doc, const char *host, int g)
{
    const cJSON *n;
    cJSON_ArrayForEach (n, cJSON_GetObjectItemCaseSensitive(doc, "nodes")) {
        const cJSON *x;
        if (strcmp(nt_json_get_str(n, "hostname", ""), host) != 0)
            continue;
        cJSON_ArrayForEach (x, cJSON_GetObjectItemCaseSensitive(n, "gpus"))
            if ((int)nt_json_get_num(x, "index", -1) == g)
                return nt_json_get_str(x, "pci_bus_id", "?");
    }
    return "?";
}

static void nt_add_unique(cJSON *l, const char *key, const char *s)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(l, key), *it;
    if (!a)
        a = nt_json_add_arr(l, key);
    cJSON_ArrayForEach (it, a)
        if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
            return;
    cJSON_AddItemToArray(a, cJSON_CreateString(s));
}

int nt_gpu_judge_report(cJSON *doc, cJSON *checks)
{
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links"), *l, *node;
    int total = 0;

    /* The judge runs again on every progress snapshot: start from the link engine's result. */
    cJSON_ArrayForEach (l, links)
        cJSON_DeleteItemFromObjectCaseSensitive(l, "blamed_on_gpu");
    for (int i = cJSON_GetArraySize(checks) - 1; i >= 0; i--) {
        const char *nm = nt_json_get_str(cJSON_GetArrayItem(checks, i), "name", "");
        if (strcmp(nm, "gpu_blame") == 0 || strcmp(nm, "gpu_links") == 0)
            cJSON_DeleteItemFromArray(checks, i);
    }

    cJSON_ArrayForEach (node, cJSON_GetObjectItemCaseSensitive(doc, "nodes")) {
        const char *host = nt_json_get_str(node, "hostname", "?");
        size_t n = 0, cap = 0, nfail = 0;
        int(*pairs)[2] = NULL, *failed = NULL, ng = 0, *blamed, *partners, *fails;
        cJSON **pl = NULL;
        char first[256] = "";

        cJSON_ArrayForEach (l, links) {
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(l, "src");
            const cJSON *dst = cJSON_GetObjectItemCaseSensitive(l, "dst");
            int a = nt_gpu_ep(src), b = nt_gpu_ep(dst);
            if (strcmp(nt_json_get_str(l, "kind", ""), "p2p") != 0 ||
                strcmp(nt_json_get_str(src, "host", ""), host) != 0 || a < 0 || b < 0 || a == b)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                pairs = realloc(pairs, cap * sizeof(*pairs));
                failed = realloc(failed, cap * sizeof(*failed));
                pl = realloc(pl, cap * sizeof(*pl));
                if (!pairs || !failed || !pl)
                    goto next;
            }
            pairs[n][0] = a;
            pairs[n][1] = b;
            failed[n] = strcmp(nt_json_get_str(l, "verdict", ""), "fail") == 0;
            pl[n++] = l;
            ng = a >= ng ? a + 1 : ng;
            ng = b >= ng ? b + 1 : ng;
        }
        if (n && ng) {
            blamed = calloc((size_t)ng * 3, sizeof(int));
            if (!blamed)
                goto next;
            partners = blamed + ng;
            fails = blamed + 2 * ng;
            if (nt_gpu_blame((const int(*)[2])pairs, failed, n, ng, blamed, partners, fails) > 0) {
                for (int g = 0; g < ng; g++) {
                    char why[256], gname[16];
                    if (!blamed[g])
                        continue;
                    total++;
                    snprintf(gname, sizeof(gname), "gpu%d", g);
                    snprintf(why, sizeof(why), "gpu%d (%s) fails with %d of %d partners", g,
                             nt_node_gpu_bus(doc, host, g), fails[g], partners[g]);
                    cJSON_AddItemToArray(checks,
                                         nt_check_create("gpu_blame", host, gname, NT_FAIL,
                                                         fails[g], 0, "partners", "%s", why));
                    for (size_t i = 0; i < n; i++) {
                        if (!failed[i] || (pairs[i][0] != g && pairs[i][1] != g))
                            continue;
                        cJSON_ReplaceItemInObjectCaseSensitive(pl[i], "verdict",
                                                               cJSON_CreateString("warn"));
                        if (!cJSON_GetObjectItemCaseSensitive(pl[i], "blamed_on_gpu"))
                            nt_json_add_str(pl[i], "blamed_on_gpu", gname);
                        nt_add_unique(pl[i], "judged_by", "gpu_blame");
                        nt_add_unique(pl[i], "reasons", why);
                    }
                }
            }
            free(blamed);
        }
        /* Failed GPU links fail their node. */
        cJSON_ArrayForEach (l, links) {
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(l, "src");
            if (!nt_gpu_is_link_kind(nt_json_get_str(l, "kind", "")) ||
                strcmp(nt_json_get_str(src, "host", ""), host) != 0 ||
                strcmp(nt_json_get_str(l, "verdict", ""), "fail") != 0)
                continue;
            if (!nfail++)
                snprintf(first, sizeof(first), "%s", nt_json_get_str(l, "id", "?"));
        }
        if (nfail)
            cJSON_AddItemToArray(
                checks, nt_check_create("gpu_links", host, "gpu", NT_FAIL, (double)nfail, 0,
                                        "links", "%zu GPU link%s fail%s (first: %s)", nfail,
                                        nfail == 1 ? "" : "s", nfail == 1 ? "s" : "", first));
    next:
        free(pairs);
        free(failed);
        free(pl);
    }
    return total;
}
