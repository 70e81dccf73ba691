/* The fabric phases' schedule: see fabsched.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/fabsched.h"

/* How the loaded phases share the budget the alone rounds leave, and their round caps: 32 cuts
 * and 32 rings. One of two parallel links slow shows only in the rounds that put two of its
 * flows on it at once, so a pair on it is slowed in a third to a half of its loaded flows, and
 * a node whose pairs rarely met on it may be placed in the wrong group: on the namespace
 * cluster's spine-one-slow (8 nodes, tests/cluster/fabric.sh), 16 cuts and 16 rings gave the
 * leaves in 20 of 24 runs or halves of runs, 32 and 32 in 20 of 20 runs. Past 32 a run learns
 * little more (each node has sent across 32 random cuts). A rail round is repeated on every
 * rail alone, so 4 of them cost 4 * (1 + rails) rounds.
 * max_rounds 0: no cap but the phase's own (all-to-all: its windows, as many as hold
 * NT_FAB_A2A_MAX_FLOWS flows, at least one). A phase that is absent (rails: 1) leaves its share
 * to the others. */
typedef struct nt_fab_share {
    nt_fab_phase_t phase;
    double share;
    int max_rounds;
} nt_fab_share_t;

static const nt_fab_share_t nt_fab_shares[] = {
    {NT_FAB_BISECTION, 0.35, 32},
    {NT_FAB_ALLTOALL, 0.20, 0},
    {NT_FAB_RING, 0.25, 32},
    {NT_FAB_RAIL_ALL, 0.20, 4}, /* rail_one's rounds come with rail_all's, in its share */
};

/* The part of the budget the loaded phases try first; less when the alone rounds of all their
 * pairs do not fit in the rest (then the alone rounds measure a sample). */
static const double nt_fab_loaded_fracs[] = {0.85, 0.7, 0.55};

static const char *const nt_fab_names[NT_FAB_NPHASES] = {
    "alone", "bisection", "alltoall", "ring", "rail_all", "rail_one",
};

const char *nt_fab_phase_name(nt_fab_phase_t phase)
{
    return (unsigned)phase < NT_FAB_NPHASES ? nt_fab_names[phase] : "unknown";
}

uint64_t nt_fab_rng_next(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform integer in [0, n), n >= 1 (Lemire's multiply-shift; the bias is below 2^-40 for
 * the n of a schedule). */
static size_t nt_fab_rand_below(uint64_t *x, size_t n)
{
    return (size_t)(((unsigned __int128)nt_fab_rng_next(x) * n) >> 64);
}

static void nt_fab_shuffle(uint64_t *x, int *v, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = nt_fab_rand_below(x, i);
        int t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

void nt_fab_schedule_destroy(nt_fab_schedule_t *s)
{
    if (!s)
        return;
    free(s->rounds);
    free(s->flows);
    memset(s, 0, sizeof(*s));
}

/* Builder: growable arrays with one allocation error kept. */
typedef struct nt_fab_build {
    nt_fab_schedule_t *s;
    size_t cap_rounds, cap_flows;
    int oom;
} nt_fab_build_t;

static void nt_fab_round_open(nt_fab_build_t *b, nt_fab_phase_t phase, double est_s)
{
    nt_fab_schedule_t *s = b->s;
    if (b->oom)
        return;
    if (s->nrounds == b->cap_rounds) {
        size_t cap = b->cap_rounds ? 2 * b->cap_rounds : 64;
        nt_fab_round_t *r = realloc(s->rounds, cap * sizeof(*r));
        if (!r) {
            b->oom = 1;
            return;
        }
        s->rounds = r;
        b->cap_rounds = cap;
    }
    s->rounds[s->nrounds] = (nt_fab_round_t){.phase = phase, .first = s->nflows, .est_s = est_s};
    s->nrounds++;
    s->phase_rounds[phase]++;
    s->est_s += est_s;
}

static void nt_fab_flow_add(nt_fab_build_t *b, int src, int dst, int rail, size_t bytes)
{
    nt_fab_schedule_t *s = b->s;
    if (b->oom)
        return;
    if (s->nflows == b->cap_flows) {
        size_t cap = b->cap_flows ? 2 * b->cap_flows : 256;
        nt_fab_flow_t *f = realloc(s->flows, cap * sizeof(*f));
        if (!f) {
            b->oom = 1;
            return;
        }
        s->flows = f;
        b->cap_flows = cap;
    }
    s->flows[s->nflows++] = (nt_fab_flow_t){.src = src, .dst = dst, .rail = rail, .bytes = bytes};
    s->rounds[s->nrounds - 1].nflows++;
}

/* Distinct halvings of n nodes (the half of n/2 nodes as a set; with an even n a cut and its
 * mirror are one), and distinct directed single cycles ((n-1)!): huge past a few dozen nodes. */
static double nt_fab_distinct_cuts(int n)
{
    double c = 1;
    int h = n / 2;
    for (int i = 1; i <= h; i++)
        c = c * (n - h + i) / i;
    return n % 2 ? c : c / 2;
}

static double nt_fab_distinct_rings(int n)
{
    double c = 1;
    for (int i = 2; i < n && c < 1e9; i++)
        c *= i;
    return c;
}

/* The cut of perm as a set (bit i: node i is in the first half), mirrored so that node 0 is
 * outside it when n is even (a cut and its mirror are the same cut). Meaningful for n <= 64. */
static uint64_t nt_fab_cut_mask(const int *perm, int n)
{
    uint64_t m = 0, all = n == 64 ? ~0ull : (1ull << n) - 1;
    for (int i = 0; i < n / 2; i++)
        m |= 1ull << perm[i];
    if (n % 2 == 0 && (m & 1))
        m = ~m & all;
    return m;
}

static double nt_fab_loaded_cost(const nt_fab_sched_params_t *p, double load_bytes)
{
    double loaded = p->loaded_flow_s > 0 ? p->loaded_flow_s : 2.0 * p->flow_s;
    return p->overhead_s + loaded * load_bytes / (double)p->bytes;
}

/* A phase without rounds: why, in s->dropped[ph], and in s->min_budget_s the smallest of the
 * loaded phases' budgets (loaded_s: the part of the budget the loaded phases share, share_s
 * this phase's part of it) from which its round of cost_s would fit: cost_s * loaded_s /
 * share_s. nt_fab_schedule_create turns it into a budget. */
static void nt_fab_drop(nt_fab_schedule_t *s, nt_fab_phase_t ph, double cost_s, double share_s,
                        double loaded_s)
{
    double need = share_s > 0 ? cost_s * loaded_s / share_s : INFINITY;
    snprintf(s->dropped[ph], sizeof(s->dropped[ph]),
             "no round of about %.3g s fits its share of the budget (%.3g s)", cost_s, share_s);
    if (!(s->min_budget_s > 0) || need < s->min_budget_s)
        s->min_budget_s = need;
}

/* x rounded up to 3 significant digits (a budget to give that is not short by a rounding). */
static double nt_fab_ceil3(double x)
{
    double m;
    if (!(x > 0) || !isfinite(x))
        return x;
    m = pow(10.0, floor(log10(x)) - 2);
    return ceil(x / m - 1e-9) * m;
}

/* K distinct random cuts (distinct as sets up to 64 nodes; past that a repeat is as likely as
 * winning a lottery and is not looked for). */
static void nt_fab_bisection(nt_fab_build_t *b, const nt_fab_sched_params_t *p, double share_s,
                             double loaded_s, int cap, uint64_t *rng, int *perm)
{
    int n = p->nnodes, h = n / 2, k = 0;
    double cost = nt_fab_loaded_cost(p, (double)p->bytes);
    uint64_t seen[64];
    double want;

    if (cap > 64)
        cap = 64;
    want = fmin((double)cap, fmin(floor(share_s / cost), nt_fab_distinct_cuts(n)));
    if (want < 1) {
        nt_fab_drop(b->s, NT_FAB_BISECTION, cost, share_s, loaded_s);
        return;
    }
    for (int tries = 0; k < (int)want && tries < 64 * cap; tries++) {
        for (int i = 0; i < n; i++)
            perm[i] = i;
        nt_fab_shuffle(rng, perm, (size_t)n);
        if (n <= 64) {
            uint64_t m = nt_fab_cut_mask(perm, n);
            int dup = 0;
            for (int j = 0; j < k && !dup; j++)
                dup = seen[j] == m;
            if (dup)
                continue;
            seen[k] = m;
        }
        nt_fab_round_open(b, NT_FAB_BISECTION, cost);
        for (int i = 0; i < h; i++) {
            nt_fab_flow_add(b, perm[i], perm[h + i], k % p->nrails, p->bytes);
            nt_fab_flow_add(b, perm[h + i], perm[i], k % p->nrails, p->bytes);
        }
        if (n % 2)
            nt_fab_flow_add(b, perm[n - 1], perm[nt_fab_rand_below(rng, (size_t)h)],
                            k % p->nrails, p->bytes);
        k++;
    }
}

/* All-to-all in windows of shifts; a random subset of the windows when not all fit. */
static void nt_fab_alltoall(nt_fab_build_t *b, const nt_fab_sched_params_t *p, double share_s,
                            double loaded_s, uint64_t *rng)
{
    int n = p->nnodes, w = n - 1 < NT_FAB_A2A_WINDOW ? n - 1 : NT_FAB_A2A_WINDOW;
    int nwin = (n - 1 + w - 1) / w, take;
    size_t bytes = p->bytes / (size_t)w;
    int per_rail = (w + p->nrails - 1) / p->nrails;
    double cost;
    int *win;

    if (bytes < NT_FAB_A2A_MIN_BYTES)
        bytes = p->bytes < NT_FAB_A2A_MIN_BYTES ? p->bytes : NT_FAB_A2A_MIN_BYTES;
    cost = nt_fab_loaded_cost(p, (double)per_rail * (double)bytes);
    /* Every ordered pair is N (N - 1) flows: at 4,096 nodes 16.8 million, 400 MB of schedule
     * on every rank and more in the report. Past NT_FAB_A2A_MAX_FLOWS a sample of the windows. */
    take = (int)fmin(fmin((double)nwin, floor(share_s / cost)),
                     fmax(1.0, floor((double)NT_FAB_A2A_MAX_FLOWS / ((double)n * w))));
    if (take < 1) {
        nt_fab_drop(b->s, NT_FAB_ALLTOALL, cost, share_s, loaded_s);
        return;
    }
    if (!(win = malloc((size_t)nwin * sizeof(int)))) {
        b->oom = 1;
        return;
    }
    for (int j = 0; j < nwin; j++)
        win[j] = j;
    if (take < nwin) {
        nt_fab_shuffle(rng, win, (size_t)nwin);
        /* the chosen windows in shift order: easier to read in the report */
        for (int i = 1; i < take; i++)
            for (int j = i; j > 0 && win[j - 1] > win[j]; j--) {
                int t = win[j];
                win[j] = win[j - 1];
                win[j - 1] = t;
            }
    }
    for (int r = 0; r < take; r++) {
        int s0 = 1 + win[r] * w, s1 = s0 + w - 1 < n - 1 ? s0 + w - 1 : n - 1;
        nt_fab_round_open(b, NT_FAB_ALLTOALL, cost);
        for (int i = 0; i < n; i++)
            for (int sh = s0; sh <= s1; sh++)
                nt_fab_flow_add(b, i, (i + sh) % n, sh % p->nrails, bytes);
    }
    free(win);
}

/* A random single cycle into succ (succ[i]: the node i sends to), distinct from the count
 * earlier ones in prev (count * n ints); 0 when none was found in 64 tries. */
static int nt_fab_ring_draw(uint64_t *rng, int n, int *perm, int *succ, const int *prev, int count)
{
    for (int tries = 0; tries < 64; tries++) {
        int dup = 0;
        for (int i = 0; i < n; i++)
            perm[i] = i;
        nt_fab_shuffle(rng, perm, (size_t)n);
        for (int i = 0; i < n; i++)
            succ[perm[i]] = perm[(i + 1) % n];
        for (int j = 0; j < count && !dup; j++)
            dup = memcmp(prev + (size_t)j * n, succ, (size_t)n * sizeof(int)) == 0;
        if (!dup)
            return 1;
    }
    return 0;
}

static void nt_fab_rings(nt_fab_build_t *b, const nt_fab_sched_params_t *p, double share_s,
                         double loaded_s, int cap, uint64_t *rng, int *perm, int *succs)
{
    int n = p->nnodes;
    double cost = nt_fab_loaded_cost(p, (double)p->bytes);
    int want = (int)fmin((double)cap, fmin(floor(share_s / cost), nt_fab_distinct_rings(n)));

    if (want < 1) {
        nt_fab_drop(b->s, NT_FAB_RING, cost, share_s, loaded_s);
        return;
    }
    for (int k = 0; k < want; k++) {
        int *succ = succs + (size_t)k * n;
        if (!nt_fab_ring_draw(rng, n, perm, succ, succs, k))
            break;
        nt_fab_round_open(b, NT_FAB_RING, cost);
        for (int i = 0; i < n; i++)
            nt_fab_flow_add(b, i, succ[i], k % p->nrails, p->bytes);
    }
}

/* J rings on every rail at once (rail_all), then each of them on one rail at a time. */
static void nt_fab_rails(nt_fab_build_t *b, const nt_fab_sched_params_t *p, double share_s,
                         double loaded_s, int cap, uint64_t *rng, int *perm, int *succs)
{
    int n = p->nnodes, j = 0;
    double cost = nt_fab_loaded_cost(p, (double)p->bytes);
    int want = (int)fmin((double)cap, fmin(floor(share_s / (cost * (1 + p->nrails))),
                                           nt_fab_distinct_rings(n)));

    if (want < 1) {
        nt_fab_drop(b->s, NT_FAB_RAIL_ALL, cost * (1 + p->nrails), share_s, loaded_s);
        nt_fab_drop(b->s, NT_FAB_RAIL_ONE, cost * (1 + p->nrails), share_s, loaded_s);
        return;
    }
    for (; j < want; j++) {
        int *succ = succs + (size_t)j * n;
        if (!nt_fab_ring_draw(rng, n, perm, succ, succs, j))
            break;
        nt_fab_round_open(b, NT_FAB_RAIL_ALL, cost);
        for (int i = 0; i < n; i++)
            for (int r = 0; r < p->nrails; r++)
                nt_fab_flow_add(b, i, succ[i], r, p->bytes);
    }
    for (int k = 0; k < j; k++)
        for (int r = 0; r < p->nrails; r++) {
            nt_fab_round_open(b, NT_FAB_RAIL_ONE, cost);
            for (int i = 0; i < n; i++)
                nt_fab_flow_add(b, i, succs[(size_t)k * n + i], r, p->bytes);
        }
}

/* The loaded phases within loaded_s, into s (zeroed). */
static nt_status_t nt_fab_loaded(const nt_fab_sched_params_t *p, double loaded_s,
                                 nt_fab_schedule_t *s)
{
    nt_fab_build_t b = {.s = s};
    uint64_t rng = p->seed;
    double total = 0;
    int n = p->nnodes, maxcap = 0;
    int *perm = malloc((size_t)n * sizeof(int)), *succs;

    for (size_t i = 0; i < sizeof(nt_fab_shares) / sizeof(nt_fab_shares[0]); i++) {
        if (nt_fab_shares[i].phase == NT_FAB_RAIL_ALL && p->nrails < 2)
            continue;
        total += nt_fab_shares[i].share;
        if (nt_fab_shares[i].max_rounds > maxcap)
            maxcap = nt_fab_shares[i].max_rounds;
    }
    succs = malloc((size_t)maxcap * (size_t)n * sizeof(int));
    if (!perm || !succs) {
        free(perm);
        free(succs);
        return NT_ERR_NOMEM;
    }
    for (size_t i = 0; i < sizeof(nt_fab_shares) / sizeof(nt_fab_shares[0]); i++) {
        const nt_fab_share_t *sh = &nt_fab_shares[i];
        double share_s = loaded_s * sh->share / total;
        switch (sh->phase) {
        case NT_FAB_BISECTION:
            nt_fab_bisection(&b, p, share_s, loaded_s, sh->max_rounds, &rng, perm);
            break;
        case NT_FAB_ALLTOALL:
            nt_fab_alltoall(&b, p, share_s, loaded_s, &rng);
            break;
        case NT_FAB_RING:
            nt_fab_rings(&b, p, share_s, loaded_s, sh->max_rounds, &rng, perm, succs);
            break;
        default:
            if (p->nrails < 2) {
                snprintf(s->dropped[NT_FAB_RAIL_ALL], sizeof(s->dropped[0]),
                         "one rail per node");
                snprintf(s->dropped[NT_FAB_RAIL_ONE], sizeof(s->dropped[0]),
                         "one rail per node");
            } else
                nt_fab_rails(&b, p, share_s, loaded_s, sh->max_rounds, &rng, perm, succs);
            break;
        }
    }
    free(perm);
    free(succs);
    return b.oom ? NT_ERR_NOMEM : NT_OK;
}

/* A flow's (src, dst, rail) as one sortable key: 20 bits per node index, 3 for the rail. */
static uint64_t nt_fab_key(const nt_fab_flow_t *f)
{
    return ((uint64_t)f->src << 23) | ((uint64_t)f->dst << 3) | (uint64_t)f->rail;
}

static int nt_fab_key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct keys of s's flows, sorted, into *keys (malloc'd) and *n. */
static nt_status_t nt_fab_distinct(const nt_fab_schedule_t *s, uint64_t **keys, size_t *n)
{
    size_t m = 0;
    uint64_t *k = malloc((s->nflows ? s->nflows : 1) * sizeof(uint64_t));
    if (!k)
        return NT_ERR_NOMEM;
    for (size_t i = 0; i < s->nflows; i++)
        k[i] = nt_fab_key(&s->flows[i]);
    qsort(k, s->nflows, sizeof(uint64_t), nt_fab_key_cmp);
    for (size_t i = 0; i < s->nflows; i++)
        if (m == 0 || k[m - 1] != k[i])
            k[m++] = k[i];
    *keys = k;
    *n = m;
    return NT_OK;
}

static void nt_fab_copy_round(nt_fab_build_t *b, const nt_fab_schedule_t *from, size_t r)
{
    const nt_fab_round_t *lr = &from->rounds[r];
    nt_fab_round_open(b, lr->phase, lr->est_s);
    for (size_t f = 0; f < lr->nflows; f++) {
        const nt_fab_flow_t *fl = &from->flows[lr->first + f];
        nt_fab_flow_add(b, fl->src, fl->dst, fl->rail, fl->bytes);
    }
}

/* The loaded phases' rounds into b, interleaved: each next unit from the phase that has run
 * the smallest part of its own (ties: rails, bisection, ring, all-to-all), so that when the
 * rounds take longer than estimated and the budget ends the run early, every phase has had
 * its part, not the first phases all of theirs and the last none (one host's slow rail makes
 * its alone rounds 4 times the estimate). A rail unit is a rail_all round with its rail_one
 * rounds, one per rail (the same ring; the rail judgement compares them). */
static nt_status_t nt_fab_interleave(const nt_fab_schedule_t *loaded, nt_fab_build_t *b)
{
    static const nt_fab_phase_t order[] = {NT_FAB_RAIL_ALL, NT_FAB_BISECTION, NT_FAB_RING,
                                           NT_FAB_ALLTOALL};
    enum { K = sizeof(order) / sizeof(order[0]) };
    size_t total[K] = {0}, done[K] = {0}, next[K] = {0}, next_one = 0;
    size_t nrails = loaded->phase_rounds[NT_FAB_RAIL_ALL]
                        ? loaded->phase_rounds[NT_FAB_RAIL_ONE] /
                              loaded->phase_rounds[NT_FAB_RAIL_ALL]
                        : 0;

    for (int k = 0; k < K; k++)
        total[k] = loaded->phase_rounds[order[k]];
    for (;;) {
        int best = -1;
        for (int k = 0; k < K; k++)
            if (done[k] < total[k] &&
                (best < 0 || done[k] * total[best] < done[best] * total[k]))
                best = k;
        if (best < 0)
            break;
        while (next[best] < loaded->nrounds && loaded->rounds[next[best]].phase != order[best])
            next[best]++;
        if (next[best] >= loaded->nrounds)
            return NT_ERR_INVALID;
        nt_fab_copy_round(b, loaded, next[best]++);
        if (order[best] == NT_FAB_RAIL_ALL)
            for (size_t r = 0; r < nrails; r++) {
                while (next_one < loaded->nrounds &&
                       loaded->rounds[next_one].phase != NT_FAB_RAIL_ONE)
                    next_one++;
                if (next_one < loaded->nrounds)
                    nt_fab_copy_round(b, loaded, next_one++);
            }
        done[best]++;
    }
    /* rail_one rounds without their rail_all (none are built so): kept, at the end */
    for (; next_one < loaded->nrounds; next_one++)
        if (loaded->rounds[next_one].phase == NT_FAB_RAIL_ONE)
            nt_fab_copy_round(b, loaded, next_one);
    return NT_OK;
}

char *nt_fab_no_round_reason(const nt_fab_schedule_t *s, double budget_left_s, double spent_s,
                             char *buf, size_t len)
{
    int n = budget_left_s > 0
                ? snprintf(buf, len, "the budget left, %.3g s, holds no round: %s", budget_left_s,
                           s->dropped[NT_FAB_BISECTION])
                : snprintf(buf, len, "the budget went on the calibration flow (%.3g s)", spent_s);
    if (s->min_budget_s > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; give at least %.3g s with --fabric-budget",
                 nt_fab_ceil3(s->min_budget_s + (spent_s > 0 ? spent_s : 0)));
    return buf;
}

nt_status_t nt_fab_schedule_create(const nt_fab_sched_params_t *p, nt_fab_schedule_t *out)
{
    nt_fab_schedule_t loaded;
    nt_fab_build_t b = {.s = out};
    uint64_t *keys = NULL, rng;
    size_t nkeys = 0, nalone = 0;
    double alone_cost;
    nt_status_t st;

    memset(out, 0, sizeof(*out));
    if (!p || p->nnodes < 2 || p->nnodes > (1 << 20) || p->nrails < 1 ||
        p->nrails > NT_FAB_MAX_RAILS || !(p->budget_s > 0) || !(p->flow_s > 0) ||
        !(p->overhead_s >= 0) || !(p->loaded_flow_s >= 0) || p->bytes < 1 || !isfinite(p->budget_s) || !isfinite(p->flow_s))
        return NT_ERR_INVALID;
    alone_cost = p->overhead_s + p->flow_s;
    /* The largest share for the loaded phases whose pairs can all be measured alone in the
     * rest; else the smallest, and a sample of the pairs alone. */
    for (size_t f = 0; f < sizeof(nt_fab_loaded_fracs) / sizeof(nt_fab_loaded_fracs[0]); f++) {
        int last = f + 1 == sizeof(nt_fab_loaded_fracs) / sizeof(nt_fab_loaded_fracs[0]);
        memset(&loaded, 0, sizeof(loaded));
        free(keys);
        keys = NULL;
        if ((st = nt_fab_loaded(p, p->budget_s * nt_fab_loaded_fracs[f], &loaded)) != NT_OK ||
            (st = nt_fab_distinct(&loaded, &keys, &nkeys)) != NT_OK)
            goto fail;
        if (loaded.est_s + (double)nkeys * alone_cost <= p->budget_s || last)
            break;
        nt_fab_schedule_destroy(&loaded);
    }
    {
        double room = floor((p->budget_s - loaded.est_s) / alone_cost);
        nalone = room <= 0 ? 0 : room >= (double)nkeys ? nkeys : (size_t)room;
    }
    if (nalone < nkeys) {
        /* A sample: shuffled by the seed (a generator of its own, so the loaded phases do not
         * change with the sample), then in key order. */
        rng = p->seed ^ 0x616c6f6e65ull;
        for (size_t i = nkeys; i > 1; i--) {
            size_t j = nt_fab_rand_below(&rng, i);
            uint64_t t = keys[i - 1];
            keys[i - 1] = keys[j];
            keys[j] = t;
        }
        qsort(keys, nalone, sizeof(uint64_t), nt_fab_key_cmp);
    }
    if (nalone == 0 && nkeys > 0)
        snprintf(out->dropped[NT_FAB_ALONE], sizeof(out->dropped[0]),
                 "no alone round of about %.3g s fits the budget left (%.3g s)", alone_cost,
                 p->budget_s - loaded.est_s);
    for (size_t i = 0; i < nalone; i++) {
        nt_fab_round_open(&b, NT_FAB_ALONE, alone_cost);
        nt_fab_flow_add(&b, (int)(keys[i] >> 23), (int)((keys[i] >> 3) & 0xfffff),
                        (int)(keys[i] & 7), p->bytes);
    }
    if (nt_fab_interleave(&loaded, &b) != NT_OK)
        b.oom = 1;
    out->loaded_pairs = nkeys;
    for (int ph = 1; ph < NT_FAB_NPHASES; ph++)
        memcpy(out->dropped[ph], loaded.dropped[ph], sizeof(out->dropped[ph]));
    /* no round: the loaded phases get at least the last (smallest) part of the budget */
    if (out->nrounds == 0 && loaded.min_budget_s > 0)
        out->min_budget_s = nt_fab_ceil3(
            loaded.min_budget_s /
            nt_fab_loaded_fracs[sizeof(nt_fab_loaded_fracs) / sizeof(nt_fab_loaded_fracs[0]) - 1]);
    nt_fab_schedule_destroy(&loaded);
    free(keys);
    if (b.oom) {
        nt_fab_schedule_destroy(out);
        return NT_ERR_NOMEM;
    }
    return NT_OK;
fail:
    nt_fab_schedule_destroy(&loaded);
    free(keys);
    nt_fab_schedule_destroy(out);
    return st;
}
