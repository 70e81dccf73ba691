/* nettune doctor: reads NCCL debug logs and nccl-tests outputs, diagnoses them from a knowledge
 * base kept as data (reports/doctor/knowledge.json), and writes text and nettune.diagnosis/1.
 *
 * Internal to reports/doctor: nothing here is part of libnettune's API. The pieces are
 *   lib/linereader.c, lib/logline.c (include/nettune/logline.h): the bounded-memory line
 *              reader and the launcher/NCCL line prefixes, shared with nettune tune
 *   kb.c       the knowledge base (embedded at build time, or --kb FILE)
 *   the pipeline: readers (read_log.c, read_operator.c) record facts (facts.c), the rules
 *              (rules.c, rules_operator.c) turn them into findings, the output writes them
 *   output.c   human text and the JSON document
 */
#ifndef NT_DOCTOR_H
#define NT_DOCTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "nettune/checks.h"
#include "nettune/logline.h"

#define NT_DOCTOR_SCHEMA "nettune.diagnosis/1"
#define NT_DOCTOR_KB_SCHEMA "nettune.doctor-kb/1"

/* Evidence lines kept per finding; the total count is kept too. */
#define NT_EVIDENCE_MAX 6

typedef enum { NT_SEV_INFO = 0, NT_SEV_WARN = 1, NT_SEV_ERROR = 2 } nt_severity_t;

/* ---- fmtmatch.c ------------------------------------------------------------------------- */

/* One conversion's text in a matched line. */
typedef struct {
    const char *s;
    size_t len;
} nt_fmt_cap_t;

/* Matches the whole of `s` (trailing blanks ignored) against printf format `fmt` (only its first
 * line when it holds a line break): literal text must be equal, %d/%u/%ld.. take an integer,
 * %x/%lx hex digits, %f/%g a number, %p a pointer, %c one character, %s any text. Returns the
 * number of conversions with their text in caps[0..maxcaps-1], or -1 when `s` does not match
 * (also when the match would take more than 200,000 steps). */
int nt_fmt_match(const char *fmt, const char *s, nt_fmt_cap_t *caps, int maxcaps);

/* The longest literal run of `fmt`'s first line (for a quick strstr test): its length, and its
 * start in *anchor. */
size_t nt_fmt_anchor(const char *fmt, const char **anchor);

/* ---- kb.c -------------------------------------------------------------------------------- */

/* A finding's text as the knowledge base gives it. */
typedef struct {
    char *key;
    nt_severity_t severity;
    char *title, *why, *fix, *reference;
    const nt_check_row_t *check; /* its row of the check table (code, category): required */
    char *confirm; /* what would confirm it (a second line, an operator file), or NULL */
} nt_kb_finding_t;

/* A line signature: any of `match` (substrings, case-sensitive) marks the line as `id`. */
typedef struct {
    char *id;
    char **match;
    size_t nmatch;
    int counts_as_nccl; /* the line proves the input is an NCCL log (not lspci, dmesg, ...) */
    int qualifier; /* a catalogue entry's "also"/"unless" lines: they explain nothing alone */
    char ***and; /* per match: more substrings the same line must hold ("a&&b" in the data), a
                    NULL-terminated list or NULL; NULL when no match has any */
} nt_kb_signature_t;

/* Expected intra-node busbw for one GPU model (8 GPUs on an NVSwitch baseboard). */
typedef struct {
    char *match; /* substring of the GPU name nccl-tests prints */
    int gpus_per_node;
    double busbw_GBps;
    char *note;
} nt_kb_gpu_t;

/* Meaning of one ibv_wc_status value (NET/IB "Got completion ... error N"). */
typedef struct {
    int status;
    char *name, *meaning, *finding;
} nt_kb_wc_t;

/* One NCCL message the knowledge base knows by its format string (NVIDIA/nccl source, extracted
 * by reports/doctor/tools/nccl-formats.py into docs/nccl-2.28.9-formats.tsv). A line printed from
 * the format feeds either an existing signature (its causal logic) or a finding directly. */
typedef struct {
    char *id;
    nt_level_t level;        /* NT_LVL_INFO or NT_LVL_WARN */
    char *format;            /* NCCL's printf format, verbatim */
    char *at, *first, *last; /* NCCL file:line at the last tag; first and last tag it appears in */
    int sig;                 /* index of the signature it feeds, or -1 */
    const nt_kb_finding_t *finding; /* the finding it reports (NULL when it feeds a signature) */
    int when_index; /* only when conversion when_index (0-based) equals when_equals; -1 always */
    char *when_equals;
    char **values; /* names of the conversions kept as values (NULL entry: not kept) */
    int nvalues;
    char **path_values; /* names of values that are NCCL path types (decoded per version) */
    int npath_values;
    const char *anchor; /* longest literal run of the format (points into format) */
    size_t prefix_len;  /* literal characters the format starts with (before a '%') */
    size_t anchor_len;
} nt_kb_message_t;

/* NCCL's path type names (topoPathTypeStr) for the releases first..last: the number a log
 * prints (GDR distance, NCCL_NET_GDR_LEVEL) means names[number] there. */
typedef struct {
    char *first, *last, *at;
    char **names;
    int nnames;
} nt_kb_pathtypes_t;

/* A cause of the catalogue ($.catalogue): its finding and the signatures that show it. */
typedef struct {
    const nt_kb_finding_t *finding;
    int sig;         /* signature of its "lines" (any of them) */
    int also;        /* signature of its "also" lines (one of them must be in the input too), -2 none */
    int unless;      /* signature of its "unless" lines (none may be there), -2 none */
    int launcher;    /* its "launcher": a row of the launcher-label table (nt_line_prefix_at)
                        that some line of the input must carry, -1 any */
    char **explains; /* keys of the findings it explains (listed under it) */
    int nexplains;
    long first, last; /* NCCL versions (NCCL_VERSION_CODE) it applies to; -1 any */
    int by_rule;      /* a rule of rules.c reports it (a number on the lines decides); its lines
                         only say where it shows */
} nt_kb_cause_t;

/* The signatures' match strings indexed by 4 of their bytes (at the offset whose 4 bytes are not
 * in every NCCL line, "NCCL INFO", and share a bucket with the fewest others), so that a line is
 * scanned once
 * for all of them (a hashed multi-pattern search: one lookup per position, a compare only where a
 * pattern may start) instead of one strstr per pattern. Built by nt_kb_load. */
#define NT_KB_HASH_BITS 12
typedef struct {
    uint32_t sig, match; /* signature index, match index */
    uint32_t len;        /* strlen of the match string (its first part for "a&&b") */
    uint32_t off;        /* the offset of the 4 bytes it is indexed by */
} nt_kb_pat_t;

typedef struct {
    uint64_t bits[(1u << NT_KB_HASH_BITS) / 64]; /* buckets that hold a pattern */
    uint64_t pairs[65536 / 64]; /* the first 2 of the 4 indexed bytes of every pattern: a quick
                                   test before the hash */
    uint32_t start[(1u << NT_KB_HASH_BITS) + 1]; /* bucket b's patterns: pats[start[b]..start[b+1]) */
    nt_kb_pat_t *pats;
    nt_kb_pat_t *shorts; /* patterns of fewer than 4 bytes, searched with strstr */
    size_t nshorts;
} nt_kb_index_t;

/* The bucket of the 4 bytes at p (NT_KB_HASH_BITS bits). */
static inline uint32_t nt_kb_hash4(const unsigned char *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return (v * 2654435761u) >> (32 - NT_KB_HASH_BITS);
}

typedef struct {
    char *source; /* "embedded" or the path read */
    char *version;
    nt_kb_finding_t *findings;
    size_t nfindings;
    nt_kb_signature_t *sigs;
    size_t nsigs;
    nt_kb_gpu_t *gpus;
    size_t ngpus;
    nt_kb_wc_t *wcs;
    size_t nwcs;
    nt_kb_message_t *msgs;
    size_t nmsgs;
    nt_kb_pathtypes_t *paths;
    size_t npaths;
    nt_kb_cause_t *causes;
    size_t ncauses;
    nt_kb_index_t *index;
} nt_kb_t;

/* nt_kb_version_code - an NCCL version as the knowledge base writes it ("v2.28.9-1", a tag) or
 * as a log prints it ("2.28.9") -> NCCL_VERSION_CODE (22809) by nt_nccllog_version_parse (the
 * one parser, lib/nccllog.c); -1 for NULL or anything that is not a version. */
long nt_kb_version_code(const char *v);

/* The path type name that `value` has in NCCL `version` ("2.28.9"), or NULL when the version is
 * unknown (NULL) or not covered, or the value is out of range. Versions between two releases
 * the table lists take the older release's names. */
const char *nt_kb_path_type(const nt_kb_t *kb, const char *version, long value);

/* Loads the knowledge base: from `path` if not NULL (through the one JSON file reader,
 * nt_json_read_file_why; a file it cannot read or parse gives "--kb '<path>': <why>: ..." in
 * `err`), else the copy embedded at build time. Checks the schema id and that every entry has its fields. Returns
 * 0, or -1 with a message (lowercase, naming the file and the JSON path of the problem) in
 * `err`. */
int nt_kb_load(const char *path, nt_kb_t **out, char *err, size_t errlen);

/* Checks a parsed knowledge base (what nt_kb_load checks: schema id, every entry's fields, the
 * signatures and findings messages name) without keeping it: 0, or -1 with the message
 * (naming `name` and the JSON path) in `err`. nettune report --validate uses it. */
int nt_kb_check_json(const cJSON *root, const char *name, char *err, size_t errlen);

/* Frees a knowledge base; NULL is fine. */
void nt_kb_destroy(nt_kb_t *kb);

/* The finding entry for `key`, or NULL. */
const nt_kb_finding_t *nt_kb_finding(const nt_kb_t *kb, const char *key);

/* Index of signature `id`, or -1. */
int nt_kb_signature_index(const nt_kb_t *kb, const char *id);

/* Parses "error"/"warn"/"info"; returns -1 for anything else. */
int nt_severity_parse(const char *s);

/* "error", "warn" or "info". */
const char *nt_severity_string(nt_severity_t s);

/* ---- facts.c, read_log.c, rules.c--------------------------------------------------------------------- */

/* What the operator says the hardware is (--expect, --report); -1 / NULL = unknown. */
typedef struct {
    int gpus_per_node;
    int nics_per_node;
    double nic_rate_Gbps;
    char *gpu_model;
    char *collective;  /* nccl-tests collective when the log does not name it (all_reduce, sendrecv,
                          ...) */
    double efficiency; /* busbw below efficiency x expected: warn (default 0.90) */
    double error_efficiency; /* below error_efficiency x expected: error (default 0.50) */
    double min_busbw_GBps;   /* explicit floor, overrides the computed expectation; -1 = none */
    char *source;            /* "expect", "report", or NULL */
} nt_hw_t;

/* Sets every field of `hw` to "unknown" and the ratios to their defaults. */
void nt_hw_init(nt_hw_t *hw);

/* Frees the strings of `hw` (not `hw` itself). */
void nt_hw_cleanup(nt_hw_t *hw);

/* Applies "--expect K=V,..." (the one --expect grammar: lib/core/thresholds.c nt_expect_parse,
 * NT_EXPECT_FOR_DOCTOR keys: gpus, nics, nic_rate_Gbps, gpu_model, collective, efficiency,
 * error_efficiency, min_busbw_GBps) to `hw`; the doctor's --expect and nettune tune's. Returns
 * 0, or -1 with one line naming the key in `err`. */
int nt_hw_apply_expect(nt_hw_t *hw, const char *arg, char *err, size_t errlen);

typedef struct nt_doctor nt_doctor_t;

/* Creates an empty analysis that uses `kb` (borrowed, must outlive the analysis). */
nt_doctor_t *nt_doctor_create(const nt_kb_t *kb);

/* Frees everything; NULL is fine. */
void nt_doctor_destroy(nt_doctor_t *d);

/* Reads one input completely (streaming), recording facts. Returns 0 if the input held NCCL or
 * nccl-tests lines; 1 if it is unusable (unreadable, binary, empty, no NCCL lines), with a
 * one-line message naming it in `msg`. Unusable inputs are listed in the output too. */
int nt_doctor_read_file(nt_doctor_t *d, const char *path, char *msg, size_t msglen);

/* The host the next input read belongs to (--host H), or NULL (then: the host prefixes, a
 * shell prompt or the journal's host field in the file, or unknown). `host` is borrowed until the
 * next call. */
void nt_doctor_set_host(nt_doctor_t *d, const char *host);

/* Same, from an open stream named `name` (the fuzz target reads memory through fmemopen). */
int nt_doctor_read_stream(nt_doctor_t *d, const char *name, FILE *fp, char *msg, size_t msglen);

/* Loads a nettune.report/1 file (nettune probe --output) at `path` for the cross-check of the
 * log's network against the probe's ACTIVE RDMA ports, and as a hardware source: GPUs per node
 * (the most of any node), ACTIVE ports per node (the fewest), their slowest rate in Gb/s and the
 * GPU model. The hardware is kept apart and applied by nt_doctor_diagnose to the fields --expect
 * left unknown, only when the log names no host or one of its hosts is a node of the report
 * (a report of other machines says nothing of the log's); otherwise busbw is not judged from it
 * and report_hosts_differ says why. Returns 0, or -1 with one line in `err` naming the file and
 * the fix (unreadable, not JSON, not a nettune.report/1). */
int nt_doctor_load_report(nt_doctor_t *d, const char *path, char *err, size_t errlen);

/* Runs the diagnosis on everything read, with the hardware in `hw` (may be NULL). */
void nt_doctor_diagnose(nt_doctor_t *d, const nt_hw_t *hw);

/* Name of the first finding key the diagnosis can report that `kb` lacks, or NULL if none is
 * missing; a knowledge base given with --kb must describe every finding. */
const char *nt_doctor_kb_missing(const nt_kb_t *kb);

/* How many "not judged" reasons of kind `what` ("busbw") the diagnosis has: a run whose figures
 * could not be judged (the hardware unknown). */
size_t nt_doctor_not_judged(const nt_doctor_t *d, const char *what);

/* Compares the diagnosis of input `input` read alone (`single`, diagnosed) with the joint one `d`
 * (diagnosed): every finding of the single file that the joint diagnosis lacks is listed in the
 * document's "per_file" with the joint findings that cite the file's lines ("superseded_by"),
 * so that reading files together never hides what one of them shows. */
void nt_doctor_compare_single(nt_doctor_t *d, unsigned input, const nt_doctor_t *single);

/* Highest severity among the findings, or -1 if there are none. */
int nt_doctor_worst(const nt_doctor_t *d);

/* ---- output.c ---------------------------------------------------------------------------- */

/* Writes the human summary to `out` (no colour unless `colour`). */
void nt_doctor_write_text(const nt_doctor_t *d, FILE *out, int colour);

/* Builds the nettune.diagnosis/1 document; NULL when out of memory. Caller cJSON_Deletes it. */
cJSON *nt_doctor_to_json(const nt_doctor_t *d, int exit_code);

#endif
