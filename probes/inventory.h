/* The node's inventory object for the report: host, ranks, software, CPUs, NUMA, GPUs, NICs,
 * GPU x NIC affinity, PCIe checks; built by the node's first rank. */
#ifndef NETTUNE_INVENTORY_H
#define NETTUNE_INVENTORY_H

#include "judge/judge.h"
#include "probe.h"

/* nt_inventory_node - fill node_json (report "nodes" entry) from p->topo and sysfs, and add
 * the checks that need no traffic (pcie_link) to checks. Never fails: what cannot be read is
 * left out and said in "skipped". */
void nt_inventory_node(nt_probe_t *p, const nt_judge_t *j, cJSON *node_json, cJSON *checks);

/* nt_inventory_finish_checks - after the link probes' init (which add "nics"): the expectation
 * checks (inventory) of this node. node_json/checks may be NULL (not the node leader). */
void nt_inventory_finish_checks(nt_probe_t *p, const nt_judge_t *j, cJSON *node_json,
                                cJSON *checks);

#endif
