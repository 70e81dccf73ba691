/* The GPU probe (docs/gpu.md): NVML inventory, host<->device copies per GPU, device-local
 * copies, and the GPU-pair matrix (peer access, CE write/read/bidir, SM copy, flag latency),
 * measured through the CUDA driver API (lib/node/cuda.c) by local rank 0 of each node when it sees
 * every GPU, else by the ranks that see them, pairs across ranks through CUDA IPC handles (the
 * IPC mode, docs/gpu.md "Ranks that see one GPU each"). The rules (plan, budgets, expected
 * figures, verdicts, owners, who runs a test) are in lib/node/gpu.c; this file does the hardware
 * calls, the exchanges between the ranks of a node, and writes links and checks.
 *
 * Timing follows nvbandwidth (REFERENCE: CE and SM copies, a spin kernel holds the stream
 * until every copy is queued, CUDA events, median of samples): the spin kernel waits on a
 * flag in mapped pinned host memory, events are recorded around the queued copies, and the
 * host releases the flag. Without kernels (built without nvcc, or a driver that cannot load
 * them) the copies are timed by events alone and the SM and latency tests are skipped. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nettune/clock.h"
#include "nettune/cuda.h"
#include "nettune/gpu.h"
#include "nettune/launcher.h"
#include "nettune/log.h"
#include "nettune/nvml.h"
#include "nettune/pcie.h"
#include "nettune/stats.h"
#include "nettune/sysfs.h"
#include "nettune/thresholds.h"
#include "nodechecks.h"
#include "probe_gpu.h"
#include "probe_util.h"

extern const unsigned char nt_gpu_fatbin[];
extern const unsigned long long nt_gpu_fatbin_size;

#define NT_G_SAMPLES 3 /* nvbandwidth: median of 3 samples */
#define NT_G_SAMPLES_FULL 5
#define NT_G_MAX_COPIES 16 /* nvbandwidth: 16 copies per sample */
#define NT_G_WAIT_S 10.0   /* one sample may take this long before it is abandoned */
#define NT_G_SPIN_NS 2000000000ull
#define NT_G_LAT_ITERS 200
#define NT_TAG_GPU 4100 /* launcher tags of this probe: 4100 (control), 4101 (links) */

typedef struct nt_gdev {
    nt_gpu_info_t info, after;
    int numa;
    int lost; /* NVML cannot read it (fallen off the bus): no facts, no tests */
    int cuda; /* visible to CUDA (CUDA_VISIBLE_DEVICES may hide it) */
    nt_cu_device_t dev;
    nt_cu_ctx_t ctx;
    nt_cu_stream_t st[2];
    nt_cu_event_t ev[4];
    nt_cu_ptr_t buf[2], flags; /* flags: 64 ints for the ping-pong and the done counter */
    nt_cu_module_t mod;
    nt_cu_function_t spin, copy, pong;
    int sms;
    int load_gen, load_width, loaded; /* NVML's PCIe state read during H2D */
    int owner;         /* local rank that measures it (0 for all on the one-rank path), -1 none */
    nt_cu_event_t xev; /* owner, IPC mode: the interprocess event a partner's copies wait on */
} nt_gdev_t;

/* What the ranks of a node tell each other at set-up (one struct for every message: hello,
 * plan, handles, table; the unused parts are zero). */
typedef struct nt_gtab {
    int what;                    /* NT_GT_HELLO .. NT_GT_TABLE: the receiver checks it */
    char boot[40];               /* hello: the kernel's boot id (ranks of one machine share it) */
    int mode;                    /* plan/table: 0 no GPU probe, 1 one rank, 2 IPC */
    int owner[NT_NVML_MAX_GPUS]; /* hello: 1 where the rank sees the GPU; else its owner */
    int gok[NT_NVML_MAX_GPUS];   /* handles/table: the owner opened it */
    int sm_ok, remote_any;
    unsigned char peer_ok[NT_NVML_MAX_GPUS * NT_NVML_MAX_GPUS]; /* [a * ng + b] */
    nt_cu_ipc_handle_t mem[NT_NVML_MAX_GPUS][3];                /* buf[0], buf[1], flags */
    nt_cu_ipc_handle_t ev[NT_NVML_MAX_GPUS];
    char why[NT_NVML_MAX_GPUS][128]; /* handles: why the owner could not open it */
} nt_gtab_t;

enum { NT_GT_HELLO = 0x6e741, NT_GT_PLAN, NT_GT_HANDLES, NT_GT_TABLE };

/* A control message of a cross-rank test; both ends check test and what (lockstep). */
typedef struct nt_gmsg {
    int test, what, status, copies;
    double v[2];
} nt_gmsg_t;
enum {
    NT_GM_TURN = 1,  /* local rank 0 -> the test's ranks: run it (status 0), or not (copies:
                        the dead rank it would need); test -1: the plan ends here */
    NT_GM_DONE_TEST, /* the test's ranks -> local rank 0: this rank's part is over */
    NT_GM_GO,        /* issuer -> partner: the test runs (status != 0: it does not) */
    NT_GM_ARMED,     /* leader: its stream is held and its interprocess event recorded */
    NT_GM_QUEUED,    /* follower: its copies are queued behind that event */
    NT_GM_RESULT,    /* follower: its lane's rate */
    NT_GM_READY,     /* latency leader: its flags are zero */
    NT_GM_LAUNCHED,  /* latency follower: its kernel runs */
    NT_GM_DONE       /* latency follower: its kernel ended */
};

/* The other end of a cross-rank test. */
typedef struct nt_gx {
    int peer;         /* its local rank */
    int follower;     /* 1 on the partner */
    int test;         /* plan index */
    nt_cu_event_t ev; /* leader: its GPU's interprocess event; follower: that event, opened */
    nt_status_t err;  /* follower: it could not open the leader's memory or event */
} nt_gx_t;

typedef struct nt_hostbuf {
    int numa;
    void *p[2];
    size_t bytes;
} nt_hostbuf_t;

typedef struct nt_gstate {
    nt_gdev_t g[NT_NVML_MAX_GPUS];
    int ng, nok; /* NVML's GPUs, of which nok can be read */
    int nvml, cuda, sm_ok, active;
    char host[NT_HOST_MAX];
    size_t bytes;
    int samples;
    int *peer_ok, *nvml_p2p;
    char (*path)[16];
    double *pair_line;
    nt_hostbuf_t hb[8];
    int nhb;
    volatile int *hflag; /* mapped pinned host memory: [0] spin flag, [16] [32] latency flags */
    nt_cu_ptr_t hflag_d;
    int expect_nvlinks; /* --expect nvlinks=N, else the node class's, else -1 (the model) */
    int read_pcie;      /* GPU whose PCIe state nt_g_sample reads while copying, -1 none */
    int pcie_done;      /* the pcie_link checks are out */
    /* Ranks of the node (docs/gpu.md "Ranks that see one GPU each"): */
    int me, nlocal; /* local rank, ranks on this node */
    int ipc;        /* GPUs of several owners: pairs across ranks through CUDA IPC handles */
    int remote_any; /* the plan's remote_numa (local rank 0 decides for the node) */
    nt_launcher_t *l;
    const int *wrank;       /* world rank of each local rank */
    int dead[256];          /* per local rank: stopped answering */
    double t_long, t_short; /* deadlines: a turn of the plan, one step of a test */
    double t_peer;          /* --peer-timeout (30 s when unset) */
    double full_budget_max; /* the longest test budget of the plan */
    nt_gtab_t *tab;         /* IPC mode: the node's table (owners, handles, peer access) */
    nt_cu_ptr_t *imp;       /* [(i * ng + j) * 3 + k]: GPU j's buffer k opened for GPU i */
    nt_cu_event_t *impev;   /* [i * ng + j]: GPU j's interprocess event, opened for GPU i */
    int xfail;              /* the last cross-rank test failed on the other rank */
} nt_gstate_t;

/* One set-up message: sent with the launcher's deadline, received and checked for its kind (a
 * late message of a rank that missed an earlier deadline is not taken for the next one). */
static nt_status_t nt_g_tsend(nt_gstate_t *s, int peer, nt_gtab_t *t, int what, double timeout)
{
    t->what = what;
    return s->l->ops->send(s->l, s->wrank[peer], NT_TAG_GPU, t, sizeof(*t), timeout);
}

static nt_status_t nt_g_trecv(nt_gstate_t *s, int peer, nt_gtab_t *t, int what, double timeout)
{
    nt_status_t st = s->l->ops->recv(s->l, s->wrank[peer], NT_TAG_GPU, t, sizeof(*t), timeout);
    return st == NT_OK && t->what != what ? NT_ERR_PEER : st;
}

static int nt_g_mine(const nt_gstate_t *s, const nt_gdev_t *d)
{
    return d->owner == s->me;
}

/* ------------------------------------------------------------------ inventory (no CUDA) */

static int nt_g_numa_of(const nt_probe_t *p, const char *bus)
{
    char path[128];
    long long v = -1;
    int t = p->topo ? nt_topo_find_gpu(p->topo, bus) : -1;
    if (t >= 0 && p->topo->gpus[t].numa_node >= 0)
        return p->topo->gpus[t].numa_node;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bus);
    if (nt_sysfs_read_long(path, &v) == NT_OK && v >= 0)
        return (int)v;
    return -1;
}

/* NVLinks every GPU must have up: --expect nvlinks=N, else the thresholds class of this host
 * (matched with the GPU model), else -1 (the model's table decides). */
static int nt_g_expect_nvlinks(const nt_probe_t *p, const char *host, const char *model)
{
    nt_thresholds_t *t = NULL;
    nt_node_rules_t nr;
    nt_expect_t e;
    char err[256];
    int v = -1;

    if ((p->params->thresholds ? nt_thresholds_load(p->params->thresholds, &t, err, sizeof(err))
                               : nt_thresholds_defaults(&t)) == NT_OK &&
        nt_thresholds_for_host(t, host, model, &nr) == NT_OK)
        v = nr.expect.nvlinks;
    nt_thresholds_destroy(t);
    nt_expect_init(&e);
    if (p->params->expect &&
        nt_expect_parse(p->params->expect, NT_EXPECT_FOR_PROBE, &e, err, sizeof(err)) == NT_OK &&
        e.nvlinks >= 0)
        v = e.nvlinks;
    return v;
}

/* The node's "gpus": NVML facts over the hwloc entries (matched by bus id), NVML order. */
static void nt_g_inventory_json(nt_gstate_t *s, cJSON *node_json)
{
    cJSON *old = cJSON_DetachItemFromObjectCaseSensitive(node_json, "gpus");
    cJSON *arr = cJSON_CreateArray();
    if (!arr) {
        cJSON_Delete(old);
        return;
    }
    for (int i = 0; i < s->ng; i++) {
        cJSON *o = NULL, *it;
        int k = 0;
        if (s->g[i].lost)
            continue;
        cJSON_ArrayForEach (it, old) {
            if (nt_pci_bus_id_equal(nt_json_get_str(it, "pci_bus_id", ""), s->g[i].info.bus_id))
                break;
            k++;
        }
        o = it ? cJSON_DetachItemFromArray(old, k) : cJSON_CreateObject();
        if (!o)
            break;
        nt_gpu_info_to_json(&s->g[i].info, o);
        cJSON_AddItemToArray(arr, o);
    }
    /* GPUs hwloc saw and NVML did not: they stay, marked. */
    while (old && cJSON_GetArraySize(old) > 0) {
        cJSON *o = cJSON_DetachItemFromArray(old, 0);
        nt_json_add_str(o, "nvml", "not seen by NVML");
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_Delete(old);
    cJSON_AddItemToObject(node_json, "gpus", arr);
}

static void nt_g_check(cJSON *checks, cJSON *c)
{
    if (checks && c)
        cJSON_AddItemToArray(checks, c);
    else
        cJSON_Delete(c);
}

/* Checks from the inventory: what = 1: NVLinks and the Fabric Manager; what = 2: the PCIe
 * link of every GPU, once (the width always, the generation when read under load). */
static void nt_g_inventory_checks(nt_gstate_t *s, cJSON *checks, int what)
{
    char msg[512], tgt[64];
    int has_nvswitch = 0;

    for (int i = 0; i < s->ng; i++) {
        const nt_gpu_info_t *g = &s->g[i].info;
        int gen = s->g[i].loaded ? s->g[i].load_gen : g->pcie_gen;
        int width = s->g[i].loaded ? s->g[i].load_width : g->pcie_width;
        nt_verdict_t v;
        if (s->g[i].lost)
            continue;
        snprintf(tgt, sizeof(tgt), "gpu%d (%s)", i, g->bus_id);
        if (what == 2 && !s->pcie_done) {
            v = nt_gpu_pcie_verdict(gen, width, g->pcie_max_gen, g->pcie_max_width, s->g[i].loaded,
                                    msg, sizeof(msg));
            nt_g_check(checks, nt_check_create("pcie_link", s->host, tgt, v, width,
                                               g->pcie_max_width, "lanes", "%s", msg));
        }
        if (what == 2)
            continue;
        v = nt_gpu_nvlink_verdict(g, s->expect_nvlinks, s->nok > 1, msg, sizeof(msg));
        if (v != NT_SKIPPED || g->nlinks > 0)
            nt_g_check(checks, nt_check_create("nvlink_state", s->host, tgt, v, NAN, NAN, "links",
                                               "%s", msg));
        for (int l = 0; l < g->nlinks; l++)
            has_nvswitch |= g->links[l].remote == NT_NVLINK_REMOTE_SWITCH;
    }
    if (what == 2)
        s->pcie_done = 1;
    if (what == 1 && has_nvswitch) {
        for (int i = 0; i < s->ng; i++) {
            if (s->g[i].lost)
                continue;
            nt_fabric_state_t f = s->g[i].info.fabric_state;
            nt_verdict_t v = f == NT_FABRIC_COMPLETED && s->g[i].info.fabric_status == 0 ? NT_PASS
                             : f == NT_FABRIC_UNKNOWN ? NT_SKIPPED
                                                      : NT_FAIL;
            snprintf(tgt, sizeof(tgt), "gpu%d (%s)", i, s->g[i].info.bus_id);
            nt_g_check(checks, nt_check_create_str(
                                   "fabric_manager", s->host, tgt, v, nt_fabric_state_string(f),
                                   "completed", "%s",
                                   v == NT_PASS ? "NVSwitch fabric registration completed"
                                   : v == NT_SKIPPED
                                       ? "not judged: NVML gives no fabric state (driver < R530)"
                                       : "NVSwitch fabric not ready: is nvidia-fabricmanager "
                                         "running?"));
        }
    }
}

/* ------------------------------------------------------------------ CUDA set-up */

static nt_status_t nt_g_open(nt_gstate_t *s, nt_gdev_t *d, int need_mem)
{
    nt_status_t st;
    int v = 0;
    if ((st = nt_cu_device_by_bus_id(d->info.bus_id, &d->dev)) != NT_OK)
        return st;
    d->cuda = 1;
    if (!need_mem)
        return NT_OK;
    if ((st = nt_cu_ctx_retain(d->dev, &d->ctx)) != NT_OK)
        return st;
    if (nt_cu_device_attr(d->dev, NT_CU_ATTR_MULTIPROCESSOR_COUNT, &v) == NT_OK)
        d->sms = v;
    for (int k = 0; k < 2 && st == NT_OK; k++)
        st = nt_cu_stream_create(&d->st[k]);
    for (int k = 0; k < 4 && st == NT_OK; k++)
        st = nt_cu_event_create(&d->ev[k]);
    for (int k = 0; k < 2 && st == NT_OK; k++)
        st = nt_cu_mem_alloc(s->bytes, &d->buf[k]);
    if (st == NT_OK)
        st = nt_cu_mem_alloc(256, &d->flags);
    for (int k = 0; k < 2 && st == NT_OK; k++)
        st = nt_cu_memset_d32_async(d->buf[k], 0x5a5a5a5au + (unsigned)k, s->bytes / 4, d->st[0]);
    if (st == NT_OK)
        st = nt_cu_memset_d32_async(d->flags, 0, 64, d->st[0]);
    if (st == NT_OK)
        st = nt_cu_stream_synchronize(d->st[0]);
    if (st == NT_OK && s->sm_ok && nt_gpu_fatbin_size > 0) {
        if (nt_cu_module_load(nt_gpu_fatbin, &d->mod) == NT_OK &&
            nt_cu_module_function(d->mod, "nt_spin", &d->spin) == NT_OK &&
            nt_cu_module_function(d->mod, "nt_copy", &d->copy) == NT_OK &&
            nt_cu_module_function(d->mod, "nt_pong", &d->pong) == NT_OK)
            return NT_OK;
        s->sm_ok = 0;
        d->spin = d->copy = d->pong = NULL;
    }
    return st;
}

static void nt_g_close(nt_gdev_t *d)
{
    if (!d->ctx)
        return;
    nt_cu_ctx_set(d->ctx);
    for (int k = 0; k < 2; k++) {
        if (d->st[k])
            nt_cu_stream_synchronize(d->st[k]);
        if (d->buf[k])
            nt_cu_mem_free(d->buf[k]);
    }
    if (d->flags)
        nt_cu_mem_free(d->flags);
    for (int k = 0; k < 4; k++)
        if (d->ev[k])
            nt_cu_event_destroy(d->ev[k]);
    for (int k = 0; k < 2; k++)
        if (d->st[k])
            nt_cu_stream_destroy(d->st[k]);
    if (d->mod)
        nt_cu_module_unload(d->mod);
    nt_cu_ctx_release(d->dev);
    d->ctx = NULL;
}

/* Pinned host memory on NUMA node numa (-1 = anywhere): mmap, mbind, touch, register. */
static nt_hostbuf_t *nt_g_hostbuf(nt_gstate_t *s, int numa)
{
    nt_hostbuf_t *h;
    for (int i = 0; i < s->nhb; i++)
        if (s->hb[i].numa == numa)
            return &s->hb[i];
    if (s->nhb >= 8)
        return NULL;
    h = &s->hb[s->nhb];
    memset(h, 0, sizeof(*h));
    h->numa = numa;
    h->bytes = s->bytes;
    for (int k = 0; k < 2; k++) {
        void *p = mmap(NULL, s->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            goto fail;
        if (numa >= 0 && numa < 64) {
            unsigned long mask = 1ul << numa;
            /* MPOL_BIND = 2 (linux/mempolicy.h); no libnuma needed */
            if (syscall(SYS_mbind, p, s->bytes, 2, &mask, 65ul, 0u) != 0)
                NT_DEBUG(INIT, "mbind to NUMA node %d failed: %s", numa, strerror(errno));
        }
        memset(p, 0x3c + k, s->bytes);
        if (nt_cu_host_register(p, s->bytes,
                                NT_CU_MEMHOSTREGISTER_PORTABLE | NT_CU_MEMHOSTREGISTER_DEVICEMAP) !=
            NT_OK) {
            munmap(p, s->bytes);
            goto fail;
        }
        h->p[k] = p;
    }
    s->nhb++;
    return h;
fail:
    for (int k = 0; k < 2; k++)
        if (h->p[k]) {
            nt_cu_host_unregister(h->p[k]);
            munmap(h->p[k], s->bytes);
            h->p[k] = NULL;
        }
    return NULL;
}

/* The nearest other NUMA node with memory (by /sys/devices/system/node distance), -1. */
static int nt_g_remote_numa(const nt_probe_t *p, int local)
{
    char path[96], buf[512] = "";
    int nodes[64], n = 0;
    if (!p->topo || local < 0 || p->topo->nnuma < 2)
        return -1;
    for (int i = 0; i < p->topo->nnuma && n < 64; i++)
        if (p->topo->numa[i].memory_bytes > 0)
            nodes[n++] = p->topo->numa[i].os_index;
    snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/distance", local);
    if (nt_sysfs_read_str(path, buf, sizeof(buf)) != NT_OK)
        buf[0] = '\0';
    return nt_gpu_nearest_numa(buf, local, nodes, n);
}

/* ------------------------------------------------------------------ timed copies */

typedef struct nt_lane {
    nt_gdev_t *d; /* the GPU that issues the copies */
    int k;        /* its stream */
    nt_cu_ptr_t dst, src;
} nt_lane_t;

static nt_status_t nt_g_wait(nt_cu_stream_t s, double timeout_s)
{
    double end = nt_clock_s() + timeout_s;
    nt_status_t st;
    while ((st = nt_cu_stream_query(s)) == NT_ERR_TIMEOUT) {
        if (nt_clock_s() > end)
            return NT_ERR_TIMEOUT;
        sched_yield();
    }
    return st;
}

/* Control messages between the ranks of a node (every wait has a deadline; a rank that misses
 * one is dead for the rest of the run and is not waited for again). */
static nt_status_t nt_g_xsend(nt_gstate_t *s, int peer, int test, int what, nt_status_t st,
                              int copies, const double *v)
{
    nt_gmsg_t m = {test, what, (int)st, copies, {NAN, NAN}};
    nt_status_t r;
    if (peer < 0 || peer >= s->nlocal || s->dead[peer])
        return NT_ERR_PEER;
    if (v)
        m.v[0] = v[0], m.v[1] = v[1];
    r = s->l->ops->send(s->l, s->wrank[peer], NT_TAG_GPU, &m, sizeof(m), s->t_short);
    if (r != NT_OK)
        s->dead[peer] = 1;
    return r;
}

static nt_status_t nt_g_xrecv(nt_gstate_t *s, int peer, int test, int what, double timeout,
                              nt_gmsg_t *m)
{
    nt_status_t r;
    if (peer < 0 || peer >= s->nlocal || s->dead[peer])
        return NT_ERR_PEER;
    r = s->l->ops->recv(s->l, s->wrank[peer], NT_TAG_GPU, m, sizeof(*m), timeout);
    if (r == NT_OK &&
        ((m->test != test && !(what == NT_GM_TURN && m->test == -1)) || m->what != what)) {
        NT_WARN(INIT, "GPU probe: local rank %d sent message %d of test %d, expected %d of %d",
                peer, m->what, m->test, what, test);
        r = NT_ERR_PEER;
    }
    if (r != NT_OK)
        s->dead[peer] = 1;
    return r;
}

static const char *nt_g_dead_why(const nt_gstate_t *s, int peer, char *buf, size_t len)
{
    snprintf(buf, len, "local rank %d (world rank %d) did not answer within its deadline", peer,
             peer >= 0 && peer < s->nlocal ? s->wrank[peer] : -1);
    return buf;
}

/* GPU j's buffer k (2 = flags) as GPU i's stream addresses it: its own when this rank owns j,
 * else opened from j's owner's IPC handle in i's context (once, closed at cleanup). */
static nt_status_t nt_g_buf(nt_gstate_t *s, int i, int j, int k, nt_cu_ptr_t *out)
{
    nt_gdev_t *d = &s->g[j];
    nt_cu_ptr_t *slot;
    nt_status_t st;
    *out = 0;
    if (nt_g_mine(s, d)) {
        *out = k == 2 ? d->flags : d->buf[k];
        return NT_OK;
    }
    if (!s->tab || !s->imp || !s->g[i].ctx)
        return NT_ERR_UNSUPPORTED;
    slot = &s->imp[((size_t)i * s->ng + j) * 3 + k];
    if (!*slot) {
        nt_cu_ctx_set(s->g[i].ctx);
        if ((st = nt_cu_ipc_open(&s->tab->mem[j][k], slot)) != NT_OK) {
            *slot = 0;
            return st;
        }
    }
    *out = *slot;
    return NT_OK;
}

/* GPU j's interprocess event, opened for GPU i (the follower of a cross-rank bidir test). */
static nt_status_t nt_g_xevent(nt_gstate_t *s, int i, int j, nt_cu_event_t *out)
{
    nt_cu_event_t *slot = &s->impev[(size_t)i * s->ng + j];
    nt_status_t st = NT_OK;
    if (!*slot) {
        nt_cu_ctx_set(s->g[i].ctx);
        if ((st = nt_cu_ipc_event_open(&s->tab->ev[j], slot)) != NT_OK)
            *slot = NULL;
    }
    *out = *slot;
    return st;
}

static nt_status_t nt_g_issue(nt_gstate_t *s, const nt_lane_t *ln, size_t bytes, int sm)
{
    nt_cu_stream_t st = ln->d->st[ln->k];
    if (sm) {
        unsigned long long n = bytes / 16;
        void *args[] = {(void *)&ln->src, (void *)&ln->dst, &n};
        unsigned grid = (unsigned)(ln->d->sms > 0 ? ln->d->sms * 4 : 128);
        (void)s;
        return nt_cu_launch(ln->d->copy, grid, 512, st, args);
    }
    return nt_cu_memcpy_async(ln->dst, ln->src, bytes, st);
}

/* One sample: per lane, spin kernel, event, `copies` copies, event; release; wait. Bps[l] is
 * lane l's rate. Only the lanes of GPUs this rank owns run here. With x (a test across two
 * ranks), the leader holds its stream with the spin kernel and records its interprocess event
 * behind it; the follower's stream waits on that event, so both ends' copies start when the
 * leader releases its flag, and the follower sends its lane's rate back:
 *   leader: arm, ARMED ->   follower: wait event, queue, QUEUED ->   leader: release, wait;
 *   follower: wait, RESULT ->. Every receive has a deadline. */
static nt_status_t nt_g_sample(nt_gstate_t *s, const nt_lane_t *ln, int nl, size_t bytes, int sm,
                               int copies, double *Bps, const nt_gx_t *x)
{
    nt_status_t st = NT_OK, xs = NT_OK;
    nt_gmsg_t m;
    int follow = x && x->follower, queued = 0; /* leader: QUEUED came (so RESULT follows) */

    for (int l = 0; l < nl; l++)
        Bps[l] = NAN;
    if (follow) {
        if ((st = nt_g_xrecv(s, x->peer, x->test, NT_GM_ARMED, s->t_short, &m)) != NT_OK)
            return st;
        if (m.status != NT_OK)
            return (nt_status_t)m.status;
        copies = m.copies;
        st = x->err; /* no copies from a follower that could not open the leader's memory */
    } else {
        s->hflag[0] = 0;
        __sync_synchronize();
    }
    for (int l = 0; l < nl && st == NT_OK; l++) {
        nt_gdev_t *d = ln[l].d;
        nt_cu_stream_t str = d->st[ln[l].k];
        unsigned long long to = NT_G_SPIN_NS;
        void *args[] = {(void *)&s->hflag_d, &to};
        if (!nt_g_mine(s, d))
            continue;
        st = nt_cu_ctx_set(d->ctx);
        if (st == NT_OK && follow)
            st = nt_cu_stream_wait_event(str, x->ev);
        else if (st == NT_OK && d->spin)
            st = nt_cu_launch(d->spin, 1, 1, str, args);
        if (st == NT_OK)
            st = nt_cu_event_record(d->ev[2 * ln[l].k], str);
        if (st == NT_OK && x && !follow)
            st = nt_cu_event_record(x->ev, str); /* the follower's copies start with these */
        for (int c = 0; c < copies && st == NT_OK; c++)
            st = nt_g_issue(s, &ln[l], bytes, sm);
        if (st == NT_OK)
            st = nt_cu_event_record(d->ev[2 * ln[l].k + 1], str);
    }
    if (follow) {
        xs = nt_g_xsend(s, x->peer, x->test, NT_GM_QUEUED, st, copies, NULL);
    } else if (x) {
        xs = nt_g_xsend(s, x->peer, x->test, NT_GM_ARMED, st, copies, NULL);
        if (xs == NT_OK && st == NT_OK &&
            (xs = nt_g_xrecv(s, x->peer, x->test, NT_GM_QUEUED, s->t_short, &m)) == NT_OK) {
            queued = 1;
            if (m.status != NT_OK) {
                xs = (nt_status_t)m.status;
                s->xfail = 1;
            }
        }
        if (st == NT_OK)
            st = xs; /* (the peer's failure or silence is this test's failure) */
        xs = NT_OK;
    }
    if (!follow) {
        s->hflag[0] = 1;
        __sync_synchronize();
    }
    /* Under load: NVML's current PCIe state while these copies run (idle GPUs train down). */
    if (st == NT_OK && s->read_pcie >= 0 && s->nvml) {
        nt_gdev_t *g = &s->g[s->read_pcie];
        if (nt_nvml_pcie_current(s->read_pcie, &g->load_gen, &g->load_width) == NT_OK)
            g->loaded = 1;
    }
    for (int l = 0; l < nl; l++) {
        nt_status_t w;
        float ms = 0;
        if (!nt_g_mine(s, ln[l].d))
            continue;
        w = nt_g_wait(ln[l].d->st[ln[l].k], NT_G_WAIT_S);
        if (st == NT_OK)
            st = w;
        if (st == NT_OK) {
            nt_cu_ctx_set(ln[l].d->ctx);
            st = nt_cu_event_elapsed(ln[l].d->ev[2 * ln[l].k], ln[l].d->ev[2 * ln[l].k + 1], &ms);
        }
        Bps[l] = st == NT_OK && ms > 0 ? (double)copies * (double)bytes / (ms * 1e-3) : NAN;
    }
    if (follow && xs == NT_OK) {
        double v[2] = {nl > 0 ? Bps[0] : NAN, nl > 1 ? Bps[1] : NAN};
        xs = nt_g_xsend(s, x->peer, x->test, NT_GM_RESULT, st, copies, v);
    } else if (x && !follow && queued) {
        nt_status_t rs = nt_g_xrecv(s, x->peer, x->test, NT_GM_RESULT, s->t_short, &m);
        if (rs == NT_OK && m.status != NT_OK) {
            rs = (nt_status_t)m.status;
            s->xfail = 1;
        }
        if (st == NT_OK)
            st = rs;
        for (int l = 0; l < nl && l < 2 && st == NT_OK; l++)
            if (!nt_g_mine(s, ln[l].d))
                Bps[l] = m.v[l];
    }
    return st != NT_OK ? st : xs;
}

/* A measurement: one warm-up copy (it sets the copies per sample from the budget), then the
 * samples. out[l] gets lane l's samples (B/s); *iters the copies per sample. Across two ranks
 * (x) both ends run every sample whatever failed (so that their messages stay in step) and
 * the leader's copies per sample hold for both. */
static nt_status_t nt_g_measure(nt_gstate_t *s, const nt_lane_t *ln, int nl, int sm, double budget,
                                double out[2][NT_G_SAMPLES_FULL], unsigned *iters, const nt_gx_t *x)
{
    double first[2] = {NAN, NAN}, t0 = nt_clock_s(), one;
    int copies = 1;
    nt_status_t st = nt_g_sample(s, ln, nl, s->bytes, sm, 1, first, x), st1 = st;
    if (st != NT_OK && !x)
        return st;
    one = nt_clock_s() - t0;
    if (st == NT_OK)
        copies = nt_gpu_copies_per_sample(budget, s->samples, one, NT_G_MAX_COPIES);
    *iters = (unsigned)copies;
    for (int i = 0; i < s->samples && (x || st == NT_OK); i++) {
        double b[2] = {NAN, NAN};
        if (x && s->dead[x->peer])
            break;
        st = nt_g_sample(s, ln, nl, s->bytes, sm, copies, b, x);
        if (st1 == NT_OK)
            st1 = st;
        for (int l = 0; l < nl; l++)
            out[l][i] = b[l];
    }
    return x ? st1 : st;
}

/* ------------------------------------------------------------------ links */

static cJSON *nt_g_link(nt_gstate_t *s, const nt_probe_t *p, const char *kind, const char *variant,
                        const char *src, const char *dst)
{
    cJSON *l = nt_probe_link_new(kind, variant, NT_SCOPE_INTRA, s->host, p->rank, src, s->host,
                                 p->rank, dst ? dst : src);
    char pc[96];
    if (l && !dst) {
        char id[256];
        nt_gpu_link_id(id, sizeof(id), kind, variant, s->host, src, NULL);
        cJSON_ReplaceItemInObjectCaseSensitive(l, "id", cJSON_CreateString(id));
    }
    nt_gpu_peer_class(pc, sizeof(pc), kind, variant, NULL);
    if (l)
        nt_json_add_str(l, "peer_class", pc);
    return l;
}

static void nt_g_add_bw(cJSON *link, size_t bytes, unsigned iters, const double *Bps, int n,
                        double line)
{
    nt_stats_t stt;
    if (nt_stats_compute(Bps, (size_t)n, &stt) == NT_OK)
        nt_probe_add_bw_sample(link, bytes, iters, &stt);
    if (isfinite(line))
        nt_json_add_num(link, "line_rate_GBps", line);
}

static void nt_g_error(cJSON *link, const char *what)
{
    cJSON *e = nt_json_add_arr(link, "errors");
    char buf[400];
    snprintf(buf, sizeof(buf), "%s: %s", what,
             nt_cuda_last_error()[0] ? nt_cuda_last_error() : "failed");
    if (e)
        cJSON_AddItemToArray(e, cJSON_CreateString(buf));
}

static void nt_g_push(cJSON *out, cJSON *l)
{
    if (l)
        cJSON_AddItemToArray(out, l);
}

/* Round trips of a latency sample: NT_G_LAT_ITERS, or $NETTUNE_TEST_GPU_LAT_ITERS (a test hook:
 * the CPU simulation of make test-gpu shares two loaded cores). */
static int nt_g_lat_iters(void)
{
    const char *e = getenv("NETTUNE_TEST_GPU_LAT_ITERS");
    int v = e ? atoi(e) : 0;
    return v > 0 && v <= 100000 ? v : NT_G_LAT_ITERS;
}

/* Host latency: the CPU and a one-thread kernel ping-pong through mapped pinned memory;
 * lat_s gets one-way seconds per sample. */
static nt_status_t nt_g_host_lat(nt_gstate_t *s, nt_gdev_t *d, double *lat_s, int n)
{
    volatile int *a = s->hflag + 16, *b = s->hflag + 32;
    nt_cu_ptr_t ad = s->hflag_d + 16 * sizeof(int), bd = s->hflag_d + 32 * sizeof(int);
    int iters = nt_g_lat_iters(), first = 0;
    unsigned long long to = NT_G_SPIN_NS;
    nt_status_t st = NT_OK;

    for (int smp = 0; smp < n && st == NT_OK; smp++) {
        double t0, t1, end;
        int i;
        void *args[] = {&ad, &bd, &iters, &first, &to, (void *)&d->flags};
        *a = 0;
        *b = 0;
        __sync_synchronize();
        nt_cu_ctx_set(d->ctx);
        st = nt_cu_launch(d->pong, 1, 1, d->st[0], args);
        if (st != NT_OK)
            break;
        t0 = nt_clock_s();
        end = t0 + 2.0;
        for (i = 0; i < iters; i++) {
            *a = 2 * i + 1;
            __sync_synchronize();
            while (*b != 2 * i + 2 && nt_clock_s() < end)
                ;
            if (*b != 2 * i + 2)
                break;
        }
        t1 = nt_clock_s();
        st = nt_g_wait(d->st[0], NT_G_WAIT_S);
        if (i < iters)
            st = NT_ERR_TIMEOUT;
        lat_s[smp] = (t1 - t0) / (2.0 * iters);
    }
    return st;
}

/* Pair latency: kernels on both GPUs ping-pong through flags in each other's memory; lat_s
 * gets one-way seconds per sample (timed by events on a). Only the kernels of GPUs this rank
 * owns are launched here; across two ranks (x) the leader (a's owner) zeroes its flags, the
 * follower zeroes its own and starts b's kernel, then a's kernel starts:
 *   leader: READY ->   follower: LAUNCHED ->   leader: launch, wait;   follower: DONE ->. */
static nt_status_t nt_g_pair_lat(nt_gstate_t *s, nt_gdev_t *a, nt_gdev_t *b, double *lat_s, int n,
                                 const nt_gx_t *x)
{
    int iters = nt_g_lat_iters(), one = 1, zero = 0, ia = (int)(a - s->g), ib = (int)(b - s->g);
    int follow = x && x->follower;
    unsigned long long to = NT_G_SPIN_NS;
    nt_cu_ptr_t am = a->flags, bm = b->flags, ab_t = 0, ba_t = 0, adone = a->flags + 128,
                bdone = b->flags + 128;
    nt_status_t st = NT_OK, first = NT_OK, st0;

    /* the other GPU's flags as each kernel addresses them */
    if (nt_g_mine(s, a))
        st = nt_g_buf(s, ia, ib, 2, &ab_t);
    if (st == NT_OK && nt_g_mine(s, b))
        st = nt_g_buf(s, ib, ia, 2, &ba_t);
    st0 = st;
    for (int smp = 0; smp < n && (x || st == NT_OK); smp++) {
        void *ab[] = {&am, &ab_t, &iters, &one, &to, &adone};
        void *ba[] = {&bm, &ba_t, &iters, &zero, &to, &bdone};
        float ms = 0;
        nt_gmsg_t m;
        nt_status_t xs = NT_OK;
        if (x && s->dead[x->peer])
            break;
        lat_s[smp] = NAN;
        if (x)
            st = st0; /* a failed open fails every sample, the messages still go */
        if (follow) {
            if ((xs = nt_g_xrecv(s, x->peer, x->test, NT_GM_READY, s->t_short, &m)) != NT_OK ||
                m.status != NT_OK) {
                if (first == NT_OK)
                    first = xs != NT_OK ? xs : (nt_status_t)m.status;
                continue;
            }
        }
        if (nt_g_mine(s, b)) {
            nt_cu_ctx_set(b->ctx);
            if (st == NT_OK)
                st = nt_cu_memset_d32_async(b->flags, 0, 8, b->st[1]);
            if (st == NT_OK)
                st = nt_cu_stream_synchronize(b->st[1]);
        }
        if (nt_g_mine(s, a)) {
            nt_cu_ctx_set(a->ctx);
            if (st == NT_OK)
                st = nt_cu_memset_d32_async(a->flags, 0, 8, a->st[1]);
            if (st == NT_OK)
                st = nt_cu_stream_synchronize(a->st[1]);
        }
        if (x && !follow) {
            if ((xs = nt_g_xsend(s, x->peer, x->test, NT_GM_READY, st, 0, NULL)) == NT_OK &&
                st == NT_OK &&
                (xs = nt_g_xrecv(s, x->peer, x->test, NT_GM_LAUNCHED, s->t_short, &m)) == NT_OK &&
                (xs = (nt_status_t)m.status) != NT_OK)
                s->xfail = 1;
            if (st == NT_OK)
                st = xs;
            if (st != NT_OK) {
                if (first == NT_OK)
                    first = st;
                continue;
            }
        }
        if (nt_g_mine(s, b)) {
            nt_cu_ctx_set(b->ctx);
            if (st == NT_OK)
                st = nt_cu_launch(b->pong, 1, 1, b->st[1], ba);
        }
        if (follow) {
            xs = nt_g_xsend(s, x->peer, x->test, NT_GM_LAUNCHED, st, 0, NULL);
            if (st != NT_OK || xs != NT_OK) {
                if (first == NT_OK)
                    first = st != NT_OK ? st : xs;
                continue;
            }
        }
        if (nt_g_mine(s, a)) {
            nt_cu_ctx_set(a->ctx);
            if (st == NT_OK)
                st = nt_cu_event_record(a->ev[2], a->st[1]);
            if (st == NT_OK)
                st = nt_cu_launch(a->pong, 1, 1, a->st[1], ab);
            if (st == NT_OK)
                st = nt_cu_event_record(a->ev[3], a->st[1]);
            if (st == NT_OK)
                st = nt_g_wait(a->st[1], NT_G_WAIT_S);
        }
        if (nt_g_mine(s, b) && st == NT_OK)
            st = nt_g_wait(b->st[1], NT_G_WAIT_S);
        if (follow) {
            xs = nt_g_xsend(s, x->peer, x->test, NT_GM_DONE, st, 0, NULL);
        } else if (x) {
            if ((xs = nt_g_xrecv(s, x->peer, x->test, NT_GM_DONE, s->t_short, &m)) == NT_OK)
                xs = (nt_status_t)m.status;
            if (st == NT_OK)
                st = xs;
        }
        if (nt_g_mine(s, a) && st == NT_OK) {
            nt_cu_ctx_set(a->ctx);
            st = nt_cu_event_elapsed(a->ev[2], a->ev[3], &ms);
            lat_s[smp] = ms * 1e-3 / (2.0 * iters);
        }
        if (first == NT_OK)
            first = st != NT_OK ? st : xs;
    }
    return x ? (first != NT_OK ? first : st) : st;
}

/* ------------------------------------------------------------------ ops */

static void nt_g_cleanup(void *state)
{
    nt_gstate_t *s = state;
    if (!s)
        return;
    /* Host memory first, while a context is still there to free it in. */
    for (int i = 0; i < s->ng; i++)
        if (s->g[i].ctx) {
            nt_cu_ctx_set(s->g[i].ctx);
            nt_cu_ctx_synchronize();
            break;
        }
    for (int i = 0; i < s->nhb; i++)
        for (int k = 0; k < 2; k++)
            if (s->hb[i].p[k]) {
                nt_cu_host_unregister(s->hb[i].p[k]);
                munmap(s->hb[i].p[k], s->hb[i].bytes);
            }
    if (s->hflag)
        nt_cu_host_free((void *)s->hflag);
    for (int i = 0; s->imp && i < s->ng; i++)
        for (int j = 0; j < s->ng; j++) {
            if (!s->g[i].ctx)
                continue;
            nt_cu_ctx_set(s->g[i].ctx);
            for (int k = 0; k < 3; k++)
                if (s->imp[((size_t)i * s->ng + j) * 3 + k])
                    nt_cu_ipc_close(s->imp[((size_t)i * s->ng + j) * 3 + k]);
            if (s->impev && s->impev[(size_t)i * s->ng + j])
                nt_cu_event_destroy(s->impev[(size_t)i * s->ng + j]);
        }
    for (int i = 0; i < s->ng; i++)
        if (s->g[i].xev && s->g[i].ctx) {
            nt_cu_ctx_set(s->g[i].ctx);
            nt_cu_event_destroy(s->g[i].xev);
        }
    for (int i = 0; i < s->ng; i++)
        nt_g_close(&s->g[i]);
    free(s->imp);
    free(s->impev);
    free(s->tab);
    free(s->peer_ok);
    free(s->nvml_p2p);
    free(s->path);
    free(s->pair_line);
    free(s);
}

/* Set-up across the ranks of a node, step 1 (hello -> plan): every local rank tells local
 * rank 0 which GPUs (NVML index, matched by PCI bus id) its CUDA sees; rank 0 names an owner per
 * GPU (nt_gpu_owners) and answers with the mode: 0 no GPU probe on this node, 1 one rank
 * measures every GPU, 2 the owners measure theirs and pairs across owners go through IPC. A
 * rank that does not say hello in time owns nothing. Fills s->tab (mode 2) and the owners. */
static int nt_g_xchg_plan(nt_gstate_t *s, int usable)
{
    nt_gtab_t *t = calloc(1, sizeof(*t));
    int mode = 0;
    if (!t)
        return -1;
    for (int i = 0; i < s->ng; i++)
        t->owner[i] = usable && !s->g[i].lost &&
                      nt_cu_device_by_bus_id(s->g[i].info.bus_id, &s->g[i].dev) == NT_OK;
    /* The engine groups ranks by host name; IPC also needs one kernel (containers of one
     * machine share it, two machines with one host name do not). */
    if (nt_sysfs_read_str("/proc/sys/kernel/random/boot_id", t->boot, sizeof(t->boot)) != NT_OK)
        t->boot[0] = '\0';
    if (s->me != 0) {
        if (nt_g_tsend(s, 0, t, NT_GT_HELLO, s->t_peer) != NT_OK ||
            nt_g_trecv(s, 0, t, NT_GT_PLAN, s->t_long) != NT_OK)
            t->mode = 0;
        mode = t->mode;
    } else {
        unsigned char *sees = calloc((size_t)s->nlocal * NT_NVML_MAX_GPUS, 1);
        int owner[NT_NVML_MAX_GPUS], nown;
        nt_gtab_t *h = calloc(1, sizeof(*h));
        if (!sees || !h) {
            free(sees);
            free(h);
            free(t);
            return -1;
        }
        for (int i = 0; i < s->ng; i++)
            sees[i] = (unsigned char)t->owner[i];
        double end = nt_clock_s() + s->t_peer; /* one deadline for all: a dead rank costs it once */
        for (int r = 1; r < s->nlocal; r++) {
            double left = end - nt_clock_s();
            if (nt_g_trecv(s, r, h, NT_GT_HELLO, left > 0.1 ? left : 0.1) != NT_OK) {
                s->dead[r] = 1;
                NT_WARN(INIT,
                        "GPU probe: local rank %d (world rank %d) did not say which GPUs "
                        "it sees: it measures none",
                        r, s->wrank[r]);
                continue;
            }
            if (strcmp(h->boot, t->boot) != 0) {
                NT_WARN(INIT,
                        "GPU probe: local rank %d (world rank %d) has this host name but another "
                        "kernel (boot id %s, here %s): it measures none of this node's GPUs",
                        r, s->wrank[r], h->boot, t->boot);
                continue;
            }
            for (int i = 0; i < s->ng; i++)
                sees[r * s->ng + i] = h->owner[i] != 0;
        }
        free(h);
        nown = usable ? nt_gpu_owners(sees, s->nlocal, s->ng, owner) : 0;
        mode = nown > 0; /* 1: local rank 0 owns every GPU anybody sees */
        for (int i = 0; i < s->ng && nown > 0; i++)
            mode = owner[i] > 0 ? 2 : mode;
        memset(t, 0, sizeof(*t));
        t->mode = mode;
        for (int i = 0; i < s->ng; i++)
            t->owner[i] = nown > 0 ? owner[i] : -1;
        for (int r = 1; r < s->nlocal; r++)
            if (!s->dead[r] && nt_g_tsend(s, r, t, NT_GT_PLAN, s->t_peer) != NT_OK)
                s->dead[r] = 1;
        free(sees);
    }
    if (mode == 2) {
        s->ipc = 1;
        s->tab = t;
        for (int i = 0; i < s->ng; i++)
            s->g[i].owner = t->owner[i];
    } else {
        free(t);
    }
    return mode;
}

/* Step 2 (handles -> table), IPC mode: every owner sends local rank 0 the IPC handles of its
 * GPUs' buffers and events, whether it opened them, and peer access between its own GPUs; rank
 * 0 adds peer access between GPUs of two owners from nvmlDeviceGetP2PStatus (the opener
 * cannot ask cuDeviceCanAccessPeer of a device it does not see) and sends the table to all. */
static nt_status_t nt_g_xchg_table(nt_gstate_t *s, cJSON *node_json)
{
    nt_gtab_t *t = s->tab, *h;
    int ng = s->ng;

    for (int i = 0; i < ng; i++) {
        nt_gdev_t *d = &s->g[i];
        if (!nt_g_mine(s, d))
            continue;
        t->gok[i] = d->ctx != NULL && s->hflag != NULL;
        if (t->gok[i]) {
            nt_cu_ctx_set(d->ctx);
            for (int k = 0; k < 3 && t->gok[i]; k++)
                t->gok[i] = nt_cu_ipc_get(k == 2 ? d->flags : d->buf[k], &t->mem[i][k]) == NT_OK;
            if (t->gok[i])
                t->gok[i] = nt_cu_event_create_ipc(&d->xev) == NT_OK &&
                            nt_cu_ipc_event_get(d->xev, &t->ev[i]) == NT_OK;
            if (!t->gok[i])
                snprintf(t->why[i], sizeof(t->why[i]), "IPC handle: %s", nt_cuda_last_error());
        } else if (!t->why[i][0]) {
            snprintf(t->why[i], sizeof(t->why[i]), "owner (local rank %d) could not open it",
                     s->me);
        }
        for (int j = 0; j < ng; j++)
            if (s->g[j].owner == s->me)
                t->peer_ok[i * ng + j] = (unsigned char)s->peer_ok[i * ng + j];
    }
    t->sm_ok = s->sm_ok;
    if (s->me != 0) {
        if (nt_g_tsend(s, 0, t, NT_GT_HANDLES, s->t_long) != NT_OK ||
            nt_g_trecv(s, 0, t, NT_GT_TABLE, s->t_long) != NT_OK || t->mode != 2)
            return NT_ERR_PEER;
    } else {
        int owns[256] = {0};
        if (!(h = malloc(sizeof(*h))))
            return NT_ERR_NOMEM;
        t->remote_any = s->remote_any;
        for (int i = 0; i < ng; i++)
            if (s->g[i].owner >= 0 && s->g[i].owner < s->nlocal)
                owns[s->g[i].owner] = 1;
        for (int r = 1; r < s->nlocal; r++) {
            if (!owns[r] || s->dead[r])
                continue;
            if (nt_g_trecv(s, r, h, NT_GT_HANDLES, s->t_long) != NT_OK) {
                s->dead[r] = 1;
                for (int i = 0; i < ng; i++)
                    if (s->g[i].owner == r)
                        snprintf(t->why[i], sizeof(t->why[i]), "%s", "its owner did not answer");
                continue;
            }
            t->sm_ok &= h->sm_ok;
            for (int i = 0; i < ng; i++) {
                if (s->g[i].owner != r)
                    continue;
                t->gok[i] = h->gok[i];
                memcpy(t->mem[i], h->mem[i], sizeof(t->mem[i]));
                t->ev[i] = h->ev[i];
                memcpy(t->why[i], h->why[i], sizeof(t->why[i]));
                for (int j = 0; j < ng; j++)
                    if (s->g[j].owner == r)
                        t->peer_ok[i * ng + j] = h->peer_ok[i * ng + j];
            }
        }
        free(h);
        for (int a = 0; a < ng; a++)
            for (int b = 0; b < ng; b++)
                if (a != b && s->g[a].owner != s->g[b].owner)
                    t->peer_ok[a * ng + b] =
                        (unsigned char)(t->gok[a] && t->gok[b] && s->nvml_p2p[a * ng + b]);
        for (int i = 0; i < ng && node_json; i++) {
            cJSON *sk = cJSON_GetObjectItemCaseSensitive(node_json, "skipped");
            char r[400];
            if (s->g[i].lost || s->g[i].owner < 0 || t->gok[i] || !sk ||
                (s->g[i].owner == 0 && !s->g[i].ctx))
                continue; /* (a GPU of local rank 0 that did not open said why then) */
            snprintf(r, sizeof(r), "gpu%d (%s): local rank %d: %s", i, s->g[i].info.bus_id,
                     s->g[i].owner, t->why[i][0] ? t->why[i] : "not opened");
            nt_skipped_add(sk, "gpu", r);
        }
        for (int r = 1; r < s->nlocal; r++)
            if (owns[r] && !s->dead[r] && nt_g_tsend(s, r, t, NT_GT_TABLE, s->t_long) != NT_OK)
                s->dead[r] = 1;
    }
    s->sm_ok = t->sm_ok;
    s->remote_any = t->remote_any;
    for (int k = 0; k < ng * ng; k++)
        s->peer_ok[k] = t->peer_ok[k];
    s->imp = calloc((size_t)ng * ng * 3, sizeof(*s->imp));
    s->impev = calloc((size_t)ng * ng, sizeof(*s->impev));
    return s->imp && s->impev ? NT_OK : NT_ERR_NOMEM;
}

static nt_status_t nt_g_init(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks,
                             char *why, size_t whylen)
{
    const nt_probe_params_t *pa = p->params;
    nt_gstate_t *s;
    char cwhy[256] = "", nwhy[256] = "";
    int n = 0, sm_why = 0, mode = 1;
    int nl = p->nodes[p->my_node].nranks;
    /* Several ranks on this node: they agree on who measures which GPU (IPC mode when each
     * sees only some of them). --checks-only opens no GPU: local rank 0 reads NVML alone. */
    int xchg = nl > 1 && nl <= 256 && !pa->checks_only && p->launcher;

    *state = NULL;
    if (p->local_rank != 0 && !xchg) {
        snprintf(why, whylen, "GPU probes run on local rank 0 of each node");
        return NT_ERR_UNSUPPORTED;
    }
    if (!(s = calloc(1, sizeof(*s))))
        return NT_ERR_NOMEM;
    s->me = p->local_rank;
    s->nlocal = nl;
    s->l = p->launcher;
    s->wrank = p->nodes[p->my_node].ranks;
    s->t_short = (pa->peer_timeout_s > 0 && pa->peer_timeout_s < NT_G_WAIT_S ? pa->peer_timeout_s
                                                                             : NT_G_WAIT_S) +
                 NT_G_SPIN_NS * 1e-9;
    s->t_peer = pa->peer_timeout_s > 0 ? pa->peer_timeout_s : 30.0;
    s->t_long = s->t_peer + 10.0;
    snprintf(s->host, sizeof(s->host), "%s", p->nodes[p->my_node].host);
    s->bytes = pa->gpu_bytes ? pa->gpu_bytes : NT_GPU_DEFAULT_BYTES;
    s->bytes &= ~(size_t)15;
    s->read_pcie = -1;
    s->samples = pa->mode == NT_SCHED_FULL ? NT_G_SAMPLES_FULL : NT_G_SAMPLES;
    s->nvml = nt_nvml_load(NULL, nwhy, sizeof(nwhy)) == NT_OK;
    if (s->nvml && nt_nvml_gpu_count(&n) == NT_OK) {
        for (int i = 0; i < n; i++) {
            nt_gdev_t *d = &s->g[s->ng++]; /* g[i] is NVML index i, lost or not */
            if (nt_nvml_gpu_info(i, &d->info) != NT_OK) {
                char tgt[32];
                d->lost = 1;
                d->info.index = i;
                snprintf(tgt, sizeof(tgt), "gpu%d", i);
                nt_g_check(checks, nt_check_create_str("inventory", s->host, tgt, NT_FAIL, "lost",
                                                       "present", "GPU %d cannot be read: %s", i,
                                                       nt_nvml_last_error()));
                continue;
            }
            d->numa = nt_g_numa_of(p, d->info.bus_id);
            d->info.numa_node = d->numa;
            d->after = d->info;
            s->nok++;
        }
    }
    for (int i = 0; i < s->ng; i++)
        if (!s->g[i].lost) {
            s->expect_nvlinks = nt_g_expect_nvlinks(p, s->host, s->g[i].info.name);
            break;
        }
    if (node_json && s->nok)
        nt_g_inventory_json(s, node_json);
    if (s->nok) {
        nt_g_inventory_checks(s, checks, 1);
        nt_nodechecks_gpus(s->ng, s->host, checks); /* docs/node-checks.md */
    }
    if (pa->checks_only)
        nt_g_inventory_checks(s, checks, 2); /* no load: the width only */
    if (pa->checks_only) {
        snprintf(why, whylen, "--checks-only: no GPU traffic and no GPU memory (inventory%s)",
                 s->nvml ? " from NVML" : " unavailable: no NVML");
        *state = s; /* finish() still reads the counters; run_local measures nothing */
        return NT_ERR_UNSUPPORTED;
    }
    s->cuda = nt_cuda_load(NULL, cwhy, sizeof(cwhy)) == NT_OK;
    if (xchg) {
        for (int i = 0; i < s->ng; i++)
            s->remote_any |= nt_g_remote_numa(p, s->g[i].numa) >= 0;
        mode = nt_g_xchg_plan(s, s->cuda && s->nvml && s->nok > 0);
        if (mode < 0) {
            nt_g_cleanup(s);
            return NT_ERR_NOMEM;
        }
        if (s->me != 0) {
            int owns = 0;
            for (int i = 0; i < s->ng; i++)
                owns |= s->ipc && s->g[i].owner == s->me;
            if (!owns) {
                snprintf(why, whylen, "GPU probes: local rank 0 of the node measures its GPUs%s",
                         mode == 2 ? " (this rank sees none another rank does not)" : "");
                nt_g_cleanup(s);
                return NT_ERR_UNSUPPORTED;
            }
        }
    }
    if (!s->cuda)
        nt_g_inventory_checks(s, checks, 2);
    if (!s->cuda) {
        if (p->topo && p->topo->ngpus == 0 && s->nok == 0)
            snprintf(why, whylen, "%s; no NVIDIA GPU on this node (no PCI device 10de:03xx)", cwhy);
        else
            snprintf(why, whylen, "%s", cwhy);
        nt_g_cleanup(s);
        return NT_ERR_UNSUPPORTED;
    }
    if (!s->nvml) {
        snprintf(why, whylen, "%s (the GPUs are named and counted by NVML)", nwhy);
        nt_g_cleanup(s);
        return NT_ERR_UNSUPPORTED;
    }
    if (s->nok == 0) {
        snprintf(why, whylen, "no GPU visible");
        nt_g_cleanup(s);
        return NT_ERR_UNSUPPORTED;
    }
    s->sm_ok = nt_gpu_fatbin_size > 0;
    sm_why = !s->sm_ok;
    for (int i = 0; i < s->ng; i++) {
        nt_gdev_t *d = &s->g[i];
        int had = s->sm_ok;
        nt_status_t st;
        if (d->lost || (s->ipc && d->owner >= 0 && !nt_g_mine(s, d)))
            continue; /* another rank of the node measures it */
        st = s->ipc && d->owner < 0 ? NT_ERR_UNSUPPORTED : nt_g_open(s, d, 1);
        if (had && !s->sm_ok)
            sm_why = 2;
        if (st != NT_OK) {
            cJSON *sk = node_json ? cJSON_GetObjectItemCaseSensitive(node_json, "skipped") : NULL;
            char r[400];
            snprintf(r, sizeof(r), "gpu%d (%s): %s", i, d->info.bus_id,
                     d->cuda ? nt_cuda_last_error()
                             : "not visible to CUDA (CUDA_VISIBLE_DEVICES?): its links are not "
                               "measured");
            if (sk)
                nt_skipped_add(sk, "gpu", r);
            nt_g_close(d);
            d->cuda = 0;
        }
    }
    /* The flags in mapped pinned host memory (cuMemHostAlloc needs a current context; the
     * memory is portable, and with unified addressing its device address is the same in
     * every context). */
    for (int i = 0; i < s->ng && !s->hflag; i++)
        if (s->g[i].ctx) {
            nt_cu_ctx_set(s->g[i].ctx);
            if (nt_cu_host_alloc(4096, NT_CU_MEMHOSTALLOC_PORTABLE | NT_CU_MEMHOSTALLOC_DEVICEMAP,
                                 (void **)&s->hflag) != NT_OK ||
                nt_cu_host_device_ptr((void *)s->hflag, &s->hflag_d) != NT_OK) {
                snprintf(why, whylen, "pinned host memory: %s", nt_cuda_last_error());
                if (s->hflag)
                    nt_cu_host_free((void *)s->hflag);
                s->hflag = NULL;
                if (s->ipc)
                    break; /* the others wait for this rank's table: it owns no usable GPU */
                nt_g_cleanup(s);
                return NT_ERR_UNSUPPORTED;
            }
            memset((void *)s->hflag, 0, 4096);
        }
    if (!s->hflag && !s->ipc) {
        snprintf(why, whylen, "no GPU could be opened through CUDA (see the gpu entries)");
        nt_g_cleanup(s);
        return NT_ERR_UNSUPPORTED;
    }
    if (sm_why && node_json) {
        cJSON *sk = cJSON_GetObjectItemCaseSensitive(node_json, "skipped");
        if (sk)
            nt_skipped_add(sk, "gpu.sm",
                           sm_why == 1 ? "built without nvcc: SM-copy and latency probes skipped"
                                       : "driver too old for the kernels: SM-copy probes skipped");
    }
    /* Pairs: peer access, path, NVML P2P status. */
    s->peer_ok = calloc((size_t)s->ng * s->ng, sizeof(int));
    s->nvml_p2p = calloc((size_t)s->ng * s->ng, sizeof(int));
    s->path = calloc((size_t)s->ng * s->ng, sizeof(*s->path));
    s->pair_line = calloc((size_t)s->ng * s->ng, sizeof(double));
    if (!s->peer_ok || !s->nvml_p2p || !s->path || !s->pair_line) {
        nt_g_cleanup(s);
        return NT_ERR_NOMEM;
    }
    for (int a = 0; a < s->ng; a++)
        for (int b = 0; b < s->ng; b++) {
            char pcie[16] = "", r[64];
            int can = 0, k = a * s->ng + b;
            if (a == b || s->g[a].lost || s->g[b].lost)
                continue;
            if (nt_nvml_path(a, b, pcie, sizeof(pcie)) != NT_OK && p->topo) {
                int ta = nt_topo_find_gpu(p->topo, s->g[a].info.bus_id);
                int tb = nt_topo_find_gpu(p->topo, s->g[b].info.bus_id);
                if (ta >= 0 && tb >= 0)
                    snprintf(pcie, sizeof(pcie), "%s",
                             nt_path_string(nt_topo_gpu_path(p->topo, ta, tb)));
            }
            nt_gpu_pair_path(&s->g[a].info, &s->g[b].info, pcie, s->path[k], sizeof(s->path[k]),
                             &s->pair_line[k]);
            nt_nvml_p2p_status(a, b, &s->nvml_p2p[k], r, sizeof(r));
            if (s->g[a].cuda && s->g[b].cuda && s->g[a].ctx && s->g[b].ctx &&
                nt_cu_can_access_peer(s->g[a].dev, s->g[b].dev, &can) == NT_OK && can) {
                nt_cu_ctx_set(s->g[a].ctx);
                can = nt_cu_ctx_enable_peer(s->g[b].ctx) == NT_OK;
            }
            s->peer_ok[k] = can;
        }
    /* IPC mode: the owners' handles and peer access (NVML's P2P status across owners). */
    if (s->ipc && nt_g_xchg_table(s, node_json) != NT_OK) {
        snprintf(why, whylen,
                 "GPU probes: the node's table of GPUs did not come from local rank 0");
        nt_g_cleanup(s);
        return NT_ERR_PEER;
    }
    if (s->ipc && !s->sm_ok && !sm_why && node_json) {
        cJSON *sk = cJSON_GetObjectItemCaseSensitive(node_json, "skipped");
        if (sk)
            nt_skipped_add(sk, "gpu.sm",
                           "the kernels do not load on another rank's GPU: SM-copy and latency "
                           "probes skipped on this node");
    }
    for (int a = 0; a < s->ng; a++)
        for (int b = 0; b < s->ng; b++) {
            char msg[256], tgt[96];
            int k = a * s->ng + b, can = s->peer_ok[k];
            nt_verdict_t v;
            if (a == b || s->g[a].lost || s->g[b].lost || (s->ipc && s->me != 0))
                continue;
            if (s->ipc &&
                (s->g[a].owner < 0 || s->g[b].owner < 0 || !s->tab->gok[a] || !s->tab->gok[b]))
                continue; /* not measured: the GPU's skip says why */
            v = nt_gpu_peer_verdict(s->path[k], s->nvml_p2p[k], can, msg, sizeof(msg));
            if (v != NT_PASS) {
                snprintf(tgt, sizeof(tgt), "gpu%d->gpu%d (%s->%s)", a, b, s->g[a].info.bus_id,
                         s->g[b].info.bus_id);
                nt_g_check(checks, nt_check_create_str("gpu_peer_access", s->host, tgt, v,
                                                       can ? "yes" : "no", "yes", "%s", msg));
            }
        }
    if (node_json)
        nt_json_add_str(node_json, "gpu_pair_mode", s->ipc ? "ipc" : "one_rank");
    s->active = 1;
    *state = s;
    return NT_OK;
}

static nt_status_t nt_g_run_pair(void *state, nt_probe_t *p, int peer_rank, int initiator,
                                 nt_scope_t scope, cJSON *out_links)
{
    (void)state, (void)p, (void)peer_rank, (void)initiator, (void)scope, (void)out_links;
    return NT_OK; /* GPU links are inside a node: run_local measures them */
}

static const char *nt_g_kind_variant(const nt_gpu_test_t *t, const char **variant)
{
    *variant = t->remote_numa ? "remote_numa" : t->sm ? "sm" : NULL;
    switch (t->kind) {
    case NT_GPU_T_H2D:
        return "pcie_h2d";
    case NT_GPU_T_D2H:
        return "pcie_d2h";
    case NT_GPU_T_P2P_WRITE:
        *variant = "write";
        return "p2p";
    case NT_GPU_T_P2P_READ:
        *variant = "read";
        return "p2p";
    case NT_GPU_T_P2P_SM:
        *variant = "sm";
        return "p2p";
    case NT_GPU_T_P2P_BIDIR:
        *variant = "bidir";
        return "p2p";
    case NT_GPU_T_LOCAL:
        *variant = NULL;
        return "gpu_local";
    default:
        return NULL;
    }
}

static cJSON *nt_g_find(cJSON *links, const char *id)
{
    cJSON *l;
    cJSON_ArrayForEach (l, links)
        if (strcmp(nt_json_get_str(l, "id", ""), id) == 0)
            return l;
    return NULL;
}

/* Issuer -> partner: whether the test runs (st NT_OK) or not. */
static void nt_g_go(nt_gstate_t *s, const nt_gx_t *x, nt_status_t st)
{
    nt_g_xsend(s, x->peer, x->test, NT_GM_GO, st, 0, NULL);
}

/* A link's error after a cross-rank test: a silent partner, a partner that failed, or this
 * rank's own CUDA error. */
static void nt_g_xerror(nt_gstate_t *s, cJSON *link, const char *what, const nt_gx_t *x)
{
    char buf[400], w[160];
    cJSON *e;
    if (!x || (!s->dead[x->peer] && !s->xfail)) {
        nt_g_error(link, what);
        return;
    }
    if (s->dead[x->peer])
        nt_g_dead_why(s, x->peer, w, sizeof(w));
    else
        snprintf(w, sizeof(w),
                 "local rank %d (world rank %d), the other GPU's owner, failed its part", x->peer,
                 s->wrank[x->peer]);
    snprintf(buf, sizeof(buf), "%s: %s", what, w);
    if ((e = nt_json_add_arr(link, "errors")))
        cJSON_AddItemToArray(e, cJSON_CreateString(buf));
}

/* One test of the plan on its issuer (docs/gpu.md "Measurements"): its link(s) go to out_links.
 * partner >= 0: the other GPU's owner takes part (nt_g_partner), told first whether the test
 * runs (GO). */
static void nt_g_test(nt_gstate_t *s, nt_probe_t *p, const nt_gpu_test_t *t, int idx, int partner,
                      cJSON *out_links)
{
    nt_gdev_t *a = &s->g[t->gpu], *b = t->peer >= 0 ? &s->g[t->peer] : NULL;
    nt_gdev_t *me = t->kind == NT_GPU_T_P2P_READ ? b : a, *other = me == a ? b : a;
    double smp[2][NT_G_SAMPLES_FULL], lat[NT_G_SAMPLES_FULL];
    unsigned iters = 1;
    char ga[16], gb[16], nm[16], id[256];
    const char *variant, *kind = nt_g_kind_variant(t, &variant);
    nt_lane_t ln[2];
    nt_status_t st = NT_OK;
    cJSON *l = NULL, *l2 = NULL;
    nt_gx_t x = {partner, 0, idx, a->xev, NT_OK}, *xp = partner >= 0 ? &x : NULL;

    /* the GPUs must be open: this rank's own, or the other owner's (its handles came) */
    if (!me->ctx ||
        (other && (nt_g_mine(s, other) ? !other->ctx : !s->tab || !s->tab->gok[other - s->g]))) {
        if (xp)
            nt_g_go(s, xp, NT_ERR_UNSUPPORTED);
        return;
    }
    s->xfail = 0;
    snprintf(ga, sizeof(ga), "gpu%d", t->gpu);
    snprintf(gb, sizeof(gb), "gpu%d", t->peer);
    memset(ln, 0, sizeof(ln));
    switch (t->kind) {
    case NT_GPU_T_H2D:
    case NT_GPU_T_D2H:
    case NT_GPU_T_BIDIR: {
        int numa = t->remote_numa ? nt_g_remote_numa(p, a->numa) : a->numa;
        nt_hostbuf_t *h;
        if (t->remote_numa && numa < 0)
            return;
        nt_cu_ctx_set(a->ctx);
        h = nt_g_hostbuf(s, numa);
        snprintf(nm, sizeof(nm), "numa%d", numa < 0 ? 0 : numa);
        if (t->kind == NT_GPU_T_BIDIR) {
            l = nt_g_link(s, p, "pcie_h2d", t->remote_numa ? "remote_numa_bidir" : "bidir", nm, ga);
            l2 =
                nt_g_link(s, p, "pcie_d2h", t->remote_numa ? "remote_numa_bidir" : "bidir", ga, nm);
        } else if (t->kind == NT_GPU_T_H2D) {
            l = nt_g_link(s, p, kind, variant, nm, ga);
        } else {
            l = nt_g_link(s, p, kind, variant, ga, nm);
        }
        if (!h) {
            nt_g_error(l, "pinned host memory");
            break;
        }
        ln[0] = (nt_lane_t){a, 0, a->buf[0], (nt_cu_ptr_t)(uintptr_t)h->p[0]};
        ln[1] = (nt_lane_t){a, 1, (nt_cu_ptr_t)(uintptr_t)h->p[1], a->buf[1]};
        if (t->kind == NT_GPU_T_D2H)
            ln[0] = ln[1];
        s->read_pcie = t->kind == NT_GPU_T_H2D && !t->sm && !t->remote_numa ? t->gpu : -1;
        st = nt_g_measure(s, ln, t->kind == NT_GPU_T_BIDIR ? 2 : 1, t->sm, t->budget_s, smp, &iters,
                          NULL);
        s->read_pcie = -1;
        if (st != NT_OK) {
            nt_g_error(l, "copy");
            if (l2)
                nt_g_error(l2, "copy");
            break;
        }
        nt_g_add_bw(l, s->bytes, iters, smp[0], s->samples,
                    !t->remote_numa && !t->sm && t->kind != NT_GPU_T_BIDIR
                        ? nt_gpu_pcie_line_GBps(&a->info)
                        : NAN);
        if (l2)
            nt_g_add_bw(l2, s->bytes, iters, smp[1], s->samples, NAN);
        if (numa >= 0) { /* unknown: the buffer was not bound (numa0 names it in the id) */
            nt_json_add_num(l, "host_numa_node", numa);
            if (l2)
                nt_json_add_num(l2, "host_numa_node", numa);
        }
        if (t->kind == NT_GPU_T_H2D && !t->sm && !t->remote_numa)
            nt_json_add_bool(l, "pcie_under_load", a->loaded);
        break;
    }
    case NT_GPU_T_HOST_LAT: {
        cJSON *base;
        snprintf(nm, sizeof(nm), "numa%d", a->numa < 0 ? 0 : a->numa);
        nt_gpu_link_id(id, sizeof(id), "pcie_h2d", NULL, s->host, nm, ga);
        base = nt_g_find(out_links, id);
        if (!base)
            return;
        if (nt_g_host_lat(s, a, lat, s->samples) == NT_OK) {
            nt_stats_t stt;
            if (nt_stats_compute(lat, (size_t)s->samples, &stt) == NT_OK)
                nt_probe_add_lat_sample(base, 4, (unsigned)nt_g_lat_iters(), &stt);
        } else {
            nt_g_error(base, "host latency");
        }
        return;
    }
    case NT_GPU_T_LOCAL:
        l = nt_g_link(s, p, kind, NULL, ga, NULL);
        ln[0] = (nt_lane_t){a, 0, a->buf[1], a->buf[0]};
        if ((st = nt_g_measure(s, ln, 1, 0, t->budget_s, smp, &iters, NULL)) != NT_OK)
            nt_g_error(l, "device-local copy");
        else
            nt_g_add_bw(l, s->bytes, iters, smp[0], s->samples, NAN);
        break;
    case NT_GPU_T_P2P_WRITE:
    case NT_GPU_T_P2P_READ:
    case NT_GPU_T_P2P_SM:
    case NT_GPU_T_P2P_BIDIR: {
        int k = t->gpu * s->ng + t->peer, nl = 1;
        nt_cu_ptr_t ptr = 0;
        /* ids name the data direction: src -> dst. write and SM: issued on src; read:
         * issued on dst, reading src's memory (dst's peer access to src, like bidir) */
        if ((t->kind == NT_GPU_T_P2P_READ || t->kind == NT_GPU_T_P2P_BIDIR) &&
            !s->peer_ok[t->peer * s->ng + t->gpu]) {
            if (xp)
                nt_g_go(s, xp, NT_ERR_UNSUPPORTED);
            return;
        }
        l = nt_g_link(s, p, kind, variant, ga, gb);
        /* the peer's buffer: its own on the one-rank path, else opened from its IPC handle */
        if (t->kind == NT_GPU_T_P2P_READ) {
            st = nt_g_buf(s, t->peer, t->gpu, 1, &ptr);
            ln[0] = (nt_lane_t){b, 0, b->buf[0], ptr};
        } else {
            st = nt_g_buf(s, t->gpu, t->peer, 0, &ptr);
            ln[0] = (nt_lane_t){a, 0, ptr, a->buf[1]};
        }
        if (t->kind == NT_GPU_T_P2P_BIDIR) {
            ptr = 0;
            if (st == NT_OK && nt_g_mine(s, b))
                st = nt_g_buf(s, t->peer, t->gpu, 0, &ptr);
            ln[1] = (nt_lane_t){b, 1, ptr, b->buf[1]};
            nl = 2;
        }
        if (xp)
            nt_g_go(s, xp, st);
        nt_json_add_str(l, "path", s->path[k]);
        {
            char pc[96];
            nt_gpu_peer_class(pc, sizeof(pc), kind, variant, s->path[k]);
            cJSON_ReplaceItemInObjectCaseSensitive(l, "peer_class", cJSON_CreateString(pc));
        }
        if (st != NT_OK) {
            nt_g_error(l, "IPC handle of the peer GPU's memory");
            break;
        }
        st = nt_g_measure(s, ln, nl, t->kind == NT_GPU_T_P2P_SM, t->budget_s, smp, &iters, xp);
        if (st != NT_OK) {
            nt_g_xerror(s, l, "peer copy", xp);
            break;
        }
        if (nl == 2)
            for (int j = 0; j < s->samples; j++)
                smp[0][j] += smp[1][j]; /* bidir: the sum of both directions */
        nt_g_add_bw(l, s->bytes, iters, smp[0], s->samples,
                    t->kind == NT_GPU_T_P2P_SM ? NAN
                    : nl == 2                  ? 2 * s->pair_line[k]
                                               : s->pair_line[k]);
        break;
    }
    case NT_GPU_T_P2P_LAT: {
        cJSON *base;
        int go = s->peer_ok[t->peer * s->ng + t->gpu]; /* the ping-pong writes both ways */
        nt_gpu_link_id(id, sizeof(id), "p2p", "write", s->host, ga, gb);
        base = go ? nt_g_find(out_links, id) : NULL;
        if (xp)
            nt_g_go(s, xp, base ? NT_OK : NT_ERR_UNSUPPORTED);
        if (!base)
            return;
        if (nt_g_pair_lat(s, a, b, lat, s->samples, xp) == NT_OK) {
            nt_stats_t stt;
            if (nt_stats_compute(lat, (size_t)s->samples, &stt) == NT_OK)
                nt_probe_add_lat_sample(base, 4, (unsigned)nt_g_lat_iters(), &stt);
        } else {
            nt_g_xerror(s, base, "pair latency", xp);
        }
        return;
    }
    default:
        return;
    }
    nt_g_push(out_links, l);
    nt_g_push(out_links, l2);
}

/* The partner's side of a cross-rank test (bidir: the reverse copy; latency: b's kernel). */
static void nt_g_partner(nt_gstate_t *s, const nt_gpu_test_t *t, int idx, int issuer)
{
    nt_gdev_t *a = &s->g[t->gpu], *b = &s->g[t->peer];
    nt_gx_t x = {issuer, 1, idx, NULL, NT_OK};
    double smp[2][NT_G_SAMPLES_FULL], lat[NT_G_SAMPLES_FULL];
    unsigned iters = 1;
    nt_gmsg_t m;

    if (nt_g_xrecv(s, issuer, idx, NT_GM_GO, s->t_short, &m) != NT_OK || m.status != NT_OK)
        return;
    if (t->kind == NT_GPU_T_P2P_BIDIR) {
        nt_lane_t ln[2];
        nt_cu_ptr_t ptr = 0;
        memset(ln, 0, sizeof(ln));
        ln[0].d = a;
        x.err = b->ctx ? nt_g_buf(s, t->peer, t->gpu, 0, &ptr) : NT_ERR_UNSUPPORTED;
        if (x.err == NT_OK)
            x.err = nt_g_xevent(s, t->peer, t->gpu, &x.ev);
        if (x.err != NT_OK)
            NT_WARN(INIT, "GPU probe: gpu%d->gpu%d: %s", t->peer, t->gpu, nt_cuda_last_error());
        ln[1] = (nt_lane_t){b, 1, ptr, b->buf[1]};
        nt_g_measure(s, ln, 2, 0, t->budget_s, smp, &iters, &x);
    } else if (t->kind == NT_GPU_T_P2P_LAT) {
        nt_g_pair_lat(s, a, b, lat, s->samples, &x);
    }
}

/* How long local rank 0 waits for a rank to end its part of a test: a test takes its budget,
 * a rank still busy after one step deadline more is taken for dead. */
static double nt_g_t_done(const nt_gstate_t *s, double budget_s)
{
    return s->t_short + 3 * budget_s + 1.0;
}

/* A test whose partner is dead: its link says so (the issuer's side of nt_g_test). */
static void nt_g_test_dead(nt_gstate_t *s, nt_probe_t *p, const nt_gpu_test_t *t, int dead,
                           cJSON *out_links)
{
    const char *variant, *kind = nt_g_kind_variant(t, &variant);
    char ga[16], gb[16], id[256], w[160];
    cJSON *l, *e;
    nt_gx_t x = {dead, 0, -1, NULL, NT_OK};

    snprintf(ga, sizeof(ga), "gpu%d", t->gpu);
    snprintf(gb, sizeof(gb), "gpu%d", t->peer);
    if (t->kind == NT_GPU_T_P2P_LAT) { /* a sample of the write link */
        nt_gpu_link_id(id, sizeof(id), "p2p", "write", s->host, ga, gb);
        if ((l = nt_g_find(out_links, id)))
            nt_g_xerror(s, l, "pair latency", &x);
        return;
    }
    if (!(l = nt_g_link(s, p, kind, variant, ga, gb)))
        return;
    nt_json_add_str(l, "path", s->path[t->gpu * s->ng + t->peer]);
    {
        char pc[96];
        nt_gpu_peer_class(pc, sizeof(pc), kind, variant, s->path[t->gpu * s->ng + t->peer]);
        cJSON_ReplaceItemInObjectCaseSensitive(l, "peer_class", cJSON_CreateString(pc));
    }
    if ((e = nt_json_add_arr(l, "errors"))) {
        char buf[300];
        snprintf(buf, sizeof(buf), "peer copy: %s", nt_g_dead_why(s, dead, w, sizeof(w)));
        cJSON_AddItemToArray(e, cJSON_CreateString(buf));
    }
    nt_g_push(out_links, l);
}

/* IPC mode: one test of the plan, coordinated by local rank 0 so that the node runs the plan
 * in order, one test at a time, as one rank would. Rank 0 gives the test's ranks their turn
 * and waits until each says its part is over; the others wait only for rank 0 (their turn) and
 * for their partner inside a test. A rank that misses a deadline is dead: rank 0 gives it no
 * more turns, its partners' tests say so. NT_ERR_PEER when local rank 0 is gone. */
static nt_status_t nt_g_turn(nt_gstate_t *s, nt_probe_t *p, const nt_gpu_test_t *t, int idx,
                             int iss, int par, cJSON *out_links)
{
    int who[2] = {iss, par}, dead = s->dead[iss] ? iss : par >= 0 && s->dead[par] ? par : -1;
    nt_gmsg_t m;

    if (s->me == 0) {
        /* a test runs in its budget, each of its waits bounded by t_short */
        double t_done = nt_g_t_done(s, t->budget_s);
        for (int k = 0; k < 2; k++)
            if (who[k] > 0 && !s->dead[who[k]])
                nt_g_xsend(s, who[k], idx, NT_GM_TURN, dead < 0 ? NT_OK : NT_ERR_PEER, dead, NULL);
        if (dead < 0 && iss == 0)
            nt_g_test(s, p, t, idx, par, out_links);
        else if (dead < 0 && par == 0)
            nt_g_partner(s, t, idx, iss);
        else if (iss == 0 && dead >= 0)
            nt_g_test_dead(s, p, t, dead, out_links);
        for (int k = 0; k < 2; k++)
            if (who[k] > 0 && !s->dead[who[k]] &&
                nt_g_xrecv(s, who[k], idx, NT_GM_DONE_TEST, t_done, &m) != NT_OK)
                NT_WARN(INIT, "GPU probe: local rank %d did not end test %d in %.3g s", who[k], idx,
                        t_done);
        return NT_OK;
    }
    if (s->me != iss && s->me != par)
        return NT_OK;
    if (nt_g_xrecv(s, 0, idx, NT_GM_TURN, s->t_long, &m) != NT_OK || m.test == -1)
        return NT_ERR_PEER;
    if (m.status == NT_OK && s->me == iss)
        nt_g_test(s, p, t, idx, par, out_links);
    else if (m.status == NT_OK)
        nt_g_partner(s, t, idx, iss);
    else if (s->me == iss && m.copies >= 0 && m.copies < s->nlocal) {
        s->dead[m.copies] = 1; /* rank 0 says so: no wait for it */
        nt_g_test_dead(s, p, t, m.copies, out_links);
    }
    return nt_g_xsend(s, 0, idx, NT_GM_DONE_TEST, NT_OK, 0, NULL) == NT_OK ? NT_OK : NT_ERR_PEER;
}

/* IPC mode, after the plan: every owner sends its links (and the PCIe state it read under
 * load) to local rank 0, which adds them to its own; a rank that does not send in time fails
 * the gpu_ranks check of the node. */
static void nt_g_funnel(nt_gstate_t *s, cJSON *out_links)
{
    if (s->me != 0) {
        cJSON *o = cJSON_CreateObject(), *pc = o ? nt_json_add_arr(o, "pcie") : NULL;
        char *txt;
        if (!o)
            return;
        cJSON_AddItemToObject(o, "links", cJSON_Duplicate(out_links, 1));
        for (int i = 0; i < s->ng && pc; i++)
            if (nt_g_mine(s, &s->g[i]) && s->g[i].loaded) {
                cJSON *e = cJSON_CreateObject();
                nt_json_add_num(e, "gpu", i);
                nt_json_add_num(e, "gen", s->g[i].load_gen);
                nt_json_add_num(e, "width", s->g[i].load_width);
                cJSON_AddItemToArray(pc, e);
            }
        if ((txt = cJSON_PrintUnformatted(o))) {
            if (!s->dead[0] && nt_launcher_send_blob(s->l, s->wrank[0], NT_TAG_GPU + 1, txt,
                                                     strlen(txt), s->t_long) != NT_OK)
                NT_WARN(INIT, "GPU probe: the links could not be sent to local rank 0");
            free(txt);
        }
        cJSON_Delete(o);
        /* local rank 0 reports them: this rank's copy goes nowhere (run.c collects there) */
        while (cJSON_GetArraySize(out_links) > 0)
            cJSON_DeleteItemFromArray(out_links, 0);
        return;
    }
    for (int r = 1; r < s->nlocal; r++) {
        int owns = 0;
        char *txt = NULL;
        size_t len = 0;
        cJSON *o, *it, *ls;
        for (int i = 0; i < s->ng; i++)
            owns |= s->g[i].owner == r; /* every owner sends, if only nothing */
        if (!owns)
            continue;
        if (s->dead[r] || nt_launcher_recv_blob(s->l, s->wrank[r], NT_TAG_GPU + 1, &txt, &len,
                                                s->t_long) != NT_OK) {
            s->dead[r] = 1; /* the gpu_ranks check goes out with finish() */
            continue;
        }
        o = cJSON_Parse(txt);
        free(txt);
        cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(o, "pcie")) {
            int i = nt_json_get_int(it, "gpu", -1); /* a peer's message: any number */
            if (i >= 0 && i < s->ng) {
                s->g[i].loaded = 1;
                s->g[i].load_gen = nt_json_get_int(it, "gen", 0);
                s->g[i].load_width = nt_json_get_int(it, "width", 0);
            }
        }
        ls = cJSON_GetObjectItemCaseSensitive(o, "links");
        while (ls && cJSON_GetArraySize(ls) > 0)
            cJSON_AddItemToArray(out_links, cJSON_DetachItemFromArray(ls, 0));
        cJSON_Delete(o);
    }
}

static nt_status_t nt_g_run_local(void *state, nt_probe_t *p, cJSON *out_links, cJSON *out_checks)
{
    nt_gstate_t *s = state;
    nt_gpu_plan_params_t pp;
    nt_gpu_test_t *plan = NULL;
    size_t nplan = 0;
    int remote_any = 0, owner[NT_NVML_MAX_GPUS];

    if (!s || !s->active)
        return NT_OK;
    for (int i = 0; i < s->ng; i++) {
        remote_any |= nt_g_remote_numa(p, s->g[i].numa) >= 0;
        owner[i] = s->ipc ? s->g[i].owner : 0;
    }
    memset(&pp, 0, sizeof(pp));
    pp.ngpus = s->ng;
    pp.probes = p->params->gpu_probes ? p->params->gpu_probes : NT_GPU_PROBE_ALL;
    pp.bytes = s->bytes;
    pp.full = p->params->mode == NT_SCHED_FULL;
    pp.remote_numa = s->ipc ? s->remote_any : remote_any; /* every rank plans the same tests */
    pp.sm_ok = s->sm_ok;
    pp.peer_ok = s->peer_ok;
    if (nt_gpu_plan(&pp, &plan, &nplan) != NT_OK)
        return NT_ERR_NOMEM;
    for (size_t i = 0; i < nplan; i++)
        if (plan[i].budget_s > s->full_budget_max)
            s->full_budget_max = plan[i].budget_s;
    NT_INFO(INIT, "GPU plan: %zu measurements, budget %.2f s%s", nplan,
            nt_gpu_plan_budget(plan, nplan), s->ipc ? " (GPU pairs across ranks: IPC)" : "");
    /* a turn may wait for every test before it */
    /* a rank waits for its turn while the tests before it run, and local rank 0 may wait out
     * one test's deadline per dead rank on the way */
    s->t_long = s->t_peer + 3 * nt_gpu_plan_budget(plan, nplan) +
                s->nlocal * nt_g_t_done(s, s->full_budget_max);
    for (size_t i = 0; i < nplan; i++) {
        const nt_gpu_test_t *t = &plan[i];
        int iss, par;

        if ((p->stop && *p->stop) || (p->deadline > 0 && nt_clock_s() > p->deadline))
            break;
        nt_gpu_test_ranks(t, owner, &iss, &par);
        if (iss < 0)
            continue;
        if (!s->ipc)
            nt_g_test(s, p, t, (int)i, par, out_links);
        else if (nt_g_turn(s, p, t, (int)i, iss, par, out_links) != NT_OK)
            break; /* local rank 0 is gone: nobody coordinates the rest */
    }
    if (s->ipc && s->me == 0) /* the end of the plan (all of it, or where it stopped), to the */
        for (int r = 1; r < s->nlocal; r++) { /* dead too: one that was only slow stops waiting */
            nt_gmsg_t m = {-1, NT_GM_TURN, NT_OK, -1, {NAN, NAN}};
            int owns = 0;
            for (int i = 0; i < s->ng; i++)
                owns |= s->g[i].owner == r;
            if (owns)
                s->l->ops->send(s->l, s->wrank[r], NT_TAG_GPU, &m, sizeof(m), s->t_short);
        }
    free(plan);
    if (s->ipc)
        nt_g_funnel(s, out_links);
    (void)out_checks;
    /* The PCIe checks (under load where H2D ran) go out with finish(): the node's checks are
     * replaced by the node checks after the run (run.c), so they are filed there. */
    return NT_OK;
}

static nt_status_t nt_g_finish(void *state, nt_probe_t *p, cJSON *node_json, cJSON *checks)
{
    nt_gstate_t *s = state;
    char msg[512], tgt[64];
    cJSON *gpus = node_json ? cJSON_GetObjectItemCaseSensitive(node_json, "gpus") : NULL;

    (void)p;
    if (!s || !s->nvml)
        return NT_OK;
    if (!s->pcie_done) /* under load where the H2D copies ran, else idle (width only) */
        nt_g_inventory_checks(s, checks, 2);
    /* Ranks of the node that stopped answering (set-up, a test, or their links). */
    for (int r = 1; r < s->nlocal && s->me == 0; r++)
        if (s->dead[r]) {
            char w[160];
            snprintf(tgt, sizeof(tgt), "local rank %d", r);
            nt_g_check(checks,
                       nt_check_create_str("gpu_ranks", s->host, tgt, NT_FAIL, "silent", "answered",
                                           "%s: the GPU pairs it takes part in are not "
                                           "measured",
                                           nt_g_dead_why(s, r, w, sizeof(w))));
        }
    for (int i = 0; i < s->ng; i++) {
        nt_gdev_t *d = &s->g[i];
        nt_verdict_t v;
        if (d->lost || d->info.nlinks == 0)
            continue;
        d->after = d->info;
        if (nt_nvml_read_counters(i, &d->after) != NT_OK)
            continue;
        v = nt_gpu_counters_verdict(&d->info, &d->after, msg, sizeof(msg));
        snprintf(tgt, sizeof(tgt), "gpu%d (%s) nvlink", i, d->info.bus_id);
        if (v != NT_SKIPPED)
            nt_g_check(checks, nt_check_create("error_counters", s->host, tgt, v, NAN, 0, "errors",
                                               "%s", msg));
        /* the report's counters are the ones read after the run */
        for (cJSON *o = gpus ? gpus->child : NULL; o; o = o->next)
            if (nt_pci_bus_id_equal(nt_json_get_str(o, "pci_bus_id", ""), d->info.bus_id))
                nt_gpu_info_to_json(&d->after, o);
    }
    return NT_OK;
}

const nt_link_probe_ops_t nt_gpu_probe_ops = {
    .kind = "gpu",
    .what = "GPU copies: host<->device, device-local, GPU pairs over NVLink/PCIe",
    .live_hw = 1,
    .init = nt_g_init,
    .run_pair = nt_g_run_pair,
    .run_local = nt_g_run_local,
    .run_local_all = 1, /* IPC mode: every owner of a GPU measures (docs/gpu.md) */
    .finish = nt_g_finish,
    .cleanup = nt_g_cleanup,
};
