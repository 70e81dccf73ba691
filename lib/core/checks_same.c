/* The pairs of check-table rows that describe one fact (include/nettune/checks_same.def). */
#include <stdio.h>
#include <string.h>

#include "nettune/checks.h"

typedef struct nt_check_same {
    const char *cause, *probe;
} nt_check_same_t;

static const nt_check_same_t nt_check_same_rows[] = {
#define NT_CHECK_SAME(cause, probe) {cause, probe},
#include "nettune/checks_same.def"
#undef NT_CHECK_SAME
};

#define NT_CHECK_SAME_N (sizeof(nt_check_same_rows) / sizeof(nt_check_same_rows[0]))

size_t nt_check_same_count(void)
{
    return NT_CHECK_SAME_N;
}

int nt_check_same_at(size_t i, const char **cause, const char **probe)
{
    if (i >= NT_CHECK_SAME_N)
        return 0;
    *cause = nt_check_same_rows[i].cause;
    *probe = nt_check_same_rows[i].probe;
    return 1;
}

size_t nt_check_probe_codes(const char *cause, char *buf, size_t len)
{
    size_t n = 0, used = 0;

    if (len)
        buf[0] = '\0';
    for (size_t i = 0; cause && i < NT_CHECK_SAME_N; i++) {
        if (strcmp(nt_check_same_rows[i].cause, cause) != 0)
            continue;
        int w = snprintf(buf + used, len > used ? len - used : 0, "%s%s", n ? ", " : "",
                         nt_check_same_rows[i].probe);
        if (w > 0 && used + (size_t)w < len)
            used += (size_t)w;
        n++;
    }
    return n;
}
