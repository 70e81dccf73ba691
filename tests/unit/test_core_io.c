/* sysfs reads through NETTUNE_SYSFS_ROOT, JSON helpers, atomic report writes, link ids. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "tree_put.h"

#include "nettune/report.h"
#include "nettune/sysfs.h"

static char root[256];

static void put(const char *rel, const char *text)
{
    tree_put(root, rel, text);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/nt-test-io-%d", (int)getpid());
    put("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
    put("sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "  65535\n");
    put("sys/class/infiniband/mlx5_0/fw_ver", "20.37.1700\n");
    put("sys/bus/pci/devices/0000:18:00.0/numa_node", "0x1\n");
    put("sys/class/infiniband/mlx5_1/fw_ver", "x\n");
    char l[512], t[512];
    snprintf(l, sizeof(l), "%s/sys/class/infiniband/mlx5_0/device", root);
    snprintf(t, sizeof(t), "../../../devices/pci0000:17/0000:17:00.0/0000:18:00.0");
    assert_int_equal(symlink(t, l), 0);
    nt_sysfs_set_root(root);
    return 0;
}

static int teardown(void **state)
{
    char cmd[300];
    (void)state;
    nt_sysfs_set_root(NULL);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd);
}

static void test_sysfs_reads(void **state)
{
    char buf[64];
    long long v;
    unsigned long long u;
    char **names;
    size_t n;
    (void)state;
    assert_int_equal(
        nt_sysfs_read_str("/sys/class/infiniband/mlx5_0/ports/1/state", buf, sizeof(buf)), NT_OK);
    assert_string_equal(buf, "4: ACTIVE");
    assert_int_equal(
        nt_sysfs_read_u64("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", &u), NT_OK);
    assert_true(u == 65535);
    assert_int_equal(nt_sysfs_read_long("/sys/bus/pci/devices/0000:18:00.0/numa_node", &v), NT_OK);
    assert_int_equal(v, 1);
    assert_int_equal(nt_sysfs_read_long("/sys/class/infiniband/mlx5_1/fw_ver", &v), NT_ERR_PARSE);
    assert_int_equal(nt_sysfs_read_str("/sys/class/infiniband/mlx9_9/fw_ver", buf, sizeof(buf)),
                     NT_ERR_NOT_FOUND);
    assert_int_equal(
        nt_sysfs_readlink_base("/sys/class/infiniband/mlx5_0/device", buf, sizeof(buf)), NT_OK);
    assert_string_equal(buf, "0000:18:00.0");
    assert_int_equal(nt_sysfs_list("/sys/class/infiniband", &names, &n), NT_OK);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "mlx5_0");
    assert_string_equal(names[1], "mlx5_1");
    assert_null(names[2]);
    nt_sysfs_list_free(names);
    assert_int_equal(nt_sysfs_list("/sys/class/net", &names, &n), NT_ERR_NOT_FOUND);
}

static void test_root_from_env(void **state)
{
    char buf[512];
    (void)state;
    nt_sysfs_set_root(NULL);
    setenv("NETTUNE_SYSFS_ROOT", "/captured/tree//", 1);
    assert_string_equal(nt_sysfs_root(), "/captured/tree");
    assert_int_equal(nt_sysfs_path("/sys/x", buf, sizeof(buf)), NT_OK);
    assert_string_equal(buf, "/captured/tree/sys/x");
    unsetenv("NETTUNE_SYSFS_ROOT");
    assert_string_equal(nt_sysfs_root(), "");
    nt_sysfs_set_root(root);
}

static void test_link_id(void **state)
{
    char id[128];
    (void)state;
    assert_int_equal(
        nt_link_id(id, sizeof(id), "rdma", "write", "n1", "mlx5_0:1", "n2", "mlx5_0:1"), NT_OK);
    assert_string_equal(id, "rdma.write:n1/mlx5_0:1->n2/mlx5_0:1");
    assert_int_equal(nt_link_id(id, sizeof(id), "mpi", NULL, "a", "lr0", "b", "lr0"), NT_OK);
    assert_string_equal(id, "mpi:a/lr0->b/lr0");
    assert_int_equal(nt_link_id(id, 8, "mpi", NULL, "a", "lr0", "b", "lr0"), NT_ERR_INVALID);
}

/* Integers read from a document: any JSON number is a double, and a cast of one beyond the
 * type is UB, so out of range reads as the default. */
static void test_json_get_int(void **state)
{
    (void)state;
    cJSON *o =
        cJSON_Parse("{\"a\": 7.9, \"b\": -7.9, \"max\": 2147483647, \"min\": -2147483648,"
                    " \"over\": 2147483648, \"under\": -2147483649, \"huge\": 1e300,"
                    " \"s\": \"5\", \"u\": 18446744073709549568, \"u2\": 18446744073709551616,"
                    " \"neg\": -0.5, \"neg1\": -1}");
    assert_non_null(o);
    assert_int_equal(nt_json_get_int(o, "a", -1), 7);
    assert_int_equal(nt_json_get_int(o, "b", -1), -7);
    assert_int_equal(nt_json_get_int(o, "max", -1), INT_MAX);
    assert_int_equal(nt_json_get_int(o, "min", -1), INT_MIN);
    assert_int_equal(nt_json_get_int(o, "over", -1), -1);
    assert_int_equal(nt_json_get_int(o, "under", -1), -1);
    assert_int_equal(nt_json_get_int(o, "huge", -1), -1);
    assert_int_equal(nt_json_get_int(o, "s", -1), -1);
    assert_int_equal(nt_json_get_int(o, "absent", 3), 3);
    assert_true(nt_json_get_u64(o, "u", 1) == 18446744073709549568ull); /* 2^64 - 2048 */
    assert_true(nt_json_get_u64(o, "u2", 1) == 1);                      /* 2^64 */
    assert_true(nt_json_get_u64(o, "huge", 1) == 1);
    assert_true(nt_json_get_u64(o, "neg", 1) == 0);
    assert_true(nt_json_get_u64(o, "neg1", 1) == 1);
    assert_true(nt_json_get_u64(o, "max", 1) == 2147483647ull);
    cJSON_Delete(o);
}

static void test_write_atomic_and_read(void **state)
{
    char path[300], tmp[320];
    cJSON *doc = cJSON_CreateObject(), *back = NULL;
    nt_stats_t s = {.n = 3, .min = 1e-6, .p50 = 2e-6, .p99 = 3e-6, .max = 4e-6};
    (void)state;
    snprintf(path, sizeof(path), "%s/report.json", root);
    assert_int_equal(nt_json_add_str(doc, "schema", NT_REPORT_SCHEMA), NT_OK);
    assert_int_equal(nt_json_add_num(doc, "absent", NAN), NT_OK); /* NaN becomes null */
    assert_int_equal(nt_json_add_stats(doc, "lat_us", &s, 1e6, 1), NT_OK);
    assert_int_equal(nt_json_write_atomic(doc, path), NT_OK);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    assert_int_not_equal(access(tmp, F_OK), 0); /* renamed away */
    assert_int_equal(nt_json_read_file(path, 1 << 20, &back), NT_OK);
    assert_string_equal(nt_json_get_str(back, "schema", ""), "nettune.report/1");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(back, "absent")));
    cJSON *lat = cJSON_GetObjectItem(back, "lat_us");
    assert_true(fabs(nt_json_get_num(lat, "p50", 0) - 2.0) < 1e-9);
    assert_true(fabs(nt_json_get_num(lat, "p99", 0) - 3.0) < 1e-9);
    cJSON_Delete(back);
    assert_int_equal(nt_json_read_file(path, 10, &back), NT_ERR_INVALID); /* too large */
    put("bad.json", "{\"a\": [1, 2,");
    snprintf(path, sizeof(path), "%s/bad.json", root);
    assert_int_equal(nt_json_read_file(path, 1 << 20, &back), NT_ERR_PARSE);
    snprintf(path, sizeof(path), "%s/none.json", root);
    assert_int_equal(nt_json_read_file(path, 1 << 20, &back), NT_ERR_NOT_FOUND);
    snprintf(path, sizeof(path), "%s/no/such/dir/r.json", root);
    assert_int_equal(nt_json_write_atomic(doc, path), NT_ERR_IO);
    cJSON_Delete(doc);
}

static void test_checks_and_verdicts(void **state)
{
    nt_verdict_t v;
    (void)state;
    cJSON *c = nt_check_create("pcie_link", "n1", "0000:18:00.0", NT_FAIL, 8, 16, "lanes",
                               "%s runs x%d", "0000:18:00.0", 8);
    assert_non_null(c);
    assert_string_equal(nt_json_get_str(c, "verdict", ""), "fail");
    assert_true(nt_json_get_num(c, "observed", 0) == 8 && nt_json_get_num(c, "expected", 0) == 16);
    assert_string_equal(nt_json_get_str(c, "message", ""), "0000:18:00.0 runs x8");
    cJSON_Delete(c);
    c = nt_check_create("inventory", NULL, "gpus", NT_PASS, NAN, NAN, NULL, "ok");
    assert_null(cJSON_GetObjectItem(c, "observed"));
    assert_null(cJSON_GetObjectItem(c, "host"));
    cJSON_Delete(c);
    assert_int_equal(nt_verdict_parse("warn", &v), NT_OK);
    assert_int_equal(v, NT_WARN);
    assert_int_equal(nt_verdict_parse("bad", &v), NT_ERR_INVALID);
    assert_int_equal(nt_verdict_worse(NT_PASS, NT_FAIL), NT_FAIL);
    assert_int_equal(nt_verdict_worse(NT_SKIPPED, NT_PASS), NT_PASS);
    assert_int_equal(nt_verdict_worse(NT_WARN, NT_PASS), NT_WARN);
}

static void test_write_targets(void **state)
{
    char link[300], target[300], dir[300], buf[64];
    cJSON *doc = cJSON_CreateObject(), *back = NULL;
    struct stat st;
    (void)state;
    nt_json_add_str(doc, "schema", NT_REPORT_SCHEMA);
    /* A symbolic link: its target is replaced, the link stays a link. */
    snprintf(target, sizeof(target), "%s/target.json", root);
    snprintf(link, sizeof(link), "%s/link.json", root);
    put("target.json", "old");
    assert_int_equal(symlink("target.json", link), 0);
    assert_int_equal(nt_json_write_atomic(doc, link), NT_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(nt_json_read_file(target, 1 << 20, &back), NT_OK);
    assert_string_equal(nt_json_get_str(back, "schema", ""), NT_REPORT_SCHEMA);
    cJSON_Delete(back);
    /* A character device is written in place, never replaced by a regular file. */
    assert_int_equal(nt_json_write_atomic(doc, "/dev/null"), NT_OK);
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    /* A full device is an error, not a silent success. */
    if (access("/dev/full", W_OK) == 0)
        assert_int_equal(nt_json_write_atomic(doc, "/dev/full"), NT_ERR_IO);
    /* A directory and an empty path are refused; a missing folder fails the early check. */
    snprintf(dir, sizeof(dir), "%s/sys", root);
    assert_int_equal(nt_json_write_atomic(doc, dir), NT_ERR_INVALID);
    assert_int_equal(nt_output_check(""), NT_ERR_INVALID);
    snprintf(buf, sizeof(buf), "%s", "/no/such/dir/r.json");
    assert_int_equal(nt_output_check(buf), NT_ERR_IO);
    assert_int_equal(nt_output_check(target), NT_OK);
    assert_int_equal(nt_output_check("-"), NT_OK);
    cJSON_Delete(doc);
}

/* Two outputs of one command that are one file are refused, whatever the spelling (the later
 * would replace the earlier); a character device takes both; nothing is created. */
static void test_preflight_two_outputs(void **state)
{
    char a[PATH_MAX], dot[PATH_MAX], link[PATH_MAX], b[PATH_MAX], why[PATH_MAX * 3];
    struct stat st;
    (void)state;
    snprintf(a, sizeof(a), "%s/pf-a.json", root);
    snprintf(dot, sizeof(dot), "%s/./pf-a.json", root);
    snprintf(link, sizeof(link), "%s/pf-link.json", root);
    snprintf(b, sizeof(b), "%s/pf-b.json", root);
    assert_int_equal(symlink("pf-a.json", link), 0);
    {
        const nt_output_opt_t outs[] = {{"--output", a}, {"--env-out", NULL}, {"--csv-out", dot}};
        assert_int_equal(nt_output_preflight(outs, 3, NULL, 0, NULL, why, sizeof(why)),
                         NT_ERR_INVALID);
        char want[PATH_MAX * 3];
        snprintf(want, sizeof(want),
                 "--csv-out '%s' is the same file as --output '%s': give one of them another path",
                 dot, a);
        assert_string_equal(why, want);
    }
    {
        /* a dangling link: its target is the file that would be written */
        const nt_output_opt_t outs[] = {{"--output", a}, {"--plan-out", link}};
        assert_int_equal(nt_output_preflight(outs, 2, NULL, 0, NULL, why, sizeof(why)),
                         NT_ERR_INVALID);
    }
    assert_int_equal(stat(a, &st), -1); /* nothing written */
    {
        const nt_output_opt_t outs[] = {{"--output", a}, {"--env-out", b}};
        assert_int_equal(nt_output_preflight(outs, 2, NULL, 0, NULL, why, sizeof(why)), NT_OK);
        assert_string_equal(why, "");
    }
    put("pf-a.json", "{}");
    {
        /* an existing file through its link */
        const nt_output_opt_t outs[] = {{"--output", a}, {"--csv-out", b}, {"--env-out", link}};
        assert_int_equal(nt_output_preflight(outs, 3, NULL, 0, NULL, why, sizeof(why)),
                         NT_ERR_INVALID);
        assert_non_null(strstr(why, "--env-out '"));
        assert_non_null(strstr(why, "' is the same file as --output '"));
    }
    {
        const nt_output_opt_t outs[] = {{"--env-out", "/dev/null"}, {"--csv-out", "/dev/null"}};
        assert_int_equal(nt_output_preflight(outs, 2, NULL, 0, NULL, why, sizeof(why)), NT_OK);
    }
    unlink(link);
    unlink(a);
}

/* The headline note every summary shares (probe, report text/md/html). */
static void test_judged_note(void **state)
{
    char b[48];
    (void)state;
    assert_string_equal(nt_verdict_judged_note(b, sizeof(b), 0, 0, 0, 1), ", nothing judged");
    assert_string_equal(nt_verdict_judged_note(b, sizeof(b), 0, 0, 0, 0), ", nothing judged");
    assert_string_equal(nt_verdict_judged_note(b, sizeof(b), 3, 0, 0, 2), ", 2 not judged");
    assert_string_equal(nt_verdict_judged_note(b, sizeof(b), 0, 0, 1, 5), ", 5 not judged");
    assert_string_equal(nt_verdict_judged_note(b, sizeof(b), 3, 1, 0, 0), "");
    assert_string_equal(nt_verdict_judged_note(b, 8, 0, 0, 0, 0), ", nothi");
}

/* Lines of f that hold s. */
static int count_lines(const char *path, const char *s)
{
    char line[1024];
    int n = 0;
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f))
        n += strstr(line, s) != NULL;
    fclose(f);
    return n;
}

/* A report written again and again to a full device says so once, naming the path given;
 * a good write in between makes the next failure be said again. A missing folder names the
 * path given, not the temporary file. */
static void test_write_error_once(void **state)
{
    char log[300], missing[300];
    cJSON *doc = cJSON_CreateObject();
    int saved = dup(2), fd;
    (void)state;
    if (access("/dev/full", W_OK) != 0)
        skip();
    nt_json_add_str(doc, "schema", NT_REPORT_SCHEMA);
    snprintf(log, sizeof(log), "%s/stderr.log", root);
    snprintf(missing, sizeof(missing), "%s/no/such/dir/r.json", root);
    fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0 && saved >= 0);
    fflush(stderr);
    dup2(fd, 2);
    assert_int_equal(nt_json_write_atomic(doc, "/dev/null"), NT_OK); /* forget earlier tests' */
    for (int i = 0; i < 4; i++)
        assert_int_equal(nt_json_write_atomic(doc, "/dev/full"), NT_ERR_IO);
    assert_int_equal(nt_json_write_atomic(doc, "/dev/null"), NT_OK);
    assert_int_equal(nt_json_write_atomic(doc, "/dev/full"), NT_ERR_IO);
    assert_int_equal(nt_json_write_atomic(doc, missing), NT_ERR_IO);
    assert_int_equal(nt_json_write_atomic(doc, missing), NT_ERR_IO);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    assert_int_equal(count_lines(log, "cannot write '/dev/full': No space left on device"), 2);
    assert_int_equal(count_lines(log, "cannot create '"), 1);
    assert_int_equal(count_lines(log, "/no/such/dir/r.json': No such file or directory"), 1);
    assert_int_equal(count_lines(log, ".tmp."), 0);
    cJSON_Delete(doc);
}

/* Whether a "<name>.tmp.*" file exists in root. */
static int tmp_left(const char *name)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q '^%s\\.tmp\\.'", root, name);
    return system(cmd) == 0;
}

/* The signal-time writer: the stashed document replaces the file in one go (what a SIGTERM
 * leaves), once; a dropped stash writes nothing; no temporary file stays behind. */
static void test_stash(void **state)
{
    char path[300], text[64];
    FILE *f;
    (void)state;
    snprintf(path, sizeof(path), "%s/stash.json", root);
    put("stash.json", "{\"old\": 1}\n");
    assert_int_equal(nt_output_write_stash(), -1);                  /* nothing stashed */
    assert_int_equal(nt_output_stash("-", "x", 1), NT_ERR_INVALID); /* stdout: no stash */
    assert_int_equal(nt_output_stash(path, "{\"first\": 1}\n", 13), NT_OK);
    assert_int_equal(nt_output_stash(path, "{\"stopped\": 1}\n", 15), NT_OK);
    assert_int_equal(nt_output_write_stash(), 0);
    assert_true(nt_output_stash_written());
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof(text), f));
    fclose(f);
    assert_string_equal(text, "{\"stopped\": 1}\n");
    assert_false(tmp_left("stash.json"));
    assert_int_equal(nt_output_write_stash(), -1); /* once */
    nt_output_stash_rearm();
    nt_output_stash_drop();
    assert_int_equal(nt_output_write_stash(), -1); /* dropped: the final report stays */
    /* An ordinary write leaves no temporary file either. */
    assert_int_equal(nt_output_write(path, "{}\n", 3), NT_OK);
    assert_false(tmp_left("stash.json"));
}

/* A report written over an existing file keeps its owner, group and mode, by the ordinary
 * writer and by the signal-time one; a new file gets the usual 0644 under the umask. As root
 * the file is given to nobody first; elsewhere only the mode is checked. A folder the caller
 * cannot write is one error line (checked as nobody, from a child, where the caller is root). */
static void test_write_keeps_owner(void **state)
{
    char path[340], dir[300], log[300];
    struct stat st;
    uid_t uid = geteuid() == 0 ? 65534 : geteuid();
    gid_t gid = geteuid() == 0 ? 65534 : getegid();
    (void)state;
    snprintf(path, sizeof(path), "%s/own.json", root);
    put("own.json", "{}\n");
    assert_int_equal(chown(path, uid, gid), 0);
    assert_int_equal(chmod(path, 0640), 0);
    assert_int_equal(nt_output_write(path, "{\"a\": 1}\n", 9), NT_OK);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, uid);
    assert_int_equal(st.st_gid, gid);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(st.st_size, 9);
    assert_int_equal(chmod(path, 0604), 0);
    assert_int_equal(nt_output_stash(path, "{\"b\": 22}\n", 10), NT_OK);
    assert_int_equal(nt_output_write_stash(), 0);
    nt_output_stash_rearm();
    nt_output_stash_drop();
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, uid);
    assert_int_equal(st.st_mode & 07777, 0604);
    assert_int_equal(st.st_size, 10);
    snprintf(path, sizeof(path), "%s/new.json", root);
    mode_t old = umask(022);
    assert_int_equal(nt_output_write(path, "{}\n", 3), NT_OK);
    umask(old);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644);
    assert_int_equal(st.st_uid, geteuid());
    if (geteuid() != 0)
        return;
    snprintf(dir, sizeof(dir), "%s/locked", root);
    snprintf(path, sizeof(path), "%s/r.json", dir);
    snprintf(log, sizeof(log), "%s/locked.log", root);
    assert_int_equal(mkdir(dir, 0755), 0);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        _exit(nt_output_write(path, "{}\n", 3) == NT_ERR_IO ? 0 : 4);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(count_lines(log, ""), 1);
    assert_int_equal(count_lines(log, "/locked/r.json': Permission denied"), 1);
}

/* The streaming writer: a report whose links are kept as their text (cJSON_Raw) and arrays
 * larger than its 64 KiB buffer reads back as the same document, written in place, to stdout's
 * shape and through the stash (streamed into an unnamed file). */
static void test_json_streamed(void **state)
{
    char path[300], spath[300];
    cJSON *doc = cJSON_CreateObject(), *links, *nodes, *expect, *back = NULL, *run;
    (void)state;
    snprintf(path, sizeof(path), "%s/streamed.json", root);
    snprintf(spath, sizeof(spath), "%s/stashed.json", root);
    nt_json_add_str(doc, "schema", NT_REPORT_SCHEMA);
    run = nt_json_add_obj(doc, "run");
    nt_json_add_str(run, "id", "a \"quoted\"\n id");
    nt_json_add_arr(run, "not_done");
    nodes = nt_json_add_arr(doc, "nodes");
    links = nt_json_add_arr(doc, "links");
    nt_json_add_arr(doc, "checks"); /* empty */
    for (int i = 0; i < 3000; i++) {
        char txt[200];
        cJSON *n = cJSON_CreateObject();
        snprintf(txt, sizeof(txt),
                 "{\"id\":\"mpi:h%d/lr0->h%d/lr0\",\"samples\":[{\"bytes\":8}],\"x\":%d}", i, i + 1,
                 i);
        cJSON_AddItemToArray(links, cJSON_CreateRaw(txt));
        if (i < 100) {
            snprintf(txt, sizeof(txt), "h%d", i);
            nt_json_add_str(n, "hostname", txt);
            cJSON_AddItemToArray(nodes, n);
        } else {
            cJSON_Delete(n);
        }
    }
    /* what it says, parsed: the Raw items as objects */
    {
        char *all = cJSON_PrintUnformatted(doc);
        expect = cJSON_Parse(all);
        free(all);
    }
    assert_non_null(expect);
    assert_int_equal(nt_json_write_atomic(doc, path), NT_OK);
    assert_int_equal(nt_json_read_file(path, 1 << 24, &back), NT_OK);
    assert_true(cJSON_Compare(back, expect, 1));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(back, "links")), 3000);
    cJSON_Delete(back);
    /* the stash, streamed */
    put("stashed.json", "{\"old\": 1}\n");
    nt_output_stash_rearm();
    assert_int_equal(nt_output_stash_json(spath, doc), NT_OK);
    assert_int_equal(nt_output_write_stash(), 0);
    assert_int_equal(nt_json_read_file(spath, 1 << 24, &back), NT_OK);
    assert_true(cJSON_Compare(back, expect, 1));
    cJSON_Delete(back);
    assert_false(tmp_left("stashed.json"));
    nt_output_stash_rearm();
    nt_output_stash_drop();
    /* a document that is not an object, and an empty object */
    cJSON_Delete(expect);
    expect = cJSON_CreateArray();
    assert_int_equal(nt_json_write_atomic(expect, path), NT_OK);
    assert_int_equal(nt_json_read_file(path, 1 << 20, &back), NT_OK);
    assert_true(cJSON_IsArray(back) && cJSON_GetArraySize(back) == 0);
    cJSON_Delete(back);
    cJSON_Delete(expect);
    expect = cJSON_CreateObject();
    assert_int_equal(nt_json_write_atomic(expect, path), NT_OK);
    assert_int_equal(nt_json_read_file(path, 1 << 20, &back), NT_OK);
    assert_true(cJSON_IsObject(back) && !back->child);
    cJSON_Delete(back);
    cJSON_Delete(expect);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sysfs_reads),
        cmocka_unit_test(test_root_from_env),
        cmocka_unit_test(test_link_id),
        cmocka_unit_test(test_json_get_int),
        cmocka_unit_test(test_write_atomic_and_read),
        cmocka_unit_test(test_checks_and_verdicts),
        cmocka_unit_test(test_write_targets),
        cmocka_unit_test(test_preflight_two_outputs),
        cmocka_unit_test(test_judged_note),
        cmocka_unit_test(test_write_error_once),
        cmocka_unit_test(test_stash),
        cmocka_unit_test(test_write_keeps_owner),
        cmocka_unit_test(test_json_streamed),
    };
    return cmocka_run_group_tests_name("core_io", tests, setup, teardown);
}
