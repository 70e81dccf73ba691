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

/* nccl-tests' test names and the NCCL function each calls; the others (alltoall, sendrecv,
 * gather, scatter, hypercube) are send/recv and never reach a tuner. */
static const struct {
    const char *name;
    int coll;
} nccltests_colls[] = {{"all_reduce", NT_COLL_ALLREDUCE},
                       {"all_gather", NT_COLL_ALLGATHER},
                       {"reduce_scatter", NT_COLL_REDUCESCATTER},
                       {"broadcast", NT_COLL_BROADCAST},
                       {"reduce", NT_COLL_REDUCE}};

int nt_tune_coll_from_nccltests(const char *name)
{
    for (size_t i = 0; name && i < sizeof(nccltests_colls) / sizeof(nccltests_colls[0]); i++)
        if (strcmp(name, nccltests_colls[i].name) == 0)
            return nccltests_colls[i].coll;
    return -1;
}

const char *nt_tune_nccltests_name(int coll)
{
    for (size_t i = 0; i < sizeof(nccltests_colls) / sizeof(nccltests_colls[0]); i++)
        if (nccltests_colls[i].coll == coll)
            return nccltests_colls[i].name;
    return NULL;
}

const char *nt_tune_table_coll(const nt_tune_t *t, const nt_ncclt_table_t *tab)
{
    const char *c = tab->coll ? tab->coll : nt_ncclt_infer_coll(tab, 0, NULL, 0);
    return c ? c : t->p.coll_named > 0 ? nt_tune_nccltests_name(t->p.coll_named - 1) : NULL;
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
    for (size_t i = 0; i < s->ncmd_env; i++)
        free(s->cmd_env[i]);
    free(s->cmd_env);
    free(s->hosts);
    free(s->devices);
    memset(s, 0, sizeof(*s));
}

static int nt_env_push(nt_tune_source_t *s, const char *name, const char *value)
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

static const char *nt_env_of(const nt_tune_source_t *s, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < s->nenv; i++)
        if (strncmp(s->env[i], name, n) == 0 && s->env[i][n] == '=')
            return s->env[i] + n + 1;
    return NULL;
}

int nt_tune_source_is_baseline(const nt_tune_source_t *s)
{
    return !s->labelled && !nt_env_of(s, "NCCL_ALGO") && !nt_env_of(s, "NCCL_PROTO");
}


static const char *nt_list_of(char *const *list, size_t n, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (strncmp(list[i], name, len) == 0 && list[i][len] == '=')
            return list[i] + len + 1;
    return NULL;
}

/* One NCCL_X=V word of a command line (quotes around the value dropped): into the source's
 * command-line list and its settings. */
static void nt_cmd_setting(nt_tune_source_t *s, const char *w, size_t len)
{
    char kv[256];
    if (len >= sizeof(kv) || strncmp(w, "NCCL_", 5) != 0)
        return;
    memcpy(kv, w, len);
    kv[len] = '\0';
    char *eq = strchr(kv, '=');
    if (!eq || eq == kv + 5)
        return;
    *eq = '\0';
    for (char *c = kv; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_')
            return;
    char *v = eq + 1;
    size_t vl = strlen(v);
    if (vl >= 2 && (v[0] == '"' || v[0] == '\'') && v[vl - 1] == v[0]) {
        v[vl - 1] = '\0';
        v++;
    }
    if (nt_list_of(s->cmd_env, s->ncmd_env, kv))
        return;
    char **n = realloc(s->cmd_env, (s->ncmd_env + 1) * sizeof(*n));
    if (!n)
        return;
    s->cmd_env = n;
    size_t l = strlen(kv) + strlen(v) + 2;
    if (!(n[s->ncmd_env] = malloc(l)))
        return;
    snprintf(n[s->ncmd_env], l, "%s=%s", kv, v);
    s->ncmd_env++;
    if (!nt_env_of(s, kv))
        nt_env_push(s, kv, v);
}

/* A launcher's or a test's command line, and its continuation lines after a trailing '\':
 * the NCCL_* it sets. Open MPI's "-x NAME=V", MPICH's "-genv NAME V", srun's
 * "--export=ALL,NAME=V", and "NAME=V cmd" / "env NAME=V cmd". *cont: the line ended with '\'. */
static void nt_scan_cmdline(nt_tune_source_t *s, const char *line, int *cont)
{
    static const char *const launchers[] = {"mpirun", "mpiexec", "orterun", "srun", "env",
                                            "torchrun", "prun"};
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '#')
        return;
    size_t len = strlen(p);
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r' ||
                   p[len - 1] == '\n'))
        len--;
    int is_cmd = *cont;
    /* a word that is a launcher (its basename) or an nccl-tests binary (..._perf[_mpi]) */
    for (const char *w = p; !is_cmd && w < p + len;) {
        while (w < p + len && isspace((unsigned char)*w))
            w++;
        const char *e = w;
        while (e < p + len && !isspace((unsigned char)*e))
            e++;
        const char *base = w;
        for (const char *q = w; q < e; q++)
            if (*q == '/')
                base = q + 1;
        size_t bl = (size_t)(e - base);
        for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
            is_cmd |= bl == strlen(launchers[i]) && strncmp(base, launchers[i], bl) == 0;
        for (const char *q = base; q + 5 <= e; q++)
            is_cmd |= strncmp(q, "_perf", 5) == 0;
        is_cmd |= strncmp(w, "NCCL_", 5) == 0 && memchr(w, '=', (size_t)(e - w)) != NULL &&
                  w == p; /* NAME=V cmd */
        w = e;
    }
    *cont = is_cmd && len && p[len - 1] == '\\';
    if (!is_cmd)
        return;
    const char *prev = NULL, *prev2 = NULL;
    size_t prevl = 0, prev2l = 0;
    for (const char *w = p; w < p + len;) {
        while (w < p + len && isspace((unsigned char)*w))
            w++;
        const char *e = w;
        while (e < p + len && !isspace((unsigned char)*e))
            e++;
        size_t wl = (size_t)(e - w);
        if (wl > 9 && strncmp(w, "--export=", 9) == 0) {
            for (const char *a = w + 9; a < e;) {
                const char *c = memchr(a, ',', (size_t)(e - a));
                const char *z = c ? c : e;
                nt_cmd_setting(s, a, (size_t)(z - a));
                a = z + 1;
            }
        } else if (prev && prevl == 8 && strncmp(prev, "--export", 8) == 0) {
            for (const char *a = w; a < e;) {
                const char *c = memchr(a, ',', (size_t)(e - a));
                const char *z = c ? c : e;
                nt_cmd_setting(s, a, (size_t)(z - a));
                a = z + 1;
            }
        } else if (prev2 && prev2l == 5 && strncmp(prev2, "-genv", 5) == 0 && prevl < 200 &&
                   strncmp(prev, "NCCL_", 5) == 0 && !memchr(prev, '=', prevl)) {
            char kv[256];
            snprintf(kv, sizeof(kv), "%.*s=%.*s", (int)prevl, prev, (int)wl, w);
            nt_cmd_setting(s, kv, strlen(kv));
        } else if (strncmp(w, "NCCL_", 5) == 0 && memchr(w, '=', wl)) {
            nt_cmd_setting(s, w, wl); /* "-x NAME=V", "NAME=V cmd", "env NAME=V" */
        }
        prev2 = prev;
        prev2l = prevl;
        prev = w;
        prevl = wl;
        w = e;
    }
}

/* Appends "item" to a ","-separated list unless it is there. */
static void nt_list_add(char **list, const char *item, size_t len)
{
    size_t have = *list ? strlen(*list) : 0;
    for (const char *a = *list; a && *a;) {
        const char *c = strchr(a, ',');
        size_t l = c ? (size_t)(c - a) : strlen(a);
        if (l == len && strncmp(a, item, len) == 0)
            return;
        a = c ? c + 1 : a + l;
    }
    char *n = realloc(*list, have + len + 2);
    if (!n)
        return;
    if (have)
        n[have++] = ',';
    memcpy(n + have, item, len);
    n[have + len] = '\0';
    *list = n;
}

static int nt_replay_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts a ","-separated list in place. */
static void nt_list_sort(char *list)
{
    char *items[512], *copy = list ? strdup(list) : NULL, *save = NULL;
    size_t n = 0;
    if (!copy)
        return;
    for (char *w = strtok_r(copy, ",", &save); w && n < 512; w = strtok_r(NULL, ",", &save))
        items[n++] = w;
    qsort(items, n, sizeof(items[0]), nt_replay_cmp_str);
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        o += (size_t)sprintf(list + o, "%s%s", i ? "," : "", items[i]);
    free(copy);
}

/* A device line: its host into s->hosts, its "host:[bus id]" into s->devices. */
static void nt_add_device(nt_tune_source_t *s, const nt_ncclt_device_t *d, const char *line)
{
    if (!d || !d->host || !d->host_len)
        return;
    nt_list_add(&s->hosts, d->host, d->host_len);
    const char *lb = strchr(line, '['), *rb = lb ? strchr(lb, ']') : NULL;
    if (lb && rb) {
        char dev[256];
        snprintf(dev, sizeof(dev), "%.*s:%.*s", (int)d->host_len, d->host, (int)(rb - lb + 1), lb);
        nt_list_add(&s->devices, dev, strlen(dev));
    }
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
    /* fopen succeeds on a folder; the read fails (EISDIR): say that, not "no table" */
    if (ferror(fp)) {
        snprintf(err, errlen, "cannot read replay source '%s': %s (give nccl-tests' output)", path,
                 strerror(errno));
        fclose(fp);
        return NT_ERR_IO;
    }
    if (first < 0) {
        snprintf(err, errlen, "replay source '%s' is empty: give nccl-tests' output", path);
        fclose(fp);
        return NT_ERR_PARSE;
    }
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
                    nt_env_push(s, name, eq + 1);
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
        int rc, cont = 0;
        while (r && (rc = nt_linereader_next(r, &line, &len)) == 1) {
            nt_logline_t l;
            nt_line_parse(line, &l);
            unsigned long no = nt_linereader_lineno(r);
            nt_ncclt_event_t ev =
                l.level == NT_LVL_NONE ? nt_ncclt_reader_feed(s->tests, l.body, no) : NT_NCCLT_NONE;
            if (ev == NT_NCCLT_DEVICE)
                nt_add_device(s, nt_ncclt_reader_device(s->tests), l.body);
            if (ev != NT_NCCLT_NONE)
                continue;
            if (!nt_nccllog_feed(&s->log, &l, no)) {
                nt_ncclt_reader_scan_coll(s->tests, l.body);
                if (l.level == NT_LVL_NONE)
                    nt_scan_cmdline(s, l.body, &cont);
            }
        }
        nt_list_sort(s->hosts);
        nt_list_sort(s->devices);
        int binary = r ? nt_linereader_is_binary(r) : 1;
        nt_linereader_close(r);
        fclose(fp);
        if (binary) {
            snprintf(err, errlen, "replay source '%s' is not text: give nccl-tests' output", path);
            return NT_ERR_PARSE;
        }
        for (size_t i = 0; i < s->log.nenv; i++)
            if (!nt_env_of(s, s->log.env[i].name)) /* the command line said it already */
                nt_env_push(s, s->log.env[i].name, s->log.env[i].value);
    }
    if (nt_ncclt_reader_ntables(s->tests) == 0) {
        snprintf(err, errlen, "replay source '%s' holds no nccl-tests table", path);
        return NT_ERR_PARSE;
    }
    return NT_OK;
}

/* Our algorithm/protocol spellings or NCCL's, any case: nt_model_*_parse. */
static int nt_label_key(const char *k, const char *v, nt_tune_source_t *s, char *err, size_t errlen)
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
        if (nt_env_of(s, k + 4))
            return snprintf(err, errlen, "--label for '%s' gives %s twice", s->path, k + 4), -1;
        return nt_env_push(s, k + 4, v) ? -1 : 0;
    }
    snprintf(err, errlen, "--label key '%s' is not one of algo, proto, nchannels, env.NCCL_X", k);
    return -1;
}

/* Where a source's setting comes from, for messages. */
static const char *nt_origin(const nt_tune_source_t *s, const char *name)
{
    return nt_list_of(s->cmd_env, s->ncmd_env, name) ? "command line sets" : "NCCL lines say";
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
                         "--label %s=%s contradicts '%s', whose %s %s=%s: give the value that "
                         "ran",
                         k, v, s->path, nt_origin(s, k + 4), k + 4, have);
                free(copy);
                return NT_ERR_INVALID;
            }
            if (have)
                continue;
        }
        if (nt_label_key(k, v, s, err, errlen)) {
            free(copy);
            return NT_ERR_INVALID;
        }
    }
    free(copy);
    /* a label of the algorithm/protocol must agree with the NCCL_ALGO/NCCL_PROTO the file echoes */
    const char *fa = nt_env_of(s, "NCCL_ALGO"), *fp = nt_env_of(s, "NCCL_PROTO");
    if (fa && s->label_algo >= 0 && nt_model_algo_parse(fa) >= 0 &&
        nt_model_algo_parse(fa) != s->label_algo) {
        snprintf(err, errlen, "--label algo=%s contradicts '%s', whose %s NCCL_ALGO=%s",
                 nt_model_algo_name(s->label_algo), s->path, nt_origin(s, "NCCL_ALGO"), fa);
        return NT_ERR_INVALID;
    }
    if (fp && s->label_proto >= 0 && nt_model_proto_parse(fp) >= 0 &&
        nt_model_proto_parse(fp) != s->label_proto) {
        snprintf(err, errlen, "--label proto=%s contradicts '%s', whose %s NCCL_PROTO=%s",
                 nt_model_proto_name(s->label_proto), s->path, nt_origin(s, "NCCL_PROTO"), fp);
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

double nt_tune_baseline_us(const nt_tune_t *t, const nt_tune_point_t *p)
{
    double best = -1;
    for (size_t j = 0; j < t->npoints; j++) {
        const nt_tune_point_t *q = &t->points[j];
        if (q->is_default && q->coll == p->coll && q->bytes == p->bytes &&
            q->shape.nranks == p->shape.nranks && q->shape.nnodes == p->shape.nnodes &&
            (best < 0 || q->time_us < best))
            best = q->time_us;
    }
    return best;
}

static int nt_add_point(nt_tune_t *t, const nt_tune_point_t *p)
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
static int nt_ran_from_calls(const nt_nccllog_t *g, int coll, unsigned long long bytes, int nranks,
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

/* Whether name is one that c's own rule or label sets (so a difference in it is the point of the
 * comparison), or logging only. */
static int nt_sets_itself(const nt_tune_source_t *c, const char *name)
{
    if (strncmp(name, "NCCL_DEBUG", 10) == 0)
        return 1; /* NCCL_DEBUG, _SUBSYS, _FILE: what is logged, not how it runs */
    int forces = c->label_algo >= 0 || c->label_proto >= 0 || nt_env_of(c, "NCCL_ALGO") ||
                 nt_env_of(c, "NCCL_PROTO");
    if (forces && (strcmp(name, "NCCL_ALGO") == 0 || strcmp(name, "NCCL_PROTO") == 0))
        return 1;
    if (c->label_nchannels > 0 &&
        (strcmp(name, "NCCL_MIN_NCHANNELS") == 0 || strcmp(name, "NCCL_MAX_NCHANNELS") == 0))
        return 1;
    /* env.NAME=V in the label */
    char key[96];
    snprintf(key, sizeof(key), "env.%.80s=", name);
    for (const char *l = c->label_text; l && (l = strcasestr(l, key)) != NULL; l++)
        if (l == c->label_text || l[-1] == ',')
            return 1;
    return 0;
}

/* The value of name that source s ran with as far as it shows: its setting, else NULL. *known:
 * 1 when s would show it (a command-line or label setting is known either way; an echo only
 * when s carries NCCL's INFO lines, which echo every NCCL_* set by the environment). */
static const char *nt_setting(const nt_tune_source_t *s, const char *name, int from_cmd, int *known)
{
    const char *v = nt_env_of(s, name);
    *known = from_cmd || v != NULL || s->log.nccl_lines > 0;
    return v;
}

int nt_tune_source_diff(const nt_tune_source_t *c, const nt_tune_source_t *b, char *out,
                        size_t outlen)
{
    int n = 0;
    size_t o = 0;
    out[0] = '\0';
#define NT_DIFF_ADD(...)                                                                          \
    do {                                                                                          \
        if (o < outlen)                                                                           \
            o += (size_t)snprintf(out + o, outlen - o, "%s", n ? "; " : "");                      \
        if (o < outlen)                                                                           \
            o += (size_t)snprintf(out + o, outlen - o, __VA_ARGS__);                              \
        n++;                                                                                      \
    } while (0)
    const nt_tune_source_t *pair[2] = {c, b};
    for (int side = 0; side < 2; side++) {
        const nt_tune_source_t *x = pair[side], *y = pair[!side];
        for (size_t i = 0; i < x->nenv; i++) {
            char name[80];
            const char *eq = strchr(x->env[i], '=');
            if (!eq || (size_t)(eq - x->env[i]) >= sizeof(name))
                continue;
            snprintf(name, sizeof(name), "%.*s", (int)(eq - x->env[i]), x->env[i]);
            if (nt_env_of(x, name) != eq + 1 || nt_sets_itself(c, name))
                continue; /* the first value only; what c sets is the comparison's point */
            if (side == 1 && nt_env_of(y, name))
                continue; /* in both: compared once, from c's side */
            int xk, yk;
            int xcmd = nt_list_of(x->cmd_env, x->ncmd_env, name) != NULL;
            nt_setting(x, name, xcmd, &xk);
            const char *yv =
                nt_setting(y, name, nt_list_of(y->cmd_env, y->ncmd_env, name) != NULL, &yk);
            /* a value only echoed by x is known unset in y only when y would have echoed it, or
             * x's own command line set it (y's command line, if any, did not) */
            if (!yv && !yk && !xcmd)
                continue;
            if (yv && strcmp(yv, eq + 1) == 0)
                continue;
            if (side == 0)
                NT_DIFF_ADD("%s=%s vs %s", name, eq + 1, yv ? yv : "not set");
            else
                NT_DIFF_ADD("%s not set vs %s=%s", name, name, eq + 1);
        }
    }
    if (c->hosts && b->hosts && strcmp(c->hosts, b->hosts) != 0)
        NT_DIFF_ADD("hosts %s vs %s", c->hosts, b->hosts);
    else if (c->devices && b->devices && strcmp(c->devices, b->devices) != 0)
        NT_DIFF_ADD("the same host names with GPUs at other PCI addresses (other machines)");
    const nt_ncclt_table_t *ct = nt_ncclt_reader_ntables(c->tests) ? nt_ncclt_reader_table(c->tests, 0) : NULL;
    const nt_ncclt_table_t *bt = nt_ncclt_reader_ntables(b->tests) ? nt_ncclt_reader_table(b->tests, 0) : NULL;
    if (ct && bt && ct->gpu_model && bt->gpu_model && strcmp(ct->gpu_model, bt->gpu_model) != 0)
        NT_DIFF_ADD("GPU %s vs %s", ct->gpu_model, bt->gpu_model);
    int cv = c->log.version, bv = b->log.version;
    if (cv && bv && cv != bv)
        NT_DIFF_ADD("NCCL %d.%d.%d vs %d.%d.%d", cv / 10000, cv / 100 % 100, cv % 100, bv / 10000,
                    bv / 100 % 100, bv % 100);
#undef NT_DIFF_ADD
    return n;
}

/* Two tables of one test (named, or inferred from busbw/algbw) and one shape. */
static int nt_same_test(const nt_tune_t *t, const nt_ncclt_table_t *a, const nt_ncclt_table_t *b)
{
    const char *ca = nt_tune_table_coll(t, a), *cb = nt_tune_table_coll(t, b);
    return ca && cb && strcmp(ca, cb) == 0 && a->nranks == b->nranks && a->nhosts == b->nhosts;
}

/* Every source that forces something against every baseline of the same test and shape. */
static void nt_confounds(nt_tune_t *t)
{
    for (size_t ci = 0; ci < t->nsources; ci++) {
        nt_tune_source_t *c = &t->sources[ci];
        if (nt_tune_source_is_baseline(c))
            continue;
        for (size_t bi = 0; bi < t->nsources; bi++) {
            const nt_tune_source_t *b = &t->sources[bi];
            if (bi == ci || !nt_tune_source_is_baseline(b))
                continue;
            int same = 0;
            for (size_t i = 0; i < nt_ncclt_reader_ntables(c->tests) && !same; i++)
                for (size_t j = 0; j < nt_ncclt_reader_ntables(b->tests) && !same; j++)
                    same = nt_same_test(t, nt_ncclt_reader_table(c->tests, i),
                                     nt_ncclt_reader_table(b->tests, j));
            char d[768];
            if (!same || !nt_tune_source_diff(c, b, d, sizeof(d)))
                continue;
            c->confounded = 1;
            nt_tune_add_finding(t, NT_ANOMALY_CONFOUNDED, NT_ANOMALY_SEV_WARN,
                                "%s against the baseline %s: they differ in more than %s sets "
                                "(%s), so a gain cannot be credited to it: no rule from this "
                                "comparison (rerun with only that changed)",
                                nt_tune_source_name(c), nt_tune_source_name(b),
                                c->label_text ? "the label" : "its NCCL_ALGO/NCCL_PROTO", d);
        }
    }
}

nt_status_t nt_tune_replay(nt_tune_t *t)
{
    const nt_ncclt_table_t *base[NT_NCCLT_MAX_TABLES];
    int base_src[NT_NCCLT_MAX_TABLES];
    size_t nbase = 0;
    for (size_t si = 0; si < t->nsources; si++) {
        nt_tune_source_t *s = &t->sources[si];
        const char *ea = nt_env_of(s, "NCCL_ALGO"), *ep = nt_env_of(s, "NCCL_PROTO");
        int env_algo = ea ? nt_model_algo_parse(ea) : -1;
        int env_proto = ep ? nt_model_proto_parse(ep) : -1;
        for (size_t k = 0; k < nt_ncclt_reader_ntables(s->tests); k++) {
            const nt_ncclt_table_t *tab = nt_ncclt_reader_table(s->tests, k);
            s->rows += tab->rows_total;
            /* a log that does not name the test: the table's own busbw/algbw factor */
            const char *cname = nt_tune_table_coll(t, tab);
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
                if (nt_ran_from_calls(&s->log, coll, r->bytes, sh.nranks, &ca, &cp)) {
                    p.algo = ca;
                    p.proto = cp;
                    p.how = NT_RAN_MEASURED;
                }
                if (!(p.time_us > 0))
                    continue;
                nt_add_point(t, &p);
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
    nt_confounds(t);
    return NT_OK;
}
