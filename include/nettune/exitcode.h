/* Exit codes of every nettune command and their precedence (README.md "Exit codes").
 *
 *   0 NT_EXIT_OK          ran, and everything checked is healthy
 *   1 NT_EXIT_FAIL        ran, and at least one check failed
 *   2 NT_EXIT_USAGE       could not run: bad usage, unreadable or wrong input, nothing to analyse
 *   3 NT_EXIT_INCOMPLETE  stopped early (time limit, SIGTERM, dead peer) with nothing failed yet
 *
 * Precedence: 2, then 1, then 3, then 0. Only main() turns this into a process exit status. */
#ifndef NETTUNE_EXITCODE_H
#define NETTUNE_EXITCODE_H

#define NT_EXIT_OK 0
#define NT_EXIT_FAIL 1
#define NT_EXIT_USAGE 2
#define NT_EXIT_INCOMPLETE 3

/* nt_exit_code - the exit code for a run's outcome. Each argument is a boolean (any non-zero
 * value is true):
 *   usage_error    the command could not run at all (bad option, unreadable input)   -> 2
 *   any_fail       at least one check, link or node failed                           -> 1
 *   stopped_early  the run stopped before it finished (time limit, signal, dead peer) -> 3
 *   any_warn       at least one warning; exits 0 unless strict
 *   strict         --strict: warnings count as failures                              -> 1
 * Precedence is 2, then 1, then 3, then 0 (README.md): a run stopped early that already found a
 * failure exits 1. Under --strict a warning is a failure, so it takes the place of any_fail and
 * also beats "stopped early" (a stopped strict run with a warning exits 1, not 3).
 * Skipped probes never change the code; a required part that is missing is a failure, which
 * the caller passes as any_fail. Pure function, no errors. */
int nt_exit_code(int usage_error, int any_fail, int stopped_early, int any_warn, int strict);

/* nt_exit_code_string - "ok", "fail", "usage", "incomplete" for 0..3; "unknown" otherwise. */
const char *nt_exit_code_string(int code);

#endif
