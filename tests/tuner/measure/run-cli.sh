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
# numbers beyond what the option's integer holds are refused, not cast (UB: --warmup 1e300 ran
# with INT_MIN warmups, --max-bytes 1e300 with 0 bytes, --timeout inf waited without a limit)
for o in "--warmup 1e300" "--iters inf" "--local-ranks 4294967298" "--max-bytes 1e300" "--min-bytes -1" "--timeout inf"; do
  expect_exit "measure-range $o" 2 $MEAS --plan "$T/plan.json" --output "$T/range.json" --backend fake $o
done
# a launch whose rank count fits no shape of the plan measures nothing: exit 2 with the reason
# on stderr (it said "0 points, 0 not applied" and exited 0)
expect_exit measure-no-shape-fits 2 $MEAS --plan "$T/plan.json" --output "$T/nofit.json" --backend fake --local-ranks 3 --iters 3 --trials 2
check "no shape fits: nothing measured, the reason named" sh -c "grep -q 'nothing measured: .*this launch has 3 ranks (launch one with 2)' '$T/measure-no-shape-fits.err' && ! grep -q '0 points' '$T/measure-no-shape-fits.err'"
# --local-ranks forks that many ranks: 0 ran none and wrote an empty result with exit 0, and
# 99999 started forking 99999 ranks (still running after 60 s); refused at once, in one line
for n in 0 73 99999; do
  expect_exit "measure-local-ranks-$n" 2 timeout 20 $MEAS --plan "$T/plan.json" --output "$T/lr$n.json" --backend fake --local-ranks $n
  check "--local-ranks $n: one line naming the range, no file" sh -c "[ \$(wc -l <'$T/measure-local-ranks-$n.err') = 1 ] && grep -q -- '--local-ranks $n: give 1 to 72' '$T/measure-local-ranks-$n.err' && [ ! -e '$T/lr$n.json' ]"
done
# an --output that is the plan (a link to it too) or the tuning file --verify measures is refused
# before any rank is started: one line, exit 2, the input untouched
ln -sf plan.json "$T/plan-link.json"
cp "$T/plan.json" "$T/plan.keep"
expect_exit measure-output-is-plan 2 $MEAS --plan "$T/plan.json" --output "$T/plan-link.json" --backend fake --local-ranks 2
check "--output the plan: one line naming --output and the file, the plan untouched" sh -c "[ \$(wc -l <'$T/measure-output-is-plan.err') = 1 ] && grep -q -- '--output' '$T/measure-output-is-plan.err' && cmp -s '$T/plan.json' '$T/plan.keep'"
expect_exit measure-output-missing-dir 2 $MEAS --plan "$T/plan.json" --output "$T/no/such/dir/m.json" --backend fake --local-ranks 2
check "--output in a missing folder: refused before measuring, no file" sh -c "[ \$(wc -l <'$T/measure-output-missing-dir.err') = 1 ] && [ ! -e '$T/no' ]"
# a port beyond 65535 is refused at once (%d sscanf read 127.0.0.1:4294972296 as port 5000)
expect_exit measure-addr-port-range 2 env OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 \
  NETTUNE_MEASURE_ADDR=127.0.0.1:4294972296 $MEAS --plan "$T/plan.json" --output "$T/range.json" --backend fake --timeout 1
check "measure-addr-port-range: the one line names NETTUNE_MEASURE_ADDR" grep -q "set NETTUNE_MEASURE_ADDR=host:port" "$T/measure-addr-port-range.err"
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

# 3. --verify: A/B of the written file, with the plugin and the file (the ranks) against neither
#    (a child process per rank: NCCL_TUNER_PLUGIN=none, no file). Fake backend: the file's side
#    1.25x faster; then 1.5x slower: exit 1. The trace shows who ran when.
rm -f "$T/trace"
expect_exit verify 0 env NETTUNE_FAKE_FILE_FACTOR=0.8 NETTUNE_FAKE_TRACE="$T/trace" NETTUNE_FAKE_SLEEP_US=1000 \
  $MEAS --verify "$T/t.json" --output "$T/v.json" --backend fake --local-ranks 2 --iters 2 --trials 3 --max-bytes 65536
check "verify: per size the speedup with its spread, all faster" $PY -c "
import json,sys; d=json.load(open('$T/v.json')); s=d['sizes']
sys.exit(not (d['schema']=='nettune.verify/1' and len(s)==7 and all(abs(e['speedup']-1.25)<1e-3 and e['speedup_min']<=e['speedup']<=e['speedup_max'] and e['verdict']=='faster' for e in s) and d['summary']['faster']==7 and d['completed']))"
check "verify: the sides say what they had loaded (plugin + file / neither)" $PY -c "
import json,sys; d=json.load(open('$T/v.json')); t=d['sides']['tuned']; n=d['sides']['defaults']
sys.exit(not (t['plugin_loaded_ranks']==2 and t['NETTUNE_TUNING_FILE']=='$T/t.json' and n['plugin_loaded_ranks']==0 and n['NCCL_TUNER_PLUGIN']=='none' and n['NETTUNE_TUNING_FILE'] is None and len(set(n['pids']+t['pids']))==4))"
check "verify: separate processes take turns (ABBA per size, never both at once)" $PY - "$T/trace" "$T/v.json" <<'PYEOF'
import json, sys
rows = [l.split() for l in open(sys.argv[1])]
d = json.load(open(sys.argv[2]))
tp, dp = d['sides']['tuned']['pids'], d['sides']['defaults']['pids']
ok = len(rows) == 2 * 7 * 3 * 2
for r in range(2):
    mine = [x for x in rows if int(x[2]) == r]
    want = []
    for z in range(7):
        for rd in range(3):
            want += ['defaults', 'tuned'] if rd % 2 == 0 else ['tuned', 'defaults']
    ok &= [x[0] for x in mine] == want
    ok &= all(int(x[1]) == (dp[r] if x[0] == 'defaults' else tp[r]) for x in mine)
iv = [(x[0], float(x[5]), float(x[6])) for x in rows]
ok &= not any(a[0] != b[0] and a[1] < b[2] and b[1] < a[2] for a in iv for b in iv)
sys.exit(not ok)
PYEOF
# the spread: the tuned side's rounds take x0.9, x1, x1.1 (speedups 1.25/0.9, 1.25, 1.25/1.1)
expect_exit verify-spread 0 env NETTUNE_FAKE_FILE_FACTOR=0.8 NETTUNE_FAKE_JITTER=0.1 $MEAS --verify "$T/t.json" --output "$T/vs.json" --backend fake --local-ranks 2 --iters 1 --trials 3 --max-bytes 2048
check "verify: the speedup is the rounds' mean, its spread their min and max" $PY -c "
import json,sys; s=json.load(open('$T/vs.json'))['sizes']; r=[1.25/0.9, 1.25, 1.25/1.1]
sys.exit(not (len(s)==2 and all(abs(e['speedup']-sum(r)/3)<1e-3 and abs(e['speedup_min']-min(r))<1e-3 and abs(e['speedup_max']-max(r))<1e-3 and e['verdict']=='faster' for e in s)))"
expect_exit verify-slower 1 env NETTUNE_FAKE_FILE_FACTOR=1.5 $MEAS --verify "$T/t.json" --output "$T/v2.json" --backend fake --local-ranks 2 --iters 1 --trials 2 --max-bytes 4096
expect_exit verify-and-plan 2 $MEAS --verify "$T/t.json" --plan "$T/plan.json" --backend fake
# the defaults process of rank 1 dies at its 7th run (size 3): exit 3, sizes 1-2 kept, one line
expect_exit verify-child-dies 3 env NETTUNE_FAKE_DEFAULTS_FAIL=die:1:7 $MEAS --verify "$T/t.json" --output "$T/v3.json" --backend fake --local-ranks 2 --iters 1 --trials 3 --max-bytes 65536
check "child dies: partial result with the error, the sizes before kept" $PY -c "
import json,sys; d=json.load(open('$T/v3.json'))
sys.exit(not (d['completed'] is False and len(d['sizes'])==2 and 'defaults process of rank 0' in d['error']))"
check "child dies: rank 1 names its child's exit" grep -q "defaults process of rank 1 (pid [0-9]*, NCCL_TUNER_PLUGIN=none) ended during its turn: exit 9" "$T/verify-child-dies.err"
# it hangs: every wait has a deadline (--timeout 1: 3 s a turn), exit 3 in bounded time
t0=$(date +%s)
expect_exit verify-child-hangs 3 env NETTUNE_FAKE_DEFAULTS_FAIL=hang:0:1 $MEAS --verify "$T/t.json" --output "$T/v4.json" --backend fake --local-ranks 2 --iters 1 --trials 1 --max-bytes 4096 --timeout 1
check "child hangs: stopped within 20 s, 'no answer within 3 s'" sh -c "[ $(( $(date +%s) - t0 )) -lt 20 ] && grep -q 'no answer within 3 s' '$T/verify-child-hangs.err'"
# the defaults side has the plugin loaded after all: no A/B (exit 2)
expect_exit verify-child-plugin 2 env NETTUNE_FAKE_PLUGIN_ALWAYS=1 $MEAS --verify "$T/t.json" --output "$T/v5.json" --backend fake --local-ranks 2 --iters 1 --trials 1 --max-bytes 4096
check "child with the plugin: says so" grep -q "defaults side has nettune's plugin loaded on 2 of 2 ranks" "$T/verify-child-plugin.err"
check "no defaults process left behind" sh -c "! pgrep -f -- '$(readlink -f $MEAS) --verify-chil[d]' >/dev/null"
expect_exit verify-child-by-hand 2 $MEAS --verify-child 0,1
check "--verify-child by hand: says who starts it" grep -q "started by --verify itself" "$T/verify-child-by-hand.err"

# 3b. the assertions of the GPU check (tests/gpu/measure-check.py) on files made here
CK=tests/gpu/measure-check.py
F=tests/fixtures/nccl-tuning-tables/repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log
$TUNE --nccl-log $F --print-model --format json --sm 120 --shape 2x1 > "$T/pm-good.json" 2>/dev/null
$TUNE --nccl-log $F --print-model --format json > "$T/pm-bad.json" 2>/dev/null
expect_exit gpu-check-model 0 $PY $CK model "$T/pm-good.json"
expect_exit gpu-check-model-differs 1 $PY $CK model "$T/pm-bad.json"
check "gpu check model: the differing cells are printed" grep -q "differs: Broadcast" "$T/gpu-check-model-differs.out"
expect_exit gpu-check-forced-no-log 1 $PY $CK forced "$T/m.json"
$PY - "$T/m.json" "$T/m-log.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d['nccl'] = {'calls': [{'coll': 'AllReduce', 'bytes': p['bytes'], 'algo': p['algo'].upper(), 'proto': p['proto'].upper()} for p in d['points']]}
json.dump(d, open(sys.argv[2], 'w'))
PYEOF
expect_exit gpu-check-forced 0 $PY $CK forced "$T/m-log.json"
expect_exit gpu-check-verify-no-log 1 $PY $CK verify "$T/v.json"
$PY - "$T/v.json" "$T/v-log.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for s in ('tuned', 'defaults'):
    d['sides'][s]['nccl_log'] = {'confirmed': True, 'why': 'test'}
json.dump(d, open(sys.argv[2], 'w'))
PYEOF
expect_exit gpu-check-verify 0 $PY $CK verify "$T/v-log.json"
expect_exit gpu-measure-here 2 sh tests/gpu/measure.sh
check "tests/gpu/measure.sh here: prints what is missing first" sh -c "head -1 '$T/gpu-measure-here.out' | grep -q '^MISSING: '"

# 3c. chunk sizes (tuner API v6): the plan asks for them, the sweep forces them, tune --measured
# makes a rule of a winner beyond the noise and nothing of one within it, --verify applies it.
# The fake's ring LL at chunk 8192 runs 0.8 x (NETTUNE_FAKE_CHUNK_BEST), or 0.98 x with
# NETTUNE_FAKE_CHUNK_GAIN=0.02.
CK3="--colls allreduce --shape 2x1 --min-bytes 131072 --max-bytes 262144"
expect_exit plan-chunks 0 $TUNE $R $CK3 --plan-out "$T/pc.json" --plan-chunks $(out pcx)
check "plan-chunks: NCCL's chunk size and three grain-aligned ones below it" $PY -c "
import json,sys; z=json.load(open('$T/pc.json'))['shapes'][0]['sizes']
sys.exit(not (len(z)==2 and all(s['chunks']=={'algo':'ring','proto':'ll','predicted_us':s['chunks']['predicted_us'],'nccl_chunk_bytes':32768,'chunk_bytes':[16384,8192,4096]} for s in z)))"
expect_exit plan-chunks-alone 2 $TUNE $R $CK3 --plan-chunks $(out pcy)
check "plan-chunks without a plan: one line naming the fix" grep -q "give --plan-out F too" "$T/plan-chunks-alone.err"
expect_exit measure-chunks 0 env NETTUNE_FAKE_CHUNK_BEST=8192 $MEAS --plan "$T/pc.json" --output "$T/mc.json" --backend fake --local-ranks 2 --iters 1 --trials 1
check "measure-chunks: every chunk size measured, the winner at 0.8 x" $PY -c "
import json,sys; p=json.load(open('$T/mc.json'))['points']
c={(q['bytes'],q['chunk_bytes']):q['time_us'] for q in p if q.get('chunk_bytes')}
base={q['bytes']:q['time_us'] for q in p if q.get('algo')=='ring' and q.get('proto')=='ll' and not q['default'] and 'chunk_bytes' not in q}
sys.exit(not (len(c)==6 and all(abs(c[(b,8192)]/base[b]-0.8)<0.01 and abs(c[(b,16384)]/base[b]-1.02)<0.01 for b in base)))"
expect_exit tune-chunks 0 $TUNE $R $CK3 --measured "$T/mc.json" --output "$T/tc.json" --quiet
check "tune-chunks: one measured ring LL rule with chunk_bytes 8192 over both sizes" $PY -c "
import json,sys; r=[x for x in json.load(open('$T/tc.json'))['rules'] if x.get('chunk_bytes')]
sys.exit(not (len(r)==1 and r[0]['chunk_bytes']==8192 and r[0]['algo']=='ring' and r[0]['proto']=='ll' and r[0]['basis']=='measured' and r[0]['min_bytes']==131072 and r[0]['max_bytes']==262144))"
expect_exit validate-chunks 0 $BUILD/bin/nettune report --validate "$T/tc.json"
expect_exit verify-chunks 0 env NETTUNE_FAKE_CHUNK_BEST=8192 $MEAS --verify "$T/tc.json" --output "$T/vc.json" --backend fake --local-ranks 2 --separate-nodes --iters 1 --trials 2 --min-bytes 131072 --max-bytes 262144
check "verify-chunks: the plugin's index applies the chunk size, 1.25 x faster at both sizes" $PY -c "
import json,sys; s=json.load(open('$T/vc.json'))['sizes']
sys.exit(not (len(s)==2 and all(e['verdict']=='faster' and abs(e['speedup']-1.25)<1e-3 for e in s)))"
# 2 % faster: within the 3 % noise floor, so no chunk size is written
expect_exit measure-chunks-noise 0 env NETTUNE_FAKE_CHUNK_BEST=8192 NETTUNE_FAKE_CHUNK_GAIN=0.02 $MEAS --plan "$T/pc.json" --output "$T/mc0.json" --backend fake --local-ranks 2 --iters 1 --trials 1
expect_exit tune-chunks-noise 0 $TUNE $R $CK3 --measured "$T/mc0.json" --output "$T/tc0.json" --quiet
check "tune-chunks-noise: a chunk size 2 % faster is within the noise, no chunk_bytes" $PY -c "
import json,sys; r=json.load(open('$T/tc0.json'))['rules']
sys.exit(not (any(x['algo']=='ring' and x['proto']=='ll' and x['basis']=='measured' for x in r) and not any('chunk_bytes' in x for x in r)))"
# NCCL before 2.30 (API v5) never asks for a chunk size: every forced one is not applied
expect_exit measure-chunks-v5 0 env NETTUNE_FAKE_CHUNK_BEST=8192 NETTUNE_FAKE_API_V5=1 $MEAS --plan "$T/pc.json" --output "$T/mc5.json" --backend fake --local-ranks 2 --iters 1 --trials 1
check "measure-chunks-v5: no chunk point, six not applied naming API v6" $PY -c "
import json,sys; m=json.load(open('$T/mc5.json'))
na=[q for q in m['not_applied'] if q.get('forced_chunk_bytes')]
sys.exit(not (len(na)==6 and all('tuner API v6' in q['why'] and 'chunk_bytes' not in q for q in na) and not any(q.get('chunk_bytes') for q in m['points'])))"
$PY - "$T/pc.json" "$T/pc-bad.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d['shapes'][0]['sizes'][0]['chunks']['chunk_bytes'] = [1000]
json.dump(d, open(sys.argv[2], 'w'))
PYEOF
expect_exit plan-chunk-off-grain 2 $MEAS --plan "$T/pc-bad.json" --output "$T/x.json" --backend fake
check "plan-chunk-off-grain: one line naming the grain" grep -q "chunk size 1000 is not a positive multiple of ll's grain of 16 bytes" "$T/plan-chunk-off-grain.err"

# 4. usage and the NCCL backend on a host without a GPU
expect_exit no-plan 2 $MEAS --output "$T/x.json"
expect_exit bad-plan 2 $MEAS --plan "$T/t.json" --backend fake
check "bad plan: one line naming the fix" grep -q "plan-out" "$T/bad-plan.err"
expect_exit bad-number 2 $MEAS --plan "$T/plan.json" --iters many
# one line naming the thing and the fix (these were two: getopt's or the reader's, then the
# usage or ours)
for c in "unknown-option|unknown option '--bogus' (see nettune tune-measure --help)|--bogus" \
         "option-no-value|option '--plan' needs a value (see nettune tune-measure --help)|--plan" \
         "plan-missing|--plan '$T/no-plan.json': cannot open: No such file or directory (give nettune tune --plan-out's file)|--plan $T/no-plan.json"; do
  name=${c%%|*}; rest=${c#*|}; want=${rest%%|*}; args=${rest#*|}
  expect_exit "$name" 2 $MEAS $args
  check "$name: one line naming the thing and the fix" sh -c "[ \$(wc -l <'$T/$name.err') = 1 ] && grep -qF -- \"$want\" '$T/$name.err'"
done
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
