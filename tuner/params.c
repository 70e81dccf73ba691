/* nettune tune's command line: argv into nt_tune_params_t (tune.h), checked, then adjusted to
 * the defaults. What the options name (the report, --replay files and their labels, logs,
 * --measured files) is read by run.c. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nettune/report.h"
#include "nettune/units.h"
#include "reports/doctor/doctor.h"
#include "tune.h"

void nt_tune_params_usage(FILE *out)
{
    fprintf(
        out,
        "usage: nettune tune [REPORT | --report F] [--replay F [--label K=V,...]]...\n"
        "       [--nccl-log F]... [--nccl-version X.Y] [--sm N] [--cpu-vendor intel|amd|other]\n"
        "       [--shape NxP]... [--colls LIST] [--min-bytes N] [--max-bytes N]\n"
        "       [--objective total|geomean|no-regress] [--time-limit S] [--plan-out F]\n"
        "       [--plan-chunks] [--measured F]... [--output F] [--env-out F] [--csv-out F]\n"
        "       [--print-model] [--pin-predicted] [--coll NAME] [--expect K=V,...]\n"
        "       [--format text|json] [--quiet] [--version]\n\n"
        "  REPORT, --report F   a nettune.report/1 from nettune probe (hardware, GPU, NICs)\n"
        "  --replay F           an nccl-tests output (text or -J JSON) to learn from\n"
        "  --label K=V,...      what ran in the preceding --replay: algo, proto, nchannels,\n"
        "                       env.NCCL_X (no label: NCCL's default, a baseline)\n"
        "  --nccl-log F         an NCCL debug log (graph lines, comm shape, NIC speeds, table)\n"
        "  --nccl-version X.Y   the NCCL the job runs (default: from the inputs)\n"
        "  --sm N, --cpu-vendor V   facts NCCL does not print at INFO\n"
        "  --shape NxP          a communicator the job creates: N nodes x P ranks per node\n"
        "  --colls LIST         allreduce,allgather,reducescatter,broadcast,reduce (default all)\n"
        "  --min-bytes/--max-bytes N   the size grid (powers of two; default 1024..8589934592)\n"
        "  --objective O        how a choice must win where runs disagree (default no-regress)\n"
        "  --time-limit S       stop after S seconds; the partial file says \"completed\": false\n"
        "  --plan-out F         candidates worth measuring (model top-%d + NCCL's default)\n"
        "  --plan-chunks        the plan also asks for chunk sizes (NCCL 2.30+, tuner API v6)\n"
        "  --measured F         measured results to learn from (nettune.measured/1)\n"
        "  --output F           the tuning file (default tuning.json; - for stdout)\n"
        "  --env-out F          also write the environment advice (NCCL's conf-file format)\n"
        "  --csv-out F          also write NCCL's example-tuner CSV\n"
        "  --pin-predicted      also write the model's own choices as rules (every rank then\n"
        "                       chooses alike; a wrong estimate overrides NCCL's better choice)\n"
        "  --coll NAME          the collective of --replay tables that do not name their test\n"
        "  --expect K=V,...     the hardware (nettune doctor's keys: nics, nic_rate_Gbps, ...)\n"
        "                       to judge the baselines by; default the report and the logs\n"
        "  --print-model        NCCL's table for --nccl-log beside the model's, cell by cell\n"
        "  --format text|json   the summary (or --print-model) on stdout\n"
        "  --quiet              no summary\n"
        "exit: 0 written, 1 written with anomalies, 2 bad input or nothing to tune, 3 stopped by "
        "--time-limit (partial file written)\n",
        NT_TUNE_TOPK);
}

enum {
    OPT_REPORT = 256,
    OPT_REPLAY,
    OPT_LABEL,
    OPT_LOG,
    OPT_VERSION,
    OPT_SM,
    OPT_CPU,
    OPT_SHAPE,
    OPT_COLLS,
    OPT_MIN,
    OPT_MAX,
    OPT_OBJ,
    OPT_TLIMIT,
    OPT_PLAN,
    OPT_PLAN_CHUNKS,
    OPT_MEASURED,
    OPT_ENV,
    OPT_CSV,
    OPT_PRINT,
    OPT_FORMAT,
    OPT_QUIET,
    OPT_PIN,
    OPT_EXPECT,
    OPT_COLL,
    OPT_TOOL_VERSION,
    OPT_HELP
};

/* A one-line message into err (the caller prefixes "nettune tune: "). */
static nt_status_t __attribute__((format(printf, 3, 4)))
nt_params_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return NT_ERR_INVALID;
}
#define BAD(...) nt_params_fail(err, errlen, __VA_ARGS__)

/* The tuning file when --output is not given; told apart by its address, so that a message
 * about it can say it is the default (the user never typed it). */
static const char nt_tune_default_output[] = "tuning.json";

/* Every file the run writes (the tuning file, --env-out, --csv-out, --plan-out): none of them an
 * input, none the file of another (the later would replace the earlier), each writable, checked
 * before anything is read, so that a run never writes some of its outputs and then fails on
 * the next. */
static nt_status_t nt_tune_outputs_check(const nt_tune_params_t *p, char *err, size_t errlen)
{
    const char *in[1 + 3 * NT_TUNE_MAX_SOURCES];
    size_t n = 0;
    const nt_output_opt_t outs[] = {
        {p->output == nt_tune_default_output ? "the default --output" : "--output", p->output},
        {"--env-out", p->env_out},
        {"--csv-out", p->csv_out},
        {"--plan-out", p->plan_out}};

    in[n++] = p->report_path;
    for (size_t i = 0; i < p->nreplays; i++)
        in[n++] = p->replays[i].path;
    for (size_t i = 0; i < p->nlogs; i++)
        in[n++] = p->nccl_logs[i];
    for (size_t i = 0; i < p->nmeasured; i++)
        in[n++] = p->measured[i];
    return nt_output_preflight(outs, sizeof(outs) / sizeof(outs[0]), in, n, NULL, err, errlen);
}

nt_status_t nt_tune_params_parse(int argc, char **argv, nt_tune_params_t *p,
                                 nt_tune_action_t *action, char *err, size_t errlen)
{
    static const struct option opts[] = {{"report", required_argument, NULL, OPT_REPORT},
                                         {"replay", required_argument, NULL, OPT_REPLAY},
                                         {"label", required_argument, NULL, OPT_LABEL},
                                         {"nccl-log", required_argument, NULL, OPT_LOG},
                                         {"nccl-version", required_argument, NULL, OPT_VERSION},
                                         {"sm", required_argument, NULL, OPT_SM},
                                         {"cpu-vendor", required_argument, NULL, OPT_CPU},
                                         {"shape", required_argument, NULL, OPT_SHAPE},
                                         {"colls", required_argument, NULL, OPT_COLLS},
                                         {"min-bytes", required_argument, NULL, OPT_MIN},
                                         {"max-bytes", required_argument, NULL, OPT_MAX},
                                         {"objective", required_argument, NULL, OPT_OBJ},
                                         {"time-limit", required_argument, NULL, OPT_TLIMIT},
                                         {"plan-out", required_argument, NULL, OPT_PLAN},
                                         {"plan-chunks", no_argument, NULL, OPT_PLAN_CHUNKS},
                                         {"measured", required_argument, NULL, OPT_MEASURED},
                                         {"output", required_argument, NULL, 'o'},
                                         {"env-out", required_argument, NULL, OPT_ENV},
                                         {"csv-out", required_argument, NULL, OPT_CSV},
                                         {"print-model", no_argument, NULL, OPT_PRINT},
                                         {"format", required_argument, NULL, OPT_FORMAT},
                                         {"quiet", no_argument, NULL, OPT_QUIET},
                                         {"pin-predicted", no_argument, NULL, OPT_PIN},
                                         {"expect", required_argument, NULL, OPT_EXPECT},
                                         {"coll", required_argument, NULL, OPT_COLL},
                                         {"help", no_argument, NULL, OPT_HELP},
                                         {"version", no_argument, NULL, OPT_TOOL_VERSION},
                                         {NULL, 0, NULL, 0}};
    char e[512];
    nt_status_t st = NT_OK;
    int c;

    *action = NT_TUNE_ACTION_RUN;
    err[0] = '\0';
    p->cpu_vendor = -1;
    p->min_bytes = 1024;
    p->max_bytes = 8ull << 30;
    p->output = nt_tune_default_output;
    /* the environment advice and the CSV only when asked: a run writes one file by default */
    for (int i = 0; i < NT_NUM_COLLS; i++)
        p->colls[i] = 1;
    int last_replay = -1;
    opterr = 0; /* one line of ours instead of getopt's and the usage */
    while ((c = getopt_long(argc, argv, ":o:hq", opts, NULL)) != -1) {
        switch (c) {
        case OPT_REPORT:
            if (p->report_path)
                return BAD("the report is given twice ('%s' and '%s'): give one", p->report_path,
                           optarg);
            p->report_path = optarg;
            break;
        case OPT_REPLAY:
            if (p->nreplays >= NT_TUNE_MAX_SOURCES)
                return BAD("more than %s --replay sources%s", "64", "");
            p->replays[p->nreplays].path = optarg;
            last_replay = (int)p->nreplays++;
            break;
        case OPT_LABEL: {
            if (last_replay < 0)
                return BAD("--label '%s' comes before any --replay: put it after the file it "
                           "describes%s",
                           optarg, "");
            /* a second one is refused where the labels are applied; later ones are not reached */
            nt_tune_replay_t *r = &p->replays[last_replay];
            if (r->nlabels < NT_TUNE_MAX_LABELS)
                r->labels[r->nlabels++] = optarg;
            break;
        }
        case OPT_LOG:
            if (p->nlogs >= NT_TUNE_MAX_SOURCES)
                return BAD("more than %s --nccl-log files%s", "64", "");
            p->nccl_logs[p->nlogs++] = optarg;
            break;
        case OPT_VERSION:
            p->version = nt_nccllog_version_parse(optarg);
            if (p->version <= 0)
                return BAD("--nccl-version '%s': give X.Y or X.Y.Z (e.g. 2.28)%s", optarg, "");
            break;
        case OPT_SM: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 30 || v > 200)
                return BAD("--sm '%s': give the compute capability x 10 (e.g. 90 for H100)%s",
                           optarg, "");
            p->sm = (int)v;
            break;
        }
        case OPT_CPU:
            if (strcasecmp(optarg, "intel") == 0)
                p->cpu_vendor = NT_CPU_VENDOR_INTEL;
            else if (strcasecmp(optarg, "amd") == 0)
                p->cpu_vendor = NT_CPU_VENDOR_AMD;
            else if (strcasecmp(optarg, "other") == 0)
                p->cpu_vendor = NT_CPU_VENDOR_OTHER;
            else
                return BAD("--cpu-vendor '%s': give intel, amd or other%s", optarg, "");
            break;
        case OPT_SHAPE:
            if (p->nshapes >= NT_TUNE_MAX_SHAPES)
                return BAD("more than %s --shape%s", "16", "");
            if (nt_tune_shape_parse(optarg, &p->shapes[p->nshapes]) != NT_OK)
                return BAD("--shape '%s': give NNODESxPPN, e.g. 2x8%s", optarg, "");
            p->nshapes++;
            break;
        case OPT_COLLS: {
            char *copy = strdup(optarg), *save = NULL;
            memset(p->colls, 0, sizeof(p->colls));
            for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                int k = nt_model_coll_parse(w);
                if (k < 0) {
                    st = BAD("--colls: unknown collective '%s' (allreduce, allgather, "
                             "reducescatter, broadcast, reduce)%s",
                             w, "");
                    free(copy);
                    return st;
                }
                p->colls[k] = 1;
            }
            free(copy);
            break;
        }
        case OPT_MIN:
        case OPT_MAX: {
            size_t v;
            if (nt_parse_size(optarg, &v) != NT_OK || v == 0)
                return BAD(
                    "--%s '%s': give a size in bytes, at most 1024G (K, M, G suffixes allowed)",
                    c == OPT_MIN ? "min-bytes" : "max-bytes", optarg);
            if (c == OPT_MIN)
                p->min_bytes = v;
            else
                p->max_bytes = v;
            break;
        }
        case OPT_OBJ:
            if (strcmp(optarg, "total") == 0)
                p->objective = NT_OBJ_TOTAL;
            else if (strcmp(optarg, "geomean") == 0)
                p->objective = NT_OBJ_GEOMEAN;
            else if (strcmp(optarg, "no-regress") == 0)
                p->objective = NT_OBJ_NO_REGRESS;
            else
                return BAD("--objective '%s': give total, geomean or no-regress%s", optarg, "");
            break;
        case OPT_TLIMIT: {
            char *end;
            double v = strtod(optarg, &end);
            if (*end || !(v > 0))
                return BAD("--time-limit '%s': give seconds > 0%s", optarg, "");
            p->time_limit_s = v;
            break;
        }
        case OPT_PLAN:
            p->plan_out = optarg;
            break;
        case OPT_PLAN_CHUNKS:
            p->plan_chunks = 1;
            break;
        case OPT_MEASURED:
            if (p->nmeasured >= NT_TUNE_MAX_SOURCES)
                return BAD("more than %s --measured files%s", "64", "");
            p->measured[p->nmeasured++] = optarg;
            break;
        case 'o':
            p->output = optarg;
            break;
        case OPT_ENV:
            p->env_out = optarg;
            break;
        case OPT_CSV:
            p->csv_out = optarg;
            break;
        case OPT_PRINT:
            p->print_model = 1;
            break;
        case OPT_FORMAT:
            if (strcmp(optarg, "json") == 0)
                p->json = 1;
            else if (strcmp(optarg, "text") != 0)
                return BAD("--format '%s': give text or json%s", optarg, "");
            break;
        case OPT_EXPECT: {
            /* the doctor's --expect grammar, checked now: the baselines are judged later */
            nt_hw_t hw;
            nt_hw_init(&hw);
            int bad_expect = nt_hw_apply_expect(&hw, optarg, e, sizeof(e)) != 0;
            nt_hw_cleanup(&hw);
            if (bad_expect)
                return BAD("%s%s", e, "");
            p->expect = optarg;
            break;
        }
        case OPT_PIN:
            p->pin_predicted = 1;
            break;
        case OPT_COLL: {
            /* nccl-tests' name (all_reduce) or NCCL's (allreduce) */
            int k = nt_tune_coll_from_nccltests(optarg);
            if (k < 0)
                k = nt_model_coll_parse(optarg);
            if (k < 0)
                return BAD("--coll '%s': give the test's collective (all_reduce, all_gather, "
                           "reduce_scatter, broadcast, reduce)%s",
                           optarg, "");
            p->coll_named = k + 1;
            break;
        }
        case 'q':
        case OPT_QUIET:
            p->quiet = 1;
            break;
        case 'h':
        case OPT_HELP:
            *action = NT_TUNE_ACTION_HELP;
            return NT_OK;
        case OPT_TOOL_VERSION:
            *action = NT_TUNE_ACTION_VERSION;
            return NT_OK;
        case ':':
            return BAD("option '%s' needs a value (see nettune tune --help)%s", argv[optind - 1],
                       "");
        default:
            return BAD("unknown option '%s' (see nettune tune --help)%s", argv[optind - 1], "");
        }
    }
    if (optind < argc) {
        if (p->report_path || optind + 1 < argc)
            return BAD("one report only ('%s' is extra): give the others with --replay or "
                       "--nccl-log%s",
                       argv[argc - 1], "");
        p->report_path = argv[optind];
    }
    if (p->min_bytes > p->max_bytes)
        return BAD("--min-bytes is above --max-bytes%s%s", "", "");
    if (p->plan_chunks && !p->plan_out)
        return BAD("--plan-chunks adds chunk sizes to a plan: give --plan-out F too%s%s", "", "");
    if (!p->print_model)
        return nt_tune_outputs_check(p, err, errlen);
    return NT_OK;
}
