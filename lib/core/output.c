/* Writing a result to the output path a user gave: stdout ("-"), a regular file replaced
 * atomically (temporary file beside it, fsync, rename), a symbolic link followed to the file it
 * names (the link stays), and a device, FIFO, socket or /dev/fd alias (/dev/stdout) written in
 * place, since renaming over it would replace it. One implementation for every command:
 * nettune-probe's report (nt_json_write_atomic) and nettune-report's renderings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettune/log.h"
#include "nettune/report.h"

/* The tool whose output this is ("nettune doctor"), set by nt_output_set_tool: its lines then
 * read "<tool>: ...", as the tool's own lines do; unset (the probe, whose lines carry host and
 * rank under mpirun) they go through the log as REPORT errors. */
static const char *nt_output_tool;

void nt_output_set_tool(const char *tool)
{
    nt_output_tool = tool;
}

static void __attribute__((format(printf, 1, 2))) nt_output_say(const char *fmt, ...)
{
    char line[PATH_MAX + 512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (nt_output_tool)
        fprintf(stderr, "%s: %s\n", nt_output_tool, line);
    else
        NT_ERROR(REPORT, "%s", line);
}

/* The fix for an output that cannot be written, by the reason the system gave. */
static const char *nt_output_fix(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
        return "create its folder, or give a path in one that exists";
    case EACCES:
    case EPERM:
    case EROFS:
        return "give a path this user can write (or - for stdout)";
    case ENOSPC:
    case EDQUOT:
        return "free some space there, or give a path on another filesystem";
    case ENAMETOOLONG:
        return "give a shorter path";
    default:
        return "give another path (or - for stdout)";
    }
}

static int nt_write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = EIO;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* A buffer as a filler of nt_output_write_fn. Async-signal-safe. */
typedef struct nt_buf_fill {
    const char *data;
    size_t len;
} nt_buf_fill_t;

static int nt_fill_buf(int fd, void *ctx)
{
    const nt_buf_fill_t *b = ctx;
    return nt_write_all(fd, b->data, b->len);
}

/* The contents of another descriptor (an unnamed file written before) as a filler, from its
 * start, through a small buffer. Async-signal-safe. */
static int nt_fill_from_fd(int fd, void *ctx)
{
    int in = *(const int *)ctx;
    char buf[4096];
    off_t off = 0;
    for (;;) {
        ssize_t r = pread(in, buf, sizeof(buf), off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            return 0;
        if (nt_write_all(fd, buf, (size_t)r) != 0)
            return -1;
        off += r;
    }
}

/* Follow the symbolic links from path (relative targets against their link's folder) to the
 * first name that is not a link. *via_fd is set when the chain goes through /proc or /dev/fd
 * (/dev/stdout -> /proc/self/fd/1): those are aliases of open descriptors, written in place.
 * 0 with out filled (errno ENOENT when the last name does not exist), -1 with errno on a loop
 * (ELOOP), an overlong path or an lstat error. */
static int nt_follow_links(const char *path, char *out, size_t outlen, int *via_fd)
{
    char cur[PATH_MAX], target[PATH_MAX];
    struct stat st;

    *via_fd = 0;
    if (snprintf(cur, sizeof(cur), "%s", path) >= (int)sizeof(cur)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int hop = 0; hop < 40; hop++) {
        ssize_t n;
        if (strncmp(cur, "/proc/", 6) == 0 || strncmp(cur, "/dev/fd/", 8) == 0)
            *via_fd = 1;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            int e = errno;
            if (snprintf(out, outlen, "%s", cur) >= (int)outlen) {
                errno = ENAMETOOLONG;
                return -1;
            }
            errno = e;
            return 0;
        }
        n = readlink(cur, target, sizeof(target) - 1);
        if (n < 0)
            return -1;
        target[n] = '\0';
        if (target[0] == '/') {
            memcpy(cur, target, (size_t)n + 1);
        } else {
            char *slash = strrchr(cur, '/');
            size_t dirlen = slash ? (size_t)(slash - cur) + 1 : 0;
            if (dirlen + (size_t)n >= sizeof(cur)) {
                errno = ENAMETOOLONG;
                return -1;
            }
            memcpy(cur + dirlen, target, (size_t)n + 1);
        }
    }
    errno = ELOOP;
    return -1;
}

/* nt_output_resolve without the logging: the reason (without a tool's prefix) into why. */
static nt_status_t nt_resolve_why(const char *path, char *real, size_t len, int *direct, char *why,
                                  size_t whylen)
{
    struct stat st;
    int via_fd = 0;

    *direct = 0;
    if (!path || !*path) {
        snprintf(why, whylen, "empty output path: give a file name (or - for stdout)");
        return NT_ERR_INVALID;
    }
    if (strcmp(path, "-") == 0) {
        snprintf(real, len, "-");
        *direct = 1;
        return NT_OK;
    }
    if (nt_follow_links(path, real, len, &via_fd) != 0) {
        int e = errno;
        snprintf(why, whylen, "output '%s': %s: fix the path or the link", path, strerror(e));
        return e == ELOOP ? NT_ERR_INVALID : NT_ERR_IO;
    }
    if (stat(path, &st) != 0) {
        /* A new file, or a dangling link whose target is created; an fd alias that does not
         * exist cannot be created. */
        if (errno != ENOENT || via_fd) {
            int e = errno;
            snprintf(why, whylen, "output '%s': %s: %s", path, strerror(e), nt_output_fix(e));
            return NT_ERR_IO;
        }
        return NT_OK;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(why, whylen, "output '%s' is a directory: give a file name", path);
        return NT_ERR_INVALID;
    }
    if (!S_ISREG(st.st_mode) || via_fd) {
        /* a device, FIFO, socket or /dev/stdout: written where it is */
        snprintf(real, len, "%s", path);
        *direct = 1;
        return NT_OK;
    }
    /* A regular file, maybe behind links: the real file is replaced, the links stay. */
    {
        char *rp = realpath(path, NULL);
        if (rp) {
            snprintf(real, len, "%s", rp);
            free(rp);
        }
    }
    return NT_OK;
}

nt_status_t nt_output_resolve(const char *path, char *real, size_t len, int *direct)
{
    char why[PATH_MAX + 200];
    nt_status_t st = nt_resolve_why(path, real, len, direct, why, sizeof(why));
    if (st != NT_OK)
        nt_output_say("%s", why);
    return st;
}

/* Open an output written in place. A FIFO is opened without blocking: with no reader the
 * write would wait forever (ENXIO then, with a message). A regular file behind /dev/fd is
 * truncated, as a shell's > would. */
static int nt_open_direct(const char *path)
{
    struct stat st;
    int fd, flags = O_WRONLY | O_CLOEXEC, fifo = 0;

    if (stat(path, &st) == 0) {
        fifo = S_ISFIFO(st.st_mode);
        if (S_ISREG(st.st_mode))
            flags |= O_TRUNC;
    }
    fd = open(path, flags | (fifo ? O_NONBLOCK : 0));
    if (fd >= 0 && fifo)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (fd < 0 && errno == ENXIO)
        nt_output_say("output '%s' is a FIFO that nobody reads: start its reader first", path);
    else if (fd < 0)
        nt_output_say("cannot open '%s': %s: %s", path, strerror(errno), nt_output_fix(errno));
    return fd;
}

/* "<target>.tmp.<pid>" into buf; -1 when it does not fit. Async-signal-safe (no stdio). */
static int nt_tmp_name(char *buf, size_t len, const char *target)
{
    size_t n = strlen(target), k = 0;
    char digits[24];
    long pid = (long)getpid();

    do
        digits[k++] = (char)('0' + pid % 10);
    while ((pid /= 10) > 0 && k < sizeof(digits));
    if (n + 5 + k + 1 > len)
        return -1;
    memcpy(buf, target, n);
    memcpy(buf + n, ".tmp.", 5);
    n += 5;
    while (k > 0)
        buf[n++] = digits[--k];
    buf[n] = '\0';
    return 0;
}

/* The folder of target ("." when it has none) into buf. Async-signal-safe. */
static void nt_dir_of(char *buf, size_t len, const char *target)
{
    const char *slash = strrchr(target, '/');
    size_t n = slash ? (size_t)(slash - target) : 0;
    if (slash && n == 0)
        n = 1; /* "/file" */
    if (!slash || n >= len) {
        buf[0] = '.';
        buf[1] = '\0';
        return;
    }
    memcpy(buf, target, n);
    buf[n] = '\0';
}

/* The file being replaced keeps its owner, group and permission bits: the temporary file (fd)
 * takes them before the rename, so a report an operator gave to nobody:adm 0640 stays so. An
 * owner the caller may not give (not root) is kept as far as allowed: the group where the caller
 * is a member, else the caller's own. No target yet: fd keeps what open gave it. chown before
 * chmod, because chown clears the set-id bits. Async-signal-safe (stat, fchown, fchmod). */
static void nt_keep_owner(int fd, const char *target)
{
    struct stat st;

    if (stat(target, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    if (fchown(fd, st.st_uid, st.st_gid) != 0)
        (void)!fchown(fd, (uid_t)-1, st.st_gid);
    (void)!fchmod(fd, st.st_mode & 07777);
}

/* Replace target with data, readers seeing the old or the new file, never a partial one.
 * Where the filesystem has O_TMPFILE, the data is written to an unnamed file in target's
 * folder, fsync'ed, and only then given the temporary name (linkat) and renamed over target:
 * no partial temporary file is ever visible, and a name exists only between the two calls.
 * Elsewhere: "<target>.tmp.<pid>" written, fsync'ed and renamed. sync 0: no fsync (the signal
 * handler, which Open MPI's launcher follows with SIGKILL within ~10 ms: readers still never
 * see a partial file; only a machine crash could lose it). Returns 0, or -1 with errno and
 * *what naming the failed step. Async-signal-safe. */
static int nt_replace_file(nt_output_fill_fn fill, void *ctx, const char *target, int sync,
                           const char **what, char *tmp, size_t tmplen)
{
    char dir[PATH_MAX], fdpath[64] = "/proc/self/fd/";
    int fd, e;

    *what = "create";
    if (nt_tmp_name(tmp, tmplen, target) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    nt_dir_of(dir, sizeof(dir), target);
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) {
        int n = fd, k = 0;
        char d[16];
        size_t off = strlen(fdpath);
        do
            d[k++] = (char)('0' + n % 10);
        while ((n /= 10) > 0);
        while (k > 0)
            fdpath[off++] = d[--k];
        fdpath[off] = '\0';
        *what = "write";
        nt_keep_owner(fd, target);
        if (fill(fd, ctx) != 0 || (sync && fsync(fd) != 0))
            goto fail_fd;
        /* The unnamed file gets the temporary name (complete), then replaces target. */
        *what = "link";
        unlink(tmp);
        if (linkat(AT_FDCWD, fdpath, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
            close(fd);
            goto rename;
        }
        close(fd); /* no /proc to link through: a named temporary file instead */
        *what = "create";
    }
    /* No O_TMPFILE on this filesystem (EOPNOTSUPP, EISDIR on old kernels): a named one. */
#endif
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    *what = "write";
    nt_keep_owner(fd, target);
    if (fill(fd, ctx) != 0 || (sync && fsync(fd) != 0)) {
        e = errno ? errno : EIO;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) != 0) {
        e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
rename:
    *what = "rename";
    if (rename(tmp, target) != 0) {
        e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
#ifdef O_TMPFILE
fail_fd:
    e = errno ? errno : EIO;
    close(fd);
    errno = e;
    return -1;
#endif
}

/* The last write error logged (target, step, errno): a run writes its report again and again
 * (progress snapshots every few seconds, then the final one), and on a full disk each would
 * say the same thing. The same error for the same file is logged once, later ones at DEBUG;
 * a write that succeeds in between forgets it. */
static struct {
    char target[PATH_MAX];
    const char *what;
    int err;
} nt_last_err;

static void nt_write_error(const char *target, const char *what, int err)
{
    int same = nt_last_err.what && strcmp(nt_last_err.what, what) == 0 && nt_last_err.err == err &&
               strcmp(nt_last_err.target, target) == 0;

    /* name the file the operator gave, not the temporary one (a detail of the rename) */
    if (same)
        NT_DEBUG(REPORT, "cannot %s '%s': %s (again)", what, target, strerror(err));
    else if (strcmp(what, "rename") == 0)
        nt_output_say("cannot replace '%s' (rename of the temporary file): %s: %s", target,
                      strerror(err), nt_output_fix(err));
    else
        nt_output_say("cannot %s '%s': %s: %s", strcmp(what, "create") == 0 ? "create" : "write",
                      target, strerror(err), nt_output_fix(err));
    snprintf(nt_last_err.target, sizeof(nt_last_err.target), "%s", target);
    nt_last_err.what = what;
    nt_last_err.err = err;
}

static nt_status_t nt_write_renamed(nt_output_fill_fn fill, void *ctx, const char *target)
{
    char tmp[PATH_MAX + 32];
    const char *what;

    errno = 0;
    if (nt_replace_file(fill, ctx, target, 1, &what, tmp, sizeof(tmp)) == 0) {
        nt_last_err.what = NULL;
        return NT_OK;
    }
    if (errno == ENAMETOOLONG && strcmp(what, "create") == 0) {
        nt_output_say("output path '%s' is too long: give a shorter path", target);
        return NT_ERR_INVALID;
    }
    nt_write_error(target, what, errno ? errno : EIO);
    return NT_ERR_IO;
}

/* The document to write if the run is stopped by a signal (nt_output_stash): two slots, the
 * handler writes the current one; a slot is replaced only when the handler is not writing.
 * Where the filesystem has O_TMPFILE the slot's document is already written to an unnamed file
 * (fd), so the handler only names it and renames it over the target: the launcher's SIGKILL
 * follows its SIGTERM within ~10 ms, and on a busy disk a rename alone can take 5 ms. */
static struct {
    char *buf[2];
    size_t len[2];
    int fd[2];
    char target[PATH_MAX];
    volatile sig_atomic_t cur;     /* slot the handler writes; -1 none */
    volatile sig_atomic_t writing; /* the handler is writing */
    volatile sig_atomic_t done;    /* written once: later signals do nothing */
} nt_stash = {.fd = {-1, -1}, .cur = -1};

/* "/proc/self/fd/<fd>" into buf (>= 32 bytes). Async-signal-safe. */
static void nt_fd_path(char *buf, int fd)
{
    static const char pre[] = "/proc/self/fd/";
    char d[16];
    int k = 0;
    size_t off = sizeof(pre) - 1;
    memcpy(buf, pre, off);
    do
        d[k++] = (char)('0' + fd % 10);
    while ((fd /= 10) > 0);
    while (k > 0)
        buf[off++] = d[--k];
    buf[off] = '\0';
}

/* Stash what fill writes: into an unnamed file in the target's folder (O_TMPFILE) where the
 * filesystem has it, and nothing in memory; else into memory (to_buf, which gives the bytes). */
static nt_status_t nt_stash_put(const char *path, nt_output_fill_fn fill, void *ctx,
                                nt_status_t (*to_buf)(void *ctx, char **data, size_t *len))
{
    char real[PATH_MAX], dir[PATH_MAX];
    int direct, slot, fd = -1;
    char *copy = NULL;
    size_t len = 0;

    if (nt_stash.writing)
        return NT_OK; /* a signal is being handled: the stashed document is on its way */
    if (nt_output_resolve(path, real, sizeof(real), &direct) != NT_OK || direct)
        return NT_ERR_INVALID;
#ifdef O_TMPFILE
    nt_dir_of(dir, sizeof(dir), real);
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
    if (fd >= 0 && fill(fd, ctx) != 0) {
        close(fd);
        fd = -1;
    }
#else
    (void)dir;
    (void)fill;
#endif
    if (fd < 0) {
        nt_status_t st = to_buf(ctx, &copy, &len);
        if (st != NT_OK)
            return st;
    }
    slot = nt_stash.cur == 0 ? 1 : 0;
    free(nt_stash.buf[slot]);
    if (nt_stash.fd[slot] >= 0)
        close(nt_stash.fd[slot]);
    nt_stash.buf[slot] = copy;
    nt_stash.len[slot] = len;
    nt_stash.fd[slot] = fd;
    if (strcmp(nt_stash.target, real) != 0) {
        nt_stash.cur = -1; /* no slot while the target changes */
        snprintf(nt_stash.target, sizeof(nt_stash.target), "%s", real);
    }
    nt_stash.cur = slot;
    return NT_OK;
}

static nt_status_t nt_buf_copy(void *ctx, char **data, size_t *len)
{
    const nt_buf_fill_t *b = ctx;
    *data = malloc(b->len ? b->len : 1);
    if (!*data)
        return NT_ERR_NOMEM;
    memcpy(*data, b->data, b->len);
    *len = b->len;
    return NT_OK;
}

nt_status_t nt_output_stash(const char *path, const char *data, size_t len)
{
    nt_buf_fill_t b = {data, len};
    return nt_stash_put(path, nt_fill_buf, &b, nt_buf_copy);
}

static nt_status_t nt_json_to_buf(void *ctx, char **data, size_t *len)
{
    char *txt = cJSON_Print(ctx);
    if (!txt)
        return NT_ERR_NOMEM;
    *len = strlen(txt);
    txt[*len] = '\n'; /* the NUL becomes the final newline (not a string any more) */
    *len += 1;
    *data = txt;
    return NT_OK;
}

nt_status_t nt_output_stash_json(const char *path, const cJSON *doc)
{
    return nt_stash_put(path, nt_json_fill, (void *)doc, nt_json_to_buf);
}

void nt_output_stash_drop(void)
{
    nt_stash.cur = -1;
    for (int k = 0; k < 2; k++) {
        if (nt_stash.writing)
            break;
        free(nt_stash.buf[k]);
        nt_stash.buf[k] = NULL;
        if (nt_stash.fd[k] >= 0)
            close(nt_stash.fd[k]);
        nt_stash.fd[k] = -1;
    }
}

int nt_output_stash_written(void)
{
    return nt_stash.done;
}

void nt_output_stash_rearm(void)
{
    nt_stash.done = 0;
}

int nt_output_write_stash(void)
{
    char tmp[PATH_MAX + 32], fdp[32];
    const char *what;
    int slot = nt_stash.cur, e = errno, rc = -1;

    if (slot < 0 || nt_stash.done || nt_stash.writing)
        return -1;
    nt_stash.writing = 1;
    if (nt_stash.fd[slot] >= 0 && nt_tmp_name(tmp, sizeof(tmp), nt_stash.target) == 0) {
        /* Written already: name it, then replace the target. */
        nt_fd_path(fdp, nt_stash.fd[slot]);
        nt_keep_owner(nt_stash.fd[slot], nt_stash.target);
        unlink(tmp);
        if (linkat(AT_FDCWD, fdp, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) == 0) {
            rc = rename(tmp, nt_stash.target);
            if (rc != 0)
                unlink(tmp);
        }
    }
    if (rc != 0 && nt_stash.buf[slot]) {
        nt_buf_fill_t b = {nt_stash.buf[slot], nt_stash.len[slot]};
        rc = nt_replace_file(nt_fill_buf, &b, nt_stash.target, 0, &what, tmp, sizeof(tmp));
    } else if (rc != 0 && nt_stash.fd[slot] >= 0) {
        /* written to an unnamed file that cannot be linked (no /proc): copied */
        int in = nt_stash.fd[slot];
        rc = nt_replace_file(nt_fill_from_fd, &in, nt_stash.target, 0, &what, tmp, sizeof(tmp));
    }
    nt_stash.done = rc == 0;
    nt_stash.writing = 0;
    errno = e;
    return rc;
}

nt_status_t nt_output_write_fn(const char *path, nt_output_fill_fn fill, void *ctx)
{
    char real[PATH_MAX];
    int direct, fd;
    nt_status_t st = nt_output_resolve(path, real, sizeof(real), &direct);

    if (st != NT_OK)
        return st;
    if (strcmp(path, "-") == 0) {
        errno = 0;
        if (fflush(stdout) != 0 || fill(STDOUT_FILENO, ctx) != 0) {
            nt_output_say("cannot write to stdout: %s", strerror(errno ? errno : EIO));
            return NT_ERR_IO;
        }
        return NT_OK;
    }
    if (!direct)
        return nt_write_renamed(fill, ctx, real);
    fd = nt_open_direct(path);
    if (fd < 0)
        return NT_ERR_IO;
    errno = 0;
    if (fill(fd, ctx) != 0) {
        nt_write_error(path, "write", errno ? errno : EIO);
        close(fd);
        return NT_ERR_IO;
    }
    if (close(fd) != 0 && errno != EINTR) {
        nt_write_error(path, "write", errno);
        return NT_ERR_IO;
    }
    nt_last_err.what = NULL;
    return NT_OK;
}

nt_status_t nt_output_write(const char *path, const char *data, size_t len)
{
    nt_buf_fill_t b = {data, len};
    return nt_output_write_fn(path, nt_fill_buf, &b);
}

/* Whether process pid still runs (a zombie, killed but not yet reaped, does not). */
static int nt_pid_alive(pid_t pid)
{
    char path[64], buf[256];
    FILE *f;
    const char *rp;

    if (kill(pid, 0) != 0 && errno == ESRCH)
        return 0;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (!f)
        return 1;
    buf[0] = '\0';
    if (!fgets(buf, sizeof(buf), f))
        buf[0] = '\0';
    fclose(f);
    rp = strrchr(buf, ')'); /* "pid (comm) S ...": the state follows the command name */
    return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

/* Remove temporary files "<real>.tmp.<pid>" left by a run that was killed mid-write (SIGKILL
 * after SIGTERM): only those whose process no longer exists. */
static void nt_output_clean_stale(const char *real)
{
    char dir[PATH_MAX], prefix[PATH_MAX + 8];
    const char *slash = strrchr(real, '/');
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - real) : 1, slash ? real : ".");
    if (slash && slash == real)
        snprintf(dir, sizeof(dir), "/");
    snprintf(prefix, sizeof(prefix), "%s.tmp.", slash ? slash + 1 : real);
    d = opendir(dir);
    if (!d)
        return;
    while ((e = readdir(d))) {
        char *end, full[PATH_MAX + 300];
        long pid;
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        pid = strtol(e->d_name + strlen(prefix), &end, 10);
        if (*end || pid <= 0 || nt_pid_alive((pid_t)pid))
            continue;
        snprintf(full, sizeof(full), "%s/%s", dir, e->d_name);
        unlink(full);
    }
    closedir(d);
}

/* Whether the folder of `real` takes the writer's temporary file (permissions, a read-only
 * mount, quota for a new inode): stale ones of dead writers removed, then that name created and
 * removed. Returns 0, or the errno. */
static int nt_tmp_probe(const char *real)
{
    char tmp[PATH_MAX + 32];
    int fd;
    nt_output_clean_stale(real);
    if (nt_tmp_name(tmp, sizeof(tmp), real) != 0)
        return ENAMETOOLONG;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    close(fd);
    unlink(tmp);
    return 0;
}

nt_status_t nt_output_check(const char *path)
{
    char real[PATH_MAX];
    int direct, fd;
    nt_status_t st = nt_output_resolve(path, real, sizeof(real), &direct);

    if (st != NT_OK || strcmp(path, "-") == 0)
        return st;
    if (direct) {
        /* Opened without writing; a regular file behind /dev/fd is only stat'ed (opening it
         * here would truncate it). */
        struct stat sb;
        int ok;
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            ok = access(path, W_OK) == 0;
        else if ((ok = (fd = nt_open_direct(path)) >= 0))
            close(fd);
        if (!ok) {
            nt_output_say(
                     "cannot write the report '%s': %s: nothing measured (give a "
                     "writable file path, or - for stdout)",
                     path, strerror(errno));
            return NT_ERR_IO;
        }
        return NT_OK;
    }
    if ((errno = nt_tmp_probe(real)) != 0) {
        nt_output_say(
                 "cannot write the report '%s': %s: nothing measured (give a "
                 "writable file path, or - for stdout)",
                 path, strerror(errno));
        return NT_ERR_IO;
    }
    return NT_OK;
}

/* Whether name ends in suffix ("" matches every name). */
static int nt_ends_with(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

/* nt_output_preflight for one output: none of the inputs, writable. */
static nt_status_t nt_preflight_one(const char *opt, const char *path, const char *const *inputs,
                                    size_t ninputs, const char *dir_reads, char *why,
                                    size_t whylen)
{
    char real[PATH_MAX], dir[PATH_MAX];
    struct stat out, in, dst;
    int direct, out_exists, dir_ok;
    const char *base;
    nt_status_t st;

    why[0] = '\0';
    if (!path || strcmp(path, "-") == 0)
        return NT_OK;
    st = nt_resolve_why(path, real, sizeof(real), &direct, why, whylen);
    if (st != NT_OK)
        return st;
    /* What will be written over: the file itself (stat follows the links, so a link to an input,
     * a hard link or another spelling of its path is the same device and inode), and the folder
     * the name lands in (the last link's target's folder). */
    out_exists = stat(path, &out) == 0;
    nt_dir_of(dir, sizeof(dir), real);
    dir_ok = stat(dir, &dst) == 0 && S_ISDIR(dst.st_mode);
    base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    for (size_t i = 0; i < ninputs; i++) {
        const char *name = inputs[i];
        int got;
        if (!name)
            continue;
        /* standard input redirected from a file ("- < FILE") is that file */
        got = strcmp(name, "-") == 0 ? fstat(STDIN_FILENO, &in) == 0 && S_ISREG(in.st_mode)
                                     : stat(name, &in) == 0;
        if (!got)
            continue; /* a missing input is the tool's to name */
        if (out_exists && !S_ISDIR(in.st_mode) && in.st_dev == out.st_dev &&
            in.st_ino == out.st_ino) {
            if (strcmp(name, path) == 0)
                snprintf(why, whylen, "%s '%s' is also an input: give another path", opt, path);
            else
                snprintf(why, whylen, "%s '%s' is also an input (as '%s'): give another path",
                         opt, path, strcmp(name, "-") == 0 ? "standard input" : name);
            return NT_ERR_INVALID;
        }
        /* A folder input: the tool reads its files (not dot files, not subfolders), so an output
         * written there would be read as an input, or replace one. */
        if (S_ISDIR(in.st_mode) && dir_reads && dir_ok && in.st_dev == dst.st_dev &&
            in.st_ino == dst.st_ino && base[0] != '.' && nt_ends_with(base, dir_reads)) {
            snprintf(why, whylen,
                     "%s '%s' is inside the input folder '%s', whose %s%s%sfiles are read: "
                     "give a path outside it",
                     opt, path, name, dir_reads[0] ? "*" : "", dir_reads, dir_reads[0] ? " " : "");
            return NT_ERR_INVALID;
        }
    }
    if (direct) {
        /* a device, FIFO or /dev/stdout: written in place, so only its permission is checked
         * (opening a FIFO here would end its reader's input) */
        if (access(path, W_OK) != 0) {
            int e = errno;
            snprintf(why, whylen, "cannot write %s '%s': %s: %s", opt, path, strerror(e),
                     nt_output_fix(e));
            return NT_ERR_IO;
        }
        return NT_OK;
    }
    if (!dir_ok) {
        int e = stat(dir, &dst) == 0 ? ENOTDIR : errno;
        if (e == ENOENT)
            snprintf(why, whylen,
                     "cannot write %s '%s': the folder '%s' does not exist: create it, or give "
                     "a path in one that exists",
                     opt, path, dir);
        else
            snprintf(why, whylen, "cannot write %s '%s': the folder '%s': %s: %s", opt, path,
                     dir, strerror(e), nt_output_fix(e));
        return NT_ERR_IO;
    }
    /* the folder takes a new file (permissions, a read-only mount, quota for a new inode): the
     * temporary file the writer will use, created and removed */
    int e = nt_tmp_probe(real);
    if (e != 0) {
        snprintf(why, whylen, "cannot write %s '%s': %s: %s", opt, path, strerror(e),
                 nt_output_fix(e));
        return NT_ERR_IO;
    }
    return NT_OK;
}

/* The file an output lands in, to tell two outputs that are one file: the file itself when it
 * exists (stat follows the links; "-" is what standard output is), else the folder it would be
 * created in and its name there (the last link's target, as the writer resolves it). */
typedef struct nt_output_id {
    int exists;
    struct stat st; /* the file, or its folder when it does not exist yet */
    char name[PATH_MAX];
} nt_output_id_t;

static void nt_output_id(const char *path, nt_output_id_t *id)
{
    char real[PATH_MAX], dir[PATH_MAX], why[8];
    const char *slash;
    int direct;

    memset(id, 0, sizeof(*id));
    if (strcmp(path, "-") == 0) {
        id->exists = fstat(STDOUT_FILENO, &id->st) == 0;
        return;
    }
    if (stat(path, &id->st) == 0) {
        id->exists = 1;
        return;
    }
    /* checked by nt_preflight_one already: the folder exists */
    if (nt_resolve_why(path, real, sizeof(real), &direct, why, sizeof(why)) != NT_OK)
        return;
    nt_dir_of(dir, sizeof(dir), real);
    slash = strrchr(real, '/');
    if (stat(dir, &id->st) == 0)
        snprintf(id->name, sizeof(id->name), "%s", slash ? slash + 1 : real);
}

/* Whether two outputs are one file. A terminal or /dev/null (a character device) is written in
 * place and takes both, so that is no conflict; a regular file would be replaced by the second
 * writer, and a pipe or FIFO would give its reader the two mixed. */
static int nt_output_same(const nt_output_id_t *a, const nt_output_id_t *b)
{
    if (a->exists != b->exists || a->st.st_dev != b->st.st_dev || a->st.st_ino != b->st.st_ino)
        return 0;
    if (a->exists)
        return !S_ISCHR(a->st.st_mode);
    return a->name[0] && strcmp(a->name, b->name) == 0;
}

nt_status_t nt_output_preflight(const nt_output_opt_t *outs, size_t nouts,
                                const char *const *inputs, size_t ninputs, const char *dir_reads,
                                char *why, size_t whylen)
{
    nt_output_id_t *ids;
    nt_status_t st = NT_OK;

    why[0] = '\0';
    ids = calloc(nouts ? nouts : 1, sizeof(*ids));
    if (!ids) {
        snprintf(why, whylen, "out of memory");
        return NT_ERR_NOMEM;
    }
    for (size_t k = 0; st == NT_OK && k < nouts; k++) {
        const char *path = outs[k].path;
        if (!path)
            continue;
        st = nt_preflight_one(outs[k].opt, path, inputs, ninputs, dir_reads, why, whylen);
        if (st != NT_OK)
            break;
        nt_output_id(path, &ids[k]);
        for (size_t j = 0; j < k; j++) {
            if (!outs[j].path || !nt_output_same(&ids[j], &ids[k]))
                continue;
            if (strcmp(path, "-") == 0 || strcmp(outs[j].path, "-") == 0)
                snprintf(why, whylen,
                         "%s '%s' and %s '%s' both write to standard output: give one of them "
                         "a file",
                         outs[k].opt, path, outs[j].opt, outs[j].path);
            else
                snprintf(why, whylen,
                         "%s '%s' is the same file as %s '%s': give one of them another path",
                         outs[k].opt, path, outs[j].opt, outs[j].path);
            st = NT_ERR_INVALID;
            break;
        }
    }
    free(ids);
    return st;
}
