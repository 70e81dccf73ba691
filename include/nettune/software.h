/* Software versions of a node (the report's nodes[].software) and the consistency rule across
 * nodes (docs/topology.md "Consistency across nodes": versions that differ from the majority are a warning on
 * the minority nodes, a failure with --strict).
 *
 * Every version is found at run time, never taken from the build: a node is judged by what it
 * would load. CUDA and NCCL are dlopen()ed (no library of lib/ links either); a library that
 * cannot be loaded leaves its version empty ("" here, null in the report), it is never an error. */
#ifndef NETTUNE_SOFTWARE_H
#define NETTUNE_SOFTWARE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "nettune/report.h"
#include "nettune/status.h"

/* Empty string = not found on this node. */
typedef struct nt_software {
    char kernel[128];      /* uname(2) release: "6.1.0-18-amd64" */
    char mpi[128];         /* set by the caller (MPI_Get_library_version): lib/ has no MPI */
    char hwloc[64];        /* "2.9.0" */
    char cuda_driver[16];  /* cuDriverGetVersion of libcuda.so.1: "12.2" */
    char cuda_runtime[16]; /* cudaRuntimeGetVersion of the libcudart the loader finds: "12.2" */
    char nccl[16];         /* ncclGetVersion of libnccl.so.2: "2.19.3" */
    char rdma_core[16];    /* from the file name of libibverbs.so.1: "44.0" */
} nt_software_t;

/* The report keys of nt_software_t, in report order: "kernel", "mpi", "hwloc", "cuda_driver",
 * "cuda_runtime", "nccl", "rdma_core". */
extern const char *const nt_software_keys[];
#define NT_SOFTWARE_NKEYS 7

/* nt_software_collect - fill sw with this node's versions (mpi left empty: see
 * nt_software_set_mpi). Never fails for a missing library; NT_ERR_SYSTEM only when uname(2)
 * fails.
 *   kernel: uname(2) release.
 *   hwloc: HWLOC_VERSION of the headers built against; libhwloc keeps its soname across 2.x,
 *     so when hwloc_get_api_version() at run time differs from the build's HWLOC_API_VERSION
 *     the runtime API is appended ("2.9.0 (runtime API 0x20a00)").
 *   cuda_driver, cuda_runtime, nccl: see nt_software_dl_version.
 *   rdma_core: see nt_software_rdma_core. */
nt_status_t nt_software_collect(nt_software_t *sw);

/* nt_software_set_mpi - record the MPI library version (first line of
 * MPI_Get_library_version, e.g. "Open MPI v4.1.4, ..."); NULL clears it. */
void nt_software_set_mpi(nt_software_t *sw, const char *version);

/* What nt_software_dl_version asks a library for. */
typedef enum nt_software_lib {
    NT_SW_CUDA_DRIVER,  /* cuDriverGetVersion(int *): 12020 -> "12.2" */
    NT_SW_CUDA_RUNTIME, /* cudaRuntimeGetVersion(int *): 12020 -> "12.2" */
    NT_SW_NCCL          /* ncclGetVersion(int *): 21903 -> "2.19.3", 2804 -> "2.8.4" */
} nt_software_lib_t;

/* nt_software_dl_version - dlopen the first loadable name of names (NULL-terminated; a bare
 * soname is searched the way the dynamic loader does, a path is opened as is), call the
 * version function of kind, format it into buf and dlclose. The default names are
 * libcuda.so.1; libcudart.so, libcudart.so.13, .12, .11.0; libnccl.so.2 (names NULL).
 * NT_ERR_UNSUPPORTED when no name loads or the symbol is missing, NT_ERR_SYSTEM when the
 * call returns an error. Never crashes on a missing library. */
nt_status_t nt_software_dl_version(nt_software_lib_t kind, const char *const *names, char *buf,
                                   size_t len);

/* nt_software_format_cuda - CUDA's version integer (1000 x major + 10 x minor) as
 * "major.minor": 12020 -> "12.2", 11080 -> "11.8". */
void nt_software_format_cuda(int v, char *buf, size_t len);

/* nt_software_format_nccl - NCCL's version integer as "major.minor.patch". NCCL >= 2.9 codes
 * it as 10000 x major + 100 x minor + patch (21903 -> "2.19.3"), earlier releases as
 * 1000 x major + 100 x minor + patch (2804 -> "2.8.4"; nccl.h NCCL_VERSION_CODE). */
void nt_software_format_nccl(int v, char *buf, size_t len);

/* nt_software_rdma_core - the rdma-core release from the file that libibverbs.so.1 resolves
 * to. rdma-core installs libibverbs as libibverbs.so.1.<ABI minor>.<rdma-core version>
 * (buildlib/rdma_functions.cmake: VERSION ${ABI}.${PACKAGE_VERSION}), so
 * libibverbs.so.1.14.44.0 is rdma-core 44.0. The file is the one the dynamic loader picks for
 * soname (NULL = "libibverbs.so.1"; dlopen + dlinfo RTLD_DI_LINKMAP, then realpath): no
 * package manager is asked, and a self-built rdma-core in LD_LIBRARY_PATH is seen as such.
 * NT_ERR_UNSUPPORTED when the library is absent or its name does not follow the scheme. */
nt_status_t nt_software_rdma_core(const char *soname, char *buf, size_t len);

/* nt_software_rdma_core_from_path - the parsing step of nt_software_rdma_core on a file name:
 * ".../libibverbs.so.1.14.44.0" -> "44.0". NT_ERR_PARSE when it does not follow the scheme. */
nt_status_t nt_software_rdma_core_from_path(const char *path, char *buf, size_t len);

/* nt_software_to_json - add "software": {kernel, mpi, hwloc, cuda_driver, cuda_runtime, nccl,
 * rdma_core} to node, null for the versions not found. NT_ERR_NOMEM. */
nt_status_t nt_software_to_json(const nt_software_t *sw, cJSON *node);

/* How nt_software_group judges one key: the check's name and verdict, the words of its
 * message, and the reference. base_set: the reference is base (a baseline's value, NULL for
 * absent), else the value most nodes hold. */
typedef struct nt_sw_rule {
    const char *name;     /* the check's name: "software_consistency", "config_drift", ... */
    nt_verdict_t verdict; /* of each node that differs */
    const char *word;     /* what no majority holds: "version", "value", "file" */
    const char *none;     /* how an absent value reads: "none", "unset" */
    int base_set;
    const char *base;
} nt_sw_rule_t;

/* nt_software_group - the one grouping rule of nodes' values (software_consistency,
 * config_drift, tuning_file): obj[i] is node i's object (NULL: every key absent) and hosts[i]
 * its host, for n nodes; key is compared by its string value (other JSON by its text; absent
 * and null are one value, rule->none).
 *   - Against a base (rule->base_set): every node whose value differs gets a check.
 *   - Else one value everywhere: nothing; a value held by more nodes than any other (a
 *     plurality) is the reference and each other node gets a check; a tie: every node gets one
 *     without "expected", its message listing the split.
 * A check is {name rule->name, host, target key, verdict rule->verdict, observed, expected,
 * message "<key> <value> differs from the majority|baseline <ref> (<split>)"}, with
 * "reference": "majority"|"baseline" for every rule but software_consistency. Appended to
 * checks; returns the number added, -1 on NOMEM. */
int nt_software_group(const cJSON *const *obj, const char *const *hosts, int n,
                      const nt_sw_rule_t *rule, const char *key, cJSON *checks);

/* nt_software_consistency - the software_consistency checks of a job.
 * sw[i] is node i's "software" object (as nt_software_to_json writes it) and hosts[i] its host
 * name, for n nodes. For every key found in any node (nt_software_keys first, then others in
 * order of appearance), the nodes are grouped by value; an absent or null value is a value of
 * its own ("none"), so a node missing NCCL where the others have it stands out too.
 *   - One value everywhere: nothing is added.
 *   - One value held by more nodes than any other (a plurality, not necessarily over half):
 *     it is the reference, and each node with another value gets a check
 *     {name "software_consistency", host, target <key>, verdict warn (fail when strict),
 *      observed <its value>, expected <reference>, message}.
 *   - Several values tie for the most nodes (a 2-node job that differs, a 4/4 split): there is
 *     no reference, so every node gets a check with no "expected" and a message naming the
 *     split: an operator has to look, and no side can be called the odd one.
 * The checks are appended to checks (an array). Returns the number of checks added (>= 0), or
 * -1 on NOMEM / invalid arguments. Pure: reads nothing but its arguments. */
int nt_software_consistency(const cJSON *const *sw, const char *const *hosts, int n, int strict,
                            cJSON *checks);

/* nt_config_drift - the config_drift checks of a job: what the job's nodes differ in that makes
 * them run another NCCL set-up. For n nodes, sw[i] is node i's "software" object, env[i] its
 * "environment" object (nt_software_env_to_json; NULL: not recorded) and hosts[i] its host.
 * base_sw/base_env are the same of the nbase nodes of a --baseline report (nbase 0: none);
 * a baseline key's value is the one most of its nodes hold.
 *   - Versions (every key of the baseline's software objects) against the baseline only;
 *     against the majority they are nt_software_consistency's rule, which this does not repeat.
 *   - NCCL_* variables (every name set on any node or in the baseline; unset is the value
 *     "none") against the baseline when it recorded an environment, else against the
 *     majority as nt_software_consistency groups versions (plurality; a tie: every node, no
 *     "expected").
 * Each node that differs gets {name "config_drift", host, target <key or variable>, verdict
 * fail, observed <its value>, expected <reference>, reference "baseline"|"majority",
 * message naming both and the split over the job}. Appended to checks; returns the number
 * added, -1 on NOMEM or invalid arguments. Pure. */
int nt_config_drift(const cJSON *const *sw, const cJSON *const *env, const char *const *hosts,
                    int n, const cJSON *const *base_sw, const cJSON *const *base_env, int nbase,
                    cJSON *checks);

/* nt_software_env_to_json - add "environment": {NAME: value} to node for every NCCL_* variable
 * of envp (an environ-style NULL-terminated array; NULL: none), sorted by name, the first of
 * a repeated name kept (what getenv returns). An empty object when none is set. NT_ERR_NOMEM. */
nt_status_t nt_software_env_to_json(char *const *envp, cJSON *node);

#endif
