/* NCCL's own account of a measuring run (tuner/measure/measure.h): the printed tuning table and
 * the per-call TUNING lines, read from the rank's NCCL_DEBUG_FILE with the readers that exist
 * for logs (lib/nccl/nccl_table.c, lib/nccl/nccllog.c) and attached to the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "nettune/logline.h"
#include "nettune/nccl_table.h"
#include "nettune/nccllog.h"
#include "print_model.h"
#include "tune.h"
#include "tuner/model.h"

void nt_measure_capture_setup(const char *path)
{
    /* the user's own settings win; otherwise INFO with the table's and the calls' subsystems
     * (NVIDIA/nccl v2.28.9-1 src/graph/tuning.cc prints the table under NCCL_TUNING, and
     * src/enqueue.cc the per-call choice) */
    if (!getenv("NCCL_DEBUG"))
        setenv("NCCL_DEBUG", "INFO", 1);
    if (!getenv("NCCL_DEBUG_SUBSYS"))
        setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV,GRAPH,TUNING", 1);
    if (!getenv("NCCL_DEBUG_FILE"))
        setenv("NCCL_DEBUG_FILE", path, 1);
}

/* The model against NCCL's table t for the log's communicator g: nettune tune --print-model's
 * JSON (the same input and the same printer: tuner/inputs.c nt_tune_log_input,
 * tuner/print_model.c), as "model_check" under o. */
static void nt_model_check(cJSON *o, const nt_nccllog_t *g, const nt_nccl_table_t *t, int sm,
                        const nt_tune_shape_t *shape)
{
    nt_model_input_t in;
    int version = g->version ? g->version : t->version;
    char *buf = NULL;
    size_t len = 0;
    nt_model_fit_t fit;
    FILE *m = NULL;
    const char *why = NULL;
    if (!version)
        why = "the log has no NCCL version";
    else if (nt_tune_log_input(g, version, shape, sm, -1, &in) != NT_OK)
        why = "the log's communicator shape is not one the model takes";
    else if (!(m = open_memstream(&buf, &len)))
        why = "out of memory";
    else if (nt_tune_print_model(m, &in, t, nt_nccllog_env_get(g, "NCCL_ALGO"),
                                 nt_nccllog_env_get(g, "NCCL_PROTO"), 1, &fit) != NT_OK)
        why = "the model could not be printed for it (bad NCCL_ALGO/NCCL_PROTO?)";
    if (m)
        fclose(m);
    cJSON *j = !why && buf ? cJSON_Parse(buf) : NULL;
    free(buf);
    if (!j) {
        j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "verdict", why ? why : "the model's JSON did not parse");
    }
    cJSON_AddItemToObject(o, "model_check", j);
}

/* Every line of the open NCCL log r fed to the one reader of NCCL's facts (lib/nccl/nccllog.c) into
 * g (initialised here; the caller cleans it up); r is closed. */
static void nt_log_read(nt_linereader_t *r, nt_nccllog_t *g)
{
    const char *line;
    size_t len;
    unsigned long n = 0;
    nt_nccllog_init(g);
    while (nt_linereader_next(r, &line, &len) == 1) {
        nt_logline_t l;
        nt_line_parse(line, &l);
        nt_nccllog_feed(g, &l, ++n);
    }
    nt_linereader_close(r);
}

nt_status_t nt_measure_capture_attach(cJSON *doc, const char *path, size_t max_calls, int sm,
                                      const nt_tune_shape_t *shape)
{
    cJSON *o = cJSON_AddObjectToObject(doc, "nccl");
    if (!o)
        return NT_ERR_NOMEM;
    cJSON_AddStringToObject(o, "log", path);
    nt_nccl_table_t t;
    char err[256] = "";
    nt_status_t st = nt_nccl_table_read(path, &t, err, sizeof(err));
    if (st == NT_OK) {
        cJSON *tab = cJSON_AddObjectToObject(o, "table");
        cJSON_AddNumberToObject(tab, "version", t.version);
        cJSON_AddNumberToObject(tab, "cells", t.ncells);
        cJSON *cells = cJSON_AddArrayToObject(tab, "entries");
        for (int c = 0; c < NT_NCCL_TABLE_COLLS; c++)
            for (int a = 0; a < NT_NCCL_TABLE_ALGOS; a++)
                for (int p = 0; p < NT_NCCL_TABLE_PROTOS; p++) {
                    if (!t.has[c][a][p])
                        continue;
                    cJSON *e = cJSON_CreateObject();
                    cJSON_AddStringToObject(e, "coll", nt_model_coll_name(c));
                    cJSON_AddStringToObject(e, "algo", nt_model_algo_name(a));
                    cJSON_AddStringToObject(e, "proto", nt_model_proto_name(p));
                    cJSON_AddNumberToObject(e, "lat_us", t.lat_us[c][a][p]);
                    cJSON_AddNumberToObject(e, "bw_GBps", t.bw_GBps[c][a][p]);
                    cJSON_AddItemToArray(cells, e);
                }
    } else {
        cJSON_AddStringToObject(o, "table_missing", err[0] ? err : nt_status_string(st));
    }
    int have_table = st == NT_OK;
    nt_linereader_t *r = nt_linereader_open(path);
    if (!r) {
        cJSON_AddStringToObject(o, "log_missing", "NCCL wrote no debug file");
        return NT_ERR_NOT_FOUND;
    }
    nt_nccllog_t g;
    nt_log_read(r, &g);
    cJSON_AddNumberToObject(o, "version", g.version);
    cJSON_AddNumberToObject(o, "tuning_calls", (double)g.ncalls);
    cJSON *calls = cJSON_AddArrayToObject(o, "calls");
    for (size_t i = 0; i < g.ncalls && i < max_calls; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "coll", g.calls[i].coll);
        cJSON_AddNumberToObject(e, "bytes", (double)g.calls[i].bytes);
        cJSON_AddStringToObject(e, "algo", g.calls[i].algo);
        cJSON_AddStringToObject(e, "proto", g.calls[i].proto);
        cJSON_AddItemToArray(calls, e);
    }
    if (have_table)
        nt_model_check(o, &g, &t, sm, shape);
    nt_nccllog_cleanup(&g);
    return NT_OK;
}

int nt_measure_side_evidence(cJSON *side, const char *path, int want_plugin,
                             const char *tuning_path)
{
    cJSON *o = cJSON_AddObjectToObject(side, "nccl_log");
    if (!o)
        return 0;
    cJSON_AddStringToObject(o, "log", path);
    nt_linereader_t *r = nt_linereader_open(path);
    int ok = 0;
    const char *why;
    if (!r) {
        why = "NCCL wrote no debug file (NCCL_DEBUG_FILE set elsewhere?)";
    } else {
        nt_nccllog_t g;
        nt_log_read(r, &g);
        const char *env = nt_nccllog_env_get(&g, "NCCL_TUNER_PLUGIN");
        if (env)
            cJSON_AddStringToObject(o, "NCCL_TUNER_PLUGIN", env);
        else
            cJSON_AddNullToObject(o, "NCCL_TUNER_PLUGIN");
        if (g.tuner_loaded[0])
            cJSON_AddStringToObject(o, "tuner_loaded", g.tuner_loaded);
        else
            cJSON_AddNullToObject(o, "tuner_loaded");
        if (g.nettune_file > 0)
            cJSON_AddStringToObject(o, "tuning_file", g.tuner_file);
        else
            cJSON_AddNullToObject(o, "tuning_file");
        if (!g.nccl_lines) {
            why = "the log has no NCCL INFO lines (NCCL_DEBUG is not INFO?)";
        } else if (want_plugin) {
            ok = strstr(g.tuner_loaded, "nettune") && g.nettune_file > 0 &&
                 (!tuning_path || !strcmp(g.tuner_file, tuning_path));
            why = ok ? "NCCL loaded nettune's plugin and it loaded the file"
                  : !strstr(g.tuner_loaded, "nettune") ? "NCCL does not say it loaded nettune's "
                                                         "plugin"
                  : g.nettune_file <= 0 ? "nettune's plugin says it loaded no tuning file"
                                        : "nettune's plugin loaded another tuning file";
        } else {
            ok = !g.tuner_loaded[0] && g.nettune_file == 0;
            why =
                ok ? (env && !strcmp(env, "none") ? "NCCL_TUNER_PLUGIN=none: NCCL loaded no tuner "
                                                    "plugin"
                                                  : "NCCL loaded no tuner plugin")
                   : "NCCL loaded a tuner plugin";
        }
        nt_nccllog_cleanup(&g);
    }
    cJSON_AddBoolToObject(o, "confirmed", ok);
    cJSON_AddStringToObject(o, "why", why);
    return ok;
}
