"""The steps of a run: which step keys it counts step by step, the gaps in them, sets of steps as
ranges, and steps named in words."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from operator import sub
from typing import NamedTuple

GAPS_FILLED_PER_STEP = 10  # steps filled in per step the run logged: memory and time stay the run's size
GAPS_FILLED_MOST = 10_000  # or this many, for a short run


# Step keys Miles logs at every step they count, whatever the run's settings: train/step is
# log_train_step's rollout_id * num_steps_per_rollout + step_id, logged at each optimizer step
# (miles/backends/training_utils/log_utils.py at 31f1ca96). Not rollout/step: compute_rollout_step
# (miles/utils/metric_utils.py) gives the rollout's id, or with --wandb-always-use-train-step the
# train step the rollout starts at, a stride the logs do not state; nor eval/step, logged every
# --eval-interval rollouts (and a snapshot eval skips the steps it finds its fleet busy at).
EVERY_STEP = frozenset({"train/step"})


def counted(steps: Sequence[int], step_key: str = "") -> bool:
    """Whether the run counts a step key step by step, so a step between its first and last with no
    record is a lost record: Miles logs it at every step (EVERY_STEP), or the run logged two of its
    steps (sorted, distinct) in a row somewhere."""
    if len(steps) < 2:
        return False
    if step_key in EVERY_STEP or steps[-1] - steps[0] == len(steps) - 1:  # at C speed, the common case
        return True
    return 1 in map(sub, steps[1:], steps[:-1])


def gaps(steps: Sequence[int], step_key: str = "") -> list[range]:
    """The steps with no record between the first and the last of `steps` (sorted, distinct) of a
    step key the run counts step by step (`counted`). Another step key logged only at an interval
    (eval/step) has no gap to tell."""
    if len(steps) < 2 or steps[-1] - steps[0] == len(steps) - 1 or not counted(steps, step_key):
        return []  # at C speed, the common case: every step from the first to the last
    return [range(a + 1, b) for a, b in zip(steps, steps[1:]) if b - a > 1]


class StepGaps(NamedTuple):
    logged: list[int]  # the steps the run logged anything at
    filled: list[range]  # no record there, and the run went on: reached, so a value is missing
    beyond: list[range]  # no record there, and more steps than the run's size allows to fill in: an error

    def reached(self) -> list[int]:
        """The steps logged and those filled in, in order."""
        return sorted([*self.logged, *(s for g in self.filled for s in g)]) if self.filled else self.logged


def split_gaps(found: list[range], logged: int) -> tuple[list[range], list[range]]:
    """The gaps filled in, in order, while they stay within the run's size (GAPS_FILLED_PER_STEP a
    logged step, at least GAPS_FILLED_MOST), and those past it: a hostile step far past the others
    must not make judge fill in a million steps for every expectation."""
    filled: list[range] = []
    beyond: list[range] = []
    room = max(GAPS_FILLED_PER_STEP * logged, GAPS_FILLED_MOST)
    for g in found:
        if len(g) <= room:
            filled.append(g)
            room -= len(g)
        else:
            beyond.append(g)
    return filled, beyond


class StepRanges:
    """A set of steps held as sorted, merged [first, last] ranges: `--exclude-steps 0-9999999`
    costs one pair, not ten million steps."""

    __slots__ = ("firsts", "lasts")

    def __init__(self, spans: Iterable[tuple[int, int]] = ()) -> None:
        self.firsts: list[int] = []
        self.lasts: list[int] = []
        for lo, hi in sorted(spans):
            if self.lasts and lo <= self.lasts[-1] + 1:
                self.lasts[-1] = max(self.lasts[-1], hi)
            else:
                self.firsts.append(lo)
                self.lasts.append(hi)

    @classmethod
    def of(cls, steps: Iterable[int] | StepRanges) -> StepRanges:
        """Ranges from steps (or ranges as they are)."""
        return steps if isinstance(steps, StepRanges) else cls((s, s) for s in steps)

    def __contains__(self, step: object) -> bool:
        if not isinstance(step, int):
            return False
        i = bisect_right(self.firsts, step) - 1
        return i >= 0 and step <= self.lasts[i]

    def __bool__(self) -> bool:
        return bool(self.firsts)

    def covers(self, first: int, last: int) -> bool:
        """Whether every step from `first` to `last` is in the set."""
        i = bisect_right(self.firsts, first) - 1
        return i >= 0 and last <= self.lasts[i]

    def spans(self) -> list[tuple[int, int]]:
        return list(zip(self.firsts, self.lasts))


def named_steps(steps: Sequence[int]) -> str:
    """Steps named as a message names them: "step 7", "steps 3, 7-9"."""
    return f"step{'s' if len(steps) > 1 else ''} {compact(steps)}"


def compact(steps: Iterable[int], most: int = 20) -> str:
    """Steps as ranges in the form --exclude-steps takes: "3, 7-9"; past `most` ranges, "and N more"."""
    spans = StepRanges.of(steps).spans()
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans[:most])
    return text + (f" and {len(spans) - most} more ranges" if len(spans) > most else "")
