/* The fake measuring backend (tuner/measure/measure.h): a cost model with IGNORE cells, so the
 * sweep's lockstep, warm-up, confirmation and output are tested without a GPU. */
#include <stdio.h>
#include <stdlib.h>

#include "measure.h"
#include "tuner/model.h"

static nt_status_t fake_init(void *self, nt_launcher_t *l, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    nt_measure_fake_t *f = self;
    f->rank = nt_launcher_rank(l);
    f->last_algo = f->last_proto = -1;
    return NT_OK;
}

static nt_status_t fake_comm_create(void *self, nt_launcher_t *l, const nt_measure_comm_cfg_t *cfg,
                                    char *err, size_t errlen)
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
    f->file[f->slot & 1] = tf && *tf;
    return NT_OK;
}

static nt_status_t fake_run(void *self, int coll, unsigned long long bytes,
                            const nt_measure_cand_t *c, int warmup, int iters, double *time_us,
                            nt_measure_ran_t *ran, char *err, size_t errlen)
{
    (void)coll;
    (void)err;
    (void)errlen;
    nt_measure_fake_t *f = self;
    f->calls += (unsigned long)(warmup + iters);
    f->warmup_calls += (unsigned long)warmup;
    int def_algo = NT_ALGO_RING, def_proto = bytes < 65536 ? NT_PROTO_LL : NT_PROTO_SIMPLE;
    double def_us = 10 + (double)bytes / 1e4;
    if (c->is_default) {
        f->last_algo = f->last_proto = -1;
        *ran = (nt_measure_ran_t){def_algo, def_proto, 0, 1};
        *time_us = def_us * (1 + 0.01 * f->rank);
        if (f->file[f->slot & 1] && f->file_factor > 0)
            *time_us *= f->file_factor;
        return NT_OK;
    }
    f->last_algo = c->algo;
    f->last_proto = c->proto;
    if (c->algo == NT_ALGO_NVLS) { /* IGNORE here: NCCL's default runs */
        *ran = (nt_measure_ran_t){def_algo, def_proto, 0, 0};
        *time_us = def_us * (1 + 0.01 * f->rank);
        return NT_OK;
    }
    *ran = (nt_measure_ran_t){c->algo, c->proto, c->nchannels, 1};
    double us = c->predicted_us > 0 ? c->predicted_us : def_us;
    *time_us = us * (1 + 0.01 * f->rank);
    return NT_OK;
}

static void fake_comm_destroy(void *self)
{
    (void)self;
}

static void fake_select(void *self, int slot)
{
    ((nt_measure_fake_t *)self)->slot = slot & 1;
}

static void fake_finalize(void *self)
{
    (void)self;
}

const nt_measure_backend_ops_t nt_measure_fake_ops = {
    .name = "fake",
    .init = fake_init,
    .comm_create = fake_comm_create,
    .run = fake_run,
    .comm_destroy = fake_comm_destroy,
    .finalize = fake_finalize,
    .comm_select = fake_select,
};
