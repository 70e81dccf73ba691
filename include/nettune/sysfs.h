/* sysfs (and procfs) reads through a root directory, as hwloc does with HWLOC_FSROOT.
 * NETTUNE_SYSFS_ROOT=/path/to/captured/tree makes every read below look there instead of "/",
 * so PCIe and RDMA-port parsing is tested on captured trees. */
#ifndef NETTUNE_SYSFS_H
#define NETTUNE_SYSFS_H

#include <stddef.h>

#include "nettune/status.h"

/* nt_sysfs_root - the current root ("" for the live system, else NETTUNE_SYSFS_ROOT without a
 * trailing slash). */
const char *nt_sysfs_root(void);

/* nt_sysfs_set_root - override the root for this process (tests); NULL = back to the env. */
void nt_sysfs_set_root(const char *root);

/* nt_sysfs_path - root + path into buf ("/sys/class/infiniband" -> "<root>/sys/class/...").
 * Returns NT_ERR_INVALID when it does not fit. */
nt_status_t nt_sysfs_path(const char *path, char *buf, size_t len);

/* nt_sysfs_read_str - first line of the file at root+path, without the trailing newline and
 * surrounding blanks. NT_ERR_NOT_FOUND when it does not exist, NT_ERR_IO when it cannot be
 * read (EINVAL reading e.g. an unsupported attribute counts as NT_ERR_UNSUPPORTED). */
nt_status_t nt_sysfs_read_str(const char *path, char *buf, size_t len);

/* nt_sysfs_read_long - the file's first token parsed as a decimal (or 0x hex) integer.
 * NT_ERR_PARSE when it is not a number. */
nt_status_t nt_sysfs_read_long(const char *path, long long *out);

/* nt_sysfs_read_u64 - as nt_sysfs_read_long for unsigned 64-bit counters. */
nt_status_t nt_sysfs_read_u64(const char *path, unsigned long long *out);

/* nt_sysfs_readlink_base - the last component of the symlink target at root+path
 * (e.g. /sys/class/infiniband/mlx5_0/device -> "0000:18:00.0"). */
nt_status_t nt_sysfs_readlink_base(const char *path, char *buf, size_t len);

/* nt_sysfs_list - names of the entries of directory root+path (no "." or ".."), sorted,
 * as a NULL-terminated array to free with nt_sysfs_list_free. NT_ERR_NOT_FOUND if absent. */
nt_status_t nt_sysfs_list(const char *path, char ***names, size_t *count);
/* nt_sysfs_list_free - free a list of nt_sysfs_list (NULL is fine). */
void nt_sysfs_list_free(char **names);

#endif
