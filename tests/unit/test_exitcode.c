/* Exit-code precedence (README.md "Exit codes"): 2, then 1, then 3, then 0; warnings exit 0
 * unless --strict, then 1. The table lists all 32 combinations of the five inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nettune/exitcode.h"

struct row {
    int usage, fail, stopped, warn, strict, expect;
};

/* usage fail stopped warn strict -> code */
static const struct row table[32] = {
    {0, 0, 0, 0, 0, 0},
    {0, 0, 0, 0, 1, 0},
    {0, 0, 0, 1, 0, 0},
    {0, 0, 0, 1, 1, 1},
    {0, 0, 1, 0, 0, 3},
    {0, 0, 1, 0, 1, 3},
    {0, 0, 1, 1, 0, 3},
    {0, 0, 1, 1, 1, 1},
    {0, 1, 0, 0, 0, 1},
    {0, 1, 0, 0, 1, 1},
    {0, 1, 0, 1, 0, 1},
    {0, 1, 0, 1, 1, 1},
    {0, 1, 1, 0, 0, 1},
    {0, 1, 1, 0, 1, 1},
    {0, 1, 1, 1, 0, 1},
    {0, 1, 1, 1, 1, 1},
    {1, 0, 0, 0, 0, 2},
    {1, 0, 0, 0, 1, 2},
    {1, 0, 0, 1, 0, 2},
    {1, 0, 0, 1, 1, 2},
    {1, 0, 1, 0, 0, 2},
    {1, 0, 1, 0, 1, 2},
    {1, 0, 1, 1, 0, 2},
    {1, 0, 1, 1, 1, 2},
    {1, 1, 0, 0, 0, 2},
    {1, 1, 0, 0, 1, 2},
    {1, 1, 0, 1, 0, 2},
    {1, 1, 0, 1, 1, 2},
    {1, 1, 1, 0, 0, 2},
    {1, 1, 1, 0, 1, 2},
    {1, 1, 1, 1, 0, 2},
    {1, 1, 1, 1, 1, 2},
};

static void test_table_exhaustive(void **state)
{
    (void)state;
    for (size_t i = 0; i < 32; i++) {
        const struct row *r = &table[i];
        int got = nt_exit_code(r->usage, r->fail, r->stopped, r->warn, r->strict);
        if (got != r->expect)
            print_error("row %zu: usage=%d fail=%d stopped=%d warn=%d strict=%d\n", i, r->usage,
                        r->fail, r->stopped, r->warn, r->strict);
        assert_int_equal(got, r->expect);
    }
}

static void test_named_cases(void **state)
{
    (void)state;
    assert_int_equal(NT_EXIT_OK, 0);
    assert_int_equal(NT_EXIT_FAIL, 1);
    assert_int_equal(NT_EXIT_USAGE, 2);
    assert_int_equal(NT_EXIT_INCOMPLETE, 3);
    /* healthy */
    assert_int_equal(nt_exit_code(0, 0, 0, 0, 0), NT_EXIT_OK);
    /* warnings alone exit 0 ... */
    assert_int_equal(nt_exit_code(0, 0, 0, 1, 0), NT_EXIT_OK);
    /* ... unless --strict */
    assert_int_equal(nt_exit_code(0, 0, 0, 1, 1), NT_EXIT_FAIL);
    /* a run stopped early that already found a failure exits 1 */
    assert_int_equal(nt_exit_code(0, 1, 1, 0, 0), NT_EXIT_FAIL);
    /* stopped early, nothing failed */
    assert_int_equal(nt_exit_code(0, 0, 1, 1, 0), NT_EXIT_INCOMPLETE);
    /* usage beats everything */
    assert_int_equal(nt_exit_code(1, 1, 1, 1, 1), NT_EXIT_USAGE);
    /* any non-zero value is true */
    assert_int_equal(nt_exit_code(0, 7, 0, 0, 0), NT_EXIT_FAIL);
    assert_int_equal(nt_exit_code(0, 0, -1, 0, 0), NT_EXIT_INCOMPLETE);
}

static void test_strings(void **state)
{
    (void)state;
    assert_string_equal(nt_exit_code_string(0), "ok");
    assert_string_equal(nt_exit_code_string(1), "fail");
    assert_string_equal(nt_exit_code_string(2), "usage");
    assert_string_equal(nt_exit_code_string(3), "incomplete");
    assert_string_equal(nt_exit_code_string(4), "unknown");
    assert_string_equal(nt_exit_code_string(-1), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_exhaustive),
        cmocka_unit_test(test_named_cases),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests_name("exitcode", tests, NULL, NULL);
}
