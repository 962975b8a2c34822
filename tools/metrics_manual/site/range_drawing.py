"""One metric's ranges on every profile, drawn on one shared axis (the drawing beside each entry)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from metrics_manual.model import kinds
from metrics_manual.model.domain import UNBOUNDED, Bounds
from metrics_manual.model.phrase import describe, num
from metrics_manual.model.schema import (
    AtStep,
    Band,
    Corridor,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    ListedSteps,
    Median,
    Presence,
    Window,
)
from metrics_manual.site.axes import Axis, make_axis, tick_value
from metrics_manual.site.svg import (
    BAND,
    EXACT,
    FONT,
    MAX_WIDTH,
    MEDIAN,
    TICK_FONT,
    WIDTH,
    WINDOW,
    clip_to,
    coord,
    corridor_buckets,
    defs,
    drawing_id,
    esc,
    kinds_legend,
    legend_key,
    text_width,
)

_ROW = 36  # height of one row: label line then mark
_TOP = 4
_MARK_H = 12
_SWEEP_H = 36  # a corridor's mark: its steps run down the row, first at the top
_SWEEP_POINTS = 120  # a corridor's steps drawn in the row at most (buckets of consecutive steps beyond)


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
                case Window() | FirstSteps() | ListedSteps():  # no exact value covers these; said all the same
                    return "exact"
                case _:
                    assert_never(span)
        case Presence():
            return "logged in every step"
        case Corridor():
            points = e.reference.points
            return f"corridor, steps {num(points[0][0])} to {num(points[-1][0])} downward"
        case _:
            assert_never(e)


def _row_height(e: Expectation) -> float:
    return _ROW + (_SWEEP_H - _MARK_H if isinstance(e, Corridor) else 0)


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
    uid = drawing_id("range", words, unit, list(shared))  # the words and the shared numbers state all it draws
    pad = 12.0
    axis = make_axis([*numbers, *shared], pad, WIDTH - pad, room=0.25, bounds=domain)
    # Room for the outer tick labels inside the viewBox: shrink the axis to fit them.
    start = max(pad, text_width(axis.labels[0], TICK_FONT) / 2 + 2)
    end = WIDTH - max(pad, text_width(axis.labels[-1], TICK_FONT) / 2 + 2)
    axis = Axis(axis.lo, axis.hi, start, end, axis.ticks, axis.labels)

    marks: list[str] = []
    keys: set[str] = set()
    previous = None
    y = float(_TOP)
    for (title, e), said in zip(rows, words):
        kind = _kind_words(e)
        if title != previous:
            label = clip_to(title, WIDTH - 8 - text_width(" \u00b7 " + kind, FONT), FONT) + " \u00b7 " + kind
        else:  # the same profile's next range: its statistic alone, under the title above
            label = "\u21b3 " + kind
        previous = title
        keys.update(legend_key(e))
        marks.append(f'<text x="4" y="{coord(y + 12)}" fill="currentColor">{esc(label)}</text>')
        if kinds.numbers(e):  # a faint track where the row's axis runs (presence has no value to place)
            mid = y + 18 + (_row_height(e) - _ROW + _MARK_H) / 2
            marks.append(
                f'<line x1="{coord(axis.start)}" y1="{coord(mid)}" x2="{coord(axis.end)}" '
                f'y2="{coord(mid)}" stroke="currentColor" stroke-opacity="0.15"/>'
            )
        marks.append(_range_mark(e, said, axis, y + 18, uid))
        y += _row_height(e)

    y_axis = y + 2
    marks.append(_x_axis(axis, _TOP, y_axis))
    height: float = y_axis + 19
    if unit:
        height += 15
        marks.append(
            f'<text x="{coord((axis.start + axis.end) / 2)}" y="{coord(height - 3)}" text-anchor="middle" '
            f'font-size="{TICK_FONT}" fill="currentColor">{esc(clip_to(unit, WIDTH - 24, TICK_FONT))}</text>'
        )
    height, legend = kinds_legend(keys, height + 4, uid)
    marks.append(legend)
    height += 2
    label = esc("; ".join(words))
    reach = (f' data-domain-min="{domain.lo!r}"' if domain.lo is not None else "") + (
        f' data-domain-max="{domain.hi!r}"' if domain.hi is not None else ""
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mm-drawing mm-ranges" role="img" '
        f'aria-label="{label}" viewBox="0 0 {WIDTH} {coord(height)}" width="100%" '
        f'style="max-width:{MAX_WIDTH}px;height:auto" font-size="{FONT}" '
        f'data-axis-min="{axis.lo!r}" data-axis-max="{axis.hi!r}"{reach} '
        f'data-x-start="{coord(axis.start)}" data-x-end="{coord(axis.end)}">'
        f"<title>{label}</title>{defs(uid)}{''.join(marks)}</svg>"
    )


def _x_axis(axis: Axis, top: float, y: float) -> str:
    out = [
        f'<line class="mm-axis" x1="{coord(axis.start)}" y1="{coord(y)}" x2="{coord(axis.end)}" y2="{coord(y)}" '
        f'stroke="currentColor" stroke-opacity="0.6"/>'
    ]
    for t, label in zip(axis.ticks, axis.labels):
        x = coord(axis.at(t))
        out.append(
            f'<g class="mm-tick" data-value="{tick_value(t)!r}" data-x="{x}">'
            f'<line x1="{x}" y1="{coord(top)}" x2="{x}" y2="{coord(y)}" stroke="currentColor" stroke-opacity="0.12"/>'
            f'<line x1="{x}" y1="{coord(y)}" x2="{x}" y2="{coord(y + 4)}" stroke="currentColor" stroke-opacity="0.6"/>'
            f'<text x="{x}" y="{coord(y + 15)}" text-anchor="middle" font-size="{TICK_FONT}" '
            f'fill="currentColor">{esc(label)}</text></g>'
        )
    return "".join(out)


def _range_mark(e: Expectation, said: str, axis: Axis, y: float, uid: str) -> str:
    title = f"<title>{esc(said)}</title>"
    mid = y + _MARK_H / 2
    match e:
        case Band():
            return _band_mark(e, title, axis, y, mid, uid)
        case Median():
            x = axis.at(e.value)
            r = _MARK_H / 2
            return (
                f'<g class="mm-mark mm-median" data-kind="median" data-value="{e.value!r}" data-x="{coord(x)}">'
                f'{title}<path d="M{coord(x)} {coord(y)}l{coord(r)} {coord(r)}'
                f'l-{coord(r)} {coord(r)}l-{coord(r)} -{coord(r)}z" fill="{MEDIAN}" stroke="{MEDIAN}"/></g>'
            )
        case Exact():
            x = axis.at(e.value)
            return (
                f'<g class="mm-mark mm-exact" data-kind="exact" data-value="{e.value!r}" data-x="{coord(x)}">'
                f'{title}<line x1="{coord(x)}" y1="{coord(y - 2)}" x2="{coord(x)}" '
                f'y2="{coord(y + _MARK_H + 2)}" stroke="{EXACT}" stroke-width="3"/></g>'
            )
        case Presence():
            return _presence_mark(title, axis, mid)
        case Corridor():
            return _sweep_mark(e, title, axis, y)
        case _:
            assert_never(e)


def _sweep_mark(e: Corridor, title: str, axis: Axis, y: float) -> str:
    """A corridor on the value axis: its steps run down the row (first at the top), shaded from its
    lowest to its highest bound at each step, its reference a dashed line through it."""
    rows = corridor_buckets(e, _SWEEP_POINTS)
    first, last = rows[0][0], rows[-1][0]
    if last > first:
        ys = [y + _SWEEP_H * (s - first) / (last - first) for s, _, _, _ in rows]
    else:  # one step: a bar of the mark's height
        rows, ys = rows * 2, [y, y + _SWEEP_H]
    left = [(axis.at(lo), at) for (_, lo, _, _), at in zip(rows, ys)]
    right = [(axis.at(hi), at) for (_, _, hi, _), at in zip(rows, ys)]
    outline = " ".join(f"{coord(a)},{coord(b)}" for a, b in [*left, *reversed(right)])
    ref = " ".join(f"{coord(axis.at(v))},{coord(at)}" for (_, _, _, v), at in zip(rows, ys))
    lo, hi = e.envelope
    return (
        f'<g class="mm-mark mm-corridor" data-kind="corridor" data-min="{lo!r}" data-max="{hi!r}" '
        f'data-x-min="{coord(axis.at(lo))}" data-x-max="{coord(axis.at(hi))}" data-first-step="{first}" '
        f'data-last-step="{last}">{title}<polygon points="{outline}" fill="{BAND}" fill-opacity="0.3" '
        f'stroke="{BAND}"/><polyline points="{ref}" fill="none" stroke="{BAND}" stroke-width="1.5" '
        f'stroke-dasharray="4 3"/></g>'
    )


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
    fill = f"url(#{uid}-w)" if e.window else BAND
    stroke = WINDOW if e.window else BAND
    w = max(x1 - x0, 2.0)
    bx = x0 if x1 - x0 >= 2 else (x0 + x1) / 2 - 1
    arrow = ""
    if open_side:
        # An open band runs to the edge of the axis and on: an arrow points past it.
        ax0, ax1 = (x1 - 1, axis.end + 6) if open_side == "max" else (x0 + 1, axis.start - 6)
        arrow = (
            f'<line x1="{coord(ax0)}" y1="{coord(mid)}" x2="{coord(ax1)}" y2="{coord(mid)}" stroke="{BAND}" '
            f'stroke-width="2" marker-end="url(#{uid}-a)"/>'
        )
    return (
        f'<g class="mm-mark mm-{kind}" data-kind="{kind}"{attrs} data-x-min="{coord(x0)}" '
        f'data-x-max="{coord(x1)}">{title}<rect x="{coord(bx)}" y="{coord(y)}" width="{coord(w)}" '
        f'height="{_MARK_H}" rx="2" fill="{fill}" fill-opacity="{"1" if e.window else "0.6"}" '
        f'stroke="{stroke}"/>{arrow}</g>'
    )


def _presence_mark(title: str, axis: Axis, mid: float) -> str:
    # Presence has no value: a dotted line along the whole row, off the axis's numbers, broken by its words.
    words = "logged in every step"
    cx, half = (axis.start + axis.end) / 2, text_width(words, TICK_FONT) / 2 + 4
    dots = 'stroke="currentColor" stroke-width="2" stroke-dasharray="1 4" stroke-linecap="round"'
    return (
        f'<g class="mm-mark mm-presence" data-kind="presence">{title}'
        f'<line x1="{coord(axis.start)}" y1="{coord(mid)}" x2="{coord(cx - half)}" y2="{coord(mid)}" {dots}/>'
        f'<line x1="{coord(cx + half)}" y1="{coord(mid)}" x2="{coord(axis.end)}" y2="{coord(mid)}" {dots}/>'
        f'<text x="{coord(cx)}" y="{coord(mid + 3.5)}" text-anchor="middle" font-size="{TICK_FONT}" '
        f'fill="currentColor">{words}</text></g>'
    )
