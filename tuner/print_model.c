/* `--print-model` (tuner/print_model.h) and NCCL's table layout (tuner/model.h
 * nt_model_print_table). */
#include "print_model.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_versions.h"
#include "nettune/log.h"

static void nt_line_start(FILE *out, const char *prefix)
{
    if (prefix && *prefix)
        fprintf(out, "%s ", prefix);
}

/* v2.14.3-1 tuning.cc:224-249 (rows) and v2.28.9-1 tuning.cc:499-539 (blocks of 3). */
void nt_model_print_table(FILE *out, const nt_model_table_t *t, const char *prefix)
{
    if (!out || !t)
        return;
    const nt_model_version_t *v = nt_model_version_find(t->version);
    int nalgos = v ? v->nalgos : (t->version >= 22300 ? 7 : t->version >= 21700 ? 5 : 4);
    if (t->version && t->version < 21800) {
        nt_line_start(out, prefix);
        fprintf(out, "Latency/AlgBw |");
        for (int a = 0; a < nalgos; a++)
            for (int p = 0; p < NT_NUM_PROTOS; p++)
                fprintf(out, " %7s/%6s |", nt_model_algo_name(a), nt_model_proto_name(p));
        fprintf(out, "\n");
        nt_line_start(out, prefix);
        fprintf(out, " Max NThreads |");
        for (int a = 0; a < nalgos; a++)
            for (int p = 0; p < NT_NUM_PROTOS; p++)
                fprintf(out, " %14d |", t->max_threads[a][p]);
        fprintf(out, "\n");
        for (int c = 0; c < NT_NUM_COLLS; c++) {
            nt_line_start(out, prefix);
            fprintf(out, "%13s |", nt_model_coll_name(c));
            for (int a = 0; a < nalgos; a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++)
                    fprintf(out, "%8.1f/%6.1f |", t->cell[c][a][p].lat_us,
                            t->cell[c][a][p].bw_GBps);
            fprintf(out, "\n");
        }
        return;
    }
    for (int block = 0; block < (nalgos + 2) / 3; block++) {
        nt_line_start(out, prefix);
        fprintf(out, "  Algorithm   |");
        for (int ba = 0; ba < 3; ba++) {
            int a = block * 3 + ba;
            if (a >= nalgos)
                continue;
            fprintf(out, " %14s   %14s   %14s |", "", nt_model_algo_name(a), "");
        }
        fprintf(out, "\n");
        nt_line_start(out, prefix);
        fprintf(out, "  Protocol    |");
        for (int ba = 0; ba < 3; ba++) /* NCCL prints all 9 protocol cells even in the last block */
            for (int p = 0; p < NT_NUM_PROTOS; p++)
                fprintf(out, " %14s |", nt_model_proto_name(p));
        fprintf(out, "\n");
        nt_line_start(out, prefix);
        fprintf(out, " Max NThreads |");
        for (int ba = 0; ba < 3; ba++) {
            int a = block * 3 + ba;
            if (a >= nalgos)
                continue;
            for (int p = 0; p < NT_NUM_PROTOS; p++)
                fprintf(out, " %14d |", t->max_threads[a][p]);
        }
        fprintf(out, "\n");
        for (int c = 0; c < NT_NUM_COLLS; c++) {
            nt_line_start(out, prefix);
            fprintf(out, "%13s |", nt_model_coll_name(c));
            for (int ba = 0; ba < 3; ba++) {
                int a = block * 3 + ba;
                if (a >= nalgos)
                    continue;
                for (int p = 0; p < NT_NUM_PROTOS; p++)
                    fprintf(out, "%8.1f/%6.1f |", t->cell[c][a][p].lat_us,
                            t->cell[c][a][p].bw_GBps);
            }
            fprintf(out, "\n");
        }
    }
}

static const char *nt_label_name(nt_fact_label_t l)
{
    return l == NT_FACT_MEASURED ? "measured" : l == NT_FACT_INFERRED ? "inferred" : "assumed";
}

static const char *nt_why_name(nt_cell_why_t w)
{
    switch (w) {
    case NT_CELL_OK:
        return "offered";
    case NT_CELL_NOT_COVERED:
        return "not covered";
    case NT_CELL_ALGO_DISABLED:
        return "algorithm disabled";
    case NT_CELL_PROTO_DISABLED:
        return "protocol disabled";
    case NT_CELL_ZERO_BW:
        return "zero bandwidth";
    case NT_CELL_ENV:
        return "NCCL_ALGO/NCCL_PROTO";
    }
    return "?";
}

static const char *graph_fact_names[NT_NUM_GRAPH_FACTS] = {
    "nchannels",  "bw_intra_GBps", "bw_inter_GBps",    "type_intra",
    "type_inter", "pattern",       "latency_inter_us", "same_channels"};
static const char *comm_fact_names[NT_NUM_COMM_FACTS] = {
    "nccl_version", "nranks",         "nnodes",  "sm",       "cpu",
    "cuda_runtime", "comm_nchannels", "collnet", "nvswitch", "net_device"};
#define NT_MODEL_NGRAPHS                                                                           \
    5 /* Tree, Ring, CollNetDirect, CollNetChain, NVLS: the graphs NCCL builds */

static double nt_graph_fact_value(const nt_model_graph_t *g, int f)
{
    switch (f) {
    case NT_GF_NCHANNELS:
        return g->nchannels;
    case NT_GF_BW_INTRA:
        return g->bw_intra_GBps;
    case NT_GF_BW_INTER:
        return g->bw_inter_GBps;
    case NT_GF_TYPE_INTRA:
        return g->type_intra;
    case NT_GF_TYPE_INTER:
        return g->type_inter;
    case NT_GF_PATTERN:
        return g->pattern;
    case NT_GF_LATENCY_INTER:
        return g->latency_inter_us;
    default:
        return g->same_channels;
    }
}

/* Every assumed fact, "sm" or "Ring.bw_intra_GBps", into ARR (JSON). */
static void nt_list_assumed(const nt_model_input_t *in, cJSON *arr)
{
    for (int f = 0; f < NT_NUM_COMM_FACTS; f++)
        if (in->label[f] == NT_FACT_ASSUMED)
            cJSON_AddItemToArray(arr, cJSON_CreateString(comm_fact_names[f]));
    for (int g = 0; g < NT_MODEL_NGRAPHS; g++)
        for (int f = 0; f < NT_NUM_GRAPH_FACTS; f++) {
            if (in->graph[g].label[f] != NT_FACT_ASSUMED)
                continue;
            /* the model reads the pattern of the Tree graph only, sameChannels of the Ring only */
            if ((f == NT_GF_PATTERN && g != NT_ALGO_TREE) ||
                (f == NT_GF_SAME_CHANNELS && g != NT_ALGO_RING))
                continue;
            char name[64];
            snprintf(name, sizeof(name), "%s.%s", nt_model_algo_name(g), graph_fact_names[f]);
            cJSON_AddItemToArray(arr, cJSON_CreateString(name));
        }
}

static cJSON *nt_fact(double v, nt_fact_label_t l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "value", v);
    cJSON_AddStringToObject(o, "label", nt_label_name(l));
    return o;
}

static double nt_round1(double x)
{
    return round(x * 10.0) / 10.0;
}

static cJSON *nt_json_doc(const nt_model_input_t *in, const nt_model_table_t *m,
                       const nt_nccl_table_t *nccl, const nt_model_fit_t *fit)
{
    cJSON *doc = cJSON_CreateObject();
    char ver[32];
    snprintf(ver, sizeof(ver), "%d.%d.%d", in->version / 10000, in->version / 100 % 100,
             in->version % 100);
    cJSON_AddStringToObject(doc, "nccl_version", ver);
    const nt_model_version_t *v = nt_model_version_find(in->version);
    if (v)
        cJSON_AddStringToObject(doc, "modelled_from", v->tag);
    else
        cJSON_AddNullToObject(doc, "modelled_from");
    cJSON_AddStringToObject(doc, "verdict", fit->verdict);
    cJSON_AddNumberToObject(doc, "fitted_cells", fit->fitted_cells);
    cJSON_AddNumberToObject(doc, "verified_cells", fit->verified_cells);
    cJSON_AddNumberToObject(doc, "mismatched_cells", fit->mismatched_cells);
    cJSON_AddNumberToObject(doc, "compared_cells", fit->compared_cells);
    cJSON *fa = cJSON_AddArrayToObject(doc, "fitted_from");
    for (int i = 0; i < fit->fitted_cells && i < NT_MODEL_FIT_MAX_LIST; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "coll", nt_model_coll_name(fit->fitted_at[i][0]));
        cJSON_AddStringToObject(o, "algo", nt_model_algo_name(fit->fitted_at[i][1]));
        cJSON_AddStringToObject(o, "proto", nt_model_proto_name(fit->fitted_at[i][2]));
        cJSON_AddItemToArray(fa, o);
    }
    cJSON *md = cJSON_AddObjectToObject(doc, "max_difference");
    if (fit->max_coll >= 0) {
        cJSON_AddStringToObject(md, "coll", nt_model_coll_name(fit->max_coll));
        cJSON_AddStringToObject(md, "algo", nt_model_algo_name(fit->max_algo));
        cJSON_AddStringToObject(md, "proto", nt_model_proto_name(fit->max_proto));
    }
    cJSON_AddNumberToObject(md, "lat_us",
                            isfinite(fit->max_lat_diff_us) ? fit->max_lat_diff_us : -1);
    cJSON_AddNumberToObject(md, "bw_GBps",
                            isfinite(fit->max_bw_diff_GBps) ? fit->max_bw_diff_GBps : -1);

    cJSON *facts = cJSON_AddObjectToObject(doc, "facts");
    cJSON_AddItemToObject(facts, "nccl_version", nt_fact(in->version, in->label[NT_CF_VERSION]));
    cJSON_AddItemToObject(facts, "nranks", nt_fact(in->nranks, in->label[NT_CF_NRANKS]));
    cJSON_AddItemToObject(facts, "nnodes", nt_fact(in->nnodes, in->label[NT_CF_NNODES]));
    cJSON_AddItemToObject(facts, "ppn", nt_fact(in->ppn, in->label[NT_CF_NNODES]));
    cJSON_AddItemToObject(facts, "sm", nt_fact(in->min_sm, in->label[NT_CF_SM]));
    cJSON *cpu = nt_fact(in->cpu_vendor, in->label[NT_CF_CPU]);
    static const char *vendors[] = {"intel", "amd", "zhaoxin", "mixed", "other"};
    static const char *archs[] = {"x86", "power", "arm", "other"};
    cJSON_AddStringToObject(cpu, "vendor", vendors[in->cpu_vendor]);
    cJSON_AddStringToObject(cpu, "arch", archs[in->cpu_arch]);
    cJSON_AddItemToObject(facts, "cpu", cpu);
    cJSON_AddItemToObject(facts, "cuda_runtime", nt_fact(in->cuda_runtime, in->label[NT_CF_CUDA]));
    cJSON_AddItemToObject(facts, "comm_nchannels",
                          nt_fact(in->comm_nchannels, in->label[NT_CF_COMM_NCHANNELS]));
    cJSON_AddItemToObject(facts, "collnet_enable",
                          nt_fact(in->collnet_enable, in->label[NT_CF_COLLNET]));
    cJSON_AddItemToObject(facts, "nvswitch_count", nt_fact(in->nvs_count, in->label[NT_CF_NVS]));
    cJSON *graphs = cJSON_AddObjectToObject(facts, "graphs");
    for (int g = 0; g < NT_MODEL_NGRAPHS; g++) {
        cJSON *go = cJSON_AddObjectToObject(graphs, nt_model_algo_name(g));
        for (int f = 0; f < NT_NUM_GRAPH_FACTS; f++) {
            cJSON *fo = nt_fact(nt_graph_fact_value(&in->graph[g], f), in->graph[g].label[f]);
            if (f == NT_GF_TYPE_INTRA || f == NT_GF_TYPE_INTER)
                cJSON_AddStringToObject(
                    fo, "name", nt_model_path_name((int)nt_graph_fact_value(&in->graph[g], f)));
            cJSON_AddItemToObject(go, graph_fact_names[f], fo);
        }
    }
    nt_list_assumed(in, cJSON_AddArrayToObject(doc, "assumed"));

    cJSON *cells = cJSON_AddArrayToObject(doc, "cells");
    int nalgos = v ? v->nalgos : NT_NUM_ALGOS;
    for (int c = 0; c < NT_NUM_COLLS; c++)
        for (int a = 0; a < nalgos; a++)
            for (int p = 0; p < NT_NUM_PROTOS; p++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "coll", nt_model_coll_name(c));
                cJSON_AddStringToObject(o, "algo", nt_model_algo_name(a));
                cJSON_AddStringToObject(o, "proto", nt_model_proto_name(p));
                cJSON *mo = cJSON_AddObjectToObject(o, "model");
                if (m) {
                    cJSON_AddNumberToObject(mo, "lat_us",
                                            round(m->cell[c][a][p].lat_us * 1000) / 1000);
                    cJSON_AddNumberToObject(mo, "bw_GBps",
                                            round(m->cell[c][a][p].bw_GBps * 1000) / 1000);
                    cJSON_AddBoolToObject(mo, "enabled", m->cell[c][a][p].bw_GBps > 0);
                    cJSON_AddStringToObject(mo, "why", nt_why_name(m->cell[c][a][p].why));
                }
                if (nccl && nccl->has[c][a][p]) {
                    cJSON *no = cJSON_AddObjectToObject(o, "nccl");
                    cJSON_AddNumberToObject(no, "lat_us", nt_round1(nccl->lat_us[c][a][p]));
                    cJSON_AddNumberToObject(no, "bw_GBps", nt_round1(nccl->bw_GBps[c][a][p]));
                    if (m)
                        cJSON_AddBoolToObject(
                            o, "match",
                            fabs(m->cell[c][a][p].lat_us - nccl->lat_us[c][a][p]) <=
                                    NT_MODEL_TOL_LAT_US &&
                                fabs(m->cell[c][a][p].bw_GBps - nccl->bw_GBps[c][a][p]) <=
                                    NT_MODEL_TOL_BW_GBPS);
                } else {
                    cJSON_AddNullToObject(o, "nccl");
                }
                cJSON_AddItemToArray(cells, o);
            }
    return doc;
}

/* NCCL's table beside the model's, cell by cell, in NCCL's layout for the version (rows of one
 * function before 2.18, blocks of 3 algorithms from 2.18: v2.14.3-1 tuning.cc:224-249, v2.28.9-1
 * tuning.cc:499-539) without NCCL's line prefix: per function three lines, NCCL's value, the
 * model's, and model - NCCL; a difference beyond the print precision (NT_MODEL_TOL_*) is marked
 * '*' before the cell's '|'. A cell NCCL did not print is "-". */
static void nt_print_side_by_side(FILE *out, const nt_model_table_t *t, const nt_nccl_table_t *n)
{
    const nt_model_version_t *v = nt_model_version_find(t->version);
    int nalgos = v ? v->nalgos : (t->version >= 22300 ? 7 : t->version >= 21700 ? 5 : 4);
    if (nalgos > NT_NUM_ALGOS)
        nalgos = NT_NUM_ALGOS;
    int rows = t->version && t->version < 21800; /* one group of every algorithm */
    int group = rows ? nalgos : 3;
    for (int first = 0; first < nalgos; first += group) {
        int last = first + group < nalgos ? first + group : nalgos;
        if (rows) {
            fprintf(out, "%-20s|", "Latency/AlgBw");
            for (int a = first; a < last; a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++)
                    fprintf(out, " %7s/%6s |", nt_model_algo_name(a), nt_model_proto_name(p));
            fprintf(out, "\n");
        } else {
            fprintf(out, "%-20s|", "  Algorithm");
            for (int a = first; a < last; a++)
                fprintf(out, " %14s   %14s   %14s |", "", nt_model_algo_name(a), "");
            fprintf(out, "\n%-20s|", "  Protocol");
            for (int a = first; a < last; a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++)
                    fprintf(out, " %14s |", nt_model_proto_name(p));
            fprintf(out, "\n");
        }
        for (int side = 0; side < 3; side++) {
            fprintf(out, "%13s %5s |", side ? "" : "Max NThreads",
                    side == 0 ? "NCCL" : side == 1 ? "model" : "diff");
            for (int a = first; a < last; a++)
                for (int p = 0; p < NT_NUM_PROTOS; p++) {
                    int has = a < NT_NCCL_TABLE_ALGOS && n->has_threads[a][p];
                    int nv = has ? n->max_threads[a][p] : 0, mv = t->max_threads[a][p];
                    if (side == 1)
                        fprintf(out, " %14d |", mv);
                    else if (!has)
                        fprintf(out, " %14s |", "-");
                    else if (side == 0)
                        fprintf(out, " %14d |", nv);
                    else
                        fprintf(out, " %+14d%c|", mv - nv, mv != nv ? '*' : ' ');
                }
            fprintf(out, "\n");
        }
        for (int c = 0; c < NT_NUM_COLLS; c++)
            for (int side = 0; side < 3; side++) {
                fprintf(out, "%13s %5s |", side ? "" : nt_model_coll_name(c),
                        side == 0 ? "NCCL" : side == 1 ? "model" : "diff");
                for (int a = first; a < last; a++)
                    for (int p = 0; p < NT_NUM_PROTOS; p++) {
                        const nt_model_cell_t *m = &t->cell[c][a][p];
                        int has = c < NT_NCCL_TABLE_COLLS && a < NT_NCCL_TABLE_ALGOS &&
                                  n->has[c][a][p];
                        if (side == 1) {
                            fprintf(out, "%8.1f/%6.1f |", m->lat_us, m->bw_GBps);
                        } else if (!has) {
                            fprintf(out, " %14s |", "-");
                        } else if (side == 0) {
                            fprintf(out, "%8.1f/%6.1f |", n->lat_us[c][a][p], n->bw_GBps[c][a][p]);
                        } else {
                            double dl = m->lat_us - n->lat_us[c][a][p];
                            double db = m->bw_GBps - n->bw_GBps[c][a][p];
                            int off = fabs(dl) > NT_MODEL_TOL_LAT_US || fabs(db) > NT_MODEL_TOL_BW_GBPS;
                            fprintf(out, "%+8.1f/%+6.1f%c|", dl, db, off ? '*' : ' ');
                        }
                    }
                fprintf(out, "\n");
            }
    }
}

/* The facts the model assumed, each with what would supply it. */
static void nt_print_assumed(FILE *out, const nt_model_input_t *in)
{
    static const struct {
        int fact; /* nt_comm_fact_t, or -1 for the graph facts */
        const char *option;
    } supply[] = {
        {NT_CF_VERSION, "--nccl-version X.Y (or the log's \"NCCL version\" line)"},
        {NT_CF_NRANKS, "--shape NxP (or the log's comm line, NCCL_DEBUG_SUBSYS=INIT)"},
        {NT_CF_NNODES, "--shape NxP (or the log's comm line, NCCL_DEBUG_SUBSYS=INIT)"},
        {NT_CF_SM, "--sm N (compute capability x 10, e.g. 90 for H100)"},
        {NT_CF_CPU, "--cpu-vendor intel|amd|other"},
        {NT_CF_CUDA, "the log's \"NCCL version ...+cudaX.Y\" line"},
        {NT_CF_COMM_NCHANNELS, "the log's INIT and GRAPH lines (NCCL_DEBUG_SUBSYS=INIT,GRAPH)"},
        {NT_CF_COLLNET, "the log's INIT and GRAPH lines (NCCL_DEBUG_SUBSYS=INIT,GRAPH)"},
        {NT_CF_NVS, "the log's INIT and GRAPH lines (NCCL_DEBUG_SUBSYS=INIT,GRAPH)"},
        {NT_CF_NET_DEVICE, "the log's INIT and GRAPH lines (NCCL_DEBUG_SUBSYS=INIT,GRAPH)"},
        {-1, "the log's GRAPH lines (NCCL_DEBUG_SUBSYS=INIT,GRAPH)"}};
    int any = 0;
    fprintf(out, "assumed facts, and the option that supplies each:");
    /* one line per option, naming every fact it supplies */
    for (size_t k = 0; k < sizeof(supply) / sizeof(supply[0]); k++) {
        int seen = 0; /* this option was listed already for an earlier fact */
        for (size_t j = 0; j < k; j++)
            seen |= strcmp(supply[j].option, supply[k].option) == 0;
        if (seen)
            continue;
        int n = 0;
        for (size_t j = k; j < sizeof(supply) / sizeof(supply[0]); j++) {
            if (strcmp(supply[j].option, supply[k].option) != 0)
                continue;
            if (supply[j].fact >= 0) {
                if (in->label[supply[j].fact] != NT_FACT_ASSUMED)
                    continue;
                fprintf(out, "%s%s", n++ ? ", " : "\n  ", comm_fact_names[supply[j].fact]);
                continue;
            }
            for (int g = 0; g < NT_MODEL_NGRAPHS; g++)
                for (int f = 0; f < NT_NUM_GRAPH_FACTS; f++) {
                    if (in->graph[g].label[f] != NT_FACT_ASSUMED ||
                        (f == NT_GF_PATTERN && g != NT_ALGO_TREE) ||
                        (f == NT_GF_SAME_CHANNELS && g != NT_ALGO_RING))
                        continue;
                    fprintf(out, "%s%s.%s", n++ ? ", " : "\n  ", nt_model_algo_name(g),
                            graph_fact_names[f]);
                }
        }
        if (n)
            fprintf(out, ": %s", supply[k].option);
        any |= n;
    }
    fprintf(out, "%s\n", any ? "" : " none");
}

nt_status_t nt_tune_print_model(FILE *out, nt_model_input_t *in, const nt_nccl_table_t *nccl,
                                const char *env_algo, const char *env_proto, int json,
                                nt_model_fit_t *fit_out)
{
    if (!out || !in)
        return NT_ERR_INVALID;
    if (!in->version && nccl && nccl->version)
        in->version = nccl->version;
    nt_model_env_filter_t env;
    char err[256] = "";
    nt_status_t rc =
        nt_model_env_filter_parse(in->version, env_algo, env_proto, &env, err, sizeof(err));
    if (rc != NT_OK) {
        nt_log(NT_LOG_ERROR, NT_SUB_TUNE, "NCCL_ALGO/NCCL_PROTO: %s (as NCCL %d.%d would read it)",
               err, in->version / 10000, in->version / 100 % 100);
        return rc;
    }
    nt_model_fit_t fit;
    memset(&fit, 0, sizeof(fit));
    fit.max_coll = -1;
    nt_model_table_t m;
    int have_model = 0;
    if (nccl) {
        rc = nt_model_fit_table(in, nccl, &env, &m, &fit);
        if (rc != NT_OK)
            return rc;
        have_model = fit.modelled;
    } else if (nt_model_version_supported(in->version)) {
        rc = nt_model_compute(in, &env, &m);
        if (rc != NT_OK)
            return rc;
        have_model = 1;
        snprintf(fit.verdict, sizeof(fit.verdict),
                 "not verified: no NCCL table in the log (NCCL prints it with NCCL_DEBUG=INFO "
                 "NCCL_DEBUG_SUBSYS=TUNING)");
    } else {
        snprintf(fit.verdict, sizeof(fit.verdict), "not verified: version not modelled");
    }
    if (fit_out)
        *fit_out = fit;
    if (json) {
        cJSON *doc = nt_json_doc(in, have_model ? &m : NULL, nccl, &fit);
        char *text = doc ? cJSON_Print(doc) : NULL;
        cJSON_Delete(doc);
        if (!text)
            return NT_ERR_NOMEM;
        int bad = fprintf(out, "%s\n", text) < 0;
        free(text);
        return bad ? NT_ERR_IO : NT_OK;
    }
    if (have_model && nccl)
        nt_print_side_by_side(out, &m, nccl);
    else if (have_model)
        nt_model_print_table(out, &m, NULL);
    fprintf(out, "model vs NCCL: %s", fit.verdict);
    if (fit.modelled && nccl)
        fprintf(out,
                " (%d cells fitted, %d verified, %d mismatched of %d printed; largest difference "
                "%.2f us, %.2f GB/s",
                fit.fitted_cells, fit.verified_cells, fit.mismatched_cells, fit.compared_cells,
                fit.max_lat_diff_us, fit.max_bw_diff_GBps);
    if (fit.modelled && nccl && fit.max_coll >= 0)
        fprintf(out, " at %s %s/%s", nt_model_coll_name(fit.max_coll),
                nt_model_algo_name(fit.max_algo), nt_model_proto_name(fit.max_proto));
    if (fit.modelled && nccl)
        fprintf(out, ")");
    fprintf(out, "\n");
    nt_print_assumed(out, in);
    return ferror(out) ? NT_ERR_IO : NT_OK;
}
