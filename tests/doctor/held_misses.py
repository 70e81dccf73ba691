#!/usr/bin/env python3
"""Why the held sets' untouched misses missed (tests/doctor/corpus/MEASURED.md, the section of that
name): one class per failure log the doctor got wrong when its held set was measured untouched.

usage (from the repository root, after make): python3 tests/doctor/held_misses.py [DOCTOR]

For each held set: its untouched per-log lines are read from MEASURED.md (the first ``` block of the
set's section, limited to the set's own logs); the keys the doctor knew at the rules commit the set
was measured on are the catalogue and finding keys of `git show RULES:reports/doctor/knowledge.json`;
each miss is judged again by the current build (corpus.py's judge). Classes:
  a  new cause: the expected key had no catalogue or finding entry at RULES; right now
  b  known cause, form not matched: the key existed at RULES; right now
  c  the log does not carry its cause: the key existed at RULES; still wrong now
  d  new cause, still wrong now: the key had no entry at RULES; wrong now
As checks it prints the keys KEYS.tsv gained in the set's manifest commit (C to I: a miss's key is
new at RULES exactly when that commit added its row, else the script says so and exits 1), exits 1
if a log right untouched is wrong now, and says for c and d whether MEASURED.md's "Still wrong" or
"stays wrong" paragraphs name the log. Healthy misses are listed apart (fixed now or still
wrong)."""
import json, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402  (corpus.manifest, corpus.judge)

MEASURED = os.path.join(HERE, "corpus", "MEASURED.md")
# name, heading of the untouched measurement in MEASURED.md, first and last log number, manifest
# commit, rules commit the untouched measurement ran on (both as MEASURED.md names them)
SETS = [
    ("B1", "## Held half B, measured before any rule was written from it", 1, 40, "9108dc0", "e0b0b6b"),
    ("B2", "## Second round: logs 041-111", 41, 111, "e037abb", "c9a4b5b"),
    ("B3", "## Third round: logs 112-134", 112, 134, "e5ac450", "64ca346"),
    ("C", "## Held set C:", 135, 164, "9321a55", "5ed2a11"),
    ("D", "## Held set D:", 165, 186, "e04e399", "e7ba34d"),
    ("E", "## Held set E:", 187, 206, "f76d039", "9c63110"),
    ("F", "## Held set F:", 207, 219, "4967a2a", "323f71b"),
    ("G", "## Held set G:", 220, 230, "3ff280e", "569c7e3"),
    ("H", "## Held set H:", 231, 242, "c4d428b", "cad8d92"),
    ("I", "## Held set I:", 243, 252, "65f29ba", "0243de3"),
    ("J", "## Held set J:", 253, 258, "a9290bc", "c729474"),
    ("K", "## Held set K:", 259, 263, "947f92f", "8742ab5"),
    ("L", "## Held set L:", 264, 271, "d49fbfa", "27d8f91"),
]
LINE = re.compile(r"^(ok|not ok) - ((\d{3})-\S+\.log) \[(\w+)\] want (\S+): (.*)$")


def git(*args):
    return subprocess.run(["git", "-C", os.path.join(HERE, "..", "..")] + list(args),
                          capture_output=True, text=True, check=True).stdout


def sections(text):
    """heading line -> its text up to the next '## ' heading"""
    out, cur = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            cur = line
            out[cur] = []
        elif cur:
            out[cur].append(line)
    return {h: "\n".join(b) for h, b in out.items()}


def untouched(secs, heading, lo, hi):
    body = next(b for h, b in secs.items() if h.startswith(heading))
    block = body.split("```")[1]
    rows = []
    for line in block.splitlines():
        m = LINE.match(line)
        if m and lo <= int(m.group(3)) <= hi:
            rows.append({"ok": m.group(1) == "ok", "file": m.group(2), "num": m.group(3),
                         "half": m.group(4), "key": m.group(5), "then": m.group(6)})
    return rows, body


def known_keys(rules):
    kb = json.loads(git("show", rules + ":reports/doctor/knowledge.json"))
    return {e["key"] for e in kb.get("catalogue", [])} | set(kb.get("findings", {}))


def keys_added(since, manifest):
    diff = git("diff", since, manifest, "--", "tests/doctor/corpus/KEYS.tsv")
    return {l[1:].split("\t")[0] for l in diff.splitlines()
            if l.startswith("+") and not l.startswith("+++") and "\t" in l}


def stay_wrong_text(text):
    """the sentences of MEASURED.md that say which logs stay wrong"""
    return " ".join(p for p in re.split(r"\n\s*\n", text)
                    if re.search(r"[Ss]till wrong|stays? wrong", p))


def main():
    doctor = sys.argv[1] if len(sys.argv) > 1 else "build/bin/nettune-doctor"
    if not os.access(doctor, os.X_OK):
        sys.exit("held_misses.py: no doctor at %s (run make first)" % doctor)
    text = open(MEASURED).read()
    secs = sections(text)
    # what the sections of the measurements say (not this script's own section)
    stay = stay_wrong_text(text.split("## Why the held sets' untouched misses missed")[0])
    rows_now = {r["file"]: r for r in corpus.manifest()}
    tmp = tempfile.TemporaryDirectory(prefix="held-misses-")
    out = tmp.name
    total = {c: 0 for c in "rabcd"}
    table, healthy, problems, wrong_now = [], [], [], {}
    for name, heading, lo, hi, man, rules in SETS:
        for c in (man, rules):
            if c not in text:
                problems.append("%s: commit %s not named in MEASURED.md" % (name, c))
        rows, _ = untouched(secs, heading, lo, hi)
        known = known_keys(rules)
        # KEYS.tsv's rows added by the manifest commit (C to I); B's rounds added their keys with
        # half-A logs of the same round, from which RULES was written, so no check there
        added = None if name.startswith("B") else keys_added(man + "^", man)
        count = {c: 0 for c in "rabcd"}
        print("# %s (logs %03d-%03d, manifest %s, rules %s)" % (name, lo, hi, man, rules))
        for r in rows:
            row = rows_now.get(r["file"])
            if row is None or row["key"] != r["key"]:
                problems.append("%s: %s wanted %s then, manifest now %s"
                                % (name, r["file"], r["key"], row and row["key"]))
            if r["key"] == "healthy":
                if not r["ok"]:
                    ok, what = corpus.judge(doctor, out, row)
                    healthy.append((name, r["file"], r["then"],
                                    "fixed now" if ok else "still wrong", what))
                continue
            ok, what = corpus.judge(doctor, out, row)
            if r["ok"]:
                count["r"] += 1
                if not ok:
                    problems.append("%s: %s right untouched, wrong now (%s)" % (name, r["file"], what))
                continue
            new = r["key"] not in known
            cls = ("a" if ok else "d") if new else ("b" if ok else "c")
            count[cls] += 1
            if cls in "cd":
                m = re.match(r"exit (\d+), top (\S+)", what)
                kind = ("exit %s" % m.group(1) if m.group(1) != "1" else
                        "exit 1, catch-all only" if m.group(2) == "None" else
                        "exit 1, log_incomplete" if m.group(2) == "log_incomplete" else
                        "exit 1, another cause named")
                wrong_now.setdefault(kind, []).append(r["num"])
            if added is not None and (r["key"] in added) != new:
                problems.append("%s: %s's key %s: %s KEYS.tsv row for the set, %s at %s"
                                % (name, r["file"], r["key"], "a" if r["key"] in added else "no",
                                   "no entry" if new else "an entry", rules))
            cited = ""
            if cls in "cd":
                cited = ("; cited as staying wrong" if re.search(r"\b%s\b" % r["num"], stay)
                         else "; NOT cited")
            print("%s %s want %s | untouched: %s | now: %s%s"
                  % (cls, r["file"], r["key"], r["then"], what, cited))
        if added:
            print("  KEYS.tsv rows added with manifest %s: %s" % (man, " ".join(sorted(added))))
        fails = sum(count.values())
        table.append((name, fails, count))
        for c in count:
            total[c] += count[c]
    rest = {c: total[c] - sum(t[2][c] for t in table if t[0] in ("B2", "B3")) for c in total}
    print()
    print("set    fails right  a  b  c  d  right/(right+b)  right/fails")
    for name, fails, c in table + [("total", sum(total.values()), total),
                                   ("B1,C-" + SETS[-1][0], sum(rest.values()), rest)]:
        rb = c["r"] + c["b"]
        print("%-6s %5d %5d %2d %2d %2d %2d  %7s %5s  %7s %4.0f%%"
              % (name, fails, c["r"], c["a"], c["b"], c["c"], c["d"], "%d/%d" % (c["r"], rb),
                 "%.0f%%" % (100.0 * c["r"] / rb) if rb else "-", "%d/%d" % (c["r"], fails),
                 100.0 * c["r"] / fails))
    print()
    print("c and d, what the current doctor says:")
    for kind in sorted(wrong_now):
        print("  %s: %d (%s)" % (kind, len(wrong_now[kind]), " ".join(wrong_now[kind])))
    print()
    print("healthy misses:")
    for h in healthy:
        print("  %s %s | untouched: %s | %s: %s" % h)
    for p in problems:
        print("check: " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
