"""The values of one metric in a run: step -> value, kept compact (runs/run.py holds a run's series)."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import ItemsView, Iterable, Iterator, MutableMapping, ValuesView


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

    def values_array(self) -> array[float]:
        """The values, in the order of their steps (the array itself: summed at C speed)."""
        self._settle()
        return self._values

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
        return zip(self._series.steps_array(), self._series.values_array())


class _Values(ValuesView[float]):
    def __init__(self, series: Series) -> None:
        super().__init__(series)
        self._series = series

    def __iter__(self) -> Iterator[float]:
        return iter(self._series.values_array())
