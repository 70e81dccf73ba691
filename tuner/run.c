/* nettune tune's run (tune.h): the inputs the options name, the search, the writers, and the
 * exit code. Exit codes (docs/tuner-cli.md): 0 written; 1 written with warn findings; 2 bad
 * input or nothing to tune; 3 stopped by --time-limit with the partial file ("completed":
 * false) written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_versions.h"
#include "nettune/exitcode.h"
#include "nettune/log.h"
#include "nettune/nccl_table.h"
#include "nettune/report.h"
#include "nt_tuning.h"
#include "print_model.h"
#include "tune.h"

static int nt_bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "nettune tune: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return NT_EXIT_USAGE;
}

static uint64_t nt_file_hash(const char *path, int *ok)
{
    FILE *fp = fopen(path, "rb");
    uint64_t h = 0xcbf29ce484222325ull;
    int c;
    *ok = fp != NULL;
    if (!fp)
        return 0;
    while ((c = fgetc(fp)) != EOF)
        h = (h ^ (unsigned char)c) * 0x100000001b3ull;
    fclose(fp);
    return h;
}

static int nt_write_text(const char *path, const char *text)
{
    return nt_output_write(path, text, strlen(text)) == NT_OK ? 0 : -1;
}

/* --print-model: the model's table for the log's communicator beside NCCL's own. */
static int nt_print_model(nt_tune_t *t)
{
    if (!t->p.nlogs) {
        fprintf(stderr, "nettune tune: --print-model needs --nccl-log LOG (a log with NCCL's "
                        "TUNING table or graph lines)\n");
        return NT_EXIT_USAGE;
    }
    nt_nccl_table_t table;
    char err[256] = "";
    int have_table = nt_nccl_table_read(t->p.nccl_logs[0], &table, err, sizeof(err)) == NT_OK;
    const nt_nccllog_t *g = &t->logs[0];
    int version = t->p.version ? t->p.version : g->version ? g->version : table.version;
    if (!version) {
        fprintf(stderr,
                "nettune tune: '%s' has no \"NCCL version\" line: give --nccl-version X.Y\n",
                t->p.nccl_logs[0]);
        return NT_EXIT_USAGE;
    }
    nt_model_input_t in;
    if (nt_tune_log_input(g, version, t->p.nshapes ? &t->p.shapes[0] : NULL, t->p.sm, t->p.cpu_vendor,
                          &in) != NT_OK) {
        fprintf(stderr, "nettune tune: '%s': bad communicator shape\n", t->p.nccl_logs[0]);
        return NT_EXIT_USAGE;
    }
    nt_model_fit_t fit;
    nt_status_t st = nt_tune_print_model(stdout, &in, have_table ? &table : NULL,
                                         nt_nccllog_env_get(g, "NCCL_ALGO"),
                                         nt_nccllog_env_get(g, "NCCL_PROTO"), t->p.json, &fit);
    if (st != NT_OK) {
        fprintf(stderr, "nettune tune: --print-model: %s\n", nt_status_string(st));
        return NT_EXIT_USAGE;
    }
    /* cells that differ beyond the print precision: the model is not NCCL's for these facts */
    return fit.modelled && fit.mismatched_cells > 0 ? NT_EXIT_FAIL : NT_EXIT_OK;
}

void nt_tune_free(nt_tune_t *t)
{
    if (t->have_report)
        nt_rdoc_close(&t->report);
    for (size_t i = 0; i < t->nsources; i++)
        nt_tune_source_free(&t->sources[i]);
    for (size_t i = 0; i < t->p.nlogs; i++)
        nt_nccllog_cleanup(&t->logs[i]);
    for (size_t i = 0; i < t->nfindings; i++)
        free(t->findings[i].text);
    free(t->findings);
    for (size_t i = 0; i < t->nsummary; i++)
        free(t->summary[i].tradeoff);
    free(t->summary);
    free(t->rules);
    free(t->points);
    cJSON_Delete(t->plan);
}

/* The shapes to tune when --shape is not given: the replayed tables', the logs' comm lines,
 * then the report's nodes x GPUs (and its GPUs on one node: a TP group). */
static void nt_default_shapes(nt_tune_t *t)
{
    for (size_t s = 0; s < t->nsources; s++)
        for (size_t k = 0; k < nt_ncclt_reader_ntables(t->sources[s].tests); k++) {
            const nt_ncclt_table_t *tab = nt_ncclt_reader_table(t->sources[s].tests, k);
            const char *cname = nt_tune_table_coll(t, tab);
            if (tab->nranks < 2 || nt_tune_coll_from_nccltests(cname) < 0)
                continue;
            int nn = tab->nhosts > 0 ? tab->nhosts : 1;
            nt_tune_shape_t sh = {nn, tab->nranks / nn, tab->nranks};
            int dup = 0;
            for (size_t i = 0; i < t->p.nshapes; i++)
                dup |= t->p.shapes[i].nnodes == sh.nnodes && t->p.shapes[i].nranks == sh.nranks;
            if (!dup && t->p.nshapes < NT_TUNE_MAX_SHAPES)
                t->p.shapes[t->p.nshapes++] = sh;
        }
    for (size_t i = 0; i < t->p.nlogs && !t->p.nshapes; i++)
        if (t->logs[i].nranks > 1 && t->logs[i].nnodes > 0) {
            nt_tune_shape_t sh = {t->logs[i].nnodes, t->logs[i].nranks / t->logs[i].nnodes,
                                  t->logs[i].nranks};
            t->p.shapes[t->p.nshapes++] = sh;
        }
    if (!t->p.nshapes && t->have_report) {
        int nodes = 0, gpus = 0;
        for (size_t i = 0; i < t->report.nnodes; i++)
            if (t->report.nodes[i].j) {
                nodes++;
                if (t->report.nodes[i].ngpus > gpus)
                    gpus = t->report.nodes[i].ngpus;
            }
        /* nodes x GPUs in long long: an int product of two large counts overflows */
        if (nodes > 0 && gpus > 0 && (long long)nodes * gpus <= NT_MODEL_MAX_RANKS) {
            nt_tune_shape_t all = {nodes, gpus, nodes * gpus};
            t->p.shapes[t->p.nshapes++] = all;
            if (nodes > 1 && gpus > 1) {
                nt_tune_shape_t one = {1, gpus, gpus};
                t->p.shapes[t->p.nshapes++] = one;
            }
        }
    }
}

/* The NCCL version modelled: --nccl-version, the logs' banner, the report's software.nccl; a
 * version that is not modelled is taken to the nearest modelled one (labelled assumed). */
static void nt_pick_version(nt_tune_t *t)
{
    int v = t->p.version;
    t->version_label = NT_FACT_MEASURED;
    for (size_t i = 0; i < t->p.nlogs && !v; i++)
        v = t->logs[i].version;
    for (size_t i = 0; i < t->nsources && !v; i++)
        v = t->sources[i].log.version;
    if (!v && t->have_report)
        for (size_t i = 0; i < t->report.nnodes && !v; i++) {
            const cJSON *sw = cJSON_GetObjectItemCaseSensitive(t->report.nodes[i].j, "software");
            const char *s = nt_json_get_str(sw, "nccl", NULL);
            if (s && nt_nccllog_version_parse(s) > 0)
                v = nt_nccllog_version_parse(s);
        }
    if (!v) {
        v = 22809;
        t->version_label = NT_FACT_ASSUMED;
    }
    if (!nt_model_version_supported(v)) {
        /* The nearest version the model has (its own table: nt_model_version_supported). Below
         * NT_TUNE_MIN_RULE_VERSION only versions below it are candidates, so that the run stays
         * environment advice only: tuner rules do not reach NCCL before 2.21. */
        int best = 0, given = t->p.version != 0;
        for (int c = 21400; c < 24000; c++)
            if (nt_model_version_supported(c) &&
                (v >= NT_TUNE_MIN_RULE_VERSION || c < NT_TUNE_MIN_RULE_VERSION) &&
                (!best || abs(c - v) < abs(best - v)))
                best = c;
        /* name the tag the data was read from (2.14.3), not a code inside its range (2.14.99) */
        const nt_model_version_t *mv = nt_model_version_find(best);
        int tagged =
            mv && mv->tag && mv->tag[0] == 'v' ? nt_nccllog_version_parse(mv->tag + 1) : -1;
        if (tagged > 0)
            best = tagged;
        if (!t->p.quiet)
            fprintf(stderr,
                    "nettune tune: NCCL %d.%d.%d is not modelled: modelling %d.%d.%d, the nearest "
                    "modelled version%s%s\n",
                    v / 10000, v / 100 % 100, v % 100, best / 10000, best / 100 % 100, best % 100,
                    v < NT_TUNE_MIN_RULE_VERSION
                        ? " (before 2.21 tuner rules do not reach NCCL: environment advice only)"
                        : "",
                    given ? "" : "; give --nccl-version to choose");
        v = best;
        t->version_label = NT_FACT_ASSUMED;
    }
    t->target_version = v;
}

/* The --nccl-log files, each fed line by line to the NCCL log reader. */
static int nt_read_logs(nt_tune_t *t)
{
    for (size_t i = 0; i < t->p.nlogs; i++) {
        nt_linereader_t *r = nt_linereader_open(t->p.nccl_logs[i]);
        if (!r) {
            t->p.nlogs = i; /* those read are freed */
            return nt_bad("cannot open --nccl-log '%s': %s", t->p.nccl_logs[i], strerror(errno));
        }
        nt_nccllog_t *g = &t->logs[i];
        nt_nccllog_init(g);
        const char *line;
        size_t len;
        while (nt_linereader_next(r, &line, &len) == 1) {
            nt_logline_t l;
            nt_line_parse(line, &l);
            nt_nccllog_feed(g, &l, nt_linereader_lineno(r));
        }
        nt_linereader_close(r);
        int ok;
        t->log_hash[i] = nt_file_hash(t->p.nccl_logs[i], &ok);
    }
    return NT_EXIT_OK;
}

/* The inputs the options name: the report, the --measured files, the job's NCCL_ALGO/PROTO, the
 * version, the replayed sources' points and the baselines' judgement. Returns an exit code. */
static int nt_read_inputs(nt_tune_t *t)
{
    char err[512];
    if (t->p.report_path) {
        /* read here, so that the reason is in the one line below (nt_rdoc_open logs its own) */
        cJSON *root = NULL;
        char why[160];
        nt_status_t st =
            nt_json_read_file_why(t->p.report_path, NT_RDOC_MAX_BYTES, &root, why, sizeof(why));
        if (st != NT_OK)
            return nt_bad("the report '%s': %s (give nettune probe's output, a "
                          "nettune.report/1)",
                          t->p.report_path, why);
        const char *schema = cJSON_IsObject(root) ? nt_json_get_str(root, "schema", NULL) : NULL;
        if (!schema || strcmp(schema, NT_REPORT_SCHEMA) != 0) {
            cJSON_Delete(root);
            return nt_bad("'%s' is not a nettune.report/1 (give nettune probe's output)%s",
                          t->p.report_path, "");
        }
        st = nt_rdoc_from_json(root, t->p.report_path, &t->report);
        if (st != NT_OK || t->report.kind != NT_DOC_REPORT) {
            if (st == NT_OK)
                nt_rdoc_close(&t->report);
            return nt_bad("'%s' is not a readable nettune.report/1 (nettune probe's output)%s",
                       t->p.report_path, "");
        }
        int ok;
        t->have_report = 1;
        t->report_hash = nt_file_hash(t->p.report_path, &ok);
    }
    for (size_t i = 0; i < t->p.nmeasured; i++) {
        int ok;
        t->measured_hash[i] = nt_file_hash(t->p.measured[i], &ok);
        if (nt_tune_measured_read(t, t->p.measured[i], err, sizeof(err)) != NT_OK)
            return nt_bad("%s%s", err, "");
    }
    if (!t->have_report && !t->nsources && !t->p.nlogs && !t->p.nmeasured) {
        nt_tune_params_usage(stderr);
        return nt_bad(
            "nothing to tune: give a probe report, --replay, --nccl-log or --measured%s%s", "", "");
    }
    /* the job's NCCL_ALGO / NCCL_PROTO (layer 3 of eligibility; they override the plugin) */
    for (size_t i = 0; i < t->p.nlogs; i++) {
        if (!t->env_job_algo)
            t->env_job_algo = (char *)nt_nccllog_env_get(&t->logs[i], "NCCL_ALGO");
        if (!t->env_job_proto)
            t->env_job_proto = (char *)nt_nccllog_env_get(&t->logs[i], "NCCL_PROTO");
    }
    /* a replay that forced NCCL_ALGO measures that algorithm, it does not restrict the job */
    if (t->nsources)
        t->env_job_algo = t->env_job_proto = NULL;
    nt_pick_version(t);
    nt_tune_replay(t);
    if (t->nsources && nt_tune_judge_baselines(t) != NT_OK)
        return nt_bad("the doctor's knowledge base (embedded) does not load: rebuild nettune%s%s",
                      "", "");
    return NT_EXIT_OK;
}

static int nt_report_has_gpus(const nt_tune_t *t)
{
    int gpus = 0;
    for (size_t i = 0; t->have_report && i < t->report.nnodes; i++)
        gpus |= t->report.nodes[i].ngpus > 0;
    return gpus;
}

/* The first reason of all: a report without GPUs. */
static int nt_no_gpus(const nt_tune_t *t)
{
    return nt_bad("nothing to tune: the report '%s' has no GPUs, so there is nothing for NCCL to "
                   "run (probe the GPU nodes, or give --nccl-log with NCCL's graph lines)%s",
                   t->p.report_path, "");
}

/* No shape to tune: why, in the order a user fixes it (the hardware, the test, the shape). */
static int nt_no_shape(const nt_tune_t *t)
{
    int rows = 0;
    for (size_t s = 0; s < t->nsources; s++)
        rows |= t->sources[s].rows > 0;
    if (t->have_report && !nt_report_has_gpus(t) && !t->p.nlogs)
        return nt_no_gpus(t);
    if (rows)
        return nt_bad("nothing to tune: the replayed tables are of tests NCCL's tuner never sees "
                   "(alltoall, sendrecv, ...) or of a collective the log does not name: name it "
                   "with --coll NAME, or give --shape NxP to tune from the model%s%s",
                   "", "");
    return nt_bad("nothing to tune: no communicator shape in the inputs (give --shape NxP)%s%s", "",
               "");
}

/* What the search found besides rules. */
typedef struct {
    size_t alternatives; /* forced choices measured beside a baseline at the same size */
    size_t unpaired;     /* forced choices with no baseline at their size */
    int confounded;      /* a source compared with a baseline that differs in more */
    size_t advice_set;   /* NAME=VALUE lines of the environment advice */
    int advice_only;     /* below 2.21 with advice: written although no rule reaches NCCL */
    int stopped;         /* --time-limit */
} evidence_t;

static void nt_count_evidence(const nt_tune_t *t, int stopped, evidence_t *ev)
{
    memset(ev, 0, sizeof(*ev));
    ev->stopped = stopped;
    for (size_t i = 0; i < t->npoints; i++) {
        const nt_tune_point_t *p = &t->points[i];
        if (p->is_default || (p->src >= 0 && t->sources[p->src].confounded) ||
            (p->algo < 0 && p->proto < 0))
            continue; /* an env.NCCL_X run forces no choice: its answer is advice, not a rule */
        int base = nt_tune_baseline_us(t, p) > 0;
        ev->alternatives += base;
        ev->unpaired += !base;
    }
    for (size_t s = 0; s < t->nsources; s++)
        ev->confounded |= t->sources[s].confounded;
    nt_env_advice_t advice[32];
    size_t n = nt_tune_env_advice(t, advice, sizeof(advice) / sizeof(advice[0]));
    for (size_t i = 0; i < n; i++)
        ev->advice_set += advice[i].set;
    /* below 2.21 the run is environment advice only (docs/tuner-cli.md): with advice, the
     * files are written although no rule can reach NCCL */
    ev->advice_only = t->target_version < NT_TUNE_MIN_RULE_VERSION && n > 0;
}

/* Whether there is anything to write: rules, a summary, advice, a plan, or measured alternatives
 * (that lost, or were confounded: an answer with no rule). */
static int nt_something_to_write(const nt_tune_t *t, const evidence_t *ev)
{
    return t->nrules || ev->stopped || t->nsummary || ev->advice_only || ev->alternatives ||
           ev->confounded || ev->advice_set || t->p.plan_out;
}

/* Nothing to write: the first reason that holds, in one line (docs/tuner-cli.md). */
static int nt_nothing_to_tune(const nt_tune_t *t, const evidence_t *ev)
{
    int steerable = t->npoints > 0;
    if (!t->p.quiet)
        nt_tune_print_summary(t, stderr);
    if (t->have_report && !nt_report_has_gpus(t) && !t->nmodelled)
        return nt_no_gpus(t);
    if (t->target_version < NT_TUNE_MIN_RULE_VERSION) {
        char vers[96];
        int v = t->p.version ? t->p.version : t->target_version; /* the one asked, not modelled */
        snprintf(vers, sizeof(vers), "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
        return nt_bad(
            "nothing to tune for %s: tuner rules reach NCCL from 2.21 (below: environment "
            "advice only) and the inputs give no environment advice (it comes from "
            "--replay runs whose NCCL_ settings differ)%s",
            vers, "");
    }
    const char *log = t->p.nlogs ? t->p.nccl_logs[0] : "";
    if (!steerable && !t->nmodelled)
        return nt_bad(
            "nothing to tune: the model has no facts for the shapes asked: no probe report "
            "with GPUs and no NCCL graph lines%s%s (give the probe report, or a log of "
            "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH)",
            log[0] ? " in " : "", log);
    if (ev->unpaired)
        return nt_bad("nothing to tune: the runs replayed force NCCL_ALGO/NCCL_PROTO or carry a "
                   "label, and none is NCCL's default at the same sizes: add a baseline --replay "
                   "(the same test without them)%s%s",
                   "", "");
    if (steerable || t->nmodelled)
        return nt_bad(
            "nothing to tune: no labelled or measured alternative to NCCL's default: add a "
            "labelled --replay (a run with another algorithm or protocol) or --measured "
            "(--pin-predicted writes the model's own choices as rules)%s%s",
            "", "");
    return nt_bad("nothing to tune: no collective the tuner steers in the inputs (alltoall and "
               "sendrecv never reach it)%s%s",
               "", "");
}

/* tuning.json, then (only once it is written: they would pair with a stale one) the advice, the
 * CSV and the plan. Returns an exit code. */
static int nt_write_outputs(const nt_tune_t *t)
{
    int rc = NT_EXIT_OK;
    cJSON *doc = nt_tune_tuning_json(t);
    char *text = doc ? cJSON_Print(doc) : NULL;
    if (text) {
        size_t n = strlen(text);
        char *withnl = malloc(n + 2);
        if (withnl) {
            memcpy(withnl, text, n);
            withnl[n] = '\n';
            withnl[n + 1] = '\0';
            if (nt_write_text(t->p.output, withnl)) /* the writer said why, in one line */
                rc = NT_EXIT_USAGE;
            free(withnl);
        }
    }
    free(text);
    cJSON_Delete(doc);
    if (rc != NT_EXIT_OK)
        return rc;
    char *env = t->p.env_out ? nt_tune_env_text(t) : NULL;
    if (env && nt_write_text(t->p.env_out, env))
        rc = NT_EXIT_USAGE;
    free(env);
    char *csv = t->p.csv_out ? nt_tune_csv(t) : NULL;
    if (csv && nt_write_text(t->p.csv_out, csv))
        rc = NT_EXIT_USAGE;
    free(csv);
    if (t->plan) {
        char *p = cJSON_Print(t->plan);
        if (!p || nt_write_text(t->p.plan_out, p))
            rc = NT_EXIT_USAGE;
        free(p);
    }
    return rc;
}

/* The summary on stdout (stderr when the tuning file went to stdout). */
static void nt_print_result(const nt_tune_t *t, const evidence_t *ev)
{
    FILE *out = strcmp(t->p.output, "-") == 0 ? stderr : stdout;
    if (t->p.json) {
        cJSON *s = nt_tune_summary_json(t);
        char *p = s ? cJSON_Print(s) : NULL;
        if (p)
            fprintf(out, "%s\n", p);
        free(p);
        cJSON_Delete(s);
        return;
    }
    nt_tune_print_summary(t, out);
    if (!t->nrules && ev->alternatives && !ev->stopped)
        nt_tune_print_lost(t, out);
    fprintf(out, "nettune tune: %zu rules for NCCL %d.%d.%d%s -> %s\n", t->nrules,
            t->target_version / 10000, t->target_version / 100 % 100, t->target_version % 100,
            t->target_version < NT_TUNE_MIN_RULE_VERSION ? " (below 2.21: environment advice only)"
                                                         : "",
            t->p.output);
}

/* The phases; every one returns an exit code, and t is freed once, here. */
static int nt_run_phases(nt_tune_t *t)
{
    int rc = nt_read_logs(t);
    if (rc != NT_EXIT_OK)
        return rc;
    if (t->p.print_model)
        return nt_print_model(t);
    if ((rc = nt_read_inputs(t)) != NT_EXIT_OK)
        return rc;
    nt_default_shapes(t);
    if (!t->p.nshapes)
        return nt_no_shape(t);
    if (t->p.plan_out) {
        t->plan = cJSON_CreateObject();
        cJSON_AddStringToObject(t->plan, "schema", "nettune.plan/1");
        cJSON_AddArrayToObject(t->plan, "shapes");
    }
    evidence_t ev;
    nt_count_evidence(t, nt_tune_search(t) == NT_ERR_INTERRUPTED, &ev);
    if (!nt_something_to_write(t, &ev))
        return nt_nothing_to_tune(t, &ev);
    if ((rc = nt_write_outputs(t)) != NT_EXIT_OK)
        return rc; /* and no success line */
    if (!t->p.quiet)
        nt_print_result(t, &ev);
    int warn = 0;
    for (size_t i = 0; i < t->nfindings; i++)
        warn |= t->findings[i].severity == NT_ANOMALY_SEV_WARN;
    return nt_exit_code(0, warn, ev.stopped, 0, 0);
}

/* The --replay files, each read and then labelled by the --label lines after it, in the order
 * given. Returns an exit code. */
static int nt_read_replays(nt_tune_t *t)
{
    char e[512];
    for (size_t i = 0; i < t->p.nreplays; i++) {
        const nt_tune_replay_t *r = &t->p.replays[i];
        if (nt_tune_source_read(&t->sources[t->nsources], r->path, e, sizeof(e)) != NT_OK)
            return nt_bad("%s%s", e, "");
        t->nsources++;
        for (size_t k = 0; k < r->nlabels; k++)
            if (nt_tune_source_label(&t->sources[i], r->labels[k], e, sizeof(e)) != NT_OK)
                return nt_bad("%s%s", e, "");
    }
    return NT_EXIT_OK;
}

int nt_tune_run(const nt_tune_params_t *p)
{
    nt_tune_t *t = calloc(1, sizeof(*t)); /* large (the sources and logs): not on the stack */
    struct timespec ts;
    int rc;

    if (!t) {
        fprintf(stderr, "nettune tune: out of memory\n");
        return NT_EXIT_USAGE;
    }
    t->p = *p;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t->t_start = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    t->completed = 1;
    rc = nt_read_replays(t);
    if (rc == NT_EXIT_OK)
        rc = nt_run_phases(t);
    nt_tune_free(t);
    free(t);
    return rc;
}
