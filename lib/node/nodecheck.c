/* The one filler of a node check's verdict (include/nettune/nodecheck.h). */
#include <stdarg.h>
#include <stdio.h>

#include "nettune/nodecheck.h"

void nt_nodecheck_set(nt_nodecheck_t *out, const char *check, const char *code, nt_verdict_t v,
                      const char *target, const char *observed, const char *expected,
                      const char *fmt, ...)
{
    va_list ap;

    out->check = check;
    out->code = code;
    out->verdict = v;
    snprintf(out->target, sizeof(out->target), "%s", target ? target : "");
    snprintf(out->observed, sizeof(out->observed), "%s", observed ? observed : "");
    snprintf(out->expected, sizeof(out->expected), "%s", expected ? expected : "");
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof(out->message), fmt, ap);
    va_end(ap);
}
