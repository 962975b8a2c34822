"""Judge one run against a profile: pass, fail or error for every expectation of every metric.

For each expectation of each ranged key: the steps it covers (judge/steps.py), the errors that make
a pass unearned (judge/unearned.py, and a missing step here), then its kind's rule (judge/rules.py);
then the keys the catalog does not document and the verdict, judge/verdict.py, built of them all.
Besides (docs/judging.md states them in these words):

- nothing judged: a run where no expectation is judged is no pass: exit 1, and the summary says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.judge.rules import Case, Failing, Tolerance, point, rule, steps_of
from metrics_manual.judge.steps import Reached, covered, steps_seen, uncovered, unfinished
from metrics_manual.judge.unearned import KeyFacts, absent
from metrics_manual.judge.verdict import (
    LISTED,
    SCHEMA_VERSION,
    Judgement,
    NotJudged,
    Observed,
    Problem,
    Relogged,
    Result,
    RunInfo,
    Span,
    Summary,
    Uncovered,
    UnknownKeys,
    Verdict,
)
from metrics_manual.model.keys import KeySet
from metrics_manual.model.phrase import count_steps, describe
from metrics_manual.model.schema import Expectation, MetricExport, ProfileExport
from metrics_manual.model.tolerance import DEFAULT_RTOL
from metrics_manual.runs.renames import fold
from metrics_manual.runs.run import Run, gap_findings
from metrics_manual.runs.steps import StepRanges, named_steps
from metrics_manual.text import clip

UNKNOWN_SHOWN = 25  # unknown keys named one by one; the rest are counted
EXCLUDED = "every step it covers is excluded"
NOT_YET = "the step may still be being written"


def judged_keys(profile: ProfileExport) -> set[str]:
    """The keys whose values a judgement reads: read_run(keys=...) keeps only these."""
    return {k for m in profile.metrics if m.expectations for k in (m.members or [m.key])}


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
    run = fold(
        run, profile.renames()
    )  # a run read without the renames (the API): nothing moves when read_run folded them
    reached = Reached(run)
    left_open = unfinished(run, reached, live)
    results, not_judged, uncovered_keys = _metrics(profile, run, reached, excluded, rtol, left_open)
    unknown_named, unknown_keys, rest = _unknown(profile, run)
    not_judged += unknown_named
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
        run=_run_info(run, reached, excluded, left_open, live),
        results=results,
        not_judged=not_judged,
        uncovered=uncovered_keys,
        unknown_keys=unknown_keys,
        problems=problems,
        summary=Summary.model_validate(
            {
                "pass": sum(r.verdict == "pass" for r in results),
                "fail": sum(r.verdict == "fail" for r in results),
                "error": sum(r.verdict == "error" for r in results),
                "not_judged": len(not_judged) + rest,
                "uncovered": len(uncovered_keys),
                "problems": sum(p.severity == "error" for p in problems),
                "nothing_judged": None if results else _why_nothing(not_judged, excluded),
            }
        ),
    )


def _metrics(
    profile: ProfileExport,
    run: Run,
    reached: Reached,
    excluded: StepRanges,
    rtol: float,
    left_open: Mapping[str, tuple[int, str]],
) -> tuple[list[Result], list[NotJudged], list[Uncovered]]:
    """Every expectation of every key the profile ranges: the results, what is not judged, and the
    steps of a judged key no expectation covers."""
    renames = profile.renames()
    results: list[Result] = []
    not_judged: list[NotJudged] = []
    uncovered_keys: list[Uncovered] = []
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
            facts = KeyFacts(key, run, excluded)
            covers: list[list[int]] = []
            for i, e in enumerate(m.expectations):
                target = _Target(m, key, i, e, run)
                r, skipped, covered_steps = _one(target, facts, reached, excluded, rtol, left_open)
                results += [r] if r is not None else []
                not_judged += skipped
                covers.append(covered_steps)
            if (u := uncovered(key, run, reached, excluded, covers)) is not None:
                uncovered_keys.append(u)
    return results, not_judged, uncovered_keys


def _unknown(profile: ProfileExport, run: Run) -> tuple[list[NotJudged], UnknownKeys, int]:
    """Keys the catalog does not document (patterns such as eval/{dataset} included): a run from a
    newer Miles shows what the manual lacks. Named up to a cap, then counted; and how many are only
    counted. Former names (renamed_from) are documented too: the entry says what they were."""
    renames = profile.renames()
    documented = [*(k for m in profile.metrics for k in (m.key, *m.members)), *run.step_keys.values(), *renames]
    catalog = KeySet(documented)
    unknown = [clip(key) for key in sorted({*run.series, *run.unread}) if catalog.match(key) is None]
    named = [NotJudged(metric=key, reason="not in the manual's catalog") for key in unknown[:UNKNOWN_SHOWN]]
    # The rest are counted in unknown_keys (past the reader's cap, about how many: run.unread_beyond),
    # never named in not_judged after a key that is not theirs.
    rest = max(len(unknown) - UNKNOWN_SHOWN, 0) + run.unread_beyond
    unknown_keys = UnknownKeys(
        count=len(unknown) + run.unread_beyond, estimated=bool(run.unread_beyond), listed=unknown[:UNKNOWN_SHOWN]
    )
    return named, unknown_keys, rest


def _run_info(
    run: Run, reached: Reached, excluded: StepRanges, left_open: Mapping[str, tuple[int, str]], live: bool
) -> RunInfo:
    return RunInfo(
        paths=list(run.paths),
        formats=list(run.formats),
        steps=steps_seen(run, reached),
        excluded_steps=[Span(first=a, last=b) for a, b in excluded.spans()],
        unfinished_steps={sk: step for sk, (step, _) in left_open.items()},
        live=live,
        relogged=[
            Relogged(path=path, step_key=sk, steps=[Span(first=a, last=b) for a, b in StepRanges.of(st).spans()])
            for (path, sk), st in sorted(run.relogged.items())
        ],
        unlisted_keys=run.unread_beyond,
    )


def _why_nothing(not_judged: list[NotJudged], excluded: StepRanges) -> str:
    """Why no expectation was judged, in words: a run where nothing is judged is no pass."""
    if excluded and any(n.reason == EXCLUDED for n in not_judged):
        return "--exclude-steps leaves no step that an expectation covers"
    return "no expectation of the profile could be judged on this run (not judged lists why)"


def _reading_problems(run: Run, excluded: StepRanges, reached: Reached) -> list[Finding]:
    """What the readers found, the gaps in the steps held against --exclude-steps (a gap the user
    excluded is no problem of the judgement; read_run, which knows no exclusion, named them all)."""
    kept = [f for f in run.problems if f.code is not codes.STEPS_NOT_LOGGED]
    return [*kept, *gap_findings(run, excluded, reached.step_gaps)]


# --- one expectation of one key ------------------------------------------------------------


@dataclass
class _Target:
    """One expectation (the `i`th of metric `m`) of one key of it, held against the run."""

    m: MetricExport
    key: str
    i: int
    e: Expectation
    run: Run

    def result(
        self,
        expected_count: int,
        verdict: Verdict,
        judged: int,
        reason: str,
        observed: Observed,
        failing: Failing | None = None,
        tolerance: Tolerance = None,
        missing: int = 0,
    ) -> Result:
        """Its result in the verdict."""
        failing = failing or []
        key, e, m, run = self.key, self.e, self.m, self.run
        return Result(
            metric=key,
            expectation=self.i,
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
            failing_steps=[point(*p) for p in failing[:LISTED]],
            failing_count=len(failing),
            observed=observed,
            reason=reason,
            tolerance=tolerance[0] if tolerance else None,
            tolerance_from=tolerance[1] if tolerance else None,
            precision="float32" if self.float32 and rule(e).compares_values else None,
            logged_as=run.renamed.get(key, []),
        )

    @property
    def float32(self) -> bool:
        """Whether its values were read from a form that stores float32 (under its name or a former one)."""
        run = self.run
        return self.key in run.float32 or any(old in run.float32 for old in run.renamed.get(self.key, ()))

    def not_judged(self, why: str) -> NotJudged:
        return NotJudged(metric=self.key, expectation=self.i, reason=why)


def _one(
    t: _Target,
    facts: KeyFacts,
    reached_by: Reached,
    excluded: StepRanges,
    rtol: float,
    left_open: Mapping[str, tuple[int, str]],
) -> tuple[Result | None, list[NotJudged], list[int]]:
    """One expectation of one key: its result (None when it is not judged at all), what of it is not
    judged and why, and the steps it covers (for the steps no expectation covers)."""
    run, key = t.run, t.key
    values = run.series.get(key)
    sk = run.step_key(key)
    reached = reached_by[sk] if sk else sorted(values or {})
    steps, expected_count, first, first_count = covered(t.e.span, reached, bool(sk) and reached_by.counted(sk or ""))
    if excluded:
        steps = [s for s in steps if s not in excluded]
    covers = steps
    if not values:
        verdict, why = absent(key, sk, run)
        if verdict is None:
            return None, [t.not_judged(why)], []
        return t.result(expected_count, verdict, 0, why, Observed()), [], []
    steps, skipped = _judged_steps(t, steps, reached[-1], sk, left_open.get(sk or ""))
    errors = facts.errors()
    if not steps and not errors:
        if not skipped:
            skipped.append(t.not_judged(EXCLUDED if excluded else "the run reached none of the steps it covers"))
        return None, skipped, covers
    judging = rule(t.e)
    case = Case(key, t.e, values, steps, expected_count, rtol, t.float32)
    points = case.logged  # the steps: `case.points` is made only where a rule lists them
    missing = [s for s in steps if s not in values] if len(points) < len(steps) else []
    if missing and not judging.judges_steps:  # presence's own rule: a missing step fails it
        errors += _missing(missing, first, first_count, sk, reached[0], run)
    if errors:
        failing = sorted([*facts.bad, *((s, None) for s in missing if not judging.judges_steps)])
        observed = case.observed()[0]
        r = t.result(expected_count, "error", len(points), "; ".join(errors), observed, failing, missing=len(missing))
        return r, skipped, covers
    if not points and judging.needs_values:
        why = f"no value at the {steps_of(case, len(steps))} it covers"
        return t.result(expected_count, "error", 0, why, Observed()), skipped, covers
    verdict, failing, reason, tolerance = judging.judge(case)
    judged = len(steps) if judging.judges_steps else len(points)
    r = t.result(expected_count, verdict, judged, reason, case.observed()[0], failing, tolerance, len(missing))
    return r, skipped, covers


def _judged_steps(
    t: _Target, steps: list[int], last: int, sk: str | None, open_step: tuple[int, str] | None
) -> tuple[list[int], list[NotJudged]]:
    """The covered steps judged, and those that are not, with why: a step past the last the run
    reached (`last`: the run has not got there yet, never missing) and the unfinished last step of
    its step key when the value is missing there (it may be on its way)."""
    skipped: list[NotJudged] = []
    if steps and steps[-1] > last:
        beyond = [s for s in steps if s > last]
        steps = steps[: len(steps) - len(beyond)]
        them = "it" if len(beyond) == 1 else "them"
        why = f"not judged at {named_steps(beyond)}: the run has not reached {them} (its last {sk or 'step'} is {last})"
        skipped.append(t.not_judged(why))
    values = t.run.series[t.key]
    if open_step is not None and open_step[0] in steps and open_step[0] not in values:
        step, why = open_step
        steps = [s for s in steps if s != step]
        skipped.append(t.not_judged(f"not judged at step {step}: {NOT_YET} ({why})"))
    return steps, skipped


def _missing(missing: list[int], first: range, first_count: int, sk: str | None, start: int, run: Run) -> list[str]:
    """The errors of covered steps the run reached and finished without a value: the run's first
    steps (before the first it logged, `start`) apart from the rest."""
    errors = []
    head = [s for s in missing if s in first] if first else []
    rest = missing[len(head) :]  # the first steps come first
    if head:
        more = f" and {first_count - len(first):,} more" if first_count > len(first) else ""  # past the cap
        errors.append(
            f"the run's first steps are missing: {named_steps(head)}{more} (the first {sk} it logged is "
            f"{start}; Miles counts steps from 0, and the expectation covers the run's first steps)"
        )
    if rest:
        hint = " (a W&B CSV writes NaN as an empty cell too)" if "wandb-csv" in run.formats else ""
        errors.append(f"missing at {count_steps(len(rest))} it covers: {named_steps(rest)}{hint}")
    return errors
