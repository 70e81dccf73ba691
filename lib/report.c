/* JSON helpers and report building blocks on cJSON. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/log.h"
#include "nettune/report.h"

static const char *const nt_verdict_names[] = {"pass", "warn", "fail", "skipped", "not_judged"};

const char *nt_verdict_string(nt_verdict_t v)
{
    return (unsigned)v <= NT_NOT_JUDGED ? nt_verdict_names[v] : "unknown";
}

nt_status_t nt_verdict_parse(const char *s, nt_verdict_t *out)
{
    for (int i = 0; i <= NT_NOT_JUDGED; i++) {
        if (s && strcmp(s, nt_verdict_names[i]) == 0) {
            *out = (nt_verdict_t)i;
            return NT_OK;
        }
    }
    return NT_ERR_INVALID;
}

nt_verdict_t nt_verdict_worse(nt_verdict_t a, nt_verdict_t b)
{
    static const int rank[] = {
        [NT_SKIPPED] = 0, [NT_NOT_JUDGED] = 1, [NT_PASS] = 2, [NT_WARN] = 3, [NT_FAIL] = 4};
    return rank[a] >= rank[b] ? a : b;
}

nt_status_t nt_json_add_num(cJSON *obj, const char *key, double value)
{
    if (!isfinite(value))
        return cJSON_AddNullToObject(obj, key) ? NT_OK : NT_ERR_NOMEM;
    return cJSON_AddNumberToObject(obj, key, value) ? NT_OK : NT_ERR_NOMEM;
}

nt_status_t nt_json_add_str(cJSON *obj, const char *key, const char *value)
{
    if (!value)
        return cJSON_AddNullToObject(obj, key) ? NT_OK : NT_ERR_NOMEM;
    return cJSON_AddStringToObject(obj, key, value) ? NT_OK : NT_ERR_NOMEM;
}

nt_status_t nt_json_add_bool(cJSON *obj, const char *key, int value)
{
    return cJSON_AddBoolToObject(obj, key, value ? 1 : 0) ? NT_OK : NT_ERR_NOMEM;
}

cJSON *nt_json_add_obj(cJSON *obj, const char *key)
{
    return cJSON_AddObjectToObject(obj, key);
}

cJSON *nt_json_add_arr(cJSON *obj, const char *key)
{
    return cJSON_AddArrayToObject(obj, key);
}

/* Round to 4 significant decimals of the unit so reports stay small and diffable. */
static double nt_round(double v)
{
    if (!isfinite(v) || v == 0.0)
        return v;
    double mag = pow(10.0, 4 - (int)ceil(log10(fabs(v))));
    return round(v * mag) / mag;
}

nt_status_t nt_json_add_stats(cJSON *obj, const char *key, const nt_stats_t *s, double scale,
                              int with_p99)
{
    cJSON *o = cJSON_AddObjectToObject(obj, key);
    if (!o)
        return NT_ERR_NOMEM;
    if (nt_json_add_num(o, "min", nt_round(s->min * scale)) ||
        nt_json_add_num(o, "p50", nt_round(s->p50 * scale)) ||
        (with_p99 && nt_json_add_num(o, "p99", nt_round(s->p99 * scale))) ||
        nt_json_add_num(o, "max", nt_round(s->max * scale)))
        return NT_ERR_NOMEM;
    return NT_OK;
}

double nt_json_get_num(const cJSON *obj, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

const char *nt_json_get_str(const cJSON *obj, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

nt_status_t nt_json_read_file(const char *path, size_t max_bytes, cJSON **out)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    const char *errp;

    *out = NULL;
    if (!f) {
        int err = errno;
        NT_ERROR(REPORT, "cannot open '%s': %s", path, strerror(err));
        return err == ENOENT ? NT_ERR_NOT_FOUND : NT_ERR_IO;
    }
    buf = malloc(max_bytes + 1);
    if (!buf) {
        fclose(f);
        return NT_ERR_NOMEM;
    }
    n = fread(buf, 1, max_bytes + 1, f);
    if (ferror(f)) {
        NT_ERROR(REPORT, "cannot read '%s': %s", path, strerror(errno));
        fclose(f);
        free(buf);
        return NT_ERR_IO;
    }
    fclose(f);
    if (n > max_bytes) {
        NT_ERROR(REPORT, "'%s' is larger than %zu bytes: not a file this command reads", path,
                 max_bytes);
        free(buf);
        return NT_ERR_INVALID;
    }
    buf[n] = '\0';
    *out = cJSON_ParseWithOpts(buf, &errp, 1);
    if (!*out) {
        NT_ERROR(REPORT, "'%s' is not valid JSON (error near byte %ld)", path,
                 errp ? (long)(errp - buf) : -1L);
        free(buf);
        return NT_ERR_PARSE;
    }
    free(buf);
    return NT_OK;
}

nt_status_t nt_json_write_atomic(const cJSON *doc, const char *path)
{
    char *text = cJSON_Print(doc);
    size_t len;
    nt_status_t st;

    if (!text)
        return NT_ERR_NOMEM;
    len = strlen(text);
    text[len] = '\n'; /* the terminating NUL becomes the final newline */
    st = nt_output_write(path, text, len + 1);
    free(text);
    return st;
}

nt_status_t nt_link_id(char *buf, size_t len, const char *kind, const char *variant,
                       const char *src_host, const char *src_ep, const char *dst_host,
                       const char *dst_ep)
{
    int n;
    if (variant && *variant)
        n = snprintf(buf, len, "%s.%s:%s/%s->%s/%s", kind, variant, src_host, src_ep, dst_host,
                     dst_ep);
    else
        n = snprintf(buf, len, "%s:%s/%s->%s/%s", kind, src_host, src_ep, dst_host, dst_ep);
    return (n < 0 || (size_t)n >= len) ? NT_ERR_INVALID : NT_OK;
}

static cJSON *nt_check_base(const char *name, const char *host, const char *target, nt_verdict_t v)
{
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return NULL;
    if (nt_json_add_str(c, "name", name) || (host && nt_json_add_str(c, "host", host)) ||
        nt_json_add_str(c, "target", target ? target : "") ||
        nt_json_add_str(c, "verdict", nt_verdict_string(v))) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

cJSON *nt_check_create(const char *name, const char *host, const char *target, nt_verdict_t v,
                       double observed, double expected, const char *unit, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    cJSON *c = nt_check_base(name, host, target, v);

    if (!c)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if ((isfinite(observed) && nt_json_add_num(c, "observed", observed)) ||
        (isfinite(expected) && nt_json_add_num(c, "expected", expected)) ||
        (unit && nt_json_add_str(c, "unit", unit)) || nt_json_add_str(c, "message", msg)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

cJSON *nt_check_create_str(const char *name, const char *host, const char *target, nt_verdict_t v,
                           const char *observed, const char *expected, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    cJSON *c = nt_check_base(name, host, target, v);

    if (!c)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if ((observed && nt_json_add_str(c, "observed", observed)) ||
        (expected && nt_json_add_str(c, "expected", expected)) ||
        nt_json_add_str(c, "message", msg)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

nt_status_t nt_skipped_add(cJSON *skipped_arr, const char *probe, const char *reason)
{
    cJSON *s = cJSON_CreateObject();
    if (!s || nt_json_add_str(s, "probe", probe) || nt_json_add_str(s, "reason", reason) ||
        !cJSON_AddItemToArray(skipped_arr, s)) {
        cJSON_Delete(s);
        return NT_ERR_NOMEM;
    }
    return NT_OK;
}
