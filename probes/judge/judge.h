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

/* nt_judge_node_silent - record that host stopped answering (a hung, stopped or dead rank, or
 * a link taken down): nt_judge_finish puts it in summary.failed_nodes with cause "no_answer"
 * and reason "nettune:no_answer <why>", and fails its node verdict (exit 1). why is one short
 * sentence ("rank 3 did not answer within 65 s"). A host already recorded keeps its first
 * reason; NULL or empty host is ignored. */
void nt_judge_node_silent(nt_judge_t *j, const char *host, const char *why);

/* nt_judge_node_checks - expectation checks of one node (inventory: GPUs, ACTIVE RDMA ports,
 * port rate, PCIe generation/width) appended to checks. node_json is the node's report object
 * with "gpus" and "nics" filled in. */
void nt_judge_node_checks(const nt_judge_t *j, const char *host, const cJSON *node_json,
                          cJSON *checks);

/* nt_judge_retest_pairs - the pairs to measure again, in the order to measure them:
 * (initiator rank, responder rank, probe index into table). Every pair with a link that needs
 * a retest (nt_verdict_retest_list) comes twice, the second time after all the others, and
 * each is followed by a control pair (the best link of the same kind and scope between two
 * other ranks that passes as judged now, none of whose links between those ranks is retested
 * in this round; remembered in j for nt_judge_apply_retest), or by none when no link
 * qualifies. *pairs is malloc'ed
 * (free it); *n may be 0. NT_ERR_NOMEM. */
nt_status_t nt_judge_retest_pairs(nt_judge_t *j, const nt_probe_t *p, cJSON *doc,
                                  const nt_link_probe_ops_t *const *table, int ntable,
                                  int (**pairs)[3], int *n);

/* nt_judge_apply_retest - file the retest links' figures (retest_links: the links measured,
 * in measurement order) into the matching links of doc (matched by id), for the links that
 * the last nt_judge_retest_pairs chose only (a pair's measurement may give its reverse
 * direction too: a reverse link that passed keeps its figures). A measurement counts
 * only when the control measured after it held its own first figures (bandwidth at least
 * half, latency at most 4 times; otherwise the machine was busy and the link keeps waiting for
 * a retest); the two retests of a link give the better figures per size. A link retested
 * gets "retested": true; when the retest gave figures they become the link's (samples,
 * peak_bw_GBps, small_msg_lat_us, ...: the figures its verdict rests on) and the first
 * measurement's move under "first"; otherwise "retest_errors" says why. */
void nt_judge_apply_retest(nt_judge_t *j, cJSON *doc, const cJSON *retest_links);

/* nt_judge_is_control - whether id is the id of a control link of the last
 * nt_judge_retest_pairs (a link between the ranks of a control pair, either direction): its
 * retest closes the retests measured before it. 0 for a NULL judge or id. O(log controls). */
int nt_judge_is_control(const nt_judge_t *j, const char *id);

/* nt_judge_finish - judge every link (expected values, peers, retest, node blame), fill the
 * summary, trim the samples of passing links (unless --samples all) and return the exit code.
 * stopped_early: the run did not complete. */
int nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                    const nt_probe_params_t *params);

/* nt_judge_print_thresholds - the built-in thresholds as a nettune.thresholds/1 file. */
nt_status_t nt_judge_print_thresholds(FILE *f);

/* nt_judge_check_word - the check name of a check (a report checks[] entry) in a node reason
 * "nettune:<word> ...": an inventory check's target when it is a word (gpus, rdma_ports,
 * nic_rate), else the check's name (pcie_link, port_state, ...). */
const char *nt_judge_check_word(const cJSON *c);

/* nt_judge_code_add - give obj (a check, a link or a failed node) the code of its check table
 * row and the row's category ("code", "category", replacing any there), for a creator that
 * knows which of its check's rows it is (include/nettune/checks.def). An unknown code is
 * logged and leaves obj as it was; NULL code or obj: nothing. */
void nt_judge_code_add(cJSON *obj, const char *code);

#endif
