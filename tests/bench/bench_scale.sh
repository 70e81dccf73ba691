#!/bin/sh
# make bench-scale: nettune-probe's engine at 1,000 nodes --full and 4,096 nodes --quick (and
# small reference runs; --full without its fabric phases) through the in-process launcher with
# synthetic links: one bad node, one bad link, 5% noise (tests/bench/bench_scale.c); then the
# fabric phases' schedule at 1,000 and 4,096 nodes. BENCH_SCALE="MODE:NODES ..." overrides
# the runs. Exit 1 when a run does not blame exactly the bad node or misses the bad link.
bin=$1
cd "$(dirname "$0")/../.."
topo=tests/fixtures/hwloc-xml/xeon-2s-3xM2070-mlx4-ib.xml
runs=${BENCH_SCALE:-"quick:64 full:64 full:1000 quick:4096"}
printf "%-6s %6s %7s %8s %8s %8s %8s %8s %6s %8s %8s %8s %9s   %-7s %-7s %s\n" mode nodes rounds \
  pairs wall_s cpu_s judge_s judge_cpu snaps snap_s rss_MB heap_MB report_MB "node ok" "link ok" \
  "other nodes/links failed"
rc=0
for r in $runs; do
  "$bin" "--${r%%:*}" "${r##*:}" --topology "$topo" || rc=1
done
# The fabric phases' schedule (include/nettune/fabsched.h) at 1,000 and 4,096 nodes, one rail
# and eight. BENCH_SCALE_FABRIC="NODES:RAILS ..." overrides.
printf "\n%-6s %6s %5s %7s %9s %7s %7s %7s %7s %7s %7s %9s %8s %8s %8s\n" phases nodes rails rounds \
  flows alone bisect a2a ring rail_all rail_one moved_GB est_s build_s heap_MB
fabric=${BENCH_SCALE_FABRIC:-"1000:1 4096:1 1000:8 4096:8"}
for r in $fabric; do
  "$bin" --fabric-schedule "${r%%:*}" "${r##*:}" || rc=1
done
echo "fabric model: 16 MiB flows at 24 GB/s alone, twice as long under load, 20 ms per round beside"
echo "its flows, a 60 s budget; est_s: the schedule's estimate (never above the budget); build_s: the"
echo "best of 5 builds; heap_MB: what the schedule holds."
echo "model: 24 GB/s and 2.0 us per link, 5% Gaussian noise per sample; the bad node's links at 40%,"
echo "the bad link at 35%. cpu_s: the process (every rank). judge_s/judge_cpu: wall and CPU time of the"
echo "final nt_judge_finish; snaps/snap_s: progress snapshots (their judge, wall). rss_MB: the process"
echo "peak, every rank's thread and messages in flight together (topology, node table, steps shared);"
echo "heap_MB: bytes malloc'ed at the end of a judge (rank 0's document, a snapshot's copy), at most."
# The fabric judge (tests/bench/bench_fabric.c), beside the engine: its inference and the
# report glue at 1,000 and 4,096 nodes. BENCH_FABRIC="NODES:LEAVES:ROUNDS ..." overrides the
# runs (ROUNDS bisection and as many ring rounds).
printf "\n%6s %6s %6s %8s %8s %8s %7s %5s %-5s %5s %8s %8s\n" nodes leaves rounds flows judge_s \
  judge_MB groups cuts right mixed doc_s doc_MB
fabric_judge=${BENCH_FABRIC:-1000:8:4 1000:8:20 4096:8:4 4096:8:20}
for r in $fabric_judge; do
  "$(dirname "$bin")/bench_fabric" $(echo "$r" | tr : ' ') || rc=1
done
echo "fabric model: 2.8 GB/s hosts, each leaf pair's direction a cut at a quarter of a bisection"
echo "round's demand, 10% noise, ROUNDS bisection + ROUNDS ring rounds, loaded pairs sampled alone."
echo "right: the groups are the leaves (few rounds leave a leaf's nodes without flows between them:"
echo "more, smaller groups; mixed: groups holding two leaves' nodes, a wrong merge, exit 1). judge_s/MB:"
echo "nt_fab_judge's wall time and peak RSS growth; doc_s/MB: nt_fabric_judge_doc on the JSON section."
exit $rc
