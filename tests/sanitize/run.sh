#!/bin/sh
# make test-sanitize: the sanitized suites within CI's 4 minutes on 2 cores.
# Usage: tests/sanitize/run.sh "LANE1 SUITES" "LANE2 SUITES" "LAST SUITES" (tests/sanitize/module.mk)
# AddressSanitizer's cost is per process (~0.15 s to start) and per page touched, and every
# suite runs its processes one at a time, so two lanes share the machine (lane 1: test-report,
# one Python driver starting ~1,000 nettune-report processes; lane 2: the other short suites);
# then the last suites (test-integration) run alone: its MPI cases measure deadlines and
# signals. NETTUNE_SANITIZE_LANES=1 runs the lanes one after another instead.
# Ends with the line "suites: N passed, N failed" (tests/run-suites.sh); exit 1 when any failed.
set -u
cd "$(dirname "$0")/../.."
lane1=$1 lane2=$2 last=$3
count() { # the counts of a run-suites.sh log: "P F"
  sed -n 's/^suites: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$1" | tail -1
}
log=$(mktemp -d "${TMPDIR:-/tmp}/nettune-san.XXXXXX") || exit 1
trap 'rm -rf "$log"' EXIT INT TERM
start=$(date +%s)
if [ "${NETTUNE_SANITIZE_LANES:-2}" = 1 ]; then
  tests/run-suites.sh $lane1 $lane2 > "$log/1" 2>&1; cat "$log/1"
  : > "$log/2"
else
  tests/run-suites.sh $lane1 > "$log/1" 2>&1 &
  pid=$!
  tests/run-suites.sh $lane2 > "$log/2" 2>&1
  wait $pid
  echo "--- lane 1 ($lane1)"; cat "$log/1"
  echo "--- lane 2 ($lane2)"; cat "$log/2"
fi
echo "--- lanes done in $(( $(date +%s) - start )) s"
tests/run-suites.sh $last > "$log/3" 2>&1; cat "$log/3"
p=0; f=0
for k in 1 2 3; do
  [ -s "$log/$k" ] || continue
  set -- $(count "$log/$k")
  if [ $# -ne 2 ]; then f=$((f + 1)); echo "lane $k ended without its summary line"; continue; fi
  p=$((p + $1)); f=$((f + $2))
done
echo "test-sanitize: $(( $(date +%s) - start )) s"
echo "suites: $p passed, $f failed"
[ "$f" = 0 ]
