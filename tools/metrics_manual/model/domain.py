"""The bounds of the values a metric can take (its domain), for axes that show where a range sits.

The catalog's `domain` field (model/schema.py, `Metric.value_domain`: declared, else implied by
the unit) says fraction, non-negative or any; this module turns it into the numbers an axis
reaches: a fraction from 0 to 1, a non-negative quantity from 0, anything else unbounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from metrics_manual.model.schema import Domain


@dataclass(frozen=True)
class Bounds:
    """Bounds of the values a metric can take; None where there is none."""

    lo: float | None = None
    hi: float | None = None


UNBOUNDED = Bounds()


def bounds(domain: Domain) -> Bounds:
    """The numbers a domain bounds its values by."""
    match domain:
        case "fraction":
            return Bounds(0.0, 1.0)
        case "non-negative":
            return Bounds(0.0, None)
        case "any":
            return UNBOUNDED
        case _:
            assert_never(domain)
