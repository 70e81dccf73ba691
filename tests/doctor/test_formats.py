#!/usr/bin/python3
"""NCCL format coverage (make test-doctor): the tables docs/nccl-<version>-formats.tsv (one per
NCCL release mined: 2.28.9, 2.29.7, 2.30.7) against the knowledge base and the doctor; check 2
uses the table of the tag the knowledge base's messages were read at (their newest "last").
  1. every format string in the table has a class: a knowledge-base message id, a finding the
     doctor reports it as, or "harmless: <reason>" (none UNCLASSIFIED);
  2. every knowledge-base message is in the table under its id, with the same file:line, first
     and last tag;
  3. every message is tested on a line generated from NCCL's own format string (the WARN/INFO
     prefix as src/debug.cc prints it): the doctor reports the finding it names;
  4. every WARN the table gives to nccl_warning makes the doctor exit 1 with that finding (or a
     more specific one), and the harmless INFO lines that are not read as facts together give no finding of severity warn
     or error.
Usage: test_formats.py DOCTOR OUTDIR [--batch N]
  --batch N (the sanitized lane, tests/doctor/run-tests.sh): check 4's generic WARN lines go N to
     a process (each batch: exit 1, its JSON document, a warn or error finding, no sanitizer
     report on stderr); the same lines reach the same code, in a tenth of the processes (each
     sanitized process costs ~60 ms to start and end); the plain lane judges each line alone"""
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "reports", "doctor", "tools"))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("nccl_formats", os.path.join(ROOT, "reports/doctor/tools/nccl-formats.py"))
nf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nf)

# the finding an existing signature's causal logic reports for a lone line
SIG_FINDING = {"libibverbs_missing": "libibverbs_missing", "ib_no_device": "no_rdma_device",
               "rdma_device_unusable": "rdma_device_unusable", "bootstrap_no_interface": "bootstrap_no_interface",
               "ib_completion": "ib_completion_error", "shm_too_small": "shm_too_small",
               "ib_wrong_hca": "ib_wrong_hca", "ib_gid_index_wrong": "ib_gid_index_wrong"}
passed = failed = 0


def result(ok, what):
    global passed, failed
    ok = bool(ok)
    passed += ok
    failed += not ok
    if not ok:
        print("not ok - " + what)


def unesc(s):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "\\": "\\"}[m.group(1)], s)


def table(path):
    rows = []
    with open(path) as f:
        for ln in f:
            if ln.startswith("#") or ln.startswith("level\t"):
                continue
            p = ln.rstrip("\n").split("\t")
            rows.append(dict(level=p[0], subsys=p[1], loc=p[2], first=p[3], last=p[4], cls=p[5], format=unesc(p[6])))
    return rows


def nccl_line(level, text):
    # src/debug.cc: "%s:%d:%d " host:pid:tid, then "[%d] %s:%d NCCL WARN " or "[%d] NCCL INFO "
    if level == "WARN":
        return "node01:4242:4243 [0] src/x.cc:1 NCCL WARN " + text
    return "node01:4242:4243 [0] NCCL INFO " + text


def sample(fmt, when=None):
    text = nf.sample(fmt.split("\n")[0])
    if when:
        # put the value the message needs into conversion when.index
        i = [0]

        def sub(m):
            k = i[0]
            i[0] += 1
            if m.group(5) == "%":
                i[0] -= 1
                return "%"
            return when["equals"] if k == when["index"] else nf.SAMPLE.get(m.group(5), "1")
        text = nf.CONV.sub(sub, fmt.split("\n")[0])
    return text


def doctor(binary, outdir, name, lines, args=()):
    path = os.path.join(outdir, name + ".log")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = subprocess.run([binary, "--format", "json", *args, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {"findings": [], "unparsed": True}
    doc["stderr"] = p.stderr
    return p.returncode, doc


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    batch = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--batch" else 0
    os.makedirs(outdir, exist_ok=True)
    kb = json.load(open(os.path.join(ROOT, "reports", "doctor", "knowledge.json")))
    msgs = {m["id"]: m for m in kb["messages"]}
    tables = {os.path.basename(p): table(p) for p in sorted(glob.glob(os.path.join(ROOT, "docs", "nccl-*-formats.tsv")))}
    kb_tag = max((m["last"] for m in kb["messages"]), key=lambda t: [int(x) for x in re.findall(r"\d+", t)])
    rows = tables["nccl-%s-formats.tsv" % kb_tag[1:].rsplit("-", 1)[0]]
    by_fmt = {(r["level"], r["format"]): r for r in rows}
    for name, t in tables.items():
        newest = max((r["last"] for r in t), key=lambda x: [int(v) for v in re.findall(r"\d+", x)])
        n_new = sum(r["last"] == newest for r in t)
        result(n_new > 600, "%s lists the %s format strings (%d)" % (name, newest, n_new))
    # every format of every table once (a later table repeats most of an earlier one)
    every = list({(r["level"], r["format"]): r for t in tables.values() for r in t}.values())

    # 1. every row classified
    for r in [r for t in tables.values() for r in t]:
        c = r["cls"]
        ok = (all(x in msgs for x in c.split(",")) or (c.startswith("harmless: ") and len(c) > 20) or
              (c.startswith("finding:") and (c[8:].split(" ")[0] in kb["findings"] or
                                              c[8:].split(" ")[0] in [e["key"] for e in kb.get("catalogue", [])])))
        result(ok, "%s %s: class %r is no message id, finding or harmless reason" % (r["loc"], r["format"][:60], c))
    # 2. messages agree with the table
    for m in kb["messages"]:
        r = by_fmt.get((m["level"], m["format"]))
        result(r is not None, "message %s: format not in the table: %r" % (m["id"], m["format"]))
        if r:
            result(m["id"] in r["cls"].split(","), "message %s: the table says %s" % (m["id"], r["cls"]))
            result(r["loc"].split(";")[0] == m["at"] and r["first"] == m["first"] and r["last"] == m["last"],
                   "message %s: at/first/last %s %s %s, the table %s %s %s" %
                   (m["id"], m["at"], m["first"], m["last"], r["loc"], r["first"], r["last"]))
    # 3. every message on a line generated from its format
    for m in kb["messages"]:
        want = m.get("finding") or SIG_FINDING[m["signature"]]
        line = nccl_line(m["level"], sample(m["format"], m.get("when")))
        rc, doc = doctor(binary, outdir, "msg-" + m["id"], [line])
        keys = [f["key"] for f in doc["findings"]]
        result(want in keys, "message %s: %r gives %s, want %s" % (m["id"], line, keys, want))
        f = [f for f in doc["findings"] if f["key"] == want]
        if f:
            ev = [e["line"] for e in f[0].get("evidence", [])]
            result(1 in ev, "message %s: the line is not the finding's evidence (%s)" % (m["id"], ev))
            sev = f[0]["severity"]
            result(rc == (1 if sev in ("warn", "error") else 0), "message %s: exit %d with severity %s" % (m["id"], rc, sev))
    # 4. generic WARNs and harmless INFOs
    generic = [r for r in every if r["cls"].startswith("finding:nccl_warning")]
    for i in range(0, len(generic), batch) if batch else []:
        lines = [nccl_line("WARN", sample(r["format"])) for r in generic[i:i + batch]]
        rc, doc = doctor(binary, outdir, "warn-batch-%d" % i, lines)
        worst = [f for f in doc["findings"] if f["severity"] in ("warn", "error")]
        san = [l for l in doc["stderr"].splitlines() if "Sanitizer" in l or "runtime error" in l]
        result(rc == 1 and worst and "unparsed" not in doc and not san,
               "generic WARN lines %d-%d: exit %d, findings %s %s" %
               (i, i + len(lines) - 1, rc, [f["key"] for f in doc["findings"]], san[:2]))
    for i, r in enumerate([] if batch else generic):
        line = nccl_line("WARN", sample(r["format"]))
        rc, doc = doctor(binary, outdir, "warn-%d" % i, [line])
        worst = [f for f in doc["findings"] if f["severity"] in ("warn", "error")]
        result(rc == 1 and worst, "%s: %r: exit %d, findings %s" % (r["loc"], line, rc, [f["key"] for f in doc["findings"]]))
    # lines read as facts are judged together (a NET connection without GDRDMA is gdr_not_used):
    # those are left out here, the golden cases judge them
    harmless = [nccl_line("INFO", sample(r["format"])) for r in every
                if r["cls"].startswith("harmless:") and "read as a fact" not in r["cls"]]
    rc, doc = doctor(binary, outdir, "harmless", harmless)
    bad = [(f["key"], [e.get("text", "")[:90] for e in f.get("evidence", [])]) for f in doc["findings"] if f["severity"] != "info"]
    result(rc == 0 and not bad, "%d harmless INFO lines: exit %d, findings %s" % (len(harmless), rc, bad))
    print("%d passed, %d failed (%d messages, %d generic WARN formats%s, %d harmless INFO formats)" %
          (passed, failed, len(msgs), len(generic), " %d to a process" % batch if batch else "", len(harmless)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
