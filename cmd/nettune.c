/* nettune: the command dispatcher. Like git's external commands, `nettune <command> ...` runs
 * `nettune-<command>` from the directory of this executable, so only the commands that need
 * MPI (probe) link it, and report/doctor start on machines without MPI, CUDA or RDMA. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nettune/version.h"
#include "nettune/exitcode.h"

typedef struct nt_command {
    const char *name;
    const char *summary;
} nt_command_t;

static const nt_command_t nt_commands[] = {
    {"probe", "MPI-launched (or --local) health check of nodes and links: JSON report, exit code"},
    {"report", "render, export, diff or validate a report (text, md, html, prom, csv)"},
    {"doctor", "diagnose NCCL debug logs and nccl-tests outputs"},
    {"watch", "judge a job from NCCL Inspector's logs: a straggler rank, a hang"},
    {"tune", "model NCCL's choices, learn from nccl-tests outputs, write the tuner plugin's rules"},
    {"tune-measure", "time nettune tune's candidates through NCCL on the GPUs, or A/B a tuning file"},
};
#define NT_NCOMMANDS (sizeof(nt_commands) / sizeof(nt_commands[0]))

static int nt_self_dir(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    char *slash;
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    slash = strrchr(buf, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    return 0;
}

static void nt_usage(FILE *f, const char *dir)
{
    int w = 0; /* the names' column: as wide as the longest */
    for (size_t i = 0; i < NT_NCOMMANDS; i++)
        w = (int)strlen(nt_commands[i].name) > w ? (int)strlen(nt_commands[i].name) : w;
    fprintf(f,
            "usage: nettune <command> [options]     (nettune <command> --help for its options)\n\n"
            "commands:\n");
    for (size_t i = 0; i < NT_NCOMMANDS; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/nettune-%s", dir, nt_commands[i].name);
        fprintf(f, "  %-*s %s%s\n", w, nt_commands[i].name, nt_commands[i].summary,
                access(path, X_OK) == 0 ? "" : "  [not installed]");
    }
    fprintf(f,
            "  %-*s print the version\n\nexit codes: 0 healthy, 1 a check failed, 2 could not "
            "run, 3 stopped early (partial report written)\n",
            w, "version");
}

int main(int argc, char **argv)
{
    char dir[PATH_MAX], path[PATH_MAX + 32];
    const char *cmd;

    if (nt_self_dir(dir, sizeof(dir)) != 0)
        snprintf(dir, sizeof(dir), ".");
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        nt_usage(argc < 2 ? stderr : stdout, dir);
        return argc < 2 ? NT_EXIT_USAGE : NT_EXIT_OK;
    }
    cmd = argv[1];
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("nettune %s\n", nt_version());
        return NT_EXIT_OK;
    }
    if (strchr(cmd, '/') || cmd[0] == '-') {
        fprintf(stderr, "nettune: unknown command '%s' (see nettune --help)\n", cmd);
        return NT_EXIT_USAGE;
    }
    snprintf(path, sizeof(path), "%s/nettune-%s", dir, cmd);
    argv[1] = path;
    execv(path, argv + 1);
    if (errno == ENOENT) {
        int known = 0;
        for (size_t i = 0; i < NT_NCOMMANDS; i++)
            known |= strcmp(cmd, nt_commands[i].name) == 0;
        if (known)
            fprintf(stderr,
                    "nettune: command '%s' is not installed here ('%s' missing): "
                    "build it with make (see make config)\n",
                    cmd, path);
        else
            fprintf(stderr, "nettune: unknown command '%s' (see nettune --help)\n", cmd);
    } else {
        fprintf(stderr, "nettune: cannot run '%s': %s\n", path, strerror(errno));
    }
    return NT_EXIT_USAGE;
}
