/* Pair schedules for link probes: the round-robin (circle) method.
 *
 * N nodes (already sorted by hostname) are paired in rounds of disjoint pairs. --full: every
 * node pair exactly once in N-1 rounds for even N (N rounds for odd N, one node idle per round),
 * as ClusterKit does. --quick: a constant number of rounds whatever N (ring neighbours, then a
 * ring shifted by about N/2: 3 rounds for even N, 6 for odd N), so the run time does not grow
 * with the cluster; where --full needs no more rounds than that (N <= 4, and N = 5), --quick
 * is --full. */
#ifndef NETTUNE_SCHEDULE_H
#define NETTUNE_SCHEDULE_H

#include <stddef.h>

#include "nettune/status.h"

typedef struct nt_pair {
    int a, b; /* node indices, a != b; a initiates */
} nt_pair_t;

typedef struct nt_round {
    nt_pair_t *pairs;
    size_t npairs;
} nt_round_t;

typedef struct nt_schedule {
    nt_round_t *rounds;
    size_t nrounds;
    size_t npairs; /* over all rounds */
} nt_schedule_t;

typedef enum nt_schedule_mode { NT_SCHED_QUICK = 0, NT_SCHED_FULL = 1 } nt_schedule_mode_t;

/* The number of rounds of --quick (constant): ring (i, i+1) split into the rounds that keep
 * pairs disjoint, plus the shifted ring (i, i+N/2). */
#define NT_SCHED_QUICK_MAX_ROUNDS 6

/* nt_schedule_create - build the schedule for nnodes nodes (1..1<<20; 1 node gives 0 rounds).
 * Returns NT_ERR_INVALID for nnodes < 1, NT_ERR_NOMEM on allocation failure. */
nt_status_t nt_schedule_create(int nnodes, nt_schedule_mode_t mode, nt_schedule_t *out);
/* nt_schedule_destroy - free the rounds of s and zero it (a zeroed s is fine). */
void nt_schedule_destroy(nt_schedule_t *s);

#endif
