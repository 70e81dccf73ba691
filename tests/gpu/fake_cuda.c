/* Test stand-in for libcuda.so.1 (unit tests only): every entry point lib/node/cuda.c loads, with
 * results set by the environment (read at every call):
 *   NT_FAKE_CUDA_VERSION=N  cuDriverGetVersion (default 12040)
 *   NT_FAKE_CUDA_INIT=N     cuInit's result (default 100, CUDA_ERROR_NO_DEVICE)
 *   NT_FAKE_CUDA_ALLOC=N    cuMemAlloc_v2's result (default 0)
 * Built twice: -DNT_FAKE_OLD leaves out cuLaunchKernel (a driver that lacks a call). */
#include <stddef.h>
#include <stdlib.h>

static int env(const char *k, int dflt)
{
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}

#define API __attribute__((visibility("default")))
#define STUB(name, ...)                                                                            \
    API int name(__VA_ARGS__);                                                                     \
    int name(__VA_ARGS__)                                                                          \
    {                                                                                              \
        return 0;                                                                                  \
    }

API int cuInit(unsigned f);
int cuInit(unsigned f)
{
    (void)f;
    return env("NT_FAKE_CUDA_INIT", 100);
}
API int cuDriverGetVersion(int *v);
int cuDriverGetVersion(int *v)
{
    *v = env("NT_FAKE_CUDA_VERSION", 12040);
    return 0;
}
API int cuGetErrorName(int r, const char **s);
int cuGetErrorName(int r, const char **s)
{
    *s = r == 100 ? "CUDA_ERROR_NO_DEVICE"
         : r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY"
                  : "CUDA_ERROR_UNKNOWN";
    return 0;
}
API int cuGetErrorString(int r, const char **s);
int cuGetErrorString(int r, const char **s)
{
    *s = r == 100 ? "no CUDA-capable device is detected"
         : r == 2 ? "out of memory"
                  : "unknown error";
    return 0;
}
API int cuMemAlloc_v2(unsigned long long *p, size_t n);
int cuMemAlloc_v2(unsigned long long *p, size_t n)
{
    *p = n ? 0x7f0000000000ull : 0;
    return env("NT_FAKE_CUDA_ALLOC", 0);
}
API int cuDeviceGetCount(int *n);
int cuDeviceGetCount(int *n)
{
    *n = 2;
    return 0;
}
STUB(cuDeviceGet, int *d, int o)
STUB(cuDeviceGetByPCIBusId, int *d, const char *b)
STUB(cuDeviceGetPCIBusId, char *b, int n, int d)
STUB(cuDeviceGetName, char *b, int n, int d)
STUB(cuDeviceGetAttribute, int *v, int a, int d)
STUB(cuDeviceTotalMem_v2, size_t *b, int d)
STUB(cuDevicePrimaryCtxRetain, void **c, int d)
STUB(cuDevicePrimaryCtxRelease_v2, int d)
STUB(cuCtxSetCurrent, void *c)
STUB(cuCtxSynchronize, void)
STUB(cuMemFree_v2, unsigned long long p)
STUB(cuMemHostAlloc, void **p, size_t n, unsigned f)
STUB(cuMemFreeHost, void *p)
STUB(cuMemHostRegister_v2, void *p, size_t n, unsigned f)
STUB(cuMemHostUnregister, void *p)
STUB(cuMemHostGetDevicePointer_v2, unsigned long long *d, void *p, unsigned f)
STUB(cuMemsetD32Async, unsigned long long d, unsigned v, size_t n, void *s)
STUB(cuMemcpyAsync, unsigned long long d, unsigned long long s, size_t n, void *st)
STUB(cuMemcpyPeerAsync, unsigned long long d, void *dc, unsigned long long s, void *sc, size_t n,
     void *st)
STUB(cuStreamCreate, void **s, unsigned f)
STUB(cuStreamDestroy_v2, void *s)
STUB(cuStreamSynchronize, void *s)
STUB(cuStreamQuery, void *s)
STUB(cuEventCreate, void **e, unsigned f)
STUB(cuEventDestroy_v2, void *e)
STUB(cuEventRecord, void *e, void *s)
STUB(cuEventSynchronize, void *e)
STUB(cuEventElapsedTime, float *ms, void *a, void *b)
STUB(cuModuleLoadData, void **m, const void *i)
STUB(cuModuleUnload, void *m)
STUB(cuModuleGetFunction, void **f, void *m, const char *n)
#ifndef NT_FAKE_OLD
STUB(cuLaunchKernel, void *f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e,
     unsigned g, unsigned sh, void *s, void **p, void **x)
#endif
STUB(cuDeviceCanAccessPeer, int *c, int a, int b)
STUB(cuCtxEnablePeerAccess, void *c, unsigned f)
STUB(cuDeviceGetP2PAttribute, int *v, int a, int s, int d)
STUB(cuIpcGetMemHandle, void *h, unsigned long long p)
STUB(cuIpcOpenMemHandle_v2, unsigned long long *p, char h[64], unsigned f)
STUB(cuIpcCloseMemHandle, unsigned long long p)
STUB(cuIpcGetEventHandle, void *h, void *e)
STUB(cuIpcOpenEventHandle, void **e, char h[64])
STUB(cuStreamWaitEvent, void *s, void *e, unsigned f)
