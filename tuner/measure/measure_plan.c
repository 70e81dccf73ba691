/* The plan reader of nettune-tune-measure (tuner/measure/measure.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "nettune/report.h"
#include "nt_tuning.h"
#include "tuner/model.h"

void nt_measure_plan_free(nt_measure_plan_t *plan)
{
    if (!plan)
        return;
    free(plan->shape);
    for (size_t i = 0; i < plan->nlaunches; i++) {
        for (size_t j = 0; j < plan->launch[i].nenv; j++)
            free(plan->launch[i].env[j]);
        free(plan->launch[i].env);
    }
    free(plan->launch);
    memset(plan, 0, sizeof(*plan));
}

static nt_status_t nt_bad(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s", what);
    return NT_ERR_INVALID;
}

/* A size's "chunks" (nt_measure_plan_read) into more candidates of sz; absent: nothing. */
static nt_status_t nt_plan_read_chunks(const cJSON *ck, int idx, size_t zi, nt_measure_size_t *sz,
                                       char *err, size_t errlen)
{
    if (!ck)
        return NT_OK;
    char m[256];
    int a = nt_model_algo_parse(nt_json_get_str(ck, "algo", "")),
        q = nt_model_proto_parse(nt_json_get_str(ck, "proto", ""));
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(ck, "chunk_bytes"), *v;
    if (a < 0 || q < 0 || !cJSON_IsArray(list)) {
        snprintf(m, sizeof(m),
                 "plan: shapes[%d].sizes[%zu].chunks needs a known algo and proto and a "
                 "chunk_bytes array (write it with nettune tune --plan-chunks)",
                 idx, zi);
        return nt_bad(err, errlen, m);
    }
    double pred = nt_json_get_num(ck, "predicted_us", 0);
    int have = 0;
    for (size_t i = 0; i < sz->ncand; i++)
        have |= sz->cand[i].algo == a && sz->cand[i].proto == q && !sz->cand[i].chunk_bytes;
    unsigned grain = nt_proto_grain_bytes(q);
    cJSON_ArrayForEach (v, list) {
        double b = cJSON_IsNumber(v) ? v->valuedouble : -1;
        if (!(b >= grain) || b > 2147483647.0 || b != (double)(unsigned)b || (unsigned)b % grain) {
            snprintf(m, sizeof(m),
                     "plan: shapes[%d].sizes[%zu].chunks: chunk size %.0f is not a positive "
                     "multiple of %s's grain of %u bytes",
                     idx, zi, b, nt_proto_name(q), grain);
            return nt_bad(err, errlen, m);
        }
        if (sz->ncand + 2 + !have >= NT_MEASURE_MAX_CANDS)
            break; /* slots stay for (algo, proto) itself and NCCL's own choice */
        sz->cand[sz->ncand++] = (nt_measure_cand_t){a, q, 0, 0, (unsigned)b, pred};
    }
    if (!have) /* the same choice with NCCL's chunk size: what a chunk size must beat */
        sz->cand[sz->ncand++] = (nt_measure_cand_t){a, q, 0, 0, 0, pred};
    return NT_OK;
}

static nt_status_t nt_read_shape(const cJSON *s, int idx, nt_measure_shape_t *sh, char *err,
                              size_t errlen)
{
    char m[256];
    sh->coll = nt_model_coll_parse(nt_json_get_str(s, "coll", ""));
    sh->nnodes = nt_json_get_int(s, "nnodes", 0);
    sh->nranks = nt_json_get_int(s, "nranks", 0);
    if (sh->coll < 0 || sh->nnodes < 1 || sh->nranks < sh->nnodes) {
        snprintf(m, sizeof(m),
                 "plan: shapes[%d] needs coll, nnodes >= 1 and nranks >= nnodes (write the plan "
                 "with nettune tune --plan-out)",
                 idx);
        return nt_bad(err, errlen, m);
    }
    const cJSON *sizes = cJSON_GetObjectItemCaseSensitive(s, "sizes"), *z;
    cJSON_ArrayForEach (z, sizes) {
        if (sh->nsizes == NT_MEASURE_MAX_SIZES) {
            snprintf(m, sizeof(m), "plan: shapes[%d] has more than %d sizes", idx,
                     NT_MEASURE_MAX_SIZES);
            return nt_bad(err, errlen, m);
        }
        nt_measure_size_t *sz = &sh->size[sh->nsizes];
        memset(sz, 0, sizeof(*sz));
        sz->bytes = nt_json_get_u64(z, "bytes", 0);
        if (!sz->bytes) {
            snprintf(m, sizeof(m), "plan: shapes[%d].sizes[%zu] needs bytes > 0", idx, sh->nsizes);
            return nt_bad(err, errlen, m);
        }
        const cJSON *cs = cJSON_GetObjectItemCaseSensitive(z, "candidates"), *c;
        cJSON_ArrayForEach (c, cs) {
            if (sz->ncand + 1 >= NT_MEASURE_MAX_CANDS)
                break; /* one slot stays for NCCL's own choice */
            nt_measure_cand_t *k = &sz->cand[sz->ncand];
            memset(k, 0, sizeof(*k));
            k->algo = nt_model_algo_parse(nt_json_get_str(c, "algo", ""));
            k->proto = nt_model_proto_parse(nt_json_get_str(c, "proto", ""));
            k->nchannels = nt_json_get_int(c, "nchannels", 0);
            k->predicted_us = nt_json_get_num(c, "predicted_us", 0);
            if (k->algo < 0 || k->proto < 0 || k->nchannels < 0) {
                snprintf(m, sizeof(m),
                         "plan: shapes[%d].sizes[%zu].candidates[%zu] needs a known algo and "
                         "proto",
                         idx, sh->nsizes, sz->ncand);
                return nt_bad(err, errlen, m);
            }
            sz->ncand++;
        }
        nt_status_t st = nt_plan_read_chunks(cJSON_GetObjectItemCaseSensitive(z, "chunks"), idx,
                                             sh->nsizes, sz, err, errlen);
        if (st != NT_OK)
            return st;
        /* NCCL's own choice, measured with nothing forced: the baseline of every size */
        sz->cand[sz->ncand].algo = sz->cand[sz->ncand].proto = -1;
        sz->cand[sz->ncand].is_default = 1;
        sz->ncand++;
        sh->nsizes++;
    }
    return NT_OK;
}

nt_status_t nt_measure_plan_from_json(const cJSON *doc, nt_measure_plan_t *plan, char *err,
                                      size_t errlen)
{
    memset(plan, 0, sizeof(*plan));
    const cJSON *shapes = cJSON_GetObjectItemCaseSensitive(doc, "shapes"), *s;
    if (strcmp(nt_json_get_str(doc, "schema", ""), "nettune.plan/1") || !cJSON_IsArray(shapes))
        return nt_bad(err, errlen,
                   "plan: not a nettune.plan/1 document (\"schema\" and a \"shapes\" array): "
                   "write it with nettune tune --plan-out");
    int n = cJSON_GetArraySize(shapes);
    if (n > NT_MEASURE_MAX_SHAPES)
        return nt_bad(err, errlen, "plan: more than 64 shapes");
    plan->shape = calloc(n ? (size_t)n : 1, sizeof(*plan->shape));
    if (!plan->shape)
        return NT_ERR_NOMEM;
    int i = 0;
    cJSON_ArrayForEach (s, shapes) {
        nt_status_t st = nt_read_shape(s, i++, &plan->shape[plan->nshapes], err, errlen);
        if (st != NT_OK) {
            nt_measure_plan_free(plan);
            return st;
        }
        plan->nshapes++;
    }
    const cJSON *cfgs = cJSON_GetObjectItemCaseSensitive(doc, "comm_configs"), *c;
    cJSON_ArrayForEach (c, cfgs) {
        if (plan->ncfg == NT_MEASURE_MAX_CONFIGS)
            break;
        nt_measure_comm_cfg_t *k = &plan->cfg[plan->ncfg++];
        k->min_ctas = nt_json_get_int(c, "min_ctas", -1);
        k->max_ctas = nt_json_get_int(c, "max_ctas", -1);
        k->cga_cluster_size = nt_json_get_int(c, "cga_cluster_size", -1);
        if ((k->min_ctas == 0 || k->max_ctas == 0) ||
            (k->min_ctas > 0 && k->max_ctas > 0 && k->min_ctas > k->max_ctas)) {
            nt_measure_plan_free(plan);
            return nt_bad(err, errlen,
                       "plan: comm_configs needs min_ctas <= max_ctas, both >= 1 (or absent)");
        }
    }
    if (!plan->ncfg) {
        plan->cfg[0] = (nt_measure_comm_cfg_t){-1, -1, -1};
        plan->ncfg = 1;
    }
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(doc, "launches"), *l;
    int nl = cJSON_GetArraySize(ls);
    if (nl > 0) {
        plan->launch = calloc((size_t)nl, sizeof(*plan->launch));
        if (!plan->launch) {
            nt_measure_plan_free(plan);
            return NT_ERR_NOMEM;
        }
    }
    cJSON_ArrayForEach (l, ls) {
        nt_measure_launch_t *k = &plan->launch[plan->nlaunches++];
        const cJSON *env = cJSON_GetObjectItemCaseSensitive(l, "env"), *e;
        int ne = cJSON_GetArraySize(env);
        k->env = calloc(ne ? (size_t)ne : 1, sizeof(char *));
        if (!k->env) {
            nt_measure_plan_free(plan);
            return NT_ERR_NOMEM;
        }
        cJSON_ArrayForEach (e, env) {
            if (!e->string || strncmp(e->string, "NCCL_", 5) || !cJSON_IsString(e)) {
                nt_measure_plan_free(plan);
                return nt_bad(err, errlen,
                           "plan: launches[].env holds NCCL_* names with string values only");
            }
            size_t len = strlen(e->string) + strlen(e->valuestring) + 2;
            char *kv = malloc(len);
            if (!kv) {
                nt_measure_plan_free(plan);
                return NT_ERR_NOMEM;
            }
            snprintf(kv, len, "%s=%s", e->string, e->valuestring);
            k->env[k->nenv++] = kv;
        }
    }
    return NT_OK;
}

nt_status_t nt_measure_plan_read(const char *path, nt_measure_plan_t *plan, char *err,
                                 size_t errlen)
{
    cJSON *doc = NULL;
    char why[160];
    nt_status_t st = nt_json_read_file_why(path, (size_t)64 << 20, &doc, why, sizeof(why));
    if (st != NT_OK) {
        snprintf(err, errlen, "--plan '%s': %s (give nettune tune --plan-out's file)",
                 path, why);
        return st;
    }
    st = nt_measure_plan_from_json(doc, plan, err, errlen);
    cJSON_Delete(doc);
    return st;
}
