/* RDMA node checks (probes/rdma/rdma.h "nodecheck_rdma.c"): MTU and firmware across a node's
 * ports, RoCE v2 GIDs present. Pure: the inventory (inventory.c) reads the facts. */
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

/* Ports of the same HCA type as p whose firmware is fw. */
static int nt_rdma_fw_count(const nt_rdma_port_t *ports, int n, const nt_rdma_port_t *p,
                            const char *fw)
{
    int c = 0;
    for (int j = 0; j < n; j++)
        c += strcmp(ports[j].hca_type, p->hca_type) == 0 && strcmp(ports[j].fw_ver, fw) == 0;
    return c;
}

int nt_rdma_firmware_judge(const nt_rdma_port_t *ports, int n, struct nt_nodecheck *out)
{
    int judged = 0;
    for (int i = 0; i < n; i++) {
        const nt_rdma_port_t *p = &ports[i];
        int same = 0, mine = nt_rdma_fw_count(ports, n, p, p->fw_ver), best = 0;
        const char *ref = "";
        char t[80], exp[96];

        nt_rdma_target(p, t, sizeof(t));
        if (!p->fw_ver[0]) {
            nt_nodecheck_set(&out[i], "rdma_firmware", "NT-RDMA-016", NT_NOT_JUDGED, t, "", "",
                             "the device's fw_ver could not be read");
            continue;
        }
        judged++;
        for (int j = 0; j < n; j++) {
            if (strcmp(ports[j].hca_type, p->hca_type) != 0 || !ports[j].fw_ver[0])
                continue;
            same++;
            int c = nt_rdma_fw_count(ports, n, p, ports[j].fw_ver);
            if (c > best)
                best = c, ref = ports[j].fw_ver;
        }
        snprintf(exp, sizeof(exp), "%s (%d of the node's %d %s ports)", ref, best, same,
                 p->hca_type[0] ? p->hca_type : "RDMA");
        if (mine == same)
            nt_nodecheck_set(&out[i], "rdma_firmware", "NT-RDMA-016", NT_PASS, t, p->fw_ver, exp,
                             "the device runs the firmware of the node's other ports of its type");
        else if (2 * best > same && mine < best)
            nt_nodecheck_set(&out[i], "rdma_firmware", "NT-RDMA-016", NT_WARN, t, p->fw_ver, exp,
                             "the device runs other firmware than most of the node's ports of its "
                             "type: its rail may behave differently (link training, RoCE and "
                             "congestion defaults come with the firmware)");
        else if (2 * best > same)
            nt_nodecheck_set(&out[i], "rdma_firmware", "NT-RDMA-016", NT_PASS, t, p->fw_ver, exp,
                             "the device runs the firmware most of the node's ports of its type "
                             "run (others differ)");
        else
            nt_nodecheck_set(&out[i], "rdma_firmware", "NT-RDMA-016", NT_WARN, t, p->fw_ver, "",
                             "the node's ports of this type run several firmware versions and "
                             "none is held by most: update them to one");
    }
    return judged;
}
