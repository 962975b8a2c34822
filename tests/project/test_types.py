"""The package type-checks: public functions carry types, and mypy holds them to it, down to a kind that
some dispatch misses."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import dispatch_list
from conftest import REPO

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def checked() -> subprocess.CompletedProcess[str]:
    """mypy's run on the package as a user runs it (its cache in the repository's .mypy_cache)."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "tools/metrics_manual"], cwd=REPO, capture_output=True, text=True
    )


def test_mypy_passes_on_the_package(checked: subprocess.CompletedProcess[str]) -> None:
    assert checked.returncode == 0, checked.stdout + checked.stderr


# --- the checker enforces it -------------------------------------------------------------

# A toy kind and a toy span added to a copy of the package: mypy must flag every dispatch that
# misses them, at its assert_never, and those are the dispatches CONTRIBUTING.md lists ("Add a range
# kind"; tests/dispatch_list.py reads it). A dispatch that falls through to a default drops out and
# fails this test; a new one that CONTRIBUTING.md does not list fails it too. A listed match over
# some kinds only (its argument's type) is not flagged, and ends in assert_never all the same.
TOY_KIND = '''

class Toy(_Expectation):
    """A toy kind: nothing handles it."""

    kind: Literal["toy"] = Field(description="A toy.")

    @property
    def span(self) -> Span:
        return EveryStep()
'''
TOY_SPAN = '''

@dataclass(frozen=True)
class LastSteps:
    """A toy span: nothing handles it."""

    count: int


Span = Window | FirstSteps | AtStep | EveryStep | ListedSteps | LastSteps
'''


def _with_toys(schema: str) -> str:
    span = "Span = Window | FirstSteps | AtStep | EveryStep | ListedSteps\n"
    union = "Expectation = Annotated[Band | Median | Exact | Presence | Corridor, "
    assert schema.count(span) == 1 and schema.count(union) == 1, "schema.py changed: update the toys"
    schema = schema.replace(span, TOY_SPAN.lstrip("\n"))
    return schema.replace(union, TOY_KIND.lstrip("\n") + "\n\n" + union.replace("Corridor,", "Corridor | Toy,"))


def _enclosing_def(lines: list[str], line: int) -> str:
    for text in reversed(lines[:line]):
        if m := re.match(r"def (\w+)", text):
            return m.group(1)
    return "?"


def test_mypy_rejects_a_kind_or_span_that_a_dispatch_misses(
    checked: subprocess.CompletedProcess[str], tmp_path: Path
) -> None:
    # From the package's cache (typeshed, pydantic, the modules the toys leave alone): 3.5 s cold, 1.1 s so.
    shutil.copytree(REPO / ".mypy_cache", tmp_path / "cache")
    package = tmp_path / "metrics_manual"
    shutil.copytree(REPO / "tools" / "metrics_manual", package, ignore=shutil.ignore_patterns("__pycache__"))
    schema = package / "model" / "schema.py"
    schema.write_text(_with_toys(schema.read_text("utf-8")), "utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "metrics_manual",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    flagged = set()
    for m in re.finditer(r"^metrics_manual/(\S+?):(\d+): error: .*\"assert_never\".*$", result.stdout, re.M):
        lines = (package / m.group(1)).read_text("utf-8").splitlines()
        flagged.add((m.group(1), _enclosing_def(lines, int(m.group(2)))))
    listed = dispatch_list.listed()
    assert flagged <= listed, (flagged - listed, result.stdout)
    for module, function in listed - flagged:
        assert dispatch_list.ends_in_assert_never(module, function), (module, function, result.stdout)
