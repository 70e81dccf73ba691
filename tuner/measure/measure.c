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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* What every rank sends after a candidate: its loop position (lockstep check), its result. */
typedef struct {
    int32_t shape, cfg, size, cand;
    int32_t want_algo, want_proto; /* the candidate (-1: default) */
    uint64_t bytes;
    int32_t status; /* nt_status_t of run */
    int32_t algo, proto, nchannels, applied;
    double mean_us, min_us, max_us;
} rank_result_t;

/* Lockstep: every rank is at the same (shape, config, size, candidate) before anything is
 * enqueued (a mismatch would otherwise hang inside NCCL). NT_ERR_PEER on a mismatch. */
static nt_status_t check_lockstep(nt_launcher_t *l, const nt_measure_opts_t *o,
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
            all[r].want_algo != me->want_algo || all[r].want_proto != me->want_proto) {
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
static nt_status_t one_candidate(nt_launcher_t *l, const nt_measure_backend_t *b,
                                 const nt_measure_opts_t *o, int coll, unsigned long long bytes,
                                 const nt_measure_cand_t *c, rank_result_t *me, rank_result_t *all,
                                 char *err, size_t errlen)
{
    nt_status_t st = check_lockstep(l, o, me, all, err, errlen);
    if (st != NT_OK)
        return st;
    nt_measure_ran_t ran = {-1, -1, -1, 0};
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
static void record(cJSON *points, cJSON *not_applied, const nt_measure_shape_t *sh,
                   const nt_measure_comm_cfg_t *cfg, int ncfg_varied, unsigned long long bytes,
                   const nt_measure_cand_t *c, const rank_result_t *all, int n)
{
    double sum = 0, mn = INFINITY, mx = 0;
    int applied = 1, same = 1;
    for (int r = 0; r < n; r++) {
        sum += all[r].mean_us;
        mn = all[r].min_us < mn ? all[r].min_us : mn;
        mx = all[r].max_us > mx ? all[r].max_us : mx;
        applied &= all[r].applied != 0;
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
    if (c->is_default || (applied && same && all[0].algo == c->algo && all[0].proto == c->proto)) {
        /* a point nettune tune learns from (a comm_config other than NCCL's default is for
         * people: the reader takes the point as it is) */
        cJSON_AddItemToArray(points, o);
        return;
    }
    /* a forced choice NCCL did not run: its time is NCCL's default's, never the candidate's */
    cJSON_AddStringToObject(o, "forced_algo", nt_algo_name(c->algo));
    cJSON_AddStringToObject(o, "forced_proto", nt_proto_name(c->proto));
    cJSON_AddStringToObject(
        o, "why",
        all[0].algo < 0 ? "not confirmed: the plugin saw no call of this collective (is "
                          "it the tuner NCCL loaded?)"
        : !same         ? "the ranks ran different choices"
        : !applied      ? "NCCL marks the cell IGNORE here: its own choice ran"
                        : "the plugin reports another choice than the forced one ran");
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
    double t0 = now_s();
    nt_status_t st = NT_OK;
    for (size_t s = 0; s < plan->nshapes && st == NT_OK; s++) {
        const nt_measure_shape_t *sh = &plan->shape[s];
        if (sh->nranks != n) {
            if (rank == 0) {
                char m[200];
                snprintf(m, sizeof(m),
                         "%s %d ranks on %d nodes: this launch has %d ranks (launch one with %d)",
                         nt_coll_name(sh->coll), sh->nranks, sh->nnodes, n, sh->nranks);
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
                    int32_t stop = o->budget_s > 0 && now_s() - t0 > o->budget_s;
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
                    st = one_candidate(l, b, o, sh->coll, sz->bytes, &sz->cand[c], &me, all, err,
                                       errlen);
                    if (st == NT_OK && rank == 0)
                        record(points, not_applied, sh, &plan->cfg[k], plan->ncfg > 1, sz->bytes,
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
    static const nt_measure_cand_t def = {-1, -1, 0, 1, 0};
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
    nt_status_t st = one_candidate(l, b, &oo, coll, bytes, &def, &me, all, err, errlen);
    if (st == NT_OK) {
        double sum = 0;
        for (int r = 0; r < n; r++)
            sum += all[r].mean_us;
        *mean_us = sum / n;
    }
    free(all);
    return st;
}

int nt_measure_verify_defaults_first(int round)
{
    return !(round & 1);
}

void nt_measure_ab_stats(const double *default_us, const double *tuned_us, int rounds,
                         nt_measure_ab_t *out)
{
    memset(out, 0, sizeof(*out));
    out->verdict = "same";
    if (rounds < 1)
        return;
    double rsum = 0, rmin = INFINITY, rmax = 0;
    for (int r = 0; r < rounds; r++) {
        double ratio = tuned_us[r] > 0 ? default_us[r] / tuned_us[r] : 0;
        out->default_us += default_us[r] / rounds;
        out->tuned_us += tuned_us[r] / rounds;
        rsum += ratio;
        rmin = ratio < rmin ? ratio : rmin;
        rmax = ratio > rmax ? ratio : rmax;
    }
    out->speedup = rsum / rounds;
    out->speedup_min = rmin;
    out->speedup_max = rmax;
    out->verdict = rmin > 1 ? "faster" : rmax < 1 ? "slower" : "same";
}

/* Which collectives the file has a rule for at n ranks (bit per nt_coll_t), or -1. */
static int file_colls(const char *path, int n, char *err, size_t errlen)
{
    nt_tuning_t t;
    char e[256] = "";
    if (nt_tuning_load(path, NT_FORMAT_JSON, &t, e, sizeof(e)) != NT_TP_OK) {
        snprintf(err, errlen, "--verify '%s': %s", path, e);
        return -1;
    }
    int mask = 0;
    for (size_t i = 0; i < t.nrules; i++)
        if (t.rules[i].nranks == 0 || (int)t.rules[i].nranks == n)
            mask |= 1 << t.rules[i].coll;
    nt_tuning_cleanup(&t);
    if (!mask)
        snprintf(err, errlen,
                 "--verify '%s': no rule applies to %d ranks (launch as many ranks as the file "
                 "was tuned for)",
                 path, n);
    return mask;
}

/* The tuned side's communicator: the plugin reads NETTUNE_TUNING_FILE at communicator creation
 * (plugins/nccl-tuner/src/plugin.c init_common). Barriers around the environment: ranks that
 * share one (threads of the in-process launcher) all set it before any reads it, and all read
 * it before any clears it. */
static nt_status_t make_tuned_comm(nt_launcher_t *l, const nt_measure_backend_t *b,
                                   const char *tuning, double timeout_s, char *err, size_t errlen)
{
    static const nt_measure_comm_cfg_t cfg = {-1, -1, -1};
    nt_status_t st = l->ops->barrier(l, timeout_s);
    if (st != NT_OK)
        return st;
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    setenv("NETTUNE_TUNING_FILE", tuning, 1);
    st = l->ops->barrier(l, timeout_s);
    if (st == NT_OK)
        st = b->ops->comm_create(b->self, l, &cfg, err, errlen);
    nt_status_t x = l->ops->barrier(l, timeout_s);
    unsetenv("NETTUNE_TUNING_FILE");
    return st != NT_OK ? st : x;
}

/* What every rank says after both sides started: ready, and where the plugin is loaded. */
typedef struct {
    int32_t status, tuned_loaded, defaults_loaded, pid, child_pid;
} side_state_t;

static cJSON *side_json(const char *process, const char *plugin, const char *file, int loaded,
                        const side_state_t *all, int n, int child)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "process", process);
    if (plugin)
        cJSON_AddStringToObject(s, "NCCL_TUNER_PLUGIN", plugin);
    else
        cJSON_AddNullToObject(s, "NCCL_TUNER_PLUGIN");
    if (file)
        cJSON_AddStringToObject(s, "NETTUNE_TUNING_FILE", file);
    else
        cJSON_AddNullToObject(s, "NETTUNE_TUNING_FILE");
    cJSON_AddNumberToObject(s, "plugin_loaded_ranks", loaded);
    cJSON *p = cJSON_AddArrayToObject(s, "pids");
    for (int r = 0; r < n; r++)
        cJSON_AddItemToArray(p, cJSON_CreateNumber(child ? all[r].child_pid : all[r].pid));
    return s;
}

nt_status_t nt_measure_verify(nt_launcher_t *l, const nt_measure_backend_t *b,
                              nt_measure_peer_t *peer, const char *tuning_path,
                              unsigned long long min_bytes, unsigned long long max_bytes,
                              const nt_measure_opts_t *o, cJSON **doc, char *err, size_t errlen)
{
    *doc = NULL;
    int n = nt_launcher_size(l), rank = nt_launcher_rank(l);
    int mask = file_colls(tuning_path, n, err, errlen);
    if (mask <= 0)
        return NT_ERR_INVALID;
    const char *plugin_env = getenv("NCCL_TUNER_PLUGIN");
    char plugin[4096];
    snprintf(plugin, sizeof(plugin), "%s", plugin_env ? plugin_env : "");
    /* both sides start: ours with the plugin and the file, the child without either */
    nt_status_t st = make_tuned_comm(l, b, tuning_path, o->timeout_s, err, errlen);
    side_state_t me = {st, st == NT_OK ? b->ops->tuner_loaded(b->self) : 0, 0, (int32_t)getpid(),
                       peer->pid};
    char cerr[512] = "";
    int dl = 0;
    nt_status_t cst = nt_measure_peer_ready(peer, &dl, cerr, sizeof(cerr));
    me.defaults_loaded = dl;
    if (st == NT_OK && cst != NT_OK) {
        me.status = st = cst;
        snprintf(err, errlen, "%s", cerr);
    }
    side_state_t *all = calloc((size_t)n, sizeof(*all));
    if (!all)
        return NT_ERR_NOMEM;
    nt_status_t x = l->ops->allgather(l, &me, all, sizeof(me), o->timeout_s);
    int tuned_loaded = 0, defaults_loaded = 0;
    for (int r = 0; x == NT_OK && r < n; r++) {
        tuned_loaded += all[r].tuned_loaded != 0;
        defaults_loaded += all[r].defaults_loaded != 0;
        if (st == NT_OK && all[r].status != NT_OK) {
            snprintf(err, errlen, "rank %d could not start both sides (%s)", r,
                     nt_status_string((nt_status_t)all[r].status));
            st = NT_ERR_PEER;
        }
    }
    if (st == NT_OK && x != NT_OK) {
        snprintf(err, errlen, "the exchange after both sides started: %s", nt_status_string(x));
        st = x;
    }
    if (st == NT_OK && tuned_loaded < n) {
        snprintf(err, errlen,
                 "the tuned side has nettune's plugin loaded on %d of %d ranks "
                 "(NCCL_TUNER_PLUGIN=%s): no A/B",
                 tuned_loaded, n, plugin);
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && defaults_loaded > 0) {
        snprintf(err, errlen,
                 "the defaults side has nettune's plugin loaded on %d of %d ranks although "
                 "NCCL_TUNER_PLUGIN=none: it is not a run without it, no A/B",
                 defaults_loaded, n);
        st = NT_ERR_INVALID;
    }
    cJSON *d = NULL, *sizes = NULL;
    if (rank == 0) {
        d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "schema", "nettune.verify/1");
        cJSON_AddStringToObject(d, "backend", b->ops->name);
        cJSON_AddStringToObject(d, "tuning_file", tuning_path);
        cJSON_AddNumberToObject(d, "nranks", n);
        cJSON_AddNumberToObject(d, "rounds", o->trials);
        cJSON_AddNumberToObject(d, "warmup_iters", o->warmup);
        cJSON_AddNumberToObject(d, "iters", o->iters);
        cJSON_AddStringToObject(d, "order",
                                "ABBA: defaults first on even rounds, tuned first "
                                "on odd ones; one side on the GPU at a time");
        cJSON *sd = cJSON_AddObjectToObject(d, "sides");
        cJSON_AddItemToObject(sd, "tuned",
                              side_json("this process (plugin and file)", plugin, tuning_path,
                                        tuned_loaded, all, n, 0));
        cJSON_AddItemToObject(
            sd, "defaults",
            side_json("a child per rank (neither)", "none", NULL, defaults_loaded, all, n, 1));
        sizes = cJSON_AddArrayToObject(d, "sizes");
    }
    free(all);
    int rounds = o->trials > 0 ? o->trials : 1, nfast = 0, nslow = 0, nsame = 0, nsz = 0;
    double t0 = now_s(), logsum = 0, *tdef = calloc((size_t)rounds, sizeof(double)),
           *ttun = calloc((size_t)rounds, sizeof(double));
    if (!tdef || !ttun)
        st = st == NT_OK ? NT_ERR_NOMEM : st;
    for (int coll = 0; coll < 5 && st == NT_OK; coll++) {
        if (!(mask & 1 << coll))
            continue;
        int z = 0;
        for (unsigned long long bytes = min_bytes; bytes && bytes <= max_bytes && st == NT_OK;
             bytes <<= 1, z++) {
            /* the budget is rank 0's clock, broadcast: every rank stops before the same size */
            int32_t stop = o->budget_s > 0 && now_s() - t0 > o->budget_s;
            st = l->ops->bcast(l, &stop, sizeof(stop), 0, o->timeout_s);
            if (st == NT_OK && stop) {
                snprintf(err, errlen,
                         "--budget-seconds %.0f reached: the sizes measured so far are kept",
                         o->budget_s);
                st = NT_ERR_INTERRUPTED;
            }
            for (int r = 0; r < rounds && st == NT_OK; r++) {
                int defaults_first = nt_measure_verify_defaults_first(r);
                int warm = r == 0 ? o->warmup : 0;
                for (int k = 0; k < 2 && st == NT_OK; k++) {
                    int defaults = k == 0 ? defaults_first : !defaults_first;
                    if (defaults) {
                        st = nt_measure_peer_step(peer, coll, z, bytes, r, warm, o->iters, &tdef[r],
                                                  err, errlen);
                    } else {
                        nt_measure_opts_t oo = *o;
                        oo.warmup = warm;
                        st = nt_measure_verify_run(l, b, &oo, coll, z, bytes, r, &ttun[r], err,
                                                   errlen);
                    }
                }
            }
            if (st != NT_OK || rank != 0)
                continue;
            nt_measure_ab_t ab;
            nt_measure_ab_stats(tdef, ttun, rounds, &ab);
            nfast += !strcmp(ab.verdict, "faster");
            nslow += !strcmp(ab.verdict, "slower");
            nsame += !strcmp(ab.verdict, "same");
            logsum += log(ab.speedup);
            nsz++;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "coll", nt_coll_name(coll));
            cJSON_AddNumberToObject(e, "bytes", (double)bytes);
            cJSON_AddNumberToObject(e, "default_us", round(ab.default_us * 1000) / 1000);
            cJSON_AddNumberToObject(e, "tuned_us", round(ab.tuned_us * 1000) / 1000);
            cJSON_AddNumberToObject(e, "speedup", round(ab.speedup * 10000) / 10000);
            cJSON_AddNumberToObject(e, "speedup_min", round(ab.speedup_min * 10000) / 10000);
            cJSON_AddNumberToObject(e, "speedup_max", round(ab.speedup_max * 10000) / 10000);
            cJSON_AddStringToObject(e, "verdict", ab.verdict);
            cJSON_AddItemToArray(sizes, e);
        }
    }
    free(tdef);
    free(ttun);
    b->ops->comm_destroy(b->self);
    if (d) {
        cJSON *sm = cJSON_AddObjectToObject(d, "summary");
        cJSON_AddNumberToObject(sm, "sizes", nsz);
        cJSON_AddNumberToObject(sm, "faster", nfast);
        cJSON_AddNumberToObject(sm, "slower", nslow);
        cJSON_AddNumberToObject(sm, "same", nsame);
        cJSON_AddNumberToObject(sm, "geomean_speedup",
                                nsz ? round(exp(logsum / nsz) * 10000) / 10000 : 0);
        cJSON_AddBoolToObject(d, "completed", st == NT_OK);
        if (st != NT_OK)
            cJSON_AddStringToObject(d, "error", err);
    }
    *doc = d;
    return st;
}
