/* Synthetic fabric sections for the fabric judge's tests and bench (tests/unit/fabric_gen.c):
 * a model of a leaf-spine fabric (hosts under leaves, a bottleneck per leaf pair and
 * direction, a slow rail, noise) and the flows the fabric phases would measure on it. */
#ifndef NETTUNE_FABRIC_GEN_H
#define NETTUNE_FABRIC_GEN_H

#include <cjson/cJSON.h>

#include "nettune/fabric.h"

typedef struct nt_fabgen {
    int nodes, leaves;     /* node i is under leaf i * leaves / nodes */
    int rails;             /* rails per node (1: no rail phases) */
    double host_GBps;      /* a host's rail alone, GB/s */
    double cut_GBps;       /* each direction between two leaves, GB/s; 0: no bottleneck */
    double total_GBps;     /* every flow of a round shares this aggregate (one switch's
                            * backplane, or one machine's CPU under fake nodes); 0: none */
    int slow_rail;         /* a rail at slow_factor on every node, -1: none */
    int slow_rail_node;    /* or only on this node, -1: every node */
    double slow_factor;    /* 0.4 */
    int shared_rail;       /* a rail at half its rate while all rails run (rail_all): it shares
                            * a link with another rail; -1: none */
    double parallel_GBps;  /* two parallel links each direction between two leaves, one of
                            * them at this rate (the other unlimited); the pairs to an even
                            * node index are hashed onto it; 0: none */
    double noise;          /* sigma of the log-normal noise of every figure (0.1: 10 %) */
    int bisections, rings; /* rounds of each loaded phase */
    int alltoall;          /* 1: one all-to-all round */
    int alone_pairs;       /* 0: every pair alone (small N); else this many random pairs */
    unsigned seed;
} nt_fabgen_t;

/* nt_fabgen_default - 8 nodes under 2 leaves, 2.8 GB/s hosts, no bottleneck, 10 % noise,
 * 4 bisections, 4 rings, one all-to-all, every pair alone. */
nt_fabgen_t nt_fabgen_default(void);

/* nt_fabgen_input - the model's flows as the engine's input (arrays malloc'ed into *in: free
 * with nt_fabgen_input_free). */
int nt_fabgen_input(const nt_fabgen_t *g, nt_fab_input_t *in);
void nt_fabgen_input_free(nt_fab_input_t *in);

/* nt_fabgen_doc - the same as a report's "fabric" object (the contract of docs/fabric.md),
 * nodes named h1..hN. NULL on allocation failure. */
cJSON *nt_fabgen_doc(const nt_fabgen_t *g);

#endif
