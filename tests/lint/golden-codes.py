#!/usr/bin/env python3
"""Every fail or warn object in every committed golden document carries a code and a category.

The documents: each JSON file under tests/ whose "schema" is a nettune document (the report
fixtures, the tuner's golden outputs, ...), except the outputs kept as they were before the
codes (tests/report/golden-pre-codes/ and tests/tuner/golden/, to compare with: their test
checks today's outputs with this script), reports of older probes kept as the
inputs of other tests (tests/fixtures/reports/slow-rank/, tests/fixtures/tester-found/: the
codes are additive, and readers must take a report without them) and the fuzz corpora. The
objects: the checks, links, failed nodes, findings and fabric cuts, wherever they sit; a fail or
warn one ("verdict", "status" or "severity") must carry a "code" that is a row of the committed
check list (tests/unit/data/checks.list) and that row's "category".
The doctor's own findings are checked by tests/doctor/run-tests.sh on the documents it writes.
Usage: tests/lint/golden-codes.py [DIR...]   (default: the tree's tests/; exit 1 with one line
per object without its code, or when no document was found)
"""
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SKIP = tuple(os.path.join(*p) for p in (("tests", "report", "golden-pre-codes"), ("tests", "fuzz"),
                                        ("tests", "tuner", "golden"),
                                        ("tests", "fixtures", "reports", "slow-rank"),
                                        ("tests", "fixtures", "tester-found")))
KINDS = ("checks", "links", "failed_nodes", "findings", "cuts")
BAD = ("fail", "warn")


def listed(path):
    rows = {}
    for line in open(path):
        if line.strip() and not line.startswith("#"):
            code, check, category = line.split()
            rows[code] = (check, category)
    return rows


def walk(node, where, out, kind=None):
    """(where, object) of every fail or warn object of KINDS below node."""
    if isinstance(node, dict):
        if kind and any(node.get(k) in BAD for k in ("verdict", "status", "severity")):
            out.append((where, node))
        for k, v in node.items():
            walk(v, where + "." + k, out, k if k in KINDS else None)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            walk(v, "%s[%d]" % (where, i), out, kind)


def main():
    rows = listed(os.path.join(ROOT, "tests", "unit", "data", "checks.list"))
    problems, ndocs, nobjs = [], 0, 0
    dirs_given = sys.argv[1:] or [os.path.join(ROOT, "tests")]
    for top, dirs, files in (w for d in dirs_given for w in os.walk(d)):
        rel = os.path.relpath(os.path.abspath(top), ROOT)
        if any(rel == s or rel.startswith(s + os.sep) for s in SKIP):
            dirs[:] = []
            continue
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            path = os.path.join(top, name)
            try:
                doc = json.load(open(path))
            except (ValueError, UnicodeDecodeError):
                continue  # a deliberately broken input, not a document
            if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("nettune."):
                continue
            ndocs += 1
            objs = []
            walk(doc, "$", objs)
            for where, o in objs:
                nobjs += 1
                what = "%s: %s" % (path, where)
                code, category = o.get("code"), o.get("category")
                if code is None or category is None:
                    problems.append(what + ": a fail or warn object without code and category")
                elif code not in rows:
                    problems.append(what + ": code %s is not in checks.list" % code)
                elif rows[code][1] != category:
                    problems.append(what + ": category %s, the table says %s" % (category, rows[code][1]))
    for p in problems:
        print(p)
    print("golden codes: %d documents, %d fail or warn objects, %d without their code"
          % (ndocs, nobjs, len(problems)))
    return 1 if problems or ndocs == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
