/* Wall-clock formatting; the monotonic clocks are inline in clock.h. */
#include <stdio.h>
#include <time.h>

#include "nettune/clock.h"

void nt_clock_rfc3339(char *buf, unsigned len)
{
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
