/* Synthetic fabric sections (fabric_gen.h). The model: a flow's rate is its host's rail rate
 * shared among the flows at its busiest end (a node sending 7 flows gives each a seventh),
 * then the flows of one round from one leaf to another share that direction's cut (scaled
 * down together when they ask for more), then noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric_gen.h"

nt_fabgen_t nt_fabgen_default(void)
{
    nt_fabgen_t g = {.nodes = 8,
                     .leaves = 2,
                     .rails = 1,
                     .host_GBps = 2.8,
                     .cut_GBps = 0,
                     .slow_rail = -1,
                     .slow_rail_node = -1,
                     .slow_factor = 0.4,
                     .shared_rail = -1,
                     .noise = 0.1,
                     .bisections = 4,
                     .rings = 4,
                     .alltoall = 1,
                     .alone_pairs = 0,
                     .seed = 1};
    return g;
}

/* xorshift32: the same flows for the same seed on every machine */
static double nt_gen_uniform(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return ((*s >> 8) + 0.5) / 16777216.0;
}

static double nt_gen_normal(unsigned *s)
{
    double u = nt_gen_uniform(s), v = nt_gen_uniform(s);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static void nt_gen_perm(int *p, int n, unsigned *s)
{
    for (int i = 0; i < n; i++)
        p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(nt_gen_uniform(s) * (i + 1));
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

typedef struct {
    nt_fab_mflow_t *f;
    size_t n, cap;
    nt_fab_mround_t *r;
    size_t nr, capr;
} nt_gen_buf_t;

static void nt_gen_flow(nt_gen_buf_t *b, int src, int dst, int rail)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 256;
        b->f = realloc(b->f, b->cap * sizeof(*b->f));
    }
    b->f[b->n++] = (nt_fab_mflow_t){src, dst, rail, 0};
}

static int nt_leaf(const nt_fabgen_t *g, int i)
{
    return (int)((long)i * g->leaves / g->nodes);
}

/* Close the round of flows [first, b->n): the model's rates. */
static void nt_gen_round(const nt_fabgen_t *g, nt_gen_buf_t *b, size_t first, nt_fab_phase_t ph,
                         unsigned *s)
{
    size_t n = b->n - first, cells = (size_t)g->nodes * g->rails;
    int *od = calloc(cells, sizeof(int)), *id = calloc(cells, sizeof(int));
    size_t lp = (size_t)g->leaves * g->leaves;
    double *demand = calloc(lp, sizeof(double)), *pdemand = calloc(lp, sizeof(double));
    nt_fab_mflow_t *f = b->f + first;

    for (size_t i = 0; i < n; i++) {
        od[(size_t)f[i].src * g->rails + f[i].rail]++;
        id[(size_t)f[i].dst * g->rails + f[i].rail]++;
    }
    for (size_t i = 0; i < n; i++) {
        int o = od[(size_t)f[i].src * g->rails + f[i].rail];
        int d = id[(size_t)f[i].dst * g->rails + f[i].rail];
        double rate = g->host_GBps / (o > d ? o : d);
        if (f[i].rail == g->slow_rail &&
            (g->slow_rail_node < 0 || f[i].src == g->slow_rail_node ||
             f[i].dst == g->slow_rail_node))
            rate *= g->slow_factor;
        if (ph == NT_FAB_RAIL_ALL && f[i].rail == g->shared_rail)
            rate *= 0.5;
        f[i].bw_GBps = rate;
        if (nt_leaf(g, f[i].src) != nt_leaf(g, f[i].dst)) {
            demand[(size_t)nt_leaf(g, f[i].src) * g->leaves + nt_leaf(g, f[i].dst)] += rate;
            if (f[i].dst % 2 == 0)
                pdemand[(size_t)nt_leaf(g, f[i].src) * g->leaves + nt_leaf(g, f[i].dst)] += rate;
        }
    }
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = (size_t)nt_leaf(g, f[i].src) * g->leaves + nt_leaf(g, f[i].dst);
        if (g->cut_GBps > 0 && nt_leaf(g, f[i].src) != nt_leaf(g, f[i].dst) &&
            demand[k] > g->cut_GBps)
            f[i].bw_GBps *= g->cut_GBps / demand[k];
        if (g->parallel_GBps > 0 && nt_leaf(g, f[i].src) != nt_leaf(g, f[i].dst) &&
            f[i].dst % 2 == 0 && pdemand[k] > g->parallel_GBps)
            f[i].bw_GBps *= g->parallel_GBps / pdemand[k];
        total += f[i].bw_GBps;
    }
    for (size_t i = 0; i < n; i++) {
        if (g->total_GBps > 0 && total > g->total_GBps)
            f[i].bw_GBps *= g->total_GBps / total;
        f[i].bw_GBps *= exp(g->noise * nt_gen_normal(s));
    }
    if (b->nr == b->capr) {
        b->capr = b->capr ? 2 * b->capr : 32;
        b->r = realloc(b->r, b->capr * sizeof(*b->r));
    }
    b->r[b->nr++] = (nt_fab_mround_t){ph, first, n};
    free(od);
    free(id);
    free(demand);
    free(pdemand);
}

int nt_fabgen_input(const nt_fabgen_t *g, nt_fab_input_t *in)
{
    nt_gen_buf_t b = {0};
    unsigned s = g->seed * 2654435761u + 1;
    int *p = malloc((size_t)g->nodes * sizeof(int)), n = g->nodes;

    for (int r = 0; r < g->rails; r++) {
        if (g->alone_pairs <= 0) {
            for (int a = 0; a < n; a++)
                for (int c = 0; c < n; c++)
                    if (a != c) {
                        size_t first = b.n;
                        nt_gen_flow(&b, a, c, r);
                        nt_gen_round(g, &b, first, NT_FAB_ALONE, &s);
                    }
        }
    }
    for (int k = 0; k < g->bisections; k++) {
        size_t first = b.n;
        nt_gen_perm(p, n, &s);
        for (int i = 0; i < n / 2; i++) {
            nt_gen_flow(&b, p[i], p[i + n / 2], 0);
            nt_gen_flow(&b, p[i + n / 2], p[i], 0);
        }
        nt_gen_round(g, &b, first, NT_FAB_BISECTION, &s);
    }
    for (int k = 0; k < g->rings; k++) {
        size_t first = b.n;
        nt_gen_perm(p, n, &s);
        for (int i = 0; i < n; i++)
            nt_gen_flow(&b, p[i], p[(i + 1) % n], 0);
        nt_gen_round(g, &b, first, NT_FAB_RING, &s);
    }
    if (g->alltoall) {
        size_t first = b.n;
        for (int a = 0; a < n; a++)
            for (int c = 0; c < n; c++)
                if (a != c)
                    nt_gen_flow(&b, a, c, 0);
        nt_gen_round(g, &b, first, NT_FAB_ALLTOALL, &s);
    }
    if (g->alone_pairs > 0) {
        /* the sampled pairs alone: those the loaded rounds measured first */
        size_t nloaded = b.n;
        for (int k = 0; k < g->alone_pairs && nloaded; k++) {
            size_t i = (size_t)(nt_gen_uniform(&s) * nloaded), first = b.n;
            nt_gen_flow(&b, b.f[i].src, b.f[i].dst, 0);
            nt_gen_round(g, &b, first, NT_FAB_ALONE, &s);
        }
    }
    if (g->rails > 1) {
        for (int k = 0; k < 2; k++) {
            size_t first = b.n;
            nt_gen_perm(p, n, &s);
            for (int r = 0; r < g->rails; r++)
                for (int i = 0; i < n; i++)
                    nt_gen_flow(&b, p[i], p[(i + 1) % n], r);
            nt_gen_round(g, &b, first, NT_FAB_RAIL_ALL, &s);
            for (int r = 0; r < g->rails; r++) {
                first = b.n;
                for (int i = 0; i < n; i++)
                    nt_gen_flow(&b, p[i], p[(i + 1) % n], r);
                nt_gen_round(g, &b, first, NT_FAB_RAIL_ONE, &s);
            }
        }
    }
    free(p);
    *in = (nt_fab_input_t){g->nodes, g->rails, b.f, b.n, b.r, b.nr};
    return 0;
}

void nt_fabgen_input_free(nt_fab_input_t *in)
{
    free((void *)in->flows);
    free((void *)in->rounds);
    memset(in, 0, sizeof(*in));
}

cJSON *nt_fabgen_doc(const nt_fabgen_t *g)
{
    static const char *const names[NT_FAB_NPHASES] = {"alone", "bisection", "alltoall",
                                                      "ring",  "rail_all",  "rail_one"};
    nt_fab_input_t in;
    cJSON *fab = cJSON_CreateObject(), *nodes, *phases, *ph = NULL;
    int last = -1;

    nt_fabgen_input(g, &in);
    cJSON_AddStringToObject(fab, "status", "ran");
    cJSON_AddStringToObject(fab, "transport", "tcp");
    cJSON_AddNumberToObject(fab, "budget_s", 60);
    cJSON_AddNumberToObject(fab, "elapsed_s", 12.5);
    cJSON_AddNumberToObject(fab, "bytes_per_flow", 16777216);
    cJSON_AddNumberToObject(fab, "seed", g->seed);
    nodes = cJSON_AddArrayToObject(fab, "nodes");
    for (int i = 0; i < g->nodes; i++) {
        char h[16];
        snprintf(h, sizeof(h), "h%d", i + 1);
        cJSON_AddItemToArray(nodes, cJSON_CreateString(h));
    }
    cJSON_AddNumberToObject(fab, "rails", g->rails);
    phases = cJSON_AddArrayToObject(fab, "phases");
    for (size_t r = 0; r < in.nrounds; r++) {
        cJSON *rd, *flows;
        if ((int)in.rounds[r].phase != last) {
            ph = cJSON_CreateObject();
            cJSON_AddStringToObject(ph, "phase", names[in.rounds[r].phase]);
            cJSON_AddArrayToObject(ph, "rounds");
            cJSON_AddItemToArray(phases, ph);
            last = (int)in.rounds[r].phase;
        }
        rd = cJSON_CreateObject();
        flows = cJSON_AddArrayToObject(rd, "flows");
        for (size_t i = 0; i < in.rounds[r].n; i++) {
            const nt_fab_mflow_t *f = &in.flows[in.rounds[r].first + i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "src", f->src);
            cJSON_AddNumberToObject(o, "dst", f->dst);
            cJSON_AddNumberToObject(o, "rail", f->rail);
            cJSON_AddNumberToObject(o, "bytes", 16777216);
            cJSON_AddNumberToObject(o, "time_us", 16777216 / (f->bw_GBps * 1e3));
            cJSON_AddNumberToObject(o, "bw_GBps", f->bw_GBps);
            cJSON_AddTrueToObject(o, "ok");
            cJSON_AddItemToArray(flows, o);
        }
        cJSON_AddItemToArray(cJSON_GetObjectItem(ph, "rounds"), rd);
    }
    nt_fabgen_input_free(&in);
    return fab;
}
