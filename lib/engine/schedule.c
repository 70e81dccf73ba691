/* Round-robin (circle method) pair schedules; see schedule.h. */
#include <stdlib.h>
#include <string.h>

#include "nettune/schedule.h"

void nt_schedule_destroy(nt_schedule_t *s)
{
    if (!s)
        return;
    for (size_t r = 0; r < s->nrounds; r++)
        free(s->rounds[r].pairs);
    free(s->rounds);
    memset(s, 0, sizeof(*s));
}

static nt_status_t nt_round_add(nt_round_t *r, int a, int b)
{
    nt_pair_t *np = realloc(r->pairs, (r->npairs + 1) * sizeof(*np));
    if (!np)
        return NT_ERR_NOMEM;
    r->pairs = np;
    /* The lower node index initiates: link ids then read in hostname order, run after run. */
    r->pairs[r->npairs].a = a < b ? a : b;
    r->pairs[r->npairs].b = a < b ? b : a;
    r->npairs++;
    return NT_OK;
}

static nt_status_t nt_schedule_add_round(nt_schedule_t *s)
{
    nt_round_t *nr = realloc(s->rounds, (s->nrounds + 1) * sizeof(*nr));
    if (!nr)
        return NT_ERR_NOMEM;
    s->rounds = nr;
    memset(&s->rounds[s->nrounds], 0, sizeof(nt_round_t));
    s->nrounds++;
    return NT_OK;
}

/* Circle method: node m-1 (m = n rounded up to even) stays, the others rotate. Round r pairs
 * (r, m-1) and ((r+k) mod (m-1), (r-k) mod (m-1)) for k = 1..m/2-1. With odd n the fixed node
 * is a dummy and its partner sits the round out. Every pair exactly once, pairs disjoint. */
static nt_status_t nt_schedule_full(int n, nt_schedule_t *s)
{
    int m = n + (n & 1), rounds = m - 1;

    for (int r = 0; r < rounds; r++) {
        nt_round_t *rd;
        if (nt_schedule_add_round(s) != NT_OK)
            return NT_ERR_NOMEM;
        rd = &s->rounds[s->nrounds - 1];
        if (m - 1 < n && nt_round_add(rd, r, m - 1) != NT_OK)
            return NT_ERR_NOMEM;
        for (int k = 1; k < m / 2; k++) {
            int a = (r + k) % (m - 1), b = (r - k + (m - 1)) % (m - 1);
            if (nt_round_add(rd, a, b) != NT_OK)
                return NT_ERR_NOMEM;
        }
    }
    return NT_OK;
}

/* Greedy edge colouring of a pair list into rounds of disjoint pairs, starting at round
 * `first`. A ring (every node degree 2) needs at most 3 rounds this way. */
static nt_status_t nt_schedule_color(int n, const nt_pair_t *pairs, size_t np, size_t first,
                                     nt_schedule_t *s)
{
    unsigned char *busy = NULL;
    size_t nrounds_here = 0;

    for (size_t i = 0; i < np; i++) {
        size_t r;
        for (r = 0; r < nrounds_here; r++)
            if (!busy[r * (size_t)n + (size_t)pairs[i].a] &&
                !busy[r * (size_t)n + (size_t)pairs[i].b])
                break;
        if (r == nrounds_here) {
            unsigned char *nb = realloc(busy, (nrounds_here + 1) * (size_t)n);
            if (!nb || nt_schedule_add_round(s) != NT_OK) {
                free(nb ? nb : busy);
                return NT_ERR_NOMEM;
            }
            busy = nb;
            memset(busy + nrounds_here * (size_t)n, 0, (size_t)n);
            nrounds_here++;
        }
        busy[r * (size_t)n + (size_t)pairs[i].a] = busy[r * (size_t)n + (size_t)pairs[i].b] = 1;
        if (nt_round_add(&s->rounds[first + r], pairs[i].a, pairs[i].b) != NT_OK) {
            free(busy);
            return NT_ERR_NOMEM;
        }
    }
    free(busy);
    return NT_OK;
}

static int nt_pair_seen(const nt_pair_t *p, size_t np, int a, int b)
{
    for (size_t i = 0; i < np; i++)
        if ((p[i].a == a && p[i].b == b) || (p[i].a == b && p[i].b == a))
            return 1;
    return 0;
}

/* --quick: ring neighbours (i, i+1), then the shifted ring (i, i+n/2), each coloured into at
 * most 3 rounds: a constant 1..6 rounds whatever n. Duplicates (small n) are dropped. */
static nt_status_t nt_schedule_quick(int n, nt_schedule_t *s)
{
    nt_pair_t *ring = calloc((size_t)n, sizeof(*ring)), *shift = calloc((size_t)n, sizeof(*shift));
    size_t nring = 0, nshift = 0;
    nt_status_t st = NT_ERR_NOMEM;

    if (!ring || !shift)
        goto out;
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        if (i != j && (n > 8 || !nt_pair_seen(ring, nring, i, j)))
            ring[nring++] = (nt_pair_t){i, j};
    }
    /* Shifted ring: for even n the n/2 pairs (i, i+n/2) are a perfect matching already. */
    for (int i = 0; i < (n % 2 ? n : n / 2) && n > 3; i++) {
        int j = (i + n / 2) % n;
        /* Duplicates only arise for tiny n; the check is quadratic, so skip it beyond. */
        if (i != j &&
            (n > 8 || (!nt_pair_seen(ring, nring, i, j) && !nt_pair_seen(shift, nshift, i, j))))
            shift[nshift++] = (nt_pair_t){i, j};
    }
    st = nt_schedule_color(n, ring, nring, 0, s);
    if (st == NT_OK)
        st = nt_schedule_color(n, shift, nshift, s->nrounds, s);
out:
    free(ring);
    free(shift);
    return st;
}

nt_status_t nt_schedule_create(int nnodes, nt_schedule_mode_t mode, nt_schedule_t *out)
{
    nt_status_t st;

    memset(out, 0, sizeof(*out));
    if (nnodes < 1 || nnodes > (1 << 20))
        return NT_ERR_INVALID;
    if (nnodes == 1)
        return NT_OK;
    /* --quick never costs more rounds than --full: up to 7 nodes, where every pair fits in as
     * few rounds as the ring and its shift, --quick tests every pair. */
    if (mode == NT_SCHED_QUICK && nnodes + (nnodes & 1) - 1 <= (nnodes & 1 ? 6 : 3))
        mode = NT_SCHED_FULL;
    st = mode == NT_SCHED_FULL ? nt_schedule_full(nnodes, out) : nt_schedule_quick(nnodes, out);
    if (st != NT_OK) {
        nt_schedule_destroy(out);
        return st;
    }
    for (size_t r = 0; r < out->nrounds; r++)
        out->npairs += out->rounds[r].npairs;
    return NT_OK;
}
