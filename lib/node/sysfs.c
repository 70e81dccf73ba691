/* sysfs reads through a root directory (NETTUNE_SYSFS_ROOT), after hwloc's HWLOC_FSROOT. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nettune/sysfs.h"

static char nt_sysfs_override[PATH_MAX];
static int nt_sysfs_overridden;

void nt_sysfs_set_root(const char *root)
{
    if (root) {
        snprintf(nt_sysfs_override, sizeof(nt_sysfs_override), "%s", root);
        nt_sysfs_overridden = 1;
    } else {
        nt_sysfs_overridden = 0;
    }
}

const char *nt_sysfs_root(void)
{
    static char env_root[PATH_MAX];
    const char *r = nt_sysfs_overridden ? nt_sysfs_override : getenv("NETTUNE_SYSFS_ROOT");
    size_t n;

    if (!r || !*r || strcmp(r, "/") == 0)
        return "";
    snprintf(env_root, sizeof(env_root), "%s", r);
    n = strlen(env_root);
    while (n > 1 && env_root[n - 1] == '/')
        env_root[--n] = '\0';
    return env_root;
}

nt_status_t nt_sysfs_path(const char *path, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s%s%s", nt_sysfs_root(), path[0] == '/' ? "" : "/", path);
    return (n < 0 || (size_t)n >= len) ? NT_ERR_INVALID : NT_OK;
}

static nt_status_t nt_errno_status(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ENODEV:
        return NT_ERR_NOT_FOUND;
    case EINVAL:
    case EOPNOTSUPP:
        return NT_ERR_UNSUPPORTED;
    default:
        return NT_ERR_IO;
    }
}

nt_status_t nt_sysfs_read_str(const char *path, char *buf, size_t len)
{
    char full[PATH_MAX];
    FILE *f;
    size_t n;
    char *start;

    if (len == 0 || nt_sysfs_path(path, full, sizeof(full)) != NT_OK)
        return NT_ERR_INVALID;
    f = fopen(full, "r");
    if (!f)
        return nt_errno_status(errno);
    if (!fgets(buf, (int)len, f)) {
        int err = ferror(f) ? errno : 0;
        fclose(f);
        buf[0] = '\0';
        return err ? nt_errno_status(err) : NT_OK;
    }
    fclose(f);
    n = strlen(buf);
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        buf[--n] = '\0';
    start = buf;
    while (isspace((unsigned char)*start))
        start++;
    if (start != buf)
        memmove(buf, start, strlen(start) + 1);
    return NT_OK;
}

nt_status_t nt_sysfs_read_long(const char *path, long long *out)
{
    char buf[128], *end;
    nt_status_t st = nt_sysfs_read_str(path, buf, sizeof(buf));
    long long v;

    if (st != NT_OK)
        return st;
    errno = 0;
    v = strtoll(buf, &end, 0);
    if (end == buf || errno)
        return NT_ERR_PARSE;
    *out = v;
    return NT_OK;
}

nt_status_t nt_sysfs_read_u64(const char *path, unsigned long long *out)
{
    char buf[128], *end;
    nt_status_t st = nt_sysfs_read_str(path, buf, sizeof(buf));
    unsigned long long v;

    if (st != NT_OK)
        return st;
    if (buf[0] == '-')
        return NT_ERR_PARSE;
    errno = 0;
    v = strtoull(buf, &end, 0);
    if (end == buf || errno)
        return NT_ERR_PARSE;
    *out = v;
    return NT_OK;
}

nt_status_t nt_sysfs_readlink_base(const char *path, char *buf, size_t len)
{
    char full[PATH_MAX], target[PATH_MAX];
    ssize_t n;
    const char *base;

    if (nt_sysfs_path(path, full, sizeof(full)) != NT_OK)
        return NT_ERR_INVALID;
    n = readlink(full, target, sizeof(target) - 1);
    if (n < 0)
        return nt_errno_status(errno);
    target[n] = '\0';
    while (n > 1 && target[n - 1] == '/')
        target[--n] = '\0';
    base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strlen(base) >= len)
        return NT_ERR_INVALID;
    strcpy(buf, base);
    return NT_OK;
}

static int nt_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

nt_status_t nt_sysfs_list(const char *path, char ***names, size_t *count)
{
    char full[PATH_MAX];
    DIR *d;
    struct dirent *e;
    char **v = NULL;
    size_t n = 0, cap = 0;

    *names = NULL;
    *count = 0;
    if (nt_sysfs_path(path, full, sizeof(full)) != NT_OK)
        return NT_ERR_INVALID;
    d = opendir(full);
    if (!d)
        return nt_errno_status(errno);
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n + 2 > cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **nv = realloc(v, ncap * sizeof(*v));
            if (!nv)
                goto nomem;
            v = nv;
            cap = ncap;
        }
        v[n] = strdup(e->d_name);
        if (!v[n])
            goto nomem;
        n++;
    }
    closedir(d);
    if (!v) {
        v = calloc(1, sizeof(*v));
        if (!v)
            return NT_ERR_NOMEM;
    }
    qsort(v, n, sizeof(*v), nt_cmp_str);
    v[n] = NULL;
    *names = v;
    *count = n;
    return NT_OK;
nomem:
    closedir(d);
    if (v) {
        v[n] = NULL;
        nt_sysfs_list_free(v);
    }
    return NT_ERR_NOMEM;
}

void nt_sysfs_list_free(char **names)
{
    if (!names)
        return;
    for (size_t i = 0; names[i]; i++)
        free(names[i]);
    free(names);
}
