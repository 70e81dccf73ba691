#!/usr/bin/python3
"""Claims only from evidence (make test-doctor).
  1. Every JSON document the golden cases wrote (OUTDIR/*.json): every finding cites evidence
     lines (file and line); every fact of the job (versions, shape, hosts, networks, transports,
     environment, tuner plugins, NIC devices) is null/empty (= unknown) or has the line it was read
     from in job.evidence; a hardware figure comes with its source (--expect, --report) or is
     null; every operator-file fact cites its line; every benchmark names its file, header line
     and the lines of its largest rows.
  2. doctor A B against doctor A and doctor B: every finding of a single file is in the joint
     document, citing that file's lines, or listed in per_file with the joint findings that
     supersede it (and those cite the file).
Usage: test_claims.py DOCTOR GOLDEN_OUTDIR OUTDIR"""
import glob
import json
import os
import subprocess
import sys

passed = failed = 0


def result(ok, what):
    global passed, failed
    ok = bool(ok)
    passed += ok
    failed += not ok
    if not ok:
        print("not ok - " + what)


def has_ev(e):
    return isinstance(e, dict) and isinstance(e.get("file"), str) and "line" in e and isinstance(e.get("text"), str)


def walk(name, d):
    for f in d["findings"]:
        ev = f.get("evidence", [])
        result(ev and all(isinstance(e.get("file"), str) and "line" in e for e in ev),
               "%s: finding %s cites no evidence line" % (name, f["key"]))
    job, jev = d["job"], d["job"].get("evidence", {})
    if job["nccl_versions"]:
        result(has_ev(jev.get("nccl_versions")), "%s: NCCL version without its line" % name)
    for k in ("nranks", "nnodes", "local_ranks", "net_devices"):
        if job.get(k) is not None:
            result(has_ev(jev.get(k)), "%s: job.%s = %s without its line" % (name, k, job[k]))
    for k in ("hosts", "networks"):
        for v in job[k][:64]:
            result(has_ev(jev.get(k, {}).get(v)), "%s: job.%s %s without its line" % (name, k, v))
    for t in list(job["transports"])[:64]:
        result(has_ev(jev.get("transports", {}).get(t)), "%s: transport %s without its line" % (name, t))
    for e in job["env"]:
        result(has_ev(jev.get("env", {}).get(e["name"])) or e["source"] == "command_line",
               "%s: env %s without its line" % (name, e["name"]))
    for p in job["tuner_plugins"]:
        result(has_ev(jev.get("tuner_plugins", {}).get(p["process"])), "%s: tuner plugin of %s without its line" % (name, p["process"]))
    hw = d["hardware"]
    figures = [hw[k] for k in ("gpus_per_node", "nics_per_node", "nic_rate_Gbps", "gpu_model") if hw.get(k) is not None]
    result(not figures or hw["source"] in ("expect", "report"), "%s: hardware figures %s without a source" % (name, figures))
    op = hw.get("operator", {})
    for p in op.get("ports", []):
        result(has_ev(p.get("evidence")), "%s: port %s/%s without its line" % (name, p["hca"], p["port"]))
        result(p["host"] != "" and p["state"] != "", "%s: port %s/%s: empty field instead of unknown" % (name, p["hca"], p["port"]))
    for t in op.get("topologies", []):
        result(has_ev(t.get("evidence")), "%s: topology without its line" % name)
    for b in d["benchmarks"]:
        result(isinstance(b.get("file"), str) and isinstance(b.get("line"), int), "%s: benchmark without file:line" % name)
        if b.get("plateau_busbw_GBps") is not None:
            result(b.get("largest_rows") and all(isinstance(r.get("line"), int) for r in b["largest_rows"]),
                   "%s: plateau without the lines of its rows" % name)
        result(b["verdict"] != "not_judged" or "not judged" in (b.get("basis") or ""),
               "%s: a run not judged does not say why" % name)


def doc(binary, outdir, name, args):
    p = subprocess.run([binary, "--format", "json", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        f.write(p.stdout)
    return json.loads(p.stdout)


PAIRS = [
    ("tests/doctor/data/gdr-node01.log", "tests/doctor/data/gdr-node02.log"),
    ("tests/doctor/data/allreduce-slower-run-hand-built.log", "tests/doctor/data/allreduce-faster-run-hand-built.log"),
    ("tests/fixtures/nccl-debug-logs/socket-fallback-libibverbs-missing.log", "tests/fixtures/nvidia-smi-topo/a100pcie-2gpu-1nic-all-sys.txt"),
    ("tests/fixtures/nccl-tests-logs/sendrecv-2node-4xH100-roce-one-nic-shared.log", "tests/fixtures/ibv-devinfo/ibv_devinfo-2hca-cx3-mlx4-two-ports-down.txt"),
    ("tests/fixtures/nccl-debug-logs/ib-completion-error12-roce-gid.log", "tests/fixtures/nccl-debug-logs/shm-posix-fallocate-ci-container.log"),
    ("tests/fixtures/nccl-topo-xml/v100-vm-8gpu-1ib-ndv2-class.xml", "tests/doctor/data/dmesg-hand-built-xid79-link-flap.log"),
]


def main():
    binary, golden, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    docs = sorted(glob.glob(os.path.join(golden, "*.json")))
    result(len(docs) >= 40, "golden documents found in %s: %d" % (golden, len(docs)))
    for path in docs:
        with open(path) as f:
            try:
                d = json.load(f)
            except ValueError:
                continue
        if "findings" in d:
            walk(os.path.basename(path), d)
    for i, (a, b) in enumerate(PAIRS):
        da, db, dab = doc(binary, outdir, "a%d" % i, [a]), doc(binary, outdir, "b%d" % i, [b]), doc(binary, outdir, "ab%d" % i, [a, b])
        walk("ab%d" % i, dab)
        joint = {f["key"]: f for f in dab["findings"]}
        per_file = dab.get("per_file", [])
        for path, single in ((a, da), (b, db)):
            for f in single["findings"]:
                k = f["key"]
                if k in joint:
                    files = {e["file"] for e in joint[k]["evidence"]}
                    result(path in files or joint[k].get("evidence_total", 0) > len(joint[k]["evidence"]),
                           "%s + %s: %s of %s is in the joint document without that file's lines" % (a, b, k, path))
                    continue
                pf = [x for x in per_file if x["file"] == path and x["key"] == k]
                result(pf and pf[0]["superseded_by"], "%s + %s: %s of %s is neither in the joint document nor superseded" % (a, b, k, path))
                for s in (pf[0]["superseded_by"] if pf else []):
                    result(any(e["file"] == path for e in joint[s]["evidence"]),
                           "%s + %s: %s supersedes %s of %s without citing it" % (a, b, s, k, path))
    print("%d passed, %d failed (%d documents walked, %d pairs)" % (passed, failed, len(docs), len(PAIRS)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
