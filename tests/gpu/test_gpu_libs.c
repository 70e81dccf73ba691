/* The CUDA and NVML wrappers (lib/node/cuda.c, lib/node/nvml.c) on stand-in libraries built by
 * tests/gpu/module.mk (fake_cuda.c, fake_nvml.c): every dlopen path, the error conversion, the
 * skip reasons, and the NVML inventory with its error paths. The constants are compared with
 * CUDA's own cuda.h when the build has one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/cuda.h"
#include "nettune/gpu.h"
#include "nettune/nvml.h"

#if NT_TEST_CUDA_H
#include <cuda.h>
_Static_assert(NT_CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "cuda.h");
_Static_assert(NT_CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY, "cuda.h");
_Static_assert(NT_CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY, "cuda.h");
_Static_assert(NT_CUDA_ERROR_NO_BINARY_FOR_GPU == CUDA_ERROR_NO_BINARY_FOR_GPU, "cuda.h");
_Static_assert(NT_CUDA_ERROR_UNSUPPORTED_PTX_VERSION == CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "");
_Static_assert(NT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
               "cuda.h");
_Static_assert(NT_CUDA_ERROR_PEER_ACCESS_UNSUPPORTED == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, "");
_Static_assert(NT_CUDA_ERROR_SYSTEM_NOT_READY == CUDA_ERROR_SYSTEM_NOT_READY, "cuda.h");
_Static_assert(NT_CUDA_ERROR_NOT_READY == CUDA_ERROR_NOT_READY, "cuda.h");
_Static_assert(NT_CUDA_ERROR_INVALID_HANDLE == CUDA_ERROR_INVALID_HANDLE, "cuda.h");
_Static_assert(NT_CU_ATTR_MULTIPROCESSOR_COUNT == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "");
_Static_assert(NT_CU_ATTR_CC_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "cuda.h");
_Static_assert(NT_CU_MEMHOSTREGISTER_DEVICEMAP == CU_MEMHOSTREGISTER_DEVICEMAP, "cuda.h");
_Static_assert(NT_CU_MEMHOSTALLOC_DEVICEMAP == CU_MEMHOSTALLOC_DEVICEMAP, "cuda.h");
_Static_assert(NT_CU_IPC_HANDLE_SIZE == CU_IPC_HANDLE_SIZE, "cuda.h");
_Static_assert(sizeof(nt_cu_ipc_handle_t) == sizeof(CUipcEventHandle), "cuda.h");
_Static_assert(NT_CU_EVENT_DISABLE_TIMING == CU_EVENT_DISABLE_TIMING, "cuda.h");
_Static_assert(NT_CU_EVENT_INTERPROCESS == CU_EVENT_INTERPROCESS, "cuda.h");
_Static_assert(NT_CU_STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING, "cuda.h");
_Static_assert(sizeof(nt_cu_ptr_t) == sizeof(CUdeviceptr), "cuda.h");
#endif

#define FAKE_CUDA NT_TEST_FAKE_DIR "/libnt-fake-cuda.so"
#define FAKE_CUDA_OLD NT_TEST_FAKE_DIR "/libnt-fake-cuda-old.so"
#define FAKE_NVML NT_TEST_FAKE_DIR "/libnt-fake-nvml.so"

static void test_cuda_status_table(void **state)
{
    (void)state;
    assert_int_equal(nt_cuda_status(0), NT_OK);
    assert_int_equal(nt_cuda_status(NT_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED), NT_OK);
    assert_int_equal(nt_cuda_status(NT_CUDA_ERROR_NO_DEVICE), NT_ERR_UNSUPPORTED);
    assert_int_equal(nt_cuda_status(NT_CUDA_ERROR_NO_BINARY_FOR_GPU), NT_ERR_UNSUPPORTED);
    assert_int_equal(nt_cuda_status(NT_CUDA_ERROR_OUT_OF_MEMORY), NT_ERR_NOMEM);
    assert_int_equal(nt_cuda_status(NT_CUDA_ERROR_INVALID_VALUE), NT_ERR_INVALID);
    assert_int_equal(nt_cuda_status(NT_CUDA_ERROR_NOT_READY), NT_ERR_TIMEOUT);
    assert_int_equal(nt_cuda_status(700), NT_ERR_SYSTEM); /* ILLEGAL_ADDRESS */
    assert_int_equal(nt_nvml_status(0), NT_OK);
    assert_int_equal(nt_nvml_status(NT_NVML_ERROR_NOT_SUPPORTED), NT_ERR_UNSUPPORTED);
    assert_int_equal(nt_nvml_status(NT_NVML_ERROR_GPU_IS_LOST), NT_ERR_SYSTEM);
    assert_int_equal(nt_nvml_status(NT_NVML_ERROR_TIMEOUT), NT_ERR_TIMEOUT);
}

static void test_cuda_no_driver(void **state)
{
    char why[256];
    nt_cu_ptr_t p;
    (void)state;
    nt_cuda_reset();
    assert_int_equal(nt_cuda_load("libnt-no-such-cuda.so.1", why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_string_equal(why, "no CUDA driver (libnt-no-such-cuda.so.1 cannot be loaded)");
    /* the first result stays, and nothing calls through a NULL pointer */
    assert_int_equal(nt_cuda_load(NULL, why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_int_equal(nt_cu_mem_alloc(16, &p), NT_ERR_UNSUPPORTED);
    assert_string_equal(nt_cuda_last_error(), "cuMemAlloc: the CUDA driver is not loaded");
    assert_int_equal(nt_cuda_driver_version(), 0);
}

static void test_cuda_no_gpu_old_driver_missing_call(void **state)
{
    char why[256];
    (void)state;
    nt_cuda_reset();
    setenv("NT_FAKE_CUDA_INIT", "100", 1);
    assert_int_equal(nt_cuda_load(FAKE_CUDA, why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_string_equal(why, "no GPU visible (cuInit: CUDA_ERROR_NO_DEVICE)");
    nt_cuda_reset();
    setenv("NT_FAKE_CUDA_VERSION", "11020", 1);
    assert_int_equal(nt_cuda_load(FAKE_CUDA, why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_string_equal(why, "CUDA driver 11.2 is too old (nettune needs 11.4, driver R470 or "
                             "later)");
    unsetenv("NT_FAKE_CUDA_VERSION");
    nt_cuda_reset();
    assert_int_equal(nt_cuda_load(FAKE_CUDA_OLD, why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_non_null(strstr(why, "lacks cuLaunchKernel"));
    nt_cuda_reset();
}

static void test_cuda_loaded_errors(void **state)
{
    char why[256];
    nt_cu_ptr_t p = 0;
    int v = 0;
    (void)state;
    nt_cuda_reset();
    setenv("NT_FAKE_CUDA_INIT", "0", 1);
    assert_int_equal(nt_cuda_load(FAKE_CUDA, why, sizeof(why)), NT_OK);
    assert_string_equal(why, "");
    assert_int_equal(nt_cuda_driver_version(), 12040);
    assert_int_equal(nt_cu_device_count(&v), NT_OK);
    assert_int_equal(v, 2);
    assert_int_equal(nt_cu_mem_alloc(1024, &p), NT_OK);
    assert_true(p != 0);
    setenv("NT_FAKE_CUDA_ALLOC", "2", 1);
    assert_int_equal(nt_cu_mem_alloc(1024, &p), NT_ERR_NOMEM);
    assert_string_equal(nt_cuda_last_error(), "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of "
                                              "memory)");
    unsetenv("NT_FAKE_CUDA_ALLOC");
    unsetenv("NT_FAKE_CUDA_INIT");
    /* the driver version of a library, without keeping it (lib/node/software.c's path) */
    assert_int_equal(
        nt_cuda_driver_version_of((const char *[]){"libnt-none.so", FAKE_CUDA, NULL}, &v), NT_OK);
    assert_int_equal(v, 12040);
    assert_int_equal(nt_cuda_driver_version_of((const char *[]){"libnt-none.so", NULL}, &v),
                     NT_ERR_UNSUPPORTED);
    nt_cuda_reset();
}

static void test_nvml_inventory(void **state)
{
    char why[256], buf[64];
    nt_gpu_info_t g, after;
    int n = 0, ok = 0;
    cJSON *o;
    (void)state;
    nt_nvml_reset();
    assert_int_equal(nt_nvml_load("libnt-no-such-nvml.so.1", why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_string_equal(why, "no NVIDIA driver (libnt-no-such-nvml.so.1 cannot be loaded)");
    assert_int_equal(nt_nvml_gpu_count(&n), NT_ERR_UNSUPPORTED);
    nt_nvml_reset();
    setenv("NT_FAKE_NVML_INIT_RC", "9", 1);
    assert_int_equal(nt_nvml_load(FAKE_NVML, why, sizeof(why)), NT_ERR_UNSUPPORTED);
    assert_string_equal(why, "nvmlInit failed: Driver Not Loaded");
    unsetenv("NT_FAKE_NVML_INIT_RC");
    nt_nvml_reset();
    setenv("NT_FAKE_NVML_DOWN", "7", 1);
    setenv("NT_FAKE_NVML_LOST", "5", 1);
    setenv("NT_FAKE_NVML_GROW", "1", 1);
    assert_int_equal(nt_nvml_load(FAKE_NVML, why, sizeof(why)), NT_OK);
    assert_int_equal(nt_nvml_gpu_count(&n), NT_OK);
    assert_int_equal(n, 8);
    assert_int_equal(nt_nvml_gpu_info(0, &g), NT_OK);
    assert_string_equal(g.name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(g.bus_id, "0000:18:00.0"); /* lower case */
    assert_int_equal(g.cc_major, 9);
    assert_int_equal(g.mig, 0);
    assert_int_equal(g.pcie_gen, 1);
    assert_int_equal(g.pcie_max_gen, 5);
    assert_int_equal(g.nlinks, 18);
    assert_int_equal(g.links[7].active, 0);
    assert_int_equal(g.links[6].active, 1);
    assert_int_equal(g.links[0].version, 4);
    assert_int_equal(g.links[0].remote, NT_NVLINK_REMOTE_SWITCH);
    assert_int_equal(g.fabric_state, NT_FABRIC_COMPLETED);
    assert_true(nt_gpu_pcie_line_GBps(&g) > 63.0);
    /* the GPU that fell off the bus: an error naming it */
    assert_int_equal(nt_nvml_gpu_info(5, &after), NT_ERR_SYSTEM);
    assert_string_equal(nt_nvml_last_error(), "nvmlDeviceGetName: GPU is lost");
    /* counters read again: link 3 crc_flit grew */
    after = g;
    assert_int_equal(nt_nvml_read_counters(0, &after), NT_OK);
    assert_int_equal(nt_gpu_counters_verdict(&g, &after, buf, sizeof(buf)), NT_FAIL);
    assert_string_equal(buf, "link 3 crc_flit +5");
    assert_int_equal(nt_nvml_p2p_status(0, 1, &ok, why, sizeof(why)), NT_OK);
    assert_int_equal(ok, 1);
    assert_int_equal(nt_nvml_path(0, 5, buf, sizeof(buf)), NT_OK);
    assert_string_equal(buf, "SYS");
    assert_int_equal(nt_nvml_pcie_current(0, &n, &ok), NT_OK);
    assert_int_equal(n, 1);
    assert_int_equal(ok, 16);
    /* the report entry */
    o = cJSON_CreateObject();
    g.numa_node = 0;
    assert_int_equal(nt_gpu_info_to_json(&g, o), NT_OK);
    assert_string_equal(cJSON_GetObjectItem(o, "compute_capability")->valuestring, "9.0");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "nvlinks")), 18);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "nvlinks"), 7), "state")
            ->valuestring,
        "down");
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "pcie"), "max_gen")->valueint, 5);
    assert_string_equal(cJSON_GetObjectItem(o, "fabric_manager")->valuestring, "completed");
    cJSON_Delete(o);
    unsetenv("NT_FAKE_NVML_DOWN");
    unsetenv("NT_FAKE_NVML_LOST");
    unsetenv("NT_FAKE_NVML_GROW");
    nt_nvml_reset();
    assert_true(nt_pci_bus_id_equal("00000000:3B:00.0", "0000:3b:00.0"));
    assert_false(nt_pci_bus_id_equal("0000:3b:00.0", "0000:3c:00.0"));
    assert_false(nt_pci_bus_id_equal("", ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cuda_status_table),
        cmocka_unit_test(test_cuda_no_driver),
        cmocka_unit_test(test_cuda_no_gpu_old_driver_missing_call),
        cmocka_unit_test(test_cuda_loaded_errors),
        cmocka_unit_test(test_nvml_inventory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
