/* The node checks as report checks (nodechecks.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/judge.h"
#include "nettune/report.h"
#include "nodechecks.h"

cJSON *nt_nodechecks_json(const nt_nodecheck_t *c, const char *host)
{
    cJSON *o = nt_check_create_str(c->check, host, c->target, c->verdict,
                                   c->observed[0] ? c->observed : NULL,
                                   c->expected[0] ? c->expected : NULL, "%s", c->message);
    /* the one writer of a code and its category, as every other check gets them */
    nt_judge_code_add(o, c->code);
    return o;
}

static void nt_nodechecks_put(cJSON *checks, const nt_nodecheck_t *c, const char *host)
{
    cJSON *o = nt_nodechecks_json(c, host);
    if (o)
        cJSON_AddItemToArray(checks, o);
}

/* "2.19.3" -> 21903 (NCCL_VERSION_CODE of NCCL >= 2.9); 0 when it does not parse. */
static int nt_nodechecks_nccl_code(const char *v)
{
    int a, b, c;
    return v && sscanf(v, "%d.%d.%d", &a, &b, &c) == 3 ? a * 10000 + b * 100 + c : 0;
}

#define NT_NC_MAX_BRIDGES 64

/* ACS of every bridge between a GPU and a NIC of topo, each bridge judged once. */
static void nt_nodechecks_acs(const nt_topo_t *topo, const char *host, cJSON *checks)
{
    char seen[NT_NC_MAX_BRIDGES][16];
    size_t nseen = 0;

    for (int g = 0; g < topo->ngpus; g++)
        for (int n = 0; n < topo->nnics; n++) {
            char b[16][16];
            size_t nb = 0;
            if (nt_pcie_bridges_between(topo->gpus[g].pci_bus_id, topo->nics[n].pci_bus_id, b,
                                        16, &nb) != NT_OK)
                continue;
            for (size_t i = 0; i < nb; i++) {
                size_t k = 0;
                nt_acs_t a;
                nt_nodecheck_t c;
                while (k < nseen && strcmp(seen[k], b[i]) != 0)
                    k++;
                if (k < nseen || nseen == NT_NC_MAX_BRIDGES)
                    continue;
                snprintf(seen[nseen++], 16, "%s", b[i]);
                if (nt_acs_read(b[i], &a) != NT_OK)
                    continue;
                nt_acs_judge(&a, &c);
                nt_nodechecks_put(checks, &c, host);
            }
        }
}

/* IOMMU and AER of one device (a GPU or NIC with a PCI address). */
static void nt_nodechecks_device(const char *bdf, const char *host, cJSON *checks)
{
    nt_iommu_t m;
    nt_aer_t e;
    nt_nodecheck_t c;

    if (!bdf || !*bdf)
        return;
    nt_iommu_read(bdf, &m);
    nt_iommu_judge(&m, &c);
    nt_nodechecks_put(checks, &c, host);
    nt_aer_read(bdf, &e);
    nt_aer_judge(&e, &c);
    nt_nodechecks_put(checks, &c, host);
}

/* Xid events of the kernel log: one verdict per GPU of topo; without GPUs in topo (a node whose
 * GPUs only NVML sees) one for the node, and only when the log holds Xid lines. */
static void nt_nodechecks_xid(const nt_topo_t *topo, const char *host, cJSON *checks)
{
    nt_xid_log_t *log = malloc(sizeof(*log));
    nt_nodecheck_t c;

    if (!log)
        return;
    nt_xid_read(log);
    for (int g = 0; g < topo->ngpus; g++) {
        char t[16];
        snprintf(t, sizeof(t), "gpu%d", g);
        nt_xid_judge(log, topo->gpus[g].pci_bus_id, t, &c);
        nt_nodechecks_put(checks, &c, host);
    }
    if (topo->ngpus == 0 && log->total) {
        nt_xid_judge(log, NULL, "node", &c);
        nt_nodechecks_put(checks, &c, host);
    }
    free(log);
}

void nt_nodechecks_node(const nt_topo_t *topo, const char *host, const char *nccl_version,
                        cJSON *checks)
{
    nt_nodecheck_t c;

    if (!topo || !checks)
        return;
    nt_nodechecks_acs(topo, host, checks);
    nt_nodechecks_xid(topo, host, checks);
    for (int g = 0; g < topo->ngpus; g++)
        nt_nodechecks_device(topo->gpus[g].pci_bus_id, host, checks);
    for (int n = 0; n < topo->nnics; n++)
        nt_nodechecks_device(topo->nics[n].pci_bus_id, host, checks);
    /* The locked-memory limit binds ibv_reg_mr: it matters where there is an RDMA NIC. */
    if (topo->nnics > 0) {
        nt_memlock_t m;
        nt_memlock_read(&m);
        nt_memlock_judge(&m, &c);
        nt_nodechecks_put(checks, &c, host);
    }
    if (topo->ngpus >= 2) {
        nt_shm_t s;
        nt_shm_read(topo->ngpus, &s);
        nt_shm_judge(&s, &c);
        nt_nodechecks_put(checks, &c, host);
    }
    if (topo->ngpus > 0 && topo->nnics > 0) {
        nt_peermem_t p;
        nt_peermem_read(nt_nodechecks_nccl_code(nccl_version), &p);
        nt_peermem_judge(&p, &c);
        nt_nodechecks_put(checks, &c, host);
        nt_nvidia_fs_judge(&p, &c);
        nt_nodechecks_put(checks, &c, host);
        nt_dmabuf_judge(&p, &c);
        nt_nodechecks_put(checks, &c, host);
    }
}

void nt_nodechecks_gpus(int ngpus, const char *host, cJSON *checks)
{
    static void (*const rules[])(const nt_gpu_health_t *, nt_nodecheck_t *) = {
        nt_gpu_ecc_judge, nt_gpu_remap_judge, nt_gpu_throttle_judge, nt_gpu_persistence_judge,
        nt_gpu_reset_judge, nt_gpu_retired_judge};

    if (!checks)
        return;
    for (int g = 0; g < ngpus; g++) {
        nt_gpu_health_t h;
        if (nt_nvml_health(g, &h) != NT_OK)
            continue;
        for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
            nt_nodecheck_t c;
            if (rules[r] == nt_gpu_retired_judge && !nt_gpu_retired_applies(&h))
                continue;
            rules[r](&h, &c);
            nt_nodechecks_put(checks, &c, host);
        }
    }
}
