#!/usr/bin/python3
"""Assertions of the two-level fabric scenarios (tests/cluster/fabric.sh).

check_fabric.py flows FILE|--file FILE --shaped GBPS [--min F] [--max F] [--median-max F]
                                         [--only SRC:DST,...]
    FILE: ntc_flows' JSON lines. Every flow (or those named) ran at >= F and <= F times the
    shaped rate, their median at <= F; prints the flows' rates as fractions of it.
check_fabric.py split FILE --shaped GBPS --slow DST,... [--ratio 0.7]
    the flows to the hosts named in --slow (those whose route takes the slow spine link) got,
    on average, at most RATIO times what the others got; prints both means.
check_fabric.py report REPORT --leaves FILE (--no-finding | --cut A,B | --rail HOST:RAIL)
    on a probe report (nettune.report/1 with the "fabric" section): every pairwise link passes
    (links[].verdict; a warning the probe calls unconfirmed, "flaky" or "not confirmed: not
    retested", is counted and tolerated: a stall of the loaded host), fabric.status is "ran" or "partial" (the budget ended the phases early:
    what ran is judged), and:
      --no-finding  no cut and no fabric check warns or fails (the groups are not compared:
                    a healthy fabric slows nothing, so nothing tells its leaves apart);
    with a cut, fabric.groups are the harness's leaves (FILE, from ntc_leaves_file; as sets; with
    a rail they are not compared: a slow rail is no cut, nothing tells the leaves apart), and:
      --cut A,B     a cut that warns or fails lies between the groups of leaves A and B (1-based)
                    and no other cut does;
      --rail H:R    a fabric check that warns or fails names rail R (its "rail" key, else
                    "rail R" in its message or detail) and host H (its "node"/"nodes" key, else
                    its message or detail); no other fabric check warns or fails (another rail
                    or host named: a false finding) and no cut does. The groups are not
                    compared: a slow rail of one node is no cut, so the leaves' cross traffic
                    slows no more than their own and nothing the judge measures tells the
                    leaves apart (the groups are what the few loaded rounds' noise drew).
check_fabric.py selftest
    the report assertions on contract-shaped documents made here: each must pass on the right
    document and fail on a wrong one (wrong groups, a failing link, a cut elsewhere, no rail
    check, a finding on a healthy fabric).
One line per failed assertion on stderr (those of the fabric judge's fields start "judge: "),
exit 1 when any failed; one summary line on stdout.
"""
import argparse
import json
import statistics
import sys

BAD = ("warn", "fail")


def load_flows(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def cmd_flows(a):
    flows = load_flows(a.file or a.file_opt)
    only = set(a.only.split(",")) if a.only else None
    problems, shown = [], []
    for f in flows:
        key = "%s:%s" % (f["src"], f["dst_host"])
        if only is not None and key not in only:
            continue
        x = f["bw_GBps"] / a.shaped
        shown.append("%s %.2f" % (key, x))
        if a.min is not None and x < a.min:
            problems.append("flow %s at %.4f GB/s = %.2f of the shaped %.4f, want >= %.2f" % (key, f["bw_GBps"], x, a.shaped, a.min))
        if a.max is not None and x > a.max:
            problems.append("flow %s at %.4f GB/s = %.2f of the shaped %.4f, want <= %.2f" % (key, f["bw_GBps"], x, a.shaped, a.max))
    rates = [f["bw_GBps"] / a.shaped for f in flows if only is None or "%s:%s" % (f["src"], f["dst_host"]) in only]
    if a.median_max is not None and rates and statistics.median(rates) > a.median_max:
        problems.append("the flows' median %.2f of the shaped rate, want <= %.2f" % (statistics.median(rates), a.median_max))
    if only is not None and len(shown) != len(only):
        problems.append("%d flows of %d named ran" % (len(shown), len(only)))
    print("flows (x shaped %.4f GB/s): %s" % (a.shaped, ", ".join(shown)))
    return problems


def cmd_split(a):
    flows = load_flows(a.file)
    slow = set(a.slow.split(","))
    s = [f["bw_GBps"] for f in flows if f["dst_host"] in slow]
    o = [f["bw_GBps"] for f in flows if f["dst_host"] not in slow]
    if not s or not o:
        return ["the flows do not split into slow-link and other flows (%d, %d)" % (len(s), len(o))]
    ms, mo = statistics.mean(s), statistics.mean(o)
    print("slow-link flows %.2f, other flows %.2f of the shaped %.4f GB/s (ratio %.2f)"
          % (ms / a.shaped, mo / a.shaped, a.shaped, ms / mo))
    return [] if ms <= a.ratio * mo else ["slow-link flows got %.2f of the others' rate, want <= %.2f" % (ms / mo, a.ratio)]


def names(group, nodes):
    """A group as a set of host names (the judge writes names; indices into nodes also count)."""
    return frozenset(nodes[g] if isinstance(g, int) else g for g in group)


def cmd_report(a):
    doc = json.load(open(a.report))
    leaves = [frozenset(l) for l in json.load(open(a.leaves))]
    problems = []
    # A pairwise warning the probe itself calls unconfirmed: "flaky" (failed its first
    # measurement, passed its retest: on the loaded shared cores a stall of the host, the first
    # measurement running 0.17-0.51 s against 0.16 s for its retest, 1-4 links of 56 in 4 of 7
    # fault runs, which a longer budget does not absorb), or "not confirmed: not retested".
    # Tolerated and counted; a confirmed warning (marginal again on retest) and every failure
    # are not.
    def flaky(l):
        r = l.get("reasons") or []
        return l.get("verdict") == "warn" and r and all(
            (x.startswith("flaky at ") and "passed retest" in x) or "not confirmed: not retested" in x for x in r)
    flaky_links = [l["id"] for l in doc.get("links", []) if flaky(l)]
    bad_links = [l["id"] for l in doc.get("links", []) if l.get("verdict") != "pass" and not flaky(l)]
    if bad_links:
        problems.append("pairwise links not passing: %s" % ", ".join(bad_links[:8]))
    fab = doc.get("fabric")
    if not isinstance(fab, dict):
        return problems + ["the report has no fabric section"]
    # "partial": the budget ended the phases early; what ran is judged (and asserted below).
    if fab.get("status") not in ("ran", "partial"):
        problems.append("fabric.status %r (%s), want 'ran' or 'partial'" % (fab.get("status"), fab.get("reason", "")))
    if "groups" not in fab and "cuts" not in fab and "checks" not in fab:
        # The probe's phases ran but no fabric judge is in this build: say so, judge nothing.
        print("JUDGE-SKIP: the report's fabric section has no groups, cuts or checks (no fabric judge in this build)")
        return problems
    nodes = fab.get("nodes", [])
    groups = [names(g, nodes) for g in fab.get("groups", [])]
    # A healthy fabric slows no cross traffic: nothing tells the leaves apart there; nor does
    # a slow rail of one node (no cut: the spine is healthy): there the groups are what the
    # noise of the few loaded rounds drew (with 2 rails the alone rounds took most of the 8 s:
    # [[h1, h5], [h2, h6], [h3, h8], [h4, h7]] from 2 cuts, or one host alone), and are not
    # compared either (--rail asserts the rail and host named, and nothing else).
    if not a.no_finding and not a.rail and sorted(map(sorted, groups)) != sorted(map(sorted, leaves)):
        problems.append("judge: fabric.groups %s, want the leaves %s" % ([sorted(g) for g in groups], [sorted(l) for l in leaves]))
    cuts = [c for c in fab.get("cuts", []) if c.get("status") in BAD]
    checks = [c for c in fab.get("checks", []) if c.get("status") in BAD]
    leaf_of_group = {i: leaves.index(g) + 1 for i, g in enumerate(groups) if g in leaves}
    if a.no_finding:
        for c in cuts + checks:
            problems.append("judge: fabric finding on a healthy fabric: %s %s %s" % (c.get("code"), c.get("status"), c.get("detail", "")))
    elif a.cut:
        want = frozenset(int(x) for x in a.cut.split(","))
        hit = [c for c in cuts if frozenset(leaf_of_group.get(g) for g in c.get("groups", [])) == want]
        if not hit:
            problems.append("judge: no warning or failing cut between leaves %s; cuts: %s" % (a.cut, json.dumps(fab.get("cuts", []))[:400]))
        for c in cuts:
            if c not in hit:
                problems.append("judge: a cut elsewhere: %s" % c.get("detail", c.get("groups")))
        for c in hit:
            print("cut: %s %s %s" % (c.get("code"), c.get("status"), c.get("detail", "")))
    elif a.rail:
        host, rail = a.rail.split(":")
        def text(c):
            return str(c.get("message", c.get("detail", "")))
        def names_rail(c):
            if "rail" in c:
                return str(c["rail"]) == rail
            return ("rail %s" % rail) in text(c)
        def names_host(c):
            n = c.get("node", c.get("nodes"))
            if n is None:
                return host in text(c).replace(",", " ").split()
            n = [n] if isinstance(n, (str, int)) else n
            return host in names(n, nodes)
        hit = [c for c in checks if names_rail(c) and names_host(c)]
        if not hit:
            problems.append("judge: no warning or failing fabric check names rail %s of %s; checks: %s" % (rail, host, json.dumps(fab.get("checks", []))[:400]))
        for c in checks:
            if c not in hit:
                problems.append("judge: a fabric finding other than rail %s of %s: %s %s" % (rail, host, c.get("code"), text(c)[:200]))
        for c in cuts:
            problems.append("judge: a cut on a fabric whose only fault is a rail: %s" % c.get("detail", c.get("groups")))
        for c in hit:
            print("rail: %s %s %s" % (c.get("code"), c.get("status"), c.get("detail", c.get("message", ""))))
    ran = ["%s %d" % (p.get("phase"), len(p.get("rounds", []))) for p in fab.get("phases", [])]
    print("%d links, %d pass%s; fabric %s in %ss (rounds: %s), groups %s" % (
        len(doc.get("links", [])), len(doc.get("links", [])) - len(bad_links) - len(flaky_links),
        ", %d unconfirmed warnings (flaky or not retested: %s)" % (len(flaky_links), ", ".join(flaky_links[:4])) if flaky_links else "",
        fab.get("status"),
        fab.get("elapsed_s"), ", ".join(ran), [sorted(g) for g in groups]))
    return problems


def selftest_doc(groups, cuts=(), checks=(), link_verdict="pass", reasons=()):
    nodes = ["h%d" % i for i in range(1, 9)]
    return {"links": [{"id": "h1-h5", "verdict": link_verdict, "retested": bool(reasons), "reasons": list(reasons)}],
            "fabric": {"status": "ran", "nodes": nodes, "rails": 2, "phases": [{"phase": "bisection", "rounds": []}],
                       "groups": groups, "cuts": list(cuts), "checks": list(checks)}}


def cmd_selftest(a):
    import contextlib, io, os, tempfile
    leaves = [["h1", "h2", "h3", "h4"], ["h5", "h6", "h7", "h8"]]
    cut = {"groups": [0, 1], "status": "warn", "code": "NT-FAB-201", "detail": "between {h1..h4} and {h5..h8}"}
    rail = {"check": "rail", "status": "warn", "rail": 1, "nodes": ["h3"], "detail": "h3 rail 1"}
    judged_rail = {"check": "fabric_rail", "status": "warn", "code": "NT-FAB-202", "rail": 1, "node": "h3",
                   "message": "rail 1 of h3: its flows on rail 1 get 0.0039 GB/s (median of 7, one flow at a time on its link)"}
    swapped = [leaves[1], leaves[0]]
    wrong = [["h1", "h2", "h3", "h5"], ["h4", "h6", "h7", "h8"]]
    cases = [  # (document, options, must pass)
        (selftest_doc(leaves), ["--no-finding"], True),
        (selftest_doc(wrong, [cut]), ["--cut", "1,2"], False),
        (selftest_doc(leaves, [cut]), ["--no-finding"], False),
        (selftest_doc(leaves, link_verdict="warn"), ["--no-finding"], False),
        (selftest_doc(leaves, link_verdict="warn", reasons=["flaky at 1 MiB: failed first measurement 0.009 GB/s, passed retest 0.025 GB/s"]), ["--no-finding"], True),
        (selftest_doc(leaves, link_verdict="warn", reasons=["bandwidth 0.009 GB/s at 1 MiB below peers"]), ["--no-finding"], False),
        (selftest_doc(leaves, link_verdict="warn", reasons=["at 1 MiB: 0.0243 GB/s, below 93% of the population median 0.0265 GB/s (56 links); not confirmed: not retested"]), ["--no-finding"], True),
        (selftest_doc(leaves, link_verdict="warn", reasons=["at 1 MiB: 0.0214 GB/s, below 93% of the population median 0.0253 GB/s (56 links); marginal, again on retest (0.0214 then 0.0215 GB/s)"]), ["--no-finding"], False),
        (selftest_doc(leaves, link_verdict="fail", reasons=["flaky at 1 MiB: failed first measurement 0.009 GB/s, passed retest 0.025 GB/s"]), ["--no-finding"], False),
        (selftest_doc(swapped, [cut]), ["--cut", "1,2"], True),
        (selftest_doc(leaves, [dict(cut, status="pass")]), ["--cut", "1,2"], False),
        (selftest_doc(leaves, [cut, dict(cut, groups=[0, 0])]), ["--cut", "1,2"], False),
        (selftest_doc([["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"]], [dict(cut, groups=[0])]), ["--cut", "1,2"], False),
        (selftest_doc(leaves, checks=[rail]), ["--rail", "h3:1"], True),
        (selftest_doc(leaves, checks=[dict(rail, nodes=["h4"], detail="h4 rail 1")]), ["--rail", "h3:1"], False),
        (selftest_doc(leaves, [cut], [rail]), ["--rail", "h3:1"], False),
        (selftest_doc([leaves[0] + leaves[1]], checks=[rail]), ["--rail", "h3:1"], True),
        (selftest_doc(wrong, checks=[rail]), ["--rail", "h3:1"], True),
        (selftest_doc(wrong, checks=[dict(rail, rail=0, detail="h3 rail 0")]), ["--rail", "h3:1"], False),
        # the judge's own shape (check, rail, node, message), right and beside a false finding
        (selftest_doc(wrong, checks=[judged_rail]), ["--rail", "h3:1"], True),
        (selftest_doc(wrong, checks=[dict(judged_rail, node="h4", message="rail 1 of h4: ...")]), ["--rail", "h3:1"], False),
        (selftest_doc(wrong, checks=[judged_rail, dict(judged_rail, rail=0, message="rail 0 of h3: ...")]), ["--rail", "h3:1"], False),
        (selftest_doc(wrong, checks=[judged_rail, dict(judged_rail, status="pass", rail=0)]), ["--rail", "h3:1"], True),
        (dict(selftest_doc(leaves), fabric={"status": "skipped", "reason": "x"}), ["--no-finding"], False),
    ]
    problems = []
    with tempfile.TemporaryDirectory() as d:
        lf = os.path.join(d, "leaves.json")
        json.dump(leaves, open(lf, "w"))
        for k, (doc, opts, good) in enumerate(cases):
            rf = os.path.join(d, "r%d.json" % k)
            json.dump(doc, open(rf, "w"))
            p = argparse.ArgumentParser()
            p.add_argument("report"); p.add_argument("--leaves"); p.add_argument("--no-finding", action="store_true")
            p.add_argument("--cut"); p.add_argument("--rail")
            with contextlib.redirect_stdout(io.StringIO()):
                got = cmd_report(p.parse_args([rf, "--leaves", lf] + opts))
            if bool(got) == good:
                problems.append("selftest case %d (%s): %s" % (k, " ".join(opts), "failed: %s" % got if good else "passed, must fail"))
    print("check_fabric.py: %d report cases, %d as expected" % (len(cases), len(cases) - len(problems)))
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("flows")
    f.add_argument("file", nargs="?")
    f.add_argument("--file", dest="file_opt")
    f.add_argument("--shaped", type=float, required=True)
    f.add_argument("--min", type=float)
    f.add_argument("--max", type=float)
    f.add_argument("--only")
    f.add_argument("--median-max", type=float)
    s = sub.add_parser("split")
    s.add_argument("file")
    s.add_argument("--shaped", type=float, required=True)
    s.add_argument("--slow", required=True)
    s.add_argument("--ratio", type=float, default=0.7)
    r = sub.add_parser("report")
    r.add_argument("report")
    r.add_argument("--leaves", required=True)
    m = r.add_mutually_exclusive_group(required=True)
    m.add_argument("--no-finding", action="store_true")
    m.add_argument("--cut")
    m.add_argument("--rail")
    sub.add_parser("selftest")
    a = p.parse_args()
    problems = {"flows": cmd_flows, "split": cmd_split, "report": cmd_report, "selftest": cmd_selftest}[a.cmd](a)
    for x in problems:
        print(x, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
