/* nettune-doctor: the command (docs/doctor.md). main.c chooses the exit code, params.c parses and
 * checks the command line into nt_doctor_params_t, run.c reads the inputs, diagnoses and writes
 * the text summary and the JSON document. The pipeline (doctor.h, DOCTOR_OBJS, which nettune
 * tune links too) knows nothing of these files. */
#ifndef NT_DOCTOR_CMD_H
#define NT_DOCTOR_CMD_H

#include <stdio.h>

#include "doctor.h"

/* Everything the command line says, parsed and checked before anything runs. */
typedef struct nt_doctor_params {
    const char *output; /* JSON destination, "-" = stdout, NULL = none */
    int format_json;    /* stdout gets JSON instead of text */
    int quiet;
    int colour; /* -1 auto */
    const char *report;
    const char *kb;
    int print_kb;
    nt_hw_t hw;
    char **inputs;
    const char **hosts; /* --host given before each input, or NULL */
    int require_busbw;  /* --require busbw: a run whose busbw is not judged exits 1 */
    int ninputs;
} nt_doctor_params_t;

/* nt_doctor_usage - the --help text on out. */
void nt_doctor_usage(FILE *out);

/* nt_doctor_params_parse - parse and check argv into p (defaults first; p is set up for
 * nt_doctor_params_cleanup whatever it returns). Returns -1 to run, else the exit code
 * (0 after --help/--version, NT_EXIT_USAGE on a usage error, said on stderr). */
int nt_doctor_params_parse(int argc, char **argv, nt_doctor_params_t *p);

/* nt_doctor_params_cleanup - frees what nt_doctor_params_parse allocated in p. */
void nt_doctor_params_cleanup(nt_doctor_params_t *p);

/* nt_doctor_run - --print-kb, or reads p's inputs, diagnoses, writes the text summary and the
 * JSON document; returns the exit code (include/nettune/exitcode.h: 2 could not run or an input
 * unusable, 1 a warn/error finding, 0 healthy). */
int nt_doctor_run(nt_doctor_params_t *p);

#endif
