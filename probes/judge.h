/* Glue between the run and the verdict rules: thresholds and expectations, link and node
 * verdicts, retest selection, the summary and the exit code (rank 0 only, except create). */
#ifndef NETTUNE_JUDGE_H
#define NETTUNE_JUDGE_H

#include <stdio.h>

#include "nettune/exitcode.h"
#include "probe.h"

typedef struct nt_judge nt_judge_t;

/* nt_judge_create - load --thresholds (or the built-in defaults) and --expect/--require.
 * A bad file or spec is logged as one line naming it and the fix; returns NT_ERR_INVALID /
 * NT_ERR_PARSE / NT_ERR_NOT_FOUND then (the caller exits 2). */
nt_status_t nt_judge_create(const nt_probe_params_t *params, nt_judge_t **out);
/* nt_judge_destroy - free a judge of nt_judge_create (NULL is fine). */
void nt_judge_destroy(nt_judge_t *j);

/* nt_judge_node_silent - host stopped answering during the run (a peer made no progress for
 * --peer-timeout, or its results never came): nt_judge_finish lists it in failed_nodes with
 * cause "no_answer" and why as the reason's detail, and the node fails (exit 1). Rank 0 only.
 * A host named twice is listed once. */
void nt_judge_node_silent(nt_judge_t *j, const char *host, const char *why);

/* nt_judge_node_checks - expectation checks of one node (inventory: GPUs, ACTIVE RDMA ports,
 * port rate, PCIe generation/width) appended to checks. node_json is the node's report object
 * with "gpus" and "nics" filled in. */
void nt_judge_node_checks(const nt_judge_t *j, const char *host, const cJSON *node_json,
                          cJSON *checks);

/* nt_judge_retest_pairs - the failing pairs to measure again: (initiator rank, responder
 * rank, probe index into table). *pairs is malloc'ed (free it); *n may be 0. */
nt_status_t nt_judge_retest_pairs(nt_judge_t *j, const nt_probe_t *p, cJSON *doc,
                                  const nt_link_probe_ops_t *const *table, int ntable,
                                  int (**pairs)[3], int *n);

/* nt_judge_apply_retest - file the retest links' figures into the matching links of doc
 * (matched by id) as "retest": {"peak_bw_GBps", "small_msg_lat_us"}. */
void nt_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links);

/* nt_judge_finish - judge every link (expected values, peers, retest, node blame), fill the
 * summary, trim the samples of passing links (unless --samples all) and return the exit code.
 * stopped_early: the run did not complete. */
int nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                    const nt_probe_params_t *params);

/* nt_summary_print - the human summary on stdout: verdict, failed nodes (with a reason fit for
 * `scontrol update NodeName=... State=DRAIN Reason=...`), failed links, warnings, skips. */
void nt_summary_print(const cJSON *doc, const char *output);

/* nt_judge_print_thresholds - the built-in thresholds as a nettune.thresholds/1 file. */
nt_status_t nt_judge_print_thresholds(FILE *f);

#endif
