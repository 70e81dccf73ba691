/* JSON helpers and report building blocks on cJSON. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

const char *nt_verdict_judged_note(char *buf, size_t len, size_t npass, size_t nwarn, size_t nfail,
                                   size_t nnj)
{
    if (!len)
        return buf;
    if (npass + nwarn + nfail == 0)
        snprintf(buf, len, ", nothing judged");
    else if (nnj > 0)
        snprintf(buf, len, ", %zu not judged", nnj);
    else
        buf[0] = '\0';
    return buf;
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

int nt_json_get_int(const cJSON *obj, const char *key, int dflt)
{
    double d = nt_json_get_num(obj, key, NAN);
    /* INT_MIN - 1 < d < INT_MAX + 1: exactly the doubles whose truncation is an int */
    return d > (double)INT_MIN - 1 && d < (double)INT_MAX + 1 ? (int)d : dflt;
}

unsigned long long nt_json_get_u64(const cJSON *obj, const char *key, unsigned long long dflt)
{
    double d = nt_json_get_num(obj, key, NAN);
    return d > -1 && d < 0x1p64 ? (unsigned long long)d : dflt;
}

const char *nt_json_get_str(const cJSON *obj, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

/* Whether text (which cJSON rejected) is the beginning of a JSON document cut short: closing
 * its open string and brackets makes it parse (a cut after ':' gets a null, a trailing ','
 * is dropped). A cut inside a literal, number or escape reads as "not JSON". */
static int nt_json_truncated(const char *text, size_t len)
{
    char stack[256], *fixed;
    size_t depth = 0, o;
    int in_str = 0, esc = 0, ok;
    cJSON *j;

    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            if (depth == sizeof(stack))
                return 0;
            stack[depth++] = c == '{' ? '}' : ']';
        } else if (c == '}' || c == ']') {
            if (!depth || stack[depth - 1] != c)
                return 0;
            depth--;
        }
    }
    if (esc || (!in_str && !depth))
        return 0;
    fixed = malloc(len + depth + 8);
    if (!fixed)
        return 0;
    memcpy(fixed, text, len);
    o = len;
    if (in_str)
        fixed[o++] = '"';
    while (o && strchr(" \t\r\n", fixed[o - 1]))
        o--;
    if (o && fixed[o - 1] == ',')
        o--;
    else if (o && fixed[o - 1] == ':') {
        memcpy(fixed + o, "null", 4);
        o += 4;
    }
    while (depth)
        fixed[o++] = stack[--depth];
    fixed[o] = '\0';
    j = cJSON_Parse(fixed);
    ok = j != NULL;
    cJSON_Delete(j);
    free(fixed);
    return ok;
}

nt_status_t nt_json_parse_text(const char *text, size_t len, cJSON **out, char *why, size_t whylen)
{
    const char *end = NULL, *nul = memchr(text, '\0', len);
    int line = 1, col = 1;

    *out = NULL;
    if (why && whylen)
        why[0] = '\0';
    if (strspn(text, " \t\r\n") == len) {
        snprintf(why, whylen, "empty (%zu bytes%s), not JSON", len, len ? ", all white space" : "");
        return NT_ERR_PARSE;
    }
    if (nul) {
        snprintf(why, whylen, "not JSON (a NUL byte at byte %zu)", (size_t)(nul - text));
        return NT_ERR_PARSE;
    }
    *out = cJSON_ParseWithOpts(text, &end, 1);
    if (*out)
        return NT_OK;
    if (nt_json_truncated(text, len)) {
        snprintf(why, whylen, "truncated JSON (the text ends at byte %zu, inside the document)",
                 len);
        return NT_ERR_PARSE;
    }
    /* cJSON gives the failing position; line:column for people */
    for (const char *p = text; end && p < end && *p; p++) {
        if (*p == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    snprintf(why, whylen, "not valid JSON near line %d, column %d", line, col);
    return NT_ERR_PARSE;
}

nt_status_t nt_json_read_file_why(const char *path, size_t max_bytes, cJSON **out, char *why,
                                  size_t whylen)
{
    int is_stdin = strcmp(path, "-") == 0; /* "-": standard input */
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    char *buf = NULL, *grown;
    size_t n = 0, cap = 0;
    nt_status_t st;

    *out = NULL;
    if (why && whylen)
        why[0] = '\0';
    if (!f) {
        int err = errno;
        snprintf(why, whylen, "cannot open: %s", strerror(err));
        return err == ENOENT ? NT_ERR_NOT_FOUND : NT_ERR_IO;
    }
    struct stat sb;
    if (!is_stdin && fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(why, whylen, "cannot read: %s", strerror(EISDIR));
        fclose(f);
        return NT_ERR_IO;
    }
    /* Grown as read (a pipe delivers in pieces), up to max_bytes + 1 to see a larger file. */
    for (size_t got = 1; got > 0 && n <= max_bytes;) {
        if (n == cap) {
            size_t want = cap ? cap * 2 : 65536;
            if (want > max_bytes + 1)
                want = max_bytes + 1;
            if (!(grown = realloc(buf, want + 1))) {
                snprintf(why, whylen, "too large to hold in memory");
                st = NT_ERR_NOMEM;
                goto out;
            }
            buf = grown;
            cap = want;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    }
    if (ferror(f)) {
        snprintf(why, whylen, "cannot read: %s", strerror(errno));
        st = NT_ERR_IO;
        goto out;
    }
    if (n > max_bytes) {
        snprintf(why, whylen, "larger than %zu bytes: not a file this command reads", max_bytes);
        st = NT_ERR_INVALID;
        goto out;
    }
    if (!buf && !(buf = malloc(1))) {
        snprintf(why, whylen, "out of memory");
        st = NT_ERR_NOMEM;
        goto out;
    }
    buf[n] = '\0';
    st = nt_json_parse_text(buf, n, out, why, whylen);
out:
    if (!is_stdin)
        fclose(f);
    free(buf);
    return st;
}

nt_status_t nt_json_read_file(const char *path, size_t max_bytes, cJSON **out)
{
    char why[160];
    nt_status_t st = nt_json_read_file_why(path, max_bytes, out, why, sizeof(why));
    if (st != NT_OK)
        NT_ERROR(REPORT, "'%s': %s", path, why);
    return st;
}

nt_status_t nt_json_write_atomic(const cJSON *doc, const char *path)
{
    if (!doc)
        return NT_ERR_INVALID;
    return nt_output_write_fn(path, nt_json_fill, (void *)doc);
}

cJSON *nt_json_freeze(cJSON *obj)
{
    char *txt;
    cJSON *raw;
    if (!obj || cJSON_IsRaw(obj))
        return obj;
    txt = cJSON_PrintUnformatted(obj);
    raw = txt ? cJSON_CreateRaw(txt) : NULL;
    cJSON_free(txt);
    if (!raw)
        return NULL;
    cJSON_Delete(obj);
    return raw;
}

cJSON *nt_json_thaw(const cJSON *item)
{
    if (!item || !cJSON_IsRaw(item))
        return (cJSON *)item;
    return item->valuestring ? cJSON_Parse(item->valuestring) : NULL;
}

void nt_json_thaw_end(cJSON *item, cJSON *tree, int changed)
{
    if (!item || !tree || tree == item)
        return;
    if (changed && cJSON_IsRaw(item)) {
        char *txt = cJSON_PrintUnformatted(tree);
        if (txt) {
            cJSON_free(item->valuestring);
            item->valuestring = txt;
        }
    }
    cJSON_Delete(tree);
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

char *nt_failed_node_reason(const cJSON *failed_node, char *buf, size_t len)
{
    static const char prefix[] = "nettune:";
    const char *reason = nt_json_get_str(failed_node, "reason", "");
    const char *code = nt_json_get_str(failed_node, "code", NULL);

    if (!len)
        return buf;
    if (!code)
        snprintf(buf, len, "%s", reason);
    else
        snprintf(buf, len, "%s%s %s", prefix, code,
                 strncmp(reason, prefix, sizeof(prefix) - 1) ? reason : reason + sizeof(prefix) - 1);
    return buf;
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

const char *nt_bytes_str(char *buf, size_t len, unsigned long long bytes)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu %s", bytes, unit[u]);
    return buf;
}
