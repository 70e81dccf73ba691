/* The launcher over TCP (include/nettune/launcher.h): rank 0 is the hub, every other rank has one
 * connection to it, and each collective goes through rank 0 in the order all ranks call it (the
 * byte streams are ordered, so no tags are needed). For programs that must start without MPI
 * (nettune-tune-measure); every wait is a poll with the caller's deadline. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "nettune/launcher.h"

typedef struct {
    int rank, size;
    int *fd;    /* rank 0: fd[r] to rank r (fd[0] unused); others: fd[0] to rank 0 */
    int hostid; /* local group: ranks with the same host id */
    int aborted;
} tcp_t;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static nt_status_t wait_fd(int fd, short ev, double deadline)
{
    for (;;) {
        double left = deadline - mono_s();
        if (left <= 0)
            return NT_ERR_TIMEOUT;
        struct pollfd p = {fd, ev, 0};
        /* a wait of at most a day at a time (the loop waits again): a cast of left * 1000
         * beyond an int (a --timeout of a month) is UB */
        int r = poll(&p, 1, left > 86400 ? 86400000 : (int)(left * 1000) + 1);
        if (r > 0)
            return (p.revents & (POLLERR | POLLNVAL)) ? NT_ERR_PEER : NT_OK;
        if (r < 0 && errno != EINTR)
            return NT_ERR_SYSTEM;
    }
}

nt_status_t nt_fd_xfer(int fd, void *buf, size_t n, int sending, double deadline)
{
    char *p = buf;
    while (n) {
        nt_status_t st = wait_fd(fd, sending ? POLLOUT : POLLIN, deadline);
        if (st != NT_OK)
            return st;
        ssize_t k = sending ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
        if (k == 0)
            return NT_ERR_PEER; /* the peer closed: it died or gave up */
        if (k < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return NT_ERR_PEER;
        }
        p += k;
        n -= (size_t)k;
    }
    return NT_OK;
}

static tcp_t *T(nt_launcher_t *l)
{
    return l->impl;
}
static int tcp_rank(nt_launcher_t *l)
{
    return T(l)->rank;
}
static int tcp_size(nt_launcher_t *l)
{
    return T(l)->size;
}

static nt_status_t tcp_allgather(nt_launcher_t *l, const void *s, void *r, size_t n, double t)
{
    tcp_t *c = T(l);
    double dl = mono_s() + t;
    nt_status_t st = NT_OK;
    if (c->rank == 0) {
        memcpy(r, s, n);
        for (int i = 1; i < c->size && st == NT_OK; i++)
            st = nt_fd_xfer(c->fd[i], (char *)r + (size_t)i * n, n, 0, dl);
        for (int i = 1; i < c->size && st == NT_OK; i++)
            st = nt_fd_xfer(c->fd[i], r, n * (size_t)c->size, 1, dl);
        return st;
    }
    st = nt_fd_xfer(c->fd[0], (void *)s, n, 1, dl);
    if (st == NT_OK)
        st = nt_fd_xfer(c->fd[0], r, n * (size_t)c->size, 0, dl);
    return st;
}

static nt_status_t tcp_barrier(nt_launcher_t *l, double t)
{
    char one = 1, *all = calloc((size_t)T(l)->size, 1);
    if (!all)
        return NT_ERR_NOMEM;
    nt_status_t st = tcp_allgather(l, &one, all, 1, t);
    free(all);
    return st;
}

static nt_status_t tcp_bcast(nt_launcher_t *l, void *b, size_t n, int root, double t)
{
    tcp_t *c = T(l);
    double dl = mono_s() + t;
    nt_status_t st = NT_OK;
    if (root < 0 || root >= c->size)
        return NT_ERR_INVALID;
    if (c->rank == 0) {
        if (root != 0)
            st = nt_fd_xfer(c->fd[root], b, n, 0, dl);
        for (int i = 1; i < c->size && st == NT_OK; i++)
            if (i != root)
                st = nt_fd_xfer(c->fd[i], b, n, 1, dl);
        return st;
    }
    if (c->rank == root)
        return nt_fd_xfer(c->fd[0], b, n, 1, dl);
    return nt_fd_xfer(c->fd[0], b, n, 0, dl);
}

/* Point to point: only between rank 0 and another rank (a star has no other links). */
static nt_status_t tcp_p2p(nt_launcher_t *l, int peer, void *b, size_t n, int sending, double t)
{
    tcp_t *c = T(l);
    if (peer < 0 || peer >= c->size || peer == c->rank || (c->rank != 0 && peer != 0))
        return NT_ERR_UNSUPPORTED;
    return nt_fd_xfer(c->rank == 0 ? c->fd[peer] : c->fd[0], b, n, sending, mono_s() + t);
}
static nt_status_t tcp_send(nt_launcher_t *l, int peer, int tag, const void *b, size_t n, double t)
{
    (void)tag;
    return tcp_p2p(l, peer, (void *)b, n, 1, t);
}
static nt_status_t tcp_recv(nt_launcher_t *l, int peer, int tag, void *b, size_t n, double t)
{
    (void)tag;
    return tcp_p2p(l, peer, b, n, 0, t);
}

static int tcp_local_group(nt_launcher_t *l, int *local_rank, int *local_size)
{
    tcp_t *c = T(l);
    int *ids = calloc((size_t)c->size, sizeof(int));
    if (!ids)
        return -1;
    if (tcp_allgather(l, &c->hostid, ids, sizeof(int), 30) != NT_OK) {
        free(ids);
        return -1;
    }
    *local_rank = *local_size = 0;
    for (int i = 0; i < c->size; i++)
        if (ids[i] == c->hostid) {
            if (i < c->rank)
                (*local_rank)++;
            (*local_size)++;
        }
    free(ids);
    return 0;
}

static void tcp_abort(nt_launcher_t *l, int code)
{
    tcp_t *c = T(l);
    c->aborted = 1;
    /* closing every link makes each peer's next wait fail with NT_ERR_PEER at once */
    for (int i = 0; i < (c->rank == 0 ? c->size : 1); i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]), c->fd[i] = -1;
    _exit(code);
}

static const nt_launcher_ops_t nt_tcp_ops = {
    .name = "tcp",
    .rank = tcp_rank,
    .size = tcp_size,
    .local_group = tcp_local_group,
    .barrier = tcp_barrier,
    .allgather = tcp_allgather,
    .bcast = tcp_bcast,
    .send = tcp_send,
    .recv = tcp_recv,
    .abort = tcp_abort,
};

void nt_launcher_tcp_destroy(nt_launcher_t *l)
{
    if (!l)
        return;
    tcp_t *c = T(l);
    for (int i = 0; i < (c->rank == 0 ? c->size : 1); i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    free(c->fd);
    free(c);
    free(l);
}

static int host_id(void)
{
    char h[256] = "";
    gethostname(h, sizeof(h) - 1);
    unsigned v = 2166136261u;
    for (const char *p = h; *p; p++)
        v = (v ^ (unsigned char)*p) * 16777619u;
    return (int)(v & 0x7fffffff);
}

nt_launcher_t *nt_launcher_tcp_create(int rank, int size, const char *host, int port, int listen_fd,
                                      double timeout_s, char *err, size_t errlen)
{
    if (rank < 0 || size < 1 || rank >= size || port < 0 || port > 65535) {
        snprintf(err, errlen, "tcp launcher: rank %d of %d, port %d is out of range", rank, size,
                 port);
        return NULL;
    }
    nt_launcher_t *l = calloc(1, sizeof(*l));
    tcp_t *c = calloc(1, sizeof(*c));
    int *fd = malloc(sizeof(int) * (size_t)size);
    if (!l || !c || !fd) {
        free(l), free(c), free(fd);
        snprintf(err, errlen, "tcp launcher: out of memory");
        return NULL;
    }
    for (int i = 0; i < size; i++)
        fd[i] = -1;
    *c = (tcp_t){rank, size, fd, host_id(), 0};
    const char *hid = getenv("NETTUNE_HOSTID");
    if (hid && *hid)
        c->hostid = atoi(hid);
    l->ops = &nt_tcp_ops;
    l->impl = c;
    double dl = mono_s() + timeout_s;
    if (rank == 0) {
        int lf = listen_fd;
        if (lf < 0 && size > 1) {
            struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
            a.sin_addr.s_addr = htonl(INADDR_ANY);
            lf = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            int one = 1;
            setsockopt(lf, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
            if (lf < 0 || bind(lf, (struct sockaddr *)&a, sizeof(a)) || listen(lf, size)) {
                snprintf(err, errlen,
                         "tcp launcher: cannot listen on port %d: %s (set another "
                         "port in NETTUNE_MEASURE_ADDR)",
                         port, strerror(errno));
                if (lf >= 0)
                    close(lf);
                nt_launcher_tcp_destroy(l);
                return NULL;
            }
        }
        for (int got = 1; got < size; got++) {
            if (wait_fd(lf, POLLIN, dl) != NT_OK) {
                snprintf(err, errlen, "tcp launcher: %d of %d ranks connected within %.0f s",
                         got - 1, size - 1, timeout_s);
                close(lf);
                nt_launcher_tcp_destroy(l);
                return NULL;
            }
            int s = accept4(lf, NULL, NULL, SOCK_CLOEXEC);
            int32_t peer = -1;
            if (s < 0 || nt_fd_xfer(s, &peer, sizeof(peer), 0, dl) != NT_OK || peer < 1 ||
                peer >= size || fd[peer] >= 0) {
                if (s >= 0)
                    close(s);
                got--; /* a stray or duplicate connection: not a rank */
                continue;
            }
            fd[peer] = s;
        }
        if (lf >= 0)
            close(lf);
    } else {
        char ps[16];
        snprintf(ps, sizeof(ps), "%d", port);
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        if (getaddrinfo(host, ps, &hints, &ai) || !ai) {
            snprintf(err, errlen, "tcp launcher: cannot resolve rank 0's host '%s'", host);
            nt_launcher_tcp_destroy(l);
            return NULL;
        }
        int s = -1;
        while (mono_s() < dl) { /* rank 0 may not listen yet: retry until the deadline */
            s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (s >= 0 && connect(s, ai->ai_addr, ai->ai_addrlen) == 0)
                break;
            if (s >= 0)
                close(s);
            s = -1;
            usleep(50000);
        }
        freeaddrinfo(ai);
        int32_t me = rank;
        if (s < 0 || nt_fd_xfer(s, &me, sizeof(me), 1, dl) != NT_OK) {
            snprintf(err, errlen,
                     "tcp launcher: rank %d cannot reach rank 0 at %s:%d within %.0f s", rank, host,
                     port, timeout_s);
            if (s >= 0)
                close(s);
            nt_launcher_tcp_destroy(l);
            return NULL;
        }
        fd[0] = s;
    }
    for (int i = 0; i < size; i++)
        if (fd[i] >= 0) {
            int one = 1;
            setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        }
    return l;
}
