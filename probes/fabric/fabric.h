/* The fabric phases under load (docs/fabric.md): after the pairwise rounds of --full, or alone
 * with --fabric, every node sends at once, by the schedule of include/nettune/fabsched.h, and
 * rank 0 writes the report's "fabric" section.
 *
 * One rank per node takes part: its local rank 0, with one flow per rail from that rank. The
 * flows are the probe's own TCP sockets, one connection per flow, bound to the address (and,
 * with several rails, the device: SO_BINDTODEVICE) of the rail's interface, so that Open MPI's
 * striping of its TCP transport over every interface does not blur a rail. The rails are the
 * interfaces of --fabric-ifaces, in that order, else one: the interface holding the address
 * this host's name resolves to (what a launcher reaches it by), else the first interface that
 * is up with an IPv4 address, else lo. The listening addresses go through the launcher
 * (allgather).
 *
 * A round: rank 0 says go or stop (the budget, --time-limit, a signal), the senders connect
 * and the receivers accept (before the clock starts), a barrier, then every flow of the round
 * at once, each timed by its sender from the barrier to the receiver's one-byte ack. Every
 * wait has a deadline (--peer-timeout without progress): a peer that is gone makes its flows
 * "ok": false, never a hang. The serialization of one machine's pairs (run.serialized) does not
 * apply here: these flows run at once by design. Before the schedule, a calibration (one flow
 * alone, then a ring of every node at once) measures what a flow costs alone and under load
 * and what a round costs; the schedule's estimates use them.
 *
 * RDMA (fabric_rdma.c): where every rail of every node is carried by an ACTIVE RDMA port (with
 * a GID on RoCE), the flows are RC QPs with RDMA WRITE instead of the sockets, set up by the
 * RDMA probe's verbs layer (probes/rdma/verbs.h); else the sockets, and the section's
 * transport_reason names the node, the rail and why. */
#ifndef NETTUNE_PROBES_FABRIC_H
#define NETTUNE_PROBES_FABRIC_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "nettune/fabsched.h"
#include "probe.h"
#include "rdma/verbs.h"

/* Default bytes per flow and budget of the phases. */
#define NT_FAB_DEFAULT_BYTES (16u << 20)
#define NT_FAB_DEFAULT_BUDGET_S 60.0

/* One flow's outcome, as the sender measured it: seconds from the round's barrier to the ack,
 * and the sender's monotonic clock (nt_clock_s) when its first byte went out and when the ack
 * came (0 for what did not happen). */
typedef struct nt_fab_result {
    double time_s, start_s, end_s;
    int ok;
} nt_fab_result_t;

/* What a run measured, for tests: the schedule and one result per flow (rank 0 only). */
typedef struct nt_fab_trace {
    nt_fab_schedule_t sched;
    nt_fab_result_t *results; /* sched.nflows entries */
    size_t rounds_run;
} nt_fab_trace_t;

/* ---------------------------------------------------------------- fabric_rdma.c */

/* Largest RDMA WRITE of a flow: a flow of more bytes writes the same 1 MiB source region into
 * the same remote region again, so that each end registers 2 MiB, whatever --fabric-bytes. */
#define NT_FAB_RDMA_MSG (1u << 20)

/* What a node says about one of its rails (fixed layout: it goes through an allgather). */
typedef struct nt_fab_rdma_rail {
    int32_t ok;          /* 1: an ACTIVE RDMA port carries the rail (with a GID on RoCE) */
    int32_t port;        /* its port number */
    int32_t gid_index;   /* the GID the QPs use (NCCL's choice, or --gid-index) */
    int32_t is_ethernet; /* RoCE */
    char ifname[16];     /* the rail's interface */
    char dev[64];        /* the RDMA device ("mlx5_0", "rxe0") */
    char why[256];       /* ok == 0: why not, in words */
} nt_fab_rdma_rail_t;

/* nt_fab_rdma_rail_check - which RDMA port of inv (read by nt_rdma_inventory_read, selected by
 * nt_rdma_port_select) carries the rail on interface ifname, and whether it can: the port
 * whose network device is ifname (RoCE: rxe's parent, else a GID's netdev), else the port of
 * the PCI function ifname belongs to (IPoIB: /sys/class/net/<if>/device is if_bdf, and
 * /sys/class/net/<if>/dev_port + 1 is if_port, 0 when unknown). ok = 1 when that port is
 * selected (NCCL_IB_HCA), ACTIVE, and on RoCE has a non-zero GID at its chosen index; else
 * ok = 0 and why says which of these failed ("no RDMA port carries eth0 ...", "rxe1:1, the
 * RDMA port of dummy0, is DOWN ..."). inv NULL or empty: "no RDMA device" with no_dev_why
 * (the inventory's reason) when given. Pure: reads nothing. */
void nt_fab_rdma_rail_check(const nt_rdma_inv_t *inv, const char *no_dev_why, const char *ifname,
                            const char *if_bdf, int if_port, nt_fab_rdma_rail_t *out);

/* nt_fab_transport_choose - the transport of the fabric phases from every node's rails:
 * facts[node * nrails + rail], hosts[node] the node names. RDMA (returns 1) only when every
 * rail of every node is ok: a loaded flow is compared with its pair alone, and the phases
 * share nodes, so one transport runs all of them. why gets the reason in words: for RDMA the
 * ports of node 0; for sockets the first node and rail that lack it and why ("no RDMA path on
 * fake3, rail 0 (eth0): no RDMA device ...; 1 of 4 nodes lack one"). Pure. */
int nt_fab_transport_choose(const nt_fab_rdma_rail_t *facts, int nnodes, int nrails,
                            const char *const *hosts, char *why, size_t whylen);

/* The QP exchange of a round: one record per (flow, end), packed little-endian into
 * NT_FAB_QP_MSG_BYTES bytes: magic "ntFQ", flow (schedule index), status (0 ready, else the
 * nt_status_t of the failed set-up), end (1 sender, 2 receiver), QP number, PSN, rkey, the
 * receive region's address, LID, GID index, path MTU (enum ibv_mtu), port, GID. */
#define NT_FAB_QP_MSG_BYTES 68
#define NT_FAB_QP_MAGIC 0x7146746eu /* "ntFq" read little-endian */

/* nt_fab_qp_pack - ep's first QP (nqps 1) and the flow's facts into out. */
void nt_fab_qp_pack(uint32_t flow, int32_t status, int end, const nt_rdma_ep_info_t *ep,
                    uint8_t out[NT_FAB_QP_MSG_BYTES]);
/* nt_fab_qp_unpack - the reverse: ep gets magic NT_RDMA_INFO_MAGIC, nqps 1 and the fields
 * (dev is left empty: the caller knows it from the rails). NT_ERR_NOT_FOUND for an empty slot
 * (all zero: a rank with fewer records), NT_ERR_PARSE for any other magic or an end other than
 * 1 or 2. */
nt_status_t nt_fab_qp_unpack(const uint8_t in[NT_FAB_QP_MSG_BYTES], uint32_t *flow,
                             int32_t *status, int *end, nt_rdma_ep_info_t *ep);

typedef struct nt_fab_rdma nt_fab_rdma_t;

/* nt_fab_rdma_open - collective (every rank, after the rails are agreed): node leaders
 * (leader != 0) read their RDMA ports (libibverbs, sysfs, NCCL_IB_HCA, NCCL's GID choice or
 * --gid-index) and say for each of their nrails interfaces ifnames[r] whether RDMA carries
 * it; an allgather gives every rank the same facts and the same choice
 * (nt_fab_transport_choose). *out: the RDMA state when RDMA was chosen, else NULL; why: the
 * reason either way. NT_OK; NT_ERR_NOMEM; NT_ERR_PEER when the allgather failed. */
nt_status_t nt_fab_rdma_open(nt_probe_t *p, int leader, const char (*ifnames)[16], int nrails,
                             nt_fab_rdma_t **out, char *why, size_t whylen);

/* nt_fab_rdma_round - one round's flows[0..n) (the schedule's first.. .) over RDMA, on every
 * rank (it holds an allgather and a barrier): the leaders of the flows' nodes create one RC QP
 * per flow and end (before the clock), exchange them (allgather of packed records), connect;
 * a barrier; then every sender writes its bytes at once, each timed from the barrier to its
 * last write's completion, never longer than cap_s. The outcomes of this node's sent flows go
 * to flow_ids[i] and res[i], *nres of them (room for every flow of the round). A flow whose
 * set-up or transfer failed is ok = 0, and the log says why. The round's QPs stay until the
 * next round or close (a receiver gone early would turn a late retransmission into a failed
 * flow). NT_OK; NT_ERR_NOMEM; NT_ERR_PEER when a collective failed. */
nt_status_t nt_fab_rdma_round(nt_fab_rdma_t *r, nt_probe_t *p, const nt_fab_flow_t *flows,
                              size_t first, size_t n, double cap_s, uint32_t *flow_ids,
                              nt_fab_result_t *res, size_t *nres);

/* nt_fab_rdma_close - free r (NULL is fine); with sync, a barrier first (every rank calls it,
 * so that no receiver destroys a QP that a sender still uses). */
void nt_fab_rdma_close(nt_fab_rdma_t *r, nt_probe_t *p, int sync);

/* nt_fabric_wanted - whether the run has fabric phases: --fabric, or --full with a budget. */
int nt_fabric_wanted(const nt_probe_params_t *params);

/* Bytes of the line nt_fabric_ifaces_check gives (the interfaces a host has, listed). */
#define NT_FAB_IFACE_ERR_MAX 512

/* nt_fabric_ifaces_check - before anything is measured: every name of --fabric-ifaces is an
 * interface of every node (if_nametoindex on each node's leader, the rank that opens the
 * rails). A name that is none (mistyped) is a bad option, exit 2, not a skip after the
 * pairwise rounds. Collective: every rank calls it. Does nothing (NT_OK) where the run has no
 * fabric phases or no --fabric-ifaces. Returns NT_OK; NT_ERR_NOT_FOUND on every rank when a
 * node lacks one, with err (len bytes, NT_FAB_IFACE_ERR_MAX are enough) the one line of the
 * first such node: "no interface 'eht0' on h1 (--fabric-ifaces eht0): give the rails by the
 * names of its interfaces: lo, eth0"; NT_ERR_NOMEM; NT_ERR_PEER when the launcher failed. An
 * interface that exists but is down or has no IPv4 address is not this check's: the phases
 * skip with the node named (nt_fabric_run). */
nt_status_t nt_fabric_ifaces_check(nt_probe_t *p, char *err, size_t len);

/* nt_fabric_run - the fabric phases on this rank (every rank of the job calls it at the same
 * time: collectives). On rank 0 *section gets the report's "fabric" object (status "ran",
 * "partial" with the reason, or "skipped" with the reason: --local, one node, an interface of
 * --fabric-ifaces missing on a node); NULL elsewhere. trace (may be NULL) gets the schedule and
 * the results on rank 0; free it with nt_fabric_trace_free. Returns NT_OK, NT_ERR_NOMEM, or
 * NT_ERR_PEER when the launcher failed (a rank is gone: the run cannot go on; rank 0 still has
 * the section of what was measured, status "partial"). */
nt_status_t nt_fabric_run(nt_probe_t *p, cJSON **section, nt_fab_trace_t *trace);

/* nt_fabric_trace_free - free what nt_fabric_run put in t (a zeroed t is fine). */
void nt_fabric_trace_free(nt_fab_trace_t *t);

#endif
