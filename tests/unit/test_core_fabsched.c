/* The fabric phases' schedule (include/nettune/fabsched.h): every node sends exactly once per
 * bisection round and across the cut, rings are single cycles (no fixed point), all-to-all
 * covers every ordered pair once, the rail phases pair up, the budget is respected, the alone
 * rounds cover the loaded pairs when they fit, and a seed gives one schedule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nettune/fabsched.h"

static nt_fab_sched_params_t params(int n, int rails, double budget, uint64_t seed)
{
    nt_fab_sched_params_t p = {.nnodes = n,
                               .nrails = rails,
                               .budget_s = budget,
                               .flow_s = 0.01,
                               .overhead_s = 0.005,
                               .bytes = 16u << 20,
                               .seed = seed};
    return p;
}

static void check_bisection(const nt_fab_schedule_t *s, int n)
{
    int *sent = malloc((size_t)n * sizeof(int)), *side = malloc((size_t)n * sizeof(int));
    for (size_t r = 0; r < s->nrounds; r++) {
        const nt_fab_round_t *rd = &s->rounds[r];
        if (rd->phase != NT_FAB_BISECTION)
            continue;
        memset(sent, 0, (size_t)n * sizeof(int));
        assert_int_equal(rd->nflows, (size_t)n);
        for (size_t f = 0; f < rd->nflows; f++)
            sent[s->flows[rd->first + f].src]++;
        for (int i = 0; i < n; i++)
            assert_int_equal(sent[i], 1);
        /* The sides: the round lists the first half's flows out and back, A[i] -> B[i]
         * then B[i] -> A[i], then with an odd n the node left over. Every flow crosses. */
        for (int i = 0; i < n; i++)
            side[i] = 1;
        for (int i = 0; i < n / 2; i++)
            side[s->flows[rd->first + 2 * (size_t)i].src] = 0;
        {
            int ones = 0;
            for (size_t f = 0; f < rd->nflows; f++) {
                const nt_fab_flow_t *fl = &s->flows[rd->first + f];
                assert_int_not_equal(side[fl->src], side[fl->dst]);
                assert_int_equal(fl->bytes, 16u << 20);
            }
            for (int i = 0; i < n; i++)
                ones += side[i];
            assert_int_equal(ones, n - n / 2);
        }
    }
    free(sent);
    free(side);
}

static void check_rings(const nt_fab_schedule_t *s, int n, nt_fab_phase_t ph)
{
    int *succ = malloc((size_t)n * sizeof(int));
    for (size_t r = 0; r < s->nrounds; r++) {
        const nt_fab_round_t *rd = &s->rounds[r];
        int at = 0, len = 0;
        if (rd->phase != ph)
            continue;
        for (int i = 0; i < n; i++)
            succ[i] = -1;
        assert_int_equal(rd->nflows, (size_t)n);
        for (size_t f = 0; f < rd->nflows; f++) {
            const nt_fab_flow_t *fl = &s->flows[rd->first + f];
            assert_int_not_equal(fl->src, fl->dst); /* no fixed point */
            assert_int_equal(succ[fl->src], -1);    /* each node sends once */
            succ[fl->src] = fl->dst;
        }
        /* one cycle through every node: a permutation */
        do {
            at = succ[at];
            len++;
        } while (at != 0 && len <= n);
        assert_int_equal(len, n);
    }
    free(succ);
}

/* Alone rounds first; then the loaded phases interleaved: each of them starts within the
 * first four rounds, and half way through the loaded rounds each phase of 4 rounds or more has
 * run between a quarter and three quarters of its own (a budget that ends the run early
 * leaves every phase its part). */
static void check_interleaved(const nt_fab_schedule_t *s)
{
    size_t first_loaded = 0, seen[NT_FAB_NPHASES] = {0}, start[NT_FAB_NPHASES];
    for (int ph = 0; ph < NT_FAB_NPHASES; ph++)
        start[ph] = SIZE_MAX;
    while (first_loaded < s->nrounds && s->rounds[first_loaded].phase == NT_FAB_ALONE)
        first_loaded++;
    for (size_t r = first_loaded; r < s->nrounds; r++) {
        assert_int_not_equal(s->rounds[r].phase, NT_FAB_ALONE);
        if (start[s->rounds[r].phase] == SIZE_MAX)
            start[s->rounds[r].phase] = r - first_loaded;
        if (r - first_loaded < (s->nrounds - first_loaded) / 2)
            seen[s->rounds[r].phase]++;
    }
    for (int ph = NT_FAB_BISECTION; ph <= NT_FAB_RAIL_ALL; ph++) {
        if (!s->phase_rounds[ph])
            continue;
        assert_true(start[ph] < 4 + (size_t)NT_FAB_MAX_RAILS);
        if (s->phase_rounds[ph] >= 4) {
            assert_true(4 * seen[ph] >= s->phase_rounds[ph]);
            assert_true(4 * seen[ph] <= 3 * s->phase_rounds[ph]);
        }
    }
}

static void test_shapes(void **state)
{
    (void)state;
    for (int n = 2; n <= 70; n += (n < 12 ? 1 : 29)) {
        nt_fab_sched_params_t p = params(n, 1, 60, 7);
        nt_fab_schedule_t s;
        assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
        assert_true(s.phase_rounds[NT_FAB_BISECTION] >= 1);
        assert_true(s.phase_rounds[NT_FAB_RING] >= 1);
        assert_true(s.phase_rounds[NT_FAB_ALLTOALL] >= 1);
        assert_int_equal(s.phase_rounds[NT_FAB_RAIL_ALL], 0);
        assert_string_equal(s.dropped[NT_FAB_RAIL_ALL], "one rail per node");
        check_bisection(&s, n);
        check_rings(&s, n, NT_FAB_RING);
        check_interleaved(&s);
        nt_fab_schedule_destroy(&s);
    }
}

/* Small N: distinct cuts and rings only (4 nodes have 3 cuts and 3! = 6 rings). */
static void test_small_distinct(void **state)
{
    nt_fab_sched_params_t p = params(4, 1, 60, 1);
    nt_fab_schedule_t s;
    (void)state;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
    assert_int_equal(s.phase_rounds[NT_FAB_BISECTION], 3);
    assert_int_equal(s.phase_rounds[NT_FAB_RING], 6);
    assert_int_equal(s.phase_rounds[NT_FAB_ALLTOALL], 1);
    nt_fab_schedule_destroy(&s);
    p.nnodes = 2;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
    assert_int_equal(s.phase_rounds[NT_FAB_BISECTION], 1);
    assert_int_equal(s.phase_rounds[NT_FAB_RING], 1);
    /* 2 nodes: 0->1 and 1->0, measured alone too */
    assert_int_equal(s.loaded_pairs, 2);
    assert_int_equal(s.phase_rounds[NT_FAB_ALONE], 2);
    nt_fab_schedule_destroy(&s);
}

/* All-to-all: every ordered pair exactly once, bytes per pair bounded. */
static void test_alltoall_covers(void **state)
{
    (void)state;
    for (int n = 2; n <= 100; n += 7) {
        nt_fab_sched_params_t p = params(n, 2, 600, 3);
        nt_fab_schedule_t s;
        unsigned char *seen = calloc((size_t)n * n, 1);
        size_t pairs = 0;
        assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
        for (size_t r = 0; r < s.nrounds; r++) {
            const nt_fab_round_t *rd = &s.rounds[r];
            if (rd->phase != NT_FAB_ALLTOALL)
                continue;
            for (size_t f = 0; f < rd->nflows; f++) {
                const nt_fab_flow_t *fl = &s.flows[rd->first + f];
                assert_int_equal(seen[fl->src * n + fl->dst], 0);
                seen[fl->src * n + fl->dst] = 1;
                pairs++;
                assert_true(fl->bytes <= p.bytes && fl->bytes >= NT_FAB_A2A_MIN_BYTES);
                assert_true(fl->rail >= 0 && fl->rail < 2);
            }
        }
        assert_int_equal(pairs, (size_t)n * (n - 1));
        nt_fab_schedule_destroy(&s);
        free(seen);
    }
}

/* Rails: every rail_all round holds each node's flow on every rail; the rail_one rounds repeat
 * the same pairs one rail at a time. */
static void test_rails(void **state)
{
    nt_fab_sched_params_t p = params(6, 2, 60, 11);
    nt_fab_schedule_t s;
    size_t last_all = 0, one = 0;
    (void)state;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
    assert_int_equal(s.phase_rounds[NT_FAB_RAIL_ALL], 4);
    assert_int_equal(s.phase_rounds[NT_FAB_RAIL_ONE], 8);
    check_rings(&s, 6, NT_FAB_RAIL_ONE);
    check_interleaved(&s);
    /* each rail_all round is followed by its ring on each rail alone, rail 0 first */
    for (size_t r = 0; r < s.nrounds; r++) {
        const nt_fab_round_t *rd = &s.rounds[r];
        const nt_fab_round_t *ra;
        if (rd->phase == NT_FAB_RAIL_ALL) {
            assert_int_equal(rd->nflows, 12);
            assert_int_equal(one % 2, 0);
            last_all = r;
        }
        if (rd->phase != NT_FAB_RAIL_ONE)
            continue;
        assert_true(r == last_all + 1 + one % 2);
        ra = &s.rounds[last_all];
        for (size_t f = 0; f < rd->nflows; f++) {
            const nt_fab_flow_t *fl = &s.flows[rd->first + f];
            int found = 0;
            assert_int_equal(fl->rail, (int)(one % 2));
            for (size_t g = 0; g < ra->nflows; g++) {
                const nt_fab_flow_t *ga = &s.flows[ra->first + g];
                found |= ga->src == fl->src && ga->dst == fl->dst && ga->rail == fl->rail;
            }
            assert_true(found);
        }
        one++;
    }
    nt_fab_schedule_destroy(&s);
}

/* The budget holds the sum of the estimates; alone rounds hold one flow at full size; when the
 * budget allows, every loaded (src, dst, rail) is measured alone; else a sample, and the
 * alone flows are all loaded pairs. */
static void test_budget_and_alone(void **state)
{
    (void)state;
    for (int n = 2; n <= 200; n += 9)
        for (double budget = 0.05; budget <= 100; budget *= 4) {
            nt_fab_sched_params_t p = params(n, n % 3 ? 1 : 2, budget, (uint64_t)n);
            nt_fab_schedule_t s;
            double sum = 0;
            size_t nalone = 0, loaded = 0;
            unsigned char *in_loaded = calloc((size_t)n * n * 2, 1),
                          *in_alone = calloc((size_t)n * n * 2, 1);
            assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
            for (size_t r = 0; r < s.nrounds; r++) {
                const nt_fab_round_t *rd = &s.rounds[r];
                sum += rd->est_s;
                for (size_t f = 0; f < rd->nflows; f++) {
                    const nt_fab_flow_t *fl = &s.flows[rd->first + f];
                    size_t k = ((size_t)fl->src * n + fl->dst) * 2 + fl->rail;
                    if (rd->phase == NT_FAB_ALONE) {
                        assert_int_equal(rd->nflows, 1);
                        assert_int_equal(fl->bytes, p.bytes);
                        in_alone[k] = 1;
                    } else
                        in_loaded[k] = 1;
                }
                if (rd->phase == NT_FAB_ALONE)
                    nalone++;
            }
            assert_true(sum <= budget + 1e-9);
            assert_true(s.est_s <= budget + 1e-9);
            for (size_t k = 0; k < (size_t)n * n * 2; k++) {
                loaded += in_loaded[k];
                if (in_alone[k])
                    assert_true(in_loaded[k]);
            }
            assert_int_equal(loaded, s.loaded_pairs);
            if (s.est_s + (s.loaded_pairs - nalone) * 0.015 <= budget)
                assert_int_equal(nalone, s.loaded_pairs);
            /* up to 11 nodes, at most 220 pairs: 3.3 s alone */
            if (n <= 11 && budget >= 10)
                assert_int_equal(nalone, s.loaded_pairs);
            nt_fab_schedule_destroy(&s);
            free(in_loaded);
            free(in_alone);
        }
}

static void test_budget_too_small(void **state)
{
    nt_fab_sched_params_t p = params(8, 1, 0.02, 1);
    nt_fab_schedule_t s;
    (void)state;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
    assert_int_equal(s.nrounds, 0);
    assert_non_null(strstr(s.dropped[NT_FAB_BISECTION], "fits its share of the budget"));
    assert_non_null(strstr(s.dropped[NT_FAB_RING], "fits its share of the budget"));
    /* the budget that holds a round: a cut of 0.025 s (5 ms + a loaded flow of 20 ms) in its
     * 0.35 / 0.8 of the smallest loaded part, 0.55: 0.025 / 0.4375 / 0.55 = 0.1039 s, rounded
     * up */
    assert_true(fabs(s.min_budget_s - 0.104) < 1e-9);
    {
        char why[256];
        nt_fab_no_round_reason(&s, 0.02, 0.5, why, sizeof(why));
        assert_string_equal(why, "the budget left, 0.02 s, holds no round: no round of about "
                                 "0.025 s fits its share of the budget (0.00744 s); give at "
                                 "least 0.604 s with --fabric-budget");
        /* the calibration took the whole budget (the schedule built for a token one) */
        nt_fab_no_round_reason(&s, -0.1, 2.3, why, sizeof(why));
        assert_string_equal(why, "the budget went on the calibration flow (2.3 s); give at "
                                 "least 2.41 s with --fabric-budget");
    }
    nt_fab_schedule_destroy(&s);
    /* and it does: given it, the schedule has rounds; a little less than the cut needs at the
     * largest part (0.85), none */
    p.budget_s = 0.104;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
    assert_true(s.nrounds > 0);
    assert_true(s.phase_rounds[NT_FAB_BISECTION] >= 1);
    assert_true(s.min_budget_s == 0);
    nt_fab_schedule_destroy(&s);
    p.budget_s = 0.99 * 0.025 / 0.4375 / 0.85;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_OK);
    assert_int_equal(s.nrounds, 0);
    nt_fab_schedule_destroy(&s);
}

/* The measured cost of a loaded flow (on one machine's loopback ten times an alone one) sets
 * the loaded rounds' estimates: fewer rounds in the same budget, and their sum still within. */
static void test_loaded_cost(void **state)
{
    nt_fab_sched_params_t p = params(40, 1, 4, 5);
    nt_fab_schedule_t a, b;
    (void)state;
    assert_int_equal(nt_fab_schedule_create(&p, &a), NT_OK);
    p.loaded_flow_s = 0.1;
    assert_int_equal(nt_fab_schedule_create(&p, &b), NT_OK);
    /* 0.025 s rounds hit the cap of 32 cuts; 0.105 s ones do not */
    assert_int_equal(a.phase_rounds[NT_FAB_BISECTION], 32);
    assert_true(b.phase_rounds[NT_FAB_BISECTION] < 32);
    assert_true(b.phase_rounds[NT_FAB_BISECTION] >= 1);
    /* every loaded round: the overhead and one loaded flow (all-to-all: 32 peers of 512K) */
    for (size_t r = 0; r < b.nrounds; r++)
        if (b.rounds[r].phase != NT_FAB_ALONE)
            assert_true(fabs(b.rounds[r].est_s - 0.105) < 1e-9);
    assert_true(b.est_s <= 4 + 1e-9);
    nt_fab_schedule_destroy(&a);
    nt_fab_schedule_destroy(&b);
}

static void test_deterministic(void **state)
{
    nt_fab_sched_params_t p = params(37, 2, 30, 12345);
    nt_fab_schedule_t a, b, c;
    (void)state;
    assert_int_equal(nt_fab_schedule_create(&p, &a), NT_OK);
    assert_int_equal(nt_fab_schedule_create(&p, &b), NT_OK);
    p.seed = 54321;
    assert_int_equal(nt_fab_schedule_create(&p, &c), NT_OK);
    assert_int_equal(a.nflows, b.nflows);
    assert_int_equal(a.nrounds, b.nrounds);
    assert_memory_equal(a.flows, b.flows, a.nflows * sizeof(nt_fab_flow_t));
    assert_true(a.nflows != c.nflows ||
                memcmp(a.flows, c.flows, a.nflows * sizeof(nt_fab_flow_t)) != 0);
    nt_fab_schedule_destroy(&a);
    nt_fab_schedule_destroy(&b);
    nt_fab_schedule_destroy(&c);
}

static void test_invalid(void **state)
{
    nt_fab_sched_params_t p = params(1, 1, 60, 1);
    nt_fab_schedule_t s;
    (void)state;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_ERR_INVALID);
    p = params(4, NT_FAB_MAX_RAILS + 1, 60, 1);
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_ERR_INVALID);
    p = params(4, 1, 0, 1);
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_ERR_INVALID);
    p = params(4, 1, 60, 1);
    p.flow_s = 0;
    assert_int_equal(nt_fab_schedule_create(&p, &s), NT_ERR_INVALID);
    assert_int_equal(s.nrounds, 0);
    assert_string_equal(nt_fab_phase_name(NT_FAB_RAIL_ONE), "rail_one");
    assert_string_equal(nt_fab_phase_name(NT_FAB_NPHASES), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes),           cmocka_unit_test(test_small_distinct),
        cmocka_unit_test(test_alltoall_covers),  cmocka_unit_test(test_rails),
        cmocka_unit_test(test_budget_and_alone), cmocka_unit_test(test_budget_too_small),
        cmocka_unit_test(test_deterministic),    cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_loaded_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
