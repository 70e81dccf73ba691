/* GPU memory for GPUDirect RDMA through the CUDA driver API, loaded with dlopen so that the
 * probe runs on nodes without CUDA (then GPU tests are skipped with the reason).
 * dma-buf: cuMemGetHandleForAddressRange(CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD) (CUDA 11.7+,
 * open kernel modules) then ibv_reg_dmabuf_mr; peer memory: ibv_reg_mr on the device pointer
 * with nvidia_peermem loaded. */
#if NT_HAVE_IBVERBS
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nettune/sysfs.h"
#include "verbs.h"

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_dev_get_t)(int *, int);
typedef int (*cu_dev_bus_t)(int *, const char *);
typedef int (*cu_ctx_retain_t)(void **, int);
typedef int (*cu_ctx_set_t)(void *);
typedef int (*cu_alloc_t)(unsigned long long *, size_t);
typedef int (*cu_free_t)(unsigned long long);
typedef int (*cu_handle_t)(void *, void *, size_t, int, unsigned long long);
#define NT_CU_DMA_BUF_FD 1 /* CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD */

static void *nt_cuda;

static void *nt_cu(const char *name)
{
    return nt_cuda ? dlsym(nt_cuda, name) : NULL;
}

nt_status_t nt_gpu_alloc(int ordinal, const char *bus_id, size_t bytes, void **dptr,
                         int *dmabuf_fd, char *why, size_t whylen)
{
    cu_init_t init;
    cu_dev_get_t dev_get;
    cu_dev_bus_t dev_bus;
    cu_ctx_retain_t retain;
    cu_ctx_set_t set;
    cu_alloc_t alloc;
    cu_handle_t handle;
    int dev = -1, r;
    void *ctx = NULL;
    unsigned long long p = 0;

    *dptr = NULL;
    *dmabuf_fd = -1;
    if (!nt_cuda)
        nt_cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nt_cuda) {
        snprintf(why, whylen, "no CUDA driver (libcuda.so.1 cannot be loaded)");
        return NT_ERR_UNSUPPORTED;
    }
    init = (cu_init_t)nt_cu("cuInit");
    dev_get = (cu_dev_get_t)nt_cu("cuDeviceGet");
    dev_bus = (cu_dev_bus_t)nt_cu("cuDeviceGetByPCIBusId");
    retain = (cu_ctx_retain_t)nt_cu("cuDevicePrimaryCtxRetain");
    set = (cu_ctx_set_t)nt_cu("cuCtxSetCurrent");
    alloc = (cu_alloc_t)nt_cu("cuMemAlloc_v2");
    handle = (cu_handle_t)nt_cu("cuMemGetHandleForAddressRange");
    if (!init || !dev_get || !retain || !set || !alloc) {
        snprintf(why, whylen, "the CUDA driver lacks the calls needed (cuMemAlloc_v2 ...)");
        return NT_ERR_UNSUPPORTED;
    }
    if ((r = init(0)) != 0) {
        snprintf(why, whylen, "cuInit failed (CUDA error %d): no usable GPU", r);
        return NT_ERR_UNSUPPORTED;
    }
    if (bus_id && bus_id[0] && dev_bus)
        r = dev_bus(&dev, bus_id);
    else
        r = dev_get(&dev, ordinal);
    if (r != 0 || retain(&ctx, dev) != 0 || set(ctx) != 0) {
        snprintf(why, whylen, "cannot open GPU %s (CUDA error %d)", bus_id && *bus_id ? bus_id : "?", r);
        return NT_ERR_UNSUPPORTED;
    }
    if ((r = alloc(&p, bytes)) != 0) {
        snprintf(why, whylen, "cuMemAlloc of %zu bytes failed (CUDA error %d)", bytes, r);
        return NT_ERR_NOMEM;
    }
    *dptr = (void *)(uintptr_t)p;
    if (handle && handle(dmabuf_fd, *dptr, bytes, NT_CU_DMA_BUF_FD, 0) != 0)
        *dmabuf_fd = -1;
    return NT_OK;
}

void nt_gpu_free(void *dptr, int dmabuf_fd)
{
    cu_free_t fr = (cu_free_t)nt_cu("cuMemFree_v2");
    if (dmabuf_fd >= 0)
        close(dmabuf_fd);
    if (fr && dptr)
        fr((unsigned long long)(uintptr_t)dptr);
}

int nt_gpu_peermem_loaded(void)
{
    char buf[64];
    return nt_sysfs_read_str("/sys/kernel/mm/memory_peers/nv_mem/version", buf, sizeof(buf)) == NT_OK ||
           nt_sysfs_read_str("/sys/module/nvidia_peermem/initstate", buf, sizeof(buf)) == NT_OK;
}
#endif
