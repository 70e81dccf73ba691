/* nettune-tune-measure's command line into nt_measure_params_t (measure.h): parsed, checked,
 * then the one adjustment (--verify writes verify.json unless --output is given). */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure.h"
#include "nettune/report.h"
#include "nettune/units.h"

void nt_measure_params_usage(FILE *f)
{
    fprintf(f,
            "usage: nettune-tune-measure --plan plan.json [--output measured.json]\n"
            "       [--local-ranks N [--separate-nodes]] [--launch K] [--budget-seconds S]\n"
            "       [--warmup N] [--iters N] [--trials N] [--timeout S] [--backend nccl|fake] "
            "[--version]\n"
            "   or: nettune-tune-measure --verify tuning.json [--min-bytes B] [--max-bytes B] ...\n"
            "  --plan F            nettune.plan/1 from nettune tune --plan-out\n"
            "  --output F          nettune.measured/1 for nettune tune --measured (default "
            "measured.json)\n"
            "  --local-ranks N     fork N ranks (1 to 72) on this node (no MPI needed); without "
            "it the ranks\n"
            "                      come from Open MPI or Slurm (OMPI_COMM_WORLD_RANK/SIZE, "
            "SLURM_PROCID/\n"
            "                      SLURM_NTASKS) and meet at NETTUNE_MEASURE_ADDR=host:port "
            "(rank 0's)\n"
            "  --verify F          A/B: the plugin and the file (these ranks) against neither (a\n"
            "                      child process per rank, NCCL_TUNER_PLUGIN=none), in turns;\n"
            "                      per size the speedup with its spread (--trials rounds; sizes\n"
            "                      x2 from --min-bytes 1024 to --max-bytes 268435456); writes\n"
            "                      nettune.verify/1\n"
            "  --separate-nodes    each local rank is its own NCCL node (NCCL_HOSTID per rank)\n"
            "  --budget-seconds S  no candidate (--verify: no size) is started after S "
            "seconds\n"
            "  --launch K          run the plan's launch K (its NCCL_* environment); with "
            "--local-ranks\n"
            "                      every launch runs in turn within --budget-seconds\n"
            "  --backend B         nccl (default: libnccl.so.2 and libcuda.so.1 at run time) or "
            "fake\n"
            "                      (a cost model, for tests)\n");
}

nt_status_t nt_measure_params_parse(int argc, char **argv, nt_measure_params_t *p,
                                    nt_measure_action_t *action, char *err, size_t errlen)
{
    *action = NT_MEASURE_ACTION_RUN;
    err[0] = '\0';
    enum {
        O_PLAN = 256,
        O_LOCAL,
        O_SEP,
        O_LAUNCH,
        O_BUDGET,
        O_WARM,
        O_ITERS,
        O_TRIALS,
        O_TIMEOUT,
        O_BACKEND,
        O_HELP,
        O_TOOL_VERSION,
        O_VERIFY,
        O_MINB,
        O_MAXB
    };
    static const struct option opts[] = {{"plan", required_argument, NULL, O_PLAN},
                                         {"output", required_argument, NULL, 'o'},
                                         {"local-ranks", required_argument, NULL, O_LOCAL},
                                         {"separate-nodes", no_argument, NULL, O_SEP},
                                         {"launch", required_argument, NULL, O_LAUNCH},
                                         {"budget-seconds", required_argument, NULL, O_BUDGET},
                                         {"warmup", required_argument, NULL, O_WARM},
                                         {"verify", required_argument, NULL, O_VERIFY},
                                         {"min-bytes", required_argument, NULL, O_MINB},
                                         {"max-bytes", required_argument, NULL, O_MAXB},
                                         {"iters", required_argument, NULL, O_ITERS},
                                         {"trials", required_argument, NULL, O_TRIALS},
                                         {"timeout", required_argument, NULL, O_TIMEOUT},
                                         {"backend", required_argument, NULL, O_BACKEND},
                                         {"help", no_argument, NULL, O_HELP},
                                         {"version", no_argument, NULL, O_TOOL_VERSION},
                                         {NULL, 0, NULL, 0}};
    *p = (nt_measure_params_t){.output = "measured.json",
                .backend = "nccl",
                .launch = -1,
                .min_bytes = 1024,
                .max_bytes = 256ull << 20,
                .o = {.warmup = 5, .iters = 20, .trials = 3, .timeout_s = 120, .budget_s = 0}};
    int c;
    char *end;
    opterr = 0; /* one line of ours instead of getopt's and the usage */
    while ((c = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        double v = optarg ? strtod(optarg, &end) : 0;
        /* at most INT_MAX: the counts below are ints and a cast of a double beyond one (1e300,
         * inf) is UB; seconds that large are no limit either */
        int num_ok = optarg && end != optarg && !*end && v >= 0 && v <= INT_MAX;
        switch (c) {
        case O_PLAN:
            p->plan_path = optarg;
            continue;
        case O_VERIFY:
            p->verify = optarg;
            continue;
        case O_MINB:
        case O_MAXB: {
            /* the one size reader, as nettune tune's --min-bytes/--max-bytes */
            size_t b;
            if (!optarg || nt_parse_size(optarg, &b) != NT_OK || b == 0) {
                snprintf(err, errlen,
                         "--%s '%s': give a size in bytes, at most 1024G (K, M, G suffixes "
                         "allowed)",
                         c == O_MINB ? "min-bytes" : "max-bytes", optarg ? optarg : "");
                return NT_ERR_INVALID;
            }
            *(c == O_MINB ? &p->min_bytes : &p->max_bytes) = b;
            continue;
        }
        case 'o':
            p->output = optarg;
            continue;
        case O_SEP:
            p->separate_nodes = 1;
            continue;
        case O_BACKEND:
            if (strcmp(optarg, "nccl") && strcmp(optarg, "fake")) {
                snprintf(err, errlen, "--backend '%s': use nccl or fake", optarg);
                return NT_ERR_INVALID;
            }
            p->backend = optarg;
            continue;
        case O_HELP:
        case 'h':
            *action = NT_MEASURE_ACTION_HELP;
            return NT_OK;
        case O_TOOL_VERSION:
            *action = NT_MEASURE_ACTION_VERSION;
            return NT_OK;
        case O_LOCAL:
        case O_LAUNCH:
        case O_BUDGET:
        case O_WARM:
        case O_ITERS:
        case O_TRIALS:
        case O_TIMEOUT:
            if (!num_ok) {
                for (const struct option *q = opts; q->name; q++)
                    if (q->val == c)
                        snprintf(err, errlen, "--%s '%s': give a number from 0 to %d", q->name,
                                 optarg, INT_MAX);
                return NT_ERR_INVALID;
            }
            /* each forked rank drives one GPU of this node, and no node runs more NCCL ranks
             * than NCCL_MAX_LOCAL_RANKS (72, v2.28.9-1 src/include/device.h:87); 0 forked none
             * and wrote an empty result, a large N forked N processes with no bound */
            if (c == O_LOCAL && (v < 1 || v > NT_MEASURE_MAX_LOCAL_RANKS)) {
                snprintf(err, errlen,
                         "--local-ranks %s: give 1 to %d (one rank per GPU of this node)", optarg,
                         NT_MEASURE_MAX_LOCAL_RANKS);
                return NT_ERR_INVALID;
            }
            if (c == O_LOCAL)
                p->local_ranks = (int)v;
            if (c == O_LAUNCH)
                p->launch = (int)v;
            if (c == O_BUDGET)
                p->o.budget_s = v;
            if (c == O_WARM)
                p->o.warmup = (int)v;
            if (c == O_ITERS)
                p->o.iters = (int)v;
            if (c == O_TRIALS)
                p->o.trials = (int)v;
            if (c == O_TIMEOUT)
                p->o.timeout_s = v;
            continue;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value (see nettune tune-measure --help)",
                     argv[optind - 1]);
            return NT_ERR_INVALID;
        default:
            snprintf(err, errlen, "unknown option '%s' (see nettune tune-measure --help)",
                     argv[optind - 1]);
            return NT_ERR_INVALID;
        }
    }
    if ((!p->plan_path && !p->verify) || optind < argc || p->o.iters < 1 || p->o.trials < 1 ||
        !(p->o.timeout_s > 0)) {
        snprintf(err, errlen, "%s",
                 !p->plan_path && !p->verify
                     ? "--plan (from nettune tune --plan-out) or --verify tuning.json is required"
                     : "--iters, --trials and --timeout must be >= 1");
        return NT_ERR_INVALID;
    }
    int output_given = 0;
    for (int i = 1; i < argc; i++)
        output_given |= !strncmp(argv[i], "--output", 8) || !strncmp(argv[i], "-o", 2);
    if (p->verify && !output_given)
        p->output = "verify.json";
    if (p->verify && (p->plan_path || p->min_bytes > p->max_bytes)) {
        snprintf(err, errlen, "--verify %s",
                 p->plan_path ? "measures a tuning file, not a plan: give one of --plan and --verify"
                              : "needs --min-bytes <= --max-bytes");
        return NT_ERR_INVALID;
    }
    /* the document's file: not the plan or the tuning file it measures, and writable, before
     * minutes of measuring (the other commands' check, lib/core/output.c) */
    const char *inputs[] = {p->plan_path, p->verify};
    if (p->output &&
        nt_output_preflight(&(nt_output_opt_t){output_given ? "--output" : "the default --output",
                                               p->output},
                            1, inputs, 2, NULL, err, errlen) != NT_OK)
        return NT_ERR_INVALID;
    return NT_OK;
}
