/* The one nccl-tests output reader: see include/nettune/nccltests.h. */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/nccltests.h"
#include "nettune/rdoc.h"

#define NT_NCCLT_MAX_HOSTS 4096 /* distinct hosts counted per run; more are counted as one */

typedef struct {
    char *name;
    int count;
} ncclt_host_t;

struct nt_ncclt_reader {
    nt_ncclt_table_t *tables;
    size_t ntables, cap;
    unsigned long dropped;
    long open;      /* index of the table receiving rows, -1 none */
    unsigned input; /* current input */
    /* run context: reset by each "# nThread" header and each new input */
    char *coll; /* kept across "# nThread": the command line comes before it */
    char *model;
    ncclt_host_t *hosts;
    size_t nhosts;
    int ranks;
    unsigned long long max_bytes; /* "maxBytes" of the run header, 0 unknown */
    unsigned long run_line;
    nt_ncclt_device_t dev;
    nt_ncclt_row_t row;
};

static int nt_starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static char *nt_dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void nt_run_reset(nt_ncclt_reader_t *r)
{
    for (size_t i = 0; i < r->nhosts; i++)
        free(r->hosts[i].name);
    free(r->hosts);
    r->hosts = NULL;
    r->nhosts = 0;
    r->ranks = -1;
    free(r->model);
    r->model = NULL;
    r->open = -1;
    r->max_bytes = 0;
    r->run_line = 0;
}

nt_ncclt_reader_t *nt_ncclt_reader_create(void)
{
    nt_ncclt_reader_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->open = -1;
    r->ranks = -1;
    return r;
}

void nt_ncclt_reader_destroy(nt_ncclt_reader_t *r)
{
    if (!r)
        return;
    nt_run_reset(r);
    free(r->coll);
    for (size_t i = 0; i < r->ntables; i++) {
        free(r->tables[i].coll);
        free(r->tables[i].gpu_model);
        free(r->tables[i].rows);
    }
    free(r->tables);
    free(r);
}

void nt_ncclt_reader_new_input(nt_ncclt_reader_t *r, unsigned input)
{
    nt_run_reset(r);
    free(r->coll);
    r->coll = NULL;
    r->input = input;
}

int nt_ncclt_reader_scan_coll(nt_ncclt_reader_t *r, const char *s)
{
    static const char *const colls[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall",
                                        "sendrecv",   "broadcast",  "reduce",         "gather",
                                        "scatter",    "hypercube"};
    for (const char *p = strstr(s, "_perf"); p; p = strstr(p + 5, "_perf")) {
        for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
            size_t n = strlen(colls[i]);
            if ((size_t)(p - s) >= n && memcmp(p - n, colls[i], n) == 0 &&
                (p - n == s || !isalnum((unsigned char)p[-(long)n - 1]))) {
                char *c = nt_dupn(colls[i], n);
                if (!c)
                    return 0;
                free(r->coll);
                r->coll = c;
                return 1;
            }
        }
    }
    return 0;
}

int nt_ncclt_parse_device(const char *s, nt_ncclt_device_t *dev)
{
    const char *p = s;
    if (*p != '#')
        return 0;
    p++;
    while (*p == ' ')
        p++;
    if (!nt_starts(p, "Rank "))
        return 0;
    char *end;
    long rank = strtol(p + 5, &end, 10);
    if (end == p + 5 || rank < 0 || rank > INT_MAX) /* nccl-tests numbers ranks with an int */
        return 0;
    const char *on = strstr(p, " on ");
    const char *dv = on ? strstr(on, " device ") : NULL;
    if (!on || !dv)
        return 0;
    const char *h = on + 4;
    while (*h == ' ')
        h++;
    const char *he = h;
    while (*he && *he != ' ')
        he++;
    if (he == h)
        return 0;
    memset(dev, 0, sizeof(*dev));
    dev->rank = rank;
    dev->host = h;
    dev->host_len = (size_t)(he - h);
    const char *m = strchr(dv, ']');
    if (m) {
        m++;
        while (*m == ' ')
            m++;
        size_t n = strlen(m);
        while (n > 0 && (m[n - 1] == ' ' || m[n - 1] == '\t'))
            n--;
        if (n) {
            dev->model = m;
            dev->model_len = n;
        }
    }
    return 1;
}

/* Bytes per element of an nccl-tests type name (src/common.cu test_typenames), 0 if unknown. */
static int nt_type_size(const char *t, size_t l)
{
    static const struct {
        const char *name;
        int size;
    } types[] = {{"int8", 1},    {"uint8", 1}, {"char", 1},   {"half", 2},   {"bfloat16", 2},
                 {"float16", 2}, {"int32", 4}, {"uint32", 4}, {"int", 4},    {"float", 4},
                 {"float32", 4}, {"int64", 8}, {"uint64", 8}, {"double", 8}, {"float64", 8},
                 {"f8e4m3", 1},  {"f8e5m2", 1}};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strlen(types[i].name) == l && memcmp(types[i].name, t, l) == 0)
            return types[i].size;
    return 0;
}

static void nt_copy_tok(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

int nt_ncclt_parse_row(const char *s, nt_ncclt_row_t *row)
{
    const char *tok[24];
    size_t len[24], n = 0;
    for (const char *p = s; *p && n < 24;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        tok[n] = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        len[n] = (size_t)(p - tok[n]);
        n++;
    }
    if (n < 10 || n > 16)
        return 0;
    for (size_t k = 0; k < 2; k++)
        for (size_t i = 0; i < len[k]; i++)
            if (!isdigit((unsigned char)tok[k][i]))
                return 0;
    double v[8];
    long wrong[2] = {-1, -1};
    for (int k = 0; k < 8; k++) {
        const char *t = tok[n - 8 + k];
        size_t l = len[n - 8 + k];
        char buf[40], *end;
        if (l >= sizeof(buf))
            return 0;
        memcpy(buf, t, l);
        buf[l] = '\0';
        if (k == 3 || k == 7) { /* #wrong: a number or N/A */
            if (l == 3 && memcmp(t, "N/A", 3) == 0)
                continue;
            if (!isdigit((unsigned char)t[0]))
                return 0;
            wrong[k / 4] = strtol(buf, NULL, 10);
            continue;
        }
        v[k] = strtod(buf, &end);
        if (*end || end == buf)
            return 0;
    }
    memset(row, 0, sizeof(*row));
    row->bytes = strtoull(tok[0], NULL, 10);
    row->count = strtoull(tok[1], NULL, 10);
    for (int h = 0; h < 2; h++) {
        row->time_us[h] = v[4 * h];
        row->algbw_GBps[h] = v[4 * h + 1];
        row->busbw_GBps[h] = v[4 * h + 2];
        row->wrong[h] = wrong[h];
    }
    row->has_ip = 1;
    if (n >= 11) {
        nt_copy_tok(row->type, sizeof(row->type), tok[2], len[2]);
        row->typesize = nt_type_size(tok[2], len[2]);
    }
    row->redop_kind = -1;
    row->root = -1;
    for (size_t i = 3; i + 8 < n; i++) {
        if (isdigit((unsigned char)tok[i][0]) || tok[i][0] == '-') {
            row->root = strtol(tok[i], NULL, 10);
        } else {
            nt_copy_tok(row->redop, sizeof(row->redop), tok[i], len[i]);
            row->redop_kind = !(len[i] == 4 && memcmp(tok[i], "none", 4) == 0);
        }
    }
    if (row->redop_kind < 0 && n == 11)
        row->redop_kind = 0; /* size count type + 8: the redop column left empty */
    return 1;
}

static nt_ncclt_table_t *nt_table_open(nt_ncclt_reader_t *r, unsigned long lineno)
{
    if (r->ntables >= NT_NCCLT_MAX_TABLES) {
        r->dropped++;
        return NULL;
    }
    if (r->ntables == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 8;
        nt_ncclt_table_t *n = realloc(r->tables, nc * sizeof(*n));
        if (!n) {
            r->dropped++;
            return NULL;
        }
        r->tables = n;
        r->cap = nc;
    }
    nt_ncclt_table_t *t = &r->tables[r->ntables];
    memset(t, 0, sizeof(*t));
    t->input = r->input;
    t->header_line = lineno;
    t->coll = r->coll ? strdup(r->coll) : NULL;
    t->gpu_model = r->model ? strdup(r->model) : NULL;
    t->avg_busbw_GBps = -1;
    t->oob_values = -1;
    t->max_bytes = r->max_bytes; /* the header's sweep is this table's only */
    t->run_line = r->run_line;
    r->max_bytes = 0;
    r->run_line = 0;
    t->nranks = r->ranks;
    t->nhosts = r->nhosts ? (int)r->nhosts : -1;
    t->gpus_per_host = -1;
    for (size_t i = 0; i < r->nhosts; i++)
        if (r->hosts[i].count > t->gpus_per_host)
            t->gpus_per_host = r->hosts[i].count;
    r->open = (long)r->ntables++;
    return t;
}

static void nt_table_add(nt_ncclt_table_t *t, const nt_ncclt_row_t *row)
{
    t->rows_total++;
    if (t->nrows >= NT_NCCLT_MAX_ROWS)
        return;
    if ((t->nrows & (t->nrows - 1)) == 0) { /* grow at 0, 1, 2, 4, 8, ... */
        size_t nc = t->nrows ? t->nrows * 2 : 16;
        if (nc < 16)
            nc = 16;
        nt_ncclt_row_t *n = realloc(t->rows, nc * sizeof(*n));
        if (!n)
            return;
        t->rows = n;
    }
    t->rows[t->nrows++] = *row;
}

static void nt_add_host(nt_ncclt_reader_t *r, const char *h, size_t n)
{
    for (size_t i = 0; i < r->nhosts; i++)
        if (strlen(r->hosts[i].name) == n && memcmp(r->hosts[i].name, h, n) == 0) {
            r->hosts[i].count++;
            return;
        }
    if (r->nhosts >= NT_NCCLT_MAX_HOSTS)
        return;
    if ((r->nhosts & (r->nhosts - 1)) == 0) {
        size_t nc = r->nhosts ? r->nhosts * 2 : 4;
        ncclt_host_t *nh = realloc(r->hosts, nc * sizeof(*nh));
        if (!nh)
            return;
        r->hosts = nh;
    }
    char *name = nt_dupn(h, n);
    if (!name)
        return;
    r->hosts[r->nhosts].name = name;
    r->hosts[r->nhosts].count = 1;
    r->nhosts++;
}

nt_ncclt_event_t nt_ncclt_reader_feed(nt_ncclt_reader_t *r, const char *body, unsigned long lineno)
{
    const char *p = body;
    int hash = 0;
    if (*p == '#') {
        hash = 1;
        p++;
        while (*p == ' ')
            p++;
    } else {
        /* The header and footer lines as pasted without their '#': Markdown renders an
         * unfenced "# ..." line as a heading, and a copy of the page drops the '#' (log 257 of
         * the corpus). Rows have none of their own. */
        const char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        if (nt_starts(q, "Out of bounds values") || nt_starts(q, "Avg bus bandwidth") ||
            (strstr(q, "size") && strstr(q, "count") && strstr(q, "busbw")) || nt_starts(q, "(B)") ||
            (strstr(q, "out-of-place") && strstr(q, "in-place"))) {
            hash = 1;
            p = q;
        }
    }
    if (nt_starts(p, "nThread ") && strstr(p, "minBytes")) {
        nt_run_reset(r);
        /* "minBytes %ld maxBytes %ld step: ..." (nccl-tests src/common.cu, the run header) */
        const char *mb = strstr(p, "maxBytes ");
        if (mb)
            r->max_bytes = strtoull(mb + 9, NULL, 10);
        r->run_line = lineno;
        return NT_NCCLT_RUN;
    }
    if (!hash) {
        if (r->open < 0 || r->tables[r->open].input != r->input)
            return NT_NCCLT_NONE;
        if (!nt_ncclt_parse_row(body, &r->row)) {
            /* a size and count, then nothing or part of a row: the run was cut mid-row */
            const char *q = body;
            while (*q == ' ' || *q == '\t')
                q++;
            if (isdigit((unsigned char)*q)) {
                r->tables[r->open].partial_line = lineno;
                return NT_NCCLT_META;
            }
            return NT_NCCLT_NONE;
        }
        r->tables[r->open].partial_line = 0;
        r->row.line = lineno;
        nt_table_add(&r->tables[r->open], &r->row);
        return NT_NCCLT_ROW;
    }
    if (nt_starts(p, "Collective test starting:")) { /* nccl-tests 2.14 and later name the test */
        nt_ncclt_reader_scan_coll(r, p);
        return NT_NCCLT_META;
    }
    if (nt_starts(p, "nccl-tests version") || nt_starts(p, "Using devices"))
        return NT_NCCLT_META;
    if (nt_ncclt_parse_device(body, &r->dev)) {
        nt_add_host(r, r->dev.host, r->dev.host_len);
        if (r->dev.rank < 1 << 24 && r->dev.rank + 1 > r->ranks) /* no overflow at LONG_MAX */
            r->ranks = (int)r->dev.rank + 1;
        if (r->dev.model && !r->model)
            r->model = nt_dupn(r->dev.model, r->dev.model_len);
        return NT_NCCLT_DEVICE;
    }
    if (strstr(p, "size") && strstr(p, "count") && strstr(p, "busbw")) {
        return nt_table_open(r, lineno) ? NT_NCCLT_TABLE : NT_NCCLT_META;
    }
    if (nt_starts(p, "(B)") || strstr(p, "out-of-place"))
        return NT_NCCLT_META;
    if (nt_starts(p, "Avg bus bandwidth")) {
        const char *c = strchr(p, ':');
        if (r->open >= 0 && c) {
            r->tables[r->open].avg_busbw_GBps = strtod(c + 1, NULL);
            r->tables[r->open].complete = 1;
        }
        r->open = -1;
        return NT_NCCLT_END;
    }
    if (nt_starts(p, "Out of bounds values")) {
        /* "# Out of bounds values : %d %s", the count of checks that found wrong data and
         * FAILED or OK (nccl-tests v2.19.6 src/util.cu:777; v2.0.0 src/common.cu:879) */
        const char *c = strchr(p, ':');
        if (r->open >= 0 && c) {
            char *end;
            long n = strtol(c + 1, &end, 10);
            if (end != c + 1 && n >= 0) {
                r->tables[r->open].oob_values = n;
                r->tables[r->open].oob_line = lineno;
            }
        }
        return NT_NCCLT_META;
    }
    if (nt_starts(p, "Errors with asserts"))
        return NT_NCCLT_META;
    return NT_NCCLT_NONE;
}

const nt_ncclt_device_t *nt_ncclt_reader_device(const nt_ncclt_reader_t *r)
{
    return &r->dev;
}
const nt_ncclt_row_t *nt_ncclt_reader_row(const nt_ncclt_reader_t *r)
{
    return &r->row;
}
size_t nt_ncclt_reader_ntables(const nt_ncclt_reader_t *r)
{
    return r->ntables;
}
unsigned long nt_ncclt_reader_dropped(const nt_ncclt_reader_t *r)
{
    return r->dropped;
}

const nt_ncclt_table_t *nt_ncclt_reader_table(const nt_ncclt_reader_t *r, size_t i)
{
    return i < r->ntables ? &r->tables[i] : NULL;
}

static double nt_jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static const char *nt_jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void nt_trim_copy(char *dst, size_t cap, const char *s)
{
    if (!s) {
        dst[0] = '\0';
        return;
    }
    while (*s == ' ')
        s++;
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        n--;
    nt_copy_tok(dst, cap, s, n);
}

/* One -I object (nccl-tests v2.19.6 src/util.cu:571-602) into `it`. */
static void nt_ncclt_iters_parse(const cJSON *o, nt_ncclt_iters_t *it)
{
    memset(it, 0, sizeof(*it));
    it->slowest_proc = -1;
    it->slowest_ratio = NAN;
    if (!cJSON_IsObject(o))
        return;
    it->has = 1;
    double sk = nt_jnum(o, "skipped_iterations", 0);
    it->skipped = sk >= 0 && sk < INT_MAX ? (int)sk : 0;
    it->min_us = nt_jnum(o, "min_us", NAN);
    it->max_us = nt_jnum(o, "max_us", NAN);
    it->avg_us = nt_jnum(o, "avg_us", NAN);
    it->p50_us = nt_jnum(o, "p50_us", NAN);
    it->p95_us = nt_jnum(o, "p95_us", NAN);
    it->p99_us = nt_jnum(o, "p99_us", NAN);
    it->stdev_us = nt_jnum(o, "stdev_us", NAN);
    it->cv_pct = nt_jnum(o, "cv_pct", NAN);
    const cJSON *times = cJSON_GetObjectItemCaseSensitive(o, "times_us");
    it->niters = cJSON_IsArray(times) ? cJSON_GetArraySize(times) : 0;
    const cJSON *procs = cJSON_GetObjectItemCaseSensitive(o, "per_process_max_times_us");
    int np = cJSON_IsArray(procs) ? cJSON_GetArraySize(procs) : 0;
    double *means = np > 1 && np < 1 << 20 ? malloc((size_t)np * sizeof(double)) : NULL;
    if (!means)
        return;
    const cJSON *row, *t;
    int n = 0;
    double best = -1;
    cJSON_ArrayForEach (row, procs) {
        double sum = 0;
        int k = 0, i = 0;
        cJSON_ArrayForEach (t, row) {
            if (i++ >= it->skipped && cJSON_IsNumber(t) && isfinite(t->valuedouble)) {
                sum += t->valuedouble;
                k++;
            }
        }
        means[n] = k ? sum / k : NAN;
        if (k && means[n] > best) {
            best = means[n];
            it->slowest_proc = n;
        }
        n++;
    }
    it->nprocs = n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(means[i]))
            means[m++] = means[i];
    if (m > 1) {
        double med = nt_median(means, (size_t)m);
        it->slowest_ratio = med > 0 ? best / med : NAN;
    } else
        it->slowest_proc = -1;
    free(means);
}

int nt_ncclt_reader_add_json(nt_ncclt_reader_t *r, const cJSON *doc, unsigned input)
{
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results");
    if (!cJSON_IsArray(results))
        return 0;
    nt_ncclt_reader_new_input(r, input);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(doc, "args");
    const cJSON *a0 = cJSON_IsArray(args) ? cJSON_GetArrayItem(args, 0) : NULL;
    if (cJSON_IsString(a0))
        nt_ncclt_reader_scan_coll(r, a0->valuestring);
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(doc, "devices");
    const cJSON *d;
    cJSON_ArrayForEach (d, devs) {
        const char *h = nt_jstr(d, "hostname");
        double rank = nt_jnum(d, "rank", -1);
        if (!h || !(rank >= 0 && rank <= INT_MAX)) /* nccl-tests numbers ranks with an int */
            continue;
        nt_add_host(r, h, strlen(h));
        if ((int)rank + 1 > r->ranks && rank < 1 << 24)
            r->ranks = (int)rank + 1;
        const char *m = nt_jstr(d, "device_info");
        if (m && !r->model)
            r->model = strdup(m);
    }
    nt_ncclt_table_t *t = nt_table_open(r, 0);
    if (!t)
        return 1;
    t->json = 1;
    const cJSON *res;
    cJSON_ArrayForEach (res, results) {
        nt_ncclt_row_t row;
        memset(&row, 0, sizeof(row));
        double size = nt_jnum(res, "size", -1), count = nt_jnum(res, "count", -1);
        /* size_t in nccl-tests: a number beyond 2^64 is no size (and no conversion) */
        if (!(size >= 0 && size < 0x1p64) || !(count >= 0 && count < 0x1p64))
            continue;
        row.bytes = (unsigned long long)size;
        row.count = (unsigned long long)count;
        nt_trim_copy(row.type, sizeof(row.type), nt_jstr(res, "type"));
        row.typesize = nt_type_size(row.type, strlen(row.type));
        nt_trim_copy(row.redop, sizeof(row.redop), nt_jstr(res, "redop"));
        row.redop_kind = row.redop[0] ? strcmp(row.redop, "none") != 0 : 0;
        const char *root = nt_jstr(res, "root");
        row.root = root ? strtol(root, NULL, 10) : -1;
        const char *half[2] = {"out_of_place", "in_place"};
        int have = 0;
        for (int h = 0; h < 2; h++) {
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(res, half[h]);
            row.wrong[h] = -1;
            if (!cJSON_IsObject(o))
                continue;
            double tm = nt_jnum(o, "time", nt_jnum(o, "cpu_time", NAN));
            row.time_us[h] = tm;
            row.algbw_GBps[h] = nt_jnum(o, "alg_bw", NAN);
            row.busbw_GBps[h] = nt_jnum(o, "bus_bw", NAN);
            double w = nt_jnum(o, "nwrong", -1); /* a count: beyond LONG_MAX it stays LONG_MAX */
            row.wrong[h] = w < 0 ? -1 : w >= 0x1p63 ? LONG_MAX : (long)w;
            have |= 1 << h;
        }
        if (!(have & 1)) { /* trace replay writes in-place only: mirror it */
            if (!(have & 2))
                continue;
            row.time_us[0] = row.time_us[1];
            row.algbw_GBps[0] = row.algbw_GBps[1];
            row.busbw_GBps[0] = row.busbw_GBps[1];
        }
        nt_ncclt_iters_parse(cJSON_GetObjectItemCaseSensitive(res, "out_of_place_per_iter"),
                             &row.iters[0]);
        nt_ncclt_iters_parse(cJSON_GetObjectItemCaseSensitive(res, "in_place_per_iter"),
                             &row.iters[1]);
        row.has_ip = (have & 2) != 0;
        if (!row.has_ip) {
            row.time_us[1] = row.time_us[0];
            row.algbw_GBps[1] = row.algbw_GBps[0];
            row.busbw_GBps[1] = row.busbw_GBps[0];
        }
        nt_table_add(t, &row);
    }
    /* "out_of_bounds": {"count": N, ...} (nccl-tests v2.19.6 src/util.cu:783-785) */
    double oob = nt_jnum(cJSON_GetObjectItemCaseSensitive(doc, "out_of_bounds"), "count", -1);
    if (oob >= 0 && oob <= LONG_MAX)
        t->oob_values = (long)oob;
    const cJSON *avg = cJSON_GetObjectItemCaseSensitive(doc, "average_bus_bandwidth");
    if (cJSON_IsObject(avg)) {
        t->avg_busbw_GBps = nt_jnum(avg, "bandwidth", -1);
        t->complete = 1;
    }
    r->open = -1;
    return 1;
}

double nt_ncclt_busbw_factor(const char *coll, int nranks)
{
    if (!coll || nranks < 1)
        return -1;
    double n = nranks;
    if (strcmp(coll, "all_reduce") == 0)
        return 2 * (n - 1) / n;
    if (strcmp(coll, "all_gather") == 0 || strcmp(coll, "reduce_scatter") == 0 ||
        strcmp(coll, "alltoall") == 0 || strcmp(coll, "gather") == 0 ||
        strcmp(coll, "scatter") == 0)
        return (n - 1) / n;
    if (strcmp(coll, "broadcast") == 0 || strcmp(coll, "reduce") == 0 ||
        strcmp(coll, "sendrecv") == 0)
        return 1;
    return -1;
}

double nt_ncclt_row_best_busbw(const nt_ncclt_row_t *row)
{
    double a = row->busbw_GBps[0], b = row->busbw_GBps[1];
    if (isnan(a))
        return b;
    if (isnan(b))
        return a;
    return a > b ? a : b;
}

static int nt_near(double x, double want)
{
    return fabs(x - want) <= 0.015 * want;
}

const char *nt_ncclt_infer_coll(const nt_ncclt_table_t *t, int nranks, char *how, size_t howlen)
{
    const nt_ncclt_row_t *r = NULL;
    int n = nranks > 0 ? nranks : t->nranks;
    unsigned long long seen[3];
    size_t nseen = 0;
    char buf[160];
    /* the three largest sizes, largest first, as printed with 2 decimals: big figures only */
    while (nseen < 3 && !r) {
        const nt_ncclt_row_t *big = NULL;
        for (size_t i = 0; i < t->nrows; i++) {
            int skip = 0;
            for (size_t k = 0; k < nseen; k++)
                skip |= t->rows[i].bytes >= seen[k];
            if (!skip && (!big || t->rows[i].bytes >= big->bytes))
                big = &t->rows[i];
        }
        if (!big)
            break;
        seen[nseen++] = big->bytes;
        if (big->algbw_GBps[0] >= 1.0)
            r = big;
    }
    if (how && howlen)
        how[0] = '\0';
    if (!r || n < 2)
        return NULL;
    double f = r->busbw_GBps[0] / r->algbw_GBps[0];
    const char *one = NULL, *several = NULL;
    snprintf(buf, sizeof(buf), "busbw/algbw %.2f with %d ranks", f, n);
    if (nt_near(f, 2.0 * (n - 1) / n) && n > 2) {
        one = "all_reduce";
        snprintf(buf, sizeof(buf), "busbw/algbw %.2f = 2(n-1)/n with n = %d ranks", f, n);
    } else if (nt_near(f, (double)(n - 1) / n) && n > 2) {
        if (r->redop_kind == 1)
            one = "reduce_scatter";
        else if (r->redop_kind == 0)
            several = "all_gather or alltoall";
        else
            several = "all_gather, reduce_scatter or alltoall";
        snprintf(buf, sizeof(buf), "busbw/algbw %.2f = (n-1)/n with n = %d ranks%s", f, n,
                 r->redop_kind == 1   ? ", with a reduction"
                 : r->redop_kind == 0 ? ", no reduction"
                                      : "");
    } else if (nt_near(f, 1.0)) {
        if (r->root >= 0) {
            if (r->redop_kind == 1)
                one = "reduce";
            else if (r->redop_kind == 0)
                one = "broadcast";
            else
                several = "broadcast or reduce";
            snprintf(buf, sizeof(buf), "busbw = algbw, root %ld", r->root);
        } else if (n == 2) {
            several = "all_reduce or sendrecv";
            snprintf(buf, sizeof(buf), "busbw = algbw, as both report with 2 ranks");
        } else {
            one = "sendrecv";
            snprintf(buf, sizeof(buf), "busbw = algbw with %d ranks and no root", n);
        }
    }
    if (how && howlen && (one || several))
        snprintf(how, howlen, "%s%s%s", several ? several : "", several ? ": " : "", buf);
    return one;
}
