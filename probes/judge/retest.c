/* Retest: which pairs to measure again (and which control links beside them), and filing the
 * retest's figures into the report before the final judgement. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge_int.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"

static int nt_judge_is_ctl(const nt_judge_t *j, const char *id)
{
    return nt_idset_has(&j->ctl, id);
}

int nt_judge_is_control(const nt_judge_t *j, const char *id)
{
    return j && id && nt_judge_is_ctl(j, id);
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

