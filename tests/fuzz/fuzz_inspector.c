/* libFuzzer target for the NCCL Inspector JSON reader (lib/nccl/inspector.c): the input is read
 * as an Inspector log through nt_jobreader (the bounded line reader, records assembled across
 * lines and pieces of long lines) and every record is filed by the alignment
 * (lib/nccl/jobalign.c), whose calls are then asked their spread and median busbw. Each record is
 * also parsed alone by nt_inspector_parse. Any crash, leak or UB is a bug. */
#include <stdint.h>
#include <stdio.h>

#include "nettune/jobrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    nt_jobrec_t rec;
    (void)nt_inspector_parse((const char *)data, size, &rec);
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp)
        return 0;
    nt_jobreader_t *r = nt_jobreader_open_stream(fp);
    nt_jobalign_t *a = nt_jobalign_create(8, 4096);
    while (r && a && nt_jobreader_next(r, &rec) > 0)
        (void)nt_jobalign_add(a, &rec);
    for (size_t i = 0; a && i < nt_jobalign_ncomms(a); i++) {
        const nt_jobcomm_t *c = nt_jobalign_comm(a, i);
        for (uint64_t s = c->max_seq >= 8 ? c->max_seq - 7 : 0; s <= c->max_seq; s++) {
            const nt_jobcall_t *k = nt_jobcomm_call(c, s);
            double mn, mx;
            int arg;
            if (k && nt_jobcall_spread(c, k, &mn, &mx, &arg) > 0)
                (void)nt_jobcall_median_busbw(c, k);
        }
    }
    nt_jobalign_destroy(a);
    nt_jobreader_close(r);
    fclose(fp);
    return 0;
}
