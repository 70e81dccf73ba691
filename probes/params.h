/* Command-line parsing of nettune-probe into nt_probe_params_t. */
#ifndef NETTUNE_PARAMS_H
#define NETTUNE_PARAMS_H

#include <stdio.h>

#include "nettune/units.h"
#include "probe.h"

typedef enum nt_params_action {
    NT_ACTION_RUN = 0,
    NT_ACTION_HELP,
    NT_ACTION_VERSION,
    NT_ACTION_PRINT_THRESHOLDS
} nt_params_action_t;

/* nt_params_parse - parse argv into p (defaults first). On a bad option writes a one-line
 * message naming the option and the fix into err and returns NT_ERR_INVALID. */
nt_status_t nt_params_parse(int argc, char **argv, nt_probe_params_t *p, nt_params_action_t *action,
                            char *err, size_t errlen);

/* nt_params_usage - the --help text. */
void nt_params_usage(FILE *f);

#endif
