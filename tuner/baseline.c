/* A broken baseline is not a baseline: each replayed run of NCCL's default is judged by the
 * doctor's own rule (reports/doctor/diagnose.c, busbw_below_expected: the busbw plateau at the
 * largest sizes against the hardware from --expect, the probe report or the log's NET/IB lines),
 * called here, not copied. A baseline the doctor fails (below its error_efficiency, 50% of the
 * expected figure by default) is a warn finding: gains measured against it are gains over a
 * degraded cluster. */
#include <stdio.h>
#include <string.h>

#include "reports/doctor/doctor.h"
#include "tune.h"

/* The doctor's busbw_below_expected finding of one file, if it failed it. */
static void nt_judge_one(nt_tune_t *t, const nt_kb_t *kb, const nt_tune_source_t *s)
{
    char msg[512];
    nt_hw_t hw;
    nt_hw_init(&hw);
    nt_doctor_t *d = nt_doctor_create(kb);
    if (!d)
        goto out_hw;
    if (t->p.expect && nt_hw_apply_expect(&hw, t->p.expect, msg, sizeof(msg)) != 0)
        goto out_doctor; /* checked when the options were parsed */
    if (t->p.report_path && nt_doctor_load_report(d, t->p.report_path, msg, sizeof(msg)) != 0)
        goto out_doctor;
    if (t->p.coll_named > 0 && !hw.collective && nt_tune_nccltests_name(t->p.coll_named - 1))
        hw.collective = strdup(nt_tune_nccltests_name(t->p.coll_named - 1));
    if (nt_doctor_read_file(d, s->path, msg, sizeof(msg)) != 0)
        goto out_doctor;
    nt_doctor_diagnose(d, &hw);
    cJSON *doc = nt_doctor_to_json(d, 0);
    const cJSON *f;
    cJSON_ArrayForEach (f, cJSON_GetObjectItemCaseSensitive(doc, "findings")) {
        if (strcmp(nt_json_get_str(f, "key", ""), "busbw_below_expected") != 0 ||
            strcmp(nt_json_get_str(f, "severity", ""), "error") != 0)
            continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "values");
        nt_tune_add_finding(t, NT_ANOMALY_BASELINE_DEGRADED, NT_ANOMALY_SEV_WARN,
                            "%s is NCCL's default on a degraded cluster: busbw %.1f GB/s at the "
                            "largest sizes is %.0f%% of the %.0f GB/s the hardware allows "
                            "(nettune doctor's busbw_below_expected); a gain measured against it "
                            "is a gain over a broken baseline: fix the cluster and measure again",
                            nt_tune_source_name(s), nt_json_get_num(v, "plateau_busbw_GBps", 0),
                            100 * nt_json_get_num(v, "ratio", 0),
                            nt_json_get_num(v, "expected_busbw_GBps", 0));
    }
    cJSON_Delete(doc);
out_doctor:
    nt_doctor_destroy(d);
out_hw:
    nt_hw_cleanup(&hw);
}

nt_status_t nt_tune_judge_baselines(nt_tune_t *t)
{
    nt_kb_t *kb = NULL;
    char err[256];
    if (nt_kb_load(NULL, &kb, err, sizeof(err)) != 0)
        return NT_ERR_INVALID;
    for (size_t i = 0; i < t->nsources; i++) {
        if (nt_tune_source_is_baseline(&t->sources[i]))
            nt_judge_one(t, kb, &t->sources[i]);
    }
    nt_kb_destroy(kb);
    return NT_OK;
}
