/* Verdicts for the report (see judge.h), on the engine of lib/verdict.c and the rules of
 * lib/thresholds.c. One nt_vlink_t per (link, message size, metric): a bandwidth sample gives a
 * bandwidth figure (its p50), a latency sample a latency figure (its p50). The link's verdict
 * is the worst of its figures' verdicts, with every reason. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"
#include "nettune/verdict.h"

typedef struct nt_silent {
    char host[256];
    char why[256];
} nt_silent_t;

/* A set of link ids: appended to, then sealed (sorted, repeats dropped) and searched. */
typedef struct nt_idset {
    char **id;
    int n;
} nt_idset_t;

struct nt_judge {
    nt_thresholds_t *thresholds;
    nt_expect_t expect_override; /* --expect */
    unsigned require;            /* --require */
    int strict;
    nt_silent_t *silent; /* nodes that stopped answering (nt_judge_node_silent) */
    int nsilent;
    nt_idset_t ctl;    /* ids of the control links of the last retest (nt_judge_retest_pairs) */
    nt_idset_t target; /* ids of the links that the last retest is for */
};

static void nt_idset_free(nt_idset_t *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->id[i]);
    free(s->id);
    s->id = NULL;
    s->n = 0;
}

/* Add a copy of id; 0, or -1 out of memory (the set is left as it was). */
static int nt_idset_add(nt_idset_t *s, const char *id)
{
    char **grown = realloc(s->id, sizeof(*grown) * (size_t)(s->n + 1));
    if (!grown)
        return -1;
    s->id = grown;
    if (!(s->id[s->n] = strdup(id)))
        return -1;
    s->n++;
    return 0;
}

static int nt_cmp_strp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the ids and drop repeats (nt_idset_has searches them). */
static void nt_idset_seal(nt_idset_t *s)
{
    int m = 0;
    if (s->n > 1)
        qsort(s->id, (size_t)s->n, sizeof(*s->id), nt_cmp_strp);
    for (int i = 0; i < s->n; i++) {
        if (m > 0 && strcmp(s->id[m - 1], s->id[i]) == 0)
            free(s->id[i]);
        else
            s->id[m++] = s->id[i];
    }
    s->n = m;
}

static int nt_idset_has(const nt_idset_t *s, const char *id)
{
    return s->n > 0 && bsearch(&id, s->id, (size_t)s->n, sizeof(*s->id), nt_cmp_strp);
}

static int nt_judge_is_ctl(const nt_judge_t *j, const char *id)
{
    return nt_idset_has(&j->ctl, id);
}

int nt_judge_is_control(const nt_judge_t *j, const char *id)
{
    return j && id && nt_judge_is_ctl(j, id);
}

/* ---- indexes: a report of 1,000 nodes --full has 499,500 links, so nothing below looks a
 * link (or a node) up by scanning them all; string and rank-pair keys go through these
 * open-addressing tables (sized once, for a known number of keys). ---- */

typedef struct nt_strmap {
    const char **keys; /* NULL: empty slot; the strings belong to the caller's documents */
    size_t *vals;
    size_t mask;
} nt_strmap_t;

static uint64_t nt_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static uint64_t nt_hash_u64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; /* splitmix64's finaliser */
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Room for n keys (a load of at most one half). NT_ERR_NOMEM. */
static nt_status_t nt_strmap_init(nt_strmap_t *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof(*m->keys));
    m->vals = calloc(cap, sizeof(*m->vals));
    m->mask = cap - 1;
    return m->keys && m->vals ? NT_OK : NT_ERR_NOMEM;
}

static void nt_strmap_free(nt_strmap_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* The value of key, or SIZE_MAX. */
static size_t nt_strmap_get(const nt_strmap_t *m, const char *key)
{
    if (!m->keys)
        return SIZE_MAX;
    for (size_t i = nt_hash_str(key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
        if (strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    return SIZE_MAX;
}

/* Set key to val unless key is there already (the first value stays). */
static void nt_strmap_add(nt_strmap_t *m, const char *key, size_t val)
{
    size_t i = nt_hash_str(key) & m->mask;
    for (; m->keys[i]; i = (i + 1) & m->mask)
        if (strcmp(m->keys[i], key) == 0)
            return;
    m->keys[i] = key;
    m->vals[i] = val;
}

typedef struct nt_u64map {
    uint64_t *keys;
    size_t *vals; /* SIZE_MAX: empty slot */
    size_t mask;
} nt_u64map_t;

static nt_status_t nt_u64map_init(nt_u64map_t *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    m->keys = calloc(cap, sizeof(*m->keys));
    m->vals = malloc(cap * sizeof(*m->vals));
    m->mask = cap - 1;
    if (!m->keys || !m->vals)
        return NT_ERR_NOMEM;
    memset(m->vals, 0xff, cap * sizeof(*m->vals));
    return NT_OK;
}

static void nt_u64map_free(nt_u64map_t *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* The slot of key: its value (SIZE_MAX when absent: the caller may set it). */
static size_t *nt_u64map_slot(nt_u64map_t *m, uint64_t key)
{
    size_t i = nt_hash_u64(key) & m->mask;
    for (; m->vals[i] != SIZE_MAX; i = (i + 1) & m->mask)
        if (m->keys[i] == key)
            return &m->vals[i];
    m->keys[i] = key;
    return &m->vals[i];
}

/* The key of an unordered pair of ranks (both >= 0). */
static uint64_t nt_rank_pair_key(int a, int b)
{
    unsigned lo = (unsigned)(a < b ? a : b), hi = (unsigned)(a < b ? b : a);
    return ((uint64_t)lo << 32) | hi;
}

/* Links of a document by id, each id's links in document order (first[], next[]: indices
 * into item[], SIZE_MAX ends a chain). The ids are copied (ids[]): a link held as text is
 * parsed only while it is read. */
typedef struct nt_link_ix {
    cJSON **item;
    size_t *next;
    size_t n;
    char *ids;
    nt_strmap_t first;
} nt_link_ix_t;

static void nt_link_ix_free(nt_link_ix_t *ix)
{
    free(ix->item);
    free(ix->next);
    free(ix->ids);
    nt_strmap_free(&ix->first);
    memset(ix, 0, sizeof(*ix));
}

static nt_status_t nt_link_ix_build(nt_link_ix_t *ix, cJSON *links)
{
    size_t *last, *off, used = 0, cap = 4096;
    cJSON *item;

    memset(ix, 0, sizeof(*ix));
    ix->n = (size_t)cJSON_GetArraySize(links);
    ix->item = calloc(ix->n + 1, sizeof(*ix->item));
    ix->next = calloc(ix->n + 1, sizeof(*ix->next));
    ix->ids = malloc(cap);
    last = calloc(ix->n + 1, sizeof(*last));
    off = calloc(ix->n + 1, sizeof(*off));
    if (!ix->item || !ix->next || !ix->ids || !last || !off ||
        nt_strmap_init(&ix->first, ix->n) != NT_OK)
        goto nomem;
    ix->n = 0;
    cJSON_ArrayForEach (item, links) {
        cJSON *l = nt_json_thaw(item);
        const char *id = nt_json_get_str(l, "id", "");
        size_t len = strlen(id) + 1;
        if (used + len > cap) {
            char *grown;
            while (used + len > cap)
                cap *= 2;
            if (!(grown = realloc(ix->ids, cap))) {
                nt_json_thaw_end(item, l, 0);
                goto nomem;
            }
            ix->ids = grown;
        }
        memcpy(ix->ids + used, id, len);
        nt_json_thaw_end(item, l, 0);
        off[ix->n] = used;
        used += len;
        ix->item[ix->n++] = item;
    }
    for (size_t i = 0; i < ix->n; i++) {
        const char *id = ix->ids + off[i];
        size_t f = nt_strmap_get(&ix->first, id);
        ix->next[i] = SIZE_MAX;
        if (f == SIZE_MAX) {
            nt_strmap_add(&ix->first, id, i);
            last[i] = i;
        } else {
            ix->next[last[f]] = i;
            last[f] = i;
        }
    }
    free(last);
    free(off);
    return NT_OK;
nomem:
    free(last);
    free(off);
    nt_link_ix_free(ix);
    return NT_ERR_NOMEM;
}

/* The first link of id, or SIZE_MAX; then ix->next[] through the others. */
static size_t nt_link_ix_find(const nt_link_ix_t *ix, const char *id)
{
    return nt_strmap_get(&ix->first, id);
}

nt_status_t nt_judge_create(const nt_probe_params_t *params, nt_judge_t **out)
{
    nt_judge_t *j = calloc(1, sizeof(*j));
    char err[512];
    nt_status_t st;

    *out = NULL;
    if (!j)
        return NT_ERR_NOMEM;
    st = params->thresholds
             ? nt_thresholds_load(params->thresholds, &j->thresholds, err, sizeof(err))
             : nt_thresholds_defaults(&j->thresholds);
    if (st != NT_OK) {
        if (params->thresholds)
            NT_ERROR(VERDICT, "%s (fix the file, or start from nettune probe --print-thresholds)",
                     err);
        free(j);
        return st;
    }
    nt_expect_init(&j->expect_override);
    if (params->expect && (st = nt_expect_parse(params->expect, NT_EXPECT_FOR_PROBE,
                                                &j->expect_override, err, sizeof(err))) != NT_OK) {
        NT_ERROR(VERDICT, "%s", err);
        nt_thresholds_destroy(j->thresholds);
        free(j);
        return st;
    }
    j->require = params->require;
    j->strict = params->strict;
    *out = j;
    return NT_OK;
}

void nt_judge_destroy(nt_judge_t *j)
{
    if (!j)
        return;
    nt_thresholds_destroy(j->thresholds);
    free(j->silent);
    nt_idset_free(&j->ctl);
    nt_idset_free(&j->target);
    free(j);
}

void nt_judge_node_silent(nt_judge_t *j, const char *host, const char *why)
{
    nt_silent_t *grown;
    if (!j || !host || !*host)
        return;
    for (int i = 0; i < j->nsilent; i++)
        if (strcmp(j->silent[i].host, host) == 0)
            return; /* the first reason stands */
    grown = realloc(j->silent, sizeof(*grown) * (size_t)(j->nsilent + 1));
    if (!grown)
        return;
    j->silent = grown;
    snprintf(grown[j->nsilent].host, sizeof(grown->host), "%s", host);
    snprintf(grown[j->nsilent].why, sizeof(grown->why), "%s",
             why && *why ? why : "stopped answering");
    j->nsilent++;
}

nt_status_t nt_judge_print_thresholds(FILE *f)
{
    nt_thresholds_t *t = NULL;
    cJSON *doc = NULL;
    char *txt;
    nt_status_t st = nt_thresholds_defaults(&t);

    if (st == NT_OK)
        st = nt_thresholds_to_json(t, &doc);
    nt_thresholds_destroy(t);
    if (st != NT_OK)
        return st;
    txt = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!txt)
        return NT_ERR_NOMEM;
    fprintf(f, "%s\n", txt);
    free(txt);
    return NT_OK;
}

static const char *nt_node_gpu_model(const cJSON *node)
{
    const cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(node, "gpus"), 0);
    return g ? nt_json_get_str(g, "name", NULL) : NULL;
}

static void nt_rules_for(const nt_judge_t *j, const char *host, const cJSON *node,
                         nt_node_rules_t *r)
{
    nt_thresholds_for_host(j->thresholds, host, node ? nt_node_gpu_model(node) : NULL, r);
    nt_expect_override(&r->expect, &j->expect_override);
}

void nt_judge_node_checks(const nt_judge_t *j, const char *host, const cJSON *node_json,
                          cJSON *checks)
{
    nt_node_rules_t r;
    const cJSON *nics = cJSON_GetObjectItemCaseSensitive(node_json, "nics");
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(node_json, "gpus");
    const cJSON *it;
    int active = 0, unknown_state = 0, unknown_rate = 0;
    double min_rate = NAN;

    nt_rules_for(j, host, node_json, &r);
    cJSON_ArrayForEach (it, nics) {
        const char *state = nt_json_get_str(it, "state", "");
        /* A state hwloc or sysfs did not record is unknown, not "not ACTIVE". */
        if (!*state || strcasecmp(state, "unknown") == 0) {
            unknown_state++;
            continue;
        }
        if (strcmp(state, "ACTIVE") != 0)
            continue;
        double rate = nt_json_get_num(it, "rate_Gbps", NAN);
        active++;
        if (!(rate > 0))
            unknown_rate++;
        else if (!isfinite(min_rate) || rate < min_rate)
            min_rate = rate;
    }
    nt_inventory_check(&r.expect, j->require, cJSON_GetArraySize(gpus), active, unknown_state,
                       min_rate, unknown_rate, host, checks);
    /* pcie=genXxW: each GPU's and NIC's capability against the expectation. */
    if (r.expect.pcie_gen > 0 && cJSON_GetArraySize(gpus) + cJSON_GetArraySize(nics) == 0) {
        /* Nothing to hold to it: said, never silently dropped. */
        cJSON *c = nt_check_create("inventory", host, "pcie", NT_NOT_JUDGED, NAN, NAN, NULL,
                                   "gen%dx%d expected: no GPU or NIC found on this node, not "
                                   "judged",
                                   r.expect.pcie_gen, r.expect.pcie_width);
        if (c)
            cJSON_AddItemToArray(checks, c);
    }
    if (r.expect.pcie_gen > 0) {
        const cJSON *lists[2] = {gpus, nics};
        for (int k = 0; k < 2; k++) {
            cJSON_ArrayForEach (it, lists[k]) {
                const cJSON *pc = cJSON_GetObjectItemCaseSensitive(it, "pcie");
                char msg[256] = "", label[64];
                const char *bdf = nt_json_get_str(it, "pci_bus_id", "?");
                nt_verdict_t v;
                if (k == 0)
                    snprintf(label, sizeof(label), "GPU %d", (int)nt_json_get_num(it, "index", -1));
                else
                    snprintf(label, sizeof(label), "%s", nt_json_get_str(it, "name", "NIC"));
                if (!pc) {
                    /* Never a silent pass: say that the expectation could not be judged. */
                    cJSON *c = nt_check_create(
                        "inventory", host, label, NT_NOT_JUDGED, NAN, NAN, NULL,
                        "%s (%s): PCIe link state unknown (no sysfs link files here, or a "
                        "topology file from another machine): gen%dx%d expected, not judged",
                        bdf, label, r.expect.pcie_gen, r.expect.pcie_width);
                    if (c)
                        cJSON_AddItemToArray(checks, c);
                    continue;
                }
                v = nt_expect_pcie_judge(&r.expect, bdf, label,
                                         (int)nt_json_get_num(pc, "max_gen", 0),
                                         (int)nt_json_get_num(pc, "max_width", 0),
                                         (int)nt_json_get_num(pc, "width", 0), msg, sizeof(msg));
                {
                    cJSON *c =
                        nt_check_create("inventory", host, label, v, NAN, NAN, NULL, "%s",
                                        msg[0] ? msg : "PCIe capability unknown: not judged");
                    if (c)
                        cJSON_AddItemToArray(checks, c);
                }
            }
        }
    }
}

/* ---- links -> figures -> verdicts ---- */

typedef struct nt_fig {
    cJSON *link; /* the links[] item (its text, when the report holds links as text) */
    size_t li;   /* its index in links[] */
    int metric;
    size_t bytes;
} nt_fig_t;

/* Strings that outlive the link they come from (a link held as text is parsed and freed
 * again): kinds and scopes, a handful per report, interned. */
typedef struct nt_strs {
    char **s;
    int n;
} nt_strs_t;

static const char *nt_strs_intern(nt_strs_t *t, const char *str)
{
    char **grown;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->s[i], str) == 0)
            return t->s[i];
    grown = realloc(t->s, sizeof(*grown) * (size_t)(t->n + 1));
    if (!grown)
        return NULL;
    t->s = grown;
    if (!(t->s[t->n] = strdup(str)))
        return NULL;
    return t->s[t->n++];
}

static void nt_strs_free(nt_strs_t *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    t->s = NULL;
    t->n = 0;
}

typedef struct nt_figs {
    nt_vlink_t *v;
    nt_fig_t *f;
    size_t n, cap;
    char **hosts;        /* node index -> host */
    const char **models; /* node index -> GPU model (NULL: none), for thresholds classes */
    cJSON **node_objs;   /* node index -> nodes[] entry */
    nt_strmap_t hostix;  /* host -> its first node index */
    nt_strs_t strs;      /* the figures' kinds and scopes */
    int nnodes;
} nt_figs_t;

static int nt_node_index(const nt_figs_t *fs, const char *host)
{
    size_t i = nt_strmap_get(&fs->hostix, host);
    return i == SIZE_MAX ? -1 : (int)i;
}

static void nt_figs_free(nt_figs_t *fs)
{
    free(fs->v);
    free(fs->f);
    free(fs->hosts);
    free(fs->models);
    free(fs->node_objs);
    nt_strmap_free(&fs->hostix);
    nt_strs_free(&fs->strs);
    memset(fs, 0, sizeof(*fs));
}

static int nt_figs_push(nt_figs_t *fs, cJSON *item, size_t li, const cJSON *link, int metric,
                        size_t bytes, double value, double expected, int src, int dst)
{
    const char *kind, *scope;
    if (fs->n == fs->cap) {
        size_t cap = fs->cap ? fs->cap * 2 : 64;
        nt_vlink_t *nv = realloc(fs->v, cap * sizeof(*nv));
        nt_fig_t *nf;
        if (!nv)
            return -1;
        fs->v = nv;
        nf = realloc(fs->f, cap * sizeof(*nf));
        if (!nf)
            return -1;
        fs->f = nf;
        fs->cap = cap;
    }
    memset(&fs->v[fs->n], 0, sizeof(nt_vlink_t));
    /* Links of one kind form one population, except RDMA from GPU memory, whose figures are
     * not those of host memory (PCIe P2P to the NIC, GPUDirect). */
    kind = nt_strs_intern(&fs->strs,
                          strcmp(nt_json_get_str(link, "memory", "host"), "gpu") == 0
                              ? "rdma (GPU memory)"
                              : nt_json_get_str(link, "peer_class", /* GPU links: docs/gpu.md */
                                                nt_json_get_str(link, "kind", "?")));
    scope = nt_strs_intern(&fs->strs, nt_json_get_str(link, "scope", ""));
    if (!kind || !scope)
        return -1;
    fs->v[fs->n].kind = kind;
    fs->v[fs->n].scope = scope;
    fs->v[fs->n].bytes = bytes;
    fs->v[fs->n].metric = metric;
    fs->v[fs->n].value = value;
    fs->v[fs->n].expected = expected;
    fs->v[fs->n].src_node = src;
    fs->v[fs->n].dst_node = dst;
    fs->v[fs->n].retest_value = NAN;
    fs->f[fs->n] = (nt_fig_t){item, li, metric, bytes};
    fs->n++;
    return 0;
}

/* The figure of a sample list at (metric, bytes): the p50 (the p99 for NT_METRIC_TAIL), NaN
 * when absent. */
static double nt_sample_value(const cJSON *samples, int metric, size_t bytes)
{
    const cJSON *s;
    cJSON_ArrayForEach (s, samples) {
        if (nt_json_get_u64(s, "bytes", ULLONG_MAX) != bytes)
            continue;
        const cJSON *st =
            cJSON_GetObjectItemCaseSensitive(s, metric == NT_METRIC_BW ? "bw_GBps" : "lat_us");
        if (st)
            return nt_json_get_num(st, metric == NT_METRIC_TAIL ? "p99" : "p50", NAN);
    }
    return NAN;
}

/* The figures of one link l (the tree of links[li], item). *changed: l was changed (its
 * expected bandwidth). */
static nt_status_t nt_figs_link(const nt_judge_t *j, nt_figs_t *fs, cJSON *item, size_t li,
                                cJSON *l, int *changed)
{
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(l, "src");
    const cJSON *dst = cJSON_GetObjectItemCaseSensitive(l, "dst");
    const char *sh = nt_json_get_str(src, "host", ""), *dh = nt_json_get_str(dst, "host", "");
    int sn = nt_node_index(fs, sh), dn = nt_node_index(fs, dh);
    nt_verdict_t v = NT_PASS;
    nt_node_rules_t r;
    int kind = nt_link_kind_parse(nt_json_get_str(l, "kind", ""));
    double exp_bw, exp_lat, line;
    const cJSON *first, *fsamples, *s;
    int retested;

    nt_verdict_parse(nt_json_get_str(l, "verdict", "pass"), &v);
    if (v == NT_SKIPPED || cJSON_GetObjectItemCaseSensitive(l, "errors") || kind < 0)
        return NT_OK;
    /* GPU pairs over NVLink are held to the NVLink rules (docs/gpu.md). */
    if (kind == NT_KIND_P2P && strncmp(nt_json_get_str(l, "path", ""), "NV", 2) == 0)
        kind = NT_KIND_NVLINK;
    nt_rules_for(j, sh, sn >= 0 ? fs->node_objs[sn] : NULL, &r);
    /* Expected bandwidth: the probe's own (hardware line rate x efficiency) or the line
     * rate it reports times this node class's efficiency, or the class minimum. */
    /* The thresholds decide the efficiency: a line rate the probe reports is multiplied
     * by this node class's efficiency (and floored by its min_bw_GBps); a probe that knows
     * no line rate may still state an expected figure of its own. */
    line = nt_json_get_num(l, "line_rate_GBps", NAN);
    exp_bw = nt_link_expected_bw(&r.links[kind], line);
    if (!isfinite(line) && !isfinite(exp_bw))
        exp_bw = nt_json_get_num(l, "expected_bw_GBps", NAN);
    if (isfinite(exp_bw)) {
        cJSON_DeleteItemFromObjectCaseSensitive(l, "expected_bw_GBps");
        nt_json_add_num(l, "expected_bw_GBps", exp_bw);
        *changed = 1;
    }
    exp_lat = nt_link_expected_lat(&r.links[kind]);
    /* A retested link carries the retest's figures and its first measurement under
     * "first" (nt_judge_apply_retest): the first is value, the retest retest_value. */
    first = cJSON_GetObjectItemCaseSensitive(l, "first");
    retested = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l, "retested"));
    fsamples = cJSON_GetObjectItemCaseSensitive(first ? first : l, "samples");
    cJSON_ArrayForEach (s, fsamples) {
        size_t bytes = (size_t)nt_json_get_u64(s, "bytes", 0);
        const cJSON *bw = cJSON_GetObjectItemCaseSensitive(s, "bw_GBps");
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(s, "lat_us");
        /* Only the peak size is held to the expected bandwidth: line rate needs large
         * messages; smaller sizes are judged against their peers only. The latency limit
         * holds for the smallest size (small_msg_lat_bytes), and so does the tail rule
         * (its p99: loss shows there as retransmission timeouts). */
        /* absent (a bandwidth-only link has no latency size): no size is it; a cast of the
         * -1.0 default to size_t was UB */
        int peak = nt_json_get_u64(l, "peak_bw_bytes", ULLONG_MAX) == bytes;
        int small = nt_json_get_u64(l, "small_msg_lat_bytes", ULLONG_MAX) == bytes;
        int metrics[3], nm = 0;
        if (bw)
            metrics[nm++] = NT_METRIC_BW;
        if (lat)
            metrics[nm++] = NT_METRIC_LAT;
        if (lat && small && cJSON_GetObjectItemCaseSensitive(lat, "p99"))
            metrics[nm++] = NT_METRIC_TAIL;
        for (int k = 0; k < nm; k++) {
            int m = metrics[k];
            double expv = m == NT_METRIC_BW    ? (peak ? exp_bw : NAN)
                          : m == NT_METRIC_LAT ? (small ? exp_lat : NAN)
                                               : NAN;
            if (nt_figs_push(fs, item, li, l, m, bytes, nt_sample_value(fsamples, m, bytes), expv,
                             sn, dn))
                return NT_ERR_NOMEM;
            if (retested) {
                nt_vlink_t *x = &fs->v[fs->n - 1];
                x->retested = 1;
                x->retest_value =
                    first
                        ? nt_sample_value(cJSON_GetObjectItemCaseSensitive(l, "samples"), m, bytes)
                        : NAN;
            }
        }
    }
    return NT_OK;
}

/* Build the figures of every measured link of doc. Links with errors give none: they fail on
 * their own account (nt_judge_finish). */
static nt_status_t nt_figs_build(const nt_judge_t *j, cJSON *doc, nt_figs_t *fs)
{
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    cJSON *item, *it;
    nt_status_t st = NT_OK;
    size_t li = 0;
    int i = 0;

    memset(fs, 0, sizeof(*fs));
    fs->nnodes = cJSON_GetArraySize(nodes);
    fs->hosts = calloc((size_t)fs->nnodes + 1, sizeof(char *));
    fs->models = calloc((size_t)fs->nnodes + 1, sizeof(char *));
    fs->node_objs = calloc((size_t)fs->nnodes + 1, sizeof(cJSON *));
    if (!fs->hosts || !fs->models || !fs->node_objs ||
        nt_strmap_init(&fs->hostix, (size_t)fs->nnodes) != NT_OK)
        return NT_ERR_NOMEM;
    cJSON_ArrayForEach (it, nodes) {
        fs->models[i] = nt_node_gpu_model(it);
        fs->node_objs[i] = it;
        fs->hosts[i] = (char *)nt_json_get_str(it, "hostname", "?");
        nt_strmap_add(&fs->hostix, fs->hosts[i], (size_t)i);
        i++;
    }
    cJSON_ArrayForEach (item, links) {
        int changed = 0;
        cJSON *l = nt_json_thaw(item);
        if (l)
            st = nt_figs_link(j, fs, item, li, l, &changed);
        nt_json_thaw_end(item, l, changed);
        li++;
        if (st != NT_OK)
            return st;
    }
    return NT_OK;
}

/* Judge the figures. A run whose measurements were unstable (at least 3 links, and a fifth
 * of the links measured, failed their first measurement and passed their retest: the machine,
 * not the links, moved) is judged again with advisory peer rules: peer findings become
 * warnings, nobody is blamed by peers; *unstable (may be NULL) says so with the counts. */
static nt_status_t nt_figs_judge(const nt_judge_t *j, nt_figs_t *fs, const cJSON *doc,
                                 nt_node_verdict_t *nv, int unstable[2])
{
    nt_peer_rules_t peer;
    nt_status_t st;
    int nflaky = 0, nlinks = 0;
    nt_thresholds_peer_for_run(j->thresholds, (const char *const *)fs->hosts, fs->models,
                               fs->nnodes, &peer);
    /* Ranks that shared an oversubscribed machine (run.serialized): see nt_peer_rules_t. */
    peer.shared_cpus = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(doc, "run"), "serialized"));
    for (int i = 0; nv && i < fs->nnodes; i++)
        nv[i].host = fs->hosts[i];
    if (unstable)
        unstable[0] = unstable[1] = 0;
    st = nt_verdict_judge(fs->v, fs->n, fs->nnodes, &peer, nv);
    if (st != NT_OK || !unstable)
        return st;
    /* per link (its figures are consecutive): flaky when any of its figures is */
    for (size_t i = 0; i < fs->n;) {
        size_t k = i;
        int fl = 0;
        for (; k < fs->n && fs->f[k].link == fs->f[i].link; k++)
            fl |= fs->v[k].flaky;
        nflaky += fl;
        nlinks++;
        i = k;
    }
    if (nflaky >= 3 && 5 * nflaky >= nlinks) {
        unstable[0] = nflaky;
        unstable[1] = nlinks;
        peer.advisory = 1;
        st = nt_verdict_judge(fs->v, fs->n, fs->nnodes, &peer, nv);
    }
    return st;
}

/* What the choice of retest controls needs of each link, and the candidates by (kind, scope):
 * passing (as judged now, not only by the verdict the document holds: the working report has
 * none until the end), not retested, without errors, between two ranks none of whose links is
 * retested in this round, with a peak bandwidth; best first (highest peak_bw_GBps, then
 * document order). */
typedef struct nt_ctl_link {
    int a, b;
    const char *kind, *scope; /* interned (strs) */
    cJSON *item;              /* the links[] item */
    double bw;
    size_t ord;
} nt_ctl_link_t;

typedef struct nt_ctl_group {
    const char *kind, *scope;
    size_t *cand; /* indices into l[], best first */
    size_t ncand;
} nt_ctl_group_t;

typedef struct nt_ctl_ix {
    nt_ctl_link_t *l;
    size_t n;
    nt_u64map_t by_pair; /* rank pair -> first link between them (document order) */
    size_t *pair_next;   /* the next link of the same rank pair, SIZE_MAX: none */
    size_t *pair_last;   /* per rank pair (at its first link): the last link between them */
    nt_ctl_group_t *g;
    int ng;
    nt_strs_t strs;
} nt_ctl_ix_t;

static void nt_ctl_ix_free(nt_ctl_ix_t *cx)
{
    for (int i = 0; i < cx->ng; i++)
        free(cx->g[i].cand);
    free(cx->g);
    free(cx->l);
    free(cx->pair_next);
    free(cx->pair_last);
    nt_u64map_free(&cx->by_pair);
    nt_strs_free(&cx->strs);
    memset(cx, 0, sizeof(*cx));
}

static int nt_cmp_ctl_cand(const void *pa, const void *pb, void *ctx)
{
    const nt_ctl_link_t *l = ctx, *x = &l[*(const size_t *)pa], *y = &l[*(const size_t *)pb];
    if (x->bw != y->bw)
        return x->bw > y->bw ? -1 : 1;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

/* bad[li]: links[li] is judged warn or fail now (NULL: none is); busy: the rank pairs
 * (nt_rank_pair_key) retested in this round. Every link between a control's ranks is taken for
 * a control (nt_judge_is_ctl), so a control between two ranks of a retested pair, or a failing
 * control retested itself, would swallow that retest and leave the pair to be measured again every round. */
static nt_status_t nt_ctl_ix_build(nt_ctl_ix_t *cx, const cJSON *links, const unsigned char *bad,
                                   nt_u64map_t *busy)
{
    cJSON *item;
    size_t n = (size_t)cJSON_GetArraySize(links);

    memset(cx, 0, sizeof(*cx));
    cx->l = calloc(n + 1, sizeof(*cx->l));
    cx->pair_next = malloc((n + 1) * sizeof(size_t));
    cx->pair_last = malloc((n + 1) * sizeof(size_t));
    if (!cx->l || !cx->pair_next || !cx->pair_last || nt_u64map_init(&cx->by_pair, n) != NT_OK)
        return NT_ERR_NOMEM;
    cJSON_ArrayForEach (item, links) {
        nt_ctl_link_t *c = &cx->l[cx->n];
        cJSON *l = nt_json_thaw(item);
        int cand;
        c->a = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"), "rank", -1);
        c->b = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"), "rank", -1);
        c->kind = nt_strs_intern(&cx->strs, nt_json_get_str(l, "kind", ""));
        c->scope = nt_strs_intern(&cx->strs, nt_json_get_str(l, "scope", ""));
        c->item = item;
        c->bw = nt_json_get_num(l, "peak_bw_GBps", NAN);
        c->ord = cx->n;
        cx->pair_next[cx->n] = SIZE_MAX;
        if (c->a >= 0 && c->b >= 0) {
            size_t *head = nt_u64map_slot(&cx->by_pair, nt_rank_pair_key(c->a, c->b));
            if (*head == SIZE_MAX)
                *head = cx->n;
            else
                cx->pair_next[cx->pair_last[*head]] = cx->n;
            cx->pair_last[*head] = cx->n;
        }
        cand = c->a >= 0 && c->b >= 0 && c->bw > -1 &&
               strcmp(nt_json_get_str(l, "verdict", "pass"), "pass") == 0 &&
               !cJSON_GetObjectItemCaseSensitive(l, "retested") &&
               !cJSON_GetObjectItemCaseSensitive(l, "errors") && !(bad && bad[cx->n]) &&
               *nt_u64map_slot(busy, nt_rank_pair_key(c->a, c->b)) == SIZE_MAX;
        nt_json_thaw_end(item, l, 0);
        if (!c->kind || !c->scope)
            return NT_ERR_NOMEM;
        if (cand) {
            int g;
            for (g = 0; g < cx->ng; g++)
                if (strcmp(cx->g[g].kind, c->kind) == 0 && strcmp(cx->g[g].scope, c->scope) == 0)
                    break;
            if (g == cx->ng) {
                nt_ctl_group_t *grown = realloc(cx->g, sizeof(*grown) * (size_t)(cx->ng + 1));
                if (!grown)
                    return NT_ERR_NOMEM;
                cx->g = grown;
                memset(&cx->g[g], 0, sizeof(cx->g[g]));
                cx->g[g].kind = c->kind;
                cx->g[g].scope = c->scope;
                cx->g[g].cand = malloc((n + 1) * sizeof(size_t));
                cx->ng++;
                if (!cx->g[g].cand)
                    return NT_ERR_NOMEM;
            }
            cx->g[g].cand[cx->g[g].ncand++] = cx->n;
        }
        cx->n++;
    }
    for (int g = 0; g < cx->ng; g++)
        qsort_r(cx->g[g].cand, cx->g[g].ncand, sizeof(size_t), nt_cmp_ctl_cand, cx->l);
    return NT_OK;
}

/* The control of the pair (a, b) of probe kind: the best candidate of that kind and of the
 * pair's scope (that of the last link between a and b) between two other ranks; -1: none. A
 * candidate is passed over only for touching a or b, so this walks at most the links of a and
 * b before it finds one. */
static int nt_ctl_ix_best(nt_ctl_ix_t *cx, const char *kind, int a, int b)
{
    const char *scope = "";
    size_t *head = nt_u64map_slot(&cx->by_pair, nt_rank_pair_key(a, b));
    if (*head != SIZE_MAX)
        scope = cx->l[cx->pair_last[*head]].scope;
    for (int g = 0; g < cx->ng; g++) {
        if (strcmp(cx->g[g].kind, kind) != 0 || strcmp(cx->g[g].scope, scope) != 0)
            continue;
        for (size_t i = 0; i < cx->g[g].ncand; i++) {
            const nt_ctl_link_t *c = &cx->l[cx->g[g].cand[i]];
            if (c->a != a && c->a != b && c->b != a && c->b != b)
                return (int)cx->g[g].cand[i];
        }
        break;
    }
    return -1;
}

nt_status_t nt_judge_retest_pairs(nt_judge_t *j, const nt_probe_t *p, cJSON *doc,
                                  const nt_link_probe_ops_t *const *table, int ntable,
                                  int (**pairs)[3], int *n)
{
    nt_figs_t fs;
    size_t *idx = NULL, nidx;
    nt_status_t st;

    (void)p;
    *pairs = NULL;
    *n = 0;
    nt_idset_free(&j->ctl);
    nt_idset_free(&j->target);
    st = nt_figs_build(j, doc, &fs);
    if (st == NT_OK)
        st = nt_figs_judge(j, &fs, doc, NULL, NULL);
    if (st != NT_OK || fs.n == 0)
        goto out;
    idx = malloc(fs.n * sizeof(*idx));
    *pairs = calloc(2 * fs.n, sizeof(**pairs));
    if (!idx || !*pairs) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    nidx = nt_verdict_retest_list(fs.v, fs.n, idx, fs.n);
    {
        /* (a, b, probe) once each, in the order of the list */
        nt_u64map_t seen;
        if (nt_u64map_init(&seen, nidx) != NT_OK) {
            nt_u64map_free(&seen);
            st = NT_ERR_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < nidx; i++) {
            cJSON *l = nt_json_thaw(fs.f[idx[i]].link);
            int a = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"), "rank", -1);
            int b = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"), "rank", -1);
            int k;
            size_t *slot;
            int skip;
            for (k = 0; k < ntable; k++)
                if (strcmp(table[k]->kind, nt_json_get_str(l, "kind", "")) == 0)
                    break;
            skip = k == ntable || a < 0 || b < 0 || a == b || a > 0xffffff || b > 0xffffff;
            /* the links this retest is for: only their retests are filed (a pair's
             * measurement gives the reverse direction too, which may have passed) */
            if (!skip && nt_idset_add(&j->target, nt_json_get_str(l, "id", "")))
                skip = 1;
            nt_json_thaw_end(fs.f[idx[i]].link, l, 0);
            if (skip)
                continue;
            slot = nt_u64map_slot(&seen, ((uint64_t)a << 40) | ((uint64_t)b << 16) | (unsigned)k);
            if (*slot != SIZE_MAX)
                continue;
            *slot = (size_t)*n;
            (*pairs)[*n][0] = a;
            (*pairs)[*n][1] = b;
            (*pairs)[*n][2] = k;
            (*n)++;
        }
        nt_u64map_free(&seen);
        nt_idset_seal(&j->target);
    }
    /* Every pair twice, the second time after all the others: a disturbance of the machine
     * (another job, the scheduler) rarely hits one pair at two moments apart, a fault always
     * does. nt_judge_apply_retest keeps the better of the two. Each measurement is followed by
     * a control: the best passing link of the same kind and scope between two other ranks; a
     * control much worse than its own first measurement means the machine was disturbed then,
     * and the retest before it does not count. */
    {
        int nf = *n, m = 0;
        int(*seq)[3] = calloc((size_t)nf * 4 + 1, sizeof(*seq));
        int *ctl_of = calloc((size_t)nf + 1, sizeof(int)); /* a pair's control link, or -1 */
        cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
        unsigned char *bad = calloc((size_t)cJSON_GetArraySize(links) + 1, 1);
        nt_u64map_t busy = {0};
        nt_ctl_ix_t cx = {0};
        nt_status_t bst = seq && ctl_of && bad ? nt_u64map_init(&busy, (size_t)nf) : NT_ERR_NOMEM;
        /* A control passed: not one of the links judged warn or fail now, nor one between the
         * ranks of a pair measured again in this round. */
        for (size_t k = 0; bst == NT_OK && k < fs.n; k++)
            if (fs.v[k].verdict != NT_PASS && fs.v[k].verdict != NT_SKIPPED)
                bad[fs.f[k].li] = 1;
        for (int q = 0; bst == NT_OK && q < nf; q++)
            *nt_u64map_slot(&busy, nt_rank_pair_key((*pairs)[q][0], (*pairs)[q][1])) = (size_t)q;
        if (bst == NT_OK)
            bst = nt_ctl_ix_build(&cx, links, bad, &busy);
        nt_u64map_free(&busy);
        free(bad);
        if (bst != NT_OK) {
            free(seq);
            free(ctl_of);
            nt_ctl_ix_free(&cx);
            st = NT_ERR_NOMEM;
            goto out;
        }
        for (int q = 0; q < nf; q++) {
            int a = (*pairs)[q][0], b = (*pairs)[q][1], k = (*pairs)[q][2];
            ctl_of[q] = nt_ctl_ix_best(&cx, table[k]->kind, a, b);
            /* every link between the control's ranks (both directions) is a control */
            if (ctl_of[q] >= 0) {
                const nt_ctl_link_t *c = &cx.l[ctl_of[q]];
                size_t *head = nt_u64map_slot(&cx.by_pair, nt_rank_pair_key(c->a, c->b));
                for (size_t i = *head; i != SIZE_MAX; i = cx.pair_next[i]) {
                    cJSON *l = nt_json_thaw(cx.l[i].item);
                    int bad = nt_idset_add(&j->ctl, nt_json_get_str(l, "id", ""));
                    nt_json_thaw_end(cx.l[i].item, l, 0);
                    if (bad)
                        break;
                }
            }
        }
        nt_idset_seal(&j->ctl);
        for (int rnd = 0; rnd < 2; rnd++)
            for (int q = 0; q < nf; q++) {
                memcpy(seq[m++], (*pairs)[q], sizeof(seq[0]));
                if (ctl_of[q] < 0)
                    continue;
                seq[m][0] = cx.l[ctl_of[q]].a;
                seq[m][1] = cx.l[ctl_of[q]].b;
                seq[m++][2] = (*pairs)[q][2];
            }
        nt_ctl_ix_free(&cx);
        free(ctl_of);
        free(*pairs);
        *pairs = seq;
        *n = m;
    }
out:
    free(idx);
    nt_figs_free(&fs);
    if (st != NT_OK) {
        free(*pairs);
        *pairs = NULL;
        *n = 0;
    }
    return st;
}

/* Move key from one object to another (replacing it there); absent keys are left absent. */
static void nt_move_key(cJSON *from, cJSON *to, const char *key)
{
    cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(from, key);
    if (!it)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(to, key);
    cJSON_AddItemToObject(to, key, it);
}

static void nt_set_num(cJSON *obj, const char *key, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    nt_json_add_num(obj, key, v);
}

/* 1 when sample b is better than sample a at the same size: higher bandwidth p50, else lower
 * latency p50 (a sample has one of the two). */
static int nt_sample_better(const cJSON *a, const cJSON *b)
{
    const cJSON *ba = cJSON_GetObjectItemCaseSensitive(a, "bw_GBps");
    const cJSON *bb = cJSON_GetObjectItemCaseSensitive(b, "bw_GBps");
    if (ba || bb)
        return nt_json_get_num(bb, "p50", -1) > nt_json_get_num(ba, "p50", -1);
    return nt_json_get_num(cJSON_GetObjectItemCaseSensitive(b, "lat_us"), "p50", INFINITY) <
           nt_json_get_num(cJSON_GetObjectItemCaseSensitive(a, "lat_us"), "p50", INFINITY);
}

/* Merge a second retest of a link into the first (dst): per message size the better sample,
 * the summary figures recomputed from them (peak bandwidth and its size, the latency of the
 * smallest latency size) and the shorter elapsed_s. A retest with errors or no samples adds
 * nothing. */
static void nt_retest_merge(cJSON *dst, const cJSON *r)
{
    cJSON *ds = cJSON_GetObjectItemCaseSensitive(dst, "samples"), *s;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(r, "samples"), *x;
    double peak = -1, lat = NAN;
    size_t peak_bytes = 0, lat_bytes = SIZE_MAX;

    if (cJSON_GetObjectItemCaseSensitive(r, "errors") || cJSON_GetArraySize(rs) == 0)
        return;
    if (cJSON_GetObjectItemCaseSensitive(dst, "errors") || cJSON_GetArraySize(ds) == 0) {
        cJSON_DeleteItemFromObjectCaseSensitive(dst, "errors");
        cJSON_DeleteItemFromObjectCaseSensitive(dst, "samples");
        cJSON_AddItemToObject(dst, "samples", cJSON_Duplicate(rs, 1));
        ds = cJSON_GetObjectItemCaseSensitive(dst, "samples");
    } else {
        cJSON_ArrayForEach (x, rs) {
            int k = 0;
            cJSON_ArrayForEach (s, ds) {
                if (nt_json_get_num(s, "bytes", -1) == nt_json_get_num(x, "bytes", -2)) {
                    if (nt_sample_better(s, x))
                        cJSON_ReplaceItemInArray(ds, k, cJSON_Duplicate(x, 1));
                    break;
                }
                k++;
            }
        }
    }
    cJSON_ArrayForEach (s, ds) {
        size_t bytes = (size_t)nt_json_get_u64(s, "bytes", 0);
        const cJSON *bw = cJSON_GetObjectItemCaseSensitive(s, "bw_GBps");
        const cJSON *lt = cJSON_GetObjectItemCaseSensitive(s, "lat_us");
        if (bw && nt_json_get_num(bw, "p50", -1) > peak) {
            peak = nt_json_get_num(bw, "p50", -1);
            peak_bytes = bytes;
        }
        if (lt && bytes < lat_bytes) {
            lat_bytes = bytes;
            lat = nt_json_get_num(lt, "p50", NAN);
        }
    }
    /* the shorter of the two measurements' times goes with the better figures */
    if (nt_json_get_num(r, "elapsed_s", INFINITY) < nt_json_get_num(dst, "elapsed_s", INFINITY))
        nt_set_num(dst, "elapsed_s", nt_json_get_num(r, "elapsed_s", 0));
    if (peak >= 0) {
        nt_set_num(dst, "peak_bw_GBps", peak);
        nt_set_num(dst, "peak_bw_bytes", (double)peak_bytes);
    }
    if (lat_bytes != SIZE_MAX) {
        nt_set_num(dst, "small_msg_lat_us", lat);
        nt_set_num(dst, "small_msg_lat_bytes", (double)lat_bytes);
    }
}

/* Whether a control measurement r ran much worse than its link's first measurement l (NULL:
 * not in the report, so not disturbed):
 * bandwidth under half, or latency over 4 times, at any size (the link-fault limits: a
 * sub-microsecond latency doubles with scheduling jitter alone). */
static int nt_ctl_disturbed(const cJSON *l, const cJSON *r)
{
    const cJSON *x, *s;
    if (cJSON_GetObjectItemCaseSensitive(r, "errors"))
        return 1;
    if (!l)
        return 0;
    cJSON_ArrayForEach (x, cJSON_GetObjectItemCaseSensitive(r, "samples")) {
        cJSON_ArrayForEach (s, cJSON_GetObjectItemCaseSensitive(l, "samples")) {
            if (nt_json_get_num(s, "bytes", -1) != nt_json_get_num(x, "bytes", -2))
                continue;
            double b0 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(s, "bw_GBps"), "p50", NAN);
            double b1 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(x, "bw_GBps"), "p50", NAN);
            double l0 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(s, "lat_us"), "p50", NAN);
            double l1 = nt_json_get_num(cJSON_GetObjectItemCaseSensitive(x, "lat_us"), "p50", NAN);
            if ((b1 < 0.5 * b0) || (l1 > 4.0 * l0))
                return 1;
        }
    }
    return 0;
}

/* File the merged retest r (rs: its samples) into link l (not retested yet). */
static void nt_apply_one(cJSON *l, const cJSON *r, const cJSON *rs)
{
    /* The figures a link's summary is made of; they move together. */
    static const char *const figs[] = {"samples",          "peak_bw_GBps",        "peak_bw_bytes",
                                       "small_msg_lat_us", "small_msg_lat_bytes", "elapsed_s"};

    cJSON_AddTrueToObject(l, "retested");
    if (cJSON_GetArraySize(rs) > 0 && !cJSON_GetObjectItemCaseSensitive(r, "errors")) {
        /* The verdict rests on the retest: its figures become the link's, the first
         * measurement is kept beside them. */
        cJSON *first = cJSON_AddObjectToObject(l, "first");
        cJSON *copy = cJSON_Duplicate(r, 1);
        if (!first || !copy) {
            cJSON_Delete(copy);
            return;
        }
        for (size_t k = 0; k < sizeof(figs) / sizeof(figs[0]); k++) {
            nt_move_key(l, first, figs[k]);
            nt_move_key(copy, l, figs[k]);
        }
        cJSON_Delete(copy);
    } else {
        const cJSON *errs = cJSON_GetObjectItemCaseSensitive(r, "errors");
        cJSON *e = errs ? cJSON_Duplicate(errs, 1) : cJSON_CreateArray();
        if (e && !errs)
            cJSON_AddItemToArray(e, cJSON_CreateString("the retest gave no figures"));
        if (e)
            cJSON_AddItemToObject(l, "retest_errors", e);
    }
}

void nt_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links)
{
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    const cJSON *r;
    nt_link_ix_t ix;
    nt_strmap_t mix = {0}; /* id -> its merged retest */
    cJSON **mitem;         /* merged retests in order */
    size_t nm = 0, nr = (size_t)cJSON_GetArraySize(retest_links);
    int disturbed = 0;
    cJSON *merged = cJSON_CreateArray();
    cJSON *pending = cJSON_CreateArray();

    mitem = calloc(nr + 1, sizeof(*mitem));
    if (!merged || !pending || !mitem || nt_strmap_init(&mix, nr) != NT_OK ||
        nt_link_ix_build(&ix, links) != NT_OK) {
        nt_strmap_free(&mix);
        cJSON_Delete(merged);
        cJSON_Delete(pending);
        free(mitem);
        return;
    }
    /* In measurement order: a retest counts once the control measured after it held its
     * own first figures (nt_ctl_disturbed); the retests of one link (each pair is measured
     * twice) give the better figures per size. */
    for (r = retest_links ? retest_links->child : NULL;; r = r->next) {
        const char *id = r ? nt_json_get_str(r, "id", NULL) : NULL;
        int ctl = id && nt_judge_is_ctl(j, id);
        if (!r || ctl) {
            /* a control (or the end) closes the pending retests */
            const cJSON *p2;
            size_t f = ctl ? nt_link_ix_find(&ix, id) : SIZE_MAX;
            cJSON *fl = f == SIZE_MAX ? NULL : nt_json_thaw(ix.item[f]);
            int dist = ctl && nt_ctl_disturbed(fl, r);
            if (fl)
                nt_json_thaw_end(ix.item[f], fl, 0);
            if (dist)
                disturbed++;
            else
                cJSON_ArrayForEach (p2, pending) {
                    const char *pid = nt_json_get_str(p2, "id", "");
                    size_t k = nt_strmap_get(&mix, pid);
                    cJSON *dup;
                    if (k != SIZE_MAX) {
                        nt_retest_merge(mitem[k], p2);
                    } else if ((dup = cJSON_Duplicate(p2, 1))) {
                        cJSON_AddItemToArray(merged, dup);
                        mitem[nm] = dup;
                        nt_strmap_add(&mix, nt_json_get_str(dup, "id", ""), nm);
                        nm++;
                    }
                }
            while (cJSON_GetArraySize(pending) > 0)
                cJSON_DeleteItemFromArray(pending, 0);
            if (!r)
                break;
            continue;
        }
        if (id)
            cJSON_AddItemToArray(pending, cJSON_Duplicate(r, 1));
    }
    cJSON_Delete(pending);
    if (disturbed)
        NT_INFO(VERDICT,
                "%d retest(s) not counted: their control link ran slow too (the machine "
                "was busy then)",
                disturbed);
    cJSON_ArrayForEach (r, merged) {
        const char *id = nt_json_get_str(r, "id", NULL);
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(r, "samples");
        cJSON *l = NULL, *item = NULL;
        /* only the links the retest is for: the reverse direction of a failing pair, measured
         * with it, keeps its own first figures when they passed */
        if (!id || !nt_idset_has(&j->target, id))
            continue;
        /* the first link of that id not retested yet */
        for (size_t i = nt_link_ix_find(&ix, id); i != SIZE_MAX; i = ix.next[i]) {
            l = nt_json_thaw(ix.item[i]);
            if (l && !cJSON_GetObjectItemCaseSensitive(l, "retested")) {
                item = ix.item[i];
                break;
            }
            nt_json_thaw_end(ix.item[i], l, 0);
            l = NULL;
        }
        if (!l)
            continue;
        nt_apply_one(l, r, rs);
        nt_json_thaw_end(item, l, 1);
    }
    nt_link_ix_free(&ix);
    nt_strmap_free(&mix);
    free(mitem);
    cJSON_Delete(merged);
}

static void nt_add_str_unique(cJSON *arr, const char *s)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, arr)
        if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
            return;
    cJSON_AddItemToArray(arr, cJSON_CreateString(s));
}

static cJSON *nt_arr(cJSON *obj, const char *key)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, key);
    return a ? a : cJSON_AddArrayToObject(obj, key);
}

static void nt_set_str(cJSON *obj, const char *key, const char *val)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    nt_json_add_str(obj, key, val);
}

static nt_verdict_t nt_get_verdict(const cJSON *obj)
{
    nt_verdict_t v = NT_PASS;
    nt_verdict_parse(nt_json_get_str(obj, "verdict", "pass"), &v);
    return v;
}

/* One failed node: its first reason (the one DRAIN lines and the Slurm drain print) and cause,
 * and how many more reasons it has. */
typedef struct nt_nodefail {
    nt_verdict_t verdict; /* the node verdict */
    char reason[320];     /* "" until it fails */
    const char *cause;
    int more;
} nt_nodefail_t;

static void nt_node_fails(nt_nodefail_t *nf, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void nt_node_fails(nt_nodefail_t *nf, const char *cause, const char *fmt, ...)
{
    va_list ap;
    nf->verdict = NT_FAIL;
    if (nf->reason[0]) {
        nf->more++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(nf->reason, sizeof(nf->reason), fmt, ap);
    va_end(ap);
    nf->cause = cause;
}

/* "7/8count" is no unit: units that are words are left out of the figure. */
static const char *nt_fig_unit(const char *unit)
{
    return !unit || strcmp(unit, "count") == 0 ? "" : unit;
}

const char *nt_judge_check_word(const cJSON *c)
{
    const char *t = nt_json_get_str(c, "target", "");
    if (strcmp(nt_json_get_str(c, "name", ""), "inventory") == 0 && *t &&
        strspn(t, "abcdefghijklmnopqrstuvwxyz_") == strlen(t))
        return t;
    return nt_json_get_str(c, "name", "check");
}

/* The NIC firmware versions of a node (its nics[].firmware, distinct, sorted) as one software
 * entry "nic_firmware", so that a node whose NICs run other firmware than the majority is a
 * software_consistency warning like a different driver (docs/topology.md "Consistency across nodes"). */
static int nt_cmp_fw(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void nt_node_nic_firmware(cJSON *node)
{
    cJSON *sw = cJSON_GetObjectItemCaseSensitive(node, "software"), *it;
    char fw[16][64], out[1100] = "";
    int n = 0;

    if (!sw || cJSON_GetObjectItemCaseSensitive(sw, "nic_firmware"))
        return;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(node, "nics")) {
        const char *v = nt_json_get_str(it, "firmware", NULL);
        int dup = 0;
        if (!v || !*v)
            continue;
        for (int k = 0; k < n; k++)
            dup |= strcmp(fw[k], v) == 0;
        if (!dup && n < 16)
            snprintf(fw[n++], sizeof(fw[0]), "%s", v);
    }
    if (n == 0)
        return;
    qsort(fw, (size_t)n, sizeof(fw[0]), nt_cmp_fw);
    for (int k = 0; k < n; k++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", k ? ", " : "", fw[k]);
    nt_json_add_str(sw, "nic_firmware", out);
}

/* What the node verdicts need of a link once it is judged. */
typedef struct nt_link_note {
    nt_verdict_t v;
    nt_verdict_t own; /* v without the figures failed by node blame (NT_FIRED_BLAME): what the
                       * link says of its ends apart from a blamed node's fault */
    int src, dst;     /* node indices, -1: none */
} nt_link_note_t;

/* The GPU pass (nt_gpu_judge_report) over the report's GPU links gl[] (indices into links[]).
 * A report whose links are all trees is passed as it is; one holding links as text gets a
 * view of its nodes and of its GPU links only, opened (a few per node, not 499,500), and what
 * the pass changed is written back. lv[].v follows. */
static void nt_judge_gpu_pass(cJSON *doc, cJSON *links, cJSON *checks, int frozen, const size_t *gl,
                              size_t ngl, nt_link_note_t *lv)
{
    static const char *const keys[] = {"verdict", "blamed_on_gpu", "judged_by", "reasons"};
    cJSON *view, *vlinks, **items, *item, *t;
    size_t li = 0, g = 0;

    if (!frozen) {
        nt_gpu_judge_report(doc, checks);
        li = 0;
        cJSON_ArrayForEach (item, links) {
            if (g < ngl && gl[g] == li) {
                lv[li].v = lv[li].own = nt_get_verdict(item);
                g++;
            }
            li++;
        }
        return;
    }
    view = cJSON_CreateObject();
    vlinks = cJSON_CreateArray();
    items = calloc(ngl + 1, sizeof(*items));
    if (!view || !vlinks || !items ||
        !cJSON_AddItemReferenceToObject(view, "nodes",
                                        cJSON_GetObjectItemCaseSensitive(doc, "nodes")) ||
        !cJSON_AddItemToObject(view, "links", vlinks)) {
        if (!cJSON_GetObjectItemCaseSensitive(view, "links"))
            cJSON_Delete(vlinks);
        cJSON_Delete(view);
        free(items);
        NT_ERROR(VERDICT, "out of memory judging the GPU links");
        return;
    }
    cJSON_ArrayForEach (item, links) {
        if (g < ngl && gl[g] == li) {
            cJSON *l = nt_json_thaw(item);
            t = l == item ? cJSON_Duplicate(item, 1) : l;
            if (t) {
                items[g] = item;
                cJSON_AddItemToArray(vlinks, t);
            }
            g++;
        }
        li++;
    }
    nt_gpu_judge_report(view, checks);
    g = 0;
    while ((t = cJSON_DetachItemFromArray(vlinks, 0))) {
        while (g < ngl && !items[g])
            g++;
        if (g == ngl) {
            cJSON_Delete(t);
            continue;
        }
        lv[gl[g]].v = lv[gl[g]].own = nt_get_verdict(t);
        if (cJSON_IsRaw(items[g])) {
            nt_json_thaw_end(items[g], t, 1);
        } else {
            /* a tree among text links: the pass's keys copied back */
            for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                cJSON *x = cJSON_GetObjectItemCaseSensitive(t, keys[k]);
                cJSON_DeleteItemFromObjectCaseSensitive(items[g], keys[k]);
                if (x)
                    cJSON_AddItemToObject(items[g], keys[k], cJSON_Duplicate(x, 1));
            }
            cJSON_Delete(t);
        }
        g++;
    }
    cJSON_Delete(view);
    free(items);
}

/* An NVLink count stated for a node (--expect nvlinks=N or its class) is judged by the GPU
 * probe's nvlink_state checks; where none was filed for the node (no GPU, no NVML, the GPU probe
 * skipped) the expectation gets one not_judged check with the reason, never a silent pass. */
static void nt_judge_nvlinks_unjudged(const nt_judge_t *j, const cJSON *nodes, cJSON *checks)
{
    const cJSON *node, *c;
    char **judged = NULL;
    size_t njudged = 0, cap = 0;
    int scanned = 0;
    cJSON_ArrayForEach (node, nodes) {
        const char *host = nt_json_get_str(node, "hostname", NULL);
        nt_node_rules_t r;
        if (!host)
            continue;
        nt_rules_for(j, host, node, &r);
        if (r.expect.nvlinks < 0)
            continue;
        if (!scanned) { /* the hosts that have an nvlink_state check: one walk, sorted */
            scanned = 1;
            cJSON_ArrayForEach (c, checks) {
                const char *h = nt_json_get_str(c, "host", NULL);
                if (!h || strcmp(nt_json_get_str(c, "name", ""), "nvlink_state") != 0)
                    continue;
                if (njudged == cap) {
                    char **g = realloc(judged, (cap = cap ? 2 * cap : 16) * sizeof(*g));
                    if (!g)
                        break;
                    judged = g;
                }
                judged[njudged++] = (char *)h;
            }
            if (njudged)
                qsort(judged, njudged, sizeof(*judged), nt_cmp_strp);
        }
        if (njudged && bsearch(&host, judged, njudged, sizeof(*judged), nt_cmp_strp))
            continue;
        const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(node, "gpus");
        const char *why = "NVLink state unknown (no NVML inventory of the GPUs)";
        cJSON_ArrayForEach (c, cJSON_GetObjectItemCaseSensitive(node, "skipped"))
            if (strcmp(nt_json_get_str(c, "probe", ""), "gpu") == 0)
                why = nt_json_get_str(c, "reason", why);
        if (cJSON_GetArraySize(gpus) == 0)
            why = "no GPU found";
        cJSON *chk = nt_check_create(
            "inventory", host, "nvlinks", NT_NOT_JUDGED, NAN, r.expect.nvlinks, "links",
            "%d NVLinks per GPU expected; %s: not judged", r.expect.nvlinks, why);
        if (chk)
            cJSON_AddItemToArray(checks, chk);
    }
    free(judged);
}

/* The endpoints ("host/device") of the failed links no node was blamed for, and of the warned. */
typedef struct {
    char **key;
    size_t n, cap, nlinks;
} nt_endpoints_t;

static void nt_endpoints_add(nt_endpoints_t *e, const cJSON *link)
{
    static const char *const ends[2] = {"src", "dst"};
    e->nlinks++;
    for (int k = 0; k < 2; k++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(link, ends[k]);
        char buf[320];
        if (!o)
            continue;
        snprintf(buf, sizeof(buf), "%s/%s", nt_json_get_str(o, "host", "?"),
                 nt_json_get_str(o, "device", "?"));
        if (e->n == e->cap) {
            char **g = realloc(e->key, (e->cap = e->cap ? 2 * e->cap : 32) * sizeof(*g));
            if (!g)
                return;
            e->key = g;
        }
        if ((e->key[e->n] = strdup(buf)) != NULL)
            e->n++;
    }
}

/* One endpoint shared by most failed or warned links (3 or more, more than half) is a rail, a NIC
 * or a GPU of one rank, or one starved rank: the node is not blamed for one endpoint
 * (docs/verdicts.md section 4), but the summary says which endpoint the failures have in common, so
 * the operator knows where to look. Frees e. */
static void nt_endpoints_warn(nt_endpoints_t *e, cJSON *warnings)
{
    size_t best = 0, best_n = 0;
    if (e->n) /* qsort of NULL, 0 is undefined (UBSan) */
        qsort(e->key, e->n, sizeof(*e->key), nt_cmp_strp);
    for (size_t i = 0; i < e->n;) {
        size_t k = i;
        while (k < e->n && strcmp(e->key[k], e->key[i]) == 0)
            k++;
        if (k - i > best_n)
            best_n = k - i, best = i;
        i = k;
    }
    if (best_n >= 3 && 2 * best_n > e->nlinks) {
        char w[512];
        snprintf(w, sizeof(w),
                 "%zu of the %zu failed or warned links share the endpoint %s: look at that "
                 "rank's NIC, GPU or CPU binding (one endpoint does not blame its node)",
                 best_n, e->nlinks, e->key[best]);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
    for (size_t i = 0; i < e->n; i++)
        free(e->key[i]);
    free(e->key);
    memset(e, 0, sizeof(*e));
}

int nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                    const nt_probe_params_t *params)
{
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    cJSON *checks = cJSON_GetObjectItemCaseSensitive(doc, "checks");
    cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes");
    cJSON *summary, *failed_nodes, *failed_links, *warnings, *not_judged, *counts, *it, *item;
    nt_node_verdict_t *nv = NULL;
    nt_link_note_t *lv = NULL;          /* per link: verdict and node indices */
    size_t nlinks, *gl = NULL, ngl = 0; /* the GPU links' indices */
    int frozen = 0;
    nt_endpoints_t eps = {0};
    nt_nodefail_t *nf = NULL, *nf_grow;
    int nnodes, unstable[2] = {0, 0};
    nt_figs_t fs;
    int cnt[NT_NVERDICTS] = {0}, usage = 0;
    nt_verdict_t overall = NT_PASS;

    (void)p;
    /* Software versions that differ from the majority (kernel, driver, CUDA, NCCL, ...). */
    {
        int nn = cJSON_GetArraySize(nodes), i = 0;
        const cJSON **sw = calloc((size_t)nn + 1, sizeof(*sw));
        const char **hosts = calloc((size_t)nn + 1, sizeof(*hosts));
        if (sw && hosts) {
            cJSON_ArrayForEach (it, nodes) {
                nt_node_nic_firmware(it);
                sw[i] = cJSON_GetObjectItemCaseSensitive(it, "software");
                hosts[i++] = nt_json_get_str(it, "hostname", "?");
            }
            if (nn > 1)
                nt_software_consistency(sw, hosts, nn, j->strict, checks);
        }
        free(sw);
        free(hosts);
    }

    if (nt_figs_build(j, doc, &fs) != NT_OK || !(nv = calloc((size_t)fs.nnodes + 1, sizeof(*nv))) ||
        nt_figs_judge(j, &fs, doc, nv, unstable) != NT_OK) {
        NT_ERROR(VERDICT, "out of memory judging the links");
        usage = 1;
    }
    /* Fold the figures' verdicts back into their links, link by link (a link held as text
     * is parsed once here), and note what the node verdicts need of each link. */
    nlinks = (size_t)cJSON_GetArraySize(links);
    lv = calloc(nlinks + 1, sizeof(*lv));
    gl = calloc(nlinks + 1, sizeof(*gl));
    if (!lv || !gl) {
        NT_ERROR(VERDICT, "out of memory judging the links");
        free(lv);
        free(gl);
        nt_figs_free(&fs);
        free(nv);
        return NT_EXIT_USAGE;
    }
    {
        size_t li = 0, k = 0;
        cJSON_ArrayForEach (item, links) {
            cJSON *it = nt_json_thaw(item);
            nt_verdict_t v = nt_get_verdict(it);
            lv[li].v = lv[li].own = NT_SKIPPED;
            lv[li].src = lv[li].dst = -1;
            if (!it) {
                li++;
                continue;
            }
            if (v != NT_SKIPPED) {
                cJSON_DeleteItemFromObjectCaseSensitive(it, "reasons");
                cJSON_DeleteItemFromObjectCaseSensitive(it, "judged_by");
                cJSON_DeleteItemFromObjectCaseSensitive(it, "unconfirmed");
                v = NT_PASS;
                if (cJSON_GetObjectItemCaseSensitive(it, "errors")) {
                    const char *by = nt_json_get_str(it, "stopped_by", "error");
                    if (strcmp(by, "signal") == 0 || strcmp(by, "peer_timeout") == 0) {
                        /* The run stopped early (exit 3 unless something failed): the link is
                         * not judged on a cut measurement. */
                        v = NT_SKIPPED;
                        nt_add_str_unique(
                            nt_arr(it, "reasons"),
                            strcmp(by, "signal") == 0
                                ? "measurement interrupted by a signal or the time limit"
                                : "the peer stopped answering: measurement not finished");
                    } else {
                        v = NT_FAIL;
                        nt_add_str_unique(nt_arr(it, "reasons"),
                                          "the measurement did not complete (see errors)");
                        nt_add_str_unique(nt_arr(it, "judged_by"), "error");
                    }
                }
                nt_set_str(it, "verdict", nt_verdict_string(v));
            }
            lv[li].own = v;
            /* its figures (consecutive, in link order) */
            for (; !usage && k < fs.n && fs.f[k].li == li; k++) {
                cJSON *l = it;
                nt_verdict_t lvv = nt_get_verdict(l);
                const nt_vlink_t *x = &fs.v[k];
                if (x->verdict == NT_PASS || x->verdict == NT_SKIPPED)
                    continue;
                if (!(x->fired & NT_FIRED_BLAME))
                    lv[li].own = nt_verdict_worse(lv[li].own, x->verdict);
                nt_set_str(l, "verdict", nt_verdict_string(nt_verdict_worse(lvv, x->verdict)));
                if (x->reason[0])
                    nt_add_str_unique(nt_arr(l, "reasons"), x->reason);
                if (x->fired & NT_FIRED_EXPECTED)
                    nt_add_str_unique(nt_arr(l, "judged_by"), "expected");
                if (x->fired & NT_FIRED_PEER)
                    nt_add_str_unique(nt_arr(l, "judged_by"), "peer");
                if (x->fired & NT_FIRED_RETEST)
                    nt_add_str_unique(nt_arr(l, "judged_by"), "retest");
                if (x->unconfirmed && !cJSON_GetObjectItemCaseSensitive(l, "unconfirmed"))
                    cJSON_AddTrueToObject(l, "unconfirmed");
                if (x->fired & NT_FIRED_BLAME) {
                    nt_add_str_unique(nt_arr(l, "judged_by"), "node_blame");
                    if (!cJSON_GetObjectItemCaseSensitive(l, "blamed_on_node"))
                        cJSON_AddTrueToObject(l, "blamed_on_node");
                }
            }
            lv[li].v = nt_get_verdict(it);
            lv[li].src = nt_node_index(
                &fs, nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "src"), "host", ""));
            lv[li].dst = nt_node_index(
                &fs, nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "dst"), "host", ""));
            if (nt_gpu_is_link_kind(nt_json_get_str(it, "kind", "")))
                gl[ngl++] = li;
            frozen |= it != item;
            nt_json_thaw_end(item, it, 1);
            li++;
        }
    }
    /* GPU blame inside each node, and failed GPU links failing their node (lib/gpu_judge.c). */
    if (!usage && checks)
        nt_judge_gpu_pass(doc, links, checks, frozen, gl, ngl, lv);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "summary");
    summary = nt_json_add_obj(doc, "summary");
    nnodes = cJSON_GetArraySize(nodes);
    nf = calloc((size_t)nnodes + (size_t)j->nsilent + 1, sizeof(*nf));
    if (!summary || !nf) {
        nt_figs_free(&fs);
        free(nv);
        free(nf);
        free(lv);
        free(gl);
        return NT_EXIT_USAGE;
    }
    for (int i = 0; i < nnodes; i++)
        nf[i].verdict = nv && i < fs.nnodes ? nv[i].verdict : NT_SKIPPED;
    nt_json_add_str(summary, "verdict", "pass");
    /* The verdict covers what was measured; an incomplete run says so next to it (exit 3). */
    nt_json_add_bool(summary, "completed", !stopped_early);
    failed_nodes = nt_json_add_arr(summary, "failed_nodes");
    failed_links = nt_json_add_arr(summary, "failed_links");
    warnings = nt_json_add_arr(summary, "warnings");
    not_judged = nt_json_add_arr(summary, "not_judged");
    if (unstable[0]) {
        char w[300];
        snprintf(w, sizeof(w),
                 "measurements unstable: %d of %d links failed their first measurement and passed "
                 "their retest (a busy or oversubscribed machine?): peer findings are warnings, "
                 "nobody is blamed by peers; rerun on a quiet machine",
                 unstable[0], unstable[1]);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }

    /* Node verdicts, computed here once (every renderer reads nodes[].verdict). A node fails
     * only when it stopped answering, is blamed, has a link of its own (inside the node) that
     * failed its expected figure, or fails a check of its own; a failed or warned link makes
     * it warn, unless the link is bad only because a node at one of its ends is blamed ("caused
     * by blamed node X": that node fails, its healthy partner has nothing of its own to warn
     * about, and warning it would name the wrong node). */
    nf_grow = realloc(nf, sizeof(*nf) * ((size_t)nnodes + (size_t)j->nsilent + 1));
    if (!nf_grow) {
        nt_figs_free(&fs);
        free(nv);
        free(nf);
        free(lv);
        free(gl);
        return NT_EXIT_USAGE;
    }
    nf = nf_grow;
    memset(nf + nnodes, 0, sizeof(*nf) * ((size_t)j->nsilent + 1));
    for (int s = 0; s < j->nsilent; s++) {
        int k = nt_node_index(&fs, j->silent[s].host);
        if (k < 0 || k >= nnodes)
            k = nnodes + s; /* a host without a nodes[] entry still goes to failed_nodes */
        nt_node_fails(&nf[k], "no_answer", "nettune:no_answer %s", j->silent[s].why);
    }
    for (int i = 0; nv && i < fs.nnodes && i < nnodes; i++)
        if (nv[i].blamed)
            nt_node_fails(&nf[i], nv[i].cause ? nv[i].cause : "links", "%s", nv[i].reason);
    for (size_t i = 0; !usage && i < fs.n; i++) {
        const nt_vlink_t *x = &fs.v[i];
        char a[32], b[32];
        /* A link inside the node (a GPU's PCIe or NVLink, a device) that fails its expected
         * hardware figure is the node's own failure; a peer finding alone inside one node
         * (two ranks on one host) stays a link fault: the node warns. */
        cJSON *l;
        if (!nt_vlink_is_link_fault(x) || !(x->fired & NT_FIRED_EXPECTED) || x->src_node < 0 ||
            x->src_node >= nnodes || (x->dst_node >= 0 && x->dst_node != x->src_node))
            continue;
        l = nt_json_thaw(fs.f[i].link);
        nt_node_fails(
            &nf[x->src_node], nt_metric_cause(x->metric), "nettune:%s %s/%s%s %s: %s",
            nt_metric_check(x->metric),
            nt_fmt_fig(a, sizeof(a),
                       x->retested && !isnan(x->retest_value) ? x->retest_value : x->value),
            nt_fmt_fig(b, sizeof(b), (x->fired & NT_FIRED_EXPECTED) ? x->expected : x->reference),
            nt_metric_unit(x->metric), nt_json_get_str(l, "id", "?"), x->reason);
        nt_json_thaw_end(fs.f[i].link, l, 0);
    }
    for (size_t li = 0; li < nlinks; li++) {
        int ends[2] = {lv[li].src, lv[li].dst};
        if (lv[li].own != NT_FAIL && lv[li].own != NT_WARN)
            continue;
        for (int e = 0; e < 2; e++) {
            int k = ends[e];
            if (k >= 0 && k < nnodes)
                nf[k].verdict = nt_verdict_worse(nf[k].verdict, NT_WARN);
        }
    }
    cJSON_ArrayForEach (it, checks) {
        nt_verdict_t v = nt_get_verdict(it);
        int k = nt_node_index(&fs, nt_json_get_str(it, "host", ""));
        if (k < 0 || k >= nnodes)
            continue;
        if (v == NT_FAIL) {
            double o = nt_json_get_num(it, "observed", NAN),
                   e = nt_json_get_num(it, "expected", NAN);
            char a[32], b[32];
            if (isfinite(o) || isfinite(e))
                nt_node_fails(&nf[k], "check", "nettune:%s %s/%s%s %s", nt_judge_check_word(it),
                              nt_fmt_fig(a, sizeof(a), o), nt_fmt_fig(b, sizeof(b), e),
                              nt_fig_unit(nt_json_get_str(it, "unit", NULL)),
                              nt_json_get_str(it, "message", ""));
            else
                nt_node_fails(&nf[k], "check", "nettune:%s %s", nt_judge_check_word(it),
                              nt_json_get_str(it, "message", ""));
        } else if (v == NT_NOT_JUDGED && nf[k].verdict == NT_SKIPPED) {
            nf[k].verdict = NT_NOT_JUDGED;
        } else if (v != NT_NOT_JUDGED) {
            nf[k].verdict = nt_verdict_worse(nf[k].verdict, v);
        }
    }
    {
        int i = 0;
        cJSON_ArrayForEach (it, nodes) {
            nt_set_str(it, "verdict", nt_verdict_string(nf[i].verdict));
            i++;
        }
    }
    /* failed_nodes: one entry per failed node, in node order, then hosts without an entry. */
    for (int k = 0; k < nnodes + j->nsilent; k++) {
        cJSON *o;
        if (!nf[k].reason[0])
            continue;
        overall = NT_FAIL;
        o = cJSON_CreateObject();
        if (!o)
            break;
        nt_json_add_str(o, "host",
                        k < nnodes ? nt_json_get_str(cJSON_GetArrayItem(nodes, k), "hostname", "?")
                                   : j->silent[k - nnodes].host);
        nt_json_add_str(o, "reason", nf[k].reason);
        nt_json_add_str(o, "cause", nf[k].cause ? nf[k].cause : "check");
        if (nf[k].more)
            nt_json_add_num(o, "more_reasons", nf[k].more);
        cJSON_AddItemToArray(failed_nodes, o);
    }
    cJSON_ArrayForEach (item, links) {
        cJSON *it = nt_json_thaw(item);
        nt_verdict_t v = nt_get_verdict(it);
        if (!it)
            continue;
        if (strcmp(nt_json_get_str(it, "stopped_by", ""), "peer_timeout") == 0) {
            char w[600];
            const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "errors"), 0);
            snprintf(w, sizeof(w), "%s: %s (a hung or dead node?)",
                     nt_json_get_str(cJSON_GetObjectItemCaseSensitive(it, "dst"), "host", "?"),
                     cJSON_IsString(e0) ? e0->valuestring : "stopped answering");
            cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
        }
        cnt[v]++;
        if (v != NT_SKIPPED && v != NT_NOT_JUDGED)
            overall = nt_verdict_worse(overall, v);
        /* A link failing because of a blamed node is not a link fault of its own. */
        if (v == NT_FAIL && !cJSON_GetObjectItemCaseSensitive(it, "blamed_on_node")) {
            cJSON_AddItemToArray(failed_links, cJSON_CreateString(nt_json_get_str(it, "id", "")));
            nt_endpoints_add(&eps, it);
        } else if (v == NT_WARN) {
            char w[512];
            nt_endpoints_add(&eps, it);
            const cJSON *r0 =
                cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(it, "reasons"), 0);
            snprintf(w, sizeof(w), "%s: %s", nt_json_get_str(it, "id", ""),
                     cJSON_IsString(r0) ? r0->valuestring : "warning");
            cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
        }
        if (v == NT_PASS && !params->samples_all) {
            cJSON_DeleteItemFromObjectCaseSensitive(it, "samples");
            cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "first"),
                                                    "samples");
            nt_json_thaw_end(item, it, 1);
        } else {
            nt_json_thaw_end(item, it, 0);
        }
    }
    nt_endpoints_warn(&eps, warnings);
    nt_judge_nvlinks_unjudged(j, nodes, checks);
    cJSON_ArrayForEach (it, checks) {
        nt_verdict_t v = nt_get_verdict(it);
        const char *host = nt_json_get_str(it, "host", NULL);
        cnt[v]++;
        if (v == NT_NOT_JUDGED) {
            char w[600];
            snprintf(w, sizeof(w), "%s%s%s: %s", host ? host : "", host ? ": " : "",
                     nt_json_get_str(it, "target", ""), nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(not_judged, cJSON_CreateString(w));
            continue;
        }
        if (v == NT_SKIPPED)
            continue;
        overall = nt_verdict_worse(overall, v);
        if (v == NT_WARN) {
            char w[600];
            snprintf(w, sizeof(w), "%s%s%s", host ? host : "", host ? ": " : "",
                     nt_json_get_str(it, "message", ""));
            cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
        }
    }
    nt_set_str(summary, "verdict", nt_verdict_string(overall));
    counts = nt_json_add_obj(summary, "counts");
    nt_json_add_num(counts, "pass", cnt[NT_PASS]);
    nt_json_add_num(counts, "warn", cnt[NT_WARN]);
    nt_json_add_num(counts, "fail", cnt[NT_FAIL]);
    nt_json_add_num(counts, "skipped", cnt[NT_SKIPPED]);
    nt_json_add_num(counts, "not_judged", cnt[NT_NOT_JUDGED]);
    nt_figs_free(&fs);
    free(nv);
    free(nf);
    free(lv);
    free(gl);
    return nt_exit_code(usage, overall == NT_FAIL, stopped_early, overall == NT_WARN,
                        params->strict);
}

/* Whether the report goes to standard output ("-", /dev/stdout, or the file stdout is
 * redirected to): the human summary then goes to stderr, so stdout holds the document alone. */
static int nt_output_is_stdout(const char *output)
{
    struct stat a, b;
    if (strcmp(output, "-") == 0)
        return 1;
    return fstat(STDOUT_FILENO, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* One skip of one node, for grouping. */
typedef struct nt_skip_ent {
    const char *probe, *reason;
    int node;    /* index in nodes[] */
    size_t ord;  /* in document order */
    int printed; /* 1: its line is printed (the group's first node), with count others */
    int count;
} nt_skip_ent_t;

static int nt_cmp_skip(const void *pa, const void *pb)
{
    const nt_skip_ent_t *a = *(nt_skip_ent_t *const *)pa, *b = *(nt_skip_ent_t *const *)pb;
    int c = strcmp(a->probe, b->probe);
    if (!c)
        c = strcmp(a->reason, b->reason);
    return c ? c : (a->ord > b->ord) - (a->ord < b->ord);
}

/* Skips are grouped: the same probe and reason on 1,000 nodes is one line, printed at the
 * first node that has it, with the count of the group's other entries (sorted, n log n). */
static void nt_skips_print(FILE *f, const cJSON *nodes)
{
    const cJSON *it, *sk;
    int nn = cJSON_GetArraySize(nodes), node = 0;
    size_t n = 0, cap = 0;
    nt_skip_ent_t *e = NULL;
    nt_skip_ent_t **by = NULL;
    const cJSON **objs = calloc((size_t)nn + 1, sizeof(*objs));

    if (!objs)
        return;
    cJSON_ArrayForEach (it, nodes) {
        objs[node] = it;
        cJSON_ArrayForEach (sk, cJSON_GetObjectItemCaseSensitive(it, "skipped")) {
            if (n == cap) {
                nt_skip_ent_t *grown = realloc(e, sizeof(*e) * (cap = cap ? 2 * cap : 64));
                if (!grown)
                    goto out;
                e = grown;
            }
            e[n] = (nt_skip_ent_t){nt_json_get_str(sk, "probe", "?"),
                                   nt_json_get_str(sk, "reason", ""),
                                   node,
                                   n,
                                   0,
                                   0};
            n++;
        }
        node++;
    }
    by = malloc((n + 1) * sizeof(*by));
    if (!by)
        goto out;
    for (size_t i = 0; i < n; i++)
        by[i] = &e[i];
    qsort(by, n, sizeof(*by), nt_cmp_skip);
    for (size_t g = 0; g < n;) {
        size_t h = g;
        while (h < n && strcmp(by[h]->probe, by[g]->probe) == 0 &&
               strcmp(by[h]->reason, by[g]->reason) == 0)
            h++;
        /* by[g] is the group's first entry in document order: its node prints them */
        for (size_t k = g; k < h && by[k]->node == by[g]->node; k++) {
            by[k]->printed = 1;
            by[k]->count = (int)(h - g) - 1;
        }
        g = h;
    }
    for (size_t i = 0; i < n; i++) {
        const char *host = nt_json_get_str(objs[e[i].node], "hostname", "?");
        if (!e[i].printed)
            continue;
        if (e[i].count + 1 == nn && nn > 1)
            fprintf(f, "  skipped %s on all %d nodes: %s\n", e[i].probe, nn, e[i].reason);
        else if (e[i].count)
            fprintf(f, "  skipped %s on %s and %d other node(s): %s\n", e[i].probe, host,
                    e[i].count, e[i].reason);
        else
            fprintf(f, "  skipped %s on %s: %s\n", e[i].probe, host, e[i].reason);
    }
out:
    free(by);
    free(e);
    free(objs);
}

void nt_summary_print(const cJSON *doc, const char *output)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sum, "counts");
    const cJSON *it;
    FILE *f = nt_output_is_stdout(output) ? stderr : stdout;

    int npass = (int)nt_json_get_num(counts, "pass", 0),
        nwarn = (int)nt_json_get_num(counts, "warn", 0),
        nfail = (int)nt_json_get_num(counts, "fail", 0),
        nnj = (int)nt_json_get_num(counts, "not_judged", 0);
    char also[48];
    int nskip = 0;
    /* A pass is only as good as what was judged: say so in the headline (docs/verdicts.md),
     * by the rule nettune report's text, md and html use too (lib/core/report.c). */
    nt_verdict_judged_note(also, sizeof(also), (size_t)npass, (size_t)nwarn, (size_t)nfail,
                           (size_t)nnj);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(doc, "nodes"))
        nskip += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(it, "skipped"));
    fprintf(f, "nettune probe: %s%s  (%d nodes, %d ranks, %s, %.1f s%s)\n",
            nt_json_get_str(sum, "verdict", "?"), also, (int)nt_json_get_num(run, "nnodes", 0),
            (int)nt_json_get_num(run, "nranks", 0), nt_json_get_str(run, "mode", "?"),
            nt_json_get_num(run, "duration_s", 0),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "completed")) ? "" : ", INCOMPLETE");
    /* the skipped count counts checks and links; the "skipped <probe>" lines below are probes */
    fprintf(f, "  checks and links: %d pass, %d warn, %d fail, %d skipped, %d not judged", npass,
            nwarn, nfail, (int)nt_json_get_num(counts, "skipped", 0), nnj);
    if (nskip)
        fputs("; skipped probes below, not in these counts", f);
    fputs("\n", f);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "failed_nodes"))
        fprintf(f, "  DRAIN %s: %s\n", nt_json_get_str(it, "host", "?"),
                nt_json_get_str(it, "reason", ""));
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "failed_links"))
        fprintf(f, "  failed link %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "warnings"))
        fprintf(f, "  warning: %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(sum, "not_judged"))
        fprintf(f, "  not judged: %s\n", it->valuestring);
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(run, "not_done"))
        fprintf(f, "  not done: %s\n", it->valuestring);
    nt_skips_print(f, cJSON_GetObjectItemCaseSensitive(doc, "nodes"));
    fprintf(f, "  report: %s\n", output);
}
