#!/bin/sh
# Runs each test suite (a make target named test-*) in turn, keeps going after a failure,
# and ends with one line "N passed, N failed" that CI reads. Exit 1 when any suite failed.
# Usage: tests/run-suites.sh test-unit test-plugin ...
pass=0; fail=0; failed=""
for t in "$@"; do
  echo "=== $t"
  start=$(date +%s)
  if ${MAKE:-make} --no-print-directory "$t"; then
    pass=$((pass + 1)); echo "=== $t: ok ($(( $(date +%s) - start )) s)"
  else
    fail=$((fail + 1)); failed="$failed $t"; echo "=== $t: FAILED ($(( $(date +%s) - start )) s)"
  fi
done
[ -n "$failed" ] && echo "failed suites:$failed"
echo "suites: $pass passed, $fail failed"
[ "$fail" = 0 ]
