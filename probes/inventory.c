/* The node inventory object of the report (see inventory.h). */
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inventory.h"
#include "nodechecks.h"
#include "nettune/log.h"
#include "nettune/pcie.h"
#include "nettune/software.h"
#include "nt_tuning.h"

/* PCIe link checks without traffic for a device; the link state also goes into obj["pcie"]. */
static void nt_inventory_pcie(const char *host, const char *bdf, const char *label, cJSON *obj,
                              cJSON *checks)
{
    nt_pcie_link_t link;
    nt_status_t st;
    cJSON *chk;

    if (!bdf || !*bdf)
        return;
    st = nt_pcie_read(bdf, &link);
    if (st != NT_OK) {
        /* No sysfs entry: a topology file from another machine, or a virtual device. */
        NT_DEBUG(PCIE, "no PCIe link state for %s (%s): %s", bdf, label, nt_status_string(st));
        return;
    }
    if (obj)
        nt_pcie_to_json(&link, obj);
    /* GPUs (checks NULL): the GPU probe judges their link, the generation under load only. */
    chk = checks ? nt_pcie_check_create(&link, host, label) : NULL;
    if (chk)
        cJSON_AddItemToArray(checks, chk);
}

/* nodes[].tuning_file {path, fnv1a64, rules | error}: the file as the plugin would load it
 * (NETTUNE_TUNING_FILE: nettune.tuning/1), read and hashed by the plugin's own loader, so the
 * hash is the one its init line logs. */
static void nt_inventory_tuning_file(const char *path, cJSON *node)
{
    nt_tuning_t t;
    char err[256] = "", hash[24];
    nt_tp_status_t st = nt_tuning_load(path, NT_FORMAT_JSON, &t, err, sizeof(err));
    cJSON *o = nt_json_add_obj(node, "tuning_file");

    if (o) {
        nt_json_add_str(o, "path", path);
        if (st == NT_TP_OK || st == NT_TP_ERR_FORMAT) { /* read whole, so hashed */
            snprintf(hash, sizeof(hash), "%016" PRIx64, t.hash);
            nt_json_add_str(o, "fnv1a64", hash);
        }
        if (st == NT_TP_OK)
            nt_json_add_num(o, "rules", (double)t.nrules);
        else
            nt_json_add_str(o, "error", err);
    }
    nt_tuning_cleanup(&t);
}

void nt_inventory_node(nt_probe_t *p, const nt_judge_t *j, cJSON *node, cJSON *checks)
{
    const nt_node_t *me = &p->nodes[p->my_node];
    nt_software_t sw;
    int sw_ok;
    char mpiver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    cJSON *ranks, *skipped;

    (void)j;
    nt_json_add_str(node, "hostname", me->host);
    ranks = cJSON_CreateIntArray(me->ranks, me->nranks);
    if (ranks)
        cJSON_AddItemToObject(node, "ranks", ranks);
    /* Software versions; MPI_Get_library_version may be called before MPI_Init (MPI-3). */
    if ((sw_ok = nt_software_collect(&sw) == NT_OK)) {
        if (MPI_Get_library_version(mpiver, &len) == MPI_SUCCESS)
            nt_software_set_mpi(&sw, mpiver);
        nt_software_to_json(&sw, node);
    }
    /* The job's NCCL_* variables as this rank sees them: config_drift compares them. */
    nt_software_env_to_json(environ, node);
    if (p->params->tuning_file)
        nt_inventory_tuning_file(p->params->tuning_file, node);
    skipped = nt_json_add_arr(node, "skipped");
    if (!p->topo) {
        if (skipped)
            nt_skipped_add(skipped, "topology", "hwloc could not load this node's topology");
    } else {
        cJSON *gpus;
        nt_topo_to_json(p->topo, node);
        if (p->params->topology)
            nt_json_add_str(node, "topology_source", p->params->topology);
        gpus = cJSON_GetObjectItemCaseSensitive(node, "gpus");
        for (int g = 0; g < p->topo->ngpus; g++) {
            char label[32];
            snprintf(label, sizeof(label), "GPU %d", p->topo->gpus[g].index);
            nt_inventory_pcie(me->host, p->topo->gpus[g].pci_bus_id, label,
                              cJSON_GetArrayItem(gpus, g), NULL);
        }
        for (int n = 0; n < p->topo->nnics; n++)
            nt_inventory_pcie(me->host, p->topo->nics[n].pci_bus_id, p->topo->nics[n].name, NULL,
                              checks);
        /* A topology file stands for another machine: its RDMA ports (and the states hwloc
         * recorded there) are the node's NICs; the live ports of this host are not probed. */
        if (p->params->topology) {
            static const char *const st_names[] = {"unknown", "DOWN",   "INIT",
                                                   "ARMED",   "ACTIVE", "ACTIVE_DEFER"};
            cJSON *nics = nt_json_add_arr(node, "nics");
            for (int n = 0; nics && n < p->topo->nnics; n++) {
                const nt_topo_nic_t *nic = &p->topo->nics[n];
                for (int port = 1; port <= (nic->nports ? nic->nports : 1); port++) {
                    int stv = nic->nports ? nic->port_state[port - 1] : 0;
                    cJSON *o = cJSON_CreateObject();
                    if (!o)
                        break;
                    nt_json_add_str(o, "name", nic->name);
                    nt_json_add_num(o, "port", port);
                    nt_json_add_str(o, "state", stv >= 0 && stv <= 5 ? st_names[stv] : "unknown");
                    if (nic->pci_bus_id[0])
                        nt_json_add_str(o, "pci_bus_id", nic->pci_bus_id);
                    if (nic->numa_node >= 0)
                        nt_json_add_num(o, "numa_node", nic->numa_node);
                    nt_json_add_str(o, "source", "topology file");
                    cJSON_AddItemToArray(nics, o);
                }
            }
        } else {
            /* The node's own configuration and health (docs/node-checks.md); not for a
             * topology file, which stands for another machine. */
            nt_nodechecks_node(p->topo, me->host, sw_ok ? sw.nccl : "", checks);
        }
    }
    /* The GPU probe (probes/gpu) says why it did not run. */
}

void nt_inventory_finish_checks(nt_probe_t *p, const nt_judge_t *j, cJSON *node, cJSON *checks)
{
    if (!node)
        return;
    nt_judge_node_checks(j, p->nodes[p->my_node].host, node, checks);
}
