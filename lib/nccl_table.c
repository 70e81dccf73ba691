/* Reader of NCCL's printed tuning table (include/nettune/nccl_table.h). Stub. */
#include "nettune/nccl_table.h"

#include <string.h>

nt_status_t nt_nccl_table_parse(const char *text, size_t len, nt_nccl_table_t *t, char *err,
                                size_t errlen)
{
    (void)text;
    (void)len;
    (void)err;
    (void)errlen;
    memset(t, 0, sizeof(*t));
    return NT_ERR_NOT_FOUND;
}

nt_status_t nt_nccl_table_read(const char *path, nt_nccl_table_t *t, char *err, size_t errlen)
{
    (void)path;
    return nt_nccl_table_parse("", 0, t, err, errlen);
}
