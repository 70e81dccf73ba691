/* Thresholds file, built-in defaults, --expect, --require and the inventory check
 * (docs/verdicts.md). Fixtures: tests/fixtures/thresholds/ (run from the repository root, as make does). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/thresholds.h"

#define FIX "tests/fixtures/thresholds/"

static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static void assert_rules_equal(const nt_node_rules_t *a, const nt_node_rules_t *b)
{
    assert_int_equal(a->class_index, b->class_index);
    assert_string_equal(a->class_name, b->class_name);
    for (int k = 0; k < NT_KIND_COUNT; k++) {
        assert_true(same(a->links[k].efficiency, b->links[k].efficiency));
        assert_true(same(a->links[k].min_bw_GBps, b->links[k].min_bw_GBps));
        assert_true(same(a->links[k].max_lat_us, b->links[k].max_lat_us));
    }
    assert_true(same(a->peer.bw_ratio, b->peer.bw_ratio));
    assert_true(same(a->peer.lat_ratio, b->peer.lat_ratio));
    assert_int_equal(a->peer.min_population, b->peer.min_population);
    assert_int_equal(a->expect.gpus, b->expect.gpus);
    assert_int_equal(a->expect.nics, b->expect.nics);
    assert_true(same(a->expect.nic_rate_Gbps, b->expect.nic_rate_Gbps));
    assert_int_equal(a->expect.pcie_gen, b->expect.pcie_gen);
    assert_int_equal(a->expect.pcie_width, b->expect.pcie_width);
}

/* ---- defaults ---------------------------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    nt_thresholds_t *t = NULL;
    nt_node_rules_t r;
    assert_int_equal(nt_thresholds_defaults(&t), NT_OK);
    assert_int_equal(nt_thresholds_nclasses(t), 0);
    assert_int_equal(nt_thresholds_for_host(t, "anyhost", NULL, &r), NT_OK);
    assert_int_equal(r.class_index, -1);
    assert_string_equal(r.class_name, "");
    assert_true(r.peer.bw_ratio == 0.93);
    assert_true(r.peer.lat_ratio == 2.0);
    assert_int_equal(r.peer.min_population, 5);
    assert_true(r.links[NT_KIND_RDMA].efficiency == 0.90);
    assert_true(r.links[NT_KIND_RDMA].max_lat_us == 2.5);
    assert_true(isnan(r.links[NT_KIND_RDMA].min_bw_GBps));
    assert_true(r.links[NT_KIND_PCIE_H2D].efficiency == 0.70);
    assert_true(r.links[NT_KIND_PCIE_D2H].efficiency == 0.70);
    assert_true(r.links[NT_KIND_NVLINK].efficiency == 0.74);
    assert_true(r.links[NT_KIND_P2P].efficiency == 0.70);
    assert_true(isnan(r.links[NT_KIND_MPI].efficiency));
    assert_true(isnan(r.links[NT_KIND_MPI].min_bw_GBps));
    assert_true(isnan(r.links[NT_KIND_MPI].max_lat_us));
    assert_true(nt_expect_is_empty(&r.expect));
    /* HDR 200 Gb/s = 25 GB/s line rate: 22.5 GB/s expected */
    assert_true(fabs(nt_link_expected_bw(&r.links[NT_KIND_RDMA], 25.0) - 22.5) < 1e-12);
    assert_true(isnan(nt_link_expected_bw(&r.links[NT_KIND_MPI], 25.0)));
    assert_true(isnan(nt_link_expected_bw(&r.links[NT_KIND_RDMA], NAN)));
    assert_true(nt_link_expected_lat(&r.links[NT_KIND_RDMA]) == 2.5);
    assert_true(isnan(nt_link_expected_lat(&r.links[NT_KIND_MPI])));
    nt_link_rules_t floor = {0.9, 30.0, NAN};
    assert_true(nt_link_expected_bw(&floor, 25.0) == 30.0); /* the larger of the two */
    assert_true(nt_link_expected_bw(&floor, NAN) == 30.0);
    nt_thresholds_destroy(t);
    nt_thresholds_destroy(NULL);
}

static void test_kind_names(void **state)
{
    (void)state;
    assert_int_equal(nt_link_kind_parse("rdma"), NT_KIND_RDMA);
    assert_int_equal(nt_link_kind_parse("rdma.write"), NT_KIND_RDMA);
    assert_int_equal(nt_link_kind_parse("pcie_h2d.remote_numa"), NT_KIND_PCIE_H2D);
    assert_int_equal(nt_link_kind_parse("nvlink"), NT_KIND_NVLINK);
    assert_int_equal(nt_link_kind_parse("rdm"), -1);
    assert_int_equal(nt_link_kind_parse("pcie"), -1);
    assert_int_equal(nt_link_kind_parse(NULL), -1);
    assert_string_equal(nt_link_kind_name(NT_KIND_P2P), "p2p");
    assert_string_equal(nt_link_kind_name(NT_KIND_COUNT), "?");
}

/* ---- the file ---------------------------------------------------------------------------- */

static void test_load_good_and_match(void **state)
{
    (void)state;
    nt_thresholds_t *t = NULL;
    char err[256] = "x";
    nt_node_rules_t r;
    assert_int_equal(nt_thresholds_load(FIX "good.json", &t, err, sizeof(err)), NT_OK);
    assert_string_equal(err, "");
    assert_int_equal(nt_thresholds_nclasses(t), 2);
    assert_string_equal(nt_thresholds_class_name(t, 0), "h100-nodes");
    assert_string_equal(nt_thresholds_class_name(t, 1), "a100-any-host");
    assert_null(nt_thresholds_class_name(t, 2));

    /* class 0 by hostname */
    assert_int_equal(nt_thresholds_for_host(t, "gpu12", NULL, &r), NT_OK);
    assert_int_equal(r.class_index, 0);
    assert_string_equal(r.class_name, "h100-nodes");
    assert_int_equal(r.expect.gpus, 8);
    assert_int_equal(r.expect.nics, 8);
    assert_true(r.expect.nic_rate_Gbps == 400);
    assert_int_equal(r.expect.pcie_gen, 5);
    assert_int_equal(r.expect.pcie_width, 16);
    assert_true(r.links[NT_KIND_RDMA].efficiency == 0.95);
    assert_true(isnan(r.links[NT_KIND_RDMA].min_bw_GBps)); /* explicit null */
    assert_true(r.links[NT_KIND_RDMA].max_lat_us == 2.5);  /* left out: built-in default */
    assert_true(r.links[NT_KIND_PCIE_H2D].min_bw_GBps == 48);
    assert_true(r.links[NT_KIND_PCIE_H2D].efficiency == 0.70);
    assert_true(r.links[NT_KIND_MPI].max_lat_us == 50); /* from the file's defaults */
    assert_true(r.peer.bw_ratio == 0.9);
    assert_true(r.peer.lat_ratio == 2.0);
    assert_int_equal(r.peer.min_population, 6); /* from the file's defaults */

    /* the regex is unanchored unless the pattern says so: this one is anchored */
    assert_int_equal(nt_thresholds_for_host(t, "xgpu12", NULL, &r), NT_OK);
    assert_int_equal(r.class_index, -1);
    assert_int_equal(nt_thresholds_for_host(t, "gpu12a", NULL, &r), NT_OK);
    assert_int_equal(r.class_index, -1);

    /* class 1 by GPU model, case-insensitive substring */
    assert_int_equal(nt_thresholds_for_host(t, "node3", "NVIDIA a100-SXM4-80GB", &r), NT_OK);
    assert_int_equal(r.class_index, 1);
    assert_int_equal(r.expect.gpus, 4);
    assert_int_equal(r.expect.nics, -1);
    assert_true(r.links[NT_KIND_NVLINK].efficiency == 0.8);
    assert_true(r.links[NT_KIND_NVLINK].max_lat_us == 5);
    assert_true(r.peer.bw_ratio == 0.93);
    /* no GPU model: the class does not fit */
    assert_int_equal(nt_thresholds_for_host(t, "node3", NULL, &r), NT_OK);
    assert_int_equal(r.class_index, -1);
    assert_int_equal(nt_thresholds_for_host(t, "node3", "", &r), NT_OK);
    assert_int_equal(r.class_index, -1);
    /* first matching class wins */
    assert_int_equal(nt_thresholds_for_host(t, "gpu1", "NVIDIA A100", &r), NT_OK);
    assert_int_equal(r.class_index, 0);

    /* defaults: built-in overlaid with the file's defaults */
    assert_int_equal(nt_thresholds_for_host(t, "login1", NULL, &r), NT_OK);
    assert_int_equal(r.class_index, -1);
    assert_true(r.links[NT_KIND_RDMA].efficiency == 0.90);
    assert_true(r.links[NT_KIND_MPI].max_lat_us == 50);
    assert_int_equal(r.peer.min_population, 6);
    assert_true(nt_expect_is_empty(&r.expect));
    assert_int_equal(nt_thresholds_for_host(t, NULL, NULL, &r), NT_ERR_INVALID);

    /* peer rules for a run: all nodes in one class -> that class's */
    nt_peer_rules_t p;
    const char *h100[] = {"gpu1", "gpu2", "gpu3"};
    const char *mixed[] = {"gpu1", "login1"};
    assert_int_equal(nt_thresholds_peer_for_run(t, h100, NULL, 3, &p), NT_OK);
    assert_true(p.bw_ratio == 0.9);
    assert_int_equal(nt_thresholds_peer_for_run(t, mixed, NULL, 2, &p), NT_OK);
    assert_true(p.bw_ratio == 0.93);
    assert_int_equal(p.min_population, 6);
    nt_thresholds_destroy(t);
}

static void check_broken(const char *file, nt_status_t want_st, const char *want_msg, int prefix)
{
    nt_thresholds_t *t = (nt_thresholds_t *)0x1;
    char err[512];
    char want[512];
    snprintf(want, sizeof(want), FIX "%s: %s", file, want_msg);
    char path[256];
    snprintf(path, sizeof(path), FIX "%s", file);
    nt_status_t st = nt_thresholds_load(path, &t, err, sizeof(err));
    if (st != want_st || (prefix ? strncmp(err, want, strlen(want)) : strcmp(err, want)))
        print_error("%s: status %d, message: %s\n", file, st, err);
    assert_int_equal(st, want_st);
    assert_null(t);
    if (prefix)
        assert_memory_equal(err, want, strlen(want));
    else
        assert_string_equal(err, want);
    assert_null(strchr(err, '\n')); /* one line */
}

static void test_broken_files(void **state)
{
    (void)state;
    check_broken("bad-schema.json", NT_ERR_INVALID,
                 "schema: unknown schema \"nettune.thresholds/2\", expected "
                 "\"nettune.thresholds/1\"",
                 0);
    check_broken("no-schema.json", NT_ERR_INVALID,
                 "schema: missing, expected \"nettune.thresholds/1\"", 0);
    check_broken("wrong-type.json", NT_ERR_INVALID,
                 "classes[0].links.rdma.efficiency: expected a number or null, got string", 0);
    check_broken("negative-ratio.json", NT_ERR_INVALID,
                 "defaults.peer.bw_ratio: must be in (0, 1], got -0.5", 0);
    check_broken("bad-regex.json", NT_ERR_INVALID,
                 "classes[1].match.hostname_regex: bad regex '^gpu[0-9+$': ", 1);
    /* the stray comma is column 17; cJSON's error position is the character after it */
    check_broken("not-json.json", NT_ERR_PARSE, "not valid JSON near line 3, column 18", 0);
    check_broken("unknown-key.json", NT_ERR_INVALID,
                 "defaults.links.rdma.efficency: unknown key (valid: efficiency, min_bw_GBps, "
                 "max_lat_us)",
                 0);
    check_broken("duplicate-class.json", NT_ERR_INVALID,
                 "classes[1].name: \"a\" is also the name of classes[0]", 0);
    check_broken("bad-pcie.json", NT_ERR_INVALID,
                 "classes[0].expect.pcie: expected a string like \"gen5x16\" (gen 1-6, width "
                 "1/2/4/8/16/32) or null",
                 0);
    check_broken("does-not-exist.json", NT_ERR_NOT_FOUND, "cannot open: No such file or directory",
                 0);
}

static void test_parse_rules(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"[]", "t: $: expected an object, got array"},
        {"{\"schema\": \"nettune.thresholds/1\", \"classes\": {}}",
         "t: classes: expected an array, got object"},
        {"{\"schema\": \"nettune.thresholds/1\", \"extra\": 1}",
         "t: extra: unknown key (valid: schema, classes, defaults)"},
        {"{\"schema\": \"nettune.thresholds/1\", \"defaults\": {\"peer\": {\"lat_ratio\": 0.5}}}",
         "t: defaults.peer.lat_ratio: must be >= 1, got 0.5"},
        {"{\"schema\": \"nettune.thresholds/1\", \"defaults\": {\"peer\": "
         "{\"min_population\": 2.5}}}",
         "t: defaults.peer.min_population: must be an integer >= 2, got 2.5"},
        {"{\"schema\": \"nettune.thresholds/1\", \"defaults\": {\"links\": {\"rdma\": "
         "{\"efficiency\": 1.5}}}}",
         "t: defaults.links.rdma.efficiency: must be in (0, 1], got 1.5"},
        {"{\"schema\": \"nettune.thresholds/1\", \"defaults\": {\"links\": {\"ib\": {}}}}",
         "t: defaults.links.ib: unknown link kind 'ib' (valid: mpi, rdma, pcie_h2d, pcie_d2h, "
         "p2p, nvlink, gpu_local)"},
        {"{\"schema\": \"nettune.thresholds/1\", \"defaults\": {\"expect\": {\"gpus\": -1}}}",
         "t: defaults.expect.gpus: must be an integer >= 0, got -1"},
        {"{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"name\": \"a\"}]}",
         "t: classes[0].match: missing"},
        {"{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"name\": \"a\", \"match\": {}}]}",
         "t: classes[0].match: needs hostname_regex or gpu_model"},
        {"{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"match\": {\"gpu_model\": "
         "\"x\"}}]}",
         "t: classes[0].name: expected a non-empty string of at most 63 characters"},
        {"{\"schema\": 1}", "t: schema: unknown schema number, expected \"nettune.thresholds/1\""},
        {"{\"schema\": \"nettune.thresholds/1\", \"defaults\": {\"links\": {\"rdma\": "
         "{\"efficiency\": 0.9, \"efficiency\": 0.5}}}}",
         "t: defaults.links.rdma.efficiency: given twice: keep one"},
        {"{\"schema\": \"nettune.thresholds/1\", \"classes\": [], \"classes\": []}",
         "t: classes: given twice: keep one"},
        {"{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"name\": \"a\", \"match\": "
         "{\"gpu_model\": \"x\"}, \"match\": {\"gpu_model\": \"y\"}}]}",
         "t: classes[0].match: given twice: keep one"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        nt_thresholds_t *t = NULL;
        char err[512] = "";
        nt_status_t st = nt_thresholds_parse(bad[i].text, "t", &t, err, sizeof(err));
        if (strcmp(err, bad[i].msg) != 0)
            print_error("case %zu: %s\n", i, err);
        assert_int_equal(st, NT_ERR_INVALID);
        assert_null(t);
        assert_string_equal(err, bad[i].msg);
    }
    /* comment keys anywhere, null expectations, an empty class list */
    nt_thresholds_t *t = NULL;
    nt_node_rules_t r;
    assert_int_equal(nt_thresholds_parse("{\"schema\": \"nettune.thresholds/1\", \"classes\": [],"
                                         " \"defaults\": {\"comment\": \"x\", \"expect\": "
                                         "{\"gpus\": null, \"pcie\": null}}}",
                                         NULL, &t, NULL, 0),
                     NT_OK);
    assert_int_equal(nt_thresholds_for_host(t, "h", NULL, &r), NT_OK);
    assert_true(nt_expect_is_empty(&r.expect));
    nt_thresholds_destroy(t);
    /* err NULL: the message is logged, the status still says what went wrong */
    t = NULL;
    assert_int_equal(nt_thresholds_parse("{", "t", &t, NULL, 0), NT_ERR_PARSE);
    assert_null(t);
}

/* Host-name regexes whose compile cost glibc does not bound are refused with the reason (the
 * first one took 9 s in regcomp, found by fuzz-thresholds); ordinary patterns, bracket
 * expressions that hold quantifier characters, and one level of counted repeats still load and
 * match. */
static void test_regex_cost(void **state)
{
    (void)state;
    static const struct {
        const char *re, *why;
    } refused[] = {
        {"^]+*****************+****************$",
         "two repetition operators in a row (undefined in POSIX ERE)"},
        {"^a+*$", "two repetition operators in a row (undefined in POSIX ERE)"},
        {"^a{2}{3}$", "two repetition operators in a row (undefined in POSIX ERE)"},
        {"^(a{1,255}){1,255}$", "a counted repeat {m,n} of a group that holds one"},
        {"^((x|a{2})b){3}$", "a counted repeat {m,n} of a group that holds one"},
        {"^a{1,256}$", "a {m,n} bound above 255"},
        {"^(a)\\1$", "back-references (\\1-\\9) are not allowed"},
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char text[512], want[512], err[512] = "";
        nt_thresholds_t *t = NULL;
        cJSON *re = cJSON_CreateString(refused[i].re);
        char *quoted = cJSON_PrintUnformatted(re);
        snprintf(text, sizeof(text),
                 "{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"name\": \"a\", "
                 "\"match\": {\"hostname_regex\": %s}}]}",
                 quoted);
        free(quoted);
        cJSON_Delete(re);
        snprintf(want, sizeof(want),
                 "t: classes[0].match.hostname_regex: refused: %s; write a simpler pattern",
                 refused[i].why);
        assert_int_equal(nt_thresholds_parse(text, "t", &t, err, sizeof(err)), NT_ERR_INVALID);
        if (strcmp(err, want) != 0)
            print_error("case %zu: %s\n", i, err);
        assert_string_equal(err, want);
        assert_null(t);
    }
    char long_re[300];
    memset(long_re, 'a', 257);
    long_re[257] = '\0';
    char text[512], err[512] = "";
    nt_thresholds_t *t = NULL;
    snprintf(text, sizeof(text),
             "{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"name\": \"a\", "
             "\"match\": {\"hostname_regex\": \"%s\"}}]}",
             long_re);
    assert_int_equal(nt_thresholds_parse(text, "t", &t, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "t: classes[0].match.hostname_regex: refused: longer than 256 "
                             "characters; write a simpler pattern");
    static const struct {
        const char *re, *host;
        int match;
    } fine[] = {
        {"^gpu-[a-z][0-9]{3}$", "gpu-a001", 1},
        {"^gpu-[a-z][0-9]{3}$", "gpu-a01", 0},
        {"^[]+*]x$", "*x", 1},
        {"^[[:alpha:]]+[[:digit:]]{1,2}$", "node7", 1},
        {"^(ab){2}(c{1,3})*$", "ababccc", 1},
        {"^(a*)*b$", "aaab", 1},
        {"^dgx-h100-[0-9]{2}\\.cluster$", "dgx-h100-12.cluster", 1},
    };
    for (size_t i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
        cJSON *re = cJSON_CreateString(fine[i].re);
        char *quoted = cJSON_PrintUnformatted(re);
        nt_node_rules_t r;
        snprintf(text, sizeof(text),
                 "{\"schema\": \"nettune.thresholds/1\", \"classes\": [{\"name\": \"a\", "
                 "\"match\": {\"hostname_regex\": %s}}]}",
                 quoted);
        free(quoted);
        cJSON_Delete(re);
        t = NULL;
        err[0] = '\0';
        nt_status_t st = nt_thresholds_parse(text, "t", &t, err, sizeof(err));
        if (st != NT_OK)
            print_error("case %zu: %s\n", i, err);
        assert_int_equal(st, NT_OK);
        assert_int_equal(nt_thresholds_for_host(t, fine[i].host, NULL, &r), NT_OK);
        assert_int_equal(r.class_index == 0, fine[i].match);
        nt_thresholds_destroy(t);
    }
}

/* An object with more keys than any valid one is refused before the pairwise duplicate check
 * (which would otherwise be quadratic in a hostile file's size). */
static void test_key_limit(void **state)
{
    (void)state;
    char text[4096], err[512] = "";
    size_t n = (size_t)snprintf(text, sizeof(text),
                                "{\"schema\": \"nettune.thresholds/1\", "
                                "\"defaults\": {\"links\": {\"rdma\": {");
    for (int i = 0; i < 65; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"k%d\": 1", i ? ", " : "", i);
    snprintf(text + n, sizeof(text) - n, "}}}}");
    nt_thresholds_t *t = NULL;
    assert_int_equal(nt_thresholds_parse(text, "t", &t, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "t: defaults.links.rdma: 65 keys, more than any object of "
                             "nettune.thresholds/1 has: remove the unknown or repeated ones");
    assert_null(t);
}

/* to_json of the defaults is a valid thresholds file that loads to the same rules, and printing
 * it again gives the same text. */
static void round_trip(nt_thresholds_t *t, const char *const *hosts, const char *const *models,
                       int nhosts)
{
    cJSON *doc = NULL;
    assert_int_equal(nt_thresholds_to_json(t, &doc), NT_OK);
    char *text = cJSON_Print(doc);
    assert_non_null(text);
    nt_thresholds_t *back = NULL;
    char err[256] = "";
    nt_status_t st = nt_thresholds_parse(text, "printed", &back, err, sizeof(err));
    if (st != NT_OK)
        print_error("%s\n%s\n", err, text);
    assert_int_equal(st, NT_OK);
    for (int i = 0; i < nhosts; i++) {
        nt_node_rules_t a, b;
        assert_int_equal(nt_thresholds_for_host(t, hosts[i], models[i], &a), NT_OK);
        assert_int_equal(nt_thresholds_for_host(back, hosts[i], models[i], &b), NT_OK);
        assert_rules_equal(&a, &b);
    }
    cJSON *doc2 = NULL;
    assert_int_equal(nt_thresholds_to_json(back, &doc2), NT_OK);
    char *text2 = cJSON_Print(doc2);
    assert_string_equal(text, text2);
    free(text);
    free(text2);
    cJSON_Delete(doc);
    cJSON_Delete(doc2);
    nt_thresholds_destroy(back);
}

static void test_defaults_round_trip(void **state)
{
    (void)state;
    nt_thresholds_t *t = NULL;
    assert_int_equal(nt_thresholds_defaults(&t), NT_OK);
    const char *hosts[] = {"gpu1", "login"};
    const char *models[] = {"NVIDIA H100", NULL};
    round_trip(t, hosts, models, 2);
    /* the printed defaults state every key, with null where there is no threshold */
    cJSON *doc = NULL;
    assert_int_equal(nt_thresholds_to_json(t, &doc), NT_OK);
    const cJSON *d = cJSON_GetObjectItem(doc, "defaults");
    const cJSON *mpi = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "links"), "mpi");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(mpi, "min_bw_GBps")));
    const cJSON *rdma = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "links"), "rdma");
    assert_true(cJSON_GetObjectItem(rdma, "efficiency")->valuedouble == 0.90);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "expect"), "pcie")));
    assert_string_equal(cJSON_GetObjectItem(doc, "schema")->valuestring, "nettune.thresholds/1");
    assert_true(cJSON_IsArray(cJSON_GetObjectItem(doc, "classes")));
    cJSON_Delete(doc);
    nt_thresholds_destroy(t);
}

static void test_file_round_trip(void **state)
{
    (void)state;
    nt_thresholds_t *t = NULL;
    assert_int_equal(nt_thresholds_load(FIX "good.json", &t, NULL, 0), NT_OK);
    const char *hosts[] = {"gpu1", "node3", "login", "gpu7"};
    const char *models[] = {NULL, "A100", NULL, "A100"};
    round_trip(t, hosts, models, 4);
    /* a class writes only what it states: h100-nodes has no nvlink rules */
    cJSON *doc = NULL;
    assert_int_equal(nt_thresholds_to_json(t, &doc), NT_OK);
    const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "classes"), 0);
    const cJSON *links = cJSON_GetObjectItem(c0, "links");
    assert_null(cJSON_GetObjectItem(links, "nvlink"));
    assert_true(
        cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(links, "rdma"), "min_bw_GBps")));
    assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(links, "rdma"), "max_lat_us"));
    cJSON_Delete(doc);
    nt_thresholds_destroy(t);
}

/* ---- --expect and --require -------------------------------------------------------------- */

static void test_expect_parse(void **state)
{
    (void)state;
    nt_expect_t e;
    char err[256];
    nt_expect_init(&e);
    assert_true(nt_expect_is_empty(&e));
    assert_int_equal(
        nt_expect_parse("gpus=8,nics=8,nic_rate_Gbps=400,pcie=gen5x16", 0, &e, err, sizeof(err)),
        NT_OK);
    assert_int_equal(e.gpus, 8);
    assert_int_equal(e.nics, 8);
    assert_true(e.nic_rate_Gbps == 400);
    assert_int_equal(e.pcie_gen, 5);
    assert_int_equal(e.pcie_width, 16);

    /* case-insensitive keys, only the given keys written */
    nt_expect_init(&e);
    e.nics = 4;
    assert_int_equal(
        nt_expect_parse("GPUS=2,nic_rate_gbps=200.5,PCIE=Gen4X8", 0, &e, err, sizeof(err)), NT_OK);
    assert_int_equal(e.gpus, 2);
    assert_int_equal(e.nics, 4);
    assert_true(e.nic_rate_Gbps == 200.5);
    assert_int_equal(e.pcie_gen, 4);
    assert_int_equal(e.pcie_width, 8);
    /* a key given twice (also as its alias) is an error, e unchanged */
    assert_int_equal(nt_expect_parse("gpus=1,gpus=3", 0, &e, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "--expect: gpus given twice in 'gpus=1,gpus=3': keep one");
    assert_int_equal(nt_expect_parse("gpus=1,GPUS_PER_NODE=3", 0, &e, err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_int_equal(e.gpus, 2);
    assert_int_equal(nt_expect_parse("gpus=0", 0, &e, err, sizeof(err)), NT_OK);
    assert_int_equal(e.gpus, 0);
    /* a key of the other command is refused with the reason, not ignored */
    assert_int_equal(
        nt_expect_parse("gpus=8,efficiency=0.5", NT_EXPECT_FOR_PROBE, &e, err, sizeof(err)),
        NT_ERR_INVALID);
    assert_string_equal(err, "--expect: 'efficiency' is a key of nettune doctor (nccl-tests "
                             "outputs), not judged here (valid keys: gpus (gpus_per_node), nics "
                             "(nics_per_node), nic_rate_Gbps, pcie, nvlinks)");
    assert_int_equal(nt_expect_parse("pcie=gen5x16", NT_EXPECT_FOR_DOCTOR, &e, err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_string_equal(err, "--expect: 'pcie' is a key of nettune probe (the node's inventory), "
                             "not judged here (valid keys: gpus (gpus_per_node), nics "
                             "(nics_per_node), nic_rate_Gbps, gpu_model, collective, efficiency, "
                             "error_efficiency, min_busbw_GBps (min_bw_GBps))");
    assert_int_equal(nt_expect_parse("gpu_model=H100", NT_EXPECT_FOR_PROBE, &e, err, sizeof(err)),
                     NT_ERR_INVALID);
    assert_int_equal(e.gpus, 0);

    static const struct {
        const char *spec, *msg;
    } bad[] = {
#define EXPECT_KEYS_T                                                                              \
    "gpus (gpus_per_node), nics (nics_per_node), nic_rate_Gbps, pcie, nvlinks, gpu_model, "        \
    "collective, efficiency, error_efficiency, min_busbw_GBps (min_bw_GBps)"
        {"gpus=8,foo=1", "--expect: unknown key 'foo' (valid keys: " EXPECT_KEYS_T ")"},
        {"gpus", "--expect: 'gpus' is not key=value (keys: " EXPECT_KEYS_T ")"},
        {"gpus=", "--expect: 'gpus=' is not key=value (keys: " EXPECT_KEYS_T ")"},
        {"=8", "--expect: '=8' is not key=value (keys: " EXPECT_KEYS_T ")"},
        {"collective=allreduce",
         "--expect: unknown collective 'allreduce' (all_reduce, all_gather, "
         "reduce_scatter, alltoall, sendrecv, broadcast, reduce, gather, "
         "scatter, hypercube)"},
        {"efficiency=3", "--expect: efficiency=3: expected a number in (0, 2]"},
        {"gpus=-1", "--expect: gpus=-1: expected an integer >= 0"},
        {"nics=2x", "--expect: nics=2x: expected an integer >= 0"},
        {"nic_rate_Gbps=0", "--expect: nic_rate_Gbps=0: expected a rate in Gb/s > 0"},
        {"nic_rate_Gbps=fast", "--expect: nic_rate_Gbps=fast: expected a rate in Gb/s > 0"},
        {"pcie=gen7x16", "--expect: pcie=gen7x16: expected gen<1-6>x<1|2|4|8|16|32>, e.g. "
                         "gen5x16"},
        {"pcie=gen5x12", "--expect: pcie=gen5x12: expected gen<1-6>x<1|2|4|8|16|32>, e.g. "
                         "gen5x16"},
        {"pcie=5x16", "--expect: pcie=5x16: expected gen<1-6>x<1|2|4|8|16|32>, e.g. gen5x16"},
        {"gpus=8,,nics=1", "--expect: empty item in 'gpus=8,,nics=1'"},
        {"gpus=8,", "--expect: empty item in 'gpus=8,'"},
        {"", "--expect: empty; give key=value,... with keys " EXPECT_KEYS_T},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        nt_expect_init(&e);
        e.gpus = 5;
        err[0] = '\0';
        assert_int_equal(nt_expect_parse(bad[i].spec, 0, &e, err, sizeof(err)), NT_ERR_INVALID);
        if (strcmp(err, bad[i].msg) != 0)
            print_error("spec '%s': %s\n", bad[i].spec, err);
        assert_string_equal(err, bad[i].msg);
        assert_int_equal(e.gpus, 5); /* unchanged on error */
        assert_int_equal(e.nics, -1);
    }
    /* the doctor's spellings are aliases of the same keys, any case */
    nt_expect_init(&e);
    assert_int_equal(nt_expect_parse("GPUS_PER_NODE=8,nics_per_node=4,Min_BW_GBps=40,"
                                     "collective=ALL_REDUCE,efficiency=0.8",
                                     NT_EXPECT_FOR_DOCTOR, &e, err, sizeof(err)),
                     NT_OK);
    assert_int_equal(e.gpus, 8);
    assert_int_equal(e.nics, 4);
    assert_true(e.min_busbw_GBps == 40);
    assert_string_equal(e.collective, "all_reduce");
    assert_true(e.efficiency == 0.8);
}

static void test_expect_override(void **state)
{
    (void)state;
    nt_expect_t cls, cli;
    nt_expect_init(&cls);
    nt_expect_init(&cli);
    cls.gpus = 8;
    cls.nics = 8;
    cls.pcie_gen = 5;
    cls.pcie_width = 16;
    assert_int_equal(nt_expect_parse("nics=4,nic_rate_Gbps=200", 0, &cli, NULL, 0), NT_OK);
    nt_expect_override(&cls, &cli);
    assert_int_equal(cls.gpus, 8);
    assert_int_equal(cls.nics, 4);
    assert_true(cls.nic_rate_Gbps == 200);
    assert_int_equal(cls.pcie_gen, 5);
    assert_false(nt_expect_is_empty(&cls));
}

static void test_require_parse(void **state)
{
    (void)state;
    unsigned m = 99;
    char err[256];
    assert_int_equal(nt_require_parse("gpu,rdma", &m, err, sizeof(err)), NT_OK);
    assert_int_equal(m, NT_REQUIRE_GPU | NT_REQUIRE_RDMA);
    assert_int_equal(nt_require_parse("RDMA", &m, err, sizeof(err)), NT_OK);
    assert_int_equal(m, NT_REQUIRE_RDMA);
    assert_int_equal(nt_require_parse("gpus", &m, err, sizeof(err)), NT_OK);
    assert_int_equal(m, NT_REQUIRE_GPU);
    m = 99;
    assert_int_equal(nt_require_parse("gpu,nvme", &m, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "--require: unknown part 'nvme' (valid parts: gpu, rdma)");
    assert_int_equal(m, 99);
    assert_int_equal(nt_require_parse("gpu,", &m, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "--require: unknown part '' (valid parts: gpu, rdma)");
    assert_int_equal(nt_require_parse("", &m, err, sizeof(err)), NT_ERR_INVALID);
    assert_string_equal(err, "--require: empty; valid parts: gpu, rdma");
}

/* ---- the inventory check ----------------------------------------------------------------- */

static const cJSON *check_for(const cJSON *checks, const char *target)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, checks) {
        const cJSON *t = cJSON_GetObjectItem(c, "target");
        if (cJSON_IsString(t) && strcmp(t->valuestring, target) == 0)
            return c;
    }
    return NULL;
}

static void assert_check(const cJSON *checks, const char *target, const char *verdict,
                         double observed, double expected, const char *message)
{
    const cJSON *c = check_for(checks, target);
    assert_non_null(c);
    assert_string_equal(cJSON_GetObjectItem(c, "name")->valuestring, "inventory");
    assert_string_equal(cJSON_GetObjectItem(c, "verdict")->valuestring, verdict);
    assert_string_equal(cJSON_GetObjectItem(c, "message")->valuestring, message);
    const cJSON *o = cJSON_GetObjectItem(c, "observed");
    if (isnan(observed))
        assert_null(o);
    else
        assert_true(o->valuedouble == observed);
    assert_true(cJSON_GetObjectItem(c, "expected")->valuedouble == expected);
}

static void test_inventory_check(void **state)
{
    (void)state;
    nt_expect_t e;
    nt_expect_init(&e);
    assert_int_equal(nt_expect_parse("gpus=8,nics=8,nic_rate_Gbps=400", 0, &e, NULL, 0), NT_OK);

    cJSON *checks = cJSON_CreateArray();
    /* a GPU fell off the bus, two ports down, the slowest port at HDR */
    assert_int_equal(nt_inventory_check(&e, 0, 7, 6, 0, 200, 0, "gpu1", checks), NT_OK);
    assert_int_equal(cJSON_GetArraySize(checks), 3);
    assert_check(checks, "gpus", "fail", 7, 8, "7 GPUs found, 8 expected");
    assert_check(checks, "rdma_ports", "fail", 6, 8, "6 ACTIVE RDMA ports, 8 expected");
    assert_check(checks, "nic_rate", "fail", 200, 400,
                 "slowest ACTIVE RDMA port runs 200 Gb/s, 400 Gb/s expected");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(checks, 0), "host")->valuestring,
                        "gpu1");
    cJSON_Delete(checks);

    /* healthy */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_inventory_check(&e, 0, 8, 8, 0, 400, 0, "gpu1", checks), NT_OK);
    assert_check(checks, "gpus", "pass", 8, 8, "8 GPUs found, 8 expected");
    assert_check(checks, "rdma_ports", "pass", 8, 8, "8 ACTIVE RDMA ports, 8 expected");
    assert_check(checks, "nic_rate", "pass", 400, 400,
                 "slowest ACTIVE RDMA port runs 400 Gb/s, 400 Gb/s expected");
    cJSON_Delete(checks);

    /* no ACTIVE port at all with a rate expected */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_inventory_check(&e, 0, 8, 0, 0, NAN, 0, "gpu1", checks), NT_OK);
    assert_check(checks, "rdma_ports", "fail", 0, 8, "0 ACTIVE RDMA ports, 8 expected");
    assert_check(checks, "nic_rate", "fail", NAN, 400, "no ACTIVE RDMA port, 400 Gb/s expected");
    cJSON_Delete(checks);

    /* nothing stated, nothing required: no check, whatever was found (the caller skips) */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_inventory_check(NULL, 0, 0, 0, 0, NAN, 0, "h", checks), NT_OK);
    nt_expect_init(&e);
    assert_int_equal(nt_inventory_check(&e, 0, 4, 1, 0, 100, 0, "h", checks), NT_OK);
    assert_int_equal(cJSON_GetArraySize(checks), 0);
    cJSON_Delete(checks);

    /* --require without numbers */
    checks = cJSON_CreateArray();
    assert_int_equal(
        nt_inventory_check(&e, NT_REQUIRE_GPU | NT_REQUIRE_RDMA, 0, 2, 0, 100, 0, "h", checks),
        NT_OK);
    assert_int_equal(cJSON_GetArraySize(checks), 2);
    assert_check(checks, "gpus", "fail", 0, 1, "0 GPUs found, at least 1 required");
    assert_check(checks, "rdma_ports", "pass", 2, 1, "2 ACTIVE RDMA ports, at least 1 required");
    cJSON_Delete(checks);
    checks = cJSON_CreateArray();
    assert_int_equal(nt_inventory_check(&e, NT_REQUIRE_RDMA, 1, 0, 0, NAN, 0, "h", checks), NT_OK);
    assert_int_equal(cJSON_GetArraySize(checks), 1);
    assert_check(checks, "rdma_ports", "fail", 0, 1, "0 ACTIVE RDMA ports, at least 1 required");
    cJSON_Delete(checks);

    assert_int_equal(nt_inventory_check(&e, 0, 0, 0, 0, NAN, 0, "h", NULL), NT_ERR_INVALID);
}

static void test_expect_pcie(void **state)
{
    (void)state;
    nt_expect_t e;
    char msg[160];
    nt_expect_init(&e);
    assert_int_equal(nt_expect_pcie_judge(&e, "0000:18:00.0", "GPU 0", 5, 16, 16, msg, sizeof(msg)),
                     NT_SKIPPED);
    assert_int_equal(nt_expect_parse("pcie=gen5x16", 0, &e, NULL, 0), NT_OK);
    assert_int_equal(nt_expect_pcie_judge(&e, "0000:18:00.0", "GPU 0", 5, 16, 16, msg, sizeof(msg)),
                     NT_PASS);
    assert_int_equal(nt_expect_pcie_judge(&e, "0000:18:00.0", "GPU 0", 4, 16, 16, msg, sizeof(msg)),
                     NT_FAIL);
    assert_string_equal(msg, "0000:18:00.0 (GPU 0) capable of gen4x16, gen5x16 expected");
    assert_int_equal(nt_expect_pcie_judge(&e, "0000:18:00.0", "GPU 0", 5, 16, 8, msg, sizeof(msg)),
                     NT_FAIL);
    assert_string_equal(msg, "0000:18:00.0 (GPU 0) runs x8, x16 expected");
    assert_int_equal(nt_expect_pcie_judge(&e, "0000:18:00.0", NULL, 5, 8, 8, msg, sizeof(msg)),
                     NT_FAIL);
    assert_string_equal(msg, "0000:18:00.0 capable of gen5x8, gen5x16 expected");
    assert_int_equal(nt_expect_pcie_judge(&e, "0000:18:00.0", "GPU 0", 0, 0, 0, msg, sizeof(msg)),
                     NT_NOT_JUDGED);
    assert_string_equal(msg, "0000:18:00.0 (GPU 0): PCIe capability unknown, gen5x16 expected: "
                             "not judged");
}

/* Unknown port state and rate (an hwloc XML without rates): not_judged, never a failure. */
static void test_inventory_unknown(void **state)
{
    (void)state;
    nt_expect_t e;
    nt_expect_init(&e);
    assert_int_equal(nt_expect_parse("nics=4,nic_rate_Gbps=200", 0, &e, NULL, 0), NT_OK);
    cJSON *checks = cJSON_CreateArray();
    /* 4 ACTIVE ports, no rate known */
    assert_int_equal(nt_inventory_check(&e, 0, 0, 4, 0, NAN, 4, "vm", checks), NT_OK);
    cJSON *c0 = cJSON_GetArrayItem(checks, 0), *c1 = cJSON_GetArrayItem(checks, 1);
    assert_string_equal(nt_json_get_str(c0, "verdict", ""), "pass");
    assert_string_equal(nt_json_get_str(c1, "target", ""), "nic_rate");
    assert_string_equal(nt_json_get_str(c1, "verdict", ""), "not_judged");
    assert_string_equal(nt_json_get_str(c1, "message", ""),
                        "rate of 4 of the 4 ACTIVE RDMA ports unknown (no rate recorded, e.g. a "
                        "topology file), 200 Gb/s expected: not judged");
    cJSON_Delete(checks);
    /* 2 ACTIVE at 400, 2 without rate: not judged; one known at 100: a failure */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_inventory_check(&e, 0, 0, 4, 0, 400, 2, "vm", checks), NT_OK);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 1), "verdict", ""),
                        "not_judged");
    assert_int_equal(nt_inventory_check(&e, 0, 0, 4, 0, 100, 2, "vm", checks), NT_OK);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 3), "verdict", ""), "fail");
    cJSON_Delete(checks);
    /* 2 ACTIVE and 2 of unknown state, 4 expected: not judged; 1 + 2 unknown: a failure */
    checks = cJSON_CreateArray();
    assert_int_equal(nt_inventory_check(&e, 0, 0, 2, 2, 400, 0, "vm", checks), NT_OK);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 0), "verdict", ""),
                        "not_judged");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 0), "message", ""),
                        "2 ACTIVE RDMA ports and 2 of unknown state, 4 expected: not judged");
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 1), "verdict", ""), "pass");
    assert_int_equal(nt_inventory_check(&e, 0, 0, 1, 2, 400, 0, "vm", checks), NT_OK);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 2), "verdict", ""), "fail");
    /* no ACTIVE port, all of unknown state: the rate is not judged */
    assert_int_equal(nt_inventory_check(&e, 0, 0, 0, 4, NAN, 0, "vm", checks), NT_OK);
    assert_string_equal(nt_json_get_str(cJSON_GetArrayItem(checks, 5), "verdict", ""),
                        "not_judged");
    cJSON_Delete(checks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_inventory_unknown),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_load_good_and_match),
        cmocka_unit_test(test_broken_files),
        cmocka_unit_test(test_parse_rules),
        cmocka_unit_test(test_regex_cost),
        cmocka_unit_test(test_key_limit),
        cmocka_unit_test(test_defaults_round_trip),
        cmocka_unit_test(test_file_round_trip),
        cmocka_unit_test(test_expect_parse),
        cmocka_unit_test(test_expect_override),
        cmocka_unit_test(test_require_parse),
        cmocka_unit_test(test_inventory_check),
        cmocka_unit_test(test_expect_pcie),
    };
    return cmocka_run_group_tests_name("thresholds", tests, NULL, NULL);
}
