/* The launcher over TCP (include/nettune/launcher.h): rank 0 is the hub, every other rank has one
 * connection to it, and each collective goes through rank 0 in the order all ranks call it (the
 * byte streams are ordered, so no tags are needed). For programs that must start without MPI
 * (nettune-tune-measure); every wait is a poll with the caller's deadline. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "nettune/launcher.h"
#include "nettune/log.h"

typedef struct {
    int rank, size;
    int *fd;    /* rank 0: fd[r] to rank r (fd[0] unused); others: fd[0] to rank 0 */
    int hostid; /* local group: ranks with the same host id */
    int aborted;
} tcp_t;

static double nt_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static nt_status_t nt_wait_fd(int fd, short ev, double deadline)
{
    for (;;) {
        double left = deadline - nt_mono_s();
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
        nt_status_t st = nt_wait_fd(fd, sending ? POLLOUT : POLLIN, deadline);
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

static tcp_t *nt_T(nt_launcher_t *l)
{
    return l->impl;
}
static int nt_tcp_rank(nt_launcher_t *l)
{
    return nt_T(l)->rank;
}
static int nt_tcp_size(nt_launcher_t *l)
{
    return nt_T(l)->size;
}

static nt_status_t nt_tcp_allgather(nt_launcher_t *l, const void *s, void *r, size_t n, double t)
{
    tcp_t *c = nt_T(l);
    double dl = nt_mono_s() + t;
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

static nt_status_t nt_tcp_barrier(nt_launcher_t *l, double t)
{
    char one = 1, *all = calloc((size_t)nt_T(l)->size, 1);
    if (!all)
        return NT_ERR_NOMEM;
    nt_status_t st = nt_tcp_allgather(l, &one, all, 1, t);
    free(all);
    return st;
}

static nt_status_t nt_tcp_bcast(nt_launcher_t *l, void *b, size_t n, int root, double t)
{
    tcp_t *c = nt_T(l);
    double dl = nt_mono_s() + t;
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
static nt_status_t nt_tcp_p2p(nt_launcher_t *l, int peer, void *b, size_t n, int sending, double t)
{
    tcp_t *c = nt_T(l);
    if (peer < 0 || peer >= c->size || peer == c->rank || (c->rank != 0 && peer != 0))
        return NT_ERR_UNSUPPORTED;
    return nt_fd_xfer(c->rank == 0 ? c->fd[peer] : c->fd[0], b, n, sending, nt_mono_s() + t);
}
static nt_status_t nt_tcp_send(nt_launcher_t *l, int peer, int tag, const void *b, size_t n,
                               double t)
{
    (void)tag;
    return nt_tcp_p2p(l, peer, (void *)b, n, 1, t);
}
static nt_status_t nt_tcp_recv(nt_launcher_t *l, int peer, int tag, void *b, size_t n, double t)
{
    (void)tag;
    return nt_tcp_p2p(l, peer, b, n, 0, t);
}

static int nt_tcp_local_group(nt_launcher_t *l, int *local_rank, int *local_size)
{
    tcp_t *c = nt_T(l);
    int *ids = calloc((size_t)c->size, sizeof(int));
    if (!ids)
        return -1;
    if (nt_tcp_allgather(l, &c->hostid, ids, sizeof(int), 30) != NT_OK) {
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

static void nt_tcp_abort(nt_launcher_t *l, int code)
{
    tcp_t *c = nt_T(l);
    c->aborted = 1;
    /* closing every link makes each peer's next wait fail with NT_ERR_PEER at once */
    for (int i = 0; i < (c->rank == 0 ? c->size : 1); i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]), c->fd[i] = -1;
    _exit(code);
}

static const nt_launcher_ops_t nt_tcp_ops = {
    .name = "tcp",
    .rank = nt_tcp_rank,
    .size = nt_tcp_size,
    .local_group = nt_tcp_local_group,
    .barrier = nt_tcp_barrier,
    .allgather = nt_tcp_allgather,
    .bcast = nt_tcp_bcast,
    .send = nt_tcp_send,
    .recv = nt_tcp_recv,
    .abort = nt_tcp_abort,
};

void nt_launcher_tcp_destroy(nt_launcher_t *l)
{
    if (!l)
        return;
    tcp_t *c = nt_T(l);
    for (int i = 0; i < (c->rank == 0 ? c->size : 1); i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    free(c->fd);
    free(c);
    free(l);
}

static int nt_host_id(void)
{
    char h[256] = "";
    gethostname(h, sizeof(h) - 1);
    unsigned v = 2166136261u;
    for (const char *p = h; *p; p++)
        v = (v ^ (unsigned char)*p) * 16777619u;
    return (int)(v & 0x7fffffff);
}

/* The rendezvous' hello: what a rank sends rank 0 right after connecting. Rank 0 answers one
 * byte (NT_TCP_ACK) when it takes the rank, and closes the connection when it does not. The
 * secret is the job's, as the random 64-bit magic in NCCL's unique id is for its bootstrap
 * connections (NVIDIA/nccl v2.28.9-1 src/bootstrap.cc:426); here at least 128 bits, because a
 * rank's figures end up in a tuning file. */
#define NT_TCP_MAGIC 0x4e545231u /* "NTR1" */
#define NT_TCP_ACK 'k'
#define NT_TCP_SECRET_MIN 16 /* bytes: 128 bits */
#define NT_TCP_SECRET_MAX 32
#define NT_TCP_HELLO_LEN (8 + NT_TCP_SECRET_MAX)
/* A newcomer's hello must arrive this soon after its connection is taken: a rank sends it
 * at once, so a client silent this long is not one. */
#define NT_TCP_HELLO_TIMEOUT_S 2.0
/* Connections whose hello is awaited at once: more wait in the listen backlog. */
#define NT_TCP_PENDING_MAX 32

typedef struct {
    uint8_t b[NT_TCP_SECRET_MAX]; /* zero-padded */
} tcp_secret_t;

static int nt_hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Decode what (trailing white space ignored) into sec: 32 to 64 hex digits. */
static int nt_secret_parse(const char *txt, size_t len, tcp_secret_t *sec)
{
    while (len && (txt[len - 1] == '\n' || txt[len - 1] == ' ' || txt[len - 1] == '\r'))
        len--;
    if (len % 2 || len < 2 * NT_TCP_SECRET_MIN || len > 2 * NT_TCP_SECRET_MAX)
        return -1;
    memset(sec, 0, sizeof(*sec));
    for (size_t i = 0; i < len; i += 2) {
        int hi = nt_hexval((unsigned char)txt[i]), lo = nt_hexval((unsigned char)txt[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        sec->b[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

/* 32 random bytes from getrandom, as 64 hex digits and a NUL into hex[65]. */
static int nt_secret_make(char hex[2 * NT_TCP_SECRET_MAX + 1])
{
    uint8_t b[NT_TCP_SECRET_MAX];
    size_t got = 0;
    while (got < sizeof(b)) {
        ssize_t k = getrandom(b + got, sizeof(b) - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof(b); i++)
        snprintf(hex + 2 * i, 3, "%02x", b[i]);
    return 0;
}

nt_status_t nt_launcher_tcp_secret_env(char *err, size_t errlen)
{
    char hex[2 * NT_TCP_SECRET_MAX + 1];
    if (getenv("NETTUNE_MEASURE_SECRET") || getenv("NETTUNE_MEASURE_SECRET_FILE"))
        return NT_OK;
    if (nt_secret_make(hex) != 0 || setenv("NETTUNE_MEASURE_SECRET", hex, 1) != 0) {
        snprintf(err, errlen, "tcp launcher: cannot make the job secret (getrandom): %s",
                 strerror(errno));
        return NT_ERR_SYSTEM;
    }
    return NT_OK;
}

/* Rank 0 creates the secret file when it is absent: written under a temporary name with mode
 * 0600, then linked to its name, so a reader sees all of it or nothing, and two creators agree
 * on the first one's. */
static void nt_secret_file_create(const char *path)
{
    char tmp[4200], hex[2 * NT_TCP_SECRET_MAX + 2];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp) ||
        nt_secret_make(hex) != 0)
        return;
    strcat(hex, "\n");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    ssize_t k = write(fd, hex, strlen(hex));
    if (close(fd) == 0 && k == (ssize_t)strlen(hex))
        (void)!link(tmp, path); /* EEXIST: another's came first, and it is the one */
    unlink(tmp);
}

/* The job's secret (NETTUNE_MEASURE_SECRET, else the file NETTUNE_MEASURE_SECRET_FILE, which
 * rank 0 creates when absent and the others wait for until deadline). 0, or -1 with one line in
 * err. */
static int nt_secret_get(int rank, double deadline, tcp_secret_t *sec, char *err, size_t errlen)
{
    const char *env = getenv("NETTUNE_MEASURE_SECRET"), *file = getenv("NETTUNE_MEASURE_SECRET_FILE");
    if (env) {
        if (nt_secret_parse(env, strlen(env), sec) == 0)
            return 0;
        snprintf(err, errlen,
                 "tcp launcher: NETTUNE_MEASURE_SECRET must be 32 to 64 hex digits (128 to 256 "
                 "bits), e.g. from: od -An -tx1 -N16 /dev/urandom | tr -d ' \\n'");
        return -1;
    }
    if (!file || !*file) {
        snprintf(err, errlen,
                 "tcp launcher: no job secret: export NETTUNE_MEASURE_SECRET (32 hex digits: od "
                 "-An -tx1 -N16 /dev/urandom | tr -d ' \\n') to every rank, or set "
                 "NETTUNE_MEASURE_SECRET_FILE to a path every rank reads (rank 0 creates it, "
                 "mode 0600)");
        return -1;
    }
    int fd;
    while ((fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 && errno == ENOENT &&
           nt_mono_s() < deadline) {
        if (rank == 0)
            nt_secret_file_create(file);
        else
            usleep(50000);
    }
    if (fd < 0) {
        snprintf(err, errlen, "tcp launcher: cannot read the secret file '%s': %s", file,
                 strerror(errno));
        return -1;
    }
    struct stat st;
    char txt[2 * NT_TCP_SECRET_MAX + 8];
    ssize_t k = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        !(st.st_mode & 077))
        k = read(fd, txt, sizeof(txt));
    close(fd);
    if (k < 0) {
        snprintf(err, errlen,
                 "tcp launcher: the secret file '%s' must be a file of yours that only you can "
                 "read (mode %04o, owner %d): chmod 600 it",
                 file, (unsigned)(st.st_mode & 07777), (int)st.st_uid);
        return -1;
    }
    if (nt_secret_parse(txt, (size_t)k, sec) == 0)
        return 0;
    snprintf(err, errlen, "tcp launcher: the secret file '%s' must hold 32 to 64 hex digits",
             file);
    return -1;
}

/* "a.b.c.d:port" of the socket's peer. */
static void nt_peer_name(int fd, char *buf, size_t len)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    char ip[INET_ADDRSTRLEN] = "?";
    if (getpeername(fd, (struct sockaddr *)&a, &al) == 0 && a.sin_family == AF_INET)
        inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
    snprintf(buf, len, "%s:%d", ip, al >= sizeof(a) ? ntohs(a.sin_port) : 0);
}

typedef struct {
    int fd;
    double until;
    size_t got;
    uint8_t buf[NT_TCP_HELLO_LEN];
    char peer[32];
} tcp_pending_t;

/* Equal in time independent of where they differ. */
static int nt_secret_equal(const uint8_t *a, const uint8_t *b)
{
    uint8_t d = 0;
    for (int i = 0; i < NT_TCP_SECRET_MAX; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}

/* A complete hello: the rank it names when it is taken (the ack sent), else -1, the newcomer
 * refused with one line naming it. */
static int nt_hello_take(tcp_t *c, const tcp_secret_t *sec, tcp_pending_t *p, char (*from)[32])
{
    uint32_t magic, r;
    memcpy(&magic, p->buf, 4);
    memcpy(&r, p->buf + 4, 4);
    int rank = (int)ntohl(r);
    char ack = NT_TCP_ACK;
    if (ntohl(magic) != NT_TCP_MAGIC || !nt_secret_equal(p->buf + 8, sec->b))
        NT_WARN(INIT, "tcp launcher: refused %s: wrong secret (not a rank of this job)", p->peer);
    else if (rank < 1 || rank >= c->size)
        NT_WARN(INIT, "tcp launcher: refused %s: rank %d is outside 1..%d", p->peer, rank,
                c->size - 1);
    else if (c->fd[rank] >= 0)
        NT_WARN(INIT, "tcp launcher: refused %s: rank %d is connected already, from %s", p->peer,
                rank, from[rank]);
    else if (send(p->fd, &ack, 1, MSG_NOSIGNAL) != 1)
        NT_WARN(INIT, "tcp launcher: refused %s: closed after its hello", p->peer);
    else
        return rank;
    return -1;
}

/* Rank 0: take size - 1 ranks from lf until deadline, reading newcomers' hellos side by side
 * (poll), each under NT_TCP_HELLO_TIMEOUT_S. 0, or -1 with err. */
static int nt_tcp_gather_ranks(tcp_t *c, int lf, const tcp_secret_t *sec, double dl,
                            double timeout_s, char *err, size_t errlen)
{
    tcp_pending_t pend[NT_TCP_PENDING_MAX];
    struct pollfd pf[NT_TCP_PENDING_MAX + 1];
    char(*from)[32] = calloc((size_t)c->size, sizeof(*from));
    int npend = 0, got = 0, rc = -1;
    if (!from) {
        snprintf(err, errlen, "tcp launcher: out of memory");
        return -1;
    }
    while (got < c->size - 1) {
        double now = nt_mono_s(), wake = dl;
        if (now >= dl) {
            snprintf(err, errlen, "tcp launcher: %d of %d ranks connected within %.0f s", got,
                     c->size - 1, timeout_s);
            goto out;
        }
        pf[0] = (struct pollfd){npend < NT_TCP_PENDING_MAX ? lf : -1, POLLIN, 0};
        for (int i = 0; i < npend; i++) {
            pf[i + 1] = (struct pollfd){pend[i].fd, POLLIN, 0};
            if (pend[i].until < wake)
                wake = pend[i].until;
        }
        int ms = (int)((wake - now) * 1000) + 1;
        if (poll(pf, (nfds_t)npend + 1, ms > 86400000 ? 86400000 : ms) < 0 && errno != EINTR) {
            snprintf(err, errlen, "tcp launcher: poll: %s", strerror(errno));
            goto out;
        }
        now = nt_mono_s();
        for (int i = npend - 1; i >= 0; i--) {
            tcp_pending_t *p = &pend[i];
            int rank = -1, done = 0;
            if (pf[i + 1].revents) {
                ssize_t k = recv(p->fd, p->buf + p->got, sizeof(p->buf) - p->got, MSG_DONTWAIT);
                if (k > 0)
                    p->got += (size_t)k;
                if (p->got == sizeof(p->buf)) {
                    done = 1;
                    rank = nt_hello_take(c, sec, p, from);
                } else if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                    done = 1;
                    NT_WARN(INIT, "tcp launcher: refused %s: closed before its hello (%zu of %d "
                            "bytes)", p->peer, p->got, NT_TCP_HELLO_LEN);
                }
            }
            if (!done && now >= p->until) {
                done = 1;
                NT_WARN(INIT, "tcp launcher: refused %s: no hello within %.0f s (%zu of %d bytes)",
                        p->peer, NT_TCP_HELLO_TIMEOUT_S, p->got, NT_TCP_HELLO_LEN);
            }
            if (!done)
                continue;
            if (rank > 0) {
                int fl = fcntl(p->fd, F_GETFL);
                if (fl >= 0)
                    fcntl(p->fd, F_SETFL, fl & ~O_NONBLOCK);
                c->fd[rank] = p->fd;
                memcpy(from[rank], p->peer, sizeof(p->peer));
                got++;
            } else {
                close(p->fd);
            }
            pend[i] = pend[--npend];
        }
        if (pf[0].fd >= 0 && (pf[0].revents & POLLIN)) {
            int s = accept4(lf, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (s >= 0) {
                pend[npend] = (tcp_pending_t){.fd = s, .until = now + NT_TCP_HELLO_TIMEOUT_S};
                nt_peer_name(s, pend[npend].peer, sizeof(pend[npend].peer));
                npend++;
            }
        }
    }
    rc = 0;
out:
    for (int i = 0; i < npend; i++)
        close(pend[i].fd);
    free(from);
    return rc;
}

int nt_launcher_tcp_listen(const char *host, int port, int backlog, char *err, size_t errlen)
{
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int e = getaddrinfo(host, ps, &hints, &ai);
    if (e || !ai) {
        snprintf(err, errlen, "tcp launcher: cannot resolve the address to listen on '%s': %s",
                 host, e ? gai_strerror(e) : "no address");
        return -1;
    }
    int lf = -1, why = 0;
    for (struct addrinfo *a = ai; a && lf < 0; a = a->ai_next) {
        lf = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int one = 1;
        if (lf >= 0)
            setsockopt(lf, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (lf < 0 || bind(lf, a->ai_addr, a->ai_addrlen) || listen(lf, backlog)) {
            why = errno;
            if (lf >= 0)
                close(lf);
            lf = -1;
        }
    }
    freeaddrinfo(ai);
    if (lf < 0)
        snprintf(err, errlen,
                 "tcp launcher: cannot listen on %s:%d: %s (set another address or port in "
                 "NETTUNE_MEASURE_ADDR)",
                 host, port, strerror(why));
    return lf;
}

nt_launcher_t *nt_launcher_tcp_create(int rank, int size, const char *host, int port, int listen_fd,
                                      double timeout_s, char *err, size_t errlen)
{
    if (rank < 0 || size < 1 || rank >= size || port < 0 || port > 65535) {
        snprintf(err, errlen, "tcp launcher: rank %d of %d, port %d is out of range", rank, size,
                 port);
        return NULL;
    }
    double dl = nt_mono_s() + timeout_s;
    tcp_secret_t sec;
    if (size > 1 && nt_secret_get(rank, dl, &sec, err, errlen) != 0)
        return NULL;
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
    *c = (tcp_t){rank, size, fd, nt_host_id(), 0};
    const char *hid = getenv("NETTUNE_HOSTID");
    if (hid && *hid)
        c->hostid = atoi(hid);
    l->ops = &nt_tcp_ops;
    l->impl = c;
    if (rank == 0 && size > 1) {
        int lf = listen_fd >= 0 ? listen_fd : nt_launcher_tcp_listen(host, port, size, err, errlen);
        int rc = lf >= 0 ? nt_tcp_gather_ranks(c, lf, &sec, dl, timeout_s, err, errlen) : -1;
        if (lf >= 0)
            close(lf);
        if (rc != 0) {
            nt_launcher_tcp_destroy(l);
            return NULL;
        }
    } else if (rank > 0) {
        char ps[16];
        snprintf(ps, sizeof(ps), "%d", port);
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *ai = NULL;
        if (getaddrinfo(host, ps, &hints, &ai) || !ai) {
            snprintf(err, errlen, "tcp launcher: cannot resolve rank 0's host '%s'", host);
            nt_launcher_tcp_destroy(l);
            return NULL;
        }
        int s = -1;
        while (nt_mono_s() < dl) { /* rank 0 may not listen yet: retry until the deadline */
            s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (s >= 0 && connect(s, ai->ai_addr, ai->ai_addrlen) == 0)
                break;
            if (s >= 0)
                close(s);
            s = -1;
            usleep(50000);
        }
        freeaddrinfo(ai);
        uint8_t hello[NT_TCP_HELLO_LEN];
        uint32_t magic = htonl(NT_TCP_MAGIC), me = htonl((uint32_t)rank);
        memcpy(hello, &magic, 4);
        memcpy(hello + 4, &me, 4);
        memcpy(hello + 8, sec.b, NT_TCP_SECRET_MAX);
        char ack = 0;
        nt_status_t st = s < 0 ? NT_ERR_PEER : nt_fd_xfer(s, hello, sizeof(hello), 1, dl);
        if (s < 0 || st != NT_OK) {
            snprintf(err, errlen,
                     "tcp launcher: rank %d cannot reach rank 0 at %s:%d within %.0f s", rank, host,
                     port, timeout_s);
        } else if ((st = nt_fd_xfer(s, &ack, 1, 0, dl)) != NT_OK || ack != NT_TCP_ACK) {
            snprintf(err, errlen,
                     "tcp launcher: rank %d: rank 0 at %s:%d %s (another job on that port, a "
                     "different NETTUNE_MEASURE_SECRET, or rank %d started twice)",
                     rank, host, port,
                     st == NT_ERR_TIMEOUT ? "did not answer the hello" : "refused the hello", rank);
        }
        if (s < 0 || st != NT_OK || ack != NT_TCP_ACK) {
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
