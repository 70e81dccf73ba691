/* GPU health rules on NVML facts (include/nettune/nodecheck.h); lib/node/nvml.c reads them, or
 * lib/node/opfiles.c from an operator's nvidia-smi -q. */
#include <stdio.h>

#include "nettune/nodecheck.h"

static void nt_gpu_target(const nt_gpu_health_t *h, char *buf, size_t len)
{
    snprintf(buf, len, "gpu%d", h->index);
}

/* Why a fact is unknown, in the words of where the facts came from: the NVML call that gave
 * nothing, or the nvidia-smi -q section the operator's file lacks (its nvidia-smi did not print
 * it, or printed N/A). */
static const char *nt_gpu_unknown(const nt_gpu_health_t *h, const char *nvml, const char *smi)
{
    return h->source ? smi : nvml;
}

void nt_gpu_ecc_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out)
{
    char t[16], obs[96];

    nt_gpu_target(h, t, sizeof(t));
    if (!h->ecc_ok) {
        nt_nodecheck_set(out, "gpu_ecc", "NT-GPU-012", NT_NOT_JUDGED, t, "", "0 uncorrectable",
                         "%s",
                         nt_gpu_unknown(h,
                                        "NVML gives no ECC counts (nvmlDeviceGetTotalEccErrors: "
                                        "ECC off or not supported)",
                                        "nvidia-smi -q shows no uncorrectable ECC counts (\"ECC "
                                        "Errors\" absent or N/A: ECC off or not supported)"));
        return;
    }
    snprintf(obs, sizeof(obs), "uncorrectable volatile %llu, aggregate %llu",
             h->ecc_uncorr_volatile, h->ecc_uncorr_aggregate);
    if (h->ecc_uncorr_volatile)
        nt_nodecheck_set(out, "gpu_ecc", "NT-GPU-012", NT_FAIL, t, obs, "0 volatile",
                         "uncorrectable ECC errors since the driver loaded: jobs on this GPU "
                         "may fail with XID 48/63/94");
    else if (h->ecc_uncorr_aggregate)
        nt_nodecheck_set(out, "gpu_ecc", "NT-GPU-013", NT_WARN, t, obs, "0 aggregate",
                         "uncorrectable ECC errors in the GPU's lifetime, none since the "
                         "driver loaded");
    else
        nt_nodecheck_set(out, "gpu_ecc", "NT-GPU-012", NT_PASS, t, obs, "0 uncorrectable",
                         "no uncorrectable ECC errors");
}

void nt_gpu_remap_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out)
{
    char t[16], obs[96];

    nt_gpu_target(h, t, sizeof(t));
    if (!h->remap_ok) {
        nt_nodecheck_set(out, "gpu_row_remap", "NT-GPU-014", NT_NOT_JUDGED, t, "",
                         "pending no, failure no",
                         "%s",
                         nt_gpu_unknown(h,
                                        "NVML gives no row remapping (nvmlDeviceGetRemappedRows: "
                                        "before Ampere, or not supported)",
                                        "nvidia-smi -q shows no \"Remapped Rows\" (before "
                                        "Ampere, or N/A)"));
        return;
    }
    snprintf(obs, sizeof(obs), "pending %s, failure %s, uncorrectable rows %u",
             h->remap_pending ? "yes" : "no", h->remap_failed ? "yes" : "no",
             h->remap_uncorr_rows);
    if (h->remap_failed)
        nt_nodecheck_set(out, "gpu_row_remap", "NT-GPU-015", NT_FAIL, t, obs,
                         "pending no, failure no",
                         "row remapping failed: the GPU has no spare rows for a bad one");
    else if (h->remap_pending)
        nt_nodecheck_set(out, "gpu_row_remap", "NT-GPU-014", NT_WARN, t, obs,
                         "pending no, failure no",
                         "a row remap is pending: it takes effect at the next GPU reset");
    else
        nt_nodecheck_set(out, "gpu_row_remap", "NT-GPU-014", NT_PASS, t, obs,
                         "pending no, failure no", "no row remap pending or failed");
}

void nt_gpu_throttle_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } reasons[] = {{NT_THROTTLE_HW_SLOWDOWN, "hw_slowdown"},
                   {NT_THROTTLE_SW_THERMAL, "sw_thermal_slowdown"},
                   {NT_THROTTLE_HW_THERMAL, "hw_thermal_slowdown"},
                   {NT_THROTTLE_HW_POWER_BRAKE, "hw_power_brake_slowdown"}};
    char t[16], obs[128];
    size_t used;

    nt_gpu_target(h, t, sizeof(t));
    if (!h->throttle_ok) {
        nt_nodecheck_set(out, "gpu_throttle", "NT-GPU-016", NT_NOT_JUDGED, t, "", "none active",
                         "%s",
                         nt_gpu_unknown(h,
                                        "NVML gives no clock event reasons "
                                        "(nvmlDeviceGetCurrentClocksThrottleReasons)",
                                        "nvidia-smi -q shows no \"Clocks Event Reasons\" (or "
                                        "\"Clocks Throttle Reasons\")"));
        return;
    }
    used = (size_t)snprintf(obs, sizeof(obs), "0x%llx", h->throttle);
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if ((h->throttle & reasons[i].bit) && used < sizeof(obs))
            used += (size_t)snprintf(obs + used, sizeof(obs) - used, " %s", reasons[i].name);
    if (h->throttle & NT_THROTTLE_FAULTS)
        nt_nodecheck_set(out, "gpu_throttle", "NT-GPU-016", NT_WARN, t, obs, "none active",
                         "the GPU's clocks are held down by heat or power: its collectives "
                         "run slower than its peers'");
    else
        nt_nodecheck_set(out, "gpu_throttle", "NT-GPU-016", NT_PASS, t, obs, "none active",
                         "no thermal or power slowdown");
}

/* A rule on one yes/no fact of NVML: not judged without it, the bad verdict when it is set. */
typedef struct nt_gpu_flag_rule {
    const char *check, *code;
    nt_verdict_t bad_verdict;
    const char *bad_obs, *good_obs; /* observed for the fact set / clear */
    const char *unknown, *smi_unknown, *bad, *good; /* the messages; smi_unknown when the
                                                     * facts came from nvidia-smi -q */
} nt_gpu_flag_rule_t;

static const nt_gpu_flag_rule_t nt_gpu_persistence_rule = {
    "gpu_persistence", "NT-GPU-017", NT_WARN, "disabled", "enabled",
    "NVML gives no persistence mode (nvmlDeviceGetPersistenceMode)",
    "nvidia-smi -q shows no \"Persistence Mode\"",
    "persistence mode is off: the driver tears the GPU down between jobs and each job's init "
    "pays for it",
    "persistence mode is on"};
static const nt_gpu_flag_rule_t nt_gpu_reset_rule = {
    "gpu_reset", "NT-GPU-018", NT_FAIL, "yes", "no",
    "NVML gives no reset status (nvmlDeviceGetFieldValues NVML_FI_DEV_RESET_STATUS: driver "
    "before R535)",
    "nvidia-smi -q has no \"GPU Reset Status\" section (this nvidia-smi does not print it, "
    "whatever the driver version)",
    "the driver says the GPU needs a reset before it runs work again", "no reset required"};
static const nt_gpu_flag_rule_t nt_gpu_retired_rule = {
    "gpu_retired_pages", "NT-GPU-019", NT_WARN, "yes", "no",
    "NVML gives no page retirement status (nvmlDeviceGetRetiredPagesPendingStatus: a "
    "row-remapping GPU)",
    "nvidia-smi -q shows no pending page retirement (\"Retired Pages\" N/A: a row-remapping "
    "GPU)",
    "page retirement is pending: it takes effect at the next driver reload or GPU reset",
    "no page retirement pending"};

static void nt_gpu_flag_judge(const nt_gpu_health_t *h, const nt_gpu_flag_rule_t *r, int known,
                              int set, nt_nodecheck_t *out)
{
    char t[16];
    const char *exp = r->good_obs;

    nt_gpu_target(h, t, sizeof(t));
    if (!known)
        nt_nodecheck_set(out, r->check, r->code, NT_NOT_JUDGED, t, "", exp, "%s",
                         nt_gpu_unknown(h, r->unknown, r->smi_unknown));
    else if (set)
        nt_nodecheck_set(out, r->check, r->code, r->bad_verdict, t, r->bad_obs, exp, "%s", r->bad);
    else
        nt_nodecheck_set(out, r->check, r->code, NT_PASS, t, r->good_obs, exp, "%s", r->good);
}

void nt_gpu_persistence_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out)
{
    nt_gpu_flag_judge(h, &nt_gpu_persistence_rule, h->persistence_ok, !h->persistence, out);
}

void nt_gpu_reset_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out)
{
    nt_gpu_flag_judge(h, &nt_gpu_reset_rule, h->reset_ok, h->reset_required != 0, out);
}

void nt_gpu_retired_judge(const nt_gpu_health_t *h, nt_nodecheck_t *out)
{
    nt_gpu_flag_judge(h, &nt_gpu_retired_rule, h->retired_ok, h->retired_pending != 0, out);
}

int nt_gpu_retired_applies(const nt_gpu_health_t *h)
{
    return h->retired_ok || !h->remap_ok;
}
