"""What every drawing of the site shares: SVG text and coordinates, colours, and the legend of mark kinds.

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

import hashlib
import re
from typing import assert_never

from metrics_manual.model.schema import Band, Corridor, Exact, Expectation, Median, Presence

# Drawing units of the viewBox; the SVG scales to its column (width 100%) up to MAX_WIDTH px.
# At 390 px a column is about 358 px wide: 360 units keep 12-unit text at 11 px or more;
# on a desktop the drawing stops at 480 px, where its text is the size of the page's.
WIDTH = 360
MAX_WIDTH = 480
FONT = 13
TICK_FONT = 12
CHAR = 0.6  # average glyph width as a share of the font size, to keep labels apart and inside

# Thinning: a run with more steps than this is drawn from buckets of consecutive steps, each
# keeping its first, lowest, highest and last value (spikes stay); failing steps are marked apart.
MAX_POINTS = 2000

# Mid-tones: each at least 3:1 against both the light page (white) and the dark one (Material's
# slate, about #1e2129), so one colour serves both schemes (tests compute it in the browser).
BAND, WINDOW, MEDIAN, EXACT = "#4f86c6", "#9466d0", "#b86e1f", "#d64541"
RUN_COLOURS = ("#2a7ab9", "#b86e1f", "#2f9e6e", "#b8457a", "#7a6cc4", "#8c7a2a")
RUN_DASHES = ("", "6 3", "2 2", "8 3 2 3")
_SYNTAX = {c: f"&#{ord(c)};" for c in "&<>\"'|*_`[]\\{}~^#!$:="}
_SYNTAX_RE = re.compile("[" + re.escape("".join(_SYNTAX)) + "]")
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029\r\n\t]")
LEGEND_LINE = 18


# --- text and numbers ----------------------------------------------------------------


def esc(text: object) -> str:
    """Any text as inert SVG text on one line: XML-invalid characters blanked, and characters that
    XML, HTML or Markdown read as syntax written as character references (a drawing may land in
    Markdown outside a raw HTML block, where `*x*` would otherwise become <em>)."""
    return _SYNTAX_RE.sub(lambda m: _SYNTAX[m.group()], _XML_INVALID.sub(" ", str(text)))


def coord(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros (deterministic, short)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def clip_to(text: str, width: float, font: float) -> str:
    """Text shortened with an ellipsis to fit `width` drawing units (its <title> keeps it whole)."""
    most = max(4, int(width / (font * CHAR)))
    return text if len(text) <= most else text[: most - 1].rstrip() + "\u2026"


def text_width(text: str, font: float) -> float:
    return len(text) * font * CHAR


def drawing_id(*parts: object) -> str:
    # Ids of <defs> must differ between drawings of one page and stay the same between builds.
    return "mm" + hashlib.sha1(repr(parts).encode()).hexdigest()[:10]


def corridor_buckets(e: Corridor, most: int) -> list[tuple[int, float, float, float]]:
    """(step, lowest, highest, reference) of a corridor's steps, at most about `most` of them: beyond
    that, each bucket of consecutive steps keeps its first step and reference, and the widest bounds
    of its steps (a drawing never shows the corridor narrower than it is)."""
    rows = [(s, *e.bounds(v), v) for s, v in e.reference.points]
    if len(rows) <= most:
        return rows
    size = -(-len(rows) // most)
    out = []
    for b in range(0, len(rows), size):
        bucket = rows[b : b + size]
        out.append((bucket[0][0], min(r[1] for r in bucket), max(r[2] for r in bucket), bucket[0][3]))
    last = rows[-1]
    return out if out[-1][0] == last[0] else [*out, last]


# --- the legend of mark kinds ------------------------------------------------------


def legend_key(e: Expectation) -> list[str]:
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
        case Corridor():
            return ["corridor"]
        case _:
            assert_never(e)


# One line per mark kind, in this order: (swatch, words). Swatches are drawn at (x, y) = left, middle.
_LEGEND_ORDER = (
    "band",
    "window",
    "open",
    "median",
    "exact",
    "presence",
    "corridor",
    "failing",
    "missing",
    "nan",
    "inf",
)
_LEGEND_WORDS = {
    "band": "range per step",
    "window": "range in the first steps",
    "open": "no limit on that side",
    "median": "median",
    "exact": "exact value",
    "presence": "logged, no number",
    "corridor": "corridor around a reference",
    "failing": "failing step",
    "missing": "not logged",
    "nan": "NaN",
    "inf": "infinite",
}


def _swatch(kind: str, x: float, y: float, uid: str) -> str:
    match kind:
        case "band":
            return (
                f'<rect x="{coord(x)}" y="{coord(y - 5)}" width="18" height="10" rx="2" fill="{BAND}" '
                f'fill-opacity="0.6" stroke="{BAND}"/>'
            )
        case "window":
            return f'<rect x="{coord(x)}" y="{coord(y - 5)}" width="18" height="10" rx="2" fill="url(#{uid}-w)" stroke="{WINDOW}"/>'
        case "open":
            return (
                f'<line x1="{coord(x)}" y1="{coord(y)}" x2="{coord(x + 16)}" y2="{coord(y)}" stroke="{BAND}" stroke-width="2" '
                f'marker-end="url(#{uid}-a)"/>'
            )
        case "median":
            return f'<path d="M{coord(x + 9)} {coord(y - 6)}l6 6l-6 6l-6 -6z" fill="{MEDIAN}" stroke="{MEDIAN}"/>'
        case "corridor":  # a slanted band, its reference dashed along it
            return (
                f'<path d="M{coord(x)} {coord(y + 1)}L{coord(x + 10)} {coord(y - 6)}L{coord(x + 18)} {coord(y - 6)}'
                f'L{coord(x + 8)} {coord(y + 6)}L{coord(x)} {coord(y + 6)}z" fill="{BAND}" fill-opacity="0.3" stroke="{BAND}"/>'
                f'<line x1="{coord(x + 4)}" y1="{coord(y + 3)}" x2="{coord(x + 14)}" y2="{coord(y - 4)}" stroke="{BAND}" '
                f'stroke-width="1.5" stroke-dasharray="3 2"/>'
            )
        case "exact":
            return f'<line x1="{coord(x + 9)}" y1="{coord(y - 7)}" x2="{coord(x + 9)}" y2="{coord(y + 7)}" stroke="{EXACT}" stroke-width="3"/>'
        case "failing":
            return (
                f'<line x1="{coord(x + 4)}" y1="{coord(y - 6)}" x2="{coord(x + 4)}" y2="{coord(y + 6)}" stroke="{EXACT}" '
                f'stroke-width="1.5"/><circle cx="{coord(x + 12)}" cy="{coord(y)}" r="2.5" fill="{EXACT}"/>'
            )
        case "missing":
            return (
                f'<circle cx="{coord(x + 9)}" cy="{coord(y)}" r="3.5" fill="none" stroke="{EXACT}" stroke-width="2"/>'
            )
        case "nan":
            return f'<rect x="{coord(x + 6)}" y="{coord(y - 3)}" width="6" height="6" fill="currentColor"/>'
        case "inf":
            return f'<path d="M{coord(x + 5)} {coord(y + 3)}L{coord(x + 13)} {coord(y + 3)}L{coord(x + 9)} {coord(y - 3)}z" fill="currentColor"/>'
        case _:  # presence
            return (
                f'<line x1="{coord(x)}" y1="{coord(y)}" x2="{coord(x + 18)}" y2="{coord(y)}" stroke="currentColor" '
                f'stroke-width="2" stroke-dasharray="1 4" stroke-linecap="round"/>'
            )


def kinds_legend(keys: set[str], top: float, uid: str, left: float = 4.0) -> tuple[float, str]:
    """The legend of the mark kinds in `keys`, flowed in lines from `top`; returns (bottom, svg)."""
    out: list[str] = []
    x, y = left, top + LEGEND_LINE / 2
    for kind in (k for k in _LEGEND_ORDER if k in keys):
        words = _LEGEND_WORDS[kind]
        width = 24 + text_width(words, TICK_FONT) + 12
        if x > left and x + width > WIDTH - 4:
            x, y = left, y + LEGEND_LINE
        out.append(
            f'<g class="mm-legend mm-legend-{kind}" data-kind="{kind}">{_swatch(kind, x, y, uid)}'
            f'<text x="{coord(x + 24)}" y="{coord(y + 4)}" font-size="{TICK_FONT}" fill="currentColor">{words}</text></g>'
        )
        x += width
    return (y + LEGEND_LINE / 2 if out else top), "".join(out)


def defs(uid: str) -> str:
    return (
        f'<defs><pattern id="{uid}-w" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{WINDOW}" fill-opacity="0.2"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{WINDOW}" stroke-width="3"/></pattern>'
        f'<marker id="{uid}-a" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="8" markerHeight="8" '
        f'orient="auto-start-reverse" markerUnits="userSpaceOnUse"><path d="M0 0L8 4L0 8z" fill="{BAND}"/>'
        f"</marker></defs>"
    )
