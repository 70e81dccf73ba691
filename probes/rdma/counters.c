/* Port counters: widths (IBTA PortCounters), which ones are errors, and deltas that know
 * about saturation. */
#include <string.h>

#include "rdma.h"

static const struct {
    const char *name;
    unsigned width;
    int error;
} nt_ib_counters[] = {
    {"symbol_error", 16, 1},
    {"link_error_recovery", 8, 1},
    {"link_downed", 8, 1},
    {"port_rcv_errors", 16, 1},
    {"port_rcv_remote_physical_errors", 16, 1},
    {"port_rcv_switch_relay_errors", 16, 1},
    {"port_xmit_discards", 16, 1},
    {"port_xmit_constraint_errors", 8, 1},
    {"port_rcv_constraint_errors", 8, 1},
    {"local_link_integrity_errors", 4, 1},
    {"excessive_buffer_overrun_errors", 4, 1},
    {"VL15_dropped", 16, 1},
    {"port_xmit_wait", 32, 0},
    {"port_xmit_data", 64, 0},
    {"port_rcv_data", 64, 0},
    {"port_xmit_packets", 64, 0},
    {"port_rcv_packets", 64, 0},
    {"unicast_xmit_packets", 64, 0},
    {"unicast_rcv_packets", 64, 0},
    {"multicast_xmit_packets", 64, 0},
    {"multicast_rcv_packets", 64, 0},
};

/* hw_counters whose growth means failed operations (mlx5 RoCE names, then rxe's) ... */
static const char *const nt_hw_errors[] = {
    "req_cqe_error", "resp_cqe_error", "req_remote_access_errors", "req_remote_invalid_request",
    "resp_local_length_error", "resp_remote_access_errors", "rx_icrc_encapsulated",
    "retry_exceeded_err", "retry_rnr_exceeded_err", "send_err", "link_downed", NULL};
/* ... and those that count recovered loss: retransmissions after a timeout or a sequence gap
 * (the traffic got through, slower: congestion, drops, a flapping link). */
static const char *const nt_hw_retrans[] = {
    "out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "rnr_nak_retry_err",
    "implied_nak_seq_err", "roce_adp_retrans_to", "roce_slow_restart", "out_of_seq_request",
    "rcvd_seq_err", "completer_retry_err", "duplicate_request", NULL};

unsigned nt_counter_width(const char *name, int hw)
{
    if (hw)
        return 64;
    for (size_t i = 0; i < sizeof(nt_ib_counters) / sizeof(nt_ib_counters[0]); i++)
        if (strcmp(nt_ib_counters[i].name, name) == 0)
            return nt_ib_counters[i].width;
    return 64;
}

int nt_counter_is_error(const char *name, int hw)
{
    if (hw) {
        for (int i = 0; nt_hw_errors[i]; i++)
            if (strcmp(nt_hw_errors[i], name) == 0)
                return NT_COUNTER_FAULT;
        for (int i = 0; nt_hw_retrans[i]; i++)
            if (strcmp(nt_hw_retrans[i], name) == 0)
                return NT_COUNTER_RETRANS;
        return 0;
    }
    for (size_t i = 0; i < sizeof(nt_ib_counters) / sizeof(nt_ib_counters[0]); i++)
        if (strcmp(nt_ib_counters[i].name, name) == 0)
            return nt_ib_counters[i].error;
    return 0;
}

nt_counter_change_t nt_counter_delta(unsigned long long before, unsigned long long after,
                                     unsigned width_bits, unsigned long long *delta)
{
    unsigned long long max = width_bits >= 64 ? ~0ull : (1ull << width_bits) - 1;
    *delta = 0;
    if (before >= max || after >= max)
        return NT_COUNTER_SATURATED;
    if (after < before)
        return NT_COUNTER_RESET;
    *delta = after - before;
    return *delta ? NT_COUNTER_GREW : NT_COUNTER_SAME;
}

const char *nt_counter_change_string(nt_counter_change_t c)
{
    switch (c) {
    case NT_COUNTER_SAME: return "same";
    case NT_COUNTER_GREW: return "grew";
    case NT_COUNTER_SATURATED: return "saturated";
    case NT_COUNTER_RESET: return "reset";
    default: return "unknown";
    }
}
