/* The judge's indexes (at 1,000 nodes nothing in the judge scans every link per link): the
 * retest's control choice, nt_judge_apply_retest and the summary's skip grouping give exactly
 * what the former linear scans gave (tests/unit/judge_ref.c, the code before the indexes), on
 * random reports with bad nodes, bad links, noise, links with errors, repeated ids and
 * disturbed controls; and a report whose links are held as text (cJSON_Raw, as rank 0 holds
 * them) is judged exactly as the same report as trees. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "judge/judge.h"
#include "rpt.h"

void ref_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links);
void ref_summary_print(const cJSON *doc, const char *output);

static unsigned long long rng;

static double uni(void)
{
    unsigned long long z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

static cJSON *sample(size_t bytes, const char *key, double v)
{
    cJSON *s = cJSON_CreateObject(), *st;
    nt_json_add_num(s, "bytes", (double)bytes);
    nt_json_add_num(s, "iterations", 10);
    st = nt_json_add_obj(s, key);
    nt_json_add_num(st, "min", v * 0.9);
    nt_json_add_num(st, "p50", v);
    nt_json_add_num(st, "p99", v * 1.2);
    nt_json_add_num(st, "max", v * 1.3);
    return s;
}

/* A link of rank a (host<a>) to rank b; errors: a measurement that did not complete. */
static cJSON *mklink(int a, int b, const char *scope, double lat_us, double bw_GBps, int errors)
{
    char id[128], ha[32], hb[32];
    cJSON *l = cJSON_CreateObject(), *e, *samples;
    snprintf(ha, sizeof(ha), "host%03d", a);
    snprintf(hb, sizeof(hb), "host%03d", b);
    snprintf(id, sizeof(id), "mpi:%s/lr0->%s/lr0", ha, hb);
    nt_json_add_str(l, "id", id);
    nt_json_add_str(l, "kind", "mpi");
    nt_json_add_str(l, "scope", scope);
    e = nt_json_add_obj(l, "src");
    nt_json_add_str(e, "host", ha);
    nt_json_add_num(e, "rank", a);
    nt_json_add_str(e, "device", "lr0");
    e = nt_json_add_obj(l, "dst");
    nt_json_add_str(e, "host", hb);
    nt_json_add_num(e, "rank", b);
    nt_json_add_str(e, "device", "lr0");
    if (errors) {
        cJSON *er = nt_json_add_arr(l, "errors");
        cJSON_AddItemToArray(er, cJSON_CreateString("peer reset the connection"));
        return l;
    }
    samples = nt_json_add_arr(l, "samples");
    cJSON_AddItemToArray(samples, sample(8, "lat_us", lat_us));
    cJSON_AddItemToArray(samples, sample(1 << 20, "bw_GBps", bw_GBps));
    nt_json_add_num(l, "small_msg_lat_us", lat_us);
    nt_json_add_num(l, "small_msg_lat_bytes", 8);
    nt_json_add_num(l, "peak_bw_GBps", bw_GBps);
    nt_json_add_num(l, "peak_bw_bytes", 1 << 20);
    nt_json_add_num(l, "elapsed_s", 0.01 + uni() * 0.01);
    return l;
}

static int bad_node, bad_a, bad_b;

static double model_bw(int a, int b)
{
    double f = 1.0 + 0.05 * (uni() - 0.5) * 2;
    if (a == bad_node || b == bad_node)
        f *= 0.4;
    else if ((a == bad_a && b == bad_b) || (a == bad_b && b == bad_a))
        f *= 0.35;
    return 24.0 * f;
}

/* nnodes nodes of one rank, every pair once (a few twice: a repeated id), a few links with
 * errors, one intra link per tenth node. */
static cJSON *mkdoc(int nnodes)
{
    cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes");
    cJSON *links = nt_json_add_arr(d, "links");
    bad_node = nnodes / 3;
    bad_a = nnodes / 2;
    bad_b = nnodes / 2 + 1;
    for (int i = 0; i < nnodes; i++) {
        char h[32];
        cJSON *n = cJSON_CreateObject();
        snprintf(h, sizeof(h), "host%03d", i);
        nt_json_add_str(n, "hostname", h);
        nt_json_add_arr(n, "gpus");
        cJSON_AddItemToArray(nodes, n);
    }
    for (int a = 0; a < nnodes; a++)
        for (int b = a + 1; b < nnodes; b++) {
            int err = uni() < 0.01;
            cJSON_AddItemToArray(
                links, mklink(a, b, "inter", 2.0 * (1 + 0.05 * uni()), model_bw(a, b), err));
            if (uni() < 0.01) /* the same pair measured again (the same id) */
                cJSON_AddItemToArray(links, mklink(a, b, "inter", 2.0, model_bw(a, b), 0));
        }
    for (int a = 0; a < nnodes; a += 10)
        cJSON_AddItemToArray(links, mklink(a, a, "intra", 0.5, 80.0, 0));
    nt_json_add_arr(d, "checks");
    return d;
}

static const nt_link_probe_ops_t mpi_ops = {.kind = "mpi"};
static const nt_link_probe_ops_t *const table[1] = {&mpi_ops};

static int rank_of(const cJSON *l, const char *end)
{
    return (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, end), "rank", -1);
}

/* Whether the link (la, lb) is between the ranks of a pair retested in this round: a pair of
 * pairs[0..n) whose link (src, dst) is judged warn or fail (a control passes). judged: the
 * report judged (nt_judge_finish on a copy), links in the order of doc's. */
static int ref_busy(const cJSON *judged, int (*pairs)[3], int n, int la, int lb)
{
    const cJSON *l;
    for (int q = 0; q < n; q++) {
        int a = pairs[q][0], b = pairs[q][1];
        if (!((la == a && lb == b) || (la == b && lb == a)))
            continue;
        cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(judged, "links"))
            if (rank_of(l, "src") == a && rank_of(l, "dst") == b &&
                strcmp(nt_json_get_str(l, "verdict", "pass"), "pass") != 0)
                return 1;
    }
    return 0;
}

/* The control choice as it was (judge.c at 2ca33e3), by a scan of every link: for pair (a, b)
 * of kind, the best passing link of the same kind and scope between two other ranks; passing
 * as judged (judged: doc judged by nt_judge_finish, links in the same order) and not between
 * the ranks of a pair retested in this round (pairs[0..n): otherwise a failing control
 * swallowed the retests). */
static const cJSON *ref_control(const cJSON *doc, const cJSON *judged, int (*pairs)[3], int n,
                                int a, int b, const char *kind)
{
    const cJSON *best = NULL, *l, *jl;
    double best_bw = -1;
    const char *scope = NULL;
    cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive(doc, "links")) {
        int la = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"), "rank", -1);
        int lb = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"), "rank", -1);
        if ((la == a && lb == b) || (la == b && lb == a))
            scope = nt_json_get_str(l, "scope", "");
    }
    jl = cJSON_GetObjectItemCaseSensitive(judged, "links")->child;
    for (l = cJSON_GetObjectItemCaseSensitive(doc, "links")->child; l; l = l->next, jl = jl->next) {
        int la = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "src"), "rank", -1);
        int lb = (int)nt_json_get_num(cJSON_GetObjectItemCaseSensitive(l, "dst"), "rank", -1);
        double bw = nt_json_get_num(l, "peak_bw_GBps", NAN);
        if (strcmp(nt_json_get_str(l, "kind", ""), kind) != 0 ||
            strcmp(nt_json_get_str(l, "scope", ""), scope ? scope : "") != 0 ||
            strcmp(nt_json_get_str(l, "verdict", "pass"), "pass") != 0 ||
            strcmp(nt_json_get_str(jl, "verdict", "pass"), "pass") != 0 ||
            cJSON_GetObjectItemCaseSensitive(l, "retested") ||
            cJSON_GetObjectItemCaseSensitive(l, "errors") || la < 0 || lb < 0 || la == a ||
            la == b || lb == a || lb == b || !(bw > best_bw) || ref_busy(judged, pairs, n, la, lb))
            continue;
        best = l;
        best_bw = bw;
    }
    return best;
}

/* The retest of one run, checked against the oracle: the pairs and their controls, the control
 * set, then the filed figures (the same retest links into two copies of the report). */
static cJSON *one_round(nt_judge_t *j, cJSON *d, int nnodes, int round)
{
    nt_probe_params_t params = {0};
    cJSON *a, *b, *rl = cJSON_CreateArray(), *it, *judged;
    int(*pairs)[3] = NULL, n = 0, nf = 0, m = 0, nctl_links = 0;
    const cJSON **ctl; /* per failing pair: its control, by the scan */

    /* a verdict on some links (not "pass": those are no controls) */
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(d, "links"))
        if (round == 0 && uni() < 0.02)
            nt_json_add_str(it, "verdict", "warn");
    assert_int_equal(nt_judge_retest_pairs(j, NULL, d, table, 1, &pairs, &n), NT_OK);
    assert_true(n > 0 || round > 0);
    /* rnd 0 and rnd 1 are the same sequence; each failing pair is followed by the control the
     * scan picks, when there is one */
    assert_int_equal(n % 2, 0);
    for (int i = 0; i < n / 2; i++)
        assert_memory_equal(pairs[i], pairs[n / 2 + i], sizeof(pairs[0]));
    ctl = calloc((size_t)n + 1, sizeof(*ctl));
    judged = cJSON_Duplicate(d, 1);
    assert_int_equal(nt_judge_finish(j, NULL, judged, 0, &params) != NT_EXIT_USAGE, 1);
    while (m < n / 2) {
        const cJSON *c = ref_control(d, judged, pairs, n / 2, pairs[m][0], pairs[m][1], "mpi");
        ctl[nf++] = c;
        m++;
        if (!c)
            continue;
        assert_true(m < n / 2);
        assert_int_equal(pairs[m][0], rank_of(c, "src"));
        assert_int_equal(pairs[m][1], rank_of(c, "dst"));
        m++;
    }
    cJSON_Delete(judged);
    if (round == 0)
        assert_true(nf >= nnodes - 1); /* the bad node's links, at least */
    /* the control set: every link between a control's ranks, nothing else */
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(d, "links")) {
        int la = rank_of(it, "src"), lb = rank_of(it, "dst"), want = 0;
        for (int q = 0; q < nf && !want; q++) {
            int ca, cb;
            if (!ctl[q])
                continue;
            ca = rank_of(ctl[q], "src");
            cb = rank_of(ctl[q], "dst");
            want = (la == ca && lb == cb) || (la == cb && lb == ca);
        }
        assert_int_equal(nt_judge_is_control(j, nt_json_get_str(it, "id", "")), want);
        nctl_links += want;
    }
    if (round == 0)
        assert_true(nctl_links > 0);
    /* measured again: every link of each pair in order; a tenth of the controls disturbed (the
     * machine busy), some retests without figures */
    for (int k = 0; k < n; k++)
        cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(d, "links")) {
            int la = rank_of(it, "src"), lb = rank_of(it, "dst");
            const char *id = nt_json_get_str(it, "id", "");
            double bw = model_bw(la, lb);
            if (la != pairs[k][0] || lb != pairs[k][1])
                continue;
            if (nt_judge_is_control(j, id) && uni() < 0.1)
                bw *= 0.2;
            cJSON_AddItemToArray(rl, mklink(la, lb, nt_json_get_str(it, "scope", ""),
                                            2.0 * (1 + 0.05 * uni()), bw, uni() < 0.03));
        }
    a = cJSON_Duplicate(d, 1);
    b = cJSON_Duplicate(d, 1);
    nt_judge_apply_retest(j, a, rl);
    ref_judge_apply_retest(j, b, rl);
    assert_true(cJSON_Compare(a, b, 1));
    {
        int retested = 0;
        cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(a, "links"))
            retested += cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "retested"));
        assert_true(retested > 0 || round > 0);
    }
    cJSON_Delete(b);
    cJSON_Delete(rl);
    cJSON_Delete(d);
    free(ctl);
    free(pairs);
    return a;
}

/* Two retest rounds (the second one sees retested links: no controls, and a repeated id's
 * second link is the one filed). */
static void one_run(int nnodes, unsigned long long seed)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d;
    rng = seed;
    d = mkdoc(nnodes);
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    for (int round = 0; round < 2; round++)
        d = one_round(j, d, nnodes, round);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* The links of d held as their text (as rank 0 holds them), or back as trees. */
static void freeze_links(cJSON *d, int freeze)
{
    cJSON *links = cJSON_GetObjectItem(d, "links"), *out = cJSON_CreateArray(), *it;
    while ((it = cJSON_DetachItemFromArray(links, 0))) {
        if (freeze) {
            cJSON_AddItemToArray(out, nt_json_freeze(it));
        } else {
            cJSON *t = nt_json_thaw(it);
            cJSON_AddItemToArray(out, t == it ? it : t);
            if (t != it)
                cJSON_Delete(it);
        }
    }
    cJSON_ReplaceItemInObject(d, "links", out);
}

/* A report whose links are held as text is judged exactly as the same report as trees: the
 * retest pairs, the filed retests, the verdicts, the summary and the trimmed samples. */
static void test_text_links_match_trees(void **state)
{
    (void)state;
    for (unsigned long long seed = 1; seed <= 6; seed++) {
        nt_probe_params_t params = {0};
        nt_judge_t *jt, *jf;
        cJSON *t, *f, *rl = cJSON_CreateArray(), *it;
        int(*pt)[3] = NULL, (*pf)[3] = NULL, nt = 0, nf = 0, ct, cf;
        rng = seed;
        t = mkdoc(10 + (int)seed * 3);
        f = cJSON_Duplicate(t, 1);
        freeze_links(f, 1);
        assert_true(cJSON_IsRaw(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "links"), 0)));
        assert_int_equal(nt_judge_create(&params, &jt), NT_OK);
        assert_int_equal(nt_judge_create(&params, &jf), NT_OK);
        assert_int_equal(nt_judge_retest_pairs(jt, NULL, t, table, 1, &pt, &nt), NT_OK);
        assert_int_equal(nt_judge_retest_pairs(jf, NULL, f, table, 1, &pf, &nf), NT_OK);
        assert_int_equal(nt, nf);
        assert_true(nt > 0);
        assert_memory_equal(pt, pf, (size_t)nt * sizeof(pt[0]));
        for (int k = 0; k < nt; k++)
            cJSON_ArrayForEach (it, cJSON_GetObjectItem(t, "links")) {
                int la = rank_of(it, "src"), lb = rank_of(it, "dst");
                if (la == pt[k][0] && lb == pt[k][1])
                    cJSON_AddItemToArray(rl, mklink(la, lb, nt_json_get_str(it, "scope", ""), 2.0,
                                                    model_bw(la, lb), uni() < 0.03));
            }
        nt_judge_apply_retest(jt, t, rl);
        nt_judge_apply_retest(jf, f, rl);
        ct = nt_judge_finish(jt, NULL, t, 0, &params);
        cf = nt_judge_finish(jf, NULL, f, 0, &params);
        assert_int_equal(ct, cf);
        assert_int_equal(ct, NT_EXIT_FAIL);
        assert_true(cJSON_IsRaw(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "links"), 0)));
        freeze_links(f, 0);
        assert_true(cJSON_Compare(t, f, 1));
        assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "summary"),
                                                           "failed_nodes")) >= 1);
        cJSON_Delete(t);
        cJSON_Delete(f);
        cJSON_Delete(rl);
        free(pt);
        free(pf);
        nt_judge_destroy(jt);
        nt_judge_destroy(jf);
    }
}

static void test_retest_matches_scan(void **state)
{
    (void)state;
    for (unsigned long long seed = 1; seed <= 12; seed++)
        one_run(12 + (int)(seed % 5) * 7, seed);
}

/* What fn prints on stdout, malloc'ed. */
static char *capture(void (*fn)(const cJSON *, const char *), const cJSON *doc)
{
    FILE *tmp = tmpfile();
    int saved = dup(STDOUT_FILENO);
    long len;
    char *out;
    assert_non_null(tmp);
    fflush(stdout);
    dup2(fileno(tmp), STDOUT_FILENO);
    fn(doc, "/nonexistent/nettune-report.json");
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    len = ftell(tmp);
    if (len < 0)
        len = lseek(fileno(tmp), 0, SEEK_END);
    out = calloc((size_t)len + 1, 1);
    rewind(tmp);
    assert_int_equal(fread(out, 1, (size_t)len, tmp), (size_t)len);
    fclose(tmp);
    return out;
}

/* Skips of random nodes from a small pool (repeats inside one node too): the grouped lines are
 * those of the scan, in its order. */
static void test_skips_match_scan(void **state)
{
    static const char *probes[] = {"rdma", "gpu", "mpi"};
    static const char *reasons[] = {"no RDMA device", "no GPU", "not selected (--probes mpi)",
                                    "libibverbs missing"};
    (void)state;
    for (unsigned long long seed = 1; seed <= 30; seed++) {
        cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes");
        int nn = 1 + (int)(seed % 7) * 9;
        char *x, *y;
        rng = seed * 77;
        nt_json_add_obj(d, "summary");
        nt_json_add_obj(d, "run");
        for (int i = 0; i < nn; i++) {
            char h[32];
            cJSON *n = cJSON_CreateObject(), *sk = nt_json_add_arr(n, "skipped");
            int k = seed % 3 == 0 ? 1 : (int)(uni() * 4);
            snprintf(h, sizeof(h), "host%03d", i);
            nt_json_add_str(n, "hostname", h);
            for (int s = 0; s < k; s++) {
                cJSON *o = cJSON_CreateObject();
                nt_json_add_str(o, "probe", seed % 3 == 0 ? "rdma" : probes[(int)(uni() * 3)]);
                nt_json_add_str(o, "reason",
                                seed % 3 == 0 ? "no RDMA device" : reasons[(int)(uni() * 4)]);
                cJSON_AddItemToArray(sk, o);
            }
            cJSON_AddItemToArray(nodes, n);
        }
        x = capture(nt_summary_print, d);
        y = capture(ref_summary_print, d);
        /* the oracle is the old skip grouping: the headline and counts lines are newer */
        const char *xs = strchr(x, '\n'), *ys = strchr(y, '\n');
        assert_non_null(xs);
        assert_non_null(ys);
        xs = strchr(xs + 1, '\n');
        ys = strchr(ys + 1, '\n');
        assert_non_null(xs);
        assert_non_null(ys);
        assert_string_equal(xs, ys);
        if (seed % 3 == 0 && nn > 1)
            assert_non_null(strstr(x, "skipped rdma on all"));
        free(x);
        free(y);
        cJSON_Delete(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retest_matches_scan),
        cmocka_unit_test(test_skips_match_scan),
        cmocka_unit_test(test_text_links_match_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
