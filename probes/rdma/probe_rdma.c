/* The RDMA link probe (kind "rdma"): inventory and checks in init, rail-by-rail RDMA WRITE
 * bandwidth and latency plus SEND latency in run_pair, loopback in run_local, error counters
 * again in finish. docs/rdma.md describes options, verdicts and errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/bench.h"
#include "nettune/clock.h"
#include "nettune/log.h"
#include "nettune/pcie.h"
#include "nettune/report.h"
#include "judge/judge.h"
#include "nettune/sysfs.h"
#include "probe.h"
#include "probe_util.h"
#include "rdma.h"
#include "nettune/thresholds.h"
#include "nodechecks.h"
#include "ibv.h"
#include "verbs.h"

#define NT_TAG_RDMA 4000 /* launcher tags of this probe: 4000..4009 */
#define NT_RDMA_MAX_RAILS 32

/* One rail as the other end sees it. */
typedef struct nt_rail_info {
    char dev[64];
    int32_t port, state_num, gid_index, is_ethernet;
    double data_Gbps, pcie_GBps;
    char state[16], phys_state[24];
    int32_t gpu; /* index of the GPU nearest the NIC (GPU-memory link), -1: none */
} nt_rail_info_t;

typedef struct nt_rails_msg {
    int32_t n;
    nt_rail_info_t r[NT_RDMA_MAX_RAILS];
} nt_rails_msg_t;

typedef struct nt_status_msg {
    int32_t status;
    char err[512];
} nt_status_msg_t;

/* One end's GPU-memory registration, exchanged before a GPU-memory link (the agreement). */
typedef struct nt_gpu_msg {
    int32_t reg;   /* nt_gpu_reg_t: NT_GPU_REG_OK or NT_GPU_REG_FAILED */
    char path[24]; /* "dma-buf" or "peer memory" */
    char why[512]; /* the failure's sentence */
    nt_rdma_ep_info_t ep;
} nt_gpu_msg_t;

typedef struct nt_rdma_state {
    nt_rdma_inv_t inv;
    int rails[NT_RDMA_MAX_RAILS]; /* inventory indices of the selected ports, rail order */
    int nrails;
    double pcie_GBps[NT_RDMA_MAX_RAILS];
    char pcie_text[NT_RDMA_MAX_RAILS][96];
    int gpu_t[NT_RDMA_MAX_RAILS];     /* p->topo->gpus index for the rail's GPU link, -1: none */
    int gpu_index[NT_RDMA_MAX_RAILS]; /* that GPU's index (link ids), -1: none */
    nt_topo_t *test_topo;             /* NETTUNE_TEST_RDMA_GPU_TOPOLOGY (tests only), else NULL */
    nt_hca_filter_t filter;
    nt_gid_pref_t pref;
    int tc, sl;
    nt_link_rules_t rules; /* rdma rules of this node's class */
    char host[NT_HOST_MAX];
} nt_rdma_state_t;

/* The topology that decides the GPUs of the GPU-memory tests: this node's, or for the VM test
 * the hwloc XML named by NETTUNE_TEST_RDMA_GPU_TOPOLOGY (GPUs on a node that has none, so that
 * the no-CUDA agreement runs for real; --topology would switch the RDMA probe off). */
static const nt_topo_t *nt_gtopo(const nt_rdma_state_t *s, const nt_probe_t *p)
{
    return s->test_topo ? s->test_topo : p->topo;
}

/* The bench driver's view of one measurement. */
typedef struct nt_rdma_bench {
    nt_rdma_conn_t *c, *peer_conn; /* peer_conn: loopback's other end */
    int initiator, kind;           /* 0 write bw, 1 write lat, 2 send lat */
    nt_probe_t *p;
    int peer_rank;
} nt_rdma_bench_t;

static nt_status_t nt_rb_run(void *ctx, size_t bytes, unsigned window, unsigned iters,
                             double *samples)
{
    nt_rdma_bench_t *b = ctx;
    switch (b->kind) {
    case 0:
        /* The driver grows the window up to nt_rdma_window(bytes) (its max_window). */
        return nt_rdma_write_bw(b->c, b->peer_conn, b->initiator, bytes, window, iters, samples);
    case 1:
        return nt_rdma_write_lat(b->c, b->peer_conn, b->initiator, bytes, iters, samples);
    default:
        return nt_rdma_send_lat(b->c, b->peer_conn, b->initiator, bytes, iters, samples);
    }
}

static nt_status_t nt_rb_agree(void *ctx, nt_bench_plan_t *plan)
{
    nt_rdma_bench_t *b = ctx;
    nt_launcher_t *l = b->p->launcher;
    uint32_t v[2] = {plan->window, plan->iters};
    nt_status_t st;
    if (b->initiator)
        return l->ops->send(l, b->peer_rank, NT_TAG_RDMA + 1, v, sizeof(v),
                            b->p->params->peer_timeout_s);
    st = l->ops->recv(l, b->peer_rank, NT_TAG_RDMA + 1, v, sizeof(v), b->p->params->peer_timeout_s);
    plan->window = v[0];
    plan->iters = v[1];
    return st;
}

static const nt_bench_ops_t nt_rb_ops = {"rdma", nt_rb_run, nt_rb_agree};
static const nt_bench_ops_t nt_rb_local_ops = {"rdma-loopback", nt_rb_run, NULL};

static int nt_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* Exchange a fixed-size message: the initiator sends first, the responder receives first. */
static nt_status_t nt_xchg(nt_probe_t *p, int peer, int initiator, int tag, const void *mine,
                           void *theirs, size_t bytes)
{
    nt_launcher_t *l = p->launcher;
    double t = p->params->peer_timeout_s;
    nt_status_t st;
    if (initiator) {
        st = l->ops->send(l, peer, tag, mine, bytes, t);
        return st == NT_OK ? l->ops->recv(l, peer, tag, theirs, bytes, t) : st;
    }
    st = l->ops->recv(l, peer, tag, theirs, bytes, t);
    return st == NT_OK ? l->ops->send(l, peer, tag, mine, bytes, t) : st;
}

static void nt_port_ep(const char *dev, int port, const char *suffix, char *buf, size_t len)
{
    snprintf(buf, len, "%s:%d%s", dev, port, suffix ? suffix : "");
}

static void nt_add_str_item(cJSON *obj, const char *arr, const char *msg)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(obj, arr);
    if (!a)
        a = nt_json_add_arr(obj, arr);
    if (a)
        cJSON_AddItemToArray(a, cJSON_CreateString(msg));
}

/* ---------------------------------------------------------------- init */

static double nt_port_pcie(const nt_rdma_port_t *pt, char *text, size_t len)
{
    nt_pcie_link_t l;
    text[0] = '\0';
    if (!pt->pci_bus_id[0] || nt_pcie_read(pt->pci_bus_id, &l) != NT_OK)
        return NAN;
    snprintf(text, len, "PCIe Gen%d x%d of %s", nt_pcie_gen(l.cur_gts), l.cur_width, l.bdf);
    return nt_pcie_link_GBps(l.cur_gts, l.cur_width);
}

static void nt_nic_json(nt_rdma_state_t *s, nt_probe_t *p, int i, cJSON *nics)
{
    nt_rdma_port_t *pt = &s->inv.ports[i];
    cJSON *nic = cJSON_CreateObject();
    if (!nic || !cJSON_AddItemToArray(nics, nic)) {
        cJSON_Delete(nic);
        return;
    }
    nt_rdma_port_to_json(pt, nic);
    if (pt->pci_bus_id[0]) {
        nt_pcie_link_t l;
        if (nt_pcie_read(pt->pci_bus_id, &l) == NT_OK) {
            cJSON *pc = nt_json_add_obj(nic, "pcie");
            if (pc) {
                nt_json_add_num(pc, "gen", nt_pcie_gen(l.cur_gts));
                nt_json_add_num(pc, "width", l.cur_width);
                nt_json_add_num(pc, "max_gen", nt_pcie_gen(l.max_gts));
                nt_json_add_num(pc, "max_width", l.max_width);
                nt_json_add_num(pc, "bw_GBps", nt_pcie_link_GBps(l.cur_gts, l.cur_width));
            }
        }
    }
    if (p->topo) {
        int n = nt_topo_find_nic(p->topo, pt->dev);
        if (n >= 0) {
            int g = nt_topo_nearest_gpu(p->topo, n);
            if (g >= 0) {
                nt_json_add_num(nic, "nearest_gpu", p->topo->gpus[g].index);
                nt_json_add_str(nic, "nearest_gpu_path",
                                nt_path_string(nt_topo_path(p->topo, g, n)));
            }
        }
    }
    nt_json_add_num(nic, "traffic_class", s->tc < 0 ? 0 : s->tc);
    nt_json_add_num(nic, "service_level", s->sl < 0 ? 0 : s->sl);
}

static void nt_port_checks(nt_rdma_state_t *s, const nt_rdma_port_t *pt, cJSON *checks)
{
    char target[96];
    cJSON *c;
    nt_port_ep(pt->dev, pt->port, NULL, target, sizeof(target));
    if (pt->state_num == 4)
        c = nt_check_create_str("port_state", s->host, target, NT_PASS, pt->state, "ACTIVE",
                                "%s is ACTIVE (%s)", target, pt->phys_state);
    else if (!pt->state[0])
        /* Unknown is not judged, never a failure (a drain on an unreadable file). */
        c = nt_check_create_str("port_state", s->host, target, NT_NOT_JUDGED, "unknown", "ACTIVE",
                                "state unknown (its sysfs state file could not be read)");
    else
        c = nt_check_create_str(
            "port_state", s->host, target, NT_FAIL, pt->state[0] ? pt->state : "UNKNOWN", "ACTIVE",
            "%s is %s (physical state %s)%s: NCCL will not use it", target,
            pt->state[0] ? pt->state : "UNKNOWN", pt->phys_state[0] ? pt->phys_state : "unknown",
            pt->is_ethernet && pt->netdev[0] ? ", check its network interface"
                                             : ", check the cable and the subnet manager");
    if (c)
        cJSON_AddItemToArray(checks, c);
    if (pt->state_num != 4 || !pt->have_rate)
        return;
    /* Rate against what the port (and, when its peer could be read, both ends) supports:
     * nt_port_rate_judge in portcap.c; the operator's --expect nic_rate_Gbps is judged by the
     * inventory check. */
    {
        char msg[768], act[96];
        int v;
        if (pt->rate.lanes && pt->rate.speed && !pt->is_ethernet)
            snprintf(act, sizeof(act), "%dX %s %g Gb/s", pt->rate.lanes, pt->rate.speed->name,
                     pt->rate.data_Gbps);
        else
            snprintf(act, sizeof(act), "%g Gb/s", pt->rate.data_Gbps);
        v = nt_port_rate_judge(target, pt->rate.data_Gbps, act, pt->rate.lanes, pt->is_ethernet,
                               &pt->max, &pt->common_max, &pt->enabled_max, msg, sizeof(msg));
        if (!pt->max.known && pt->max_why[0])
            snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), " (%s)", pt->max_why);
        c = nt_check_create("port_rate", s->host, target, (nt_verdict_t)v, pt->rate.data_Gbps,
                            pt->max.known ? pt->max.rate_Gbps : NAN, "Gb/s", "%s", msg);
    }
    if (c)
        cJSON_AddItemToArray(checks, c);
}

/* The node checks of the rails (docs/node-checks.md): each ACTIVE rail's MTU against the node's
 * other rails, a RoCE v2 GID on each RoCE rail, each rail's firmware against the node's other
 * rails of its HCA type. */
static void nt_rails_node_checks(nt_rdma_state_t *s, cJSON *checks)
{
    nt_rdma_port_t *rails = calloc((size_t)s->nrails + 1, sizeof(*rails));
    nt_nodecheck_t *mtu = calloc((size_t)s->nrails + 1, sizeof(*mtu));
    nt_nodecheck_t *fw = calloc((size_t)s->nrails + 1, sizeof(*fw));

    if (rails && mtu && fw) {
        for (int r = 0; r < s->nrails; r++)
            rails[r] = s->inv.ports[s->rails[r]];
        nt_rdma_mtu_judge(rails, s->nrails, mtu);
        nt_rdma_firmware_judge(rails, s->nrails, fw);
        for (int r = 0; r < s->nrails; r++) {
            nt_nodecheck_t gid;
            /* A port that is not ACTIVE fails (or is not judged by) port_state already. */
            cJSON *c = rails[r].state_num == 4 ? nt_nodechecks_json(&mtu[r], s->host) : NULL;
            if (c)
                cJSON_AddItemToArray(checks, c);
            nt_rdma_roce_v2_judge(&rails[r], &gid);
            if ((c = nt_nodechecks_json(&gid, s->host)))
                cJSON_AddItemToArray(checks, c);
            /* a virtual device (rxe, no PCI function) has no firmware to compare */
            if (rails[r].pci_bus_id[0] && (c = nt_nodechecks_json(&fw[r], s->host)))
                cJSON_AddItemToArray(checks, c);
        }
    }
    free(rails);
    free(mtu);
    free(fw);
}

/* GPUDirect RDMA on a node with GPUs: register memory of the GPU nearest the first ACTIVE
 * selected port (dma-buf, then peer memory) and say which path worked. A node without GPUs
 * gets no check: there is nothing to miss. */
static void nt_gpudirect_check(nt_rdma_state_t *s, nt_probe_t *p, cJSON *checks)
{
    const nt_rdma_port_t *pt = NULL;
    nt_rdma_conn_params_t cp;
    nt_rdma_conn_t *c = NULL;
    char err[512] = "", target[96];
    int g = 0, n;
    cJSON *ck;
    const nt_topo_t *t = nt_gtopo(s, p);

    if (!t || t->ngpus == 0 || !checks)
        return;
    for (int r = 0; r < s->nrails && !pt; r++)
        if (s->inv.ports[s->rails[r]].state_num == 4)
            pt = &s->inv.ports[s->rails[r]];
    if (!pt)
        return;
    n = nt_topo_find_nic(t, pt->dev);
    if (n >= 0 && nt_topo_nearest_gpu(t, n) >= 0)
        g = nt_topo_nearest_gpu(t, n);
    memset(&cp, 0, sizeof(cp));
    cp.port = pt;
    cp.nqps = 1;
    cp.max_bytes = 1u << 20;
    cp.gid_index = pt->gid_index;
    cp.timeout_s = 2.0;
    cp.numa_node = -1;
    cp.gpu = t->gpus[g].index;
    cp.gpu_bus_id = t->gpus[g].pci_bus_id;
    snprintf(target, sizeof(target), "%s:%d/gpu%d", pt->dev, pt->port, t->gpus[g].index);
    if (nt_rdma_conn_create(&cp, &c, err, sizeof(err)) == NT_OK)
        ck = nt_check_create_str("gpudirect", s->host, target, NT_PASS, nt_rdma_conn_memory(c),
                                 "gpu",
                                 "GPUDirect RDMA works on %s: %s registers GPU %d memory "
                                 "through %s",
                                 s->host, pt->dev, t->gpus[g].index, nt_rdma_conn_memory(c));
    else
        ck = nt_check_create_str("gpudirect", s->host, target, NT_FAIL, "unavailable", "gpu",
                                 "GPUDirect RDMA unavailable on %s: %s", s->host,
                                 /* the data path's reason already starts with the same words */
                                 strncmp(err, "GPUDirect RDMA unavailable: ", 28) == 0 ? err + 28
                                                                                       : err);
    nt_rdma_conn_destroy(c);
    if (ck)
        cJSON_AddItemToArray(checks, ck);
}

static nt_status_t nt_rdma_init(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks,
                                char *why, size_t whylen)
{
    nt_rdma_state_t *s = calloc(1, sizeof(*s));
    nt_status_t st;
    int local_size = p->nodes[p->my_node].nranks;

    *state = NULL;
    /* Without libibverbs no link can be measured: skipped with the reason, before anything. */
    st = nt_ibv_load(why, whylen);
    if (st != NT_OK) {
        free(s);
        return st;
    }
    if (!s)
        return NT_ERR_NOMEM;
    snprintf(s->host, sizeof(s->host), "%s", p->nodes[p->my_node].host);
    if (getenv("NETTUNE_TEST_RDMA_GPU_TOPOLOGY") &&
        nt_topo_load(getenv("NETTUNE_TEST_RDMA_GPU_TOPOLOGY"), &s->test_topo) != NT_OK)
        s->test_topo = NULL;
    st = nt_rdma_inventory_read(&s->inv, why, whylen);
    if (st == NT_OK)
        st = nt_rdma_dev_check(&s->inv, why, whylen);
    if (st != NT_OK) {
        nt_rdma_inventory_free(&s->inv);
        nt_topo_destroy(s->test_topo);
        free(s);
        return st;
    }
    if (!nt_sysfs_root()[0])
        nt_rdma_port_query(&s->inv);
    nt_hca_filter_parse(getenv("NCCL_IB_HCA"), &s->filter);
    nt_gid_pref_from_env(&s->pref);
    s->tc = nt_env_int("NCCL_IB_TC", -1);
    s->sl = nt_env_int("NCCL_IB_SL", -1);
    nt_rdma_port_select(&s->inv, &s->filter, &s->pref, p->params->gid_index);
    for (int i = 0; i < s->inv.nports && s->nrails < NT_RDMA_MAX_RAILS; i++)
        if (s->inv.ports[i].selected) {
            s->pcie_GBps[s->nrails] =
                nt_port_pcie(&s->inv.ports[i], s->pcie_text[s->nrails], sizeof(s->pcie_text[0]));
            /* GPU-memory links: the GPU nearest the NIC; none with a fake sysfs tree (no real
             * device to register with, as for the gpudirect check). */
            s->gpu_t[s->nrails] =
                nt_sysfs_root()[0]
                    ? -1
                    : nt_rdma_gpu_for_nic(nt_gtopo(s, p), s->inv.ports[i].dev, NULL, 0);
            s->gpu_index[s->nrails] =
                s->gpu_t[s->nrails] >= 0 ? nt_gtopo(s, p)->gpus[s->gpu_t[s->nrails]].index : -1;
            s->rails[s->nrails++] = i;
        }
    /* Expected bandwidth rules of this node's class (thresholds file, else built-in). */
    {
        nt_thresholds_t *t = NULL;
        nt_node_rules_t nr;
        char err[256];
        s->rules.efficiency = 0.90;
        s->rules.min_bw_GBps = NAN;
        s->rules.max_lat_us = NAN;
        if ((p->params->thresholds ? nt_thresholds_load(p->params->thresholds, &t, err, sizeof(err))
                                   : nt_thresholds_defaults(&t)) == NT_OK &&
            nt_thresholds_for_host(t, s->host, NULL, &nr) == NT_OK)
            s->rules = nr.links[NT_KIND_RDMA];
        nt_thresholds_destroy(t);
    }
    if (node_json) {
        cJSON *nics = cJSON_GetObjectItemCaseSensitive(node_json, "nics");
        if (!nics)
            nics = nt_json_add_arr(node_json, "nics");
        for (int i = 0; nics && i < s->inv.nports; i++)
            nt_nic_json(s, p, i, nics);
        for (int r = 0; checks && r < s->nrails; r++)
            nt_port_checks(s, &s->inv.ports[s->rails[r]], checks);
        if (checks)
            nt_rails_node_checks(s, checks);
        if (!nt_sysfs_root()[0])
            nt_gpudirect_check(s, p, checks);
    }
    if (s->nrails == 0) {
        snprintf(why, whylen, "NCCL_IB_HCA=%s excludes every RDMA port of this node",
                 s->filter.text);
        nt_rdma_inventory_free(&s->inv);
        nt_topo_destroy(s->test_topo);
        free(s);
        return NT_ERR_UNSUPPORTED;
    }
    NT_INFO(RDMA, "%d RDMA rail(s) selected, %d rank(s) on this node share them", s->nrails,
            local_size);
    *state = s;
    return NT_OK;
}

/* ---------------------------------------------------------------- links */

static void nt_rail_fill(const nt_rdma_state_t *s, int r, nt_rail_info_t *ri)
{
    const nt_rdma_port_t *pt = &s->inv.ports[s->rails[r]];
    memset(ri, 0, sizeof(*ri));
    snprintf(ri->dev, sizeof(ri->dev), "%s", pt->dev);
    ri->port = pt->port;
    ri->state_num = pt->state_num;
    ri->gid_index = pt->gid_index;
    ri->is_ethernet = pt->is_ethernet;
    ri->data_Gbps = pt->have_rate ? pt->rate.data_Gbps : NAN;
    ri->pcie_GBps = s->pcie_GBps[r];
    snprintf(ri->state, sizeof(ri->state), "%s", pt->state[0] ? pt->state : "UNKNOWN");
    snprintf(ri->phys_state, sizeof(ri->phys_state), "%s", pt->phys_state);
    ri->gpu = s->gpu_index[r];
}

/* Line rate of a link and the expected bandwidth: the lower data rate of the two ports
 * capped by either NIC's PCIe link (then PCIe is the limit), x the rules' efficiency. */
static void nt_link_expect(const nt_rdma_state_t *s, cJSON *link, const nt_rail_info_t *a,
                           const nt_rail_info_t *b, const char *pcie_a)
{
    double port = fmin(a->data_Gbps, b->data_Gbps) / 8.0, line = port, exp;
    const char *lim = "port";
    char basis[320];
    if (isfinite(a->pcie_GBps) && a->pcie_GBps < line) {
        line = a->pcie_GBps;
        lim = "pcie";
    }
    if (isfinite(b->pcie_GBps) && b->pcie_GBps < line) {
        line = b->pcie_GBps;
        lim = "pcie";
    }
    if (!isfinite(line))
        return;
    exp = nt_link_expected_bw(&s->rules, line);
    nt_json_add_num(link, "line_rate_GBps", line);
    if (isfinite(exp))
        nt_json_add_num(link, "expected_bw_GBps", exp);
    nt_json_add_str(link, "expected_limited_by", lim);
    if (strcmp(lim, "pcie") == 0)
        snprintf(basis, sizeof(basis),
                 "the NIC's PCIe link (%s, %.3g GB/s) is slower than the port (%.3g GB/s): blame "
                 "PCIe; x efficiency %.2f",
                 isfinite(a->pcie_GBps) && a->pcie_GBps == line && pcie_a[0] ? pcie_a : "peer",
                 line, port, s->rules.efficiency);
    else
        snprintf(basis, sizeof(basis), "port data rate %g Gb/s = %.4g GB/s x efficiency %.2f",
                 fmin(a->data_Gbps, b->data_Gbps), line, s->rules.efficiency);
    nt_json_add_str(link, "expected_basis", basis);
}

typedef struct nt_link_pair {
    cJSON *write, *send;
} nt_link_pair_t;

static void nt_links_new(nt_probe_t *p, nt_link_pair_t *lp, nt_scope_t scope, int peer_rank,
                         const char *peer_host, const char *sep, const char *dep)
{
    lp->write = nt_probe_link_new("rdma", "write", scope, p->nodes[p->my_node].host, p->rank, sep,
                                  peer_host, peer_rank, dep);
    lp->send = nt_probe_link_new("rdma", "send", scope, p->nodes[p->my_node].host, p->rank, sep,
                                 peer_host, peer_rank, dep);
}

static void nt_links_fail(nt_link_pair_t *lp, const char *verdict, const char *msg)
{
    cJSON *both[2] = {lp->write, lp->send};
    for (int i = 0; i < 2; i++) {
        if (!both[i])
            continue;
        if (strcmp(verdict, "skipped") == 0) {
            nt_json_add_str(both[i], "verdict", "skipped");
            nt_add_str_item(both[i], "reasons", msg);
        } else {
            nt_add_str_item(both[i], "errors", msg);
        }
    }
}

/* A launcher exchange that timed out or was interrupted ends the run early (docs/probe-engine.md: a dead
 * peer or a signal is exit 3 unless something failed): the links say so, and the judge skips
 * them instead of failing them, as it does for the MPI probe. */
static void nt_links_stopped(nt_link_pair_t *lp, nt_status_t st)
{
    cJSON *both[2] = {lp->write, lp->send};
    const char *by = st == NT_ERR_TIMEOUT       ? "peer_timeout"
                     : st == NT_ERR_INTERRUPTED ? "signal"
                                                : NULL;
    for (int i = 0; by && i < 2; i++)
        if (both[i] && !cJSON_GetObjectItemCaseSensitive(both[i], "stopped_by"))
            cJSON_AddStringToObject(both[i], "stopped_by", by);
}

static void nt_links_emit(nt_link_pair_t *lp, cJSON *out)
{
    if (lp->write)
        cJSON_AddItemToArray(out, lp->write);
    if (lp->send)
        cJSON_AddItemToArray(out, lp->send);
    lp->write = lp->send = NULL;
}

static void nt_links_describe(nt_rdma_state_t *s, nt_link_pair_t *lp, const nt_rdma_port_t *pt,
                              const nt_rail_info_t *peer, nt_rdma_conn_t *c, int nqps)
{
    cJSON *both[2] = {lp->write, lp->send};
    const nt_gid_entry_t *g = nt_gid_find(pt->gids, pt->ngids, pt->gid_index);
    for (int i = 0; i < 2; i++) {
        char txt[64];
        if (!both[i])
            continue;
        nt_json_add_num(both[i], "gid_index", pt->gid_index);
        if (g) {
            nt_gid_format(g->raw, txt, sizeof(txt));
            nt_json_add_str(both[i], "gid", txt);
        }
        nt_json_add_str(both[i], "gid_reason", pt->gid_why);
        if (peer)
            nt_json_add_num(both[i], "peer_gid_index", peer->gid_index);
        nt_json_add_num(both[i], "traffic_class", s->tc < 0 ? 0 : s->tc);
        nt_json_add_num(both[i], "service_level", s->sl < 0 ? 0 : s->sl);
        if (c) {
            nt_json_add_str(both[i], "memory", nt_rdma_conn_memory(c));
            nt_json_add_str(both[i], "numa_binding", nt_rdma_conn_numa(c));
        }
    }
    if (lp->write)
        nt_json_add_num(lp->write, "qps", nqps);
}

/* Sizes: bandwidth 64 KiB x4 steps up to rdma_max_bytes (always included); latency: the
 * run's latency sizes (--sizes below 64 KiB), else 8 bytes. */
static int nt_bw_sizes(const nt_probe_params_t *pa, size_t *out)
{
    int n = 0;
    size_t max = pa->rdma_max_bytes ? pa->rdma_max_bytes : (8u << 20);
    for (size_t b = 64u << 10; b < max && n < 15; b *= 4)
        out[n++] = b;
    out[n++] = max;
    return n;
}

static int nt_lat_sizes(const nt_probe_params_t *pa, size_t *out)
{
    int n = 0;
    for (size_t i = 0; i < pa->nlat_sizes && n < 8; i++)
        if (pa->lat_sizes[i] >= 1 && pa->lat_sizes[i] <= pa->rdma_max_bytes)
            out[n++] = pa->lat_sizes[i];
    if (n == 0)
        out[n++] = 8;
    return n;
}

/* The measurement of one connected link (both ends run it, or one thread for a loopback). */
static nt_status_t nt_measure(nt_probe_t *p, nt_rdma_bench_t *b, nt_link_pair_t *lp, int loop,
                              int bw_only)
{
    const nt_probe_params_t *pa = p->params;
    size_t bw[16], lat[8];
    int nbw = nt_bw_sizes(pa, bw), nlat = nt_lat_sizes(pa, lat);
    nt_bench_params_t bp;
    nt_bench_result_t res;
    nt_status_t st = NT_OK;
    const nt_bench_ops_t *ops = loop ? &nt_rb_local_ops : &nt_rb_ops;

    nt_bench_params_default(&bp);
    bp.initiator = b->initiator;
    bp.budget_s = pa->budget_s > 0 ? pa->budget_s : 0.05;
    bp.metric = NT_BENCH_LATENCY;
    bp.max_iters = 20000;
    for (int k = 1; k <= 2 && st == NT_OK && !bw_only; k++) {
        cJSON *link = k == 1 ? lp->write : lp->send;
        b->kind = k;
        for (int i = 0; i < nlat && st == NT_OK; i++) {
            st = nt_bench_run(ops, b, &bp, lat[i], &res);
            if (st == NT_OK && b->initiator && link)
                st = nt_probe_add_lat_sample(link, res.bytes, res.iters, &res.stats);
        }
    }
    b->kind = 0;
    bp.metric = NT_BENCH_BANDWIDTH;
    bp.min_iters = 3;
    bp.max_iters = 1000;
    for (int i = 0; i < nbw && st == NT_OK; i++) {
        bp.max_window = nt_rdma_window(bw[i]);
        st = nt_bench_run(ops, b, &bp, bw[i], &res);
        if (st == NT_OK && b->initiator && lp->write)
            st = nt_probe_add_bw_sample(lp->write, res.bytes, res.iters, &res.stats);
    }
    return st;
}

static double nt_timeout(const nt_probe_t *p)
{
    /* A data-path wait: long enough for emulated or congested links, short enough that a
     * broken link costs seconds, not the whole peer timeout. */
    double t = p->params->peer_timeout_s / 3.0;
    return t < 2.0 ? 2.0 : t > 10.0 ? 10.0 : t;
}

/* The end of a rail test, host or GPU memory: a launcher exchange that failed is said on the
 * links (and whether it ended the run early), the binding is undone, the connection freed and
 * the links handed to the run. Returns st. */
static nt_status_t nt_rail_end(nt_link_pair_t *lp, nt_status_t st, int peer_rank, const char *what,
                               nt_numa_saved_t *saved, nt_rdma_conn_t *c, cJSON *out_links)
{
    if (st != NT_OK && lp->write) {
        char msg[256];
        snprintf(msg, sizeof(msg), "the peer rank %d stopped answering during the %s: %s",
                 peer_rank, what, nt_status_string(st));
        nt_links_fail(lp, "fail", msg);
        nt_links_stopped(lp, st);
    }
    nt_numa_unbind(saved);
    nt_rdma_conn_destroy(c);
    nt_links_emit(lp, out_links);
    return st;
}

/* The part of a rail test that host and GPU memory share, with the memory kind as a
 * parameter (gpu: 1 for the GPU-memory link, whose test is bandwidth only): connect, tell each
 * other whether it worked (tag), measure, then both ends report how the measurement ended
 * (tag + 1), so that a data-path failure on one side is explained on the initiator's link and
 * a lost peer is told apart from a broken link. Failures go into lp; returns the status of the
 * exchanges (NT_OK unless the peer stopped answering). */
static nt_status_t nt_rail_connect_measure(nt_rdma_state_t *s, nt_probe_t *p, int peer_rank,
                                           int initiator, nt_rdma_conn_t *c,
                                           const nt_rdma_ep_info_t *them, nt_link_pair_t *lp,
                                           int gpu, int tag, const nt_rdma_port_t *pt,
                                           const nt_rail_info_t *peer, int nqps)
{
    nt_status_msg_t sme, sthem;
    nt_status_t st, lst;

    memset(&sme, 0, sizeof(sme));
    if (nt_rdma_conn_connect(c, them) != NT_OK) {
        sme.status = 1;
        snprintf(sme.err, sizeof(sme.err), "%s", nt_rdma_conn_error(c));
    }
    st = nt_xchg(p, peer_rank, initiator, tag, &sme, &sthem, sizeof(sme));
    if (st != NT_OK)
        return st;
    if (sme.status || sthem.status) {
        if (sme.status)
            nt_links_fail(lp, "fail", sme.err);
        if (sthem.status)
            nt_links_fail(lp, "fail", sthem.err);
        return NT_OK;
    }
    if (initiator && !gpu)
        nt_links_describe(s, lp, pt, peer, c, nqps);
    {
        nt_rdma_bench_t b = {c, NULL, initiator, 0, p, peer_rank};
        lst = nt_measure(p, &b, lp, 0, gpu);
    }
    memset(&sme, 0, sizeof(sme));
    if (lst != NT_OK) {
        sme.status = (int32_t)lst;
        snprintf(sme.err, sizeof(sme.err), "%s",
                 nt_rdma_conn_error(c)[0] ? nt_rdma_conn_error(c) : nt_status_string(lst));
    }
    st = nt_xchg(p, peer_rank, initiator, tag + 1, &sme, &sthem, sizeof(sme));
    if (sme.status)
        nt_links_fail(lp, "fail", sme.err);
    if (st == NT_OK && sthem.status)
        nt_links_fail(lp, "fail", sthem.err);
    return st;
}

static nt_status_t nt_run_rail(nt_rdma_state_t *s, nt_probe_t *p, int peer_rank, int initiator,
                               nt_scope_t scope, int r, const nt_rail_info_t *peer,
                               cJSON *out_links)
{
    const nt_rdma_port_t *pt = &s->inv.ports[s->rails[r]];
    nt_rail_info_t mine;
    nt_link_pair_t lp = {NULL, NULL};
    nt_rdma_conn_params_t cp;
    nt_rdma_conn_t *c = NULL;
    nt_rdma_ep_info_t me, them;
    nt_numa_saved_t saved = {0};
    char err[512] = "", sep[96], dep[96], nwhy[160];
    int pnode, plr;
    nt_status_t st = NT_OK, lst;

    nt_probe_locate(p, peer_rank, &pnode, &plr);
    nt_rail_fill(s, r, &mine);
    nt_port_ep(mine.dev, mine.port, NULL, sep, sizeof(sep));
    nt_port_ep(peer->dev, peer->port, NULL, dep, sizeof(dep));
    if (initiator) {
        nt_links_new(p, &lp, scope, peer_rank, pnode >= 0 ? p->nodes[pnode].host : "?", sep, dep);
        nt_links_describe(s, &lp, pt, peer, NULL, p->params->rdma_qps);
        if (lp.write)
            nt_link_expect(s, lp.write, &mine, peer, s->pcie_text[r]);
    }
    /* A port that is not ACTIVE fails its links without traffic (both ends know both states). */
    if (mine.state_num != 4 || peer->state_num != 4) {
        char msg[400];
        const nt_rail_info_t *bad = mine.state_num != 4 ? &mine : peer;
        snprintf(msg, sizeof(msg), "port %s:%d on %s is %s (physical state %s): not ACTIVE",
                 bad->dev, bad->port,
                 bad == &mine ? s->host : (pnode >= 0 ? p->nodes[pnode].host : "?"), bad->state,
                 bad->phys_state[0] ? bad->phys_state : "unknown");
        nt_links_fail(&lp, "fail", msg);
        nt_links_emit(&lp, out_links);
        return NT_OK;
    }
    nt_numa_bind_cpus(pt->numa_node, &saved, nwhy, sizeof(nwhy));
    memset(&cp, 0, sizeof(cp));
    cp.port = pt;
    cp.nqps = p->params->rdma_qps > 0 ? p->params->rdma_qps : 1;
    cp.max_bytes = p->params->rdma_max_bytes ? p->params->rdma_max_bytes : (8u << 20);
    cp.gid_index = pt->gid_index;
    cp.traffic_class = s->tc;
    cp.service_level = s->sl;
    cp.timeout_s = nt_timeout(p);
    cp.numa_node = pt->numa_node;
    cp.gpu = -1;
    lst = nt_rdma_conn_create(&cp, &c, err, sizeof(err));
    memset(&me, 0, sizeof(me));
    if (lst == NT_OK) {
        nt_rdma_conn_info(c, &me);
    } else {
        me.magic = NT_RDMA_INFO_MAGIC;
        me.status = (int32_t)lst;
        snprintf(me.err, sizeof(me.err), "%s", err);
    }
    st = nt_xchg(p, peer_rank, initiator, NT_TAG_RDMA + 2, &me, &them, sizeof(me));
    if (st != NT_OK)
        goto out;
    if (me.status || them.status) {
        if (me.status)
            nt_links_fail(&lp, "fail", me.err);
        if (them.status)
            nt_links_fail(&lp, "fail", them.err);
        goto out;
    }
    st = nt_rail_connect_measure(s, p, peer_rank, initiator, c, &them, &lp, 0, NT_TAG_RDMA + 3, pt,
                                 peer, cp.nqps);
out:
    return nt_rail_end(&lp, st, peer_rank, "RDMA test", &saved, c, out_links);
}

/* The GPU-memory variant of a rail: RDMA WRITE bandwidth from the memory of the GPU nearest
 * this NIC into the memory of the GPU nearest the peer's. Both ends know from the rails message
 * whether the other has a GPU (nothing is exchanged, and no link made, when neither has); then
 * each allocates and registers GPU memory and they exchange the outcome (nt_gpu_msg_t) and
 * decide together (nt_gpu_link_decide): a missing GPU or GPUDirect RDMA skips the link, never
 * fails it. Bandwidth only: the latency tests poll the buffer with the CPU. */
static nt_status_t nt_run_gpu_rail(nt_rdma_state_t *s, nt_probe_t *p, int peer_rank, int initiator,
                                   nt_scope_t scope, int r, const nt_rail_info_t *peer,
                                   cJSON *out_links)
{
    const nt_rdma_port_t *pt = &s->inv.ports[s->rails[r]];
    nt_rail_info_t mine;
    nt_link_pair_t lp = {NULL, NULL};
    nt_rdma_conn_params_t cp;
    nt_rdma_conn_t *c = NULL;
    nt_gpu_msg_t mmsg, tmsg, *me = &mmsg, *them = &tmsg; /* ~1.2 KiB each */
    nt_numa_saved_t saved = {0};
    char mep[96], pep[96], sep[112], dep[112], why[700] = "", nwhy[160];
    const char *phost;
    int pnode, plr;
    nt_gpu_end_t a, b;
    nt_gpu_link_t d;
    nt_status_t st = NT_OK;

    nt_probe_locate(p, peer_rank, &pnode, &plr);
    phost = pnode >= 0 ? p->nodes[pnode].host : "?";
    nt_rail_fill(s, r, &mine);
    nt_port_ep(mine.dev, mine.port, NULL, mep, sizeof(mep));
    nt_port_ep(peer->dev, peer->port, NULL, pep, sizeof(pep));
    a = (nt_gpu_end_t){s->host, mep, mine.gpu, mine.state_num == 4, NT_GPU_REG_UNTRIED, NULL};
    b = (nt_gpu_end_t){phost, pep, peer->gpu, peer->state_num == 4, NT_GPU_REG_UNTRIED, NULL};
    d = nt_gpu_link_decide(&a, &b, why, sizeof(why));
    if (d == NT_GPU_LINK_NONE)
        return NT_OK; /* neither node has a GPU: nothing changes */
    if (initiator) {
        nt_rdma_gpu_ep(mine.dev, mine.port, mine.gpu, sep, sizeof(sep));
        nt_rdma_gpu_ep(peer->dev, peer->port, peer->gpu, dep, sizeof(dep));
        lp.write =
            nt_probe_link_new("rdma", "write", scope, s->host, p->rank, sep, phost, peer_rank, dep);
        nt_links_describe(s, &lp, pt, peer, NULL,
                          p->params->rdma_qps > 0 ? p->params->rdma_qps : 1);
        if (lp.write) {
            nt_json_add_str(lp.write, "memory", "gpu");
            nt_json_add_str(lp.write, "latency", NT_RDMA_GPU_LAT_NOTE);
            nt_link_expect(s, lp.write, &mine, peer, s->pcie_text[r]);
        }
    }
    if (d == NT_GPU_LINK_SKIP) {
        nt_links_fail(&lp, "skipped", why);
        nt_links_emit(&lp, out_links);
        return NT_OK;
    }
    memset(me, 0, sizeof(*me));
    memset(them, 0, sizeof(*them));
    nt_numa_bind_cpus(pt->numa_node, &saved, nwhy, sizeof(nwhy));
    memset(&cp, 0, sizeof(cp));
    cp.port = pt;
    cp.nqps = p->params->rdma_qps > 0 ? p->params->rdma_qps : 1;
    cp.max_bytes = p->params->rdma_max_bytes ? p->params->rdma_max_bytes : (8u << 20);
    cp.gid_index = pt->gid_index;
    cp.traffic_class = s->tc;
    cp.service_level = s->sl;
    cp.timeout_s = nt_timeout(p);
    cp.numa_node = -1;
    cp.gpu = nt_gtopo(s, p)->gpus[s->gpu_t[r]].index;
    cp.gpu_bus_id = nt_gtopo(s, p)->gpus[s->gpu_t[r]].pci_bus_id;
    if (nt_rdma_conn_create(&cp, &c, me->why, sizeof(me->why)) == NT_OK) {
        me->reg = NT_GPU_REG_OK;
        snprintf(me->path, sizeof(me->path), "%s",
                 nt_rdma_gpu_reg_path(nt_rdma_conn_memory(c))
                     ? nt_rdma_gpu_reg_path(nt_rdma_conn_memory(c))
                     : "?");
        nt_rdma_conn_info(c, &me->ep);
    } else {
        me->reg = NT_GPU_REG_FAILED;
    }
    st = nt_xchg(p, peer_rank, initiator, NT_TAG_RDMA + 5, me, them, sizeof(*me));
    if (st != NT_OK)
        goto out;
    them->why[sizeof(them->why) - 1] = '\0';
    them->path[sizeof(them->path) - 1] = '\0';
    a.reg = (nt_gpu_reg_t)me->reg;
    a.why = me->why;
    b.reg = them->reg == NT_GPU_REG_OK ? NT_GPU_REG_OK : NT_GPU_REG_FAILED;
    b.why = them->why;
    d = nt_gpu_link_decide(&a, &b, why, sizeof(why));
    if (d != NT_GPU_LINK_MEASURE) {
        nt_links_fail(&lp, "skipped", why);
        goto out;
    }
    if (lp.write) {
        cJSON *reg = nt_json_add_obj(lp.write, "gpu_registration");
        if (reg) {
            nt_json_add_str(reg, "src", me->path);
            nt_json_add_str(reg, "dst", them->path);
        }
        nt_json_add_str(lp.write, "numa_binding", nt_rdma_conn_numa(c));
    }
    st = nt_rail_connect_measure(s, p, peer_rank, initiator, c, &them->ep, &lp, 1, NT_TAG_RDMA + 6,
                                 pt, peer, cp.nqps);
out:
    return nt_rail_end(&lp, st, peer_rank, "GPU-memory RDMA test", &saved, c, out_links);
}

static nt_status_t nt_rdma_run_pair(void *state, nt_probe_t *p, int peer_rank, int initiator,
                                    nt_scope_t scope, cJSON *out_links)
{
    nt_rdma_state_t *s = state;
    nt_rails_msg_t *mine = calloc(1, sizeof(*mine)), *theirs = calloc(1, sizeof(*theirs));
    int idx[NT_RDMA_MAX_RAILS],
        n = 0, local = p->local_rank,
        nloc = p->nodes[p->my_node].nranks > 0 ? p->nodes[p->my_node].nranks : 1;
    nt_status_t st;

    if (!mine || !theirs) {
        free(mine);
        free(theirs);
        return NT_ERR_NOMEM;
    }
    /* Rails of this rank: NIC i goes to local rank i mod ranks-per-node, so that the ranks of
     * a node pair split the rails and local rank i meets local rank i. */
    for (int r = 0; r < s->nrails; r++)
        if (r % nloc == local % nloc)
            idx[n++] = r;
    mine->n = n;
    for (int k = 0; k < n; k++)
        nt_rail_fill(s, idx[k], &mine->r[k]);
    st = nt_xchg(p, peer_rank, initiator, NT_TAG_RDMA, mine, theirs, sizeof(*mine));
    for (int k = 0; st == NT_OK && k < n && k < theirs->n; k++) {
        st = nt_run_rail(s, p, peer_rank, initiator, scope, idx[k], &theirs->r[k], out_links);
        if (st == NT_OK)
            st = nt_run_gpu_rail(s, p, peer_rank, initiator, scope, idx[k], &theirs->r[k],
                                 out_links);
    }
    if (st == NT_OK && initiator && n != theirs->n) {
        /* Rails without a partner: a rail missing on one node is a finding. */
        for (int k = (n < theirs->n ? n : theirs->n); k < (n > theirs->n ? n : theirs->n); k++) {
            int pnode, plr;
            char sep[96], dep[96], msg[200];
            nt_link_pair_t lp;
            nt_probe_locate(p, peer_rank, &pnode, &plr);
            if (k < n)
                nt_port_ep(mine->r[k].dev, mine->r[k].port, NULL, sep, sizeof(sep));
            else
                snprintf(sep, sizeof(sep), "rail%d", k);
            if (k < theirs->n)
                nt_port_ep(theirs->r[k].dev, theirs->r[k].port, NULL, dep, sizeof(dep));
            else
                snprintf(dep, sizeof(dep), "rail%d", k);
            nt_links_new(p, &lp, scope, peer_rank, pnode >= 0 ? p->nodes[pnode].host : "?", sep,
                         dep);
            snprintf(msg, sizeof(msg), "rail %d exists on one node only (%d vs %d selected ports)",
                     k, n, theirs->n);
            nt_links_fail(&lp, "fail", msg);
            nt_links_emit(&lp, out_links);
        }
    }
    free(mine);
    free(theirs);
    return st;
}

/* ---------------------------------------------------------------- loopback */

static void nt_loop_one(nt_rdma_state_t *s, nt_probe_t *p, int ra, int rb, cJSON *out_links)
{
    const nt_rdma_port_t *a = &s->inv.ports[s->rails[ra]], *b = &s->inv.ports[s->rails[rb]];
    nt_rail_info_t ia, ib;
    nt_link_pair_t lp;
    nt_rdma_conn_params_t cp;
    nt_rdma_conn_t *ca = NULL, *cb = NULL;
    nt_rdma_ep_info_t ea, eb;
    nt_numa_saved_t saved = {0};
    char err[512] = "", sep[96], dep[96], nwhy[160];
    const char *host = s->host;
    int cross = ra != rb;

    nt_rail_fill(s, ra, &ia);
    nt_rail_fill(s, rb, &ib);
    nt_port_ep(a->dev, a->port, NULL, sep, sizeof(sep));
    nt_port_ep(b->dev, b->port, NULL, dep, sizeof(dep));
    nt_links_new(p, &lp, NT_SCOPE_INTRA, p->rank, host, sep, dep);
    nt_links_describe(s, &lp, a, &ib, NULL, 1);
    if (lp.write) {
        nt_json_add_str(lp.write, "test", cross ? "nic-to-nic" : "loopback");
        nt_link_expect(s, lp.write, &ia, &ib, s->pcie_text[ra]);
    }
    if (ia.state_num != 4 || ib.state_num != 4) {
        char msg[400];
        const nt_rail_info_t *bad = ia.state_num != 4 ? &ia : &ib;
        snprintf(msg, sizeof(msg), "port %s:%d on %s is %s (physical state %s): not ACTIVE",
                 bad->dev, bad->port, host, bad->state, bad->phys_state);
        nt_links_fail(&lp, "fail", msg);
        nt_links_emit(&lp, out_links);
        return;
    }
    nt_numa_bind_cpus(a->numa_node, &saved, nwhy, sizeof(nwhy));
    memset(&cp, 0, sizeof(cp));
    cp.nqps = p->params->rdma_qps > 0 ? p->params->rdma_qps : 1;
    cp.max_bytes = p->params->rdma_max_bytes ? p->params->rdma_max_bytes : (8u << 20);
    cp.traffic_class = s->tc;
    cp.service_level = s->sl;
    cp.timeout_s = cross ? 2.0 : nt_timeout(p);
    cp.gpu = -1;
    cp.port = a;
    cp.gid_index = a->gid_index;
    cp.numa_node = a->numa_node;
    if (nt_rdma_conn_create(&cp, &ca, err, sizeof(err)) != NT_OK) {
        nt_links_fail(&lp, "fail", err);
        goto out;
    }
    cp.port = b;
    cp.gid_index = b->gid_index;
    cp.numa_node = b->numa_node;
    if (nt_rdma_conn_create(&cp, &cb, err, sizeof(err)) != NT_OK) {
        nt_links_fail(&lp, "fail", err);
        goto out;
    }
    nt_rdma_conn_info(ca, &ea);
    nt_rdma_conn_info(cb, &eb);
    if (nt_rdma_conn_connect(ca, &eb) != NT_OK || nt_rdma_conn_connect(cb, &ea) != NT_OK) {
        const char *e = nt_rdma_conn_error(ca)[0] ? nt_rdma_conn_error(ca) : nt_rdma_conn_error(cb);
        if (cross) {
            char msg[700];
            snprintf(msg, sizeof(msg),
                     "not testable: %s and %s cannot reach each other inside %s (%s); this is "
                     "not a failed link",
                     sep, dep, host, e);
            nt_links_fail(&lp, "skipped", msg);
        } else {
            nt_links_fail(&lp, "fail", e);
        }
        goto out;
    }
    nt_links_describe(s, &lp, a, &ib, ca, cp.nqps);
    if (cross) {
        /* Two NICs of one host may have no path between them (separate fabrics, or two
         * soft-RoCE devices whose traffic loops through lo): one round trip decides. */
        double t;
        if (nt_rdma_write_lat(ca, cb, 1, 8, 1, &t) != NT_OK) {
            char msg[700];
            snprintf(msg, sizeof(msg),
                     "not testable: %s and %s cannot reach each other inside %s (%s); this is "
                     "not a failed link",
                     sep, dep, host,
                     nt_rdma_conn_error(ca)[0] ? nt_rdma_conn_error(ca) : nt_rdma_conn_error(cb));
            nt_links_fail(&lp, "skipped", msg);
            goto out;
        }
    }
    {
        nt_rdma_bench_t bb = {ca, cb, 1, 0, p, p->rank};
        if (nt_measure(p, &bb, &lp, 1, 0) != NT_OK)
            nt_links_fail(&lp, "fail",
                          nt_rdma_conn_error(ca)[0] ? nt_rdma_conn_error(ca)
                                                    : nt_rdma_conn_error(cb));
    }
out:
    nt_numa_unbind(&saved);
    nt_rdma_conn_destroy(cb);
    nt_rdma_conn_destroy(ca);
    nt_links_emit(&lp, out_links);
}

static nt_status_t nt_rdma_run_local(void *state, nt_probe_t *p, cJSON *out_links,
                                     cJSON *out_checks)
{
    nt_rdma_state_t *s = state;
    int nloc = p->nodes[p->my_node].nranks > 0 ? p->nodes[p->my_node].nranks : 1;
    (void)out_checks;
    if (!p->params->rdma_loopback)
        return NT_OK;
    for (int r = 0; r < s->nrails; r++) {
        if (*p->stop)
            return NT_ERR_INTERRUPTED;
        if (r % nloc == p->local_rank % nloc)
            nt_loop_one(s, p, r, r, out_links);
    }
    /* NIC against NIC: by local rank 0 only, every pair once. */
    if (p->local_rank == 0)
        for (int a = 0; a < s->nrails; a++)
            for (int b = a + 1; b < s->nrails; b++) {
                if (*p->stop)
                    return NT_ERR_INTERRUPTED;
                nt_loop_one(s, p, a, b, out_links);
            }
    return NT_OK;
}

/* ---------------------------------------------------------------- finish */

static nt_status_t nt_rdma_finish(void *state, nt_probe_t *p, cJSON *node_json, cJSON *checks)
{
    nt_rdma_state_t *s = state;
    cJSON *nics;
    (void)p;
    if (!node_json)
        return NT_OK;
    nics = cJSON_GetObjectItemCaseSensitive(node_json, "nics");
    for (int i = 0; i < s->inv.nports; i++) {
        nt_rdma_port_t *pt = &s->inv.ports[i];
        char target[96], grew[400] = "", sat[400] = "", rtx[400] = "";
        cJSON *nic = NULL, *it, *c;
        if (!pt->selected)
            continue;
        nt_rdma_counters_read(pt, 1);
        cJSON_ArrayForEach (it, nics) {
            if (strcmp(nt_json_get_str(it, "name", ""), pt->dev) == 0 &&
                (int)nt_json_get_num(it, "port", -1) == pt->port)
                nic = it;
        }
        if (nic) {
            cJSON_DeleteItemFromObjectCaseSensitive(nic, "counters");
            nt_rdma_counters_to_json(pt, nic);
        }
        for (int k = 0; k < pt->ncounters; k++) {
            nt_counter_t *ct = &pt->counters[k];
            unsigned long long d;
            nt_counter_change_t ch;
            if (!ct->is_error || !ct->have_before || !ct->have_after)
                continue;
            ch = nt_counter_delta(ct->before, ct->after, ct->width_bits, &d);
            if (ch == NT_COUNTER_GREW && ct->is_error == NT_COUNTER_RETRANS)
                snprintf(rtx + strlen(rtx), sizeof(rtx) - strlen(rtx), "%s%s +%llu",
                         rtx[0] ? ", " : "", ct->name, d);
            else if (ch == NT_COUNTER_GREW)
                snprintf(grew + strlen(grew), sizeof(grew) - strlen(grew), "%s%s +%llu",
                         grew[0] ? ", " : "", ct->name, d);
            else if (ch == NT_COUNTER_SATURATED)
                snprintf(sat + strlen(sat), sizeof(sat) - strlen(sat), "%s%s at %llu (%u-bit)",
                         sat[0] ? ", " : "", ct->name, ct->after, ct->width_bits);
        }
        if (!checks)
            continue;
        nt_port_ep(pt->dev, pt->port, NULL, target, sizeof(target));
        if (grew[0])
            c = nt_check_create_str("error_counters", s->host, target, NT_FAIL, grew, "no growth",
                                    "%s error counters grew during the run: %s", target, grew);
        else if (rtx[0])
            c = nt_check_create_str("error_counters", s->host, target, NT_WARN, rtx, "no growth",
                                    "%s retransmitted during the run (recovered loss: congestion, "
                                    "drops or a flapping link): %s",
                                    target, rtx);
        else if (sat[0])
            c = nt_check_create_str("error_counters", s->host, target, NT_WARN, sat, "no growth",
                                    "%s error counters are saturated, so growth cannot be seen: "
                                    "%s (clear them: perfquery -x -R)",
                                    target, sat);
        else
            c = nt_check_create_str("error_counters", s->host, target, NT_PASS, "no growth",
                                    "no growth", "%s error counters did not grow", target);
        /* three rows of one check: errors, retransmits, saturated counters */
        nt_judge_code_add(c, grew[0] ? "NT-RDMA-003" : rtx[0] ? "NT-RDMA-004"
                                     : sat[0]           ? "NT-RDMA-005"
                                                        : "NT-RDMA-003");
        if (c)
            cJSON_AddItemToArray(checks, c);
    }
    return NT_OK;
}

static void nt_rdma_cleanup(void *state)
{
    nt_rdma_state_t *s = state;
    if (!s)
        return;
    nt_rdma_inventory_free(&s->inv);
    nt_topo_destroy(s->test_topo);
    free(s);
}

const nt_link_probe_ops_t nt_rdma_probe_ops = {
    .kind = "rdma",
    .what = "RDMA write/send between NIC ports (libibverbs)",
    .live_hw = 1,
    .init = nt_rdma_init,
    .run_pair = nt_rdma_run_pair,
    .run_local = nt_rdma_run_local,
    .finish = nt_rdma_finish,
    .cleanup = nt_rdma_cleanup,
};
