"""The lower layers of the package sit in no import cycle: records, the
model (every room of it) and report import nothing that imports them back,
function-level imports included (an import inside a function is an edge
too: it only hides the cycle until that function runs)."""
import ast
import pathlib

import sleepacc

PKG = pathlib.Path(sleepacc.__file__).resolve().parent
LOWER = ("sleepacc.records", "sleepacc.model", "sleepacc.report")


def _modules():
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _graph(mods):
    """{module: modules it imports}, every import statement of its file."""
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[mod].update(a.name for a in node.names if a.name in mods)
            elif isinstance(node, ast.ImportFrom):
                base = (here[: len(here) - node.level + 1] if node.level else [])
                target = ".".join(base + ([node.module] if node.module else []))
                for a in node.names:
                    name = f"{target}.{a.name}"
                    if name == "sleepacc._core":   # the compiled core: below everything
                        continue
                    dest = name if name in mods else target
                    if dest in mods and dest != mod:
                        graph[mod].add(dest)
    return graph


def _reaches(graph, start, goal):
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        for n in graph[m]:
            if n == goal:
                return True
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return False


def test_the_lower_layers_are_in_no_import_cycle():
    mods = _modules()
    graph = _graph(mods)
    lower = [m for m in mods if m.startswith(LOWER)]
    assert "sleepacc.model.results" in lower and "sleepacc.records.rows" in lower
    cycles = [m for m in lower if _reaches(graph, m, m)]
    assert not cycles, cycles


def test_the_model_asks_the_core_not_the_api():
    graph = _graph(_modules())
    for mod, deps in graph.items():
        if mod.startswith("sleepacc.model"):
            assert "sleepacc._api" not in deps and "sleepacc" not in deps, (mod, deps)
