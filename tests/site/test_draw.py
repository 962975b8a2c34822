"""Drawings of ranges and runs: geometry read from data attributes, words equal to the text, inert text."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from corridor_fixture import KEY, corridor_project, reward_run
from metrics_manual.exports.document import export_document
from metrics_manual.judge.judging import judge
from metrics_manual.model.domain import bounds
from metrics_manual.model.phrase import describe, num
from metrics_manual.model.schema import Expectation
from metrics_manual.site.axes import make_axis, nice_ticks
from metrics_manual.site.range_drawing import range_drawing
from metrics_manual.site.series_drawing import series_drawing
from metrics_manual.site.svg import MAX_POINTS
from metrics_manual.source.load import load_manual

SVG = "{http://www.w3.org/2000/svg}"
E = TypeAdapter(Expectation).validate_python
HOSTILE = 'A <script>alert("x")</script> & ]]> </svg> "q" \'s'


def exp(**fields: Any) -> Expectation:
    return E(fields)


ALL_KINDS = [
    ("Alpha", exp(kind="band", min=0.25, max=4.5, steps=48)),
    ("Alpha", exp(kind="band", min=1, max=3, window={"first": 2})),
    ("Beta", exp(kind="band", min=2)),
    ("Beta", exp(kind="band", max=0.5, condition="after warm-up")),
    ("Gamma", exp(kind="median", value=3.3, steps=10)),
    ("Gamma", exp(kind="exact", value=0, at={"step": 0})),
    ("Delta", exp(kind="presence")),
]


def parse(svg: str) -> ET.Element:
    assert svg.startswith("<svg") and "\n" not in svg and "\r" not in svg
    return ET.fromstring(svg)


def marks(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if "mm-mark" in g.get("class", "").split()]


def ticks(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "mm-tick"]


def title(el: ET.Element) -> str:
    found = el.find(f"{SVG}title")
    assert found is not None and found.text is not None
    return found.text


def x_of(root: ET.Element, value: float) -> float:
    """Where the axis places `value`, from two of its labelled ticks (the axis is linear)."""
    ts = ticks(root)
    (v0, x0), (v1, x1) = [(float(t.get("data-value", "")), float(t.get("data-x", ""))) for t in (ts[0], ts[-1])]
    return x0 + (value - v0) / (v1 - v0) * (x1 - x0)


# --- range_drawing ------------------------------------------------------------------


def test_the_title_states_every_range_in_describes_words_prefixed_by_its_profile() -> None:
    root = parse(range_drawing(ALL_KINDS, "tokens"))
    said = [f"{t}: {describe(e, 'tokens')}" for t, e in ALL_KINDS]
    assert root.get("role") == "img"
    assert title(root) == root.get("aria-label") == "; ".join(said)
    assert [title(m) for m in marks(root)] == said


def test_every_kind_is_drawn_as_what_it_is() -> None:
    root = parse(range_drawing(ALL_KINDS, None))
    got = [
        (m.get("data-kind"), sorted(c.tag.removeprefix(SVG) for c in m if c.tag != f"{SVG}title")) for m in marks(root)
    ]
    assert got == [
        ("band", ["rect"]),
        ("window", ["rect"]),
        ("band", ["line", "rect"]),  # open: bar and arrow
        ("band", ["line", "rect"]),
        ("median", ["path"]),  # a diamond
        ("exact", ["line"]),  # a tick
        ("presence", ["line", "line", "text"]),
    ]
    band, window, at_least, at_most = marks(root)[:4]
    fill = lambda g: g.find(f"{SVG}rect").get("fill")  # noqa: E731
    assert fill(band) != fill(window) and fill(window).startswith("url(#")  # type: ignore[union-attr]
    assert (at_least.get("data-open"), at_most.get("data-open"), band.get("data-open")) == ("max", "min", None)
    assert all(g.find(f"{SVG}line").get("marker-end") for g in (at_least, at_most))  # type: ignore[union-attr]
    texts = [t.text for t in root.iter(f"{SVG}text")]
    # Each profile's title once, on its first row; every row says its statistic.
    assert texts[:7] == [
        "Alpha \u00b7 per step",
        "\u21b3 per step, first 2 steps",
        "Beta \u00b7 per step",
        "\u21b3 per step",
        "Gamma \u00b7 median of 10 steps",
        "\u21b3 exact at step 0",
        "Delta \u00b7 logged in every step",
    ]
    presence = marks(root)[-1]
    assert presence.get("data-value") is None and presence.get("data-x") is None


def test_marks_sit_on_the_axis_where_their_numbers_are() -> None:
    root = parse(range_drawing(ALL_KINDS, None))
    start, end = float(root.get("data-x-start", "")), float(root.get("data-x-end", ""))
    lo, hi = float(root.get("data-axis-min", "")), float(root.get("data-axis-max", ""))
    for m in marks(root):
        kind = m.get("data-kind")
        if kind in ("band", "window"):
            x0, x1 = float(m.get("data-x-min", "")), float(m.get("data-x-max", ""))
            assert start <= x0 < x1 <= end
            for bound, x in (("data-min", x0), ("data-max", x1)):
                if m.get(bound) is not None:
                    assert lo < float(m.get(bound, "")) < hi
                    assert x == pytest.approx(x_of(root, float(m.get(bound, ""))), abs=0.02)
                else:  # open: runs to the axis's edge
                    assert x == (end if bound == "data-max" else start)
        elif kind in ("median", "exact"):
            assert m.get("data-x") is not None
            assert float(m.get("data-x", "")) == pytest.approx(x_of(root, float(m.get("data-value", ""))), abs=0.02)
    values = [float(t.get("data-value", "")) for t in ticks(root)]
    xs = [float(t.get("data-x", "")) for t in ticks(root)]
    assert len(values) >= 2 and values == sorted(values) and xs == sorted(xs) and len(set(xs)) == len(xs)
    assert lo <= values[0] and values[-1] <= hi
    assert [t.find(f"{SVG}text").text for t in ticks(root)] == [num(v) for v in values]  # type: ignore[union-attr]


def test_data_attributes_state_the_numbers_as_given() -> None:
    root = parse(
        range_drawing([("P", exp(kind="band", min=0.1, max=7)), ("P", exp(kind="median", value=1e-7, steps=3))], None)
    )
    band, median = marks(root)
    assert (band.get("data-min"), band.get("data-max"), median.get("data-value")) == ("0.1", "7", "1e-07")


AXIS_CASES = {
    "single value": [3.3],
    "zero": [0],
    "negative": [-7.5, -0.25],
    "across zero": [-2, 5],
    "tiny to huge": [1e-6, 1e9],
    "tiny": [1e-6, 2e-6],
    "huge": [1e9],
    "min equals max": [0.7, 0.7],
    "near the float limit": [-1e308, 1e308],
    "near the largest float": [1.7e308],
    "finer than float resolution": [1e16, 1e16 + 2],
}


@pytest.mark.parametrize("values", AXIS_CASES.values(), ids=AXIS_CASES.keys())
def test_the_axis_covers_every_number_with_ordered_labelled_ticks(values: list[float]) -> None:
    rows = [("P", exp(kind="band", min=min(values), max=max(values)))]
    rows += [("P", exp(kind="exact", value=v, at="every_step")) for v in values]
    root = parse(range_drawing(rows, "J"))  # a unit that bounds nothing
    lo, hi = float(root.get("data-axis-min", "")), float(root.get("data-axis-max", ""))
    assert all(lo < v < hi for v in values)
    tick_values = [float(t.get("data-value", "")) for t in ticks(root)]
    assert tick_values and tick_values == sorted(set(tick_values)) and lo <= tick_values[0] and tick_values[-1] <= hi
    band = marks(root)[0]
    assert float(band.get("data-x-min", "")) <= float(band.get("data-x-max", ""))
    start, end = float(root.get("data-x-start", "")), float(root.get("data-x-end", ""))
    assert all(start <= float(m.get("data-x", "")) <= end for m in marks(root)[1:])


def test_ticks_step_by_one_two_or_five_times_a_power_of_ten() -> None:
    for lo, hi in [(0, 1), (-3, 17), (0.00063, 0.00076), (1e-6, 1e9), (140, 160)]:
        ts = nice_ticks(lo, hi)
        steps = {round(b - a, 12) for a, b in zip(ts, ts[1:])}
        assert len(steps) == 1 or max(steps) - min(steps) <= 1e-9 * max(abs(lo), abs(hi))
        step = ts[1] - ts[0]
        mant = step / 10 ** math.floor(math.log10(step))
        assert min(abs(mant - m) for m in (1, 2, 5)) < 1e-9, (lo, hi, ts)
        assert 3 <= len(ts) <= 11 and lo <= ts[0] and ts[-1] <= hi


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_subnormal=False)


@settings(max_examples=100, deadline=None)
@given(st.lists(finite, min_size=1, max_size=6))
def test_any_numbers_get_an_axis_that_holds_them(values: list[float]) -> None:
    axis = make_axis(values, 10, 470)
    assert axis.lo < min(values) <= max(values) < axis.hi
    assert list(axis.ticks) == sorted(set(axis.ticks)) and axis.ticks
    assert all(axis.lo <= t <= axis.hi for t in axis.ticks)
    assert all(10 <= axis.at(v) <= 470 for v in values)
    assert len({num(t) for t in axis.ticks}) == len(axis.ticks)


# (domain, numbers drawn, the values the axis must reach, the side it must not pass)
DOMAIN_CASES = {
    "a fraction spans 0 to 1": ("fraction", [0.02, 0.43], (0.0, 1.0)),
    "a fraction at 0 stays in 0 to 1": ("fraction", [0.0], (0.0, 1.0)),
    "a time starts at 0": ("non-negative", [12.5, 14.0], (0.0, None)),
    "a count starts at 0": ("non-negative", [396, 787], (0.0, None)),
}


@pytest.mark.parametrize("case", DOMAIN_CASES.values(), ids=DOMAIN_CASES.keys())
def test_the_axis_reaches_the_domain_and_never_passes_it(case) -> None:
    domain, values, (lo_bound, hi_bound) = case
    rows = [
        ("P", exp(kind="band", min=min(values), max=max(values))),
        ("P", exp(kind="median", value=values[0], steps=4)),
    ]
    root = parse(range_drawing(rows, "u", bounds(domain)))
    lo, hi = float(root.get("data-axis-min", "")), float(root.get("data-axis-max", ""))
    assert lo == lo_bound
    assert hi == hi_bound if hi_bound is not None else hi > max(values)
    tick_values = [float(t.get("data-value", "")) for t in ticks(root)]
    assert tick_values[0] == lo_bound  # the bound is labelled
    assert root.get("data-domain-min") == repr(lo_bound)


def test_an_unbounded_axis_gives_the_band_room() -> None:
    root = parse(range_drawing([("P", exp(kind="band", min=10, max=20))], None))
    lo, hi = float(root.get("data-axis-min", "")), float(root.get("data-axis-max", ""))
    band = marks(root)[0]
    share = (float(band.get("data-x-max", "")) - float(band.get("data-x-min", ""))) / (
        float(root.get("data-x-end", "")) - float(root.get("data-x-start", ""))
    )
    assert lo < 10 and hi > 20 and share <= 0.7, share


def test_the_legend_names_each_kind_of_mark_drawn_and_no_other() -> None:
    def legend(rows) -> list[str]:
        return [
            g.get("data-kind", "")
            for g in parse(range_drawing(rows, None)).iter(f"{SVG}g")
            if "mm-legend" in g.get("class", "")
        ]

    assert legend(ALL_KINDS) == ["band", "window", "open", "median", "exact", "presence"]
    assert legend([("P", exp(kind="median", value=3, steps=4))]) == ["median"]
    assert legend([("P", exp(kind="band", min=1, max=2)), ("Q", exp(kind="exact", value=1, at="every_run"))]) == [
        "band",
        "exact",
    ]


def test_text_from_the_source_stays_text() -> None:
    rows = [(HOSTILE, exp(kind="band", min=1, max=2, condition=HOSTILE)), (HOSTILE, exp(kind="presence"))]
    svg = range_drawing(rows, HOSTILE)
    assert "<script" not in svg and "</svg>" not in svg[:-6] and "]]>" not in svg
    root = parse(svg)
    assert root.get("aria-label") == title(root) == "; ".join(f"{HOSTILE}: {describe(e, HOSTILE)}" for _, e in rows)
    assert title(marks(root)[0]) == f"{HOSTILE}: {describe(rows[0][1], HOSTILE)}"
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert any(t.startswith(HOSTILE[:30]) for t in texts)  # the unit under the axis (clipped to fit)
    assert any(t.startswith(HOSTILE[:10]) for t in texts)  # a row label (shortened to fit)
    assert len(list(root.iter())) == len(list(parse(range_drawing([("x", rows[0][1]), ("x", rows[1][1])], "J")).iter()))


def test_same_input_same_bytes_and_each_drawing_its_own_ids() -> None:
    assert range_drawing(ALL_KINDS, "s") == range_drawing(list(ALL_KINDS), "s")
    ids = lambda svg: {el.get("id") for el in parse(svg).iter() if el.get("id")}  # noqa: E731
    assert ids(range_drawing(ALL_KINDS, "s")).isdisjoint(ids(range_drawing(ALL_KINDS[:2], "s")))


def test_it_scales_to_its_column() -> None:
    root = parse(range_drawing(ALL_KINDS, "s"))
    assert root.get("width") == "100%" and root.get("height") is None
    x, y, w, h = map(float, root.get("viewBox", "").split())
    assert (x, y) == (0, 0) and w > 0 and h > 0
    for el in root.iter():
        for a in ("x", "x1", "x2"):
            if el.get(a) is not None:
                assert 0 <= float(el.get(a, "")) <= w, (el.tag, el.attrib)


def test_nothing_to_draw_gives_nothing() -> None:
    assert range_drawing([], "s") == ""
    assert range_drawing([("P", exp(kind="presence"))], None) == ""


def test_a_drawing_survives_markdown_unchanged() -> None:
    markdown = pytest.importorskip("markdown")
    svg = range_drawing(
        [("snake_case *x* `y` [l](u) <b>", exp(kind="band", min=1, max=2, condition="a_b **c** \\*"))], "s"
    )
    for page in (f"Text\n\n{svg}\n\nMore", f"- item {svg}", f"| a |\n|---|\n| {svg} |"):
        assert svg in markdown.markdown(page, extensions=["attr_list", "tables", "admonition", "toc"])


# --- series_drawing -----------------------------------------------------------------

NAN, INF = float("nan"), float("inf")
RUNS = {
    "seed-1": {s: 1 + 0.1 * s for s in range(12)},
    "seed-2": {s: 2 - 0.05 * s for s in range(12) if s != 4},
}
EXPECTED = [
    exp(kind="band", min=0.5, max=2.5, steps=12),
    exp(kind="band", min=1, max=2, window={"first": 3}),
    exp(kind="median", value=1.5, steps=12),
    exp(kind="exact", value=0, at={"step": 0}),
    exp(kind="exact", value=0.25, at="every_step"),
    exp(kind="presence"),
]


def axis_map(root: ET.Element, axis: str) -> Any:
    """value -> coordinate on the drawing's x or y axis, from its first and last labelled ticks."""
    ts = [g for g in root.iter(f"{SVG}g") if g.get("class") == f"mm-tick mm-tick-{axis}"]
    (v0, c0), (v1, c1) = [(float(t.get("data-value", "")), float(t.get(f"data-{axis}", ""))) for t in (ts[0], ts[-1])]
    return lambda v: c0 + (v - v0) / (v1 - v0) * (c1 - c0)


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in g.get("class", "").split()]


def points(run: ET.Element) -> list[list[tuple[float, float]]]:
    return [
        [tuple(map(float, p.split(","))) for p in line.get("points", "").split()]  # type: ignore[misc]
        for line in run.iter(f"{SVG}polyline")
    ]


def test_each_run_is_a_curve_placed_by_its_steps_and_values() -> None:
    root = parse(series_drawing(RUNS, EXPECTED, "s", title="grad norm of two runs"))
    assert root.get("role") == "img" and root.get("aria-label") == title(root) == "grad norm of two runs"
    x, y = axis_map(root, "x"), axis_map(root, "y")
    runs = groups(root, "mm-run")
    assert [r.get("data-run") for r in runs] == list(RUNS) == [title(r) for r in runs]
    for run, values in zip(runs, RUNS.values()):
        (line,) = points(run)
        assert line == [pytest.approx((x(s), y(v)), abs=0.02) for s, v in sorted(values.items())]
    styles = {(p.get("stroke"), p.get("stroke-dasharray")) for p in root.iter(f"{SVG}polyline")}
    assert len(styles) == len(RUNS)
    legend = [g for g in groups(root, "mm-legend") if g.get("data-run") is not None]
    assert [g.get("data-run") for g in legend] == list(RUNS)
    assert [(g.find(f"{SVG}line").get("stroke"), g.find(f"{SVG}line").get("stroke-dasharray")) for g in legend] == [  # type: ignore[union-attr]
        (p.get("stroke"), p.get("stroke-dasharray")) for p in root.iter(f"{SVG}polyline")
    ]
    x_ticks = [float(t.get("data-value", "")) for t in groups(root, "mm-tick-x")]
    assert x_ticks == sorted(x_ticks) and all(t == int(t) for t in x_ticks)
    assert [t.find(f"{SVG}text").text for t in groups(root, "mm-tick-y")] == [  # type: ignore[union-attr]
        num(float(t.get("data-value", ""))) for t in groups(root, "mm-tick-y")
    ]


def test_the_expected_range_is_drawn_at_its_numbers_with_describes_words() -> None:
    root = parse(series_drawing(RUNS, EXPECTED, "s", title="t"))
    x, y = axis_map(root, "x"), axis_map(root, "y")
    drawn = groups(root, "mm-mark")
    assert [title(g) for g in drawn] == [describe(e, "s") for e in EXPECTED[:-1]]  # presence: nothing to draw
    band, window, median, at_step, every_step = drawn
    for g, e in ((band, EXPECTED[0]), (window, EXPECTED[1])):
        assert float(g.get("data-y-min", "")) == pytest.approx(y(e.min), abs=0.02)  # type: ignore[union-attr]
        assert float(g.get("data-y-max", "")) == pytest.approx(y(e.max), abs=0.02)  # type: ignore[union-attr]
        assert float(g.get("data-y-min", "")) > float(g.get("data-y-max", ""))  # larger values higher up
    assert float(window.get("data-x-max", "")) == pytest.approx(x(2), abs=0.02)  # the third step drawn
    assert float(window.get("data-x-max", "")) < float(band.get("data-x-max", ""))
    assert window.find(f"{SVG}rect").get("fill", "").startswith("url(#")  # type: ignore[union-attr]
    assert float(median.get("data-y", "")) == pytest.approx(y(1.5), abs=0.02)
    assert median.find(f"{SVG}line").get("stroke-dasharray")  # type: ignore[union-attr]
    assert float(at_step.get("data-x", "")) == pytest.approx(x(0), abs=0.02) and at_step.get("data-step") == "0"
    assert float(every_step.get("data-y", "")) == pytest.approx(y(0.25), abs=0.02)


def test_failing_steps_are_ringed_with_their_step_and_value() -> None:
    runs = {"a": {0: 1.0, 1: 9.0, 2: NAN}, "b": {0: 1.0}}
    root = parse(
        series_drawing(runs, [exp(kind="band", min=0, max=2)], "s", title="t", failing={"a": [1, 2], "b": [5]})
    )
    x, y = axis_map(root, "x"), axis_map(root, "y")
    top, bottom = float(root.get("data-y-end", "")), float(root.get("data-y-start", ""))
    got = {(g.get("data-run"), g.get("data-step")): g for g in groups(root, "mm-failing")}
    assert set(got) == {("a", "1"), ("a", "2"), ("b", "5")}
    assert title(got["a", "1"]) == "a: step 1: 9 s, failing"
    assert (float(got["a", "1"].get("data-x", "")), float(got["a", "1"].get("data-y", ""))) == pytest.approx(
        (x(1), y(9)), abs=0.02
    )
    # NaN and a step not logged: on the step axis
    assert title(got["a", "2"]) == "a: step 2: NaN, failing" and float(got["a", "2"].get("data-y", "")) == bottom
    assert top < bottom
    assert title(got["b", "5"]) == "b: step 5: not logged, failing" and float(got["b", "5"].get("data-y", "")) == bottom
    assert float(root.get("data-axis-x-max", "")) > 5  # a failing step widens the axis


def test_non_finite_values_break_the_curve_and_are_marked_at_the_edge() -> None:
    root = parse(
        series_drawing(
            {"r": {0: 1.0, 1: 2.0, 2: NAN, 3: 1.5, 4: 1.0, 5: INF, 6: -INF, 7: 1.0, 8: 2.0}}, [], None, title="t"
        )
    )
    top, bottom = float(root.get("data-y-end", "")), float(root.get("data-y-start", ""))
    marked = [
        (g.get("data-step"), g.get("data-value"), float(g.get("data-y", ""))) for g in groups(root, "mm-nonfinite")
    ]
    assert marked == [("2", "nan", bottom), ("5", "inf", top), ("6", "-inf", bottom)]  # NaN on the step axis
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "mm-label"]
    assert labels == ["NaN, step 2", "infinity, step 5", "minus infinity, step 6"]
    assert [title(g) for g in groups(root, "mm-nonfinite")] == [
        "r: step 2: NaN",
        "r: step 5: infinity",
        "r: step 6: minus infinity",
    ]
    assert [len(line) for line in points(groups(root, "mm-run")[0])] == [2, 2, 2]
    shapes = [sorted(c.tag for c in g if c.tag != f"{SVG}title") for g in groups(root, "mm-nonfinite")]
    assert shapes[0] != shapes[1]  # NaN does not look like infinity


def test_a_band_is_shaded_only_over_the_steps_it_covers_and_its_limits_are_ticks() -> None:
    run = {"r": {s: 0.6 + 0.01 * s for s in range(200)}}
    band, median = exp(kind="band", min=0.53, max=0.87, steps=48), exp(kind="median", value=0.7, steps=20)
    root = parse(series_drawing(run, [band, median], None, title="t"))
    x = axis_map(root, "x")
    drawn_band, drawn_median = groups(root, "mm-mark")
    assert float(drawn_band.get("data-x-min", "")) == pytest.approx(x(0), abs=0.02)
    assert float(drawn_band.get("data-x-max", "")) == pytest.approx(x(47), abs=0.02)  # the 48th step, not the 200th
    assert float(drawn_median.get("data-x-max", "")) == pytest.approx(x(19), abs=0.02)
    y_ticks = [float(t.get("data-value", "")) for t in groups(root, "mm-tick-y")]
    assert 0.53 in y_ticks and 0.87 in y_ticks  # the band's limits read off the axis
    texts = [t.find(f"{SVG}text").text for t in groups(root, "mm-tick-y")]  # type: ignore[union-attr]
    assert len(set(texts)) == len(texts)


def test_failing_steps_get_a_rug_tick_each_and_the_worst_are_labelled() -> None:
    values = {s: 1.0 for s in range(2000)}
    bad = list(range(1000, 1030))
    for i, s in enumerate(bad):
        values[s] = 5.0 + i / 1000  # 30 neighbours out of the band: the last is the worst
    values[1500] = 0.123456789
    root = parse(
        series_drawing({"r": values}, [exp(kind="band", min=0.5, max=2)], None, title="t", failing={"r": bad + [1500]})
    )
    failing = groups(root, "mm-failing")
    assert len(failing) == 31
    rugs = [g.find(f"{SVG}line") for g in failing]
    assert all(r is not None and r.get("class") == "mm-rug" for r in rugs)
    bottom = float(root.get("data-y-start", ""))
    assert all(float(r.get("y1", "")) > bottom for r in rugs if r is not None)  # under the plot
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "mm-label"]
    assert labels == ["step 1,029: 5.029", "step 1,028: 5.028", "step 1,027: 5.027"]
    kinds_drawn = [g.get("data-kind") for g in groups(root, "mm-legend") if g.get("data-kind")]
    assert kinds_drawn == ["band", "failing"]


def test_every_point_lies_inside_the_plot() -> None:
    for runs in (RUNS, {"one": {7: 3.0}}, {"neg": {-3: -1e9, 10**6: 1e-6}}, {"flat": {s: 0.7 for s in range(5)}}):
        root = parse(series_drawing(runs, EXPECTED[:3], None, title="t"))
        left, right = float(root.get("data-x-start", "")), float(root.get("data-x-end", ""))
        top, bottom = float(root.get("data-y-end", "")), float(root.get("data-y-start", ""))
        for run in groups(root, "mm-run"):
            coords = [p for line in points(run) for p in line]
            coords += [(float(c.get("cx", "")), float(c.get("cy", ""))) for c in run.iter(f"{SVG}circle")]
            assert coords and all(left <= px <= right and top <= py <= bottom for px, py in coords), runs


def test_long_runs_are_thinned_keeping_extremes_and_failing_steps() -> None:
    n = 10 * MAX_POINTS
    values = {s: math.sin(s / 50) for s in range(n)}
    values[4321], values[777] = 50.0, -50.0
    root = parse(series_drawing({"long": values}, [], None, title="t", failing={"long": [4321, 9999]}))
    (run,) = groups(root, "mm-run")
    assert run.get("data-points") == str(n) and int(run.get("data-drawn", "")) <= MAX_POINTS
    y = axis_map(root, "y")
    ys = [py for line in points(run) for _, py in line]
    assert min(ys) == pytest.approx(y(50), abs=0.02) and max(ys) == pytest.approx(y(-50), abs=0.02)
    assert {g.get("data-step") for g in groups(root, "mm-failing")} == {"4321", "9999"}
    short = parse(series_drawing({"short": {s: float(s) for s in range(MAX_POINTS)}}, [], None, title="t"))
    assert groups(short, "mm-run")[0].get("data-drawn") == str(MAX_POINTS)


def test_series_text_stays_text_and_the_same_input_gives_the_same_bytes() -> None:
    svg = series_drawing(
        {HOSTILE: {0: 1.0, 1: 2.0}},
        [exp(kind="band", min=0, max=3, condition=HOSTILE)],
        HOSTILE,
        title=HOSTILE,
        failing={HOSTILE: [1]},
    )
    assert "<script" not in svg and "</svg>" not in svg[:-6] and "]]>" not in svg and "\n" not in svg
    root = parse(svg)
    assert title(root) == root.get("aria-label") == HOSTILE
    assert groups(root, "mm-run")[0].get("data-run") == HOSTILE == title(groups(root, "mm-run")[0])
    assert title(groups(root, "mm-mark")[0]) == describe(exp(kind="band", min=0, max=3, condition=HOSTILE), HOSTILE)
    assert title(groups(root, "mm-failing")[0]).startswith(f"{HOSTILE}: step 1: 2 ")
    assert svg == series_drawing(
        {HOSTILE: {1: 2.0, 0: 1.0}},
        [exp(kind="band", min=0, max=3, condition=HOSTILE)],
        HOSTILE,
        title=HOSTILE,
        failing={HOSTILE: [1]},
    )
    assert root.get("width") == "100%" and root.get("height") is None
    line_breaks = series_drawing(
        {"a\nb\udc80\x00": {0: 1.0}}, [], None, title="t\r\nu"
    )  # e.g. run names typed on a command line
    assert "\n" not in line_breaks and title(parse(line_breaks)) == "t  u"
    assert groups(parse(line_breaks), "mm-run")[0].get("data-run") == "a b  "


def test_no_steps_no_drawing() -> None:
    assert series_drawing({}, EXPECTED, "s", title="t") == ""
    assert series_drawing({"a": {}}, EXPECTED, "s", title="t") == ""


# --- a corridor -----------------------------------------------------------------------

CORRIDOR = exp(
    kind="corridor",
    reference={"source": "ref", "points": [[s, 1 + 0.1 * s] for s in range(12)]},
    rel_up=0.1,
    abs_floor_up=0.05,
    abs_floor_down=0.2,
)


def test_a_corridor_on_the_value_axis_sweeps_down_its_row_from_its_first_step() -> None:
    rows = [
        ("Alpha", exp(kind="band", min=0.5, max=3)),
        ("Alpha", CORRIDOR),
        ("Beta", exp(kind="median", value=2, steps=4)),
    ]
    root = parse(range_drawing(rows, None))
    band, corridor, median = marks(root)
    assert corridor.get("data-kind") == "corridor" and title(corridor) == f"Alpha: {describe(CORRIDOR, None)}"
    lo, hi = CORRIDOR.envelope  # type: ignore[union-attr]
    assert (float(corridor.get("data-min", "")), float(corridor.get("data-max", ""))) == (lo, hi)
    for bound, x in ((lo, "data-x-min"), (hi, "data-x-max")):
        assert float(corridor.get(x, "")) == pytest.approx(x_of(root, bound), abs=0.02)
    # The outline: the lowest bound of each step down its left side, the highest up its right, on the axis.
    outline = [tuple(map(float, p.split(","))) for p in corridor.find(f"{SVG}polygon").get("points", "").split()]  # type: ignore[union-attr]
    steps = [s for s, _ in CORRIDOR.reference.points]  # type: ignore[union-attr]
    left, right = outline[: len(steps)], outline[len(steps) :][::-1]
    for s, (xl, yl), (xr, yr) in zip(steps, left, right):
        low, high = CORRIDOR.bounds(1 + 0.1 * s)  # type: ignore[union-attr]
        assert (xl, xr) == (pytest.approx(x_of(root, low), abs=0.02), pytest.approx(x_of(root, high), abs=0.02))
        assert yl == yr
    assert [y for _, y in left] == sorted(y for _, y in left) and left[0][1] < left[-1][1]  # first step at the top
    # The row is taller than a bar's, and the next row starts below it.
    [beta] = [t for t in root.iter(f"{SVG}text") if (t.text or "").startswith("Beta")]
    assert (
        float(beta.get("y", "")) > left[-1][1]
        and median.get("data-kind") == "median"
        and band.get("data-kind") == "band"
    )
    legend = [g.get("data-kind") for g in root.iter(f"{SVG}g") if "mm-legend" in g.get("class", "")]
    assert legend == ["band", "median", "corridor"]
    assert [t.text for t in root.iter(f"{SVG}text")][1] == "\u21b3 corridor, steps 0 to 11 downward"


def test_a_corridor_over_runs_is_shaded_between_its_bounds_at_each_step_of_its_reference() -> None:
    root = parse(series_drawing({"a": {s: 1 + 0.1 * s for s in range(16)}}, [CORRIDOR], None, title="t"))
    x, y = axis_map(root, "x"), axis_map(root, "y")
    [g] = groups(root, "mm-corridor")
    steps = [int(s) for s in g.get("data-steps", "").split()]
    low, high = ([float(v) for v in g.get(a, "").split()] for a in ("data-low", "data-high"))
    assert steps == list(range(12))  # the reference's steps, not the run's 16
    assert list(zip(low, high)) == [CORRIDOR.bounds(1 + 0.1 * s) for s in steps]  # type: ignore[union-attr]
    outline = [tuple(map(float, p.split(","))) for p in g.find(f"{SVG}polygon").get("points", "").split()]  # type: ignore[union-attr]
    expected = [(x(s), y(lo)) for s, lo in zip(steps, low)] + [
        (x(s), y(hi)) for s, hi in reversed(list(zip(steps, high)))
    ]
    assert outline == [pytest.approx(p, abs=0.02) for p in expected]
    assert series_drawing({}, [CORRIDOR], None, title="alone")  # a corridor with no run is drawn still


def test_drawing_and_judging_agree_on_which_steps_are_outside(tmp_path) -> None:
    manual = load_manual(corridor_project(tmp_path / "p"))
    profile = manual.profile("p")
    run = reward_run(7, lag=12)
    [r] = [r for r in judge(export_document(manual, profile, None), run).results if r.metric == KEY]
    failing = [p.step for p in r.failing_steps]
    assert r.verdict == "fail" and failing and r.failing_count == len(failing)
    values = run.series[KEY]
    root = parse(
        series_drawing({"late": values}, profile.expectations[KEY], None, title="t", failing={"late": failing})
    )
    x, y = axis_map(root, "x"), axis_map(root, "y")
    [g] = groups(root, "mm-corridor")
    steps = [int(s) for s in g.get("data-steps", "").split()]
    low, high = ([float(v) for v in g.get(a, "").split()] for a in ("data-low", "data-high"))
    drawn_outside = [s for s, lo, hi in zip(steps, low, high) if not lo <= values[s] <= hi]
    assert drawn_outside == failing
    marked = sorted(int(m.get("data-step", "")) for m in groups(root, "mm-failing"))
    assert marked == failing
    for m in groups(root, "mm-failing"):  # each failing dot sits outside the shaded corridor at its step
        s = int(m.get("data-step", ""))
        ys = sorted((y(low[steps.index(s)]), y(high[steps.index(s)])))
        assert not ys[0] <= float(m.get("data-y", "")) <= ys[1] and float(m.get("data-x", "")) == pytest.approx(
            x(s), abs=0.02
        )
