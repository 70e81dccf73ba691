/* Reader of NCCL's printed tuning table (the INFO(NCCL_TUNING) "Latency/AlgBw" lines rank 0
 * writes at init), in every layout NCCL has used:
 *   NVIDIA/nccl 2.6-2.13   one row per function, 9 cells   Tree/Ring/CollNet x LL/LL128/Simple
 *               2.14-2.16  12 cells (CollNetDirect, CollNetChain), 2.17 15 cells (+ NVLS)
 *               2.18-2.22  blocks of 3 algorithms with "Algorithm"/"Protocol"/"Max NThreads"
 *                          header rows (2 blocks), 2.23+ three blocks (PAT)
 *               (v2.28.9-1 src/graph/tuning.cc:499-539 prints the block layout).
 * Lines may carry host/rank prefixes ("host:123:123 [0] NCCL INFO"), be hard-wrapped, indented,
 * or interleaved with other log lines; partial tables are kept cell by cell (a cut cell is not
 * kept). A function row without a "lat/bw" cell is not the table's (NCCL's Func/Proto/Algo
 * matrix of 0/1/2 flags has the same function names). The algorithm indices are NCCL's
 * (tuner/model.h nt_algo_t). */
#ifndef NETTUNE_NCCL_TABLE_H
#define NETTUNE_NCCL_TABLE_H

#include <stddef.h>

#include "nettune/status.h"

#define NT_NCCL_TABLE_COLLS 5
#define NT_NCCL_TABLE_ALGOS 7
#define NT_NCCL_TABLE_PROTOS 3

typedef enum nt_nccl_table_layout {
    NT_NCCL_TABLE_NONE = 0,
    NT_NCCL_TABLE_ROWS,  /* one row per function, before 2.18 (9, 12 or 15 cells) */
    NT_NCCL_TABLE_BLOCKS /* the block layout, 2.18+ */
} nt_nccl_table_layout_t;

typedef struct nt_nccl_table {
    int version; /* NCCL_VERSION_CODE from the log's "NCCL version" line; 0 if absent */
    nt_nccl_table_layout_t layout;
    int ncols;   /* row layout: cells per row (9, 12, 15); block layout: 0 */
    int nblocks; /* block layout: blocks seen (a header or a row of them) */
    int has[NT_NCCL_TABLE_COLLS][NT_NCCL_TABLE_ALGOS][NT_NCCL_TABLE_PROTOS];
    float lat_us[NT_NCCL_TABLE_COLLS][NT_NCCL_TABLE_ALGOS][NT_NCCL_TABLE_PROTOS];
    float bw_GBps[NT_NCCL_TABLE_COLLS][NT_NCCL_TABLE_ALGOS][NT_NCCL_TABLE_PROTOS];
    int has_threads[NT_NCCL_TABLE_ALGOS][NT_NCCL_TABLE_PROTOS];
    int max_threads[NT_NCCL_TABLE_ALGOS][NT_NCCL_TABLE_PROTOS];
    int ncells; /* cells with has[][][] set */
} nt_nccl_table_t;

/* nt_nccl_table_parse - find NCCL's tuning table in the log text TEXT (LEN bytes, need not end in
 * NUL) and fill T. The first table of the log is read (rank 0 prints it once per communicator).
 * Errors: NT_ERR_NOT_FOUND when the text holds no table lines (ERR, may be NULL, says so). */
nt_status_t nt_nccl_table_parse(const char *text, size_t len, nt_nccl_table_t *t, char *err,
                                size_t errlen);

/* nt_nccl_table_read - nt_nccl_table_parse() on the file PATH. Errors: NT_ERR_NOT_FOUND,
 * NT_ERR_IO, and those of nt_nccl_table_parse(). */
nt_status_t nt_nccl_table_read(const char *path, nt_nccl_table_t *t, char *err, size_t errlen);

#endif
