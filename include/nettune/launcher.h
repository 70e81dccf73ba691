/* The launcher: what a probe needs from "the runtime" (rank, size, barrier, exchange), as UCX
 * perftest abstracts it. Two implementations: MPI (compiled only into nettune-probe, in
 * probes/launcher_mpi.c) and an in-process one with threads (lib/engine/launcher_inproc.c) so that
 * scheduling, exchange and verdict logic is tested without mpirun.
 *
 * Every call that waits takes a deadline in seconds from now. Open MPI 4.1 has no fault
 * tolerance, so the MPI implementation waits with non-blocking calls and MPI_Test loops and
 * returns NT_ERR_TIMEOUT instead of hanging; the caller then writes what it has and aborts. */
#ifndef NETTUNE_LAUNCHER_H
#define NETTUNE_LAUNCHER_H

#include <stddef.h>

#include "nettune/status.h"

typedef struct nt_launcher nt_launcher_t;

typedef struct nt_launcher_ops {
    const char *name; /* "mpi", "inproc", "local" */
    int (*rank)(nt_launcher_t *l);
    int (*size)(nt_launcher_t *l);
    /* Ranks sharing this node's memory (MPI_COMM_TYPE_SHARED), for node identification. */
    int (*local_group)(nt_launcher_t *l, int *local_rank, int *local_size);
    nt_status_t (*barrier)(nt_launcher_t *l, double timeout_s);
    /* Every rank contributes bytes bytes; recv holds size()*bytes, rank order. */
    nt_status_t (*allgather)(nt_launcher_t *l, const void *send, void *recv, size_t bytes,
                             double timeout_s);
    nt_status_t (*bcast)(nt_launcher_t *l, void *buf, size_t bytes, int root, double timeout_s);
    /* Point-to-point control messages (QP exchange, results to rank 0). tag >= 0. */
    nt_status_t (*send)(nt_launcher_t *l, int peer, int tag, const void *buf, size_t bytes,
                        double timeout_s);
    /* Receives exactly bytes bytes (the sender must send the same count). */
    nt_status_t (*recv)(nt_launcher_t *l, int peer, int tag, void *buf, size_t bytes,
                        double timeout_s);
    /* Ends the whole job with this exit code (MPI_Abort); the in-process one records it. */
    void (*abort)(nt_launcher_t *l, int code);
    /* Optional (NULL: not offered). Rank 0 only: asks every other rank whether it is still
     * there and writes alive[r] = 1 for each that answered within timeout_s (alive[0] = 1):
     * after a collective timed out, which rank is gone. The others answer from inside any of
     * their waits. Returns NT_OK, or NT_ERR_INVALID on another rank than 0. */
    nt_status_t (*alive)(nt_launcher_t *l, double timeout_s, unsigned char *alive);
} nt_launcher_ops_t;

struct nt_launcher {
    const nt_launcher_ops_t *ops;
    void *impl;
};

/* Convenience wrappers (each returns what the ops call returns). */
static inline int nt_launcher_rank(nt_launcher_t *l)
{
    return l->ops->rank(l);
}
static inline int nt_launcher_size(nt_launcher_t *l)
{
    return l->ops->size(l);
}

/* nt_launcher_send_blob / recv_blob - a length-prefixed message of any size (JSON text):
 * the length first (8 bytes), then the bytes. recv_blob mallocs *buf (NUL-terminated, free it).
 * Errors of the ops calls are returned; NT_ERR_NOMEM on allocation failure, NT_ERR_INVALID on
 * a length over 1 GiB. */
nt_status_t nt_launcher_send_blob(nt_launcher_t *l, int peer, int tag, const void *buf,
                                  size_t bytes, double timeout_s);
nt_status_t nt_launcher_recv_blob(nt_launcher_t *l, int peer, int tag, char **buf, size_t *bytes,
                                  double timeout_s);

/* nt_launcher_env_rank - this process's rank as the launcher's environment tells it before
 * MPI_Init (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID), -1 when not launched. */
int nt_launcher_env_rank(void);

/* nt_launcher_env_size - the number of processes the launcher started on this node's job step
 * as its environment tells it (OMPI_COMM_WORLD_LOCAL_SIZE, SLURM_NTASKS_PER_NODE... see the
 * source), -1 when not launched. Used to refuse --local under several ranks per node. */
int nt_launcher_env_size(void);

/* The single-rank launcher of `nettune probe --local`: rank 0 of 1, every collective trivial. */
nt_launcher_t *nt_launcher_local_create(void);
/* nt_launcher_local_destroy - free a launcher of nt_launcher_local_create (NULL is fine). */
void nt_launcher_local_destroy(nt_launcher_t *l);

/* In-process launcher for tests: nt_inproc_run starts nranks threads, each calling
 * fn(launcher, arg) with its own launcher (rank i of nranks); local_size ranks per "node" in
 * rank order for local_group. Returns the first non-zero fn result (0 if all returned 0).
 * The abort code of any rank, or -1, goes to *abort_code if it is not NULL. */
typedef int (*nt_inproc_fn)(nt_launcher_t *l, void *arg);
int nt_inproc_run(int nranks, int local_size, nt_inproc_fn fn, void *arg, int *abort_code);

/* nt_launcher_tcp_create - the launcher over TCP (lib/engine/launcher_tcp.c) for programs without MPI:
 * rank 0 listens on host's address and port (or on listen_fd when >= 0, a bound listening
 * socket it inherited), ranks 1..size-1 connect to host:port, retrying until timeout_s, and
 * prove they belong to the job with its secret: NETTUNE_MEASURE_SECRET (32 to 64 hex digits),
 * else the file NETTUNE_MEASURE_SECRET_FILE (yours, mode 0600; rank 0 creates it when absent).
 * Rank 0 reads several newcomers' hellos at once, each within 2 s, and refuses a wrong secret, a
 * duplicate or out-of-range rank and a silent client with one warning naming its address.
 * Collectives go through rank 0; send/recv only between rank 0 and another rank
 * (NT_ERR_UNSUPPORTED otherwise). local_group groups ranks by host name (or NETTUNE_HOSTID).
 * NULL with one line in err when there is no secret or the ranks do not all connect in time. */
nt_launcher_t *nt_launcher_tcp_create(int rank, int size, const char *host, int port, int listen_fd,
                                      double timeout_s, char *err, size_t errlen);
/* nt_launcher_tcp_listen - a listening TCP socket (close-on-exec) on host's address (the first of
 * its IPv4 addresses that binds; never every interface) and port (0: any free one), backlog
 * pending connections: what rank 0 of nt_launcher_tcp_create listens on. -1 with one line in err
 * naming the address and the OS reason. */
int nt_launcher_tcp_listen(const char *host, int port, int backlog, char *err, size_t errlen);
/* nt_launcher_tcp_secret_env - make a job secret for ranks this process forks: 32 bytes from
 * getrandom into NETTUNE_MEASURE_SECRET, unless it or NETTUNE_MEASURE_SECRET_FILE is set
 * already. NT_ERR_SYSTEM with one line in err. Not thread-safe (setenv): call before forking. */
nt_status_t nt_launcher_tcp_secret_env(char *err, size_t errlen);
/* nt_launcher_tcp_destroy - close the links and free (NULL is fine). */
void nt_launcher_tcp_destroy(nt_launcher_t *l);

/* nt_fd_xfer - send (sending != 0) or receive exactly n bytes of buf on the stream socket fd
 * before deadline (nt_clock_s() seconds), polling so that no wait outlasts it; EINTR and EAGAIN
 * are retried. NT_ERR_TIMEOUT at the deadline, NT_ERR_PEER when the other end closed or the
 * socket failed, NT_ERR_SYSTEM when poll fails. The TCP launcher's transfer, also used by
 * nettune-tune-measure's parent/child turns. */
nt_status_t nt_fd_xfer(int fd, void *buf, size_t n, int sending, double deadline);

#endif
