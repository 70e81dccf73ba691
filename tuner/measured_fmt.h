/* nettune.measured/1: the one definition of a measured point as JSON. nettune-tune --measured
 * reads it (tuner/search.c) and nettune-tune-measure writes it (tuner/measure*.c).
 *
 * {"schema": "nettune.measured/1", "points": [{"coll": "allreduce", "nnodes": 2, "nranks": 2,
 *   "bytes": 65536, "algo": "ring", "proto": "ll", "time_us": 21.5, "spread": 0.03,
 *   "default": false, "reg_buff": 0, "chunk_bytes": 262144}], ...}
 * chunk_bytes (optional, with algo and proto): the chunk size forced for the point through the
 * plugin's control interface (tuner API v6); absent: NCCL's own.
 * Other top-level members (not_applied, nccl, launch) are for people and are not read back. */
#ifndef NETTUNE_TUNER_MEASURED_FMT_H
#define NETTUNE_TUNER_MEASURED_FMT_H

#include <cjson/cJSON.h>

#include "tune.h"

#define NT_MEASURED_SCHEMA "nettune.measured/1"

/* nt_measured_point_parse - one element of "points" into *q (how = NT_RAN_MEASURED when algo is
 * given, src = -1). Returns 0, or -1 when coll, nnodes, nranks, bytes, time_us > 0 or (unless
 * "default": true) algo/proto are missing or unknown, or chunk_bytes is not an integer from 0 to
 * INT_MAX given with algo and proto. */
int nt_measured_point_parse(const cJSON *p, nt_tune_point_t *q);

/* nt_measured_point_json - the JSON object of *q (algo/proto omitted when < 0, reg_buff when
 * < 0). NULL on allocation failure. */
cJSON *nt_measured_point_json(const nt_tune_point_t *q);

#endif
