/*
 * The tuning file: nettune.tuning/1 JSON and NCCL's example-tuner CSV, parsed into one list of
 * rules (plugins/nccl-tuner/README.md "The tuning file"). Pure functions: no logging, no
 * global state; errors come back as one message naming the rule (JSON: rules[i]) or the line
 * (CSV), which the caller logs once.
 */
#ifndef NT_TUNING_H
#define NT_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_tuner_abi.h"

struct cJSON;

/* Limits: a file or rule count above these is rejected whole (a generated file for one
 * cluster holds hundreds of rules; these leave two orders of magnitude). */
#define NT_MAX_FILE_BYTES (16u << 20)
#define NT_MAX_RULES 65536
#define NT_MAX_CSV_LINE 1024
#define NT_MAX_NCHANNELS 64
/* Largest byte bound a JSON file may give: doubles hold integers exactly up to 2^53. */
#define NT_MAX_JSON_BYTES 9007199254740992.0

#define NT_ERR_LEN 320

typedef enum {
  NT_TP_OK = 0,
  NT_TP_ERR_IO,     /* the file could not be opened or read (errno kept in the message) */
  NT_TP_ERR_FORMAT, /* malformed, unknown schema, or a bad rule */
  NT_TP_ERR_LIMIT,  /* above NT_MAX_FILE_BYTES, NT_MAX_RULES or the index limit */
  NT_TP_ERR_NOMEM
} nt_tp_status_t;

typedef enum { NT_FORMAT_JSON = 0, NT_FORMAT_CSV = 1 } nt_format_t;

/* One rule as written. "Any" is: nnodes/nranks/pipe_ops 0, reg_buff/algo/proto -1,
 * nchannels 0 (= NCCL's count). Bounds are inclusive bytes. */
typedef struct {
  uint64_t min_bytes;
  uint64_t max_bytes;
  uint32_t nnodes;
  uint32_t nranks;
  uint32_t pipe_ops;
  uint32_t src;         /* JSON: index in "rules" (0-based); CSV: line number (1-based) */
  int8_t coll;          /* ncclFunc_t, 0..4 */
  int8_t reg_buff;      /* -1, 0, 1 */
  int8_t algo;          /* NCCL_ALGO_*, or -1 */
  int8_t proto;         /* NCCL_PROTO_*, or -1 */
  int8_t nchannels;     /* 1..64, or 0 */
  int8_t basis;         /* NT_BASIS_*, or -1 when the rule does not say */
  uint32_t chunk_bytes; /* NCCL 2.30+ chunk size (tuner API v6), 0 = NCCL's; needs algo and
                           proto, a multiple of the protocol's grain (nt_proto_grain_bytes) */
} nt_rule_t;

/* What a rule rests on ("basis"): the model's prediction, a measurement, or a rule inferred
 * from measurements (a larger size finishing sooner than a smaller one). Informational for the
 * plugin; nettune tune writes it, nettune report shows it. */
enum { NT_BASIS_PREDICTED = 0, NT_BASIS_MEASURED = 1, NT_BASIS_INFERRED = 2, NT_NUM_BASIS = 3 };

/* The rule keys of nettune.tuning/1: this list is the one definition of the rule format. The
 * plugin parses with it, nettune tune writes with it and nettune report validates and renders
 * with it (they compile this file). */
enum {
  NT_RK_COLL = 0,
  NT_RK_MIN_BYTES,
  NT_RK_MAX_BYTES,
  NT_RK_NNODES,
  NT_RK_NRANKS,
  NT_RK_PIPE_OPS,
  NT_RK_REG_BUFF,
  NT_RK_ALGO,
  NT_RK_PROTO,
  NT_RK_NCHANNELS,
  NT_RK_CHUNK_BYTES,
  NT_RK_BASIS,
  NT_RK_PREDICTED_US,
  NT_RK_MEASURED_US,
  NT_RK_COUNT
};
extern const char *const nt_rule_keys[NT_RK_COUNT];

/* Bits of nt_tuning_t.constants_mask: which tables of "constants" the file gives. */
enum {
  NT_CONST_BASE_LAT = 1 << 0,
  NT_CONST_HW_LAT = 1 << 1,
  NT_CONST_LL_MAX_BW = 1 << 2,
  NT_CONST_RING_LL128_BW = 1 << 3,
  NT_CONST_TREE_LL128_BW = 1 << 4,
  NT_CONST_TREE_BW = 1 << 5,
  NT_CONST_NVLS_TREE_BW = 1 << 6
};

typedef struct {
  nt_format_t format;
  int completed; /* top-level "completed": 0 when the tuner stopped early (partial file) */
  uint64_t hash; /* FNV-1a 64 of the file's bytes */
  size_t nrules;
  nt_rule_t *rules; /* file order */
  unsigned constants_mask;
  ncclTunerConstants_v5_t constants; /* only the tables named in constants_mask are valid */
} nt_tuning_t;

/**
 * nt_fnv1a64 - FNV-1a 64-bit hash of a byte string.
 * Offset basis 0xcbf29ce484222325, prime 0x100000001b3 (Fowler/Noll/Vo, IETF draft
 * draft-eastlake-fnv). Used as the logged consistency fingerprint of a tuning file, not for
 * security. Never fails.
 */
uint64_t nt_fnv1a64(const void *data, size_t len);

/**
 * nt_tuning_parse_json - parse a nettune.tuning/1 document held in @buf (@len bytes, need not
 * be NUL-terminated) into @out (zeroed first; free with nt_tuning_cleanup, also on error).
 * Rules are strict: unknown keys, wrong types, non-integers, numbers out of range and unknown
 * collective/algorithm/protocol names are errors. "constants" tables must have NCCL's exact
 * shape with finite, non-negative values. Unknown top-level keys are ignored.
 * Returns NT_TP_OK, NT_TP_ERR_FORMAT, NT_TP_ERR_LIMIT or NT_TP_ERR_NOMEM; on error @err (of
 * @errlen bytes) holds one lowercase message such as "rules[3]: unknown algo 'rign'".
 * Does not set @out->hash.
 */
nt_tp_status_t nt_tuning_parse_json(const char *buf, size_t len, nt_tuning_t *out, char *err,
                                    size_t errlen);

/**
 * nt_tuning_parse_csv - parse NCCL's example-tuner CSV (ext-tuner/example/nccl_tuner.conf):
 * colltype,minbytes,maxbytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
 * with '#' comment lines and blank lines; -1 means "any" (channels -1: NCCL's count;
 * minbytes/maxbytes -1: 0 / the largest size; algorithm/protocol -1: not set). Unlike NCCL's
 * example, unknown names and bad numbers are errors naming the line ("line 7: ...").
 * Same contract as nt_tuning_parse_json otherwise.
 */
nt_tp_status_t nt_tuning_parse_csv(const char *buf, size_t len, nt_tuning_t *out, char *err,
                                   size_t errlen);

/**
 * nt_tuning_load - read the file at @path (at most NT_MAX_FILE_BYTES, read with stdio only so
 * that no glibc symbol newer than 2.28 is needed), hash it and parse it as @format into @out.
 * Returns NT_TP_ERR_IO when the file cannot be opened or read (message with strerror),
 * NT_TP_ERR_LIMIT when it is too large, otherwise as the parsers. Free with nt_tuning_cleanup.
 */
nt_tp_status_t nt_tuning_load(const char *path, nt_format_t format, nt_tuning_t *out, char *err,
                              size_t errlen);

/** nt_tuning_cleanup - free what a parser or nt_tuning_load allocated; safe on a zeroed or
 * partly filled @t, and twice. */
void nt_tuning_cleanup(nt_tuning_t *t);

/** nt_tuning_rule_key - index (NT_RK_*) of a rule key, or -1 when the format has no such key. */
int nt_tuning_rule_key(const char *key);

/** nt_tuning_rule_init - @r as a rule that says nothing yet ("any" everywhere), from @src. */
void nt_tuning_rule_init(nt_rule_t *r, uint32_t src);

/**
 * nt_tuning_rule_value - check the value @c of rule key @k (NT_RK_*) and store it in @r, as the
 * plugin reads it (null means "any" for every key but coll). Returns 0, or 1 with one message
 * (without the "rules[i]: " prefix) in @err.
 */
int nt_tuning_rule_value(int k, const struct cJSON *c, nt_rule_t *r, char *err, size_t errlen);

/** nt_tuning_rule_finish - the whole-rule checks after every key: coll given, min_bytes not
 * above max_bytes, at least one of algo, proto, nchannels set, and a chunk_bytes with both algo
 * and proto and a positive multiple of the protocol's grain (NCCL rounds a chunk size down to
 * it, a smaller one to 0: v2.30.7-1 src/enqueue.cc:2321). 0, or 1 with a message. */
int nt_tuning_rule_finish(const nt_rule_t *r, char *err, size_t errlen);

/** nt_tuning_const_table - index of the "constants" table @key, its number of dimensions and
 * shape (NCCL 2.28 ncclTunerConstants_v5_t); -1 when there is no such table. */
int nt_tuning_const_table(const char *key, int *ndims, int shape[3]);

/** nt_proto_grain_bytes - the chunk grain of protocol @proto in bytes (LL 16, LL128 1920,
 * Simple 512; v2.30.7-1 src/include/device.h:328-334), 0 out of range. */
unsigned nt_proto_grain_bytes(int proto);

/** nt_basis_name - "predicted", "measured", "inferred"; "?" out of range. */
const char *nt_basis_name(int basis);

/** nt_coll_name / nt_algo_name / nt_proto_name - the lowercase names used in the tuning file
 * for NCCL's indices; "?" for an index out of range. */
const char *nt_coll_name(int coll);
const char *nt_algo_name(int algo);
const char *nt_proto_name(int proto);

#endif /* NT_TUNING_H */
