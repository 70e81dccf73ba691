/* In-process launcher for tests: one thread per rank, mailboxes guarded by one mutex, one
 * condition variable per rank (a message wakes its receiver only, so thousands of ranks cost a
 * wake-up per message, not one per waiting rank: make bench runs 4,096).
 * Collectives are built from point-to-point messages on reserved negative tags. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nettune/launcher.h"

#define NT_TAG_BARRIER (-1)
#define NT_TAG_GATHER (-2)
#define NT_TAG_BCAST (-3)

typedef struct nt_msg {
    struct nt_msg *next;
    int src, tag;
    size_t len;
    unsigned char data[];
} nt_msg_t;

typedef struct nt_world {
    /* One lock per mailbox (destination rank): a broadcast to 999 ranks would otherwise have
     * every woken receiver queue on one lock behind the sender (most of a 1,000-rank bench's
     * time went to that lock's futex waits). aborted is read under any of them. */
    pthread_mutex_t *mu; /* per destination rank */
    pthread_cond_t *cv;  /* per destination rank */
    int nranks, local_size;
    nt_msg_t **box;  /* per destination rank, FIFO */
    nt_msg_t **tail; /* per destination rank, its last message (NULL when empty) */
    volatile int aborted;
    int abort_code;
    pthread_mutex_t abort_mu;
} nt_world_t;

typedef struct nt_inproc {
    nt_launcher_t l;
    nt_world_t *w;
    int rank;
    nt_inproc_fn fn;
    void *arg;
    int result;
} nt_inproc_t;

static nt_inproc_t *nt_ip(nt_launcher_t *l)
{
    return (nt_inproc_t *)l->impl;
}
static int nt_ip_rank(nt_launcher_t *l)
{
    return nt_ip(l)->rank;
}
static int nt_ip_size(nt_launcher_t *l)
{
    return nt_ip(l)->w->nranks;
}

static int nt_ip_local_group(nt_launcher_t *l, int *local_rank, int *local_size)
{
    nt_inproc_t *p = nt_ip(l);
    int ls = p->w->local_size, first = p->rank / ls * ls, n = p->w->nranks - first;
    *local_rank = p->rank - first;
    *local_size = n < ls ? n : ls;
    return 0;
}

static void nt_deadline(struct timespec *ts, double timeout_s)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)timeout_s;
    ts->tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

static nt_status_t nt_ip_send_tag(nt_launcher_t *l, int peer, int tag, const void *buf,
                                  size_t bytes)
{
    nt_inproc_t *p = nt_ip(l);
    nt_world_t *w = p->w;
    nt_msg_t *m;

    if (peer < 0 || peer >= w->nranks)
        return NT_ERR_INVALID;
    m = malloc(sizeof(*m) + bytes);
    if (!m)
        return NT_ERR_NOMEM;
    m->next = NULL;
    m->src = p->rank;
    m->tag = tag;
    m->len = bytes;
    if (bytes)
        memcpy(m->data, buf, bytes);
    pthread_mutex_lock(&w->mu[peer]);
    if (w->aborted) {
        pthread_mutex_unlock(&w->mu[peer]);
        free(m);
        return NT_ERR_PEER;
    }
    if (w->tail[peer])
        w->tail[peer]->next = m;
    else
        w->box[peer] = m;
    w->tail[peer] = m;
    pthread_cond_signal(&w->cv[peer]);
    pthread_mutex_unlock(&w->mu[peer]);
    return NT_OK;
}

static nt_status_t nt_ip_recv_tag(nt_launcher_t *l, int peer, int tag, void *buf, size_t bytes,
                                  double timeout_s)
{
    nt_inproc_t *p = nt_ip(l);
    nt_world_t *w = p->w;
    struct timespec dl;
    nt_status_t st = NT_OK;

    if (peer < 0 || peer >= w->nranks)
        return NT_ERR_INVALID;
    nt_deadline(&dl, timeout_s);
    pthread_mutex_lock(&w->mu[p->rank]);
    for (;;) {
        nt_msg_t **pp, *prev = NULL;
        for (pp = &w->box[p->rank]; *pp; prev = *pp, pp = &(*pp)->next)
            if ((*pp)->src == peer && (*pp)->tag == tag)
                break;
        if (*pp) {
            nt_msg_t *m = *pp;
            *pp = m->next;
            if (w->tail[p->rank] == m)
                w->tail[p->rank] = prev;
            if (m->len != bytes)
                st = NT_ERR_PEER; /* a size mismatch is a protocol error of the peer */
            else if (bytes)
                memcpy(buf, m->data, bytes);
            free(m);
            break;
        }
        if (w->aborted) {
            st = NT_ERR_PEER;
            break;
        }
        if (pthread_cond_timedwait(&w->cv[p->rank], &w->mu[p->rank], &dl) == ETIMEDOUT) {
            st = NT_ERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&w->mu[p->rank]);
    return st;
}

static nt_status_t nt_ip_send(nt_launcher_t *l, int peer, int tag, const void *buf, size_t bytes,
                              double timeout_s)
{
    (void)timeout_s; /* mailboxes never block a sender */
    return tag < 0 ? NT_ERR_INVALID : nt_ip_send_tag(l, peer, tag, buf, bytes);
}

static nt_status_t nt_ip_recv(nt_launcher_t *l, int peer, int tag, void *buf, size_t bytes,
                              double timeout_s)
{
    return tag < 0 ? NT_ERR_INVALID : nt_ip_recv_tag(l, peer, tag, buf, bytes, timeout_s);
}

static nt_status_t nt_ip_bcast(nt_launcher_t *l, void *buf, size_t bytes, int root,
                               double timeout_s)
{
    int me = nt_ip(l)->rank, n = nt_ip(l)->w->nranks;
    nt_status_t st = NT_OK;

    if (me != root)
        return nt_ip_recv_tag(l, root, NT_TAG_BCAST, buf, bytes, timeout_s);
    for (int r = 0; r < n && st == NT_OK; r++)
        if (r != root)
            st = nt_ip_send_tag(l, r, NT_TAG_BCAST, buf, bytes);
    return st;
}

static nt_status_t nt_ip_allgather(nt_launcher_t *l, const void *send, void *recv, size_t bytes,
                                   double timeout_s)
{
    int me = nt_ip(l)->rank, n = nt_ip(l)->w->nranks;
    nt_status_t st = NT_OK;

    if (me != 0) {
        st = nt_ip_send_tag(l, 0, NT_TAG_GATHER, send, bytes);
    } else {
        memmove(recv, send, bytes);
        for (int r = 1; r < n && st == NT_OK; r++)
            st = nt_ip_recv_tag(l, r, NT_TAG_GATHER, (char *)recv + (size_t)r * bytes, bytes,
                                timeout_s);
    }
    if (st != NT_OK)
        return st;
    return nt_ip_bcast(l, recv, bytes * (size_t)n, 0, timeout_s);
}

static nt_status_t nt_ip_barrier(nt_launcher_t *l, double timeout_s)
{
    int n = nt_ip(l)->w->nranks;
    char *tmp = malloc((size_t)n);
    nt_status_t st;

    if (!tmp)
        return NT_ERR_NOMEM;
    st = nt_ip_allgather(l, "", tmp, 1, timeout_s);
    free(tmp);
    return st;
}

static void nt_ip_abort(nt_launcher_t *l, int code)
{
    nt_world_t *w = nt_ip(l)->w;
    pthread_mutex_lock(&w->abort_mu);
    if (!w->aborted) {
        w->abort_code = code;
        w->aborted = 1;
    }
    pthread_mutex_unlock(&w->abort_mu);
    /* every waiting receiver wakes (it checks aborted under its own mailbox's lock) */
    for (int r = 0; r < w->nranks; r++) {
        pthread_mutex_lock(&w->mu[r]);
        pthread_cond_broadcast(&w->cv[r]);
        pthread_mutex_unlock(&w->mu[r]);
    }
}

static const nt_launcher_ops_t nt_inproc_ops = {
    .name = "inproc",
    .rank = nt_ip_rank,
    .size = nt_ip_size,
    .local_group = nt_ip_local_group,
    .barrier = nt_ip_barrier,
    .allgather = nt_ip_allgather,
    .bcast = nt_ip_bcast,
    .send = nt_ip_send,
    .recv = nt_ip_recv,
    .abort = nt_ip_abort,
};

static void *nt_ip_thread(void *arg)
{
    nt_inproc_t *p = arg;
    p->result = p->fn(&p->l, p->arg);
    return NULL;
}

int nt_inproc_run(int nranks, int local_size, nt_inproc_fn fn, void *arg, int *abort_code)
{
    nt_world_t w;
    nt_inproc_t *ranks;
    pthread_t *th;
    pthread_condattr_t ca;
    int result = 0, nranks_started = nranks;

    if (nranks < 1 || local_size < 1)
        return -1;
    memset(&w, 0, sizeof(w));
    w.nranks = nranks;
    w.local_size = local_size;
    w.abort_code = -1;
    w.box = calloc((size_t)nranks, sizeof(*w.box));
    w.tail = calloc((size_t)nranks, sizeof(*w.tail));
    w.cv = calloc((size_t)nranks, sizeof(*w.cv));
    w.mu = calloc((size_t)nranks, sizeof(*w.mu));
    ranks = calloc((size_t)nranks, sizeof(*ranks));
    th = calloc((size_t)nranks, sizeof(*th));
    if (!w.box || !w.tail || !w.cv || !w.mu || !ranks || !th) {
        free(w.box);
        free(w.tail);
        free(w.cv);
        free(w.mu);
        free(ranks);
        free(th);
        return -1;
    }
    pthread_mutex_init(&w.abort_mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    for (int r = 0; r < nranks; r++) {
        pthread_mutex_init(&w.mu[r], NULL);
        pthread_cond_init(&w.cv[r], &ca);
    }
    pthread_condattr_destroy(&ca);
    for (int r = 0; r < nranks; r++) {
        ranks[r].l.ops = &nt_inproc_ops;
        ranks[r].l.impl = &ranks[r];
        ranks[r].w = &w;
        ranks[r].rank = r;
        ranks[r].fn = fn;
        ranks[r].arg = arg;
        if (pthread_create(&th[r], NULL, nt_ip_thread, &ranks[r]) != 0) {
            /* Out of threads: the ranks started so far see an aborted world and return. */
            nt_ip_abort(&ranks[0].l, -1);
            for (int q = r; q < nranks; q++)
                ranks[q].result = -1;
            nranks_started = r;
            break;
        }
    }
    for (int r = 0; r < nranks; r++) {
        if (r < nranks_started)
            pthread_join(th[r], NULL);
        if (!result && ranks[r].result)
            result = ranks[r].result;
    }
    if (abort_code)
        *abort_code = w.aborted ? w.abort_code : -1;
    for (int r = 0; r < nranks; r++) {
        while (w.box[r]) {
            nt_msg_t *m = w.box[r];
            w.box[r] = m->next;
            free(m);
        }
    }
    for (int r = 0; r < nranks; r++) {
        pthread_cond_destroy(&w.cv[r]);
        pthread_mutex_destroy(&w.mu[r]);
    }
    pthread_mutex_destroy(&w.abort_mu);
    free(w.box);
    free(w.tail);
    free(w.cv);
    free(w.mu);
    free(ranks);
    free(th);
    return result;
}
