#!/bin/sh
# make bench-history: nettune report --history over 1,000 reports of 64 nodes (synthetic, from
# tests/report/gen_big_report.py: 4 seeds, 1,216 links each, a day apart) in a temporary
# folder, against reading and parsing the same files with cJSON alone (bench_history) in the
# same run. Prints both times and their ratio; fails when the history takes more than 4x the
# parse alone: it parses, indexes every link with the one report reader (lib/rdoc.c: node
# lookups, a dozen fields per link) and folds them into points; measured 1.8 to 2.9 on a loaded
# 2-core machine.
set -eu
ref=$1
nt=${2:-build/bin/nettune}
n=${NT_BENCH_HISTORY_REPORTS:-1000}
dir=$(mktemp -d "${TMPDIR:-/tmp}/nettune-bench-history.XXXXXX")
trap 'rm -rf "$dir"' EXIT
for s in 1 2 3 4; do
    /usr/bin/python3 tests/report/gen_big_report.py --nodes 64 --seed "$s" --noise 0.03 \
        --output "$dir/seed$s.tmpl"
done
/usr/bin/python3 - "$dir" "$n" <<'PY'
import datetime, sys
d, n = sys.argv[1], int(sys.argv[2])
tmpl = [open("%s/seed%d.tmpl" % (d, s)).read() for s in (1, 2, 3, 4)]
t0 = datetime.datetime(2024, 1, 1)
for i in range(n):
    t = (t0 + datetime.timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = tmpl[i % 4].replace("2026-11-20T08:00:00Z", t)
    open("%s/r%04d.json" % (d, i), "w").write(text)
PY
rm -f "$dir"/*.tmpl
set -- "$dir"/*.json
parse=$("$ref" "$@")
t0=$(date +%s.%N)
"$nt" report --history "$dir" --format json --output /dev/null
t1=$(date +%s.%N)
/usr/bin/python3 - "$parse" "$t0" "$t1" "$n" <<'PY'
import sys
p, b = sys.argv[1].split()
h = float(sys.argv[3]) - float(sys.argv[2])
r = h / float(p)
print("bench-history: %s reports of 64 nodes (%.0f MB): --history %.2f s, cJSON parse alone %.2f s: "
      "ratio %.2f (limit 4)" % (sys.argv[4], int(b) / 1e6, h, float(p), r))
sys.exit(0 if r <= 4 else 1)
PY
