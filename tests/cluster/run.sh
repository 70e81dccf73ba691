#!/bin/bash
# nettune's multi-host scenarios on the namespace cluster (tests/cluster/lib.sh): 4 and 8
# hosts with 2 ranks each, real TCP between hosts (btl tcp,vader,self), faults on one host's
# link. Every case runs the real `nettune probe` under mpirun and asserts on its report
# (check_cluster.py, check_report.py). Ends with "cluster: N passed, N failed".
#
#   tests/cluster/run.sh            each scenario once, --quick (make test-cluster, CI)
#   tests/cluster/run.sh --long     healthy 20 x 4 hosts and 10 x 8 hosts, 10 tries per signal,
#                                   then the detection table (make test-cluster-long)
#   tests/cluster/run.sh NAME...    only these scenarios (names as printed)
#   tests/cluster/run.sh ompi-recovery
#                                   (only by name) Open MPI's mpirun under orte_enable_recovery=1
#                                   with a plain MPI program: does it end once a rank is killed?
#   tests/cluster/run.sh --repeat=N NAME...
#                                   the 4-host fault scenarios and two-slow N times each (one
#                                   cluster, one healthy baseline run); NTC_HEALTHY4=N and
#                                   NTC_HEALTHY8=N set the healthy runs' counts, NTC_BIN the
#                                   folder of the binaries (default build/bin)
#
# Fault sizes come from a healthy run made first on the same cluster: the rate limits are 1/3,
# 1/10 and 1/100 of its median inter-node bandwidth, the delay 5x its median 8 B latency.
# Skips (exit 0, with the reason) where namespaces, tc, clang, mpirun or the probe are missing.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
LONG=0
REPEAT=1
ONLY=" "
for a in "$@"; do
    case $a in
    --long) LONG=1 ;;
    --repeat=*) REPEAT=${a#--repeat=} ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) ONLY="$ONLY$a " ;;
    esac
done
# shellcheck source=tests/cluster/lib.sh
. tests/cluster/lib.sh
# NTC_BIN: the binaries to test (default build/bin; e.g. another BUILD= folder)
NT=${NTC_BIN:-$ROOT/build/bin}/nettune
CHECK="/usr/bin/python3 $ROOT/tests/cluster/check_cluster.py"
CHECK_REPORT="/usr/bin/python3 $ROOT/tests/integration/check_report.py"

skip() { echo "cluster: skipped: $*"; exit 0; }
reason=$(ntc_skip_reason)
[ -z "$reason" ] || skip "$reason"
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"
[ -x "$(dirname "$NT")/nettune-probe" ] || skip "nettune-probe is not built (no MPI at build time)"
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || skip "python3-jsonschema is not installed"

# --peer-timeout of the cases with a silent host: below Open MPI's oob keepalive abort
# (5 + 2 x 3 = 11 s). The other cases keep the default (30 s): on 2 shared cores a healthy rank
# of 16 can go 3 s without progress.
PT=3
RUN_TIMEOUT=150  # a run still going after this is a hang: killed, and the case fails
OPTS=(--quick --sizes 8,1M --budget 0.05 --samples all)
if [ $LONG = 1 ]; then N_HEALTHY4=20; N_HEALTHY8=10; N_SIGNAL=10; else N_HEALTHY4=1; N_HEALTHY8=1; N_SIGNAL=2; fi
# NTC_HEALTHY4 / NTC_HEALTHY8: other counts of healthy runs (false-alarm counts by hand).
N_HEALTHY4=${NTC_HEALTHY4:-$N_HEALTHY4}; N_HEALTHY8=${NTC_HEALTHY8:-$N_HEALTHY8}
# NTC_SIGNAL_TRIES: other counts of tries per signal.
N_SIGNAL=${NTC_SIGNAL_TRIES:-$N_SIGNAL}

pass=0; fail=0; failed=""; xfail=0; xfailed=""
DETECT=()       # long run: one line per fault scenario
# Known failures: scenario -> why (a probe engine or verdict limit, reported upstream). Such a
# case prints XFAIL with its findings and does not fail the suite; NTC_STRICT=1 makes it fail.
# One that passes prints "ok" as any other.
declare -A KNOWN=(
    [rate3-both]="a 1/3 rate limit on h3 is not blamed when the healthy links spread widely on the shared cores (in about 4 of 6 suite runs, and 1 of 1 after the map-by-node and latency cases; alone, 3 of 3 blamed h3): in that run the 12 links without h3 measured 0.75-2.55 GB/s (3.4x, as the healthy baseline's 0.76-2.58), the peer rule's noise widening (docs/verdicts.md, Noise) put the limit at 24% of the 1.09 GB/s reference, and h3's 12 links at 0.50-0.54 GB/s passed, though each is below every link without it (a rule of order the peer rule does not have); 1/10 and 1/100 are blamed every time; strict with NTC_STRICT=1"
    [loss]="5% loss: h2 blamed (p99 rule) in 5 of 5 tries with a 100 ms minimum RTO (the default; 37-42 s, once 70 s); with 50 ms 2 of 3 (24-28 s; the third judged unstable, 7 of 32 links flaky, nobody blamed), with 20 ms 0 of 1; with the kernel's 200 ms blamed but 65-73 s"
    [sigkill-recovery]="Open MPI: with orte_enable_recovery=1 ORTE 4.1 keeps mpirun and its orteds running after every rank has ended (measured: report final at 7.8 s naming h3, no_answer, DRAIN line; no rank left at 12.7 s, only mpirun + 3 orteds; earlier still there at 63 s). Not nettune: tests/cluster/ompi_recovery.c, a plain MPI program (run.sh ompi-recovery), keeps mpirun running too on 4 hosts (25 s, killed) and ends on 2 hosts (6.0 s, exit 0 whatever the abort code)"
)
SCEN=""
# [seconds since the suite started] before each result line: where the suite's time goes.
stamp() { since "$T_ALL"; }
ok() { pass=$((pass + 1)); echo "ok   [$(stamp)] $1"; }
bad()
{
    if [ -n "$SCEN" ] && [ -n "${KNOWN[$SCEN]:-}" ] && [ "${NTC_STRICT:-0}" != 1 ]; then
        xfail=$((xfail + 1)); xfailed="$xfailed|$SCEN: ${KNOWN[$SCEN]}"; echo "XFAIL [$(stamp)] $1 (known: ${KNOWN[$SCEN]})"
    else
        fail=$((fail + 1)); failed="$failed|$1"; echo "FAIL [$(stamp)] $1"
    fi
    [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/     /' "$2"
}
# want NAME: true when scenario NAME is to run (every one, or those named); it becomes SCEN.
want() { [ "$ONLY" = " " ] || [[ $ONLY == *" $1 "* ]] || return 1; SCEN=$1; }
# named NAME: true only when NAME was asked for by name (a study, not a scenario of the suite).
named() { [[ $ONLY == *" $1 "* ]] || return 1; SCEN=$1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# True while PID is a live process (a zombie child counts as gone).
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# Kills what a run left in the hosts (ranks, orted, mpirun): each host must be empty between
# runs. Gives them 3 s to end on their own first.
reap()
{
    local h p left
    for _ in $(seq 1 30); do
        left=0
        for h in "${NTC_HOST_LIST[@]}"; do [ -n "$(ntc_host_pids "$h")" ] && left=1; done
        [ $left = 0 ] && return
        sleep 0.1
    done
    for h in "${NTC_HOST_LIST[@]}"; do
        for p in $(ntc_host_pids "$h"); do kill -KILL "$p" 2>/dev/null; done
    done
    sleep 0.2
}

# start_probe NAME [mpirun options] -- [probe options]: nettune probe on every host (2 ranks
# each) in the background; sets OUT (report), LOG (mpirun's output), MPIRUN_PID, T0.
start_probe()
{
    local name=$1 mo=() po=() o
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do mo+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    po=("$@")
    mkdir -p "$NTC_DIR/out"
    OUT=$NTC_DIR/out/$name.json
    LOG=$NTC_DIR/out/$name.log
    mapfile -t o < <(ntc_mpi_options)
    # Two consecutive ranks per host unless the case maps its own way (--map-by node).
    [[ " ${mo[*]} " == *" --map-by "* ]] || o+=(--map-by ppr:2:node)
    # When a rank exits non-zero (a failing verdict's exit 1, a killed rank, MPI_Abort) ORTE
    # 4.1's orted ends the ranks still alive with SIGCONT, sleep(odls_base_sigkill_timeout),
    # SIGTERM, sleep again, SIGKILL (orte/mca/odls/base/odls_base_default_fns.c,
    # orte_odls_base_default_kill_local_procs): 2 s of the default 1 after every failing run.
    # Rank 0 has written the final report and flushed its summary before any other rank can
    # exit, so those cases take 0. The signal cases keep the default: the second between
    # SIGCONT and SIGTERM is how mpirun's SIGINT/SIGTERM reaches the ranks there.
    [[ $name == sig[A-Z]* ]] || o+=(--mca odls_base_sigkill_timeout 0)
    T0=$(now)
    ntc_spawn "${NTC_HOST_LIST[0]}" env NTC_DIR="$NTC_DIR" OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "${o[@]}" --hostfile "$HF" -np $((2 * NTC_N)) \
        --bind-to none "${mo[@]}" "$NT" probe "${OPTS[@]}" "${po[@]}" \
        --output "$OUT" > "$LOG" 2>&1
    MPIRUN_PID=$NTC_LAST_PID
}

# wait_probe [SECONDS]: waits for the run (at most SECONDS, default RUN_TIMEOUT); sets RC,
# ELAPSED, REPORT_AT, HUNG.
wait_probe()
{
    local t h p
    HUNG=0
    while alive "$MPIRUN_PID"; do
        t=$(since "$T0")
        if [ "${t%.*}" -ge "${1:-$RUN_TIMEOUT}" ]; then
            HUNG=1
            kill -KILL "$MPIRUN_PID"
            break
        fi
        # WAIT_NO_RANKS=1: every rank has ended (for 1 s) but mpirun has not: it will not
        # (Open MPI's recovery mode); no need to wait for the bound.
        if [ "${WAIT_NO_RANKS:-0}" = 1 ] && [ "${t%.*}" -ge 3 ] && ! ranks_left; then
            sleep 1
            if alive "$MPIRUN_PID" && ! ranks_left; then
                HUNG=2
                echo "every rank has ended, mpirun has not after $(since "$T0") s: killed; left:" >> "$LOG"
                for h in "${NTC_HOST_LIST[@]}"; do
                    for p in $(ntc_host_pids "$h"); do echo "  $h $p $(tr '\0' ' ' < "/proc/$p/cmdline" | cut -c1-80)"; done
                done >> "$LOG"
                kill -KILL "$MPIRUN_PID"
                break
            fi
        fi
        sleep 0.1
    done
    wait "$MPIRUN_PID"
    RC=$?
    ELAPSED=$(since "$T0")
    # When the report reached its last state (its last write), seconds after the start.
    REPORT_AT=-1
    [ -f "$OUT" ] && REPORT_AT=$(awk -v a="$T0" -v b="$(stat -c %.9Y "$OUT")" 'BEGIN { printf "%.1f", b - a }')
    [ $HUNG = 1 ] && echo "still running after ${1:-$RUN_TIMEOUT} s: killed" >> "$LOG"
    [ $HUNG = 2 ] && HUNG=1
    reap
}

# True while a probe rank runs in some host.
ranks_left()
{
    local h
    for h in "${NTC_HOST_LIST[@]}"; do [ -n "$(ntc_host_pids "$h" nettune-probe)" ] && return 0; done
    return 1
}

# run_probe NAME [mpirun options] -- [probe options]: start_probe + wait_probe.
run_probe() { start_probe "$@"; wait_probe; }

# Waits until the run has written its first report and measured for a while (mid-run), at
# most 60 s; returns 1 when the run ended before.
wait_mid_run()
{
    local delay=${1:-1}
    for _ in $(seq 1 600); do
        alive "$MPIRUN_PID" || return 1
        [ -f "$OUT" ] && break
        sleep 0.1
    done
    sleep "$delay"
    alive "$MPIRUN_PID"
}

# A probe rank on HOST (its local rank 0): prints its pid.
rank_pid()
{
    local p
    for p in $(ntc_host_pids "$1" nettune-probe); do
        tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_LOCAL_RANK=0' &&
            { echo "$p"; return 0; }
    done
    return 1
}

# check NAME ARGS...: check_report.py (schema, sane figures, exit code vs verdict) and
# check_cluster.py check ARGS on the last run; ok/bad.
check()
{
    local name=$1
    shift
    if ! : > "$NTC_DIR/check"; then
        fail=$((fail + 1)); failed="$failed|$name: the run directory is gone"
        echo "FAIL $name: the run directory $NTC_DIR is gone"
        return 1
    fi
    if [ $HUNG = 1 ]; then
        echo "the run hung" >> "$NTC_DIR/check"
    elif [ ! -f "$OUT" ]; then
        echo "no report (exit $RC)" >> "$NTC_DIR/check"
    else
        $CHECK_REPORT "$OUT" >> "$NTC_DIR/check" 2>&1
        $CHECK check "$OUT" --rc "$RC" --elapsed "$ELAPSED" --report-at "$REPORT_AT" --nettune "$NT" "$@" >> "$NTC_DIR/check" 2>&1
    fi
    if [ -s "$NTC_DIR/check" ]; then
        tail -n 5 "$LOG" >> "$NTC_DIR/check"
        # Kept beside the last run's files (build/cluster/out-N): NAME.failK.json / .log.
        [ -f "$OUT" ] && cp "$OUT" "${OUT%.json}.fail$((fail + xfail + 1)).json"
        cp "$LOG" "${LOG%.log}.fail$((fail + xfail + 1)).log"
        bad "$name (exit $RC, $ELAPSED s)" "$NTC_DIR/check"
        return 1
    fi
    ok "$name (exit $RC, report final after $REPORT_AT s, mpirun gone after $ELAPSED s)"
}

detect_line()
{
    local d name=$1
    shift
    [ -f "$OUT" ] && d=$($CHECK detect "$OUT" "$@" 2>&1) || d="no report"
    DETECT+=("$(printf '%-26s exit=%-3s wall_s=%-5s %s' "$name" "$RC" "$ELAPSED" "$d")")
}

# Keeps the reports and logs of the cluster of N hosts in build/cluster/out-N (the run
# directory goes with the teardown).
keep_out()
{
    rm -rf "$NTC_BUILD/out-$1"
    mkdir -p "$NTC_BUILD"
    [ -d "$NTC_DIR/out" ] && cp -r "$NTC_DIR/out" "$NTC_BUILD/out-$1"
}

# ---------------------------------------------------------------- 4 hosts
scenarios4()
{
    local i fa=0 base bw lat rate shaped frac dir t0 pid okc stale f sig max_s hang_s
    ntc_up 4 || { bad "cluster of 4 hosts did not come up"; return; }
    HF=$(ntc_hostfile 2)
    HEALTHY_MAX=0
    for i in $(seq 1 $N_HEALTHY4); do
        SCEN=healthy4
        run_probe healthy4
        check "healthy, 4 hosts, run $i: no node blamed" --exit 0 --blamed "" --node-verdicts all || fa=$((fa + 1))
        [ -z "${base:-}" ] && [ -f "$OUT" ] && base=$($CHECK baseline "$OUT") && cp "$OUT" "$NTC_DIR/out/baseline4.json"
        HEALTHY_MAX=$(awk -v a="$HEALTHY_MAX" -v b="$ELAPSED" 'BEGIN { print (b > a ? b : a) }')
    done
    FALSE_ALARMS4="$fa of $N_HEALTHY4"
    if [ -z "${base:-}" ]; then
        bad "no healthy baseline on 4 hosts: the fault scenarios cannot be sized"
        keep_out 4
        ntc_down
        return
    fi
    bw=$(echo "$base" | python3 -c 'import json,sys; print("%.3g" % json.load(sys.stdin)["bw_Gbps"])')
    lat=$(echo "$base" | python3 -c 'import json,sys; print("%.3g" % json.load(sys.stdin)["lat_us"])')
    echo "     healthy baseline: $bw Gb/s, $lat us at 8 B (median of the inter-node links)"
    local rep
    for rep in $(seq 1 "$REPEAT"); do
    [ "$REPEAT" = 1 ] || echo "     repeat $rep of $REPEAT"

        # mpirun --map-by node: rank r on host r mod 4, so a host's ranks are not consecutive;
        # nodes are told apart by host name and boot id, not by rank - local rank.
        if want map-by-node; then
            run_probe map-by-node --map-by node
            check "--map-by node (h1 has ranks 0 and 4): 4 nodes of 2 ranks, no node blamed" --exit 0 \
                --blamed "" --map-by-node 4
        fi

        if want latency; then
            ntc_spawn h2 "$NTC_BUILD/ntc-pingpong" serve 7001 > "$NTC_DIR/out/pp-serve.log" 2>&1
            if ntc_exec h1 "$NTC_BUILD/ntc-pingpong" ping "$(ntc_ip h2)" 7001 8 5000 > "$NTC_DIR/out/pp.json" 2> "$NTC_DIR/check" &&
                $CHECK latency "$NTC_DIR/out/baseline4.json" --pingpong "$NTC_DIR/out/pp.json" --src h1 --dst h2 > "$NTC_DIR/check" 2>&1; then
                ok "latency: $(cat "$NTC_DIR/check")"
            else
                bad "latency: the probe's 8 B figure within 2x of a raw TCP ping-pong" "$NTC_DIR/check"
            fi
            LATENCY_LINE=$(cat "$NTC_DIR/check")
            wait "$NTC_LAST_PID" 2>/dev/null
        fi

        # One host rate-limited at 1/3, 1/10, 1/100 of the healthy rate (both directions), and at
        # 1/10 on its egress only.
        for spec in "3 both" "10 both" "100 both" "10 egress"; do
            read -r frac dir <<< "$spec"
            want "rate$frac-$dir" || continue
            # %.0f, not %d: mawk's %d is a 32-bit int (21.7e9 / 3 printed as 2147483647).
            rate=$(awk -v b="$bw" -v f="$frac" 'BEGIN { printf "%.0f", b * 1e9 / f }')
            ntc_fault h3 rate "$rate" "$dir" || { bad "rate 1/$frac $dir: tc failed"; continue; }
            run_probe "rate$frac-$dir"
            ntc_fault h3 clear
            shaped=$(awk -v r="$rate" 'BEGIN { printf "%.4g", r / 8e9 }')
            check "rate 1/$frac of $bw Gb/s on h3 ($dir): h3 alone blamed at that rate, exit 1" --exit 1 \
                --blamed h3 --reason-figure --shaped "$shaped" --drain-log "$LOG" --node-verdicts blamed
            detect_line "rate 1/$frac $dir (h3)" --shaped "$shaped"
            [ "$frac-$dir" = 100-both ] && SLOWEST_100=$($CHECK detect "$OUT" 2>/dev/null | grep -o 'slowest_link=[^ ]*')
        done

        if want loss; then
            # TCP's minimum retransmission timeout to and from h2 at 100 ms
            # (NTC_LOSS_RTO_MIN_MS; off: the kernel's 200 ms): every lost segment no later
            # segment repairs (control messages, the 8 B ping-pong) stalls that long, so the case
            # took 37-42 s in 4 of 5 tries (once 70 s) instead of 65-73. Lower is faster but
            # flakier: at 50 ms (24-28 s) 1 run of 3 was judged unstable (h2's links fail first
            # and pass on retest) and nobody blamed; at 100 ms h2 was blamed in 5 of 5.
            ntc_fault h2 loss 5 both || bad "loss: tc failed"
            LOSS_RTO=${NTC_LOSS_RTO_MIN_MS:-100}
            [ "$LOSS_RTO" = off ] || ntc_rto_min h2 "$LOSS_RTO"
            run_probe loss5
            [ "$LOSS_RTO" = off ] || ntc_rto_min h2 off
            ntc_fault h2 clear
            check "5% loss on h2 (both directions): h2 alone blamed, exit 1" --exit 1 --blamed h2 \
                --reason-figure --drain-log "$LOG" --node-verdicts blamed
            detect_line "loss 5% (h2)"
        fi

        if want delay; then
            t0=$(awk -v l="$lat" 'BEGIN { printf "%d", 5 * l + 0.5 }')
            ntc_fault h4 delay "$t0" both || bad "delay: forwarder failed"
            run_probe delay5x
            ntc_fault h4 clear
            check "delay 5x $lat us = $t0 us each way on h4: h4 alone blamed, exit 1" --exit 1 --blamed h4 \
                --reason-figure --drain-log "$LOG" --node-verdicts blamed
            detect_line "delay 5x latency (h4)"
        fi

        # A silent host: the run ends on its own within its budget plus 3 x --peer-timeout (the
        # slowest healthy run stands for its steps' budgets; 3 s for noise). That bounds the final
        # report; mpirun itself may then wait for Open MPI to give up on the lost host's orted
        # (its retransmissions: net.ipv4.tcp_retries2 = 4 in the hosts, about 6 s) - 15 s more at most.
        max_s=$(awk -v h="$HEALTHY_MAX" -v p="$PT" 'BEGIN { print h + 3 * p + 3 }')
        # Later than this mpirun has failed its bound (check_cluster --max-seconds: the report
        # by max_s, mpirun 15 s after): killed as a hang, no need to wait longer.
        hang_s=$(awk -v m="$max_s" 'BEGIN { printf "%d", m + 17 }')
        if want sigstop; then
            start_probe sigstop -- --peer-timeout "$PT"
            if wait_mid_run 1 && pid=$(rank_pid h3); then
                kill -STOP "$pid"
                wait_probe "$hang_s"
                kill -CONT "$pid" 2>/dev/null
                check "SIGSTOP of a rank on h3: ends by itself, h3 blamed (no_answer), exit 1" --exit 1 \
                    --blamed h3 --cause no_answer --completed false --reason-format --drain-log "$LOG" \
                    --node-verdicts all --max-seconds "$max_s"
            else
                wait_probe; bad "SIGSTOP: the run ended before a rank on h3 could be stopped" "$LOG"
            fi
            detect_line "SIGSTOP rank (h3)"
        fi
        if want linkdown; then
            start_probe linkdown -- --peer-timeout "$PT"
            if wait_mid_run 1; then
                ntc_fault h3 down
                wait_probe "$hang_s"
                ntc_fault h3 up
                check "link of h3 down mid-run: ends by itself, h3 blamed (no_answer), exit 1" --exit 1 \
                    --blamed h3 --cause no_answer --completed false --reason-format --drain-log "$LOG" \
                    --node-verdicts all --max-seconds "$max_s"
            else
                wait_probe; bad "link down: the run ended before the link could be taken down" "$LOG"
            fi
            detect_line "link down (h3)"
        fi

        # SIGKILL of a rank: under Open MPI's default mpirun ends the job and returns the rank's
        # fate (137); the report on disk is the last complete one. With orte_enable_recovery=1 the
        # job goes on and rank 0 names the host.
        if want sigkill; then
            start_probe sigkill
            if wait_mid_run 1 && pid=$(rank_pid h3); then
                kill -KILL "$pid"
                wait_probe
                : > "$NTC_DIR/check"
                [ $RC = 137 ] || echo "mpirun exit $RC, want 137 (the killed rank's)" >> "$NTC_DIR/check"
                $CHECK_REPORT "$OUT" >> "$NTC_DIR/check" 2>&1
                if [ -s "$NTC_DIR/check" ]; then bad "SIGKILL of a rank on h3 (default): mpirun ends the job" "$NTC_DIR/check"
                else ok "SIGKILL of a rank on h3 (default): mpirun exit 137, the report on disk is complete ($ELAPSED s)"; fi
            else
                wait_probe; bad "SIGKILL: the run ended before a rank on h3 could be killed" "$LOG"
            fi
            detect_line "SIGKILL rank (h3), default"
        fi
        if want sigkill-recovery; then
            start_probe sigkill-recovery --mca orte_enable_recovery 1 -- --peer-timeout "$PT"
            if wait_mid_run 1 && pid=$(rank_pid h3); then
                kill -KILL "$pid"
                WAIT_NO_RANKS=1 wait_probe "$hang_s"
                check "SIGKILL of a rank on h3 with orte_enable_recovery=1: h3 blamed (no_answer), exit 1" \
                    --exit 1 --blamed h3 --cause no_answer --completed false --drain-log "$LOG" \
                    --node-verdicts blamed --max-seconds "$max_s"
            else
                wait_probe; bad "SIGKILL (recovery): the run ended before a rank on h3 could be killed" "$LOG"
            fi
            detect_line "SIGKILL rank (h3), recovery"
        fi

        # Only when named: the same fate without nettune (tests/cluster/ompi_recovery.c), on 2
        # and on 4 hosts; prints how long mpirun took to end, or that it did not in 25 s.
        if named ompi-recovery; then
            mpicc -O2 -o "$NTC_BUILD/ntc-ompi-recovery" tests/cluster/ompi_recovery.c || bad "ompi-recovery: mpicc failed"
            local nh mode hf2 rc2 t1
            for nh in 2 4; do
                hf2=$NTC_DIR/hostfile$nh
                head -n "$nh" "$HF" > "$hf2"
                for mode in 0 1; do
                    mapfile -t o < <(ntc_mpi_options)
                    t1=$(now)
                    ntc_exec h1 env NTC_DIR="$NTC_DIR" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
                        timeout 25 mpirun "${o[@]}" --map-by ppr:2:node --hostfile "$hf2" -np $((2 * nh)) \
                        --bind-to none --mca orte_enable_recovery 1 "$NTC_BUILD/ntc-ompi-recovery" "$mode" \
                        > "$NTC_DIR/out/ompi-recovery-$nh-$mode.log" 2>&1
                    rc2=$?
                    reap
                    echo "     plain MPI, $nh hosts, rank $((2 * nh - 1)) SIGKILLed, survivors $([ $mode = 0 ] && echo "all MPI_Abort" || echo "rank 0 MPI_Abort, others _exit"): mpirun $([ $rc2 = 124 ] && echo "still running after 25 s (killed)" || echo "ended after $(since "$t1") s, exit $rc2")"
                done
            done
        fi

        # SIGINT / SIGTERM to mpirun mid-run: the report on disk says the run was stopped by the
        # signal in >= 90% of the tries; temporary files of a try are gone after the next start.
        for sig in INT TERM; do
            want "sig$sig" || continue
            okc=0; stale=0
            : > "$NTC_DIR/sigcheck"
            rm -f "$NTC_DIR/out/sig$sig.json"*
            for i in $(seq 1 $N_SIGNAL); do
                local before
                before=$(ls "$NTC_DIR/out/sig$sig.json.tmp."* 2>/dev/null)
                # The earlier try's report goes (its temporary files stay: the probe's start
                # removes them): mid-run is this try's first report, and what is judged is this
                # try's report, or none.
                rm -f "$NTC_DIR/out/sig$sig.json"
                start_probe "sig$sig"
                if wait_mid_run "0.$((RANDOM % 9 + 1))"; then
                    kill -"$sig" "$MPIRUN_PID"
                    wait_probe
                    if [ -f "$OUT" ] && $CHECK_REPORT "$OUT" > "$NTC_DIR/check" 2>&1 &&
                        $CHECK check "$OUT" --signal >> "$NTC_DIR/check" 2>&1; then
                        okc=$((okc + 1))
                    else
                        { echo "try $i (mpirun exit $RC):"; cat "$NTC_DIR/check"; } >> "$NTC_DIR/sigcheck"
                        # Kept beside the last run's files (build/cluster/out-4): sigX.failK.*
                        [ -f "$OUT" ] && cp "$OUT" "${OUT%.json}.fail$i.json"
                        cp "$LOG" "${LOG%.log}.fail$i.log"
                    fi
                else
                    wait_probe
                    echo "try $i: the run ended before the signal (exit $RC)" >> "$NTC_DIR/sigcheck"
                fi
                for f in $before; do [ -e "$f" ] && stale=$((stale + 1)) && echo "try $i: $f of an earlier try is still there" >> "$NTC_DIR/sigcheck"; done
            done
            if [ $((okc * 10)) -ge $((N_SIGNAL * 9)) ] && [ $stale = 0 ]; then
                ok "SIG$sig to mpirun: the report says so in $okc of $N_SIGNAL tries, no stale temporary files"
            else
                bad "SIG$sig to mpirun: the report says so in $okc of $N_SIGNAL tries, $stale stale temporary files" "$NTC_DIR/sigcheck"
            fi
            DETECT+=("$(printf '%-26s %d of %d tries: report says stopped by the signal' "SIG$sig to mpirun" $okc $N_SIGNAL)")
        done
    done
    keep_out 4
    ntc_down
}

# ---------------------------------------------------------------- 8 hosts
scenarios8()
{
    local i fa=0 base bw rate shaped
    ntc_up 8 || { bad "cluster of 8 hosts did not come up"; return; }
    HF=$(ntc_hostfile 2)
    for i in $(seq 1 $N_HEALTHY8); do
        SCEN=healthy8
        run_probe healthy8
        check "healthy, 8 hosts, run $i: no node blamed" --exit 0 --blamed "" --node-verdicts all || fa=$((fa + 1))
        [ -z "${base:-}" ] && [ -f "$OUT" ] && base=$($CHECK baseline "$OUT")
    done
    FALSE_ALARMS8="$fa of $N_HEALTHY8"
    local rep
    for rep in $(seq 1 "$REPEAT"); do
    if want two-slow; then
        if [ -z "${base:-}" ]; then
            bad "no healthy baseline on 8 hosts: two slow hosts cannot be sized"
        else
            bw=$(echo "$base" | python3 -c 'import json,sys; print("%.3g" % json.load(sys.stdin)["bw_Gbps"])')
            rate=$(awk -v b="$bw" 'BEGIN { printf "%.0f", b * 1e9 / 10 }')
            ntc_fault h3 rate "$rate" both && ntc_fault h6 rate "$rate" both || bad "two slow: tc failed"
            start_probe two-slow
            wait_probe 300
            ntc_fault h3 clear; ntc_fault h6 clear
            shaped=$(awk -v r="$rate" 'BEGIN { printf "%.4g", r / 8e9 }')
            check "two hosts of 8 at 1/10 of $bw Gb/s: h3 and h6 blamed at that rate, no third, exit 1" \
                --exit 1 --blamed h3,h6 --reason-figure --shaped "$shaped" --drain-log "$LOG" --node-verdicts blamed
            detect_line "two slow of 8 (h3,h6)" --shaped "$shaped"
        fi
    fi
    done
    keep_out 8
    ntc_down
}

T_ALL=$(now)
only8=1
for a in $ONLY; do case $a in healthy8|two-slow) ;; *) only8=0 ;; esac; done
[ "$ONLY" = " " ] || [ $only8 = 0 ] && scenarios4
[ "$ONLY" = " " ] || want healthy8 || want two-slow && scenarios8

if [ $LONG = 1 ]; then
    echo "=== detection (make test-cluster-long)"
    echo "false alarms: ${FALSE_ALARMS4:-?} healthy runs of 4 hosts, ${FALSE_ALARMS8:-?} of 8 hosts"
    [ -n "${LATENCY_LINE:-}" ] && echo "latency: $LATENCY_LINE"
    [ -n "${SLOWEST_100:-}" ] && echo "slowest step at 1/100 rate: $SLOWEST_100"
    printf '%s\n' "${DETECT[@]}"
fi
echo "cluster: $pass passed, $fail failed, $xfail known failures ($(since "$T_ALL") s)"
[ -n "$failed" ] && echo "failed:${failed//|/$'\n'  }"
[ -n "$xfailed" ] && echo "known failures:${xfailed//|/$'\n'  }"
[ $fail = 0 ]
