/* Test stand-in for libcuda.so.1 that simulates GPUs on the CPU (`make test-gpu` only), so that
 * nettune-probe's GPU probe runs end to end without a GPU: contexts, memory (malloc), copies
 * (memcpy), streams with a virtual clock, events on that clock, the three kernels of
 * probes/gpu/kernels.cu by name (spin: nothing; copy: memcpy; pong: a thread that plays the
 * kernel's side of the ping-pong). A copy advances its stream's clock by bytes / rate, the rate
 * set by what it connects (it pairs with fake_nvml.c's 8 GPUs and bus ids):
 *   host <-> device 50 GB/s (PCIe Gen5 x16 healthy: 47-55, REFERENCE section 5),
 *   device <-> peer 376 GB/s (H100 NVSwitch pair), device-local 1100 GB/s; SM copies 0.9 x;
 *   NT_FAKE_SLOW_GPU=i: GPU i at 20 GB/s to the host and 150 GB/s to every peer.
 * NT_FAKE_NO_PEER=a,b: no peer access a -> b. Every result is a real computation on these
 * figures: the probe's plan, timing arithmetic, links and verdicts are what is tested.
 *
 * Visibility, as the driver's CUDA_VISIBLE_DEVICES: a process sees the GPUs that variable lists
 * (indices, default all), a thread may narrow it for itself with nt_fake_cuda_visible("3")
 * (the in-process launcher's ranks are threads: tests/gpu/test_gpu_ipc.c). A CUdevice here is
 * the physical index; a device the caller does not see is CUDA_ERROR_INVALID_DEVICE. CUDA IPC
 * works between threads of this process (a handle carries the pointer; an opened event
 * follows the exporter's records) and between processes of one machine (device memory and
 * interprocess events are memfd mappings; a handle names the exporter's pid and fd, the
 * opener maps /proc/<pid>/fd/<fd>); NT_FAKE_IPC_OPEN_FAIL=i: opening a handle of GPU i's
 * memory fails (CUDA_ERROR_MAP_FAILED), as in a container without the IPC namespace;
 * NT_FAKE_IPC_GET_FAIL=i: GPU i's memory has no IPC handle (CUDA_ERROR_NOT_SUPPORTED). */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define NG 8
#define MAXA 256

static const unsigned nt_bus[NG] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
static struct {
    char *p;
    size_t n;
    int dev;
    int fd; /* its memfd (-1: opened from another process's handle) */
} allocs[MAXA];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int cur = -1; /* current context = device */

typedef struct stream {
    double t; /* virtual clock, seconds */
    pthread_t th;
    int busy;
} stream_t;
typedef struct event {
    double t;
    struct event *orig; /* an event opened from an IPC handle: the exporter's */
    int ipc, fd;        /* created interprocess (a memfd mapping), its fd */
} event_t;

static __thread int vis_set; /* this thread narrowed its view (nt_fake_cuda_visible) */
static __thread int vis[NG], nvis;

/* The calling thread sees the GPUs of list ("3", "0,2"; NULL: back to the process's view). */
API void nt_fake_cuda_visible(const char *list);
void nt_fake_cuda_visible(const char *list)
{
    vis_set = 0;
    if (!list)
        return;
    nvis = 0;
    for (const char *c = list; *c && nvis < NG;) {
        char *e;
        long v = strtol(c, &e, 10);
        if (e == c)
            break;
        if (v >= 0 && v < NG)
            vis[nvis++] = (int)v;
        c = *e == ',' ? e + 1 : e;
        if (*e != ',')
            break;
    }
    vis_set = 1;
}

/* The GPUs this thread sees: its own list, else CUDA_VISIBLE_DEVICES, else all. */
static void view(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (vis_set)
        return;
    if (v) {
        nt_fake_cuda_visible(v);
        vis_set = 0; /* read again at the next call */
        return;
    }
    nvis = NG;
    for (int i = 0; i < NG; i++)
        vis[i] = i;
}

static int visible(int d)
{
    view();
    for (int i = 0; i < nvis; i++)
        if (vis[i] == d)
            return 1;
    return 0;
}

static int env(const char *k, int d)
{
    const char *v = getenv(k);
    return v && *v ? atoi(v) : d;
}

static int owner(const void *p)
{
    int d = -1;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAXA; i++)
        if (allocs[i].p && (const char *)p >= allocs[i].p &&
            (const char *)p < allocs[i].p + allocs[i].n)
            d = allocs[i].dev;
    pthread_mutex_unlock(&mu);
    return d;
}

/* GB/s of a copy from src to dst issued on device dev. */
static double rate(int dev, const void *dst, const void *src)
{
    int a = owner(src), b = owner(dst), slow = env("NT_FAKE_SLOW_GPU", -1);
    (void)dev;
    if (a < 0 || b < 0) /* host memory at one end */
        return slow >= 0 && (a == slow || b == slow) ? 20.0 : 50.0;
    if (a == b)
        return 1100.0;
    return slow >= 0 && (a == slow || b == slow) ? 150.0 : 376.0;
}

static void join(stream_t *s)
{
    if (s && s->busy) {
        pthread_join(s->th, NULL);
        s->busy = 0;
    }
}

API int cuInit(unsigned f);
int cuInit(unsigned f)
{
    (void)f;
    return 0;
}
API int cuDriverGetVersion(int *v);
int cuDriverGetVersion(int *v)
{
    *v = 12040;
    return 0;
}
API int cuGetErrorName(int r, const char **s);
int cuGetErrorName(int r, const char **s)
{
    *s = r == 217   ? "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"
         : r == 205 ? "CUDA_ERROR_MAP_FAILED"
         : r == 101 ? "CUDA_ERROR_INVALID_DEVICE"
                    : "CUDA_ERROR_UNKNOWN";
    return 0;
}
API int cuGetErrorString(int r, const char **s);
int cuGetErrorString(int r, const char **s)
{
    (void)r;
    *s = "simulated";
    return 0;
}
API int cuDeviceGetCount(int *n);
int cuDeviceGetCount(int *n)
{
    view();
    *n = nvis;
    return 0;
}
API int cuDeviceGet(int *d, int o);
int cuDeviceGet(int *d, int o)
{
    view();
    if (o < 0 || o >= nvis)
        return 101;
    *d = vis[o];
    return 0;
}
API int cuDeviceGetByPCIBusId(int *d, const char *b);
int cuDeviceGetByPCIBusId(int *d, const char *b)
{
    unsigned dom, bus;
    if (sscanf(b, "%x:%x", &dom, &bus) != 2)
        return 1;
    for (int i = 0; i < NG; i++)
        if (nt_bus[i] == bus && visible(i)) {
            *d = i;
            return 0;
        }
    return 101;
}
API int cuDeviceGetPCIBusId(char *b, int n, int d);
int cuDeviceGetPCIBusId(char *b, int n, int d)
{
    snprintf(b, (size_t)n, "0000:%02x:00.0", nt_bus[d % NG]);
    return 0;
}
API int cuDeviceGetName(char *b, int n, int d);
int cuDeviceGetName(char *b, int n, int d)
{
    (void)d;
    snprintf(b, (size_t)n, "simulated GPU");
    return 0;
}
API int cuDeviceGetAttribute(int *v, int a, int d);
int cuDeviceGetAttribute(int *v, int a, int d)
{
    (void)d;
    *v = a == 16 ? 132 : 1;
    return 0;
}
API int cuDeviceTotalMem_v2(size_t *b, int d);
int cuDeviceTotalMem_v2(size_t *b, int d)
{
    (void)d;
    *b = (size_t)80 << 30;
    return 0;
}
API int cuDevicePrimaryCtxRetain(void **c, int d);
int cuDevicePrimaryCtxRetain(void **c, int d)
{
    *c = (void *)(intptr_t)(d + 1);
    return 0;
}
API int cuDevicePrimaryCtxRelease_v2(int d);
int cuDevicePrimaryCtxRelease_v2(int d)
{
    (void)d;
    return 0;
}
API int cuCtxSetCurrent(void *c);
int cuCtxSetCurrent(void *c)
{
    cur = (int)(intptr_t)c - 1;
    return 0;
}
API int cuCtxSynchronize(void);
int cuCtxSynchronize(void)
{
    return 0;
}
API int cuMemAlloc_v2(unsigned long long *p, size_t n);
/* Shared memory another process can map (the memory behind an IPC handle). */
static void *shm(size_t n, int *fd)
{
    void *m;
    *fd = memfd_create("nt-fake-gpu", 0);
    if (*fd < 0 || ftruncate(*fd, (off_t)n) != 0) {
        if (*fd >= 0)
            close(*fd);
        return NULL;
    }
    m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (m == MAP_FAILED) {
        close(*fd);
        return NULL;
    }
    return m;
}

static void track(void *m, size_t n, int dev, int fd)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAXA; i++)
        if (!allocs[i].p) {
            allocs[i].p = m;
            allocs[i].n = n;
            allocs[i].dev = dev;
            allocs[i].fd = fd;
            break;
        }
    pthread_mutex_unlock(&mu);
}

int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    int fd;
    char *m = shm(n, &fd);
    if (!m)
        return 2;
    track(m, n, cur, fd);
    *p = (unsigned long long)(uintptr_t)m;
    return 0;
}
API int cuMemFree_v2(unsigned long long p);
int cuMemFree_v2(unsigned long long p)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAXA; i++)
        if (allocs[i].p == (char *)(uintptr_t)p) {
            munmap(allocs[i].p, allocs[i].n);
            if (allocs[i].fd >= 0)
                close(allocs[i].fd);
            allocs[i].p = NULL;
        }
    pthread_mutex_unlock(&mu);
    return 0;
}
API int cuMemHostAlloc(void **p, size_t n, unsigned f);
int cuMemHostAlloc(void **p, size_t n, unsigned f)
{
    (void)f;
    if (cur < 0)
        return 201; /* CUDA_ERROR_INVALID_CONTEXT: as the driver, a context must be current */
    *p = calloc(1, n);
    return *p ? 0 : 2;
}
API int cuMemFreeHost(void *p);
int cuMemFreeHost(void *p)
{
    free(p);
    return 0;
}
API int cuMemHostRegister_v2(void *p, size_t n, unsigned f);
int cuMemHostRegister_v2(void *p, size_t n, unsigned f)
{
    (void)p, (void)n, (void)f;
    return cur < 0 ? 201 : 0;
}
API int cuMemHostUnregister(void *p);
int cuMemHostUnregister(void *p)
{
    (void)p;
    return 0;
}
API int cuMemHostGetDevicePointer_v2(unsigned long long *d, void *p, unsigned f);
int cuMemHostGetDevicePointer_v2(unsigned long long *d, void *p, unsigned f)
{
    (void)f;
    *d = (unsigned long long)(uintptr_t)p;
    return 0;
}
API int cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void *s);
int cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void *s)
{
    unsigned *p = (unsigned *)(uintptr_t)d;
    (void)s;
    for (size_t i = 0; i < n; i++)
        p[i] = v;
    return 0;
}
static int copy(unsigned long long d, unsigned long long s, size_t n, void *st, double f)
{
    stream_t *x = st;
    memcpy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
    if (x)
        x->t += (double)n / (rate(cur, (void *)(uintptr_t)d, (void *)(uintptr_t)s) * 1e9 * f);
    return 0;
}
API int cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n, void *st);
int cuMemcpyAsync(unsigned long long d, unsigned long long s, size_t n, void *st)
{
    return copy(d, s, n, st, 1.0);
}
API int cuMemcpyPeerAsync(unsigned long long d, void *dc, unsigned long long s, void *sc, size_t n,
                          void *st);
int cuMemcpyPeerAsync(unsigned long long d, void *dc, unsigned long long s, void *sc, size_t n,
                      void *st)
{
    (void)dc, (void)sc;
    return copy(d, s, n, st, 1.0);
}
API int cuStreamCreate(void **s, unsigned f);
int cuStreamCreate(void **s, unsigned f)
{
    (void)f;
    *s = calloc(1, sizeof(stream_t));
    return *s ? 0 : 2;
}
API int cuStreamDestroy_v2(void *s);
int cuStreamDestroy_v2(void *s)
{
    join(s);
    free(s);
    return 0;
}
API int cuStreamSynchronize(void *s);
int cuStreamSynchronize(void *s)
{
    join(s);
    return 0;
}
API int cuStreamQuery(void *s);
int cuStreamQuery(void *s)
{
    join(s); /* the pong thread ends by itself (its partner runs on another thread) */
    return 0;
}
API int cuEventCreate(void **e, unsigned f);
int cuEventCreate(void **e, unsigned f)
{
    int fd;
    if ((f & 4) && !(f & 2))
        return 1; /* CUDA: an interprocess event must disable timing */
    if (f & 4) {  /* interprocess: in memory another process can map */
        event_t *ev = shm(sizeof(event_t), &fd);
        if (!ev)
            return 2;
        ev->fd = fd;
        ev->ipc = 1;
        *e = ev;
        return 0;
    }
    *e = calloc(1, sizeof(event_t));
    return *e ? 0 : 2;
}
API int cuStreamWaitEvent(void *s, void *e, unsigned f);
int cuStreamWaitEvent(void *s, void *e, unsigned f)
{
    stream_t *x = s;
    event_t *ev = ((event_t *)e)->orig ? ((event_t *)e)->orig : e;
    (void)f;
    join(x);
    if (x && ev->t > x->t)
        x->t = ev->t; /* work behind the wait starts when the event's stream got there */
    return 0;
}
API int cuEventDestroy_v2(void *e);
int cuEventDestroy_v2(void *e)
{
    event_t *ev = e;
    if (ev->ipc) {
        close(ev->fd);
        munmap(ev, sizeof(*ev));
        return 0;
    }
    if (ev->orig && ev->fd >= 0) /* opened from another process: its mapping */
        munmap(ev->orig, sizeof(*ev));
    free(ev);
    return 0;
}
API int cuEventRecord(void *e, void *s);
int cuEventRecord(void *e, void *s)
{
    join(s); /* stream order: the event follows the kernel before it */
    event_t *ev = ((event_t *)e)->orig ? ((event_t *)e)->orig : e;
    ev->t = s ? ((stream_t *)s)->t : 0;
    return 0;
}
API int cuEventSynchronize(void *e);
int cuEventSynchronize(void *e)
{
    (void)e;
    return 0;
}
API int cuEventElapsedTime(float *ms, void *a, void *b);
int cuEventElapsedTime(float *ms, void *a, void *b)
{
    *ms = (float)((((event_t *)b)->t - ((event_t *)a)->t) * 1e3);
    return 0;
}
API int cuModuleLoadData(void **m, const void *i);
int cuModuleLoadData(void **m, const void *i)
{
    (void)i;
    *m = (void *)1;
    return 0;
}
API int cuModuleUnload(void *m);
int cuModuleUnload(void *m)
{
    (void)m;
    return 0;
}
API int cuModuleGetFunction(void **f, void *m, const char *n);
int cuModuleGetFunction(void **f, void *m, const char *n)
{
    (void)m;
    *f = strcmp(n, "nt_spin") == 0   ? (void *)1
         : strcmp(n, "nt_copy") == 0 ? (void *)2
         : strcmp(n, "nt_pong") == 0 ? (void *)3
                                     : NULL;
    return *f ? 0 : 500;
}

typedef struct pong {
    volatile int *mine, *theirs;
    int iters, first;
    int *done;
    stream_t *s;
} pong_t;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The kernel's side of nt_pong (probes/gpu/kernels.cu), on a thread; 2 s limit as the kernel. */
static void *pong_run(void *arg)
{
    pong_t *g = arg;
    double end = now() + 2.0, t0 = now();
    int i;
    for (i = 0; i < g->iters; i++) {
        if (g->first) {
            *g->theirs = 2 * i + 1;
            __sync_synchronize();
            while (*g->mine != 2 * i + 2 && now() < end)
                sched_yield();
        } else {
            while (*g->mine != 2 * i + 1 && now() < end)
                sched_yield();
            *g->theirs = 2 * i + 2;
            __sync_synchronize();
        }
        if (now() >= end)
            break;
    }
    *g->done = i;
    g->s->t += now() - t0;
    free(g);
    return NULL;
}

API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                       unsigned bz, unsigned sh, void *s, void **p, void **x);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned sh, void *s, void **p, void **x)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)sh, (void)x;
    if (f == (void *)2) { /* nt_copy(src, dst, n16) */
        unsigned long long src = *(unsigned long long *)p[0], dst = *(unsigned long long *)p[1];
        unsigned long long n = *(unsigned long long *)p[2];
        return copy(dst, src, n * 16, s, 0.9);
    }
    if (f == (void *)3) { /* nt_pong(mine, theirs, iters, first, timeout, done) */
        pong_t *g = calloc(1, sizeof(*g));
        stream_t *st = s;
        if (!g)
            return 2;
        join(st);
        g->mine = (volatile int *)(uintptr_t) * (unsigned long long *)p[0];
        g->theirs = (volatile int *)(uintptr_t) * (unsigned long long *)p[1];
        g->iters = *(int *)p[2];
        g->first = *(int *)p[3];
        g->done = (int *)(uintptr_t) * (unsigned long long *)p[5];
        g->s = st;
        st->busy = 1;
        return pthread_create(&st->th, NULL, pong_run, g) ? 999 : 0;
    }
    return 0; /* nt_spin: the simulated copies are not asynchronous */
}
API int cuDeviceCanAccessPeer(int *c, int a, int b);
int cuDeviceCanAccessPeer(int *c, int a, int b)
{
    char buf[32];
    const char *v = getenv("NT_FAKE_NO_PEER");
    if (!visible(a) || !visible(b))
        return 101; /* a device this process does not see */
    snprintf(buf, sizeof(buf), "%d,%d", a, b);
    *c = !(v && strcmp(v, buf) == 0);
    return 0;
}
API int cuCtxEnablePeerAccess(void *c, unsigned f);
int cuCtxEnablePeerAccess(void *c, unsigned f)
{
    (void)c, (void)f;
    return 0;
}
API int cuDeviceGetP2PAttribute(int *v, int a, int s, int d);
int cuDeviceGetP2PAttribute(int *v, int a, int s, int d)
{
    (void)a, (void)s, (void)d;
    *v = 1;
    return 0;
}

typedef struct ipc {
    unsigned magic;
    int dev;
    unsigned long long p;
    void *ev;
    int pid, fd; /* the exporter and its memfd */
    size_t n;
} ipc_t;

/* Another process's memfd, mapped here. */
static void *peer_map(const ipc_t *x, size_t n)
{
    char path[64];
    void *m;
    int fd;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", x->pid, x->fd);
    if ((fd = open(path, O_RDWR)) < 0)
        return NULL;
    m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return m == MAP_FAILED ? NULL : m;
}
#define IPC_MEM 0x6d656d31u
#define IPC_EV 0x65766e31u

typedef struct h64 {
    char r[64]; /* CUipcMemHandle / CUipcEventHandle: passed by value */
} h64_t;

API int cuIpcGetMemHandle(void *h, unsigned long long p);
int cuIpcGetMemHandle(void *h, unsigned long long p)
{
    ipc_t x = {IPC_MEM, owner((void *)(uintptr_t)p), p, NULL, getpid(), -1, 0};
    if (x.dev < 0)
        return 1; /* not device memory */
    if (x.dev == env("NT_FAKE_IPC_GET_FAIL", -1))
        return 801;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAXA; i++)
        if (allocs[i].p == (char *)(uintptr_t)p)
            x.fd = allocs[i].fd, x.n = allocs[i].n;
    pthread_mutex_unlock(&mu);
    if (x.fd < 0)
        return 1; /* not the start of an allocation of this process */
    memset(h, 0, 64);
    memcpy(h, &x, sizeof(x));
    return 0;
}
API int cuIpcOpenMemHandle_v2(unsigned long long *p, h64_t h, unsigned f);
int cuIpcOpenMemHandle_v2(unsigned long long *p, h64_t h, unsigned f)
{
    ipc_t x;
    (void)f;
    memcpy(&x, h.r, sizeof(x));
    if (x.magic != IPC_MEM)
        return 400;
    if (x.dev == env("NT_FAKE_IPC_OPEN_FAIL", -1))
        return 205;
    if (x.pid == getpid()) {
        *p = x.p; /* one address space: the exporter's pointer */
        return 0;
    }
    {
        void *m = peer_map(&x, x.n);
        if (!m)
            return 205;
        track(m, x.n, x.dev, -1);
        *p = (unsigned long long)(uintptr_t)m;
    }
    return 0;
}
API int cuIpcCloseMemHandle(unsigned long long p);
int cuIpcCloseMemHandle(unsigned long long p)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAXA; i++)
        if (allocs[i].p == (char *)(uintptr_t)p && allocs[i].fd < 0) {
            munmap(allocs[i].p, allocs[i].n); /* a mapping of another process's memory */
            allocs[i].p = NULL;
        }
    pthread_mutex_unlock(&mu);
    return 0;
}
API int cuIpcGetEventHandle(void *h, void *e);
int cuIpcGetEventHandle(void *h, void *e)
{
    ipc_t x = {IPC_EV, -1, 0, e, getpid(), ((event_t *)e)->fd, sizeof(event_t)};
    if (!((event_t *)e)->ipc)
        return 400; /* CUDA_ERROR_INVALID_HANDLE: not created with CU_EVENT_INTERPROCESS */
    memset(h, 0, 64);
    memcpy(h, &x, sizeof(x));
    return 0;
}
API int cuIpcOpenEventHandle(void **e, h64_t h);
int cuIpcOpenEventHandle(void **e, h64_t h)
{
    ipc_t x;
    event_t *ev;
    memcpy(&x, h.r, sizeof(x));
    if (x.magic != IPC_EV)
        return 400;
    if (!(ev = calloc(1, sizeof(*ev))))
        return 2;
    ev->fd = -1;
    ev->orig = x.ev;
    if (x.pid != getpid()) {
        ev->fd = 0; /* cuEventDestroy unmaps it */
        if (!(ev->orig = peer_map(&x, sizeof(event_t)))) {
            free(ev);
            return 205;
        }
    }
    *e = ev;
    return 0;
}
