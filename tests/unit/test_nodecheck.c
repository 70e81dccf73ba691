/* The node checks' readers and rules (lib/node/pcie_acs.c, limits.c, modules.c) on sysfs trees
 * rebuilt from public captures (tests/fixtures/nodecheck/README.md names each source), through
 * the sysfs root: the healthy tree passes every check, and each fault tree (the healthy one with
 * one captured fault) fails exactly its own check with its own code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include "nettune/checks.h"
#include "nettune/nodecheck.h"
#include "nettune/sysfs.h"
#include "nodechecks.h"
#include "tree_put.h"

/* A PEX 8747 switch as NVIDIA/nccl #19 lists it (upstream 03:00.0, downstreams 04:08.0 and
 * 04:10.0) under root port 00:02.0, a GPU below one downstream port and a NIC below the other. */
#define ROOTPORT "0000:00:02.0"
#define UP "0000:03:00.0"
#define DOWN_GPU "0000:04:08.0"
#define DOWN_NIC "0000:04:10.0"
#define GPU "0000:05:00.0"
#define NIC "0000:06:00.0"
static const char *const bridges[] = {ROOTPORT, UP, DOWN_GPU, DOWN_NIC};
static const char *const devdir[] = {
    "/sys/devices/pci0000:00/" ROOTPORT,
    "/sys/devices/pci0000:00/" ROOTPORT "/" UP,
    "/sys/devices/pci0000:00/" ROOTPORT "/" UP "/" DOWN_GPU,
    "/sys/devices/pci0000:00/" ROOTPORT "/" UP "/" DOWN_NIC,
    "/sys/devices/pci0000:00/" ROOTPORT "/" UP "/" DOWN_GPU "/" GPU,
    "/sys/devices/pci0000:00/" ROOTPORT "/" UP "/" DOWN_NIC "/" NIC,
};
static const char *const devname[] = {ROOTPORT, UP, DOWN_GPU, DOWN_NIC, GPU, NIC};

/* aer_dev_* as Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats prints them. */
#define AER_COR_CLEAN                                                                              \
    "RxErr 0\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\n"          \
    "HeaderOF 0\nTOTAL_ERR_COR 0\n"
/* coreboot #4's root port 00:01.0: RxErr twice, BadTLP once. */
#define AER_COR_FAULT                                                                              \
    "RxErr 2\nBadTLP 1\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\n"          \
    "HeaderOF 0\nTOTAL_ERR_COR 3\n"
#define AER_UNC(tag)                                                                               \
    "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\n"       \
    "MalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\n"                     \
    "AtomicOpBlocked 0\nTLPBlockedErr 0\nTOTAL_ERR_" tag " 0\n"

/* The igb NIC 0000:09:00.0 of the netdev patch "igb: Do not bring the device up after non-fatal
 * error" (2024-09-23, tests/fixtures/nodecheck/dmesg-igb-aer-nonfatal-cmpltto.txt): one
 * Uncorrected (Non-Fatal) error, "[14] CmpltTO", rebuilt into aer_dev_nonfatal. */
#define AER_NONFATAL_CMPLTTO                                                                       \
    "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 1\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\n"       \
    "MalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\n"                     \
    "AtomicOpBlocked 0\nTLPBlockedErr 0\nTOTAL_ERR_NONFATAL 1\n"

/* /dev/kmsg records ("prio,seq,usec,flags;text", Documentation/ABI/testing/dev-kmsg) of a
 * healthy node: the mlx5 lines of leptonai/gpud #1209's journal (2026-02-14), no Xid. */
#define KMSG_HEALTHY                                                                               \
    "6,1201,5400000,-;mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT\n"                          \
    "4,1202,5400100,-;workqueue: ib_cache_event_task [ib_core] hogged CPU for >10000us 4 "        \
    "times, consider switching to WQ_UNBOUND\n"                                                   \
    "6,1203,5400900,-;mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n"
/* Captured Xid lines, the address turned into this tree's GPU (0000:05:00): */
/* NVIDIA/NVSentinel #155 (2025-10-25), from 0000:44:00 */
#define XID_79 "4,1300,9000000,-;NVRM: Xid (PCI:0000:05:00): 79, GPU has fallen off the bus\n"
/* stas00/ml-engineering compute/accelerator/nvidia/debug.md, from 0000:10:1c */
#define XID_63                                                                                     \
    "4,1300,9000000,-;NVRM: Xid (PCI:0000:05:00): 63, pid=1896, Row Remapper: New row marked "   \
    "for remapping, reset gpu to activate.\n"
/* NVIDIA/open-gpu-kernel-modules #1150 (2026-05-18), from 0000:dc:00 */
#define XID_45                                                                                     \
    "4,1300,9000000,-;NVRM: Xid (PCI:0000:05:00): 45, pid=1818990, name=python3, Ch 00000001 "   \
    "caused by previous Xid 149\n"
/* leptonai/gpud #1174 (2025-12-08), from 0000:18:01:00 and 0000:9b:00 */
#define XID_145                                                                                    \
    "4,1300,9000000,-;NVRM: Xid (PCI:0000:05:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link 13 "      \
    "(0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)\n"

static char root[128];

/* A config space image: AER at 0x100 pointing to ACS at 0x2a0 (NVIDIA/nccl #606: "ecap 000d
 * @2a0", control word @2a6), ACS control ctl; len bytes written (64 = what non-root reads). */
static void put_config(const char *dir, unsigned ctl, size_t len)
{
    unsigned char cfg[4096] = {0};
    char path[512];
    FILE *f;

    cfg[0x100] = 0x01, cfg[0x101] = 0x00, cfg[0x102] = 0x01, cfg[0x103] = 0x2a; /* next 0x2a0 */
    cfg[0x2a0] = 0x0d, cfg[0x2a2] = 0x01;
    cfg[0x2a6] = (unsigned char)(ctl & 0xff), cfg[0x2a7] = (unsigned char)(ctl >> 8);
    snprintf(path, sizeof(path), "%s%s/config", root, dir);
    assert_non_null(f = fopen(path, "wb"));
    assert_int_equal(fwrite(cfg, 1, len, f), len);
    fclose(f);
}

/* The healthy node: ACS off on every bridge (NVIDIA/nccl #1405), no AER errors, IOMMU
 * passthrough, nvidia_peermem under an NCCL that finds it. */
static int tree_setup(void **state)
{
    char cmd[700], rel[256];
    (void)state;
    snprintf(root, sizeof(root), "/tmp/nt-nodecheck-XXXXXX");
    assert_non_null(mkdtemp(root));
    for (size_t i = 0; i < 6; i++) {
        snprintf(rel, sizeof(rel), "%s/aer_dev_correctable", devdir[i]);
        tree_put(root, rel, AER_COR_CLEAN);
        snprintf(rel, sizeof(rel), "%s/aer_dev_fatal", devdir[i]);
        tree_put(root, rel, AER_UNC("FATAL"));
        snprintf(rel, sizeof(rel), "%s/aer_dev_nonfatal", devdir[i]);
        tree_put(root, rel, AER_UNC("NONFATAL"));
        if (i < 4)
            put_config(devdir[i], 0x0000, 4096);
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %s/sys/bus/pci/devices && ln -s ../../../..%s %s/sys/bus/pci/devices/%s",
                 root, devdir[i], root, devname[i]);
        assert_int_equal(system(cmd), 0);
    }
    for (int g = 0; g < 2; g++) {
        snprintf(rel, sizeof(rel), "/sys/kernel/iommu_groups/%d/type", g + 30);
        tree_put(root, rel, "identity\n");
        snprintf(cmd, sizeof(cmd), "ln -s ../../../../../../kernel/iommu_groups/%d %s%s/iommu_group", g + 30,
                 root, devdir[4 + g]);
        assert_int_equal(system(cmd), 0);
    }
    tree_put(root, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro iommu=pt\n");
    tree_put(root, "/sys/module/nvidia_peermem/version", "550.54.15\n");
    tree_put(root, "/proc/sys/kernel/osrelease", "6.8.0-90-generic\n"); /* nccl #1939 */
    tree_put(root, "/proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build  "
             "(dvs-builder@U16-I3-B03-4-3)  Tue Mar  5 22:15:33 UTC 2024\n"
             "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
    tree_put(root, "/dev/kmsg", KMSG_HEALTHY);
    nt_sysfs_set_root(root);
    return 0;
}

static int tree_teardown(void **state)
{
    char cmd[300];
    (void)state;
    nt_sysfs_set_root(NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd);
}

/* Every sysfs check of the node (NCCL 2.23.4 as the NCCL found) into out; returns how many
 * did not pass. */
static int judge_all(nt_nodecheck_t *out, size_t *n)
{
    char between[8][16];
    size_t nb = 0;
    int bad = 0;
    nt_peermem_t p;

    *n = 0;
    assert_int_equal(nt_pcie_bridges_between(GPU, NIC, between, 8, &nb), NT_OK);
    for (size_t i = 0; i < nb; i++) {
        nt_acs_t a;
        assert_int_equal(nt_acs_read(between[i], &a), NT_OK);
        nt_acs_judge(&a, &out[(*n)++]);
    }
    for (int d = 0; d < 2; d++) {
        nt_iommu_t m;
        nt_aer_t e;
        nt_iommu_read(d ? NIC : GPU, &m);
        nt_iommu_judge(&m, &out[(*n)++]);
        nt_aer_read(d ? NIC : GPU, &e);
        nt_aer_judge(&e, &out[(*n)++]);
    }
    nt_peermem_read(22304, &p);
    nt_peermem_judge(&p, &out[(*n)++]);
    nt_nvidia_fs_judge(&p, &out[(*n)++]);
    nt_dmabuf_judge(&p, &out[(*n)++]);
    nt_xid_log_t log;
    nt_xid_read(&log);
    nt_xid_judge(&log, GPU, "gpu0", &out[(*n)++]);
    for (size_t i = 0; i < *n; i++)
        bad += out[i].verdict != NT_PASS;
    return bad;
}

/* The one check of out that did not pass. */
static const nt_nodecheck_t *the_bad_one(const nt_nodecheck_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (out[i].verdict != NT_PASS)
            return &out[i];
    fail();
    return NULL;
}

static void test_bridges_between(void **state)
{
    char b[8][16];
    size_t n = 0;
    (void)state;
    assert_int_equal(nt_pcie_bridges_between(GPU, NIC, b, 8, &n), NT_OK);
    assert_int_equal(n, 3); /* the switch: its upstream port and both downstream ports */
    assert_string_equal(b[0], UP);
    assert_string_equal(b[1], DOWN_GPU);
    assert_string_equal(b[2], DOWN_NIC);
    assert_int_equal(nt_pcie_bridges_between(GPU, "0000:99:00.0", b, 8, &n), NT_ERR_NOT_FOUND);
    (void)bridges;
}

static void test_healthy_passes_everything(void **state)
{
    nt_nodecheck_t out[16];
    size_t n;
    (void)state;
    assert_int_equal(judge_all(out, &n), 0);
    assert_int_equal(n, 3 + 4 + 3 + 1);
    assert_string_equal(out[0].observed, "ACSCtl 0x0000 (ReqRedir- CmpltRedir-)");
    assert_string_equal(out[10].check, "gpu_xid");
    assert_string_equal(out[10].observed, "none");
    assert_string_equal(out[3].observed, "identity");
    assert_string_equal(out[4].observed, "correctable 0, fatal 0, non-fatal 0");
    assert_string_equal(out[9].observed, "kernel 6.8, NVIDIA open kernel module, NCCL 2.23.4");
}

/* NVIDIA/nccl #523: "ACSCtl: SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+" = 0x1d. */
static void test_acs_redirect_fails_alone(void **state)
{
    nt_nodecheck_t out[16];
    const nt_nodecheck_t *b;
    size_t n;
    (void)state;
    put_config(devdir[2], 0x001d, 4096);
    assert_int_equal(judge_all(out, &n), 1);
    b = the_bad_one(out, n);
    assert_string_equal(b->code, "NT-PCIE-005");
    assert_int_equal(b->verdict, NT_FAIL);
    assert_string_equal(b->target, DOWN_GPU);
    assert_string_equal(b->observed, "ACSCtl 0x001d (ReqRedir+ CmpltRedir+)");
    put_config(devdir[2], 0x0000, 4096);
}

/* What a non-root reader gets: 64 bytes, so ACS is not judged, with the reason. */
static void test_acs_not_root(void **state)
{
    nt_nodecheck_t out[16];
    const nt_nodecheck_t *b;
    size_t n;
    (void)state;
    put_config(devdir[1], 0x001d, 64);
    assert_int_equal(judge_all(out, &n), 1);
    b = the_bad_one(out, n);
    assert_int_equal(b->verdict, NT_NOT_JUDGED);
    assert_non_null(strstr(b->message, "needs root"));
    put_config(devdir[1], 0x0000, 4096);
}

/* Each captured AER count on the NIC warns or fails pcie_aer there alone: coreboot #4's
 * correctable errors warn, the igb NIC's uncorrectable (non-fatal) completion timeout fails. */
static void test_aer_faults_alone(void **state)
{
    static const struct {
        const char *file, *fault, *clean, *code, *observed;
        nt_verdict_t v;
    } cases[] = {
        {"aer_dev_correctable", AER_COR_FAULT, AER_COR_CLEAN, "NT-PCIE-008",
         "correctable 3, fatal 0, non-fatal 0", NT_WARN},
        {"aer_dev_nonfatal", AER_NONFATAL_CMPLTTO, AER_UNC("NONFATAL"), "NT-PCIE-007",
         "correctable 0, fatal 0, non-fatal 1", NT_FAIL},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        nt_nodecheck_t out[16];
        const nt_nodecheck_t *b;
        char rel[256];
        size_t n;
        snprintf(rel, sizeof(rel), "%s/%s", devdir[5], cases[i].file);
        tree_put(root, rel, cases[i].fault);
        assert_int_equal(judge_all(out, &n), 1);
        b = the_bad_one(out, n);
        assert_string_equal(b->code, cases[i].code);
        assert_int_equal(b->verdict, cases[i].v);
        assert_string_equal(b->target, NIC);
        assert_string_equal(b->observed, cases[i].observed);
        tree_put(root, rel, cases[i].clean);
    }
}

static void test_iommu_translated_warns_alone(void **state)
{
    nt_nodecheck_t out[16];
    const nt_nodecheck_t *b;
    size_t n;
    (void)state;
    tree_put(root, "/sys/kernel/iommu_groups/30/type", "DMA-FQ\n");
    assert_int_equal(judge_all(out, &n), 1);
    b = the_bad_one(out, n);
    assert_string_equal(b->code, "NT-PCIE-006");
    assert_string_equal(b->target, GPU);
    tree_put(root, "/sys/kernel/iommu_groups/30/type", "identity\n");
}

/* Captured IOMMU states (tests/fixtures/nodecheck/README.md): a workstation whose command line
 * ends "iommu.passthrough=0 iommu.strict=1" and whose groups are "DMA" (translated on purpose
 * after an AMD-Vi IO_PAGE_FAULT; iommu=pt, the two-GPU P2P prerequisite, removed) warns on both
 * devices and nothing else; rocm/rccl #1129's command line with iommu=pt passes. */
static void test_iommu_captures(void **state)
{
    nt_nodecheck_t out[16], o;
    nt_iommu_t m = {.bdf = GPU, .groups = 54};
    size_t n;
    int warned = 0;
    (void)state;
    tree_put(root, "/sys/kernel/iommu_groups/30/type", "DMA\n");
    tree_put(root, "/sys/kernel/iommu_groups/31/type", "DMA\n");
    tree_put(root, "/proc/cmdline", "iommu.passthrough=0 iommu.strict=1\n");
    assert_int_equal(judge_all(out, &n), 2);
    for (size_t i = 0; i < n; i++)
        if (out[i].verdict != NT_PASS) {
            assert_string_equal(out[i].check, "iommu");
            assert_string_equal(out[i].code, "NT-PCIE-006");
            assert_int_equal(out[i].verdict, NT_WARN);
            assert_string_equal(out[i].observed, "DMA");
            warned++;
        }
    assert_int_equal(warned, 2);
    tree_put(root, "/sys/kernel/iommu_groups/30/type", "identity\n");
    tree_put(root, "/sys/kernel/iommu_groups/31/type", "identity\n");
    tree_put(root, "/proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro iommu=pt\n");
    /* the same command line where the group type cannot be read (Linux < 5.11) */
    nt_iommu_parse_cmdline("iommu.passthrough=0 iommu.strict=1", &m);
    assert_true(m.cmdline_on && !m.cmdline_pt);
    nt_iommu_judge(&m, &o);
    assert_int_equal(o.verdict, NT_WARN);
    assert_string_equal(o.observed, "iommu on, no pt");
    nt_iommu_parse_cmdline("BOOT_IMAGE=/vmlinuz-5.15.0-101-generic "
                           "root=/dev/mapper/ubuntu--vg-ubuntu--lv ro iommu=pt",
                           &m);
    nt_iommu_judge(&m, &o);
    assert_int_equal(o.verdict, NT_PASS);
    assert_string_equal(o.observed, "iommu=pt");
}

/* NVIDIA/nccl #1676: DGX OS 25.01 replaced nv_peer_mem by nvidia-peermem, and NCCL 2.22.3 does
 * not look for it. NVIDIA/nccl #897: /sys/kernel/mm/memory_peers/nv_mem present = GDRDMA. */
static void test_peermem_against_nccl(void **state)
{
    nt_peermem_t p;
    nt_nodecheck_t o;
    char want[256];
    (void)state;
    nt_peermem_read(22203, &p);
    nt_peermem_judge(&p, &o);
    assert_int_equal(o.verdict, NT_FAIL);
    assert_string_equal(o.code, "NT-CFG-004");
    assert_non_null(strstr(o.message, "v2.22.3-1 src/transport/net_ib.cc:613-616"));
    assert_int_equal(nt_peermem_looks_for(22203, want, sizeof(want)), 2);
    assert_string_equal(want, "/sys/kernel/mm/memory_peers/nv_mem/version, "
                              "/sys/kernel/mm/memory_peers/nv_mem_nc/version");
    assert_int_equal(nt_peermem_looks_for(21903, want, sizeof(want)), 2);
    assert_non_null(strstr(want, "memory_peers/nvidia-peermem/version"));
    assert_int_equal(nt_peermem_looks_for(20000, want, sizeof(want)), 0);
    nt_peermem_read(0, &p);
    nt_peermem_judge(&p, &o);
    assert_int_equal(o.verdict, NT_NOT_JUDGED);
    /* nccl #988: neither module loaded under NCCL 2.12.9 */
    memset(&p, 0, sizeof(p));
    p.nccl_code = 21209;
    nt_peermem_judge(&p, &o);
    assert_int_equal(o.verdict, NT_WARN);
    assert_string_equal(o.code, "NT-CFG-005");
    /* nccl #1474: without peer memory, dma-buf through the open driver on a recent kernel */
    p.kernel_major = 6, p.kernel_minor = 8, p.nvidia_open = 1, p.nccl_code = 21903;
    assert_int_equal(nt_dmabuf_possible(&p), 1);
    nt_peermem_judge(&p, &o);
    assert_int_equal(o.verdict, NT_PASS);
    assert_non_null(strstr(o.message, "dma-buf"));
    p.nvidia_open = 0; /* the proprietary module: no dma-buf, the warning stands */
    assert_int_equal(nt_dmabuf_possible(&p), 0);
    nt_peermem_judge(&p, &o);
    assert_int_equal(o.verdict, NT_WARN);
    p.nvidia_open = -1, p.kernel_minor = 8;
    assert_int_equal(nt_dmabuf_possible(&p), -1);
    p.kernel_major = 5, p.kernel_minor = 4, p.nvidia_open = 1;
    assert_int_equal(nt_dmabuf_possible(&p), 0);
    memset(&p, 0, sizeof(p));
    /* nccl #897: nv_mem registered, an NCCL of 2.18 finds it */
    p.nv_mem = 1, p.nccl_code = 21805;
    nt_peermem_judge(&p, &o);
    assert_int_equal(o.verdict, NT_PASS);
}

/* NVIDIA/nccl #342: 4 GPUs in Docker's 64 MB /dev/shm; NCCL's segment there was 9637888 B (one
 * connection's buffers and a 4 KiB header). erainfra #87: a host's /dev/shm of 7995 MiB. */
static void test_shm_need(void **state)
{
    nt_shm_t s = {.known = 1, .size_bytes = 64ull << 20, .free_bytes = 64ull << 20,
                  .container = 1, .gpus = 4};
    nt_nodecheck_t o;
    (void)state;
    assert_int_equal(NT_NCCL_SHM_CONN_BYTES + 4096, 9637888);
    assert_int_equal(nt_shm_need(4), 77070336ull);
    assert_int_equal(nt_shm_need(1), 0);
    nt_shm_judge(&s, &o);
    assert_int_equal(o.verdict, NT_FAIL);
    assert_string_equal(o.code, "NT-CFG-002");
    assert_non_null(strstr(o.message, "--ipc=host"));
    assert_string_equal(o.observed, "size 64 MiB, free 64 MiB");
    s.size_bytes = s.free_bytes = 7995ull << 20, s.gpus = 8, s.container = 0;
    nt_shm_judge(&s, &o);
    assert_int_equal(o.verdict, NT_PASS);
    s.free_bytes = 100ull << 20; /* stale nccl-* files filling it */
    nt_shm_judge(&s, &o);
    assert_int_equal(o.verdict, NT_WARN);
    assert_string_equal(o.code, "NT-CFG-003");
    /* the reader on this machine's own /dev/shm */
    nt_sysfs_set_root("");
    assert_int_equal(nt_shm_read(8, &s), NT_OK);
    assert_true(s.size_bytes > 0);
    nt_sysfs_set_root(root);
}

/* lsst/qserv #229: a container's memlock of 10485760 B; ucx #7930: --ulimit memlock=-1:-1. */
static void test_memlock(void **state)
{
    nt_memlock_t m = {.known = 1, .soft_bytes = 10485760ull, .mem_total_bytes = 60262ull << 20};
    nt_nodecheck_t o;
    struct rlimit rl;
    (void)state;
    nt_memlock_judge(&m, &o);
    assert_int_equal(o.verdict, NT_FAIL);
    assert_string_equal(o.code, "NT-CFG-001");
    assert_string_equal(o.observed, "10240 KiB");
    m.unlimited = 1;
    nt_memlock_judge(&m, &o);
    assert_int_equal(o.verdict, NT_PASS);
    m.unlimited = 0, m.mem_total_bytes = 0;
    nt_memlock_judge(&m, &o);
    assert_int_equal(o.verdict, NT_NOT_JUDGED);
    /* the reader: this process's own limit, MemTotal through the (empty) root */
    assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
    assert_int_equal(nt_memlock_read(&m), NT_OK);
    assert_int_equal(m.unlimited, rl.rlim_cur == RLIM_INFINITY);
    assert_int_equal(m.mem_total_bytes, 0); /* the capture tree has no /proc/meminfo */
}

static void test_aer_rules(void **state)
{
    nt_aer_t a = {.bdf = GPU, .present = 1, .nonfatal = 1};
    nt_nodecheck_t o;
    unsigned long long v = 7;
    (void)state;
    nt_aer_judge(&a, &o);
    assert_int_equal(o.verdict, NT_FAIL);
    assert_string_equal(o.code, "NT-PCIE-007");
    a.present = 0;
    nt_aer_judge(&a, &o);
    assert_int_equal(o.verdict, NT_NOT_JUDGED);
    assert_int_equal(nt_aer_parse_total("RxErr 0\n", &v), NT_ERR_PARSE);
    assert_int_equal(nt_aer_parse_total(AER_COR_FAULT, &v), NT_OK);
    assert_int_equal(v, 3);
}

static void test_iommu_cmdline(void **state)
{
    nt_iommu_t m = {.bdf = GPU, .groups = 40};
    nt_nodecheck_t o;
    (void)state;
    nt_iommu_parse_cmdline("ro quiet intel_iommu=on", &m);
    assert_int_equal(m.cmdline_on, 1);
    nt_iommu_judge(&m, &o); /* no group type readable: the command line decides */
    assert_int_equal(o.verdict, NT_WARN);
    nt_iommu_parse_cmdline("ro intel_iommu=on iommu=pt", &m);
    assert_int_equal(m.cmdline_pt, 1);
    assert_int_equal(m.cmdline_on, 0);
    nt_iommu_parse_cmdline("ro xiommu=ptx", &m);
    assert_int_equal(m.cmdline_pt, 0);
    nt_iommu_judge(&m, &o);
    assert_int_equal(o.verdict, NT_NOT_JUDGED);
}

/* Each captured Xid on the tree's GPU fails (or warns) gpu_xid alone, with the code of its class
 * in NVIDIA's catalogue; an application-class Xid 45 passes. */
static void test_xid_fails_alone(void **state)
{
    static const struct {
        const char *line, *code, *observed;
        nt_verdict_t v;
    } cases[] = {
        {XID_79, "NT-GPU-020", "Xid 79 x1", NT_FAIL},
        {XID_63, "NT-GPU-021", "Xid 63 x1", NT_FAIL},
        {XID_145, "NT-GPU-022", "Xid 145 x1", NT_WARN},
    };
    nt_nodecheck_t out[16];
    char kmsg[1024];
    size_t n;
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const nt_nodecheck_t *b;
        snprintf(kmsg, sizeof(kmsg), "%s%s", KMSG_HEALTHY, cases[i].line);
        tree_put(root, "/dev/kmsg", kmsg);
        assert_int_equal(judge_all(out, &n), 1);
        b = the_bad_one(out, n);
        assert_string_equal(b->check, "gpu_xid");
        assert_string_equal(b->code, cases[i].code);
        assert_int_equal(b->verdict, cases[i].v);
        assert_string_equal(b->observed, cases[i].observed);
    }
    snprintf(kmsg, sizeof(kmsg), "%s%s%s", KMSG_HEALTHY, XID_45, XID_45);
    tree_put(root, "/dev/kmsg", kmsg);
    assert_int_equal(judge_all(out, &n), 0);
    assert_string_equal(out[10].observed, "Xid 45 x2");
    tree_put(root, "/dev/kmsg", KMSG_HEALTHY);
}

/* The line reader: the forms dmesg, journalctl and kmsg give, the old form without "PCI:"
 * (pastebin xJaypMZt, 2012), and an Xid of another GPU left out of this GPU's verdict. */
static void test_xid_lines(void **state)
{
    nt_xid_event_t e;
    nt_xid_log_t log = {.readable = 1};
    nt_nodecheck_t c;
    (void)state;
    assert_int_equal(nt_xid_parse_line("Feb 14 05:03:41 gpu-1 kernel: [ 1936.51] NVRM: Xid "
                                       "(PCI:0000:44:00): 79, GPU has fallen off the bus",
                                       &e),
                     1);
    assert_string_equal(e.pci, "0000:44:00");
    assert_int_equal(e.xid, 79);
    assert_int_equal(nt_xid_parse_line("[ 269.517039] NVRM: Xid (0000:01:00): 3, C 00000005 SC "
                                       "00000007 M 00001ffc Data ffffffff",
                                       &e),
                     1);
    assert_string_equal(e.pci, "0000:01:00");
    assert_int_equal(e.xid, 3);
    assert_int_equal(nt_xid_parse_line("NVRM: GPU at 0000:01:00.0 has fallen off the bus.", &e), 0);
    assert_non_null(nt_xid_lookup(48));
    assert_int_equal(nt_xid_lookup(48)->category, NT_CAT_RESET);
    assert_null(nt_xid_lookup(149));
    log.n = 1;
    log.total = 1;
    assert_int_equal(nt_xid_parse_line("NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, "
                                       "Contained ECC error", /* leptonai/gpud #1174 */
                                       &log.ev[0]),
                     1);
    nt_xid_judge(&log, "0000:05:00.0", "gpu0", &c);
    assert_int_equal(c.verdict, NT_PASS);
    nt_xid_judge(&log, "0000:9B:00.0", "gpu1", &c);
    assert_string_equal(c.code, "NT-GPU-021");
    nt_xid_judge(&log, NULL, "node", &c);
    assert_string_equal(c.code, "NT-GPU-021");
    log.readable = 0;
    snprintf(log.source, sizeof(log.source), "/dev/kmsg: Operation not permitted");
    nt_xid_judge(&log, NULL, "node", &c);
    assert_int_equal(c.verdict, NT_NOT_JUDGED);
    assert_non_null(strstr(c.message, "dmesg_restrict"));
}

/* One rule, two sides: every pair of checks_same.def joins a doctor's cause (NT-*-1NN) and a
 * probe check (NT-*-0NN), both rows of the check table. */
static void test_same_rows(void **state)
{
    const char *cause, *probe;
    char buf[128];
    (void)state;
    assert_true(nt_check_same_count() >= 17);
    for (size_t i = 0; nt_check_same_at(i, &cause, &probe); i++) {
        assert_non_null(nt_check_by_code(cause));
        assert_non_null(nt_check_by_code(probe));
        assert_true(atoi(strrchr(cause, '-') + 1) >= 101);
        assert_true(atoi(strrchr(probe, '-') + 1) < 101);
    }
    assert_int_equal(nt_check_probe_codes("NT-GPU-101", buf, sizeof(buf)), 3);
    assert_string_equal(buf, "NT-GPU-020, NT-GPU-021, NT-GPU-022");
    assert_int_equal(nt_check_probe_codes("NT-CFG-121", buf, sizeof(buf)), 1);
    assert_string_equal(buf, "NT-CFG-001");
    assert_int_equal(nt_check_probe_codes("NT-JOB-103", buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");
}

/* Feeds every line of a capture in tests/fixtures/nodecheck/opfiles to fn(state, line); returns
 * how many lines fn took. */
static int feed_file(const char *name, int (*fn)(void *, const char *), void *st)
{
    char path[256], line[512];
    int took = 0;
    FILE *f;
    snprintf(path, sizeof(path), "tests/fixtures/nodecheck/opfiles/%s", name);
    assert_non_null(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        took += fn(st, line);
    }
    fclose(f);
    return took;
}
static int feed_ulimit(void *st, const char *l) { return nt_ulimit_line(l, st); }
static int feed_smi(void *st, const char *l) { return nt_smi_q_line(st, l); }
static int feed_lspci(void *st, const char *l) { return nt_lspci_line(st, l); }
typedef struct { nt_df_state_t df; nt_shm_t shm; } df_feed_t;
static int feed_df(void *st, const char *l) { df_feed_t *d = st; return nt_df_line(&d->df, l, &d->shm); }
typedef struct { int in; nt_peermem_t p; } lsmod_feed_t;
static int feed_lsmod(void *st, const char *l) { lsmod_feed_t *m = st; return nt_lsmod_line(&m->in, l, &m->p); }

/* The operator files' readers (lib/node/opfiles.c) on the captures of opfiles/MANIFEST.md, and
 * the probe's rules on what they read: the healthy file passes, the fault file fails. */
static void test_opfiles(void **state)
{
    nt_memlock_t m = {0};
    df_feed_t df = {0};
    lsmod_feed_t lm = {0};
    nt_nodecheck_t c;
    static nt_smi_q_t smi;
    static nt_lspci_t pci;
    (void)state;

    assert_int_equal(feed_file("ulimit-a-container-64k.txt", feed_ulimit, &m), 16);
    assert_true(m.known && !m.unlimited);
    assert_int_equal(m.soft_bytes, 65536);
    nt_memlock_judge(&m, &c);
    assert_string_equal(c.code, "NT-CFG-001");
    assert_int_equal(c.verdict, NT_FAIL);
    memset(&m, 0, sizeof(m));
    feed_file("ulimit-Ha-unlimited.txt", feed_ulimit, &m);
    assert_true(m.known && m.unlimited);
    nt_memlock_judge(&m, &c);
    assert_int_equal(c.verdict, NT_PASS);
    memset(&m, 0, sizeof(m));
    assert_int_equal(nt_ulimit_line("-l: max locked memory (kb)        8192", &m), 1); /* busybox */
    assert_int_equal(m.soft_bytes, 8192ull * 1024);
    assert_int_equal(nt_ulimit_line("NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>", &m), 0);

    assert_int_equal(feed_file("df-h-docker-shm-64m.txt", feed_df, &df), 4);
    assert_true(df.shm.known && df.shm.container);
    assert_int_equal(df.shm.size_bytes, 64ull << 20);
    df.shm.gpus = 4;
    nt_shm_judge(&df.shm, &c);
    assert_string_equal(c.code, "NT-CFG-002");
    assert_int_equal(c.verdict, NT_FAIL);
    memset(&df, 0, sizeof(df));
    feed_file("df-h-host-shm.txt", feed_df, &df);
    assert_int_equal(df.shm.size_bytes, (unsigned long long)(7.9 * 1024 * 1024 * 1024));
    assert_false(df.shm.container);
    df.shm.gpus = 8;
    nt_shm_judge(&df.shm, &c);
    assert_int_equal(c.verdict, NT_PASS);

    assert_int_equal(feed_file("lsmod-nvidia-peermem.txt", feed_lsmod, &lm), 8);
    assert_true(lm.p.nvidia_peermem && lm.p.peers_unknown && !lm.p.nv_peer_mem);
    lm.p.nccl_code = 22203; /* NVIDIA/nccl #1676 */
    nt_peermem_judge(&lm.p, &c);
    assert_string_equal(c.code, "NT-CFG-004");
    assert_int_equal(c.verdict, NT_FAIL);
    lm.p.nccl_code = 22304;
    nt_peermem_judge(&lm.p, &c);
    assert_int_equal(c.verdict, NT_PASS);
    lm.p.nccl_code = 21903; /* would find memory_peers/nvidia-peermem, which lsmod cannot show */
    nt_peermem_judge(&lm.p, &c);
    assert_int_equal(c.verdict, NT_NOT_JUDGED);

    assert_int_equal(feed_file("nvidia-smi-q-a100-healthy.txt", feed_smi, &smi), 78);
    assert_int_equal(smi.ngpus, 1);
    assert_string_equal(smi.bus[0], "00000000:0A:00.0");
    assert_true(smi.gpu[0].persistence_ok && smi.gpu[0].persistence);
    assert_true(smi.gpu[0].throttle_ok && smi.gpu[0].throttle == 0);
    assert_true(smi.gpu[0].ecc_ok && smi.gpu[0].remap_ok && smi.gpu[0].reset_ok);
    assert_false(smi.gpu[0].retired_ok); /* N/A on A100: the retired-pages rule does not apply */
    assert_false(nt_gpu_retired_applies(&smi.gpu[0]));
    nt_gpu_remap_judge(&smi.gpu[0], &c);
    assert_int_equal(c.verdict, NT_PASS);
    memset(&smi, 0, sizeof(smi));
    feed_file("nvidia-smi-q-a100-remap-pending.txt", feed_smi, &smi);
    assert_int_equal(smi.gpu[0].remap_pending, 1);
    assert_int_equal(smi.gpu[0].remap_uncorr_rows, 4);
    nt_gpu_remap_judge(&smi.gpu[0], &c);
    assert_string_equal(c.code, "NT-GPU-014");
    /* driver 495's section name (MangoHud #636, as posted): throttle judged, nothing active */
    memset(&smi, 0, sizeof(smi));
    assert_int_equal(feed_file("nvidia-smi-q-d-performance-495.txt", feed_smi, &smi), 20); /* not the blank line before the banner */
    assert_true(smi.gpu[0].throttle_ok && smi.gpu[0].throttle == 0);
    assert_false(smi.gpu[0].ecc_ok || smi.gpu[0].persistence_ok); /* -d PERFORMANCE only */
    nt_gpu_throttle_judge(&smi.gpu[0], &c);
    assert_int_equal(c.verdict, NT_PASS);
    nt_gpu_ecc_judge(&smi.gpu[0], &c);
    assert_int_equal(c.verdict, NT_NOT_JUDGED);
    /* the layout before Ampere: ECC Errors > Volatile > Double Bit > Total, an active slowdown */
    memset(&smi, 0, sizeof(smi));
    static const char *const old[] = {
        "GPU 00000000:3B:00.0", "    Persistence Mode                      : Disabled",
        "    Clocks Throttle Reasons", "        HW Slowdown                       : Active",
        "    ECC Errors", "        Volatile", "            Double Bit",
        "                Device Memory             : 2", "                Total                     : 2",
        "        Aggregate", "            Double Bit", "                Total                     : 5",
        "    Retired Pages", "        Pending                           : Yes", "NCCL INFO not smi"};
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++)
        assert_int_equal(nt_smi_q_line(&smi, old[i]), i + 1 < sizeof(old) / sizeof(old[0]));
    assert_int_equal(smi.gpu[0].ecc_uncorr_volatile, 2);
    assert_int_equal(smi.gpu[0].ecc_uncorr_aggregate, 5);
    assert_int_equal(smi.gpu[0].throttle, NT_THROTTLE_HW_SLOWDOWN);
    assert_true(smi.gpu[0].retired_ok && smi.gpu[0].retired_pending);
    assert_true(smi.gpu[0].persistence_ok && !smi.gpu[0].persistence);

    assert_int_equal(feed_file("lspci-vvv-pex8747-acs-off.txt", feed_lspci, &pci), 14);
    assert_int_equal(pci.n, 2);
    assert_string_equal(pci.acs[0].bdf, "0000:04:08.0");
    nt_acs_judge(&pci.acs[1], &c);
    assert_int_equal(c.verdict, NT_PASS);
    memset(&pci, 0, sizeof(pci));
    feed_file("lspci-vvv-pex8747-acs-redirect.txt", feed_lspci, &pci);
    assert_int_equal(pci.acs[0].ctl, 0x001d); /* NVIDIA/nccl #523 */
    nt_acs_judge(&pci.acs[0], &c);
    assert_string_equal(c.code, "NT-PCIE-005");
    assert_int_equal(c.verdict, NT_FAIL);
    memset(&pci, 0, sizeof(pci));
    assert_int_equal(nt_lspci_line(&pci, "0000:04:08.0 PCI bridge: PLX Technology, Inc. PEX 8747"), 1);
    assert_int_equal(nt_lspci_line(&pci, "\tCapabilities: <access denied>"), 1);
    nt_acs_judge(&pci.acs[0], &c);
    assert_int_equal(c.verdict, NT_NOT_JUDGED);
}

/* The six GPU rules on one GPU's facts into o[6] (gpu_ecc, gpu_row_remap, gpu_throttle,
 * gpu_persistence, gpu_reset, gpu_retired_pages; the last left unset, check NULL, where it does
 * not apply); returns how many warned or failed. */
static int smi_judge(const nt_gpu_health_t *h, nt_nodecheck_t o[6])
{
    int bad = 0;
    memset(o, 0, 6 * sizeof(o[0]));
    nt_gpu_ecc_judge(h, &o[0]);
    nt_gpu_remap_judge(h, &o[1]);
    nt_gpu_throttle_judge(h, &o[2]);
    nt_gpu_persistence_judge(h, &o[3]);
    nt_gpu_reset_judge(h, &o[4]);
    if (nt_gpu_retired_applies(h))
        nt_gpu_retired_judge(h, &o[5]);
    for (int r = 0; r < 6; r++)
        bad += o[r].check && (o[r].verdict == NT_WARN || o[r].verdict == NT_FAIL);
    return bad;
}

/* An excerpt of nvidia-smi -q as posted (opfiles/smi-excerpt-*.txt) under the GPU header gpu,
 * each line indented by indent spaces: the posts that dropped nvidia-smi's first indent level
 * get it back here, the file keeps the post's lines. */
static void feed_excerpt(const char *name, const char *gpu, int indent, nt_smi_q_t *smi)
{
    char path[256], line[512], buf[600];
    FILE *f;
    memset(smi, 0, sizeof(*smi));
    assert_int_equal(nt_smi_q_line(smi, gpu), 1);
    snprintf(path, sizeof(path), "tests/fixtures/nodecheck/opfiles/%s", name);
    assert_non_null(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(buf, sizeof(buf), "%*s%s", indent, "", line);
        assert_int_equal(nt_smi_q_line(smi, buf), 1);
    }
    fclose(f);
}

/* Whole nvidia-smi -q captures (opfiles/MANIFEST.md) through the reader and the probe's GPU
 * rules: a healthy node passes every rule on every GPU, each fault capture warns or fails its
 * own rule on its own GPU and no other. */
static void test_opfiles_gpu_captures(void **state)
{
    static nt_smi_q_t smi;
    nt_nodecheck_t o[6];
    (void)state;

    /* 8 V100s (driver 550.127.05, thamada/gls): the pre-Ampere ECC block, whose "Double Bit"
     * header nvidia-smi pads with spaces; page retirement judged, no row remapping */
    assert_int_equal(feed_file("nvidia-smi-q-v100x8-healthy.txt", feed_smi, &smi), 1798);
    assert_int_equal(smi.ngpus, 8);
    assert_string_equal(smi.bus[7], "00000000:00:0B.0");
    for (int g = 0; g < 8; g++) {
        assert_true(smi.gpu[g].ecc_ok); /* the padded header: not judged before the trim */
        assert_true(smi.gpu[g].retired_ok && !smi.gpu[g].retired_pending);
        assert_false(smi.gpu[g].remap_ok);
        assert_int_equal(smi_judge(&smi.gpu[g], o), 0);
        for (int r = 0; r < 6; r++)
            assert_int_equal(o[r].verdict, r == 1 ? NT_NOT_JUDGED : NT_PASS);
    }
    assert_string_equal(o[5].check, "gpu_retired_pages");

    /* a GH200 with one uncorrectable DRAM error in its lifetime, none since the driver loaded,
     * its row remapped (Uncorrectable Error 1, Pending No): gpu_ecc warns NT-GPU-013 alone */
    memset(&smi, 0, sizeof(smi));
    feed_file("nvidia-smi-q-gh200-ecc-aggregate.txt", feed_smi, &smi);
    assert_int_equal(smi.ngpus, 1);
    assert_int_equal(smi_judge(&smi.gpu[0], o), 1);
    assert_int_equal(o[0].verdict, NT_WARN);
    assert_string_equal(o[0].code, "NT-GPU-013");
    assert_string_equal(o[0].observed, "uncorrectable volatile 0, aggregate 1");
    assert_string_equal(o[1].observed, "pending no, failure no, uncorrectable rows 1");
    assert_null(o[5].check); /* remaps rows: no page retirement */

    /* 4 A100s, GPU 1 (9E:00.0) with a row remap pending after one correctable error */
    memset(&smi, 0, sizeof(smi));
    feed_file("nvidia-smi-q-a100x4-remap-pending.txt", feed_smi, &smi);
    assert_int_equal(smi.ngpus, 4);
    for (int g = 0; g < 4; g++) {
        assert_int_equal(smi_judge(&smi.gpu[g], o), g == 1);
        assert_int_equal(o[1].verdict, g == 1 ? NT_WARN : NT_PASS);
    }
    assert_string_equal(smi.bus[1], "00000000:9E:00.0");
    assert_string_equal(o[1].code, "NT-GPU-014");

    /* a GeForce GTX 1050 Ti, persistence mode disabled: gpu_persistence warns alone; no ECC,
     * row remapping or page retirement on a GeForce (N/A): those are not judged */
    memset(&smi, 0, sizeof(smi));
    feed_file("nvidia-smi-q-gtx1050ti-persistence-off.txt", feed_smi, &smi);
    assert_int_equal(smi_judge(&smi.gpu[0], o), 1);
    assert_int_equal(o[3].verdict, NT_WARN);
    assert_string_equal(o[3].code, "NT-GPU-017");
    assert_int_equal(o[2].verdict, NT_PASS);
    assert_int_equal(o[4].verdict, NT_PASS);
    assert_int_equal(o[0].verdict, NT_NOT_JUDGED);
    assert_int_equal(o[1].verdict, NT_NOT_JUDGED);
    assert_int_equal(o[5].verdict, NT_NOT_JUDGED);

    /* an A10 at its power limit, SW Power Cap the only active reason: not a fault */
    memset(&smi, 0, sizeof(smi));
    feed_file("nvidia-smi-q-a10-sw-power-cap.txt", feed_smi, &smi);
    assert_true(smi.gpu[0].throttle_ok);
    assert_int_equal(smi_judge(&smi.gpu[0], o), 0);

    /* l4rz's Dell C4130 (iDRAC without a power table entry for the V100-SXM2-32GB asserts the
     * power brake): HW Slowdown and HW Power Brake Slowdown active, clocks at 382 MHz */
    feed_excerpt("smi-excerpt-c4130-v100-power-brake.txt", "GPU 00000000:1E:00.0", 4, &smi);
    assert_int_equal(smi_judge(&smi.gpu[0], o), 1);
    assert_int_equal(o[2].verdict, NT_WARN);
    assert_string_equal(o[2].code, "NT-GPU-016");
    assert_string_equal(o[2].observed, "0x88 hw_slowdown hw_power_brake_slowdown");
    /* open_clip #703: SW Power Cap active alone passes */
    feed_excerpt("smi-excerpt-open-clip-703-sw-power-cap.txt", "GPU 00000000:1E:00.0", 0, &smi);
    assert_true(smi.gpu[0].throttle_ok);
    assert_int_equal(smi_judge(&smi.gpu[0], o), 0);
    assert_string_equal(o[2].observed, "0x0");
    /* stas00's broken GPU: one uncorrectable SRAM error since the driver loaded (Volatile 1),
     * five in its lifetime; the excerpt is the ECC block alone */
    feed_excerpt("smi-excerpt-stas00-volatile-sram-uncorrectable.txt", "GPU 00000000:07:00.0", 0,
                 &smi);
    assert_true(smi.gpu[0].ecc_ok);
    /* gpu_ecc fails NT-GPU-012 (reset category: the author's fix is nvidia-smi -r or a reboot),
     * and nothing else the excerpt does not show is judged to fail */
    assert_int_equal(smi_judge(&smi.gpu[0], o), 1);
    assert_int_equal(o[0].verdict, NT_FAIL);
    assert_string_equal(o[0].code, "NT-GPU-012");
    assert_string_equal(o[0].observed, "uncorrectable volatile 1, aggregate 5");
    /* an RTX 3090 the driver marked "Reset Required: Yes" (CUDA fails on it alone) */
    feed_excerpt("smi-excerpt-rtx3090-reset-required.txt", "GPU 00000000:39:00.0", 4, &smi);
    assert_int_equal(smi_judge(&smi.gpu[0], o), 1);
    assert_int_equal(o[4].verdict, NT_FAIL);
    assert_string_equal(o[4].code, "NT-GPU-018");
}

/* The probe's glue (probes/nodechecks.c) on the same tree: one GPU and one NIC, the checks that
 * apply, each with code and category; NCCL 2.22.3 with nvidia_peermem (nccl #1676) fails. */
static void test_probe_glue(void **state)
{
    nt_topo_gpu_t gpu = {.index = 0, .pci_bus_id = GPU};
    nt_topo_nic_t nic = {.name = "mlx5_0", .pci_bus_id = NIC};
    nt_topo_t topo = {.gpus = &gpu, .ngpus = 1, .nics = &nic, .nnics = 1};
    cJSON *checks = cJSON_CreateArray(), *c;
    int n = 0, bad = 0;
    (void)state;
    nt_nodechecks_node(&topo, "node1", "2.22.3", checks);
    cJSON_ArrayForEach(c, checks) {
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        const char *v = cJSON_GetObjectItem(c, "verdict")->valuestring;
        n++;
        assert_non_null(cJSON_GetObjectItem(c, "code"));
        assert_non_null(cJSON_GetObjectItem(c, "category"));
        if (strcmp(name, "memlock") == 0) /* this process's own limit: any verdict, its code */
            assert_string_equal(cJSON_GetObjectItem(c, "code")->valuestring, "NT-CFG-001");
        else if (strcmp(v, "pass") != 0) {
            bad++;
            assert_string_equal(name, "peer_memory");
            assert_string_equal(cJSON_GetObjectItem(c, "code")->valuestring, "NT-CFG-004");
            assert_string_equal(cJSON_GetObjectItem(c, "category")->valuestring, "config");
        }
    }
    assert_int_equal(n, 3 + 1 + 4 + 1 + 3); /* ACS x3, gpu_xid, IOMMU and AER x2, memlock,
                                             * peer memory, nvidia_fs and dma-buf; no /dev/shm
                                             * for one GPU */
    assert_int_equal(bad, 1);
    cJSON_Delete(checks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bridges_between),
        cmocka_unit_test(test_healthy_passes_everything),
        cmocka_unit_test(test_acs_redirect_fails_alone),
        cmocka_unit_test(test_acs_not_root),
        cmocka_unit_test(test_aer_faults_alone),
        cmocka_unit_test(test_iommu_translated_warns_alone),
        cmocka_unit_test(test_iommu_captures),
        cmocka_unit_test(test_peermem_against_nccl),
        cmocka_unit_test(test_shm_need),
        cmocka_unit_test(test_memlock),
        cmocka_unit_test(test_aer_rules),
        cmocka_unit_test(test_iommu_cmdline),
        cmocka_unit_test(test_xid_fails_alone),
        cmocka_unit_test(test_xid_lines),
        cmocka_unit_test(test_same_rows),
        cmocka_unit_test(test_opfiles),
        cmocka_unit_test(test_opfiles_gpu_captures),
        cmocka_unit_test(test_probe_glue),
    };
    return cmocka_run_group_tests(tests, tree_setup, tree_teardown);
}
