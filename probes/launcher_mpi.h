/* The MPI launcher (only nettune-probe links MPI). */
#ifndef NETTUNE_LAUNCHER_MPI_H
#define NETTUNE_LAUNCHER_MPI_H

#include <mpi.h>
#include <signal.h>

#include "nettune/launcher.h"

/* nt_launcher_mpi_create - a launcher over a duplicate of MPI_COMM_WORLD (MPI already
 * initialised). Waits return NT_ERR_INTERRUPTED as soon as *interrupt becomes non-zero
 * (interrupt may be NULL). NULL on allocation or MPI failure. */
nt_launcher_t *nt_launcher_mpi_create(volatile sig_atomic_t *interrupt);
void nt_launcher_mpi_destroy(nt_launcher_t *l);

/* nt_mpi_wait - MPI_Test loop on req until it completes, deadline_s (nt_clock_s() value)
 * passes (NT_ERR_TIMEOUT; the request is cancelled when it is a receive) or *interrupt is set.
 * sleep_us > 0 sleeps between tests (control waits: leave the cores to the measuring ranks);
 * 0 spins (measurement loops). */
nt_status_t nt_mpi_wait(MPI_Request *req, double deadline_s, unsigned sleep_us,
                        volatile sig_atomic_t *interrupt);

#endif
