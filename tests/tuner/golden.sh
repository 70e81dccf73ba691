#!/bin/sh
# nettune tune's outputs against the committed golden files (make test-tune): each case's
# tuning file, environment advice, CSV, plan, summary on stdout and exit code, with any
# "code"/"category" pair stripped (the check table's fields, additive), byte for byte the files
# of tests/tuner/golden/ as the commit before wrote them. A change of an output on purpose
# rewrites them: tests/tuner/golden.sh --write, and the diff goes into the same commit.
# Env: BUILD (build dir). Prints "ok"/"not ok" lines and a summary; exit 1 on a difference.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
TUNE=$BUILD/bin/nettune-tune
GOLD=tests/tuner/golden
T=$BUILD/tests/tune-golden
write=0
[ "${1:-}" = --write ] && write=1
rm -rf "$T"; mkdir -p "$T"
F=tests/fixtures
R=$F/tuner/h100-2x8-ib400-report.json
BASE=$F/tuner/allreduce-2x8-default.log
RING=$F/tuner/allreduce-2x8-ring-simple.log
QPS=$F/tuner/allreduce-2x8-qps2.log
L=$F/nccl-tests-logs
SRUN=$L/allreduce-2node-8xH100-ib-default-srun-prefix.log
MINCTAS=$L/allreduce-2node-8xH100-ib-ring-forced-minctas.log
PM=$F/nccl-tuning-tables/repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log
cat > "$T/measured.json" <<'EOF'
{"schema": "nettune.measured/1", "points": [
 {"coll": "allreduce", "nnodes": 2, "nranks": 16, "bytes": 1048576, "default": true, "time_us": 100},
 {"coll": "allreduce", "nnodes": 2, "nranks": 16, "bytes": 1048576, "algo": "ring", "proto": "ll128", "time_us": 70}]}
EOF
pass=0; fail=0
# The pair as the writers put it (cJSON's layout, a key a line, or one object a line: the
# regular expressions of tests/report/test_report.py's strip_codes), and the build's own
# version (git describe) in generated_by is VERSION.
strip() {
  /usr/bin/python3 -c '
import re, sys
pair = r"\"code\":\s*\"NT-[A-Z]+-[0-9]{3}\",\s*\"category\":\s*\"[a-z]+\""
t = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read()
t = re.sub(r",\s*" + pair + r"(?=\s*\})", "", t)
t = re.sub(pair + r",\s*", "", t)
t = re.sub(r"\A(\{\s*\"schema\":[^\n]*\n\s*\"generated_by\":\s*\{\s*\"tool\":[^\n]*\n\s*\"version\":\s*)\"[^\"]*\"", "\\1\"VERSION\"", t)
sys.stdout.write(t)' "$1"
}
# The stripping itself, on both layouts: a pair that stayed would fail every case anyway, one
# stripped wrongly would pass them all.
printf '{"a": 1, "code": "NT-NCCL-101", "category": "config"}\n\t\t"severity":\t"warn",\n\t\t"code":\t"NT-RUN-203",\n\t\t"category":\t"config",\n\t\t"b": 2\n' > "$T/pair"
if [ $write = 0 ] && [ "$(strip "$T/pair")" != "$(printf '{"a": 1}\n\t\t"severity":\t"warn",\n\t\t"b": 2')" ]; then
  fail=$((fail + 1)); echo "not ok - golden: the code/category pair is not stripped: $(strip "$T/pair")"
fi
# case NAME ARGS...: runs nettune tune with ARGS plus the output options, then compares.
case_() {
  name=$1; shift
  d=$T/$name; mkdir -p "$d"
  "$TUNE" "$@" --output "$d/tuning.json" --env-out "$d/nccl.env" --csv-out "$d/tuner.csv" \
    > "$d/stdout" 2> "$d/stderr"
  echo $? > "$d/rc"
  sed -i "s|$d/|OUT/|g" "$d/stdout" "$d/stderr"
  if [ $write = 1 ]; then
    rm -rf "$GOLD/$name"; mkdir -p "$GOLD/$name"
    for f in "$d"/*; do strip "$f" > "$GOLD/$name/$(basename "$f")"; done
    echo "wrote $GOLD/$name"; return
  fi
  diffs=""
  for f in "$d"/* "$GOLD/$name"/*; do
    b=$(basename "$f")
    [ -f "$GOLD/$name/$b" ] && [ -f "$d/$b" ] && strip "$d/$b" | cmp -s - "$GOLD/$name/$b" && continue
    case " $diffs " in *" $b "*) ;; *) diffs="$diffs $b";; esac
  done
  if [ -z "$diffs" ]; then pass=$((pass + 1)); echo "ok - golden $name"
  else fail=$((fail + 1)); echo "not ok - golden $name: differs in$diffs (diff against $GOLD/$name)"; fi
}
case_ report-pinned $R --pin-predicted
case_ replay $R --replay $BASE --replay $RING --label algo=ring,proto=simple --colls allreduce --shape 2x8
case_ replay-json $R --replay $BASE --replay $RING --label algo=ring,proto=simple --colls allreduce --shape 2x8 --format json
case_ plan $R --colls allreduce --shape 2x8 --plan-out "$T/plan/plan.json"
case_ measured $R --colls allreduce --shape 2x8 --measured "$T/measured.json"
case_ env-advice $R --replay $BASE --replay $QPS --label env.NCCL_IB_QPS_PER_CONNECTION=2 --colls allreduce --shape 2x8
case_ confounded --replay $SRUN --replay $MINCTAS --label algo=ring --format json
case_ degraded-expect --expect nics=8,nic_rate_Gbps=400 --replay $SRUN --replay $MINCTAS
case_ old-nccl-2.20 $R --nccl-version 2.20 --pin-predicted
case_ print-model --nccl-log $PM --print-model
case_ print-model-json --nccl-log $PM --print-model --sm 120 --shape 2x1 --format json
[ $write = 1 ] && exit 0
# today's documents: every warn finding carries its code and category (the golden files above
# are as they were before the codes)
if /usr/bin/python3 tests/lint/golden-codes.py "$T" > "$T/codes.log" 2>&1; then
  pass=$((pass + 1)); echo "ok - $(tail -n 1 "$T/codes.log")"
else
  fail=$((fail + 1)); cat "$T/codes.log"; echo "not ok - a fail or warn finding of nettune tune without its code"
fi
echo "golden: $pass passed, $fail failed"
[ $fail = 0 ]
