/* Growable text buffer, escaping for each output format, atomic file writes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettune/log.h"
#include "rpt.h"

void nt_buf_init(nt_buf_t *b) { memset(b, 0, sizeof(*b)); }

void nt_buf_cleanup(nt_buf_t *b)
{
    free(b->data);
    nt_buf_init(b);
}

/* Grow to hold extra more bytes plus the NUL; doubling keeps appends amortised O(1). */
static int nt_buf_reserve(nt_buf_t *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (b->oom)
        return -1;
    need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    cap = b->cap ? b->cap : 4096;
    while (cap < need)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void nt_buf_put(nt_buf_t *b, const char *s, size_t len)
{
    if (nt_buf_reserve(b, len) != 0)
        return;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
}

void nt_buf_puts(nt_buf_t *b, const char *s)
{
    if (s)
        nt_buf_put(b, s, strlen(s));
}

void nt_buf_printf(nt_buf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || nt_buf_reserve(b, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void nt_buf_put_plain(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++)
        nt_buf_put(b, (unsigned char)*s < 0x20 || *s == 0x7f ? " " : s, 1);
}

void nt_buf_put_html(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        switch (*s) {
        case '&': nt_buf_puts(b, "&amp;"); break;
        case '<': nt_buf_puts(b, "&lt;"); break;
        case '>': nt_buf_puts(b, "&gt;"); break;
        case '"': nt_buf_puts(b, "&quot;"); break;
        case '\'': nt_buf_puts(b, "&#39;"); break;
        default: nt_buf_put(b, s, 1);
        }
    }
}

void nt_buf_put_md(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r')
            nt_buf_put(b, " ", 1);
        else if (strchr("|\\`*_<>[]", *s)) {
            nt_buf_put(b, "\\", 1);
            nt_buf_put(b, s, 1);
        } else
            nt_buf_put(b, s, 1);
    }
}

void nt_buf_put_csv(nt_buf_t *b, const char *s)
{
    size_t len;

    if (!s)
        return;
    len = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && !(len && (s[0] == ' ' || s[len - 1] == ' '))) {
        nt_buf_put(b, s, len);
        return;
    }
    nt_buf_put(b, "\"", 1);
    for (; *s; s++) {
        if (*s == '"')
            nt_buf_put(b, "\"", 1);
        nt_buf_put(b, s, 1);
    }
    nt_buf_put(b, "\"", 1);
}

void nt_buf_put_prom_label(nt_buf_t *b, const char *s)
{
    if (!s)
        return;
    for (; *s; s++) {
        if (*s == '\\')
            nt_buf_puts(b, "\\\\");
        else if (*s == '"')
            nt_buf_puts(b, "\\\"");
        else if (*s == '\n')
            nt_buf_puts(b, "\\n");
        else
            nt_buf_put(b, s, 1);
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

/* Write into path as it is (a device, a FIFO, a file behind /dev/fd): no temporary file, no
 * rename, no fsync (devices and pipes do not support it). trunc: O_TRUNC, for a regular file
 * reached through /dev/fd. */
static nt_status_t nt_write_direct(const nt_buf_t *b, const char *path, int trunc)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | (trunc ? O_TRUNC : 0));

    if (fd < 0) {
        NT_ERROR(REPORT, "cannot open '%s': %s", path, strerror(errno));
        return NT_ERR_IO;
    }
    if (nt_write_all(fd, b->data ? b->data : "", b->len) != 0) {
        NT_ERROR(REPORT, "cannot write '%s': %s", path, strerror(errno ? errno : EIO));
        close(fd);
        return NT_ERR_IO;
    }
    if (close(fd) != 0 && errno != EINTR) {
        NT_ERROR(REPORT, "cannot write '%s': %s", path, strerror(errno));
        return NT_ERR_IO;
    }
    return NT_OK;
}

/* Write to "<target>.tmp.<pid>", fsync, rename over target: readers see the old or the new
 * file, never a partial one. */
static nt_status_t nt_write_renamed(const nt_buf_t *b, const char *target)
{
    char tmp[PATH_MAX + 32];
    int fd;

    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", target, (long)getpid()) >= (int)sizeof(tmp)) {
        NT_ERROR(REPORT, "output path '%s' is too long", target);
        return NT_ERR_INVALID;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        NT_ERROR(REPORT, "cannot create '%s': %s", tmp, strerror(errno));
        return NT_ERR_IO;
    }
    if (nt_write_all(fd, b->data ? b->data : "", b->len) != 0 || fsync(fd) != 0) {
        NT_ERROR(REPORT, "cannot write '%s': %s", tmp, strerror(errno ? errno : EIO));
        close(fd);
        unlink(tmp);
        return NT_ERR_IO;
    }
    if (close(fd) != 0) {
        NT_ERROR(REPORT, "cannot write '%s': %s", tmp, strerror(errno));
        unlink(tmp);
        return NT_ERR_IO;
    }
    if (rename(tmp, target) != 0) {
        NT_ERROR(REPORT, "cannot rename '%s' to '%s': %s", tmp, target, strerror(errno));
        unlink(tmp);
        return NT_ERR_IO;
    }
    return NT_OK;
}

/* Follow the symbolic links from path (relative targets against their link's folder) to the
 * first name that is not a link. *via_fd is set when the chain goes through /proc or /dev/fd
 * (/dev/stdout -> /proc/self/fd/1): those are aliases of open descriptors, written directly.
 * Returns 0 with out filled (and errno ENOENT when the last name does not exist), -1 with
 * errno on a loop, an overlong path or an lstat error. */
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

nt_status_t nt_buf_write(const nt_buf_t *b, const char *path)
{
    char real[PATH_MAX];
    struct stat st;
    int via_fd = 0;

    if (b->oom) {
        NT_ERROR(REPORT, "out of memory while rendering");
        return NT_ERR_NOMEM;
    }
    if (!path || strcmp(path, "-") == 0) {
        errno = 0;
        if ((b->len && fwrite(b->data, 1, b->len, stdout) != b->len) || fflush(stdout) != 0) {
            NT_ERROR(REPORT, "cannot write to stdout: %s", strerror(errno ? errno : EIO));
            return NT_ERR_IO;
        }
        return NT_OK;
    }
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) {
            NT_ERROR(REPORT, "cannot write '%s': %s", path, strerror(errno));
            return NT_ERR_IO;
        }
        return nt_write_renamed(b, path); /* a new file */
    }
    if (S_ISLNK(st.st_mode)) {
        /* Write what the link points to, never replace the link itself. */
        if (nt_follow_links(path, real, sizeof(real), &via_fd) != 0) {
            NT_ERROR(REPORT, "cannot resolve the link '%s': %s", path, strerror(errno));
            return NT_ERR_IO;
        }
        if (stat(path, &st) != 0) {
            if (errno != ENOENT || via_fd) {
                NT_ERROR(REPORT, "cannot write '%s': %s", path, strerror(errno));
                return NT_ERR_IO;
            }
            return nt_write_renamed(b, real); /* a dangling link: create its target */
        }
        if (S_ISREG(st.st_mode) && !via_fd) {
            if (!realpath(path, real)) {
                NT_ERROR(REPORT, "cannot resolve the link '%s': %s", path, strerror(errno));
                return NT_ERR_IO;
            }
            return nt_write_renamed(b, real);
        }
    }
    if (S_ISDIR(st.st_mode)) {
        NT_ERROR(REPORT, "cannot write '%s': it is a directory", path);
        return NT_ERR_INVALID;
    }
    if (!S_ISREG(st.st_mode) || via_fd) /* a device, a FIFO, a socket, /dev/stdout */
        return nt_write_direct(b, path, S_ISREG(st.st_mode));
    return nt_write_renamed(b, path);
}

const char *nt_fmt_num(char *buf, size_t len, double v, int digits)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (fabs(v) < 1e15 && v == floor(v))
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.*g", digits, v);
    return buf;
}

const char *nt_fmt_bw(char *buf, size_t len, double gbps)
{
    if (isnan(gbps))
        snprintf(buf, len, "-");
    else if (gbps >= 100)
        snprintf(buf, len, "%.0f", gbps);
    else if (gbps >= 10)
        snprintf(buf, len, "%.1f", gbps);
    else if (gbps >= 1)
        snprintf(buf, len, "%.2f", gbps);
    else
        snprintf(buf, len, "%.3f", gbps);
    return buf;
}
