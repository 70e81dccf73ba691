/* JSON helpers and report building blocks on cJSON. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nettune/log.h"
#include "nettune/report.h"

static const char *const nt_verdict_names[] = {"pass", "warn", "fail", "skipped"};

const char *nt_verdict_string(nt_verdict_t v)
{
    return (unsigned)v <= NT_SKIPPED ? nt_verdict_names[v] : "unknown";
}

nt_status_t nt_verdict_parse(const char *s, nt_verdict_t *out)
{
    for (int i = 0; i <= NT_SKIPPED; i++) {
        if (s && strcmp(s, nt_verdict_names[i]) == 0) {
            *out = (nt_verdict_t)i;
            return NT_OK;
        }
    }
    return NT_ERR_INVALID;
}

nt_verdict_t nt_verdict_worse(nt_verdict_t a, nt_verdict_t b)
{
    static const int rank[] = {[NT_SKIPPED] = 0, [NT_PASS] = 1, [NT_WARN] = 2, [NT_FAIL] = 3};
    return rank[a] >= rank[b] ? a : b;
}

nt_status_t nt_json_add_num(cJSON *obj, const char *key, double value)
{
    if (!isfinite(value))
        return cJSON_AddNullToObject(obj, key) ? NT_OK : NT_ERR_NOMEM;
    return cJSON_AddNumberToObject(obj, key, value) ? NT_OK : NT_ERR_NOMEM;
}

nt_status_t nt_json_add_str(cJSON *obj, const char *key, const char *value)
{
    if (!value)
        return cJSON_AddNullToObject(obj, key) ? NT_OK : NT_ERR_NOMEM;
    return cJSON_AddStringToObject(obj, key, value) ? NT_OK : NT_ERR_NOMEM;
}

nt_status_t nt_json_add_bool(cJSON *obj, const char *key, int value)
{
    return cJSON_AddBoolToObject(obj, key, value ? 1 : 0) ? NT_OK : NT_ERR_NOMEM;
}

cJSON *nt_json_add_obj(cJSON *obj, const char *key)
{
    return cJSON_AddObjectToObject(obj, key);
}

cJSON *nt_json_add_arr(cJSON *obj, const char *key)
{
    return cJSON_AddArrayToObject(obj, key);
}

/* Round to 4 significant decimals of the unit so reports stay small and diffable. */
static double nt_round(double v)
{
    if (!isfinite(v) || v == 0.0)
        return v;
    double mag = pow(10.0, 4 - (int)ceil(log10(fabs(v))));
    return round(v * mag) / mag;
}

nt_status_t nt_json_add_stats(cJSON *obj, const char *key, const nt_stats_t *s, double scale,
                              int with_p99)
{
    cJSON *o = cJSON_AddObjectToObject(obj, key);
    if (!o)
        return NT_ERR_NOMEM;
    if (nt_json_add_num(o, "min", nt_round(s->min * scale)) ||
        nt_json_add_num(o, "p50", nt_round(s->p50 * scale)) ||
        (with_p99 && nt_json_add_num(o, "p99", nt_round(s->p99 * scale))) ||
        nt_json_add_num(o, "max", nt_round(s->max * scale)))
        return NT_ERR_NOMEM;
    return NT_OK;
}

double nt_json_get_num(const cJSON *obj, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

const char *nt_json_get_str(const cJSON *obj, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(v) ? v->valuestring : dflt;
}

nt_status_t nt_json_read_file(const char *path, size_t max_bytes, cJSON **out)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    const char *errp;

    *out = NULL;
    if (!f) {
        int err = errno;
        NT_ERROR(REPORT, "cannot open '%s': %s", path, strerror(err));
        return err == ENOENT ? NT_ERR_NOT_FOUND : NT_ERR_IO;
    }
    buf = malloc(max_bytes + 1);
    if (!buf) {
        fclose(f);
        return NT_ERR_NOMEM;
    }
    n = fread(buf, 1, max_bytes + 1, f);
    if (ferror(f)) {
        NT_ERROR(REPORT, "cannot read '%s': %s", path, strerror(errno));
        fclose(f);
        free(buf);
        return NT_ERR_IO;
    }
    fclose(f);
    if (n > max_bytes) {
        NT_ERROR(REPORT, "'%s' is larger than %zu bytes: not a file this command reads", path,
                 max_bytes);
        free(buf);
        return NT_ERR_INVALID;
    }
    buf[n] = '\0';
    *out = cJSON_ParseWithOpts(buf, &errp, 1);
    if (!*out) {
        NT_ERROR(REPORT, "'%s' is not valid JSON (error near byte %ld)", path,
                 errp ? (long)(errp - buf) : -1L);
        free(buf);
        return NT_ERR_PARSE;
    }
    free(buf);
    return NT_OK;
}

/* Write all of text to fd; NT_ERR_IO with errno set on failure. */
static nt_status_t nt_write_all(int fd, const char *text, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = write(fd, text + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return NT_ERR_IO;
        }
        off += (size_t)w;
    }
    return NT_OK;
}

nt_status_t nt_output_resolve(const char *path, char *real, size_t len, int *direct)
{
    struct stat st;

    *direct = 0;
    if (!path || !*path) {
        NT_ERROR(REPORT, "empty output path: give a file name (or - for stdout)");
        return NT_ERR_INVALID;
    }
    snprintf(real, len, "%s", path);
    if (strcmp(path, "-") == 0) {
        *direct = 1;
        return NT_OK;
    }
    if (stat(path, &st) == 0) {
        char *rp;
        if (S_ISDIR(st.st_mode)) {
            NT_ERROR(REPORT, "output '%s' is a directory: give a file name", path);
            return NT_ERR_INVALID;
        }
        /* A device, FIFO, socket or /dev/stdout is written in place: renaming over it would
         * replace it (and /proc/self/fd links name no file to rename into). */
        if (!S_ISREG(st.st_mode)) {
            *direct = 1;
            return NT_OK;
        }
        /* A regular file, maybe behind symbolic links: the report replaces the file they point
         * to, and the links stay. */
        rp = realpath(path, NULL);
        if (rp) {
            snprintf(real, len, "%s", rp);
            free(rp);
        }
        return NT_OK;
    }
    if (errno == ELOOP) {
        NT_ERROR(REPORT, "output '%s': too many levels of symbolic links: fix the link", path);
        return NT_ERR_INVALID;
    }
    /* Not there yet: a new file, or a dangling link whose target is to be created. */
    for (int hops = 0; hops < 16; hops++) {
        char target[4096];
        ssize_t n;
        if (lstat(real, &st) != 0 || !S_ISLNK(st.st_mode))
            return NT_OK;
        n = readlink(real, target, sizeof(target) - 1);
        if (n <= 0)
            return NT_OK;
        target[n] = '\0';
        if (target[0] == '/') {
            snprintf(real, len, "%s", target);
        } else {
            char dir[4096];
            const char *slash = strrchr(real, '/');
            snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - real) : 1,
                     slash ? real : ".");
            if (snprintf(real, len, "%s/%s", dir, target) >= (int)len)
                return NT_ERR_INVALID;
        }
    }
    NT_ERROR(REPORT, "output '%s': too many levels of symbolic links: fix the link", path);
    return NT_ERR_INVALID;
}

/* Open an output written in place. A FIFO is opened without blocking: with no reader the
 * report would wait forever (ENXIO then, with a message). */
static int nt_output_open_direct(const char *path)
{
    struct stat st;
    int fd, flags = O_WRONLY | O_CLOEXEC;

    if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        flags |= O_NONBLOCK;
    fd = open(path, flags);
    if (fd >= 0 && (flags & O_NONBLOCK))
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (fd < 0 && errno == ENXIO)
        NT_ERROR(REPORT, "output '%s' is a FIFO that nobody reads: start its reader first", path);
    return fd;
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
    char dir[4096], prefix[4200];
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
        char *end, full[4096 + 300];
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

nt_status_t nt_output_check(const char *path)
{
    char real[4096], tmp[4200];
    int direct, fd;
    nt_status_t st = nt_output_resolve(path, real, sizeof(real), &direct);

    if (st != NT_OK || strcmp(path, "-") == 0)
        return st;
    if (direct) {
        fd = nt_output_open_direct(path);
        if (fd < 0) {
            if (errno != ENXIO)
                NT_ERROR(REPORT, "cannot write the report '%s': %s", path, strerror(errno));
            return NT_ERR_IO;
        }
        close(fd);
        return NT_OK;
    }
    nt_output_clean_stale(real);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", real, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        NT_ERROR(REPORT, "cannot write the report '%s': %s", path, strerror(errno));
        return NT_ERR_IO;
    }
    close(fd);
    unlink(tmp);
    return NT_OK;
}

nt_status_t nt_json_write_atomic(const cJSON *doc, const char *path)
{
    char real[4096], tmp[4200];
    char *text;
    size_t len;
    int fd, direct;
    nt_status_t st = nt_output_resolve(path, real, sizeof(real), &direct);

    if (st != NT_OK)
        return st;
    text = cJSON_Print(doc);
    if (!text)
        return NT_ERR_NOMEM;
    len = strlen(text);
    text[len] = '\n'; /* the terminating NUL becomes the final newline */
    len++;
    if (strcmp(path, "-") == 0) {
        int ok = fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0;
        free(text);
        if (!ok)
            NT_ERROR(REPORT, "cannot write the report to stdout: %s", strerror(errno));
        return ok ? NT_OK : NT_ERR_IO;
    }
    if (direct) {
        fd = nt_output_open_direct(path);
        if (fd < 0 || nt_write_all(fd, text, len) != NT_OK) {
            NT_ERROR(REPORT, "cannot write the report to '%s': %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            free(text);
            return NT_ERR_IO;
        }
        close(fd);
        free(text);
        return NT_OK;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", real, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        NT_ERROR(REPORT, "cannot create '%s': %s", tmp, strerror(errno));
        free(text);
        return NT_ERR_IO;
    }
    if (nt_write_all(fd, text, len) != NT_OK || fsync(fd) != 0) {
        NT_ERROR(REPORT, "cannot write '%s': %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        free(text);
        return NT_ERR_IO;
    }
    close(fd);
    free(text);
    if (rename(tmp, real) != 0) {
        NT_ERROR(REPORT, "cannot rename '%s' to '%s': %s", tmp, real, strerror(errno));
        unlink(tmp);
        return NT_ERR_IO;
    }
    return NT_OK;
}

nt_status_t nt_link_id(char *buf, size_t len, const char *kind, const char *variant,
                       const char *src_host, const char *src_ep, const char *dst_host,
                       const char *dst_ep)
{
    int n;
    if (variant && *variant)
        n = snprintf(buf, len, "%s.%s:%s/%s->%s/%s", kind, variant, src_host, src_ep, dst_host,
                     dst_ep);
    else
        n = snprintf(buf, len, "%s:%s/%s->%s/%s", kind, src_host, src_ep, dst_host, dst_ep);
    return (n < 0 || (size_t)n >= len) ? NT_ERR_INVALID : NT_OK;
}

static cJSON *nt_check_base(const char *name, const char *host, const char *target, nt_verdict_t v)
{
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return NULL;
    if (nt_json_add_str(c, "name", name) || (host && nt_json_add_str(c, "host", host)) ||
        nt_json_add_str(c, "target", target ? target : "") ||
        nt_json_add_str(c, "verdict", nt_verdict_string(v))) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

cJSON *nt_check_create(const char *name, const char *host, const char *target, nt_verdict_t v,
                       double observed, double expected, const char *unit, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    cJSON *c = nt_check_base(name, host, target, v);

    if (!c)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if ((isfinite(observed) && nt_json_add_num(c, "observed", observed)) ||
        (isfinite(expected) && nt_json_add_num(c, "expected", expected)) ||
        (unit && nt_json_add_str(c, "unit", unit)) || nt_json_add_str(c, "message", msg)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

cJSON *nt_check_create_str(const char *name, const char *host, const char *target, nt_verdict_t v,
                           const char *observed, const char *expected, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    cJSON *c = nt_check_base(name, host, target, v);

    if (!c)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if ((observed && nt_json_add_str(c, "observed", observed)) ||
        (expected && nt_json_add_str(c, "expected", expected)) ||
        nt_json_add_str(c, "message", msg)) {
        cJSON_Delete(c);
        return NULL;
    }
    return c;
}

nt_status_t nt_skipped_add(cJSON *skipped_arr, const char *probe, const char *reason)
{
    cJSON *s = cJSON_CreateObject();
    if (!s || nt_json_add_str(s, "probe", probe) || nt_json_add_str(s, "reason", reason) ||
        !cJSON_AddItemToArray(skipped_arr, s)) {
        cJSON_Delete(s);
        return NT_ERR_NOMEM;
    }
    return NT_OK;
}
