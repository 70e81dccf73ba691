#!/usr/bin/env python3
"""Writes reports/doctor/knowledge.json in its house layout (one signature, message, GPU, status
or path-type entry per line; findings one field per line), so that diffs stay readable.
Usage: kbfmt.py [FILE]   (default reports/doctor/knowledge.json; rewritten in place)"""
import collections
import json
import os
import sys

ONE_LINE = ("signatures", "gpus", "wc_status", "messages", "path_types", "xids")


def dump(kb):
    d = lambda v: json.dumps(v, ensure_ascii=False)
    out = ["{"]
    keys = list(kb.keys())
    for ki, k in enumerate(keys):
        v = kb[k]
        sep = "," if ki < len(keys) - 1 else ""
        if k in ONE_LINE:
            out.append('  %s: [' % d(k))
            out.extend("    %s%s" % (d(e), "," if i < len(v) - 1 else "") for i, e in enumerate(v))
            out.append("  ]" + sep)
        elif k == "findings":
            out.append('  "findings": {')
            fk = list(v.keys())
            for i, name in enumerate(fk):
                out.append("    %s: {" % d(name))
                ek = list(v[name].keys())
                out.extend("      %s: %s%s" % (d(f), d(v[name][f]), "," if j < len(ek) - 1 else "") for j, f in enumerate(ek))
                out.append("    }" + ("," if i < len(fk) - 1 else ""))
            out.append("  }" + sep)
        else:
            out.append("  %s: %s%s" % (d(k), d(v), sep))
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "knowledge.json")
    with open(path) as f:
        kb = json.load(f, object_pairs_hook=collections.OrderedDict)
    text = dump(kb)
    assert json.loads(text) == json.loads(json.dumps(kb))
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
