/* make bench: the probe engine at cluster scale without a cluster. nettune-probe's own engine
 * (nt_probe_run: node identification, inventory exchange, schedule, collection at rank 0,
 * retest, judge, report) runs over the in-process launcher (lib/engine/launcher_inproc.c: one thread
 * per rank, one rank per node) with a synthetic link probe in place of the MPI one, whose
 * figures follow a model: every link 24 GB/s and 2.0 us, each sample with 5% Gaussian noise;
 * one bad node (every link of it at 40% of the bandwidth) and one bad link between two other
 * nodes (35%). Measured: rounds and pairs of the schedule, the wall time, the final judge's time
 * (nt_judge_finish, through the linker's --wrap) and that of the progress snapshots, peak RSS
 * of the process (every rank's thread included; the topology, the node table and the steps
 * are built once for all, see below), and the report's size. Then it checks that
 * the bad node and the bad link are what the report blames, and counts anything else failed.
 * Usage: bench_scale --quick|--full NODES [--topology XML] (the output goes under $TMPDIR);
 * bench_scale --fabric-schedule NODES [RAILS]: the fabric phases' schedule alone (below). */
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "judge/judge.h"
#include "nettune/clock.h"
#include "nettune/fabsched.h"
#include "nettune/launcher.h"
#include "params.h"
#include "probe_util.h"
#include "run.h"

#define NT_SB_BW_GBPS 24.0
#define NT_SB_LAT_US 2.0
#define NT_SB_NOISE 0.05
#define NT_SB_BAD_NODE_FACTOR 0.40
#define NT_SB_BAD_LINK_FACTOR 0.35
#define NT_SB_SAMPLES 8

static int nt_sb_bad_node, nt_sb_bad_a, nt_sb_bad_b; /* node indices */

/* ---- the synthetic link probe (it replaces the MPI one at link time) ---- */

typedef struct nt_sb_state {
    unsigned long long rng;
} nt_sb_state_t;

static double nt_sb_uniform(nt_sb_state_t *s)
{
    /* splitmix64: a fixed, per-rank sequence, so a run is reproducible */
    unsigned long long z = (s->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double nt_sb_noise(nt_sb_state_t *s)
{
    /* Box-Muller: 1 + N(0, 5%) */
    double u = nt_sb_uniform(s), v = nt_sb_uniform(s);
    return 1.0 + NT_SB_NOISE * sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static nt_status_t nt_sb_init(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks,
                              char *why, size_t whylen)
{
    nt_sb_state_t *s = calloc(1, sizeof(*s));
    (void)node_json;
    (void)checks;
    (void)why;
    (void)whylen;
    if (!s)
        return NT_ERR_NOMEM;
    s->rng = 0x5eed0000ULL + (unsigned long long)p->rank;
    *state = s;
    return NT_OK;
}

static nt_status_t nt_sb_run_pair(void *state, nt_probe_t *p, int peer_rank, int initiator,
                                  nt_scope_t scope, cJSON *out_links)
{
    nt_sb_state_t *s = state;
    int pnode, plr, me = p->my_node;
    double lat[NT_SB_SAMPLES], bw[NT_SB_SAMPLES], factor = 1.0;
    nt_stats_t st;
    char sep[16], dep[16];
    cJSON *link;

    if (!initiator)
        return NT_OK; /* the initiator reports the link */
    nt_probe_locate(p, peer_rank, &pnode, &plr);
    if (pnode < 0)
        return NT_ERR_INVALID;
    if (me == nt_sb_bad_node || pnode == nt_sb_bad_node)
        factor = NT_SB_BAD_NODE_FACTOR;
    else if ((me == nt_sb_bad_a && pnode == nt_sb_bad_b) ||
             (me == nt_sb_bad_b && pnode == nt_sb_bad_a))
        factor = NT_SB_BAD_LINK_FACTOR;
    snprintf(sep, sizeof(sep), "lr%d", p->local_rank);
    snprintf(dep, sizeof(dep), "lr%d", plr);
    link = nt_probe_link_new("mpi", NULL, scope, p->nodes[me].host, p->rank, sep,
                             p->nodes[pnode].host, peer_rank, dep);
    if (!link)
        return NT_ERR_NOMEM;
    for (int i = 0; i < NT_SB_SAMPLES; i++) {
        lat[i] = NT_SB_LAT_US * 1e-6 * nt_sb_noise(s); /* s: nt_probe_add_lat_sample's unit */
        bw[i] = NT_SB_BW_GBPS * 1e9 * factor * nt_sb_noise(s);
    }
    for (size_t i = 0; i < p->params->nlat_sizes; i++)
        if (nt_stats_compute(lat, NT_SB_SAMPLES, &st) == NT_OK)
            nt_probe_add_lat_sample(link, p->params->lat_sizes[i], NT_SB_SAMPLES, &st);
    for (size_t i = 0; i < p->params->nbw_sizes; i++)
        if (nt_stats_compute(bw, NT_SB_SAMPLES, &st) == NT_OK)
            nt_probe_add_bw_sample(link, p->params->bw_sizes[i], NT_SB_SAMPLES, &st);
    cJSON_AddItemToArray(out_links, link);
    return NT_OK;
}

static void nt_sb_cleanup(void *state)
{
    free(state);
}

const nt_link_probe_ops_t nt_mpi_probe_ops = {
    .kind = "mpi", .init = nt_sb_init, .run_pair = nt_sb_run_pair, .cleanup = nt_sb_cleanup};

static nt_status_t nt_sb_none(nt_probe_t *p, void **state, cJSON *node_json, cJSON *checks,
                              char *why, size_t whylen)
{
    (void)p;
    (void)state;
    (void)node_json;
    (void)checks;
    snprintf(why, whylen, "synthetic bench: MPI-like links only");
    return NT_ERR_UNSUPPORTED;
}

const nt_link_probe_ops_t nt_rdma_probe_ops = {.kind = "rdma", .init = nt_sb_none};
const nt_link_probe_ops_t nt_gpu_probe_ops = {.kind = "gpu", .init = nt_sb_none};

/* The fabric phases' RDMA path (probes/fabric/fabric_rdma.c) is left out with the real probes:
 * no node has an RDMA port here, so the phases take the sockets, as on a machine without one. */
nt_status_t nt_fab_rdma_open(nt_probe_t *p, int leader, const char (*ifnames)[16], int nrails,
                             nt_fab_rdma_t **out, char *why, size_t whylen)
{
    (void)p;
    (void)leader;
    (void)ifnames;
    (void)nrails;
    *out = NULL;
    snprintf(why, whylen, "synthetic bench: no RDMA port");
    return NT_OK;
}

nt_status_t nt_fab_rdma_round(nt_fab_rdma_t *r, nt_probe_t *p, const nt_fab_flow_t *flows,
                              size_t first, size_t n, double cap_s, uint32_t *flow_ids,
                              nt_fab_result_t *res, size_t *nres)
{
    (void)r;
    (void)p;
    (void)flows;
    (void)first;
    (void)n;
    (void)cap_s;
    (void)flow_ids;
    (void)res;
    *nres = 0;
    return NT_ERR_UNSUPPORTED;
}

void nt_fab_rdma_close(nt_fab_rdma_t *r, nt_probe_t *p, int sync)
{
    (void)r;
    (void)p;
    (void)sync;
}

/* ---- the judge, timed ---- */

int __real_nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                           const nt_probe_params_t *params);
int __wrap_nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                           const nt_probe_params_t *params);

static double nt_sb_judge_last_s, nt_sb_judge_last_cpu_s, nt_sb_snap_s;
static size_t nt_sb_heap_max; /* bytes malloc'ed in the process, at most, at a judge's end */

/* What the process has malloc'ed now (every arena, mmap'ed blocks too): at the end of a judge
 * rank 0 holds its document, the snapshot's copy (when it is one) and the judge's figures,
 * while the other ranks wait with a message or two each. */
static void nt_sb_heap_sample(void)
{
    struct mallinfo2 mi = mallinfo2();
    size_t used = mi.uordblks + mi.hblkhd;
    if (used > nt_sb_heap_max)
        nt_sb_heap_max = used;
}

/* CPU time of the calling thread, s: on a shared machine the wall time of the judge says more
 * about the other tenants than about the judge. */
static double nt_sb_thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static int nt_sb_snaps;

int __wrap_nt_judge_finish(nt_judge_t *j, const nt_probe_t *p, cJSON *doc, int stopped_early,
                           const nt_probe_params_t *params)
{
    double t0 = nt_clock_s(), c0 = nt_sb_thread_cpu_s();
    int code = __real_nt_judge_finish(j, p, doc, stopped_early, params);
    double dt = nt_clock_s() - t0;
    nt_sb_heap_sample();
    nt_sb_judge_last_cpu_s = nt_sb_thread_cpu_s() - c0;
    /* Progress snapshots judge a copy whose run.completed is false; the last call is final. */
    nt_sb_snap_s += nt_sb_judge_last_s;
    nt_sb_snaps++;
    nt_sb_judge_last_s = dt;
    return code;
}

/* ---- one topology for every node ----
 * Every rank of nt_probe_run loads its node's topology. Here all ranks are threads of one
 * process: 1,000 concurrent hwloc loads of the same XML would measure hwloc (about 4 MB each at
 * their peak), not the engine. The file is loaded once and every node gets that inventory. */

nt_status_t __real_nt_topo_load(const char *xml_path, nt_topo_t **out);
void __real_nt_topo_destroy(nt_topo_t *t);
nt_status_t __wrap_nt_topo_load(const char *xml_path, nt_topo_t **out);
void __wrap_nt_topo_destroy(nt_topo_t *t);

static pthread_mutex_t nt_sb_topo_mu = PTHREAD_MUTEX_INITIALIZER;
static nt_topo_t *nt_sb_topo;
static nt_status_t nt_sb_topo_st = NT_ERR_NOT_FOUND;
static int nt_sb_topo_loaded;

nt_status_t __wrap_nt_topo_load(const char *xml_path, nt_topo_t **out)
{
    pthread_mutex_lock(&nt_sb_topo_mu);
    if (!nt_sb_topo_loaded) {
        nt_sb_topo_st = __real_nt_topo_load(xml_path, &nt_sb_topo);
        nt_sb_topo_loaded = 1;
    }
    pthread_mutex_unlock(&nt_sb_topo_mu);
    *out = nt_sb_topo;
    return nt_sb_topo_st;
}

void __wrap_nt_topo_destroy(nt_topo_t *t)
{
    if (t != nt_sb_topo)
        __real_nt_topo_destroy(t);
}

/* ---- one node table for every rank ----
 * Every rank builds the job's node table (nt_nodes_build: O(nodes) each, identical on every
 * rank). Threads of one process would hold nodes x nodes entries (5.5 GB at 4,096 nodes): the
 * first table built is shared, as the topology is. */

nt_status_t __real_nt_nodes_build(int size, const char *hosts, const int *leaders, int fake_nodes,
                                  nt_node_t **nodes, int *nnodes);
void __real_nt_nodes_free(nt_node_t *nodes, int nnodes);
nt_status_t __wrap_nt_nodes_build(int size, const char *hosts, const int *leaders, int fake_nodes,
                                  nt_node_t **nodes, int *nnodes);
void __wrap_nt_nodes_free(nt_node_t *nodes, int nnodes);

static nt_node_t *nt_sb_nodes;
static int nt_sb_nnodes;
static nt_status_t nt_sb_nodes_st = NT_ERR_INVALID;

nt_status_t __wrap_nt_nodes_build(int size, const char *hosts, const int *leaders, int fake_nodes,
                                  nt_node_t **nodes, int *nnodes)
{
    pthread_mutex_lock(&nt_sb_topo_mu);
    if (!nt_sb_nodes)
        nt_sb_nodes_st =
            __real_nt_nodes_build(size, hosts, leaders, fake_nodes, &nt_sb_nodes, &nt_sb_nnodes);
    pthread_mutex_unlock(&nt_sb_topo_mu);
    *nodes = nt_sb_nodes;
    *nnodes = nt_sb_nnodes;
    return nt_sb_nodes_st;
}

void __wrap_nt_nodes_free(nt_node_t *nodes, int nnodes)
{
    if (nodes != nt_sb_nodes)
        __real_nt_nodes_free(nodes, nnodes);
}

/* The steps of the schedule, likewise identical on every rank: O(nodes^2) pairs each (6 MB per
 * rank at 1,000 nodes --full, 6 GB for the threads together). Only the MPI kind builds steps
 * here (the RDMA stub is unavailable), so one cached list serves every call. */
nt_status_t __real_nt_steps_build(const nt_node_t *nodes, int nnodes, nt_schedule_mode_t mode,
                                  int concurrent, nt_step_t **steps, int *nsteps);
void __real_nt_steps_free(nt_step_t *steps, int nsteps);
nt_status_t __wrap_nt_steps_build(const nt_node_t *nodes, int nnodes, nt_schedule_mode_t mode,
                                  int concurrent, nt_step_t **steps, int *nsteps);
void __wrap_nt_steps_free(nt_step_t *steps, int nsteps);

static nt_step_t *nt_sb_steps;
static int nt_sb_nsteps;
static nt_status_t nt_sb_steps_st = NT_ERR_INVALID;

nt_status_t __wrap_nt_steps_build(const nt_node_t *nodes, int nnodes, nt_schedule_mode_t mode,
                                  int concurrent, nt_step_t **steps, int *nsteps)
{
    pthread_mutex_lock(&nt_sb_topo_mu);
    if (!nt_sb_steps)
        nt_sb_steps_st =
            __real_nt_steps_build(nodes, nnodes, mode, concurrent, &nt_sb_steps, &nt_sb_nsteps);
    pthread_mutex_unlock(&nt_sb_topo_mu);
    *steps = nt_sb_steps;
    *nsteps = nt_sb_nsteps;
    return nt_sb_steps_st;
}

void __wrap_nt_steps_free(nt_step_t *steps, int nsteps)
{
    if (steps != nt_sb_steps)
        __real_nt_steps_free(steps, nsteps);
}

/* ---- one machine per node ----
 * The ranks are threads of one process on one kernel (one boot id), so the engine would see
 * 1,000 probe ranks on this machine's cores and run every pair on its own (run.serialized:
 * 499,500 steps at 1,000 nodes --full, each with a broadcast to every rank). The model is a
 * cluster of 1,000 machines, each rank alone on its own: its pairs run a round at a time. */
int __real_nt_machine_ranks(int size, const char *keys, size_t keylen, int rank);
int __wrap_nt_machine_ranks(int size, const char *keys, size_t keylen, int rank);

int __wrap_nt_machine_ranks(int size, const char *keys, size_t keylen, int rank)
{
    (void)size;
    (void)keys;
    (void)keylen;
    (void)rank;
    return 1;
}

/* ---- the run ---- */

typedef struct nt_sb_run {
    nt_probe_params_t params;
    int argc;
    char **argv;
    int code; /* rank 0's */
} nt_sb_run_t;

static int nt_sb_rank(nt_launcher_t *l, void *arg)
{
    nt_sb_run_t *r = arg;
    int code = nt_probe_run(&r->params, l, r->argc, r->argv);
    if (nt_launcher_rank(l) == 0)
        r->code = code;
    return 0;
}

static int nt_sb_count_failed(const cJSON *arr)
{
    int n = 0;
    for (const cJSON *it = arr ? arr->child : NULL; it; it = it->next) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(it, "verdict");
        n += cJSON_IsString(v) && strcmp(v->valuestring, "fail") == 0;
    }
    return n;
}

/* The fabric phases' schedule at nnodes nodes and rails rails (include/nettune/fabsched.h):
 * the time to build it (best of 5: on a shared machine the others' load is noise), the heap it
 * holds (mallinfo2 before and after), its rounds and flows per phase, the bytes it moves and
 * its estimate against the budget. The model: 16 MiB flows at 24 GB/s alone (0.70 ms), twice
 * that under load, 20 ms per round beside its flows (barrier, connect, results to rank 0),
 * 60 s of budget. One line; exit 1 when the estimate exceeds the budget. */
static int nt_sb_fabric_schedule(int nnodes, int rails)
{
    nt_fab_sched_params_t sp = {.nnodes = nnodes,
                                .nrails = rails,
                                .budget_s = 60,
                                .flow_s = 16777216.0 / 24e9,
                                .loaded_flow_s = 2 * 16777216.0 / 24e9,
                                .overhead_s = 0.02,
                                .bytes = 16u << 20,
                                .seed = 12345};
    nt_fab_schedule_t s;
    double best = 1e300, bytes = 0;
    size_t heap = 0;

    for (int i = 0; i < 5; i++) {
        struct mallinfo2 a = mallinfo2(), b;
        double t0 = nt_clock_s(), t;
        if (nt_fab_schedule_create(&sp, &s) != NT_OK) {
            fprintf(stderr, "bench_scale: cannot build the fabric schedule of %d nodes\n", nnodes);
            return 2;
        }
        t = nt_clock_s() - t0;
        b = mallinfo2();
        best = t < best ? t : best;
        heap = (b.uordblks + b.hblkhd) - (a.uordblks + a.hblkhd);
        if (i < 4)
            nt_fab_schedule_destroy(&s);
    }
    for (size_t f = 0; f < s.nflows; f++)
        bytes += (double)s.flows[f].bytes;
    printf("fabric %6d %5d %7zu %9zu %7zu %7zu %7zu %7zu %7zu %7zu %9.1f %8.1f %8.4f %8.2f\n",
           nnodes, rails, s.nrounds, s.nflows, s.phase_rounds[NT_FAB_ALONE],
           s.phase_rounds[NT_FAB_BISECTION], s.phase_rounds[NT_FAB_ALLTOALL],
           s.phase_rounds[NT_FAB_RING], s.phase_rounds[NT_FAB_RAIL_ALL],
           s.phase_rounds[NT_FAB_RAIL_ONE], bytes / 1e9, s.est_s, best, (double)heap / 1048576.0);
    nt_fab_schedule_destroy(&s);
    return s.est_s <= sp.budget_s ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--fabric-schedule") == 0)
        return nt_sb_fabric_schedule(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 1);
    const char *mode = argc > 1 ? argv[1] : "--quick";
    int nnodes = argc > 2 ? atoi(argv[2]) : 64;
    const char *topology = argc > 4 && strcmp(argv[3], "--topology") == 0 ? argv[4] : NULL;
    char out[256], nodes_env[16], bad[3][32];
    char *pargv[20];
    int pargc = 0, abort_code = -1, other_nodes = 0, bad_link_failed = 0, other_links = 0;
    int node_blamed = 0;
    nt_sb_run_t run;
    nt_params_action_t action;
    char err[256];
    double t0, wall;
    struct rusage ru;
    struct stat sb;
    FILE *f;
    char *text;
    cJSON *doc, *sched, *summary;

    if (nnodes < 2) {
        fprintf(stderr, "bench_scale: give --quick|--full and a node count >= 2\n");
        return 2;
    }
    snprintf(out, sizeof(out), "%s/nettune-bench-scale-%d.json",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    pargv[pargc++] = "nettune-probe";
    pargv[pargc++] = (char *)mode;
    pargv[pargc++] = "--sizes";
    pargv[pargc++] = "8,1M";
    pargv[pargc++] = "--peer-timeout";
    pargv[pargc++] = "300";
    pargv[pargc++] = "--quiet";
    /* The engine of the pairwise rounds: the fabric phases after --full move real bytes over
     * sockets, which threads of one process cannot stand in for at 1,000 nodes (their schedule
     * is measured on its own: --fabric-schedule). */
    if (strcmp(mode, "--full") == 0) {
        pargv[pargc++] = "--fabric-budget";
        pargv[pargc++] = "0";
    }
    pargv[pargc++] = "--output";
    pargv[pargc++] = out;
    if (topology) {
        pargv[pargc++] = "--topology";
        pargv[pargc++] = (char *)topology;
    }
    pargv[pargc] = NULL;
    memset(&run, 0, sizeof(run));
    if (nt_params_parse(pargc, pargv, &run.params, &action, err, sizeof(err)) != NT_OK) {
        fprintf(stderr, "bench_scale: %s\n", err);
        return 2;
    }
    run.argc = pargc;
    run.argv = pargv;
    /* Node names fake0..fakeN-1 (natural order); the faults sit among them. */
    snprintf(nodes_env, sizeof(nodes_env), "%d", nnodes);
    setenv("NETTUNE_FAKE_NODES", nodes_env, 1);
    nt_sb_bad_node = nnodes / 3;
    nt_sb_bad_a = nnodes / 2;
    nt_sb_bad_b = nnodes / 2 + 1;
    snprintf(bad[0], sizeof(bad[0]), "fake%d", nt_sb_bad_node);
    snprintf(bad[1], sizeof(bad[1]), "fake%d", nt_sb_bad_a);
    snprintf(bad[2], sizeof(bad[2]), "fake%d", nt_sb_bad_b);

    t0 = nt_clock_s();
    if (nt_inproc_run(nnodes, 1, nt_sb_rank, &run, &abort_code) != 0) {
        fprintf(stderr, "bench_scale: the in-process launcher could not start %d ranks\n", nnodes);
        return 2;
    }
    wall = nt_clock_s() - t0;
    getrusage(RUSAGE_SELF, &ru);
    if (stat(out, &sb) != 0 || !(f = fopen(out, "r"))) {
        fprintf(stderr, "bench_scale: no report at %s (exit %d)\n", out, run.code);
        return 1;
    }
    text = malloc((size_t)sb.st_size + 1);
    if (!text || fread(text, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        fclose(f);
        return 1;
    }
    fclose(f);
    text[sb.st_size] = '\0';
    doc = cJSON_Parse(text);
    free(text);
    /* BENCH_SCALE_KEEP=path keeps the report (to read, or to measure nettune report on it) */
    if (getenv("BENCH_SCALE_KEEP") && *getenv("BENCH_SCALE_KEEP")) {
        if (rename(out, getenv("BENCH_SCALE_KEEP")) != 0)
            unlink(out);
    } else {
        unlink(out);
    }
    if (!doc) {
        fprintf(stderr, "bench_scale: the report is not JSON\n");
        return 1;
    }
    sched = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "run"), "schedule"),
        "mpi");
    summary = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    for (const cJSON *fn = cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes")
                               ? cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes")->child
                               : NULL;
         fn; fn = fn->next) {
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(fn, "host");
        const char *host = cJSON_IsString(h)    ? h->valuestring
                           : cJSON_IsString(fn) ? fn->valuestring
                                                : "";
        if (strcmp(host, bad[0]) == 0)
            node_blamed = 1;
        else
            other_nodes++;
    }
    for (const cJSON *l = cJSON_GetObjectItemCaseSensitive(doc, "links")->child; l; l = l->next) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(l, "verdict");
        const char *src = nt_json_get_str(cJSON_GetObjectItemCaseSensitive(l, "src"), "host", "");
        const char *dst = nt_json_get_str(cJSON_GetObjectItemCaseSensitive(l, "dst"), "host", "");
        int fail = cJSON_IsString(v) && strcmp(v->valuestring, "fail") == 0;
        int on_bad_node = strcmp(src, bad[0]) == 0 || strcmp(dst, bad[0]) == 0;
        int is_bad_link = (strcmp(src, bad[1]) == 0 && strcmp(dst, bad[2]) == 0) ||
                          (strcmp(src, bad[2]) == 0 && strcmp(dst, bad[1]) == 0);
        if (is_bad_link)
            bad_link_failed |= fail;
        else if (fail && !on_bad_node)
            other_links++;
    }
    (void)nt_sb_count_failed;
    printf("%-6s %6d %7d %8d %8.1f %8.1f %8.2f %8.2f %6d %8.2f %8.0f %8.0f %9.1f   %-7s %-7s "
           "%d/%d\n",
           mode + 2, nnodes, (int)nt_json_get_num(sched, "rounds", -1),
           (int)nt_json_get_num(sched, "pairs", -1), wall,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6,
           nt_sb_judge_last_s, nt_sb_judge_last_cpu_s, nt_sb_snaps - 1, nt_sb_snap_s,
           (double)ru.ru_maxrss / 1024.0, (double)nt_sb_heap_max / 1048576.0,
           (double)sb.st_size / 1e6, node_blamed ? "yes" : "NO", bad_link_failed ? "yes" : "NO",
           other_nodes, other_links);
    cJSON_Delete(doc);
    __real_nt_topo_destroy(nt_sb_topo);
    __real_nt_nodes_free(nt_sb_nodes, nt_sb_nnodes);
    __real_nt_steps_free(nt_sb_steps, nt_sb_nsteps);
    return node_blamed && bad_link_failed && other_nodes == 0 ? 0 : 1;
}
