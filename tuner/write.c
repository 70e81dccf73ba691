/* The outputs: tuning.json with the plugin's rule keys, NCCL's example-tuner
 * CSV, the summary. Identical inputs give byte-identical files: nothing here reads the clock,
 * the host or a path, and every list is in a fixed order. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/checks.h"
#include "nettune/version.h"
#include "nettune/report.h"
#include "nt_tuning.h"
#include "tune.h"

/* 3 decimals: what a us figure means, and a stable text whatever the libm */
static double nt_r3(double v)
{
    return round(v * 1000.0) / 1000.0;
}

static void nt_write_hash_str(char *buf, size_t len, uint64_t h)
{
    snprintf(buf, len, "%016" PRIx64, h);
}

static void nt_add_input(cJSON *arr, const char *kind, uint64_t h)
{
    char hs[32];
    cJSON *o = cJSON_CreateObject();
    nt_write_hash_str(hs, sizeof(hs), h);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "fnv1a64", hs);
    cJSON_AddItemToArray(arr, o);
}

/* The check-table row of each kind of finding (include/nettune/checks.def): the busbw ones are
 * the doctor's rows, judged by the same rules (lib/nccl/anomaly.c), the others nettune tune's. */
static const char *const nt_finding_codes[] = {
    [NT_ANOMALY_MID_SWEEP_DROP] = "NT-RUN-104",  [NT_ANOMALY_OUTLIER] = "NT-RUN-105",
    [NT_ANOMALY_RUNS_DIFFER] = "NT-RUN-106",     [NT_ANOMALY_ENV_DIFFERS] = "NT-RUN-201",
    [NT_ANOMALY_MODEL_FAR] = "NT-RUN-202",       [NT_ANOMALY_CONFOUNDED] = "NT-RUN-203",
    [NT_ANOMALY_BASELINE_DEGRADED] = "NT-RUN-101",
};

const char *nt_tune_finding_code(nt_anomaly_kind_t kind)
{
    if ((unsigned)kind >= sizeof(nt_finding_codes) / sizeof(nt_finding_codes[0]))
        return NULL;
    return nt_finding_codes[kind];
}

cJSON *nt_tune_tuning_json(const nt_tune_t *t)
{
    cJSON *doc = cJSON_CreateObject();
    if (!doc)
        return NULL;
    cJSON_AddStringToObject(doc, "schema", "nettune.tuning/1");
    cJSON *gb = cJSON_AddObjectToObject(doc, "generated_by");
    cJSON_AddStringToObject(gb, "tool", "nettune tune");
    cJSON_AddStringToObject(gb, "version", nt_version());
    char v[32];
    snprintf(v, sizeof(v), "%d.%d.%d", t->target_version / 10000, t->target_version / 100 % 100,
             t->target_version % 100);
    cJSON_AddStringToObject(gb, "nccl_modelled", v);
    cJSON_AddStringToObject(gb, "objective",
                            t->p.objective == NT_OBJ_TOTAL     ? "total"
                            : t->p.objective == NT_OBJ_GEOMEAN ? "geomean"
                                                             : "no-regress");
    cJSON *inputs = cJSON_AddArrayToObject(gb, "inputs");
    if (t->have_report)
        nt_add_input(inputs, "report", t->report_hash);
    for (size_t i = 0; i < t->nsources; i++)
        nt_add_input(inputs, "replay", t->sources[i].hash);
    for (size_t i = 0; i < t->p.nlogs; i++)
        nt_add_input(inputs, "nccl_log", t->log_hash[i]);
    for (size_t i = 0; i < t->p.nmeasured; i++)
        nt_add_input(inputs, "measured", t->measured_hash[i]);
    cJSON_AddBoolToObject(doc, "completed", t->completed);
    cJSON *rules = cJSON_AddArrayToObject(doc, "rules");
    for (size_t i = 0; i < t->nrules; i++) {
        const nt_tune_rule_t *r = &t->rules[i];
        cJSON *o = cJSON_CreateObject();
        /* the keys in the order of the one definition (nt_rule_keys) */
        for (int k = 0; k < NT_RK_COUNT; k++) {
            const char *key = nt_rule_keys[k];
            switch (k) {
            case NT_RK_COLL:
                cJSON_AddStringToObject(o, key, nt_coll_name(r->coll));
                break;
            case NT_RK_MIN_BYTES:
                cJSON_AddNumberToObject(o, key, (double)r->min_bytes);
                break;
            case NT_RK_MAX_BYTES:
                cJSON_AddNumberToObject(o, key, (double)r->max_bytes);
                break;
            case NT_RK_NNODES:
                cJSON_AddNumberToObject(o, key, r->shape.nnodes);
                break;
            case NT_RK_NRANKS:
                cJSON_AddNumberToObject(o, key, r->shape.nranks);
                break;
            case NT_RK_REG_BUFF:
                /* measured rules say what they were measured with: nccl-tests does not
                 * register its buffers (no -R), so 0 unless the point said otherwise */
                if (r->basis != NT_BASIS_PREDICTED)
                    cJSON_AddNumberToObject(o, key, r->reg_buff >= 0 ? r->reg_buff : 0);
                break;
            case NT_RK_ALGO:
                if (r->algo >= 0)
                    cJSON_AddStringToObject(o, key, nt_algo_name(r->algo));
                break;
            case NT_RK_PROTO:
                if (r->proto >= 0)
                    cJSON_AddStringToObject(o, key, nt_proto_name(r->proto));
                break;
            case NT_RK_CHUNK_BYTES:
                if (r->chunk_bytes)
                    cJSON_AddNumberToObject(o, key, r->chunk_bytes);
                break;
            case NT_RK_BASIS:
                cJSON_AddStringToObject(o, key, nt_basis_name(r->basis));
                break;
            case NT_RK_PREDICTED_US:
                if (r->predicted_us >= 0)
                    cJSON_AddNumberToObject(o, key, nt_r3(r->predicted_us));
                break;
            case NT_RK_MEASURED_US:
                if (r->measured_us >= 0)
                    cJSON_AddNumberToObject(o, key, nt_r3(r->measured_us));
                break;
            default: /* num_pipe_ops, nchannels: any / NCCL's */
                break;
            }
        }
        cJSON_AddItemToArray(rules, o);
    }
    cJSON *env = cJSON_AddObjectToObject(doc, "env");
    nt_env_advice_t adv[32];
    size_t na = nt_tune_env_advice(t, adv, 32);
    for (size_t i = 0; i < na; i++)
        if (adv[i].set)
            cJSON_AddStringToObject(env, adv[i].name, adv[i].value);
    cJSON *sum = nt_tune_summary_json(t);
    cJSON_AddItemToObject(doc, "summary", cJSON_DetachItemFromObject(sum, "ranges"));
    cJSON_Delete(sum);
    cJSON *f = cJSON_AddArrayToObject(doc, "findings");
    for (size_t i = 0; i < t->nfindings; i++) {
        cJSON *o = cJSON_CreateObject();
        const nt_check_row_t *row = nt_check_by_code(nt_tune_finding_code(t->findings[i].kind));
        cJSON_AddStringToObject(o, "kind", nt_anomaly_kind_string(t->findings[i].kind));
        cJSON_AddStringToObject(o, "severity",
                                t->findings[i].severity == NT_ANOMALY_SEV_WARN ? "warn" : "info");
        if (row) { /* every kind has its row (test_tune); additive, as in the probe's report */
            cJSON_AddStringToObject(o, "code", row->code);
            cJSON_AddStringToObject(o, "category", nt_category_name(row->category));
        }
        cJSON_AddStringToObject(o, "message", t->findings[i].text ? t->findings[i].text : "");
        cJSON_AddItemToArray(f, o);
    }
    return doc;
}

char *nt_tune_csv(const nt_tune_t *t)
{
    size_t cap = 256 + t->nrules * 96, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    n += (size_t)snprintf(s + n, cap - n,
                          "# NCCL example-tuner CSV written by nettune tune (first match wins)\n"
                          "# colltype,minbytes,maxbytes,algorithm,protocol,channels,nNodes,nRanks,"
                          "numPipeOps,regBuff\n");
    for (size_t i = 0; i < t->nrules && n < cap; i++) {
        const nt_tune_rule_t *r = &t->rules[i];
        n += (size_t)snprintf(
            s + n, cap - n, "%s,%llu,%llu,%s,%s,-1,%d,%d,-1,%d\n", nt_coll_name(r->coll),
            r->min_bytes, r->max_bytes, r->algo >= 0 ? nt_algo_name(r->algo) : "-1",
            r->proto >= 0 ? nt_proto_name(r->proto) : "-1", r->shape.nnodes, r->shape.nranks,
            r->basis == NT_BASIS_PREDICTED ? -1
            : r->reg_buff >= 0             ? r->reg_buff
                                           : 0);
    }
    return s;
}

static const char *nt_choice(char *buf, size_t len, int a, int p)
{
    if (a < 0 && p < 0)
        snprintf(buf, len, "unknown");
    else
        snprintf(buf, len, "%s/%s", a >= 0 ? nt_model_algo_name(a) : "any",
                 p >= 0 ? nt_model_proto_name(p) : "any");
    return buf;
}

int nt_tune_gain_stats(const nt_tune_summary_t *s, double *first, double *last, double *min,
                       double *geomean)
{
    if (!s->ngains)
        return 0;
    double lsum = 0, m = s->gain[0];
    for (size_t k = 0; k < s->ngains; k++) {
        lsum += log1p(s->gain[k]);
        m = s->gain[k] < m ? s->gain[k] : m;
    }
    *first = s->gain[0];
    *last = s->gain[s->ngains - 1];
    *min = m;
    *geomean = expm1(lsum / (double)s->ngains);
    return 1;
}

/* A gain as a percentage with one decimal, as printed. */
static double nt_pct1(double g)
{
    return round(1000 * g) / 10;
}

cJSON *nt_tune_summary_json(const nt_tune_t *t)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(doc, "ranges");
    for (size_t i = 0; i < t->nsummary; i++) {
        const nt_tune_summary_t *s = &t->summary[i];
        char b[64];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "coll", nt_coll_name(s->coll));
        cJSON_AddNumberToObject(o, "nnodes", s->shape.nnodes);
        cJSON_AddNumberToObject(o, "nranks", s->shape.nranks);
        cJSON_AddNumberToObject(o, "min_bytes", (double)s->min_bytes);
        cJSON_AddNumberToObject(o, "max_bytes", (double)s->max_bytes);
        cJSON_AddStringToObject(o, "nccl_default",
                                nt_choice(b, sizeof(b), s->def_algo, s->def_proto));
        cJSON_AddStringToObject(o, "ours", nt_choice(b, sizeof(b), s->algo, s->proto));
        if (s->def_us > 0)
            cJSON_AddNumberToObject(o, "default_us", nt_r3(s->def_us));
        if (s->our_us > 0)
            cJSON_AddNumberToObject(o, "ours_us", nt_r3(s->our_us));
        if (s->def_us > 0 && s->our_us > 0)
            cJSON_AddNumberToObject(o, "gain_pct", round(1000 * (s->def_us / s->our_us - 1)) / 10);
        double gf, gl, gm, gg;
        if (nt_tune_gain_stats(s, &gf, &gl, &gm, &gg)) {
            cJSON_AddNumberToObject(o, "gain_first_pct", nt_pct1(gf));
            cJSON_AddNumberToObject(o, "gain_last_pct", nt_pct1(gl));
            cJSON_AddNumberToObject(o, "gain_min_pct", nt_pct1(gm));
            cJSON_AddNumberToObject(o, "gain_geomean_pct", nt_pct1(gg));
            cJSON *ga = cJSON_AddArrayToObject(o, "gains");
            for (size_t k = 0; k < s->ngains; k++) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddNumberToObject(x, "bytes", (double)s->gain_bytes[k]);
                cJSON_AddNumberToObject(x, "default_us", nt_r3(s->gain_def_us[k]));
                cJSON_AddNumberToObject(x, "ours_us", nt_r3(s->gain_our_us[k]));
                cJSON_AddNumberToObject(x, "gain_pct", nt_pct1(s->gain[k]));
                cJSON_AddItemToArray(ga, x);
            }
        }
        cJSON_AddStringToObject(o, "basis", nt_basis_name(s->basis));
        if (s->tradeoff)
            cJSON_AddStringToObject(o, "tradeoff", s->tradeoff);
        cJSON_AddItemToArray(arr, o);
    }
    return doc;
}

void nt_tune_print_summary(const nt_tune_t *t, FILE *out)
{
    /* the gain columns: measured at the range's first size, its last, the smallest in between,
     * and the geometric mean over its measured sizes ("-" where nothing was measured) */
    if (t->nsummary) /* no header over an empty table */
        fprintf(out, "%-13s %-6s %-25s %-20s %-20s %8s %8s %8s %8s  %s\n", "collective",
                "shape", "bytes", "NCCL default", "ours", "first", "last", "min", "geomean",
                "basis");
    for (size_t i = 0; i < t->nsummary; i++) {
        const nt_tune_summary_t *s = &t->summary[i];
        char sh[16], range[48], d[40], o[40], g[4][16] = {"-", "-", "-", "-"};
        double v[4];
        snprintf(sh, sizeof(sh), "%dx%d", s->shape.nnodes, s->shape.ppn);
        snprintf(range, sizeof(range), "%llu..%llu", s->min_bytes, s->max_bytes);
        if (nt_tune_gain_stats(s, &v[0], &v[1], &v[2], &v[3]))
            for (int k = 0; k < 4; k++)
                snprintf(g[k], sizeof(g[k]), "%+.1f%%", 100 * v[k]);
        fprintf(out, "%-13s %-6s %-25s %-20s %-20s %8s %8s %8s %8s  %s\n", nt_coll_name(s->coll),
                sh, range, nt_choice(d, sizeof(d), s->def_algo, s->def_proto),
                nt_choice(o, sizeof(o), s->algo, s->proto), g[0], g[1], g[2], g[3],
                nt_basis_name(s->basis));
        if (s->tradeoff)
            fprintf(out, "  trade-off: %s\n", s->tradeoff);
    }
    for (size_t i = 0; i < t->nfindings; i++)
        fprintf(out, "%s: %s: %s\n",
                t->findings[i].severity == NT_ANOMALY_SEV_WARN ? "warn" : "info",
                nt_anomaly_kind_string(t->findings[i].kind), t->findings[i].text);
}

void nt_tune_print_lost(const nt_tune_t *t, FILE *out)
{
    fprintf(out, "NCCL's default wins at every measured size: no rule (what lost below)\n");
    fprintf(out, "%-13s %-6s %12s  %-20s %10s %10s %8s\n", "collective", "shape", "bytes",
            "alternative", "time_us", "default_us", "diff");
    for (size_t i = 0; i < t->npoints; i++) {
        const nt_tune_point_t *p = &t->points[i];
        if (p->is_default || (p->src >= 0 && t->sources[p->src].confounded) ||
            (p->algo < 0 && p->proto < 0))
            continue; /* no choice forced (an env.NCCL_X run): advice, not a rule */
        double def = nt_tune_baseline_us(t, p);
        if (def <= 0)
            continue;
        char what[48], sh[16];
        snprintf(what, sizeof(what), "%s/%s", p->algo >= 0 ? nt_model_algo_name(p->algo) : "any",
                 p->proto >= 0 ? nt_model_proto_name(p->proto) : "any");
        snprintf(sh, sizeof(sh), "%dx%d", p->shape.nnodes, p->shape.ppn);
        fprintf(out, "%-13s %-6s %12llu  %-20s %10.1f %10.1f %+7.1f%%\n", nt_coll_name(p->coll), sh,
                p->bytes, what, p->time_us, def, 100 * (def / p->time_us - 1));
    }
}
