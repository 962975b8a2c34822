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

Which steps are judged, and what else is said (docs/judging.md states them in these words):

- the first steps: Miles counts a step key from 0, so for a step key the run counts step by step
  a window or `steps: N` covers steps 0 to N-1 and `at: {step: N}` covers step N; a step before
  the first step the run logged is missing (an error: the run's first steps are missing), never
  replaced by a later step;
- a step never reached: a step an expectation covers past the last step its step key reached is
  not judged (the run has not reached it), never missing;
- an unfinished step: the last step of each step key is unfinished when the run is judged live
  (--live: the run may still be writing it) or when a file's last line or record is cut; a value
  missing there is not judged (the step may still be being written), never missing, and a value
  written there is judged. Without --live the run is over: a value missing at its last step is
  an error;
- float32: values read from a form that stores float32 (TensorBoard) are compared with the
  expectation's numbers rounded to float32, so a value equal to a bound (to the exact value, to
  an end of a median's tolerance) to float32 precision is at it; the result says so (precision
  float32) and names the values that passed only so;
- nothing judged: a run where no expectation is judged is no pass: exit 1, and the summary says why;
- steps no expectation covers: the steps a judged metric's step key reached (excluded steps
  dropped) that none of its expectations covers are named in every output; they fail nothing.

The verdict they fill in is judge/verdict.py.
"""

from __future__ import annotations

import math
import statistics
import struct
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import compress
from operator import not_, sub
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
    Uncovered,
    UnknownKeys,
    Verdict,
)
from metrics_manual.model.keys import KeySet
from metrics_manual.model.kinds import DEFAULT_RTOL, covered_steps
from metrics_manual.model.phrase import count_steps, describe, measured, num
from metrics_manual.model.schema import (
    AtStep,
    Band,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    Median,
    MetricExport,
    Presence,
    ProfileExport,
    Window,
)
from metrics_manual.model.schema import Span as Steps
from metrics_manual.runs.ci_history import TARGET_METRIC_KEYS
from metrics_manual.runs.renames import fold
from metrics_manual.runs.series import (
    GAPS_FILLED_MOST,
    GAPS_FILLED_PER_STEP,
    Run,
    Series,
    StepGaps,
    StepRanges,
    gap_findings,
    named_steps,
)
from metrics_manual.runs.series import counted as counts_step_by_step  # one test of counting, the gaps' too
from metrics_manual.text import clip


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
        f"its rounding is allowed): {_listed(points, near)}"
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
        return "fail", bad, f"{where}; outside at {_of(c, len(bad))}: {_listed(bad, near)}{at32}", None
    return "pass", [], f"{where}; {_of(c, len(c.logged))} judged{at32}", None


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
        f"median {measured(med, [e.value])} over {_of(c, len(points))}, {rel} from {num(e.value)}; "
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
        return "fail", bad, f"not {num(e.value)} at {_of(c, len(bad))}: {_listed(bad, [e.value])}{at32}", None
    return (
        "pass",
        [],
        (
            f"{num(e.value)} at {_of(c, len(c.logged))}"
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
        return "fail", missing, f"not logged at {_of(c, len(missing))}: {named_steps([s for s, _ in missing])}", None
    return "pass", [], f"logged at {_of(c, len(c.covered))}", None


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
    live: bool = False,
) -> Judgement:
    """Every expectation of `profile` held against `run`. `exclude_steps`: steps, or StepRanges.
    `live`: the run may still be writing, so the last step of each step key is unfinished (a value
    missing there is not judged); else the run is over and a value missing there is an error."""
    if not rtol > 0:
        raise ValueError(f"rtol must be above 0, got {rtol}")
    excluded = StepRanges.of(exclude_steps)
    renames = profile.renames()
    run = fold(run, renames)  # a run read without the renames (the API): nothing moves when read_run folded them
    results: list[Result] = []
    not_judged: list[NotJudged] = []
    uncovered: list[Uncovered] = []
    reached = _Reached(run)
    unfinished = _unfinished(run, reached, live)
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
            covers: list[list[int]] = []
            for i, e in enumerate(m.expectations):
                r, skipped, covered = _one(m, key, i, e, run, facts, reached, excluded, rtol, unfinished)
                results += [r] if r is not None else []
                not_judged += skipped
                covers.append(covered)
            if (u := _uncovered(key, run, reached, excluded, covers)) is not None:
                uncovered.append(u)
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
            unfinished_steps={sk: step for sk, (step, _) in unfinished.items()},
            live=live,
            relogged=[
                Relogged(path=path, step_key=sk, steps=[Span(first=a, last=b) for a, b in StepRanges.of(st).spans()])
                for (path, sk), st in sorted(run.relogged.items())
            ],
            unlisted_keys=run.unread_beyond,
        ),
        results=results,
        not_judged=not_judged,
        uncovered=uncovered,
        unknown_keys=unknown_keys,
        problems=problems,
        summary=Summary.model_validate(
            {
                "pass": sum(r.verdict == "pass" for r in results),
                "fail": sum(r.verdict == "fail" for r in results),
                "error": sum(r.verdict == "error" for r in results),
                "not_judged": len(not_judged) + rest,
                "uncovered": len(uncovered),
                "problems": sum(p.severity == "error" for p in problems),
                "nothing_judged": None if results else _why_nothing(not_judged, excluded),
            }
        ),
    )


def _why_nothing(not_judged: list[NotJudged], excluded: StepRanges) -> str:
    """Why no expectation was judged, in words: a run where nothing is judged is no pass."""
    if excluded and any(n.reason == EXCLUDED for n in not_judged):
        return "--exclude-steps leaves no step that an expectation covers"
    return "no expectation of the profile could be judged on this run (not judged lists why)"


def _unfinished(run: Run, reached: _Reached, live: bool) -> dict[str, tuple[int, str]]:
    """Step key -> its unfinished step and why: the last step the run reached, when the run is judged
    live (--live: it may still be writing that step), else when a file's last line is cut."""
    if live:
        out = {}
        for sk in sorted(set(run.step_keys.values())):
            if steps := reached[sk]:
                out[sk] = (steps[-1], "the run is judged live, --live")
        return out
    return {sk: (step, "a file's last line or record is cut") for sk, step in run.unfinished.items()}


def _uncovered(
    key: str, run: Run, reached_by: _Reached, excluded: StepRanges, covers: list[list[int]]
) -> Uncovered | None:
    """The steps of a judged key no expectation of it covers (excluded ones dropped): judged by nothing."""
    values = run.series.get(key)
    if not values:
        return None  # an error of its own, or not judged: it has no steps to cover
    sk = run.step_key(key)
    steps = reached_by[sk] if sk else list(values)
    if excluded:
        steps = [s for s in steps if s not in excluded]
    if not steps:
        return None
    # A cover holds only steps of `steps` and others outside [first, last]: as long and inside, it is all of them.
    if any(len(c) == len(steps) and c[0] >= steps[0] and c[-1] <= steps[-1] for c in covers if c):
        return None
    left = _minus(_spans(steps), _spans(sorted(set().union(*covers))))
    if not left:
        return None
    count = sum(b - a + 1 for a, b in left)
    return Uncovered(metric=key, steps=[Span(first=a, last=b) for a, b in left[:LISTED]], count=count, of=len(steps))


def _spans(steps: list[int]) -> list[tuple[int, int]]:
    """Sorted distinct steps as [first, last] runs of consecutive steps; at C speed where they are one run."""
    if not steps:
        return []
    if steps[-1] - steps[0] == len(steps) - 1:
        return [(steps[0], steps[-1])]
    breaks = list(compress(range(1, len(steps)), map((1).__ne__, map(sub, steps[1:], steps[:-1]))))
    starts = [0, *breaks]
    ends = [*(i - 1 for i in breaks), len(steps) - 1]
    return [(steps[a], steps[b]) for a, b in zip(starts, ends)]


def _minus(spans: list[tuple[int, int]], out: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The steps of `spans` not in `out` (both sorted, disjoint), as spans."""
    left: list[tuple[int, int]] = []
    j = 0
    for a, b in spans:
        while j < len(out) and out[j][1] < a:
            j += 1
        k = j
        while a <= b and k < len(out) and out[k][0] <= b:
            if out[k][0] > a:
                left.append((a, out[k][0] - 1))
            a = max(a, out[k][1] + 1)
            k += 1
        if a <= b:
            left.append((a, b))
    return left


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
        self._counted: dict[str, bool] = {}

    def step_gaps(self, sk: str) -> StepGaps:
        if sk not in self.gaps:
            self.gaps[sk] = self.run.step_gaps(sk)
        return self.gaps[sk]

    def counted(self, sk: str) -> bool:
        """Whether the run counts `sk` step by step (the gap rule's test: runs/series.py `counted`)."""
        if sk not in self._counted:
            self._counted[sk] = counts_step_by_step(self.step_gaps(sk).logged, sk)
        return self._counted[sk]

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


def _covered(span: Steps, reached: list[int], counted: bool) -> tuple[list[int], int, range, int]:
    """The steps `span` covers (covered_steps: of the steps the run reached), how many it expects,
    which of them are the run's first steps the run has no record of, and how many such steps there
    are (more than those when past the cap below). Miles counts a step key from 0
    (rollout/step is the rollout id from 0; train/step is rollout_id * steps_per_rollout + step_id),
    so for a step key the run counts step by step, the first N steps are steps 0 to N-1: when the
    first step the run logged is later, the steps before it are missing, never replaced by later ones.
    Like the gaps, they are filled in while they stay within the run's size (a hostile run starting
    at step 2^62 and a profile's `steps: 10**30` must not make judge list 2^62 steps)."""
    covered, expected = covered_steps(span, reached)
    start = reached[0] if counted and reached else 0
    if not start:
        return covered, expected, range(0), 0
    match span:
        case Window(first=n) | FirstSteps(count=n):
            room = max(GAPS_FILLED_PER_STEP * len(reached), GAPS_FILLED_MOST)
            first = range(min(start, n, room))
            return [*first, *reached[: bisect_left(reached, n)]], expected, first, min(start, n)
        case AtStep(step=n):
            return covered, expected, range(n, n + 1) if n < start else range(0), int(n < start)
        case EveryStep():
            return covered, expected, range(0), 0
        case _:
            assert_never(span)


EXCLUDED = "every step it covers is excluded"
NOT_YET = "the step may still be being written"


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
    unfinished: Mapping[str, tuple[int, str]],
) -> tuple[Result | None, list[NotJudged], list[int]]:
    """One expectation of one key: its result (None when it is not judged at all), what of it is not
    judged and why, and the steps it covers (for the steps no expectation covers)."""
    values = run.series.get(key)
    sk = run.step_key(key)
    reached = reached_by[sk] if sk else sorted(values or {})
    covered, expected_count, first, first_count = _covered(e.span, reached, bool(sk) and reached_by.counted(sk or ""))
    if excluded:
        covered = [s for s in covered if s not in excluded]
    covers = covered
    judging = rule(e)
    float32 = key in run.float32 or any(old in run.float32 for old in run.renamed.get(key, ()))

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
            precision="float32" if float32 and judging.compares_values else None,
            logged_as=run.renamed.get(key, []),
        )

    if not values:
        verdict, why = _absent(key, sk, run)
        if verdict is None:
            return None, [NotJudged(metric=key, expectation=i, reason=why)], []
        return result(verdict, 0, why, Observed()), [], []
    skipped: list[NotJudged] = []
    # A step past the last the run reached: the run has not got there (yet); not judged, never missing.
    last = reached[-1]
    if covered and covered[-1] > last:
        beyond = [s for s in covered if s > last]
        covered = covered[: len(covered) - len(beyond)]
        them = "it" if len(beyond) == 1 else "them"
        why = f"not judged at {named_steps(beyond)}: the run has not reached {them} (its last {sk or 'step'} is {last})"
        skipped.append(NotJudged(metric=key, expectation=i, reason=why))
    # The unfinished last step of its step key: a value missing there may be on its way.
    step, why = unfinished.get(sk or "", (None, ""))
    if step is not None and step in covered and step not in values:
        covered = [s for s in covered if s != step]
        skipped.append(NotJudged(metric=key, expectation=i, reason=f"not judged at step {step}: {NOT_YET} ({why})"))
    errors = facts.errors()
    if not covered and not errors:
        if not skipped:
            why = EXCLUDED if excluded else "the run reached none of the steps it covers"
            skipped.append(NotJudged(metric=key, expectation=i, reason=why))
        return None, skipped, covers
    case = Case(key, e, values, covered, expected_count, rtol, float32)
    points = case.logged  # the steps: `case.points` is made only where a rule lists them
    missing = [s for s in covered if s not in values] if len(points) < len(covered) else []
    if missing and not judging.judges_steps:  # presence's own rule: a missing step fails it
        head = [s for s in missing if s in first] if first else []
        rest = missing[len(head) :]  # the first steps come first
        if head:
            more = f" and {first_count - len(first):,} more" if first_count > len(first) else ""  # past the cap
            errors.append(
                f"the run's first steps are missing: {named_steps(head)}{more} (the first {sk} it logged is "
                f"{reached[0]}; Miles counts steps from 0, and the expectation covers the run's first steps)"
            )
        if rest:
            hint = " (a W&B CSV writes NaN as an empty cell too)" if "wandb-csv" in run.formats else ""
            errors.append(f"missing at {count_steps(len(rest))} it covers: {named_steps(rest)}{hint}")
    if errors:
        failing = sorted([*facts.bad, *((s, None) for s in missing if not judging.judges_steps)])
        observed = case.observed()[0]
        return result("error", len(points), "; ".join(errors), observed, failing, missing=len(missing)), skipped, covers
    if not points and judging.needs_values:
        return result("error", 0, f"no value at the {_of(case, len(covered))} it covers", Observed()), skipped, covers
    verdict, failing, reason, tolerance = judging.judge(case)
    judged = len(covered) if judging.judges_steps else len(points)
    r = result(verdict, judged, reason, case.observed()[0], failing, tolerance, missing=len(missing))
    return r, skipped, covers
