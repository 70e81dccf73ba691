/* The slow node, NIC or link: communicators that contain node X are slower than communicators
 * of the same shape (ranks, nodes) and the same calls without it. The time compared is, per
 * call, the shortest exec time among the communicator's ranks: the rank that arrives last
 * waits for no one, so its time is the transfer itself. A straggler (compute) makes the others
 * wait but leaves that time as it is; a slow NIC or link lengthens it for every rank. So this
 * judgement speaks of the network, and the straggler judgement (judge.c) of compute. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/checks.h"
#include "nettune/rdoc.h"
#include "watch.h"

/* The rules of evidence (docs/watch.md, "Judgements and their evidence"). */
static const struct {
    int calls;          /* latest complete calls per communicator and series: the median of these */
    double ratio;       /* X's communicators are slower than every other by this factor... */
    double min_excess_us; /* ...and by at least this many microseconds */
    double share;       /* a shape is slow when at least this share of its series are */
    int max_named;      /* more candidate hosts than this is "cannot tell" */
    int stall_window;   /* latest calls of a communicator searched for stalls */
    double stall_min_us; /* a stall: the shortest exec time of a call at least this... */
    double stall_ratio;  /* ...and this many times its series' fastest call in the window */
    int stall_calls;     /* stalls in the host's communicators before it is named... */
    int stall_comms;     /* ...in at least this many communicators */
    int stall_pair_calls; /* stalls in one communicator of two hosts before the pair is named */
    int stall_fresh;     /* one of the stalled communicators stalled within its latest this many
                            calls (else the stalls are over) */
} nt_node_rules = {5, 3.0, 2000.0, 0.5, 2, 30, 100000.0, 10.0, 2, 2, 3, 12};

int nt_watch_node_settings(cJSON *s)
{
    return cJSON_AddNumberToObject(s, "slow_node_calls", nt_node_rules.calls) &&
                   cJSON_AddNumberToObject(s, "slow_node_ratio", nt_node_rules.ratio) &&
                   cJSON_AddNumberToObject(s, "slow_node_min_excess_us",
                                           nt_node_rules.min_excess_us) &&
                   cJSON_AddNumberToObject(s, "slow_node_share", nt_node_rules.share) &&
                   cJSON_AddNumberToObject(s, "stall_window_calls", nt_node_rules.stall_window) &&
                   cJSON_AddNumberToObject(s, "stall_min_us", nt_node_rules.stall_min_us) &&
                   cJSON_AddNumberToObject(s, "stall_ratio", nt_node_rules.stall_ratio) &&
                   cJSON_AddNumberToObject(s, "stall_calls", nt_node_rules.stall_calls) &&
                   cJSON_AddNumberToObject(s, "stall_comms", nt_node_rules.stall_comms) &&
                   cJSON_AddNumberToObject(s, "stall_pair_calls", nt_node_rules.stall_pair_calls) &&
                   cJSON_AddNumberToObject(s, "stall_fresh_calls", nt_node_rules.stall_fresh)
               ? 0
               : -1;
}

/* One (communicator, collective, size) series: the median of the per-call shortest exec times
 * over its latest `calls` complete calls. */
typedef struct {
    const nt_jobcomm_t *c;
    char op[NT_JOBREC_OP_MAX];
    double bytes;
    int nnodes;
    double t_us;
    int *hosts; /* indices into the host table, c->nranks entries (-1 = unknown) */
} nt_node_series_t;

typedef struct {
    char **names;
    int n, cap;
} nt_node_hosts_t;

static int nt_node_host_index(nt_node_hosts_t *h, const char *name)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->names[i], name) == 0)
            return i;
    if (h->n == h->cap) {
        int cap = h->cap ? h->cap * 2 : 16;
        char **t = realloc(h->names, (size_t)cap * sizeof(*t));
        if (!t)
            return -2;
        h->names = t;
        h->cap = cap;
    }
    if (!(h->names[h->n] = strdup(name)))
        return -2;
    return h->n++;
}

static int nt_node_series_has(const nt_node_series_t *s, int host)
{
    for (int i = 0; i < s->c->nranks; i++)
        if (s->hosts[i] == host)
            return 1;
    return 0;
}

/* Same shape and same calls: comparable. */
static int nt_node_series_like(const nt_node_series_t *a, const nt_node_series_t *b)
{
    return a->c->nranks == b->c->nranks && a->nnodes == b->nnodes && strcmp(a->op, b->op) == 0 &&
           a->bytes == b->bytes;
}

/* The series of one communicator, appended to *v; *short_series counts its series with too few
 * complete calls, *unseen_comms communicators skipped for a rank without a record (their hosts
 * are not known). Returns 0, -1 when out of memory. */
static int nt_node_comm_series(const nt_jobcomm_t *c, nt_node_hosts_t *hosts, nt_node_series_t **v,
                               size_t *n, size_t *cap, unsigned long *short_series,
                               unsigned long *unseen_comms)
{
    int *hidx = malloc((size_t)c->nranks * sizeof(int));
    double *t = malloc((size_t)nt_node_rules.calls * sizeof(double));
    char *done = c->window ? calloc(c->window, 1) : NULL;
    int rc = 0, nn = 0;
    if (!hidx || !t || !done)
        rc = -1;
    for (int i = 0; rc == 0 && i < c->nranks; i++) {
        hidx[i] = c->ranks[i].seen && c->ranks[i].host[0]
                      ? nt_node_host_index(hosts, c->ranks[i].host) : -1;
        if (hidx[i] == -2)
            rc = -1;
        int dup = hidx[i] < 0;
        for (int j = 0; j < i && !dup; j++)
            dup = hidx[j] == hidx[i];
        nn += !dup;
    }
    for (int i = 0; rc == 0 && i < c->nranks; i++)
        if (hidx[i] < 0) { /* a rank not seen: the communicator's hosts are not known */
            (*unseen_comms)++;
            free(hidx);
            free(t);
            free(done);
            return 0;
        }
    uint64_t lo = c->max_seq + 1 > c->window ? c->max_seq + 1 - c->window : 0;
    /* Newest first: the series of the latest call not yet taken. */
    for (uint64_t s0 = c->max_seq + 1; rc == 0 && c->any_seq && s0-- > lo;) {
        const nt_jobcall_t *k0 = nt_jobcomm_call(c, s0);
        if (!k0 || done[s0 % c->window])
            continue;
        int got = 0;
        for (uint64_t s = s0 + 1; s-- > lo;) {
            const nt_jobcall_t *k = nt_jobcomm_call(c, s);
            if (!k || done[s % c->window] || strcmp(k->op, k0->op) != 0 || k->bytes != k0->bytes)
                continue;
            done[s % c->window] = 1;
            double mn, mx;
            int arg;
            if (got < nt_node_rules.calls && k->nseen == c->nranks &&
                nt_jobcall_spread(c, k, &mn, &mx, &arg) == c->nranks && isfinite(mn))
                t[got++] = mn;
        }
        if (got < nt_node_rules.calls) {
            (*short_series)++;
            continue;
        }
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 32;
            nt_node_series_t *nv = realloc(*v, nc * sizeof(*nv));
            if (!nv) {
                rc = -1;
                break;
            }
            *v = nv;
            *cap = nc;
        }
        nt_node_series_t *e = &(*v)[(*n)++];
        memset(e, 0, sizeof(*e));
        e->c = c;
        snprintf(e->op, sizeof(e->op), "%s", k0->op);
        e->bytes = k0->bytes;
        e->nnodes = nn;
        e->t_us = nt_median(t, (size_t)got);
        if (!(e->hosts = malloc((size_t)c->nranks * sizeof(int)))) {
            (*n)--;
            rc = -1;
            break;
        }
        memcpy(e->hosts, hidx, (size_t)c->nranks * sizeof(int));
    }
    free(hidx);
    free(t);
    free(done);
    return rc;
}

/* What one host's comparison found. */
typedef struct {
    int shapes, slow_shapes; /* shapes with communicators with and without it; those slow */
    int series, slow_series, fast_series; /* series compared; those slow, those fast */
    double worst_ratio, t_with_us, t_without_us; /* the series with the largest ratio */
    const nt_node_series_t *worst;
} nt_node_eval_t;

/* Compares, for host `x`, every group of like series that has members with and without it. */
static void nt_node_host_eval(const nt_node_series_t *v, size_t n, int x, nt_node_eval_t *e)
{
    memset(e, 0, sizeof(*e));
    char *seen = calloc(n ? n : 1, 1);
    /* Shapes are counted once: (nranks, nnodes). */
    int shape_seen_n = 0, shape_slow[64] = {0}, shape_key[64][2], shape_fast[64] = {0},
        shape_series[64] = {0};
    for (size_t i = 0; seen && i < n; i++) {
        if (seen[i])
            continue;
        double with_min = INFINITY, with_max = -INFINITY, without[64];
        int nwith = 0, nwithout = 0;
        for (size_t j = i; j < n; j++) {
            if (seen[j] || !nt_node_series_like(&v[i], &v[j]))
                continue;
            seen[j] = 1;
            if (nt_node_series_has(&v[j], x)) {
                nwith++;
                with_min = fmin(with_min, v[j].t_us);
                with_max = fmax(with_max, v[j].t_us);
            } else if (nwithout < 64)
                without[nwithout++] = v[j].t_us;
        }
        if (!nwith || !nwithout)
            continue;
        e->series++;
        /* The typical communicator without X: one noisy peer does not hide X, nor frame it. */
        double typical = nt_median(without, (size_t)nwithout);
        int s = 0;
        while (s < shape_seen_n &&
               !(shape_key[s][0] == v[i].c->nranks && shape_key[s][1] == v[i].nnodes))
            s++;
        if (s == shape_seen_n && s < 64) {
            shape_key[s][0] = v[i].c->nranks;
            shape_key[s][1] = v[i].nnodes;
            shape_seen_n++;
        }
        if (s < 64)
            shape_series[s]++;
        double ratio = typical > 0 ? with_min / typical : INFINITY;
        if (ratio >= nt_node_rules.ratio && with_min - typical >= nt_node_rules.min_excess_us) {
            e->slow_series++;
            if (s < 64)
                shape_slow[s]++;
            if (!e->worst || ratio > e->worst_ratio) {
                e->worst = &v[i];
                e->worst_ratio = ratio;
                e->t_with_us = with_min;
                e->t_without_us = typical;
            }
        } else if (with_max > 0 && typical / with_max >= nt_node_rules.ratio &&
                   typical - with_max >= nt_node_rules.min_excess_us) {
            e->fast_series++; /* its communicators are the fast ones */
            if (s < 64)
                shape_fast[s] = 1;
        }
    }
    e->shapes = shape_seen_n;
    for (int s = 0; s < shape_seen_n; s++)
        e->slow_shapes += shape_slow[s] > 0 && !shape_fast[s] &&
                          shape_slow[s] >= nt_node_rules.share * shape_series[s];
    free(seen);
}

/* Marks in `slow` (one flag per communicator of `a`) those slower than the typical
 * communicator of their shape in at least `share` of their series, by the same rule. */
static void nt_node_comms_slow(const nt_jobalign_t *a, const nt_node_series_t *v, size_t n,
                               char *slow)
{
    for (size_t ci = 0; ci < nt_jobalign_ncomms(a); ci++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, ci);
        int compared = 0, slower = 0;
        for (size_t i = 0; i < n; i++) {
            if (v[i].c != c)
                continue;
            double others[64];
            int no = 0;
            for (size_t j = 0; j < n && no < 64; j++)
                if (v[j].c != c && nt_node_series_like(&v[i], &v[j]))
                    others[no++] = v[j].t_us;
            if (!no)
                continue;
            compared++;
            double typical = nt_median(others, (size_t)no);
            slower += typical > 0 && v[i].t_us >= nt_node_rules.ratio * typical &&
                      v[i].t_us - typical >= nt_node_rules.min_excess_us;
        }
        slow[ci] = compared > 0 && slower > 0 && slower >= nt_node_rules.share * compared;
    }
}

/* Stalls: calls whose shortest exec time (the rank that arrives last, which waits for no one:
 * the transfer) is at least stall_min_us and stall_ratio times the fastest call of its series
 * (same collective and size) over the communicator's latest stall_window calls: what the call
 * takes when no packet is lost. Not the series' median: a lossy link can stall one series in
 * most of its calls (measured, 10% loss: the ReduceScatter of 128 KiB of the lossy host's
 * data-parallel pair took 206-210 ms in 3 of its 5 calls of the window, the others 1 and 5 ms),
 * and the median of those is a stall itself. A call slow every time has no fast call: the median
 * rule's slow link, not a stall. Packet loss does this:
 * a lost segment waits for a retransmission timeout (TCP's is at least 200 ms: Linux
 * include/net/tcp.h TCP_RTO_MIN, doubling on each loss of the same segment; an InfiniBand QP's
 * is 4.096 us * 2^NCCL_IB_TIMEOUT), and the calls in between run at their usual time, so the
 * median of the slow-node rule never moves. Measured on the namespace cluster, 10% loss on one
 * host's veth: 5 calls of its two communicators took 208-223 ms for every rank (one 5.1 s)
 * within 4 steps, while no call of the 4 others, nor of any communicator over 84 healthy
 * steps (3,060 calls), had a shortest time above 26 ms. A job-wide slowdown stalls every
 * communicator, a slow link every call: neither is a stall of one host. Nor does a series that
 * turned slow and stayed so, 3 calls or more (a link that degraded: the median rule's): a
 * stalled series runs fast again between its stalls. `*worst_us` gets the longest stall,
 * `*typical_us` its series' fastest, `*age` the complete calls after the latest stall. With
 * `held` (NULL: not wanted), a call held now (nt_watch_two_behind at now_us) counts too, as the
 * latest, and *held is set to 1 (its figures are not a call's: they stay out of *worst_us).
 * `*fresh` (NULL: not wanted) is 1 when a completed stall is among the latest stall_fresh
 * complete calls. Returns the count, -1 when out of memory. */
static int nt_node_comm_stalls(const nt_jobcomm_t *c, double now_us, double *worst_us,
                               double *typical_us, int *age, int *held, int *fresh)
{
    size_t span = c->window < (size_t)nt_node_rules.stall_window
                      ? c->window
                      : (size_t)nt_node_rules.stall_window;
    const nt_jobcall_t **k = malloc((span ? span : 1) * sizeof(*k));
    double *mn = malloc((span ? span : 1) * sizeof(double)),
           *v = malloc((span ? span : 1) * sizeof(double));
    int n = 0, stalls = 0;
    if (!k || !mn || !v) {
        free(k);
        free(mn);
        free(v);
        return -1;
    }
    uint64_t lo = c->max_seq + 1 > span ? c->max_seq + 1 - span : 0;
    for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
        const nt_jobcall_t *x = nt_jobcomm_call(c, s);
        double lo_us, hi_us;
        int arg;
        if (x && x->nseen == c->nranks &&
            nt_jobcall_spread(c, x, &lo_us, &hi_us, &arg) == c->nranks && isfinite(lo_us)) {
            k[n] = x;
            mn[n++] = lo_us;
        }
    }
    for (int i = 0; i < n; i++) {
        if (mn[i] < nt_node_rules.stall_min_us)
            continue;
        size_t m = 0;
        double typical = INFINITY;
        for (int j = 0; j < n; j++)
            if (strcmp(k[j]->op, k[i]->op) == 0 && k[j]->bytes == k[i]->bytes) {
                v[m++] = mn[j];
                typical = mn[j] < typical ? mn[j] : typical;
            }
        /* the series stayed slow: from its first slowed call on every call is slowed, 3 or
         * more of them (the median rule's confirmation: 3 slow calls of 5) */
        int from = 0, slowed = 0, stayed = 1;
        for (int j = 0; j < n; j++) {
            if (strcmp(k[j]->op, k[i]->op) != 0 || k[j]->bytes != k[i]->bytes)
                continue;
            int sj = mn[j] >= nt_node_rules.stall_min_us &&
                     mn[j] >= nt_node_rules.stall_ratio * typical;
            from |= sj;
            if (from) {
                slowed += sj;
                stayed &= sj;
            }
        }
        stayed &= slowed >= 3;
        if (m >= 3 && !stayed && mn[i] >= nt_node_rules.stall_ratio * typical) {
            stalls++;
            *age = n - 1 - i;
            if (mn[i] > *worst_us) {
                *worst_us = mn[i];
                *typical_us = typical;
            }
        }
    }
    free(k);
    free(mn);
    free(v);
    /* A call still held: two ranks on two hosts behind together in one call, silent for the
     * hang rule's confirmation but not yet its network bound, while the others finished it
     * (judge.c's hang rule leaves it to this one). A retransmission backoff at 10% loss held a
     * whole job so for 7 s right after the lossy host's first two stalls (measured on the
     * namespace cluster): it is that host's third. It defers the hang rule too: a rank of
     * one of the two, behind alone in its other communicator, waits for this transfer (a
     * --long run named the lossy host's neighbour a hang so, 6.2 dump intervals in), and two
     * processes stopped in one call are named once hang_stall_dumps have passed. */
    if (fresh)
        *fresh = stalls > 0 && *age < nt_node_rules.stall_fresh;
    double held_us = 0;
    if (held && nt_watch_two_behind(c, now_us, &held_us)) {
        stalls++;
        *age = 0;
        *held = 1;
    }
    return stalls;
}

int nt_watch_comm_stalls(const nt_jobcomm_t *c, double now_us, double *worst_us, int *fresh)
{
    double worst = 0, typical = 0;
    int age = 0, held = 0,
        n = nt_node_comm_stalls(c, now_us, &worst, &typical, &age, &held, fresh);
    if (worst_us)
        *worst_us = worst;
    return n;
}

/* The network finding (NT-JOB-205) that names one host, or the pair between two or more: its
 * verdict says what the network does (how: "is slow", "stalls calls, ..."), hosts lists them
 * and observed_us / expected_us / ratio give the figures. Returns the finding, or NULL when out
 * of memory. */
static cJSON *nt_node_network_finding(cJSON *findings, nt_watch_who_t who, const char *names,
                                      const char *const *hostv, int nhost, const char *how,
                                      const char *reason, double observed_us,
                                      double expected_us, double ratio)
{
    char verdict[768];
    if (nhost == 1)
        snprintf(verdict, sizeof(verdict),
                 "host %s's network (its NIC, link or switch port) %s: network, not compute",
                 names, how);
    else
        snprintf(verdict, sizeof(verdict),
                 "the link between hosts %s, or one of their NICs, %s: network, not compute",
                 names, how);
    cJSON *f = nt_watch_finding_add(findings, "NT-JOB-205", "warn", who, verdict, reason);
    cJSON *hl = f ? cJSON_AddArrayToObject(f, "hosts") : NULL;
    for (int i = 0; hl && i < nhost; i++) {
        cJSON *s = cJSON_CreateString(hostv[i]);
        if (!s || !cJSON_AddItemToArray(hl, s)) {
            cJSON_Delete(s);
            hl = NULL;
        }
    }
    if (!hl || !cJSON_AddStringToObject(f, "side", "network") ||
        !cJSON_AddNumberToObject(f, "observed_us", observed_us) ||
        !cJSON_AddNumberToObject(f, "expected_us", expected_us) ||
        !cJSON_AddNumberToObject(f, "ratio", ratio))
        return NULL;
    return f;
}

/* Whether a communicator of `a` with no stall (st[i] == 0), over two hosts or more, lacks one
 * of the two hosts `two` and has `calls` complete calls or more in its window: the pair's
 * stalls are then theirs, not the whole job's network (a job of one communicator over two hosts
 * has no such peer). */
static int nt_node_clean_peer(const nt_jobalign_t *a, const int *st, const char *const *two)
{
    for (size_t i = 0; i < nt_jobalign_ncomms(a); i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        int has[2] = {0, 0}, spans = 0, complete = 0;
        if (st[i] != 0 || c->nranks < 2 || !c->ranks[0].host[0])
            continue;
        for (int r = 0; r < c->nranks; r++) {
            for (int h = 0; h < 2; h++)
                has[h] |= strcmp(c->ranks[r].host, two[h]) == 0;
            spans |= c->ranks[r].host[0] && strcmp(c->ranks[r].host, c->ranks[0].host) != 0;
        }
        uint64_t lo = c->max_seq + 1 > c->window ? c->max_seq + 1 - c->window : 0;
        for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
            const nt_jobcall_t *k = nt_jobcomm_call(c, s);
            complete += k && k->nseen == c->nranks;
        }
        if ((!has[0] || !has[1]) && spans && complete >= nt_node_rules.calls)
            return 1;
    }
    return 0;
}

/* A host whose link stalls calls now and then: every communicator with a stall holds it, no
 * other host (or one other: the link between them) is in all of them, at least stall_calls
 * stalls over at least stall_comms communicators (one stall is no alarm, and one communicator
 * cannot tell its hosts apart); or stall_pair_calls in one communicator of two hosts, which
 * names the pair. Two stalls in two communicators are the confirmation: each is a call that
 * took 100 ms and 10x its series' fastest for the rank that waits for no one, and the two
 * communicators share that host alone. Measured on the namespace cluster: no call of 79,653
 * in ten healthy runs of 20 s took 100 ms (the longest 56 ms, in five communicators at once:
 * the whole job), nor of 23,044 in five beside two spinning processes (the longest 58 ms),
 * and the ten runs judged every 0.5 s (350 documents) named nobody; with 10%
 * loss on one host, its first stalls came a second or more apart, so a third one cost one to
 * two dump intervals more (in 2 of 5 runs the first two fell in two communicators, named at
 * 2 intervals instead of 4). Called when the median rule named nobody; on a finding, its
 * stalled communicators are flagged in `slow` (the straggler judgement leaves their ranks
 * alone). Returns 0, -1 when out of memory. */
static int nt_node_stall_judge(const nt_jobalign_t *a, double now_us, cJSON *findings,
                               cJSON *nj, nt_watch_outcome_t *out, char *slow)
{
    size_t nc = nt_jobalign_ncomms(a);
    int *st = calloc(nc ? nc : 1, sizeof(int));
    if (!st)
        return -1;
    int total = 0, ncomm = 0, rc = 0, age = INT32_MAX, held = 0;
    double worst = 0, typical = 0;
    const nt_jobcomm_t *first = NULL;
    for (size_t i = 0; i < nc; i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        double w = 0, t = 0;
        int known = c->nranks >= 2, ca = INT32_MAX;
        for (int r = 0; known && r < c->nranks; r++)
            known = c->ranks[r].seen && c->ranks[r].host[0];
        if (!known)
            continue; /* a rank without a host: this communicator's hosts are not known */
        if ((st[i] = nt_node_comm_stalls(c, now_us, &w, &t, &ca, &held, NULL)) < 0) {
            free(st);
            return -1;
        }
        if (st[i] > 0) {
            total += st[i];
            ncomm++;
            first = first ? first : c;
            age = ca < age ? ca : age;
            if (w > worst) {
                worst = w;
                typical = t;
            }
        }
    }
    if (total < nt_node_rules.stall_calls) {
        free(st);
        return 0;
    }
    /* Stalls that are over are not named: a loss repaired leaves its last stalled calls (one of
     * 4.9 s, measured, its records dumped after the repair) in the window for its length. */
    if (age >= nt_node_rules.stall_fresh) {
        free(st);
        return nt_watch_not_judged_add(nj, "watch_slow_node", NULL,
                                       "%d stall(s) of %.0f ms or more, but none in the latest "
                                       "%d calls of any communicator: over",
                                       total, nt_node_rules.stall_min_us / 1e3,
                                       nt_node_rules.stall_fresh);
    }
    /* The hosts of the first stalled communicator that every other stalled one holds too. */
    char names[512] = "";
    const char *cand[8];
    int ncand = 0;
    size_t nl = 0;
    for (int r = 0; r < first->nranks; r++) {
        const char *h = first->ranks[r].host;
        int everywhere = 1, dup = 0;
        for (int q = 0; q < r; q++)
            dup |= strcmp(first->ranks[q].host, h) == 0;
        for (size_t i = 0; !dup && everywhere && i < nc; i++) {
            const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
            int has = 0;
            for (int q = 0; st[i] > 0 && q < c->nranks; q++)
                has |= strcmp(c->ranks[q].host, h) == 0;
            everywhere = st[i] == 0 || has;
        }
        if (dup || !everywhere)
            continue;
        if (ncand < 8)
            cand[ncand] = h;
        ncand++;
        if (nl + strlen(h) + 8 < sizeof(names))
            nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s%s", nl ? ", " : "", h);
    }
    /* One stalled communicator between two hosts names the pair (the link between them, or
     * one of their NICs): that it is the network is known, which host a stall in another of
     * their communicators tells. Measured, 10% loss on one host: its stalls fell in its
     * data-parallel pair alone for the whole case in 2 runs of 17, and nothing was named.
     * Only beside a communicator that ran clean without one of them: a job whose one
     * communicator spans the two hosts has no link to tell from its whole network. */
    int pair = ncomm == 1 && ncand == 2 && total >= nt_node_rules.stall_pair_calls &&
               nt_node_clean_peer(a, st, cand);
    if (ncand == 0 || ncand > nt_node_rules.max_named ||
        (ncomm < nt_node_rules.stall_comms && !pair))
        rc = nt_watch_not_judged_add(nj, "watch_slow_node", NULL,
                                     "%d stall(s) of %.0f ms or more in %d communicator(s) (%d "
                                     "needed, or %d in one communicator of two hosts), whose "
                                     "hosts in common are %d (%s): cannot tell which",
                                     total, nt_node_rules.stall_min_us / 1e3, ncomm,
                                     nt_node_rules.stall_comms, nt_node_rules.stall_pair_calls,
                                     ncand, ncand ? names : "none");
    else {
        char reason[1024];
        snprintf(reason, sizeof(reason),
                 "%d call(s) in %d communicator(s), all of them with %s, took %.0f ms or more and "
                 "%.0fx their series' fastest even for the rank that arrives last, which waits for "
                 "no one (the longest %.0f ms, its series' fastest %.1f ms), over the latest %d "
                 "calls of each communicator, the latest %d call(s) ago; no communicator "
                 "without %s stalled: a retransmission timeout, the calls between run at "
                 "their usual time%s%s",
                 total, ncomm, ncand == 1 ? "it" : "them", nt_node_rules.stall_min_us / 1e3,
                 nt_node_rules.stall_ratio, worst / 1e3, typical / 1e3, nt_node_rules.stall_window,
                 age, ncand == 1 ? "it" : "them",
                 held ? "; one of them a call two ranks on two hosts are still held in (the "
                        "others finished it)"
                      : "",
                 pair ? "; one communicator, of these two hosts alone: which of them, a stall in "
                        "another of their communicators would tell"
                      : "");
        nt_watch_who_t who = {first->id, first->name, names, -1, -1};
        cJSON *f = nt_node_network_finding(findings, who, names, cand, ncand,
                                           "stalls calls, as packet loss does", reason, worst,
                                           typical, typical > 0 ? worst / typical : 0);
        if (!f || !cJSON_AddNumberToObject(f, "stalls", total))
            rc = -1;
        out->warn++;
        for (size_t i = 0; slow && i < nc; i++)
            slow[i] |= st[i] > 0;
    }
    free(st);
    return rc;
}

int nt_watch_node_judge(const nt_jobalign_t *a, double now_us, cJSON *findings, cJSON *nj,
                        nt_watch_outcome_t *out, char *slow_comms)
{
    nt_node_hosts_t hosts = {0};
    nt_node_series_t *v = NULL;
    size_t n = 0, cap = 0;
    unsigned long short_series = 0, unseen_comms = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nt_jobalign_ncomms(a); i++)
        rc = nt_node_comm_series(nt_jobalign_comm(a, i), &hosts, &v, &n, &cap, &short_series,
                                 &unseen_comms);
    if (rc == 0 && slow_comms)
        nt_node_comms_slow(a, v, n, slow_comms);
    nt_node_eval_t *ev = rc == 0 && hosts.n ? calloc((size_t)hosts.n, sizeof(*ev)) : NULL;
    if (rc == 0 && hosts.n && !ev)
        rc = -1;
    int informative = 0, ncand = 0, cand[8];
    for (int x = 0; rc == 0 && x < hosts.n; x++) {
        nt_node_host_eval(v, n, x, &ev[x]);
        informative += ev[x].shapes > 0;
    }
    /* Candidates: slow in every shape they can be compared in. A node that shares a slow
     * communicator with the slow one can pass too, by noise in its other communicators; the
     * one with the larger share of slow series is named, both only when they tie (a link
     * between them, or either NIC). */
    double best = -1;
    for (int x = 0; rc == 0 && x < hosts.n; x++) {
        const nt_node_eval_t *e = &ev[x];
        if (e->shapes == 0 || e->slow_shapes < e->shapes)
            continue;
        double score = (double)e->slow_series / e->series;
        if (score > best) {
            best = score;
            ncand = 0;
        }
        if (score == best) {
            if (ncand < 8)
                cand[ncand] = x;
            ncand++;
        }
    }
    char names[512] = "";
    size_t nl = 0;
    for (int i = 0; i < ncand && i < 8 && nl + 8 < sizeof(names); i++)
        nl += (size_t)snprintf(names + nl, sizeof(names) - nl, "%s%s", i ? ", " : "",
                               hosts.names[cand[i]]);
    if (rc != 0)
        ;
    else if (!n)
        rc = nt_watch_not_judged_add(
            nj, "watch_slow_node", NULL,
            "no communicator has %d complete calls of one collective and size (%lu series have "
            "fewer; %lu communicator(s) have a rank without records, so their hosts are not "
            "known): the median of that many is the confirmation",
            nt_node_rules.calls, short_series, unseen_comms);
    else if (!informative)
        rc = nt_watch_not_judged_add(
            nj, "watch_slow_node", NULL,
            "every communicator of a shape (ranks, nodes) holds the same %d node(s): there is no "
            "communicator without a node to compare with",
            hosts.n);
    else if (ncand > nt_node_rules.max_named)
        rc = nt_watch_not_judged_add(nj, "watch_slow_node", NULL,
                                     "the slow communicators point to %d nodes (%s): cannot tell "
                                     "which",
                                     ncand, names);
    else if (ncand > 0) {
        const nt_node_eval_t *e = &ev[cand[0]];
        for (int i = 1; i < ncand; i++)
            if (ev[cand[i]].worst_ratio > e->worst_ratio)
                e = &ev[cand[i]];
        char reason[768];
        snprintf(reason, sizeof(reason),
                 "%s of %.0f B on %d ranks over %d nodes: the communicators with %s take %.0f us "
                 "(median of the last %d calls of the rank that arrives last, which waits for "
                 "no one), %.1fx the %.0f us of the median of those without; slow in %d series, at least %.0f%% "
                 "of those of each of its %d shape(s), the rule %.1fx and %.0f us",
                 e->worst->op, e->worst->bytes, e->worst->c->nranks, e->worst->nnodes,
                 ncand == 1 ? "it" : "them", e->t_with_us, nt_node_rules.calls, e->worst_ratio,
                 e->t_without_us, e->slow_series, nt_node_rules.share * 100, e->shapes,
                 nt_node_rules.ratio,
                 nt_node_rules.min_excess_us);
        nt_watch_who_t who = {e->worst->c->id, e->worst->c->name, names, -1, -1};
        const char *hostv[8];
        for (int i = 0; i < ncand; i++)
            hostv[i] = hosts.names[cand[i]];
        if (!nt_node_network_finding(findings, who, names, hostv, ncand, "is slow", reason,
                                     e->t_with_us, e->t_without_us, e->worst_ratio))
            rc = -1;
        out->warn++;
    }
    if (rc == 0 && (ncand == 0 || ncand > nt_node_rules.max_named))
        rc = nt_node_stall_judge(a, now_us, findings, nj, out, slow_comms);
    for (size_t i = 0; i < n; i++)
        free(v[i].hosts);
    free(v);
    for (int i = 0; i < hosts.n; i++)
        free(hosts.names[i]);
    free(hosts.names);
    free(ev);
    return rc;
}
