/* Alignment of a job's collective records across ranks (include/nettune/jobrec.h): by
 * communicator id and sequence number, in a bounded window per communicator. Inspector numbers a
 * communicator's collectives the same way on every rank (coll_sn, v2.30.7-1
 * inspector_json.cc:210), so one call is one (id, coll_sn) pair whatever the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/jobrec.h"
#include "nettune/rdoc.h"

struct nt_jobalign {
    size_t window;
    int max_ranks;
    nt_jobcomm_t **comms;
    size_t n, cap;
    unsigned long rejected;
};

nt_jobalign_t *nt_jobalign_create(size_t window, int max_ranks)
{
    nt_jobalign_t *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->window = window ? window : 1;
    a->max_ranks = max_ranks > 0 ? max_ranks : 1;
    return a;
}

static void nt_jobcomm_free(nt_jobcomm_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->calls && i < c->window; i++) {
        free(c->calls[i].exec_us);
        free(c->calls[i].busbw_GBps);
    }
    free(c->calls);
    free(c->ranks);
    free(c);
}

void nt_jobalign_destroy(nt_jobalign_t *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        nt_jobcomm_free(a->comms[i]);
    free(a->comms);
    free(a);
}

unsigned long nt_jobalign_rejected(const nt_jobalign_t *a)
{
    return a->rejected;
}

size_t nt_jobalign_ncomms(const nt_jobalign_t *a)
{
    return a->n;
}

const nt_jobcomm_t *nt_jobalign_comm(const nt_jobalign_t *a, size_t i)
{
    return i < a->n ? a->comms[i] : NULL;
}

const nt_jobcall_t *nt_jobcomm_call(const nt_jobcomm_t *c, uint64_t seq)
{
    const nt_jobcall_t *k = &c->calls[seq % c->window];
    return k->used && k->seq == seq ? k : NULL;
}

static nt_jobcomm_t *nt_jobcomm_find(nt_jobalign_t *a, const nt_jobrec_t *rec, int *err)
{
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->comms[i]->id, rec->comm_id) == 0)
            return a->comms[i];
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        nt_jobcomm_t **t = realloc(a->comms, cap * sizeof(*t));
        if (!t)
            return *err = -1, NULL;
        a->comms = t;
        a->cap = cap;
    }
    nt_jobcomm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return *err = -1, NULL;
    snprintf(c->id, sizeof(c->id), "%s", rec->comm_id);
    snprintf(c->name, sizeof(c->name), "%s", rec->comm_name);
    c->nranks = rec->nranks;
    c->window = a->window;
    c->ranks = calloc((size_t)rec->nranks, sizeof(*c->ranks));
    c->calls = calloc(c->window, sizeof(*c->calls));
    if (!c->ranks || !c->calls) {
        nt_jobcomm_free(c);
        return *err = -1, NULL;
    }
    a->comms[a->n++] = c;
    return c;
}

/* Makes slot `k` hold call `seq`, evicting the older call it held. */
static int nt_jobcall_take(nt_jobcomm_t *c, nt_jobcall_t *k, const nt_jobrec_t *rec)
{
    size_t n = (size_t)c->nranks;
    if (!k->exec_us) {
        k->exec_us = malloc(n * sizeof(double));
        k->busbw_GBps = malloc(n * sizeof(double));
        if (!k->exec_us || !k->busbw_GBps)
            return -1;
    }
    for (size_t i = 0; i < n; i++)
        k->exec_us[i] = k->busbw_GBps[i] = NAN;
    k->used = 1;
    k->seq = rec->seq;
    snprintf(k->op, sizeof(k->op), "%s", rec->op);
    k->bytes = rec->bytes;
    k->nseen = 0;
    k->dump_ts_us = NAN;
    k->dump_rank = -1;
    return 0;
}

/* Keeps the NT_JOBRANK_DUMPS latest dumps' times, newest first. A dump is a burst: Inspector
 * takes the time once per record as it writes them one after another (inspectorGetTime() in
 * inspectorCommInfoMetaHeader, called for each record: v2.30.7-1
 * plugins/profiler/inspector/inspector_json.cc:64, :314), so a record within
 * NT_JOBREC_DUMP_BURST_US of a dump's latest record belongs to that dump, which takes its time.
 * Read as distinct dumps, one dump's records made the rank's dump interval microseconds, and
 * a rank one dump behind a hang. */
static void nt_jobrank_dump_note(nt_jobrank_t *r, double t)
{
    if (!isfinite(t))
        return;
    for (int k = 0; k < r->ndumps; k++)
        if (fabs(r->dumps_us[k] - t) <= NT_JOBREC_DUMP_BURST_US) {
            if (t > r->dumps_us[k])
                r->dumps_us[k] = t; /* records come in time order: the burst's latest */
            return;
        }
    int i = 0;
    while (i < r->ndumps && r->dumps_us[i] > t)
        i++;
    if ((i < r->ndumps && r->dumps_us[i] == t) || i >= NT_JOBRANK_DUMPS)
        return;
    int n = r->ndumps < NT_JOBRANK_DUMPS ? r->ndumps : NT_JOBRANK_DUMPS - 1;
    memmove(&r->dumps_us[i + 1], &r->dumps_us[i], (size_t)(n - i) * sizeof(double));
    r->dumps_us[i] = t;
    r->ndumps = n + 1;
}

int nt_jobrank_dumps_after(const nt_jobrank_t *r, double t_us)
{
    int n = 0;
    for (int i = 0; isfinite(t_us) && i < r->ndumps; i++)
        n += r->dumps_us[i] > t_us;
    return n;
}

/* The rank's clock difference (nt_jobrank_t ahead_us) with one more record, read at seen_us
 * (NAN: not read while followed) and dumped at dump_us by its writer's clock. */
static void nt_jobrank_clock_note(nt_jobrank_t *r, double seen_us, double dump_us)
{
    if (!isfinite(seen_us) || !isfinite(dump_us))
        return;
    double x = seen_us - dump_us;
    r->last_us = x;
    if (!isfinite(r->ahead_us) || x <= r->ahead_us + NT_JOBREC_CLOCK_STEP_US) {
        if (!(r->ahead_us <= x))
            r->ahead_us = x;
        r->above_dumps = 0;
        return;
    }
    /* a dump, not another record of the same one (NT_JOBREC_DUMP_BURST_US) */
    if (r->above_dumps == 0 || fabs(dump_us - r->above_dump_us) > NT_JOBREC_DUMP_BURST_US) {
        r->above_us = r->above_dumps == 0 ? x : fmin(r->above_us, x);
        r->above_dumps++;
    } else
        r->above_us = fmin(r->above_us, x);
    r->above_dump_us = dump_us;
    if (r->above_dumps >= NT_JOBREC_CLOCK_STEP_DUMPS) {
        r->ahead_us = r->above_us;
        r->above_dumps = 0;
    }
}

double nt_jobrank_dump_interval_us(const nt_jobrank_t *r)
{
    double every = NAN;
    for (int i = 1; i < r->ndumps; i++)
        if (!(r->dumps_us[i - 1] - r->dumps_us[i] >= every))
            every = r->dumps_us[i - 1] - r->dumps_us[i];
    return every;
}

double nt_jobrank_ahead_us(const nt_jobrank_t *r)
{
    /* The latest counts once above the estimate by more than the step and the rank's dump
     * interval (the shortest gap between its latest dumps): a clock stepped back by less than
     * that counts a silence too long by under an interval until the step is confirmed, and a
     * read later than that (a watch starved of CPU) is rare, while reads 0.3 s late are not (a
     * write wakes a read within 0.25 s plus 50 ms of quiet: taken at 0.3 s, that delayed a
     * SIGSTOPped rank's hang on the namespace cluster from 2.6-3.2 dump intervals to 3.3-3.4). */
    double every = nt_jobrank_dump_interval_us(r);
    if (isfinite(r->last_us) && isfinite(r->ahead_us) &&
        r->last_us > r->ahead_us + fmax(NT_JOBREC_CLOCK_STEP_US, isfinite(every) ? every : 0))
        return r->last_us;
    return r->ahead_us;
}

int nt_jobalign_add(nt_jobalign_t *a, const nt_jobrec_t *rec)
{
    if (rec->kind != NT_JOBREC_COLL || !rec->has_seq || !rec->comm_id[0] || rec->nranks < 1 ||
        rec->nranks > a->max_ranks || rec->rank < 0 || rec->rank >= rec->nranks)
        return a->rejected++, 1;
    int err = 0;
    nt_jobcomm_t *c = nt_jobcomm_find(a, rec, &err);
    if (!c)
        return err;
    if (rec->nranks != c->nranks)
        return a->rejected++, 1;
    if (c->any_seq && rec->seq + c->window <= c->max_seq) {
        c->stale++;
        return a->rejected++, 1;
    }
    nt_jobcall_t *k = &c->calls[rec->seq % c->window];
    if (!k->used || k->seq != rec->seq) {
        if (k->used && k->seq > rec->seq) { /* the slot holds a newer call */
            c->stale++;
            return a->rejected++, 1;
        }
        if (nt_jobcall_take(c, k, rec) < 0)
            return -1;
    }
    if (!isnan(k->exec_us[rec->rank])) {
        c->duplicate++;
        return a->rejected++, 1;
    }
    k->exec_us[rec->rank] = isfinite(rec->exec_us) && rec->exec_us >= 0 ? rec->exec_us : INFINITY;
    k->busbw_GBps[rec->rank] = rec->busbw_GBps;
    k->nseen++;
    if (isfinite(rec->dump_ts_us) && !(k->dump_ts_us <= rec->dump_ts_us)) {
        k->dump_ts_us = rec->dump_ts_us;
        k->dump_rank = rec->rank;
    }
    if (!c->any_seq || rec->seq > c->max_seq)
        c->max_seq = rec->seq;
    c->any_seq = 1;
    c->records++;
    if (rec->timing == NT_TIMING_KERNEL_CPU || rec->timing == NT_TIMING_COLLECTIVE_CPU)
        c->cpu_timed++;
    nt_jobrank_t *r = &c->ranks[rec->rank];
    if (!r->seen || rec->seq > r->last_seq)
        r->last_seq = rec->seq;
    if (!r->seen) {
        snprintf(r->host, sizeof(r->host), "%s", rec->host);
        r->pid = rec->pid;
        r->last_dump_ts_us = r->ahead_us = r->last_us = NAN;
    }
    r->seen = 1;
    nt_jobrank_clock_note(r, rec->seen_us, rec->dump_ts_us);
    r->records++;
    if (isfinite(rec->dump_ts_us) && !(r->last_dump_ts_us >= rec->dump_ts_us))
        r->last_dump_ts_us = rec->dump_ts_us;
    nt_jobrank_dump_note(r, rec->dump_ts_us);
    if (!c->name[0] && rec->comm_name[0])
        snprintf(c->name, sizeof(c->name), "%s", rec->comm_name);
    return 0;
}

int nt_jobcall_spread(const nt_jobcomm_t *c, const nt_jobcall_t *k, double *min_us,
                      double *max_us, int *argmin)
{
    int n = 0;
    *min_us = *max_us = NAN;
    *argmin = -1;
    for (int i = 0; i < c->nranks; i++) {
        double t = k->exec_us[i];
        if (isnan(t))
            continue;
        if (!n || t < *min_us) {
            *min_us = t;
            *argmin = i;
        }
        if (!n || t > *max_us)
            *max_us = t;
        n++;
    }
    return n;
}

double nt_jobcall_median_busbw(const nt_jobcomm_t *c, const nt_jobcall_t *k)
{
    double *v = malloc((size_t)c->nranks * sizeof(double));
    if (!v)
        return NAN;
    int n = 0;
    for (int i = 0; i < c->nranks; i++)
        if (isfinite(k->busbw_GBps[i]))
            v[n++] = k->busbw_GBps[i];
    double m = nt_median(v, (size_t)n);
    free(v);
    return m;
}
