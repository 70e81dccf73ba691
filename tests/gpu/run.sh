#!/bin/sh
# The GPU check for a machine with NVIDIA GPUs (docs/gpu.md; measured tuning adds its
# part below). It is NOT part of `make test`: the build machine has no GPU.
#
#   Here (build machine):  make all && tests/gpu/run.sh --pack
#       copies nettune-probe, nettune-report and the shared libraries `ldd` names that are not
#       part of the C library into build/gpu-pack/ (at most 64 MiB; the GPU machine may lack
#       hwloc, cJSON and MPI) and checks the size.
#   On the GPU machine:    tests/gpu/run.sh            (from the repository root)
#       prints first what is missing, then runs `nettune-probe --local --probes gpu` (no MPI
#       launcher) and asserts: the NVML inventory (every GPU with name, bus id, PCIe maximum),
#       H2D and D2H above half of the PCIe line rate on every GPU, a device-local copy figure
#       per GPU, and a schema-valid report. Under 6 minutes in all (the probe itself: seconds).
#       With 2 GPUs or more and mpirun: the same probe with one rank per GPU, each seeing only its
#       own (tests/gpu/one-gpu-per-rank.sh, as Slurm --gpus-per-task=1), must report
#       gpu_pair_mode "ipc" and the same GPU-pair link ids as the one-rank run. (A one-GPU
#       machine has no pair: that part says it is skipped.)
# Exit 0 when every assertion holds, 1 when one fails, 2 when something needed is missing.
PACK=build/gpu-pack
if [ "$1" = "--pack" ]; then
    rm -rf "$PACK" && mkdir -p "$PACK/bin" "$PACK/lib" || exit 2
    for b in nettune-probe nettune-report nettune-tune nettune-tune-measure; do
        [ -x "build/bin/$b" ] || { echo "missing build/bin/$b: run make all first"; exit 2; }
        cp "build/bin/$b" "$PACK/bin/"
        ldd "build/bin/$b" | awk '/=> \// {print $3}' | while read -r so; do
            case "$(basename "$so")" in
            libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux*) ;;
            *) cp -L "$so" "$PACK/lib/" ;;
            esac
        done
    done
    cp reports/schema/report.schema.json "$PACK/"
    cp build/lib/libnccl-tuner-nettune.so "$PACK/lib/" || exit 2 # measure.sh: the plugin
    size=$(du -sm "$PACK" | cut -f1)
    echo "packed $PACK: ${size} MiB ($(ls "$PACK/lib" | wc -l) libraries)"
    [ "$size" -le 64 ] || { echo "too large for the device copy (64 MiB)"; exit 2; }
    exit 0
fi

T0=$(date +%s)
P=$PACK/bin/nettune-probe R=$PACK/bin/nettune-report
[ -x "$P" ] || { P=build/bin/nettune-probe; R=build/bin/nettune-report; }
export LD_LIBRARY_PATH="$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 1. What is missing, first.
missing=0
say() { echo "missing: $*"; missing=1; }
[ -x "$P" ] || say "nettune-probe (build it, or run tests/gpu/run.sh --pack on the build machine)"
if [ -x "$P" ]; then
    ldd "$P" 2>/dev/null | grep "not found" | while read -r l; do echo "missing: library $l"; done
    ldd "$P" 2>/dev/null | grep -q "not found" && missing=1
fi
command -v nvidia-smi >/dev/null 2>&1 || echo "note: no nvidia-smi (not needed)"
ls /dev/nvidia0 >/dev/null 2>&1 || say "/dev/nvidia0 (no NVIDIA GPU or driver)"
ldconfig -p 2>/dev/null | grep -q "libcuda.so.1" || [ -e /usr/lib/x86_64-linux-gnu/libcuda.so.1 ] ||
    say "libcuda.so.1 (the CUDA driver)"
ldconfig -p 2>/dev/null | grep -q "libnvidia-ml.so.1" ||
    [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ] || say "libnvidia-ml.so.1 (NVML)"
command -v python3 >/dev/null 2>&1 || say "python3 (the assertions read the report with it)"
[ "$missing" = 0 ] || { echo "tests/gpu/run.sh: cannot run (see missing above)"; exit 2; }

W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
nvidia-smi -L 2>/dev/null | sed 's/^/nvidia-smi: /'
nvidia-smi topo -m 2>/dev/null | sed 's/^/topo: /'

# 2. The probe: GPU probes only, one node, the default plan.
start=$(date +%s.%N)
timeout 300 "$P" --local --probes gpu --samples all --output "$W/r.json" >"$W/out" 2>&1
rc=$?
end=$(date +%s.%N)
cat "$W/out"
echo "nettune-probe --local --probes gpu: exit $rc, $(echo "$end - $start" | bc 2>/dev/null || echo '?') s"
[ -f "$W/r.json" ] || { echo "FAIL: no report"; exit 1; }
cp "$W/r.json" gpu-report.json 2>/dev/null && echo "report kept as ./gpu-report.json"

# 3. Assertions.
python3 - "$W/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["nodes"][0]
fails = []
def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails.append(what)
gpus = n.get("gpus", [])
ok(len(gpus) > 0 and all(g.get("name") and g.get("pci_bus_id") and (g.get("pcie") or {}).get("max_gen") for g in gpus),
   "NVML inventory: %d GPUs with name, bus id and PCIe maximum" % len(gpus))
for g in gpus:
    print("  gpu%d %s %s cc %s mem %s PCIe gen%s x%s (max gen%s x%s) nvlinks up %d/%d fabric %s" % (
        g["index"], g.get("name"), g.get("pci_bus_id"), g.get("compute_capability"), g.get("memory_bytes"),
        g["pcie"].get("gen"), g["pcie"].get("width"), g["pcie"].get("max_gen"), g["pcie"].get("max_width"),
        sum(1 for l in g.get("nvlinks", []) if l["state"] == "up"), len(g.get("nvlinks", [])), g.get("fabric_manager")))
links = {l["id"]: l for l in d["links"]}
host = n["hostname"]
for g in gpus:
    i = g["index"]
    for kind, pat in (("pcie_h2d", "->%s/gpu%d" % (host, i)), ("pcie_d2h", ":%s/gpu%d->" % (host, i))):
        ls = [l for id_, l in links.items() if id_.startswith(kind + ":") and pat in id_]
        l = ls[0] if ls else None
        peak = l and l.get("peak_bw_GBps")
        line = l and l.get("line_rate_GBps")
        ok(bool(l and peak and line and peak > line / 2),
           "%s gpu%d: %s GB/s, line rate %s GB/s (must exceed half)" % (kind, i, peak, line))
    lc = links.get("gpu_local:%s/gpu%d" % (host, i))
    ok(bool(lc and lc.get("peak_bw_GBps")), "gpu_local gpu%d: %s GB/s" % (i, lc and lc.get("peak_bw_GBps")))
for l in sorted(links.values(), key=lambda x: x["id"]):
    print("  %-60s %8s GB/s  lat %6s us  %-7s %s" % (l["id"], l.get("peak_bw_GBps"), l.get("small_msg_lat_us"),
                                                     l["verdict"], "; ".join(l.get("reasons", []))[:80]))
for c in d.get("checks", []):
    if c["verdict"] != "pass":
        print("  check %s %s %s: %s" % (c["name"], c["target"], c["verdict"], c["message"]))
for s in n.get("skipped", []):
    print("  skipped %s: %s" % (s["probe"], s["reason"]))
sys.exit(1 if fails else 0)
PY
a=$?
"$R" --validate "$W/r.json" && echo "ok   report valid (nettune-report --validate)" || { echo "FAIL report invalid"; a=1; }
# 4. Ranks that see one GPU each: pairs across ranks through CUDA IPC handles.
ng=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['nodes'][0].get('gpus', [])))" "$W/r.json" 2>/dev/null || echo 0)
if [ "${ng:-0}" -lt 2 ]; then
    echo "skip IPC mode (one GPU per rank): $ng GPU(s) here, a pair needs 2"
elif ! command -v mpirun >/dev/null 2>&1; then
    echo "skip IPC mode (one GPU per rank): no mpirun on this machine"
else
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe --bind-to none -np "$ng" \
        -x LD_LIBRARY_PATH sh tests/gpu/one-gpu-per-rank.sh "$P" --probes gpu --samples all \
        --output "$W/ipc.json" >"$W/out" 2>&1
    echo "nettune-probe, $ng ranks with one GPU each: exit $?"
    python3 - "$W/r.json" "$W/ipc.json" <<'PY' || a=1
import json, sys
one, ipc = (json.load(open(f)) for f in sys.argv[1:3])
ids = lambda d: sorted(l["id"] for l in d["links"] if l["kind"] == "p2p")
mode = ipc["nodes"][0].get("gpu_pair_mode")
good = mode == "ipc" and ids(one) == ids(ipc) and ids(ipc)
print(("ok   " if good else "FAIL ") + "IPC mode: gpu_pair_mode %s, %d p2p links (one rank: %d)" % (mode, len(ids(ipc)), len(ids(one))))
for l in sorted(ipc["links"], key=lambda x: x["id"]):
    if l["kind"] == "p2p":
        print("  %-60s %8s GB/s  %s" % (l["id"], l.get("peak_bw_GBps"), l["verdict"]))
sys.exit(0 if good else 1)
PY
fi
# The measured-tuning part (docs/tuner-measure.md): tests/gpu/measure.sh, on the packed binaries if packed.
if [ -x "$PACK/bin/nettune-tune-measure" ]; then MB=$PACK; else MB=build; fi
BUILD=$MB sh tests/gpu/measure.sh 2
m=$?
[ "$m" = 0 ] || { [ "$a" = 0 ] && a=$m; }
echo "tests/gpu/run.sh: $(( $(date +%s) - T0 )) s"
exit $a
