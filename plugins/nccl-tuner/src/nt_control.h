/*
 * nettune_tuner_control_v1: the plugin's second exported object, for nettune-tune-measure only.
 * The measuring process finds it after NCCL loaded the plugin:
 *   void *h = dlopen("libnccl-tuner-nettune.so", RTLD_NOW | RTLD_NOLOAD);
 *   const nettune_tuner_control_v1_t *c = dlsym(h, NETTUNE_TUNER_CONTROL_SYMBOL);
 * and forces one candidate for every getCollInfo call that follows (on every communicator of
 * the process), then asks what the last call answered. NCCL itself never looks at it.
 *
 * A forced candidate overrides the tuning file's rules. When NCCL's cost table marks the
 * forced cell NCCL_ALGO_PROTO_IGNORE (-1.0: NCCL will not run it there) the table is left as
 * NCCL gave it, so NCCL's own choice runs, and the call is recorded with applied = 0: the
 * measuring process must then record the candidate as not applied instead of timing NCCL's
 * default under its name (NVIDIA/nccl v2.28.9-1 src/enqueue.cc topoGetAlgoInfo: the tuner's
 * table is read back by picking its minimum non-negative entry).
 *
 * Process-wide state: the forced candidate and the last answer are atomics (no lock on the
 * getCollInfo path). force/clear are to be called between collectives, not during them.
 * This header is plain C with no NCCL header: tuner/measure includes it too.
 */
#ifndef NT_CONTROL_H
#define NT_CONTROL_H

#include <stdint.h>

#define NETTUNE_TUNER_CONTROL_SYMBOL "nettune_tuner_control_v1"
/* 2 appended force_chunk and chunk_writes; a version-1 reader sees the same first members. */
#define NETTUNE_TUNER_CONTROL_VERSION 2

/* What the plugin's last getCollInfo call answered. */
typedef struct {
  uint64_t calls;  /* getCollInfo calls seen in this process (0: none yet) */
  int coll;        /* ncclFunc_t of the last call */
  uint64_t nbytes; /* its nBytes */
  int algo, proto; /* the table's cheapest entry on return = what NCCL runs; -1: none (v2) */
  int nchannels;   /* *nChannels on return (0: NCCL's) */
  int forced;      /* 1: a forced candidate was active for this call */
  int applied;     /* 1: the forced cell was runnable and written; 0: IGNORE, NCCL's choice ran */
} nettune_tuner_last_v1_t;

typedef struct {
  int version; /* NETTUNE_TUNER_CONTROL_VERSION */
  /* force - from the next call on, choose (algo, proto) (NCCL_ALGO_* / NCCL_PROTO_* indices)
   * and nchannels (> 0; 0 leaves NCCL's). Returns 0, or -1 for an index out of range. */
  int (*force)(int algo, int proto, int nchannels);
  /* clear - back to the tuning file's rules (or NCCL's choice without a file). */
  void (*clear)(void);
  /* last - copy the last call's answer into *out. Returns 0, or -1 before the first call. */
  int (*last)(nettune_tuner_last_v1_t *out);
  /* Version 2 and later only (check version first). */
  /* force_chunk - while a candidate is forced, answer NCCL's getChunkSize (tuner API v6, NCCL
   * 2.30+; earlier NCCL never asks) with bytes for the forced algorithm and protocol, as a
   * measured rule's chunk_bytes is answered; 0 leaves NCCL's. force and clear reset it, so call
   * it after force. Returns 0, or -1 when bytes is above INT_MAX (NCCL keeps an int). */
  int (*force_chunk)(uint32_t bytes);
  /* chunk_writes - how many getChunkSize calls in this process wrote a forced chunk size: a
   * count that did not move over a run says NCCL never asked (API v5 or older, or CollNet's
   * own path), so the chunk size was not applied. */
  uint64_t (*chunk_writes)(void);
} nettune_tuner_control_v1_t;

#endif /* NT_CONTROL_H */
