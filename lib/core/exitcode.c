/* Exit-code precedence, README.md "Exit codes". Kept apart from main() so that every command
 * (and rank 0 of the probe, which tells the other ranks) decides the code the same way. */
#include "nettune/exitcode.h"

int nt_exit_code(int usage_error, int any_fail, int stopped_early, int any_warn, int strict)
{
    if (usage_error)
        return NT_EXIT_USAGE;
    /* --strict promotes warnings to failures, and failures outrank an early stop. */
    if (any_fail || (strict && any_warn))
        return NT_EXIT_FAIL;
    if (stopped_early)
        return NT_EXIT_INCOMPLETE;
    return NT_EXIT_OK;
}

const char *nt_exit_code_string(int code)
{
    switch (code) {
    case NT_EXIT_OK:
        return "ok";
    case NT_EXIT_FAIL:
        return "fail";
    case NT_EXIT_USAGE:
        return "usage";
    case NT_EXIT_INCOMPLETE:
        return "incomplete";
    default:
        return "unknown";
    }
}
