/* Node topology inventory with hwloc: packages, NUMA nodes, cores, NVIDIA GPUs, RDMA NICs,
 * and the GPU x NIC path class with the meaning of `nvidia-smi topo -m`:
 *   PIX  at most one PCIe bridge between them
 *   PXB  several PCIe bridges, no host bridge
 *   PHB  through a PCIe host bridge (same root complex / CPU)
 *   NODE across host bridges within one NUMA node
 *   SYS  across NUMA nodes (the CPU interconnect: QPI/UPI, SMP, xGMI) */
#ifndef NETTUNE_TOPO_H
#define NETTUNE_TOPO_H

#include <cjson/cJSON.h>

#include "nettune/status.h"

typedef enum nt_path {
    NT_PATH_PIX = 0,
    NT_PATH_PXB,
    NT_PATH_PHB,
    NT_PATH_NODE,
    NT_PATH_SYS,
    NT_PATH_UNKNOWN
} nt_path_t;

typedef struct nt_topo_gpu {
    int index;           /* 0.. in PCI bus order (the order CUDA_DEVICE_ORDER=PCI_BUS_ID uses) */
    char name[128];      /* model from hwloc (GPUModel info / PCI device name), may be "" */
    char pci_bus_id[16]; /* "0000:18:00.0" */
    int numa_node;       /* OS index, -1 unknown */
    unsigned pci_device; /* PCI device id (0x1db1) */
    double link_GBps;    /* hwloc's PCI link speed (GB/s, pci_link_speed), 0 unknown: only the
                          * speed, so never a generation or width (15.75 is Gen3 x16 and Gen4 x8) */
} nt_topo_gpu_t;

typedef struct nt_topo_nic {
    char name[32]; /* OpenFabrics device: "mlx5_0", "rdmap197s0" */
    char kind[24]; /* "infiniband_or_roce" (Mellanox 0x15b3), "efa" (Amazon 0x1d0f),
                    * "other" */
    char pci_bus_id[16];
    int numa_node;
    char netdevs[4][32]; /* network interfaces on the same PCI device: "ib0", "hsi0" */
    int nnetdevs;
    int nports;        /* ports with a PortNState info of hwloc (0 = not recorded) */
    int port_state[8]; /* ibv_port_state of port i+1 as hwloc recorded it: 1 DOWN, 2 INIT,
                        * 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER; 0 unknown */
} nt_topo_nic_t;

/* One NUMA node (added for the report's "numa_nodes"). */
typedef struct nt_topo_numa {
    int os_index;                    /* the OS index ("node3" in /sys/devices/system/node) */
    unsigned long long memory_bytes; /* local memory in bytes, 0 = unknown */
    int ncores, npus;                /* cores and PUs whose locality is this node */
} nt_topo_numa_t;

typedef struct nt_topo {
    char source[256];       /* "live" or the XML file path */
    char hwloc_version[32]; /* the hwloc release that discovered the topology (root info
                             * "hwlocVersion": this library when live, the exporter for XML);
                             * "" when the file does not say (hwloc 1.x exports) */
    char cpu_model[128];
    int npackages, nnuma, ncores, npus;
    nt_topo_numa_t *numa; /* nnuma entries, in OS index order */
    nt_topo_gpu_t *gpus;
    int ngpus;
    nt_topo_nic_t *nics;
    int nnics;
    nt_path_t *paths;     /* ngpus x nnics, row-major: paths[g * nnics + n] */
    nt_path_t *gpu_paths; /* ngpus x ngpus */
} nt_topo_t;

/* nt_topo_load - inventory of the live machine (xml_path NULL) or of an hwloc XML export
 * (hwloc 1.x and 2.x formats), with I/O devices. NT_ERR_NOT_FOUND / NT_ERR_PARSE naming the
 * file when it cannot be loaded, NT_ERR_NOMEM. */
nt_status_t nt_topo_load(const char *xml_path, nt_topo_t **out);
/* nt_topo_destroy - free an inventory of nt_topo_load (NULL is fine). */
void nt_topo_destroy(nt_topo_t *t);

/* nt_topo_path - path class between GPU g and NIC n (indices), NT_PATH_UNKNOWN if out of range. */
nt_path_t nt_topo_path(const nt_topo_t *t, int gpu, int nic);
/* nt_topo_gpu_path - path class between GPUs a and b (indices, same classes as above);
 * NT_PATH_PIX when a == b (the GPU itself, nvidia-smi's "X"), NT_PATH_UNKNOWN if out of range.
 * NVLink is not visible to hwloc: this is the PCIe path only. */
nt_path_t nt_topo_gpu_path(const nt_topo_t *t, int a, int b);
/* nt_topo_find_gpu - index of the GPU at pci_bus_id ("0000:18:00.0", any case), -1. */
int nt_topo_find_gpu(const nt_topo_t *t, const char *pci_bus_id);
/* nt_topo_nearest_gpu - the GPU with the best path class to NIC n (lowest index on ties), -1. */
int nt_topo_nearest_gpu(const nt_topo_t *t, int nic);
/* nt_topo_find_nic - index of the NIC named name, -1. */
int nt_topo_find_nic(const nt_topo_t *t, const char *name);
/* nt_path_string - "PIX".."SYS", "unknown". */
const char *nt_path_string(nt_path_t p);

/* nt_topo_to_json - add the report's node keys "cpus", "numa_nodes", "gpus" (index, name,
 * pci_bus_id, numa_node; from an hwloc XML also pcie.link_GBps) and "affinity" ([{gpu, nic,
 * path}]) to node. */
nt_status_t nt_topo_to_json(const nt_topo_t *t, cJSON *node);

/* nt_topo_nic_to_json - add the inventory facts of NIC n to obj (a report "nics" entry that
 * the RDMA probe completes with port, state and rate): "name", "kind", "pci_bus_id",
 * "numa_node" (null when unknown) and "netdevs" ([names]). NT_ERR_INVALID when n is out of
 * range, NT_ERR_NOMEM. */
nt_status_t nt_topo_nic_to_json(const nt_topo_t *t, int n, cJSON *obj);

#endif
