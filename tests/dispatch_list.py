"""The dispatches over range kinds and spans that CONTRIBUTING.md lists, and the ones the package holds.

CONTRIBUTING.md's table ("Add a range kind") is the one list: tests/model/test_kinds.py holds it to the
`match` statements of the package, tests/project/test_types.py to what mypy flags for a toy kind.
"""

from __future__ import annotations

import ast
import re
from typing import get_args

from conftest import REPO
from metrics_manual.model import schema

PACKAGE = REPO / "tools" / "metrics_manual"
_ROW = re.compile(r"^\| `([\w/]+\.py)` \| `(\w+)` \|", re.M)


def listed() -> set[tuple[str, str]]:
    """(module under tools/metrics_manual/, function) for each row of CONTRIBUTING.md's table of dispatches."""
    text = (REPO / "CONTRIBUTING.md").read_text("utf-8")
    section = text.split("## Add a range kind", 1)[1].split("\n## ", 1)[0]
    return {(m.group(1), m.group(2)) for m in _ROW.finditer(section)}


def _classes() -> set[str]:
    """The names of the kinds (the members of Expectation) and of the spans (the members of Span)."""
    kinds = get_args(get_args(schema.Expectation)[0])
    return {cls.__name__ for cls in (*kinds, *get_args(schema.Span))}


def _over(pattern: ast.pattern, names: set[str]) -> bool:
    """Whether a case's pattern matches a kind or span class, anywhere in it."""
    return any(
        isinstance(p, ast.MatchClass) and isinstance(p.cls, ast.Name) and p.cls.id in names for p in ast.walk(pattern)
    )


def in_package() -> set[tuple[str, str]]:
    """(module, function) for each function of the package holding a `match` with a case over a kind or a span."""
    names = _classes()
    found: set[tuple[str, str]] = set()

    def visit(node: ast.AST, module: str, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, module, child.name)
                continue
            if isinstance(child, ast.Match) and function and any(_over(c.pattern, names) for c in child.cases):
                found.add((module, function))
            visit(child, module, function)

    for path in sorted(PACKAGE.rglob("*.py")):
        visit(ast.parse(path.read_text("utf-8")), path.relative_to(PACKAGE).as_posix(), None)
    return found


def ends_in_assert_never(module: str, function: str) -> bool:
    """Whether `function` of `module` calls typing.assert_never (its match is exhaustive over its argument's type)."""
    tree = ast.parse((PACKAGE / module).read_text("utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            calls = [c.func for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)]
            return any(f.id == "assert_never" for f in calls)
    return False
