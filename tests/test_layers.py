"""Imports point down the layers only; no modules of ``stats/`` import each other in a circle.

Every ``import`` statement of every module is read (those inside functions too),
so a lazy import cannot hide an upward arrow. ``python tests/test_layers.py``
prints the import graph between packages, each arrow with its layers.
"""

import ast
import importlib
from pathlib import Path

import pytest

import vareval

SRC = Path(vareval.__file__).resolve().parent

# Lower number = lower layer. A module may import from its own layer or below.
LAYERS = {
    "vareval.errors": 0,
    "vareval._format": 0,
    "vareval._moved": 0,
    "vareval._interrupts": 0,
    "vareval.plots": 1,
    "vareval.stats": 2,
    "vareval.data": 3,
    "vareval.datasets": 3,
    "vareval.experiment": 4,
    "vareval.report": 5,
    "vareval.cli": 5,
    "vareval.__main__": 5,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def imports_of(path: Path) -> set[str]:
    """The vareval modules that ``path`` names in an import, anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("vareval")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vareval"):
            for alias in node.names:  # `from pkg import module` names the module itself
                sub = f"{node.module}.{alias.name}"
                found.add(sub if is_module(sub) else node.module)
    return found


def layer(name: str) -> int | None:
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len, default=None)
    return LAYERS[best] if best else None


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(SRC.rglob("*.py"))}


def test_every_module_has_a_layer():
    assert [m for m in graph() if m != "vareval" and layer(m) is None] == []


def test_no_import_points_up_a_layer():
    upward = [
        f"{m} -> {t}"
        for m, targets in graph().items()
        if m != "vareval"  # the package root re-exports every layer, lazily
        for t in targets
        if t != "vareval" and layer(t) > layer(m)
    ]
    assert upward == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_inside_stats():
    stats = {
        m: {t for t in ts if t.startswith("vareval.stats") and t != m}
        for m, ts in graph().items()
        if m.startswith("vareval.stats")
    }
    assert cycles(stats) == []


def test_the_circle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("package", ["vareval", "vareval.stats"])
def test_every_public_name_imports(package):
    module = importlib.import_module(package)
    missing = [n for n in module.__all__ if getattr(module, n, None) is None]
    assert missing == []


def test_old_module_paths_warn_and_give_the_new_module():
    from vareval._moved import MOVED

    for old, new in MOVED.items():
        with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
            assert importlib.import_module(old) is importlib.import_module(new)


def package(name: str) -> str:
    """The layer's package of ``name``; inside ``stats`` its question's package."""
    if name.startswith("vareval.stats."):
        return ".".join(name.split(".")[:3])
    return max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len)


if __name__ == "__main__":
    arrows = {}
    for m, targets in graph().items():
        for t in targets - {"vareval"}:
            a, b = package(m) if m != "vareval" else None, package(t)
            if a and a != b:
                arrows[(a, b)] = arrows.get((a, b), 0) + 1
    for (a, b), n in sorted(arrows.items()):
        mark = "UP" if layer(b) > layer(a) else "  "
        print(f"{mark} {a} (layer {layer(a)}) -> {b} (layer {layer(b)}): {n} imports")
