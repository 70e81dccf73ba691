/* The ibverbs data path of the RDMA probe (verbs_path.c), on libibverbs opened at run time (ibv.h).
 *
 * Measurements follow perftest (linux-rdma/perftest):
 * - bandwidth: RDMA WRITEs kept `window` deep across the QPs, all from one source region into
 *   one remote region; a run of iters x window writes gives one sample per window,
 *   window x bytes / (time between the completions that close consecutive windows), the first
 *   measured from the first post; over the run that is perftest's
 *   BW = bytes x writes / (last completion - first post);
 * - RDMA WRITE latency: ping-pong where each side polls the last byte of its receive region
 *   for the iteration's mark (ib_write_lat), one sample = round trip / 2;
 * - send/receive latency: ping-pong of SENDs into pre-posted receives (ib_send_lat), RTT / 2.
 * Every wait polls with a deadline (NT_ERR_TIMEOUT) and every failure leaves a sentence in
 * conn->err that says what to check. */
#ifndef NT_PROBE_RDMA_VERBS_H
#define NT_PROBE_RDMA_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include "nettune/status.h"
#include "rdma.h"

#define NT_RDMA_MAX_QPS 64
#define NT_RDMA_INFO_MAGIC 0x4e545244u /* "NTRD" */

/* What one end tells the other (fixed layout, sent with the launcher). */
typedef struct nt_rdma_ep_info {
    uint32_t magic;
    int32_t status;        /* 0 = ready; else the sender failed (its sentence in err) */
    uint32_t nqps;
    uint32_t psn;
    uint32_t qpn[NT_RDMA_MAX_QPS];
    uint64_t addr;         /* receive region (RDMA WRITE target) */
    uint32_t rkey;
    uint32_t lid;
    uint8_t gid[16];
    int32_t gid_index;
    int32_t mtu;           /* enum ibv_mtu of the sender's port */
    int32_t port;
    char dev[64];
    char err[256];
} nt_rdma_ep_info_t;

typedef struct nt_rdma_conn_params {
    const nt_rdma_port_t *port;
    int nqps;              /* 1..NT_RDMA_MAX_QPS */
    size_t max_bytes;      /* largest message; the buffer holds two regions of this size */
    int gid_index;
    int traffic_class;     /* NCCL_IB_TC, -1 = 0 */
    int service_level;     /* NCCL_IB_SL, -1 = 0 */
    double timeout_s;      /* deadline of one wait (a poll for a completion or a mark) */
    int numa_node;         /* bind the buffer there (-1 = no binding) */
    int gpu;               /* -1 = host memory, else CUDA device ordinal by PCI bus id below */
    const char *gpu_bus_id;
} nt_rdma_conn_params_t;

typedef struct nt_rdma_conn nt_rdma_conn_t;

/* nt_rdma_conn_create - open the device, allocate PD, CQ, nqps RC QPs (moved to INIT), the
 * buffer (host memory bound to numa_node, or GPU memory) and its MR. On failure returns the
 * status and, in err, a sentence (reg_mr ENOMEM/EPERM names `ulimit -l`). */
nt_status_t nt_rdma_conn_create(const nt_rdma_conn_params_t *cp, nt_rdma_conn_t **out, char *err,
                                size_t errlen);
/* nt_rdma_conn_info - this end's description for the peer (status 0). */
void nt_rdma_conn_info(const nt_rdma_conn_t *c, nt_rdma_ep_info_t *info);
/* nt_rdma_conn_connect - RTR and RTS against the peer's info. A failure names the state, the
 * GIDs, the GID index and the port. */
nt_status_t nt_rdma_conn_connect(nt_rdma_conn_t *c, const nt_rdma_ep_info_t *remote);
/* nt_rdma_conn_error - the last failure's sentence ("" if none). */
const char *nt_rdma_conn_error(const nt_rdma_conn_t *c);
/* nt_rdma_conn_memory - "host", "gpu (dma-buf)", "gpu (peer memory)". */
const char *nt_rdma_conn_memory(const nt_rdma_conn_t *c);
/* nt_rdma_conn_numa - the NUMA binding of the buffer in words ("node 0 (mbind)", "none: ..."). */
const char *nt_rdma_conn_numa(const nt_rdma_conn_t *c);
void nt_rdma_conn_destroy(nt_rdma_conn_t *c);

/* Bandwidth: the initiator writes iters x window messages of bytes and fills samples (B/s);
 * then sends a "done" message. The responder waits for that message. peer is the in-process
 * other end for a loopback (then nobody waits), else NULL. */
nt_status_t nt_rdma_write_bw(nt_rdma_conn_t *c, nt_rdma_conn_t *peer, int initiator, size_t bytes,
                             unsigned window, unsigned iters, double *samples);
/* nt_rdma_window - the window used for a message size: 16 MiB in flight, 1 to 64 messages. */
unsigned nt_rdma_window(size_t bytes);
/* RDMA WRITE ping-pong latency; samples in seconds (one-way = RTT / 2), initiator only.
 * NT_ERR_UNSUPPORTED on GPU memory: the test polls the buffer's last byte with the CPU. */
nt_status_t nt_rdma_write_lat(nt_rdma_conn_t *c, nt_rdma_conn_t *peer, int initiator,
                              size_t bytes, unsigned iters, double *samples);
/* SEND/RECV ping-pong latency; samples in seconds (RTT / 2), initiator only. */
nt_status_t nt_rdma_send_lat(nt_rdma_conn_t *c, nt_rdma_conn_t *peer, int initiator,
                             size_t bytes, unsigned iters, double *samples);

/* A bounded transfer that one thread drives on many connections at once (the fabric phases,
 * probes/fabric/fabric_rdma.c), where nt_rdma_write_bw blocks on one: the sender writes total
 * bytes in RDMA WRITEs of at most the connection's max_bytes, window deep, on QP 0, the last
 * one WITH_IMM; the receiver's one posted receive completes when that last write landed (RC
 * delivers in order, so every earlier byte is there too). Nothing touches the data.
 *
 * nt_rdma_stream_expect - the receiving end: post the receive for the last write (before the
 * sender starts: a write WITH_IMM into a QP without a receive is an RNR retry). NT_OK or
 * NT_ERR_SYSTEM with the sentence in nt_rdma_conn_error. */
nt_status_t nt_rdma_stream_expect(nt_rdma_conn_t *c);
/* nt_rdma_stream_start - the sending end (connected): total bytes (> 0), window writes in
 * flight at most (1..128). NT_ERR_INVALID otherwise. Nothing is posted before the first
 * nt_rdma_stream_progress. */
nt_status_t nt_rdma_stream_start(nt_rdma_conn_t *c, size_t total, unsigned window);
/* nt_rdma_stream_progress - post what the window allows and poll the CQ once, never blocking;
 * *done = 1 once the sender's last write completed (the peer acknowledged it) or the
 * receiver's receive completed. NT_OK (done or not); NT_ERR_TIMEOUT when the sender saw no
 * completion for the connection's timeout_s, or deadline (nt_clock_s seconds) passed;
 * NT_ERR_SYSTEM on a post or completion error; the sentence in nt_rdma_conn_error. */
nt_status_t nt_rdma_stream_progress(nt_rdma_conn_t *c, double deadline, int *done);
/* nt_rdma_stream_times - nt_clock_s of the first post (sender; 0 before) and of the completion
 * that ended the transfer (0 before). */
void nt_rdma_stream_times(const nt_rdma_conn_t *c, double *first_s, double *end_s);

/* nt_rdma_wc_explain - a sentence for a work-completion status (retry exceeded: "the two ports
 * cannot reach each other: check the GID index, VLAN/traffic class, cabling"). */
const char *nt_rdma_wc_explain(int wc_status);

/* nt_rdma_port_query - fill what only verbs know (active/max MTU, gid_tbl_len, the rate when
 * sysfs had none, max rate unknown) for every port of inv. Devices that cannot be opened are
 * left as sysfs showed them. */
void nt_rdma_port_query(nt_rdma_inv_t *inv);

/* numa_bind.c: bind the calling thread to the CPUs of a NUMA node (sysfs cpulist) and report
 * it; nt_numa_unbind restores the saved mask. Return 0 on success, -1 with why filled. */
typedef struct nt_numa_saved {
    int saved;
    unsigned char mask[128]; /* cpu_set_t storage */
} nt_numa_saved_t;
int nt_numa_bind_cpus(int node, nt_numa_saved_t *saved, char *why, size_t whylen);
void nt_numa_unbind(nt_numa_saved_t *saved);
/* nt_numa_bind_mem - mbind(MPOL_BIND) of [addr, addr+len) to node before first touch;
 * 0 or -1 with why. */
int nt_numa_bind_mem(void *addr, size_t len, int node, char *why, size_t whylen);

/* gpu_mem.c: GPU memory for RDMA through the CUDA driver API (dlopen libcuda.so.1).
 * nt_gpu_alloc: cuMemAlloc on the device with this PCI bus id (or ordinal); *dmabuf_fd from
 * cuMemGetHandleForAddressRange (-1 when the driver cannot export dma-buf).
 * NT_ERR_UNSUPPORTED with why when there is no CUDA driver or device. */
nt_status_t nt_gpu_alloc(int ordinal, const char *bus_id, size_t bytes, void **dptr,
                         int *dmabuf_fd, char *why, size_t whylen);
void nt_gpu_free(void *dptr, int dmabuf_fd);
/* nt_gpu_peermem_loaded - whether the nvidia peer-memory path exists
 * (/sys/kernel/mm/memory_peers/nv_mem or /sys/module/nvidia_peermem). */
int nt_gpu_peermem_loaded(void);

#endif
