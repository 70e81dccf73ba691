/* The operator files' rules: findings from the ports, topology matrices, NVLink states, kernel
 * events and NCCL XML that read_operator.c recorded. Calls only the fact store (facts.c) and the
 * knowledge base. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_int.h"
#include "nettune/ncclxml.h"
#include "nettune/nodecheck.h"

/* ---- diagnosis ------------------------------------------------------------------------------ */

#define f_detail nt_finding_detail
#define f_value nt_finding_value

static const char *nt_nth_line(const char *buf, size_t len, long n, size_t *out_len)
{
    long k = 1;
    const char *p = buf, *end = buf + len;
    while (p < end && k < n) {
        const char *q = memchr(p, '\n', (size_t)(end - p));
        if (!q)
            return NULL;
        p = q + 1;
        k++;
    }
    const char *q = memchr(p, '\n', (size_t)(end - p));
    *out_len = q ? (size_t)(q - p) : (size_t)(end - p);
    return p;
}

static nt_finding_t *nt_add(nt_doctor_t *d, const char *key, nt_severity_t sev, const char *host)
{
    nt_finding_t *f = NULL;
    int fresh = 1;
    for (size_t i = 0; i < d->nfindings; i++)
        if (strcmp(d->findings[i].kb->key, key) == 0)
            f = &d->findings[i], fresh = 0;
    if (!f)
        f = nt_finding_add(d, key);
    if (!f)
        return NULL;
    if (fresh || sev > f->severity)
        f->severity = sev;
    if (host)
        nt_map_put(&f->hosts, host, strlen(host));
    return f;
}

static int nt_is_down(const nt_opport_t *p)
{
    return p->state[0] && strcasecmp(p->state, "PORT_ACTIVE") != 0 &&
           strcasecmp(p->state, "Active") != 0;
}

static int nt_is_disabled(const nt_opport_t *p)
{
    return strcasecmp(p->phys, "DISABLED") == 0;
}

/* Ports of the same node: same host, or the same input when the host is unknown. */
static int nt_same_node(const nt_opport_t *a, const nt_opport_t *b)
{
    if (a->host || b->host)
        return nt_host_eq(a->host, b->host);
    return a->input == b->input;
}

static void nt_diagnose_ports(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nports; i++) {
        nt_opport_t *p = &o->ports[i];
        if (!nt_is_down(p))
            continue;
        int dis = nt_is_disabled(p);
        nt_finding_t *f = nt_add(d, "port_down", dis ? NT_SEV_INFO : NT_SEV_WARN, p->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &p->ev_state);
        nt_evlist_add_ev(&f->ev, &p->ev_phys);
        f_detail(f, "%s %s port %d: %s%s%s%s.", nt_host_name(p->host), p->hca, p->port, p->state,
                 p->phys[0] ? ", physical state " : "", p->phys,
                 dis ? " (disabled: administratively or by the subnet manager; info)"
                 : strcasecmp(p->phys, "POLLING") == 0
                     ? " (no link partner: cable, transceiver or switch port)"
                     : "");
    }
    /* rates and subnet managers of the ACTIVE ports of each node */
    for (size_t i = 0; i < o->nports; i++) {
        nt_opport_t *p = &o->ports[i];
        if (nt_is_down(p) || !p->state[0])
            continue;
        int first = 1;
        for (size_t j = 0; j < i; j++)
            if (nt_same_node(&o->ports[j], p) && !nt_is_down(&o->ports[j]) && o->ports[j].state[0])
                first = 0;
        if (!first)
            continue;
        double lo = -1, hi = -1;
        long sm0 = -1;
        int smdiff = 0, n = 0;
        for (size_t j = i; j < o->nports; j++) {
            nt_opport_t *q = &o->ports[j];
            if (!nt_same_node(q, p) || nt_is_down(q) || !q->state[0] ||
                strcmp(q->layer, p->layer) != 0)
                continue;
            n++;
            if (q->rate_Gbps > 0) {
                if (lo < 0 || q->rate_Gbps < lo)
                    lo = q->rate_Gbps;
                if (q->rate_Gbps > hi)
                    hi = q->rate_Gbps;
            }
            if (q->sm_lid > 0 && strcasecmp(q->layer, "Ethernet") != 0) {
                if (sm0 < 0)
                    sm0 = q->sm_lid;
                else if (q->sm_lid != sm0)
                    smdiff = 1;
            }
        }
        if (n > 1 && lo > 0 && hi > lo) {
            nt_finding_t *f = nt_add(d, "port_rate_differs", NT_SEV_WARN, p->host);
            for (size_t j = i; f && j < o->nports; j++) {
                nt_opport_t *q = &o->ports[j];
                if (nt_same_node(q, p) && !nt_is_down(q) && q->rate_Gbps > 0 &&
                    strcmp(q->layer, p->layer) == 0) {
                    nt_evlist_add_ev(&f->ev, q->ev_rate.text ? &q->ev_rate : &q->ev_state);
                    f_detail(f, "%s %s port %d: %g Gb/s.", nt_host_name(q->host), q->hca, q->port,
                             q->rate_Gbps);
                }
            }
            if (f) {
                f_value(f, "slowest_Gbps", lo);
                f_value(f, "fastest_Gbps", hi);
            }
        }
        if (smdiff) {
            nt_finding_t *f = nt_add(d, "sm_differs", NT_SEV_INFO, p->host);
            for (size_t j = i; f && j < o->nports; j++) {
                nt_opport_t *q = &o->ports[j];
                if (nt_same_node(q, p) && !nt_is_down(q) && q->sm_lid > 0) {
                    nt_evlist_add_ev(&f->ev, &q->ev_state);
                    f_detail(f, "%s %s port %d: SM LID %ld.", nt_host_name(q->host), q->hca, q->port,
                             q->sm_lid);
                }
            }
        }
    }
}

/* nvidia-smi's path types, nearest first; -1 for anything else. */
static int nt_path_rank(const char *p)
{
    static const char *const order[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
    if (p[0] == 'N' && p[1] == 'V' && isdigit((unsigned char)p[2]))
        return 0;
    for (int i = 0; i < 6; i++)
        if (strcmp(p, order[i]) == 0)
            return i;
    return -1;
}

static const char *nt_nic_label(const nt_optopo_t *tp, int c)
{
    return tp->nicname[c][0] ? tp->nicname[c] : tp->col[c];
}

/* The NCCL version all inputs printed (NCCL_VERSION_CODE), or -1 when none or several. */
static long nt_topo_version(const nt_doctor_t *d)
{
    return d->versions.n == 1 ? nt_kb_version_code(d->versions.keys[0]) : -1;
}

/* What NCCL does by default at one nvidia-smi topo -m matrix's distances:
 *  - GPUDirect RDMA between a GPU and a NIC when their path is PXB or nearer (netGdrLevel =
 *    PATH_PXB: v2.21.5-1 src/graph/paths.cc:401; v2.30.7-1 :511 makes it P2C with
 *    NCCL_NET_GDR_C2C), provided a peer-memory module or DMA-BUF is there (not in topo -m);
 *  - P2P between two GPUs over NVLink always; over PCIe up to a level that depends on the release
 *    and the CPU: before 2.23 PATH_SYS, but PATH_PXB on Intel, Arm and Zhaoxin CPUs (v2.22.3-1
 *    src/graph/paths.cc:281-299); from 2.23 PATH_PXB, but PATH_SYS on AMD with 2 GPUs or fewer
 *    (v2.23.4-1 :277, :282). nvidia-smi topo -m does not show the CPU vendor. */
static void nt_topo_gdr_p2p(nt_doctor_t *d, nt_optopo_t *tp)
{
    int ngpu = 0;
    for (int r = 0; r < tp->nrows; r++)
        ngpu += nt_topo_col_is_gpu(tp->row[r]);
    nt_finding_t *info = nt_add(d, "topo_gpu_nic", NT_SEV_INFO, tp->host);
    if (!info)
        return;
    int gdr = 0, far = 0;
    for (int r = 0; r < tp->nrows; r++) {
        if (!nt_topo_col_is_gpu(tp->row[r]))
            continue;
        int best = 99, bc = -1;
        for (int c = 0; c < tp->ncols; c++)
            if (!nt_topo_col_is_gpu(tp->col[c])) {
                int k = nt_path_rank(tp->path[r][c]);
                if (k >= 0 && k < best)
                    best = k, bc = c;
            }
        if (bc < 0)
            continue;
        int yes = best <= 2; /* X, PIX, PXB (NVLink to a NIC does not occur) */
        gdr += yes;
        nt_evlist_add(&info->ev, tp->input, tp->line[r], tp->text[r]);
        f_detail(info, "%s%s%s: nearest NIC %s at %s, GPUDirect RDMA %s by default.",
                 tp->host ? tp->host : "", tp->host ? " " : "", tp->row[r], nt_nic_label(tp, bc),
                 tp->path[r][bc],
                 yes ? "used" : "not used (beyond PXB)");
        if (!yes) {
            far++;
            nt_finding_t *w = nt_add(d, "topo_gpu_no_gdr_nic", NT_SEV_WARN, tp->host);
            if (w) {
                nt_evlist_add(&w->ev, tp->input, tp->line[r], tp->text[r]);
                f_detail(w, "%s%s%s: its nearest NIC %s is at %s, beyond PXB: NCCL stages its network "
                            "traffic through host memory.",
                         tp->host ? tp->host : "", tp->host ? " " : "", tp->row[r],
                         nt_nic_label(tp, bc), tp->path[r][bc]);
                f_value(w, "gpus", (double)far);
            }
        }
    }
    f_value(info, "gpus", (double)ngpu);
    f_value(info, "gpus_with_gdr", (double)gdr);
    f_detail(info, "Assumed: a peer-memory module (nvidia_peermem) or DMA-BUF is present, and "
                   "NCCL_NET_GDR_LEVEL and NCCL_P2P_LEVEL are not set.");
    /* P2P between GPUs across host bridges */
    int pcie_far = 0;
    char pair[160] = "";
    for (int r = 0; r < tp->nrows; r++)
        for (int c = 0; c < tp->ncols; c++)
            if (nt_topo_col_is_gpu(tp->row[r]) && nt_topo_col_is_gpu(tp->col[c]) &&
                strcmp(tp->row[r], tp->col[c]) < 0 && nt_path_rank(tp->path[r][c]) >= 3) {
                if (!pcie_far++)
                    snprintf(pair, sizeof(pair), "%s-%s at %s", tp->row[r], tp->col[c],
                             tp->path[r][c]);
            }
    if (!pcie_far) {
        f_detail(info, "Every GPU pair is joined by NVLink, PIX or PXB: P2P by default in every "
                       "release.");
        return;
    }
    long v = nt_topo_version(d);
    if (v >= 22300 && ngpu > 2) {
        f_detail(info,
                 "%d GPU pair(s) beyond PXB (%s): no P2P by default under NCCL %ld.%ld (PATH_PXB "
                 "for every CPU with more than 2 GPUs).",
                 pcie_far, pair, v / 10000, v / 100 % 100);
        return;
    }
    char why[300];
    snprintf(why, sizeof(why),
             "p2p (%s%s: whether NCCL uses P2P there depends on %s the CPU vendor, which "
             "nvidia-smi topo -m does not show; give lscpu or the job's NCCL log)",
             pair, pcie_far > 1 ? " and more" : "", v < 0 ? "the NCCL version and" : "");
    nt_not_judged_add(d, why);
    f_detail(info,
             "%d GPU pair(s) beyond PXB (%s): P2P by default before 2.23 on AMD CPUs only (not "
             "Intel, Arm, Zhaoxin); from 2.23 on AMD with 2 GPUs or fewer only. Not judged: the "
             "CPU vendor is not in this file.",
             pcie_far, pair);
}

static void nt_diagnose_topo(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->ntopos; i++) {
        nt_optopo_t *tp = &o->topos[i];
        int ngpu = 0, nnic = 0;
        for (int c = 0; c < tp->ncols; c++)
            nt_topo_col_is_gpu(tp->col[c]) ? ngpu++ : nnic++;
        if (!nnic)
            continue;
        int nic_near[NT_TOPO_COLS] = {0};
        for (int r = 0; r < tp->nrows; r++) {
            if (!nt_topo_col_is_gpu(tp->row[r]))
                continue;
            int best = 99, bc = -1;
            for (int c = 0; c < tp->ncols; c++) {
                if (nt_topo_col_is_gpu(tp->col[c]))
                    continue;
                int k = nt_path_rank(tp->path[r][c]);
                if (k >= 0 && k < best)
                    best = k, bc = c;
            }
            for (int c = 0; c < tp->ncols; c++)
                if (!nt_topo_col_is_gpu(tp->col[c]) && nt_path_rank(tp->path[r][c]) == best &&
                    best < 5)
                    nic_near[c]++;
            if (best == 5) {
                nt_finding_t *f = nt_add(d, "gpu_nic_far", NT_SEV_WARN, tp->host);
                if (f) {
                    nt_evlist_add(&f->ev, tp->input, tp->line[r], tp->text[r]);
                    f_detail(f, "%s %s: nearest NIC %s is SYS (across the CPU interconnect).",
                             nt_host_name(tp->host), tp->row[r],
                             bc >= 0 ? nt_nic_label(tp, bc) : "?");
                }
            }
        }
        nt_topo_gdr_p2p(d, tp);
        if (ngpu > nnic) {
            nt_finding_t *f = nt_add(d, "nic_shared", NT_SEV_INFO, tp->host);
            if (f) {
                for (int r = 0; r < tp->nrows; r++)
                    if (nt_topo_col_is_gpu(tp->row[r]))
                        nt_evlist_add(&f->ev, tp->input, tp->line[r], tp->text[r]);
                f_detail(f,
                         "%s: %d GPUs and %d NIC(s) in nvidia-smi topo -m: GPUs share NICs by the "
                         "hardware's design.",
                         nt_host_name(tp->host), ngpu, nnic);
                f_value(f, "gpus_per_node", ngpu);
                f_value(f, "nics_per_node", nnic);
            }
        }
        for (int r = 0; r < tp->nrows; r++) {
            if (nt_topo_col_is_gpu(tp->row[r]))
                continue;
            int c0 = -1;
            for (int c = 0; c < tp->ncols; c++)
                if (strcmp(tp->col[c], tp->row[r]) == 0)
                    c0 = c;
            if (c0 < 0 || nic_near[c0])
                continue;
            int best = 99;
            for (int c = 0; c < tp->ncols; c++)
                if (nt_topo_col_is_gpu(tp->col[c])) {
                    int k = nt_path_rank(tp->path[r][c]);
                    if (k >= 0 && k < best)
                        best = k;
                }
            if (best < 5)
                continue;
            nt_finding_t *f = nt_add(d, "nic_no_gpu", NT_SEV_INFO, tp->host);
            if (f) {
                nt_evlist_add(&f->ev, tp->input, tp->line[r], tp->text[r]);
                f_detail(f, "%s %s: no GPU nearer than SYS.", nt_host_name(tp->host),
                         nt_nic_label(tp, c0));
            }
        }
    }
}

static void nt_diagnose_nvlink(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nnvl; i++) {
        nt_opnvl_t *n = &o->nvl[i];
        int max = 0;
        for (size_t j = 0; j < o->nnvl; j++)
            if (nt_host_eq(o->nvl[j].host, n->host) && o->nvl[j].active > max)
                max = o->nvl[j].active;
        if (max == 0 || (n->active >= max && !n->inactive))
            continue;
        nt_finding_t *f = nt_add(d, "nvlink_inactive", NT_SEV_WARN, n->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &n->ev_gpu);
        nt_evlist_add_ev(&f->ev, &n->ev_inactive);
        f_detail(f,
                 "%s GPU %d: %d NVLink(s) active, %d inactive (other GPUs of the node: %d active).",
                 nt_host_name(n->host), n->gpu, n->active, n->inactive, max);
    }
}

static void nt_diagnose_kernel(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nxids; i++) {
        nt_opxid_t *x = &o->xids[i];
        /* the one Xid table (lib/node/xid.c): drain and reset classes are errors */
        const nt_xid_row_t *k = nt_xid_lookup(x->xid);
        nt_severity_t sev = !k                              ? NT_SEV_WARN
                            : k->category == NT_CAT_INFO    ? NT_SEV_INFO
                            : k->category == NT_CAT_MONITOR ? NT_SEV_WARN
                                                            : NT_SEV_ERROR;
        nt_finding_t *f = nt_add(d, "gpu_xid", sev, x->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &x->ev);
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            if (o->xids[j].xid == x->xid && nt_host_eq(o->xids[j].host, x->host) &&
                strcmp(o->xids[j].pci, x->pci) == 0)
                seen = 1;
        if (!seen)
            f_detail(f, "%s GPU %s: Xid %d (%s).", nt_host_name(x->host), x->pci, x->xid,
                     k ? k->meaning : "not in the Xid table: see NVIDIA's Xid catalog");
    }
    for (size_t i = 0; i < o->nlinks; i++) {
        nt_oplink_t *l = &o->links[i];
        if (!l->downs)
            continue;
        nt_finding_t *f = nt_add(d, "nic_link_down", NT_SEV_WARN, l->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &l->ev_down);
        nt_evlist_add_ev(&f->ev, &l->ev_up);
        f_detail(f, "%s %s: link down %d time(s), up %d time(s); %s at the end of the log.",
                 nt_host_name(l->host), l->dev, l->downs, l->ups, l->last_down ? "down" : "up");
    }
}

static void nt_xml_ev(nt_finding_t *f, const nt_opxml_t *e, long line)
{
    size_t n = 0;
    const char *t = nt_nth_line(e->buf, e->len, line, &n);
    char buf[NT_EVIDENCE_TEXT + 1];
    snprintf(buf, sizeof(buf), "%.*s", t ? (int)(n > NT_EVIDENCE_TEXT ? NT_EVIDENCE_TEXT : n) : 0,
             t ? t : "");
    nt_evlist_add(&f->ev, e->input, (unsigned long)line, buf);
}

static void nt_diagnose_xml(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nxmls; i++) {
        nt_opxml_t *e = &o->xmls[i];
        nt_ncclxml_t *x = e->xml;
        if (x->kind != NT_NCCLXML_SYSTEM)
            continue;
        int ngpu = 0, nnic = 0;
        for (size_t a = 0; a < x->ndevs; a++) {
            if (x->devs[a].kind == NT_XDEV_GPU)
                ngpu++;
            else
                nnic++;
        }
        if (!nnic || !ngpu)
            continue;
        static const char *const order[] = {"PIX", "PXB", "PHB", "SYS"};
        for (size_t a = 0; a < x->ndevs; a++) {
            if (x->devs[a].kind != NT_XDEV_GPU)
                continue;
            int best = 9;
            size_t bn = 0;
            for (size_t b = 0; b < x->ndevs; b++) {
                if (x->devs[b].kind != NT_XDEV_NIC)
                    continue;
                const char *p = nt_ncclxml_path(x, a, b);
                for (int k = 0; k < 4; k++)
                    if (strcmp(p, order[k]) == 0 && k < best)
                        best = k, bn = b;
            }
            if (best != 3)
                continue;
            int rdma = x->devs[bn].rdma != 0;
            nt_finding_t *f = nt_add(d, "gpu_nic_far", rdma ? NT_SEV_WARN : NT_SEV_INFO, e->host);
            if (!f)
                continue;
            nt_xml_ev(f, e, x->devs[a].line);
            nt_xml_ev(f, e, x->devs[bn].line);
            f_detail(f, "%s GPU %s (CPU %d): nearest NIC %s%s%s is on CPU %d (SYS)%s.",
                     nt_host_name(e->host), x->devs[a].busid, x->devs[a].numaid,
                     x->devs[bn].name[0] ? x->devs[bn].name : x->devs[bn].busid, "", "",
                     x->devs[bn].numaid,
                     rdma ? ""
                          : "; an Ethernet NIC without RDMA: GPUDirect RDMA does not apply (info)");
        }
        if (ngpu > nnic) {
            nt_finding_t *f = nt_add(d, "nic_shared", NT_SEV_INFO, e->host);
            if (f) {
                for (size_t b = 0; b < x->ndevs; b++)
                    if (x->devs[b].kind == NT_XDEV_NIC)
                        nt_xml_ev(f, e, x->devs[b].line);
                f_detail(f,
                         "%s: %d GPUs and %d NIC(s) in the topology file: GPUs share NICs by the "
                         "hardware's design.",
                         nt_host_name(e->host), ngpu, nnic);
                f_value(f, "gpus_per_node", ngpu);
                f_value(f, "nics_per_node", nnic);
            }
        }
        for (size_t b = 0; b < x->ndevs; b++) {
            if (x->devs[b].kind != NT_XDEV_NIC)
                continue;
            int near = 0;
            for (size_t a = 0; a < x->ndevs; a++)
                if (x->devs[a].kind == NT_XDEV_GPU && strcmp(nt_ncclxml_path(x, a, b), "SYS") != 0)
                    near = 1;
            if (near)
                continue;
            nt_finding_t *f = nt_add(d, "nic_no_gpu", NT_SEV_INFO, e->host);
            if (f) {
                nt_xml_ev(f, e, x->devs[b].line);
                f_detail(f, "%s NIC %s (CPU %d): no GPU on its CPU.", nt_host_name(e->host),
                         x->devs[b].name[0] ? x->devs[b].name : x->devs[b].busid,
                         x->devs[b].numaid);
            }
        }
    }
}

/* systemctl status of nvidia-fabricmanager (read_operator.c): a unit that is not active leaves an
 * NVSwitch system's GPUs uninitialized, so CUDA and NCCL cannot start (or hang) on that host. */
static void nt_diagnose_fm_unit(nt_doctor_t *d)
{
    nt_op_t *o = &d->op;
    for (size_t i = 0; i < o->nfms; i++) {
        nt_opunit_t *u = &o->fms[i];
        if (!u->down)
            continue;
        nt_finding_t *f = nt_add(d, "fabric_manager_not_ready", NT_SEV_ERROR, u->host);
        if (!f)
            continue;
        nt_evlist_add_ev(&f->ev, &u->ev);
        f_detail(f, "%s: systemctl status shows nvidia-fabricmanager Active: %s (not running).",
                 nt_host_name(u->host), u->state);
    }
}

void nt_op_diagnose(nt_doctor_t *d)
{
    nt_diagnose_fm_unit(d);
    nt_diagnose_ports(d);
    nt_diagnose_topo(d);
    nt_diagnose_nvlink(d);
    nt_diagnose_kernel(d);
    nt_nodefiles_diagnose(d);
    nt_diagnose_xml(d);
}
