/* The GPU-memory RDMA links' decisions (gpu_link.c): which GPU a rail uses, the endpoint
 * strings of the link ids, and the agreement table of the two ends (none / skip / try /
 * measure) with the skip reasons naming the node. No GPU or RDMA hardware needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/report.h"
#include "rdma.h"

/* Two NICs, three GPUs: mlx5_0 is PIX to GPU index 2 (topo entry 1), mlx5_1 is SYS to all
 * (ties: the lowest entry). */
static nt_topo_gpu_t gpus[3] = {
    {.index = 0, .pci_bus_id = "0000:18:00.0"},
    {.index = 2, .pci_bus_id = "0000:3b:00.0"},
    {.index = 5, .pci_bus_id = "0000:86:00.0"},
};
static nt_topo_nic_t nics[2] = {{.name = "mlx5_0"}, {.name = "mlx5_1"}};
static nt_path_t paths[6] = {NT_PATH_NODE, NT_PATH_SYS, NT_PATH_PIX,
                             NT_PATH_SYS,  NT_PATH_SYS, NT_PATH_SYS};

static nt_topo_t topo3(void)
{
    nt_topo_t t;
    memset(&t, 0, sizeof(t));
    t.gpus = gpus;
    t.ngpus = 3;
    t.nics = nics;
    t.nnics = 2;
    t.paths = paths;
    return t;
}

static void test_gpu_for_nic(void **state)
{
    nt_topo_t t = topo3(), none;
    char why[160];
    (void)state;
    assert_int_equal(nt_rdma_gpu_for_nic(&t, "mlx5_0", why, sizeof(why)), 1);
    assert_string_equal(why, "GPU 2 is nearest to mlx5_0 (PIX)");
    assert_int_equal(nt_rdma_gpu_for_nic(&t, "mlx5_1", why, sizeof(why)), 0);
    assert_string_equal(why, "GPU 0 is nearest to mlx5_1 (SYS)");
    /* a NIC hwloc does not list (rxe, or a filtered topology): the first GPU, said so */
    assert_int_equal(nt_rdma_gpu_for_nic(&t, "rxe0", why, sizeof(why)), 0);
    assert_non_null(strstr(why, "not in the topology"));
    /* no topology, no GPU: -1, which keeps nodes without GPUs as they were */
    assert_int_equal(nt_rdma_gpu_for_nic(NULL, "mlx5_0", why, sizeof(why)), -1);
    memset(&none, 0, sizeof(none));
    assert_int_equal(nt_rdma_gpu_for_nic(&none, "mlx5_0", NULL, 0), -1);
}

static void test_endpoints_and_ids(void **state)
{
    char a[64], b[64], id[256];
    (void)state;
    nt_rdma_gpu_ep("mlx5_0", 1, 2, a, sizeof(a));
    assert_string_equal(a, "mlx5_0:1/gpu2");
    nt_rdma_gpu_ep("mlx5_3", 2, 7, b, sizeof(b));
    assert_string_equal(b, "mlx5_3:2/gpu7");
    assert_int_equal(nt_link_id(id, sizeof(id), "rdma", "write", "nodeA", a, "nodeB", b), NT_OK);
    assert_string_equal(id, "rdma.write:nodeA/mlx5_0:1/gpu2->nodeB/mlx5_3:2/gpu7");
    /* an end without a GPU keeps the plain endpoint, so the id differs from the host link's
     * only by the GPU end */
    nt_rdma_gpu_ep("mlx5_0", 1, -1, b, sizeof(b));
    assert_string_equal(b, "mlx5_0:1");
    assert_int_equal(nt_link_id(id, sizeof(id), "rdma", "write", "nodeA", a, "nodeB", b), NT_OK);
    assert_string_equal(id, "rdma.write:nodeA/mlx5_0:1/gpu2->nodeB/mlx5_0:1");
}

static void test_reg_path(void **state)
{
    (void)state;
    assert_string_equal(nt_rdma_gpu_reg_path("gpu (dma-buf)"), "dma-buf");
    assert_string_equal(nt_rdma_gpu_reg_path("gpu (peer memory)"), "peer memory");
    assert_null(nt_rdma_gpu_reg_path("host"));
    assert_null(nt_rdma_gpu_reg_path(NULL));
}

static nt_gpu_end_t end(const char *host, int gpu, int active, nt_gpu_reg_t reg, const char *why)
{
    nt_gpu_end_t e = {host, "mlx5_0:1", gpu, active, reg, why};
    return e;
}

/* decide(a, b) and decide(b, a) agree on the outcome: both ends run the same table. */
static nt_gpu_link_t both(nt_gpu_end_t a, nt_gpu_end_t b, char *why, size_t len)
{
    char other[700];
    nt_gpu_link_t d = nt_gpu_link_decide(&a, &b, why, len);
    assert_int_equal(nt_gpu_link_decide(&b, &a, other, sizeof(other)), d);
    return d;
}

static void test_decide_table(void **state)
{
    char why[700];
    const char *noperm = "cannot register GPU memory with mlx5_0: ibv_reg_dmabuf_mr: Bad address; "
                         "no peer-memory module (nvidia_peermem not loaded)";
    (void)state;

    /* neither end has a GPU: no link, no reason, nothing changes for GPU-less nodes */
    assert_int_equal(both(end("a", -1, 1, NT_GPU_REG_UNTRIED, NULL),
                          end("b", -1, 1, NT_GPU_REG_UNTRIED, NULL), why, sizeof(why)),
                     NT_GPU_LINK_NONE);
    assert_string_equal(why, "");
    /* ... also when their ports are down: the host links carry that */
    assert_int_equal(both(end("a", -1, 0, NT_GPU_REG_UNTRIED, NULL),
                          end("b", -1, 0, NT_GPU_REG_UNTRIED, NULL), why, sizeof(why)),
                     NT_GPU_LINK_NONE);

    /* one end without a GPU: skipped, naming that node */
    assert_int_equal(nt_gpu_link_decide(&(nt_gpu_end_t){"gpu01", "mlx5_0:1", 0, 1, 0, NULL},
                                        &(nt_gpu_end_t){"cpu07", "mlx5_0:1", -1, 1, 0, NULL},
                                        why, sizeof(why)),
                     NT_GPU_LINK_SKIP);
    assert_string_equal(why, "not measured: no GPU on cpu07 (GPU-memory RDMA needs a GPU at both "
                             "ends)");

    /* a port not ACTIVE: skipped (the host link fails), naming port and node */
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_UNTRIED, NULL),
                          end("b", 3, 0, NT_GPU_REG_UNTRIED, NULL), why, sizeof(why)),
                     NT_GPU_LINK_SKIP);
    assert_non_null(strstr(why, "port mlx5_0:1 on b is not ACTIVE"));
    assert_null(strstr(why, " on a "));

    /* both have GPUs and ACTIVE ports: try (allocate, register, exchange) */
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_UNTRIED, NULL),
                          end("b", 3, 1, NT_GPU_REG_UNTRIED, NULL), why, sizeof(why)),
                     NT_GPU_LINK_TRY);
    assert_string_equal(why, "");
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_OK, NULL),
                          end("b", 3, 1, NT_GPU_REG_UNTRIED, NULL), why, sizeof(why)),
                     NT_GPU_LINK_TRY);

    /* both registered: measure */
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_OK, NULL), end("b", 3, 1, NT_GPU_REG_OK, NULL),
                          why, sizeof(why)),
                     NT_GPU_LINK_MEASURE);
    assert_string_equal(why, "");

    /* one registration failed: skipped, naming the node and its reason, never a failure */
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_OK, NULL),
                          end("b", 3, 1, NT_GPU_REG_FAILED, noperm), why, sizeof(why)),
                     NT_GPU_LINK_SKIP);
    assert_non_null(strstr(why, "GPUDirect RDMA unavailable on b: cannot register GPU memory"));
    assert_non_null(strstr(why, "this is not a failed link"));
    assert_null(strstr(why, "unavailable on a"));

    /* both failed: both named */
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_FAILED, "no CUDA driver"),
                          end("b", 3, 1, NT_GPU_REG_FAILED, NULL), why, sizeof(why)),
                     NT_GPU_LINK_SKIP);
    assert_non_null(strstr(why, "GPUDirect RDMA unavailable on a: no CUDA driver"));
    assert_non_null(strstr(why, "GPUDirect RDMA unavailable on b: GPU memory cannot be registered"));
    /* the data path's own "GPUDirect RDMA unavailable: " is not repeated */
    assert_int_equal(both(end("a", 0, 1, NT_GPU_REG_OK, NULL),
                          end("b", 3, 1, NT_GPU_REG_FAILED,
                              "GPUDirect RDMA unavailable: no CUDA driver (libcuda.so.1 cannot be "
                              "loaded)"),
                          why, sizeof(why)),
                     NT_GPU_LINK_SKIP);
    assert_non_null(strstr(why, "GPUDirect RDMA unavailable on b: no CUDA driver (libcuda.so.1"));

    /* a short buffer is cut, not overrun */
    {
        char small[16];
        memset(small, 'x', sizeof(small));
        assert_int_equal(nt_gpu_link_decide(&(nt_gpu_end_t){"a", "p", 0, 1, 1, "x"},
                                            &(nt_gpu_end_t){"b", "p", 0, 1, 2, NULL}, small,
                                            sizeof(small)),
                         NT_GPU_LINK_SKIP);
        assert_int_equal(strlen(small), sizeof(small) - 1);
    }
    assert_string_equal(nt_gpu_link_string(NT_GPU_LINK_MEASURE), "measure");
    assert_string_equal(nt_gpu_link_string(NT_GPU_LINK_NONE), "none");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpu_for_nic), cmocka_unit_test(test_endpoints_and_ids),
        cmocka_unit_test(test_reg_path), cmocka_unit_test(test_decide_table)};
    return cmocka_run_group_tests_name("rdma_gpu", tests, NULL, NULL);
}
