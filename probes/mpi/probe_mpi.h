/* The MPI point-to-point measurement of the MPI probe, also used by the benchmark
 * (tests/bench/bench_mpi.c) to compare it with plain reference loops in the same run. */
#ifndef NETTUNE_PROBE_MPI_H
#define NETTUNE_PROBE_MPI_H

#include <mpi.h>

#include "nettune/bench.h"

typedef struct nt_mpi_state nt_mpi_state_t;

/* nt_mpi_state_create - buffers of max_bytes and a private duplicate of base for the data
 * messages; every wait has timeout_s. NT_ERR_NOMEM, NT_ERR_SYSTEM (MPI_Comm_dup failed).
 * Collective over base. */
nt_status_t nt_mpi_state_create(MPI_Comm base, size_t max_bytes, double timeout_s,
                                nt_mpi_state_t **out);
/* nt_mpi_state_destroy - free the buffers and the communicator (NULL is fine). Collective.
 * After a wait that gave up (a signal, a dead peer) the buffers are kept, not freed: a
 * cancelled request may still be in MPI's hands. */
void nt_mpi_state_destroy(nt_mpi_state_t *s);

/* nt_mpi_measure - one size with the measurement driver, with rank peer (both ends call it):
 * bp->metric NT_BENCH_LATENCY = ping-pong, one-way = round trip / 2 (osu_latency);
 * NT_BENCH_BANDWIDTH = 64 MPI_Isend in flight then a 4-byte acknowledgement (osu_bw), one
 * sample (bytes/s) per window. NT_ERR_INVALID when bytes > max_bytes; NT_ERR_TIMEOUT when the
 * peer does not answer within the timeout; NT_ERR_INTERRUPTED on SIGTERM/SIGINT. */
nt_status_t nt_mpi_measure(nt_mpi_state_t *s, int peer, int initiator, const nt_bench_params_t *bp,
                           size_t bytes, nt_bench_result_t *res);

#endif
