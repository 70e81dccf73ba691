/*
 * The NCCL tuner plugin ABI, declared by nettune itself (no NCCL header is needed to build).
 *
 * Source of every fact here: NCCL's public headers at tag v2.28.9-1,
 * src/include/plugin/tuner/tuner_v2.h .. tuner_v5.h, and at v2.30.7-1 tuner_v6.h,
 * src/include/plugin/nccl_common.h (ncclDebugLogger_t, NCCL_LOG_*, NCCL_TUNING) and
 * src/include/nccl.h (ncclResult_t, ncclFunc_t via nccl_common.h); summarised in
 * docs/reference.md section 1. The names are NCCL's so that the declarations can be compared
 * line by line with the originals. The static assertions below pin every size and offset that
 * docs/reference.md gives for x86_64 (LP64): a mistake here would make NCCL call through the
 * wrong slot.
 *
 * v6 (NCCL 2.30: getChunkSize appended, constants and NVLink-domain info those of v5) is the
 * newest version in NVIDIA/nccl up to v2.30.7-1, the mirror's newest tag: no tag has a v7.
 */
#ifndef NT_NCCL_TUNER_ABI_H
#define NT_NCCL_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

/* nccl.h */
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

/* nccl_common.h: log levels and subsystems */
typedef enum {
  NCCL_LOG_NONE = 0,
  NCCL_LOG_VERSION = 1,
  NCCL_LOG_WARN = 2,
  NCCL_LOG_INFO = 3,
  NCCL_LOG_ABORT = 4,
  NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

typedef enum {
  NCCL_INIT = 0x1,
  NCCL_COLL = 0x2,
  NCCL_P2P = 0x4,
  NCCL_SHM = 0x8,
  NCCL_NET = 0x10,
  NCCL_GRAPH = 0x20,
  NCCL_TUNING = 0x40,
  NCCL_ENV = 0x80,
  NCCL_ALLOC = 0x100,
  NCCL_CALL = 0x200,
  NCCL_PROXY = 0x400,
  NCCL_NVLS = 0x800,
  NCCL_BOOTSTRAP = 0x1000,
  NCCL_REG = 0x2000,
  NCCL_PROFILE = 0x4000,
  NCCL_RAS = 0x8000,
  NCCL_ALL = ~0
} ncclDebugLogSubSys;

/* NCCL's logger: printf-like; WARN is always printed, INFO only when NCCL_DEBUG=INFO and the
 * subsystem (flags) is in NCCL_DEBUG_SUBSYS. */
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

/* nccl_common.h: only Broadcast..AllReduce reach the tuner (not send/recv, not nRanks == 1). */
#define NCCL_NUM_FUNCTIONS 5
typedef enum {
  ncclFuncBroadcast = 0,
  ncclFuncReduce = 1,
  ncclFuncAllGather = 2,
  ncclFuncReduceScatter = 3,
  ncclFuncAllReduce = 4,
  ncclFuncSendRecv = 5,
  ncclFuncSend = 6,
  ncclFuncRecv = 7,
  ncclNumFuncs = 8
} ncclFunc_t;

/* Cost table indices (tuner.h / nccl_common.h, 2.28). */
#define NCCL_NUM_ALGORITHMS 7
#define NCCL_ALGO_UNDEF -1
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6

#define NCCL_NUM_PROTOCOLS 3
#define NCCL_PROTO_UNDEF -1
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2

/* Entries NCCL will not run are -1.0; never write into one. */
#define NCCL_ALGO_PROTO_IGNORE -1.0

/* Constants struct indices (tuner_v5.h and the example plugin). */
#define NCCL_NUM_HW_LINKS 3
#define NCCL_HW_NVLINK 0
#define NCCL_HW_PCI 1
#define NCCL_HW_NET 2
#define NCCL_NUM_COMPCAPS 4
#define NCCL_VOLTA_COMPCAP_IDX 0
#define NCCL_AMPERE_COMPCAP_IDX 1
#define NCCL_HOPPER_COMPCAP_IDX 2
#define NCCL_BLACKWELL_COMPCAP_IDX 3
#define NCCL_NUM_TUNING_SCALES 3
#define NCCL_TUNING_SCALE_1NODE 0
#define NCCL_TUNING_SCALE_2NODES 1
#define NCCL_TUNING_SCALE_4NODES 2

/* The protocols' chunk grain in bytes: NCCL rounds a chunk size down to a multiple of it
 * (v2.30.7-1 src/include/device.h:328-334: LL 16; LL128 WARP_SIZE 32 x
 * NCCL_LL128_SHMEM_ELEMS_PER_THREAD 8 / NCCL_LL128_LINEELEMS 16 x NCCL_LL128_DATAELEMS 15 x 8 =
 * 1920, device.h:110-117; Simple 512). */
#define NCCL_LL_GRAIN_BYTES 16
#define NCCL_LL128_GRAIN_BYTES 1920
#define NCCL_SIMPLE_GRAIN_BYTES 512

/* tuner_v5.h */
typedef struct {
  int nNvlDomains;          /* number of NVLink domains */
  int minRanksPerNvlDomain; /* minimum ranks across all NVLink domains */
  int maxRanksPerNvlDomain; /* maximum ranks across all NVLink domains */
} ncclNvlDomainInfo_v5_t;

typedef struct {
  double baseLatencies[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double hwLatencies[NCCL_NUM_HW_LINKS][NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
  double llMaxBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxRingLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeLL128Bws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
  double perChMaxNVLSTreeBws[NCCL_NUM_COMPCAPS][NCCL_NUM_TUNING_SCALES];
} ncclTunerConstants_v5_t;

typedef struct {
  const char *name;
  ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                       ncclTunerConstants_v5_t *constants);
  ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float **collCostTable, int numAlgo, int numProto, int regBuff,
                              int *nChannels);
  ncclResult_t (*finalize)(void *context);
} ncclTuner_v5_t;

/* tuner_v6.h (v2.30.7-1): v5 plus getChunkSize; the constants and NVLink-domain info are v5's
 * (tuner_v6.h:15-16). NCCL 2.30 looks for ncclTunerPlugin_v6 first (src/plugin/tuner.cc:73-84). */
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;
typedef struct {
  const char *name;
  ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                       ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v6_t *nvlDomainInfo,
                       ncclTunerConstants_v6_t *constants);
  ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float **collCostTable, int numAlgo, int numProto, int regBuff,
                              int *nChannels);
  ncclResult_t (*finalize)(void *context);
  /* Optional (NULL: NCCL's chunk size). *chunkSize holds NCCL's value on entry; NCCL clamps the
   * result to its buffer's maximum and rounds it down to the protocol's grain (v2.30.7-1
   * src/enqueue.cc:2308-2321). */
  ncclResult_t (*getChunkSize)(void *context, ncclFunc_t collType, size_t nBytes, int algo,
                               int proto, int nChannels, size_t *chunkSize);
} ncclTuner_v6_t;

/* tuner_v4.h */
typedef struct {
  const char *name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **context);
  ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float **collCostTable, int numAlgo, int numProto, int regBuff,
                              int *nChannels);
  ncclResult_t (*destroy)(void *context);
} ncclTuner_v4_t;

/* tuner_v3.h: v4 without regBuff */
typedef struct {
  const char *name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **context);
  ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                              float **collCostTable, int numAlgo, int numProto, int *nChannels);
  ncclResult_t (*destroy)(void *context);
} ncclTuner_v3_t;

/* tuner_v2.h: no cost table; the plugin names the algorithm and protocol itself */
typedef struct {
  const char *name;
  ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **context);
  ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int collNetSupport,
                              int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
                              int *nChannels);
  ncclResult_t (*destroy)(void *context);
} ncclTuner_v2_t;

/* ---- Layout checks (docs/reference.md section 1, x86_64 / LP64) ---- */
_Static_assert(sizeof(void *) == 8, "the tuner ABI is declared for LP64 targets only");
_Static_assert(sizeof(ncclResult_t) == 4 && sizeof(ncclFunc_t) == 4 &&
                   sizeof(ncclDebugLogLevel) == 4,
               "NCCL's enums are passed as int");
_Static_assert(NCCL_TUNING == 0x40, "NCCL_TUNING subsystem flag");
_Static_assert(NCCL_LOG_WARN == 2 && NCCL_LOG_INFO == 3, "NCCL log levels");

_Static_assert(sizeof(ncclNvlDomainInfo_v5_t) == 12, "ncclNvlDomainInfo_v5_t is 12 bytes");
_Static_assert(sizeof(ncclTunerConstants_v5_t) == 1152, "ncclTunerConstants_v5_t is 1152 bytes");
_Static_assert(offsetof(ncclTunerConstants_v5_t, baseLatencies) == 0, "baseLatencies @0");
_Static_assert(offsetof(ncclTunerConstants_v5_t, hwLatencies) == 168, "hwLatencies @168");
_Static_assert(offsetof(ncclTunerConstants_v5_t, llMaxBws) == 672, "llMaxBws @672");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxRingLL128Bws) == 768,
               "perChMaxRingLL128Bws @768");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeLL128Bws) == 864,
               "perChMaxTreeLL128Bws @864");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxTreeBws) == 960, "perChMaxTreeBws @960");
_Static_assert(offsetof(ncclTunerConstants_v5_t, perChMaxNVLSTreeBws) == 1056,
               "perChMaxNVLSTreeBws @1056");

#define NT_ASSERT_TUNER_LAYOUT(T, last)                                                            \
  _Static_assert(sizeof(T) == 32, #T " is 32 bytes");                                              \
  _Static_assert(offsetof(T, name) == 0, #T ".name @0");                                           \
  _Static_assert(offsetof(T, init) == 8, #T ".init @8");                                           \
  _Static_assert(offsetof(T, getCollInfo) == 16, #T ".getCollInfo @16");                           \
  _Static_assert(offsetof(T, last) == 24, #T "." #last " @24")
_Static_assert(sizeof(ncclTuner_v6_t) == 40, "ncclTuner_v6_t is 40 bytes");
_Static_assert(offsetof(ncclTuner_v6_t, init) == 8 && offsetof(ncclTuner_v6_t, getCollInfo) == 16 &&
                   offsetof(ncclTuner_v6_t, finalize) == 24,
               "ncclTuner_v6_t starts as ncclTuner_v5_t");
_Static_assert(offsetof(ncclTuner_v6_t, getChunkSize) == 32, "ncclTuner_v6_t.getChunkSize @32");
NT_ASSERT_TUNER_LAYOUT(ncclTuner_v5_t, finalize);
NT_ASSERT_TUNER_LAYOUT(ncclTuner_v4_t, destroy);
NT_ASSERT_TUNER_LAYOUT(ncclTuner_v3_t, destroy);
NT_ASSERT_TUNER_LAYOUT(ncclTuner_v2_t, destroy);

#endif /* NT_NCCL_TUNER_ABI_H */
