/* nt_status_string: descriptions of nt_status_t. */
#include "nettune/status.h"

static const char *const nt_status_names[NT_STATUS_COUNT] = {
    [NT_OK] = "ok",
    [NT_ERR_UNSUPPORTED] = "unsupported on this node",
    [NT_ERR_INVALID] = "invalid argument",
    [NT_ERR_PARSE] = "cannot parse",
    [NT_ERR_NOT_FOUND] = "not found",
    [NT_ERR_IO] = "input/output error",
    [NT_ERR_NOMEM] = "out of memory",
    [NT_ERR_TIMEOUT] = "timed out",
    [NT_ERR_PEER] = "peer failed",
    [NT_ERR_INTERRUPTED] = "interrupted",
    [NT_ERR_SYSTEM] = "system call failed",
};

const char *nt_status_string(nt_status_t status)
{
    if ((unsigned)status >= NT_STATUS_COUNT)
        return "unknown status";
    return nt_status_names[status];
}
