"""Ranges and runs drawn: tiny inline SVG built as strings, for pages, the run report and reference curves.

No plotting library: a drawing is a few dozen elements on one line, with no script, no
external asset and no font download, so it sits inside Markdown as raw HTML and works
offline. Same input, same bytes. Colours are `currentColor` for text and axes (light and
dark schemes) and classes (`mm-band`, `mm-median` ...) let the site's CSS restyle marks.

Every mark (`g.mm-mark`, `g.mm-tick`, `g.mm-run`, `g.mm-failing`, `g.mm-nonfinite`) carries
data attributes in the coordinate system of its axis (`data-x-min`, `data-x-max`, `data-x`,
`data-y`) and the numbers it stands for (`data-min`, `data-max`, `data-value`, `data-step`,
as `repr` of the number); the root states the axes (`data-axis-min` ..., `data-x-start` ...).
Tests read the geometry from them instead of pixels.

Text from the source is written as character references where XML, HTML or Markdown would
read syntax, so a drawing survives Markdown even inline; inside a block element (e.g. a
`<div>`) Markdown also leaves it out of a `<p>`.
"""

from __future__ import annotations

import decimal
import hashlib
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import assert_never

from metrics_manual.model import kinds
from metrics_manual.model.domain import UNBOUNDED, Bounds
from metrics_manual.model.phrase import describe, measured, num
from metrics_manual.model.schema import (
    AtStep,
    Band,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    Median,
    Presence,
    Window,
)

# Drawing units of the viewBox; the SVG scales to its column (width 100%) up to MAX_WIDTH px.
# At 390 px a column is about 358 px wide: 360 units keep 12-unit text at 11 px or more;
# on a desktop the drawing stops at 480 px, where its text is the size of the page's.
WIDTH = 360
MAX_WIDTH = 480
_FONT = 13
_TICK_FONT = 12
_CHAR = 0.6  # average glyph width as a share of the font size, to keep labels apart and inside

# Thinning: a run with more steps than this is drawn from buckets of consecutive steps, each
# keeping its first, lowest, highest and last value (spikes stay); failing steps are marked apart.
MAX_POINTS = 2000

# Mid-tones: each at least 3:1 against both the light page (white) and the dark one (Material's
# slate, about #1e2129), so one colour serves both schemes (tests compute it in the browser).
_BAND, _WINDOW, _MEDIAN, _EXACT = "#4f86c6", "#9466d0", "#b86e1f", "#d64541"
_RUN_COLOURS = ("#2a7ab9", "#b86e1f", "#2f9e6e", "#b8457a", "#7a6cc4", "#8c7a2a")
_RUN_DASHES = ("", "6 3", "2 2", "8 3 2 3")
_SYNTAX = {c: f"&#{ord(c)};" for c in "&<>\"'|*_`[]\\{}~^#!$:="}
_SYNTAX_RE = re.compile("[" + re.escape("".join(_SYNTAX)) + "]")
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029\r\n\t]")


# --- text and numbers ----------------------------------------------------------------


def _esc(text: object) -> str:
    """Any text as inert SVG text on one line: XML-invalid characters blanked, and characters that
    XML, HTML or Markdown read as syntax written as character references (a drawing may land in
    Markdown outside a raw HTML block, where `*x*` would otherwise become <em>)."""
    return _SYNTAX_RE.sub(lambda m: _SYNTAX[m.group()], _XML_INVALID.sub(" ", str(text)))


def _c(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros (deterministic, short)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _clip(text: str, width: float, font: float) -> str:
    """Text shortened with an ellipsis to fit `width` drawing units (its <title> keeps it whole)."""
    most = max(4, int(width / (font * _CHAR)))
    return text if len(text) <= most else text[: most - 1].rstrip() + "\u2026"


def _text_width(text: str, font: float) -> float:
    return len(text) * font * _CHAR


def _uid(*parts: object) -> str:
    # Ids of <defs> must differ between drawings of one page and stay the same between builds.
    return "mm" + hashlib.sha1(repr(parts).encode()).hexdigest()[:10]


# --- axes ---------------------------------------------------------------------------


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


def _domain(
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
    font: float = _TICK_FONT,
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
    lo, hi = _domain([*values, *marked], integer, room, bounds if reach else UNBOUNDED)
    if not reach:
        lo = lo if bounds.lo is None or min([*values, *marked]) < bounds.lo else max(lo, bounds.lo)
        hi = hi if bounds.hi is None or max([*values, *marked]) > bounds.hi else min(hi, bounds.hi)
    span = abs(end - start)
    for target in (5, 4, 3, 2):
        ticks = nice_ticks(lo, hi, target)
        if integer:
            ticks = sorted({float(math.floor(t)) for t in ticks if t == math.floor(t)}) or ticks
        labels = [num(_tick_value(t)) for t in ticks]
        widest = max(_text_width(label, font) for label in labels)
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
        return (_text_width(num(_tick_value(a)), font) + _text_width(num(_tick_value(b)), font)) / 2 + font / 2

    kept: list[float] = []
    for value in [*dict.fromkeys(marked), *ticks]:
        if all(abs(value - k) * abs(per_unit) > room(value, k) for k in kept):
            kept.append(value)
    kept.sort()
    return kept, [num(_tick_value(t)) for t in kept]


def _tick_value(t: float) -> int | float:
    return int(t) if t.is_integer() and abs(t) < 2**53 else t


# --- one metric's ranges on every profile ---------------------------------------------

_ROW = 36  # height of one row: label line then mark
_TOP = 4
_MARK_H = 12
_LEGEND_LINE = 18


def _kind_words(e: Expectation) -> str:
    """What a row's mark stands for, after its profile's title: the statistic and the steps it covers."""
    span = e.span
    match e:
        case Band():
            return f"per step, first {num(span.first)} steps" if isinstance(span, Window) else "per step"
        case Median():
            return f"median of {num(e.steps)} steps"
        case Exact():
            match span:
                case AtStep(step=n):
                    return f"exact at step {num(n)}"
                case EveryStep():
                    return "exact, every step" if e.at == "every_step" else "exact, every run"
                case Window() | FirstSteps():  # no exact value covers a window; said all the same
                    return "exact"
                case _:
                    assert_never(span)
        case Presence():
            return "logged in every step"
        case _:
            assert_never(e)


def _legend_key(e: Expectation) -> list[str]:
    """The legend lines a mark of `e` needs (a band open at one end also shows the arrow)."""
    match e:
        case Band():
            return ["window" if e.window else "band"] + (["open"] if e.min is None or e.max is None else [])
        case Median():
            return ["median"]
        case Exact():
            return ["exact"]
        case Presence():
            return ["presence"]
        case _:
            assert_never(e)


# One line per mark kind, in this order: (swatch, words). Swatches are drawn at (x, y) = left, middle.
_LEGEND_ORDER = ("band", "window", "open", "median", "exact", "presence", "failing", "missing", "nan", "inf")
_LEGEND_WORDS = {
    "band": "range per step",
    "window": "range in the first steps",
    "open": "no limit on that side",
    "median": "median",
    "exact": "exact value",
    "presence": "logged, no number",
    "failing": "failing step",
    "missing": "not logged",
    "nan": "NaN",
    "inf": "infinite",
}


def _swatch(kind: str, x: float, y: float, uid: str) -> str:
    match kind:
        case "band":
            return (
                f'<rect x="{_c(x)}" y="{_c(y - 5)}" width="18" height="10" rx="2" fill="{_BAND}" '
                f'fill-opacity="0.6" stroke="{_BAND}"/>'
            )
        case "window":
            return f'<rect x="{_c(x)}" y="{_c(y - 5)}" width="18" height="10" rx="2" fill="url(#{uid}-w)" stroke="{_WINDOW}"/>'
        case "open":
            return (
                f'<line x1="{_c(x)}" y1="{_c(y)}" x2="{_c(x + 16)}" y2="{_c(y)}" stroke="{_BAND}" stroke-width="2" '
                f'marker-end="url(#{uid}-a)"/>'
            )
        case "median":
            return f'<path d="M{_c(x + 9)} {_c(y - 6)}l6 6l-6 6l-6 -6z" fill="{_MEDIAN}" stroke="{_MEDIAN}"/>'
        case "exact":
            return f'<line x1="{_c(x + 9)}" y1="{_c(y - 7)}" x2="{_c(x + 9)}" y2="{_c(y + 7)}" stroke="{_EXACT}" stroke-width="3"/>'
        case "failing":
            return (
                f'<line x1="{_c(x + 4)}" y1="{_c(y - 6)}" x2="{_c(x + 4)}" y2="{_c(y + 6)}" stroke="{_EXACT}" '
                f'stroke-width="1.5"/><circle cx="{_c(x + 12)}" cy="{_c(y)}" r="2.5" fill="{_EXACT}"/>'
            )
        case "missing":
            return f'<circle cx="{_c(x + 9)}" cy="{_c(y)}" r="3.5" fill="none" stroke="{_EXACT}" stroke-width="2"/>'
        case "nan":
            return f'<rect x="{_c(x + 6)}" y="{_c(y - 3)}" width="6" height="6" fill="currentColor"/>'
        case "inf":
            return f'<path d="M{_c(x + 5)} {_c(y + 3)}L{_c(x + 13)} {_c(y + 3)}L{_c(x + 9)} {_c(y - 3)}z" fill="currentColor"/>'
        case _:  # presence
            return (
                f'<line x1="{_c(x)}" y1="{_c(y)}" x2="{_c(x + 18)}" y2="{_c(y)}" stroke="currentColor" '
                f'stroke-width="2" stroke-dasharray="1 4" stroke-linecap="round"/>'
            )


def _kinds_legend(keys: set[str], top: float, uid: str, left: float = 4.0) -> tuple[float, str]:
    """The legend of the mark kinds in `keys`, flowed in lines from `top`; returns (bottom, svg)."""
    out: list[str] = []
    x, y = left, top + _LEGEND_LINE / 2
    for kind in (k for k in _LEGEND_ORDER if k in keys):
        words = _LEGEND_WORDS[kind]
        width = 24 + _text_width(words, _TICK_FONT) + 12
        if x > left and x + width > WIDTH - 4:
            x, y = left, y + _LEGEND_LINE
        out.append(
            f'<g class="mm-legend mm-legend-{kind}" data-kind="{kind}">{_swatch(kind, x, y, uid)}'
            f'<text x="{_c(x + 24)}" y="{_c(y + 4)}" font-size="{_TICK_FONT}" fill="currentColor">{words}</text></g>'
        )
        x += width
    return (y + _LEGEND_LINE / 2 if out else top), "".join(out)


def _defs(uid: str) -> str:
    return (
        f'<defs><pattern id="{uid}-w" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{_WINDOW}" fill-opacity="0.2"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{_WINDOW}" stroke-width="3"/></pattern>'
        f'<marker id="{uid}-a" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="8" markerHeight="8" '
        f'orient="auto-start-reverse" markerUnits="userSpaceOnUse"><path d="M0 0L8 4L0 8z" fill="{_BAND}"/>'
        f"</marker></defs>"
    )


def range_drawing(
    rows: Sequence[tuple[str, Expectation]],
    unit: str | None,
    domain: Bounds = UNBOUNDED,
    shared: Sequence[float] = (),
) -> str:
    """One metric's expectations on one or more profiles, on one shared axis, as one-line inline SVG.

    `rows` are (profile title, expectation) in the order they are drawn, one row each; a
    profile's title labels its first row, each row says its statistic ("median of 10 steps").
    The axis reaches the metric's `domain` where it is bounded (a fraction from 0 to 1, a
    non-negative quantity from 0) and leaves the band room elsewhere, so where a band sits means
    something. A legend under the axis names each kind of mark drawn. Returns "" when there
    is nothing to place on an axis: no rows, or presence only (the words "logged in every
    step" say all a drawing could). `shared`: more numbers the axis takes in (the other profiles'
    ranges of the metric, so each profile's drawing has the same axis and they compare in a column).
    """
    numbers = [v for _, e in rows for v in kinds.numbers(e)]
    if not numbers:
        return ""
    words = [f"{title}: {describe(e, unit)}" for title, e in rows]
    uid = _uid("range", words, unit, list(shared))  # the words and the shared numbers state every number and text of it
    pad = 12.0
    axis = make_axis([*numbers, *shared], pad, WIDTH - pad, room=0.25, bounds=domain)
    # Room for the outer tick labels inside the viewBox: shrink the axis to fit them.
    start = max(pad, _text_width(axis.labels[0], _TICK_FONT) / 2 + 2)
    end = WIDTH - max(pad, _text_width(axis.labels[-1], _TICK_FONT) / 2 + 2)
    axis = Axis(axis.lo, axis.hi, start, end, axis.ticks, axis.labels)

    marks: list[str] = []
    keys: set[str] = set()
    previous = None
    for i, ((title, e), said) in enumerate(zip(rows, words)):
        y = _TOP + i * _ROW
        kind = _kind_words(e)
        if title != previous:
            label = _clip(title, WIDTH - 8 - _text_width(" \u00b7 " + kind, _FONT), _FONT) + " \u00b7 " + kind
        else:  # the same profile's next range: its statistic alone, under the title above
            label = "\u21b3 " + kind
        previous = title
        keys.update(_legend_key(e))
        marks.append(f'<text x="4" y="{_c(y + 12)}" fill="currentColor">{_esc(label)}</text>')
        if kinds.numbers(e):  # a faint track where the row's axis runs (presence has no value to place)
            marks.append(
                f'<line x1="{_c(axis.start)}" y1="{_c(y + 18 + _MARK_H / 2)}" x2="{_c(axis.end)}" '
                f'y2="{_c(y + 18 + _MARK_H / 2)}" stroke="currentColor" stroke-opacity="0.15"/>'
            )
        marks.append(_range_mark(e, said, axis, y + 18, uid))

    y_axis = _TOP + len(rows) * _ROW + 2
    marks.append(_x_axis(axis, _TOP, y_axis))
    height: float = y_axis + 19
    if unit:
        height += 15
        marks.append(
            f'<text x="{_c((axis.start + axis.end) / 2)}" y="{_c(height - 3)}" text-anchor="middle" '
            f'font-size="{_TICK_FONT}" fill="currentColor">{_esc(_clip(unit, WIDTH - 24, _TICK_FONT))}</text>'
        )
    height, legend = _kinds_legend(keys, height + 4, uid)
    marks.append(legend)
    height += 2
    label = _esc("; ".join(words))
    reach = (f' data-domain-min="{domain.lo!r}"' if domain.lo is not None else "") + (
        f' data-domain-max="{domain.hi!r}"' if domain.hi is not None else ""
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mm-drawing mm-ranges" role="img" '
        f'aria-label="{label}" viewBox="0 0 {WIDTH} {_c(height)}" width="100%" '
        f'style="max-width:{MAX_WIDTH}px;height:auto" font-size="{_FONT}" '
        f'data-axis-min="{axis.lo!r}" data-axis-max="{axis.hi!r}"{reach} '
        f'data-x-start="{_c(axis.start)}" data-x-end="{_c(axis.end)}">'
        f"<title>{label}</title>{_defs(uid)}{''.join(marks)}</svg>"
    )


def _x_axis(axis: Axis, top: float, y: float) -> str:
    out = [
        f'<line class="mm-axis" x1="{_c(axis.start)}" y1="{_c(y)}" x2="{_c(axis.end)}" y2="{_c(y)}" '
        f'stroke="currentColor" stroke-opacity="0.6"/>'
    ]
    for t, label in zip(axis.ticks, axis.labels):
        x = _c(axis.at(t))
        out.append(
            f'<g class="mm-tick" data-value="{_tick_value(t)!r}" data-x="{x}">'
            f'<line x1="{x}" y1="{_c(top)}" x2="{x}" y2="{_c(y)}" stroke="currentColor" stroke-opacity="0.12"/>'
            f'<line x1="{x}" y1="{_c(y)}" x2="{x}" y2="{_c(y + 4)}" stroke="currentColor" stroke-opacity="0.6"/>'
            f'<text x="{x}" y="{_c(y + 15)}" text-anchor="middle" font-size="{_TICK_FONT}" '
            f'fill="currentColor">{_esc(label)}</text></g>'
        )
    return "".join(out)


def _range_mark(e: Expectation, said: str, axis: Axis, y: float, uid: str) -> str:
    title = f"<title>{_esc(said)}</title>"
    mid = y + _MARK_H / 2
    match e:
        case Band():
            return _band_mark(e, title, axis, y, mid, uid)
        case Median():
            x = axis.at(e.value)
            r = _MARK_H / 2
            return (
                f'<g class="mm-mark mm-median" data-kind="median" data-value="{e.value!r}" data-x="{_c(x)}">'
                f'{title}<path d="M{_c(x)} {_c(y)}l{_c(r)} {_c(r)}'
                f'l-{_c(r)} {_c(r)}l-{_c(r)} -{_c(r)}z" fill="{_MEDIAN}" stroke="{_MEDIAN}"/></g>'
            )
        case Exact():
            x = axis.at(e.value)
            return (
                f'<g class="mm-mark mm-exact" data-kind="exact" data-value="{e.value!r}" data-x="{_c(x)}">'
                f'{title}<line x1="{_c(x)}" y1="{_c(y - 2)}" x2="{_c(x)}" '
                f'y2="{_c(y + _MARK_H + 2)}" stroke="{_EXACT}" stroke-width="3"/></g>'
            )
        case Presence():
            return _presence_mark(title, axis, mid)
        case _:
            assert_never(e)


def _band_mark(e: Band, title: str, axis: Axis, y: float, mid: float, uid: str) -> str:
    """A band: a bar from min to max (an arrow past an open end); a window band hatched."""
    x0 = axis.at(e.min) if e.min is not None else axis.start
    x1 = axis.at(e.max) if e.max is not None else axis.end
    attrs = ""
    attrs += f' data-min="{e.min!r}"' if e.min is not None else ""
    attrs += f' data-max="{e.max!r}"' if e.max is not None else ""
    open_side = "max" if e.max is None else "min" if e.min is None else ""
    attrs += f' data-open="{open_side}"' if open_side else ""
    kind = "window" if e.window else "band"
    fill = f"url(#{uid}-w)" if e.window else _BAND
    stroke = _WINDOW if e.window else _BAND
    w = max(x1 - x0, 2.0)
    bx = x0 if x1 - x0 >= 2 else (x0 + x1) / 2 - 1
    arrow = ""
    if open_side:
        # An open band runs to the edge of the axis and on: an arrow points past it.
        ax0, ax1 = (x1 - 1, axis.end + 6) if open_side == "max" else (x0 + 1, axis.start - 6)
        arrow = (
            f'<line x1="{_c(ax0)}" y1="{_c(mid)}" x2="{_c(ax1)}" y2="{_c(mid)}" stroke="{_BAND}" '
            f'stroke-width="2" marker-end="url(#{uid}-a)"/>'
        )
    return (
        f'<g class="mm-mark mm-{kind}" data-kind="{kind}"{attrs} data-x-min="{_c(x0)}" '
        f'data-x-max="{_c(x1)}">{title}<rect x="{_c(bx)}" y="{_c(y)}" width="{_c(w)}" '
        f'height="{_MARK_H}" rx="2" fill="{fill}" fill-opacity="{"1" if e.window else "0.6"}" '
        f'stroke="{stroke}"/>{arrow}</g>'
    )


def _presence_mark(title: str, axis: Axis, mid: float) -> str:
    # Presence has no value: a dotted line along the whole row, off the axis's numbers, broken by its words.
    words = "logged in every step"
    cx, half = (axis.start + axis.end) / 2, _text_width(words, _TICK_FONT) / 2 + 4
    dots = 'stroke="currentColor" stroke-width="2" stroke-dasharray="1 4" stroke-linecap="round"'
    return (
        f'<g class="mm-mark mm-presence" data-kind="presence">{title}'
        f'<line x1="{_c(axis.start)}" y1="{_c(mid)}" x2="{_c(cx - half)}" y2="{_c(mid)}" {dots}/>'
        f'<line x1="{_c(cx + half)}" y1="{_c(mid)}" x2="{_c(axis.end)}" y2="{_c(mid)}" {dots}/>'
        f'<text x="{_c(cx)}" y="{_c(mid + 3.5)}" text-anchor="middle" font-size="{_TICK_FONT}" '
        f'fill="currentColor">{words}</text></g>'
    )


# --- per-step curves of runs over their expected range ---------------------------------

_PLOT_H = 170
_LEGEND_ROW = 16
_DOTS_UP_TO = 100


def _thin(points: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """At most about MAX_POINTS of `points` (sorted by step): above that, each bucket of consecutive
    steps keeps its first, lowest, highest and last finite value, and every non-finite one."""
    if len(points) <= MAX_POINTS:
        return points
    size = math.ceil(len(points) / (MAX_POINTS // 4))
    kept: list[tuple[int, float]] = []
    for b in range(0, len(points), size):
        bucket = points[b : b + size]
        values = [v for _, v in bucket]
        if all(map(math.isfinite, values)):  # the common case, at C speed
            keep = {0, len(values) - 1, values.index(min(values)), values.index(max(values))}
        else:
            finite = [i for i, v in enumerate(values) if math.isfinite(v)]
            keep = {i for i, v in enumerate(values) if not math.isfinite(v)}
            if finite:
                keep |= {
                    finite[0],
                    finite[-1],
                    min(finite, key=values.__getitem__),
                    max(finite, key=values.__getitem__),
                }
        kept += [bucket[i] for i in sorted(keep)]
    return kept


def _value_words(value: float, unit: str | None) -> str:
    text = (
        num(value) if math.isfinite(value) else {"nan": "NaN", "inf": "infinity", "-inf": "minus infinity"}[repr(value)]
    )
    return f"{text} {unit}" if unit and math.isfinite(value) else text


_RUG = 8  # height of the strip of failing-step ticks under the plot
_LABELLED = 3  # failing steps, NaN and missing steps labelled in words (the worst, the first)


def _outside(v: float, expectations: Sequence[Expectation]) -> float:
    """How far a finite value lies from what its expectations allow (0 inside): orders the worst failing steps."""
    gaps = []
    for e in expectations:
        match e:
            case Band():
                gaps.append(max((e.min - v) if e.min is not None else 0.0, (v - e.max) if e.max is not None else 0.0))
            case Median() | Exact():
                gaps.append(abs(v - e.value))
            case Presence():
                pass
            case _:
                assert_never(e)
    return max(gaps, default=0.0)


def series_drawing(
    series: Mapping[str, Mapping[int, float]],
    expectations: Sequence[Expectation],
    unit: str | None,
    *,
    title: str,
    failing: Mapping[str, Sequence[int]] | None = None,
    domain: Bounds = UNBOUNDED,
) -> str:
    """Per-step curves of one metric (one polyline per run name) over its expected band / median / exact
    value, failing steps marked; one-line inline SVG.

    x is the step, y the value. A band is shaded over the steps it covers (its first N steps,
    its window, or every step; a window hatched), a median is a dashed line over its steps, an
    exact value a solid line (or a cross at its step); presence has no value to draw. The y axis
    labels the range's own numbers (a band's limits) beside round ticks, and never passes the
    unit's natural domain. A non-finite value breaks its curve: infinity is marked at the top,
    minus infinity at the bottom, NaN on the step axis; the first few are labelled. A failing
    step gets a tick in a rug under the plot and a dot at its value (on the step axis when its
    value is NaN or not logged), each with its own <title>; the worst few are labelled with
    their step and value. A legend names the runs and each kind of mark drawn. Runs of more than
    MAX_POINTS steps are thinned (see `_thin`); failing steps are never thinned away. Returns ""
    when no run has a step and no step fails.
    """
    failing = failing or {}
    runs = {name: sorted((int(s), float(v)) for s, v in values.items()) for name, values in series.items()}
    # The axes need only each run's extremes (runs can be long): steps are sorted, values are not.
    steps = [s for pts in runs.values() if pts for s in (pts[0][0], pts[-1][0])]
    steps += [int(s) for ss in failing.values() for s in ss]
    if not steps:
        return ""
    # Band limits first: they win a tick over a median or exact value too close to them.
    expected = sorted((v for e in expectations for v in kinds.numbers(e)), key=lambda v: v not in _limits(expectations))
    finite: list[float] = []
    for pts in runs.values():
        values = [v for _, v in pts if math.isfinite(v)]
        finite += [min(values), max(values)] if values else []
    said = [describe(e, unit) for e in expectations]
    # <defs> ids: from what tells drawings apart on one page, not from every point (cheap on long runs).
    uid = _uid(
        "series",
        title,
        unit,
        said,
        [(n, len(p), p[:1], p[-1:]) for n, p in runs.items()],
        sorted((n, sorted(s)) for n, s in failing.items()),
    )

    top = 18.0 if unit else 8.0
    y_axis = make_axis(
        finite or ([] if expected else [0.0]),
        top + _PLOT_H,
        top,
        bounds=domain,
        reach=False,
        marked=expected,
    )
    widest = max(_text_width(label, _TICK_FONT) for label in y_axis.labels)
    left, right = max(28.0, widest + 10), WIDTH - 12.0
    x_axis = make_axis(steps, left, right, integer=True)
    bottom = top + _PLOT_H
    parts: list[str] = []
    keys: set[str] = set()
    if unit:
        parts.append(
            f'<text x="{_c(left)}" y="12" font-size="{_TICK_FONT}" fill="currentColor">{_esc(_clip(unit, right - left, _TICK_FONT))}</text>'
        )
    parts.append(_plot_ticks(x_axis, y_axis, left, right, top, bottom))
    all_steps = sorted({s for pts in runs.values() for s, _ in pts})
    for e, words in zip(expectations, said):
        mark = _expected_mark(e, words, x_axis, y_axis, all_steps, uid)
        if mark:
            keys.update(k for k in _legend_key(e) if k != "open")
        parts.append(mark)

    nonfinite_y = {"nan": bottom, "inf": top, "-inf": bottom}
    legend: list[tuple[str, str, str]] = []
    labels: list[tuple[float, float, str]] = []  # (x, y, words) of the few points labelled
    for i, (name, pts) in enumerate(runs.items()):
        colour, dash = _RUN_COLOURS[i % len(_RUN_COLOURS)], _RUN_DASHES[i % len(_RUN_DASHES)]
        legend.append((name, colour, dash))
        curve, odd = _run_curve(name, pts, colour, dash, x_axis, y_axis, nonfinite_y, unit)
        parts.append(curve)
        for s, v in odd[:_LABELLED]:
            labels.append((x_axis.at(s), nonfinite_y[repr(v)], f"{_value_words(v, unit)}, step {num(s)}"))
        keys.update({"nan" if math.isnan(v) else "inf" for _, v in odd})
    rug: list[str] = []
    worst: list[tuple[float, float, float, str]] = []  # (how far outside, x, y, words)
    for name, bad in failing.items():
        logged = series.get(name, {})
        for s in sorted(set(bad)):
            got = float(logged[s]) if s in logged else None
            x = x_axis.at(s)
            y = y_axis.at(got) if got is not None and math.isfinite(got) else nonfinite_y.get(repr(got), bottom)
            shown = _value_words(got, unit) if got is not None else "not logged"
            ring = f"{name}: step {num(s)}: {shown}, failing"
            value_attr = f' data-value="{got!r}"' if got is not None else ""
            if got is None:  # not logged: a hollow mark on the step axis, labelled like a NaN
                dot = f'<circle cx="{_c(x)}" cy="{_c(y)}" r="3.5" fill="none" stroke="{_EXACT}" stroke-width="2"/>'
                keys.add("missing")
                worst.append((math.inf, x, y, f"not logged, step {num(s)}"))
            else:
                dot = f'<circle cx="{_c(x)}" cy="{_c(y)}" r="2.5" fill="{_EXACT}"/>'
                if math.isfinite(got):
                    far = _outside(got, expectations)
                    near = [n for e in expectations for n in kinds.numbers(e)]
                    worst.append((far, x, y, f"step {num(s)}: {measured(got, near)}"))
            rug.append(
                f'<g class="mm-failing" data-run="{_esc(name)}" data-step="{s}"{value_attr} '
                f'data-x="{_c(x)}" data-y="{_c(y)}"><title>{_esc(ring)}</title>'
                f'<line class="mm-rug" x1="{_c(x)}" y1="{_c(bottom + 2)}" x2="{_c(x)}" y2="{_c(bottom + 2 + _RUG)}" '
                f'stroke="{_EXACT}" stroke-width="1.5"/>{dot}</g>'
            )
            keys.add("failing")
    parts += rug
    worst.sort(key=lambda w: -w[0])
    labels += [(x, y, words) for _, x, y, words in worst[:_LABELLED]]
    parts.append(_point_labels(labels, left, right, top, bottom))

    height, legend_svg = _legend(legend, left, bottom + 2 + _RUG + 44)
    height, kinds_svg = _kinds_legend(keys, height + 2, uid, left)
    label = _esc(title)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mm-drawing mm-series" role="img" '
        f'aria-label="{label}" viewBox="0 0 {WIDTH} {_c(height)}" width="100%" '
        f'style="max-width:{MAX_WIDTH}px;height:auto" font-size="{_FONT}" '
        f'data-axis-x-min="{x_axis.lo!r}" data-axis-x-max="{x_axis.hi!r}" '
        f'data-axis-y-min="{y_axis.lo!r}" data-axis-y-max="{y_axis.hi!r}" '
        f'data-x-start="{_c(left)}" data-x-end="{_c(right)}" data-y-start="{_c(bottom)}" data-y-end="{_c(top)}">'
        f"<title>{label}</title>{_defs(uid)}{''.join(parts)}{legend_svg}{kinds_svg}</svg>"
    )


def _limits(expectations: Sequence[Expectation]) -> set[float]:
    return {float(v) for e in expectations if isinstance(e, Band) for v in (e.min, e.max) if v is not None}


def _point_labels(labels: list[tuple[float, float, str]], left: float, right: float, top: float, bottom: float) -> str:
    """Words beside the few points that need them (the worst failing steps, NaN, not logged), inside the plot;
    a label that would overlap one placed before moves a line down (neighbouring points stay readable)."""
    out: list[str] = []
    placed: list[tuple[float, float, float]] = []  # (x0, x1, baseline) of each label written
    line = _TICK_FONT + 3
    for x, y, words in labels:
        width = _text_width(words, _TICK_FONT)
        cx = min(max(x, left + width / 2 + 2), right - width / 2 - 2)
        base = y - 7 if y - 7 - _TICK_FONT > top else y + _TICK_FONT + 5
        base = min(max(base, top + _TICK_FONT + 2), bottom - 3)
        x0, x1 = cx - width / 2, cx + width / 2
        for _ in range(len(placed) + 1):
            if all(x1 < a or x0 > b or abs(base - ly) >= line for a, b, ly in placed):
                break
            base = base + line if base + line <= bottom - 3 else base - line
        placed.append((x0, x1, base))
        out.append(
            f'<text class="mm-label" x="{_c(cx)}" y="{_c(base)}" text-anchor="middle" font-size="{_TICK_FONT}" '
            f'fill="currentColor">{_esc(words)}</text>'
        )
    return "".join(out)


def _plot_ticks(x_axis: Axis, y_axis: Axis, left: float, right: float, top: float, bottom: float) -> str:
    out = [
        f'<rect x="{_c(left)}" y="{_c(top)}" width="{_c(right - left)}" height="{_c(bottom - top)}" '
        f'fill="none" stroke="currentColor" stroke-opacity="0.4"/>'
    ]
    for t, label in zip(x_axis.ticks, x_axis.labels):
        x = _c(x_axis.at(t))
        out.append(
            f'<g class="mm-tick mm-tick-x" data-value="{_tick_value(t)!r}" data-x="{x}">'
            f'<line x1="{x}" y1="{_c(top)}" x2="{x}" y2="{_c(bottom + 4)}" stroke="currentColor" '
            f'stroke-opacity="0.12"/><text x="{x}" y="{_c(bottom + _RUG + 16)}" text-anchor="middle" '
            f'font-size="{_TICK_FONT}" fill="currentColor">{_esc(label)}</text></g>'
        )
    for t, label in zip(y_axis.ticks, y_axis.labels):
        y = _c(y_axis.at(t))
        out.append(
            f'<g class="mm-tick mm-tick-y" data-value="{_tick_value(t)!r}" data-y="{y}">'
            f'<line x1="{_c(left - 4)}" y1="{y}" x2="{_c(right)}" y2="{y}" stroke="currentColor" '
            f'stroke-opacity="0.12"/><text x="{_c(left - 6)}" y="{_c(float(y) + 3.5)}" text-anchor="end" '
            f'font-size="{_TICK_FONT}" fill="currentColor">{_esc(label)}</text></g>'
        )
    out.append(
        f'<text x="{_c(right)}" y="{_c(bottom + _RUG + 30)}" text-anchor="end" font-size="{_TICK_FONT}" '
        f'fill="currentColor">step</text>'
    )
    return "".join(out)


def _expected_mark(e: Expectation, said: str, x_axis: Axis, y_axis: Axis, steps: list[int], uid: str) -> str:
    title = f"<title>{_esc(said)}</title>"
    left, right = x_axis.start, x_axis.end
    match e:
        case Band():
            y_lo = y_axis.at(e.min) if e.min is not None else y_axis.start
            y_hi = y_axis.at(e.max) if e.max is not None else y_axis.end
            x0, x1 = _covered_x(e, x_axis, steps)
            attrs = (f' data-min="{e.min!r}"' if e.min is not None else "") + (
                f' data-max="{e.max!r}"' if e.max is not None else ""
            )
            kind = "window" if e.window else "band"
            fill = f'fill="url(#{uid}-w)"' if e.window else f'fill="{_BAND}" fill-opacity="0.2"'
            return (
                f'<g class="mm-mark mm-{kind}" data-kind="{kind}"{attrs} data-y-min="{_c(y_lo)}" data-y-max="{_c(y_hi)}" '
                f'data-x-min="{_c(x0)}" data-x-max="{_c(x1)}">{title}<rect x="{_c(x0)}" y="{_c(y_hi)}" '
                f'width="{_c(max(x1 - x0, 1))}" height="{_c(max(y_lo - y_hi, 1))}" {fill} stroke="{_WINDOW if e.window else _BAND}"/></g>'
            )
        case Median():
            y = y_axis.at(e.value)
            x0, x1 = _covered_x(e, x_axis, steps)
            return (
                f'<g class="mm-mark mm-median" data-kind="median" data-value="{e.value!r}" data-y="{_c(y)}" '
                f'data-x-min="{_c(x0)}" data-x-max="{_c(x1)}">{title}'
                f'<line x1="{_c(x0)}" y1="{_c(y)}" x2="{_c(max(x1, x0 + 1))}" y2="{_c(y)}" stroke="{_MEDIAN}" '
                f'stroke-width="2" stroke-dasharray="7 4"/><text x="{_c(max(x1, left + 80) - 3)}" y="{_c(y - 4)}" '
                f'text-anchor="end" font-size="{_TICK_FONT}" fill="currentColor">median {_esc(num(e.value))}</text></g>'
            )
        case Exact():
            y = y_axis.at(e.value)
            if isinstance(e.at, AtStep):
                x = x_axis.at(e.at.step)
                line = (
                    f'<line x1="{_c(x - 7)}" y1="{_c(y)}" x2="{_c(x + 7)}" y2="{_c(y)}" stroke="{_EXACT}" stroke-width="3"/>'
                    f'<line x1="{_c(x)}" y1="{_c(y - 7)}" x2="{_c(x)}" y2="{_c(y + 7)}" stroke="{_EXACT}" stroke-width="3"/>'
                )
                where = f' data-step="{e.at.step}" data-x="{_c(x)}"'
            else:
                line = f'<line x1="{_c(left)}" y1="{_c(y)}" x2="{_c(right)}" y2="{_c(y)}" stroke="{_EXACT}" stroke-width="1.5"/>'
                where = ""
            return (
                f'<g class="mm-mark mm-exact" data-kind="exact" data-value="{e.value!r}" data-y="{_c(y)}"{where}>'
                f"{title}{line}</g>"
            )
        case Presence():
            return ""  # every logged step is already a point of the curve
        case _:
            assert_never(e)


def _covered_x(e: Expectation, x_axis: Axis, steps: list[int]) -> tuple[float, float]:
    """The x extent of the steps drawn that `e` covers (its first N, its window, or all of them)."""
    covered, _ = kinds.covered_steps(e.span, steps)
    if not covered:  # no step of the runs is covered: a sliver at the axis start
        return x_axis.start, x_axis.start
    return x_axis.at(covered[0]), x_axis.at(covered[-1])


def _run_curve(
    name: str,
    pts: list[tuple[int, float]],
    colour: str,
    dash: str,
    x_axis: Axis,
    y_axis: Axis,
    edge: Mapping[str, float],
    unit: str | None,
) -> tuple[str, list[tuple[int, float]]]:
    """The run's curve, and its non-finite points (step, value) in step order (for labels)."""
    stroke = f'stroke="{colour}" stroke-width="1.6" fill="none"' + (f' stroke-dasharray="{dash}"' if dash else "")
    drawn = _thin(pts)
    segments: list[list[tuple[int, float]]] = [[]]
    marks: list[str] = []
    odd: list[tuple[int, float]] = []
    for s, v in drawn:
        if math.isfinite(v):
            segments[-1].append((s, v))
            continue
        segments.append([])
        odd.append((s, v))
        x, y = x_axis.at(s), edge[repr(v)]
        if math.isnan(v):  # a square on the step axis
            shape = f'<rect x="{_c(x - 3)}" y="{_c(y - 3)}" width="6" height="6" fill="{colour}"/>'
        else:  # a triangle pointing out of the plot, up or down
            tip = -6 if v > 0 else 6
            shape = f'<path d="M{_c(x - 4)} {_c(y)}L{_c(x + 4)} {_c(y)}L{_c(x)} {_c(y + tip)}z" fill="{colour}"/>'
        marks.append(
            f'<g class="mm-nonfinite" data-step="{s}" data-value="{v!r}" data-x="{_c(x)}" data-y="{_c(y)}">'
            f"<title>{_esc(f'{name}: step {num(s)}: {_value_words(v, unit)}')}</title>{shape}</g>"
        )
    lines = []
    for seg in segments:
        if len(seg) == 1:
            s, v = seg[0]
            lines.append(f'<circle cx="{_c(x_axis.at(s))}" cy="{_c(y_axis.at(v))}" r="1.8" fill="{colour}"/>')
        elif seg:
            coords = " ".join(f"{_c(x_axis.at(s))},{_c(y_axis.at(v))}" for s, v in seg)
            lines.append(f'<polyline points="{coords}" {stroke}/>')
    if len(drawn) <= _DOTS_UP_TO:  # short runs: a dot per step shows where a step is missing
        lines += [
            f'<circle cx="{_c(x_axis.at(s))}" cy="{_c(y_axis.at(v))}" r="1.4" fill="{colour}"/>'
            for seg in segments
            if len(seg) > 1
            for s, v in seg
        ]
    return (
        f'<g class="mm-run" data-run="{_esc(name)}" data-points="{len(pts)}" data-drawn="{len(drawn)}">'
        f"<title>{_esc(name)}</title>{''.join(lines)}{''.join(marks)}</g>"
    ), odd


def _legend(entries: list[tuple[str, str, str]], left: float, y: float) -> tuple[float, str]:
    """Run names with their stroke, flowed in rows under the plot; returns the drawing's height."""
    out, x = [], left
    for name, colour, dash in entries:
        text = _clip(name, WIDTH / 2, _TICK_FONT)
        width = 26 + _text_width(text, _TICK_FONT) + 14
        if x > left and x + width > WIDTH - 8:
            x, y = left, y + _LEGEND_ROW
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<g class="mm-legend" data-run="{_esc(name)}"><title>{_esc(name)}</title>'
            f'<line x1="{_c(x)}" y1="{_c(y - 4)}" x2="{_c(x + 22)}" y2="{_c(y - 4)}" stroke="{colour}" '
            f'stroke-width="2"{dashes}/><text x="{_c(x + 26)}" y="{_c(y)}" font-size="{_TICK_FONT}" '
            f'fill="currentColor">{_esc(text)}</text></g>'
        )
        x += width
    return y + 6, "".join(out)
