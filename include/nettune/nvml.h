/* GPU inventory from NVML (libnvidia-ml.so.1), loaded with dlopen the first time it is needed,
 * through nettune's own declarations of the few calls used (as NCCL does: NVIDIA/nccl
 * v2.28.9-1 src/include/nvmlwrap.h:75 nvmlPciInfo_t, src/misc/nvmlwrap.cc:73-102 the symbols).
 * nettune needs no nvml.h and links no NVML library.
 *
 * GPUs are counted and named by NVML, in NVML's order, which is PCI bus order (`gpu<i>` in the
 * report = NVML index i), so CUDA_VISIBLE_DEVICES set by a prolog does not hide GPUs from the
 * count; CUDA devices are matched to NVML GPUs by PCI bus id (nt_pci_bus_id_equal).
 *
 * Errors: every call returns nt_status_t; the NVML error string of the last failed call of this
 * thread is in nt_nvml_last_error() ("nvmlDeviceGetPciInfo: GPU is lost"). Conversion:
 * NVML_SUCCESS -> NT_OK; NOT_SUPPORTED, FUNCTION_NOT_FOUND, DRIVER_NOT_LOADED,
 * LIBRARY_NOT_FOUND, NO_PERMISSION -> NT_ERR_UNSUPPORTED; INVALID_ARGUMENT -> NT_ERR_INVALID;
 * NOT_FOUND -> NT_ERR_NOT_FOUND; INSUFFICIENT_SIZE -> NT_ERR_NOMEM; TIMEOUT -> NT_ERR_TIMEOUT;
 * GPU_IS_LOST and every other error -> NT_ERR_SYSTEM. */
#ifndef NETTUNE_NVML_H
#define NETTUNE_NVML_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/status.h"

#define NT_NVML_MAX_LINKS 18 /* NVML_NVLINK_MAX_LINKS */
#define NT_NVML_MAX_GPUS 64

/* nvmlReturn_t values (NCCL src/include/nvmlwrap.h:52-72). */
#define NT_NVML_SUCCESS 0
#define NT_NVML_ERROR_UNINITIALIZED 1
#define NT_NVML_ERROR_INVALID_ARGUMENT 2
#define NT_NVML_ERROR_NOT_SUPPORTED 3
#define NT_NVML_ERROR_NO_PERMISSION 4
#define NT_NVML_ERROR_NOT_FOUND 6
#define NT_NVML_ERROR_INSUFFICIENT_SIZE 7
#define NT_NVML_ERROR_DRIVER_NOT_LOADED 9
#define NT_NVML_ERROR_TIMEOUT 10
#define NT_NVML_ERROR_LIBRARY_NOT_FOUND 12
#define NT_NVML_ERROR_FUNCTION_NOT_FOUND 13
#define NT_NVML_ERROR_GPU_IS_LOST 15
#define NT_NVML_ERROR_UNKNOWN 999

/* NVLink error counters read (nvmlNvLinkErrorCounter_t: REPLAY 0, RECOVERY 1, CRC_FLIT 2,
 * CRC_DATA 3). */
#define NT_NVLINK_COUNTERS 4
extern const char *const nt_nvlink_counter_names[NT_NVLINK_COUNTERS]; /* replay, recovery,
                                                                       * crc_flit, crc_data */

/* Remote end of an NVLink (nvmlIntNvLinkDeviceType_t). */
typedef enum nt_nvlink_remote {
    NT_NVLINK_REMOTE_GPU = 0,
    NT_NVLINK_REMOTE_IBMNPU = 1,
    NT_NVLINK_REMOTE_SWITCH = 2,
    NT_NVLINK_REMOTE_UNKNOWN = 255
} nt_nvlink_remote_t;

typedef struct nt_nvlink_info {
    int link;                  /* 0..NT_NVML_MAX_LINKS-1 */
    int active;                /* nvmlDeviceGetNvLinkState: 1 up, 0 down */
    int version;               /* nvmlDeviceGetNvLinkVersion (NVLink 1..5), 0 unknown */
    nt_nvlink_remote_t remote; /* peer kind; NT_NVLINK_REMOTE_UNKNOWN when NVML cannot say */
    char remote_bus_id[32];    /* the peer GPU's (or NVSwitch's) PCI bus id, "" unknown */
    int counters_ok;           /* the counters below were read */
    unsigned long long counters[NT_NVLINK_COUNTERS];
} nt_nvlink_info_t;

/* Fabric Manager state of a GPU on an NVSwitch system (nvmlGpuFabricState_t). */
typedef enum nt_fabric_state {
    NT_FABRIC_NOT_SUPPORTED = 0, /* no NVSwitch fabric */
    NT_FABRIC_NOT_STARTED = 1,
    NT_FABRIC_IN_PROGRESS = 2,
    NT_FABRIC_COMPLETED = 3,
    NT_FABRIC_UNKNOWN = -1 /* the call is absent (driver < R530) or failed */
} nt_fabric_state_t;

typedef struct nt_gpu_info {
    int index;                        /* NVML index = gpu<i> */
    char name[96];                    /* "NVIDIA H100 80GB HBM3" */
    char uuid[96];                    /* "GPU-..." */
    char bus_id[32];                  /* "0000:18:00.0" (lower case, 4-digit domain) */
    int numa_node;                    /* -1 unknown (the caller fills it from hwloc/sysfs) */
    unsigned long long memory_bytes;  /* 0 unknown */
    int cc_major, cc_minor;           /* 0.0 unknown */
    int mig;                          /* MIG mode: 1 enabled, 0 disabled, -1 not supported */
    int pcie_gen, pcie_width;         /* current (idle GPUs train down: judge under load) */
    int pcie_max_gen, pcie_max_width; /* the link's maximum (device and slot) */
    int nlinks;                       /* links NVML knows (state readable); 0 = no NVLink */
    nt_nvlink_info_t links[NT_NVML_MAX_LINKS];
    nt_fabric_state_t fabric_state;
    int fabric_status; /* nvmlReturn_t of the fabric registration when COMPLETED */
} nt_gpu_info_t;

/* nt_nvml_status - the nt_status_t of an nvmlReturn_t (the table in the header comment). */
nt_status_t nt_nvml_status(int r);

/* nt_nvml_load - dlopen NVML and call nvmlInit_v2, once per process (later calls return the
 * first result). lib NULL = "libnvidia-ml.so.1" (or $NETTUNE_TEST_LIBNVML, a test hook).
 * NT_ERR_UNSUPPORTED with why "no NVIDIA driver (libnvidia-ml.so.1 cannot be loaded)",
 * "NVML lacks nvmlXxx", "nvmlInit failed: <string>". */
nt_status_t nt_nvml_load(const char *lib, char *why, size_t whylen);
/* nt_nvml_reset - nvmlShutdown and forget the load (unit tests). */
void nt_nvml_reset(void);
/* nt_nvml_last_error - "<call>: <nvmlErrorString>" of this thread's last failure, or "". */
const char *nt_nvml_last_error(void);
/* nt_nvml_driver_version - nvmlSystemGetDriverVersion ("535.104.05"). */
nt_status_t nt_nvml_driver_version(char *buf, size_t len);

/* nt_nvml_gpu_count - GPUs NVML sees (nvmlDeviceGetCount_v2), at most NT_NVML_MAX_GPUS. */
nt_status_t nt_nvml_gpu_count(int *n);
/* nt_nvml_gpu_info - the inventory of GPU index (everything of nt_gpu_info_t but numa_node).
 * A fact NVML cannot give (NOT_SUPPORTED) stays unknown; NT_ERR_SYSTEM etc. only when the GPU
 * cannot be opened or named (its handle, name or PCI info fails: e.g. GPU_IS_LOST). */
nt_status_t nt_nvml_gpu_info(int index, nt_gpu_info_t *g);
/* nt_nvml_read_counters - read g->links[*].counters again (after the run). */
nt_status_t nt_nvml_read_counters(int index, nt_gpu_info_t *g);
/* nt_nvml_pcie_current - the current PCIe generation and width (read under load). */
nt_status_t nt_nvml_pcie_current(int index, int *gen, int *width);
/* nt_nvml_p2p_status - nvmlDeviceGetP2PStatus(a, b, NVML_P2P_CAPS_INDEX_READ): *ok = 1 when
 * NVML_P2P_STATUS_OK, else 0 with why ("chipset not supported", "disabled by regkey"...). */
nt_status_t nt_nvml_p2p_status(int a, int b, int *ok, char *why, size_t whylen);
/* nt_nvml_path - nvmlDeviceGetTopologyCommonAncestor of a and b as a path class: INTERNAL or
 * SINGLE -> "PIX", MULTIPLE -> "PXB", HOSTBRIDGE -> "PHB", NODE -> "NODE", SYSTEM -> "SYS". */
nt_status_t nt_nvml_path(int a, int b, char *buf, size_t len);

/* nt_pci_bus_id_equal - 1 when two PCI bus ids name the same function: case-insensitive, an
 * 8-digit NVML domain ("00000000:18:00.0") equals a 4-digit one ("0000:18:00.0"). */
int nt_pci_bus_id_equal(const char *a, const char *b);
/* nt_pci_bus_id_normalize - "dddd:bb:dd.f" in lower case (the 8-digit domain shortened). */
void nt_pci_bus_id_normalize(const char *in, char *out, size_t len);

/* nt_gpu_info_to_json - the facts of g into obj (a report "gpus" entry: keys index, uuid,
 * name, pci_bus_id, numa_node, memory_bytes, compute_capability "9.0", mig ("enabled",
 * "disabled", null), pcie {gen, width, max_gen, max_width}, nvlinks [{link, state "up|down",
 * version, remote "gpu|switch|npu|unknown", remote_pci_bus_id, counters {replay, recovery,
 * crc_flit, crc_data}}], fabric_manager "not_supported|not_started|in_progress|completed|
 * unknown"). Existing keys of obj are replaced. NT_ERR_NOMEM. */
nt_status_t nt_gpu_info_to_json(const nt_gpu_info_t *g, cJSON *obj);
/* nt_fabric_state_string - "not_supported", "not_started", "in_progress", "completed",
 * "unknown". */
const char *nt_fabric_state_string(nt_fabric_state_t s);

#endif
