// Differential check: the tuner model (tuner/model.h) against NCCL's own ncclTopoTuneModel()
// and ncclTopoGetAlgoTime() of one NVIDIA/nccl tag, compiled with shim/ (run.sh). For N random
// communicators and graphs it compares every latency/bandwidth cell, the thread counts and the
// time of random calls, and prints the counts of cells that differ (exact: > 1e-4 relative;
// printed: NCCL's %.1f differs). Usage: harness VERSION_CODE N SEED ARCH, ARCH "power" (every
// communicator on POWER) or "other" (x86 or Arm): before 2.28 NCCL's POWER rule rewrites a
// static table for the rest of the process (v2.27.7-1 tuning.cc:143, :239), so the two never mix
// in one process, as they do not on a real machine.
extern "C" {
#include "tuner/model.h"
}
#include "nccl_shim.h"
#include <cmath>

int shim_nvs_count, shim_cpu_arch, shim_cpu_vendor;
#if SHIM_NUM_ALGORITHMS == 4
ncclResult_t ncclTopoTuneModel(struct ncclComm *, int, int, struct ncclTopoGraph *,
                               struct ncclTopoGraph *, struct ncclTopoGraph *);
ncclResult_t ncclTopoGetAlgoTime(struct ncclInfo *info, int algorithm, int protocol, int numPipeOps,
                                 float *time);
#else
#ifdef SHIM_TUNER_CONSTANTS
ncclResult_t ncclTopoInitTunerConstants(struct ncclComm *comm);
#endif
ncclResult_t ncclTopoTuneModel(struct ncclComm *, int, int, struct ncclTopoGraph **);
#if defined(SHIM_ALGOTIME_INFO)     /* v2.21.5-1 tuning.cc:418 */
ncclResult_t ncclTopoGetAlgoTime(struct ncclInfo *info, int algorithm, int protocol, int numPipeOps,
                                 float *time, bool *backup);
#elif defined(SHIM_ALGOTIME_BACKUP) /* v2.22.3-1:417, v2.23.4-1:441 */
ncclResult_t ncclTopoGetAlgoTime(struct ncclComm *, int coll, int algorithm, int protocol,
                                 size_t nBytes, int numPipeOps, float *time, bool *backup);
#else
ncclResult_t ncclTopoGetAlgoTime(struct ncclComm *, int coll, int algorithm, int protocol,
                                 size_t nBytes, int numPipeOps, float *time);
#endif
#endif

static unsigned long long rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}
template <typename T, size_t N> static T pick(const T (&a)[N])
{
    return a[rnd(N)];
}

static int differ(double a, double b)
{
    return fabs(a - b) > 1e-4 * (fabs(a) > 1 ? fabs(a) : 1);
}
static int printed_differ(double a, double b)
{
    char x[32], y[32];
    snprintf(x, sizeof(x), "%.1f", a);
    snprintf(y, sizeof(y), "%.1f", b);
    return strcmp(x, y) != 0;
}

int main(int argc, char **argv)
{
    int version = atoi(argv[1]);
    long n = atol(argv[2]);
    rng_state = strtoull(argv[3], NULL, 0);
    int power = argc > 4 && strcmp(argv[4], "power") == 0;
    static const int nodes_l[] = {1, 1, 2, 2, 3, 4, 8, 16};
    static const int ppn_l[] = {1, 2, 4, 8};
    static const int sm_l[] = {60, 70, 80, 86, 90, 90, 100, 120};
    static const float bw_l[] = {0, 1.2f, 2.4f, 3, 6, 12, 20, 20.6f, 24, 40, 48, 50};
    static const int ti_l[] = {PATH_NVL, PATH_NVL, PATH_NVB, PATH_PIX, PATH_PHB, PATH_SYS};
    static const int te_l[] = {PATH_PIX, PATH_PXB, PATH_P2C, PATH_PXN, PATH_PHB, PATH_NET};
    static const float li_l[] = {0, 0, 0, 1.5f};
    long cells = 0, bad = 0, bad_print = 0, bad_threads = 0, times = 0, bad_time = 0;
    int shown = 0;
    for (long it = 0; it < n; it++) {
        int nNodes = pick(nodes_l), ppn = pick(ppn_l), nRanks = nNodes * ppn;
        if (nRanks < 2)
            nRanks = 2, ppn = 2;
        int sm = pick(sm_l), sm2 = rnd(8) ? sm : pick(sm_l);
        int minsm = sm < sm2 ? sm : sm2, maxsm = sm < sm2 ? sm2 : sm;
        static struct ncclComm comm;
        memset(&comm, 0, sizeof(comm));
        comm.nRanks = nRanks;
        comm.nNodes = nNodes;
        comm.minCompCap = minsm;
        comm.maxCompCap = maxsm;
        comm.cpuArch = power    ? NCCL_TOPO_CPU_ARCH_POWER
                       : rnd(2) ? NCCL_TOPO_CPU_ARCH_X86
                                : NCCL_TOPO_CPU_ARCH_ARM;
        comm.cpuVendor = 1 + rnd(4);
        shim_cpu_arch = comm.cpuArch;
        shim_cpu_vendor = comm.cpuVendor;
        comm.netDeviceType = rnd(4) ? NCCL_NET_DEVICE_HOST : 1;
        comm.config.collnetEnable = rnd(3) == 0;
        comm.collNetSupport = comm.config.collnetEnable;
        comm.collNetHeadsNum = rnd(10);
        comm.collNetChainSupport = rnd(3) != 0;
        static shimCollNet cn = {(void *)1, (void *)1};
        comm.ncclCollNet = rnd(2) ? &cn : NULL;
        static int r2n[256];
        static shimNodeRanks nr[64];
        for (int r = 0; r < nRanks; r++)
            r2n[r] = r / ppn;
        for (int k = 0; k < nNodes; k++)
            nr[k].localRanks = ppn;
        comm.rankToNode = r2n;
        comm.nodeRanks = nr;
        shim_nvs_count = rnd(2);
        static struct ncclTopoGraph g[5];
        for (int a = 0; a < 5; a++) {
            g[a].nChannels = (a >= 2 && rnd(3) == 0) ? 0 : 1 + rnd(16);
            g[a].bwIntra = pick(bw_l);
            g[a].bwInter = rnd(2) ? g[a].bwIntra : pick(bw_l);
            g[a].typeIntra = pick(ti_l);
            g[a].typeInter = pick(te_l);
            g[a].pattern = a == 0 ? 1 + rnd(3) : 4;
            g[a].sameChannels = rnd(2);
            g[a].latencyInter = pick(li_l);
        }
        comm.maxTreePattern = g[0].pattern;
        comm.nChannels = 1 + rnd(32);
#ifdef SHIM_TUNER_CONSTANTS
        ncclTopoInitTunerConstants(&comm);
#endif
#if SHIM_NUM_ALGORITHMS == 4
        ncclTopoTuneModel(&comm, minsm, maxsm, &g[0], &g[1], &g[2]);
#else
        struct ncclTopoGraph *graphs[7] = {&g[0], &g[1], &g[2], &g[3], &g[4], &g[4], &g[0]};
        ncclTopoTuneModel(&comm, minsm, maxsm, graphs);
#endif
        nt_model_input_t in;
        nt_model_input_init(&in, version, nRanks, nNodes);
        in.ppn = ppn;
        in.min_sm = minsm;
        in.max_sm = maxsm;
        in.cpu_arch = comm.cpuArch == 1   ? NT_CPU_ARCH_X86
                      : comm.cpuArch == 2 ? NT_CPU_ARCH_POWER
                                          : NT_CPU_ARCH_ARM;
        in.cpu_vendor = (nt_cpu_vendor_t)(comm.cpuVendor - 1);
        in.cuda_runtime = CUDART_VERSION;
        in.comm_nchannels = comm.nChannels;
        in.collnet_enable = comm.config.collnetEnable;
        in.collnet_heads = comm.collNetHeadsNum;
        in.collnet_chain_support = comm.collNetChainSupport;
        in.collnet_ag_rs = comm.ncclCollNet != NULL;
        in.nvs_count = shim_nvs_count;
        in.net_device_host = comm.netDeviceType == NCCL_NET_DEVICE_HOST;
        for (int a = 0; a < 5; a++) {
            in.graph[a].nchannels = g[a].nChannels;
            in.graph[a].bw_intra_GBps = g[a].bwIntra;
            in.graph[a].bw_inter_GBps = g[a].bwInter;
            in.graph[a].type_intra = (nt_path_t)g[a].typeIntra;
            in.graph[a].type_inter = (nt_path_t)g[a].typeInter;
            in.graph[a].pattern = g[a].pattern;
            in.graph[a].same_channels = g[a].sameChannels;
            in.graph[a].latency_inter_us = g[a].latencyInter;
        }
#if SHIM_NUM_ALGORITHMS == 4
        in.graph[NT_ALGO_COLLNET_CHAIN] = in.graph[NT_ALGO_COLLNET_DIRECT];
#endif
        nt_model_env_filter_t env;
        if (nt_model_env_filter_parse(version, getenv("NCCL_ALGO"), getenv("NCCL_PROTO"), &env,
                                      NULL, 0) != NT_OK) {
            printf("bad NCCL_ALGO/NCCL_PROTO\n");
            return 2;
        }
        nt_model_table_t t;
        if (nt_model_compute(&in, &env, &t) != NT_OK) {
            printf("model refused version %d\n", version);
            return 2;
        }
        for (int c = 0; c < 5; c++)
            for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
                for (int p = 0; p < 3; p++) {
                    cells++;
                    double nl = comm.latencies[c][a][p], nb = comm.bandwidths[c][a][p];
                    double ml = t.cell[c][a][p].lat_us, mb = t.cell[c][a][p].bw_GBps;
                    int d = differ(nl, ml) || differ(nb, mb);
                    bad += d;
                    bad_print += printed_differ(nl, ml) || printed_differ(nb, mb);
                    if (d && shown < 10) {
                        shown++;
                        printf("  it %ld %dx%d sm %d/%d arch %d vendor %d: %s %s/%s NCCL %.4f/%.4f "
                               "model %.4f/%.4f\n",
                               it, nNodes, ppn, minsm, maxsm, comm.cpuArch, comm.cpuVendor,
                               ncclFuncStr[c], ncclAlgoStr[a], ncclProtoStr[p], nl, nb, ml, mb);
                    }
                }
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int p = 0; p < 3; p++)
                bad_threads += comm.maxThreads[a][p] != t.max_threads[a][p];
        for (int k = 0; k < 8; k++) {
            int c = rnd(5), a = rnd(NCCL_NUM_ALGORITHMS), p = rnd(3),
                pipe = 1 + (rnd(4) == 0 ? rnd(20) : 0);
            size_t nbytes = (size_t)1 << rnd(34);
            nbytes += rnd(3) ? 0 : rnd(1000);
            float nt;
#if SHIM_NUM_ALGORITHMS == 4
            struct ncclInfo info = {&comm, c, nbytes, 0};
            ncclTopoGetAlgoTime(&info, a, p, pipe, &nt);
#elif defined(SHIM_ALGOTIME_INFO)
            /* no backup pointer: the Ring fallback's time (ringbdw) is not modelled */
            struct ncclInfo info = {&comm, c, nbytes, 0};
            ncclTopoGetAlgoTime(&info, a, p, pipe, &nt, NULL);
#elif defined(SHIM_ALGOTIME_BACKUP)
            ncclTopoGetAlgoTime(&comm, c, a, p, nbytes, pipe, &nt, NULL);
#else
            ncclTopoGetAlgoTime(&comm, c, a, p, nbytes, pipe, &nt);
#endif
            double mt = nt_model_time_us(&in, &t, (nt_coll_t)c, (nt_algo_t)a, (nt_proto_t)p, nbytes,
                                         pipe, NULL);
            times++;
            if (differ(nt, mt)) {
                bad_time++;
                if (shown < 20) {
                    shown++;
                    printf("  time it %ld %s %s/%s %zu B x%d: NCCL %.4f model %.4f\n", it,
                           ncclFuncStr[c], ncclAlgoStr[a], ncclProtoStr[p], nbytes, pipe, nt, mt);
                }
            }
        }
    }
    printf("version %d (%s%s%s%s%s): %ld communicators, %ld cells: %ld differ (%ld in NCCL's %%.1f "
           "print), thread counts "
           "differ %ld, %ld call times: %ld differ\n",
           version, power ? "POWER" : "x86/Arm", getenv("NCCL_ALGO") ? ", NCCL_ALGO=" : "",
           getenv("NCCL_ALGO") ? getenv("NCCL_ALGO") : "",
           getenv("NCCL_PROTO") ? ", NCCL_PROTO=" : "",
           getenv("NCCL_PROTO") ? getenv("NCCL_PROTO") : "", n, cells, bad, bad_print, bad_threads,
           times, bad_time);
    return bad || bad_threads || bad_time ? 1 : 0;
}
