/* The fabric phases over RDMA (fabric.h "fabric_rdma.c"): the transport choice, the QP
 * exchange of a round and its RDMA WRITE flows. The QPs, their memory and their connection
 * are the RDMA probe's (probes/rdma/verbs_path.c: nt_rdma_conn_create, nt_rdma_conn_connect,
 * and the non-blocking nt_rdma_stream_* made for this file); the ports and GIDs are chosen as
 * the RDMA probe chooses them (probes/rdma/inventory.c: NCCL_IB_HCA, NCCL's GID index). */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "nettune/clock.h"
#include "nettune/log.h"
#include "nettune/sysfs.h"
#include "rdma/ibv.h"

/* Failed flows a round names in the log; the rest are counted. */
#define NT_FAB_RDMA_LOG_MAX 8

/* One end of a flow of the current round on this node. */
typedef struct nt_fab_rflow {
    nt_rdma_conn_t *c;
    uint32_t flow;
    size_t bytes;
    int sender, peer, rail;
    int state; /* 0 set up, 1 connected, 2 running, 3 done, -1 failed */
} nt_fab_rflow_t;

struct nt_fab_rdma {
    int nnodes, nrails;
    nt_rdma_inv_t inv;                      /* this node's ports (leaders) */
    const nt_rdma_port_t *port[NT_FAB_MAX_RAILS]; /* the port of each rail (leaders) */
    nt_fab_rdma_rail_t *facts;              /* [node * nrails + rail], the same on every rank */
    nt_fab_rflow_t *fl;                     /* this round's ends (kept until the next round) */
    size_t nfl;
    int *touch;                             /* [nnodes] scratch: ends per node in a round */
    int tc, sl;
    double wait_s; /* a data-path wait without progress, as the RDMA probe's (2 to 10 s) */
    int logged;
    int mute; /* NETTUNE_TEST_FABRIC_MUTE names this node: its QPs are never connected */
};

/* ---------------------------------------------------------------- pure parts */

void nt_fab_rdma_rail_check(const nt_rdma_inv_t *inv, const char *no_dev_why, const char *ifname,
                            const char *if_bdf, int if_port, nt_fab_rdma_rail_t *out)
{
    const nt_rdma_port_t *pt = NULL;
    const nt_gid_entry_t *g;
    static const uint8_t zero[16];

    memset(out, 0, sizeof(*out));
    snprintf(out->ifname, sizeof(out->ifname), "%s", ifname);
    if (!inv || inv->nports == 0) {
        snprintf(out->why, sizeof(out->why), "%s",
                 no_dev_why && no_dev_why[0] ? no_dev_why : "no RDMA device");
        return;
    }
    for (int i = 0; i < inv->nports && !pt; i++)
        if (inv->ports[i].netdev[0] && strcmp(inv->ports[i].netdev, ifname) == 0)
            pt = &inv->ports[i];
    for (int i = 0; i < inv->nports && !pt && if_bdf && if_bdf[0]; i++)
        if (strcmp(inv->ports[i].pci_bus_id, if_bdf) == 0 &&
            (if_port <= 0 || inv->ports[i].port == if_port))
            pt = &inv->ports[i];
    if (!pt) {
        snprintf(out->why, sizeof(out->why),
                 "no RDMA port carries %s (none has it as its network device or shares its PCI "
                 "function)",
                 ifname);
        return;
    }
    snprintf(out->dev, sizeof(out->dev), "%s", pt->dev);
    out->port = pt->port;
    out->gid_index = pt->gid_index;
    out->is_ethernet = pt->is_ethernet;
    if (!pt->selected)
        snprintf(out->why, sizeof(out->why), "%s:%d, the RDMA port of %s, is not used: %.120s",
                 pt->dev, pt->port, ifname, pt->select_why);
    else if (pt->state_num != 4)
        snprintf(out->why, sizeof(out->why),
                 "%s:%d, the RDMA port of %s, is %s (physical state %s): not ACTIVE", pt->dev,
                 pt->port, ifname, pt->state[0] ? pt->state : "in an unknown state",
                 pt->phys_state[0] ? pt->phys_state : "unknown");
    else if (pt->is_ethernet && (!(g = nt_gid_find(pt->gids, pt->ngids, pt->gid_index)) ||
                                 memcmp(g->raw, zero, 16) == 0))
        snprintf(out->why, sizeof(out->why),
                 "%s:%d, the RDMA port of %s, has no GID at index %d: RoCE needs one (an IP "
                 "address on %s; check --gid-index / NCCL_IB_GID_INDEX)",
                 pt->dev, pt->port, ifname, pt->gid_index, ifname);
    else
        out->ok = 1;
}

int nt_fab_transport_choose(const nt_fab_rdma_rail_t *facts, int nnodes, int nrails,
                            const char *const *hosts, char *why, size_t whylen)
{
    int first = -1, bad_nodes = 0;
    size_t o;

    if (nnodes < 1 || nrails < 1) {
        snprintf(why, whylen, "no rails: the probe's own TCP sockets");
        return 0;
    }
    for (int n = 0; n < nnodes; n++) {
        int bad = 0;
        for (int r = 0; r < nrails; r++)
            if (!facts[n * nrails + r].ok) {
                if (first < 0)
                    first = n * nrails + r;
                bad = 1;
            }
        bad_nodes += bad;
    }
    if (first >= 0) {
        const nt_fab_rdma_rail_t *f = &facts[first];
        snprintf(why, whylen,
                 "no RDMA path on %s, rail %d (%s): %s; %d of %d nodes lack one: the probe's own "
                 "TCP sockets, one per flow, bound to the rail's interface",
                 hosts[first / nrails], first % nrails, f->ifname, f->why, bad_nodes, nnodes);
        return 0;
    }
    o = (size_t)snprintf(why, whylen, "every rail of the %d nodes has an ACTIVE RDMA port (%s:",
                         nnodes, hosts[0]);
    for (int r = 0; r < nrails && o < whylen; r++)
        o += (size_t)snprintf(why + o, whylen - o, "%s %s %s:%d GID index %d", r ? "," : "",
                              facts[r].ifname, facts[r].dev, facts[r].port, facts[r].gid_index);
    if (o < whylen)
        snprintf(why + o, whylen - o, "): one RC QP per flow, RDMA WRITE");
    return 1;
}

static void nt_put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t nt_get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

void nt_fab_qp_pack(uint32_t flow, int32_t status, int end, const nt_rdma_ep_info_t *ep,
                    uint8_t out[NT_FAB_QP_MSG_BYTES])
{
    memset(out, 0, NT_FAB_QP_MSG_BYTES);
    nt_put32(out + 0, NT_FAB_QP_MAGIC);
    nt_put32(out + 4, flow);
    nt_put32(out + 8, (uint32_t)status);
    nt_put32(out + 12, ep->qpn[0]);
    nt_put32(out + 16, ep->psn);
    nt_put32(out + 20, ep->rkey);
    nt_put32(out + 24, (uint32_t)ep->addr);
    nt_put32(out + 28, (uint32_t)(ep->addr >> 32));
    nt_put32(out + 32, ep->lid);
    nt_put32(out + 36, (uint32_t)ep->gid_index);
    nt_put32(out + 40, (uint32_t)ep->mtu);
    nt_put32(out + 44, (uint32_t)ep->port);
    memcpy(out + 48, ep->gid, 16);
    nt_put32(out + 64, (uint32_t)end);
}

nt_status_t nt_fab_qp_unpack(const uint8_t in[NT_FAB_QP_MSG_BYTES], uint32_t *flow,
                             int32_t *status, int *end, nt_rdma_ep_info_t *ep)
{
    uint32_t magic = nt_get32(in), e = nt_get32(in + 64);
    int empty = 1;

    for (int i = 0; i < NT_FAB_QP_MSG_BYTES && empty; i++)
        empty = in[i] == 0;
    if (empty)
        return NT_ERR_NOT_FOUND;
    if (magic != NT_FAB_QP_MAGIC || (e != 1 && e != 2))
        return NT_ERR_PARSE;
    memset(ep, 0, sizeof(*ep));
    *flow = nt_get32(in + 4);
    *status = (int32_t)nt_get32(in + 8);
    *end = (int)e;
    ep->magic = NT_RDMA_INFO_MAGIC;
    ep->status = *status;
    ep->nqps = 1;
    ep->qpn[0] = nt_get32(in + 12);
    ep->psn = nt_get32(in + 16);
    ep->rkey = nt_get32(in + 20);
    ep->addr = (uint64_t)nt_get32(in + 24) | (uint64_t)nt_get32(in + 28) << 32;
    ep->lid = nt_get32(in + 32);
    ep->gid_index = (int32_t)nt_get32(in + 36);
    ep->mtu = (int32_t)nt_get32(in + 40);
    ep->port = (int32_t)nt_get32(in + 44);
    memcpy(ep->gid, in + 48, 16);
    return NT_OK;
}

/* ---------------------------------------------------------------- this node's ports */

/* The facts of this leader's rails: the inventory (sysfs), /dev/infiniband, libibverbs, what
 * verbs add (active MTU), NCCL_IB_HCA and the GID choice, then the port of each interface. */
static void nt_fab_rdma_local(nt_fab_rdma_t *r, nt_probe_t *p, const char (*ifnames)[16],
                              int nrails, nt_fab_rdma_rail_t *facts)
{
    char why[256] = "";
    int have = 0;
    nt_status_t st;

    if (nt_sysfs_root()[0]) {
        snprintf(why, sizeof(why),
                 "NETTUNE_SYSFS_ROOT=%.120s is a captured tree: no live RDMA device",
                 nt_sysfs_root());
    } else if ((st = nt_rdma_inventory_read(&r->inv, why, sizeof(why))) == NT_OK &&
               (st = nt_rdma_dev_check(&r->inv, why, sizeof(why))) == NT_OK &&
               (st = nt_ibv_load(why, sizeof(why))) == NT_OK) {
        nt_hca_filter_t filter;
        nt_gid_pref_t pref;
        nt_rdma_port_query(&r->inv);
        nt_hca_filter_parse(getenv("NCCL_IB_HCA"), &filter);
        nt_gid_pref_from_env(&pref);
        nt_rdma_port_select(&r->inv, &filter, &pref, p->params->gid_index);
        have = 1;
    }
    for (int k = 0; k < nrails; k++) {
        char path[128], bdf[64] = "";
        long long dev_port = -1;
        snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifnames[k]);
        if (nt_sysfs_readlink_base(path, bdf, sizeof(bdf)) != NT_OK)
            bdf[0] = '\0';
        snprintf(path, sizeof(path), "/sys/class/net/%s/dev_port", ifnames[k]);
        if (nt_sysfs_read_long(path, &dev_port) != NT_OK)
            dev_port = -1;
        nt_fab_rdma_rail_check(have ? &r->inv : NULL, why, ifnames[k], bdf, (int)dev_port + 1,
                               &facts[k]);
        for (int i = 0; have && i < r->inv.nports; i++)
            if (strcmp(r->inv.ports[i].dev, facts[k].dev) == 0 &&
                r->inv.ports[i].port == facts[k].port)
                r->port[k] = &r->inv.ports[i];
    }
}

static int nt_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* The ends of the last round: their QPs and memory. */
static void nt_fab_rdma_release(nt_fab_rdma_t *r)
{
    for (size_t i = 0; i < r->nfl; i++)
        nt_rdma_conn_destroy(r->fl[i].c);
    free(r->fl);
    r->fl = NULL;
    r->nfl = 0;
}

void nt_fab_rdma_close(nt_fab_rdma_t *r, nt_probe_t *p, int sync)
{
    if (!r)
        return;
    if (sync)
        (void)p->launcher->ops->barrier(p->launcher, p->params->peer_timeout_s);
    nt_fab_rdma_release(r);
    nt_rdma_inventory_free(&r->inv);
    free(r->facts);
    free(r->touch);
    free(r);
}

nt_status_t nt_fab_rdma_open(nt_probe_t *p, int leader, const char (*ifnames)[16], int nrails,
                             nt_fab_rdma_t **out, char *why, size_t whylen)
{
    nt_fab_rdma_t *r = calloc(1, sizeof(*r));
    nt_fab_rdma_rail_t *mine = calloc((size_t)nrails, sizeof(*mine)), *all = NULL;
    const char **hosts = calloc((size_t)p->nnodes, sizeof(*hosts));
    nt_status_t st = NT_OK;
    int rdma = 0;

    *out = NULL;
    if (!r || !mine || !hosts || nrails < 1 ||
        !(all = calloc((size_t)p->size * (size_t)nrails, sizeof(*all))) ||
        !(r->facts = calloc((size_t)p->nnodes * (size_t)nrails, sizeof(*r->facts))) ||
        !(r->touch = calloc((size_t)p->nnodes, sizeof(*r->touch)))) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    r->nnodes = p->nnodes;
    r->nrails = nrails;
    if (leader)
        nt_fab_rdma_local(r, p, ifnames, nrails, mine);
    if (p->launcher->ops->allgather(p->launcher, mine, all, (size_t)nrails * sizeof(*mine),
                                    p->params->peer_timeout_s) != NT_OK) {
        st = NT_ERR_PEER;
        goto out;
    }
    for (int n = 0; n < p->nnodes; n++) {
        memcpy(&r->facts[n * nrails], &all[(size_t)p->nodes[n].ranks[0] * (size_t)nrails],
               (size_t)nrails * sizeof(*mine));
        hosts[n] = p->nodes[n].host;
    }
    rdma = nt_fab_transport_choose(r->facts, p->nnodes, nrails, hosts, why, whylen);
    if (rdma) {
        /* Tests only, as for the sockets (fabric.c): this node answers the launcher and
         * sends its QP records, but never connects them, as a host whose NIC stopped
         * answering: its peers' writes go unanswered (retry exceeded), their receives wait
         * until the round's cap. */
        const char *mute = getenv("NETTUNE_TEST_FABRIC_MUTE");
        r->mute = leader && mute && atoi(mute) == p->my_node;
        double t = p->params->peer_timeout_s / 3.0;
        r->wait_s = t < 2.0 ? 2.0 : t > 10.0 ? 10.0 : t;
        r->tc = nt_env_int("NCCL_IB_TC", -1);
        r->sl = nt_env_int("NCCL_IB_SL", -1);
        NT_INFO(SCHED, "fabric: RDMA: %s", why);
    } else {
        NT_INFO(SCHED, "fabric: sockets: %s", why);
    }
out:
    free(mine);
    free(all);
    free(hosts);
    if (st != NT_OK || !rdma) {
        nt_fab_rdma_close(r, p, 0);
        r = NULL;
    }
    *out = r;
    return st;
}

/* ---------------------------------------------------------------- a round */

/* Names a failed end in the log (the first few of a round). */
static void nt_fab_rdma_fail(nt_fab_rdma_t *r, nt_probe_t *p, nt_fab_rflow_t *f, const char *why)
{
    f->state = -1;
    if (r->logged++ < NT_FAB_RDMA_LOG_MAX)
        NT_WARN(SCHED, "fabric flow %u (%s %s %s, rail %d) over RDMA failed: %s", f->flow,
                p->nodes[p->my_node].host, f->sender ? "->" : "<-", p->nodes[f->peer].host,
                f->rail, why);
}

/* The set-up of this node's ends of the round, packed into send (k records). */
static nt_status_t nt_fab_rdma_setup(nt_fab_rdma_t *r, nt_probe_t *p, const nt_fab_flow_t *flows,
                                     size_t first, size_t n, uint8_t *send)
{
    int me = p->my_node;

    for (size_t i = 0; i < n; i++) {
        const nt_fab_flow_t *fw = &flows[i];
        nt_fab_rflow_t *f;
        nt_rdma_conn_params_t cp;
        nt_rdma_ep_info_t ep;
        char err[512] = "";
        nt_status_t st;
        if (fw->src != me && fw->dst != me)
            continue;
        f = &r->fl[r->nfl];
        *f = (nt_fab_rflow_t){.flow = (uint32_t)(first + i), .bytes = fw->bytes,
                              .sender = fw->src == me, .peer = fw->src == me ? fw->dst : fw->src,
                              .rail = fw->rail};
        memset(&cp, 0, sizeof(cp));
        memset(&ep, 0, sizeof(ep));
        cp.port = r->port[fw->rail];
        cp.nqps = 1;
        cp.max_bytes = fw->bytes < NT_FAB_RDMA_MSG ? fw->bytes : NT_FAB_RDMA_MSG;
        cp.gid_index = r->facts[me * r->nrails + fw->rail].gid_index;
        cp.traffic_class = r->tc;
        cp.service_level = r->sl;
        cp.timeout_s = r->wait_s;
        cp.numa_node = cp.port ? cp.port->numa_node : -1;
        cp.gpu = -1;
        if (!cp.port) {
            st = NT_ERR_NOT_FOUND;
            snprintf(err, sizeof(err), "rail %d has no RDMA port on this node", fw->rail);
        } else {
            st = nt_rdma_conn_create(&cp, &f->c, err, sizeof(err));
        }
        if (st == NT_OK)
            nt_rdma_conn_info(f->c, &ep);
        else
            nt_fab_rdma_fail(r, p, f, err);
        nt_fab_qp_pack(f->flow, (int32_t)st, f->sender ? 1 : 2, &ep,
                       send + r->nfl * NT_FAB_QP_MSG_BYTES);
        r->nfl++;
    }
    return NT_OK;
}

/* Connect each of this node's ends to the peer's record of the same flow (in all, k records
 * per rank). */
static void nt_fab_rdma_connect(nt_fab_rdma_t *r, nt_probe_t *p, const uint8_t *all, size_t k)
{
    for (size_t i = 0; i < r->nfl; i++) {
        nt_fab_rflow_t *f = &r->fl[i];
        const uint8_t *rec = all + (size_t)p->nodes[f->peer].ranks[0] * k * NT_FAB_QP_MSG_BYTES;
        const nt_fab_rdma_rail_t *pf = &r->facts[f->peer * r->nrails + f->rail];
        nt_rdma_ep_info_t ep;
        int found = 0;
        char msg[600];
        if (f->state != 0)
            continue;
        if (r->mute) {
            nt_fab_rdma_fail(r, p, f, "NETTUNE_TEST_FABRIC_MUTE: this node's QPs stay "
                                      "unconnected (test hook)");
            continue;
        }
        for (size_t j = 0; j < k && !found; j++) {
            uint32_t flow;
            int32_t status;
            int end;
            if (nt_fab_qp_unpack(rec + j * NT_FAB_QP_MSG_BYTES, &flow, &status, &end, &ep) !=
                    NT_OK ||
                flow != f->flow || end != (f->sender ? 2 : 1))
                continue;
            found = 1;
            if (status != 0) {
                snprintf(msg, sizeof(msg), "%s could not set up its end (%s: see its log)",
                         p->nodes[f->peer].host, nt_status_string((nt_status_t)status));
                nt_fab_rdma_fail(r, p, f, msg);
            }
        }
        if (!found) {
            snprintf(msg, sizeof(msg), "%s sent no QP for it", p->nodes[f->peer].host);
            nt_fab_rdma_fail(r, p, f, msg);
        }
        if (f->state != 0)
            continue;
        snprintf(ep.dev, sizeof(ep.dev), "%s", pf->dev);
        if (nt_rdma_conn_connect(f->c, &ep) != NT_OK ||
            (!f->sender && nt_rdma_stream_expect(f->c) != NT_OK)) {
            nt_fab_rdma_fail(r, p, f, nt_rdma_conn_error(f->c));
            continue;
        }
        f->state = 1;
    }
}

/* Every sender at once, from t0, until each is done or failed, or the round's cap. */
static void nt_fab_rdma_transfer(nt_fab_rdma_t *r, nt_probe_t *p, double deadline)
{
    size_t active = 0;

    for (size_t i = 0; i < r->nfl; i++) {
        nt_fab_rflow_t *f = &r->fl[i];
        if (f->state != 1)
            continue;
        if (f->sender) {
            size_t m = f->bytes < NT_FAB_RDMA_MSG ? f->bytes : NT_FAB_RDMA_MSG;
            if (nt_rdma_stream_start(f->c, f->bytes, nt_rdma_window(m)) != NT_OK) {
                nt_fab_rdma_fail(r, p, f, "the transfer could not start");
                continue;
            }
        }
        f->state = 2;
        active++;
    }
    while (active > 0) {
        int moved = 0;
        for (size_t i = 0; i < r->nfl; i++) {
            nt_fab_rflow_t *f = &r->fl[i];
            int done = 0;
            if (f->state != 2)
                continue;
            if (nt_rdma_stream_progress(f->c, deadline, &done) != NT_OK) {
                nt_fab_rdma_fail(r, p, f, nt_rdma_conn_error(f->c));
                active--;
                moved = 1;
            } else if (done) {
                f->state = 3;
                active--;
                moved = 1;
            }
        }
        if (*p->stop) {
            for (size_t i = 0; i < r->nfl; i++)
                if (r->fl[i].state == 2)
                    nt_fab_rdma_fail(r, p, &r->fl[i], "stopped by a signal");
            break;
        }
        if (!moved)
            sched_yield(); /* soft-RoCE, or more ranks than cores: let the packets move */
    }
}

nt_status_t nt_fab_rdma_round(nt_fab_rdma_t *r, nt_probe_t *p, const nt_fab_flow_t *flows,
                              size_t first, size_t n, double cap_s, uint32_t *flow_ids,
                              nt_fab_result_t *res, size_t *nres)
{
    int leader = p->local_rank == 0, me = p->my_node;
    size_t k = 1, mine;
    uint8_t *send = NULL, *all = NULL;
    nt_status_t st = NT_OK;
    double t0;

    *nres = 0;
    r->logged = 0;
    /* Every rank is past the go of this round, which rank 0 sends only after every leader
     * reported the last one: no sender still uses these QPs. */
    nt_fab_rdma_release(r);
    memset(r->touch, 0, (size_t)r->nnodes * sizeof(*r->touch));
    for (size_t i = 0; i < n; i++) {
        r->touch[flows[i].src]++;
        r->touch[flows[i].dst]++;
    }
    for (int i = 0; i < r->nnodes; i++)
        if ((size_t)r->touch[i] > k)
            k = (size_t)r->touch[i];
    mine = leader ? (size_t)r->touch[me] : 0;
    if (!(r->fl = calloc(mine ? mine : 1, sizeof(*r->fl))) ||
        !(send = calloc(k, NT_FAB_QP_MSG_BYTES)) ||
        !(all = malloc((size_t)p->size * k * NT_FAB_QP_MSG_BYTES))) {
        free(send);
        return NT_ERR_NOMEM;
    }
    if (leader)
        nt_fab_rdma_setup(r, p, flows, first, n, send);
    if (p->launcher->ops->allgather(p->launcher, send, all, k * NT_FAB_QP_MSG_BYTES,
                                    p->params->peer_timeout_s) != NT_OK)
        st = NT_ERR_PEER;
    if (st == NT_OK && leader)
        nt_fab_rdma_connect(r, p, all, k);
    free(send);
    free(all);
    if (st == NT_OK &&
        p->launcher->ops->barrier(p->launcher, 2.0 * p->params->peer_timeout_s + 5.0) != NT_OK)
        st = NT_ERR_PEER;
    t0 = nt_clock_s();
    if (st == NT_OK && leader)
        nt_fab_rdma_transfer(r, p, t0 + cap_s);
    for (size_t i = 0; i < r->nfl; i++) {
        const nt_fab_rflow_t *f = &r->fl[i];
        double a = 0, b = 0;
        if (!f->sender)
            continue;
        if (f->c)
            nt_rdma_stream_times(f->c, &a, &b);
        flow_ids[*nres] = f->flow;
        res[*nres] = (nt_fab_result_t){.ok = f->state == 3,
                                       .time_s = f->state == 3 ? b - t0 : 0,
                                       .start_s = a,
                                       .end_s = f->state == 3 ? b : 0};
        (*nres)++;
    }
    if (r->logged > NT_FAB_RDMA_LOG_MAX)
        NT_WARN(SCHED, "fabric: %d more RDMA flow ends of this round failed on %s", r->logged -
                NT_FAB_RDMA_LOG_MAX, p->nodes[me].host);
    return st;
}
