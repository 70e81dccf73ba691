#!/bin/sh
# Runs each test suite (a make target named test-*) in turn, keeps going after a failure,
# and ends with one line "N passed, N failed" that CI reads. Exit 1 when any suite failed.
# Then the checkout must be as the suites found it: a file they left untracked or changed
# (what `git status` shows now and did not before) fails the run as the suite "clean-checkout",
# each such file named. Outside a git checkout that check says it did not run.
# Each suite's whole output is kept in build/test-logs/<suite>.log.
# Usage: tests/run-suites.sh test-unit test-plugin ...
# A suite's prerequisites (its test binaries) build NT_JOBS at a time (default: every core);
# its recipe, the tests, still runs alone. Under a make that passes its jobserver (a -j of the
# caller, test-sanitize's lanes) that jobserver decides instead.
pass=0; fail=0; failed=""
# Each suite's output is kept in $logs/<suite>.log too: the lines of a failed suite that say
# what failed are printed again above the summary, where a CI log's tail shows them.
logs=${BUILD:-build}/test-logs
mkdir -p "$logs"
case " ${MAKEFLAGS:-} " in
  *jobserver*) jobs="" ;;
  *) jobs="-j${NT_JOBS:-$(nproc 2>/dev/null || echo 1)}" ;;
esac
git_status() { git status --porcelain --untracked-files=all 2>/dev/null; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  before=$(git_status)
  check_clean=1
else
  check_clean=0
fi
for t in "$@"; do
  echo "=== $t"
  start=$(date +%s)
  # Into the file, shown as it grows: a process a suite leaves behind holding its output open
  # cannot keep this loop waiting, as it would on a pipe.
  ${MAKE:-make} --no-print-directory $jobs "$t" > "$logs/$t.log" 2>&1 &
  mk=$!
  tail -s 0.2 -n +1 -f --pid="$mk" "$logs/$t.log" &
  tl=$!
  wait "$mk"; rc=$?
  wait "$tl"
  if [ "$rc" = 0 ]; then
    pass=$((pass + 1)); echo "=== $t: ok ($(( $(date +%s) - start )) s)"
  else
    fail=$((fail + 1)); failed="$failed $t"; echo "=== $t: FAILED ($(( $(date +%s) - start )) s)"
  fi
done
echo "=== clean-checkout"
if [ "$check_clean" = 1 ]; then
  left=$(git_status | grep -vxF -e "$before")
  [ -z "$before" ] && left=$(git_status)
  if [ -n "$left" ]; then
    fail=$((fail + 1)); failed="$failed clean-checkout"
    echo "$left" | sed 's/^/the suites left this in the checkout: /'
    echo "=== clean-checkout: FAILED (remove those files, or have the suite write under build/)"
  else
    pass=$((pass + 1)); echo "=== clean-checkout: ok"
  fi
else
  echo "=== clean-checkout: not checked (not a git checkout)"
fi
for t in $failed; do
  [ -f "$logs/$t.log" ] || continue
  echo "--- $t: what failed (whole output: $logs/$t.log)"
  # a failure's line and the indented lines under it (at most 3), 14 lines in all
  awk '/^(FAIL|not ok|\[  FAILED)|: error:|Error [0-9]|FAILED/ && !/^=== / { print; n = 3; next }
       /^[ \t]/ && n > 0 { print; n--; next } { n = 0 }' "$logs/$t.log" | head -n 14 | cut -c1-240
done
[ -n "$failed" ] && echo "failed suites:$failed"
echo "suites: $pass passed, $fail failed"
[ "$fail" = 0 ]
