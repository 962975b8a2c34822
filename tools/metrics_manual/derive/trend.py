"""Whether a metric drifts over the steps its runs were measured on: how far a derived band reaches.

A band measured on a run's first N steps is evidence about those steps. When the metric shows
no trend over them (a gradient norm, a KL, a clip fraction hovering around one level), the band
holds at every step, and derive writes it without `steps`, so a longer run is judged at its later
steps too. When it trends (a reward that climbs, answers that grow), a later step is outside what
was measured, and the band keeps the steps it was measured on.

The test: Spearman's rank correlation between step and value, computed in each run and averaged
over the runs. It is the simplest measure of "goes up or down with the step" that a spike, a skew
or a per-seed offset does not move (ranks, within a run). The metric trends when the average is
`TREND_RHO` or more in size. For a straight drift under Gaussian noise of deviation sigma, a
correlation of 0.3 is a drift of about one sigma over the measured steps (rho = d / sqrt(d^2 + 12
sigma^2) for a drift d): a metric below it would need about twice its measured length again before
its drift alone reached past the margin the default method adds (a quarter of the band's width,
1.5 sigma or more). A run of fewer than `FEWEST_STEPS` values tells too little (the correlation of
pure noise is about 1 / sqrt(n)), so such a metric keeps its steps.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

TREND_RHO = 0.3
FEWEST_STEPS = 10


@dataclass(frozen=True)
class Trend:
    """What the runs show: the average rank correlation of value and step (None: too few steps)."""

    rho: float | None
    fewest: int  # the fewest values a run has

    @property
    def trending(self) -> bool:
        """Whether the band must keep the steps it was measured on (a trend, or too few steps to tell)."""
        return self.rho is None or abs(self.rho) >= TREND_RHO

    def __str__(self) -> str:
        if self.rho is None:
            return (
                f"too few steps to tell a trend ({self.fewest} in a run, fewer than {FEWEST_STEPS}): "
                "the band keeps the steps measured"
            )
        if self.trending:
            return f"rank correlation with the step {self.rho:+.2f}: a trend ({TREND_RHO} or more), the band keeps the steps measured"
        return f"rank correlation with the step {self.rho:+.2f}: no trend (under {TREND_RHO}), the band holds at every step"


def ranks(values: Sequence[float]) -> list[float]:
    """Each value's rank (1 for the least), ties given the mean of the ranks they share."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(points: Sequence[tuple[int, float]]) -> float:
    """The rank correlation of value with step; 0 when either is constant (nothing moves with the step)."""
    if len(points) < 2:
        return 0.0
    steps = ranks([float(s) for s, _ in points])
    values = ranks([v for _, v in points])
    if len(set(values)) < 2 or len(set(steps)) < 2:
        return 0.0
    return statistics.correlation(steps, values)


def trend(runs: Sequence[Sequence[tuple[int, float]]]) -> Trend:
    """The trend the runs' (step, value) points show, each run's own correlation averaged."""
    fewest = min((len(points) for points in runs), default=0)
    if fewest < FEWEST_STEPS:
        return Trend(None, fewest)
    return Trend(statistics.fmean(spearman(points) for points in runs), fewest)
