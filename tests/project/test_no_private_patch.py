"""No test patches a private name (CONTRIBUTING): a test that reaches past a module's public names holds
its inside in place, and breaks on a refactor that changes nothing a user sees."""

from __future__ import annotations

import ast

from conftest import REPO


def private_patches(source: str) -> list[int]:
    """The lines of `source` where setattr / patch / patch.object is given a private name (one `_`, not a dunder)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in {"setattr", "patch", "object", "delattr"}:
            continue
        for arg in node.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                last = arg.value.rpartition(".")[2]
                if last.startswith("_") and not last.startswith("__"):
                    found.append(node.lineno)
    return found


def test_no_test_patches_a_private_name() -> None:
    hits = [
        f"{path.relative_to(REPO)}:{line}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for line in private_patches(path.read_text("utf-8"))
    ]
    assert not hits, "tests that patch a private name: " + ", ".join(hits)


def test_a_private_patch_is_found() -> None:
    source = 'monkeypatch.setattr(mod, "_blob", f)\nmonkeypatch.setattr(builtins, "__import__", g)\npatch("a.b._c")\n'
    assert private_patches(source) == [1, 3]
