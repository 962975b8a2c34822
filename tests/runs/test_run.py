"""Series: the compact step -> value store of a run behaves as a dict does."""

from __future__ import annotations

import math
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs.series import Run, Series, gaps

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


# --- the steps a run reached: a gap between two logged steps is reached, at the run's stride ---


@settings(max_examples=100, deadline=None)
@given(
    first=st.integers(0, 10**6),
    stride=st.integers(1, 50),
    count=st.integers(3, 200),
    data=st.data(),
)
def test_a_step_key_reaches_every_step_between_its_first_and_last_at_its_stride(
    first: int, stride: int, count: int, data: st.DataObject
) -> None:
    every = [first + i * stride for i in range(count)]
    # Fewer than half of the inner steps dropped: the stride stays the most common distance.
    dropped = data.draw(st.sets(st.sampled_from(every[1:-1]), max_size=(count - 2) // 3))
    logged = [s for s in every if s not in dropped]
    run = Run(series={"train/x": Series((s, 1.0) for s in logged)}, step_keys={"train": "train/step"})
    assert run.reached("train/step") == every
    gaps = run.step_gaps("train/step")
    assert sorted(s for g in gaps.filled for s in g) == sorted(dropped) and gaps.beyond == []


def test_a_distance_that_is_no_whole_number_of_strides_is_no_gap() -> None:
    # An eval logged every 10 steps and at the run's last step: nothing is missing.
    assert gaps([0, 10, 20, 30, 35]) == []
    assert gaps([0, 10, 20, 40, 45]) == [range(30, 40, 10)]
    assert gaps([0, 10, 30, 35]) == []  # no distance more common than another: no stride to tell by
    assert gaps([0, 1, 2, 4]) == [range(3, 4)]
    assert gaps([0, 5]) == [] and gaps([]) == []


def test_a_jump_too_long_to_fill_is_an_error_of_the_run_and_not_filled() -> None:
    steps = [*range(10), 2**62]
    run = Run(series={"train/x": Series((s, 1.0) for s in steps)}, step_keys={"train": "train/step"})
    assert run.reached("train/step") == steps
    assert [len(g) for g in run.step_gaps("train/step").beyond] == [2**62 - 10]
