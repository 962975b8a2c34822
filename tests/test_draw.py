"""Drawings of ranges and runs: geometry read from data attributes, words equal to the text, inert text."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from metrics_manual.draw import make_axis, nice_ticks, range_drawing
from metrics_manual.model import Expectation
from metrics_manual.phrase import describe, num

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
    got = [(m.get("data-kind"), sorted(c.tag.removeprefix(SVG) for c in m if c.tag != f"{SVG}title")) for m in marks(root)]
    assert got == [
        ("band", ["rect"]),
        ("window", ["rect"]),
        ("band", ["line", "rect"]),      # open: bar and arrow
        ("band", ["line", "rect"]),
        ("median", ["path"]),            # a diamond
        ("exact", ["line"]),             # a tick
        ("presence", ["line", "line", "text"]),
    ]
    band, window, at_least, at_most = marks(root)[:4]
    fill = lambda g: g.find(f"{SVG}rect").get("fill")  # noqa: E731
    assert fill(band) != fill(window) and fill(window).startswith("url(#")  # type: ignore[union-attr]
    assert (at_least.get("data-open"), at_most.get("data-open"), band.get("data-open")) == ("max", "min", None)
    assert all(g.find(f"{SVG}line").get("marker-end") for g in (at_least, at_most))  # type: ignore[union-attr]
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Alpha \u00b7 first 2 steps" in texts and "Gamma \u00b7 at step 0" in texts
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
    root = parse(range_drawing([("P", exp(kind="band", min=0.1, max=7)), ("P", exp(kind="median", value=1e-7, steps=3))], None))
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
    "finer than float resolution": [1e16, 1e16 + 2],
}


@pytest.mark.parametrize("values", AXIS_CASES.values(), ids=AXIS_CASES.keys())
def test_the_axis_covers_every_number_with_ordered_labelled_ticks(values: list[float]) -> None:
    rows = [("P", exp(kind="band", min=min(values), max=max(values)))]
    rows += [("P", exp(kind="exact", value=v, at="every_step")) for v in values]
    root = parse(range_drawing(rows, "s"))
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


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=6))
def test_any_numbers_get_an_axis_that_holds_them(values: list[float]) -> None:
    axis = make_axis(values, 10, 470)
    assert axis.lo < min(values) <= max(values) < axis.hi
    assert list(axis.ticks) == sorted(set(axis.ticks)) and axis.ticks
    assert all(axis.lo <= t <= axis.hi for t in axis.ticks)
    assert all(10 <= axis.at(v) <= 470 for v in values)
    assert len({num(t) for t in axis.ticks}) == len(axis.ticks)


def test_text_from_the_source_stays_text() -> None:
    rows = [(HOSTILE, exp(kind="band", min=1, max=2, condition=HOSTILE)), (HOSTILE, exp(kind="presence"))]
    svg = range_drawing(rows, HOSTILE)
    assert "<script" not in svg and "</svg>" not in svg[:-6] and "]]>" not in svg
    root = parse(svg)
    assert root.get("aria-label") == title(root) == "; ".join(f"{HOSTILE}: {describe(e, HOSTILE)}" for _, e in rows)
    assert title(marks(root)[0]) == f"{HOSTILE}: {describe(rows[0][1], HOSTILE)}"
    texts = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert HOSTILE in texts  # the unit under the axis
    assert any(t.startswith(HOSTILE[:10]) for t in texts)  # a row label (shortened to fit)
    assert len(list(root.iter())) == len(list(parse(range_drawing([("x", rows[0][1]), ("x", rows[1][1])], "s")).iter()))


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
    svg = range_drawing([("snake_case *x* `y` [l](u) <b>", exp(kind="band", min=1, max=2, condition="a_b **c** \\*"))], "s")
    for page in (f"Text\n\n{svg}\n\nMore", f"- item {svg}", f"| a |\n|---|\n| {svg} |"):
        assert svg in markdown.markdown(page, extensions=["attr_list", "tables", "admonition", "toc"])
