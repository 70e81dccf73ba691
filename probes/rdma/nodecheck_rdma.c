/* RDMA node checks (probes/rdma/rdma.h "nodecheck_rdma.c"): MTU across a node's ports, RoCE v2
 * GIDs present. Pure: the inventory (inventory.c) reads the facts. */
#include <stdio.h>
#include <string.h>

#include "nettune/nodecheck.h"
#include "rdma.h"

int nt_rdma_port_mtu(const nt_rdma_port_t *p)
{
    int mtu = 0;
    if (p->active_mtu)
        return p->active_mtu;
    if (!p->is_ethernet || p->netdev_mtu <= 0)
        return 0;
    for (int m = 256; m <= 4096; m *= 2)
        if (m <= p->netdev_mtu)
            mtu = m;
    return mtu;
}

static void nt_rdma_target(const nt_rdma_port_t *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d", p->dev, p->port);
}

/* The MTU most ACTIVE ports of link layer eth (0/1) run at; ties: the largest. 0 = none. */
static int nt_rdma_mtu_reference(const nt_rdma_port_t *ports, int n, int eth)
{
    int best = 0, best_count = 0;
    for (int i = 0; i < n; i++) {
        int m = nt_rdma_port_mtu(&ports[i]), count = 0;
        if (!m || ports[i].state_num != 4 || ports[i].is_ethernet != eth)
            continue;
        for (int j = 0; j < n; j++)
            count += ports[j].state_num == 4 && ports[j].is_ethernet == eth &&
                     nt_rdma_port_mtu(&ports[j]) == m;
        if (count > best_count || (count == best_count && m > best))
            best = m, best_count = count;
    }
    return best;
}

int nt_rdma_mtu_judge(const nt_rdma_port_t *ports, int n, struct nt_nodecheck *out)
{
    int judged = 0;
    for (int i = 0; i < n; i++) {
        const nt_rdma_port_t *p = &ports[i];
        char t[80], obs[32], exp[48];
        int m = nt_rdma_port_mtu(p), ref = nt_rdma_mtu_reference(ports, n, p->is_ethernet);

        nt_rdma_target(p, t, sizeof(t));
        snprintf(obs, sizeof(obs), "%d B", m);
        snprintf(exp, sizeof(exp), "%d B (most of the node's ports)", ref);
        if (p->state_num != 4) {
            nt_nodecheck_set(&out[i], "rdma_mtu", "NT-RDMA-014", NT_NOT_JUDGED, t, "", "",
                             "the port is %s: no MTU to compare", p->state[0] ? p->state : "not active");
            continue;
        }
        judged++;
        if (!m)
            nt_nodecheck_set(&out[i], "rdma_mtu", "NT-RDMA-014", NT_NOT_JUDGED, t, "", exp,
                             "the port's MTU is unknown (no verbs, no netdev MTU)");
        else if (m < ref)
            nt_nodecheck_set(&out[i], "rdma_mtu", "NT-RDMA-014", NT_WARN, t, obs, exp,
                             "this port runs a smaller MTU than the node's other ports: QPs on "
                             "its rail use the smaller packets");
        else
            nt_nodecheck_set(&out[i], "rdma_mtu", "NT-RDMA-014", NT_PASS, t, obs, exp,
                             "the port's MTU matches the node's other ports");
    }
    return judged;
}

void nt_rdma_roce_v2_judge(const nt_rdma_port_t *p, struct nt_nodecheck *out)
{
    char t[80];

    nt_rdma_target(p, t, sizeof(t));
    if (!p->is_ethernet) {
        nt_nodecheck_set(out, "roce_v2_gid", "NT-RDMA-015", NT_PASS, t, "InfiniBand", "",
                         "InfiniBand: no RoCE GID needed");
        return;
    }
    if (!p->ngids) {
        nt_nodecheck_set(out, "roce_v2_gid", "NT-RDMA-015", NT_NOT_JUDGED, t, "", "a RoCE v2 GID",
                         "the port's GID table could not be read");
        return;
    }
    for (int i = 0; i < p->ngids; i++)
        if (p->gids[i].type == NT_GID_TYPE_ROCE_V2 && nt_gid_valid(p->gids[i].raw)) {
            char obs[64];
            snprintf(obs, sizeof(obs), "RoCE v2 GID %d", p->gids[i].index);
            nt_nodecheck_set(out, "roce_v2_gid", "NT-RDMA-015", NT_PASS, t, obs, "a RoCE v2 GID",
                             "the port has a RoCE v2 GID, as NCCL looks for by default");
            return;
        }
    nt_nodecheck_set(out, "roce_v2_gid", "NT-RDMA-015", NT_WARN, t, "no valid RoCE v2 GID",
                     "a RoCE v2 GID",
                     "no valid RoCE v2 GID: NCCL (NCCL_IB_ROCE_VERSION_NUM=2) falls back to a "
                     "RoCE v1 or link-local GID, which does not cross an IP router");
}
