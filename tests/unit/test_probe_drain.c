/* The Slurm drain plan of nettune probe --drain / --resume-passing (probes/drain.c) on
 * synthetic reports and sinfo outputs: which nodes are drained with which reason, which are
 * resumed, names mapped from host names, administrators' drains left alone, the shell lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "drain.h"

/* sinfo -h -N -o '%N|%n|%T|%E' of 4 nodes sn1..sn4 on hosts h1..h4 (sn4 twice: 2 partitions). */
static const char *const SINFO = "sn1|h1|idle|none\n"
                                 "sn2|h2|drained|nettune:bw 0.04/0.6GB/s median | of its links\n"
                                 "sn3|h3|drained|admin: replacing a fan\n"
                                 "sn4|h4|draining|nettune:gpus 0/8 0 GPUs found, 8 expected\n"
                                 "sn4|h4|draining|nettune:gpus 0/8 0 GPUs found, 8 expected\n"
                                 "garbage line\n";

/* A report of hosts h1..h4, failed: "host=reason;..." , completed, with links among all hosts
 * when links is set, and a passing gpus check on each host. */
static cJSON *report(const char *failed, int completed, int links)
{
    cJSON *r = cJSON_CreateObject(), *s = cJSON_AddObjectToObject(r, "summary");
    cJSON *fa = cJSON_AddArrayToObject(s, "failed_nodes");
    cJSON *nodes = cJSON_AddArrayToObject(r, "nodes"), *l = cJSON_AddArrayToObject(r, "links");
    cJSON *checks = cJSON_AddArrayToObject(r, "checks");
    char buf[512], *save = NULL;

    cJSON_AddBoolToObject(s, "completed", completed);
    for (int i = 1; i <= 4; i++) {
        char h[8];
        cJSON *n = cJSON_CreateObject(), *c = cJSON_CreateObject();
        snprintf(h, sizeof(h), "h%d", i);
        cJSON_AddStringToObject(n, "hostname", h);
        cJSON_AddItemToArray(nodes, n);
        cJSON_AddStringToObject(c, "name", "inventory");
        cJSON_AddStringToObject(c, "target", "gpus");
        cJSON_AddStringToObject(c, "host", h);
        cJSON_AddStringToObject(c, "verdict", "pass");
        cJSON_AddItemToArray(checks, c);
        if (links) {
            cJSON *k = cJSON_CreateObject();
            cJSON_AddStringToObject(cJSON_AddObjectToObject(k, "src"), "host", h);
            cJSON_AddStringToObject(cJSON_AddObjectToObject(k, "dst"), "host",
                                    i == 4 ? "h1" : "h1");
            cJSON_AddItemToArray(l, k);
        }
    }
    snprintf(buf, sizeof(buf), "%s", failed);
    for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save)) {
        cJSON *f = cJSON_CreateObject();
        char *eq = strchr(t, '=');
        *eq = '\0';
        cJSON_AddStringToObject(f, "host", t);
        cJSON_AddStringToObject(f, "reason", eq + 1);
        cJSON_AddItemToArray(fa, f);
    }
    return r;
}

static void test_parse_sinfo(void **state)
{
    nt_slurm_node_t n[8];
    (void)state;
    assert_int_equal(nt_drain_parse_sinfo(SINFO, n, 8), 4);
    assert_string_equal(n[1].name, "sn2");
    assert_string_equal(n[1].host, "h2");
    assert_string_equal(n[1].state, "drained");
    /* the reason is the rest of the line, '|' included */
    assert_string_equal(n[1].reason, "nettune:bw 0.04/0.6GB/s median | of its links");
    assert_string_equal(n[3].state, "draining");
    assert_int_equal(nt_drain_parse_sinfo(SINFO, n, 2), 2);
    assert_int_equal(nt_drain_parse_sinfo("", n, 8), 0);
}

static void test_drain_failed_mapped(void **state)
{
    nt_slurm_node_t n[8];
    nt_drain_action_t a[8];
    size_t nn = nt_drain_parse_sinfo(SINFO, n, 8), na = 99;
    cJSON *r = report("h1=nettune:lat 900/50us e.g. h1 link\nsecond line", 1, 1);
    (void)state;
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 0, a, 8, &na), NT_OK);
    assert_int_equal(na, 1);
    assert_int_equal(a[0].kind, NT_DRAIN_DO_DRAIN);
    assert_string_equal(a[0].node, "sn1"); /* the Slurm name, not the host name */
    assert_string_equal(a[0].reason, "nettune:lat 900/50us e.g. h1 link second line");
    cJSON_Delete(r);
}

/* A failed node's code goes after the prefix (sinfo -R shows what to do first), and a node
 * drained with a coded reason is resumed by the same rule as one drained before the codes. */
static void test_drain_reason_carries_the_code(void **state)
{
    static const char sinfo[] = "sn1|h1|drained|nettune:NT-INV-001 gpus 0/8 0 GPUs found\n"
                                "sn2|h2|idle|none\n";
    nt_slurm_node_t n[8];
    nt_drain_action_t a[8];
    size_t nn = nt_drain_parse_sinfo(sinfo, n, 8), na = 99;
    cJSON *r = report("h2=nettune:bw 0.82/2.77GB/s median of its mpi 1 MiB links", 1, 1);
    cJSON *f = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "summary"),
                                         "failed_nodes"),
        0);
    (void)state;
    cJSON_AddStringToObject(f, "code", "NT-NET-001");
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 1, a, 8, &na), NT_OK);
    assert_int_equal(na, 2);
    assert_string_equal(a[0].node, "sn2");
    assert_string_equal(a[0].reason,
                        "nettune:NT-NET-001 bw 0.82/2.77GB/s median of its mpi 1 MiB links");
    assert_true(strlen(a[0].reason) < NT_DRAIN_REASON_MAX);
    /* sn1's gpus check passes in this report: resumed though its reason has a code */
    assert_int_equal(a[1].kind, NT_DRAIN_DO_RESUME);
    assert_string_equal(a[1].node, "sn1");
    cJSON_Delete(r);
}

static void test_admin_drain_left_alone(void **state)
{
    nt_slurm_node_t n[8];
    nt_drain_action_t a[8];
    size_t nn = nt_drain_parse_sinfo(SINFO, n, 8), na = 99;
    /* h3 is drained by an administrator: not overwritten; h2 (ours) gets the new reason */
    cJSON *r = report("h3=nettune:bw 1/2GB/s x;h2=nettune:bw 3/4GB/s y", 1, 1);
    (void)state;
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 1, a, 8, &na), NT_OK);
    assert_int_equal(na, 2);
    assert_string_equal(a[0].node, "sn2");
    assert_string_equal(a[0].reason, "nettune:bw 3/4GB/s y");
    /* sn4 (ours, gpus check re-made and passing) is resumed; sn3 (admin) never */
    assert_int_equal(a[1].kind, NT_DRAIN_DO_RESUME);
    assert_string_equal(a[1].node, "sn4");
    cJSON_Delete(r);
}

static void test_resume_rules(void **state)
{
    nt_slurm_node_t n[8];
    nt_drain_action_t a[8];
    size_t nn = nt_drain_parse_sinfo(SINFO, n, 8), na = 99;
    cJSON *r = report("", 1, 1);
    (void)state;
    /* completed, links of h2 measured, gpus of h4 checked: both resumed, sn3 (admin) not */
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 1, a, 8, &na), NT_OK);
    assert_int_equal(na, 2);
    assert_string_equal(a[0].node, "sn2");
    assert_string_equal(a[1].node, "sn4");
    /* without --resume-passing: nothing */
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 0, a, 8, &na), NT_OK);
    assert_int_equal(na, 0);
    cJSON_Delete(r);
    /* a --local style report (no links): sn2, drained for its links, stays drained */
    r = report("", 1, 0);
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 1, a, 8, &na), NT_OK);
    assert_int_equal(na, 1);
    assert_string_equal(a[0].node, "sn4");
    cJSON_Delete(r);
    /* an incomplete run resumes nothing */
    r = report("", 0, 1);
    assert_int_equal(nt_drain_plan(r, n, nn, NULL, 1, a, 8, &na), NT_OK);
    assert_int_equal(na, 0);
    /* no sinfo: nothing is known about reasons, nothing resumed */
    assert_int_equal(nt_drain_plan(r, NULL, 0, NULL, 1, a, 8, &na), NT_OK);
    assert_int_equal(na, 0);
    cJSON_Delete(r);
}

static void test_local_node_and_no_sinfo(void **state)
{
    nt_drain_action_t a[8];
    size_t na = 99;
    cJSON *r = report("h3=nettune:gpus 0/8 x", 1, 0);
    (void)state;
    /* --local in a prolog: the node is $SLURMD_NODENAME; without sinfo the host name stays */
    assert_int_equal(nt_drain_plan(r, NULL, 0, "node-17", 0, a, 8, &na), NT_OK);
    assert_int_equal(na, 1);
    assert_string_equal(a[0].node, "node-17");
    assert_int_equal(nt_drain_plan(r, NULL, 0, NULL, 0, a, 8, &na), NT_OK);
    assert_string_equal(a[0].node, "h3");
    /* more actions than room: an error, not a silent cut */
    assert_int_equal(nt_drain_plan(r, NULL, 0, NULL, 0, a, 0, &na), NT_ERR_INVALID);
    cJSON_Delete(r);
    /* not a report */
    r = cJSON_CreateObject();
    assert_int_equal(nt_drain_plan(r, NULL, 0, NULL, 0, a, 8, &na), NT_ERR_INVALID);
    cJSON_Delete(r);
}

static void test_format(void **state)
{
    nt_drain_action_t a = {
        .kind = NT_DRAIN_DO_DRAIN, .node = "sn2", .reason = "nettune:bw 1/2GB/s it's slow"};
    char buf[256];
    (void)state;
    assert_int_equal(nt_drain_format(&a, buf, sizeof(buf)), NT_OK);
    assert_string_equal(
        buf, "scontrol update NodeName=sn2 State=DRAIN Reason='nettune:bw 1/2GB/s it'\\''s slow'");
    assert_int_equal(nt_drain_format(&a, buf, 20), NT_ERR_INVALID);
    a.kind = NT_DRAIN_DO_RESUME;
    assert_int_equal(nt_drain_format(&a, buf, sizeof(buf)), NT_OK);
    assert_string_equal(buf, "scontrol update NodeName=sn2 State=RESUME");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_sinfo),
        cmocka_unit_test(test_drain_failed_mapped),
        cmocka_unit_test(test_drain_reason_carries_the_code),
        cmocka_unit_test(test_admin_drain_left_alone),
        cmocka_unit_test(test_resume_rules),
        cmocka_unit_test(test_local_node_and_no_sinfo),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
