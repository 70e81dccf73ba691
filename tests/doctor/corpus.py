#!/usr/bin/env python3
"""The doctor on the corpus (tests/doctor/corpus/MANIFEST.tsv): prints one line per log and the
figure per half. A case is right when the doctor exits 1 and its top finding that is not a
catch-all (nccl_warning, nccl_error, job_error) has the manifest's key; a healthy log is right with exit 0
and no warn or error finding. Healthy logs of halves A and B are figured together ("healthy");
those of a later held set are figured apart ("C-healthy" for held set C, "D-healthy" for held set D,
"E-healthy" for held set E, "F-healthy" for held set F, "G-healthy" for held set G, "H-healthy" for
held set H, "I-healthy" for held set I, "J-healthy" for held set J, "K-healthy" for held set K, "L-healthy"
for held set L) so each held set's figure stays its own.

usage: corpus.py DOCTOR OUTDIR [--half A|B|all] [--expect HALF=RIGHT/TOTAL ...] [--causes N]
--causes N checks the catalogue (reports/doctor/knowledge.json $.catalogue): every entry names its
thread and at least one corpus log of the manifest, and at least N of its causes (entries that are
not "extends") have a log whose manifest key is the entry's own.
--expect makes it exit 1 unless each named figure is reached (at least RIGHT of TOTAL right, and
TOTAL logs): the figures a change must not lose. Healthy logs are figured apart ("healthy", and
"C-healthy", "D-healthy", "E-healthy", "F-healthy", "G-healthy", "H-healthy", "I-healthy", "J-healthy",
"K-healthy", "L-healthy" for the held sets)."""
import json, os, subprocess, sys

CATCH_ALL = {"nccl_warning", "nccl_error", "job_error"}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def manifest():
    rows = []
    with open(os.path.join(ROOT, "MANIFEST.tsv")) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                rows.append(dict(zip(head, line.rstrip("\n").split("\t"))))
    return rows


def check_catalogue(want):
    kb = json.load(open(os.path.join(ROOT, "..", "..", "..", "reports", "doctor", "knowledge.json")))
    keys = {r["file"]: r["key"] for r in manifest()}
    bad, proven = 0, 0
    for e in kb.get("catalogue", []):
        logs = [f for f in e.get("corpus", []) if f in keys]
        if not e.get("thread") or not logs:
            print("not ok - catalogue %s: needs its thread and a corpus log of the manifest" % e["key"])
            bad = 1
        elif not e.get("extends"):
            proven += any(keys[f] == e["key"] for f in logs)
    print("catalogue: %d causes with a corpus log of their own key (at least %d asserted)" % (proven, want))
    return 1 if bad or proven < want else 0


def top_key(doc):
    for f in doc.get("findings", []):
        if f["key"] not in CATCH_ALL:
            return f["key"]
    return None


def judge(binary, outdir, row):
    out = os.path.join(outdir, row["file"] + ".json")
    p = subprocess.run([binary, "-q", "--output", out, os.path.join(ROOT, "logs", row["file"])],
                       capture_output=True, text=True, timeout=60)
    try:
        doc = json.load(open(out))
    except (OSError, ValueError):
        return False, "exit %d, no document: %s" % (p.returncode, p.stderr.strip()[:200])
    if row["key"] == "healthy":
        bad = [f["key"] for f in doc.get("findings", []) if f["severity"] in ("warn", "error")]
        ok = p.returncode == 0 and not bad
        return ok, "exit %d, warn/error: %s" % (p.returncode, ",".join(bad) or "none")
    top = top_key(doc)
    ok = p.returncode == 1 and top == row["key"]
    return ok, "exit %d, top %s" % (p.returncode, top)


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    binary, outdir = args[0], args[1]
    half, expect, causes = "all", {}, None
    i = 2
    while i < len(args):
        if args[i] == "--half":
            half = args[i + 1]
            i += 2
        elif args[i] == "--causes":
            causes = int(args[i + 1])
            i += 2
        elif args[i] == "--expect":
            k, v = args[i + 1].split("=")
            expect[k] = tuple(int(x) for x in v.split("/"))
            i += 2
        else:
            sys.exit("corpus.py: unknown argument '%s'" % args[i])
    os.makedirs(outdir, exist_ok=True)
    failed = 0
    if causes is not None:
        failed |= check_catalogue(causes)
    figs = {}
    for row in manifest():
        if half != "all" and row["half"] != half:
            continue
        group = row["half"]
        if row["key"] == "healthy":
            group = "healthy" if row["half"] in ("A", "B") else row["half"] + "-healthy"
        ok, what = judge(binary, outdir, row)
        r, n = figs.get(group, (0, 0))
        figs[group] = (r + ok, n + 1)
        print("%s - %s [%s] want %s: %s" % ("ok" if ok else "not ok", row["file"], row["half"],
                                            row["key"], what))
    for g in sorted(figs):
        r, n = figs[g]
        print("corpus %s: %d/%d right (%.0f%%)" % (g, r, n, 100.0 * r / n))
    for g, (r, n) in sorted(expect.items()):
        have = figs.get(g, (0, 0))
        if have[0] < r or have[1] < n:
            print("corpus %s: %d/%d, the test asserts at least %d/%d" % (g, have[0], have[1], r, n))
            failed = 1
    print(" ".join("%s %d/%d" % (g, figs[g][0], figs[g][1]) for g in sorted(figs)))
    sys.exit(failed)


if __name__ == "__main__":
    main()
