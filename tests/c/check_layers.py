#!/usr/bin/env python3
"""check_layers.py -- the core's files call one another without a cycle.

Reads the symbol tables of the core's objects with nm (the objects given on
the command line, e.g. build/obj/*.o): object A depends on object B when A
uses a symbol that B defines.  Every strongly connected group of two or more
objects is a cycle: it is printed, one closed path through it, and the
script exits 1.  Exit 0 prints the objects in an order where each one only
uses those before it.

    python3 tests/c/check_layers.py build/obj/*.o
"""
import os
import subprocess
import sys

# nm's letters of a symbol an object defines (text, data, read-only data,
# bss, small data, weak, common); "U" is a symbol it uses.
DEFINED = set("TDRBGSVWCi")


def symbols(path):
    """(defined, used) names of one object file."""
    out = subprocess.run(["nm", "-P", path], check=True, capture_output=True,
                         text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in DEFINED:
            defined.add(name)
    return defined, used


def graph(paths):
    """{object: set of objects whose symbols it uses}, by base name."""
    names = {p: os.path.splitext(os.path.basename(p))[0] for p in paths}
    tables = {names[p]: symbols(p) for p in paths}
    owner = {}
    for obj, (defined, _) in tables.items():
        for sym in defined:
            owner.setdefault(sym, obj)
    return {obj: {owner[s] for s in used if s in owner and owner[s] != obj}
            for obj, (_, used) in tables.items()}


def components(g):
    """Tarjan's strongly connected components (iterative), each a list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(g[nxt]))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                out.append(sorted(comp))
    return out


def closed_path(g, comp):
    """One cycle through comp's first member, by breadth-first search."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(g[node] & members):
            if nxt == start:
                path = [node]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if nxt not in prev:
                prev[nxt] = node
                queue.append(nxt)
    return comp


def main(argv):
    paths = [p for p in argv[1:] if p.endswith(".o")]
    if not paths:
        print("usage: check_layers.py OBJECT.o ...", file=sys.stderr)
        return 2
    g = graph(paths)
    cycles = [c for c in components(g) if len(c) > 1]
    if cycles:
        for comp in cycles:
            print("check_layers: cycle of %d files: %s" % (len(comp), " ".join(comp)))
            print("  e.g. " + " -> ".join(closed_path(g, comp)))
        return 1
    # Tarjan emits components callee-first: a bottom-up order of the files.
    order = [c[0] for c in components(g)]
    print("check_layers: no cycle among %d files, bottom up: %s" % (len(g), " ".join(order)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
