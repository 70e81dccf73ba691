/* Environment advice, each line with its reason. The knob classes are those of
 * docs/tuner-cli.md "Environment knobs" (NCCL's src/include/param.h reads most variables once per
 * process; the safe, guarded and site lists follow the NCCL environment documentation). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nt_tuning.h"
#include "tune.h"

typedef enum { K_SAFE = 0, K_GUARDED, K_SITE } knob_class_t;

static const struct {
    const char *name;
    knob_class_t cls;
    int new_process; /* read once per process (NCCL_PARAM) */
} knobs[] = {
    {"NCCL_MIN_CTAS", K_SAFE, 0},
    {"NCCL_MAX_CTAS", K_SAFE, 0},
    {"NCCL_NTHREADS", K_SAFE, 1},
    {"NCCL_BUFFSIZE", K_SAFE, 1},
    {"NCCL_P2P_NET_CHUNKSIZE", K_SAFE, 1},
    {"NCCL_IB_QPS_PER_CONNECTION", K_SAFE, 1},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", K_SAFE, 1},
    {"NCCL_CROSS_NIC", K_SAFE, 1},
    {"NCCL_NVLS_ENABLE", K_SAFE, 1},
    {"NCCL_PAT_ENABLE", K_SAFE, 1},
    {"NCCL_SOCKET_NTHREADS", K_SAFE, 1},
    {"NCCL_NSOCKS_PERTHREAD", K_SAFE, 1},
    {"NCCL_P2P_LEVEL", K_GUARDED, 1},
    {"NCCL_NET_GDR_LEVEL", K_GUARDED, 1},
    {"NCCL_NET_GDR_READ", K_GUARDED, 1},
    {"NCCL_IB_HCA", K_SITE, 1},
    {"NCCL_IB_GID_INDEX", K_SITE, 1},
    {"NCCL_IB_TC", K_SITE, 1},
    {"NCCL_IB_TIMEOUT", K_SITE, 1},
    {"NCCL_IB_RETRY_CNT", K_SITE, 1},
    {"NCCL_SOCKET_IFNAME", K_SITE, 1},
    {"NCCL_TOPO_FILE", K_SITE, 1},
};

static int nt_knob(const char *name)
{
    for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
        if (strcmp(knobs[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void nt_put(nt_env_advice_t *out, size_t max, size_t *n, const char *name, const char *value,
                int set, int newp, const char *reason)
{
    for (size_t i = 0; i < *n && i < max; i++)
        if (strcmp(out[i].name, name) == 0)
            return;
    if (*n >= max)
        return;
    nt_env_advice_t *a = &out[(*n)++];
    memset(a, 0, sizeof(*a));
    snprintf(a->name, sizeof(a->name), "%s", name);
    snprintf(a->value, sizeof(a->value), "%s", value);
    snprintf(a->reason, sizeof(a->reason), "%s", reason);
    a->set = set;
    a->new_process = newp;
}

/* Mean of best times of a source's points over the sizes the baselines measured too, relative to
 * them: < 1 is faster. Returns the number of sizes compared. */
static size_t nt_compare_to_baseline(const nt_tune_t *t, int src, double *ratio)
{
    double lr = 0;
    size_t n = 0;
    for (size_t i = 0; i < t->npoints; i++) {
        const nt_tune_point_t *p = &t->points[i];
        if (p->src != src || p->bytes < (1u << 20))
            continue;
        double best = nt_tune_baseline_us(t, p);
        if (best > 0) {
            lr += log(p->time_us / best);
            n++;
        }
    }
    *ratio = n ? exp(lr / (double)n) : 1;
    return n;
}

size_t nt_tune_env_advice(const nt_tune_t *t, nt_env_advice_t *out, size_t max)
{
    size_t n = 0;
    char reason[256];
    /* 1. knobs a labelled replay measured as faster than NCCL's default */
    for (size_t s = 0; s < t->nsources; s++) {
        const nt_tune_source_t *src = &t->sources[s];
        /* a run that differs from the baseline by its environment only: one that also forced
         * the algorithm or protocol says nothing about the knob */
        int forced = src->label_algo >= 0 || src->label_proto >= 0 || src->label_nchannels > 0;
        for (size_t e = 0; e < src->nenv; e++)
            forced |= strncmp(src->env[e], "NCCL_ALGO=", 10) == 0 ||
                      strncmp(src->env[e], "NCCL_PROTO=", 11) == 0;
        if (forced || src->confounded)
            continue; /* a confounded run's gain is not the knob's */
        double r;
        size_t cmp = nt_compare_to_baseline(t, (int)s, &r);
        if (cmp < 2 || r > 1 - NT_TUNE_NOISE_MIN)
            continue;
        for (size_t e = 0; e < src->nenv; e++) {
            char name[64];
            const char *eq = strchr(src->env[e], '=');
            if (!eq || (size_t)(eq - src->env[e]) >= sizeof(name))
                continue;
            snprintf(name, sizeof(name), "%.*s", (int)(eq - src->env[e]), src->env[e]);
            int k = nt_knob(name);
            if (k < 0 || knobs[k].cls == K_SITE)
                continue; /* NCCL_ALGO/NCCL_PROTO are rules' business; site settings: below */
            snprintf(reason, sizeof(reason),
                     "measured: %s ran %.0f%% faster than NCCL's default over %zu sizes >= 1 MiB%s",
                     nt_tune_source_name(src), 100 * (1 / r - 1), cmp,
                     knobs[k].cls == K_GUARDED
                         ? "; guarded (can hang where ACS/IOMMU break peer access): check with "
                           "nettune probe first"
                         : "");
            nt_put(out, max, &n, name, eq + 1, 1, knobs[k].new_process, reason);
        }
    }
    /* 2. the job's NCCL_ALGO / NCCL_PROTO override the plugin's rules */
    if (t->nrules && (t->env_job_algo || t->env_job_proto)) {
        if (t->env_job_algo)
            nt_put(out, max, &n, "NCCL_ALGO", "", 0, 1,
                "unset it: NCCL_ALGO beside tuner rules overrides the plugin (the rules cannot "
                "apply)");
        if (t->env_job_proto)
            nt_put(out, max, &n, "NCCL_PROTO", "", 0, 1,
                "unset it: NCCL_PROTO beside tuner rules overrides the plugin");
    }
    /* 3. below NCCL 2.21 the tuner API cannot take rules: one algorithm per collective as
     * environment, from measurements only, never LL128 forced */
    if (t->target_version < NT_TUNE_MIN_RULE_VERSION) {
        int algo = -2;
        for (size_t i = 0; i < t->nsummary; i++) {
            const nt_tune_summary_t *s = &t->summary[i];
            if (s->basis != NT_BASIS_MEASURED || s->algo < 0 ||
                (s->algo == s->def_algo && s->proto == s->def_proto))
                continue;
            algo = algo == -2 || algo == s->algo ? s->algo : -1;
        }
        if (algo >= 0) {
            snprintf(
                reason, sizeof(reason),
                "NCCL %d.%d takes no tuner rules (tuner API v2 reaches NCCL from 2.21): %s won "
                "every measured range that changed",
                t->target_version / 10000, t->target_version / 100 % 100, nt_model_algo_name(algo));
            nt_put(out, max, &n, "NCCL_ALGO", nt_model_algo_name(algo), 1, 1, reason);
        }
    }
    /* 4. site settings seen in the inputs: reported, never set */
    for (size_t s = 0; s < t->nsources; s++)
        for (size_t e = 0; e < t->sources[s].nenv; e++) {
            char name[64];
            const char *kv = t->sources[s].env[e], *eq = strchr(kv, '=');
            if (!eq || (size_t)(eq - kv) >= sizeof(name))
                continue;
            snprintf(name, sizeof(name), "%.*s", (int)(eq - kv), kv);
            int k = nt_knob(name);
            if (k >= 0 && knobs[k].cls == K_SITE) {
                snprintf(reason, sizeof(reason),
                         "site setting seen in %s: reported, never set by nettune (keep the "
                         "site's value)",
                         nt_tune_source_name(&t->sources[s]));
                nt_put(out, max, &n, name, eq + 1, 0, 1, reason);
            }
        }
    return n;
}

char *nt_tune_env_text(const nt_tune_t *t)
{
    nt_env_advice_t adv[32];
    size_t na = nt_tune_env_advice(t, adv, 32);
    size_t cap = 512 + na * 400, n = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    /* NCCL's own conf-file format (NVIDIA/nccl v2.28.9-1 src/misc/param.cc:27-52 setEnvFile):
     * a line starting with '#' is skipped, every other line is NAME=VALUE with the value up to
     * the end of the line (no inline comment: it would become part of the value), applied with
     * setenv(NAME, VALUE, 0) so the job's own environment wins. The reasons are therefore
     * comment lines of their own, above the setting. */
    n += (size_t)snprintf(s + n, cap - n,
                          "# NCCL environment advice written by nettune tune, in NCCL's conf-file "
                          "format:\n# point NCCL_CONF_FILE at this file (or install it as "
                          "/etc/nccl.conf); a variable\n# set in the job's environment wins over "
                          "the file. Lines marked 'new process' are\n# read once per process. "
                          "The tuner rules themselves are in the tuning file.\n");
    for (size_t i = 0; i < na && n < cap; i++) {
        if (adv[i].set)
            n += (size_t)snprintf(s + n, cap - n, "# %s%s\n%s=%s\n", adv[i].reason,
                                  adv[i].new_process ? " (new process)" : "", adv[i].name,
                                  adv[i].value);
        else
            n += (size_t)snprintf(s + n, cap - n, "# %s%s%s: %s\n", adv[i].name,
                                  adv[i].value[0] ? "=" : "", adv[i].value, adv[i].reason);
    }
    return s;
}
