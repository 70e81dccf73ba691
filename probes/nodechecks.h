/* The node checks (include/nettune/nodecheck.h, docs/node-checks.md) as checks[] entries of the
 * probe's report: the glue between the rules of lib/node and the probe's check phase. */
#ifndef NETTUNE_PROBE_NODECHECKS_H
#define NETTUNE_PROBE_NODECHECKS_H

#include <cjson/cJSON.h>

#include "nettune/nodecheck.h"
#include "nettune/topo.h"

/* nt_nodechecks_json - a checks[] entry of one verdict: name, host, target, verdict, observed,
 * expected, message (report.h nt_check_create_str), plus "code" and "category" (the row's
 * nt_category_name). NULL on NOMEM. */
cJSON *nt_nodechecks_json(const nt_nodecheck_t *c, const char *host);

/* nt_nodechecks_node - the sysfs and limits checks of this node into checks, each only where it
 * applies: ACS on the bridges between every GPU and NIC of topo (once a bridge), Xid events of
 * the kernel log per GPU (for the node when topo has no GPU and the log has Xids), IOMMU and AER
 * of every GPU and NIC; with a NIC, memlock; with 2 GPUs or more, /dev/shm; with a GPU and a
 * NIC, peer memory against nccl_version ("2.19.3", "" unknown), nvidia_fs and dma-buf. topo NULL: only
 * what needs no device list (none). Never fails: a failed allocation drops that entry. */
void nt_nodechecks_node(const nt_topo_t *topo, const char *host, const char *nccl_version,
                        cJSON *checks);

/* nt_nodechecks_gpus - the NVML health checks (ECC, row remapping, clock slowdowns,
 * persistence, reset required, and retired pages where nt_gpu_retired_applies) of NVML GPUs 0..ngpus-1 into checks; NVML must be loaded. A GPU
 * NVML cannot open is left out (the inventory check names it). */
void nt_nodechecks_gpus(int ngpus, const char *host, cJSON *checks);

#endif
