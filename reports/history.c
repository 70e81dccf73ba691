/* `nettune report --history DIR|FILES`: how each node's figures moved over many reports of one
 * cluster. Per report, per node and per link kind (kind, variant, scope), the median of the
 * peak bandwidth and of the small-message latency of the links the node is an end of; a
 * series of those medians over the reports, ordered by run.started_at. A series drifted when
 * the median of its later half is beyond the probe's own noise rule (nt_verdict_noise_factor:
 * the peer ratio widened to 3 sigma of the log values) against the median of its earlier
 * half: the node's figure moved by more than the judge lets a population's links differ. A
 * drift no run failed (neither the node nor one of those links) is what no single report
 * shows. The rule and its numbers: docs/report-history.md. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nettune/log.h"
#include "nettune/verdict.h"
#include "rpt.h"

/* Fewer runs than this: not judged (two earlier, two later at least). */
#define NT_HIST_MIN_RUNS 4

enum { NT_HF_BW = 0, NT_HF_LAT = 1, NT_HF_COUNT = 2 };
static const char *const nt_hf_keys[NT_HF_COUNT] = {"bw_GBps", "lat_us"};
static const char *const nt_hf_names[NT_HF_COUNT] = {"bw GB/s", "lat us"};
static const int nt_hf_metric[NT_HF_COUNT] = {NT_METRIC_BW, NT_METRIC_LAT};

/* One run's point of a series. */
typedef struct nt_hpoint {
    double t;    /* run.started_at, seconds since the epoch */
    size_t run;  /* index in nt_hist_t.runs */
    double v;    /* the median */
    int failed;  /* the node failed in that run, or one of those links did */
} nt_hpoint_t;

typedef struct nt_hseries {
    char *host, *kind, *variant, *scope; /* owned */
    int fig;
    nt_hpoint_t *p;
    size_t n, cap;
    /* the judgement (nt_hist_judge) */
    int judged, drift;
    size_t failed_runs;
    double earlier, later, factor, change_pct;
} nt_hseries_t;

typedef struct nt_hrun {
    char *path, *id, *started_at; /* owned */
    double t;
} nt_hrun_t;

typedef struct nt_hist {
    nt_hseries_t *s;
    size_t ns, caps;
    size_t *slot; /* open-addressing hash of series indices + 1 (0: empty) */
    size_t nslot;
    nt_hrun_t *runs;
    size_t nruns, capruns;
    char **skipped; /* "path: why", owned */
    size_t nskipped;
    size_t ndrift, ndrift_unfailed;
} nt_hist_t;

static char *nt_hstrdup(const char *s)
{
    return strdup(s ? s : "");
}

static uint64_t nt_hkey(const char *host, const char *kind, const char *variant, const char *scope,
                        int fig)
{
    const char *parts[4] = {host, kind, variant, scope};
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < 4; k++) {
        for (const char *c = parts[k]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return (h ^ (uint64_t)fig) * 1099511628211ull;
}

static int nt_hsame(const nt_hseries_t *s, const char *host, const char *kind, const char *variant,
                    const char *scope, int fig)
{
    return s->fig == fig && !strcmp(s->host, host) && !strcmp(s->kind, kind) &&
           !strcmp(s->variant, variant) && !strcmp(s->scope, scope);
}

/* The series of (host, kind, variant, scope, fig), created when absent; NULL on NT_ERR_NOMEM. */
static nt_hseries_t *nt_hseries_get(nt_hist_t *h, const char *host, const char *kind,
                                    const char *variant, const char *scope, int fig)
{
    if (2 * (h->ns + 1) > h->nslot) {
        size_t nn = h->nslot ? 2 * h->nslot : 1024;
        size_t *ns = calloc(nn, sizeof(*ns));
        if (!ns)
            return NULL;
        for (size_t i = 0; i < h->ns; i++) {
            const nt_hseries_t *s = &h->s[i];
            size_t k = nt_hkey(s->host, s->kind, s->variant, s->scope, s->fig) & (nn - 1);
            while (ns[k])
                k = (k + 1) & (nn - 1);
            ns[k] = i + 1;
        }
        free(h->slot);
        h->slot = ns;
        h->nslot = nn;
    }
    size_t k = nt_hkey(host, kind, variant, scope, fig) & (h->nslot - 1);
    while (h->slot[k]) {
        nt_hseries_t *s = &h->s[h->slot[k] - 1];
        if (nt_hsame(s, host, kind, variant, scope, fig))
            return s;
        k = (k + 1) & (h->nslot - 1);
    }
    if (h->ns == h->caps) {
        size_t nc = h->caps ? 2 * h->caps : 256;
        nt_hseries_t *ns = realloc(h->s, nc * sizeof(*ns));
        if (!ns)
            return NULL;
        h->s = ns;
        h->caps = nc;
    }
    nt_hseries_t *s = &h->s[h->ns];
    memset(s, 0, sizeof(*s));
    s->host = nt_hstrdup(host);
    s->kind = nt_hstrdup(kind);
    s->variant = nt_hstrdup(variant);
    s->scope = nt_hstrdup(scope);
    s->fig = fig;
    if (!s->host || !s->kind || !s->variant || !s->scope) {
        free(s->host), free(s->kind), free(s->variant), free(s->scope);
        return NULL;
    }
    h->slot[k] = ++h->ns;
    return s;
}

static int nt_hpush(nt_hseries_t *s, nt_hpoint_t pt)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 16;
        nt_hpoint_t *np = realloc(s->p, nc * sizeof(*np));
        if (!np)
            return -1;
        s->p = np;
        s->cap = nc;
    }
    s->p[s->n++] = pt;
    return 0;
}

/* A file passed over: kept for the summary's "skipped" list, and said on stderr, one line per
 * file in one form whatever the reason (a reader of stderr alone sees every file left out). */
static int nt_hskip(nt_hist_t *h, const char *path, const char *why)
{
    fprintf(stderr, "nettune report --history: skipped '%s': %s\n", path, why);
    char **ns = realloc(h->skipped, (h->nskipped + 1) * sizeof(*ns));
    size_t len = strlen(path) + strlen(why) + 3;
    if (!ns)
        return -1;
    h->skipped = ns;
    if (!(ns[h->nskipped] = malloc(len)))
        return -1;
    snprintf(ns[h->nskipped++], len, "%s: %s", path, why);
    return 0;
}

/* A link's figure fig, NaN when absent. */
static double nt_hfig(const nt_rlink_t *l, int fig)
{
    return fig == NT_HF_BW ? l->peak_bw_GBps : l->small_msg_lat_us;
}

/* Same population key (kind, variant, scope) of two links. */
static int nt_hsame_kind(const nt_rlink_t *a, const nt_rlink_t *b)
{
    return !strcmp(a->kind, b->kind) && !strcmp(a->variant, b->variant) &&
           !strcmp(a->scope, b->scope);
}

static const nt_rdoc_t *nt_hsort_doc;

/* Links by kind, variant, scope (qsort over indices, nt_hsort_doc). */
static int nt_hcmp_kind(const void *a, const void *b)
{
    const nt_rlink_t *x = &nt_hsort_doc->links[*(const size_t *)a];
    const nt_rlink_t *y = &nt_hsort_doc->links[*(const size_t *)b];
    int c = strcmp(x->kind, y->kind);
    if (!c)
        c = strcmp(x->variant, y->variant);
    return c ? c : strcmp(x->scope, y->scope);
}

/* One report's points: per kind, per node, per figure the median of the node's links. */
static nt_status_t nt_hist_add_doc(nt_hist_t *h, const nt_rdoc_t *doc, size_t run, double t)
{
    size_t *idx = malloc((doc->nlinks + 1) * sizeof(*idx));
    double *v = malloc((2 * doc->nlinks + 1) * sizeof(*v));
    size_t *cnt = calloc(doc->nnodes + 1, sizeof(*cnt)), *off = calloc(doc->nnodes + 2, sizeof(*off));
    char *bad = calloc(doc->nnodes + 1, 1);
    nt_status_t st = NT_ERR_NOMEM;

    if (!idx || !v || !cnt || !off || !bad)
        goto out;
    for (size_t i = 0; i < doc->nlinks; i++)
        idx[i] = i;
    nt_hsort_doc = doc;
    qsort(idx, doc->nlinks, sizeof(*idx), nt_hcmp_kind);
    for (size_t g0 = 0, g1; g0 < doc->nlinks; g0 = g1) {
        const nt_rlink_t *first = &doc->links[idx[g0]];
        for (g1 = g0; g1 < doc->nlinks && nt_hsame_kind(first, &doc->links[idx[g1]]); g1++)
            ;
        for (int fig = 0; fig < NT_HF_COUNT; fig++) {
            /* Bucket the group's figures by end node: counts, offsets, then the values. */
            memset(cnt, 0, doc->nnodes * sizeof(*cnt));
            memset(bad, 0, doc->nnodes);
            for (size_t k = g0; k < g1; k++) {
                const nt_rlink_t *l = &doc->links[idx[k]];
                int ends[2] = {l->src_node, l->dst_node};
                for (int e = 0; e < 2; e++)
                    if (ends[e] >= 0 && (e == 0 || ends[1] != ends[0])) {
                        bad[ends[e]] |= l->verdict == NT_FAIL;
                        cnt[ends[e]] += !isnan(nt_hfig(l, fig));
                    }
            }
            off[0] = 0;
            for (size_t n = 0; n < doc->nnodes; n++)
                off[n + 1] = off[n] + cnt[n];
            memset(cnt, 0, doc->nnodes * sizeof(*cnt));
            for (size_t k = g0; k < g1; k++) {
                const nt_rlink_t *l = &doc->links[idx[k]];
                int ends[2] = {l->src_node, l->dst_node};
                double x = nt_hfig(l, fig);
                for (int e = 0; e < 2 && !isnan(x); e++)
                    if (ends[e] >= 0 && (e == 0 || ends[1] != ends[0]))
                        v[off[ends[e]] + cnt[ends[e]]++] = x;
            }
            for (size_t n = 0; n < doc->nnodes; n++) {
                if (!cnt[n])
                    continue;
                nt_hseries_t *s = nt_hseries_get(h, doc->nodes[n].host, first->kind,
                                                 first->variant, first->scope, fig);
                nt_hpoint_t pt = {t, run, nt_median(v + off[n], cnt[n]),
                                  bad[n] || doc->nodes[n].verdict == NT_FAIL};
                if (!s || nt_hpush(s, pt) != 0)
                    goto out;
            }
        }
    }
    st = NT_OK;
out:
    free(idx);
    free(v);
    free(cnt);
    free(off);
    free(bad);
    return st;
}

static int nt_hcmp_point(const void *a, const void *b)
{
    const nt_hpoint_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->run < y->run ? -1 : x->run > y->run;
}

/* The series' drift: the later half's median against the earlier half's, beyond the probe's
 * noise rule drawn from the earlier half (nt_verdict_noise_factor with the peer ratio). */
static nt_status_t nt_hist_judge(nt_hseries_t *s, const nt_peer_rules_t *peer, double *tmp)
{
    size_t half = s->n / 2;
    qsort(s->p, s->n, sizeof(*s->p), nt_hcmp_point);
    for (size_t i = 0; i < s->n; i++)
        s->failed_runs += s->p[i].failed != 0;
    if (s->n < NT_HIST_MIN_RUNS)
        return NT_OK;
    for (size_t i = 0; i < half; i++)
        tmp[i] = s->p[i].v;
    s->earlier = nt_median(tmp, half);
    for (size_t i = 0; i < half; i++)
        tmp[i] = s->p[s->n - half + i].v;
    s->later = nt_median(tmp, half);
    for (size_t i = 0; i < half; i++)
        tmp[i] = s->p[i].v;
    s->factor = nt_verdict_noise_factor(nt_hf_metric[s->fig],
                                        s->fig == NT_HF_BW ? peer->bw_ratio : peer->lat_ratio,
                                        tmp, half);
    s->change_pct = 100.0 * (s->later / s->earlier - 1.0);
    s->judged = isfinite(s->change_pct) && s->earlier > 0;
    s->drift = s->judged && (s->fig == NT_HF_BW ? s->later < s->factor * s->earlier
                                                : s->later > s->factor * s->earlier);
    return NT_OK;
}

/* Drifts first (those no run failed before the others), by how far beyond, then by host. */
static int nt_hcmp_series(const void *a, const void *b)
{
    const nt_hseries_t *x = a, *y = b;
    int rx = x->drift ? (x->failed_runs ? 1 : 2) : 0, ry = y->drift ? (y->failed_runs ? 1 : 2) : 0;
    if (rx != ry)
        return ry - rx;
    double bx = x->judged ? fabs(x->change_pct) : -1, by = y->judged ? fabs(y->change_pct) : -1;
    if (rx && bx != by)
        return bx < by ? 1 : -1;
    int c = strcmp(x->host, y->host);
    if (!c)
        c = strcmp(x->kind, y->kind);
    if (!c)
        c = strcmp(x->variant, y->variant);
    if (!c)
        c = strcmp(x->scope, y->scope);
    return c ? c : x->fig - y->fig;
}

static int nt_hcmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of path: a folder's *.json (sorted; not recursive), else path itself. A path given
 * that does not exist, or a folder that cannot be listed: NT_ERR_NOT_FOUND / NT_ERR_IO, logged
 * with the path and the OS reason. */
static nt_status_t nt_hist_expand(const char *path, char ***files, size_t *n, size_t *cap)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        NT_ERROR(REPORT, "--history: cannot read '%s': %s", path, strerror(errno));
        return NT_ERR_NOT_FOUND;
    }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        size_t first = *n;
        if (!d) {
            NT_ERROR(REPORT, "--history: cannot list the folder '%s': %s", path, strerror(errno));
            return NT_ERR_IO;
        }
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
                continue;
            if (*n == *cap) {
                size_t nc = *cap ? 2 * *cap : 64;
                char **nf = realloc(*files, nc * sizeof(*nf));
                if (!nf) {
                    closedir(d);
                    return NT_ERR_NOMEM;
                }
                *files = nf;
                *cap = nc;
            }
            size_t l = strlen(path) + len + 2;
            if (!((*files)[*n] = malloc(l))) {
                closedir(d);
                return NT_ERR_NOMEM;
            }
            snprintf((*files)[(*n)++], l, "%s/%s", path, e->d_name);
        }
        closedir(d);
        if (*n > first) /* an empty folder has no array to sort (qsort(NULL, 0) is UB) */
            qsort(*files + first, *n - first, sizeof(**files), nt_hcmp_str);
        return NT_OK;
    }
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        char **nf = realloc(*files, nc * sizeof(*nf));
        if (!nf)
            return NT_ERR_NOMEM;
        *files = nf;
        *cap = nc;
    }
    return ((*files)[(*n)++] = strdup(path)) ? NT_OK : NT_ERR_NOMEM;
}

static void nt_hist_free(nt_hist_t *h)
{
    for (size_t i = 0; i < h->ns; i++) {
        free(h->s[i].host), free(h->s[i].kind), free(h->s[i].variant), free(h->s[i].scope);
        free(h->s[i].p);
    }
    for (size_t i = 0; i < h->nruns; i++)
        free(h->runs[i].path), free(h->runs[i].id), free(h->runs[i].started_at);
    for (size_t i = 0; i < h->nskipped; i++)
        free(h->skipped[i]);
    free(h->s);
    free(h->slot);
    free(h->runs);
    free(h->skipped);
}

/* Read every file: a report becomes a run and its points; anything else is skipped, with why. */
static nt_status_t nt_hist_read(nt_hist_t *h, char **files, size_t nfiles)
{
    for (size_t i = 0; i < nfiles; i++) {
        nt_rdoc_t doc;
        char reason[1024], why[256];
        /* the reason kept, not logged: nt_hskip says it, the same way for every file */
        nt_status_t st = nt_rdoc_open_why(files[i], &doc, reason, sizeof(reason));
        const cJSON *run;
        double t;
        if (st == NT_ERR_NOMEM)
            return st;
        if (st != NT_OK || doc.kind != NT_DOC_REPORT) {
            if (st == NT_ERR_PARSE)
                snprintf(why, sizeof(why), "not JSON");
            else if (st == NT_ERR_NOT_FOUND || st == NT_ERR_IO)
                snprintf(why, sizeof(why), "cannot be read");
            else if (doc.schema)
                snprintf(why, sizeof(why), "a %.80s document, not a " NT_REPORT_SCHEMA, doc.schema);
            else
                snprintf(why, sizeof(why), "not a nettune document (not an object with a \"schema\" key)");
            nt_rdoc_close(&doc);
            if (nt_hskip(h, files[i], why) != 0)
                return NT_ERR_NOMEM;
            continue;
        }
        run = cJSON_GetObjectItemCaseSensitive(doc.root, "run");
        t = nt_rfc3339_seconds(nt_json_get_str(run, "started_at", NULL));
        if (isnan(t)) {
            nt_rdoc_close(&doc);
            if (nt_hskip(h, files[i], "no run.started_at: its place in time is unknown") != 0)
                return NT_ERR_NOMEM;
            continue;
        }
        if (h->nruns == h->capruns) {
            size_t nc = h->capruns ? 2 * h->capruns : 64;
            nt_hrun_t *nr = realloc(h->runs, nc * sizeof(*nr));
            if (!nr) {
                nt_rdoc_close(&doc);
                return NT_ERR_NOMEM;
            }
            h->runs = nr;
            h->capruns = nc;
        }
        nt_hrun_t *r = &h->runs[h->nruns];
        r->path = strdup(files[i]);
        r->id = nt_hstrdup(nt_json_get_str(run, "id", ""));
        r->started_at = nt_hstrdup(nt_json_get_str(run, "started_at", ""));
        r->t = t;
        h->nruns++;
        st = !r->path || !r->id || !r->started_at ? NT_ERR_NOMEM
                                                  : nt_hist_add_doc(h, &doc, h->nruns - 1, t);
        nt_rdoc_close(&doc);
        if (st != NT_OK)
            return st;
    }
    return NT_OK;
}

static void nt_hlabel(const nt_hseries_t *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s %s", s->kind, s->variant[0] ? "." : "", s->variant, s->scope);
}

static void nt_hist_text(const nt_hist_t *h, const nt_history_opts_t *o, nt_table_style_t style,
                         nt_buf_t *out)
{
    int md = style == NT_TABLE_MD;
    const char *ind = md ? "- " : "  ";
    const nt_hrun_t *first = NULL, *last = NULL;
    size_t judged = 0;
    static const char *const head[] = {"node",    "kind",   "figure", "runs",  "earlier", "later",
                                       "change",  "limit",  "failed runs", "drift"};

    for (size_t i = 0; i < h->nruns; i++) {
        if (!first || h->runs[i].t < first->t)
            first = &h->runs[i];
        if (!last || h->runs[i].t > last->t)
            last = &h->runs[i];
    }
    for (size_t i = 0; i < h->ns; i++)
        judged += (size_t)h->s[i].judged;
    nt_buf_printf(out, "%snettune report --history: ", md ? "# " : "");
    if (h->ndrift_unfailed)
        nt_buf_printf(out, "DRIFT: %zu series drifted beyond the noise, no run failed them",
                      h->ndrift_unfailed);
    else if (h->ndrift)
        nt_buf_printf(out, "drift: %zu series drifted beyond the noise, each failed in a run",
                      h->ndrift);
    else
        nt_buf_printf(out, judged ? "no drift beyond the noise" : "nothing judged");
    nt_buf_printf(out, "%s", md ? "\n\n" : "\n");
    nt_buf_printf(out, "%sreports: %zu read", ind, h->nruns);
    if (first)
        nt_buf_printf(out, ", %s .. %s", first->started_at, last->started_at);
    nt_buf_printf(out, "; %zu series (node x link kind x figure), %zu judged", h->ns, judged);
    if (judged < h->ns)
        nt_buf_printf(out, ", %zu not judged: fewer than %d runs with the figure", h->ns - judged,
                      NT_HIST_MIN_RUNS);
    nt_buf_puts(out, "\n");
    if (h->nskipped) {
        nt_buf_printf(out, "%s%zu file%s skipped:", ind, h->nskipped, h->nskipped == 1 ? "" : "s");
        for (size_t i = 0; i < h->nskipped && i < 5; i++)
            nt_buf_printf(out, "%s %s", i ? ";" : "", h->skipped[i]);
        if (h->nskipped > 5)
            nt_buf_printf(out, "; ... and %zu more", h->nskipped - 5);
        nt_buf_puts(out, "\n");
    }
    nt_buf_printf(out,
                  "%srule: per run, the median of a node's links of one kind; the median of the "
                  "later half of its runs against the earlier half's, beyond the probe's noise "
                  "rule (the peer ratio, bw %.2f, lat %.1f, widened to 3 sigma of the earlier "
                  "runs)\n",
                  ind, o->peer.bw_ratio, o->peer.lat_ratio);
    size_t total = h->ns, cap = o->top ? o->top : total, shown = 0;
    if (!total)
        return;
    nt_buf_printf(out, md ? "\n## Trends (%zu series, drifts first)\n\n" : "\nTrends (%zu series, drifts first)\n", total);
    nt_table_t t;
    nt_table_init(&t, 10, "lllrrrrrrl", head);
    for (size_t i = 0; i < h->ns && shown < cap; i++, shown++) {
        const nt_hseries_t *s = &h->s[i];
        char lab[96], a[32], b[32], c[32], l[32];
        nt_hlabel(s, lab, sizeof(lab));
        nt_table_cell(&t, 0, "%s", s->host);
        nt_table_cell(&t, 0, "%s", lab);
        nt_table_cell(&t, 0, "%s", nt_hf_names[s->fig]);
        nt_table_cell(&t, 0, "%zu", s->n);
        nt_table_cell(&t, 0, "%s", s->judged ? nt_fmt_num(a, sizeof(a), s->earlier, 3) : "-");
        nt_table_cell(&t, 0, "%s", s->judged ? nt_fmt_num(b, sizeof(b), s->later, 3) : "-");
        if (s->judged)
            snprintf(c, sizeof(c), "%+.1f%%", s->change_pct);
        else
            snprintf(c, sizeof(c), "-");
        nt_table_cell(&t, s->drift ? 1 + NT_FAIL : 0, "%s", c);
        if (s->judged)
            snprintf(l, sizeof(l), "%+.1f%%", 100.0 * (s->factor - 1.0));
        else
            snprintf(l, sizeof(l), "-");
        nt_table_cell(&t, 0, "%s", l);
        nt_table_cell(&t, 0, "%zu", s->failed_runs);
        nt_table_cell(&t, s->drift ? 1 + NT_FAIL : 0, "%s",
                      !s->judged  ? "not judged"
                      : !s->drift ? "no"
                      : s->failed_runs ? "yes (failed in a run)"
                                       : "YES (no run failed it)");
    }
    nt_table_emit(&t, out, style, o->color, 2);
    nt_table_cleanup(&t);
    if (shown < total)
        nt_buf_printf(out,
                      md ? "\n_... and %zu more (--top 0 shows all)._\n"
                         : "  ... and %zu more (--top 0 shows all)\n",
                      total - shown);
}

static nt_status_t nt_hist_json(const nt_hist_t *h, const nt_history_opts_t *o, nt_buf_t *out)
{
    cJSON *root = cJSON_CreateObject(), *runs, *skipped, *series, *rule;
    int bad = !root;
    char *text;

    if (!root)
        return NT_ERR_NOMEM;
    bad |= nt_json_add_str(root, "schema", NT_HISTORY_SCHEMA) != NT_OK;
    bad |= nt_json_add_bool(root, "drift", h->ndrift_unfailed > 0) != NT_OK;
    bad |= nt_json_add_num(root, "drifts", (double)h->ndrift) != NT_OK;
    bad |= nt_json_add_num(root, "drifts_no_run_failed", (double)h->ndrift_unfailed) != NT_OK;
    rule = nt_json_add_obj(root, "rule");
    bad |= !rule || nt_json_add_num(rule, "min_runs", NT_HIST_MIN_RUNS) ||
           nt_json_add_num(rule, "bw_ratio", o->peer.bw_ratio) ||
           nt_json_add_num(rule, "lat_ratio", o->peer.lat_ratio) ||
           nt_json_add_num(rule, "noise_sigmas", 3);
    runs = nt_json_add_arr(root, "runs");
    for (size_t i = 0; runs && i < h->nruns; i++) {
        cJSON *r = cJSON_CreateObject();
        bad |= !r || !cJSON_AddItemToArray(runs, r) || nt_json_add_str(r, "path", h->runs[i].path) ||
               nt_json_add_str(r, "run_id", h->runs[i].id) ||
               nt_json_add_str(r, "started_at", h->runs[i].started_at);
    }
    skipped = nt_json_add_arr(root, "skipped");
    for (size_t i = 0; skipped && i < h->nskipped; i++) {
        cJSON *x = cJSON_CreateString(h->skipped[i]);
        bad |= !x || !cJSON_AddItemToArray(skipped, x);
    }
    series = nt_json_add_arr(root, "series");
    for (size_t i = 0; series && i < h->ns && !bad; i++) {
        const nt_hseries_t *s = &h->s[i];
        const char *key = nt_hf_keys[s->fig];
        char k1[32], k2[32];
        cJSON *o2 = cJSON_CreateObject(), *pts;
        if (!o2 || !cJSON_AddItemToArray(series, o2)) {
            cJSON_Delete(o2);
            bad = 1;
            break;
        }
        snprintf(k1, sizeof(k1), "earlier_%s", key);
        snprintf(k2, sizeof(k2), "later_%s", key);
        bad |= nt_json_add_str(o2, "host", s->host) || nt_json_add_str(o2, "kind", s->kind) ||
               nt_json_add_str(o2, "variant", s->variant[0] ? s->variant : NULL) ||
               nt_json_add_str(o2, "scope", s->scope) || nt_json_add_str(o2, "figure", key) ||
               nt_json_add_num(o2, "runs", (double)s->n) ||
               nt_json_add_bool(o2, "judged", s->judged) ||
               nt_json_add_str(o2, "not_judged",
                               s->judged ? NULL : "fewer than 4 runs with the figure") ||
               nt_json_add_num(o2, k1, s->judged ? s->earlier : NAN) ||
               nt_json_add_num(o2, k2, s->judged ? s->later : NAN) ||
               nt_json_add_num(o2, "change_pct", s->judged ? s->change_pct : NAN) ||
               nt_json_add_num(o2, "limit_factor", s->judged ? s->factor : NAN) ||
               nt_json_add_bool(o2, "drift", s->drift) ||
               nt_json_add_num(o2, "failed_runs", (double)s->failed_runs);
        pts = nt_json_add_arr(o2, "points");
        for (size_t k = 0; pts && k < s->n; k++) {
            cJSON *p = cJSON_CreateObject();
            bad |= !p || !cJSON_AddItemToArray(pts, p) ||
                   nt_json_add_str(p, "started_at", h->runs[s->p[k].run].started_at) ||
                   nt_json_add_num(p, key, s->p[k].v) ||
                   nt_json_add_bool(p, "failed", s->p[k].failed);
        }
        bad |= !pts;
    }
    bad |= !runs || !skipped || !series;
    if (!bad && (text = cJSON_PrintUnformatted(root))) {
        nt_buf_puts(out, text);
        nt_buf_puts(out, "\n");
        free(text);
        cJSON_Delete(root);
        return NT_OK;
    }
    cJSON_Delete(root);
    return NT_ERR_NOMEM;
}

static void nt_hist_prom_labels(nt_buf_t *out, const nt_hseries_t *s)
{
    nt_prom_label(out, 1, "host", s->host);
    nt_prom_label(out, 0, "kind", s->kind);
    nt_prom_label(out, 0, "variant", s->variant);
    nt_prom_label(out, 0, "scope", s->scope);
    nt_prom_label(out, 0, "figure", nt_hf_keys[s->fig]);
    nt_buf_puts(out, "}");
}

static void nt_hist_prom(const nt_hist_t *h, nt_buf_t *out)
{
    nt_prom_family(out, "nettune_history_drift",
                   "1 when the later half of the runs is beyond the probe's noise rule against the "
                   "earlier half, 2 when no run failed it either, 0 when not, -2 not judged");
    for (size_t i = 0; i < h->ns; i++) {
        const nt_hseries_t *s = &h->s[i];
        nt_buf_puts(out, "nettune_history_drift");
        nt_hist_prom_labels(out, s);
        nt_prom_value(out, !s->judged ? -2 : !s->drift ? 0 : s->failed_runs ? 1 : 2);
    }
    nt_prom_family(out, "nettune_history_change_ratio",
                   "later-half median over earlier-half median, minus 1");
    for (size_t i = 0; i < h->ns; i++)
        if (h->s[i].judged) {
            nt_buf_puts(out, "nettune_history_change_ratio");
            nt_hist_prom_labels(out, &h->s[i]);
            nt_prom_value(out, h->s[i].change_pct / 100.0);
        }
    nt_prom_family(out, "nettune_history_latest",
                   "the node's median of the newest run (figure: bw_GBps in bytes/s, lat_us in "
                   "seconds)");
    for (size_t i = 0; i < h->ns; i++) {
        const nt_hseries_t *s = &h->s[i];
        if (!s->n)
            continue;
        nt_buf_puts(out, "nettune_history_latest");
        nt_hist_prom_labels(out, s);
        nt_prom_value(out, s->p[s->n - 1].v * (s->fig == NT_HF_BW ? 1e9 : 1e-6));
    }
    nt_prom_family(out, "nettune_history_runs", "reports read");
    nt_buf_puts(out, "nettune_history_runs");
    nt_prom_value(out, (double)h->nruns);
}

nt_status_t nt_history(char **paths, int npaths, const nt_history_opts_t *o, const char *format,
                       nt_buf_t *out, int *drifted)
{
    nt_hist_t h;
    char **files = NULL;
    size_t nfiles = 0, cap = 0, maxn = 0;
    double *tmp = NULL;
    nt_status_t st = NT_OK;

    memset(&h, 0, sizeof(h));
    *drifted = 0;
    for (int i = 0; i < npaths && st == NT_OK; i++)
        st = nt_hist_expand(paths[i], &files, &nfiles, &cap);
    if (st == NT_OK)
        st = nt_hist_read(&h, files, nfiles);
    /* A folder with no report in it (an empty one, a wrong one in a cron job) is nothing to
     * analyse, not a quiet "nothing judged". */
    if (st == NT_OK && h.nruns == 0) {
        NT_ERROR(REPORT, "--history: no nettune report among the %zu file(s) given%s: name a folder "
                         "of probe reports or the reports themselves",
                 nfiles, nfiles ? " (each was skipped: not a report, or no run.started_at)" : "");
        st = NT_ERR_NOT_FOUND;
    }
    for (size_t i = 0; i < h.ns; i++)
        maxn = h.s[i].n > maxn ? h.s[i].n : maxn;
    if (st == NT_OK && !(tmp = malloc((maxn + 1) * sizeof(*tmp))))
        st = NT_ERR_NOMEM;
    for (size_t i = 0; st == NT_OK && i < h.ns; i++) {
        st = nt_hist_judge(&h.s[i], &o->peer, tmp);
        h.ndrift += (size_t)h.s[i].drift;
        h.ndrift_unfailed += h.s[i].drift && !h.s[i].failed_runs;
    }
    if (st == NT_OK) {
        qsort(h.s, h.ns, sizeof(*h.s), nt_hcmp_series);
        *drifted = h.ndrift > 0;
        if (!strcmp(format, "json"))
            st = nt_hist_json(&h, o, out);
        else if (!strcmp(format, "prom"))
            nt_hist_prom(&h, out);
        else if (!strcmp(format, "md"))
            nt_hist_text(&h, o, NT_TABLE_MD, out);
        else if (!strcmp(format, "text"))
            nt_hist_text(&h, o, NT_TABLE_TEXT, out);
        else
            st = NT_ERR_UNSUPPORTED;
    }
    if (st == NT_OK && out->oom)
        st = NT_ERR_NOMEM;
    free(tmp);
    for (size_t i = 0; i < nfiles; i++)
        free(files[i]);
    free(files);
    nt_hist_free(&h);
    return st;
}
