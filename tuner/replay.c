/* Replay: nccl-tests outputs as sources. See tune.h. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nt_tuning.h"
#include "tune.h"

void nt_tune_add_finding(nt_tune_t *t, nt_anomaly_kind_t kind, nt_anomaly_sev_t sev,
                         const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    nt_tune_finding_t *n = realloc(t->findings, (t->nfindings + 1) * sizeof(*n));
    if (!n)
        return;
    t->findings = n;
    n[t->nfindings].kind = kind;
    n[t->nfindings].severity = sev;
    n[t->nfindings].text = strdup(buf);
    t->nfindings++;
}

const char *nt_tune_source_name(const nt_tune_source_t *s)
{
    const char *b = strrchr(s->path, '/');
    return b ? b + 1 : s->path;
}

int nt_tune_coll_from_nccltests(const char *name)
{
    if (!name)
        return -1;
    if (strcmp(name, "all_reduce") == 0)
        return NT_COLL_ALLREDUCE;
    if (strcmp(name, "all_gather") == 0)
        return NT_COLL_ALLGATHER;
    if (strcmp(name, "reduce_scatter") == 0)
        return NT_COLL_REDUCESCATTER;
    if (strcmp(name, "broadcast") == 0)
        return NT_COLL_BROADCAST;
    if (strcmp(name, "reduce") == 0)
        return NT_COLL_REDUCE;
    return -1; /* alltoall, sendrecv, gather, scatter, hypercube: send/recv, never tuned */
}

void nt_tune_source_free(nt_tune_source_t *s)
{
    free(s->path);
    free(s->label_text);
    nt_ncclt_reader_destroy(s->tests);
    nt_nccllog_cleanup(&s->log);
    for (size_t i = 0; i < s->nenv; i++)
        free(s->env[i]);
    free(s->env);
    memset(s, 0, sizeof(*s));
}

static int env_push(nt_tune_source_t *s, const char *name, const char *value)
{
    char **n = realloc(s->env, (s->nenv + 1) * sizeof(*n));
    if (!n)
        return -1;
    s->env = n;
    size_t len = strlen(name) + strlen(value) + 2;
    s->env[s->nenv] = malloc(len);
    if (!s->env[s->nenv])
        return -1;
    snprintf(s->env[s->nenv], len, "%s=%s", name, value);
    s->nenv++;
    return 0;
}

static const char *env_of(const nt_tune_source_t *s, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < s->nenv; i++)
        if (strncmp(s->env[i], name, n) == 0 && s->env[i][n] == '=')
            return s->env[i] + n + 1;
    return NULL;
}

nt_status_t nt_tune_source_read(nt_tune_source_t *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->label_algo = s->label_proto = -1;
    nt_nccllog_init(&s->log);
    s->path = strdup(path);
    s->tests = nt_ncclt_reader_create();
    if (!s->path || !s->tests) {
        snprintf(err, errlen, "out of memory reading '%s'", path);
        return NT_ERR_NOMEM;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "cannot open replay source '%s': %s", path, strerror(errno));
        return errno == ENOENT ? NT_ERR_NOT_FOUND : NT_ERR_IO;
    }
    /* the hash (identical inputs, identical files) and the first byte (JSON or text) */
    uint64_t h = 0xcbf29ce484222325ull;
    int first = -1, c;
    while ((c = fgetc(fp)) != EOF) {
        if (first < 0 && !isspace(c))
            first = c;
        h = (h ^ (unsigned char)c) * 0x100000001b3ull;
    }
    s->hash = h;
    if (first == '{') {
        cJSON *doc = NULL;
        fclose(fp);
        nt_status_t st = nt_json_read_file(path, (size_t)1 << 30, &doc);
        if (st != NT_OK || !nt_ncclt_reader_add_json(s->tests, doc, 0)) {
            cJSON_Delete(doc);
            snprintf(err, errlen,
                     "replay source '%s' is JSON but not an nccl-tests -J document (no "
                     "\"results\" array)",
                     path);
            return NT_ERR_PARSE;
        }
        s->json = 1;
        /* the environment nccl-tests recorded ("env": ["NCCL_X=V", ...]) */
        const cJSON *env = cJSON_GetObjectItemCaseSensitive(doc, "env"), *e;
        cJSON_ArrayForEach (e, env) {
            if (cJSON_IsString(e) && strncmp(e->valuestring, "NCCL_", 5) == 0) {
                const char *eq = strchr(e->valuestring, '=');
                if (eq) {
                    char name[128];
                    snprintf(name, sizeof(name), "%.*s", (int)(eq - e->valuestring),
                             e->valuestring);
                    env_push(s, name, eq + 1);
                }
            }
        }
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "nccl_version");
        if (cJSON_IsNumber(v) && v->valueint > 20000)
            s->log.version = v->valueint; /* NCCL_VERSION_CODE */
        cJSON_Delete(doc);
    } else {
        rewind(fp);
        nt_linereader_t *r = nt_linereader_open_stream(fp);
        const char *line;
        size_t len;
        int rc;
        while (r && (rc = nt_linereader_next(r, &line, &len)) == 1) {
            nt_logline_t l;
            nt_line_parse(line, &l);
            unsigned long no = nt_linereader_lineno(r);
            if (l.level == NT_LVL_NONE &&
                nt_ncclt_reader_feed(s->tests, l.body, no) != NT_NCCLT_NONE)
                continue;
            if (!nt_nccllog_feed(&s->log, &l, no))
                nt_ncclt_reader_scan_coll(s->tests, l.body);
        }
        int binary = r ? nt_linereader_is_binary(r) : 1;
        nt_linereader_close(r);
        fclose(fp);
        if (binary) {
            snprintf(err, errlen, "replay source '%s' is not text: give nccl-tests' output", path);
            return NT_ERR_PARSE;
        }
        for (size_t i = 0; i < s->log.nenv; i++)
            env_push(s, s->log.env[i].name, s->log.env[i].value);
    }
    if (nt_ncclt_reader_ntables(s->tests) == 0) {
        snprintf(err, errlen, "replay source '%s' holds no nccl-tests table", path);
        return NT_ERR_PARSE;
    }
    return NT_OK;
}

/* Our algorithm/protocol spellings or NCCL's, any case: nt_model_*_parse. */
static int label_key(const char *k, const char *v, nt_tune_source_t *s, char *err, size_t errlen)
{
    if (strcasecmp(k, "algo") == 0) {
        int a = nt_model_algo_parse(v);
        if (a < 0)
            return snprintf(err, errlen,
                            "--label algo=%s: unknown algorithm (tree, ring, collnet_direct, "
                            "collnet_chain, nvls, nvls_tree, pat)",
                            v),
                   -1;
        if (s->label_algo >= 0)
            return snprintf(err, errlen, "--label for '%s' gives algo twice", s->path), -1;
        s->label_algo = a;
        return 0;
    }
    if (strcasecmp(k, "proto") == 0) {
        int p = nt_model_proto_parse(v);
        if (p < 0)
            return snprintf(err, errlen, "--label proto=%s: unknown protocol (ll, ll128, simple)",
                            v),
                   -1;
        if (s->label_proto >= 0)
            return snprintf(err, errlen, "--label for '%s' gives proto twice", s->path), -1;
        s->label_proto = p;
        return 0;
    }
    if (strcasecmp(k, "nchannels") == 0) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || n < 1 || n > 64)
            return snprintf(err, errlen, "--label nchannels=%s: give 1..64", v), -1;
        s->label_nchannels = (int)n;
        return 0;
    }
    if (strncasecmp(k, "env.", 4) == 0 && strncmp(k + 4, "NCCL_", 5) == 0) {
        if (env_of(s, k + 4))
            return snprintf(err, errlen, "--label for '%s' gives %s twice", s->path, k + 4), -1;
        return env_push(s, k + 4, v) ? -1 : 0;
    }
    snprintf(err, errlen, "--label key '%s' is not one of algo, proto, nchannels, env.NCCL_X", k);
    return -1;
}

nt_status_t nt_tune_source_label(nt_tune_source_t *s, const char *label, char *err, size_t errlen)
{
    if (s->label_text) {
        snprintf(err, errlen, "--label given twice for --replay '%s' ('%s' and '%s'): give one",
                 s->path, s->label_text, label);
        return NT_ERR_INVALID;
    }
    s->label_text = strdup(label);
    /* the file's own NCCL_X echoes come first in s->env: a label for the same name must agree */
    size_t file_env = s->nenv;
    char *copy = strdup(label), *save = NULL;
    if (!copy)
        return NT_ERR_NOMEM;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            snprintf(err, errlen,
                     "--label '%s': expected K=V,... (algo, proto, nchannels, env.NCCL_X)", label);
            free(copy);
            return NT_ERR_INVALID;
        }
        *eq = '\0';
        const char *k = kv, *v = eq + 1;
        if (strncasecmp(k, "env.", 4) == 0) {
            const char *have = NULL;
            for (size_t i = 0; i < file_env; i++) {
                size_t n = strlen(k + 4);
                if (strncmp(s->env[i], k + 4, n) == 0 && s->env[i][n] == '=')
                    have = s->env[i] + n + 1;
            }
            if (have && strcmp(have, v) != 0) {
                snprintf(err, errlen,
                         "--label %s=%s contradicts '%s', whose NCCL lines say %s=%s: give the "
                         "value that ran",
                         k, v, s->path, k + 4, have);
                free(copy);
                return NT_ERR_INVALID;
            }
            if (have)
                continue;
        }
        if (label_key(k, v, s, err, errlen)) {
            free(copy);
            return NT_ERR_INVALID;
        }
    }
    free(copy);
    /* a label of the algorithm/protocol must agree with the NCCL_ALGO/NCCL_PROTO the file echoes */
    const char *fa = env_of(s, "NCCL_ALGO"), *fp = env_of(s, "NCCL_PROTO");
    if (fa && s->label_algo >= 0 && nt_model_algo_parse(fa) >= 0 &&
        nt_model_algo_parse(fa) != s->label_algo) {
        snprintf(err, errlen, "--label algo=%s contradicts '%s', whose NCCL lines say NCCL_ALGO=%s",
                 nt_model_algo_name(s->label_algo), s->path, fa);
        return NT_ERR_INVALID;
    }
    if (fp && s->label_proto >= 0 && nt_model_proto_parse(fp) >= 0 &&
        nt_model_proto_parse(fp) != s->label_proto) {
        snprintf(err, errlen,
                 "--label proto=%s contradicts '%s', whose NCCL lines say NCCL_PROTO=%s",
                 nt_model_proto_name(s->label_proto), s->path, fp);
        return NT_ERR_INVALID;
    }
    s->labelled = 1;
    return NT_OK;
}

unsigned long nt_tune_busbw_recheck(const nt_ncclt_table_t *tab, double *max_rel,
                                    unsigned long *bad)
{
    double f = nt_ncclt_busbw_factor(tab->coll, tab->nranks);
    unsigned long n = 0;
    *max_rel = 0;
    *bad = 0;
    if (f <= 0)
        return 0;
    for (size_t i = 0; i < tab->nrows; i++) {
        const nt_ncclt_row_t *r = &tab->rows[i];
        for (int h = 0; h < 2; h++) {
            double tm = r->time_us[h], printed = r->busbw_GBps[h];
            if (!(tm > 0) || isnan(printed))
                continue;
            /* algbw = bytes / time (GB = 1e9 B), busbw = algbw x factor (nccl-tests
             * src/all_reduce.cu AllReduceGetBw and the others) */
            double bus = (double)r->bytes / (tm * 1e3) * f;
            n++;
            /* 0.3%, or half a unit of the 2 decimals nccl-tests prints (0.005), plus what the
             * printed time's own rounding moves: nccl-tests prints the time with 1 decimal
             * (older) or as "%7.2f", falling back to fewer decimals (v2.19.6 src/util.cu
             * getFloatStr) */
            double half = tm < 99999.95 ? 0.05 : 0.5;
            double tol = (0.003 * printed > 0.005 ? 0.003 * printed : 0.005) + bus * half / tm;
            if (fabs(bus - printed) > tol + 1e-9)
                (*bad)++;
            if (0.003 * printed >= 0.005 && fabs(bus - printed) / printed > *max_rel)
                *max_rel = fabs(bus - printed) / printed;
        }
    }
    return n;
}

static int add_point(nt_tune_t *t, const nt_tune_point_t *p)
{
    if (t->npoints == t->cap_points) {
        size_t nc = t->cap_points ? t->cap_points * 2 : 256;
        nt_tune_point_t *n = realloc(t->points, nc * sizeof(*n));
        if (!n)
            return -1;
        t->points = n;
        t->cap_points = nc;
    }
    t->points[t->npoints++] = *p;
    return 0;
}

/* The algorithm/protocol the per-call TUNING lines show for `coll` at `bytes` (nccl-tests
 * prints sizes in its own bytes; NCCL 2.24+ prints count x type size: for AllGather and
 * ReduceScatter the table's size divided by the ranks). */
static int ran_from_calls(const nt_nccllog_t *g, int coll, unsigned long long bytes, int nranks,
                          int *algo, int *proto)
{
    unsigned long long alt = nranks > 0 ? bytes / (unsigned long long)nranks : bytes;
    for (size_t i = 0; i < g->ncalls; i++) {
        const nt_nccllog_call_t *c = &g->calls[i];
        if (c->coll[0] && nt_model_coll_parse(c->coll) != coll)
            continue;
        if (c->bytes != bytes && c->bytes != alt)
            continue;
        /* an index (2.20-2.23) by strtol, which saturates: atoi of one beyond an int is UB
         * (glibc truncates "4294967297" to 1) */
        long a = isdigit((unsigned char)c->algo[0]) ? strtol(c->algo, NULL, 10)
                                                    : nt_model_algo_parse(c->algo);
        long p = isdigit((unsigned char)c->proto[0]) ? strtol(c->proto, NULL, 10)
                                                     : nt_model_proto_parse(c->proto);
        if (a >= 0 && a < NT_NUM_ALGOS && p >= 0 && p < NT_NUM_PROTOS) {
            *algo = (int)a;
            *proto = (int)p;
            return 1;
        }
    }
    return 0;
}

nt_status_t nt_tune_replay(nt_tune_t *t)
{
    const nt_ncclt_table_t *base[NT_NCCLT_MAX_TABLES];
    int base_src[NT_NCCLT_MAX_TABLES];
    size_t nbase = 0;
    for (size_t si = 0; si < t->nsources; si++) {
        nt_tune_source_t *s = &t->sources[si];
        const char *ea = env_of(s, "NCCL_ALGO"), *ep = env_of(s, "NCCL_PROTO");
        int env_algo = ea ? nt_model_algo_parse(ea) : -1;
        int env_proto = ep ? nt_model_proto_parse(ep) : -1;
        for (size_t k = 0; k < nt_ncclt_reader_ntables(s->tests); k++) {
            const nt_ncclt_table_t *tab = nt_ncclt_reader_table(s->tests, k);
            s->rows += tab->rows_total;
            /* a log that does not name the test: the table's own busbw/algbw factor */
            const char *cname = tab->coll ? tab->coll : nt_ncclt_infer_coll(tab, 0, NULL, 0);
            nt_ncclt_table_t named = *tab;
            named.coll = (char *)cname;
            double rel;
            unsigned long bad;
            unsigned long n = nt_tune_busbw_recheck(&named, &rel, &bad);
            s->busbw_checked += n;
            s->busbw_bad += bad;
            if (rel > s->busbw_max_rel_err)
                s->busbw_max_rel_err = rel;
            /* anomalies: the one rule in lib/nccl/anomaly.c */
            nt_anomaly_t an[16];
            size_t na = nt_anomaly_sweep(tab, an, 16);
            for (size_t i = 0; i < na && i < 16; i++)
                nt_tune_add_finding(
                    t, an[i].kind, an[i].severity,
                    "%s: %s table at line %lu: busbw %.2f GB/s at %llu..%llu B is %.0f%% of the "
                    "%.2f GB/s reached at a smaller size",
                    nt_tune_source_name(s), nt_anomaly_kind_string(an[i].kind), tab->header_line,
                    an[i].busbw_GBps, an[i].bytes_first, an[i].bytes_last, 100 * an[i].ratio,
                    an[i].ref_GBps);
            int coll = nt_tune_coll_from_nccltests(cname);
            if (coll < 0 || tab->nranks < 1)
                continue; /* alltoall, sendrecv, an unknown test or shape: no rules */
            nt_tune_shape_t sh = {tab->nhosts > 0 ? tab->nhosts : 1,
                                  tab->nranks / (tab->nhosts > 0 ? tab->nhosts : 1), tab->nranks};
            int algo = s->label_algo >= 0 ? s->label_algo : env_algo;
            int proto = s->label_proto >= 0 ? s->label_proto : env_proto;
            int is_default = !s->labelled && env_algo < 0 && env_proto < 0 && !s->label_nchannels;
            if (is_default && nbase < NT_NCCLT_MAX_TABLES) {
                base_src[nbase] = (int)si;
                base[nbase++] = tab;
            }
            for (size_t i = 0; i < tab->nrows; i++) {
                const nt_ncclt_row_t *r = &tab->rows[i];
                if (r->bytes == 0)
                    continue;
                nt_tune_point_t p;
                memset(&p, 0, sizeof(p));
                p.coll = coll;
                p.shape = sh;
                p.bytes = r->bytes;
                double a = r->time_us[0], b = r->time_us[1];
                p.time_us = a < b ? a : b;
                p.spread = fabs(a - b) / (a > b ? a : b);
                p.src = (int)si;
                p.table = (int)k;
                p.reg_buff = -1;
                p.is_default = is_default;
                p.algo = algo;
                p.proto = proto;
                p.how = algo >= 0 || proto >= 0 ? NT_RAN_LABEL : NT_RAN_UNKNOWN;
                int ca, cp;
                if (ran_from_calls(&s->log, coll, r->bytes, sh.nranks, &ca, &cp)) {
                    p.algo = ca;
                    p.proto = cp;
                    p.how = NT_RAN_MEASURED;
                }
                if (!(p.time_us > 0))
                    continue;
                add_point(t, &p);
            }
        }
    }
    /* several baseline tables of the same test and shape that differ; their environments */
    for (size_t i = 0; i < nbase; i++)
        for (size_t j = i + 1; j < nbase; j++) {
            if (!nt_anomaly_same_shape(base[i], base[j]))
                continue;
            nt_anomaly_t an[8];
            size_t na = nt_anomaly_compare(base[i], base[j], an, 8);
            const nt_tune_source_t *a = &t->sources[base_src[i]], *b = &t->sources[base_src[j]];
            char name[128] = "";
            int envd =
                nt_anomaly_env_diff((const char *const *)a->env, a->nenv,
                                    (const char *const *)b->env, b->nenv, name, sizeof(name));
            for (size_t k = 0; k < na && k < 8; k++)
                nt_tune_add_finding(t, NT_ANOMALY_RUNS_DIFFER, NT_ANOMALY_SEV_WARN,
                                    "%s and %s: the %s run is %.0f%% slower at %llu..%llu B%s%s",
                                    nt_tune_source_name(a), nt_tune_source_name(b),
                                    an[k].slower ? nt_tune_source_name(b) : nt_tune_source_name(a),
                                    100 * (1 - an[k].ratio), an[k].bytes_first, an[k].bytes_last,
                                    envd ? "; their environments differ in " : "",
                                    envd ? name : "");
            if (envd && base_src[i] != base_src[j])
                nt_tune_add_finding(t, NT_ANOMALY_ENV_DIFFERS, NT_ANOMALY_SEV_WARN,
                                    "%s and %s are both NCCL's default but their environments "
                                    "differ in %s",
                                    nt_tune_source_name(a), nt_tune_source_name(b), name);
        }
    return NT_OK;
}
