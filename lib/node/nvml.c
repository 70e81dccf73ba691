/* NVML inventory (include/nettune/nvml.h): dlopen, own declarations, one conversion point. The
 * declarations follow NVIDIA/nccl v2.28.9-1 src/include/nvmlwrap.h (nvmlPciInfo_t :75,
 * nvmlGpuFabricInfo_t :200, the P2P enums :93-114); the unversioned symbols are those NCCL
 * loads (src/misc/nvmlwrap.cc:82-102), so the structs keep their first layout. */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/log.h"
#include "nettune/nodecheck.h"
#include "nettune/nvml.h"
#include "nettune/report.h"

typedef void *nvml_dev_t;
typedef struct {
    char busId[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned reserved[4];
} nvml_pci_t;
typedef struct {
    unsigned long long total, free, used;
} nvml_mem_t;
typedef struct {
    unsigned char clusterUuid[16];
    int status;
    unsigned cliqueId;
    unsigned char state;
} nvml_fabric_t;

/* nvmlFieldValue_t (NVML API reference, nvmlDeviceGetFieldValues): value is a union of 8 bytes. */
typedef struct {
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType, nvmlReturn;
    union {
        unsigned ui;
        unsigned long long ull;
    } value;
} nvml_field_t;
#define NT_NVML_FI_DEV_RESET_STATUS 226 /* deprecated for GET_GPU_RECOVERY_ACTION (230) in R570 */
#define NT_NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1
#define NT_NVML_VOLATILE_ECC 0
#define NT_NVML_AGGREGATE_ECC 1

const char *const nt_nvlink_counter_names[NT_NVLINK_COUNTERS] = {"replay", "recovery", "crc_flit",
                                                                 "crc_data"};

static struct {
    int (*init)(void);
    int (*shutdown)(void);
    const char *(*error_string)(int);
    int (*driver_version)(char *, unsigned);
    int (*count)(unsigned *);
    int (*handle)(unsigned, nvml_dev_t *);
    int (*name)(nvml_dev_t, char *, unsigned);
    int (*uuid)(nvml_dev_t, char *, unsigned);
    int (*pci)(nvml_dev_t, nvml_pci_t *);
    int (*mem)(nvml_dev_t, nvml_mem_t *);
    int (*cc)(nvml_dev_t, int *, int *);
    int (*mig)(nvml_dev_t, unsigned *, unsigned *);
    int (*gen)(nvml_dev_t, unsigned *);
    int (*max_gen)(nvml_dev_t, unsigned *);
    int (*width)(nvml_dev_t, unsigned *);
    int (*max_width)(nvml_dev_t, unsigned *);
    int (*link_state)(nvml_dev_t, unsigned, int *);
    int (*link_version)(nvml_dev_t, unsigned, unsigned *);
    int (*link_remote_pci)(nvml_dev_t, unsigned, nvml_pci_t *);
    int (*link_remote_type)(nvml_dev_t, unsigned, int *);
    int (*link_counter)(nvml_dev_t, unsigned, int, unsigned long long *);
    int (*p2p)(nvml_dev_t, nvml_dev_t, int, int *);
    int (*ancestor)(nvml_dev_t, nvml_dev_t, int *);
    int (*fabric)(nvml_dev_t, nvml_fabric_t *);
    int (*ecc_total)(nvml_dev_t, int, int, unsigned long long *);
    int (*remapped_rows)(nvml_dev_t, unsigned *, unsigned *, unsigned *, unsigned *);
    int (*throttle)(nvml_dev_t, unsigned long long *);
    int (*persistence)(nvml_dev_t, int *);
    int (*field_values)(nvml_dev_t, int, nvml_field_t *);
    int (*retired_pending)(nvml_dev_t, int *);
} nv;

#define SYM(field, name, required)                                                                 \
    {                                                                                              \
        (void **)&nv.field, name, required                                                         \
    }
static const struct {
    void **slot;
    const char *name;
    int required;
} nt_nvml_syms[] = {
    SYM(init, "nvmlInit_v2", 1),
    SYM(shutdown, "nvmlShutdown", 1),
    SYM(error_string, "nvmlErrorString", 1),
    SYM(driver_version, "nvmlSystemGetDriverVersion", 0),
    SYM(count, "nvmlDeviceGetCount_v2", 1),
    SYM(handle, "nvmlDeviceGetHandleByIndex_v2", 1),
    SYM(name, "nvmlDeviceGetName", 1),
    SYM(uuid, "nvmlDeviceGetUUID", 0),
    SYM(pci, "nvmlDeviceGetPciInfo", 1),
    SYM(mem, "nvmlDeviceGetMemoryInfo", 0),
    SYM(cc, "nvmlDeviceGetCudaComputeCapability", 0),
    SYM(mig, "nvmlDeviceGetMigMode", 0),
    SYM(gen, "nvmlDeviceGetCurrPcieLinkGeneration", 0),
    SYM(max_gen, "nvmlDeviceGetMaxPcieLinkGeneration", 0),
    SYM(width, "nvmlDeviceGetCurrPcieLinkWidth", 0),
    SYM(max_width, "nvmlDeviceGetMaxPcieLinkWidth", 0),
    SYM(link_state, "nvmlDeviceGetNvLinkState", 0),
    SYM(link_version, "nvmlDeviceGetNvLinkVersion", 0),
    SYM(link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo", 0),
    SYM(link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType", 0),
    SYM(link_counter, "nvmlDeviceGetNvLinkErrorCounter", 0),
    SYM(p2p, "nvmlDeviceGetP2PStatus", 0),
    SYM(ancestor, "nvmlDeviceGetTopologyCommonAncestor", 0),
    SYM(fabric, "nvmlDeviceGetGpuFabricInfo", 0),
    SYM(ecc_total, "nvmlDeviceGetTotalEccErrors", 0),
    SYM(remapped_rows, "nvmlDeviceGetRemappedRows", 0),
    SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons", 0),
    SYM(persistence, "nvmlDeviceGetPersistenceMode", 0),
    SYM(field_values, "nvmlDeviceGetFieldValues", 0),
    SYM(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus", 0),
};

static pthread_mutex_t nt_nvml_mu = PTHREAD_MUTEX_INITIALIZER;
static int nt_nvml_loaded = -1;
static char nt_nvml_why[256];
static void *nt_nvml_handle;
static __thread char nt_nvml_err[256];

nt_status_t nt_nvml_status(int r)
{
    switch (r) {
    case NT_NVML_SUCCESS:
        return NT_OK;
    case NT_NVML_ERROR_NOT_SUPPORTED:
    case NT_NVML_ERROR_FUNCTION_NOT_FOUND:
    case NT_NVML_ERROR_DRIVER_NOT_LOADED:
    case NT_NVML_ERROR_LIBRARY_NOT_FOUND:
    case NT_NVML_ERROR_NO_PERMISSION:
        return NT_ERR_UNSUPPORTED;
    case NT_NVML_ERROR_INVALID_ARGUMENT:
        return NT_ERR_INVALID;
    case NT_NVML_ERROR_NOT_FOUND:
        return NT_ERR_NOT_FOUND;
    case NT_NVML_ERROR_INSUFFICIENT_SIZE:
        return NT_ERR_NOMEM;
    case NT_NVML_ERROR_TIMEOUT:
        return NT_ERR_TIMEOUT;
    default:
        return NT_ERR_SYSTEM;
    }
}

/* The one conversion point. */
static nt_status_t nt_nv_check(const char *call, int r)
{
    const char *s;
    if (r == NT_NVML_SUCCESS)
        return NT_OK;
    s = nv.error_string ? nv.error_string(r) : NULL;
    snprintf(nt_nvml_err, sizeof(nt_nvml_err), "%s: %s", call, s ? s : "NVML error");
    NT_DEBUG(INIT, "%s (%d)", nt_nvml_err, r);
    return nt_nvml_status(r);
}

#define NT_NV(field, call, ...)                                                                    \
    (nt_nvml_loaded != 1 || !nv.field ? nt_nv_check(call, NT_NVML_ERROR_FUNCTION_NOT_FOUND)        \
                                      : nt_nv_check(call, nv.field(__VA_ARGS__)))

const char *nt_nvml_last_error(void)
{
    return nt_nvml_err;
}

nt_status_t nt_nvml_load(const char *lib, char *why, size_t whylen)
{
    const char *env = getenv("NETTUNE_TEST_LIBNVML");
    int r;

    pthread_mutex_lock(&nt_nvml_mu);
    if (nt_nvml_loaded >= 0)
        goto done;
    if (!lib)
        lib = env && *env ? env : "libnvidia-ml.so.1";
    nt_nvml_loaded = 0;
    nt_nvml_handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!nt_nvml_handle) {
        NT_DEBUG(INIT, "cannot load '%s': %s", lib, dlerror());
        snprintf(nt_nvml_why, sizeof(nt_nvml_why), "no NVIDIA driver (%s cannot be loaded)", lib);
        goto done;
    }
    memset(&nv, 0, sizeof(nv));
    for (size_t i = 0; i < sizeof(nt_nvml_syms) / sizeof(nt_nvml_syms[0]); i++) {
        *nt_nvml_syms[i].slot = dlsym(nt_nvml_handle, nt_nvml_syms[i].name);
        if (!*nt_nvml_syms[i].slot && nt_nvml_syms[i].required) {
            snprintf(nt_nvml_why, sizeof(nt_nvml_why), "NVML (%s) lacks %s", lib,
                     nt_nvml_syms[i].name);
            goto unload;
        }
    }
    if ((r = nv.init()) != NT_NVML_SUCCESS) {
        const char *s = nv.error_string(r);
        snprintf(nt_nvml_why, sizeof(nt_nvml_why), "nvmlInit failed: %s", s ? s : "NVML error");
        goto unload;
    }
    nt_nvml_loaded = 1;
    nt_nvml_why[0] = '\0';
    goto done;
unload:
    dlclose(nt_nvml_handle);
    nt_nvml_handle = NULL;
    memset(&nv, 0, sizeof(nv));
done:
    if (why && whylen)
        snprintf(why, whylen, "%s", nt_nvml_why);
    r = nt_nvml_loaded;
    pthread_mutex_unlock(&nt_nvml_mu);
    return r == 1 ? NT_OK : NT_ERR_UNSUPPORTED;
}

void nt_nvml_reset(void)
{
    pthread_mutex_lock(&nt_nvml_mu);
    if (nt_nvml_loaded == 1 && nv.shutdown)
        nv.shutdown();
    if (nt_nvml_handle)
        dlclose(nt_nvml_handle);
    nt_nvml_handle = NULL;
    memset(&nv, 0, sizeof(nv));
    nt_nvml_loaded = -1;
    nt_nvml_why[0] = '\0';
    nt_nvml_err[0] = '\0';
    pthread_mutex_unlock(&nt_nvml_mu);
}

nt_status_t nt_nvml_driver_version(char *buf, size_t len)
{
    buf[0] = '\0';
    return NT_NV(driver_version, "nvmlSystemGetDriverVersion", buf, (unsigned)len);
}

nt_status_t nt_nvml_gpu_count(int *n)
{
    unsigned c = 0;
    nt_status_t st = NT_NV(count, "nvmlDeviceGetCount", &c);
    *n = st == NT_OK ? (c > NT_NVML_MAX_GPUS ? NT_NVML_MAX_GPUS : (int)c) : 0;
    return st;
}

static nt_status_t nt_nv_dev(int index, nvml_dev_t *d)
{
    return NT_NV(handle, "nvmlDeviceGetHandleByIndex", (unsigned)index, d);
}

void nt_pci_bus_id_normalize(const char *in, char *out, size_t len)
{
    char tmp[32];
    const char *p = in, *colon = strchr(in, ':');
    size_t i = 0;

    /* "00000000:18:00.0" -> "0000:18:00.0": keep the last 4 digits of the domain */
    if (colon && colon - in > 4 && strchr(colon + 1, ':'))
        p = colon - 4;
    for (; *p && i + 1 < sizeof(tmp); p++)
        tmp[i++] = (char)tolower((unsigned char)*p);
    tmp[i] = '\0';
    snprintf(out, len, "%s", tmp);
}

int nt_pci_bus_id_equal(const char *a, const char *b)
{
    char x[32], y[32];
    if (!a || !b || !*a || !*b)
        return 0;
    nt_pci_bus_id_normalize(a, x, sizeof(x));
    nt_pci_bus_id_normalize(b, y, sizeof(y));
    return strcmp(x, y) == 0;
}

static void nt_nv_links(nvml_dev_t d, nt_gpu_info_t *g, int counters_only)
{
    for (int l = 0; l < NT_NVML_MAX_LINKS; l++) {
        nt_nvlink_info_t *k = &g->links[l];
        int state = 0, type = NT_NVLINK_REMOTE_UNKNOWN;
        unsigned ver = 0;
        nvml_pci_t rp;

        if (counters_only) {
            if (l >= g->nlinks)
                break;
        } else {
            memset(k, 0, sizeof(*k));
            k->link = l;
            k->remote = NT_NVLINK_REMOTE_UNKNOWN;
            /* links are numbered densely: the first link NVML refuses ends the list */
            if (!nv.link_state || nv.link_state(d, (unsigned)l, &state) != NT_NVML_SUCCESS)
                break;
            g->nlinks = l + 1;
            k->active = state != 0;
            if (nv.link_version && nv.link_version(d, (unsigned)l, &ver) == NT_NVML_SUCCESS)
                k->version = (int)ver;
            memset(&rp, 0, sizeof(rp));
            if (nv.link_remote_pci && nv.link_remote_pci(d, (unsigned)l, &rp) == NT_NVML_SUCCESS &&
                rp.busId[0]) {
                rp.busId[sizeof(rp.busId) - 1] = '\0';
                nt_pci_bus_id_normalize(rp.busId, k->remote_bus_id, sizeof(k->remote_bus_id));
            }
            if (nv.link_remote_type &&
                nv.link_remote_type(d, (unsigned)l, &type) == NT_NVML_SUCCESS)
                k->remote = (nt_nvlink_remote_t)type;
        }
        k->counters_ok = nv.link_counter != NULL;
        for (int c = 0; c < NT_NVLINK_COUNTERS && nv.link_counter; c++)
            if (nv.link_counter(d, (unsigned)l, c, &k->counters[c]) != NT_NVML_SUCCESS)
                k->counters_ok = 0;
    }
}

nt_status_t nt_nvml_gpu_info(int index, nt_gpu_info_t *g)
{
    nvml_dev_t d;
    nvml_pci_t pci;
    nvml_mem_t mem;
    nvml_fabric_t fab;
    unsigned u, pend;
    nt_status_t st;

    memset(g, 0, sizeof(*g));
    g->index = index;
    g->numa_node = -1;
    g->mig = -1;
    g->fabric_state = NT_FABRIC_UNKNOWN;
    if ((st = nt_nv_dev(index, &d)) != NT_OK)
        return st;
    if ((st = NT_NV(name, "nvmlDeviceGetName", d, g->name, sizeof(g->name))) != NT_OK)
        return st;
    memset(&pci, 0, sizeof(pci));
    if ((st = NT_NV(pci, "nvmlDeviceGetPciInfo", d, &pci)) != NT_OK)
        return st;
    pci.busId[sizeof(pci.busId) - 1] = '\0';
    nt_pci_bus_id_normalize(pci.busId, g->bus_id, sizeof(g->bus_id));
    if (nv.uuid && nv.uuid(d, g->uuid, sizeof(g->uuid)) != NT_NVML_SUCCESS)
        g->uuid[0] = '\0';
    if (nv.mem && nv.mem(d, &mem) == NT_NVML_SUCCESS)
        g->memory_bytes = mem.total;
    if (nv.cc && nv.cc(d, &g->cc_major, &g->cc_minor) != NT_NVML_SUCCESS)
        g->cc_major = g->cc_minor = 0;
    if (nv.mig && nv.mig(d, &u, &pend) == NT_NVML_SUCCESS)
        g->mig = u ? 1 : 0;
    if (nv.gen && nv.gen(d, &u) == NT_NVML_SUCCESS)
        g->pcie_gen = (int)u;
    if (nv.width && nv.width(d, &u) == NT_NVML_SUCCESS)
        g->pcie_width = (int)u;
    if (nv.max_gen && nv.max_gen(d, &u) == NT_NVML_SUCCESS)
        g->pcie_max_gen = (int)u;
    if (nv.max_width && nv.max_width(d, &u) == NT_NVML_SUCCESS)
        g->pcie_max_width = (int)u;
    nt_nv_links(d, g, 0);
    memset(&fab, 0, sizeof(fab));
    if (nv.fabric && nv.fabric(d, &fab) == NT_NVML_SUCCESS && fab.state <= NT_FABRIC_COMPLETED) {
        g->fabric_state = (nt_fabric_state_t)fab.state;
        g->fabric_status = fab.status;
    }
    return NT_OK;
}

nt_status_t nt_nvml_read_counters(int index, nt_gpu_info_t *g)
{
    nvml_dev_t d;
    nt_status_t st = nt_nv_dev(index, &d);
    if (st != NT_OK)
        return st;
    nt_nv_links(d, g, 1);
    return NT_OK;
}

nt_status_t nt_nvml_pcie_current(int index, int *gen, int *width)
{
    nvml_dev_t d;
    unsigned a = 0, b = 0;
    nt_status_t st = nt_nv_dev(index, &d);
    *gen = *width = 0;
    if (st == NT_OK)
        st = NT_NV(gen, "nvmlDeviceGetCurrPcieLinkGeneration", d, &a);
    if (st == NT_OK)
        st = NT_NV(width, "nvmlDeviceGetCurrPcieLinkWidth", d, &b);
    if (st == NT_OK) {
        *gen = (int)a;
        *width = (int)b;
    }
    return st;
}

nt_status_t nt_nvml_p2p_status(int a, int b, int *ok, char *why, size_t whylen)
{
    static const char *const reasons[] = {"ok",
                                          "chipset not supported",
                                          "GPU not supported",
                                          "IOH topology not supported",
                                          "disabled by regkey",
                                          "not supported",
                                          "unknown"};
    nvml_dev_t da, db;
    int s = 6;
    nt_status_t st;

    *ok = 0;
    if (why && whylen)
        why[0] = '\0';
    if ((st = nt_nv_dev(a, &da)) != NT_OK || (st = nt_nv_dev(b, &db)) != NT_OK)
        return st;
    if ((st = NT_NV(p2p, "nvmlDeviceGetP2PStatus", da, db, 0 /* READ */, &s)) != NT_OK)
        return st;
    *ok = s == 0;
    if (why && whylen)
        snprintf(why, whylen, "%s", s >= 0 && s <= 6 ? reasons[s] : "unknown");
    return NT_OK;
}

nt_status_t nt_nvml_path(int a, int b, char *buf, size_t len)
{
    nvml_dev_t da, db;
    int lvl = 0;
    const char *s;
    nt_status_t st;

    buf[0] = '\0';
    if ((st = nt_nv_dev(a, &da)) != NT_OK || (st = nt_nv_dev(b, &db)) != NT_OK)
        return st;
    if ((st = NT_NV(ancestor, "nvmlDeviceGetTopologyCommonAncestor", da, db, &lvl)) != NT_OK)
        return st;
    /* nvmlGpuTopologyLevel_t: INTERNAL 0, SINGLE 10, MULTIPLE 20, HOSTBRIDGE 30, NODE 40,
     * SYSTEM 50 */
    s = lvl <= 10 ? "PIX" : lvl <= 20 ? "PXB" : lvl <= 30 ? "PHB" : lvl <= 40 ? "NODE" : "SYS";
    snprintf(buf, len, "%s", s);
    return NT_OK;
}

const char *nt_fabric_state_string(nt_fabric_state_t s)
{
    switch (s) {
    case NT_FABRIC_NOT_SUPPORTED:
        return "not_supported";
    case NT_FABRIC_NOT_STARTED:
        return "not_started";
    case NT_FABRIC_IN_PROGRESS:
        return "in_progress";
    case NT_FABRIC_COMPLETED:
        return "completed";
    default:
        return "unknown";
    }
}

static void nt_set(cJSON *obj, const char *key, cJSON *v)
{
    if (!v)
        return;
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, v);
    else
        cJSON_AddItemToObject(obj, key, v);
}

static cJSON *nt_int_or_null(int v)
{
    return v > 0 ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

nt_status_t nt_gpu_info_to_json(const nt_gpu_info_t *g, cJSON *obj)
{
    static const char *const remote[] = {"gpu", "npu", "switch"};
    char cc[16];
    cJSON *pcie, *links;

    nt_set(obj, "index", cJSON_CreateNumber(g->index));
    nt_set(obj, "uuid", g->uuid[0] ? cJSON_CreateString(g->uuid) : cJSON_CreateNull());
    nt_set(obj, "name", cJSON_CreateString(g->name));
    nt_set(obj, "pci_bus_id", cJSON_CreateString(g->bus_id));
    nt_set(obj, "numa_node",
           g->numa_node >= 0 ? cJSON_CreateNumber(g->numa_node) : cJSON_CreateNull());
    nt_set(obj, "memory_bytes",
           g->memory_bytes ? cJSON_CreateNumber((double)g->memory_bytes) : cJSON_CreateNull());
    snprintf(cc, sizeof(cc), "%d.%d", g->cc_major, g->cc_minor);
    nt_set(obj, "compute_capability", g->cc_major ? cJSON_CreateString(cc) : cJSON_CreateNull());
    nt_set(obj, "mig",
           g->mig < 0 ? cJSON_CreateNull() : cJSON_CreateString(g->mig ? "enabled" : "disabled"));
    pcie = cJSON_GetObjectItemCaseSensitive(obj, "pcie");
    if (!cJSON_IsObject(pcie)) {
        pcie = cJSON_CreateObject();
        nt_set(obj, "pcie", pcie);
    }
    if (!pcie)
        return NT_ERR_NOMEM;
    nt_set(pcie, "gen", nt_int_or_null(g->pcie_gen));
    nt_set(pcie, "width", nt_int_or_null(g->pcie_width));
    nt_set(pcie, "max_gen", nt_int_or_null(g->pcie_max_gen));
    nt_set(pcie, "max_width", nt_int_or_null(g->pcie_max_width));
    nt_set(pcie, "source", cJSON_CreateString("nvml"));
    links = cJSON_CreateArray();
    if (!links)
        return NT_ERR_NOMEM;
    for (int l = 0; l < g->nlinks; l++) {
        const nt_nvlink_info_t *k = &g->links[l];
        cJSON *o = cJSON_CreateObject(), *c;
        if (!o)
            break;
        cJSON_AddNumberToObject(o, "link", k->link);
        cJSON_AddStringToObject(o, "state", k->active ? "up" : "down");
        cJSON_AddItemToObject(o, "version", nt_int_or_null(k->version));
        cJSON_AddStringToObject(o, "remote",
                                (unsigned)k->remote <= 2 ? remote[k->remote] : "unknown");
        cJSON_AddItemToObject(o, "remote_pci_bus_id",
                              k->remote_bus_id[0] ? cJSON_CreateString(k->remote_bus_id)
                                                  : cJSON_CreateNull());
        if (k->counters_ok && (c = cJSON_AddObjectToObject(o, "counters")) != NULL)
            for (int i = 0; i < NT_NVLINK_COUNTERS; i++)
                cJSON_AddNumberToObject(c, nt_nvlink_counter_names[i], (double)k->counters[i]);
        cJSON_AddItemToArray(links, o);
    }
    nt_set(obj, "nvlinks", links);
    nt_set(obj, "fabric_manager", cJSON_CreateString(nt_fabric_state_string(g->fabric_state)));
    return NT_OK;
}

nt_status_t nt_nvml_health(int index, nt_gpu_health_t *h)
{
    nvml_dev_t d = NULL;
    unsigned corr = 0;
    nvml_field_t fv;
    nt_status_t st;

    memset(h, 0, sizeof(*h));
    h->index = index;
    if ((st = nt_nv_dev(index, &d)) != NT_OK)
        return st;
    h->ecc_ok = NT_NV(ecc_total, "nvmlDeviceGetTotalEccErrors", d, NT_NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                      NT_NVML_VOLATILE_ECC, &h->ecc_uncorr_volatile) == NT_OK &&
                NT_NV(ecc_total, "nvmlDeviceGetTotalEccErrors", d, NT_NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                      NT_NVML_AGGREGATE_ECC, &h->ecc_uncorr_aggregate) == NT_OK;
    h->remap_ok = NT_NV(remapped_rows, "nvmlDeviceGetRemappedRows", d, &corr, &h->remap_uncorr_rows,
                        &h->remap_pending, &h->remap_failed) == NT_OK;
    h->throttle_ok =
        NT_NV(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons", d, &h->throttle) == NT_OK;
    h->persistence_ok =
        NT_NV(persistence, "nvmlDeviceGetPersistenceMode", d, &h->persistence) == NT_OK;
    memset(&fv, 0, sizeof(fv));
    fv.fieldId = NT_NVML_FI_DEV_RESET_STATUS;
    if (NT_NV(field_values, "nvmlDeviceGetFieldValues", d, 1, &fv) == NT_OK &&
        fv.nvmlReturn == NT_NVML_SUCCESS) {
        h->reset_ok = 1;
        h->reset_required = fv.value.ui;
    }
    h->retired_ok = NT_NV(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus", d,
                          &h->retired_pending) == NT_OK;
    return NT_OK;
}
