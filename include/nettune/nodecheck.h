/* Node checks before the job: the node's configuration and health as NCCL jobs need them, read
 * without traffic and without GPU memory (docs/node-checks.md). Each area has a reader (facts
 * from sysfs/procfs through NETTUNE_SYSFS_ROOT, getrlimit, statvfs or NVML) and pure rules
 * (facts -> one nt_nodecheck_t), so the rules are tested on captured facts:
 *   lib/node/pcie_acs.c  ACS on the bridges between a GPU and its NIC, IOMMU mode, AER counters;
 *   lib/node/limits.c    RLIMIT_MEMLOCK, /dev/shm against NCCL's shm transport buffers;
 *   lib/node/modules.c   peer-memory modules against what the NCCL found looks for, nvidia_fs;
 *   lib/node/gpu_health.c  ECC, row remapping, clock slowdowns, persistence, reset (NVML);
 *   lib/node/xid.c       Xid events of the kernel log against NVIDIA's Xid catalogue;
 *   lib/node/opfiles.c   the same facts from operators' files (ulimit -a, df, lsmod,
 *                        nvidia-smi -q, lspci -vvv) for the doctor.
 * Each verdict names its row of include/nettune/checks.def by code. Unknown facts give
 * NT_NOT_JUDGED with the reason in message, never a failure. */
#ifndef NETTUNE_NODECHECK_H
#define NETTUNE_NODECHECK_H

#include <stddef.h>

#include "nettune/checks.h"
#include "nettune/report.h"
#include "nettune/status.h"

/* One verdict of one node check on one target. */
typedef struct nt_nodecheck {
    const char *check;     /* the check's name in reports ("pcie_acs"); the row's check */
    const char *code;      /* the row of checks.def ("NT-PCIE-005"); the check's first row when
                            * the verdict is pass or not_judged */
    nt_verdict_t verdict;  /* NT_PASS, NT_WARN, NT_FAIL or NT_NOT_JUDGED */
    char target[64];       /* what was judged: "0000:03:08.0", "gpu0", "/dev/shm", "node" */
    char observed[128];    /* the fact as read ("ACSCtl 0x001d", "65536 KiB") */
    char expected[128];    /* what passes ("ReqRedir- CmpltRedir-", "unlimited") */
    char message[256];     /* one line: what it means and why; the reason when not judged */
} nt_nodecheck_t;

/* ---- PCIe (lib/node/pcie_acs.c) ---- */

/* ACS control of a PCI function, from its config space
 * (/sys/bus/pci/devices/<bdf>/config, Documentation/ABI/testing/sysfs-bus-pci: "config").
 * The kernel gives non-root readers the first 64 bytes only (drivers/pci/pci-sysfs.c
 * pci_read_config), and the ACS capability is in the extended space from 0x100. */
typedef struct nt_acs {
    char bdf[16];    /* "0000:03:08.0" */
    int readable;    /* 1: the extended config space was read (4096 bytes) */
    int present;     /* 1: an ACS extended capability (ID 0x000d) was found */
    unsigned offset; /* its offset in config space (0x2a0); its control word is at +6 */
    unsigned ctl;    /* ACS control register (PCI_ACS_CTRL): bit 0 SrcValid, 1 TransBlk,
                      * 2 ReqRedir, 3 CmpltRedir, 4 UpstreamFwd, 5 EgressCtrl, 6 DirectTrans */
} nt_acs_t;

#define NT_ACS_REQ_REDIR 0x0004u   /* PCI_ACS_RR, include/uapi/linux/pci_regs.h */
#define NT_ACS_CMPLT_REDIR 0x0008u /* PCI_ACS_CR */

/* nt_acs_parse - the ACS facts of a config space image (len bytes; len <= 256 = not readable):
 * walks the extended capability list from 0x100 (PCIe Base Spec 7.6.3 header: ID bits 15:0,
 * next offset bits 31:20). bdf is copied into out. Pure. */
void nt_acs_parse(const char *bdf, const unsigned char *cfg, size_t len, nt_acs_t *out);
/* nt_acs_read - nt_acs_parse of root+/sys/bus/pci/devices/<bdf>/config. NT_ERR_NOT_FOUND when
 * the device is absent; a short read is not an error (readable = 0). */
nt_status_t nt_acs_read(const char *bdf, nt_acs_t *out);
/* nt_acs_judge - "pcie_acs": fail (NT-PCIE-005) when ReqRedir or CmpltRedir is set: P2P
 * requests between a GPU and its NIC are redirected up to the root complex, which gives
 * hangs, completion errors and low bandwidth (NCCL user guide, Troubleshooting, "PCI Access
 * Control Services (ACS)"); pass when clear or when the bridge has no ACS capability;
 * not_judged without the extended config space ("needs root"). */
void nt_acs_judge(const nt_acs_t *a, nt_nodecheck_t *out);

/* nt_pcie_bridges_between - the PCI bridges a transfer between functions a and b crosses: the
 * BDFs in the resolved root+/sys/bus/pci/devices/<x> paths (the kernel's device hierarchy)
 * from their deepest common bridge down, a and b excluded; when they share none (different
 * root ports), every bridge on both paths. Up to max into out (16 bytes each); *n the count.
 * NT_ERR_NOT_FOUND when either device is absent. */
nt_status_t nt_pcie_bridges_between(const char *a, const char *b, char (*out)[16], size_t max,
                                    size_t *n);

/* The IOMMU as the kernel set it up for one device. */
typedef struct nt_iommu {
    char bdf[16];
    int groups;          /* entries of /sys/kernel/iommu_groups; 0 = IOMMU off; -1 unknown */
    char type[16];       /* /sys/bus/pci/devices/<bdf>/iommu_group/type (Linux >= 5.11,
                          * Documentation/ABI/testing/sysfs-kernel-iommu_groups): "identity",
                          * "DMA", "DMA-FQ", "unmanaged", "blocked"; "" when unreadable */
    int cmdline_pt;      /* /proc/cmdline has iommu=pt or iommu.passthrough=1 */
    int cmdline_on;      /* /proc/cmdline has intel_iommu=on, amd_iommu=on or
                          * iommu.passthrough=0 (without pt) */
} nt_iommu_t;

/* nt_iommu_parse_cmdline - set cmdline_pt and cmdline_on from a /proc/cmdline line
 * (Documentation/admin-guide/kernel-parameters.txt: iommu=pt, iommu.passthrough=,
 * intel_iommu=, amd_iommu=). Pure. */
void nt_iommu_parse_cmdline(const char *cmdline, nt_iommu_t *out);
/* nt_iommu_read - the IOMMU facts for bdf through the sysfs root. Never fails: what cannot be
 * read stays unknown. */
nt_status_t nt_iommu_read(const char *bdf, nt_iommu_t *out);
/* nt_iommu_judge - "iommu": warn (NT-PCIE-006) when the device's DMA is translated (group
 * type DMA or DMA-FQ, or intel/amd_iommu=on or iommu.passthrough=0 without passthrough when the
 * type is unreadable):
 * GPUDirect P2P and RDMA then go through the IOMMU (NCCL user guide, Troubleshooting, "IOMMU"
 * and "PCI Access Control Services"); pass for identity, unmanaged (a VM's passthrough) or no
 * IOMMU; not_judged when nothing says. */
void nt_iommu_judge(const nt_iommu_t *m, nt_nodecheck_t *out);

/* AER counters of a device since boot (Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats:
 * aer_dev_correctable, aer_dev_fatal, aer_dev_nonfatal; their TOTAL_ERR_* lines). */
typedef struct nt_aer {
    char bdf[16];
    int present; /* the three files were read */
    unsigned long long correctable, fatal, nonfatal;
} nt_aer_t;

/* nt_aer_parse_total - the TOTAL_ERR_COR / TOTAL_ERR_FATAL / TOTAL_ERR_NONFATAL value of an
 * aer_dev_* file's text; NT_ERR_PARSE when there is no TOTAL_ERR_ line. Pure. */
nt_status_t nt_aer_parse_total(const char *text, unsigned long long *out);
/* nt_aer_read - the three counters of bdf through the sysfs root (present = 0 when a file is
 * missing: no CONFIG_PCIEAER, or a device without AER). */
nt_status_t nt_aer_read(const char *bdf, nt_aer_t *out);
/* nt_aer_judge - "pcie_aer": fail (NT-PCIE-007) on any fatal or non-fatal (uncorrectable)
 * error since boot; warn (NT-PCIE-008) on correctable ones; not_judged without counters. */
void nt_aer_judge(const nt_aer_t *a, nt_nodecheck_t *out);

/* ---- limits and memory (lib/node/limits.c) ---- */

typedef struct nt_memlock {
    int known;                          /* getrlimit worked */
    int unlimited;                      /* the soft limit is RLIM_INFINITY */
    unsigned long long soft_bytes;      /* the soft limit (what ibv_reg_mr is held to) */
    unsigned long long mem_total_bytes; /* /proc/meminfo MemTotal; 0 unknown */
    int slurm;                          /* SLURM_JOB_ID is set: the step's limit is ours */
} nt_memlock_t;

/* The largest limit ibv_reg_mr was seen failing under (the doctor's cause NT-CFG-121: Docker's
 * 64 KiB, systemd's and Slurm's 8 MiB; NVIDIA/nccl#1173, aws/aws-ofi-nccl#56): a limit at or
 * below it fails even where MemTotal is unknown (an operator's `ulimit -a`). */
#define NT_MEMLOCK_SEEN_FAILING (8ull << 20)

/* nt_memlock_read - getrlimit(RLIMIT_MEMLOCK) of this process (under Slurm, the step's own
 * limit: slurmd sets it from PropagateResourceLimits before exec), MemTotal through the root. */
nt_status_t nt_memlock_read(nt_memlock_t *out);
/* nt_memlock_judge - "memlock": pass when unlimited or at least MemTotal; fail (NT-CFG-001)
 * below it: ibv_reg_mr pins host memory against RLIMIT_MEMLOCK (man 3 ibv_reg_mr, rdma-core
 * libibverbs/man/ibv_reg_mr.3: ENOMEM) and NCCL registers its host buffers; with MemTotal
 * unknown, fail at or below NT_MEMLOCK_SEEN_FAILING, else not_judged; not_judged when the
 * limit is unknown. */
void nt_memlock_judge(const nt_memlock_t *m, nt_nodecheck_t *out);

typedef struct nt_shm {
    int known;                    /* statvfs worked */
    unsigned long long size_bytes; /* f_blocks x f_frsize */
    unsigned long long free_bytes; /* f_bavail x f_frsize */
    int container;                /* /.dockerenv or /run/.containerenv exists under the root */
    int gpus;                     /* GPUs of this node */
} nt_shm_t;

/* NCCL's shm transport: one connection's buffers are the sum of the three protocols' buffer
 * sizes (NVIDIA/nccl v2.28.9-1 src/transport/shm.cc:113), by default
 * LL 8 x 512 x 8 x 16 B + LL128 120 x 640 x 8 x 8 B + SIMPLE 4 MiB (src/init.cc:697-699,
 * src/include/device.h:24,92-93,109-110) = 9633792 B, in /dev/shm/nccl-* files
 * (src/transport/shm.cc:547-552). */
#define NT_NCCL_SHM_CONN_BYTES 9633792ull
/* Channels counted in the need: a ring's minimum (NCCL_MIN_NCHANNELS' default lower bound, 2
 * rings on every topology NCCL builds). */
#define NT_NCCL_SHM_MIN_CHANNELS 2

/* nt_shm_need - the bytes NCCL's shm transport needs on a node of gpus GPUs, a lower bound: one
 * ring's gpus connections on NT_NCCL_SHM_MIN_CHANNELS channels (0 for 0 or 1 GPU). */
unsigned long long nt_shm_need(int gpus);
/* nt_shm_read - statvfs of root+/dev/shm and the container markers; gpus copied in. */
nt_status_t nt_shm_read(int gpus, nt_shm_t *out);
/* nt_shm_judge - "dev_shm": fail (NT-CFG-002) when /dev/shm is smaller than nt_shm_need (NCCL
 * fails in ncclShmOpen, or the job dies with SIGBUS: Docker's default is 64 MB); warn
 * (NT-CFG-003) when its free space is; the message names --ipc=host / --shm-size inside a
 * container; not_judged when statvfs failed. */
void nt_shm_judge(const nt_shm_t *s, nt_nodecheck_t *out);

/* ---- modules (lib/node/modules.c) ---- */

typedef struct nt_peermem {
    int nccl_code;       /* NCCL version code (21903 for 2.19.3), 0 unknown */
    int nv_mem;          /* /sys/kernel/mm/memory_peers/nv_mem/version exists */
    int nv_mem_nc;       /* /sys/kernel/mm/memory_peers/nv_mem_nc/version */
    int nvidia_peermem_peers; /* /sys/kernel/mm/memory_peers/nvidia-peermem/version */
    int nvidia_peermem;  /* /sys/module/nvidia_peermem/version */
    int nv_peer_mem;     /* /sys/module/nv_peer_mem */
    int nvidia_fs;       /* /sys/module/nvidia_fs (GPUDirect Storage) */
    int peers_unknown;   /* 1: the memory_peers files were not read (facts from lsmod):
                          * memory_peers/nvidia-peermem may exist where nvidia_peermem is loaded */
    /* dma-buf, GPUDirect RDMA without a peer-memory module: */
    int kernel_major, kernel_minor; /* /proc/sys/kernel/osrelease; 0.0 unknown */
    int nvidia_open;     /* /proc/driver/nvidia/version names the "Open Kernel Module": 1,
                          * the proprietary one: 0; no file: -1 */
} nt_peermem_t;

/* The first NCCL with dma-buf registration (NCCL_DMABUF_ENABLE, dmaBufSupported: NVIDIA/nccl
 * v2.13.4-1 src/init.cc:272-285; v2.28.9-1 src/init.cc:352-365) and the first Linux whose RDMA
 * core imports dma-buf memory (ibv_reg_dmabuf_mr: Linux 5.12, "RDMA/umem: Support importing
 * dma-buf file descriptors"). */
#define NT_NCCL_DMABUF_FIRST 21304
#define NT_DMABUF_KERNEL_MAJOR 5
#define NT_DMABUF_KERNEL_MINOR 12

/* nt_dmabuf_possible - 1 when p's facts allow NCCL's dma-buf path: NCCL >= 2.13.4, kernel >=
 * 5.12 and NVIDIA's open kernel module; 0 when one is known to miss; -1 when one is unknown.
 * Whether the GPU says CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED needs CUDA and is not read. */
int nt_dmabuf_possible(const nt_peermem_t *p);
/* nt_dmabuf_judge - "dmabuf" (NT-CFG-007, information): pass, observed the three facts. */
void nt_dmabuf_judge(const nt_peermem_t *p, nt_nodecheck_t *out);

/* nt_peermem_read - the module facts through the sysfs root; nccl_code copied in. */
nt_status_t nt_peermem_read(int nccl_code, nt_peermem_t *out);
/* nt_peermem_looks_for - the files NCCL of version code looks for to enable GPUDirect RDMA
 * (the table in lib/node/modules.c, each row cited), as a ", "-joined list into buf; returns
 * the number of files, 0 when the version precedes the table (2.12.7). */
int nt_peermem_looks_for(int nccl_code, char *buf, size_t len);
/* nt_peermem_judge - "peer_memory": pass when a file this NCCL looks for exists; fail
 * (NT-CFG-004) when a peer-memory module is loaded but none of those files exists (NCCL runs
 * without GPUDirect RDMA); with no peer-memory module loaded, pass when nt_dmabuf_possible
 * (GPUDirect RDMA through dma-buf), else warn (NT-CFG-005); not_judged without an NCCL
 * version, or when the answer hangs on memory_peers/nvidia-peermem and peers_unknown. */
void nt_peermem_judge(const nt_peermem_t *p, nt_nodecheck_t *out);
/* nt_nvidia_fs_judge - "nvidia_fs" (NT-CFG-006, information): pass, observed "loaded" or
 * "not loaded". */
void nt_nvidia_fs_judge(const nt_peermem_t *p, nt_nodecheck_t *out);

/* ---- GPU health through NVML (lib/node/gpu_health.c, read by lib/node/nvml.c) ---- */

/* nvmlClocksEventReasons bits that mean the GPU is held down by heat or power (NVML API,
 * nvmlClocksEventReasons: HwSlowdown 0x8, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40,
 * HwPowerBrakeSlowdown 0x80). Idle, application clocks and SW power cap are not faults. */
#define NT_THROTTLE_HW_SLOWDOWN 0x8ull
#define NT_THROTTLE_SW_THERMAL 0x20ull
#define NT_THROTTLE_HW_THERMAL 0x40ull
#define NT_THROTTLE_HW_POWER_BRAKE 0x80ull
#define NT_THROTTLE_FAULTS                                                                         \
    (NT_THROTTLE_HW_SLOWDOWN | NT_THROTTLE_SW_THERMAL | NT_THROTTLE_HW_THERMAL |                  \
     NT_THROTTLE_HW_POWER_BRAKE)

/* Each fact has a _ok flag: 0 = NVML could not give it (the symbol is absent or the call
 * failed): that rule is not judged. */
typedef struct nt_gpu_health {
    int index;
    int ecc_ok;
    unsigned long long ecc_uncorr_volatile;  /* nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE) */
    unsigned long long ecc_uncorr_aggregate; /* (UNCORRECTED, AGGREGATE) */
    int remap_ok;
    unsigned remap_pending, remap_failed;    /* nvmlDeviceGetRemappedRows isPending, failureOccurred */
    unsigned remap_uncorr_rows;
    int throttle_ok;
    unsigned long long throttle;             /* nvmlDeviceGetCurrentClocksThrottleReasons */
    int persistence_ok;
    int persistence;                         /* nvmlDeviceGetPersistenceMode: 1 enabled */
    int reset_ok;
    unsigned reset_required;                 /* nvmlDeviceGetFieldValues NVML_FI_DEV_RESET_STATUS */
    int retired_ok;
    int retired_pending;                     /* nvmlDeviceGetRetiredPagesPendingStatus: pages
                                              * retired at the next driver reload (before
                                              * Ampere; NOT_SUPPORTED on row-remapping GPUs) */
    const char *source; /* where the facts came from, for a not-judged reason: NULL for NVML,
                         * "nvidia-smi -q" for an operator's file (lib/node/opfiles.c) */
} nt_gpu_health_t;

/* nt_nvml_health - the health facts of GPU index (lib/node/nvml.c; the NVML must be loaded). A
 * call that fails leaves its fact unknown; NT_ERR_* only when the GPU cannot be opened. */
nt_status_t nt_nvml_health(int index, nt_gpu_health_t *h);

/* The GPU rules, each into one nt_nodecheck_t for target "gpu<index>":
 * nt_gpu_ecc_judge - "gpu_ecc": fail (NT-GPU-012) on uncorrectable errors since the driver
 *   loaded (volatile); warn (NT-GPU-013) on uncorrectable errors in the lifetime only;
 * nt_gpu_remap_judge - "gpu_row_remap": fail (NT-GPU-015) when remapping failed; warn
 *   (NT-GPU-014) when a remap is pending (applied at the next reset); NVIDIA's A100/H100 memory
 *   error management doc (row remapping);
 * nt_gpu_throttle_judge - "gpu_throttle": warn (NT-GPU-016) when a reason of
 *   NT_THROTTLE_FAULTS is active;
 * nt_gpu_persistence_judge - "gpu_persistence": warn (NT-GPU-017) when persistence mode is off
 *   (the driver tears the GPU state down between jobs, and the next job's init pays for it);
 * nt_gpu_reset_judge - "gpu_reset": fail (NT-GPU-018) when the driver says a reset is required;
 * nt_gpu_retired_judge - "gpu_retired_pages": warn (NT-GPU-019) when page retirement is
 *   pending (GPUs before Ampere); not judged where NVML does not support it (Ampere and later
 *   remap rows instead: gpu_row_remap). */
void nt_gpu_ecc_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out);
void nt_gpu_remap_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out);
void nt_gpu_throttle_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out);
void nt_gpu_persistence_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out);
void nt_gpu_reset_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out);
void nt_gpu_retired_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out);
/* nt_gpu_retired_applies - 0 when the GPU remaps rows and gives no page retirement status
 * (Ampere and later: the retired-pages rule does not apply and is left out), else 1. */
int nt_gpu_retired_applies(const nt_gpu_health_t *h);

/* ---- Xid events in the kernel log (lib/node/xid.c) ---- */

/* What NVIDIA's Xid catalogue tells an operator to do about one Xid ("Analyzing Xid Errors
 * with the Xid Catalog", docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html, its
 * "Resolution Bucket (Immediate Action)" column): NT_CAT_DRAIN (RESTART_BM, CHECK_MECHANICALS,
 * a GPU out of spare rows), NT_CAT_RESET (RESET_GPU), NT_CAT_MONITOR (RESTART_APP, IGNORE:
 * the application's fault or a corrected event; the GPU is fine). */
typedef struct nt_xid_row {
    int xid;
    nt_category_t category;
    const char *meaning; /* one phrase, what the driver reported and what it means */
} nt_xid_row_t;

/* nt_xid_lookup - the catalogue's row of xid (the table in lib/node/xid.c, the one Xid table of
 * the tree: the probe's gpu_xid check and the doctor's gpu_xid finding read it), NULL when it
 * is not in the table. */
const nt_xid_row_t *nt_xid_lookup(int xid);

/* One Xid line of the kernel log. */
typedef struct nt_xid_event {
    char pci[32]; /* the GPU's address as the driver prints it: "0000:3b:00" (domain:bus:device) */
    int xid;      /* -1 when the number does not parse */
} nt_xid_event_t;

/* nt_xid_parse_line - 1 when line holds the NVIDIA driver's Xid report, "NVRM: Xid
 * (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus." (anywhere in the line: dmesg,
 * journalctl and /dev/kmsg records prefix it differently; "(0000:01:00)" without "PCI:" too),
 * with out filled; 0 otherwise. The one reader of this line: the probe (nt_xid_read) and the
 * doctor's kernel-log reader call it. Pure. */
int nt_xid_parse_line(const char *line, nt_xid_event_t *out);

#define NT_XID_MAX 64
/* The Xid events of a node's kernel log. */
typedef struct nt_xid_log {
    int readable;              /* 1: the log was read */
    char source[64];           /* "/dev/kmsg" or why it was not read ("/dev/kmsg: Operation not
                                * permitted") */
    size_t n;                  /* events kept (at most NT_XID_MAX, in log order) */
    unsigned long total;       /* Xid lines seen, kept or not */
    nt_xid_event_t ev[NT_XID_MAX];
} nt_xid_log_t;

/* nt_xid_read - the Xid lines of root+/dev/kmsg: the kernel's ring buffer since boot (as far as
 * it holds; Documentation/ABI/testing/dev-kmsg: one record per read, EAGAIN at its end, EPIPE
 * for a record overwritten while reading), or under a captured root a file of kmsg records or of
 * dmesg/journalctl lines. Never fails: readable = 0 with the reason in source when the log
 * cannot be opened (kernel.dmesg_restrict=1 without CAP_SYSLOG). */
nt_status_t nt_xid_read(nt_xid_log_t *out);
/* nt_xid_judge - "gpu_xid" for the events of one GPU (those whose pci starts with the GPU's
 * "dddd:bb:dd" address; pci NULL: every event, target "node"): fail NT-GPU-020 (drain) when one
 * is of the catalogue's drain class, else fail NT-GPU-021 (reset) for a reset-class one, else
 * warn NT-GPU-022 (monitor) for application-class or unknown numbers; pass NT-GPU-020 with none;
 * not_judged when the log was not readable. observed lists each number with its count. */
void nt_xid_judge(const nt_xid_log_t *log, const char *pci, const char *target,
                  nt_nodecheck_t *out);

/* ---- the same facts from the files operators collect (lib/node/opfiles.c) ---- */
/* One reader per format, fed line by line (the doctor's reader stage feeds them; tests feed
 * captures), filling the facts the rules above judge: the doctor's finding and the probe's
 * check come from one rule. Each *_line returns 1 when the line belongs to the format (so the
 * caller counts it as read), else 0. Pure. */

/* nt_ulimit_line - `ulimit -a` of bash ("max locked memory   (kbytes, -l) 8192") or dash/busybox
 * ("-l: locked-memory size (kb)   64", "locked memory (kbytes)  64"): the locked-memory limit
 * into m (known = 1; "unlimited" sets unlimited). 1 for any ulimit -a line of these shapes. */
int nt_ulimit_line(const char *line, nt_memlock_t *m);

/* df of /dev/shm: the header says the unit ("1K-blocks", "1M-blocks", "1B-blocks", "Size" of
 * df -h in powers of 1024, of df -H in powers of 1000 when si is set by the caller). */
typedef struct nt_df_state {
    int in;             /* a df header was seen */
    unsigned long long unit; /* bytes per block; 0 = human sizes ("64M") */
    int si;             /* human sizes in powers of 1000 (df -H) */
} nt_df_state_t;
/* nt_df_line - a df header starts the table; a row mounted on /dev/shm fills s (known, size,
 * free; container = 1 when its file system is named "shm", the name Docker gives the
 * container's own /dev/shm mount); gpus is left as it is. 1 for the header and its rows. */
int nt_df_line(nt_df_state_t *st, const char *line, nt_shm_t *s);

/* nt_lsmod_line - lsmod's header ("Module  Size  Used by") sets *in; then each "name size
 * used [by]" row of nvidia_peermem, nv_peer_mem (which registers memory_peers/nv_mem) and
 * nvidia_fs sets its fact in p, with peers_unknown = 1 (lsmod does not show memory_peers).
 * 1 for the header and every module row after it. */
int nt_lsmod_line(int *in, const char *line, nt_peermem_t *p);

#define NT_SMI_GPUS 64
/* nvidia-smi -q (the text query; nvidia-smi(1) "GPU ATTRIBUTES"), its GPU blocks. */
typedef struct nt_smi_q {
    int in;                         /* the "==NVSMI LOG==" banner or a "GPU 0000..." block seen */
    int ngpus;
    char bus[NT_SMI_GPUS][32];      /* "00000000:18:00.0" as printed */
    nt_gpu_health_t gpu[NT_SMI_GPUS];
    char section[6][48];            /* the headers above the current line, by indent / 4 */
    unsigned long long sram_unc[2], dram_unc[2]; /* [0] volatile, [1] aggregate, this GPU */
    int fact; /* the rule whose fact the last line gave (NT_SMI_FACT_*), 0 for none */
    int bad;  /* 1 when that value is the faulty one ("Disabled", "Active", a count > 0, "Yes") */
} nt_smi_q_t;
/* The GPU rules whose facts nvidia-smi -q gives, for citing the line that decided a verdict. */
enum {
    NT_SMI_FACT_NONE,
    NT_SMI_FACT_ECC,
    NT_SMI_FACT_REMAP,
    NT_SMI_FACT_THROTTLE,
    NT_SMI_FACT_PERSISTENCE,
    NT_SMI_FACT_RESET,
    NT_SMI_FACT_RETIRED,
    NT_SMI_FACTS
};
/* nt_smi_q_line - one line of nvidia-smi -q: "Persistence Mode : Enabled"; under "Clocks Event
 * Reasons" (or "Clocks Throttle Reasons") HW Slowdown, HW Thermal Slowdown, HW Power Brake
 * Slowdown, SW Thermal Slowdown "Active"; under "ECC Errors" > "Volatile"/"Aggregate" the DRAM
 * and SRAM "Uncorrectable" counts (or "Double Bit" > "Total" before Ampere); under "Retired
 * Pages" "Pending Page Blacklist" / "Pending"; under "Remapped Rows" "Pending", "Remapping
 * Failure Occurred", "Uncorrectable Error"; under "GPU Reset Status" "Reset Required". "N/A"
 * leaves a fact unknown. index of each GPU is its order in the file. After each line, st->fact
 * names the rule whose fact it gave and st->bad whether the value is the faulty one. */
int nt_smi_q_line(nt_smi_q_t *st, const char *line);

#define NT_LSPCI_DEVS 128
/* lspci -vvv: the ACS control of every function that shows one. */
typedef struct nt_lspci {
    int in;                   /* a device line ("18:00.0 PCI bridge: ...") was seen */
    size_t n;
    nt_acs_t acs[NT_LSPCI_DEVS]; /* readable = 0 for a function whose capabilities lspci could
                                  * not read ("Capabilities: <access denied>", not root) */
    int denied;               /* the current function's capabilities were denied */
    char cur[16];             /* the current function ("0000:18:00.0") */
} nt_lspci_t;
/* nt_lspci_line - a device line starts a function (the domain "0000:" added when lspci leaves
 * it out); "ACSCtl:" with SrcValid, TransBlk, ReqRedir, CmpltRedir, UpstreamFwd, EgressCtrl,
 * DirectTrans each + or - gives its ctl bits (present, readable); "<access denied>" marks the
 * function not readable. 1 for every line of a device block. */
int nt_lspci_line(nt_lspci_t *st, const char *line);

/* nt_nodecheck_set - fill out (used by every rule): check, code, verdict, target, and the
 * printf-formatted message; observed and expected are copied (NULL = ""). */
void nt_nodecheck_set(nt_nodecheck_t *out, const char *check, const char *code, nt_verdict_t v,
                      const char *target, const char *observed, const char *expected,
                      const char *fmt, ...) __attribute__((format(printf, 8, 9)));

#endif
