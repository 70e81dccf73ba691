#!/usr/bin/python3
"""Tests of nettune-report: every format on the committed reports and on a synthetic 1,000-node
report, Prometheus export checked with promtool, the HTML page loaded in headless Chromium,
diff semantics, and --validate agreeing with python3-jsonschema on good and broken files.

Usage: tests/report/test_report.py [-k SUBSTRING] [-v]
Environment: NETTUNE_REPORT (binary, default build/bin/nettune-report), BUILD (default build).
Prints one line per test (ok / not ok / skip) and "report tests: N passed, N failed, N skipped".
Tests that need a tool (promtool, chromium, valgrind) skip with the reason when it is absent.
"""
import concurrent.futures
import copy
import csv
import html.parser
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from datetime import datetime, timezone

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
BIN = os.environ.get("NETTUNE_REPORT", os.path.join(BUILD, "bin", "nettune-report"))
FIX = os.path.join(ROOT, "tests", "fixtures", "reports")
SCHEMA = os.path.join(ROOT, "reports", "schema", "report.schema.json")
WORK = os.path.join(BUILD, "tests", "report")
GEN = os.path.join(ROOT, "tests", "report", "gen_big_report.py")

TESTS = []


# make ... SANITIZE=1 (mk/sanitize.mk): ASan binaries run several times slower, so the time
# limits of the big-report case are not checked, and valgrind cannot run them.
SANITIZED = os.environ.get("NETTUNE_SANITIZE") == "1"


class Skip(Exception):
    pass


def test(fn):
    TESTS.append(fn)
    return fn


def check(cond, msg="check failed"):
    if not cond:
        raise AssertionError(msg)


def run(args, env=None, timeout=120, cwd=None, raw=False):
    """Run nettune-report; raw: stdout as bytes (text mode would turn CRLF into LF)."""
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    if env:
        e.update(env)
    return subprocess.run([BIN] + list(args), capture_output=True, text=not raw, env=e,
                          timeout=timeout, cwd=cwd)


def load(path):
    with open(path) as f:
        return json.load(f)


def dump(doc, name):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def fixtures():
    """The committed report fixtures (not the tuning file)."""
    out = []
    for name in sorted(os.listdir(FIX)):
        if name.endswith(".json") and load(os.path.join(FIX, name)).get("schema") == "nettune.report/1":
            out.append(os.path.join(FIX, name))
    return out


def fx(name):
    return os.path.join(FIX, name)


# The big report: 1,000 nodes. Under SANITIZE=1, 200 (above the HTML heatmap's 100-node limit,
# so the same code paths): AddressSanitizer's cost grows with the size, which the plain run
# covers with its time limits. Its faults sit on the same nodes, scaled (node0007 of 1,000 is
# node001 of 200).
BIG_NODES = 200 if SANITIZED else 1000


def big_host(i):
    """Host i of 1,000 in the big report (gen_big_report.py names them node1..nodeN, padded)."""
    return "node%0*d" % (max(2, len(str(BIG_NODES))), max(1, i * BIG_NODES // 1000))


BIG = os.path.join(WORK, "big-%d-v3.json" % BIG_NODES)  # v3: scaled fault hosts (no stale v2)
BIG_FAILED = [big_host(i) for i in (7, 42, 123, 300, 500)]


def make_big():
    if not os.path.exists(BIG):
        subprocess.run([GEN, "--nodes", str(BIG_NODES), "--fail-node", big_host(7),
                        "--fail-node", big_host(500), "--down-port", big_host(123) + ":mlx5_1",
                        "--bad-gpu-link", big_host(42) + ":2:3", "--warn-software", big_host(900),
                        "--slow-pcie", big_host(300) + ":1", "--output", BIG], check=True)
    return BIG


def expected_rc(doc):
    if doc["summary"]["verdict"] == "fail" or doc["summary"]["failed_nodes"]:
        return 1
    if not doc["run"]["completed"]:
        return 3
    return 0


# ---------------------------------------------------------------- command line, exit codes


@test
def help_and_version():
    r = run(["--help"])
    check(r.returncode == 0, "--help rc %d" % r.returncode)
    for opt in ["--format", "--output", "--node", "--top", "--color", "--quiet", "--diff",
                "--regression-threshold", "--fail-on-vanished", "--validate", "--version"]:
        check(opt in r.stdout, "--help does not mention " + opt)
    r = run(["--version"])
    check(r.returncode == 0 and r.stdout.startswith("nettune report "), r.stdout)


@test
def bad_usage_exits_2():
    f, g = fx("real-full-4n.json"), fx("gpu-rdma-pass.json")
    cases = [[], [f, g], ["--format", "pdf", f], ["--bogus", f], ["--node", "fake0", f],
             ["--diff", f], ["--validate"], ["--top", "-1", f], ["--format"],
             ["--diff", "--regression-threshold", "abc", f, g], ["--diff", "--validate", f, g],
             ["--diff", "--format", "html", f, g], ["--validate", "--format", "md", f],
             ["--color", "sometimes", f], ["--node", "x", "--diff", f, g]]
    for args in cases:
        r = run(args)
        check(r.returncode == 2, "%s: rc %d, want 2" % (args, r.returncode))
        check(r.stderr.strip(), "%s: no message on stderr" % args)


@test
def unreadable_or_foreign_input_exits_2():
    os.makedirs(WORK, exist_ok=True)
    notjson = os.path.join(WORK, "notjson.json")
    with open(notjson, "w") as f:
        f.write("{\"schema\": \"nettune.report/1\", oops")
    foreign = dump({"schema": "acme.inventory/3", "nodes": []}, "foreign.json")
    array = dump([1, 2, 3], "array.json")
    noschema = dump({"nodes": []}, "noschema.json")
    missing = os.path.join(WORK, "does-not-exist.json")
    for args in [[missing], [notjson], [foreign], [array], [noschema], [WORK],
                 ["--diff", missing, fx("real-full-4n.json")],
                 ["--diff", fx("real-full-4n.json"), notjson],
                 ["--diff", fx("tuning.json"), fx("real-full-4n.json")],
                 ["--validate", missing], ["--validate", WORK],
                 ["--format", "prom", fx("tuning.json")]]:
        r = run(args)
        check(r.returncode == 2, "%s: rc %d, want 2 (%s)" % (args, r.returncode, r.stderr))
        check(r.stderr.strip(), "%s: no message" % args)
    r = run([foreign])
    check("acme.inventory/3" in r.stderr, "the unknown schema id is not named: " + r.stderr)


@test
def ldd_needs_no_mpi_cuda_or_rdma():
    if not shutil.which("ldd"):
        raise Skip("ldd not installed")
    r = subprocess.run(["ldd", BIN], capture_output=True, text=True)
    check(r.returncode == 0, r.stderr)
    bad = re.compile(r"lib(mpi|open-pal|open-rte|cuda|cudart|nvidia-ml|nccl|ibverbs|rdmacm|mlx5|ucx|ucp|ucs|psm|fabric)\b")
    for line in r.stdout.splitlines():
        check(not bad.search(line), "nettune-report needs " + line.strip())
    check("libcjson" in r.stdout, "expected libcjson in:\n" + r.stdout)


@test
def summary_line_and_quiet():
    out = os.path.join(WORK, "summary.html")
    r = run([fx("gpu-rdma-fail.json"), "--format", "html", "--output", out])
    check(r.returncode == 1, "rc %d" % r.returncode)
    check("html written to " + out in r.stdout and "fail" in r.stdout, r.stdout)
    r = run([fx("gpu-rdma-fail.json"), "--format", "html", "--output", out, "--quiet"])
    check(r.stdout == "", "--quiet printed: " + r.stdout)


@test
def dispatcher_runs_report():
    nettune = os.path.join(os.path.dirname(BIN), "nettune")
    if not os.path.exists(nettune):
        raise Skip("build/bin/nettune not built")
    r = subprocess.run([nettune, "report", "--help"], capture_output=True, text=True)
    check(r.returncode == 0 and "--validate" in r.stdout, r.stderr)


@test
def diagnosis_counts_absent_or_out_of_range():
    """A diagnosis whose summary lacks a count, or holds one beyond an int, renders 0 or the count
    saturated, never (int)NAN or (int)1e300 (UB in C: -2147483648 on x86 before the fix)."""
    for summary, want in (({}, "0 error, 0 warn, 0 info"),
                          ({"errors": 1e300, "warnings": -1e300, "infos": 2}, "2147483647 error, -2147483648 warn, 2 info")):
        path = dump({"schema": "nettune.diagnosis/1", "summary": summary}, "diag-counts.json")
        for fmt in ("text", "md"):
            r = run(["--format", fmt, path])
            check(r.returncode in (0, 1), "rc %d: %s" % (r.returncode, r.stderr))
            check(want in r.stdout, "expected %r in:\n%s" % (want, r.stdout))


# ---------------------------------------------------------------- validation


def py_paths(doc, schema=SCHEMA):
    """python3-jsonschema's errors as "$.a[1].b" paths."""
    import jsonschema
    v = jsonschema.Draft202012Validator(load(schema))
    out = set()
    for e in v.iter_errors(doc):
        p = "$"
        for step in e.absolute_path:
            if isinstance(step, int):
                p += "[%d]" % step
            elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", step):
                p += "." + step
            else:
                p += "['%s']" % step.replace("\\", "\\\\").replace("'", "\\'")
        out.add(p)
    return out


def c_validate(path):
    """rc, the paths of the schema-level problems (what JSON Schema can find: the semantic
    checks nettune adds are left out, for the agreement tests), and every problem."""
    r = run(["--validate", "--format", "json", path])
    check(r.returncode in (0, 1), "--validate %s: rc %d %s" % (path, r.returncode, r.stderr))
    check(r.stderr == "", "--validate printed on stderr: " + r.stderr)
    res = json.loads(r.stdout)["files"][0]
    check((r.returncode == 1) == bool(res["problems"]), "%s: rc %d with %d problems" % (path, r.returncode, len(res["problems"])))
    for p in res["problems"]:
        check(p["kind"] in ("schema", "semantic") and (p["kind"] == "semantic") == p["message"].endswith(" (semantic)"),
              "problem kind: %s" % p)
    return r.returncode, {p["path"] for p in res["problems"] if p["kind"] == "schema"}, res["problems"]


def broken_variants(base):
    """(name, document) pairs, each broken in one known way."""
    v = []

    def mut(name, fn):
        d = copy.deepcopy(base)
        fn(d)
        v.append((name, d))

    mut("missing run.id", lambda d: d["run"].pop("id"))
    mut("unknown schema id", lambda d: d.__setitem__("schema", "nettune.report/2"))
    mut("bad verdict enum", lambda d: d["links"][3].__setitem__("verdict", "ok"))
    mut("bad link id pattern", lambda d: d["links"][0].__setitem__("id", "not a link id"))
    mut("nranks as string", lambda d: d["run"].__setitem__("nranks", "4"))
    mut("nranks zero", lambda d: d["run"].__setitem__("nranks", 0))
    mut("started_at not RFC 3339", lambda d: d["run"].__setitem__("started_at", "2026-11-22 09:30"))
    mut("empty hostname", lambda d: d["nodes"][0].__setitem__("hostname", ""))
    mut("missing link kind", lambda d: d["links"][1].pop("kind"))
    mut("unknown check name", lambda d: d["checks"][0].__setitem__("name", "vibes"))
    mut("sample with neither lat_us nor bw_GBps",
        lambda d: [d["links"][i] for i in range(len(d["links"])) if d["links"][i].get("samples")][0]
        ["samples"][0].pop("lat_us"))
    mut("negative bandwidth", lambda d: d["links"][0].__setitem__("peak_bw_GBps", -1))
    mut("time limit zero", lambda d: d["run"].__setitem__("time_limit_s", 0))
    mut("tool name const", lambda d: d["tool"].__setitem__("name", "nettool"))
    mut("fractional count", lambda d: d["summary"]["counts"].__setitem__("fail", 1.5))
    mut("software value type", lambda d: d["nodes"][0]["software"].__setitem__("kernel", 6))
    mut("links not an array", lambda d: d.__setitem__("links", {}))
    mut("nic port zero", lambda d: d["nodes"][0]["nics"][0].__setitem__("port", 0))
    mut("rank is a boolean", lambda d: d["links"][0]["src"].__setitem__("rank", True))
    mut("completed as string", lambda d: d["run"].__setitem__("completed", "yes"))
    mut("bad node verdict", lambda d: d["nodes"][0].__setitem__("verdict", "broken"))
    mut("bad failed node cause", lambda d: d["summary"]["failed_nodes"][0].__setitem__("cause", "gremlins"))
    mut("retested as string", lambda d: d["links"][0].__setitem__("retested", "yes"))
    mut("first with a negative figure", lambda d: d["links"][0].__setitem__("first", {"peak_bw_GBps": -2}))
    mut("not_judged not an array", lambda d: d["summary"].__setitem__("not_judged", "none"))
    mut("missing checks", lambda d: d.pop("checks"))
    mut("failed node without reason", lambda d: d["summary"]["failed_nodes"][0].pop("reason"))
    mut("affinity path enum", lambda d: d["nodes"][0]["affinity"][0].__setitem__("path", "XYZ"))
    mut("mode enum", lambda d: d["run"].__setitem__("mode", "thorough"))
    mut("scope enum", lambda d: d["links"][5].__setitem__("scope", "global"))
    mut("odd key in software", lambda d: d["nodes"][1]["software"].__setitem__("my lib's", 1))

    def many(d):
        d["run"].pop("mode")
        d["links"][2]["kind"] = "carrier-pigeon"
        d["checks"][4]["verdict"] = None
        d["nodes"][2]["gpus"][0]["index"] = -1
    mut("several problems at once", many)
    return v


@test
def validate_fabric_phase_transport():
    """The fabric phases' transport (docs/fabric.md): tcp or rdma, optional (older reports)."""
    doc = load(fx("fabric-cut-8n.json"))
    for t in ("tcp", "rdma"):
        d = copy.deepcopy(doc)
        d["fabric"]["phases"][1]["transport"] = t
        r = run(["--validate", dump(d, "fabric-transport-%s.json" % t)])
        check(r.returncode == 0, "transport %s: rc %d %s" % (t, r.returncode, r.stdout))
    d = copy.deepcopy(doc)
    d["fabric"]["phases"][1]["transport"] = "udp"
    r = run(["--validate", dump(d, "fabric-transport-udp.json")])
    check(r.returncode == 1, "transport udp: rc %d" % r.returncode)
    check("$.fabric.phases[1].transport: expected one of tcp, rdma" in r.stdout, r.stdout)


@test
def validate_fixtures_are_valid():
    for f in fixtures() + [fx("tuning.json"), make_big()]:
        rc, paths, _ = c_validate(f)
        check(rc == 0 and not paths, "%s: %s" % (f, paths))


@test
def validate_agrees_with_jsonschema():
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        raise Skip("/usr/bin/python3 has no jsonschema (apt-get install python3-jsonschema)")
    base = load(fx("gpu-rdma-fail.json"))
    cases = [(os.path.basename(f), load(f)) for f in fixtures()]
    cases += [("integral float is an integer", dict(base, run=dict(base["run"], nranks=32.0)))]
    broken = broken_variants(base)
    check(len(broken) >= 15, "only %d broken variants" % len(broken))
    cases += broken
    cases += [("top-level array", [base])]
    for i, (name, doc) in enumerate(cases):
        path = dump(doc, "variant-%02d.json" % i)
        rc, cpaths, probs = c_validate(path)
        ppaths = py_paths(doc)
        check((not cpaths) == (not ppaths),
              "%s: nettune says %s, jsonschema says %s" % (name, "valid" if rc == 0 else "invalid",
                                                          "valid" if not ppaths else "invalid"))
        check(cpaths == ppaths, "%s: paths differ: nettune %s, jsonschema %s" % (name, sorted(cpaths),
                                                                                sorted(ppaths)))
    for name, doc in broken:
        check(py_paths(doc), "broken variant '%s' is valid to jsonschema: not a test" % name)
    # The message names the path and what was expected.
    d = copy.deepcopy(base)
    d["links"][3]["verdict"] = "ok"
    r = run(["--validate", dump(d, "enum.json")])
    check(r.returncode == 1, "rc %d" % r.returncode)
    check("$.links[3].verdict: expected one of pass, warn, fail, skipped, not_judged" in r.stdout, r.stdout)


def random_mutants(base, count, seed):
    """count copies of base with 1-3 values replaced by JSON of another type or range."""
    import random
    rng = random.Random(seed)
    junk = [None, True, -1, 0, 2.5, "", "x", [], {}, {"a": 1}, [None], "nettune.report/1",
            "fail", 1e20]

    def paths(node, pre=()):
        if pre:
            yield pre
        if isinstance(node, dict):
            for k, v in node.items():
                yield from paths(v, pre + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node[:2]):
                yield from paths(v, pre + (i,))

    all_paths = list(paths(base))
    for n in range(count):
        d = copy.deepcopy(base)
        for p in rng.sample(all_paths, rng.randint(1, 3)):
            try:
                parent = d
                for step in p[:-1]:
                    parent = parent[step]
                if rng.random() < 0.15 and isinstance(parent, dict):
                    parent.pop(p[-1], None)
                else:
                    parent[p[-1]] = rng.choice(junk)
            except (KeyError, IndexError, TypeError):
                pass
        yield "mutant %d" % n, d


def agree(cases, schema=SCHEMA):
    schema_id = load(schema)["properties"]["schema"]["const"]
    for i, (name, doc) in enumerate(cases):
        path = dump(doc, "agree-%03d.json" % i)
        rc, cpaths, probs = c_validate(path)
        ppaths = py_paths(doc, schema)
        if isinstance(doc, dict) and doc.get("schema") == schema_id:
            check(cpaths == ppaths,
                  "%s: nettune %s, jsonschema %s" % (name, sorted(cpaths), sorted(ppaths)))
        elif isinstance(doc, dict) and doc.get("schema") in ("nettune.report/1", "nettune.diagnosis/1",
                                                             "nettune.plugin-report/1", "nettune.tuning/1"):
            # A mutant that now names another schema: checked against that one.
            check(rc == 1, "%s (now %s): nettune says valid" % (name, doc["schema"]))
        else:
            # Without its schema id a document has no schema to be checked against: nettune
            # names that one problem, jsonschema goes on with the rest.
            check(rc == 1 and ppaths and cpaths <= ppaths,
                  "%s (schema id changed): nettune %s, jsonschema %s" % (name, sorted(cpaths), sorted(ppaths)))


@test
def validate_agrees_with_jsonschema_on_random_mutants():
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        raise Skip("/usr/bin/python3 has no jsonschema")
    agree(random_mutants(load(fx("gpu-rdma-fail.json")), 150, 7))
    agree(random_mutants(load(fx("real-full-4n.json")), 50, 8))


@test
def validate_diagnosis_agrees_with_jsonschema():
    """nettune doctor's output (nettune.diagnosis/1), when the tree has its schema and binary."""
    schema = os.path.join(ROOT, "reports", "schema", "diagnosis.schema.json")
    doctor = os.path.join(os.path.dirname(BIN), "nettune-doctor")
    # The repository's own copies of the logs: the tree must stand on its own.
    log_dirs = [os.path.join(ROOT, "tests", "fixtures", d) for d in ("nccl-debug-logs", "nccl-tests-logs")]
    if not os.path.exists(schema) or not os.access(doctor, os.X_OK):
        raise Skip("no nettune-doctor or diagnosis schema in this tree")
    for logs in log_dirs:
        check(os.path.isdir(logs) and os.listdir(logs), "the NCCL log fixtures are missing: " + logs)
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        raise Skip("/usr/bin/python3 has no jsonschema")
    docs = []
    for logs in log_dirs:
        for name in sorted(os.listdir(logs))[:3]:
            out = os.path.join(WORK, "diag-%s.json" % name)
            if os.path.exists(out):
                os.unlink(out)
            r = subprocess.run([doctor, "--quiet", "--output", out, os.path.join(logs, name)],
                               capture_output=True, timeout=60)
            check(os.path.exists(out), "nettune-doctor wrote nothing for %s (rc %d): %s"
                  % (name, r.returncode, r.stderr.decode(errors="replace")[-500:]))
            docs.append((name, load(out)))
    check(docs, "nettune-doctor wrote no diagnosis")
    agree(docs, schema)
    for name, d in docs[::3]:  # one of each kind of log
        agree(random_mutants(d, 40, 9), schema)


@test
def one_table_of_schema_ids():
    """The ids --validate knows, those rendering knows and the --help lists are one table:
    --validate's "known:" list is the help's "validates:" line, a document that validates but
    does not render names the help's "renders:" line, and a history document (which
    python3-jsonschema validates against reports/schema/history.schema.json) validates here too,
    against that schema (a mutant is refused)."""
    h = run(["--help"]).stdout
    renders = re.search(r"^  renders:   (.*)$", h, re.M).group(1)
    validates = re.search(r"^  validates: (.*)$", h, re.M).group(1)
    check(renders.split(", ") == ["nettune.report/1", "nettune.tuning/1", "nettune.diagnosis/1", "nettune.watch/1"],
          renders)
    for sid in ("nettune.report/1", "nettune.tuning/1", "nettune.watch/1", "nettune.history/1",
                "nettune.plugin-report/1", "nettune.thresholds/1", "nettune.doctor-kb/1"):
        check(sid in validates.split(", "), "%s not in the help's validates: %s" % (sid, validates))
    bogus = dump({"schema": "nettune.bogus/1"}, "bogus-id.json")
    r = run(["--validate", bogus])
    check(r.returncode == 1 and '$.schema: unknown schema id "nettune.bogus/1" (known: %s)' % validates in r.stdout,
          r.stdout)
    r = run([bogus])
    check(r.returncode == 2 and r.stderr.splitlines() == [
        "nettune report: '%s' has schema 'nettune.bogus/1', not a document nettune report renders (%s)"
        % (bogus, renders)], r.stderr)
    hist = os.path.join(WORK, "history-doc.json")
    r = run(["--history", fx("fake-full-4n-healthy-a.json"), fx("fake-full-4n-healthy-b.json"), "-f", "json",
             "-o", hist])
    check(r.returncode == 0, r.stderr)
    r = run(["--validate", hist])
    check(r.returncode == 0 and r.stdout == "%s: valid nettune.history/1\n" % hist, r.stdout + r.stderr)
    try:
        import jsonschema
        jsonschema.validate(load(hist), load(os.path.join(ROOT, "reports", "schema", "history.schema.json")))
    except ImportError:
        pass
    d = load(hist)
    d["drifts"] = -1
    r = run(["--validate", dump(d, "history-mutant.json")])
    check(r.returncode == 1 and "$.drifts" in r.stdout, r.stdout)
    r = run([hist])
    check(r.returncode == 2 and r.stderr.splitlines() == [
        "nettune report: '%s' is a nettune.history/1 document, which is not rendered (nettune report FILE "
        "renders %s): check it with nettune report --validate" % (hist, renders)], r.stderr)


@test
def diff_names_the_file_that_is_not_a_report():
    """--diff given another document names which file (OLD, NEW, or both) and what it is."""
    rep, tun = fx("fake-full-4n-healthy-a.json"), fx("tuning.json")
    line = "nettune report: --diff compares two nettune.report/1 files: %s '%s' is a nettune.tuning/1: give a report nettune probe wrote"
    r = run(["--diff", rep, tun])
    check(r.returncode == 2 and r.stderr.splitlines() == [line % ("NEW", tun)], r.stderr)
    r = run(["--diff", tun, rep])
    check(r.returncode == 2 and r.stderr.splitlines() == [line % ("OLD", tun)], r.stderr)
    r = run(["--diff", tun, tun])
    check(r.returncode == 2 and r.stderr.splitlines() == [line % ("OLD", tun), line % ("NEW", tun)], r.stderr)


@test
def validate_exit_codes():
    good = fx("real-full-4n.json")
    d = load(good)
    d["schema"] = "nettune.report/7"
    bad = dump(d, "unknown-id.json")
    with open(os.path.join(WORK, "garbage.json"), "w") as f:
        f.write("\x00\x01not json")
    check(run(["--validate", good]).returncode == 0, "valid")
    r = run(["--validate", bad])
    check(r.returncode == 1 and "$.schema: unknown schema id" in r.stdout, r.stdout)
    # Read but not JSON, or cut short: not a valid nettune document, exit 1 (reports/README.md).
    with open(os.path.join(WORK, "truncated.json"), "w") as f:
        f.write(open(good).read()[:700])
    with open(os.path.join(WORK, "empty.json"), "w") as f:
        pass
    with open(os.path.join(WORK, "blank.json"), "w") as f:
        f.write(" \n\t\n")
    for name, why in [("garbage.json", "not JSON (a NUL byte at byte 0)"),
                      ("notjson.json", "not valid JSON near line 1, column 33"),
                      ("truncated.json", "truncated JSON (the text ends at byte 700"),
                      ("empty.json", "empty (0 bytes), not JSON"),
                      ("blank.json", "empty (4 bytes, all white space), not JSON")]:
        if name == "notjson.json":
            with open(os.path.join(WORK, name), "w") as f:
                f.write("{\"schema\": \"nettune.report/1\", oops}")
        r = run(["--validate", os.path.join(WORK, name)])
        check(r.returncode == 1, "%s: rc %d, want 1 (%s)" % (name, r.returncode, r.stderr))
        check("$: not a valid nettune document: " + why in r.stdout, "%s: %s" % (name, r.stdout))
        rj = run(["--validate", "--format", "json", os.path.join(WORK, name)])
        res = json.loads(rj.stdout)
        check(rj.returncode == 1 and res["valid"] is False and res["files"][0]["problems"][0]["path"] == "$",
              "%s --format json: %s" % (name, rj.stdout))
    # Unreadable: still 2.
    check(run(["--validate", os.path.join(WORK, "nope.json")]).returncode == 2, "missing file")
    check(run(["--validate", WORK]).returncode == 2, "a directory")
    # --format json holds the reason too (it was only on stderr)
    for target, reason in ((os.path.join(WORK, "nope.json"), "No such file or directory"),
                           (WORK, "Is a directory")):
        rj = run(["--validate", "--format", "json", target])
        f0 = json.loads(rj.stdout)["files"][0]
        check(rj.returncode == 2 and f0["result"] == "unreadable" and reason in f0.get("reason", ""),
              "--validate --format json of %s: %s" % (target, rj.stdout))
    if os.geteuid() != 0:
        locked = os.path.join(WORK, "locked.json")
        shutil.copy(good, locked)
        os.chmod(locked, 0)
        check(run(["--validate", locked]).returncode == 2, "no permission")
        os.chmod(locked, 0o644)
    check(run(["--validate", os.path.join(WORK, "garbage.json"), os.path.join(WORK, "nope.json")]).returncode == 2,
          "not JSON + unreadable: 2 wins")
    check(run(["--validate", good, bad]).returncode == 1, "valid + invalid")
    check(run(["--validate", bad, os.path.join(WORK, "nope.json")]).returncode == 2,
          "invalid + unreadable: 2 wins")


def semantic_variants(base):
    """(name, document, [expected "path: message" lines]) for each semantic check."""
    out = []

    def mut(name, fn, want):
        d = copy.deepcopy(base)
        fn(d)
        out.append((name, d, want))

    def dup(d):
        d["links"][7]["id"] = d["links"][2]["id"]
        d["links"][9]["id"] = d["links"][2]["id"]
    mut("duplicate link ids", dup, ["$.links[7].id: duplicate of $.links[2].id (semantic)",
                                    "$.links[9].id: duplicate of $.links[2].id (semantic)"])

    def stopped(d):
        d["run"]["completed"] = False
        d["run"]["not_done"] = []
    mut("stopped, empty not_done", stopped,
        ["$.run.not_done: empty, but run.completed is false (what was not done?) (semantic)"])

    mut("pass with failures", lambda d: d["summary"].__setitem__("verdict", "pass"),
        ['$.summary.verdict: "pass" but $.summary.counts.fail is 16 (semantic)'])

    def pass_counts_hide(d):
        d["summary"]["verdict"] = "pass"
        d["summary"]["counts"]["pass"] += d["summary"]["counts"]["fail"]
        d["summary"]["counts"]["fail"] = 0
    first_fail = next("$.links[%d].verdict" % i for i, l in enumerate(base["links"]) if l["verdict"] == "fail")
    mut("pass with a failed link, counts hiding it", pass_counts_hide,
        ['$.summary.verdict: "pass" but %s is "fail" (semantic)' % first_fail,
         "$.summary.counts.pass: %d, but %d links and checks have verdict \"pass\" (semantic)"
         % (base["summary"]["counts"]["pass"] + base["summary"]["counts"]["fail"], base["summary"]["counts"]["pass"]),
         '$.summary.counts.fail: 0, but %d links and checks have verdict "fail" (semantic)' % base["summary"]["counts"]["fail"]])
    return out


@test
def validate_semantic_checks():
    """Checks beyond the schema, each at its JSON path: valid to JSON Schema, invalid to nettune."""
    fail = load(fx("gpu-rdma-fail.json"))
    cases = semantic_variants(fail)
    passing = load(fx("gpu-rdma-pass.json"))

    def fail_but_clean(d):
        d["summary"]["verdict"] = "fail"
    d = copy.deepcopy(passing)
    fail_but_clean(d)
    cases.append(("fail with nothing failed", d,
                  ['$.summary.verdict: "fail" but nothing failed (counts.fail is 0, no link, check or failed node) (semantic)']))
    d = copy.deepcopy(passing)
    d["summary"]["verdict"] = "warn"
    cases.append(("warn with nothing warned", d, ['$.summary.verdict: "warn" but no link or check warns (counts.warn is 0) (semantic)']))
    d = copy.deepcopy(passing)
    d["links"][4]["verdict"] = "warn"
    d["summary"]["counts"]["warn"] = 1
    d["summary"]["counts"]["pass"] -= 1
    cases.append(("pass with a warning", d, ['$.summary.verdict: "pass" but $.summary.counts.warn is 1 (semantic)']))
    d = copy.deepcopy(passing)
    d["summary"]["failed_nodes"] = [{"host": "gpu02", "reason": "gone"}]
    cases.append(("pass with a failed node", d, ['$.nodes[1].verdict: "pass" but $.summary.failed_nodes names gpu02 (semantic)',
                                                '$.summary.verdict: "pass" but $.summary.failed_nodes names 1 node (semantic)']))
    d = copy.deepcopy(passing)
    d["summary"]["counts"]["skipped"] = 3
    cases.append(("counts off", d, ['$.summary.counts.skipped: 3, but 0 links and checks have verdict "skipped" (semantic)']))
    # Hosts a link or failed_nodes names that are not nodes: the renderers would invent them.
    d = copy.deepcopy(passing)
    lk = d["links"][3]
    old_host = lk["src"]["host"]
    lk["src"]["host"] = "ghost01"
    cases.append(("link src host not a node", d,
                  ["$.links[3].src.host: link %s names host ghost01, which is not in $.nodes (semantic)" % lk["id"]]))
    d = copy.deepcopy(passing)
    d["nodes"] = []
    want = []
    for i, l in enumerate(d["links"]):
        for e in ("src", "dst"):
            want.append("$.links[%d].%s.host: link %s names host %s, which is not in $.nodes (semantic)"
                        % (i, e, l["id"], l[e]["host"]))
    cases.append(("no nodes, links", d, want))
    d = copy.deepcopy(fail)
    d["summary"]["failed_nodes"].append({"host": "ghost02", "reason": "no_answer"})
    cases.append(("failed node not a node", d,
                  ["$.summary.failed_nodes[%d].host: host ghost02 is not in $.nodes (semantic)"
                   % (len(d["summary"]["failed_nodes"]) - 1)]))
    check(old_host != "ghost01", "the renamed host was a node")
    for i, (name, doc, want) in enumerate(cases):
        path = dump(doc, "semantic-%02d.json" % i)
        r = run(["--validate", path])
        check(r.returncode == 1, "%s: rc %d\n%s" % (name, r.returncode, r.stdout))
        got = [l.strip() for l in r.stdout.splitlines()[1:]]
        check(got == want, "%s:\n got %s\nwant %s" % (name, got, want))
        rc, schema_paths, probs = c_validate(path)
        check(not schema_paths and all(p["kind"] == "semantic" for p in probs), "%s: %s" % (name, probs))
        try:
            import jsonschema  # noqa: F401
            check(not py_paths(doc), "%s is invalid to jsonschema: not a semantic case" % name)
        except ImportError:
            pass
    # Schema problems come first, semantic ones after.
    d = copy.deepcopy(fail)
    d["summary"]["verdict"] = "pass"
    d["run"].pop("id")
    r = run(["--validate", dump(d, "semantic-mixed.json")])
    lines = [l.strip() for l in r.stdout.splitlines()[1:]]
    check(r.returncode == 1 and lines == ["$.run: missing required key 'id'",
                                          '$.summary.verdict: "pass" but $.summary.counts.fail is 16 (semantic)'], str(lines))
    # Rendering still works, with the problem on stderr.
    r = run([dump(cases[0][1], "semantic-render.json")])
    check(r.returncode == 1 and "duplicate of $.links[2].id" in r.stderr, "render: rc %d %s" % (r.returncode, r.stderr))


def plugin_reports():
    """nettune.plugin-report/1 documents of each shape plugins/nccl-tuner/src/nt_report.c writes."""
    calls = {"broadcast": 1, "reduce": 0, "allgather": 120, "reducescatter": 0, "allreduce": 9000}
    kept = {"broadcast": 0, "reduce": 0, "allgather": 120, "reducescatter": 0, "allreduce": 1000}
    json_file = {"schema": "nettune.plugin-report/1", "plugin": "nettune", "api_version": 5,
                 "host": "gpu01", "pid": 4242,
                 "comm": {"id": "5f1c00000000abcd", "n_ranks": 16, "n_nodes": 2},
                 "tuning_file": {"path": "/shared/tuning.json", "format": "json",
                                 "fnv1a64": "3b1f0123456789ab", "rules_loaded": 7, "rules_kept": 3},
                 "calls": calls, "calls_nccl_choice_kept": kept,
                 "rules": [{"index": 0, "coll": "allreduce", "fired": 8000, "unavailable": 0},
                           {"index": 4, "coll": "allreduce", "fired": 0, "unavailable": 12},
                           {"index": 6, "coll": "broadcast", "fired": 1, "unavailable": 0}]}
    csv_file = copy.deepcopy(json_file)
    csv_file.update(api_version=4, comm={"seq": 2, "n_ranks": 8, "n_nodes": 1},
                    tuning_file={"path": "/shared/nccl_tuner.csv", "format": "csv",
                                 "fnv1a64": "00000000000000ff", "rules_loaded": 2, "rules_kept": 1},
                    rules=[{"line": 3, "coll": "allgather", "fired": 120, "unavailable": 0}])
    rejected = copy.deepcopy(json_file)
    rejected.update(tuning_file={"path": "/shared/bad.json", "format": "json",
                                 "error": "rules[2].algo: unknown algorithm 'rign'"}, rules=[],
                    calls_nccl_choice_kept=calls)
    none = copy.deepcopy(rejected)
    none.update(tuning_file=None)
    return [("json", json_file), ("csv", csv_file), ("rejected", rejected), ("no file", none)]


@test
def validate_plugin_reports():
    schema = os.path.join(ROOT, "reports", "schema", "plugin-report.schema.json")
    docs = plugin_reports()
    for name, d in docs:
        rc, paths, probs = c_validate(dump(d, "plugin-%s.json" % name.replace(" ", "-")))
        check(rc == 0 and not probs, "%s: %s" % (name, probs))
    r = run(["--validate", dump(docs[0][1], "plugin.json")])
    check(r.returncode == 0 and "valid nettune.plugin-report/1" in r.stdout, r.stdout)
    broken = [("$.comm", lambda d: d["comm"].pop("id")),
              ("$.comm.id", lambda d: d["comm"].__setitem__("id", "xyz")),
              ("$.calls", lambda d: d["calls"].pop("allreduce")),
              ("$.calls_nccl_choice_kept.reduce", lambda d: d["calls_nccl_choice_kept"].__setitem__("reduce", -1)),
              ("$.rules[1].coll", lambda d: d["rules"][1].__setitem__("coll", "alltoall")),
              ("$.rules[0]", lambda d: d["rules"][0].pop("index")),
              ("$.tuning_file", lambda d: d["tuning_file"].pop("fnv1a64")),
              ("$.tuning_file.format", lambda d: d["tuning_file"].__setitem__("format", "yaml")),
              ("$.api_version", lambda d: d.__setitem__("api_version", 1)),
              ("$.plugin", lambda d: d.__setitem__("plugin", "other")),
              ("$", lambda d: d.pop("rules"))]
    for want, fn in broken:
        d = copy.deepcopy(docs[0][1])
        fn(d)
        rc, paths, probs = c_validate(dump(d, "plugin-bad.json"))
        check(rc == 1 and want in paths, "want a problem at %s, got %s" % (want, probs))
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        raise Skip("/usr/bin/python3 has no jsonschema: the agreement part is not run")
    agree(docs, schema)
    for i, (name, d) in enumerate(docs):
        agree(random_mutants(d, 40, 20 + i), schema)


@test
def render_without_summary():
    """The verdict comes from summary.verdict and summary.counts (the judge writes them, into
    progress snapshots too): a report without them is not a finished report. Every format exits
    2 with one line naming what is missing and --validate, never PASS; diff and validate still
    read it. A run in progress (completed false, with its summary) renders as before."""
    cases = []
    for name in ("gpu-rdma-fail.json", "real-full-4n.json"):
        doc = load(fx(name))
        for missing, cut in (("no summary", lambda d: d.pop("summary")),
                             ("no summary.verdict", lambda d: d["summary"].pop("verdict")),
                             ("no summary.counts", lambda d: d["summary"].pop("counts"))):
            d = copy.deepcopy(doc)
            cut(d)
            cases.append((name, missing, dump(d, "nosummary-%s-%s" % (missing.split()[-1], name))))
    cases.append(("schema-only", "no summary", TESTER_FX("schema-only.report.json")))
    for name, missing, f in cases:
        for fmt in ("text", "md", "html", "prom", "csv"):
            r = run([f, "--format", fmt])
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2 and not r.stdout and len(lines) == 1 and
                  ("has %s: not a finished report" % missing) in lines[0] and
                  "nettune report --validate" in lines[0] and "PASS" not in r.stderr,
                  "%s (%s) --format %s: rc %d, stdout %r, stderr %r"
                  % (name, missing, fmt, r.returncode, r.stdout[:80], r.stderr))
    for name, missing, f in cases[:1]:
        for args in (["--diff", fx(name), f], ["--diff", f, fx(name), "--format", "json"]):
            r = run(args)
            check(r.returncode in (0, 1) and r.stdout, "%s: rc %d %s" % (args, r.returncode, r.stderr))
        r = run(["--validate", f])
        check(r.returncode == 1 and "summary" in r.stdout, "validate: rc %d %s" % (r.returncode, r.stdout))
    # a run in progress keeps rendering: its summary is there, completed is false
    doc = load(fx("real-time-limit.json"))
    check(not doc["run"]["completed"] and "summary" in doc, "fixture: a stopped run with a summary")
    for fmt in ("text", "md", "html", "prom", "csv"):
        r = run([fx("real-time-limit.json"), "--format", fmt])
        check(r.returncode == expected_rc(doc) and r.stdout, "in progress %s: rc %d %s" % (fmt, r.returncode, r.stderr))


def TESTER_FX(name):
    return os.path.join(ROOT, "tests", "fixtures", "tester-found", "probe-report", name)


@test
def not_judged_is_shown():
    """A pass rests on what was judged: text, md and html give the probe's headline (NOTHING
    JUDGED / ", N not judged"), the not-judged count and the summary.not_judged list. The
    fixture is from before the not_judged run verdict: its summary says "pass" with nothing
    judged, and it reads as the probe's not_judged run does (docs/verdicts.md)."""
    nj = TESTER_FX("not-judged-only.report.json")
    doc = load(nj)
    reason = doc["summary"]["not_judged"][0]
    r = run([nj])
    check(r.returncode == 0, "rc %d" % r.returncode)
    head = r.stdout.splitlines()[0]
    check(doc["summary"]["verdict"] == "pass" and head.startswith("nettune report: NOTHING JUDGED  ("), head)
    check("checks and links: 0 pass, 0 warn, 0 fail, 0 skipped, 1 not judged" in r.stdout, r.stdout[:400])
    check("\nNot judged (1)\n  " + reason + "\n" in r.stdout, r.stdout)
    r = run([nj, "--format", "md"])
    check(r.stdout.startswith("# nettune report: NOTHING JUDGED\n"), r.stdout[:100])
    check("- checks and links: 0 pass, 0 warn, 0 fail, 0 skipped, 1 not judged" in r.stdout, r.stdout[:400])
    check("## Not judged (1)" in r.stdout and "- vm: nic\\_rate: rate of 4" in r.stdout, r.stdout)
    r = run([nj, "--format", "html"])
    check("<title>nettune report: nothing judged - " in r.stdout and
          '<h1>nettune report <span class="v not_judged">nothing judged</span></h1>' in r.stdout,
          r.stdout[:600])
    # the probe's own not_judged run renders alike
    d = copy.deepcopy(doc)
    d["summary"]["verdict"] = "not_judged"
    f = dump(d, "not-judged-now.json")
    check(run([f]).stdout.splitlines()[0] == head, "old and new reports of a run that judged nothing")
    check("<b>1</b>not judged</div>" in r.stdout, "html card")
    check("<h3 id=\"not-judged\">Not judged (1)</h3>" in r.stdout and
          "<li>vm: nic_rate: rate of 4 of the 4 ACTIVE RDMA ports" in r.stdout, "html list")
    # judged links and 2 not judged: ", 2 not judged"; none: no note
    doc = load(fx("real-full-4n.json"))
    check(doc["summary"]["verdict"] == "pass", "fixture: a pass")
    d = copy.deepcopy(doc)
    d["summary"]["counts"]["not_judged"] = 2
    d["summary"]["not_judged"] = ["h1: nic_rate: unknown", "h2: nic_rate: unknown"]
    f = dump(d, "two-not-judged.json")
    out = run([f]).stdout
    check(out.startswith("nettune report: PASS, 2 not judged  ("), out[:100])
    check("Not judged (2)\n  h1: nic_rate: unknown\n  h2: nic_rate: unknown\n" in out, out)
    out = run([f, "--top", "1"]).stdout
    check("h2: nic_rate" not in out and "... and 1 more not judged" in out, "--top cuts the list")
    check(run([f, "--format", "md"]).stdout.startswith("# nettune report: PASS, 2 not judged\n"), "md 2")
    out = run([fx("real-full-4n.json")]).stdout
    check(out.startswith("nettune report: PASS  (") and "Not judged" not in out, out[:100])


@test
def skipped_probes_are_not_the_skipped_count():
    """The counts line counts checks and links; the skipped probes below it say so."""
    out = run([TESTER_FX("not-judged-only.report.json")]).stdout
    check("0 skipped, 1 not judged" in out and "\nSkipped probes (not in the counts above)\n" in out, out)


@test
def render_usage_and_output_errors():
    """--regression-threshold and --fail-on-vanished are diff options; --output names the path
    given, not the temporary file; --node of an absent host lists the hosts there."""
    f = fx("real-full-4n.json")
    for opt in (["--regression-threshold", "3"], ["--fail-on-vanished"]):
        for extra in ([], ["--validate"]):
            r = run(extra + [f] + opt)
            check(r.returncode == 2 and r.stderr.strip() == "nettune report: %s applies to --diff only" % opt[0]
                  and not r.stdout, "%s: rc %d %r" % (opt, r.returncode, r.stderr))
    r = run([f, "--format", "html", "--output", "/nonexistent/x.html"])
    check(r.returncode == 2 and "'/nonexistent/x.html'" in r.stderr and ".tmp" not in r.stderr
          and len(r.stderr.strip().splitlines()) == 1, r.stderr)
    hosts = sorted(n["hostname"] for n in load(f)["nodes"])
    r = run([f, "--format", "prom", "--node", "nosuch"])
    check(r.returncode == 2 and r.stderr.strip() == "nettune report: host 'nosuch' is not in '%s' (%d nodes: %s)"
          % (f, len(hosts), ", ".join(hosts)), r.stderr)
    r = run([make_big(), "--format", "csv", "--node", "nosuch"], timeout=300)
    check(r.returncode == 2 and ", ... and %d more)" % (BIG_NODES - 8) in r.stderr
          and r.stderr.count(",") == 8, r.stderr)


@test
def md_reasons_cut_at_a_word():
    """A reason longer than the Markdown cell is cut at a word and ends in an ellipsis."""
    doc = load(fx("gpu-rdma-fail.json"))
    bad = [l for l in doc["links"] if l["verdict"] == "fail"][0]
    words = " ".join("word%03d" % i for i in range(120))  # 959 characters
    bad["reasons"] = [words]
    f = dump(doc, "long-reason.json")
    for fmt, limit in (("md", 512), ("text", 100)):
        out = run([f, "--format", fmt]).stdout
        line = [x for x in out.splitlines() if "word000" in x]
        check(len(line) == 1, "%s: one row with the reason" % fmt)
        cell = line[0][line[0].index("word000"):].rstrip(" |")
        check(cell.endswith("\u2026"), "%s: ends in an ellipsis: %r" % (fmt, cell[-20:]))
        kept = cell[:-1].replace("\\", "")
        check(words.startswith(kept) and words[len(kept)] == " " and re.search(r"word\d{3}$", kept)
              and len(kept.encode()) <= limit - 4, "%s: cut at a word: %r" % (fmt, kept[-30:]))


@test
def validate_tuning_files():
    base = load(fx("tuning.json"))
    cases = [
        ("$.rules[0].algo", lambda d: d["rules"][0].__setitem__("algo", "rign")),
        ("$.rules[1]", lambda d: d["rules"][1].pop("coll")),
        ("$.rules[3].nchannels", lambda d: d["rules"][3].__setitem__("nchannels", 65)),
        ("$.rules[2].colour", lambda d: d["rules"][2].__setitem__("colour", "blue")),
        ("$.rules[4].min_bytes", lambda d: d["rules"][4].__setitem__("min_bytes", 1.5)),
        ("$.rules[5]", lambda d: d["rules"][5].pop("algo")),
        ("$.constants.ll_max_bws_GBps[1]", lambda d: d["constants"]["ll_max_bws_GBps"][1].pop()),
        ("$.constants.fast_paths", lambda d: d["constants"].__setitem__("fast_paths", [])),
        ("$.env.NCCL_IB_QPS_PER_CONNECTION", lambda d: d["env"].__setitem__("NCCL_IB_QPS_PER_CONNECTION", 2)),
        ("$.schema", lambda d: d.__setitem__("schema", "nettune.tuning/9")),
        ("$", lambda d: d.pop("rules")),
        # chunk_bytes (tuner API v6): a multiple of the protocol's grain, with algo and proto
        ("$.rules[0]", lambda d: d["rules"][0].update(algo="ring", proto="simple", chunk_bytes=1000)),
        ("$.rules[0]", lambda d: d["rules"][0].update(algo="ring", proto="ll128", chunk_bytes=512)),
        ("$.rules[0].chunk_bytes", lambda d: d["rules"][0].__setitem__("chunk_bytes", 0)),
    ]
    for want, fn in cases:
        d = copy.deepcopy(base)
        fn(d)
        rc, paths, probs = c_validate(dump(d, "tuning-bad.json"))
        check(rc == 1 and want in paths, "want a problem at %s, got %s" % (want, probs))
    d = copy.deepcopy(base)
    d["rules"][0]["algo"] = "TREE"  # the plugin compares names without case
    rc, paths, _ = c_validate(dump(d, "tuning-case.json"))
    check(rc == 0, "upper-case algo rejected: %s" % paths)
    d = copy.deepcopy(base)
    d["rules"][0].update(algo="ring", proto="ll128", chunk_bytes=3840, basis="measured")
    rc, paths, _ = c_validate(dump(d, "tuning-chunk.json"))
    check(rc == 0, "a chunk size of two LL128 grains rejected: %s" % paths)


# ---------------------------------------------------------------- text and Markdown


@test
def text_every_fixture():
    for f in fixtures() + [make_big()]:
        doc = load(f)
        r = run([f])
        check(r.returncode == expected_rc(doc), "%s: rc %d want %d" % (f, r.returncode, expected_rc(doc)))
        c = doc["summary"]["counts"]
        check("checks and links: %d pass, %d warn, %d fail, %d skipped" % (c["pass"], c["warn"], c["fail"], c["skipped"])
              in r.stdout, "%s: counts line missing" % f)
        # a run that stopped early says so first, before any verdict
        lead = "" if doc["run"]["completed"] else "STOPPED EARLY: "
        word = {"not_judged": "NOTHING JUDGED"}.get(doc["summary"]["verdict"], doc["summary"]["verdict"].upper())
        # a report from before the not_judged run verdict says "pass" for a run that judged
        # nothing: it reads as the probe says such a run today (docs/verdicts.md)
        if word == "PASS" and not (c["pass"] or c["warn"] or c["fail"]):
            word = "NOTHING JUDGED  ("
        check(r.stdout.startswith("nettune report: " + lead + word),
              "%s: verdict first: %s" % (f, r.stdout[:60]))
        check("\033[" not in r.stdout, "%s: colour in a pipe" % f)


@test
def text_failures_come_first():
    for f, failed in [(fx("gpu-rdma-fail.json"), ["gpu02", "gpu03", "gpu06", "gpu07"]), (make_big(), BIG_FAILED),
                      (fx("real-slow-node.json"), ["fake2"])]:
        out = run([f]).stdout
        i_nodes = out.index("Failed nodes (%d)" % len(failed))
        i_links = out.index("Failed and warned links")
        i_kinds = out.index("Links by kind")
        check(i_nodes < i_links < i_kinds, "section order")
        block = out[i_nodes:i_links]
        for h in failed:
            check(h in block, "%s not in the failed nodes block" % h)
        # The worst link (lowest efficiency) is listed first.
        doc = load(f)
        judged = [l for l in doc["links"] if l["verdict"] == "fail" and l.get("peak_bw_GBps")
                  and l.get("expected_bw_GBps")]
        if not judged:
            continue
        worst = min(judged, key=lambda l: l["peak_bw_GBps"] / l["expected_bw_GBps"])
        first = out[i_links:].splitlines()[2]
        check(worst["id"] in first, "first failed link %r, want %s" % (first, worst["id"]))


def read_pty(args, env):
    import pty  # noqa: F401
    m, s = os.openpty()
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env)
    p = subprocess.Popen([BIN] + args, stdout=s, stderr=subprocess.DEVNULL, env=e)
    os.close(s)
    chunks = []
    while True:
        try:
            b = os.read(m, 65536)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    p.wait(timeout=60)
    os.close(m)
    return b"".join(chunks).decode()


@test
def text_colour_only_on_a_terminal():
    f = fx("gpu-rdma-fail.json")
    check("\033[1;31m" in run([f, "--color", "always"]).stdout, "--color always")
    check("\033[" not in run([f]).stdout, "pipe")
    check("\033[" in read_pty([f], {}), "terminal without NO_COLOR")
    check("\033[" not in read_pty([f], {"NO_COLOR": "1"}), "terminal with NO_COLOR")
    check("\033[" not in read_pty([f, "--color", "never"], {}), "--color never")
    out = os.path.join(WORK, "t.txt")
    run([f, "--output", out])
    check("\033[" not in open(out).read(), "file output")


@test
def not_done_items_one_per_line():
    d = load(fx("real-time-limit.json"))
    items = ["mpi: 8 of 10 steps not run (time limit reached)", "the job lost a peer (rank 3)",
             "rdma: not run"]
    d["run"]["not_done"] = items
    f = dump(d, "not-done.json")
    r = run([f])
    check(r.returncode == 3, "rc %d" % r.returncode)
    lines = r.stdout.splitlines()
    check(lines[0].startswith("nettune report: STOPPED EARLY: "), "text: leads with STOPPED EARLY: " + lines[0])
    i = next(i for i, l in enumerate(lines) if "STOPPED EARLY" in l and l.rstrip().endswith("not done:"))
    check([l.strip() for l in lines[i + 1:i + 4]] == ["- " + x for x in items],
          "text: one item a line:\n" + "\n".join(lines[i:i + 4]))
    md = run([f, "--format", "md"]).stdout.splitlines()
    check(md[0].startswith("# nettune report: STOPPED EARLY: "), "md: leads with STOPPED EARLY: " + md[0])
    i = next(i for i, l in enumerate(md) if "STOPPED EARLY" in l and l.rstrip().endswith("not done:"))
    check(md[i + 1:i + 4] == ["  - " + x for x in items], "md:\n" + "\n".join(md[i:i + 4]))
    page = run([f, "--format", "html"]).stdout
    check("<title>nettune report: STOPPED EARLY: " in page and
          page.index("STOPPED EARLY</span>") < page.index('<span class="v pass">'),
          "html: STOPPED EARLY before the verdict")
    prom = run([f, "--format", "prom"]).stdout
    check(prom.startswith("# STOPPED EARLY: "), "prom: leads with STOPPED EARLY")
    done = run([fx("real-full-4n.json")]).stdout + run([fx("real-full-4n.json"), "--format", "prom"]).stdout
    check("STOPPED EARLY" not in done, "a complete run says nothing of it")
    check(all("<li>%s</li>" % x in page for x in items), "html: one <li> per item")


@test
def text_escapes_are_neutralised():
    d = load(fx("escapes.json"))
    d["checks"][0]["message"] = "evil \033[2J\033]0;title\007 text"
    out = run([dump(d, "evil.json")]).stdout
    check("\033" not in out and "\007" not in out, "control characters reach the terminal")
    for line in out.splitlines():
        check(not line.startswith("v2"), "a newline in a cell broke the table")


@test
def markdown_every_fixture():
    for f in fixtures() + [make_big()]:
        r = run([f, "--format", "md"])
        check(r.returncode == expected_rc(load(f)), "%s rc %d" % (f, r.returncode))
        check(r.stdout.startswith("# nettune report: "), f)
        lines = r.stdout.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("|"):
                check(line.endswith("|"), "%s: broken table row %r" % (f, line))
                if i and not lines[i - 1].startswith("|"):
                    check(lines[i + 1].startswith("| ---") or lines[i + 1].startswith("| --- |"),
                          "%s: table without separator" % f)
    md = run([fx("escapes.json"), "--format", "md"]).stdout
    check("a\\|b, c\\\\d \\<b\\>bold\\</b\\> second line" in md, "Markdown escaping")
    md = run([fx("gpu-rdma-fail.json"), "--format", "md"]).stdout
    check(md.index("## Failed nodes (4)") < md.index("## Failed and warned links"), "order")
    check("| gpu03 | NT-RDMA-001 nettune:port\\_state port mlx5\\_1:1 is DOWN |" in md, "failed node row")


# ---------------------------------------------------------------- HTML


class Tags(html.parser.HTMLParser):
    VOID = {"meta", "br", "rect", "line", "img", "input", "link", "hr", "circle", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.count = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unexpected </%s>, open: %s" % (tag, self.stack[-3:]))
        else:
            self.stack.pop()


def html_of(f, *extra):
    out = os.path.join(WORK, os.path.basename(f).replace(".json", ".html"))
    r = run([f, "--format", "html", "--output", out, "--quiet"] + list(extra))
    check(r.returncode == expected_rc(load(f)), "%s: rc %d %s" % (f, r.returncode, r.stderr))
    return out, open(out).read()


@test
def html_self_contained_and_well_formed():
    for f in fixtures() + [make_big()]:
        out, page = html_of(f)
        check("Content-Security-Policy" in page and "default-src 'none'" in page, "%s: no CSP" % f)
        for bad in ["<script", "http://", "https://", " src=", "@import", "url("]:
            check(bad not in page, "%s: page contains %r" % (f, bad))
        t = Tags()
        t.feed(page)
        check(not t.errors and t.stack == [], "%s: %s %s" % (f, t.errors[:3], t.stack))
    check(os.path.getsize(BIG.replace(".json", ".html")) < 2_000_000, "1,000-node page over 2 MB")


@test
def html_content():
    # 8 nodes, full: the whole matrix, 8 x 7 cells, one GPU matrix per node, the failed one first.
    _, page = html_of(fx("gpu-rdma-fail.json"))
    check(page.count('class="hm"') == 8 * 7, "heatmap cells: %d" % page.count('class="hm"'))
    check("56 cells" in page, "cell count note")
    check(page.count('class="gpu-svg"') == 8, "GPU matrices: %d" % page.count('class="gpu-svg"'))
    first_gpu = re.search(r'<div class="gpu"><h3>([^ <]+)', page).group(1)
    check(first_gpu == "gpu02", "first GPU matrix is %s, want gpu02 (its nvlink failed)" % first_gpu)
    check(page.count('class="gc"') == 8 * 12, "GPU cells")
    check(page.count('<g class="kind">') == 3, "kinds: rdma.write, nvlink, pcie_h2d")
    fn = page[page.index('id="failed-nodes"'):page.index('id="bad-links"')]
    check("gpu03" in fn and "gpu07" in fn, "failed nodes table")
    check(page.index('id="failures"') < page.index('id="heatmap"'), "failures come first")
    check("port mlx5_1:1 is DOWN" in page, "failed check reason")
    # Real 4-node report: 12 cells, no GPUs.
    _, page = html_of(fx("real-full-4n.json"))
    check(page.count('class="hm"') == 12, "real report cells")
    check("No GPUs in this report" in page, "no GPU note")
    # Inventory-only GPUs (the DGX-2 topology): a table, not a matrix.
    _, page = html_of(fx("real-local-dgx2.json"))
    check(page.count('class="gpu-inv"') == 1 and page.count("Tesla V100") >= 16, "GPU inventory")
    # 1,000 nodes: the per-node map instead of a 1,000,000-cell matrix.
    _, page = html_of(make_big())
    check(page.count('class="hm"') == 0, "no full matrix at %d nodes" % BIG_NODES)
    check(page.count('class="nm"') == BIG_NODES, "one square per node: %d" % page.count('class="nm"'))
    squares = re.findall(r'class="nm"[^>]*><title>([^:]+):', page)
    check(set(squares[:3]) == {big_host(500), big_host(7), big_host(123)},
          "the worst nodes come first: %s" % squares[:5])
    check(page.count('class="gpu-svg"') == 16, "16 GPU matrices drawn")
    check("%d more nodes not drawn" % (BIG_NODES - 16) in page, "the rest summarised")
    check(re.search(r'<div class="gpu"><h3>%s ' % big_host(42), page), "the failed GPU node is drawn")
    check("slowest-links" in page, "slowest links table")
    # Escaping.
    _, page = html_of(fx("escapes.json"))
    check("<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page, "HTML escaping")


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    raise Skip("chromium is not installed (apt-get install chromium)")


def sanitized_renders_only(files, fmt, checker):
    """Under SANITIZE=1: each file rendered in fmt (the sanitized binary runs every path), then
    the test skips its external checker, which reads the same bytes as in the plain run."""
    if not SANITIZED:
        return
    for f in files:
        r = run([f, "--format", fmt, "--output", os.path.join(WORK, "sanitized." + fmt), "-q"])
        check(r.returncode in (0, 1, 3), "%s --format %s: rc %d %s" % (f, fmt, r.returncode, r.stderr))
    raise Skip("SANITIZE=1: %d files rendered under ASan; %s checks the same bytes in the plain run"
               % (len(files), checker))


def chromium_run(url, *args):
    prof = tempfile.mkdtemp(prefix="nt-chromium-", dir=WORK)
    try:
        r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                            "--user-data-dir=" + prof, "--enable-logging=stderr", "--v=0",
                            "--no-first-run", "--disable-extensions"] + list(args) + [url],
                           capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    return r


def console_errors(stderr):
    return [l for l in stderr.splitlines() if ":CONSOLE" in l or "Refused to" in l]


def png_pixels(path):
    """(width, height, set of RGB colours, fraction of near-white pixels), PIL or zlib."""
    try:
        from PIL import Image
        im = Image.open(path).convert("RGB")
        px = list(im.getdata())
        w, h = im.size
    except ImportError:
        data = open(path, "rb").read()
        check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
        pos, idat, w = 8, b"", 0
        while pos < len(data):
            n, typ = struct.unpack(">I4s", data[pos:pos + 8])
            body = data[pos + 8:pos + 8 + n]
            if typ == b"IHDR":
                w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
                check(depth == 8 and ctype in (2, 6), "PNG type %d/%d" % (depth, ctype))
                bpp = 3 if ctype == 2 else 4
            elif typ == b"IDAT":
                idat += body
            pos += 12 + n
        raw = zlib.decompress(idat)
        stride = w * bpp
        prev = bytearray(stride)
        px = []
        for y in range(h):
            ft = raw[y * (stride + 1)]
            line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                if ft == 1:
                    line[i] = (line[i] + a) & 255
                elif ft == 2:
                    line[i] = (line[i] + b) & 255
                elif ft == 3:
                    line[i] = (line[i] + (a + b) // 2) & 255
                elif ft == 4:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            px += [tuple(line[i:i + 3]) for i in range(0, stride, bpp)]
            prev = line
    white = sum(1 for p in px if min(p) > 240)
    return w, h, set(px), white / max(1, len(px))


@test
def html_loads_in_chromium_without_console_errors():
    chromium()
    sanitized_renders_only([fx("gpu-rdma-fail.json"), fx("real-full-4n.json"), fx("real-local-dgx2.json"),
                            fx("escapes.json"), make_big()], "html", "chromium")
    # The checker must see errors when there are some: a page that logs and fetches.
    neg = os.path.join(WORK, "negative.html")
    with open(neg, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" '
                'content="default-src \'none\'; script-src \'unsafe-inline\'"></head><body>'
                '<img src="http://example.invalid/x.png"><script>console.error("boom")</script>'
                '</body></html>')
    r = chromium_run("file://" + neg, "--dump-dom")
    check(len(console_errors(r.stderr)) >= 1, "the console check sees nothing on a bad page:\n" + r.stderr[-2000:])
    for f in [fx("gpu-rdma-fail.json"), fx("real-full-4n.json"), fx("real-local-dgx2.json"),
              fx("escapes.json"), make_big()]:
        out, _ = html_of(f)
        r = chromium_run("file://" + out, "--dump-dom")
        check(r.returncode == 0, "%s: chromium rc %d: %s" % (out, r.returncode, r.stderr[-1500:]))
        errs = console_errors(r.stderr)
        check(not errs, "%s: console: %s" % (out, errs[:3]))
        check("</html>" in r.stdout and 'id="heatmap"' in r.stdout, "%s: DOM not dumped" % out)


@test
def html_screenshot_is_not_blank():
    chromium()
    sanitized_renders_only([fx("gpu-rdma-fail.json"), make_big()], "html", "chromium")
    for f in [fx("gpu-rdma-fail.json"), make_big()]:
        out, _ = html_of(f)
        png = out.replace(".html", ".png")
        if os.path.exists(png):
            os.unlink(png)
        r = chromium_run("file://" + out, "--screenshot=" + png, "--window-size=1400,1000",
                         "--hide-scrollbars")
        check(os.path.exists(png), "no screenshot: " + r.stderr[-1500:])
        w, h, colours, white = png_pixels(png)
        check((w, h) == (1400, 1000), "size %dx%d" % (w, h))
        check(len(colours) >= 16, "%s: only %d colours" % (png, len(colours)))
        check(white < 0.95, "%s: %.0f%% white" % (png, 100 * white))


# ---------------------------------------------------------------- Prometheus

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"')


def prom_parse(text):
    """[(name, {labels}, value)], checking HELP/TYPE come once, before a family's samples."""
    fams, samples, seen_done = {}, [], set()
    current = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            check(name not in fams, "HELP twice for " + name)
            fams[name] = "help"
            if current:
                seen_done.add(current)
            current = name
        elif line.startswith("# TYPE "):
            check(line.split()[3] == "gauge", line)
        elif line.startswith("# "):
            pass  # a comment (the text format allows them): "# STOPPED EARLY: ..."
        else:
            m = SAMPLE.match(line)
            check(m, "not a sample line (or it has a timestamp): %r" % line)
            name = m.group(1)
            check(name == current and name not in seen_done, "%s sample outside its family" % name)
            labels = {k: v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
                      for k, v in LABEL.findall(m.group(2) or "")}
            samples.append((name, labels, float(m.group(3))))
    return samples


def promtool_ok(path):
    if not shutil.which("promtool"):
        return None
    with open(path) as f:
        r = subprocess.run(["promtool", "check", "metrics"], stdin=f, capture_output=True, text=True)
    check(r.returncode == 0, "promtool check metrics %s: %s%s" % (path, r.stdout, r.stderr))
    return True


@test
def prom_promtool_accepts_every_export():
    if not shutil.which("promtool"):
        raise Skip("promtool is not installed (apt-get install prometheus)")
    sanitized_renders_only(fixtures() + [make_big()], "prom", "promtool")
    for f in fixtures() + [make_big()]:
        doc = load(f)
        out = os.path.join(WORK, "all.prom")
        r = run([f, "--format", "prom", "--output", out, "-q"])
        check(r.returncode in (0, 1, 3), "%s rc %d %s" % (f, r.returncode, r.stderr))
        promtool_ok(out)
        prom_parse(open(out).read())
        for host in [n["hostname"] for n in doc["nodes"]][:3]:
            r = run([f, "--format", "prom", "--node", host, "--output", out, "-q"])
            promtool_ok(out)


@test
def prom_node_values_in_base_units():
    doc = load(fx("gpu-rdma-fail.json"))
    for host, want_rc, want_verdict in [("gpu07", 1, 2), ("gpu03", 1, 2), ("gpu02", 1, 2),
                                        ("gpu01", 0, 1), ("gpu04", 0, 1)]:
        r = run([fx("gpu-rdma-fail.json"), "--format", "prom", "--node", host])
        check(r.returncode == want_rc, "%s: rc %d" % (host, r.returncode))
        s = prom_parse(r.stdout)
        check(all(lab.get("host") == host for _, lab, _ in s), "%s: another host's metric" % host)
        by = {}
        for name, lab, v in s:
            by.setdefault(name, []).append((lab, v))
        # a failed node's series carries the code of its failed_nodes entry (docs/codes.md)
        code = {n["host"]: n for n in doc["summary"]["failed_nodes"]}
        want_labels = dict({"host": host}, **({"code": code[host]["code"], "category": code[host]["category"]}
                                              if want_verdict == 2 else {}))
        check(by["nettune_node_verdict"] == [(want_labels, want_verdict)], str(by["nettune_node_verdict"]))
        ts = datetime.strptime(doc["run"]["started_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        check(by["nettune_last_run_timestamp_seconds"][0][1] == ts.timestamp() + doc["run"]["duration_s"], "timestamp")
        links = [l for l in doc["links"] if l["src"]["host"] == host]
        bw = {lab["link"]: v for lab, v in by["nettune_link_bandwidth_bytes_per_second"]}
        lat = {lab["link"]: v for lab, v in by.get("nettune_link_latency_seconds", [])}
        ver = {lab["link"]: v for lab, v in by["nettune_link_verdict"]}
        check(len(ver) == len(links), "%s: %d link verdicts for %d links" % (host, len(ver), len(links)))
        for l in links:
            if l.get("peak_bw_GBps") is not None:
                check(abs(bw[l["id"]] - l["peak_bw_GBps"] * 1e9) <= 1e-6 * bw[l["id"]], l["id"])
            else:
                check(l["id"] not in bw, "absent bandwidth exported as a number")
            if l.get("small_msg_lat_us") is not None:
                check(abs(lat[l["id"]] - l["small_msg_lat_us"] * 1e-6) < 1e-15, l["id"])
            check(ver[l["id"]] == {"pass": 0, "warn": 1, "fail": 2, "skipped": -1}[l["verdict"]], l["id"])
        checks = [c for c in doc["checks"] if c["host"] == host]
        check(len(by["nettune_check_verdict"]) == len(checks), "check count")
    r = run([fx("gpu-rdma-fail.json"), "--format", "prom", "--node", "nosuchhost"])
    check(r.returncode == 2 and "nosuchhost" in r.stderr, "unknown host: rc %d" % r.returncode)


@test
def prom_written_by_rename():
    d = os.path.join(WORK, "textfile")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    out = os.path.join(d, "nettune.prom")
    with open(out, "w") as f:
        f.write("old\n")
    ino = os.stat(out).st_ino
    r = run([fx("gpu-rdma-fail.json"), "--format", "prom", "--node", "gpu01", "--output", out, "-q"])
    check(r.returncode == 0, r.stderr)
    check(os.listdir(d) == ["nettune.prom"], "left behind: %s" % os.listdir(d))
    check(os.stat(out).st_ino != ino, "file rewritten in place, not renamed")
    check(open(out).read().startswith("# HELP"), "content")
    r = run([fx("gpu-rdma-fail.json"), "--format", "prom", "--output", os.path.join(d, "no", "x.prom")])
    missing = os.path.join(d, "no")
    check(r.returncode == 2 and r.stderr.splitlines() == [
        "nettune report: cannot write --output '%s/x.prom': the folder '%s' does not exist: create "
        "it, or give a path in one that exists" % (missing, missing)],
        "unwritable path: rc %d %r" % (r.returncode, r.stderr))
    check(os.listdir(d) == ["nettune.prom"], "left behind: %s" % os.listdir(d))


@test
def output_never_an_input():
    """--output naming the file rendered, diffed, validated or read by --history (by its name, a
    link, another spelling, or as one of a history folder's *.json): refused before anything is
    written, in one line, exit 2, the input untouched."""
    d = os.path.join(WORK, "self-out")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    x = os.path.join(d, "X.json")
    shutil.copy(fx("fake-full-4n-healthy-a.json"), x)
    shutil.copy(fx("fake-full-4n-healthy-b.json"), os.path.join(d, "Y.json"))
    os.symlink("X.json", os.path.join(d, "link.json"))
    before = open(x, "rb").read()
    for args in ([x, "-f", "html", "-o", x],
                 [x, "-f", "html", "-o", os.path.join(d, "link.json")],
                 [x, "-f", "md", "-o", os.path.join(d, ".", "X.json")],
                 ["--diff", x, os.path.join(d, "Y.json"), "-o", x],
                 ["--validate", x, "-o", x],
                 ["--history", d, "-f", "json", "-o", os.path.join(d, "history.json")],
                 ["--history", d, "-f", "json", "-o", x]):
        r = run(args)
        lines = r.stderr.splitlines()
        check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("nettune report: --output '")
              and (lines[0].endswith("is also an input: give another path")
                   or "is also an input (as '" in lines[0]
                   or "is inside the input folder '%s', whose *.json files are read" % d in lines[0]),
              "%s: rc %d %r" % (args, r.returncode, r.stderr))
        check(open(x, "rb").read() == before, "%s: the input was changed" % args)
    check(not os.path.exists(os.path.join(d, "history.json")), "a history written into its input folder")
    # a history folder's other files are not read: a text summary may go there
    r = run(["--history", d, "-o", os.path.join(d, "history.txt"), "-q"])
    check(r.returncode == 0 and os.path.exists(os.path.join(d, "history.txt")), "rc %d %r" % (r.returncode, r.stderr))


@test
def output_follows_links_and_writes_devices():
    """--output never replaces a symlink, device, FIFO or directory; write errors are exit 2.
    Only links, FIFOs and nodes made under WORK are used: a broken binary must not be able to
    replace /dev/null or /dev/full."""
    import stat
    f = fx("gpu-rdma-fail.json")
    want = run([f]).stdout
    d = os.path.join(WORK, "outputs")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "real"))
    # A link to a regular file: the target gets the document (temp + rename next to it), the
    # link stays a link.
    target = os.path.join(d, "real", "report.txt")
    with open(target, "w") as o:
        o.write("old\n")
    link = os.path.join(d, "link.txt")
    os.symlink(os.path.join("real", "report.txt"), link)
    for fmt in ("text", "html", "prom", "csv", "md"):
        r = run([f, "--format", fmt, "-o", link, "-q"])
        check(r.returncode == 1, "%s via link: rc %d %s" % (fmt, r.returncode, r.stderr))
        check(os.path.islink(link), "%s: the link was replaced by a file" % fmt)
        check(open(target).read() != "old\n", "%s: the link's target was not written" % fmt)
    check(open(target).read() == run([f, "--format", "md"]).stdout, "md content via the link")
    r = run(["--validate", "--format", "json", f, "-o", link])
    check(r.returncode == 0 and os.path.islink(link) and json.load(open(target))["valid"],
          "--validate --format json via a link: rc %d %s" % (r.returncode, r.stderr))
    check(sorted(os.listdir(os.path.join(d, "real"))) == ["report.txt"],
          "left behind: %s" % os.listdir(os.path.join(d, "real")))
    # A dangling link: its target is created, the link stays.
    dangling = os.path.join(d, "dangling.txt")
    os.symlink(os.path.join("real", "new.txt"), dangling)
    r = run([f, "-o", dangling, "-q"])
    check(r.returncode == 1 and os.path.islink(dangling), "dangling link: rc %d %s" % (r.returncode, r.stderr))
    check(open(os.path.join(d, "real", "new.txt")).read() == want, "dangling link's target content")
    # Links to /dev/null and to stdout (as /dev/stdout is): written, not replaced.
    null = os.path.join(d, "null")
    os.symlink("/dev/null", null)
    r = run([f, "-o", null, "-q"])
    check(r.returncode == 1 and os.path.islink(null) and r.stderr == "",
          "link to /dev/null: rc %d %s" % (r.returncode, r.stderr))
    so = os.path.join(d, "stdout")
    os.symlink("/proc/self/fd/1", so)
    r = run([f, "-o", so])
    check(r.returncode == 1 and os.path.islink(so), "link to stdout: rc %d %s" % (r.returncode, r.stderr))
    check(r.stdout == want, "-o <link to stdout>: got %r..., want the document alone" % r.stdout[:80])
    # A device node (made here when we may): written in place.
    dev = os.path.join(d, "null-node")
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError:
        dev = None
    if dev:
        r = run([f, "-o", dev, "-q"])
        check(r.returncode == 1 and stat.S_ISCHR(os.lstat(dev).st_mode),
              "device node: rc %d, %s" % (r.returncode, "still a device" if stat.S_ISCHR(os.lstat(dev).st_mode) else "replaced by a file"))
    # A FIFO: a reader gets the document, the FIFO stays.
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer's open returns
    try:
        r = run([f, "-o", fifo, "-q"], timeout=20)  # the text (5 kB) fits in the pipe
        chunks = []
        while True:
            try:
                b = os.read(rfd, 65536)
            except BlockingIOError:
                break
            if not b:
                break
            chunks.append(b)
    finally:
        os.close(rfd)
    got = b"".join(chunks).decode()
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file")
    check(r.returncode == 1 and got == want, "FIFO: rc %d, read %d bytes" % (r.returncode, len(got)))
    # A directory, directly or through a link: a clear error, exit 2.
    os.symlink("real", os.path.join(d, "dirlink"))
    for out in (os.path.join(d, "real"), os.path.join(d, "dirlink")):
        r = run([f, "-o", out])
        check(r.returncode == 2 and "directory" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
              "-o %s: rc %d %r" % (out, r.returncode, r.stderr))
    check(os.path.isdir(os.path.join(d, "real")) and os.path.islink(os.path.join(d, "dirlink")), "directory replaced")
    # A write failure (ENOSPC on /dev/full, through a link) is one line and exit 2.
    full = os.path.join(d, "full")
    os.symlink("/dev/full", full)
    for args in ([f, "-o", full], [f, "--format", "html", "-o", full],
                 ["--validate", "--format", "json", f, "-o", full], ["--diff", f, f, "-o", full]):
        r = run(args)
        check(r.returncode == 2 and os.path.islink(full), "%s: rc %d" % (args[:-2], r.returncode))
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1 and "No space left on device" in lines[0], "%s: stderr %r" % (args[:-2], r.stderr))
    check(sorted(os.listdir(d)) == sorted(["real", "link.txt", "dangling.txt", "null", "stdout", "fifo", "dirlink", "full"]
                                          + (["null-node"] if dev else [])), "left behind: %s" % os.listdir(d))


@test
def prom_label_escaping():
    r = run([fx("escapes.json"), "--format", "prom", "--node", "edge-a"])
    check('target="mlx5_0:1 \\"gid\\\\3\\"\\nv2"' in r.stdout, "escaped label:\n" + r.stdout)
    s = prom_parse(r.stdout)
    targets = [lab["target"] for n, lab, v in s if n == "nettune_check_verdict"]
    check(targets == ['mlx5_0:1 "gid\\3"\nv2'], "round trip: %r" % targets)
    out = os.path.join(WORK, "esc.prom")
    with open(out, "w") as f:
        f.write(r.stdout)
    promtool_ok(out)


# ---------------------------------------------------------------- CSV


@test
def csv_links():
    for f in fixtures() + [make_big()]:
        doc = load(f)
        r = run([f, "--format", "csv"], raw=True)
        check(r.returncode == expected_rc(doc), "%s rc %d" % (f, r.returncode))
        raw = r.stdout.decode()
        check(raw.count("\r\n") == len(doc["links"]) + 1 and raw.endswith("\r\n"),
              "%s: CRLF line ends" % f)
        rows = list(csv.DictReader(io.StringIO(raw, newline="")))
        check(len(rows) == len(doc["links"]), "%s: %d rows for %d links" % (f, len(rows), len(doc["links"])))
        for row, l in zip(rows, doc["links"]):
            check(row["id"] == l["id"] and row["verdict"] == l["verdict"], row["id"])
            if l.get("peak_bw_GBps") is None:
                check(row["peak_bw_GBps"] == "", "absent value not empty")
            else:
                check(abs(float(row["peak_bw_GBps"]) - l["peak_bw_GBps"]) < 1e-9, row["id"])
            check(row["reasons"] == "; ".join(l.get("reasons", [])), "reasons of " + l["id"])
    r = run([fx("gpu-rdma-fail.json"), "--format", "csv", "--node", "gpu05"])
    rows = list(csv.DictReader(io.StringIO(r.stdout, newline="")))
    check(rows and all(x["src_host"] == "gpu05" for x in rows), "--node filter")
    row = list(csv.DictReader(io.StringIO(run([fx("escapes.json"), "--format", "csv"]).stdout, newline="")))[0]
    check(row["variant"] == "send" and row["efficiency"].startswith("0.768"), str(row))
    # the columns reports/README.md lists are the header the writer writes
    with open(os.path.join(ROOT, "reports", "README.md")) as f:
        readme = f.read()
    m = re.search(r"\*\*csv\*\* has one row per link.*?`(id,[^`]*)`", readme, re.S)
    documented = re.sub(r"\s+", "", m.group(1)) if m else None
    header = run([fx("escapes.json"), "--format", "csv"]).stdout.splitlines()[0].strip()
    check(documented == header, "reports/README.md CSV columns %s, the writer's %s" % (documented, header))


# ---------------------------------------------------------------- diff


def diff(a, b, *extra):
    return run(["--diff", a, b] + list(extra))


def diff_json(a, b, *extra):
    r = diff(a, b, "--format", "json", *extra)
    check(r.returncode in (0, 1), "diff rc %d: %s" % (r.returncode, r.stderr))
    return r.returncode, json.loads(r.stdout)


@test
def diff_pass_to_fail_and_back():
    p, f = fx("gpu-rdma-pass.json"), fx("gpu-rdma-fail.json")
    r = diff(p, f)
    check(r.returncode == 1, "rc %d" % r.returncode)
    check(r.stdout.startswith("nettune report --diff: REGRESSION"), r.stdout[:80])
    check("nodes newly failed: gpu02" in r.stdout and "gpu03" in r.stdout and "gpu07" in r.stdout,
          "new failed nodes")
    i_new, i_reg = r.stdout.index("New link failures"), r.stdout.find("Regressed links")
    check(i_new < i_reg or i_reg < 0, "new failures first")
    rc, d = diff_json(p, f)
    fd, pd = load(f), load(p)
    new_fail = {l["id"] for l in fd["links"] if l["verdict"] == "fail"}
    got = {x["id"] for x in d["links"] if x["status"] == "new_failure"}
    check(got == new_fail, "new failures: %s" % sorted(got ^ new_fail)[:5])
    check(d["regression"] is True and d["counts"]["links"]["matched"] == len(pd["links"]), "counts")
    check({x["host"] for x in d["nodes"]["new_failed"]} == {"gpu02", "gpu03", "gpu06", "gpu07"},
          str(d["nodes"]))
    nc = [x for x in d["checks"] if x["status"] == "new_failure"]
    check([(x["host"], x["name"], x["target"]) for x in nc] == [("gpu03", "port_state", "mlx5_1:1")], str(nc))
    # And back: fixed failures, no regression.
    rc, d = diff_json(f, p)
    check(rc == 0 and d["regression"] is False, "fixing is not a regression")
    check(d["counts"]["links"]["fixed"] == len(new_fail), "fixed count")
    check({x["host"] for x in d["nodes"]["fixed"]} == {"gpu02", "gpu03", "gpu06", "gpu07"},
          "fixed nodes")
    check("Fixed links" in diff(f, p).stdout, "fixed table")


@test
def diff_threshold_and_direction():
    base = load(fx("gpu-rdma-pass.json"))
    a = dump(base, "d-old.json")
    rc, d = diff_json(a, a)
    check(rc == 0 and all(x["status"] == "unchanged" for x in d["links"]), "self diff")
    idx = next(i for i, l in enumerate(base["links"]) if l["kind"] == "rdma")
    lid = base["links"][idx]["id"]

    def variant(bw=1.0, lat=1.0):
        n = copy.deepcopy(base)
        n["links"][idx]["peak_bw_GBps"] = round(base["links"][idx]["peak_bw_GBps"] * bw, 6)
        n["links"][idx]["small_msg_lat_us"] = round(base["links"][idx]["small_msg_lat_us"] * lat, 6)
        return dump(n, "d-new.json")

    rc, d = diff_json(a, variant(bw=0.9))
    x = next(x for x in d["links"] if x["id"] == lid)
    check(rc == 1 and x["status"] == "regressed", "10%% down: rc %d %s" % (rc, x))
    check(abs(x["bw_change_pct"] + 10.0) < 0.01, "change %s" % x["bw_change_pct"])
    check(diff(a, variant(bw=0.97)).returncode == 0, "3% down is within the default 5%")
    check(diff(a, variant(bw=0.97), "--regression-threshold", "2").returncode == 1, "3% down beyond 2%")
    check(diff(a, variant(bw=1.5)).returncode == 0, "faster is not a regression")
    rc, d = diff_json(a, variant(bw=1.5))
    check(next(x for x in d["links"] if x["id"] == lid)["status"] == "improved", "improved")
    rc, d = diff_json(a, variant(lat=1.2))
    x = next(x for x in d["links"] if x["id"] == lid)
    check(rc == 1 and x["status"] == "regressed" and abs(x["lat_change_pct"] - 20) < 0.01, str(x))
    check(diff(a, variant(lat=0.5)).returncode == 0, "lower latency is fine")
    out = diff(a, variant(bw=0.8)).stdout
    check("Regressed links" in out and lid in out and "-20.0%" in out, out)


@test
def diff_appeared_vanished_and_checks():
    base = load(fx("gpu-rdma-pass.json"))
    a = dump(base, "v-old.json")
    n = copy.deepcopy(base)
    gone = n["links"].pop(0)
    extra = copy.deepcopy(n["links"][0])
    extra["id"] = "rdma.write:gpu01/mlx5_9:1->gpu02/mlx5_9:1"
    n["links"].append(extra)
    b = dump(n, "v-new.json")
    r = diff(a, b)
    # Same mode, its probe ran, both ends in NEW: the link vanished from NEW's own plan.
    check(r.returncode == 1, "a link missing from NEW's plan is a regression: rc %d" % r.returncode)
    check("Vanished links (1)" in r.stdout and gone["id"] in r.stdout, r.stdout)
    check("1 vanished link were in the new run's plan" in r.stdout, r.stdout)
    check("Appeared links (1)" in r.stdout and extra["id"] in r.stdout, "appeared")
    check(diff(a, b, "--fail-on-vanished").returncode == 1, "--fail-on-vanished")
    # Another mode: not NEW's plan, reported but no regression (unless --fail-on-vanished).
    n4 = copy.deepcopy(n)
    n4["run"]["mode"] = "quick" if base["run"]["mode"] == "full" else "full"
    b4 = dump(n4, "v-new-mode.json")
    check(diff(a, b4).returncode == 0, "vanished from another mode's plan is no regression")
    check(diff(a, b4, "--fail-on-vanished").returncode == 1, "--fail-on-vanished, other mode")
    # One end no longer a node of NEW: a vanished node, a regression of its own.
    n5 = copy.deepcopy(base)
    host = gone["dst"]["host"]
    n5["nodes"] = [x for x in n5["nodes"] if x["hostname"] != host]
    n5["links"] = [l for l in n5["links"] if host not in (l["src"]["host"], l["dst"]["host"])]
    rc, d = diff_json(a, dump(n5, "v-new-node.json"))
    check(rc == 1 and [x["host"] for x in d["nodes"]["vanished"]] == [host], str(d["nodes"]))
    check(d["planned_vanished_links"] == 0, "links of a vanished node are not in NEW's plan")
    n2 = copy.deepcopy(base)
    n2["checks"][0]["verdict"] = "fail"
    rc, d = diff_json(a, dump(n2, "c-new.json"))
    check(rc == 1 and d["counts"]["checks"]["new_failure"] == 1, "check failure is a regression")
    n3 = copy.deepcopy(base)
    n3["checks"][0]["verdict"] = "warn"
    rc, d = diff_json(a, dump(n3, "c-warn.json"))
    check(rc == 0 and d["counts"]["checks"]["regressed"] == 1, "a warning is reported, not a regression")
    for fmt in ("md", "csv"):
        r = diff(a, b4, "--format", fmt)
        check(r.returncode == 0 and r.stdout, fmt)
    rows = list(csv.DictReader(io.StringIO(diff(a, b, "--format", "csv").stdout, newline="")))
    check(len([x for x in rows if x["type"] == "link"]) == len(base["links"]) + 1, "csv rows")


@test
def diff_grown_cluster_is_no_regression():
    """A 4-node --quick run, then an 8-node one of the same cluster grown (fake-quick-4n.json,
    fake-quick-8n.json: mpirun -np 4 / -np 8 with NETTUNE_FAKE_NODES): the 8-node --quick
    schedule never pairs fake0 with fake2 or fake3, so those links vanished but were not in
    NEW's plan: no regression. A link the 8-node schedule does pair (fake0->fake1) missing
    from NEW is one."""
    a, b = fx("fake-quick-4n.json"), fx("fake-quick-8n.json")
    r = diff(a, b)
    check(r.returncode == 0 and r.stdout.startswith("nettune report --diff: no regression"),
          r.stdout[:800])
    rc, d = diff_json(a, b)
    gone = sorted(x["id"] for x in d["links"] if x["status"] == "vanished")
    check(rc == 0 and d["planned_vanished_links"] == 0 and
          gone == ["mpi:fake0/lr0->fake2/lr0", "mpi:fake0/lr0->fake3/lr0", "mpi:fake1/lr0->fake3/lr0",
                   "mpi:fake2/lr0->fake0/lr0", "mpi:fake3/lr0->fake0/lr0", "mpi:fake3/lr0->fake1/lr0"],
          "%d %s %s" % (rc, d["planned_vanished_links"], gone))
    check(diff(a, b, "--fail-on-vanished").returncode == 1, "--fail-on-vanished still counts them")
    n = load(b)
    drop = "mpi:fake0/lr0->fake1/lr0"
    n["links"] = [l for l in n["links"] if l["id"] != drop]
    rc, d = diff_json(a, dump(n, "grown-missing.json"))
    check(rc == 1 and d["planned_vanished_links"] == 1, "%d %s" % (rc, d["planned_vanished_links"]))
    r = diff(a, dump(n, "grown-missing.json"))
    check("1 vanished link were in the new run's plan" in r.stdout and drop in r.stdout, r.stdout)
    # 8 -> 8 nodes: fake0->fake2 (never paired by the 8-node schedule) in OLD only is no
    # regression; fake0->fake4 (paired by the shifted ring) gone from NEW is one.
    o = load(b)
    o["links"].append(dict(copy.deepcopy(o["links"][0]), id="mpi:fake0/lr0->fake2/lr0",
                           dst={"host": "fake2", "rank": 2, "device": "lr0"}))
    o["summary"]["counts"]["pass"] += 1
    rc, d = diff_json(dump(o, "grown-old-extra.json"), b)
    check(rc == 0 and d["planned_vanished_links"] == 0, "never paired: %d %s" % (rc, d["planned_vanished_links"]))
    n = load(b)
    n["links"] = [l for l in n["links"] if l["id"] != "mpi:fake0/lr0->fake4/lr0"]
    rc, d = diff_json(b, dump(n, "grown-shift-missing.json"))
    check(rc == 1 and d["planned_vanished_links"] == 1, "shifted ring: %d %s" % (rc, d["planned_vanished_links"]))
    # the same missing link in a NEW run that did not complete: not judged, no regression
    n["run"]["completed"] = False
    n["summary"]["completed"] = False
    n["run"]["not_done"] = ["stopped by --time-limit"]
    r = diff(b, dump(n, "grown-shift-missing-incomplete.json"))
    check(r.returncode == 0 and "did not complete (run.not_done): not judged" in r.stdout,
          "incomplete NEW: %d %s" % (r.returncode, r.stdout[:600]))


@test
def diff_intra_node_plan():
    """Within one node the ranks are paired by the same schedule over nodes[].ranks: with 6
    ranks, --quick pairs local ranks 0-1 and 0-3 but never 0-2."""
    base = load(fx("fake-quick-8n.json"))
    base["nodes"] = [dict(base["nodes"][0], ranks=list(range(6)))]
    base["run"].update(nranks=6, nnodes=1)

    def intra(i, j):
        return {"id": "mpi:fake0/lr%d->fake0/lr%d" % (i, j), "kind": "mpi", "scope": "intra",
                "src": {"host": "fake0", "rank": i, "device": "lr%d" % i},
                "dst": {"host": "fake0", "rank": j, "device": "lr%d" % j},
                "peak_bw_GBps": 20.0, "small_msg_lat_us": 0.3, "verdict": "pass"}
    base["links"] = [intra(0, 1), intra(0, 3)]
    base["checks"] = []
    base["summary"].update(verdict="pass", failed_nodes=[],
                           counts={"pass": 2, "warn": 0, "fail": 0, "skipped": 0, "not_judged": 0})
    for x in base["nodes"]:
        x["verdict"] = "pass"
    new = dump(base, "intra-new.json")
    check(run(["--validate", new]).returncode == 0, run(["--validate", new]).stdout)
    old = copy.deepcopy(base)
    old["links"].append(intra(0, 2))
    old["summary"]["counts"]["pass"] = 3
    rc, d = diff_json(dump(old, "intra-old.json"), new)
    check(rc == 0 and d["planned_vanished_links"] == 0, "0-2 is not planned: %d %s" % (rc, d["planned_vanished_links"]))
    less = copy.deepcopy(base)
    less["links"] = [intra(0, 1)]
    less["summary"]["counts"]["pass"] = 1
    rc, d = diff_json(new, dump(less, "intra-less.json"))
    check(rc == 1 and d["planned_vanished_links"] == 1, "0-3 is planned: %d %s" % (rc, d["planned_vanished_links"]))


TESTER = os.path.join(ROOT, "tests", "fixtures", "tester-found", "probe-report")


def tester_fx(name):
    return os.path.join(TESTER, name + ".report.json")


@test
def diff_vanished_ends_not_in_new_plan():
    """OLD ran 2 ranks per node, NEW 1 (healthy-2fake-2rpn / -1rpn, the tester's runs): the
    links of lr1 were never in NEW's plan (hosts present, ranks not): a note, not a regression.
    The same link missing from a NEW that did run lr1 is one; so is an RDMA port NEW still lists,
    and a port NEW's inventory no longer lists is a note."""
    a, b = tester_fx("healthy-2fake-2rpn"), tester_fx("healthy-2fake-1rpn")
    rc, d = diff_json(a, b)
    gone = sorted(x["id"] for x in d["links"] if x["status"] == "vanished")
    check(len(gone) == 6 and all("lr1" in x for x in gone), str(gone))
    check(d["planned_vanished_links"] == 0 and d["unplanned_vanished_links"]["end"] == 6,
          "%s %s" % (d["planned_vanished_links"], d["unplanned_vanished_links"]))
    check(all(x["in_new_plan"] is False and x["not_in_plan"] == "end"
              for x in d["links"] if x["status"] == "vanished"), "per-link plan")
    r = diff(a, b)
    check("note: 6 vanished links were not in the new run's plan, no regression of their own: "
          "6 with an end (rank or device) the new run did not have: fake0/lr1, fake1/lr1" in r.stdout,
          r.stdout)
    check("were in the new run's plan" not in r.stdout, r.stdout)
    # NEW ran lr1 (2 ranks per node) but lost one of its links: that one was in its plan.
    n = load(a)
    drop = "mpi:fake0/lr1->fake1/lr1"
    n["links"] = [l for l in n["links"] if l["id"] != drop]
    n["summary"]["counts"]["pass"] -= 1
    rc, d = diff_json(a, dump(n, "2rpn-missing.json"))
    check(rc == 1 and d["planned_vanished_links"] == 1, "%d %s" % (rc, d["planned_vanished_links"]))
    # RDMA ends are devices: a port NEW lists is in its plan, one it does not list is not.
    base = load(fx("gpu-rdma-pass.json"))
    lid = next(l["id"] for l in base["links"] if l["kind"] == "rdma")
    gone_l = next(l for l in base["links"] if l["id"] == lid)
    host, dev = gone_l["src"]["host"], gone_l["src"]["device"]
    n = copy.deepcopy(base)
    n["links"] = [l for l in n["links"] if l["id"] != lid]
    rc, d = diff_json(fx("gpu-rdma-pass.json"), dump(n, "rdma-missing.json"))
    check(rc == 1 and d["planned_vanished_links"] == 1, "port listed: %d %s" % (rc, d["planned_vanished_links"]))
    nic = dev.split(":")[0]
    n["links"] = [l for l in n["links"] if not any(e["host"] == host and e["device"] == dev
                                                    for e in (l["src"], l["dst"]))]
    for x in n["nodes"]:
        if x["hostname"] == host:
            x["nics"] = [c for c in x["nics"] if c["name"] != nic]
    rc, d = diff_json(fx("gpu-rdma-pass.json"), dump(n, "rdma-nic-gone.json"))
    van = [x for x in d["links"] if x["status"] == "vanished"]
    check(van and d["planned_vanished_links"] == 0 and d["unplanned_vanished_links"]["end"] == len(van),
          "port gone: %s %s" % (d["planned_vanished_links"], d["unplanned_vanished_links"]))


def scale_link(link, bw=1.0, lat=1.0):
    """A link's figures and its samples scaled alike (a slower link is slower in every
    iteration)."""
    if link.get("peak_bw_GBps") is not None:
        link["peak_bw_GBps"] *= bw
    if link.get("small_msg_lat_us") is not None:
        link["small_msg_lat_us"] *= lat
    for smp in link.get("samples", []):
        for key, f in (("bw_GBps", bw), ("lat_us", lat)):
            for q in smp.get(key, {}):
                smp[key][q] *= f


@test
def diff_tester_healthy_pairs():
    """Two healthy runs of the same cluster are no regression (the tester's pairs: 2 fake nodes
    1 s apart with 2-4 links of a kind, latency +15.8%; the 4-host namespace cluster, an intra
    link 46.9 -> 42.9 GB/s whose NEW best iteration reached 46.75; 4 fake nodes --full whose
    intra bandwidth moved -21% as a whole), in both directions; the regressions among them
    still are: a link at half its bandwidth, twice its latency, a vanished node, a node newly
    failed. A population too small for its own noise gets the 30% latency floor: +25% is noise,
    +40% is not."""
    pairs = [(tester_fx("healthy-2fake-a"), tester_fx("healthy-2fake-b")),
             (tester_fx("healthy-ns4-a"), tester_fx("healthy-ns4-b")),
             (tester_fx("healthy-2fake-2rpn"), tester_fx("healthy-2fake-1rpn")),
             (fx("fake-full-4n-healthy-a.json"), fx("fake-full-4n-healthy-b.json"))]
    for a, b in pairs:
        for o, n in ((a, b), (b, a)):
            if "1rpn" in o:
                continue
            r = diff(o, n)
            check(r.returncode == 0 and r.stdout.startswith("nettune report --diff: no regression"),
                  "%s -> %s: %s" % (os.path.basename(o), os.path.basename(n), r.stdout[:1500]))
    r = diff(fx("fake-full-4n-healthy-a.json"), fx("fake-full-4n-healthy-b.json"))
    check("warning: population shift: mpi intra bandwidth -21.1% (median of 8 links, 4 moved with it"
          in r.stdout, r.stdout)
    rc, d = diff_json(fx("fake-full-4n-healthy-a.json"), fx("fake-full-4n-healthy-b.json"))
    sh = [p for p in d["populations"] if p["shift"]]
    check(rc == 0 and {(p["scope"], p["figure"]) for p in sh} == {("intra", "bw"), ("intra", "lat")},
          str(sh))
    # The floors: 2 fake nodes, 2 latency links of a kind and scope.
    a = tester_fx("healthy-2fake-a")
    rc, d = diff_json(a, tester_fx("healthy-2fake-b"))
    lat = [p for p in d["populations"] if p["figure"] == "lat"]
    check(all(p["noise_from"] == "floor" and abs(p["noise_pct"] - 30) < 1e-9 for p in lat), str(lat))
    base = load(tester_fx("healthy-2fake-b"))
    lid = "mpi:fake0/lr1->fake1/lr1"
    old_lat = next(l for l in load(a)["links"] if l["id"] == lid)["small_msg_lat_us"]
    for f, want in ((1.25, 0), (1.4, 1)):
        n = copy.deepcopy(base)
        next(l for l in n["links"] if l["id"] == lid)["small_msg_lat_us"] = old_lat * f
        rc, d = diff_json(a, dump(n, "2fake-lat.json"))
        x = next(x for x in d["links"] if x["id"] == lid)
        check(rc == want and x["status"] == ("regressed" if want else "unchanged"),
              "latency x%s: rc %d %s" % (f, rc, x))
    # Half the bandwidth, on the small population (floor) and on the namespace cluster (samples).
    for old, new, lid in ((a, tester_fx("healthy-2fake-b"), "mpi:fake1/lr0->fake0/lr0"),
                          (tester_fx("healthy-ns4-a"), tester_fx("healthy-ns4-b"), "mpi:h1/lr0->h3/lr0")):
        n = load(new)
        scale_link(next(l for l in n["links"] if l["id"] == lid), bw=0.5)
        rc, d = diff_json(old, dump(n, "half.json"))
        x = next(x for x in d["links"] if x["id"] == lid)
        check(rc == 1 and x["status"] == "regressed" and x["bw_basis"] == "beyond_noise",
              "half bandwidth: rc %d %s" % (rc, x))
        r = diff(old, dump(n, "half.json"))
        check("Regressed links" in r.stdout and "bw beyond noise" in r.stdout, r.stdout)
    # Twice the latency on one namespace inter link; the whole population at twice: a shift.
    ns_a, nb = tester_fx("healthy-ns4-a"), load(tester_fx("healthy-ns4-b"))
    n = copy.deepcopy(nb)
    scale_link(next(l for l in n["links"] if l["id"] == "mpi:h2/lr0->h3/lr0"), lat=2.0)
    rc, d = diff_json(ns_a, dump(n, "ns-lat2.json"))
    check(rc == 1 and d["counts"]["links"]["regressed"] == 1, "one link at twice its latency: %d" % rc)
    n = copy.deepcopy(nb)
    for l in n["links"]:
        if l["scope"] == "inter":
            scale_link(l, lat=2.0)
    r = diff(ns_a, dump(n, "ns-lat2-all.json"))
    check(r.returncode == 0 and "warning: population shift: mpi inter latency" in r.stdout, r.stdout[:1500])
    scale_link(next(l for l in n["links"] if l["id"] == "mpi:h2/lr0->h3/lr0"), lat=2.0)
    rc, d = diff_json(ns_a, dump(n, "ns-lat4-one.json"))
    x = next(x for x in d["links"] if x["id"] == "mpi:h2/lr0->h3/lr0")
    check(rc == 1 and x["status"] == "regressed" and d["counts"]["links"]["regressed"] == 1,
          "4x on one link over a 2x shift: rc %d %s" % (rc, x))
    # A vanished node; a node newly failed (verdict pass -> fail).
    n = copy.deepcopy(nb)
    n["nodes"] = [x for x in n["nodes"] if x["hostname"] != "h4"]
    n["links"] = [l for l in n["links"] if "h4" not in (l["src"]["host"], l["dst"]["host"])]
    rc, d = diff_json(ns_a, dump(n, "ns-no-h4.json"))
    check(rc == 1 and [x["host"] for x in d["nodes"]["vanished"]] == ["h4"], str(d["nodes"]))
    n = copy.deepcopy(nb)
    n["summary"]["verdict"] = "fail"
    n["summary"]["failed_nodes"] = [{"host": "h2", "reason": "nettune:mpi 1.0/2.9GB/s", "cause": "links"}]
    for x in n["nodes"]:
        if x["hostname"] == "h2":
            x["verdict"] = "fail"
    rc, d = diff_json(ns_a, dump(n, "ns-h2-failed.json"))
    check(rc == 1 and [x["host"] for x in d["nodes"]["new_failed"]] == ["h2"] and d["verdict_worse"],
          str(d["nodes"]))
    check("verdict pass -> fail: a worse verdict is a regression" in diff(ns_a, dump(n, "ns-h2-failed.json")).stdout,
          "verdict line")


@test
def diff_two_healthy_runs():
    """Two healthy runs of the same cluster with 5% noise link by link are no regression; a
    link 40% down among them is; a population 30% down as a whole is a population shift, and
    a regression because its links fell below their expected figure; an unconfirmed link's
    figure is not compared."""
    a, b = os.path.join(WORK, "h-old.json"), os.path.join(WORK, "h-new.json")
    for seed, out in ((1, a), (2, b)):
        subprocess.run([GEN, "--nodes", "16", "--seed", str(seed), "--noise", "0.05", "--output", out],
                       check=True)
    r = diff(a, b)
    check(r.returncode == 0 and r.stdout.startswith("nettune report --diff: no regression"),
          r.stdout[:600])
    rc, d = diff_json(a, b)
    over = [x for x in d["links"] if x["bw_change_pct"] is not None and x["bw_change_pct"] < -5]
    check(over, "the noise is beyond 5% for some links, or this test proves nothing")
    nb = load(b)
    inter = [i for i, l in enumerate(nb["links"]) if l["kind"] == "rdma" and l["verdict"] == "pass"]
    slow = copy.deepcopy(nb)
    slow["links"][inter[0]]["peak_bw_GBps"] *= 0.6
    rc, d = diff_json(a, dump(slow, "h-slow.json"))
    x = next(x for x in d["links"] if x["id"] == nb["links"][inter[0]]["id"])
    check(rc == 1 and x["status"] == "regressed", str(x))
    slow["links"][inter[0]]["unconfirmed"] = True
    rc, d = diff_json(a, dump(slow, "h-slow-unconfirmed.json"))
    check(rc == 0, "an unconfirmed figure is not counted as a regression: rc %d" % rc)
    x = next(x for x in d["links"] if x["id"] == nb["links"][inter[0]]["id"])
    check(x["status"] == "regressed" and x["unconfirmed"] is True, "but listed, marked: %s" % x)
    allslow = copy.deepcopy(nb)
    for i in inter:
        allslow["links"][i]["peak_bw_GBps"] *= 0.7
    r = diff(a, dump(allslow, "h-allslow.json"))
    check(r.returncode == 1 and "warning: population shift: rdma.write inter bandwidth" in r.stdout
          and "regressed: below the expected figure" in r.stdout, r.stdout[:1500])


SLOW = os.path.join(FIX, "slow-rank")


@test
def diff_slow_rank_listed():
    """A healthy run against one where rank 6 is 10x slow (real runs, tests/fixtures/reports/
    slow-rank): its 8 links, unconfirmed, are listed as regressed and marked, with their
    figures, the headline says so without calling it a regression, and nothing is left out:
    every matched link is in a count, the 3 whose verdict changed within the noise in their own
    table. Improved is the figures' word: a link whose bandwidth fell 30% with a lower latency
    is not improved. A node whose verdict changed is named."""
    h, sl = os.path.join(SLOW, "healthy.json"), os.path.join(SLOW, "slow-rank6.json")
    slow_ids = sorted(l["id"] for l in load(sl)["links"] if l.get("unconfirmed"))
    check(len(slow_ids) == 8 and all("fake3/lr0" in i for i in slow_ids), str(slow_ids))
    r = diff(h, sl)
    check(r.returncode == 0 and r.stdout.startswith(
        "nettune report --diff: no regression (8 unconfirmed links regressed)"), r.stdout[:300])
    table = r.stdout.split("Regressed links (worst first) (8)")[-1].split("\n\n")[0]
    for i in slow_ids:
        row = [ln for ln in table.splitlines() if ln.strip().startswith(i + " ")]
        check(len(row) == 1 and "(unconfirmed)" in row[0], "%s in the regressed table: %s" % (i, row))
    check("links: 32 matched, 8 regressed, 0 improved, 0 new failures, 0 fixed, 3 verdict changed, "
          "21 unchanged" in r.stdout, r.stdout[:600])
    check("Links whose verdict changed, figures within threshold and noise (3)" in r.stdout, r.stdout)
    rc, d = diff_json(h, sl)
    byid = {x["id"]: x for x in d["links"]}
    for i in slow_ids:
        x = byid[i]
        check(x["status"] == "regressed" and x["unconfirmed"] is True and x["bw_change_pct"] < -80
              and x["new"]["peak_bw_GBps"] < 0.2 and x["bw_noise_pct"] > 0, str(x))
    check(d["counts"]["links"]["verdict_changed"] == 3 and d["regression"] is False, str(d["counts"]))
    check(sum(d["counts"]["links"][k] for k in ("unchanged", "improved", "fixed", "regressed",
                                                 "new_failure", "verdict_changed")) == 32,
          "every matched link counted: %s" % d["counts"])
    # Bandwidth 30% down (within this population's 63% noise), latency halved: not improved.
    n = load(sl)
    k = next(i for i, l in enumerate(n["links"]) if l["id"] == "mpi:fake0/lr1->fake1/lr1")
    o = next(l for l in load(h)["links"] if l["id"] == "mpi:fake0/lr1->fake1/lr1")
    n["links"][k]["peak_bw_GBps"] = o["peak_bw_GBps"] * 0.7
    n["links"][k]["small_msg_lat_us"] = o["small_msg_lat_us"] * 0.5
    rc, d = diff_json(h, dump(n, "slow-mixed.json"))
    x = next(x for x in d["links"] if x["id"] == "mpi:fake0/lr1->fake1/lr1")
    check(abs(x["bw_change_pct"] + 30) < 0.1 and x["lat_change_pct"] < -40, str(x))
    check(x["status"] in ("unchanged", "verdict_changed"), "a 30%% fall is no improvement: %s" % x)
    n["nodes"][3]["verdict"] = "pass"
    r = diff(h, dump(n, "slow-node-verdict.json"))
    check("nodes whose verdict changed: fake3 (warn -> pass)" in r.stdout, r.stdout[:900])
    rc, d = diff_json(h, dump(n, "slow-node-verdict.json"))
    check(d["nodes"]["verdict_changed"] == [{"host": "fake3", "old_verdict": "warn",
                                             "new_verdict": "pass"}], str(d["nodes"]))


def history_runs(tag, n, scale, fail_from=None, start=1):
    """n reports of the 4-node healthy fixture, a day apart, written in a folder of their own
    with the newest first in name order; from run n/2 on fake2's links run at scale x their
    bandwidth; fail_from: from that run on fake2 is a failed node."""
    base = load(fx("fake-full-4n-healthy-a.json"))
    d = os.path.join(WORK, "hist-" + tag)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for i in range(n):
        r = copy.deepcopy(base)
        r["run"]["started_at"] = "2026-11-%02dT10:00:00Z" % (start + i)
        r["run"]["id"] = "run-%d" % i
        for l in r["links"]:
            if i >= n // 2 and "fake2/" in l["id"] and l.get("peak_bw_GBps"):
                l["peak_bw_GBps"] *= scale
        if fail_from is not None and i >= fail_from:
            for nd in r["nodes"]:
                if nd["hostname"] == "fake2":
                    nd["verdict"] = "fail"
        with open(os.path.join(d, "z%02d.json" % (n - i)), "w") as f:
            json.dump(r, f)
    return d


@test
def history_drift_no_run_failed():
    """8 runs of one cluster, fake2's bandwidth 15% lower in the last 4, which no run failed:
    a drift beyond the probe's noise rule (the peer ratio 0.93 over identical earlier runs), for
    fake2 only, in text, JSON (valid against reports/schema/history.schema.json) and Prometheus;
    5% lower is within it. Runs are ordered by started_at, not by file name."""
    d = history_runs("drift", 8, 0.85)
    r = run(["--history", d])
    check(r.returncode == 1 and r.stdout.startswith(
        "nettune report --history: DRIFT: 2 series drifted beyond the noise, no run failed them"), r.stdout[:400])
    check("reports: 8 read, 2026-11-01T10:00:00Z .. 2026-11-08T10:00:00Z" in r.stdout, r.stdout[:400])
    rows = [ln.split() for ln in r.stdout.splitlines() if ln.strip().startswith("fake2  mpi inter  bw")]
    check(rows and rows[0][5:9] == ["8", "15.3", "13", "-15.0%"] and "YES" in rows[0], str(rows))
    j = run(["--history", d, "--format", "json"])
    doc = json.loads(j.stdout)
    import jsonschema
    with open(os.path.join(ROOT, "reports", "schema", "history.schema.json")) as f:
        jsonschema.validate(doc, json.load(f))
    drifts = [(x["host"], x["scope"], x["figure"]) for x in doc["series"] if x["drift"]]
    check(sorted(drifts) == [("fake2", "inter", "bw_GBps"), ("fake2", "intra", "bw_GBps")], str(drifts))
    x = next(x for x in doc["series"] if x["host"] == "fake2" and x["scope"] == "inter" and x["figure"] == "bw_GBps")
    check(abs(x["change_pct"] + 15.0) < 0.01 and abs(x["limit_factor"] - 0.93) < 1e-9 and x["failed_runs"] == 0
          and [p["started_at"][:10] for p in x["points"]] == ["2026-11-%02d" % k for k in range(1, 9)]
          and abs(x["earlier_bw_GBps"] / x["later_bw_GBps"] - 1 / 0.85) < 1e-6, str(x)[:600])
    check(doc["drift"] is True and doc["drifts_no_run_failed"] == 2 and len(doc["runs"]) == 8, str(doc)[:300])
    p = run(["--history", d, "--format", "prom"])
    vals = {(lab["host"], lab["scope"], lab["figure"]): v for name, lab, v in prom_parse(p.stdout)
            if name == "nettune_history_drift"}
    check(vals[("fake2", "inter", "bw_GBps")] == 2 and vals[("fake0", "inter", "bw_GBps")] == 0, str(vals))
    small = history_runs("small", 8, 0.95)
    r = run(["--history", small, "--format", "json"])
    check(r.returncode == 0 and not any(x["drift"] for x in json.loads(r.stdout)["series"]), r.stdout[:300])


def write_nostart(d):
    """A healthy report without run.started_at (its place in time unknown), as d/nostart.json."""
    nostart = load(fx("fake-full-4n-healthy-a.json"))
    del nostart["run"]["started_at"]
    with open(os.path.join(d, "nostart.json"), "w") as f:
        json.dump(nostart, f)


@test
def history_every_skip_said_once():
    """Every file --history passes over gets one stderr line of one form, whatever the reason
    (not an object, another nettune document, not JSON, no run.started_at), and the same files
    are the summary's skipped list."""
    d = os.path.join(WORK, "hist-mixed")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for n in ("a", "b"):
        shutil.copy(fx("fake-full-4n-healthy-%s.json" % n), os.path.join(d, "%s.json" % n))
    shutil.copy(fx("tuning.json"), os.path.join(d, "tuning.json"))
    with open(os.path.join(d, "array.json"), "w") as f:
        f.write("[1, 2]\n")
    with open(os.path.join(d, "cut.json"), "w") as f:
        f.write('{"schema": "nettune.report/1", "nodes": [\n')
    write_nostart(d)
    want = {"array.json": 'not a nettune document (not an object with a "schema" key)',
            "cut.json": "not JSON",
            "nostart.json": "no run.started_at: its place in time is unknown",
            "tuning.json": "a nettune.tuning/1 document, not a nettune.report/1"}
    r = run(["--history", d, "--format", "json"])
    lines = r.stderr.splitlines()
    said = ["nettune report --history: skipped '%s': %s" % (os.path.join(d, k), v) for k, v in sorted(want.items())]
    check(r.returncode == 0 and lines == said, "%r" % r.stderr)
    doc = json.loads(r.stdout)
    check(doc["skipped"] == ["%s: %s" % (os.path.join(d, k), v) for k, v in sorted(want.items())]
          and len(doc["runs"]) == 2, doc["skipped"])


@test
def history_failed_runs_and_not_judged():
    """A drift that runs failed (fake2 a failed node from run 5) is listed with its failed runs
    and is not a drift no run failed; 3 runs are too few: not judged, said; a file that is not
    a report and one without run.started_at are skipped and named."""
    d = history_runs("failed", 8, 0.7, fail_from=4)
    r = run(["--history", d, "--format", "json"])
    doc = json.loads(r.stdout)
    x = next(x for x in doc["series"] if x["host"] == "fake2" and x["scope"] == "inter" and x["figure"] == "bw_GBps")
    check(r.returncode == 1 and x["drift"] and x["failed_runs"] == 4 and doc["drift"] is False
          and doc["drifts_no_run_failed"] == 0, str(x)[:300])
    t = run(["--history", d]).stdout
    check(t.startswith("nettune report --history: drift: 2 series drifted beyond the noise, each failed in a run")
          and "yes (failed in a run)" in t, t[:500])
    few = history_runs("few", 3, 0.5)
    with open(os.path.join(few, "notes.json"), "w") as f:
        f.write('{"hello": 1}\n')
    write_nostart(few)
    r = run(["--history", few])
    check(r.returncode == 0 and r.stdout.startswith("nettune report --history: nothing judged")
          and "16 not judged: fewer than 4 runs" in r.stdout and "2 files skipped:" in r.stdout
          and 'notes.json: not a nettune document (not an object with a "schema" key)' in r.stdout
          and "nostart.json: no run.started_at" in r.stdout, r.stdout[:800])
    empty = tempfile.mkdtemp(prefix="hist-empty-", dir=WORK)
    r = run(["--history", empty])
    check(r.returncode == 2 and r.stdout == "" and "--history: no nettune report among the 0 file(s) given"
          in r.stderr, r.stderr)
    with open(os.path.join(empty, "notes.json"), "w") as f:
        f.write('{"hello": 1}\n')
    r = run(["--history", empty])
    check(r.returncode == 2 and "among the 1 file(s) given (each was skipped" in r.stderr, r.stderr)
    r = run(["--history", os.path.join(few, "missing")])
    check(r.returncode == 2 and r.stdout == "" and r.stderr.strip().endswith(
        "--history: cannot read '%s': No such file or directory" % os.path.join(few, "missing")), r.stderr)


@test
def node_verdicts_in_every_renderer():
    """A node that stopped answering (failed_nodes cause no_answer) is fail in the text, HTML
    and Prometheus renderings, with its reason printed as is; nodes[].verdict is read, not
    derived: a node with failed links to a blamed partner stays warn."""
    d = load(fx("gpu-rdma-fail.json"))
    reason = "nettune:no_answer mpi: rank 9 sent no mpi results within 65 s"
    d["nodes"][4]["verdict"] = "fail"
    d["summary"]["failed_nodes"].append({"host": d["nodes"][4]["hostname"], "reason": reason,
                                         "cause": "no_answer"})
    d["run"]["completed"] = False
    d["run"]["not_done"] = ["mpi: rank 9 on gpu05 sent no mpi results within 65 s"]
    f = dump(d, "silent.json")
    check(run(["--validate", f]).returncode == 0, run(["--validate", f]).stdout)
    host = d["nodes"][4]["hostname"]
    t = run([f]).stdout
    check(reason in t, t[:2000])
    p = run([f, "--format", "prom", "--node", host])
    check(p.returncode == 1, "prom rc %d" % p.returncode)
    vals = {lab.get("host"): v for name, lab, v in prom_parse(p.stdout) if name == "nettune_node_verdict"}
    check(vals == {host: 2}, str(vals))
    p = run([f, "--format", "prom"])
    vals = {lab.get("host"): v for name, lab, v in prom_parse(p.stdout) if name == "nettune_node_verdict"}
    want = {n["hostname"]: {"pass": 0, "warn": 1, "fail": 2}[n["verdict"]] for n in d["nodes"]}
    check(vals == want, "prom %s, want %s" % (vals, want))
    _, page = html_of(f)
    check(reason in page, "reason in the HTML page")
    # A mismatch between nodes[].verdict and failed_nodes is a semantic problem.
    d["nodes"][0]["verdict"] = "fail"
    r = run(["--validate", dump(d, "mismatch.json")])
    check(r.returncode == 1 and '$.nodes[0].verdict: "fail" but $.summary.failed_nodes does not name gpu01 (semantic)'
          in r.stdout, r.stdout)


@test
def retested_figures_are_exported():
    """A retested link exports the figures its verdict rests on (the retest's), not the first."""
    d = load(fx("gpu-rdma-pass.json"))
    l = next(l for l in d["links"] if l["kind"] == "rdma")
    l["first"] = {"peak_bw_GBps": 1.5, "small_msg_lat_us": 40.0}
    l["retested"] = True
    f = dump(d, "retested.json")
    check(run(["--validate", f]).returncode == 0, "valid")
    rows = list(csv.DictReader(io.StringIO(run([f, "--format", "csv"]).stdout, newline="")))
    row = next(x for x in rows if x["id"] == l["id"])
    check(float(row["peak_bw_GBps"]) == l["peak_bw_GBps"], str(row))
    p = run([f, "--format", "prom", "--node", l["src"]["host"]]).stdout
    bw = [v for name, lab, v in prom_parse(p) if name == "nettune_link_bandwidth_bytes_per_second"
          and lab.get("dst_host") == l["dst"]["host"] and lab.get("src_device") == l["src"]["device"]]
    check(bw and abs(bw[0] - l["peak_bw_GBps"] * 1e9) < 1e3, "prom %s vs %s" % (bw, l["peak_bw_GBps"]))


# ---------------------------------------------------------------- tuning files, scale, memory


@test
def tuning_file_renders_its_rules():
    t = load(fx("tuning.json"))
    r = run([fx("tuning.json")])
    check(r.returncode == 0 and "7 rules" in r.stdout and "nvls_tree" in r.stdout, r.stdout)
    r = run([fx("tuning.json"), "--format", "md"])
    check(r.stdout.count("\n| ") == len(t["rules"]) + 2, "md rows: header, separator, rules")
    rows = list(csv.DictReader(io.StringIO(run([fx("tuning.json"), "--format", "csv"]).stdout, newline="")))
    check(len(rows) == 7 and rows[3]["nchannels"] == "32" and rows[0]["min_bytes"] == "", str(rows[0]))
    r = run([fx("tuning.json"), "--format", "html"])
    check(r.returncode == 0 and r.stdout.count("<tr>") == 8 and "<script" not in r.stdout, "html")


@test
def big_report_every_format_quickly():
    big = make_big()
    for fmt in ("text", "md", "html", "prom", "csv"):
        t0 = time.time()
        r = run([big, "--format", fmt, "--output", os.path.join(WORK, "big." + fmt), "-q"])
        dt = time.time() - t0
        check(r.returncode == 1, "%s: rc %d %s" % (fmt, r.returncode, r.stderr))
        check(SANITIZED or dt < 10, "%s took %.1f s" % (fmt, dt))
    text = open(os.path.join(WORK, "big.text")).read()
    check("%d nodes" % BIG_NODES in text and "... and %d more nodes" % (BIG_NODES - 25) in text,
          "node list cut at --top")
    first_nodes = re.findall(r"^  (node\d+)  fail", text, re.M)[:5]
    check(set(BIG_FAILED) <= set(first_nodes), "failed nodes first: %s" % first_nodes)
    rows = sum(1 for _ in open(os.path.join(WORK, "big.csv"))) - 1
    check(rows == len(load(big)["links"]), "csv rows %d" % rows)
    prom = prom_parse(open(os.path.join(WORK, "big.prom")).read())
    check(len({lab["host"] for _, lab, _ in prom}) == BIG_NODES, "every node exported")
    t0 = time.time()
    check(run(["--validate", big]).returncode == 0, "valid")
    check(diff(big, big).returncode == 0, "self diff")
    check(SANITIZED or time.time() - t0 < 10, "validate + diff took %.1f s" % (time.time() - t0))


@test
def no_memory_errors_under_valgrind():
    if not shutil.which("valgrind"):
        raise Skip("valgrind not installed")
    if SANITIZED:
        raise Skip("SANITIZE=1 build: valgrind cannot run it; AddressSanitizer checks memory")
    f, p = fx("gpu-rdma-fail.json"), fx("gpu-rdma-pass.json")
    for args in ([f], [f, "--format", "html"], [f, "--format", "prom", "--node", "gpu07"],
                 [f, "--format", "csv"], [f, "--format", "md"], ["--diff", p, f],
                 ["--diff", p, f, "--format", "json"], ["--validate", f, fx("tuning.json")],
                 [fx("tuning.json")], [os.path.join(WORK, "variant-26.json")],
                 ["--validate", "--format", "json", os.path.join(WORK, "truncated.json"),
                  os.path.join(WORK, "plugin-json.json"), os.path.join(WORK, "semantic-00.json"),
                  os.path.join(WORK, "semantic-04.json")]):
        if not os.path.exists(args[-1]) and not args[-1].startswith("-"):
            continue
        r = subprocess.run(["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
                            "--errors-for-leak-kinds=definite", BIN] + args,
                           capture_output=True, text=True, timeout=300)
        check(r.returncode != 99, "%s: %s" % (args, r.stderr[-2000:]))


@test
def mutated_reports_never_crash():
    """Structure fuzzing: values replaced by other JSON types everywhere; each format must give
    an exit code (0-3), never a signal, on documents that --validate rejects."""
    import random
    rng = random.Random(5)
    base = load(fx("gpu-rdma-fail.json"))
    junk = [None, True, -1, 0, 1e308, -1e-300, "", "x" * 300, [], {}, [1, "a"], {"a": {}},
            "gpu99", "rdma.write:a/b->c/d", "fail"]

    def paths(node, pre=()):
        yield pre
        if isinstance(node, dict):
            for k, v in node.items():
                yield from paths(v, pre + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node[:3]):
                yield from paths(v, pre + (i,))

    all_paths = [p for p in paths(base) if p]
    mutants = []
    for n in range(60):
        d = copy.deepcopy(base)
        for p in rng.sample(all_paths, 4):
            try:
                parent = d
                for step in p[:-1]:
                    parent = parent[step]
                parent[p[-1]] = rng.choice(junk)
            except (KeyError, IndexError, TypeError):
                pass
        mutants.append(dump(d, "mutant-%02d.json" % n))
    # Each renderer once per mutant, two at a time (ASan's start-up, ~0.15 s a process, is most
    # of it); --validate takes them all in one process.
    jobs = [(n, args) for n, f in enumerate(mutants)
            for args in ([f], [f, "--format", "html"], [f, "--format", "prom"],
                         [f, "--format", "csv"], [f, "--format", "md"],
                         ["--diff", fx("gpu-rdma-fail.json"), f])]
    jobs.append(("all", ["--validate"] + mutants))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for (n, args), r in zip(jobs, pool.map(lambda j: run(j[1], raw=True), jobs)):
            check(0 <= r.returncode <= 3, "mutant %s %s: rc %d\n%s" % (n, args[:2], r.returncode,
                                                                     r.stderr[-500:]))


# ---- check codes (docs/codes.md) ----
# tests/report/golden-pre-codes/ holds the report fixtures and their renderings as they were
# before the check codes came (committed copies: a CI clone may be shallow). The codes are the
# only change: stripped of them, today's fixtures are those files byte for byte, and today's
# renderers draw a fixture stripped of its codes byte for byte as they did then.
GOLDEN_PRE = os.path.join(ROOT, "tests", "report", "golden-pre-codes")
CHECKS_LIST = os.path.join(ROOT, "tests", "unit", "data", "checks.list")
RENDER_FORMATS = ("text", "md", "csv", "prom", "html")
# "code" and "category" as the probe writes them (tab or space indented, or one object a line),
# followed by another key or closing their object.
CODE_PAIR = r'"code":\s*"NT-[A-Z]+-[0-9]{3}",\s*"category":\s*"[a-z]+"'
CODE_LAST = re.compile(r',\s*' + CODE_PAIR + r'(?=\s*\})')
CODE_MID = re.compile(CODE_PAIR + r',\s*')


def strip_codes(text):
    return CODE_MID.sub("", CODE_LAST.sub("", text))


def render_bytes(path, fmt):
    r = run([path, "--format", fmt, "--top", "0", "--color", "never"], raw=True)
    check(r.returncode in (0, 1, 3), "%s --format %s: rc %d %s" % (path, fmt, r.returncode, r.stderr))
    return r.stdout


def pre_code_fixtures():
    """The report fixtures of golden-pre-codes/ (each must still be in tests/fixtures/reports)."""
    names = sorted(n for n in os.listdir(GOLDEN_PRE) if n.endswith(".json"))
    for n in names:
        check(os.path.exists(fx(n)), "golden-pre-codes/%s: no such fixture any more" % n)
    return names


def listed_codes():
    out = {}
    for line in open(CHECKS_LIST):
        if line.strip() and not line.startswith("#"):
            code, chk, cat = line.split()
            out[code] = (chk, cat)
    return out


@test
def fixtures_are_the_pre_code_ones_with_codes():
    # the fixtures there were before the codes (a fixture added since has no copy: its codes
    # are checked by every_fail_or_warn_carries_its_code)
    names = pre_code_fixtures()
    check(len(names) == 13, "golden-pre-codes: %d report fixtures, 13 expected" % len(names))
    for name in names:
        now = open(fx(name)).read()
        then = open(os.path.join(GOLDEN_PRE, name)).read()
        check(strip_codes(now) == then, "%s: stripped of code and category it differs from "
              "golden-pre-codes/%s" % (name, name))


@test
def renderers_unchanged_apart_from_codes():
    for name in pre_code_fixtures():
        stripped = os.path.join(WORK, "nocodes-" + name)
        with open(stripped, "w") as f:
            f.write(strip_codes(open(fx(name)).read()))
        for fmt in RENDER_FORMATS:
            want = open(os.path.join(GOLDEN_PRE, name[:-5] + "." + fmt), "rb").read()
            got = render_bytes(stripped, fmt)
            # a run that stopped early leads with it now, before any verdict (nothing else moved)
            got = got.replace(b"nettune report: STOPPED EARLY: ", b"nettune report: ")
            # one node and one rank are singular now ("1 nodes, 1 ranks" before)
            got = re.sub(rb"\b1 node, 1 rank,", b"1 nodes, 1 ranks,", got)
            # a run that judged nothing leads with that, not with PASS (docs/verdicts.md)
            got = re.sub(rb"\A(nettune report: |# nettune report: )NOTHING JUDGED", rb"\1PASS, nothing judged", got)
            if fmt == "html":
                got = got.replace(b"<title>nettune report: nothing judged - ", b"<title>nettune report: pass, nothing judged - ")
                got = got.replace(b'<h1>nettune report <span class="v not_judged">nothing judged</span></h1>',
                                  b'<h1>nettune report <span class="v pass">pass</span> <span class="note">nothing judged</span></h1>')
            if fmt == "prom":
                got = re.sub(rb"\A# STOPPED EARLY: [^\n]*\n", b"", got)
            if fmt == "html":
                got = got.replace(b'<span class="v warn">STOPPED EARLY</span> ', b"")
                want = want.replace(b' <span class="v warn">stopped early</span>', b"")
            if fmt == "html":  # the footer names the build and the file read
                foot = re.compile(rb"nettune report [^ ]+ from [^<]*</footer>")
                got, want = (foot.sub(b"nettune report VERSION from FILE</footer>", x) for x in (got, want))
            if fmt == "csv":  # the code and category columns are new, empty without codes
                got = re.sub(rb",(code,category|NT-[A-Z]+-[0-9]{3},[a-z]+|,)\r\n", b"\r\n", got)
            check(got == want, "%s --format %s differs from golden-pre-codes" % (name, fmt))
        # the Prometheus export of the coded fixture is the old one with code labels added
        prom = render_bytes(fx(name), "prom")
        want = open(os.path.join(GOLDEN_PRE, name[:-5] + ".prom"), "rb").read()
        prom = re.sub(rb"\A# STOPPED EARLY: [^\n]*\n", b"", prom)
        check(re.sub(rb',code="NT-[A-Z]+-[0-9]{3}"(,category="[a-z]+")?', b"", prom) == want,
              "%s: prom export apart from code labels differs" % name)


@test
def one_node_one_rank_singular():
    f = fx("real-local-dgx2.json")
    text = render_bytes(f, "text").decode()
    check("(1 node, 1 rank, local," in text.split("\n")[0], "text header: " + text[:200])
    md = render_bytes(f, "md").decode()
    check("\n- 1 node, 1 rank, local," in md, "md header: " + md[:300])
    out = os.path.join(WORK, "one-node.html")
    r = run([f, "--format", "html", "--output", out])
    check("(pass, 1 node, " in r.stdout or "1 node, " in r.stdout, "summary line: " + r.stdout)
    d = run(["--diff", f, f])
    check("1 node, " in d.stdout and "1 nodes" not in d.stdout, "diff sides: " + d.stdout[:400])


@test
def every_fail_or_warn_carries_its_code():
    codes = listed_codes()
    for f in fixtures():
        d = load(f)
        objs = [("checks", c) for c in d.get("checks", [])] + \
               [("links", l) for l in d.get("links", [])] + \
               [("failed_nodes", n) for n in d["summary"].get("failed_nodes", [])]
        for kind, o in objs:
            if kind != "failed_nodes" and o.get("verdict") not in ("fail", "warn"):
                continue
            what = "%s: %s %s" % (os.path.basename(f), kind, o.get("id") or o.get("name") or o.get("host"))
            check("code" in o and "category" in o, what + " has no code and category")
            check(o["code"] in codes, what + ": code %s is not in checks.list" % o["code"])
            check(codes[o["code"]][1] == o["category"], what + ": category %s, the table says %s"
                  % (o["category"], codes[o["code"]][1]))
            if kind == "checks":
                check(codes[o["code"]][0] == o["name"], what + ": %s is a code of %s"
                      % (o["code"], codes[o["code"]][0]))


@test
def codes_shown_by_every_renderer():
    f = fx("gpu-rdma-fail.json")
    text = render_bytes(f, "text").decode()
    check("NT-RDMA-001 port_state" in text, "text: the check's code beside it:\n" + text[:2000])
    check("gpu03  NT-RDMA-001 nettune:port_state" in text, "text: the failed node's code")
    md = render_bytes(f, "md").decode()
    check("NT-RDMA-001 port\\_state" in md, "md: the check's code")
    html = render_bytes(f, "html").decode()
    check('<code title="drain">NT-RDMA-001</code> port_state' in html, "html: the check's code")
    csv_text = render_bytes(f, "csv").decode()
    check(csv_text.split("\r\n")[0].endswith(",reasons,code,category"), "csv: code and category columns")
    check(",NT-GPU-007,drain\r\n" in csv_text, "csv: a failed link's code and category")
    prom = render_bytes(f, "prom").decode()
    check('nettune_check_verdict{host="gpu03",check="port_state",target="mlx5_1:1",code="NT-RDMA-001",category="drain"} 2'
          in prom, "prom: the failing check's series has its code and category labels")
    check('nettune_node_verdict{host="gpu03",code="NT-RDMA-001",category="drain"} 2' in prom,
          "prom: the failed node's series has its code label")
    check(re.search(r'nettune_check_verdict\{[^}]*code=[^}]*\} 0', prom) is None,
          "prom: a passing series has no code label")


@test
def fabric_section_rendered_and_diffed():
    """The fabric section (docs/fabric.md) in text, HTML (the groups and the cut drawn) and
    Prometheus, and --diff on its cut: a narrower bottleneck and a new cut are regressions."""
    f = fx("fabric-cut-8n.json")
    doc = load(f)
    cut = doc["fabric"]["cuts"][0]
    text = render_bytes(f, "text").decode()
    check("warn NT-FAB-201 fabric_cut: between {fake0..fake3} and {fake4..fake7}: " in text,
          "text: the cut's line:\n" + text[-1500:])
    check("group 1: {fake4, fake5, fake6, fake7}" in text, "text: the groups")
    html = render_bytes(f, "html").decode()
    check('<svg id="fabric-svg"' in html and html.count("<rect") >= 2, "html: one box per group")
    check('stroke="#d63638"' in html and "%.2g GB/s</text>" % cut["bottleneck_GBps"] in html,
          "html: the cut's arc with its bottleneck")
    prom = render_bytes(f, "prom").decode()
    m = re.search(r'^nettune_fabric_cut_bottleneck_bytes_per_second\{.*code="NT-FAB-201"\} (\S+)$',
                  prom, re.M)
    check(m and abs(float(m.group(1)) - cut["bottleneck_GBps"] * 1e9) < 1, "prom: the bottleneck in B/s")
    check("nettune_fabric_groups 2\n" in prom, "prom: the groups")
    check("nettune_fabric_cut_verdict 1\n" in prom, "prom: the cuts' verdict, warn")
    path = os.path.join(WORK, "fabric.prom")
    with open(path, "wb") as out:
        out.write(prom.encode())
    promtool_ok(path)
    # groups only with their meaning: no confirmed cut between 4 groups is one group; every
    # node a group of its own (no cut check) is not judged, and no groups are claimed
    nocut = copy.deepcopy(doc)
    hosts = nocut["fabric"]["nodes"]
    nocut["fabric"]["cuts"] = []
    nocut["fabric"]["groups"] = [hosts[0:2], hosts[2:4], hosts[4:6], hosts[6:8]]
    nocut["fabric"]["checks"] = [{"check": "fabric_cut", "status": "pass", "code": "NT-FAB-201",
                                  "category": "monitor", "message": "no shared bottleneck: 4 groups"}]
    prom = render_bytes(dump(nocut, "fabric-nocut-4groups.json"), "prom").decode()
    check("nettune_fabric_groups 1\n" in prom and "nettune_fabric_cut_verdict 0\n" in prom,
          "prom, no cut among 4 groups: " + prom[-1200:])
    alone = copy.deepcopy(nocut)
    alone["fabric"]["groups"] = [[h] for h in hosts]
    alone["fabric"]["checks"] = []
    alone["fabric"]["not_judged"] = [{"what": "cut", "reason": "every node is a group of its own"}]
    prom = render_bytes(dump(alone, "fabric-singletons.json"), "prom").decode()
    check(re.search(r"^nettune_fabric_groups", prom, re.M) is None
          and "nettune_fabric_cut_verdict -2\n" in prom,
          "prom, every node a group of its own: " + prom[-1200:])
    with open(path, "wb") as out:
        out.write(prom.encode())
    promtool_ok(path)
    same = run(["--diff", f, f])
    check(same.returncode == 0 and "cut same: " in same.stdout, "diff with itself: " + same.stdout[-800:])
    narrower = copy.deepcopy(doc)
    narrower["fabric"]["cuts"][0]["bottleneck_GBps"] = cut["bottleneck_GBps"] / 2
    r = run(["--diff", f, dump(narrower, "fabric-narrower.json")])
    check(r.returncode == 1 and "cut regressed: " in r.stdout, "narrower cut: rc %d %s" % (r.returncode, r.stdout[-800:]))
    healthy = copy.deepcopy(doc)
    healthy["fabric"]["cuts"] = []
    r = run(["--diff", dump(healthy, "fabric-nocut.json"), f, "--format", "json"])
    j = json.loads(r.stdout)
    check(r.returncode == 1 and j["fabric"]["cuts"][0]["status"] == "appeared"
          and j["fabric"]["regression"] is True, "a new cut: rc %d %s" % (r.returncode, r.stdout[-800:]))
    r = run(["--diff", f, dump(healthy, "fabric-nocut.json")])
    check(r.returncode == 0 and "cut vanished: " in r.stdout, "a cut gone is no regression: " + r.stdout[-800:])
    # rail findings compared as the cuts: a new one, or a slower figure, is a regression
    two = copy.deepcopy(doc)
    two["fabric"]["rails"] = 2
    railed = copy.deepcopy(two)
    railed["fabric"]["checks"].append(
        {"check": "fabric_rail", "status": "warn", "code": "NT-FAB-202", "category": "monitor",
         "message": "rail 1 of fake3: its flows on rail 1 get 0.64 GB/s (median of 7, ...)",
         "rail": 1, "node": "fake3", "bw_GBps": 0.64})
    railed["summary"]["counts"]["warn"] += 1
    a, b = dump(two, "fabric-2rails.json"), dump(railed, "fabric-rail-slow.json")
    r = run(["--diff", a, b])
    check(r.returncode == 1 and "rail appeared: NT-FAB-202 rail 1 of fake3: per flow" in r.stdout,
          "a new rail finding: rc %d %s" % (r.returncode, r.stdout[-800:]))
    r = run(["--diff", a, b, "--format", "json"])
    j = json.loads(r.stdout)
    check(j["fabric"]["rails"] == [{"rail": "NT-FAB-202 rail 1 of fake3", "status": "appeared",
                                    "new_bw_GBps": 0.64}] and j["fabric"]["regression"] is True,
          "json: " + r.stdout[-800:])
    slower = copy.deepcopy(railed)
    slower["fabric"]["checks"][-1]["bw_GBps"] = 0.32
    r = run(["--diff", b, dump(slower, "fabric-rail-slower.json")])
    check(r.returncode == 1 and "rail regressed: NT-FAB-202 rail 1 of fake3" in r.stdout,
          "a slower rail: rc %d %s" % (r.returncode, r.stdout[-800:]))
    r = run(["--diff", b, b])
    check(r.returncode == 0 and "rail same: NT-FAB-202 rail 1 of fake3" in r.stdout,
          "the same rail finding: rc %d %s" % (r.returncode, r.stdout[-800:]))
    r = run(["--diff", b, a])
    check(r.returncode == 0 and "rail vanished: NT-FAB-202 rail 1 of fake3" in r.stdout,
          "a rail finding gone is no regression: rc %d %s" % (r.returncode, r.stdout[-800:]))
    r = run(["--diff", a, a])
    check(r.returncode == 0 and "no rail finding in either run" in r.stdout, r.stdout[-800:])


@test
def fabric_not_judged_counted():
    """A line of the fabric section's not_judged counts once in summary.counts.not_judged, as a
    not-judged check does (probes/judge/fabric_doc.c): the validator holds the count to it, and
    the text headline says it."""
    doc = load(fx("fabric-cut-8n.json"))
    doc["fabric"]["not_judged"] = [{"what": "cut", "reason": "between {fake0} and {fake1}: not confirmed"}]
    doc["summary"]["not_judged"] = ["fabric cut: between {fake0} and {fake1}: not confirmed"]
    r = run(["--validate", dump(doc, "fabric-nj-uncounted.json")])
    check(r.returncode != 0 and "$.summary.counts.not_judged" in r.stdout + r.stderr,
          "uncounted fabric not-judged line: rc %d %s" % (r.returncode, (r.stdout + r.stderr)[-800:]))
    doc["summary"]["counts"]["not_judged"] = 1
    path = dump(doc, "fabric-nj-counted.json")
    r = run(["--validate", path])
    check(r.returncode == 0, "counted: rc %d %s" % (r.returncode, (r.stdout + r.stderr)[-800:]))
    text = render_bytes(path, "text").decode()
    check(", 1 not judged" in text, "text headline: " + text[:400])


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("-k", default="", help="run the tests whose name contains this")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    os.makedirs(WORK, exist_ok=True)
    if not os.access(BIN, os.X_OK):
        print("report tests: %s is not built" % BIN)
        return 2
    npass = nfail = nskip = 0
    t_all = time.time()
    for i, fn in enumerate([t for t in TESTS if a.k in t.__name__], 1):
        t0 = time.time()
        try:
            fn()
            npass += 1
            print("ok %d - %s (%.1f s)" % (i, fn.__name__, time.time() - t0), flush=True)
        except Skip as e:
            nskip += 1
            print("skip %d - %s: %s" % (i, fn.__name__, e), flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            nfail += 1
            msg = str(e) if isinstance(e, AssertionError) else "%s: %s" % (type(e).__name__, e)
            print("not ok %d - %s: %s" % (i, fn.__name__, msg[:3000]), flush=True)
    print("report tests: %d passed, %d failed, %d skipped (%.0f s)" % (npass, nfail, nskip, time.time() - t_all))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
