/* The fake measuring backend (tuner/measure/measure.h): a cost model with IGNORE cells, so the
 * sweep's lockstep, warm-up, confirmation and output, and --verify's two process groups, are
 * tested without a GPU. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "nt_index.h"
#include "nt_tuning.h"
#include "tuner/model.h"

static nt_status_t nt_fake_init(void *self, nt_launcher_t *l, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    nt_measure_fake_t *f = self;
    f->rank = nt_launcher_rank(l);
    f->last_algo = f->last_proto = -1;
    const char *v = getenv("NCCL_TUNER_PLUGIN");
    const char *always = getenv("NETTUNE_FAKE_PLUGIN_ALWAYS");
    f->plugin = !(v && !strcmp(v, "none")) || (always && *always == '1');
    if (f->file_factor == 0 && (v = getenv("NETTUNE_FAKE_FILE_FACTOR")))
        f->file_factor = atof(v);
    if ((v = getenv("NETTUNE_FAKE_JITTER")))
        f->jitter = atof(v);
    if ((v = getenv("NETTUNE_FAKE_SLEEP_US")))
        f->sleep_us = atol(v);
    if ((v = getenv("NETTUNE_FAKE_CHUNK_BEST")))
        f->chunk_best = (unsigned)strtoul(v, NULL, 10);
    f->chunk_gain = (v = getenv("NETTUNE_FAKE_CHUNK_GAIN")) ? atof(v) : 0.2;
    f->api_v5 = (v = getenv("NETTUNE_FAKE_API_V5")) && *v == '1';
    f->nranks = nt_launcher_size(l);
    if ((v = getenv("NETTUNE_FAKE_TRACE")))
        snprintf(f->trace, sizeof(f->trace), "%s", v);
    if ((v = getenv("NETTUNE_FAKE_DEFAULTS_FAIL")) &&
        sscanf(v, "%7[a-z]:%d:%lu", f->fail_mode, &f->fail_rank, &f->fail_at) != 3)
        f->fail_mode[0] = 0;
    return NT_OK;
}

static nt_status_t nt_fake_comm_create(void *self, nt_launcher_t *l,
                                       const nt_measure_comm_cfg_t *cfg, char *err, size_t errlen)
{
    (void)cfg;
    nt_measure_fake_t *f = self;
    if (f->fail_comm) {
        snprintf(err, errlen, "fake: communicator creation fails (test hook)");
        return NT_ERR_SYSTEM;
    }
    /* as the real one: rank 0's id reaches every rank */
    unsigned char id[128] = {0};
    if (f->rank == 0)
        id[0] = 42;
    nt_status_t st = l->ops->bcast(l, id, sizeof(id), 0, 10);
    if (st != NT_OK || id[0] != 42) {
        snprintf(err, errlen, "fake: unique id broadcast failed");
        return st != NT_OK ? st : NT_ERR_PEER;
    }
    f->comms++;
    const char *tf = getenv("NETTUNE_TUNING_FILE");
    f->file = tf && *tf;
    if (f->file && f->chunk_best && !f->rules) { /* the plugin's own reader and index */
        nt_tuning_t t;
        char e[256];
        memset(&t, 0, sizeof(t));
        nt_index_t *ix = calloc(1, sizeof(*ix));
        /* NCCL's node count: one per rank with --separate-nodes (NCCL_HOSTID), else one */
        size_t nnodes = getenv("NCCL_HOSTID") ? (size_t)f->nranks : 1;
        if (ix && nt_tuning_load(tf, NT_FORMAT_JSON, &t, e, sizeof(e)) == NT_TP_OK &&
            nt_index_build(&t, (size_t)f->nranks, nnodes, ix, e, sizeof(e)) == NT_TP_OK) {
            f->rules = ix;
        } else if (ix) {
            nt_index_destroy(ix);
            free(ix);
        }
        nt_tuning_cleanup(&t);
    }
    return NT_OK;
}

/* The chunk size the plugin answers getChunkSize with after its choice for (coll, bytes): the
 * fired rule's chunk_bytes (kept only where its basis is measured, nt_index.c), else 0. The
 * cost table is one where every cell runs. */
static unsigned nt_fake_file_chunk(const nt_measure_fake_t *f, int coll, unsigned long long bytes)
{
    if (!f->rules)
        return 0;
    float table[NT_NUM_ALGOS * NT_NUM_PROTOS];
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        table[i] = 100.0f;
    int nch = 0;
    int r = nt_index_decide(f->rules, coll, bytes, 1, 0, table, NT_NUM_ALGOS, NT_NUM_PROTOS, &nch);
    return r >= 0 ? ((nt_index_t *)f->rules)->rules[r].chunk_bytes : 0;
}

/* The fake's chunk-size effect (NETTUNE_FAKE_CHUNK_BEST in measure.h). */
static double nt_fake_chunk_factor(const nt_measure_fake_t *f, unsigned chunk)
{
    if (!chunk || !f->chunk_best)
        return 1;
    return chunk == f->chunk_best ? 1 - f->chunk_gain : 1.02;
}

static double nt_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The test hooks around one run: the defaults side's failure, the sleep, the trace line. */
static nt_status_t nt_fake_hooks(nt_measure_fake_t *f, int coll, unsigned long long bytes,
                                 char *err, size_t errlen)
{
    if (f->fail_mode[0] && !f->plugin && f->rank == f->fail_rank && f->runs == f->fail_at) {
        if (!strcmp(f->fail_mode, "die"))
            _exit(9);
        if (!strcmp(f->fail_mode, "hang"))
            for (;;)
                pause();
        snprintf(err, errlen, "fake: run %lu fails (test hook)", f->runs);
        return NT_ERR_SYSTEM;
    }
    double t0 = nt_mono();
    if (f->sleep_us > 0)
        usleep((useconds_t)f->sleep_us);
    if (f->trace[0]) {
        char line[256];
        int n = snprintf(line, sizeof(line), "%s %ld %d %d %llu %.6f %.6f\n",
                         f->file ? "tuned" : "defaults", (long)getpid(), f->rank, coll, bytes, t0,
                         nt_mono());
        int fd = open(f->trace, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            if (write(fd, line, (size_t)n) != n)
                perror("fake: trace");
            close(fd);
        }
    }
    return NT_OK;
}

static nt_status_t nt_fake_run(void *self, int coll, unsigned long long bytes,
                            const nt_measure_cand_t *c, int warmup, int iters, double *time_us,
                            nt_measure_ran_t *ran, char *err, size_t errlen)
{
    nt_measure_fake_t *f = self;
    f->runs++;
    nt_status_t st = nt_fake_hooks(f, coll, bytes, err, errlen);
    if (st != NT_OK)
        return st;
    f->calls += (unsigned long)(warmup + iters);
    f->warmup_calls += (unsigned long)warmup;
    int def_algo = NT_ALGO_RING, def_proto = bytes < 65536 ? NT_PROTO_LL : NT_PROTO_SIMPLE;
    double def_us = 10 + (double)bytes / 1e4;
    if (c->is_default) {
        f->last_algo = f->last_proto = -1;
        *ran = (nt_measure_ran_t){def_algo, def_proto, 0, 1, 1};
        *time_us = def_us * (1 + 0.01 * f->rank);
        if (f->file)
            *time_us *= nt_fake_chunk_factor(f, nt_fake_file_chunk(f, coll, bytes));
        if (f->file && f->file_factor > 0)
            *time_us *= f->file_factor;
        if (f->file && f->jitter > 0) /* runs 1, 2, 3, 4...: x (1 - j), 1, (1 + j), (1 - j)... */
            *time_us *= 1 + f->jitter * (double)((long)((f->runs - 1) % 3) - 1);
        return NT_OK;
    }
    f->last_algo = c->algo;
    f->last_proto = c->proto;
    if (c->algo == NT_ALGO_NVLS) { /* IGNORE here: NCCL's default runs */
        *ran = (nt_measure_ran_t){def_algo, def_proto, 0, 0, 1};
        *time_us = def_us * (1 + 0.01 * f->rank);
        return NT_OK;
    }
    *ran = (nt_measure_ran_t){c->algo, c->proto, c->nchannels, 1, !c->chunk_bytes || !f->api_v5};
    double us = c->predicted_us > 0 ? c->predicted_us : def_us;
    *time_us = us * (1 + 0.01 * f->rank) * nt_fake_chunk_factor(f, c->chunk_bytes);
    return NT_OK;
}

static void nt_fake_comm_destroy(void *self)
{
    nt_measure_fake_t *f = self;
    if (f->rules) {
        nt_index_destroy(f->rules);
        free(f->rules);
        f->rules = NULL;
    }
}

static void nt_fake_finalize(void *self)
{
    (void)self;
}

static int nt_fake_tuner_loaded(void *self)
{
    return ((nt_measure_fake_t *)self)->plugin;
}

const nt_measure_backend_ops_t nt_measure_fake_ops = {
    .name = "fake",
    .init = nt_fake_init,
    .comm_create = nt_fake_comm_create,
    .run = nt_fake_run,
    .comm_destroy = nt_fake_comm_destroy,
    .finalize = nt_fake_finalize,
    .tuner_loaded = nt_fake_tuner_loaded,
};
