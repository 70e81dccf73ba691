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
 * and what a round costs; the schedule's estimates use them. RDMA: not built (the section's transport is "tcp", and transport_reason says why). */
#ifndef NETTUNE_PROBES_FABRIC_H
#define NETTUNE_PROBES_FABRIC_H

#include <cjson/cJSON.h>

#include "nettune/fabsched.h"
#include "probe.h"

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
