/* GPU memory for GPUDirect RDMA through the one CUDA wrapper (lib/node/cuda.c, the driver API
 * loaded with dlopen), so that the probe runs on nodes without CUDA (then GPU tests are
 * skipped with the reason). dma-buf: cuMemGetHandleForAddressRange(DMA_BUF_FD) (CUDA 11.7+,
 * open kernel modules) then ibv_reg_dmabuf_mr; peer memory: ibv_reg_mr on the device pointer
 * with nvidia_peermem loaded. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nettune/cuda.h"
#include "nettune/sysfs.h"
#include "verbs.h"

nt_status_t nt_gpu_alloc(int ordinal, const char *bus_id, size_t bytes, void **dptr, int *dmabuf_fd,
                         char *why, size_t whylen)
{
    nt_cu_device_t dev = -1;
    nt_cu_ctx_t ctx = NULL;
    nt_cu_ptr_t p = 0;
    nt_status_t st;

    *dptr = NULL;
    *dmabuf_fd = -1;
    if (nt_cuda_load(NULL, why, whylen) != NT_OK)
        return NT_ERR_UNSUPPORTED;
    st = bus_id && bus_id[0] ? nt_cu_device_by_bus_id(bus_id, &dev)
                             : nt_cu_device_get(ordinal, &dev);
    if (st == NT_OK)
        st = nt_cu_ctx_retain(dev, &ctx);
    if (st != NT_OK) {
        snprintf(why, whylen, "cannot open GPU %s (%s)", bus_id && *bus_id ? bus_id : "?",
                 nt_cuda_last_error());
        return NT_ERR_UNSUPPORTED;
    }
    if ((st = nt_cu_mem_alloc(bytes, &p)) != NT_OK) {
        snprintf(why, whylen, "cuMemAlloc of %zu bytes failed (%s)", bytes, nt_cuda_last_error());
        return st == NT_ERR_NOMEM ? NT_ERR_NOMEM : NT_ERR_SYSTEM;
    }
    *dptr = (void *)(uintptr_t)p;
    if (nt_cu_mem_dmabuf_fd(p, bytes, dmabuf_fd) != NT_OK)
        *dmabuf_fd = -1;
    return NT_OK;
}

void nt_gpu_free(void *dptr, int dmabuf_fd)
{
    if (dmabuf_fd >= 0)
        close(dmabuf_fd);
    if (dptr)
        nt_cu_mem_free((nt_cu_ptr_t)(uintptr_t)dptr);
}

int nt_gpu_peermem_loaded(void)
{
    char buf[64];
    return nt_sysfs_read_str("/sys/kernel/mm/memory_peers/nv_mem/version", buf, sizeof(buf)) ==
               NT_OK ||
           nt_sysfs_read_str("/sys/module/nvidia_peermem/initstate", buf, sizeof(buf)) == NT_OK;
}
