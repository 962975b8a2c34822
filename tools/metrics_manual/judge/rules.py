"""Judge one run against a profile: pass, fail or error for every expectation of every metric.

The rules, one function per kind of expectation (the words of docs/judging.md):

- band: every value at the steps it covers lies in [min, max], bounds included; a window
  covers the run's first N steps, `steps` the first N;
- median: the median of the run's values at the steps it covers is within a relative
  tolerance of the value: the expectation's own, else --rtol;
- exact: every value (or the value at that step) equals the stated value;
- presence: the metric is logged at every step of its step key that the run reached.

Before any rule, what makes a pass unearned (ERRORS below, the words of docs/judging.md):
a ranged metric missing from the run, a value that is not a finite number anywhere in the
run, two files with different values at one step, a former name of the key (the catalog's
renamed_from, read as the key) and its current name with different values at one step, a step
the expectation covers that the run reached and finished without this metric. Excluded steps
are dropped before all of it.
The verdict they fill in is judge/verdict.py.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from operator import not_
from typing import Literal, assert_never

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.judge.verdict import (
    LISTED,
    SCHEMA_VERSION,
    Judgement,
    NotJudged,
    Observed,
    Point,
    Problem,
    Relogged,
    Result,
    RunInfo,
    Span,
    StepsSeen,
    Summary,
    UnknownKeys,
    Verdict,
)
from metrics_manual.model.keys import KeySet
from metrics_manual.model.kinds import covered_steps
from metrics_manual.model.phrase import count_steps, describe, measured, num
from metrics_manual.model.schema import AtStep, Band, Exact, Expectation, Median, MetricExport, Presence, ProfileExport
from metrics_manual.runs.ci_history import TARGET_METRIC_KEYS
from metrics_manual.runs.renames import fold
from metrics_manual.runs.series import Run, Series, StepGaps, StepRanges, gap_findings, named_steps
from metrics_manual.text import clip

DEFAULT_RTOL = 0.10


@dataclass
class Case:
    """One metric of the run against one expectation: the steps it covers, with excluded ones dropped."""

    key: str
    e: Expectation
    values: Mapping[int, float]
    covered: list[int]
    expected_count: int
    rtol: float
    unfinished: int | None = None  # a step a cut last line leaves unfinished: nothing is missing there

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
            self._observed = _observed_finite(self.logged, self.logged_values)
        return self._observed


def _point(step: int, value: float | None) -> Point:
    if value is None or math.isfinite(value):
        return Point(step=step, value=value)
    return Point(step=step, value="NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity")


def _observed_finite(steps: list[int], values: list[float]) -> tuple[Observed, bool]:
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


def _of(c: Case, n: int) -> str:
    return f"{num(n)} of {num(c.expected_count)} steps"


Failing = list[tuple[int, float | None]]  # (step, value; None: not logged), light for runs failing everywhere


Tolerance = tuple[float, Literal["profile", "rtol"]] | None
RuleOutcome = tuple[Verdict, Failing, str, Tolerance]  # verdict, failing steps, what was observed, median's tolerance


def _listed(points: Failing, near: list[float], most: int = 5) -> str:
    def one(p: tuple[int, float | None]) -> str:
        value = _point(*p).value
        shown = "not logged" if value is None else value if isinstance(value, str) else measured(value, near)
        return f"step {num(p[0])}: {shown}"

    text = ", ".join(one(p) for p in points[:most])
    return text + (f" and {len(points) - most} more" if len(points) > most else "")


def band(c: Case) -> RuleOutcome:
    assert isinstance(c.e, Band)
    e = c.e
    obs, every = c.observed()
    inside = every and obs.min is not None and e.contains(obs.min) and e.contains(obs.max)  # type: ignore[arg-type]
    bad: Failing = [] if inside else [(s, v) for s, v in c.points if not e.contains(v)]
    near = [float(v) for v in (e.min, e.max) if v is not None]
    where = (
        f"max {measured(obs.max, near)} at step {num(obs.max_step)}, "  # type: ignore[arg-type]
        f"min {measured(obs.min, near)} at step {num(obs.min_step)}"  # type: ignore[arg-type]
        if obs.max is not None
        else "no finite value"
    )
    if bad:
        return "fail", bad, f"{where}; outside at {_of(c, len(bad))}: {_listed(bad, near)}", None
    return "pass", [], f"{where}; {_of(c, len(c.logged))} judged", None


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
    rel = f"{num(float(f'{off / abs(e.value) * 100:.3g}'))}%" if e.value else f"{num(off)} off"
    pct = f"{num(round(tol * 100, 10))}%"
    text = (
        f"median {measured(med, [e.value])} over {_of(c, len(points))}, {rel} from {num(e.value)}; "
        f"tolerance {pct} ({'from the profile' if own is not None else '--rtol'})"
    )
    return ("pass" if ok else "fail"), [], text, (tol, "profile" if own is not None else "rtol")


def exact(c: Case) -> RuleOutcome:
    assert isinstance(c.e, Exact)
    e = c.e
    if isinstance(e.at, AtStep) and not c.logged:
        return "error", [(e.at.step, None)], f"not logged at step {num(e.at.step)}", None
    every = c.logged_values.count(e.value) == len(c.logged)  # at C speed: == as `contains` compares
    bad: Failing = [] if every else [(s, v) for s, v in c.points if not e.contains(v)]
    if bad:
        return "fail", bad, f"not {num(e.value)} at {_of(c, len(bad))}: {_listed(bad, [e.value])}", None
    return (
        "pass",
        [],
        f"{num(e.value)} at {_of(c, len(c.logged))}"
        if len(c.logged) != 1
        else f"{num(e.value)} at step {num(c.logged[0])}",
        None,
    )


def presence(c: Case) -> RuleOutcome:
    missing: Failing = [(s, None) for s in c.covered if s not in c.values and s != c.unfinished]
    if missing:
        return "fail", missing, f"not logged at {_of(c, len(missing))}: {named_steps([s for s, _ in missing])}", None
    return "pass", [], f"logged at {_of(c, len(c.covered))}", None


@dataclass(frozen=True)
class Rule:
    """How one kind is judged."""

    judge: Callable[[Case], RuleOutcome]
    needs_values: bool  # no value at the steps it covers is an error before the rule runs
    judges_steps: bool  # steps_judged counts the steps covered, not the values read (presence)


def rule(e: Expectation) -> Rule:
    match e:
        case Band():
            return Rule(band, needs_values=True, judges_steps=False)
        case Median():
            return Rule(median, needs_values=True, judges_steps=False)
        case Exact():  # at one step, a missing value is the rule's own error
            return Rule(exact, needs_values=False, judges_steps=False)
        case Presence():
            return Rule(presence, needs_values=False, judges_steps=True)
        case _:
            assert_never(e)


# --- one run against one profile ---------------------------------------------------------


UNKNOWN_SHOWN = 25  # unknown keys named one by one; the rest are counted


def judge(
    profile: ProfileExport,
    run: Run,
    *,
    rtol: float = DEFAULT_RTOL,
    exclude_steps: Iterable[int] | StepRanges = (),
) -> Judgement:
    """Every expectation of `profile` held against `run`. `exclude_steps`: steps, or StepRanges."""
    if not rtol > 0:
        raise ValueError(f"rtol must be above 0, got {rtol}")
    excluded = StepRanges.of(exclude_steps)
    renames = profile.renames()
    run = fold(run, renames)  # a run read without the renames (the API): nothing moves when read_run folded them
    results: list[Result] = []
    not_judged: list[NotJudged] = []
    reached = _Reached(run)
    for m in profile.metrics:
        keys = m.members or [m.key]
        if not m.expectations:
            for key in keys:
                names = (key, *(old for old, new in renames.items() if new == key))
                seen = any(n in run.series or n in run.unread for n in names)
                logged = "logged by the run" if seen else "not logged by the run"
                reason = f"the profile gives no range ({logged})"
                not_judged.append(NotJudged(metric=key, reason=reason, no_range=True, logged=seen))
            continue
        for key in keys:
            facts = _KeyFacts(key, run, excluded)
            for i, e in enumerate(m.expectations):
                r = _one(m, key, i, e, run, facts, reached, excluded, rtol)
                if isinstance(r, NotJudged):
                    not_judged.append(r)
                else:
                    results.append(r)
    # Keys the catalog does not document (patterns such as eval/{dataset} included): a run from a
    # newer Miles shows what the manual lacks. Named up to a cap, then counted.
    # Former names (renamed_from) are documented too: the entry says what they were.
    documented = [*(k for m in profile.metrics for k in (m.key, *m.members)), *run.step_keys.values(), *renames]
    catalog = KeySet(documented)
    unknown = [clip(key) for key in sorted({*run.series, *run.unread}) if catalog.match(key) is None]
    for key in unknown[:UNKNOWN_SHOWN]:
        not_judged.append(NotJudged(metric=key, reason="not in the manual's catalog"))
    # The rest are counted in unknown_keys (past the reader's cap, about how many: run.unread_beyond),
    # never named in not_judged after a key that is not theirs.
    rest = max(len(unknown) - UNKNOWN_SHOWN, 0) + run.unread_beyond
    unknown_keys = UnknownKeys(
        count=len(unknown) + run.unread_beyond, estimated=bool(run.unread_beyond), listed=unknown[:UNKNOWN_SHOWN]
    )
    problems = [
        Problem(
            path=f.path,
            line=f.line,
            col=f.col,
            severity="warning" if f.severity == "warning" else "error",
            code=f.code.id,
            message=f.message,
        )
        for f in sorted(_reading_problems(run, excluded, reached))
    ]
    return Judgement(
        schema_version=SCHEMA_VERSION,
        profile=profile.profile.id,
        profile_title=profile.profile.title,
        run=RunInfo(
            paths=list(run.paths),
            formats=list(run.formats),
            steps=_steps_seen(run, reached),
            excluded_steps=[Span(first=a, last=b) for a, b in excluded.spans()],
            unfinished_steps=dict(run.unfinished),
            relogged=[
                Relogged(path=path, step_key=sk, steps=[Span(first=a, last=b) for a, b in StepRanges.of(st).spans()])
                for (path, sk), st in sorted(run.relogged.items())
            ],
            unlisted_keys=run.unread_beyond,
        ),
        results=results,
        not_judged=not_judged,
        unknown_keys=unknown_keys,
        problems=problems,
        summary=Summary.model_validate(
            {
                "pass": sum(r.verdict == "pass" for r in results),
                "fail": sum(r.verdict == "fail" for r in results),
                "error": sum(r.verdict == "error" for r in results),
                "not_judged": len(not_judged) + rest,
                "problems": sum(p.severity == "error" for p in problems),
            }
        ),
    )


def _reading_problems(run: Run, excluded: StepRanges, reached: _Reached) -> list[Finding]:
    """What the readers found, the gaps in the steps held against --exclude-steps (a gap the user
    excluded is no problem of the judgement; read_run, which knows no exclusion, named them all)."""
    kept = [f for f in run.problems if f.code is not codes.STEPS_NOT_LOGGED]
    return [*kept, *gap_findings(run, excluded, reached.step_gaps)]


def judged_keys(profile: ProfileExport) -> set[str]:
    """The keys whose values a judgement reads: read_run(keys=...) keeps only these."""
    return {k for m in profile.metrics if m.expectations for k in (m.members or [m.key])}


def _steps_seen(run: Run, reached: _Reached) -> dict[str, StepsSeen]:
    out = {}
    for sk in sorted(set(run.step_keys.values())):
        logged, filled, _ = reached.step_gaps(sk)
        if logged:
            out[sk] = StepsSeen(
                first=logged[0],
                last=logged[-1],
                count=len(logged) + sum(map(len, filled)),
                no_record=[Span(first=g.start, last=g[-1]) for g in filled[:LISTED]],
            )
    return out


class _Reached(dict[str, list[int]]):
    """Step key -> the steps the run reached, from its gaps found once per step key (the first
    line, the reading problems and every expectation ask for them)."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run = run
        self.gaps: dict[str, StepGaps] = {}

    def step_gaps(self, sk: str) -> StepGaps:
        if sk not in self.gaps:
            self.gaps[sk] = self.run.step_gaps(sk)
        return self.gaps[sk]

    def __missing__(self, sk: str) -> list[int]:
        self[sk] = steps = self.step_gaps(sk).reached()
        return steps


class _KeyFacts:
    """What holds for every expectation of one key: values that are not finite numbers anywhere in
    the run, and steps two files disagree on (excluded steps dropped)."""

    def __init__(self, key: str, run: Run, excluded: StepRanges) -> None:
        values = run.series.get(key)
        self.bad: Failing = []
        if values is not None and not values.finite():
            # At C speed: the values that are not finite, of 100,000 a long run logs.
            vals = values.values()
            bad: Failing = list(compress(values.items(), map(not_, map(math.isfinite, vals))))
            self.bad = [p for p in bad if p[0] not in excluded] if excluded else bad
        self.invalid = run.invalid.get(key, {})
        self.conflicts = [c for c in run.conflicts.get(key, []) if c[0] not in excluded]
        self.names = [c for c in run.name_conflicts.get(key, []) if c[0] not in excluded]

    def errors(self) -> list[str]:
        out = []
        if self.bad:
            out.append(f"not a finite number at {count_steps(len(self.bad))}: {self._listed_bad()}")
        if self.conflicts:
            step, a, b = self.conflicts[0]
            more = f" and {len(self.conflicts) - 1} more" if len(self.conflicts) > 1 else ""
            out.append(
                f"two files disagree at {count_steps(len(self.conflicts))} (step {step}{more}): {a} and {b}"
                " (two processes logged different values; exclude the steps or give one of the files)"
            )
        if self.names:
            step, a, va, b, vb = self.names[0]
            more = f" and {len(self.names) - 1} more" if len(self.names) > 1 else ""
            out.append(
                f"two names of the key disagree at {count_steps(len(self.names))} (step {num(step)}{more}): "
                f"{a} {_listed_value(va)} and {b} {_listed_value(vb)} (a former name, renamed_from in the "
                "catalog, and the current one logged different values; neither was picked)"
            )
        return out

    def _listed_bad(self, most: int = 5) -> str:
        def one(p: tuple[int, float | None]) -> str:
            raw = self.invalid.get(p[0])
            return f"step {num(p[0])}: {raw}" if raw is not None else _listed([p], [])

        text = ", ".join(one(p) for p in self.bad[:most])
        return text + (f" and {len(self.bad) - most} more" if len(self.bad) > most else "")


def _listed_value(v: float) -> str:
    value = _point(0, v).value
    return value if isinstance(value, str) else num(value) if value is not None else "null"


def _absent(key: str, sk: str | None, run: Run) -> tuple[Verdict | None, str]:
    """Why a ranged key has no value at all: (None, reason) when it is not judged."""
    other = run.other_step.get(key)
    if other:
        return "error", f"logged only with the step key {other}, not with its own {sk} (the catalog's); not judged"
    forms = set(run.formats)
    if forms and forms <= {"ci-history"} and key not in TARGET_METRIC_KEYS:
        return None, (
            "the CI-history form records only Miles' 7 whitelisted keys (TARGET_METRIC_KEYS) and this is not one"
        )
    return "error", "not in the run: no value logged" + (f" (its step key {sk})" if sk else "")


def _one(
    m: MetricExport,
    key: str,
    i: int,
    e: Expectation,
    run: Run,
    facts: _KeyFacts,
    reached_by: _Reached,
    excluded: StepRanges,
    rtol: float,
) -> Result | NotJudged:
    values = run.series.get(key)
    sk = run.step_key(key)
    reached = reached_by[sk] if sk else sorted(values or {})
    covered, expected_count = covered_steps(e.span, reached)
    if excluded:
        covered = [s for s in covered if s not in excluded]

    def result(
        verdict: Verdict,
        judged: int,
        reason: str,
        observed: Observed,
        failing: Failing | None = None,
        tolerance: Tolerance = None,
        missing: int = 0,
    ) -> Result:
        failing = failing or []
        return Result(
            metric=key,
            expectation=i,
            kind=e.kind,
            expected=describe(e, m.unit),
            condition=e.condition,
            unit=m.unit,
            meaning=m.meaning,
            url=m.url,
            steps_expected=expected_count,
            verdict=verdict,
            steps_judged=judged,
            steps_missing=missing,
            failing_steps=[_point(*p) for p in failing[:LISTED]],
            failing_count=len(failing),
            observed=observed,
            reason=reason,
            tolerance=tolerance[0] if tolerance else None,
            tolerance_from=tolerance[1] if tolerance else None,
            logged_as=run.renamed.get(key, []),
        )

    if not values:
        verdict, why = _absent(key, sk, run)
        if verdict is None:
            return NotJudged(metric=key, expectation=i, reason=why)
        return result(verdict, 0, why, Observed())
    errors = facts.errors()
    if not covered and not errors:
        why = "every step it covers is excluded" if excluded else "the run reached none of the steps it covers"
        return NotJudged(metric=key, expectation=i, reason=why)
    unfinished = run.unfinished.get(sk) if sk else None
    case = Case(key, e, values, covered, expected_count, rtol, unfinished)
    points = case.logged  # the steps: `case.points` is made only where a rule lists them
    judging = rule(e)
    missing = [s for s in covered if s not in values and s != unfinished] if len(points) < len(covered) else []
    if missing and not judging.judges_steps:  # presence's own rule: a missing step fails it
        hint = " (a W&B CSV writes NaN as an empty cell too)" if "wandb-csv" in run.formats else ""
        errors.append(f"missing at {count_steps(len(missing))} it covers: {named_steps(missing)}{hint}")
    if errors:
        failing = sorted([*facts.bad, *((s, None) for s in missing if not judging.judges_steps)])
        return result("error", len(points), "; ".join(errors), case.observed()[0], failing, missing=len(missing))
    if not points and judging.needs_values:
        return result("error", 0, f"no value at the {_of(case, len(covered))} it covers", Observed())
    verdict, failing, reason, tolerance = judging.judge(case)
    judged = len(covered) if judging.judges_steps else len(points)
    return result(verdict, judged, reason, case.observed()[0], failing, tolerance, missing=len(missing))
