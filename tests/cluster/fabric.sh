#!/bin/bash
# nettune's two-level fabric scenarios on the namespace cluster (tests/cluster/lib.sh,
# README "Two-level layout"): 8 hosts under 2 leaves, 2 spines, 2 rails per host, every host
# link shaped to a third of the ceiling measured first. Ends with "fabric: N passed, N failed".
#
#   tests/cluster/fabric.sh          each scenario once (make test-fabric)
#   tests/cluster/fabric.sh --long   the healthy scenario NTC_FABRIC_HEALTHY times (default 10),
#                                    the spine link faults (delay, cut, ECMP), then the
#                                    false-alarm count (make test-cluster-long)
#   tests/cluster/fabric.sh NAME...  only these scenarios: healthy, spine-faults, spine-4to1,
#                                    spine-one-slow, rail-slow
#
# Each scenario first checks the harness with its own traffic (ntc_flows: the fault is where
# the layout says, at the rate it says), then runs the probe's pairwise and fabric phases
# (`nettune probe --full`, one rank per host) and asserts on the report: every pairwise link
# passes, the fabric's groups are the leaves, and the fabric section names the right cut or
# rail (check_fabric.py; a slow rail is no cut: there the rail and host named, not the
# groups). Where the probe has no fabric phases the probe part skips with
# that reason and the harness part still runs. Skips (exit 0, one line) where the cluster
# cannot run.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
LONG=0
ONLY=" "
for a in "$@"; do
    case $a in
    --long) LONG=1 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) ONLY="$ONLY$a " ;;
    esac
done
# shellcheck source=tests/cluster/lib.sh
. tests/cluster/lib.sh
NT=${NTC_BIN:-$ROOT/build/bin}/nettune
CHECK="/usr/bin/python3 $ROOT/tests/cluster/check_fabric.py"
CHECK_REPORT="/usr/bin/python3 $ROOT/tests/integration/check_report.py"
N_HEALTHY=1
[ $LONG = 1 ] && N_HEALTHY=${NTC_FABRIC_HEALTHY:-10}

skip() { echo "fabric: skipped: $*"; exit 0; }
reason=$(ntc_skip_reason)
[ -z "$reason" ] || skip "$reason"
command -v mpirun >/dev/null || skip "no mpirun (apt-get install openmpi-bin)"
[ -x "$(dirname "$NT")/nettune-probe" ] || skip "nettune-probe is not built (no MPI at build time)"

# The probe part needs the probe's fabric phases (--fabric-ifaces: the rails by interface).
PROBE_SKIP=
"$NT" probe --help 2>&1 | grep -q -- '--fabric-ifaces' ||
    PROBE_SKIP="this nettune probe has no fabric phases (--fabric-ifaces): the probe part is not run"

pass=0; fail=0; failed=""; skipped=0; xfail=0; xfailed=""
# Known failures of the probe part: scenario -> why (a limit of the fabric phases' schedule or
# of the judge, measured with the fabric judge merged in, not of the harness). Such a case
# whose only failed assertions are the judge's prints XFAIL with its findings and does not fail
# the suite; NTC_STRICT=1 makes it fail.
declare -A KNOWN=(
)
# Known pairwise warnings: scenario -> why. Such a case whose only failed assertion is a
# confirmed pairwise warning (no judge line, no failed link) prints XFAIL; its judge's
# assertions still fail the suite. NTC_STRICT=1 makes it fail too.
declare -A KNOWN_PAIRWISE=(
    [spine-one-slow]="the pairwise rounds run disjoint pairs at once, so a pair whose data or ACKs share the slow spine link with another pair's can be marginal: 1 of 19 runs here warned one link (h3 -> h6 at 92% of the population median, again on retest; its ACKs cross the slow link, load average 3); test-cluster-long (--long) runs it strict"
)
[ $LONG = 1 ] && NTC_STRICT=${NTC_STRICT:-1}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
ok() { pass=$((pass + 1)); echo "ok   [$(since "$T_ALL")] $1"; }
bad()
{
    fail=$((fail + 1)); failed="$failed|$1"; echo "FAIL [$(since "$T_ALL")] $1"
    [ -n "${2:-}" ] && [ -s "$2" ] && sed 's/^/     /' "$2"
}
want() { [ "$ONLY" = " " ] || [[ $ONLY == *" $1 "* ]]; }

# flows NAME BYTES [rail=R] SRC:DST...: the flows at once, kept as out/NAME.flows.
flows()
{
    local name=$1
    shift
    FLOWS=$OUTD/$name.flows
    ntc_flows "$@" > "$FLOWS" 2> "$OUTD/check"
}

# hcheck NAME CHECK-ARGS...: one check_fabric.py assertion on the last flows; ok/bad.
hcheck()
{
    local name=$1 line
    shift
    if line=$($CHECK "$@" 2> "$OUTD/check"); then ok "$name: $line"; else bad "$name: $line" "$OUTD/check"; fi
}

# alone NAME TITLE BYTES [rail=R] SRC:DST -- CHECK-ARGS...: one flow alone, checked; a try
# below the bound gets one more (a pair alone shows what the link can do: a 0.5 s stall of the
# shared cores once made it 0.53 of the shaped rate, 1 run in 20).
alone()
{
    local name=$1 title=$2 a=()
    shift 2
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    for _ in 1 2; do
        flows "$name" "${a[@]}" || continue
        $CHECK "$@" --file "$FLOWS" > /dev/null 2>&1 && break
    done
    hcheck "$title" "$@" --file "$FLOWS"
}

# probe NAME IFACES CHECK-ARGS...: nettune probe --full on every host (one rank each, the
# fabric phases on the rails IFACES), then check_report.py and check_fabric.py report.
# The pairwise rounds measure 1 MiB only: the faults here are bandwidth, and the 8 B latency of
# a cross-leaf pair on the loaded 2 cores had a first measurement of 65-472 us against 15 us
# (retest passing: a "flaky" warning) in 3 of 4 runs.
# NTC_FABRIC_PAIR_BUDGET: the pairwise --budget (default 0.1 s, 2-5 messages of 1 MiB at the
# shaped rates: at 0.05 s, 1-2 messages, a stall of the shared cores warned 1-12 links in 4 of
# 5 fault runs; each 0.05 s more costs about 6 s per run). NTC_FABRIC_BUDGET: --fabric-budget
# (default 8 s).
probe()
{
    local name=$1 ifaces=$2 out=$OUTD/$1.json log=$OUTD/$1.log rc t0 line
    shift 2
    if [ -n "$PROBE_SKIP" ]; then
        skipped=$((skipped + 1))
        echo "skip [$(since "$T_ALL")] $name: $PROBE_SKIP"
        return
    fi
    t0=$(now)
    ntc_exec h1 env NTC_DIR="$NTC_DIR" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout 150 mpirun "${MPI_OPTS[@]}" --hostfile "$HF" -np "$NTC_N" --map-by ppr:1:node \
        --bind-to none --mca odls_base_sigkill_timeout 0 "$NT" probe --full --sizes 1M \
        --budget "${NTC_FABRIC_PAIR_BUDGET:-0.1}" --fabric-ifaces "$ifaces" --fabric-budget "${PROBE_FABRIC_BUDGET:-${NTC_FABRIC_BUDGET:-8}}" --fabric-bytes "$FABRIC_BYTES" \
        --output "$out" > "$log" 2>&1
    rc=$?
    : > "$OUTD/check"
    [ -f "$out" ] || echo "no report (mpirun exit $rc)" >> "$OUTD/check"
    [ -f "$out" ] && $CHECK_REPORT "$out" >> "$OUTD/check" 2>&1
    [ -f "$out" ] && line=$($CHECK report "$out" --leaves "$LEAVES" "$@" 2>> "$OUTD/check")
    if [ -s "$OUTD/check" ]; then
        # A known limit covers the judge's assertions only (lines "judge: "), never the
        # phases' status or the schema, and of the pairwise links only warnings (a marginal
        # link of the shaped, loaded cluster, seen at 85-90% of the median): a failed link
        # fails the case.
        local judge_only=0
        grep -v '^judge: ' "$OUTD/check" | grep -qv '^pairwise links not passing: ' || judge_only=1
        if [ $judge_only = 1 ] && grep -q '^pairwise links not passing: ' "$OUTD/check" &&
            ! /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(1 if any(l.get("verdict")=="fail" for l in d.get("links",[])) else 0)' "$out"; then
            judge_only=0
        fi
        tail -n 5 "$log" >> "$OUTD/check"
        if [ $judge_only = 1 ] && ! grep -q '^judge: ' "$OUTD/check" &&
            [ -n "${KNOWN_PAIRWISE[$name]:-}" ] && [ "${NTC_STRICT:-0}" != 1 ]; then
            xfail=$((xfail + 1)); xfailed="$xfailed|$name: ${KNOWN_PAIRWISE[$name]}"
            echo "XFAIL [$(since "$T_ALL")] $name: probe (exit $rc, $(since "$t0") s) (known: ${KNOWN_PAIRWISE[$name]})"
            sed 's/^/     /' "$OUTD/check"
            return 1
        fi
        if [ $judge_only = 1 ] && [ -n "${KNOWN[$name]:-}" ] && [ "${NTC_STRICT:-0}" != 1 ]; then
            xfail=$((xfail + 1)); xfailed="$xfailed|$name: ${KNOWN[$name]}"
            echo "XFAIL [$(since "$T_ALL")] $name: probe (exit $rc, $(since "$t0") s) (known: ${KNOWN[$name]})"
            sed 's/^/     /' "$OUTD/check"
            return 1
        fi
        bad "$name: probe (exit $rc, $(since "$t0") s)" "$OUTD/check"
        return 1
    fi
    if [[ $line == *JUDGE-SKIP* ]]; then
        skipped=$((skipped + 1))
        echo "skip [$(since "$T_ALL")] $name: probe (exit $rc, $(since "$t0") s): pairwise and fabric phases as asserted, the cut or rail not judged: ${line//$'\n'/; }"
        return
    fi
    ok "$name: probe (exit $rc, $(since "$t0") s): ${line//$'\n'/; }"
}

T_ALL=$(now)
# The report assertions themselves, on documents that must pass and documents that must fail.
ST=$(mktemp)
if line=$($CHECK selftest 2> "$ST"); then ok "$line"; else bad "$line" "$ST"; fi
rm -f "$ST"
NTC_LEAVES=2 NTC_SPINES=2 NTC_RAILS=2 ntc_up 8 || { echo "FAIL the two-level cluster did not come up"; exit 1; }
OUTD=$NTC_DIR/out
mkdir -p "$OUTD"
HF=$(ntc_hostfile 1)
mapfile -t MPI_OPTS < <(ntc_mpi_options)
LEAVES=$(ntc_leaves_file)
# The ceiling: every host sends to the host half the list away (across the leaves), unshaped;
# every host link is then shaped so that 8 hosts x 2 rails together use a third of it.
ntc_shape_to_ceiling 3 || { bad "the ceiling could not be measured"; exit 1; }
R=$NTC_SHAPE_BITS    # what a host sends, bit/s
NET=$NTC_NET_BITS    # the network side (what a host receives): 110% of R; faults are set against it
RG=$(awk -v r="$R" 'BEGIN { printf "%.5f", r / 8e9 }')    # the shaped rate, GB/s
echo "     ceiling $NTC_CEILING_GBPS GB/s (8 flows at once, unshaped); every host sends at $RG GB/s ($R bit/s), receives at $NET bit/s"
# Flow sizes from the shaped rate (the ceiling moves with the machine's load: 0.4-2.5 GB/s
# measured): a flow alone lasts about 0.25 s at it, flows at once 0.4 s each at full rate
# (1.6 s at the 4:1 spine's quarter); at least 1 MiB.
ALONE=$(awk -v r="$R" 'BEGIN { b = r / 8 * 0.25; printf "%.0f", b < 1048576 ? 1048576 : b }')
# The probe's flows: NTC_FABRIC_FLOW_S (default 0.06) s each alone at the shaped rate (16 MiB,
# the default, took 0.5 s and the alone sample 13 s of a 20 s budget, leaving the rail phases
# none). At 0.12 s the 8 s budget ran 35 of 56 alone pairs and 12-14 of the 16 cuts, and with
# one of two parallel spine links slow, the nodes none of whose flows shared the slow link in a
# round were placed by chance (groups right in 2 of 4 runs); at 0.06 s every pair alone, 16
# cuts and 16 rings run in 6.9-7.1 s and the groups were right in 3 of 3.
FABRIC_BYTES=$(awk -v r="$R" -v t="${NTC_FABRIC_FLOW_S:-0.06}" 'BEGIN { b = r / 8 * t; printf "%.0f", b < 1048576 ? 1048576 : b }')
TOGETHER=$(awk -v r="$R" 'BEGIN { b = r / 8 * 0.4; printf "%.0f", b < 1048576 ? 1048576 : b }')
CROSS=(h1:h5 h2:h6 h3:h7 h4:h8)

FA=0  # healthy runs with a failed assertion (false alarms)
for i in $(seq 1 "$N_HEALTHY"); do
    want healthy || break
    f0=$fail
    # Healthy: the cross flows of leaf 1 at once each get the shaped rate (the spines have
    # 2 x the leaf's aggregate); no fabric finding.
    flows healthy "$TOGETHER" "${CROSS[@]}" && hcheck "healthy run $i: 4 cross flows at once" flows "$FLOWS" --shaped "$RG" --min 0.6 --max 1.15 ||
        bad "healthy run $i: flows failed" "$OUTD/check"
    probe "healthy$i" eth0,eth1 --no-finding
    [ $fail = "$f0" ] || FA=$((FA + 1))
done

# The spine link functions (delay, cut, ECMP): in --long or by name (10 s).
if { [ $LONG = 1 ] && [ "$ONLY" = " " ]; } || [[ $ONLY == *" spine-faults "* ]]; then
    # The spine link functions themselves: half of the cross pairs on each spine, delay and cut.
    n1=0; n=0
    for s in "${NTC_HOST_LIST[@]}"; do
        for d in "${NTC_HOST_LIST[@]}"; do
            [ "$(ntc_leaf_of "$s")" = "$(ntc_leaf_of "$d")" ] && continue
            n=$((n + 1)); [ "$(ntc_spine_of "$s" "$d")" = 1 ] && n1=$((n1 + 1))
        done
    done
    [ $((2 * n1)) = $n ] && ok "spine routes: $n1 of $n cross pairs through spine 1" ||
        bad "spine routes: $n1 of $n cross pairs through spine 1, want half"
    ntc_spine_pin ecmp && e=$(ntc_spine_of h1 h5) && flows ecmp "$ALONE" h1:h5 h2:h6 h3:h7 h4:h8 &&
        ok "spine routes ecmp (layer 3+4 hash): h1 -> h5 '$e', 4 flows through them: $(wc -l < "$FLOWS") done" ||
        bad "spine routes ecmp: h1 -> h5 '${e:-}'" "$OUTD/check"
    ntc_spine_pin half
    rtt() { ntc_exec "$1" busybox ping -c 3 -i 0.2 -W 1 "$(ntc_ip "$2")" 2>/dev/null | awk -F/ '/min\/avg/ { print $4 }'; }
    # h1 and h5 are first in their leaves, h2 and h6 second: h1 <-> h5 takes spine 1 both
    # ways, h2 <-> h6 spine 2 both ways.
    base=$(rtt h1 h5)
    ntc_spine_fault 1 1 delay 2000 && d=$(rtt h1 h5) && d6=$(rtt h2 h6)
    ntc_spine_fault 1 1 clear
    awk -v b="${base:-0}" -v d="${d:-0}" -v e="${d6:-99}" 'BEGIN { exit !(d >= b + 3.5 && e < b + 2) }' &&
        ok "spine delay 2 ms each way on leaf1-spine1: h1-h5 rtt $base -> $d ms, h2-h6 (spine 2) $d6 ms" ||
        bad "spine delay 2 ms each way on leaf1-spine1: h1-h5 rtt $base -> ${d:-none} ms, h2-h6 ${d6:-none} ms"
    ntc_spine_fault 1 1 down
    c5=$(rtt h1 h5); c6=$(rtt h2 h6)
    ntc_spine_fault 1 1 up
    u5=$(rtt h1 h5)
    [ -z "$c5" ] && [ -n "$c6" ] && [ -n "$u5" ] &&
        ok "spine cut leaf1-spine1: h1-h5 unreachable, h2-h6 (spine 2) $c6 ms; up again: h1-h5 $u5 ms" ||
        bad "spine cut leaf1-spine1: h1-h5 '${c5:-none}' (want none), h2-h6 '${c6:-none}', after up '${u5:-none}'"
fi

if want spine-4to1; then
    # Every cross route through spine 1, its link to leaf 1 at the network rate: a quarter of
    # the leaf's aggregate (4 host links at that rate), 4:1. A pair alone gets the full rate;
    # 4 at once a quarter each (a flow that starts late runs alone at the end: the median is
    # bounded, each flow only below what a pair alone gets). The probe's fabric phases run on rail 0 only: rail 1 is one
    # flat network, whose flows would only dilute the leaves' cut.
    ntc_spine_pin 1 && ntc_spine_fault 1 1 rate "$NET" || bad "spine-4to1: set-up failed"
    alone 4to1-alone "spine-4to1: one pair alone" "$ALONE" h1:h5 -- flows --shaped "$RG" --min 0.6
    flows 4to1-together "$TOGETHER" "${CROSS[@]}" && hcheck "spine-4to1: 4 cross flows at once" flows "$FLOWS" --shaped "$RG" --median-max 0.4 --max 0.65
    probe spine-4to1 eth0 --cut 1,2
    ntc_spine_fault 1 1 clear; ntc_spine_pin half
fi

if want spine-one-slow; then
    # Two parallel spine links, routes pinned half and half; leaf1-spine1 at the network rate:
    # a pair alone on it passes, the 2 flows of leaf 1 that share it at once get half each.
    # The fabric phases get 20 s (NTC_FABRIC_BUDGET overrides): the slow link shows only in
    # rounds that put two flows on it, so the judge needs the full 32 cuts and 32 rings (with
    # 16 and 16, the caps of before, a node whose pairs rarely met on the slow link went to the
    # other leaf's group in 4 of 24 runs or halves of runs; with 32 and 32, 0 of 20); on the
    # loaded 2 cores the phases end at their 32 rounds in 9.2-10.8 s (17-24 s of probe).
    ntc_spine_fault 1 1 rate "$NET" || bad "spine-one-slow: set-up failed"
    alone slow-alone "spine-one-slow: one pair alone on the slow link" "$ALONE" h1:h5 -- flows --shaped "$RG" --min 0.6
    flows slow-together "$TOGETHER" "${CROSS[@]}" &&
        hcheck "spine-one-slow: 4 cross flows at once, to h5 and h7 through spine 1" split "$FLOWS" --shaped "$RG" --slow h5,h7 --ratio 0.75
    PROBE_FABRIC_BUDGET=${NTC_FABRIC_BUDGET:-20} probe spine-one-slow eth0 --cut 1,2
    ntc_spine_fault 1 1 clear
fi

if want rail-slow; then
    # h3's rail 1 at a quarter of the shaped rate (both directions); rail 0 untouched, so the
    # pairwise rounds (MPI on rail 0) pass.
    RQ=$((R / 4))
    ntc_rail_fault h3 1 rate "$RQ" both || bad "rail-slow: set-up failed"
    flows rail1-alone "$ALONE" rail=1 h3:h7 && hcheck "rail-slow: h3 -> h7 on rail 1" flows "$FLOWS" --shaped "$RG" --max 0.35
    alone rail0-alone "rail-slow: h3 -> h7 on rail 0" "$ALONE" rail=0 h3:h7 -- flows --shaped "$RG" --min 0.6
    # Asserted: the rail and host named (NT-FAB-202 "rail 1 of h3"), no other fabric finding and
    # no cut. Not the groups: a slow rail of one node slows no cross traffic more than the
    # leaves' own, so nothing tells the leaves apart (2 runs: no loaded round in one, the
    # alone rounds of 2 rails taking the budget; [[the other 7], [h3]] in the other).
    probe rail-slow eth0,eth1 --rail h3:1
    ntc_rail_fault h3 1 clear
fi

rm -rf "$NTC_BUILD/out-fabric"
mkdir -p "$NTC_BUILD"
cp -r "$OUTD" "$NTC_BUILD/out-fabric"
ntc_down
[ $LONG = 1 ] && echo "fabric false alarms: $FA of $N_HEALTHY healthy runs"
echo "fabric: $pass passed, $fail failed, $xfail known failures, $skipped skipped ($(since "$T_ALL") s)"
[ -n "$failed" ] && echo "failed:${failed//|/$'\n'  }"
[ -n "$xfailed" ] && echo "known failures:${xfailed//|/$'\n'  }"
[ $fail = 0 ]
