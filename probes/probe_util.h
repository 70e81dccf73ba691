/* Helpers shared by the probes of nettune-probe. */
#ifndef NETTUNE_PROBE_UTIL_H
#define NETTUNE_PROBE_UTIL_H

#include "probe.h"

/* nt_probe_locate - the node index and local rank of world rank r; -1/-1 if unknown. */
void nt_probe_locate(const nt_probe_t *p, int r, int *node, int *local_rank);

/* nt_probe_link_new - a links[] entry with id, kind, scope, src and dst filled in:
 * endpoints are given as strings ("lr0", "mlx5_0:1"); variant may be NULL.
 * Returns NULL on NOMEM or when the id does not fit. */
cJSON *nt_probe_link_new(const char *kind, const char *variant, nt_scope_t scope,
                         const char *src_host, int src_rank, const char *src_ep,
                         const char *dst_host, int dst_rank, const char *dst_ep);

/* nt_probe_add_samples - append the driver results to link["samples"] (latency results as
 * lat_us with p99, bandwidth results as bw_GBps) and set small_msg_lat_us (p50 of the smallest
 * latency size) and peak_bw_GBps (best p50 over the bandwidth sizes). */
nt_status_t nt_probe_add_lat_sample(cJSON *link, size_t bytes, unsigned iters,
                                    const nt_stats_t *lat_s);
nt_status_t nt_probe_add_bw_sample(cJSON *link, size_t bytes, unsigned iters,
                                   const nt_stats_t *bw_Bps);

#endif
