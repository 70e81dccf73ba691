/* Helpers shared by the probes. */
#include <math.h>

#include "probe_util.h"

const char *nt_scope_string(nt_scope_t s)
{
    return s == NT_SCOPE_INTER ? "inter" : "intra";
}

void nt_probe_locate(const nt_probe_t *p, int r, int *node, int *local_rank)
{
    *node = -1;
    *local_rank = -1;
    for (int n = 0; n < p->nnodes; n++) {
        for (int i = 0; i < p->nodes[n].nranks; i++) {
            if (p->nodes[n].ranks[i] == r) {
                *node = n;
                *local_rank = i;
                return;
            }
        }
    }
}

static cJSON *nt_endpoint(const char *host, int rank, const char *dev)
{
    cJSON *e = cJSON_CreateObject();
    if (!e || nt_json_add_str(e, "host", host) || nt_json_add_num(e, "rank", rank) ||
        nt_json_add_str(e, "device", dev)) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

cJSON *nt_probe_link_new(const char *kind, const char *variant, nt_scope_t scope,
                         const char *src_host, int src_rank, const char *src_ep,
                         const char *dst_host, int dst_rank, const char *dst_ep)
{
    char id[512];
    cJSON *l, *s, *d;

    if (nt_link_id(id, sizeof(id), kind, variant, src_host, src_ep, dst_host, dst_ep) != NT_OK)
        return NULL;
    l = cJSON_CreateObject();
    s = nt_endpoint(src_host, src_rank, src_ep);
    d = nt_endpoint(dst_host, dst_rank, dst_ep);
    if (!l || !s || !d)
        goto fail;
    if (nt_json_add_str(l, "id", id) || nt_json_add_str(l, "kind", kind) ||
        (variant && *variant && nt_json_add_str(l, "variant", variant)) ||
        nt_json_add_str(l, "scope", nt_scope_string(scope)))
        goto fail;
    if (!cJSON_AddItemToObject(l, "src", s)) {
        s = NULL;
        goto fail;
    }
    s = NULL;
    if (!cJSON_AddItemToObject(l, "dst", d)) {
        d = NULL;
        goto fail;
    }
    d = NULL;
    if (!nt_json_add_arr(l, "samples"))
        goto fail;
    return l;
fail:
    cJSON_Delete(s);
    cJSON_Delete(d);
    cJSON_Delete(l);
    return NULL;
}

static cJSON *nt_sample_new(cJSON *link, size_t bytes, unsigned iters)
{
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(link, "samples");
    cJSON *s = cJSON_CreateObject();
    if (!arr || !s || nt_json_add_num(s, "bytes", (double)bytes) ||
        nt_json_add_num(s, "iterations", iters) || !cJSON_AddItemToArray(arr, s)) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

static nt_status_t nt_set_num(cJSON *obj, const char *key, double v)
{
    cJSON *old = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (old) {
        cJSON_SetNumberValue(old, v);
        return NT_OK;
    }
    return nt_json_add_num(obj, key, v);
}

nt_status_t nt_probe_add_lat_sample(cJSON *link, size_t bytes, unsigned iters,
                                    const nt_stats_t *lat_s)
{
    cJSON *s = nt_sample_new(link, bytes, iters);
    double cur = nt_json_get_num(link, "small_msg_lat_bytes", INFINITY);
    if (!s || nt_json_add_stats(s, "lat_us", lat_s, 1e6, 1))
        return NT_ERR_NOMEM;
    /* The smallest latency size gives small_msg_lat_us. */
    if ((double)bytes < cur) {
        cJSON *v =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "lat_us"), "p50");
        if (nt_set_num(link, "small_msg_lat_us", v->valuedouble) ||
            nt_set_num(link, "small_msg_lat_bytes", (double)bytes))
            return NT_ERR_NOMEM;
    }
    return NT_OK;
}

nt_status_t nt_probe_add_bw_sample(cJSON *link, size_t bytes, unsigned iters,
                                   const nt_stats_t *bw_Bps)
{
    cJSON *s = nt_sample_new(link, bytes, iters);
    double cur = nt_json_get_num(link, "peak_bw_GBps", -1.0), p50;
    if (!s || nt_json_add_stats(s, "bw_GBps", bw_Bps, 1e-9, 0))
        return NT_ERR_NOMEM;
    p50 = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(s, "bw_GBps"), "p50")
              ->valuedouble;
    if (p50 > cur) {
        if (nt_set_num(link, "peak_bw_GBps", p50) ||
            nt_set_num(link, "peak_bw_bytes", (double)bytes))
            return NT_ERR_NOMEM;
    }
    return NT_OK;
}
