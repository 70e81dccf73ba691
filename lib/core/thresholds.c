/* Thresholds file (nettune.thresholds/1), built-in defaults, --expect and --require: reading
 * the rules (probes/judge/expect.c judges a node by them). The numbers and their sources are in
 * thresholds.h and docs/verdicts.md. */
#include "nettune/thresholds.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nettune/log.h"
#include "nettune/report.h"

/* What a class states, field by field: a field it leaves out falls back to the defaults. */
#define SET_EFF 0x1u
#define SET_MINBW 0x2u
#define SET_MAXLAT 0x4u
#define SET_BWR 0x1u
#define SET_LATR 0x2u
#define SET_MINPOP 0x4u
#define SET_TAILR 0x8u
#define SET_GPUS 0x1u
#define SET_NICS 0x2u
#define SET_RATE 0x4u
#define SET_PCIE 0x8u
#define SET_NVL 0x10u

#define TH_MAX_FILE (4u << 20)

typedef struct th_class {
    char name[64];
    char *regex_src; /* NULL when the class matches on gpu_model only */
    regex_t re;
    int have_re;
    char *gpu_model; /* NULL when not stated */
    nt_node_rules_t v;
    unsigned link_set[NT_KIND_COUNT];
    unsigned peer_set;
    unsigned expect_set;
} th_class_t;

struct nt_thresholds {
    nt_node_rules_t defaults;
    th_class_t *classes;
    int nclasses;
};

static const char *const kind_names[NT_KIND_COUNT] = {
    [NT_KIND_MPI] = "mpi",
    [NT_KIND_RDMA] = "rdma",
    [NT_KIND_PCIE_H2D] = "pcie_h2d",
    [NT_KIND_PCIE_D2H] = "pcie_d2h",
    [NT_KIND_P2P] = "p2p",
    [NT_KIND_NVLINK] = "nvlink",
    [NT_KIND_GPU_LOCAL] = "gpu_local",
};

const char *nt_link_kind_name(nt_link_kind_t kind)
{
    if ((int)kind < 0 || kind >= NT_KIND_COUNT)
        return "?";
    return kind_names[kind];
}

int nt_link_kind_parse(const char *name)
{
    if (!name)
        return -1;
    size_t len = strcspn(name, ".");
    for (int k = 0; k < NT_KIND_COUNT; k++)
        if (strlen(kind_names[k]) == len && strncmp(kind_names[k], name, len) == 0)
            return k;
    return -1;
}

/* ---- messages ---------------------------------------------------------------------------- */

/* Write "origin: msg" into err, or log it when the caller gave no buffer. */
static void nt_report_err(char *err, size_t errlen, const char *origin, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void nt_report_err(char *err, size_t errlen, const char *origin, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (err && errlen) {
        if (origin)
            snprintf(err, errlen, "%s: %s", origin, msg);
        else
            snprintf(err, errlen, "%s", msg);
    } else if (origin) {
        NT_ERROR(VERDICT, "%s: %s", origin, msg);
    } else {
        NT_ERROR(VERDICT, "%s", msg);
    }
}

static const char *nt_json_type_name(const cJSON *it)
{
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsBool(it))
        return "boolean";
    if (cJSON_IsNumber(it))
        return "number";
    if (cJSON_IsString(it))
        return "string";
    if (cJSON_IsArray(it))
        return "array";
    if (cJSON_IsObject(it))
        return "object";
    return "invalid";
}

/* ---- defaults ---------------------------------------------------------------------------- */

void nt_expect_init(nt_expect_t *e)
{
    e->gpus = -1;
    e->nics = -1;
    e->nic_rate_Gbps = NAN;
    e->pcie_gen = 0;
    e->pcie_width = 0;
    e->nvlinks = -1;
    e->gpu_model[0] = '\0';
    e->collective[0] = '\0';
    e->efficiency = NAN;
    e->error_efficiency = NAN;
    e->min_busbw_GBps = NAN;
}

int nt_expect_is_empty(const nt_expect_t *e)
{
    return !e || (e->gpus < 0 && e->nics < 0 && !(e->nic_rate_Gbps > 0) && e->pcie_gen <= 0 &&
                  e->nvlinks < 0);
}

void nt_expect_override(nt_expect_t *e, const nt_expect_t *over)
{
    if (!e || !over)
        return;
    if (over->gpus >= 0)
        e->gpus = over->gpus;
    if (over->nics >= 0)
        e->nics = over->nics;
    if (over->nic_rate_Gbps > 0)
        e->nic_rate_Gbps = over->nic_rate_Gbps;
    if (over->nvlinks >= 0)
        e->nvlinks = over->nvlinks;
    if (over->pcie_gen > 0) {
        e->pcie_gen = over->pcie_gen;
        e->pcie_width = over->pcie_width;
    }
    if (over->gpu_model[0])
        memcpy(e->gpu_model, over->gpu_model, sizeof(e->gpu_model));
    if (over->collective[0])
        memcpy(e->collective, over->collective, sizeof(e->collective));
    if (over->efficiency > 0)
        e->efficiency = over->efficiency;
    if (over->error_efficiency > 0)
        e->error_efficiency = over->error_efficiency;
    if (over->min_busbw_GBps > 0)
        e->min_busbw_GBps = over->min_busbw_GBps;
}

/* The built-in rules; the sources of these numbers are in thresholds.h and docs/verdicts.md. */
static void nt_builtin_rules(nt_node_rules_t *r)
{
    memset(r, 0, sizeof(*r));
    r->class_index = -1;
    for (int k = 0; k < NT_KIND_COUNT; k++)
        r->links[k] = (nt_link_rules_t){NAN, NAN, NAN};
    r->links[NT_KIND_RDMA].efficiency = 0.90;
    r->links[NT_KIND_RDMA].max_lat_us = 2.5;
    r->links[NT_KIND_PCIE_H2D].efficiency = 0.70;
    r->links[NT_KIND_PCIE_D2H].efficiency = 0.70;
    r->links[NT_KIND_NVLINK].efficiency = 0.74;
    r->links[NT_KIND_P2P].efficiency = 0.70;
    r->peer.bw_ratio = 0.93;
    r->peer.lat_ratio = 2.0;
    r->peer.tail_ratio = 10.0;
    r->peer.min_population = 5;
    nt_expect_init(&r->expect);
}

nt_status_t nt_thresholds_defaults(nt_thresholds_t **out)
{
    if (!out)
        return NT_ERR_INVALID;
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return NT_ERR_NOMEM;
    nt_builtin_rules(&(*out)->defaults);
    return NT_OK;
}

void nt_thresholds_destroy(nt_thresholds_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->nclasses; i++) {
        th_class_t *c = &t->classes[i];
        if (c->have_re)
            regfree(&c->re);
        free(c->regex_src);
        free(c->gpu_model);
    }
    free(t->classes);
    free(t);
}

/* ---- parsing ----------------------------------------------------------------------------- */

typedef struct pctx {
    const char *origin;
    char *err;
    size_t errlen;
} pctx_t;

#define PERR(ctx, ...) nt_report_err((ctx)->err, (ctx)->errlen, (ctx)->origin, __VA_ARGS__)

/* JSON path of a member, "classes[0].links" + "rdma"; a path too long for the buffer is cut,
 * which only shortens a message. */
static void nt_join_path(char *dst, size_t len, const char *parent, const char *key)
{
    int n = snprintf(dst, len, "%s.%s", parent, key);
    if (n < 0 || (size_t)n >= len)
        dst[len - 1] = '\0';
}

enum num_rule { R_RATIO01, R_GE1, R_POS, R_INT_GE0, R_INT_GE2 };

/* A number (or null = NaN when nullable) obeying rule; the error names the JSON path. */
static nt_status_t nt_get_num(pctx_t *ctx, const char *path, const cJSON *it, enum num_rule rule,
                           double *out)
{
    if (cJSON_IsNull(it)) {
        if (rule == R_INT_GE2) {
            PERR(ctx, "%s: expected an integer, got null", path);
            return NT_ERR_INVALID;
        }
        *out = NAN;
        return NT_OK;
    }
    if (!cJSON_IsNumber(it)) {
        PERR(ctx, "%s: expected a number or null, got %s", path, nt_json_type_name(it));
        return NT_ERR_INVALID;
    }
    double v = it->valuedouble;
    switch (rule) {
    case R_RATIO01:
        if (!(v > 0 && v <= 1)) {
            PERR(ctx, "%s: must be in (0, 1], got %g", path, v);
            return NT_ERR_INVALID;
        }
        break;
    case R_GE1:
        if (!(v >= 1)) {
            PERR(ctx, "%s: must be >= 1, got %g", path, v);
            return NT_ERR_INVALID;
        }
        break;
    case R_POS:
        if (!(v > 0)) {
            PERR(ctx, "%s: must be > 0, got %g", path, v);
            return NT_ERR_INVALID;
        }
        break;
    case R_INT_GE0:
    case R_INT_GE2:
        if (v != floor(v) || v < (rule == R_INT_GE0 ? 0 : 2) || v > 1e6) {
            PERR(ctx, "%s: must be an integer >= %d, got %g", path, rule == R_INT_GE0 ? 0 : 2, v);
            return NT_ERR_INVALID;
        }
        break;
    }
    *out = v;
    return NT_OK;
}

static int nt_is_comment_key(const char *k)
{
    return strcmp(k, "comment") == 0 || strcmp(k, "description") == 0;
}

/* More keys than this in one object is an error (nt_want_object). */
#define NT_THRESHOLDS_MAX_KEYS 64

static nt_status_t nt_want_object(pctx_t *ctx, const char *path, const cJSON *it)
{
    if (!cJSON_IsObject(it)) {
        PERR(ctx, "%s: expected an object, got %s", path, nt_json_type_name(it));
        return NT_ERR_INVALID;
    }
    /* JSON allows a key twice and cJSON keeps both: the second would silently win over the
     * first (a threshold changed by a pasted line). No valid object here has more than a dozen
     * keys, so the pairwise check is bounded by refusing larger objects first. */
    int n = cJSON_GetArraySize(it);
    if (n > NT_THRESHOLDS_MAX_KEYS) {
        PERR(ctx,
             "%s: %d keys, more than any object of nettune.thresholds/1 has: remove the "
             "unknown or repeated ones",
             path, n);
        return NT_ERR_INVALID;
    }
    for (const cJSON *a = it->child; a; a = a->next)
        for (const cJSON *b = it->child; b != a; b = b->next)
            if (a->string && b->string && strcmp(a->string, b->string) == 0) {
                if (strcmp(path, "$") == 0)
                    PERR(ctx, "%s: given twice: keep one", a->string);
                else
                    PERR(ctx, "%s.%s: given twice: keep one", path, a->string);
                return NT_ERR_INVALID;
            }
    return NT_OK;
}

/* "gen5x16" (case-insensitive) -> 5, 16. */
static int nt_parse_pcie(const char *s, int *gen, int *width)
{
    if (strncasecmp(s, "gen", 3) != 0)
        return -1;
    s += 3;
    char *end;
    errno = 0;
    long g = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X') || g < 1 || g > 6)
        return -1;
    s = end + 1;
    long w = strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return -1;
    if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16 && w != 32)
        return -1;
    *gen = (int)g;
    *width = (int)w;
    return 0;
}

static nt_status_t nt_parse_links(pctx_t *ctx, const char *path, const cJSON *obj,
                               nt_link_rules_t links[], unsigned set[])
{
    nt_status_t st = nt_want_object(ctx, path, obj);
    if (st != NT_OK)
        return st;
    const cJSON *kit;
    cJSON_ArrayForEach (kit, obj) {
        if (nt_is_comment_key(kit->string))
            continue;
        char kpath[320];
        nt_join_path(kpath, sizeof(kpath), path, kit->string);
        int k = -1;
        for (int i = 0; i < NT_KIND_COUNT; i++)
            if (strcmp(kit->string, kind_names[i]) == 0)
                k = i;
        if (k < 0) {
            PERR(ctx,
                 "%s: unknown link kind '%s' (valid: mpi, rdma, pcie_h2d, pcie_d2h, p2p, "
                 "nvlink, gpu_local)",
                 kpath, kit->string);
            return NT_ERR_INVALID;
        }
        if ((st = nt_want_object(ctx, kpath, kit)) != NT_OK)
            return st;
        const cJSON *f;
        cJSON_ArrayForEach (f, kit) {
            char fpath[400];
            nt_join_path(fpath, sizeof(fpath), kpath, f->string);
            if (strcmp(f->string, "efficiency") == 0) {
                st = nt_get_num(ctx, fpath, f, R_RATIO01, &links[k].efficiency);
                set[k] |= SET_EFF;
            } else if (strcmp(f->string, "min_bw_GBps") == 0) {
                st = nt_get_num(ctx, fpath, f, R_POS, &links[k].min_bw_GBps);
                set[k] |= SET_MINBW;
            } else if (strcmp(f->string, "max_lat_us") == 0) {
                st = nt_get_num(ctx, fpath, f, R_POS, &links[k].max_lat_us);
                set[k] |= SET_MAXLAT;
            } else if (!nt_is_comment_key(f->string)) {
                PERR(ctx, "%s: unknown key (valid: efficiency, min_bw_GBps, max_lat_us)", fpath);
                st = NT_ERR_INVALID;
            }
            if (st != NT_OK)
                return st;
        }
    }
    return NT_OK;
}

static nt_status_t nt_parse_peer(pctx_t *ctx, const char *path, const cJSON *obj,
                                 nt_peer_rules_t *p, unsigned *set)
{
    nt_status_t st = nt_want_object(ctx, path, obj);
    if (st != NT_OK)
        return st;
    const cJSON *f;
    cJSON_ArrayForEach (f, obj) {
        char fpath[320];
        nt_join_path(fpath, sizeof(fpath), path, f->string);
        if (strcmp(f->string, "bw_ratio") == 0) {
            st = nt_get_num(ctx, fpath, f, R_RATIO01, &p->bw_ratio);
            *set |= SET_BWR;
        } else if (strcmp(f->string, "lat_ratio") == 0) {
            st = nt_get_num(ctx, fpath, f, R_GE1, &p->lat_ratio);
            *set |= SET_LATR;
        } else if (strcmp(f->string, "tail_ratio") == 0) {
            st = nt_get_num(ctx, fpath, f, R_GE1, &p->tail_ratio);
            *set |= SET_TAILR;
        } else if (strcmp(f->string, "min_population") == 0) {
            double v = 0;
            st = nt_get_num(ctx, fpath, f, R_INT_GE2, &v);
            p->min_population = (int)v;
            *set |= SET_MINPOP;
        } else if (!nt_is_comment_key(f->string)) {
            PERR(ctx, "%s: unknown key (valid: bw_ratio, lat_ratio, tail_ratio, min_population)",
                 fpath);
            st = NT_ERR_INVALID;
        }
        if (st != NT_OK)
            return st;
    }
    return NT_OK;
}

static nt_status_t nt_parse_expect_obj(pctx_t *ctx, const char *path, const cJSON *obj,
                                       nt_expect_t *e, unsigned *set)
{
    nt_status_t st = nt_want_object(ctx, path, obj);
    if (st != NT_OK)
        return st;
    const cJSON *f;
    cJSON_ArrayForEach (f, obj) {
        char fpath[320];
        nt_join_path(fpath, sizeof(fpath), path, f->string);
        double v = NAN;
        if (strcmp(f->string, "gpus") == 0 || strcmp(f->string, "nics") == 0) {
            st = nt_get_num(ctx, fpath, f, R_INT_GE0, &v);
            int iv = isnan(v) ? -1 : (int)v;
            if (f->string[0] == 'g') {
                e->gpus = iv;
                *set |= SET_GPUS;
            } else {
                e->nics = iv;
                *set |= SET_NICS;
            }
        } else if (strcmp(f->string, "nvlinks") == 0) {
            st = nt_get_num(ctx, fpath, f, R_INT_GE0, &v);
            e->nvlinks = isnan(v) ? -1 : (int)v;
            *set |= SET_NVL;
        } else if (strcmp(f->string, "nic_rate_Gbps") == 0) {
            st = nt_get_num(ctx, fpath, f, R_POS, &e->nic_rate_Gbps);
            *set |= SET_RATE;
        } else if (strcmp(f->string, "pcie") == 0) {
            *set |= SET_PCIE;
            if (cJSON_IsNull(f)) {
                e->pcie_gen = e->pcie_width = 0;
            } else if (!cJSON_IsString(f) ||
                       nt_parse_pcie(f->valuestring, &e->pcie_gen, &e->pcie_width) != 0) {
                PERR(ctx,
                     "%s: expected a string like \"gen5x16\" (gen 1-6, width "
                     "1/2/4/8/16/32) or null",
                     fpath);
                st = NT_ERR_INVALID;
            }
        } else if (!nt_is_comment_key(f->string)) {
            PERR(ctx, "%s: unknown key (valid: gpus, nics, nic_rate_Gbps, pcie, nvlinks)", fpath);
            st = NT_ERR_INVALID;
        }
        if (st != NT_OK)
            return st;
    }
    return NT_OK;
}

/* Longest hostname_regex accepted: a host-name pattern is a few dozen characters. */
#define NT_REGEX_MAX_LEN 256
/* POSIX's smallest RE_DUP_MAX (limits.h): the largest portable bound of {m,n}. */
#define NT_REGEX_MAX_DUP 255

/* nt_regex_cost_refusal - why glibc's regcomp could take seconds or more on re, or NULL when it
 * cannot. glibc expands counted repeats into copies of the repeated tree, so a counted repeat
 * of a group that itself holds one costs the product of the bounds (a 200-character pattern of
 * that shape takes minutes), and runs of repetition operators ("+****", undefined in POSIX ERE,
 * XBD 9.4.6) took 9 s for a 40-character input found by fuzz-thresholds. Back-references
 * ("\1", a glibc extension) make matching exponential. Bracket expressions are skipped as one
 * atom ("[]a]" and "[[:digit:]]" included). Nothing else is judged: the rest is regcomp's. */
static const char *nt_regex_cost_refusal(const char *re)
{
    enum { MAX_DEPTH = 32 };
    int counted[MAX_DEPTH + 1] = {0}; /* per open group: a counted repeat inside it */
    int depth = 0, prev_quant = 0, atom_counted = 0, have_atom = 0;
    if (strlen(re) > NT_REGEX_MAX_LEN)
        return "longer than 256 characters";
    for (const char *p = re; *p; p++) {
        int quant = 0;
        switch (*p) {
        case '[': {
            const char *q = p + 1;
            if (*q == '^')
                q++;
            if (*q == ']')
                q++;
            while (*q && *q != ']') {
                if (q[0] == '[' && (q[1] == ':' || q[1] == '=' || q[1] == '.')) {
                    const char *end = strchr(q + 2, q[1]);
                    while (end && end[1] != ']')
                        end = strchr(end + 1, q[1]);
                    q = end ? end + 2 : q + 1;
                } else {
                    q++;
                }
            }
            if (!*q)
                return NULL; /* unterminated: regcomp says so */
            p = q;
            have_atom = 1, atom_counted = 0;
            break;
        }
        case '\\':
            if (p[1] >= '1' && p[1] <= '9')
                return "back-references (\\1-\\9) are not allowed";
            if (p[1])
                p++;
            have_atom = 1, atom_counted = 0;
            break;
        case '(':
            if (depth == MAX_DEPTH)
                return "groups nested more than 32 deep";
            counted[++depth] = 0;
            have_atom = 0;
            break;
        case ')':
            if (depth == 0) {
                have_atom = 1, atom_counted = 0;
                break;
            }
            atom_counted = counted[depth--];
            counted[depth] |= atom_counted;
            have_atom = 1;
            break;
        case '*':
        case '+':
        case '?':
            quant = 1;
            break;
        case '{':
            if (isdigit((unsigned char)p[1]) || p[1] == ',') {
                char *end;
                long lo = strtol(p + 1, &end, 10), hi = lo;
                if (*end == ',') {
                    end++;
                    if (isdigit((unsigned char)*end))
                        hi = strtol(end, &end, 10);
                }
                if (*end != '}')
                    return NULL; /* malformed: regcomp says so */
                if (lo > NT_REGEX_MAX_DUP || hi > NT_REGEX_MAX_DUP)
                    return "a {m,n} bound above 255";
                if (have_atom && atom_counted)
                    return "a counted repeat {m,n} of a group that holds one";
                counted[depth] = 1;
                p = end;
                quant = 1;
            } else {
                have_atom = 1, atom_counted = 0;
            }
            break;
        default:
            have_atom = 1, atom_counted = 0;
            break;
        }
        if (quant && prev_quant)
            return "two repetition operators in a row (undefined in POSIX ERE)";
        prev_quant = quant;
    }
    return NULL;
}

static nt_status_t nt_parse_match(pctx_t *ctx, const char *path, const cJSON *obj, th_class_t *c)
{
    nt_status_t st = nt_want_object(ctx, path, obj);
    if (st != NT_OK)
        return st;
    const cJSON *f;
    cJSON_ArrayForEach (f, obj) {
        char fpath[320];
        nt_join_path(fpath, sizeof(fpath), path, f->string);
        if (strcmp(f->string, "hostname_regex") == 0 || strcmp(f->string, "gpu_model") == 0) {
            if (!cJSON_IsString(f) || f->valuestring[0] == '\0') {
                PERR(ctx, "%s: expected a non-empty string, got %s", fpath,
                     cJSON_IsString(f) ? "\"\"" : nt_json_type_name(f));
                return NT_ERR_INVALID;
            }
            char **dst = f->string[0] == 'h' ? &c->regex_src : &c->gpu_model;
            free(*dst);
            *dst = strdup(f->valuestring);
            if (!*dst)
                return NT_ERR_NOMEM;
        } else if (!nt_is_comment_key(f->string)) {
            PERR(ctx, "%s: unknown key (valid: hostname_regex, gpu_model)", fpath);
            return NT_ERR_INVALID;
        }
    }
    if (!c->regex_src && !c->gpu_model) {
        PERR(ctx, "%s: needs hostname_regex or gpu_model", path);
        return NT_ERR_INVALID;
    }
    if (c->have_re) {
        /* "match" given twice in one class (JSON allows duplicate keys): the last one wins,
         * and the regex of the first is freed (found by fuzz-thresholds). */
        regfree(&c->re);
        c->have_re = 0;
    }
    if (c->regex_src) {
        const char *refusal = nt_regex_cost_refusal(c->regex_src);
        if (refusal) {
            PERR(ctx, "%s.hostname_regex: refused: %s; write a simpler pattern", path, refusal);
            return NT_ERR_INVALID;
        }
        int rc = regcomp(&c->re, c->regex_src, REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char why[128];
            regerror(rc, &c->re, why, sizeof(why));
            PERR(ctx, "%s.hostname_regex: bad regex '%s': %s", path, c->regex_src, why);
            return NT_ERR_INVALID;
        }
        c->have_re = 1;
    }
    return NT_OK;
}

static nt_status_t nt_parse_class(pctx_t *ctx, const char *path, const cJSON *obj, th_class_t *c)
{
    nt_status_t st = nt_want_object(ctx, path, obj);
    if (st != NT_OK)
        return st;
    nt_builtin_rules(&c->v); /* values only matter where a SET_ bit says the class states them */
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
    if (!cJSON_IsString(name) || name->valuestring[0] == '\0' ||
        strlen(name->valuestring) >= sizeof(c->name)) {
        PERR(ctx, "%s.name: expected a non-empty string of at most %zu characters", path,
             sizeof(c->name) - 1);
        return NT_ERR_INVALID;
    }
    snprintf(c->name, sizeof(c->name), "%s", name->valuestring);
    const cJSON *match = cJSON_GetObjectItemCaseSensitive(obj, "match");
    if (!match) {
        PERR(ctx, "%s.match: missing", path);
        return NT_ERR_INVALID;
    }
    const cJSON *f;
    cJSON_ArrayForEach (f, obj) {
        char fpath[320];
        nt_join_path(fpath, sizeof(fpath), path, f->string);
        if (strcmp(f->string, "name") == 0 || nt_is_comment_key(f->string))
            continue;
        if (strcmp(f->string, "match") == 0)
            st = nt_parse_match(ctx, fpath, f, c);
        else if (strcmp(f->string, "expect") == 0)
            st = nt_parse_expect_obj(ctx, fpath, f, &c->v.expect, &c->expect_set);
        else if (strcmp(f->string, "links") == 0)
            st = nt_parse_links(ctx, fpath, f, c->v.links, c->link_set);
        else if (strcmp(f->string, "peer") == 0)
            st = nt_parse_peer(ctx, fpath, f, &c->v.peer, &c->peer_set);
        else {
            PERR(ctx, "%s: unknown key (valid: name, match, expect, links, peer)", fpath);
            st = NT_ERR_INVALID;
        }
        if (st != NT_OK)
            return st;
    }
    return NT_OK;
}

static nt_status_t nt_parse_doc(pctx_t *ctx, const cJSON *doc, nt_thresholds_t *t)
{
    nt_status_t st = nt_want_object(ctx, "$", doc);
    if (st != NT_OK)
        return st;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
    if (!schema) {
        PERR(ctx, "schema: missing, expected \"%s\"", NT_THRESHOLDS_SCHEMA);
        return NT_ERR_INVALID;
    }
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, NT_THRESHOLDS_SCHEMA) != 0) {
        PERR(ctx, "schema: unknown schema %s%s%s, expected \"%s\"",
             cJSON_IsString(schema) ? "\"" : "",
             cJSON_IsString(schema) ? schema->valuestring : nt_json_type_name(schema),
             cJSON_IsString(schema) ? "\"" : "", NT_THRESHOLDS_SCHEMA);
        return NT_ERR_INVALID;
    }
    /* defaults first: classes fall back to them, whatever the key order in the file */
    const cJSON *defs = cJSON_GetObjectItemCaseSensitive(doc, "defaults");
    if (defs) {
        if ((st = nt_want_object(ctx, "defaults", defs)) != NT_OK)
            return st;
        const cJSON *f;
        cJSON_ArrayForEach (f, defs) {
            char fpath[320];
            unsigned dummy[NT_KIND_COUNT] = {0};
            nt_join_path(fpath, sizeof(fpath), "defaults", f->string);
            if (nt_is_comment_key(f->string))
                continue;
            if (strcmp(f->string, "links") == 0)
                st = nt_parse_links(ctx, fpath, f, t->defaults.links, dummy);
            else if (strcmp(f->string, "peer") == 0)
                st = nt_parse_peer(ctx, fpath, f, &t->defaults.peer, dummy);
            else if (strcmp(f->string, "expect") == 0)
                st = nt_parse_expect_obj(ctx, fpath, f, &t->defaults.expect, dummy);
            else {
                PERR(ctx, "%s: unknown key (valid: links, peer, expect)", fpath);
                st = NT_ERR_INVALID;
            }
            if (st != NT_OK)
                return st;
        }
    }
    const cJSON *f;
    cJSON_ArrayForEach (f, doc) {
        if (strcmp(f->string, "schema") == 0 || strcmp(f->string, "defaults") == 0 ||
            strcmp(f->string, "classes") == 0 || nt_is_comment_key(f->string))
            continue;
        PERR(ctx, "%s: unknown key (valid: schema, classes, defaults)", f->string);
        return NT_ERR_INVALID;
    }
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(doc, "classes");
    if (!classes)
        return NT_OK;
    if (!cJSON_IsArray(classes)) {
        PERR(ctx, "classes: expected an array, got %s", nt_json_type_name(classes));
        return NT_ERR_INVALID;
    }
    int n = cJSON_GetArraySize(classes);
    if (n == 0)
        return NT_OK;
    t->classes = calloc((size_t)n, sizeof(*t->classes));
    if (!t->classes)
        return NT_ERR_NOMEM;
    const cJSON *c;
    int i = 0;
    cJSON_ArrayForEach (c, classes) {
        char cpath[64];
        snprintf(cpath, sizeof(cpath), "classes[%d]", i);
        t->nclasses = i + 1; /* so destroy frees what this class allocated, even on error */
        if ((st = nt_parse_class(ctx, cpath, c, &t->classes[i])) != NT_OK)
            return st;
        for (int j = 0; j < i; j++)
            if (strcmp(t->classes[j].name, t->classes[i].name) == 0) {
                PERR(ctx, "%s.name: \"%s\" is also the name of classes[%d]", cpath,
                     t->classes[i].name, j);
                return NT_ERR_INVALID;
            }
        i++;
    }
    return NT_OK;
}

static nt_status_t nt_thresholds_from_doc(pctx_t *ctx, cJSON *doc, nt_thresholds_t **out);

nt_status_t nt_thresholds_parse(const char *text, const char *origin, nt_thresholds_t **out,
                                char *err, size_t errlen)
{
    pctx_t ctx = {origin ? origin : "thresholds", err, errlen};
    if (err && errlen)
        err[0] = '\0';
    if (!out || !text) {
        PERR(&ctx, "no thresholds text");
        return NT_ERR_INVALID;
    }
    *out = NULL;
    char why[160];
    cJSON *doc = NULL;
    if (nt_json_parse_text(text, strlen(text), &doc, why, sizeof(why)) != NT_OK) {
        PERR(&ctx, "%s", why);
        return NT_ERR_PARSE;
    }
    return nt_thresholds_from_doc(&ctx, doc, out);
}

/* The thresholds of a parsed document (consumed). */
static nt_status_t nt_thresholds_from_doc(pctx_t *ctx, cJSON *doc, nt_thresholds_t **out)
{
    nt_thresholds_t *t = NULL;
    nt_status_t st = nt_thresholds_defaults(&t);
    if (st == NT_OK)
        st = nt_parse_doc(ctx, doc, t);
    cJSON_Delete(doc);
    if (st != NT_OK) {
        nt_thresholds_destroy(t);
        return st;
    }
    *out = t;
    return NT_OK;
}

nt_status_t nt_thresholds_load(const char *path, nt_thresholds_t **out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!path || !out) {
        nt_report_err(err, errlen, NULL, "no thresholds file named");
        return NT_ERR_INVALID;
    }
    *out = NULL;
    char why[160];
    cJSON *doc = NULL;
    nt_status_t st = nt_json_read_file_why(path, TH_MAX_FILE, &doc, why, sizeof(why));
    if (st != NT_OK) {
        nt_report_err(err, errlen, path, "%s", why);
        return st;
    }
    pctx_t ctx = {path, err, errlen};
    return nt_thresholds_from_doc(&ctx, doc, out);
}

/* ---- writing ----------------------------------------------------------------------------- */

static nt_status_t nt_add_num_or_null(cJSON *obj, const char *key, double v)
{
    cJSON *it = isnan(v) ? cJSON_AddNullToObject(obj, key) : cJSON_AddNumberToObject(obj, key, v);
    return it ? NT_OK : NT_ERR_NOMEM;
}

/* links/peer/expect objects; mask bits select the fields (all bits = every field). */
static nt_status_t nt_write_links(cJSON *parent, const nt_link_rules_t links[],
                                  const unsigned set[])
{
    int any = 0;
    for (int k = 0; k < NT_KIND_COUNT; k++)
        any |= set[k] != 0;
    if (!any)
        return NT_OK;
    cJSON *lo = cJSON_AddObjectToObject(parent, "links");
    if (!lo)
        return NT_ERR_NOMEM;
    for (int k = 0; k < NT_KIND_COUNT; k++) {
        if (!set[k])
            continue;
        cJSON *ko = cJSON_AddObjectToObject(lo, kind_names[k]);
        if (!ko)
            return NT_ERR_NOMEM;
        if ((set[k] & SET_EFF) && nt_add_num_or_null(ko, "efficiency", links[k].efficiency))
            return NT_ERR_NOMEM;
        if ((set[k] & SET_MINBW) && nt_add_num_or_null(ko, "min_bw_GBps", links[k].min_bw_GBps))
            return NT_ERR_NOMEM;
        if ((set[k] & SET_MAXLAT) && nt_add_num_or_null(ko, "max_lat_us", links[k].max_lat_us))
            return NT_ERR_NOMEM;
    }
    return NT_OK;
}

static nt_status_t nt_write_peer(cJSON *parent, const nt_peer_rules_t *p, unsigned set)
{
    if (!set)
        return NT_OK;
    cJSON *po = cJSON_AddObjectToObject(parent, "peer");
    if (!po)
        return NT_ERR_NOMEM;
    if ((set & SET_BWR) && nt_add_num_or_null(po, "bw_ratio", p->bw_ratio))
        return NT_ERR_NOMEM;
    if ((set & SET_LATR) && nt_add_num_or_null(po, "lat_ratio", p->lat_ratio))
        return NT_ERR_NOMEM;
    if ((set & SET_TAILR) && nt_add_num_or_null(po, "tail_ratio", p->tail_ratio))
        return NT_ERR_NOMEM;
    if ((set & SET_MINPOP) && !cJSON_AddNumberToObject(po, "min_population", p->min_population))
        return NT_ERR_NOMEM;
    return NT_OK;
}

static nt_status_t nt_write_expect(cJSON *parent, const nt_expect_t *e, unsigned set)
{
    if (!set)
        return NT_OK;
    cJSON *eo = cJSON_AddObjectToObject(parent, "expect");
    if (!eo)
        return NT_ERR_NOMEM;
    if ((set & SET_GPUS) && nt_add_num_or_null(eo, "gpus", e->gpus < 0 ? NAN : e->gpus))
        return NT_ERR_NOMEM;
    if ((set & SET_NICS) && nt_add_num_or_null(eo, "nics", e->nics < 0 ? NAN : e->nics))
        return NT_ERR_NOMEM;
    if ((set & SET_RATE) && nt_add_num_or_null(eo, "nic_rate_Gbps", e->nic_rate_Gbps))
        return NT_ERR_NOMEM;
    if ((set & SET_NVL) && nt_add_num_or_null(eo, "nvlinks", e->nvlinks < 0 ? NAN : e->nvlinks))
        return NT_ERR_NOMEM;
    if (set & SET_PCIE) {
        cJSON *it;
        if (e->pcie_gen > 0) {
            char s[32];
            snprintf(s, sizeof(s), "gen%dx%d", e->pcie_gen, e->pcie_width);
            it = cJSON_AddStringToObject(eo, "pcie", s);
        } else {
            it = cJSON_AddNullToObject(eo, "pcie");
        }
        if (!it)
            return NT_ERR_NOMEM;
    }
    return NT_OK;
}

static nt_status_t nt_write_class(cJSON *arr, const th_class_t *c)
{
    cJSON *co = cJSON_CreateObject();
    if (!co)
        return NT_ERR_NOMEM;
    cJSON_AddItemToArray(arr, co);
    if (!cJSON_AddStringToObject(co, "name", c->name))
        return NT_ERR_NOMEM;
    cJSON *mo = cJSON_AddObjectToObject(co, "match");
    if (!mo)
        return NT_ERR_NOMEM;
    if (c->regex_src && !cJSON_AddStringToObject(mo, "hostname_regex", c->regex_src))
        return NT_ERR_NOMEM;
    if (c->gpu_model && !cJSON_AddStringToObject(mo, "gpu_model", c->gpu_model))
        return NT_ERR_NOMEM;
    nt_status_t st = nt_write_expect(co, &c->v.expect, c->expect_set);
    if (st == NT_OK)
        st = nt_write_links(co, c->v.links, c->link_set);
    if (st == NT_OK)
        st = nt_write_peer(co, &c->v.peer, c->peer_set);
    return st;
}

nt_status_t nt_thresholds_to_json(const nt_thresholds_t *t, cJSON **out)
{
    if (!t || !out)
        return NT_ERR_INVALID;
    *out = NULL;
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NT_ERR_NOMEM;
    nt_status_t st = NT_ERR_NOMEM;
    if (!cJSON_AddStringToObject(doc, "schema", NT_THRESHOLDS_SCHEMA))
        goto delete_doc;
    cJSON *classes = cJSON_AddArrayToObject(doc, "classes");
    if (!classes)
        goto delete_doc;
    for (int i = 0; i < t->nclasses; i++)
        if ((st = nt_write_class(classes, &t->classes[i])) != NT_OK)
            goto delete_doc;
    cJSON *defs = cJSON_AddObjectToObject(doc, "defaults");
    if (!defs) {
        st = NT_ERR_NOMEM;
        goto delete_doc;
    }
    unsigned all[NT_KIND_COUNT];
    for (int k = 0; k < NT_KIND_COUNT; k++)
        all[k] = SET_EFF | SET_MINBW | SET_MAXLAT;
    if ((st = nt_write_expect(defs, &t->defaults.expect,
                           SET_GPUS | SET_NICS | SET_RATE | SET_PCIE | SET_NVL)))
        goto delete_doc;
    if ((st = nt_write_links(defs, t->defaults.links, all)) != NT_OK)
        goto delete_doc;
    if ((st = nt_write_peer(defs, &t->defaults.peer,
                            SET_BWR | SET_LATR | SET_TAILR | SET_MINPOP)) != NT_OK)
        goto delete_doc;
    *out = doc;
    return NT_OK;
delete_doc:
    cJSON_Delete(doc);
    return st;
}

/* ---- resolving --------------------------------------------------------------------------- */

int nt_thresholds_nclasses(const nt_thresholds_t *t)
{
    return t ? t->nclasses : 0;
}

const char *nt_thresholds_class_name(const nt_thresholds_t *t, int i)
{
    if (!t || i < 0 || i >= t->nclasses)
        return NULL;
    return t->classes[i].name;
}

static int nt_class_fits(const th_class_t *c, const char *host, const char *gpu_model)
{
    if (c->have_re && regexec(&c->re, host, 0, NULL, 0) != 0)
        return 0;
    if (c->gpu_model && (!gpu_model || !gpu_model[0] || !strcasestr(gpu_model, c->gpu_model)))
        return 0;
    return 1;
}

static int nt_class_of(const nt_thresholds_t *t, const char *host, const char *gpu_model)
{
    for (int i = 0; i < t->nclasses; i++)
        if (nt_class_fits(&t->classes[i], host, gpu_model))
            return i;
    return -1;
}

nt_status_t nt_thresholds_for_host(const nt_thresholds_t *t, const char *host,
                                   const char *gpu_model, nt_node_rules_t *out)
{
    if (!t || !host || !out)
        return NT_ERR_INVALID;
    *out = t->defaults;
    out->class_index = -1;
    out->class_name[0] = '\0';
    int ci = nt_class_of(t, host, gpu_model);
    if (ci < 0)
        return NT_OK;
    const th_class_t *c = &t->classes[ci];
    out->class_index = ci;
    snprintf(out->class_name, sizeof(out->class_name), "%s", c->name);
    for (int k = 0; k < NT_KIND_COUNT; k++) {
        if (c->link_set[k] & SET_EFF)
            out->links[k].efficiency = c->v.links[k].efficiency;
        if (c->link_set[k] & SET_MINBW)
            out->links[k].min_bw_GBps = c->v.links[k].min_bw_GBps;
        if (c->link_set[k] & SET_MAXLAT)
            out->links[k].max_lat_us = c->v.links[k].max_lat_us;
    }
    if (c->peer_set & SET_BWR)
        out->peer.bw_ratio = c->v.peer.bw_ratio;
    if (c->peer_set & SET_LATR)
        out->peer.lat_ratio = c->v.peer.lat_ratio;
    if (c->peer_set & SET_TAILR)
        out->peer.tail_ratio = c->v.peer.tail_ratio;
    if (c->peer_set & SET_MINPOP)
        out->peer.min_population = c->v.peer.min_population;
    if (c->expect_set & SET_GPUS)
        out->expect.gpus = c->v.expect.gpus;
    if (c->expect_set & SET_NICS)
        out->expect.nics = c->v.expect.nics;
    if (c->expect_set & SET_RATE)
        out->expect.nic_rate_Gbps = c->v.expect.nic_rate_Gbps;
    if (c->expect_set & SET_NVL)
        out->expect.nvlinks = c->v.expect.nvlinks;
    if (c->expect_set & SET_PCIE) {
        out->expect.pcie_gen = c->v.expect.pcie_gen;
        out->expect.pcie_width = c->v.expect.pcie_width;
    }
    return NT_OK;
}

nt_status_t nt_thresholds_peer_for_run(const nt_thresholds_t *t, const char *const *hosts,
                                       const char *const *gpu_models, int nnodes,
                                       nt_peer_rules_t *out)
{
    if (!t || !out || (nnodes > 0 && !hosts))
        return NT_ERR_INVALID;
    int common = -1;
    for (int i = 0; i < nnodes; i++) {
        int ci = nt_class_of(t, hosts[i] ? hosts[i] : "", gpu_models ? gpu_models[i] : NULL);
        if (i == 0) {
            common = ci;
        } else if (ci != common) {
            common = -1;
            break;
        }
    }
    nt_node_rules_t r;
    if (common >= 0) {
        nt_status_t st = nt_thresholds_for_host(t, hosts[0] ? hosts[0] : "",
                                                gpu_models ? gpu_models[0] : NULL, &r);
        if (st != NT_OK)
            return st;
        *out = r.peer;
    } else {
        *out = t->defaults.peer;
    }
    return NT_OK;
}

double nt_link_expected_bw(const nt_link_rules_t *r, double line_rate_GBps)
{
    if (!r)
        return NAN;
    double v = NAN;
    if (line_rate_GBps > 0 && r->efficiency > 0)
        v = line_rate_GBps * r->efficiency;
    if (r->min_bw_GBps > 0 && (isnan(v) || r->min_bw_GBps > v))
        v = r->min_bw_GBps;
    return v;
}

double nt_link_expected_lat(const nt_link_rules_t *r)
{
    return r && r->max_lat_us > 0 ? r->max_lat_us : NAN;
}

/* ---- command-line options ------------------------------------------------------------------ */

/* The --expect keys, their aliases and the commands that judge them: one table, so that a key
 * one command has no use for is refused there instead of silently ignored. */
static const struct {
    const char *name, *alias;
    unsigned scope;
} expect_keys[] = {
    {"gpus", "gpus_per_node", NT_EXPECT_FOR_PROBE | NT_EXPECT_FOR_DOCTOR},
    {"nics", "nics_per_node", NT_EXPECT_FOR_PROBE | NT_EXPECT_FOR_DOCTOR},
    {"nic_rate_Gbps", NULL, NT_EXPECT_FOR_PROBE | NT_EXPECT_FOR_DOCTOR},
    {"pcie", NULL, NT_EXPECT_FOR_PROBE},
    {"nvlinks", NULL, NT_EXPECT_FOR_PROBE},
    {"gpu_model", NULL, NT_EXPECT_FOR_DOCTOR},
    {"collective", NULL, NT_EXPECT_FOR_DOCTOR},
    {"efficiency", NULL, NT_EXPECT_FOR_DOCTOR},
    {"error_efficiency", NULL, NT_EXPECT_FOR_DOCTOR},
    {"min_busbw_GBps", "min_bw_GBps", NT_EXPECT_FOR_DOCTOR},
};
#define NT_EXPECT_NKEYS (sizeof(expect_keys) / sizeof(expect_keys[0]))

/* "gpus (gpus_per_node), nics (nics_per_node), ..." for the keys of scope. */
static void nt_expect_key_list(unsigned scope, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NT_EXPECT_NKEYS && n < len; i++) {
        if (!(expect_keys[i].scope & scope))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s%s%s%s", n ? ", " : "", expect_keys[i].name,
                         expect_keys[i].alias ? " (" : "",
                         expect_keys[i].alias ? expect_keys[i].alias : "",
                         expect_keys[i].alias ? ")" : "");
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

/* The index of key (name or alias, any case) in expect_keys, or -1. */
static int nt_expect_key_find(const char *key)
{
    for (size_t i = 0; i < NT_EXPECT_NKEYS; i++)
        if (strcasecmp(key, expect_keys[i].name) == 0 ||
            (expect_keys[i].alias && strcasecmp(key, expect_keys[i].alias) == 0))
            return (int)i;
    return -1;
}

nt_status_t nt_expect_parse(const char *spec, unsigned scope, nt_expect_t *e, char *err,
                            size_t errlen)
{
    char keys[512];
    if (err && errlen)
        err[0] = '\0';
    if (!scope)
        scope = NT_EXPECT_FOR_PROBE | NT_EXPECT_FOR_DOCTOR;
    nt_expect_key_list(scope, keys, sizeof(keys));
    if (!spec || !e || !spec[0]) {
        nt_report_err(err, errlen, "--expect", "empty; give key=value,... with keys %s", keys);
        return NT_ERR_INVALID;
    }
    unsigned seen = 0;
    nt_expect_t r = *e;
    char *copy = strdup(spec);
    if (!copy)
        return NT_ERR_NOMEM;
    nt_status_t st = NT_OK;
    /* strtok_r would skip empty items silently; walk by hand so "gpus=8,,nics=2" is an error */
    char *item = copy;
    for (;;) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(item, '=');
        if (!item[0]) {
            nt_report_err(err, errlen, "--expect", "empty item in '%s'", spec);
            st = NT_ERR_INVALID;
            break;
        }
        if (!eq || eq == item || !eq[1]) {
            nt_report_err(err, errlen, "--expect", "'%s' is not key=value (keys: %s)", item, keys);
            st = NT_ERR_INVALID;
            break;
        }
        *eq = '\0';
        const char *key = item, *val = eq + 1;
        char *end = NULL;
        int k = nt_expect_key_find(key);
        if (k < 0) {
            nt_report_err(err, errlen, "--expect", "unknown key '%s' (valid keys: %s)", key, keys);
            st = NT_ERR_INVALID;
            break;
        }
        if (!(expect_keys[k].scope & scope)) {
            nt_report_err(err, errlen, "--expect",
                       "'%s' is a key of %s, not judged here (valid keys: %s)", key,
                       expect_keys[k].scope & NT_EXPECT_FOR_DOCTOR ? "nettune doctor (nccl-tests "
                                                                     "outputs)"
                                                                   : "nettune probe (the node's "
                                                                     "inventory)",
                       keys);
            st = NT_ERR_INVALID;
            break;
        }
        if (seen & (1u << k)) {
            nt_report_err(err, errlen, "--expect", "%s given twice in '%s': keep one", key, spec);
            st = NT_ERR_INVALID;
            break;
        }
        seen |= 1u << k;
        errno = 0;
        if (strcasecmp(key, "gpus") == 0 || strcasecmp(key, "nics") == 0 ||
            strcasecmp(key, "nvlinks") == 0 || strcasecmp(key, "gpus_per_node") == 0 ||
            strcasecmp(key, "nics_per_node") == 0) {
            long v = strtol(val, &end, 10);
            if (*end || end == val || v < 0 || v > 1000000 || errno) {
                nt_report_err(err, errlen, "--expect", "%s=%s: expected an integer >= 0", key, val);
                st = NT_ERR_INVALID;
                break;
            }
            if (tolower((unsigned char)key[0]) == 'g')
                r.gpus = (int)v;
            else if (tolower((unsigned char)key[1]) == 'v')
                r.nvlinks = (int)v;
            else
                r.nics = (int)v;
        } else if (strcasecmp(key, "nic_rate_gbps") == 0) {
            double v = strtod(val, &end);
            if (*end || end == val || !(v > 0) || isinf(v)) {
                nt_report_err(err, errlen, "--expect", "%s=%s: expected a rate in Gb/s > 0", key,
                              val);
                st = NT_ERR_INVALID;
                break;
            }
            r.nic_rate_Gbps = v;
        } else if (strcasecmp(key, "gpu_model") == 0) {
            snprintf(r.gpu_model, sizeof(r.gpu_model), "%s", val);
        } else if (strcasecmp(key, "collective") == 0) {
            static const char *const known[] = {
                "all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv",
                "broadcast",  "reduce",     "gather",         "scatter",  "hypercube"};
            size_t i = 0;
            while (i < sizeof(known) / sizeof(known[0]) && strcasecmp(known[i], val) != 0)
                i++;
            if (i == sizeof(known) / sizeof(known[0])) {
                nt_report_err(err, errlen, "--expect",
                           "unknown collective '%s' (all_reduce, all_gather, reduce_scatter, "
                           "alltoall, sendrecv, broadcast, reduce, gather, scatter, hypercube)",
                           val);
                st = NT_ERR_INVALID;
                break;
            }
            snprintf(r.collective, sizeof(r.collective), "%s", known[i]);
        } else if (strcasecmp(key, "efficiency") == 0 || strcasecmp(key, "error_efficiency") == 0 ||
                   strcasecmp(key, "min_busbw_gbps") == 0 || strcasecmp(key, "min_bw_gbps") == 0) {
            double v = strtod(val, &end);
            int eff = tolower((unsigned char)key[0]) == 'e';
            if (*end || end == val || !(v > 0) || isinf(v) || (eff && v > 2)) {
                nt_report_err(err, errlen, "--expect", "%s=%s: expected a number %s", key, val,
                           eff ? "in (0, 2]" : "> 0 (GB/s)");
                st = NT_ERR_INVALID;
                break;
            }
            if (!eff)
                r.min_busbw_GBps = v;
            else if (tolower((unsigned char)key[1]) == 'r')
                r.error_efficiency = v;
            else
                r.efficiency = v;
        } else if (strcasecmp(key, "pcie") == 0) {
            if (nt_parse_pcie(val, &r.pcie_gen, &r.pcie_width) != 0) {
                nt_report_err(err, errlen, "--expect",
                           "pcie=%s: expected gen<1-6>x<1|2|4|8|16|32>, e.g. gen5x16", val);
                st = NT_ERR_INVALID;
                break;
            }
        } else {
            nt_report_err(err, errlen, "--expect", "unknown key '%s' (valid keys: %s)", key, keys);
            st = NT_ERR_INVALID;
            break;
        }
        if (!comma)
            break;
        item = comma + 1;
    }
    free(copy);
    if (st == NT_OK)
        *e = r;
    return st;
}

nt_status_t nt_require_parse(const char *spec, unsigned *out, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!spec || !out || !spec[0]) {
        nt_report_err(err, errlen, "--require", "empty; valid parts: gpu, rdma");
        return NT_ERR_INVALID;
    }
    unsigned mask = 0;
    const char *p = spec;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 4 && strncasecmp(p, "gpus", 4) == 0)
            mask |= NT_REQUIRE_GPU;
        else if (len == 3 && strncasecmp(p, "gpu", 3) == 0)
            mask |= NT_REQUIRE_GPU;
        else if (len == 4 && strncasecmp(p, "rdma", 4) == 0)
            mask |= NT_REQUIRE_RDMA;
        else {
            nt_report_err(err, errlen, "--require", "unknown part '%.*s' (valid parts: gpu, rdma)",
                       (int)len, p);
            return NT_ERR_INVALID;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    *out = mask;
    return NT_OK;
}
