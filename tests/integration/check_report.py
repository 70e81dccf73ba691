#!/usr/bin/python3
"""Validate a nettune.report/1 file against reports/schema/report.schema.json and check that
its figures are sane. Usage: check_report.py REPORT [--expect-exit N] [--exit N]
[--links N] [--nodes N] [--completed true|false] [--samples] [--both-directions]
[--blamed HOSTS] [--retested] [--silent HOST]. Exit 0 when every check holds;
prints one line per failed check otherwise."""
import argparse
import json
import os
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "..", "..", "reports", "schema", "report.schema.json")

EXIT_OF_VERDICT = {"pass": 0, "skipped": 0, "not_judged": 0, "warn": 0, "fail": 1}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("--exit", type=int, help="the exit code the run returned")
    ap.add_argument("--links", type=int, help="expected number of links")
    ap.add_argument("--nodes", type=int, help="expected number of nodes")
    ap.add_argument("--completed", choices=["true", "false"])
    ap.add_argument("--samples", action="store_true", help="every link must carry samples")
    ap.add_argument("--blamed", help="comma-separated hosts that must be exactly summary.failed_nodes")
    ap.add_argument("--retested", action="store_true", help="some link must have been retested (\"retested\": true)")
    ap.add_argument("--both-directions", action="store_true",
                    help="every pair's bandwidth is measured both ways: each link with bandwidth "
                         "samples has its reverse (src and dst swapped) with bandwidth samples")
    ap.add_argument("--fabric", choices=["ran", "skipped", "partial"],
                    help="the fabric section's status; with ran, every flow completed")
    ap.add_argument("--silent", help="host that stopped answering: in failed_nodes with cause no_answer")
    a = ap.parse_args()
    problems = []
    with open(a.report) as f:
        doc = json.load(f)
    schema = json.load(open(SCHEMA))
    for e in jsonschema.Draft202012Validator(schema).iter_errors(doc):
        problems.append("schema: %s: %s" % ("/".join(str(p) for p in e.absolute_path), e.message))
    ids = [l["id"] for l in doc.get("links", [])]
    if len(ids) != len(set(ids)):
        problems.append("link ids are not unique: %s" % sorted(i for i in ids if ids.count(i) > 1))
    for l in doc.get("links", []):
        if l.get("verdict") == "skipped":
            continue
        for s in l.get("samples", []):
            if "lat_us" in s:
                lat = s["lat_us"]
                if not (0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"]):
                    problems.append("%s: latency figures out of order at %d B: %s" % (l["id"], s["bytes"], lat))
            if "bw_GBps" in s:
                bw = s["bw_GBps"]
                if not (0 < bw["min"] <= bw["p50"] <= bw["max"]):
                    problems.append("%s: bandwidth figures out of order at %d B: %s" % (l["id"], s["bytes"], bw))
        if a.samples and not l.get("samples"):
            problems.append("%s: no samples" % l["id"])
        if "errors" not in l:
            # Each figure the link measured is > 0; a latency-only or bandwidth-only sweep
            # carries one of the two.
            figs = [l[k] for k in ("peak_bw_GBps", "small_msg_lat_us") if k in l]
            if not figs or not all(f > 0 for f in figs):
                problems.append("%s: peak_bw_GBps / small_msg_lat_us missing or not > 0" % l["id"])
    # Every check, every failed or warned link and every failed node carries its check table
    # code and category (docs/codes.md); the schema checks their form.
    coded = [("check %s/%s" % (c.get("host"), c.get("target")), c) for c in doc.get("checks", [])]
    coded += [("link " + l["id"], l) for l in doc.get("links", []) if l.get("verdict") in ("fail", "warn")]
    coded += [("failed node " + n["host"], n) for n in doc.get("summary", {}).get("failed_nodes", [])]
    for what, o in coded:
        if "code" not in o or "category" not in o:
            problems.append("%s has no code and category" % what)
    if a.links is not None and len(ids) != a.links:
        problems.append("expected %d links, found %d" % (a.links, len(ids)))
    if a.nodes is not None and len(doc.get("nodes", [])) != a.nodes:
        problems.append("expected %d nodes, found %d" % (a.nodes, len(doc["nodes"])))
    completed = doc["run"]["completed"]
    if a.completed is not None and completed != (a.completed == "true"):
        problems.append("run.completed is %s" % completed)
    if not completed and not doc["run"]["not_done"]:
        problems.append("an incomplete run must say what was not done")
    if a.exit is not None and "summary" in doc:
        want = EXIT_OF_VERDICT[doc["summary"]["verdict"]]
        if not completed and want == 0:
            want = 3
        if a.exit != want:
            problems.append("exit code %d does not match the summary verdict %s (want %d)"
                            % (a.exit, doc["summary"]["verdict"], want))
    if a.blamed is not None:
        got = sorted(n["host"] for n in doc["summary"]["failed_nodes"])
        want = sorted(h for h in a.blamed.split(",") if h)
        if got != want:
            problems.append("failed nodes %s, want %s" % (got, want))
    if a.fabric:
        fab = doc.get("fabric")
        if not fab or fab.get("status") != a.fabric:
            problems.append("fabric: want status %s, got %s"
                            % (a.fabric, fab and fab.get("status")))
        elif a.fabric == "ran":
            flows = [f for ph in fab["phases"] for r in ph["rounds"] for f in r["flows"]]
            loaded = [ph["phase"] for ph in fab["phases"] if ph["rounds"] and ph["phase"] != "alone"]
            if not flows or "bisection" not in loaded or "ring" not in loaded:
                problems.append("fabric: no bisection or ring round ran (%s)" % loaded)
            for f in flows:
                if not f["ok"] or f["src"] >= len(fab["nodes"]) or f["dst"] >= len(fab["nodes"]):
                    problems.append("fabric: flow %s" % f)
    if a.retested and not any(l.get("retested") for l in doc.get("links", [])):
        problems.append("no link was retested")
    if a.both_directions:
        bw = {(l["kind"], l["src"]["host"], l["src"]["device"], l["dst"]["host"], l["dst"]["device"])
              for l in doc.get("links", []) if "peak_bw_GBps" in l}
        for k in sorted(bw):
            if (k[0], k[3], k[4], k[1], k[2]) not in bw:
                problems.append("%s %s/%s->%s/%s: no bandwidth in the reverse direction" % k)
    if a.silent is not None:
        fn = [n for n in doc["summary"]["failed_nodes"] if n["host"] == a.silent]
        if not fn or fn[0].get("cause") != "no_answer":
            problems.append("%s is not in failed_nodes with cause no_answer: %s"
                            % (a.silent, doc["summary"]["failed_nodes"]))
    for p in problems:
        print("check_report: %s: %s" % (a.report, p))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
