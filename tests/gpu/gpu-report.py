#!/usr/bin/env python3
"""A nettune.report/1 of one 8-GPU NVSwitch node built from the recorded nvbandwidth figures
(tests/fixtures/nvbandwidth/): the GPU links as nettune-probe writes them (ids, kinds, path,
peer_class, line rates, samples), with gpu3 slow with all 7 partners (blamed: its pairs warn)
and two NICs with their GPU x NIC paths. It drives the renderers in `make test-gpu` (text,
Prometheus, HTML) without a GPU. usage: gpu-report.py FIXTURE_DIR > report.json"""
import json, sys

fx = sys.argv[1]
rows = [l.split() for l in open(fx + "/8gpu-nvswitch-d2d-write-ce.txt") if l[:1].isdigit()]
m = [[float(x) for x in r[1:9]] for r in rows if len(r) == 9]
h2d = [float(x) for x in next(l for l in open(fx + "/8gpu-h2d-ce.txt") if l.startswith("0 ")).split()[1:9]]
H = "node01"
bus = ["0000:%02x:00.0" % b for b in (0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb)]

def sample(v, n=256 << 20):
    return {"bytes": n, "iterations": 4, "bw_GBps": {"min": round(v * 0.99, 2), "p50": v, "max": round(v * 1.01, 2)}}

def link(kind, variant, src, dst, v, line=None, path=None, verdict="pass", reasons=None, extra=None):
    id_ = "%s%s:%s/%s" % (kind, "." + variant if variant else "", H, src) + ("->%s/%s" % (H, dst) if dst else "")
    l = {"id": id_, "kind": kind, "scope": "intra",
         "src": {"host": H, "rank": 0, "device": src}, "dst": {"host": H, "rank": 0, "device": dst or src},
         "samples": [sample(v)], "peak_bw_GBps": v, "peak_bw_bytes": 256 << 20, "verdict": verdict,
         "peer_class": "%s%s%s" % (kind, "." + variant if variant else "", " " + path if path else "")}
    if variant:
        l["variant"] = variant
    if line:
        l["line_rate_GBps"] = line
    if path:
        l["path"] = path
    if reasons:
        l["reasons"] = reasons
    l.update(extra or {})
    return l

links, checks = [], []
for g in range(8):
    links.append(link("pcie_h2d", None, "numa%d" % (g // 4), "gpu%d" % g, h2d[g], 31.51, extra={"host_numa_node": g // 4, "pcie_under_load": True}))
    links.append(link("pcie_d2h", None, "gpu%d" % g, "numa%d" % (g // 4), h2d[g] + 0.5, 31.51, extra={"host_numa_node": g // 4}))
    links.append(link("gpu_local", None, "gpu%d" % g, None, 1116.3))
    checks.append({"name": "pcie_link", "host": H, "target": "gpu%d (%s)" % (g, bus[g]), "verdict": "pass",
                   "observed": 16, "expected": 16, "unit": "lanes", "message": "PCIe x16; Gen4 under load"})
why = "gpu3 (%s) fails with 7 of 7 partners" % bus[3]
for a in range(8):
    for b in range(8):
        if a == b:
            continue
        v = 120.0 if 3 in (a, b) else m[a][b]
        bad = 3 in (a, b)
        links.append(link("p2p", "write", "gpu%d" % a, "gpu%d" % b, v, 300.0, "NV12", "warn" if bad else "pass",
                          [("p2p.write NV12 %d MiB median %.1f GB/s below 222.0 GB/s expected" % (256, v)), why] if bad else None,
                          {"blamed_on_gpu": "gpu3", "judged_by": ["expected", "peer", "gpu_blame"]} if bad else None))
checks.append({"name": "gpu_blame", "host": H, "target": "gpu3", "verdict": "fail", "observed": 7, "expected": 0,
               "unit": "partners", "message": why})
nics = [{"name": "mlx5_%d" % i, "port": 1, "state": "ACTIVE", "link_layer": "InfiniBand", "rate_Gbps": 400,
         "firmware": "28.39.1002", "pci_bus_id": "0000:%02x:00.0" % (0x19 + i), "numa_node": i} for i in range(2)]
aff = [{"gpu": g, "nic": "mlx5_%d" % n, "path": ("PIX" if g == 0 and n == 0 else "NODE" if g // 4 == n else "SYS")}
       for g in range(8) for n in range(2)]
gpus = [{"index": g, "name": "NVIDIA A100-SXM4-80GB", "pci_bus_id": bus[g], "numa_node": g // 4,
         "pcie": {"gen": 4, "width": 16, "max_gen": 4, "max_width": 16, "source": "nvml"},
         "nvlinks": [{"link": l, "state": "up", "version": 3, "remote": "switch", "remote_pci_bus_id": None} for l in range(12)],
         "fabric_manager": "completed"} for g in range(8)]
doc = {"schema": "nettune.report/1", "tool": {"name": "nettune", "version": "test"},
       "run": {"id": "gpu-test", "started_at": "2026-12-01T00:00:00Z", "duration_s": 4.2, "mode": "local",
               "command_line": "nettune probe --local --probes gpu", "nranks": 1, "nnodes": 1,
               "time_limit_s": None, "completed": True, "not_done": []},
       "nodes": [{"hostname": H, "ranks": [0], "verdict": "fail",
                  "software": {"kernel": "6.1.0", "mpi": None, "hwloc": "2.9.0", "cuda_driver": "12.4",
                               "cuda_runtime": None, "nccl": "2.21.5", "rdma_core": "44.0"},
                  "gpus": gpus, "nics": nics, "affinity": aff, "skipped": []}],
       "links": links, "checks": checks,
       "summary": {"verdict": "fail", "completed": True,
                   "failed_nodes": [{"host": H, "reason": "gpu_blame: " + why, "cause": "check"}],
                   "failed_links": [], "warnings": ["%s: %s" % (l["id"], why) for l in links if l["verdict"] == "warn"],
                   "not_judged": [],
                   "counts": {"pass": sum(l["verdict"] == "pass" for l in links) + 8, "warn": 14, "fail": 1, "skipped": 0}}}
json.dump(doc, sys.stdout, indent=1)
