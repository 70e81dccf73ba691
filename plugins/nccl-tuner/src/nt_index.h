/*
 * The per-communicator rule index and the per-call decision.
 *
 * At init the rules that can match this communicator (its nRanks and nNodes) are kept, and for
 * each collective the size axis is cut into disjoint intervals at every rule bound. Each
 * interval stores the kept rules that cover it, in file order. A call is then a table lookup by
 * log2(nBytes), a branch-free binary search among the intervals of that power of two, and a
 * walk of that interval's short list (first match wins, as in NCCL's example), so
 * its cost does not grow with the number of rules in other intervals. No allocation, lock,
 * I/O or logging happens per call.
 */
#ifndef NT_INDEX_H
#define NT_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_tuner_abi.h"
#include "nt_tuning.h"

/* Most (interval, rule) pairs one communicator may hold: only heavily nested overlapping rules
 * come near it; init fails with NT_TP_ERR_LIMIT past it. */
#define NT_MAX_CANDIDATES (1u << 22)

/**
 * nt_counter_bump - add one to a per-context counter. A relaxed load and store instead of an
 * atomic add: NCCL drives one communicator from one thread at a time, so this is exact there,
 * costs a plain increment (no locked instruction), and stays free of undefined behaviour if a
 * caller breaks that rule (increments may then be lost, never torn).
 */
static inline void nt_counter_bump(uint64_t *c) {
  __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* A kept rule, packed for the per-call walk. */
typedef struct {
  uint32_t pipe_ops; /* 0 = any */
  uint32_t src;      /* rules[src] / line src of the file */
  int8_t reg_buff;   /* -1 = any */
  int8_t algo;       /* -1 = not set */
  int8_t proto;      /* -1 = not set */
  int8_t nchannels;  /* 0 = NCCL's count */
  int8_t coll;
  uint32_t chunk_bytes; /* the rule's chunk size where its basis is measured, else 0 */
} nt_krule_t;

typedef struct {
  size_t n;        /* intervals; interval i is [start[i], start[i+1]-1], the last ends at 2^64-1 */
  uint64_t *start; /* ascending, start[0] == 0 when n > 0 */
  uint32_t *off;   /* n + 1 offsets into cand */
  uint32_t *cand;  /* kept-rule indices, file order within an interval */
  /* bucket[b]: the interval holding 2^(b-1) (b >= 1; bucket[0] holds 0), bucket[65] = n - 1.
   * A size in [2^(b-1), 2^b) lies in intervals bucket[b] .. bucket[b+1], so the binary search
   * only spans the intervals of one power of two. */
  uint32_t bucket[66];
} nt_coll_index_t;

typedef struct {
  nt_coll_index_t coll[NCCL_NUM_FUNCTIONS];
  nt_krule_t *rules; /* kept rules, file order */
  uint32_t nrules;
  uint64_t *fired;   /* per kept rule: calls where it made the choice */
  uint64_t *unavail; /* per kept rule: calls where it matched but its choice was not offered */
} nt_index_t;

/**
 * nt_index_build - keep the rules of @t that can match a communicator of @nranks ranks on
 * @nnodes nodes and build the per-collective interval index into @ix (zeroed first).
 * Returns NT_TP_OK, NT_TP_ERR_NOMEM, or NT_TP_ERR_LIMIT when the rules overlap into more than
 * NT_MAX_CANDIDATES (interval, rule) pairs; @err then holds a message. Free with
 * nt_index_destroy (also after an error).
 */
nt_tp_status_t nt_index_build(const nt_tuning_t *t, size_t nranks, size_t nnodes, nt_index_t *ix,
                              char *err, size_t errlen);

/** nt_index_destroy - free an index built (or partly built) by nt_index_build; safe twice. */
void nt_index_destroy(nt_index_t *ix);

/**
 * nt_index_decide - the tuner API v3..v5 decision for one call.
 * @table is NCCL's contiguous float[numAlgo][numProto] cost table (microseconds, -1.0 =
 * NCCL will not run it). Walks the rules matching (@coll, @nbytes, @pipe_ops, @reg_buff;
 * @reg_buff -1 = unknown, as in API v3, matches only rules that do not constrain it) in file
 * order; the first whose choice is offered (entry >= 0, index below numAlgo/numProto) sets that
 * entry to 0.0 and, if it has one, *@nchannels, and its fired counter grows. A matching rule
 * whose choice is not offered counts as unavailable and the walk goes on. An algo without proto
 * takes that algorithm's cheapest offered protocol, a proto without algo the cheapest offered
 * algorithm with it (ties: lowest index). Returns the kept-rule index that fired, or -1 when
 * none did (table and *nchannels untouched then). Counters are updated with relaxed atomic
 * loads/stores: exact when NCCL calls one communicator from one thread at a time.
 */
int nt_index_decide(nt_index_t *ix, int coll, uint64_t nbytes, int pipe_ops, int reg_buff,
                    float *table, int num_algo, int num_proto, int *nchannels);

/**
 * nt_index_decide_v2 - the tuner API v2 decision (NCCL 2.21 uses the answer as given, with no
 * cost table). Only an explicit algo and proto pair that NCCL can run for @coll everywhere is
 * answered: Broadcast, Reduce, AllGather, ReduceScatter: RING; AllReduce: RING or TREE, NVLS
 * (SIMPLE) when @nvls_support, COLLNET_DIRECT/COLLNET_CHAIN (SIMPLE) when @collnet_support;
 * protocol LL or SIMPLE, never LL128. Any other matching rule counts as unavailable and the walk
 * goes on. Returns the kept-rule index that fired, or -1 (outputs untouched).
 */
int nt_index_decide_v2(nt_index_t *ix, int coll, uint64_t nbytes, int collnet_support,
                       int nvls_support, int pipe_ops, int *algorithm, int *protocol,
                       int *nchannels);

/**
 * nt_v2_valid - whether API v2 may answer (@algo, @proto) for @coll, as nt_index_decide_v2
 * describes. Exposed for the tests.
 */
int nt_v2_valid(int coll, int algo, int proto, int collnet_support, int nvls_support);

/**
 * nt_linear_decide - reference implementation: the same decision as nt_index_decide by a linear
 * scan over all of @t's rules (what NCCL's example does), checking nranks/nnodes per call.
 * Used by the tests (differential check against the index) and the benchmark; counts nothing.
 * Returns the index into @t->rules that fired, or -1.
 */
int nt_linear_decide(const nt_tuning_t *t, size_t nranks, size_t nnodes, int coll, uint64_t nbytes,
                     int pipe_ops, int reg_buff, float *table, int num_algo, int num_proto,
                     int *nchannels);

#endif /* NT_INDEX_H */
