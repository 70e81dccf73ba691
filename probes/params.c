/* nettune-probe options: parsed, checked, adjusted (every adjustment logged), then run. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nettune/fabsched.h"
#include "nettune/gpu.h"
#include "nettune/log.h"
#include "params.h"
#include "drain.h"

/* Sizes below this are latency sizes (ping-pong), from it on bandwidth sizes (window). */
#define NT_LAT_BW_SPLIT (64u * 1024u)

static nt_status_t nt_parse_sizes(const char *list, nt_probe_params_t *p, char *err, size_t len)
{
    char buf[512], *save = NULL;

    p->nlat_sizes = p->nbw_sizes = 0;
    /* strtok_r skips empty items: "8,,4K" or a trailing comma is a typo, said as such */
    size_t ll = strlen(list);
    if (ll && (list[0] == ',' || list[ll - 1] == ',' || strstr(list, ",,"))) {
        snprintf(err, len, "empty item in --sizes '%s': give e.g. --sizes 8,4K,1M,4M", list);
        return NT_ERR_INVALID;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t v;
        /* 64 MiB at most: the bandwidth window keeps 64 messages in flight (4 GiB a window). */
        if (nt_parse_size(t, &v) != NT_OK || v == 0 || v > (64u << 20)) {
            snprintf(err, len,
                     "bad size '%s' in --sizes: give bytes from 1 to 64M, e.g. --sizes 8,4K,1M,4M",
                     t);
            return NT_ERR_INVALID;
        }
        for (size_t k = 0; k < p->nlat_sizes; k++)
            if (p->lat_sizes[k] == v)
                goto dup;
        for (size_t k = 0; k < p->nbw_sizes; k++)
            if (p->bw_sizes[k] == v)
                goto dup;
        if (v < NT_LAT_BW_SPLIT) {
            if (p->nlat_sizes == NT_MAX_SIZES)
                goto toomany;
            p->lat_sizes[p->nlat_sizes++] = v;
        } else {
            if (p->nbw_sizes == NT_MAX_SIZES)
                goto toomany;
            p->bw_sizes[p->nbw_sizes++] = v;
        }
        continue;
    dup:
        snprintf(err, len, "size '%s' is given twice in --sizes: give each size once", t);
        return NT_ERR_INVALID;
    }
    if (p->nlat_sizes + p->nbw_sizes == 0) {
        snprintf(err, len, "--sizes is empty: give e.g. --sizes 8,4K,1M,4M");
        return NT_ERR_INVALID;
    }
    return NT_OK;
toomany:
    snprintf(err, len, "too many sizes in --sizes: at most %d latency and %d bandwidth sizes",
             NT_MAX_SIZES, NT_MAX_SIZES);
    return NT_ERR_INVALID;
}

static nt_status_t nt_parse_seconds(const char *opt, const char *s, double min, double max,
                                    double *out, char *err, size_t len)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < min || v > max) {
        snprintf(err, len, "bad value '%s' for %s: give a number of seconds from %g to %g", s, opt,
                 min, max);
        return NT_ERR_INVALID;
    }
    *out = v;
    return NT_OK;
}

static nt_status_t nt_parse_int(const char *opt, const char *s, long min, long max, int *out,
                                char *err, size_t len)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < min || v > max) {
        snprintf(err, len, "bad value '%s' for %s: give an integer from %ld to %ld", s, opt, min,
                 max);
        return NT_ERR_INVALID;
    }
    *out = (int)v;
    return NT_OK;
}

/* --fabric-ifaces: 1 to NT_FAB_MAX_RAILS interface names, comma-separated, no empty item. */
static nt_status_t nt_parse_ifaces(const char *list, char *err, size_t len)
{
    size_t n = 1, ll = strlen(list), item = 0;
    if (!ll || list[0] == ',' || list[ll - 1] == ',' || strstr(list, ",,")) {
        snprintf(err, len, "empty item in --fabric-ifaces '%s': give e.g. --fabric-ifaces eth0,eth1",
                 list);
        return NT_ERR_INVALID;
    }
    for (const char *c = list; *c; c++) {
        if (*c == ',') {
            n++;
            item = 0;
        } else if (++item >= IF_NAMESIZE || isspace((unsigned char)*c) || *c == '/') {
            snprintf(err, len,
                     "bad interface name in --fabric-ifaces '%s': names have at most %d "
                     "characters, no spaces or '/'",
                     list, IF_NAMESIZE - 1);
            return NT_ERR_INVALID;
        }
    }
    if (n > NT_FAB_MAX_RAILS) {
        snprintf(err, len, "too many interfaces in --fabric-ifaces: at most %d rails",
                 NT_FAB_MAX_RAILS);
        return NT_ERR_INVALID;
    }
    /* One interface named twice is one rail measured as two: the judge would see them share
     * a link and call the rails cross-wired. */
    for (const char *a = list; a; a = strchr(a, ',') ? strchr(a, ',') + 1 : NULL) {
        size_t la = strcspn(a, ",");
        for (const char *b = strchr(a, ','); b; b = strchr(b + 1, ','))
            if (strcspn(b + 1, ",") == la && strncmp(a, b + 1, la) == 0) {
                snprintf(err, len,
                         "interface '%.*s' twice in --fabric-ifaces '%s': name each rail once",
                         (int)la, a, list);
                return NT_ERR_INVALID;
            }
    }
    return NT_OK;
}

void nt_params_usage(FILE *f)
{
    fputs(
        "usage: nettune probe [options]            (under mpirun/srun: one rank per GPU or node)\n"
        "       nettune probe --local [options]    (one node, no launcher: Slurm prolog)\n"
        "\n"
        "Finds each node's topology, measures its links, judges them and writes one JSON report\n"
        "(nettune.report/1). Exit: 0 healthy, 1 a check failed or a node stopped answering,\n"
        "2 could not run, 3 stopped early.\n"
        "\n"
        "Run:\n"
        "  --local               this node only: inventory, expectations, PCIe, software, local\n"
        "                        probes (RDMA loopback); no MPI needed\n"
        "  --quick               constant number of pairing rounds (default)\n"
        "  --full                every node pair (N-1 rounds)\n"
        "  --probes LIST         link probes to run, comma-separated (default: all):\n",
        f);
    {
        int n;
        const nt_link_probe_ops_t *const *t = nt_probe_registry(&n);
        for (int k = 0; k < n; k++)
            fprintf(f, "                          %-6s %s\n", t[k]->kind, t[k]->what);
    }
    fputs(
        "  --sizes LIST          message sizes up to 64M, e.g. 8,4K,1M,4M (the default);\n"
        "                        below 64K: latency (ping-pong), from 64K: bandwidth (window)\n"
        "  --budget SECONDS      time per size and direction, first message included (default\n"
        "                        0.05, at most 10): a size costs this plus about one message\n"
        "  --time-limit SECONDS  stop, write the partial report, exit 3 (or 1) (default none)\n"
        "  --peer-timeout SECONDS  a peer without progress this long is dead (default 30)\n"
        "  --no-retest           do not measure failing pairs a second time\n"
        "Fabric phases under load (docs/fabric.md; after the pairwise rounds of --full):\n"
        "  --fabric              the fabric phases only: every node sends at once (bisection,\n"
        "                        all-to-all, random rings, rails), compared with the same pairs\n"
        "                        alone; one rank per node takes part\n"
        "  --fabric-budget SECONDS  time for all the fabric phases (default 60; 0: none after\n"
        "                        --full); separate from --budget\n"
        "  --fabric-bytes SIZE   bytes per flow (default 16M)\n"
        "  --fabric-ifaces LIST  the rails, e.g. eth0,eth1 (default: the interface of the\n"
        "                        default route)\n"
        "  --fabric-seed N       the schedule's seed (default: drawn; the report has it)\n"
        "Judge:\n"
        "  --thresholds FILE     nettune.thresholds/1 file (per node class expectations)\n"
        "  --print-thresholds    print the built-in thresholds as a file and exit\n"
        "  --expect SPEC         gpus=N,nics=N,nic_rate_Gbps=R,pcie=genXxW,nvlinks=N for every\n"
        "                        node\n"
        "  --baseline REPORT     a known-good run's report: versions and NCCL_* variables that\n"
        "                        differ from it fail (config_drift)\n"
        "  --tuning-file FILE    the plugin's nettune.tuning/1 file: every node must have the\n"
        "                        same one (fnv1a64) and it must load (tuning_file)\n"
        "  --require LIST        gpu,rdma: a missing part fails instead of being skipped\n"
        "  --strict              warnings exit 1 too\n"
        "  --fabric-topology FILE  ibnetdiscover or iblinkinfo output: the fabric phases'\n"
        "                        groups are checked against its leaf switches\n"
        "Inputs and outputs:\n"
        "  --topology FILE       hwloc XML export instead of the live machine\n"
        "  --output FILE         report path (default nettune-report.json; - = stdout)\n"
        "  --samples all         keep every sample of passing links too (default: summaries)\n"
        "  --quiet               no summary on stdout\n"
        "Slurm (docs/slurm.md; rank 0, after the report is written):\n"
        "  --drain               scontrol-drain every failed node with its report reason\n"
        "                        (an administrator's drain is left alone)\n"
        "  --drain=dry-run       print the scontrol lines instead of running them\n"
        "  --resume-passing      resume the nodes of a completed run that pass and that Slurm\n"
        "                        shows drained with a reason starting nettune:\n"
        "RDMA:\n"
        "  --rdma-qps N          queue pairs per RDMA bandwidth test (default 1)\n"
        "  --gid-index N         RoCE GID index for every port (default: chosen as NCCL does)\n"
        "  --rdma-loopback       also test each NIC against itself and NICs against each other\n"
        "  --rdma-max-size SIZE  largest RDMA message (default 8M)\n"
        "GPU:\n"
        "  --gpu-probes LIST     h2d,d2h,bidir,p2p,latency,local (default: all)\n"
        "  --gpu-buffer-size SIZE  copy size of the GPU bandwidth tests (default 256M)\n"
        "  --checks-only         no traffic and no GPU memory: inventory, link states, counters,\n"
        "                        software, node checks (a health check beside a running job)\n"
        "  --help, --version\n"
        "\n"
        "Environment: NETTUNE_DEBUG=WARN|INFO|DEBUG|TRACE, NETTUNE_DEBUG_SUBSYS=MPI,RDMA,...,\n"
        "NETTUNE_SYSFS_ROOT=DIR (read sysfs from a captured tree), NETTUNE_FAKE_NODES=N (tests\n"
        "only: split the ranks into N nodes named fake0..), and NCCL_IB_HCA, NCCL_IB_GID_INDEX,\n"
        "NCCL_IB_TC, NCCL_IB_SL, NCCL_IB_ROCE_VERSION_NUM, NCCL_IB_ADDR_FAMILY, "
        "NCCL_IB_ADDR_RANGE\n"
        "as NCCL reads them.\n",
        f);
}

enum {
    OPT_LOCAL = 256,
    OPT_QUICK,
    OPT_FULL,
    OPT_PROBES,
    OPT_SIZES,
    OPT_BUDGET,
    OPT_TIME_LIMIT,
    OPT_PEER_TIMEOUT,
    OPT_NO_RETEST,
    OPT_THRESHOLDS,
    OPT_PRINT_THRESHOLDS,
    OPT_EXPECT,
    OPT_BASELINE,
    OPT_TUNING_FILE,
    OPT_REQUIRE,
    OPT_STRICT,
    OPT_TOPOLOGY,
    OPT_OUTPUT,
    OPT_SAMPLES,
    OPT_QUIET,
    OPT_RDMA_QPS,
    OPT_GID_INDEX,
    OPT_RDMA_LOOPBACK,
    OPT_RDMA_MAX,
    OPT_GPU_PROBES,
    OPT_GPU_BYTES,
    OPT_CHECKS_ONLY,
    OPT_DRAIN,
    OPT_RESUME_PASSING,
    OPT_FABRIC,
    OPT_FABRIC_BUDGET,
    OPT_FABRIC_BYTES,
    OPT_FABRIC_IFACES,
    OPT_FABRIC_SEED,
    OPT_HELP,
    OPT_VERSION,
    OPT_FABRIC_TOPOLOGY
};

static const struct option nt_long_opts[] = {
    {"local", no_argument, NULL, OPT_LOCAL},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"full", no_argument, NULL, OPT_FULL},
    {"probes", required_argument, NULL, OPT_PROBES},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"budget", required_argument, NULL, OPT_BUDGET},
    {"time-limit", required_argument, NULL, OPT_TIME_LIMIT},
    {"peer-timeout", required_argument, NULL, OPT_PEER_TIMEOUT},
    {"no-retest", no_argument, NULL, OPT_NO_RETEST},
    {"thresholds", required_argument, NULL, OPT_THRESHOLDS},
    {"print-thresholds", no_argument, NULL, OPT_PRINT_THRESHOLDS},
    {"expect", required_argument, NULL, OPT_EXPECT},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"fabric-topology", required_argument, NULL, OPT_FABRIC_TOPOLOGY},
    {"tuning-file", required_argument, NULL, OPT_TUNING_FILE},
    {"require", required_argument, NULL, OPT_REQUIRE},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"output", required_argument, NULL, OPT_OUTPUT},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"rdma-qps", required_argument, NULL, OPT_RDMA_QPS},
    {"gid-index", required_argument, NULL, OPT_GID_INDEX},
    {"rdma-loopback", no_argument, NULL, OPT_RDMA_LOOPBACK},
    {"rdma-max-size", required_argument, NULL, OPT_RDMA_MAX},
    {"gpu-probes", required_argument, NULL, OPT_GPU_PROBES},
    {"gpu-buffer-size", required_argument, NULL, OPT_GPU_BYTES},
    {"checks-only", no_argument, NULL, OPT_CHECKS_ONLY},
    {"drain", optional_argument, NULL, OPT_DRAIN},
    {"resume-passing", no_argument, NULL, OPT_RESUME_PASSING},
    {"fabric", no_argument, NULL, OPT_FABRIC},
    {"fabric-budget", required_argument, NULL, OPT_FABRIC_BUDGET},
    {"fabric-bytes", required_argument, NULL, OPT_FABRIC_BYTES},
    {"fabric-ifaces", required_argument, NULL, OPT_FABRIC_IFACES},
    {"fabric-seed", required_argument, NULL, OPT_FABRIC_SEED},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

nt_status_t nt_params_parse(int argc, char **argv, nt_probe_params_t *p, nt_params_action_t *action,
                            char *err, size_t errlen)
{
    int c, mode_set = 0;
    nt_status_t st = NT_OK;
    /* The last option given that configures one probe: a probe --probes leaves out. */
    const char *rdma_opt = NULL, *gpu_opt = NULL;
    /* The last option given that configures the fabric phases: nothing to configure unless
     * they run (--fabric or --full). */
    const char *fabric_opt = NULL;

    memset(p, 0, sizeof(*p));
    p->mode = NT_SCHED_QUICK;
    nt_parse_sizes("8,4K,1M,4M", p, err, errlen);
    p->budget_s = 0.05;
    p->peer_timeout_s = 30.0;
    p->output = "nettune-report.json";
    p->rdma_qps = 1;
    p->gid_index = -1;
    p->rdma_max_bytes = 8u << 20;
    p->fabric_budget_s = 60.0;
    p->fabric_bytes = 16u << 20;
    *action = NT_ACTION_RUN;
    err[0] = '\0';

    optind = 0; /* 0, not 1: glibc then resets its own state too (a second parse, as in tests) */
    opterr = 0;
    while (st == NT_OK && (c = getopt_long(argc, argv, ":ho:q", nt_long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_LOCAL:
            p->local = 1;
            break;
        case OPT_QUICK:
        case OPT_FULL:
            if (mode_set && p->mode != (c == OPT_FULL ? NT_SCHED_FULL : NT_SCHED_QUICK)) {
                snprintf(err, errlen, "--quick and --full exclude each other: give one");
                st = NT_ERR_INVALID;
            }
            p->mode = c == OPT_FULL ? NT_SCHED_FULL : NT_SCHED_QUICK;
            mode_set = 1;
            break;
        case OPT_PROBES: {
            char names[128], buf[128], *save = NULL;
            nt_probe_registry_names(names, sizeof(names), ", ");
            if (!optarg[strspn(optarg, ", ")]) {
                snprintf(err, errlen, "--probes is empty: give one or more of %s", names);
                st = NT_ERR_INVALID;
                break;
            }
            snprintf(buf, sizeof(buf), "%s", optarg);
            for (char *t = strtok_r(buf, ",", &save); t && st == NT_OK;
                 t = strtok_r(NULL, ",", &save)) {
                if (nt_probe_registry_find(t) < 0) {
                    snprintf(err, errlen, "unknown probe '%s' in --probes: use %s", t, names);
                    st = NT_ERR_INVALID;
                }
            }
            p->probes = optarg;
            break;
        }
        case OPT_SIZES:
            st = nt_parse_sizes(optarg, p, err, errlen);
            break;
        case OPT_BUDGET:
            st = nt_parse_seconds("--budget", optarg, 0.001, 10, &p->budget_s, err, errlen);
            break;
        case OPT_TIME_LIMIT:
            st =
                nt_parse_seconds("--time-limit", optarg, 0.001, 1e7, &p->time_limit_s, err, errlen);
            break;
        case OPT_PEER_TIMEOUT:
            st = nt_parse_seconds("--peer-timeout", optarg, 0.1, 86400, &p->peer_timeout_s, err,
                                  errlen);
            break;
        case OPT_NO_RETEST:
            p->no_retest = 1;
            break;
        case OPT_THRESHOLDS:
            p->thresholds = optarg;
            break;
        case OPT_PRINT_THRESHOLDS:
            *action = NT_ACTION_PRINT_THRESHOLDS;
            break;
        case OPT_EXPECT:
            p->expect = optarg;
            break;
        case OPT_BASELINE:
            p->baseline = optarg;
            break;
        case OPT_FABRIC_TOPOLOGY:
            p->fabric_topology = optarg;
            fabric_opt = "fabric-topology";
            break;
        case OPT_TUNING_FILE:
            p->tuning_file = optarg;
            break;
        case OPT_REQUIRE:
            st = nt_require_parse(optarg, &p->require, err, errlen);
            break;
        case OPT_STRICT:
            p->strict = 1;
            break;
        case OPT_TOPOLOGY:
            p->topology = optarg;
            break;
        case 'o':
        case OPT_OUTPUT:
            p->output = optarg;
            break;
        case OPT_SAMPLES:
            if (strcmp(optarg, "all") == 0)
                p->samples_all = 1;
            else if (strcmp(optarg, "summary") != 0) {
                snprintf(err, errlen, "bad value '%s' for --samples: use all or summary", optarg);
                st = NT_ERR_INVALID;
            }
            break;
        case 'q':
        case OPT_QUIET:
            p->quiet = 1;
            break;
        case OPT_RDMA_QPS:
            rdma_opt = "rdma-qps";
            st = nt_parse_int("--rdma-qps", optarg, 1, 64, &p->rdma_qps, err, errlen);
            break;
        case OPT_GID_INDEX:
            rdma_opt = "gid-index";
            st = nt_parse_int("--gid-index", optarg, 0, 1023, &p->gid_index, err, errlen);
            break;
        case OPT_RDMA_LOOPBACK:
            rdma_opt = "rdma-loopback";
            p->rdma_loopback = 1;
            break;
        case OPT_RDMA_MAX:
            rdma_opt = "rdma-max-size";
            if (nt_parse_size(optarg, &p->rdma_max_bytes) != NT_OK || p->rdma_max_bytes < 4096 ||
                p->rdma_max_bytes > (1u << 30)) {
                snprintf(err, errlen, "bad size '%s' for --rdma-max-size: give 4K to 1G", optarg);
                st = NT_ERR_INVALID;
            }
            break;
        case OPT_GPU_PROBES:
            gpu_opt = "gpu-probes";
            st = nt_gpu_probes_parse(optarg, &p->gpu_probes, err, errlen);
            break;
        case OPT_GPU_BYTES:
            gpu_opt = "gpu-buffer-size";
            if (nt_parse_size(optarg, &p->gpu_bytes) != NT_OK || p->gpu_bytes < (64u << 10) ||
                p->gpu_bytes > (4ul << 30)) {
                snprintf(err, errlen, "bad size '%s' for --gpu-buffer-size: give 64K to 4G",
                         optarg);
                st = NT_ERR_INVALID;
            }
            break;
        case OPT_DRAIN:
            if (!optarg)
                p->drain = NT_DRAIN_APPLY;
            else if (strcmp(optarg, "dry-run") == 0)
                p->drain = NT_DRAIN_DRY_RUN;
            else {
                snprintf(err, errlen, "bad value '%s' for --drain: use --drain or --drain=dry-run",
                         optarg);
                st = NT_ERR_INVALID;
            }
            break;
        case OPT_CHECKS_ONLY:
            p->checks_only = 1;
            break;
        case OPT_RESUME_PASSING:
            p->resume_passing = 1;
            break;
        case OPT_FABRIC:
            p->fabric = 1;
            break;
        case OPT_FABRIC_BUDGET:
            fabric_opt = "fabric-budget";
            st = nt_parse_seconds("--fabric-budget", optarg, 0, 86400, &p->fabric_budget_s, err,
                                  errlen);
            break;
        case OPT_FABRIC_BYTES:
            fabric_opt = "fabric-bytes";
            if (nt_parse_size(optarg, &p->fabric_bytes) != NT_OK || p->fabric_bytes < 4096 ||
                p->fabric_bytes > (1u << 30)) {
                snprintf(err, errlen, "bad size '%s' for --fabric-bytes: give 4K to 1G", optarg);
                st = NT_ERR_INVALID;
            }
            break;
        case OPT_FABRIC_IFACES:
            fabric_opt = "fabric-ifaces";
            st = nt_parse_ifaces(optarg, err, errlen);
            p->fabric_ifaces = optarg;
            break;
        case OPT_FABRIC_SEED: {
            char *end;
            unsigned long long v;
            fabric_opt = "fabric-seed";
            errno = 0;
            v = strtoull(optarg, &end, 10);
            if (end == optarg || *end || errno || optarg[0] == '-' || v >= (1ull << 53)) {
                snprintf(err, errlen,
                         "bad value '%s' for --fabric-seed: give an integer from 0 to 2^53-1",
                         optarg);
                st = NT_ERR_INVALID;
            }
            p->fabric_seed = v;
            p->fabric_seed_set = 1;
            break;
        }
        case 'h':
        case OPT_HELP:
            *action = NT_ACTION_HELP;
            break;
        case OPT_VERSION:
            *action = NT_ACTION_VERSION;
            break;
        case ':':
            snprintf(err, errlen, "option '%s' needs a value (see nettune probe --help)",
                     argv[optind - 1]);
            st = NT_ERR_INVALID;
            break;
        default:
            snprintf(err, errlen, "unknown option '%s' (see nettune probe --help)",
                     argv[optind - 1]);
            st = NT_ERR_INVALID;
            break;
        }
    }
    if (st == NT_OK && p->local && mode_set) {
        snprintf(err, errlen,
                 "--local measures no links between nodes, so --%s has nothing to schedule: "
                 "drop one of them",
                 p->mode == NT_SCHED_FULL ? "full" : "quick");
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && p->local && nt_launcher_env_size() > 1) {
        snprintf(err, errlen,
                 "--local checks this node with one process: start it without "
                 "mpirun/srun (or with one task per node)");
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && (p->drain || p->resume_passing) && strcmp(p->output, "-") == 0) {
        snprintf(err, errlen,
                 "--drain and --resume-passing read the report back: give --output FILE, "
                 "not -");
        st = NT_ERR_INVALID;
    }
    for (int k = 0; k < 2 && st == NT_OK; k++) {
        const char *opt = k ? gpu_opt : rdma_opt, *kind = k ? "gpu" : "rdma";
        if (opt && !nt_probe_selected(p->probes, kind)) {
            snprintf(err, errlen,
                     "--%s configures the %s probe, which --probes %s leaves out: add %s to "
                     "--probes, or drop --%s",
                     opt, kind, p->probes, kind, opt);
            st = NT_ERR_INVALID;
        }
    }
    if (st == NT_OK && fabric_opt && !p->fabric && p->mode != NT_SCHED_FULL) {
        snprintf(err, errlen,
                 "--%s configures the fabric phases, which run with --fabric or --full: add "
                 "one of them, or drop --%s",
                 fabric_opt, fabric_opt);
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && p->fabric && p->fabric_budget_s <= 0) {
        snprintf(err, errlen,
                 "--fabric with --fabric-budget 0 runs nothing: give a budget in seconds "
                 "(e.g. --fabric-budget 60)");
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && p->fabric && p->checks_only) {
        snprintf(err, errlen,
                 "--checks-only sends no traffic and --fabric is traffic: drop one of them");
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (see nettune probe --help)", argv[optind]);
        st = NT_ERR_INVALID;
    }
    /* A dead peer must not outlast the time limit by much; but a deadline below 2 s would
     * call a merely slow peer dead. */
    if (st == NT_OK && p->time_limit_s > 0 && p->peer_timeout_s > p->time_limit_s &&
        p->time_limit_s >= 2.0) {
        NT_INFO(INIT, "--peer-timeout lowered from %g to the time limit %g s", p->peer_timeout_s,
                p->time_limit_s);
        p->peer_timeout_s = p->time_limit_s;
    } else if (st == NT_OK && p->time_limit_s > 0 && p->peer_timeout_s > 2.0 &&
               p->time_limit_s < 2.0) {
        NT_INFO(INIT, "--peer-timeout lowered from %g to 2 s (time limit %g s)", p->peer_timeout_s,
                p->time_limit_s);
        p->peer_timeout_s = 2.0;
    }
    return st;
}
