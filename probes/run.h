/* The probe engine of nettune-probe: node identification, inventory, the schedule of link
 * tests, collection at rank 0, verdicts, the report and the common exit code. */
#ifndef NETTUNE_RUN_H
#define NETTUNE_RUN_H

#include <signal.h>

#include "probe.h"

/* The signal flag the waits watch (SIGTERM/SIGINT handler sets it). */
extern volatile sig_atomic_t nt_probe_interrupt;
/* Set by nt_probe_run when the run ended because a rank stopped answering (or rank 0 did):
 * the job cannot finish as an MPI job (MPI_Finalize's fence would wait for the lost rank for
 * ever when Open MPI keeps the job alive, orte_enable_recovery=1), so main() exits without it. */
extern volatile sig_atomic_t nt_probe_lost;

/* nt_probe_stop_line - on rank 0, once a progress snapshot was written: print on stderr the
 * one line that says a signal stopped the run, "nettune probe: stopped by SIGINT: partial
 * report 'r.json' (mpi step 3 of 20 done)", the signal, the partial report's path and the steps
 * it holds. Async-signal-safe (write(2) only): the SIGINT/SIGTERM handler calls it. Prints
 * nothing on other ranks, before the first snapshot and after the final report. */
void nt_probe_stop_line(int sig);

/* nt_probe_run - the whole run on this rank, through launcher l (MPI or local). argc/argv
 * are recorded in the report. Returns the exit code, identical on every rank (README.md
 * "Exit codes"): rank 0 decides and broadcasts it. */
int nt_probe_run(const nt_probe_params_t *params, nt_launcher_t *l, int argc, char **argv);

/* nt_fake_nodes_parse - the fake node count of NETTUNE_FAKE_NODES's text for a run of size
 * ranks: the count, or 0 (not faked) for text that is not a count >= 1; a count too large for
 * an int is size (as any count above the ranks is, nt_nodes_build). why gets one line for the
 * log when the text was refused or taken as size, else "". */
int nt_fake_nodes_parse(const char *text, int size, char *why, size_t whylen);
/* nt_nodes_build - group ranks into nodes. hosts: size entries of NT_HOST_MAX bytes (each
 * rank's node name), leaders: each rank's node-leader key (ranks with the same host and key
 * share a node). fake_nodes > 0 splits the ranks in rank order into that many nodes named
 * fake0.. instead (NETTUNE_FAKE_NODES, tests only). Nodes come out sorted by name in natural
 * order (node2 before node10). Returns NT_ERR_NOMEM / NT_ERR_INVALID. */
nt_status_t nt_nodes_build(int size, const char *hosts, const int *leaders, int fake_nodes,
                           nt_node_t **nodes, int *nnodes);
/* nt_machine_ranks - how many of size ranks share rank's machine: keys holds each rank's
 * machine key (its kernel's boot_id, keylen bytes each, NUL-padded); ranks with equal keys
 * are one machine, whatever their host names (namespaces, containers). 0 for a bad rank. */
int nt_machine_ranks(int size, const char *keys, size_t keylen, int rank);

/* nt_machine_cpus - the CPUs this job may use on this machine, whatever one rank is bound to
 * (mpirun's default --bind-to core and srun's binding give each rank one core, which says
 * nothing of how many the ranks share): hwloc's allowed PUs of the live topology (topo_pus,
 * which follow the cgroup cpuset; 0 = unknown, as with --topology) or else the online CPUs,
 * bounded by the cgroup v2 CPU quota (cpu.max "quota period" of the process's cgroup in
 * /proc/self/cgroup, rounded up: a container limited to 2 CPUs on a 64-core host has 2).
 * Reads through the sysfs root (NETTUNE_SYSFS_ROOT, nt_sysfs_set_root) so tests can stand in
 * a tree. At least 1. */
int nt_machine_cpus(int topo_pus);

/* NT_BOOT_ID_MAX - bytes of a kernel boot id as the ranks exchange it (36 characters + NUL). */
#define NT_BOOT_ID_MAX 40

/* nt_nodes_leaders - each rank's node-leader key for nt_nodes_build: the lowest world rank
 * with the same host name and the same kernel boot id. hosts: size entries of NT_HOST_MAX
 * bytes, boots: size entries of bootlen bytes ("" = unknown: then the host name alone). No
 * assumption on the order of ranks: `mpirun --map-by node` puts a host's ranks size/N apart.
 * leaders holds size ints. */
void nt_nodes_leaders(int size, const char *hosts, const char *boots, size_t bootlen, int *leaders);

/* nt_nodes_identify - the collective part of node identification, on every rank: gathers each
 * rank's host name (host, at most NT_HOST_MAX - 1 bytes) and boot id (boot, "" = unknown)
 * through l (allgather, timeout_s each), groups the ranks into nodes (nt_nodes_leaders,
 * nt_nodes_build; fake_nodes as there) and writes into *machine_ranks how many ranks share
 * this rank's kernel (nt_machine_ranks; 0 when its boot id is unknown). Errors: the launcher's
 * (NT_ERR_TIMEOUT...), NT_ERR_NOMEM, NT_ERR_INVALID. */
nt_status_t nt_nodes_identify(nt_launcher_t *l, const char *host, const char *boot, int fake_nodes,
                              double timeout_s, nt_node_t **nodes, int *nnodes, int *machine_ranks);

/* nt_nodes_free - free a node list of nt_nodes_build (NULL is fine). */
void nt_nodes_free(nt_node_t *nodes, int nnodes);

/* A step: what every rank does at the same time. Pairs are world ranks (a initiates). */
typedef struct nt_step {
    int npairs;
    int (*pairs)[2];
    nt_scope_t *scopes;
    int local; /* 1: a run_local step for the ranks listed in pairs[i][0] (pairs[i][1] = -1) */
    int round; /* the schedule round the step belongs to (inter rounds first, then intra) */
} nt_step_t;

/* nt_steps_build - the steps of a probe kind, identical on every rank: inter-node pairs from
 * the round-robin schedule (local rank i with local rank i), intra-node pairs among the ranks
 * of each node, then one local step. concurrent: a whole round per step; else one pair per
 * step (hosts with fewer cores than probe ranks). */
nt_status_t nt_steps_build(const nt_node_t *nodes, int nnodes, nt_schedule_mode_t mode,
                           int concurrent, nt_step_t **steps, int *nsteps);

/* nt_steps_rounds - the number of distinct rounds of the steps (local step excluded). */
int nt_steps_rounds(const nt_step_t *steps, int nsteps);
/* nt_steps_free - free a step list of nt_steps_build (NULL is fine). */
void nt_steps_free(nt_step_t *steps, int nsteps);

#endif
