/* Slurm drain and resume from nettune probe's final report (--drain, --resume-passing). */
#ifndef NETTUNE_DRAIN_H
#define NETTUNE_DRAIN_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "nettune/status.h"

/* --drain: off, run scontrol, or print the scontrol lines (--drain=dry-run). */
typedef enum nt_drain_mode { NT_DRAIN_OFF = 0, NT_DRAIN_APPLY, NT_DRAIN_DRY_RUN } nt_drain_mode_t;

#define NT_DRAIN_NAME_MAX 128
#define NT_DRAIN_REASON_MAX 256

/* One Slurm node as `sinfo -h -N -o '%N|%n|%T|%E'` prints it: node name, NodeHostname,
 * extended state (idle, drained, draining, mixed+drain, ...), reason ("none" when unset).
 * Facts: sinfo(1) and `scontrol update` in scontrol(1) of Slurm 22.05.8 (SchedMD/slurm
 * slurm-22-05-8-1 doc/man/man1/sinfo.1, scontrol.1), checked on a real 22.05.8 (tests/slurm). */
typedef struct nt_slurm_node {
    char name[NT_DRAIN_NAME_MAX];
    char host[NT_DRAIN_NAME_MAX];
    char state[64];
    char reason[NT_DRAIN_REASON_MAX];
} nt_slurm_node_t;

typedef enum nt_drain_kind { NT_DRAIN_DO_DRAIN, NT_DRAIN_DO_RESUME } nt_drain_kind_t;

/* One scontrol update: drain NODE with REASON, or resume NODE. */
typedef struct nt_drain_action {
    nt_drain_kind_t kind;
    char node[NT_DRAIN_NAME_MAX];
    char reason[NT_DRAIN_REASON_MAX]; /* drain only: one line, as the report gives it */
} nt_drain_action_t;

/* The prefix of every reason nettune sets (reports/schema: failed_nodes[].reason); only a node
 * drained with it is ever resumed. */
#define NT_DRAIN_REASON_PREFIX "nettune:"

/* nt_drain_parse_sinfo - parse the output of `sinfo -h -N -o '%N|%n|%T|%E'` (one node a
 * line; a node in several partitions once) into at most max nodes; returns the count. Lines
 * without three '|' are skipped. The reason is the rest of the line (it may hold '|'). */
size_t nt_drain_parse_sinfo(const char *text, nt_slurm_node_t *nodes, size_t max);

/* nt_drain_plan - the drains and resumes a final report asks for. report: nettune probe's
 * report (summary.failed_nodes[].host/reason, summary.completed, nodes[].hostname). nodes:
 * the Slurm nodes (nt_drain_parse_sinfo), n of them (0 when sinfo is not available: then a
 * host is its own node name and nothing is resumed, since no reason is known). local_node:
 * SLURMD_NODENAME for a --local run (the report's one host is that node), or NULL.
 * Rules: every failed node is drained with its reason (newlines and tabs become spaces, cut
 * to 255 bytes), unless Slurm shows it drained already for a reason not starting "nettune:"
 * (an administrator's drain is left as it is). With resume set and summary.completed true,
 * every other node of the report that Slurm shows drained/draining with a "nettune:" reason
 * is resumed if this report re-checked what the reason names (a judged check of that word
 * on the node, or for link words bw/lat/p99/links/no_answer links of the node: a --local
 * health check does not resume a node the check job drained for its links); an incomplete report
 * resumes nothing (it proves no node healthy). A report host is mapped to the Slurm node whose
 * NodeHostname (or, failing that, name) it equals. Writes at most max actions into out and their
 * count into *nout. NT_ERR_INVALID when the report has no summary.failed_nodes array or asks for
 * more than max actions. */
nt_status_t nt_drain_plan(const cJSON *report, const nt_slurm_node_t *nodes, size_t n,
                          const char *local_node, int resume, nt_drain_action_t *out, size_t max,
                          size_t *nout);

/* nt_drain_format - the action as the shell line `scontrol update NodeName=N State=DRAIN
 * Reason='...'` (or State=RESUME), the reason single-quoted for sh. Writes at most len bytes;
 * returns NT_ERR_INVALID when truncated. */
nt_status_t nt_drain_format(const nt_drain_action_t *a, char *buf, size_t len);

/* nt_drain_run - the whole --drain / --resume-passing step of rank 0 (mode OFF with resume:
 * resumes only; local: a --local run, whose one host is Slurm node $SLURMD_NODENAME when set;
 * under srun every task has its own SLURMD_NODENAME, so a job's report is mapped by sinfo): read
 * the report at report_path, ask `sinfo` for the nodes (30 s timeout), plan, then print the
 * scontrol lines (dry_run) or run each `scontrol update` (30 s timeout each, as `scontrol` from
 * PATH). Prints one line per action on out ("drain: ..."), and one line on stderr for each that
 * fails. Returns NT_OK, or the first error (NT_ERR_IO: scontrol failed, NT_ERR_TIMEOUT: it ran past
 * 30 s and was killed; the other actions still run; sinfo failing only loses the name mapping and
 * the resumes). */
nt_status_t nt_drain_run(const char *report_path, nt_drain_mode_t mode, int resume, int local,
                         FILE *out);

/* nt_drain_run_doc - nt_drain_run on a document already in memory: `report` holds
 * summary.failed_nodes[] (host, reason, code) and, for resume, nodes[] and checks[] as the
 * probe's report does (nettune watch builds such a summary from its failing findings). `what`
 * names the document and `who` the command in the lines on stderr ("nettune watch: --drain:
 * ..."). The same steps, output and errors as nt_drain_run. */
nt_status_t nt_drain_run_doc(const cJSON *report, const char *what, const char *who,
                             nt_drain_mode_t mode, int resume, int local, FILE *out);

#endif
