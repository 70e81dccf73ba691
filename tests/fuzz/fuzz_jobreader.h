/* Shared by the fuzz targets of the job-telemetry readers (include/nettune/jobrec.h): the input
 * read to its end through nt_jobreader, as a file of that format would be. */
#ifndef NT_FUZZ_JOBREADER_H
#define NT_FUZZ_JOBREADER_H

#include <stdint.h>
#include <stdio.h>

#include "nettune/jobrec.h"

/* nt_fuzz_jobreader_drain - every record of `data`; returns the number read. */
static inline unsigned long nt_fuzz_jobreader_drain(const uint8_t *data, size_t size)
{
    FILE *fp = fmemopen((void *)data, size, "r");
    if (!fp)
        return 0;
    nt_jobreader_t *r = nt_jobreader_open_stream(fp);
    nt_jobrec_t rec;
    unsigned long n = 0;
    while (r && nt_jobreader_next(r, &rec) > 0)
        n++;
    nt_jobreader_close(r);
    fclose(fp);
    return n;
}

#endif
