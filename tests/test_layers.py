"""Layers point one way: no module of the package imports, directly or through others, a module that imports
it back (what is imported inside a function counts too, and a submodule import counts its package)."""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "xlakb"


def import_graph() -> dict[str, set[str]]:
    mods = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = p
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("xlakb"):
                continue
            for cand in [target] + [f"{target}.{a.name}" for a in node.names]:
                if cand in mods and cand != name:
                    edges[name].add(cand)
            parts = target.split(".")
            for i in range(2, len(parts)):  # importing a.b.c runs a.b's __init__ too
                package = ".".join(parts[:i])
                if package in mods and package != name and not name.startswith(package + "."):
                    edges[name].add(package)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_records_are_data_and_environments_know_nothing_of_candidates():
    edges = import_graph()

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for w in edges.get(todo.pop(), ()):
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return seen

    assert not reach("xlakb.records") & {"xlakb.triage", "xlakb.matrix", "xlakb.runner", "xlakb.results"}
    assert not {m for m in reach("xlakb.envs") if m.startswith("xlakb.candidates")}
    assert "xlakb.candidates" not in reach("xlakb.bisection.engine")


def test_the_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
