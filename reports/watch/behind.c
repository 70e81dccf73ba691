/* A rank behind: the hang rule's evidence (docs/watch.md, NT-JOB-202), shared by the hang
 * judgement (judge.c), which names a rank that stopped, and the stall rule (judge_node.c), which
 * counts a call two ranks are held in as the network's. Each rank dumps on its own timer, so a
 * rank is behind only when the others are ahead by hang_min_lag calls, and silent only when
 * hang_min_dumps of its own dump intervals have passed since its last dump. */
#include <math.h>
#include <string.h>

#include "watch.h"

const int nt_watch_hang_min_lag = 1;
const double nt_watch_hang_min_dumps = 2.5;
const double nt_watch_hang_stall_dumps = 10;
/* The other rank of two held together counts once silent for 1.5 of its dump intervals: a live
 * rank is behind by at most one dump (its timer), and the two ranks of one held transfer dump
 * on their own timers, so the second falls silent up to one interval after the first (a --long
 * run at 10% loss: the lossy host's rank 1.9 intervals silent, its neighbour 2.9, and the
 * neighbour was named a hang while 2.5 were asked of both). */
const double nt_watch_hang_also_dumps = 1.5;

/* A rank 2 or more calls behind completed the call after its last, since it joined the next
 * one, which the others completed: a live rank's dump thread writes that call within one of
 * its intervals after (Inspector dumps what completed), so it is overdue once this many of its
 * intervals have passed since the others' first record of the call it joined. One interval
 * and a half for a late timer: a tester's live rank held, released and held again at once,
 * its dump after the release late by 1.0 interval, was named in 0 of 8 tries, late by 1.6 in 4
 * of 6. */
const double nt_watch_hang_joined_dumps = 1.5;

/* The watch reads a dump within NT_WATCH_WAKE_MIN_S plus NT_WATCH_SETTLE_S of its write when a
 * write wakes it (run.c): a rank's difference up to this is the read's own delay, not another
 * clock, and is not added. */
const double nt_watch_read_delay_us = NT_JOBREC_CLOCK_STEP_US;

double nt_watch_rank_ts_us(const nt_jobrank_t *r, double ts_us)
{
    double ahead = nt_jobrank_ahead_us(r);
    if (!isfinite(ahead) || (ahead >= 0 && ahead <= nt_watch_read_delay_us))
        return ts_us;
    return ts_us + ahead;
}

/* A rank's dump interval: the shortest gap between its latest distinct dump times (a dump
 * with nothing new is skipped, which doubles one gap); NAN when it has fewer than two. */
double nt_watch_dump_interval_us(const nt_jobrank_t *r)
{
    return nt_jobrank_dump_interval_us(r);
}

int nt_watch_rank_behind(const nt_jobcomm_t *c, int i, double now_us, double *every_us,
                         double *ref_us, double *missed)
{
    const nt_jobrank_t *r = &c->ranks[i];
    *every_us = *ref_us = *missed = NAN;
    if (!r->seen || c->max_seq < r->last_seq + (uint64_t)nt_watch_hang_min_lag)
        return 0;
    int ahead = 0, seen = 0;
    double latest = NAN; /* the latest dump of the ranks ahead */
    for (int j = 0; j < c->nranks; j++) {
        const nt_jobrank_t *o = &c->ranks[j];
        seen += o->seen;
        if (!o->seen || o->last_seq < r->last_seq + (uint64_t)nt_watch_hang_min_lag)
            continue;
        ahead++;
        if (!(o->last_dump_ts_us <= latest))
            latest = o->last_dump_ts_us;
    }
    if (ahead * 2 < seen - 1) /* most of the others, not one fast dumper */
        return 0;
    double every = nt_watch_dump_interval_us(r);
    for (int j = 0; !(every > 0) && j < c->nranks; j++)
        every = nt_watch_dump_interval_us(&c->ranks[j]);
    *every_us = every;
    *ref_us = isfinite(now_us) ? now_us : latest;
    /* Its silence counts from its last dump, or from one dump interval before the others' first
     * record past its last call, whichever is later: until then the others were silent too (a
     * job held whole in one call dumps nothing, and once it goes on each rank dumps within one
     * of its intervals). Measured, 10% loss on the namespace cluster: all 8 ranks silent 3.0 s
     * while one call held them, then a read between two ranks' dumps 10 ms apart named the
     * second a hang. */
    /* While following, each writer's time is put on the watch's clock (nt_watch_rank_ts_us):
     * the next call's first record is another rank's. */
    int follow = isfinite(now_us);
    double from = follow ? nt_watch_rank_ts_us(r, r->last_dump_ts_us) : r->last_dump_ts_us;
    const nt_jobcall_t *next = nt_jobcomm_call(c, r->last_seq + 1);
    double next_us = !next ? NAN
                     : follow && next->dump_rank >= 0 && next->dump_rank < c->nranks
                         ? nt_watch_rank_ts_us(&c->ranks[next->dump_rank], next->dump_ts_us)
                         : next->dump_ts_us;
    if (isfinite(next_us) && every > 0 && next_us - every > from)
        from = next_us - every;
    *missed = every > 0 && isfinite(*ref_us) ? (*ref_us - from) / every : NAN;
    return ahead;
}

double nt_watch_joined_due_us(const nt_jobcomm_t *c, int i, double every_us, double now_us)
{
    const nt_jobrank_t *r = &c->ranks[i];
    if (!r->seen || c->max_seq < r->last_seq + 2 || !(every_us > 0))
        return NAN;
    const nt_jobcall_t *j = nt_jobcomm_call(c, r->last_seq + 2);
    if (!j || !isfinite(j->dump_ts_us))
        return NAN;
    double joined = isfinite(now_us) && j->dump_rank >= 0 && j->dump_rank < c->nranks
                        ? nt_watch_rank_ts_us(&c->ranks[j->dump_rank], j->dump_ts_us)
                        : j->dump_ts_us;
    return joined + nt_watch_hang_joined_dumps * every_us;
}

int nt_watch_also_behind(const nt_jobcomm_t *c, int i, double every_us, double ref_us,
                         double now_us)
{
    for (int j = 0; j < c->nranks; j++) {
        const nt_jobrank_t *o = &c->ranks[j];
        double oe = nt_watch_dump_interval_us(o), oref = isfinite(now_us) ? now_us : ref_us,
               olast = isfinite(now_us) ? nt_watch_rank_ts_us(o, o->last_dump_ts_us)
                                        : o->last_dump_ts_us;
        oe = oe > 0 ? oe : every_us;
        if (j != i && o->seen && c->max_seq >= o->last_seq + (uint64_t)nt_watch_hang_min_lag &&
            (!isfinite(o->last_dump_ts_us) ||
             (oe > 0 && isfinite(oref) &&
              (oref - olast) / oe >= nt_watch_hang_also_dumps)))
            return j;
    }
    return -1;
}

int nt_watch_two_behind(const nt_jobcomm_t *c, double now_us, double *silent_us)
{
    for (int i = 0; i < c->nranks; i++) {
        const nt_jobrank_t *r = &c->ranks[i];
        double every, ref, missed;
        if (!r->host[0] || nt_watch_rank_behind(c, i, now_us, &every, &ref, &missed) <= 0 ||
            !(missed >= nt_watch_hang_min_dumps) || !(missed < nt_watch_hang_stall_dumps))
            continue;
        /* another rank held in the same call (the same last call), on another host, silent as
         * long by the same test (a rank that computes or waits dumps on: not held) */
        for (int j = 0; j < c->nranks; j++) {
            const nt_jobrank_t *o = &c->ranks[j];
            double oe, oref, omissed;
            if (j == i || !o->host[0] || strcmp(o->host, r->host) == 0 ||
                o->last_seq != r->last_seq ||
                nt_watch_rank_behind(c, j, now_us, &oe, &oref, &omissed) <= 0 ||
                !(omissed >= nt_watch_hang_also_dumps) || !(omissed < nt_watch_hang_stall_dumps))
                continue;
            int follow = isfinite(now_us);
            double last = follow ? fmax(nt_watch_rank_ts_us(r, r->last_dump_ts_us),
                                        nt_watch_rank_ts_us(o, o->last_dump_ts_us))
                                 : fmax(r->last_dump_ts_us, o->last_dump_ts_us);
            *silent_us = isfinite(last) ? ref - last : 0;
            return 1;
        }
    }
    return 0;
}

/* The silences the hang rule and the stall rule compare with: a live rank's (also), a hang's
 * confirmation (min) and the end of a slow network's deferral (stall). */
static const double *const nt_watch_silence_marks[] = {
    &nt_watch_hang_also_dumps, &nt_watch_hang_min_dumps, &nt_watch_hang_stall_dumps};

double nt_watch_next_mark_us(const nt_jobalign_t *a, double now_us)
{
    double next = NAN;
    if (!isfinite(now_us))
        return NAN;
    for (size_t ci = 0; ci < nt_jobalign_ncomms(a); ci++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, ci);
        for (int i = 0; i < c->nranks; i++) {
            double every, ref, missed;
            if (nt_watch_rank_behind(c, i, now_us, &every, &ref, &missed) <= 0 ||
                !(every > 0) || !isfinite(missed))
                continue;
            for (size_t k = 0; k < sizeof(nt_watch_silence_marks) / sizeof(*nt_watch_silence_marks); k++) {
                double m = *nt_watch_silence_marks[k];
                if (missed >= m)
                    continue;
                double t = now_us + (m - missed) * every;
                if (!(t >= next))
                    next = t;
                break; /* the marks rise: the first ahead is the nearest */
            }
            double t = nt_watch_joined_due_us(c, i, every, now_us);
            if (t > now_us && !(t >= next))
                next = t;
        }
    }
    return next;
}
