"""The import graph of the package ``python/sleepacc``: no cycle.

Every module of the package (its files, and the files of its subpackages)
is read as source (``ast``), so an import inside a function counts as much
as one at the top: a cycle through function-level imports still means that
neither module can be read without the other.  Imports under ``if
TYPE_CHECKING:`` are left out (they never run).  The compiled core
(``sleepacc._core``) has no source and imports nothing of the package.
"""
from __future__ import annotations

import ast
import os
import textwrap

PACKAGE_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "python", "sleepacc")


def _modules(root: str, package: str) -> dict:
    """{dotted module name: path} of every .py file under root (a package)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py")))
        rel = os.path.relpath(folder, root)
        prefix = package if rel == "." else package + "." + rel.replace(os.sep, ".")
        for f in sorted(files):
            if f.endswith(".py"):
                name = prefix if f == "__init__.py" else f"{prefix}.{f[:-3]}"
                out[name] = os.path.join(folder, f)
            elif f.endswith((".pyi", ".so")):   # a compiled module (its stub): no source
                out.setdefault(f"{prefix}.{f.split('.')[0]}", None)
    return out


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST):
    """Every Import and ImportFrom node, at any depth, but those that only a
    type checker runs."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                stack.extend(child.orelse)     # the else branch does run
            else:
                stack.append(child)


def import_graph(root: str, package: str) -> dict:
    """{module: set of the package's modules it imports} over root."""
    mods = _modules(root, package)

    def known(name):
        """name if it is a module of the package, else its nearest package
        that is (importing a.b.c runs a and a.b first, so a.b counts)."""
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for mod, path in mods.items():
        if path is None:          # compiled: it imports nothing of the package
            graph[mod] = set()
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        is_pkg = os.path.basename(path) == "__init__.py"
        here = mod if is_pkg else mod.rpartition(".")[0]
        edges = set()
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    base = here
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    base = f"{base}.{node.module}" if node.module else base
                else:
                    base = node.module or ""
                # "from p import x": x is the submodule p.x when there is one
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                           for a in node.names]
            for t in targets:
                if t == package or t.startswith(package + "."):
                    k = known(t)
                    if k and k != mod:
                        edges.add(k)
        graph[mod] = edges
    return graph


def cycles(graph: dict) -> list:
    """One cycle through each group of modules that import each other
    (Tarjan's strongly connected components), as [a, b, ..., a]."""
    index, low, on, stack, groups = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(set(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    out = []
    for group in groups:          # a shortest way back to the start, inside the group
        start = min(group)
        paths, seen = [[start]], {start}
        found = None
        while paths and found is None:
            nxt = []
            for p in paths:
                for w in sorted(graph[p[-1]] & group):
                    if w == start:
                        found = p + [start]
                        break
                    if w not in seen:
                        seen.add(w)
                        nxt.append(p + [w])
                if found:
                    break
            paths = nxt
        out.append(found)
    return out


def test_the_package_has_no_import_cycle():
    graph = import_graph(PACKAGE_DIR, "sleepacc")
    assert "sleepacc._api" in graph and "sleepacc.records" in graph   # it read the package
    found = [" -> ".join(c) for c in cycles(graph)]
    assert found == [], "import cycles (function-level imports included):\n  " + "\n  ".join(found)


def test_the_records_layer_imports_only_the_core():
    # the bottom layer of the record: every other module may read it
    # (a package: its modules read one another and the core, nothing else)
    graph = import_graph(PACKAGE_DIR, "sleepacc")
    layer = {m for m in graph if m == "sleepacc.records" or m.startswith("sleepacc.records.")}
    assert len(layer) > 1, sorted(graph)
    for m in sorted(layer):
        assert graph[m] <= layer | {"sleepacc._core"}, (m, graph[m] - layer)


def _package(tmp_path, files: dict) -> str:
    root = tmp_path / "pkg"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(root)


def test_a_function_level_cycle_is_found_and_named(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def f():\n    from .sub import c\n",
        "sub/__init__.py": "",
        "sub/c.py": "def g():\n    import pkg.a\n    from pkg import _fast\n",
        "_fast.pyi": "def h() -> int: ...\n",
        "d.py": ("from typing import TYPE_CHECKING\n"
                 "if TYPE_CHECKING:\n    from . import a\n"),
        "e.py": "from pkg.a import something\n",
    })
    graph = import_graph(root, "pkg")
    assert graph["pkg.b"] == {"pkg.sub.c"}
    assert graph["pkg.sub.c"] == {"pkg.a", "pkg._fast"} and graph["pkg._fast"] == set()
    assert graph["pkg.d"] == set()                 # only a type checker imports a
    assert graph["pkg.e"] == {"pkg.a"}
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.sub.c", "pkg.a"]]


def test_a_package_import_counts_as_its_init(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "from .x import y\n",
        "x.py": "def f():\n    import pkg\n",
    })
    assert cycles(import_graph(root, "pkg")) == [["pkg", "pkg.x", "pkg"]]
