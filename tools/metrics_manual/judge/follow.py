"""judge --follow: a run judged while it runs, each finding printed the moment it is certain.

Every POLL seconds the run's files are read on (runs/follow.py). When they gained anything, the
run is judged live (`judge(live=True)`: the last step of each step key is unfinished, the rule of
judge/steps.py) and the findings that are certain and were not printed before are printed, in
step order. A step is finished once a later step of its step key is written. The findings, each
printed once nothing still to come can change it (docs/judging.md states them in these words):

- out of range: the first failing step of a band, an exact expectation or a corridor, once that step is
  finished (a retry of a step is logged before the next step);
- a median that fails, once every step it covers is finished;
- not a finite number: a metric's first such value (NaN, an infinity, a string ...), once its
  step is finished;
- missing: the first step a metric is missing at, once a later step of its step key is
  finished (one step more than a value: another process may still be logging its part of a
  step); a metric never logged, from its step key's first step on; a step with no record at
  all, once per step key;
- a conflict: two files (or two names of a key) with different values at a step, once that
  step is finished;
- a reading problem (a corrupt line, a key logged without its step key ...), when it is read.

Each is printed once: out of range and a median once per expectation, the others once per metric
(no record: once per step key; a reading problem: once per place). A cut last line is waited for,
never printed while it may still be written. At the end the files are read to their end and the
findings the end makes certain (those at the last step) come just before the verdict.

It ends on SIGINT (Ctrl-C) or SIGTERM, after `idle` seconds without new data, or once every step
key the run logs has finished a step past `until_step` (then the steps past it are excluded from
the verdict). The verdict at the end is `judge`'s on the same files (`live`: as `judge --live`).
"""

from __future__ import annotations

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
from metrics_manual.judge.verdict import Judgement, NonFinite, Problem, Result
from metrics_manual.model.kinds import numbers
from metrics_manual.model.phrase import measured, num
from metrics_manual.model.schema import Expectation, ProfileExport
from metrics_manual.runs.follow import RunFollower
from metrics_manual.runs.run import Run
from metrics_manual.runs.steps import StepRanges
from metrics_manual.runs.values import MAX_STEP
from metrics_manual.text import inert

POLL = 0.2  # seconds between two looks at the run's files
# Reading problems a finding of its own says (a gap: no_record; a value that is no number: not_finite).
_SAID_OTHERWISE = frozenset({codes.STEPS_NOT_LOGGED.id, codes.NOT_A_NUMBER.id})
_WAITED_FOR = frozenset({codes.CUT_LAST_LINE.id})  # while the run writes: the line may still be whole

FindingKind = Literal["out_of_range", "median", "not_finite", "missing", "no_record", "conflict", "problem"]
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
    for sk in sorted(set(run.step_keys.values())):
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
    at = f"{r.metric} at {sk} "
    ids: dict[FindingKind, tuple[object, ...]] = {
        "missing": ("missing", r.metric),
        "not_finite": ("not_finite", r.metric),
        "out_of_range": ("out_of_range", r.metric, r.expectation),
    }
    wanted = {kind for kind, identity in ids.items() if identity not in seen}
    for pt in r.failing_steps:
        if not wanted or not h.value_certain(pt.step):
            break  # the rest is later: no more is certain
        kind: FindingKind = (
            "missing" if pt.value is None else "not_finite" if isinstance(pt.value, str) else "out_of_range"
        )
        if kind not in wanted:
            continue
        if kind == "missing":
            if not h.missing_certain(pt.step) or any(a <= pt.step <= b for a, b in gaps):
                continue  # a step with no record at all is one finding of its step key
            message = f"{at}{num(pt.step)}: not logged, and the run finished a later step"
        elif isinstance(pt.value, str):
            raw = run.invalid.get(r.metric, {}).get(pt.step)
            message = f"{at}{num(pt.step)}: not a finite number: {raw if raw is not None else pt.value}"
        elif r.verdict == "fail" and pt.value is not None:
            near = numbers(_expectation(profile, r))
            condition = f" ({r.condition})" if r.condition else ""
            message = f"{at}{num(pt.step)}: {measured(pt.value, near)}; expected {r.expected}{condition}"
        else:
            continue
        wanted.discard(kind)
        verdict: Literal["fail", "error"] = "fail" if kind == "out_of_range" else "error"
        yield (
            ids[kind],
            LiveFinding(
                finding=kind,
                verdict=verdict,
                metric=r.metric,
                expectation=r.expectation if kind == "out_of_range" else None,
                step_key=sk,
                step=pt.step,
                value=pt.value,
                expected=r.expected if kind == "out_of_range" else None,
                url=r.url,
                message=message,
            ),
        )
    if r.verdict == "fail" and not r.failing_steps and ("median", r.metric, r.expectation) not in seen:
        # A fail of all its steps together (a median of the first steps): certain once the run
        # reached a step past them, or at the end.
        if h.values is None or (r.steps_judged == r.steps_expected and h.reached > r.steps_expected):
            yield (
                ("median", r.metric, r.expectation),
                LiveFinding(
                    finding="median",
                    verdict="fail",
                    metric=r.metric,
                    expectation=r.expectation,
                    step_key=sk,
                    expected=r.expected,
                    url=r.url,
                    message=f"{r.metric}: {r.reason}; expected {r.expected}",
                ),
            )
    never = r.verdict == "error" and r.steps_judged == 0 and not r.failing_steps and r.metric not in run.series
    if never and h.first is not None and h.missing_certain(h.first) and ids["missing"] not in seen:
        yield (
            ids["missing"],
            LiveFinding(
                finding="missing",
                verdict="error",
                metric=r.metric,
                step_key=sk,
                step=h.first,
                url=r.url,
                message=f"{r.metric}: {r.reason}; the run went past {sk} {num(h.first)}",
            ),
        )


def _expectation(profile: ProfileExport, r: Result) -> Expectation:
    """The expectation a result judged (a family's member shares its family's)."""
    m = next(m for m in profile.metrics if r.metric == m.key or r.metric in m.members)
    return m.expectations[r.expectation]


def _order(f: LiveFinding) -> tuple[int, int, str]:
    """Reading problems first (in the order of their files), then by step."""
    return (0 if f.finding == "problem" else 1, f.step if f.step is not None else -1, f.metric or "")


class Reported:
    """The findings reported so far, by identity: each is reported once."""

    def __init__(self) -> None:
        self.seen: set[tuple[object, ...]] = set()

    def new(self, profile: ProfileExport, verdict: Judgement, run: Run, excluded: StepRanges) -> list[LiveFinding]:
        """The certain findings of `verdict` not reported before, in the order they are reported."""
        out = []
        for identity, f in findings(profile, verdict, run, excluded, self.seen):
            if identity not in self.seen:
                self.seen.add(identity)
                out.append(f)
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
