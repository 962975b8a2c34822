"""How a number and a range read in words: one place, used by pages, exports, alerts and verdicts.

Below render (Markdown pages) and export (files for tools): both phrase ranges the
same way because both call this module.
"""

from __future__ import annotations

import decimal
import math
from collections.abc import Callable, Iterable
from typing import Any, assert_never

from metrics_manual.model.schema import AtStep, Band, Corridor, Exact, Expectation, Median, Presence

_WORDS = "zero one two three four five six seven eight nine".split()
# Outside this range of magnitudes a decimal grows long, so it reads in scientific form (1e-07, 1e+308).
_DECIMAL_FROM, _DECIMAL_BELOW = 1e-6, 1e15


def num(value: int | float) -> str:
    """A number as people read it: the shortest digits that read back to the same value.

    Whole values lose their fraction (310.0 -> 310), digits before the point are grouped
    from 1,000 on, and float magnitudes below 1e-6 or from 1e15 on read in scientific form
    (1e-7, 1e+308) instead of as dozens of digits; an int keeps every digit.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int):  # a step or a count: every digit (2**62 is no 4.611686018427388e+18)
        return f"{value:,}"
    if value != 0 and not _DECIMAL_FROM <= abs(value) < _DECIMAL_BELOW:
        return format(decimal.Decimal(repr(float(value))).normalize(), "e")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = repr(value) if isinstance(value, float) else str(value)
    if "e" in text:  # repr writes 1e-05 for small decimals
        text = format(decimal.Decimal(text), "f")
    sign, text = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, dot, fraction = text.partition(".")
    return f"{sign}{int(whole):,}{dot}{fraction}"


MEASURED_DIGITS = 4  # significant digits of a value read from a run (the manual's numbers have 2 to 4)


def count_steps(n: int) -> str:
    """How many steps, in words: "1 step", "1,000 steps"."""
    return f"{num(n)} step{'s' if n != 1 else ''}"


def measured(value: float, near: Iterable[float] = ()) -> str:
    """A value read from a run, as `num` writes it, at MEASURED_DIGITS significant digits: a median of
    0.123456789012 reads 0.1235. More digits where fewer would read as one of `near` (the range's own
    numbers) while the value differs from it: 4.9500001 against a maximum of 4.95 reads 4.9500001."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return num(value) if isinstance(value, (int, float)) and math.isfinite(value) else str(value)
    refs = [float(n) for n in near]
    whole = len(str(int(abs(value)))) if abs(value) < _DECIMAL_BELOW else 0  # the whole part stays whole
    for digits in range(max(MEASURED_DIGITS, whole), 18):
        rounded = float(f"{value:.{digits}g}")
        if all(rounded != n or value == n for n in refs):
            return num(rounded)
    return num(value)


def words(n: int) -> str:
    """Small counts in words, as prose writes them (two steps); larger ones as numbers."""
    return _WORDS[n] if 0 <= n < len(_WORDS) else num(n)


def plain(text: Any) -> str:
    """Text from the source on one line, as it is: for plain-text outputs."""
    return " ".join(str(text).split())


# How a unit reads after a number; any other unit reads as written (0.63 s, 396 tokens).
# A share or ratio says what it is, so nobody reads 0.43 as a percent.
FRACTION = "fraction"
_UNIT_AFTER_NUMBER = {FRACTION: "(fraction of 1)"}


def unit_after_number(unit: str | None, text: Callable[[Any], str] = plain) -> str:
    """The words after a number of this unit, with their leading space ('' without a unit)."""
    if not unit:
        return ""
    return " " + _UNIT_AFTER_NUMBER.get(unit, text(unit))


def unit_name(unit: str | None) -> str | None:
    """What a metric's unit is, in words, for the line that names it (None without a unit)."""
    return "fraction, from 0 to 1" if unit == FRACTION else unit


def describe(e: Expectation, unit: str | None, text: Callable[[Any], str] = plain, *, sources: bool = False) -> str:
    """One expectation in words, as pages, exports, alerts, drawings and verdicts show it.

    Always in one order: the number(s) and unit, the statistic (per step, median of N
    steps, exact at a step, logged every step, per step around a reference curve), the window
    or the reference's steps, then the condition. A reader
    who compares two lines finds each part in the same place. The profile is not part of
    it: pages label each line with its profile. With `sources`, the ids of the
    expectation's sources follow in brackets (for exports, which have no provenance tags).

    `text` renders words from the source: `markdown.literal` for Markdown, `plain` for plain
    text. Python, not a Jinja macro: it runs once per range on every page and export, and
    a macro call costs ten times as much.
    """
    u = unit_after_number(unit, text)
    match e:
        case Band():
            if e.min is not None and e.max is not None:
                out = f"{num(e.min)} to {num(e.max)}{u}"
            else:
                out = f"at least {num(e.min)}{u}" if e.min is not None else f"at most {num(e.max)}{u}"  # type: ignore[arg-type]
            out += " per step"
            if e.window:
                out += f" in the first {num(e.window.first)}" + (f" of {num(e.steps)}" if e.steps else "") + " steps"
            elif e.steps:
                out += f" over {num(e.steps)} steps"
        case Median():
            out = f"{num(e.value)}{u} median of {num(e.steps)} steps"
            if e.tolerance is not None:
                out += f" within {num(round(e.tolerance * 100, 10))}%"
        case Exact():
            at = e.at
            where = (
                f"at step {num(at.step)}"
                if isinstance(at, AtStep)
                else ("at every step" if at == "every_step" else "in every run")
            )
            out = f"{num(e.value)}{u} {where}"
        case Presence():
            out = "logged in every step"
        case Corridor():
            out = corridor_words(e, u)
        case _:
            assert_never(e)
    if e.condition:
        out += f", {text(e.condition)}"
    if sources and e.sources:
        out += f" (source: {', '.join(e.sources)})"
    return out


def percent(share: float) -> str:
    """A share as a percent: 0.1 -> 10%."""
    return f"{num(round(share * 100, 10))}%"


def corridor_side(rel: float | None, floor: float | None, u: str) -> str:
    """How far one side of a corridor reaches from its reference: 10%, 0.05, or 10% (at least 0.05)."""
    if rel is not None and floor is not None:
        return f"{percent(rel)} (at least {num(floor)}{u})"
    return percent(rel) if rel is not None else f"{num(floor)}{u}"  # type: ignore[arg-type]


def reference_steps(e: Corridor) -> str:
    """A reference's steps in words: "its 100 steps, 0 to 99" (in a row), "its 10 steps from 0 to 90"."""
    points = e.reference.points
    (first, _), (last, _) = points[0], points[-1]
    if len(points) == 1:
        return f"its one step, {num(first)}"
    row = "," if last - first + 1 == len(points) else " from"
    return f"its {num(len(points))} steps{row} {num(first)} to {num(last)}"


def corridor_words(e: Corridor, u: str) -> str:
    """A corridor in words: how far each side reaches, over which steps, and its reference."""
    up, down = corridor_side(e.rel_up, e.abs_floor_up, u), corridor_side(e.rel_down, e.abs_floor_down, u)
    band = f"within {up} of" if up == down else f"from {down} below to {up} above"
    points = e.reference.points
    ends = [v for _, v in (points[0], points[-1])]
    shape = f"from {measured(ends[0])} to {measured(ends[1])}" if len(points) > 1 else f"at {measured(ends[0])}"
    smooth = f", a rolling median of {num(e.reference.rolling_median)} steps" if e.reference.rolling_median else ""
    return f"{band} a reference curve per step over {reference_steps(e)} ({shape}{smooth}; source {e.reference.source})"


def describe_all(
    expectations: list[Expectation], unit: str | None, text: Callable[[Any], str] = plain, *, sources: bool = False
) -> str:
    """A metric's expectations on one profile, or 'no range'."""
    return "; ".join(describe(e, unit, text, sources=sources) for e in expectations) or "no range"
