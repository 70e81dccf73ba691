/* MPI point-to-point probe, the baseline that works on every cluster.
 * Latency: ping-pong, one-way = round trip / 2 (as osu_latency). Bandwidth: a window of up to
 * 64 non-blocking sends then a 4-byte acknowledgement (as osu_bw); one sample per window, the
 * window and the iteration count grown by the driver to fit the time budget (lib/engine/bench.c).
 * Bandwidth is measured in both directions of a pair: the reverse is a link of its own.
 * Every wait has the peer deadline, counted from the last progress (a completed message): a
 * dead peer costs a timeout, never a hang; a slow one is measured. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_mpi.h"
#include "../launcher_mpi.h"
#include "../probe_util.h"
#include "nettune/bench.h"
#include "nettune/clock.h"
#include "nettune/log.h"

#define NT_MPI_WINDOW 64 /* osu_bw's window size: the largest window */
#define NT_MPI_TAG_DATA 11
#define NT_MPI_TAG_ACK 12
#define NT_MPI_TAG_AGREE 13
#define NT_MPI_TAG_RESULT 14

struct nt_mpi_state {
    MPI_Comm comm; /* a communicator of its own: control messages never mix with data */
    char *sbuf, *rbuf;
    size_t maxb;
    int peer, initiator;
    double timeout_s;            /* of every wait: a dead peer costs this, a slow one does not */
    volatile sig_atomic_t *stop; /* the run's stop flag (nt_probe_t.stop); NULL: none */
    int yield;        /* the host runs more probe ranks than it has cores: waits give the CPU up */
    unsigned slow_us; /* test hook NETTUNE_TEST_SLOW_RANK: a slow node, for blame tests */
    double slow_factor; /* test hook NETTUNE_TEST_SLOW_FACTOR: transfers this many times slower */
    int ackv;      /* the bandwidth test's acknowledgement (heap: a request may outlive a run) */
    int abandoned; /* a wait gave up (signal, dead peer): a cancelled request may still be in
                    * MPI's hands, so sbuf/rbuf are never freed (Open MPI's TCP transport read a
                    * 4 MiB message into a freed buffer after a SIGINT: "Read -1, errno = 14") */
    struct nt_mpi_state *kept_next; /* abandoned states, kept reachable (nt_mpi_kept) */
};

/* Abandoned states: kept, not freed, and reachable from here (not a leak to LeakSanitizer). */
static struct nt_mpi_state *nt_mpi_kept;

/* Test hook: make the transfer that started at t0 take slow_factor times as long. The transfer
 * time is taken as at most 10 ms, so that a stall of an oversubscribed test host (a rank
 * descheduled for a few ms) is not stretched into a dead-looking peer. */
static void nt_mpi_slow_down(const nt_mpi_state_t *s, double t0)
{
    if (s->slow_factor > 1.0) {
        double dt = nt_clock_s() - t0;
        double d = (dt < 0.01 ? dt : 0.01) * (s->slow_factor - 1.0);
        if (d > 0)
            usleep((useconds_t)(d * 1e6));
    }
}

static nt_status_t nt_mpi_w(nt_mpi_state_t *s, MPI_Request *r)
{
    nt_status_t st = nt_mpi_wait(r, s->timeout_s, s->yield ? NT_MPI_WAIT_YIELD : 0, s->stop, 1);
    if (st != NT_OK)
        s->abandoned = 1;
    return st;
}

/* A wait of the window gave up: the window's other requests, from..n-1, are cancelled and
 * freed too (never left active with the buffers), and the state is marked abandoned. */
static nt_status_t nt_mpi_abandon(nt_mpi_state_t *s, MPI_Request *req, unsigned from, unsigned n,
                                  nt_status_t st)
{
    for (unsigned w = from; w < n; w++)
        if (req[w] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[w]);
            MPI_Request_free(&req[w]);
        }
    s->abandoned = 1;
    return st;
}

/* Messages up to this size go out with a blocking MPI_Send: every Open MPI transport sends them
 * eagerly (vader's eager limit is 4 KiB, TCP's 64 KiB), so the call returns without the peer,
 * and it takes MPI's immediate-send fast path, which a request-based send does not: on shared
 * memory the request path costs 15% more per round trip (make bench). A dead peer cannot make
 * it block; larger messages use MPI_Isend with the deadline. */
#define NT_MPI_EAGER_SAFE 1024

static nt_status_t nt_mpi_send_small(nt_mpi_state_t *s, size_t bytes)
{
    MPI_Request sr;
    if (bytes <= NT_MPI_EAGER_SAFE)
        return MPI_Send(s->sbuf, (int)bytes, MPI_BYTE, s->peer, NT_MPI_TAG_DATA, s->comm) ==
                       MPI_SUCCESS
                   ? NT_OK
                   : NT_ERR_PEER;
    MPI_Isend(s->sbuf, (int)bytes, MPI_BYTE, s->peer, NT_MPI_TAG_DATA, s->comm, &sr);
    return nt_mpi_w(s, &sr);
}

static nt_status_t nt_mpi_lat_run(void *ctx, size_t bytes, unsigned window, unsigned iters,
                                  double *samples)
{
    nt_mpi_state_t *s = ctx;
    MPI_Request rr;
    nt_status_t st;
    double prev;

    (void)window; /* one message each way per iteration */
    /* One clock read per round trip: the end of one is the start of the next, so a sample
     * holds the whole loop body, as the reference's total / iterations does. */
    prev = nt_clock_s();
    for (unsigned i = 0; i < iters; i++) {
        if (s->slow_us)
            usleep(s->slow_us);
        if (s->initiator) {
            double now;
            /* Send first, then post the receive, as a blocking MPI_Send/MPI_Recv pair does:
             * with Open MPI's shared memory a reply that arrives before its receive is posted
             * is taken faster than one matched to a posted receive (make bench: 1.13 -> 1.09
             * of the reference loop). */
            if ((st = nt_mpi_send_small(s, bytes)) != NT_OK)
                return st;
            MPI_Irecv(s->rbuf, (int)bytes, MPI_BYTE, s->peer, NT_MPI_TAG_DATA, s->comm, &rr);
            if ((st = nt_mpi_w(s, &rr)) != NT_OK)
                return st;
            nt_mpi_slow_down(s, prev);
            now = nt_clock_s();
            if (samples)
                samples[i] = (now - prev) / 2.0;
            prev = now;
        } else {
            double t0 = s->slow_factor > 1.0 ? nt_clock_s() : 0;
            MPI_Irecv(s->rbuf, (int)bytes, MPI_BYTE, s->peer, NT_MPI_TAG_DATA, s->comm, &rr);
            if ((st = nt_mpi_w(s, &rr)) != NT_OK)
                return st;
            nt_mpi_slow_down(s, t0);
            if ((st = nt_mpi_send_small(s, bytes)) != NT_OK)
                return st;
        }
    }
    return NT_OK;
}

static nt_status_t nt_mpi_bw_run(void *ctx, size_t bytes, unsigned window, unsigned iters,
                                 double *samples)
{
    nt_mpi_state_t *s = ctx;
    MPI_Request req[NT_MPI_WINDOW], ack;
    nt_status_t st;

    if (window < 1 || window > NT_MPI_WINDOW)
        return NT_ERR_INVALID;
    for (unsigned i = 0; i < iters; i++) {
        double t0;
        if (s->slow_us)
            usleep(s->slow_us * 2);
        t0 = nt_clock_s();
        if (s->initiator) {
            for (unsigned w = 0; w < window; w++)
                MPI_Isend(s->sbuf, (int)bytes, MPI_BYTE, s->peer, NT_MPI_TAG_DATA, s->comm,
                          &req[w]);
            for (unsigned w = 0; w < window; w++)
                if ((st = nt_mpi_w(s, &req[w])) != NT_OK)
                    return nt_mpi_abandon(s, req, w + 1, window, st);
            MPI_Irecv(&s->ackv, 1, MPI_INT, s->peer, NT_MPI_TAG_ACK, s->comm, &ack);
            if ((st = nt_mpi_w(s, &ack)) != NT_OK)
                return st;
            nt_mpi_slow_down(s, t0);
            if (samples)
                samples[i] = (double)bytes * window / (nt_clock_s() - t0);
        } else {
            for (unsigned w = 0; w < window; w++)
                MPI_Irecv(s->rbuf, (int)bytes, MPI_BYTE, s->peer, NT_MPI_TAG_DATA, s->comm,
                          &req[w]);
            for (unsigned w = 0; w < window; w++)
                if ((st = nt_mpi_w(s, &req[w])) != NT_OK)
                    return nt_mpi_abandon(s, req, w + 1, window, st);
            nt_mpi_slow_down(s, t0);
            MPI_Isend(&s->ackv, 1, MPI_INT, s->peer, NT_MPI_TAG_ACK, s->comm, &ack);
            if ((st = nt_mpi_w(s, &ack)) != NT_OK)
                return st;
        }
    }
    return NT_OK;
}

static nt_status_t nt_mpi_agree(void *ctx, nt_bench_plan_t *plan)
{
    nt_mpi_state_t *s = ctx;
    unsigned v[2] = {plan->window, plan->iters};
    MPI_Request r;
    nt_status_t st;
    if (s->initiator)
        MPI_Isend(v, 2, MPI_UNSIGNED, s->peer, NT_MPI_TAG_AGREE, s->comm, &r);
    else
        MPI_Irecv(v, 2, MPI_UNSIGNED, s->peer, NT_MPI_TAG_AGREE, s->comm, &r);
    st = nt_mpi_w(s, &r);
    plan->window = v[0];
    plan->iters = v[1];
    return st;
}

static const nt_bench_ops_t nt_mpi_lat_ops = {
    .name = "mpi.pingpong", .run = nt_mpi_lat_run, .agree = nt_mpi_agree};
static const nt_bench_ops_t nt_mpi_bw_ops = {
    .name = "mpi.window", .run = nt_mpi_bw_run, .agree = nt_mpi_agree};

nt_status_t nt_mpi_state_create(MPI_Comm base, size_t max_bytes, double timeout_s,
                                nt_mpi_state_t **out)
{
    nt_mpi_state_t *s = calloc(1, sizeof(*s));

    *out = NULL;
    if (!s)
        return NT_ERR_NOMEM;
    s->sbuf = malloc(max_bytes);
    s->rbuf = malloc(max_bytes);
    if (!s->sbuf || !s->rbuf)
        goto nomem;
    memset(s->sbuf, 0xa5, max_bytes);
    memset(s->rbuf, 0, max_bytes);
    s->maxb = max_bytes;
    s->timeout_s = timeout_s;
    if (MPI_Comm_dup(base, &s->comm) != MPI_SUCCESS) {
        free(s->sbuf);
        free(s->rbuf);
        free(s);
        return NT_ERR_SYSTEM;
    }
    *out = s;
    return NT_OK;
nomem:
    free(s->sbuf);
    free(s->rbuf);
    free(s);
    return NT_ERR_NOMEM;
}

void nt_mpi_state_destroy(nt_mpi_state_t *s)
{
    if (!s)
        return;
    MPI_Comm_free(&s->comm);
    if (s->abandoned) {
        /* MPI may still write into the buffers (and ackv): kept until the process ends */
        s->kept_next = nt_mpi_kept;
        nt_mpi_kept = s;
        return;
    }
    free(s->sbuf);
    free(s->rbuf);
    free(s);
}

nt_status_t nt_mpi_measure(nt_mpi_state_t *s, int peer, int initiator, const nt_bench_params_t *bp,
                           size_t bytes, nt_bench_result_t *res)
{
    if (bytes > s->maxb)
        return NT_ERR_INVALID;
    s->peer = peer;
    s->initiator = initiator;
    if (bp->max_window > NT_MPI_WINDOW)
        return NT_ERR_INVALID;
    return nt_bench_run(bp->metric == NT_BENCH_LATENCY ? &nt_mpi_lat_ops : &nt_mpi_bw_ops, s, bp,
                        bytes, res);
}

static nt_status_t nt_mpi_init(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks,
                               char *why, size_t whylen)
{
    nt_mpi_state_t *s;
    size_t maxb = 8;
    nt_status_t st;

    (void)node_json;
    (void)checks;
    if (p->size < 2 && p->params->local) {
        snprintf(why, whylen,
                 "--local: one process, no links between ranks (measure them under "
                 "mpirun/srun without --local)");
        return NT_ERR_UNSUPPORTED;
    }
    if (p->size < 2) {
        snprintf(why, whylen, "one rank only: nothing to pair (run it with mpirun -np 2 or more)");
        return NT_ERR_UNSUPPORTED;
    }
    for (size_t i = 0; i < p->params->nlat_sizes; i++)
        if (p->params->lat_sizes[i] > maxb)
            maxb = p->params->lat_sizes[i];
    for (size_t i = 0; i < p->params->nbw_sizes; i++)
        if (p->params->bw_sizes[i] > maxb)
            maxb = p->params->bw_sizes[i];
    st = nt_mpi_state_create(MPI_COMM_WORLD, maxb, p->params->peer_timeout_s, &s);
    if (st != NT_OK) {
        snprintf(why, whylen, "cannot set up the MPI probe: %s", nt_status_string(st));
        return st;
    }
    s->stop = p->stop;
    {
        /* Test hook (tests only, documented): NETTUNE_TEST_SLOW_RANK=r delays every iteration
         * of rank r, as a node with a bad link or a busy CPU would look. */
        const char *slow = getenv("NETTUNE_TEST_SLOW_RANK");
        /* NETTUNE_TEST_SLOW_FACTOR=F with it: that rank's transfers take F times as long
         * instead, as a link F times slower would (a 100x slow link must be measured, not
         * called dead). */
        const char *fac = getenv("NETTUNE_TEST_SLOW_FACTOR");
        if (slow && *slow && atoi(slow) == p->rank) {
            if (fac && *fac && atof(fac) > 1.0)
                s->slow_factor = atof(fac);
            else
                s->slow_us = 1000;
        }
    }
    *state = s;
    return NT_OK;
}

/* The reverse direction's figures travel from its timing end (the pair's responder) to the
 * initiator, which reports both links. */
static nt_status_t nt_mpi_result_xfer(nt_mpi_state_t *s, int sender, nt_bench_result_t *res)
{
    MPI_Request r;
    if (sender)
        MPI_Isend(res, (int)sizeof(*res), MPI_BYTE, s->peer, NT_MPI_TAG_RESULT, s->comm, &r);
    else
        MPI_Irecv(res, (int)sizeof(*res), MPI_BYTE, s->peer, NT_MPI_TAG_RESULT, s->comm, &r);
    return nt_mpi_w(s, &r);
}

/* Say on link why its measurement stopped (kept: what was measured before). */
static void nt_mpi_link_stopped(cJSON *link, nt_status_t st, int peer_rank, const char *host,
                                double timeout_s)
{
    cJSON *r = nt_json_add_arr(link, "errors");
    char msg[256];
    if (st == NT_ERR_TIMEOUT)
        snprintf(msg, sizeof(msg), "rank %d on %s stopped answering (no progress for %g s)",
                 peer_rank, host, timeout_s);
    else
        snprintf(msg, sizeof(msg), "measurement with rank %d on %s stopped: %s", peer_rank, host,
                 nt_status_string(st));
    if (r)
        cJSON_AddItemToArray(r, cJSON_CreateString(msg));
    /* A signal, the time limit or a peer that stopped answering end the run early (the link
     * is then not judged); any other error fails it. */
    nt_json_add_str(link, "stopped_by",
                    st == NT_ERR_INTERRUPTED ? "signal"
                    : st == NT_ERR_TIMEOUT   ? "peer_timeout"
                                             : "error");
}

static nt_status_t nt_mpi_run_pair(void *state, nt_probe_t *p, int peer_rank, int initiator,
                                   nt_scope_t scope, cJSON *out_links)
{
    nt_mpi_state_t *s = state;
    const nt_probe_params_t *pa = p->params;
    nt_bench_params_t bp;
    nt_bench_result_t res;
    cJSON *link = NULL, *rev = NULL;
    nt_status_t st = NT_OK, rst = NT_OK;
    int pnode, plr;
    char sep[16], dep[16];

    s->peer = peer_rank;
    s->initiator = initiator;
    /* On an oversubscribed host (pairs serialized) a spinning wait starves the kernel's network
     * processing and the other end: latency over TCP would measure the scheduler. */
    s->yield = p->serialized;
    /* Test hook (tests only, documented): NETTUNE_TEST_STALL_RANK=r makes rank r stop answering
     * for 4 peer timeouts, as a hung or dead node would. */
    {
        const char *stall = getenv("NETTUNE_TEST_STALL_RANK");
        if (stall && *stall && atoi(stall) == p->rank) {
            NT_WARN(MPI, "NETTUNE_TEST_STALL_RANK: rank %d stalls for %g s", p->rank,
                    4 * s->timeout_s);
            usleep((useconds_t)(4e6 * s->timeout_s));
        }
    }
    nt_probe_locate(p, peer_rank, &pnode, &plr);
    if (pnode < 0)
        return NT_ERR_INVALID;
    if (initiator) {
        snprintf(sep, sizeof(sep), "lr%d", p->local_rank);
        snprintf(dep, sizeof(dep), "lr%d", plr);
        link = nt_probe_link_new("mpi", NULL, scope, p->nodes[p->my_node].host, p->rank, sep,
                                 p->nodes[pnode].host, peer_rank, dep);
        /* The reverse direction (peer -> us): bandwidth only, latency is a round trip. */
        rev = pa->nbw_sizes ? nt_probe_link_new("mpi", NULL, scope, p->nodes[pnode].host, peer_rank,
                                                dep, p->nodes[p->my_node].host, p->rank, sep)
                            : NULL;
        if (!link || (pa->nbw_sizes && !rev)) {
            cJSON_Delete(link);
            cJSON_Delete(rev);
            return NT_ERR_NOMEM;
        }
    }
    nt_bench_params_default(&bp);
    bp.initiator = initiator;
    bp.budget_s = pa->budget_s;
    for (size_t i = 0; i < pa->nlat_sizes && st == NT_OK; i++) {
        bp.metric = NT_BENCH_LATENCY;
        bp.max_iters = 100000;
        st = nt_mpi_measure(s, peer_rank, initiator, &bp, pa->lat_sizes[i], &res);
        if (st == NT_OK && initiator)
            st = nt_probe_add_lat_sample(link, res.bytes, res.iters, &res.stats);
    }
    for (size_t i = 0; i < pa->nbw_sizes && st == NT_OK; i++) {
        bp.metric = NT_BENCH_BANDWIDTH;
        bp.max_iters = 1000;
        st = nt_mpi_measure(s, peer_rank, initiator, &bp, pa->bw_sizes[i], &res);
        if (st == NT_OK && initiator)
            st = nt_probe_add_bw_sample(link, res.bytes, res.iters, &res.stats);
    }
    if (st != NT_OK) {
        NT_WARN(MPI, "mpi link to rank %d (%s) stopped: %s", peer_rank, p->nodes[pnode].host,
                nt_status_string(st));
        if (link)
            nt_mpi_link_stopped(link, st, peer_rank, p->nodes[pnode].host, s->timeout_s);
    }
    /* Reverse: the responder sends and times, then hands its figures over. */
    for (size_t i = 0; i < pa->nbw_sizes && st == NT_OK && rst == NT_OK; i++) {
        bp.metric = NT_BENCH_BANDWIDTH;
        bp.max_iters = 1000;
        bp.initiator = !initiator;
        rst = nt_mpi_measure(s, peer_rank, !initiator, &bp, pa->bw_sizes[i], &res);
        if (rst == NT_OK)
            rst = nt_mpi_result_xfer(s, !initiator, &res);
        if (rst == NT_OK && initiator)
            rst = nt_probe_add_bw_sample(rev, res.bytes, res.iters, &res.stats);
    }
    if (rst != NT_OK) {
        NT_WARN(MPI, "mpi link from rank %d (%s) stopped: %s", peer_rank, p->nodes[pnode].host,
                nt_status_string(rst));
        if (rev)
            nt_mpi_link_stopped(rev, rst, peer_rank, p->nodes[pnode].host, s->timeout_s);
        st = rst;
    }
    if (link)
        cJSON_AddItemToArray(out_links, link);
    /* A reverse link that never started (the forward one stopped first) is not reported. */
    if (rev &&
        (rst != NT_OK || cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rev, "samples"))))
        cJSON_AddItemToArray(out_links, rev);
    else
        cJSON_Delete(rev);
    return st;
}

/* Latency sizes once, bandwidth sizes in both directions, each at most its budget + one
 * message (nt_bench_run). */
static double nt_mpi_pair_budget(const nt_probe_t *p)
{
    const nt_probe_params_t *pa = p->params;
    return nt_bench_deadline_s((unsigned)(pa->nlat_sizes + 2 * pa->nbw_sizes), pa->budget_s, 0, 0);
}

static void nt_mpi_cleanup(void *state)
{
    nt_mpi_state_destroy(state);
}

const nt_link_probe_ops_t nt_mpi_probe_ops = {
    .kind = "mpi",
    .what = "MPI point-to-point between ranks (every cluster)",
    .live_hw = 0,
    .init = nt_mpi_init,
    .run_pair = nt_mpi_run_pair,
    .pair_budget_s = nt_mpi_pair_budget,
    .run_local = NULL,
    .finish = NULL,
    .cleanup = nt_mpi_cleanup,
};
