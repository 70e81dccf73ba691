/* The ibverbs data path: see verbs.h. Structure after rdma-core's rc_pingpong.c (a cleanup
 * ladder in create, a destructor that takes a partly built object) and perftest's timing. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ibv.h"

#include "nettune/clock.h"
#include "nettune/log.h"
#include "verbs.h"

#define NT_SQ_DEPTH 128
#define NT_RQ_DEPTH 64
#define NT_CQ_DEPTH (NT_SQ_DEPTH * 2 + NT_RQ_DEPTH + 16)
#define NT_WINDOW_BYTES (16u << 20)
#define NT_DONE_BYTES 64

struct nt_rdma_conn {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_qp *qps[NT_RDMA_MAX_QPS];
    int nqps;
    uint8_t *buf;       /* [0, max) receive region, [max, 2 max) source region */
    size_t max_bytes, buf_bytes;
    int buf_kind;       /* 0 host (mmap), 1 gpu dma-buf, 2 gpu peer memory */
    int dmabuf_fd;
    struct ibv_mr *mr;
    struct ibv_port_attr pattr;
    int port, gid_index, tc, sl;
    union ibv_gid gid;
    uint32_t psn;
    double timeout_s;
    nt_rdma_ep_info_t remote;
    unsigned outstanding;   /* signalled sends not yet completed */
    unsigned recvs_done;    /* receive completions not yet consumed */
    uint8_t mark;
    /* A bounded transfer driven by nt_rdma_stream_progress (verbs.h): role 1 sends, 2 receives. */
    int stream_role, stream_done;
    size_t stream_left;
    unsigned stream_window;
    double stream_first_s, stream_end_s, stream_prog_s;
    char dev[64];
    char numa[160];
    char err[512];
};

static void nt_seterr(nt_rdma_conn_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nt_seterr(nt_rdma_conn_t *c, const char *fmt, ...)
{
    va_list ap;
    if (c->err[0])
        return; /* keep the first failure: later ones are consequences */
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
    NT_WARN(RDMA, "%s", c->err);
}

const char *nt_rdma_wc_explain(int st)
{
    switch (st) {
    case IBV_WC_RETRY_EXC_ERR:
        return "transport retry counter exceeded: the two ports cannot reach each other: check "
               "the GID index, VLAN/traffic class, cabling";
    case IBV_WC_RNR_RETRY_EXC_ERR:
        return "receiver-not-ready retries exceeded: the peer posted no receive (it stalled or "
               "died)";
    case IBV_WC_REM_ACCESS_ERR:
        return "the peer refused the access: wrong rkey or address, or its memory is not "
               "registered for remote write";
    case IBV_WC_LOC_PROT_ERR:
        return "local protection error: the buffer is not covered by its registration (with "
               "GPU memory this is often PCIe ACS breaking GPUDirect RDMA)";
    case IBV_WC_LOC_LEN_ERR:
        return "local length error: the message is larger than the posted receive";
    case IBV_WC_REM_INV_REQ_ERR:
        return "the peer found the request invalid (message larger than its receive, or "
               "operation not allowed on its QP)";
    case IBV_WC_REM_OP_ERR:
        return "the peer could not complete the operation";
    case IBV_WC_WR_FLUSH_ERR:
        return "flushed: the queue pair had already failed (see the first error)";
    case IBV_WC_LOC_QP_OP_ERR:
        return "local QP operation error (a request the QP cannot carry, e.g. beyond the MTU "
               "for UD, or a QP in the wrong state)";
    default:
        return nt_ibv_wc_status_str((enum ibv_wc_status)st);
    }
}

static int nt_mtu_bytes(int mtu)
{
    return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : 0;
}

void nt_rdma_port_query(nt_rdma_inv_t *inv)
{
    int n = 0;
    struct ibv_device **list = nt_ibv_get_device_list(&n);
    if (!list)
        return;
    for (int i = 0; i < inv->nports; i++) {
        nt_rdma_port_t *p = &inv->ports[i];
        struct ibv_context *ctx = NULL;
        struct ibv_port_attr pa;
        for (int d = 0; d < n; d++)
            if (strcmp(nt_ibv_get_device_name(list[d]), p->dev) == 0)
                ctx = nt_ibv_open_device(list[d]);
        if (!ctx)
            continue;
        if (nt_ibv_query_port(ctx, (uint8_t)p->port, &pa) == 0) {
            p->active_mtu = nt_mtu_bytes(pa.active_mtu);
            p->max_mtu = nt_mtu_bytes(pa.max_mtu);
            if (pa.gid_tbl_len > p->gid_tbl_len)
                p->gid_tbl_len = pa.gid_tbl_len;
            if (!p->have_rate) {
                /* libibverbs 44 has no name for XDR and later: sysfs "rate" is read first, this
                 * is only the fallback when sysfs had none. */
                const nt_ib_speed_t *sp = nt_ib_speed_from_code(pa.active_speed);
                p->have_rate = nt_port_rate_compute(nt_ib_width_lanes(pa.active_width), sp,
                                                    p->is_ethernet, &p->rate) == NT_OK;
            }
        }
        nt_ibv_close_device(ctx);
    }
    nt_ibv_free_device_list(list);
}

static void nt_memlock_text(char *buf, size_t len)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        snprintf(buf, len, "unknown");
    else if (rl.rlim_cur == RLIM_INFINITY)
        snprintf(buf, len, "unlimited");
    else
        snprintf(buf, len, "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
}

static nt_status_t nt_alloc_buffer(nt_rdma_conn_t *c, const nt_rdma_conn_params_t *cp)
{
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    char why[256] = "";

    c->buf_bytes = 2 * c->max_bytes;
    if (cp->gpu >= 0) {
        void *d = NULL;
        nt_status_t st = nt_gpu_alloc(cp->gpu, cp->gpu_bus_id, c->buf_bytes, &d, &c->dmabuf_fd,
                                      why, sizeof(why));
        if (st != NT_OK) {
            nt_seterr(c, "GPUDirect RDMA unavailable: %s", why);
            return st;
        }
        c->buf = d; /* never touched by the CPU: only the NIC reads and writes it */
        snprintf(c->numa, sizeof(c->numa), "none: the buffer is GPU memory");
        if (c->dmabuf_fd >= 0) {
            c->mr = nt_ibv_reg_dmabuf_mr(c->pd, 0, c->buf_bytes, (uint64_t)(uintptr_t)d,
                                      c->dmabuf_fd, access);
            if (c->mr) {
                c->buf_kind = 1;
                return NT_OK;
            }
            snprintf(why, sizeof(why), "ibv_reg_dmabuf_mr: %s", strerror(errno));
        }
        if (nt_gpu_peermem_loaded()) {
            c->mr = nt_ibv_reg_mr(c->pd, d, c->buf_bytes, access);
            if (c->mr) {
                c->buf_kind = 2;
                return NT_OK;
            }
            snprintf(why + strlen(why), sizeof(why) - strlen(why), "%sibv_reg_mr with nvidia_peermem: %s",
                     why[0] ? "; " : "", strerror(errno));
        } else {
            snprintf(why + strlen(why), sizeof(why) - strlen(why),
                     "%sno peer-memory module (nvidia_peermem not loaded)", why[0] ? "; " : "");
        }
        nt_gpu_free(d, c->dmabuf_fd);
        c->buf = NULL;
        c->dmabuf_fd = -1;
        nt_seterr(c, "GPUDirect RDMA unavailable: cannot register GPU memory with %s: %s", c->dev,
                  why);
        return NT_ERR_UNSUPPORTED;
    }
    c->buf = mmap(NULL, c->buf_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (c->buf == MAP_FAILED) {
        c->buf = NULL;
        nt_seterr(c, "cannot allocate %zu bytes of host memory: %s", c->buf_bytes, strerror(errno));
        return NT_ERR_NOMEM;
    }
    if (cp->numa_node >= 0) {
        if (nt_numa_bind_mem(c->buf, c->buf_bytes, cp->numa_node, why, sizeof(why)) == 0)
            snprintf(c->numa, sizeof(c->numa), "node %d (mbind MPOL_BIND)", cp->numa_node);
        else
            snprintf(c->numa, sizeof(c->numa), "none: %s", why);
    } else {
        snprintf(c->numa, sizeof(c->numa), "none: the NIC's NUMA node is unknown");
    }
    memset(c->buf, 0, c->buf_bytes); /* first touch after mbind */
    c->mr = nt_ibv_reg_mr(c->pd, c->buf, c->buf_bytes, access);
    if (!c->mr) {
        int e = errno;
        char lim[32];
        nt_memlock_text(lim, sizeof(lim));
        if (e == ENOMEM || e == EPERM || e == EAGAIN)
            nt_seterr(c,
                      "cannot register %zu bytes of host memory with %s: %s: the locked-memory "
                      "limit (ulimit -l) is %s: raise it (ulimit -l unlimited; LimitMEMLOCK= in "
                      "systemd; --ulimit memlock=-1 in docker)",
                      c->buf_bytes, c->dev, strerror(e), lim);
        else
            nt_seterr(c, "cannot register %zu bytes of host memory with %s: %s", c->buf_bytes,
                      c->dev, strerror(e));
        return NT_ERR_SYSTEM;
    }
    return NT_OK;
}

nt_status_t nt_rdma_conn_create(const nt_rdma_conn_params_t *cp, nt_rdma_conn_t **out, char *err,
                                size_t errlen)
{
    nt_rdma_conn_t *c = calloc(1, sizeof(*c));
    struct ibv_device **list = NULL;
    int n = 0;
    nt_status_t st = NT_ERR_SYSTEM;

    *out = NULL;
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NT_ERR_NOMEM;
    }
    c->dmabuf_fd = -1;
    c->port = cp->port->port;
    c->gid_index = cp->gid_index;
    c->tc = cp->traffic_class < 0 ? 0 : cp->traffic_class;
    c->sl = cp->service_level < 0 ? 0 : cp->service_level;
    c->timeout_s = cp->timeout_s > 0 ? cp->timeout_s : 10.0;
    c->max_bytes = cp->max_bytes < NT_DONE_BYTES ? NT_DONE_BYTES : cp->max_bytes;
    c->nqps = cp->nqps < 1 ? 1 : cp->nqps > NT_RDMA_MAX_QPS ? NT_RDMA_MAX_QPS : cp->nqps;
    c->psn = (uint32_t)(lrand48() & 0xffffff);
    snprintf(c->dev, sizeof(c->dev), "%s", cp->port->dev);

    list = nt_ibv_get_device_list(&n);
    if (!list || n == 0) {
        nt_seterr(c, "no RDMA device visible to libibverbs (%s): is the provider package "
                     "(ibverbs-providers) installed and /dev/infiniband passed in?",
                  list ? "empty device list" : strerror(errno));
        st = NT_ERR_UNSUPPORTED;
        goto fail;
    }
    for (int i = 0; i < n && !c->ctx; i++)
        if (strcmp(nt_ibv_get_device_name(list[i]), c->dev) == 0) {
            c->ctx = nt_ibv_open_device(list[i]);
            if (!c->ctx) {
                nt_seterr(c, "cannot open device '%s': %s", c->dev, strerror(errno));
                goto fail;
            }
        }
    if (!c->ctx) {
        nt_seterr(c, "device '%s' is not in libibverbs' device list", c->dev);
        st = NT_ERR_NOT_FOUND;
        goto fail;
    }
    if (nt_ibv_query_port(c->ctx, (uint8_t)c->port, &c->pattr)) {
        nt_seterr(c, "cannot query port %s:%d: %s", c->dev, c->port, strerror(errno));
        goto fail;
    }
    if (nt_ibv_query_gid(c->ctx, (uint8_t)c->port, c->gid_index, &c->gid)) {
        nt_seterr(c, "GID index %d does not exist on %s:%d (the table has %d entries): check "
                     "--gid-index / NCCL_IB_GID_INDEX",
                  c->gid_index, c->dev, c->port, c->pattr.gid_tbl_len);
        st = NT_ERR_INVALID;
        goto fail;
    }
    c->pd = nt_ibv_alloc_pd(c->ctx);
    if (!c->pd) {
        nt_seterr(c, "cannot allocate a protection domain on '%s': %s", c->dev, strerror(errno));
        goto fail;
    }
    c->cq = nt_ibv_create_cq(c->ctx, NT_CQ_DEPTH, NULL, NULL, 0);
    if (!c->cq) {
        nt_seterr(c, "cannot create a completion queue on '%s': %s", c->dev, strerror(errno));
        goto fail;
    }
    st = nt_alloc_buffer(c, cp);
    if (st != NT_OK)
        goto fail;
    st = NT_ERR_SYSTEM;
    for (int q = 0; q < c->nqps; q++) {
        struct ibv_qp_init_attr ia = {
            .send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
            .cap = {.max_send_wr = NT_SQ_DEPTH, .max_recv_wr = NT_RQ_DEPTH, .max_send_sge = 1,
                    .max_recv_sge = 1, .max_inline_data = 0}};
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0,
                                .port_num = (uint8_t)c->port,
                                .qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
                                                   IBV_ACCESS_REMOTE_WRITE |
                                                   IBV_ACCESS_REMOTE_READ};
        c->qps[q] = nt_ibv_create_qp(c->pd, &ia);
        if (!c->qps[q]) {
            nt_seterr(c, "cannot create RC queue pair %d on '%s': %s", q, c->dev, strerror(errno));
            goto fail;
        }
        if (nt_ibv_modify_qp(c->qps[q], &a,
                          IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
            nt_seterr(c, "cannot move QP %u to INIT on %s port %d: %s", c->qps[q]->qp_num, c->dev,
                      c->port, strerror(errno));
            goto fail;
        }
    }
    nt_ibv_free_device_list(list);
    *out = c;
    return NT_OK;
fail:
    snprintf(err, errlen, "%s", c->err);
    if (list)
        nt_ibv_free_device_list(list);
    nt_rdma_conn_destroy(c);
    return st;
}

void nt_rdma_conn_destroy(nt_rdma_conn_t *c)
{
    if (!c)
        return;
    for (int q = 0; q < NT_RDMA_MAX_QPS; q++)
        if (c->qps[q])
            nt_ibv_destroy_qp(c->qps[q]);
    if (c->mr)
        nt_ibv_dereg_mr(c->mr);
    if (c->buf) {
        if (c->buf_kind == 0)
            munmap(c->buf, c->buf_bytes);
        else
            nt_gpu_free(c->buf, c->dmabuf_fd);
    }
    if (c->cq)
        nt_ibv_destroy_cq(c->cq);
    if (c->pd)
        nt_ibv_dealloc_pd(c->pd);
    if (c->ctx)
        nt_ibv_close_device(c->ctx);
    free(c);
}

const char *nt_rdma_conn_error(const nt_rdma_conn_t *c) { return c->err; }

const char *nt_rdma_conn_memory(const nt_rdma_conn_t *c)
{
    return c->buf_kind == 1 ? "gpu (dma-buf)" : c->buf_kind == 2 ? "gpu (peer memory)" : "host";
}

const char *nt_rdma_conn_numa(const nt_rdma_conn_t *c) { return c->numa; }

void nt_rdma_conn_info(const nt_rdma_conn_t *c, nt_rdma_ep_info_t *info)
{
    memset(info, 0, sizeof(*info));
    info->magic = NT_RDMA_INFO_MAGIC;
    info->nqps = (uint32_t)c->nqps;
    info->psn = c->psn;
    for (int q = 0; q < c->nqps; q++)
        info->qpn[q] = c->qps[q]->qp_num;
    info->addr = (uint64_t)(uintptr_t)c->buf;
    info->rkey = c->mr->rkey;
    info->lid = c->pattr.lid;
    memcpy(info->gid, c->gid.raw, 16);
    info->gid_index = c->gid_index;
    info->mtu = c->pattr.active_mtu;
    info->port = c->port;
    snprintf(info->dev, sizeof(info->dev), "%s", c->dev);
}

static const char *nt_gidtxt(const uint8_t *raw, char *buf, size_t len)
{
    nt_gid_format(raw, buf, len);
    return buf;
}

nt_status_t nt_rdma_conn_connect(nt_rdma_conn_t *c, const nt_rdma_ep_info_t *r)
{
    char lg[64], rg[64];
    enum ibv_mtu mtu = c->pattr.active_mtu < (enum ibv_mtu)r->mtu ? c->pattr.active_mtu
                                                                   : (enum ibv_mtu)r->mtu;
    if (r->magic != NT_RDMA_INFO_MAGIC || r->nqps != (uint32_t)c->nqps) {
        nt_seterr(c, "the peer's QP description is malformed (%u QPs, %d expected)", r->nqps,
                  c->nqps);
        return NT_ERR_PEER;
    }
    c->remote = *r;
    nt_gidtxt(c->gid.raw, lg, sizeof(lg));
    nt_gidtxt(r->gid, rg, sizeof(rg));
    for (int q = 0; q < c->nqps; q++) {
        struct ibv_qp_attr a;
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTR;
        a.path_mtu = mtu;
        a.dest_qp_num = r->qpn[q];
        a.rq_psn = r->psn;
        a.max_dest_rd_atomic = 1;
        a.min_rnr_timer = 12;
        a.ah_attr.port_num = (uint8_t)c->port;
        a.ah_attr.sl = (uint8_t)c->sl;
        /* Global routing always on RoCE, on IB only when the peer has no LID. */
        if (c->pattr.link_layer == IBV_LINK_LAYER_ETHERNET || r->lid == 0) {
            a.ah_attr.is_global = 1;
            memcpy(a.ah_attr.grh.dgid.raw, r->gid, 16);
            a.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
            a.ah_attr.grh.hop_limit = 64;
            a.ah_attr.grh.traffic_class = (uint8_t)c->tc;
        } else {
            a.ah_attr.dlid = (uint16_t)r->lid;
        }
        if (nt_ibv_modify_qp(c->qps[q], &a,
                          IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                              IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
            nt_seterr(c,
                      "cannot move QP %u to RTR on %s port %d with local GID index %d (%s) towards "
                      "%s:%d GID index %d (%s): %s: check that the GID index exists and that both "
                      "ends use GIDs of the same type and subnet",
                      c->qps[q]->qp_num, c->dev, c->port, c->gid_index, lg, r->dev, r->port,
                      r->gid_index, rg, strerror(errno));
            return NT_ERR_SYSTEM;
        }
        memset(&a, 0, sizeof(a));
        a.qp_state = IBV_QPS_RTS;
        a.sq_psn = c->psn;
        a.timeout = 14;   /* 4.096 us x 2^14 = 67 ms per try (NCCL_IB_TIMEOUT is 20: 4 s) */
        a.retry_cnt = 7;
        a.rnr_retry = 7;
        a.max_rd_atomic = 1;
        if (nt_ibv_modify_qp(c->qps[q], &a,
                          IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                              IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)) {
            nt_seterr(c, "cannot move QP %u to RTS on %s port %d (GID index %d, %s): %s",
                      c->qps[q]->qp_num, c->dev, c->port, c->gid_index, lg, strerror(errno));
            return NT_ERR_SYSTEM;
        }
    }
    return NT_OK;
}

/* Poll the CQ once (up to max entries); count send and receive completions. A failed
 * completion sets the error sentence. Returns the number of send completions, or -1. */
static int nt_poll(nt_rdma_conn_t *c, unsigned max, double *t_done)
{
    struct ibv_wc wc[16];
    int n, sends = 0;
    if (max > 16)
        max = 16;
    n = ibv_poll_cq(c->cq, (int)max, wc);
    if (n < 0) {
        nt_seterr(c, "ibv_poll_cq failed on %s", c->dev);
        return -1;
    }
    if (n > 0 && t_done)
        *t_done = nt_clock_s();
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            nt_seterr(c, "work completion error on %s:%d (QP %u, %s, vendor error 0x%x): %s",
                      c->dev, c->port, wc[i].qp_num, nt_ibv_wc_status_str(wc[i].status),
                      wc[i].vendor_err, nt_rdma_wc_explain(wc[i].status));
            return -1;
        }
        if (wc[i].opcode & IBV_WC_RECV)
            c->recvs_done++;
        else
            sends++;
    }
    c->outstanding -= (unsigned)sends;
    return sends;
}

/* Waits that last: a healthy NIC answers in microseconds, so a wait past 50 us yields the CPU
 * between polls (sched_yield). On hardware this never triggers; with soft-RoCE, or more
 * spinning processes than cores, it lets the kernel work that moves the packets run instead of
 * starving it. A passive wait (the bandwidth responder waiting for "done", as perftest's
 * server waits on its socket) sleeps 20 us between polls once it has lasted 1 ms. */
static void nt_backoff(double since, int passive)
{
    double waited = nt_clock_s() - since;
    if (passive && waited > 1e-3) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    } else if (waited > 50e-6) {
        sched_yield();
    }
}

static int nt_expired(nt_rdma_conn_t *c, double deadline, const char *what)
{
    if (nt_clock_s() < deadline)
        return 0;
    nt_seterr(c, "no %s on %s:%d within %.0f s: the peer stopped answering, or its packets do not "
                 "arrive (check the GID index, VLAN/traffic class, cabling)",
              what, c->dev, c->port, c->timeout_s);
    return 1;
}

/* An RDMA WRITE (opcode IBV_WR_RDMA_WRITE, or IBV_WR_RDMA_WRITE_WITH_IMM: the peer gets a
 * receive completion once this and, RC being ordered, every earlier write have landed). */
static int nt_post_write_op(nt_rdma_conn_t *c, int q, size_t bytes, int signaled,
                            enum ibv_wr_opcode op)
{
    struct ibv_sge sge = {.addr = (uintptr_t)(c->buf + c->max_bytes), .length = (uint32_t)bytes,
                          .lkey = c->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = op,
                             .send_flags = signaled ? IBV_SEND_SIGNALED : 0,
                             .imm_data = op == IBV_WR_RDMA_WRITE_WITH_IMM ? 0x4e544644u : 0,
                             .wr.rdma = {.remote_addr = c->remote.addr, .rkey = c->remote.rkey}},
                       *bad;
    int e = ibv_post_send(c->qps[q], &wr, &bad);
    if (e) {
        nt_seterr(c, "cannot post an RDMA WRITE on %s:%d: %s", c->dev, c->port, strerror(e));
        return -1;
    }
    if (signaled)
        c->outstanding++;
    return 0;
}

static int nt_post_write(nt_rdma_conn_t *c, int q, size_t bytes, int signaled)
{
    return nt_post_write_op(c, q, bytes, signaled, IBV_WR_RDMA_WRITE);
}

static int nt_post_send(nt_rdma_conn_t *c, size_t bytes)
{
    struct ibv_sge sge = {.addr = (uintptr_t)(c->buf + c->max_bytes), .length = (uint32_t)bytes,
                          .lkey = c->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED},
                       *bad;
    int e = ibv_post_send(c->qps[0], &wr, &bad);
    if (e) {
        nt_seterr(c, "cannot post a SEND on %s:%d: %s", c->dev, c->port, strerror(e));
        return -1;
    }
    c->outstanding++;
    return 0;
}

static int nt_post_recv(nt_rdma_conn_t *c, size_t bytes)
{
    struct ibv_sge sge = {.addr = (uintptr_t)c->buf, .length = (uint32_t)bytes,
                          .lkey = c->mr->lkey};
    struct ibv_recv_wr wr = {.sg_list = &sge, .num_sge = 1}, *bad;
    int e = ibv_post_recv(c->qps[0], &wr, &bad);
    if (e) {
        nt_seterr(c, "cannot post a receive on %s:%d: %s", c->dev, c->port, strerror(e));
        return -1;
    }
    return 0;
}

/* Wait until all signalled sends completed. */
static int nt_drain(nt_rdma_conn_t *c)
{
    double t0 = nt_clock_s(), deadline = t0 + c->timeout_s;
    while (c->outstanding > 0) {
        int got = nt_poll(c, 16, NULL);
        if (got < 0 || nt_expired(c, deadline, "send completion"))
            return -1;
        if (got == 0)
            nt_backoff(t0, 0);
    }
    return 0;
}

/* Wait for one receive completion (consuming send completions on the way). */
static int nt_wait_recv(nt_rdma_conn_t *c, int passive)
{
    double t0 = nt_clock_s(), deadline = t0 + c->timeout_s;
    while (c->recvs_done == 0) {
        unsigned before = c->recvs_done;
        if (nt_poll(c, 16, NULL) < 0 || nt_expired(c, deadline, "message"))
            return -1;
        if (c->recvs_done == before)
            nt_backoff(t0, passive);
    }
    c->recvs_done--;
    return 0;
}

unsigned nt_rdma_window(size_t bytes)
{
    size_t w = bytes ? NT_WINDOW_BYTES / bytes : 64;
    return w < 1 ? 1 : w > 64 ? 64 : (unsigned)w;
}

static nt_status_t nt_fail_status(nt_rdma_conn_t *c)
{
    return strstr(c->err, "within") ? NT_ERR_TIMEOUT : NT_ERR_SYSTEM;
}

nt_status_t nt_rdma_write_bw(nt_rdma_conn_t *c, nt_rdma_conn_t *peer, int initiator, size_t bytes,
                             unsigned window, unsigned iters, double *samples)
{
    unsigned long total = (unsigned long)window * iters, posted = 0, completed = 0, k = 0;
    double t0, tprev, tdone = 0, deadline, tprog;

    if (bytes > c->max_bytes || window < 1 || window > NT_SQ_DEPTH)
        return NT_ERR_INVALID;
    if (!initiator) {
        /* The writes land silently; the initiator's "done" SEND ends the run. */
        if (nt_post_recv(c, NT_DONE_BYTES) < 0 || nt_wait_recv(c, 1) < 0 || nt_drain(c) < 0)
            return nt_fail_status(c);
        return NT_OK;
    }
    if (!peer && nt_drain(c) < 0)
        return nt_fail_status(c);
    t0 = tprev = tprog = nt_clock_s();
    deadline = t0 + c->timeout_s;
    while (completed < total) {
        while (posted < total && posted - completed < window) {
            if (nt_post_write(c, (int)(posted % (unsigned long)c->nqps), bytes, 1) < 0)
                return nt_fail_status(c);
            posted++;
        }
        {
            /* At most one window boundary per poll, so that every sample has its own time. */
            int got = nt_poll(c, window, &tdone);
            if (got < 0)
                return nt_fail_status(c);
            if (got > 0) {
                tprog = nt_clock_s();
                deadline = tprog + c->timeout_s;
            } else {
                nt_backoff(tprog, 0);
            }
            completed += (unsigned long)got;
        }
        while (k < iters && completed >= (k + 1) * (unsigned long)window) {
            double dt = tdone - tprev;
            samples[k++] = dt > 0 ? (double)window * (double)bytes / dt : NAN;
            tprev = tdone;
        }
        if (nt_expired(c, deadline, "RDMA WRITE completion"))
            return NT_ERR_TIMEOUT;
    }
    if (!peer) {
        if (nt_post_send(c, NT_DONE_BYTES) < 0 || nt_drain(c) < 0)
            return nt_fail_status(c);
    }
    return NT_OK;
}

/* Wait until the last byte of this end's receive region shows mark. */
static int nt_wait_mark(nt_rdma_conn_t *c, size_t bytes, uint8_t mark)
{
    volatile uint8_t *last = c->buf + bytes - 1;
    double t0 = 0, deadline = 0;
    unsigned spins = 0;
    while (*last != mark) {
        /* Keep the send queue drained while spinning; read the clock only now and then. */
        if ((++spins & 0xff) == 0) {
            if (c->outstanding && nt_poll(c, 16, NULL) < 0)
                return -1;
            if (deadline == 0) {
                t0 = nt_clock_s();
                deadline = t0 + c->timeout_s;
            } else if (nt_expired(c, deadline, "RDMA WRITE from the peer")) {
                return -1;
            } else {
                nt_backoff(t0, 0);
            }
        }
    }
    return 0;
}

static int nt_write_mark(nt_rdma_conn_t *c, size_t bytes, uint8_t mark)
{
    c->buf[c->max_bytes + bytes - 1] = mark;
    if (c->outstanding >= NT_SQ_DEPTH / 2 && nt_drain(c) < 0)
        return -1;
    return nt_post_write(c, 0, bytes, 1);
}

static uint8_t nt_next_mark(nt_rdma_conn_t *c)
{
    c->mark = (uint8_t)(c->mark % 255 + 1); /* 1..255: never the zeroed buffer's 0 */
    return c->mark;
}

nt_status_t nt_rdma_write_lat(nt_rdma_conn_t *c, nt_rdma_conn_t *peer, int initiator,
                              size_t bytes, unsigned iters, double *samples)
{
    if (bytes < 1 || bytes > c->max_bytes)
        return NT_ERR_INVALID;
    if (c->buf_kind != 0 || (peer && peer->buf_kind != 0)) {
        nt_seterr(c, "RDMA WRITE latency polls the buffer with the CPU: GPU memory cannot be "
                     "polled by the CPU");
        return NT_ERR_UNSUPPORTED;
    }
    for (unsigned i = 0; i < iters; i++) {
        uint8_t m = nt_next_mark(c);
        double t0 = nt_clock_s();
        if (peer) {
            /* Loopback: this thread plays both ends. */
            peer->mark = m;
            if (nt_write_mark(c, bytes, m) < 0 || nt_wait_mark(peer, bytes, m) < 0 ||
                nt_write_mark(peer, bytes, m) < 0 || nt_wait_mark(c, bytes, m) < 0)
                return nt_fail_status(c->err[0] ? c : peer);
        } else if (initiator) {
            if (nt_write_mark(c, bytes, m) < 0 || nt_wait_mark(c, bytes, m) < 0)
                return nt_fail_status(c);
        } else {
            if (nt_wait_mark(c, bytes, m) < 0 || nt_write_mark(c, bytes, m) < 0)
                return nt_fail_status(c);
        }
        if (samples)
            samples[i] = (nt_clock_s() - t0) / 2.0;
    }
    if (nt_drain(c) < 0 || (peer && nt_drain(peer) < 0))
        return nt_fail_status(c);
    return NT_OK;
}

nt_status_t nt_rdma_send_lat(nt_rdma_conn_t *c, nt_rdma_conn_t *peer, int initiator,
                             size_t bytes, unsigned iters, double *samples)
{
    if (bytes < 1 || bytes > c->max_bytes)
        return NT_ERR_INVALID;
    /* One receive always posted ahead on each end; RNR retries cover the start. */
    if (nt_post_recv(c, c->max_bytes) < 0 || (peer && nt_post_recv(peer, peer->max_bytes) < 0))
        return nt_fail_status(c);
    for (unsigned i = 0; i < iters; i++) {
        double t0 = nt_clock_s();
        int last = i + 1 == iters;
        if (peer) {
            if (nt_post_send(c, bytes) < 0 || nt_wait_recv(peer, 0) < 0 ||
                (!last && nt_post_recv(peer, peer->max_bytes) < 0) || nt_post_send(peer, bytes) < 0 ||
                nt_wait_recv(c, 0) < 0 || (!last && nt_post_recv(c, c->max_bytes) < 0))
                return nt_fail_status(c->err[0] ? c : peer);
        } else if (initiator) {
            if (nt_post_send(c, bytes) < 0 || nt_wait_recv(c, 0) < 0 ||
                (!last && nt_post_recv(c, c->max_bytes) < 0))
                return nt_fail_status(c);
        } else {
            if (nt_wait_recv(c, 0) < 0 || (!last && nt_post_recv(c, c->max_bytes) < 0) ||
                nt_post_send(c, bytes) < 0)
                return nt_fail_status(c);
        }
        if (c->outstanding >= NT_SQ_DEPTH / 2 && nt_drain(c) < 0)
            return nt_fail_status(c);
        if (samples)
            samples[i] = (nt_clock_s() - t0) / 2.0;
    }
    if (nt_drain(c) < 0 || (peer && nt_drain(peer) < 0))
        return nt_fail_status(c);
    return NT_OK;
}

nt_status_t nt_rdma_stream_expect(nt_rdma_conn_t *c)
{
    c->stream_role = 2;
    c->stream_done = 0;
    c->stream_first_s = c->stream_end_s = c->stream_prog_s = 0;
    return nt_post_recv(c, NT_DONE_BYTES) < 0 ? NT_ERR_SYSTEM : NT_OK;
}

nt_status_t nt_rdma_stream_start(nt_rdma_conn_t *c, size_t total, unsigned window)
{
    if (total == 0 || window < 1 || window > NT_SQ_DEPTH)
        return NT_ERR_INVALID;
    c->stream_role = 1;
    c->stream_done = 0;
    c->stream_left = total;
    c->stream_window = window;
    c->stream_first_s = c->stream_end_s = 0;
    c->stream_prog_s = nt_clock_s();
    return NT_OK;
}

nt_status_t nt_rdma_stream_progress(nt_rdma_conn_t *c, double deadline, int *done)
{
    unsigned recvs = c->recvs_done;
    double tdone = 0, now;
    int got;

    *done = c->stream_done;
    if (c->stream_done)
        return NT_OK;
    if (c->stream_role == 1)
        while (c->stream_left > 0 && c->outstanding < c->stream_window) {
            size_t m = c->stream_left < c->max_bytes ? c->stream_left : c->max_bytes;
            int last = m == c->stream_left;
            if (nt_post_write_op(c, 0, m, 1,
                                 last ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE) < 0)
                return NT_ERR_SYSTEM;
            if (c->stream_first_s == 0)
                c->stream_first_s = nt_clock_s();
            c->stream_left -= m;
        }
    got = nt_poll(c, 16, &tdone);
    if (got < 0)
        return NT_ERR_SYSTEM;
    now = nt_clock_s();
    if (got > 0 || c->recvs_done != recvs)
        c->stream_prog_s = now;
    if ((c->stream_role == 1 && c->stream_left == 0 && c->outstanding == 0) ||
        (c->stream_role == 2 && c->recvs_done > 0)) {
        if (c->stream_role == 2)
            c->recvs_done--;
        c->stream_done = *done = 1;
        c->stream_end_s = tdone > 0 ? tdone : now;
        return NT_OK;
    }
    if (c->stream_role == 1 && now - c->stream_prog_s > c->timeout_s) {
        nt_seterr(c, "no RDMA WRITE completion on %s:%d within %.0f s: the peer stopped "
                     "answering, or its packets do not arrive (check the GID index, VLAN/traffic "
                     "class, cabling)",
                  c->dev, c->port, c->timeout_s);
        return NT_ERR_TIMEOUT;
    }
    if (now > deadline) {
        if (c->stream_role == 1)
            nt_seterr(c, "the RDMA WRITEs on %s:%d did not complete before the deadline (%zu "
                         "bytes not posted, %u writes in flight)",
                      c->dev, c->port, c->stream_left, c->outstanding);
        else
            nt_seterr(c, "the peer's last RDMA WRITE did not arrive on %s:%d before the "
                         "deadline",
                      c->dev, c->port);
        return NT_ERR_TIMEOUT;
    }
    return NT_OK;
}

void nt_rdma_stream_times(const nt_rdma_conn_t *c, double *first_s, double *end_s)
{
    *first_s = c->stream_first_s;
    *end_s = c->stream_end_s;
}
