"""A value read from a run, at the manual's digits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from metrics_manual.model.phrase import measured


def test_a_measured_value_reads_at_four_digits_and_more_where_a_limit_would_read_equal() -> None:
    assert measured(0.123456789012) == "0.1235"
    assert measured(40.333333333333336) == "40.33"
    assert measured(1234567.891) == "1,234,568"  # the whole part stays whole
    assert measured(4.9500001, [4.95]) == "4.9500001"  # not 4.95: it is outside a maximum of 4.95
    assert measured(4.95, [4.95]) == "4.95"


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), st.lists(st.floats(-1e12, 1e12), max_size=3))
def test_it_stays_close_and_never_reads_as_a_limit_it_differs_from(value: float, near: list[float]) -> None:
    shown = float(measured(value, near).replace(",", ""))
    assert abs(shown - value) <= abs(value) * 5e-4 + 1e-300
    assert all(shown != n or value == n for n in near)
