/* Units on command lines (include/nettune/units.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nettune/units.h"

nt_status_t nt_parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;
    unsigned long long mul = 1;

    if (!s || !isdigit((unsigned char)*s))
        return NT_ERR_INVALID;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return NT_ERR_INVALID;
    switch (toupper((unsigned char)*end)) {
    case '\0':
        break;
    case 'K':
        mul = 1ull << 10;
        end++;
        break;
    case 'M':
        mul = 1ull << 20;
        end++;
        break;
    case 'G':
        mul = 1ull << 30;
        end++;
        break;
    default:
        return NT_ERR_INVALID;
    }
    if (strcasecmp(end, "iB") == 0 || strcasecmp(end, "B") == 0)
        end += strlen(end);
    if (*end || v > NT_SIZE_MAX_BYTES / mul)
        return NT_ERR_INVALID;
    *out = (size_t)(v * mul);
    return NT_OK;
}
