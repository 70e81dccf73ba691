/*
 * libnccl-tuner-nettune.so: the NCCL tuner plugin. Exports ncclTunerPlugin_v6, _v5, _v4, _v3
 * and _v2 (NCCL 2.21-2.30 look for the newest they know first: v2.30.7-1 src/plugin/tuner.cc:
 * 73-84); every other symbol is hidden (-fvisibility=hidden and exports.map).
 *
 * init reads the tuning file the environment names, keeps the rules that can match this
 * communicator and indexes them; getCollInfo is a binary search with no allocation, lock, I/O
 * or logging and never returns an error (an error there fails the user's collective in NCCL
 * 2.28); getChunkSize (v6) is a lookup of what getCollInfo chose; finalize/destroy writes the
 * optional report and frees the context.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_tuner_abi.h"
#include "nt_control.h"
#include "nt_index.h"
#include "nt_plugin.h"
#include "nt_tuning.h"

#define NT_EXPORT __attribute__((visibility("default")))
#define NT_PLUGIN_NAME "nettune"

/* Process-wide mutable values: the communicator number for the report's %c before API v5 (v5
 * passes NCCL's commId instead), and the control interface's forced candidate and last answer
 * (nt_control.h), all atomics. */
static unsigned long nt_comm_seq;
/* forced: 0 = none, else 1 | algo << 8 | proto << 16 | nchannels << 24 */
static uint64_t nt_forced;
/* last: calls, nbytes, and packed (coll | algo+1 << 8 | proto+1 << 16 | nch << 24 |
 * forced << 56 | applied << 57) */
static uint64_t nt_last_calls, nt_last_bytes, nt_last_packed;
/* Set by the first call of any control function: only then does getCollInfo record its last
 * answer (a table scan and three atomic stores on shared globals), so a production job that
 * never uses the control interface pays nothing for it on the per-call path. */
static int nt_control_used;
/* the forced chunk size (0: NCCL's) and the getChunkSize calls that wrote it */
static uint32_t nt_forced_chunk;
static uint64_t nt_chunk_writes;

static int control_force(int algo, int proto, int nchannels) {
  if (algo < 0 || algo >= NCCL_NUM_ALGORITHMS || proto < 0 || proto >= NCCL_NUM_PROTOCOLS ||
      nchannels < 0 || nchannels > 0xffff)
    return -1;
  __atomic_store_n(&nt_control_used, 1, __ATOMIC_RELEASE);
  uint64_t v = 1 | (uint64_t)algo << 8 | (uint64_t)proto << 16 | (uint64_t)nchannels << 24;
  __atomic_store_n(&nt_forced_chunk, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&nt_forced, v, __ATOMIC_RELEASE);
  return 0;
}

static int control_force_chunk(uint32_t bytes) {
  if (bytes > INT_MAX) return -1;
  __atomic_store_n(&nt_control_used, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&nt_forced_chunk, bytes, __ATOMIC_RELEASE);
  return 0;
}

static uint64_t control_chunk_writes(void) {
  return __atomic_load_n(&nt_chunk_writes, __ATOMIC_ACQUIRE);
}

static void control_clear(void) {
  __atomic_store_n(&nt_control_used, 1, __ATOMIC_RELEASE);
  __atomic_store_n(&nt_forced, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&nt_forced_chunk, 0, __ATOMIC_RELEASE);
}

static int control_last(nettune_tuner_last_v1_t *out) {
  if (!out) return -1;
  __atomic_store_n(&nt_control_used, 1, __ATOMIC_RELEASE);
  uint64_t calls = __atomic_load_n(&nt_last_calls, __ATOMIC_ACQUIRE);
  if (!calls) return -1;
  uint64_t p = __atomic_load_n(&nt_last_packed, __ATOMIC_ACQUIRE);
  out->calls = calls;
  out->nbytes = __atomic_load_n(&nt_last_bytes, __ATOMIC_ACQUIRE);
  out->coll = (int)(p & 0xff);
  out->algo = (int)((p >> 8) & 0xff) - 1;
  out->proto = (int)((p >> 16) & 0xff) - 1;
  out->nchannels = (int)((p >> 24) & 0xffff);
  out->forced = (int)((p >> 56) & 1);
  out->applied = (int)((p >> 57) & 1);
  return 0;
}

NT_EXPORT const nettune_tuner_control_v1_t nettune_tuner_control_v1 = {
    .version = NETTUNE_TUNER_CONTROL_VERSION,
    .force = control_force,
    .clear = control_clear,
    .last = control_last,
    .force_chunk = control_force_chunk,
    .chunk_writes = control_chunk_writes,
};

static void record_last(int coll, size_t nbytes, int algo, int proto, int nch, int forced,
                        int applied) {
  uint64_t p = (uint64_t)(coll & 0xff) | (uint64_t)((algo + 1) & 0xff) << 8 |
               (uint64_t)((proto + 1) & 0xff) << 16 | (uint64_t)(nch & 0xffff) << 24 |
               (uint64_t)(forced & 1) << 56 | (uint64_t)(applied & 1) << 57;
  __atomic_store_n(&nt_last_bytes, (uint64_t)nbytes, __ATOMIC_RELEASE);
  __atomic_store_n(&nt_last_packed, p, __ATOMIC_RELEASE);
  __atomic_fetch_add(&nt_last_calls, 1, __ATOMIC_ACQ_REL);
}

/* The cheapest runnable entry of NCCL's flat table (what NCCL picks from it), or -1/-1. */
static void table_min(const float *flat, int num_algo, int num_proto, int *algo, int *proto) {
  *algo = *proto = -1;
  float best = 0;
  if (!flat) return;
  for (int a = 0; a < num_algo; a++)
    for (int p = 0; p < num_proto; p++) {
      float v = flat[a * num_proto + p];
      if (v < 0) continue;
      if (*algo < 0 || v < best) {
        best = v;
        *algo = a;
        *proto = p;
      }
    }
}

__attribute__((format(printf, 4, 5))) static void
nt_log(ncclDebugLogger_t log, ncclDebugLogLevel level, int line, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (log)
    log(level, NCCL_TUNING, __FILE__, line, "TUNER/nettune: %s", msg);
  else if (level == NCCL_LOG_WARN)
    fprintf(stderr, "TUNER/nettune: %s\n", msg);
}
#define NT_WARN(ctx, ...) nt_log((ctx)->log, NCCL_LOG_WARN, __LINE__, __VA_ARGS__)
#define NT_INFO(ctx, ...) nt_log((ctx)->log, NCCL_LOG_INFO, __LINE__, __VA_ARGS__)

static void ctx_free(nt_ctx_t *ctx) {
  if (!ctx) return;
  nt_index_destroy(&ctx->ix);
  free(ctx->path);
  free(ctx->file_error);
  free(ctx->report_tmpl);
  free(ctx);
}

static ncclResult_t status_to_nccl(nt_tp_status_t st) {
  switch (st) {
  case NT_TP_OK:
    return ncclSuccess;
  case NT_TP_ERR_IO:
  case NT_TP_ERR_NOMEM:
    return ncclSystemError;
  default:
    return ncclInvalidUsage;
  }
}

/* Copies the tables the file gives into NCCL's constants (already validated by the parser). */
static void apply_constants(nt_ctx_t *ctx, const nt_tuning_t *t,
                            ncclTunerConstants_v5_t *constants) {
  if (!t->constants_mask) return;
  if (ctx->api < 5 || !constants) {
    NT_INFO(ctx, "'constants' ignored: tuner API v%d passes no constants", ctx->api);
    return;
  }
  static const struct {
    unsigned bit;
    size_t off, size;
    const char *name;
  } tabs[] = {
      {NT_CONST_BASE_LAT, offsetof(ncclTunerConstants_v5_t, baseLatencies),
       sizeof(constants->baseLatencies), "base_latencies_us"},
      {NT_CONST_HW_LAT, offsetof(ncclTunerConstants_v5_t, hwLatencies),
       sizeof(constants->hwLatencies), "hw_latencies_us"},
      {NT_CONST_LL_MAX_BW, offsetof(ncclTunerConstants_v5_t, llMaxBws), sizeof(constants->llMaxBws),
       "ll_max_bws_GBps"},
      {NT_CONST_RING_LL128_BW, offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws),
       sizeof(constants->perChMaxRingLL128Bws), "per_ch_max_ring_ll128_bws_GBps"},
      {NT_CONST_TREE_LL128_BW, offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws),
       sizeof(constants->perChMaxTreeLL128Bws), "per_ch_max_tree_ll128_bws_GBps"},
      {NT_CONST_TREE_BW, offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws),
       sizeof(constants->perChMaxTreeBws), "per_ch_max_tree_bws_GBps"},
      {NT_CONST_NVLS_TREE_BW, offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws),
       sizeof(constants->perChMaxNVLSTreeBws), "per_ch_max_nvls_tree_bws_GBps"},
  };
  char names[256] = "";
  for (size_t i = 0; i < sizeof(tabs) / sizeof(tabs[0]); i++) {
    if (!(t->constants_mask & tabs[i].bit)) continue;
    memcpy((char *)constants + tabs[i].off, (const char *)&t->constants + tabs[i].off,
           tabs[i].size);
    size_t used = strlen(names);
    snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", tabs[i].name);
  }
  NT_INFO(ctx, "applied constants: %s", names);
}

/*
 * Shared init of every API version. Fail closed: a named file that cannot be used fails init
 * (NCCL then fails communicator creation on every rank alike) unless NETTUNE_ON_ERROR=defaults.
 */
static ncclResult_t init_common(int api, int has_comm_id, uint64_t comm_id, size_t nranks,
                                size_t nnodes, ncclDebugLogger_t log,
                                ncclTunerConstants_v5_t *constants, void **context) {
  if (!context) return ncclInvalidArgument;
  *context = NULL;
  nt_ctx_t *ctx = calloc(1, sizeof(*ctx));
  if (!ctx) {
    nt_log(log, NCCL_LOG_WARN, __LINE__, "out of memory for the tuner context");
    return ncclSystemError;
  }
  ctx->log = log;
  ctx->api = api;
  ctx->has_comm_id = has_comm_id;
  ctx->comm_id = comm_id;
  ctx->nranks = nranks;
  ctx->nnodes = nnodes;
  if (!has_comm_id) ctx->seq = __atomic_fetch_add(&nt_comm_seq, 1, __ATOMIC_RELAXED);

  int use_defaults = 0;
  const char *on_error = getenv("NETTUNE_ON_ERROR");
  if (on_error && *on_error) {
    if (strcmp(on_error, "defaults") == 0)
      use_defaults = 1;
    else if (strcmp(on_error, "fail") != 0)
      NT_WARN(ctx, "unknown NETTUNE_ON_ERROR '%s' (expected 'fail' or 'defaults'): using 'fail'",
              on_error);
  }
  const char *report = getenv("NETTUNE_PLUGIN_REPORT");
  const char *json = getenv("NETTUNE_TUNING_FILE");
  const char *csv = getenv("NCCL_TUNER_CONFIG_FILE");
  const char *path = NULL;
  if (json && *json) {
    path = json;
    ctx->format = NT_FORMAT_JSON;
  } else if (csv && *csv) {
    path = csv;
    ctx->format = NT_FORMAT_CSV;
  }
  if ((report && *report && !(ctx->report_tmpl = strdup(report))) ||
      (path && !(ctx->path = strdup(path)))) {
    NT_WARN(ctx, "out of memory for the tuner context");
    ctx_free(ctx);
    return ncclSystemError;
  }
  if (!path) {
    NT_INFO(ctx,
            "no tuning file (NETTUNE_TUNING_FILE and NCCL_TUNER_CONFIG_FILE unset): "
            "NCCL's own choices stand (API v%d)",
            api);
    *context = ctx;
    return ncclSuccess;
  }

  char err[NT_ERR_LEN] = "";
  nt_tuning_t t;
  nt_tp_status_t st = nt_tuning_load(path, ctx->format, &t, err, sizeof(err));
  if (st == NT_TP_OK) st = nt_index_build(&t, nranks, nnodes, &ctx->ix, err, sizeof(err));
  if (st != NT_TP_OK) {
    nt_index_destroy(&ctx->ix);
    nt_tuning_cleanup(&t);
    if (!use_defaults) {
      NT_WARN(ctx,
              "cannot use tuning file '%s': %s; communicator creation fails so that no rank "
              "runs with different rules (NETTUNE_ON_ERROR=defaults runs with NCCL's defaults "
              "instead)",
              path, err);
      ctx_free(ctx);
      return status_to_nccl(st);
    }
    NT_WARN(ctx, "ignoring tuning file '%s': %s; using NCCL's defaults (NETTUNE_ON_ERROR=defaults)",
            path, err);
    ctx->file_error = strdup(err);
    *context = ctx;
    return ncclSuccess;
  }
  ctx->file_used = 1;
  ctx->hash = t.hash;
  ctx->rules_loaded = t.nrules;
  NT_INFO(ctx,
          "tuning file '%s' (%s) fnv1a64 %016" PRIx64 ": %zu rules loaded, %u kept for nRanks "
          "%zu nNodes %zu (API v%d)",
          path, ctx->format == NT_FORMAT_JSON ? "json" : "csv", t.hash, t.nrules, ctx->ix.nrules,
          nranks, nnodes, api);
  if (!t.completed)
    NT_INFO(ctx,
            "tuning file '%s' is partial (\"completed\": false: nettune tune stopped at its "
            "time limit); its rules apply, sizes it does not cover stay NCCL's",
            path);
  apply_constants(ctx, &t, constants);
  nt_tuning_cleanup(&t);
  *context = ctx;
  return ncclSuccess;
}

static ncclResult_t finalize_common(void *context) {
  nt_ctx_t *ctx = context;
  if (!ctx) return ncclSuccess;
  if (ctx->report_tmpl) {
    char err[NT_ERR_LEN];
    if (nt_report_write(ctx, err, sizeof(err)) != 0) NT_WARN(ctx, "no run report: %s", err);
  }
  ctx_free(ctx);
  return ncclSuccess;
}

/* The v3..v5 decision. collCostTable is NCCL's contiguous float[numAlgo][numProto]; it is
 * cast back to that type here (nccl issue #1974) and never indexed as float **. */
static ncclResult_t get_coll_info(void *context, ncclFunc_t coll, size_t nBytes, int numPipeOps,
                                  float **collCostTable, int numAlgo, int numProto, int regBuff,
                                  int *nChannels) {
  nt_ctx_t *ctx = context;
  if (!ctx || (unsigned)coll >= NCCL_NUM_FUNCTIONS) return ncclSuccess;
  nt_counter_bump(&ctx->calls[coll]);
  float *flat = NULL;
  if (collCostTable && numAlgo > 0 && numProto > 0) {
    float(*table)[numProto] = (float(*)[numProto])collCostTable;
    flat = &table[0][0];
  }
  uint64_t f = __atomic_load_n(&nt_forced, __ATOMIC_ACQUIRE);
  int applied = 0, fired = -1;
  if (f) {
    int fa = (int)((f >> 8) & 0xff), fp = (int)((f >> 16) & 0xff), fc = (int)((f >> 24) & 0xffff);
    if (flat && fa < numAlgo && fp < numProto && flat[fa * numProto + fp] >= 0) {
      flat[fa * numProto + fp] = 0.0f;
      if (fc > 0 && nChannels) *nChannels = fc;
      applied = 1;
    }
    /* not applied: NCCL's table stays as it is (no file rule either), so NCCL's choice runs */
  } else if ((fired = nt_index_decide(&ctx->ix, coll, nBytes, numPipeOps, regBuff, flat, numAlgo,
                                      numProto, nChannels)) < 0)
    nt_counter_bump(&ctx->kept_nccl[coll]);
  /* what getChunkSize will answer for this collective: the fired rule's measured chunk size,
   * for the algorithm and protocol it named (chunk rules name both), or NCCL's */
  const nt_krule_t *r = fired >= 0 ? &ctx->ix.rules[fired] : NULL;
  ctx->chunk_memo[coll].chunk = r ? r->chunk_bytes : 0;
  if (r && r->chunk_bytes) {
    ctx->chunk_memo[coll].nbytes = nBytes;
    ctx->chunk_memo[coll].algo = r->algo;
    ctx->chunk_memo[coll].proto = r->proto;
  }
  if (__atomic_load_n(&nt_control_used, __ATOMIC_RELAXED)) {
    int a, p;
    table_min(flat, numAlgo, numProto, &a, &p);
    record_last(coll, nBytes, a, p, nChannels ? *nChannels : 0, f != 0, applied);
  }
  return ncclSuccess;
}

/*
 * API v6 getChunkSize. NCCL 2.30.7 calls it after the choice, in calcCollChunking
 * (src/enqueue.cc:2308-2317): for algorithms other than CollNet up to three times per
 * collective with nChannels 1 and one channel's bytes (:724-738), for CollNet (and NVLS across
 * nodes, :449) once with the collective's whole size (:634); then it clamps the result to its
 * buffer's maximum and rounds it down to the protocol's grain (:2312-2321). The chunk size is
 * written only where the rule that made getCollInfo's last choice for this collective gives a
 * measured one, for the same algorithm and protocol, and the call's bytes are within the
 * collective's size (one channel's share or all of it); otherwise NCCL's value stays. O(1), no
 * allocation. In a group of several collectives of one type NCCL makes every choice before the
 * first chunk call, so the last choice's chunk size may reach an earlier collective with the
 * same algorithm and protocol; nettune tune writes one chunk size per algorithm and protocol of
 * a size range, and NCCL's clamp and rounding keep any value safe. A candidate forced through
 * the control interface with a chunk size (nt_control.h force_chunk) is answered the same way
 * for its algorithm and protocol, in place of the file's rules.
 */
static ncclResult_t get_chunk_size(void *context, ncclFunc_t coll, size_t nBytes, int algo,
                                   int proto, int nChannels, size_t *chunkSize) {
  (void)nChannels;
  nt_ctx_t *ctx = context;
  if (!ctx || (unsigned)coll >= NCCL_NUM_FUNCTIONS || !chunkSize) return ncclSuccess;
  uint64_t f = __atomic_load_n(&nt_forced, __ATOMIC_ACQUIRE);
  if (f) {
    uint32_t fc = __atomic_load_n(&nt_forced_chunk, __ATOMIC_ACQUIRE);
    if (fc && (int)((f >> 8) & 0xff) == algo && (int)((f >> 16) & 0xff) == proto) {
      *chunkSize = fc;
      __atomic_fetch_add(&nt_chunk_writes, 1, __ATOMIC_RELAXED);
    }
    return ncclSuccess;
  }
  const uint32_t chunk = ctx->chunk_memo[coll].chunk;
  if (chunk && ctx->chunk_memo[coll].algo == algo && ctx->chunk_memo[coll].proto == proto &&
      nBytes <= ctx->chunk_memo[coll].nbytes)
    *chunkSize = chunk;
  return ncclSuccess;
}

static ncclResult_t get_coll_info_v3(void *context, ncclFunc_t coll, size_t nBytes, int numPipeOps,
                                     float **collCostTable, int numAlgo, int numProto,
                                     int *nChannels) {
  /* v3 has no regBuff: -1 matches only rules that leave reg_buff open. */
  return get_coll_info(context, coll, nBytes, numPipeOps, collCostTable, numAlgo, numProto, -1,
                       nChannels);
}

static ncclResult_t get_coll_info_v2(void *context, ncclFunc_t coll, size_t nBytes,
                                     int collNetSupport, int nvlsSupport, int numPipeOps,
                                     int *algorithm, int *protocol, int *nChannels) {
  nt_ctx_t *ctx = context;
  if (!ctx || (unsigned)coll >= NCCL_NUM_FUNCTIONS || !algorithm || !protocol) return ncclSuccess;
  nt_counter_bump(&ctx->calls[coll]);
  uint64_t f = __atomic_load_n(&nt_forced, __ATOMIC_ACQUIRE);
  if (f) {
    /* v2 passes no table: the forced choice is written unchecked (NCCL checks it itself) */
    *algorithm = (int)((f >> 8) & 0xff);
    *protocol = (int)((f >> 16) & 0xff);
    int fc = (int)((f >> 24) & 0xffff);
    if (fc > 0 && nChannels) *nChannels = fc;
  } else if (nt_index_decide_v2(&ctx->ix, coll, nBytes, collNetSupport, nvlsSupport, numPipeOps,
                                algorithm, protocol, nChannels) < 0)
    nt_counter_bump(&ctx->kept_nccl[coll]);
  if (__atomic_load_n(&nt_control_used, __ATOMIC_RELAXED))
    record_last(coll, nBytes, *algorithm, *protocol, nChannels ? *nChannels : 0, f != 0, f != 0);
  return ncclSuccess;
}

static ncclResult_t init_v6(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
                            ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t *nvlDomainInfo,
                            ncclTunerConstants_v6_t *constants) {
  (void)nvlDomainInfo;
  return init_common(6, 1, commId, nRanks, nNodes, logFunction, constants, context);
}
static ncclResult_t init_v5(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
                            ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                            ncclTunerConstants_v5_t *constants) {
  (void)nvlDomainInfo;
  return init_common(5, 1, commId, nRanks, nNodes, logFunction, constants, context);
}
static ncclResult_t init_v4(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                            void **context) {
  return init_common(4, 0, 0, nRanks, nNodes, logFunction, NULL, context);
}
static ncclResult_t init_v3(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                            void **context) {
  return init_common(3, 0, 0, nRanks, nNodes, logFunction, NULL, context);
}
static ncclResult_t init_v2(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                            void **context) {
  return init_common(2, 0, 0, nRanks, nNodes, logFunction, NULL, context);
}

NT_EXPORT const ncclTuner_v6_t ncclTunerPlugin_v6 = {
    .name = NT_PLUGIN_NAME,
    .init = init_v6,
    .getCollInfo = get_coll_info,
    .finalize = finalize_common,
    .getChunkSize = get_chunk_size,
};
NT_EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {
    .name = NT_PLUGIN_NAME,
    .init = init_v5,
    .getCollInfo = get_coll_info,
    .finalize = finalize_common,
};
NT_EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {
    .name = NT_PLUGIN_NAME,
    .init = init_v4,
    .getCollInfo = get_coll_info,
    .destroy = finalize_common,
};
NT_EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3 = {
    .name = NT_PLUGIN_NAME,
    .init = init_v3,
    .getCollInfo = get_coll_info_v3,
    .destroy = finalize_common,
};
NT_EXPORT const ncclTuner_v2_t ncclTunerPlugin_v2 = {
    .name = NT_PLUGIN_NAME,
    .init = init_v2,
    .getCollInfo = get_coll_info_v2,
    .destroy = finalize_common,
};
