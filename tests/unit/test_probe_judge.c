/* The judge glue of nettune-probe on synthetic reports: links -> figures -> verdicts, folded
 * back into links, the summary, sample trimming and the exit code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "judge/judge.h"

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

static const nt_link_probe_ops_t mpi_ops = {.kind = "mpi"};
static const nt_link_probe_ops_t *const table[1] = {&mpi_ops};

/* The probe's retest: the judge picks the pairs, they are measured again (here: the same
 * figures, or the ones of again() for the pair), and the figures are filed. Returns the
 * number of pairs. */
static int retest(nt_judge_t *j, cJSON *d, double (*again)(const char *id, int bw))
{
    int(*pairs)[3] = NULL, n = 0;
    cJSON *rl = cJSON_CreateArray(), *it;
    assert_int_equal(nt_judge_retest_pairs(j, NULL, d, table, 1, &pairs, &n), NT_OK);
    /* in the order measured: each pair's links (then its control's, the next pair) */
    for (int k = 0; k < n; k++)
        cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links")) {
            int a = (int)nt_json_get_num(cJSON_GetObjectItem(it, "src"), "rank", -1);
            int b = (int)nt_json_get_num(cJSON_GetObjectItem(it, "dst"), "rank", -1);
            if (pairs[k][0] == a && pairs[k][1] == b) {
                const char *id = nt_json_get_str(it, "id", "");
                const char *ha = nt_json_get_str(cJSON_GetObjectItem(it, "src"), "host", "");
                const char *hb = nt_json_get_str(cJSON_GetObjectItem(it, "dst"), "host", "");
                double lat = again ? again(id, 0) : nt_json_get_num(it, "small_msg_lat_us", 0);
                double bw = again ? again(id, 1) : nt_json_get_num(it, "peak_bw_GBps", 0);
                cJSON_AddItemToArray(rl, mklink(ha, hb, lat, bw));
            }
        }
    nt_judge_apply_retest(j, d, rl);
    cJSON_Delete(rl);
    free(pairs);
    return n;
}

/* Two ranks of one pair, nothing expected of their link: below the peer rule's minimum
 * population nothing judges them, and the report says so (not judged with the reason, node and
 * headline not judged) instead of a silent pass; in doc4's population of 6 every passing link
 * says which rule it passed, and every failed or warned one carries its code. */
static void test_nothing_judged_is_said(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = cJSON_CreateObject(), *links, *nodes, *it, *sum;
    (void)state;
    nodes = nt_json_add_arr(d, "nodes");
    cJSON_AddItemToArray(nodes, node("node0", "6.1.0-18"));
    cJSON_AddItemToArray(nodes, node("node1", "6.1.0-18"));
    links = nt_json_add_arr(d, "links");
    cJSON_AddItemToArray(links, mklink("node0", "node1", 1.5, 10.0));
    cJSON_AddItemToArray(links, mklink("node1", "node0", 1.5, 10.0));
    nt_json_add_arr(d, "checks");
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    cJSON_ArrayForEach (it, links) {
        assert_string_equal(nt_json_get_str(it, "verdict", ""), "not_judged");
        assert_null(cJSON_GetObjectItem(it, "judged_by"));
        assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(it, "reasons"), 0)->valuestring,
                            "not judged: 2 links in its population, below the peer rule's "
                            "minimum of 5, and no expected figure");
    }
    cJSON_ArrayForEach (it, nodes)
        assert_string_equal(nt_json_get_str(it, "verdict", ""), "not_judged");
    sum = cJSON_GetObjectItem(d, "summary");
    assert_string_equal(nt_json_get_str(sum, "verdict", ""), "not_judged");
    assert_int_equal(nt_json_get_num(cJSON_GetObjectItem(sum, "counts"), "pass", -1), 0);
    assert_int_equal(nt_json_get_num(cJSON_GetObjectItem(sum, "counts"), "not_judged", -1), 2);
    cJSON_Delete(d);

    d = doc4();
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links")) {
        const char *v = nt_json_get_str(it, "verdict", "");
        const cJSON *by = cJSON_GetObjectItem(it, "judged_by");
        if (strcmp(v, "pass") == 0) {
            assert_int_equal(cJSON_GetArraySize(by), 1);
            assert_string_equal(cJSON_GetArrayItem(by, 0)->valuestring, "peer");
            assert_null(cJSON_GetObjectItem(it, "code"));
        } else {
            assert_string_equal(v, "warn"); /* a peer finding, not retested yet */
            assert_string_equal(nt_json_get_str(it, "code", ""), "NT-NET-002");
            assert_string_equal(nt_json_get_str(it, "category", ""), "drain");
        }
    }
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "checks")) { /* software_consistency */
        assert_string_equal(nt_json_get_str(it, "code", ""), "NT-SW-001");
        assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(it, "judged_by"), 0)->valuestring,
                            "expected");
    }
    assert_string_equal(nt_json_get_str(cJSON_GetObjectItem(d, "summary"), "verdict", ""), "warn");
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

static void test_blame_and_summary(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *it, *sum;
    int code, fails = 0;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    /* Before a retest a peer failure is only a warning: nothing is blamed yet (judged on a
     * copy, as a progress snapshot is: finish trims the samples of passing links). */
    cJSON *early = cJSON_Duplicate(d, 1);
    code = nt_judge_finish(j, NULL, early, 0, &params);
    assert_int_equal(code, NT_EXIT_OK);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(early, "summary"),
                                                            "failed_nodes")),
                     0);
    cJSON_Delete(early);
    /* The 3 links of node2 are measured again, and confirm. */
    /* 3 pairs, each twice, each followed by a control pair */
    assert_int_equal(retest(j, d, NULL), 12);
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
    /* check and figure first: what sinfo -R shows */
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "reason", ""),
                        "nettune:lat 12/1.5us median of its mpi 8 B links vs all nodes, fails "
                        "with 3 of 3 partners");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "cause", ""), "latency");
    /* node verdicts: node2 fails; its partners' only bad links are "caused by blamed node
     * node2": node0 and node1 pass (they once warned for node2's fault), node3 warns for its own
     * kernel (the software_consistency warning below) */
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "nodes")) {
        const char *h = nt_json_get_str(it, "hostname", "");
        assert_string_equal(nt_json_get_str(it, "verdict", ""), strcmp(h, "node2") == 0   ? "fail"
                                                                : strcmp(h, "node3") == 0 ? "warn"
                                                                                          : "pass");
    }
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
            /* retested: the figures are the retest's, the first measurement under "first" */
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(it, "retested")));
            assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "first"), "samples"));
            assert_true(nt_json_get_num(it, "peak_bw_GBps", 0) == 2.0);
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

/* Bandwidth-only links (GPU copies, RDMA writes) have no small_msg_lat_bytes, and a sample may
 * lack its size: the judge read those as (size_t)nt_json_get_num(..., -1), a cast of -1.0 to
 * size_t (UB; clang's -fsanitize=float-cast-overflow stops there, gcc's undefined set lacks the
 * check). The bandwidth is still judged at the peak size; no latency figure is. */
static void test_bw_only_links(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *l;
    (void)state;
    cJSON_ArrayForEach (l, cJSON_GetObjectItem(d, "links")) {
        cJSON_DeleteItemFromObject(l, "small_msg_lat_bytes");
        cJSON_DeleteItemFromObject(l, "small_msg_lat_us");
        cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(l, "samples"), 0);
        cJSON_DeleteItemFromObject(s0, "bytes");
    }
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    int code = nt_judge_finish(j, NULL, d, 0, &params);
    int slow_judged = 0, lat_judged = 0;
    cJSON_ArrayForEach (l, cJSON_GetObjectItem(d, "links")) {
        const char *id = nt_json_get_str(l, "id", "");
        if (strstr(id, "node2") && strcmp(nt_json_get_str(l, "verdict", ""), "pass") != 0)
            slow_judged++;
        if (cJSON_GetObjectItem(l, "expected_lat_us"))
            lat_judged++;
    }
    /* before a retest a peer failure is a warning (test_blame_and_summary) */
    assert_int_equal(code, NT_EXIT_OK);
    assert_int_equal(slow_judged, 3);
    assert_int_equal(lat_judged, 0);
    assert_string_equal(nt_json_get_str(cJSON_GetObjectItem(d, "summary"), "verdict", ""), "warn");
    nt_judge_destroy(j);
    cJSON_Delete(d);
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

/* A node that stopped answering is a failure found (exit 1): failed_nodes with cause
 * no_answer, node verdict fail, whatever its links say. */
static void test_silent_node(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *fn, *it;
    (void)state;
    /* node2 healthy here: its links as the others' */
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links"))
        cJSON_ReplaceItemInObject(
            it, "samples",
            cJSON_Duplicate(cJSON_GetObjectItem(
                                cJSON_GetArrayItem(cJSON_GetObjectItem(d, "links"), 2), "samples"),
                            1));
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    nt_judge_node_silent(j, "node1", "mpi: rank 1 did not answer within 65 s (timed out)");
    nt_judge_node_silent(j, "node1", "a second reason is not kept");
    assert_int_equal(nt_judge_finish(j, NULL, d, 1, &params), NT_EXIT_FAIL);
    fn = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_nodes");
    assert_int_equal(cJSON_GetArraySize(fn), 1);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "host", ""), "node1");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "cause", ""), "no_answer");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "reason", ""),
                        "nettune:no_answer mpi: rank 1 did not answer within 65 s (timed out)");
    assert_string_equal(
        nt_json_get_str(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "nodes"), 1), "verdict", ""),
        "fail");
    assert_string_equal(
        nt_json_get_str(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "nodes"), 0), "verdict", ""),
        "pass");
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

static double flaky_again(const char *id, int bw)
{
    static char seen[8][128];
    static int count[8], nseen;
    int k;
    for (k = 0; k < nseen && strcmp(seen[k], id) != 0; k++)
        ;
    if (k == nseen && nseen < 8)
        snprintf(seen[nseen++], sizeof(seen[0]), "%s", id);
    if (k >= 8)
        return bw ? 10.0 : 1.5;
    count[k]++;
    if (count[k] <= 2) /* its first retest */
        return bw ? 2.0 : 12.0;
    return bw ? 10.0 : 1.5;
}

/* A link that fails first and passes on retest: warn (flaky); its figures are the retest's,
 * the first (failed) ones under "first"; nobody is blamed; unknown checks are listed. */
static void test_flaky_and_not_judged(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *l2 = NULL, *it, *sum;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(retest(j, d, flaky_again), 12);
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "checks"),
                         nt_check_create("inventory", "node0", "nic_rate", NT_NOT_JUDGED, NAN, 200,
                                         "Gb/s", "rate unknown: not judged"));
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    sum = cJSON_GetObjectItem(d, "summary");
    assert_string_equal(nt_json_get_str(sum, "verdict", ""), "warn");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "failed_nodes")), 0);
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links"))
        if (strstr(nt_json_get_str(it, "id", ""), "node0/lr0->node2"))
            l2 = it;
    assert_non_null(l2);
    assert_string_equal(nt_json_get_str(l2, "verdict", ""), "warn");
    assert_true(nt_json_get_num(l2, "peak_bw_GBps", 0) == 10.0);
    assert_true(nt_json_get_num(cJSON_GetObjectItem(l2, "first"), "peak_bw_GBps", 0) == 2.0);
    assert_non_null(
        strstr(cJSON_GetArrayItem(cJSON_GetObjectItem(l2, "reasons"), 0)->valuestring, "flaky"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sum, "not_judged")), 1);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(sum, "not_judged"), 0)->valuestring,
                        "node0: nic_rate: rate unknown: not judged");
    assert_int_equal((int)nt_json_get_num(cJSON_GetObjectItem(sum, "counts"), "not_judged", -1), 1);
    /* node0: a warned link and a not-judged check: warn, never fail */
    assert_string_equal(
        nt_json_get_str(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "nodes"), 0), "verdict", ""),
        "warn");
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* A failed check of a node's own: the reason is "nettune:<target> <observed>/<expected> ...". */
static void test_check_reason(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *fn;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "checks"),
                         nt_check_create("inventory", "node3", "gpus", NT_FAIL, 7, 8, "count",
                                         "7 GPUs found, 8 expected"));
    /* 3 pairs, each twice, each followed by a control pair */
    assert_int_equal(retest(j, d, NULL), 12);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    fn = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_nodes");
    assert_int_equal(cJSON_GetArraySize(fn), 2);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 1), "host", ""), "node3");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 1), "reason", ""),
                        "nettune:gpus 7/8 7 GPUs found, 8 expected");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 1), "cause", ""), "check");
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* The machine busy during every retest: the controls (links between other nodes) ran at a
 * fifth of their first figures each time, so no retest counts: node2 stays unconfirmed (its
 * links warn), nobody is blamed. */
static double busy_again(const char *id, int bw)
{
    if (strstr(id, "node2"))
        return bw ? 2.0 : 12.0;
    return bw ? 2.0 : 7.5; /* a control, disturbed */
}

static void test_retest_disturbed(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *it;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(retest(j, d, busy_again), 12);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_OK);
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_nodes")),
        0);
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links")) {
        assert_null(cJSON_GetObjectItem(it, "retested"));
        if (strstr(nt_json_get_str(it, "id", ""), "node2"))
            assert_string_equal(nt_json_get_str(it, "verdict", ""), "warn");
    }
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* n nodes (n <= 10), full pairs (a < b), healthy at 1.5 us, 10 GB/s; the links of slow[] at
 * 2 GB/s (link faults between healthy nodes: no node fails with more than one partner). */
static cJSON *docn(int n, const int (*slow)[2], int nslow)
{
    cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes"), *links;
    char h[10][8];
    for (int i = 0; i < n; i++) {
        snprintf(h[i], sizeof(h[i]), "node%d", i);
        cJSON_AddItemToArray(nodes, node(h[i], "6.1.0-18"));
    }
    links = nt_json_add_arr(d, "links");
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            int bad = 0;
            for (int k = 0; k < nslow; k++)
                bad |= slow[k][0] == a && slow[k][1] == b;
            cJSON_AddItemToArray(links, mklink(h[a], h[b], 1.5, bad ? 2.0 : 10.0));
        }
    nt_json_add_arr(d, "checks");
    return d;
}

static int has_str(const cJSON *arr, const char *s)
{
    const cJSON *x;
    cJSON_ArrayForEach (x, arr)
        if (cJSON_IsString(x) && strcmp(x->valuestring, s) == 0)
            return 1;
    return 0;
}

/* Every link of ids (NULL-terminated, all of them when NULL) retested, its first figures kept,
 * failed, and judged by the retest too; every other link not retested. */
static void assert_retested(const cJSON *d, const char *const *ids)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links")) {
        const char *id = nt_json_get_str(it, "id", "");
        int want = !ids;
        for (int k = 0; ids && ids[k]; k++)
            want |= strcmp(ids[k], id) == 0;
        assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(it, "retested")), want);
        if (!want) {
            assert_string_equal(nt_json_get_str(it, "verdict", ""), "pass");
            continue;
        }
        assert_non_null(cJSON_GetObjectItem(it, "first"));
        assert_string_equal(nt_json_get_str(it, "verdict", ""), "fail");
        assert_true(has_str(cJSON_GetObjectItem(it, "judged_by"), "retest"));
        assert_non_null(strstr(
            cJSON_GetArrayItem(cJSON_GetObjectItem(it, "reasons"), 0)->valuestring, "again"));
    }
}

/* Two failing links among 4 nodes (node0-node1, node2-node3): the only link between two other
 * ranks than one failing pair's is the other failing link, which is no control (it is failing,
 * and retested in the same round: taken for a control, its retest was never filed and the
 * next 2 rounds measured it again). Each pair twice, no control; both retests
 * filed; no second round. */
static void test_retest_failing_links_not_controls(void **state)
{
    static const int slow[2][2] = {{0, 1}, {2, 3}};
    static const char *const bad[] = {"mpi:node0/lr0->node1/lr0", "mpi:node2/lr0->node3/lr0", NULL};
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = docn(4, slow, 2);
    int(*pairs)[3] = NULL, n = -1;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(retest(j, d, NULL), 4);
    assert_false(nt_judge_is_control(j, bad[0]));
    assert_false(nt_judge_is_control(j, bad[1]));
    /* nothing waits for a retest any more: the probe's next round measures nothing */
    assert_int_equal(nt_judge_retest_pairs(j, NULL, d, table, 1, &pairs, &n), NT_OK);
    assert_int_equal(n, 0);
    free(pairs);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    assert_retested(d, bad);
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_links")),
        2);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* With 6 nodes a control exists for each failing pair: a passing link between two other ranks,
 * never the other failing link (nor any link between a retested pair's ranks). */
static void test_retest_controls_passed(void **state)
{
    static const int slow[2][2] = {{0, 1}, {2, 3}};
    static const char *const bad[] = {"mpi:node0/lr0->node1/lr0", "mpi:node2/lr0->node3/lr0", NULL};
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = docn(6, slow, 2);
    int(*pairs)[3] = NULL, n = 0;
    (void)state;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_retest_pairs(j, NULL, d, table, 1, &pairs, &n), NT_OK);
    /* 2 rounds of (failing pair, its control) */
    assert_int_equal(n, 8);
    for (int i = 0; i < n; i += 2) {
        int a = pairs[i][0], b = pairs[i][1], c = pairs[i + 1][0], e = pairs[i + 1][1];
        assert_true((a == 0 && b == 1) || (a == 2 && b == 3));
        assert_true(c != a && c != b && e != a && e != b);
        /* a healthy link: not between the ranks of either failing pair */
        assert_false((c == 0 && e == 1) || (c == 2 && e == 3) || (c == 1 && e == 0) ||
                     (c == 3 && e == 2));
    }
    free(pairs);
    assert_false(nt_judge_is_control(j, bad[0]));
    assert_false(nt_judge_is_control(j, bad[1]));
    assert_int_equal(retest(j, d, NULL), 8);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    assert_retested(d, bad);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* The tester's reproducer (min_bw_GBps 100 for mpi: every link fails its expected figure):
 * no link passed, so no control; every link is retested in one round (on today's main none
 * was: each was the control of another). */
static void test_retest_all_failing_expected(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4();
    char path[] = "/tmp/nt-test-judge-XXXXXX";
    int fd = mkstemp(path), (*pairs)[3] = NULL, n = -1;
    static const char th[] =
        "{\"schema\":\"nettune.thresholds/1\",\"defaults\":{\"links\":{\"mpi\":"
        "{\"min_bw_GBps\":100}}}}";
    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, th, sizeof(th) - 1), (ssize_t)(sizeof(th) - 1));
    close(fd);
    params.thresholds = path;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    unlink(path);
    /* 6 pairs, each twice, no control */
    assert_int_equal(retest(j, d, NULL), 12);
    assert_int_equal(nt_judge_retest_pairs(j, NULL, d, table, 1, &pairs, &n), NT_OK);
    assert_int_equal(n, 0);
    free(pairs);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    assert_retested(d, NULL);
    cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links"))
        assert_true(has_str(cJSON_GetObjectItem(it, "judged_by"), "expected"));
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* A pair's measurement gives both directions (the MPI probe's reverse bandwidth): only the
 * links the retest is for are filed. node0->node1 fails; its reverse node1->node0 passed first
 * and, measured with it on a busy moment, ran at 3 GB/s: it keeps its first figures and passes
 * (filed, it warned "on retest only": 4 of the 8 warnings of a healthy --full run of 4 fake
 * nodes). */
static void test_retest_files_only_its_links(void **state)
{
    static const int slow[1][2] = {{0, 1}};
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = docn(6, slow, 1), *links = cJSON_GetObjectItem(d, "links"), *it, *rl;
    int(*pairs)[3] = NULL, n = 0, nfwd = cJSON_GetArraySize(links);
    (void)state;
    for (int i = 0; i < nfwd; i++) { /* the reverse directions, healthy */
        cJSON *l = cJSON_GetArrayItem(links, i);
        const char *a = nt_json_get_str(cJSON_GetObjectItem(l, "src"), "host", "");
        const char *b = nt_json_get_str(cJSON_GetObjectItem(l, "dst"), "host", "");
        cJSON_AddItemToArray(links, mklink(b, a, 1.5, 10.0));
    }
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_retest_pairs(j, NULL, d, table, 1, &pairs, &n), NT_OK);
    assert_int_equal(n, 4); /* (0,1) and its control, twice */
    rl = cJSON_CreateArray();
    for (int k = 0; k < n; k++) {
        char ha[8], hb[8];
        int bad = pairs[k][0] == 0 && pairs[k][1] == 1;
        snprintf(ha, sizeof(ha), "node%d", pairs[k][0]);
        snprintf(hb, sizeof(hb), "node%d", pairs[k][1]);
        cJSON_AddItemToArray(rl, mklink(ha, hb, 1.5, bad ? 2.0 : 10.0));
        cJSON_AddItemToArray(rl, mklink(hb, ha, 1.5, bad ? 3.0 : 10.0));
    }
    nt_judge_apply_retest(j, d, rl);
    cJSON_Delete(rl);
    free(pairs);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    static const char *const bad[] = {"mpi:node0/lr0->node1/lr0", NULL};
    assert_retested(d, bad);
    cJSON_ArrayForEach (it, links)
        if (strcmp(nt_json_get_str(it, "id", ""), "mpi:node1/lr0->node0/lr0") == 0)
            assert_null(cJSON_GetObjectItem(it, "first"));
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* Node verdicts around a blamed node: 5 nodes, node2 slow with every
 * partner (blamed), the link node0->node1 marginal on both measurements (6 GB/s against 10: a
 * warning of its own, not caused by node2). node2 fails; node0 and node1 warn for their own
 * link; node3 and node4, whose only bad links are "caused by blamed node node2", pass. */
static void test_blamed_node_partners(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes"), *links, *it;
    char h[5][8];
    (void)state;
    for (int i = 0; i < 5; i++) {
        snprintf(h[i], sizeof(h[i]), "node%d", i);
        cJSON_AddItemToArray(nodes, node(h[i], "6.1.0-18"));
    }
    links = nt_json_add_arr(d, "links");
    for (int a = 0; a < 5; a++)
        for (int b = a + 1; b < 5; b++) {
            int slow = a == 2 || b == 2, marginal = a == 0 && b == 1;
            cJSON_AddItemToArray(links, mklink(h[a], h[b], slow ? 12.0 : 1.5,
                                               slow       ? 2.0
                                               : marginal ? 6.0
                                                          : 10.0));
        }
    nt_json_add_arr(d, "checks");
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_true(retest(j, d, NULL) > 0);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    cJSON *fn = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_nodes");
    assert_int_equal(cJSON_GetArraySize(fn), 1);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "host", ""), "node2");
    cJSON_ArrayForEach (it, links) {
        const char *id = nt_json_get_str(it, "id", "");
        if (strstr(id, "node2")) {
            assert_string_equal(nt_json_get_str(it, "verdict", ""), "fail");
            assert_true(cJSON_IsTrue(cJSON_GetObjectItem(it, "blamed_on_node")));
        } else if (strcmp(id, "mpi:node0/lr0->node1/lr0") == 0) {
            assert_string_equal(nt_json_get_str(it, "verdict", ""), "warn");
            assert_null(cJSON_GetObjectItem(it, "blamed_on_node"));
        } else {
            assert_string_equal(nt_json_get_str(it, "verdict", ""), "pass");
        }
    }
    static const char *const want[5] = {"warn", "warn", "fail", "pass", "pass"};
    for (int i = 0; i < 5; i++)
        assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(nodes, i), "verdict", ""), want[i]);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* A link inside a node: below its expected hardware figure it fails the node (a GPU's PCIe
 * bandwidth); a peer finding alone inside a node (two ranks of one host) is a link fault and
 * the node only warns. */
static void test_intra_links(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *l, *e, *fn;
    (void)state;
    /* node1: a PCIe H2D link at 5 of 32 GB/s line rate (expected 0.70 x 32 = 22.4) */
    l = mklink("node1", "node1", 1.5, 5.0);
    cJSON_ReplaceItemInObject(l, "kind", cJSON_CreateString("pcie_h2d"));
    cJSON_ReplaceItemInObject(l, "scope", cJSON_CreateString("intra"));
    cJSON_ReplaceItemInObject(l, "id", cJSON_CreateString("pcie_h2d:node1/numa0->node1/gpu0"));
    e = cJSON_GetObjectItem(l, "src");
    cJSON_ReplaceItemInObject(e, "device", cJSON_CreateString("numa0"));
    e = cJSON_GetObjectItem(l, "dst");
    cJSON_ReplaceItemInObject(e, "device", cJSON_CreateString("gpu0"));
    nt_json_add_num(l, "line_rate_GBps", 32.0);
    cJSON_AddItemToArray(cJSON_GetObjectItem(d, "links"), l);
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(retest(j, d, NULL) > 0, 1);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    fn = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_nodes");
    cJSON *it;
    int named = 0;
    cJSON_ArrayForEach (it, fn)
        if (strcmp(nt_json_get_str(it, "host", ""), "node1") == 0) {
            named = 1;
            assert_string_equal(nt_json_get_str(it, "cause", ""), "bandwidth");
            assert_true(strncmp(nt_json_get_str(it, "reason", ""), "nettune:bw 5/22.4GB/s", 21) ==
                        0);
        }
    assert_true(named);
    assert_string_equal(
        nt_json_get_str(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "nodes"), 1), "verdict", ""),
        "fail");
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* Three nodes with an NCCL_* environment each; node1's differs in NCCL_IB_HCA. */
static cJSON *drift_doc(const char *kernel)
{
    cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes");
    nt_json_add_str(d, "schema", "nettune.report/1");
    for (int i = 0; i < 3; i++) {
        char host[16];
        snprintf(host, sizeof(host), "node%d", i);
        cJSON *n = node(host, kernel), *e = nt_json_add_obj(n, "environment");
        nt_json_add_str(e, "NCCL_IB_HCA", i == 1 ? "mlx5_1" : "mlx5_0");
        cJSON_AddItemToArray(nodes, n);
    }
    nt_json_add_arr(d, "links");
    nt_json_add_arr(d, "checks");
    return d;
}

static const cJSON *node_of(const cJSON *d, const char *host)
{
    const cJSON *it;
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "nodes"))
        if (strcmp(nt_json_get_str(it, "hostname", ""), host) == 0)
            return it;
    return NULL;
}

static void test_config_drift(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = drift_doc("6.1.0-18"), *c, *fn;
    char path[] = "/tmp/nt-test-baseline-XXXXXX", *text;
    int fd, drift = 0;
    FILE *f;
    (void)state;

    /* Against the majority: node1's NCCL_IB_HCA fails it (exit 1, NT-CFG-008). */
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(d, "checks")) {
        if (strcmp(nt_json_get_str(c, "name", ""), "config_drift") != 0)
            continue;
        drift++;
        assert_string_equal(nt_json_get_str(c, "host", ""), "node1");
        assert_string_equal(nt_json_get_str(c, "code", ""), "NT-CFG-008");
        assert_string_equal(nt_json_get_str(c, "category", ""), "config");
        assert_string_equal(nt_json_get_str(c, "observed", ""), "mlx5_1");
        assert_string_equal(nt_json_get_str(c, "expected", ""), "mlx5_0");
    }
    assert_int_equal(drift, 1);
    assert_string_equal(nt_json_get_str(node_of(d, "node1"), "verdict", ""), "fail");
    assert_string_not_equal(nt_json_get_str(node_of(d, "node0"), "verdict", ""), "fail");
    fn = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "summary"), "failed_nodes");
    assert_int_equal(cJSON_GetArraySize(fn), 1);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(fn, 0), "code", ""), "NT-CFG-008");
    nt_judge_destroy(j);

    /* That judged report as the baseline of a run on another kernel: every node fails on the
     * kernel (NT-CFG-010); node1's NCCL_IB_HCA is held against the baseline's majority. */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    text = cJSON_Print(d);
    fputs(text, f);
    fclose(f);
    cJSON_free(text);
    cJSON_Delete(d);
    params.baseline = path;
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    d = drift_doc("6.1.0-20");
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    drift = 0;
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(d, "checks")) {
        const char *t = nt_json_get_str(c, "target", "");
        if (strcmp(nt_json_get_str(c, "name", ""), "config_drift") != 0)
            continue;
        drift++;
        assert_string_equal(nt_json_get_str(c, "code", ""), "NT-CFG-010");
        assert_string_equal(nt_json_get_str(c, "reference", ""), "baseline");
        if (strcmp(t, "NCCL_IB_HCA") == 0)
            assert_string_equal(nt_json_get_str(c, "host", ""), "node1");
        else
            assert_string_equal(nt_json_get_str(c, "expected", ""), "6.1.0-18");
    }
    assert_int_equal(drift, 4);
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(d, "nodes"))
        assert_string_equal(nt_json_get_str(c, "verdict", ""), "fail");
    nt_judge_destroy(j);
    cJSON_Delete(d);

    /* A file that is no report is refused with one line (exit 2 for the probe). */
    f = fopen(path, "w");
    fputs("{\"schema\": \"nettune.tuning/1\"}", f);
    fclose(f);
    assert_int_equal(nt_judge_create(&params, &j), NT_ERR_INVALID);
    assert_null(j);
    unlink(path);
    assert_int_not_equal(nt_judge_create(&params, &j), NT_OK);
}

/* --tuning-file as the nodes recorded it: node0 and node1 hold one file, node2 another copy,
 * node3 none, node4 one that does not load. */
static void test_tuning_file(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = cJSON_CreateObject(), *nodes = nt_json_add_arr(d, "nodes"), *c;
    const char *hash[] = {"0caa5baa2676a9d7", "0caa5baa2676a9d7", "22df401f51241277", NULL,
                          "14f44020a7729665"};
    const char *err[] = {NULL, NULL, NULL, "cannot open: No such file or directory",
                         "rules[0]: unknown algo 'rign'"};
    const char *want[][3] = {{"pass", "0caa5baa2676a9d7", "NT-CFG-011"},
                             {"pass", "0caa5baa2676a9d7", "NT-CFG-011"},
                             {"fail", "22df401f51241277", "NT-CFG-011"},
                             {"fail", "missing", "NT-CFG-012"},
                             {"fail", "does not load", "NT-CFG-012"}};
    int seen[5] = {0};
    (void)state;

    for (int i = 0; i < 5; i++) {
        char host[16];
        snprintf(host, sizeof(host), "node%d", i);
        cJSON *n = node(host, "6.1.0-18"), *t = nt_json_add_obj(n, "tuning_file");
        nt_json_add_str(t, "path", "/shared/tuning.json");
        if (hash[i])
            nt_json_add_str(t, "fnv1a64", hash[i]);
        if (err[i])
            nt_json_add_str(t, "error", err[i]);
        else
            nt_json_add_num(t, "rules", 7);
        cJSON_AddItemToArray(nodes, n);
    }
    nt_json_add_arr(d, "links");
    nt_json_add_arr(d, "checks");
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    assert_int_equal(nt_judge_finish(j, NULL, d, 0, &params), NT_EXIT_FAIL);
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(d, "checks")) {
        int i;
        if (strcmp(nt_json_get_str(c, "name", ""), "tuning_file") != 0)
            continue;
        i = nt_json_get_str(c, "host", "node9")[4] - '0';
        assert_true(i >= 0 && i < 5);
        seen[i]++;
        assert_string_equal(nt_json_get_str(c, "target", ""), "/shared/tuning.json");
        assert_string_equal(nt_json_get_str(c, "verdict", ""), want[i][0]);
        assert_string_equal(nt_json_get_str(c, "observed", ""), want[i][1]);
        assert_string_equal(nt_json_get_str(c, "code", ""), want[i][2]);
        if (i == 2)
            assert_string_equal(nt_json_get_str(c, "message", ""),
                                "tuning file /shared/tuning.json: fnv1a64 22df401f51241277 "
                                "differs from the majority 0caa5baa2676a9d7 (0caa5baa2676a9d7 on "
                                "2 nodes, 22df401f51241277 on 1 node)");
        if (i == 3)
            assert_non_null(strstr(nt_json_get_str(c, "message", ""), "is missing on this node"));
    }
    for (int i = 0; i < 5; i++)
        assert_int_equal(seen[i], 1);
    for (int i = 0; i < 5; i++)
        assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(nodes, i), "verdict", ""),
                            i < 2 ? "pass" : "fail");
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

/* What each link was judged against: the report's populations (reference and limits, once
 * per population) and each link's judged_against naming them. doc4: node2's links are slow,
 * so the references are the other links' 1.5 us and 10 GB/s. */
static void test_judged_against(void **state)
{
    nt_probe_params_t params = {0};
    nt_judge_t *j;
    cJSON *d = doc4(), *pops, *it;
    int lat = -1, bw = -1, k = 0;
    (void)state;

    params.samples_all = 1; /* keep the samples, so that it can be judged again below */
    assert_int_equal(nt_judge_create(&params, &j), NT_OK);
    nt_judge_finish(j, NULL, d, 0, &params);
    pops = cJSON_GetObjectItem(d, "populations");
    cJSON_ArrayForEach (it, pops) {
        const char *fig = nt_json_get_str(it, "figure", "");
        assert_string_equal(nt_json_get_str(it, "kind", ""), "mpi");
        assert_string_equal(nt_json_get_str(it, "scope", ""), "inter");
        assert_int_equal(nt_json_get_num(it, "members", 0), 6);
        if (strcmp(fig, "lat_us") == 0) {
            lat = k;
            assert_int_equal(nt_json_get_num(it, "bytes", 0), 8);
            assert_true(nt_json_get_num(it, "reference", 0) == 1.5);
            assert_true(nt_json_get_num(it, "limit", 0) >= 3.0); /* lat_ratio 2, or wider */
            assert_true(nt_json_get_num(it, "fail_limit", 0) >= nt_json_get_num(it, "limit", 0));
        } else if (strcmp(fig, "bw_GBps") == 0) {
            bw = k;
            assert_int_equal(nt_json_get_num(it, "bytes", 0), 1 << 20);
            assert_true(nt_json_get_num(it, "reference", 0) == 10.0);
            assert_true(nt_json_get_num(it, "limit", 0) <= 9.3); /* bw_ratio 0.93, or wider */
            assert_true(nt_json_get_num(it, "fail_limit", 0) == 5.0);
        }
        k++;
    }
    assert_true(lat >= 0 && bw >= 0);
    /* Every link, passed or failed, names both. */
    cJSON_ArrayForEach (it, cJSON_GetObjectItem(d, "links")) {
        const cJSON *ja = cJSON_GetObjectItem(it, "judged_against"), *e;
        int has_lat = 0, has_bw = 0;
        cJSON_ArrayForEach (e, ja) {
            has_lat |= e->valueint == lat;
            has_bw |= e->valueint == bw;
        }
        assert_true(has_lat && has_bw);
    }
    /* Judged again, the table is rebuilt, not appended to. */
    nt_judge_finish(j, NULL, d, 0, &params);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "populations")), k);
    cJSON_Delete(d);
    nt_judge_destroy(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_judged_is_said),
        cmocka_unit_test(test_blame_and_summary),
        cmocka_unit_test(test_bw_only_links),
        cmocka_unit_test(test_silent_node),
        cmocka_unit_test(test_flaky_and_not_judged),
        cmocka_unit_test(test_check_reason),
        cmocka_unit_test(test_errors_and_strict),
        cmocka_unit_test(test_expect_checks),
        cmocka_unit_test(test_nic_firmware_consistency),
        cmocka_unit_test(test_retest_disturbed),
        cmocka_unit_test(test_intra_links),
        cmocka_unit_test(test_retest_failing_links_not_controls),
        cmocka_unit_test(test_retest_controls_passed),
        cmocka_unit_test(test_retest_all_failing_expected),
        cmocka_unit_test(test_retest_files_only_its_links),
        cmocka_unit_test(test_blamed_node_partners),
        cmocka_unit_test(test_config_drift),
        cmocka_unit_test(test_tuning_file),
        cmocka_unit_test(test_judged_against),
    };
    return cmocka_run_group_tests_name("probe_judge", tests, NULL, NULL);
}
