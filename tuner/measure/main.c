/* nettune-tune-measure (tuner/measure/measure.h, docs/tuner-measure.md): times the plan's
 * candidates through NCCL and writes nettune.measured/1 for nettune tune --measured. The options
 * are parsed and checked (params.c), then run (run.c); --verify-child is the defaults side
 * that --verify starts. Only main() picks the exit code. */
#include <stdio.h>
#include <string.h>

#include "measure.h"
#include "nettune/exitcode.h"
#include "nettune/version.h"

int main(int argc, char **argv)
{
    nt_measure_params_t p;
    nt_measure_action_t action;
    char err[512];

    if (argc > 1 && !strcmp(argv[1], "--verify-child"))
        return nt_measure_child_run(argc, argv);
    if (nt_measure_params_parse(argc, argv, &p, &action, err, sizeof(err)) != NT_OK) {
        fprintf(stderr, "nettune-tune-measure: %s\n", err);
        return NT_EXIT_USAGE;
    }
    switch (action) {
    case NT_MEASURE_ACTION_HELP:
        nt_measure_params_usage(stdout);
        return NT_EXIT_OK;
    case NT_MEASURE_ACTION_VERSION:
        printf("nettune-tune-measure %s\n", nt_version());
        return NT_EXIT_OK;
    case NT_MEASURE_ACTION_RUN:
        break;
    }
    return nt_measure_run(&p);
}
