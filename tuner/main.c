/* nettune-tune: reads the probe report, nccl-tests outputs and NCCL logs, models NCCL's
 * choices, learns from what was measured and writes the tuning file (docs/tuner-cli.md). The
 * options are parsed and checked (params.c), then run (run.c); only main() picks the exit
 * code. */
#include <stdio.h>

#include "nettune/exitcode.h"
#include "nettune/log.h"
#include "nettune/report.h"
#include "nettune/version.h"
#include "tune.h"

int main(int argc, char **argv)
{
    nt_tune_params_t p = {0};
    nt_tune_action_t action;
    char err[8192];

    nt_log_init(NULL, -1);
    nt_output_set_tool("nettune tune");
    if (nt_tune_params_parse(argc, argv, &p, &action, err, sizeof(err)) != NT_OK) {
        fprintf(stderr, "nettune tune: %s\n", err);
        return NT_EXIT_USAGE;
    }
    switch (action) {
    case NT_TUNE_ACTION_HELP:
        nt_tune_params_usage(stdout);
        return NT_EXIT_OK;
    case NT_TUNE_ACTION_VERSION:
        printf("nettune tune %s\n", nt_version());
        return NT_EXIT_OK;
    case NT_TUNE_ACTION_RUN:
        break;
    }
    return nt_tune_run(&p);
}
