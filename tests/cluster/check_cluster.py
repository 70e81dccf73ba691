#!/usr/bin/python3
"""Assertions of the cluster scenarios on a nettune.report/1 file (tests/cluster/run.sh).

check_cluster.py baseline REPORT
    prints the healthy figures of the inter-node MPI links as JSON: median peak bandwidth
    (Gb/s) and median 8 B one-way latency (us), and how many links they come from.
check_cluster.py check REPORT [options]
    one line per failed assertion, exit 1 when any failed; options below.
check_cluster.py latency REPORT --pingpong FILE --src H --dst H [--factor 2]
    the probe's 8 B p50 of every link between H and H (the worst) against the raw TCP ping-pong's p50.
check_cluster.py detect REPORT
    one line for the long run's table: blamed hosts, their causes and reasons, the slowest
    link step (elapsed_s) and the verdict.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

# nettune:<check> <observed>/<expected><unit> <detail> (README "what nettune detects")
REASON_RE = re.compile(r"^nettune:(?P<check>[a-z0-9_.]+) (?P<obs>[0-9.]+(?:e[-+]?\d+)?)/"
                       r"(?P<exp>[0-9.]+(?:e[-+]?\d+)?)(?P<unit>\S*)( .*)?$")


def inter_links(doc):
    return [l for l in doc.get("links", []) if l.get("kind") == "mpi" and l.get("scope") == "inter"]


def lat8(link):
    for s in link.get("samples", []):
        if s.get("bytes") == 8 and "lat_us" in s:
            return s["lat_us"]["p50"]
    return None


def cmd_baseline(a):
    doc = json.load(open(a.report))
    links = inter_links(doc)
    bw = [l["peak_bw_GBps"] * 8 for l in links if l.get("peak_bw_GBps")]
    lat = [x for x in (lat8(l) for l in links) if x]
    if not lat:
        lat = [l["small_msg_lat_us"] for l in links if l.get("small_msg_lat_us")]
    if not bw or not lat:
        print("check_cluster: %s: no inter-node bandwidth or latency figures" % a.report, file=sys.stderr)
        return 1
    print(json.dumps({"bw_Gbps": statistics.median(bw), "lat_us": statistics.median(lat),
                      "links": len(links)}))
    return 0


def node_verdicts_rendered(nettune, report, host):
    """The verdict of HOST as text, HTML and Prometheus show it: (text, html, prom)."""
    text = html = prom = None
    r = subprocess.run([nettune, "report", report, "--color", "never", "--top", "0"],
                       capture_output=True, text=True)
    in_nodes = False
    for line in r.stdout.splitlines():
        if line.startswith("Nodes ("):
            in_nodes = True
            continue
        if in_nodes:
            f = line.split()
            if not f:
                in_nodes = False
            elif f[0] == host:
                text = f[1]
    r = subprocess.run([nettune, "report", report, "--format", "html"], capture_output=True, text=True)
    m = re.search(r"<tr><td>%s</td><td><span class=\"v (\w+)\">" % re.escape(host), r.stdout)
    html = m.group(1) if m else None
    r = subprocess.run([nettune, "report", report, "--format", "prom"], capture_output=True, text=True)
    # a failed node's series carries its check code as a label (docs/codes.md)
    m = re.search(r'^nettune_node_verdict\{host="%s"(?:,code="NT-[A-Z]+-\d{3}"(?:,category="[a-z]+")?)?\} (-?\d+)' % re.escape(host),
                  r.stdout, re.M)
    prom = {"0": "pass", "1": "warn", "2": "fail", "-1": "skipped", "-2": "not_judged"}.get(m.group(1)) if m else None
    return text, html, prom


def cmd_check(a):
    problems = []
    doc = json.load(open(a.report))
    summ = doc.get("summary", {})
    run = doc.get("run", {})
    failed = summ.get("failed_nodes", [])
    got = sorted(n["host"] for n in failed)
    if a.exit is not None and a.rc != a.exit:
        problems.append("exit code %s, want %d" % (a.rc, a.exit))
    if a.blamed is not None:
        want = sorted(h for h in a.blamed.split(",") if h)
        if got != want:
            problems.append("failed_nodes %s, want %s (reasons: %s)"
                            % (got, want, [n.get("reason") for n in failed]))
    if a.completed is not None and run.get("completed") != (a.completed == "true"):
        problems.append("run.completed is %s, want %s" % (run.get("completed"), a.completed))
    if a.cause:
        for n in failed:
            if n["host"] in a.blamed.split(",") and n.get("cause") != a.cause:
                problems.append("failed node %s has cause %r, want %r" % (n["host"], n.get("cause"), a.cause))
    if a.reason_format:
        for n in failed:
            if not n.get("reason", "").startswith("nettune:"):
                problems.append("reason of %s is not 'nettune:<check> ...': %r" % (n["host"], n.get("reason")))
    if a.reason_figure:
        # The reason quotes the node's own figure against the population's, and the figure is
        # the bad one: bandwidth well below, latency well above.
        for n in failed:
            m = REASON_RE.match(n.get("reason", ""))
            if not m:
                problems.append("reason of %s has no '<observed>/<expected><unit>': %r" % (n["host"], n.get("reason")))
                continue
            obs, exp, unit = float(m.group("obs")), float(m.group("exp")), m.group("unit")
            bad = obs < 0.7 * exp if "/s" in unit else obs > 1.4 * exp
            if not bad:
                problems.append("reason of %s quotes %g/%g%s: not a clear outlier" % (n["host"], obs, exp, unit))
    if a.shaped is not None:
        # The figure the blame quotes is the rate the harness imposed (tc tbf): the fault is
        # the one intended and the probe measured it, neither more nor less.
        for n in failed:
            m = REASON_RE.match(n.get("reason", ""))
            if m and "/s" in m.group("unit"):
                r = float(m.group("obs")) / a.shaped
                if not 0.5 <= r <= 1.25:
                    problems.append("reason of %s quotes %s GB/s, %.2fx the %.3g GB/s imposed (want 0.5-1.25x)"
                                    % (n["host"], m.group("obs"), r, a.shaped))
    if a.signal:
        said = [x for x in run.get("not_done", []) if "signal" in x]
        if run.get("completed") is not False or not said and run.get("stopped_by") != "signal":
            problems.append("the report does not say the run was stopped by a signal "
                            "(completed %s, not_done %s)" % (run.get("completed"), run.get("not_done")))
    if a.drain_log:
        log = open(a.drain_log, errors="replace").read()
        for h in (a.blamed or "").split(","):
            if h and not re.search(r"^\s*DRAIN %s[: ]" % re.escape(h), log, re.M):
                problems.append("no DRAIN line for %s in %s" % (h, a.drain_log))
    if a.node_verdicts:
        blamed = set(h for h in (a.blamed or "").split(",") if h)
        for node in doc.get("nodes", []):
            h = node["hostname"]
            want_fail = h in blamed
            v = node.get("verdict")
            if v is None:
                problems.append("node %s has no verdict in the report" % h)
            elif (v == "fail") != want_fail:
                problems.append("node %s: report verdict %s, want %s (%s)"
                                % (h, v, "fail" if want_fail else "pass or warn",
                                   "a faulty host" if want_fail else "not a faulty host"))
            if a.nettune and (want_fail or a.node_verdicts == "all"):
                for where, rv in zip(("text", "html", "prometheus"),
                                     node_verdicts_rendered(a.nettune, a.report, h)):
                    if (rv == "fail") != want_fail:
                        problems.append("node %s: %s shows %s" % (h, where, rv))
    if a.map_by_node:
        # mpirun --map-by node: rank r runs on host h<r mod N + 1>
        n = a.map_by_node
        nodes = {x["hostname"]: sorted(x.get("ranks", [])) for x in doc.get("nodes", [])}
        want = {"h%d" % (i + 1): list(range(i, run.get("nranks", 0), n)) for i in range(n)}
        if nodes != want:
            problems.append("nodes and their ranks %s, want %s (--map-by node)" % (nodes, want))
    if a.max_seconds is not None:
        if a.report_at is not None and a.report_at > a.max_seconds:
            problems.append("the final report was written %.1f s after the start, more than %.1f s"
                            % (a.report_at, a.max_seconds))
        if a.elapsed is not None and a.elapsed > a.max_seconds + 15:
            problems.append("mpirun ended %.1f s after the start, more than %.1f + 15 s (Open MPI "
                            "giving up on a lost host)" % (a.elapsed, a.max_seconds))
    for p in problems:
        print("check_cluster: %s: %s" % (os.path.basename(a.report), p))
    return 1 if problems else 0


def cmd_latency(a):
    doc = json.load(open(a.report))
    pp = json.load(open(a.pingpong))["lat_us"]["p50"]
    hosts = {a.src, a.dst}
    figs = [lat8(l) for l in inter_links(doc) if {l["src"]["host"], l["dst"]["host"]} == hosts]
    figs = [f for f in figs if f]
    if not figs:
        print("check_cluster: no 8 B figure for a link between %s and %s" % (a.src, a.dst))
        return 1
    probe = max(figs)
    ok = probe <= a.factor * pp
    print("probe 8 B p50 %.1f us (worst of %d links %s-%s), raw TCP ping-pong p50 %.1f us: ratio %.2f%s"
          % (probe, len(figs), a.src, a.dst, pp, probe / pp, "" if ok else " > %g" % a.factor))
    return 0 if ok else 1


def cmd_detect(a):
    doc = json.load(open(a.report))
    failed = doc["summary"]["failed_nodes"]
    slow = max(doc.get("links", []), key=lambda l: l.get("elapsed_s", 0), default=None)
    blamed = ",".join(n["host"] for n in failed) or "-"
    causes = ",".join(n.get("cause", "?") for n in failed) or "-"
    shaped = ""
    if a.shaped:
        figs = [REASON_RE.match(n.get("reason", "")) for n in failed]
        shaped = " measured/imposed=%s" % ",".join(
            "%.2f" % (float(m.group("obs")) / a.shaped) for m in figs if m and "/s" in m.group("unit"))
    print("blamed=%s cause=%s verdict=%s completed=%s duration_s=%s%s slowest_link=%s:%ss reasons=%s"
          % (blamed, causes, doc["summary"]["verdict"], doc["run"].get("completed"),
             doc["run"].get("duration_s"), shaped, slow["id"] if slow else "-",
             slow.get("elapsed_s") if slow else "-", json.dumps([n["reason"] for n in failed])))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("baseline")
    b.add_argument("report")
    c = sub.add_parser("check")
    c.add_argument("report")
    c.add_argument("--rc", type=int, help="the exit code the run returned")
    c.add_argument("--exit", type=int, help="the exit code it must return")
    c.add_argument("--blamed", help="comma-separated hosts that must be exactly summary.failed_nodes")
    c.add_argument("--completed", choices=["true", "false"])
    c.add_argument("--cause", help="cause every blamed node must carry (no_answer)")
    c.add_argument("--reason-format", action="store_true", help="reasons start with 'nettune:'")
    c.add_argument("--reason-figure", action="store_true",
                   help="reasons are 'nettune:<check> <observed>/<expected><unit> ...' with a bad figure")
    c.add_argument("--shaped", type=float, metavar="GBPS",
                   help="the rate imposed on the blamed hosts: their quoted figure is 0.5-1.25x it")
    c.add_argument("--signal", action="store_true", help="the report says a signal stopped the run")
    c.add_argument("--drain-log", help="the run's stdout: a DRAIN line per blamed host")
    c.add_argument("--node-verdicts", choices=["blamed", "all"],
                   help="nodes[].verdict is fail exactly for the blamed hosts; with --nettune also "
                        "in text, HTML and Prometheus (for the blamed hosts, or all)")
    c.add_argument("--nettune", help="the nettune binary, for the renderers")
    c.add_argument("--map-by-node", type=int, metavar="N",
                   help="nodes[] are h1..hN, host hI with the ranks I-1, I-1+N, ... (mpirun --map-by node)")
    c.add_argument("--elapsed", type=float)
    c.add_argument("--report-at", type=float, help="seconds from the start to the report's last write")
    c.add_argument("--max-seconds", type=float,
                   help="bound on --report-at; mpirun (--elapsed) may take 15 s more")
    l = sub.add_parser("latency")
    l.add_argument("report")
    l.add_argument("--pingpong", required=True)
    l.add_argument("--src", required=True)
    l.add_argument("--dst", required=True)
    l.add_argument("--factor", type=float, default=2.0)
    d = sub.add_parser("detect")
    d.add_argument("report")
    d.add_argument("--shaped", type=float, metavar="GBPS", help="the rate imposed: print measured/imposed")
    a = ap.parse_args()
    return {"baseline": cmd_baseline, "check": cmd_check, "latency": cmd_latency,
            "detect": cmd_detect}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
