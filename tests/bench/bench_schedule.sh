#!/bin/bash
# Benchmark: rounds, pairs, concurrency and wall time of --quick and --full with 2, 4 and 8
# fake nodes. On a host with fewer cores than ranks the pairs run one after another; the
# "concurrent estimate" is what a machine with a core per rank would take: for each round the
# slowest pair (links' elapsed_s), summed over rounds.
cd "$(dirname "$0")/../.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
printf "%-6s %5s %7s %6s %11s %10s %16s %14s\n" mode nodes rounds pairs concurrent wall_s "serial pairs s" "concurrent est s"
for mode in quick full; do
  for n in 2 4 8; do
    NETTUNE_FAKE_NODES=$n mpirun --oversubscribe --bind-to none -np $n build/bin/nettune probe \
      --$mode --sizes 8,1M --budget 0.05 --no-retest -q --output $out/r.json >/dev/null 2>&1
    /usr/bin/python3 - "$out/r.json" $mode $n <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); run = d["run"]; s = run.get("schedule", {}).get("mpi", {})
links = [l for l in d["links"] if "round" in l]
by = {}
for l in links:
    by.setdefault(l["round"], []).append(l["elapsed_s"])
serial = sum(sum(v) for v in by.values()); est = sum(max(v) for v in by.values())
print("%-6s %5s %7d %6d %11s %10.2f %16.2f %14.2f" % (sys.argv[2], sys.argv[3], s.get("rounds", 0),
      s.get("pairs", 0), run.get("concurrent_pairs"), run["duration_s"], serial, est))
PY
  done
done
rm -rf $out
echo "quick: rounds stay constant (3 for even N >= 4; 6 for odd N >= 5); full: N-1 rounds."
