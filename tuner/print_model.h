/* `nettune tune --nccl-log LOG --print-model [--format json]`: the model's table
 * beside NCCL's own printed table. The CLI reads the log (graph lines, comm line, NCCL_ALGO /
 * NCCL_PROTO lines: lib/ log reader; the table: include/nettune/nccl_table.h), fills an
 * nt_model_input_t with each fact labelled, and calls nt_tune_print_model(). */
#ifndef NETTUNE_TUNER_PRINT_MODEL_H
#define NETTUNE_TUNER_PRINT_MODEL_H

#include <stdio.h>

#include "nettune/nccl_table.h"
#include "model.h"

/* Result of checking the model against NCCL's printed table. */
typedef struct nt_model_fit {
    int modelled;         /* the table's version is modelled */
    int fitted_cells;     /* cells used to fit facts that were not given (labelled assumed) */
    int verified_cells;   /* other cells of NCCL's table that the model reproduces */
    int mismatched_cells; /* cells of NCCL's table the model does not reproduce */
    int compared_cells;   /* cells of NCCL's table compared (fitted + verified + mismatched) */
    double max_lat_diff_us, max_bw_diff_GBps; /* largest |model - NCCL| over compared cells */
    int max_coll, max_algo, max_proto;        /* where the largest difference is (-1 none) */
    unsigned
        fitted_graph_facts[NT_NUM_ALGOS]; /* bit i: graph fact i (nt_graph_fact_t) was fitted */
    unsigned fitted_comm_facts;           /* bit i: comm fact i (nt_comm_fact_t) was fitted */
    int fitted_at[16][3];                 /* the fitted cells (coll, algo, proto), the first 16 */
    char verdict[128]; /* "verified", "not verified: version not modelled", "mismatch: ..." */
} nt_model_fit_t;

#define NT_MODEL_FIT_MAX_LIST 16

/* Tolerances of the check: NCCL prints %.1f, so a cell matches when |diff| <= 0.05 (+1e-3). */
#define NT_MODEL_TOL_LAT_US 0.051
#define NT_MODEL_TOL_BW_GBPS 0.051

/* nt_model_fit_table - fit the facts of IN that are labelled assumed from the fewest cells of
 * NCCL's table NCCL (relabelling them inferred), compute the model, and compare every other
 * printed cell. IN is updated with the fitted facts; TABLE (may be NULL) receives the model's
 * table; ENV is the job's NCCL_ALGO/NCCL_PROTO (may be NULL). A version that is not modelled
 * gives fit->modelled = 0 and the verdict "not verified: version not modelled" (NT_OK).
 * Errors: NT_ERR_INVALID for bad inputs. */
nt_status_t nt_model_fit_table(nt_model_input_t *in, const nt_nccl_table_t *nccl,
                               const nt_model_env_filter_t *env, nt_model_table_t *table,
                               nt_model_fit_t *fit);

/* nt_tune_print_model - the `--print-model` output to OUT: with JSON 0, NCCL's table beside the
 * model's in NCCL's own layout for in->version without NCCL's line prefix (per function NCCL's
 * cells, the model's and the difference, '*' where it exceeds the print precision; the model's
 * table alone when the log has none), then one summary line (fitted/verified counts, largest
 * difference) and the facts that were assumed, grouped by the option that supplies them
 * (--shape, --sm, --cpu-vendor, --nccl-version, the log's GRAPH lines); with JSON 1, one JSON document (per coll/algo/proto lat_us and
 * bw_GBps of model and NCCL side by side, the largest difference, the facts with their labels).
 * NCCL (may be NULL: no table in the log) is the log's table; ENV_ALGO/ENV_PROTO the job's
 * NCCL_ALGO/NCCL_PROTO (may be NULL). FIT (may be NULL) receives the check's result.
 * Errors: NT_ERR_INVALID (bad NCCL_ALGO/NCCL_PROTO, bad inputs), NT_ERR_IO (write failed). */
nt_status_t nt_tune_print_model(FILE *out, nt_model_input_t *in, const nt_nccl_table_t *nccl,
                                const char *env_algo, const char *env_proto, int json,
                                nt_model_fit_t *fit);

#endif
