/* Command-line parsing of nettune-doctor into nt_doctor_params_t: every option checked before
 * anything runs. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_cmd.h"
#include "nettune/exitcode.h"
#include "nettune/report.h"
#include "nettune/thresholds.h"
#include "nettune/version.h"

/* The --help text (doctor_cmd.h). */
void nt_doctor_usage(FILE *out)
{
    fprintf(out,
            "usage: nettune doctor [options] FILE...\n"
            "Reads NCCL debug logs (NCCL_DEBUG=INFO/WARN) and nccl-tests outputs and explains "
            "what went wrong.\n"
            "Also reads, detected by content: nvidia-smi topo -m, nvidia-smi nvlink -s, "
            "ibv_devinfo (-v, -vv), ibstat,\n"
            "NCCL topology/graph XML, kernel logs (dmesg, journalctl: Xid, mlx5 link), systemctl "
            "status\n"
            "nvidia-fabricmanager, pdsh/clush 'host: ' prefixes,\n"
            "dshbak blocks, and any of them gzip-compressed.\n"
            "FILE may be '-' for standard input; several files are read as one job.\n"
            "\n"
            "  -o, --output FILE      write the nettune.diagnosis/1 JSON document to FILE "
            "('-' = stdout)\n"
            "  -f, --format FMT       what stdout shows: text (default) or json\n"
            "  -q, --quiet            no summary on stdout\n"
            "  -e, --expect K=V,...   hardware and thresholds for busbw verdicts: "
            "gpus_per_node, nics_per_node,\n"
            "                         nic_rate_Gbps, gpu_model, efficiency (warn ratio, "
            "default 0.90),\n"
            "                         error_efficiency (default 0.50), min_busbw_GBps; "
            "thresholds-file spellings\n"
            "                         gpus, nics, nic_rate_gbps, min_bw_GBps are accepted; "
            "the probe's pcie and\n"
            "                         nvlinks are refused (nothing here judges them);\n"
            "                         collective=NAME (all_reduce, sendrecv, alltoall, ...) "
            "when the log does not say\n"
            "      --require busbw    exit 1 when a run's busbw could not be judged (hardware "
            "unknown)\n"
            "      --host H           the next FILE is from host H (operator files without host "
            "names)\n"
            "  -r, --report FILE      a nettune.report/1: hardware for the verdicts, and a "
            "cross-check with the\n"
            "                         probe (ACTIVE RDMA ports while NCCL used sockets)\n"
            "      --kb FILE          use this knowledge base instead of the built-in one\n"
            "      --print-kb         write the built-in knowledge base to stdout and exit\n"
            "      --color WHEN       colour the text: auto (default, only on a terminal), "
            "always, never\n"
            "  -h, --help             this help\n"
            "      --version          print the version\n"
            "\n"
            "Exit status: 0 no finding of severity warn or error, 1 at least one, 2 bad "
            "usage, an unreadable,\n"
            "binary or empty input, or an input with no NCCL or nccl-tests lines.\n");
}
/* Parse and check argv into p (doctor_cmd.h): -1 to run, else the exit code. */
int nt_doctor_params_parse(int argc, char **argv, nt_doctor_params_t *p)
{
    enum { OPT_KB = 256, OPT_PRINT_KB, OPT_COLOR, OPT_VERSION, OPT_HOST, OPT_REQUIRE };
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"quiet", no_argument, NULL, 'q'},
                                             {"expect", required_argument, NULL, 'e'},
                                             {"report", required_argument, NULL, 'r'},
                                             {"kb", required_argument, NULL, OPT_KB},
                                             {"print-kb", no_argument, NULL, OPT_PRINT_KB},
                                             {"color", required_argument, NULL, OPT_COLOR},
                                             {"colour", required_argument, NULL, OPT_COLOR},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, OPT_VERSION},
                                             {"host", required_argument, NULL, OPT_HOST},
                                             {"require", required_argument, NULL, OPT_REQUIRE},
                                             {NULL, 0, NULL, 0}};
    int c;
    const char *host = NULL;
    memset(p, 0, sizeof(*p));
    p->colour = -1;
    nt_hw_init(&p->hw);
    p->inputs = calloc((size_t)argc + 1, sizeof(char *));
    p->hosts = calloc((size_t)argc + 1, sizeof(char *));
    if (!p->inputs || !p->hosts) {
        fprintf(stderr, "nettune-doctor: out of memory\n");
        return NT_EXIT_USAGE;
    }
    opterr = 0;
    /* '-': inputs come back in order (as 1), so that --host H names the host of the next FILE */
    while ((c = getopt_long(argc, argv, "-:o:f:qe:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 1:
            p->hosts[p->ninputs] = host;
            p->inputs[p->ninputs++] = optarg;
            host = NULL;
            break;
        case OPT_REQUIRE:
            if (strcmp(optarg, "busbw") != 0) {
                fprintf(stderr, "nettune-doctor: --require takes busbw, not '%s'\n", optarg);
                return NT_EXIT_USAGE;
            }
            p->require_busbw = 1;
            break;
        case OPT_HOST:
            if (!optarg[0] || strchr(optarg, ' ')) {
                fprintf(stderr, "nettune-doctor: --host needs a host name, not '%s'\n", optarg);
                return NT_EXIT_USAGE;
            }
            /* --host names the one FILE after it: a second before that FILE would drop the first */
            if (host) {
                fprintf(stderr,
                        "nettune-doctor: --host %s is followed by --host %s with no FILE between: "
                        "give each --host before its own FILE\n",
                        host, optarg);
                return NT_EXIT_USAGE;
            }
            host = optarg;
            break;
        case 'o':
            p->output = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "json") == 0)
                p->format_json = 1;
            else if (strcmp(optarg, "text") == 0)
                p->format_json = 0;
            else {
                fprintf(stderr, "nettune-doctor: unknown format '%s' (text or json)\n", optarg);
                return NT_EXIT_USAGE;
            }
            break;
        case 'q':
            p->quiet = 1;
            break;
        case 'e': {
            char err[512];
            if (nt_hw_apply_expect(&p->hw, optarg, err, sizeof(err)) != 0) {
                fprintf(stderr, "nettune-doctor: %s\n", err);
                return NT_EXIT_USAGE;
            }
            break;
        }
        case 'r':
            p->report = optarg;
            break;
        case OPT_KB:
            p->kb = optarg;
            break;
        case OPT_PRINT_KB:
            p->print_kb = 1;
            break;
        case OPT_COLOR:
            if (strcmp(optarg, "auto") == 0)
                p->colour = -1;
            else if (strcmp(optarg, "always") == 0)
                p->colour = 1;
            else if (strcmp(optarg, "never") == 0)
                p->colour = 0;
            else {
                fprintf(stderr, "nettune-doctor: --color takes auto, always or never, not '%s'\n",
                        optarg);
                return NT_EXIT_USAGE;
            }
            break;
        case 'h':
            nt_doctor_usage(stdout);
            return 0;
        case OPT_VERSION:
            printf("nettune-doctor %s\n", nt_version());
            return 0;
        case ':':
            fprintf(stderr, "nettune-doctor: option '%s' needs a value\n", argv[optind - 1]);
            return NT_EXIT_USAGE;
        default:
            fprintf(stderr, "nettune-doctor: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return NT_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++) { /* after "--" */
        p->hosts[p->ninputs] = host;
        p->inputs[p->ninputs++] = argv[i];
        host = NULL;
    }
    if (host) {
        fprintf(stderr,
                "nettune-doctor: --host %s names the host of the FILE after it: give that FILE\n",
                host);
        return NT_EXIT_USAGE;
    }
    if (p->print_kb && p->ninputs) {
        fprintf(stderr,
                "nettune-doctor: --print-kb takes no FILE ('%s' given): give --print-kb alone\n",
                p->inputs[0]);
        return NT_EXIT_USAGE;
    }
    if (p->print_kb)
        return -1;
    if (p->ninputs == 0) {
        fprintf(stderr,
                "nettune-doctor: no input: give one or more NCCL log files ('-' = stdin)\n");
        nt_doctor_usage(stderr);
        return NT_EXIT_USAGE;
    }
    /* the document's file: none of the inputs (the diagnosis would replace the log it is of),
     * and writable, checked before the inputs are read */
    if (p->output) {
        char why[4096 + 256];
        const char **all = calloc((size_t)p->ninputs + 2, sizeof(*all));
        nt_status_t st;
        if (!all) {
            fprintf(stderr, "nettune-doctor: out of memory\n");
            return NT_EXIT_USAGE;
        }
        memcpy(all, p->inputs, (size_t)p->ninputs * sizeof(*all));
        all[p->ninputs] = p->report;
        all[p->ninputs + 1] = p->kb;
        st = nt_output_preflight(&(nt_output_opt_t){"--output", p->output}, 1, all,
                                 (size_t)p->ninputs + 2, NULL, why, sizeof(why));
        free(all);
        if (st != NT_OK) {
            fprintf(stderr, "nettune-doctor: %s\n", why);
            return NT_EXIT_USAGE;
        }
    }
    return -1; /* go on */
}

/* Frees what the parser allocated (doctor_cmd.h). */
void nt_doctor_params_cleanup(nt_doctor_params_t *p)
{
    nt_hw_cleanup(&p->hw);
    free(p->inputs);
    free(p->hosts);
}
