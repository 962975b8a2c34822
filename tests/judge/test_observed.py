"""What a verdict observes of a metric's points, computed at C speed, is what its plain definition gives."""

from __future__ import annotations

import math
import statistics

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.judge.rules import observed_finite
from metrics_manual.judge.verdict import Observed


def _plain(points: list[tuple[int, float]]) -> tuple[Observed, bool]:
    """The definition: the least and the greatest finite value, each at the first step it is found."""
    finite = [(s, v) for s, v in points if math.isfinite(v)]
    every = len(finite) == len(points)
    if not finite:
        return Observed(count=len(points)), every
    lo = min(finite, key=lambda p: p[1])
    hi = max(finite, key=lambda p: p[1])
    median = statistics.median(v for _, v in finite)
    return Observed(min=lo[1], max=hi[1], median=median, count=len(points), min_step=lo[0], max_step=hi[0]), every


values = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 1.0, math.nan]))


@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=30))
def test_observed_is_its_plain_definition(vals: list[float]) -> None:
    points = list(enumerate(vals))
    fast, plain = observed_finite(list(range(len(vals))), vals), _plain(points)
    assert repr(fast) == repr(plain)  # repr: -0.0 and 0.0 apart, NaN equal to itself
