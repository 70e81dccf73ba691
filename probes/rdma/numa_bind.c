/* NUMA binding without libnuma: sched_setaffinity with the node's cpulist from sysfs, and the
 * mbind system call (MPOL_BIND) on the buffer before it is first touched. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nettune/sysfs.h"
#include "verbs.h"

#define NT_MPOL_BIND 2 /* linux/mempolicy.h */

_Static_assert(sizeof(cpu_set_t) <= sizeof(((nt_numa_saved_t *)0)->mask), "cpu_set_t fits");

/* "0-3,8-11" -> set */
static int nt_parse_cpulist(const char *s, cpu_set_t *set)
{
    int n = 0;
    CPU_ZERO(set);
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b;
        if (end == s)
            break;
        b = a;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long i = a; i <= b && i < CPU_SETSIZE; i++) {
            CPU_SET((int)i, set);
            n++;
        }
        s = *end == ',' ? end + 1 : end;
        if (*end != ',')
            break;
    }
    return n;
}

int nt_numa_bind_cpus(int node, nt_numa_saved_t *saved, char *why, size_t whylen)
{
    char path[96], list[1024];
    cpu_set_t set;
    saved->saved = 0;
    if (node < 0) {
        snprintf(why, whylen, "the NIC's NUMA node is unknown");
        return -1;
    }
    snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
    if (nt_sysfs_read_str(path, list, sizeof(list)) != NT_OK || nt_parse_cpulist(list, &set) == 0) {
        snprintf(why, whylen, "cannot read the CPUs of NUMA node %d (%s)", node, path);
        return -1;
    }
    if (sched_getaffinity(0, sizeof(cpu_set_t), (cpu_set_t *)saved->mask) == 0)
        saved->saved = 1;
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
        snprintf(why, whylen, "sched_setaffinity to node %d CPUs %s: %s", node, list, strerror(errno));
        return -1;
    }
    snprintf(why, whylen, "CPUs %s of node %d", list, node);
    return 0;
}

void nt_numa_unbind(nt_numa_saved_t *saved)
{
    if (saved->saved)
        sched_setaffinity(0, sizeof(cpu_set_t), (cpu_set_t *)saved->mask);
    saved->saved = 0;
}

int nt_numa_bind_mem(void *addr, size_t len, int node, char *why, size_t whylen)
{
    unsigned long mask[16] = {0};
    if (node < 0 || node >= (int)(sizeof(mask) * 8)) {
        snprintf(why, whylen, "NUMA node %d out of range", node);
        return -1;
    }
    mask[node / (8 * sizeof(unsigned long))] = 1ul << (node % (8 * sizeof(unsigned long)));
    if (syscall(SYS_mbind, addr, len, NT_MPOL_BIND, mask, sizeof(mask) * 8, 0) != 0) {
        snprintf(why, whylen, "mbind to node %d: %s", node, strerror(errno));
        return -1;
    }
    return 0;
}
