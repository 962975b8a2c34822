"""Ranges from runs: the statistics behind `metrics-manual derive`.

For each metric a profile ranges, the expectation is recomputed from all runs together, of the
same kind: a band's min and max (widened by a margin, or a percentile or k-sigma envelope), a
median as the median of the runs' medians with a tolerance from how far those lie apart and how
far a run's median moves by the noise of its steps, and exact values and presence checked in every
run (a broken one is reported, never rewritten). One exception: a band or a median whose runs gave
one value at every step becomes that exact value. How far a band reaches (every step, or the steps
it was measured on) follows the runs' trend (derive/trend.py). Numbers are rounded outward to a
number of significant digits, so a band still contains every value it was derived from.
"""

from __future__ import annotations

import decimal
import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple, assert_never

from metrics_manual.derive import corridor
from metrics_manual.derive.methods import DEFAULT_METHOD
from metrics_manual.derive.trend import trend
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.exports.document import export_document
from metrics_manual.judge.judging import judge
from metrics_manual.judge.verdict import Result
from metrics_manual.model import kinds
from metrics_manual.model.phrase import count_steps, num
from metrics_manual.model.schema import (
    DOMAIN_BOUNDS,
    Band,
    Corridor,
    Domain,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    Median,
    Metric,
    Presence,
    Profile,
    ProfileExport,
    Span,
    Window,
)
from metrics_manual.model.tolerance import DEFAULT_RTOL
from metrics_manual.runs.run import Run
from metrics_manual.runs.series import Series
from metrics_manual.runs.steps import named_steps
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
    if math.isinf(out):  # rounded outward past the largest float: the value itself still bounds it
        return value
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


BIGGEST = sys.float_info.max


@dataclass(frozen=True)
class Method:
    """How a band is drawn from the values: their min and max (widened by a margin), a percentile
    or a k-sigma envelope."""

    name: Literal["minmax", "margin", "percentile", "sigma"] = "minmax"
    low: float = 0.0
    high: float = 100.0
    k: float = 3.0  # sigma: k; margin: the share of max - min added beyond each extreme

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
            if name in ("sigma", "margin"):
                k = float(args)
                if (k > 0 or (name == "margin" and k == 0)) and math.isfinite(k) and k <= 1e6:
                    return cls(name, k=k)  # type: ignore[arg-type]
        except ValueError:
            pass
        raise UsageError(
            f"--method {text!r}: expected margin:F (F >= 0), minmax, percentile:LOW,HIGH (0 <= LOW < HIGH <= 100) "
            "or sigma:K (K > 0)"
        )

    def envelope(self, values: list[float], domain: Domain = "any") -> tuple[float, float]:
        """The band's raw bounds; never an overflow (a bound past the float range is the largest float).

        A margin widens in log space (each bound moved by a factor, not an amount) for a metric whose
        domain starts at 0 when every value is above 0: the floor stays above 0, so a collapse of
        the metric towards 0 fails the band, as a spike past the top does.
        """
        if self.name == "margin" and DOMAIN_BOUNDS[domain][0] == 0 and min(values) > 0:
            return _log_margin(min(values), max(values), self.k)
        if self.name == "percentile":
            lo, hi = percentile(values, self.low), percentile(values, self.high)
        elif self.name == "sigma":
            # Scaled to 1 first: the mean and deviation of values near the float limit do not overflow.
            scale = max(abs(v) for v in values) or 1.0
            scaled = [v / scale for v in values]
            mean = statistics.fmean(scaled)
            sd = statistics.stdev(scaled) if len(scaled) > 1 else 0.0
            lo, hi = scale * (mean - self.k * sd), scale * (mean + self.k * sd)
        else:
            lo, hi = min(values), max(values)
            if self.name == "margin":
                pad = self.k * (hi / 2 - lo / 2) * 2  # halves first: max - min of +-1.5e308 overflows
                lo, hi = lo - pad, hi + pad
        return max(lo, -BIGGEST), min(hi, BIGGEST)

    def __str__(self) -> str:
        if self.name == "percentile":
            return f"percentile {num(self.low)} to {num(self.high)}"
        if self.name == "margin":
            return f"min and max widened by {num(self.k * 100)}% of their distance"
        return f"mean +- {num(self.k)} sigma" if self.name == "sigma" else "min and max"

    def words(self, values: list[float], domain: Domain) -> str:
        """The method as it applied to `values`: a margin in log space says so, with its factor."""
        if self.name == "margin" and DOMAIN_BOUNDS[domain][0] == 0 and min(values) > 0:
            factor = math.exp(self.k * (math.log(max(values)) - math.log(min(values))))
            return f"{self} in log space (a factor of {num(round_near(factor, 3))}: the metric's domain is {domain})"
        return str(self)


def _log_margin(lo: float, hi: float, k: float) -> tuple[float, float]:
    """lo / (hi/lo)^k and hi * (hi/lo)^k, in logs: no overflow, and a floor that never reaches 0."""
    pad = k * (math.log(hi) - math.log(lo))
    if pad == 0:
        return lo, hi
    try:
        top = math.exp(math.log(hi) + pad)
    except OverflowError:
        top = BIGGEST
    # exp(log(x)) may come back a float beside x: never inside the values it bounds.
    return min(math.exp(math.log(lo) - pad), lo), max(min(top, BIGGEST), hi)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile with linear interpolation between closest ranks (NumPy's default)."""
    return _sorted_percentile(sorted(values), p)


def _sorted_percentile(ordered: Sequence[float], p: float) -> float:
    at = (len(ordered) - 1) * p / 100
    lo = math.floor(at)
    hi = min(lo + 1, len(ordered) - 1)
    if at == lo:
        return ordered[lo]
    return ordered[lo] + (ordered[hi] / 2 - ordered[lo] / 2) * (at - lo) * 2  # halves: no overflow near the float limit


# --- a median's tolerance ---------------------------------------------------------------

# How far the next run's median may lie from the runs', as a confidence multiplier of how far the
# runs' medians lie from theirs (as Megatron-LM's compute_golden_statistics does for its timings):
# three seeds tell little of how far a fourth may go. Measured: tools/derive_methods.py, docs/deriving.md.
MEDIAN_SPREAD = 3
# The next run's median also moves by the noise of its own steps, even where the runs' medians agree
# (by chance, or because no seed moves them): at least this many standard errors of a run's median.
MEDIAN_ERRORS = 3
# The least tolerance derive writes: judge's own for a median that states none. Three seeds whose
# medians happen to lie close tell little of a fourth; derive widens judge's default, never narrows it.
MEDIAN_FLOOR = DEFAULT_RTOL


def median_error(values: Sequence[float]) -> float:
    """The standard error of the median of `values`, each one draw, from their order statistics.

    Among n draws, the rank of the true median is binomial(n, 1/2): one standard deviation is
    sqrt(n)/2 ranks, 50/sqrt(n) percentiles either side of the 50th. Half the distance between those
    two percentiles is the median's standard error, whatever the shape of the values (a skewed time
    too): what a bootstrap of the median estimates, without resampling. A leave-one-out (jackknife)
    would not do: a median without one value takes only two values, and its variance misleads.
    """
    ordered = sorted(values)
    half = 50 / math.sqrt(len(ordered))
    return _sorted_percentile(ordered, 50 + half) / 2 - _sorted_percentile(ordered, 50 - half) / 2


class MedianRange(NamedTuple):
    """A median as derive writes it, and what its tolerance is made of (distances from `value`)."""

    value: float  # the median of the runs' medians, rounded to the nearest
    tolerance: float | None  # relative, rounded up; None for a median of 0, where no relative tolerance has width
    medians: list[float]  # each run's
    spread: float  # MEDIAN_SPREAD times the farthest a run's median lies from `value`
    noise: float  # MEDIAN_ERRORS standard errors of the median of the noisiest run

    def share(self, distance: float) -> float:
        return distance / abs(self.value) if self.value else math.inf


def median_range(
    runs: Sequence[Sequence[float]],
    digits: int,
    spread: float = MEDIAN_SPREAD,
    errors: float = MEDIAN_ERRORS,
    floor: float = MEDIAN_FLOOR,
) -> MedianRange:
    """The runs' median and its relative tolerance: `spread` times the farthest a run's median lies
    from it, or `errors` standard errors of a run's median, whichever is larger, and never under
    `floor`; rounded up, so it covers them still. (Parameters for tools/derive_methods.py, which
    measures what each part does.)"""
    medians = [statistics.median(vs) for vs in runs]
    value = round_near(statistics.median(medians), digits)
    far = max(abs(m / 2 - value / 2) for m in medians) * 2  # halves first: no overflow near the float limit
    reach = min(spread * far, BIGGEST)
    noise = min(errors * max(median_error(vs) for vs in runs), BIGGEST)
    tolerance = None
    if value:
        share = max(reach, noise) / abs(value)
        tolerance = round_up(min(max(share, floor), BIGGEST), digits)
    return MedianRange(value, tolerance, medians, reach, noise)


# --- what was found ---------------------------------------------------------------------


@dataclass
class Derived:
    """One expectation of one metric: what the runs show, and what to write (if anything)."""

    key: str
    index: int
    kind: str
    summary: str
    values: dict[str, Any] | None = None  # the fields to write; None: nothing to write
    problems: list[str] = field(default_factory=list)
    proposal: bool = False
    violation: bool = False  # an exact or presence expectation that a run breaks
    # What the user should know of what is written (a band with no width): warnings, written all the same.
    warnings: list[tuple[Code, str]] = field(default_factory=list)


@dataclass
class Derivation:
    outcomes: list[Derived] = field(default_factory=list)

    @property
    def violations(self) -> list[Derived]:
        return [o for o in self.outcomes if o.violation]


@dataclass(frozen=True)
class Options:
    keys: tuple[str, ...] = ()
    skip_first: int = 0
    method: Method = field(default_factory=lambda: Method.parse(DEFAULT_METHOD))
    digits: int = 3
    run_steps: int | None = None  # the setup's steps: how far a proposal covers
    kind: Literal["band", "corridor"] = "band"  # what a metric with no range gets; corridor: only corridors


def _finite(runs: dict[str, list[float]]) -> list[str]:
    return [
        f"run {name!r} has a non-finite value ({v})" for name, vs in runs.items() for v in vs if not math.isfinite(v)
    ][:3]


class _Covered(NamedTuple):
    covers: int  # the steps the span covers in the run, warm-up included (what a band's `steps` says)
    judged: int  # those left once the warm-up is left out
    points: list[tuple[int, float]]  # (step, value) at the judged steps that have a value
    missing: list[int]  # the judged steps with no value (a gap in the metric's log)


def _covered(run: Run, key: str, span: Span, skip_first: int) -> _Covered:
    """The steps of the run `span` covers, the values there, and the steps with none.

    The steps are `kinds.covered_steps` (the slicing `judge` and `check` use) of the steps the run
    reached for `key` (`Run.reached_by`: its step key's, not only those `key` was logged at), less
    the run's first `skip_first` steps (`Run.first_steps`, the warm-up) unless `span` is a window:
    the steps `check` re-judges, so a derived range is held against what it came from.
    """
    reached = run.reached_by(key)
    count = len(kinds.covered_steps(span, reached)[0])
    steps, _ = kinds.covered_steps(span, reached, warm_up=skip_first)
    series: Mapping[int, float] = run.series.get(key) or {}
    if isinstance(series, Series):  # one dict, built at C speed: a long run has 100,000 steps to look up
        series = series.as_dict()
    sk = run.step_key(key)
    unfinished = run.unfinished.get(sk) if sk else None  # a cut last line: nothing is missing there (as judge)
    points, missing = [], []
    for s in steps:
        if s in series:
            points.append((s, series[s]))
        elif s != unfinished:
            missing.append(s)
    return _Covered(count, len(steps), points, missing)


def _missing(name: str, key: str, run: Run, c: _Covered) -> str | None:
    """Why a run's values cannot make the range, if they cannot: the metric is not logged, or not
    at every step the expectation covers (in judge's words: a run with a gap is no evidence of a range)."""
    if not c.points:
        return f"run {name!r} does not log {key}" + (" at the steps it covers" if key in run.series else "")
    if c.missing:
        return f"run {name!r} misses {key} at {num(len(c.missing))} of the {count_steps(c.judged)} it covers: {named_steps(c.missing)}"
    return None


class _Gathered(NamedTuple):
    points: dict[str, list[tuple[int, float]]]  # run name -> (step, value) at the steps covered
    covers: int  # the fewest steps the span covers in a run, warm-up included
    problems: list[str]  # what keeps a range from these values

    def values(self) -> list[float]:
        return [v for points in self.points.values() for _, v in points]


def _gather(runs: dict[str, Run], key: str, span: Span, o: Options) -> _Gathered:
    """Each run's values at the steps `span` covers, the fewest steps a run covers, and what keeps a range from them."""
    points: dict[str, list[tuple[int, float]]] = {}
    counts = []
    problems = []
    for name, run in runs.items():
        c = _covered(run, key, span, o.skip_first)
        points[name] = c.points
        counts.append(c.covers)
        problem = _missing(name, key, run, c)
        if problem is not None:
            problems.append(problem)
    per_run = {name: [v for _, v in ps] for name, ps in points.items()}
    return _Gathered(points, min(counts, default=0), problems or _finite(per_run))


def _clamp(lo: float, hi: float, domain: Domain) -> tuple[float, float]:
    low, high = DOMAIN_BOUNDS[domain]
    if low is not None:
        lo, hi = max(lo, low), max(hi, low)
    if high is not None:
        lo, hi = min(lo, high), min(hi, high)
    return lo, hi


def band_bounds(values: list[float], method: Method, digits: int, domain: Domain) -> tuple[float, float]:
    """A band's bounds as derive writes them: the method's envelope, kept to the domain, rounded outward."""
    return _outward(method.envelope(values, domain), digits, domain)


def _outward(envelope: tuple[float, float], digits: int, domain: Domain) -> tuple[float, float]:
    lo, hi = _clamp(*envelope, domain)
    return _clamp(round_down(lo, digits), round_up(hi, digits), domain)


def _band(key: str, i: int, e: Band | None, runs: dict[str, Run], o: Options, domain: Domain = "any") -> Derived:
    """A band derived again from the runs, or proposed (`e` None).

    A window keeps its window. Any other band is first gathered over every step the runs reached:
    a metric that is one value in every run becomes an exact value at every step (a band of no
    width would fail any run that varies); one with no trend (derive/trend.py) a band over every
    step, so a longer run is judged at its later steps too; a trending one a band over the steps it
    was measured on (the shortest run's, at most the `steps` it had or a proposal's setup steps).
    """
    out = Derived(key, i, "band", "", proposal=e is None)
    if e is not None and isinstance(e.span, Window):
        return _bounds(out, e, _gather(runs, key, e.span, o), o, domain, f"first {e.span.first} steps")
    every = _gather(runs, key, EveryStep(), o)
    if every.problems:
        out.problems = every.problems
        return out
    values = every.values()
    if (e is None or (e.min is not None and e.max is not None)) and min(values) == max(values):
        return _exact(out, e, values)
    t = trend(list(every.points.values()))
    if not t.trending:
        return _bounds(out, e, every, o, domain, "every step of each run", steps=None, trend=str(t))
    cap = o.run_steps if e is None else e.steps
    first = min(every.covers, cap) if cap else every.covers
    measured = _gather(runs, key, FirstSteps(first), o)
    return _bounds(
        out, e, measured, o, domain, f"the first {count_steps(first)} of each run", steps=first, trend=str(t)
    )


def _exact(out: Derived, e: Band | Median | None, values: list[float]) -> Derived:
    """A band or a median whose runs gave one value at every step: that value, exact at every step."""
    value = values[0]
    out.kind = "exact"
    out.values = {"kind": "exact", "value": value, "at": "every_step"}
    if e is not None:  # the old kind's own fields go; its condition and sources stay
        out.values |= dict.fromkeys(type(e).model_fields.keys() - Exact.model_fields.keys(), None)
    was = f" (it was a {e.kind})" if e is not None else ""
    out.summary = f"all {len(values)} values were {num(value)}, in every run: an exact value at every step{was}"
    return out


def _bounds(
    out: Derived,
    e: Band | None,
    g: _Gathered,
    o: Options,
    domain: Domain,
    where: str,
    steps: int | None | Literal["kept"] = "kept",
    trend: str | None = None,
) -> Derived:
    """A band's bounds from the gathered values; `steps`: how many a band covers (None: every step)."""
    if g.problems:
        out.problems = g.problems
        return out
    values = g.values()
    envelope = o.method.envelope(values, domain)
    lo, hi = _outward(envelope, o.digits, domain)
    free = dict(zip(("min", "max"), _outward(envelope, o.digits, "any")))  # where they differ, the domain moved it
    new: dict[str, Any] = {"kind": "band"} if e is None else {}
    if e is None or e.min is not None:
        new["min"] = lo
    if e is None or e.max is not None:
        new["max"] = hi
    if steps != "kept":
        new["steps"] = steps  # the run's steps, warm-up included: the condition says what is left out
    out.values = new
    written = " to ".join(num(new[b]) if b in new else "-" for b in ("min", "max"))
    clipped = [f"{b} {num(free[b])} -> {num(new[b])}" for b in ("min", "max") if b in new and new[b] != free[b]]
    if clipped:  # only a bound the domain moved: a band inside the domain was not kept to it
        written += f" (kept to the metric's domain, {domain}: {', '.join(clipped)})"
    outside = sum(1 for v in values if ("min" in new and v < new["min"]) or ("max" in new and v > new["max"]))
    if outside:  # percentile and sigma envelopes leave the extremes out by design
        written += f" ({outside} of the values lie outside it: check reports them when the captures are in the project)"
    out.summary = (
        f"{len(values)} values ({where}): min {num(min(values))}, max {num(max(values))}; "
        + (f"{trend}; " if trend else "")
        + f"{o.method.words(values, domain)}, {o.digits} digits outward: {written}"
    )
    if "min" in new and "max" in new and new["min"] == new["max"]:
        first = (
            e.span.first if e is not None and isinstance(e.span, Window) else steps if isinstance(steps, int) else None
        )
        out.warnings.append((codes.ZERO_WIDTH_BAND, _no_width(out.key, out.index, new["min"], values, first)))
    return out


def _no_width(key: str, i: int, value: float, values: list[float], first: int | None) -> str:
    """Why a band of one value fails any healthy run that varies, and what to write instead.

    `first`: the band covers only a run's first `first` steps (a window or `steps`). No exact
    expectation covers those alone (an exact value holds at every step, in every run or at one
    step), and one at every step would fail each later step the band leaves free: not advised."""
    seen = f"all {len(values)} values were {num(value)}" if min(values) == max(values) else "the method gave no width"
    head = f"{key} [{i}]: the band {num(value)} to {num(value)} has no width ({seen}): a healthy run whose value varies at all will fail it"
    if first is not None:
        return (
            f"{head}; it covers only the first {count_steps(first)} of a run, which no exact expectation covers: "
            "derive it again from more runs, or widen it by hand to what a healthy run may give there"
        )
    return (
        f"{head}; if {key} is constant by design, make it an exact expectation "
        f"(kind: exact, value: {num(value)}, at: every_step), else derive it again from more runs"
    )


def _median(key: str, i: int, e: Median | None, runs: dict[str, Run], o: Options) -> Derived:
    """A median derived again from the runs, or proposed (`e` None), with its tolerance (`median_range`).

    A metric that is one value at every step of every run becomes that exact value, as a band does.
    """
    out = Derived(key, i, "median", "", proposal=e is None)
    every = _gather(runs, key, EveryStep(), o)
    if not every.problems and min(every.values()) == max(every.values()):
        return _exact(out, e, every.values())
    span = e.span if e is not None else FirstSteps(o.run_steps) if o.run_steps else EveryStep()
    g = _gather(runs, key, span, o)
    if g.problems:
        out.problems = g.problems
        return out
    r = median_range([[v for _, v in points] for points in g.points.values()], o.digits)
    if not all(
        math.isfinite(m) for m in (*r.medians, r.value)
    ):  # a median of two values, (a + b) / 2, past the float range
        out.problems = ["a run's median, or the median of the runs' medians, is past the float range"]
        return out
    if r.tolerance is None and min(r.medians) != max(r.medians):
        out.problems = [
            f"the runs' medians ({_listed(r.medians, o.digits)}) differ and their median is 0, where a relative "
            "tolerance has no width: range it as a band"
        ]
        return out
    out.values = ({"kind": "median"} if e is None else {}) | {"value": r.value, "steps": g.covers}
    out.values["tolerance"] = r.tolerance  # None (a median of 0) removes one a previous derive wrote
    names = ", ".join(f"{name} {num(round_near(m, o.digits + 1))}" for name, m in zip(g.points, r.medians))
    spread = max(r.medians) - min(r.medians)
    rel = f" ({_pct(r.share(spread))} of the median)" if r.value else ""
    out.summary = (
        f"median of the runs' medians {num(r.value)}; runs: {names}; spread {num(round_near(spread, o.digits))}{rel}; "
        + (
            f"tolerance {_pct(r.tolerance)}, the largest of {num(MEDIAN_SPREAD)} times the farthest run's median "
            f"from it ({_pct(r.share(r.spread))}), {num(MEDIAN_ERRORS)} standard errors of the median of a run's "
            f"steps ({_pct(r.share(r.noise))}) and the floor, {_pct(MEDIAN_FLOOR)}"
            if r.tolerance is not None
            else "no tolerance: every run's median is 0"
        )
    )
    return out


def _pct(share: float) -> str:
    return f"{num(round_near(100 * share, 3))}%"


def _listed(values: list[float], digits: int) -> str:
    return ", ".join(num(round_near(v, digits)) for v in values)


REFERENCE = "reference"  # the source id of the captures derive writes a corridor's reference curve to


def _corridor(key: str, i: int, e: Corridor | None, runs: dict[str, Run], o: Options) -> Derived:
    """A corridor derived again from the runs, or proposed (`e` None): derive/corridor.py's rule, on
    each run's values at every step it reached (after the warm-up)."""
    out = Derived(key, i, "corridor", "", proposal=e is None)
    if len(runs) < 2:
        out.problems = [
            "a corridor's tolerances come from how far runs lie apart: give two runs or more (three for the "
            "leave-one-out check)"
        ]
        return out
    every = _gather(runs, key, EveryStep(), o)
    if every.problems:
        out.problems = every.problems
        return out
    values = every.values()
    if e is None and min(values) == max(values):
        out.summary = (
            f"not proposed: all {len(values)} values were {num(values[0])}, in every run, where a corridor would "
            "have no width (an exact expectation holds such a metric)"
        )
        return out
    fitted = corridor.fit({name: dict(points) for name, points in every.points.items()})
    if isinstance(fitted, str):
        out.problems = [fitted]
        return out
    fitted = fitted.rounded(lambda v: round_up(v, o.digits))
    out.values = fitted.values(REFERENCE)
    out.summary = fitted.words(list(runs))
    for name, side in (("above", fitted.up), ("below", fitted.down)):
        if not side.deviation:
            out.warnings.append(
                (
                    codes.ZERO_WIDTH_BAND,
                    f"{key} [{i}]: the corridor has no width {name} its reference (no run lay {name} it): a healthy "
                    "run that differs at all will fail it; derive it again from more runs, or widen it by hand",
                )
            )
    return out


def _check(key: str, i: int, e: Exact | Presence, judged: dict[str, dict[tuple[str, int], Result]]) -> Derived:
    """An exact value or a presence, held against every run by the judge's rules; never rewritten."""
    out = Derived(key, i, e.kind, "")
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


def _domain(metrics: dict[str, Metric], key: str) -> Domain:
    """A metric's domain; a family member's is its family's."""
    metric = metrics.get(key) or next((m for m in metrics.values() if key in m.members), None)
    return metric.value_domain if metric is not None else "any"


def _outcome(
    key: str,
    i: int,
    e: Expectation,
    runs: dict[str, Run],
    o: Options,
    judged: dict[str, dict[tuple[str, int], Result]],
    domain: Domain,
) -> Derived:
    """A band or median derived again from the runs; an exact value or presence checked in each."""
    match e:
        case Band():
            return _band(key, i, e, runs, o, domain)
        case Median():
            return _median(key, i, e, runs, o)
        case Exact() | Presence():
            return _check(key, i, e, judged)
        case Corridor():
            return _corridor(key, i, e, runs, o)
        case _:
            assert_never(e)


def _rangeable(metric: Metric | None) -> bool:
    return metric is not None and not metric.members


def derive(
    manual: Manual, profile: Profile, runs: dict[str, Run], options: Options, export: ProfileExport | None = None
) -> Derivation:
    """What the runs say about each metric of the profile (or of `options.keys`); `export` is the
    profile as the judge reads it (built here when not given). With `options.kind` corridor, only
    corridors: each of the profile's derived again, and one proposed for each metric without one."""
    catalog = manual.catalog
    metrics = {m.key: m for s in catalog.sections for m in s.metrics}
    members = {k for m in metrics.values() for k in m.members}
    # Proposals only for what every run logs: a metric one seed lacks is no evidence of a range.
    logged = set.intersection(*(set(k for k, v in run.series.items() if v) for run in runs.values())) if runs else set()
    proposed = [k for k, m in metrics.items() if _rangeable(m) and k in logged]
    options = replace(options, run_steps=profile.setup.steps)
    if options.kind == "corridor":
        ranged = [k for k, es in profile.expectations.items() if any(isinstance(e, Corridor) for e in es)]
        return _corridors(profile, runs, options, list(options.keys) or list(dict.fromkeys(ranged + proposed)), metrics)
    export = export or export_document(manual, profile, None)
    judged = {name: {(r.metric, r.expectation): r for r in judge(export, run).results} for name, run in runs.items()}
    keys = list(options.keys) or [*profile.expectations, *(k for k in proposed if k not in profile.expectations)]
    result = Derivation()
    for key in keys:
        if key not in metrics and key not in members:
            raise UsageError(f"--metric {key!r} is not in the catalog")
        expectations: list[Expectation] = list(profile.expectations.get(key, []))
        for i, e in enumerate(expectations):
            result.outcomes.append(_outcome(key, i, e, runs, options, judged, _domain(metrics, key)))
        if not expectations:
            metric = _proposable(metrics, key)
            if metric is not None and (metric.unit or "").strip().lower() in SECONDS:
                result.outcomes.append(_median(key, 0, None, runs, options))
            else:
                result.outcomes.append(_band(key, 0, None, runs, options, _domain(metrics, key)))
    return result


def _proposable(metrics: dict[str, Metric], key: str) -> Metric | None:
    """The catalog's metric of `key` (None for a family's member); a UsageError for a family itself."""
    metric = metrics.get(key)
    if metric is not None and metric.members:
        raise UsageError(f"--metric {key!r} is a family; name one of its members: {', '.join(metric.members)}")
    return metric


def _corridors(
    profile: Profile, runs: dict[str, Run], options: Options, keys: list[str], metrics: dict[str, Metric]
) -> Derivation:
    """`derive --kind corridor`: each corridor of `keys` derived again, one proposed where a key has none."""
    result = Derivation()
    for key in keys:
        if key not in metrics:
            members = any(key in m.members for m in metrics.values())
            raise UsageError(
                f"--metric {key!r} "
                + (
                    "is a family's member: a corridor follows one key of the catalog"
                    if members
                    else "is not in the catalog"
                )
            )
        _proposable(metrics, key)
        expectations = profile.expectations.get(key, [])
        own = [(i, e) for i, e in enumerate(expectations) if isinstance(e, Corridor)]
        for i, e in own:
            result.outcomes.append(_corridor(key, i, e, runs, options))
        if not own:
            result.outcomes.append(_corridor(key, len(expectations), None, runs, options))
    return result
