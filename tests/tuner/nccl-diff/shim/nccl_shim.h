/* Just enough of NCCL's internal headers to compile NVIDIA/nccl src/graph/tuning.cc of one tag
 * on its own (tests/tuner/nccl-diff/run.sh), so the tuner model can be compared with NCCL's own
 * ncclTopoTuneModel() cell by cell. Values of the constants: v2.28.9-1 src/include/device.h,
 * src/graph/topo.h, src/include/plugin/nccl_tuner.h. The communicator holds the union of the
 * fields the modelled tags read (ringbdw to 2.23, collNetChainSupport from 2.30.7); run.sh
 * picks each tag's function signatures with SHIM_ macros. Nothing here is NCCL's code. */
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <strings.h>

typedef enum { ncclSuccess = 0, ncclInternalError = 3, ncclInvalidUsage = 5 } ncclResult_t;
#define NCCLCHECK(x)                                                                               \
    do {                                                                                           \
        ncclResult_t r_ = (x);                                                                     \
        if (r_ != ncclSuccess)                                                                     \
            return r_;                                                                             \
    } while (0)
#define INFO(...) ((void)0)
#define WARN(...) ((void)0)
#define TRACE(...) ((void)0)
#define NCCL_INIT 1
#define NCCL_GRAPH 2
#define NCCL_ENV 4
#define NCCL_TUNING 8
#define DIVUP(x, y) (((x) + (y)-1) / (y))
static inline long log2i(long n)
{
#ifdef SHIM_LOG2I_ZERO_IS_ZERO
    long l = 0;
    while (n >>= 1)
        l++;
    return l;
#else
    if (n <= 0)
        return -1;
    return 63 - __builtin_clzl((unsigned long)n);
#endif
}
static inline const char *ncclGetEnv(const char *name)
{
    return getenv(name);
}
#define NCCL_PARAM(name, env, deftVal)                                                             \
    static int64_t ncclParam##name()                                                               \
    {                                                                                              \
        const char *s = getenv("NCCL_" env);                                                       \
        return s ? strtoll(s, NULL, 0) : (int64_t)(deftVal);                                       \
    }

#define WARP_SIZE 32
#define NCCL_NUM_FUNCTIONS 5
typedef enum {
    ncclFuncBroadcast,
    ncclFuncReduce,
    ncclFuncAllGather,
    ncclFuncReduceScatter,
    ncclFuncAllReduce
} ncclFunc_t;
#ifndef SHIM_NUM_ALGORITHMS
#define SHIM_NUM_ALGORITHMS 7
#endif
#define NCCL_NUM_ALGORITHMS SHIM_NUM_ALGORITHMS
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6
#define NCCL_NUM_PROTOCOLS 3
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2
static const char *ncclFuncStr[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                    "AllReduce"};
static const char *ncclAlgoStr[] = {"Tree",     "Ring", "CollNetDirect", "CollNetChain", "NVLS",
                                    "NVLSTree", "PAT"};
static const char *ncclProtoStr[] = {"LL", "LL128", "Simple"};

#define NCCL_MAX_NTHREADS 640
#define NCCL_SIMPLE_MAX_NTHREADS 512
#define NCCL_LL_MAX_NTHREADS 512
#define NCCL_LL128_MAX_NTHREADS 640
#define NCCL_LL_THREAD_THRESHOLD 8
#define NCCL_LL128_THREAD_THRESHOLD 8
#define NCCL_SIMPLE_THREAD_THRESHOLD 64
#define NCCL_MAX_DEV_WORK_BATCH_COLLS 9
#define NCCL_MAX_WORK_ELEMENTS 9
#define PCI_BW 12.0

#define LINK_NVL 1
#define PATH_LOC 0
#define PATH_NVL 1
#define PATH_NVB 2
#define PATH_C2C 3
#define PATH_PIX 4
#define PATH_PXB 5
#define PATH_P2C 6
#define PATH_PXN 7
#define PATH_PHB 8
#define PATH_SYS 9
#define PATH_NET 10
#define PATH_DIS 11

#define NCCL_TOPO_CPU_ARCH_X86 1
#define NCCL_TOPO_CPU_ARCH_POWER 2
#define NCCL_TOPO_CPU_ARCH_ARM 3
#define NCCL_TOPO_CPU_VENDOR_INTEL 1
#define NCCL_TOPO_CPU_VENDOR_AMD 2
#define NCCL_TOPO_CPU_VENDOR_ZHAOXIN 3
#define NCCL_TOPO_CPU_VENDOR_MIXED 4
#define NCCL_TOPO_PATTERN_TREE 3
#define NCCL_NET_DEVICE_HOST 0

#define NCCL_HW_NVLINK 0
#define NCCL_HW_PCI 1
#define NCCL_HW_NET 2
#define NCCL_VOLTA_COMPCAP_IDX 0
#define NCCL_AMPERE_COMPCAP_IDX 1
#define NCCL_HOPPER_COMPCAP_IDX 2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_NUM_COMPCAPS 4
#define NCCL_ALGO_PROTO_IGNORE -1.0

typedef struct {
    double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    double hwLatencies[3][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    double llMaxBws[4][3];
    double perChMaxRingLL128Bws[4][3];
    double perChMaxTreeLL128Bws[4][3];
    double perChMaxTreeBws[4][3];
    double perChMaxNVLSTreeBws[4][3];
} ncclTunerConstants_t;

struct ncclTopoGraph {
    int pattern, nChannels, sameChannels, crossNic;
    float bwIntra, bwInter;
    float latencyInter;
    int typeIntra, typeInter;
};
struct shimCollNet {
    void *iallgather, *ireducescatter;
};
struct shimNodeRanks {
    int localRanks;
};
struct ncclConfig_shim {
    int collnetEnable;
};
struct ncclComm {
    int rank, nRanks, nNodes, nChannels, minCompCap, maxCompCap;
    int cpuArch, cpuVendor, netDeviceType, collNetHeadsNum, maxTreePattern, collNetSupport;
    int localRanks;
    int collNetChainSupport; /* read from v2.30.7-1 (tuning.cc:507) */
    struct ncclConfig_shim config;
    struct shimCollNet *ncclCollNet;
    int *rankToNode;
    struct shimNodeRanks *nodeRanks;
    void *topo;
    float minNetBw;
    ncclTunerConstants_t tunerConstants;
    int maxThreads[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    ssize_t threadThresholds[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float latencies[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float bandwidths[NCCL_NUM_FUNCTIONS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    float ringbdw[NCCL_NUM_FUNCTIONS][NCCL_NUM_PROTOCOLS]; /* 2.21-2.23's Ring fallback */
};
extern int shim_nvs_count;
extern int shim_cpu_arch, shim_cpu_vendor;
static inline ncclResult_t ncclTopoGetNvsCount(void *, int *n)
{
    *n = shim_nvs_count;
    return ncclSuccess;
}
static inline ncclResult_t ncclTopoGetMinNetBw(void *, float *bw)
{
    *bw = 0;
    return ncclSuccess;
}
static inline ncclResult_t ncclTopoCpuType(void *, int *arch, int *vendor, int *model)
{
    *arch = shim_cpu_arch;
    *vendor = shim_cpu_vendor;
    *model = 0;
    return ncclSuccess;
}
#ifndef CUDART_VERSION
#define CUDART_VERSION 12090
#endif
struct ncclInfo { /* 2.14's and 2.21's ncclTopoGetAlgoTime argument */
    struct ncclComm *comm;
    int coll;
    size_t nBytes;
    int nChannels;
};
