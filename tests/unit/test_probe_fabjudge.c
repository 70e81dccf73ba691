/* The fabric judge (probes/judge/fabric.c, fabric_doc.c) on synthetic fabrics of
 * tests/unit/fabric_gen.c, and the switch topology readers (lib/node/ibtopo.c) on the captures
 * of tests/fixtures/ibtopo/. Figures over seeds are printed: docs/fabric.md quotes them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fabric_gen.h"
#include "judge/judge.h"
#include "nettune/report.h"
#include "nettune/fabric.h"
#include "nettune/ibtopo.h"

#define SEEDS 20

/* 1 when the groups are the model's leaves, exactly. */
static int nt_groups_are_leaves(const nt_fabgen_t *g, const nt_fab_result_t *r)
{
    if (r->ngroups != g->leaves)
        return 0;
    for (int i = 0; i < g->nodes; i++)
        for (int j = 0; j < g->nodes; j++) {
            int same_leaf = i * g->leaves / g->nodes == j * g->leaves / g->nodes;
            if ((r->group[i] == r->group[j]) != same_leaf)
                return 0;
        }
    return 1;
}

static int nt_confirmed_cuts(const nt_fab_result_t *r)
{
    int n = 0;
    for (int i = 0; i < r->ncuts; i++)
        n += r->cuts[i].confirmed;
    return n;
}

/* A 4:1-ish spine: two leaves of 4 hosts at 2.8 GB/s, 3.6 GB/s each way between them. */
static void test_cut_found_over_seeds(void **state)
{
    int right = 0, cut_right = 0;
    (void)state;
    for (unsigned s = 1; s <= SEEDS; s++) {
        nt_fabgen_t g = nt_fabgen_default();
        nt_fab_input_t in;
        nt_fab_result_t r;
        g.cut_GBps = 3.6;
        g.seed = s;
        nt_fabgen_input(&g, &in);
        assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
        right += nt_groups_are_leaves(&g, &r);
        if (nt_confirmed_cuts(&r) == 1 && r.cuts[0].confirmed &&
            fabs(r.cuts[0].bottleneck - 3.6) < 0.25 * 3.6 &&
            fabs(r.cuts[0].alone_bw - 2.8) < 0.2 * 2.8 && !r.cuts[0].parallel)
            cut_right++; /* one bottleneck for the whole cut: not a parallel link */
        nt_fab_result_free(&r);
        nt_fabgen_input_free(&in);
    }
    print_message("fabric: 2 leaves x 4, 3.6 GB/s cut, 10%% noise: right groups in %d of %d "
                  "seeds, the cut's bottleneck within 25%% in %d\n",
                  right, SEEDS, cut_right);
    assert_true(right >= SEEDS - 1);
    assert_true(cut_right >= SEEDS - 1);
}

/* Four leaves of 8, every leaf pair 5 GB/s each way: the groups are the leaves. */
static void test_four_leaves(void **state)
{
    int right = 0;
    (void)state;
    for (unsigned s = 1; s <= SEEDS; s++) {
        nt_fabgen_t g = nt_fabgen_default();
        nt_fab_input_t in;
        nt_fab_result_t r;
        g.nodes = 32;
        g.leaves = 4;
        g.cut_GBps = 1.5;
        g.seed = s;
        g.bisections = 6;
        g.rings = 6;
        nt_fabgen_input(&g, &in);
        assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
        right += nt_groups_are_leaves(&g, &r);
        nt_fab_result_free(&r);
        nt_fabgen_input_free(&in);
    }
    print_message("fabric: 4 leaves x 8, 1.5 GB/s per leaf pair: right groups in %d of %d seeds\n",
                  right, SEEDS);
    assert_true(right >= SEEDS - 2);
}

/* Healthy fabrics with 10 % and 25 % noise: no confirmed cut, ever. */
static void test_healthy_noisy_no_finding(void **state)
{
    static const double noise[] = {0.1, 0.25};
    (void)state;
    for (size_t k = 0; k < 2; k++) {
        int false_cuts = 0, one_group = 0;
        for (unsigned s = 1; s <= SEEDS; s++) {
            nt_fabgen_t g = nt_fabgen_default();
            nt_fab_input_t in;
            nt_fab_result_t r;
            g.noise = noise[k];
            g.nodes = 16;
            g.seed = s;
            nt_fabgen_input(&g, &in);
            assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
            false_cuts += nt_confirmed_cuts(&r) > 0;
            one_group += r.ngroups == 1;
            nt_fab_result_free(&r);
            nt_fabgen_input_free(&in);
        }
        print_message("fabric: healthy 16 nodes, %.0f%% noise: false cut findings in %d of %d "
                      "seeds, one group in %d\n",
                      noise[k] * 100, false_cuts, SEEDS, one_group);
        assert_int_equal(false_cuts, 0);
    }
}

/* A slow node (its link at a third) is fine under load against itself alone: no cut. */
static void test_slow_node_no_cut(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    nt_fab_input_t in;
    nt_fab_result_t r;
    (void)state;
    g.rails = 2;
    g.slow_rail = 0;
    g.slow_rail_node = 2; /* rail 0 of h3 at 0.4: h3's alone figures are slow as well */
    nt_fabgen_input(&g, &in);
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
    assert_int_equal(nt_confirmed_cuts(&r), 0);
    assert_int_equal(r.nrails, 2);
    assert_true(r.rails[0].slow);
    assert_int_equal(r.rails[0].slow_node, 2);
    assert_false(r.rails[1].slow);
    nt_fab_result_free(&r);
    nt_fabgen_input_free(&in);
}

/* One of two parallel links between the leaves at 1.1 x a host's rate (the pairs to an even
 * node index hashed onto it, as the namespace cluster pins its routes): a pair alone on it is
 * fine, two of its flows at once get about half each, the pairs on the other link are at full
 * speed every time. Over 10 seeds: a confirmed cut between the two leaves' nodes (before the
 * pairs' evidence: none in 10), named as a parallel link with its slow pairs at about half.
 * The groups are the leaves exactly in fewer: a node whose own cross pairs all hashed onto
 * the fast link and never shared the slow one shows nothing that places it. */
static void test_parallel_link_slow(void **state)
{
    int found = 0, parallel = 0, exact = 0;
    (void)state;
    for (unsigned s = 1; s <= 10; s++) {
        nt_fabgen_t g = nt_fabgen_default();
        nt_fab_input_t in;
        nt_fab_result_t r;
        g.parallel_GBps = 1.1 * g.host_GBps;
        g.noise = 0.05;
        g.bisections = 12;
        g.seed = s;
        nt_fabgen_input(&g, &in);
        assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
        exact += nt_groups_are_leaves(&g, &r);
        for (int c = 0; c < r.ncuts; c++) {
            const nt_fab_cut_t *k = &r.cuts[c];
            if (!k->confirmed)
                continue;
            found++;
            if (k->parallel) {
                parallel++;
                assert_true(k->pairs_slow >= 2 && k->pairs_fast >= 2);
                assert_true(k->pairs_slow + k->pairs_fast <= k->pairs);
                assert_true(k->slow_pairs_ratio > 0.4 && k->slow_pairs_ratio < 0.65);
            }
        }
        nt_fab_result_free(&r);
        nt_fabgen_input_free(&in);
    }
    print_message("fabric: one of 2 parallel links slow: a confirmed cut in %d of 10 seeds, "
                  "named a parallel link in %d, the groups exactly the leaves in %d\n",
                  found, parallel, exact);
    assert_true(found >= 9);
    assert_true(parallel >= 7);
    assert_true(exact >= 3);
}

/* The namespace cluster's spine-one-slow (tests/cluster/fabric.sh) as a model: 2 leaves of 4,
 * two parallel spine links, the pairs to an even node index (h1, h3, h5, h7) pinned on the
 * slow one at 1.1 x a host's rate, and the probe's schedule there (every pair alone, 32 cuts,
 * 32 rings, one all-to-all), at 5 % and 10 % noise, 20 seeds each: the groups are the
 * leaves in 20 and 20 (with 16 cuts and 16 rings, the caps of before: 20 and 19; before the
 * exhaustive search of small N and the rejoin after the parallel-link refinement in
 * probes/judge/fabric.c: 17 and 14). */
static void test_spine_one_slow_shape(void **state)
{
    static const double noise[] = {0.05, 0.1};
    (void)state;
    for (size_t k = 0; k < 2; k++) {
        int right = 0, parallel = 0;
        for (unsigned s = 1; s <= SEEDS; s++) {
            nt_fabgen_t g = nt_fabgen_default();
            nt_fab_input_t in;
            nt_fab_result_t r;
            int named = 0;
            g.parallel_GBps = 1.1 * g.host_GBps;
            g.noise = noise[k];
            g.bisections = 32;
            g.rings = 32;
            g.seed = s;
            nt_fabgen_input(&g, &in);
            assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
            right += nt_groups_are_leaves(&g, &r);
            for (int c = 0; c < r.ncuts; c++)
                named |= r.cuts[c].confirmed && r.cuts[c].parallel;
            parallel += named;
            nt_fab_result_free(&r);
            nt_fabgen_input_free(&in);
        }
        print_message("fabric: spine-one-slow's shape (2 leaves x 4, one of 2 parallel links "
                      "slow, 32 cuts, 32 rings), %.0f%% noise: right groups in %d of %d seeds, "
                      "a parallel link named in %d\n",
                      noise[k] * 100, right, SEEDS, parallel);
        assert_true(right >= SEEDS - 2);
        assert_true(parallel >= SEEDS - 1);
    }
}

/* One node's rail 1 at a quarter, its rail 0 fine: that node's rail is named from its flows one
 * at a time (alone rounds and rail_one), also in the report; no cut. */
static void test_rail_of_one_node(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    nt_fab_input_t in;
    nt_fab_result_t r;
    cJSON *fab, *it;
    int named = 0;
    (void)state;
    g.rails = 2;
    g.slow_rail = 1;
    g.slow_rail_node = 2;
    g.slow_factor = 0.25;
    nt_fabgen_input(&g, &in);
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
    assert_int_equal(nt_confirmed_cuts(&r), 0);
    assert_int_equal(r.rails[1].node, 2);
    assert_true(r.rails[1].node_bw < 0.4 * r.rails[1].others_bw);
    assert_int_equal(r.rails[0].node, -1);
    nt_fab_result_free(&r);
    nt_fabgen_input_free(&in);
    assert_non_null(fab = nt_fabgen_doc(&g));
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(fab, "checks")) {
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(it, "message"));
        if (m && strstr(m, "rail 1 of h3") && strstr(m, "rail-1 NIC") &&
            strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "status")), "warn") == 0)
            named++;
    }
    assert_int_equal(named, 1);
    cJSON_Delete(fab);
    /* healthy 2-rail fabrics with 10 % and 25 % noise: no node's rail named, over 20 seeds */
    for (int k = 0; k < 2; k++)
        for (unsigned s = 1; s <= SEEDS; s++) {
            g = nt_fabgen_default();
            g.rails = 2;
            g.noise = k ? 0.25 : 0.1;
            g.seed = s;
            nt_fabgen_input(&g, &in);
            assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
            assert_int_equal(r.rails[0].node, -1);
            assert_int_equal(r.rails[1].node, -1);
            nt_fab_result_free(&r);
            nt_fabgen_input_free(&in);
        }
}

/* One stall of a host slows both its flows of one rail_one round (it sends and receives in
 * every such round): no rail named; the same in a second round of that rail confirms it. */
static void nt_slow_node_in_rail_round(nt_fab_input_t *in, int rail, int node, int nth)
{
    int seen = 0;
    for (size_t r = 0; r < in->nrounds; r++) {
        const nt_fab_mround_t *rd = &in->rounds[r];
        nt_fab_mflow_t *f = (nt_fab_mflow_t *)in->flows + rd->first;
        if (rd->phase != NT_FAB_RAIL_ONE || !rd->n || f[0].rail != rail || seen++ != nth)
            continue;
        for (size_t i = 0; i < rd->n; i++)
            if (f[i].src == node || f[i].dst == node)
                f[i].bw_GBps *= 0.5;
    }
}

static void test_rail_one_round_stall(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    nt_fab_input_t in;
    nt_fab_result_t r;
    (void)state;
    g.rails = 2;
    g.noise = 0.02;
    nt_fabgen_input(&g, &in);
    nt_slow_node_in_rail_round(&in, 0, 2, 0);
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
    assert_false(r.rails[0].slow);
    assert_int_equal(r.rails[0].slow_node, -1);
    nt_fab_result_free(&r);
    nt_slow_node_in_rail_round(&in, 0, 2, 1);
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
    assert_true(r.rails[0].slow);
    assert_int_equal(r.rails[0].slow_node, 2);
    assert_false(r.rails[1].slow);
    nt_fab_result_free(&r);
    nt_fabgen_input_free(&in);
}

/* A rail slow on every node is named without a node. */
static void test_slow_rail(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    nt_fab_input_t in;
    nt_fab_result_t r;
    (void)state;
    g.rails = 2;
    g.slow_rail = 1;
    nt_fabgen_input(&g, &in);
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
    assert_true(r.rails[1].slow);
    assert_int_equal(r.rails[1].slow_node, -1);
    assert_true(fabs(r.rails[1].one_bw - 0.4 * 2.8) < 0.3);
    assert_false(r.rails[0].slow);
    nt_fab_result_free(&r);
    nt_fabgen_input_free(&in);
}

/* A rail fine on its own and at half while all rails run: it shares a link (NT-FAB-203). */
static void test_shared_rail(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    cJSON *fab, *it;
    int found = 0;
    (void)state;
    g.rails = 2;
    g.shared_rail = 1;
    g.noise = 0.05;
    fab = nt_fabgen_doc(&g);
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(fab, "checks")) {
        const char *code = cJSON_GetObjectItem(it, "code")->valuestring;
        if (strcmp(code, "NT-FAB-203") == 0) {
            assert_string_equal(cJSON_GetObjectItem(it, "status")->valuestring, "warn");
            assert_non_null(strstr(cJSON_GetObjectItem(it, "message")->valuestring,
                                   "rail 1 slows when all rails run at once"));
            /* the fields nettune report --diff compares: the rail, the figure (at half) */
            assert_int_equal(nt_json_get_int(it, "rail", -1), 1);
            assert_null(cJSON_GetObjectItem(it, "node"));
            assert_true(fabs(nt_json_get_num(it, "bw_GBps", NAN) - 0.5 * 2.8) < 0.3);
            found++;
        }
        if (strcmp(code, "NT-FAB-202") == 0) /* rail 0 judged, and fine */
            assert_string_equal(cJSON_GetObjectItem(it, "status")->valuestring, "pass");
    }
    assert_int_equal(found, 1);
    cJSON_Delete(fab);
}

/* Loaded flows with no pair alone: not judged with the reason, no groups. */
static void test_no_alone_not_judged(void **state)
{
    nt_fab_mflow_t f[] = {{0, 1, 0, 2.0}, {1, 0, 0, 2.0}, {2, 3, 0, 2.0}, {3, 2, 0, 2.0}};
    nt_fab_mround_t rd[] = {{NT_FAB_BISECTION, 0, 4}};
    nt_fab_input_t in = {4, 1, f, 4, rd, 1};
    nt_fab_result_t r;
    (void)state;
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_OK);
    assert_non_null(strstr(r.why, "no alone reference"));
    assert_int_equal(r.ngroups, 0);
    assert_int_equal(r.group[0], -1);
    nt_fab_result_free(&r);
    f[0].src = 9; /* out of range */
    assert_int_equal(nt_fab_judge(&in, NULL, &r), NT_ERR_INVALID);
}

/* The report's section: cuts with the contract's fields, the detail line, checks with codes. */
static void test_doc_cut(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    cJSON *fab, *cut, *chk;
    const char *detail;
    (void)state;
    g.cut_GBps = 3.6;
    fab = nt_fabgen_doc(&g);
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "groups")), 2);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetArrayItem(cJSON_GetObjectItem(fab, "groups"),
                                                               1),
                                           0)
                            ->valuestring,
                        "h5");
    cut = cJSON_GetArrayItem(cJSON_GetObjectItem(fab, "cuts"), 0);
    assert_non_null(cut);
    assert_string_equal(cJSON_GetObjectItem(cut, "code")->valuestring, "NT-FAB-201");
    assert_string_equal(cJSON_GetObjectItem(cut, "category")->valuestring, "monitor");
    assert_string_equal(cJSON_GetObjectItem(cut, "status")->valuestring, "warn");
    detail = cJSON_GetObjectItem(cut, "detail")->valuestring;
    print_message("fabric: %s\n", detail);
    assert_non_null(strstr(detail, "between {h1..h4} and {h5..h8}: "));
    assert_non_null(strstr(detail, "a shared bottleneck of about 3."));
    chk = cJSON_GetArrayItem(cJSON_GetObjectItem(fab, "checks"), 0);
    assert_string_equal(cJSON_GetObjectItem(chk, "check")->valuestring, "fabric_cut");
    cJSON_Delete(fab);
}

/* Rail addresses: the same cut with one address per node is judged; with h1 and h2 on one
 * address (one network stack: fake nodes on one host) nothing is judged, and the reason names
 * the two nodes and the address. */
static void add_addresses(cJSON *fab, int same)
{
    cJSON *addrs = cJSON_AddArrayToObject(fab, "rail_addresses");
    for (int n = 0; n < 8; n++) {
        char ip[32];
        cJSON *per = cJSON_CreateArray();
        snprintf(ip, sizeof(ip), "10.0.0.%d", same && n == 1 ? 1 : n + 1);
        cJSON_AddItemToArray(per, cJSON_CreateString(ip));
        cJSON_AddItemToArray(addrs, per);
    }
}

static void test_doc_shared_stack(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    cJSON *fab, *nj;
    (void)state;
    g.cut_GBps = 3.6;
    fab = nt_fabgen_doc(&g);
    add_addresses(fab, 0);
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "cuts")), 1);
    cJSON_Delete(fab);

    fab = nt_fabgen_doc(&g);
    add_addresses(fab, 1);
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "cuts")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "checks")), 0);
    assert_null(cJSON_GetObjectItem(fab, "groups"));
    nj = cJSON_GetObjectItem(fab, "not_judged");
    assert_int_equal(cJSON_GetArraySize(nj), 1);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(nj, 0), "reason")->valuestring,
                        "2 nodes (h1, h2) share the address 10.0.0.1 (rail 0): one network "
                        "stack, one machine; their flows never cross a fabric, so no cut, group "
                        "or rail is judged");
    cJSON_Delete(fab);
}

static void test_doc_skipped_and_healthy(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    cJSON *fab = cJSON_Parse("{\"status\":\"skipped\",\"reason\":\"one node\"}"), *chk;
    (void)state;
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetArrayItem(
                                                   cJSON_GetObjectItem(fab, "not_judged"), 0),
                                               "reason")
                               ->valuestring,
                           "skipped: one node"));
    cJSON_Delete(fab);
    fab = nt_fabgen_doc(&g);
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "cuts")), 0);
    chk = cJSON_GetArrayItem(cJSON_GetObjectItem(fab, "checks"), 0);
    assert_string_equal(cJSON_GetObjectItem(chk, "status")->valuestring, "pass");
    cJSON_Delete(fab);
}

/* Every flow under load slowed, as when every flow shares one aggregate (fake nodes on one
 * machine's CPU): no group holds two nodes, so there is no cut to name, and the judge says so
 * once instead of passing "no shared bottleneck". */
static void test_doc_every_flow_slowed(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    cJSON *fab, *nj, *chk;
    int cuts_named = 0, said = 0;
    (void)state;
    g.total_GBps = g.host_GBps;
    fab = nt_fabgen_doc(&g);
    assert_int_equal(nt_fabric_judge_doc(fab, NULL), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "groups")), g.nodes);
    cJSON_ArrayForEach(chk, cJSON_GetObjectItem(fab, "checks"))
    {
        assert_string_not_equal(cJSON_GetObjectItem(chk, "status")->valuestring, "pass");
        cuts_named++;
    }
    assert_int_equal(cuts_named, 0);
    cJSON_ArrayForEach(nj, cJSON_GetObjectItem(fab, "not_judged"))
    {
        const char *r = cJSON_GetObjectItem(nj, "reason")->valuestring;
        assert_null(strstr(r, ": a group of its own ("));
        said += strstr(r, "every node is a group of its own") != NULL;
    }
    assert_int_equal(said, 1);
    cJSON_Delete(fab);
}

static void test_group_name(void **state)
{
    const char *h[] = {"h1", "h2", "h3", "h4", "gpu07", "login", "x9", "x10"};
    int a[] = {0, 1, 2, 3}, b[] = {0, 4, 5}, c[] = {0, 1, 4, 5, 6, 7}, d[] = {6, 7};
    char buf[128];
    (void)state;
    assert_string_equal(nt_fab_group_name(h, a, 4, buf, sizeof(buf)), "{h1..h4}");
    assert_string_equal(nt_fab_group_name(h, b, 3, buf, sizeof(buf)), "{h1, gpu07, login}");
    assert_string_equal(nt_fab_group_name(h, c, 6, buf, sizeof(buf)),
                        "{h1, h2, gpu07, +3 more}");
    assert_string_equal(nt_fab_group_name(h, d, 2, buf, sizeof(buf)), "{x9..x10}");
}

/* The X5 capture (tests/fixtures/ibtopo/MANIFEST): the switches without host ports are the 5
 * spines its repository lists in X5.spine; every host port line is read. */
static void test_ibnetdiscover_x5(void **state)
{
    static const char *const spines[] = {"0x0008f105001086a2", "0x0008f10500108098",
                                         "0x0008f10500108c5c", "0x0008f10500108530",
                                         "0x0008f1050010851e"};
    nt_ibtopo_t t;
    int nspine = 0, nleaf = 0;
    (void)state;
    assert_int_equal(nt_ibtopo_load("tests/fixtures/ibtopo/x5-psmn.ibnetdiscover", &t), NT_OK);
    assert_string_equal(t.format, "ibnetdiscover");
    assert_int_equal(t.nswitches, 11);
    assert_int_equal(t.nhosts, 89);
    for (size_t i = 0; i < t.nswitches; i++) {
        int listed = 0;
        for (size_t k = 0; k < 5; k++)
            listed |= strcmp(t.switches[i].guid, spines[k]) == 0;
        assert_int_equal(listed, t.switches[i].nhosts == 0);
        nspine += listed;
        nleaf += t.switches[i].nhosts > 0;
    }
    assert_int_equal(nspine, 5);
    /* the MANIFEST's figure: the 89 host ports hang off the 6 switches that are not spines */
    assert_int_equal(nleaf, 6);
    /* the first host port of the first switch block, and its leaf */
    assert_string_equal(t.hosts[0].name, "H-003048c749cd0000");
    assert_string_equal(t.switches[t.hosts[0].leaf].guid, "0x0008f10500200b50");
    assert_int_equal(nt_ibtopo_leaf_of(&t, "H-003048c749cd0000.x5"), t.hosts[0].leaf);
    assert_int_equal(nt_ibtopo_leaf_of(&t, "nothere"), -1);
    nt_ibtopo_free(&t);
    assert_int_equal(nt_ibtopo_load("tests/fixtures/ibtopo/MANIFEST", &t), NT_ERR_PARSE);
}

/* The judge pass over a report with a fabric section: the cut is a warning of the run that
 * fails and drains no node, counted with the checks; a topology file that is not there stops
 * the judge before the run (exit 2). */
static void test_judge_finish_fabric(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = cJSON_CreateObject(), *sum, *w;
    (void)state;
    g.cut_GBps = 3.6;
    nt_json_add_arr(d, "nodes");
    nt_json_add_arr(d, "links");
    nt_json_add_arr(d, "checks");
    cJSON_AddItemToObject(d, "fabric", nt_fabgen_doc(&g));
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    sum = cJSON_GetObjectItem(d, "summary");
    assert_string_equal(nt_json_get_str(sum, "verdict", ""), "warn");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "failed_nodes")), 0);
    assert_int_equal(nt_json_get_int(cJSON_GetObjectItem(sum, "counts"), "warn", -1), 1);
    w = cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "warnings"), 0);
    assert_non_null(strstr(w->valuestring, "fabric: between {h1..h4} and {h5..h8}"));
    nt_judge_destroy(j);
    cJSON_Delete(d);
    /* a skipped section: its line says "fabric" once */
    d = cJSON_Parse("{\"nodes\":[],\"links\":[],\"checks\":[],\"fabric\":{\"status\":"
                    "\"skipped\",\"reason\":\"one node\"}}");
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    sum = cJSON_GetObjectItem(d, "summary");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "not_judged"), 0)->valuestring,
                        "fabric: the fabric phases were skipped: one node");
    /* and counted: the summary's "N not judged" is its not-judged lines */
    assert_int_equal(nt_json_get_int(cJSON_GetObjectItem(sum, "counts"), "not_judged", -1), 1);
    assert_string_equal(nt_json_get_str(sum, "verdict", ""), "not_judged");
    nt_judge_destroy(j);
    cJSON_Delete(d);
    params.fabric_topology = "tests/fixtures/ibtopo/absent.ibnetdiscover";
    assert_int_equal(nt_judge_create(&params, &j), NT_ERR_NOT_FOUND);
}

/* iblinkinfo, both layouts, on the fuzz target's hand-made seed (no public capture with its
 * source was found: tests/fixtures/ibtopo/MANIFEST): switch sections, a one-line switch entry,
 * a CA section whose switch is named by description only (not a leaf of its own). */
static void test_iblinkinfo_layouts(void **state)
{
    nt_ibtopo_t t;
    (void)state;
    assert_int_equal(
        nt_ibtopo_load("tests/fuzz/corpus/ibtopo/seed-iblinkinfo-both-layouts.txt", &t), NT_OK);
    assert_string_equal(t.format, "iblinkinfo");
    assert_int_equal(t.nswitches, 2);
    assert_int_equal(t.nhosts, 2);
    assert_string_equal(t.switches[0].desc, "MF0;leaf01:MQM9700/U1");
    assert_string_equal(t.switches[nt_ibtopo_leaf_of(&t, "node01")].guid, "0x0000000000000001");
    assert_string_equal(t.switches[nt_ibtopo_leaf_of(&t, "node02")].guid, "0x0000000000000002");
    assert_int_equal(nt_ibtopo_line("           1    2[  ] ==(                Down/ Polling)==>  "
                                    "           [  ] \"\" ( )"),
                     1);
    assert_int_equal(nt_ibtopo_line("NCCL INFO Channel 00/02 : 0 1"), 0);
    nt_ibtopo_free(&t);
}

/* iblinkinfo on a real capture (tests/fixtures/ibtopo/MANIFEST: an 8-host QDR cluster under one
 * Infiniscale-IV switch): the default layout with CA sections before and after the switch
 * section. The switch section has 9 active host ports: teaker-4..11, teaker-9 on two (ports 3
 * and 14), which is one host of that leaf, not two; the CA sections name the switch by
 * description only and add no switch of their own. */
static void test_iblinkinfo_real(void **state)
{
    nt_ibtopo_t t;
    int leaf;
    (void)state;
    assert_int_equal(nt_ibtopo_load("tests/fixtures/ibtopo/teaker-madsys.iblinkinfo", &t), NT_OK);
    assert_string_equal(t.format, "iblinkinfo");
    assert_int_equal(t.nswitches, 1);
    assert_string_equal(t.switches[0].guid, "0x0002c902004b2678");
    assert_string_equal(t.switches[0].desc, "Infiniscale-IV Mellanox Technologies");
    assert_int_equal(t.switches[0].nhosts, 8);
    assert_int_equal(t.nhosts, 8);
    leaf = nt_ibtopo_leaf_of(&t, "teaker-10");
    assert_int_equal(leaf, 0);
    assert_int_equal(nt_ibtopo_leaf_of(&t, "teaker-4"), 0);
    assert_int_equal(nt_ibtopo_leaf_of(&t, "teaker-9"), 0);
    assert_int_equal(nt_ibtopo_leaf_of(&t, "teaker-3"), -1);
    {
        const char *head = "CA: teaker-4 HCA-1:\n      0xf45214030091b9f1      1    1[  ] ==( 4X  "
                           "        10.0 Gbps Active/  LinkUp)==>       2    9[  ] "
                           "\"Infiniscale-IV Mellanox Technologies\" ( )\n";
        assert_string_equal(nt_ibtopo_sniff(head, strlen(head)), "iblinkinfo");
    }
    nt_ibtopo_free(&t);
}

static const cJSON *topology_check(const cJSON *fab)
{
    const cJSON *c, *found = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(fab, "checks"))
    {
        if (strcmp(nt_json_get_str(c, "check", ""), "fabric_topology") == 0) {
            assert_null(found);
            found = c;
        }
    }
    assert_non_null(found);
    return found;
}

/* The groups held against the switches: the model's leaves agree, a leaf split disagrees (as
 * information: the row's category), groups of one node each are not judged. */
static void test_doc_topology(void **state)
{
    nt_fabgen_t g = nt_fabgen_default();
    const cJSON *chk;
    nt_ibtopo_host_t hosts[8];
    nt_ibtopo_switch_t sw[2] = {{"0x1", "leaf01", 4}, {"0x2", "leaf02", 4}};
    nt_ibtopo_t t = {"ibnetdiscover", hosts, 8, sw, 2};
    cJSON *fab;
    (void)state;
    g.cut_GBps = 3.6;
    for (int i = 0; i < 8; i++) {
        snprintf(hosts[i].name, sizeof(hosts[i].name), "h%d", i + 1);
        hosts[i].leaf = i / 4;
    }
    fab = nt_fabgen_doc(&g);
    assert_int_equal(nt_fabric_judge_doc(fab, &t), NT_OK);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(fab, "topology"), "agree")
                            ->valuestring,
                        "yes");
    hosts[3].leaf = 1; /* h4 cabled to leaf02: its group is leaf01's */
    assert_int_equal(nt_fabric_judge_doc(fab, &t), NT_OK);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(fab, "topology"), "agree")
                            ->valuestring,
                        "no");
    /* information, as its row says (NT-FAB-204, info): never a warning of the run */
    chk = topology_check(fab);
    assert_string_equal(nt_json_get_str(chk, "category", ""), "info");
    assert_string_equal(nt_json_get_str(chk, "status", ""), "pass");
    assert_non_null(strstr(nt_json_get_str(chk, "message", ""), "the hosts of leaf 0x2 leaf02"));
    cJSON_Delete(fab);
    /* every node a group of its own (every flow under load slowed): nothing to compare */
    g.total_GBps = g.host_GBps;
    hosts[3].leaf = 0;
    fab = nt_fabgen_doc(&g);
    assert_int_equal(nt_fabric_judge_doc(fab, &t), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(fab, "groups")), g.nodes);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(fab, "topology"), "agree")
                            ->valuestring,
                        "unknown");
    chk = topology_check(fab);
    assert_string_equal(nt_json_get_str(chk, "status", ""), "not_judged");
    assert_non_null(strstr(nt_json_get_str(chk, "message", ""), "every node is a group of its own"));
    cJSON_Delete(fab);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_found_over_seeds),
        cmocka_unit_test(test_four_leaves),
        cmocka_unit_test(test_healthy_noisy_no_finding),
        cmocka_unit_test(test_slow_node_no_cut),
        cmocka_unit_test(test_rail_one_round_stall),
        cmocka_unit_test(test_slow_rail),
        cmocka_unit_test(test_parallel_link_slow),
        cmocka_unit_test(test_spine_one_slow_shape),
        cmocka_unit_test(test_rail_of_one_node),
        cmocka_unit_test(test_shared_rail),
        cmocka_unit_test(test_no_alone_not_judged),
        cmocka_unit_test(test_doc_cut),
        cmocka_unit_test(test_doc_shared_stack),
        cmocka_unit_test(test_doc_skipped_and_healthy),
        cmocka_unit_test(test_doc_every_flow_slowed),
        cmocka_unit_test(test_group_name),
        cmocka_unit_test(test_ibnetdiscover_x5),
        cmocka_unit_test(test_doc_topology),
        cmocka_unit_test(test_iblinkinfo_layouts),
        cmocka_unit_test(test_iblinkinfo_real),
        cmocka_unit_test(test_judge_finish_fabric),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
