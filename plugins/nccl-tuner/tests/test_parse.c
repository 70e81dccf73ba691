/*
 * Unit tests of the parsers, the index and the report path template, linked against the
 * plugin's internals. Usage: test_parse DATA_DIR EXAMPLES_DIR (tests/data and examples).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nt_index.h"
#include "nt_plugin.h"
#include "nt_tuning.h"

static const char *data_dir = "tests/data";
static const char *examples_dir = "examples";

static nt_tp_status_t load(const char *name, nt_format_t fmt, nt_tuning_t *t, char *err) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", data_dir, name);
  err[0] = '\0';
  return nt_tuning_load(path, fmt, t, err, NT_ERR_LEN);
}

static void test_fnv1a64_vectors(void **state) {
  (void)state;
  /* Reference values from the FNV test suite (draft-eastlake-fnv). */
  assert_true(nt_fnv1a64("", 0) == 0xcbf29ce484222325ull);
  assert_true(nt_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull);
  assert_true(nt_fnv1a64("foobar", 6) == 0x85944171f73967e8ull);
}

static void test_good_json(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(load("good.json", NT_FORMAT_JSON, &t, err), NT_TP_OK);
  assert_int_equal(t.nrules, 5);
  const nt_rule_t *r = t.rules;
  assert_int_equal(r[0].coll, ncclFuncAllReduce);
  assert_true(r[0].min_bytes == 0 && r[0].max_bytes == 65536);
  assert_int_equal(r[0].algo, NCCL_ALGO_TREE);
  assert_int_equal(r[0].proto, NCCL_PROTO_LL);
  assert_int_equal(r[0].nnodes, 2);
  assert_int_equal(r[0].nranks, 16);
  assert_int_equal(r[0].nchannels, 0);
  assert_int_equal(r[0].pipe_ops, 0);
  assert_int_equal(r[0].reg_buff, -1);
  assert_int_equal(r[0].src, 0);
  assert_true(r[1].min_bytes == 65537 && r[1].max_bytes == 8589934592ull);
  assert_int_equal(r[1].nchannels, 16);
  assert_int_equal(r[1].pipe_ops, 1);
  assert_int_equal(r[1].reg_buff, 0);
  assert_int_equal(r[2].coll, ncclFuncAllGather); /* names compare without case */
  assert_int_equal(r[2].algo, NCCL_ALGO_RING);
  assert_int_equal(r[2].proto, -1);
  assert_true(r[2].min_bytes == 0 && r[2].max_bytes == UINT64_MAX);
  assert_int_equal(r[3].coll, ncclFuncReduceScatter);
  assert_int_equal(r[3].algo, -1);
  assert_int_equal(r[3].proto, NCCL_PROTO_LL128);
  assert_true(r[3].max_bytes == UINT64_MAX); /* null = any */
  assert_int_equal(r[4].coll, ncclFuncBroadcast);
  assert_int_equal(r[4].nchannels, 8);
  assert_int_equal(r[4].reg_buff, 1);
  assert_int_equal(t.constants_mask, 0);
  assert_true(t.hash != 0);
  nt_tuning_cleanup(&t);
}

/* "basis" per rule and the top-level "completed" (a partial file from nettune tune
 * --time-limit is loaded like a complete one). */
static void test_basis_completed(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN] = "";
  const char *doc =
      "{\"schema\":\"nettune.tuning/1\",\"completed\":false,\"rules\":["
      "{\"coll\":\"allreduce\",\"algo\":\"ring\",\"basis\":\"measured\"},"
      "{\"coll\":\"allreduce\",\"algo\":\"tree\",\"basis\":\"Inferred\"},"
      "{\"coll\":\"allreduce\",\"proto\":\"ll\"}]}";
  assert_int_equal(nt_tuning_parse_json(doc, strlen(doc), &t, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(t.completed, 0);
  assert_int_equal(t.nrules, 3);
  assert_int_equal(t.rules[0].basis, NT_BASIS_MEASURED);
  assert_int_equal(t.rules[1].basis, NT_BASIS_INFERRED);
  assert_int_equal(t.rules[2].basis, -1);
  nt_tuning_cleanup(&t);
  const char *ok = "{\"schema\":\"nettune.tuning/1\",\"rules\":[]}";
  assert_int_equal(nt_tuning_parse_json(ok, strlen(ok), &t, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(t.completed, 1);
  nt_tuning_cleanup(&t);
  const char *bad = "{\"schema\":\"nettune.tuning/1\",\"rules\":[{\"coll\":\"allreduce\","
                    "\"algo\":\"ring\",\"basis\":\"guessed\"}]}";
  assert_int_equal(nt_tuning_parse_json(bad, strlen(bad), &t, err, sizeof(err)), NT_TP_ERR_FORMAT);
  assert_non_null(strstr(err, "rules[0]: unknown basis 'guessed'"));
  nt_tuning_cleanup(&t);
  const char *badc = "{\"schema\":\"nettune.tuning/1\",\"completed\":1,\"rules\":[]}";
  assert_int_equal(nt_tuning_parse_json(badc, strlen(badc), &t, err, sizeof(err)),
                   NT_TP_ERR_FORMAT);
  assert_non_null(strstr(err, "'completed' must be true or false"));
  nt_tuning_cleanup(&t);
  /* the one key list */
  assert_int_equal(nt_tuning_rule_key("basis"), NT_RK_BASIS);
  assert_int_equal(nt_tuning_rule_key("colour"), -1);
  assert_string_equal(nt_basis_name(NT_BASIS_PREDICTED), "predicted");
}

/* chunk_bytes (NCCL 2.30, tuner API v6): per algorithm and protocol, a positive multiple of the
 * protocol's grain (LL 16, LL128 1920, Simple 512: v2.30.7-1 src/include/device.h:328-334),
 * since NCCL rounds down to it (src/enqueue.cc:2321) and a smaller value would become 0. */
static void test_chunk_bytes(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN] = "";
  const char *doc =
      "{\"schema\":\"nettune.tuning/1\",\"rules\":["
      "{\"coll\":\"allreduce\",\"algo\":\"ring\",\"proto\":\"simple\",\"chunk_bytes\":131072,"
      "\"basis\":\"measured\"},"
      "{\"coll\":\"allgather\",\"algo\":\"ring\",\"proto\":\"ll128\",\"chunk_bytes\":3840},"
      "{\"coll\":\"allgather\",\"algo\":\"ring\",\"proto\":\"ll\",\"chunk_bytes\":16,"
      "\"nchannels\":null}]}";
  assert_int_equal(nt_tuning_parse_json(doc, strlen(doc), &t, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(t.rules[0].chunk_bytes, 131072);
  assert_int_equal(t.rules[1].chunk_bytes, 3840);
  assert_int_equal(t.rules[2].chunk_bytes, 16);
  nt_tuning_cleanup(&t);
  static const struct {
    const char *rule, *msg;
  } bad[] = {
      {"\"algo\":\"ring\",\"proto\":\"simple\",\"chunk_bytes\":1000",
       "rules[0]: 'chunk_bytes' 1000 is not a multiple of simple's grain of 512 bytes (NCCL "
       "rounds it down): use 512 or 1024"},
      {"\"algo\":\"ring\",\"proto\":\"simple\",\"chunk_bytes\":256",
       "'chunk_bytes' 256 is not a multiple of simple's grain of 512 bytes (NCCL rounds it "
       "down, to 0): use 512 or 512"},
      {"\"algo\":\"tree\",\"proto\":\"ll128\",\"chunk_bytes\":2048",
       "not a multiple of ll128's grain of 1920 bytes"},
      {"\"algo\":\"ring\",\"chunk_bytes\":4096", "'chunk_bytes' needs 'algo' and 'proto'"},
      {"\"proto\":\"ll\",\"chunk_bytes\":4096", "'chunk_bytes' needs 'algo' and 'proto'"},
      {"\"algo\":\"ring\",\"proto\":\"ll\",\"chunk_bytes\":0",
       "'chunk_bytes' must be an integer from 1 to 2147483647"},
      {"\"algo\":\"ring\",\"proto\":\"ll\",\"chunk_bytes\":4294967296",
       "'chunk_bytes' must be an integer from 1 to 2147483647"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[512];
    snprintf(text, sizeof(text),
             "{\"schema\":\"nettune.tuning/1\",\"rules\":[{\"coll\":\"allreduce\",%s}]}",
             bad[i].rule);
    assert_int_equal(nt_tuning_parse_json(text, strlen(text), &t, err, sizeof(err)),
                     NT_TP_ERR_FORMAT);
    if (!strstr(err, bad[i].msg)) {
      print_error("%s: message '%s', expected '%s'\n", bad[i].rule, err, bad[i].msg);
      fail();
    }
    nt_tuning_cleanup(&t);
  }
  assert_int_equal(nt_proto_grain_bytes(NCCL_PROTO_LL128), 1920);
  assert_int_equal(nt_proto_grain_bytes(3), 0);
}

static void test_constants_json(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(load("constants.json", NT_FORMAT_JSON, &t, err), NT_TP_OK);
  assert_int_equal(t.nrules, 0);
  assert_int_equal(t.constants_mask, NT_CONST_BASE_LAT | NT_CONST_TREE_BW);
  assert_true(t.constants.baseLatencies[NCCL_ALGO_RING][NCCL_PROTO_LL] == 6.6);
  assert_true(t.constants.baseLatencies[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE] == 8.0);
  assert_true(t.constants.perChMaxTreeBws[NCCL_HOPPER_COMPCAP_IDX][NCCL_TUNING_SCALE_2NODES] ==
              41.4);
  assert_true(t.constants.perChMaxTreeBws[NCCL_BLACKWELL_COMPCAP_IDX][2] == 70.0);
  nt_tuning_cleanup(&t);
}

static void test_csv_10_fields(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(load("good10.csv", NT_FORMAT_CSV, &t, err), NT_TP_OK);
  assert_int_equal(t.nrules, 4);
  const nt_rule_t *r = t.rules;
  assert_int_equal(r[0].src, 4); /* line numbers count comments and blank lines */
  assert_int_equal(r[0].algo, NCCL_ALGO_TREE);
  assert_int_equal(r[0].nchannels, 2);
  assert_int_equal(r[0].nnodes, 1);
  assert_int_equal(r[0].nranks, 0);
  assert_int_equal(r[0].pipe_ops, 0);
  assert_int_equal(r[0].reg_buff, 1);
  assert_int_equal(r[1].nnodes, 4);
  assert_int_equal(r[1].nranks, 32);
  assert_int_equal(r[1].pipe_ops, 1);
  assert_int_equal(r[1].reg_buff, 0);
  assert_int_equal(r[2].src, 6); /* spaces around fields are trimmed */
  assert_true(r[2].min_bytes == 1048577 && r[2].max_bytes == 4294967295ull);
  assert_int_equal(r[2].proto, NCCL_PROTO_LL128);
  assert_int_equal(r[2].nchannels, 0);
  assert_int_equal(r[2].pipe_ops, 4);
  assert_int_equal(r[2].reg_buff, -1);
  assert_int_equal(r[3].coll, ncclFuncBroadcast);
  assert_true(r[3].max_bytes == UINT64_MAX);
  nt_tuning_cleanup(&t);
}

static void test_csv_completed(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN] = "";
  const char *csv = "allreduce,0,65536,tree,ll,-1,2,16\n";
  assert_int_equal(nt_tuning_parse_csv(csv, strlen(csv), &t, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(t.completed, 1);
  assert_int_equal(t.rules[0].basis, -1);
  nt_tuning_cleanup(&t);
}

static void test_csv_8_fields_crlf(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(load("good8.csv", NT_FORMAT_CSV, &t, err), NT_TP_OK);
  assert_int_equal(t.nrules, 2);
  assert_int_equal(t.rules[0].coll, ncclFuncAllGather);
  assert_int_equal(t.rules[0].nnodes, 2);
  assert_int_equal(t.rules[0].pipe_ops, 0);
  assert_int_equal(t.rules[0].reg_buff, -1);
  assert_int_equal(t.rules[1].coll, ncclFuncReduce);
  assert_true(t.rules[1].max_bytes == UINT64_MAX);
  assert_int_equal(t.rules[1].nchannels, 0);
  nt_tuning_cleanup(&t);
}

static void test_csv_9_fields(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(load("good9.csv", NT_FORMAT_CSV, &t, err), NT_TP_OK);
  assert_int_equal(t.nrules, 3);
  assert_int_equal(t.rules[0].proto, NCCL_PROTO_LL);
  assert_int_equal(t.rules[0].pipe_ops, 1);
  assert_int_equal(t.rules[1].algo, -1); /* -1 = not set: cheapest algorithm with SIMPLE */
  assert_int_equal(t.rules[1].proto, NCCL_PROTO_SIMPLE);
  assert_int_equal(t.rules[1].pipe_ops, 2);
  assert_int_equal(t.rules[2].algo, NCCL_ALGO_NVLS);
  assert_int_equal(t.rules[2].proto, -1);
  assert_int_equal(t.rules[2].nranks, 8);
  nt_tuning_cleanup(&t);
}

/* The committed examples parse and say the same thing in both formats. */
static void test_examples(void **state) {
  (void)state;
  char pj[1024], pc[1024], err[NT_ERR_LEN];
  snprintf(pj, sizeof(pj), "%s/tuning.json", examples_dir);
  snprintf(pc, sizeof(pc), "%s/nccl_tuner.csv", examples_dir);
  nt_tuning_t j, c;
  assert_int_equal(nt_tuning_load(pj, NT_FORMAT_JSON, &j, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(nt_tuning_load(pc, NT_FORMAT_CSV, &c, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(j.nrules, 7);
  assert_int_equal(c.nrules, j.nrules);
  for (size_t i = 0; i < j.nrules; i++) {
    const nt_rule_t *a = &j.rules[i], *b = &c.rules[i];
    assert_int_equal(a->coll, b->coll);
    assert_true(a->min_bytes == b->min_bytes && a->max_bytes == b->max_bytes);
    assert_int_equal(a->algo, b->algo);
    assert_int_equal(a->proto, b->proto);
    assert_int_equal(a->nchannels, b->nchannels);
    assert_int_equal(a->nnodes, b->nnodes);
    assert_int_equal(a->nranks, b->nranks);
    assert_int_equal(a->pipe_ops, b->pipe_ops);
    assert_int_equal(a->reg_buff, b->reg_buff);
  }
  nt_tuning_cleanup(&j);
  nt_tuning_cleanup(&c);
}

static void test_csv_empty(void **state) {
  (void)state;
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(load("empty.csv", NT_FORMAT_CSV, &t, err), NT_TP_OK);
  assert_int_equal(t.nrules, 0);
  nt_tuning_cleanup(&t);
}

struct bad_case {
  const char *file;
  nt_format_t fmt;
  nt_tp_status_t st;
  const char *msg; /* substring the message must hold */
};
static const struct bad_case bad_cases[] = {
    {"truncated.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "malformed JSON at line 1"},
    {"wrong_type.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT,
     "rules[1]: 'min_bytes' must be an integer"},
    {"huge_number.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: 'max_bytes'"},
    {"huge_int.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[2]: 'max_bytes'"},
    {"fraction.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: 'nchannels'"},
    {"unknown_algo.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[2]: unknown algo 'rign'"},
    {"unknown_proto.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: unknown proto 'll64'"},
    {"unknown_coll.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: unknown coll 'alltoall'"},
    {"unknown_key.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: unknown key 'max_byte'"},
    {"bad_schema.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "unknown schema 'nettune.tuning/2'"},
    {"no_schema.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "missing 'schema'"},
    {"no_coll.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: 'coll' is required"},
    {"min_gt_max.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: min_bytes is above"},
    {"sets_nothing.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: sets none of"},
    {"nchannels_range.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "'nchannels' must be an integer"},
    {"negative.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "rules[0]: 'nranks' must be"},
    {"trailing.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "data after the document"},
    {"not_object.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "expected a JSON object"},
    {"constants_shape.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT,
     "constants.ll_max_bws_GBps: expected an array of 4 arrays"},
    {"constants_negative.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT,
     "constants.hw_latencies_us[2][4][1]: must be a finite non-negative number"},
    {"constants_unknown.json", NT_FORMAT_JSON, NT_TP_ERR_FORMAT,
     "constants: unknown table 'min_chunk_sizes'"},
    {"empty.csv", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "malformed JSON"},
    {"good10.csv", NT_FORMAT_JSON, NT_TP_ERR_FORMAT, "malformed JSON"},
    {"good.json", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: "},
    {"fields7.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 2: 7 fields (expected 8, 9 or 10)"},
    {"fields11.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: more than 10 fields"},
    {"unknown_algo.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 3: unknown algorithm 'rign'"},
    {"unknown_proto.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: unknown protocol 'LL256'"},
    {"unknown_coll.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 2: unknown collective 'alltoall'"},
    {"bad_number.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: maxbytes '64k'"},
    {"huge_number.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: maxbytes"},
    {"bad_channels.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: channels '0'"},
    {"empty_field.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: maxbytes ''"},
    {"bad_regbuff.csv", NT_FORMAT_CSV, NT_TP_ERR_FORMAT, "line 1: regBuff '2'"},
    {"does-not-exist.json", NT_FORMAT_JSON, NT_TP_ERR_IO, "cannot open: No such file"},
    {".", NT_FORMAT_CSV, NT_TP_ERR_IO, "cannot read: Is a directory"},
};

static void test_bad_files(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    const struct bad_case *c = &bad_cases[i];
    nt_tuning_t t;
    char err[NT_ERR_LEN];
    nt_tp_status_t st = load(c->file, c->fmt, &t, err);
    if (st != c->st || !strstr(err, c->msg)) {
      print_error("%s: status %d (expected %d), message '%s' (expected to hold '%s')\n", c->file,
                  st, c->st, err, c->msg);
      fail();
    }
    /* A rejected file is rejected whole: nothing is left behind. */
    assert_int_equal(t.nrules, 0);
    assert_null(t.rules);
    assert_int_equal(t.constants_mask, 0);
  }
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  assert_int_equal(fclose(f), 0);
}

static void test_file_too_large(void **state) {
  (void)state;
  char path[] = "/tmp/nt-large-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  /* A comment-only CSV just above the limit: rejected for its size, not its content. */
  static char line[1001];
  memset(line, '#', 999);
  line[999] = '\n';
  for (size_t n = 0; n <= NT_MAX_FILE_BYTES; n += 1000) fputs(line, f);
  fclose(f);
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(nt_tuning_load(path, NT_FORMAT_CSV, &t, err, sizeof(err)), NT_TP_ERR_LIMIT);
  assert_non_null(strstr(err, "larger than the limit"));
  unlink(path);
}

static void test_too_many_rules(void **state) {
  (void)state;
  size_t n = NT_MAX_RULES + 1, len = 0;
  char *buf = malloc(n * 64);
  assert_non_null(buf);
  for (size_t i = 0; i < n; i++)
    len += (size_t)sprintf(buf + len, "allreduce,%zu,%zu,ring,simple,-1,-1,-1\n", i, i);
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(nt_tuning_parse_csv(buf, len, &t, err, sizeof(err)), NT_TP_ERR_LIMIT);
  assert_null(t.rules);
  /* One fewer is fine: cut the last line. */
  char *last = buf + len - 1;
  while (last > buf && last[-1] != '\n') last--;
  assert_int_equal(nt_tuning_parse_csv(buf, (size_t)(last - buf), &t, err, sizeof(err)),
                   NT_TP_OK);
  assert_int_equal(t.nrules, NT_MAX_RULES);
  nt_tuning_cleanup(&t);
  free(buf);
}

static void test_nul_in_csv(void **state) {
  (void)state;
  static const char csv[] = "allreduce,0,1,ring,simple,-1,-1,-1\nallre\0duce,0,1,ring,simple,-1,-1,-1\n";
  nt_tuning_t t;
  char err[NT_ERR_LEN];
  assert_int_equal(nt_tuning_parse_csv(csv, sizeof(csv) - 1, &t, err, sizeof(err)),
                   NT_TP_ERR_FORMAT);
  assert_non_null(strstr(err, "line 2: NUL byte"));
}

/* ------------------------------------------------------------------ index */

static nt_rule_t mk(int coll, uint64_t lo, uint64_t hi, int algo, int proto, int nch) {
  nt_rule_t r;
  memset(&r, 0, sizeof(r));
  r.coll = (int8_t)coll;
  r.min_bytes = lo;
  r.max_bytes = hi;
  r.algo = (int8_t)algo;
  r.proto = (int8_t)proto;
  r.nchannels = (int8_t)nch;
  r.reg_buff = -1;
  return r;
}

/* NCCL-like AllReduce table for 8 GPUs: -1 where NCCL will not run the pair. */
static void nccl_table(float t[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS]) {
  static const float v[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] = {
      {14.1f, 22.3f, 31.0f}, {12.2f, 18.4f, 25.6f}, {-1, -1, -1}, {-1, -1, -1},
      {-1, -1, 40.2f},       {-1, -1, -1},           {-1, -1, -1}};
  memcpy(t, v, sizeof(v));
}

static void test_index_first_match_overlap(void **state) {
  (void)state;
  nt_rule_t rules[] = {
      mk(ncclFuncAllReduce, 1000, 2000, NCCL_ALGO_NVLS, NCCL_PROTO_LL, 0),  /* -1: never */
      mk(ncclFuncAllReduce, 0, 5000, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 3), /* wide */
      mk(ncclFuncAllReduce, 1500, 1500, NCCL_ALGO_RING, NCCL_PROTO_LL, 0),  /* shadowed */
      mk(ncclFuncAllReduce, 4000, UINT64_MAX, NCCL_ALGO_RING, -1, 0),
  };
  nt_tuning_t t = {.nrules = 4, .rules = rules};
  nt_index_t ix;
  char err[NT_ERR_LEN];
  assert_int_equal(nt_index_build(&t, 8, 1, &ix, err, sizeof(err)), NT_TP_OK);
  float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  int nch = 0;
  nccl_table(tab);
  /* 1500: rule 0 matches but NVLS/LL is -1, rule 1 fires; rule 2 never gets a say. */
  assert_int_equal(nt_index_decide(&ix, ncclFuncAllReduce, 1500, 1, 0, &tab[0][0], 7, 3, &nch), 1);
  assert_true(tab[NCCL_ALGO_TREE][NCCL_PROTO_SIMPLE] == 0.0f);
  assert_true(tab[NCCL_ALGO_NVLS][NCCL_PROTO_LL] == -1.0f);
  assert_int_equal(nch, 3);
  assert_int_equal(ix.unavail[0], 1);
  assert_int_equal(ix.fired[1], 1);
  /* 4500: rule 1 (to 5000) still wins over rule 3. */
  nccl_table(tab);
  nch = 0;
  assert_int_equal(nt_index_decide(&ix, ncclFuncAllReduce, 4500, 1, 0, &tab[0][0], 7, 3, &nch), 1);
  /* 5001: rule 3, ring with its cheapest protocol (LL, 12.2). */
  nccl_table(tab);
  nch = 0;
  assert_int_equal(nt_index_decide(&ix, ncclFuncAllReduce, 5001, 1, 0, &tab[0][0], 7, 3, &nch), 3);
  assert_true(tab[NCCL_ALGO_RING][NCCL_PROTO_LL] == 0.0f);
  assert_true(tab[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] == 25.6f);
  assert_int_equal(nch, 0);
  /* The largest size there is. */
  nccl_table(tab);
  assert_int_equal(nt_index_decide(&ix, ncclFuncAllReduce, UINT64_MAX, 1, 0, &tab[0][0], 7, 3, &nch), 3);
  /* Another collective: no rules, nothing touched. */
  float before[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  nccl_table(tab);
  memcpy(before, tab, sizeof(tab));
  assert_int_equal(nt_index_decide(&ix, ncclFuncBroadcast, 1500, 1, 0, &tab[0][0], 7, 3, &nch), -1);
  assert_memory_equal(before, tab, sizeof(tab));
  nt_index_destroy(&ix);
}

static void test_index_keeps_matching_comm(void **state) {
  (void)state;
  nt_rule_t rules[3];
  rules[0] = mk(ncclFuncAllReduce, 0, 100, NCCL_ALGO_TREE, NCCL_PROTO_LL, 0);
  rules[0].nranks = 16;
  rules[1] = mk(ncclFuncAllReduce, 0, 100, NCCL_ALGO_RING, NCCL_PROTO_LL, 0);
  rules[1].nnodes = 2;
  rules[2] = mk(ncclFuncAllReduce, 0, 100, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0);
  nt_tuning_t t = {.nrules = 3, .rules = rules};
  nt_index_t ix;
  char err[NT_ERR_LEN];
  assert_int_equal(nt_index_build(&t, 16, 2, &ix, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(ix.nrules, 3);
  nt_index_destroy(&ix);
  assert_int_equal(nt_index_build(&t, 8, 2, &ix, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(ix.nrules, 2);
  assert_int_equal(ix.rules[0].src, rules[1].src);
  nt_index_destroy(&ix);
  assert_int_equal(nt_index_build(&t, 8, 1, &ix, err, sizeof(err)), NT_TP_OK);
  assert_int_equal(ix.nrules, 1);
  nt_index_destroy(&ix);
}

static void test_index_overlap_limit(void **state) {
  (void)state;
  /* Nested rules: interval count and list length both grow with n, so the pairs grow as n^2. */
  size_t n = 3000;
  nt_rule_t *rules = calloc(n, sizeof(*rules));
  for (size_t i = 0; i < n; i++) {
    rules[i] = mk(ncclFuncAllReduce, i, (1ull << 40) - i, NCCL_ALGO_RING, NCCL_PROTO_LL, 0);
    rules[i].src = (uint32_t)i;
  }
  nt_tuning_t t = {.nrules = n, .rules = rules};
  nt_index_t ix;
  char err[NT_ERR_LEN];
  assert_int_equal(nt_index_build(&t, 8, 1, &ix, err, sizeof(err)), NT_TP_ERR_LIMIT);
  assert_non_null(strstr(err, "overlap"));
  nt_index_destroy(&ix);
  t.nrules = 1000; /* ~1M pairs: fine */
  assert_int_equal(nt_index_build(&t, 8, 1, &ix, err, sizeof(err)), NT_TP_OK);
  nt_index_destroy(&ix);
  free(rules);
}

/* xorshift64*: a fixed seed keeps failures reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_size(void) {
  static const uint64_t edges[] = {0, 1, 1023, 1024, 4096, 65536, 65537, 1ull << 32,
                                   (1ull << 32) + 1, UINT64_MAX};
  if (rnd() % 4 == 0) return edges[rnd() % 10];
  return rnd() >> (rnd() % 64);
}

static void random_rule(nt_rule_t *r, uint32_t src) {
  uint64_t a = rnd_size(), b = rnd_size();
  *r = mk((int)(rnd() % 5), a < b ? a : b, a < b ? b : a, (int)(rnd() % 8) - 1,
          (int)(rnd() % 4) - 1, (int)(rnd() % 3) * 4);
  if (r->algo < 0 && r->proto < 0 && r->nchannels == 0) r->algo = NCCL_ALGO_RING;
  r->nranks = rnd() % 3 == 0 ? (uint32_t)(rnd() % 3 + 7) : 0;
  r->nnodes = rnd() % 3 == 0 ? (uint32_t)(rnd() % 2 + 1) : 0;
  r->pipe_ops = rnd() % 3 == 0 ? (uint32_t)(rnd() % 3 + 1) : 0;
  r->reg_buff = (int8_t)(rnd() % 3) - 1;
  r->src = src;
}

/* The index must decide exactly as a linear first-match scan over all rules. */
static void test_index_matches_linear_scan(void **state) {
  (void)state;
  for (int round = 0; round < 40; round++) {
    size_t n = 1 + rnd() % 300;
    nt_rule_t *rules = calloc(n, sizeof(*rules));
    for (size_t i = 0; i < n; i++) random_rule(&rules[i], (uint32_t)i);
    nt_tuning_t t = {.nrules = n, .rules = rules};
    size_t nranks = rnd() % 3 + 7, nnodes = rnd() % 2 + 1;
    nt_index_t ix;
    char err[NT_ERR_LEN];
    assert_int_equal(nt_index_build(&t, nranks, nnodes, &ix, err, sizeof(err)), NT_TP_OK);
    for (int q = 0; q < 2000; q++) {
      float t1[7][3], t2[7][3];
      for (int a = 0; a < 7; a++)
        for (int p = 0; p < 3; p++) t1[a][p] = rnd() % 3 == 0 ? -1.0f : (float)(rnd() % 100);
      memcpy(t2, t1, sizeof(t1));
      int coll = (int)(rnd() % 5), pipe = (int)(rnd() % 3 + 1), reg = (int)(rnd() % 3) - 1;
      int na = rnd() % 4 == 0 ? 6 : 7, np = rnd() % 4 == 0 ? 2 : 3;
      uint64_t bytes = rnd() % 2 ? rnd_size() : rules[rnd() % n].min_bytes;
      int c1 = 0, c2 = 0;
      /* The table keeps its [7][3] layout; na/np only bound what may be chosen, so flatten
       * into a [na][np] table as NCCL would pass it. */
      float f1[7 * 3], f2[7 * 3];
      for (int a = 0; a < na; a++)
        for (int p = 0; p < np; p++) f1[a * np + p] = f2[a * np + p] = t1[a][p];
      int i1 = nt_index_decide(&ix, coll, bytes, pipe, reg, f1, na, np, &c1);
      int i2 = nt_linear_decide(&t, nranks, nnodes, coll, bytes, pipe, reg, f2, na, np, &c2);
      int s1 = i1 < 0 ? -1 : (int)ix.rules[i1].src, s2 = i2 < 0 ? -1 : (int)rules[i2].src;
      if (s1 != s2) {
        print_error("round %d query %d: index chose rule %d, linear scan rule %d\n", round, q, s1,
                    s2);
        fail();
      }
      assert_memory_equal(f1, f2, sizeof(float) * (size_t)(na * np));
      assert_int_equal(c1, c2);
    }
    nt_index_destroy(&ix);
    free(rules);
  }
}

static void test_v2_valid(void **state) {
  (void)state;
  for (int c = 0; c < 4; c++) {
    assert_true(nt_v2_valid(c, NCCL_ALGO_RING, NCCL_PROTO_LL, 1, 1));
    assert_true(nt_v2_valid(c, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1, 1));
    assert_false(nt_v2_valid(c, NCCL_ALGO_RING, NCCL_PROTO_LL128, 1, 1));
    assert_false(nt_v2_valid(c, NCCL_ALGO_TREE, NCCL_PROTO_SIMPLE, 1, 1));
    assert_false(nt_v2_valid(c, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 1));
    assert_false(nt_v2_valid(c, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 1, 1));
  }
  int ar = ncclFuncAllReduce;
  assert_true(nt_v2_valid(ar, NCCL_ALGO_TREE, NCCL_PROTO_LL, 0, 0));
  assert_true(nt_v2_valid(ar, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 0, 0));
  assert_false(nt_v2_valid(ar, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 1, 1));
  assert_false(nt_v2_valid(ar, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 1, 0));
  assert_true(nt_v2_valid(ar, NCCL_ALGO_NVLS, NCCL_PROTO_SIMPLE, 0, 1));
  assert_false(nt_v2_valid(ar, NCCL_ALGO_NVLS, NCCL_PROTO_LL, 0, 1));
  assert_false(nt_v2_valid(ar, NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE, 1, 1));
  assert_false(nt_v2_valid(ar, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE, 0, 1));
  assert_true(nt_v2_valid(ar, NCCL_ALGO_COLLNET_DIRECT, NCCL_PROTO_SIMPLE, 1, 0));
  assert_true(nt_v2_valid(ar, NCCL_ALGO_COLLNET_CHAIN, NCCL_PROTO_SIMPLE, 1, 0));
  assert_false(nt_v2_valid(ar, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 1, 1));
  assert_false(nt_v2_valid(ncclFuncSendRecv, NCCL_ALGO_RING, NCCL_PROTO_SIMPLE, 1, 1));
}

static void test_report_expand(void **state) {
  (void)state;
  char out[64];
  assert_int_equal(nt_report_expand("/r/%h-%p-%c.json", "gpu01", 4242, "7", out, sizeof(out)), 0);
  assert_string_equal(out, "/r/gpu01-4242-7.json");
  assert_int_equal(nt_report_expand("100%%-%x%", "h", 1, "c", out, sizeof(out)), 0);
  assert_string_equal(out, "100%-%x%");
  assert_int_equal(nt_report_expand("%h%h%h", "0123456789abcdef0123", 1, "c", out, 32), -1);
  assert_int_equal(strlen(out), 31);
}

int main(int argc, char **argv) {
  if (argc > 1) data_dir = argv[1];
  if (argc > 2) examples_dir = argv[2];
  (void)write_file;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fnv1a64_vectors),
      cmocka_unit_test(test_good_json),
      cmocka_unit_test(test_basis_completed),
      cmocka_unit_test(test_csv_completed),
      cmocka_unit_test(test_constants_json),
      cmocka_unit_test(test_chunk_bytes),
      cmocka_unit_test(test_csv_10_fields),
      cmocka_unit_test(test_csv_8_fields_crlf),
      cmocka_unit_test(test_csv_9_fields),
      cmocka_unit_test(test_csv_empty),
      cmocka_unit_test(test_examples),
      cmocka_unit_test(test_bad_files),
      cmocka_unit_test(test_file_too_large),
      cmocka_unit_test(test_too_many_rules),
      cmocka_unit_test(test_nul_in_csv),
      cmocka_unit_test(test_index_first_match_overlap),
      cmocka_unit_test(test_index_keeps_matching_comm),
      cmocka_unit_test(test_index_overlap_limit),
      cmocka_unit_test(test_index_matches_linear_scan),
      cmocka_unit_test(test_v2_valid),
      cmocka_unit_test(test_report_expand),
  };
  return cmocka_run_group_tests_name("nccl-tuner parser and index", tests, NULL, NULL);
}
