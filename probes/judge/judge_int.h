/* The judge's inside (probes/judge/README.md): the state the files of probes/judge/ share, and
 * the functions one file gives another. Nothing outside probes/judge/ includes it; judge.h is
 * the judge's face. */
#ifndef NETTUNE_JUDGE_INT_H
#define NETTUNE_JUDGE_INT_H

#include <stdint.h>
#include <stdio.h>

#include "judge.h"
#include "nettune/checks.h"
#include "nettune/ibtopo.h"
#include "nettune/report.h"
#include "nettune/thresholds.h"
#include "nettune/verdict.h"

typedef struct nt_silent {
    char host[256];
    char why[256];
} nt_silent_t;

/* A set of link ids: appended to, then sealed (sorted, repeats dropped) and searched. */
typedef struct nt_idset {
    char **id;
    int n;
} nt_idset_t;

struct nt_judge {
    nt_thresholds_t *thresholds;
    nt_expect_t expect_override; /* --expect */
    unsigned require;            /* --require */
    int strict;
    cJSON *base_sw;      /* --baseline: its nodes' software objects (an array; NULL: no baseline) */
    cJSON *base_env;     /* and their environment objects, null where it recorded none */
    nt_silent_t *silent; /* nodes that stopped answering (nt_judge_node_silent) */
    int nsilent;
    nt_idset_t ctl;    /* ids of the control links of the last retest (nt_judge_retest_pairs) */
    nt_idset_t target; /* ids of the links that the last retest is for */
    nt_ibtopo_t *fabric_topo; /* --fabric-topology: the switches' view (NULL: none) */
};

typedef struct nt_strmap {
    const char **keys; /* NULL: empty slot; the strings belong to the caller's documents */
    size_t *vals;
    size_t mask;
} nt_strmap_t;

typedef struct nt_u64map {
    uint64_t *keys;
    size_t *vals; /* SIZE_MAX: empty slot */
    size_t mask;
} nt_u64map_t;

/* Links of a document by id, each id's links in document order (first[], next[]: indices
 * into item[], SIZE_MAX ends a chain). The ids are copied (ids[]): a link held as text is
 * parsed only while it is read. */
typedef struct nt_link_ix {
    cJSON **item;
    size_t *next;
    size_t n;
    char *ids;
    nt_strmap_t first;
} nt_link_ix_t;

typedef struct nt_fig {
    cJSON *link; /* the links[] item (its text, when the report holds links as text) */
    size_t li;   /* its index in links[] */
    int metric;
    size_t bytes;
} nt_fig_t;

/* Strings that outlive the link they come from (a link held as text is parsed and freed
 * again): kinds and scopes, a handful per report, interned. */
typedef struct nt_strs {
    char **s;
    int n;
} nt_strs_t;

typedef struct nt_figs {
    nt_vlink_t *v;
    nt_fig_t *f;
    size_t n, cap;
    char **hosts;        /* node index -> host */
    const char **models; /* node index -> GPU model (NULL: none), for thresholds classes */
    cJSON **node_objs;   /* node index -> nodes[] entry */
    nt_strmap_t hostix;  /* host -> its first node index */
    nt_strs_t strs;      /* the figures' kinds and scopes */
    int min_population;  /* the peer rule's minimum population of this run */
    int nnodes;
} nt_figs_t;

/* One failed node: its first reason (the one DRAIN lines and the Slurm drain print) and cause,
 * and how many more reasons it has. */
typedef struct nt_nodefail {
    nt_verdict_t verdict; /* the node verdict */
    char reason[320];     /* "" until it fails */
    const char *cause;
    const char *code; /* its check table code (include/nettune/checks.def) */
    int more;
} nt_nodefail_t;

/* What the node verdicts need of a link once it is judged. */
typedef struct nt_link_note {
    nt_verdict_t v;
    nt_verdict_t own; /* v without the figures failed by node blame (NT_FIRED_BLAME): what the
                       * link says of its ends apart from a blamed node's fault */
    int src, dst;     /* node indices, -1: none */
} nt_link_note_t;

/* The endpoints ("host/device") of the failed links no node was blamed for, and of the warned. */
typedef struct {
    char **key;
    size_t n, cap, nlinks;
} nt_endpoints_t;

/* One nt_judge_finish: what its phases (judge.c) read and write. Every pointer starts NULL and
 * is freed by nt_finish_cleanup alone. */
typedef struct nt_finish {
    nt_judge_t *j;
    cJSON *doc, *links, *checks, *nodes;
    const nt_probe_params_t *params;
    int stopped_early;
    nt_figs_t fs;             /* the figures and their verdicts */
    nt_node_verdict_t *nv;    /* per node of fs: the engine's node verdicts */
    nt_link_note_t *lv;       /* per link: verdict and node indices */
    unsigned char *judged;    /* per node of fs: 1 when a link or check of it was judged */
    size_t nlinks, *gl, ngl;  /* the GPU links' indices */
    int frozen;               /* 1: some links are held as text */
    nt_nodefail_t *nf;        /* per node, then per silent host without a nodes[] entry */
    int nnodes;
    int unstable[2];          /* flaky links, links retested */
    int cnt[NT_NVERDICTS];    /* the summary's counts */
    int usage;                /* 1: out of memory, exit 2 */
    nt_verdict_t overall;
    cJSON *summary, *failed_nodes, *failed_links, *warnings, *not_judged;
} nt_finish_t;

/* index.c */
void nt_idset_free(nt_idset_t *s);
int nt_idset_add(nt_idset_t *s, const char *id);
int nt_cmp_strp(const void *a, const void *b);
void nt_idset_seal(nt_idset_t *s);
int nt_idset_has(const nt_idset_t *s, const char *id);
nt_status_t nt_strmap_init(nt_strmap_t *m, size_t n);
void nt_strmap_free(nt_strmap_t *m);
size_t nt_strmap_get(const nt_strmap_t *m, const char *key);
void nt_strmap_add(nt_strmap_t *m, const char *key, size_t val);
nt_status_t nt_u64map_init(nt_u64map_t *m, size_t n);
void nt_u64map_free(nt_u64map_t *m);
size_t *nt_u64map_slot(nt_u64map_t *m, uint64_t key);
uint64_t nt_rank_pair_key(int a, int b);
void nt_link_ix_free(nt_link_ix_t *ix);
nt_status_t nt_link_ix_build(nt_link_ix_t *ix, cJSON *links);
size_t nt_link_ix_find(const nt_link_ix_t *ix, const char *id);

/* links.c */
const char *nt_strs_intern(nt_strs_t *t, const char *str);
void nt_strs_free(nt_strs_t *t);
int nt_node_index(const nt_figs_t *fs, const char *host);
void nt_figs_free(nt_figs_t *fs);
nt_status_t nt_figs_build(const nt_judge_t *j, cJSON *doc, nt_figs_t *fs);
nt_status_t nt_figs_judge(const nt_judge_t *j, nt_figs_t *fs, const cJSON *doc,
                                 nt_node_verdict_t *nv, int unstable[2]);
void nt_endpoints_add(nt_endpoints_t *e, const cJSON *link);
void nt_endpoints_warn(nt_endpoints_t *e, cJSON *warnings);

/* judge.c */
void nt_add_str_unique(cJSON *arr, const char *s);
cJSON *nt_arr(cJSON *obj, const char *key);
void nt_set_str(cJSON *obj, const char *key, const char *val);
nt_verdict_t nt_get_verdict(const cJSON *obj);

/* nodes.c */
const char *nt_node_gpu_model(const cJSON *node);
void nt_rules_for(const nt_judge_t *j, const char *host, const cJSON *node,
                         nt_node_rules_t *r);
const char *nt_fig_unit(const char *unit);
void nt_node_nic_firmware(cJSON *node);

/* gpu.c */
void nt_judge_gpu_pass(cJSON *doc, cJSON *links, cJSON *checks, int frozen, const size_t *gl,
                              size_t ngl, nt_link_note_t *lv);
void nt_judge_nvlinks_unjudged(const nt_judge_t *j, const cJSON *nodes, cJSON *checks);

/* links.c: the phases on links */
nt_status_t nt_finish_links_fold(nt_finish_t *f);
void nt_finish_links_summary(nt_finish_t *f);
/* nodes.c: the phases on nodes (the node policy) */
void nt_finish_software(nt_finish_t *f);
nt_status_t nt_finish_nodes(nt_finish_t *f);
/* codes.c */
void nt_finish_check_codes(cJSON *checks);
const char *nt_link_code(const char *kind, int metric, int flaky);
const char *nt_link_error_code(const char *kind);
/* fabric_doc.c: the report's fabric section judged, its checks in the summary */
nt_status_t nt_finish_fabric(nt_finish_t *f);


#endif
