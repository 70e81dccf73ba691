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
/* nt_launcher_mpi_ended - the job's exit code once rank 0 said that the job ends (it calls
 * MPI_Abort next: a rank lost, the report written), else -1; once said, this rank's waits
 * return NT_ERR_PEER at once. */
int nt_launcher_mpi_ended(void);
/* nt_launcher_mpi_destroy - free the launcher and its communicator (before MPI_Finalize). */
void nt_launcher_mpi_destroy(nt_launcher_t *l);

/* nt_mpi_wait - MPI_Test loop on req until it completes, until timeout_s seconds pass
 * without completion (NT_ERR_TIMEOUT) or until *interrupt is set (NT_ERR_INTERRUPTED;
 * interrupt may be NULL). The deadline is per wait, not per measurement: a slow but live peer
 * (an oversubscribed host) only makes the run longer, a dead one costs timeout_s. sleep_us > 0
 * sleeps between tests (control waits: leave the cores to the measuring ranks); 0 spins and
 * reads the clock only every 1024 tests (measurement loops); NT_MPI_WAIT_YIELD spins 256 tests,
 * then gives the CPU up (sched_yield) after every test and, after 1 ms without completion,
 * sleeps 20 us between tests (measurement loops on an oversubscribed host, where spinning
 * ranks would starve the kernel's network processing: Open MPI's mpi_yield_when_idle, plus a
 * sleep for long waits). cancellable: req is a
 * point-to-point request, cancelled and freed on timeout or interrupt (collective requests
 * cannot be cancelled: they are left). */
#define NT_MPI_WAIT_YIELD ((unsigned)-1)
nt_status_t nt_mpi_wait(MPI_Request *req, double timeout_s, unsigned sleep_us,
                        volatile sig_atomic_t *interrupt, int cancellable);

#endif
