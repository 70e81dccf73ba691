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
} nt_node_rules = {5, 3.0, 2000.0, 0.5, 2};

int nt_watch_node_settings(cJSON *s)
{
    return cJSON_AddNumberToObject(s, "slow_node_calls", nt_node_rules.calls) &&
                   cJSON_AddNumberToObject(s, "slow_node_ratio", nt_node_rules.ratio) &&
                   cJSON_AddNumberToObject(s, "slow_node_min_excess_us",
                                           nt_node_rules.min_excess_us) &&
                   cJSON_AddNumberToObject(s, "slow_node_share", nt_node_rules.share)
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

/* The series of one communicator, appended to *v. Returns 0, -1 when out of memory. */
static int nt_node_comm_series(const nt_jobcomm_t *c, nt_node_hosts_t *hosts, nt_node_series_t **v,
                               size_t *n, size_t *cap, unsigned long *short_series)
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

int nt_watch_node_judge(const nt_jobalign_t *a, cJSON *findings, cJSON *nj,
                        nt_watch_outcome_t *out, char *slow_comms)
{
    nt_node_hosts_t hosts = {0};
    nt_node_series_t *v = NULL;
    size_t n = 0, cap = 0;
    unsigned long short_series = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nt_jobalign_ncomms(a); i++)
        rc = nt_node_comm_series(nt_jobalign_comm(a, i), &hosts, &v, &n, &cap, &short_series);
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
            "fewer, or ranks without records): the median of that many is the confirmation",
            nt_node_rules.calls, short_series);
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
        char verdict[768], reason[768];
        snprintf(verdict, sizeof(verdict),
                 ncand == 1 ? "host %s's network (its NIC, link or switch port) is slow: network, "
                              "not compute"
                            : "the link between hosts %s, or one of their NICs, is slow: network, "
                              "not compute",
                 names);
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
        cJSON *f = nt_watch_finding_add(findings, "NT-JOB-205", "warn", who, verdict, reason);
        cJSON *hl = f ? cJSON_AddArrayToObject(f, "hosts") : NULL;
        for (int i = 0; hl && i < ncand; i++) {
            cJSON *s = cJSON_CreateString(hosts.names[cand[i]]);
            if (!s || !cJSON_AddItemToArray(hl, s)) {
                cJSON_Delete(s);
                hl = NULL;
            }
        }
        if (!hl || !cJSON_AddStringToObject(f, "side", "network") ||
            !cJSON_AddNumberToObject(f, "observed_us", e->t_with_us) ||
            !cJSON_AddNumberToObject(f, "expected_us", e->t_without_us) ||
            !cJSON_AddNumberToObject(f, "ratio", e->worst_ratio))
            rc = -1;
        out->warn++;
    }
    for (size_t i = 0; i < n; i++)
        free(v[i].hosts);
    free(v);
    for (int i = 0; i < hosts.n; i++)
        free(hosts.names[i]);
    free(hosts.names);
    free(ev);
    return rc;
}
