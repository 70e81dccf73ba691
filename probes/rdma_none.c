/* Stand-in for the RDMA probe when probes/rdma is not part of the tree. */
#include <stdio.h>

#include "probe.h"

static nt_status_t nt_rdma_none_init(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks,
                                     char *why, size_t whylen)
{
    (void)p, (void)state, (void)node_json, (void)checks;
    snprintf(why, whylen, "built without the RDMA probe");
    return NT_ERR_UNSUPPORTED;
}

static void nt_rdma_none_cleanup(void *state)
{
    (void)state;
}

const nt_link_probe_ops_t nt_rdma_probe_ops = {
    .kind = "rdma",
    .what = "RDMA write/send between NIC ports (not built)",
    .live_hw = 1,
    .init = nt_rdma_none_init,
    .cleanup = nt_rdma_none_cleanup,
};
