"""Which steps of a run an expectation is judged at (docs/judging.md states them in these words):

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
- steps no expectation covers: the steps a judged metric's step key reached (excluded steps
  dropped) that none of its expectations covers are named in every output; they fail nothing;
- a corridor covers the steps of its reference: a run shorter than the reference is judged on
  the steps it reached (the rest are not reached), and a run's steps past the reference's last
  are steps the corridor does not cover.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress
from operator import sub
from typing import assert_never

from metrics_manual.judge.verdict import LISTED, Span, StepsSeen, Uncovered
from metrics_manual.model.kinds import covered_steps
from metrics_manual.model.schema import AtStep, EveryStep, FirstSteps, ListedSteps, Window
from metrics_manual.model.schema import Span as Steps
from metrics_manual.runs.run import Run
from metrics_manual.runs.steps import GAPS_FILLED_MOST, GAPS_FILLED_PER_STEP, StepGaps, StepRanges
from metrics_manual.runs.steps import counted as counts_step_by_step  # one test of counting, the gaps' too


def steps_seen(run: Run, reached: Reached) -> dict[str, StepsSeen]:
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


class Reached(dict[str, list[int]]):
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
        """Whether the run counts `sk` step by step (the gap rule's test: runs/steps.py `counted`)."""
        if sk not in self._counted:
            self._counted[sk] = counts_step_by_step(self.step_gaps(sk).logged, sk)
        return self._counted[sk]

    def __missing__(self, sk: str) -> list[int]:
        self[sk] = steps = self.step_gaps(sk).reached()
        return steps


def covered(span: Steps, reached: list[int], counted: bool) -> tuple[list[int], int, range, int]:
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
        case ListedSteps(steps=listed):  # a reference's steps before the run's first: its first steps, missing
            before = bisect_left(listed, start)
            return covered, expected, range(start) if before else range(0), before
        case EveryStep():
            return covered, expected, range(0), 0
        case _:
            assert_never(span)


def unfinished(run: Run, reached: Reached, live: bool) -> dict[str, tuple[int, str]]:
    """Step key -> its unfinished step and why: the last step the run reached, when the run is judged
    live (--live: it may still be writing that step), else when a file's last line is cut."""
    if live:
        out = {}
        for sk in sorted(set(run.step_keys.values())):
            if steps := reached[sk]:
                out[sk] = (steps[-1], "the run is judged live, --live")
        return out
    return {sk: (step, "a file's last line or record is cut") for sk, step in run.unfinished.items()}


def uncovered(
    key: str, run: Run, reached_by: Reached, excluded: StepRanges, covers: list[list[int]]
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
    left = minus(spans(steps), spans(sorted(set().union(*covers))))
    if not left:
        return None
    count = sum(b - a + 1 for a, b in left)
    return Uncovered(metric=key, steps=[Span(first=a, last=b) for a, b in left[:LISTED]], count=count, of=len(steps))


def spans(steps: list[int]) -> list[tuple[int, int]]:
    """Sorted distinct steps as [first, last] runs of consecutive steps; at C speed where they are one run."""
    if not steps:
        return []
    if steps[-1] - steps[0] == len(steps) - 1:
        return [(steps[0], steps[-1])]
    breaks = list(compress(range(1, len(steps)), map((1).__ne__, map(sub, steps[1:], steps[:-1]))))
    starts = [0, *breaks]
    ends = [*(i - 1 for i in breaks), len(steps) - 1]
    return [(steps[a], steps[b]) for a, b in zip(starts, ends)]


def minus(spans: list[tuple[int, int]], out: list[tuple[int, int]]) -> list[tuple[int, int]]:
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
