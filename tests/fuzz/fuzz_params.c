/* libFuzzer target for nettune-probe's option parser (probes/params.c, getopt_long) and the
 * option values it hands on: the input is split at newlines into argv (at most 64 words after
 * the program name) and parsed as a command line; the first line is also given to
 * --expect's and --require's parsers (lib/core/thresholds.c) and to the size parser of --sizes on
 * its own. A refused command line must come with a message. Any crash, leak or UB is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/thresholds.h"
#include "params.h"

#define NT_FUZZ_MAX_ARGS 64

/* The probe registry (probes/registry.c) names the probes --probes accepts; their code (MPI,
 * ibverbs, CUDA) is not needed to parse options: kinds only. */
const nt_link_probe_ops_t nt_mpi_probe_ops = {.kind = "mpi"};
const nt_link_probe_ops_t nt_rdma_probe_ops = {.kind = "rdma"};
const nt_link_probe_ops_t nt_gpu_probe_ops = {.kind = "gpu"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *argv[NT_FUZZ_MAX_ARGS + 2], err[512] = "";
    int argc = 0;
    nt_probe_params_t p;
    nt_params_action_t action;
    nt_expect_t e;
    unsigned req = 0;
    size_t bytes;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    /* The first line (NUL-terminated by the split below) through the value parsers alone. */
    argv[argc++] = "nettune-probe";
    for (char *s = text; argc <= NT_FUZZ_MAX_ARGS;) {
        char *nl = strchr(s, '\n');
        argv[argc++] = s;
        if (!nl)
            break;
        *nl = '\0';
        s = nl + 1;
    }
    argv[argc] = NULL;
    nt_expect_init(&e);
    nt_expect_parse(argv[1], 0, &e, err, sizeof(err));
    nt_require_parse(argv[1], &req, err, sizeof(err));
    nt_parse_size(argv[1], &bytes);
    err[0] = '\0';
    if (nt_params_parse(argc, argv, &p, &action, err, sizeof(err)) != NT_OK && !err[0])
        abort(); /* a refusal names the option and the fix */
    /* The options as nettune-probe would use them next: --expect once more through the parser
     * of the judge (a valid one must parse again). */
    if (p.expect) {
        char err2[512];
        nt_expect_init(&e);
        nt_expect_parse(p.expect, NT_EXPECT_FOR_PROBE, &e, err2, sizeof(err2));
    }
    free(text);
    return 0;
}
