/* The sweep of nettune-tune-measure (tuner/measure/measure.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "measured_fmt.h"
#include "nt_tuning.h"

static double nt_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What every rank sends after a candidate: its loop position (lockstep check), its result. */
typedef struct {
    int32_t shape, cfg, size, cand;
    int32_t want_algo, want_proto; /* the candidate (-1: default) */
    uint32_t want_chunk;           /* its forced chunk size (0: NCCL's) */
    uint64_t bytes;
    int32_t status; /* nt_status_t of run */
    int32_t algo, proto, nchannels, applied, chunk_applied;
    double mean_us, min_us, max_us;
} rank_result_t;

/* Lockstep: every rank is at the same (shape, config, size, candidate) before anything is
 * enqueued (a mismatch would otherwise hang inside NCCL). NT_ERR_PEER on a mismatch. */
static nt_status_t nt_check_lockstep(nt_launcher_t *l, const nt_measure_opts_t *o,
                                  const rank_result_t *me, rank_result_t *all, char *err,
                                  size_t errlen)
{
    nt_status_t x = l->ops->allgather(l, me, all, sizeof(*me), o->timeout_s);
    if (x != NT_OK) {
        snprintf(err, errlen, "lockstep exchange before a candidate: %s", nt_status_string(x));
        return x;
    }
    for (int r = 0; r < nt_launcher_size(l); r++)
        if (all[r].shape != me->shape || all[r].cfg != me->cfg || all[r].size != me->size ||
            all[r].cand != me->cand || all[r].bytes != me->bytes ||
            all[r].want_algo != me->want_algo || all[r].want_proto != me->want_proto ||
            all[r].want_chunk != me->want_chunk) {
            snprintf(err, errlen,
                     "rank %d is at shape %d config %d size %d (%llu B) candidate %d, rank %d at "
                     "%d %d %d (%llu B) %d: the ranks are out of lockstep (the same plan on every "
                     "rank?)",
                     r, all[r].shape, all[r].cfg, all[r].size, (unsigned long long)all[r].bytes,
                     all[r].cand, nt_launcher_rank(l), me->shape, me->cfg, me->size,
                     (unsigned long long)me->bytes, me->cand);
            return NT_ERR_PEER;
        }
    return NT_OK;
}

/* One candidate on every rank: lockstep check, trials, then the exchange of results. */
static nt_status_t nt_one_candidate(nt_launcher_t *l, const nt_measure_backend_t *b,
                                 const nt_measure_opts_t *o, int coll, unsigned long long bytes,
                                 const nt_measure_cand_t *c, rank_result_t *me, rank_result_t *all,
                                 char *err, size_t errlen)
{
    nt_status_t st = nt_check_lockstep(l, o, me, all, err, errlen);
    if (st != NT_OK)
        return st;
    nt_measure_ran_t ran = {-1, -1, -1, 0, 0};
    double sum = 0, mn = INFINITY, mx = 0;
    int trials = o->trials > 0 ? o->trials : 1;
    for (int t = 0; t < trials && st == NT_OK; t++) {
        double us = 0;
        /* the first trial's warm-up serves the later ones: same communicator, same candidate */
        st = b->ops->run(b->self, coll, bytes, c, t == 0 ? o->warmup : 0, o->iters, &us, &ran, err,
                         errlen);
        if (st == NT_OK) {
            sum += us;
            mn = us < mn ? us : mn;
            mx = us > mx ? us : mx;
        }
    }
    me->status = st;
    me->algo = ran.algo;
    me->proto = ran.proto;
    me->nchannels = ran.nchannels;
    me->applied = ran.applied;
    me->chunk_applied = ran.chunk_applied;
    me->mean_us = st == NT_OK ? sum / trials : -1;
    me->min_us = st == NT_OK ? mn : -1;
    me->max_us = st == NT_OK ? mx : -1;
    nt_status_t x = l->ops->allgather(l, me, all, sizeof(*me), o->timeout_s);
    if (x != NT_OK) {
        snprintf(err, errlen, "exchange of results after a candidate: %s", nt_status_string(x));
        return x;
    }
    for (int r = 0; r < nt_launcher_size(l); r++)
        if (all[r].status != NT_OK) {
            if (r != nt_launcher_rank(l))
                snprintf(err, errlen, "rank %d: the collective failed (%s)", r,
                         nt_status_string((nt_status_t)all[r].status));
            return NT_ERR_PEER;
        }
    return NT_OK;
}

/* Add the rank-0 record of one candidate to doc. */
static void nt_record(cJSON *points, cJSON *not_applied, const nt_measure_shape_t *sh,
                   const nt_measure_comm_cfg_t *cfg, int ncfg_varied, unsigned long long bytes,
                   const nt_measure_cand_t *c, const rank_result_t *all, int n)
{
    double sum = 0, mn = INFINITY, mx = 0;
    int applied = 1, same = 1, chunk_applied = 1;
    for (int r = 0; r < n; r++) {
        sum += all[r].mean_us;
        mn = all[r].min_us < mn ? all[r].min_us : mn;
        mx = all[r].max_us > mx ? all[r].max_us : mx;
        applied &= all[r].applied != 0;
        chunk_applied &= all[r].chunk_applied != 0;
        same &= all[r].algo == all[0].algo && all[r].proto == all[0].proto;
    }
    double mean = sum / n;
    nt_tune_point_t q;
    memset(&q, 0, sizeof(q));
    q.coll = sh->coll;
    q.shape.nnodes = sh->nnodes;
    q.shape.nranks = sh->nranks;
    q.bytes = bytes;
    q.time_us = mean;
    q.spread = mean > 0 ? (mx - mn) / mean : 0;
    q.is_default = c->is_default;
    q.algo = all[0].algo; /* what ran, as the plugin confirms it */
    q.proto = all[0].proto;
    q.reg_buff = -1;
    /* the chunk size that ran: the forced one only where NCCL asked for it */
    q.chunk_bytes = c->is_default || q.algo < 0 || !chunk_applied ? 0 : c->chunk_bytes;
    cJSON *o = nt_measured_point_json(&q);
    if (!o)
        return;
    if (ncfg_varied) {
        cJSON *k = cJSON_AddObjectToObject(o, "comm_config");
        cJSON_AddNumberToObject(k, "min_ctas", cfg->min_ctas);
        cJSON_AddNumberToObject(k, "max_ctas", cfg->max_ctas);
        cJSON_AddNumberToObject(k, "cga_cluster_size", cfg->cga_cluster_size);
    }
    if (!c->is_default && c->nchannels > 0)
        cJSON_AddNumberToObject(o, "nchannels", c->nchannels);
    if (c->is_default || (applied && same && all[0].algo == c->algo && all[0].proto == c->proto &&
                          (!c->chunk_bytes || chunk_applied))) {
        /* a point nettune tune learns from (a comm_config other than NCCL's default is for
         * people: the reader takes the point as it is) */
        cJSON_AddItemToArray(points, o);
        return;
    }
    /* a forced choice NCCL did not run: its time is NCCL's default's, never the candidate's */
    cJSON_AddStringToObject(o, "forced_algo", nt_algo_name(c->algo));
    cJSON_AddStringToObject(o, "forced_proto", nt_proto_name(c->proto));
    if (c->chunk_bytes)
        cJSON_AddNumberToObject(o, "forced_chunk_bytes", c->chunk_bytes);
    cJSON_AddStringToObject(
        o, "why",
        all[0].algo < 0 ? "not confirmed: the plugin saw no call of this collective (is "
                          "it the tuner NCCL loaded?)"
        : !same         ? "the ranks ran different choices"
        : !applied      ? "NCCL marks the cell IGNORE here: its own choice ran"
        : !(all[0].algo == c->algo && all[0].proto == c->proto)
            ? "the plugin reports another choice than the forced one ran"
            : "NCCL never asked the plugin for a chunk size (tuner API v6, NCCL 2.30 and later)");
    cJSON_AddItemToArray(not_applied, o);
}

nt_status_t nt_measure_sweep(nt_launcher_t *l, const nt_measure_backend_t *b,
                             const nt_measure_plan_t *plan, const nt_measure_opts_t *o, cJSON **doc,
                             char *err, size_t errlen)
{
    *doc = NULL;
    int rank = nt_launcher_rank(l), n = nt_launcher_size(l);
    cJSON *d = NULL, *points = NULL, *not_applied = NULL, *notes = NULL;
    if (rank == 0) {
        d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "schema", NT_MEASURED_SCHEMA);
        cJSON_AddStringToObject(d, "backend", b->ops->name);
        cJSON_AddNumberToObject(d, "warmup_iters", o->warmup);
        cJSON_AddNumberToObject(d, "iters", o->iters);
        cJSON_AddNumberToObject(d, "trials", o->trials);
        points = cJSON_AddArrayToObject(d, "points");
        not_applied = cJSON_AddArrayToObject(d, "not_applied");
        notes = cJSON_AddArrayToObject(d, "skipped");
        cJSON_AddBoolToObject(d, "completed", 1);
    }
    rank_result_t *all = calloc((size_t)n, sizeof(*all));
    if (!all) {
        cJSON_Delete(d);
        return NT_ERR_NOMEM;
    }
    double t0 = nt_now_s();
    nt_status_t st = NT_OK;
    for (size_t s = 0; s < plan->nshapes && st == NT_OK; s++) {
        const nt_measure_shape_t *sh = &plan->shape[s];
        if (sh->nranks != n) {
            if (rank == 0) {
                char m[200];
                snprintf(m, sizeof(m),
                         "%s %d rank%s on %d node%s: this launch has %d rank%s (launch one with "
                         "%d)",
                         nt_coll_name(sh->coll), sh->nranks, sh->nranks == 1 ? "" : "s",
                         sh->nnodes, sh->nnodes == 1 ? "" : "s", n, n == 1 ? "" : "s", sh->nranks);
                cJSON_AddItemToArray(notes, cJSON_CreateString(m));
            }
            continue;
        }
        for (size_t k = 0; k < plan->ncfg && st == NT_OK; k++) {
            st = b->ops->comm_create(b->self, l, &plan->cfg[k], err, errlen);
            if (st != NT_OK)
                break;
            for (size_t z = 0; z < sh->nsizes && st == NT_OK; z++) {
                const nt_measure_size_t *sz = &sh->size[z];
                for (size_t c = 0; c < sz->ncand && st == NT_OK; c++) {
                    /* the budget is rank 0's clock, broadcast so that every rank stops at once */
                    int32_t stop = o->budget_s > 0 && nt_now_s() - t0 > o->budget_s;
                    st = l->ops->bcast(l, &stop, sizeof(stop), 0, o->timeout_s);
                    if (st == NT_OK && stop)
                        st = NT_ERR_INTERRUPTED;
                    if (st != NT_OK)
                        break;
                    rank_result_t me;
                    memset(&me, 0, sizeof(me));
                    me.shape = (int32_t)s;
                    me.cfg = (int32_t)k;
                    me.size = (int32_t)z;
                    me.cand = (int32_t)c;
                    me.bytes = sz->bytes;
                    me.want_algo = sz->cand[c].is_default ? -1 : sz->cand[c].algo;
                    me.want_proto = sz->cand[c].is_default ? -1 : sz->cand[c].proto;
                    me.want_chunk = sz->cand[c].chunk_bytes;
                    st = nt_one_candidate(l, b, o, sh->coll, sz->bytes, &sz->cand[c], &me, all, err,
                                       errlen);
                    if (st == NT_OK && rank == 0)
                        nt_record(points, not_applied, sh, &plan->cfg[k], plan->ncfg > 1, sz->bytes,
                               &sz->cand[c], all, n);
                }
            }
            b->ops->comm_destroy(b->self);
        }
    }
    free(all);
    if (st != NT_OK && d) /* what was measured is kept, marked partial */
        cJSON_ReplaceItemInObject(d, "completed", cJSON_CreateBool(0));
    if (st == NT_ERR_INTERRUPTED)
        snprintf(err, errlen, "--budget-seconds %.0f reached: the sizes measured so far are kept",
                 o->budget_s);
    *doc = d;
    return st;
}

/* Every run of --verify: nothing forced, on this process's communicator; mean over ranks. */
nt_status_t nt_measure_verify_run(nt_launcher_t *l, const nt_measure_backend_t *b,
                                  const nt_measure_opts_t *o, int coll, int z,
                                  unsigned long long bytes, int round, double *mean_us, char *err,
                                  size_t errlen)
{
    static const nt_measure_cand_t def = {-1, -1, 0, 1, 0, 0};
    nt_measure_opts_t oo = *o;
    oo.trials = 1;
    int n = nt_launcher_size(l);
    rank_result_t me, *all = calloc((size_t)n, sizeof(*all));
    if (!all)
        return NT_ERR_NOMEM;
    memset(&me, 0, sizeof(me));
    me.shape = coll;
    me.size = z;
    me.cand = round;
    me.bytes = bytes;
    me.want_algo = me.want_proto = -1;
    nt_status_t st = nt_one_candidate(l, b, &oo, coll, bytes, &def, &me, all, err, errlen);
    if (st == NT_OK) {
        double sum = 0;
        for (int r = 0; r < n; r++)
            sum += all[r].mean_us;
        *mean_us = sum / n;
    }
    free(all);
    return st;
}
