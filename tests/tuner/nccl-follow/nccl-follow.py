#!/usr/bin/env python3
"""What a new NVIDIA/nccl release changes for nettune, against the newest tag the tuner models.

  nccl-follow.py --git NCCL_GIT_DIR --tag vX.Y.Z-1 [--base vA.B.C-1] [--diff-n N] [--max N]

(`make nccl-follow NCCL_GIT=... TAG=...`; the checklist that uses it is docs/following-nccl.md.)
It prints, for TAG against BASE (by default the newest tag of tuner/nccl_versions.c that is older
than TAG and present in the git directory):
  1. src/graph/tuning.cc: the constant tables as a diff of the model's data (the field names of
     tuner/nccl_versions.h, NCCL's index names, TAG's line), then the statements that changed
     (comments, whitespace and line wrapping ignored), with TAG's line numbers;
  2. the tuner and profiler plugin ABI versions (src/include/plugin/*/<kind>_vN.h) added, which
     tuner symbol NCCL looks for first, and whether nettune's plugin exports it;
  3. the WARN/INFO format strings added and removed (reports/doctor/tools/nccl-formats.py), the
     added ones the doctor's rules leave unclassified, and the knowledge-base messages that cite
     a removed one;
  4. the differential check at TAG (tests/tuner/nccl-diff/run.sh): it fails until the model has
     TAG's row. The exit status is that check's (0 passed, 1 failed; 2 for bad arguments).
A developer check: CI has no NCCL git directory (tests/tuner/nccl-follow/test.sh runs it on a
synthetic one)."""
import argparse
import difflib
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "nccl_formats", os.path.join(ROOT, "reports", "doctor", "tools", "nccl-formats.py"))
nf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nf)

ALGOS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = ["LL", "LL128", "Simple"]
HW = ["NVLINK", "PCI", "NET"]
CC = ["Volta", "Ampere", "Hopper", "Blackwell"]
SCALES = ["N1", "N2", "N4"]
# model field (tuner/nccl_versions.h) <- NCCL's names of the table across releases, index names
TABLES = [
    ("base_lat", ["baseLatencies", "baseLat"], [ALGOS, PROTOS]),
    ("hw_lat", ["hwLatencies", "hwLat"], [HW, ALGOS, PROTOS]),
    ("ll_max_bw", ["llMaxBws"], [CC, SCALES]),
    ("per_ch_ring_ll128", ["perChMaxRingLL128Bws"], [CC, SCALES]),
    ("per_ch_tree_ll128", ["perChMaxTreeLL128Bws"], [CC, SCALES]),
    ("per_ch_tree", ["perChMaxTreeBws"], [CC, SCALES]),
    ("per_ch_nvls_tree", ["perChMaxNVLSTreeBws"], [CC, SCALES]),
    ("nvls_eff", ["nvlsEfficiency"], [CC]),
    ("nt_model_tree_correction", ["treeCorrectionFactor"], [PROTOS, None]),
]
TUNING = "src/graph/tuning.cc"


def git(gitdir, *args, check=True):
    p = subprocess.run(["git", "--git-dir", gitdir] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if check and p.returncode:
        sys.exit("nccl-follow: git %s: %s" % (" ".join(args), p.stderr.decode().strip()))
    return p.stdout.decode("utf-8", "replace") if p.returncode == 0 else None


def vkey(tag):
    return [int(x) for x in re.findall(r"\d+", tag)]


def version_code(tag):
    m = re.match(r"v(\d+)\.(\d+)\.(\d+)", tag)
    return int(m.group(1)) * 10000 + int(m.group(2)) * 100 + int(m.group(3)) if m else None


def modelled_tags():
    with open(os.path.join(ROOT, "tuner", "nccl_versions.c")) as f:
        return sorted(set(re.findall(r'"(v\d+\.\d+\.\d+-\d+)"', f.read())), key=vkey)


# ---- 1. tuning.cc -----------------------------------------------------------------------------

def find_block(raw, names):
    """Position of the '{' that opens the initializer of the first of NAMES defined in RAW (as
    `name[..] = {`, `.name = {` or, from 2.30, `// name` then `{`), or None."""
    for name in names:
        for m in re.finditer(r"\b%s\b" % name, raw):
            j, n = m.end(), len(raw)
            while j < n:
                if raw[j].isspace() or raw[j] == "=":
                    j += 1
                elif raw[j] == "[":
                    j = raw.find("]", j) + 1 or n
                elif raw.startswith("//", j):
                    j = raw.find("\n", j) + 1 or n
                elif raw.startswith("/*", j):
                    j = raw.find("*/", j) + 2 if raw.find("*/", j) >= 0 else n
                else:
                    break
            if j < n and raw[j] == "{":
                return j
    return None


def parse_init(src, i):
    """The nested list of (value, offset) of the brace initializer at src[i] == '{' (comments
    already blanked), and the index after its '}'."""
    out, i = [], i + 1
    while i < len(src):
        c = src[i]
        if c.isspace() or c == ",":
            i += 1
        elif c == "{":
            sub, i = parse_init(src, i)
            out.append(sub)
        elif c == "}":
            return out, i + 1
        else:
            j = i
            depth = 0
            while j < len(src) and not (depth == 0 and src[j] in ",}"):
                depth += src[j] == "("
                depth -= src[j] == ")"
                j += 1
            text = re.sub(r"(?<=\d)[fF]\b", "", src[i:j].strip())
            try:
                val = eval(text, {"__builtins__": {}}) if re.fullmatch(r"[\d.eE+\-*/() ]+", text) else text
            except (SyntaxError, ZeroDivisionError):
                val = text
            out.append((val, i))
            i = j
    return out, i


def tables(text):
    src = nf.strip_comments(text)  # same length: offsets stay valid
    res = {}
    for field, names, _ in TABLES:
        i = find_block(text, names)
        if i is not None:
            res[field] = parse_init(src, i)[0]
    return res


def line_of(text, off):
    return text.count("\n", 0, off) + 1


def diff_table(field, labels, a, b, text_b, tag, out, path=()):
    def name(p):
        return "%s%s" % (field, "".join("[%s]" % ((labels[k][x] if k < len(labels) and labels[k] and
                                                    x < len(labels[k]) else x)) for k, x in enumerate(p)))
    if len(a) != len(b):
        out.append("  %s: %d -> %d entries" % (name(path), len(a), len(b)))
    for k in range(min(len(a), len(b))):
        x, y = a[k], b[k]
        if isinstance(x, list) and isinstance(y, list):
            diff_table(field, labels, x, y, text_b, tag, out, path + (k,))
        elif isinstance(x, list) or isinstance(y, list):
            out.append("  %s: shape changed" % name(path + (k,)))
        elif x[0] != y[0]:
            out.append("  %s: %s -> %s (%s %s:%d)" % (name(path + (k,)), fmt(x[0]), fmt(y[0]), tag, TUNING,
                                                     line_of(text_b, y[1])))


def fmt(v):
    return ("%g" % v) if isinstance(v, float) else str(v)


def statements(text):
    """(key, display, line) per statement: comments blanked, split at ';', braces dropped; the
    key has no whitespace and joined string literals (line wrapping and layout do not count)."""
    src = nf.strip_comments(text)
    res, start, i, n = [], 0, 0, len(src)
    while i <= n:
        c = src[i] if i < n else ";"
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            continue
        if c == ";" or i == n:
            chunk = src[start:i]
            # designated initializers (".name = {", 2.28-2.29) and positional ones (2.30) alike
            body = re.sub(r"([{,]\s*)\.\w+\s*=(?!=)", r"\1", chunk).replace("{", " ").replace("}", " ")
            key = re.sub(r"\s+", "", re.sub(r'"\s*"', "", body))
            # constant tables (a dozen numbers or more) are compared by tables() instead
            numeric = len(re.findall(r"(?<![\w.])\d*\.?\d+", key)) >= 12
            if key and not numeric and not re.fullmatch(r"[\d.,eEfF+\-*/()]*", key) and not key.startswith("#"):
                # shown: what follows the last brace (the statement, not the block it opens)
                cut = max(chunk.rfind("{"), chunk.rfind("}")) + 1
                if not chunk[cut:].strip():
                    cut = 0
                shown = chunk[cut:]
                lead = len(shown) - len(shown.lstrip())
                disp = re.sub(r"\s+", " ", shown.replace("{", " ").replace("}", " ")).strip()
                res.append((key, disp[:160], line_of(src, start + cut + lead)))
            start = i + 1
        i += 1
    return res


def section_tuning(g, base, tag, limit):
    ta, tb = git(g, "show", "%s:%s" % (base, TUNING)), git(g, "show", "%s:%s" % (tag, TUNING))
    print("== 1. %s: %s %s, %s %s" % (TUNING, base, hashlib.sha256(ta.encode()).hexdigest()[:12], tag,
                                      hashlib.sha256(tb.encode()).hexdigest()[:12]))
    if ta == tb:
        print("  identical: the model's row for %s serves %s (say so in tuner/nccl_versions.c)" % (base, tag))
        return
    A, B = tables(ta), tables(tb)
    out = []
    for field, _, labels in TABLES:
        if field in A and field in B:
            diff_table(field, labels, A[field], B[field], tb, tag, out)
        elif field in A or field in B:
            out.append("  %s: %s" % (field, "added" if field in B else "removed"))
    print("constants, as the model's data (tuner/nccl_versions.h fields):")
    print("\n".join(out) if out else "  unchanged")
    sa, sb = statements(ta), statements(tb)
    sm = difflib.SequenceMatcher(None, [s[0] for s in sa], [s[0] for s in sb], autojunk=False)
    lines = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        lines += ["  - %s:%d  %s" % (base, s[2], s[1]) for s in sa[i1:i2]]
        lines += ["  + %s:%d  %s" % (tag, s[2], s[1]) for s in sb[j1:j2]]
    print("formulas: %d statements changed (comments, whitespace and wrapping ignored; constant "
          "tables above)" % len(lines))
    show(lines, limit)


def show(lines, limit):
    for ln in lines[:limit]:
        print(ln)
    if len(lines) > limit:
        print("  ... and %d more (--max N)" % (len(lines) - limit))


# ---- 2. plugin ABIs ---------------------------------------------------------------------------

def abi_versions(g, tag, kind):
    names = git(g, "ls-tree", "--name-only", tag, "src/include/plugin/%s/" % kind, check=False) or ""
    return sorted(int(v) for v in re.findall(r"%s_v(\d+)\.h" % kind, names))


def section_abi(g, base, tag):
    print("== 2. plugin ABIs (src/include/plugin/<kind>/<kind>_vN.h)")
    for kind in ("tuner", "profiler"):
        a, b = abi_versions(g, base, kind), abi_versions(g, tag, kind)
        added, gone = [v for v in b if v not in a], [v for v in a if v not in b]
        span = lambda vs: ("v%d..v%d" % (vs[0], vs[-1])) if vs else "none"
        print("  %s: %s %s, %s %s; added %s%s" % (kind, base, span(a), tag, span(b),
                                                 ", ".join("v%d" % v for v in added) or "none",
                                                 ("; removed " + ", ".join("v%d" % v for v in gone)) if gone else ""))
    loader = git(g, "show", "%s:src/plugin/tuner.cc" % tag, check=False) or ""
    m = re.search(r"getNcclTuner_v(\d+)\(\s*tunerPluginLib\s*\)", loader)
    with open(os.path.join(ROOT, "plugins", "nccl-tuner", "exports.map")) as f:
        exported = sorted(int(v) for v in re.findall(r"ncclTunerPlugin_v(\d+)", f.read()))
    if m:
        first = int(m.group(1))
        print("  %s looks for ncclTunerPlugin_v%d first (src/plugin/tuner.cc:%d); nettune's plugin exports %s%s" %
              (tag, first, line_of(loader, m.start()), ", ".join("v%d" % v for v in exported),
               "" if first in exported else ": v%d NOT exported (plugins/nccl-tuner)" % first))


# ---- 3. format strings ------------------------------------------------------------------------

def formats(g, tag):
    res = {}
    for path, text in nf.tag_files(g, tag):
        for level, subs, loc, f in nf.extract(path, text):
            res.setdefault((level, f), []).append(loc)
    return res


def section_formats(g, base, tag, limit):
    a, b = formats(g, base), formats(g, tag)
    added = sorted(k for k in b if k not in a)
    removed = sorted(k for k in a if k not in b)
    kbm, rules = nf.kb_messages(), nf.load_rules()
    print("== 3. format strings (WARN; INFO of INIT, NET, GRAPH, ENV, TUNING): %s %d, %s %d; "
          "added %d, removed %d" % (base, len(a), tag, len(b), len(added), len(removed)))
    uncl = [k for k in added if nf.classify(k[0], ";".join(b[k]), k[1], kbm, rules) == "UNCLASSIFIED"]
    print("added, unclassified by the knowledge base and reports/doctor/tools/nccl-format-rules.tsv: %d" % len(uncl))
    show(["  + %s %s  %s" % (k[0], b[k][0], nf.esc(k[1])[:140]) for k in uncl], limit)
    print("added, classified: %d" % (len(added) - len(uncl)))
    show(["  + %s %s  %s" % (k[0], b[k][0], nf.esc(k[1])[:140]) for k in added if k not in uncl], limit)
    print("removed: %d" % len(removed))
    show(["  - %s %s  %s" % (k[0], a[k][0], nf.esc(k[1])[:140]) for k in removed], limit)
    with open(nf.KB) as f:
        msgs = json.load(f).get("messages", [])
    gone = [m for m in msgs if (m["level"], m["format"]) in removed]
    print("knowledge-base messages (reports/doctor/knowledge.json) citing a removed string: %d" % len(gone))
    for m in gone:
        print("  %s (%s %s, %s..%s): %s" % (m["id"], m["level"], m["at"], m["first"], m["last"], nf.esc(m["format"])[:120]))


# ---- 4. the differential check ----------------------------------------------------------------

def section_diff(g, tag, n):
    code = version_code(tag)
    print("== 4. differential check at %s (tests/tuner/nccl-diff/run.sh, %d communicators per run)" % (tag, n))
    if tag not in modelled_tags():
        print("  %s has no row in tuner/nccl_versions.c: the check compares NCCL's file with the row "
              "that covers %d, if any, and fails until the model is extended" % (tag, code))
    sys.stdout.flush()
    rc = subprocess.call([os.path.join(ROOT, "tests", "tuner", "nccl-diff", "run.sh"), g, str(n),
                          "%s:%d" % (tag, code)], cwd=ROOT, stderr=subprocess.STDOUT)
    print("differential check at %s: %s" % (tag, "passed" if rc == 0 else "FAILED"))
    return 0 if rc == 0 else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--git", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--base")
    p.add_argument("--diff-n", type=int, default=5000)
    p.add_argument("--max", type=int, default=40, help="lines shown per list (default 40)")
    a = p.parse_args()
    tags = set((git(a.git, "tag", "--list") or "").split())
    if a.tag not in tags or version_code(a.tag) is None:
        print("nccl-follow: no tag '%s' in %s (give TAG=vX.Y.Z-1)" % (a.tag, a.git), file=sys.stderr)
        return 2
    base = a.base
    if not base:
        older = [t for t in modelled_tags() if t in tags and vkey(t) < vkey(a.tag)]
        if not older:
            print("nccl-follow: no modelled tag older than %s in %s (give --base)" % (a.tag, a.git), file=sys.stderr)
            return 2
        base = older[-1]
    elif base not in tags:
        print("nccl-follow: no tag '%s' in %s" % (base, a.git), file=sys.stderr)
        return 2
    print("nccl-follow: %s against %s (%s)" % (a.tag, base, "given" if a.base else
                                               "the newest tag of tuner/nccl_versions.c before it"))
    section_tuning(a.git, base, a.tag, a.max)
    section_abi(a.git, base, a.tag)
    section_formats(a.git, base, a.tag, a.max)
    return section_diff(a.git, a.tag, a.diff_n)


if __name__ == "__main__":
    sys.exit(main())
