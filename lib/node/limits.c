/* Limits and memory node checks (include/nettune/nodecheck.h): RLIMIT_MEMLOCK as the job sees
 * it, /dev/shm against NCCL's shm transport. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "nettune/nodecheck.h"
#include "nettune/sysfs.h"

/* MemTotal of root+/proc/meminfo in bytes, 0 when unreadable. */
static unsigned long long nt_mem_total(void)
{
    char path[PATH_MAX], line[256];
    unsigned long long kb = 0;
    FILE *f;

    if (nt_sysfs_path("/proc/meminfo", path, sizeof(path)) != NT_OK || !(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024ull;
}

nt_status_t nt_memlock_read(nt_memlock_t *out)
{
    struct rlimit rl;

    memset(out, 0, sizeof(*out));
    out->mem_total_bytes = nt_mem_total();
    out->slurm = getenv("SLURM_JOB_ID") != NULL;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
        return NT_ERR_SYSTEM;
    out->known = 1;
    out->unlimited = rl.rlim_cur == RLIM_INFINITY;
    out->soft_bytes = out->unlimited ? 0 : (unsigned long long)rl.rlim_cur;
    return NT_OK;
}

void nt_memlock_judge(const nt_memlock_t *m, nt_nodecheck_t *out)
{
    char obs[64], exp[64];
    const char *who = m->slurm ? "the Slurm step's" : "the job's";

    snprintf(exp, sizeof(exp), "unlimited or >= MemTotal (%llu KiB)", m->mem_total_bytes / 1024);
    if (!m->known) {
        nt_nodecheck_set(out, "memlock", "NT-CFG-001", NT_NOT_JUDGED, "node", "", "unlimited",
                         "getrlimit(RLIMIT_MEMLOCK) failed");
        return;
    }
    if (m->unlimited) {
        nt_nodecheck_set(out, "memlock", "NT-CFG-001", NT_PASS, "node", "unlimited", "unlimited",
                         "%s locked-memory limit is unlimited", who);
        return;
    }
    snprintf(obs, sizeof(obs), "%llu KiB", m->soft_bytes / 1024);
    if (!m->mem_total_bytes && m->soft_bytes <= NT_MEMLOCK_SEEN_FAILING)
        nt_nodecheck_set(out, "memlock", "NT-CFG-001", NT_FAIL, "node", obs, "unlimited",
                         "%s locked-memory limit is at most 8 MiB, where ibv_reg_mr of NCCL's "
                         "buffers was seen failing with ENOMEM (MemTotal unknown)",
                         who);
    else if (!m->mem_total_bytes)
        nt_nodecheck_set(out, "memlock", "NT-CFG-001", NT_NOT_JUDGED, "node", obs, "unlimited",
                         "the limit is finite and MemTotal is unknown");
    else if (m->soft_bytes < m->mem_total_bytes)
        nt_nodecheck_set(out, "memlock", "NT-CFG-001", NT_FAIL, "node", obs, exp,
                         "%s locked-memory limit is below host memory: ibv_reg_mr of NCCL's "
                         "buffers fails with ENOMEM",
                         who);
    else
        nt_nodecheck_set(out, "memlock", "NT-CFG-001", NT_PASS, "node", obs, exp,
                         "%s locked-memory limit covers host memory", who);
}

unsigned long long nt_shm_need(int gpus)
{
    return gpus < 2 ? 0 : (unsigned long long)gpus * NT_NCCL_SHM_MIN_CHANNELS * NT_NCCL_SHM_CONN_BYTES;
}

static int nt_root_exists(const char *rel)
{
    char path[PATH_MAX];
    return nt_sysfs_path(rel, path, sizeof(path)) == NT_OK && access(path, F_OK) == 0;
}

nt_status_t nt_shm_read(int gpus, nt_shm_t *out)
{
    char path[PATH_MAX];
    struct statvfs sv;

    memset(out, 0, sizeof(*out));
    out->gpus = gpus;
    out->container = nt_root_exists("/.dockerenv") || nt_root_exists("/run/.containerenv");
    if (nt_sysfs_path("/dev/shm", path, sizeof(path)) != NT_OK || statvfs(path, &sv) != 0)
        return NT_ERR_NOT_FOUND;
    out->known = 1;
    out->size_bytes = (unsigned long long)sv.f_blocks * sv.f_frsize;
    out->free_bytes = (unsigned long long)sv.f_bavail * sv.f_frsize;
    return NT_OK;
}

void nt_shm_judge(const nt_shm_t *s, nt_nodecheck_t *out)
{
    char obs[96], exp[96];
    unsigned long long need = nt_shm_need(s->gpus);
    const char *fix = s->container ? " (in a container: run it with --ipc=host or --shm-size)" : "";

    snprintf(exp, sizeof(exp), ">= %llu MiB for %d GPUs", (need + (1 << 20) - 1) >> 20, s->gpus);
    if (!s->known) {
        nt_nodecheck_set(out, "dev_shm", "NT-CFG-002", NT_NOT_JUDGED, "/dev/shm", "", exp,
                         "statvfs of /dev/shm failed");
        return;
    }
    snprintf(obs, sizeof(obs), "size %llu MiB, free %llu MiB", s->size_bytes >> 20,
             s->free_bytes >> 20);
    if (s->size_bytes < need)
        nt_nodecheck_set(out, "dev_shm", "NT-CFG-002", NT_FAIL, "/dev/shm", obs, exp,
                         "/dev/shm is smaller than NCCL's shared-memory buffers: ncclShmOpen "
                         "fails or the job dies with SIGBUS%s",
                         fix);
    else if (s->free_bytes < need)
        nt_nodecheck_set(out, "dev_shm", "NT-CFG-003", NT_WARN, "/dev/shm", obs, exp,
                         "/dev/shm has less free space than NCCL's buffers need: stale "
                         "/dev/shm/nccl-* files of dead jobs?");
    else
        nt_nodecheck_set(out, "dev_shm", "NT-CFG-002", NT_PASS, "/dev/shm", obs, exp,
                         "/dev/shm holds NCCL's buffers for this node's GPUs");
}
