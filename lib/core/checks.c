/* The check table (include/nettune/checks.h): the rows of checks.def, looked up by code. */
#include "nettune/checks.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static const nt_check_row_t nt_check_rows[] = {
#define NT_CHECK_ROW(code, check, cat, title, action) {code, check, cat, title, action},
#include "nettune/checks.def"
#undef NT_CHECK_ROW
};

static const char *const nt_category_names[NT_CAT_COUNT] = {
    [NT_CAT_DRAIN] = "drain", [NT_CAT_RESET] = "reset", [NT_CAT_CONFIG] = "config",
    [NT_CAT_MONITOR] = "monitor", [NT_CAT_INFO] = "info",
};

const char *nt_category_name(nt_category_t c)
{
    if ((unsigned)c >= NT_CAT_COUNT)
        return "unknown";
    return nt_category_names[c];
}

size_t nt_check_count(void)
{
    return sizeof(nt_check_rows) / sizeof(nt_check_rows[0]);
}

const nt_check_row_t *nt_check_at(size_t i)
{
    return i < nt_check_count() ? &nt_check_rows[i] : NULL;
}

const nt_check_row_t *nt_check_by_code(const char *code)
{
    /* A linear scan: the table has a few hundred rows and lookups happen once per verdict. */
    for (size_t i = 0; code && i < nt_check_count(); i++)
        if (strcmp(nt_check_rows[i].code, code) == 0)
            return &nt_check_rows[i];
    return NULL;
}

char *nt_check_anchor(const nt_check_row_t *row, char *buf, size_t len)
{
    size_t i = 0;

    if (!len)
        return buf;
    for (const char *p = row ? row->code : ""; *p && i + 1 < len; p++)
        buf[i++] = (char)tolower((unsigned char)*p);
    buf[i] = '\0';
    return buf;
}
