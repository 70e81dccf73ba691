/* Test stand-in for libnvidia-ml.so.1 (unit tests and the no-GPU probe runs of `make test-gpu`
 * only): an 8-GPU NVSwitch node, NVIDIA H100 80GB HBM3, 18 NVLink4 links per GPU to NVSwitch,
 * PCIe Gen5 x16 capable and idle at Gen1 x16. The declarations follow lib/node/nvml.c (NVML's first
 * struct layouts). Knobs (environment, read at every call):
 *   NT_FAKE_NVML_INIT_RC=N   nvmlInit_v2 returns N
 *   NT_FAKE_NVML_LOST=i      GPU i has fallen off the bus (GPU_IS_LOST from nvmlDeviceGetName)
 *   NT_FAKE_NVML_DOWN=l      NVLink l of gpu0 is down
 *   NT_FAKE_NVML_GROW=1      gpu0 link 3 crc_flit grows by 5 at every read
 *   NT_FAKE_NVML_GPUS=n      n GPUs instead of 8
 *   NT_FAKE_NVML_GEN=g       the current PCIe generation (default 1: idle)
 *   NT_FAKE_NVML_NO_P2P=a,b  nvmlDeviceGetP2PStatus of a, b (either order): not supported
 * Health (the node checks; each fault on one GPU, the figures from tests/fixtures/nodecheck):
 *   NT_FAKE_NVML_ECC=i       GPU i: 2 uncorrectable volatile (and aggregate) ECC errors
 *   NT_FAKE_NVML_ECC_AGG=i   GPU i: 1 uncorrectable aggregate ECC error, none volatile (the
 *                            GH200 of opfiles/nvidia-smi-q-gh200-ecc-aggregate.txt)
 *   NT_FAKE_NVML_REMAP=i     GPU i: 4 uncorrectable remapped rows, pending (gpud #80's capture)
 *   NT_FAKE_NVML_THROTTLE=i  GPU i: HW slowdown and HW thermal slowdown active (0x48), or
 *                            the reasons of NT_FAKE_NVML_THROTTLE_MASK=m (0x88: HW slowdown and
 *                            HW power brake, l4rz's C4130; 0x4: SW power cap, open_clip #703)
 *   NT_FAKE_NVML_PM_OFF=i    GPU i: persistence mode disabled
 *   NT_FAKE_NVML_RESET=i     GPU i: reset required
 *   NT_FAKE_NVML_OLD_GPU=1   a GPU before Ampere: page retirement (GPU i of
 *                            NT_FAKE_NVML_RETIRED=i pending), no row remapping
 *   NT_FAKE_NVML_NO_HEALTH=1 the health calls return NOT_SUPPORTED (an old driver) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char busId[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    unsigned reserved[4];
} pci_t;
typedef struct {
    unsigned long long total, free, used;
} mem_t;
typedef struct {
    unsigned char clusterUuid[16];
    int status;
    unsigned cliqueId;
    unsigned char state;
} fab_t;

typedef struct {
    unsigned fieldId, scopeId;
    long long timestamp, latencyUsec;
    int valueType, nvmlReturn;
    union {
        unsigned ui;
        unsigned long long ull;
    } value;
} field_t;

static const unsigned nt_bus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
static unsigned long long nt_grow;

static int env(const char *k, int dflt)
{
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}
static int idx(void *d)
{
    return (int)(long)d - 1;
}

#define API __attribute__((visibility("default")))
API int nvmlInit_v2(void);
API int nvmlShutdown(void);
API const char *nvmlErrorString(int r);
API int nvmlSystemGetDriverVersion(char *b, unsigned n);
API int nvmlDeviceGetCount_v2(unsigned *n);
API int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
API int nvmlDeviceGetName(void *d, char *b, unsigned n);
API int nvmlDeviceGetUUID(void *d, char *b, unsigned n);
API int nvmlDeviceGetPciInfo(void *d, pci_t *p);
API int nvmlDeviceGetMemoryInfo(void *d, mem_t *m);
API int nvmlDeviceGetCudaComputeCapability(void *d, int *a, int *b);
API int nvmlDeviceGetMigMode(void *d, unsigned *c, unsigned *p);
API int nvmlDeviceGetCurrPcieLinkGeneration(void *d, unsigned *v);
API int nvmlDeviceGetMaxPcieLinkGeneration(void *d, unsigned *v);
API int nvmlDeviceGetCurrPcieLinkWidth(void *d, unsigned *v);
API int nvmlDeviceGetMaxPcieLinkWidth(void *d, unsigned *v);
API int nvmlDeviceGetNvLinkState(void *d, unsigned l, int *s);
API int nvmlDeviceGetNvLinkVersion(void *d, unsigned l, unsigned *v);
API int nvmlDeviceGetNvLinkRemotePciInfo(void *d, unsigned l, pci_t *p);
API int nvmlDeviceGetNvLinkRemoteDeviceType(void *d, unsigned l, int *t);
API int nvmlDeviceGetNvLinkErrorCounter(void *d, unsigned l, int c, unsigned long long *v);
API int nvmlDeviceGetP2PStatus(void *a, void *b, int cap, int *s);
API int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *lvl);
API int nvmlDeviceGetGpuFabricInfo(void *d, fab_t *f);
API int nvmlDeviceGetTotalEccErrors(void *d, int type, int counter, unsigned long long *v);
API int nvmlDeviceGetRemappedRows(void *d, unsigned *corr, unsigned *unc, unsigned *pend, unsigned *fail);
API int nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *r);
API int nvmlDeviceGetPersistenceMode(void *d, int *m);
API int nvmlDeviceGetFieldValues(void *d, int n, field_t *v);
API int nvmlDeviceGetRetiredPagesPendingStatus(void *d, int *p);

int nvmlInit_v2(void)
{
    return env("NT_FAKE_NVML_INIT_RC", 0);
}
int nvmlShutdown(void)
{
    return 0;
}
const char *nvmlErrorString(int r)
{
    switch (r) {
    case 3:
        return "Not Supported";
    case 9:
        return "Driver Not Loaded";
    case 15:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}
int nvmlSystemGetDriverVersion(char *b, unsigned n)
{
    snprintf(b, n, "550.54.15");
    return 0;
}
int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = (unsigned)env("NT_FAKE_NVML_GPUS", 8);
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    if (i >= (unsigned)env("NT_FAKE_NVML_GPUS", 8))
        return 2;
    *d = (void *)(long)(i + 1);
    return 0;
}
int nvmlDeviceGetName(void *d, char *b, unsigned n)
{
    if (idx(d) == env("NT_FAKE_NVML_LOST", -1))
        return 15;
    snprintf(b, n, "NVIDIA H100 80GB HBM3");
    return 0;
}
int nvmlDeviceGetUUID(void *d, char *b, unsigned n)
{
    snprintf(b, n, "GPU-00000000-0000-0000-0000-00000000000%d", idx(d));
    return 0;
}
int nvmlDeviceGetPciInfo(void *d, pci_t *p)
{
    memset(p, 0, sizeof(*p));
    p->bus = nt_bus[idx(d) & 7];
    snprintf(p->busId, sizeof(p->busId), "0000:%02X:00.0", p->bus);
    return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, mem_t *m)
{
    (void)d;
    m->total = 85520809984ull;
    m->free = m->total;
    m->used = 0;
    return 0;
}
int nvmlDeviceGetCudaComputeCapability(void *d, int *a, int *b)
{
    (void)d;
    *a = 9;
    *b = 0;
    return 0;
}
int nvmlDeviceGetMigMode(void *d, unsigned *c, unsigned *p)
{
    (void)d;
    *c = *p = 0;
    return 0;
}
int nvmlDeviceGetCurrPcieLinkGeneration(void *d, unsigned *v)
{
    (void)d;
    *v = (unsigned)env("NT_FAKE_NVML_GEN", 1); /* 1: idle */
    return 0;
}
int nvmlDeviceGetMaxPcieLinkGeneration(void *d, unsigned *v)
{
    (void)d;
    *v = 5;
    return 0;
}
int nvmlDeviceGetCurrPcieLinkWidth(void *d, unsigned *v)
{
    (void)d;
    *v = 16;
    return 0;
}
int nvmlDeviceGetMaxPcieLinkWidth(void *d, unsigned *v)
{
    (void)d;
    *v = 16;
    return 0;
}
int nvmlDeviceGetNvLinkState(void *d, unsigned l, int *s)
{
    if (l >= 18)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT past the last link */
    *s = !(idx(d) == 0 && (int)l == env("NT_FAKE_NVML_DOWN", -1));
    return 0;
}
int nvmlDeviceGetNvLinkVersion(void *d, unsigned l, unsigned *v)
{
    (void)d, (void)l;
    *v = 4;
    return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo(void *d, unsigned l, pci_t *p)
{
    (void)d;
    memset(p, 0, sizeof(*p));
    snprintf(p->busId, sizeof(p->busId), "0000:%02X:00.0", 0xc0 + l % 4); /* 4 NVSwitches */
    return 0;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void *d, unsigned l, int *t)
{
    (void)d, (void)l;
    *t = 2; /* NVSwitch */
    return 0;
}
int nvmlDeviceGetNvLinkErrorCounter(void *d, unsigned l, int c, unsigned long long *v)
{
    *v = 0;
    if (idx(d) == 0 && l == 3 && c == 2 && env("NT_FAKE_NVML_GROW", 0))
        *v = (nt_grow += 5);
    return 0;
}
int nvmlDeviceGetP2PStatus(void *a, void *b, int cap, int *s)
{
    const char *v = getenv("NT_FAKE_NVML_NO_P2P");
    int x = -1, y = -1;
    (void)cap;
    if (v)
        sscanf(v, "%d,%d", &x, &y);
    *s = (x == idx(a) && y == idx(b)) || (x == idx(b) && y == idx(a)) ? 5 /* NOT_SUPPORTED */ : 0;
    return 0;
}
int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *lvl)
{
    *lvl = (idx(a) < 4) == (idx(b) < 4) ? 30 : 50; /* PHB within a socket, SYS across */
    return 0;
}
int nvmlDeviceGetGpuFabricInfo(void *d, fab_t *f)
{
    (void)d;
    memset(f, 0, sizeof(*f));
    f->state = 3; /* completed */
    return 0;
}

/* 1 when knob k names GPU d. */
static int is(const char *k, void *d)
{
    return env(k, -1) == idx(d);
}
int nvmlDeviceGetTotalEccErrors(void *d, int type, int counter, unsigned long long *v)
{
    if (env("NT_FAKE_NVML_NO_HEALTH", 0))
        return 3;
    *v = type == 1 && is("NT_FAKE_NVML_ECC", d) ? 2 : 0;
    if (type == 1 && counter == 1 && is("NT_FAKE_NVML_ECC_AGG", d)) /* NVML_AGGREGATE_ECC */
        *v = 1;
    return 0;
}
int nvmlDeviceGetRemappedRows(void *d, unsigned *corr, unsigned *unc, unsigned *pend, unsigned *fail)
{
    if (env("NT_FAKE_NVML_NO_HEALTH", 0) || env("NT_FAKE_NVML_OLD_GPU", 0))
        return 3;
    *corr = 0;
    *unc = is("NT_FAKE_NVML_REMAP", d) ? 4 : 0;
    *pend = is("NT_FAKE_NVML_REMAP", d);
    *fail = 0;
    return 0;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *r)
{
    if (env("NT_FAKE_NVML_NO_HEALTH", 0))
        return 3;
    const char *m = getenv("NT_FAKE_NVML_THROTTLE_MASK");
    *r = !is("NT_FAKE_NVML_THROTTLE", d) ? 0x1                 /* idle is not a fault */
         : m && *m                        ? strtoull(m, NULL, 0)
                                          : 0x48;
    return 0;
}
int nvmlDeviceGetPersistenceMode(void *d, int *m)
{
    if (env("NT_FAKE_NVML_NO_HEALTH", 0))
        return 3;
    *m = !is("NT_FAKE_NVML_PM_OFF", d);
    return 0;
}
int nvmlDeviceGetFieldValues(void *d, int n, field_t *v)
{
    if (env("NT_FAKE_NVML_NO_HEALTH", 0))
        return 3;
    for (int i = 0; i < n; i++) {
        v[i].nvmlReturn = v[i].fieldId == 226 ? 0 : 3;
        v[i].value.ui = v[i].fieldId == 226 && is("NT_FAKE_NVML_RESET", d);
    }
    return 0;
}
int nvmlDeviceGetRetiredPagesPendingStatus(void *d, int *p)
{
    if (env("NT_FAKE_NVML_NO_HEALTH", 0) || !env("NT_FAKE_NVML_OLD_GPU", 0))
        return 3; /* row-remapping GPUs do not retire pages */
    *p = is("NT_FAKE_NVML_RETIRED", d);
    return 0;
}
