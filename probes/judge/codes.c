/* The check table's codes on the report: every check, every failed or warned link and every
 * failed node carries the code of its row (include/nettune/checks.def) and the row's category.
 * Where a check's creator knows which of its check's rows it is (nt_judge_code_add), it says
 * so; otherwise the row follows from the check's name and its target or unit below. */
#include <math.h>
#include <string.h>

#include "judge_int.h"
#include "nettune/gpu.h"
#include "nettune/log.h"

void nt_judge_code_add(cJSON *obj, const char *code)
{
    const nt_check_row_t *row = nt_check_by_code(code);

    if (!obj || !row) {
        if (code)
            NT_ERROR(VERDICT, "no check table row has the code '%s'", code);
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "code");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "category");
    nt_json_add_str(obj, "code", row->code);
    nt_json_add_str(obj, "category", nt_category_name(row->category));
}

/* The rows of a link kind's faults: bandwidth, latency, tail latency, flaky, no measurement. */
typedef struct nt_link_rows {
    const char *metric[3]; /* by NT_METRIC_* */
    const char *flaky, *error;
} nt_link_rows_t;

static const nt_link_rows_t nt_link_rows_net = {
    {"NT-NET-001", "NT-NET-002", "NT-NET-003"}, "NT-NET-004", "NT-NET-005"};
static const nt_link_rows_t nt_link_rows_rdma = {
    {"NT-RDMA-007", "NT-RDMA-008", "NT-RDMA-009"}, "NT-RDMA-010", "NT-RDMA-011"};
static const nt_link_rows_t nt_link_rows_gpu = {
    {"NT-GPU-007", "NT-GPU-008", "NT-GPU-009"}, "NT-GPU-010", "NT-GPU-011"};

/* GPU links (PCIe copies, P2P, NVLink) are the GPU's; RDMA links the NIC's; the rest (MPI over
 * whatever transport) the network's. */
static const nt_link_rows_t *nt_link_rows_of(const char *kind)
{
    if (kind && (nt_gpu_is_link_kind(kind) || strcmp(kind, "nvlink") == 0))
        return &nt_link_rows_gpu;
    if (kind && strncmp(kind, "rdma", 4) == 0)
        return &nt_link_rows_rdma;
    return &nt_link_rows_net;
}

const char *nt_link_code(const char *kind, int metric, int flaky)
{
    const nt_link_rows_t *r = nt_link_rows_of(kind);
    if (flaky)
        return r->flaky;
    return metric >= 0 && metric < 3 ? r->metric[metric] : r->metric[0];
}

const char *nt_link_error_code(const char *kind)
{
    return nt_link_rows_of(kind)->error;
}

static int nt_ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* The row of a check its creator did not name: its name's row, or, for names with several
 * rows, the one its target, unit or expected figure says. NULL: no row has its name. */
static const char *nt_check_default_code(const cJSON *c)
{
    const char *name = nt_json_get_str(c, "name", "");
    const char *target = nt_json_get_str(c, "target", "");
    const char *unit = nt_json_get_str(c, "unit", "");

    if (strcmp(name, "inventory") == 0) {
        if (strcmp(target, "gpus") == 0)
            return "NT-INV-001";
        if (strcmp(target, "rdma_ports") == 0)
            return "NT-INV-002";
        if (strcmp(target, "nic_rate") == 0)
            return "NT-INV-003";
        if (strcmp(target, "nvlinks") == 0)
            return "NT-NVL-002";
        if (strcmp(nt_json_get_str(c, "observed", ""), "lost") == 0)
            return "NT-INV-004";
        return "NT-PCIE-003"; /* a device's PCIe expectation (nodes.c names the width row) */
    }
    if (strcmp(name, "pcie_link") == 0) {
        /* lib/pcie.c files a slower link in GT/s; the GPU probe's check is in lanes, and one
         * whose lanes are all there failed on its generation */
        double o = nt_json_get_num(c, "observed", NAN), e = nt_json_get_num(c, "expected", NAN);
        if (strcmp(unit, "GT/s") == 0 || (strcmp(unit, "lanes") == 0 && o >= e &&
                                          strcmp(nt_json_get_str(c, "verdict", ""), "pass") != 0))
            return "NT-PCIE-002";
        return "NT-PCIE-001";
    }
    if (strcmp(name, "software_consistency") == 0)
        return cJSON_GetObjectItemCaseSensitive(c, "expected") ? "NT-SW-001" : "NT-SW-002";
    if (strcmp(name, "config_drift") == 0)
        return strcmp(nt_json_get_str(c, "reference", ""), "baseline") == 0 ? "NT-CFG-010"
               : cJSON_GetObjectItemCaseSensitive(c, "expected")            ? "NT-CFG-008"
                                                                            : "NT-CFG-009";
    if (strcmp(name, "error_counters") == 0)
        return nt_ends_with(target, " nvlink") ? "NT-GPU-005" : "NT-RDMA-003";
    for (size_t i = 0; i < nt_check_count(); i++)
        if (strcmp(nt_check_at(i)->check, name) == 0)
            return nt_check_at(i)->code;
    return NULL;
}

void nt_finish_check_codes(cJSON *checks)
{
    cJSON *c;
    cJSON_ArrayForEach (c, checks) {
        const char *code;
        if (cJSON_GetObjectItemCaseSensitive(c, "code"))
            continue;
        if ((code = nt_check_default_code(c)))
            nt_judge_code_add(c, code);
        else
            NT_ERROR(VERDICT, "check '%s' has no row in the check table (checks.def)",
                     nt_json_get_str(c, "name", "?"));
    }
}
