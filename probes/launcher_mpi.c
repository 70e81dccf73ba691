/* MPI launcher: every wait is a non-blocking call plus an MPI_Test loop with a deadline,
 * because Open MPI 4.1 has no fault tolerance and a dead peer would otherwise hang us. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launcher_mpi.h"
#include "nettune/clock.h"
#include "nettune/log.h"

typedef struct nt_mpi_launcher {
    nt_launcher_t l;
    MPI_Comm comm;
    int rank, size, local_rank, local_size;
    volatile sig_atomic_t *interrupt;
} nt_mpi_launcher_t;

/* Control waits poll every 200 us: quick enough for a barrier between steps, idle enough not
 * to steal a core from the ranks that measure on an oversubscribed host. */
#define NT_CTRL_SLEEP_US 200

static nt_mpi_launcher_t *nt_ml(nt_launcher_t *l)
{
    return (nt_mpi_launcher_t *)l->impl;
}

/* Liveness checks (ops->alive): rank 0 sends NT_TAG_PING to every rank, which answers with
 * NT_TAG_PONG from inside whatever wait it is in (nt_mpi_wait), so that after a collective
 * timed out rank 0 can tell which rank is gone (Open MPI 4.1 has no fault notification). */
#define NT_TAG_PING 32001
#define NT_TAG_PONG 32002
/* Rank 0 tells every rank, before MPI_Abort, that the job ends (nt_ml_abort): a rank waiting for
 * rank 0 then stops waiting at once (where Open MPI keeps the job alive after the abort,
 * orte_enable_recovery=1, it would wait its whole deadline first). */
#define NT_TAG_END 32003
static MPI_Comm nt_ping_comm = MPI_COMM_NULL;
static int nt_ping_rank = -1;
static volatile int nt_end_seen, nt_end_code = -1;

int nt_launcher_mpi_ended(void)
{
    return nt_end_seen ? nt_end_code : -1;
}

static void nt_ping_answer(void)
{
    static int pong;
    int flag = 0, ping;
    MPI_Request r;
    if (nt_ping_comm == MPI_COMM_NULL || nt_ping_rank <= 0)
        return;
    if (!nt_end_seen &&
        MPI_Iprobe(0, NT_TAG_END, nt_ping_comm, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
        MPI_Recv(&ping, 1, MPI_INT, 0, NT_TAG_END, nt_ping_comm, MPI_STATUS_IGNORE);
        nt_end_code = ping;
        nt_end_seen = 1;
    }
    flag = 0;
    if (MPI_Iprobe(0, NT_TAG_PING, nt_ping_comm, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
        return;
    /* The ping is there (eager, 4 bytes): the receive completes at once. */
    MPI_Recv(&ping, 1, MPI_INT, 0, NT_TAG_PING, nt_ping_comm, MPI_STATUS_IGNORE);
    pong = ping;
    if (MPI_Isend(&pong, 1, MPI_INT, 0, NT_TAG_PONG, nt_ping_comm, &r) == MPI_SUCCESS)
        MPI_Request_free(&r);
}

nt_status_t nt_mpi_wait(MPI_Request *req, double timeout_s, unsigned sleep_us,
                        volatile sig_atomic_t *interrupt, int cancellable)
{
    int done = 0, yield = sleep_us == NT_MPI_WAIT_YIELD;
    unsigned long polls = 0;
    double deadline = 0.0, t_yield = 0.0;

    if (yield)
        sleep_us = 0;
    for (;;) {
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return NT_ERR_PEER;
        if (done)
            return NT_OK;
        ++polls;
        /* Reading the clock every poll would cost more than a shared-memory round trip: the
         * deadline starts at the first reading, after 1024 polls (a few microseconds). */
        if (sleep_us || (polls & 1023) == 0 || (yield && polls > 256 && (polls & 63) == 0)) {
            double now;
            if (interrupt && *interrupt)
                goto give_up_interrupted;
            nt_ping_answer();
            if (nt_end_seen)
                goto give_up_ended;
            now = nt_clock_s();
            if (deadline == 0.0)
                deadline = now + timeout_s;
            else if (now > deadline)
                goto give_up_timeout;
            if (yield && t_yield == 0.0)
                t_yield = now;
            else if (yield && now - t_yield > 1e-3)
                sleep_us = 20; /* a long wait: no need to test faster than this */
        }
        if (sleep_us) {
            struct timespec ts = {0, (long)sleep_us * 1000};
            nanosleep(&ts, NULL);
        } else if (yield && polls > 256) {
            sched_yield();
        }
    }
give_up_timeout:
    /* Only point-to-point requests may be cancelled; a collective one is left behind (the run
     * ends after a lost peer anyway). */
    if (cancellable) {
        MPI_Cancel(req);
        MPI_Request_free(req);
    }
    return NT_ERR_TIMEOUT;
give_up_interrupted:
    if (cancellable) {
        MPI_Cancel(req);
        MPI_Request_free(req);
    }
    return NT_ERR_INTERRUPTED;
give_up_ended:
    if (cancellable) {
        MPI_Cancel(req);
        MPI_Request_free(req);
    }
    return NT_ERR_PEER;
}

static nt_status_t nt_ml_wait(nt_launcher_t *l, MPI_Request *req, double timeout_s)
{
    return nt_mpi_wait(req, timeout_s, NT_CTRL_SLEEP_US, nt_ml(l)->interrupt, 0);
}

static nt_status_t nt_ml_wait_p2p(nt_launcher_t *l, MPI_Request *req, double timeout_s)
{
    return nt_mpi_wait(req, timeout_s, NT_CTRL_SLEEP_US, nt_ml(l)->interrupt, 1);
}

static int nt_ml_rank(nt_launcher_t *l)
{
    return nt_ml(l)->rank;
}
static int nt_ml_size(nt_launcher_t *l)
{
    return nt_ml(l)->size;
}

static int nt_ml_local_group(nt_launcher_t *l, int *local_rank, int *local_size)
{
    *local_rank = nt_ml(l)->local_rank;
    *local_size = nt_ml(l)->local_size;
    return 0;
}

static nt_status_t nt_ml_barrier(nt_launcher_t *l, double timeout_s)
{
    MPI_Request req;
    if (MPI_Ibarrier(nt_ml(l)->comm, &req) != MPI_SUCCESS)
        return NT_ERR_PEER;
    return nt_ml_wait(l, &req, timeout_s);
}

static nt_status_t nt_ml_allgather(nt_launcher_t *l, const void *send, void *recv, size_t bytes,
                                   double timeout_s)
{
    MPI_Request req;
    if (bytes > (size_t)1 << 30 || MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes,
                                                  MPI_BYTE, nt_ml(l)->comm, &req) != MPI_SUCCESS)
        return NT_ERR_PEER;
    return nt_ml_wait(l, &req, timeout_s);
}

static nt_status_t nt_ml_bcast(nt_launcher_t *l, void *buf, size_t bytes, int root,
                               double timeout_s)
{
    MPI_Request req;
    if (bytes > (size_t)1 << 30 ||
        MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, nt_ml(l)->comm, &req) != MPI_SUCCESS)
        return NT_ERR_PEER;
    return nt_ml_wait(l, &req, timeout_s);
}

static nt_status_t nt_ml_send(nt_launcher_t *l, int peer, int tag, const void *buf, size_t bytes,
                              double timeout_s)
{
    MPI_Request req;
    if (bytes > (size_t)1 << 30 ||
        MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, nt_ml(l)->comm, &req) != MPI_SUCCESS)
        return NT_ERR_PEER;
    return nt_ml_wait_p2p(l, &req, timeout_s);
}

static nt_status_t nt_ml_recv(nt_launcher_t *l, int peer, int tag, void *buf, size_t bytes,
                              double timeout_s)
{
    MPI_Request req;
    if (bytes > (size_t)1 << 30 ||
        MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, nt_ml(l)->comm, &req) != MPI_SUCCESS)
        return NT_ERR_PEER;
    return nt_ml_wait_p2p(l, &req, timeout_s);
}

static void nt_ml_abort(nt_launcher_t *l, int code)
{
    nt_mpi_launcher_t *m = nt_ml(l);
    /* The others first hear that the job ends (NT_TAG_END), for at most 0.5 s. */
    if (m->rank == 0 && m->size > 1) {
        static int end;
        MPI_Request *req = calloc((size_t)m->size, sizeof(*req));
        if (req) {
            double deadline = nt_clock_s() + 0.5;
            int done = 0;
            end = code;
            req[0] = MPI_REQUEST_NULL;
            for (int r = 1; r < m->size; r++)
                if (MPI_Isend(&end, 1, MPI_INT, r, NT_TAG_END, m->comm, &req[r]) != MPI_SUCCESS)
                    req[r] = MPI_REQUEST_NULL;
            while (!done && nt_clock_s() < deadline) {
                struct timespec ts = {0, NT_CTRL_SLEEP_US * 1000L};
                if (MPI_Testall(m->size, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
                    break;
                if (!done)
                    nanosleep(&ts, NULL);
            }
            free(req);
        }
    }
    MPI_Abort(m->comm, code);
}

static nt_status_t nt_ml_alive(nt_launcher_t *l, double timeout_s, unsigned char *alive)
{
    nt_mpi_launcher_t *m = nt_ml(l);
    MPI_Request *req;
    int *pong, ping = 1, left;
    double deadline = nt_clock_s() + timeout_s;

    if (m->rank != 0)
        return NT_ERR_INVALID;
    req = calloc((size_t)m->size, sizeof(*req));
    pong = calloc((size_t)m->size, sizeof(*pong));
    if (!req || !pong) {
        free(req);
        free(pong);
        return NT_ERR_NOMEM;
    }
    alive[0] = 1;
    for (int r = 1; r < m->size; r++) {
        MPI_Request s;
        alive[r] = 0;
        req[r] = MPI_REQUEST_NULL;
        if (MPI_Isend(&ping, 1, MPI_INT, r, NT_TAG_PING, m->comm, &s) == MPI_SUCCESS)
            MPI_Request_free(&s);
        MPI_Irecv(&pong[r], 1, MPI_INT, r, NT_TAG_PONG, m->comm, &req[r]);
    }
    left = m->size - 1;
    while (left > 0 && nt_clock_s() < deadline && !(m->interrupt && *m->interrupt)) {
        struct timespec ts = {0, NT_CTRL_SLEEP_US * 1000L};
        for (int r = 1; r < m->size; r++) {
            int done = 0;
            if (alive[r] || req[r] == MPI_REQUEST_NULL)
                continue;
            if (MPI_Test(&req[r], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
                alive[r] = 1;
                left--;
            }
        }
        nanosleep(&ts, NULL);
    }
    for (int r = 1; r < m->size; r++)
        if (!alive[r] && req[r] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[r]);
            MPI_Request_free(&req[r]);
        }
    free(req);
    free(pong);
    return NT_OK;
}

static const nt_launcher_ops_t nt_mpi_launcher_ops = {
    .alive = nt_ml_alive,
    .name = "mpi",
    .rank = nt_ml_rank,
    .size = nt_ml_size,
    .local_group = nt_ml_local_group,
    .barrier = nt_ml_barrier,
    .allgather = nt_ml_allgather,
    .bcast = nt_ml_bcast,
    .send = nt_ml_send,
    .recv = nt_ml_recv,
    .abort = nt_ml_abort,
};

nt_launcher_t *nt_launcher_mpi_create(volatile sig_atomic_t *interrupt)
{
    nt_mpi_launcher_t *m = calloc(1, sizeof(*m));
    MPI_Comm local;

    if (!m)
        return NULL;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &m->comm) != MPI_SUCCESS)
        goto err_free;
    MPI_Comm_rank(m->comm, &m->rank);
    MPI_Comm_size(m->comm, &m->size);
    if (MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        goto err_comm;
    MPI_Comm_rank(local, &m->local_rank);
    MPI_Comm_size(local, &m->local_size);
    MPI_Comm_free(&local);
    m->interrupt = interrupt;
    nt_ping_comm = m->comm;
    nt_ping_rank = m->rank;
    m->l.ops = &nt_mpi_launcher_ops;
    m->l.impl = m;
    return &m->l;
err_comm:
    MPI_Comm_free(&m->comm);
err_free:
    free(m);
    return NULL;
}

void nt_launcher_mpi_destroy(nt_launcher_t *l)
{
    nt_mpi_launcher_t *m;
    if (!l)
        return;
    m = nt_ml(l);
    nt_ping_comm = MPI_COMM_NULL;
    MPI_Comm_free(&m->comm);
    free(m);
}
