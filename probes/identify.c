/* Node identification across ranks (nt_nodes_identify, run.h). A file of its own, apart from
 * nodes.c: the scale bench replaces nt_nodes_build (ld --wrap acts on calls from other objects
 * only), and binaries that link probe_util.o need not link the node table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
