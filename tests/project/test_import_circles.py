"""No two modules of the package import each other, directly or round a longer circle, counting the imports
made inside functions too: a circle is a module with two jobs, or a job split in the wrong place."""

from __future__ import annotations

import ast
import graphlib

from conftest import REPO

PACKAGE = REPO / "tools" / "metrics_manual"


def imports() -> dict[str, set[str]]:
    """Each module of the package -> the modules of the package it imports (anywhere in it)."""
    modules = {
        ".".join(("metrics_manual", *f.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__"): f
        for f in PACKAGE.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
        graph[name] = {m for m in found & modules.keys() if m != name and not name.startswith(m + ".")}
    return graph


def test_no_import_circle() -> None:
    graph = imports()
    assert "metrics_manual.exports.grafana" in graph["metrics_manual.exports.formats"]  # the walk sees lazy imports
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        raise AssertionError(f"an import circle: {' -> '.join(err.args[1])}") from None
