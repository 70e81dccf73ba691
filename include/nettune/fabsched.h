/* The schedule of the fabric phases under load (nettune probe --fabric, and after the pairwise
 * rounds of --full): which node sends to which, on which rail, how many bytes, round by round.
 *
 * Pure: no I/O and no clock; the same parameters (the seed included) give the same schedule on
 * every rank. The phases, in the order they run:
 *   alone      one flow per round: a sample of the (src, dst, rail) triples the loaded phases
 *              use (all of them when they fit the budget), measured alone for comparison;
 *   bisection  K random cuts: the nodes are split into two halves and every node sends across
 *              the cut at once (with an odd N the node left over sends to a random node of the
 *              other half); distinct cuts only, so a small N gets at most all of its cuts;
 *   alltoall   every node sends to every other, with bounded bytes per pair: round j holds the
 *              shifts s of its window (W = min(N-1, 32) shifts), node i sends to (i+s) mod N;
 *              all rounds together cover every ordered pair once; when the budget or
 *              NT_FAB_A2A_MAX_FLOWS holds fewer rounds, a random subset of the windows;
 *   ring       random rings: each node sends to the next of a random cyclic permutation (a
 *              single cycle: no fixed point), all at once; distinct rings only;
 *   rail_all   (rails > 1) a random ring on every rail at once;
 *   rail_one   (rails > 1) the same rings as rail_all, one rail at a time.
 * The bisection and ring rounds use rail k mod rails (round k of the phase), alltoall shift s
 * uses rail s mod rails.
 *
 * K and the other round counts come from the budget: a round is estimated at
 * overhead_s + (alone: flow_s; loaded: loaded_flow_s) * (the most bytes one node sends on one
 * rail / bytes),
 * the loaded phases share what the alone rounds leave (table in fabsched.c), and the sum of
 * the estimates never exceeds budget_s. ClusterKit (HPC-X 2.20 documentation) runs ordered and
 * random rings and bisection bandwidth the same way. */
#ifndef NETTUNE_FABSCHED_H
#define NETTUNE_FABSCHED_H

#include <stddef.h>
#include <stdint.h>

#include "nettune/status.h"

/* Most rails per node the fabric phases measure. */
#define NT_FAB_MAX_RAILS 8
/* Most peers one node sends to at once in an all-to-all round. */
#define NT_FAB_A2A_WINDOW 32
/* Most flows of the all-to-all phase (65,536: as many as 16 cuts of 4,096 nodes); past it the
 * phase measures a random subset of its windows, at least one. */
#define NT_FAB_A2A_MAX_FLOWS 65536
/* The smallest flow of an all-to-all round (bytes per pair): below it a flow is latency. */
#define NT_FAB_A2A_MIN_BYTES (64u * 1024u)

typedef enum nt_fab_phase {
    NT_FAB_ALONE = 0,
    NT_FAB_BISECTION,
    NT_FAB_ALLTOALL,
    NT_FAB_RING,
    NT_FAB_RAIL_ALL,
    NT_FAB_RAIL_ONE,
    NT_FAB_NPHASES
} nt_fab_phase_t;

typedef struct nt_fab_flow {
    int src, dst; /* node indices, src != dst */
    int rail;     /* 0..nrails-1 */
    size_t bytes;
} nt_fab_flow_t;

typedef struct nt_fab_round {
    nt_fab_phase_t phase;
    size_t first, nflows; /* flows[first .. first+nflows) of the schedule */
    double est_s;         /* the round's estimated seconds */
} nt_fab_round_t;

typedef struct nt_fab_sched_params {
    int nnodes;              /* 2 .. 1<<20 */
    int nrails;              /* 1 .. NT_FAB_MAX_RAILS */
    double budget_s;         /* > 0: the sum of the rounds' estimates stays at or below */
    double flow_s;           /* > 0: estimated seconds of one flow of bytes, alone */
    /* >= 0: estimated seconds of one flow of bytes while every node sends one (0: 2 * flow_s) */
    double loaded_flow_s;
    double overhead_s;       /* >= 0: fixed seconds per round (connect, barrier, results) */
    size_t bytes;            /* bytes per flow, >= 1 */
    uint64_t seed;
} nt_fab_sched_params_t;

typedef struct nt_fab_schedule {
    nt_fab_round_t *rounds; /* phases in the order of nt_fab_phase_t, alone first */
    size_t nrounds;
    nt_fab_flow_t *flows;
    size_t nflows;
    double est_s;                  /* sum of the rounds' estimates */
    size_t loaded_pairs;           /* distinct (src, dst, rail) of the loaded phases */
    size_t phase_rounds[NT_FAB_NPHASES];
    /* Why a phase has no rounds ("" when it has some, or "rails: 1" for the rail phases). */
    char dropped[NT_FAB_NPHASES][96];
    /* A schedule without rounds: the smallest budget_s from which a round of the cheapest
     * loaded phase fits its share, whatever part of the budget the alone rounds take (the
     * loaded phases get at least the smallest of the parts tried, fabsched.c), rounded up to
     * 3 significant digits; 0 when the schedule has rounds. */
    double min_budget_s;
} nt_fab_schedule_t;

/* nt_fab_phase_name - "alone", "bisection", "alltoall", "ring", "rail_all", "rail_one" (the
 * report's "phase" strings); "unknown" for another value. */
const char *nt_fab_phase_name(nt_fab_phase_t phase);

/* nt_fab_schedule_create - build the schedule of params into *out (zeroed first). Errors:
 * NT_ERR_INVALID for parameters outside the ranges above, NT_ERR_NOMEM. A budget too small for
 * any loaded round gives a schedule without rounds and the reasons in out->dropped. */
nt_status_t nt_fab_schedule_create(const nt_fab_sched_params_t *params, nt_fab_schedule_t *out);

/* nt_fab_no_round_reason - why a schedule s without rounds holds none, and the budget that
 * would, into buf (len bytes, 256 are enough): "the budget left, 0.02 s, holds no round: no
 * round of about 0.025 s fits its share of the budget (0.00744 s); give at least 0.604 s with
 * --fabric-budget" (8 nodes, 5 ms per round, 20 ms per loaded flow, 0.5 s spent: the unit
 * test's). budget_left_s is the budget s was built for, spent_s what the run spent
 * before (the calibration): the budget to give is s->min_budget_s + spent_s, rounded up. With
 * budget_left_s <= 0 (the calibration took the whole budget; s built for a token budget) the
 * sentence begins "the budget went on the calibration flow (1.23 s)".
 * Returns buf. */
char *nt_fab_no_round_reason(const nt_fab_schedule_t *s, double budget_left_s, double spent_s,
                             char *buf, size_t len);

/* nt_fab_schedule_destroy - free s and zero it (a zeroed s is fine). */
void nt_fab_schedule_destroy(nt_fab_schedule_t *s);

/* nt_fab_rng_next - the schedule's generator (splitmix64, Steele et al. 2014): the next 64-bit
 * value of the state *x. Exposed so that callers draw seeds the same way. */
uint64_t nt_fab_rng_next(uint64_t *x);

#endif
