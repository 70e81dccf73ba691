/* nettune-probe: the MPI-launched cluster health check (or one node with --local). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drain.h"
#include "judge/judge.h"
#include "nettune/version.h"
#include "nettune/report.h"
#include "launcher_mpi.h"
#include "nettune/log.h"
#include "params.h"
#include "run.h"

/* The run's stop flag, and at once the report that says so: Open MPI's launcher forwards the
 * signal to the ranks and kills them about a second later (odls_base_sigkill_timeout), which
 * may be before rank 0's main loop gets to write. Rank 0 keeps that report ready
 * (nt_output_stash); other ranks have none. */
static void nt_on_signal(int sig)
{
    int first = !nt_probe_interrupt;
    nt_probe_interrupt = sig;
    /* The line first: Open MPI's SIGKILL may follow within ~10 ms, and the stashed report is
     * usually on disk already (written at the SIGCONT before). */
    if (first) {
        nt_probe_stop_line(sig);
        /* Written again even when the SIGCONT before wrote it: a report write of the run
         * may have put "in progress" back since. */
        nt_output_stash_rearm();
        nt_output_write_stash();
    }
}

/* Open MPI 4.1 ends a job by sending each rank SIGCONT, then SIGTERM a second later
 * (odls_base_sigkill_timeout), then SIGKILL within ~10 ms: on a loaded host rank 0 may not even
 * be scheduled in those 10 ms. SIGCONT is the early notice: the stopped report goes to disk
 * then. If no SIGTERM follows (a job suspended and resumed), the run's next progress write
 * puts the in-progress report back (run.c). */
static void nt_on_cont(int sig)
{
    (void)sig;
    if (!nt_probe_interrupt)
        nt_output_write_stash();
}

/* The stop signals (SIGTERM, SIGINT, and SIGHUP: a closed terminal or ssh session would kill
 * the run with "in progress" left on disk) and the SIGCONT notice. SIGHUP only when it was not
 * ignored when the probe started: under nohup it stays ignored. Called again after MPI_Init,
 * which may install handlers of its own; the first call's view of SIGHUP holds for both. */
static void nt_signals_install(void)
{
    static int hup_ignored = -1;
    struct sigaction sa, old;

    if (hup_ignored < 0)
        hup_ignored = sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == SIG_IGN;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = nt_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    if (!hup_ignored)
        sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = nt_on_cont;
    sigaction(SIGCONT, &sa, NULL);
}

int main(int argc, char **argv)
{
    nt_probe_params_t params;
    nt_params_action_t action;
    char err[512];
    nt_launcher_t *l;
    int code;

    nt_log_init(NULL, -1);
    if (nt_params_parse(argc, argv, &params, &action, err, sizeof(err)) != NT_OK) {
        /* Under mpirun/srun every rank parses the same line: one message is enough. */
        if (nt_launcher_env_rank() <= 0)
            fprintf(stderr, "nettune probe: %s\n", err);
        return NT_EXIT_USAGE;
    }
    {
        const char *root = getenv("NETTUNE_SYSFS_ROOT");
        struct stat sb;
        /* Set, it is meant: a tree that is not there would judge nothing and pass. */
        if (root && *root && (stat(root, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
            if (nt_launcher_env_rank() <= 0)
                fprintf(stderr,
                        "nettune probe: NETTUNE_SYSFS_ROOT='%s' is not a directory: give a "
                        "captured sysfs tree, or unset it for the live system\n",
                        root);
            return NT_EXIT_USAGE;
        }
    }
    switch (action) {
    case NT_ACTION_HELP:
        nt_params_usage(stdout);
        return NT_EXIT_OK;
    case NT_ACTION_VERSION:
        printf("nettune-probe %s\n", nt_version());
        return NT_EXIT_OK;
    case NT_ACTION_PRINT_THRESHOLDS:
        return nt_judge_print_thresholds(stdout) == NT_OK ? NT_EXIT_OK : NT_EXIT_USAGE;
    case NT_ACTION_RUN:
        break;
    }

    nt_signals_install();

    if (params.local) {
        l = nt_launcher_local_create();
        if (!l)
            return NT_EXIT_USAGE;
        code = nt_probe_run(&params, l, argc, argv);
        nt_launcher_local_destroy(l);
        /* A run that could not run (exit 2) wrote no report: the one on disk is an older
         * run's, and draining from it would act on stale findings. */
        if (!nt_probe_interrupt && code != NT_EXIT_USAGE)
            nt_drain_run(params.output, (nt_drain_mode_t)params.drain, params.resume_passing, 1,
                         stdout);
        return code;
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "nettune probe: MPI_Init failed: run it under mpirun/srun, or use --local "
                        "for one node\n");
        return NT_EXIT_USAGE;
    }
    /* MPI_Init may install its own handlers: ours go back on top. */
    nt_signals_install();
    l = nt_launcher_mpi_create(&nt_probe_interrupt);
    if (!l) {
        fprintf(stderr, "nettune probe: cannot set up the MPI launcher\n");
        MPI_Abort(MPI_COMM_WORLD, NT_EXIT_USAGE);
        return NT_EXIT_USAGE;
    }
    code = nt_probe_run(&params, l, argc, argv);
    if (nt_probe_lost) {
        /* A rank stopped answering: rank 0 wrote the report and called MPI_Abort, which ends
         * the job under Open MPI's default. Where Open MPI keeps the job alive
         * (orte_enable_recovery=1) every rank ends by itself, without MPI_Finalize, whose fence
         * would wait for the lost rank for ever. The other ranks first give rank 0's abort
         * time to end the job (an MPI process that exits on its own first makes mpirun end
         * the job itself, with its own code, while the abort's message may be lost). */
        int rank = nt_launcher_env_rank();
        if (rank <= 0)
            nt_drain_run(params.output, (nt_drain_mode_t)params.drain, params.resume_passing, 0,
                         stdout);
        else if (nt_launcher_mpi_ended() >= 0) {
            code = nt_launcher_mpi_ended();
            sleep(2);
        } else
            sleep((unsigned)(2.0 * params.peer_timeout_s + 5.0));
        fflush(NULL);
        _exit(code);
    }
    if (nt_probe_interrupt) {
        /* The launcher kills us within about a second: the report is on disk already. */
        return code;
    }
    {
        /* The drain decides from the report rank 0 wrote, not from the exit code. It runs
         * before MPI_Finalize: the other ranks wait in MPI_Finalize's fence meanwhile, so that
         * srun --kill-on-bad-exit does not end the step (and rank 0's scontrol) when they exit
         * 1 first. scontrol is fork+exec'd at once (no MPI calls in the child). */
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0 && code != NT_EXIT_USAGE)
            nt_drain_run(params.output, (nt_drain_mode_t)params.drain, params.resume_passing, 0,
                         stdout);
        /* The summary and DRAIN lines leave our stdio buffer before the fence: once another
         * rank has passed it and exits non-zero, mpirun may kill us at any moment. */
        fflush(NULL);
        nt_launcher_mpi_destroy(l);
        MPI_Finalize();
    }
    return code;
}
