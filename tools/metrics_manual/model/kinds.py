"""The kinds of expectation, and the steps of a run each one covers: one definition for every stage.

A kind (band, median, exact, presence, corridor) is a class of model/schema.py; `Expectation` is their
union, and `Span` the union of the steps a range holds at. What a stage does with a kind lives in
that stage, as one `match` over the kinds (or spans) that ends in `typing.assert_never`, so a kind
added to the union and missed by any of them is a mypy error at that line, never a silent default.
CONTRIBUTING.md ("Add a range kind") lists every such `match`; tests/model/test_kinds.py holds the
list to the package's matches, tests/project/test_types.py to mypy's errors for a toy kind. The CSV
columns are the fields of every kind (a test holds them to it); the JSON Schemas come from the classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, assert_never, get_args

from metrics_manual.model.schema import (
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
    Span,
    Window,
)

Kind = Literal["band", "median", "exact", "presence", "corridor"]
KINDS: tuple[Kind, ...] = get_args(Kind)


def numbers(e: Expectation) -> list[float]:
    """The values of `e` a drawing places on its axis (none for presence: it has no value)."""
    match e:
        case Band():
            return [float(v) for v in (e.min, e.max) if v is not None]
        case Median() | Exact():
            return [float(e.value)]
        case Presence():
            return []
        case Corridor():  # the lowest and highest it allows at any step
            return list(e.envelope)
        case _:
            assert_never(e)


def some_steps(span: Span) -> str | None:
    """The steps `span` holds at, in words, when a view that knows no step (a chart over time)
    cannot tell them; None when it holds at every step."""
    match span:
        case Window():
            return "a window of the first steps"
        case FirstSteps(count=n):  # drawn or alerted at every step, it would judge later steps against it
            return f"only the first {n} steps"
        case AtStep():
            return "one step"
        case ListedSteps(steps=steps):
            return f"the {len(steps):,} steps of its reference, each with its own bounds"
        case EveryStep():
            return None
        case _:
            assert_never(span)


def keeps_warm_up(span: Span) -> bool:
    """Whether the steps of `span` include a run's warm-up steps: a window does, it covers exactly them; so
    does a reference's steps, which leave a warm-up out by leaving it out of the reference."""
    match span:
        case Window() | ListedSteps():
            return True
        case FirstSteps() | AtStep() | EveryStep():
            return False
        case _:
            assert_never(span)


def covered_steps(span: Span, steps: Sequence[int], warm_up: int = 0) -> tuple[list[int], int]:
    """The steps of a run (`steps`, in order) that `span` covers, and how many it expects.

    The first `warm_up` of `steps` are left out unless the span keeps them (a window). `judge`
    slices the steps of the metric's step key the run reached; `derive` the steps a metric was
    logged at; `check` re-judges a derived range on the same steps it was derived from.
    """
    covered: Sequence[int]
    match span:
        case Window(first=n) | FirstSteps(count=n):
            covered, expected = steps[:n], n
        case AtStep(step=n):
            covered, expected = [n], 1
        case ListedSteps(steps=listed):  # each step the reference has, reached by the run or not (as AtStep)
            covered, expected = listed, len(listed)
        case EveryStep():
            covered, expected = steps, len(steps)
        case _:
            assert_never(span)
    if warm_up and not keeps_warm_up(span):
        skipped = set(steps[:warm_up])
        return [s for s in covered if s not in skipped], expected
    return list(covered), expected
