/* Exit codes shared by every command (DESIGN.md "Exit codes"). */
#ifndef NETTUNE_EXITCODE_H
#define NETTUNE_EXITCODE_H

#define NT_EXIT_OK 0
#define NT_EXIT_FAIL 1
#define NT_EXIT_USAGE 2
#define NT_EXIT_INCOMPLETE 3

/* nt_exit_code - the exit code by precedence 2, then 1, then 3, then 0: a usage error wins, a
 * failure beats stopping early, warnings exit 0 unless strict (then 1). */
int nt_exit_code(int usage_error, int any_fail, int stopped_early, int any_warn, int strict);

#endif
