/* The one CUDA wrapper of nettune: the CUDA *driver* API (libcuda.so.1), loaded with dlopen the
 * first time it is needed, its CUresult errors converted once, here, to nt_status_t (as NCCL's
 * src/misc/cudawrap.cc and src/include/cudawrap.h CUCHECK do, NVIDIA/nccl v2.28.9-1
 * src/include/cudawrap.h:29). No libcudart: a CUDA 13 runtime needs a driver >= 580, the driver
 * API of libcuda runs on whatever driver the node has (R470 and later: every call used here
 * exists since CUDA 11.4), so one build runs on R535..R580 clusters alike.
 *
 * nettune links no CUDA library and needs no CUDA header: the few types and constants used are
 * declared here, with their values from CUDA 13.0 include/cuda.h (tests/unit/test_cuda.c
 * compares them with cuda.h when the build finds one). Versioned entry points are looked up by
 * the name cuda.h maps the call to (cuMemAlloc -> cuMemAlloc_v2, cuda.h:93).
 *
 * Every call returns nt_status_t; on an error the CUDA error name and string of the last failed
 * call of this thread are in nt_cuda_last_error() ("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out
 * of memory)"). Conversion (nt_cuda_status): CUDA_SUCCESS and
 * CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED -> NT_OK; NO_DEVICE, STUB_LIBRARY,
 * NOT_SUPPORTED, PEER_ACCESS_UNSUPPORTED, NO_BINARY_FOR_GPU, UNSUPPORTED_PTX_VERSION,
 * SYSTEM_NOT_READY (Fabric Manager), SYSTEM_DRIVER_MISMATCH, COMPAT_NOT_SUPPORTED_ON_DEVICE ->
 * NT_ERR_UNSUPPORTED; OUT_OF_MEMORY -> NT_ERR_NOMEM; INVALID_VALUE, INVALID_DEVICE,
 * INVALID_HANDLE -> NT_ERR_INVALID; NOT_READY, LAUNCH_TIMEOUT -> NT_ERR_TIMEOUT; anything else
 * -> NT_ERR_SYSTEM. */
#ifndef NETTUNE_CUDA_H
#define NETTUNE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "nettune/status.h"

typedef int nt_cu_result_t;             /* CUresult */
typedef int nt_cu_device_t;             /* CUdevice */
typedef void *nt_cu_ctx_t;              /* CUcontext */
typedef void *nt_cu_stream_t;           /* CUstream */
typedef void *nt_cu_event_t;            /* CUevent */
typedef void *nt_cu_module_t;           /* CUmodule */
typedef void *nt_cu_function_t;         /* CUfunction */
typedef unsigned long long nt_cu_ptr_t; /* CUdeviceptr (64-bit) */

#define NT_CU_IPC_HANDLE_SIZE 64 /* CU_IPC_HANDLE_SIZE, cuda.h:325 */
typedef struct nt_cu_ipc_handle {
    char reserved[NT_CU_IPC_HANDLE_SIZE]; /* CUipcMemHandle */
} nt_cu_ipc_handle_t;

/* CUresult values nettune tests for (cuda.h:2523-3178). */
#define NT_CUDA_SUCCESS 0
#define NT_CUDA_ERROR_INVALID_VALUE 1
#define NT_CUDA_ERROR_OUT_OF_MEMORY 2
#define NT_CUDA_ERROR_NOT_INITIALIZED 3
#define NT_CUDA_ERROR_STUB_LIBRARY 34
#define NT_CUDA_ERROR_NO_DEVICE 100
#define NT_CUDA_ERROR_INVALID_DEVICE 101
#define NT_CUDA_ERROR_NO_BINARY_FOR_GPU 209
#define NT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED 217
#define NT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
#define NT_CUDA_ERROR_INVALID_HANDLE 400
#define NT_CUDA_ERROR_NOT_READY 600
#define NT_CUDA_ERROR_LAUNCH_TIMEOUT 702
#define NT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define NT_CUDA_ERROR_NOT_SUPPORTED 801
#define NT_CUDA_ERROR_SYSTEM_NOT_READY 802
#define NT_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH 803
#define NT_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE 804

/* CUdevice_attribute values (cuda.h:741-804). */
#define NT_CU_ATTR_MULTIPROCESSOR_COUNT 16
#define NT_CU_ATTR_CAN_MAP_HOST_MEMORY 19
#define NT_CU_ATTR_ASYNC_ENGINE_COUNT 40
#define NT_CU_ATTR_UNIFIED_ADDRESSING 41
#define NT_CU_ATTR_CC_MAJOR 75
#define NT_CU_ATTR_CC_MINOR 76
/* CUdevice_P2PAttribute (cuda.h:3185). */
#define NT_CU_P2P_ATTR_PERFORMANCE_RANK 1
#define NT_CU_P2P_ATTR_ACCESS_SUPPORTED 2
/* Flags (cuda.h:3247-3275, 429, 456). */
#define NT_CU_MEMHOSTALLOC_PORTABLE 0x01
#define NT_CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define NT_CU_MEMHOSTREGISTER_PORTABLE 0x01
#define NT_CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define NT_CU_STREAM_NON_BLOCKING 0x1
#define NT_CU_EVENT_DEFAULT 0x0
#define NT_CU_EVENT_DISABLE_TIMING 0x2 /* CU_EVENT_DISABLE_TIMING, cuda.h:458 */
#define NT_CU_EVENT_INTERPROCESS 0x4   /* CU_EVENT_INTERPROCESS, cuda.h:459 */
#define NT_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS 0x1
#define NT_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD 1

/* nt_cuda_status - the nt_status_t of a CUresult (the table in the header comment). */
nt_status_t nt_cuda_status(nt_cu_result_t r);

/* nt_cuda_load - load libcuda and call cuInit(0), once per process (later calls return the
 * first result and reason). lib NULL = "libcuda.so.1" (or $NETTUNE_TEST_LIBCUDA, a test
 * hook naming a stand-in library); a path is opened as is. On failure why (may be NULL) gets
 * the skip reason: "no CUDA driver (libcuda.so.1 cannot be loaded)", "no GPU visible (cuInit:
 * CUDA_ERROR_NO_DEVICE)", "the CUDA driver lacks cuXxx", "CUDA driver 11.2 is too old
 * (nettune needs 11.4)". Returns NT_ERR_UNSUPPORTED for all of these, NT_OK when usable. */
nt_status_t nt_cuda_load(const char *lib, char *why, size_t whylen);

/* nt_cuda_reset - forget a load (unit tests only: the next nt_cuda_load loads again). */
void nt_cuda_reset(void);

/* nt_cuda_driver_version_of - cuDriverGetVersion of the first loadable library of names
 * (NULL-terminated; NULL = {"libcuda.so.1"}), without cuInit and without keeping it loaded:
 * the version of the driver the node would load (lib/node/software.c). *v = 1000 x major +
 * 10 x minor. NT_ERR_UNSUPPORTED: nothing loads or no symbol; NT_ERR_SYSTEM: the call failed. */
nt_status_t nt_cuda_driver_version_of(const char *const *names, int *v);

/* nt_cuda_driver_version - cuDriverGetVersion of the loaded driver (0 before nt_cuda_load). */
int nt_cuda_driver_version(void);

/* nt_cuda_last_error - "<call>: <CUDA_ERROR_NAME> (<description>)" of this thread's last failed
 * call, "" if none. */
const char *nt_cuda_last_error(void);

/* Devices and contexts. bus ids are "dddd:bb:dd.f" (cuDeviceGetPCIBusId; NVML's form is
 * matched by nt_pci_bus_id_equal in nettune/nvml.h). */
nt_status_t nt_cu_device_count(int *n);
nt_status_t nt_cu_device_get(int ordinal, nt_cu_device_t *dev);
nt_status_t nt_cu_device_by_bus_id(const char *bus_id, nt_cu_device_t *dev);
nt_status_t nt_cu_device_bus_id(nt_cu_device_t dev, char *buf, size_t len);
nt_status_t nt_cu_device_name(nt_cu_device_t dev, char *buf, size_t len);
nt_status_t nt_cu_device_attr(nt_cu_device_t dev, int attr, int *value);
nt_status_t nt_cu_device_total_mem(nt_cu_device_t dev, size_t *bytes);
/* Primary context: retain (and make current), set current, release. */
nt_status_t nt_cu_ctx_retain(nt_cu_device_t dev, nt_cu_ctx_t *ctx);
nt_status_t nt_cu_ctx_set(nt_cu_ctx_t ctx);
nt_status_t nt_cu_ctx_release(nt_cu_device_t dev);
nt_status_t nt_cu_ctx_synchronize(void);

/* Memory. Device memory in the current context; host memory pinned (cuMemHostAlloc flags
 * NT_CU_MEMHOSTALLOC_*), or registered (cuMemHostRegister flags NT_CU_MEMHOSTREGISTER_*). */
nt_status_t nt_cu_mem_alloc(size_t bytes, nt_cu_ptr_t *dptr);
nt_status_t nt_cu_mem_free(nt_cu_ptr_t dptr);
nt_status_t nt_cu_host_alloc(size_t bytes, unsigned flags, void **p);
nt_status_t nt_cu_host_free(void *p);
nt_status_t nt_cu_host_register(void *p, size_t bytes, unsigned flags);
nt_status_t nt_cu_host_unregister(void *p);
nt_status_t nt_cu_host_device_ptr(void *p, nt_cu_ptr_t *dptr);
nt_status_t nt_cu_memset_d32_async(nt_cu_ptr_t dptr, unsigned value, size_t count,
                                   nt_cu_stream_t s);
/* nt_cu_mem_dmabuf_fd - a dma-buf fd for a device range (CUDA 11.7+, open kernel modules);
 * NT_ERR_UNSUPPORTED when the driver cannot. */
nt_status_t nt_cu_mem_dmabuf_fd(nt_cu_ptr_t dptr, size_t bytes, int *fd);

/* Copies: any direction with unified addressing (cuMemcpyAsync), and between contexts. */
nt_status_t nt_cu_memcpy_async(nt_cu_ptr_t dst, nt_cu_ptr_t src, size_t bytes, nt_cu_stream_t s);
nt_status_t nt_cu_memcpy_peer_async(nt_cu_ptr_t dst, nt_cu_ctx_t dst_ctx, nt_cu_ptr_t src,
                                    nt_cu_ctx_t src_ctx, size_t bytes, nt_cu_stream_t s);

/* Streams and events (timing events: NT_CU_EVENT_DEFAULT). nt_cu_event_elapsed in ms. */
nt_status_t nt_cu_stream_create(nt_cu_stream_t *s);
nt_status_t nt_cu_stream_destroy(nt_cu_stream_t s);
nt_status_t nt_cu_stream_synchronize(nt_cu_stream_t s);
/* nt_cu_stream_query - NT_OK when the stream is idle, NT_ERR_TIMEOUT while work is pending. */
nt_status_t nt_cu_stream_query(nt_cu_stream_t s);
nt_status_t nt_cu_event_create(nt_cu_event_t *e);
/* nt_cu_event_create_ipc - an event another process can wait on (cuEventCreate with
 * CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS, which CUDA requires for
 * cuIpcGetEventHandle): for ordering only, it cannot be timed. */
nt_status_t nt_cu_event_create_ipc(nt_cu_event_t *e);
/* nt_cu_stream_wait_event - work queued on s after this call waits for the last record of e
 * (cuStreamWaitEvent, CUDA 13.0 cuda.h:15268; e may be an event opened from another
 * process). NT_ERR_UNSUPPORTED when the driver lacks it. */
nt_status_t nt_cu_stream_wait_event(nt_cu_stream_t s, nt_cu_event_t e);
nt_status_t nt_cu_event_destroy(nt_cu_event_t e);
nt_status_t nt_cu_event_record(nt_cu_event_t e, nt_cu_stream_t s);
nt_status_t nt_cu_event_synchronize(nt_cu_event_t e);
nt_status_t nt_cu_event_elapsed(nt_cu_event_t start, nt_cu_event_t end, float *ms);

/* Kernels from an embedded fatbin/cubin/PTX image (cuModuleLoadData). */
nt_status_t nt_cu_module_load(const void *image, nt_cu_module_t *m);
nt_status_t nt_cu_module_unload(nt_cu_module_t m);
nt_status_t nt_cu_module_function(nt_cu_module_t m, const char *name, nt_cu_function_t *f);
nt_status_t nt_cu_launch(nt_cu_function_t f, unsigned grid, unsigned block, nt_cu_stream_t s,
                         void **args);

/* Peers: capability, enabling from the current context, attributes; IPC handles. */
nt_status_t nt_cu_can_access_peer(nt_cu_device_t dev, nt_cu_device_t peer, int *can);
nt_status_t nt_cu_ctx_enable_peer(nt_cu_ctx_t peer_ctx);
nt_status_t nt_cu_p2p_attr(nt_cu_device_t src, nt_cu_device_t dst, int attr, int *value);
nt_status_t nt_cu_ipc_get(nt_cu_ptr_t dptr, nt_cu_ipc_handle_t *h);
nt_status_t nt_cu_ipc_open(const nt_cu_ipc_handle_t *h, nt_cu_ptr_t *dptr);
nt_status_t nt_cu_ipc_close(nt_cu_ptr_t dptr);
/* nt_cu_ipc_event_get / open - the IPC handle of an event of nt_cu_event_create_ipc
 * (cuIpcGetEventHandle), and the event of such a handle from another process of this node
 * (cuIpcOpenEventHandle; free it with nt_cu_event_destroy); CUDA 13.0 cuda.h:9265, 9308.
 * CUipcEventHandle has the size of CUipcMemHandle (CU_IPC_HANDLE_SIZE, cuda.h:325).
 * NT_ERR_UNSUPPORTED when the driver lacks the calls; errors of the calls as nt_cuda_status. */
nt_status_t nt_cu_ipc_event_get(nt_cu_event_t e, nt_cu_ipc_handle_t *h);
nt_status_t nt_cu_ipc_event_open(const nt_cu_ipc_handle_t *h, nt_cu_event_t *e);

#endif
