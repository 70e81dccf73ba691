/* The NCCL measuring backend (tuner/measure/measure.h): libcuda.so.1 and libnccl.so.2 are
 * loaded at run time, so the binary links neither. The few calls are declared here with the
 * upstream signatures: NVIDIA/nccl v2.28.9-1 src/nccl.h.in (ncclUniqueId, ncclConfig_v22800,
 * ncclCommInitRankConfig, ncclAllReduce...). The CUDA half is lib/node/cuda.c (include/nettune/cuda.h:
 * the driver API, dlopened once per process).
 * NOT RUN ON A GPU YET: everything below compiles here; only tests/gpu/measure.sh checks it. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "nettune/cuda.h"
#include "nt_control.h"

typedef nt_cu_stream_t CUstream; /* cudaStream_t and CUstream are the same pointer */

/* nccl.h (v2.28.9-1) */
typedef struct {
    char internal[128];
} ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef struct {
    size_t size;
    unsigned int magic, version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare, trafficClass;
    const char *commName;
    int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched;
} nt_nccl_config_t;
enum { NCCL_FLOAT32 = 7, NCCL_SUM = 0 };

typedef struct {
    void *nccl;
    int (*ncclGetVersion)(int *);
    int (*ncclGetUniqueId)(ncclUniqueId *);
    int (*ncclCommInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int, nt_nccl_config_t *);
    int (*ncclCommDestroy)(ncclComm_t);
    const char *(*ncclGetErrorString)(int);
    int (*ncclAllReduce)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    int (*ncclAllGather)(const void *, void *, size_t, int, ncclComm_t, CUstream);
    int (*ncclReduceScatter)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    int (*ncclBroadcast)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
    int (*ncclReduce)(const void *, void *, size_t, int, int, int, ncclComm_t, CUstream);
    nt_cu_device_t dev;
    nt_cu_ctx_t ctx;
    CUstream stream;
    nt_cu_ptr_t sendbuf, recvbuf;
    size_t bufbytes;
    ncclComm_t comm;
    int want_plugin; /* nt_measure_nccl_create */
    int rank, nranks, version;
    const nettune_tuner_control_v1_t *ctl;
} nccl_be_t;

void *nt_measure_nccl_create(int want_plugin)
{
    nccl_be_t *b = calloc(1, sizeof(nccl_be_t));
    if (b)
        b->want_plugin = want_plugin;
    return b;
}

void nt_measure_nccl_free(void *self)
{
    free(self);
}

#define SYM(h, name)                                                                               \
    do {                                                                                           \
        *(void **)&b->name = dlsym(b->h, #name);                                                   \
        if (!b->name) {                                                                            \
            snprintf(err, errlen, "%s has no %s", #h, #name);                                      \
            return NT_ERR_UNSUPPORTED;                                                             \
        }                                                                                          \
    } while (0)
static nt_status_t nt_nccl_init(void *self, nt_launcher_t *l, char *err, size_t errlen)
{
    nccl_be_t *b = self;
    b->rank = nt_launcher_rank(l);
    b->nranks = nt_launcher_size(l);
    int ndev = 0;
    if (nt_cuda_load(NULL, err, errlen) != NT_OK)
        return NT_ERR_UNSUPPORTED;
    if (nt_cu_device_count(&ndev) != NT_OK || ndev < 1) {
        snprintf(err, errlen, "no GPU visible (cuDeviceGetCount: %s)", nt_cuda_last_error());
        return NT_ERR_UNSUPPORTED;
    }
    const char *lr = getenv("NETTUNE_LOCAL_RANK");
    if (!lr)
        lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lr)
        lr = getenv("SLURM_LOCALID");
    int dev = (lr ? atoi(lr) : 0) % ndev;
    if (nt_cu_device_get(dev, &b->dev) != NT_OK || nt_cu_ctx_retain(b->dev, &b->ctx) != NT_OK ||
        nt_cu_ctx_set(b->ctx) != NT_OK || nt_cu_stream_create(&b->stream) != NT_OK) {
        snprintf(err, errlen, "GPU %d: cannot set up a context and a stream: %s", dev,
                 nt_cuda_last_error());
        return NT_ERR_SYSTEM;
    }
    /* NCCL loads the plugin named here at communicator creation: ours beside this binary
     * unless the user named one (NVIDIA/nccl v2.28.9-1 src/plugin/tuner.cc:56-61); the
     * defaults side of --verify has NCCL_TUNER_PLUGIN=none (tuner.cc:58) */
    if (b->want_plugin && !getenv("NCCL_TUNER_PLUGIN")) {
        char exe[PATH_MAX], plug[PATH_MAX + 64];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0) {
            exe[n] = 0;
            char *s = strrchr(exe, '/');
            if (s)
                *s = 0;
            snprintf(plug, sizeof(plug), "%s/../lib/libnccl-tuner-nettune.so", exe);
            setenv("NCCL_TUNER_PLUGIN", plug, 1);
        }
    }
    const char *lib = getenv("NETTUNE_NCCL_LIB");
    b->nccl = dlopen(lib && *lib ? lib : "libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!b->nccl) {
        snprintf(err, errlen, "cannot load %s: %s (set NETTUNE_NCCL_LIB or LD_LIBRARY_PATH)",
                 lib && *lib ? lib : "libnccl.so.2", dlerror());
        return NT_ERR_UNSUPPORTED;
    }
    SYM(nccl, ncclGetVersion);
    SYM(nccl, ncclGetUniqueId);
    SYM(nccl, ncclCommInitRankConfig);
    SYM(nccl, ncclCommDestroy);
    SYM(nccl, ncclGetErrorString);
    SYM(nccl, ncclAllReduce);
    SYM(nccl, ncclAllGather);
    SYM(nccl, ncclReduceScatter);
    SYM(nccl, ncclBroadcast);
    SYM(nccl, ncclReduce);
    b->ncclGetVersion(&b->version);
    return NT_OK;
}

static const nettune_tuner_control_v1_t *nt_find_control(void)
{
    const char *names[] = {getenv("NCCL_TUNER_PLUGIN"), "libnccl-tuner-nettune.so"};
    for (size_t i = 0; i < 2; i++) {
        if (!names[i] || !*names[i])
            continue;
        void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (!h)
            continue;
        const nettune_tuner_control_v1_t *c = dlsym(h, NETTUNE_TUNER_CONTROL_SYMBOL);
        dlclose(h); /* NCCL holds its own reference */
        if (c && c->version == NETTUNE_TUNER_CONTROL_VERSION)
            return c;
    }
    return NULL;
}

static nt_status_t nt_nccl_comm_create(void *self, nt_launcher_t *l,
                                       const nt_measure_comm_cfg_t *cfg, char *err, size_t errlen)
{
    nccl_be_t *b = self;
    ncclUniqueId id;
    memset(&id, 0, sizeof(id));
    int r = b->rank == 0 ? b->ncclGetUniqueId(&id) : 0;
    nt_status_t st = l->ops->bcast(l, &id, sizeof(id), 0, 120);
    if (r || st != NT_OK) {
        snprintf(err, errlen, "NCCL unique id: %s",
                 r ? b->ncclGetErrorString(r) : nt_status_string(st));
        return r ? NT_ERR_SYSTEM : st;
    }
    nt_nccl_config_t c = {sizeof(c), 0xcafebeef, 22809,   INT_MIN, INT_MIN, INT_MIN,
                          INT_MIN,   NULL,       INT_MIN, INT_MIN, NULL,    INT_MIN,
                          INT_MIN,   INT_MIN,    INT_MIN, INT_MIN, INT_MIN};
    if (cfg->min_ctas > 0)
        c.minCTAs = cfg->min_ctas;
    if (cfg->max_ctas > 0)
        c.maxCTAs = cfg->max_ctas;
    if (cfg->cga_cluster_size >= 0)
        c.cgaClusterSize = cfg->cga_cluster_size;
    c.blocking = 1;
    r = b->ncclCommInitRankConfig(&b->comm, b->nranks, id, b->rank, &c);
    if (r) {
        snprintf(err, errlen, "ncclCommInitRankConfig: %s", b->ncclGetErrorString(r));
        return NT_ERR_SYSTEM;
    }
    b->ctl = nt_find_control();
    if (!b->ctl && b->want_plugin) {
        snprintf(err, errlen,
                 "NCCL did not load the nettune plugin (NCCL_TUNER_PLUGIN=%s): "
                 "candidates cannot be forced",
                 getenv("NCCL_TUNER_PLUGIN") ? getenv("NCCL_TUNER_PLUGIN") : "");
        return NT_ERR_UNSUPPORTED;
    }
    return NT_OK;
}

static int nt_enqueue(nccl_be_t *b, int coll, unsigned long long bytes)
{
    size_t n = (size_t)(bytes / 4), per = n / (size_t)b->nranks;
    const void *s = (const void *)(uintptr_t)b->sendbuf;
    void *d = (void *)(uintptr_t)b->recvbuf;
    switch (coll) {
    case 0:
        return b->ncclBroadcast(s, d, n, NCCL_FLOAT32, 0, b->comm, b->stream);
    case 1:
        return b->ncclReduce(s, d, n, NCCL_FLOAT32, NCCL_SUM, 0, b->comm, b->stream);
    case 2:
        return b->ncclAllGather(s, d, per, NCCL_FLOAT32, b->comm, b->stream);
    case 3:
        return b->ncclReduceScatter(s, d, per, NCCL_FLOAT32, NCCL_SUM, b->comm, b->stream);
    default:
        return b->ncclAllReduce(s, d, n, NCCL_FLOAT32, NCCL_SUM, b->comm, b->stream);
    }
}

static nt_status_t nt_nccl_run(void *self, int coll, unsigned long long bytes,
                            const nt_measure_cand_t *c, int warmup, int iters, double *time_us,
                            nt_measure_ran_t *ran, char *err, size_t errlen)
{
    nccl_be_t *b = self;
    if (bytes < 4u * (unsigned)b->nranks)
        bytes = 4u * (unsigned)b->nranks;
    if (bytes > b->bufbytes) {
        if (b->sendbuf)
            nt_cu_mem_free(b->sendbuf), nt_cu_mem_free(b->recvbuf);
        b->sendbuf = b->recvbuf = 0;
        b->bufbytes = 0;
        if (nt_cu_mem_alloc(bytes, &b->sendbuf) != NT_OK ||
            nt_cu_mem_alloc(bytes, &b->recvbuf) != NT_OK) {
            snprintf(err, errlen, "cuMemAlloc of 2 x %llu bytes failed", bytes);
            return NT_ERR_NOMEM;
        }
        b->bufbytes = bytes;
    }
    if (!b->ctl && !c->is_default) {
        snprintf(err, errlen, "no nettune plugin in this process: candidate %d/%d cannot be forced",
                 c->algo, c->proto);
        return NT_ERR_INVALID;
    }
    if (b->ctl && c->is_default) /* no ctl: the defaults side of --verify, nothing to clear */
        b->ctl->clear();
    else if (b->ctl && b->ctl->force(c->algo, c->proto, c->nchannels) != 0) {
        snprintf(err, errlen, "the plugin refused candidate %d/%d", c->algo, c->proto);
        return NT_ERR_INVALID;
    }
    /* a chunk size through the control interface's version 2 (nt_control.h) */
    uint64_t writes = 0;
    if (b->ctl && c->chunk_bytes && !c->is_default) {
        if (b->ctl->version < 2 || b->ctl->force_chunk(c->chunk_bytes) != 0) {
            b->ctl->clear();
            snprintf(err, errlen,
                     "the plugin cannot force chunk size %u (control version %d: install the "
                     "plugin built with this nettune-tune-measure)",
                     c->chunk_bytes, b->ctl->version);
            return NT_ERR_INVALID;
        }
        writes = b->ctl->chunk_writes();
    }
    int r = 0;
    for (int i = 0; i < warmup && !r; i++) /* NCCL connects lazily: the first calls connect */
        r = nt_enqueue(b, coll, bytes);
    if (!r && nt_cu_stream_synchronize(b->stream) != NT_OK)
        r = -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0); /* nccl-tests: host timer around the loop */
    for (int i = 0; i < iters && !r; i++)
        r = nt_enqueue(b, coll, bytes);
    if (!r && nt_cu_stream_synchronize(b->stream) != NT_OK)
        r = -1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int chunk_applied = !c->chunk_bytes || c->is_default ||
                        (b->ctl && b->ctl->version >= 2 && b->ctl->chunk_writes() != writes);
    if (b->ctl)
        b->ctl->clear();
    if (r) {
        snprintf(err, errlen, "collective failed: %s",
                 r > 0 ? b->ncclGetErrorString(r) : "cuStreamSynchronize");
        return NT_ERR_SYSTEM;
    }
    *time_us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) * 1e-3) / iters;
    nettune_tuner_last_v1_t last;
    if (!b->ctl || b->ctl->last(&last) != 0 || last.coll != coll) {
        /* the plugin saw no call of this collective: NCCL did not ask it (one rank, or a
         * version that skips the tuner): nothing is confirmed */
        *ran = (nt_measure_ran_t){-1, -1, -1, 0, 0};
        return NT_OK;
    }
    *ran = (nt_measure_ran_t){last.algo, last.proto, last.nchannels,
                              c->is_default ? 1 : last.applied, chunk_applied};
    return NT_OK;
}

static void nt_nccl_comm_destroy(void *self)
{
    nccl_be_t *b = self;
    if (b->comm)
        b->ncclCommDestroy(b->comm);
    b->comm = NULL;
}

int nt_measure_nccl_sm(void *self)
{
    nccl_be_t *b = self;
    int major = 0, minor = 0;
    if (!b || !b->ctx || nt_cu_device_attr(b->dev, NT_CU_ATTR_CC_MAJOR, &major) != NT_OK ||
        nt_cu_device_attr(b->dev, NT_CU_ATTR_CC_MINOR, &minor) != NT_OK)
        return 0;
    return major * 10 + minor;
}

static int nt_nccl_tuner_loaded(void *self)
{
    nccl_be_t *b = self;
    /* looked up again: the defaults side has no b->ctl by design */
    return b->ctl != NULL || nt_find_control() != NULL;
}

static void nt_nccl_finalize(void *self)
{
    nccl_be_t *b = self;
    nt_nccl_comm_destroy(b);
    if (b->sendbuf)
        nt_cu_mem_free(b->sendbuf), nt_cu_mem_free(b->recvbuf);
    if (b->stream)
        nt_cu_stream_destroy(b->stream);
    if (b->ctx)
        nt_cu_ctx_release(b->dev);
    /* the libraries stay loaded: NCCL's threads may outlive the communicator briefly */
}

const nt_measure_backend_ops_t nt_measure_nccl_ops = {
    .name = "nccl",
    .init = nt_nccl_init,
    .comm_create = nt_nccl_comm_create,
    .run = nt_nccl_run,
    .comm_destroy = nt_nccl_comm_destroy,
    .finalize = nt_nccl_finalize,
    .tuner_loaded = nt_nccl_tuner_loaded,
};
