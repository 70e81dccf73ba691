/* The fabric judge (docs/fabric.md, "Reading a cut"): "fine alone, slow together". It reads the
 * report's "fabric" section (the flows of the phases under load and the same pairs measured
 * alone), compares every loaded flow with its pair alone, clusters the nodes whose cross
 * traffic slows together into groups (leaves), and names the cut between two groups with its
 * figures. It names no node and drains nothing: a slow node stays the probe's node verdict.
 * In libntjudge; no MPI. */
#ifndef NETTUNE_FABRIC_H
#define NETTUNE_FABRIC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/fabsched.h" /* nt_fab_phase_t and its names: one table for writer and judge */
#include "nettune/ibtopo.h"
#include "nettune/status.h"

/* One measured flow (the scheduled one is fabsched.h's nt_fab_flow_t): src and dst are node
 * indices, rail a rail index; bw in GB/s (1e9 B/s), NaN when the flow failed (no figure). */
typedef struct nt_fab_mflow {
    int src, dst, rail;
    double bw_GBps;
} nt_fab_mflow_t;

/* One measured round: the flows [first, first + n) of the flow array, run at the same time. */
typedef struct nt_fab_mround {
    nt_fab_phase_t phase;
    size_t first, n;
} nt_fab_mround_t;

typedef struct nt_fab_input {
    int nnodes, nrails;
    const nt_fab_mflow_t *flows;
    size_t nflows;
    const nt_fab_mround_t *rounds;
    size_t nrounds;
} nt_fab_input_t;

/* The rules of evidence (docs/fabric.md gives the reasons). A flow's ratio is its bandwidth
 * over its fair share alone: the pair's alone figure divided by the most flows that share one
 * of its ends' rail in its round (a node sending 7 flows at once gives each a seventh). */
typedef struct nt_fab_rules {
    double slow_ratio;  /* a flow is slowed below this ratio (0.6), or below the noise floor */
    double fast_ratio;  /* a flow is at full speed at or above this ratio (0.8) */
    double slow_weight; /* the vote of a slowed flow between its pair (-2: a fast cross flow is
                         * expected where its round did not fill the bottleneck; a slowed flow
                         * inside a leaf only from noise) */
    int min_flows;      /* a cut needs at least this many cross flows under load (4) */
    int min_rounds;     /* and slowed in at least this many rounds (2): confirmation */
} nt_fab_rules_t;

/* nt_fab_rules_default - the built-in rules above. */
nt_fab_rules_t nt_fab_rules_default(void);

typedef struct nt_fab_cut {
    int ga, gb;        /* the two groups (ga < gb) */
    int flows;         /* cross flows at once in a slowed round (median over those rounds) */
    int rounds;        /* rounds (and directions) in which the cross flows were slowed */
    int nflows;        /* cross flows under load measured in all */
    double loaded_bw;  /* GB/s per cross flow in the slowed rounds (median) */
    double alone_bw;   /* GB/s of the same pairs alone (median) */
    double bottleneck; /* GB/s of the cross flows of one slowed round together (median) */
    int confirmed;     /* 1: a finding (the rules' min_flows and min_rounds met) */
    /* The cross pairs (directed) measured under load in >= min_rounds rounds: those slowed in
     * >= min_rounds rounds, and those never slowed (at full speed every time). Both sets
     * non-empty: one of several parallel links between the groups is slow (the pairs hashed
     * onto it), not the whole cut. */
    int pairs, pairs_slow, pairs_fast;
    double slow_pairs_ratio; /* the slow pairs' slowed flows: median ratio to their pair alone */
    int parallel;            /* 1: the bimodal split above */
} nt_fab_cut_t;

/* A rail's judgement, for nodes with several rails. */
typedef struct nt_fab_rail {
    int rail;
    double one_bw;   /* GB/s per flow with this rail alone (rail_one; median), NaN: none */
    double all_bw;   /* GB/s per flow on this rail with all rails at once (rail_all), NaN */
    double best_bw;  /* the best rail's one_bw */
    int slow;        /* 1: this rail alone is slow beside the best rail */
    int shared;      /* 1: this rail slows only when the others run (rail_all vs rail_one) */
    int nflows;      /* its rail_one flows */
    int slow_node;   /* the node every slow flow of the rail touches, -1: none (several) */
    /* The rail's slowest node against the same rail's other nodes, from the flows one at a
     * time on a node's link (alone and rail_one): */
    int node;         /* that node, -1: none judged (too few flows, or no node stands out) */
    int node_flows;   /* its flows on this rail */
    double node_bw;   /* GB/s, their median */
    double others_bw; /* GB/s, the median of this rail's flows that do not touch it */
} nt_fab_rail_t;

typedef struct nt_fab_result {
    int *group;  /* per node: its group, -1 when no loaded flow of it was measured */
    int ngroups; /* groups in order of their first node */
    nt_fab_cut_t *cuts;
    int ncuts;
    nt_fab_rail_t *rails;
    int nrails;
    int nloaded;       /* loaded flows judged (with a figure and an alone reference) */
    int nslowed;       /* of those, slowed */
    int no_alone;      /* loaded flows without an alone reference of their pair */
    double slow_limit; /* the slowed limit used (the rule, or the noise floor when lower) */
    char why[256];     /* "" or why the groups were not judged (too few flows, no alone) */
} nt_fab_result_t;

/* nt_fab_judge - judge in (the flows of one fabric section) with rules (NULL: the defaults)
 * into *out. Groups: the nodes are clustered by the sign of the votes of their pairs' loaded
 * flows (full speed +1, slowed rules.slow_weight), maximizing the votes inside groups
 * (correlation clustering, Bansal, Blum and Chawla, Machine Learning 56, 2004) by local moves
 * and aggregation of groups, as the Louvain method does for modularity (Blondel et al., J.
 * Stat. Mech. 2008 P10008): O(flows log flows), deterministic. Cuts: every pair of groups of
 * 2 nodes or more with cross flows. Errors: NT_ERR_INVALID (a node or rail index out of range,
 * nnodes < 1), NT_ERR_NOMEM; a fabric with too few flows is judged with out->why set, not an
 * error. Free with nt_fab_result_free. */
nt_status_t nt_fab_judge(const nt_fab_input_t *in, const nt_fab_rules_t *rules,
                         nt_fab_result_t *out);

/* nt_fab_result_free - free a result (a zeroed one is fine). */
void nt_fab_result_free(nt_fab_result_t *r);

/* nt_fab_group_name - a group of host names as "{h1..h4}" where the names are one prefix and
 * consecutive numbers, else "{a, b, c, +5 more}" (hosts: the node names, members: the group's
 * node indices, in order). Writes buf (len bytes) and returns it. */
const char *nt_fab_group_name(const char *const *hosts, const int *members, int n, char *buf,
                              size_t len);

/* nt_fabric_judge_doc - judge a report's "fabric" object in place (the contract in
 * docs/fabric.md): reads nodes, rails and phases, adds "groups", "cuts", "checks" (each with
 * its code and category of include/nettune/checks.def) and "not_judged", replacing any there.
 * topo (NULL: none) is the switches' view (--fabric-topology): a "topology" object says whether
 * the groups agree with its leaf switches. A section whose status is "skipped" gets only a
 * not_judged entry. NT_ERR_NOMEM; a malformed section is judged as far as it goes, what cannot
 * be read is not_judged with the reason. */
nt_status_t nt_fabric_judge_doc(cJSON *fabric, const nt_ibtopo_t *topo);

#endif
