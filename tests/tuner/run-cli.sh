#!/bin/sh
# nettune tune, the command (make test-tune): exit codes 0/1/2/3, byte-identical outputs, the
# partial file of --time-limit, --label errors, --print-model, --plan-out/--measured, the
# files validated by nettune report (the plugin's parser) and python3-jsonschema, and ldd.
# Env: BUILD (build dir). Prints "ok"/"not ok" lines and a summary; exit 1 on failure.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
TUNE=$BUILD/bin/nettune-tune
REPORT_BIN=$BUILD/bin/nettune-report
T=$BUILD/tests/tune-cli
PY=/usr/bin/python3
rm -rf "$T"; mkdir -p "$T"
pass=0; fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
expect_exit() {
  name=$1; code=$2; shift 2
  "$@" >"$T/$name.out" 2>"$T/$name.err"; rc=$?
  if [ "$rc" = "$code" ]; then ok "$name (exit $rc)"; else bad "$name: exit $rc, want $code"; cat "$T/$name.err"; fi
}
has() { grep -q -- "$2" "$1"; }
F=tests/fixtures
R=$F/tuner/h100-2x8-ib400-report.json
BASE=$F/tuner/allreduce-2x8-default.log
RING=$F/tuner/allreduce-2x8-ring-simple.log
out() { echo "--output $T/$1.json --env-out $T/$1.env --csv-out $T/$1.csv"; }

# 0. the worked example's report is itself a valid nettune.report/1 (what nettune probe writes)
expect_exit fixture-report-valid 0 $REPORT_BIN --validate $R

# 0b. tuning.json cannot be written: exit 2, no nccl.env or CSV beside it (they would pair with
# a stale tuning file) and no "N rules -> FILE" success line
mkdir -p "$T/adir"
expect_exit output-is-dir 2 $TUNE $R --output "$T/adir" --env-out "$T/adir.env" --csv-out "$T/adir.csv"
check "unwritable tuning.json: no nccl.env, no CSV, no success line" sh -c "[ ! -e '$T/adir.env' ] && [ ! -e '$T/adir.csv' ] && ! grep -q 'rules for NCCL' '$T/output-is-dir.out'"

# 0b'. every output checked before anything is read or written: one that cannot be written (a
# missing folder) or that names an input stops the run with one line and exit 2, and no other
# output is written (a tuning.json without its nccl.env would pair with a stale one)
mkdir -p "$T/pre"
expect_exit env-out-missing-dir 2 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --output "$T/pre/t.json" --env-out /nonexistent/x.conf
check "--env-out in a missing folder: one line naming it and the fix, no tuning.json" sh -c "[ \$(wc -l <'$T/env-out-missing-dir.err') = 1 ] && grep -q \"^nettune tune: cannot write --env-out '/nonexistent/x.conf': the folder '/nonexistent' does not exist: create it, or give a path in one that exists\$\" '$T/env-out-missing-dir.err' && [ ! -e '$T/pre/t.json' ]"
expect_exit output-missing-dir 2 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --output /nonexistent/t.json
check "--output in a missing folder: one line, not two" sh -c "[ \$(wc -l <'$T/output-missing-dir.err') = 1 ] && grep -q \"^nettune tune: cannot write --output '/nonexistent/t.json'\" '$T/output-missing-dir.err'"
cp $R "$T/pre/rep.json"; cp $BASE "$T/pre/base.log"
expect_exit output-is-report 2 $TUNE "$T/pre/rep.json" --replay $BASE --replay $RING --label algo=ring,proto=simple --output "$T/pre/rep.json"
expect_exit csv-out-is-replay 2 $TUNE $R --replay "$T/pre/base.log" --replay $RING --label algo=ring,proto=simple --output "$T/pre/t.json" --csv-out "$T/pre/./base.log"
check "an output naming an input: one line each, the inputs untouched, nothing written" sh -c "grep -q \"^nettune tune: --output '$T/pre/rep.json' is also an input: give another path\$\" '$T/output-is-report.err' && grep -q \"^nettune tune: --csv-out '$T/pre/./base.log' is also an input (as '$T/pre/base.log'): give another path\$\" '$T/csv-out-is-replay.err' && [ \$(cat '$T/output-is-report.err' '$T/csv-out-is-replay.err' | wc -l) = 2 ] && cmp -s '$T/pre/rep.json' $R && cmp -s '$T/pre/base.log' $BASE && [ ! -e '$T/pre/t.json' ]"

# 0b''. two outputs that are one file: the later would replace the earlier (a tuning.json
# overwritten by the advice, which the plugin then cannot load), so the run stops with one line
# naming both options, exit 2, nothing written; by any spelling (./, a link, a new name), the
# default tuning.json too; a terminal or /dev/null takes both
mkdir -p "$T/dup"; ln -sf t.json "$T/dup/link.json"; TUNE_ABS0=$(cd "$(dirname "$TUNE")" && pwd)/$(basename "$TUNE")
expect_exit env-csv-same 2 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --output "$T/dup/t.json" --env-out "$T/dup/x" --csv-out "$T/dup/x"
expect_exit output-plan-same 2 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --output "$T/dup/t.json" --plan-out "$T/dup/./t.json"
expect_exit output-link-same 2 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --output "$T/dup/t.json" --csv-out "$T/dup/link.json"
expect_exit default-output-same 2 sh -c "cd '$T/dup' && '$TUNE_ABS0' '$(pwd)/$R' --replay '$(pwd)/$BASE' --replay '$(pwd)/$RING' --label algo=ring,proto=simple --env-out tuning.json"
expect_exit stdout-twice 2 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --output - --env-out -
check "two outputs one file: one line naming both and the fix" sh -c "grep -qx \"nettune tune: --csv-out '$T/dup/x' is the same file as --env-out '$T/dup/x': give one of them another path\" '$T/env-csv-same.err' && grep -qx \"nettune tune: --plan-out '$T/dup/./t.json' is the same file as --output '$T/dup/t.json': give one of them another path\" '$T/output-plan-same.err' && grep -qx \"nettune tune: --csv-out '$T/dup/link.json' is the same file as --output '$T/dup/t.json': give one of them another path\" '$T/output-link-same.err' && grep -qx \"nettune tune: --env-out 'tuning.json' is the same file as the default --output 'tuning.json': give one of them another path\" '$T/default-output-same.err' && grep -qx \"nettune tune: --env-out '-' and --output '-' both write to standard output: give one of them a file\" '$T/stdout-twice.err' && [ \$(cat '$T'/env-csv-same.err '$T'/output-plan-same.err '$T'/output-link-same.err '$T'/default-output-same.err '$T'/stdout-twice.err | wc -l) = 5 ]"
check "two outputs one file: nothing written" sh -c "[ \$(ls -A '$T/dup') = link.json ] && [ ! -s '$T/stdout-twice.out' ]"
expect_exit dev-null-twice 0 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple -q --output "$T/dup/t.json" --env-out /dev/null --csv-out /dev/null
check "/dev/null as two outputs: taken, the tuning file written" test -s "$T/dup/t.json"

# 0c. by default one file, tuning.json, in the working folder; the advice and the CSV only when
# asked (--env-out, --csv-out)
mkdir -p "$T/cwd"; TUNE_ABS=$(cd "$(dirname "$TUNE")" && pwd)/$(basename "$TUNE"); R_ABS=$(pwd)/$R
(cd "$T/cwd" && "$TUNE_ABS" "$R_ABS" --pin-predicted --quiet) >/dev/null 2>&1
check "default run writes tuning.json and nothing else" sh -c "[ \"\$(ls '$T/cwd')\" = tuning.json ]"
(cd "$T/cwd" && rm -f tuning.json && "$TUNE_ABS" "$R_ABS" --pin-predicted --quiet --env-out a.env --csv-out a.csv) >/dev/null 2>&1
check "--env-out and --csv-out write the advice and the CSV" sh -c "[ \"\$(ls '$T/cwd' | tr '\n' ' ')\" = 'a.csv a.env tuning.json ' ]"

# 1. a report alone: no measurement, so nothing to tune by default (a predicted rule only
# restates NCCL's modelled choice); with --pin-predicted the model's choices are written as
# predicted rules, byte-identical on a second run
expect_exit report-only-unpinned 2 $TUNE $R $(out a0)
check "report alone, not pinned: no labelled or measured alternative, in one line, no file" sh -c "[ \$(wc -l <'$T/report-only-unpinned.err') = 1 ] && grep -q 'no labelled or measured alternative' '$T/report-only-unpinned.err' && [ ! -e '$T/a0.json' ]"
expect_exit report-only 0 $TUNE $R --pin-predicted $(out a)
check "report only: predicted rules" has "$T/a.json" '"basis":	"predicted"'
check "report only: every rule carries nnodes and nranks" $PY -c "
import json,sys; d=json.load(open('$T/a.json'))
sys.exit(not d['rules'] or any('nnodes' not in r or 'nranks' not in r for r in d['rules']))"
check "generated_by: versions and input hashes, no time, host or path" $PY -c "
import json,sys; g=json.load(open('$T/a.json'))['generated_by']
s=json.dumps(g); sys.exit(not (g['nccl_modelled']=='2.28.9' and g['inputs'][0]['fnv1a64'] and '/' not in s and ':' not in s.replace('\": ','')))"
expect_exit report-again 0 $TUNE $R --pin-predicted $(out b)
check "identical inputs: byte-identical tuning.json" cmp -s "$T/a.json" "$T/b.json"
check "identical inputs: byte-identical nccl.env" cmp -s "$T/a.env" "$T/b.env"
check "identical inputs: byte-identical CSV" cmp -s "$T/a.csv" "$T/b.csv"
expect_exit validate 0 $REPORT_BIN --validate "$T/a.json"
if $PY -c 'import jsonschema' 2>/dev/null; then
  check "tuning.json against reports/schema/tuning.schema.json (python3-jsonschema)" $PY -c "
import json,jsonschema; jsonschema.validate(json.load(open('$T/a.json')), json.load(open('reports/schema/tuning.schema.json')))"
else
  bad "python3-jsonschema missing (apt-get install python3-jsonschema)"
fi
expect_exit render 0 $REPORT_BIN "$T/a.json"
check "nettune report shows the basis column" has "$T/render.out" "basis"

# 2. report + replay: the measured rule, the summary's gain and basis
expect_exit replay 0 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --colls allreduce --shape 2x8 $(out c)
check "replay: a measured Ring/Simple rule from 16 MiB" $PY -c "
import json,sys; d=json.load(open('$T/c.json'))
m=[r for r in d['rules'] if r.get('basis')=='measured']
sys.exit(not (len(m)==1 and m[0]['algo']=='ring' and m[0]['proto']=='simple' and m[0]['min_bytes']==16777216 and m[0]['reg_buff']==0))"
check "replay: the measured rule ends at the largest size measured (1 GiB), no predicted rule (the rest stays NCCL's)" $PY -c "
import json,sys; d=json.load(open('$T/c.json')); rs=d['rules']
m=[r for r in rs if r.get('basis')=='measured']
sys.exit(not (m and m[0]['max_bytes']==1073741824 and all(r['basis']!='predicted' for r in rs)))"
expect_exit replay-pinned 0 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --colls allreduce --shape 2x8 --pin-predicted $(out cp)
check "replay --pin-predicted: past 1 GiB the model's choices as predicted rules" $PY -c "
import json,sys; rs=json.load(open('$T/cp.json'))['rules']
past=[r for r in rs if r['max_bytes']>1073741824]
sys.exit(not (past and all(r['basis']=='predicted' and r['min_bytes']>1073741824 for r in past)))"
check "replay: the summary's measured range is 16777216..1073741824" has "$T/replay.out" "16777216..1073741824 .*measured"
check "replay: summary names NCCL's default, ours, the gain and basis" has "$T/replay.out" "NVLSTree/Simple      Ring/Simple"
check "replay: the gains per measured size in the JSON (16 MiB +42.8% .. 1 GiB +5.3%), first/last/min/geomean" $PY -c "
import json,sys; r=[x for x in json.load(open('$T/c.json'))['summary'] if x['basis']=='measured'][0]; g=r['gains']
sys.exit(not (len(g)==7 and g[0]['bytes']==16777216 and g[0]['gain_pct']==42.8 and g[-1]['bytes']==1073741824 and g[-1]['gain_pct']==5.3 and r['gain_first_pct']==42.8 and r['gain_last_pct']==5.3 and r['gain_min_pct']==5.3 and r['gain_geomean_pct']==33.7))"
expect_exit replay-json 0 $TUNE $R --replay $BASE --replay $RING --label algo=ring,proto=simple --colls allreduce --shape 2x8 $(out d) --format json
check "--format json: the summary as JSON" $PY -c "import json; d=json.load(open('$T/replay-json.out')); assert any(r['basis']=='measured' and r['gain_pct']>0 for r in d['ranges'])"

# 3. exit 2: bad input or nothing to tune
# a size whose K/M/G multiple passes 2^64 is refused (17179869185G wrapped to 1 GiB)
expect_exit max-bytes-wraps 2 $TUNE $R --max-bytes 17179869185G $(out w)
expect_exit no-input 2 $TUNE
expect_exit label-first 2 $TUNE $R --label algo=ring --replay $RING
check "a label before any --replay is named" has "$T/label-first.err" "before any --replay"
expect_exit label-contradicts 2 $TUNE $R --replay $RING --label algo=tree
check "a contradicting label names both" sh -c "grep -q 'algo=Tree' '$T/label-contradicts.err' && grep -q 'NCCL_ALGO=Ring' '$T/label-contradicts.err'"
expect_exit label-twice 2 $TUNE $R --replay $RING --label proto=simple --label nchannels=4
# a folder or an empty file given to --replay is named as what it is, not as "no table"
expect_exit replay-dir 2 $TUNE $R --replay "$T/adir" $(out rd)
check "--replay of a folder: one line saying it is a folder" sh -c "[ \$(wc -l <'$T/replay-dir.err') = 1 ] && grep -q \"replay source '$T/adir'.*Is a directory\" '$T/replay-dir.err'"
: >"$T/empty.log"
expect_exit replay-empty 2 $TUNE $R --replay "$T/empty.log" $(out re)
check "--replay of an empty file: one line saying it is empty" sh -c "[ \$(wc -l <'$T/replay-empty.err') = 1 ] && grep -q \"replay source '$T/empty.log' is empty\" '$T/replay-empty.err'"
expect_exit bad-shape 2 $TUNE $R --shape 2by8
expect_exit bad-objective 2 $TUNE $R --objective fastest
expect_exit not-a-report 2 $TUNE $F/tuner/README.md
# bad input is one line naming the thing and the fix (these were two: the reader's log line or
# getopt's, then ours or the whole usage)
one_line() { # NAME PATTERN: the case's stderr is one line holding PATTERN
  check "$1: one line ($2)" sh -c "[ \$(wc -l <'$T/$1.err') = 1 ] && grep -q -- \"$2\" '$T/$1.err'"
}
one_line not-a-report "nettune tune: the report 'tests/fixtures/tuner/README.md': not valid JSON.*give nettune probe's output"
expect_exit report-missing 2 $TUNE "$T/no-such-report.json"
one_line report-missing "the report '$T/no-such-report.json': cannot open: No such file or directory (give nettune probe's output"
expect_exit report-dir 2 $TUNE --report "$T/adir"
one_line report-dir "the report '$T/adir': cannot read: Is a directory"
expect_exit report-foreign 2 $TUNE $F/tuner/nccl_tuner.csv
expect_exit report-other-schema 2 $TUNE tests/fixtures/reports/tuning.json
one_line report-other-schema "'tests/fixtures/reports/tuning.json' is not a nettune.report/1 (give nettune probe's output)"
expect_exit measured-missing 2 $TUNE $R --measured "$T/no-such-measured.json"
one_line measured-missing "--measured '$T/no-such-measured.json': cannot open: No such file or directory (give nettune-tune-measure's output"
expect_exit unknown-option 2 $TUNE --bogus
one_line unknown-option "nettune tune: unknown option '--bogus' (see nettune tune --help)"
expect_exit option-no-value 2 $TUNE $R --replay
one_line option-no-value "nettune tune: option '--replay' needs a value (see nettune tune --help)"
expect_exit nothing-alltoall 2 $TUNE --replay $F/nccl-tests-logs/alltoall-8xA100-sxm4-single-node-nvswitch-c0.log $(out e)
check "nothing to tune says why" has "$T/nothing-alltoall.err" "never sees"
# the real reason, in one line: a report without GPUs; a log without NCCL's graph lines; NCCL
# below 2.21 with no environment advice to give
$PY -c "
import json; d=json.load(open('$R'))
for n in d['nodes']: n['gpus']=[]
json.dump(d, open('$T/no-gpus.json','w'))"
expect_exit nothing-no-gpus 2 $TUNE $T/no-gpus.json --shape 4x2 $(out ng)
check "no GPUs in the report: said so, in one line" sh -c "[ \$(wc -l <'$T/nothing-no-gpus.err') = 1 ] && grep -q \"report '$T/no-gpus.json' has no GPUs\" '$T/nothing-no-gpus.err'"
expect_exit nothing-no-facts 2 $TUNE --nccl-log $BASE --shape 2x8 $(out nf)
check "a log without graph lines: the model has no facts, said so" sh -c "[ \$(wc -l <'$T/nothing-no-facts.err') = 1 ] && grep -q 'no facts.*no NCCL graph lines in $BASE' '$T/nothing-no-facts.err' && ! grep -q 'never reach' '$T/nothing-no-facts.err'"
expect_exit nothing-old-nccl 2 $TUNE --nccl-log $BASE --nccl-version 2.20 --shape 2x8 $(out no)
check "NCCL 2.20, no advice: below 2.21 and no environment advice, said so" sh -c "grep -q 'nothing to tune for NCCL 2.20.0: tuner rules reach NCCL from 2.21' '$T/nothing-old-nccl.err' && [ \$(grep -c 'nothing to tune' '$T/nothing-old-nccl.err') = 1 ] && [ ! -e '$T/no.env' ]"
expect_exit old-nccl-advice 1 $TUNE --replay $BASE --replay $F/tuner/allreduce-2x8-qps2.log --nccl-version 2.20 $(out oa)
check "NCCL 2.20 with advice: no rules, nccl.env written with the advice" $PY -c "
import json,sys; d=json.load(open('$T/oa.json')); e=open('$T/oa.env').read()
sys.exit(not (d['rules']==[] and 'NCCL_IB_HCA=mlx5' in e))"
expect_exit nothing-sendrecv 2 $TUNE --replay $F/nccl-tests-logs/sendrecv-2node-4xH100-roce-one-nic-shared.log $(out e)

# 4. exit 1: written, with warn anomalies (two default runs of one shape that differ)
expect_exit anomalies 1 $TUNE $R --replay $F/nccl-tests-logs/allreduce-2node-8xH100-hgx-ib-default-tree.log \
  --replay $F/nccl-tests-logs/allreduce-2node-8xH100-ib-ring-forced-minctas.log --shape 2x8 $(out f)
check "a forced run that differs in more than it forces: a confounded finding in the file, no measured rule" $PY -c "
import json,sys; d=json.load(open('$T/f.json'))
sys.exit(not (any(f['kind']=='confounded' and f['severity']=='warn' and 'NCCL_MIN_CTAS=24' in f['message'] for f in d['findings']) and not any(r['basis']=='measured' for r in d['rules'])))"

# 5. exit 3: --time-limit, the partial file says "completed": false and still loads
expect_exit time-limit 3 $TUNE $R --time-limit 0.000001 $(out g)
check "partial file: completed false" has "$T/g.json" '"completed":	false'
expect_exit partial-validates 0 $REPORT_BIN --validate "$T/g.json"

# 6. --plan-out and --measured
expect_exit plan 0 $TUNE $R --colls allreduce --shape 2x8 --plan-out "$T/plan.json" $(out h)
check "plan: model top-3 with NCCL's default per size" $PY -c "
import json,sys; d=json.load(open('$T/plan.json')); s=d['shapes'][0]['sizes']
sys.exit(not (d['schema']=='nettune.plan/1' and len(s)==24 and all(1<=len(x['candidates'])<=3 and x['candidates'][0]['default'] for x in s)))"
cat > "$T/measured.json" <<'EOF'
{"schema": "nettune.measured/1", "points": [
 {"coll": "allreduce", "nnodes": 2, "nranks": 16, "bytes": 1048576, "default": true, "time_us": 100},
 {"coll": "allreduce", "nnodes": 2, "nranks": 16, "bytes": 1048576, "algo": "ring", "proto": "ll128", "time_us": 70}]}
EOF
expect_exit measured 0 $TUNE $R --colls allreduce --shape 2x8 --measured "$T/measured.json" $(out i)
check "--measured: a measured rule at 1 MiB" $PY -c "
import json,sys; d=json.load(open('$T/i.json'))
sys.exit(not any(r['basis']=='measured' and r['min_bytes']==1048576 and r['algo']=='ring' and r['proto']=='ll128' for r in d['rules']))"

# 7. environment advice: a labelled run that differs by a safe knob only and ran faster; a site
# setting reported, never set; the same inputs from another folder give the same bytes
QPS=$F/tuner/allreduce-2x8-qps2.log
expect_exit env-advice 0 $TUNE $R --replay $BASE --replay $QPS --label env.NCCL_IB_QPS_PER_CONNECTION=2 --colls allreduce --shape 2x8 $(out k)
check "nccl.env: the knob, its measured reason, new process" sh -c "grep -q '^NCCL_IB_QPS_PER_CONNECTION=2\$' '$T/k.env' && grep -q 'measured: allreduce-2x8-qps2.log ran 11% faster.*(new process)' '$T/k.env'"
check "an env.NCCL_X run that won: advice, not an alternative that lost" sh -c "! grep -q \"NCCL's default wins\" '$T/env-advice.out'"
check "nccl.env: the site setting as a comment only" sh -c "grep -q '^# NCCL_IB_HCA=mlx5: site setting' '$T/k.env' && ! grep -q '^NCCL_IB_HCA' '$T/k.env'"
check "tuning.json env holds the knob, not the site setting" $PY -c "
import json,sys; e=json.load(open('$T/k.json'))['env']; sys.exit(e != {'NCCL_IB_QPS_PER_CONNECTION': '2'})"
expect_exit env-unlabelled 1 $TUNE $R --replay $BASE --replay $QPS --colls allreduce --shape 2x8 --pin-predicted $(out l)
check "two baselines whose environments differ: a warn finding" $PY -c "
import json,sys; d=json.load(open('$T/l.json')); sys.exit(not any(f['kind']=='env_differs' for f in d['findings']))"
mkdir -p "$T/elsewhere"; cp $R $BASE $RING "$T/elsewhere/"
expect_exit elsewhere 0 $TUNE "$T/elsewhere/$(basename $R)" --replay "$T/elsewhere/$(basename $BASE)" --replay "$T/elsewhere/$(basename $RING)" --label algo=ring,proto=simple --colls allreduce --shape 2x8 $(out m)
check "the same inputs from another folder: byte-identical tuning.json" cmp -s "$T/c.json" "$T/m.json"

# 8. NCCL below 2.21: environment advice only
expect_exit old-nccl 0 $TUNE $R --nccl-version 2.14 --pin-predicted $(out j)
check "NCCL 2.14: no rules" $PY -c "import json,sys; sys.exit(len(json.load(open('$T/j.json'))['rules'])!=0)"
# 2.15-2.20 are not modelled: the nearest modelled version below 2.21 (2.14.3), advice only
expect_exit old-nccl-2.20 0 $TUNE $R --nccl-version 2.20 --pin-predicted $(out j20)
check "NCCL 2.20: no rules, 2.14.3 modelled, said why" $PY -c "
import json,sys; d=json.load(open('$T/j20.json')); e=open('$T/old-nccl-2.20.err').read()
sys.exit(not (d['rules']==[] and d['generated_by']['nccl_modelled']=='2.14.3' and 'environment advice only' in e))"
expect_exit new-nccl-2.99 0 $TUNE $R --nccl-version 2.99 --pin-predicted $(out j99)
check "NCCL 2.99: the nearest modelled tag (2.30.7), not a code inside its range" $PY -c "
import json,sys; d=json.load(open('$T/j99.json')); e=open('$T/new-nccl-2.99.err').read()
sys.exit(not (d['generated_by']['nccl_modelled']=='2.30.7' and 'give --nccl-version' not in e))"

# 9. --print-model on NCCL's own complete 2.29.7 table
# (the log has no comm line: NCCL saw 2 nodes x 1 rank, given with --shape)
expect_exit print-model 0 $TUNE --nccl-log $F/nccl-tuning-tables/repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log --print-model --sm 120 --shape 2x1
check "--print-model: NCCL's layout, every cell verified" sh -c "grep -q 'AllReduce' '$T/print-model.out' && grep -q 'model vs NCCL: verified' '$T/print-model.out'"
expect_exit print-model-json 0 $TUNE --nccl-log $F/nccl-tuning-tables/repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log --print-model --sm 120 --shape 2x1 --format json
check "--print-model --format json is JSON" $PY -c "import json; json.load(open('$T/print-model-json.out'))"
expect_exit print-model-no-log 2 $TUNE --print-model
# the same table without the facts NCCL does not print: NCCL's cells beside the model's, no
# "NCCL INFO" prefix, exit 1 (cells differ beyond the print precision), and the options that
# supply the assumed facts (--shape 2x1 --sm 120 close the gap, above)
PM=$F/nccl-tuning-tables/repo-nccl-ebpf-2.29.7-rtx5090-2rank-hostid-socket-COMPLETE.log
expect_exit print-model-assumed 1 $TUNE --nccl-log $PM --print-model
check "--print-model: NCCL's value, the model's and the difference per cell, NCCL's layout, no prefix" sh -c "! grep -q 'NCCL INFO' '$T/print-model-assumed.out' && grep -q '^    AllReduce  NCCL |    16.8/   0.5 |' '$T/print-model-assumed.out' && grep -q '^              model |     8.0/   0.0 |' '$T/print-model-assumed.out' && grep -q '^               diff |    -8.8/  -0.5\*|' '$T/print-model-assumed.out'"
expect_exit print-model-rows 0 $TUNE --nccl-log $F/nccl-tuning-tables/transformers-20438-2gpu-pcie-phb-12col.log --print-model --nccl-version 2.14
check "--print-model before 2.18: NCCL's row layout, NCCL's cells beside the model's, every one reproduced" sh -c "grep -q '^Latency/AlgBw       |    Tree/    LL |' '$T/print-model-rows.out' && grep -q '^    Broadcast  NCCL |     0.0/   0.0 |' '$T/print-model-rows.out' && ! grep -q '\*|' '$T/print-model-rows.out'"
# a 2.26 log without TUNING lines, whose ENV "Enabled NCCL Func/Proto/Algo Matrix" has function
# rows with '|' like the tuning table's: the model's table alone, and the verdict says no table
NOTAB=$F/nccl-tests-logs/allreduce-2node-1xH100-roce-ring-single-nic.log
expect_exit print-model-no-table 0 $TUNE --nccl-log $NOTAB --print-model
check "--print-model on a log without a tuning table: the model's table, 'no NCCL table in the log'" sh -c "grep -q '^    AllReduce |    16.8/' '$T/print-model-no-table.out' && grep -q '^model vs NCCL: not verified: no NCCL table in the log (NCCL prints it with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING)' '$T/print-model-no-table.out' && ! grep -q 'layout is printed by' '$T/print-model-no-table.out'"
check "--print-model: the assumed facts with the option supplying each" sh -c "grep -q '^  nranks, nnodes: --shape NxP' '$T/print-model-assumed.out' && grep -q '^  sm: --sm N' '$T/print-model-assumed.out' && grep -q 'mismatch: 32 of 105 cells differ' '$T/print-model-assumed.out'"

# 10. ldd: no MPI, CUDA or NCCL
check "ldd nettune-tune: no MPI, CUDA or NCCL" sh -c "! ldd $TUNE | grep -Ei 'libmpi|libcuda|libcudart|libnccl|libibverbs|libhwloc'"

# 11. --version: every tool prints the build's one version string (lib/core/version.c, rebuilt when
# `git describe` changes: build/version.stamp), never the commit of an earlier build
V=$(cat "$BUILD/version.stamp")
for tool in nettune nettune-tune nettune-tune-measure nettune-probe nettune-report nettune-doctor; do
  [ -x "$BUILD/bin/$tool" ] || continue
  check "$tool --version prints $V" sh -c "'$BUILD/bin/$tool' --version | grep -qx 'nettune[a-z -]* $V'"
done
check "the stamp is the tree's version" sh -c "[ \"\$(git describe --always --dirty 2>/dev/null || echo 0.1.0)\" = '$V' ]"

# 12. the dispatcher's help names every command the build makes (nettune-X runs as nettune X)
"$BUILD/bin/nettune" --help >"$T/dispatcher-help.out"
for b in "$BUILD"/bin/nettune-*; do
  c=${b##*/nettune-}
  check "nettune --help lists '$c'" grep -q "^  $c " "$T/dispatcher-help.out"
done

# 13. the tuner learns only what the evidence shows (each case failed before: a rule credited to
# Ring from runs that also differ in NCCL_MIN_CTAS, QPS and machines; the command line unread;
# the wrong reason first; pinned guesses)
L=$F/nccl-tests-logs
SRUN=$L/allreduce-2node-8xH100-ib-default-srun-prefix.log
MINCTAS=$L/allreduce-2node-8xH100-ib-ring-forced-minctas.log
expect_exit confounded 1 $TUNE --replay $SRUN --replay $MINCTAS --label algo=ring $(out cf)
check "Ring credited from runs differing in more: a confounded finding naming each difference, no rule" $PY -c "
import json,sys; d=json.load(open('$T/cf.json'))
f=[x for x in d['findings'] if x['kind']=='confounded']
m=f[0]['message'] if f else ''
sys.exit(not (d['rules']==[] and len(f)==1 and f[0]['severity']=='warn' and 'NCCL_MIN_CTAS=24 vs not set' in m and 'NCCL_IB_QPS_PER_CONNECTION=2 vs not set' in m and 'other PCI addresses' in m))"
expect_exit cmdline-read 1 $TUNE --replay $SRUN --replay $MINCTAS $(out cr)
check "without --label, -x NCCL_ALGO=Ring on the command line is read: not a baseline" $PY -c "
import json,sys; d=json.load(open('$T/cr.json')); k=[x['kind'] for x in d['findings']]
sys.exit(not ('confounded' in k and 'env_differs' not in k and 'runs_differ' not in k))"
expect_exit label-vs-cmdline 2 $TUNE --replay $MINCTAS --label algo=tree $(out lc)
check "a label contradicting the command line: exit 2 naming both" sh -c "grep -q 'algo=Tree contradicts' '$T/label-vs-cmdline.err' && grep -q 'command line sets NCCL_ALGO=Ring' '$T/label-vs-cmdline.err'"
# srun --export and NAME=V cmd forms, on a copy of the Ring/Simple fixture's table
{ echo 'srun -N 2 --export=ALL,NCCL_ALGO=Tree,NCCL_MIN_CTAS=8 ./all_reduce_perf -b 4M -e 1G'; sed 1,4d $RING; } >"$T/srun-export.log"
{ echo 'NCCL_ALGO=Tree NCCL_PROTO=LL128 ./build/all_reduce_perf -b 4M -e 1G'; sed 1,4d $RING; } >"$T/env-prefix.log"
expect_exit srun-export 2 $TUNE --replay "$T/srun-export.log" --label algo=ring $(out se)
check "srun --export=ALL,NCCL_ALGO=Tree is read" grep -q 'command line sets NCCL_ALGO=Tree' "$T/srun-export.err"
expect_exit env-prefix 2 $TUNE --replay "$T/env-prefix.log" --label proto=simple $(out ep)
check "NAME=V before the command is read" grep -q 'command line sets NCCL_PROTO=LL128' "$T/env-prefix.err"
expect_exit no-gpus-no-shape 2 $TUNE $T/no-gpus.json $(out ngs)
check "a report without GPUs, no --shape: the GPUs are the reason, not the shape" sh -c "[ \$(wc -l <'$T/no-gpus-no-shape.err') = 1 ] && grep -q 'has no GPUs' '$T/no-gpus-no-shape.err'"
expect_exit all-lost 0 $TUNE --replay $BASE --replay $RING --label algo=ring,proto=simple --max-bytes 8M $(out al)
check "an alternative that lost everywhere: exit 0, no rule, the table of what lost" sh -c "grep -q \"NCCL's default wins at every measured size\" '$T/all-lost.out' && grep -q 'allreduce .*2x8 .*4194304  Ring/Simple' '$T/all-lost.out' && $PY -c \"import json,sys; sys.exit(json.load(open('$T/al.json'))['rules']!=[])\""
ROCE=$L/allreduce-2node-1xH100-roce-ring-single-nic.log
expect_exit unnamed-coll 2 $TUNE --replay $ROCE $(out un)
check "a log that does not name its test: the reason says --coll" grep -q -- '--coll NAME' "$T/unnamed-coll.err"
expect_exit named-coll 2 $TUNE --replay $ROCE --coll all_reduce $(out nc)
check "--coll all_reduce names it: the next reason (a forced Ring run, no baseline), not 'never sees'" sh -c "grep -q \"none is NCCL's default\" '$T/named-coll.err' && ! grep -q 'never sees' '$T/named-coll.err'"
expect_exit bad-coll 2 $TUNE --replay $ROCE --coll alltoall

# 14. the advice is NCCL's own conf file: the real NCCL reads what --env-out wrote (plus the
# site's own NCCL_SOCKET_IFNAME line), the job's environment wins (skipped without libnccl)
cp "$T/k.env" "$T/nccl.conf" && echo NCCL_SOCKET_IFNAME=lo >>"$T/nccl.conf"
if $PY tests/tuner/nccl_conf.py "$T/nccl.conf" >"$T/nccl-conf.out" 2>&1; then
  while read -r line; do case $line in "ok - "*) ok "${line#ok - }";; esac; done <"$T/nccl-conf.out"
else
  cat "$T/nccl-conf.out"; bad "NCCL reads the written conf file (tests/tuner/nccl_conf.py)"
fi

# 15. the worked example of docs/tuner-cli.md: its nettune tune line, run on the fixtures under the
# names it uses, prints exactly the block the page shows, and the page's prose quotes its figures
mkdir -p "$T/we"; cp $R "$T/we/report.json"; cp $BASE "$T/we/default.log"; cp $RING "$T/we/ring.log"
check "docs/tuner-cli.md's worked example is this run's output, figures included" $PY - "$TUNE_ABS" "$T/we" docs/tuner-cli.md <<'PYEOF'
import re, shlex, subprocess, sys
tune, cwd, doc = sys.argv[1:4]
text = open(doc).read()
cmd = re.search(r"<!-- worked-example-command -->\n```sh\n(.*?)\n```", text, re.S).group(1)
want = re.search(r"<!-- worked-example-output -->\n```\n(.*?)```\n\n(.*?)\n\n", text, re.S)
argv = shlex.split(cmd)
assert argv[0] == "nettune" and argv[1] == "tune", argv
got = subprocess.run([tune] + argv[2:], cwd=cwd, capture_output=True, text=True).stdout
if got != want.group(1):
    sys.stderr.write("--- page\n%s--- run\n%s" % (want.group(1), got))
    sys.exit(1)
for fig in re.findall(r"\d+\.\d%", want.group(2)):
    if "+" + fig not in got:
        sys.exit("the prose's %s is not in the run's output" % fig)
PYEOF

# 16. a broken baseline is not a baseline: the doctor's own busbw rule on the same log, with the
# hardware from the report or --expect (the srun run is 39% of 8 x 400 Gb/s); a healthy one
# (the tuner fixture's default, 89%: the doctor's warn, not its fail) gives no finding
expect_exit degraded-report 1 $TUNE $R --replay $SRUN --replay $MINCTAS --label algo=ring --colls allreduce $(out dr)
check "a baseline at 39% of its NICs (the report): a warn finding saying so" $PY -c "
import json,sys; f=[x for x in json.load(open('$T/dr.json'))['findings'] if x['kind']=='baseline_degraded']
sys.exit(not (len(f)==1 and f[0]['severity']=='warn' and '155.6 GB/s' in f[0]['message'] and '39% of the 400 GB/s' in f[0]['message']))"
expect_exit degraded-expect 1 $TUNE --expect nics=8,nic_rate_Gbps=400 --replay $SRUN --replay $MINCTAS $(out de)
check "the same from --expect (the doctor's grammar)" grep -q 'baseline_degraded.*39% of the 400 GB/s' "$T/degraded-expect.out"
check "no hardware given: the baseline is not judged, no finding" sh -c "! grep -q baseline_degraded '$T/cr.json'"
check "a healthy baseline (the worked example's): no finding" sh -c "! grep -q baseline_degraded '$T/c.json'"
expect_exit bad-expect 2 $TUNE --expect nics=x --replay $SRUN

echo "tune cli tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
