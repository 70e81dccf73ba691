#!/bin/sh
# nettune-probe on a node without a GPU driver (this build machine), `make test-gpu`:
#  1. no driver at all: the GPU probe is skipped with the reason, the run exits by the health
#     of what did run (0 here), the report is schema-valid;
#  2. NVML present (a stand-in library, NETTUNE_TEST_LIBNVML) but no CUDA driver: the NVML
#     inventory fills nodes[].gpus, checks judge the PCIe width (not the idle generation) and
#     the NVLinks, the probe is skipped "no CUDA driver";
#  3. --checks-only with NVML: no traffic, the reason says so; an NVLink down fails the node;
#  4. the whole probe on simulated GPUs (tests/gpu/fake_cuda_sim.c), with one rank seeing every
#     GPU and with 4 ranks under mpirun that see one GPU each (the IPC mode).
# usage: no-gpu.sh PROBE FAKE_DIR
P=$1 FAKE=$2
W=$(mktemp -d) || exit 2
trap 'rm -rf "$W"' EXIT
fail=0
check() { # name python-expression-on-d
    if /usr/bin/python3 - "$W/r.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = d["nodes"][0]
sk = {s["probe"]: s["reason"] for s in n.get("skipped", [])}
ch = [c for c in d.get("checks", [])]
ok = eval(sys.argv[2])
sys.exit(0 if ok else 1)
PY
    then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
run() { # rc-expected args...
    want=$1; shift
    "$P" --local --probes gpu --output "$W/r.json" "$@" >"$W/out" 2>&1; rc=$?
    if [ "$rc" != "$want" ]; then echo "FAIL exit $rc, expected $want: $*"; cat "$W/out"; fail=1; fi
}
R=$(dirname "$P")/nettune-report

NETTUNE_TEST_LIBNVML=/nonexistent/libnvidia-ml.so.1 run 0
check "no driver: gpu skipped with the reason" \
  '"no CUDA driver" in sk.get("gpu", "") and not d["links"]'
[ -x "$R" ] && { "$R" --validate "$W/r.json" >/dev/null 2>&1 && echo "ok   no driver: report valid" || { echo "FAIL no driver: report invalid"; fail=1; }; }

NETTUNE_TEST_LIBNVML=$FAKE/libnt-fake-nvml.so run 0
check "NVML, no CUDA: 8 GPUs from NVML" \
  'len(n["gpus"]) == 8 and n["gpus"][3]["name"] == "NVIDIA H100 80GB HBM3" and n["gpus"][0]["pcie"]["max_gen"] == 5 and len(n["gpus"][0]["nvlinks"]) == 18'
check "NVML, no CUDA: skipped 'no CUDA driver'" '"no CUDA driver" in sk.get("gpu", "")'
check "NVML, no CUDA: PCIe width judged, idle generation not" \
  'all(c["verdict"] == "pass" and "generation not judged" in c["message"] for c in ch if c["name"] == "pcie_link") and sum(c["name"] == "pcie_link" for c in ch) == 8'
check "NVML, no CUDA: 18 NVLinks up on every GPU, fabric completed" \
  'sum(c["name"] == "nvlink_state" and c["verdict"] == "pass" for c in ch) == 8 and sum(c["name"] == "fabric_manager" and c["verdict"] == "pass" for c in ch) == 8'
[ -x "$R" ] && { "$R" --validate "$W/r.json" >/dev/null 2>&1 && echo "ok   NVML: report valid" || { echo "FAIL NVML: report invalid"; "$R" --validate "$W/r.json" 2>&1 | head -5; fail=1; }; }
# python3-jsonschema agrees (when installed)
if /usr/bin/python3 -c "import jsonschema" 2>/dev/null; then
    if /usr/bin/python3 -c "import json,sys,jsonschema; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" "$W/r.json" "$(dirname "$0")/../../reports/schema/report.schema.json"; then
        echo "ok   NVML: python3-jsonschema agrees"
    else echo "FAIL NVML: python3-jsonschema rejects the report"; fail=1; fi
fi

NETTUNE_TEST_LIBNVML=$FAKE/libnt-fake-nvml.so NT_FAKE_NVML_DOWN=4 run 1 --checks-only
cp "$W/r.json" "$W/co.json"
check "--checks-only: no traffic, reason given" \
  '"--checks-only" in sk.get("gpu", "") and not d["links"]'
check "--checks-only: NVLink 4 of gpu0 down fails the node" \
  'any(c["name"] == "nvlink_state" and c["verdict"] == "fail" and "down: 4" in c["message"] for c in ch) and d["summary"]["verdict"] == "fail"'
# the node checks (docs/node-checks.md): 5 GPU health checks per GPU with code and category
# (no retired pages: an H100 remaps rows); gpud #80's pending row remap on gpu3 warns that
# check alone
NETTUNE_TEST_LIBNVML=$FAKE/libnt-fake-nvml.so NT_FAKE_NVML_REMAP=3 run 0 --checks-only
check "--checks-only: GPU health on 8 GPUs, the pending remap of gpu3 alone warns" \
  'sum(c["name"].startswith("gpu_") and c.get("code", "").startswith("NT-GPU-") for c in ch) == 40 and [(c["target"], c["code"], c["category"]) for c in ch if c["verdict"] != "pass"] == [("gpu3", "NT-GPU-014", "reset")] and not any(c["name"] == "gpu_retired_pages" for c in ch) and d["summary"]["verdict"] == "warn"'
[ -x "$R" ] && { "$R" --validate "$W/r.json" >/dev/null 2>&1 && echo "ok   node checks: report valid" || { echo "FAIL node checks: report invalid"; "$R" --validate "$W/r.json" 2>&1 | head -5; fail=1; }; }
# --expect nvlinks=16: 18 up pass; a thresholds-free expectation of 20 fails every GPU
NETTUNE_TEST_LIBNVML=$FAKE/libnt-fake-nvml.so run 1 --checks-only --expect nvlinks=20
check "--expect nvlinks=20: every GPU fails its NVLink check" \
  'sum(c["name"] == "nvlink_state" and c["verdict"] == "fail" and "20 expected" in c["message"] for c in ch) == 8'
# a GPU that fell off the bus is an inventory failure naming it
NETTUNE_TEST_LIBNVML=$FAKE/libnt-fake-nvml.so NT_FAKE_NVML_LOST=2 run 1 --checks-only
check "lost GPU: inventory check fails naming gpu2" \
  'any(c["name"] == "inventory" and c["verdict"] == "fail" and c["target"] == "gpu2" and "GPU is lost" in c["message"] for c in ch) and [g["index"] for g in n["gpus"]] == [0, 1, 3, 4, 5, 6, 7]'
# an hwloc XML: pcie.link_GBps as hwloc recorded it, never a generation or width
"$P" --local --topology tests/fixtures/hwloc-xml/dgx2-16xV100-nvml.xml --output "$W/r.json" >/dev/null 2>&1
check "--topology: pcie.link_GBps only, GPU probe skipped" \
  'n["gpus"][0]["pcie"] == {"link_GBps": 15.75} and "--topology" in sk.get("gpu", "")'
# The whole probe on simulated GPUs (fake_cuda_sim.c: copies are memcpy on a virtual clock at
# healthy H100 figures; fake_nvml.c: 8 GPUs, 18 NVLinks each through NVSwitch).
SIM="NETTUNE_TEST_LIBCUDA=$FAKE/libnt-fake-cuda-sim.so NETTUNE_TEST_LIBNVML=$FAKE/libnt-fake-nvml.so NETTUNE_TEST_GPU_LAT_ITERS=20"
env $SIM NT_FAKE_NVML_GEN=5 "$P" --local --probes gpu --gpu-probes h2d,d2h,bidir,p2p,local --gpu-buffer-size 1M --output "$W/r.json" >"$W/out" 2>&1
rc=$?; [ $rc = 0 ] || { echo "FAIL simulated healthy node: exit $rc"; cat "$W/out"; fail=1; }
# (a build without nvcc has no kernels: no .sm links, no latency, and says so)
check "simulated 8 GPUs: 252 links (180 without kernels), all pass, ids and paths as documented" \
  'len(d["links"]) == (180 if "gpu.sm" in sk else 252) and all(l["verdict"] == "pass" for l in d["links"]) and "p2p.write:%s/gpu0->%s/gpu1" % (n["hostname"], n["hostname"]) in [l["id"] for l in d["links"]] and all(l.get("path") == "NV18" for l in d["links"] if l["kind"] == "p2p") and any(l["id"] == "gpu_local:%s/gpu7" % n["hostname"] for l in d["links"])'
check "simulated: H2D 50 GB/s against 63 GB/s x 0.70, NVLink pair 376 against 450 x 0.74" \
  'all(abs(l["peak_bw_GBps"] - 50) < 1 and abs(l["expected_bw_GBps"] - 44.1) < 0.1 for l in d["links"] if l["id"].startswith("pcie_h2d:")) and all(abs(l["peak_bw_GBps"] - 376) < 2 and l["expected_bw_GBps"] == 333 for l in d["links"] if l["id"].startswith("p2p.write:"))'
check "simulated: pcie_link judged under load (Gen5)" \
  'sum(c["name"] == "pcie_link" and c["verdict"] == "pass" and "Gen5 under load" in c["message"] for c in ch) == 8'
env $SIM NT_FAKE_NVML_GEN=4 NT_FAKE_SLOW_GPU=3 NT_FAKE_NO_PEER=1,6 "$P" --local --probes gpu --gpu-probes h2d,d2h,p2p,local --gpu-buffer-size 1M --output "$W/r.json" >"$W/out" 2>&1
rc=$?; [ $rc = 1 ] || { echo "FAIL simulated faults: exit $rc, expected 1"; cat "$W/out"; fail=1; }
check "simulated slow gpu3: blamed by bus id, its pairs warn (SM copies, judged by peers only and not retestable inside a node: unconfirmed), its host links fail" \
  'any(c["name"] == "gpu_blame" and c["message"] == "gpu3 (0000:5d:00.0) fails with 7 of 7 partners" for c in ch) and all(l["verdict"] == "warn" and (l.get("blamed_on_gpu") == "gpu3" or (l["id"].startswith("p2p.sm:") and l.get("unconfirmed"))) for l in d["links"] if l["kind"] == "p2p" and "gpu3" in l["id"]) and [l["verdict"] for l in d["links"] if l["id"].startswith("pcie_h2d:") and l["id"].endswith("gpu3")] == ["fail"]'
check "simulated: no peer access 1->6 over NV18 fails, the pair is not measured" \
  'any(c["name"] == "gpu_peer_access" and c["verdict"] == "fail" and c["target"].startswith("gpu1->gpu6") for c in ch) and not [l for l in d["links"] if "gpu1->" in l["id"] and l["id"].endswith("/gpu6") and l["variant"] != "bidir"]'
check "simulated: Gen4 under load of a Gen5 link fails" \
  'sum(c["name"] == "pcie_link" and c["verdict"] == "fail" and "Gen4 under load" in c["message"] for c in ch) == 8'
env $SIM NT_FAKE_NVML_GEN=5 "$P" --local --probes gpu --gpu-probes h2d,p2p,latency --gpu-buffer-size 1M --output "$W/r.json" >"$W/out" 2>&1
check "simulated latency: host<->device and pair ping-pong give lat_us samples (or, without nvcc, the skip says why)" \
  '("built without nvcc" in sk["gpu.sm"] and not any("small_msg_lat_us" in l for l in d["links"])) if "gpu.sm" in sk else all(l.get("small_msg_lat_us", 0) > 0 for l in d["links"] if l["id"].startswith("pcie_h2d:") or l["id"].startswith("p2p.write:")) and sum(1 for l in d["links"] if l["id"].startswith("p2p.write:")) == 56'
[ -x "$R" ] && { "$R" --validate "$W/r.json" >/dev/null 2>&1 && echo "ok   simulated: report valid" || { echo "FAIL simulated report invalid"; "$R" --validate "$W/r.json" 2>&1 | head -5; fail=1; }; }

# Ranks that see one GPU each (Slurm --gpus-per-task=1; here CUDA_VISIBLE_DEVICES per rank,
# tests/gpu/one-gpu-per-rank.sh): 4 ranks on one host exchange CUDA IPC handles over MPI (the
# simulated driver shares device memory between processes through memfd) and report the same
# links as one rank that sees the 4 GPUs. Copies with no expected figure (bidirectional, SM,
# local) have a population of 4, below the peer rule's 5: not judged, with the reason.
if command -v mpirun >/dev/null 2>&1; then
    G="--probes gpu --gpu-probes h2d,d2h,bidir,p2p,local --gpu-buffer-size 1M"
    env $SIM NT_FAKE_NVML_GPUS=4 NT_FAKE_NVML_GEN=5 CUDA_VISIBLE_DEVICES=0,1,2,3 "$P" --local $G --output "$W/one.json" >"$W/out" 2>&1
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe --bind-to none -np 4 \
        -x NETTUNE_TEST_LIBCUDA="$FAKE/libnt-fake-cuda-sim.so" -x NETTUNE_TEST_LIBNVML="$FAKE/libnt-fake-nvml.so" \
        -x NT_FAKE_NVML_GPUS=4 -x NT_FAKE_NVML_GEN=5 \
        "$(dirname "$0")/one-gpu-per-rank.sh" "$P" $G --output "$W/r.json" >"$W/out" 2>&1
    rc=$?; [ $rc = 0 ] || { echo "FAIL one GPU per rank: exit $rc"; tail -20 "$W/out"; fail=1; }
    check "one GPU per rank (4 ranks, mpirun): gpu_pair_mode ipc, the links of one rank seeing all, all pass" \
      'n.get("gpu_pair_mode") == "ipc" and sorted(l["id"] for l in d["links"]) == sorted(l["id"] for l in json.load(open(sys.argv[1].replace("r.json", "one.json")))["links"]) and len(d["links"]) >= 50 and all(l["verdict"] == "pass" or (l["verdict"] == "not_judged" and l["reasons"][0].startswith("not judged:")) for l in d["links"])'
    check "one GPU per rank: NVLink pair 376 GB/s issued across processes, bidir twice that, every GPU's PCIe judged under load" \
      'sum(c["name"] == "pcie_link" and c["verdict"] == "pass" and "Gen5 under load" in c["message"] for c in ch) == 4 and all(abs(l["peak_bw_GBps"] - 376) < 2 for l in d["links"] if l["id"].startswith("p2p.write:")) and all(abs(l["peak_bw_GBps"] - 752) < 4 for l in d["links"] if l["id"].startswith("p2p.bidir:"))'
    [ -x "$R" ] && { "$R" --validate "$W/r.json" >/dev/null 2>&1 && echo "ok   one GPU per rank: report valid" || { echo "FAIL one GPU per rank: report invalid"; "$R" --validate "$W/r.json" 2>&1 | head -5; fail=1; }; }
    # two ranks that both see every GPU: the first measures them all, the other skips the probe
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe --bind-to none -np 2 \
        -x NETTUNE_TEST_LIBCUDA="$FAKE/libnt-fake-cuda-sim.so" -x NETTUNE_TEST_LIBNVML="$FAKE/libnt-fake-nvml.so" \
        -x NT_FAKE_NVML_GPUS=4 -x NT_FAKE_NVML_GEN=5 -x CUDA_VISIBLE_DEVICES=0,1,2,3 \
        "$P" $G --output "$W/r.json" >"$W/out" 2>&1
    rc=$?; [ $rc = 0 ] || { echo "FAIL two ranks seeing all GPUs: exit $rc"; tail -20 "$W/out"; fail=1; }
    check "two ranks that see every GPU: gpu_pair_mode one_rank, the same links" \
      'n.get("gpu_pair_mode") == "one_rank" and sorted(l["id"] for l in d["links"]) == sorted(l["id"] for l in json.load(open(sys.argv[1].replace("r.json", "one.json")))["links"]) and all(l["verdict"] == "pass" or (l["verdict"] == "not_judged" and l["reasons"][0].startswith("not judged:")) for l in d["links"])'
else
    echo "skip one GPU per rank: no mpirun"
fi

# The renderers carry GPU links (a report built from the recorded nvbandwidth figures)
if [ -x "$R" ]; then
    /usr/bin/python3 "$(dirname "$0")/gpu-report.py" tests/fixtures/nvbandwidth >"$W/g.json"
    "$R" --validate "$W/g.json" >/dev/null 2>&1 && echo "ok   GPU report valid" || { echo "FAIL GPU report invalid"; fail=1; }
    "$R" "$W/g.json" --color never >"$W/g.txt" 2>&1
    grep -q "gpu_blame  gpu3" "$W/g.txt" && grep -q "p2p.write:node01/gpu3->node01/gpu0" "$W/g.txt" &&
        echo "ok   text: GPU blame and GPU links" || { echo "FAIL text lacks the GPU links"; fail=1; }
    "$R" "$W/g.json" -f prom >"$W/g.prom" 2>&1
    grep -q 'link="pcie_h2d:node01/numa0->node01/gpu0",kind="pcie_h2d"' "$W/g.prom" &&
        grep -q 'kind="p2p",variant="write"' "$W/g.prom" && grep -q 'kind="gpu_local"' "$W/g.prom" &&
        echo "ok   prom: GPU links" || { echo "FAIL prom lacks the GPU links"; fail=1; }
    "$R" "$W/g.json" -f html -o "$W/g.html" -q
    [ "$(grep -c 'gpu3 -&gt; gpu[0-9]' "$W/g.html")" = 7 ] && grep -q 'id="software"' "$W/g.html" &&
        grep -q '<th>mlx5_1</th>' "$W/g.html" && grep -q 'class="path-PIX">PIX' "$W/g.html" &&
        grep -q '28.39.1002' "$W/g.html" &&
        echo "ok   html: GPU x GPU matrix, NIC table, GPU x NIC paths, software" ||
        { echo "FAIL html lacks a GPU section"; fail=1; }
fi
exit $fail
