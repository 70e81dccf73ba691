/* The search: see tune.h and docs/tuner-cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nettune/report.h"
#include "nt_tuning.h"
#include "tune.h"
#include "measured_fmt.h"

static double nt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int nt_same_shape(const nt_tune_shape_t *a, const nt_tune_shape_t *b)
{
    return a->nnodes == b->nnodes && a->nranks == b->nranks;
}

/* The calls a rule will see: float and bf16 sum (no reduction for AllGather and Broadcast). A
 * candidate is eligible for both in all three layers (tuner/model.h nt_model_eligible), so the
 * tuner never writes a rule on a cell NCCL marks IGNORE for them. */
static int nt_call_ok(const nt_model_input_t *in, const nt_model_table_t *tab, int coll, int a,
                      int p)
{
    nt_redop_t op =
        coll == NT_COLL_ALLGATHER || coll == NT_COLL_BROADCAST ? NT_REDOP_NONE : NT_REDOP_SUM;
    return nt_model_eligible(in, tab, (nt_coll_t)coll, (nt_algo_t)a, (nt_proto_t)p,
                             NT_DTYPE_FLOAT32, op) &&
           nt_model_eligible(in, tab, (nt_coll_t)coll, (nt_algo_t)a, (nt_proto_t)p,
                             NT_DTYPE_BFLOAT16, op);
}

/* The model's eligible candidates at `bytes`, sorted by predicted time. */
typedef struct {
    int algo, proto;
    double us;
} cand_t;

static int nt_cmp_cand(const void *x, const void *y)
{
    const cand_t *a = x, *b = y;
    if (a->us != b->us)
        return a->us < b->us ? -1 : 1;
    return a->algo != b->algo ? a->algo - b->algo : a->proto - b->proto;
}

static size_t nt_candidates(const nt_model_input_t *in, const nt_model_table_t *tab, int coll,
                         unsigned long long bytes, cand_t *out)
{
    size_t n = 0;
    for (int a = 0; a < NT_NUM_ALGOS; a++)
        for (int p = 0; p < NT_NUM_PROTOS; p++) {
            if (!nt_call_ok(in, tab, coll, a, p))
                continue;
            double us = nt_model_time_us(in, tab, (nt_coll_t)coll, (nt_algo_t)a, (nt_proto_t)p,
                                         (size_t)bytes, 1, NULL);
            if (us < 0)
                continue;
            out[n].algo = a;
            out[n].proto = p;
            out[n].us = us;
            n++;
        }
    qsort(out, n, sizeof(*out), nt_cmp_cand);
    return n;
}

static int nt_is_cand(const cand_t *c, size_t n, int a, int p)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].algo == a && c[i].proto == p)
            return 1;
    return 0;
}

/* Completes a point's half-known choice with the model's best for it. */
static void nt_complete_choice(const cand_t *c, size_t n, int *a, int *p)
{
    for (size_t i = 0; i < n; i++)
        if ((*a < 0 || c[i].algo == *a) && (*p < 0 || c[i].proto == *p)) {
            *a = c[i].algo;
            *p = c[i].proto;
            return;
        }
}

typedef struct {
    int algo, proto;
    double t[NT_TUNE_MAX_SOURCES];
    size_t n;
    double spread;
} meas_t;

static double nt_agg(const double *v, size_t n, nt_objective_t o, int worst)
{
    double s = 0, m = worst ? 0 : INFINITY;
    for (size_t i = 0; i < n; i++) {
        s += o == NT_OBJ_GEOMEAN ? log(v[i]) : v[i];
        if (worst ? v[i] > m : v[i] < m)
            m = v[i];
    }
    if (o == NT_OBJ_NO_REGRESS)
        return m;
    return o == NT_OBJ_GEOMEAN ? exp(s / (double)n) : s / (double)n;
}

int nt_tune_beats(double cand_us, double base_us, double spread)
{
    double noise = spread > NT_TUNE_NOISE_MIN ? spread : NT_TUNE_NOISE_MIN;
    return cand_us < base_us * (1 - noise);
}

unsigned nt_tune_nccl_chunk_bytes(int coll, int algo, int proto)
{
    /* v2.30.7-1 src/init.cc:810-813 over NCCL_STEPS (src/include/device.h:26) */
    static const unsigned step[NT_NUM_PROTOS] = {8 * 512 * 8 * 16 / 8, 120 * 640 * 8 * 8 / 8,
                                                 (1u << 22) / 8};
    if (coll < 0 || coll >= NT_NUM_COLLS || proto < 0 || proto >= NT_NUM_PROTOS ||
        (algo != NT_ALGO_RING && algo != NT_ALGO_TREE && algo != NT_ALGO_PAT))
        return 0;
    unsigned c = step[proto];
    if (proto == NT_PROTO_SIMPLE && algo == NT_ALGO_RING &&
        (coll == NT_COLL_ALLREDUCE || coll == NT_COLL_ALLGATHER || coll == NT_COLL_REDUCESCATTER))
        c *= 4; /* ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS: NCCL_STEPS / 2 */
    if (proto == NT_PROTO_LL)
        c /= 2;
    if (proto == NT_PROTO_LL128)
        c = c / 16 * 15; /* NCCL_LL128_LINEELEMS 16, NCCL_LL128_DATAELEMS 15 */
    return c;
}

/* The chunk size at one size for the choice's (or, without a rule, NCCL's) algorithm and
 * protocol: the best measured forced chunk size replaces NCCL's when it beats the time of the
 * same choice with NCCL's chunk size under the one noise rule (nt_tune_beats); a win without a
 * rule makes one (NCCL's own choice, measured, with the chunk size). */
static void nt_choose_chunk(const nt_tune_t *t, int coll, const nt_tune_shape_t *sh,
                            unsigned long long bytes, double spread, double def_us,
                            nt_tune_choice_t *ch)
{
    int ruled = ch->basis == NT_BASIS_MEASURED && ch->algo >= 0 && ch->proto >= 0;
    int a = ruled ? ch->algo : ch->def_algo, q = ruled ? ch->proto : ch->def_proto;
    double base = ruled ? ch->time_us : def_us;
    if (a < 0 || q < 0 || !(base > 0))
        return;
    unsigned chunk[8];
    double tm[8][NT_TUNE_MAX_SOURCES];
    size_t n[8], nk = 0;
    for (size_t i = 0; i < t->npoints; i++) {
        const nt_tune_point_t *p = &t->points[i];
        if (!p->chunk_bytes || p->coll != coll || p->bytes != bytes || p->algo != a ||
            p->proto != q || !nt_same_shape(&p->shape, sh))
            continue;
        size_t k = 0;
        while (k < nk && chunk[k] != p->chunk_bytes)
            k++;
        if (k == nk) {
            if (nk == sizeof(chunk) / sizeof(chunk[0]))
                continue;
            chunk[nk] = p->chunk_bytes;
            n[nk++] = 0;
        }
        if (n[k] < NT_TUNE_MAX_SOURCES)
            tm[k][n[k]++] = p->time_us;
    }
    int best = -1;
    double bt = INFINITY;
    for (size_t k = 0; k < nk; k++) {
        double tc = nt_agg(tm[k], n[k], t->p.objective, t->p.objective == NT_OBJ_NO_REGRESS);
        if (tc < bt) {
            bt = tc;
            best = (int)k;
        }
    }
    if (best < 0 || !nt_tune_beats(bt, base, spread))
        return; /* within the noise: NCCL's chunk size stays */
    ch->chunk_bytes = chunk[best];
    ch->algo = a;
    ch->proto = q;
    ch->time_us = ch->measured_us = bt;
    ch->basis = NT_BASIS_MEASURED;
}

int nt_tune_choose(const nt_tune_t *t, int coll, const nt_tune_shape_t *sh,
                   unsigned long long bytes, const nt_model_input_t *in,
                   const nt_model_table_t *tab, int have_model, int model_from_evidence,
                   nt_tune_choice_t *ch)
{
    cand_t c[NT_NUM_ALGOS * NT_NUM_PROTOS];
    size_t nc = have_model ? nt_candidates(in, tab, coll, bytes, c) : 0;
    memset(ch, 0, sizeof(*ch));
    ch->basis = -1;
    ch->algo = ch->proto = ch->def_algo = ch->def_proto = -1;
    ch->predicted_us = ch->measured_us = ch->def_time_us = ch->time_us = -1;
    if (nc) {
        ch->def_algo = c[0].algo;
        ch->def_proto = c[0].proto;
        ch->def_time_us = c[0].us;
    }
    /* measurements at this size */
    meas_t m[NT_NUM_ALGOS * NT_NUM_PROTOS + 1];
    size_t nm = 0;
    double def_t[NT_TUNE_MAX_SOURCES];
    size_t ndef = 0;
    double spread = 0;
    int def_ran_a = -1, def_ran_p = -1;
    for (size_t i = 0; i < t->npoints; i++) {
        const nt_tune_point_t *p = &t->points[i];
        if (p->coll != coll || p->bytes != bytes || !nt_same_shape(&p->shape, sh))
            continue;
        if (!p->is_default && p->src >= 0 && t->sources[p->src].confounded)
            continue; /* compared with runs that differ in more than it sets: a finding, no rule */
        if (p->spread > spread)
            spread = p->spread;
        if (p->chunk_bytes)
            continue; /* a forced chunk size: compared with its own choice (nt_choose_chunk) */
        int a = p->algo, q = p->proto;
        if (p->is_default) {
            if (ndef < NT_TUNE_MAX_SOURCES)
                def_t[ndef++] = p->time_us;
            if (a >= 0 && q >= 0) {
                def_ran_a = a;
                def_ran_p = q;
            }
            if (a < 0 || q < 0)
                continue; /* what ran is unknown: a baseline only */
        }
        if ((a < 0 || q < 0) && nc)
            nt_complete_choice(c, nc, &a, &q);
        if (a < 0 && q < 0)
            continue;
        /* without a model a half-known choice stays half: a rule with only algo (or proto)
         * lets NCCL pick the cheapest protocol (algorithm) it offers for it */
        if (nc && (a < 0 || q < 0 || !nt_is_cand(c, nc, a, q)))
            continue; /* measured on a cell that is not eligible here: never a rule */
        size_t k = 0;
        while (k < nm && !(m[k].algo == a && m[k].proto == q))
            k++;
        if (k == nm) {
            if (nm >= sizeof(m) / sizeof(m[0]))
                continue;
            memset(&m[nm], 0, sizeof(m[nm]));
            m[nm].algo = a;
            m[nm].proto = q;
            nm++;
        }
        if (m[k].n < NT_TUNE_MAX_SOURCES)
            m[k].t[m[k].n++] = p->time_us;
    }
    if (def_ran_a >= 0) { /* the TUNING lines say what NCCL ran */
        ch->def_algo = def_ran_a;
        ch->def_proto = def_ran_p;
    }
    if (ndef) {
        double td = nt_agg(def_t, ndef, t->p.objective, 0);
        ch->def_time_us = td;
        ch->measured_us = td;
        /* the best measured candidate that beats the default by more than the noise */
        int best = -1;
        double bt = INFINITY;
        for (size_t k = 0; k < nm; k++) {
            double tc = nt_agg(m[k].t, m[k].n, t->p.objective, t->p.objective == NT_OBJ_NO_REGRESS);
            if (tc < bt) {
                bt = tc;
                best = (int)k;
            }
        }
        if (best >= 0 && nt_tune_beats(bt, td, spread) &&
            !(m[best].algo == ch->def_algo && m[best].proto == ch->def_proto)) {
            ch->algo = m[best].algo;
            ch->proto = m[best].proto;
            ch->time_us = bt;
            ch->measured_us = bt;
            ch->basis = NT_BASIS_MEASURED;
            double worst = nt_agg(m[best].t, m[best].n, NT_OBJ_NO_REGRESS, 1);
            double mean = nt_agg(m[best].t, m[best].n, NT_OBJ_TOTAL, 0);
            if (t->p.objective != NT_OBJ_NO_REGRESS &&
                worst >= nt_agg(def_t, ndef, NT_OBJ_NO_REGRESS, 0))
                snprintf(ch->tradeoff, sizeof(ch->tradeoff),
                         "%s %s wins on the %s (%.1f vs %.1f us) but is slower in one run "
                         "(%.1f us)",
                         nt_model_algo_name(ch->algo), nt_model_proto_name(ch->proto),
                         t->p.objective == NT_OBJ_TOTAL ? "total" : "geometric mean", mean, td,
                         worst);
        } else if (best >= 0 && t->p.objective == NT_OBJ_NO_REGRESS &&
                   nt_tune_beats(nt_agg(m[best].t, m[best].n, NT_OBJ_TOTAL, 0), td, spread) &&
                   !(m[best].algo == ch->def_algo && m[best].proto == ch->def_proto)) {
            snprintf(ch->tradeoff, sizeof(ch->tradeoff),
                     "%s %s is faster on average but slower in one run: kept NCCL's default "
                     "(no-regress)",
                     nt_model_algo_name(m[best].algo), nt_model_proto_name(m[best].proto));
        }
    }
    if (ch->basis < 0 && nc && model_from_evidence) {
        /* no measurement wins: the model's ranking (NCCL's own choice for these inputs) */
        ch->algo = ch->def_algo;
        ch->proto = ch->def_proto;
        ch->time_us = ndef ? ch->def_time_us : c[0].us;
        ch->basis = ndef && def_ran_a >= 0 ? NT_BASIS_MEASURED : NT_BASIS_PREDICTED;
    }
    if (ndef)
        nt_choose_chunk(t, coll, sh, bytes, spread, ch->def_time_us, ch);
    if (nc) {
        for (size_t i = 0; i < nc; i++)
            if (c[i].algo == ch->algo && c[i].proto == ch->proto)
                ch->predicted_us = c[i].us;
    }
    return ch->basis >= 0;
}

static int nt_add_rule(nt_tune_t *t, const nt_tune_rule_t *r)
{
    if (t->nrules == t->cap_rules) {
        size_t nc = t->cap_rules ? t->cap_rules * 2 : 64;
        nt_tune_rule_t *n = realloc(t->rules, nc * sizeof(*n));
        if (!n)
            return -1;
        t->rules = n;
        t->cap_rules = nc;
    }
    t->rules[t->nrules++] = *r;
    return 0;
}

static int nt_add_summary(nt_tune_t *t, const nt_tune_summary_t *s)
{
    if (t->nsummary == t->cap_summary) {
        size_t nc = t->cap_summary ? t->cap_summary * 2 : 64;
        nt_tune_summary_t *n = realloc(t->summary, nc * sizeof(*n));
        if (!n)
            return -1;
        t->summary = n;
        t->cap_summary = nc;
    }
    t->summary[t->nsummary++] = *s;
    return 0;
}

/* The baseline's monotone envelope: a larger size that finishes sooner than a smaller one says
 * the choice that ran at the larger size is the better one at the smaller (padding the message
 * would win): an inferred choice at the smaller size. */
static void nt_envelope(const nt_tune_t *t, int coll, const nt_tune_shape_t *sh,
                     const unsigned long long *grid, size_t ng, nt_tune_choice_t *ch, int *have)
{
    for (size_t g = 0; g + 1 < ng; g++) {
        double ts = -1, tl = -1, spread = 0;
        int la = -1, lp = -1;
        for (size_t i = 0; i < t->npoints; i++) {
            const nt_tune_point_t *p = &t->points[i];
            if (!p->is_default || p->coll != coll || !nt_same_shape(&p->shape, sh))
                continue;
            if (p->spread > spread)
                spread = p->spread;
            if (p->bytes == grid[g] && (ts < 0 || p->time_us < ts))
                ts = p->time_us;
            if (p->bytes == grid[g + 1] && (tl < 0 || p->time_us < tl)) {
                tl = p->time_us;
                la = p->algo;
                lp = p->proto;
            }
        }
        if (ts < 0 || tl < 0)
            continue;
        if (!nt_tune_beats(tl, ts, spread))
            continue;
        if (la < 0 && have[g + 1] && ch[g + 1].def_algo >= 0) {
            la = ch[g + 1].def_algo; /* what ran there, as the model predicts it */
            lp = ch[g + 1].def_proto;
        }
        if ((la < 0 && lp < 0) || (la == ch[g].def_algo && lp == ch[g].def_proto))
            continue;
        ch[g].algo = la;
        ch[g].proto = lp;
        ch[g].time_us = tl;
        ch[g].measured_us = tl;
        ch[g].def_time_us = ts;
        ch[g].basis = NT_BASIS_INFERRED;
        have[g] = 1;
    }
}

/* Chunk sizes worth measuring at one size of the plan, as "chunks" under s: for the measured
 * winner when there is one (ch's measured choice), else the model's best (c[0], NCCL's choice
 * for these inputs), NCCL's chunk size (nt_tune_nccl_chunk_bytes) and NT_TUNE_PLAN_CHUNKS
 * smaller ones, each half the one before, rounded down to the protocol's grain (NCCL clamps a
 * larger one back to its own). Nothing for an algorithm whose chunk size NCCL derives from the
 * size (CollNet, NVLS). */
static void nt_plan_chunks(cJSON *s, int coll, const nt_tune_choice_t *ch, const cand_t *c,
                           size_t nc)
{
    int ruled = ch && ch->basis == NT_BASIS_MEASURED && ch->algo >= 0 && ch->proto >= 0;
    int a = ruled ? ch->algo : c[0].algo, q = ruled ? ch->proto : c[0].proto;
    unsigned nccl = nt_tune_nccl_chunk_bytes(coll, a, q), grain = nt_proto_grain_bytes(q);
    if (!nccl || !grain)
        return;
    cJSON *o = cJSON_AddObjectToObject(s, "chunks");
    cJSON_AddStringToObject(o, "algo", nt_algo_name(a));
    cJSON_AddStringToObject(o, "proto", nt_proto_name(q));
    for (size_t i = 0; i < nc; i++)
        if (c[i].algo == a && c[i].proto == q)
            cJSON_AddNumberToObject(o, "predicted_us", round(c[i].us * 1000) / 1000);
    cJSON_AddNumberToObject(o, "nccl_chunk_bytes", nccl);
    cJSON *arr = cJSON_AddArrayToObject(o, "chunk_bytes");
    unsigned v = nccl;
    for (int k = 0; k < NT_TUNE_PLAN_CHUNKS; k++) {
        v = v / 2 / grain * grain;
        if (v < grain)
            break;
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(v));
    }
}

/* One collective on one shape. */
static nt_status_t nt_search_one(nt_tune_t *t, int coll, const nt_tune_shape_t *sh)
{
    nt_model_input_t in;
    nt_model_table_t tab;
    char why[256];
    int have_model = 0, evidence = 0, measured_graphs = 0;
    if (nt_tune_model_input(t, sh, &in, why, sizeof(why)) == NT_OK) {
        nt_model_env_filter_t env, *envp = NULL;
        if ((t->env_job_algo || t->env_job_proto) &&
            nt_model_env_filter_parse(in.version, t->env_job_algo, t->env_job_proto, &env, NULL,
                                      0) == NT_OK)
            envp = &env;
        have_model = nt_model_compute(&in, envp, &tab) == NT_OK;
        for (int a = 0; a < NT_NUM_ALGOS && have_model; a++) {
            if (in.graph[a].label[NT_GF_BW_INTRA] != NT_FACT_ASSUMED)
                evidence = 1;
            if (in.graph[a].label[NT_GF_BW_INTRA] == NT_FACT_MEASURED)
                measured_graphs = 1;
        }
    }
    if (have_model && evidence)
        t->nmodelled++;
    unsigned long long grid[NT_TUNE_MAX_SIZES];
    size_t ng = 0;
    for (unsigned long long b = 1; b && b <= t->p.max_bytes && ng < NT_TUNE_MAX_SIZES; b <<= 1)
        if (b >= t->p.min_bytes)
            grid[ng++] = b;
    nt_tune_choice_t ch[NT_TUNE_MAX_SIZES];
    int have[NT_TUNE_MAX_SIZES];
    cJSON *plan_sizes = NULL;
    if (t->plan) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "coll", nt_coll_name(coll));
        cJSON_AddNumberToObject(e, "nnodes", sh->nnodes);
        cJSON_AddNumberToObject(e, "nranks", sh->nranks);
        plan_sizes = cJSON_AddArrayToObject(e, "sizes");
        cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t->plan, "shapes"), e);
    }
    for (size_t g = 0; g < ng; g++) {
        if (t->p.time_limit_s > 0 && nt_now_s() - t->t_start > t->p.time_limit_s) {
            t->completed = 0;
            ng = g; /* the sizes decided so far are kept: every rule below stands on its own */
            break;
        }
        have[g] = nt_tune_choose(t, coll, sh, grid[g], &in, &tab, have_model, evidence, &ch[g]);
        if (plan_sizes && have_model) {
            cand_t c[NT_NUM_ALGOS * NT_NUM_PROTOS];
            size_t nc = nt_candidates(&in, &tab, coll, grid[g], c);
            cJSON *s = cJSON_CreateObject();
            cJSON_AddNumberToObject(s, "bytes", (double)grid[g]);
            cJSON *arr = cJSON_AddArrayToObject(s, "candidates");
            for (size_t i = 0; i < nc && i < NT_TUNE_TOPK; i++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "algo", nt_algo_name(c[i].algo));
                cJSON_AddStringToObject(o, "proto", nt_proto_name(c[i].proto));
                cJSON_AddNumberToObject(o, "predicted_us", round(c[i].us * 1000) / 1000);
                cJSON_AddBoolToObject(o, "default", i == 0);
                cJSON_AddItemToArray(arr, o);
            }
            if (t->p.plan_chunks && nc)
                nt_plan_chunks(s, coll, have[g] ? &ch[g] : NULL, c, nc);
            cJSON_AddItemToArray(plan_sizes, s);
        }
    }
    nt_envelope(t, coll, sh, grid, ng, ch, have);
    /* a predicted choice only restates NCCL's modelled one: if the facts are right it changes
     * nothing, if they are wrong it overrides NCCL's better choice. Those sizes stay NCCL's
     * unless --pin-predicted asks for every rank to choose alike. */
    for (size_t g = 0; g < ng && !t->p.pin_predicted; g++)
        if (have[g] && ch[g].basis == NT_BASIS_PREDICTED)
            have[g] = 0;
    /* a predicted choice ends where the model's own choice changes, found by bisection between
     * two grid sizes (NCCL switches at sizes between powers of two): the rule then agrees with
     * NCCL at every size when the facts are right, and leaves the rest to NCCL */
    unsigned long long last_of[NT_TUNE_MAX_SIZES];
    for (size_t g = 0; g < ng; g++) {
        last_of[g] = g + 1 < ng ? grid[g + 1] - 1 : grid[g];
        if (!have[g] || ch[g].basis != NT_BASIS_PREDICTED || g + 1 >= ng || !have_model)
            continue;
        if (have[g + 1] && ch[g + 1].algo == ch[g].algo && ch[g + 1].proto == ch[g].proto)
            continue;
        unsigned long long lo = grid[g], hi = grid[g + 1]; /* lo: still ours */
        while (hi - lo > 1) {
            unsigned long long mid = lo + (hi - lo) / 2;
            cand_t c[NT_NUM_ALGOS * NT_NUM_PROTOS];
            size_t nc = nt_candidates(&in, &tab, coll, mid, c);
            if (nc && c[0].algo == ch[g].algo && c[0].proto == ch[g].proto)
                lo = mid;
            else
                hi = mid;
        }
        last_of[g] = lo;
    }
    /* rules: adjacent sizes with one choice merge; a rule covers from its smallest supporting
     * size to just below the next size with another choice, never beyond its support */
    for (size_t g = 0; g < ng;) {
        if (!have[g]) {
            g++;
            continue;
        }
        size_t e = g;
        int basis = ch[g].basis;
        /* a measured (or inferred) run never absorbs a predicted size: the model's word is
         * labelled predicted, in a rule of its own */
        while (e + 1 < ng && have[e + 1] && ch[e + 1].algo == ch[g].algo &&
               ch[e + 1].proto == ch[g].proto && ch[e + 1].chunk_bytes == ch[g].chunk_bytes &&
               (ch[e + 1].basis == NT_BASIS_PREDICTED) == (ch[g].basis == NT_BASIS_PREDICTED)) {
            if (ch[e + 1].basis == NT_BASIS_MEASURED)
                basis = NT_BASIS_MEASURED; /* a measurement supports the range */
            e++;
        }
        nt_tune_rule_t r;
        memset(&r, 0, sizeof(r));
        r.coll = coll;
        r.shape = *sh;
        /* from the first size it covers: the grid size, or just after where the previous
         * predicted choice ended when that is before it */
        r.min_bytes = grid[g];
        if (g > 0 && have[g - 1] && ch[g].basis == NT_BASIS_PREDICTED &&
            ch[g - 1].basis == NT_BASIS_PREDICTED && last_of[g - 1] + 1 < grid[g])
            r.min_bytes = last_of[g - 1] + 1;
        /* up to just below the next size with another choice, never beyond its support */
        r.max_bytes = e + 1 < ng && have[e + 1] ? last_of[e] : grid[e];
        if (ch[e].basis == NT_BASIS_PREDICTED && e + 1 < ng && !have[e + 1])
            r.max_bytes = grid[e];
        /* a measured (or inferred) choice reaches past its largest measured size only up to a
         * next size that was measured too (the switch lies between the two); past the last
         * measured size the sizes stay NCCL's or the model's (a predicted rule) */
        if (ch[e].basis != NT_BASIS_PREDICTED &&
            !(e + 1 < ng && have[e + 1] && ch[e + 1].measured_us >= 0))
            r.max_bytes = grid[e];
        r.algo = ch[g].algo;
        r.proto = ch[g].proto;
        r.basis = basis;
        r.predicted_us = ch[g].predicted_us;
        r.measured_us = ch[g].basis == NT_BASIS_PREDICTED ? -1 : ch[g].measured_us;
        r.reg_buff = -1;
        r.chunk_bytes = ch[g].chunk_bytes;
        if (t->target_version >= NT_TUNE_MIN_RULE_VERSION)
            nt_add_rule(t, &r);
        nt_tune_summary_t s;
        memset(&s, 0, sizeof(s));
        s.coll = coll;
        s.shape = *sh;
        s.min_bytes = r.min_bytes;
        s.max_bytes = r.max_bytes;
        s.def_algo = ch[g].def_algo;
        s.def_proto = ch[g].def_proto;
        s.algo = r.algo;
        s.proto = r.proto;
        s.def_us = ch[g].def_time_us;
        s.our_us = ch[g].time_us;
        s.basis = basis;
        for (size_t k = g; k <= e; k++)
            if (ch[k].basis != NT_BASIS_PREDICTED && ch[k].measured_us > 0 &&
                ch[k].def_time_us > 0 && ch[k].time_us > 0) {
                s.gain_bytes[s.ngains] = grid[k];
                s.gain_def_us[s.ngains] = ch[k].def_time_us;
                s.gain_our_us[s.ngains] = ch[k].time_us;
                s.gain[s.ngains++] = ch[k].def_time_us / ch[k].time_us - 1;
            }
        for (size_t k = g; k <= e; k++)
            if (ch[k].tradeoff[0] && !s.tradeoff) {
                char buf[256];
                snprintf(buf, sizeof(buf), "%llu B: %s", grid[k], ch[k].tradeoff);
                s.tradeoff = strdup(buf);
            }
        nt_add_summary(t, &s);
        g = e + 1;
    }
    /* measured far from the model: a finding, never a rule */
    if (have_model) {
        for (size_t i = 0; i < t->npoints; i++) {
            const nt_tune_point_t *p = &t->points[i];
            if (p->coll != coll || !nt_same_shape(&p->shape, sh) || p->algo < 0 || p->proto < 0 ||
                p->chunk_bytes)
                continue; /* a forced chunk size is not what the model times */
            if (tab.cell[coll][p->algo][p->proto].why != NT_CELL_OK)
                continue;
            double us = nt_model_time_us(&in, &tab, (nt_coll_t)coll, (nt_algo_t)p->algo,
                                         (nt_proto_t)p->proto, (size_t)p->bytes, 1, NULL);
            if (us <= 0 || p->bytes < (1ull << 20))
                continue; /* latency-bound sizes: launch overheads the model leaves out */
            double r = p->time_us / us;
            if (r > NT_TUNE_FAR_RATIO || r < 1 / NT_TUNE_FAR_RATIO) {
                nt_tune_add_finding(t, NT_ANOMALY_MODEL_FAR,
                                    measured_graphs ? NT_ANOMALY_SEV_WARN : NT_ANOMALY_SEV_INFO,
                                    "%s %dx%d %s %s at %llu B: measured %.1f us, the model says "
                                    "%.1f us (x%.2f; %s)",
                                    nt_coll_name(coll), sh->nnodes, sh->ppn, nt_algo_name(p->algo),
                                    nt_proto_name(p->proto), p->bytes, p->time_us, us, r, why);
                break; /* one per collective and shape */
            }
        }
    }
    return NT_OK;
}

nt_status_t nt_tune_search(nt_tune_t *t)
{
    t->completed = 1;
    for (size_t s = 0; s < t->p.nshapes; s++)
        for (int c = 0; c < NT_NUM_COLLS; c++) {
            if (!t->p.colls[c])
                continue;
            if (t->p.shapes[s].nranks < 2)
                continue; /* one rank: NCCL never asks the tuner */
            nt_search_one(t, c, &t->p.shapes[s]);
            if (!t->completed)
                return NT_ERR_INTERRUPTED;
        }
    return NT_OK;
}

nt_status_t nt_tune_measured_read(nt_tune_t *t, const char *path, char *err, size_t errlen)
{
    cJSON *doc = NULL;
    char why[160];
    nt_status_t st = nt_json_read_file_why(path, (size_t)1 << 30, &doc, why, sizeof(why));
    if (st != NT_OK) {
        snprintf(err, errlen,
                 "--measured '%s': %s (give nettune-tune-measure's output, "
                 "nettune.measured/1)",
                 path, why);
        return st;
    }
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(doc, "points"), *p;
    if (!cJSON_IsArray(pts) || strcmp(nt_json_get_str(doc, "schema", ""), NT_MEASURED_SCHEMA)) {
        snprintf(err, errlen,
                 "--measured '%s' is not a nettune.measured/1 document (\"schema\" and a "
                 "\"points\" array)",
                 path);
        cJSON_Delete(doc);
        return NT_ERR_PARSE;
    }
    int i = 0;
    cJSON_ArrayForEach (p, pts) {
        nt_tune_point_t q;
        if (nt_measured_point_parse(p, &q) != 0) {
            snprintf(err, errlen,
                     "--measured '%s': points[%d] needs coll, nnodes, nranks, bytes, time_us > 0 "
                     "and algo/proto (or \"default\": true)",
                     path, i);
            cJSON_Delete(doc);
            return NT_ERR_INVALID;
        }
        if (t->npoints == t->cap_points) {
            size_t nc = t->cap_points ? t->cap_points * 2 : 256;
            nt_tune_point_t *n = realloc(t->points, nc * sizeof(*n));
            if (!n) {
                cJSON_Delete(doc);
                return NT_ERR_NOMEM;
            }
            t->points = n;
            t->cap_points = nc;
        }
        t->points[t->npoints++] = q;
        i++;
    }
    cJSON_Delete(doc);
    return NT_OK;
}
