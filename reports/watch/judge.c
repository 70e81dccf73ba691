/* The watch's judgements, with the probe's rules of evidence: a population minimum before a
 * rank is compared with its peers, confirmation over several calls before it is blamed, and
 * "not judged" with the reason when the evidence is not there. The figures are in one table. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/checks.h"
#include "watch.h"

/* The rules of evidence. */
static const struct {
    int straggler_min_ranks;     /* a rank is "fastest" only among at least this many */
    int straggler_min_calls;     /* calls that must blame the rank */
    int straggler_min_complete;  /* complete calls needed: a job's first steps start unevenly */
    double straggler_min_spread; /* a call votes when (max - min) / max reaches this */
    double straggler_share;      /* the rank must hold more than this share of the others' wait */
    int straggler_recent;        /* the latest calls of the window a straggler is judged on */
    int straggler_cross_ranks;   /* communicators up to this size are checked across the others */
    int straggler_fresh;         /* of the latest this many calls... */
    int straggler_fresh_votes;   /* ...at least this many must still blame the rank */
    int onset_baseline;          /* calls of a series that set its expected busbw */
    double onset_k, onset_h;     /* CUSUM reference value and decision interval, in sigmas */
    double onset_clip;           /* one call moves the sum by at most this many sigmas */
    double onset_min_sigma;      /* the sigma used is at least this share of the baseline */
    double onset_min_drop;       /* the mean after the onset is at least this share lower */
    int straggler_blocks;        /* the latest complete calls cut into this many blocks... */
    int straggler_block_calls;   /* ...of this many calls: the rank holds the others' wait... */
    double straggler_block_share; /* ...by more than this share in every block... */
    double straggler_block_wait_us; /* ...and at least this much of it in every block */
    double onset_peer_ratio;     /* its level after / before is at most this share of its peers' */
    int onset_persist_calls;     /* the latest this many calls are below the baseline too */
    int onset_tries;             /* alarms of a series tested against its peers */
    double onset_min_excess_us;  /* a drop costs each call at least this much time */
    double straggler_cross_margin; /* every other rank spends more inside calls, by this share
                                      of the wait the rank is credited with */
    double straggler_elsewhere;  /* a rank that waits in another communicator this share of
                                    the wait it is credited with is late for that wait */
} nt_rules = {3, 8, 64, 0.20, 0.50, 96, 64, 24, 2, 16, 0.5, 5.0, 3.0, 0.01, 0.10,
              3, 12, 0.50, 1000, 0.33, 8, 4, 2000, 0.5, 0.5};

cJSON *nt_watch_settings(size_t window)
{
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddNumberToObject(s, "window_calls", (double)window) ||
        !cJSON_AddNumberToObject(s, "straggler_min_ranks", nt_rules.straggler_min_ranks) ||
        !cJSON_AddNumberToObject(s, "straggler_min_calls", nt_rules.straggler_min_calls) ||
        !cJSON_AddNumberToObject(s, "straggler_min_complete_calls",
                                 nt_rules.straggler_min_complete) ||
        !cJSON_AddNumberToObject(s, "straggler_min_spread", nt_rules.straggler_min_spread) ||
        !cJSON_AddNumberToObject(s, "straggler_share", nt_rules.straggler_share) ||
        !cJSON_AddNumberToObject(s, "straggler_recent_calls", nt_rules.straggler_recent) ||
        !cJSON_AddNumberToObject(s, "straggler_fresh_calls", nt_rules.straggler_fresh) ||
        !cJSON_AddNumberToObject(s, "straggler_fresh_votes", nt_rules.straggler_fresh_votes) ||
        !cJSON_AddNumberToObject(s, "straggler_blocks", nt_rules.straggler_blocks) ||
        !cJSON_AddNumberToObject(s, "straggler_block_calls", nt_rules.straggler_block_calls) ||
        !cJSON_AddNumberToObject(s, "straggler_block_share", nt_rules.straggler_block_share) ||
        !cJSON_AddNumberToObject(s, "straggler_block_wait_us", nt_rules.straggler_block_wait_us) ||
        !cJSON_AddNumberToObject(s, "straggler_cross_margin", nt_rules.straggler_cross_margin) ||
        !cJSON_AddNumberToObject(s, "straggler_elsewhere_share", nt_rules.straggler_elsewhere) ||
        !cJSON_AddNumberToObject(s, "hang_min_lag_calls", nt_watch_hang_min_lag) ||
        !cJSON_AddNumberToObject(s, "hang_min_dumps", nt_watch_hang_min_dumps) ||
        !cJSON_AddNumberToObject(s, "hang_stall_dumps", nt_watch_hang_stall_dumps) ||
        !cJSON_AddNumberToObject(s, "onset_baseline_calls", nt_rules.onset_baseline) ||
        !cJSON_AddNumberToObject(s, "onset_cusum_k", nt_rules.onset_k) ||
        !cJSON_AddNumberToObject(s, "onset_cusum_h", nt_rules.onset_h) ||
        !cJSON_AddNumberToObject(s, "onset_min_drop", nt_rules.onset_min_drop) ||
        !cJSON_AddNumberToObject(s, "onset_peer_ratio", nt_rules.onset_peer_ratio) ||
        !cJSON_AddNumberToObject(s, "onset_persist_calls", nt_rules.onset_persist_calls) ||
        !cJSON_AddNumberToObject(s, "onset_min_excess_us", nt_rules.onset_min_excess_us) ||
        nt_watch_node_settings(s) < 0) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

static nt_watch_who_t nt_watch_who_rank(const nt_jobcomm_t *c, int rank)
{
    return (nt_watch_who_t){c->id, c->name, c->ranks[rank].host, rank, c->ranks[rank].pid};
}

/* A straggler: the rank that arrives last at a collective spends the least time in it, because
 * the others have been waiting for it inside the call. Its exec time is the shortest in most
 * calls; that is the compute side of that rank (GPU, CPU, data loader), not the network. */
/* A process's time inside the calls of every communicator of `a` it is a rank of (by host and
 * pid), over the calls seen from `since_us` on (their earliest dump time); NAN when the
 * process is not known. */
static double nt_watch_process_inside_us(const nt_jobalign_t *a, const nt_jobrank_t *who,
                                         double since_us)
{
    if (!who->seen || who->pid < 0)
        return NAN;
    double sum = 0;
    for (size_t i = 0; i < nt_jobalign_ncomms(a); i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        int r = 0;
        while (r < c->nranks && !(c->ranks[r].seen && c->ranks[r].pid == who->pid &&
                                  strcmp(c->ranks[r].host, who->host) == 0))
            r++;
        if (r == c->nranks)
            continue;
        uint64_t lo = c->max_seq + 1 > c->window ? c->max_seq + 1 - c->window : 0;
        for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
            const nt_jobcall_t *k = nt_jobcomm_call(c, s);
            if (k && k->dump_ts_us >= since_us && isfinite(k->exec_us[r]))
                sum += k->exec_us[r];
        }
    }
    return sum;
}

/* The same test over all of each process's communicators: a rank late here because it waited in
 * another communicator (its data-parallel peer's slow link, or its peer a straggler) spends more
 * time inside calls there. Every rank of `c` is compared over the calls dumped from `since_us`
 * on, and each other rank must spend more than `best` by straggler_cross_margin of `wait_us`
 * (the others' wait `best` is credited with in `c`): a rank that computes longer saves, in all
 * its communicators together, about the wait it causes (measured on the namespace cluster, a
 * 1.5x straggler: 1.11-1.14 of it), while one that only moved its wait from here to another
 * communicator saves nothing (its data-parallel peer, arriving last in its tensor-parallel
 * calls after waiting for the straggler: -0.10 to -0.14; by the sign alone it was named in a
 * run where the noise went the other way). A communicator of more than
 * straggler_cross_ranks ranks keeps its own test (the cost is its ranks times every
 * communicator's window). */
static int nt_watch_least_everywhere(const nt_jobalign_t *a, const nt_jobcomm_t *c, int best,
                                     double since_us, double wait_us)
{
    if (c->nranks > nt_rules.straggler_cross_ranks || !isfinite(since_us))
        return 1;
    double mine = nt_watch_process_inside_us(a, &c->ranks[best], since_us);
    for (int i = 0; isfinite(mine) && i < c->nranks; i++)
        if (i != best && nt_watch_process_inside_us(a, &c->ranks[i], since_us) <=
                             mine + nt_rules.straggler_cross_margin * wait_us)
            return 0;
    return 1;
}

/* The longest wait of process `who` (by host and pid) in one communicator of `a` other than
 * `c`: over that communicator's complete calls seen from `since_us` on, the sum of its exec
 * time less the call's shortest (what it spent waiting for the rank that arrived last). A rank
 * that waits there arrives late here for that reason: a straggler's data-parallel peer leaves
 * its pair's call late and arrives last in its tensor-parallel calls (measured on the namespace
 * cluster, a 1.5x straggler: its peer credited with 289 ms of its tensor group's wait while it
 * waited 531 ms in the pair, the straggler 25 ms; the inside-time test above passed the peer,
 * since each call's dump time is its earliest rank's and the communicators' spans differ by up
 * to a dump interval). `*where` gets that communicator (NULL if none). */
static double nt_watch_wait_elsewhere_us(const nt_jobalign_t *a, const nt_jobcomm_t *c,
                                         const nt_jobrank_t *who, double since_us,
                                         const nt_jobcomm_t **where)
{
    double most = 0;
    *where = NULL;
    for (size_t i = 0; who->seen && who->pid >= 0 && i < nt_jobalign_ncomms(a); i++) {
        const nt_jobcomm_t *o = nt_jobalign_comm(a, i);
        int r = 0;
        while (r < o->nranks && !(o->ranks[r].seen && o->ranks[r].pid == who->pid &&
                                  strcmp(o->ranks[r].host, who->host) == 0))
            r++;
        if (o == c || r == o->nranks)
            continue;
        double sum = 0;
        uint64_t lo = o->max_seq + 1 > o->window ? o->max_seq + 1 - o->window : 0;
        for (uint64_t s = lo; o->any_seq && s <= o->max_seq; s++) {
            const nt_jobcall_t *k = nt_jobcomm_call(o, s);
            double mn, mx;
            int arg;
            if (k && k->dump_ts_us >= since_us && k->nseen == o->nranks &&
                nt_jobcall_spread(o, k, &mn, &mx, &arg) == o->nranks && isfinite(mn) &&
                isfinite(k->exec_us[r]))
                sum += k->exec_us[r] - mn;
        }
        if (sum > most) {
            most = sum;
            *where = o;
        }
    }
    return most;
}

/* The first communicator of `a` flagged in `slow` that process `who` is a rank of; NULL if none. */
static const nt_jobcomm_t *nt_watch_slow_comm_of(const nt_jobalign_t *a, const char *slow,
                                                 const nt_jobrank_t *who)
{
    for (size_t i = 0; who->seen && i < nt_jobalign_ncomms(a); i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        for (int r = 0; slow[i] && r < c->nranks; r++)
            if (c->ranks[r].seen && c->ranks[r].pid == who->pid &&
                strcmp(c->ranks[r].host, who->host) == 0)
                return c;
    }
    return NULL;
}

/* The confirmation of a straggler: the latest straggler_blocks blocks of straggler_block_calls
 * complete calls each (of the n in `arg`/`wait`, oldest first: the rank that arrived last in
 * each call, -1 when the call did not vote, and the others' wait in us) must each give rank
 * `best` more than straggler_block_share of their wait and at least straggler_block_wait_us of
 * it. A rank that computes longer delays every step by its excess; on shared cores a healthy
 * rank woken late now and then collects the wait of a few steps (measured on the namespace
 * cluster: 51% of the others' wait over 16 steps, 453 ms, held by a healthy rank, the wait
 * falling in a few calls). Returns -1 when every block confirms, else the index (0 = the
 * latest) of the first block that does not, or that is missing. */
static int nt_watch_straggler_blocks(const int *arg, const double *wait, int n, int best)
{
    for (int b = 0; b < nt_rules.straggler_blocks; b++) {
        int hi = n - b * nt_rules.straggler_block_calls, lo = hi - nt_rules.straggler_block_calls;
        if (lo < 0)
            return b;
        double mine = 0, all = 0;
        for (int i = lo; i < hi; i++) {
            all += wait[i];
            mine += arg[i] == best ? wait[i] : 0;
        }
        if (!(mine > nt_rules.straggler_block_share * all) ||
            mine < nt_rules.straggler_block_wait_us)
            return b;
    }
    return -1;
}

static int nt_watch_straggler_judge(const nt_jobalign_t *a, const nt_jobcomm_t *c,
                                    const char *slow, cJSON *findings, cJSON *nj,
                           nt_watch_outcome_t *out)
{
    if (c->nranks < nt_rules.straggler_min_ranks)
        return nt_watch_not_judged_add(nj, "watch_straggler", c->id,
                              "%d rank(s): a straggler is named among at least %d", c->nranks,
                              nt_rules.straggler_min_ranks);
    int *votes = calloc((size_t)c->nranks, sizeof(int)), *fresh = calloc((size_t)c->nranks, sizeof(int));
    double *wait = calloc((size_t)c->nranks, sizeof(double));
    double *inside = calloc((size_t)c->nranks, sizeof(double)); /* time spent in the calls */
    /* Span sized: each complete call's rank that arrived last (-1: no vote) and its wait. */
    size_t span = c->window < (size_t)nt_rules.straggler_recent ? c->window
                                                                 : (size_t)nt_rules.straggler_recent;
    int *call_arg = malloc(span * sizeof(int));
    double *call_wait = malloc(span * sizeof(double));
    if (!votes || !wait || !inside || !fresh || !call_arg || !call_wait) {
        free(votes);
        free(fresh);
        free(wait);
        free(inside);
        free(call_arg);
        free(call_wait);
        return -1;
    }
    int complete = 0, voting = 0;
    double spread_sum = 0, wait_sum = 0, since_us = INFINITY;
    /* The latest calls only: a rank that became a straggler mid-job is named within a few
     * steps, and one that stopped being one is no longer named. */
    uint64_t lo = c->max_seq + 1 > span ? c->max_seq + 1 - span : 0;
    for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
        const nt_jobcall_t *k = nt_jobcomm_call(c, s);
        double mn, mx;
        int arg;
        if (!k || k->nseen < c->nranks || nt_jobcall_spread(c, k, &mn, &mx, &arg) < c->nranks ||
            !isfinite(mx) || mx <= 0)
            continue;
        call_arg[complete] = -1;
        call_wait[complete] = 0;
        complete++;
        if (k->dump_ts_us < since_us)
            since_us = k->dump_ts_us;
        for (int i = 0; i < c->nranks; i++)
            inside[i] += k->exec_us[i];
        if ((mx - mn) / mx >= nt_rules.straggler_min_spread) {
            votes[arg]++;
            voting++;
            spread_sum += (mx - mn) / mx;
            wait[arg] += mx - mn;
            wait_sum += mx - mn;
            call_arg[complete - 1] = arg;
            call_wait[complete - 1] = mx - mn;
            fresh[arg] += s + (uint64_t)nt_rules.straggler_fresh > c->max_seq;
        }
    }
    /* Blame goes by the others' wait, not by the count of calls: a straggler's compute delays
     * the first call after it by its whole excess, the calls after that start together and
     * their spread is noise that falls on any rank. */
    int best = 0, least = 0;
    const nt_jobcomm_t *slowc, *elsewhere = NULL;
    double elsewhere_us = 0;
    for (int i = 1; i < c->nranks; i++) {
        if (wait[i] > wait[best])
            best = i;
        if (inside[i] < inside[least])
            least = i;
    }
    int weak = nt_watch_straggler_blocks(call_arg, call_wait, complete, best);
    int rc = 0;
    if (complete < nt_rules.straggler_min_complete)
        rc = nt_watch_not_judged_add(nj, "watch_straggler", c->id,
                            "%d call(s) with every rank's record: at least %d are needed",
                            complete, nt_rules.straggler_min_complete);
    /* A rank that arrives last because it waited longest in the call before (a slow link next
     * to it) spends no less time inside the calls than the others; one that arrives last
     * because it computed longer spends the least: the last test tells compute from network. */
    /* A rank that stopped being waited for (a slow link nearby that was repaired) is not named
     * on what the older calls of the span say. */
    else if (fresh[best] < nt_rules.straggler_fresh_votes || weak >= 0)
        ;
    else if (votes[best] >= nt_rules.straggler_min_calls &&
             wait[best] > nt_rules.straggler_share * wait_sum && least == best &&
             (slowc = nt_watch_slow_comm_of(a, slow, &c->ranks[best])) != NULL)
        rc = nt_watch_not_judged_add(nj, "watch_straggler", c->id,
                                     "the others wait for rank %d, but its communicator %s is "
                                     "slower than others of its shape even for the rank that "
                                     "arrives last (watch_slow_node's rule): a link delays it, "
                                     "not its compute",
                                     best, slowc->id);
    else if (votes[best] >= nt_rules.straggler_min_calls &&
             wait[best] > nt_rules.straggler_share * wait_sum && least == best &&
             (elsewhere_us = nt_watch_wait_elsewhere_us(a, c, &c->ranks[best], since_us,
                                                        &elsewhere)) >=
                 nt_rules.straggler_elsewhere * wait[best])
        rc = nt_watch_not_judged_add(nj, "watch_straggler", c->id,
                                     "the others wait for rank %d (%.1f ms), but it waited "
                                     "%.1f ms itself in communicator %s over the same calls: "
                                     "it arrives late for that wait (a straggler or a slow link "
                                     "there), not for its compute",
                                     best, wait[best] / 1e3, elsewhere_us / 1e3, elsewhere->id);
    else if (votes[best] >= nt_rules.straggler_min_calls &&
             wait[best] > nt_rules.straggler_share * wait_sum && least == best &&
             nt_watch_least_everywhere(a, c, best, since_us, wait[best])) {
        char verdict[512], reason[1024];
        const nt_jobrank_t *r = &c->ranks[best];
        snprintf(verdict, sizeof(verdict),
                 "rank %d (host %s, pid %ld) is a straggler: compute side (GPU, CPU or data "
                 "loader), not the network",
                 best, r->host[0] ? r->host : "unknown", r->pid);
        snprintf(reason, sizeof(reason),
                 "its exec time is the shortest in %d of the latest %d calls of communicator %s "
                 "whose ranks differ by %.0f%% or more (mean spread %.0f%%), and those calls "
                 "hold %.0f%% of the others' wait (%.1f ms), more than %.0f%% in each of the "
                 "latest %d blocks of %d calls; its time inside the calls, of this "
                 "and of its other communicators, is the least of the ranks: the other ranks "
                 "wait for it inside the call",
                 votes[best], complete, c->id, nt_rules.straggler_min_spread * 100,
                 voting ? spread_sum / voting * 100 : 0.0, wait[best] / wait_sum * 100,
                 wait[best] / 1e3, nt_rules.straggler_block_share * 100, nt_rules.straggler_blocks,
                 nt_rules.straggler_block_calls);
        cJSON *f = nt_watch_finding_add(findings, "NT-JOB-201", "warn", nt_watch_who_rank(c, best),
                                         verdict, reason);
        if (!f || !cJSON_AddStringToObject(f, "side", "compute") ||
            !cJSON_AddNumberToObject(f, "calls_fastest", votes[best]) ||
            !cJSON_AddNumberToObject(f, "calls_judged", complete))
            rc = -1;
        out->warn++;
    }
    free(votes);
    free(fresh);
    free(wait);
    free(inside);
    free(call_arg);
    free(call_wait);
    return rc;
}

/* A hang: a rank whose sequence numbers stopped while the others went on. NCCL numbers a
 * communicator's collectives alike on every rank, so the others cannot be ahead by more than
 * what was dumped before the rank behind stopped writing. Ranks dump on their own timers, so a
 * live rank may be behind by one dump interval, and a rank in one slow call (a slow network)
 * skips a dump, since Inspector dumps only what completed (v2.30.7-1 inspector_json.cc:298-305).
 * So it is blamed only when hang_min_dumps of its own dump intervals have passed since its last
 * dump: by the wall clock while following a running job (now_us finite), else by the latest
 * dump of the ranks ahead. In a real hang the ranks blocked behind the stopped one dump nothing
 * more either, so without --follow a hang is confirmed only when the others went on for that
 * long (a rank stopped while the others run other calls, or a job ended around it). */
/* The stalls (NT-JOB-205's stall rule) of communicator ci of `a` and, when it has none, of
 * every other communicator that holds `host`: a host whose link stalls calls can hold its rank
 * silent in a call of a communicator that has not stalled yet (measured, 10% loss: the lossy
 * host's rank named a hang at 3.8 dump intervals in its data-parallel pair, which had no stall
 * in its window). Where none of those did, the fresh completed stalls of any communicator of
 * the job, and *where gets it (else NULL): a rank waits in a call for a peer that waits in
 * another for the stalled transfer, a chain of waits across communicators (measured, 10% loss
 * on h4: h6 silent 3 dump intervals in its data-parallel pair with h2, waiting in its tensor
 * group for h8, which waited in its pair with h4, after a 656 ms stall of h4's tensor group;
 * named a hang). `cache` holds one count per communicator of `a` (-2: not counted yet),
 * `cache_us` its longest stall and `cache_fresh` whether a completed one is fresh. *worst_us
 * gets the longest of those counted. Returns the count, -1 when out of memory. */
static int nt_watch_host_stalls(const nt_jobalign_t *a, size_t ci, const char *host,
                                double now_us, int *cache, double *cache_us, int *cache_fresh,
                                double *worst_us, const nt_jobcomm_t **where)
{
    size_t nc = nt_jobalign_ncomms(a);
    int total = 0;
    *worst_us = 0;
    *where = NULL;
    for (int pass = 0; pass < 2 && total == 0; pass++)
        for (size_t k = 0; k < nc; k++) {
            size_t i = k == 0 ? ci : (k <= ci ? k - 1 : k); /* ci first, then the others */
            const nt_jobcomm_t *o = nt_jobalign_comm(a, i);
            if (pass == 0 && i != ci) {
                if (total > 0 || !host[0])
                    break;
                int has = 0;
                for (int r = 0; r < o->nranks && !has; r++)
                    has = o->ranks[r].seen && strcmp(o->ranks[r].host, host) == 0;
                if (!has)
                    continue;
            }
            if (cache[i] == -2 &&
                (cache[i] = nt_watch_comm_stalls(o, now_us, &cache_us[i], &cache_fresh[i])) < 0)
                return -1;
            if (cache[i] > 0 && (pass == 0 || cache_fresh[i])) {
                total += cache[i];
                *worst_us = cache_us[i] > *worst_us ? cache_us[i] : *worst_us;
                if (pass == 1 && !*where)
                    *where = o;
            }
        }
    return total;
}

/* Whether the job stopped where each rank last dumped (a job killed, or one that ended without
 * a final dump: Inspector writes one only when a communicator is destroyed), rather than a rank
 * that holds the others: while following, every rank seen has been silent for at least
 * NT_WATCH_JOB_SILENT_DUMPS of its dump intervals (the one that dumped last may be up to an
 * interval behind the first in silence), and in some communicator the ranks behind its
 * furthest stopped at two different calls or more. A collective completes for a rank only once
 * every rank entered it, so ranks blocked behind one that hangs stand within a call of each
 * other, and only the stopped ones are behind; ranks that stopped where they last dumped are
 * scattered over a dump interval's calls (measured by a tester: a job of 8 ranks stopped with no
 * final dump left tp1's ranks at calls 150, 154, 158 and 159, and the hang rule named the one
 * at 150, which --drain drained; a rank stopped by SIGSTOP left the others all at call 124).
 * The hang rule then spares a rank behind only when it dumped until the others' last dumps.
 * Returns the communicator that shows the scatter (*lo: the lowest call its ranks stopped
 * at), NULL when the job did not so stop. */
#define NT_WATCH_JOB_SILENT_DUMPS 1.5
static const nt_jobcomm_t *nt_watch_job_stopped(const nt_jobalign_t *a, double now_us,
                                                uint64_t *lo)
{
    const nt_jobcomm_t *where = NULL;
    if (!isfinite(now_us))
        return NULL;
    for (size_t ci = 0; ci < nt_jobalign_ncomms(a); ci++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, ci);
        int levels = 0; /* calls the ranks behind stopped at: 0, 1, or 2 (two or more) */
        uint64_t first = 0, low = 0;
        for (int i = 0; i < c->nranks; i++) {
            const nt_jobrank_t *r = &c->ranks[i];
            if (!r->seen)
                continue;
            double every = nt_watch_dump_interval_us(r);
            if (!(every > 0) || !isfinite(r->last_dump_ts_us) ||
                !((now_us - nt_watch_rank_ts_us(r, r->last_dump_ts_us)) / every >=
                  NT_WATCH_JOB_SILENT_DUMPS))
                return NULL; /* a rank dumps on: the job runs */
            if (r->last_seq + 1 >= c->max_seq)
                continue; /* with the furthest, or a call behind it: blocked alike */
            if (levels == 0) {
                levels = 1;
                first = low = r->last_seq;
            } else if (r->last_seq != first)
                levels = 2;
            low = r->last_seq < low ? r->last_seq : low;
        }
        if (levels >= 2 && !where) {
            where = c;
            *lo = low;
        }
    }
    return where;
}

/* How a rank's silence was counted, for a hang's text: "by the clock" while following (with the
 * difference taken off when its writer's clock is not the watch's, nt_watch_rank_ts_us), "by
 * the others' dumps" otherwise. Returns buf. */
static const char *nt_watch_clock_said(const nt_jobrank_t *r, double now_us, char *buf, size_t len)
{
    double off = nt_watch_rank_ts_us(r, 0.0);
    if (!isfinite(now_us))
        snprintf(buf, len, "by the others' dumps");
    else if (off != 0)
        snprintf(buf, len, "by the clock, its writer's clock read %.2f s %s the watch's and the "
                           "difference taken off", fabs(off) / 1e6, off > 0 ? "behind" : "ahead of");
    else
        snprintf(buf, len, "by the clock");
    return buf;
}

static int nt_watch_hang_judge(const nt_jobalign_t *a, size_t ci, int *stall_cache,
                               double *stall_cache_us, int *stall_fresh, double now_us,
                               const nt_jobcomm_t *stopped, uint64_t stopped_lo,
                               cJSON *findings, cJSON *nj,
                               nt_watch_outcome_t *out)
{
    const nt_jobcomm_t *c = nt_jobalign_comm(a, ci);
    int seen = 0, missing = 0;
    for (int i = 0; i < c->nranks; i++)
        seen += c->ranks[i].seen;
    missing = c->nranks - seen;
    if (seen < 2)
        return nt_watch_not_judged_add(nj, "watch_hang", c->id,
                              "records of %d of %d rank(s): a rank is behind only when others "
                              "are seen",
                              seen, c->nranks);
    if (missing > 0) {
        char list[256] = "";
        size_t n = 0;
        for (int i = 0; i < c->nranks && n + 16 < sizeof(list); i++)
            if (!c->ranks[i].seen)
                n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%d", n ? "," : "", i);
        if (nt_watch_not_judged_add(nj, "watch_hang", c->id,
                           "rank(s) %s%s wrote no record in the inputs: their files were not "
                           "given, or they recorded no call of %d B or more",
                           list, missing > 16 ? ",..." : "", 8192) < 0)
            return -1;
    }
    for (int i = 0; i < c->nranks; i++) {
        const nt_jobrank_t *r = &c->ranks[i];
        double every, ref, missed;
        char by[128];
        int ahead = nt_watch_rank_behind(c, i, now_us, &every, &ref, &missed);
        if (ahead <= 0)
            continue;
        /* In a job that stopped so, a rank that was still dumping until the others' last dumps
         * (within 1.5 of its intervals of the latest) stopped with them; one silent long before
         * them stopped first: a hang, whatever stopped the job after. */
        double latest_ahead = NAN; /* on the watch's clock (stopped is found while following) */
        for (int j = 0; stopped && j < c->nranks; j++) {
            double t = nt_watch_rank_ts_us(&c->ranks[j], c->ranks[j].last_dump_ts_us);
            if (c->ranks[j].seen && c->ranks[j].last_seq > r->last_seq && !(t <= latest_ahead))
                latest_ahead = t;
        }
        if (stopped && every > 0 && isfinite(r->last_dump_ts_us) &&
            (latest_ahead - nt_watch_rank_ts_us(r, r->last_dump_ts_us)) / every <=
                NT_WATCH_JOB_SILENT_DUMPS) {
            if (nt_watch_not_judged_add(
                    nj, "watch_hang", c->id,
                    "rank %d is %llu call(s) behind, but every rank of the job has been silent "
                    "for %.1f of its dump intervals or more and the ranks of communicator %s "
                    "stopped at different calls (from %llu to %llu): the job stopped where each "
                    "rank last dumped (killed, or ended without a final dump), not a rank that "
                    "holds the others",
                    i, (unsigned long long)(c->max_seq - r->last_seq), NT_WATCH_JOB_SILENT_DUMPS,
                    stopped->id, (unsigned long long)stopped_lo,
                    (unsigned long long)stopped->max_seq) < 0)
                return -1;
            continue;
        }
        /* Without dump times (none recorded) the lag alone decides, as before they existed. */
        int overdue = !isfinite(r->last_dump_ts_us) || missed >= nt_watch_hang_min_dumps;
        if (!overdue) {
            if (nt_watch_not_judged_add(nj, "watch_hang", c->id,
                                        "rank %d is %llu call(s) behind, but its last dump is %.1f "
                                        "of its dump intervals old (%s), %.1f are needed: not yet "
                                        "confirmed",
                                        i, (unsigned long long)(c->max_seq - r->last_seq),
                                        isfinite(missed) ? fmax(missed, 0.0) : 0.0,
                                        nt_watch_clock_said(r, now_us, by, sizeof(by)),
                                        nt_watch_hang_min_dumps) < 0)
                return -1;
            continue;
        }
        /* A communicator that stalled in its latest calls (a retransmission timeout holds
         * every rank of a call for hundreds of ms) can hold one rank in one call for seconds:
         * its silence is a slow network until hang_stall_dumps of its intervals (a --long run
         * of the namespace cluster at 10% loss, 1 s dumps: the lossy host's rank named a hang
         * after its case). So can one whose host's other communicators stalled. Slow is not
         * dead. Each communicator's stalls are counted once, for the first rank that needs it. */
        double stall_us = 0;
        const nt_jobcomm_t *where = NULL;
        int stalls = nt_watch_host_stalls(a, ci, r->host, now_us, stall_cache, stall_cache_us,
                                          stall_fresh, &stall_us, &where);
        if (stalls < 0)
            return -1;
        if (stalls > 0 && isfinite(missed) && missed < nt_watch_hang_stall_dumps) {
            char whose[768], longest[96];
            if (stall_us > 0)
                snprintf(longest, sizeof(longest), "the longest %.0f ms", stall_us / 1e3);
            else /* only calls two ranks are held in now: they have no time yet */
                snprintf(longest, sizeof(longest), "a call two ranks on two hosts are held in now");
            if (where)
                snprintf(whose, sizeof(whose),
                         "communicator %s, which neither it nor host %s is in, stalled in %d of "
                         "its latest calls (%s: a rank waits for a peer that waits for the "
                         "stalled transfer)",
                         where->id, r->host[0] ? r->host : "unknown", stalls, longest);
            else
                snprintf(whose, sizeof(whose),
                         "%d of the latest calls of its communicator or of host %s's others "
                         "stalled (%s: a retransmission timeout holds a rank in one call for "
                         "seconds)",
                         stalls, r->host[0] ? r->host : "unknown", longest);
            if (nt_watch_not_judged_add(
                    nj, "watch_hang", c->id,
                    "rank %d is %llu call(s) behind and silent for %.1f of its dump intervals, "
                    "but %s: a slow network until %.0f intervals, not yet a hang",
                    i, (unsigned long long)(c->max_seq - r->last_seq), missed, whose,
                    nt_watch_hang_stall_dumps) < 0)
                return -1;
            continue;
        }
        /* One call behind, it may be held inside the call the others completed: a transfer that
         * retransmissions hold ends for the sender first, and the sender blocks in the next call
         * (measured on the namespace cluster, 10% loss, 1 s dumps: the lossy host's rank 644 in
         * its data-parallel pair, its peer 645, no call of the job stalled yet, named a hang at
         * 2.5 intervals of silence). A stopped process leaves unwritten the calls it completed
         * since its last dump, so the others stand 2 or more ahead of it when it completed two
         * or more since; after exactly one it is 1 behind and reads as held (a tester: every
         * time with one call per dump interval, about call time / dump interval of the time
         * with faster calls), named after hang_stall_dumps. 2 ahead, it completed
         * the call after its last, since it joined the next, and a live rank's dump thread
         * writes that within one interval after the others completed the call it joined. */
        uint64_t lag = c->max_seq - r->last_seq;
        if (isfinite(missed) && missed < nt_watch_hang_stall_dumps && every > 0) {
            double due = nt_watch_joined_due_us(c, i, every, now_us);
            if (lag == 1) {
                if (nt_watch_not_judged_add(
                        nj, "watch_hang", c->id,
                        "rank %d is 1 call behind and silent for %.1f of its dump intervals: it may "
                        "be held inside call %llu, which the others completed (a transfer held by "
                        "retransmissions ends for the sender first), or stopped after it completed "
                        "that call and before it dumped it, which looks the same (a process stopped "
                        "after two or more undumped calls is 2 or more behind): a slow transfer "
                        "until %.0f intervals, not yet a hang",
                        i, missed, (unsigned long long)c->max_seq, nt_watch_hang_stall_dumps) < 0)
                    return -1;
                continue;
            }
            if (ref < due) {
                if (nt_watch_not_judged_add(
                        nj, "watch_hang", c->id,
                        "rank %d is %llu calls behind, but the others' first record of call %llu, "
                        "which it joined after it completed call %llu, was dumped %.1f of its dump "
                        "intervals ago: a live rank dumps that call within an interval, %.1f are "
                        "needed: not yet confirmed",
                        i, (unsigned long long)lag, (unsigned long long)(r->last_seq + 2),
                        (unsigned long long)(r->last_seq + 1),
                        fmax((ref - due) / every + nt_watch_hang_joined_dumps, 0.0),
                        nt_watch_hang_joined_dumps) < 0)
                    return -1;
                continue;
            }
        }
        /* Another rank behind too: a stopped process holds back only itself (the others block in
         * the call after their last and have dumped what they completed, since the hang is
         * confirmed only after hang_min_dumps of its dump intervals), while a transfer that
         * stalls holds back both ranks it runs between while the others finish the call
         * (measured on the namespace cluster, 10% loss on one host's link: that host's rank and
         * its neighbour 5.1 s in one call, the other two ranks through it). The slow-node
         * judgement speaks of that link. The other counts when it is overdue too: a live rank
         * whose dump timer has not fired yet is behind for a moment. */
        /* (In a job that stopped where each rank last dumped, the others behind are scattered
         * by their dump timers, not held with it.) */
        int also = stopped ? -1 : nt_watch_also_behind(c, i, every, ref, now_us);
        if (also >= 0) {
            if (nt_watch_not_judged_add(nj, "watch_hang", c->id,
                                        "rank %d is %llu call(s) behind, and so is rank %d: a "
                                        "transfer between ranks that stalls holds back both (the "
                                        "network, watch_slow_node), a stopped rank only itself",
                                        i, (unsigned long long)(c->max_seq - r->last_seq),
                                        also) < 0)
                return -1;
            continue;
        }
        char verdict[512], reason[512];
        snprintf(verdict, sizeof(verdict),
                 "rank %d (host %s, pid %ld) stopped at call %llu of communicator %s while "
                 "the others went on: it hangs, or its process is stopped",
                 i, r->host[0] ? r->host : "unknown", r->pid, (unsigned long long)r->last_seq,
                 c->id);
        snprintf(reason, sizeof(reason),
                 "its last call is %llu; %d of the %d other rank(s) seen reached call %llu or "
                 "more (the furthest %llu); %s",
                 (unsigned long long)r->last_seq, ahead, seen - 1,
                 (unsigned long long)(r->last_seq + (uint64_t)nt_watch_hang_min_lag),
                 (unsigned long long)c->max_seq,
                 isfinite(missed) ? "" : "no dump times");
        if (isfinite(missed))
            snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason),
                     "its last dump is %.1f of its dump intervals (%.2f s) old %s", fmax(missed, 0.0),
                     every / 1e6, nt_watch_clock_said(r, now_us, by, sizeof(by)));
        cJSON *f = nt_watch_finding_add(findings, "NT-JOB-202", "fail", nt_watch_who_rank(c, i),
                                         verdict, reason);
        if (!f || !cJSON_AddNumberToObject(f, "last_seq", (double)r->last_seq) ||
            !cJSON_AddNumberToObject(f, "max_seq", (double)c->max_seq))
            return -1;
        out->fail++;
    }
    /* Every rank at the same last call and none dumping for hang_min_dumps of its intervals (by
     * the clock while following): the communicator stands still, but no rank is behind. A rank
     * stopped right after it dumped every call it had completed looks so (a CI-style run: rank
     * 1 of tp0 SIGSTOPped, all four ranks at call 1463, the other tensor group 6 calls on), and
     * so does a rank hung with its dump thread alive, or a job that ended: the records cannot
     * tell which rank holds the others, so it is said, not judged. */
    if (isfinite(now_us) && seen >= 2) {
        int still = 0;
        double least = INFINITY;
        for (int i = 0; i < c->nranks; i++) {
            const nt_jobrank_t *r = &c->ranks[i];
            double every = nt_watch_dump_interval_us(r);
            if (!r->seen)
                continue;
            if (r->last_seq != c->max_seq || !(every > 0) || !isfinite(r->last_dump_ts_us))
                break;
            double missed = (now_us - nt_watch_rank_ts_us(r, r->last_dump_ts_us)) / every;
            if (missed < nt_watch_hang_min_dumps)
                break;
            least = fmin(least, missed);
            still++;
        }
        if (still == seen &&
            nt_watch_not_judged_add(nj, "watch_hang", c->id,
                                    "all %d rank(s) seen stopped at call %llu and none dumped for "
                                    "%.1f of its dump intervals or more: the communicator stands "
                                    "still (a hang, or the job ended), but no rank is behind, so "
                                    "the records cannot tell which one holds the others (ncclras "
                                    "names unresponsive ranks)",
                                    seen, (unsigned long long)c->max_seq, least) < 0)
            return -1;
    }
    return 0;
}

/* The onset of a busbw drop in one series (a communicator's calls of one collective and size),
 * by Page's one-sided CUSUM (E. S. Page, "Continuous inspection schemes", Biometrika 41(1/2),
 * 1954, pp. 100-115): S_t = max(0, S_{t-1} + (mu0 - x_t)/sigma - k), an alarm when S_t > h,
 * the onset the first call after the last S = 0 before the alarm. k = 0.5 and h = 5 sigmas are
 * the usual design for a shift of one sigma (D. C. Montgomery, Introduction to Statistical
 * Quality Control, section 9.1). mu0 and sigma come from the first onset_baseline calls. The
 * confirmation window: one call adds at most onset_clip - k, so no single slow call reaches h;
 * at least two in a row, or a sustained drop, must. Returns the index of the onset in bw[] or -1;
 * mu0 and the mean after the onset in *mu0, *after. */
static int nt_watch_cusum_onset(const double *bw, int n, int from, int *alarm, double *mu0,
                                double *after)
{
    int b = nt_rules.onset_baseline;
    if (n <= b)
        return -1;
    double m = 0, v = 0;
    for (int i = 0; i < b; i++)
        m += bw[i];
    m /= b;
    for (int i = 0; i < b; i++)
        v += (bw[i] - m) * (bw[i] - m);
    double sd = sqrt(v / (b - 1));
    if (sd < nt_rules.onset_min_sigma * m)
        sd = nt_rules.onset_min_sigma * m;
    if (!(m > 0) || !(sd > 0))
        return -1;
    double S = 0;
    int start = from > b ? from : b;
    for (int i = start; i < n; i++) {
        double z = (m - bw[i]) / sd;
        if (z > nt_rules.onset_clip)
            z = nt_rules.onset_clip;
        S = S + z - nt_rules.onset_k;
        if (S <= 0) {
            S = 0;
            start = i + 1;
        } else if (S > nt_rules.onset_h) {
            double sum = 0;
            for (int j = start; j < n; j++)
                sum += bw[j];
            *mu0 = m;
            *after = sum / (n - start);
            *alarm = i;
            /* Persistent: the latest calls are still that much lower (a burst of slow calls
             * that is over is no onset, and the test goes on after it). */
            if (n - start < nt_rules.onset_persist_calls)
                return -1; /* not yet confirmed: too few calls since */
            int p = nt_rules.onset_persist_calls;
            double last = 0;
            for (int j = n - p; j < n; j++)
                last += bw[j];
            last /= p;
            if (*after <= (1 - nt_rules.onset_min_drop) * m &&
                last <= (1 - nt_rules.onset_min_drop) * m)
                return start;
            S = 0;
            start = i + 1;
        }
    }
    return -1;
}

static int nt_watch_cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of v[0..n) (sorted in place); NAN when n is 0. */
static double nt_watch_median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), nt_watch_cmp_double);
    return n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The level of the series `op`/`bytes` of communicator `c` from `from_us` on (dump time): the
 * median shortest exec time of its first onset_baseline calls over that of the calls from
 * then on (1: as fast, 0.5: twice as slow). The shortest exec time is the rank that arrives
 * last, which waits for no one: the network's part of the call, where the median busbw also
 * holds the ranks' wait for a late one. Medians: on shared cores a few calls run 10x faster or
 * slower than the rest, and a mean follows them. With `excess_us` (or NULL), how much longer
 * that median is than the baseline's, in us. NAN when it has no baseline or no call from then
 * on, or out of memory. */
static double nt_watch_series_level(const nt_jobcomm_t *c, const char *op, double bytes,
                                    double from_us, double *excess_us)
{
    size_t w = c->window;
    double *v = malloc(2 * w * sizeof(double));
    double *base = v, *after = v + w;
    size_t nb = 0, na = 0;
    uint64_t lo = c->max_seq + 1 > w ? c->max_seq + 1 - w : 0;
    for (uint64_t s = lo; v && c->any_seq && s <= c->max_seq; s++) {
        const nt_jobcall_t *k = nt_jobcomm_call(c, s);
        double mn, mx;
        int arg;
        if (!k || strcmp(k->op, op) != 0 || !(k->bytes == bytes) ||
            !isfinite(nt_jobcall_median_busbw(c, k)) || nt_jobcall_spread(c, k, &mn, &mx, &arg) < 1)
            continue;
        if (nb < (size_t)nt_rules.onset_baseline)
            base[nb++] = mn;
        else if (k->dump_ts_us >= from_us)
            after[na++] = mn;
    }
    int ok = v && nb == (size_t)nt_rules.onset_baseline && na > 0;
    double tb = ok ? nt_watch_median(base, nb) : NAN, ta = ok ? nt_watch_median(after, na) : NAN;
    if (excess_us)
        *excess_us = ta - tb;
    free(v);
    return ta > 0 ? tb / ta : NAN;
}

/* The median level (nt_watch_series_level) of the same series in the other communicators of
 * `a` with as many ranks as `c`, from `from_us` on; NAN when none has one. How many in *npeers. */
static double nt_watch_peer_level(const nt_jobalign_t *a, const nt_jobcomm_t *c, const char *op,
                                  double bytes, double from_us, int *npeers)
{
    size_t n = nt_jobalign_ncomms(a), m = 0;
    double *v = malloc((n ? n : 1) * sizeof(double));
    *npeers = 0;
    if (!v)
        return NAN;
    for (size_t i = 0; i < n; i++) {
        const nt_jobcomm_t *o = nt_jobalign_comm(a, i);
        double l;
        /* Each rank dumps on its own timer: the peers' calls of the same time may be dumped
         * up to one of their dump intervals earlier. */
        double every = o->nranks > 0 ? nt_watch_dump_interval_us(&o->ranks[0]) : NAN;
        if (o != c && o->nranks == c->nranks &&
            isfinite(l = nt_watch_series_level(o, op, bytes,
                                               from_us - (every > 0 ? every : 0), NULL)))
            v[m++] = l;
    }
    double med = nt_watch_median(v, m);
    free(v);
    *npeers = (int)m;
    return med;
}

/* Every series of a communicator's window through nt_watch_cusum_onset: a finding for each drop,
 * a not_judged entry for a series too short for its baseline. A drop that the same series of
 * the communicators of the same size show too (their median level from the onset on, against
 * their own baseline) is the whole job's, not this communicator's network: on shared cores
 * every communicator's small calls got 1.5-4x slower together in healthy runs (measured on the
 * namespace cluster), so the drop must leave it at most onset_peer_ratio of its peers' level. */
static int nt_watch_onset_judge(const nt_jobalign_t *a, const nt_jobcomm_t *c, cJSON *findings,
                                cJSON *nj, nt_watch_outcome_t *out)
{
    size_t w = c->window;
    double *bw = malloc(w * sizeof(double));
    uint64_t *seq = malloc(w * sizeof(uint64_t));
    double *ts = malloc(w * sizeof(double));
    char *done = calloc(w, 1);
    int rc = 0;
    if (!bw || !seq || !ts || !done)
        rc = -1;
    uint64_t lo = c->max_seq + 1 > w ? c->max_seq + 1 - w : 0;
    /* One series at a time: the first call not yet taken names it. */
    for (uint64_t s0 = lo; rc == 0 && c->any_seq && s0 <= c->max_seq; s0++) {
        const nt_jobcall_t *k0 = nt_jobcomm_call(c, s0);
        int n = nt_watch_series_take(c, s0, done, bw, seq, ts);
        if (n < 0)
            continue;
        double mu0 = NAN, after = NAN;
        if (n <= nt_rules.onset_baseline) {
            rc = nt_watch_not_judged_add(nj, "watch_onset", c->id,
                                         "%s of %.0f B: %d call(s) with a busbw, more than %d "
                                         "are needed (the first %d set the baseline)",
                                         k0->op, k0->bytes, n, nt_rules.onset_baseline,
                                         nt_rules.onset_baseline);
            continue;
        }
        /* An alarm that costs each call little, or that the peers show too, is passed over,
         * and the test goes on after it (a communicator's own drop may follow the job's), at
         * most onset_tries times. why: 1 too cheap, 2 the peers' too. */
        int at = -1, alarm = -1, npeers = 0, tries = 0, passed = 0, why = 0;
        double peer = NAN, self = NAN, excess = NAN;
        while (tries++ < nt_rules.onset_tries &&
               (at = nt_watch_cusum_onset(bw, n, alarm + 1, &alarm, &mu0, &after)) >= 0) {
            peer = nt_watch_peer_level(a, c, k0->op, k0->bytes, ts[at], &npeers);
            self = nt_watch_series_level(c, k0->op, k0->bytes, ts[at], &excess);
            why = isfinite(peer) && !(self <= nt_rules.onset_peer_ratio * peer) ? 2
                  : excess < nt_rules.onset_min_excess_us                      ? 1
                                                                               : 0;
            if (!why)
                break;
            passed = at;
            at = -1;
        }
        char vs[32];
        if (at < 0 && why == 1) {
            rc = nt_watch_not_judged_add(nj, "watch_onset", c->id,
                                         "%s of %.0f B runs at %.0f%% of its baseline's speed "
                                         "from call %llu on, but its shortest exec time "
                                         "is %s us longer than the baseline's, under the "
                                         "%.0f us a drop must cost each call",
                                         k0->op, k0->bytes, self * 100,
                                         (unsigned long long)seq[passed],
                                         nt_watch_fmt_vs(vs, sizeof(vs), excess,
                                                         nt_rules.onset_min_excess_us, 0),
                                         nt_rules.onset_min_excess_us);
            continue;
        }
        if (at < 0 && why == 2) {
            /* the rule compares its level with its peers' (self / peer), so that ratio is
             * printed beside the threshold, precise enough not to read as it */
            rc = nt_watch_not_judged_add(nj, "watch_onset", c->id,
                                         "%s of %.0f B runs at %.0f%% of its baseline's speed "
                                         "(median shortest exec time) from call %llu on, the "
                                         "same calls of %d other "
                                         "communicator(s) of %d ranks at %.0f%% of theirs: the "
                                         "job's own change (shared cores, load), not this "
                                         "communicator's (it is at %s%% of its peers' level; a "
                                         "drop leaves it at most %.0f%%)",
                                         k0->op, k0->bytes, self * 100,
                                         (unsigned long long)seq[passed], npeers, c->nranks,
                                         peer * 100,
                                         nt_watch_fmt_vs(vs, sizeof(vs), self / peer * 100,
                                                         nt_rules.onset_peer_ratio * 100, 0),
                                         nt_rules.onset_peer_ratio * 100);
            continue;
        }
        if (at < 0)
            continue;
        char verdict[512], reason[512];
        snprintf(verdict, sizeof(verdict),
                 "busbw of %s of %.0f B in communicator %s dropped from %.1f to %.1f GB/s "
                 "(%.0f%% lower) from call %llu on: its network, or a rank it waits for (a straggler "
                 "finding says which)",
                 k0->op, k0->bytes, c->id, mu0, after, (1 - after / mu0) * 100,
                 (unsigned long long)seq[at]);
        snprintf(reason, sizeof(reason),
                 "Page's CUSUM over %d calls (baseline the first %d, k %.1f, h %.1f sigmas) "
                 "crossed h; onset at call %llu",
                 n, nt_rules.onset_baseline, nt_rules.onset_k, nt_rules.onset_h,
                 (unsigned long long)seq[at]);
        if (isfinite(peer))
            snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason),
                     "; it runs at %.0f%% of its baseline's speed since (median shortest exec "
                     "time), the same calls of %d other communicator(s) of its size at %.0f%% "
                     "of theirs",
                     self * 100, npeers, peer * 100);
        nt_watch_who_t who = {c->id, c->name, "", -1, -1};
        cJSON *f = nt_watch_finding_add(findings, "NT-JOB-204", "warn", who, verdict, reason);
        if (!f || !cJSON_AddNumberToObject(f, "onset_seq", (double)seq[at]) ||
            !(isfinite(ts[at]) ? cJSON_AddNumberToObject(f, "onset_dump_ts_us", ts[at])
                               : cJSON_AddNullToObject(f, "onset_dump_ts_us")) ||
            !cJSON_AddNumberToObject(f, "expected_busbw_GBps", mu0) ||
            !cJSON_AddNumberToObject(f, "observed_busbw_GBps", after))
            rc = -1;
        out->warn++;
    }
    free(bw);
    free(seq);
    free(ts);
    free(done);
    return rc;
}

int nt_watch_ras_judge(const nt_jobrec_t *rec, cJSON *findings, nt_watch_outcome_t *out)
{
    if (rec->kind != NT_JOBREC_RAS || !rec->ras_missing)
        return 0;
    const char *state = rec->ras_dead           ? "considered dead"
                        : rec->ras_unresponsive ? "unresponsive"
                                                : "missing";
    char verdict[512], reason[256];
    snprintf(verdict, sizeof(verdict),
             "rank %d (host %s, pid %ld) of communicator %s is %s to NCCL RAS: its process or "
             "node stopped answering",
             rec->rank, rec->host[0] ? rec->host : "unknown", rec->pid, rec->comm_id, state);
    snprintf(reason, sizeof(reason),
             "ncclras lists it under missing_ranks (unresponsive %s, considered_dead %s)",
             rec->ras_unresponsive ? "true" : "false", rec->ras_dead ? "true" : "false");
    nt_watch_who_t w = {rec->comm_id, rec->comm_name, rec->host, rec->rank, rec->pid};
    if (!nt_watch_finding_add(findings, "NT-JOB-203", "fail", w, verdict, reason))
        return -1;
    out->fail++;
    return 0;
}

int nt_watch_judge(const nt_jobalign_t *a, unsigned long prom_records, double now_us,
                   cJSON *findings, cJSON *not_judged, nt_watch_outcome_t *out)
{
    if (prom_records &&
        nt_watch_not_judged_add(not_judged, "watch_straggler", NULL,
                       "%lu Prometheus aggregate(s): per GPU per dump interval, with no rank, "
                       "communicator id or sequence number (NCCL v2.30.7-1 "
                       "inspector_prom.cc:246-249): they show nodes only, not ranks or calls",
                       prom_records) < 0)
        return -1;
    if (prom_records && nt_watch_not_judged_add(not_judged, "watch_hang", NULL,
                                       "Prometheus aggregates carry no sequence number "
                                       "(inspector_prom.cc:246-249)") < 0)
        return -1;
    /* The slow node first: a rank behind a slow link arrives late at its other calls as a
     * straggler does, and the straggler judgement leaves the ranks of a named host alone. */
    size_t nc = nt_jobalign_ncomms(a);
    char *slow = calloc(nc + 1, 1);
    int *stall_cache = malloc((nc + 1) * sizeof(int)), *stall_fresh = calloc(nc + 1, sizeof(int));
    double *stall_us = calloc(nc + 1, sizeof(double));
    for (size_t i = 0; stall_cache && i < nc; i++)
        stall_cache[i] = -2;
    if (!slow || !stall_cache || !stall_us || !stall_fresh ||
        (!(prom_records && !nc) && nt_watch_node_judge(a, now_us, findings, not_judged, out, slow) < 0)) {
        free(slow);
        free(stall_cache);
        free(stall_us);
        free(stall_fresh);
        return -1;
    }
    uint64_t stopped_lo = 0;
    const nt_jobcomm_t *stopped = nt_watch_job_stopped(a, now_us, &stopped_lo);
    for (size_t i = 0; i < nc; i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        if (nt_watch_straggler_judge(a, c, slow, findings, not_judged, out) < 0 ||
            nt_watch_hang_judge(a, i, stall_cache, stall_us, stall_fresh, now_us, stopped,
                                stopped_lo, findings, not_judged, out) < 0 ||
            nt_watch_onset_judge(a, c, findings, not_judged, out) < 0) {
            free(slow);
            free(stall_cache);
            free(stall_us);
            free(stall_fresh);
            return -1;
        }
    }
    free(slow);
    free(stall_cache);
    free(stall_us);
    free(stall_fresh);
    if (prom_records && !nt_jobalign_ncomms(a))
        return nt_watch_not_judged_add(not_judged, "watch_slow_node", NULL,
                                       "Prometheus aggregates name no communicator or rank "
                                       "(inspector_prom.cc:246-249): the communicators with a "
                                       "node cannot be told from those without it");
    return 0;
}
