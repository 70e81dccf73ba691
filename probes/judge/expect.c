/* The judging half of the thresholds (include/nettune/thresholds.h): a node's inventory and a
 * device's PCIe link against the expectations that lib/core/thresholds.c reads. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nettune/report.h"
#include "nettune/thresholds.h"

static nt_status_t nt_add_check(cJSON *checks, cJSON *c)
{
    if (!c)
        return NT_ERR_NOMEM;
    cJSON_AddItemToArray(checks, c);
    return NT_OK;
}

static const char *nt_plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

nt_status_t nt_inventory_check(const nt_expect_t *expect, unsigned require, int ngpus_found,
                               int active_rdma_ports, int unknown_state_ports,
                               double min_port_rate_Gbps, int unknown_rate_ports, const char *host,
                               cJSON *checks)
{
    if (!checks)
        return NT_ERR_INVALID;
    nt_expect_t none;
    nt_expect_init(&none);
    const nt_expect_t *e = expect ? expect : &none;
    nt_status_t st;
    if (ngpus_found < 0)
        ngpus_found = 0;
    if (active_rdma_ports < 0)
        active_rdma_ports = 0;
    if (unknown_state_ports < 0)
        unknown_state_ports = 0;
    if (unknown_rate_ports < 0)
        unknown_rate_ports = 0;

    if (e->gpus >= 1 || (e->gpus == 0 && !(require & NT_REQUIRE_GPU))) {
        nt_verdict_t v = ngpus_found < e->gpus ? NT_FAIL : NT_PASS;
        st =
            nt_add_check(checks, nt_check_create("inventory", host, "gpus", v, ngpus_found, e->gpus,
                                                 "count", "%d %s found, %d expected", ngpus_found,
                                                 nt_plural(ngpus_found, "GPU", "GPUs"), e->gpus));
        if (st != NT_OK)
            return st;
    } else if (require & NT_REQUIRE_GPU) {
        nt_verdict_t v = ngpus_found >= 1 ? NT_PASS : NT_FAIL;
        st = nt_add_check(checks, nt_check_create("inventory", host, "gpus", v, ngpus_found, 1,
                                               "count", "%d %s found, at least 1 required",
                                               ngpus_found, nt_plural(ngpus_found, "GPU", "GPUs")));
        if (st != NT_OK)
            return st;
    }

    if (e->nics >= 1 && active_rdma_ports < e->nics &&
        active_rdma_ports + unknown_state_ports >= e->nics) {
        /* The ports of unknown state could be the missing ones: not judged, never a failure. */
        st = nt_add_check(checks,
                          nt_check_create("inventory", host, "rdma_ports", NT_NOT_JUDGED,
                                          active_rdma_ports, e->nics, "count",
                                          "%d ACTIVE RDMA %s and %d of unknown state, %d expected: "
                                          "not judged",
                                          active_rdma_ports,
                                          nt_plural(active_rdma_ports, "port", "ports"),
                                          unknown_state_ports, e->nics));
        if (st != NT_OK)
            return st;
    } else if (e->nics >= 1 || (e->nics == 0 && !(require & NT_REQUIRE_RDMA))) {
        nt_verdict_t v = active_rdma_ports < e->nics ? NT_FAIL : NT_PASS;
        st = nt_add_check(
            checks, nt_check_create("inventory", host, "rdma_ports", v, active_rdma_ports, e->nics,
                                    "count", "%d ACTIVE RDMA %s, %d expected", active_rdma_ports,
                                    nt_plural(active_rdma_ports, "port", "ports"), e->nics));
        if (st != NT_OK)
            return st;
    } else if (require & NT_REQUIRE_RDMA) {
        nt_verdict_t v = active_rdma_ports >= 1 ? NT_PASS : NT_FAIL;
        st = nt_add_check(checks,
                          nt_check_create("inventory", host, "rdma_ports", v, active_rdma_ports, 1,
                                          "count", "%d ACTIVE RDMA %s, at least 1 required",
                                          active_rdma_ports,
                                          nt_plural(active_rdma_ports, "port", "ports")));
        if (st != NT_OK)
            return st;
    }

    if (e->nic_rate_Gbps > 0) {
        cJSON *c;
        int known = min_port_rate_Gbps > 0;
        if (active_rdma_ports == 0 && unknown_state_ports > 0)
            c = nt_check_create("inventory", host, "nic_rate", NT_NOT_JUDGED, NAN, e->nic_rate_Gbps,
                                "Gb/s",
                                "no ACTIVE RDMA port, %d of unknown state, %g Gb/s expected: "
                                "not judged",
                                unknown_state_ports, e->nic_rate_Gbps);
        else if (active_rdma_ports == 0)
            c = nt_check_create("inventory", host, "nic_rate", NT_FAIL, NAN, e->nic_rate_Gbps,
                                "Gb/s", "no ACTIVE RDMA port, %g Gb/s expected", e->nic_rate_Gbps);
        else if (!known || (unknown_rate_ports > 0 && min_port_rate_Gbps >= e->nic_rate_Gbps))
            c = nt_check_create("inventory", host, "nic_rate", NT_NOT_JUDGED,
                                known ? min_port_rate_Gbps : NAN, e->nic_rate_Gbps, "Gb/s",
                                "rate of %d of the %d ACTIVE RDMA %s unknown (no rate recorded, "
                                "e.g. a topology file), %g Gb/s expected: not judged",
                                known ? unknown_rate_ports : active_rdma_ports, active_rdma_ports,
                                nt_plural(active_rdma_ports, "port", "ports"), e->nic_rate_Gbps);
        else
            c = nt_check_create("inventory", host, "nic_rate",
                                min_port_rate_Gbps < e->nic_rate_Gbps ? NT_FAIL : NT_PASS,
                                min_port_rate_Gbps, e->nic_rate_Gbps, "Gb/s",
                                "slowest ACTIVE RDMA port runs %g Gb/s, %g Gb/s expected",
                                min_port_rate_Gbps, e->nic_rate_Gbps);
        if ((st = nt_add_check(checks, c)) != NT_OK)
            return st;
    }
    return NT_OK;
}

nt_verdict_t nt_expect_pcie_judge(const nt_expect_t *e, const char *bdf, const char *label,
                                  int cap_gen, int cap_width, int cur_width, char *msg, size_t len)
{
    char who[96];
    if (label && label[0])
        snprintf(who, sizeof(who), "%s (%s)", bdf ? bdf : "?", label);
    else
        snprintf(who, sizeof(who), "%s", bdf ? bdf : "?");
    if (msg && len)
        msg[0] = '\0';
    if (!e || e->pcie_gen <= 0) {
        if (msg && len)
            snprintf(msg, len, "%s: no PCIe expectation", who);
        return NT_SKIPPED;
    }
    if (cap_gen <= 0 || cap_width <= 0) {
        if (msg && len)
            snprintf(msg, len, "%s: PCIe capability unknown, gen%dx%d expected: not judged", who,
                     e->pcie_gen, e->pcie_width);
        return NT_NOT_JUDGED;
    }
    if (cap_gen < e->pcie_gen || cap_width < e->pcie_width) {
        if (msg && len)
            snprintf(msg, len, "%s capable of gen%dx%d, gen%dx%d expected", who, cap_gen, cap_width,
                     e->pcie_gen, e->pcie_width);
        return NT_FAIL;
    }
    if (cur_width > 0 && cur_width < e->pcie_width) {
        if (msg && len)
            snprintf(msg, len, "%s runs x%d, x%d expected", who, cur_width, e->pcie_width);
        return NT_FAIL;
    }
    if (msg && len)
        snprintf(msg, len, "%s capable of gen%dx%d, gen%dx%d expected", who, cap_gen, cap_width,
                 e->pcie_gen, e->pcie_width);
    return NT_PASS;
}
