/* Internal state shared by analyze.c, diagnose.c and output.c. Everything here is bounded: each
 * list has a cap, past which only counts grow, so memory does not depend on the log's size. */
#ifndef NT_DOCTOR_ANALYZE_INT_H
#define NT_DOCTOR_ANALYZE_INT_H

#include "doctor.h"
#include "nettune/nccltests.h"

#define NT_MAX_INPUTS 100000
#define NT_MAX_SET 65536     /* hosts, processes, env names, versions ... */
#define NT_MAX_RANK 1048576  /* highest rank number tracked per rank */
#define NT_MAX_TABLES 256
#define NT_TOP_ROWS 3        /* "largest sizes": the plateau is judged on the 3 largest */
#define NT_MAX_LINKS 8

typedef struct {
  unsigned input;     /* index into d->inputs */
  unsigned long line; /* 1-based */
  char *text;         /* the line, cut to NT_EVIDENCE_TEXT bytes */
} nt_ev_t;

#define NT_EVIDENCE_TEXT 300

typedef struct {
  nt_ev_t ev[NT_EVIDENCE_MAX];
  size_t n;
  unsigned long total;
} nt_evlist_t;

/* A string-keyed hash map to a small integer payload; insertion order kept in `order`. */
typedef struct {
  char **keys;     /* by insertion order */
  long *vals;      /* by insertion order, free for the user */
  size_t n, kcap;
  size_t *slots;   /* hash slots: insertion index + 1, 0 = empty */
  size_t cap;      /* number of slots, a power of two */
  unsigned long dropped; /* inserts refused at NT_MAX_SET */
} nt_map_t;

typedef struct {
  char *path;
  const char *status; /* "ok", "unreadable", "binary", "empty", "no_nccl_lines", "read_error" */
  char *message;
  unsigned long lines, nccl_lines, truncated;
  uint64_t bytes, nul_bytes; /* nul_bytes: NUL padding skipped by the reader */
} nt_input_t;

typedef struct {
  char *id;             /* "host:pid" or "task N" */
  char *host;           /* may be NULL */
  char *tuner;          /* external tuner plugin name, or NULL */
  int tuner_internal;   /* printed "TUNER/Plugin: Could not find" / internal tuner */
  int init_seen;        /* printed communicator init lines */
  int ranks[4];
  int nranks;
  nt_ev_t first_tuner;  /* evidence of its tuner line, text NULL if none */
  nt_ev_t first_init;
} nt_proc_t;

typedef struct {
  unsigned long long bytes;
  double busbw_oop, busbw_ip;
  double algbw_oop;        /* busbw / algbw is the factor nccl-tests applied: it names the collective */
  unsigned long long count;
  int typesize;            /* bytes per element of the type column, 0 unknown */
  int redop;               /* 1 a reduction (sum, prod, ...), 0 none or empty, -1 no redop column seen */
  long root;               /* the root column, -1 when absent or -1 */
  unsigned input;
  unsigned long line;
  char *text;
} nt_row_t;

typedef struct {
  size_t sweep;          /* the table in the nccl-tests reader (every row): nt_ncclt_reader_table */
  unsigned input;
  unsigned long header_line;
  char *coll;            /* "all_reduce", ... or NULL */
  const char *coll_source; /* "log" (command line, "# Collective test starting"), "expect", "table" (inferred) or NULL */
  char *coll_note;       /* how the collective was inferred, or the candidates when the table fits several */
  int nranks, nhosts, gpus_per_host; /* from the "Using devices" block, -1 unknown */
  char *gpu_model;
  char *algo;            /* NCCL_ALGO seen before the table, or NULL */
  nt_row_t top[NT_TOP_ROWS]; /* largest sizes, descending */
  size_t ntop;
  unsigned long rows;
  double avg_busbw;      /* "# Avg bus bandwidth", -1 if absent: shown, never judged */
  int complete;
  /* filled by the diagnosis */
  double plateau, expected, ratio, network_GBps;
  const char *verdict;   /* "pass", "warn", "fail", "not_judged" */
  char *basis;           /* how `expected` was computed, or why there is no verdict */
} nt_table_t;

/* A finding as reported. */
typedef struct {
  const nt_kb_finding_t *kb;
  nt_severity_t severity;
  nt_evlist_t ev;
  nt_map_t hosts;
  int ranks[32];
  size_t nranks;
  unsigned long ranks_total;
  char *detail;
  char *fix; /* kb fix with placeholders filled; NULL = kb->fix */
  const char *caused_by[NT_MAX_LINKS];
  size_t ncaused_by;
  const char *causes[NT_MAX_LINKS];
  size_t ncauses;
  const char *related[NT_MAX_LINKS];
  size_t nrelated;
  cJSON *values; /* object of numbers, or NULL */
} nt_finding_t;

typedef struct {
  nt_evlist_t ev;
  nt_map_t hosts;
  unsigned long count;
} nt_sighit_t;

typedef struct {
  char *name, *value;
  int from_cmdline;
  int mismatch;
  char *other;
  nt_ev_t first, first_other;
} nt_env_t;

struct nt_doctor {
  const nt_kb_t *kb;
  nt_input_t *inputs;
  size_t ninputs, cap_inputs;
  unsigned cur;        /* input being read */
  unsigned long seq;   /* global line counter */

  nt_sighit_t *sig;    /* one per kb signature */
  int sig_acs, sig_iommu, sig_failure, sig_wc;
  unsigned long wc_count[32];
  nt_ev_t wc_first[32];
  unsigned long wc_vendor[32];

  nt_map_t hosts;
  nt_map_t procmap;
  nt_proc_t *procs;
  size_t nprocs, cap_procs;

  int *rank_host;      /* rank -> index into hosts.order position + 1, 0 unknown */
  size_t cap_rank_host;

  nt_map_t versions;
  nt_ev_t version_ev[4];
  nt_map_t networks;
  nt_evlist_t socket_ev;
  nt_evlist_t netib_ev;
  int nics_min, nics_max;
  char *nic_names;
  nt_map_t transports;

  nt_env_t *env;
  size_t nenv, cap_env;

  int nranks, nnodes, local_ranks;
  nt_ev_t comm_ev;

  /* network connections and GPUDirect RDMA per local rank: bit 0 with GDR, bit 1 without */
  unsigned char *gdr;
  size_t cap_gdr;
  nt_evlist_t gdr_yes_ev, gdr_no_ev, gdr0_ev, shared_ev;
  unsigned long net_conns;

  /* P2P hang: the last P2P connection and the last sign of progress after it */
  unsigned long last_p2p_seq, last_progress_seq;
  nt_ev_t last_p2p;
  int tests_started;

  nt_evlist_t warn_unexplained;

  /* nccl-tests: lib/nccltests.c reads the tables; the doctor keeps its judgement per table */
  nt_ncclt_reader_t *ncclt;
  nt_table_t *tables;
  size_t ntables;
  unsigned long tables_dropped;
  nt_table_t *open_table; /* table receiving rows, or NULL */
  /* run context (reset by each "# nThread" header) */
  char *run_algo;
  nt_map_t run_hosts;
  int run_ranks;
  unsigned run_input;

  /* --report */
  char *report_path;
  int report_active_ports;
  nt_evlist_t report_ev;
  nt_map_t report_hosts;

  /* results */
  nt_finding_t *findings;
  size_t nfindings, cap_findings;
  nt_hw_t hw; /* hardware used for the verdicts (merged) */
  int diagnosed;
};

/* Makes `m` an empty map (no allocation until the first put). */
void nt_map_init(nt_map_t *m);
/* Frees the keys and tables of `m` and leaves it empty; an empty map is fine. */
void nt_map_cleanup(nt_map_t *m);
/* Returns the insertion index of `key` (adding it with value 0 if new), or -1 when the map is
 * full (NT_MAX_SET) or out of memory. */
long nt_map_put(nt_map_t *m, const char *key, size_t len);
/* Insertion index of `key`, or -1. */
long nt_map_find(const nt_map_t *m, const char *key, size_t len);

/* Sets `e` to (input, line) and a copy of `text` cut to NT_EVIDENCE_TEXT bytes, freeing the old
 * text; input (unsigned)-1 means the --report file (line 0). On out of memory e->text is NULL. */
void nt_ev_set(nt_ev_t *e, unsigned input, unsigned long line, const char *text);
/* Frees the text of `e`. */
void nt_ev_free(nt_ev_t *e);
/* Adds an evidence line to `l` unless the same (input, line) is there; past NT_EVIDENCE_MAX
 * lines only `total` grows. */
void nt_evlist_add(nt_evlist_t *l, unsigned input, unsigned long line, const char *text);
/* Same, from an evidence entry (ignored when it holds no text). */
void nt_evlist_add_ev(nt_evlist_t *l, const nt_ev_t *e);
/* Frees the texts of `l`. */
void nt_evlist_free(nt_evlist_t *l);

/* The finding `key` of this diagnosis, created with the knowledge base's text and default
 * severity if it is not there yet; NULL if the knowledge base has no such key or out of memory. */
nt_finding_t *nt_finding_add(nt_doctor_t *d, const char *key);

#endif
