/* The verdict engine on synthetic populations (issue 2, item 7 and its tests): one slow link
 * among 16, one bad node among 4 and among 8 blamed alone, a population under 5 not judged by
 * peers, expected figures, the latency direction, retest, and argument checks. Values are
 * chosen so that every median can be worked out by hand (nearest rank, lower middle). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/verdict.h"

#define MIB (1024u * 1024u)
#define MAXL 256

typedef struct fixture {
    nt_vlink_t l[MAXL];
    size_t n;
    nt_node_verdict_t nodes[64];
    char names[64][16];
    int nnodes;
} fixture_t;

static fixture_t F;

static void reset(int nnodes)
{
    memset(&F, 0, sizeof(F));
    F.nnodes = nnodes;
    for (int i = 0; i < nnodes; i++) {
        snprintf(F.names[i], sizeof(F.names[i]), "n%d", i);
        F.nodes[i].host = F.names[i];
    }
}

static nt_vlink_t *add(const char *kind, size_t bytes, int metric, double value, int src,
                       int dst)
{
    assert_true(F.n < MAXL);
    nt_vlink_t *l = &F.l[F.n++];
    l->kind = kind;
    l->scope = src == dst ? "intra" : "inter";
    l->bytes = bytes;
    l->metric = metric;
    l->value = value;
    l->expected = NAN;
    l->src_node = src;
    l->dst_node = dst;
    l->retest_value = NAN;
    return l;
}

static nt_status_t judge(const nt_peer_rules_t *p)
{
    return nt_verdict_judge(F.l, F.n, F.nnodes, p, F.nodes);
}

static int touches(const nt_vlink_t *l, int node)
{
    return l->src_node == node || l->dst_node == node;
}

/* The circle method for an even number of nodes: N-1 rounds of N/2 disjoint pairs, node N-1
 * fixed, the others rotating. Returns the number of pairs (N(N-1)/2) and checks every pair
 * comes exactly once, so the test builds a real --full schedule. */
static int full_pairs(int N, int pairs[][2])
{
    int np = 0;
    int seen[16][16] = {{0}};
    assert_true(N % 2 == 0 && N <= 16);
    for (int r = 0; r < N - 1; r++) {
        pairs[np][0] = r;
        pairs[np][1] = N - 1;
        np++;
        for (int k = 1; k < N / 2; k++) {
            pairs[np][0] = (r + k) % (N - 1);
            pairs[np][1] = (r - k + (N - 1)) % (N - 1);
            np++;
        }
    }
    for (int i = 0; i < np; i++) {
        int a = pairs[i][0], b = pairs[i][1];
        assert_int_not_equal(a, b);
        seen[a < b ? a : b][a < b ? b : a]++;
    }
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++)
            assert_int_equal(seen[a][b], 1);
    assert_int_equal(np, N * (N - 1) / 2);
    return np;
}

/* ---- one slow link among 16 -------------------------------------------------------------- */

/* 8 nodes in the --quick shape (ring i->i+1 plus shifted ring i->i+2): 16 links, 4 partners
 * per node. Healthy values 10.00..10.20 GB/s; link 0 (n0->n1) runs 6 GB/s. */
static void build_quick16(double slow)
{
    reset(8);
    for (int k = 0; k < 16; k++) {
        int src = k % 8, dst = (src + (k < 8 ? 1 : 2)) % 8;
        add("mpi", MIB, NT_METRIC_BW, k == 0 ? slow : 10.0 + 0.05 * (k % 5), src, dst);
    }
}

static void test_one_slow_link_among_16(void **state)
{
    (void)state;
    build_quick16(6.0);
    assert_int_equal(judge(NULL), NT_OK);
    /* Sorted: 6, 10.00 x3, 10.05 x3, 10.10 x3, ...: the 8th of 16 is 10.10. */
    for (size_t i = 0; i < F.n; i++) {
        assert_int_equal(F.l[i].population, 16);
        assert_true(fabs(F.l[i].reference - 10.10) < 1e-9);
        if (i == 0)
            continue;
        assert_int_equal(F.l[i].verdict, NT_PASS);
        assert_int_equal(F.l[i].fired, 0);
        assert_string_equal(F.l[i].reason, "");
    }
    assert_int_equal(F.l[0].verdict, NT_FAIL);
    assert_int_equal(F.l[0].fired, NT_FIRED_PEER);
    assert_true(nt_vlink_is_link_fault(&F.l[0]));
    assert_string_equal(F.l[0].reason,
                        "at 1 MiB: 6 GB/s, below 93% of the population median 10.1 GB/s "
                        "(16 links)");
    for (int i = 0; i < 8; i++) {
        assert_int_equal(F.nodes[i].verdict, NT_PASS);
        assert_int_equal(F.nodes[i].blamed, 0);
        assert_int_equal(F.nodes[i].suspect, 0);
        assert_int_equal(F.nodes[i].partners, 4);
        assert_int_equal(F.nodes[i].failed_partners, (i == 0 || i == 1) ? 1 : 0);
        assert_string_equal(F.nodes[i].reason, "");
    }
}

/* The same figures with 16 disjoint pairs (one round of 32 nodes): both ends of the slow link
 * are suspect (their only link is slow), so the reference leaves that link out, and neither is
 * blamed (one partner each). */
static void test_one_slow_link_disjoint_pairs(void **state)
{
    (void)state;
    reset(32);
    for (int k = 0; k < 16; k++)
        add("mpi", MIB, NT_METRIC_BW, k == 0 ? 6.0 : 10.0 + 0.05 * (k % 5), 2 * k, 2 * k + 1);
    assert_int_equal(judge(NULL), NT_OK);
    /* 15 healthy links: 10.00 x3, 10.05 x3, 10.10 x3 ...: the 8th of 15 is 10.10 */
    assert_true(fabs(F.l[0].reference - 10.10) < 1e-9);
    assert_int_equal(F.l[0].verdict, NT_FAIL);
    for (size_t i = 1; i < F.n; i++)
        assert_int_equal(F.l[i].verdict, NT_PASS);
    assert_int_equal(F.nodes[0].suspect, 1);
    assert_int_equal(F.nodes[1].suspect, 1);
    for (int i = 0; i < 32; i++) {
        assert_int_equal(F.nodes[i].blamed, 0);
        assert_int_equal(F.nodes[i].verdict, NT_PASS);
        if (i > 1)
            assert_int_equal(F.nodes[i].suspect, 0);
    }
}

/* A slow link that is only a little slow stays inside 93% and passes. */
static void test_slow_link_inside_ratio_passes(void **state)
{
    (void)state;
    build_quick16(9.5); /* 9.5 >= 0.93 x 10.10 = 9.393 */
    assert_int_equal(judge(NULL), NT_OK);
    for (size_t i = 0; i < F.n; i++)
        assert_int_equal(F.l[i].verdict, NT_PASS);
    build_quick16(9.35); /* 9.35 < 9.393 */
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_FAIL);
}

/* ---- one bad node among 4 and among 8 ---------------------------------------------------- */

static void check_bad_node(int N, int bad)
{
    int pairs[120][2];
    int np = full_pairs(N, pairs);
    reset(N);
    for (int i = 0; i < np; i++) {
        int a = pairs[i][0], b = pairs[i][1];
        int slow = a == bad || b == bad;
        /* bandwidth at 1 MiB and latency at 8 B for every pair */
        add("mpi", MIB, NT_METRIC_BW, slow ? 2.0 : 10.0, a, b);
        add("mpi", 8, NT_METRIC_LAT, slow ? 12.0 : 1.5, a, b);
    }
    assert_int_equal(judge(NULL), NT_OK);

    for (size_t i = 0; i < F.n; i++) {
        const nt_vlink_t *l = &F.l[i];
        assert_int_equal((int)l->population, np);
        if (touches(l, bad)) {
            assert_int_equal(l->verdict, NT_FAIL);
            assert_int_equal(l->fired, NT_FIRED_PEER | NT_FIRED_BLAME);
            assert_false(nt_vlink_is_link_fault(l));
            /* the reference leaves the bad node's links out */
            assert_true(l->reference == (l->metric == NT_METRIC_BW ? 10.0 : 1.5));
            char want[256];
            if (l->metric == NT_METRIC_BW)
                snprintf(want, sizeof(want),
                         "caused by blamed node n%d; at 1 MiB: 2 GB/s, below 93%% of the "
                         "population median 10 GB/s (%d links)", bad, np);
            else
                snprintf(want, sizeof(want),
                         "caused by blamed node n%d; at 8 B: latency 12 us, above 2x the "
                         "population median 1.5 us (%d links)", bad, np);
            assert_string_equal(l->reason, want);
        } else {
            assert_int_equal(l->verdict, NT_PASS);
            assert_int_equal(l->fired, 0);
        }
    }
    for (int i = 0; i < N; i++) {
        const nt_node_verdict_t *nv = &F.nodes[i];
        assert_int_equal(nv->partners, N - 1);
        if (i == bad) {
            char want[256];
            assert_int_equal(nv->blamed, 1);
            assert_int_equal(nv->suspect, 1);
            assert_int_equal(nv->verdict, NT_FAIL);
            assert_int_equal(nv->failed_partners, N - 1);
            /* latency is 8x worse, bandwidth 5x: the worst evidence is quoted */
            snprintf(want, sizeof(want),
                     "fails with %d of %d partners: mpi 8 B median 12 us vs 1.5 us population",
                     N - 1, N - 1);
            assert_string_equal(nv->reason, want);
        } else {
            assert_int_equal(nv->blamed, 0);
            assert_int_equal(nv->suspect, 0);
            assert_int_equal(nv->verdict, NT_PASS);
            assert_int_equal(nv->failed_partners, 1);
            assert_string_equal(nv->reason, "");
        }
    }
}

static void test_bad_node_among_4(void **state)
{
    (void)state;
    check_bad_node(4, 2);
}

static void test_bad_node_among_8(void **state)
{
    (void)state;
    check_bad_node(8, 5);
    check_bad_node(8, 0);
    check_bad_node(8, 7);
}

/* Bandwidth only among 4: the exact node reason quotes the bandwidth population. */
/* A bad node (n2) among 4, plus one noisy link between two good nodes (n1-n3): before the fix
 * n1 and n3 "failed with 2 of 3 partners" (n2 and each other) and were blamed too. Partners
 * already blamed do not count towards another node's blame: only n2 is blamed, and the noisy
 * link stays a link fault of its own. */
static void test_bad_node_plus_noisy_link(void **state)
{
    int pairs[120][2];
    int np = full_pairs(4, pairs);
    (void)state;
    reset(4);
    for (int i = 0; i < np; i++) {
        int a = pairs[i][0], b = pairs[i][1];
        int slow = a == 2 || b == 2, noisy = (a == 1 && b == 3) || (a == 3 && b == 1);
        add("mpi", MIB, NT_METRIC_BW, slow ? 2.0 : noisy ? 8.0 : 10.0, a, b);
    }
    /* 6 links: under min_population 5? no, 6 >= 5: peers judge */
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.nodes[2].blamed, 1);
    assert_int_equal(F.nodes[1].blamed, 0);
    assert_int_equal(F.nodes[3].blamed, 0);
    assert_int_equal(F.nodes[0].blamed, 0);
    assert_int_equal(F.nodes[1].failed_partners, 2); /* reported over all partners */
    for (size_t i = 0; i < F.n; i++) {
        const nt_vlink_t *l = &F.l[i];
        int noisy = (l->src_node == 1 && l->dst_node == 3) || (l->src_node == 3 && l->dst_node == 1);
        if (noisy) {
            assert_int_equal(l->verdict, NT_FAIL);
            assert_true(nt_vlink_is_link_fault(l));
        }
    }
}

static void test_bad_node_reason_bw(void **state)
{
    (void)state;
    int pairs[6][2];
    full_pairs(4, pairs);
    reset(4);
    for (int i = 0; i < 6; i++)
        add("rdma", 8 * MIB, NT_METRIC_BW, (pairs[i][0] == 1 || pairs[i][1] == 1) ? 1.2 : 10.5,
            pairs[i][0], pairs[i][1]);
    assert_int_equal(judge(NULL), NT_OK);
    assert_string_equal(F.nodes[1].reason,
                        "fails with 3 of 3 partners: rdma 8 MiB median 1.2 GB/s vs 10.5 GB/s "
                        "population");
    assert_int_equal(F.nodes[0].blamed + F.nodes[2].blamed + F.nodes[3].blamed, 0);
}

/* In the --quick shape node 0 has 4 partners (n1, n2 out; n7, n6 in). Failing with 2 of them
 * is not "more than half": not blamed, and its score (the better middle of 4 values) is
 * healthy, so it is not suspect either. With 3 of 4 it is blamed. */
static void test_blame_needs_more_than_half(void **state)
{
    (void)state;
    build_quick16(6.0);  /* link 0: n0->n1 */
    F.l[8].value = 6.0;  /* link 8: n0->n2 */
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_FAIL);
    assert_int_equal(F.l[8].verdict, NT_FAIL);
    assert_int_equal(F.nodes[0].partners, 4);
    assert_int_equal(F.nodes[0].failed_partners, 2);
    assert_int_equal(F.nodes[0].blamed, 0);
    assert_int_equal(F.nodes[0].suspect, 0);
    assert_int_equal(F.nodes[0].verdict, NT_PASS);
    assert_true(nt_vlink_is_link_fault(&F.l[0]));

    F.l[7].value = 6.0; /* link 7: n7->n0 */
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.nodes[0].failed_partners, 3);
    assert_int_equal(F.nodes[0].blamed, 1);
    assert_int_equal(F.nodes[0].suspect, 1);
    assert_int_equal(F.nodes[0].verdict, NT_FAIL);
    assert_false(nt_vlink_is_link_fault(&F.l[0]));
    assert_false(nt_vlink_is_link_fault(&F.l[7]));
    for (int i = 1; i < 8; i++)
        assert_int_equal(F.nodes[i].blamed, 0);
}

/* ---- population size --------------------------------------------------------------------- */

static void test_population_under_5_not_judged(void **state)
{
    (void)state;
    reset(4);
    add("mpi", MIB, NT_METRIC_BW, 10.0, 0, 1);
    add("mpi", MIB, NT_METRIC_BW, 10.1, 1, 2);
    add("mpi", MIB, NT_METRIC_BW, 10.2, 2, 3);
    add("mpi", MIB, NT_METRIC_BW, 1.0, 3, 0); /* ten times slower, but only 4 links */
    assert_int_equal(judge(NULL), NT_OK);
    for (size_t i = 0; i < F.n; i++) {
        assert_int_equal(F.l[i].verdict, NT_PASS);
        assert_int_equal(F.l[i].population, 4);
        assert_true(isnan(F.l[i].reference));
    }
    /* a fifth link makes it a population: now the slow one fails */
    add("mpi", MIB, NT_METRIC_BW, 10.3, 0, 2);
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[3].verdict, NT_FAIL);
    assert_int_equal(F.l[3].fired, NT_FIRED_PEER);
    for (size_t i = 0; i < F.n; i++)
        if (i != 3)
            assert_int_equal(F.l[i].verdict, NT_PASS);
    /* a larger min_population switches it off again */
    nt_peer_rules_t p = nt_peer_rules_default();
    p.min_population = 6;
    assert_int_equal(judge(&p), NT_OK);
    assert_int_equal(F.l[3].verdict, NT_PASS);
}

/* Sizes, scopes and kinds make separate populations: 5 links at 1 MiB and 4 at 4 MiB. */
static void test_population_keys(void **state)
{
    (void)state;
    reset(6);
    for (int i = 0; i < 5; i++)
        add("mpi", MIB, NT_METRIC_BW, i == 0 ? 1.0 : 10.0, i, i + 1);
    for (int i = 0; i < 4; i++)
        add("mpi", 4 * MIB, NT_METRIC_BW, i == 0 ? 1.0 : 10.0, i, i + 1);
    for (int i = 0; i < 4; i++)
        add("rdma", MIB, NT_METRIC_BW, i == 0 ? 1.0 : 10.0, i, i + 1);
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_FAIL);
    assert_int_equal(F.l[0].population, 5);
    assert_int_equal(F.l[5].verdict, NT_PASS); /* 4 MiB: 4 members */
    assert_int_equal(F.l[5].population, 4);
    assert_int_equal(F.l[9].verdict, NT_PASS); /* rdma: 4 members */
    /* intra links are their own scope */
    reset(6);
    for (int i = 0; i < 4; i++)
        add("mpi", MIB, NT_METRIC_BW, 10.0, i, i + 1);
    add("mpi", MIB, NT_METRIC_BW, 1.0, 0, 0);
    assert_int_equal(judge(NULL), NT_OK);
    for (size_t i = 0; i < F.n; i++)
        assert_int_equal(F.l[i].verdict, NT_PASS);
    assert_int_equal(F.l[4].population, 1);
}

/* ---- expected figures -------------------------------------------------------------------- */

static void test_expected_values(void **state)
{
    (void)state;
    reset(2); /* the 2-rank demo shape: one link, no population */
    nt_vlink_t *bw = add("rdma", 8 * MIB, NT_METRIC_BW, 150.0, 0, 1);
    bw->expected = 180.0; /* e.g. 200 Gb/s HDR = 25 GB/s ... any minimum */
    nt_vlink_t *lat = add("rdma", 8, NT_METRIC_LAT, 3.1, 0, 1);
    lat->expected = 2.5;
    nt_vlink_t *ok = add("rdma", 4 * MIB, NT_METRIC_BW, 180.0, 0, 1);
    ok->expected = 180.0; /* exactly the minimum passes */
    nt_vlink_t *none = add("mpi", MIB, NT_METRIC_BW, 0.001, 0, 1); /* no expectation */
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(bw->verdict, NT_FAIL);
    assert_int_equal(bw->fired, NT_FIRED_EXPECTED);
    assert_string_equal(bw->reason, "at 8 MiB: 150 GB/s, below the expected 180 GB/s");
    assert_int_equal(lat->verdict, NT_FAIL);
    assert_int_equal(lat->fired, NT_FIRED_EXPECTED);
    assert_string_equal(lat->reason, "at 8 B: latency 3.1 us, above the expected maximum 2.5 us");
    assert_int_equal(ok->verdict, NT_PASS);
    assert_int_equal(none->verdict, NT_PASS);
    /* one partner: never blamed, whatever fails */
    assert_int_equal(F.nodes[0].blamed, 0);
    assert_int_equal(F.nodes[0].partners, 1);
    assert_int_equal(F.nodes[0].failed_partners, 1);
    assert_int_equal(F.nodes[0].verdict, NT_PASS);
}

/* Expected and peer can fire together, and say so. */
static void test_expected_and_peer(void **state)
{
    (void)state;
    build_quick16(6.0);
    F.l[0].expected = 8.0;
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].fired, NT_FIRED_EXPECTED | NT_FIRED_PEER);
    assert_string_equal(F.l[0].reason,
                        "at 1 MiB: 6 GB/s, below the expected 8 GB/s and below 93% of the "
                        "population median 10.1 GB/s (16 links)");
}

/* A node failing with 2 of 2 partners on expected figures alone (3 links, no population) is
 * blamed, and the reason quotes one of its links. */
static void test_blame_from_expected_only(void **state)
{
    (void)state;
    reset(3);
    nt_vlink_t *a = add("rdma", 8 * MIB, NT_METRIC_BW, 5.0, 0, 1);
    nt_vlink_t *b = add("rdma", 8 * MIB, NT_METRIC_BW, 5.0, 0, 2);
    nt_vlink_t *c = add("rdma", 8 * MIB, NT_METRIC_BW, 24.0, 1, 2);
    a->expected = b->expected = c->expected = 22.5;
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.nodes[0].blamed, 1);
    assert_string_equal(F.nodes[0].reason,
                        "fails with 2 of 2 partners: e.g. rdma 8 MiB 5 GB/s vs expected 22.5 GB/s");
    assert_int_equal(F.nodes[1].blamed, 0);
    assert_int_equal(F.nodes[2].blamed, 0);
    assert_int_equal(a->fired, NT_FIRED_EXPECTED | NT_FIRED_BLAME);
    assert_int_equal(c->verdict, NT_PASS);
}

/* ---- latency direction ------------------------------------------------------------------- */

static void test_latency_direction(void **state)
{
    (void)state;
    reset(8);
    for (int k = 0; k < 16; k++) {
        int src = k % 8, dst = (src + (k < 8 ? 1 : 2)) % 8;
        double v = 1.0;
        if (k == 3)
            v = 5.0; /* 5x slower: fails */
        if (k == 9)
            v = 0.2; /* 5x faster: lower is better, passes */
        if (k == 12)
            v = 1.9; /* under 2x: passes */
        add("mpi", 8, NT_METRIC_LAT, v, src, dst);
    }
    assert_int_equal(judge(NULL), NT_OK);
    for (size_t i = 0; i < F.n; i++)
        assert_int_equal(F.l[i].verdict, i == 3 ? NT_FAIL : NT_PASS);
    assert_string_equal(F.l[3].reason,
                        "at 8 B: latency 5 us, above 2x the population median 1 us (16 links)");

    /* and bandwidth the other way: a much faster link passes */
    build_quick16(40.0);
    assert_int_equal(judge(NULL), NT_OK);
    for (size_t i = 0; i < F.n; i++)
        assert_int_equal(F.l[i].verdict, NT_PASS);
}

/* ---- retest ------------------------------------------------------------------------------ */

static void test_retest_turns_fail_into_warn(void **state)
{
    (void)state;
    build_quick16(6.0);
    assert_int_equal(judge(NULL), NT_OK);
    size_t idx[4];
    assert_int_equal(nt_verdict_retest_list(F.l, F.n, idx, 4), 1);
    assert_int_equal(idx[0], 0);

    F.l[0].retested = 1;
    F.l[0].retest_value = 10.05;
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_WARN);
    assert_int_equal(F.l[0].fired, NT_FIRED_PEER | NT_FIRED_RETEST);
    assert_string_equal(F.l[0].reason,
                        "flaky at 1 MiB: failed first measurement 6 GB/s, passed retest 10.1 GB/s");
    assert_false(nt_vlink_is_link_fault(&F.l[0]));
    assert_int_equal(nt_verdict_retest_list(F.l, F.n, idx, 4), 0);
    for (size_t i = 1; i < F.n; i++)
        assert_int_equal(F.l[i].verdict, NT_PASS);
}

static void test_retest_confirms_fail(void **state)
{
    (void)state;
    build_quick16(6.0);
    assert_int_equal(judge(NULL), NT_OK);
    F.l[0].retested = 1;
    F.l[0].retest_value = 6.5; /* better, still below 9.393 */
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_FAIL);
    assert_int_equal(F.l[0].fired, NT_FIRED_PEER | NT_FIRED_RETEST);
    assert_string_equal(F.l[0].reason,
                        "at 1 MiB: 6.5 GB/s, below 93% of the population median 10.1 GB/s "
                        "(16 links); failed again on retest (6 then 6.5 GB/s)");
    /* a worse retest does not make it worse: the better value is judged */
    F.l[0].retest_value = 1.0;
    assert_int_equal(judge(NULL), NT_OK);
    assert_true(strstr(F.l[0].reason, "at 1 MiB: 6 GB/s") == F.l[0].reason);
    /* a retest that gave nothing (NaN) leaves the first verdict */
    F.l[0].retest_value = NAN;
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_FAIL);
    assert_int_equal(F.l[0].fired, NT_FIRED_PEER);
}

static void test_retest_list_cap(void **state)
{
    (void)state;
    reset(2);
    for (int i = 0; i < 5; i++) {
        nt_vlink_t *l = add("rdma", MIB << i, NT_METRIC_BW, 1.0, 0, 1);
        l->expected = i % 2 ? 0.5 : 2.0; /* links 0, 2, 4 fail */
    }
    assert_int_equal(judge(NULL), NT_OK);
    size_t idx[2] = {99, 99};
    assert_int_equal(nt_verdict_retest_list(F.l, F.n, idx, 2), 3);
    assert_int_equal(idx[0], 0);
    assert_int_equal(idx[1], 2);
    assert_int_equal(nt_verdict_retest_list(F.l, F.n, NULL, 0), 3);
}

/* ---- the rest ---------------------------------------------------------------------------- */

static void test_skipped_and_order(void **state)
{
    (void)state;
    build_quick16(6.0);
    F.l[5].value = NAN;
    nt_vlink_t copy[16];
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.l[5].verdict, NT_SKIPPED);
    assert_int_equal(F.l[0].population, 15);
    memcpy(copy, F.l, sizeof(copy));
    /* reverse the links: the same verdicts and references */
    for (size_t i = 0; i < 8; i++) {
        nt_vlink_t t = F.l[i];
        F.l[i] = F.l[15 - i];
        F.l[15 - i] = t;
    }
    assert_int_equal(judge(NULL), NT_OK);
    for (size_t i = 0; i < 16; i++) {
        assert_int_equal(F.l[15 - i].verdict, copy[i].verdict);
        assert_string_equal(F.l[15 - i].reason, copy[i].reason);
    }
    /* a node without measured links is skipped */
    reset(3);
    add("mpi", MIB, NT_METRIC_BW, 10.0, 0, 1);
    assert_int_equal(judge(NULL), NT_OK);
    assert_int_equal(F.nodes[0].verdict, NT_PASS);
    assert_int_equal(F.nodes[2].verdict, NT_SKIPPED);
}

static void test_invalid_arguments(void **state)
{
    (void)state;
    reset(2);
    add("mpi", MIB, NT_METRIC_BW, 10.0, 0, 2); /* node 2 of 2 */
    assert_int_equal(judge(NULL), NT_ERR_INVALID);
    F.l[0].dst_node = 1;
    F.l[0].metric = 7;
    assert_int_equal(judge(NULL), NT_ERR_INVALID);
    F.l[0].metric = NT_METRIC_BW;
    F.l[0].kind = NULL;
    assert_int_equal(judge(NULL), NT_ERR_INVALID);
    assert_int_equal(nt_verdict_judge(NULL, 1, 2, NULL, NULL), NT_ERR_INVALID);
    assert_int_equal(nt_verdict_judge(NULL, 0, 0, NULL, NULL), NT_OK);
    nt_peer_rules_t d = nt_peer_rules_default();
    assert_true(d.bw_ratio == 0.93 && d.lat_ratio == 2.0 && d.min_population == 5);
}

/* A NaN ratio switches that metric's peer judgement off. */
static void test_peer_ratio_off(void **state)
{
    (void)state;
    build_quick16(6.0);
    nt_peer_rules_t p = nt_peer_rules_default();
    p.bw_ratio = NAN;
    assert_int_equal(judge(&p), NT_OK);
    assert_int_equal(F.l[0].verdict, NT_PASS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_slow_link_among_16),
        cmocka_unit_test(test_one_slow_link_disjoint_pairs),
        cmocka_unit_test(test_slow_link_inside_ratio_passes),
        cmocka_unit_test(test_bad_node_among_4),
        cmocka_unit_test(test_bad_node_among_8),
        cmocka_unit_test(test_bad_node_plus_noisy_link),
        cmocka_unit_test(test_bad_node_reason_bw),
        cmocka_unit_test(test_blame_needs_more_than_half),
        cmocka_unit_test(test_population_under_5_not_judged),
        cmocka_unit_test(test_population_keys),
        cmocka_unit_test(test_expected_values),
        cmocka_unit_test(test_expected_and_peer),
        cmocka_unit_test(test_blame_from_expected_only),
        cmocka_unit_test(test_latency_direction),
        cmocka_unit_test(test_retest_turns_fail_into_warn),
        cmocka_unit_test(test_retest_confirms_fail),
        cmocka_unit_test(test_retest_list_cap),
        cmocka_unit_test(test_skipped_and_order),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_peer_ratio_off),
    };
    return cmocka_run_group_tests_name("verdict", tests, NULL, NULL);
}
