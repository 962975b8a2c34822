"""Series: the compact step -> value store of a run behaves as a dict does."""

from __future__ import annotations

import math
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs.series import Series

ops = st.lists(
    st.tuples(st.sampled_from(["set", "del"]), st.integers(-50, 500), st.floats(allow_nan=False)), max_size=200
)


@settings(max_examples=200, deadline=None)
@given(ops)
def test_series_behaves_as_a_dict_sorted_by_step(operations: list[tuple[str, int, float]]) -> None:
    series, model = Series(), {}
    for op, step, value in operations:
        if op == "set":
            series[step] = value
            model[step] = value
        elif step in model:
            del series[step]
            del model[step]
    assert list(series) == sorted(model)
    assert dict(series.items()) == model and series == model
    assert list(series.values()) == [model[s] for s in sorted(model)]
    assert len(series) == len(model) and all(s in series for s in model) and 10_000 not in series
    assert series.get(10_000) is None


def test_non_finite_values_are_kept() -> None:
    series = Series([(0, math.nan), (1, math.inf)])
    assert math.isnan(series[0]) and series[1] == math.inf


def test_a_long_series_takes_a_fraction_of_a_dicts_memory() -> None:
    n = 100_000
    series = Series((i, float(i)) for i in range(n))
    compact = sys.getsizeof(series._steps) + sys.getsizeof(series._values)
    as_dict = sys.getsizeof({i: float(i) for i in range(n)}) + n * sys.getsizeof(1.5)
    assert compact * 4 < as_dict
