/* nettune-report: the command (docs/report.md). main.c chooses the exit code, params.c parses
 * and checks the command line into nt_report_params_t, run.c renders, diffs, validates or reads
 * the history. The renderers (rpt.h, libntrender) know nothing of these files. */
#ifndef NT_REPORT_CMD_H
#define NT_REPORT_CMD_H

#include <stdio.h>

typedef enum nt_report_mode {
    NT_MODE_RENDER = 0,
    NT_MODE_DIFF,
    NT_MODE_VALIDATE,
    NT_MODE_HISTORY
} nt_report_mode_t;

typedef enum nt_color_when { NT_COLOR_AUTO = 0, NT_COLOR_ALWAYS, NT_COLOR_NEVER } nt_color_when_t;

/* Everything the command line says, parsed and checked before anything runs. */
typedef struct nt_report_params {
    nt_report_mode_t mode;
    const char *format; /* NULL: the mode's default */
    const char *output; /* NULL or "-": stdout */
    const char *node;
    double threshold_pct;
    int threshold_given; /* --regression-threshold was on the command line */
    int fail_on_vanished;
    long top;
    nt_color_when_t color;
    int quiet;
    char **files;
    int nfiles;
} nt_report_params_t;

/* nt_report_usage - the --help text on f. */
void nt_report_usage(FILE *f);

/* nt_report_params_parse - parse and check argv into p (defaults first). Returns 0 to run, 1
 * when --help/--version was answered (on stdout), -1 on a usage error (one line on stderr). */
int nt_report_params_parse(int argc, char **argv, nt_report_params_t *p);

/* nt_report_run - runs p's mode (render, diff, validate or history) and returns the exit code
 * (include/nettune/exitcode.h, README.md's precedence). */
int nt_report_run(const nt_report_params_t *p);

#endif
