"""Per-step curves of runs over their expected ranges, failing steps marked (the captures' pages, the run report).

x is the step, y the value. A band is shaded over the steps it covers (its first N steps,
its window, or every step; a window hatched), a median is a dashed line over its steps, an
exact value a solid line (or a cross at its step); presence has no value to draw; a corridor
is shaded between its bounds at each step of its reference, the reference dashed through it. The y axis
labels the range's own numbers (a band's limits) beside round ticks, and never passes the
unit's natural domain. A non-finite value breaks its curve: infinity is marked at the top,
minus infinity at the bottom, NaN on the step axis; the first few are labelled. A failing
step gets a tick in a rug under the plot and a dot at its value (on the step axis when its
value is NaN or not logged), each with its own <title>; the worst few are labelled with
their step and value. A legend names the runs and each kind of mark drawn. Runs of more than
MAX_POINTS steps are thinned (see `_thin`); failing steps are never thinned away.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import assert_never

from metrics_manual.model import kinds
from metrics_manual.model.domain import UNBOUNDED, Bounds
from metrics_manual.model.phrase import describe, measured, num
from metrics_manual.model.schema import AtStep, Band, Corridor, Exact, Expectation, Median, Presence
from metrics_manual.site.axes import Axis, make_axis, tick_value
from metrics_manual.site.svg import (
    BAND,
    EXACT,
    FONT,
    MAX_POINTS,
    MAX_WIDTH,
    MEDIAN,
    RUN_COLOURS,
    RUN_DASHES,
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


def _outside(step: int, v: float, expectations: Sequence[Expectation]) -> float:
    """How far a finite value at `step` lies from what its expectations allow (0 inside): orders the
    worst failing steps."""
    gaps = []
    for e in expectations:
        match e:
            case Band():
                gaps.append(max((e.min - v) if e.min is not None else 0.0, (v - e.max) if e.max is not None else 0.0))
            case Median() | Exact():
                gaps.append(abs(v - e.value))
            case Presence():
                pass
            case Corridor():
                if step in e.reference_at:
                    lo, hi = e.bounds(e.reference_at[step])
                    gaps.append(max(lo - v, v - hi, 0.0))
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
    """Per-step curves of one metric (one polyline per run name) over its expected ranges, failing steps
    marked; one-line inline SVG, or "" when no run has a step and no step fails (the marks: the module's
    docstring)."""
    failing = failing or {}
    runs = {name: sorted((int(s), float(v)) for s, v in values.items()) for name, values in series.items()}
    # The axes need only each run's extremes (runs can be long): steps are sorted, values are not.
    steps = [s for pts in runs.values() if pts for s in (pts[0][0], pts[-1][0])]
    steps += [int(s) for ss in failing.values() for s in ss]
    steps += [
        p[0] for e in expectations if isinstance(e, Corridor) for p in (e.reference.points[0], e.reference.points[-1])
    ]
    if not steps:
        return ""
    said = [describe(e, unit) for e in expectations]
    # <defs> ids: from what tells drawings apart on one page, not from every point (cheap on long runs).
    uid = drawing_id(
        "series",
        title,
        unit,
        said,
        [(n, len(p), p[:1], p[-1:]) for n, p in runs.items()],
        sorted((n, sorted(s)) for n, s in failing.items()),
    )

    top = 18.0 if unit else 8.0
    x_axis, y_axis = _plot_axes(runs, steps, expectations, top, domain)
    left, right, bottom = x_axis.start, x_axis.end, y_axis.start
    parts: list[str] = []
    keys: set[str] = set()
    if unit:
        parts.append(
            f'<text x="{coord(left)}" y="12" font-size="{TICK_FONT}" fill="currentColor">{esc(clip_to(unit, right - left, TICK_FONT))}</text>'
        )
    parts.append(_plot_ticks(x_axis, y_axis, left, right, top, bottom))
    all_steps = sorted({s for pts in runs.values() for s, _ in pts})
    for e, words in zip(expectations, said):
        mark = _expected_mark(e, words, x_axis, y_axis, all_steps, uid)
        if mark:
            keys.update(k for k in legend_key(e) if k != "open")
        parts.append(mark)

    nonfinite_y = {"nan": bottom, "inf": top, "-inf": bottom}
    curves, legend, labels, curve_keys = _curves(runs, x_axis, y_axis, nonfinite_y, unit)
    parts += curves
    keys |= curve_keys
    rug, worst, rug_keys = _failing_marks(series, failing, expectations, x_axis, y_axis, nonfinite_y, unit)
    keys |= rug_keys
    parts += rug
    worst.sort(key=lambda w: -w[0])
    labels += [(x, y, words) for _, x, y, words in worst[:_LABELLED]]
    parts.append(_point_labels(labels, left, right, top, bottom))

    height, legend_svg = _legend(legend, left, bottom + 2 + _RUG + 44)
    height, kinds_svg = kinds_legend(keys, height + 2, uid, left)
    label = esc(title)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="mm-drawing mm-series" role="img" '
        f'aria-label="{label}" viewBox="0 0 {WIDTH} {coord(height)}" width="100%" '
        f'style="max-width:{MAX_WIDTH}px;height:auto" font-size="{FONT}" '
        f'data-axis-x-min="{x_axis.lo!r}" data-axis-x-max="{x_axis.hi!r}" '
        f'data-axis-y-min="{y_axis.lo!r}" data-axis-y-max="{y_axis.hi!r}" '
        f'data-x-start="{coord(left)}" data-x-end="{coord(right)}" data-y-start="{coord(bottom)}" data-y-end="{coord(top)}">'
        f"<title>{label}</title>{defs(uid)}{''.join(parts)}{legend_svg}{kinds_svg}</svg>"
    )


def _plot_axes(
    runs: Mapping[str, list[tuple[int, float]]],
    steps: list[int],
    expectations: Sequence[Expectation],
    top: float,
    domain: Bounds,
) -> tuple[Axis, Axis]:
    """The step axis and the value axis of the plot; the value axis labels the ranges' own numbers."""
    # Band limits first: they win a tick over a median or exact value too close to them.
    # A corridor's numbers are a curve's, not round limits: the axis holds them without labelling them.
    flat = [e for e in expectations if not isinstance(e, Corridor)]
    expected = sorted((v for e in flat for v in kinds.numbers(e)), key=lambda v: v not in _limits(expectations))
    finite: list[float] = [v for e in expectations if isinstance(e, Corridor) for v in kinds.numbers(e)]
    for pts in runs.values():
        values = [v for _, v in pts if math.isfinite(v)]
        finite += [min(values), max(values)] if values else []
    y_axis = make_axis(
        finite or ([] if expected else [0.0]),
        top + _PLOT_H,
        top,
        bounds=domain,
        reach=False,
        marked=expected,
    )
    widest = max(text_width(label, TICK_FONT) for label in y_axis.labels)
    return make_axis(steps, max(28.0, widest + 10), WIDTH - 12.0, integer=True), y_axis


def _curves(
    runs: Mapping[str, list[tuple[int, float]]],
    x_axis: Axis,
    y_axis: Axis,
    nonfinite_y: Mapping[str, float],
    unit: str | None,
) -> tuple[list[str], list[tuple[str, str, str]], list[tuple[float, float, str]], set[str]]:
    """Each run's curve in its colour and dash; the legend's entries (name, colour, dash); the first few
    non-finite points of each, labelled as (x, y, words); the legend keys of the marks drawn."""
    parts: list[str] = []
    legend: list[tuple[str, str, str]] = []
    labels: list[tuple[float, float, str]] = []
    keys: set[str] = set()
    for i, (name, pts) in enumerate(runs.items()):
        colour, dash = RUN_COLOURS[i % len(RUN_COLOURS)], RUN_DASHES[i % len(RUN_DASHES)]
        legend.append((name, colour, dash))
        curve, odd = _run_curve(name, pts, colour, dash, x_axis, y_axis, nonfinite_y, unit)
        parts.append(curve)
        for s, v in odd[:_LABELLED]:
            labels.append((x_axis.at(s), nonfinite_y[repr(v)], f"{_value_words(v, unit)}, step {num(s)}"))
        keys.update({"nan" if math.isnan(v) else "inf" for _, v in odd})
    return parts, legend, labels, keys


def _failing_marks(
    series: Mapping[str, Mapping[int, float]],
    failing: Mapping[str, Sequence[int]],
    expectations: Sequence[Expectation],
    x_axis: Axis,
    y_axis: Axis,
    nonfinite_y: Mapping[str, float],
    unit: str | None,
) -> tuple[list[str], list[tuple[float, float, float, str]], set[str]]:
    """Each failing step's tick in the rug under the plot and its dot at its value (on the step axis when
    NaN or not logged); the candidates for a label, as (how far outside, x, y, words); the legend keys."""
    bottom = y_axis.start
    keys: set[str] = set()
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
                dot = f'<circle cx="{coord(x)}" cy="{coord(y)}" r="3.5" fill="none" stroke="{EXACT}" stroke-width="2"/>'
                keys.add("missing")
                worst.append((math.inf, x, y, f"not logged, step {num(s)}"))
            else:
                dot = f'<circle cx="{coord(x)}" cy="{coord(y)}" r="2.5" fill="{EXACT}"/>'
                if math.isfinite(got):
                    far = _outside(s, got, expectations)
                    near = [n for e in expectations for n in kinds.numbers(e)]
                    worst.append((far, x, y, f"step {num(s)}: {measured(got, near)}"))
            rug.append(
                f'<g class="mm-failing" data-run="{esc(name)}" data-step="{s}"{value_attr} '
                f'data-x="{coord(x)}" data-y="{coord(y)}"><title>{esc(ring)}</title>'
                f'<line class="mm-rug" x1="{coord(x)}" y1="{coord(bottom + 2)}" x2="{coord(x)}" y2="{coord(bottom + 2 + _RUG)}" '
                f'stroke="{EXACT}" stroke-width="1.5"/>{dot}</g>'
            )
            keys.add("failing")
    return rug, worst, keys


def _limits(expectations: Sequence[Expectation]) -> set[float]:
    return {float(v) for e in expectations if isinstance(e, Band) for v in (e.min, e.max) if v is not None}


def _point_labels(labels: list[tuple[float, float, str]], left: float, right: float, top: float, bottom: float) -> str:
    """Words beside the few points that need them (the worst failing steps, NaN, not logged), inside the plot;
    a label that would overlap one placed before moves a line down (neighbouring points stay readable)."""
    out: list[str] = []
    placed: list[tuple[float, float, float]] = []  # (x0, x1, baseline) of each label written
    line = TICK_FONT + 3
    for x, y, words in labels:
        width = text_width(words, TICK_FONT)
        cx = min(max(x, left + width / 2 + 2), right - width / 2 - 2)
        base = y - 7 if y - 7 - TICK_FONT > top else y + TICK_FONT + 5
        base = min(max(base, top + TICK_FONT + 2), bottom - 3)
        x0, x1 = cx - width / 2, cx + width / 2
        for _ in range(len(placed) + 1):
            if all(x1 < a or x0 > b or abs(base - ly) >= line for a, b, ly in placed):
                break
            base = base + line if base + line <= bottom - 3 else base - line
        placed.append((x0, x1, base))
        out.append(
            f'<text class="mm-label" x="{coord(cx)}" y="{coord(base)}" text-anchor="middle" font-size="{TICK_FONT}" '
            f'fill="currentColor">{esc(words)}</text>'
        )
    return "".join(out)


def _plot_ticks(x_axis: Axis, y_axis: Axis, left: float, right: float, top: float, bottom: float) -> str:
    out = [
        f'<rect x="{coord(left)}" y="{coord(top)}" width="{coord(right - left)}" height="{coord(bottom - top)}" '
        f'fill="none" stroke="currentColor" stroke-opacity="0.4"/>'
    ]
    for t, label in zip(x_axis.ticks, x_axis.labels):
        x = coord(x_axis.at(t))
        out.append(
            f'<g class="mm-tick mm-tick-x" data-value="{tick_value(t)!r}" data-x="{x}">'
            f'<line x1="{x}" y1="{coord(top)}" x2="{x}" y2="{coord(bottom + 4)}" stroke="currentColor" '
            f'stroke-opacity="0.12"/><text x="{x}" y="{coord(bottom + _RUG + 16)}" text-anchor="middle" '
            f'font-size="{TICK_FONT}" fill="currentColor">{esc(label)}</text></g>'
        )
    for t, label in zip(y_axis.ticks, y_axis.labels):
        y = coord(y_axis.at(t))
        out.append(
            f'<g class="mm-tick mm-tick-y" data-value="{tick_value(t)!r}" data-y="{y}">'
            f'<line x1="{coord(left - 4)}" y1="{y}" x2="{coord(right)}" y2="{y}" stroke="currentColor" '
            f'stroke-opacity="0.12"/><text x="{coord(left - 6)}" y="{coord(float(y) + 3.5)}" text-anchor="end" '
            f'font-size="{TICK_FONT}" fill="currentColor">{esc(label)}</text></g>'
        )
    out.append(
        f'<text x="{coord(right)}" y="{coord(bottom + _RUG + 30)}" text-anchor="end" font-size="{TICK_FONT}" '
        f'fill="currentColor">step</text>'
    )
    return "".join(out)


def _expected_mark(e: Expectation, said: str, x_axis: Axis, y_axis: Axis, steps: list[int], uid: str) -> str:
    title = f"<title>{esc(said)}</title>"
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
            fill = f'fill="url(#{uid}-w)"' if e.window else f'fill="{BAND}" fill-opacity="0.2"'
            return (
                f'<g class="mm-mark mm-{kind}" data-kind="{kind}"{attrs} data-y-min="{coord(y_lo)}" data-y-max="{coord(y_hi)}" '
                f'data-x-min="{coord(x0)}" data-x-max="{coord(x1)}">{title}<rect x="{coord(x0)}" y="{coord(y_hi)}" '
                f'width="{coord(max(x1 - x0, 1))}" height="{coord(max(y_lo - y_hi, 1))}" {fill} stroke="{WINDOW if e.window else BAND}"/></g>'
            )
        case Median():
            y = y_axis.at(e.value)
            x0, x1 = _covered_x(e, x_axis, steps)
            return (
                f'<g class="mm-mark mm-median" data-kind="median" data-value="{e.value!r}" data-y="{coord(y)}" '
                f'data-x-min="{coord(x0)}" data-x-max="{coord(x1)}">{title}'
                f'<line x1="{coord(x0)}" y1="{coord(y)}" x2="{coord(max(x1, x0 + 1))}" y2="{coord(y)}" stroke="{MEDIAN}" '
                f'stroke-width="2" stroke-dasharray="7 4"/><text x="{coord(max(x1, left + 80) - 3)}" y="{coord(y - 4)}" '
                f'text-anchor="end" font-size="{TICK_FONT}" fill="currentColor">median {esc(num(e.value))}</text></g>'
            )
        case Exact():
            y = y_axis.at(e.value)
            if isinstance(e.at, AtStep):
                x = x_axis.at(e.at.step)
                line = (
                    f'<line x1="{coord(x - 7)}" y1="{coord(y)}" x2="{coord(x + 7)}" y2="{coord(y)}" stroke="{EXACT}" stroke-width="3"/>'
                    f'<line x1="{coord(x)}" y1="{coord(y - 7)}" x2="{coord(x)}" y2="{coord(y + 7)}" stroke="{EXACT}" stroke-width="3"/>'
                )
                where = f' data-step="{e.at.step}" data-x="{coord(x)}"'
            else:
                line = f'<line x1="{coord(left)}" y1="{coord(y)}" x2="{coord(right)}" y2="{coord(y)}" stroke="{EXACT}" stroke-width="1.5"/>'
                where = ""
            return (
                f'<g class="mm-mark mm-exact" data-kind="exact" data-value="{e.value!r}" data-y="{coord(y)}"{where}>'
                f"{title}{line}</g>"
            )
        case Presence():
            return ""  # every logged step is already a point of the curve
        case Corridor():
            return _corridor_mark(e, title, x_axis, y_axis)
        case _:
            assert_never(e)


def _corridor_mark(e: Corridor, title: str, x_axis: Axis, y_axis: Axis) -> str:
    """A corridor shaded between its bounds at each step of its reference (the first, lowest and
    highest of consecutive steps beyond MAX_POINTS), the reference dashed through it; its numbers
    stated per step drawn (`data-steps`, `data-low`, `data-high`, `data-reference`)."""
    rows = corridor_buckets(e, MAX_POINTS)
    if len(rows) == 1:  # one step: a short bar around it
        s, lo, hi, v = rows[0]
        edge = [(x_axis.at(s) - 2, lo, hi, v), (x_axis.at(s) + 2, lo, hi, v)]
    else:
        edge = [(x_axis.at(s), lo, hi, v) for s, lo, hi, v in rows]
    outline = [(x, y_axis.at(lo)) for x, lo, _, _ in edge] + [(x, y_axis.at(hi)) for x, _, hi, _ in reversed(edge)]
    ref = " ".join(f"{coord(x)},{coord(y_axis.at(v))}" for x, _, _, v in edge)

    def listed(i: int) -> str:
        return " ".join(repr(r[i]) for r in rows)

    return (
        f'<g class="mm-mark mm-corridor" data-kind="corridor" data-steps="{listed(0)}" data-low="{listed(1)}" '
        f'data-high="{listed(2)}" data-reference="{listed(3)}" data-x-min="{coord(edge[0][0])}" '
        f'data-x-max="{coord(edge[-1][0])}">{title}<polygon points="{" ".join(f"{coord(a)},{coord(b)}" for a, b in outline)}" '
        f'fill="{BAND}" fill-opacity="0.2" stroke="{BAND}" stroke-width="0.8"/><polyline points="{ref}" fill="none" '
        f'stroke="{BAND}" stroke-width="1.5" stroke-dasharray="4 3"/></g>'
    )


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
            shape = f'<rect x="{coord(x - 3)}" y="{coord(y - 3)}" width="6" height="6" fill="{colour}"/>'
        else:  # a triangle pointing out of the plot, up or down
            tip = -6 if v > 0 else 6
            shape = f'<path d="M{coord(x - 4)} {coord(y)}L{coord(x + 4)} {coord(y)}L{coord(x)} {coord(y + tip)}z" fill="{colour}"/>'
        marks.append(
            f'<g class="mm-nonfinite" data-step="{s}" data-value="{v!r}" data-x="{coord(x)}" data-y="{coord(y)}">'
            f"<title>{esc(f'{name}: step {num(s)}: {_value_words(v, unit)}')}</title>{shape}</g>"
        )
    lines = []
    for seg in segments:
        if len(seg) == 1:
            s, v = seg[0]
            lines.append(f'<circle cx="{coord(x_axis.at(s))}" cy="{coord(y_axis.at(v))}" r="1.8" fill="{colour}"/>')
        elif seg:
            coords = " ".join(f"{coord(x_axis.at(s))},{coord(y_axis.at(v))}" for s, v in seg)
            lines.append(f'<polyline points="{coords}" {stroke}/>')
    if len(drawn) <= _DOTS_UP_TO:  # short runs: a dot per step shows where a step is missing
        lines += [
            f'<circle cx="{coord(x_axis.at(s))}" cy="{coord(y_axis.at(v))}" r="1.4" fill="{colour}"/>'
            for seg in segments
            if len(seg) > 1
            for s, v in seg
        ]
    return (
        f'<g class="mm-run" data-run="{esc(name)}" data-points="{len(pts)}" data-drawn="{len(drawn)}">'
        f"<title>{esc(name)}</title>{''.join(lines)}{''.join(marks)}</g>"
    ), odd


def _legend(entries: list[tuple[str, str, str]], left: float, y: float) -> tuple[float, str]:
    """Run names with their stroke, flowed in rows under the plot; returns the drawing's height."""
    out, x = [], left
    for name, colour, dash in entries:
        text = clip_to(name, WIDTH / 2, TICK_FONT)
        width = 26 + text_width(text, TICK_FONT) + 14
        if x > left and x + width > WIDTH - 8:
            x, y = left, y + _LEGEND_ROW
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<g class="mm-legend" data-run="{esc(name)}"><title>{esc(name)}</title>'
            f'<line x1="{coord(x)}" y1="{coord(y - 4)}" x2="{coord(x + 22)}" y2="{coord(y - 4)}" stroke="{colour}" '
            f'stroke-width="2"{dashes}/><text x="{coord(x + 26)}" y="{coord(y)}" font-size="{TICK_FONT}" '
            f'fill="currentColor">{esc(text)}</text></g>'
        )
        x += width
    return y + 6, "".join(out)
