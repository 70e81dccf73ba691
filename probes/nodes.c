/* Node identification and the steps of a run (pure: tested with cmocka). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

void nt_nodes_free(nt_node_t *nodes, int nnodes)
{
    if (!nodes)
        return;
    for (int i = 0; i < nnodes; i++)
        free(nodes[i].ranks);
    free(nodes);
}

int nt_fake_nodes_parse(const char *text, int size, char *why, size_t whylen)
{
    char *end;
    long long v;

    why[0] = '\0';
    errno = 0;
    v = strtoll(text, &end, 10);
    if (end == text || *end || v < 1) {
        snprintf(why, whylen, "ignoring NETTUNE_FAKE_NODES='%s': give a count >= 1", text);
        return 0;
    }
    /* a count above the ranks is one rank per node (nt_nodes_build): one beyond an int is that
     * too, said with the limit */
    if (errno == ERANGE || v > INT_MAX) {
        snprintf(why, whylen,
                 "NETTUNE_FAKE_NODES='%s' is too large: at most %d here, one fake node per rank "
                 "of this run; using %d",
                 text, size, size);
        return size;
    }
    return (int)v;
}

static int nt_node_cmp(const void *a, const void *b)
{
    const nt_node_t *x = a, *y = b;
    int c = strverscmp(x->host, y->host);
    return c ? c : x->ranks[0] - y->ranks[0];
}

nt_status_t nt_nodes_build(int size, const char *hosts, const int *leaders, int fake_nodes,
                           nt_node_t **out, int *nout)
{
    nt_node_t *nodes = calloc((size_t)size, sizeof(*nodes));
    int n = 0;

    *out = NULL;
    *nout = 0;
    if (size < 1 || !nodes) {
        free(nodes);
        return size < 1 ? NT_ERR_INVALID : NT_ERR_NOMEM;
    }
    if (fake_nodes > size)
        fake_nodes = size;
    for (int r = 0; r < size; r++) {
        char name[NT_HOST_MAX];
        int key, i;
        if (fake_nodes > 0) {
            /* Rank r goes to fake node floor(r * N / size): contiguous, balanced groups. */
            int k = (int)((long long)r * fake_nodes / size);
            snprintf(name, sizeof(name), "fake%d", k);
            key = k;
        } else {
            /* within the slot: a peer's name need not end in a NUL */
            snprintf(name, sizeof(name), "%.*s", NT_HOST_MAX - 1, hosts + (size_t)r * NT_HOST_MAX);
            key = leaders ? leaders[r] : 0;
        }
        for (i = 0; i < n; i++)
            if (strcmp(nodes[i].host, name) == 0 &&
                (fake_nodes > 0 || !leaders || leaders[nodes[i].ranks[0]] == key))
                break;
        if (i == n) {
            snprintf(nodes[n].host, sizeof(nodes[n].host), "%s", name);
            nodes[n].ranks = calloc((size_t)size, sizeof(int));
            if (!nodes[n].ranks) {
                nt_nodes_free(nodes, n);
                return NT_ERR_NOMEM;
            }
            n++;
        }
        nodes[i].ranks[nodes[i].nranks++] = r;
    }
    /* Two shared-memory domains with one host name (containers) stay apart: name them. */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(nodes[i].host, nodes[j].host) == 0) {
                size_t len = strlen(nodes[j].host);
                snprintf(nodes[j].host + (len > NT_HOST_MAX - 12 ? NT_HOST_MAX - 12 : len), 12,
                         "#%d", nodes[j].ranks[0]);
            }
    qsort(nodes, (size_t)n, sizeof(*nodes), nt_node_cmp);
    *out = nodes;
    *nout = n;
    return NT_OK;
}

void nt_nodes_leaders(int size, const char *hosts, const char *boots, size_t bootlen, int *leaders)
{
    for (int r = 0; r < size; r++) {
        const char *h = hosts + (size_t)r * NT_HOST_MAX, *b = boots + (size_t)r * bootlen;
        leaders[r] = r;
        for (int q = 0; q < r; q++)
            if (strncmp(hosts + (size_t)q * NT_HOST_MAX, h, NT_HOST_MAX) == 0 &&
                strncmp(boots + (size_t)q * bootlen, b, bootlen) == 0) {
                leaders[r] = leaders[q];
                break;
            }
    }
}

void nt_steps_free(nt_step_t *steps, int nsteps)
{
    if (!steps)
        return;
    for (int i = 0; i < nsteps; i++) {
        free(steps[i].pairs);
        free(steps[i].scopes);
    }
    free(steps);
}

typedef struct nt_steps_buf {
    nt_step_t *v;
    int n, cap;
} nt_steps_buf_t;

static nt_step_t *nt_steps_new(nt_steps_buf_t *b)
{
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        nt_step_t *nv = realloc(b->v, (size_t)cap * sizeof(*nv));
        if (!nv)
            return NULL;
        b->v = nv;
        b->cap = cap;
    }
    memset(&b->v[b->n], 0, sizeof(nt_step_t));
    return &b->v[b->n++];
}

static int nt_step_add(nt_step_t *s, int a, int b, nt_scope_t scope)
{
    int(*np)[2] = realloc(s->pairs, (size_t)(s->npairs + 1) * sizeof(*np));
    nt_scope_t *ns;
    if (!np)
        return -1;
    s->pairs = np;
    ns = realloc(s->scopes, (size_t)(s->npairs + 1) * sizeof(*ns));
    if (!ns)
        return -1;
    s->scopes = ns;
    s->pairs[s->npairs][0] = a;
    s->pairs[s->npairs][1] = b;
    s->scopes[s->npairs] = scope;
    s->npairs++;
    return 0;
}

/* Add pair (a,b) either to the current round's step (concurrent) or as a step of its own. */
static int nt_steps_put(nt_steps_buf_t *b, nt_step_t **cur, int concurrent, int ra, int rb,
                        nt_scope_t scope, int round)
{
    if (!concurrent || !*cur) {
        *cur = nt_steps_new(b);
        if (!*cur)
            return -1;
        (*cur)->round = round;
    }
    return nt_step_add(*cur, ra, rb, scope);
}

int nt_steps_rounds(const nt_step_t *steps, int nsteps)
{
    int n = 0, last = -1;
    for (int i = 0; i < nsteps; i++) {
        if (steps[i].local || steps[i].round == last)
            continue;
        last = steps[i].round;
        n++;
    }
    return n;
}

nt_status_t nt_steps_build(const nt_node_t *nodes, int nnodes, nt_schedule_mode_t mode,
                           int concurrent, nt_step_t **steps, int *nsteps)
{
    nt_steps_buf_t b = {0};
    nt_schedule_t sched;
    nt_step_t *cur = NULL;
    int maxlocal = 0;
    size_t sched_rounds = 0;

    *steps = NULL;
    *nsteps = 0;
    if (nt_schedule_create(nnodes, mode, &sched) != NT_OK)
        return NT_ERR_NOMEM;
    /* Inter-node: per round, local rank i of node a with local rank i of node b. */
    for (size_t r = 0; r < sched.nrounds; r++) {
        cur = NULL;
        for (size_t k = 0; k < sched.rounds[r].npairs; k++) {
            const nt_node_t *na = &nodes[sched.rounds[r].pairs[k].a];
            const nt_node_t *nb = &nodes[sched.rounds[r].pairs[k].b];
            int lanes = na->nranks < nb->nranks ? na->nranks : nb->nranks;
            for (int i = 0; i < lanes; i++)
                if (nt_steps_put(&b, &cur, concurrent, na->ranks[i], nb->ranks[i], NT_SCOPE_INTER,
                                 (int)r))
                    goto nomem;
        }
    }
    /* Uneven ranks per node: the local ranks beyond the smaller node's count get a partner too
     * (local rank i with the smaller node's local rank i mod its count), one pair per step
     * after the rounds, since their partner is already busy in the round itself. */
    for (size_t r = 0; r < sched.nrounds; r++) {
        for (size_t k = 0; k < sched.rounds[r].npairs; k++) {
            const nt_node_t *na = &nodes[sched.rounds[r].pairs[k].a];
            const nt_node_t *nb = &nodes[sched.rounds[r].pairs[k].b];
            const nt_node_t *big = na->nranks >= nb->nranks ? na : nb;
            const nt_node_t *small = big == na ? nb : na;
            for (int i = small->nranks; i < big->nranks; i++) {
                int rb = big->ranks[i], rs = small->ranks[i % small->nranks];
                cur = NULL;
                /* The node first in the schedule pair initiates, as in the rounds. */
                if (nt_steps_put(&b, &cur, 0, big == na ? rb : rs, big == na ? rs : rb,
                                 NT_SCOPE_INTER, (int)r))
                    goto nomem;
            }
        }
    }
    sched_rounds = sched.nrounds;
    nt_schedule_destroy(&sched);
    /* Intra-node: the ranks of each node paired with each other by the same schedule; round r
     * of every node runs in one step when concurrent. */
    for (int n = 0; n < nnodes; n++)
        if (nodes[n].nranks > maxlocal)
            maxlocal = nodes[n].nranks;
    if (maxlocal > 1) {
        nt_schedule_t *ls = calloc((size_t)nnodes, sizeof(*ls));
        size_t maxr = 0;
        int oom = 0;
        if (!ls)
            goto nomem;
        for (int n = 0; n < nnodes; n++) {
            if (nt_schedule_create(nodes[n].nranks, mode, &ls[n]) != NT_OK) {
                for (int m = 0; m < n; m++)
                    nt_schedule_destroy(&ls[m]);
                free(ls);
                goto nomem;
            }
            if (ls[n].nrounds > maxr)
                maxr = ls[n].nrounds;
        }
        for (size_t r = 0; r < maxr; r++) {
            cur = NULL;
            for (int n = 0; n < nnodes; n++) {
                if (r >= ls[n].nrounds)
                    continue;
                for (size_t k = 0; k < ls[n].rounds[r].npairs && !oom; k++)
                    oom = nt_steps_put(&b, &cur, concurrent,
                                       nodes[n].ranks[ls[n].rounds[r].pairs[k].a],
                                       nodes[n].ranks[ls[n].rounds[r].pairs[k].b], NT_SCOPE_INTRA,
                                       (int)(sched_rounds + r));
            }
        }
        for (int n = 0; n < nnodes; n++)
            nt_schedule_destroy(&ls[n]);
        free(ls);
        if (oom)
            goto nomem;
    }
    /* Local tests (loopbacks) on every node's first rank. */
    cur = NULL;
    for (int n = 0; n < nnodes; n++) {
        if (nt_steps_put(&b, &cur, concurrent, nodes[n].ranks[0], -1, NT_SCOPE_INTRA, -1))
            goto nomem;
        cur->local = 1;
    }
    *steps = b.v;
    *nsteps = b.n;
    return NT_OK;
nomem:
    nt_schedule_destroy(&sched);
    nt_steps_free(b.v, b.n);
    return NT_ERR_NOMEM;
}

int nt_machine_ranks(int size, const char *keys, size_t keylen, int rank)
{
    int n = 0;
    const char *mine = keys + (size_t)rank * keylen;
    if (rank < 0 || rank >= size)
        return 0;
    for (int r = 0; r < size; r++)
        if (strncmp(keys + (size_t)r * keylen, mine, keylen) == 0)
            n++;
    return n;
}
