"""The values a metric can take at all (its natural domain), where the catalog lets us know it.

The catalog has no `domain` field (yet): the domain is inferred from the unit alone, and only
for units whose meaning fixes it: a `fraction` lies from 0 to 1, a time in seconds and a count
of tokens are never negative. Any other unit (or none) says nothing, so nothing is assumed:
a norm without a unit is drawn on an axis fitted to its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from metrics_manual.model.phrase import FRACTION


@dataclass(frozen=True)
class Domain:
    """Bounds of the values a metric can take; None where the bound is unknown."""

    lo: float | None = None
    hi: float | None = None


UNBOUNDED = Domain()
# Units whose meaning bounds the value (the keys are the catalog's unit strings).
_BY_UNIT = {
    FRACTION: Domain(0.0, 1.0),
    "s": Domain(0.0, None),
    "seconds": Domain(0.0, None),
    "tokens": Domain(0.0, None),
}


def natural_domain(unit: str | None) -> Domain:
    """The domain a unit implies (UNBOUNDED when it implies none)."""
    return _BY_UNIT.get(unit or "", UNBOUNDED)
