#!/usr/bin/env python3
"""The file-level call graph of the built objects: no two files may call each other, and the
libraries of lib/ depend one way (docs/architecture.md).

Usage: tests/unit/symbol_graph.py OBJDIR ALLOWFILE

Every object under OBJDIR (build/obj) except the tests' own is read with nm: its defined global
symbols and its undefined ones. A file calls another when it uses a symbol the other defines; an
object built twice (the probe's sources through mpicc under OBJDIR/mpi/ and with cc for the unit
tests) is one file. Objects whose source is gone (left in a build folder by a move) are skipped.

It fails on:
- a cycle (a strongly connected set of files), printed as a path with the symbol behind each
  step, unless ALLOWFILE lists exactly that set of files;
- an ALLOWFILE entry whose cycle no longer exists, so the list cannot go stale;
- a call against the direction of the libraries: lib/core/ calls no other part, lib/node/,
  lib/engine/ and lib/nccl/ call only lib/core/, and nothing in lib/ calls a file outside lib/.
"""
import collections
import os
import subprocess
import sys

# Which library parts each part of lib/ may call (besides itself). The judging sources still
# at the root of lib/ ("judge") are on their way to the judge's own folder.
PARTS_ALLOWED = {
    "lib/core": set(),
    "lib/node": {"lib/core"},
    "lib/engine": {"lib/core"},
    "lib/nccl": {"lib/core"},
    "lib": {"lib/core", "lib/node", "lib/engine"},
}


def source_of(objdir, obj):
    """The source file an object is built from ('' when it is gone)."""
    rel = os.path.relpath(obj, objdir)[:-2]
    if rel.startswith("mpi" + os.sep):
        rel = rel[4:]
    for ext in (".c", ".S", ".cu"):
        if os.path.exists(rel + ext):
            return rel + ext
    # Generated sources (the doctor's embedded knowledge base) live beside their objects.
    if os.path.exists(obj[:-2] + ".c"):
        return rel + ".c"
    return ""


def nm(args, objs):
    """(object, symbol) for each line of nm -A over objs."""
    out = []
    for i in range(0, len(objs), 200):
        res = subprocess.run(["nm", "-A"] + args + objs[i:i + 200], capture_output=True,
                             text=True, check=True)
        for line in res.stdout.splitlines():
            obj, _, rest = line.partition(":")
            fields = rest.split()
            if fields:
                out.append((obj, fields[-1]))
    return out


def part_of(path):
    """The library part of a file ("lib/core", ..., "lib" for the root), or None outside lib/."""
    bits = path.split("/")
    if bits[0] != "lib":
        return None
    return "lib/" + bits[1] if len(bits) > 2 else "lib"


def sccs(nodes, edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, onstack, stack, result = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    onstack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                elif nxt in onstack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    onstack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    result.append(frozenset(comp))
    return result


def main():
    objdir, allowfile = sys.argv[1], sys.argv[2]
    objs = []
    for dirpath, dirnames, filenames in os.walk(objdir):
        rel = os.path.relpath(dirpath, objdir)
        if rel == "tests" or rel.startswith("tests" + os.sep):
            dirnames[:] = []
            continue
        objs += [os.path.join(dirpath, f) for f in filenames if f.endswith(".o")]
    src = {o: source_of(objdir, o) for o in sorted(objs)}
    objs = [o for o in sorted(objs) if src[o]]
    if not objs:
        print(f"symbol graph: no objects under {objdir}: build first (make all)")
        return 1

    definers = collections.defaultdict(set)
    for obj, sym in nm(["-g", "--defined-only"], objs):
        if sym != "main":
            definers[sym].add(src[obj])
    edges = collections.defaultdict(set)
    why = {}
    for obj, sym in nm(["-u"], objs):
        for target in definers.get(sym, ()):
            if target != src[obj]:
                edges[src[obj]].add(target)
                why.setdefault((src[obj], target), sym)
    nodes = set(src.values())

    allowed = set()
    with open(allowfile) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                allowed.add(frozenset(line))

    failed = 0
    found = set(sccs(nodes, edges))
    for comp in sorted(found, key=sorted):
        path = shortest_cycle(comp, edges)
        shown = path[0] + "".join(f" -[{why[(a, b)]}]-> {b}" for a, b in zip(path, path[1:]))
        if len(comp) > len(path) - 1:
            shown += f" (all of: {' '.join(sorted(comp))})"
        if comp in allowed:
            print(f"symbol graph: allowed cycle (being removed): {shown}")
        else:
            print(f"symbol graph: cycle: {shown}")
            failed += 1
    for comp in sorted(allowed - found, key=sorted):
        print(f"symbol graph: {allowfile} lists a cycle that no longer exists: "
              f"{' '.join(sorted(comp))}: delete that line")
        failed += 1

    for a in sorted(edges):
        pa = part_of(a)
        if pa is None:
            continue
        for b in sorted(edges[a]):
            pb = part_of(b)
            if pb == pa:
                continue
            if pb is None or pb not in PARTS_ALLOWED.get(pa, set()):
                print(f"symbol graph: {a} calls {b} ({why[(a, b)]}): {pa}/ may call only "
                      f"{', '.join(sorted(PARTS_ALLOWED.get(pa, ()))) or 'itself'}")
                failed += 1

    nedges = sum(len(v) for v in edges.values())
    print(f"symbol graph: {len(nodes)} files, {nedges} calls between files, "
          f"{len(found)} cycles ({len(found & allowed)} allowed), "
          f"{'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


def shortest_cycle(comp, edges):
    """The shortest closed path from the component's first file (by name) back to it."""
    start = min(comp)
    prev = {start: None}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges[node]):
            if nxt == start:
                chain = []
                while node is not None:
                    chain.append(node)
                    node = prev[node]
                return chain[::-1] + [start]
            if nxt in comp and nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return [start, start]


if __name__ == "__main__":
    sys.exit(main())
