/* GPU rules without a GPU (lib/node/gpu.c, probes/judge/gpu_rules.c): expected-value tables, the plan's time
 * budget, and the matrix verdicts on the recorded nvbandwidth matrix of an 8-GPU NVSwitch node
 * (tests/fixtures/nvbandwidth/README.md) with the faults derived from it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/gpu.h"
#include "nettune/pcie.h"
#include "nettune/thresholds.h"
#include "nettune/verdict.h"

#define NG 8

/* The matrix of an nvbandwidth "memcpy CE GPU(row) <- GPU(column)" output. */
static void read_matrix(const char *file, double m[NG][NG])
{
    char path[512], line[512];
    FILE *f;
    int row = -1;
    snprintf(path, sizeof(path), "%s/nvbandwidth/%s", NT_TEST_FIXTURES, file);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        int r;
        char *p = line, *e;
        if (sscanf(line, "%d", &r) != 1 || strstr(line, "      1         2"))
            continue;
        strtol(p, &e, 10);
        if (e == p)
            continue;
        p = e;
        for (int c = 0; c < NG; c++) {
            m[r][c] = strtod(p, &e);
            assert_true(e != p);
            p = e;
        }
        row = r;
    }
    fclose(f);
    assert_int_equal(row, NG - 1);
}

/* An NVSwitch GPU of the A100-SXM4 kind: 12 NVLink3 links to the switch. */
static void switch_gpu(nt_gpu_info_t *g, int i, int links, int up)
{
    memset(g, 0, sizeof(*g));
    g->index = i;
    snprintf(g->name, sizeof(g->name), "NVIDIA A100-SXM4-80GB");
    snprintf(g->bus_id, sizeof(g->bus_id), "0000:%02x:00.0", 0x10 + i);
    g->pcie_max_gen = 4;
    g->pcie_max_width = 16;
    g->nlinks = links;
    for (int l = 0; l < links; l++) {
        g->links[l].link = l;
        g->links[l].active = l < up;
        g->links[l].version = 3;
        g->links[l].remote = NT_NVLINK_REMOTE_SWITCH;
    }
}

static void test_tables(void **state)
{
    nt_gpu_info_t a, b;
    char path[16];
    double line;
    (void)state;
    assert_true(nt_nvlink_link_GBps(4) == 25.0);
    assert_true(nt_nvlink_link_GBps(5) == 50.0);
    assert_true(isnan(nt_nvlink_link_GBps(0)));
    assert_int_equal(nt_gpu_model_nvlinks("NVIDIA H100 80GB HBM3"), 18);
    assert_int_equal(nt_gpu_model_nvlinks("NVIDIA A100-SXM4-80GB"), 12);
    assert_int_equal(nt_gpu_model_nvlinks("NVIDIA A100 80GB PCIe"), 0);
    assert_int_equal(nt_gpu_model_nvlinks("NVIDIA H800"), 8);
    assert_int_equal(nt_gpu_model_nvlinks("Tesla T4"), 0);
    assert_int_equal(nt_gpu_model_nvlinks("NVIDIA A100"), -1);
    assert_int_equal(nt_gpu_model_nvlinks("Some Future GPU"), -1);
    switch_gpu(&a, 0, 12, 12);
    switch_gpu(&b, 1, 12, 12);
    assert_true(fabs(nt_gpu_pcie_line_GBps(&a) - 31.508) < 0.01); /* Gen4 x16 */
    nt_gpu_pair_path(&a, &b, "SYS", path, sizeof(path), &line);
    assert_string_equal(path, "NV12");
    assert_true(line == 300.0);
    /* two links down on b: the pair runs on the smaller switch count */
    switch_gpu(&b, 1, 12, 10);
    nt_gpu_pair_path(&a, &b, "SYS", path, sizeof(path), &line);
    assert_string_equal(path, "NV10");
    assert_true(line == 250.0);
    /* no NVLink: the PCIe path; PIX/PXB carry the PCIe line rate, SYS none */
    switch_gpu(&a, 0, 0, 0);
    nt_gpu_pair_path(&a, &b, "PXB", path, sizeof(path), &line);
    assert_string_equal(path, "PXB");
    assert_true(fabs(line - 31.508) < 0.01);
    nt_gpu_pair_path(&a, &b, "SYS", path, sizeof(path), &line);
    assert_true(isnan(line));
    /* direct links (no switch): counted per peer bus id */
    switch_gpu(&a, 0, 4, 4);
    for (int l = 0; l < 4; l++) {
        a.links[l].remote = NT_NVLINK_REMOTE_GPU;
        snprintf(a.links[l].remote_bus_id, sizeof(a.links[l].remote_bus_id), "%s",
                 l < 2 ? "00000000:11:00.0" : "0000:12:00.0");
    }
    nt_gpu_pair_path(&a, &b, "PHB", path, sizeof(path), &line);
    assert_string_equal(path, "NV2");
    assert_true(line == 50.0);
    assert_int_equal(nt_gpu_nearest_numa("10 21 11 32", 0, (int[]){0, 1, 2, 3}, 4), 2);
    assert_int_equal(nt_gpu_nearest_numa("", 1, (int[]){0, 1}, 2), 0);
    assert_int_equal(nt_gpu_nearest_numa("10", 0, (int[]){0}, 1), -1);
}

static void test_parse_and_ids(void **state)
{
    unsigned m;
    char err[256], id[256];
    (void)state;
    assert_int_equal(nt_gpu_probes_parse("h2d,p2p", &m, err, sizeof(err)), NT_OK);
    assert_int_equal(m, NT_GPU_PROBE_H2D | NT_GPU_PROBE_P2P);
    assert_int_equal(nt_gpu_probes_parse("all", &m, err, sizeof(err)), NT_OK);
    assert_int_equal(m, NT_GPU_PROBE_ALL);
    assert_int_equal(nt_gpu_probes_parse("h2d,nvlink", &m, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "unknown GPU probe 'nvlink' in --gpu-probes (use h2d, d2h, bidir, "
                             "p2p, latency, local)");
    assert_int_equal(nt_gpu_probes_parse("", &m, err, sizeof(err)), NT_ERR_INVALID);
    nt_gpu_link_id(id, sizeof(id), "pcie_h2d", "remote_numa", "n1", "numa1", "gpu0");
    assert_string_equal(id, "pcie_h2d.remote_numa:n1/numa1->n1/gpu0");
    nt_gpu_link_id(id, sizeof(id), "gpu_local", NULL, "n1", "gpu3", NULL);
    assert_string_equal(id, "gpu_local:n1/gpu3");
    nt_gpu_peer_class(id, sizeof(id), "p2p", "write", "NV18");
    assert_string_equal(id, "p2p.write NV18");
    nt_gpu_peer_class(id, sizeof(id), "pcie_h2d", NULL, NULL);
    assert_string_equal(id, "pcie_h2d");
}

/* A default --local plan on an 8-GPU node (two NUMA nodes, kernels, all pairs) stays inside the
 * prolog budget; the count is what the plan documents. */
static void test_plan_budget(void **state)
{
    nt_gpu_plan_params_t pp = {
        .ngpus = 8, .probes = NT_GPU_PROBE_ALL, .bytes = 256u << 20, .remote_numa = 1, .sm_ok = 1};
    nt_gpu_test_t *t;
    size_t n, n2;
    int peer[64];
    double b;
    (void)state;
    assert_int_equal(nt_gpu_plan(&pp, &t, &n), NT_OK);
    /* per GPU: H2D, D2H, bidir local; H2D, D2H remote; H2D.sm, D2H.sm, latency; local = 9;
     * per ordered pair: write, read, sm, latency = 4 (56 pairs); bidir per unordered pair (28) */
    assert_int_equal(n, 8 * 9 + 56 * 4 + 28);
    b = nt_gpu_plan_budget(t, n);
    print_message("8-GPU default plan: %zu measurements, %.2f s budget (limit %.1f s)\n", n, b,
                  NT_GPU_PLAN_LIMIT_S);
    assert_true(b <= NT_GPU_PLAN_LIMIT_S);
    assert_true(b > 2.0); /* not a plan that measures nothing */
    free(t);
    /* no peer access 1 -> 6: its four ordered tests and the bidir pair go */
    for (int i = 0; i < 64; i++)
        peer[i] = 1;
    peer[1 * 8 + 6] = 0;
    pp.peer_ok = peer;
    assert_int_equal(nt_gpu_plan(&pp, &t, &n2), NT_OK);
    assert_int_equal(n2, n - 4 - 1);
    free(t);
    /* without kernels: no SM copies, no latency */
    pp.peer_ok = NULL;
    pp.sm_ok = 0;
    assert_int_equal(nt_gpu_plan(&pp, &t, &n2), NT_OK);
    assert_int_equal(n2, 8 * 6 + 56 * 2 + 28);
    for (size_t i = 0; i < n2; i++)
        assert_int_equal(t[i].sm, 0);
    free(t);
    pp.probes = NT_GPU_PROBE_H2D;
    assert_int_equal(nt_gpu_plan(&pp, &t, &n2), NT_OK);
    assert_int_equal(n2, 16);
    free(t);
    assert_int_equal(nt_gpu_copies_per_sample(0.04, 3, 0.0054, 16), 2);
    assert_int_equal(nt_gpu_copies_per_sample(0.04, 3, 0.0001, 16), 16);
    assert_int_equal(nt_gpu_copies_per_sample(0.01, 3, 0.05, 16), 1);
}

/* The GPU pair links of a node as the judge sees them: figure, expected (NV12 300 GB/s x the
 * NVLink efficiency of the built-in thresholds), population = peer class. */
typedef struct matrix_run {
    nt_vlink_t v[NG * NG];
    int pairs[NG * NG][2], failed[NG * NG];
    size_t n;
    int blamed[NG], partners[NG], fails[NG], nblamed;
} matrix_run_t;

static void judge_matrix(double m[NG][NG], matrix_run_t *r)
{
    nt_thresholds_t *t;
    nt_node_rules_t rules;
    nt_node_verdict_t node;
    double expected;

    assert_int_equal(nt_thresholds_defaults(&t), NT_OK);
    assert_int_equal(nt_thresholds_for_host(t, "node01", "NVIDIA A100-SXM4-80GB", &rules), NT_OK);
    expected = nt_link_expected_bw(&rules.links[NT_KIND_NVLINK], 300.0);
    assert_true(fabs(expected - 222.0) < 0.01);
    memset(r, 0, sizeof(*r));
    for (int a = 0; a < NG; a++)
        for (int b = 0; b < NG; b++) {
            nt_vlink_t *x;
            if (a == b || isnan(m[a][b]))
                continue;
            x = &r->v[r->n];
            x->kind = "p2p.write NV12";
            x->scope = "intra";
            x->bytes = 256u << 20;
            x->metric = NT_METRIC_BW;
            x->value = m[a][b];
            x->expected = expected;
            x->src_node = x->dst_node = 0;
            x->retest_value = NAN;
            r->pairs[r->n][0] = a;
            r->pairs[r->n][1] = b;
            r->n++;
        }
    node.host = "node01";
    assert_int_equal(nt_verdict_judge(r->v, r->n, 1, NULL, &node), NT_OK);
    for (size_t i = 0; i < r->n; i++)
        r->failed[i] = r->v[i].verdict == NT_FAIL;
    r->nblamed = nt_gpu_blame((const int(*)[2])r->pairs, r->failed, r->n, NG, r->blamed,
                              r->partners, r->fails);
    nt_thresholds_destroy(t);
}

static int count_failed(const matrix_run_t *r)
{
    int f = 0;
    for (size_t i = 0; i < r->n; i++)
        f += r->failed[i];
    return f;
}

static void test_matrix_healthy(void **state)
{
    double m[NG][NG];
    matrix_run_t r;
    (void)state;
    read_matrix("8gpu-nvswitch-d2d-write-ce.txt", m);
    assert_true(m[6][0] == 274.89 && m[4][3] == 276.76);
    judge_matrix(m, &r);
    assert_int_equal(r.n, 56);
    assert_int_equal(count_failed(&r), 0);
    assert_int_equal(r.nblamed, 0);
    assert_int_equal(r.partners[0], 7);
}

static void test_matrix_slow_pair(void **state)
{
    double m[NG][NG];
    matrix_run_t r;
    (void)state;
    read_matrix("8gpu-nvswitch-d2d-write-ce.txt", m);
    m[2][5] = m[5][2] = 120.0; /* below half its peers: a link fault by the peer rule too */
    judge_matrix(m, &r);
    assert_int_equal(count_failed(&r), 2);
    for (size_t i = 0; i < r.n; i++)
        if (r.failed[i]) {
            assert_true((r.pairs[i][0] == 2 && r.pairs[i][1] == 5) ||
                        (r.pairs[i][0] == 5 && r.pairs[i][1] == 2));
            /* below its own expected figure and below its peers */
            assert_true(r.v[i].fired & NT_FIRED_EXPECTED);
            assert_true(r.v[i].fired & NT_FIRED_PEER);
        }
    assert_int_equal(r.nblamed, 0); /* one bad pair blames neither GPU (1 of 7 partners) */
    assert_int_equal(r.fails[2], 1);
}

static void test_matrix_slow_gpu(void **state)
{
    double m[NG][NG];
    matrix_run_t r;
    (void)state;
    read_matrix("8gpu-nvswitch-d2d-write-ce.txt", m);
    for (int k = 0; k < NG; k++)
        if (k != 3)
            m[3][k] = m[k][3] = 120.0;
    judge_matrix(m, &r);
    assert_int_equal(count_failed(&r), 14);
    assert_int_equal(r.nblamed, 1);
    assert_int_equal(r.blamed[3], 1);
    assert_int_equal(r.fails[3], 7);
    for (int g = 0; g < NG; g++)
        if (g != 3)
            assert_int_equal(r.blamed[g], 0);
}

/* The report pass: the blamed GPU's pairs become warnings, the node gets gpu_blame naming the
 * bus id; a lone failing link gives gpu_links. */
static void test_report_blame(void **state)
{
    double m[NG][NG];
    matrix_run_t r;
    cJSON *doc = cJSON_CreateObject(), *nodes, *node, *gpus, *links, *checks;
    int warn = 0, fail = 0, blame = 0, glinks = 0;
    const cJSON *it;
    (void)state;
    read_matrix("8gpu-nvswitch-d2d-write-ce.txt", m);
    for (int k = 0; k < NG; k++)
        if (k != 3)
            m[3][k] = m[k][3] = 120.0;
    m[0][7] = 100.0; /* and one more slow pair elsewhere */
    judge_matrix(m, &r);
    nodes = cJSON_AddArrayToObject(doc, "nodes");
    node = cJSON_CreateObject();
    cJSON_AddStringToObject(node, "hostname", "node01");
    gpus = cJSON_AddArrayToObject(node, "gpus");
    for (int g = 0; g < NG; g++) {
        cJSON *o = cJSON_CreateObject();
        char bus[32];
        snprintf(bus, sizeof(bus), "0000:%02x:00.0", 0x10 + g);
        cJSON_AddNumberToObject(o, "index", g);
        cJSON_AddStringToObject(o, "pci_bus_id", bus);
        cJSON_AddItemToArray(gpus, o);
    }
    cJSON_AddItemToArray(nodes, node);
    links = cJSON_AddArrayToObject(doc, "links");
    checks = cJSON_AddArrayToObject(doc, "checks");
    for (size_t i = 0; i < r.n; i++) {
        cJSON *l = cJSON_CreateObject(), *s = cJSON_CreateObject(), *d = cJSON_CreateObject();
        char a[16], b[16];
        snprintf(a, sizeof(a), "gpu%d", r.pairs[i][0]);
        snprintf(b, sizeof(b), "gpu%d", r.pairs[i][1]);
        cJSON_AddStringToObject(l, "id", a);
        cJSON_AddStringToObject(l, "kind", "p2p");
        cJSON_AddStringToObject(s, "host", "node01");
        cJSON_AddStringToObject(s, "device", a);
        cJSON_AddStringToObject(d, "host", "node01");
        cJSON_AddStringToObject(d, "device", b);
        cJSON_AddItemToObject(l, "src", s);
        cJSON_AddItemToObject(l, "dst", d);
        cJSON_AddStringToObject(l, "verdict", nt_verdict_string(r.v[i].verdict));
        cJSON_AddItemToArray(links, l);
    }
    /* A second judging (a progress snapshot: the link engine sets the verdicts again) gives
     * the same result, not a second set of checks. */
    for (int pass = 0; pass < 2; pass++) {
        size_t i = 0;
        cJSON *x;
        cJSON_ArrayForEach (x, links)
            cJSON_ReplaceItemInObject(x, "verdict",
                                      cJSON_CreateString(nt_verdict_string(r.v[i++].verdict)));
        assert_int_equal(nt_gpu_judge_report(doc, checks), 1);
    }
    cJSON_ArrayForEach (it, links) {
        const char *v = cJSON_GetObjectItem(it, "verdict")->valuestring;
        warn += strcmp(v, "warn") == 0;
        fail += strcmp(v, "fail") == 0;
        if (strcmp(v, "warn") == 0)
            assert_string_equal(cJSON_GetObjectItem(it, "blamed_on_gpu")->valuestring, "gpu3");
    }
    assert_int_equal(warn, 14);
    assert_int_equal(fail, 1); /* gpu0 -> gpu7 stays a link fault of its own */
    cJSON_ArrayForEach (it, checks) {
        const char *nm = cJSON_GetObjectItem(it, "name")->valuestring;
        const char *msg = cJSON_GetObjectItem(it, "message")->valuestring;
        if (strcmp(nm, "gpu_blame") == 0) {
            blame++;
            assert_string_equal(msg, "gpu3 (0000:13:00.0) fails with 7 of 7 partners");
        } else if (strcmp(nm, "gpu_links") == 0) {
            glinks++;
            assert_string_equal(msg, "1 GPU link fails (first: gpu0)");
        }
    }
    assert_int_equal(blame, 1);
    assert_int_equal(glinks, 1);
    cJSON_Delete(doc);
}

/* Host to device: Gen4 x16 at 31.5 GB/s x 0.70 = 22.1 GB/s expected; the recorded 26 GB/s
 * pass, a GPU at 12 GB/s (a x8 link, or a wrong NUMA node) fails. */
static void test_h2d_expected(void **state)
{
    char path[512], line[512];
    double v[NG], expected;
    nt_thresholds_t *t;
    nt_node_rules_t rules;
    nt_vlink_t l[NG];
    FILE *f;
    int got = 0;
    (void)state;
    snprintf(path, sizeof(path), "%s/nvbandwidth/8gpu-h2d-ce.txt", NT_TEST_FIXTURES);
    assert_non_null(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "0 ", 2) == 0)
            got = sscanf(line + 1, "%lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3],
                         &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    assert_int_equal(got, NG);
    assert_int_equal(nt_thresholds_defaults(&t), NT_OK);
    assert_int_equal(nt_thresholds_for_host(t, "node01", NULL, &rules), NT_OK);
    expected = nt_link_expected_bw(&rules.links[NT_KIND_PCIE_H2D],
                                   nt_pcie_link_GBps(nt_pcie_gen_gts(4), 16));
    assert_true(fabs(expected - 22.06) < 0.01);
    v[5] = 12.0;
    memset(l, 0, sizeof(l));
    for (int g = 0; g < NG; g++) {
        l[g].kind = "pcie_h2d";
        l[g].scope = "intra";
        l[g].bytes = 256u << 20;
        l[g].metric = NT_METRIC_BW;
        l[g].value = v[g];
        l[g].expected = expected;
        l[g].src_node = l[g].dst_node = 0;
        l[g].retest_value = NAN;
    }
    assert_int_equal(nt_verdict_judge(l, NG, 1, NULL, NULL), NT_OK);
    for (int g = 0; g < NG; g++)
        assert_int_equal(l[g].verdict, g == 5 ? NT_FAIL : NT_PASS);
    nt_thresholds_destroy(t);
}

static void test_verdict_rules(void **state)
{
    nt_gpu_info_t g, after;
    char msg[512];
    (void)state;
    /* NVLinks: the model says 12 for A100-SXM; two down fail; a single GPU is not judged */
    switch_gpu(&g, 0, 12, 10);
    assert_int_equal(nt_gpu_nvlink_verdict(&g, -1, 1, msg, sizeof(msg)), NT_FAIL);
    assert_string_equal(msg, "10 of 12 NVLinks up, 12 expected (down: 10, 11)");
    assert_int_equal(nt_gpu_nvlink_verdict(&g, -1, 0, msg, sizeof(msg)), NT_SKIPPED);
    assert_int_equal(nt_gpu_nvlink_verdict(&g, 10, 1, msg, sizeof(msg)), NT_PASS);
    snprintf(g.name, sizeof(g.name), "Unknown GPU");
    assert_int_equal(nt_gpu_nvlink_verdict(&g, -1, 1, msg, sizeof(msg)), NT_SKIPPED);
    assert_non_null(strstr(msg, "--expect nvlinks=N"));
    /* a PCIe board has no NVLink verdict */
    switch_gpu(&g, 0, 0, 0);
    snprintf(g.name, sizeof(g.name), "NVIDIA L40S");
    assert_int_equal(nt_gpu_nvlink_verdict(&g, -1, 1, msg, sizeof(msg)), NT_SKIPPED);
    /* PCIe: idle Gen1 is not judged, x8 fails always, Gen4 under load of a Gen5 link fails */
    assert_int_equal(nt_gpu_pcie_verdict(1, 16, 5, 16, 0, msg, sizeof(msg)), NT_PASS);
    assert_string_equal(msg, "PCIe x16; generation not judged (read without load: an idle GPU "
                             "trains down)");
    assert_int_equal(nt_gpu_pcie_verdict(1, 8, 5, 16, 0, msg, sizeof(msg)), NT_FAIL);
    assert_int_equal(nt_gpu_pcie_verdict(4, 16, 5, 16, 1, msg, sizeof(msg)), NT_FAIL);
    assert_string_equal(msg, "PCIe x16; Gen4 under load, the link can run Gen5");
    assert_int_equal(nt_gpu_pcie_verdict(5, 16, 5, 16, 1, msg, sizeof(msg)), NT_PASS);
    assert_int_equal(nt_gpu_pcie_verdict(0, 0, 0, 0, 1, msg, sizeof(msg)), NT_NOT_JUDGED);
    /* counters */
    switch_gpu(&g, 0, 4, 4);
    for (int l = 0; l < 4; l++)
        g.links[l].counters_ok = 1;
    after = g;
    assert_int_equal(nt_gpu_counters_verdict(&g, &after, msg, sizeof(msg)), NT_PASS);
    after.links[2].counters[2] += 12;
    after.links[3].counters[0] += 1;
    assert_int_equal(nt_gpu_counters_verdict(&g, &after, msg, sizeof(msg)), NT_FAIL);
    assert_string_equal(msg, "link 2 crc_flit +12, link 3 replay +1");
    /* peer access */
    assert_int_equal(nt_gpu_peer_verdict("NV12", 1, 0, msg, sizeof(msg)), NT_FAIL);
    assert_string_equal(msg, "no peer access although NVLink connects the pair");
    assert_int_equal(nt_gpu_peer_verdict("PIX", 1, 0, msg, sizeof(msg)), NT_FAIL);
    assert_int_equal(nt_gpu_peer_verdict("SYS", 0, 0, msg, sizeof(msg)), NT_SKIPPED);
    assert_int_equal(nt_gpu_peer_verdict("SYS", 0, 1, msg, sizeof(msg)), NT_PASS);
}

static void test_expect_nvlinks(void **state)
{
    nt_expect_t e;
    char err[256];
    (void)state;
    nt_expect_init(&e);
    assert_int_equal(e.nvlinks, -1);
    assert_int_equal(nt_expect_parse("gpus=8,nvlinks=18", 0, &e, err, sizeof(err)), NT_OK);
    assert_int_equal(e.nvlinks, 18);
    assert_int_equal(e.gpus, 8);
    assert_int_equal(nt_expect_parse("nvlinks=-2", 0, &e, err, sizeof(err)), NT_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),           cmocka_unit_test(test_parse_and_ids),
        cmocka_unit_test(test_plan_budget),      cmocka_unit_test(test_matrix_healthy),
        cmocka_unit_test(test_matrix_slow_pair), cmocka_unit_test(test_matrix_slow_gpu),
        cmocka_unit_test(test_report_blame),     cmocka_unit_test(test_h2d_expected),
        cmocka_unit_test(test_verdict_rules),    cmocka_unit_test(test_expect_nvlinks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
