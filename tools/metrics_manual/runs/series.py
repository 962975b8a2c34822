"""One run as the readers give it: a series of values per metric key, indexed by its step.

The readers (one per file form a Miles run writes) produce a `Run`; `judge` holds it
against a profile and `derive` computes ranges from several. This module is the
contract between them.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, ItemsView, Iterable, Iterator, MutableMapping, Sequence, ValuesView
from dataclasses import dataclass, field
from operator import sub
from typing import NamedTuple

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding


class Series(MutableMapping[int, float]):
    """step -> value of one metric, in two arrays sorted by step.

    A dict takes about 100 bytes a value; this takes 16, so a long run's kept values fit
    in little memory. Logs come in step order, so a new step is an append; a repeated step
    (a retry, a second folder) is found by bisection. A new step earlier than the last waits
    in `_late` until the series is read whole: inserting each into the arrays would make a log
    written in falling step order quadratic.
    """

    __slots__ = ("_late", "_steps", "_values")

    def __init__(self, items: Iterable[tuple[int, float]] = ()) -> None:
        self._steps = array("q")
        self._values = array("d")
        self._late: dict[int, float] = {}  # new steps below the last, not yet in the arrays
        for step, value in items:
            self[step] = value

    def __setitem__(self, step: int, value: float) -> None:
        self.replace(step, value)

    def replace(self, step: int, value: float) -> bool:
        """Set the value at `step`; True when the step was there already (a re-logged step)."""
        steps = self._steps
        if not steps or step > steps[-1]:  # the usual case: logs come in step order
            steps.append(step)
            self._values.append(value)
            return False
        i = bisect_left(steps, step)
        if i < len(steps) and steps[i] == step:
            self._values[i] = value
            return True
        was = step in self._late  # a new step below the last: put in place when the series is read
        self._late[step] = value
        return was

    def _settle(self) -> None:
        """The late steps put in place, at once: the series is about to be read whole."""
        if self._late:
            late, self._late = self._late, {}
            self._merge(late)

    def _merge(self, new: dict[int, float]) -> None:
        if not new:
            return
        at = bisect_left(self._steps, min(new))
        merged = dict(zip(self._steps[at:], self._values[at:])) | new
        del self._steps[at:], self._values[at:]
        order = sorted(merged)
        self._steps.extend(order)
        self._values.extend(map(merged.__getitem__, order))

    def as_dict(self) -> dict[int, float]:
        """step -> value as a dict (built at C speed), for looking up many steps."""
        self._settle()
        return dict(zip(self._steps, self._values))

    def finite(self) -> bool:
        """Whether every value is finite, at C speed: a sum of finite values that stays finite."""
        self._settle()
        return math.isfinite(sum(self._values)) or all(map(math.isfinite, self._values))

    def _find(self, step: object) -> int:
        self._settle()
        if isinstance(step, int):
            i = bisect_left(self._steps, step)
            if i < len(self._steps) and self._steps[i] == step:
                return i
        raise KeyError(step)

    def __getitem__(self, step: int) -> float:
        return self._values[self._find(step)]

    def __delitem__(self, step: int) -> None:
        i = self._find(step)
        del self._steps[i]
        del self._values[i]

    def __contains__(self, step: object) -> bool:
        if step in self._late:  # during reading (a retry's check), without settling
            return True
        try:
            self._find(step)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[int]:
        self._settle()
        return iter(self._steps)

    def __len__(self) -> int:
        return len(self._steps) + len(self._late)

    def steps_array(self) -> array[int]:
        """The steps, in order (the array itself: compared at C speed)."""
        self._settle()
        return self._steps

    def items(self) -> ItemsView[int, float]:
        return _Items(self)

    def values(self) -> ValuesView[float]:
        return _Values(self)

    def __repr__(self) -> str:
        return f"Series({dict(self.items())!r})"


class _Items(ItemsView[int, float]):
    def __init__(self, series: Series) -> None:
        super().__init__(series)
        self._series = series

    def __iter__(self) -> Iterator[tuple[int, float]]:
        self._series._settle()
        return zip(self._series._steps, self._series._values)


class _Values(ValuesView[float]):
    def __init__(self, series: Series) -> None:
        super().__init__(series)
        self._series = series

    def __iter__(self) -> Iterator[float]:
        self._series._settle()
        return iter(self._series._values)


@dataclass
class Run:
    """The parts of one run, merged: metric key -> step -> value.

    A non-finite value is kept as float('nan') / float('inf'): it is an error to judge,
    never a missing value. `problems` holds what the readers found (corrupt lines,
    cut last lines as warnings), with the file and line.
    """

    paths: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    series: dict[str, Series] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)
    # Namespace -> the key that holds its step (the catalog's step_keys): judge needs it
    # to know which steps a metric's run reached.
    step_keys: dict[str, str] = field(default_factory=dict)
    # Keys the run logged whose values were not kept (read_run's `keys` filter), at most
    # KEYS_KEPT of them; `unread_beyond` counts how many more there were (up to KEYS_COUNTED).
    unread: set[str] = field(default_factory=set)
    unread_beyond: int = 0
    # Key -> step -> what was logged where a number belongs (a string, null ...); the series holds NaN there.
    invalid: dict[str, dict[int, str]] = field(default_factory=dict)
    # Key -> (step, file, other file) where two files logged different values.
    conflicts: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    # (file, step key) -> steps logged again later in that file (a resumed run); the later record is kept.
    relogged: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    # Step key -> the step not finished (a file's last line is cut): missing values there are no error.
    unfinished: dict[str, int] = field(default_factory=dict)
    # Judged key -> the other step key it was logged with, when its own was missing from the record.
    other_step: dict[str, str] = field(default_factory=dict)
    # Key -> the former names (the catalog's renamed_from) the run logged it under; their values are this key's.
    renamed: dict[str, list[str]] = field(default_factory=dict)
    # Key -> (step, one name, its value, another name, its value) where two names of the key disagree.
    name_conflicts: dict[str, list[tuple[int, str, float, str, float]]] = field(default_factory=dict)
    # Keys with values read from a form that stores float32 (TensorBoard): judge compares them at float32 precision.
    float32: set[str] = field(default_factory=set)

    def where(self) -> str:
        """Where a finding of the whole run points: its first path (a file a GitHub annotation can name)."""
        return self.paths[0] if self.paths else "run"

    def steps(self, key: str) -> list[int]:
        """The steps at which `key` was logged, in order."""
        return sorted(self.series.get(key, {}))

    def step_key(self, key: str) -> str | None:
        """The key that holds `key`'s step, from its namespace (train/grad_norm -> train/step)."""
        return self.step_keys.get(key.split("/", 1)[0])

    def logged_steps(self, step_key: str) -> list[int]:
        """Every step of `step_key` at which the run logged anything, in order."""
        own = self.series.get(step_key)
        steps: set[int] = set(own or ())
        for key, values in self.series.items():
            # Most keys are logged at each step of their step key: an array compare, not 100,000 set adds.
            if self.step_key(key) == step_key and (own is None or values.steps_array() != own.steps_array()):
                steps.update(values)
        return sorted(steps)

    def step_gaps(self, step_key: str) -> StepGaps:
        """The steps of `step_key` the run logged, and those with no record between them (`gaps`)."""
        logged = self.logged_steps(step_key)
        return StepGaps(logged, *split_gaps(gaps(logged, step_key), len(logged)))

    def reached(self, step_key: str) -> list[int]:
        """Every step of `step_key` the run reached, in order: those it logged anything at, and
        those with no record between two it logged (up to the cap): the run went through them, so
        a metric is missing there, never "not covered"."""
        return self.step_gaps(step_key).reached()

    def reached_by(self, key: str) -> list[int]:
        """The steps the run reached that `key` is judged on: those of its step key, else its own."""
        sk = self.step_key(key)
        return self.reached(sk) if sk else self.steps(key)

    def first_steps(self, key: str, n: int) -> list[int]:
        """The first `n` steps of the run for `key`: the first `n` its step key reached (whether or
        not `key` itself was logged there), else `key`'s own first `n`.

        The one meaning of "the first N steps of a run": derive's --skip-first leaves these out,
        check excludes them when it re-judges a capture, and a band's `window` covers them.
        """
        return self.reached_by(key)[:n] if n > 0 else []


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


def gap_findings(
    run: Run, excluded: StepRanges | None = None, step_gaps: Callable[[str], StepGaps] | None = None
) -> list[Finding]:
    """A finding per step key whose steps have gaps (less those `excluded` wholly covers): a warning
    for the steps filled in (the expectations covering them are errors), an error for the rest."""
    out = []
    where = run.where()
    for sk in sorted(set(run.step_keys.values())):
        logged, filled, beyond = (step_gaps or run.step_gaps)(sk)
        if excluded:
            filled = [g for g in filled if not excluded.covers(g.start, g[-1])]
            beyond = [g for g in beyond if not excluded.covers(g.start, g[-1])]
        if not logged or not (filled or beyond):
            continue
        ran = f"(the run logged {len(logged):,} steps from {logged[0]:,} to {logged[-1]:,}, step by step)"
        for gs, severity, what in (
            (filled, "warning", "a value is missing there for every metric of it"),
            (beyond, "error", "more steps than the run logged, so they were not filled in and not judged"),
        ):
            if gs:
                many = sum(map(len, gs))
                shown = ", ".join(f"{g.start}" if len(g) == 1 else f"{g.start}-{g[-1]}" for g in gs[:5])
                more = f" and {len(gs) - 5:,} more gaps" if len(gs) > 5 else ""
                out.append(
                    Finding(
                        where,
                        1,
                        1,
                        f"{sk}: no record at {many:,} step{'s' if many != 1 else ''}: {shown}{more} {ran}; {what}",
                        severity,
                        code=codes.STEPS_NOT_LOGGED,
                    )
                )
    return out


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
