/* The node inventory object of the report (see inventory.h). */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "inventory.h"
#include "nettune/log.h"

void nt_inventory_node(nt_probe_t *p, const nt_judge_t *j, cJSON *node, cJSON *checks)
{
    const nt_node_t *me = &p->nodes[p->my_node];
    cJSON *ranks = NULL, *skipped;

    (void)j;
    (void)checks;
    nt_json_add_str(node, "hostname", me->host);
    ranks = cJSON_CreateIntArray(me->ranks, me->nranks);
    if (ranks)
        cJSON_AddItemToObject(node, "ranks", ranks);
    skipped = nt_json_add_arr(node, "skipped");
    if (p->topo) {
        nt_topo_to_json(p->topo, node);
    } else if (skipped) {
        nt_skipped_add(skipped, "topology", "hwloc could not load this node's topology");
    }
    if (skipped)
        nt_skipped_add(skipped, "gpu",
                       "GPU link probes (PCIe H2D/D2H, P2P/NVLink) are not part of this version");
}

void nt_inventory_finish_checks(nt_probe_t *p, const nt_judge_t *j, cJSON *node, cJSON *checks)
{
    if (!node)
        return;
    nt_judge_node_checks(j, p->nodes[p->my_node].host, node, checks);
}
