"""One place per kind: the steps each kind covers, and mypy rejecting a kind some dispatch misses."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from conftest import REPO
from metrics_manual.exports.formats import CSV_COLUMNS
from metrics_manual.model.kinds import KINDS, covered_steps, keeps_warm_up
from metrics_manual.model.schema import (
    AtStep,
    Band,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    Median,
    Presence,
    Window,
)

STEPS = [0, 1, 2, 3, 4, 5, 6, 7]


def _kinds() -> tuple[type[Band | Median | Exact | Presence], ...]:
    return get_args(get_args(Expectation)[0])


def test_kind_names_are_the_union_s_tags() -> None:
    assert KINDS == tuple(cls.model_fields["kind"].annotation.__args__[0] for cls in _kinds())


def test_every_field_of_every_kind_has_a_csv_column() -> None:
    # to_csv writes the columns it knows: a field of a new kind without one would be dropped silently.
    for cls in _kinds():
        for name in cls.model_fields:
            assert any(col == name or col.startswith(f"{name}_") for col in CSV_COLUMNS), (cls.__name__, name)


@pytest.mark.parametrize(
    ("e", "covered", "expected"),
    [
        (Band(kind="band", min=0, window=Window(first=3)), [0, 1, 2], 3),  # a window keeps the warm-up
        (Band(kind="band", min=0, steps=5), [2, 3, 4], 5),
        (Band(kind="band", min=0), [2, 3, 4, 5, 6, 7], 8),
        (Median(kind="median", value=1, steps=4), [2, 3], 4),
        (Exact(kind="exact", value=0, at=AtStep(step=6)), [6], 1),
        (Exact(kind="exact", value=0, at=AtStep(step=1)), [], 1),  # its one step is warm-up
        (Exact(kind="exact", value=0, at="every_run"), [2, 3, 4, 5, 6, 7], 8),
        (Presence(kind="presence"), [2, 3, 4, 5, 6, 7], 8),
    ],
)
def test_covered_steps_less_two_warm_up_steps(e: Expectation, covered: list[int], expected: int) -> None:
    assert covered_steps(e.span, STEPS, warm_up=2) == (covered, expected)


def test_without_warm_up_a_span_covers_its_steps_of_the_run() -> None:
    assert covered_steps(FirstSteps(3), [10, 20, 30, 40]) == ([10, 20, 30], 3)
    assert covered_steps(Window(first=9), [10, 20]) == ([10, 20], 9)  # a short run: fewer than expected
    assert covered_steps(EveryStep(), []) == ([], 0)
    assert [keeps_warm_up(s) for s in (Window(first=1), FirstSteps(1), AtStep(step=0), EveryStep())] == [
        True,
        False,
        False,
        False,
    ]


# --- the checker enforces it -------------------------------------------------------------

# A toy kind and a toy span added to a copy of the package: mypy must flag every dispatch that
# misses them, at its assert_never. A dispatch that falls through to a default drops out of the
# list and fails this test; a new dispatch over kinds belongs in it.
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


Span = Window | FirstSteps | AtStep | EveryStep | LastSteps
'''
FLAGGED = {
    ("model/kinds.py", "numbers"),
    ("model/kinds.py", "keeps_warm_up"),
    ("model/kinds.py", "covered_steps"),
    ("model/phrase.py", "describe"),
    ("site/draw.py", "_kind_words"),
    ("site/draw.py", "_legend_key"),
    ("site/draw.py", "_range_mark"),
    ("site/draw.py", "_outside"),
    ("site/draw.py", "_expected_mark"),
    ("judge/rules.py", "rule"),
    ("derive/stats.py", "_outcome"),
    ("exports/formats.py", "why_no_alert_rule"),
    ("exports/formats.py", "_alert"),
    ("exports/grafana.py", "drawable"),
    ("history/diff.py", "parts"),
}


def _with_toys(schema: str) -> str:
    span = "Span = Window | FirstSteps | AtStep | EveryStep\n"
    union = "Expectation = Annotated[Band | Median | Exact | Presence, "
    assert schema.count(span) == 1 and schema.count(union) == 1, "schema.py changed: update the toys"
    schema = schema.replace(span, TOY_SPAN.lstrip("\n"))
    return schema.replace(union, TOY_KIND.lstrip("\n") + "\n\n" + union.replace("Presence,", "Presence | Toy,"))


def _enclosing_def(lines: list[str], line: int) -> str:
    for text in reversed(lines[:line]):
        if m := re.match(r"def (\w+)", text):
            return m.group(1)
    return "?"


@pytest.mark.slow
def test_mypy_rejects_a_kind_or_span_that_a_dispatch_misses(tmp_path: Path) -> None:
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
    assert flagged == FLAGGED, result.stdout
