"""--exclude-steps takes ASCII digits and spaces only: another script's digits are no step."""

from __future__ import annotations

import pytest

from metrics_manual.cli.judge import parse_steps


@pytest.mark.parametrize("text", ["\uff11", "\u0663", "3-\u0669", "\u20033", "1\u00a0-2"])
def test_digits_and_spaces_of_other_scripts_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a step or a range of steps"):
        parse_steps(text)


def test_ascii_steps_and_ranges_are_read() -> None:
    got = parse_steps(" 3 , 7 - 9\t")
    assert (got.firsts, got.lasts) == ([3, 7], [3, 9])
