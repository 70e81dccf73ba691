/* nettune-doctor: command line. Parses and checks the options into one params struct
 * (params.c), runs (run.c: reads the inputs, diagnoses, writes the text summary and the JSON
 * document), and returns the exit code run.c chose (include/nettune/exitcode.h: 2 could not run
 * or an input unusable, 1 a warn/error finding, 0 healthy). */
#include "doctor_cmd.h"
#include "nettune/log.h"
#include "nettune/report.h"

int main(int argc, char **argv)
{
    nt_doctor_params_t p;
    nt_log_init(NULL, -1);
    nt_output_set_tool("nettune-doctor");
    int rc = nt_doctor_params_parse(argc, argv, &p);
    if (rc < 0)
        rc = nt_doctor_run(&p);
    nt_doctor_params_cleanup(&p);
    return rc;
}
