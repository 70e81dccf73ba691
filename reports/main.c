/* nettune-report: render, export, diff and validate nettune documents (docs/architecture.md "Commands").
 * Needs no MPI, CUDA, RDMA or hwloc library: it links the core, engine, NCCL-reader and judge
 * archives of lib/ (cJSON and zlib). main.c parses (params.c), runs (run.c) and returns the
 * exit code. */
#include "nettune/exitcode.h"
#include "nettune/log.h"
#include "nettune/report.h"
#include "report_cmd.h"

int main(int argc, char **argv)
{
    nt_report_params_t p;
    int r;

    nt_log_init(NULL, -1);
    nt_output_set_tool("nettune report");
    r = nt_report_params_parse(argc, argv, &p);
    if (r != 0)
        return r > 0 ? NT_EXIT_OK : NT_EXIT_USAGE;
    return nt_report_run(&p);
}
