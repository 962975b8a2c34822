"""Series: the compact step -> value store of a run behaves as a dict does."""

from __future__ import annotations

import math
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.runs.run import Run, gap_findings
from metrics_manual.runs.series import Series
from metrics_manual.runs.steps import StepRanges, gaps

ops = st.lists(
    st.tuples(st.sampled_from(["set", "replace", "del", "has"]), st.integers(-50, 500), st.floats(allow_nan=False)),
    max_size=200,
)


@settings(max_examples=200, deadline=None)
@given(ops)
def test_series_behaves_as_a_dict_sorted_by_step(operations: list[tuple[str, int, float]]) -> None:
    series, model = Series(), {}
    for op, step, value in operations:
        if op == "set":
            series[step] = value
            model[step] = value
        elif op == "replace":  # as a reader puts a value: True when the step was there (a re-logged step)
            assert series.replace(step, value) == (step in model)
            model[step] = value
        elif op == "has":  # a reader's check while reading: late steps are not put in place for it
            assert (step in series) == (step in model) and len(series) == len(model)
        elif step in model:
            del series[step]
            del model[step]
    assert list(series) == sorted(model)
    assert dict(series.items()) == model and series == model
    assert list(series.values()) == [model[s] for s in sorted(model)]
    assert len(series) == len(model) and all(s in series for s in model) and 10_000 not in series
    assert series.get(10_000) is None


def test_a_log_in_falling_step_order_reads_as_in_rising_order() -> None:
    falling, rising = Series(), Series()
    for step in range(2000, -1, -1):
        assert not falling.replace(step, step / 2)
    for step in range(2001):
        rising[step] = step / 2
    assert falling.replace(7, 1.0) and list(falling.items())[7] == (7, 1.0)
    rising[7] = 1.0
    assert falling == rising and list(falling) == list(range(2001)) and falling.steps_array() == rising.steps_array()


def test_non_finite_values_are_kept() -> None:
    series = Series([(0, math.nan), (1, math.inf)])
    assert math.isnan(series[0]) and series[1] == math.inf


def test_a_long_series_takes_a_fraction_of_a_dicts_memory() -> None:
    n = 100_000
    series = Series((i, float(i)) for i in range(n))
    compact = sys.getsizeof(series.steps_array()) + sys.getsizeof(series.values_array())
    as_dict = sys.getsizeof({i: float(i) for i in range(n)}) + n * sys.getsizeof(1.5)
    assert compact * 4 < as_dict


# --- the steps a run reached: a step key counted step by step reaches every step from its first to its last ---


def _run_at(steps: list[int]) -> Run:
    return Run(series={"train/x": Series((s, 1.0) for s in steps)}, step_keys={"train": "train/step"})


@settings(max_examples=100, deadline=None)
@given(first=st.integers(0, 10**6), count=st.integers(3, 300), data=st.data())
def test_a_step_key_counted_step_by_step_reaches_every_step_between_its_first_and_last(
    first: int, count: int, data: st.DataObject
) -> None:
    every = list(range(first, first + count))
    # Any inner steps but the second dropped: two steps in a row show the key is counted step by step.
    dropped = data.draw(st.sets(st.sampled_from(every[2:-1]))) if count > 3 else set()
    run = _run_at([s for s in every if s not in dropped])
    assert run.reached("train/step") == every
    gaps = run.step_gaps("train/step")
    assert sorted(s for g in gaps.filled for s in g) == sorted(dropped) and gaps.beyond == []


def test_a_step_key_never_logged_at_two_steps_in_a_row_has_no_gap_to_tell() -> None:
    # An eval logged every 10 steps and at the run's last step, a sampled history: nothing is missing.
    assert gaps([0, 10, 20, 30, 35]) == [] and gaps([0, 47]) == [] and gaps([]) == []
    # Counted step by step: whatever the other distances, and however many records are gone.
    assert gaps([0, 1, 47]) == [range(2, 47)]
    assert gaps([0, 2, 4, 6, 7, 8, 11]) == [range(1, 2), range(3, 4), range(5, 6), range(9, 11)]


def test_a_jump_past_the_run_s_size_is_not_filled_and_is_one_error_per_step_key() -> None:
    run = _run_at([*range(10), 2**62])
    assert run.reached("train/step") == [*range(10), 2**62]
    assert [len(g) for g in run.step_gaps("train/step").beyond] == [2**62 - 10]
    # Thousands of long gaps: some filled (up to the run's size), one finding for the rest.
    run = _run_at([0, 1, *range(1000, 3_000_000, 1000)])
    filled, beyond = run.step_gaps("train/step")[1:]
    assert 0 < sum(map(len, filled)) <= 10 * 3001 and beyond
    found = gap_findings(run)
    assert [f.severity for f in found] == ["warning", "error"] and all(f.code.id == "MM514" for f in found)
    # Steps the user excluded are no gap.
    everything = StepRanges([(0, 3_000_000)])
    assert gap_findings(run, everything) == []
