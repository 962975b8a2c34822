"""The package's imports run one way, counting the imports made inside functions too.

No two modules import each other, directly or round a longer circle: a circle is a module with two
jobs, or a job split in the wrong place. And the sub-packages stand in layers, as the README draws
them: a module imports only from its own sub-package and from the layers below, so the data flows
one way (a climb, or an import between two sub-packages of one layer, fails here)."""

from __future__ import annotations

import ast
import graphlib
import re

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


def readme_layers() -> list[list[str]]:
    """The README's picture of the layers, top to bottom: each line's sub-packages and top-level modules."""
    text = (REPO / "README.md").read_text("utf-8")
    block = re.search(r"never import each other\n.*?```\n(.*?)```", text, re.S)
    assert block, "README.md lost its picture of the layers"
    layers = []
    for line in block.group(1).splitlines():
        names = re.match(r"((?:[\w.]+/?\s{1,2})+)", line + "  ")
        assert names, f"README: not a layer: {line!r}"
        layers.append([n.removesuffix("/").removesuffix(".py") for n in names.group(1).split()])
    return layers


def stage(module: str) -> str:
    """metrics_manual.judge.rules -> judge; metrics_manual.text -> text."""
    return module.split(".")[1]


def test_no_import_circle() -> None:
    graph = imports()
    assert "metrics_manual.build" in graph["metrics_manual.cli.project"]  # the walk sees lazy imports
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        raise AssertionError(f"an import circle: {' -> '.join(err.args[1])}") from None


def test_the_readme_names_every_stage_once() -> None:
    layers = readme_layers()
    named = [s for layer in layers for s in layer]
    stages = {stage(m) for m in imports() if m != "metrics_manual"}
    assert sorted(named) == sorted(stages), "the README's layers and the package's sub-packages differ"


def climbs(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """The imports of `graph` that do not run down `layers` (top to bottom)."""
    level = {s: depth for depth, layer in enumerate(reversed(layers)) for s in layer}
    return [
        f"{m} imports {i} ({stage(m)} is layer {level[stage(m)]}, {stage(i)} layer {level[stage(i)]})"
        for m, targets in sorted(graph.items())
        if m != "metrics_manual"
        for i in sorted(targets)
        if stage(i) != stage(m) and level[stage(i)] >= level[stage(m)]
    ]


def test_imports_never_climb_a_layer() -> None:
    found = climbs(imports(), readme_layers())
    assert not found, "imports that do not run down the README's layers:\n" + "\n".join(found)


def test_a_climb_and_a_sideways_import_are_found() -> None:
    layers = [["cli"], ["judge", "site"], ["model"]]
    graph = {
        "metrics_manual.cli.main": {"metrics_manual.judge.rules", "metrics_manual.model.schema"},
        "metrics_manual.judge.rules": {"metrics_manual.site.draw", "metrics_manual.judge.verdict"},
        "metrics_manual.model.schema": {"metrics_manual.cli.main"},
    }
    assert [c.split(" (")[0] for c in climbs(graph, layers)] == [
        "metrics_manual.judge.rules imports metrics_manual.site.draw",
        "metrics_manual.model.schema imports metrics_manual.cli.main",
    ]
