/* The check table against its committed list (tests/unit/data/checks.list): a code cannot
 * disappear or change its check or category unnoticed, and a new row must be listed too. Run
 * from the repository root (test-unit does). */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nettune/checks.h"

#define NT_LIST "tests/unit/data/checks.list"

typedef struct {
    char code[32], check[64], category[16];
} listed_t;

static size_t read_list(listed_t *out, size_t cap)
{
    FILE *f = fopen(NT_LIST, "r");
    char line[256];
    size_t n = 0;

    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        assert_true(n < cap);
        assert_int_equal(sscanf(line, "%31s %63s %15s", out[n].code, out[n].check,
                                out[n].category),
                         3);
        n++;
    }
    fclose(f);
    return n;
}

/* Every listed code is in the table with the same check and category. */
static void test_listed_codes_kept(void **state)
{
    static listed_t l[1024];
    size_t n = read_list(l, 1024);
    (void)state;
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        const nt_check_row_t *r = nt_check_by_code(l[i].code);
        if (!r)
            fail_msg("%s is listed in " NT_LIST " but gone from checks.def (never remove a row)",
                     l[i].code);
        if (strcmp(r->check, l[i].check) != 0)
            fail_msg("%s changed its check from %s to %s", l[i].code, l[i].check, r->check);
        if (strcmp(nt_category_name(r->category), l[i].category) != 0)
            fail_msg("%s changed its category from %s to %s", l[i].code, l[i].category,
                     nt_category_name(r->category));
    }
}

/* Every row of the table is listed, its code well formed and unique, its texts present. */
static void test_rows_listed_and_well_formed(void **state)
{
    static listed_t l[1024];
    static const char *const domains[] = {"INV", "PCIE", "RDMA", "GPU", "NVL", "NET",
                                          "SW",  "CFG",  "NCCL", "JOB", "FAB", "RUN"};
    size_t n = read_list(l, 1024);
    (void)state;
    for (size_t i = 0; i < nt_check_count(); i++) {
        const nt_check_row_t *r = nt_check_at(i);
        const char *dash = strchr(r->code + 3, '-');
        int listed = 0, known = 0;
        assert_non_null(dash);
        for (size_t d = 0; d < sizeof(domains) / sizeof(domains[0]); d++)
            known |= strlen(domains[d]) == (size_t)(dash - r->code - 3) &&
                     strncmp(r->code + 3, domains[d], strlen(domains[d])) == 0;
        if (strncmp(r->code, "NT-", 3) != 0 || !known || strlen(dash) != 4 ||
            !isdigit((unsigned char)dash[1]) || !isdigit((unsigned char)dash[2]) ||
            !isdigit((unsigned char)dash[3]))
            fail_msg("%s is not NT-<DOMAIN>-<NNN>", r->code);
        for (size_t k = 0; k < i; k++)
            if (strcmp(nt_check_at(k)->code, r->code) == 0)
                fail_msg("%s is in checks.def twice", r->code);
        for (size_t k = 0; k < n; k++)
            listed |= strcmp(l[k].code, r->code) == 0;
        if (!listed)
            fail_msg("%s is not in " NT_LIST ": add the new row there too", r->code);
        assert_true(r->check[0] && r->title[0] && r->action[0]);
        assert_true(r->category < NT_CAT_COUNT);
    }
    assert_int_equal(n, nt_check_count());
}

static void test_lookup(void **state)
{
    char a[32];
    (void)state;
    assert_string_equal(nt_check_by_code("NT-PCIE-001")->check, "pcie_link");
    assert_null(nt_check_by_code("NT-PCIE-999"));
    assert_null(nt_check_by_code(NULL));
    assert_string_equal(nt_check_anchor(nt_check_by_code("NT-RDMA-001"), a, sizeof(a)),
                        "nt-rdma-001");
    assert_string_equal(nt_category_name(NT_CAT_COUNT), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listed_codes_kept),
        cmocka_unit_test(test_rows_listed_and_well_formed),
        cmocka_unit_test(test_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
