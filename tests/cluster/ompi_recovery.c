/*
 * ntc-ompi-recovery: a plain MPI program (no nettune) that shows what Open MPI's mpirun does
 * under orte_enable_recovery=1 when one rank is SIGKILLed and the others end on their own.
 * Run by `tests/cluster/run.sh ompi-recovery` (only when named) on 2 and on 4 hosts.
 *
 *   ntc-ompi-recovery MODE     MODE 0: every survivor calls MPI_Abort after rank 0 said so
 *                              MODE 1: rank 0 calls MPI_Abort, the others _exit(1)
 *
 * Rank 0 and the last rank exchange a message, everybody meets in a barrier, the last rank
 * kills itself, rank 0 tells the others (as nettune's probe does, nt_ml_abort) and they end.
 * Every wait is bounded (1 s for rank 0's word); mpirun itself is bounded by the caller.
 */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int r, n, mode = argc > 1 ? atoi(argv[1]) : 0, end = 1, x = 0, done = 0;
    MPI_Comm c;
    MPI_Request q, *req;
    double t0;

    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    if (n < 2)
        return MPI_Finalize(), 0;
    if (r == 0)
        MPI_Send(&x, 1, MPI_INT, n - 1, 1, c);
    else if (r == n - 1)
        MPI_Recv(&x, 1, MPI_INT, 0, 1, c, MPI_STATUS_IGNORE);
    MPI_Barrier(c);
    if (r == n - 1)
        raise(SIGKILL);
    sleep(2);
    if (r == 0) {
        req = calloc((size_t)n, sizeof(*req));
        for (int i = 0; i < n; i++)
            if (i == 0 || MPI_Isend(&end, 1, MPI_INT, i, 7, c, &req[i]) != MPI_SUCCESS)
                req[i] = MPI_REQUEST_NULL;
        for (t0 = now_s(); !done && now_s() - t0 < 1.0; usleep(1000))
            MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
        MPI_Abort(c, 1);
    }
    MPI_Irecv(&x, 1, MPI_INT, 0, 7, c, &q);
    for (t0 = now_s(); !done && now_s() - t0 < 1.0; usleep(1000))
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    sleep(1);
    if (mode == 0)
        MPI_Abort(c, 1);
    _exit(1);
}
