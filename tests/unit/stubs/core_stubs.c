/* THROWAWAY stubs of the lead's lib/{status,log,stats,report}.c, only so that the verdict
 * tests link before those land on main. Delete this folder once `git merge main` brings them.
 * Only the functions the verdict modules call are here. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "nettune/log.h"
#include "nettune/report.h"
#include "nettune/stats.h"

void nt_log(nt_log_level_t level, nt_log_subsys_t subsys, const char *fmt, ...)
{
    va_list ap;
    (void)subsys;
    if (level > NT_LOG_WARN)
        return;
    va_start(ap, fmt);
    fputs("nettune stub: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double nt_stats_median(double *values, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(values, n, sizeof(double), cmp_double);
    return values[(n + 1) / 2 - 1]; /* nearest rank ceil(n/2): lower middle for even n */
}

const char *nt_verdict_string(nt_verdict_t v)
{
    static const char *const s[] = {"pass", "warn", "fail", "skipped"};
    return (unsigned)v < 4 ? s[v] : "?";
}

cJSON *nt_check_create(const char *name, const char *host, const char *target, nt_verdict_t v,
                       double observed, double expected, const char *unit, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return NULL;
    cJSON_AddStringToObject(c, "name", name);
    if (host)
        cJSON_AddStringToObject(c, "host", host);
    if (target)
        cJSON_AddStringToObject(c, "target", target);
    cJSON_AddStringToObject(c, "verdict", nt_verdict_string(v));
    if (!isnan(observed))
        cJSON_AddNumberToObject(c, "observed", observed);
    if (!isnan(expected))
        cJSON_AddNumberToObject(c, "expected", expected);
    if (unit)
        cJSON_AddStringToObject(c, "unit", unit);
    cJSON_AddStringToObject(c, "message", msg);
    return c;
}
