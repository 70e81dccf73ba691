/* Fitting the facts NCCL did not print from the cells of its own table, and checking the model
 * against every other cell (tuner/print_model.h nt_model_fit_table).
 *
 * Method. Each fact labelled "assumed" gets a candidate list, the given value first: per graph
 * (Tree, Ring, CollNetDirect, CollNetChain, NVLS) nChannels x bw (NCCL's search speeds,
 * v2.28.9-1 src/graph/search.cc:976-987 and v2.14.3-1 search.cc:729-730; bwInter = bwIntra) x
 * typeIntra {NVL, NVB, PHB} x typeInter {PIX, PXN, NET} x pattern (Tree: balanced / TREE) or
 * sameChannels (Ring); for the communicator SM {the given, 60, 70, 80, 90, 100} and, across
 * nodes, CPU vendor {Intel, AMD}. NCCL's printed cells are then taken in a fixed order
 * (bandwidths before latencies, Simple first, AllReduce first): a cell that rules out candidates
 * is a FITTED cell; a cell on which every remaining candidate agrees with NCCL is VERIFIED; a
 * cell no remaining candidate reproduces is a MISMATCH (and rules nothing out). Each cell is
 * compared to NCCL's %.1f print within 0.05 (NT_MODEL_TOL_*). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_versions.h"
#include "print_model.h"

static const double bw_list[] = {96, 90, 80, 70, 60, 50, 48,  45.1, 45,   44,  42, 40,
                                 30, 28, 24, 22, 20, 19, 18,  17.5, 15,   12,  11, 10,
                                 9,  7,  6,  5,  4,  3,  2.4, 1.2,  0.24, 0.12};
#define N_BW ((int)(sizeof(bw_list) / sizeof(bw_list[0])))
static const int nch_list[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                               12, 13, 14, 15, 16, 18, 20, 24, 28, 32};
#define N_NCH ((int)(sizeof(nch_list) / sizeof(nch_list[0])))
static const nt_path_t intra_list[] = {NT_PATH_NVL, NT_PATH_NVB, NT_PATH_PHB};
static const nt_path_t inter_list[] = {NT_PATH_PIX, NT_PATH_PXN, NT_PATH_NET};
static const int sm_list[] = {60, 70, 80, 90, 100};
#define N_GRAPHS 5 /* the graphs NCCL builds: Tree, Ring, CollNetDirect, CollNetChain, NVLS */

/* Which graph an algorithm's cells come from (v2.28.9-1 src/init.cc:854; 2.14 tuning.cc:109). */
static int nt_graph_index(int family, int a)
{
    static const int g227[NT_NUM_ALGOS] = {0, 1, 2, 3, 4, 4, 0};
    static const int g214[NT_NUM_ALGOS] = {0, 1, 2, 2, 4, 4, 0};
    return family == NT_FAMILY_214 ? g214[a] : g227[a];
}

/* One fact dimension of a graph candidate: values and how many. */
typedef struct dim {
    int n;
    int fact; /* nt_graph_fact_t it sets (-1 none) */
} dim_t;

typedef struct gspace {
    int enumerate;                    /* any fact of the graph is assumed */
    int n_nch, n_bw, n_ti, n_te, n_x; /* 1 when the fact is given */
    int ncand;
    unsigned char *alive; /* [k * ncand + c] */
} gspace_t;

typedef struct comm_cand {
    int sm;
    nt_cpu_vendor_t vendor;
} comm_cand_t;

static int nt_first_value_nch(const nt_model_graph_t *g, int i)
{
    return i == 0 ? g->nchannels : nch_list[i - 1];
}
static double nt_first_value_bw(const nt_model_graph_t *g, int i)
{
    return i == 0 ? g->bw_intra_GBps : bw_list[i - 1];
}

/* Apply candidate C of graph space S to graph G (value index 0 = the given value). */
static void nt_apply_cand(const gspace_t *s, int gi, int c, nt_model_graph_t *g)
{
    int i_x = c % s->n_x;
    c /= s->n_x;
    int i_te = c % s->n_te;
    c /= s->n_te;
    int i_ti = c % s->n_ti;
    c /= s->n_ti;
    int i_bw = c % s->n_bw;
    c /= s->n_bw;
    int i_nch = c;
    nt_model_graph_t orig = *g;
    if (s->n_nch > 1)
        g->nchannels = nt_first_value_nch(&orig, i_nch);
    if (s->n_bw > 1) {
        double bw = nt_first_value_bw(&orig, i_bw);
        g->bw_intra_GBps = bw;
        if (orig.label[NT_GF_BW_INTER] == NT_FACT_ASSUMED)
            g->bw_inter_GBps = i_bw == 0 ? orig.bw_inter_GBps : bw;
    }
    if (s->n_ti > 1)
        g->type_intra = i_ti == 0 ? orig.type_intra : intra_list[i_ti - 1];
    if (s->n_te > 1)
        g->type_inter = i_te == 0 ? orig.type_inter : inter_list[i_te - 1];
    if (s->n_x > 1) {
        if (gi == NT_ALGO_TREE)
            g->pattern = i_x == 0 ? orig.pattern : (i_x == 1 ? 1 : 3);
        else
            g->same_channels = i_x == 0 ? orig.same_channels : (i_x == 1 ? 1 : 0);
    }
}

static int nt_cell_matches(const nt_model_cell_t *m, float lat, float bw)
{
    return fabs(m->lat_us - lat) <= NT_MODEL_TOL_LAT_US &&
           fabs(m->bw_GBps - bw) <= NT_MODEL_TOL_BW_GBPS;
}

/* The fixed order of cells: bandwidth-rich first (Simple, LL, LL128), AllReduce first. */
typedef struct cellref {
    int c, a, p;
} cellref_t;

static int nt_order_cells(const nt_nccl_table_t *nccl, int nalgos, cellref_t *out)
{
    static const int protos[3] = {NT_PROTO_SIMPLE, NT_PROTO_LL, NT_PROTO_LL128};
    static const int colls[5] = {NT_COLL_ALLREDUCE, NT_COLL_ALLGATHER, NT_COLL_REDUCESCATTER,
                                 NT_COLL_BROADCAST, NT_COLL_REDUCE};
    int n = 0;
    for (int pass = 0; pass < 2; pass++) /* cells with bandwidth > 0 first */
        for (int pi = 0; pi < 3; pi++)
            for (int ci = 0; ci < 5; ci++)
                for (int a = 0; a < nalgos; a++) {
                    int c = colls[ci], p = protos[pi];
                    if (!nccl->has[c][a][p])
                        continue;
                    int rich = nccl->bw_GBps[c][a][p] > 0;
                    if ((pass == 0) != rich)
                        continue;
                    out[n++] = (cellref_t){c, a, p};
                }
    return n;
}

nt_status_t nt_model_fit_table(nt_model_input_t *in, const nt_nccl_table_t *nccl,
                               const nt_model_env_filter_t *env, nt_model_table_t *table,
                               nt_model_fit_t *fit)
{
    if (!in || !nccl || !fit)
        return NT_ERR_INVALID;
    memset(fit, 0, sizeof(*fit));
    fit->max_coll = fit->max_algo = fit->max_proto = -1;
    if (!in->version && nccl->version)
        in->version = nccl->version;
    const nt_model_version_t *v = nt_model_version_find(in->version);
    if (!v) {
        snprintf(fit->verdict, sizeof(fit->verdict), "not verified: version not modelled");
        return NT_OK;
    }
    fit->modelled = 1;
    /* the layout says which releases printed the table (v2.14.3-1 tuning.cc:224-249 rows,
     * v2.28.9-1 tuning.cc:499-539 blocks of 3 over NCCL_NUM_ALGORITHMS): a version outside
     * that range is the wrong one, and nothing is verified against it */
    int lo = 0, hi = 99999;
    if (nccl->layout == NT_NCCL_TABLE_ROWS) {
        lo = nccl->ncols <= 9 ? 20600 : nccl->ncols <= 12 ? 21400 : 21700;
        hi = nccl->ncols <= 9 ? 21399 : nccl->ncols <= 12 ? 21699 : 21799;
    } else if (nccl->layout == NT_NCCL_TABLE_BLOCKS) {
        lo = nccl->nblocks >= 3 ? 22300 : 21800;
    }
    if (in->version < lo || in->version > hi) {
        fit->modelled = 0;
        char range[32];
        if (hi == 99999)
            snprintf(range, sizeof(range), "%d.%d and later", lo / 10000, lo / 100 % 100);
        else if (lo / 100 == hi / 100)
            snprintf(range, sizeof(range), "%d.%d", lo / 10000, lo / 100 % 100);
        else
            snprintf(range, sizeof(range), "%d.%d-%d.%d", lo / 10000, lo / 100 % 100, hi / 10000,
                     hi / 100 % 100);
        snprintf(fit->verdict, sizeof(fit->verdict),
                 "not verified: this table layout is printed by NCCL %s, not %d.%d.%d", range,
                 in->version / 10000, in->version / 100 % 100, in->version % 100);
        return NT_OK;
    }

    /* communicator candidates */
    comm_cand_t comms[16];
    int ncomm = 0;
    int sm_assumed = in->label[NT_CF_SM] == NT_FACT_ASSUMED;
    int cpu_assumed = in->label[NT_CF_CPU] == NT_FACT_ASSUMED && in->nnodes > 1;
    int nsm = sm_assumed ? 1 + (int)(sizeof(sm_list) / sizeof(sm_list[0])) : 1;
    int nven = cpu_assumed ? 2 : 1;
    for (int i = 0; i < nsm; i++)
        for (int j = 0; j < nven; j++) {
            comms[ncomm].sm = i == 0 ? in->min_sm : sm_list[i - 1];
            comms[ncomm].vendor = j == 0
                                      ? in->cpu_vendor
                                      : (in->cpu_vendor == NT_CPU_VENDOR_AMD ? NT_CPU_VENDOR_INTEL
                                                                             : NT_CPU_VENDOR_AMD);
            ncomm++;
        }

    /* graph candidate spaces */
    gspace_t gs[N_GRAPHS];
    memset(gs, 0, sizeof(gs));
    nt_status_t rc = NT_OK;
    for (int gi = 0; gi < N_GRAPHS; gi++) {
        const nt_model_graph_t *g = &in->graph[gi];
        gspace_t *s = &gs[gi];
        /* a graph whose printed cells all have bandwidth 0 says nothing about its bandwidth */
        int any_bw = 0;
        for (int c = 0; c < NT_NUM_COLLS; c++)
            for (int a = 0; a < v->nalgos; a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++)
                    if (nt_graph_index(v->family, a) == gi && nccl->has[c][a][p] &&
                        nccl->bw_GBps[c][a][p] > 0)
                        any_bw = 1;
        s->n_nch = g->label[NT_GF_NCHANNELS] == NT_FACT_ASSUMED && any_bw ? 1 + N_NCH : 1;
        s->n_bw = g->label[NT_GF_BW_INTRA] == NT_FACT_ASSUMED && any_bw ? 1 + N_BW : 1;
        s->n_ti = g->label[NT_GF_TYPE_INTRA] == NT_FACT_ASSUMED ? 4 : 1;
        s->n_te = g->label[NT_GF_TYPE_INTER] == NT_FACT_ASSUMED ? 4 : 1;
        s->n_x = 1;
        if (gi == NT_ALGO_TREE && g->label[NT_GF_PATTERN] == NT_FACT_ASSUMED)
            s->n_x = 3;
        if (gi == NT_ALGO_RING && g->label[NT_GF_SAME_CHANNELS] == NT_FACT_ASSUMED)
            s->n_x = 3;
        s->ncand = s->n_nch * s->n_bw * s->n_ti * s->n_te * s->n_x;
        s->enumerate = s->ncand > 1;
        s->alive = malloc((size_t)ncomm * s->ncand);
        if (!s->alive) {
            rc = NT_ERR_NOMEM;
            goto out;
        }
        memset(s->alive, 1, (size_t)ncomm * s->ncand);
    }
    unsigned char comm_alive[16];
    memset(comm_alive, 1, sizeof(comm_alive));

    cellref_t cells[NT_NUM_COLLS * NT_NUM_ALGOS * NT_NUM_PROTOS];
    int ncells = nt_order_cells(nccl, v->nalgos, cells);
    int fitted = 0;
    nt_model_input_t work;
    nt_model_table_t t;
    unsigned char *match = NULL;
    size_t match_cap = 0;
    for (int x = 0; x < ncells; x++) {
        cellref_t cr = cells[x];
        int gi = nt_graph_index(v->family, cr.a);
        gspace_t *s = &gs[gi];
        float lat = nccl->lat_us[cr.c][cr.a][cr.p], bw = nccl->bw_GBps[cr.c][cr.a][cr.p];
        size_t need = (size_t)ncomm * s->ncand;
        if (need > match_cap) {
            free(match);
            match = malloc(need);
            match_cap = need;
            if (!match) {
                rc = NT_ERR_NOMEM;
                goto out;
            }
        }
        memset(match, 0, need);
        long n_alive = 0, n_match = 0;
        for (int k = 0; k < ncomm; k++) {
            if (!comm_alive[k])
                continue;
            for (int c = 0; c < s->ncand; c++) {
                if (!s->alive[(size_t)k * s->ncand + c])
                    continue;
                n_alive++;
                work = *in;
                work.min_sm = work.max_sm = comms[k].sm;
                work.cpu_vendor = comms[k].vendor;
                nt_apply_cand(s, gi, c, &work.graph[gi]);
                if (nt_model_compute_masked(&work, env, &t, 1u << cr.a) != NT_OK)
                    continue;
                if (nt_cell_matches(&t.cell[cr.c][cr.a][cr.p], lat, bw)) {
                    match[(size_t)k * s->ncand + c] = 1;
                    n_match++;
                }
            }
        }
        if (n_match == 0 || n_match == n_alive)
            continue; /* mismatch or agreement: checked below */
        if (fitted < NT_MODEL_FIT_MAX_LIST) {
            fit->fitted_at[fitted][0] = cr.c;
            fit->fitted_at[fitted][1] = cr.a;
            fit->fitted_at[fitted][2] = cr.p;
        }
        fitted++;
        for (size_t i = 0; i < need; i++)
            s->alive[i] &= match[i];
        for (int k = 0; k < ncomm;
             k++) { /* a communicator candidate with no graph candidate left dies */
            int any = 0;
            for (int c = 0; c < s->ncand && !any; c++)
                any = s->alive[(size_t)k * s->ncand + c];
            if (!any)
                comm_alive[k] = 0;
        }
    }
    free(match);

    /* the chosen facts: the first living communicator candidate, the first living graph candidate
     */
    int kbest = -1;
    for (int k = 0; k < ncomm && kbest < 0; k++)
        if (comm_alive[k])
            kbest = k;
    if (kbest < 0)
        kbest = 0;
    /* a communicator fact is fitted when the living candidates leave out some of its values */
    for (int dim = 0; dim < 2; dim++) {
        if (dim == 0 ? !sm_assumed : !cpu_assumed)
            continue;
        int left_out = 0;
        for (int k = 0; k < ncomm; k++) {
            int seen = 0;
            for (int j = 0; j < ncomm && !seen; j++)
                if (comm_alive[j] &&
                    (dim == 0 ? comms[j].sm == comms[k].sm : comms[j].vendor == comms[k].vendor))
                    seen = 1;
            left_out |= !seen;
        }
        if (left_out)
            fit->fitted_comm_facts |= 1u << (dim == 0 ? NT_CF_SM : NT_CF_CPU);
    }
    in->min_sm = in->max_sm = comms[kbest].sm;
    in->cpu_vendor = comms[kbest].vendor;
    if (fit->fitted_comm_facts & (1u << NT_CF_SM))
        in->label[NT_CF_SM] = NT_FACT_INFERRED;
    if (fit->fitted_comm_facts & (1u << NT_CF_CPU))
        in->label[NT_CF_CPU] = NT_FACT_INFERRED;
    for (int gi = 0; gi < N_GRAPHS; gi++) {
        gspace_t *s = &gs[gi];
        if (!s->enumerate)
            continue;
        int cbest = -1;
        int dead = 0;
        for (int c = 0; c < s->ncand; c++) {
            if (s->alive[(size_t)kbest * s->ncand + c]) {
                if (cbest < 0)
                    cbest = c;
            } else {
                dead = 1;
            }
        }
        if (cbest < 0)
            cbest = 0;
        if (gi == NT_ALGO_RING) { /* NCCL gives Tree and Ring the same nChannels (init.cc:1192):
                                     prefer that */
            for (int c = cbest; c < s->ncand; c++) {
                if (!s->alive[(size_t)kbest * s->ncand + c])
                    continue;
                nt_model_graph_t tmp = in->graph[gi];
                nt_apply_cand(s, gi, c, &tmp);
                if (tmp.nchannels == in->graph[NT_ALGO_TREE].nchannels) {
                    cbest = c;
                    break;
                }
            }
        }
        nt_model_graph_t before = in->graph[gi];
        nt_apply_cand(s, gi, cbest, &in->graph[gi]);
        if (!dead)
            continue; /* the table says nothing about this graph: its facts stay assumed */
        /* a fact is fitted when the living candidates leave out some of its values */
        const struct {
            int fact, n;
        } dims[] = {{NT_GF_NCHANNELS, s->n_nch},
                    {NT_GF_BW_INTRA, s->n_bw},
                    {NT_GF_TYPE_INTRA, s->n_ti},
                    {NT_GF_TYPE_INTER, s->n_te},
                    {gi == NT_ALGO_TREE ? NT_GF_PATTERN : NT_GF_SAME_CHANNELS, s->n_x}};
        int stride = s->ncand;
        for (int d = 0; d < 5; d++) {
            stride /= dims[d].n;
            if (dims[d].n <= 1)
                continue;
            int seen_all = 1;
            for (int val = 0; val < dims[d].n && seen_all; val++) {
                int seen = 0;
                for (int c = 0; c < s->ncand && !seen; c++)
                    if ((c / stride) % dims[d].n == val && s->alive[(size_t)kbest * s->ncand + c])
                        seen = 1;
                seen_all = seen;
            }
            if (!seen_all) {
                fit->fitted_graph_facts[gi] |= 1u << dims[d].fact;
                in->graph[gi].label[dims[d].fact] = NT_FACT_INFERRED;
                if (dims[d].fact == NT_GF_BW_INTRA &&
                    before.label[NT_GF_BW_INTER] == NT_FACT_ASSUMED) {
                    fit->fitted_graph_facts[gi] |= 1u << NT_GF_BW_INTER;
                    in->graph[gi].label[NT_GF_BW_INTER] = NT_FACT_INFERRED;
                }
            }
        }
    }
    if (in->comm_nchannels <= 0 || in->label[NT_CF_COMM_NCHANNELS] == NT_FACT_ASSUMED) {
        /* comm->nChannels = min(Tree, Ring) (v2.28.9-1 src/init.cc:1192) */
        int a = in->graph[NT_ALGO_TREE].nchannels, b = in->graph[NT_ALGO_RING].nchannels;
        in->comm_nchannels = a < b ? a : b;
        if (in->comm_nchannels < 1)
            in->comm_nchannels = 1;
        if (in->graph[NT_ALGO_TREE].label[NT_GF_NCHANNELS] != NT_FACT_ASSUMED &&
            in->graph[NT_ALGO_RING].label[NT_GF_NCHANNELS] != NT_FACT_ASSUMED)
            in->label[NT_CF_COMM_NCHANNELS] = NT_FACT_INFERRED;
    }

    /* the check: every printed cell against the model with the chosen facts */
    nt_model_table_t final;
    rc = nt_model_compute(in, env, &final);
    if (rc != NT_OK)
        goto out;
    double worst = -1;
    for (int c = 0; c < NT_NUM_COLLS; c++)
        for (int a = 0; a < NT_NUM_ALGOS; a++)
            for (int p = 0; p < NT_NUM_PROTOS; p++) {
                if (!nccl->has[c][a][p])
                    continue;
                fit->compared_cells++;
                double dl = fabs(final.cell[c][a][p].lat_us - nccl->lat_us[c][a][p]);
                double db = fabs(final.cell[c][a][p].bw_GBps - nccl->bw_GBps[c][a][p]);
                if (a >= v->nalgos)
                    dl = db = INFINITY;
                double d = dl > db ? dl : db;
                if (d > worst) {
                    worst = d;
                    fit->max_coll = c;
                    fit->max_algo = a;
                    fit->max_proto = p;
                }
                if (dl > fit->max_lat_diff_us)
                    fit->max_lat_diff_us = dl;
                if (db > fit->max_bw_diff_GBps)
                    fit->max_bw_diff_GBps = db;
                if (!(dl <= NT_MODEL_TOL_LAT_US && db <= NT_MODEL_TOL_BW_GBPS))
                    fit->mismatched_cells++;
            }
    fit->fitted_cells = fitted;
    fit->verified_cells = fit->compared_cells - fit->mismatched_cells - fitted;
    if (fit->verified_cells < 0)
        fit->verified_cells = 0;
    if (fit->mismatched_cells)
        snprintf(fit->verdict, sizeof(fit->verdict), "mismatch: %d of %d cells differ",
                 fit->mismatched_cells, fit->compared_cells);
    else if (fit->verified_cells > fit->fitted_cells)
        snprintf(fit->verdict, sizeof(fit->verdict), "verified");
    else
        snprintf(fit->verdict, sizeof(fit->verdict),
                 "not verified: %d cells fitted, only %d left to verify", fit->fitted_cells,
                 fit->verified_cells);
    if (table)
        *table = final;
out:
    for (int gi = 0; gi < N_GRAPHS; gi++)
        free(gs[gi].alive);
    return rc;
}
