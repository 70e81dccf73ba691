/* nettune-watch: command line. Parses the options into one params struct, runs, and returns
 * the exit code run.c chose (include/nettune/exitcode.h). */
#include <stdio.h>

#include "nettune/exitcode.h"
#include "nettune/report.h"
#include "nettune/version.h"
#include "watch.h"

int main(int argc, char **argv)
{
    nt_watch_params_t p;
    nt_watch_action_t action;
    char err[8192];
    nt_output_set_tool("nettune watch");
    if (nt_watch_params_parse(argc, argv, &p, &action, err, sizeof(err)) != NT_OK) {
        fprintf(stderr, "nettune watch: %s\n", err);
        return NT_EXIT_USAGE;
    }
    if (action == NT_WATCH_HELP) {
        nt_watch_usage(stdout);
        return NT_EXIT_OK;
    }
    if (action == NT_WATCH_VERSION) {
        printf("nettune watch %s\n", nt_version());
        return NT_EXIT_OK;
    }
    return nt_watch_run(&p);
}
