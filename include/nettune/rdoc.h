/* The one reader of nettune.report/1 (the probe report) for every command: nettune report's
 * renderers, diff and exporter, nettune doctor's --report and nettune tune (lib/core/rdoc.c). The
 * document is read once with cJSON and indexed: nodes sorted by hostname, links and checks with
 * their fields looked up once and each tied to its node, each node's GPUs and RDMA ports counted.
 * The schema is reports/schema/report.schema.json (docs/report.md). */
#ifndef NETTUNE_RDOC_H
#define NETTUNE_RDOC_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/report.h"
#include "nettune/status.h"

#define NT_TUNING_SCHEMA "nettune.tuning/1"
#define NT_DIAGNOSIS_SCHEMA "nettune.diagnosis/1"
/* Largest input read: a --full report at 1,000 nodes with every sample stays well below. */
#define NT_RDOC_MAX_BYTES ((size_t)1 << 30)

typedef enum nt_doc_kind {
    NT_DOC_REPORT = 0, /* nettune.report/1 */
    NT_DOC_TUNING = 1  /* nettune.tuning/1 */
} nt_doc_kind_t;

/* Severity ranks for sorting: fail first, then warn, pass, skipped. */
int nt_verdict_rank(nt_verdict_t v);

typedef struct nt_rlink {
    const cJSON *j;
    const char *id, *kind, *scope;
    char variant[32]; /* "write" of "rdma.write:...", "" when the id has none */
    const char *src_host, *src_dev, *dst_host, *dst_dev;
    int src_rank, dst_rank;  /* -1 when absent */
    int src_node, dst_node;  /* index in nt_rdoc_t.nodes, -1 when the host is absent */
    int src_gpu, dst_gpu;    /* i of "gpu<i>" (also "<nic>:<port>/gpu<i>"), else -1 */
    double peak_bw_GBps;     /* NaN when absent or null */
    double small_msg_lat_us; /* NaN when absent or null */
    double expected_bw_GBps; /* NaN when absent or null */
    nt_verdict_t verdict;
    int unconfirmed;      /* "unconfirmed": true: a warning the retest did not settle */
    const cJSON *reasons; /* array of strings, or NULL */
} nt_rlink_t;

typedef struct nt_rcheck {
    const cJSON *j;
    const char *name, *host, *target, *message, *unit; /* host/unit may be NULL */
    nt_verdict_t verdict;
    int node; /* index in nodes, -1 when there is no host */
} nt_rcheck_t;

/* One RDMA port of a node (nodes[].nics[]). Strings point into the document, "" when absent. */
typedef struct nt_rnic {
    const char *name, *state, *link_layer;
    int port;         /* -1 when absent */
    double rate_Gbps; /* NaN when absent */
} nt_rnic_t;

typedef struct nt_rnode {
    const cJSON *j; /* the nodes[] entry, NULL for a host only named elsewhere */
    int index;      /* position in nodes[], -1 for a host only named elsewhere */
    const char *host;
    int ngpus;               /* gpus[] length, or 1 + the largest gpu<i> in its links */
    int nnics, nics_active;  /* RDMA ports listed / ACTIVE */
    const char *gpu_model;   /* gpus[0].name, or NULL */
    const char *cpu_model;   /* cpus.model, or NULL */
    nt_rnic_t *nics;         /* nnics entries, file order */
    nt_verdict_t verdict;    /* nodes[].verdict, see nt_rdoc_open */
    const char *fail_reason; /* summary.failed_nodes[].reason, or NULL */
    double inter_median_bw;  /* median peak_bw_GBps of its inter-node links (either end) */
    double inter_min_bw;     /* the worst of them */
    size_t n_inter;          /* how many of them have a bandwidth */
    size_t links_fail, links_warn, checks_fail, checks_warn;
} nt_rnode_t;

typedef struct nt_rdoc {
    cJSON *root;
    nt_doc_kind_t kind;
    const char *path;
    const char *schema;
    nt_rnode_t *nodes; /* sorted by hostname */
    size_t nnodes;
    nt_rlink_t *links; /* in file order */
    size_t nlinks;
    nt_rcheck_t *checks; /* in file order */
    size_t nchecks;
    nt_verdict_t verdict;   /* summary.verdict, or the worst link/check/node */
    size_t counts[NT_NVERDICTS];       /* by nt_verdict_t: summary.counts, or counted */
    int completed;          /* run.completed (1 when absent) */
    const char *inter_kind; /* the inter-node kind of the heatmap: rdma if any, else mpi */
} nt_rdoc_t;

/* nt_rdoc_open - read and index the document at path. NT_ERR_NOT_FOUND/NT_ERR_IO when it
 * cannot be read, NT_ERR_PARSE when it is not JSON, NT_ERR_INVALID when it is JSON but not a
 * nettune.report/1 or nettune.tuning/1 document (the reason is logged). Tolerates missing or
 * mistyped members (validation is separate): absent numbers are NaN, absent strings "".
 * A node's verdict is the judge's nodes[].verdict, read as it is (never derived again); a node
 * without one (a host only named by links or failed_nodes, or a report of an older version) is
 * fail when summary.failed_nodes names it, else skipped. */
nt_status_t nt_rdoc_open(const char *path, nt_rdoc_t *doc);
/* nt_rdoc_open_why - nt_rdoc_open with the reason written to why ("'<path>': <reason>", at most
 * whylen bytes) instead of logged, for a caller that prints one line of its own. */
nt_status_t nt_rdoc_open_why(const char *path, nt_rdoc_t *doc, char *why, size_t whylen);
/* nt_rdoc_from_json - index an already parsed root (the document takes ownership of it, also
 * on error). Same rules as nt_rdoc_open. */
nt_status_t nt_rdoc_from_json(cJSON *root, const char *path, nt_rdoc_t *doc);
/* nt_rdoc_from_json_why - nt_rdoc_from_json with the reason written to why instead of logged. */
nt_status_t nt_rdoc_from_json_why(cJSON *root, const char *path, nt_rdoc_t *doc, char *why,
                                  size_t whylen);
/* nt_rdoc_close - free everything; accepts a zeroed or partly built document. */
void nt_rdoc_close(nt_rdoc_t *doc);
/* nt_rdoc_find_node - index of host in doc->nodes (binary search), -1 when absent. */
int nt_rdoc_find_node(const nt_rdoc_t *doc, const char *host);
/* nt_rdoc_sorted_links - a new array of link indices with the failed links first, then the
 * warned ones, each group by efficiency (peak / expected, or peak alone) ascending, then by id.
 * only_bad: keep fail and warn only. *n gets the length; NULL on allocation failure. */
size_t *nt_rdoc_sorted_links(const nt_rdoc_t *doc, int only_bad, size_t *n);
/* nt_rdoc_sorted_checks - check indices, fail then warn then the rest, then by host and name. */
size_t *nt_rdoc_sorted_checks(const nt_rdoc_t *doc, int only_bad, size_t *n);
/* nt_rdoc_sorted_nodes - node indices, worst first: verdict, then median inter-node bandwidth
 * ascending (nodes without one last), then hostname. */
size_t *nt_rdoc_sorted_nodes(const nt_rdoc_t *doc, size_t *n);
/* nt_median - the median of v[0..n) (sorts v in place); NaN when n is 0. */
double nt_median(double *v, size_t n);
/* nt_link_efficiency - peak / expected bandwidth, NaN when either is missing. */
double nt_link_efficiency(const nt_rlink_t *l);

/* Figures of one link kind (kind[.variant] and scope), for the per-kind tables and bars. */
typedef struct nt_kind_stats {
    char label[48]; /* "rdma.write" */
    const char *kind, *scope;
    size_t n, by_verdict[NT_NVERDICTS];
    size_t n_bw, n_exp, n_lat;
    double bw_min, bw_med, bw_max; /* peak_bw_GBps over the links that have one */
    double exp_med;                /* median expected_bw_GBps */
    double eff_med, eff_min;       /* median and worst peak/expected */
    double lat_med;                /* median small_msg_lat_us */
} nt_kind_stats_t;

/* nt_rdoc_kind_stats - one entry per kind, variant and scope present, inter before intra and
 * then by label. *out is malloc'ed (free it); NT_ERR_NOMEM. */
nt_status_t nt_rdoc_kind_stats(const nt_rdoc_t *doc, nt_kind_stats_t **out, size_t *n);

/* A probe skipped for one reason on some nodes. */
typedef struct nt_skip_group {
    const char *probe, *reason;
    size_t nnodes;
    const char *first_host;
} nt_skip_group_t;

/* nt_rdoc_skip_groups - nodes[].skipped grouped by probe and reason, most nodes first.
 * *out is malloc'ed; NT_ERR_NOMEM. */
nt_status_t nt_rdoc_skip_groups(const nt_rdoc_t *doc, nt_skip_group_t **out, size_t *n);

#endif
