/* Command-line parsing of nettune-watch into nt_watch_params_t. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/report.h"
#include "watch.h"

/* Calls kept per communicator: Inspector's own ring holds 1,024 (v2.30.7-1 README.md:91), so a
 * dump never holds more per communicator than that. */
#define NT_WATCH_WINDOW_DEFAULT 1024
#define NT_WATCH_WINDOW_MAX 65536

void nt_watch_usage(FILE *f)
{
    fprintf(f,
            "usage: nettune watch [options] DIR|FILE...\n"
            "Judges a job from NCCL Inspector's output (JSON logs <host>-pid<pid>.log, or\n"
            "Prometheus textfiles nccl_inspector_metrics_<uuid>.prom): names a straggler rank, a\n"
            "hang, the onset of a busbw drop and, with --report, busbw below what the measured\n"
            "links give. A DIR is read for its files whose content is Inspector's, whatever\n"
            "their names; the others are named in the summary, not read.\n"
            "\n"
            "  -f, --format FMT    what stdout shows: text (default), json, or prom (a\n"
            "                      Prometheus textfile, the probe's metric conventions)\n"
            "  -o, --output FILE   write the nettune.watch/1 JSON document to FILE ('-' = stdout);\n"
            "                      with --format prom the textfile instead\n"
            "      --report R      the job's pre-job nettune probe report: busbw is compared with\n"
            "                      what its measured links give through the tuner's model\n"
            "      --drain         scontrol-drain the host of every finding whose check table\n"
            "                      row says drain (a hang, a rank RAS lists as missing), with\n"
            "                      its reason (a node running a job drains after it); nothing\n"
            "                      when an input could not be read\n"
            "      --drain=dry-run print the scontrol lines instead of running them\n"
            "      --follow        read on as Inspector writes, rewrite --output after each read;\n"
            "                      stop at SIGINT/SIGTERM (then the summary) or after --polls\n"
            "      --interval S    the most seconds between reads with --follow (default 5);\n"
            "                      a write to an input wakes a read sooner (inotify), at most\n"
            "                      4 a second\n"
            "      --polls N       stop --follow after N reads (default 0: at a signal)\n"
            "      --window N      calls kept per communicator (default %d)\n"
            "      --strict        warnings exit 1 too\n"
            "  -q, --quiet         no summary on stdout\n"
            "  -h, --help          this help\n"
            "      --version       print the version\n"
            "\n"
            "Exit status: 0 no failure, 1 a failure (a hang; a warning too with --strict; a\n"
            "drain that scontrol refused),\n"
            "2 bad usage or an input that cannot be read, is not Inspector's or holds no record\n"
            "(the judgement of the inputs read is still written and shown).\n",
            NT_WATCH_WINDOW_DEFAULT);
}

enum { OPT_WINDOW = 256, OPT_STRICT, OPT_VERSION, OPT_FOLLOW, OPT_INTERVAL, OPT_POLLS, OPT_REPORT,
       OPT_DRAIN };

static const struct option nt_watch_opts[] = {
    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
    {"window", required_argument, NULL, OPT_WINDOW}, {"strict", no_argument, NULL, OPT_STRICT},
    {"quiet", no_argument, NULL, 'q'},       {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION}, {"follow", no_argument, NULL, OPT_FOLLOW},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"polls", required_argument, NULL, OPT_POLLS},   {"report", required_argument, NULL, OPT_REPORT},
    {"drain", optional_argument, NULL, OPT_DRAIN},   {NULL, 0, NULL, 0},
};

/* The long option nearest to a mistyped one (`--folow=x` -> "follow"), by edit distance over
 * the names of nt_watch_opts; NULL when none is within 2 edits. */
static const char *nt_watch_opt_near(const char *arg)
{
    char w[64];
    size_t n = 0;
    const char *best = NULL;
    size_t bestd = 3;
    while (*arg == '-')
        arg++;
    while (arg[n] && arg[n] != '=' && n + 1 < sizeof(w))
        w[n] = arg[n], n++;
    w[n] = '\0';
    for (size_t o = 0; n && nt_watch_opts[o].name; o++) {
        const char *b = nt_watch_opts[o].name;
        size_t m = strlen(b), row[64];
        if (m + 1 > sizeof(row) / sizeof(row[0]))
            continue;
        for (size_t j = 0; j <= m; j++)
            row[j] = j;
        for (size_t i = 1; i <= n; i++) {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= m; j++) {
                size_t up = row[j], d = diag + (w[i - 1] != b[j - 1]);
                if (up + 1 < d)
                    d = up + 1;
                if (row[j - 1] + 1 < d)
                    d = row[j - 1] + 1;
                diag = up;
                row[j] = d;
            }
        }
        if (row[m] < bestd)
            bestd = row[m], best = b;
    }
    return best;
}

nt_status_t nt_watch_params_parse(int argc, char **argv, nt_watch_params_t *p,
                                  nt_watch_action_t *action, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    p->window = NT_WATCH_WINDOW_DEFAULT;
    p->interval_s = 5;
    *action = NT_WATCH_RUN;
    optind = 1;
    opterr = 0;
    int c;
    const char *follow_only = NULL; /* --interval or --polls given: options of --follow */
    while ((c = getopt_long(argc, argv, ":f:o:qh", nt_watch_opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") == 0)
                p->format = NT_WATCH_TEXT;
            else if (strcmp(optarg, "json") == 0)
                p->format = NT_WATCH_JSON;
            else if (strcmp(optarg, "prom") == 0)
                p->format = NT_WATCH_PROM;
            else {
                snprintf(err, errlen, "unknown --format '%s': use text, json or prom", optarg);
                return NT_ERR_INVALID;
            }
            break;
        case 'o':
            p->output = optarg;
            break;
        case OPT_WINDOW:
        case OPT_INTERVAL:
        case OPT_POLLS: {
            static const struct {
                int opt;
                const char *name, *what;
                long lo, hi;
            } nums[] = {
                {OPT_WINDOW, "--window", "calls", 1, NT_WATCH_WINDOW_MAX},
                {OPT_INTERVAL, "--interval", "seconds", 1, 86400},
                {OPT_POLLS, "--polls", "reads", 0, 1000000000},
            };
            size_t i = 0;
            while (nums[i].opt != c)
                i++;
            char *end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || v < nums[i].lo || v > nums[i].hi) {
                snprintf(err, errlen, "bad %s '%s': give a whole number of %s, %ld to %ld",
                         nums[i].name, optarg, nums[i].what, nums[i].lo, nums[i].hi);
                return NT_ERR_INVALID;
            }
            if (c != OPT_WINDOW)
                follow_only = c == OPT_POLLS ? "--polls (how many reads --follow makes)"
                                             : "--interval (the pause between --follow's reads)";
            if (c == OPT_WINDOW)
                p->window = (size_t)v;
            else if (c == OPT_INTERVAL)
                p->interval_s = (unsigned)v;
            else
                p->polls = (unsigned long)v;
            break;
        }
        case OPT_FOLLOW:
            p->follow = 1;
            break;
        case OPT_REPORT:
            p->report = optarg;
            break;
        case OPT_DRAIN:
            if (!optarg)
                p->drain = NT_WATCH_DRAIN_APPLY;
            else if (strcmp(optarg, "dry-run") == 0)
                p->drain = NT_WATCH_DRAIN_DRY_RUN;
            else {
                snprintf(err, errlen, "bad value '%s' for --drain: use --drain or --drain=dry-run",
                         optarg);
                return NT_ERR_INVALID;
            }
            break;
        case OPT_STRICT:
            p->strict = 1;
            break;
        case 'q':
            p->quiet = 1;
            break;
        case 'h':
            *action = NT_WATCH_HELP;
            return NT_OK;
        case OPT_VERSION:
            *action = NT_WATCH_VERSION;
            return NT_OK;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value: see nettune watch --help",
                     argv[optind - 1]);
            return NT_ERR_INVALID;
        default: {
            const char *near = strncmp(argv[optind - 1], "--", 2) == 0
                                   ? nt_watch_opt_near(argv[optind - 1])
                                   : NULL;
            if (near)
                snprintf(err, errlen, "unknown option '%s': did you mean --%s? (nettune watch --help)",
                         argv[optind - 1], near);
            else
                snprintf(err, errlen, "unknown option '%s': see nettune watch --help",
                         argv[optind - 1]);
            return NT_ERR_INVALID;
        }
        }
    }
    /* Without --follow the files are read once: a number of reads or a pause between them
     * would be taken silently and mean nothing, so the run would not be the one asked for. */
    if (follow_only && !p->follow) {
        snprintf(err, errlen,
                 "%s means nothing without --follow: add --follow, or leave it out to read the "
                 "files once",
                 follow_only);
        return NT_ERR_INVALID;
    }
    if (optind >= argc) {
        snprintf(err, errlen, "no input: give Inspector's dump directory (NCCL_INSPECTOR_DUMP_DIR) "
                              "or its files");
        return NT_ERR_INVALID;
    }
    p->inputs = argv + optind;
    p->ninputs = argc - optind;
    /* the document's file: not one of the inputs, nor among the files of an input folder (each
     * is read, whatever its name: it could be a rank's dump, still being written), and
     * writable, before anything is read */
    if (p->output) {
        const char **all = calloc((size_t)p->ninputs + 1, sizeof(*all));
        nt_status_t st;
        if (!all) {
            snprintf(err, errlen, "out of memory");
            return NT_ERR_NOMEM;
        }
        memcpy(all, p->inputs, (size_t)p->ninputs * sizeof(*all));
        all[p->ninputs] = p->report;
        st = nt_output_preflight(&(nt_output_opt_t){"--output", p->output}, 1, all,
                                 (size_t)p->ninputs + 1, "", err, errlen);
        free(all);
        if (st != NT_OK)
            return NT_ERR_INVALID;
    }
    return NT_OK;
}
