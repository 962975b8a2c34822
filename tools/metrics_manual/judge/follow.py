"""judge --follow: a run judged while it runs, each finding printed the moment it is certain.

Every POLL seconds the run's files are read on (runs/follow.py). When they gained anything, the
run is judged live (`judge(live=True)`: the last step of each step key is unfinished, the rule of
judge/steps.py) and the findings that are certain and were not printed before are printed, in
step order. A step is finished once a later step of its step key is written. The findings, each
printed as soon as it is certain (docs/judging.md states them in these words):

- out of range: the first failing step of a band, an exact expectation or a corridor, as soon as
  its value is read, an expectation that is an error too (a value written is certain; a later
  record of its step that supersedes it is printed too);
- a median that fails, once every step it covers is finished;
- not a finite number: a metric's first such value (NaN, an infinity, a string ...), as soon as it
  is read (likewise);
- superseded: a value printed out of range or not a finite number that a later record of its step
  supersedes (a retry, a later life), with the value that stands; when that is in range the alarm
  is withdrawn, and the expectation's next failing step is printed when it is read;
- missing: the first step a metric is missing at, once a later step of its step key is
  finished (one step more than a value: another process may still be logging its part of a
  step); a metric never logged, from its step key's first step on; a step with no record at
  all, once per step key;
- a conflict: two files (or two names of a key) with different values at a step, once that
  step is finished;
- a reading problem (a corrupt line, a key logged without its step key ...), when it is read.

Each is printed once: out of range and a median once per expectation, the others once per metric
(no record: once per step key; a reading problem: once per place; superseded: once a record). A cut last line is waited for,
never printed while it may still be written. At the end the files are read to their end and the
findings the end makes certain (those at the last step) come just before the verdict.

It ends on SIGINT (Ctrl-C) or SIGTERM, after `idle` seconds without new data, or once every step
key the run logs has finished a step past `until_step` (then the steps past it are excluded from
the verdict). The verdict at the end is `judge`'s on the same files (`live`: as `judge --live`).
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from types import FrameType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from metrics_manual.diagnostics import codes
from metrics_manual.judge.judging import judge
from metrics_manual.judge.report_text import problem_line
from metrics_manual.judge.rules import point
from metrics_manual.judge.verdict import Judgement, NonFinite, Point, Problem, Result
from metrics_manual.model.kinds import numbers
from metrics_manual.model.phrase import measured, num
from metrics_manual.model.schema import Expectation, ProfileExport
from metrics_manual.runs.collect import same_value
from metrics_manual.runs.follow import RunFollower
from metrics_manual.runs.run import Run
from metrics_manual.runs.steps import StepRanges
from metrics_manual.runs.values import MAX_STEP
from metrics_manual.text import inert

POLL = 0.2  # seconds between two looks at the run's files
# Reading problems a finding of its own says (a gap: no_record; a value that is no number: not_finite).
_SAID_OTHERWISE = frozenset({codes.STEPS_NOT_LOGGED.id, codes.NOT_A_NUMBER.id})
_WAITED_FOR = frozenset({codes.CUT_LAST_LINE.id})  # while the run writes: the line may still be whole

FindingKind = Literal[
    "out_of_range", "median", "not_finite", "missing", "no_record", "conflict", "problem", "superseded"
]
_LABEL = {"fail": "FAIL  ", "error": "ERROR ", "warning": "WARNING "}


class LiveFinding(BaseModel):
    """One finding of `judge --follow`, as `--format json` prints it: one object a line."""

    model_config = ConfigDict(extra="forbid")

    finding: FindingKind
    verdict: Literal["fail", "error", "warning"]
    message: str
    metric: str | None = None
    expectation: int | None = None
    step_key: str | None = None
    step: int | None = None
    value: float | NonFinite | None = None
    expected: str | None = None
    url: str | None = None
    problem: Problem | None = None
    time: str = ""  # when it was reported (UTC, ISO 8601)

    def text(self) -> str:
        """The finding as one line for people: the local time, the verdict it makes (a reading problem
        as every command prints one), the message, the metric's link; control characters escaped."""
        try:
            clock = datetime.fromisoformat(self.time).astimezone().strftime("%H:%M:%S ")
        except ValueError:
            clock = ""
        label = "" if self.problem is not None else _LABEL[self.verdict]
        link = f"  {self.url}" if self.url else ""
        return inert(f"{clock}{label}{self.message}{link}")


@dataclass(frozen=True)
class _Horizon:
    """Up to where the steps of a step key are certain: a value before `values` (its unfinished
    step), a missing value before `missing` (the step before it: a later step is finished); None
    when no step of it is unfinished (the run is over). `reached`: how many steps it reached, the first."""

    values: int | None
    missing: int | None
    reached: int
    first: int | None

    def value_certain(self, step: int) -> bool:
        return self.values is None or step < self.values

    def missing_certain(self, step: int) -> bool:
        return self.missing is None or step < self.missing


def _horizons(verdict: Judgement, run: Run) -> dict[str, _Horizon]:
    """Per step key the run reached steps of, where certainty ends (from the verdict's unfinished steps)."""
    out = {}
    for sk in run.all_step_keys():
        reached = run.reached(sk)
        if not reached:
            continue
        last = verdict.run.unfinished_steps.get(sk)
        if last is None:
            out[sk] = _Horizon(None, None, len(reached), reached[0])
        else:
            before = [s for s in reached[-2:] if s < last]
            out[sk] = _Horizon(last, before[-1] if before else -1, len(reached), reached[0])
    return out


def findings(
    profile: ProfileExport, verdict: Judgement, run: Run, excluded: StepRanges, seen: Collection[object] = ()
) -> Iterator[tuple[tuple[object, ...], LiveFinding]]:
    """(identity, finding) of each certain finding of a verdict of `run` (live, or at the end) whose
    identity is not in `seen`: a finding of the same identity is reported once."""
    horizon = _horizons(verdict, run)
    quiet = _SAID_OTHERWISE | (_WAITED_FOR if verdict.run.live else frozenset())
    no_record = {sk: [(g.first, g.last) for g in steps.no_record] for sk, steps in verdict.run.steps.items()}
    for p in verdict.problems:
        identity: tuple[object, ...] = ("problem", p.path, p.line, p.col, p.code, p.message)
        if p.code not in quiet and identity not in seen:
            yield identity, LiveFinding(finding="problem", verdict=p.severity, message=problem_line(p), problem=p)
    for sk, gaps in no_record.items():
        h = horizon.get(sk)
        if h is not None and gaps and h.missing_certain(gaps[0][0]) and ("no_record", sk) not in seen:
            first = gaps[0][0]
            message = f"{sk} {num(first)}: no record at all, and the run went on (every metric of it is missing there)"
            yield (
                ("no_record", sk),
                LiveFinding(finding="no_record", verdict="error", step_key=sk, step=first, message=message),
            )
    for r in verdict.results:
        sk = run.step_key(r.metric) or ""
        h = horizon.get(sk)
        if h is not None:
            yield from _of_result(profile, r, sk, h, run, no_record.get(sk, []), seen)
    for key in sorted({*run.conflicts, *run.name_conflicts}):
        sk = run.step_key(key) or ""
        h = horizon.get(sk)
        if h is None or ("conflict", key) in seen:
            continue
        steps = [
            (c[0], f"two files disagree: {c[1]} and {c[2]}") for c in run.conflicts.get(key, []) if c[0] not in excluded
        ] + [
            (c[0], f"two names of the key disagree: {c[1]} {num(c[2])} and {c[3]} {num(c[4])}")
            for c in run.name_conflicts.get(key, [])
            if c[0] not in excluded
        ]
        if certain := sorted(c for c in steps if h.value_certain(c[0])):
            step, why = certain[0]
            yield (
                ("conflict", key),
                LiveFinding(
                    finding="conflict",
                    verdict="error",
                    metric=key,
                    step_key=sk,
                    step=step,
                    message=f"{key} at {sk} {num(step)}: {why}",
                ),
            )


def _of_result(
    profile: ProfileExport,
    r: Result,
    sk: str,
    h: _Horizon,
    run: Run,
    gaps: list[tuple[int, int]],
    seen: Collection[object],
) -> Iterator[tuple[tuple[object, ...], LiveFinding]]:
    """The certain findings of one result: its first failing step of each kind (the failing steps
    come in step order), a median's fail, a metric never logged."""
    ids: dict[FindingKind, tuple[object, ...]] = {
        "missing": ("missing", r.metric),
        "not_finite": ("not_finite", r.metric),
        "out_of_range": ("out_of_range", r.metric, r.expectation),
    }
    wanted = {kind for kind, identity in ids.items() if identity not in seen}
    for pt in r.failing_steps:
        if not wanted:
            break
        kind: FindingKind = (
            "missing" if pt.value is None else "not_finite" if isinstance(pt.value, str) else "out_of_range"
        )
        if kind in wanted and (found := _at_step(profile, r, sk, h, run, gaps, kind, pt)) is not None:
            wanted.discard(kind)
            yield ids[kind], found
    if r.verdict == "fail" and not r.failing_steps and ("median", r.metric, r.expectation) not in seen:
        # A fail of all its steps together (a median of the first steps): certain once the run
        # reached a step past them, or at the end.
        if h.values is None or (r.steps_judged == r.steps_expected and h.reached > r.steps_expected):
            yield ("median", r.metric, r.expectation), _finding(r, sk, "median", f"{r.metric}: {r.reason}")
    never = r.verdict == "error" and r.steps_judged == 0 and not r.failing_steps and r.metric not in run.series
    if never and h.first is not None and h.missing_certain(h.first) and ids["missing"] not in seen:
        message = f"{r.metric}: {r.reason}; the run went past {sk} {num(h.first)}"
        yield ids["missing"], _finding(r, sk, "missing", message, step=h.first)


def _at_step(
    profile: ProfileExport,
    r: Result,
    sk: str,
    h: _Horizon,
    run: Run,
    gaps: list[tuple[int, int]],
    kind: FindingKind,
    pt: Point,
) -> LiveFinding | None:
    """The finding of a failing step of `kind`, or None while it is not certain: a value out of range or
    not a finite number is certain once it is read (a later record of its step may supersede it:
    `superseded` says so), a missing value once a later step of its step key is finished."""
    at = f"{r.metric} at {sk} {num(pt.step)}: "
    if kind == "missing":
        if not h.missing_certain(pt.step) or any(a <= pt.step <= b for a, b in gaps):
            return None  # a step with no record at all is one finding of its step key
        return _finding(r, sk, kind, f"{at}not logged, and the run finished a later step", step=pt.step)
    if isinstance(pt.value, str):
        raw = run.invalid.get(r.metric, {}).get(pt.step)
        message = f"{at}not a finite number: {raw if raw is not None else pt.value}"
        return _finding(r, sk, kind, message, step=pt.step, value=pt.value)
    near = numbers(_expectation(profile, r))
    condition = f" ({r.condition})" if r.condition else ""
    message = f"{at}{measured(pt.value or 0.0, near)}; expected {r.expected}{condition}"
    return _finding(r, sk, kind, message, step=pt.step, value=pt.value)


def _finding(
    r: Result, sk: str, kind: FindingKind, message: str, *, step: int | None = None, value: Any = None
) -> LiveFinding:
    """A finding of result `r`: out of range and a median are fails of its expectation, the rest errors."""
    of_expectation = kind in ("out_of_range", "median")
    return LiveFinding(
        finding=kind,
        verdict="fail" if of_expectation else "error",
        metric=r.metric,
        expectation=r.expectation if of_expectation else None,
        step_key=sk,
        step=step,
        value=value,
        expected=r.expected if of_expectation else None,
        url=r.url,
        message=message if kind != "median" else f"{message}; expected {r.expected}",
    )


def _superseded(said: LiveFinding, verdict: Judgement, run: Run, excluded: StepRanges) -> LiveFinding | None:
    """A value printed (out of range, or not a finite number) that a later record of its step
    superseded (a retry, a later life), with what stands now; None while it still stands."""
    metric, step = said.metric or "", said.step if said.step is not None else -1
    values = run.series.get(metric)
    if values is None or step in excluded or step not in values:
        return None
    now = values[step]
    if same_value(now, float(said.value if said.value is not None else "nan")):
        return None
    results = [r for r in verdict.results if r.metric == metric]
    if said.expectation is not None:
        results = [r for r in results if r.expectation == said.expectation]
    failing = not math.isfinite(now) or any(pt.step == step for r in results for pt in r.failing_steps)
    shown = num(now) if math.isfinite(now) else str(point(step, now).value)
    old = said.value if isinstance(said.value, str) else num(said.value or 0.0)
    stands = (
        "it fails still" if failing else "in range: the alarm is withdrawn, the verdict judges the record that stands"
    )
    return said.model_copy(
        update={
            "finding": "superseded",
            "verdict": ("fail" if math.isfinite(now) else "error") if failing else "warning",
            "value": point(step, now).value,
            "message": f"{metric} at {said.step_key} {num(step)}: {old} superseded by {shown}, a later record of "
            f"the step (a retry, or a later life); {stands}",
        }
    )


def _expectation(profile: ProfileExport, r: Result) -> Expectation:
    """The expectation a result judged (a family's member shares its family's)."""
    return profile.metric(r.metric).expectations[r.expectation]


def _order(f: LiveFinding) -> tuple[int, int, str]:
    """Reading problems first (in the order of their files), then by step."""
    return (0 if f.finding == "problem" else 1, f.step if f.step is not None else -1, f.metric or "")


class Reported:
    """The findings reported so far, by identity: each is reported once. A value reported (out of range,
    not a finite number) is watched: a later record of its step that supersedes it is reported too,
    and when what stands is in range, the identity is free again for a later step."""

    def __init__(self) -> None:
        self.seen: set[tuple[object, ...]] = set()
        self.values: dict[tuple[object, ...], LiveFinding] = {}  # identity -> the value finding reported

    def new(self, profile: ProfileExport, verdict: Judgement, run: Run, excluded: StepRanges) -> list[LiveFinding]:
        """The certain findings of `verdict` not reported before, in the order they are reported."""
        out = []
        for identity, said in list(self.values.items()):
            if (found := _superseded(said, verdict, run, excluded)) is not None:
                out.append(found)
                self.values[identity] = found
                if found.verdict == "warning":  # withdrawn: the next value of it is news
                    del self.values[identity]
                    self.seen.discard(identity)
        for identity, f in findings(profile, verdict, run, excluded, self.seen):
            if identity not in self.seen:
                self.seen.add(identity)
                out.append(f)
                if f.finding in ("out_of_range", "not_finite"):
                    self.values[identity] = f
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return [f.model_copy(update={"time": stamp}) for f in sorted(out, key=_order)]


# --- the loop ----------------------------------------------------------------------------------


class _Stop:
    """SIGINT and SIGTERM, caught while following: the loop ends and prints the verdict. A second
    signal acts as it would without judge (the handlers are put back at the first)."""

    def __init__(self) -> None:
        self.signal: str | None = None
        self._old: dict[int, Any] = {}  # signal -> the handler it had

    def _caught(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signal.Signals(signum).name
        self.restore()

    def restore(self) -> None:
        for signum, handler in self._old.items():
            signal.signal(signum, handler)
        self._old.clear()

    @contextmanager
    def caught(self) -> Iterator[_Stop]:
        try:
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._old[signum] = signal.signal(signum, self._caught)
        except ValueError:  # not the main thread: signals are not ours to catch
            self.restore()
        try:
            yield self
        finally:
            self.restore()


def _past(verdict: Judgement, run: Run, step: int) -> bool:
    """Whether every step key the run logged has finished a step past `step`."""
    finished = [h.missing for h in _horizons(verdict, run).values()]  # the last finished step of each
    return bool(finished) and all(last is None or last > step for last in finished)


def follow(
    profile: ProfileExport,
    follower: RunFollower,
    report: Callable[[LiveFinding], None],
    *,
    rtol: float,
    excluded: StepRanges,
    live: bool = False,
    idle: float | None = None,
    until_step: int | None = None,
    poll: float = POLL,
    stop: threading.Event | None = None,
) -> tuple[Judgement, Run, str]:
    """Follow the run until it ends (a signal, `idle` seconds without new data, `until_step`, or
    `stop` set, as by a signal, from another thread), calling `report` with each finding the moment
    it is certain. Returns the verdict at the end (judge's on the files as they are then, `live` as
    judge --live), its run, and why it ended."""
    reported = Reported()
    last_data = time.monotonic()
    why = ""
    with _Stop().caught() as caught:
        while True:
            if follower.poll():
                last_data = time.monotonic()
                run = follower.snapshot()
                verdict = judge(profile, run, rtol=rtol, exclude_steps=excluded, live=True)
                for f in reported.new(profile, verdict, run, excluded):
                    report(f)
                if until_step is not None and _past(verdict, run, until_step):
                    why = f"every step key finished a step past {until_step}"
                    break
            if caught.signal or (stop is not None and stop.is_set()):
                why = f"{caught.signal or 'stop'} received"
                break
            if idle is not None and time.monotonic() - last_data >= idle:
                why = f"no new data for {num(idle)} s"
                break
            time.sleep(poll)
    if until_step is not None and until_step < MAX_STEP:
        excluded = StepRanges([*excluded.spans(), (until_step + 1, MAX_STEP)])
    run = follower.final()
    verdict = judge(profile, run, rtol=rtol, exclude_steps=excluded, live=live)
    for f in reported.new(profile, verdict, run, excluded):
        report(f)
    return verdict, run, why


__all__ = ["follow", "LiveFinding", "POLL", "findings", "Reported"]
