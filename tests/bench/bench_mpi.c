/* Benchmark: the probe's MPI measurement against plain reference loops, alternated in one run
 * on two ranks. Reference latency: blocking MPI_Send/MPI_Recv ping-pong, total / (2 x iters)
 * (osu_latency). Reference bandwidth: window x MPI_Isend + MPI_Waitall + 4-byte ack per window,
 * bytes x window x iters / total (osu_bw), at the window the driver grew to. Ours: nt_mpi_measure,
 * the code nettune-probe runs, whose per-iteration samples are averaged (mean) so both sides report
 * the same statistic. Prints per repetition and the median ratio ours/reference (target: within
 * 3%). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/probe_mpi.h"
#include "nettune/clock.h"
#include "nettune/stats.h"

#define WINDOW 64

/* The probe's waits watch this flag (set by nettune-probe's signal handler). */
volatile sig_atomic_t nt_probe_interrupt;
#define REPS 7

static double ref_latency(MPI_Comm comm, int rank, char *buf, size_t bytes, unsigned iters)
{
    int peer = 1 - rank;
    double t0;
    MPI_Barrier(comm);
    t0 = nt_clock_s();
    for (unsigned i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, comm);
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, comm);
        }
    }
    return (nt_clock_s() - t0) / (2.0 * iters);
}

static double ref_bandwidth(MPI_Comm comm, int rank, char *sbuf, char *rbuf, size_t bytes,
                            unsigned window, unsigned iters)
{
    MPI_Request req[WINDOW];
    int peer = 1 - rank, ack = 0;
    double t0;
    MPI_Barrier(comm);
    t0 = nt_clock_s();
    for (unsigned i = 0; i < iters; i++) {
        if (rank == 0) {
            for (unsigned w = 0; w < window; w++)
                MPI_Isend(sbuf, (int)bytes, MPI_BYTE, peer, 2, comm, &req[w]);
            MPI_Waitall((int)window, req, MPI_STATUSES_IGNORE);
            MPI_Recv(&ack, 1, MPI_INT, peer, 3, comm, MPI_STATUS_IGNORE);
        } else {
            for (unsigned w = 0; w < window; w++)
                MPI_Irecv(rbuf, (int)bytes, MPI_BYTE, peer, 2, comm, &req[w]);
            MPI_Waitall((int)window, req, MPI_STATUSES_IGNORE);
            MPI_Send(&ack, 1, MPI_INT, peer, 3, comm);
        }
    }
    return (double)bytes * window * iters / (nt_clock_s() - t0);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int metric;
        size_t bytes;
    } cases[] = {{"latency 8 B", NT_BENCH_LATENCY, 8},
                 {"bandwidth 1 MiB", NT_BENCH_BANDWIDTH, 1 << 20},
                 {"bandwidth 4 MiB", NT_BENCH_BANDWIDTH, 4 << 20}};
    int rank, size;
    nt_mpi_state_t *st;
    char *sbuf, *rbuf;
    double budget = argc > 1 ? atof(argv[1]) : 0.2;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "bench_mpi: run with exactly 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    /* Touched buffers: untouched calloc pages all map the kernel's zero page, which would make
     * the reference read one cache-hot page and look faster than any real buffer. */
    sbuf = malloc(4 << 20);
    rbuf = malloc(4 << 20);
    if (sbuf && rbuf) {
        memset(sbuf, 0xa5, 4 << 20);
        memset(rbuf, 0, 4 << 20);
    }
    if (!sbuf || !rbuf || nt_mpi_state_create(MPI_COMM_WORLD, 4 << 20, 30.0, &st) != NT_OK)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (rank == 0)
        printf("MPI probe vs reference loops, 2 ranks, %d alternating repetitions, budget %.2f s\n",
               REPS, budget);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        double ratio[REPS], ours_v[REPS], ref_v[REPS];
        for (int r = 0; r < REPS; r++) {
            nt_bench_params_t bp;
            nt_bench_result_t res;
            nt_bench_params_default(&bp);
            bp.metric = cases[c].metric;
            bp.initiator = rank == 0;
            bp.budget_s = budget;
            bp.max_iters = cases[c].metric == NT_BENCH_LATENCY ? 200000 : 1000;
            if (nt_mpi_measure(st, 1 - rank, rank == 0, &bp, cases[c].bytes, &res) != NT_OK)
                MPI_Abort(MPI_COMM_WORLD, 1);
            /* The reference runs the same iteration count and window, right after. */
            unsigned iters = res.iters;
            double ref = cases[c].metric == NT_BENCH_LATENCY
                             ? ref_latency(MPI_COMM_WORLD, rank, sbuf, cases[c].bytes, iters)
                             : ref_bandwidth(MPI_COMM_WORLD, rank, sbuf, rbuf, cases[c].bytes,
                                             res.window, iters);
            if (rank == 0) {
                ours_v[r] = res.stats.mean;
                ref_v[r] = ref;
                ratio[r] = res.stats.mean / ref;
            }
        }
        if (rank == 0) {
            double rs[REPS], os[REPS], fs[REPS];
            memcpy(rs, ratio, sizeof(rs));
            memcpy(os, ours_v, sizeof(os));
            memcpy(fs, ref_v, sizeof(fs));
            double med = nt_stats_median(rs, REPS), mo = nt_stats_median(os, REPS),
                   mf = nt_stats_median(fs, REPS);
            int lat = cases[c].metric == NT_BENCH_LATENCY;
            printf("  %-16s ours %8.3f %s  reference %8.3f %s  ratio ours/ref %.3f (%+.1f%%) %s\n",
                   cases[c].name, lat ? mo * 1e6 : mo * 1e-9, lat ? "us  " : "GB/s",
                   lat ? mf * 1e6 : mf * 1e-9, lat ? "us  " : "GB/s", med, (med - 1) * 100,
                   (med > 0.97 && med < 1.03) ? "within 3%" : "OUTSIDE 3%");
        }
    }
    nt_mpi_state_destroy(st);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
