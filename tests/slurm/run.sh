#!/usr/bin/env bash
# nettune on a real Slurm (docs/slurm.md): munged, slurmctld and 4 slurmds on the namespace
# test cluster (tests/slurm/slurm.sh), then the scenarios, in this order on one cluster:
#   healthy   check job (srun --mpi=pmix ... --full --drain) exits 0, no node changes state
#   rate      sn2's link rate-limited: exit 1, exactly sn2 DRAINED with a nettune: reason
#             (sinfo -R printed), a 3-node job runs on the others
#   srun      srun as the launcher: --time-limit exits 3 with completed:false; a SIGSTOPped
#             peer exits 1 with cause no_answer
#   prolog    sn3 is a GPU node to Slurm (Gres=gpu:2(S:0) in scontrol show node) without GPUs: its prolog, on the
#             installed defaults, drains it with nettune's reason (kept over Slurm's
#             "Prolog error"), the job is requeued held, runs on healthy nodes once released
#   health    HealthCheckProgram resumes the nodes nettune drained once they pass, never one
#             an administrator drained
#   contrib   the prolog run by hand on sn1: a drain scontrol refuses is said as failed (exit
#             code, message), never "drained"; NICs expected from the sysfs topology; a
#             configuration error is an error in syslog (logger), nettune_config_error 1, and
#             passes or drains by --on-config-error; make install puts the scripts where the
#             docs say
# Usage: tests/slurm/run.sh [SCENARIO...] (default all). Prints PASS/FAIL lines; exit 0 when
# all pass, 77 is never used: a missing piece prints "skipped: reason" and exits 0.
set -u
shopt -s extglob
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
# match STRING GLOB: [[ STRING == GLOB ]] as a command (for expect).
match() { [[ $1 == $2 ]]; }
# expect DESCRIPTION CONDITION...: PASS when the command succeeds.
expect() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }

# Probe options of every check job: small budgets (the machine is loaded), a 10 s peer timeout;
# the drain and resume checks are about the pairwise verdicts: no fabric phases after --full.
POPTS=(--sizes 8,1M --budget 0.05 --peer-timeout 10 --quiet --fabric-budget 0)

# The last run's Slurm files (config, logs, reports) are kept for a look after a failure.
KEEP=${NTS_KEEP:-/var/tmp/nettune-slurm-last}
keep() { rm -rf "$KEEP" && cp -r "$NTS_DIR" "$KEEP" 2>/dev/null && echo "test-slurm: files of this run: $KEEP"; }
nts_up 4 || { echo "FAIL: Slurm cluster did not start"; keep; exit 1; }
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
    # Each task's own exit code goes to $OUT/$name.rc.<rank> (srun reports only the worst).
    nts_run timeout -k 10 120 srun --mpi=pmix -N"${CJ_N:-4}" --ntasks-per-node=1 -t 5 "${so[@]}" \
        sh -c '"$0" "$@"; rc=$?; echo $rc > "'"$OUT/$name"'.rc.$SLURM_PROCID"; exit $rc' \
        "$NT" probe --full "${POPTS[@]}" "${po[@]}" --output "$REP" > "$OUT/$name.log" 2>&1
    RC=$?
    settle
    echo "  $name: srun exit $RC, $(rjson "$REP" "r['summary']['verdict'], 'completed', r['summary'].get('completed'), [(f['host'], f.get('cause'), f['reason']) for f in r['summary']['failed_nodes']]")"
}

# The probe's figures are noisy on a loaded machine (other jobs share its 2 cores): a healthy
# run may fail a link (exit 1, no node blamed, nothing drained) and a fault may be missed
# once. A check job that does not give the wanted outcome is run again, up to TRIES times;
# what is asserted after every try is that only blamed nodes change state.
TRIES=3

if want healthy; then
    before=$(states)
    same=1
    for t in $(seq 1 $TRIES); do
        check_job healthy -- --drain
        [ "$(states)" = "$before" ] || same=0
        [ "$RC" = 0 ] && break
    done
    expect "healthy: check job exits 0 (try $t)" [ "$RC" = 0 ]
    expect "healthy: report completed, no failed node" \
        [ "$(rjson "$REP" "r['summary'].get('completed') is True and not r['summary']['failed_nodes']")" = True ]
    expect "healthy: 4 hosts in the report" [ "$(rjson "$REP" "sorted(n['hostname'] for n in r['nodes'])")" = "['h1', 'h2', 'h3', 'h4']" ]
    expect "healthy: no node changed state after any try ($(states))" [ $same = 1 ]
fi

if want rate; then
    ntc_fault h2 rate 300000000 both || bad "rate: tc failed"
    for t in $(seq 1 $TRIES); do
        check_job rate-dry -- --drain=dry-run
        [ "$(rjson "$REP" "[f['host'] for f in r['summary']['failed_nodes']]")" = "['h2']" ] && break
    done
    expect "rate: --drain=dry-run prints one scontrol line for sn2 (not h2) and changes nothing (try $t)" \
        [ "$(grep -c '^scontrol update NodeName=sn2 State=DRAIN Reason=.nettune:' "$OUT/rate-dry.log")" = 1 ] &&
        [ "$(grep -c '^scontrol' "$OUT/rate-dry.log")" = 1 ] && [ "$(nts_state sn2)" = idle ]
    others=1
    for t in $(seq 1 $TRIES); do
        check_job rate -- --drain
        st=$(states)
        [[ $st == "sn1=idle sn2="*" sn3=idle sn4=idle" ]] || others=0
        [ "$(nts_state sn2)" = drained ] && break
    done
    ntc_fault h2 clear
    expect "rate: check job exits 1 (try $t)" [ "$RC" = 1 ]
    expect "rate: h2 alone blamed in the report" [ "$(rjson "$REP" "[f['host'] for f in r['summary']['failed_nodes']]")" = "['h2']" ]
    expect "rate: exactly sn2 drained ($st), no other node after any try" [ "$st" = "sn1=idle sn2=drained sn3=idle sn4=idle" ] && [ $others = 1 ]
    r2=$(nts_reason sn2)
    # Slurm's reason is the report's failed node reason with its code first (nt_failed_node_reason)
    expect "rate: sn2's reason is the report's, code first ($r2)" [ "$r2" = "$(rjson "$REP" "'nettune:' + r['summary']['failed_nodes'][0]['code'] + ' ' + r['summary']['failed_nodes'][0]['reason'].removeprefix('nettune:')")" ] &&
        match "$r2" "nettune:NT-*"
    echo "  sinfo -R after the rate-limited check job:"
    nts_run sinfo -R | sed 's/^/    /' | tee "$OUT/sinfo-R.txt"
    nts_run timeout -k 10 60 srun -N3 -t 1 hostname > "$OUT/after-rate.txt" 2>&1
    settle
    expect "rate: a 3-node job runs on the others ($(sort "$OUT/after-rate.txt" | tr '\n' ' '))" \
        [ "$(sort "$OUT/after-rate.txt" | tr '\n' ' ')" = "h1 h3 h4 " ]
fi

if want srun; then
    # srun as the launcher, on the 3 nodes left (sn2 is drained): the time limit, and a peer
    # stopped with SIGSTOP while the check job runs. srun ends a step only when every task
    # has ended: a stopped task never does, so the check job runs with --kill-on-bad-exit.
    # A round takes about 1.2 s (4 sizes x 0.3 s): the limit stops the run between rounds,
    # and the peer deadline (lowered to the limit) outlasts a round in flight.
    for t in $(seq 1 $TRIES); do
        CJ_N=3 check_job timelimit -- --time-limit 2.5 --sizes 8,64K,1M,4M --budget 0.3
        [ "$RC" = 3 ] && break
    done
    expect "srun: --time-limit: exits 3 (try $t)" [ "$RC" = 3 ]
    expect "srun: --time-limit: report completed:false" [ "$(rjson "$REP" "r['summary'].get('completed')")" = False ]
    REP=$OUT/stop.json
    rm -f "$OUT"/stop.rc.*
    nts_run timeout -k 10 120 srun --mpi=pmix -N3 --ntasks-per-node=1 -t 5 --kill-on-bad-exit=1 \
        sh -c '"$0" "$@"; rc=$?; echo $rc > "'"$OUT"'/stop.rc.$SLURM_PROCID"; exit $rc' \
        "$NT" probe --full "${POPTS[@]}" --sizes 8,1M,4M --budget 0.3 --output "$REP" > "$OUT/stop.log" 2>&1 &
    spid=$!
    stopped=
    for _ in $(seq 1 100); do
        stopped=$(ntc_host_pids h3 nettune-probe | head -1)
        [ -n "$stopped" ] && break
        sleep 0.1
    done
    sleep 1
    [ -n "$stopped" ] && kill -STOP "$stopped"
    wait "$spid"
    RC=$?
    [ -n "$stopped" ] && kill -CONT "$stopped" 2>/dev/null
    settle
    echo "  stop: srun exit $RC, rank 0 exit $(cat "$OUT/stop.rc.0" 2>/dev/null), $(rjson "$REP" "r['summary']['verdict'], r['summary'].get('completed'), [(f['host'], f.get('cause')) for f in r['summary']['failed_nodes']]")"
    echo "  what srun printed:"
    grep '^srun' "$OUT/stop.log" | sed 's/^/    /'
    # Rank 0 exits 1 after its report, unless the step's abort (another rank's MPI_Abort once
    # it lost its partner) ends it first: then the report must be on disk all the same.
    r0=$(cat "$OUT/stop.rc.0" 2>/dev/null)
    expect "srun: SIGSTOPped peer: rank 0 exits 1, or the step's abort ended it after its report (rank 0: '${r0:-ended by the step}')" \
        match "${r0:-ended}" "@(1|ended)"
    # srun's own code is the worst of its tasks': 1, or 128+signal when the stopped task was
    # the last to end (Slurm's SIGTERM/SIGKILL of the step).
    expect "srun: SIGSTOPped peer: srun exits 1, 137 or 143 ($RC)" match "$RC" "@(1|137|143)"
    # On a loaded machine the stopped rank's partner is sometimes called silent too (the
    # probe engine's verdict, not Slurm's): h3 must be there, with cause no_answer.
    expect "srun: SIGSTOPped peer: h3 failed with cause no_answer" \
        [ "$(rjson "$REP" "('h3', 'no_answer') in [(f['host'], f.get('cause')) for f in r['summary']['failed_nodes']]")" = True ]
fi

if want prolog; then
    # sn3 (allocated first: lowest Weight) has Gres=gpu:2 and no GPU: its prolog fails on the
    # installed defaults (no NETTUNE_PROLOG_ARGS).
    : > "$NTS_DIR/prolog-on"
    job=$(nts_run sbatch --parsable -N2 -t 2 -o "$OUT/prolog-job.out" --wrap 'srun hostname | sort | tr "\n" " "')
    echo "  prolog: job $job"
    held=
    for _ in $(seq 1 120); do
        held=$(nts_run squeue -h -j "$job" -o '%T|%r' 2>/dev/null)
        # slurmctld gives the held job the reason "launch failed requeued held", or in its
        # place "JobHeldAdmin" (seen in 1 CI run of 4): both are the hold
        [[ $held == PENDING*@(held|JobHeldAdmin)* ]] && break
        sleep 0.5
    done
    echo "  prolog: job $job is '$held'; prolog runs: $(cut -d' ' -f2- "$NTS_DIR/prolog.runs" 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
    expect "prolog: the job is requeued and held ($held)" match "$held" "PENDING*@(held|JobHeldAdmin)*"
    r3=$(nts_reason sn3)
    expect "prolog: sn3 drained with nettune's reason from its GRES, not Slurm's 'Prolog error' ($(nts_state sn3): $r3)" \
        match "$r3" "nettune:NT-INV-001 gpus 0/2 *"
    settle
    drained=$(nts_run sinfo -h -N -t drain -o %N | sort | tr '\n' ' ')
    expect "prolog: sn3 (and sn2 if the rate scenario ran) drained, no other node ($drained)" \
        match "$drained" "@(sn2 sn3 |sn3 )"
    # A requeued job also gets a begin time some minutes ahead (squeue: BeginTime): start now.
    nts_run scontrol release "$job"
    nts_run scontrol update JobId="$job" StartTime=now
    for _ in $(seq 1 120); do
        [ -s "$OUT/prolog-job.out" ] && [ -z "$(nts_run squeue -h -j "$job" 2>/dev/null)" ] && break
        sleep 0.5
    done
    ran=$(cat "$OUT/prolog-job.out" 2>/dev/null)
    expect "prolog: once released, the job runs on 2 healthy nodes ($ran; $(nts_run squeue -h -j "$job" -o '%T|%r' 2>/dev/null))" \
        match "$ran" "@(h1 h2 |h1 h4 |h2 h4 )"
    rm -f "$NTS_DIR/prolog-on"
    settle
fi

if want health; then
    # The health check (every 5 s, idle nodes): sn3 "repaired" (thresholds it meets) is
    # resumed; sn2, drained by the check job for its link, stays (a local check does not
    # re-check links); sn4, drained by an administrator, stays.
    [ "$(nts_state sn3)" = drained ] || nts_run scontrol update NodeName=sn3 State=DRAIN Reason="nettune:gpus 0/2 0 GPUs found, 2 expected"
    nts_run scontrol update NodeName=sn4 State=DRAIN Reason="admin: replacing a fan"
    cp tests/slurm/thresholds-pass.json "$NTS_DIR/thresholds.json"
    : > "$NTS_DIR/healthcheck-on"
    nts_wait_state sn3 idle 60
    sleep 6 # one more health check round on every node
    rm -f "$NTS_DIR/healthcheck-on"
    echo "  health: runs $(cut -d' ' -f2- "$NTS_DIR/healthcheck.runs" 2>/dev/null | sort | uniq -c | tr '\n' ' ')"
    expect "health: sn3 resumed once it passes ($(nts_state sn3))" [ "$(nts_state sn3)" = idle ]
    expect "health: sn4 (administrator's drain) untouched ($(nts_state sn4): $(nts_reason sn4))" \
        [ "$(nts_state sn4)" = drained ] && [ "$(nts_reason sn4)" = "admin: replacing a fan" ]
    expect "health: sn2 (drained for its link) stays drained ($(nts_state sn2): $(nts_reason sn2))" \
        [ "$(nts_state sn2)" = drained ] && match "$(nts_reason sn2)" "nettune:NT-*-[0-9][0-9][0-9] bw*"
    echo "  sinfo -R at the end:"
    nts_run sinfo -R | sed 's/^/    /'
fi

if want contrib; then
    # The prolog run as slurmd runs it (on h1, SLURMD_NODENAME=sn1), by hand: no job needed.
    C=$NTS_DIR/contrib
    mkdir -p "$C/bin" "$C/sysfs/sys/bus/pci/devices/0000:3b:00.0" "$C/tf"
    # scontrol that refuses updates as a non-operator would; logger that records its line.
    real_scontrol=$(command -v scontrol)
    printf '#!/bin/sh\nif [ "$1" = update ]; then echo "slurm_update error: Access/permission denied" >&2; exit 1; fi\nexec %s "$@"\n' "$real_scontrol" > "$C/bin/scontrol"
    printf '#!/bin/sh\necho "$*" >> %s/logger.lines\n' "$C" > "$C/bin/logger"
    chmod +x "$C/bin/scontrol" "$C/bin/logger"
    # An InfiniBand controller (class 0x0207) with no RDMA device: its driver did not load.
    echo 0x020700 > "$C/sysfs/sys/bus/pci/devices/0000:3b:00.0/class"
    prolog() # ENV... -- ARGS: rc, stderr in $C/err
    {
        local e=()
        while [ "$1" != -- ]; do e+=("$1"); shift; done
        shift
        ntc_exec h1 env SLURM_CONF="$NTS_CONF" SLURMD_NODENAME=sn1 NETTUNE="$NT" \
            NETTUNE_REPORT_DIR="$C/reports" NETTUNE_TEXTFILE_DIR="$C/tf" PATH="$C/bin:$PATH" "${e[@]}" \
            "$ROOT/contrib/slurm/nettune-prolog.sh" "$@" 2> "$C/err"
    }
    metric() { sed -n 's/^nettune_config_error{node="sn1",source="prolog"} //p' "$C/tf/nettune_prolog.prom" 2>/dev/null; }
    prolog NETTUNE_SYSFS_ROOT="$C/sysfs" -- --on-config-error=pass
    rc=$?
    err=$(tr '\n' ' ' < "$C/err")
    expect "contrib: sn1 expected 1 NIC from its sysfs topology, fails, the refused drain said as failed, never drained (rc $rc: $err)" \
        match "$rc|$err|$(nts_state sn1)" "1|*rdma_ports*failed its checks, but it is not drained*exit 1: slurm_update error: Access/permission denied*|idle"
    expect "contrib: the word 'drained' only where sinfo shows it" [ "$(grep -c '(drained' "$C/err")" = 0 ]
    prolog NETTUNE_PROLOG_ARGS="--thresholds $C/none.json" -- --on-config-error=pass
    rc=$?
    expect "contrib: bad thresholds pass the job (rc $rc), say so ($(tail -1 "$C/err"))" \
        match "$rc|$(tail -1 "$C/err")" "0|nettune prolog: sn1: configuration error: nettune probe exit 2: *none.json*--on-config-error=pass*"
    expect "contrib: the error is in syslog ($(tail -1 "$C/logger.lines" 2>/dev/null))" \
        match "$(tail -1 "$C/logger.lines" 2>/dev/null)" "-t nettune-prolog -p user.err sn1: configuration error: nettune probe exit 2: *"
    expect "contrib: nettune_config_error 1 in the textfile folder ($(metric))" [ "$(metric)" = 1 ]
    prolog NETTUNE_PROLOG_ARGS="--expect gpus=0" -- --on-config-error=pass
    expect "contrib: a good run sets nettune_config_error back to 0 ($(metric))" [ "$(metric)" = 0 ]
    prolog NETTUNE_PROLOG_ARGS="--expect gpus=0" -- --on-config-error=sometimes
    expect "contrib: a bad option of the prolog is a configuration error ($(tail -1 "$C/err"); metric $(metric))" \
        match "$(tail -1 "$C/err")|$(metric)" "*unknown option '--on-config-error=sometimes'*|1"
    ntc_exec h1 env SLURM_CONF="$NTS_CONF" SLURMD_NODENAME=sn1 NETTUNE="$NT" NETTUNE_REPORT_DIR="$C/reports" \
        NETTUNE_TEXTFILE_DIR="$C/tf" PATH="$C/bin:$PATH" \
        NETTUNE_PROLOG_ARGS="--thresholds $C/none.json" "$ROOT/contrib/slurm/nettune-prolog.sh" --on-config-error=drain 2> "$C/err"
    rc=$?
    expect "contrib: --on-config-error=drain with a refused drain: exit $rc, said ($(tail -1 "$C/err"))" \
        match "$rc|$(tail -1 "$C/err")|$(nts_state sn1)" "1|*draining it failed (scontrol exit 1: slurm_update error: Access/permission denied)|idle"
    ntc_exec h1 env SLURM_CONF="$NTS_CONF" SLURMD_NODENAME=sn1 NETTUNE="$NT" NETTUNE_REPORT_DIR="$C/reports" \
        NETTUNE_TEXTFILE_DIR="$C/tf" PATH="$C/bin:$PATH" \
        NETTUNE_PROLOG_ARGS="--thresholds $C/none.json" sh -c 'rm "$0"/bin/scontrol; exec "$1" --on-config-error=drain' "$C" \
        "$ROOT/contrib/slurm/nettune-prolog.sh" 2> "$C/err"
    rc=$?
    expect "contrib: --on-config-error=drain drains sn1 (exit $rc, $(nts_state sn1): $(nts_reason sn1); $(tail -1 "$C/err"))" \
        match "$rc|$(nts_state sn1)|$(nts_reason sn1)|$(tail -1 "$C/err")" "1|drained|nettune:config_error nettune probe exit 2*|*drained: --on-config-error=drain)"
    nts_run scontrol update NodeName=sn1 State=RESUME
    rm -rf "$C/inst"
    make -s --no-print-directory -C "$ROOT" install DESTDIR="$C/inst" > "$C/install.log" 2>&1
    expect "contrib: make install puts the scripts in PREFIX/lib/nettune ($(cd "$C/inst" 2>/dev/null && find . -type f -printf '%m %p ' | sort))" \
        [ -x "$C/inst/usr/local/lib/nettune/nettune-prolog.sh" ] && [ -x "$C/inst/usr/local/lib/nettune/nettune-healthcheck.sh" ] && [ -r "$C/inst/usr/local/lib/nettune/nettune-slurm-lib.sh" ]
fi

keep
echo "test-slurm: $PASSES passed, $FAILS failed"
[ "$FAILS" = 0 ]
