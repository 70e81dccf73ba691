/*
 * Drives the built plugin exactly as NCCL loads it: dlopen(RTLD_NOW | RTLD_LOCAL), dlsym of
 * ncclTunerPlugin_v6, _v5, _v4, _v3, _v2 in NCCL's order, a mock logger, and a real contiguous
 * float[7][3] cost table with NCCL-like values and -1.0 entries passed as float **; for v6 the
 * getChunkSize calls NCCL 2.30 makes after each choice.
 * Usage: test_driver PATH/libnccl-tuner-nettune.so DATA_DIR
 * NT_TEST_QUICK=1 shortens the threaded test (for valgrind).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_tuner_abi.h"
#include "nt_control.h"

static const char *lib_path;
static const char *data_dir;
static void *lib;
static const ncclTuner_v6_t *v6;
static const ncclTuner_v5_t *v5;
static const ncclTuner_v4_t *v4;
static const ncclTuner_v3_t *v3;
static const ncclTuner_v2_t *v2;
static char tmpdir[] = "/tmp/nt-driver-XXXXXX";
static int quick;

/* ------------------------------------------------------------- mock logger */

#define MAX_LOGS 64
static struct {
  ncclDebugLogLevel level;
  unsigned long flags;
  char msg[1024];
} logs[MAX_LOGS];
static int nlogs;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

static void mock_log(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                     const char *fmt, ...) {
  (void)file;
  (void)line;
  pthread_mutex_lock(&log_mu);
  if (nlogs < MAX_LOGS) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logs[nlogs].msg, sizeof(logs[nlogs].msg), fmt, ap);
    va_end(ap);
    logs[nlogs].level = level;
    logs[nlogs].flags = flags;
    nlogs++;
  }
  pthread_mutex_unlock(&log_mu);
}

static int log_count(ncclDebugLogLevel level) {
  int n = 0;
  for (int i = 0; i < nlogs; i++) n += logs[i].level == level;
  return n;
}

/* Index of the first message of @level holding every given substring, or -1. */
static int log_find(ncclDebugLogLevel level, const char *a, const char *b) {
  for (int i = 0; i < nlogs; i++)
    if (logs[i].level == level && strstr(logs[i].msg, a) && (!b || strstr(logs[i].msg, b)))
      return i;
  return -1;
}

static void log_dump(void) {
  for (int i = 0; i < nlogs; i++) print_message("  log[%d] level %d: %s\n", i, logs[i].level, logs[i].msg);
}

/* ------------------------------------------------------------- fixtures */

static const float nccl_like[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {
    /* LL     LL128   SIMPLE  (microseconds; -1 = NCCL will not run it) */
    {14.1f, 22.3f, 31.0f},  /* TREE */
    {12.2f, 18.4f, 25.6f},  /* RING */
    {-1.0f, -1.0f, -1.0f},  /* COLLNET_DIRECT */
    {-1.0f, -1.0f, -1.0f},  /* COLLNET_CHAIN */
    {-1.0f, -1.0f, 40.2f},  /* NVLS */
    {-1.0f, -1.0f, -1.0f},  /* NVLS_TREE */
    {-1.0f, -1.0f, -1.0f}}; /* PAT */

typedef struct {
  float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
} table_t;

static table_t fresh(void) {
  table_t x;
  memcpy(x.t, nccl_like, sizeof(x.t));
  return x;
}

/* The only entry that may differ from NCCL's table is [a][p], and it must be 0.0. */
static void assert_only_chosen(const table_t *x, int a, int p) {
  for (int i = 0; i < NCCL_NUM_ALGORITHMS; i++)
    for (int j = 0; j < NCCL_NUM_PROTOCOLS; j++) {
      float want = (i == a && j == p) ? 0.0f : nccl_like[i][j];
      if (x->t[i][j] != want) {
        print_error("table[%d][%d] = %g, expected %g (choice %d/%d)\n", i, j, x->t[i][j], want, a,
                    p);
        fail();
      }
    }
}

static void assert_untouched(const table_t *x) { assert_only_chosen(x, -1, -1); }

static void clear_env(void) {
  unsetenv("NETTUNE_TUNING_FILE");
  unsetenv("NCCL_TUNER_CONFIG_FILE");
  unsetenv("NETTUNE_ON_ERROR");
  unsetenv("NETTUNE_PLUGIN_REPORT");
}

static int setup(void **state) {
  (void)state;
  clear_env();
  nlogs = 0;
  return 0;
}

static char *write_tmp(const char *name, const char *text) {
  static char path[4][512];
  static int k;
  char *p = path[k++ % 4];
  snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
  return p;
}

static void use_json(const char *rules_json) {
  char text[8192];
  snprintf(text, sizeof(text), "{\"schema\": \"nettune.tuning/1\", \"rules\": [%s]}", rules_json);
  setenv("NETTUNE_TUNING_FILE", write_tmp("t.json", text), 1);
}

static char *data_path(const char *name) {
  static char p[1024];
  snprintf(p, sizeof(p), "%s/%s", data_dir, name);
  return p;
}

/* ------------------------------------------------------------- version-independent API */

typedef struct {
  int ver; /* 6, 5, 4 or 3: the cost-table versions */
} api_t;
static api_t api6 = {6}, api5 = {5}, api4 = {4}, api3 = {3};

static ncclResult_t api_init(int ver, uint64_t comm_id, size_t nranks, size_t nnodes,
                             ncclTunerConstants_v5_t *k, void **ctx) {
  switch (ver) {
  case 6: {
    ncclNvlDomainInfo_v6_t nvl = {1, (int)nranks, (int)nranks};
    return v6->init(ctx, comm_id, nranks, nnodes, mock_log, &nvl, k);
  }
  case 5: {
    ncclNvlDomainInfo_v5_t nvl = {1, (int)nranks, (int)nranks};
    return v5->init(ctx, comm_id, nranks, nnodes, mock_log, &nvl, k);
  }
  case 4: return v4->init(nranks, nnodes, mock_log, ctx);
  case 3: return v3->init(nranks, nnodes, mock_log, ctx);
  default: return v2->init(nranks, nnodes, mock_log, ctx);
  }
}

static void *must_init(int ver, size_t nranks, size_t nnodes) {
  void *ctx = NULL;
  ncclResult_t r = api_init(ver, 0x1234, nranks, nnodes, NULL, &ctx);
  if (r != ncclSuccess) log_dump();
  assert_int_equal(r, ncclSuccess);
  assert_non_null(ctx);
  return ctx;
}

/* One call as NCCL makes it: the contiguous table passed as float **. getCollInfo must never
 * fail. */
static void call(int ver, void *ctx, int coll, size_t bytes, int pipe, int reg, table_t *x,
                 int na, int np, int *nch) {
  float **cost = (float **)x->t;
  ncclResult_t r;
  switch (ver) {
  case 6: r = v6->getCollInfo(ctx, coll, bytes, pipe, cost, na, np, reg, nch); break;
  case 5: r = v5->getCollInfo(ctx, coll, bytes, pipe, cost, na, np, reg, nch); break;
  case 4: r = v4->getCollInfo(ctx, coll, bytes, pipe, cost, na, np, reg, nch); break;
  default: r = v3->getCollInfo(ctx, coll, bytes, pipe, cost, na, np, nch); break;
  }
  assert_int_equal(r, ncclSuccess);
}

static void api_fini(int ver, void *ctx) {
  ncclResult_t r = ver == 6   ? v6->finalize(ctx)
                   : ver == 5 ? v5->finalize(ctx)
                   : ver == 4 ? v4->destroy(ctx)
                   : ver == 3 ? v3->destroy(ctx) : v2->destroy(ctx);
  assert_int_equal(r, ncclSuccess);
}

#define AR ncclFuncAllReduce
#define VER (((api_t *)*state)->ver)

/* ------------------------------------------------------------- cost-table versions */

static void test_choice_applied(void **state) {
  use_json("{\"coll\": \"allreduce\", \"max_bytes\": 65536, \"algo\": \"ring\", \"proto\": \"simple\"}");
  void *ctx = must_init(VER, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(VER, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  assert_int_equal(nch, 0); /* the rule sets no channel count: NCCL's stays */
  api_fini(VER, ctx);
}

static void test_ignored_choice_falls_through(void **state) {
  use_json("{\"coll\": \"allreduce\", \"algo\": \"nvls\", \"proto\": \"ll\", \"nchannels\": 5},"
           "{\"coll\": \"allreduce\", \"algo\": \"collnet_direct\"},"
           "{\"coll\": \"allreduce\", \"proto\": \"ll128\", \"algo\": \"pat\"},"
           "{\"coll\": \"allreduce\", \"algo\": \"tree\", \"proto\": \"ll\", \"nchannels\": 7}");
  void *ctx = must_init(VER, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(VER, ctx, AR, 1 << 20, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_LL); /* the -1.0 entries stay -1.0 */
  assert_int_equal(nch, 7);                              /* not the skipped rule's 5 */
  api_fini(VER, ctx);

  /* Only unavailable choices: NCCL's choice stands, nothing written. */
  use_json("{\"coll\": \"allreduce\", \"algo\": \"nvls\", \"proto\": \"ll\", \"nchannels\": 5}");
  ctx = must_init(VER, 8, 1);
  x = fresh();
  nch = 0;
  call(VER, ctx, AR, 1 << 20, 1, 0, &x, 7, 3, &nch);
  assert_untouched(&x);
  assert_int_equal(nch, 0);
  api_fini(VER, ctx);
}

static void test_no_match_untouched(void **state) {
  use_json("{\"coll\": \"allreduce\", \"min_bytes\": 1024, \"max_bytes\": 2048, \"algo\": "
           "\"ring\", \"nchannels\": 4}");
  void *ctx = must_init(VER, 8, 1);
  static const struct {
    int coll;
    size_t bytes;
  } q[] = {{AR, 0}, {AR, 1023}, {AR, 2049}, {AR, SIZE_MAX}, {ncclFuncBroadcast, 1500},
           {ncclFuncAllGather, 1500}};
  for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
    table_t x = fresh();
    int nch = 0;
    call(VER, ctx, q[i].coll, q[i].bytes, 1, 0, &x, 7, 3, &nch);
    assert_untouched(&x);
    assert_int_equal(nch, 0);
  }
  api_fini(VER, ctx);
}

static void test_wildcards(void **state) {
  /* Rule 0 is for 16-rank communicators only; rule 1 matches any shape, size, pipe, buffer. */
  use_json("{\"coll\": \"allreduce\", \"nranks\": 16, \"nnodes\": 2, \"algo\": \"tree\", "
           "\"proto\": \"simple\"},"
           "{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"ll128\"}");
  void *c8 = must_init(VER, 8, 1);
  void *c16 = must_init(VER, 16, 2);
  size_t sizes[] = {0, 1, 4096, (size_t)1 << 40, SIZE_MAX};
  for (size_t i = 0; i < 5; i++) {
    table_t x = fresh();
    int nch = 0;
    call(VER, c8, AR, sizes[i], (int)i + 1, (int)(i & 1), &x, 7, 3, &nch);
    assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL128);
    x = fresh();
    call(VER, c16, AR, sizes[i], 1, 0, &x, 7, 3, &nch);
    assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE);
    assert_int_equal(nch, 0);
  }
  /* The INFO line counts the kept rules: 1 for 8 ranks, 2 for 16. */
  assert_true(log_find(NCCL_LOG_INFO, "2 rules loaded, 1 kept for nRanks 8 nNodes 1", NULL) >= 0);
  assert_true(log_find(NCCL_LOG_INFO, "2 rules loaded, 2 kept for nRanks 16 nNodes 2", NULL) >= 0);
  api_fini(VER, c8);
  api_fini(VER, c16);
}

static void test_inclusive_bounds(void **state) {
  use_json("{\"coll\": \"allreduce\", \"min_bytes\": 1024, \"max_bytes\": 2048, \"algo\": "
           "\"tree\", \"proto\": \"ll\", \"nchannels\": 2}");
  void *ctx = must_init(VER, 8, 1);
  size_t b[] = {1023, 1024, 1500, 2048, 2049};
  int hit[] = {0, 1, 1, 1, 0};
  for (int i = 0; i < 5; i++) {
    table_t x = fresh();
    int nch = 0;
    call(VER, ctx, AR, b[i], 1, 0, &x, 7, 3, &nch);
    if (hit[i]) assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_LL);
    else assert_untouched(&x);
    assert_int_equal(nch, hit[i] ? 2 : 0);
  }
  api_fini(VER, ctx);
}

static void test_sizes_above_4gib(void **state) {
  use_json("{\"coll\": \"allreduce\", \"max_bytes\": 4294967296, \"algo\": \"ring\", \"proto\": \"ll\"},"
           "{\"coll\": \"allreduce\", \"min_bytes\": 4294967297, \"max_bytes\": 17179869184, "
           "\"algo\": \"tree\", \"proto\": \"simple\", \"nchannels\": 32}");
  void *ctx = must_init(VER, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(VER, ctx, AR, (size_t)6 << 30, 1, 0, &x, 7, 3, &nch); /* 6 GiB: not truncated to 32 bits */
  assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE);
  assert_int_equal(nch, 32);
  x = fresh();
  nch = 0;
  call(VER, ctx, AR, (size_t)4 << 30, 1, 0, &x, 7, 3, &nch); /* exactly 4 GiB */
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL);
  x = fresh();
  call(VER, ctx, AR, ((size_t)4 << 30) + 1, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE);
  x = fresh();
  nch = 0;
  call(VER, ctx, AR, ((size_t)16 << 30) + 1, 1, 0, &x, 7, 3, &nch);
  assert_untouched(&x);
  assert_int_equal(nch, 0);
  x = fresh();
  call(VER, ctx, AR, (size_t)1 << 20, 1, 0, &x, 7, 3, &nch); /* wraps to 1 MiB if truncated */
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL);
  api_fini(VER, ctx);
}

static void test_cheapest_resolution(void **state) {
  use_json("{\"coll\": \"allreduce\", \"max_bytes\": 100, \"algo\": \"ring\"},"
           "{\"coll\": \"allreduce\", \"min_bytes\": 101, \"proto\": \"simple\"}");
  void *ctx = must_init(VER, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(VER, ctx, AR, 50, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL); /* 12.2 < 18.4 < 25.6 */
  x = fresh();
  x.t[NCCL_ALGO_RING][NCCL_PROTO_LL] = -1.0f; /* LL not offered: LL128 is next cheapest */
  call(VER, ctx, AR, 50, 1, 0, &x, 7, 3, &nch);
  assert_true(x.t[NCCL_ALGO_RING][NCCL_PROTO_LL128] == 0.0f);
  assert_true(x.t[NCCL_ALGO_RING][NCCL_PROTO_LL] == -1.0f);
  assert_true(x.t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 25.6f);
  x = fresh();
  call(VER, ctx, AR, 5000, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE); /* 25.6 < 31.0 < 40.2 */
  x = fresh();
  x.t[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] = 3.0f; /* now NVLS is the cheapest SIMPLE */
  call(VER, ctx, AR, 5000, 1, 0, &x, 7, 3, &nch);
  assert_true(x.t[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] == 0.0f);
  assert_true(x.t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 25.6f);
  assert_int_equal(nch, 0);
  api_fini(VER, ctx);
}

static void test_pipe_ops_and_reg_buff(void **state) {
  use_json("{\"coll\": \"allreduce\", \"num_pipe_ops\": 2, \"algo\": \"tree\", \"proto\": \"ll\"},"
           "{\"coll\": \"allreduce\", \"reg_buff\": 1, \"algo\": \"ring\", \"proto\": \"ll128\"},"
           "{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"simple\"}");
  void *ctx = must_init(VER, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(VER, ctx, AR, 4096, 2, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_LL);
  x = fresh();
  call(VER, ctx, AR, 4096, 1, 1, &x, 7, 3, &nch);
  /* v3 passes no regBuff, so a rule that needs reg_buff 1 never matches there. */
  if (VER >= 4) assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL128);
  else assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  x = fresh();
  call(VER, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  api_fini(VER, ctx);
}

static void test_indices_bounded(void **state) {
  /* NCCL passes numAlgo/numProto; a rule beyond them is unavailable, never written. */
  use_json("{\"coll\": \"allreduce\", \"algo\": \"pat\", \"proto\": \"simple\"},"
           "{\"coll\": \"allreduce\", \"algo\": \"tree\", \"proto\": \"simple\"},"
           "{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"ll\"}");
  void *ctx = must_init(VER, 8, 1);
  /* A 6x3 table (no PAT): PAT is out of range, so TREE/SIMPLE is taken. */
  table_t x = fresh();
  x.t[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] = 5.0f; /* beyond numAlgo: must not be touched */
  int nch = 0;
  call(VER, ctx, AR, 64, 1, 0, &x, 6, 3, &nch);
  assert_true(x.t[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] == 0.0f);
  assert_true(x.t[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] == 5.0f);
  /* numProto 2 (no SIMPLE): the table is float[7][2]; TREE/SIMPLE is out of range too. */
  float t72[7][2];
  for (int a = 0; a < 7; a++)
    for (int p = 0; p < 2; p++) t72[a][p] = nccl_like[a][p];
  float **cost = (float **)t72;
  if (VER >= 5) assert_int_equal(v5->getCollInfo(ctx, AR, 64, 1, cost, 7, 2, 0, &nch), ncclSuccess);
  else if (VER == 4) assert_int_equal(v4->getCollInfo(ctx, AR, 64, 1, cost, 7, 2, 0, &nch), ncclSuccess);
  else assert_int_equal(v3->getCollInfo(ctx, AR, 64, 1, cost, 7, 2, &nch), ncclSuccess);
  for (int a = 0; a < 7; a++)
    for (int p = 0; p < 2; p++)
      assert_true(t72[a][p] == ((a == NCCL_ALGO_RING && p == NCCL_PROTO_LL) ? 0.0f : nccl_like[a][p]));
  /* No table at all, or an unknown collective: nothing happens, success all the same. */
  if (VER >= 5) {
    assert_int_equal(v5->getCollInfo(ctx, AR, 64, 1, NULL, 0, 0, 0, &nch), ncclSuccess);
    assert_int_equal(v5->getCollInfo(ctx, ncclFuncSendRecv, 64, 1, cost, 7, 2, 0, &nch), ncclSuccess);
    assert_int_equal(v5->getCollInfo(NULL, AR, 64, 1, cost, 7, 2, 0, &nch), ncclSuccess);
  }
  api_fini(VER, ctx);
}

/* ------------------------------------------------------------- API v2 */

static void test_v2_limits(void **state) {
  (void)state;
  use_json("{\"coll\": \"allgather\", \"algo\": \"tree\", \"proto\": \"simple\"},"
           "{\"coll\": \"allgather\", \"algo\": \"ring\", \"proto\": \"ll128\"},"
           "{\"coll\": \"allgather\", \"algo\": \"pat\", \"proto\": \"simple\"},"
           "{\"coll\": \"allgather\", \"algo\": \"ring\", \"proto\": \"ll\", \"nchannels\": 6},"
           "{\"coll\": \"allreduce\", \"max_bytes\": 1000, \"algo\": \"nvls\", \"proto\": \"simple\"},"
           "{\"coll\": \"allreduce\", \"max_bytes\": 1000, \"algo\": \"collnet_direct\", \"proto\": \"simple\"},"
           "{\"coll\": \"allreduce\", \"max_bytes\": 1000, \"algo\": \"tree\", \"proto\": \"ll128\"},"
           "{\"coll\": \"allreduce\", \"max_bytes\": 1000, \"algo\": \"tree\", \"proto\": \"ll\"},"
           "{\"coll\": \"allreduce\", \"min_bytes\": 1001, \"algo\": \"nvls_tree\", \"proto\": \"simple\"},"
           "{\"coll\": \"broadcast\", \"algo\": \"ring\"},"
           "{\"coll\": \"reduce\", \"algo\": \"ring\", \"proto\": \"simple\", \"nchannels\": 4},"
           "{\"coll\": \"reducescatter\", \"reg_buff\": 1, \"algo\": \"ring\", \"proto\": \"simple\"}");
  void *ctx = must_init(2, 8, 1);
  struct {
    int coll;
    size_t bytes;
    int collnet, nvls;
    int algo, proto, nch;
  } c[] = {
      {ncclFuncAllGather, 4096, 1, 1, NCCL_ALGO_RING, NCCL_PROTO_LL, 6},
      {AR, 512, 0, 1, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 0},
      {AR, 512, 1, 0, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE, 0},
      {AR, 512, 0, 0, NCCL_ALGO_TREE, NCCL_PROTO_LL, 0}, /* never LL128 */
      {AR, 5000, 1, 1, -1, -1, 0},                      /* NVLS_TREE: never from v2 */
      {ncclFuncBroadcast, 64, 1, 1, -1, -1, 0},         /* algo alone: not answered */
      {ncclFuncReduce, 64, 1, 1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 4},
      {ncclFuncReduceScatter, 64, 1, 1, -1, -1, 0},     /* v2 has no regBuff */
  };
  for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
    int algo = NCCL_ALGO_UNDEF, proto = NCCL_PROTO_UNDEF, nch = 0;
    assert_int_equal(v2->getCollInfo(ctx, c[i].coll, c[i].bytes, c[i].collnet, c[i].nvls, 1,
                                     &algo, &proto, &nch),
                     ncclSuccess);
    if (algo != c[i].algo || proto != c[i].proto || nch != c[i].nch) {
      print_error("case %zu: got %d/%d/%d, expected %d/%d/%d\n", i, algo, proto, nch, c[i].algo,
                  c[i].proto, c[i].nch);
      fail();
    }
  }
  assert_int_equal(v2->getCollInfo(ctx, AR, 64, 0, 0, 1, NULL, NULL, NULL), ncclSuccess);
  api_fini(2, ctx);
}

/* ------------------------------------------------------------- files, logging, failure */

static uint64_t fnv1a64_file(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  uint64_t h = 0xcbf29ce484222325ull;
  int ch;
  while ((ch = fgetc(f)) != EOF) h = (h ^ (unsigned char)ch) * 0x100000001b3ull;
  fclose(f);
  return h;
}

static void test_info_log_names_file_and_hash(void **state) {
  (void)state;
  const char *path = data_path("good.json");
  setenv("NETTUNE_TUNING_FILE", path, 1);
  void *ctx = must_init(5, 16, 2);
  char hash[40];
  snprintf(hash, sizeof(hash), "fnv1a64 %016" PRIx64, fnv1a64_file(path));
  int i = log_find(NCCL_LOG_INFO, hash, "5 rules loaded, 5 kept for nRanks 16 nNodes 2");
  if (i < 0) log_dump();
  assert_true(i >= 0);
  assert_true(logs[i].flags == NCCL_TUNING);
  assert_true(strncmp(logs[i].msg, "TUNER/nettune: ", 15) == 0);
  assert_non_null(strstr(logs[i].msg, path));
  assert_int_equal(log_count(NCCL_LOG_WARN), 0);
  api_fini(5, ctx);
}

static void expect_fail_closed(const char *env, const char *path, const char *what) {
  clear_env();
  setenv(env, path, 1);
  for (int ver = 2; ver <= 5; ver++) {
    nlogs = 0;
    void *ctx = (void *)0x1;
    ncclResult_t r = api_init(ver, 1, 8, 1, NULL, &ctx);
    assert_int_not_equal(r, ncclSuccess);
    assert_null(ctx);
    /* One clear message through NCCL's logger, naming the file and the problem. */
    assert_int_equal(log_count(NCCL_LOG_WARN), 1);
    int i = log_find(NCCL_LOG_WARN, "TUNER/nettune: cannot use tuning file", what);
    if (i < 0) log_dump();
    assert_true(i >= 0);
    assert_non_null(strstr(logs[i].msg, path));
    assert_non_null(strstr(logs[i].msg, "NETTUNE_ON_ERROR=defaults"));
  }
}

static void test_fail_closed(void **state) {
  (void)state;
  expect_fail_closed("NETTUNE_TUNING_FILE", data_path("missing.json"), "No such file");
  expect_fail_closed("NETTUNE_TUNING_FILE", data_path("truncated.json"), "malformed JSON");
  expect_fail_closed("NETTUNE_TUNING_FILE", data_path("unknown_algo.json"), "rules[2]: unknown algo 'rign'");
  expect_fail_closed("NETTUNE_TUNING_FILE", data_path("bad_schema.json"), "unknown schema");
  expect_fail_closed("NETTUNE_TUNING_FILE", data_path("constants_negative.json"), "hw_latencies_us");
  expect_fail_closed("NCCL_TUNER_CONFIG_FILE", data_path("unknown_algo.csv"), "line 3: unknown algorithm");
  expect_fail_closed("NCCL_TUNER_CONFIG_FILE", data_path("fields7.csv"), "line 2: 7 fields");
  setenv("NETTUNE_ON_ERROR", "bogus", 1); /* an unknown switch fails closed too */
  setenv("NETTUNE_TUNING_FILE", data_path("truncated.json"), 1);
  nlogs = 0;
  void *ctx = NULL;
  assert_int_not_equal(api_init(5, 1, 8, 1, NULL, &ctx), ncclSuccess);
  assert_true(log_find(NCCL_LOG_WARN, "unknown NETTUNE_ON_ERROR 'bogus'", NULL) >= 0);
}

static void test_on_error_defaults(void **state) {
  (void)state;
  setenv("NETTUNE_ON_ERROR", "defaults", 1);
  setenv("NETTUNE_TUNING_FILE", data_path("unknown_algo.json"), 1);
  for (int ver = 3; ver <= 5; ver++) {
    nlogs = 0;
    void *ctx = must_init(ver, 8, 1);
    assert_int_equal(log_count(NCCL_LOG_WARN), 1);
    assert_true(log_find(NCCL_LOG_WARN, "ignoring tuning file", "using NCCL's defaults") >= 0);
    table_t x = fresh();
    int nch = 0;
    call(ver, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch); /* the valid rules 0 and 1 are not used */
    assert_untouched(&x);
    assert_int_equal(nch, 0);
    api_fini(ver, ctx);
  }
}

static void test_csv_from_nccl_variable(void **state) {
  (void)state;
  setenv("NCCL_TUNER_CONFIG_FILE", data_path("good10.csv"), 1);
  void *ctx = must_init(4, 8, 1);
  table_t x = fresh();
  int nch = 0;
  /* line 4: allreduce,0,65536,tree,simple,2,1,-1,-1,1 (regBuff 1) */
  call(4, ctx, AR, 65536, 3, 1, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE);
  assert_int_equal(nch, 2);
  assert_true(log_find(NCCL_LOG_INFO, "(csv)", "4 rules loaded, 3 kept") >= 0);
  api_fini(4, ctx);
  /* Both named: the JSON file wins. */
  use_json("{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"ll\"}");
  ctx = must_init(4, 8, 1);
  x = fresh();
  nch = 0;
  call(4, ctx, AR, 65536, 3, 1, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL);
  assert_int_equal(nch, 0);
  api_fini(4, ctx);
}

static void test_no_file_named(void **state) {
  (void)state;
  setenv("NETTUNE_TUNING_FILE", "", 1); /* empty counts as unset */
  void *ctx = must_init(5, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(5, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch);
  assert_untouched(&x);
  assert_int_equal(nch, 0);
  assert_true(log_find(NCCL_LOG_INFO, "no tuning file", NULL) >= 0);
  assert_int_equal(log_count(NCCL_LOG_WARN), 0);
  api_fini(5, ctx);
}

static void test_constants_v5(void **state) {
  (void)state;
  ncclTunerConstants_v5_t k;
  double *d = (double *)&k;
  for (size_t i = 0; i < sizeof(k) / sizeof(double); i++) d[i] = 1.0;
  setenv("NETTUNE_TUNING_FILE", data_path("constants.json"), 1);
  void *ctx = NULL;
  assert_int_equal(api_init(5, 7, 8, 1, &k, &ctx), ncclSuccess);
  assert_true(k.baseLatencies[NCCL_ALGO_TREE][NCCL_PROTO_LL] == 6.8);
  assert_true(k.baseLatencies[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] == 8.0);
  assert_true(k.baseLatencies[NCCL_ALGO_NVLS][NCCL_PROTO_LL] == 0.0);
  assert_true(k.perChMaxTreeBws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_2NODES] == 41.4);
  /* Tables the file leaves out keep NCCL's values. */
  assert_true(k.hwLatencies[NCCL_HW_NET][NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 1.0);
  assert_true(k.llMaxBws[2][2] == 1.0);
  assert_true(k.perChMaxNVLSTreeBws[3][2] == 1.0);
  assert_true(log_find(NCCL_LOG_INFO, "applied constants: base_latencies_us, per_ch_max_tree_bws_GBps", NULL) >= 0);
  api_fini(5, ctx);
  /* Before v5 there is nothing to apply; init still succeeds. */
  ctx = must_init(4, 8, 1);
  assert_true(log_find(NCCL_LOG_INFO, "'constants' ignored: tuner API v4", NULL) >= 0);
  api_fini(4, ctx);
  /* A bad table rejects the file and leaves NCCL's constants alone. */
  for (size_t i = 0; i < sizeof(k) / sizeof(double); i++) d[i] = 1.0;
  setenv("NETTUNE_TUNING_FILE", data_path("constants_shape.json"), 1);
  assert_int_not_equal(api_init(5, 7, 8, 1, &k, &ctx), ncclSuccess);
  for (size_t i = 0; i < sizeof(k) / sizeof(double); i++) assert_true(d[i] == 1.0);
}

/* ------------------------------------------------------------- report */

static cJSON *read_json(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return cJSON_Parse(buf);
}

static double num_at(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  assert_true(cJSON_IsNumber(x));
  return x->valuedouble;
}

static int count_tmp_files(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) n += strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return n;
}

static void test_report(void **state) {
  (void)state;
  char tmpl[600];
  snprintf(tmpl, sizeof(tmpl), "%s/report-%%h-%%p-%%c.json", tmpdir);
  setenv("NETTUNE_PLUGIN_REPORT", tmpl, 1);
  use_json("{\"coll\": \"allreduce\", \"algo\": \"nvls\", \"proto\": \"ll\"},"
           "{\"coll\": \"allreduce\", \"max_bytes\": 1000, \"algo\": \"tree\", \"proto\": \"ll\"},"
           "{\"coll\": \"broadcast\", \"algo\": \"ring\"}");
  void *ctx = NULL;
  assert_int_equal(api_init(5, 0xabcdefull, 8, 1, NULL, &ctx), ncclSuccess);
  int nch = 0;
  for (int i = 0; i < 10; i++) {
    table_t x = fresh();
    call(5, ctx, AR, i < 7 ? 500 : 5000, 1, 0, &x, 7, 3, &nch); /* 7 fire rule 1, 3 fire none */
  }
  table_t x = fresh();
  call(5, ctx, ncclFuncBroadcast, 64, 1, 0, &x, 7, 3, &nch);
  api_fini(5, ctx);
  char host[256], path[1024];
  gethostname(host, sizeof(host));
  snprintf(path, sizeof(path), "%s/report-%s-%ld-0000000000abcdef.json", tmpdir, host,
           (long)getpid());
  cJSON *r = read_json(path);
  if (!r) print_error("no report at %s\n", path);
  assert_non_null(r);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "schema")->valuestring,
                      "nettune.plugin-report/1");
  assert_true(num_at(r, "api_version", NULL) == 5);
  assert_true(num_at(r, "calls", "allreduce") == 10);
  assert_true(num_at(r, "calls", "broadcast") == 1);
  assert_true(num_at(r, "calls", "allgather") == 0);
  assert_true(num_at(r, "calls_nccl_choice_kept", "allreduce") == 3);
  assert_true(num_at(r, "tuning_file", "rules_kept") == 3);
  const cJSON *rules = cJSON_GetObjectItemCaseSensitive(r, "rules");
  assert_int_equal(cJSON_GetArraySize(rules), 3);
  const cJSON *r0 = cJSON_GetArrayItem(rules, 0), *r1 = cJSON_GetArrayItem(rules, 1);
  assert_true(num_at(r0, "fired", NULL) == 0);
  assert_true(num_at(r0, "unavailable", NULL) == 10); /* NVLS/LL is -1 in every call */
  assert_true(num_at(r1, "fired", NULL) == 7);
  assert_true(num_at(r1, "index", NULL) == 1);
  assert_true(num_at(cJSON_GetArrayItem(rules, 2), "fired", NULL) == 1);
  const cJSON *fh = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "tuning_file"), "fnv1a64");
  char want[32];
  snprintf(want, sizeof(want), "%016" PRIx64, fnv1a64_file(getenv("NETTUNE_TUNING_FILE")));
  assert_string_equal(fh->valuestring, want);
  cJSON_Delete(r);
  /* Before v5, %c is a per-process counter: two communicators, two reports. */
  void *a = must_init(4, 8, 1), *b = must_init(4, 8, 1);
  api_fini(4, a);
  api_fini(4, b);
  int reports = 0;
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  while ((e = readdir(d))) reports += strncmp(e->d_name, "report-", 7) == 0;
  closedir(d);
  assert_int_equal(reports, 3);
  assert_int_equal(count_tmp_files(), 0); /* written to a temporary file, then renamed */
}

/* ------------------------------------------------------------- threads */

#define NTHREADS 16
struct thread_arg {
  int id;
  int failures;
};

/* Rules for 8-rank and 16-rank communicators differ; each thread checks it gets its own. */
static void *comm_thread(void *p) {
  struct thread_arg *arg = p;
  size_t nranks = arg->id % 2 ? 16 : 8;
  void *ctx = NULL;
  if (v5->init(&ctx, (uint64_t)arg->id, nranks, 2, mock_log, NULL, NULL) != ncclSuccess) {
    arg->failures++;
    return NULL;
  }
  int iters = quick ? 300 : 50000;
  uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(arg->id + 1);
  for (int i = 0; i < iters; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    size_t bytes = seed >> (seed % 40 + 20);
    table_t x = fresh();
    int nch = 0;
    v5->getCollInfo(ctx, AR, bytes, 1, (float **)x.t, 7, 3, 0, &nch);
    int want_a = bytes <= 65536 ? (nranks == 16 ? NCCL_ALGO_TREE : NCCL_ALGO_RING) : NCCL_ALGO_RING;
    int want_p = bytes <= 65536 ? NCCL_PROTO_LL : NCCL_PROTO_SIMPLE;
    int want_c = bytes <= 65536 ? 0 : (nranks == 16 ? 16 : 8);
    if (x.t[want_a][want_p] != 0.0f || nch != want_c) arg->failures++;
  }
  if (v5->finalize(ctx) != ncclSuccess) arg->failures++;
  return NULL;
}

static void test_parallel_communicators(void **state) {
  (void)state;
  use_json("{\"coll\": \"allreduce\", \"max_bytes\": 65536, \"nranks\": 16, \"algo\": \"tree\", \"proto\": \"ll\"},"
           "{\"coll\": \"allreduce\", \"max_bytes\": 65536, \"algo\": \"ring\", \"proto\": \"ll\"},"
           "{\"coll\": \"allreduce\", \"nranks\": 16, \"algo\": \"ring\", \"proto\": \"simple\", \"nchannels\": 16},"
           "{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"simple\", \"nchannels\": 8}");
  pthread_t th[NTHREADS];
  struct thread_arg args[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    args[i] = (struct thread_arg){i, 0};
    assert_int_equal(pthread_create(&th[i], NULL, comm_thread, &args[i]), 0);
  }
  int failures = 0;
  for (int i = 0; i < NTHREADS; i++) {
    pthread_join(th[i], NULL);
    failures += args[i].failures;
  }
  assert_int_equal(failures, 0);
  assert_int_equal(log_count(NCCL_LOG_WARN), 0);
}

/* ------------------------------------------------------------- control interface */

static const nettune_tuner_control_v1_t *ctl;

static void assert_last(int calls_before, int algo, int proto, int nch, int forced, int applied,
                        size_t bytes) {
  nettune_tuner_last_v1_t l;
  assert_int_equal(ctl->last(&l), 0);
  assert_int_equal((int)l.calls, calls_before + 1);
  assert_int_equal(l.coll, AR);
  assert_int_equal(l.nbytes, bytes);
  assert_int_equal(l.algo, algo);
  assert_int_equal(l.proto, proto);
  assert_int_equal(l.nchannels, nch);
  assert_int_equal(l.forced, forced);
  assert_int_equal(l.applied, applied);
}

static int calls_so_far(void) {
  nettune_tuner_last_v1_t l;
  return ctl->last(&l) == 0 ? (int)l.calls : 0;
}

/* Forcing overrides the file's rule for every call until clear; clear gives the rule back. */
static void test_control_force_changes_answer(void **state) {
  assert_int_equal(ctl->version, NETTUNE_TUNER_CONTROL_VERSION);
  use_json("{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"simple\"}");
  void *ctx = must_init(VER, 8, 1);
  table_t x = fresh();
  int nch = 0, c = calls_so_far();
  call(VER, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  assert_last(c, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 0, 0, 4096);

  assert_int_equal(ctl->force(NCCL_ALGO_TREE, NCCL_PROTO_LL128, 6), 0);
  for (int i = 0; i < 2; i++) { /* stays forced for the following calls */
    x = fresh();
    nch = 0;
    c = calls_so_far();
    call(VER, ctx, AR, 8192, 1, 0, &x, 7, 3, &nch);
    assert_only_chosen(&x, NCCL_ALGO_TREE, NCCL_PROTO_LL128);
    assert_int_equal(nch, 6);
    assert_last(c, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 6, 1, 1, 8192);
  }
  ctl->clear();
  x = fresh();
  nch = 0;
  c = calls_so_far();
  call(VER, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  assert_last(c, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 0, 0, 4096);
  api_fini(VER, ctx);
}

/* A forced cell NCCL marks IGNORE is not applied: the table stays NCCL's (no file rule either),
 * NCCL's cheapest entry (ring/LL at 12.2 us) is what runs, and last() says so. */
static void test_control_forced_ignore_not_applied(void **state) {
  use_json("{\"coll\": \"allreduce\", \"algo\": \"tree\", \"proto\": \"simple\"}");
  void *ctx = must_init(VER, 8, 1);
  assert_int_equal(ctl->force(NCCL_ALGO_NVLS, NCCL_PROTO_LL, 0), 0);
  table_t x = fresh();
  int nch = 0, c = calls_so_far();
  call(VER, ctx, AR, 1 << 20, 1, 0, &x, 7, 3, &nch);
  assert_untouched(&x);
  assert_int_equal(nch, 0);
  assert_last(c, NCCL_ALGO_RING, NCCL_PROTO_LL, 0, 1, 0, 1 << 20);
  /* a runnable NVLS cell is applied */
  assert_int_equal(ctl->force(NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 0), 0);
  x = fresh();
  c = calls_so_far();
  call(VER, ctx, AR, 1 << 20, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE);
  assert_last(c, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 0, 1, 1, 1 << 20);
  /* a cell outside the table NCCL passed (numAlgo 2) is not applied either */
  x = fresh();
  c = calls_so_far();
  call(VER, ctx, AR, 1 << 20, 1, 0, &x, 2, 3, &nch);
  assert_untouched(&x);
  assert_last(c, NCCL_ALGO_RING, NCCL_PROTO_LL, 0, 1, 0, 1 << 20);
  ctl->clear();
  api_fini(VER, ctx);
}

static void test_control_bad_force(void **state) {
  (void)state;
  assert_int_equal(ctl->force(-1, 0, 0), -1);
  assert_int_equal(ctl->force(NCCL_NUM_ALGORITHMS, 0, 0), -1);
  assert_int_equal(ctl->force(0, NCCL_NUM_PROTOCOLS, 0), -1);
  assert_int_equal(ctl->force(0, 0, -2), -1);
  assert_int_equal(ctl->last(NULL), -1);
  /* nothing was forced by the rejected calls: a rule applies */
  use_json("{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"ll128\"}");
  void *ctx = must_init(5, 8, 1);
  table_t x = fresh();
  int nch = 0;
  call(5, ctx, AR, 4096, 1, 0, &x, 7, 3, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_LL128);
  api_fini(5, ctx);
}

/* ------------------------------------------------------------- API v6 chunk sizes */

/* NCCL 2.30.7's chunk-size step for one getChunkSize call (src/enqueue.cc:2308-2321): NCCL's own
 * value in, the tuner may change it, then the clamp to the buffer's maximum and the rounding
 * down to the protocol's grain (device.h:328-334). Returns the chunk size NCCL runs with. */
static size_t nccl_chunk(void *ctx, int coll, size_t bytes, int algo, int proto, int nch,
                         size_t nccl_value, size_t buffer_max) {
  static const size_t grain[3] = {16, 1920, 512};
  size_t c = nccl_value;
  assert_int_equal(v6->getChunkSize(ctx, coll, bytes, algo, proto, nch, &c), ncclSuccess);
  if (c > buffer_max) c = buffer_max;
  return c / grain[proto] * grain[proto];
}

/* One non-CollNet collective of @bytes over 8 channels as NCCL 2.30.7 schedules it
 * (scheduleCollTasksToPlan, src/enqueue.cc:724-738): up to three calls, nChannels 1, with the
 * bytes of the first, the middle and the last channel. Each must give @want. */
static void chunks_per_channel(void *ctx, int coll, size_t bytes, int algo, int proto,
                               size_t nccl_value, size_t want) {
  const size_t lo = bytes / 16, mid = bytes / 8, hi = bytes - lo - 6 * mid;
  const size_t parts[3] = {lo, hi, mid};
  for (int i = 0; i < 3; i++)
    assert_int_equal(nccl_chunk(ctx, coll, parts[i], algo, proto, 1, nccl_value, 1 << 20), want);
}

/* A measured chunk-size rule is applied for its algorithm and protocol, per channel and for
 * CollNet's whole-size call; nothing else changes: the cost table as in v5, other collectives,
 * algorithms, protocols and sizes keep NCCL's value, a predicted chunk size is not applied. */
static void test_v6_chunk_size(void **state) {
  (void)state;
  use_json("{\"coll\": \"allreduce\", \"min_bytes\": 1048576, \"max_bytes\": 16777216, "
           "\"algo\": \"ring\", \"proto\": \"simple\", \"chunk_bytes\": 131072, "
           "\"basis\": \"measured\"},"
           "{\"coll\": \"allreduce\", \"min_bytes\": 16777217, \"max_bytes\": 67108864, "
           "\"algo\": \"ring\", \"proto\": \"simple\", \"chunk_bytes\": 65536, "
           "\"basis\": \"predicted\"},"
           "{\"coll\": \"allgather\", \"algo\": \"collnet_direct\", \"proto\": \"simple\", "
           "\"chunk_bytes\": 262144, \"basis\": \"measured\"}");
  void *ctx = must_init(6, 16, 2);
  const size_t nccl_value = 524288; /* NCCL's Simple chunk: 4 MiB buffer / 8 steps x 1 */
  table_t x = fresh();
  int nch = 0;
  call(6, ctx, AR, 8u << 20, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  assert_int_equal(nch, 0);
  chunks_per_channel(ctx, AR, 8u << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, nccl_value, 131072);
  /* NCCL ran another algorithm or protocol, or asks for another collective: NCCL's value */
  chunks_per_channel(ctx, AR, 8u << 20, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, nccl_value, nccl_value);
  chunks_per_channel(ctx, AR, 8u << 20, NCCL_ALGO_RING, NCCL_PROTO_LL, 65536, 65536);
  chunks_per_channel(ctx, ncclFuncAllGather, 8u << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE,
                     nccl_value, nccl_value);
  /* bytes beyond the collective the choice was made for: not this choice's chunk */
  assert_int_equal(nccl_chunk(ctx, AR, (8u << 20) + 1, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1,
                              nccl_value, 1 << 20),
                   nccl_value);
  /* the next choice has no chunk size (predicted), then none at all: NCCL's value */
  x = fresh();
  call(6, ctx, AR, 32u << 20, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  chunks_per_channel(ctx, AR, 32u << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, nccl_value,
                     nccl_value);
  x = fresh();
  call(6, ctx, AR, 1024, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  assert_untouched(&x);
  chunks_per_channel(ctx, AR, 1024, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, nccl_value, nccl_value);
  /* the chunk above the buffer's maximum is NCCL's to clamp (enqueue.cc:2312-2316) */
  x = fresh();
  call(6, ctx, AR, 8u << 20, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  assert_int_equal(nccl_chunk(ctx, AR, 1u << 20, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1, nccl_value,
                              65536),
                   65536);
  /* CollNet: one call with the whole size and the collective's channel count (:634) */
  table_t cn = fresh();
  cn.t[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE] = 30.0f;
  call(6, ctx, ncclFuncAllGather, 64u << 20, 1, 0, &cn, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS,
       &nch);
  assert_float_equal(cn.t[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE], 0.0f, 0);
  assert_int_equal(nccl_chunk(ctx, ncclFuncAllGather, 64u << 20, NCCL_ALGO_COLLNET_DIRECT,
                              NCCL_PROTO_SIMPLE, 4, nccl_value, 1 << 20),
                   262144);
  /* v5's getCollInfo on the same rules makes the same choice; v5 has no getChunkSize */
  void *c5 = must_init(5, 16, 2);
  x = fresh();
  call(5, c5, AR, 8u << 20, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  api_fini(5, c5);
  api_fini(6, ctx);
}

/* A forced candidate with a forced chunk size answers getChunkSize for its algorithm and
 * protocol only, in place of the file's measured chunk size; chunk_writes counts the answers;
 * force without a chunk, and clear, give NCCL's value (then the file's) back. */
/* NCCL's Simple chunk for ring allreduce, also its buffer maximum (v2.30.7-1
 * src/enqueue.cc:2222-2229:
 * 4 MiB / NCCL_STEPS 8 x ALLREDUCE_CHUNKSTEPS 4, src/include/collectives.h:20). */
static const size_t nccl_value = 2097152;

/* The three per-channel calls of an 8 MiB allreduce (as chunks_per_channel) with Simple and
 * algo, each giving want. */
static void ring_chunks(void *ctx, int algo, size_t want) {
  const size_t bytes = 8u << 20, lo = bytes / 16, mid = bytes / 8, hi = bytes - lo - 6 * mid;
  const size_t parts[3] = {lo, hi, mid};
  for (int i = 0; i < 3; i++)
    assert_int_equal(nccl_chunk(ctx, AR, parts[i], algo, NCCL_PROTO_SIMPLE, 1, nccl_value, nccl_value),
                     want);
}

static void test_control_force_chunk(void **state) {
  (void)state;
  assert_true(ctl->version >= 2);
  use_json("{\"coll\": \"allreduce\", \"algo\": \"ring\", \"proto\": \"simple\", "
           "\"chunk_bytes\": 131072, \"basis\": \"measured\"}");
  void *ctx = must_init(6, 16, 2);
  assert_int_equal(ctl->force(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0), 0);
  assert_int_equal(ctl->force_chunk(262144), 0);
  assert_int_equal(ctl->force_chunk(0x80000000u), -1);
  uint64_t w = ctl->chunk_writes();
  table_t x = fresh();
  int nch = 0;
  call(6, ctx, AR, 8u << 20, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  assert_only_chosen(&x, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE);
  ring_chunks(ctx, NCCL_ALGO_RING, 262144);
  assert_int_equal(ctl->chunk_writes() - w, 3);
  /* another algorithm than the forced one: NCCL's value, not counted */
  ring_chunks(ctx, NCCL_ALGO_TREE, nccl_value);
  assert_int_equal(ctl->chunk_writes() - w, 3);
  /* forced without a chunk size: NCCL's value, not the file's */
  assert_int_equal(ctl->force(NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0), 0);
  ring_chunks(ctx, NCCL_ALGO_RING, nccl_value);
  /* cleared: the file's measured rule again */
  ctl->clear();
  x = fresh();
  call(6, ctx, AR, 8u << 20, 1, 0, &x, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, &nch);
  ring_chunks(ctx, NCCL_ALGO_RING, 131072);
  assert_int_equal(ctl->chunk_writes() - w, 3);
  api_fini(6, ctx);
}

/* ------------------------------------------------------------- loading */

/* The tuner symbols each NCCL release tries, newest first (v2.30.7-1 src/plugin/tuner.cc:73-84:
 * v6 .. v2; v2.28.9-1 and v2.29.7-1: v5 .. v2), and the version it settles on. */
static int nccl_loads(int nccl_minor) {
  static const char *const syms[] = {"ncclTunerPlugin_v6", "ncclTunerPlugin_v5",
                                     "ncclTunerPlugin_v4", "ncclTunerPlugin_v3",
                                     "ncclTunerPlugin_v2"};
  for (int i = nccl_minor >= 30 ? 0 : 1; i < 5; i++)
    if (dlsym(lib, syms[i])) return 6 - i;
  return 0;
}

static void test_loads_as_nccl_does(void **state) {
  (void)state;
  assert_int_equal(nccl_loads(30), 6);
  assert_int_equal(nccl_loads(29), 5);
  assert_int_equal(nccl_loads(28), 5);
  assert_non_null(v6->getChunkSize);
  /* v6 starts as v5: the same init, getCollInfo and finalize */
  assert_ptr_equal(v6->getCollInfo, v5->getCollInfo);
  assert_ptr_equal(v6->finalize, v5->finalize);
}

static void test_exports(void **state) {
  (void)state;
  assert_string_equal(v6->name, "nettune");
  assert_string_equal(v5->name, "nettune");
  assert_string_equal(v4->name, "nettune");
  assert_string_equal(v3->name, "nettune");
  assert_string_equal(v2->name, "nettune");
  assert_non_null(v5->init);
  assert_non_null(v5->getCollInfo);
  assert_non_null(v5->finalize);
  assert_non_null(v2->destroy);
  /* Internals stay hidden. */
  assert_null(dlsym(lib, "nt_tuning_load"));
  assert_null(dlsym(lib, "nt_index_decide"));
  assert_null(dlsym(lib, "nt_fnv1a64"));
  assert_null(dlsym(lib, "ncclTunerPlugin_v7"));
}

#define FOR_TABLE_VERSIONS(t)                                                                     \
  cmocka_unit_test_prestate_setup_teardown(t, setup, NULL, &api6),                              \
      cmocka_unit_test_prestate_setup_teardown(t, setup, NULL, &api5),                          \
      cmocka_unit_test_prestate_setup_teardown(t, setup, NULL, &api4),                          \
      cmocka_unit_test_prestate_setup_teardown(t, setup, NULL, &api3)

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PLUGIN.so DATA_DIR\n", argv[0]);
    return 2;
  }
  lib_path = argv[1];
  data_dir = argv[2];
  quick = getenv("NT_TEST_QUICK") != NULL;
  lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen %s: %s\n", lib_path, dlerror());
    return 1;
  }
  v6 = dlsym(lib, "ncclTunerPlugin_v6");
  v5 = dlsym(lib, "ncclTunerPlugin_v5");
  v4 = dlsym(lib, "ncclTunerPlugin_v4");
  v3 = dlsym(lib, "ncclTunerPlugin_v3");
  v2 = dlsym(lib, "ncclTunerPlugin_v2");
  ctl = dlsym(lib, NETTUNE_TUNER_CONTROL_SYMBOL);
  if (!v6 || !v5 || !v4 || !v3 || !v2 || !ctl) {
    fprintf(stderr, "%s: missing ncclTunerPlugin_v6/_v5/_v4/_v3/_v2 or %s\n", lib_path,
            NETTUNE_TUNER_CONTROL_SYMBOL);
    return 1;
  }
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_exports, setup),
      cmocka_unit_test_setup(test_loads_as_nccl_does, setup),
      cmocka_unit_test_setup(test_v6_chunk_size, setup),
      cmocka_unit_test_setup(test_control_force_chunk, setup),
      FOR_TABLE_VERSIONS(test_choice_applied),
      FOR_TABLE_VERSIONS(test_ignored_choice_falls_through),
      FOR_TABLE_VERSIONS(test_no_match_untouched),
      FOR_TABLE_VERSIONS(test_wildcards),
      FOR_TABLE_VERSIONS(test_inclusive_bounds),
      FOR_TABLE_VERSIONS(test_sizes_above_4gib),
      FOR_TABLE_VERSIONS(test_cheapest_resolution),
      FOR_TABLE_VERSIONS(test_pipe_ops_and_reg_buff),
      FOR_TABLE_VERSIONS(test_indices_bounded),
      cmocka_unit_test_setup(test_v2_limits, setup),
      cmocka_unit_test_setup(test_info_log_names_file_and_hash, setup),
      cmocka_unit_test_setup(test_fail_closed, setup),
      cmocka_unit_test_setup(test_on_error_defaults, setup),
      cmocka_unit_test_setup(test_csv_from_nccl_variable, setup),
      cmocka_unit_test_setup(test_no_file_named, setup),
      cmocka_unit_test_setup(test_constants_v5, setup),
      cmocka_unit_test_setup(test_report, setup),
      cmocka_unit_test_setup(test_parallel_communicators, setup),
      FOR_TABLE_VERSIONS(test_control_force_changes_answer),
      FOR_TABLE_VERSIONS(test_control_forced_ignore_not_applied),
      cmocka_unit_test_setup(test_control_bad_force, setup),
  };
  int failed = cmocka_run_group_tests_name("nccl-tuner plugin driver (dlopen)", tests, NULL, NULL);
  /* Remove what the tests wrote. */
  DIR *d = opendir(tmpdir);
  struct dirent *e;
  char p[1024];
  while (d && (e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
      unlink(p);
    }
  if (d) closedir(d);
  rmdir(tmpdir);
  dlclose(lib);
  return failed ? 1 : 0;
}
