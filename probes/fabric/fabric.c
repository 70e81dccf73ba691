/* The fabric phases under load: see fabric.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fabric.h"
#include "nettune/clock.h"
#include "nettune/log.h"
#include "nettune/report.h"

#define NT_TAG_FABRIC 110
#define NT_FAB_MAGIC 0x6e744642u /* "ntFB" */
#define NT_FAB_CHUNK (1u << 20)  /* bytes per send/recv call */
/* Connections one node may have waiting in a listener: an all-to-all round sends each node up
 * to NT_FAB_A2A_WINDOW flows per rail. */
#define NT_FAB_BACKLOG 1024

/* One rank's part of the address exchange. */
typedef struct nt_fab_addr {
    int32_t nrails;                  /* -1: not its node's leader; 0: no rail (why says) */
    uint32_t ip[NT_FAB_MAX_RAILS];   /* network order */
    uint16_t port[NT_FAB_MAX_RAILS]; /* network order */
    char ifname[NT_FAB_MAX_RAILS][IF_NAMESIZE];
    char why[160];
} nt_fab_addr_t;

/* One flow's outcome on the wire to rank 0: its index in the schedule, as the sender saw it. */
typedef struct nt_fab_rec {
    uint32_t flow, ok;
    double time_s, start_s, end_s;
} nt_fab_rec_t;

typedef struct nt_fab_ctx {
    nt_probe_t *p;
    int leader, mute, nrails, bind_dev;
    int lfd[NT_FAB_MAX_RAILS];
    nt_fab_addr_t mine;
    nt_fab_addr_t *all; /* per rank */
    char *buf;          /* NT_FAB_CHUNK bytes: what is sent, and where received bytes land */
    double timeout_s;   /* --peer-timeout: a wait without progress this long is a dead peer */
    nt_fab_rdma_t *rdma;     /* the flows' transport: RDMA (fabric_rdma.c) when set, else sockets */
    int rdma_used;           /* the report's transport: c->rdma was set */
    char transport_why[512]; /* why that transport (nt_fab_transport_choose) */
} nt_fab_ctx_t;

/* A connection of a round. */
typedef struct nt_fab_conn {
    int fd, sender, rail;
    uint32_t flow;
    size_t bytes, done;
    int state; /* 0 connecting / header, 1 data, 2 ack, 3 done, -1 failed */
    unsigned char hdr[12];
    size_t hdr_len;
    double first_s, end_s; /* the first byte's send (sender), the ack's receipt */
} nt_fab_conn_t;

int nt_fabric_wanted(const nt_probe_params_t *params)
{
    return params->fabric || (params->mode == NT_SCHED_FULL && !params->local &&
                              params->fabric_budget_s > 0 && !params->checks_only);
}

/* The first name of list (--fabric-ifaces, comma-separated) that is no interface of this host
 * (if_nametoindex: /sys/class/net in this network namespace) into err, with the interfaces
 * the host has; 0 when every name is one. */
static int nt_fab_iface_missing(const char *list, const char *host, char *err, size_t len)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        struct if_nameindex *ifs, *i;
        size_t off;
        if (if_nametoindex(t) != 0)
            continue;
        off = (size_t)snprintf(err, len,
                               "no interface '%s' on %s (--fabric-ifaces %s): give the rails by "
                               "the names of its interfaces: ",
                               t, host, list);
        if ((ifs = if_nameindex())) {
            for (i = ifs; i->if_name && off < len; i++)
                off += (size_t)snprintf(err + off, len - off, "%s%s", i == ifs ? "" : ", ",
                                        i->if_name);
            if_freenameindex(ifs);
        }
        return 1;
    }
    return 0;
}

nt_status_t nt_fabric_ifaces_check(nt_probe_t *p, char *err, size_t len)
{
    const nt_probe_params_t *params = p->params;
    nt_launcher_t *l = p->launcher;
    int32_t mine = 0, *all;
    int first = -1;
    char msg[NT_FAB_IFACE_ERR_MAX] = "";
    nt_status_t st;

    if (len)
        err[0] = '\0';
    if (!nt_fabric_wanted(params) || params->local || !params->fabric_ifaces || p->nnodes < 2)
        return NT_OK;
    /* the node's leader opens the rails (nt_fab_rails_open): its interfaces are the ones */
    if (p->local_rank == 0)
        mine = nt_fab_iface_missing(params->fabric_ifaces, p->nodes[p->my_node].host, msg,
                                    sizeof(msg));
    if (!(all = calloc((size_t)p->size, sizeof(*all))))
        return NT_ERR_NOMEM;
    st = l->ops->allgather(l, &mine, all, sizeof(mine), params->peer_timeout_s);
    for (int r = 0; st == NT_OK && r < p->size && first < 0; r++)
        if (all[r])
            first = r;
    free(all);
    if (st != NT_OK)
        return NT_ERR_PEER;
    if (first < 0)
        return NT_OK;
    /* the first node that lacks one says which, for rank 0 to print once */
    if (l->ops->bcast(l, msg, sizeof(msg), first, params->peer_timeout_s) != NT_OK)
        return NT_ERR_PEER;
    msg[sizeof(msg) - 1] = '\0';
    if (len)
        snprintf(err, len, "%s", msg);
    return NT_ERR_NOT_FOUND;
}

void nt_fabric_trace_free(nt_fab_trace_t *t)
{
    if (!t)
        return;
    nt_fab_schedule_destroy(&t->sched);
    free(t->results);
    memset(t, 0, sizeof(*t));
}

/* The IPv4 address of interface name (up) into *ip; 0 when it has none. */
static int nt_fab_iface_ip(const struct ifaddrs *ifa, const char *name, uint32_t *ip)
{
    for (const struct ifaddrs *i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && strcmp(i->ifa_name, name) == 0 &&
            (i->ifa_flags & IFF_UP)) {
            *ip = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
            return 1;
        }
    return 0;
}

/* The default rail: the interface of the default route (/proc/net/route, destination 0: where
 * traffic to the other hosts leaves, the launcher's too on a flat network), else the first
 * interface that is up, not loopback, with an IPv4 address, else lo. */
static void nt_fab_default_iface(const struct ifaddrs *ifa, char *name, size_t len)
{
    FILE *f = fopen("/proc/net/route", "r");
    char line[256], dev[IF_NAMESIZE + 1];
    unsigned long dst;
    uint32_t ip;

    if (f) {
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "%16s %lx", dev, &dst) == 2 && dst == 0 &&
                nt_fab_iface_ip(ifa, dev, &ip)) {
                memcpy(name, dev, strnlen(dev, len - 1));
                name[strnlen(dev, len - 1)] = '\0';
                fclose(f);
                return;
            }
        fclose(f);
    }
    for (const struct ifaddrs *i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK)) {
            snprintf(name, len, "%s", i->ifa_name);
            return;
        }
    snprintf(name, len, "lo");
}

/* A socket of rail (its device bound where rails must be kept apart), non-blocking. */
static int nt_fab_socket(nt_fab_ctx_t *c, int rail)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (c->bind_dev &&
        setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->mine.ifname[rail],
                   (socklen_t)strlen(c->mine.ifname[rail])) != 0 &&
        c->bind_dev == 1) {
        /* Said once; the source address still picks the rail where routes follow it. */
        NT_INFO(SCHED, "fabric: cannot bind sockets to device '%s': %s", c->mine.ifname[rail],
                strerror(errno));
        c->bind_dev = 2;
    }
    return fd;
}

/* This node leader's rails: an address and a listener per interface. 0 rails with the reason
 * in c->mine.why when an interface is missing. */
static void nt_fab_rails_open(nt_fab_ctx_t *c)
{
    const char *list = c->p->params->fabric_ifaces;
    struct ifaddrs *ifa = NULL;
    char names[NT_FAB_MAX_RAILS][IF_NAMESIZE];
    int n = 0;

    if (getifaddrs(&ifa) != 0) {
        snprintf(c->mine.why, sizeof(c->mine.why), "cannot list the interfaces: %s",
                 strerror(errno));
        return;
    }
    if (list) {
        char buf[256], *save = NULL;
        snprintf(buf, sizeof(buf), "%s", list);
        for (char *t = strtok_r(buf, ",", &save); t && n < NT_FAB_MAX_RAILS;
             t = strtok_r(NULL, ",", &save))
            snprintf(names[n++], IF_NAMESIZE, "%s", t);
    } else
        nt_fab_default_iface(ifa, names[n++], IF_NAMESIZE);
    c->bind_dev = n > 1;
    for (int r = 0; r < n; r++) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        socklen_t sl = sizeof(sa);
        int fd;
        snprintf(c->mine.ifname[r], IF_NAMESIZE, "%s", names[r]);
        if (!nt_fab_iface_ip(ifa, names[r], &c->mine.ip[r])) {
            snprintf(c->mine.why, sizeof(c->mine.why),
                     "interface '%s' has no IPv4 address or is down: name the rails with "
                     "--fabric-ifaces",
                     names[r]);
            break;
        }
        sa.sin_addr.s_addr = c->mine.ip[r];
        fd = nt_fab_socket(c, r);
        if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
            listen(fd, NT_FAB_BACKLOG) != 0 || getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
            snprintf(c->mine.why, sizeof(c->mine.why), "cannot listen on '%s': %s", names[r],
                     strerror(errno));
            if (fd >= 0)
                close(fd);
            break;
        }
        c->lfd[r] = fd;
        c->mine.port[r] = sa.sin_port;
        c->mine.nrails = r + 1;
    }
    if (c->mine.why[0]) /* every rail or none: the rails of a node are its rail indices */
        for (int r = 0; r < c->mine.nrails; r++) {
            close(c->lfd[r]);
            c->lfd[r] = -1;
        }
    if (c->mine.why[0])
        c->mine.nrails = 0;
    freeifaddrs(ifa);
}

static void nt_fab_conn_fail(nt_fab_conn_t *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
    k->state = -1;
}

/* The connect half of a round: this node's sending flows connect and say which flow they are. */
static void nt_fab_connect(nt_fab_ctx_t *c, uint32_t round, const nt_fab_flow_t *flows,
                           size_t first, size_t n, nt_fab_conn_t *k, size_t *nk)
{
    nt_probe_t *p = c->p;
    double deadline = nt_clock_s() + c->timeout_s;
    size_t start = *nk, pending = 0;

    for (size_t i = 0; i < n; i++) {
        const nt_fab_flow_t *f = &flows[i];
        struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
        const nt_fab_addr_t *peer;
        nt_fab_conn_t *q;
        if (f->src != p->my_node)
            continue;
        q = &k[(*nk)++];
        *q = (nt_fab_conn_t){.fd = -1, .sender = 1, .rail = f->rail, .flow = (uint32_t)(first + i),
                             .bytes = f->bytes};
        peer = &c->all[p->nodes[f->dst].ranks[0]];
        if (c->mute || (q->fd = nt_fab_socket(c, f->rail)) < 0) {
            nt_fab_conn_fail(q);
            continue;
        }
        src.sin_addr.s_addr = c->mine.ip[f->rail];
        dst.sin_addr.s_addr = peer->ip[f->rail];
        dst.sin_port = peer->port[f->rail];
        if (bind(q->fd, (struct sockaddr *)&src, sizeof(src)) != 0 ||
            (connect(q->fd, (struct sockaddr *)&dst, sizeof(dst)) != 0 && errno != EINPROGRESS)) {
            nt_fab_conn_fail(q);
            continue;
        }
        pending++;
    }
    while (pending > 0 && nt_clock_s() < deadline && !*p->stop) {
        struct pollfd pf[NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW];
        size_t idx[NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW], np = 0;
        for (size_t i = start; i < *nk; i++)
            if (k[i].state == 0 && k[i].fd >= 0) {
                pf[np] = (struct pollfd){.fd = k[i].fd, .events = POLLOUT};
                idx[np++] = i;
            }
        if (poll(pf, np, 100) < 0 && errno != EINTR)
            break;
        for (size_t j = 0; j < np; j++) {
            nt_fab_conn_t *q = &k[idx[j]];
            int err = 0;
            socklen_t el = sizeof(err);
            uint32_t h[3] = {htonl(NT_FAB_MAGIC), htonl(round), htonl(q->flow)};
            if (!pf[j].revents)
                continue;
            pending--;
            if (getsockopt(q->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0 ||
                send(q->fd, h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
                nt_fab_conn_fail(q);
                continue;
            }
            q->state = 1;
        }
    }
    for (size_t i = start; i < *nk; i++)
        if (k[i].state == 0)
            nt_fab_conn_fail(&k[i]);
}

/* The accept half: the flows this node receives in the round, each known by its header. A
 * connection of another round (a sender that gave up late) is closed. */
static void nt_fab_accept(nt_fab_ctx_t *c, uint32_t round, const nt_fab_flow_t *flows,
                          size_t first, size_t n, nt_fab_conn_t *k, size_t *nk)
{
    nt_probe_t *p = c->p;
    double deadline = nt_clock_s() + c->timeout_s;
    size_t expect = 0, got = 0, start = *nk;

    if (c->mute)
        return;
    for (size_t i = 0; i < n; i++)
        expect += flows[i].dst == p->my_node;
    while (got < expect && nt_clock_s() < deadline && !*p->stop) {
        struct pollfd pf[NT_FAB_MAX_RAILS + NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW];
        size_t idx[NT_FAB_MAX_RAILS + NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW], np = 0;
        for (int r = 0; r < c->nrails; r++) {
            pf[np] = (struct pollfd){.fd = c->lfd[r], .events = POLLIN};
            idx[np++] = (size_t)-1 - (size_t)r;
        }
        for (size_t i = start; i < *nk; i++)
            if (k[i].state == 0) {
                pf[np] = (struct pollfd){.fd = k[i].fd, .events = POLLIN};
                idx[np++] = i;
            }
        if (poll(pf, np, 100) < 0 && errno != EINTR)
            break;
        for (size_t j = 0; j < np; j++) {
            if (!pf[j].revents)
                continue;
            if (idx[j] > (size_t)-1 - NT_FAB_MAX_RAILS) {
                int r = (int)((size_t)-1 - idx[j]);
                int fd = accept4(c->lfd[r], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                    continue;
                if (*nk - start >= (size_t)(NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW)) {
                    close(fd);
                    continue;
                }
                k[(*nk)++] = (nt_fab_conn_t){.fd = fd, .rail = r};
            } else {
                nt_fab_conn_t *q = &k[idx[j]];
                ssize_t m = recv(q->fd, q->hdr + q->hdr_len, sizeof(q->hdr) - q->hdr_len, 0);
                uint32_t h[3], f;
                if (m <= 0) {
                    if (m == 0 || (errno != EAGAIN && errno != EINTR))
                        nt_fab_conn_fail(q);
                    continue;
                }
                q->hdr_len += (size_t)m;
                if (q->hdr_len < sizeof(q->hdr))
                    continue;
                memcpy(h, q->hdr, sizeof(h));
                f = ntohl(h[2]);
                if (ntohl(h[0]) != NT_FAB_MAGIC || ntohl(h[1]) != round || f < first ||
                    f >= first + n || flows[f - first].dst != p->my_node ||
                    flows[f - first].rail != q->rail) {
                    nt_fab_conn_fail(q);
                    continue;
                }
                q->flow = f;
                q->bytes = flows[f - first].bytes;
                q->state = 1;
                got++;
            }
        }
    }
    for (size_t i = start; i < *nk; i++)
        if (k[i].state == 0)
            nt_fab_conn_fail(&k[i]);
}

/* Every flow of the round at once: senders send their bytes and wait for the ack, receivers
 * take the bytes and ack. A round without progress for --peer-timeout, or still going after
 * cap_s, fails what is left (the other ranks wait for rank 0 that long, no longer). */
static void nt_fab_transfer(nt_fab_ctx_t *c, nt_fab_conn_t *k, size_t nk, double cap_s)
{
    double last = nt_clock_s(), end = last + cap_s;
    size_t active = 0;
    struct pollfd *pf = malloc((nk ? nk : 1) * sizeof(*pf));
    size_t *idx = malloc((nk ? nk : 1) * sizeof(*idx));

    if (!pf || !idx) {
        for (size_t i = 0; i < nk; i++)
            if (k[i].state > 0)
                nt_fab_conn_fail(&k[i]);
        free(pf);
        free(idx);
        return;
    }
    for (size_t i = 0; i < nk; i++)
        active += k[i].state > 0;
    while (active > 0) {
        size_t np = 0;
        double now;
        for (size_t i = 0; i < nk; i++) {
            nt_fab_conn_t *q = &k[i];
            short ev = q->sender ? (q->state == 1 ? POLLOUT : POLLIN)
                                 : (q->state == 1 ? POLLIN : POLLOUT);
            if (q->state <= 0 || q->state == 3)
                continue;
            pf[np] = (struct pollfd){.fd = q->fd, .events = ev};
            idx[np++] = i;
        }
        if (poll(pf, np, 100) < 0 && errno != EINTR)
            break;
        now = nt_clock_s();
        for (size_t j = 0; j < np; j++) {
            nt_fab_conn_t *q = &k[idx[j]];
            ssize_t m;
            if (!pf[j].revents)
                continue;
            if (q->state == 1) {
                size_t want = q->bytes - q->done < NT_FAB_CHUNK ? q->bytes - q->done : NT_FAB_CHUNK;
                m = q->sender ? send(q->fd, c->buf, want, MSG_NOSIGNAL)
                              : recv(q->fd, c->buf, want, 0);
                if (m > 0) {
                    if (q->done == 0)
                        q->first_s = now;
                    q->done += (size_t)m;
                    last = now;
                    if (q->done == q->bytes)
                        q->state = 2;
                    continue;
                }
            } else {
                char ack = 1;
                m = q->sender ? recv(q->fd, &ack, 1, 0) : send(q->fd, &ack, 1, MSG_NOSIGNAL);
                if (m == 1) {
                    q->end_s = nt_clock_s();
                    q->state = 3;
                    active--;
                    last = now;
                    continue;
                }
            }
            if (m == 0 || (errno != EAGAIN && errno != EINTR)) {
                nt_fab_conn_fail(q);
                active--;
            }
        }
        if (now - last > c->timeout_s || now > end || *c->p->stop)
            break;
    }
    for (size_t i = 0; i < nk; i++)
        if (k[i].state > 0 && k[i].state < 3)
            nt_fab_conn_fail(&k[i]);
    free(pf);
    free(idx);
}

/* How long the flows of a round estimated at est_s may take: one --peer-timeout, and four
 * times the estimate (a loaded fabric is slower than the calibration said, a broken one much
 * slower: its flows fail). */
static double nt_fab_transfer_cap(const nt_fab_ctx_t *c, double est_s)
{
    return c->timeout_s + 4.0 * est_s;
}

/* How long a rank that follows rank 0 waits for its next word in a round estimated at est_s:
 * the connects, the accepts, the transfer's cap and the results, each within their deadline. */
static double nt_fab_follow_s(const nt_fab_ctx_t *c, double est_s)
{
    return 3.0 * c->timeout_s + nt_fab_transfer_cap(c, est_s) + 15.0;
}

/* One round on this rank (every rank calls it: it holds a barrier): flows[0..n) are the
 * schedule's flows first.. ., estimated at est_s. This rank's sent flows' outcomes go to recs
 * (*nrecs of them). NT_ERR_PEER when the barrier failed. */
static nt_status_t nt_fab_round(nt_fab_ctx_t *c, uint32_t round, const nt_fab_flow_t *flows,
                                size_t first, size_t n, double est_s, nt_fab_rec_t *recs,
                                size_t *nrecs)
{
    nt_probe_t *p = c->p;
    nt_launcher_t *l = p->launcher;
    size_t nk = 0, cap = 0;
    nt_fab_conn_t *k = NULL;
    nt_status_t st;
    double t0;

    *nrecs = 0;
    if (c->rdma) {
        uint32_t ids[NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW];
        nt_fab_result_t res[NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW];
        st = nt_fab_rdma_round(c->rdma, p, flows, first, n, nt_fab_transfer_cap(c, est_s), ids,
                               res, nrecs);
        for (size_t i = 0; i < *nrecs; i++)
            recs[i] = (nt_fab_rec_t){.flow = ids[i], .ok = (uint32_t)res[i].ok,
                                     .time_s = res[i].time_s, .start_s = res[i].start_s,
                                     .end_s = res[i].end_s};
        return st;
    }
    if (c->leader) {
        for (size_t i = 0; i < n; i++)
            cap += flows[i].src == p->my_node;
        cap += (size_t)(NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW);
        if (!(k = malloc(cap * sizeof(*k))))
            return NT_ERR_NOMEM;
        nt_fab_connect(c, round, flows, first, n, k, &nk);
        nt_fab_accept(c, round, flows, first, n, k, &nk);
    }
    /* The others may still wait in accept for a silent sender: one timeout, then some. */
    st = l->ops->barrier(l, 2.0 * c->timeout_s + 5.0);
    t0 = nt_clock_s();
    if (st == NT_OK && c->leader)
        nt_fab_transfer(c, k, nk, nt_fab_transfer_cap(c, est_s));
    for (size_t i = 0; i < nk; i++) {
        if (!k[i].sender)
            continue;
        recs[*nrecs] = (nt_fab_rec_t){.flow = k[i].flow,
                                      .ok = k[i].state == 3,
                                      .time_s = k[i].state == 3 ? k[i].end_s - t0 : 0,
                                      .start_s = k[i].first_s,
                                      .end_s = k[i].end_s};
        (*nrecs)++;
    }
    for (size_t i = 0; i < nk; i++)
        if (k[i].fd >= 0)
            close(k[i].fd);
    free(k);
    return st == NT_OK ? NT_OK : NT_ERR_PEER;
}

/* Rank 0: the outcomes of a round from every node leader (its own in recs), into results
 * (indexed by flow). NT_ERR_PEER when a leader did not report. Other leaders: send theirs. */
static nt_status_t nt_fab_collect(nt_fab_ctx_t *c, const nt_fab_rec_t *recs, size_t nrecs,
                                  nt_fab_result_t *results, size_t nresults, double wait_s)
{
    nt_probe_t *p = c->p;
    nt_status_t st = NT_OK;

    if (p->rank != 0)
        return c->leader ? nt_launcher_send_blob(p->launcher, 0, NT_TAG_FABRIC, recs,
                                                 nrecs * sizeof(*recs), wait_s)
                         : NT_OK;
    for (int n = 0; n < p->nnodes && st == NT_OK; n++) {
        const nt_fab_rec_t *r = recs;
        char *blob = NULL;
        size_t len = nrecs * sizeof(*recs);
        int src = p->nodes[n].ranks[0];
        if (src != 0) {
            st = nt_launcher_recv_blob(p->launcher, src, NT_TAG_FABRIC, &blob, &len, wait_s);
            if (st != NT_OK)
                break;
            r = (const nt_fab_rec_t *)(const void *)blob;
        }
        for (size_t i = 0; i < len / sizeof(*recs); i++)
            if (r[i].flow < nresults)
                results[r[i].flow] = (nt_fab_result_t){.time_s = r[i].time_s,
                                                       .start_s = r[i].start_s,
                                                       .end_s = r[i].end_s,
                                                       .ok = (int)r[i].ok};
        free(blob);
    }
    return st == NT_OK ? NT_OK : NT_ERR_PEER;
}

/* A number for the report: 4 significant digits. */
static double nt_fab_sig4(double v)
{
    char b[32];
    snprintf(b, sizeof(b), "%.4g", v);
    return strtod(b, NULL);
}

/* Rank 0: the report's "fabric" section of what ran. */
static cJSON *nt_fab_section(nt_fab_ctx_t *c, const char *status, const char *reason,
                             uint64_t seed, double elapsed_s, const nt_fab_schedule_t *s,
                             const nt_fab_result_t *results, size_t rounds_run)
{
    nt_probe_t *p = c->p;
    cJSON *o = cJSON_CreateObject(), *nodes, *phases;
    int bad = !o;

    if (bad)
        return NULL;
    bad |= nt_json_add_str(o, "status", status) != NT_OK;
    if (reason)
        bad |= nt_json_add_str(o, "reason", reason) != NT_OK;
    bad |= nt_json_add_str(o, "transport", c->rdma_used ? "rdma" : "tcp") != NT_OK;
    bad |= nt_json_add_str(o, "transport_reason",
                           c->transport_why[0] ? c->transport_why
                                               : "no transport chosen: no flow ran") != NT_OK;
    bad |= nt_json_add_num(o, "budget_s", p->params->fabric_budget_s) != NT_OK;
    bad |= nt_json_add_num(o, "elapsed_s", round(elapsed_s * 1000) / 1000) != NT_OK;
    bad |= nt_json_add_num(o, "bytes_per_flow", (double)p->params->fabric_bytes) != NT_OK;
    bad |= nt_json_add_num(o, "seed", (double)seed) != NT_OK;
    bad |= !(nodes = nt_json_add_arr(o, "nodes"));
    for (int n = 0; !bad && n < p->nnodes; n++)
        bad |= !cJSON_AddItemToArray(nodes, cJSON_CreateString(p->nodes[n].host));
    bad |= nt_json_add_num(o, "rails", c->nrails > 0 ? c->nrails : 0) != NT_OK;
    /* Each node's IPv4 address per rail, as its leader bound it: two nodes with one address
     * share a network stack (one machine), and the judge leaves their fabric alone. */
    if (!bad && c->all && c->nrails > 0) {
        cJSON *addrs = nt_json_add_arr(o, "rail_addresses");
        bad |= !addrs;
        for (int n = 0; !bad && n < p->nnodes; n++) {
            const nt_fab_addr_t *a = &c->all[p->nodes[n].ranks[0]];
            cJSON *per = cJSON_CreateArray();
            bad |= !per || !cJSON_AddItemToArray(addrs, per);
            for (int r = 0; !bad && r < c->nrails; r++) {
                char ip[INET_ADDRSTRLEN];
                struct in_addr in = {.s_addr = a->ip[r]};
                bad |= !inet_ntop(AF_INET, &in, ip, sizeof(ip)) ||
                       !cJSON_AddItemToArray(per, cJSON_CreateString(ip));
            }
        }
    }
    bad |= !(phases = nt_json_add_arr(o, "phases"));
    for (int ph = 0; s && !bad && ph < NT_FAB_NPHASES; ph++) {
        cJSON *po = cJSON_CreateObject(), *rounds;
        bad |= !po || !cJSON_AddItemToArray(phases, po);
        if (bad)
            break;
        bad |= nt_json_add_str(po, "phase", nt_fab_phase_name((nt_fab_phase_t)ph)) != NT_OK;
        bad |= nt_json_add_str(po, "transport", c->rdma_used ? "rdma" : "tcp") != NT_OK;
        if (s->dropped[ph][0])
            bad |= nt_json_add_str(po, "reason", s->dropped[ph]) != NT_OK;
        bad |= !(rounds = nt_json_add_arr(po, "rounds"));
        int ran = 0;
        for (size_t r = 0; !bad && r < rounds_run; r++) {
            const nt_fab_round_t *rd = &s->rounds[r];
            cJSON *ro, *flows;
            if ((int)rd->phase != ph)
                continue;
            ran++;
            bad |= !(ro = cJSON_CreateObject()) || !cJSON_AddItemToArray(rounds, ro);
            bad |= bad || !(flows = nt_json_add_arr(ro, "flows"));
            for (size_t f = 0; !bad && f < rd->nflows; f++) {
                const nt_fab_flow_t *fl = &s->flows[rd->first + f];
                const nt_fab_result_t *res = &results[rd->first + f];
                cJSON *fo = cJSON_CreateObject();
                bad |= !fo || !cJSON_AddItemToArray(flows, fo);
                bad |= bad || nt_json_add_num(fo, "src", fl->src) != NT_OK ||
                       nt_json_add_num(fo, "dst", fl->dst) != NT_OK ||
                       nt_json_add_num(fo, "rail", fl->rail) != NT_OK ||
                       nt_json_add_num(fo, "bytes", (double)fl->bytes) != NT_OK;
                if (!bad && res->ok && res->time_s > 0)
                    bad |= nt_json_add_num(fo, "time_us", round(res->time_s * 1e7) / 10) != NT_OK ||
                           nt_json_add_num(fo, "bw_GBps",
                                           nt_fab_sig4((double)fl->bytes / res->time_s / 1e9)) !=
                               NT_OK;
                bad |= bad || nt_json_add_bool(fo, "ok", res->ok && res->time_s > 0) != NT_OK;
            }
        }
        /* planned rounds none of which ran (the run stopped before them: the alone rounds,
         * which come first, took longer than estimated): the phase says so */
        if (!bad && !ran && !s->dropped[ph][0] && s->phase_rounds[ph] > 0 && reason) {
            char d[320];
            snprintf(d, sizeof(d), "none of its %zu round%s ran: %s", s->phase_rounds[ph],
                     s->phase_rounds[ph] == 1 ? "" : "s", reason);
            bad |= nt_json_add_str(po, "reason", d) != NT_OK;
        }
    }
    if (bad) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The address exchange and the agreement on rails. Every rank computes the same rails (the
 * fewest any node has) and the same reason when a node has none. */
static nt_status_t nt_fab_exchange(nt_fab_ctx_t *c, char *why, size_t len)
{
    nt_probe_t *p = c->p;
    c->nrails = NT_FAB_MAX_RAILS;
    if (!(c->all = calloc((size_t)p->size, sizeof(*c->all))))
        return NT_ERR_NOMEM;
    if (p->launcher->ops->allgather(p->launcher, &c->mine, c->all, sizeof(c->mine),
                                    c->timeout_s) != NT_OK)
        return NT_ERR_PEER;
    for (int n = 0; n < p->nnodes; n++) {
        const nt_fab_addr_t *a = &c->all[p->nodes[n].ranks[0]];
        if (a->nrails < 1 && !why[0])
            snprintf(why, len, "%s: %s", p->nodes[n].host, a->why);
        if (a->nrails < c->nrails)
            c->nrails = a->nrails;
    }
    if (c->nrails < 1)
        c->nrails = 0;
    return NT_OK;
}

/* The calibration: one flow alone (node 0 to node 1, rail 0), then a ring of every node at
 * once (node i to node i+1): what a flow costs alone and under load, and what a round costs
 * beside its flows, as this fabric and these hosts deliver them (on one machine's loopback,
 * a loaded flow shares its CPUs: ten times an alone one and more). Measured on rank 0, then
 * sent to every rank with the seed and the budget left. Not in the report. */
typedef struct nt_fab_plan {
    uint64_t seed;
    double flow_s, loaded_flow_s, overhead_s, budget_left_s;
    int cal_failed; /* a calibration flow failed (its time is the timeout's, not the fabric's) */
} nt_fab_plan_t;

static nt_status_t nt_fab_calibrate(nt_fab_ctx_t *c, nt_fab_plan_t *plan, double t_start)
{
    nt_probe_t *p = c->p;
    size_t n = (size_t)p->nnodes, nrecs;
    nt_fab_flow_t *f = calloc(n, sizeof(*f));
    nt_fab_result_t *res = calloc(n, sizeof(*res));
    nt_fab_rec_t recs[NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW];
    double t0 = nt_clock_s(), t1 = t0, t2 = t0;
    nt_status_t st;

    if (!f || !res) {
        free(f);
        free(res);
        return NT_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        f[i] = (nt_fab_flow_t){.src = (int)i, .dst = (int)((i + 1) % n), .rail = 0,
                               .bytes = p->params->fabric_bytes};
    /* not yet estimated: a flow may take --peer-timeout */
    st = nt_fab_round(c, 0, f, 0, 1, c->timeout_s, recs, &nrecs);
    if (st == NT_OK)
        st = nt_fab_collect(c, recs, nrecs, res, 1, nt_fab_follow_s(c, c->timeout_s));
    if (p->rank == 0) {
        t1 = nt_clock_s();
        plan->flow_s = res[0].ok && res[0].time_s > 0 ? res[0].time_s : c->timeout_s;
        plan->cal_failed = !(res[0].ok && res[0].time_s > 0);
        plan->overhead_s = fmin(c->timeout_s, fmax(0.002, t1 - t0 - (res[0].ok ? res[0].time_s : 0)));
    }
    memset(res, 0, n * sizeof(*res));
    if (st == NT_OK)
        st = nt_fab_round(c, 1, f, 0, n, c->timeout_s, recs, &nrecs);
    if (st == NT_OK)
        st = nt_fab_collect(c, recs, nrecs, res, n, nt_fab_follow_s(c, c->timeout_s));
    if (p->rank == 0) {
        t2 = nt_clock_s();
        plan->loaded_flow_s = 0;
        for (size_t i = 0; i < n; i++) {
            plan->loaded_flow_s = fmax(plan->loaded_flow_s,
                                       res[i].ok && res[i].time_s > 0 ? res[i].time_s : c->timeout_s);
            plan->cal_failed |= !(res[i].ok && res[i].time_s > 0);
        }
        plan->loaded_flow_s = fmax(plan->loaded_flow_s, plan->flow_s);
        plan->budget_left_s = p->params->fabric_budget_s - (nt_clock_s() - t_start);
        NT_INFO(SCHED,
                "fabric: a flow of %zu bytes takes %.4g s alone, %.4g s while every node sends "
                "one; a round %.4g s more (calibration %.3g s)",
                f[0].bytes, plan->flow_s, plan->loaded_flow_s, plan->overhead_s, t2 - t0);
    }
    free(f);
    free(res);
    if (st != NT_OK)
        return st;
    return p->launcher->ops->bcast(p->launcher, plan, sizeof(*plan), 0,
                                   p->rank == 0 ? c->timeout_s
                                                : 2.0 * nt_fab_follow_s(c, c->timeout_s));
}

nt_status_t nt_fabric_run(nt_probe_t *p, cJSON **section, nt_fab_trace_t *trace)
{
    nt_fab_ctx_t c = {.p = p, .leader = p->local_rank == 0, .timeout_s = p->params->peer_timeout_s};
    nt_fab_plan_t plan = {0};
    nt_fab_schedule_t s = {0};
    nt_fab_result_t *results = NULL;
    nt_fab_rec_t *recs = NULL;
    char why[256] = "";
    const char *status = "ran";
    double t_start = nt_clock_s();
    size_t run = 0;
    int planned = 0;
    nt_status_t st = NT_OK;

    *section = NULL;
    if (trace)
        memset(trace, 0, sizeof(*trace));
    for (int r = 0; r < NT_FAB_MAX_RAILS; r++)
        c.lfd[r] = -1;
    if (p->params->local || p->nnodes < 2) {
        if (p->rank == 0)
            *section = nt_fab_section(&c, "skipped",
                                      p->params->local
                                          ? "--local: one node, no fabric between nodes to load"
                                          : "one node: no fabric between nodes to load",
                                      0, 0, NULL, NULL, 0);
        return p->rank != 0 || *section ? NT_OK : NT_ERR_NOMEM;
    }
    c.mine.nrails = -1;
    if (c.leader) {
        const char *mute = getenv("NETTUNE_TEST_FABRIC_MUTE");
        c.mine.nrails = 0;
        nt_fab_rails_open(&c);
        /* Tests only: this node's leader takes part in the collectives but its sockets are
         * gone, as those of a host whose network died. */
        c.mute = mute && atoi(mute) == p->my_node;
    }
    if (!(c.buf = calloc(1, NT_FAB_CHUNK)) || (st = nt_fab_exchange(&c, why, sizeof(why))) != NT_OK)
        goto out;
    if (c.nrails == 0) {
        status = "skipped";
        goto out;
    }
    /* RDMA where every rail of every node has an ACTIVE RDMA port, else these sockets */
    if ((st = nt_fab_rdma_open(p, c.leader, (const char(*)[16])c.mine.ifname, c.nrails, &c.rdma,
                               c.transport_why, sizeof(c.transport_why))) != NT_OK)
        goto out;
    c.rdma_used = c.rdma != NULL;
    if (c.mute)
        for (int r = 0; r < NT_FAB_MAX_RAILS; r++)
            if (c.lfd[r] >= 0) {
                close(c.lfd[r]);
                c.lfd[r] = -1;
            }
    if (p->rank == 0)
        /* 53 bits: the report's numbers are doubles */
        plan.seed = p->params->fabric_seed_set
                        ? p->params->fabric_seed
                        : ((uint64_t)time(NULL) ^ nt_clock_ns()) & ((1ull << 53) - 1);
    if ((st = nt_fab_calibrate(&c, &plan, t_start)) != NT_OK)
        goto out;
    if (plan.budget_left_s <= 0 && plan.cal_failed) {
        /* its flows failed: the time went on waiting for them, and no budget would hold a
         * round of this fabric (the log names each failed flow and why) */
        snprintf(why, sizeof(why),
                 "the budget of %g s went on the calibration flows, which failed",
                 p->params->fabric_budget_s);
        status = "partial";
        goto out;
    }
    {
        /* a budget the calibration used up still gets its (empty) schedule: every phase is
         * listed with why it has no round, and the reason says what budget holds one */
        nt_fab_sched_params_t sp = {.nnodes = p->nnodes,
                                    .nrails = c.nrails,
                                    .budget_s = plan.budget_left_s > 0 ? plan.budget_left_s : 1e-9,
                                    .flow_s = plan.flow_s,
                                    .loaded_flow_s = plan.loaded_flow_s,
                                    .overhead_s = plan.overhead_s,
                                    .bytes = p->params->fabric_bytes,
                                    .seed = plan.seed};
        if ((st = nt_fab_schedule_create(&sp, &s)) != NT_OK)
            goto out;
        planned = 1;
    }
    if (s.nrounds == 0 || plan.budget_left_s <= 0) {
        nt_fab_no_round_reason(&s, plan.budget_left_s,
                               p->params->fabric_budget_s - plan.budget_left_s, why, sizeof(why));
        status = "skipped";
        goto out;
    }
    results = calloc(s.nflows ? s.nflows : 1, sizeof(*results));
    recs = malloc((size_t)(NT_FAB_MAX_RAILS * NT_FAB_A2A_WINDOW) * sizeof(*recs));
    if (!results || !recs) {
        st = NT_ERR_NOMEM;
        goto out;
    }
    for (; run < s.nrounds; run++) {
        const nt_fab_round_t *rd = &s.rounds[run];
        int go = 1;
        size_t nrecs;
        if (p->rank == 0) {
            double now = nt_clock_s();
            if (*p->stop)
                snprintf(why, sizeof(why), "stopped by a signal");
            else if (p->deadline > 0 && now + rd->est_s > p->deadline)
                snprintf(why, sizeof(why), "the run's --time-limit");
            else if (now - t_start + rd->est_s > p->params->fabric_budget_s)
                snprintf(why, sizeof(why), "the budget of %g s (the rounds took longer than "
                         "estimated)", p->params->fabric_budget_s);
            go = !why[0];
        }
        if (p->launcher->ops->bcast(p->launcher, &go, sizeof(go), 0,
                                    p->rank == 0 ? c.timeout_s
                                                 : nt_fab_follow_s(&c, rd->est_s)) != NT_OK) {
            st = NT_ERR_PEER;
            break;
        }
        if (!go)
            break;
        st = nt_fab_round(&c, (uint32_t)run + 2, s.flows + rd->first, rd->first, rd->nflows,
                          rd->est_s, recs, &nrecs);
        if (st == NT_OK)
            st = nt_fab_collect(&c, recs, nrecs, results, s.nflows, nt_fab_follow_s(&c, rd->est_s));
        if (st != NT_OK)
            break;
    }
    if (run < s.nrounds) {
        char more[sizeof(why)];
        status = "partial";
        snprintf(more, sizeof(more), "%s", why);
        snprintf(why, sizeof(why), "%zu of %zu rounds run: %.200s", run, s.nrounds,
                 st == NT_ERR_PEER ? "a rank stopped answering" : more);
    }
out:
    nt_fab_rdma_close(c.rdma, p, st == NT_OK);
    c.rdma = NULL;
    if (st == NT_ERR_PEER && !why[0]) {
        snprintf(why, sizeof(why), "a rank stopped answering before the rounds");
        status = "partial";
    }
    if (p->rank == 0 && st != NT_ERR_NOMEM) {
        *section = nt_fab_section(&c, status, strcmp(status, "ran") ? why : NULL, plan.seed,
                                  nt_clock_s() - t_start, planned ? &s : NULL, results, run);
        if (!*section)
            st = NT_ERR_NOMEM;
        else if (strcmp(status, "ran"))
            NT_INFO(SCHED, "fabric phases %s: %s", status, why);
    }
    if (trace && p->rank == 0 && st != NT_ERR_NOMEM) {
        trace->sched = s;
        trace->results = results;
        trace->rounds_run = run;
        memset(&s, 0, sizeof(s));
        results = NULL;
    }
    nt_fab_schedule_destroy(&s);
    free(results);
    free(recs);
    free(c.all);
    free(c.buf);
    for (int r = 0; r < NT_FAB_MAX_RAILS; r++)
        if (c.lfd[r] >= 0)
            close(c.lfd[r]);
    return st;
}
