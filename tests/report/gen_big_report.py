#!/usr/bin/python3
"""Write a synthetic nettune.report/1 document for the report tests.

Shapes follow docs/report.md and reports/schema/report.schema.json: nodes with GPUs and RDMA ports,
inter-node RDMA links per rail (rdma.write:<a>/mlx5_<r>:1-><b>/mlx5_<r>:1), intra-node GPU
links (nvlink gpu<i>->gpu<j>, pcie_h2d numa<n>->gpu<i>), checks, and a summary consistent with
them. Deterministic for a given --seed. Failures are injected on purpose:

  --fail-node HOST       every RDMA link touching HOST runs at ~45% (node blamed, failed)
  --down-port HOST:NIC   that port is DOWN: failed port_state check, its links skipped
  --bad-gpu-link HOST:I:J   nvlink gpuI->gpuJ at ~30%: failed
  --warn-software HOST   a minority NCCL version: software_consistency warning
  --slow-pcie HOST:I     GPU I's PCIe link trained at gen4: pcie_link warning

Node verdicts and failed_nodes follow probes/judge/ (judge_nodes). --rejudge FILE applies
them to an existing synthetic report in place; --node-verdicts FILE only adds nodes[].verdict
to a real report written before it (its failed_nodes kept).

Examples:
  gen_big_report.py --nodes 1000 --output big.json            (quick: ring + shifted ring)
  gen_big_report.py --nodes 48 --mode full --output full48.json
"""
import argparse
import json
import random
import sys

RAIL_GBPS = 400.0
RDMA_EXPECTED = RAIL_GBPS / 8 * 0.95        # line rate x efficiency, GB/s
NVLINK_EXPECTED = 350.0
H2D_EXPECTED = 55.0


def verdict_of(ratio):
    if ratio < 0.8:
        return "fail"
    if ratio < 0.9:
        return "warn"
    return "pass"


def judge_nodes(doc, blamed):
    """Node verdicts and failed_nodes as probes/judge/nodes.c computes them: a node fails when it is
    blamed (blamed: host -> (observed, expected) GB/s), fails a check of its own or has a link
    inside it that failed its expected figure; it warns with a failed or warned link to a partner or a warned check.
    One reason per failed node, check and figure first."""
    hosts = [n["hostname"] for n in doc["nodes"]]
    verdict = {h: "skipped" for h in hosts}
    reason, cause = {}, {}
    rank = {"skipped": 0, "not_judged": 1, "pass": 2, "warn": 3, "fail": 4}

    def worse(h, v):
        if rank[v] > rank[verdict[h]]:
            verdict[h] = v

    def fails(h, c, r):
        worse(h, "fail")
        if h not in reason:
            reason[h], cause[h] = r, c

    for h in hosts:
        if h in blamed:
            o, e = blamed[h]
            fails(h, "bandwidth", "nettune:bw %g/%gGB/s median of its rdma 8 MiB links vs all "
                  "nodes, fails with most partners" % (o, e))
    for l in doc["links"]:
        a, b = l["src"]["host"], l["dst"]["host"]
        v = l["verdict"]
        if v == "fail" and a == b and not l.get("blamed_on_node") and l.get("expected_bw_GBps"):
            fails(a, "bandwidth", "nettune:bw %g/%gGB/s %s" % (l.get("peak_bw_GBps") or 0,
                                                                l.get("expected_bw_GBps") or 0,
                                                                l["id"]))
        for h in (a, b):
            if h in verdict:
                worse(h, "warn" if v in ("fail", "warn") else ("pass" if v == "pass" else "skipped"))
    for c in doc["checks"]:
        h, v = c.get("host"), c["verdict"]
        if h not in verdict:
            continue
        if v == "fail":
            fails(h, "check", "nettune:%s %s" % (c["name"], c["message"]))
        elif v != "not_judged":
            worse(h, v)
    for n in doc["nodes"]:
        n["verdict"] = verdict[n["hostname"]]
    doc["summary"]["failed_nodes"] = [{"host": h, "reason": reason[h], "cause": cause[h]}
                                      for h in hosts if h in reason]
    if doc["summary"]["failed_nodes"]:
        doc["summary"]["verdict"] = "fail"


def samples(rng, peak, lat):
    return [
        {"bytes": 8, "iterations": 1000,
         "lat_us": {"min": round(lat * 0.95, 3), "p50": round(lat, 3), "p99": round(lat * 1.6, 3),
                    "max": round(lat * 3, 3)}},
        {"bytes": 4194304, "iterations": 50,
         "bw_GBps": {"min": round(peak * 0.9, 3), "p50": round(peak, 3),
                     "max": round(peak * 1.02, 3)}},
    ]


def rejudge(path):
    doc = json.load(open(path))
    blamed = {}
    for f in doc["summary"]["failed_nodes"]:
        if "most partners" in f["reason"]:
            ls = [l for l in doc["links"] if f["host"] in (l["src"]["host"], l["dst"]["host"])
                  and l["verdict"] == "fail" and l.get("peak_bw_GBps")]
            ls.sort(key=lambda l: l["peak_bw_GBps"])
            med = ls[len(ls) // 2]
            blamed[f["host"]] = (med["peak_bw_GBps"], med.get("expected_bw_GBps"))
            for l in ls:
                l["blamed_on_node"] = True
    judge_nodes(doc, blamed)
    with open(path, "w") as out:
        json.dump(doc, out, indent=1)
        out.write("\n")


def node_verdicts(path):
    """Add nodes[].verdict to a report written before it, keeping its failed_nodes: fail when
    named there, warn with a failed or warned link or a warned check, pass when measured."""
    doc = json.load(open(path))
    failed = {f["host"] for f in doc["summary"]["failed_nodes"]}
    for n in doc["nodes"]:
        h, v = n["hostname"], "skipped"
        for x in doc["links"] + doc["checks"]:
            ends = (x["src"]["host"], x["dst"]["host"]) if "src" in x else (x.get("host"),)
            if h not in ends or x["verdict"] in ("skipped", "not_judged"):
                continue
            if x["verdict"] in ("fail", "warn"):
                v = "warn"
            elif v == "skipped":
                v = "pass"
        n["verdict"] = "fail" if h in failed else v
    # Insert the key after each node's hostname, keeping the file's own layout.
    import re
    text = open(path).read()
    verdicts = {n["hostname"]: n["verdict"] for n in doc["nodes"]}

    def add(m):
        host = json.loads(m.group(3))
        sep = m.group(2)
        return '%s"hostname":%s%s,\n%s"verdict":%s"%s"' % (m.group(1), sep, m.group(3), m.group(1),
                                                           sep, verdicts[host])
    text = re.sub(r'(?m)^([ \t]*)"hostname":([ \t]*)("(?:[^"\\]|\\.)*")(?=,?\n)', add, text)
    text = text.replace('"verdict":\t"%s",\n' % "x", "")
    with open(path, "w") as out:
        out.write(text)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--rejudge":
        rejudge(sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--node-verdicts":
        node_verdicts(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--gpus", type=int, default=4, help="GPUs per node")
    ap.add_argument("--rails", type=int, default=2, help="RDMA ports per node")
    ap.add_argument("--mode", choices=["quick", "full"], default="quick")
    ap.add_argument("--prefix", default="node")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise", type=float, default=0.01, help="relative spread of passing links")
    ap.add_argument("--fail-node", action="append", default=[])
    ap.add_argument("--down-port", action="append", default=[])
    ap.add_argument("--bad-gpu-link", action="append", default=[])
    ap.add_argument("--warn-software", action="append", default=[])
    ap.add_argument("--slow-pcie", action="append", default=[])
    ap.add_argument("--incomplete", action="store_true", help="run stopped early")
    ap.add_argument("--started-at", default="2026-11-20T08:00:00Z")
    ap.add_argument("--output", default="-")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    width = max(2, len(str(a.nodes)))
    hosts = ["%s%0*d" % (a.prefix, width, i + 1) for i in range(a.nodes)]
    fail_nodes = set(a.fail_node)
    down = {tuple(x.split(":", 1)) for x in a.down_port}
    bad_gpu = {(h, int(i), int(j)) for h, i, j in (x.split(":") for x in a.bad_gpu_link)}
    slow_pcie = {(h, int(i)) for h, i in (x.split(":") for x in a.slow_pcie)}
    ranks_per_node = max(1, a.gpus)

    nodes, links, checks = [], [], []
    for n, h in enumerate(hosts):
        node = {
            "hostname": h,
            "ranks": list(range(n * ranks_per_node, (n + 1) * ranks_per_node)),
            "software": {"kernel": "6.1.0-28-amd64", "mpi": "Open MPI v4.1.4", "hwloc": "2.9.0",
                         "cuda_driver": "550.127.05", "cuda_runtime": "12.4",
                         "nccl": "2.21.5" if h in a.warn_software else "2.23.4",
                         "rdma_core": "44.0"},
            "cpus": {"model": "Intel(R) Xeon(R) Platinum 8480+", "packages": 2, "cores": 112,
                     "pus": 224},
            "numa_nodes": [{"index": 0, "cores": 56, "pus": 112},
                           {"index": 1, "cores": 56, "pus": 112}],
            "gpus": [], "nics": [], "affinity": [], "skipped": [],
        }
        for g in range(a.gpus):
            gen = 4 if (h, g) in slow_pcie else 5
            node["gpus"].append({
                "index": g, "uuid": "GPU-%08x-0000-0000-0000-%012d" % (n, g),
                "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * g),
                "numa_node": g * 2 // max(1, a.gpus),
                "pcie": {"gen": gen, "width": 16, "max_gen": 5, "max_width": 16},
                "nvlinks": [],
            })
            checks.append({"name": "pcie_link", "host": h, "target": "gpu%d" % g,
                           "verdict": "warn" if gen < 5 else "pass",
                           "observed": "gen%dx16" % gen, "expected": "gen5x16",
                           "message": "PCIe link runs at gen%d x16 of gen5 x16" % gen})
        for r in range(a.rails):
            nic = "mlx5_%d" % r
            state = "DOWN" if (h, nic) in down else "ACTIVE"
            node["nics"].append({"name": nic, "port": 1, "state": state,
                                 "link_layer": "InfiniBand", "rate_Gbps": RAIL_GBPS,
                                 "firmware": "28.39.1002",
                                 "pci_bus_id": "0000:%02x:00.0" % (0x1a + 0x10 * r),
                                 "numa_node": r * 2 // max(1, a.rails)})
            checks.append({"name": "port_state", "host": h, "target": "%s:1" % nic,
                           "verdict": "fail" if state == "DOWN" else "pass",
                           "observed": state, "expected": "ACTIVE",
                           "message": "port %s:1 is %s" % (nic, state)})
            if a.gpus:
                node["affinity"].append({"gpu": r % a.gpus, "nic": nic, "path": "PIX"})
        if h in a.warn_software:
            checks.append({"name": "software_consistency", "host": h, "target": "nccl",
                           "verdict": "warn", "observed": "2.21.5", "expected": "2.23.4",
                           "message": "NCCL 2.21.5 differs from the majority's 2.23.4"})
        if not a.gpus:
            node["skipped"].append({"probe": "gpu", "reason": "no NVIDIA GPU on this node"})
        nodes.append(node)

        # Intra-node GPU links.
        for i in range(a.gpus):
            for j in range(a.gpus):
                if i == j:
                    continue
                ratio = rng.gauss(1.03, a.noise)
                reasons = []
                if (h, i, j) in bad_gpu:
                    ratio = 0.3
                    reasons = ["%.0f%% of the expected %.0f GB/s (NVLink %d of gpu%d is down?)"
                               % (100 * ratio, NVLINK_EXPECTED, j, i)]
                peak = round(NVLINK_EXPECTED * ratio, 2)
                v = verdict_of(ratio)
                ln = {"id": "nvlink:%s/gpu%d->%s/gpu%d" % (h, i, h, j), "kind": "nvlink",
                      "scope": "intra",
                      "src": {"host": h, "rank": n * ranks_per_node + i, "device": "gpu%d" % i},
                      "dst": {"host": h, "rank": n * ranks_per_node + j, "device": "gpu%d" % j},
                      "peak_bw_GBps": peak, "peak_bw_bytes": 67108864,
                      "expected_bw_GBps": NVLINK_EXPECTED, "verdict": v,
                      "judged_by": ["expected"]}
                if reasons:
                    ln["reasons"] = reasons
                if v != "pass":
                    ln["samples"] = samples(rng, peak, 2.5)
                links.append(ln)
            ratio = rng.gauss(1.0, a.noise) * (0.55 if (h, i) in slow_pcie else 1.0)
            links.append({"id": "pcie_h2d:%s/numa%d->%s/gpu%d" % (h, i * 2 // a.gpus, h, i),
                          "kind": "pcie_h2d", "scope": "intra",
                          "src": {"host": h, "rank": n * ranks_per_node + i,
                                  "device": "numa%d" % (i * 2 // a.gpus)},
                          "dst": {"host": h, "rank": n * ranks_per_node + i, "device": "gpu%d" % i},
                          "peak_bw_GBps": round(H2D_EXPECTED * ratio, 2), "peak_bw_bytes": 67108864,
                          "expected_bw_GBps": H2D_EXPECTED, "verdict": verdict_of(ratio)})

    # Inter-node RDMA links: one per rail for each scheduled pair.
    N = len(hosts)
    pairs = set()
    if a.mode == "full":
        pairs = {(i, j) for i in range(N) for j in range(i + 1, N)}
    else:
        for i in range(N):
            for d in (1, N // 2):
                j = (i + d) % N
                if i != j:
                    pairs.add((min(i, j), max(i, j)))
    for i, j in sorted(pairs):
        hi, hj = hosts[i], hosts[j]
        for r in range(a.rails):
            nic = "mlx5_%d" % r
            lid = "rdma.write:%s/%s:1->%s/%s:1" % (hi, nic, hj, nic)
            ln = {"id": lid, "kind": "rdma", "scope": "inter",
                  "src": {"host": hi, "rank": i * ranks_per_node + r % ranks_per_node,
                          "device": "%s:1" % nic},
                  "dst": {"host": hj, "rank": j * ranks_per_node + r % ranks_per_node,
                          "device": "%s:1" % nic},
                  "expected_bw_GBps": RDMA_EXPECTED}
            if (hi, nic) in down or (hj, nic) in down:
                ln.update({"peak_bw_GBps": None, "small_msg_lat_us": None, "verdict": "skipped",
                           "reasons": ["port %s:1 of %s is DOWN" % (
                               nic, hi if (hi, nic) in down else hj)]})
                links.append(ln)
                continue
            ratio = rng.gauss(1.0, a.noise)
            lat = 2.1 * rng.gauss(1.0, a.noise)
            judged = ["expected"]
            reasons = []
            if hi in fail_nodes or hj in fail_nodes:
                ratio = rng.gauss(0.45, 0.02)
                lat *= 3
                judged = ["expected", "node_blame"]
                bad = hi if hi in fail_nodes else hj
                reasons = ["%.0f%% of the expected %.1f GB/s" % (100 * ratio, RDMA_EXPECTED),
                           "node %s is slow with most partners, blamed" % bad]
            peak = round(RDMA_EXPECTED * ratio, 3)
            v = verdict_of(ratio)
            ln.update({"peak_bw_GBps": peak, "peak_bw_bytes": 8388608,
                       "small_msg_lat_us": round(lat, 3), "small_msg_lat_bytes": 8,
                       "verdict": v, "judged_by": judged})
            if reasons:
                ln["reasons"] = reasons
            if v != "pass":
                ln["samples"] = samples(rng, peak, lat)
            links.append(ln)

    counts = {"pass": 0, "warn": 0, "fail": 0, "skipped": 0}
    for x in links + checks:
        counts[x["verdict"]] += 1
    summary = {
        "verdict": "fail" if counts["fail"] else ("warn" if counts["warn"] else "pass"),
        "failed_nodes": [],
        "failed_links": [x["id"] for x in links if x["verdict"] == "fail"],
        "warnings": ["%s: %s" % (c["host"], c["message"]) for c in checks if c["verdict"] == "warn"],
        "counts": counts,
    }
    doc = {
        "schema": "nettune.report/1",
        "tool": {"name": "nettune", "version": "synthetic"},
        "run": {"id": "%s-synthetic-%d" % (a.started_at, a.seed), "started_at": a.started_at,
                "duration_s": round(30 + N * 0.9, 1), "mode": a.mode,
                "command_line": "nettune probe --%s --require gpu,rdma" % a.mode,
                "launcher": "mpi", "nranks": N * ranks_per_node, "nnodes": N,
                "time_limit_s": None, "completed": not a.incomplete,
                "not_done": ["rdma rounds 3-9"] if a.incomplete else [],
                "concurrent_pairs": True},
        "nodes": nodes, "links": links, "checks": checks, "summary": summary,
    }
    judge_nodes(doc, {h: (round(RDMA_EXPECTED * 0.45, 1), RDMA_EXPECTED) for h in fail_nodes})
    out = sys.stdout if a.output == "-" else open(a.output, "w")
    json.dump(doc, out, indent=None if N > 50 else 1, separators=(",", ":") if N > 50 else None)
    out.write("\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
