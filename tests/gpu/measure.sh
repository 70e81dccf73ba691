#!/bin/sh
# The measured-tuning part of the GPU check (docs/tuner-measure.md). tests/gpu/run.sh (the GPU probes' check)
# calls it last; it also runs on its own from the repository root with
# build/ built here (the binaries load NCCL and CUDA at run time and link neither):
#   tests/gpu/measure.sh [NRANKS]      (2 by default; 2-4 ranks share the one GPU)
# On one GPU the ranks are separate "nodes" (NCCL_HOSTID per rank, no P2P, no SHM, sockets over
# loopback): with one rank NCCL builds no table and never calls a tuner.
# Why the loopback interface: every rank is on this host, so it is the one path all of them reach
# whatever NICs the machine has, and pinning it keeps NCCL's table the same on every machine
# (unset, NCCL picks ib*, then any interface but docker/lo/virbr, then docker, then lo:
# NVIDIA/nccl v2.28.9-1 src/misc/socket.cc:369-388). Its name is read from sysfs (the interface
# with IFF_LOOPBACK, 0x8, in /sys/class/net/*/flags), not assumed; NCCL_SOCKET_IFNAME set by the
# caller wins.
#   1. prints first what is missing: a GPU driver, libnccl.so.2 (system, NETTUNE_NCCL_LIB or the
#      nvidia-nccl-cu13 Python wheel; its version is recorded), the built binaries and plugin
#   2. a capture run: NCCL's table and per-call TUNING lines for NRANKS ranks
#   3. the model against that table cell by cell (nettune tune --nccl-log --print-model --format
#      json): every cell NCCL printed must match the model's (NCCL's %.1f); the differing cells
#      are printed
#   4. the plan (nettune tune --nccl-log --plan-out), measured with every candidate forced
#   5. forcing changes what NCCL runs: two different forced candidates ran as forced
#   6. nettune tune --measured writes measured rules; the A/B sweep (--verify) of that file: the
#      plugin and the file in the ranks against neither in a child per rank, and NCCL's own logs
#      confirm which side had what loaded
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
LO=
for f in /sys/class/net/*/flags; do
  [ -r "$f" ] && [ $(( $(cat "$f") & 8 )) -ne 0 ] && { LO=$(basename "$(dirname "$f")"); break; }
done
if [ -z "${NCCL_SOCKET_IFNAME:-}" ]; then
  [ -n "$LO" ] || { echo "MISSING: a loopback interface (none in /sys/class/net has IFF_LOOPBACK); set NCCL_SOCKET_IFNAME"; exit 2; }
  export NCCL_SOCKET_IFNAME="=$LO" # "=": exactly this name (src/misc/socket.cc:137)
fi
echo "measure: NCCL_SOCKET_IFNAME=$NCCL_SOCKET_IFNAME"
export NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET=Socket
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
print('the result\'s own model check:', n.get('model_check',{}).get('verdict'))
sys.exit(not n.get('table',{}).get('cells'))" && ok "NCCL's table captured" || bad "NCCL's table captured"

# 3. the model against NCCL's table, cell by cell (--sm is the compute capability, 90 on an
#    H200, from the driver: NCCL does not print it at INFO; without it the model fits it)
SM=$(python3 -c "
import ctypes; c=ctypes.CDLL('libcuda.so.1'); d=ctypes.c_int(); a=ctypes.c_int(); b=ctypes.c_int()
assert c.cuInit(0)==0 and c.cuDeviceGet(ctypes.byref(d),0)==0
assert c.cuDeviceGetAttribute(ctypes.byref(a),75,d)==0 and c.cuDeviceGetAttribute(ctypes.byref(b),76,d)==0
print(a.value*10+b.value)" 2>/dev/null)
echo "measure: GPU 0 is compute capability ${SM:-unknown (the model fits it)}"
# --print-model exits 1 when cells differ: the check below names them
run $TUNE --nccl-log "$LOG" --print-model --format json --shape ${N}x1 ${SM:+--sm $SM} > "$OUT/model.json"
if [ $? -le 1 ]; then
  python3 tests/gpu/measure-check.py model "$OUT/model.json" && ok "model vs NCCL's table: every cell" || bad "model vs NCCL's table: every cell"
else bad "nettune tune --print-model on the captured log"; fi

# 4. plan and measure
run $TUNE --nccl-log "$LOG" --colls allreduce --shape ${N}x1 --max-bytes 16777216 --plan-out "$OUT/plan.json" \
  --output "$OUT/t0.json" --env-out "$OUT/t0.env" --csv-out "$OUT/t0.csv" >/dev/null || bad "plan-out"
if run $MEAS --plan "$OUT/plan.json" --output "$OUT/m.json" --local-ranks "$N" --separate-nodes --iters 20 --trials 3 --budget-seconds 90; then
  ok "measure"; else bad "measure (exit $?)"; fi

# 5. forcing changes what NCCL runs: two distinct (algo, proto) ran as forced at one size, and
#    NCCL's per-call TUNING lines show both
python3 tests/gpu/measure-check.py forced "$OUT/m.json" && ok "forcing changes what NCCL runs (the plugin and NCCL's own TUNING lines agree)" || bad "forcing changes what NCCL runs"

# 6. measured rules and the A/B sweep
# --pin-predicted: the sizes nothing won keep the model's choice as rules, so the A/B below has
# a file that steers every size (without it they stay NCCL's and only measured wins are rules)
run $TUNE --nccl-log "$LOG" --colls allreduce --shape ${N}x1 --max-bytes 16777216 --measured "$OUT/m.json" \
  --pin-predicted --output "$OUT/tuning.json" --env-out "$OUT/t.env" --csv-out "$OUT/t.csv" && ok "tune --measured" || bad "tune --measured"
run $MEAS --verify "$OUT/tuning.json" --output "$OUT/verify.json" --local-ranks "$N" --separate-nodes \
  --min-bytes 1024 --max-bytes 16777216 --iters 20 --trials 5 --budget-seconds 120
rc=$?
[ "$rc" = 0 ] && ok "A/B: never slower beyond the rounds' spread" || bad "A/B sweep (exit $rc)"
python3 tests/gpu/measure-check.py verify "$OUT/verify.json" && ok "A/B: NCCL's logs confirm plugin + file on one side, neither on the other" || bad "A/B: which side had what loaded"
echo "measure: $pass passed, $fail failed in $(( $(date +%s) - T0 )) s (results in $OUT)"
echo "not checkable on one GPU: real NIC/NVLink/NVLS/CollNet paths, several nodes, per-GPU ranks"
[ "$fail" = 0 ]
