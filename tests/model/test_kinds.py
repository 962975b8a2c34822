"""One place per kind: the steps each kind covers, and the list of every dispatch over the kinds
(tests/project/test_types.py: mypy rejecting a kind some dispatch misses)."""

from __future__ import annotations

from typing import get_args

import pytest

import dispatch_list
from metrics_manual.exports.csv_table import CSV_COLUMNS
from metrics_manual.model.kinds import KINDS, covered_steps, keeps_warm_up
from metrics_manual.model.schema import (
    EXPECTATION,
    AtStep,
    Band,
    Corridor,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    ListedSteps,
    Median,
    Presence,
    Window,
)

STEPS = [0, 1, 2, 3, 4, 5, 6, 7]


def _kinds() -> tuple[type[Band | Median | Exact | Presence | Corridor], ...]:
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
        # A reference's steps, whatever the run reached, its own first steps kept: the reference leaves out a warm-up.
        (
            EXPECTATION.validate_python(
                {
                    "kind": "corridor",
                    "reference": {"source": "r", "points": [[1, 0], [3, 0], [9, 0]]},
                    "rel_up": 0.1,
                    "rel_down": 0.1,
                }
            ),
            [1, 3, 9],
            3,
        ),
    ],
)
def test_covered_steps_less_two_warm_up_steps(e: Expectation, covered: list[int], expected: int) -> None:
    assert covered_steps(e.span, STEPS, warm_up=2) == (covered, expected)


def test_without_warm_up_a_span_covers_its_steps_of_the_run() -> None:
    assert covered_steps(FirstSteps(3), [10, 20, 30, 40]) == ([10, 20, 30], 3)
    assert covered_steps(Window(first=9), [10, 20]) == ([10, 20], 9)  # a short run: fewer than expected
    assert covered_steps(EveryStep(), []) == ([], 0)
    assert [
        keeps_warm_up(s) for s in (Window(first=1), FirstSteps(1), AtStep(step=0), EveryStep(), ListedSteps((0, 1)))
    ] == [True, False, False, False, True]


def test_contributing_lists_every_match_over_the_kinds() -> None:
    """A `match` over the kinds or spans that CONTRIBUTING.md does not list fails, and so does a listed one that is gone."""
    listed, found = dispatch_list.listed(), dispatch_list.in_package()
    assert ("model/kinds.py", "covered_steps") in found  # the walk finds matches over spans and over kinds
    assert ("judge/rules.py", "rule") in found
    assert found - listed == set(), "a match over the kinds that CONTRIBUTING.md's table does not list"
    assert listed - found == set(), "CONTRIBUTING.md lists a dispatch that holds no match over the kinds"
