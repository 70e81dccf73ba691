#!/bin/bash
# nettune watch on the namespace cluster (tests/cluster/lib.sh), with real timings: ntc-trainer
# (trainer.c) runs on 8 hosts, one rank each, writing NCCL Inspector's JSON records every
# second, while `nettune watch --follow` reads them. One training run holds every case, one
# after the other, each read by a watch of its own (started when the case starts, reading the
# files from their beginning): a healthy stretch (no host or rank may be named), then faults
# injected mid-run on a host or rank drawn at random (the seed is printed; NTC_SEED=N replays
# it): a rate limit on the host's link, added delay, packet loss, one rank with 1.5x compute
# (a straggler), one rank SIGSTOPped (a hang, last). The watch must name that host (network)
# or rank (compute, hang) and nothing else; the delay from the fault to the first document
# that does is printed in dump intervals. Before the next fault the previous one is cleared and
# the watch must name nobody again. The healthy stretch sizes the faults. Ends with
# "watch-cluster: N passed, N failed".
#
#   tests/watch-cluster/run.sh          the run above (make test-watch-cluster)
#   tests/watch-cluster/run.sh --long   the run above NTC_WATCH_REPEAT (default 3) times, and
#                                       NTC_WATCH_HEALTHY (default 10) healthy runs of 20 s,
#                                       then the false-alarm count (make test-cluster-long)
#   tests/watch-cluster/run.sh NAME...  only these faults (rate delay loss straggler hang)
#
# Skips (exit 0, one line why) where the cluster cannot run (ntc_skip_reason), or without
# mpirun or the trainer.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
BUILD=${BUILD:-build}
LONG=0
ONLY=" "
for a in "$@"; do
    case $a in
    --long) LONG=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) ONLY="$ONLY$a " ;;
    esac
done
[ $LONG = 1 ] && NTC_STRICT=${NTC_STRICT:-1} # the long variant holds known cases to account
# shellcheck source=tests/cluster/lib.sh
. tests/cluster/lib.sh
TRAINER=$ROOT/$BUILD/watch-cluster/ntc-trainer
WATCH=$ROOT/$BUILD/bin/nettune-watch
CHECK="/usr/bin/python3 $ROOT/tests/watch-cluster/check_watch.py"
skip() { echo "watch-cluster: skipped: $*"; exit 0; }
reason=$(ntc_skip_reason)
[ -z "$reason" ] || skip "$reason"
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"
[ -x "$TRAINER" ] || skip "$BUILD/watch-cluster/ntc-trainer is not built (no mpicc at build time)"
[ -x "$WATCH" ] || skip "$BUILD/bin/nettune-watch is not built"

SEED=${NTC_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
RANDOM=$SEED
echo "watch-cluster: seed $SEED (NTC_SEED=$SEED replays the draws)"
DUMP_S=1           # the trainer's dump interval (--dump-ms 1000: the issue's floor)
BEFORE=6           # seconds of healthy training before the fault (the judgements' baselines)
BOUND=8            # dump intervals a fault may take to be named before the case fails
HEALTHY_S=8        # seconds of the healthy stretch (from the first dump)
# Hosts and ranks per host (NTC_WATCH_HOSTS, NTC_WATCH_PPN); the trainer's tensor-parallel
# groups are TP consecutive ranks, its data-parallel groups every TP-th rank.
NH=${NTC_WATCH_HOSTS:-8}; PPN=${NTC_WATCH_PPN:-1}; TP=${NTC_WATCH_TP:-4}
RECOVER=6         # seconds a cleared fault may take to be named by nobody
if [ $LONG = 1 ]; then N_HEALTHY=${NTC_WATCH_HEALTHY:-10}; N_RUN=${NTC_WATCH_REPEAT:-3}; else N_HEALTHY=0; N_RUN=1; fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
want() { [ "$ONLY" = " " ] || [[ $ONLY == *" $1 "* ]]; }

pass=0; fail=0; failed=""; alarms=0; onsets=0; xfail=0; DETECT=()
# Known misses: fault -> why (a limit of the judgements, measured). Such a case prints XFAIL
# and does not fail the suite; NTC_STRICT=1 makes it fail (test-cluster-long). One that passes
# prints "ok".
declare -A KNOWN=(
    [loss]="10% loss on one host's link: its calls stall on TCP retransmission timeouts in some steps only; the stall rule (judge_node.c) names the host once two of its communicators stalled: 40 of 43 runs at the current rules after 1.3-8.3 dump intervals (docs/watch.md), but the stalls can fall in its data-parallel pair alone for 7 s (which host of the two, only a stall elsewhere tells), near the bound of 8"
)
ok() { pass=$((pass + 1)); echo "ok   [$(since "$T_ALL")] $1"; }
bad() { local m=${1//$'\n'/ / }; fail=$((fail + 1)); failed="$failed|$m"; echo "FAIL [$(since "$T_ALL")] $m"; }

# Kills what a run left in the hosts (ranks stopped by a case too: SIGKILL ends them).
reap()
{
    local h p
    for h in "${NTC_HOST_LIST[@]}"; do
        for p in $(ntc_host_pids "$h"); do kill -KILL "$p" 2>/dev/null; done
    done
    for _ in $(seq 1 30); do
        local left=0
        for h in "${NTC_HOST_LIST[@]}"; do [ -n "$(ntc_host_pids "$h")" ] && left=1; done
        [ $left = 0 ] && return
        sleep 0.1
    done
}

# train NAME SECONDS: the trainer on every host, in the background; sets D (Inspector's
# directory), CTL (its control file), MPIRUN_PID, T0.
train()
{
    local name=$1 secs=$2 o
    D=$NTC_DIR/out/$name
    CTL=$NTC_DIR/out/$name.control
    mkdir -p "$D"
    rm -f "$CTL"
    mapfile -t o < <(ntc_mpi_options)
    # mpi_yield_when_idle: ranks spin-wait on 2 shared cores otherwise, and their exec times
    # would be the scheduler's. nice: ranks blocked behind a stopped one spin (yielding) on
    # every core, and the watch that must see it starved (measured: a hang named after 8-15
    # dump intervals instead of 3-4).
    T0=$(now)
    ntc_spawn "${NTC_HOST_LIST[0]}" env NTC_DIR="$NTC_DIR" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        mpirun "${o[@]}" --hostfile "$HF" -np $((PPN * NH)) --map-by ppr:$PPN:node --bind-to none \
        --mca mpi_yield_when_idle 1 --mca odls_base_sigkill_timeout 0 \
        nice -n 10 "$TRAINER" --dir "$D" --seconds "$secs" --tp $TP --dump-ms $((DUMP_S * 1000)) --control "$CTL" \
        > "$NTC_DIR/out/$name.log" 2>&1
    MPIRUN_PID=$NTC_LAST_PID
}

# watch CASE: a new `nettune watch --follow` of D writing DOC ($NTC_DIR/out/CASE.watch.json).
watch()
{
    [ -n "${WATCH_PID:-}" ] && { kill -TERM "$WATCH_PID" 2>/dev/null; wait "$WATCH_PID" 2>/dev/null; }
    DOC=$NTC_DIR/out/$1.watch.json
    "$WATCH" "$D" --follow --interval 1 --output "$DOC" --quiet 2> "$NTC_DIR/out/$1.watch.err" &
    WATCH_PID=$!
}

stop()
{
    kill -TERM "$WATCH_PID" 2>/dev/null
    wait "$WATCH_PID" 2>/dev/null
    WATCH_PID=""
    kill -KILL "$MPIRUN_PID" 2>/dev/null
    wait "$MPIRUN_PID" 2>/dev/null
    reap
}

# The pid of world rank R: a rank's file names its tensor-parallel communicator and its rank
# there (the pids of a host's ranks say nothing of their order).
# stop_mid_dump RANK PID: SIGSTOP the rank 0.6 of a dump interval after its file last grew, so
# that the calls it completed since its last dump are left unwritten, as in a stopped process
# whose dump thread stops with it. Stopped right after a dump with no call since, a rank is at
# the same last call as the others of its communicators and the records cannot tell it from
# them (a CI-style run: all four of tp0 at call 1463; the watch says so under not_judged).
stop_mid_dump()
{
    local f="$D/${RANK_HOSTS[$(($1 / PPN))]}-pid$2.log" m0 m1 i
    m0=$(stat -c %.3Y "$f" 2>/dev/null)
    for i in $(seq 1 $((DUMP_S * 40))); do
        m1=$(stat -c %.3Y "$f" 2>/dev/null)
        [ "$m1" != "$m0" ] && break
        sleep 0.05
    done
    sleep "$(awk -v d="$DUMP_S" 'BEGIN { print d * 0.6 }')"
    kill -STOP "$2"
}

pid_of_rank()
{
    local r=$1 h=${RANK_HOSTS[$(($1 / PPN))]} p f
    mapfile -t p < <(ntc_host_pids "$h" ntc-trainer | sort -n)
    for f in "${p[@]}"; do
        grep -q "\"comm_name\":\"tp$((r / TP))\",\"rank\":$((r % TP))," "$D/$h-pid$f.log" 2>/dev/null && { echo "$f"; return 0; }
    done
    return 1
}

# wait_for KIND WANT SECONDS: polls DOC until check_watch.py says KIND's final word (match or
# wrong; for "healthy": alarm), at most SECONDS after T_FAULT; sets VERDICT, LINE, DELAY (in
# dump intervals), ONSET_LINE (healthy: an onset finding seen), PAIR_LINE and PAIR_DELAY
# (network: the first document naming the link between the host and one other).
wait_for()
{
    local out
    VERDICT=none; LINE=""; DELAY=""; ONSET_LINE=""; PAIR_LINE=""; PAIR_DELAY=""
    while :; do
        out=$($CHECK "$DOC" "$1" "$2")
        VERDICT=${out%%$'\t'*}; LINE=${out#*$'\t'}
        case $VERDICT in
        match|wrong|alarm) break ;;
        onset) ONSET_LINE=${ONSET_LINE:-$LINE} ;;
        pair) [ -n "$PAIR_LINE" ] || { PAIR_LINE=$LINE; PAIR_DELAY=$(awk -v t="$(since "$T_FAULT")" -v d=$DUMP_S 'BEGIN { printf "%.1f", t / d }'); } ;;
        esac
        awk -v t="$(since "$T_FAULT")" -v b="$3" 'BEGIN { exit !(t >= b) }' && break
        alive "$MPIRUN_PID" || { VERDICT=ended; break; }
        sleep 0.2
    done
    DELAY=$(awk -v t="$(since "$T_FAULT")" -v d=$DUMP_S 'BEGIN { printf "%.1f", t / d }')
}

# Waits until every rank has dumped once (the trainer runs), at most 60 s.
wait_dumps()
{
    for _ in $(seq 1 600); do
        [ "$(ls "$D" 2>/dev/null | wc -l)" -ge $((PPN * NH)) ] && [ -z "$(find "$D" -name '*.log' -empty)" ] && return 0
        alive "$MPIRUN_PID" || return 1
        sleep 0.1
    done
    return 1
}

# healthy NAME: a stretch of HEALTHY_S seconds in which no host or rank may be named.
healthy()
{
    watch "$1"
    T_FAULT=$(now)
    wait_for healthy - "$HEALTHY_S"
    if [ "$VERDICT" = alarm ]; then
        alarms=$((alarms + 1)); bad "$1: false alarm after $(since "$T_FAULT") s: $LINE"
    elif [ "$VERDICT" = ended ]; then
        bad "$1: the trainer ended: $(tail -3 "$NTC_DIR/out/$RUN.log")"
    elif [ -n "$ONSET_LINE" ]; then
        onsets=$((onsets + 1))
        ok "$1: no host or rank named over $HEALTHY_S s ($(cat "$D"/*.log | wc -l) records so far); an onset finding: $ONSET_LINE"
    else
        ok "$1: no finding over $HEALTHY_S s ($(cat "$D"/*.log | wc -l) records so far)"
    fi
}

# wait_clear: waits (at most RECOVER s) until DOC names no host or rank: the watch has read
# the files and the previous case is over.
wait_clear()
{
    local out t=$(now) clear=0
    sleep 1.5
    while :; do
        out=$($CHECK "$DOC" healthy -)
        # Clear in two documents of the watch a second apart.
        if [ -s "$DOC" ] && [ "${out%%$'\t'*}" != alarm ]; then
            clear=$((clear + 1))
            [ $clear -ge 2 ] && return 0
            sleep 1.2
            continue
        fi
        clear=0
        alive "$MPIRUN_PID" || { bad "$name: the trainer ended: $(tail -3 "$NTC_DIR/out/$RUN.log")"; return 1; }
        awk -v t="$(since "$t")" -v b="$RECOVER" 'BEGIN { exit !(t >= b) }' &&
            { bad "$name: the previous case still named after $RECOVER s: ${out#*$'\t'}"; return 1; }
        sleep 0.2
    done
}

# fault CASE KIND: draws the victim, waits until the watch names nobody, injects, waits for the
# match, clears.
fault()
{
    local name=$1 kind=$2 host rank pid what
    host=${RANK_HOSTS[$((RANDOM % NH))]}
    rank=$((RANDOM % (PPN * NH)))
    watch "$name"
    wait_clear || return
    case $kind in
    rate) ntc_fault "$host" rate "$RATE" both; what="host $host, rate ${RATE} bit/s" ;;
    delay) ntc_fault "$host" delay "$DELAY_US" both; what="host $host, delay ${DELAY_US} us" ;;
    loss) ntc_fault "$host" loss "$LOSS" both; what="host $host, loss ${LOSS}%" ;;
    straggler|hang)
        pid=$(pid_of_rank "$rank") || { bad "$name: no pid for rank $rank"; return; }
        what="rank $rank (host ${RANK_HOSTS[$((rank / PPN))]}, pid $pid)"
        if [ "$kind" = straggler ]; then echo "straggler $rank 1.5" > "$CTL"; what="$what, compute x1.5"
        else stop_mid_dump "$rank" "$pid"; what="$what, SIGSTOP"; fi ;;
    esac
    T_FAULT=$(now)
    case $kind in
    rate|delay|loss) wait_for network "$host" $((BOUND * DUMP_S)) ;;
    *) wait_for "$kind" "$pid" $((BOUND * DUMP_S)) ;;
    esac
    case $kind in
    rate|delay|loss) ntc_fault "$host" clear ;;
    straggler) echo none > "$CTL" ;;
    esac
    # Named with one other host only (the link between them): the network, the right host
    # among two, not told apart within the bound.
    [ "$VERDICT" = ended ] && LINE="the trainer ended: $(tail -3 "$NTC_DIR/out/$RUN.log")" && LINE=${LINE//$'\n'/ / }
    [ "$VERDICT" != match ] && [ "$VERDICT" != wrong ] && [ -n "$PAIR_LINE" ] &&
        { VERDICT="pair after $PAIR_DELAY dump intervals, alone: $VERDICT"; LINE=$PAIR_LINE; }
    if [ "$VERDICT" = match ]; then
        ok "$name: $what: named after $DELAY dump intervals"
        echo "     $LINE"
    elif [ -n "${KNOWN[$kind]:-}" ] && [ "${NTC_STRICT:-0}" != 1 ]; then
        xfail=$((xfail + 1))
        echo "XFAIL [$(since "$T_ALL")] $name: $what: $VERDICT after $DELAY dump intervals${LINE:+: $LINE} (known: ${KNOWN[$kind]})"
    else
        bad "$name: $what: $VERDICT after $DELAY dump intervals${LINE:+: $LINE}"
    fi
    DETECT+=("$name|$what|$VERDICT|$DELAY|$LINE")
}

# The fault sizes, from the healthy run's records: the 2-rank data-parallel AllReduce of the
# largest size gives the rate a host's link carries (its two ranks' communicators each move
# the message once each way, at the same time), the smallest size the latency scale.
size_faults()
{
    read -r RATE_MEAS T_SMALL < <(/usr/bin/python3 - "$1" <<'EOF'
import glob, json, statistics, sys
calls = {}
for f in glob.glob(sys.argv[1] + "/*.log"):
    for l in open(f):
        try:
            r = json.loads(l)
        except ValueError:
            continue
        h, c = r["header"], r["coll_perf"]
        if h["n_ranks"] != 2 or c["coll"] != "AllReduce":
            continue
        calls.setdefault((h["id"], c["coll_msg_size_bytes"], c["coll_sn"]), []).append(c["coll_exec_time_us"])
sizes = sorted({k[1] for k in calls})
def t(size):
    return statistics.median(min(v) for k, v in calls.items() if k[1] == size and len(v) == 2)
big, small = sizes[-1], sizes[0]
print(int(2 * big * 8 / (t(big) / 1e6)), int(t(small)))
EOF
)
    # A 25th of the measured rate: each host's link is CPU-bound veth on shared cores, so the
    # limit is set against what it carried, not against a nominal line rate (at a tenth the
    # 128 KiB calls were 3x slower, at the rule's edge; tbf's 64 KiB bucket lets 16 KiB pass).
    RATE=$((RATE_MEAS / 25))
    [ "$RATE" -lt 8000 ] && RATE=8000
    # Five times the small call's time, at least 2 ms: one TCP round trip more per message.
    DELAY_US=$((T_SMALL * 5)); [ "$DELAY_US" -lt 2000 ] && DELAY_US=2000
    LOSS=10
    echo "watch-cluster: healthy run carried $(awk -v r="$RATE_MEAS" 'BEGIN { printf "%.2f", r / 1e9 }') Gb/s per host link; small call ${T_SMALL} us: rate fault ${RATE} bit/s, delay ${DELAY_US} us, loss ${LOSS}%"
}

# The runs' files stay in $BUILD/watch-cluster/out (Inspector directories, watch documents,
# mpirun logs) after the cluster is gone.
KEEP=$ROOT/$BUILD/watch-cluster/out
keep() { rm -rf "$KEEP"; cp -r "$NTC_DIR/out" "$KEEP"; }
T_ALL=$(now)
# One host more than the ranks': mpirun runs on the first (tests/cluster/lib.sh) and the ranks
# on the others. Measured with mpirun among them: its host's data-parallel communicator took 2x
# the others' time in a healthy run, and a fault elsewhere pushed it over the slow-node rule.
ntc_up $((NH + 1)) || { echo "watch-cluster: FAIL: cannot build the cluster"; exit 1; }
RANK_HOSTS=("${NTC_HOST_LIST[@]:1}")
HF=$NTC_DIR/hostfile
for h in "${RANK_HOSTS[@]}"; do echo "$h slots=$PPN"; done > "$HF"
mkdir -p "$NTC_DIR/out"
WATCH_PID=""

for n in $(seq 1 "$N_RUN"); do
    RUN=run$n
    train "$RUN" 600
    wait_dumps || { bad "$RUN: no dump from every rank: $(tail -3 "$NTC_DIR/out/$RUN.log")"; stop; continue; }
    healthy "$RUN-healthy"
    [ -n "${RATE:-}" ] || size_faults "$D"
    for k in rate delay loss straggler hang; do
        want "$k" || continue
        # A trainer that ended in a case (its case says so) is started again, so that the
        # cases after it still run: under 10% loss its MPI can give up a TCP connection (a
        # segment lost tcp_retries2 + 1 times in a row): 1 of 4 CI-style runs once.
        if ! alive "$MPIRUN_PID"; then
            stop
            RUN=${RUN}b
            train "$RUN" 600
            wait_dumps || { bad "$RUN: no dump from every rank: $(tail -3 "$NTC_DIR/out/$RUN.log")"; break; }
            healthy "$RUN-healthy"
        fi
        fault "$RUN-$k" "$k"
    done
    stop
done
# Healthy runs of their own (--long): the false-alarm count.
for n in $(seq 1 "$N_HEALTHY"); do
    RUN=healthy$n
    train "$RUN" 600
    wait_dumps || { bad "$RUN: no dump from every rank"; stop; continue; }
    HEALTHY_S=20 healthy "$RUN"
    stop
done

keep
if [ $LONG = 1 ]; then
    echo "watch-cluster: false alarms: $alarms in $((N_RUN + N_HEALTHY)) healthy stretches (a host or rank named); onset findings: $onsets"
    echo "watch-cluster: detection (case | fault | verdict | dump intervals | finding):"
    printf '  %s\n' "${DETECT[@]}"
fi
echo "watch-cluster: $pass passed, $fail failed, $xfail known ($(since "$T_ALL") s, seed $SEED)"
[ "$fail" = 0 ] || { echo "$failed" | tr '|' '\n' | sed '/^$/d; s/^/  failed: /'; exit 1; }
