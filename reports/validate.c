/* `nettune report --validate`: structural checks that name the JSON path of every problem.
 *
 * Debian has no C library for JSON Schema, so nettune.report/1 is checked by a small
 * interpreter of the keywords reports/schema/report.schema.json uses; the schema text is
 * compiled into the binary (schema_blob.S), so the checks cannot drift from the schema file
 * and the binary needs no data file. The tests compare the problems found here with
 * python3-jsonschema's on good and broken files. nettune.tuning/1 is checked with the NCCL
 * tuner plugin's own parser of a rule (plugins/nccl-tuner/src/nt_tuning.c, compiled in), so
 * "valid" means "the plugin will take it"; reports/schema/tuning.schema.json describes the same
 * format for other tools. */
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nettune/log.h"
#include "render_watch.h"
#include "rpt.h"
#include "nt_tuning.h"     /* the plugin's definition of the rule format */
#include "doctor/doctor.h" /* the doctor's knowledge-base loader (--validate) */
#include "nettune/thresholds.h"

/* The schema texts, NUL-terminated, from schema_blob.S (the diagnosis one may be empty). */
extern const char nt_report_schema_json[];
extern const char nt_diagnosis_schema_json[];
extern const char nt_plugin_report_schema_json[];
extern const char nt_watch_schema_json[];
extern const char nt_history_schema_json[];

/* How --validate checks an id's documents. */
typedef enum {
    NT_VBY_SCHEMA,     /* the compiled-in JSON Schema (text) */
    NT_VBY_TUNING,     /* the rules the NCCL tuner plugin applies (nt_vtuning) */
    NT_VBY_THRESHOLDS, /* the probe's own parser (lib/core/thresholds.c) */
    NT_VBY_KB          /* the doctor's own loader (reports/doctor/kb.c) */
} nt_vby_t;

/* The one table of the schema ids nettune report knows: --validate dispatches on it, rendering
 * refuses what it does not mark as rendered, and every "known:" list and the --help text are
 * made from it, so that they cannot disagree. file: under reports/schema/ (NULL: the id has
 * none; its parser is the definition). */
static const struct nt_schema_entry {
    const char *id;
    const char *file; /* under reports/schema/; NULL: none, its parser is the definition */
    int renders;      /* nettune report FILE renders it */
    nt_vby_t by;
    const char *text; /* NT_VBY_SCHEMA: the compiled-in schema ("" when the tree had none) */
} nt_schema_table[] = {
    {NT_REPORT_SCHEMA, "report.schema.json", 1, NT_VBY_SCHEMA, nt_report_schema_json},
    {NT_TUNING_SCHEMA, "tuning.schema.json", 1, NT_VBY_TUNING, NULL},
    {NT_DIAGNOSIS_SCHEMA, "diagnosis.schema.json", 1, NT_VBY_SCHEMA, nt_diagnosis_schema_json},
    {NT_WATCH_SCHEMA, "watch.schema.json", 1, NT_VBY_SCHEMA, nt_watch_schema_json},
    {NT_HISTORY_SCHEMA, "history.schema.json", 0, NT_VBY_SCHEMA, nt_history_schema_json},
    {NT_PLUGIN_REPORT_SCHEMA, "plugin-report.schema.json", 0, NT_VBY_SCHEMA,
     nt_plugin_report_schema_json},
    {NT_THRESHOLDS_SCHEMA, NULL, 0, NT_VBY_THRESHOLDS, NULL},
    {NT_DOCTOR_KB_SCHEMA, NULL, 0, NT_VBY_KB, NULL},
};
#define NT_NSCHEMAS (sizeof(nt_schema_table) / sizeof(nt_schema_table[0]))

/* Whether --validate can check entry e: one checked by its JSON Schema needs the text
 * (nettune.diagnosis/1's is optional in the tree). */
static int nt_entry_validates(const struct nt_schema_entry *e)
{
    return e->by != NT_VBY_SCHEMA || e->text[0];
}

/* The entry of id, NULL when the table has none. */
static const struct nt_schema_entry *nt_schema_entry(const char *id)
{
    for (size_t i = 0; id && i < NT_NSCHEMAS; i++)
        if (strcmp(nt_schema_table[i].id, id) == 0)
            return &nt_schema_table[i];
    return NULL;
}

/* Whether nettune report FILE renders documents of id (rpt.h). */
int nt_schema_renders(const char *id)
{
    const struct nt_schema_entry *e = nt_schema_entry(id);
    return e && e->renders;
}

/* Whether --validate checks documents of id (rpt.h). */
int nt_schema_validates(const char *id)
{
    const struct nt_schema_entry *e = nt_schema_entry(id);
    return e && nt_entry_validates(e);
}

/* The ids rendered or validated, ", "-separated, in the table's order (rpt.h). */
const char *nt_schema_list(char *buf, size_t len, int rendered)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NT_NSCHEMAS; i++) {
        const struct nt_schema_entry *e = &nt_schema_table[i];
        if (rendered ? !e->renders : !nt_entry_validates(e))
            continue;
        int w = snprintf(buf + k, len - k, "%s%s", k ? ", " : "", e->id);
        if (w < 0 || (size_t)w >= len - k)
            break;
        k += (size_t)w;
    }
    return buf;
}

void nt_problems_cleanup(nt_problems_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free(p->v[i].path);
        free(p->v[i].message);
    }
    free(p->v);
    memset(p, 0, sizeof(*p));
}

static void nt_problem_vadd(nt_problems_t *p, int semantic, const char *path, const char *fmt,
                            va_list ap)
{
    char *msg = NULL, *pc;

    if (p->oom)
        return;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        nt_problem_t *v = realloc(p->v, cap * sizeof(*v));
        if (!v) {
            p->oom = 1;
            return;
        }
        p->v = v;
        p->cap = cap;
    }
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    if (msg && semantic) {
        char *m2 = NULL;
        if (asprintf(&m2, "%s (semantic)", msg) < 0)
            m2 = NULL;
        free(msg);
        msg = m2;
    }
    pc = strdup(path);
    if (!msg || !pc) {
        free(msg);
        free(pc);
        p->oom = 1;
        return;
    }
    p->v[p->n].path = pc;
    p->v[p->n].message = msg;
    p->v[p->n].semantic = semantic;
    p->n++;
}

static void nt_problem_add(nt_problems_t *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void nt_problem_add(nt_problems_t *p, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nt_problem_vadd(p, 0, path, fmt, ap);
    va_end(ap);
}

/* A problem found by the checks beyond the schema: its message ends in " (semantic)". */
static void nt_semantic_add(nt_problems_t *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void nt_semantic_add(nt_problems_t *p, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    nt_problem_vadd(p, 1, path, fmt, ap);
    va_end(ap);
}

/* ---- JSON paths ---- */

/* The path is kept in one buffer: a step appends ".key" or "[i]", and returns the old length
 * for nt_path_pop to cut back to. */
static size_t nt_path_key(nt_buf_t *path, const char *key)
{
    size_t old = path->len;
    int ident = (key[0] && !(key[0] >= '0' && key[0] <= '9'));

    for (const char *c = key; *c && ident; c++)
        ident = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                *c == '_';
    if (ident) {
        nt_buf_printf(path, ".%s", key);
        return old;
    }
    nt_buf_puts(path, "['");
    for (const char *c = key; *c; c++) {
        if (*c == '\'' || *c == '\\')
            nt_buf_put(path, "\\", 1);
        nt_buf_put(path, c, 1);
    }
    nt_buf_puts(path, "']");
    return old;
}

static size_t nt_path_index(nt_buf_t *path, int i)
{
    size_t old = path->len;
    nt_buf_printf(path, "[%d]", i);
    return old;
}

static void nt_path_pop(nt_buf_t *path, size_t old)
{
    if (path->data && old <= path->len) {
        path->len = old;
        path->data[old] = '\0';
    }
}

static const char *nt_path_str(const nt_buf_t *path)
{
    return path->data ? path->data : "$";
}

/* ---- the JSON Schema interpreter ---- */

typedef struct nt_regex_cache {
    const char *pattern;
    regex_t re;
    int ok;
} nt_regex_cache_t;

typedef struct nt_vctx {
    const cJSON *root_schema;
    nt_buf_t path;
    nt_regex_cache_t re[16];
    size_t nre;
    int depth;
} nt_vctx_t;

static const char *nt_json_type(const cJSON *v)
{
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsBool(v))
        return "boolean";
    if (cJSON_IsNumber(v))
        return v->valuedouble == floor(v->valuedouble) && isfinite(v->valuedouble) ? "integer"
                                                                                   : "number";
    if (cJSON_IsString(v))
        return "string";
    if (cJSON_IsArray(v))
        return "array";
    return "object";
}

static int nt_type_is(const cJSON *v, const char *type)
{
    if (strcmp(type, "number") == 0)
        return cJSON_IsNumber(v);
    if (strcmp(type, "integer") == 0)
        return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
               v->valuedouble == floor(v->valuedouble);
    if (strcmp(type, "string") == 0)
        return cJSON_IsString(v);
    if (strcmp(type, "object") == 0)
        return cJSON_IsObject(v);
    if (strcmp(type, "array") == 0)
        return cJSON_IsArray(v);
    if (strcmp(type, "boolean") == 0)
        return cJSON_IsBool(v);
    if (strcmp(type, "null") == 0)
        return cJSON_IsNull(v);
    return 0;
}

/* A value for a message: strings as is, anything else printed compactly (cut at 60 bytes). */
static void nt_value_text(const cJSON *v, char *buf, size_t len)
{
    char *p;
    if (cJSON_IsString(v)) {
        snprintf(buf, len, "\"%.60s\"", v->valuestring);
        return;
    }
    p = cJSON_PrintUnformatted(v);
    snprintf(buf, len, "%.60s", p ? p : "?");
    free(p);
}

static const regex_t *nt_regex(nt_vctx_t *cx, const char *pattern)
{
    char ere[512];
    size_t o = 0;

    for (size_t i = 0; i < cx->nre; i++)
        if (cx->re[i].pattern == pattern)
            return cx->re[i].ok ? &cx->re[i].re : NULL;
    if (cx->nre == sizeof(cx->re) / sizeof(cx->re[0]))
        return NULL;
    /* ECMA-262 to POSIX ERE for the constructs the schema uses: \d becomes [0-9]; \. and
     * classes, anchors, groups, {m,n} mean the same in both. */
    for (const char *c = pattern; *c && o + 8 < sizeof(ere); c++) {
        if (c[0] == '\\' && c[1] == 'd') {
            memcpy(ere + o, "[0-9]", 5);
            o += 5;
            c++;
        } else {
            ere[o++] = *c;
        }
    }
    ere[o] = '\0';
    cx->re[cx->nre].pattern = pattern;
    cx->re[cx->nre].ok = regcomp(&cx->re[cx->nre].re, ere, REG_EXTENDED | REG_NOSUB) == 0;
    if (!cx->re[cx->nre].ok)
        NT_ERROR(REPORT, "schema pattern '%s' is not a POSIX extended regular expression", pattern);
    return cx->re[cx->nre++].ok ? &cx->re[cx->nre - 1].re : NULL;
}

/* Code points in a UTF-8 string, as JSON Schema's minLength counts. */
static size_t nt_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

static const cJSON *nt_resolve_ref(const nt_vctx_t *cx, const char *ref)
{
    const cJSON *defs = cJSON_GetObjectItemCaseSensitive(cx->root_schema, "$defs");
    if (strncmp(ref, "#/$defs/", 8) != 0)
        return NULL;
    return cJSON_GetObjectItemCaseSensitive(defs, ref + 8);
}

static void nt_vnode(nt_vctx_t *cx, const cJSON *schema, const cJSON *inst, nt_problems_t *out);

static void nt_vtype(nt_vctx_t *cx, const cJSON *type, const cJSON *inst, nt_problems_t *out,
                     int *type_ok)
{
    const cJSON *t;
    char want[128] = "";

    if (cJSON_IsString(type)) {
        *type_ok = nt_type_is(inst, type->valuestring);
        snprintf(want, sizeof(want), "%s", type->valuestring);
    } else {
        *type_ok = 0;
        cJSON_ArrayForEach (t, type) {
            if (!cJSON_IsString(t))
                continue;
            *type_ok |= nt_type_is(inst, t->valuestring);
            snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
                     want[0] ? " or " : "", t->valuestring);
        }
    }
    if (!*type_ok)
        nt_problem_add(out, nt_path_str(&cx->path), "expected %s, got %s", want,
                       nt_json_type(inst));
}

static void nt_venum(nt_vctx_t *cx, const cJSON *en, const cJSON *inst, nt_problems_t *out)
{
    const cJSON *e;
    nt_buf_t list;
    char got[80];

    cJSON_ArrayForEach (e, en) {
        if (cJSON_Compare(e, inst, 1))
            return;
    }
    nt_buf_init(&list);
    cJSON_ArrayForEach (e, en) {
        char one[80];
        if (cJSON_IsString(e))
            snprintf(one, sizeof(one), "%s", e->valuestring);
        else
            nt_value_text(e, one, sizeof(one));
        nt_buf_printf(&list, "%s%s", list.len ? ", " : "", one);
    }
    nt_value_text(inst, got, sizeof(got));
    nt_problem_add(out, nt_path_str(&cx->path), "expected one of %s (got %s)",
                   list.data ? list.data : "", got);
    nt_buf_cleanup(&list);
}

static void nt_vobject(nt_vctx_t *cx, const cJSON *schema, const cJSON *inst, nt_problems_t *out)
{
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(schema, "required");
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *addl = cJSON_GetObjectItemCaseSensitive(schema, "additionalProperties");
    const cJSON *k, *m;

    cJSON_ArrayForEach (k, req) {
        if (cJSON_IsString(k) && !cJSON_GetObjectItemCaseSensitive(inst, k->valuestring))
            nt_problem_add(out, nt_path_str(&cx->path), "missing required key '%s'",
                           k->valuestring);
    }
    cJSON_ArrayForEach (m, inst) {
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(props, m->string);
        size_t old;
        if (!sub && !addl)
            continue;
        old = nt_path_key(&cx->path, m->string);
        if (sub)
            nt_vnode(cx, sub, m, out);
        else if (cJSON_IsFalse(addl))
            nt_problem_add(out, nt_path_str(&cx->path), "unexpected key");
        else if (cJSON_IsObject(addl))
            nt_vnode(cx, addl, m, out);
        nt_path_pop(&cx->path, old);
    }
}

static void nt_vanyof(nt_vctx_t *cx, const cJSON *any, const cJSON *inst, nt_problems_t *out)
{
    const cJSON *alt;
    nt_buf_t why;

    nt_buf_init(&why);
    cJSON_ArrayForEach (alt, any) {
        nt_problems_t sub = {0};
        nt_vnode(cx, alt, inst, &sub);
        if (sub.n == 0 && !sub.oom) {
            nt_problems_cleanup(&sub);
            nt_buf_cleanup(&why);
            return;
        }
        if (sub.n)
            nt_buf_printf(&why, "%s%s", why.len ? "; or " : "", sub.v[0].message);
        nt_problems_cleanup(&sub);
    }
    nt_problem_add(out, nt_path_str(&cx->path), "matches none of the allowed forms (%s)",
                   why.data ? why.data : "");
    nt_buf_cleanup(&why);
}

/* Keywords that carry no assertion. */
static int nt_annotation(const char *kw)
{
    static const char *const ann[] = {"$schema",     "$id",      "$defs",    "title",
                                      "description", "$comment", "default",  "examples",
                                      "deprecated",  "readOnly", "writeOnly"};
    for (size_t i = 0; i < sizeof(ann) / sizeof(ann[0]); i++)
        if (strcmp(kw, ann[i]) == 0)
            return 1;
    return 0;
}

static void nt_vnode(nt_vctx_t *cx, const cJSON *schema, const cJSON *inst, nt_problems_t *out)
{
    const cJSON *kw;
    int type_ok = 1;

    if (cJSON_IsTrue(schema))
        return;
    if (cJSON_IsFalse(schema)) {
        nt_problem_add(out, nt_path_str(&cx->path), "no value is allowed here");
        return;
    }
    if (++cx->depth > 64) { /* only a recursive schema gets here */
        cx->depth--;
        return;
    }
    cJSON_ArrayForEach (kw, schema) {
        const char *k = kw->string;
        if (strcmp(k, "type") == 0) {
            nt_vtype(cx, kw, inst, out, &type_ok);
        } else if (strcmp(k, "$ref") == 0) {
            const cJSON *target = nt_resolve_ref(cx, cJSON_IsString(kw) ? kw->valuestring : "");
            if (target)
                nt_vnode(cx, target, inst, out);
            else
                NT_ERROR(REPORT, "schema: cannot resolve $ref '%s'",
                         cJSON_IsString(kw) ? kw->valuestring : "?");
        } else if (strcmp(k, "const") == 0) {
            if (!cJSON_Compare(kw, inst, 1)) {
                char want[80], got[80];
                nt_value_text(kw, want, sizeof(want));
                nt_value_text(inst, got, sizeof(got));
                nt_problem_add(out, nt_path_str(&cx->path), "expected %s (got %s)", want, got);
            }
        } else if (strcmp(k, "enum") == 0) {
            nt_venum(cx, kw, inst, out);
        } else if (strcmp(k, "required") == 0 || strcmp(k, "properties") == 0 ||
                   strcmp(k, "additionalProperties") == 0) {
            /* handled together below, once per object */
        } else if (strcmp(k, "items") == 0) {
            if (cJSON_IsArray(inst)) {
                const cJSON *e;
                int i = 0;
                cJSON_ArrayForEach (e, inst) {
                    size_t old = nt_path_index(&cx->path, i++);
                    nt_vnode(cx, kw, e, out);
                    nt_path_pop(&cx->path, old);
                }
            }
        } else if (strcmp(k, "anyOf") == 0) {
            nt_vanyof(cx, kw, inst, out);
        } else if (strcmp(k, "minimum") == 0 || strcmp(k, "exclusiveMinimum") == 0 ||
                   strcmp(k, "maximum") == 0 || strcmp(k, "exclusiveMaximum") == 0) {
            if (cJSON_IsNumber(inst) && cJSON_IsNumber(kw)) {
                double x = inst->valuedouble, b = kw->valuedouble;
                int excl = k[0] == 'e', lower = strstr(k, "inimum") != NULL;
                int bad = lower ? (excl ? x <= b : x < b) : (excl ? x >= b : x > b);
                if (bad)
                    nt_problem_add(out, nt_path_str(&cx->path), "%.17g is not %s %.17g", x,
                                   lower ? (excl ? ">" : ">=") : (excl ? "<" : "<="), b);
            }
        } else if (strcmp(k, "minLength") == 0 || strcmp(k, "maxLength") == 0) {
            if (cJSON_IsString(inst) && cJSON_IsNumber(kw)) {
                size_t n = nt_utf8_len(inst->valuestring);
                if (k[1] == 'i' ? n < (size_t)kw->valuedouble : n > (size_t)kw->valuedouble)
                    nt_problem_add(out, nt_path_str(&cx->path), "string is %s than %g characters",
                                   k[1] == 'i' ? "shorter" : "longer", kw->valuedouble);
            }
        } else if (strcmp(k, "minItems") == 0 || strcmp(k, "maxItems") == 0) {
            if (cJSON_IsArray(inst) && cJSON_IsNumber(kw)) {
                int n = cJSON_GetArraySize(inst);
                if (k[1] == 'i' ? n < kw->valuedouble : n > kw->valuedouble)
                    nt_problem_add(out, nt_path_str(&cx->path), "array has %s than %g items",
                                   k[1] == 'i' ? "fewer" : "more", kw->valuedouble);
            }
        } else if (strcmp(k, "pattern") == 0) {
            if (cJSON_IsString(inst) && cJSON_IsString(kw)) {
                const regex_t *re = nt_regex(cx, kw->valuestring);
                if (re && regexec(re, inst->valuestring, 0, NULL, 0) != 0)
                    nt_problem_add(out, nt_path_str(&cx->path), "\"%.80s\" does not match %s",
                                   inst->valuestring, kw->valuestring);
            }
        } else if (!nt_annotation(k)) {
            /* An assertion this interpreter does not know would be silently ignored: say so.
             * The tests validate every fixture with stderr checked empty. */
            NT_ERROR(REPORT, "schema keyword '%s' is not supported by the validator", k);
        }
    }
    if (cJSON_IsObject(inst))
        nt_vobject(cx, schema, inst, out);
    (void)type_ok;
    cx->depth--;
}

/* Validate root against the compiled-in JSON Schema of table entry which. */
static nt_status_t nt_validate_schema(const cJSON *root, size_t which, nt_problems_t *out)
{
    static cJSON *schemas[NT_NSCHEMAS]; /* parsed once per process */
    cJSON *schema;
    nt_vctx_t cx;

    if (!schemas[which]) {
        schemas[which] = cJSON_Parse(nt_schema_table[which].text);
        if (!schemas[which]) {
            NT_ERROR(REPORT, "the built-in %s schema is not valid JSON",
                     nt_schema_table[which].id);
            return NT_ERR_PARSE;
        }
    }
    schema = schemas[which];
    memset(&cx, 0, sizeof(cx));
    cx.root_schema = schema;
    nt_buf_puts(&cx.path, "$");
    nt_vnode(&cx, schema, root, out);
    for (size_t i = 0; i < cx.nre; i++)
        if (cx.re[i].ok)
            regfree(&cx.re[i].re);
    nt_buf_cleanup(&cx.path);
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}

/* ---- nettune.report/1: what the schema cannot say ---- */

typedef struct nt_id_at {
    const char *id;
    int i;
} nt_id_at_t;

static int nt_id_at_cmp(const void *a, const void *b)
{
    const nt_id_at_t *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* $.links[j].id equal to an earlier $.links[i].id: diff and the renderers match links by id. */
static void nt_vsem_link_ids(const cJSON *links, nt_problems_t *out)
{
    int n = cJSON_GetArraySize(links), m = 0, i = 0;
    nt_id_at_t *v;
    int *first;
    const cJSON *l;

    if (!cJSON_IsArray(links) || n < 2)
        return;
    v = calloc((size_t)n, sizeof(*v));
    first = malloc((size_t)n * sizeof(*first));
    if (!v || !first) {
        free(v);
        free(first);
        out->oom = 1;
        return;
    }
    cJSON_ArrayForEach (l, links) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(l, "id");
        first[i] = -1;
        if (cJSON_IsObject(l) && cJSON_IsString(id))
            v[m++] = (nt_id_at_t){id->valuestring, i};
        i++;
    }
    qsort(v, (size_t)m, sizeof(*v), nt_id_at_cmp);
    for (int k = 1; k < m; k++) {
        if (strcmp(v[k].id, v[k - 1].id) == 0)
            first[v[k].i] = first[v[k - 1].i] >= 0 ? first[v[k - 1].i] : v[k - 1].i;
    }
    for (int k = 0; k < n; k++) {
        if (first[k] >= 0) {
            char path[48];
            snprintf(path, sizeof(path), "$.links[%d].id", k);
            nt_semantic_add(out, path, "duplicate of $.links[%d].id", first[k]);
        }
    }
    free(v);
    free(first);
}

/* A run that stopped early says what it did not do (the schema requires not_done, but cannot
 * tie its length to completed). */
static void nt_vsem_run(const cJSON *run, nt_problems_t *out)
{
    const cJSON *nd = cJSON_GetObjectItemCaseSensitive(run, "not_done");

    if (cJSON_IsObject(run) && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(run, "completed")) &&
        cJSON_IsArray(nd) && cJSON_GetArraySize(nd) == 0)
        nt_semantic_add(out, "$.run.not_done",
                        "empty, but run.completed is false (what was "
                        "not done?)");
    /* run.serialized is the opposite of run.concurrent_pairs (probes/run.c). */
    {
        const cJSON *ser = cJSON_GetObjectItemCaseSensitive(run, "serialized");
        const cJSON *con = cJSON_GetObjectItemCaseSensitive(run, "concurrent_pairs");
        if (cJSON_IsBool(ser) && cJSON_IsBool(con) && cJSON_IsTrue(ser) == cJSON_IsTrue(con))
            nt_semantic_add(out, "$.run.serialized",
                            "%s, but run.concurrent_pairs is %s too (pairs either ran one "
                            "after another or at the same time)",
                            cJSON_IsTrue(ser) ? "true" : "false",
                            cJSON_IsTrue(con) ? "true" : "false");
    }
}

static int nt_verdict_of(const cJSON *v)
{
    static const char *const names[] = {"pass", "warn", "fail", "skipped", "not_judged"};
    if (cJSON_IsString(v))
        for (int i = 0; i < NT_NVERDICTS; i++)
            if (strcmp(v->valuestring, names[i]) == 0)
                return i;
    return -1;
}

/* summary.verdict is the worst verdict of the links and checks (skipped aside), fail when
 * summary.failed_nodes names a node; summary.counts counts the links and checks (the fabric
 * section's checks too, and its not_judged lines as not judged) by verdict
 * (probes/judge/). Checked only where the values have their schema types. */
static void nt_vsem_summary(const cJSON *root, nt_problems_t *out)
{
    static const char *const names[] = {"pass", "warn", "fail", "skipped", "not_judged"};
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(root, "summary");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(summary, "counts");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes");
    const char *const lists[] = {"links", "checks"};
    char first[NT_NVERDICTS][48] = {"", "", "", "", ""};
    double cnt[NT_NVERDICTS];
    size_t tally[NT_NVERDICTS] = {0, 0, 0, 0, 0};
    int sv, nfn = cJSON_IsArray(fn) ? cJSON_GetArraySize(fn) : 0, tallied = 1;

    if (!cJSON_IsObject(summary))
        return;
    for (int k = 0; k < 2; k++) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, lists[k]), *it;
        int i = 0;
        if (!cJSON_IsArray(arr)) {
            tallied = 0;
            continue;
        }
        cJSON_ArrayForEach (it, arr) {
            int v = nt_verdict_of(cJSON_GetObjectItemCaseSensitive(it, "verdict"));
            if (v < 0) {
                tallied = 0; /* the schema names it */
            } else {
                tally[v]++;
                if (!first[v][0])
                    snprintf(first[v], sizeof(first[v]), "$.%s[%d].verdict", lists[k], i);
            }
            i++;
        }
    }
    /* the fabric judge's checks count as the others do (probes/judge/fabric_doc.c) */
    {
        const cJSON *fab = cJSON_GetObjectItemCaseSensitive(root, "fabric"), *it;
        int i = 0;
        cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "checks")) {
            int v = nt_verdict_of(cJSON_GetObjectItemCaseSensitive(it, "status"));
            if (v >= 0) {
                tally[v]++;
                if (!first[v][0])
                    snprintf(first[v], sizeof(first[v]), "$.fabric.checks[%d].status", i);
            }
            i++;
        }
        /* and each line of what it could not judge, once (summary.not_judged lists them) */
        cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(fab, "not_judged")) {
            tally[NT_NOT_JUDGED]++;
            if (!first[NT_NOT_JUDGED][0])
                snprintf(first[NT_NOT_JUDGED], sizeof(first[0]), "$.fabric.not_judged[0]");
        }
    }
    for (int v = 0; v < NT_NVERDICTS; v++) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(counts, names[v]);
        cnt[v] = cJSON_IsNumber(c) ? c->valuedouble : -1;
    }
    sv = nt_verdict_of(cJSON_GetObjectItemCaseSensitive(summary, "verdict"));
    if (sv == NT_PASS || sv == NT_WARN) {
        if (cnt[NT_FAIL] > 0)
            nt_semantic_add(out, "$.summary.verdict", "\"%s\" but $.summary.counts.fail is %g",
                            names[sv], cnt[NT_FAIL]);
        else if (first[NT_FAIL][0])
            nt_semantic_add(out, "$.summary.verdict", "\"%s\" but %s is \"fail\"", names[sv],
                            first[NT_FAIL]);
        else if (nfn > 0)
            nt_semantic_add(out, "$.summary.verdict",
                            "\"%s\" but $.summary.failed_nodes names "
                            "%d node%s",
                            names[sv], nfn, nfn == 1 ? "" : "s");
        else if (sv == NT_PASS && cnt[NT_WARN] > 0)
            nt_semantic_add(out, "$.summary.verdict", "\"pass\" but $.summary.counts.warn is %g",
                            cnt[NT_WARN]);
        else if (sv == NT_PASS && first[NT_WARN][0])
            nt_semantic_add(out, "$.summary.verdict", "\"pass\" but %s is \"warn\"",
                            first[NT_WARN]);
        else if (sv == NT_WARN && cnt[NT_WARN] <= 0 && !first[NT_WARN][0])
            nt_semantic_add(out, "$.summary.verdict",
                            "\"warn\" but no link or check warns "
                            "(counts.warn is %g)",
                            cnt[NT_WARN] < 0 ? 0 : cnt[NT_WARN]);
    } else if (sv == NT_FAIL && cnt[NT_FAIL] <= 0 && !first[NT_FAIL][0] && nfn == 0) {
        nt_semantic_add(out, "$.summary.verdict",
                        "\"fail\" but nothing failed (counts.fail is "
                        "%g, no link, check or failed node)",
                        cnt[NT_FAIL] < 0 ? 0 : cnt[NT_FAIL]);
    }
    if (!tallied || !cJSON_IsObject(counts))
        return;
    for (int v = 0; v < NT_NVERDICTS; v++) {
        char path[48];
        if (cnt[v] < 0 || cnt[v] == (double)tally[v])
            continue;
        snprintf(path, sizeof(path), "$.summary.counts.%s", names[v]);
        nt_semantic_add(out, path, "%g, but %zu links and checks have verdict \"%s\"", cnt[v],
                        tally[v], names[v]);
    }
}

/* nodes[].verdict and summary.failed_nodes agree (probes/judge/ computes both): a node named
 * there fails, and a failed node is named there. Nodes without a verdict (older reports) are
 * not checked. */
static void nt_vsem_nodes(const cJSON *root, nt_problems_t *out)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "summary"), "failed_nodes");
    const cJSON *n, *f;
    int i = 0;

    if (!cJSON_IsArray(nodes) || !cJSON_IsArray(fn))
        return;
    cJSON_ArrayForEach (n, nodes) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(n, "verdict");
        const char *h = nt_json_get_str(n, "hostname", NULL);
        int named = 0;
        char path[64];
        if (cJSON_IsString(v) && h) {
            cJSON_ArrayForEach (f, fn)
                named |= strcmp(nt_json_get_str(f, "host", ""), h) == 0;
            snprintf(path, sizeof(path), "$.nodes[%d].verdict", i);
            if (named && strcmp(v->valuestring, "fail") != 0)
                nt_semantic_add(out, path, "\"%s\" but $.summary.failed_nodes names %s",
                                v->valuestring, h);
            else if (!named && strcmp(v->valuestring, "fail") == 0)
                nt_semantic_add(out, path, "\"fail\" but $.summary.failed_nodes does not name %s",
                                h);
        }
        i++;
    }
}

/* Every host a link or summary.failed_nodes names is a node of nodes[] (probes/run.c lists
 * every node of the run there): a host named only elsewhere would make the renderers invent
 * a node (and Prometheus export a verdict for it). Checked where nodes[] is an array. */
static int nt_cmp_strp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void nt_vsem_hosts(const cJSON *root, nt_problems_t *out)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(root, "nodes");
    const cJSON *links = cJSON_GetObjectItemCaseSensitive(root, "links");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "summary"), "failed_nodes");
    static const char *const ends[] = {"src", "dst"};
    const cJSON *it;
    const char **hosts;
    size_t nh = 0;
    int i = 0;

    if (!cJSON_IsArray(nodes))
        return;
    hosts = malloc(((size_t)cJSON_GetArraySize(nodes) + 1) * sizeof(*hosts));
    if (!hosts) {
        out->oom = 1;
        return;
    }
    cJSON_ArrayForEach (it, nodes) {
        const char *h = nt_json_get_str(it, "hostname", NULL);
        if (h)
            hosts[nh++] = h;
    }
    qsort(hosts, nh, sizeof(*hosts), nt_cmp_strp);
    if (cJSON_IsArray(links)) {
        cJSON_ArrayForEach (it, links) {
            for (int e = 0; e < 2; e++) {
                const char *h =
                    nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, ends[e]), "host", NULL);
                char path[64];
                if (!h || bsearch(&h, hosts, nh, sizeof(*hosts), nt_cmp_strp))
                    continue;
                snprintf(path, sizeof(path), "$.links[%d].%s.host", i, ends[e]);
                nt_semantic_add(out, path, "link %s names host %s, which is not in $.nodes",
                                nt_json_get_str(it, "id", "?"), h);
            }
            i++;
        }
    }
    i = 0;
    if (cJSON_IsArray(fn)) {
        cJSON_ArrayForEach (it, fn) {
            const char *h = nt_json_get_str(it, "host", NULL);
            char path[64];
            if (h && !bsearch(&h, hosts, nh, sizeof(*hosts), nt_cmp_strp)) {
                snprintf(path, sizeof(path), "$.summary.failed_nodes[%d].host", i);
                nt_semantic_add(out, path, "host %s is not in $.nodes", h);
            }
            i++;
        }
    }
    free(hosts);
}

static void nt_vreport_semantic(const cJSON *root, nt_problems_t *out)
{
    nt_vsem_nodes(root, out);
    nt_vsem_hosts(root, out);
    nt_vsem_link_ids(cJSON_GetObjectItemCaseSensitive(root, "links"), out);
    nt_vsem_run(cJSON_GetObjectItemCaseSensitive(root, "run"), out);
    nt_vsem_summary(root, out);
}

/* ---- nettune.tuning/1, as the plugin reads it ---- */

/* One rule, checked key by key with the plugin's own definition of the format
 * (plugins/nccl-tuner/src/nt_tuning.c: nt_rule_keys, nt_tuning_rule_value), so that "valid"
 * means "the plugin takes it" and every problem of the rule is listed at its key. */
static void nt_vtuning_rule(const cJSON *r, int i, nt_problems_t *out)
{
    char path[64], kp[160], msg[NT_ERR_LEN];
    const cJSON *c;
    unsigned seen = 0;
    nt_rule_t rule;

    snprintf(path, sizeof(path), "$.rules[%d]", i);
    if (!cJSON_IsObject(r)) {
        nt_problem_add(out, path, "expected object, got %s", nt_json_type(r));
        return;
    }
    nt_tuning_rule_init(&rule, (uint32_t)i);
    cJSON_ArrayForEach (c, r) {
        int k = nt_tuning_rule_key(c->string);
        snprintf(kp, sizeof(kp), "%s.%.80s", path, c->string);
        if (k < 0) {
            nt_problem_add(out, kp, "unknown rule key (the tuner plugin rejects the file)");
            continue;
        }
        if (seen & (1u << k)) {
            nt_problem_add(out, kp, "duplicate key");
            continue;
        }
        seen |= 1u << k;
        if (nt_tuning_rule_value(k, c, &rule, msg, sizeof(msg))) {
            nt_problem_add(out, kp, "%s", msg);
            if (k == NT_RK_COLL)
                rule.coll = 0; /* reported at its key: not "required" too */
            if (k == NT_RK_ALGO)
                rule.algo = 0;
            if (k == NT_RK_PROTO)
                rule.proto = 0;
            if (k == NT_RK_NCHANNELS)
                rule.nchannels = 1;
        }
    }
    if (nt_tuning_rule_finish(&rule, msg, sizeof(msg)))
        nt_problem_add(out, path, "%s", msg);
}

static void nt_vtuning_table(const cJSON *a, const int *shape, int ndims, int depth, nt_buf_t *path,
                             nt_problems_t *out)
{
    const cJSON *c;
    int i = 0;

    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != shape[depth]) {
        nt_problem_add(out, nt_path_str(path), "expected an array of %d %s", shape[depth],
                       depth + 1 < ndims ? "arrays" : "numbers");
        return;
    }
    cJSON_ArrayForEach (c, a) {
        size_t old = nt_path_index(path, i++);
        if (depth + 1 < ndims)
            nt_vtuning_table(c, shape, ndims, depth + 1, path, out);
        else if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble) || c->valuedouble < 0)
            nt_problem_add(out, nt_path_str(path), "expected a finite non-negative number");
        nt_path_pop(path, old);
    }
}

static void nt_vtuning(const cJSON *root, nt_problems_t *out)
{
    const cJSON *completed = cJSON_GetObjectItemCaseSensitive(root, "completed");
    const cJSON *rules = cJSON_GetObjectItemCaseSensitive(root, "rules");
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "env");
    const cJSON *consts = cJSON_GetObjectItemCaseSensitive(root, "constants");
    const cJSON *c;
    int i = 0;

    if (!rules)
        nt_problem_add(out, "$", "missing required key 'rules'");
    else if (!cJSON_IsArray(rules))
        nt_problem_add(out, "$.rules", "expected array, got %s", nt_json_type(rules));
    else if (cJSON_GetArraySize(rules) > 65536)
        nt_problem_add(out, "$.rules", "more than 65536 rules (the tuner plugin's limit)");
    else
        cJSON_ArrayForEach (c, rules)
            nt_vtuning_rule(c, i++, out);
    if (completed && !cJSON_IsBool(completed))
        nt_problem_add(out, "$.completed", "expected boolean, got %s", nt_json_type(completed));
    if (env && !cJSON_IsObject(env)) {
        nt_problem_add(out, "$.env", "expected object, got %s", nt_json_type(env));
    } else if (env) {
        cJSON_ArrayForEach (c, env) {
            if (!cJSON_IsString(c)) {
                char p[160];
                snprintf(p, sizeof(p), "$.env.%.80s", c->string);
                nt_problem_add(out, p, "expected string, got %s", nt_json_type(c));
            }
        }
    }
    if (consts && !cJSON_IsObject(consts)) {
        nt_problem_add(out, "$.constants", "expected object, got %s", nt_json_type(consts));
        return;
    }
    cJSON_ArrayForEach (c, consts) {
        int ndims = 0, shape[3];
        int t = nt_tuning_const_table(c->string, &ndims, shape);
        nt_buf_t path;
        nt_buf_init(&path);
        nt_buf_puts(&path, "$.constants");
        nt_path_key(&path, c->string);
        if (t < 0)
            nt_problem_add(out, nt_path_str(&path), "unknown table");
        else if (!cJSON_IsNull(c))
            nt_vtuning_table(c, shape, ndims, 0, &path, out);
        nt_buf_cleanup(&path);
    }
}

nt_status_t nt_validate(const cJSON *root, nt_problems_t *out, const char **schema_id)
{
    const cJSON *schema;

    *schema_id = NULL;
    if (!cJSON_IsObject(root)) {
        nt_problem_add(out, "$", "expected object, got %s", nt_json_type(root));
        return out->oom ? NT_ERR_NOMEM : NT_OK;
    }
    schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!schema) {
        nt_problem_add(out, "$", "missing required key 'schema'");
    } else if (!cJSON_IsString(schema)) {
        nt_problem_add(out, "$.schema", "expected string, got %s", nt_json_type(schema));
    } else {
        size_t i = 0;
        while (i < NT_NSCHEMAS && (strcmp(schema->valuestring, nt_schema_table[i].id) != 0 ||
                                   !nt_entry_validates(&nt_schema_table[i])))
            i++;
        if (i == NT_NSCHEMAS) {
            char known[512];
            nt_problem_add(out, "$.schema", "unknown schema id \"%.80s\" (known: %s)",
                           schema->valuestring, nt_schema_list(known, sizeof(known), 0));
            return out->oom ? NT_ERR_NOMEM : NT_OK;
        }
        *schema_id = nt_schema_table[i].id;
        switch (nt_schema_table[i].by) {
        case NT_VBY_SCHEMA: {
            nt_status_t st = nt_validate_schema(root, i, out);
            /* a report's semantic checks, after the schema's problems */
            if (st == NT_OK && strcmp(*schema_id, NT_REPORT_SCHEMA) == 0)
                nt_vreport_semantic(root, out);
            return st == NT_OK && out->oom ? NT_ERR_NOMEM : st;
        }
        case NT_VBY_TUNING:
            nt_vtuning(root, out);
            break;
        case NT_VBY_THRESHOLDS: {
            char err[512] = "", *text = cJSON_PrintUnformatted(root);
            nt_thresholds_t *t = NULL;
            if (!text)
                return NT_ERR_NOMEM;
            if (nt_thresholds_parse(text, "thresholds", &t, err, sizeof(err)) != NT_OK)
                nt_problem_add(out, "$", "%s", err);
            nt_thresholds_destroy(t);
            free(text);
            break;
        }
        case NT_VBY_KB: {
            char err[512] = "";
            if (nt_kb_check_json(root, "knowledge base", err, sizeof(err)) != 0)
                nt_problem_add(out, "$", "%s", err);
            break;
        }
        }
    }
    return out->oom ? NT_ERR_NOMEM : NT_OK;
}
