/* The link verdict engine (docs/verdicts.md), on plain structs: no cJSON, no MPI.
 * docs/verdicts.md gives the rules with their numbers.
 *
 * The caller turns each measured figure into one nt_vlink_t: one link (a node pair in one
 * direction, or a device on one node) at one message size and one metric. A report link with
 * latency sizes and bandwidth sizes therefore gives several nt_vlink_t; the caller folds their
 * verdicts back (the worst one, every reason). Judgement, in order:
 *   1. expected: value against the link's own expected figure (hardware line rate x efficiency,
 *      or the thresholds file; NaN = none);
 *   2. peers: links of the same kind, scope, size and metric form a population. Nodes are
 *      judged first, from 3 scored nodes up, by a score: the best of the medians of their links
 *      to each partner (a link runs at its slower end's pace, so a healthy node's best partner
 *      shows its own figure however many slow partners it has); and, when a node sends and
 *      receives at least 2 links each, by the scores of its sent and received links apart, so
 *      that a fault of one direction shows. A node is "suspect" when a score is worse than the
 *      population limit against the median of all node scores. The link
 *      reference is the median of the links that touch no suspect node; the limit is ratio x
 *      that reference, widened by the population's own noise (3 sigma of the log values,
 *      estimated by the MAD). With at least peer->min_population links every link is judged
 *      against the limit; with fewer, only links touching a suspect node are. A link beyond
 *      the limit is marginal (a warning); it is a link fault only beyond the wider link-fault
 *      limit (fail_factor: half the bandwidth, 2 x lat_ratio, 3 x tail_ratio);
 *   3. retest: a value judged is the retest's when there is one. A failure that only the peer
 *      rule found is confirmed by a retest before it fails: until then it is a warning with
 *      needs_retest set. nt_verdict_retest_list names the links to measure again; the caller
 *      measures them, sets retested = 1 and retest_value, and judges again: a link that failed
 *      first but passes on retest is a warning ("flaky");
 *   4. node blame: a node that fails with more than half of its distinct partners, and with at
 *      least 2, is blamed (a partner fails when a link between the two failed, or was marginal
 *      on both measurements): its node verdict fails with a reason, and those links fail,
 *      marked NT_FIRED_BLAME (caused by the node, not separate link faults). */
#ifndef NETTUNE_VERDICT_H
#define NETTUNE_VERDICT_H

#include <stddef.h>

#include "nettune/report.h"
#include "nettune/status.h"
#include "nettune/thresholds.h"

#define NT_METRIC_BW 0   /* bandwidth, GB/s (1e9 B/s): higher is better */
#define NT_METRIC_LAT 1  /* one-way latency (median), microseconds: lower is better */
#define NT_METRIC_TAIL 2 /* one-way latency p99, microseconds: lower is better (tail_ratio) */

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
    int metric;             /* NT_METRIC_BW, NT_METRIC_LAT or NT_METRIC_TAIL */
    double value;           /* GB/s or us; NaN = not measured: the link is skipped */
    double expected;        /* NaN = none; BW: the minimum, LAT: the maximum (see thresholds.h) */
    int src_node, dst_node; /* 0..nnodes-1; -1 = none (a device on one node has src only);
                             * src == dst for links inside one node */
    const char *src_ep, *dst_ep; /* the endpoint at each end within its node (a rank's device,
                                  * "lr1", "mlx5_0"), compared as strings; NULL = unknown */
    int retested;           /* set by the caller after measuring the link again */
    double retest_value;    /* the second measurement (NaN = the retest gave nothing); when
                             * set it is the value judged, value is kept as the first */
    /* output */
    nt_verdict_t verdict;
    char reason[256];   /* "" when passed; one short sentence with numbers and units */
    unsigned fired;     /* NT_FIRED_* */
    double reference;   /* the population reference it was compared with, NaN = none */
    double factor;      /* the marginal limit is factor x reference (ratio, widened by noise);
                         * NaN = not judged by peers */
    double fail_factor; /* the link-fault limit: fail_factor x reference (0.5 for bandwidth,
                         * 2 x lat_ratio, 3 x tail_ratio, or the noise limit when wider) */
    int marginal;       /* 1: beyond the marginal limit on both measurements (a warning that
                         * counts for node blame) */
    int src_suspect, dst_suspect; /* its ends are suspect in its population */
    int flaky;                    /* 1: failed its first measurement and passed its retest */
    int unconfirmed;   /* 1: a warning the retest did not settle (not retested, the retest gave
                        * nothing or failed only on retest): its figure is not trusted */
    size_t population; /* members of its population (0 when skipped) */
    int needs_retest;  /* 1: it failed and was not retested yet (nt_verdict_retest_list) */
} nt_vlink_t;

typedef struct nt_node_verdict {
    const char *host;     /* input: the node's name for reasons (NULL = "node <i>") */
    nt_verdict_t verdict; /* NT_FAIL when blamed, NT_PASS when it has measured links, else
                           * NT_SKIPPED */
    int blamed;           /* 1 when the node is blamed for its links */
    int suspect;          /* 1 when its median was an outlier in some population */
    int partners;         /* distinct other nodes it has a measured link with */
    int failed_partners;  /* of those, the ones with at least one failing link */
    /* blamed: the figure that failed it, for failed_nodes[] (otherwise metric -1, NaN) */
    const char *cause; /* "bandwidth", "latency" or "tail_latency"; NULL when not blamed */
    const char *kind;  /* the link kind of that figure ("mpi", "rdma", ...); NULL: none */
    int metric;        /* NT_METRIC_* of that figure */
    double observed;   /* its median (or failing link value), GB/s or us */
    double expected;   /* what it was held to: the population median or the expected figure */
    char reason[256];  /* blamed: "nettune:bw 1.2/10.5GB/s median vs population, fails with
                        * 3 of 3 partners (mpi 1 MiB)" (check and figure first, for
                        * sinfo -R); otherwise "" */
} nt_node_verdict_t;

/* nt_verdict_noise_factor - the peer rule's marginal limit as a factor of a reference, as the
 * judge draws it for a population: ratio (bw_ratio, lat_ratio of nt_peer_rules_t) widened to
 * 3 sigma of the log values of vals[0..n) (sigma = 1.4826 x their MAD; vals is reordered and
 * overwritten), bandwidth never wider than 0.2. metric NT_METRIC_BW: a factor <= ratio < 1 (a
 * figure below factor x reference is beyond the noise); latency: >= ratio. n < 2: the ratio. */
double nt_verdict_noise_factor(int metric, double ratio, double *vals, size_t n);

/* nt_peer_rules_default - the built-in peer rules: bw_ratio 0.93, lat_ratio 2.0,
 * tail_ratio 10, min_population 5 (thresholds.h gives their source). */
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

/* nt_verdict_retest_list - the links to measure again: those with needs_retest (a failure,
 * or a peer failure waiting for confirmation, not retested yet), in link order. Writes up to cap
 * indices into idx (idx may be NULL when cap is 0) and returns how many there are in all. The
 * caller measures each distinct (kind, src, dst) once, sets retested and retest_value on every link
 * of it (at every size measured), and calls nt_verdict_judge again. */
size_t nt_verdict_retest_list(const nt_vlink_t *links, size_t n, size_t *idx, size_t cap);

/* nt_vlink_is_link_fault - 1 when the link failed by itself (NT_FAIL and not NT_FIRED_BLAME):
 * what belongs in the report's summary.failed_links; blamed nodes go to failed_nodes. */
int nt_vlink_is_link_fault(const nt_vlink_t *l);

/* nt_metric_check - the short check name of a metric for reasons: "bw", "lat", "p99". */
const char *nt_metric_check(int metric);
/* nt_metric_cause - the failed_nodes cause of a metric: "bandwidth", "latency", "tail_latency". */
const char *nt_metric_cause(int metric);
/* nt_metric_unit - "GB/s" for bandwidth, "us" for the latencies. */
const char *nt_metric_unit(int metric);
/* nt_fmt_fig - a figure with three significant figures and no exponent ("10.5", "0.35",
 * "1234"), "-" for NaN, into buf; returns buf. */
const char *nt_fmt_fig(char *buf, size_t len, double v);

#endif
