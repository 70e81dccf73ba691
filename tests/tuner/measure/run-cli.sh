#!/bin/sh
# nettune-tune-measure, the command, without a GPU (make test-measure): the data flow
# nettune tune --plan-out -> nettune-tune-measure (fake backend, forked local ranks over TCP) ->
# nettune tune --measured (measured rules), the launches of a plan, exit codes, the NCCL backend
# skipping on a host without a GPU, and ldd: no tuner binary links CUDA, NCCL or MPI.
# Env: BUILD (build dir). Prints "ok"/"not ok" lines and a summary; exit 1 on failure.
set -u
cd "$(dirname "$0")/../../.."
BUILD=${BUILD:-build}
TUNE=$BUILD/bin/nettune-tune
MEAS=$BUILD/bin/nettune-tune-measure
T=$BUILD/tests/measure-cli
PY=/usr/bin/python3
rm -rf "$T"; mkdir -p "$T"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
expect_exit() {
  name=$1; code=$2; shift 2
  timeout 60 "$@" >"$T/$name.out" 2>"$T/$name.err"; rc=$?
  if [ "$rc" = "$code" ]; then ok "$name (exit $rc)"; else bad "$name: exit $rc, want $code"; cat "$T/$name.err"; fi
}
R=tests/fixtures/tuner/h100-2x8-ib400-report.json
out() { echo "--output $T/$1.json --env-out $T/$1.env --csv-out $T/$1.csv"; }

# 1. plan -> measure -> tune --measured
expect_exit plan 0 $TUNE $R --colls allreduce --shape 2x1 --max-bytes 1048576 --plan-out "$T/plan.json" $(out p)
expect_exit measure 0 $MEAS --plan "$T/plan.json" --output "$T/m.json" --backend fake --local-ranks 2 --iters 3 --trials 2
check "measure: one point per planned candidate and NCCL's default per size" $PY -c "
import json,sys; p=json.load(open('$T/plan.json')); m=json.load(open('$T/m.json'))
want=sum(len(z['candidates'])+1 for s in p['shapes'] for z in s['sizes'])
got=len(m['points'])+len(m['not_applied'])
sys.exit(not (m['schema']=='nettune.measured/1' and got==want and m['completed'] and sum(q['default'] for q in m['points'])==len(p['shapes'][0]['sizes'])))"
expect_exit tune-measured 0 $TUNE $R --colls allreduce --shape 2x1 --max-bytes 1048576 --measured "$T/m.json" $(out t)
check "tune --measured: rules with basis measured" $PY -c "
import json,sys; d=json.load(open('$T/t.json')); sys.exit(not any(r.get('basis')=='measured' for r in d['rules']))"

# 2. a forced cell NCCL would ignore is recorded as not applied, never as a point
$PY - "$T/plan.json" "$T/plan-nvls.json" <<'PYEOF'
import json,sys; p=json.load(open(sys.argv[1]))
p['shapes'][0]['sizes'][0]['candidates'].append({'algo': 'nvls', 'proto': 'simple', 'predicted_us': 1})
p['launches']=[{'env': {}}, {'env': {'NCCL_BUFFSIZE': '8388608'}}]
json.dump(p, open(sys.argv[2], 'w'))
PYEOF
expect_exit measure-nvls 0 $MEAS --plan "$T/plan-nvls.json" --output "$T/m2.json" --backend fake --local-ranks 2 --iters 1 --trials 1
check "not applied: the nvls candidate, with what ran instead" $PY -c "
import json,sys; m=json.load(open('$T/m2.json')); n=m['not_applied']
sys.exit(not (len(n)==1 and n[0]['forced_algo']=='nvls' and n[0]['algo']=='ring' and not any(q.get('algo')=='nvls' for q in m['points'])))"
check "launches: the second launch's results under launches[] with its environment" $PY -c "
import json,sys; m=json.load(open('$T/m2.json')); l=m.get('launches',[])
sys.exit(not (len(l)==1 and l[0]['env']==['NCCL_BUFFSIZE=8388608'] and len(l[0]['points'])==len(m['points'])))"

# 3. --verify: A/B of the written file (fake backend: the file's communicator 1.25x faster;
#    then 1.5x slower: exit 1)
expect_exit verify 0 env NETTUNE_FAKE_FILE_FACTOR=0.8 $MEAS --verify "$T/t.json" --output "$T/v.json" --backend fake --local-ranks 2 --iters 2 --trials 3 --max-bytes 65536
check "verify: per size the speedup with its spread, all faster" $PY -c "
import json,sys; d=json.load(open('$T/v.json')); s=d['sizes']
sys.exit(not (d['schema']=='nettune.verify/1' and len(s)==7 and all(abs(e['speedup']-1.25)<1e-3 and e['verdict']=='faster' for e in s) and d['summary']['faster']==7))"
expect_exit verify-slower 1 env NETTUNE_FAKE_FILE_FACTOR=1.5 $MEAS --verify "$T/t.json" --output "$T/v2.json" --backend fake --local-ranks 2 --iters 1 --trials 2 --max-bytes 4096
expect_exit verify-and-plan 2 $MEAS --verify "$T/t.json" --plan "$T/plan.json" --backend fake

# 4. usage and the NCCL backend on a host without a GPU
expect_exit no-plan 2 $MEAS --output "$T/x.json"
expect_exit bad-plan 2 $MEAS --plan "$T/t.json" --backend fake
check "bad plan: one line naming the fix" grep -q "plan-out" "$T/bad-plan.err"
expect_exit bad-number 2 $MEAS --plan "$T/plan.json" --iters many
if ! ls /dev/nvidia0 >/dev/null 2>&1; then
  expect_exit nccl-no-gpu 2 $MEAS --plan "$T/plan.json" --output "$T/n.json"
  check "no GPU: 'skipped:' with the reason, no output file" sh -c "grep -q 'skipped:' '$T/nccl-no-gpu.err' && test ! -e '$T/n.json'"
fi
expect_exit mpi-env-no-addr 2 env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 $MEAS --plan "$T/plan.json" --backend fake
check "launcher env without NETTUNE_MEASURE_ADDR: says what to set" grep -q NETTUNE_MEASURE_ADDR "$T/mpi-env-no-addr.err"

# 5. ldd: no tuner binary links CUDA, NCCL or MPI
for b in $MEAS $TUNE; do
  if ldd "$b" | grep -Eiq 'libcuda|libcudart|libnccl|libmpi|libpmix|libopen-'; then
    bad "ldd $(basename $b): links CUDA, NCCL or MPI"; ldd "$b"
  else ok "ldd $(basename $b): no CUDA, NCCL or MPI"; fi
done

echo "measure-cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
