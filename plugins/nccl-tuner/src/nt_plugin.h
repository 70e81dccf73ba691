/*
 * One tuner context per communicator (NCCL calls init once per communicator, possibly from
 * several threads at once). Everything a call needs lives here; the only process-wide mutable
 * state is the communicator counter behind %c before API v5 (plugin.c).
 */
#ifndef NT_PLUGIN_H
#define NT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "nccl_tuner_abi.h"
#include "nt_index.h"
#include "nt_tuning.h"

typedef struct {
  ncclDebugLogger_t log;
  int api;         /* tuner API version NCCL loaded: 2..6 */
  int has_comm_id; /* v5 passes a commId */
  uint64_t comm_id;
  unsigned long seq; /* per-process communicator number (before v5) */
  size_t nranks, nnodes;
  char *path; /* tuning file named by the environment, or NULL */
  nt_format_t format;
  int file_used;    /* 1 when the file was taken (rules indexed) */
  char *file_error; /* why it was rejected under NETTUNE_ON_ERROR=defaults, or NULL */
  uint64_t hash;    /* FNV-1a 64 of the file */
  size_t rules_loaded;
  nt_index_t ix;
  uint64_t calls[NCCL_NUM_FUNCTIONS];
  uint64_t kept_nccl[NCCL_NUM_FUNCTIONS]; /* calls where no rule fired */
  char *report_tmpl;                      /* NETTUNE_PLUGIN_REPORT, or NULL */
  /* Per collective, the chunk size of the measured rule that made getCollInfo's last choice
   * (chunk 0: none), for API v6's getChunkSize: NCCL asks it after the choice, per channel
   * (v2.30.7-1 src/enqueue.cc:724-738) or for the whole CollNet collective (:634). */
  struct {
    uint64_t nbytes; /* the collective's size as getCollInfo saw it */
    uint32_t chunk;
    int8_t algo, proto;
  } chunk_memo[NCCL_NUM_FUNCTIONS];
} nt_ctx_t;

/**
 * nt_report_expand - expand a NETTUNE_PLUGIN_REPORT template into @out (@outlen bytes):
 * %h host name, %p process id, %c communicator (@comm), %% a percent sign; any other % sequence
 * is copied as is. Returns 0, or -1 when the result does not fit (out is then truncated).
 */
int nt_report_expand(const char *tmpl, const char *host, long pid, const char *comm, char *out,
                     size_t outlen);

/**
 * nt_report_write - write @ctx's run summary (schema nettune.plugin-report/1: tuning file and
 * hash, calls per collective, calls where NCCL's choice was kept, per-rule fired and
 * unavailable counts) to the path expanded from ctx->report_tmpl. The JSON goes to a temporary
 * file beside it, then is renamed over it, so a reader never sees half a report.
 * Returns 0, or -1 with a message in @err.
 */
int nt_report_write(const nt_ctx_t *ctx, char *err, size_t errlen);

#endif /* NT_PLUGIN_H */
