#!/bin/sh
# One libFuzzer run of a target (tests/fuzz/module.mk): replay the regression inputs, then fuzz
# for SECONDS from them and the seeds, and print the figures. A crash fails the run; its input
# is saved under build/fuzz/ (docs/fuzzing.md: fix it, then keep the input in the corpus).
# Usage: [FUZZ_SEED=N] tests/fuzz/run.sh NAME BINARY SECONDS CORPUS_DIR [SEED_DIR...]
# FUZZ_SEED is libFuzzer's -seed (0 or unset: it draws one and prints it as "Seed: N").
set -u
name=$1 bin=$2 secs=$3 corpus=$4; shift 4
dir=$(dirname "$bin")
work=$dir/$name-corpus log=$dir/$name.log
mkdir -p "$work"
# Leaks inside hwloc/libxml2 on inputs they reject are theirs (tests/fuzz/lsan.supp).
LSAN_OPTIONS="suppressions=$(cd "$(dirname "$0")" && pwd)/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
# The regression inputs first, alone: each must still pass.
if ls "$corpus"/* >/dev/null 2>&1; then
  if ! "$bin" -runs=0 "$corpus" > "$log" 2>&1; then
    tail -n 40 "$log"; echo "fuzz-$name: a regression input in $corpus fails again"; exit 1
  fi
fi
# libFuzzer writes new inputs into the first directory (the work corpus under build/).
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
  -seed="${FUZZ_SEED:-0}" -print_final_stats=1 -artifact_prefix="$dir/$name-" "$work" $([ -d "$corpus" ] && echo "$corpus") \
  "$@" > "$log" 2>&1
rc=$?
if [ $rc != 0 ]; then
  tail -n 60 "$log"
  seed=$(sed -n 's/^INFO: Seed: //p' "$log" | head -n 1)
  echo "fuzz-$name: FAILED (exit $rc, -seed=$seed): the input is in $dir/$name-*; fix the bug, then keep it as $corpus/<what-it-was>"
  exit 1
fi
# The last figures are the run's (a child process that crashed may have printed its own).
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -n 1)
echo "fuzz-$name: $secs s, $execs executions, $new new inputs, peak RSS $rss MB (log: $log)"
