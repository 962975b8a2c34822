"""Ranges and runs drawn: tiny inline SVG built as strings, for pages, the run report and reference curves.

No plotting library: a drawing is a few dozen elements on one line, with no script, no
external asset and no font download, so it sits inside Markdown as raw HTML and works
offline. Same input, same bytes. Colours are `currentColor` for text and axes (light and
dark schemes) and classes (`mm-band`, `mm-median` ...) let the site's CSS restyle marks.

Every mark carries data attributes in the coordinate system of its axis (`data-x-min`,
`data-x-max`, `data-x`, `data-y`) and the numbers it stands for (`data-min`, `data-max`,
`data-value`, as `repr` of the number), so tests read the geometry instead of pixels.
Wrap a drawing in a block element (e.g. `<div>`) in Markdown so it stays raw HTML.
"""
from __future__ import annotations

import decimal
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .model import AtStep, Band, Exact, Expectation, Median, Presence
from .phrase import describe, num

# Drawing units of the viewBox; the SVG scales to its column (width 100%) up to MAX_WIDTH px.
WIDTH = 480
MAX_WIDTH = 600
_FONT = 12
_TICK_FONT = 11
_CHAR = 0.6  # average glyph width as a share of the font size, to keep labels apart and inside

# Thinning: a run with more steps than this is drawn from buckets of consecutive steps, each
# keeping its first, lowest, highest and last value (spikes stay); failing steps are marked apart.
MAX_POINTS = 2000

_BAND, _WINDOW, _MEDIAN, _EXACT = "#4f86c6", "#8a63c2", "#d9822b", "#c0392b"
_RUN_COLOURS = ("#2a7ab9", "#d9822b", "#2f9e6e", "#b8457a", "#7a6cc4", "#8c7a2a")
_RUN_DASHES = ("", "6 3", "2 2", "8 3 2 3")
_SYNTAX = {c: f"&#{ord(c)};" for c in "&<>\"'|*_`[]\\{}~^#!$:="}
_SYNTAX_RE = re.compile("[" + re.escape("".join(_SYNTAX)) + "]")
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff\u2028\u2029\r\n\t]")


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
    frac = raw / 10.0**exp
    # Nearest of 1, 2, 5, 10 on a log scale (the thresholds are their geometric means).
    mant = 1 if frac < 1.42 else 2 if frac < 3.17 else 5 if frac < 7.08 else 10
    if mant == 10:
        mant, exp = 1, exp + 1
    step = mant * 10.0**exp
    k0, k1 = math.ceil(lo / step), math.floor(hi / step)
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

    def at(self, value: float) -> float:
        share = (value / 2 - self.lo / 2) / (self.hi / 2 - self.lo / 2)
        return self.start + share * (self.end - self.start)


def _domain(values: Sequence[float], integer: bool = False) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if lo == hi:
        pad = 1.0 if integer or lo == 0 else abs(lo) * 0.1
        return lo - pad, hi + pad
    # A twentieth of the span on each side; at least one float step, so the ends stay off the numbers.
    margin = max((hi / 2 - lo / 2) * 0.1, math.ulp(lo), math.ulp(hi))
    return lo - margin, hi + margin


def make_axis(values: Sequence[float], start: float, end: float, font: float = _TICK_FONT,
              integer: bool = False) -> Axis:
    """An axis covering every value with a margin, with as many ticks as fit their labels."""
    lo, hi = _domain(values, integer)
    room = abs(end - start)
    for target in (5, 4, 3, 2):
        ticks = nice_ticks(lo, hi, target)
        if integer:
            ticks = sorted({float(math.floor(t)) for t in ticks if t == math.floor(t)}) or ticks
        widest = max(_text_width(num(t), font) for t in ticks)
        if len(ticks) < 2 or room / (len(ticks) - 1) > widest + font:
            break
    return Axis(lo, hi, start, end, tuple(ticks))


def _tick_value(t: float) -> int | float:
    return int(t) if t.is_integer() and abs(t) < 2**53 else t


# --- one metric's ranges on every profile ---------------------------------------------

_ROW = 34          # height of one row: label line then mark
_TOP = 4
_MARK_H = 12


def _numbers(e: Expectation) -> list[float]:
    if isinstance(e, Band):
        return [float(v) for v in (e.min, e.max) if v is not None]
    if isinstance(e, (Median, Exact)):
        return [float(e.value)]
    return []


def _row_tail(e: Expectation) -> str:
    """What the row label adds to the profile title: a window or a single step."""
    if isinstance(e, Band) and e.window:
        return f" \u00b7 first {num(e.window.first)} steps"
    if isinstance(e, Exact) and isinstance(e.at, AtStep):
        return f" \u00b7 at step {num(e.at.step)}"
    return ""


def range_drawing(rows: Sequence[tuple[str, Expectation]], unit: str | None) -> str:
    """One metric's expectations on every profile, on one shared axis, as one-line inline SVG.

    `rows` are (profile title, expectation) in the order they are drawn, one row each.
    Returns "" when there is nothing to place on an axis: no rows, or presence only (the
    words "logged in every step" say all a drawing could).
    """
    numbers = [v for _, e in rows for v in _numbers(e)]
    if not numbers:
        return ""
    words = [f"{title}: {describe(e, unit)}" for title, e in rows]
    uid = _uid("range", [(t, e.model_dump_json()) for t, e in rows], unit)
    pad = 12.0
    axis = make_axis(numbers, pad, WIDTH - pad)
    # Room for the outer tick labels inside the viewBox: shrink the axis to fit them.
    first, last = num(axis.ticks[0]), num(axis.ticks[-1])
    start = max(pad, _text_width(first, _TICK_FONT) / 2 + 2)
    end = WIDTH - max(pad, _text_width(last, _TICK_FONT) / 2 + 2)
    axis = Axis(axis.lo, axis.hi, start, end, axis.ticks)

    marks: list[str] = []
    for i, ((title, e), said) in enumerate(zip(rows, words)):
        y = _TOP + i * _ROW
        tail = _row_tail(e)
        label = _clip(title, WIDTH - 8 - _text_width(tail, _FONT), _FONT) + tail
        marks.append(f'<text x="4" y="{_c(y + 11)}" fill="currentColor">{_esc(label)}</text>')
        if not isinstance(e, Presence):  # a faint track: where the row's axis runs
            marks.append(f'<line x1="{_c(axis.start)}" y1="{_c(y + 16 + _MARK_H / 2)}" x2="{_c(axis.end)}" '
                         f'y2="{_c(y + 16 + _MARK_H / 2)}" stroke="currentColor" stroke-opacity="0.15"/>')
        marks.append(_range_mark(e, said, axis, y + 16, uid))

    y_axis = _TOP + len(rows) * _ROW + 2
    marks.append(_x_axis(axis, _TOP, y_axis))
    height = y_axis + 18
    if unit:
        height += 13
        marks.append(f'<text x="{_c((axis.start + axis.end) / 2)}" y="{_c(height - 3)}" text-anchor="middle" '
                     f'font-size="{_TICK_FONT}" fill="currentColor">{_esc(unit)}</text>')
    label = _esc("; ".join(words))
    defs = (f'<defs><pattern id="{uid}-w" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{_WINDOW}" fill-opacity="0.2"/>'
            f'<line x1="0" y1="0" x2="0" y2="6" stroke="{_WINDOW}" stroke-width="3"/></pattern>'
            f'<marker id="{uid}-a" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="8" markerHeight="8" '
            f'orient="auto-start-reverse" markerUnits="userSpaceOnUse"><path d="M0 0L8 4L0 8z" fill="{_BAND}"/>'
            f'</marker></defs>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="mm-drawing mm-ranges" role="img" '
            f'aria-label="{label}" viewBox="0 0 {WIDTH} {_c(height)}" width="100%" '
            f'style="max-width:{MAX_WIDTH}px;height:auto" font-size="{_FONT}" '
            f'data-axis-min="{axis.lo!r}" data-axis-max="{axis.hi!r}" '
            f'data-x-start="{_c(axis.start)}" data-x-end="{_c(axis.end)}">'
            f'<title>{label}</title>{defs}{"".join(marks)}</svg>')


def _x_axis(axis: Axis, top: float, y: float) -> str:
    out = [f'<line class="mm-axis" x1="{_c(axis.start)}" y1="{_c(y)}" x2="{_c(axis.end)}" y2="{_c(y)}" '
           f'stroke="currentColor" stroke-opacity="0.6"/>']
    for t in axis.ticks:
        x = _c(axis.at(t))
        out.append(f'<g class="mm-tick" data-value="{_tick_value(t)!r}" data-x="{x}">'
                   f'<line x1="{x}" y1="{_c(top)}" x2="{x}" y2="{_c(y)}" stroke="currentColor" stroke-opacity="0.12"/>'
                   f'<line x1="{x}" y1="{_c(y)}" x2="{x}" y2="{_c(y + 4)}" stroke="currentColor" stroke-opacity="0.6"/>'
                   f'<text x="{x}" y="{_c(y + 15)}" text-anchor="middle" font-size="{_TICK_FONT}" '
                   f'fill="currentColor">{_esc(num(_tick_value(t)))}</text></g>')
    return "".join(out)


def _range_mark(e: Expectation, said: str, axis: Axis, y: float, uid: str) -> str:
    title = f"<title>{_esc(said)}</title>"
    mid = y + _MARK_H / 2
    if isinstance(e, Band):
        x0 = axis.at(e.min) if e.min is not None else axis.start
        x1 = axis.at(e.max) if e.max is not None else axis.end
        attrs = ""
        attrs += f' data-min="{e.min!r}"' if e.min is not None else ""
        attrs += f' data-max="{e.max!r}"' if e.max is not None else ""
        open_side = "max" if e.max is None else "min" if e.min is None else ""
        attrs += f' data-open="{open_side}"' if open_side else ""
        kind = "window" if e.window else "band"
        fill = f'url(#{uid}-w)' if e.window else _BAND
        stroke = _WINDOW if e.window else _BAND
        w = max(x1 - x0, 2.0)
        bx = x0 if x1 - x0 >= 2 else (x0 + x1) / 2 - 1
        arrow = ""
        if open_side:
            # An open band runs to the edge of the axis and on: an arrow points past it.
            ax0, ax1 = (x1 - 1, axis.end + 6) if open_side == "max" else (x0 + 1, axis.start - 6)
            arrow = (f'<line x1="{_c(ax0)}" y1="{_c(mid)}" x2="{_c(ax1)}" y2="{_c(mid)}" stroke="{_BAND}" '
                     f'stroke-width="2" marker-end="url(#{uid}-a)"/>')
        return (f'<g class="mm-mark mm-{kind}" data-kind="{kind}"{attrs} data-x-min="{_c(x0)}" '
                f'data-x-max="{_c(x1)}">{title}<rect x="{_c(bx)}" y="{_c(y)}" width="{_c(w)}" '
                f'height="{_MARK_H}" rx="2" fill="{fill}" fill-opacity="{"1" if e.window else "0.6"}" '
                f'stroke="{stroke}"/>{arrow}</g>')
    if isinstance(e, Median):
        x = axis.at(e.value)
        r = _MARK_H / 2
        return (f'<g class="mm-mark mm-median" data-kind="median" data-value="{e.value!r}" data-x="{_c(x)}">'
                f'{title}<path d="M{_c(x)} {_c(y)}l{_c(r)} {_c(r)}'
                f'l-{_c(r)} {_c(r)}l-{_c(r)} -{_c(r)}z" fill="{_MEDIAN}" stroke="{_MEDIAN}"/></g>')
    if isinstance(e, Exact):
        x = axis.at(e.value)
        return (f'<g class="mm-mark mm-exact" data-kind="exact" data-value="{e.value!r}" data-x="{_c(x)}">'
                f'{title}<line x1="{_c(x)}" y1="{_c(y - 2)}" x2="{_c(x)}" '
                f'y2="{_c(y + _MARK_H + 2)}" stroke="{_EXACT}" stroke-width="3"/></g>')
    assert isinstance(e, Presence)
    # Presence has no value: a dotted line along the whole row, off the axis's numbers, broken by its words.
    words = "logged in every step"
    cx, half = (axis.start + axis.end) / 2, _text_width(words, _TICK_FONT) / 2 + 4
    dots = 'stroke="currentColor" stroke-width="2" stroke-dasharray="1 4" stroke-linecap="round"'
    return (f'<g class="mm-mark mm-presence" data-kind="presence">{title}'
            f'<line x1="{_c(axis.start)}" y1="{_c(mid)}" x2="{_c(cx - half)}" y2="{_c(mid)}" {dots}/>'
            f'<line x1="{_c(cx + half)}" y1="{_c(mid)}" x2="{_c(axis.end)}" y2="{_c(mid)}" {dots}/>'
            f'<text x="{_c(cx)}" y="{_c(mid + 3.5)}" text-anchor="middle" font-size="{_TICK_FONT}" '
            f'fill="currentColor">{words}</text></g>')
