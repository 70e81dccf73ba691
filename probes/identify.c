/* Node identification across ranks (nt_nodes_identify, run.h). A file of its own, apart from
 * nodes.c: the scale bench replaces nt_nodes_build (ld --wrap acts on calls from other objects
 * only), and binaries that link probe_util.o need not link the node table. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "nettune/sysfs.h"

#include "run.h"

nt_status_t nt_nodes_identify(nt_launcher_t *l, const char *host, const char *boot, int fake_nodes,
                              double timeout_s, nt_node_t **nodes, int *nnodes, int *machine_ranks)
{
    int size = l->ops->size(l), rank = l->ops->rank(l);
    char *hosts = calloc((size_t)size, NT_HOST_MAX);
    char *boots = calloc((size_t)size, NT_BOOT_ID_MAX);
    int *leaders = calloc((size_t)size, sizeof(int));
    char me[NT_HOST_MAX] = "", kb[NT_BOOT_ID_MAX] = "";
    nt_status_t st = NT_ERR_NOMEM;

    *nodes = NULL;
    *nnodes = 0;
    *machine_ranks = 0;
    if (hosts && boots && leaders) {
        snprintf(me, sizeof(me), "%s", host ? host : "");
        snprintf(kb, sizeof(kb), "%s", boot ? boot : "");
        st = l->ops->allgather(l, me, hosts, NT_HOST_MAX, timeout_s);
        if (st == NT_OK)
            st = l->ops->allgather(l, kb, boots, NT_BOOT_ID_MAX, timeout_s);
    }
    if (st == NT_OK) {
        /* The leader key comes from what every rank said, not from rank - local_rank: a
         * host's ranks need not be consecutive in world order. */
        if (fake_nodes <= 0)
            nt_nodes_leaders(size, hosts, boots, NT_BOOT_ID_MAX, leaders);
        st = nt_nodes_build(size, hosts, leaders, fake_nodes, nodes, nnodes);
    }
    if (st == NT_OK && kb[0])
        *machine_ranks = nt_machine_ranks(size, boots, NT_BOOT_ID_MAX, rank);
    free(hosts);
    free(boots);
    free(leaders);
    return st;
}

/* Lowers *n to the CPU quota in the cpu.max file of cgroup dir (under /sys/fs/cgroup; "" for
 * the root, which is the container's own under a cgroup namespace). */
static void nt_cgroup_quota(const char *dir, long *n)
{
    char path[640], quota[64];
    double q, per;
    snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", dir);
    if (nt_sysfs_read_str(path, quota, sizeof(quota)) == NT_OK &&
        sscanf(quota, "%lf %lf", &q, &per) == 2 && q > 0 && per > 0 && ceil(q / per) < *n)
        *n = (long)ceil(q / per);
}

int nt_machine_cpus(int topo_pus)
{
    char line[512], path[640];
    long n = topo_pus > 0 ? topo_pus : sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f;

    if (n < 1)
        n = 1;
    /* cgroup v2 ("0::/path"): the quota of the process's cgroup and of each parent ("max" =
     * none); the tightest wins. */
    if (nt_sysfs_path("/proc/self/cgroup", path, sizeof(path)) == NT_OK &&
        (f = fopen(path, "r")) != NULL) {
        while (fgets(line, sizeof(line), f)) {
            char *dir = line + 3, *slash;
            if (strncmp(line, "0::", 3) != 0)
                continue;
            dir[strcspn(dir, "\n")] = '\0';
            if (strcmp(dir, "/") == 0)
                dir[0] = '\0';
            for (;;) {
                nt_cgroup_quota(dir, &n);
                if (!dir[0] || !(slash = strrchr(dir, '/')))
                    break;
                *slash = '\0';
            }
            break;
        }
        fclose(f);
    }
    return n > 1 ? (int)n : 1;
}
