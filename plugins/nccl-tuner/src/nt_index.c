/* Rule index and per-call decision (see nt_index.h). */
#include "nt_index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Resolve a rule's (algo, proto) against NCCL's cost table. @tbl is the contiguous
 * float[num_algo][num_proto] table NCCL passes as float ** (cast back here; indexing it as a
 * real float ** is the crash of nccl issue #1974). Returns 1 when the choice is offered, with
 * *a = -1 for a rule that only sets the channel count.
 */
static inline int resolve(int algo, int proto, float *tbl, int num_algo, int num_proto, int *a,
                          int *p) {
  if (algo < 0 && proto < 0) {
    *a = *p = -1;
    return 1;
  }
  if (!tbl || num_algo <= 0 || num_proto <= 0) return 0;
  float(*t)[num_proto] = (float(*)[num_proto])tbl;
  if (algo >= 0 && proto >= 0) {
    if (algo >= num_algo || proto >= num_proto || !(t[algo][proto] >= 0.0f)) return 0;
    *a = algo;
    *p = proto;
    return 1;
  }
  int best_a = -1, best_p = -1;
  if (algo >= 0) {
    if (algo >= num_algo) return 0;
    for (int q = 0; q < num_proto; q++)
      if (t[algo][q] >= 0.0f && (best_p < 0 || t[algo][q] < t[algo][best_p])) best_p = q;
    best_a = algo;
    if (best_p < 0) return 0;
  } else {
    if (proto >= num_proto) return 0;
    for (int b = 0; b < num_algo; b++)
      if (t[b][proto] >= 0.0f && (best_a < 0 || t[b][proto] < t[best_a][proto])) best_a = b;
    best_p = proto;
    if (best_a < 0) return 0;
  }
  *a = best_a;
  *p = best_p;
  return 1;
}

static inline int rule_matches_call(uint32_t r_pipe, int r_reg, int pipe_ops, int reg_buff) {
  return (r_pipe == 0 || (int64_t)r_pipe == (int64_t)pipe_ops) && (r_reg < 0 || r_reg == reg_buff);
}

/* The last interval whose start is <= x (start[0] == 0, so there is one). Branch-free: the
 * conditional move keeps random sizes from costing a mispredicted branch per step, which
 * otherwise dominates the call at a few hundred intervals. */
static inline size_t search(const uint64_t *start, size_t lo, size_t n, uint64_t x) {
  const uint64_t *base = start + lo;
  while (n > 1) {
    size_t half = n / 2;
    base = base[half] <= x ? base + half : base;
    n -= half;
  }
  return (size_t)(base - start);
}

static inline size_t find_interval(const nt_coll_index_t *ci, uint64_t x) {
  unsigned b = x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
  size_t lo = ci->bucket[b];
  return search(ci->start, lo, (size_t)ci->bucket[b + 1] - lo + 1, x);
}

int nt_index_decide(nt_index_t *ix, int coll, uint64_t nbytes, int pipe_ops, int reg_buff,
                    float *table, int num_algo, int num_proto, int *nchannels) {
  if (coll < 0 || coll >= NCCL_NUM_FUNCTIONS) return -1;
  const nt_coll_index_t *ci = &ix->coll[coll];
  if (ci->n == 0) return -1;
  size_t i = find_interval(ci, nbytes);
  for (uint32_t k = ci->off[i]; k < ci->off[i + 1]; k++) {
    uint32_t idx = ci->cand[k];
    const nt_krule_t *r = &ix->rules[idx];
    if (!rule_matches_call(r->pipe_ops, r->reg_buff, pipe_ops, reg_buff)) continue;
    int a, p;
    if (!resolve(r->algo, r->proto, table, num_algo, num_proto, &a, &p)) {
      nt_counter_bump(&ix->unavail[idx]);
      continue;
    }
    if (a >= 0) table[(size_t)a * (size_t)num_proto + (size_t)p] = 0.0f;
    if (r->nchannels > 0 && nchannels) *nchannels = r->nchannels;
    nt_counter_bump(&ix->fired[idx]);
    return (int)idx;
  }
  return -1;
}

int nt_v2_valid(int coll, int algo, int proto, int collnet_support, int nvls_support) {
  if (proto != NCCL_PROTO_LL && proto != NCCL_PROTO_SIMPLE) return 0;
  if (coll == ncclFuncBroadcast || coll == ncclFuncReduce || coll == ncclFuncAllGather ||
      coll == ncclFuncReduceScatter)
    return algo == NCCL_ALGO_RING;
  if (coll != ncclFuncAllReduce) return 0;
  switch (algo) {
  case NCCL_ALGO_RING:
  case NCCL_ALGO_TREE:
    return 1;
  case NCCL_ALGO_NVLS:
    return nvls_support && proto == NCCL_PROTO_SIMPLE;
  case NCCL_ALGO_COLLNET_DIRECT:
  case NCCL_ALGO_COLLNET_CHAIN:
    return collnet_support && proto == NCCL_PROTO_SIMPLE;
  default:
    return 0;
  }
}

int nt_index_decide_v2(nt_index_t *ix, int coll, uint64_t nbytes, int collnet_support,
                       int nvls_support, int pipe_ops, int *algorithm, int *protocol,
                       int *nchannels) {
  if (coll < 0 || coll >= NCCL_NUM_FUNCTIONS) return -1;
  const nt_coll_index_t *ci = &ix->coll[coll];
  if (ci->n == 0) return -1;
  size_t i = find_interval(ci, nbytes);
  for (uint32_t k = ci->off[i]; k < ci->off[i + 1]; k++) {
    uint32_t idx = ci->cand[k];
    const nt_krule_t *r = &ix->rules[idx];
    /* v2 has no regBuff: a rule that constrains it does not match. */
    if (!rule_matches_call(r->pipe_ops, r->reg_buff, pipe_ops, -1)) continue;
    if (r->algo < 0 || r->proto < 0 ||
        !nt_v2_valid(coll, r->algo, r->proto, collnet_support, nvls_support)) {
      nt_counter_bump(&ix->unavail[idx]);
      continue;
    }
    *algorithm = r->algo;
    *protocol = r->proto;
    if (r->nchannels > 0 && nchannels) *nchannels = r->nchannels;
    nt_counter_bump(&ix->fired[idx]);
    return (int)idx;
  }
  return -1;
}

int nt_linear_decide(const nt_tuning_t *t, size_t nranks, size_t nnodes, int coll, uint64_t nbytes,
                     int pipe_ops, int reg_buff, float *table, int num_algo, int num_proto,
                     int *nchannels) {
  for (size_t j = 0; j < t->nrules; j++) {
    const nt_rule_t *r = &t->rules[j];
    if (r->coll != coll || nbytes < r->min_bytes || nbytes > r->max_bytes) continue;
    if ((r->nranks && r->nranks != nranks) || (r->nnodes && r->nnodes != nnodes)) continue;
    if (!rule_matches_call(r->pipe_ops, r->reg_buff, pipe_ops, reg_buff)) continue;
    int a, p;
    if (!resolve(r->algo, r->proto, table, num_algo, num_proto, &a, &p)) continue;
    if (a >= 0) table[(size_t)a * (size_t)num_proto + (size_t)p] = 0.0f;
    if (r->nchannels > 0 && nchannels) *nchannels = r->nchannels;
    return (int)j;
  }
  return -1;
}

/* ---------------------------------------------------------------- build */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Index of @x in the sorted unique array @v (x is always present by construction). */
static size_t find_exact(const uint64_t *v, size_t n, uint64_t x) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void coll_range(const nt_coll_index_t *ci, const nt_rule_t *r, size_t *i0, size_t *i1) {
  *i0 = find_exact(ci->start, ci->n, r->min_bytes);
  *i1 = r->max_bytes == UINT64_MAX ? ci->n - 1 : find_exact(ci->start, ci->n, r->max_bytes + 1) - 1;
}

static nt_tp_status_t build_coll(nt_index_t *ix, const nt_tuning_t *t, const uint32_t *kept_src,
                                 int coll, size_t *total, char *err, size_t errlen) {
  nt_coll_index_t *ci = &ix->coll[coll];
  size_t k = 0;
  for (uint32_t j = 0; j < ix->nrules; j++)
    k += ix->rules[j].coll == coll;
  if (k == 0) return NT_TP_OK;
  uint64_t *pts = malloc((1 + 2 * k) * sizeof(*pts));
  if (!pts) goto nomem;
  size_t np = 0;
  pts[np++] = 0;
  for (uint32_t j = 0; j < ix->nrules; j++) {
    if (ix->rules[j].coll != coll) continue;
    const nt_rule_t *r = &t->rules[kept_src[j]];
    pts[np++] = r->min_bytes;
    if (r->max_bytes != UINT64_MAX) pts[np++] = r->max_bytes + 1;
  }
  qsort(pts, np, sizeof(*pts), cmp_u64);
  size_t m = 0;
  for (size_t i = 0; i < np; i++)
    if (m == 0 || pts[i] != pts[m - 1]) pts[m++] = pts[i];
  ci->start = pts;
  ci->n = m;
  ci->off = calloc(m + 1, sizeof(*ci->off));
  int64_t *diff = calloc(m + 1, sizeof(*diff));
  if (!ci->off || !diff) {
    free(diff);
    goto nomem;
  }
  for (uint32_t j = 0; j < ix->nrules; j++) {
    if (ix->rules[j].coll != coll) continue;
    size_t i0, i1;
    coll_range(ci, &t->rules[kept_src[j]], &i0, &i1);
    diff[i0]++;
    diff[i1 + 1]--;
  }
  size_t sum = 0;
  int64_t run = 0;
  for (size_t i = 0; i < m; i++) {
    run += diff[i];
    ci->off[i] = (uint32_t)sum;
    sum += (size_t)run;
    if (*total + sum > NT_MAX_CANDIDATES) {
      free(diff);
      snprintf(err, errlen,
               "%s rules overlap into more than %u (interval, rule) pairs; merge overlapping "
               "rules",
               nt_coll_name(coll), NT_MAX_CANDIDATES);
      return NT_TP_ERR_LIMIT;
    }
  }
  ci->off[m] = (uint32_t)sum;
  ci->bucket[0] = 0;
  for (unsigned b = 1; b <= 64; b++)
    ci->bucket[b] = (uint32_t)search(pts, 0, m, 1ull << (b - 1));
  ci->bucket[65] = (uint32_t)(m - 1);
  *total += sum;
  ci->cand = malloc((sum ? sum : 1) * sizeof(*ci->cand));
  if (!ci->cand) {
    free(diff);
    goto nomem;
  }
  /* diff becomes the fill cursor; rules go in file order, so each list stays in file order. */
  for (size_t i = 0; i < m; i++)
    diff[i] = ci->off[i];
  for (uint32_t j = 0; j < ix->nrules; j++) {
    if (ix->rules[j].coll != coll) continue;
    size_t i0, i1;
    coll_range(ci, &t->rules[kept_src[j]], &i0, &i1);
    for (size_t i = i0; i <= i1; i++)
      ci->cand[diff[i]++] = j;
  }
  free(diff);
  return NT_TP_OK;
nomem:
  snprintf(err, errlen, "out of memory building the %s index", nt_coll_name(coll));
  return NT_TP_ERR_NOMEM;
}

nt_tp_status_t nt_index_build(const nt_tuning_t *t, size_t nranks, size_t nnodes, nt_index_t *ix,
                              char *err, size_t errlen) {
  memset(ix, 0, sizeof(*ix));
  uint32_t nkept = 0;
  for (size_t j = 0; j < t->nrules; j++) {
    const nt_rule_t *r = &t->rules[j];
    nkept += (!r->nranks || r->nranks == nranks) && (!r->nnodes || r->nnodes == nnodes);
  }
  if (nkept == 0) return NT_TP_OK;
  uint32_t *kept_src = malloc(nkept * sizeof(*kept_src));
  ix->rules = calloc(nkept, sizeof(*ix->rules));
  ix->fired = calloc(nkept, sizeof(*ix->fired));
  ix->unavail = calloc(nkept, sizeof(*ix->unavail));
  if (!kept_src || !ix->rules || !ix->fired || !ix->unavail) {
    free(kept_src);
    snprintf(err, errlen, "out of memory for %u rules", nkept);
    return NT_TP_ERR_NOMEM;
  }
  for (size_t j = 0; j < t->nrules; j++) {
    const nt_rule_t *r = &t->rules[j];
    if (!((!r->nranks || r->nranks == nranks) && (!r->nnodes || r->nnodes == nnodes))) continue;
    nt_krule_t *k = &ix->rules[ix->nrules];
    k->pipe_ops = r->pipe_ops;
    k->src = r->src;
    k->reg_buff = r->reg_buff;
    k->algo = r->algo;
    k->proto = r->proto;
    k->nchannels = r->nchannels;
    k->coll = r->coll;
    /* a chunk size is applied only where it was measured: the model does not predict one */
    k->chunk_bytes = r->basis == NT_BASIS_MEASURED ? r->chunk_bytes : 0;
    kept_src[ix->nrules++] = (uint32_t)j;
  }
  size_t total = 0;
  nt_tp_status_t st = NT_TP_OK;
  for (int c = 0; c < NCCL_NUM_FUNCTIONS && st == NT_TP_OK; c++)
    st = build_coll(ix, t, kept_src, c, &total, err, errlen);
  free(kept_src);
  return st;
}

void nt_index_destroy(nt_index_t *ix) {
  if (!ix) return;
  for (int c = 0; c < NCCL_NUM_FUNCTIONS; c++) {
    free(ix->coll[c].start);
    free(ix->coll[c].off);
    free(ix->coll[c].cand);
  }
  free(ix->rules);
  free(ix->fired);
  free(ix->unavail);
  memset(ix, 0, sizeof(*ix));
}
