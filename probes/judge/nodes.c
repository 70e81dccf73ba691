/* The node glue of the judge: expectation checks of one node, software consistency, and the
 * node policy (which node fails, and with which first reason and code). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "judge_int.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "nettune/software.h"



void nt_judge_node_checks(const nt_judge_t *j, const char *host, const cJSON *node_json,
                          cJSON *checks)
{
    nt_node_rules_t r;
    const cJSON *nics = cJSON_GetObjectItemCaseSensitive(node_json, "nics");
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(node_json, "gpus");
    const cJSON *it;
    int active = 0, unknown_state = 0, unknown_rate = 0;
    double min_rate = NAN;

    nt_rules_for(j, host, node_json, &r);
    cJSON_ArrayForEach (it, nics) {
        const char *state = nt_json_get_str(it, "state", "");
        /* A state hwloc or sysfs did not record is unknown, not "not ACTIVE". */
        if (!*state || strcasecmp(state, "unknown") == 0) {
            unknown_state++;
            continue;
        }
        if (strcmp(state, "ACTIVE") != 0)
            continue;
        double rate = nt_json_get_num(it, "rate_Gbps", NAN);
        active++;
        if (!(rate > 0))
            unknown_rate++;
        else if (!isfinite(min_rate) || rate < min_rate)
            min_rate = rate;
    }
    nt_inventory_check(&r.expect, j->require, cJSON_GetArraySize(gpus), active, unknown_state,
                       min_rate, unknown_rate, host, checks);
    /* pcie=genXxW: each GPU's and NIC's capability against the expectation. */
    if (r.expect.pcie_gen > 0 && cJSON_GetArraySize(gpus) + cJSON_GetArraySize(nics) == 0) {
        /* Nothing to hold to it: said, never silently dropped. */
        cJSON *c = nt_check_create("inventory", host, "pcie", NT_NOT_JUDGED, NAN, NAN, NULL,
                                   "gen%dx%d expected: no GPU or NIC found on this node, not "
                                   "judged",
                                   r.expect.pcie_gen, r.expect.pcie_width);
        if (c)
            cJSON_AddItemToArray(checks, c);
    }
    if (r.expect.pcie_gen > 0) {
        const cJSON *lists[2] = {gpus, nics};
        for (int k = 0; k < 2; k++) {
            cJSON_ArrayForEach (it, lists[k]) {
                const cJSON *pc = cJSON_GetObjectItemCaseSensitive(it, "pcie");
                char msg[256] = "", label[64];
                const char *bdf = nt_json_get_str(it, "pci_bus_id", "?");
                nt_verdict_t v;
                if (k == 0)
                    snprintf(label, sizeof(label), "GPU %d", (int)nt_json_get_num(it, "index", -1));
                else
                    snprintf(label, sizeof(label), "%s", nt_json_get_str(it, "name", "NIC"));
                if (!pc) {
                    /* Never a silent pass: say that the expectation could not be judged. */
                    cJSON *c = nt_check_create(
                        "inventory", host, label, NT_NOT_JUDGED, NAN, NAN, NULL,
                        "%s (%s): PCIe link state unknown (no sysfs link files here, or a "
                        "topology file from another machine): gen%dx%d expected, not judged",
                        bdf, label, r.expect.pcie_gen, r.expect.pcie_width);
                    if (c)
                        cJSON_AddItemToArray(checks, c);
                    continue;
                }
                v = nt_expect_pcie_judge(&r.expect, bdf, label,
                                         (int)nt_json_get_num(pc, "max_gen", 0),
                                         (int)nt_json_get_num(pc, "max_width", 0),
                                         (int)nt_json_get_num(pc, "width", 0), msg, sizeof(msg));
                {
                    cJSON *c =
                        nt_check_create("inventory", host, label, v, NAN, NAN, NULL, "%s",
                                        msg[0] ? msg : "PCIe capability unknown: not judged");
                    /* capable of what is expected, and failed: it runs narrower */
                    int capable = (int)nt_json_get_num(pc, "max_gen", 0) >= r.expect.pcie_gen &&
                                  (int)nt_json_get_num(pc, "max_width", 0) >= r.expect.pcie_width;
                    nt_judge_code_add(c, v == NT_FAIL && capable ? "NT-PCIE-004" : "NT-PCIE-003");
                    if (c)
                        cJSON_AddItemToArray(checks, c);
                }
            }
        }
    }
}


static void nt_node_fails(nt_nodefail_t *nf, const char *cause, const char *code,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void nt_node_fails(nt_nodefail_t *nf, const char *cause, const char *code,
                          const char *fmt, ...)
{
    va_list ap;
    nf->verdict = NT_FAIL;
    if (nf->reason[0]) {
        nf->more++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(nf->reason, sizeof(nf->reason), fmt, ap);
    va_end(ap);
    nf->cause = cause;
    nf->code = code;
}

/* "7/8count" is no unit: units that are words are left out of the figure. */
const char *nt_fig_unit(const char *unit)
{
    return !unit || strcmp(unit, "count") == 0 ? "" : unit;
}

const char *nt_judge_check_word(const cJSON *c)
{
    const char *t = nt_json_get_str(c, "target", "");
    if (strcmp(nt_json_get_str(c, "name", ""), "inventory") == 0 && *t &&
        strspn(t, "abcdefghijklmnopqrstuvwxyz_") == strlen(t))
        return t;
    return nt_json_get_str(c, "name", "check");
}

/* The NIC firmware versions of a node (its nics[].firmware, distinct, sorted) as one software
 * entry "nic_firmware", so that a node whose NICs run other firmware than the majority is a
 * software_consistency warning like a different driver (docs/topology.md "Consistency across nodes"). */
static int nt_cmp_fw(const void *a, const void *b)
{
    return strcmp(a, b);
}

void nt_node_nic_firmware(cJSON *node)
{
    cJSON *sw = cJSON_GetObjectItemCaseSensitive(node, "software"), *it;
    char fw[16][64], out[1100] = "";
    int n = 0;

    if (!sw || cJSON_GetObjectItemCaseSensitive(sw, "nic_firmware"))
        return;
    cJSON_ArrayForEach (it, cJSON_GetObjectItemCaseSensitive(node, "nics")) {
        const char *v = nt_json_get_str(it, "firmware", NULL);
        int dup = 0;
        if (!v || !*v)
            continue;
        for (int k = 0; k < n; k++)
            dup |= strcmp(fw[k], v) == 0;
        if (!dup && n < 16)
            snprintf(fw[n++], sizeof(fw[0]), "%s", v);
    }
    if (n == 0)
        return;
    qsort(fw, (size_t)n, sizeof(fw[0]), nt_cmp_fw);
    for (int k = 0; k < n; k++)
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", k ? ", " : "", fw[k]);
    nt_json_add_str(sw, "nic_firmware", out);
}

/* --tuning-file: the nodes' tuning_file objects (inventory.c). A node whose copy is missing or
 * does not load fails (NT-CFG-012); the loaded copies are grouped by fnv1a64 with the one
 * grouping rule, and a copy that differs from the majority fails (NT-CFG-011, a tie fails
 * every node); the others pass with the file's hash and rule count. */
static void nt_finish_tuning_file(nt_finish_t *f)
{
    int nn = cJSON_GetArraySize(f->nodes), nl = 0;
    const cJSON **tf = calloc((size_t)nn + 1, sizeof(*tf));
    const char **hosts = calloc((size_t)nn + 1, sizeof(*hosts));
    nt_sw_rule_t rule = {"tuning_file", NT_FAIL, "file", "none", 0, NULL};
    cJSON *it, *c;

    if (!tf || !hosts)
        goto out;
    cJSON_ArrayForEach (it, f->nodes) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "tuning_file");
        const char *host = nt_json_get_str(it, "hostname", "?"),
                   *path = nt_json_get_str(t, "path", "");
        const char *err = nt_json_get_str(t, "error", NULL);
        if (!cJSON_IsObject(t))
            continue;
        if (err) {
            int missing = strncmp(err, "cannot open", 11) == 0;
            c = nt_check_create_str("tuning_file", host, path, NT_FAIL,
                                    missing ? "missing" : "does not load", "loads",
                                    "tuning file %s %s on this node: %s", path,
                                    missing ? "is missing" : "does not load", err);
            if (c && cJSON_AddItemToArray(f->checks, c))
                nt_judge_code_add(c, "NT-CFG-012");
            else
                cJSON_Delete(c);
            continue;
        }
        tf[nl] = t;
        hosts[nl++] = host;
    }
    if (nl > 0) {
        int before = cJSON_GetArraySize(f->checks), k = 0;
        nt_software_group(tf, hosts, nl, &rule, "fnv1a64", f->checks);
        cJSON_ArrayForEach (c, f->checks) {
            char msg[1024];
            const char *path = "";
            if (k++ < before)
                continue;
            for (int i = 0; i < nl; i++) /* the node's own path in target and message */
                if (strcmp(hosts[i], nt_json_get_str(c, "host", "")) == 0)
                    path = nt_json_get_str(tf[i], "path", "");
            snprintf(msg, sizeof(msg), "tuning file %s: %s", path,
                     nt_json_get_str(c, "message", ""));
            cJSON_ReplaceItemInObjectCaseSensitive(c, "message", cJSON_CreateString(msg));
            cJSON_ReplaceItemInObjectCaseSensitive(c, "target", cJSON_CreateString(path));
            nt_judge_code_add(c, "NT-CFG-011");
        }
        for (int i = 0; i < nl; i++) {
            int named = 0;
            k = 0;
            cJSON_ArrayForEach (c, f->checks)
                named |= k++ >= before && strcmp(nt_json_get_str(c, "host", ""), hosts[i]) == 0;
            if (named)
                continue;
            c = nt_check_create_str("tuning_file", hosts[i], nt_json_get_str(tf[i], "path", ""),
                                    NT_PASS, nt_json_get_str(tf[i], "fnv1a64", ""), NULL,
                                    "tuning file %s loads (%.0f rules), fnv1a64 %s, the same "
                                    "on every node that has it",
                                    nt_json_get_str(tf[i], "path", ""),
                                    nt_json_get_num(tf[i], "rules", 0),
                                    nt_json_get_str(tf[i], "fnv1a64", ""));
            if (c && cJSON_AddItemToArray(f->checks, c))
                nt_judge_code_add(c, "NT-CFG-011");
            else
                cJSON_Delete(c);
        }
    }
out:
    free(tf);
    free(hosts);
}

void nt_finish_software(nt_finish_t *f)
{
    /* Software versions that differ from the majority (kernel, driver, CUDA, NCCL, ...), and
     * what drifted: versions from a --baseline, the NCCL_* environment from the baseline or
     * the majority (docs/verdicts.md "Drift across nodes"). */
    int nn = cJSON_GetArraySize(f->nodes), i = 0;
    int nb = f->j->base_sw ? cJSON_GetArraySize(f->j->base_sw) : 0;
    const cJSON **sw = calloc((size_t)nn + 1, sizeof(*sw));
    const cJSON **env = calloc((size_t)nn + 1, sizeof(*env));
    const cJSON **bsw = calloc((size_t)nb + 1, sizeof(*bsw));
    const cJSON **benv = calloc((size_t)nb + 1, sizeof(*benv));
    const char **hosts = calloc((size_t)nn + 1, sizeof(*hosts));
    cJSON *it;

    if (sw && env && bsw && benv && hosts) {
        cJSON_ArrayForEach (it, f->nodes) {
            const cJSON *e = cJSON_GetObjectItemCaseSensitive(it, "environment");
            nt_node_nic_firmware(it);
            sw[i] = cJSON_GetObjectItemCaseSensitive(it, "software");
            env[i] = cJSON_IsObject(e) ? e : NULL;
            hosts[i++] = nt_json_get_str(it, "hostname", "?");
        }
        for (int k = 0; k < nb; k++) {
            const cJSON *e = cJSON_GetArrayItem(f->j->base_env, k);
            bsw[k] = cJSON_GetArrayItem(f->j->base_sw, k);
            benv[k] = cJSON_IsObject(e) ? e : NULL;
        }
        if (nn > 1)
            nt_software_consistency(sw, hosts, nn, f->j->strict, f->checks);
        if (nn > 1 || nb > 0)
            nt_config_drift(sw, env, hosts, nn, bsw, benv, nb, f->checks);
    }
    nt_finish_tuning_file(f);
    free(sw);
    free(env);
    free(bsw);
    free(benv);
    free(hosts);
}

/* A link inside one node (a GPU's PCIe or NVLink, a device) that fails its expected hardware
 * figure is the node's own failure; a peer finding alone inside one node (two ranks on one
 * host) stays a link fault: the node warns. */
static void nt_nodes_own_links(nt_finish_t *f)
{
    for (size_t i = 0; !f->usage && i < f->fs.n; i++) {
        const nt_vlink_t *x = &f->fs.v[i];
        char a[32], b[32];
        cJSON *l;
        if (!nt_vlink_is_link_fault(x) || !(x->fired & NT_FIRED_EXPECTED) || x->src_node < 0 ||
            x->src_node >= f->nnodes || (x->dst_node >= 0 && x->dst_node != x->src_node))
            continue;
        l = nt_json_thaw(f->fs.f[i].link);
        nt_node_fails(
            &f->nf[x->src_node], nt_metric_cause(x->metric), nt_link_code(x->kind, x->metric, 0),
            "nettune:%s %s/%s%s %s: %s", nt_metric_check(x->metric),
            nt_fmt_fig(a, sizeof(a),
                       x->retested && !isnan(x->retest_value) ? x->retest_value : x->value),
            nt_fmt_fig(b, sizeof(b), (x->fired & NT_FIRED_EXPECTED) ? x->expected : x->reference),
            nt_metric_unit(x->metric), nt_json_get_str(l, "id", "?"), x->reason);
        nt_json_thaw_end(f->fs.f[i].link, l, 0);
    }
}

/* A failed check fails its node, with the check and its figures first in the reason. */
static void nt_nodes_checks(nt_finish_t *f)
{
    cJSON *it;
    cJSON_ArrayForEach (it, f->checks) {
        nt_verdict_t v = nt_get_verdict(it);
        int k = nt_node_index(&f->fs, nt_json_get_str(it, "host", ""));
        nt_nodefail_t *nf;
        if (k < 0 || k >= f->nnodes)
            continue;
        nf = &f->nf[k];
        if (v == NT_FAIL) {
            double o = nt_json_get_num(it, "observed", NAN),
                   e = nt_json_get_num(it, "expected", NAN);
            const char *code = nt_json_get_str(it, "code", NULL);
            char a[32], b[32];
            if (isfinite(o) || isfinite(e))
                nt_node_fails(nf, "check", code, "nettune:%s %s/%s%s %s", nt_judge_check_word(it),
                              nt_fmt_fig(a, sizeof(a), o), nt_fmt_fig(b, sizeof(b), e),
                              nt_fig_unit(nt_json_get_str(it, "unit", NULL)),
                              nt_json_get_str(it, "message", ""));
            else
                nt_node_fails(nf, "check", code, "nettune:%s %s", nt_judge_check_word(it),
                              nt_json_get_str(it, "message", ""));
        }
        if (v == NT_PASS || v == NT_WARN || v == NT_FAIL)
            f->judged[k] = 1;
        if (v == NT_NOT_JUDGED && nf->verdict == NT_SKIPPED)
            nf->verdict = NT_NOT_JUDGED;
        else if (v != NT_FAIL && v != NT_NOT_JUDGED)
            nf->verdict = nt_verdict_worse(nf->verdict, v);
    }
}

/* failed_nodes: one entry per failed node, in node order, then hosts without an entry. */
static nt_status_t nt_nodes_failed_list(nt_finish_t *f)
{
    const nt_judge_t *j = f->j;
    for (int k = 0; k < f->nnodes + j->nsilent; k++) {
        cJSON *o;
        if (!f->nf[k].reason[0])
            continue;
        f->overall = NT_FAIL;
        if (!(o = cJSON_CreateObject()))
            return NT_ERR_NOMEM;
        nt_json_add_str(o, "host",
                        k < f->nnodes
                            ? nt_json_get_str(cJSON_GetArrayItem(f->nodes, k), "hostname", "?")
                            : j->silent[k - f->nnodes].host);
        nt_json_add_str(o, "reason", f->nf[k].reason);
        nt_json_add_str(o, "cause", f->nf[k].cause ? f->nf[k].cause : "check");
        if (f->nf[k].more)
            nt_json_add_num(o, "more_reasons", f->nf[k].more);
        nt_judge_code_add(o, f->nf[k].code);
        cJSON_AddItemToArray(f->failed_nodes, o);
    }
    return NT_OK;
}

nt_status_t nt_finish_nodes(nt_finish_t *f)
{
    const nt_judge_t *j = f->j;
    cJSON *it;
    int i;

    /* Node verdicts, computed here once (every renderer reads nodes[].verdict). A node fails
     * only when it stopped answering, is blamed, has a link of its own (inside the node) that
     * failed its expected figure, or fails a check of its own; a failed or warned link makes
     * it warn, unless the link is bad only because a node at one of its ends is blamed ("caused
     * by blamed node X": that node fails, its healthy partner has nothing of its own to warn
     * about). */
    f->nf = calloc((size_t)f->nnodes + (size_t)j->nsilent + 1, sizeof(*f->nf));
    if (!f->nf)
        return NT_ERR_NOMEM;
    for (i = 0; i < f->nnodes; i++)
        f->nf[i].verdict = f->nv && i < f->fs.nnodes ? f->nv[i].verdict : NT_SKIPPED;
    for (int s = 0; s < j->nsilent; s++) {
        int k = nt_node_index(&f->fs, j->silent[s].host);
        if (k < 0 || k >= f->nnodes)
            k = f->nnodes + s; /* a host without a nodes[] entry still goes to failed_nodes */
        nt_node_fails(&f->nf[k], "no_answer", "NT-RUN-002", "nettune:no_answer %s",
                      j->silent[s].why);
    }
    for (i = 0; f->nv && i < f->fs.nnodes && i < f->nnodes; i++)
        if (f->nv[i].blamed)
            nt_node_fails(&f->nf[i], f->nv[i].cause ? f->nv[i].cause : "links",
                          f->nv[i].metric >= 0 ? nt_link_code(f->nv[i].kind, f->nv[i].metric, 0)
                                               : "NT-RUN-003",
                          "%s", f->nv[i].reason);
    nt_nodes_own_links(f);
    for (size_t li = 0; li < f->nlinks; li++) {
        int ends[2] = {f->lv[li].src, f->lv[li].dst};
        if (f->lv[li].own != NT_FAIL && f->lv[li].own != NT_WARN)
            continue;
        for (int e = 0; e < 2; e++) {
            int k = ends[e];
            if (k >= 0 && k < f->nnodes)
                f->nf[k].verdict = nt_verdict_worse(f->nf[k].verdict, NT_WARN);
        }
    }
    nt_nodes_checks(f);
    /* a node nothing judged (its links not judged, no check of its own) is not judged */
    for (i = 0; i < f->nnodes && i < f->fs.nnodes; i++)
        if (f->nf[i].verdict == NT_PASS && !f->judged[i])
            f->nf[i].verdict = NT_NOT_JUDGED;
    i = 0;
    cJSON_ArrayForEach (it, f->nodes) {
        nt_set_str(it, "verdict", nt_verdict_string(f->nf[i].verdict));
        i++;
    }
    return nt_nodes_failed_list(f);
}
