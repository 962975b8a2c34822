"""What a logged value is: a number, a step, or neither (and then how a finding shows it)."""

from __future__ import annotations

import math
from typing import Any

MAX_STEP = 2**63 - 1  # a step is an integer from 0 to this (a signed 64-bit integer; docs/judging.md, "Limits")
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def number(value: Any) -> float | None:
    """A logged value as a float, or None when it is not a number at all.

    The strings NaN / Infinity / -Infinity (CI history) are non-finite numbers; so is null in the
    event log, which the event reader maps itself (pydantic writes NaN as null)."""
    if type(value) is float:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    return None


def as_step(value: Any) -> int | None:
    """A step value: an integer from 0 to 2^63-1 (a float with no fraction, as CSV and JSON may write it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_STEP else None
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_STEP:
        return int(value)
    return None


def not_a_step(key: str, value: Any) -> str:
    """The finding for a step key whose value is there but is no step."""
    text = shown(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else repr(value)
    return f"{key} is {text[:40]}, not a step (an integer from 0 to 2^63-1); the record was skipped"


def shown(raw: Any) -> str:
    """A logged value that is no number, in a few words."""
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return "an integer out of float range" if abs(raw) > 1e308 else str(raw)
    if isinstance(raw, str):
        return ascii(raw)
    if isinstance(raw, list):
        return f"a list of {len(raw)}"
    if isinstance(raw, dict):
        return f"an object of {len(raw)} keys"
    return type(raw).__name__
