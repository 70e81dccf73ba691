#!/bin/sh
# The measured-tuning part of the GPU check (issue 10). tests/gpu/run.sh (the GPU probes' check)
# calls it last; it also runs on its own from the repository root with
# build/ built here (the binaries load NCCL and CUDA at run time and link neither):
#   tests/gpu/measure.sh [NRANKS]      (2 by default; 2-4 ranks share the one GPU)
# On one GPU the ranks are separate "nodes" (NCCL_HOSTID per rank, no P2P, no SHM, sockets over
# loopback): with one rank NCCL builds no table and never calls a tuner.
#   1. prints first what is missing: a GPU driver, libnccl.so.2 (system, NETTUNE_NCCL_LIB or the
#      nvidia-nccl-cu13 Python wheel; its version is recorded), the built binaries and plugin
#   2. a capture run: NCCL's table and per-call TUNING lines for NRANKS ranks
#   3. the model against that table cell by cell (nettune tune --nccl-log --print-model)
#   4. the plan (nettune tune --nccl-log --plan-out), measured with every candidate forced
#   5. forcing changes what NCCL runs: two different forced candidates ran as forced
#   6. nettune tune --measured writes measured rules; the A/B sweep (--verify) of that file
# Exit 0 when every check holds, 1 when one fails, 2 when something needed is missing.
# NOT RUN ON A GPU YET (written without one).
set -u
N=${1:-2}
B=${BUILD:-build}
OUT=${OUT:-$B/gpu-measure}
MEAS=$B/bin/nettune-tune-measure TUNE=$B/bin/nettune-tune PLUG=$B/lib/libnccl-tuner-nettune.so
T0=$(date +%s)
missing=0
need() { echo "MISSING: $1"; missing=1; }
[ -x "$MEAS" ] || need "$MEAS (make all)"
[ -x "$TUNE" ] || need "$TUNE (make all)"
[ -f "$PLUG" ] || need "$PLUG (make all)"
command -v python3 >/dev/null || need "python3"
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so.1' && [ ! -e /dev/nvidiactl ]; then
  need "an NVIDIA driver (libcuda.so.1, /dev/nvidiactl)"
fi
NCCL=${NETTUNE_NCCL_LIB:-}
[ -z "$NCCL" ] && NCCL=$(ldconfig -p 2>/dev/null | awk '/libnccl.so.2 / {print $NF; exit}')
if [ -z "$NCCL" ]; then
  # the nvidia-nccl-cu13 (or -cu12) wheel: site-packages/nvidia/nccl/lib/libnccl.so.2
  NCCL=$(python3 -c "
import glob, site, sys
ps = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for p in ps:
    for f in glob.glob(p + '/nvidia/nccl/lib/libnccl.so.2'):
        print(f); raise SystemExit
" 2>/dev/null)
fi
[ -n "$NCCL" ] && [ -f "$NCCL" ] || need "libnccl.so.2 (pip install nvidia-nccl-cu13, or set NETTUNE_NCCL_LIB)"
if [ "$missing" = 1 ]; then echo "measure: cannot run (see MISSING above)"; exit 2; fi
NCCL_VER=$(python3 -c "
import ctypes,sys; l=ctypes.CDLL('$NCCL'); v=ctypes.c_int(); l.ncclGetVersion(ctypes.byref(v)); c=v.value
print('%d.%d.%d' % (c//10000, c//100%100, c%100))" 2>/dev/null)
echo "measure: libnccl.so.2 = $NCCL (NCCL ${NCCL_VER:-unknown version}), $N ranks on one GPU as $N nodes"
rm -rf "$OUT"; mkdir -p "$OUT"
export NETTUNE_NCCL_LIB="$NCCL" NCCL_TUNER_PLUGIN="$PWD/$PLUG"
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
run() { echo "+ $*"; timeout 240 "$@"; }

# 2. capture: one size, NCCL's own choice only
cat > "$OUT/plan0.json" <<JSON
{"schema": "nettune.plan/1", "shapes": [{"coll": "allreduce", "nnodes": $N, "nranks": $N,
 "sizes": [{"bytes": 1048576, "candidates": []}]}]}
JSON
if run $MEAS --plan "$OUT/plan0.json" --output "$OUT/m0.json" --local-ranks "$N" --separate-nodes --iters 5 --trials 1; then
  ok "capture run"; else bad "capture run"; fi
LOG=$OUT/m0.json.nccl-rank0.log
python3 -c "
import json,sys; d=json.load(open('$OUT/m0.json')); n=d.get('nccl',{})
print('NCCL', n.get('version'), 'table cells', n.get('table',{}).get('cells'), 'tuning calls', n.get('tuning_calls'))
sys.exit(not n.get('table',{}).get('cells'))" && ok "NCCL's table captured" || bad "NCCL's table captured"

# 3. the model against NCCL's table, cell by cell
if run $TUNE --nccl-log "$LOG" --print-model --format json > "$OUT/model.json"; then ok "model vs NCCL's table"; else bad "model vs NCCL's table"; fi
python3 -c "
import json; d=json.load(open('$OUT/model.json')); print(json.dumps(d.get('fit', d), indent=1)[:2000])" || true

# 4. plan and measure
run $TUNE --nccl-log "$LOG" --colls allreduce --shape ${N}x1 --max-bytes 16777216 --plan-out "$OUT/plan.json" \
  --output "$OUT/t0.json" --env-out "$OUT/t0.env" --csv-out "$OUT/t0.csv" >/dev/null || bad "plan-out"
if run $MEAS --plan "$OUT/plan.json" --output "$OUT/m.json" --local-ranks "$N" --separate-nodes --iters 20 --trials 3 --budget-seconds 120; then
  ok "measure"; else bad "measure (exit $?)"; fi

# 5. forcing changes what NCCL runs: two distinct (algo, proto) ran as forced at one size
python3 -c "
import json,sys; d=json.load(open('$OUT/m.json'))
ran={}
for p in d['points']:
    if not p['default']: ran.setdefault(p['bytes'], set()).add((p['algo'], p['proto']))
print('not applied:', [(q['bytes'], q['forced_algo'], q['forced_proto'], q['why']) for q in d['not_applied']][:10])
sys.exit(not any(len(s) >= 2 for s in ran.values()))" && ok "forcing changes what NCCL runs" || bad "forcing changes what NCCL runs"

# 6. measured rules and the A/B sweep
run $TUNE --nccl-log "$LOG" --colls allreduce --shape ${N}x1 --max-bytes 16777216 --measured "$OUT/m.json" \
  --output "$OUT/tuning.json" --env-out "$OUT/t.env" --csv-out "$OUT/t.csv" && ok "tune --measured" || bad "tune --measured"
run $MEAS --verify "$OUT/tuning.json" --output "$OUT/verify.json" --local-ranks "$N" --separate-nodes \
  --min-bytes 1024 --max-bytes 16777216 --iters 20 --trials 5
rc=$?
[ "$rc" = 0 ] && ok "A/B: never slower beyond the rounds' spread" || bad "A/B sweep (exit $rc)"
python3 -c "
import json; d=json.load(open('$OUT/verify.json'))
for e in d['sizes']: print('%-10s %10d B  default %9.2f us  tuned %9.2f us  x%.3f [%.3f..%.3f] %s' % (e['coll'], e['bytes'], e['default_us'], e['tuned_us'], e['speedup'], e['speedup_min'], e['speedup_max'], e['verdict']))
print('summary', d['summary'])" || true
echo "measure: $pass passed, $fail failed in $(( $(date +%s) - T0 )) s (results in $OUT)"
echo "not checkable on one GPU: real NIC/NVLink/NVLS/CollNet paths, several nodes, per-GPU ranks"
[ "$fail" = 0 ]
