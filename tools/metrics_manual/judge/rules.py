"""The rules: how one metric's values at the steps an expectation covers are judged, one function
per kind of expectation (the words of docs/judging.md):

- band: every value at the steps it covers lies in [min, max], bounds included; a window
  covers the run's first N steps, `steps` the first N;
- median: the median of the run's values at the steps it covers is within a relative
  tolerance of the value: the expectation's own, else --rtol;
- exact: every value (or the value at that step) equals the stated value;
- presence: the metric is logged at every step of its step key that the run reached;
- corridor: every value at a step of the reference lies from ref - max(rel_down * |ref|,
  abs_floor_down) to ref + max(rel_up * |ref|, abs_floor_up), bounds included, `ref` the
  reference's value at that step (Miles' metric-history gate: tests/ci/metric_history).

Which steps a rule is given and what makes a pass unearned before any rule are judge/steps.py and
judge/unearned.py; judge/judging.py holds a run against a profile with them. A rule says
(docs/judging.md states them in these words):

- float32: values read from a form that stores float32 (TensorBoard) are compared with the
  expectation's numbers rounded to float32, so a value equal to a bound (to the exact value, to
  an end of a median's tolerance) to float32 precision is at it; the result says so (precision
  float32) and names the values that passed only so.
"""

from __future__ import annotations

import math
import statistics
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import compress
from typing import Literal, assert_never

from metrics_manual.judge.verdict import Observed, Point, Verdict
from metrics_manual.model.phrase import measured, num
from metrics_manual.model.schema import AtStep, Band, Corridor, Exact, Expectation, Median, Presence
from metrics_manual.runs.series import Series
from metrics_manual.runs.steps import named_steps


@dataclass
class Case:
    """One metric of the run against one expectation: the steps it covers, with excluded ones dropped."""

    key: str
    e: Expectation
    values: Mapping[int, float]
    covered: list[int]
    expected_count: int
    rtol: float
    float32: bool = False  # the values were read from a form that stores float32: compared at its precision

    def __post_init__(self) -> None:
        # At C speed: a long run has 100,000 steps. Most often a metric is logged at each step it covers.
        series = self.values if isinstance(self.values, Series) else None
        steps: list[int] | None = list(series) if series is not None and len(series) == len(self.covered) else None
        if steps is not None and steps == self.covered:
            logged, logged_values = steps, list(self.values.values())
        else:  # a Series finds a step by bisection: for many steps a dict of it, built at C speed, is faster
            few = series is not None and len(self.covered) * 16 < len(series)  # a window of a long run
            values = series.as_dict() if series is not None and not few else self.values
            logged = list(filter(values.__contains__, self.covered))
            logged_values = list(map(values.__getitem__, logged))
        self.logged, self.logged_values = logged, logged_values  # the covered steps logged, their values
        self._points: list[tuple[int, float]] | None = None
        self._observed: tuple[Observed, bool] | None = None

    @property
    def points(self) -> list[tuple[int, float]]:
        """(step, value) at the covered steps logged; made when a rule lists them."""
        if self._points is None:
            self._points = list(zip(self.logged, self.logged_values))
        return self._points

    def observed(self) -> tuple[Observed, bool]:
        """What its points show, and whether each value is finite (once: two rules ask)."""
        if self._observed is None:
            self._observed = observed_finite(self.logged, self.logged_values)
        return self._observed


def point(step: int, value: float | None) -> Point:
    """A step and its value as the verdict shows it (NaN, Infinity, -Infinity: as words)."""
    if value is None or math.isfinite(value):
        return Point(step=step, value=value)
    return Point(step=step, value="NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity")


def observed_finite(steps: list[int], values: list[float]) -> tuple[Observed, bool]:
    """The points' finite values summed up (the first step of the least and of the greatest), and
    whether every value is finite. At C speed: a metric of a long run has 100,000 points."""
    count = len(values)
    every = math.isfinite(sum(values)) or all(map(math.isfinite, values))  # a sum of finite values stays finite
    if not every:
        finite = list(map(math.isfinite, values))
        steps, values = list(compress(steps, finite)), list(compress(values, finite))
    if not values:
        return Observed(count=count), every
    lo, hi = min(values), max(values)
    return (
        Observed(
            min=lo,
            max=hi,
            median=statistics.median(values),
            count=count,
            min_step=steps[values.index(lo)],
            max_step=steps[values.index(hi)],
        ),
        every,
    )


def steps_of(c: Case, n: int) -> str:
    """`n` of the steps `c` expects, in words: "3 of 10 steps"."""
    return f"{num(n)} of {num(c.expected_count)} steps"


Failing = list[tuple[int, float | None]]  # (step, value; None: not logged), light for runs failing everywhere


Tolerance = tuple[float, Literal["profile", "rtol"]] | None
RuleOutcome = tuple[Verdict, Failing, str, Tolerance]  # verdict, failing steps, what was observed, median's tolerance


def listed(points: Failing, near: list[float], most: int = 5) -> str:
    def one(p: tuple[int, float | None]) -> str:
        value = point(*p).value
        shown = "not logged" if value is None else value if isinstance(value, str) else measured(value, near)
        return f"step {num(p[0])}: {shown}"

    text = ", ".join(one(p) for p in points[:most])
    return text + (f" and {len(points) - most} more" if len(points) > most else "")


def f32(value: float) -> float:
    """`value` rounded to the nearest float32, as a form that stores float32 keeps it (past float32's
    range: as it is, no float32 comes near it)."""
    try:
        rounded: float = _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return value
    return value if math.isinf(rounded) and not math.isinf(value) else rounded


_F32 = struct.Struct("f")


def _float32_words(points: Failing, near: list[float], what: str) -> str:
    """The values in range only at float32 precision, in words: the result says the tolerance it used."""
    if not points:
        return ""
    n = len(points)
    return (
        f"; {num(n)} value{'s' if n != 1 else ''} {what} at float32 precision (the run stores float32: "
        f"its rounding is allowed): {listed(points, near)}"
    )


def band(c: Case) -> RuleOutcome:
    assert isinstance(c.e, Band)
    e = c.e
    obs, every = c.observed()
    inside = every and obs.min is not None and e.contains(obs.min) and e.contains(obs.max)  # type: ignore[arg-type]
    bad: Failing = [] if inside else [(s, v) for s, v in c.points if not e.contains(v)]
    near = [float(v) for v in (e.min, e.max) if v is not None]
    rounded: Failing = []
    if bad and c.float32:  # a bound compared as float32 stores it: 0.53 is 0.52999997 there
        lo, hi = (None if e.min is None else f32(e.min)), (None if e.max is None else f32(e.max))

        def in32(v: float | None) -> bool:
            return v is not None and (lo is None or f32(v) >= lo) and (hi is None or f32(v) <= hi)

        rounded = [p for p in bad if in32(p[1])]
        bad = [p for p in bad if not in32(p[1])]
    where = (
        f"max {measured(obs.max, near)} at step {num(obs.max_step)}, "  # type: ignore[arg-type]
        f"min {measured(obs.min, near)} at step {num(obs.min_step)}"  # type: ignore[arg-type]
        if obs.max is not None
        else "no finite value"
    )
    at32 = _float32_words(rounded, near, "equal to a bound")
    if bad:
        return "fail", bad, f"{where}; outside at {steps_of(c, len(bad))}: {listed(bad, near)}{at32}", None
    return "pass", [], f"{where}; {steps_of(c, len(c.logged))} judged{at32}", None


def median(c: Case) -> RuleOutcome:
    assert isinstance(c.e, Median)
    e = c.e
    own = e.tolerance
    tol = own if own is not None else c.rtol
    points = c.logged_values
    med = statistics.median(points)
    limit = tol * abs(e.value)
    off = abs(med - e.value)
    # A hair of slack for binary fractions: 0.9 * 1.1 must count as inside 10%.
    ok = off <= limit * (1 + 1e-12)
    # float32 data: the median against the ends of the tolerance as float32 stores them.
    at32 = not ok and c.float32 and f32(e.value - limit) <= f32(med) <= f32(e.value + limit)
    rel = f"{num(float(f'{off / abs(e.value) * 100:.3g}'))}%" if e.value else f"{num(off)} off"
    pct = f"{num(round(tol * 100, 10))}%"
    text = (
        f"median {measured(med, [e.value])} over {steps_of(c, len(points))}, {rel} from {num(e.value)}; "
        f"tolerance {pct} ({'from the profile' if own is not None else '--rtol'})"
        + ("; at an end of it at float32 precision (the run stores float32: its rounding is allowed)" if at32 else "")
    )
    return ("pass" if ok or at32 else "fail"), [], text, (tol, "profile" if own is not None else "rtol")


def exact(c: Case) -> RuleOutcome:
    assert isinstance(c.e, Exact)
    e = c.e
    if isinstance(e.at, AtStep) and not c.logged:
        return "error", [(e.at.step, None)], f"not logged at step {num(e.at.step)}", None
    every = c.logged_values.count(e.value) == len(c.logged)  # at C speed: == as `contains` compares
    bad: Failing = [] if every else [(s, v) for s, v in c.points if not e.contains(v)]
    rounded: Failing = []
    if bad and c.float32:
        value32 = f32(e.value)
        rounded = [p for p in bad if p[1] is not None and f32(p[1]) == value32]
        bad = [p for p in bad if p[1] is None or f32(p[1]) != value32]
    at32 = _float32_words(rounded, [e.value], f"equal to {num(e.value)}")
    if bad:
        return "fail", bad, f"not {num(e.value)} at {steps_of(c, len(bad))}: {listed(bad, [e.value])}{at32}", None
    return (
        "pass",
        [],
        (
            f"{num(e.value)} at {steps_of(c, len(c.logged))}"
            if len(c.logged) != 1
            else f"{num(e.value)} at step {num(c.logged[0])}"
        )
        + at32,
        None,
    )


def presence(c: Case) -> RuleOutcome:
    # c.logged is the covered steps logged: as many as covered means none is missing (no search per step).
    logged = set(c.logged) if len(c.logged) < len(c.covered) else None
    missing: Failing = [(s, None) for s in c.covered if s not in logged] if logged is not None else []
    if missing:
        return (
            "fail",
            missing,
            f"not logged at {steps_of(c, len(missing))}: {named_steps([s for s, _ in missing])}",
            None,
        )
    return "pass", [], f"logged at {steps_of(c, len(c.covered))}", None


def corridor(c: Case) -> RuleOutcome:
    assert isinstance(c.e, Corridor)
    e = c.e
    ref = e.reference_at
    bad: Failing = []
    rounded: Failing = []
    nearest: tuple[float, int, float] | None = None  # (room left, step, value): the value closest to an edge
    for s, v in zip(c.logged, c.logged_values):  # every covered step is one of the reference's
        lo, hi = e.bounds(ref[s])
        if lo <= v <= hi:
            room = min(v - lo, hi - v) / ((hi - lo) or 1)
            if nearest is None or room < nearest[0]:
                nearest = (room, s, v)
        elif c.float32 and f32(lo) <= f32(v) <= f32(hi):  # the corridor's edge as float32 stores it
            rounded.append((s, v))
        else:
            bad.append((s, v))
    at32 = _float32_words(rounded, [], "at an edge of the corridor")
    if bad:
        return "fail", bad, f"outside at {steps_of(c, len(bad))}: {corridor_listed(e, bad)}{at32}", None
    edge = f"; closest to an edge: {corridor_listed(e, [nearest[1:]])}" if nearest is not None else ""
    return "pass", [], f"inside at {steps_of(c, len(c.logged))}{edge}{at32}", None


def corridor_listed(e: Corridor, points: Failing, most: int = 5) -> str:
    """Steps of a corridor with their value, the reference there and the corridor's bounds."""

    def one(p: tuple[int, float | None]) -> str:
        step, value = p
        ref = e.reference_at[step]
        lo, hi = e.bounds(ref)
        shown = "not logged" if value is None else measured(value, [lo, hi])
        return f"step {num(step)}: {shown} (reference {measured(ref)}, corridor {measured(lo)} to {measured(hi)})"

    text = ", ".join(one(p) for p in points[:most])
    return text + (f" and {len(points) - most} more" if len(points) > most else "")


@dataclass(frozen=True)
class Rule:
    """How one kind is judged."""

    judge: Callable[[Case], RuleOutcome]
    needs_values: bool  # no value at the steps it covers is an error before the rule runs
    judges_steps: bool  # steps_judged counts the steps covered, not the values read (presence)
    compares_values: bool = True  # compares values with numbers: at float32 precision for float32 data


def rule(e: Expectation) -> Rule:
    match e:
        case Band():
            return Rule(band, needs_values=True, judges_steps=False)
        case Median():
            return Rule(median, needs_values=True, judges_steps=False)
        case Exact():  # at one step, a missing value is the rule's own error
            return Rule(exact, needs_values=False, judges_steps=False)
        case Presence():
            return Rule(presence, needs_values=False, judges_steps=True, compares_values=False)
        case Corridor():
            return Rule(corridor, needs_values=True, judges_steps=False)
        case _:
            assert_never(e)
