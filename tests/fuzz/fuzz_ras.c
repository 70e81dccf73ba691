/* libFuzzer target for the ncclras -f json reader (lib/nccl/inspector.c): the input is read
 * through nt_jobreader (a RAS document is told by its second line and read rank object by rank
 * object), and parsed whole by nt_ras_rank_parse as one rank object. Any crash, leak or UB is a
 * bug. */
#include <stdint.h>
#include <stdio.h>

#include "fuzz_jobreader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    nt_jobrec_t rec;
    (void)nt_ras_rank_parse((const char *)data, size, "0x1", 4, 1, &rec);
    (void)nt_fuzz_jobreader_drain(data, size);
    return 0;
}
