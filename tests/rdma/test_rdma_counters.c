/* Counter widths, deltas and saturation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "rdma.h"

static void test_widths(void **state)
{
    (void)state;
    assert_int_equal(nt_counter_width("symbol_error", 0), 16);
    assert_int_equal(nt_counter_width("link_error_recovery", 0), 8);
    assert_int_equal(nt_counter_width("link_downed", 0), 8);
    assert_int_equal(nt_counter_width("port_rcv_errors", 0), 16);
    assert_int_equal(nt_counter_width("port_xmit_discards", 0), 16);
    assert_int_equal(nt_counter_width("local_link_integrity_errors", 0), 4);
    assert_int_equal(nt_counter_width("excessive_buffer_overrun_errors", 0), 4);
    assert_int_equal(nt_counter_width("port_xmit_wait", 0), 32);
    assert_int_equal(nt_counter_width("port_xmit_data", 0), 64);
    assert_int_equal(nt_counter_width("out_of_sequence", 1), 64);
    assert_int_equal(nt_counter_width("something_new", 0), 64);
    assert_true(nt_counter_is_error("symbol_error", 0));
    assert_false(nt_counter_is_error("port_xmit_data", 0));
    assert_int_equal(nt_counter_is_error("symbol_error", 0), NT_COUNTER_FAULT);
    assert_int_equal(nt_counter_is_error("out_of_sequence", 1), NT_COUNTER_RETRANS);
    assert_int_equal(nt_counter_is_error("local_ack_timeout_err", 1), NT_COUNTER_RETRANS);
    assert_int_equal(nt_counter_is_error("completer_retry_err", 1), NT_COUNTER_RETRANS);
    assert_int_equal(nt_counter_is_error("retry_exceeded_err", 1), NT_COUNTER_FAULT);
    assert_int_equal(nt_counter_is_error("req_cqe_error", 1), NT_COUNTER_FAULT);
    assert_false(nt_counter_is_error("np_cnp_sent", 1));
    assert_false(nt_counter_is_error("sent_pkts", 1));
}

static void test_deltas(void **state)
{
    unsigned long long d = 99;
    (void)state;
    assert_int_equal(nt_counter_delta(5, 5, 16, &d), NT_COUNTER_SAME);
    assert_int_equal(d, 0);
    assert_int_equal(nt_counter_delta(5, 9, 16, &d), NT_COUNTER_GREW);
    assert_int_equal(d, 4);
    /* saturated after: grew into the ceiling, the real growth is unknown */
    assert_int_equal(nt_counter_delta(250, 255, 8, &d), NT_COUNTER_SATURATED);
    assert_int_equal(d, 0);
    /* saturated before and after: "no growth" must not be reported */
    assert_int_equal(nt_counter_delta(65535, 65535, 16, &d), NT_COUNTER_SATURATED);
    assert_int_equal(nt_counter_delta(15, 15, 4, &d), NT_COUNTER_SATURATED);
    assert_int_equal(nt_counter_delta(14, 14, 4, &d), NT_COUNTER_SAME);
    /* cleared during the run */
    assert_int_equal(nt_counter_delta(100, 3, 16, &d), NT_COUNTER_RESET);
    /* 64-bit counters do not saturate in practice */
    assert_int_equal(nt_counter_delta(1ull << 40, (1ull << 40) + 7, 64, &d), NT_COUNTER_GREW);
    assert_int_equal(d, 7);
    assert_string_equal(nt_counter_change_string(NT_COUNTER_SATURATED), "saturated");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_widths), cmocka_unit_test(test_deltas)};
    return cmocka_run_group_tests_name("rdma_counters", tests, NULL, NULL);
}
