/* The test oracle of test_probe_judge_index: nt_judge_apply_retest and nt_summary_print as
 * they were before the judge indexed its links (probes/judge.c at 2ca33e3, verbatim but for the
 * names): a linear scan of every link (and of every node's skips) per lookup, quadratic at
 * 1,000 nodes. The indexed versions must give the same documents and the same text. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge/judge.h"
#include "nettune/log.h"

void ref_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links);
void ref_summary_print(const cJSON *doc, const char *output);

/* Move key from one object to another (replacing it there); absent keys are left absent. */
static void ref_move_key(cJSON *from, cJSON *to, const char *key)
{
    cJSON *it = cJSON_DetachItemFromObjectCaseSensitive(from, key);
    if (!it)
        return;
    cJSON_DeleteItemFromObjectCaseSensitive(to, key);
    cJSON_AddItemToObject(to, key, it);
}

static void ref_set_num(cJSON *obj, const char *key, double v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    nt_json_add_num(obj, key, v);
}

/* 1 when sample b is better than sample a at the same size: higher bandwidth p50, else lower
 * latency p50 (a sample has one of the two). */
static int ref_sample_better(const cJSON *a, const cJSON *b)
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
static void ref_retest_merge(cJSON *dst, const cJSON *r)
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
                    if (ref_sample_better(s, x))
                        cJSON_ReplaceItemInArray(ds, k, cJSON_Duplicate(x, 1));
                    break;
                }
                k++;
            }
        }
    }
    cJSON_ArrayForEach (s, ds) {
        size_t bytes = (size_t)nt_json_get_num(s, "bytes", 0);
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
        ref_set_num(dst, "elapsed_s", nt_json_get_num(r, "elapsed_s", 0));
    if (peak >= 0) {
        ref_set_num(dst, "peak_bw_GBps", peak);
        ref_set_num(dst, "peak_bw_bytes", (double)peak_bytes);
    }
    if (lat_bytes != SIZE_MAX) {
        ref_set_num(dst, "small_msg_lat_us", lat);
        ref_set_num(dst, "small_msg_lat_bytes", (double)lat_bytes);
    }
}

/* Whether a control measurement r ran much worse than its link's first measurement in doc:
 * bandwidth under half, or latency over 4 times, at any size (the link-fault limits: a
 * sub-microsecond latency doubles with scheduling jitter alone). */
static int ref_ctl_disturbed(const cJSON *doc, const cJSON *r)
{
    const cJSON *l, *x, *s;
    const char *id = nt_json_get_str(r, "id", "");
    if (cJSON_GetObjectItemCaseSensitive(r, "errors"))
        return 1;
    cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(doc, "links"))
        if (strcmp(nt_json_get_str(l, "id", ""), id) == 0)
            break;
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

void ref_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links)
{
    /* The figures a link's summary is made of; they move together. */
    static const char *const figs[] = {"samples",          "peak_bw_GBps",        "peak_bw_bytes",
                                       "small_msg_lat_us", "small_msg_lat_bytes", "elapsed_s"};
    cJSON *links = cJSON_GetObjectItemCaseSensitive(doc, "links");
    const cJSON *r;

    (void)j;
    cJSON *merged = cJSON_CreateArray();
    if (!merged)
        return;
    /* In measurement order: a retest counts once the control measured after it held its
     * own first figures (nt_ctl_disturbed); the retests of one link (each pair is measured
     * twice) give the better figures per size. */
    cJSON *pending = cJSON_CreateArray();
    int disturbed = 0;
    for (r = retest_links ? retest_links->child : NULL;; r = r->next) {
        const char *id = r ? nt_json_get_str(r, "id", NULL) : NULL;
        int ctl = id && nt_judge_is_control(j, id);
        if (!r || ctl) {
            /* a control (or the end) closes the pending retests */
            const cJSON *p2;
            if (ctl && ref_ctl_disturbed(doc, r))
                disturbed++;
            else
                cJSON_ArrayForEach (p2, pending) {
                    const char *pid = nt_json_get_str(p2, "id", "");
                    cJSON *m;
                    cJSON_ArrayForEach (m, merged)
                        if (strcmp(nt_json_get_str(m, "id", ""), pid) == 0)
                            break;
                    if (m)
                        ref_retest_merge(m, p2);
                    else
                        cJSON_AddItemToArray(merged, cJSON_Duplicate(p2, 1));
                }
            while (pending && cJSON_GetArraySize(pending) > 0)
                cJSON_DeleteItemFromArray(pending, 0);
            if (!r)
                break;
            continue;
        }
        if (id && pending)
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
        cJSON *l;
        if (!id)
            continue;
        cJSON_ArrayForEach (l, links) {
            if (strcmp(nt_json_get_str(l, "id", ""), id) != 0 ||
                cJSON_GetObjectItemCaseSensitive(l, "retested"))
                continue;
            cJSON_AddTrueToObject(l, "retested");
            if (cJSON_GetArraySize(rs) > 0 && !cJSON_GetObjectItemCaseSensitive(r, "errors")) {
                /* The verdict rests on the retest: its figures become the link's, the first
                 * measurement is kept beside them. */
                cJSON *first = cJSON_AddObjectToObject(l, "first");
                cJSON *copy = cJSON_Duplicate(r, 1);
                if (!first || !copy) {
                    cJSON_Delete(copy);
                    break;
                }
                for (size_t k = 0; k < sizeof(figs) / sizeof(figs[0]); k++) {
                    ref_move_key(l, first, figs[k]);
                    ref_move_key(copy, l, figs[k]);
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
            break;
        }
    }
    cJSON_Delete(merged);
}

static int ref_output_is_stdout(const char *output)
{
    struct stat a, b;
    if (strcmp(output, "-") == 0)
        return 1;
    return fstat(STDOUT_FILENO, &a) == 0 && stat(output, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

void ref_summary_print(const cJSON *doc, const char *output)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    const cJSON *run = cJSON_GetObjectItemCaseSensitive(doc, "run");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(sum, "counts");
    const cJSON *it;
    FILE *f = ref_output_is_stdout(output) ? stderr : stdout;

    fprintf(f, "nettune probe: %s  (%d nodes, %d ranks, %s, %.1f s%s)\n",
            nt_json_get_str(sum, "verdict", "?"), (int)nt_json_get_num(run, "nnodes", 0),
            (int)nt_json_get_num(run, "nranks", 0), nt_json_get_str(run, "mode", "?"),
            nt_json_get_num(run, "duration_s", 0),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(run, "completed")) ? "" : ", INCOMPLETE");
    fprintf(f, "  checks and links: %d pass, %d warn, %d fail, %d skipped\n",
            (int)nt_json_get_num(counts, "pass", 0), (int)nt_json_get_num(counts, "warn", 0),
            (int)nt_json_get_num(counts, "fail", 0), (int)nt_json_get_num(counts, "skipped", 0));
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
    /* Skips are grouped: the same probe and reason on 1,000 nodes is one line. */
    {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(doc, "nodes"), *sk;
        int nn = cJSON_GetArraySize(nodes);
        cJSON_ArrayForEach (it, nodes) {
            cJSON_ArrayForEach (sk, cJSON_GetObjectItemCaseSensitive(it, "skipped")) {
                const char *pr = nt_json_get_str(sk, "probe", "?");
                const char *re = nt_json_get_str(sk, "reason", "");
                int first = 1, count = 0;
                const char *firsthost = nt_json_get_str(it, "hostname", "?");
                const cJSON *o, *s2;
                /* Print each (probe, reason) once, at its first node, with a node count. */
                cJSON_ArrayForEach (o, nodes) {
                    cJSON_ArrayForEach (s2, cJSON_GetObjectItemCaseSensitive(o, "skipped")) {
                        if (strcmp(pr, nt_json_get_str(s2, "probe", "")) ||
                            strcmp(re, nt_json_get_str(s2, "reason", "")))
                            continue;
                        if (o == it && s2 == sk && count)
                            first = 0;
                        if (o != it || s2 != sk)
                            count += 1;
                        else if (!count)
                            count = 0;
                    }
                }
                (void)first;
                /* count holds the other nodes' matches; print only on the first node. */
                {
                    int before = 0;
                    cJSON_ArrayForEach (o, nodes) {
                        if (o == it)
                            break;
                        cJSON_ArrayForEach (s2, cJSON_GetObjectItemCaseSensitive(o, "skipped"))
                            if (!strcmp(pr, nt_json_get_str(s2, "probe", "")) &&
                                !strcmp(re, nt_json_get_str(s2, "reason", "")))
                                before = 1;
                    }
                    if (before)
                        continue;
                }
                if (count + 1 == nn && nn > 1)
                    fprintf(f, "  skipped %s on all %d nodes: %s\n", pr, nn, re);
                else if (count)
                    fprintf(f, "  skipped %s on %s and %d other node(s): %s\n", pr, firsthost,
                            count, re);
                else
                    fprintf(f, "  skipped %s on %s: %s\n", pr, firsthost, re);
            }
        }
    }
    fprintf(f, "  report: %s\n", output);
}
