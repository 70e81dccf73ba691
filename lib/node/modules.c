/* Module node checks (include/nettune/nodecheck.h): the peer-memory module against what the
 * NCCL found looks for, nvidia_fs as information. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nettune/nodecheck.h"
#include "nettune/sysfs.h"

#define NT_PEERS_NV_MEM "/sys/kernel/mm/memory_peers/nv_mem/version"
#define NT_PEERS_NV_MEM_NC "/sys/kernel/mm/memory_peers/nv_mem_nc/version"
#define NT_PEERS_NVIDIA_PEERMEM "/sys/kernel/mm/memory_peers/nvidia-peermem/version"
#define NT_MOD_NVIDIA_PEERMEM "/sys/module/nvidia_peermem/version"

/* What NCCL's IB transport looks for to turn GPUDirect RDMA on (ncclIbGdrSupport), by the
 * first NCCL version of each set. The mirror's tags were read from v2.12.7-1 on: */
static const struct {
    int from;                /* NCCL version code */
    const char *files[3];
    const char *source;
} nt_peermem_table[] = {
    /* v2.12.7-1 .. v2.21.5-1: NVIDIA/nccl v2.21.5-1 src/transport/net_ib.cc:561-564 */
    {21207, {NT_PEERS_NV_MEM, NT_PEERS_NVIDIA_PEERMEM, NULL}, "v2.21.5-1 src/transport/net_ib.cc:561-564"},
    /* v2.22.3-1 drops nvidia-peermem for nv_mem_nc: v2.22.3-1 src/transport/net_ib.cc:613-616 */
    {22203, {NT_PEERS_NV_MEM, NT_PEERS_NV_MEM_NC, NULL}, "v2.22.3-1 src/transport/net_ib.cc:613-616"},
    /* v2.23.4-1 on adds /sys/module/nvidia_peermem: v2.23.4-1 src/transport/net_ib.cc:693-697,
     * the same in v2.28.9-1 src/transport/net_ib.cc:871-874 and v2.29.2-1
     * src/transport/net_ib/gdr.cc:17-19 */
    {22304, {NT_PEERS_NV_MEM, NT_PEERS_NV_MEM_NC, NT_MOD_NVIDIA_PEERMEM}, "v2.23.4-1 src/transport/net_ib.cc:693-697"},
};

static int nt_exists(const char *rel)
{
    char path[PATH_MAX];
    return nt_sysfs_path(rel, path, sizeof(path)) == NT_OK && access(path, F_OK) == 0;
}

nt_status_t nt_peermem_read(int nccl_code, nt_peermem_t *out)
{
    char line[256];

    memset(out, 0, sizeof(*out));
    out->nccl_code = nccl_code;
    out->nv_mem = nt_exists(NT_PEERS_NV_MEM);
    out->nv_mem_nc = nt_exists(NT_PEERS_NV_MEM_NC);
    out->nvidia_peermem_peers = nt_exists(NT_PEERS_NVIDIA_PEERMEM);
    out->nvidia_peermem = nt_exists(NT_MOD_NVIDIA_PEERMEM);
    out->nv_peer_mem = nt_exists("/sys/module/nv_peer_mem");
    out->nvidia_fs = nt_exists("/sys/module/nvidia_fs");
    if (nt_sysfs_read_str("/proc/sys/kernel/osrelease", line, sizeof(line)) != NT_OK ||
        sscanf(line, "%d.%d", &out->kernel_major, &out->kernel_minor) != 2)
        out->kernel_major = out->kernel_minor = 0;
    out->nvidia_open = -1;
    /* Its first line: "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15 ..."
     * for the open modules, "... UNIX x86_64 Kernel Module  535.104.05 ..." otherwise. */
    if (nt_sysfs_read_str("/proc/driver/nvidia/version", line, sizeof(line)) == NT_OK)
        out->nvidia_open = strstr(line, "Open Kernel Module") != NULL;
    return NT_OK;
}

int nt_dmabuf_possible(const nt_peermem_t *p)
{
    int kernel = p->kernel_major == 0 ? -1
                 : (p->kernel_major > NT_DMABUF_KERNEL_MAJOR ||
                    (p->kernel_major == NT_DMABUF_KERNEL_MAJOR &&
                     p->kernel_minor >= NT_DMABUF_KERNEL_MINOR));
    int nccl = p->nccl_code == 0 ? -1 : p->nccl_code >= NT_NCCL_DMABUF_FIRST;

    if (kernel == 0 || nccl == 0 || p->nvidia_open == 0)
        return 0;
    return kernel < 0 || nccl < 0 || p->nvidia_open < 0 ? -1 : 1;
}

/* The dma-buf facts in words: "kernel 6.8, NVIDIA open kernel module, NCCL 2.19.3". */
static void nt_dmabuf_facts(const nt_peermem_t *p, char *buf, size_t len)
{
    char k[32] = "kernel unknown", n[32] = "NCCL unknown";
    if (p->kernel_major)
        snprintf(k, sizeof(k), "kernel %d.%d", p->kernel_major, p->kernel_minor);
    if (p->nccl_code)
        snprintf(n, sizeof(n), "NCCL %d.%d.%d", p->nccl_code / 10000, p->nccl_code / 100 % 100,
                 p->nccl_code % 100);
    snprintf(buf, len, "%s, %s, %s", k,
             p->nvidia_open < 0 ? "NVIDIA driver unknown"
             : p->nvidia_open   ? "NVIDIA open kernel module"
                                : "NVIDIA proprietary kernel module",
             n);
}

void nt_dmabuf_judge(const nt_peermem_t *p, nt_nodecheck_t *out)
{
    char obs[128];
    int d = nt_dmabuf_possible(p);

    nt_dmabuf_facts(p, obs, sizeof(obs));
    nt_nodecheck_set(out, "dmabuf", "NT-CFG-007", NT_PASS, "node", obs,
                     "kernel >= 5.12, open kernel module, NCCL >= 2.13.4",
                     "dma-buf registration is %s: information only",
                     d > 0 ? "possible (if the GPU reports CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)"
                     : d == 0 ? "not possible"
                              : "unknown");
}

static int nt_peermem_row(int code)
{
    int row = -1;
    for (int i = 0; i < (int)(sizeof(nt_peermem_table) / sizeof(nt_peermem_table[0])); i++)
        if (code >= nt_peermem_table[i].from)
            row = i;
    return row;
}

int nt_peermem_looks_for(int nccl_code, char *buf, size_t len)
{
    int row = nt_peermem_row(nccl_code), n = 0;
    size_t used = 0;

    if (len)
        buf[0] = '\0';
    if (row < 0)
        return 0;
    for (int i = 0; i < 3 && nt_peermem_table[row].files[i]; i++, n++)
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", n ? ", " : "",
                                     nt_peermem_table[row].files[i]);
    return n;
}

/* Whether the file f of the table exists on this node (the facts of p). */
static int nt_peermem_has(const nt_peermem_t *p, const char *f)
{
    return (strcmp(f, NT_PEERS_NV_MEM) == 0 && p->nv_mem) ||
           (strcmp(f, NT_PEERS_NV_MEM_NC) == 0 && p->nv_mem_nc) ||
           (strcmp(f, NT_PEERS_NVIDIA_PEERMEM) == 0 && p->nvidia_peermem_peers) ||
           (strcmp(f, NT_MOD_NVIDIA_PEERMEM) == 0 && p->nvidia_peermem);
}

void nt_peermem_judge(const nt_peermem_t *p, nt_nodecheck_t *out)
{
    char want[256], obs[128], ver[32];
    int row = nt_peermem_row(p->nccl_code);
    int loaded = p->nvidia_peermem || p->nv_peer_mem;

    snprintf(obs, sizeof(obs), "%s%s%s%s", p->nvidia_peermem ? "nvidia_peermem " : "",
             p->nv_peer_mem ? "nv_peer_mem " : "", p->nv_mem_nc ? "memory_peers/nv_mem_nc " : "",
             loaded || p->nv_mem_nc ? "" : "no peer-memory module");
    if (row < 0) {
        nt_nodecheck_set(out, "peer_memory", "NT-CFG-004", NT_NOT_JUDGED, "node", obs, "",
                         p->nccl_code ? "NCCL older than 2.12.7: what it looks for is not in the "
                                        "table"
                                      : "no NCCL found: what it looks for is unknown");
        return;
    }
    nt_peermem_looks_for(p->nccl_code, want, sizeof(want));
    snprintf(ver, sizeof(ver), "%d.%d.%d", p->nccl_code / 10000, p->nccl_code / 100 % 100,
             p->nccl_code % 100);
    for (int i = 0; i < 3 && nt_peermem_table[row].files[i]; i++)
        if (nt_peermem_has(p, nt_peermem_table[row].files[i])) {
            nt_nodecheck_set(out, "peer_memory", "NT-CFG-004", NT_PASS, "node", obs, want,
                             "NCCL %s finds %s (%s)", ver, nt_peermem_table[row].files[i],
                             nt_peermem_table[row].source);
            return;
        }
    if (!loaded && nt_dmabuf_possible(p) > 0)
        nt_nodecheck_set(out, "peer_memory", "NT-CFG-004", NT_PASS, "node", obs, want,
                         "no peer-memory module: NCCL %s can use dma-buf for GPUDirect RDMA "
                         "(kernel, open kernel module and NCCL allow it)",
                         ver);
    else if (loaded && p->peers_unknown && p->nvidia_peermem &&
             nt_peermem_table[row].files[1] &&
             strcmp(nt_peermem_table[row].files[1], NT_PEERS_NVIDIA_PEERMEM) == 0)
        nt_nodecheck_set(out, "peer_memory", "NT-CFG-004", NT_NOT_JUDGED, "node", obs, want,
                         "NCCL %s would find nvidia_peermem through %s, which lsmod does not "
                         "show: list /sys/kernel/mm/memory_peers",
                         ver, NT_PEERS_NVIDIA_PEERMEM);
    else if (loaded)
        nt_nodecheck_set(out, "peer_memory", "NT-CFG-004", NT_FAIL, "node", obs, want,
                         "a peer-memory module is loaded but NCCL %s looks only for %s (%s): "
                         "it runs without GPUDirect RDMA",
                         ver, want, nt_peermem_table[row].source);
    else
        nt_nodecheck_set(out, "peer_memory", "NT-CFG-005", NT_WARN, "node", obs, want,
                         "no peer-memory module: NCCL %s has GPUDirect RDMA only through dma-buf",
                         ver);
}

void nt_nvidia_fs_judge(const nt_peermem_t *p, nt_nodecheck_t *out)
{
    nt_nodecheck_set(out, "nvidia_fs", "NT-CFG-006", NT_PASS, "node",
                     p->nvidia_fs ? "loaded" : "not loaded", "",
                     "nvidia_fs (GPUDirect Storage) is %s: information only",
                     p->nvidia_fs ? "loaded" : "not loaded");
}
