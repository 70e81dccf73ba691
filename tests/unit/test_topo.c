/* Topology inventory on every hwloc export in tests/fixtures/hwloc-xml/ (copied from
 * tests/fixtures/hwloc-xml, see its README).
 *
 * Every expected value below was worked out by reading the XML file itself (object nesting,
 * pci_busid, pci_type "class [vendor:device]", osdev_type: 0 block, 1 GPU, 2 network,
 * 3 OpenFabrics, 5 coprocessor), not by running this code; the comment above each group says
 * how. Path classes: PIX = both devices at most one bridge below a common PCI bridge (one
 * switch), PXB = common ancestor is a bridge but more switches, PHB = common ancestor is the
 * host bridge (bridge_type="0-1"), NODE = different host bridges under one package/NUMA node,
 * SYS = different packages/NUMA nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nettune/topo.h"

#define XML(name) NT_TEST_FIXTURES "/hwloc-xml/" name

static nt_topo_t *load(const char *path)
{
    nt_topo_t *t = NULL;
    assert_int_equal(nt_topo_load(path, &t), NT_OK);
    assert_non_null(t);
    return t;
}

static void assert_path(const nt_topo_t *t, int gpu, const char *nic, nt_path_t want)
{
    int n = nt_topo_find_nic(t, nic);
    assert_true(n >= 0);
    if (nt_topo_path(t, gpu, n) != want)
        fail_msg("GPU %d (%s) x %s: got %s, want %s", gpu, t->gpus[gpu].pci_bus_id, nic,
                 nt_path_string(nt_topo_path(t, gpu, n)), nt_path_string(want));
}

static void assert_gpu_path(const nt_topo_t *t, int a, int b, nt_path_t want)
{
    if (nt_topo_gpu_path(t, a, b) != want)
        fail_msg("GPU %d (%s) x GPU %d (%s): got %s, want %s", a, t->gpus[a].pci_bus_id, b,
                 t->gpus[b].pci_bus_id, nt_path_string(nt_topo_gpu_path(t, a, b)),
                 nt_path_string(want));
    /* The relation is symmetric. */
    assert_int_equal(nt_topo_gpu_path(t, b, a), want);
}

/* hwloc 1.11.9 export (<topology> without version, DOCTYPE hwloc.dtd, NUMANode objects as
 * parents of Package and of the I/O subtrees, host bridges as type="Bridge" bridge_type="0-1"
 * with an os_index and no pci_busid). */
static void test_hwloc1_xeon_4xV100_2xmlx5(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("xeon-4xV100-2xmlx5-hwloc1.xml"));

    /* 2 Package, 2 NUMANode objects; grep -c 'type="Core"' = 40, 'type="PU"' = 80. */
    assert_int_equal(t->npackages, 2);
    assert_int_equal(t->nnuma, 2);
    assert_int_equal(t->ncores, 40);
    assert_int_equal(t->npus, 80);
    assert_string_equal(t->cpu_model, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz");
    assert_string_equal(t->hwloc_version, "1.11.9");

    /* GPUs: pci_type "0302 [10de:1db1]" at 5d:00.0 and 5e:00.0 inside NUMANode 0, 88:00.0 and
     * 89:00.0 inside NUMANode 1; the Matrox VGA 02:00.0 "0300 [102b:0522]" is not NVIDIA.
     * The file has no PCIDevice names and no CUDA/NVML osdevs, so the names are empty. */
    assert_int_equal(t->ngpus, 4);
    assert_string_equal(t->gpus[0].pci_bus_id, "0000:5d:00.0");
    assert_string_equal(t->gpus[1].pci_bus_id, "0000:5e:00.0");
    assert_string_equal(t->gpus[2].pci_bus_id, "0000:88:00.0");
    assert_string_equal(t->gpus[3].pci_bus_id, "0000:89:00.0");
    assert_int_equal(t->gpus[0].numa_node, 0);
    assert_int_equal(t->gpus[3].numa_node, 1);
    assert_int_equal(t->gpus[2].pci_device, 0x1db1);
    assert_string_equal(t->gpus[0].name, "");

    /* NICs: osdev_type=3 "mlx5_0" below 5f:00.0 "0207 [15b3:1013]" beside osdev_type=2 "ib0";
     * "mlx5_1" below 8a:00.0 with "ib1". */
    assert_int_equal(t->nnics, 2);
    assert_string_equal(t->nics[0].name, "mlx5_0");
    assert_string_equal(t->nics[1].name, "mlx5_1");
    assert_string_equal(t->nics[0].kind, "infiniband_or_roce");
    assert_string_equal(t->nics[0].pci_bus_id, "0000:5f:00.0");
    assert_int_equal(t->nics[0].nnetdevs, 1);
    assert_string_equal(t->nics[0].netdevs[0], "ib0");
    assert_string_equal(t->nics[1].netdevs[0], "ib1");
    assert_int_equal(t->nics[0].numa_node, 0);
    assert_int_equal(t->nics[1].numa_node, 1);

    /* 5d:00.0 sits below PLX port 5c:00.0, mlx5_0 (5f:00.0) below PLX port 5c:0c.0, both
     * ports below the PLX upstream port 5b:00.0: one switch -> PIX. mlx5_1 is in NUMANode 1
     * -> SYS. 88:00.0 (port 87:00.0) and 8a:00.0 (port 87:08.0) share switch 86:00.0 -> PIX. */
    assert_path(t, 0, "mlx5_0", NT_PATH_PIX);
    assert_path(t, 1, "mlx5_0", NT_PATH_PIX);
    assert_path(t, 0, "mlx5_1", NT_PATH_SYS);
    assert_path(t, 2, "mlx5_1", NT_PATH_PIX);
    assert_path(t, 3, "mlx5_0", NT_PATH_SYS);
    assert_gpu_path(t, 0, 1, NT_PATH_PIX);
    assert_gpu_path(t, 0, 2, NT_PATH_SYS);
    assert_int_equal(nt_topo_nearest_gpu(t, 1), 2);
    nt_topo_destroy(t);
}

static void test_xeon_2xP100_mlx5(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("xeon-2s-2xP100-mlx5-cuda-nvml.xml"));

    /* 2 Package, 2 NUMANode, 36 Core, 72 PU objects; CPUModel on both packages. */
    assert_int_equal(t->npackages, 2);
    assert_int_equal(t->nnuma, 2);
    assert_int_equal(t->ncores, 36);
    assert_int_equal(t->npus, 72);
    assert_string_equal(t->cpu_model, "Intel(R) Xeon(R) CPU E5-2695 v4 @ 2.10GHz");

    /* GPUs 04:00.0 and 07:00.0 "0302 [10de:15f8]" (their cuda0/cuda1 osdevs say GPUModel
     * "Tesla P100-PCIE-16GB"); the ASPEED VGA 0b:00.0 [1a03:2000] is not NVIDIA. Both in
     * Package 0 (NUMA 0). */
    assert_int_equal(t->ngpus, 2);
    assert_string_equal(t->gpus[0].pci_bus_id, "0000:04:00.0");
    assert_string_equal(t->gpus[1].pci_bus_id, "0000:07:00.0");
    assert_string_equal(t->gpus[0].name, "Tesla P100-PCIE-16GB");
    assert_int_equal(t->gpus[1].numa_node, 0);

    /* One HCA: mlx5_0 below 08:00.0 [15b3:1017] with the network osdev "hsi0". */
    assert_int_equal(t->nnics, 1);
    assert_string_equal(t->nics[0].name, "mlx5_0");
    assert_string_equal(t->nics[0].pci_bus_id, "0000:08:00.0");
    assert_string_equal(t->nics[0].netdevs[0], "hsi0");
    assert_int_equal(t->nics[0].numa_node, 0);

    /* PLX switch 02:00.0 has ports 03:04.0 (GPU 04:00.0), 03:10.0 (GPU 07:00.0) and 03:14.0
     * (mlx5_0 08:00.0): all pairs cross that one switch -> PIX. */
    assert_path(t, 0, "mlx5_0", NT_PATH_PIX);
    assert_path(t, 1, "mlx5_0", NT_PATH_PIX);
    assert_gpu_path(t, 0, 1, NT_PATH_PIX);
    assert_int_equal(nt_topo_nearest_gpu(t, 0), 0); /* tie: the lowest index */
    nt_topo_destroy(t);
}

static void test_xeon_3xM2070_mlx4(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("xeon-2s-3xM2070-mlx4-ib.xml"));

    /* 2 Package, 2 NUMANode, 12 Core, 24 PU objects; no CPUModel info in the file. */
    assert_int_equal(t->npackages, 2);
    assert_int_equal(t->nnuma, 2);
    assert_int_equal(t->ncores, 12);
    assert_int_equal(t->npus, 24);
    assert_string_equal(t->cpu_model, "");

    /* "0302 [10de:06d2]" at 06:00.0 (Package 0), 14:00.0 and 11:00.0 (Package 1, in that file
     * order): PCI bus order gives 06, 11, 14. The ATI ES1000 01:03.0 (0300, 1002) is not
     * NVIDIA. */
    assert_int_equal(t->ngpus, 3);
    assert_string_equal(t->gpus[0].pci_bus_id, "0000:06:00.0");
    assert_string_equal(t->gpus[1].pci_bus_id, "0000:11:00.0");
    assert_string_equal(t->gpus[2].pci_bus_id, "0000:14:00.0");
    assert_int_equal(t->gpus[0].numa_node, 0);
    assert_int_equal(t->gpus[1].numa_node, 1);

    /* mlx4_0 below 05:00.0 (class 0c06, InfiniBand) with two network osdevs eth2 and ib0. */
    assert_int_equal(t->nnics, 1);
    assert_string_equal(t->nics[0].name, "mlx4_0");
    assert_string_equal(t->nics[0].kind, "infiniband_or_roce");
    assert_int_equal(t->nics[0].nnetdevs, 2);
    assert_string_equal(t->nics[0].netdevs[0], "eth2");
    assert_string_equal(t->nics[0].netdevs[1], "ib0");

    /* GPU 06:00.0 is below root port 00:07.0, mlx4_0 below root port 00:05.0, both ports in
     * host bridge [00-0f] -> PHB. GPUs 11:00.0 (port 10:07.0) and 14:00.0 (port 10:03.0)
     * share host bridge [10-1f] of Package 1 -> PHB with each other, SYS to mlx4_0. */
    assert_path(t, 0, "mlx4_0", NT_PATH_PHB);
    assert_path(t, 1, "mlx4_0", NT_PATH_SYS);
    assert_path(t, 2, "mlx4_0", NT_PATH_SYS);
    assert_gpu_path(t, 1, 2, NT_PATH_PHB);
    assert_gpu_path(t, 0, 1, NT_PATH_SYS);
    nt_topo_destroy(t);
}

static void test_cloud_8xT4_efa(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("cloud-8xT4-cuda-nvml-noib.xml"));

    /* 2 Package, 2 NUMANode, 48 Core, 96 PU objects. */
    assert_int_equal(t->npackages, 2);
    assert_int_equal(t->nnuma, 2);
    assert_int_equal(t->ncores, 48);
    assert_int_equal(t->npus, 96);

    /* 8 x "0302 [10de:1eb8]": 18, 19, 35, 36 in Package 0, e7, e8, f4, f5 in Package 1,
     * GPUModel "Tesla T4". */
    assert_int_equal(t->ngpus, 8);
    assert_string_equal(t->gpus[0].pci_bus_id, "0000:18:00.0");
    assert_string_equal(t->gpus[4].pci_bus_id, "0000:e7:00.0");
    assert_string_equal(t->gpus[7].pci_bus_id, "0000:f5:00.0");
    assert_string_equal(t->gpus[7].name, "Tesla T4");
    assert_int_equal(t->gpus[3].numa_node, 0);
    assert_int_equal(t->gpus[4].numa_node, 1);

    /* The only OpenFabrics osdev is "rdmap197s0" below c5:00.0 [1d0f:efa0] (EFA); the ENA
     * eth0 is another PCI device (c6:00.0), so the EFA has no network interface. */
    assert_int_equal(t->nnics, 1);
    assert_string_equal(t->nics[0].name, "rdmap197s0");
    assert_string_equal(t->nics[0].kind, "efa");
    assert_string_equal(t->nics[0].pci_bus_id, "0000:c5:00.0");
    assert_int_equal(t->nics[0].nnetdevs, 0);
    assert_int_equal(t->nics[0].numa_node, 1);

    /* EFA in host bridge [c2-d4] of Package 1; GPU e7:00.0 in host bridge [e6-e8] of Package
     * 1 -> NODE; GPU 18:00.0 in Package 0 -> SYS. GPUs 18:00.0 and 19:00.0 sit below root
     * ports 17:00.0 and 17:02.0 of one host bridge [17-19] -> PHB; 35:00.0 is in another host
     * bridge of Package 0 -> NODE. */
    assert_path(t, 0, "rdmap197s0", NT_PATH_SYS);
    assert_path(t, 4, "rdmap197s0", NT_PATH_NODE);
    assert_path(t, 7, "rdmap197s0", NT_PATH_NODE);
    assert_gpu_path(t, 0, 1, NT_PATH_PHB);
    assert_gpu_path(t, 0, 2, NT_PATH_NODE);
    assert_gpu_path(t, 0, 4, NT_PATH_SYS);
    assert_int_equal(nt_topo_nearest_gpu(t, 0), 4);
    nt_topo_destroy(t);
}

/* POWER9: every PHB4 root complex is its own PCI domain (0000, 0002, 0003, 0004, 0005 on
 * Package 0; 0033, 0035 on Package 8), each a host bridge with the PHB's root port
 * "POWER9 Host Bridge (PHB4)" (a 0604 bridge, not a host bridge) below it. */
static void test_power9_4xV100_4xmlx5(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("power9-4xV100-4xmlx5-cuda-nvml.xml"));

    /* Packages os_index 0 and 8, NUMANodes 0 and 8; 40 Core, 160 PU objects (SMT4). */
    assert_int_equal(t->npackages, 2);
    assert_int_equal(t->nnuma, 2);
    assert_int_equal(t->numa[1].os_index, 8);
    assert_int_equal(t->ncores, 40);
    assert_int_equal(t->npus, 160);
    assert_string_equal(t->cpu_model, "POWER9, altivec supported");

    /* "0302 [10de:1db1]" at 0004:04:00.0, 0004:05:00.0 (Package 0) and 0035:03:00.0,
     * 0035:04:00.0 (Package 8); the ASPEED VGA 0002:02:00.0 is not NVIDIA. */
    assert_int_equal(t->ngpus, 4);
    assert_string_equal(t->gpus[0].pci_bus_id, "0004:04:00.0");
    assert_string_equal(t->gpus[2].pci_bus_id, "0035:03:00.0");
    assert_string_equal(t->gpus[0].name, "Tesla V100-SXM2-16GB");
    assert_int_equal(t->gpus[0].numa_node, 0);
    assert_int_equal(t->gpus[2].numa_node, 8);

    /* mlx5_0/1 on the two functions of 0003:01:00 (hsi0, hsi1), mlx5_2/3 on 0033:01:00. */
    assert_int_equal(t->nnics, 4);
    assert_string_equal(t->nics[0].name, "mlx5_0");
    assert_string_equal(t->nics[1].pci_bus_id, "0003:01:00.1");
    assert_string_equal(t->nics[3].name, "mlx5_3");
    assert_string_equal(t->nics[3].netdevs[0], "hsi3");
    assert_int_equal(t->nics[2].numa_node, 8);

    /* GPU 0004:04:00.0 and mlx5_0 0003:01:00.0 share no PCI ancestor (different domains,
     * different host bridges) but both hang below Package 0 -> NODE (not PHB); to mlx5_2 on
     * Package 8 -> SYS. GPU 0035:03:00.0 and mlx5_2 (0033) -> NODE. The two GPUs of a domain
     * are below PLX ports 0004:02:0a.0 / 0b.0 of switch 0004:01:00.0 -> PIX. */
    assert_path(t, 0, "mlx5_0", NT_PATH_NODE);
    assert_path(t, 1, "mlx5_1", NT_PATH_NODE);
    assert_path(t, 0, "mlx5_2", NT_PATH_SYS);
    assert_path(t, 2, "mlx5_2", NT_PATH_NODE);
    assert_path(t, 3, "mlx5_1", NT_PATH_SYS);
    assert_gpu_path(t, 0, 1, NT_PATH_PIX);
    assert_gpu_path(t, 2, 3, NT_PATH_PIX);
    assert_gpu_path(t, 1, 2, NT_PATH_SYS);
    nt_topo_destroy(t);
}

/* DGX-2: two levels of PLX switches per host bridge, NVML osdevs with osdev_type=5 (coproc)
 * from a development hwloc, NVSwitches as PCI devices of class 0680, no NICs. */
static void test_dgx2_16xV100(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("dgx2-16xV100-nvml.xml"));

    /* The export was restricted to 4 PUs: 2 Package, 2 NUMANode, 4 Core, 4 PU objects. */
    assert_int_equal(t->npackages, 2);
    assert_int_equal(t->nnuma, 2);
    assert_int_equal(t->ncores, 4);
    assert_int_equal(t->npus, 4);

    /* 16 x "0302 [10de:1db8]"; the NVSwitches "0680 [10de:1ac2]" and the one "0000
     * [0000:0000]" are not GPUs. GPUModel from the nvml osdevs. */
    assert_int_equal(t->ngpus, 16);
    assert_int_equal(t->nnics, 0);
    assert_string_equal(t->gpus[0].pci_bus_id, "0000:34:00.0");
    assert_string_equal(t->gpus[15].pci_bus_id, "0000:e7:00.0");
    assert_string_equal(t->gpus[5].name, "Tesla V100-SXM3-32GB-H");
    assert_int_equal(t->gpus[7].numa_node, 0);
    assert_int_equal(t->gpus[8].numa_node, 1);

    /* 34:00.0 and 36:00.0 are below ports 33:00.0 / 33:10.0 of inner switch 32:00.0 -> PIX.
     * 39:00.0 is below inner switch 37:00.0; 32:00.0 and 37:00.0 meet at the outer switch
     * 2c:00.0 -> PXB. 57:00.0 is in host bridge [4e-67] of Package 0 -> NODE; b7:00.0 in
     * Package 1 -> SYS. */
    assert_gpu_path(t, 0, 1, NT_PATH_PIX);
    assert_gpu_path(t, 0, 2, NT_PATH_PXB);
    assert_gpu_path(t, 1, 3, NT_PATH_PXB);
    assert_gpu_path(t, 0, 4, NT_PATH_NODE);
    assert_gpu_path(t, 0, 8, NT_PATH_SYS);
    assert_gpu_path(t, 14, 15, NT_PATH_PIX);
    assert_gpu_path(t, 3, 3, NT_PATH_PIX);
    assert_int_equal(nt_topo_path(t, 0, 0), NT_PATH_UNKNOWN); /* no NICs */
    nt_topo_destroy(t);
}

static void test_json(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("power9-4xV100-4xmlx5-cuda-nvml.xml"));
    cJSON *node = cJSON_CreateObject(), *a, *cpus, *e, *nic = cJSON_CreateObject();

    assert_int_equal(nt_topo_to_json(t, node), NT_OK);
    cpus = cJSON_GetObjectItem(node, "cpus");
    assert_string_equal(cJSON_GetObjectItem(cpus, "model")->valuestring,
                        "POWER9, altivec supported");
    assert_int_equal(cJSON_GetObjectItem(cpus, "pus")->valueint, 160);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(node, "numa_nodes")), 2);
    a = cJSON_GetObjectItem(node, "gpus");
    assert_int_equal(cJSON_GetArraySize(a), 4);
    assert_int_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 2), "numa_node")->valueint, 8);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 3), "pci_bus_id")->valuestring,
                        "0035:04:00.0");
    a = cJSON_GetObjectItem(node, "affinity");
    assert_int_equal(cJSON_GetArraySize(a), 16); /* 4 GPUs x 4 NICs */
    /* Row-major: entry 2 is GPU 0 x mlx5_2. */
    e = cJSON_GetArrayItem(a, 2);
    assert_int_equal(cJSON_GetObjectItem(e, "gpu")->valueint, 0);
    assert_string_equal(cJSON_GetObjectItem(e, "nic")->valuestring, "mlx5_2");
    assert_string_equal(cJSON_GetObjectItem(e, "path")->valuestring, "SYS");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "path")->valuestring, "NODE");

    assert_int_equal(nt_topo_nic_to_json(t, 2, nic), NT_OK);
    assert_string_equal(cJSON_GetObjectItem(nic, "pci_bus_id")->valuestring, "0033:01:00.0");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(nic, "netdevs"), 0)->valuestring,
                        "hsi2");
    assert_int_equal(nt_topo_nic_to_json(t, 4, nic), NT_ERR_INVALID);
    cJSON_Delete(nic);
    cJSON_Delete(node);

    /* A GPU without a name and a NUMA node written as null, not as a fake value. */
    node = cJSON_CreateObject();
    nt_topo_destroy(t);
    t = load(XML("xeon-2s-3xM2070-mlx4-ib.xml"));
    assert_int_equal(nt_topo_to_json(t, node), NT_OK);
    e = cJSON_GetArrayItem(cJSON_GetObjectItem(node, "gpus"), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "name")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(node, "cpus"), "model")));
    cJSON_Delete(node);
    nt_topo_destroy(t);
}

/* Port states recorded by hwloc's Linux backend (info "PortNState", ibv_port_state numbers):
 * read off the XML files. xeon-4xV100: mlx5_0 and mlx5_1 each have Port1State 4 (ACTIVE);
 * cloud-8xT4: the EFA device rdmap197s0 has Port1State 4; xeon-3xM2070 (mlx4) has none. */
static void test_port_states(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("xeon-4xV100-2xmlx5-hwloc1.xml"));
    assert_int_equal(t->nnics, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(t->nics[i].nports, 1);
        assert_int_equal(t->nics[i].port_state[0], 4);
    }
    nt_topo_destroy(t);
    t = load(XML("cloud-8xT4-cuda-nvml-noib.xml"));
    assert_int_equal(t->nics[0].nports, 1);
    assert_int_equal(t->nics[0].port_state[0], 4);
    nt_topo_destroy(t);
    t = load(XML("xeon-2s-3xM2070-mlx4-ib.xml"));
    assert_int_equal(t->nics[0].nports, 0);
    nt_topo_destroy(t);
}

static void test_lookups(void **state)
{
    (void)state;
    nt_topo_t *t = load(XML("xeon-4xV100-2xmlx5-hwloc1.xml"));

    assert_int_equal(nt_topo_find_nic(t, "mlx5_1"), 1);
    assert_int_equal(nt_topo_find_nic(t, "mlx5_9"), -1);
    assert_int_equal(nt_topo_find_gpu(t, "0000:88:00.0"), 2);
    assert_int_equal(nt_topo_find_gpu(t, "0000:5E:00.0"), 1);
    assert_int_equal(nt_topo_find_gpu(t, "0000:00:00.0"), -1);
    assert_int_equal(nt_topo_path(t, 4, 0), NT_PATH_UNKNOWN);
    assert_int_equal(nt_topo_path(t, 0, -1), NT_PATH_UNKNOWN);
    assert_int_equal(nt_topo_gpu_path(t, 0, 4), NT_PATH_UNKNOWN);
    assert_int_equal(nt_topo_nearest_gpu(t, 2), -1);
    assert_string_equal(nt_path_string(NT_PATH_PIX), "PIX");
    assert_string_equal(nt_path_string(NT_PATH_PXB), "PXB");
    assert_string_equal(nt_path_string(NT_PATH_PHB), "PHB");
    assert_string_equal(nt_path_string(NT_PATH_NODE), "NODE");
    assert_string_equal(nt_path_string(NT_PATH_SYS), "SYS");
    assert_string_equal(nt_path_string(NT_PATH_UNKNOWN), "unknown");
    nt_topo_destroy(t);
}

static void test_errors(void **state)
{
    (void)state;
    nt_topo_t *t = (nt_topo_t *)0x1;
    char path[] = "/tmp/nt-topo-notxml-XXXXXX";
    int fd;

    assert_int_equal(nt_topo_load(XML("no-such-file.xml"), &t), NT_ERR_NOT_FOUND);
    assert_null(t);

    /* An NCCL graph file is XML, but not an hwloc export. */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, "<graphs version=\"1\"><graph id=\"0\"/></graphs>\n", 45) == 45);
    close(fd);
    t = (nt_topo_t *)0x1;
    assert_int_equal(nt_topo_load(path, &t), NT_ERR_PARSE);
    assert_null(t);
    unlink(path);
    nt_topo_destroy(NULL);
}

/* The live machine: whatever it has, the counts are sane and every path is a known class. */
static void test_live(void **state)
{
    (void)state;
    nt_topo_t *t = load(NULL);
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    assert_string_equal(t->source, "live");
    assert_true(t->npus >= 1);
    assert_true(t->ncores >= 1 && t->ncores <= t->npus);
    assert_true(t->nnuma >= 1);
    assert_true(t->npackages >= 1);
    assert_true(online < 1 || t->npus <= online);
    assert_true(t->hwloc_version[0] != '\0');
    for (int g = 0; g < t->ngpus; g++)
        for (int n = 0; n < t->nnics; n++)
            assert_true(nt_topo_path(t, g, n) < NT_PATH_UNKNOWN);
    print_message("live: %d packages, %d NUMA, %d cores, %d PUs, %d GPUs, %d RDMA NICs\n",
                  t->npackages, t->nnuma, t->ncores, t->npus, t->ngpus, t->nnics);
    nt_topo_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hwloc1_xeon_4xV100_2xmlx5),
        cmocka_unit_test(test_xeon_2xP100_mlx5),
        cmocka_unit_test(test_xeon_3xM2070_mlx4),
        cmocka_unit_test(test_cloud_8xT4_efa),
        cmocka_unit_test(test_power9_4xV100_4xmlx5),
        cmocka_unit_test(test_dgx2_16xV100),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_port_states),
        cmocka_unit_test(test_lookups),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_live),
    };
    return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
