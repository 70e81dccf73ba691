/*
 * libFuzzer target for both tuning-file parsers. Every input is parsed as JSON and as CSV; a
 * file that parses is indexed and the index must decide exactly as the linear scan at every
 * rule bound (abort otherwise). Built by `make fuzz` / the test suite's smoke run with
 * -fsanitize=fuzzer,address,undefined.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nt_index.h"
#include "nt_tuning.h"

static const float base[7][3] = {{14.1f, 22.3f, 31.0f}, {12.2f, 18.4f, 25.6f}, {-1, -1, -1},
                                 {-1, -1, -1},          {-1, -1, 40.2f},       {-1, -1, -1},
                                 {3.0f, -1, 9.0f}};

static void check(const nt_tuning_t *t, const nt_index_t *ix_const, size_t nranks, size_t nnodes,
                  int coll, uint64_t bytes, int pipe, int reg) {
  nt_index_t *ix = (nt_index_t *)ix_const;
  float a[7][3], b[7][3];
  memcpy(a, base, sizeof(a));
  memcpy(b, base, sizeof(b));
  int ca = 0, cb = 0;
  int i = nt_index_decide(ix, coll, bytes, pipe, reg, &a[0][0], 7, 3, &ca);
  int j = nt_linear_decide(t, nranks, nnodes, coll, bytes, pipe, reg, &b[0][0], 7, 3, &cb);
  int si = i < 0 ? -1 : (int)ix->rules[i].src, sj = j < 0 ? -1 : (int)t->rules[j].src;
  if (si != sj || ca != cb || memcmp(a, b, sizeof(a)) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int fmt = 0; fmt < 2; fmt++) {
    nt_tuning_t t;
    char err[NT_ERR_LEN];
    nt_tp_status_t st = fmt == 0 ? nt_tuning_parse_json((const char *)data, size, &t, err, sizeof(err))
                                 : nt_tuning_parse_csv((const char *)data, size, &t, err, sizeof(err));
    if (st != NT_TP_OK) {
      if (t.rules != NULL || t.nrules != 0 || err[0] == '\0') abort(); /* rejected whole, with a reason */
      continue;
    }
    size_t nranks = 8, nnodes = 1;
    if (t.nrules > 0 && t.rules[0].nranks) nranks = t.rules[0].nranks;
    if (t.nrules > 0 && t.rules[0].nnodes) nnodes = t.rules[0].nnodes;
    nt_index_t ix;
    if (nt_index_build(&t, nranks, nnodes, &ix, err, sizeof(err)) == NT_TP_OK) {
      size_t n = t.nrules < 64 ? t.nrules : 64;
      for (size_t k = 0; k < n; k++) {
        const nt_rule_t *r = &t.rules[k];
        int pipe = r->pipe_ops ? (int)r->pipe_ops : 1;
        for (int reg = -1; reg <= 1; reg++) {
          check(&t, &ix, nranks, nnodes, r->coll, r->min_bytes, pipe, reg);
          check(&t, &ix, nranks, nnodes, r->coll, r->max_bytes, pipe, reg);
          check(&t, &ix, nranks, nnodes, r->coll, r->min_bytes - 1, pipe, reg);
          check(&t, &ix, nranks, nnodes, r->coll, r->max_bytes + 1, pipe + 1, reg);
        }
      }
    }
    nt_index_destroy(&ix);
    nt_tuning_cleanup(&t);
  }
  return 0;
}
