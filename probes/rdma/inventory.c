/* RDMA port inventory from sysfs (through NETTUNE_SYSFS_ROOT) and its report JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nettune/log.h"
#include "nettune/report.h"
#include "nettune/sysfs.h"
#include "rdma.h"

#define IBDIR "/sys/class/infiniband"

static void nt_rd_str(const char *path, char *buf, size_t len)
{
    if (nt_sysfs_read_str(path, buf, len) != NT_OK)
        buf[0] = '\0';
}

/* "4: ACTIVE" -> 4 and "ACTIVE". */
static void nt_split_state(const char *text, int *num, char *name, size_t len)
{
    const char *colon = strchr(text, ':');
    *num = atoi(text);
    snprintf(name, len, "%s", colon ? colon + 1 + strspn(colon + 1, " ") : text);
}

static int nt_is_bdf(const char *s)
{
    unsigned a, b, c, d;
    char tail;
    return sscanf(s, "%4x:%2x:%2x.%1x%c", &a, &b, &c, &d, &tail) == 4;
}

static int nt_read_gids(nt_rdma_port_t *pt, const char *pdir)
{
    char path[512], txt[128];
    char **names = NULL;
    size_t count = 0;

    snprintf(path, sizeof(path), "%s/gids", pdir);
    if (nt_sysfs_list(path, &names, &count) != NT_OK)
        return 0;
    pt->gids = calloc(count ? count : 1, sizeof(*pt->gids));
    if (!pt->gids) {
        nt_sysfs_list_free(names);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        int idx = atoi(names[i]);
        nt_gid_entry_t *g = &pt->gids[pt->ngids];
        uint8_t raw[16];
        static const uint8_t zero[16];
        if (idx + 1 > pt->gid_tbl_len)
            pt->gid_tbl_len = idx + 1;
        snprintf(path, sizeof(path), "%s/gids/%s", pdir, names[i]);
        if (nt_sysfs_read_str(path, txt, sizeof(txt)) != NT_OK || nt_gid_parse(txt, raw) != NT_OK ||
            memcmp(raw, zero, 16) == 0)
            continue;
        g->index = idx;
        memcpy(g->raw, raw, 16);
        snprintf(path, sizeof(path), "%s/gid_attrs/types/%s", pdir, names[i]);
        nt_rd_str(path, txt, sizeof(txt));
        g->type = nt_gid_type_parse(txt, pt->is_ethernet);
        if (!pt->is_ethernet && g->type == NT_GID_TYPE_UNKNOWN)
            g->type = NT_GID_TYPE_IB;
        snprintf(path, sizeof(path), "%s/gid_attrs/ndevs/%s", pdir, names[i]);
        nt_rd_str(path, g->netdev, sizeof(g->netdev));
        pt->ngids++;
    }
    nt_sysfs_list_free(names);
    /* sysfs lists entries as text: sort by index */
    for (int i = 1; i < pt->ngids; i++)
        for (int j = i; j > 0 && pt->gids[j - 1].index > pt->gids[j].index; j--) {
            nt_gid_entry_t t = pt->gids[j];
            pt->gids[j] = pt->gids[j - 1];
            pt->gids[j - 1] = t;
        }
    return 0;
}

static int nt_read_counter_dir(nt_rdma_port_t *pt, const char *pdir, int hw)
{
    char path[512];
    char **names = NULL;
    size_t count = 0;
    nt_counter_t *c;

    snprintf(path, sizeof(path), "%s/%s", pdir, hw ? "hw_counters" : "counters");
    if (nt_sysfs_list(path, &names, &count) != NT_OK)
        return 0;
    c = realloc(pt->counters, (pt->ncounters + count + 1) * sizeof(*c));
    if (!c) {
        nt_sysfs_list_free(names);
        return -1;
    }
    pt->counters = c;
    for (size_t i = 0; i < count; i++) {
        nt_counter_t *k = &pt->counters[pt->ncounters];
        if (strcmp(names[i], "lifespan") == 0)
            continue;
        memset(k, 0, sizeof(*k));
        snprintf(k->name, sizeof(k->name), "%s", names[i]);
        k->hw = hw;
        k->width_bits = nt_counter_width(k->name, hw);
        k->is_error = nt_counter_is_error(k->name, hw);
        pt->ncounters++;
    }
    nt_sysfs_list_free(names);
    return 0;
}

void nt_rdma_counters_read(nt_rdma_port_t *p, int after)
{
    char path[512];
    for (int i = 0; i < p->ncounters; i++) {
        nt_counter_t *k = &p->counters[i];
        unsigned long long v;
        snprintf(path, sizeof(path), IBDIR "/%s/ports/%d/%s/%s", p->dev, p->port,
                 k->hw ? "hw_counters" : "counters", k->name);
        if (nt_sysfs_read_u64(path, &v) != NT_OK)
            continue;
        if (after) {
            k->after = v;
            k->have_after = 1;
        } else {
            k->before = v;
            k->have_before = 1;
        }
    }
}

static nt_status_t nt_read_port(nt_rdma_port_t *pt, const char *dev, int port)
{
    char pdir[384], path[512], txt[128];
    long long v;

    pt->port = port;
    snprintf(pdir, sizeof(pdir), IBDIR "/%s/ports/%d", dev, port);
    snprintf(path, sizeof(path), "%s/link_layer", pdir);
    nt_rd_str(path, pt->link_layer, sizeof(pt->link_layer));
    if (!pt->link_layer[0])
        snprintf(pt->link_layer, sizeof(pt->link_layer), "InfiniBand");
    pt->is_ethernet = strcmp(pt->link_layer, "Ethernet") == 0;
    snprintf(path, sizeof(path), "%s/state", pdir);
    nt_rd_str(path, txt, sizeof(txt));
    nt_split_state(txt, &pt->state_num, pt->state, sizeof(pt->state));
    snprintf(path, sizeof(path), "%s/phys_state", pdir);
    nt_rd_str(path, txt, sizeof(txt));
    nt_split_state(txt, &pt->phys_state_num, pt->phys_state, sizeof(pt->phys_state));
    snprintf(path, sizeof(path), "%s/rate", pdir);
    nt_rd_str(path, pt->rate_text, sizeof(pt->rate_text));
    pt->have_rate = nt_port_rate_parse_sysfs(pt->rate_text, pt->is_ethernet, &pt->rate) == NT_OK;
    pt->max_rate_Gbps = NAN;
    pt->lid = pt->sm_lid = -1;
    snprintf(path, sizeof(path), "%s/lid", pdir);
    if (nt_sysfs_read_long(path, &v) == NT_OK)
        pt->lid = (int)v;
    snprintf(path, sizeof(path), "%s/sm_lid", pdir);
    if (nt_sysfs_read_long(path, &v) == NT_OK)
        pt->sm_lid = (int)v;
    if (nt_read_gids(pt, pdir) < 0 || nt_read_counter_dir(pt, pdir, 0) < 0 ||
        nt_read_counter_dir(pt, pdir, 1) < 0)
        return NT_ERR_NOMEM;
    if (!pt->netdev[0])
        for (int i = 0; i < pt->ngids; i++)
            if (pt->gids[i].netdev[0]) {
                snprintf(pt->netdev, sizeof(pt->netdev), "%s", pt->gids[i].netdev);
                break;
            }
    if (pt->netdev[0]) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", pt->netdev);
        if (nt_sysfs_read_long(path, &v) == NT_OK)
            pt->netdev_mtu = (int)v;
    }
    nt_rdma_counters_read(pt, 0);
    nt_rdma_port_caps_read(pt);
    return NT_OK;
}

nt_status_t nt_rdma_inventory_read(nt_rdma_inv_t *inv, char *why, size_t whylen)
{
    char **devs = NULL;
    size_t ndevs = 0;
    nt_status_t st = NT_OK;

    memset(inv, 0, sizeof(*inv));
    if (nt_sysfs_list(IBDIR, &devs, &ndevs) != NT_OK || ndevs == 0) {
        snprintf(why, whylen,
                 "no RDMA device: %s%s is %s (no RDMA hardware, or its driver is not loaded)",
                 nt_sysfs_root(), IBDIR, devs ? "empty" : "absent");
        nt_sysfs_list_free(devs);
        return NT_ERR_UNSUPPORTED;
    }
    for (size_t d = 0; d < ndevs && st == NT_OK; d++) {
        char path[512], ddir[256], dev_guid[32] = "", fw[64] = "", nt[32] = "", bdf[64] = "";
        char parent[32] = "", hca[32] = "", **ports = NULL;
        size_t nports = 0;
        long long numa = -1;

        snprintf(ddir, sizeof(ddir), IBDIR "/%s", devs[d]);
        snprintf(path, sizeof(path), "%s/node_guid", ddir);
        nt_rd_str(path, dev_guid, sizeof(dev_guid));
        snprintf(path, sizeof(path), "%s/fw_ver", ddir);
        nt_rd_str(path, fw, sizeof(fw));
        snprintf(path, sizeof(path), "%s/node_type", ddir);
        nt_rd_str(path, nt, sizeof(nt));
        snprintf(path, sizeof(path), "%s/hca_type", ddir);
        nt_rd_str(path, hca, sizeof(hca));
        snprintf(path, sizeof(path), "%s/parent", ddir);
        nt_rd_str(path, parent, sizeof(parent));
        snprintf(path, sizeof(path), "%s/device", ddir);
        if (nt_sysfs_readlink_base(path, bdf, sizeof(bdf)) != NT_OK || !nt_is_bdf(bdf))
            bdf[0] = '\0';
        snprintf(path, sizeof(path), "%s/device/numa_node", ddir);
        if (nt_sysfs_read_long(path, &numa) != NT_OK || numa < 0)
            numa = -1;
        snprintf(path, sizeof(path), "%s/ports", ddir);
        if (nt_sysfs_list(path, &ports, &nports) != NT_OK)
            continue;
        for (size_t i = 0; i < nports && st == NT_OK; i++) {
            nt_rdma_port_t *np = realloc(inv->ports, (inv->nports + 1) * sizeof(*np)), *pt;
            if (!np) {
                st = NT_ERR_NOMEM;
                break;
            }
            inv->ports = np;
            pt = &inv->ports[inv->nports++];
            memset(pt, 0, sizeof(*pt));
            snprintf(pt->dev, sizeof(pt->dev), "%s", devs[d]);
            snprintf(pt->node_guid, sizeof(pt->node_guid), "%s", dev_guid);
            snprintf(pt->fw_ver, sizeof(pt->fw_ver), "%s", fw);
            snprintf(pt->hca_type, sizeof(pt->hca_type), "%s", hca);
            snprintf(pt->node_type, sizeof(pt->node_type), "%s", nt);
            snprintf(pt->pci_bus_id, sizeof(pt->pci_bus_id), "%s", bdf);
            snprintf(pt->netdev, sizeof(pt->netdev), "%s", parent);
            pt->numa_node = (int)numa;
            st = nt_read_port(pt, devs[d], atoi(ports[i]));
        }
        nt_sysfs_list_free(ports);
    }
    nt_sysfs_list_free(devs);
    if (st != NT_OK) {
        nt_rdma_inventory_free(inv);
        snprintf(why, whylen, "out of memory reading the RDMA inventory");
        return st;
    }
    if (inv->nports == 0) {
        snprintf(why, whylen, "no RDMA device: the devices under %s%s have no ports",
                 nt_sysfs_root(), IBDIR);
        return NT_ERR_UNSUPPORTED;
    }
    return NT_OK;
}

void nt_rdma_inventory_free(nt_rdma_inv_t *inv)
{
    for (int i = 0; inv->ports && i < inv->nports; i++) {
        free(inv->ports[i].gids);
        free(inv->ports[i].counters);
    }
    free(inv->ports);
    inv->ports = NULL;
    inv->nports = 0;
}

nt_status_t nt_rdma_dev_check(const nt_rdma_inv_t *inv, char *why, size_t whylen)
{
    struct stat sb;
    (void)inv;
    if (nt_sysfs_root()[0])
        return NT_OK; /* a captured tree: nothing live to open */
    if (stat("/dev/infiniband", &sb) != 0) {
        snprintf(why, whylen,
                 "no RDMA device: /dev/infiniband missing: the devices are not passed into the "
                 "container");
        return NT_ERR_UNSUPPORTED;
    }
    return NT_OK;
}

void nt_rdma_port_select(nt_rdma_inv_t *inv, const nt_hca_filter_t *filter,
                         const nt_gid_pref_t *pref, int override)
{
    for (int i = 0; i < inv->nports; i++) {
        nt_rdma_port_t *p = &inv->ports[i];
        p->selected = nt_hca_filter_match(filter, p->dev, p->port);
        if (!filter->set)
            snprintf(p->select_why, sizeof(p->select_why), "NCCL_IB_HCA unset: every port");
        else
            snprintf(p->select_why, sizeof(p->select_why), "%s by NCCL_IB_HCA=%s",
                     p->selected ? "selected" : "excluded", filter->text);
        p->gid_index = nt_gid_choose(p->gids, p->ngids, p->gid_tbl_len, p->is_ethernet, pref,
                                     override, p->gid_why, sizeof(p->gid_why));
    }
}

#define NT_CK(x)                                                                                   \
    do {                                                                                           \
        if ((x) != NT_OK)                                                                          \
            return NT_ERR_NOMEM;                                                                   \
    } while (0)

nt_status_t nt_rdma_counters_to_json(const nt_rdma_port_t *p, cJSON *nic)
{
    cJSON *all = nt_json_add_obj(nic, "counters");
    if (!all)
        return NT_ERR_NOMEM;
    for (int i = 0; i < p->ncounters; i++) {
        const nt_counter_t *k = &p->counters[i];
        cJSON *o = nt_json_add_obj(all, k->name);
        unsigned long long d = 0;
        nt_counter_change_t ch = NT_COUNTER_UNKNOWN;
        if (!o)
            return NT_ERR_NOMEM;
        if (k->have_before)
            NT_CK(nt_json_add_num(o, "before", (double)k->before));
        if (k->have_after)
            NT_CK(nt_json_add_num(o, "after", (double)k->after));
        if (k->have_before && k->have_after) {
            ch = nt_counter_delta(k->before, k->after, k->width_bits, &d);
            if (ch == NT_COUNTER_SAME || ch == NT_COUNTER_GREW)
                NT_CK(nt_json_add_num(o, "delta", (double)d));
        }
        NT_CK(nt_json_add_num(o, "width_bits", k->width_bits));
        NT_CK(nt_json_add_bool(o, "saturated",
                               (k->have_before && k->width_bits < 64 &&
                                k->before >= (1ull << k->width_bits) - 1) ||
                                   (k->have_after && k->width_bits < 64 &&
                                    k->after >= (1ull << k->width_bits) - 1)));
        if (k->have_after)
            NT_CK(nt_json_add_str(o, "change", nt_counter_change_string(ch)));
        NT_CK(nt_json_add_bool(o, "error", k->is_error != 0));
        if (k->is_error == NT_COUNTER_RETRANS)
            NT_CK(nt_json_add_bool(o, "retransmission", 1));
        NT_CK(nt_json_add_str(o, "source", k->hw ? "hw_counters" : "counters"));
    }
    return NT_OK;
}

nt_status_t nt_rdma_port_to_json(const nt_rdma_port_t *p, cJSON *nic)
{
    cJSON *gids;
    const nt_gid_entry_t *g;

    NT_CK(nt_json_add_str(nic, "name", p->dev));
    NT_CK(nt_json_add_num(nic, "port", p->port));
    NT_CK(nt_json_add_str(nic, "state", p->state[0] ? p->state : "UNKNOWN"));
    if (p->phys_state[0])
        NT_CK(nt_json_add_str(nic, "phys_state", p->phys_state));
    NT_CK(nt_json_add_str(nic, "link_layer", p->link_layer));
    if (p->have_rate) {
        char w[16];
        NT_CK(nt_json_add_num(nic, "rate_Gbps", p->rate.data_Gbps));
        NT_CK(nt_json_add_num(nic, "signal_rate_Gbps", p->rate.signal_Gbps));
        NT_CK(nt_json_add_num(nic, "nominal_rate_Gbps", p->rate.nominal_Gbps));
        NT_CK(nt_json_add_str(nic, "encoding", p->rate.encoding));
        if (p->rate.lanes) {
            snprintf(w, sizeof(w), "%dX", p->rate.lanes);
            NT_CK(nt_json_add_str(nic, "active_width", w));
        }
        if (p->rate.speed)
            NT_CK(nt_json_add_str(nic, "active_speed", p->rate.speed->name));
    }
    NT_CK(nt_json_add_str(nic, "rate_text", p->rate_text));
    if (isfinite(p->max_rate_Gbps) && p->max.known) {
        char w[16];
        NT_CK(nt_json_add_num(nic, "max_rate_Gbps", p->max_rate_Gbps));
        if (p->max.lanes) {
            snprintf(w, sizeof(w), "%dX", p->max.lanes);
            NT_CK(nt_json_add_str(nic, "max_width", w));
        }
        if (p->max.speed)
            NT_CK(nt_json_add_str(nic, "max_speed", p->max.speed->name));
        if (p->max.mode[0])
            NT_CK(nt_json_add_str(nic, "max_link_mode", p->max.mode));
        NT_CK(nt_json_add_str(nic, "max_rate_source", p->max_source));
        if (p->common_max.known)
            NT_CK(nt_json_add_num(nic, "common_max_rate_Gbps", p->common_max.rate_Gbps));
    } else if (p->max_why[0]) {
        NT_CK(nt_json_add_str(nic, "max_rate_unknown", p->max_why));
    }
    if (p->fw_ver[0])
        NT_CK(nt_json_add_str(nic, "firmware", p->fw_ver));
    if (p->node_guid[0])
        NT_CK(nt_json_add_str(nic, "node_guid", p->node_guid));
    if (p->pci_bus_id[0])
        NT_CK(nt_json_add_str(nic, "pci_bus_id", p->pci_bus_id));
    if (p->numa_node >= 0)
        NT_CK(nt_json_add_num(nic, "numa_node", p->numa_node));
    if (p->netdev[0])
        NT_CK(nt_json_add_str(nic, "netdev", p->netdev));
    if (p->active_mtu)
        NT_CK(nt_json_add_num(nic, "mtu", p->active_mtu));
    if (p->max_mtu)
        NT_CK(nt_json_add_num(nic, "max_mtu", p->max_mtu));
    if (p->netdev_mtu)
        NT_CK(nt_json_add_num(nic, "netdev_mtu", p->netdev_mtu));
    if (!p->is_ethernet) {
        if (p->lid >= 0)
            NT_CK(nt_json_add_num(nic, "lid", p->lid));
        if (p->sm_lid >= 0)
            NT_CK(nt_json_add_num(nic, "sm_lid", p->sm_lid));
    }
    if (p->gid_tbl_len)
        NT_CK(nt_json_add_num(nic, "gid_tbl_len", p->gid_tbl_len));
    gids = nt_json_add_arr(nic, "gids");
    if (!gids)
        return NT_ERR_NOMEM;
    for (int i = 0; i < p->ngids; i++) {
        char txt[64];
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(gids, o)) {
            cJSON_Delete(o);
            return NT_ERR_NOMEM;
        }
        nt_gid_format(p->gids[i].raw, txt, sizeof(txt));
        NT_CK(nt_json_add_num(o, "index", p->gids[i].index));
        NT_CK(nt_json_add_str(o, "gid", txt));
        NT_CK(nt_json_add_str(o, "type", nt_gid_type_string(p->gids[i].type)));
        NT_CK(nt_json_add_bool(o, "ipv4", nt_gid_is_ipv4(p->gids[i].raw)));
        if (p->gids[i].netdev[0])
            NT_CK(nt_json_add_str(o, "netdev", p->gids[i].netdev));
    }
    NT_CK(nt_json_add_bool(nic, "selected", p->selected));
    NT_CK(nt_json_add_str(nic, "selection", p->select_why));
    NT_CK(nt_json_add_num(nic, "gid_index", p->gid_index));
    g = nt_gid_find(p->gids, p->ngids, p->gid_index);
    if (g) {
        char txt[64];
        nt_gid_format(g->raw, txt, sizeof(txt));
        NT_CK(nt_json_add_str(nic, "gid", txt));
        NT_CK(nt_json_add_str(nic, "gid_type", nt_gid_type_string(g->type)));
    }
    NT_CK(nt_json_add_str(nic, "gid_reason", p->gid_why));
    return nt_rdma_counters_to_json(p, nic);
}
