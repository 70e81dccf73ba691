#!/bin/sh
# make bench: the wall time of a full model+replay tune (every collective, three shapes, the
# probe report, the eight steerable nccl-tests fixtures and the two hand-built replays), beside a
# reference measured in the same run: the model alone on the same shapes (report only). Prints
# the median of 5 runs of each and their ratio. Env: BUILD.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
TUNE=$BUILD/bin/nettune-tune
T=$BUILD/bench/tune
mkdir -p "$T"
F=tests/fixtures
R=$F/tuner/h100-2x8-ib400-report.json
REPLAY=""
for f in $F/nccl-tests-logs/allreduce-*.log $F/tuner/allreduce-2x8-default.log; do REPLAY="$REPLAY --replay $f"; done
REPLAY="$REPLAY --replay $F/tuner/allreduce-2x8-ring-simple.log --label algo=ring,proto=simple"
SHAPES="--shape 2x8 --shape 1x8 --shape 8x8"
OUT="--output $T/t.json --env-out $T/t.env --csv-out $T/t.csv --quiet --nccl-version 2.28"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # prints the seconds of one run
  s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN {print e - s}'
}
full=$(for i in 1 2 3 4 5; do run $TUNE $R $REPLAY $SHAPES $OUT; done | median)
model=$(for i in 1 2 3 4 5; do run $TUNE $R $SHAPES $OUT; done | median)
OUTV=$(echo "$OUT" | sed 's/ --quiet//')
rules=$($TUNE $R $REPLAY $SHAPES $OUTV 2>/dev/null | sed -n 's/^nettune tune: \([0-9]*\) rules.*/\1/p')
printf 'bench-tune: full model+replay tune (5 collectives x 3 shapes x 24 sizes, 10 replay sources): %.3f s (median of 5), %s rules\n' "$full" "$rules"
printf 'bench-tune: reference, the model alone on the same shapes: %.3f s; ratio %.2f\n' "$model" "$(awk -v a="$full" -v b="$model" 'BEGIN {print a / b}')"
