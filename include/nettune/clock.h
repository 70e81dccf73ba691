/* Monotonic clocks. Measurements use CLOCK_MONOTONIC (never wall time), and keep raw seconds;
 * conversion to microseconds happens where a figure is shown or written. */
#ifndef NETTUNE_CLOCK_H
#define NETTUNE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* nt_clock_ns - monotonic time in nanoseconds since an arbitrary epoch (CLOCK_MONOTONIC). */
static inline uint64_t nt_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* nt_clock_s - monotonic time in seconds (double, ns resolution) since an arbitrary epoch. */
static inline double nt_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* nt_clock_rfc3339 - the current UTC wall time as "2026-11-29T17:36:24Z" into buf (>= 21 bytes). */
void nt_clock_rfc3339(char *buf, unsigned len);

#endif
