/* nettune-doctor: command line. Parses and checks the options into one params struct, reads the
 * inputs, diagnoses, writes the text summary and the JSON document, and chooses the exit code
 * (include/nettune/exitcode.h: 2 could not run or an input unusable, 1 a warn/error finding, 0
 * healthy). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "doctor.h"
#include "nettune/version.h"
#include "nettune/exitcode.h"
#include "nettune/log.h"
#include "nettune/report.h"
#include "nettune/thresholds.h"

extern const unsigned char nt_doctor_kb_data[];

typedef struct {
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
} doctor_params_t;

static void nt_doctor_usage(FILE *out)
{
    fprintf(out,
            "usage: nettune doctor [options] FILE...\n"
            "Reads NCCL debug logs (NCCL_DEBUG=INFO/WARN) and nccl-tests outputs and explains "
            "what went wrong.\n"
            "Also reads, detected by content: nvidia-smi topo -m, nvidia-smi nvlink -s, "
            "ibv_devinfo (-v, -vv), ibstat,\n"
            "NCCL topology/graph XML, kernel logs (dmesg, journalctl: Xid, mlx5 link), pdsh/clush "
            "'host: ' prefixes,\n"
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
            "                         gpus, nics, nic_rate_gbps, min_bw_GBps are accepted, "
            "pcie is ignored;\n"
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

static int nt_parse_args(int argc, char **argv, doctor_params_t *p)
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
    if (p->print_kb)
        return -1;
    if (p->ninputs == 0) {
        fprintf(stderr,
                "nettune-doctor: no input: give one or more NCCL log files ('-' = stdin)\n");
        nt_doctor_usage(stderr);
        return NT_EXIT_USAGE;
    }
    return -1; /* go on */
}

/* The document through the one output writer (lib/output.c: a temporary file renamed over
 * `path`, links followed, "-" = stdout); 0 or -1 (the writer logged why). */
static int nt_write_json(const cJSON *doc, const char *path)
{
    return nt_json_write_atomic(doc, path) == NT_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
    doctor_params_t p;
    nt_log_init(NULL, -1);
    int rc = nt_parse_args(argc, argv, &p);
    nt_kb_t *kb = NULL;
    nt_doctor_t *d = NULL;
    char msg[1024];
    if (rc >= 0)
        goto out_params;
    if (p.print_kb) {
        fputs((const char *)nt_doctor_kb_data, stdout);
        rc = NT_EXIT_OK;
        goto out_params;
    }
    rc = NT_EXIT_USAGE;
    if (nt_kb_load(p.kb, &kb, msg, sizeof(msg)) != 0) {
        if (msg[0]) /* empty when the JSON reader already said why */
            fprintf(stderr, "nettune-doctor: %s\n", msg);
        goto out_params;
    }
    const char *missing = nt_doctor_kb_missing(kb);
    if (missing) {
        fprintf(stderr, "nettune-doctor: knowledge base '%s' has no entry for finding '%s'\n",
                kb->source, missing);
        goto out_kb;
    }
    d = nt_doctor_create(kb);
    if (!d) {
        fprintf(stderr, "nettune-doctor: out of memory\n");
        goto out_kb;
    }
    /* an unusable input is said once: in the text report's "skipped:" lines when that is
     * printed, else on stderr (JSON, --quiet, or no usable input) */
    int unusable = 0, usable = 0;
    char **skipped = calloc((size_t)p.ninputs + 1, sizeof(*skipped));
    if (p.report && nt_doctor_load_report(d, p.report, &p.hw, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "nettune-doctor: %s\n", msg);
        goto out_doctor;
    }
    for (int i = 0; i < p.ninputs; i++) {
        nt_doctor_set_host(d, p.hosts[i]);
        if (nt_doctor_read_file(d, p.inputs[i], msg, sizeof(msg)) != 0) {
            if (!skipped || !(skipped[unusable] = strdup(msg)))
                NT_ERROR(DOCTOR, "%s", msg);
            unusable++;
        } else {
            usable++;
        }
    }
    nt_doctor_diagnose(d, &p.hw);
    /* several files: each one read alone too, so that reading them together hides nothing (a
     * finding of one file that the joint diagnosis lacks is listed with what supersedes it) */
    for (int i = 0; usable > 1 && i < p.ninputs; i++) {
        if (strcmp(p.inputs[i], "-") == 0)
            continue;
        nt_doctor_t *one = nt_doctor_create(kb);
        if (!one)
            break;
        nt_doctor_set_host(one, p.hosts[i]);
        if (nt_doctor_read_file(one, p.inputs[i], msg, sizeof(msg)) == 0) {
            nt_doctor_diagnose(one, &p.hw);
            nt_doctor_compare_single(d, (unsigned)i, one);
        }
        nt_doctor_destroy(one);
    }
    int worst = nt_doctor_worst(d);
    rc = unusable                                                  ? NT_EXIT_USAGE
         : worst >= NT_SEV_WARN                                    ? NT_EXIT_FAIL
         : p.require_busbw && nt_doctor_not_judged(d, "busbw") > 0 ? NT_EXIT_FAIL
                                                                   : NT_EXIT_OK;

    int stdout_json = p.format_json || (p.output && strcmp(p.output, "-") == 0);
    cJSON *doc = NULL;
    if (p.output || p.format_json) {
        doc = nt_doctor_to_json(d, rc);
        if (!doc) {
            fprintf(stderr, "nettune-doctor: cannot build the JSON document: out of memory\n");
            rc = NT_EXIT_USAGE;
            goto out_doctor;
        }
    }
    if (p.output && strcmp(p.output, "-") != 0 && nt_write_json(doc, p.output) != 0)
        rc = NT_EXIT_USAGE;
    int text_report = !p.quiet && !stdout_json && (usable || nt_doctor_worst(d) >= 0);
    for (int i = 0; skipped && i < unusable; i++)
        if (skipped[i] && !text_report)
            NT_ERROR(DOCTOR, "%s", skipped[i]);
    if (!p.quiet) {
        if (stdout_json) {
            if (nt_write_json(doc, "-") != 0)
                rc = NT_EXIT_USAGE;
        } else if (text_report) {
            int colour = p.colour >= 0 ? p.colour : (isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
            nt_doctor_write_text(d, stdout, colour);
        }
    }
    cJSON_Delete(doc);
    if (fflush(stdout) != 0)
        rc = NT_EXIT_USAGE;
out_doctor:
    for (int i = 0; skipped && i < unusable; i++)
        free(skipped[i]);
    free(skipped);
    nt_doctor_destroy(d);
out_kb:
    nt_kb_destroy(kb);
out_params:
    nt_hw_cleanup(&p.hw);
    free(p.inputs);
    free(p.hosts);
    return rc;
}
