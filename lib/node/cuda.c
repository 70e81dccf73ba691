/* The CUDA driver-API wrapper (include/nettune/cuda.h): libcuda.so.1 through dlopen, one table
 * of entry points filled once, CUresult converted to nt_status_t in one place (nt_cu_check),
 * after NVIDIA/nccl v2.28.9-1 src/misc/cudawrap.cc:198 (cudaPfnFuncLoader: required and
 * optional symbols) and src/include/cudawrap.h:29 (CUCHECK: name and string of the error). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/cuda.h"
#include "nettune/log.h"

#define NT_CUDA_MIN_VERSION 11040 /* R470: every required call below exists */

/* The entry points: the symbol cuda.h maps each call to (CUDA 13.0 cuda.h:89-212). */
static struct {
    nt_cu_result_t (*init)(unsigned);
    nt_cu_result_t (*driver_version)(int *);
    nt_cu_result_t (*error_name)(nt_cu_result_t, const char **);
    nt_cu_result_t (*error_string)(nt_cu_result_t, const char **);
    nt_cu_result_t (*device_count)(int *);
    nt_cu_result_t (*device_get)(nt_cu_device_t *, int);
    nt_cu_result_t (*device_by_bus)(nt_cu_device_t *, const char *);
    nt_cu_result_t (*device_bus_id)(char *, int, nt_cu_device_t);
    nt_cu_result_t (*device_name)(char *, int, nt_cu_device_t);
    nt_cu_result_t (*device_attr)(int *, int, nt_cu_device_t);
    nt_cu_result_t (*device_total_mem)(size_t *, nt_cu_device_t);
    nt_cu_result_t (*ctx_retain)(nt_cu_ctx_t *, nt_cu_device_t);
    nt_cu_result_t (*ctx_release)(nt_cu_device_t);
    nt_cu_result_t (*ctx_set)(nt_cu_ctx_t);
    nt_cu_result_t (*ctx_sync)(void);
    nt_cu_result_t (*mem_alloc)(nt_cu_ptr_t *, size_t);
    nt_cu_result_t (*mem_free)(nt_cu_ptr_t);
    nt_cu_result_t (*host_alloc)(void **, size_t, unsigned);
    nt_cu_result_t (*host_free)(void *);
    nt_cu_result_t (*host_register)(void *, size_t, unsigned);
    nt_cu_result_t (*host_unregister)(void *);
    nt_cu_result_t (*host_dptr)(nt_cu_ptr_t *, void *, unsigned);
    nt_cu_result_t (*memset_d32_async)(nt_cu_ptr_t, unsigned, size_t, nt_cu_stream_t);
    nt_cu_result_t (*memcpy_async)(nt_cu_ptr_t, nt_cu_ptr_t, size_t, nt_cu_stream_t);
    nt_cu_result_t (*memcpy_peer_async)(nt_cu_ptr_t, nt_cu_ctx_t, nt_cu_ptr_t, nt_cu_ctx_t, size_t,
                                        nt_cu_stream_t);
    nt_cu_result_t (*stream_create)(nt_cu_stream_t *, unsigned);
    nt_cu_result_t (*stream_destroy)(nt_cu_stream_t);
    nt_cu_result_t (*stream_sync)(nt_cu_stream_t);
    nt_cu_result_t (*stream_query)(nt_cu_stream_t);
    nt_cu_result_t (*event_create)(nt_cu_event_t *, unsigned);
    nt_cu_result_t (*event_destroy)(nt_cu_event_t);
    nt_cu_result_t (*event_record)(nt_cu_event_t, nt_cu_stream_t);
    nt_cu_result_t (*event_sync)(nt_cu_event_t);
    nt_cu_result_t (*event_elapsed)(float *, nt_cu_event_t, nt_cu_event_t);
    nt_cu_result_t (*module_load)(nt_cu_module_t *, const void *);
    nt_cu_result_t (*module_unload)(nt_cu_module_t);
    nt_cu_result_t (*module_function)(nt_cu_function_t *, nt_cu_module_t, const char *);
    nt_cu_result_t (*launch)(nt_cu_function_t, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, nt_cu_stream_t, void **, void **);
    nt_cu_result_t (*can_access_peer)(int *, nt_cu_device_t, nt_cu_device_t);
    nt_cu_result_t (*enable_peer)(nt_cu_ctx_t, unsigned);
    nt_cu_result_t (*p2p_attr)(int *, int, nt_cu_device_t, nt_cu_device_t);
    nt_cu_result_t (*ipc_get)(nt_cu_ipc_handle_t *, nt_cu_ptr_t);
    nt_cu_result_t (*ipc_open)(nt_cu_ptr_t *, nt_cu_ipc_handle_t, unsigned);
    nt_cu_result_t (*ipc_close)(nt_cu_ptr_t);
    nt_cu_result_t (*ipc_event_get)(nt_cu_ipc_handle_t *, nt_cu_event_t);
    nt_cu_result_t (*ipc_event_open)(nt_cu_event_t *, nt_cu_ipc_handle_t);
    nt_cu_result_t (*stream_wait_event)(nt_cu_stream_t, nt_cu_event_t, unsigned);
    nt_cu_result_t (*dmabuf)(void *, nt_cu_ptr_t, size_t, int, unsigned long long);
} cu;

#define SYM(field, name, required)                                                                 \
    {                                                                                              \
        (void **)&cu.field, name, required                                                         \
    }
static const struct {
    void **slot;
    const char *name;
    int required;
} nt_cuda_syms[] = {
    SYM(init, "cuInit", 1),
    SYM(driver_version, "cuDriverGetVersion", 1),
    SYM(error_name, "cuGetErrorName", 1),
    SYM(error_string, "cuGetErrorString", 1),
    SYM(device_count, "cuDeviceGetCount", 1),
    SYM(device_get, "cuDeviceGet", 1),
    SYM(device_by_bus, "cuDeviceGetByPCIBusId", 1),
    SYM(device_bus_id, "cuDeviceGetPCIBusId", 1),
    SYM(device_name, "cuDeviceGetName", 1),
    SYM(device_attr, "cuDeviceGetAttribute", 1),
    SYM(device_total_mem, "cuDeviceTotalMem_v2", 1),
    SYM(ctx_retain, "cuDevicePrimaryCtxRetain", 1),
    SYM(ctx_release, "cuDevicePrimaryCtxRelease_v2", 1),
    SYM(ctx_set, "cuCtxSetCurrent", 1),
    SYM(ctx_sync, "cuCtxSynchronize", 1),
    SYM(mem_alloc, "cuMemAlloc_v2", 1),
    SYM(mem_free, "cuMemFree_v2", 1),
    SYM(host_alloc, "cuMemHostAlloc", 1),
    SYM(host_free, "cuMemFreeHost", 1),
    SYM(host_register, "cuMemHostRegister_v2", 1),
    SYM(host_unregister, "cuMemHostUnregister", 1),
    SYM(host_dptr, "cuMemHostGetDevicePointer_v2", 1),
    SYM(memset_d32_async, "cuMemsetD32Async", 1),
    SYM(memcpy_async, "cuMemcpyAsync", 1),
    SYM(memcpy_peer_async, "cuMemcpyPeerAsync", 1),
    SYM(stream_create, "cuStreamCreate", 1),
    SYM(stream_destroy, "cuStreamDestroy_v2", 1),
    SYM(stream_sync, "cuStreamSynchronize", 1),
    SYM(stream_query, "cuStreamQuery", 1),
    SYM(event_create, "cuEventCreate", 1),
    SYM(event_destroy, "cuEventDestroy_v2", 1),
    SYM(event_record, "cuEventRecord", 1),
    SYM(event_sync, "cuEventSynchronize", 1),
    SYM(event_elapsed, "cuEventElapsedTime_v2", 0), /* CUDA 12.8+; before: cuEventElapsedTime */
    SYM(module_load, "cuModuleLoadData", 1),
    SYM(module_unload, "cuModuleUnload", 1),
    SYM(module_function, "cuModuleGetFunction", 1),
    SYM(launch, "cuLaunchKernel", 1),
    SYM(can_access_peer, "cuDeviceCanAccessPeer", 1),
    SYM(enable_peer, "cuCtxEnablePeerAccess", 1),
    SYM(p2p_attr, "cuDeviceGetP2PAttribute", 1),
    SYM(ipc_get, "cuIpcGetMemHandle", 1),
    SYM(ipc_open, "cuIpcOpenMemHandle_v2", 1),
    SYM(ipc_close, "cuIpcCloseMemHandle", 1),
    SYM(ipc_event_get, "cuIpcGetEventHandle", 0), /* optional (GPU pairs across ranks) */
    SYM(ipc_event_open, "cuIpcOpenEventHandle", 0),
    SYM(stream_wait_event, "cuStreamWaitEvent", 0),
    SYM(dmabuf, "cuMemGetHandleForAddressRange", 0), /* CUDA 11.7 */
};

static pthread_mutex_t nt_cuda_mu = PTHREAD_MUTEX_INITIALIZER;
static int nt_cuda_loaded = -1; /* -1 not tried, 0 failed, 1 usable */
static nt_status_t nt_cuda_result;
static char nt_cuda_why[256];
static void *nt_cuda_handle;
static int nt_cuda_version;
static __thread char nt_cuda_err[256];

nt_status_t nt_cuda_status(nt_cu_result_t r)
{
    switch (r) {
    case NT_CUDA_SUCCESS:
    case NT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
        return NT_OK;
    case NT_CUDA_ERROR_NO_DEVICE:
    case NT_CUDA_ERROR_STUB_LIBRARY:
    case NT_CUDA_ERROR_NOT_SUPPORTED:
    case NT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED:
    case NT_CUDA_ERROR_NO_BINARY_FOR_GPU:
    case NT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case NT_CUDA_ERROR_SYSTEM_NOT_READY:
    case NT_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case NT_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        return NT_ERR_UNSUPPORTED;
    case NT_CUDA_ERROR_OUT_OF_MEMORY:
        return NT_ERR_NOMEM;
    case NT_CUDA_ERROR_INVALID_VALUE:
    case NT_CUDA_ERROR_INVALID_DEVICE:
    case NT_CUDA_ERROR_INVALID_HANDLE:
        return NT_ERR_INVALID;
    case NT_CUDA_ERROR_NOT_READY:
    case NT_CUDA_ERROR_LAUNCH_TIMEOUT:
        return NT_ERR_TIMEOUT;
    default:
        return NT_ERR_SYSTEM;
    }
}

/* The one conversion point: records "<call>: NAME (string)" and returns the status. */
static nt_status_t nt_cu_check(const char *call, nt_cu_result_t r)
{
    const char *name = NULL, *str = NULL;
    if (r == NT_CUDA_SUCCESS || r == NT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        return NT_OK;
    if (cu.error_name)
        cu.error_name(r, &name);
    if (cu.error_string)
        cu.error_string(r, &str);
    if (name)
        snprintf(nt_cuda_err, sizeof(nt_cuda_err), "%s: %s (%s)", call, name, str ? str : "?");
    else
        snprintf(nt_cuda_err, sizeof(nt_cuda_err), "%s: CUDA error %d", call, r);
    NT_DEBUG(INIT, "%s", nt_cuda_err);
    return nt_cuda_status(r);
}

/* Calls before a successful load are refused without touching a NULL pointer. */
#define NT_CU_CALL(field, call, ...)                                                               \
    do {                                                                                           \
        if (nt_cuda_loaded != 1 || !cu.field) {                                                    \
            snprintf(nt_cuda_err, sizeof(nt_cuda_err), "%s: the CUDA driver is not loaded", call); \
            return NT_ERR_UNSUPPORTED;                                                             \
        }                                                                                          \
        return nt_cu_check(call, cu.field(__VA_ARGS__));                                           \
    } while (0)

const char *nt_cuda_last_error(void)
{
    return nt_cuda_err;
}

int nt_cuda_driver_version(void)
{
    return nt_cuda_loaded == 1 ? nt_cuda_version : 0;
}

static void nt_cuda_fail(const char *fmt, const char *a, const char *b)
{
    snprintf(nt_cuda_why, sizeof(nt_cuda_why), fmt, a, b);
    nt_cuda_result = NT_ERR_UNSUPPORTED;
    nt_cuda_loaded = 0;
}

nt_status_t nt_cuda_load(const char *lib, char *why, size_t whylen)
{
    const char *env = getenv("NETTUNE_TEST_LIBCUDA");
    nt_cu_result_t r;

    pthread_mutex_lock(&nt_cuda_mu);
    if (nt_cuda_loaded >= 0)
        goto done;
    if (!lib)
        lib = env && *env ? env : "libcuda.so.1";
    nt_cuda_handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!nt_cuda_handle) {
        NT_DEBUG(INIT, "cannot load '%s': %s", lib, dlerror());
        nt_cuda_fail("no CUDA driver (%s cannot be loaded)%s", lib, "");
        goto done;
    }
    memset(&cu, 0, sizeof(cu));
    for (size_t i = 0; i < sizeof(nt_cuda_syms) / sizeof(nt_cuda_syms[0]); i++) {
        *nt_cuda_syms[i].slot = dlsym(nt_cuda_handle, nt_cuda_syms[i].name);
        if (!*nt_cuda_syms[i].slot && nt_cuda_syms[i].required) {
            nt_cuda_fail("the CUDA driver %s lacks %s (driver too old?)", lib,
                         nt_cuda_syms[i].name);
            goto unload;
        }
    }
    if (!cu.event_elapsed)
        *(void **)&cu.event_elapsed = dlsym(nt_cuda_handle, "cuEventElapsedTime");
    if (!cu.event_elapsed) {
        nt_cuda_fail("the CUDA driver %s lacks %s (driver too old?)", lib, "cuEventElapsedTime");
        goto unload;
    }
    if (cu.driver_version(&nt_cuda_version) != 0 || nt_cuda_version < NT_CUDA_MIN_VERSION) {
        char v[32];
        snprintf(v, sizeof(v), "%d.%d", nt_cuda_version / 1000, (nt_cuda_version % 1000) / 10);
        nt_cuda_fail("CUDA driver %s is too old (nettune needs 11.4, driver R470 or later)%s", v,
                     "");
        goto unload;
    }
    nt_cuda_loaded = 1; /* cuInit goes through the checked path */
    r = cu.init(0);
    if (nt_cu_check("cuInit", r) != NT_OK) {
        const char *name = NULL;
        cu.error_name(r, &name);
        if (r == NT_CUDA_ERROR_NO_DEVICE)
            nt_cuda_fail("no GPU visible (cuInit: %s)%s", name ? name : "CUDA_ERROR_NO_DEVICE", "");
        else
            nt_cuda_fail("the CUDA driver cannot start (%.200s)%s", nt_cuda_err, "");
        goto unload;
    }
    nt_cuda_result = NT_OK;
    nt_cuda_why[0] = '\0';
    NT_DEBUG(INIT, "CUDA driver %d loaded from %s", nt_cuda_version, lib);
    goto done;
unload:
    dlclose(nt_cuda_handle);
    nt_cuda_handle = NULL;
    memset(&cu, 0, sizeof(cu));
done:
    if (why && whylen)
        snprintf(why, whylen, "%s", nt_cuda_why);
    pthread_mutex_unlock(&nt_cuda_mu);
    return nt_cuda_result;
}

void nt_cuda_reset(void)
{
    pthread_mutex_lock(&nt_cuda_mu);
    if (nt_cuda_handle)
        dlclose(nt_cuda_handle);
    nt_cuda_handle = NULL;
    memset(&cu, 0, sizeof(cu));
    nt_cuda_loaded = -1;
    nt_cuda_version = 0;
    nt_cuda_why[0] = '\0';
    nt_cuda_err[0] = '\0';
    pthread_mutex_unlock(&nt_cuda_mu);
}

nt_status_t nt_cuda_driver_version_of(const char *const *names, int *v)
{
    static const char *const dflt[] = {"libcuda.so.1", NULL};
    nt_cu_result_t (*fn)(int *);
    void *h = NULL;
    int rc;

    *v = 0;
    for (names = names ? names : dflt; *names && !h; names++) {
        h = dlopen(*names, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            NT_DEBUG(INIT, "cannot load '%s': %s", *names, dlerror());
    }
    if (!h)
        return NT_ERR_UNSUPPORTED;
    *(void **)&fn = dlsym(h, "cuDriverGetVersion");
    if (!fn) {
        NT_DEBUG(INIT, "no symbol 'cuDriverGetVersion': %s", dlerror());
        dlclose(h);
        return NT_ERR_UNSUPPORTED;
    }
    rc = fn(v);
    dlclose(h);
    if (rc != 0 || *v <= 0) {
        NT_DEBUG(INIT, "cuDriverGetVersion failed: error %d", rc);
        *v = 0;
        return NT_ERR_SYSTEM;
    }
    return NT_OK;
}

nt_status_t nt_cu_device_count(int *n)
{
    NT_CU_CALL(device_count, "cuDeviceGetCount", n);
}
nt_status_t nt_cu_device_get(int ordinal, nt_cu_device_t *dev)
{
    NT_CU_CALL(device_get, "cuDeviceGet", dev, ordinal);
}
nt_status_t nt_cu_device_by_bus_id(const char *bus_id, nt_cu_device_t *dev)
{
    NT_CU_CALL(device_by_bus, "cuDeviceGetByPCIBusId", dev, bus_id);
}
nt_status_t nt_cu_device_bus_id(nt_cu_device_t dev, char *buf, size_t len)
{
    NT_CU_CALL(device_bus_id, "cuDeviceGetPCIBusId", buf, (int)len, dev);
}
nt_status_t nt_cu_device_name(nt_cu_device_t dev, char *buf, size_t len)
{
    NT_CU_CALL(device_name, "cuDeviceGetName", buf, (int)len, dev);
}
nt_status_t nt_cu_device_attr(nt_cu_device_t dev, int attr, int *value)
{
    NT_CU_CALL(device_attr, "cuDeviceGetAttribute", value, attr, dev);
}
nt_status_t nt_cu_device_total_mem(nt_cu_device_t dev, size_t *bytes)
{
    NT_CU_CALL(device_total_mem, "cuDeviceTotalMem", bytes, dev);
}
nt_status_t nt_cu_ctx_retain(nt_cu_device_t dev, nt_cu_ctx_t *ctx)
{
    nt_status_t st;
    if (nt_cuda_loaded != 1)
        return NT_ERR_UNSUPPORTED;
    st = nt_cu_check("cuDevicePrimaryCtxRetain", cu.ctx_retain(ctx, dev));
    return st == NT_OK ? nt_cu_ctx_set(*ctx) : st;
}
nt_status_t nt_cu_ctx_set(nt_cu_ctx_t ctx)
{
    NT_CU_CALL(ctx_set, "cuCtxSetCurrent", ctx);
}
nt_status_t nt_cu_ctx_release(nt_cu_device_t dev)
{
    NT_CU_CALL(ctx_release, "cuDevicePrimaryCtxRelease", dev);
}
nt_status_t nt_cu_ctx_synchronize(void)
{
    NT_CU_CALL(ctx_sync, "cuCtxSynchronize");
}
nt_status_t nt_cu_mem_alloc(size_t bytes, nt_cu_ptr_t *dptr)
{
    NT_CU_CALL(mem_alloc, "cuMemAlloc", dptr, bytes);
}
nt_status_t nt_cu_mem_free(nt_cu_ptr_t dptr)
{
    NT_CU_CALL(mem_free, "cuMemFree", dptr);
}
nt_status_t nt_cu_host_alloc(size_t bytes, unsigned flags, void **p)
{
    NT_CU_CALL(host_alloc, "cuMemHostAlloc", p, bytes, flags);
}
nt_status_t nt_cu_host_free(void *p)
{
    NT_CU_CALL(host_free, "cuMemFreeHost", p);
}
nt_status_t nt_cu_host_register(void *p, size_t bytes, unsigned flags)
{
    NT_CU_CALL(host_register, "cuMemHostRegister", p, bytes, flags);
}
nt_status_t nt_cu_host_unregister(void *p)
{
    NT_CU_CALL(host_unregister, "cuMemHostUnregister", p);
}
nt_status_t nt_cu_host_device_ptr(void *p, nt_cu_ptr_t *dptr)
{
    NT_CU_CALL(host_dptr, "cuMemHostGetDevicePointer", dptr, p, 0);
}
nt_status_t nt_cu_memset_d32_async(nt_cu_ptr_t dptr, unsigned value, size_t count, nt_cu_stream_t s)
{
    NT_CU_CALL(memset_d32_async, "cuMemsetD32Async", dptr, value, count, s);
}
nt_status_t nt_cu_mem_dmabuf_fd(nt_cu_ptr_t dptr, size_t bytes, int *fd)
{
    *fd = -1;
    NT_CU_CALL(dmabuf, "cuMemGetHandleForAddressRange", fd, dptr, bytes,
               NT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
}
nt_status_t nt_cu_memcpy_async(nt_cu_ptr_t dst, nt_cu_ptr_t src, size_t bytes, nt_cu_stream_t s)
{
    NT_CU_CALL(memcpy_async, "cuMemcpyAsync", dst, src, bytes, s);
}
nt_status_t nt_cu_memcpy_peer_async(nt_cu_ptr_t dst, nt_cu_ctx_t dst_ctx, nt_cu_ptr_t src,
                                    nt_cu_ctx_t src_ctx, size_t bytes, nt_cu_stream_t s)
{
    NT_CU_CALL(memcpy_peer_async, "cuMemcpyPeerAsync", dst, dst_ctx, src, src_ctx, bytes, s);
}
nt_status_t nt_cu_stream_create(nt_cu_stream_t *s)
{
    NT_CU_CALL(stream_create, "cuStreamCreate", s, NT_CU_STREAM_NON_BLOCKING);
}
nt_status_t nt_cu_stream_destroy(nt_cu_stream_t s)
{
    NT_CU_CALL(stream_destroy, "cuStreamDestroy", s);
}
nt_status_t nt_cu_stream_synchronize(nt_cu_stream_t s)
{
    NT_CU_CALL(stream_sync, "cuStreamSynchronize", s);
}
nt_status_t nt_cu_stream_query(nt_cu_stream_t s)
{
    nt_cu_result_t r;
    if (nt_cuda_loaded != 1)
        return NT_ERR_UNSUPPORTED;
    r = cu.stream_query(s);
    return r == NT_CUDA_ERROR_NOT_READY ? NT_ERR_TIMEOUT : nt_cu_check("cuStreamQuery", r);
}
nt_status_t nt_cu_event_create(nt_cu_event_t *e)
{
    NT_CU_CALL(event_create, "cuEventCreate", e, NT_CU_EVENT_DEFAULT);
}
nt_status_t nt_cu_event_create_ipc(nt_cu_event_t *e)
{
    NT_CU_CALL(event_create, "cuEventCreate", e,
               NT_CU_EVENT_DISABLE_TIMING | NT_CU_EVENT_INTERPROCESS);
}
nt_status_t nt_cu_stream_wait_event(nt_cu_stream_t s, nt_cu_event_t e)
{
    NT_CU_CALL(stream_wait_event, "cuStreamWaitEvent", s, e, 0);
}
nt_status_t nt_cu_event_destroy(nt_cu_event_t e)
{
    NT_CU_CALL(event_destroy, "cuEventDestroy", e);
}
nt_status_t nt_cu_event_record(nt_cu_event_t e, nt_cu_stream_t s)
{
    NT_CU_CALL(event_record, "cuEventRecord", e, s);
}
nt_status_t nt_cu_event_synchronize(nt_cu_event_t e)
{
    NT_CU_CALL(event_sync, "cuEventSynchronize", e);
}
nt_status_t nt_cu_event_elapsed(nt_cu_event_t start, nt_cu_event_t end, float *ms)
{
    NT_CU_CALL(event_elapsed, "cuEventElapsedTime", ms, start, end);
}
nt_status_t nt_cu_module_load(const void *image, nt_cu_module_t *m)
{
    NT_CU_CALL(module_load, "cuModuleLoadData", m, image);
}
nt_status_t nt_cu_module_unload(nt_cu_module_t m)
{
    NT_CU_CALL(module_unload, "cuModuleUnload", m);
}
nt_status_t nt_cu_module_function(nt_cu_module_t m, const char *name, nt_cu_function_t *f)
{
    NT_CU_CALL(module_function, "cuModuleGetFunction", f, m, name);
}
nt_status_t nt_cu_launch(nt_cu_function_t f, unsigned grid, unsigned block, nt_cu_stream_t s,
                         void **args)
{
    NT_CU_CALL(launch, "cuLaunchKernel", f, grid, 1, 1, block, 1, 1, 0, s, args, NULL);
}
nt_status_t nt_cu_can_access_peer(nt_cu_device_t dev, nt_cu_device_t peer, int *can)
{
    NT_CU_CALL(can_access_peer, "cuDeviceCanAccessPeer", can, dev, peer);
}
nt_status_t nt_cu_ctx_enable_peer(nt_cu_ctx_t peer_ctx)
{
    NT_CU_CALL(enable_peer, "cuCtxEnablePeerAccess", peer_ctx, 0);
}
nt_status_t nt_cu_p2p_attr(nt_cu_device_t src, nt_cu_device_t dst, int attr, int *value)
{
    NT_CU_CALL(p2p_attr, "cuDeviceGetP2PAttribute", value, attr, src, dst);
}
nt_status_t nt_cu_ipc_get(nt_cu_ptr_t dptr, nt_cu_ipc_handle_t *h)
{
    NT_CU_CALL(ipc_get, "cuIpcGetMemHandle", h, dptr);
}
nt_status_t nt_cu_ipc_open(const nt_cu_ipc_handle_t *h, nt_cu_ptr_t *dptr)
{
    NT_CU_CALL(ipc_open, "cuIpcOpenMemHandle", dptr, *h, NT_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
}
nt_status_t nt_cu_ipc_close(nt_cu_ptr_t dptr)
{
    NT_CU_CALL(ipc_close, "cuIpcCloseMemHandle", dptr);
}
nt_status_t nt_cu_ipc_event_get(nt_cu_event_t e, nt_cu_ipc_handle_t *h)
{
    NT_CU_CALL(ipc_event_get, "cuIpcGetEventHandle", h, e);
}
nt_status_t nt_cu_ipc_event_open(const nt_cu_ipc_handle_t *h, nt_cu_event_t *e)
{
    NT_CU_CALL(ipc_event_open, "cuIpcOpenEventHandle", e, *h);
}
