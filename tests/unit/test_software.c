/* Software versions: decoding, the dlopen paths (on a fake library built by
 * tests/unit/module.mk), rdma-core from the libibverbs file name, the report object, and the
 * majority rule across nodes. */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <cmocka.h>

#include "nettune/software.h"

#define FAKE NT_TEST_FAKE_DIR "/libnt-fake-versions.so"

static void test_format(void **state)
{
    char b[32];
    (void)state;
    nt_software_format_cuda(12020, b, sizeof(b));
    assert_string_equal(b, "12.2");
    nt_software_format_cuda(11080, b, sizeof(b));
    assert_string_equal(b, "11.8");
    nt_software_format_cuda(9000, b, sizeof(b));
    assert_string_equal(b, "9.0");
    nt_software_format_nccl(21903, b, sizeof(b));
    assert_string_equal(b, "2.19.3");
    nt_software_format_nccl(22805, b, sizeof(b));
    assert_string_equal(b, "2.28.5");
    nt_software_format_nccl(2804, b, sizeof(b)); /* before 2.9: X*1000 + Y*100 + Z */
    assert_string_equal(b, "2.8.4");
}

static void test_dlopen(void **state)
{
    const char *fake[] = {"libdoes-not-exist.so.7", FAKE, NULL};
    const char *missing[] = {"libdoes-not-exist.so.7", NULL};
    const char *nosym[] = {"libm.so.6", NULL};
    char b[16];
    (void)state;

    /* The first name that loads is used. */
    assert_int_equal(nt_software_dl_version(NT_SW_NCCL, fake, b, sizeof(b)), NT_OK);
    assert_string_equal(b, "2.19.3");
    assert_int_equal(nt_software_dl_version(NT_SW_CUDA_DRIVER, fake, b, sizeof(b)), NT_OK);
    assert_string_equal(b, "12.4");
    assert_int_equal(nt_software_dl_version(NT_SW_CUDA_RUNTIME, fake, b, sizeof(b)), NT_OK);
    assert_string_equal(b, "11.8");
    /* Nothing loads, or the symbol is missing: unsupported and an empty string, no crash. */
    assert_int_equal(nt_software_dl_version(NT_SW_NCCL, missing, b, sizeof(b)),
                     NT_ERR_UNSUPPORTED);
    assert_string_equal(b, "");
    assert_int_equal(nt_software_dl_version(NT_SW_CUDA_DRIVER, nosym, b, sizeof(b)),
                     NT_ERR_UNSUPPORTED);
    assert_int_equal(nt_software_dl_version((nt_software_lib_t)42, fake, b, sizeof(b)),
                     NT_ERR_INVALID);
}

static void test_rdma_core(void **state)
{
    char b[16];
    (void)state;

    assert_int_equal(nt_software_rdma_core_from_path(
                         "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0", b, sizeof(b)),
                     NT_OK);
    assert_string_equal(b, "44.0");
    assert_int_equal(nt_software_rdma_core_from_path("libibverbs.so.1.14.56.1", b, sizeof(b)),
                     NT_OK);
    assert_string_equal(b, "56.1");
    /* The old pre-rdma-core libibverbs, a bare soname, garbage. */
    assert_int_equal(nt_software_rdma_core_from_path("/usr/lib/libibverbs.so.1.0.0", b, sizeof(b)),
                     NT_ERR_PARSE);
    assert_int_equal(nt_software_rdma_core_from_path("/usr/lib/libibverbs.so.1", b, sizeof(b)),
                     NT_ERR_PARSE);
    assert_int_equal(nt_software_rdma_core_from_path("libibverbs.so.1.14.44.x", b, sizeof(b)),
                     NT_ERR_PARSE);
    assert_int_equal(nt_software_rdma_core_from_path("libmlx5.so.1.24.44.0", b, sizeof(b)),
                     NT_ERR_PARSE);

    /* Through the dynamic loader: a symlink libibverbs.so.1 -> libibverbs.so.1.14.50.1. */
    assert_int_equal(nt_software_rdma_core(NT_TEST_FAKE_DIR "/libibverbs.so.1", b, sizeof(b)),
                     NT_OK);
    assert_string_equal(b, "50.1");
    assert_int_equal(nt_software_rdma_core("libibverbs-not-here.so.1", b, sizeof(b)),
                     NT_ERR_UNSUPPORTED);
    assert_string_equal(b, "");
}

static int matches(const char *s, const char *re)
{
    regex_t r;
    int ok;
    assert_int_equal(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    return ok;
}

/* This machine: whatever is installed, each version is empty or looks like a version. */
static void test_collect_live(void **state)
{
    nt_software_t sw;
    struct utsname u;
    (void)state;

    assert_int_equal(nt_software_collect(&sw), NT_OK);
    assert_int_equal(uname(&u), 0);
    assert_string_equal(sw.kernel, u.release);
    assert_true(matches(sw.hwloc, "^2\\.[0-9]+\\.[0-9]+"));
    assert_string_equal(sw.mpi, "");
    assert_true(!sw.cuda_driver[0] || matches(sw.cuda_driver, "^[0-9]+\\.[0-9]+$"));
    assert_true(!sw.cuda_runtime[0] || matches(sw.cuda_runtime, "^[0-9]+\\.[0-9]+$"));
    assert_true(!sw.nccl[0] || matches(sw.nccl, "^2\\.[0-9]+\\.[0-9]+$"));
    assert_true(!sw.rdma_core[0] || matches(sw.rdma_core, "^[0-9]+\\.[0-9]+$"));
    print_message("live: kernel %s hwloc %s cuda_driver '%s' cuda_runtime '%s' nccl '%s' "
                  "rdma_core '%s'\n",
                  sw.kernel, sw.hwloc, sw.cuda_driver, sw.cuda_runtime, sw.nccl, sw.rdma_core);
}

static void test_to_json(void **state)
{
    nt_software_t sw = {.kernel = "6.1.0-18-amd64", .hwloc = "2.9.0", .nccl = "2.19.3"};
    cJSON *node = cJSON_CreateObject(), *s;
    (void)state;

    nt_software_set_mpi(&sw, "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: "
                             "v4.1.4, May 26, 2022\n");
    assert_string_equal(sw.mpi, "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo "
                                "rev: v4.1.4, May 26, 2022");
    nt_software_set_mpi(&sw, "MPICH Version:\t4.0.2\nMPICH Release date: ...");
    assert_string_equal(sw.mpi, "MPICH Version:\t4.0.2");

    assert_int_equal(nt_software_to_json(&sw, node), NT_OK);
    s = cJSON_GetObjectItem(node, "software");
    assert_int_equal(cJSON_GetArraySize(s), NT_SOFTWARE_NKEYS);
    assert_string_equal(cJSON_GetObjectItem(s, "kernel")->valuestring, "6.1.0-18-amd64");
    assert_string_equal(cJSON_GetObjectItem(s, "nccl")->valuestring, "2.19.3");
    assert_string_equal(cJSON_GetObjectItem(s, "mpi")->valuestring, "MPICH Version:\t4.0.2");
    /* Not found: null, never "" or a fake version. */
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(s, "cuda_driver")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(s, "rdma_core")));
    cJSON_Delete(node);
}

/* n nodes, software objects from "key=value;key=value" strings (value "-" = null). */
static cJSON **make_nodes(const char *const *specs, int n)
{
    cJSON **sw = calloc((size_t)n, sizeof(*sw));
    for (int i = 0; i < n; i++) {
        char buf[256], *save = NULL;
        sw[i] = cJSON_CreateObject();
        snprintf(buf, sizeof(buf), "%s", specs[i]);
        for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(kv, '=');
            *eq = '\0';
            if (strcmp(eq + 1, "-") == 0)
                cJSON_AddNullToObject(sw[i], kv);
            else
                cJSON_AddStringToObject(sw[i], kv, eq + 1);
        }
    }
    return sw;
}

static void free_nodes(cJSON **sw, int n)
{
    for (int i = 0; i < n; i++)
        cJSON_Delete(sw[i]);
    free(sw);
}

static const char *field(const cJSON *c, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(c, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void test_consistency_majority(void **state)
{
    const char *specs[] = {"nccl=2.19.3;kernel=6.1", "nccl=2.19.3;kernel=6.1",
                           "nccl=2.18.1;kernel=6.1", "nccl=2.19.3;kernel=6.1",
                           "nccl=2.19.3;kernel=5.10"};
    const char *hosts[] = {"node01", "node02", "node03", "node04", "node05"};
    cJSON **sw = make_nodes(specs, 5), *checks = cJSON_CreateArray(), *c;
    (void)state;

    /* node03 differs in nccl, node05 in kernel; nobody else is named. */
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 5, 0, checks), 2);
    assert_int_equal(cJSON_GetArraySize(checks), 2);
    /* Keys in report order: kernel before nccl. */
    c = cJSON_GetArrayItem(checks, 0);
    assert_string_equal(field(c, "name"), "software_consistency");
    assert_string_equal(field(c, "host"), "node05");
    assert_string_equal(field(c, "target"), "kernel");
    assert_string_equal(field(c, "verdict"), "warn");
    assert_string_equal(field(c, "observed"), "5.10");
    assert_string_equal(field(c, "expected"), "6.1");
    c = cJSON_GetArrayItem(checks, 1);
    assert_string_equal(field(c, "host"), "node03");
    assert_string_equal(field(c, "target"), "nccl");
    assert_string_equal(field(c, "observed"), "2.18.1");
    assert_string_equal(field(c, "expected"), "2.19.3");
    assert_non_null(strstr(field(c, "message"), "2.19.3 on 4 nodes, 2.18.1 on 1 node"));
    cJSON_Delete(checks);

    /* --strict: the same nodes fail. */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 5, 1, checks), 2);
    assert_string_equal(field(cJSON_GetArrayItem(checks, 0), "verdict"), "fail");
    cJSON_Delete(checks);
    free_nodes(sw, 5);
}

static void test_consistency_plurality_absent_and_extra_keys(void **state)
{
    /* 3 x 12.2, 2 x 12.4, 1 without a driver: 12.2 is the reference (a plurality, not over
     * half); the node without a driver is warned too. An extra key (nic_fw) is compared. */
    const char *specs[] = {"cuda_driver=12.2;nic_fw=28.39", "cuda_driver=12.2;nic_fw=28.39",
                           "cuda_driver=12.4;nic_fw=28.39", "cuda_driver=12.2;nic_fw=28.39",
                           "cuda_driver=12.4;nic_fw=28.39", "cuda_driver=-;nic_fw=28.41"};
    const char *hosts[] = {"a", "b", "c", "d", "e", "f"};
    cJSON **sw = make_nodes(specs, 6), *checks = cJSON_CreateArray(), *c;
    (void)state;

    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 6, 0, checks), 4);
    c = cJSON_GetArrayItem(checks, 0);
    assert_string_equal(field(c, "host"), "c");
    assert_string_equal(field(c, "expected"), "12.2");
    c = cJSON_GetArrayItem(checks, 2);
    assert_string_equal(field(c, "host"), "f");
    assert_null(cJSON_GetObjectItem(c, "observed")); /* absent: left out */
    assert_string_equal(field(c, "expected"), "12.2");
    assert_non_null(strstr(field(c, "message"), "cuda_driver none differs"));
    c = cJSON_GetArrayItem(checks, 3);
    assert_string_equal(field(c, "target"), "nic_fw");
    assert_string_equal(field(c, "host"), "f");
    assert_string_equal(field(c, "observed"), "28.41");
    cJSON_Delete(checks);
    free_nodes(sw, 6);
}

static void test_consistency_tie_and_uniform(void **state)
{
    const char *tie[] = {"nccl=2.19.3", "nccl=2.18.1"};
    const char *split[] = {"nccl=2.19.3", "nccl=2.18.1", "nccl=2.18.1", "nccl=2.19.3"};
    const char *same[] = {"nccl=2.19.3;rdma_core=-", "nccl=2.19.3", "nccl=2.19.3;rdma_core=-"};
    const char *hosts[] = {"n1", "n2", "n3", "n4"};
    cJSON **sw, *checks;
    (void)state;

    /* Two nodes that differ: no majority, both are named, without an expected value. */
    sw = make_nodes(tie, 2);
    checks = cJSON_CreateArray();
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 2, 0, checks), 2);
    assert_string_equal(field(cJSON_GetArrayItem(checks, 0), "host"), "n1");
    assert_string_equal(field(cJSON_GetArrayItem(checks, 1), "host"), "n2");
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "expected"));
    assert_non_null(strstr(field(cJSON_GetArrayItem(checks, 1), "message"),
                           "no version is held by a majority"));
    cJSON_Delete(checks);
    free_nodes(sw, 2);

    /* A 2/2 split: all four. */
    sw = make_nodes(split, 4);
    checks = cJSON_CreateArray();
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 4, 0, checks), 4);
    cJSON_Delete(checks);
    free_nodes(sw, 4);

    /* The same everywhere (null and absent are the same "none"): nothing. One node: nothing. */
    sw = make_nodes(same, 3);
    checks = cJSON_CreateArray();
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 3, 0, checks), 0);
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 1, 0, checks), 0);
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 0, 0, checks), 0);
    assert_int_equal(cJSON_GetArraySize(checks), 0);
    assert_int_equal(nt_software_consistency((const cJSON *const *)sw, hosts, 3, 0, NULL), -1);
    cJSON_Delete(checks);
    free_nodes(sw, 3);
}

static void test_drift_env_majority(void **state)
{
    /* node c sets another NCCL_IB_HCA, node d lacks NCCL_SOCKET_IFNAME, node e recorded no
     * environment (an older document): it is not judged on it. Versions are not compared
     * against the majority here (software_consistency's rule). */
    const char *sws[] = {"nccl=2.19.3", "nccl=2.19.3", "nccl=2.19.3", "nccl=2.19.3", "nccl=2.18.1"};
    const char *envs[] = {"NCCL_IB_HCA=mlx5_0;NCCL_SOCKET_IFNAME=eth0",
                          "NCCL_IB_HCA=mlx5_0;NCCL_SOCKET_IFNAME=eth0",
                          "NCCL_IB_HCA=mlx5_1;NCCL_SOCKET_IFNAME=eth0", "NCCL_IB_HCA=mlx5_0", ""};
    const char *hosts[] = {"a", "b", "c", "d", "e"};
    cJSON **sw = make_nodes(sws, 5), **env = make_nodes(envs, 5), *checks = cJSON_CreateArray(), *c;
    (void)state;

    cJSON_Delete(env[4]);
    env[4] = NULL;
    assert_int_equal(nt_config_drift((const cJSON *const *)sw, (const cJSON *const *)env, hosts, 5,
                                     NULL, NULL, 0, checks),
                     2);
    c = cJSON_GetArrayItem(checks, 0);
    assert_string_equal(field(c, "name"), "config_drift");
    assert_string_equal(field(c, "host"), "c");
    assert_string_equal(field(c, "target"), "NCCL_IB_HCA");
    assert_string_equal(field(c, "verdict"), "fail");
    assert_string_equal(field(c, "observed"), "mlx5_1");
    assert_string_equal(field(c, "expected"), "mlx5_0");
    assert_string_equal(field(c, "reference"), "majority");
    assert_string_equal(field(c, "message"), "NCCL_IB_HCA mlx5_1 differs from the majority mlx5_0 "
                                             "(mlx5_0 on 3 nodes, mlx5_1 on 1 node)");
    c = cJSON_GetArrayItem(checks, 1);
    assert_string_equal(field(c, "host"), "d");
    assert_string_equal(field(c, "target"), "NCCL_SOCKET_IFNAME");
    assert_null(cJSON_GetObjectItem(c, "observed")); /* unset */
    assert_string_equal(field(c, "expected"), "eth0");
    cJSON_Delete(checks);

    /* Two nodes that differ: no majority, both fail without an expected value. */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_config_drift((const cJSON *const *)sw, (const cJSON *const *)env + 1,
                                     hosts + 1, 2, NULL, NULL, 0, checks),
                     2);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "expected"));
    assert_non_null(
        strstr(field(cJSON_GetArrayItem(checks, 1), "message"), "no value is held by a majority"));
    /* One node, or invalid arguments. */
    assert_int_equal(nt_config_drift((const cJSON *const *)sw, (const cJSON *const *)env, hosts, 1,
                                     NULL, NULL, 0, checks),
                     0);
    assert_int_equal(nt_config_drift((const cJSON *const *)sw, (const cJSON *const *)env, hosts, 2,
                                     NULL, NULL, 0, NULL),
                     -1);
    cJSON_Delete(checks);
    free_nodes(sw, 5);
    free_nodes(env, 5);
}

static void test_drift_baseline(void **state)
{
    /* The baseline: 3 nodes, one of which was odd (the reference is what most of them hold).
     * The job: all on another kernel (no majority sees that; the baseline does), one with an
     * NCCL_ALGO the baseline never set. A key the baseline does not have (nic_firmware) is
     * not judged against it. */
    const char *bsw[] = {"kernel=6.1.0-18;nccl=2.19.3", "kernel=6.1.0-18;nccl=2.19.3",
                         "kernel=6.1.0-17;nccl=2.19.3"};
    const char *benv[] = {"NCCL_IB_HCA=mlx5_0", "NCCL_IB_HCA=mlx5_0", "NCCL_IB_HCA=mlx5_0"};
    const char *sws[] = {"kernel=6.1.0-20;nccl=2.19.3;nic_firmware=1",
                         "kernel=6.1.0-20;nccl=2.19.3;nic_firmware=2"};
    const char *envs[] = {"NCCL_IB_HCA=mlx5_0", "NCCL_IB_HCA=mlx5_0;NCCL_ALGO=Ring"};
    const char *hosts[] = {"a", "b"};
    cJSON **bs = make_nodes(bsw, 3), **be = make_nodes(benv, 3), **sw = make_nodes(sws, 2),
          **env = make_nodes(envs, 2), *checks = cJSON_CreateArray(), *c;
    (void)state;

    assert_int_equal(nt_config_drift((const cJSON *const *)sw, (const cJSON *const *)env, hosts, 2,
                                     (const cJSON *const *)bs, (const cJSON *const *)be, 3, checks),
                     3);
    for (int k = 0; k < 2; k++) {
        c = cJSON_GetArrayItem(checks, k);
        assert_string_equal(field(c, "host"), k ? "b" : "a");
        assert_string_equal(field(c, "target"), "kernel");
        assert_string_equal(field(c, "observed"), "6.1.0-20");
        assert_string_equal(field(c, "expected"), "6.1.0-18");
        assert_string_equal(field(c, "reference"), "baseline");
    }
    assert_string_equal(field(c, "message"),
                        "kernel 6.1.0-20 differs from the baseline 6.1.0-18 (6.1.0-20 on 2 nodes)");
    c = cJSON_GetArrayItem(checks, 2);
    assert_string_equal(field(c, "host"), "b");
    assert_string_equal(field(c, "target"), "NCCL_ALGO");
    assert_string_equal(field(c, "observed"), "Ring");
    assert_string_equal(field(c, "expected"), "unset");
    assert_string_equal(field(c, "reference"), "baseline");
    cJSON_Delete(checks);

    /* A baseline without environments judges the versions only (and the job's environment
     * against its own majority: a tie of two here, both fail on NCCL_ALGO). */
    checks = cJSON_CreateArray();
    const cJSON *noenv[3] = {NULL, NULL, NULL};
    assert_int_equal(nt_config_drift((const cJSON *const *)sw, (const cJSON *const *)env, hosts, 2,
                                     (const cJSON *const *)bs, noenv, 3, checks),
                     4);
    assert_string_equal(field(cJSON_GetArrayItem(checks, 2), "target"), "NCCL_ALGO");
    assert_string_equal(field(cJSON_GetArrayItem(checks, 2), "reference"), "majority");
    cJSON_Delete(checks);
    free_nodes(bs, 3);
    free_nodes(be, 3);
    free_nodes(sw, 2);
    free_nodes(env, 2);
}

static void test_env_to_json(void **state)
{
    char *envp[] = {"PATH=/bin",   "NCCL_SOCKET_IFNAME=eth0", "NCCL_IB_HCA=mlx5_0,mlx5_1",
                    "NCCL_DEBUG=", "NCCL_IB_HCA=other",       "NCCLX=1",
                    NULL};
    cJSON *node = cJSON_CreateObject(), *e, *it;
    const char *order[] = {"NCCL_DEBUG", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"};
    int k = 0;
    (void)state;

    assert_int_equal(nt_software_env_to_json(envp, node), NT_OK);
    e = cJSON_GetObjectItem(node, "environment");
    assert_int_equal(cJSON_GetArraySize(e), 3);
    cJSON_ArrayForEach (it, e)
        assert_string_equal(it->string, order[k++]);               /* sorted */
    assert_string_equal(field(e, "NCCL_IB_HCA"), "mlx5_0,mlx5_1"); /* the first, as getenv */
    assert_string_equal(field(e, "NCCL_DEBUG"), "");
    cJSON_Delete(node);
    node = cJSON_CreateObject();
    assert_int_equal(nt_software_env_to_json(NULL, node), NT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(node, "environment")), 0);
    cJSON_Delete(node);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_dlopen),
        cmocka_unit_test(test_rdma_core),
        cmocka_unit_test(test_collect_live),
        cmocka_unit_test(test_to_json),
        cmocka_unit_test(test_consistency_majority),
        cmocka_unit_test(test_consistency_plurality_absent_and_extra_keys),
        cmocka_unit_test(test_consistency_tie_and_uniform),
        cmocka_unit_test(test_drift_env_majority),
        cmocka_unit_test(test_drift_baseline),
        cmocka_unit_test(test_env_to_json),
    };
    return cmocka_run_group_tests_name("software", tests, NULL, NULL);
}
