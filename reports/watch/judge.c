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
    int straggler_min_calls;     /* complete calls needed, and calls that must blame the rank */
    double straggler_min_spread; /* a call votes when (max - min) / max reaches this */
    double straggler_share;      /* the rank must be fastest in more than this share of votes */
    int hang_min_lag;            /* calls the others must be ahead before a rank is behind */
    int hang_min_dumps;          /* dumps the others wrote since the rank's last one */
    int onset_baseline;          /* calls of a series that set its expected busbw */
    double onset_k, onset_h;     /* CUSUM reference value and decision interval, in sigmas */
    double onset_clip;           /* one call moves the sum by at most this many sigmas */
    double onset_min_sigma;      /* the sigma used is at least this share of the baseline */
    double onset_min_drop;       /* the mean after the onset is at least this share lower */
} nt_rules = {3, 8, 0.20, 0.50, 2, 2, 16, 0.5, 5.0, 3.0, 0.01, 0.10};

cJSON *nt_watch_settings(size_t window)
{
    cJSON *s = cJSON_CreateObject();
    if (!s || !cJSON_AddNumberToObject(s, "window_calls", (double)window) ||
        !cJSON_AddNumberToObject(s, "straggler_min_ranks", nt_rules.straggler_min_ranks) ||
        !cJSON_AddNumberToObject(s, "straggler_min_calls", nt_rules.straggler_min_calls) ||
        !cJSON_AddNumberToObject(s, "straggler_min_spread", nt_rules.straggler_min_spread) ||
        !cJSON_AddNumberToObject(s, "straggler_share", nt_rules.straggler_share) ||
        !cJSON_AddNumberToObject(s, "hang_min_lag_calls", nt_rules.hang_min_lag) ||
        !cJSON_AddNumberToObject(s, "hang_min_dumps", nt_rules.hang_min_dumps) ||
        !cJSON_AddNumberToObject(s, "onset_baseline_calls", nt_rules.onset_baseline) ||
        !cJSON_AddNumberToObject(s, "onset_cusum_k", nt_rules.onset_k) ||
        !cJSON_AddNumberToObject(s, "onset_cusum_h", nt_rules.onset_h) ||
        !cJSON_AddNumberToObject(s, "onset_min_drop", nt_rules.onset_min_drop)) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

int nt_watch_not_judged_add(cJSON *arr, const char *check, const char *comm, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o))
        return cJSON_Delete(o), -1;
    if (!cJSON_AddStringToObject(o, "check", check) ||
        !(comm ? cJSON_AddStringToObject(o, "comm_id", comm) : cJSON_AddNullToObject(o, "comm_id")) ||
        !cJSON_AddStringToObject(o, "reason", reason))
        return -1;
    return 0;
}

static nt_watch_who_t nt_watch_who_rank(const nt_jobcomm_t *c, int rank)
{
    return (nt_watch_who_t){c->id, c->name, c->ranks[rank].host, rank, c->ranks[rank].pid};
}

cJSON *nt_watch_finding_add(cJSON *arr, const char *code, const char *status,
                                   nt_watch_who_t w, const char *verdict, const char *reason)
{
    const nt_check_row_t *row = nt_check_by_code(code);
    cJSON *o = cJSON_CreateObject();
    if (!row || !o || !cJSON_AddItemToArray(arr, o))
        return cJSON_Delete(o), NULL;
    if (!cJSON_AddStringToObject(o, "code", row->code) ||
        !cJSON_AddStringToObject(o, "check", row->check) ||
        !cJSON_AddStringToObject(o, "category", nt_category_name(row->category)) ||
        !cJSON_AddStringToObject(o, "status", status) ||
        !cJSON_AddStringToObject(o, "comm_id", w.comm_id) ||
        !cJSON_AddStringToObject(o, "comm_name", w.comm_name) ||
        !(w.rank >= 0 ? cJSON_AddNumberToObject(o, "rank", w.rank)
                      : cJSON_AddNullToObject(o, "rank")) ||
        !(w.host[0] ? cJSON_AddStringToObject(o, "host", w.host)
                    : cJSON_AddNullToObject(o, "host")) ||
        !(w.pid >= 0 ? cJSON_AddNumberToObject(o, "pid", (double)w.pid)
                     : cJSON_AddNullToObject(o, "pid")) ||
        !cJSON_AddStringToObject(o, "verdict", verdict) ||
        !cJSON_AddStringToObject(o, "reason", reason) ||
        !cJSON_AddStringToObject(o, "action", row->action))
        return NULL;
    return o;
}

/* A straggler: the rank that arrives last at a collective spends the least time in it, because
 * the others have been waiting for it inside the call. Its exec time is the shortest in most
 * calls; that is the compute side of that rank (GPU, CPU, data loader), not the network. */
static int nt_watch_straggler_judge(const nt_jobcomm_t *c, cJSON *findings, cJSON *nj,
                           nt_watch_outcome_t *out)
{
    if (c->nranks < nt_rules.straggler_min_ranks)
        return nt_watch_not_judged_add(nj, "watch_straggler", c->id,
                              "%d rank(s): a straggler is named among at least %d", c->nranks,
                              nt_rules.straggler_min_ranks);
    int *votes = calloc((size_t)c->nranks, sizeof(int));
    if (!votes)
        return -1;
    int complete = 0, voting = 0;
    double spread_sum = 0;
    uint64_t lo = c->max_seq + 1 > c->window ? c->max_seq + 1 - c->window : 0;
    for (uint64_t s = lo; c->any_seq && s <= c->max_seq; s++) {
        const nt_jobcall_t *k = nt_jobcomm_call(c, s);
        double mn, mx;
        int arg;
        if (!k || k->nseen < c->nranks || nt_jobcall_spread(c, k, &mn, &mx, &arg) < c->nranks ||
            !isfinite(mx) || mx <= 0)
            continue;
        complete++;
        if ((mx - mn) / mx >= nt_rules.straggler_min_spread) {
            votes[arg]++;
            voting++;
            spread_sum += (mx - mn) / mx;
        }
    }
    int best = 0;
    for (int i = 1; i < c->nranks; i++)
        if (votes[i] > votes[best])
            best = i;
    int rc = 0;
    if (complete < nt_rules.straggler_min_calls)
        rc = nt_watch_not_judged_add(nj, "watch_straggler", c->id,
                            "%d call(s) with every rank's record: at least %d are needed",
                            complete, nt_rules.straggler_min_calls);
    else if (votes[best] >= nt_rules.straggler_min_calls &&
             votes[best] > nt_rules.straggler_share * voting) {
        char verdict[512], reason[512];
        const nt_jobrank_t *r = &c->ranks[best];
        snprintf(verdict, sizeof(verdict),
                 "rank %d (host %s, pid %ld) is a straggler: compute side (GPU, CPU or data "
                 "loader), not the network",
                 best, r->host[0] ? r->host : "unknown", r->pid);
        snprintf(reason, sizeof(reason),
                 "its exec time is the shortest in %d of %d calls of communicator %s whose "
                 "ranks differ by %.0f%% or more (mean spread %.0f%%): the other ranks wait "
                 "for it inside the call",
                 votes[best], complete, c->id, nt_rules.straggler_min_spread * 100,
                 voting ? spread_sum / voting * 100 : 0.0);
        cJSON *f = nt_watch_finding_add(findings, "NT-JOB-201", "warn", nt_watch_who_rank(c, best),
                                         verdict, reason);
        if (!f || !cJSON_AddNumberToObject(f, "calls_fastest", votes[best]) ||
            !cJSON_AddNumberToObject(f, "calls_judged", complete))
            rc = -1;
        out->warn++;
    }
    free(votes);
    return rc;
}

/* A hang: a rank whose sequence numbers stopped while the others went on. NCCL numbers a
 * communicator's collectives alike on every rank, so the others cannot be ahead by more than
 * what was dumped before the rank behind stopped writing. Ranks dump on their own timers, so a
 * live rank may be behind by one dump interval: it is blamed only when the others have dumped
 * hang_min_dumps times since its own last dump (a rank with new records dumps them too). */
static int nt_watch_hang_judge(const nt_jobcomm_t *c, cJSON *findings, cJSON *nj, nt_watch_outcome_t *out)
{
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
        if (!r->seen || c->max_seq < r->last_seq + (uint64_t)nt_rules.hang_min_lag)
            continue;
        int ahead = 0, confirmed = 0;
        for (int j = 0; j < c->nranks; j++) {
            const nt_jobrank_t *o = &c->ranks[j];
            if (!o->seen || o->last_seq < r->last_seq + (uint64_t)nt_rules.hang_min_lag)
                continue;
            ahead++;
            confirmed += !isfinite(r->last_dump_ts_us) ||
                         nt_jobrank_dumps_after(o, r->last_dump_ts_us) >= nt_rules.hang_min_dumps;
        }
        if (ahead * 2 < seen - 1) /* most of the others, not one fast dumper */
            continue;
        if (confirmed * 2 < seen - 1) {
            if (nt_watch_not_judged_add(nj, "watch_hang", c->id,
                                        "rank %d is %llu call(s) behind, but the others have not "
                                        "dumped %d times since its last dump: not yet confirmed",
                                        i, (unsigned long long)(c->max_seq - r->last_seq),
                                        nt_rules.hang_min_dumps) < 0)
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
                 "more (the furthest %llu)",
                 (unsigned long long)r->last_seq, ahead, seen - 1,
                 (unsigned long long)(r->last_seq + (uint64_t)nt_rules.hang_min_lag),
                 (unsigned long long)c->max_seq);
        cJSON *f = nt_watch_finding_add(findings, "NT-JOB-202", "fail", nt_watch_who_rank(c, i),
                                         verdict, reason);
        if (!f || !cJSON_AddNumberToObject(f, "last_seq", (double)r->last_seq) ||
            !cJSON_AddNumberToObject(f, "max_seq", (double)c->max_seq))
            return -1;
        out->fail++;
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
static int nt_watch_cusum_onset(const double *bw, int n, double *mu0, double *after)
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
    int start = b;
    for (int i = b; i < n; i++) {
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
            return *after <= (1 - nt_rules.onset_min_drop) * m ? start : -1;
        }
    }
    return -1;
}

/* Every series of a communicator's window through nt_watch_cusum_onset: a finding for each drop,
 * a not_judged entry for a series too short for its baseline. */
static int nt_watch_onset_judge(const nt_jobcomm_t *c, cJSON *findings, cJSON *nj,
                                nt_watch_outcome_t *out)
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
        double mu0, after;
        if (n <= nt_rules.onset_baseline) {
            rc = nt_watch_not_judged_add(nj, "watch_onset", c->id,
                                         "%s of %.0f B: %d call(s) with a busbw, more than %d "
                                         "are needed (the first %d set the baseline)",
                                         k0->op, k0->bytes, n, nt_rules.onset_baseline,
                                         nt_rules.onset_baseline);
            continue;
        }
        int at = nt_watch_cusum_onset(bw, n, &mu0, &after);
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

int nt_watch_judge(const nt_jobalign_t *a, unsigned long prom_records, cJSON *findings,
                   cJSON *not_judged, nt_watch_outcome_t *out)
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
    for (size_t i = 0; i < nt_jobalign_ncomms(a); i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        if (nt_watch_straggler_judge(c, findings, not_judged, out) < 0 ||
            nt_watch_hang_judge(c, findings, not_judged, out) < 0 ||
            nt_watch_onset_judge(c, findings, not_judged, out) < 0)
            return -1;
    }
    return 0;
}
