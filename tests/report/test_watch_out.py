#!/usr/bin/env python3
"""nettune watch's outputs beyond its document, on generated NCCL Inspector logs
(tests/report/gen_inspector.py): the Prometheus textfile (--format prom), --drain through the
probe's drain path (a fake sinfo and scontrol on PATH that log what they are asked, as
tests/slurm wraps scontrol), --report against a pre-job probe report through the tuner's model,
and nettune report rendering a watch document (text, html, prom, --validate).
Environment: BUILD (default build)."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_watch import BUILD, ROOT, check, gen_inspector, valid  # noqa: E402  (one set of helpers)

WATCH = os.path.join(BUILD, "bin", "nettune-watch")
REPORT = os.path.join(BUILD, "bin", "nettune-report")
WORK = os.path.join(BUILD, "tests", "watch-out")


def run(binary, *args, env=None):
    return subprocess.run([binary] + list(args), capture_output=True, text=True, timeout=60, env=env)


def job(name, **kw):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    gen_inspector.generate(d, **kw)
    return d


def hang_job():
    return job("hang", hang=2, hang_at=30, after=6, seed=4, dump_every=2)


PROM_LINE = re.compile(r'^([a-z_:][a-z0-9_:]*)(\{([a-z_]+="(?:[^"\\]|\\.)*")(,[a-z_]+="(?:[^"\\]|\\.)*")*\})? (-?[0-9.e+]+)$')


def prom_samples(text):
    """The samples of a textfile as (name, labels, value); asserts the exposition rules the
    probe's writer keeps: HELP and TYPE gauge before a family's samples, no duplicate series."""
    seen, typed, out = set(), set(), []
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            check(kind == "gauge", "gauges only: " + line)
            typed.add(name)
            continue
        if line.startswith("#"):
            continue
        m = PROM_LINE.match(line)
        check(m, "not an exposition line: %r" % line)
        check(m.group(1) in typed, "sample before its TYPE: " + line)
        key = line.rsplit(" ", 1)[0]
        check(key not in seen, "duplicate series: " + key)
        seen.add(key)
        labels = dict(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
        out.append((m.group(1), labels, float(m.group(5))))
    return out


def prom_textfile():
    d = hang_job()
    r = run(WATCH, d, "--format", "prom")
    check(r.returncode == 1, "a hang fails in prom too: %d %s" % (r.returncode, r.stderr))
    s = prom_samples(r.stdout)
    f = [x for x in s if x[0] == "nettune_watch_finding"]
    check(len(f) == 1, "one finding series: %s" % f)
    name, lab, v = f[0]
    check(v == 2 and lab == {"host": "gpu01", "check": "watch_hang", "comm_id": "0x5eed0000000004",
                             "rank": "2", "code": "NT-JOB-202", "category": "drain"},
          "the hang as a fail (2) with the check table's code and category: %s" % (f,))
    bw = [x for x in s if x[0] == "nettune_watch_busbw_bytes_per_second"]
    check(len(bw) == 1 and bw[0][1]["coll"] == "AllReduce" and bw[0][1]["bytes"] == "67108864"
          and 5e10 < bw[0][2] < 2e11, "latest busbw in B/s: %s" % bw)
    counts = {x[0]: x[2] for x in s if not x[1]}
    check(counts.get("nettune_watch_findings_failed") == 1 and counts.get("nettune_watch_exit_code") == 1
          and counts.get("nettune_watch_records") == 282, "summary gauges: %s" % counts)
    # --output with --format prom is the textfile, replaced whole; stdout stays empty.
    out = os.path.join(WORK, "hang.prom")
    r2 = run(WATCH, d, "--format", "prom", "-o", out)
    check(r2.stdout == "" and open(out).read() == r.stdout, "--output holds the same textfile")
    # nettune report writes the same textfile from the document: one writer.
    doc = os.path.join(WORK, "hang.json")
    run(WATCH, d, "-q", "-o", doc)
    r3 = run(REPORT, doc, "--format", "prom")
    check(r3.returncode == 1 and r3.stdout == r.stdout, "report --format prom of the document: %d\n%s"
          % (r3.returncode, r3.stdout[:400]))


def fake_slurm(name, sinfo_lines, scontrol_rc=0):
    """A folder with sinfo printing sinfo_lines and scontrol logging its arguments (one call a
    line, arguments joined by |) to <folder>/scontrol.log; returns (env, log path)."""
    b = os.path.join(WORK, name, "bin")
    shutil.rmtree(os.path.dirname(b), ignore_errors=True)
    os.makedirs(b)
    log = os.path.join(os.path.dirname(b), "scontrol.log")
    with open(os.path.join(b, "sinfo"), "w") as f:
        f.write("#!/bin/sh\ncat <<'EOF'\n%s\nEOF\n" % "\n".join(sinfo_lines))
    with open(os.path.join(b, "scontrol"), "w") as f:
        f.write('#!/bin/sh\nIFS="|"; echo "$*" >> "%s"\nexit %d\n' % (log, scontrol_rc))
    for t in ("sinfo", "scontrol"):
        os.chmod(os.path.join(b, t), 0o755)
    env = dict(os.environ, PATH=b + os.pathsep + os.environ.get("PATH", ""))
    return env, log


def drain_through_probe_path():
    d = hang_job()
    reason = "nettune:NT-JOB-202 watch hang 30/36calls rank 2 pid 4002 comm 0x5eed0000000004"
    # gpu01 is Slurm node sn1 running a job (mixed): scontrol's DRAIN makes it DRAINING, then
    # DRAINED when the job ends.
    env, log = fake_slurm("drain", ["sn1|gpu01|mixed|none", "sn2|gpu02|idle|none"])
    r = run(WATCH, d, "--drain", env=env)
    check(r.returncode == 1, "the hang still fails: %d %s" % (r.returncode, r.stderr))
    calls = open(log).read().splitlines() if os.path.exists(log) else []
    check(calls == ["update|NodeName=sn1|State=DRAIN|Reason=" + reason],
          "one scontrol update of sn1 (the node of gpu01) with the watch's reason: %s" % calls)
    check("drain: scontrol update NodeName=sn1 State=DRAIN Reason='%s'" % reason in r.stdout, r.stdout)
    # The finding that drained the node carries its check table row's category, drain, in the
    # document as in docs/codes.md's row of the code the Slurm reason names: one source.
    out = os.path.join(WORK, "drain.json")
    run(WATCH, d, "--drain", "-q", "-o", out, env=env)
    fs = json.load(open(out))["findings"]
    row = [x for x in open(os.path.join(ROOT, "docs", "codes.md")).read().splitlines()
           if "`NT-JOB-202`" in x]
    check(len(fs) == 1 and fs[0]["code"] == "NT-JOB-202" and fs[0]["category"] == "drain"
          and len(row) == 1 and row[0].split("|")[3].strip() == "drain",
          "the drained hang's category is its row's, drain: %s %s" % ([(f["code"], f["category"]) for f in fs], row))
    # dry run: the line, and scontrol is not run.
    env, log = fake_slurm("drain-dry", ["sn1|gpu01|mixed|none"])
    r = run(WATCH, d, "--drain=dry-run", "-q", env=env)
    check(not os.path.exists(log), "dry-run ran scontrol")
    check(r.stdout.strip() == "scontrol update NodeName=sn1 State=DRAIN Reason='%s'" % reason, r.stdout)
    # an administrator's drain is left as it is (the probe's rule).
    env, log = fake_slurm("drain-admin", ["sn1|gpu01|drained|admin: replacing a fan"])
    r = run(WATCH, d, "--drain", "-q", env=env)
    check(not os.path.exists(log), "an administrator's drain was overwritten: %s" % r.stdout)
    # a warning (a straggler) drains nothing.
    s = job("straggler", straggler=5, seed=3)
    env, log = fake_slurm("drain-warn", ["sn2|gpu02|mixed|none"])
    r = run(WATCH, s, "--drain", env=env)
    check(r.returncode == 0 and not os.path.exists(log) and "nothing to drain" in r.stdout,
          "a straggler is a warning: no drain: %d %s" % (r.returncode, r.stdout))
    # scontrol refusing is said in one line, and a clean judgement then exits 1.
    env, log = fake_slurm("drain-refused", ["sn1|gpu01|mixed|none"], scontrol_rc=1)
    r = run(WATCH, d, "--drain", "-q", env=env)
    lines = [x for x in r.stderr.splitlines() if "--drain" in x]
    check(len(lines) == 1 and "failed" in lines[0] and "sn1" in lines[0], "one line for the refusal: %r" % r.stderr)


def report_renders_watch():
    d = job("onset", calls=120, slow_from=60, seed=11, base_us=10000.0)
    doc = os.path.join(WORK, "onset.json")
    w = run(WATCH, d, "-o", doc)
    check(w.returncode == 0 and "NT-JOB-204" in w.stdout, "onset job: %d %s" % (w.returncode, w.stdout))
    t = run(REPORT, doc)
    check(t.returncode == 0 and t.stdout == w.stdout, "report's text is the watch's summary:\n%s\n---\n%s"
          % (t.stdout, w.stdout))
    html = os.path.join(WORK, "onset.html")
    h = run(REPORT, doc, "--format", "html", "-o", html)
    page = open(html).read()
    check(h.returncode == 0 and page.startswith("<!DOCTYPE html>") and "<script" not in page, "html page")
    svgs = re.findall(r"<svg .*?</svg>", page, re.S)
    check(len(svgs) == 1, "one chart for one communicator: %d" % len(svgs))
    pts = re.findall(r'<polyline [^>]*points="([^"]*)"', svgs[0])
    check(len(pts) == 1 and len(pts[0].split()) == 120, "one line of 120 calls: %s" % [len(p.split()) for p in pts])
    onset = re.findall(r'<line x1="([0-9.]+)"[^>]*stroke="#d63638"[^>]*><title>onset at call (\d+)', svgs[0])
    check(len(onset) == 1 and onset[0][1] == "60", "the onset marked at call 60: %s" % onset)
    # the mark sits at call 60's x: the 60th point of the line.
    x60 = float(pts[0].split()[59].split(",")[0])
    check(abs(float(onset[0][0]) - x60) < 0.11, "onset x %s, call 60 at %s" % (onset[0][0], x60))
    # exit codes are the probe's: a hang's document exits 1 in report too; md is refused.
    hd = os.path.join(WORK, "hang-r.json")
    run(WATCH, hang_job(), "-q", "-o", hd)
    check(run(REPORT, hd).returncode == 1, "a hang's document exits 1")
    m = run(REPORT, hd, "--format", "md")
    check(m.returncode == 2 and len(m.stderr.strip().splitlines()) == 1 and "text, html or prom" in m.stderr,
          "md: %d %r" % (m.returncode, m.stderr))
    v = run(REPORT, "--validate", doc)
    check(v.returncode == 0 and "valid nettune.watch/1" in v.stdout, "validate: %s %s" % (v.stdout, v.stderr))
    bad = json.load(open(doc))
    bad["findings"][0]["code"] = "NT-PCIE-001"
    badp = os.path.join(WORK, "onset-bad.json")
    json.dump(bad, open(badp, "w"))
    v = run(REPORT, "--validate", badp)
    check(v.returncode == 1 and "$.findings[0].code" in v.stdout, "a probe code in a watch finding: %s" % v.stdout)


PROBE_REPORT = os.path.join(ROOT, "tests", "fixtures", "reports", "gpu-rdma-pass.json")


def below_model_with_report():
    rep = json.load(open(PROBE_REPORT))
    links = [l["peak_bw_GBps"] for l in rep["links"] if l["kind"] == "rdma" and l.get("scope") == "inter"
             and {l["src"]["host"], l["dst"]["host"]} <= {"gpu01", "gpu02"}]
    nics = min(sum(1 for n in x["nics"] if n["state"] == "ACTIVE") for x in rep["nodes"]
               if x["hostname"] in ("gpu01", "gpu02"))
    # 64 MiB AllReduce on 2 nodes: each node moves 2 (2 - 1) / 2 = 1 message across its NICs,
    # so no call is faster than S / (slowest link x ports); busbw = S / t x 2 (8 - 1) / 8.
    size = 64 << 20
    bound = size / (size / (min(links) * nics * 1e9)) / 1e9 * 2 * 7 / 8
    slow = job("model-slow", seed=22, calls=40, base_us=3000)
    out = os.path.join(WORK, "model-slow.json")
    r = run(WATCH, slow, "--report", PROBE_REPORT, "-o", out)
    doc = json.load(open(out))
    valid(doc)
    v = run(REPORT, "--validate", out)
    check(v.returncode == 0, "nettune report --validate: %s" % v.stdout)
    f = [x for x in doc["findings"] if x["code"] == "NT-JOB-206"]
    check(r.returncode == 0 and len(f) == 1, "one below-model warning: %d %s" % (r.returncode, doc["findings"]))
    f = f[0]
    check(f["check"] == "watch_below_model" and f["category"] == "monitor" and f["status"] == "warn"
          and f["coll"] == "AllReduce" and f["bytes"] == size and f["calls_judged"] == 40, f)
    check(abs(f["expected_busbw_GBps"] - bound) < 0.05, "expected %s, the links' bound %.3f" % (f["expected_busbw_GBps"], bound))
    observed = size / 3000e-6 / 1e9 * 2 * 7 / 8  # the generator's 3,000 us a call, 3% noise
    check(abs(f["observed_busbw_GBps"] / observed - 1) < 0.03, "observed %s of %.1f" % (f["observed_busbw_GBps"], observed))
    check(abs(f["ratio"] - f["observed_busbw_GBps"] / f["expected_busbw_GBps"]) < 1e-9, f)
    pct = "%.0f%%" % (f["ratio"] * 100)
    check("AllReduce of 64 MiB in comm %s runs at %s of what its measured links give" % (f["comm_id"], pct)
          in f["verdict"], f["verdict"])
    # just below the 70% rule: the ratio is printed precisely enough not to read as the rule
    near = job("model-near", calls=200)
    out = os.path.join(WORK, "model-near.json")
    run(WATCH, near, "--report", PROBE_REPORT, "-o", out)
    f = [x for x in json.load(open(out))["findings"] if x["code"] == "NT-JOB-206"]
    check(len(f) == 1 and 0.695 <= f[0]["ratio"] < 0.7, "a ratio that rounds to 70%%: %s" % f)
    m = re.search(r"runs at ([0-9.]+)% of what", f[0]["verdict"])
    check(m and float(m.group(1)) < 70 and m.group(1) == "%.1f" % (f[0]["ratio"] * 100)
          and "below 70% is a finding" in f[0]["reason"], f[0]["verdict"])
    # a job at the links' speed is no finding, and nothing is left unjudged for it.
    fast = job("model-fast", seed=21, calls=40, base_us=600)
    out = os.path.join(WORK, "model-fast.json")
    run(WATCH, fast, "--report", PROBE_REPORT, "-o", out)
    doc = json.load(open(out))
    check(not doc["findings"] and not [n for n in doc["not_judged"] if n["check"] == "watch_below_model"],
          "at the links' speed: %s %s" % (doc["findings"], doc["not_judged"]))
    # what the model cannot judge is not_judged with the reason.
    def reasons(d, *extra):
        out = os.path.join(WORK, "model-nj.json")
        run(WATCH, d, "-o", out, *extra)
        doc = json.load(open(out))
        valid(doc)
        return [n["reason"] for n in doc["not_judged"] if n["check"] == "watch_below_model"]
    nj = reasons(fast)
    check(len(nj) == 1 and nj[0].startswith("no --report"), nj)
    one = job("model-one-node", seed=23, calls=40, nranks=4, per_host=4)
    nj = reasons(one, "--report", PROBE_REPORT)
    check(len(nj) == 1 and nj[0].startswith("one node (gpu01)"), nj)
    wide = job("model-wide", seed=24, calls=12, nranks=40, per_host=4)
    nj = reasons(wide, "--report", PROBE_REPORT)
    check(len(nj) == 1 and "host 'gpu09' is not in the report" in nj[0], nj)
    nover = dict(rep)
    nover["nodes"] = [dict(n, software={k: v for k, v in n.get("software", {}).items() if k != "nccl"})
                      for n in rep["nodes"]]
    nvp = os.path.join(WORK, "report-no-nccl.json")
    json.dump(nover, open(nvp, "w"))
    nj = reasons(fast, "--report", nvp)
    check(len(nj) == 1 and "names no NCCL version" in nj[0], nj)
    r = run(WATCH, fast, "--report", os.path.join(WORK, "no-such.json"))
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 2 and len(lines) == 1 and "--report" in lines[0], "a missing report: %d %r" % (r.returncode, r.stderr))


def files_read_one_at_a_time():
    # Without --follow each file is closed once read: a job of more ranks' files than the
    # process may open at once is judged (before, every reader stayed open with its buffers:
    # 4,096 ranks' files took 1.3 GiB, make bench-watch).
    import resource
    d = job("many-files", nranks=64, per_host=8, calls=12, seed=31)
    lim = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (24, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    out = os.path.join(WORK, "many-files.json")
    r = subprocess.run([WATCH, d, "-q", "-o", out], capture_output=True, text=True, timeout=60, preexec_fn=lim)
    check(r.returncode == 0, "64 files with 24 descriptors: %d %s" % (r.returncode, r.stderr))
    doc = json.load(open(out))
    check(len(doc["inputs"]) == 64 and doc["summary"]["records"] == 64 * 12
          and all(i["records"] == 12 and i["format"] == "inspector_json" for i in doc["inputs"]),
          "every file's entry kept after its reader closed: %s" % doc["summary"])


TESTS = [prom_textfile, drain_through_probe_path, report_renders_watch, below_model_with_report,
         files_read_one_at_a_time]


def main():
    for b in (WATCH, REPORT):
        if not os.access(b, os.X_OK):
            print("watch output tests: %s is not built" % b)
            return 2
    os.makedirs(WORK, exist_ok=True)
    npass = nfail = 0
    t_all = time.time()
    for i, fn in enumerate(TESTS, 1):
        try:
            fn()
            npass += 1
            print("ok %d - %s" % (i, fn.__name__), flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            nfail += 1
            print("not ok %d - %s: %s" % (i, fn.__name__, str(e)[:2000]), flush=True)
    print("watch output tests: %d passed, %d failed (%.1f s)" % (npass, nfail, time.time() - t_all))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
