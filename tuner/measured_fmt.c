/* nettune.measured/1 points (tuner/measured_fmt.h). */
#include "measured_fmt.h"

#include <math.h>
#include <string.h>

#include "nettune/report.h"
#include "nt_tuning.h"
#include "tuner/model.h"

int nt_measured_point_parse(const cJSON *p, nt_tune_point_t *q)
{
    memset(q, 0, sizeof(*q));
    q->coll = nt_model_coll_parse(nt_json_get_str(p, "coll", ""));
    q->shape.nnodes = nt_json_get_int(p, "nnodes", 0);
    q->shape.nranks = nt_json_get_int(p, "nranks", 0);
    q->shape.ppn = q->shape.nnodes > 0 ? q->shape.nranks / q->shape.nnodes : 0;
    q->bytes = nt_json_get_u64(p, "bytes", 0);
    q->time_us = nt_json_get_num(p, "time_us", -1);
    q->spread = nt_json_get_num(p, "spread", 0);
    q->is_default = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "default"));
    const char *a = nt_json_get_str(p, "algo", NULL), *pr = nt_json_get_str(p, "proto", NULL);
    q->algo = a ? nt_model_algo_parse(a) : -1;
    q->proto = pr ? nt_model_proto_parse(pr) : -1;
    q->how = q->algo >= 0 ? NT_RAN_MEASURED : NT_RAN_UNKNOWN;
    q->src = -1;
    q->reg_buff = nt_json_get_int(p, "reg_buff", -1);
    double cb = nt_json_get_num(p, "chunk_bytes", 0);
    if (cb < 0 || cb > 2147483647.0 || cb != floor(cb) || (cb > 0 && (q->algo < 0 || q->proto < 0)))
        return -1;
    q->chunk_bytes = (unsigned)cb;
    if (q->coll < 0 || q->shape.nnodes < 1 || q->shape.nranks < 1 || q->bytes == 0 ||
        !(q->time_us > 0) || (!q->is_default && (q->algo < 0 || q->proto < 0)))
        return -1;
    return 0;
}

static double nt_r3(double v)
{
    return round(v * 1000) / 1000;
}

cJSON *nt_measured_point_json(const nt_tune_point_t *q)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "coll", nt_coll_name(q->coll));
    cJSON_AddNumberToObject(o, "nnodes", q->shape.nnodes);
    cJSON_AddNumberToObject(o, "nranks", q->shape.nranks);
    cJSON_AddNumberToObject(o, "bytes", (double)q->bytes);
    if (q->algo >= 0)
        cJSON_AddStringToObject(o, "algo", nt_algo_name(q->algo));
    if (q->proto >= 0)
        cJSON_AddStringToObject(o, "proto", nt_proto_name(q->proto));
    cJSON_AddNumberToObject(o, "time_us", nt_r3(q->time_us));
    cJSON_AddNumberToObject(o, "spread", nt_r3(q->spread));
    cJSON_AddBoolToObject(o, "default", q->is_default);
    if (q->reg_buff >= 0)
        cJSON_AddNumberToObject(o, "reg_buff", q->reg_buff);
    if (q->chunk_bytes)
        cJSON_AddNumberToObject(o, "chunk_bytes", q->chunk_bytes);
    return o;
}
