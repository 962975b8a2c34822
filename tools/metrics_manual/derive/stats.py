"""Ranges from runs: the statistics behind `metrics-manual derive`.

For each metric a profile ranges, the expectation is recomputed *of the same kind* from
all runs together: a band's min and max (or a percentile or k-sigma envelope) over the
steps it covers, a median as the median of the runs' medians, and exact values and
presence checked in every run (a broken one is reported, never rewritten). Numbers are
rounded outward to a number of significant digits, so a band still contains every value
it was derived from.
"""

from __future__ import annotations

import decimal
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, assert_never

from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.exports.formats import export_document
from metrics_manual.judge.rules import Result, judge
from metrics_manual.model import kinds
from metrics_manual.model.phrase import num
from metrics_manual.model.schema import (
    Band,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    Median,
    Metric,
    Presence,
    Profile,
    ProfileExport,
    Window,
)
from metrics_manual.runs.series import Run
from metrics_manual.source.load import Manual

SECONDS = {"s", "sec", "second", "seconds"}


# --- rounding ---------------------------------------------------------------------------


def _round(value: float, digits: int, mode: str) -> float | int:
    if value == 0 or not math.isfinite(value):
        return value
    d = decimal.Decimal(repr(float(value)))
    quantum = decimal.Decimal(1).scaleb(d.adjusted() - digits + 1)
    rounded = d.quantize(quantum, rounding=mode)
    # Rounding never crosses the float nearest to the exact decimal in the wrong direction:
    # float() rounds to nearest, which is monotonic, so floor(d) <= d gives float <= value.
    out = float(rounded)
    return int(out) if out.is_integer() and abs(out) < 1e15 else out


def round_down(value: float, digits: int) -> float | int:
    """The largest number of `digits` significant digits that is <= value."""
    return _round(value, digits, decimal.ROUND_FLOOR)


def round_up(value: float, digits: int) -> float | int:
    """The smallest number of `digits` significant digits that is >= value."""
    return _round(value, digits, decimal.ROUND_CEILING)


def round_near(value: float, digits: int) -> float | int:
    return _round(value, digits, decimal.ROUND_HALF_EVEN)


# --- methods ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """How a band is drawn from the values: their min and max, a percentile or a k-sigma envelope."""

    name: Literal["minmax", "percentile", "sigma"] = "minmax"
    low: float = 0.0
    high: float = 100.0
    k: float = 3.0

    @classmethod
    def parse(cls, text: str) -> Method:
        name, _, args = text.partition(":")
        try:
            if name == "minmax" and not args:
                return cls()
            if name == "percentile":
                low, high = (float(a) for a in args.split(","))
                if 0 <= low < high <= 100:
                    return cls("percentile", low=low, high=high)
            if name == "sigma":
                k = float(args)
                if k > 0 and math.isfinite(k):
                    return cls("sigma", k=k)
        except ValueError:
            pass
        raise UsageError(
            f"--method {text!r}: expected minmax, percentile:LOW,HIGH (0 <= LOW < HIGH <= 100) or sigma:K (K > 0)"
        )

    def envelope(self, values: list[float]) -> tuple[float, float]:
        if self.name == "percentile":
            return percentile(values, self.low), percentile(values, self.high)
        if self.name == "sigma":
            mean = statistics.fmean(values)
            sd = statistics.stdev(values) if len(values) > 1 else 0.0
            return mean - self.k * sd, mean + self.k * sd
        return min(values), max(values)

    def __str__(self) -> str:
        if self.name == "percentile":
            return f"percentile {num(self.low)} to {num(self.high)}"
        return f"mean +- {num(self.k)} sigma" if self.name == "sigma" else "min and max"


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile with linear interpolation between closest ranks (NumPy's default)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * p / 100
    lo = math.floor(at)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)


# --- what was found ---------------------------------------------------------------------


@dataclass
class Outcome:
    """One expectation of one metric: what the runs show, and what to write (if anything)."""

    key: str
    index: int
    kind: str
    summary: str
    values: dict[str, Any] | None = None  # the fields to write; None: nothing to write
    problems: list[str] = field(default_factory=list)
    proposal: bool = False
    violation: bool = False  # an exact or presence expectation that a run breaks


@dataclass
class Derivation:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def violations(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.violation]


@dataclass(frozen=True)
class Options:
    keys: tuple[str, ...] = ()
    skip_first: int = 0
    method: Method = Method()
    digits: int = 3
    run_steps: int | None = None  # the setup's steps: how far a proposal covers


def _finite(runs: dict[str, list[float]]) -> list[str]:
    return [
        f"run {name!r} has a non-finite value ({v})" for name, vs in runs.items() for v in vs if not math.isfinite(v)
    ][:3]


def covered_steps(
    run: Run, key: str, e: Band | Median | None, skip_first: int, limit: int | None = None
) -> list[tuple[int, float]]:
    """(step, value) of `key` at the steps `e` covers (a proposal: the setup's first `limit` steps),
    less the first `skip_first` (warm-up) unless `e` is a window: `kinds.covered_steps`, the
    slicing `judge` and `check` use, on the steps the run logged `key` at.
    """
    series: Mapping[int, float] = run.series.get(key) or {}
    span = e.span if e is not None else FirstSteps(limit) if limit else EveryStep()
    steps, _ = kinds.covered_steps(span, sorted(series), warm_up=skip_first)
    return [(s, series[s]) for s in steps]


def covered(run: Run, key: str, e: Band | Median | None, skip_first: int, limit: int | None = None) -> list[float]:
    return [v for _, v in covered_steps(run, key, e, skip_first, limit)]


def _gather(
    runs: dict[str, Run], key: str, e: Band | Median | None, o: Options
) -> tuple[dict[str, list[float]], list[str]]:
    per_run = {name: covered(run, key, e, o.skip_first, o.run_steps) for name, run in runs.items()}
    problems = [
        f"run {name!r} does not log {key}" + (" at the steps it covers" if key in runs[name].series else "")
        for name, vs in per_run.items()
        if not vs
    ]
    return per_run, problems or _finite(per_run)


def _band(key: str, i: int, e: Band | None, runs: dict[str, Run], o: Options) -> Outcome:
    per_run, problems = _gather(runs, key, e, o)
    out = Outcome(key, i, "band", "", proposal=e is None)
    if problems:
        out.problems = problems
        return out
    values = [v for vs in per_run.values() for v in vs]
    lo, hi = o.method.envelope(values)
    new: dict[str, Any] = {"kind": "band"} if e is None else {}
    if e is None or e.min is not None:
        new["min"] = round_down(lo, o.digits)
    if e is None or e.max is not None:
        new["max"] = round_up(hi, o.digits)
    counts = [len(vs) for vs in per_run.values()]
    span = e.span if e is not None else None
    if span is None or isinstance(span, FirstSteps):
        # the run's steps, warm-up included: the condition says what is left out
        new["steps"] = min(counts) + o.skip_first
    out.values = new
    where = f"first {span.first} steps" if isinstance(span, Window) else f"{min(counts)} steps per run"
    written = " to ".join(num(new[b]) if b in new else "-" for b in ("min", "max"))
    outside = sum(1 for v in values if ("min" in new and v < new["min"]) or ("max" in new and v > new["max"]))
    if outside:  # percentile and sigma envelopes leave the extremes out by design
        written += f" ({outside} of the values lie outside it: check reports them when the captures are in the project)"
    out.summary = (
        f"{len(values)} values ({where}): min {num(min(values))}, max {num(max(values))}; "
        f"{o.method}, {o.digits} digits outward: {written}"
    )
    return out


def _median(key: str, i: int, e: Median | None, runs: dict[str, Run], o: Options) -> Outcome:
    per_run, problems = _gather(runs, key, e, o)
    out = Outcome(key, i, "median", "", proposal=e is None)
    if problems:
        out.problems = problems
        return out
    medians = {name: statistics.median(vs) for name, vs in per_run.items()}
    value = statistics.median(medians.values())
    out.values = ({"kind": "median"} if e is None else {}) | {
        "value": round_near(value, o.digits),
        "steps": min(len(vs) for vs in per_run.values()) + o.skip_first,
    }
    spread = max(medians.values()) - min(medians.values())
    rel = f" ({num(round_near(100 * spread / abs(value), 2))}% of the median)" if value else ""
    runs_text = ", ".join(f"{name} {num(round_near(m, o.digits + 1))}" for name, m in medians.items())
    out.summary = f"median of the runs' medians {num(round_near(value, o.digits + 1))}; runs: {runs_text}; spread {num(round_near(spread, o.digits))}{rel}"
    return out


def _check(key: str, i: int, e: Exact | Presence, judged: dict[str, dict[tuple[str, int], Result]]) -> Outcome:
    """An exact value or a presence, held against every run by the judge's rules; never rewritten."""
    out = Outcome(key, i, e.kind, "")
    for name, results in judged.items():
        r = results.get((key, i))
        if r is None:
            out.problems.append(f"run {name!r} could not be judged on it")
        elif r.verdict != "pass":
            out.problems.append(f"run {name!r} breaks it ({r.verdict}): {r.reason}")
    out.violation = bool(out.problems)
    out.summary = (
        "holds in every run" if not out.problems else "broken; left for the maintainer to decide, not rewritten"
    )
    return out


def _outcome(
    key: str, i: int, e: Expectation, runs: dict[str, Run], o: Options, judged: dict[str, dict[tuple[str, int], Result]]
) -> Outcome:
    """A band or median derived again from the runs; an exact value or presence checked in each."""
    match e:
        case Band():
            return _band(key, i, e, runs, o)
        case Median():
            return _median(key, i, e, runs, o)
        case Exact() | Presence():
            return _check(key, i, e, judged)
        case _:
            assert_never(e)


def _rangeable(metric: Metric | None) -> bool:
    return metric is not None and not metric.members


def derive(
    manual: Manual, profile: Profile, runs: dict[str, Run], options: Options, export: ProfileExport | None = None
) -> Derivation:
    """What the runs say about each metric of the profile (or of `options.keys`); `export` is the
    profile as the judge reads it (built here when not given)."""
    catalog = manual.catalog
    metrics = {m.key: m for s in catalog.sections for m in s.metrics}
    export = export or export_document(manual, profile, None)
    judged = {name: {(r.metric, r.expectation): r for r in judge(export, run).results} for name, run in runs.items()}
    members = {k for m in metrics.values() for k in m.members}
    if options.keys:
        keys = list(options.keys)
    else:
        # Proposals only for what every run logs: a metric one seed lacks is no evidence of a range.
        logged = (
            set.intersection(*(set(k for k, v in run.series.items() if v) for run in runs.values())) if runs else set()
        )
        keys = list(profile.expectations) + [
            k for k, m in metrics.items() if k not in profile.expectations and _rangeable(m) and k in logged
        ]
    result = Derivation()
    options = replace(options, run_steps=profile.setup.steps)
    for key in keys:
        if key not in metrics and key not in members:
            raise UsageError(f"--metric {key!r} is not in the catalog")
        expectations: list[Expectation] = list(profile.expectations.get(key, []))
        for i, e in enumerate(expectations):
            result.outcomes.append(_outcome(key, i, e, runs, options, judged))
        if not expectations:
            metric = metrics.get(key)
            if metric is not None and metric.members:
                raise UsageError(f"--metric {key!r} is a family; name one of its members: {', '.join(metric.members)}")
            propose = _median if metric is not None and (metric.unit or "").strip().lower() in SECONDS else _band
            result.outcomes.append(propose(key, 0, None, runs, options))
    return result
