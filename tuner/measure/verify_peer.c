/* --verify's defaults side (tuner/measure/measure.h): every rank's child process, without the
 * plugin and without the file, in its own process group with its own communicator; parent and
 * child take turns through a token on a socket pair, every wait with a deadline. */
#include <errno.h>
#include <fcntl.h>
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

enum { TOK_READY = 1, TOK_STEP, TOK_DONE, TOK_STOP };

/* One token: the same binary on both ends of a local socket pair, so a plain struct. */
typedef struct {
    int32_t kind, coll, z, round, warmup, iters;
    int32_t status, plugin_loaded;
    uint64_t bytes;
    double mean_us;
    char err[400];
} token_t;

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Send or receive the whole token before the deadline. NT_ERR_PEER: the other end closed. */
static nt_status_t tok_xfer(int fd, token_t *t, int sending, double timeout_s)
{
    return nt_fd_xfer(fd, t, sizeof(*t), sending, mono_s() + timeout_s);
}

/* The child ended (or the link broke): reap it if it did, say how, into err. */
static nt_status_t child_gone(nt_measure_peer_t *p, nt_status_t st, const char *when, char *err,
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
    nt_status_t st = tok_xfer(p->fd, &t, 0, NT_MEASURE_TURN_TIMEOUTS * p->timeout_s);
    if (st != NT_OK || t.kind != TOK_READY)
        return child_gone(p, st != NT_OK ? st : NT_ERR_PEER, "did not start", err, errlen);
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
    nt_status_t st = tok_xfer(p->fd, &t, 1, p->timeout_s);
    if (st == NT_OK)
        st = tok_xfer(p->fd, &t, 0, NT_MEASURE_TURN_TIMEOUTS * p->timeout_s);
    if (st != NT_OK || t.kind != TOK_DONE)
        return child_gone(p, st != NT_OK ? st : NT_ERR_PEER, "ended during its turn", err, errlen);
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
        (void)tok_xfer(p->fd, &t, 1, 1);
        close(p->fd);
        p->fd = -1;
    }
    if (p->pid > 0) {
        double dl = mono_s() + p->timeout_s;
        int ws;
        while (waitpid(p->pid, &ws, WNOHANG) == 0) {
            if (mono_s() > dl) {
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
    nt_status_t x = tok_xfer(fd, &t, 1, timeout);
    int rc = st == NT_OK && x == NT_OK ? NT_EXIT_OK : NT_EXIT_INCOMPLETE;
    nt_measure_opts_t o = {.trials = 1, .timeout_s = timeout};
    while (rc == NT_EXIT_OK) {
        x = tok_xfer(fd, &t, 0, turn);
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
        if (tok_xfer(fd, &t, 1, timeout) != NT_OK || st != NT_OK)
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
