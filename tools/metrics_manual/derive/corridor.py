"""A corridor from runs: its reference curve, and its tolerances from how far the runs lie from it.

The reference is the runs' mean at each step every run logged. Where the key is noisy (the mean
moves from step to step by more than NOISY of its whole range, at the median step: the noise, not
the trend, is what a curve of it would follow) the reference is a rolling median of ROLLING steps
of that mean instead, and the entry says so (`reference.rolling_median`).

Each side's tolerance is SPREAD times the largest deviation of any run from the reference on that
side, over every step: written as an absolute floor (`abs_floor_up`: the same reach at every step)
or as a share of |reference| (`rel_up`: a reach that grows with the value), whichever gives the
narrower corridor on average over the steps (a share only where the reference is never 0); derive
rounds it up to the digits asked. Every run it is derived from therefore lies inside it, SPREAD times over.

Why SPREAD = 4: the next run is not one of the runs. A run left out lies from the mean of the
others by n/(n-1) times its deviation from the mean of all (1.5 times, of three runs), and the
others' largest deviation is taken over fewer runs. Megatron-LM's compute_golden_statistics.py
(tests/functional_tests/python_test_utils/, read in a public copy, no commit pinned) recommends 1.5
times the largest relative deviation from the runs' per-step mean (its --confidence-multiplier).
Measured (tools/derive_methods.py; docs/deriving.md has the table): on generated runs, each of three
seeds passes the corridors of the other two for 74 of 100 seed sets at 4 (35 at 3, none at 1.5), a
fourth seed passes those of three for 98 (91 at 3); every miss is the gradient norm's, whose rare
spikes no three seeds foretell. On the lag example's runs (tests/derive/test_derive_corridor.py)
every seed set holds at 4 and none at 1.5.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from metrics_manual.model.phrase import measured, num, percent

SPREAD = 4.0
NOISY = 0.1
ROLLING = 5
FEWEST_STEPS = 5  # a noise test needs a few steps; fewer are taken as they are


@dataclass(frozen=True)
class Side:
    """One side of a corridor: how far it reaches, and from which deviation."""

    rel: float | None
    floor: float | None
    deviation: float  # the largest deviation of a run from the reference on this side
    step: int  # where it was
    run: str  # of which run

    def words(self) -> str:
        if self.rel is not None:
            return f"{percent(self.rel)} of |reference|"
        return num(self.floor) if self.floor is not None else "none"


@dataclass(frozen=True)
class Fit:
    """A corridor fitted to runs."""

    points: list[tuple[int, float]]  # the reference
    rolling_median: int | None  # the reference is a rolling median of the mean over this many steps
    up: Side
    down: Side
    roughness: float | None  # the median step-to-step change of the mean, as a share of its range

    def rounded(self, up: Callable[[float], float]) -> Fit:
        """The corridor with each tolerance rounded by `up` (outward: derive's digits)."""

        def side(s: Side) -> Side:
            rel, floor = (None if v is None else up(v) for v in (s.rel, s.floor))
            return Side(rel, floor, s.deviation, s.step, s.run)

        return Fit(self.points, self.rolling_median, side(self.up), side(self.down), self.roughness)

    def values(self, source: str) -> dict[str, object]:
        """The corridor's fields, as an expectation holds them (the reference's points included)."""
        return {
            "kind": "corridor",
            "reference": {
                "source": source,
                "rolling_median": self.rolling_median,
                "points": [list(p) for p in self.points],
            },
            "rel_up": self.up.rel,
            "abs_floor_up": self.up.floor,
            "rel_down": self.down.rel,
            "abs_floor_down": self.down.floor,
        }

    def words(self, runs: Sequence[str]) -> str:
        (first, _), (last, _) = self.points[0], self.points[-1]
        made = f"the mean of {', '.join(runs)} at the {num(len(self.points))} steps they all logged ({num(first)} to {num(last)})"
        if self.rolling_median is not None:
            made += (
                f"; noisy (the mean moves {percent(round(self.roughness or 0, 3))} of its range at the median step, "
                f"over {percent(NOISY)}): a rolling median of {num(self.rolling_median)} steps of it"
            )
        sides = "; ".join(
            f"{name} {s.words()} ({num(SPREAD)} times {measured(s.deviation)}, run {s.run} at step {num(s.step)})"
            for name, s in (("above", self.up), ("below", self.down))
        )
        return f"reference: {made}; tolerance {num(SPREAD)} times the largest deviation of a run: {sides}"


def rolling_median(values: Sequence[float], width: int) -> list[float]:
    """The median of each value's window of `width` steps, centred (narrower at the ends)."""
    half = width // 2
    return [statistics.median(values[max(0, i - half) : i + half + 1]) for i in range(len(values))]


def roughness(values: Sequence[float]) -> float | None:
    """The median step-to-step change of `values` as a share of their range (None: too few, or flat)."""
    spread = max(values) - min(values)
    if len(values) < FEWEST_STEPS or not spread:
        return None
    return statistics.median(abs(b - a) for a, b in zip(values, values[1:])) / spread


def fit(curves: Mapping[str, Mapping[int, float]], spread: float = SPREAD) -> Fit | str:
    """The corridor of `curves` (run name -> step -> value, every value finite), or why there is none."""
    steps = sorted(set.intersection(*(set(c) for c in curves.values())))
    if not steps:
        return "the runs share no step: a reference is their mean at the steps they all logged"
    mean = [math.fsum(c[s] for c in curves.values()) / len(curves) for s in steps]
    rough = roughness(mean)
    noisy = rough is not None and rough > NOISY
    ref = rolling_median(mean, ROLLING) if noisy else mean
    up = _side(curves, steps, ref, 1, spread)
    down = _side(curves, steps, ref, -1, spread)
    return Fit(list(zip(steps, ref)), ROLLING if noisy else None, up, down, rough)


def _side(
    curves: Mapping[str, Mapping[int, float]],
    steps: list[int],
    ref: list[float],
    sign: Literal[1, -1],
    spread: float,
) -> Side:
    """One side's tolerance: `spread` times its largest deviation, as a floor or a share, the narrower."""
    worst = (0.0, steps[0], next(iter(curves)))
    shares: list[float] = []
    for i, s in enumerate(steps):
        far = max(((c[s] - ref[i]) * sign, name) for name, c in curves.items())
        if far[0] > worst[0]:
            worst = (far[0], s, far[1])
        shares.append(max(far[0], 0.0) / abs(ref[i]) if ref[i] else math.inf)
    deviation, step, run = worst
    floor = spread * deviation
    share = max(shares) if shares and deviation else math.inf
    if math.isfinite(share):
        rel = spread * share
        # The narrower on average: a share reaches rel * mean|ref|, a floor its own value everywhere.
        if rel * statistics.fmean(abs(r) for r in ref) < floor:
            return Side(rel, None, deviation, step, run)
    return Side(None, floor, deviation, step, run)
