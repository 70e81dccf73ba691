#!/usr/bin/env python3
"""Extract NCCL's WARN(...) and INFO(...) format strings from its source, per release tag.

The doctor's knowledge base (reports/doctor/knowledge.json) is checked against NCCL itself with
this script: every WARN call site and every INFO call site of the INIT, NET, GRAPH, ENV and TUNING
subsystems of the newest tag becomes one row of docs/nccl-<version>-formats.tsv, with the first and
last tag (of the tags read) in which the same format string appears, and its class: the id of the
knowledge-base message entry whose format it is, or a reason from
reports/doctor/tools/nccl-format-rules.tsv ("harmless: ...", or a generic knowledge-base entry).
Format strings that only older tags have are listed too (their last tag is older than the newest).

Usage (the next NCCL version is one run):
  nccl-formats.py table --git NCCL_GIT_DIR [--tags v2.18.1-1,...,v2.28.9-1] [--out docs/nccl-2.28.9-formats.tsv]
  (docs/nccl-2.30.7-formats.tsv: the default tags, then v2.29.2-1,v2.29.3-1,v2.29.7-1,
  v2.30.3-1,v2.30.4-1,v2.30.7-1; docs/nccl-2.29.7-formats.tsv: up to v2.29.7-1)
  nccl-formats.py path-types --git NCCL_GIT_DIR [--tags ...]     # topoPathTypeStr per tag, as KB JSON
  nccl-formats.py sample FORMAT                                  # a line generated from a format
NCCL_GIT_DIR is a clone of github.com/NVIDIA/nccl (a bare one is fine).
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
KB = os.path.join(ROOT, "reports", "doctor", "knowledge.json")
RULES = os.path.join(HERE, "nccl-format-rules.tsv")
SUBSYS = {"NCCL_INIT", "NCCL_NET", "NCCL_GRAPH", "NCCL_ENV", "NCCL_TUNING", "NCCL_ALL"}
DEFAULT_TAGS = ("v2.18.1-1 v2.18.3-1 v2.18.5-1 v2.18.6-1 v2.19.1-1 v2.19.3-1 v2.19.4-1 v2.20.3-1 "
                "v2.20.5-1 v2.21.5-1 v2.22.3-1 v2.23.4-1 v2.24.3-1 v2.25.1-1 v2.26.2-1 v2.26.3-1 "
                "v2.26.5-1 v2.26.6-1 v2.27.3-1 v2.27.5-1 v2.27.6-1 v2.27.7-1 v2.28.3-1 v2.28.7-1 "
                "v2.28.9-1").split()
# <inttypes.h> macros NCCL uses inside format strings, as glibc x86-64 defines them.
PRI = {"PRIu64": "lu", "PRId64": "ld", "PRIx64": "lx", "PRIi64": "li", "PRIX64": "lX",
       "PRIu32": "u", "PRId32": "d", "PRIx32": "x", "PRIuPTR": "lu", "PRIxPTR": "lx"}
SRC_EXT = (".cc", ".cu", ".c", ".cpp", ".h", ".hpp", ".cuh")


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout


def tag_files(gitdir, tag):
    names = [n for n in git(gitdir, "ls-tree", "-r", "--name-only", tag, "src").decode().split("\n")
             if n.endswith(SRC_EXT)]
    p = subprocess.Popen(["git", "--git-dir", gitdir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    out, _ = p.communicate("".join("%s:%s\n" % (tag, n) for n in names).encode())
    pos = 0
    for n in names:
        hdr_end = out.index(b"\n", pos)
        size = int(out[pos:hdr_end].split()[2])
        yield n, out[hdr_end + 1:hdr_end + 1 + size].decode("utf-8", "replace")
        pos = hdr_end + 1 + size + 1


def strip_comments(src):
    """Blanks comments (keeping newlines, so line numbers stay), leaves strings alone."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in src[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_args(src, i):
    """Arguments of the call whose '(' is at src[i]; returns (list of arg texts, end index)."""
    depth, args, cur, j, n = 0, [], [], i, len(src)
    while j < n:
        c = src[j]
        if c in "\"'":
            k = j + 1
            while k < n and src[k] != c:
                k += 2 if src[k] == "\\" else 1
            cur.append(src[j:k + 1])
            j = k + 1
            continue
        if c in "([{":
            depth += 1
            if depth > 1:
                cur.append(c)
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args, j
            cur.append(c)
        elif c == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        j += 1
    return None, n


ESC = {"n": "\n", "t": "\t", "\\": "\\", "\"": "\"", "'": "'", "0": "\0", "r": "\r"}


def literal(arg):
    """The C string an argument made of literals (and PRI macros) spells, or None."""
    out, i, n, seen = [], 0, len(arg), False
    while i < n:
        c = arg[i]
        if c.isspace():
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and arg[j] != '"':
                if arg[j] == "\\" and j + 1 < n:
                    out.append(ESC.get(arg[j + 1], arg[j + 1]))
                    j += 2
                else:
                    out.append(arg[j])
                    j += 1
            i = j + 1
            seen = True
        else:
            m = re.match(r"#?[A-Za-z_][A-Za-z0-9_]*", arg[i:])
            if not m:
                return None
            # a PRI macro, or a macro parameter (checks.h, ibvwrap.cc: "Call to " name " failed"),
            # which is some name at run time: a %s
            out.append(PRI.get(m.group(0), "%s"))
            i += len(m.group(0))
    return "".join(out) if seen else None


CALL = re.compile(r"(?<![A-Za-z0-9_])(WARN|INFO)\s*\(")


def extract(path, text):
    src = strip_comments(text)
    for m in CALL.finditer(src):
        line_start = src.rfind("\n", 0, m.start()) + 1
        if src[line_start:m.start()].lstrip().startswith("#"):
            continue  # the macro definitions themselves
        args, _ = split_args(src, m.end() - 1)
        if not args:
            continue
        level = m.group(1)
        lineno = src.count("\n", 0, m.start()) + 1
        if level == "INFO":
            if len(args) < 2:
                continue
            subs = sorted(set(re.findall(r"NCCL_[A-Z_]+", args[0])))
            if not SUBSYS.intersection(subs):
                continue
            fmt = literal(args[1])
        else:
            subs = []
            fmt = literal(args[0])
        if fmt is None:
            fmt = "<non-literal: %s>" % (args[1] if level == "INFO" else args[0])
        yield level, ("|".join(s[5:] for s in subs) or "-"), "%s:%d" % (path, lineno), fmt


def esc(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def load_rules():
    rules = []
    with open(RULES) as f:
        for ln in f:
            if ln.startswith("#") or not ln.strip():
                continue
            parts = ln.rstrip("\n").split("\t")
            if len(parts) != 4:
                sys.exit("%s: need 4 tab-separated columns: %r" % (RULES, ln))
            lvl, floc, ffmt, cls = parts
            rules.append((lvl, re.compile(floc), re.compile(ffmt), cls))
    return rules


def kb_messages():
    with open(KB) as f:
        kb = json.load(f)
    out = {}
    for m in kb.get("messages", []):  # several messages share a format when a value tells them apart
        out.setdefault((m["level"], m["format"]), []).append(m["id"])
    return {k: ",".join(v) for k, v in out.items()}


def classify(level, loc, fmt, kbm, rules):
    if (level, fmt) in kbm:
        return kbm[(level, fmt)]
    for lvl, floc, ffmt, cls in rules:
        if lvl in ("*", level) and floc.search(loc) and ffmt.search(fmt):
            return cls
    return "UNCLASSIFIED"


def cmd_table(a):
    tags = a.tags.split(",") if a.tags else DEFAULT_TAGS
    rows = {}  # (level, fmt) -> dict
    for ti, tag in enumerate(tags):
        for path, text in tag_files(a.git, tag):
            for level, subs, loc, fmt in extract(path, text):
                r = rows.get((level, fmt))
                if r is None:
                    r = rows[(level, fmt)] = {"first": tag, "locs": {}, "subs": subs}
                r["last"] = tag
                r["locs"].setdefault(tag, []).append(loc)
                r["subs"] = subs
        print("%s: %d format strings so far" % (tag, len(rows)), file=sys.stderr)
    kbm, rules = kb_messages(), load_rules()
    newest = tags[-1]
    out = open(a.out, "w") if a.out else sys.stdout
    out.write("# NCCL WARN(...) and INFO(...) format strings (INFO: INIT, NET, GRAPH, ENV, TUNING), "
              "extracted from github.com/NVIDIA/nccl by reports/doctor/tools/nccl-formats.py\n")
    out.write("# tags read: %s\n" % " ".join(tags))
    out.write("# location: file:line at the last tag (every call site of the same string, ';'-separated); "
              "first_tag/last_tag: first and last tag read that have the string; "
              "class: knowledge-base message id (reports/doctor/knowledge.json) or a reason\n")
    out.write("level\tsubsys\tlocation\tfirst_tag\tlast_tag\tclass\tformat\n")
    order = sorted(rows.items(), key=lambda kv: (kv[1]["last"] != newest, kv[1]["locs"][kv[1]["last"]][0], kv[0]))
    unclassified = 0
    for (level, fmt), r in order:
        locs = ";".join(r["locs"][r["last"]])
        cls = classify(level, locs, fmt, kbm, rules)
        unclassified += cls == "UNCLASSIFIED"
        out.write("%s\t%s\t%s\t%s\t%s\t%s\t%s\n" % (level, r["subs"], locs, r["first"], r["last"], cls, esc(fmt)))
    if a.out:
        out.close()
    n_new = sum(1 for r in rows.values() if r["last"] == newest)
    print("%d format strings in %s, %d only in older tags, %d unclassified" %
          (n_new, newest, len(rows) - n_new, unclassified), file=sys.stderr)
    return 1 if unclassified and a.strict else 0


def cmd_path_types(a):
    """NCCL's path types (#define PATH_<NAME> <number> in src/graph/topo.h, src/include/graph.h
    before 2.19) per tag, merged over consecutive tags with the same numbering. The defines, not
    topoPathTypeStr[], are the truth: up to 2.20 that array lacks "NET" (PATH_NET 8, PATH_DIS 9)."""
    tags = a.tags.split(",") if a.tags else DEFAULT_TAGS
    res, prev = [], None
    for tag in tags:
        names, loc = None, None
        for path in ("src/graph/topo.h", "src/include/graph.h"):
            try:
                text = git(a.git, "show", "%s:%s" % (tag, path)).decode()
            except subprocess.CalledProcessError:
                continue
            defs = [(m.group(1), int(m.group(2)), text.count("\n", 0, m.start()) + 1)
                    for m in re.finditer(r"^#define PATH_([A-Z0-9]+)\s+(\d+)\b", text, re.M)]
            if defs:
                n = max(d[1] for d in defs) + 1
                names = ["?"] * n
                for name, num, _ in defs:
                    names[num] = name
                loc = "%s:%d" % (path, defs[0][2])
                break
        if names is None:
            continue
        if prev and prev["names"] == names:
            prev["last"] = tag
        else:
            prev = {"first": tag, "last": tag, "at": loc, "names": names}
            res.append(prev)
    print(json.dumps(res, indent=1))
    return 0


SAMPLE = {"d": "1", "i": "1", "u": "1", "x": "1f", "X": "1F", "s": "x", "p": "0x7f00", "f": "1.5",
          "g": "1.5", "e": "1.5e+00", "c": "c", "o": "7", "z": "1"}
CONV = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcsp%])")


def sample(fmt):
    """A line as NCCL would print it from `fmt`, each conversion replaced by a fixed value."""
    return CONV.sub(lambda m: "%" if m.group(5) == "%" else SAMPLE.get(m.group(5), "1"), fmt)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = p.add_subparsers(dest="cmd", required=True)
    t = sp.add_parser("table")
    t.add_argument("--git", required=True)
    t.add_argument("--tags")
    t.add_argument("--out")
    t.add_argument("--strict", action="store_true", help="exit 1 when a format string is unclassified")
    pt = sp.add_parser("path-types")
    pt.add_argument("--git", required=True)
    pt.add_argument("--tags")
    s = sp.add_parser("sample")
    s.add_argument("format")
    a = p.parse_args()
    if a.cmd == "table":
        return cmd_table(a)
    if a.cmd == "path-types":
        return cmd_path_types(a)
    print(sample(a.format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
