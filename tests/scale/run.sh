#!/bin/bash
# 32 ranks on this machine (docs/scale.md): NETTUNE_FAKE_NODES=16 splits them into 16 nodes of
# 2 ranks; --quick and --full must complete with the schedule's number of rounds and pairs, and a
# healthy machine must have no node blamed. The figures of every run are printed, so that a false
# alarm can be read off the log. Prints "N passed, N failed" at the end.
set -u
cd "$(dirname "$0")/../.."
BIN=${BIN:-build/bin}
CHECK=tests/integration/check_report.py
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
W=$(mktemp -d /tmp/nettune-np32.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

# The schedule (docs/probe.md, lib/engine/schedule.c): 16 nodes, local rank i pairs with local
# rank i. --quick: ring + shifted ring in 3 rounds (16 is even), 2 lanes each: 3 x 8 x 2 = 48
# inter pairs; --full: 15 rounds x 8 node pairs x 2 lanes = 240. Then one intra round: the two
# ranks of each node, 16 pairs.
#        mode  rounds pairs
for spec in "quick 4 64" "full 16 256"; do
  set -- $spec; mode=$1 rounds=$2 pairs=$3
  rm -f "$W/r.json"
  t0=$(date +%s)
  NETTUNE_FAKE_NODES=16 timeout 300 mpirun --oversubscribe --bind-to none -np 32 \
    "$BIN/nettune" probe --$mode $([ $mode = full ] && echo --fabric-budget 0) --sizes 8,1M --budget 0.01 \
    --output "$W/r.json" > "$W/log" 2>&1
  rc=$?; dt=$(( $(date +%s) - t0 ))
  if [ ! -f "$W/r.json" ]; then tail -n 20 "$W/log"; bad "np32 --$mode: no report (exit $rc)"; continue; fi
  /usr/bin/python3 - "$W/r.json" "$mode" "$rc" "$dt" <<'PY' > "$W/figures"
import json, sys
d = json.load(open(sys.argv[1])); s = d["summary"]; run = d["run"]
sch = run.get("schedule", {}).get("mpi", {})
fl = [l for l in d["links"] if l.get("verdict") == "fail"]
print("np32 --%s: exit %s, %s s, rounds %s, pairs %s, links %d, completed %s, verdict %s, "
      "failed_nodes %s, failed links %d, warnings %d, serialized (concurrent_pairs %s)" % (
      sys.argv[2], sys.argv[3], sys.argv[4], sch.get("rounds"), sch.get("pairs"), len(d["links"]),
      run.get("completed"), s.get("verdict"),
      [(f.get("host"), f.get("reason")) for f in s.get("failed_nodes", [])], len(fl),
      len(s.get("warnings", [])), run.get("concurrent_pairs")))
for l in fl:
    print("  failed link %s: peak %s GB/s, lat %s us, reasons %s" % (l["id"], l.get("peak_bw_GBps"),
          l.get("small_msg_lat_us"), l.get("reasons")))
PY
  cat "$W/figures"
  if /usr/bin/python3 $CHECK "$W/r.json" --exit "$rc" --nodes 16 --completed true > "$W/check" 2>&1; then
    ok "np32 --$mode: complete, schema-valid, exit code matches the verdict"
  else cat "$W/check"; bad "np32 --$mode: complete, schema-valid, exit code matches the verdict"; fi
  got=$(/usr/bin/python3 -c "import json,sys; s=json.load(open('$W/r.json'))['run']['schedule']['mpi']; print(s['rounds'], s['pairs'])")
  if [ "$got" = "$rounds $pairs" ]; then ok "np32 --$mode: $rounds rounds, $pairs pairs"
  else bad "np32 --$mode: $rounds rounds, $pairs pairs (got $got)"; fi
  if /usr/bin/python3 -c "import json,sys; sys.exit(0 if not json.load(open('$W/r.json'))['summary']['failed_nodes'] else 1)"; then
    ok "np32 --$mode: no node blamed"
  else bad "np32 --$mode: no node blamed"; fi
done
echo "np32: $pass passed, $fail failed"
[ $fail = 0 ]
