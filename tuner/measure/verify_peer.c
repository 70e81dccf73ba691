/* --verify (tuner/measure/measure.h): the A/B driver on the tuned side, and the defaults side,
 * every rank's child process, without the plugin and without the file, in its own process group
 * with its own communicator; parent and child take turns through a token on a socket pair,
 * every wait with a deadline. Both sides time their runs with nt_measure_verify_run (measure.c),
 * so the calls point one way: verify_peer.c -> measure.c. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "nettune/launcher.h"
#include "measure.h"
#include "nettune/exitcode.h"
#include "nt_tuning.h"

enum { TOK_READY = 1, TOK_STEP, TOK_DONE, TOK_STOP };

/* One token: the same binary on both ends of a local socket pair, so a plain struct. */
typedef struct {
    int32_t kind, coll, z, round, warmup, iters;
    int32_t status, plugin_loaded;
    uint64_t bytes;
    double mean_us;
    char err[400];
} token_t;

static double nt_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Send or receive the whole token before the deadline. NT_ERR_PEER: the other end closed. */
static nt_status_t nt_tok_xfer(int fd, token_t *t, int sending, double timeout_s)
{
    return nt_fd_xfer(fd, t, sizeof(*t), sending, nt_mono_s() + timeout_s);
}

/* The child ended (or the link broke): reap it if it did, say how, into err. */
static nt_status_t nt_child_gone(nt_measure_peer_t *p, nt_status_t st, const char *when, char *err,
                              size_t errlen)
{
    char how[64] = "its end of the link closed";
    if (st == NT_ERR_TIMEOUT)
        snprintf(how, sizeof(how), "no answer within %.0f s",
                 NT_MEASURE_TURN_TIMEOUTS * p->timeout_s);
    else if (p->pid > 0)
        for (int i = 0; i < 40; i++) { /* its exit status, when it has one (2 s at most) */
            int ws;
            if (waitpid(p->pid, &ws, WNOHANG) == p->pid) {
                if (WIFSIGNALED(ws))
                    snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(ws));
                else
                    snprintf(how, sizeof(how), "exit %d", WEXITSTATUS(ws));
                p->pid = -p->pid; /* reaped */
                break;
            }
            usleep(50000);
        }
    snprintf(err, errlen,
             "the defaults process of rank %d (pid %d, NCCL_TUNER_PLUGIN=none) %s: %s; the "
             "sizes measured before are kept",
             p->rank, p->pid < 0 ? -p->pid : p->pid, when, how);
    return st == NT_ERR_TIMEOUT ? NT_ERR_TIMEOUT : NT_ERR_PEER;
}

nt_status_t nt_measure_peer_spawn(nt_measure_peer_t *p, nt_launcher_t *l, const char *hub_host,
                                  const char *exe, const char *log, const char *backend,
                                  double timeout_s, char *err, size_t errlen)
{
    memset(p, 0, sizeof(*p));
    p->fd = -1;
    p->rank = nt_launcher_rank(l);
    p->timeout_s = timeout_s;
    snprintf(p->log, sizeof(p->log), "%s", log);
    int n = nt_launcher_size(l), hub = -1;
    int32_t port = 0;
    if (p->rank == 0 && n > 1) {
        struct sockaddr_in sa = {.sin_family = AF_INET};
        socklen_t sl = sizeof(sa);
        hub = nt_launcher_tcp_listen(hub_host, 0, n, err, errlen); /* rank 0's address only */
        if (hub < 0 || getsockname(hub, (struct sockaddr *)&sa, &sl)) {
            if (hub >= 0)
                snprintf(err, errlen, "the defaults processes' hub socket: %s", strerror(errno));
            port = -1;
        } else {
            port = ntohs(sa.sin_port);
        }
    }
    nt_status_t st = n > 1 ? l->ops->bcast(l, &port, sizeof(port), 0, timeout_s) : NT_OK;
    if (st != NT_OK || port < 0) {
        if (hub >= 0)
            close(hub);
        if (st != NT_OK)
            snprintf(err, errlen, "the defaults processes' hub port: %s", nt_status_string(st));
        else if (p->rank != 0)
            snprintf(err, errlen, "rank 0 could not open the defaults processes' hub socket");
        return st != NT_OK ? st : NT_ERR_SYSTEM;
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
        snprintf(err, errlen, "socketpair for the defaults process: %s", strerror(errno));
        if (hub >= 0)
            close(hub);
        return NT_ERR_SYSTEM;
    }
    char spec[128];
    snprintf(spec, sizeof(spec), "%d,%d,%d,%d,%d,%.3f", p->rank, n, (int)port, hub, sv[1],
             timeout_s);
    char path[4096]; /* the binary's own name in argv[0] (ps shows it), not /proc/self/exe */
    if (!realpath(exe, path))
        snprintf(path, sizeof(path), "%s", exe);
    char *argv[] = {path, "--verify-child", spec, (char *)hub_host, p->log, (char *)backend, NULL};
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* only calls that are safe between fork and exec in a threaded process */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(NT_EXIT_INCOMPLETE);
        fcntl(sv[1], F_SETFD, 0);
        if (hub >= 0)
            fcntl(hub, F_SETFD, 0);
        execv(path, argv);
        _exit(127);
    }
    close(sv[1]);
    if (hub >= 0)
        close(hub);
    if (pid < 0) {
        close(sv[0]);
        snprintf(err, errlen, "fork of the defaults process: %s", strerror(errno));
        return NT_ERR_SYSTEM;
    }
    p->fd = sv[0];
    p->pid = pid;
    return NT_OK;
}

nt_status_t nt_measure_peer_ready(nt_measure_peer_t *p, int *plugin_loaded, char *err,
                                  size_t errlen)
{
    token_t t;
    memset(&t, 0, sizeof(t));
    nt_status_t st = nt_tok_xfer(p->fd, &t, 0, NT_MEASURE_TURN_TIMEOUTS * p->timeout_s);
    if (st != NT_OK || t.kind != TOK_READY)
        return nt_child_gone(p, st != NT_OK ? st : NT_ERR_PEER, "did not start", err, errlen);
    *plugin_loaded = t.plugin_loaded;
    if (t.status != NT_OK) {
        t.err[sizeof(t.err) - 1] = 0;
        snprintf(err, errlen, "the defaults process of rank %d: %s", p->rank, t.err);
    }
    return (nt_status_t)t.status;
}

nt_status_t nt_measure_peer_step(nt_measure_peer_t *p, int coll, int z, unsigned long long bytes,
                                 int round, int warmup, int iters, double *mean_us, char *err,
                                 size_t errlen)
{
    token_t t;
    memset(&t, 0, sizeof(t));
    t.kind = TOK_STEP;
    t.coll = coll;
    t.z = z;
    t.round = round;
    t.warmup = warmup;
    t.iters = iters;
    t.bytes = bytes;
    nt_status_t st = nt_tok_xfer(p->fd, &t, 1, p->timeout_s);
    if (st == NT_OK)
        st = nt_tok_xfer(p->fd, &t, 0, NT_MEASURE_TURN_TIMEOUTS * p->timeout_s);
    if (st != NT_OK || t.kind != TOK_DONE)
        return nt_child_gone(p, st != NT_OK ? st : NT_ERR_PEER, "ended during its turn", err,
                             errlen);
    if (t.status != NT_OK) { /* whatever failed there, for this side the peer failed */
        t.err[sizeof(t.err) - 1] = 0;
        snprintf(err, errlen, "the defaults process of rank %d: %s (%s)", p->rank, t.err,
                 nt_status_string((nt_status_t)t.status));
        return NT_ERR_PEER;
    }
    *mean_us = t.mean_us;
    return NT_OK;
}

void nt_measure_peer_close(nt_measure_peer_t *p)
{
    if (p->fd >= 0) {
        token_t t;
        memset(&t, 0, sizeof(t));
        t.kind = TOK_STOP;
        (void)nt_tok_xfer(p->fd, &t, 1, 1);
        close(p->fd);
        p->fd = -1;
    }
    if (p->pid > 0) {
        double dl = nt_mono_s() + p->timeout_s;
        int ws;
        while (waitpid(p->pid, &ws, WNOHANG) == 0) {
            if (nt_mono_s() > dl) {
                kill(p->pid, SIGKILL);
                waitpid(p->pid, &ws, 0);
                break;
            }
            usleep(20000);
        }
        p->pid = 0;
    }
}

int nt_measure_child_main(int argc, char **argv, const nt_measure_backend_t *b)
{
    int rank, size, port, hubfd, fd;
    double timeout;
    if (argc < 3 ||
        sscanf(argv[0], "%d,%d,%d,%d,%d,%lf", &rank, &size, &port, &hubfd, &fd, &timeout) != 6 ||
        rank < 0 || size < 1 || rank >= size || fd < 0 || !(timeout > 0)) {
        fprintf(stderr, "nettune-tune-measure: --verify-child is started by --verify itself\n");
        return NT_EXIT_USAGE;
    }
    /* neither the plugin nor a file: NVIDIA/nccl v2.28.9-1 src/plugin/tuner.cc:58 */
    setenv("NCCL_TUNER_PLUGIN", "none", 1);
    unsetenv("NETTUNE_TUNING_FILE");
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    setenv("NCCL_DEBUG_FILE", argv[2], 1);
    nt_measure_capture_setup(argv[2]);
    double turn = NT_MEASURE_TURN_TIMEOUTS * timeout;
    char err[400] = "";
    token_t t;
    memset(&t, 0, sizeof(t));
    t.kind = TOK_READY;
    nt_launcher_t *l =
        size > 1 ? nt_launcher_tcp_create(rank, size, argv[1], port, rank == 0 ? hubfd : -1,
                                          timeout, err, sizeof(err))
                 : nt_launcher_local_create();
    nt_status_t st = l ? NT_OK : NT_ERR_PEER;
    int inited = 0, comm = 0;
    if (st == NT_OK && (st = b->ops->init(b->self, l, err, sizeof(err))) == NT_OK)
        inited = 1;
    static const nt_measure_comm_cfg_t cfg = {-1, -1, -1};
    if (st == NT_OK && (st = b->ops->comm_create(b->self, l, &cfg, err, sizeof(err))) == NT_OK)
        comm = 1;
    t.status = st;
    t.plugin_loaded = comm ? b->ops->tuner_loaded(b->self) : 0;
    snprintf(t.err, sizeof(t.err), "%s", err);
    nt_status_t x = nt_tok_xfer(fd, &t, 1, timeout);
    int rc = st == NT_OK && x == NT_OK ? NT_EXIT_OK : NT_EXIT_INCOMPLETE;
    nt_measure_opts_t o = {.trials = 1, .timeout_s = timeout};
    while (rc == NT_EXIT_OK) {
        x = nt_tok_xfer(fd, &t, 0, turn);
        if (x != NT_OK) {
            fprintf(stderr,
                    "nettune-tune-measure: defaults process of rank %d: %s from the tuned "
                    "process: stopping\n",
                    rank, x == NT_ERR_TIMEOUT ? "no turn" : "no link");
            rc = NT_EXIT_INCOMPLETE;
            break;
        }
        if (t.kind == TOK_STOP)
            break;
        if (t.kind != TOK_STEP) {
            rc = NT_EXIT_INCOMPLETE;
            break;
        }
        o.warmup = t.warmup;
        o.iters = t.iters;
        double mean = 0;
        err[0] = 0;
        st = nt_measure_verify_run(l, b, &o, t.coll, t.z, (unsigned long long)t.bytes, t.round,
                                   &mean, err, sizeof(err));
        t.kind = TOK_DONE;
        t.status = st;
        t.mean_us = mean;
        snprintf(t.err, sizeof(t.err), "%s", err);
        if (nt_tok_xfer(fd, &t, 1, timeout) != NT_OK || st != NT_OK)
            rc = NT_EXIT_INCOMPLETE;
    }
    if (comm)
        b->ops->comm_destroy(b->self);
    if (inited)
        b->ops->finalize(b->self);
    if (l && !strcmp(l->ops->name, "tcp"))
        nt_launcher_tcp_destroy(l);
    else
        nt_launcher_local_destroy(l);
    close(fd);
    return rc;
}

int nt_measure_verify_defaults_first(int round)
{
    return !(round & 1);
}

void nt_measure_ab_stats(const double *default_us, const double *tuned_us, int rounds,
                         nt_measure_ab_t *out)
{
    memset(out, 0, sizeof(*out));
    out->verdict = "same";
    if (rounds < 1)
        return;
    double rsum = 0, rmin = INFINITY, rmax = 0;
    for (int r = 0; r < rounds; r++) {
        double ratio = tuned_us[r] > 0 ? default_us[r] / tuned_us[r] : 0;
        out->default_us += default_us[r] / rounds;
        out->tuned_us += tuned_us[r] / rounds;
        rsum += ratio;
        rmin = ratio < rmin ? ratio : rmin;
        rmax = ratio > rmax ? ratio : rmax;
    }
    out->speedup = rsum / rounds;
    out->speedup_min = rmin;
    out->speedup_max = rmax;
    out->verdict = rmin > 1 ? "faster" : rmax < 1 ? "slower" : "same";
}

/* Which collectives the file has a rule for at n ranks (bit per nt_coll_t), or -1. */
static int nt_file_colls(const char *path, int n, char *err, size_t errlen)
{
    nt_tuning_t t;
    char e[256] = "";
    if (nt_tuning_load(path, NT_FORMAT_JSON, &t, e, sizeof(e)) != NT_TP_OK) {
        snprintf(err, errlen, "--verify '%s': %s", path, e);
        return -1;
    }
    int mask = 0;
    for (size_t i = 0; i < t.nrules; i++)
        if (t.rules[i].nranks == 0 || (int)t.rules[i].nranks == n)
            mask |= 1 << t.rules[i].coll;
    nt_tuning_cleanup(&t);
    if (!mask)
        snprintf(err, errlen,
                 "--verify '%s': no rule applies to %d ranks (launch as many ranks as the file "
                 "was tuned for)",
                 path, n);
    return mask;
}

/* The tuned side's communicator: the plugin reads NETTUNE_TUNING_FILE at communicator creation
 * (plugins/nccl-tuner/src/plugin.c init_common). Barriers around the environment: ranks that
 * share one (threads of the in-process launcher) all set it before any reads it, and all read
 * it before any clears it. */
static nt_status_t nt_make_tuned_comm(nt_launcher_t *l, const nt_measure_backend_t *b,
                                   const char *tuning, double timeout_s, char *err, size_t errlen)
{
    static const nt_measure_comm_cfg_t cfg = {-1, -1, -1};
    nt_status_t st = l->ops->barrier(l, timeout_s);
    if (st != NT_OK)
        return st;
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    setenv("NETTUNE_TUNING_FILE", tuning, 1);
    st = l->ops->barrier(l, timeout_s);
    if (st == NT_OK)
        st = b->ops->comm_create(b->self, l, &cfg, err, errlen);
    nt_status_t x = l->ops->barrier(l, timeout_s);
    unsetenv("NETTUNE_TUNING_FILE");
    return st != NT_OK ? st : x;
}

/* What every rank says after both sides started: ready, and where the plugin is loaded. */
typedef struct {
    int32_t status, tuned_loaded, defaults_loaded, pid, child_pid;
} side_state_t;

static cJSON *nt_side_json(const char *process, const char *plugin, const char *file, int loaded,
                        const side_state_t *all, int n, int child)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "process", process);
    if (plugin)
        cJSON_AddStringToObject(s, "NCCL_TUNER_PLUGIN", plugin);
    else
        cJSON_AddNullToObject(s, "NCCL_TUNER_PLUGIN");
    if (file)
        cJSON_AddStringToObject(s, "NETTUNE_TUNING_FILE", file);
    else
        cJSON_AddNullToObject(s, "NETTUNE_TUNING_FILE");
    cJSON_AddNumberToObject(s, "plugin_loaded_ranks", loaded);
    cJSON *p = cJSON_AddArrayToObject(s, "pids");
    for (int r = 0; r < n; r++)
        cJSON_AddItemToArray(p, cJSON_CreateNumber(child ? all[r].child_pid : all[r].pid));
    return s;
}

nt_status_t nt_measure_verify(nt_launcher_t *l, const nt_measure_backend_t *b,
                              nt_measure_peer_t *peer, const char *tuning_path,
                              unsigned long long min_bytes, unsigned long long max_bytes,
                              const nt_measure_opts_t *o, cJSON **doc, char *err, size_t errlen)
{
    *doc = NULL;
    int n = nt_launcher_size(l), rank = nt_launcher_rank(l);
    int mask = nt_file_colls(tuning_path, n, err, errlen);
    if (mask <= 0)
        return NT_ERR_INVALID;
    const char *plugin_env = getenv("NCCL_TUNER_PLUGIN");
    char plugin[4096];
    snprintf(plugin, sizeof(plugin), "%s", plugin_env ? plugin_env : "");
    /* both sides start: ours with the plugin and the file, the child without either */
    nt_status_t st = nt_make_tuned_comm(l, b, tuning_path, o->timeout_s, err, errlen);
    side_state_t me = {st, st == NT_OK ? b->ops->tuner_loaded(b->self) : 0, 0, (int32_t)getpid(),
                       peer->pid};
    char cerr[512] = "";
    int dl = 0;
    nt_status_t cst = nt_measure_peer_ready(peer, &dl, cerr, sizeof(cerr));
    me.defaults_loaded = dl;
    if (st == NT_OK && cst != NT_OK) {
        me.status = st = cst;
        snprintf(err, errlen, "%s", cerr);
    }
    side_state_t *all = calloc((size_t)n, sizeof(*all));
    if (!all)
        return NT_ERR_NOMEM;
    nt_status_t x = l->ops->allgather(l, &me, all, sizeof(me), o->timeout_s);
    int tuned_loaded = 0, defaults_loaded = 0;
    for (int r = 0; x == NT_OK && r < n; r++) {
        tuned_loaded += all[r].tuned_loaded != 0;
        defaults_loaded += all[r].defaults_loaded != 0;
        if (st == NT_OK && all[r].status != NT_OK) {
            snprintf(err, errlen, "rank %d could not start both sides (%s)", r,
                     nt_status_string((nt_status_t)all[r].status));
            st = NT_ERR_PEER;
        }
    }
    if (st == NT_OK && x != NT_OK) {
        snprintf(err, errlen, "the exchange after both sides started: %s", nt_status_string(x));
        st = x;
    }
    if (st == NT_OK && tuned_loaded < n) {
        snprintf(err, errlen,
                 "the tuned side has nettune's plugin loaded on %d of %d ranks "
                 "(NCCL_TUNER_PLUGIN=%s): no A/B",
                 tuned_loaded, n, plugin);
        st = NT_ERR_INVALID;
    }
    if (st == NT_OK && defaults_loaded > 0) {
        snprintf(err, errlen,
                 "the defaults side has nettune's plugin loaded on %d of %d ranks although "
                 "NCCL_TUNER_PLUGIN=none: it is not a run without it, no A/B",
                 defaults_loaded, n);
        st = NT_ERR_INVALID;
    }
    cJSON *d = NULL, *sizes = NULL;
    if (rank == 0) {
        d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "schema", "nettune.verify/1");
        cJSON_AddStringToObject(d, "backend", b->ops->name);
        cJSON_AddStringToObject(d, "tuning_file", tuning_path);
        cJSON_AddNumberToObject(d, "nranks", n);
        cJSON_AddNumberToObject(d, "rounds", o->trials);
        cJSON_AddNumberToObject(d, "warmup_iters", o->warmup);
        cJSON_AddNumberToObject(d, "iters", o->iters);
        cJSON_AddStringToObject(d, "order",
                                "ABBA: defaults first on even rounds, tuned first "
                                "on odd ones; one side on the GPU at a time");
        cJSON *sd = cJSON_AddObjectToObject(d, "sides");
        cJSON_AddItemToObject(sd, "tuned",
                              nt_side_json("this process (plugin and file)", plugin, tuning_path,
                                        tuned_loaded, all, n, 0));
        cJSON_AddItemToObject(
            sd, "defaults",
            nt_side_json("a child per rank (neither)", "none", NULL, defaults_loaded, all, n, 1));
        sizes = cJSON_AddArrayToObject(d, "sizes");
    }
    free(all);
    int rounds = o->trials > 0 ? o->trials : 1, nfast = 0, nslow = 0, nsame = 0, nsz = 0;
    double t0 = nt_mono_s(), logsum = 0, *tdef = calloc((size_t)rounds, sizeof(double)),
           *ttun = calloc((size_t)rounds, sizeof(double));
    if (!tdef || !ttun)
        st = st == NT_OK ? NT_ERR_NOMEM : st;
    for (int coll = 0; coll < 5 && st == NT_OK; coll++) {
        if (!(mask & 1 << coll))
            continue;
        int z = 0;
        for (unsigned long long bytes = min_bytes; bytes && bytes <= max_bytes && st == NT_OK;
             bytes <<= 1, z++) {
            /* the budget is rank 0's clock, broadcast: every rank stops before the same size */
            int32_t stop = o->budget_s > 0 && nt_mono_s() - t0 > o->budget_s;
            st = l->ops->bcast(l, &stop, sizeof(stop), 0, o->timeout_s);
            if (st == NT_OK && stop) {
                snprintf(err, errlen,
                         "--budget-seconds %.0f reached: the sizes measured so far are kept",
                         o->budget_s);
                st = NT_ERR_INTERRUPTED;
            }
            for (int r = 0; r < rounds && st == NT_OK; r++) {
                int defaults_first = nt_measure_verify_defaults_first(r);
                int warm = r == 0 ? o->warmup : 0;
                for (int k = 0; k < 2 && st == NT_OK; k++) {
                    int defaults = k == 0 ? defaults_first : !defaults_first;
                    if (defaults) {
                        st = nt_measure_peer_step(peer, coll, z, bytes, r, warm, o->iters, &tdef[r],
                                                  err, errlen);
                    } else {
                        nt_measure_opts_t oo = *o;
                        oo.warmup = warm;
                        st = nt_measure_verify_run(l, b, &oo, coll, z, bytes, r, &ttun[r], err,
                                                   errlen);
                    }
                }
            }
            if (st != NT_OK || rank != 0)
                continue;
            nt_measure_ab_t ab;
            nt_measure_ab_stats(tdef, ttun, rounds, &ab);
            nfast += !strcmp(ab.verdict, "faster");
            nslow += !strcmp(ab.verdict, "slower");
            nsame += !strcmp(ab.verdict, "same");
            logsum += log(ab.speedup);
            nsz++;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "coll", nt_coll_name(coll));
            cJSON_AddNumberToObject(e, "bytes", (double)bytes);
            cJSON_AddNumberToObject(e, "default_us", round(ab.default_us * 1000) / 1000);
            cJSON_AddNumberToObject(e, "tuned_us", round(ab.tuned_us * 1000) / 1000);
            cJSON_AddNumberToObject(e, "speedup", round(ab.speedup * 10000) / 10000);
            cJSON_AddNumberToObject(e, "speedup_min", round(ab.speedup_min * 10000) / 10000);
            cJSON_AddNumberToObject(e, "speedup_max", round(ab.speedup_max * 10000) / 10000);
            cJSON_AddStringToObject(e, "verdict", ab.verdict);
            cJSON_AddItemToArray(sizes, e);
        }
    }
    free(tdef);
    free(ttun);
    b->ops->comm_destroy(b->self);
    if (d) {
        cJSON *sm = cJSON_AddObjectToObject(d, "summary");
        cJSON_AddNumberToObject(sm, "sizes", nsz);
        cJSON_AddNumberToObject(sm, "faster", nfast);
        cJSON_AddNumberToObject(sm, "slower", nslow);
        cJSON_AddNumberToObject(sm, "same", nsame);
        cJSON_AddNumberToObject(sm, "geomean_speedup",
                                nsz ? round(exp(logsum / nsz) * 10000) / 10000 : 0);
        cJSON_AddBoolToObject(d, "completed", st == NT_OK);
        if (st != NT_OK)
            cJSON_AddStringToObject(d, "error", err);
    }
    *doc = d;
    return st;
}
