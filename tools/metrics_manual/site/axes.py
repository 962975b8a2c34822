"""The axes of a drawing: round ticks, the extent of the values held to a unit's natural domain, and
the values that get a labelled tick of their own (a band's limits)."""

from __future__ import annotations

import decimal
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from metrics_manual.model.domain import UNBOUNDED, Bounds
from metrics_manual.model.phrase import num
from metrics_manual.site.svg import TICK_FONT, text_width


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """About `target` round values (steps of 1, 2 or 5 times a power of ten) within [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"no axis from {lo!r} to {hi!r}")
    raw = (hi / 2 - lo / 2) * 2 / max(1, target)  # halves: no overflow near the largest float
    if raw == 0 or not math.isfinite(raw):
        raw = abs(hi) or 1.0
    exp = math.floor(math.log10(raw))
    # In decimal: 10.0 ** exp is 0 below 1e-323, and a subnormal band (5e-324 to 5e-323) must still get an axis.
    frac = float(decimal.Decimal(raw).scaleb(-exp))
    # Nearest of 1, 2, 5, 10 on a log scale (the thresholds are their geometric means).
    mant = 1 if frac < 1.42 else 2 if frac < 3.17 else 5 if frac < 7.08 else 10
    if mant == 10:
        mant, exp = 1, exp + 1
    step = decimal.Decimal(mant).scaleb(exp)
    k0, k1 = math.ceil(decimal.Decimal(lo) / step), math.floor(decimal.Decimal(hi) / step)
    # Decimal keeps 0.1 + 0.2 from reading as 0.30000000000000004.
    ticks = [float(decimal.Decimal(k * mant).scaleb(exp)) for k in range(k0, k1 + 1)]
    # Near the float resolution neighbouring ticks can round to one value: keep each once.
    return sorted({t for t in ticks if math.isfinite(t)})


@dataclass(frozen=True)
class Axis:
    """A linear map from the values [lo, hi] to the coordinates [start, end] (end < start flips it)."""

    lo: float
    hi: float
    start: float
    end: float
    ticks: tuple[float, ...]
    labels: tuple[str, ...]  # the ticks as phrase.num writes them

    def at(self, value: float) -> float:
        share = (value / 2 - self.lo / 2) / (self.hi / 2 - self.lo / 2)
        return self.start + share * (self.end - self.start)


def _extent(
    values: Sequence[float], integer: bool = False, room: float = 0.1, bounds: Bounds = UNBOUNDED
) -> tuple[float, float]:
    """The values' extent with a margin of `room` times their span on each side, held inside `bounds`
    (a fraction never reads below 0 or above 1), and reaching out to them: a bounded side shows its bound."""
    lo, hi = min(values), max(values)
    if bounds.lo is not None and lo >= bounds.lo:
        lo = bounds.lo
    if bounds.hi is not None and hi <= bounds.hi:
        hi = bounds.hi
    if lo == hi:
        margin = 1.0 if integer or lo == 0 else abs(lo) * 0.1
    else:  # at least one float step, so the ends stay off the numbers
        margin = max((hi / 2 - lo / 2) * 2 * room, math.ulp(lo), math.ulp(hi))
    most = sys.float_info.max
    lo_out = lo if bounds.lo is not None and lo == bounds.lo else max(lo - margin, -most)
    hi_out = hi if bounds.hi is not None and hi == bounds.hi else min(hi + margin, most)
    if lo_out == hi_out:  # a bounded value alone at its bound: room on the open side
        lo_out, hi_out = (lo_out, hi_out + margin) if bounds.lo == lo_out else (lo_out - margin, hi_out)
    return lo_out, hi_out


def make_axis(
    values: Sequence[float],
    start: float,
    end: float,
    font: float = TICK_FONT,
    integer: bool = False,
    *,
    room: float = 0.05,
    bounds: Bounds = UNBOUNDED,
    reach: bool = True,
    marked: Sequence[float] = (),
) -> Axis:
    """An axis covering every value with a margin, with as many ticks as fit their labels.

    `bounds`: the metric's natural domain (the axis reaches its known bounds and never passes them);
    `marked`: values that get a labelled tick of their own (a band's limits), round ticks too close
    to one of them give way. `reach=False`: the bounds only hold the margins in (a curve of times
    near 150 s is not squeezed against 0).
    """
    lo, hi = _extent([*values, *marked], integer, room, bounds if reach else UNBOUNDED)
    if not reach:
        lo = lo if bounds.lo is None or min([*values, *marked]) < bounds.lo else max(lo, bounds.lo)
        hi = hi if bounds.hi is None or max([*values, *marked]) > bounds.hi else min(hi, bounds.hi)
    span = abs(end - start)
    for target in (5, 4, 3, 2):
        ticks = nice_ticks(lo, hi, target)
        if integer:
            ticks = sorted({float(math.floor(t)) for t in ticks if t == math.floor(t)}) or ticks
        labels = [num(tick_value(t)) for t in ticks]
        widest = max(text_width(label, font) for label in labels)
        if len(ticks) < 2 or span / (len(ticks) - 1) > widest + font:
            break
    if marked:
        ticks, labels = _with_marked(ticks, marked, lo, hi, end - start, font)
    return Axis(lo, hi, start, end, tuple(ticks), tuple(labels))


def _with_marked(
    ticks: list[float], marked: Sequence[float], lo: float, hi: float, span: float, font: float
) -> tuple[list[float], list[str]]:
    """Round ticks and the marked values together, each label clear of its neighbours: marked values
    first, in the order given (the first wins a clash), then the round ticks that still fit. On a
    vertical axis (`span` between labels measured in lines) labels need a line each; across, their width."""
    per_unit = span / (hi / 2 - lo / 2) / 2 if hi > lo else 0.0
    vertical = span < 0

    def room(a: float, b: float) -> float:
        if vertical:
            return font + 2
        return (text_width(num(tick_value(a)), font) + text_width(num(tick_value(b)), font)) / 2 + font / 2

    kept: list[float] = []
    for value in [*dict.fromkeys(marked), *ticks]:
        if all(abs(value - k) * abs(per_unit) > room(value, k) for k in kept):
            kept.append(value)
    kept.sort()
    return kept, [num(tick_value(t)) for t in kept]


def tick_value(t: float) -> int | float:
    return int(t) if t.is_integer() and abs(t) < 2**53 else t
