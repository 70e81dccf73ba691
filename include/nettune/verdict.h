/* The link verdict engine (DESIGN.md "Health verdicts"), on plain structs: no cJSON, no MPI.
 * docs/verdicts.md gives the rules with their numbers.
 *
 * The caller turns each measured figure into one nt_vlink_t: one link (a node pair, or a
 * device on one node) at one message size and one metric. A report link with latency sizes and
 * bandwidth sizes therefore gives several nt_vlink_t; the caller folds their verdicts back
 * (the worst one, every reason). Judgement, in order:
 *   1. expected: value against the link's own expected figure (hardware line rate x efficiency,
 *      or the thresholds file; NaN = none);
 *   2. peers: links of the same kind, scope, size and metric form a population, used only with
 *      at least peer->min_population members. Nodes are judged first by the median of their own
 *      links (a node is "suspect" when its median is worse than ratio x the median of all node
 *      medians); the link reference is then the median of the population's links that touch no
 *      suspect node, and a link worse than ratio x that reference fails;
 *   3. retest: nt_verdict_retest_list names the failing links; the caller measures them again,
 *      sets retested = 1 and retest_value, and judges again: the better of the two values is
 *      judged, and a link that failed first but passes on retest is a warning ("flaky");
 *   4. node blame: a node that fails with more than half of its distinct partners, and with at
 *      least 2, is blamed: its node verdict fails with a reason, and its failing links are
 *      marked NT_FIRED_BLAME (caused by the node, not separate link faults).
 * With a population under min_population only the expected figures judge. */
#ifndef NETTUNE_VERDICT_H
#define NETTUNE_VERDICT_H

#include <stddef.h>

#include "nettune/report.h"
#include "nettune/status.h"
#include "nettune/thresholds.h"

#define NT_METRIC_BW 0  /* bandwidth, GB/s (1e9 B/s): higher is better */
#define NT_METRIC_LAT 1 /* one-way latency, microseconds: lower is better */

/* Which judgement fired on a link (nt_vlink_t.fired). */
#define NT_FIRED_EXPECTED 0x1u /* worse than its expected figure */
#define NT_FIRED_PEER 0x2u     /* worse than ratio x its population's reference */
#define NT_FIRED_RETEST 0x4u   /* it was measured again (fail confirmed, or flaky) */
#define NT_FIRED_BLAME 0x8u    /* a failure attributed to a blamed node at one of its ends */

typedef struct nt_vlink {
    /* input */
    const char *kind;       /* "mpi", "rdma", ... (a population key; compared as strings) */
    const char *scope;      /* "intra" or "inter" (a population key; NULL = "") */
    size_t bytes;           /* message size, bytes (a population key) */
    int metric;             /* NT_METRIC_BW or NT_METRIC_LAT */
    double value;           /* GB/s or us; NaN = not measured: the link is skipped */
    double expected;        /* NaN = none; BW: the minimum, LAT: the maximum (see thresholds.h) */
    int src_node, dst_node; /* 0..nnodes-1; -1 = none (a device on one node has src only);
                             * src == dst for links inside one node */
    int retested;           /* set by the caller after measuring the link again */
    double retest_value;    /* the second measurement (NaN = the retest gave nothing) */
    /* output */
    nt_verdict_t verdict;
    char reason[256];  /* "" when passed; one short sentence with numbers and units */
    unsigned fired;    /* NT_FIRED_* */
    double reference;  /* the population reference it was compared with, NaN = none */
    size_t population; /* members of its population (0 when skipped) */
} nt_vlink_t;

typedef struct nt_node_verdict {
    const char *host;     /* input: the node's name for reasons (NULL = "node <i>") */
    nt_verdict_t verdict; /* NT_FAIL when blamed, NT_PASS when it has measured links, else
                           * NT_SKIPPED */
    int blamed;           /* 1 when the node is blamed for its links */
    int suspect;          /* 1 when its median was an outlier in some population */
    int partners;         /* distinct other nodes it has a measured link with */
    int failed_partners;  /* of those, the ones with at least one failing link */
    char reason[256];     /* blamed: "fails with 3 of 3 partners: mpi 1 MiB median 1.2 GB/s
                           * vs 10.5 GB/s population"; otherwise "" */
} nt_node_verdict_t;

/* nt_peer_rules_default - the built-in peer rules: bw_ratio 0.93, lat_ratio 2.0,
 * min_population 5 (thresholds.h gives their source). */
nt_peer_rules_t nt_peer_rules_default(void);

/* nt_verdict_judge - judge n links among nnodes nodes (steps 1-4 above), writing every link's
 * verdict, reason, fired, reference and population, and, when nodes is not NULL, the nnodes
 * node verdicts (host is read, the rest written). peer NULL = nt_peer_rules_default(); a NaN
 * ratio switches that metric's peer judgement off. Judging again after a retest recomputes
 * everything from the inputs. Deterministic: the result does not depend on the link order.
 * Errors (nothing is judged): NT_ERR_INVALID when links is NULL with n > 0, a node index is out
 * of range, a metric is unknown or a kind is NULL; NT_ERR_NOMEM. */
nt_status_t nt_verdict_judge(nt_vlink_t *links, size_t n, int nnodes, const nt_peer_rules_t *peer,
                             nt_node_verdict_t *nodes);

/* nt_verdict_retest_list - the links to measure again: those whose verdict is NT_FAIL and that
 * were not retested yet, in link order. Writes up to cap indices into idx (idx may be NULL
 * when cap is 0) and returns how many there are in all. The caller measures each distinct
 * (kind, src, dst) once, sets retested and retest_value on every link of it (at every size
 * measured), and calls nt_verdict_judge again. */
size_t nt_verdict_retest_list(const nt_vlink_t *links, size_t n, size_t *idx, size_t cap);

/* nt_vlink_is_link_fault - 1 when the link failed by itself (NT_FAIL and not NT_FIRED_BLAME):
 * what belongs in the report's summary.failed_links; blamed nodes go to failed_nodes. */
int nt_vlink_is_link_fault(const nt_vlink_t *l);

#endif
