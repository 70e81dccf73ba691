/* The judge glue of nettune-probe on synthetic reports: links -> figures -> verdicts, folded
 * back into links, the summary, sample trimming and the exit code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "judge.h"

static cJSON *node(const char *host, const char *kernel)
{
    cJSON *n = cJSON_CreateObject(), *sw;
    nt_json_add_str(n, "hostname", host);
    sw = nt_json_add_obj(n, "software");
    nt_json_add_str(sw, "kernel", kernel);
    nt_json_add_arr(n, "gpus");
    return n;
}

static cJSON *mklink(const char *a, const char *b, double lat_us, double bw_GBps)
{
    char id[128];
    cJSON *l = cJSON_CreateObject(), *s, *e, *samples, *st;
    snprintf(id, sizeof(id), "mpi:%s/lr0->%s/lr0", a, b);
    nt_json_add_str(l, "id", id);
    nt_json_add_str(l, "kind", "mpi");
    nt_json_add_str(l, "scope", "inter");
    e = nt_json_add_obj(l, "src");
    nt_json_add_str(e, "host", a);
    nt_json_add_num(e, "rank", a[4] - '0');
    nt_json_add_str(e, "device", "lr0");
    e = nt_json_add_obj(l, "dst");
    nt_json_add_str(e, "host", b);
    nt_json_add_num(e, "rank", b[4] - '0');
    nt_json_add_str(e, "device", "lr0");
    samples = nt_json_add_arr(l, "samples");
    s = cJSON_CreateObject();
    nt_json_add_num(s, "bytes", 8);
    nt_json_add_num(s, "iterations", 100);
    st = nt_json_add_obj(s, "lat_us");
    nt_json_add_num(st, "min", lat_us);
    nt_json_add_num(st, "p50", lat_us);
    nt_json_add_num(st, "p99", lat_us);
    nt_json_add_num(st, "max", lat_us);
    cJSON_AddItemToArray(samples, s);
    s = cJSON_CreateObject();
    nt_json_add_num(s, "bytes", 1 << 20);
    nt_json_add_num(s, "iterations", 10);
    st = nt_json_add_obj(s, "bw_GBps");
    nt_json_add_num(st, "min", bw_GBps);
    nt_json_add_num(st, "p50", bw_GBps);
    nt_json_add_num(st, "max", bw_GBps);
    cJSON_AddItemToArray(samples, s);
    nt_json_add_num(l, "small_msg_lat_us", lat_us);
    nt_json_add_num(l, "small_msg_lat_bytes", 8);
    nt_json_add_num(l, "peak_bw_GBps", bw_GBps);
    nt_json_add_num(l, "peak_bw_bytes", 1 << 20);
    return l;
}

/* 4 nodes, full pairs: node2 is slow (12 us, 2 GB/s vs 1.5 us, 10 GB/s); node3 runs another
 * kernel. */
static cJSON *doc4(void)
{
    cJSON *d = cJSON_CreateObject(), *nodes, *links;
    const char *h[4] = {"node0", "node1", "node2", "node3"};
    nodes = nt_json_add_arr(d, "nodes");
    for (int i = 0; i < 4; i++)
        cJSON_AddItemToArray(nodes, node(h[i], i == 3 ? "6.1.0-99" : "6.1.0-18"));
    links = nt_json_add_arr(d, "links");
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) {
            int slow = a == 2 || b == 2;
            cJSON_AddItemToArray(links, mklink(h[a], h[b], slow ? 12.0 : 1.5, slow ? 2.0 : 10.0));
        }
    nt_json_add_arr(d, "checks");
    return d;
}

static void test_blame_and_summary(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *it, *sum;
    int code, fails = 0;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    code = nt_judge_finish(j, NULL, d, 0, &params);
    assert_int_equal(code, NT_EXIT_FAIL);
    sum = cJSON_GetObjectItem(d, "summary");
    assert_string_equal(nt_json_get_str(sum, "verdict", ""), "fail");
    /* node2 is the one failed node; its links are not separate link faults */
    cJSON *fn = cJSON_GetObjectItem(sum, "failed_nodes");
    assert_int_equal(cJSON_GetArraySize(fn), 1);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "host", ""), "node2");
    assert_non_null(strstr(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "reason", ""),
                           "fails with 3 of 3 partners"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "failed_links")), 0);
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links")) {
        const char *id = nt_json_get_str(it, "id", "");
        int touches = strstr(id, "node2") != NULL;
        assert_string_equal(nt_json_get_str(it, "verdict", ""), touches ? "fail" : "pass");
        if (touches) {
            fails++;
            assert_non_null(cJSON_GetObjectItem(it, "samples")); /* kept for failed links */
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(it, "blamed_on_node")));
            cJSON *jb = cJSON_GetObjectItem(it, "judged_by");
            int peer = 0, blame = 0;
            cJSON *x;
            cJSON_ArrayForEach (x, jb) {
                peer |= strcmp(x->valuestring, "peer") == 0;
                blame |= strcmp(x->valuestring, "node_blame") == 0;
            }
            assert_true(peer && blame);
        } else {
            assert_null(cJSON_GetObjectItem(it, "samples")); /* trimmed for passing links */
        }
    }
    assert_int_equal(fails, 3);
    /* The kernel differs on node3 only (3 against 1): a software_consistency warning there. */
    int warned = 0;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "checks")) {
        if (strcmp(nt_json_get_str(it, "name", ""), "software_consistency") == 0) {
            assert_string_equal(nt_json_get_str(it, "host", ""), "node3");
            assert_string_equal(nt_json_get_str(it, "verdict", ""), "warn");
            warned++;
        }
    }
    assert_int_equal(warned, 1);
    cJSON *counts = cJSON_GetObjectItem(sum, "counts");
    assert_int_equal((int)nt_json_get_num(counts, "fail", -1), 3);
    assert_int_equal((int)nt_json_get_num(counts, "pass", -1), 3);
    assert_int_equal((int)nt_json_get_num(counts, "warn", -1), 1);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

static void test_errors_and_strict(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *l0;
    (void)state;
    /* All links equal, then one link stopped mid-way: it fails by "error", not by peers. */
    cJSON_DeleteItemFromObject(d, "links");
    cJSON *links = nt_json_add_arr(d, "links");
    cJSON_AddItemToArray(links, mklink("node0", "node1", 1.5, 10.0));
    l0 = cJSON_GetArrayItem(links, 0);
    cJSON_AddItemToArray(nt_json_add_arr(l0, "errors"), cJSON_CreateString("timed out"));
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 1, &params), NT_EXIT_FAIL);
    assert_string_equal(nt_json_get_str(l0, "verdict", ""), "fail");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(l0, "judged_by"), 0)->valuestring,
                        "error");
    cJSON_Delete(d);
    nt_judge_destroy(j);

    /* Only the software warning: exit 0, or 1 with --strict; stopped early: 3. */
    d = doc4();
    cJSON_DeleteItemFromObject(d, "links");
    nt_json_add_arr(d, "links");
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 1, &params), NT_EXIT_INCOMPLETE);
    nt_judge_destroy(j);
    params.strict = 1;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    /* judge again on a fresh document: strict turns the software difference into a failure */
    cJSON_Delete(d);
    d = doc4();
    cJSON_DeleteItemFromObject(d, "links");
    nt_json_add_arr(d, "links");
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

static void test_expect_checks(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *n = node("gpu01", "k"), *checks = cJSON_CreateArray(), *nics, *p;
    (void)state;
    params.expect = "gpus=8,nics=2,nic_rate_Gbps=400";
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    nics = nt_json_add_arr(n, "nics");
    p = cJSON_CreateObject();
    nt_json_add_str(p, "name", "mlx5_0");
    nt_json_add_num(p, "port", 1);
    nt_json_add_str(p, "state", "ACTIVE");
    nt_json_add_num(p, "rate_Gbps", 200);
    cJSON_AddItemToArray(nics, p);
    nt_judge_node_checks(j, "gpu01", n, checks);
    int fails = 0;
    cJSON *it;
    cJSON_ArrayForEach (it, checks) {
        assert_string_equal(nt_json_get_str(it, "name", ""), "inventory");
        fails += strcmp(nt_json_get_str(it, "verdict", ""), "fail") == 0;
    }
    assert_int_equal(fails, 3); /* 0 of 8 GPUs, 1 of 2 ports, 200 of 400 Gb/s */
    cJSON_Delete(checks);
    cJSON_Delete(n);
    nt_judge_destroy(j);
    params.expect = "gpus=eight";
    assert_int_not_equal(nt_judge_create(&params, &j), NT_OK);
}

/* NIC firmware that differs from the majority is a software_consistency warning. */
static void test_nic_firmware_consistency(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes"), *it;
    int warned = 0;
    (void)state;
    for (int i = 0; i < 3; i++) {
        char host[16];
        snprintf(host, sizeof(host), "node%d", i);
        cJSON *n = node(host, "6.1.0-18");
        cJSON *nics = nt_json_add_arr(n, "nics");
        for (int k = 0; k < 2; k++) {
            cJSON *p = cJSON_CreateObject();
            nt_json_add_str(p, "name", k ? "mlx5_1" : "mlx5_0");
            nt_json_add_num(p, "port", 1);
            nt_json_add_str(p, "state", "ACTIVE");
            nt_json_add_str(p, "firmware", i == 2 && k == 1 ? "28.39.1002" : "28.40.1000");
            cJSON_AddItemToArray(nics, p);
        }
        cJSON_AddItemToArray(nodes, n);
    }
    nt_json_add_arr(d, "links");
    nt_json_add_arr(d, "checks");
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    assert_string_equal(
        nt_json_get_str(cJSON_GetObjectItem(cJSON_GetArrayItem(nodes, 2), "software"),
                        "nic_firmware", ""),
        "28.39.1002, 28.40.1000");
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "checks")) {
        if (strcmp(nt_json_get_str(it, "target", ""), "nic_firmware") == 0) {
            assert_string_equal(nt_json_get_str(it, "host", ""), "node2");
            warned++;
        }
    }
    assert_int_equal(warned, 1);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blame_and_summary),
        cmocka_unit_test(test_errors_and_strict),
        cmocka_unit_test(test_expect_checks),
        cmocka_unit_test(test_nic_firmware_consistency),
    };
    return cmocka_run_group_tests_name("probe_judge", tests, NULL, NULL);
}
