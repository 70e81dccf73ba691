/* Slurm drain and resume from nettune probe's final report: see drain.h and docs/slurm.md. */
#include "drain.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "judge/judge.h"
#include "nettune/log.h"
#include "nettune/report.h"

#define NT_DRAIN_MAX_ACTIONS 4096
#define NT_DRAIN_CMD_TIMEOUT_S 30.0

size_t nt_drain_parse_sinfo(const char *text, nt_slurm_node_t *nodes, size_t max)
{
    size_t n = 0;
    const char *line = text;

    while (line && *line && n < max) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[NT_DRAIN_NAME_MAX * 2 + NT_DRAIN_REASON_MAX + 64];
        char *f[4], *save = buf;
        int k, dup = 0;

        if (len >= sizeof(buf))
            len = sizeof(buf) - 1;
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = end ? end + 1 : NULL;
        for (k = 0; k < 3; k++) {
            char *bar = strchr(save, '|');
            if (!bar)
                break;
            *bar = '\0';
            f[k] = save;
            save = bar + 1;
        }
        if (k < 3 || !*f[0])
            continue;
        f[3] = save;
        for (size_t i = 0; i < n; i++)
            dup |= strcmp(nodes[i].name, f[0]) == 0;
        if (dup)
            continue;
        snprintf(nodes[n].name, sizeof(nodes[n].name), "%.*s", NT_DRAIN_NAME_MAX - 1, f[0]);
        snprintf(nodes[n].host, sizeof(nodes[n].host), "%.*s", NT_DRAIN_NAME_MAX - 1, f[1]);
        snprintf(nodes[n].state, sizeof(nodes[n].state), "%.63s", f[2]);
        snprintf(nodes[n].reason, sizeof(nodes[n].reason), "%.*s", NT_DRAIN_REASON_MAX - 1, f[3]);
        n++;
    }
    return n;
}

/* The Slurm node of report host h: NodeHostname first, then the node name; NULL if none. */
static const nt_slurm_node_t *nt_drain_find(const nt_slurm_node_t *nodes, size_t n, const char *h)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(nodes[i].host, h) == 0)
            return &nodes[i];
    for (size_t i = 0; i < n; i++)
        if (strcmp(nodes[i].name, h) == 0)
            return &nodes[i];
    return NULL;
}

/* Slurm's state string says the node is drained or draining (sinfo %T: "drained",
 * "draining", "mixed+drain", "idle+drain"...). */
static int nt_drain_is_drained(const char *state)
{
    return strstr(state, "drain") != NULL;
}

static int nt_drain_is_ours(const char *reason)
{
    return strncmp(reason, NT_DRAIN_REASON_PREFIX, strlen(NT_DRAIN_REASON_PREFIX)) == 0;
}

/* The length of a check table code at s ("NT-NET-001 ..." -> 10), 0 when s has none. */
static size_t nt_drain_code_len(const char *s)
{
    size_t k = strcspn(s, " ");
    const char *dash = k > 7 ? memchr(s + 3, '-', k - 3) : NULL;
    if (strncmp(s, "NT-", 3) != 0 || !dash || s + k - dash != 4)
        return 0;
    return k;
}

/* The check word of a nettune reason ("nettune:NT-NET-001 bw 0.04/0.6GB/s ..." or, from
 * before the codes, "nettune:bw 0.04/0.6GB/s ..." -> "bw") into w. */
static void nt_drain_reason_word(const char *reason, char *w, size_t len)
{
    const char *s = reason + strlen(NT_DRAIN_REASON_PREFIX);
    size_t k = nt_drain_code_len(s);
    if (k)
        s += k + strspn(s + k, " ");
    k = strcspn(s, " ");
    if (k >= len)
        k = len - 1;
    memcpy(w, s, k);
    w[k] = '\0';
}

/* True when the report re-checked what node host was drained for: the reason's word is a
 * judged (pass or warn) check of that host, or a link word (bw, lat, p99, links, no_answer:
 * probes/judge/verdict.c, probes/judge/) and the report has links of that host. A --local run has
 * no links: it never resumes a node drained for its links. */
static int nt_drain_rechecked(const cJSON *report, const char *host, const char *reason)
{
    static const char *const link_words[] = {"bw", "lat", "p99", "links", "no_answer"};
    char w[64];
    const cJSON *e;

    nt_drain_reason_word(reason, w, sizeof(w));
    cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(report, "checks")) {
        const char *v = nt_json_get_str(e, "verdict", "");
        if (strcmp(nt_json_get_str(e, "host", ""), host) == 0 &&
            strcmp(nt_judge_check_word(e), w) == 0 && (!strcmp(v, "pass") || !strcmp(v, "warn")))
            return 1;
    }
    for (size_t i = 0; i < sizeof(link_words) / sizeof(link_words[0]); i++) {
        if (strcmp(w, link_words[i]) != 0)
            continue;
        cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive(report, "links")) {
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "src");
            const cJSON *dst = cJSON_GetObjectItemCaseSensitive(e, "dst");
            if (strcmp(nt_json_get_str(src, "host", ""), host) == 0 ||
                strcmp(nt_json_get_str(dst, "host", ""), host) == 0)
                return 1;
        }
    }
    return 0;
}

/* Adds one action; NT_ERR_INVALID when out is full. */
static nt_status_t nt_drain_add(nt_drain_action_t *out, size_t max, size_t *nout,
                                nt_drain_kind_t kind, const char *node, const char *reason)
{
    nt_drain_action_t *a;
    if (*nout >= max)
        return NT_ERR_INVALID;
    a = &out[(*nout)++];
    memset(a, 0, sizeof(*a));
    a->kind = kind;
    snprintf(a->node, sizeof(a->node), "%s", node);
    if (reason) {
        snprintf(a->reason, sizeof(a->reason), "%s", reason);
        for (char *c = a->reason; *c; c++)
            if (*c == '\n' || *c == '\r' || *c == '\t')
                *c = ' ';
    }
    return NT_OK;
}

nt_status_t nt_drain_plan(const cJSON *report, const nt_slurm_node_t *nodes, size_t n,
                          const char *local_node, int resume, nt_drain_action_t *out, size_t max,
                          size_t *nout)
{
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(summary, "failed_nodes");
    const cJSON *completed = cJSON_GetObjectItemCaseSensitive(summary, "completed");
    const cJSON *rnodes = cJSON_GetObjectItemCaseSensitive(report, "nodes");
    const cJSON *e;
    nt_status_t st = NT_OK;

    *nout = 0;
    if (!cJSON_IsArray(failed))
        return NT_ERR_INVALID;
    if (local_node && !*local_node)
        local_node = NULL;
    cJSON_ArrayForEach (e, failed) {
        const char *host = nt_json_get_str(e, "host", NULL);
        const char *reason = nt_json_get_str(e, "reason", NULL);
        const nt_slurm_node_t *sn;
        const char *name;
        if (!host || !reason)
            continue;
        name = local_node ? local_node : host;
        sn = nt_drain_find(nodes, n, name);
        if (sn) {
            name = sn->name;
            if (nt_drain_is_drained(sn->state) && !nt_drain_is_ours(sn->reason))
                continue;
        }
        /* The node's code after the prefix: "nettune:NT-NET-001 bw 0.82/2.77GB/s ...", so
         * sinfo -R shows what to do first (docs/codes.md); the DRAIN line prints the same. */
        {
            char coded[NT_DRAIN_REASON_MAX];
            st = nt_drain_add(out, max, nout, NT_DRAIN_DO_DRAIN, name,
                              nt_failed_node_reason(e, coded, sizeof(coded)));
            if (st != NT_OK)
                return st;
        }
    }
    if (!resume || !cJSON_IsTrue(completed) || n == 0)
        return NT_OK;
    cJSON_ArrayForEach (e, rnodes) {
        const char *host = nt_json_get_str(e, "hostname", NULL);
        const nt_slurm_node_t *sn;
        const cJSON *f;
        int is_failed = 0;
        if (!host)
            continue;
        cJSON_ArrayForEach (f, failed) {
            const char *fh = nt_json_get_str(f, "host", "");
            is_failed |= strcmp(fh, host) == 0;
        }
        if (is_failed)
            continue;
        sn = nt_drain_find(nodes, n, local_node ? local_node : host);
        if (!sn || !nt_drain_is_drained(sn->state) || !nt_drain_is_ours(sn->reason) ||
            !nt_drain_rechecked(report, host, sn->reason))
            continue;
        if ((st = nt_drain_add(out, max, nout, NT_DRAIN_DO_RESUME, sn->name, NULL)) != NT_OK)
            return st;
    }
    return NT_OK;
}

nt_status_t nt_drain_format(const nt_drain_action_t *a, char *buf, size_t len)
{
    size_t k;
    int w;

    if (a->kind == NT_DRAIN_DO_RESUME) {
        w = snprintf(buf, len, "scontrol update NodeName=%s State=RESUME", a->node);
        return w >= 0 && (size_t)w < len ? NT_OK : NT_ERR_INVALID;
    }
    w = snprintf(buf, len, "scontrol update NodeName=%s State=DRAIN Reason='", a->node);
    if (w < 0 || (size_t)w >= len)
        return NT_ERR_INVALID;
    k = (size_t)w;
    for (const char *c = a->reason; *c; c++) {
        const char *piece = *c == '\'' ? "'\\''" : NULL;
        size_t pl = piece ? strlen(piece) : 1;
        if (k + pl + 2 > len)
            return NT_ERR_INVALID;
        if (piece)
            memcpy(buf + k, piece, pl);
        else
            buf[k] = *c;
        k += pl;
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return NT_OK;
}

static double nt_drain_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs argv (from PATH) with stdin from /dev/null, killing it after timeout_s; its stdout goes
 * into outbuf (up to outlen - 1 bytes, the rest read and dropped; dropped all when outbuf is
 * NULL); its stderr is kept, not shown, and its last line goes into errbuf (so that the caller
 * says in one line why: sinfo's "fatal: Could not establish a configuration source" on a host
 * outside Slurm). NT_ERR_IO when it cannot start or exits non-zero, NT_ERR_TIMEOUT when
 * killed. */
static nt_status_t nt_drain_exec(char *const argv[], double timeout_s, char *outbuf, size_t outlen,
                                 char *errbuf, size_t errlen)
{
    int pfd[2], efd[2], status = 0, open_fds = 2;
    pid_t pid;
    size_t got = 0, egot = 0;
    char err[2048];
    double deadline = nt_drain_now() + timeout_s;
    nt_status_t st = NT_OK;

    if (errbuf && errlen)
        errbuf[0] = '\0';
    if (pipe(pfd) != 0)
        return NT_ERR_IO;
    if (pipe(efd) != 0) {
        close(pfd[0]);
        close(pfd[1]);
        return NT_ERR_IO;
    }
    pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        close(efd[0]);
        close(efd[1]);
        return NT_ERR_IO;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0)
            dup2(null, 0);
        dup2(pfd[1], 1);
        dup2(efd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        close(efd[0]);
        close(efd[1]);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    close(efd[1]);
    /* stdout into outbuf, stderr kept (its last line says why), both until EOF or the deadline */
    struct pollfd fds[2] = {{.fd = pfd[0], .events = POLLIN}, {.fd = efd[0], .events = POLLIN}};
    while (open_fds > 0) {
        double left = deadline - nt_drain_now();
        if (left <= 0) {
            kill(pid, SIGKILL);
            st = NT_ERR_TIMEOUT;
            break;
        }
        int pr = poll(fds, 2, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0) {
            st = NT_ERR_IO;
            kill(pid, SIGKILL);
            break;
        }
        for (int f = 0; f < 2; f++) {
            char tmp[4096];
            ssize_t r;
            if (fds[f].fd < 0 || !(fds[f].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            r = read(fds[f].fd, tmp, sizeof(tmp));
            if (r < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (r <= 0) {
                close(fds[f].fd);
                fds[f].fd = -1;
                open_fds--;
                continue;
            }
            char *dst = f == 0 ? outbuf : err;
            size_t cap = f == 0 ? (outbuf ? outlen : 0) : sizeof(err), *n = f == 0 ? &got : &egot;
            if (dst && *n + 1 < cap) {
                size_t c = (size_t)r < cap - 1 - *n ? (size_t)r : cap - 1 - *n;
                memcpy(dst + *n, tmp, c);
                *n += c;
            }
        }
    }
    for (int f = 0; f < 2; f++)
        if (fds[f].fd >= 0)
            close(fds[f].fd);
    while (st == NT_OK) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            st = NT_ERR_IO;
            break;
        }
        if (nt_drain_now() > deadline) {
            kill(pid, SIGKILL);
            st = NT_ERR_TIMEOUT;
            break;
        }
        usleep(20000);
    }
    if (st == NT_ERR_TIMEOUT)
        waitpid(pid, &status, 0);
    else if (st == NT_OK && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        st = NT_ERR_IO;
    if (outbuf)
        outbuf[got] = '\0';
    /* The command's own last line of stderr, for the caller's one line. */
    err[egot] = '\0';
    while (egot && (err[egot - 1] == '\n' || err[egot - 1] == '\r'))
        err[--egot] = '\0';
    if (errbuf && errlen) {
        const char *last = strrchr(err, '\n');
        /* A command that ran and failed says how it exited, then its own last line. */
        int n = st == NT_ERR_IO && WIFEXITED(status)
                    ? snprintf(errbuf, errlen, "exit %d%s", WEXITSTATUS(status), egot ? ": " : "")
                    : 0;
        size_t at = n > 0 && (size_t)n < errlen ? (size_t)n : 0;
        size_t k = strlen(last ? last + 1 : err);
        if (k >= errlen - at)
            k = errlen - at - 1;
        memcpy(errbuf + at, last ? last + 1 : err, k);
        errbuf[at + k] = '\0';
    }
    return st;
}

nt_status_t nt_drain_run(const char *report_path, nt_drain_mode_t mode, int resume, int local,
                         FILE *out)
{
    cJSON *report = NULL;
    nt_status_t st;

    if (mode == NT_DRAIN_OFF && !resume)
        return NT_OK;
    st = nt_json_read_file(report_path, 256u << 20, &report);
    if (st != NT_OK) {
        fprintf(stderr, "nettune probe: --drain: cannot read the report %s (%s): nothing drained\n",
                report_path, nt_status_string(st));
        return st;
    }
    st = nt_drain_run_doc(report, report_path, "nettune probe", mode, resume, local, out);
    cJSON_Delete(report);
    return st;
}

nt_status_t nt_drain_run_doc(const cJSON *report, const char *what, const char *who,
                             nt_drain_mode_t mode, int resume, int local, FILE *out)
{
    static char sinfo_out[1 << 20];
    static nt_slurm_node_t nodes[NT_DRAIN_MAX_ACTIONS];
    static nt_drain_action_t acts[NT_DRAIN_MAX_ACTIONS];
    char *sinfo_argv[] = {"sinfo", "-h", "-N", "-o", "%N|%n|%T|%E", NULL};
    size_t n = 0, na = 0;
    nt_status_t st, first = NT_OK;
    char why[256];

    if (mode == NT_DRAIN_OFF && !resume)
        return NT_OK;
    st = nt_drain_exec(sinfo_argv, NT_DRAIN_CMD_TIMEOUT_S, sinfo_out, sizeof(sinfo_out), why,
                       sizeof(why));
    if (st == NT_OK)
        n = nt_drain_parse_sinfo(sinfo_out, nodes, NT_DRAIN_MAX_ACTIONS);
    else
        fprintf(stderr,
                "%s: --drain: sinfo failed (%s%s%s): report hosts are used as Slurm "
                "node names and no node is resumed\n",
                who, nt_status_string(st), why[0] ? ": " : "", why);
    st = nt_drain_plan(report, nodes, n, local ? getenv("SLURMD_NODENAME") : NULL, resume, acts,
                       NT_DRAIN_MAX_ACTIONS, &na);
    if (st != NT_OK) {
        fprintf(stderr, "%s: --drain: %s has no summary.failed_nodes: nothing drained\n", who,
                what);
        return st;
    }
    for (size_t i = 0; i < na; i++) {
        char line[NT_DRAIN_REASON_MAX * 4 + 256], node_arg[NT_DRAIN_NAME_MAX + 16],
            reason_arg[NT_DRAIN_REASON_MAX + 16];
        char *argv[] = {"scontrol",
                        "update",
                        node_arg,
                        acts[i].kind == NT_DRAIN_DO_DRAIN ? "State=DRAIN" : "State=RESUME",
                        acts[i].kind == NT_DRAIN_DO_DRAIN ? reason_arg : NULL,
                        NULL};
        if (acts[i].kind == NT_DRAIN_DO_DRAIN && mode == NT_DRAIN_OFF)
            continue; /* --resume-passing alone */
        nt_drain_format(&acts[i], line, sizeof(line));
        if (mode == NT_DRAIN_DRY_RUN) {
            fprintf(out, "%s\n", line);
            continue;
        }
        snprintf(node_arg, sizeof(node_arg), "NodeName=%s", acts[i].node);
        snprintf(reason_arg, sizeof(reason_arg), "Reason=%s", acts[i].reason);
        st = nt_drain_exec(argv, NT_DRAIN_CMD_TIMEOUT_S, NULL, 0, why, sizeof(why));
        if (st == NT_OK) {
            fprintf(out, "drain: %s\n", line);
        } else {
            fprintf(stderr, "%s: --drain: '%s' failed (%s%s%s)\n", who, line,
                    nt_status_string(st), why[0] ? ": " : "", why);
            if (first == NT_OK)
                first = st;
        }
    }
    fflush(out);
    return first;
}
