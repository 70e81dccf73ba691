/* Tuning file parsers (see nt_tuning.h for the contracts). */
#include "nt_tuning.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const coll_names[NCCL_NUM_FUNCTIONS] = {"broadcast", "reduce", "allgather",
                                                           "reducescatter", "allreduce"};
static const char *const algo_names[NCCL_NUM_ALGORITHMS] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const proto_names[NCCL_NUM_PROTOCOLS] = {"ll", "ll128", "simple"};

const char *nt_coll_name(int coll) {
  return coll >= 0 && coll < NCCL_NUM_FUNCTIONS ? coll_names[coll] : "?";
}
const char *nt_algo_name(int algo) {
  return algo >= 0 && algo < NCCL_NUM_ALGORITHMS ? algo_names[algo] : "?";
}
const char *nt_proto_name(int proto) {
  return proto >= 0 && proto < NCCL_NUM_PROTOCOLS ? proto_names[proto] : "?";
}

/* Names compare without case: "AllReduce" and "allreduce" are the same collective, and no two
 * NCCL names differ only by case. */
static int name_index(const char *const *names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (strcasecmp(names[i], s) == 0) return i;
  return -1;
}

uint64_t nt_fnv1a64(const void *data, size_t len) {
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static nt_tp_status_t fail(char *err, size_t errlen, nt_tp_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static nt_tp_status_t fail(char *err, size_t errlen, nt_tp_status_t st, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return st;
}

void nt_tuning_cleanup(nt_tuning_t *t) {
  if (!t) return;
  free(t->rules);
  t->rules = NULL;
  t->nrules = 0;
}

static void rule_defaults(nt_rule_t *r) {
  memset(r, 0, sizeof(*r));
  r->max_bytes = UINT64_MAX;
  r->coll = -1;
  r->reg_buff = -1;
  r->algo = -1;
  r->proto = -1;
  r->basis = -1;
}

/* ---------------------------------------------------------------- JSON */

/* A JSON number that is an integer in [lo, hi]; doubles are exact up to 2^53, which the
 * callers' bounds never exceed. */
static int json_int(const cJSON *c, double lo, double hi, uint64_t *v) {
  if (!cJSON_IsNumber(c)) return 0;
  double d = c->valuedouble;
  if (!__builtin_isfinite(d) || d < lo || d > hi) return 0;
  uint64_t u = (uint64_t)d;
  if ((double)u != d) return 0;
  *v = u;
  return 1;
}

/* The rule keys, in the order the tuning file writes them (nt_tuning.h: NT_RK_*). */
const char *const nt_rule_keys[NT_RK_COUNT] = {
    "coll", "min_bytes", "max_bytes", "nnodes",      "nranks", "num_pipe_ops", "reg_buff",
    "algo", "proto",     "nchannels", "chunk_bytes", "basis",  "predicted_us", "measured_us"};

static const char *const basis_names[NT_NUM_BASIS] = {"predicted", "measured", "inferred"};

const char *nt_basis_name(int basis) {
  return basis >= 0 && basis < NT_NUM_BASIS ? basis_names[basis] : "?";
}

int nt_tuning_rule_key(const char *key) {
  for (int k = 0; k < NT_RK_COUNT; k++)
    if (strcmp(nt_rule_keys[k], key) == 0) return k;
  return -1;
}

void nt_tuning_rule_init(nt_rule_t *r, uint32_t src) {
  rule_defaults(r);
  r->src = src;
}

int nt_tuning_rule_value(int k, const cJSON *c, nt_rule_t *r, char *err, size_t errlen) {
  if (cJSON_IsNull(c) && k != NT_RK_COLL) return 0; /* null = any / not given */
  uint64_t v = 0;
  int idx;
  switch (k) {
  case NT_RK_COLL:
    if (!cJSON_IsString(c)) return fail(err, errlen, 1, "'coll' must be a string");
    if ((idx = name_index(coll_names, NCCL_NUM_FUNCTIONS, c->valuestring)) < 0)
      return fail(err, errlen, 1,
                  "unknown coll '%.40s' (allreduce, allgather, reducescatter, broadcast, reduce)",
                  c->valuestring);
    r->coll = (int8_t)idx;
    return 0;
  case NT_RK_MIN_BYTES:
  case NT_RK_MAX_BYTES:
    if (!json_int(c, 0, NT_MAX_JSON_BYTES, &v))
      return fail(err, errlen, 1, "'%s' must be an integer from 0 to 2^53", nt_rule_keys[k]);
    if (k == NT_RK_MIN_BYTES)
      r->min_bytes = v;
    else
      r->max_bytes = v;
    return 0;
  case NT_RK_NNODES:
  case NT_RK_NRANKS:
  case NT_RK_PIPE_OPS:
    if (!json_int(c, 1, INT_MAX, &v))
      return fail(err, errlen, 1, "'%s' must be an integer from 1 to %d", nt_rule_keys[k], INT_MAX);
    if (k == NT_RK_NNODES)
      r->nnodes = (uint32_t)v;
    else if (k == NT_RK_NRANKS)
      r->nranks = (uint32_t)v;
    else
      r->pipe_ops = (uint32_t)v;
    return 0;
  case NT_RK_REG_BUFF:
    if (cJSON_IsBool(c))
      r->reg_buff = cJSON_IsTrue(c) ? 1 : 0;
    else if (json_int(c, 0, 1, &v))
      r->reg_buff = (int8_t)v;
    else
      return fail(err, errlen, 1, "'reg_buff' must be 0 or 1");
    return 0;
  case NT_RK_ALGO:
  case NT_RK_PROTO: {
    int algo = k == NT_RK_ALGO;
    if (!cJSON_IsString(c)) return fail(err, errlen, 1, "'%s' must be a string", nt_rule_keys[k]);
    idx = algo ? name_index(algo_names, NCCL_NUM_ALGORITHMS, c->valuestring)
               : name_index(proto_names, NCCL_NUM_PROTOCOLS, c->valuestring);
    if (idx < 0)
      return fail(err, errlen, 1, "unknown %s '%.40s' (%s)", nt_rule_keys[k], c->valuestring,
                  algo ? "tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat"
                       : "ll, ll128, simple");
    if (algo)
      r->algo = (int8_t)idx;
    else
      r->proto = (int8_t)idx;
    return 0;
  }
  case NT_RK_NCHANNELS:
    if (!json_int(c, 1, NT_MAX_NCHANNELS, &v))
      return fail(err, errlen, 1, "'nchannels' must be an integer from 1 to %d", NT_MAX_NCHANNELS);
    r->nchannels = (int8_t)v;
    return 0;
  case NT_RK_CHUNK_BYTES: /* NCCL keeps the chunk size in an int (v2.30.7-1 enqueue.cc:2317) */
    if (!json_int(c, 1, INT_MAX, &v))
      return fail(err, errlen, 1, "'chunk_bytes' must be an integer from 1 to %d", INT_MAX);
    r->chunk_bytes = (uint32_t)v;
    return 0;
  case NT_RK_BASIS:
    if (!cJSON_IsString(c)) return fail(err, errlen, 1, "'basis' must be a string");
    if ((idx = name_index(basis_names, NT_NUM_BASIS, c->valuestring)) < 0)
      return fail(err, errlen, 1, "unknown basis '%.40s' (predicted, measured, inferred)",
                  c->valuestring);
    r->basis = (int8_t)idx;
    return 0;
  case NT_RK_PREDICTED_US:
  case NT_RK_MEASURED_US: /* informational, but must be sane */
    if (!cJSON_IsNumber(c) || !__builtin_isfinite(c->valuedouble) || c->valuedouble < 0)
      return fail(err, errlen, 1, "'%s' must be a finite non-negative number", nt_rule_keys[k]);
    return 0;
  default:
    return fail(err, errlen, 1, "unknown key");
  }
}

int nt_tuning_rule_finish(const nt_rule_t *r, char *err, size_t errlen) {
  if (r->coll < 0) return fail(err, errlen, 1, "'coll' is required");
  if (r->min_bytes > r->max_bytes) return fail(err, errlen, 1, "min_bytes is above max_bytes");
  if (r->algo < 0 && r->proto < 0 && r->nchannels == 0)
    return fail(err, errlen, 1, "sets none of 'algo', 'proto', 'nchannels'");
  if (r->chunk_bytes) {
    if (r->algo < 0 || r->proto < 0)
      return fail(err, errlen, 1,
                  "'chunk_bytes' needs 'algo' and 'proto' (NCCL asks for a chunk size per "
                  "algorithm and protocol)");
    unsigned g = nt_proto_grain_bytes(r->proto);
    if (r->chunk_bytes % g)
      return fail(err, errlen, 1,
                  "'chunk_bytes' %u is not a multiple of %s's grain of %u bytes (NCCL rounds it "
                  "down%s): use %u or %u",
                  r->chunk_bytes, nt_proto_name(r->proto), g, r->chunk_bytes < g ? ", to 0" : "",
                  r->chunk_bytes < g ? g : r->chunk_bytes / g * g, (r->chunk_bytes / g + 1) * g);
  }
  return 0;
}

unsigned nt_proto_grain_bytes(int proto) {
  switch (proto) {
  case NCCL_PROTO_LL:
    return NCCL_LL_GRAIN_BYTES;
  case NCCL_PROTO_LL128:
    return NCCL_LL128_GRAIN_BYTES;
  case NCCL_PROTO_SIMPLE:
    return NCCL_SIMPLE_GRAIN_BYTES;
  default:
    return 0;
  }
}

static nt_tp_status_t parse_rule(const cJSON *obj, size_t i, nt_rule_t *r, char *err,
                                 size_t errlen) {
  nt_tuning_rule_init(r, (uint32_t)i);
  if (!cJSON_IsObject(obj))
    return fail(err, errlen, NT_TP_ERR_FORMAT, "rules[%zu]: expected an object", i);
  unsigned seen = 0;
  char msg[NT_ERR_LEN];
  for (const cJSON *c = obj->child; c; c = c->next) {
    int k = nt_tuning_rule_key(c->string);
    if (k < 0)
      return fail(err, errlen, NT_TP_ERR_FORMAT, "rules[%zu]: unknown key '%s'", i, c->string);
    if (seen & (1u << k))
      return fail(err, errlen, NT_TP_ERR_FORMAT, "rules[%zu]: duplicate key '%s'", i, c->string);
    seen |= 1u << k;
    if (nt_tuning_rule_value(k, c, r, msg, sizeof(msg)))
      return fail(err, errlen, NT_TP_ERR_FORMAT, "rules[%zu]: %s", i, msg);
  }
  if (nt_tuning_rule_finish(r, msg, sizeof(msg)))
    return fail(err, errlen, NT_TP_ERR_FORMAT, "rules[%zu]: %s", i, msg);
  return NT_TP_OK;
}

struct const_table {
  const char *key;
  unsigned bit;
  size_t offset;
  int ndims;
  int shape[3];
};
static const struct const_table const_tables[] = {
    {"base_latencies_us",
     NT_CONST_BASE_LAT,
     offsetof(ncclTunerConstants_v5_t, baseLatencies),
     2,
     {NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0}},
    {"hw_latencies_us",
     NT_CONST_HW_LAT,
     offsetof(ncclTunerConstants_v5_t, hwLatencies),
     3,
     {NCCL_NUM_HW_LINKS, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS}},
    {"ll_max_bws_GBps",
     NT_CONST_LL_MAX_BW,
     offsetof(ncclTunerConstants_v5_t, llMaxBws),
     2,
     {NCCL_NUM_COMPCAPS, NCCL_NUM_TUNING_SCALES, 0}},
    {"per_ch_max_ring_ll128_bws_GBps",
     NT_CONST_RING_LL128_BW,
     offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws),
     2,
     {NCCL_NUM_COMPCAPS, NCCL_NUM_TUNING_SCALES, 0}},
    {"per_ch_max_tree_ll128_bws_GBps",
     NT_CONST_TREE_LL128_BW,
     offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws),
     2,
     {NCCL_NUM_COMPCAPS, NCCL_NUM_TUNING_SCALES, 0}},
    {"per_ch_max_tree_bws_GBps",
     NT_CONST_TREE_BW,
     offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws),
     2,
     {NCCL_NUM_COMPCAPS, NCCL_NUM_TUNING_SCALES, 0}},
    {"per_ch_max_nvls_tree_bws_GBps",
     NT_CONST_NVLS_TREE_BW,
     offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws),
     2,
     {NCCL_NUM_COMPCAPS, NCCL_NUM_TUNING_SCALES, 0}},
};

int nt_tuning_const_table(const char *key, int *ndims, int shape[3]) {
  for (size_t k = 0; k < sizeof(const_tables) / sizeof(const_tables[0]); k++)
    if (strcmp(const_tables[k].key, key) == 0) {
      *ndims = const_tables[k].ndims;
      for (int d = 0; d < 3; d++)
        shape[d] = const_tables[k].shape[d];
      return (int)k;
    }
  return -1;
}

/* Fills dst (row-major) from nested arrays of exactly the given shape. */
static nt_tp_status_t parse_table(const cJSON *a, const struct const_table *t, int depth,
                                  double *dst, char *path, size_t pathlen, char *err,
                                  size_t errlen) {
  int n = t->shape[depth];
  if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
    return fail(err, errlen, NT_TP_ERR_FORMAT, "constants.%s%s: expected an array of %d %s", t->key,
                path, n, depth + 1 < t->ndims ? "arrays" : "numbers");
  size_t stride = 1;
  for (int d = depth + 1; d < t->ndims; d++)
    stride *= (size_t)t->shape[d];
  size_t used = strlen(path);
  int i = 0;
  for (const cJSON *c = a->child; c; c = c->next, i++) {
    snprintf(path + used, pathlen - used, "[%d]", i);
    if (depth + 1 < t->ndims) {
      nt_tp_status_t st =
          parse_table(c, t, depth + 1, dst + (size_t)i * stride, path, pathlen, err, errlen);
      if (st != NT_TP_OK) return st;
    } else {
      if (!cJSON_IsNumber(c) || !__builtin_isfinite(c->valuedouble) || c->valuedouble < 0)
        return fail(err, errlen, NT_TP_ERR_FORMAT,
                    "constants.%s%s: must be a finite non-negative number", t->key, path);
      dst[i] = c->valuedouble;
    }
    path[used] = '\0';
  }
  return NT_TP_OK;
}

static nt_tp_status_t parse_constants(const cJSON *obj, nt_tuning_t *out, char *err,
                                      size_t errlen) {
  if (!cJSON_IsObject(obj))
    return fail(err, errlen, NT_TP_ERR_FORMAT, "'constants' must be an object");
  for (const cJSON *c = obj->child; c; c = c->next) {
    const struct const_table *t = NULL;
    for (size_t k = 0; k < sizeof(const_tables) / sizeof(const_tables[0]); k++)
      if (strcmp(const_tables[k].key, c->string) == 0) t = &const_tables[k];
    if (!t) return fail(err, errlen, NT_TP_ERR_FORMAT, "constants: unknown table '%s'", c->string);
    if (out->constants_mask & t->bit)
      return fail(err, errlen, NT_TP_ERR_FORMAT, "constants: duplicate table '%s'", c->string);
    if (cJSON_IsNull(c)) continue;
    char path[32] = "";
    nt_tp_status_t st = parse_table(c, t, 0, (double *)((char *)&out->constants + t->offset), path,
                                    sizeof(path), err, errlen);
    if (st != NT_TP_OK) return st;
    out->constants_mask |= t->bit;
  }
  return NT_TP_OK;
}

static int line_of(const char *buf, size_t pos) {
  int line = 1;
  for (size_t i = 0; i < pos; i++)
    line += buf[i] == '\n';
  return line;
}

nt_tp_status_t nt_tuning_parse_json(const char *buf, size_t len, nt_tuning_t *out, char *err,
                                    size_t errlen) {
  memset(out, 0, sizeof(*out));
  out->format = NT_FORMAT_JSON;
  out->completed = 1;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
  if (!root) {
    size_t pos = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : 0;
    return fail(err, errlen, NT_TP_ERR_FORMAT, "malformed JSON at line %d", line_of(buf, pos));
  }
  nt_tp_status_t st = NT_TP_OK;
  size_t pos = end && end >= buf && end <= buf + len ? (size_t)(end - buf) : len;
  while (pos < len && (buf[pos] == ' ' || buf[pos] == '\t' || buf[pos] == '\n' || buf[pos] == '\r'))
    pos++;
  if (pos < len) {
    st = fail(err, errlen, NT_TP_ERR_FORMAT, "malformed JSON: data after the document at line %d",
              line_of(buf, pos));
    goto out_root;
  }
  if (!cJSON_IsObject(root)) {
    st = fail(err, errlen, NT_TP_ERR_FORMAT, "expected a JSON object at the top");
    goto out_root;
  }
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
  if (!cJSON_IsString(schema)) {
    st = fail(err, errlen, NT_TP_ERR_FORMAT, "missing 'schema' (expected 'nettune.tuning/1')");
    goto out_root;
  }
  if (strcmp(schema->valuestring, "nettune.tuning/1") != 0) {
    st = fail(err, errlen, NT_TP_ERR_FORMAT, "unknown schema '%.60s' (expected 'nettune.tuning/1')",
              schema->valuestring);
    goto out_root;
  }
  const cJSON *completed = cJSON_GetObjectItemCaseSensitive(root, "completed");
  out->completed = 1;
  if (completed && !cJSON_IsBool(completed)) {
    st = fail(err, errlen, NT_TP_ERR_FORMAT, "'completed' must be true or false");
    goto out_root;
  }
  if (cJSON_IsFalse(completed)) out->completed = 0;
  const cJSON *rules = cJSON_GetObjectItemCaseSensitive(root, "rules");
  if (!cJSON_IsArray(rules)) {
    st = fail(err, errlen, NT_TP_ERR_FORMAT, "missing 'rules' array");
    goto out_root;
  }
  int n = cJSON_GetArraySize(rules);
  if (n > NT_MAX_RULES) {
    st = fail(err, errlen, NT_TP_ERR_LIMIT, "%d rules, more than the limit of %d", n, NT_MAX_RULES);
    goto out_root;
  }
  if (n > 0) {
    out->rules = calloc((size_t)n, sizeof(*out->rules));
    if (!out->rules) {
      st = fail(err, errlen, NT_TP_ERR_NOMEM, "out of memory for %d rules", n);
      goto out_root;
    }
  }
  size_t i = 0;
  for (const cJSON *r = rules->child; r; r = r->next, i++) {
    st = parse_rule(r, i, &out->rules[i], err, errlen);
    if (st != NT_TP_OK) goto out_rules;
    out->nrules = i + 1;
  }
  const cJSON *constants = cJSON_GetObjectItemCaseSensitive(root, "constants");
  if (constants && !cJSON_IsNull(constants)) {
    st = parse_constants(constants, out, err, errlen);
    if (st != NT_TP_OK) goto out_rules;
  }
  cJSON_Delete(root);
  return NT_TP_OK;

out_rules:
  nt_tuning_cleanup(out);
  out->constants_mask = 0;
out_root:
  cJSON_Delete(root);
  return st;
}

/* ---------------------------------------------------------------- CSV */

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
    s[--n] = '\0';
  return s;
}

/* Decimal integer with nothing else around it (strtoll alone accepts "12abc" and " -3"). */
static int parse_i64(const char *s, long long *v) {
  if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9'))) return 0;
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

static int parse_u64(const char *s, uint64_t *v) {
  if (!(*s >= '0' && *s <= '9')) return 0;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end) return 0;
  *v = x;
  return 1;
}

/* An integer field where -1 means "any" (returned as 0); otherwise lo..hi. */
static int parse_any(const char *s, long long lo, long long hi, long long *v) {
  long long x;
  if (!parse_i64(s, &x)) return 0;
  if (x == -1) {
    *v = 0;
    return 1;
  }
  if (x < lo || x > hi) return 0;
  *v = x;
  return 1;
}

#define CSV_FIELDS_MIN 8
#define CSV_FIELDS_MAX 10

static nt_tp_status_t parse_csv_line(char *line, int lineno, nt_rule_t *r, char *err,
                                     size_t errlen) {
  char *f[CSV_FIELDS_MAX + 1];
  int nf = 0;
  for (char *p = line;;) {
    char *comma = strchr(p, ',');
    if (nf == CSV_FIELDS_MAX)
      return fail(err, errlen, NT_TP_ERR_FORMAT,
                  "line %d: more than %d fields (expected 8, 9 or 10)", lineno, CSV_FIELDS_MAX);
    if (comma) *comma = '\0';
    f[nf++] = trim(p);
    if (!comma) break;
    p = comma + 1;
  }
  if (nf < CSV_FIELDS_MIN)
    return fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: %d fields (expected 8, 9 or 10)", lineno,
                nf);
  rule_defaults(r);
  r->src = (uint32_t)lineno;
  int idx = name_index(coll_names, NCCL_NUM_FUNCTIONS, f[0]);
  if (idx < 0)
    return fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: unknown collective '%.40s'", lineno, f[0]);
  r->coll = (int8_t)idx;
  for (int k = 1; k <= 2; k++) {
    uint64_t v;
    if (strcmp(f[k], "-1") == 0)
      v = k == 1 ? 0 : UINT64_MAX;
    else if (!parse_u64(f[k], &v))
      return fail(err, errlen, NT_TP_ERR_FORMAT,
                  "line %d: %s '%.40s' is not a byte count (0 to 2^64-1, or -1)", lineno,
                  k == 1 ? "minbytes" : "maxbytes", f[k]);
    if (k == 1)
      r->min_bytes = v;
    else
      r->max_bytes = v;
  }
  if (strcmp(f[3], "-1") != 0) {
    if ((idx = name_index(algo_names, NCCL_NUM_ALGORITHMS, f[3])) < 0)
      return fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: unknown algorithm '%.40s'", lineno,
                  f[3]);
    r->algo = (int8_t)idx;
  }
  if (strcmp(f[4], "-1") != 0) {
    if ((idx = name_index(proto_names, NCCL_NUM_PROTOCOLS, f[4])) < 0)
      return fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: unknown protocol '%.40s'", lineno, f[4]);
    r->proto = (int8_t)idx;
  }
  static const char *const names[] = {NULL,       NULL,     NULL,     NULL,         NULL,
                                      "channels", "nNodes", "nRanks", "numPipeOps", "regBuff"};
  static const long long hi[] = {0, 0, 0, 0, 0, NT_MAX_NCHANNELS, INT_MAX, INT_MAX, INT_MAX, 1};
  for (int k = 5; k < nf; k++) {
    long long v;
    long long lo = k == 9 ? 0 : 1;
    if (!parse_any(f[k], lo, hi[k], &v))
      return fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: %s '%.40s' must be -1 or %lld..%lld",
                  lineno, names[k], f[k], lo, hi[k]);
    switch (k) {
    case 5:
      r->nchannels = (int8_t)v;
      break;
    case 6:
      r->nnodes = (uint32_t)v;
      break;
    case 7:
      r->nranks = (uint32_t)v;
      break;
    case 8:
      r->pipe_ops = (uint32_t)v;
      break;
    default:
      r->reg_buff = strcmp(f[k], "-1") == 0 ? -1 : (int8_t)v;
      break;
    }
  }
  if (r->min_bytes > r->max_bytes)
    return fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: minbytes is above maxbytes", lineno);
  if (r->algo < 0 && r->proto < 0 && r->nchannels == 0)
    return fail(err, errlen, NT_TP_ERR_FORMAT,
                "line %d: sets no algorithm, protocol or channel count", lineno);
  return NT_TP_OK;
}

nt_tp_status_t nt_tuning_parse_csv(const char *buf, size_t len, nt_tuning_t *out, char *err,
                                   size_t errlen) {
  memset(out, 0, sizeof(*out));
  out->format = NT_FORMAT_CSV;
  out->completed = 1; /* NCCL's CSV has no such notion */
  size_t cap = 0;
  int lineno = 0;
  char line[NT_MAX_CSV_LINE + 1];
  nt_tp_status_t st = NT_TP_OK;
  for (size_t pos = 0; pos < len;) {
    const char *nl = memchr(buf + pos, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
    const char *start = buf + pos;
    pos += n + (nl != NULL);
    lineno++;
    if (n > 0 && start[n - 1] == '\r') n--;
    if (n > NT_MAX_CSV_LINE) {
      st = fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: longer than %d characters", lineno,
                NT_MAX_CSV_LINE);
      goto out_err;
    }
    if (memchr(start, '\0', n)) {
      st = fail(err, errlen, NT_TP_ERR_FORMAT, "line %d: NUL byte", lineno);
      goto out_err;
    }
    memcpy(line, start, n);
    line[n] = '\0';
    char *s = trim(line);
    if (*s == '\0' || *s == '#') continue;
    if (out->nrules == NT_MAX_RULES) {
      st = fail(err, errlen, NT_TP_ERR_LIMIT, "more than the limit of %d rules", NT_MAX_RULES);
      goto out_err;
    }
    if (out->nrules == cap) {
      size_t ncap = cap ? cap * 2 : 64;
      nt_rule_t *nr = realloc(out->rules, ncap * sizeof(*nr));
      if (!nr) {
        st = fail(err, errlen, NT_TP_ERR_NOMEM, "out of memory for %zu rules", ncap);
        goto out_err;
      }
      out->rules = nr;
      cap = ncap;
    }
    st = parse_csv_line(s, lineno, &out->rules[out->nrules], err, errlen);
    if (st != NT_TP_OK) goto out_err;
    out->nrules++;
  }
  return NT_TP_OK;

out_err:
  nt_tuning_cleanup(out);
  return st;
}

/* ---------------------------------------------------------------- file */

nt_tp_status_t nt_tuning_load(const char *path, nt_format_t format, nt_tuning_t *out, char *err,
                              size_t errlen) {
  memset(out, 0, sizeof(*out));
  out->format = format;
  char ebuf[128];
  FILE *f = fopen(path, "rbe");
  if (!f)
    return fail(err, errlen, NT_TP_ERR_IO, "cannot open: %s",
                strerror_r(errno, ebuf, sizeof(ebuf)));
  /* Read with stdio in chunks instead of sizing with fstat: fstat is a GLIBC_2.33 symbol on
   * current glibc, and the plugin must load on glibc 2.28. */
  size_t cap = 64 * 1024, len = 0;
  char *buf = malloc(cap);
  nt_tp_status_t st = NT_TP_OK;
  if (!buf) {
    st = fail(err, errlen, NT_TP_ERR_NOMEM, "out of memory");
    goto out_file;
  }
  for (;;) {
    if (len == cap) {
      if (cap > NT_MAX_FILE_BYTES) {
        st = fail(err, errlen, NT_TP_ERR_LIMIT, "larger than the limit of %u bytes",
                  NT_MAX_FILE_BYTES);
        goto out_buf;
      }
      size_t ncap =
          cap * 2 > (size_t)NT_MAX_FILE_BYTES + 1 ? (size_t)NT_MAX_FILE_BYTES + 1 : cap * 2;
      char *nb = realloc(buf, ncap);
      if (!nb) {
        st = fail(err, errlen, NT_TP_ERR_NOMEM, "out of memory");
        goto out_buf;
      }
      buf = nb;
      cap = ncap;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    st = fail(err, errlen, NT_TP_ERR_IO, "cannot read: %s", strerror_r(errno, ebuf, sizeof(ebuf)));
    goto out_buf;
  }
  if (len > NT_MAX_FILE_BYTES) {
    st = fail(err, errlen, NT_TP_ERR_LIMIT, "larger than the limit of %u bytes", NT_MAX_FILE_BYTES);
    goto out_buf;
  }
  st = format == NT_FORMAT_JSON ? nt_tuning_parse_json(buf, len, out, err, errlen)
                                : nt_tuning_parse_csv(buf, len, out, err, errlen);
  out->hash = nt_fnv1a64(buf, len);
out_buf:
  free(buf);
out_file:
  fclose(f);
  return st;
}
