/* Command-line parsing of nettune-report into nt_report_params_t: every option checked before
 * anything runs. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nettune/report.h"
#include "nettune/version.h"
#include "report_cmd.h"
#include "rpt.h"

/* The --help text (report_cmd.h). */
void nt_report_usage(FILE *f)
{
    char rendered[512], validated[512];
    nt_schema_list(rendered, sizeof(rendered), 1);
    nt_schema_list(validated, sizeof(validated), 0);
    fprintf(
        f,
        "usage: nettune report FILE [--format text|md|html|prom|csv] [--output OUT] [--node HOST]\n"
        "       nettune report --diff OLD NEW [--regression-threshold PCT] [--format "
        "text|md|json|csv]\n"
        "       nettune report --validate FILE... [--format text|json]\n"
        "       nettune report --history DIR|FILE... [--format text|md|json|prom]\n"
        "\n"
        "Renders a nettune document, exports a node's metrics for Prometheus, compares a report\n"
        "with a baseline, or checks a file's structure.\n"
        "  renders:   %s\n"
        "  validates: %s\n"
        "\n"
        "Render and export:\n"
        "  -f, --format FMT      text (default): terminal summary, failed nodes and links first;\n"
        "                        md: Markdown; html: one self-contained page with SVG heatmaps;\n"
        "                        prom: Prometheus text for node_exporter's textfile collector;\n"
        "                        csv: the links (tuning files: the rules), RFC 4180\n"
        "  -o, --output FILE     write there (temporary file + rename); - or absent: stdout\n"
        "      --node HOST       prom, csv: only this host's metrics / links it is the source of\n"
        "      --top N           length of the worst-first lists (default 25; 0: everything)\n"
        "      --color WHEN      auto (default: stdout is a terminal and NO_COLOR is unset),\n"
        "                        always, never\n"
        "  -q, --quiet           no summary line on stdout when writing to --output\n"
        "Diff:\n"
        "      --diff OLD NEW    links matched by id, checks by name+host+target: change in "
        "percent,\n"
        "                        new and fixed failures, links that appeared or vanished\n"
        "      --regression-threshold PCT  bandwidth down or latency up by more than PCT percent "
        "is\n"
        "                        a regression (default 5)\n"
        "      --fail-on-vanished  links or checks missing from NEW count as regressions\n"
        "History:\n"
        "      --history DIR|FILE...  reports of one cluster (a folder: its *.json): per node and\n"
        "                        link kind the median figures run by run, and a drift of the later\n"
        "                        half of the runs beyond the probe's noise rule (docs/report-history.md)\n"
        "Validate:\n"
        "      --validate FILE...  check each file against its schema id, then (reports) the\n"
        "                        semantic checks; one line per problem, with its JSON path\n"
        "                        ($.links[3].verdict: ...)\n"
        "  -h, --help, --version\n"
        "\n"
        "Exit: 0 healthy / no regression / valid; 1 the report has a failure (--node: that node) "
        "/\n"
        "a regression / a drift / not a valid nettune document (also not JSON); 2 bad usage, unreadable "
        "input,\n"
        "an output that cannot be written, a render or diff input that is not a nettune document;\n"
        "3 the rendered run stopped early with nothing failed.\n"
        "Environment: NETTUNE_DEBUG=WARN|INFO|DEBUG, NO_COLOR.\n",
        rendered, validated);
}

enum {
    OPT_NODE = 256,
    OPT_TOP,
    OPT_COLOR,
    OPT_DIFF,
    OPT_VALIDATE,
    OPT_HISTORY,
    OPT_THRESHOLD,
    OPT_VANISHED,
    OPT_VERSION
};

static int nt_format_in(const char *f, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(f, *list) == 0)
            return 1;
    return 0;
}

/* Parse and check argv into p. Returns 0 to run, 1 when --help/--version was answered,
 * -1 on a usage error (already reported). */
int nt_report_params_parse(int argc, char **argv, nt_report_params_t *p)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"node", required_argument, NULL, OPT_NODE},
        {"top", required_argument, NULL, OPT_TOP},
        {"color", required_argument, NULL, OPT_COLOR},
        {"colour", required_argument, NULL, OPT_COLOR},
        {"diff", no_argument, NULL, OPT_DIFF},
        {"validate", no_argument, NULL, OPT_VALIDATE},
        {"history", no_argument, NULL, OPT_HISTORY},
        {"regression-threshold", required_argument, NULL, OPT_THRESHOLD},
        {"fail-on-vanished", no_argument, NULL, OPT_VANISHED},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    static const char *const render_formats[] = {"text", "md", "html", "prom", "csv", NULL};
    static const char *const diff_formats[] = {"text", "md", "json", "csv", NULL};
    static const char *const validate_formats[] = {"text", "json", NULL};
    static const char *const history_formats[] = {"text", "md", "json", "prom", NULL};
    int c, modes = 0;
    char *end;

    memset(p, 0, sizeof(*p));
    p->threshold_pct = 5.0;
    p->top = 25;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            p->format = optarg;
            break;
        case 'o':
            p->output = optarg;
            break;
        case 'q':
            p->quiet = 1;
            break;
        case 'h':
            nt_report_usage(stdout);
            return 1;
        case OPT_VERSION:
            printf("nettune report %s\n", nt_version());
            return 1;
        case OPT_NODE:
            p->node = optarg;
            break;
        case OPT_TOP:
            errno = 0;
            p->top = strtol(optarg, &end, 10);
            if (errno || *end || end == optarg || p->top < 0) {
                fprintf(stderr, "nettune report: --top takes a count >= 0, not '%s'\n", optarg);
                return -1;
            }
            break;
        case OPT_COLOR:
            if (strcmp(optarg, "auto") == 0)
                p->color = NT_COLOR_AUTO;
            else if (strcmp(optarg, "always") == 0)
                p->color = NT_COLOR_ALWAYS;
            else if (strcmp(optarg, "never") == 0)
                p->color = NT_COLOR_NEVER;
            else {
                fprintf(stderr, "nettune report: --color takes auto, always or never, not '%s'\n",
                        optarg);
                return -1;
            }
            break;
        case OPT_DIFF:
            p->mode = NT_MODE_DIFF;
            modes++;
            break;
        case OPT_VALIDATE:
            p->mode = NT_MODE_VALIDATE;
            modes++;
            break;
        case OPT_HISTORY:
            p->mode = NT_MODE_HISTORY;
            modes++;
            break;
        case OPT_THRESHOLD:
            errno = 0;
            p->threshold_pct = strtod(optarg, &end);
            if (errno || *end || end == optarg || !isfinite(p->threshold_pct) ||
                p->threshold_pct < 0) {
                fprintf(stderr,
                        "nettune report: --regression-threshold takes a percentage "
                        ">= 0, not '%s'\n",
                        optarg);
                return -1;
            }
            p->threshold_given = 1;
            break;
        case OPT_VANISHED:
            p->fail_on_vanished = 1;
            break;
        case ':':
            fprintf(stderr, "nettune report: option '%s' needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "nettune report: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return -1;
        }
    }
    p->files = argv + optind;
    p->nfiles = argc - optind;
    if (modes > 1) {
        fprintf(stderr, "nettune report: --diff, --validate and --history exclude each other\n");
        return -1;
    }
    switch (p->mode) {
    case NT_MODE_RENDER:
        if (p->nfiles != 1) {
            fprintf(stderr, "nettune report: expected one FILE, got %d (see --help)\n", p->nfiles);
            return -1;
        }
        if (!p->format)
            p->format = "text";
        if (!nt_format_in(p->format, render_formats)) {
            fprintf(stderr, "nettune report: unknown --format '%s' (text, md, html, prom, csv)\n",
                    p->format);
            return -1;
        }
        if (p->node && strcmp(p->format, "prom") != 0 && strcmp(p->format, "csv") != 0) {
            fprintf(stderr, "nettune report: --node applies to --format prom and csv only\n");
            return -1;
        }
        break;
    case NT_MODE_DIFF:
        if (p->nfiles != 2) {
            fprintf(stderr, "nettune report: --diff takes OLD and NEW, got %d file(s)\n",
                    p->nfiles);
            return -1;
        }
        if (!p->format)
            p->format = "text";
        if (!nt_format_in(p->format, diff_formats)) {
            fprintf(stderr, "nettune report: --diff writes text, md, json or csv, not '%s'\n",
                    p->format);
            return -1;
        }
        break;
    case NT_MODE_HISTORY:
        if (p->nfiles < 1) {
            fprintf(stderr, "nettune report: --history takes a folder of reports, or reports\n");
            return -1;
        }
        if (!p->format)
            p->format = "text";
        if (!nt_format_in(p->format, history_formats)) {
            fprintf(stderr, "nettune report: --history writes text, md, json or prom, not '%s'\n",
                    p->format);
            return -1;
        }
        break;
    case NT_MODE_VALIDATE:
        if (p->nfiles < 1) {
            fprintf(stderr, "nettune report: --validate takes at least one FILE\n");
            return -1;
        }
        if (!p->format)
            p->format = "text";
        if (!nt_format_in(p->format, validate_formats)) {
            fprintf(stderr, "nettune report: --validate writes text or json, not '%s'\n",
                    p->format);
            return -1;
        }
        break;
    }
    if (p->mode != NT_MODE_DIFF && (p->threshold_given || p->fail_on_vanished)) {
        fprintf(stderr, "nettune report: %s applies to --diff only\n",
                p->threshold_given ? "--regression-threshold" : "--fail-on-vanished");
        return -1;
    }
    if (p->node && p->mode != NT_MODE_RENDER) {
        fprintf(stderr, "nettune report: --node applies to rendering only\n");
        return -1;
    }
    /* the output: none of the files read (a render over its own report would replace it;
     * --history reads a folder's *.json), and writable, before anything is read */
    {
        char why[8192];
        if (nt_output_preflight(&(nt_output_opt_t){"--output", p->output}, 1,
                                (const char *const *)p->files, (size_t)p->nfiles,
                                p->mode == NT_MODE_HISTORY ? ".json" : NULL, why,
                                sizeof(why)) != NT_OK) {
            fprintf(stderr, "nettune report: %s\n", why);
            return -1;
        }
    }
    return 0;
}
