/* NCCL's own account of a measuring run (tuner/measure/measure.h): the printed tuning table and
 * the per-call TUNING lines, read from the rank's NCCL_DEBUG_FILE with the readers that exist
 * for logs (lib/nccl_table.c, lib/nccllog.c) and attached to the result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "nettune/logline.h"
#include "nettune/nccl_table.h"
#include "nettune/nccllog.h"
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

nt_status_t nt_measure_capture_attach(cJSON *doc, const char *path, size_t max_calls)
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
    nt_linereader_t *r = nt_linereader_open(path);
    if (!r) {
        cJSON_AddStringToObject(o, "log_missing", "NCCL wrote no debug file");
        return NT_ERR_NOT_FOUND;
    }
    nt_nccllog_t g;
    nt_nccllog_init(&g);
    const char *line;
    size_t len;
    unsigned long n = 0;
    while (nt_linereader_next(r, &line, &len) == 1) {
        nt_logline_t l;
        nt_line_parse(line, &l);
        nt_nccllog_feed(&g, &l, ++n);
    }
    nt_linereader_close(r);
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
    nt_nccllog_cleanup(&g);
    return NT_OK;
}
