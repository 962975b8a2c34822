"""A profile as an importable Grafana dashboard: the live Miles gauges with the profile's ranges drawn on them.

One row per catalog section, one time-series panel per metric that has a number a chart
can show. The query reads the gauge the alerting rules watch (`gauge_name`), for the runs
picked in `$run`, from the Prometheus data source picked in `$datasource`. What a chart of
values over time cannot show (a range for the first steps, one step, presence) is said in
the panel's description instead of being drawn wrong.

Grafana interpolates `$name`, `${name}` and `[[name]]` in titles and descriptions, and
renders descriptions as Markdown: text from ranges/ is escaped for both.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, assert_never

from metrics_manual.model.gauges import gauge_name, no_gauge
from metrics_manual.model.kinds import some_steps
from metrics_manual.model.phrase import FRACTION, describe, plain
from metrics_manual.model.schema import (
    Band,
    Corridor,
    Exact,
    Expectation,
    Median,
    MetricExport,
    Presence,
    ProfileExport,
)

SCHEMA_VERSION = 39  # Grafana 10.4+/11 read it; older ones migrate
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RUN_QUERY = 'label_values({__name__=~"miles_metric_.+"}, run_name)'
PANEL_W, PANEL_H, ROW_H, GRID_W = 12, 8, 1, 24
# Grafana unit ids for the catalog's units; any other unit of plain words shows as a suffix.
UNITS = {
    "s": "s",
    "ms": "ms",
    "us": "µs",
    "ns": "ns",
    "min": "m",
    "h": "h",
    FRACTION: "percentunit",
    "%": "percent",
    "percent": "percent",
    "bytes": "bytes",
    "B": "bytes",
    "GB": "decgbytes",
    "MB": "decmbytes",
}
_SUFFIX_UNIT = re.compile(r"[A-Za-z][A-Za-z ]{0,30}")
# Band: red outside, green inside (bounds included by the manual; Grafana colours a step from its value on).
IN, OUT, LINE = "green", "red", "blue"
MODE = {"band": "line+area", "median": "dashed", "exact": "line"}


@dataclass(frozen=True)
class Drawn:
    """The expectation a panel draws and the threshold steps that draw it."""

    expectation: Band | Median | Exact
    steps: list[dict[str, Any]]
    mode: str


def grafana_unit(unit: str | None) -> str | None:
    """Grafana's unit id for a catalog unit; `suffix:<unit>` for other plain words; None when it has none."""
    if not unit:
        return None
    if unit in UNITS:
        return UNITS[unit]
    return f"suffix: {unit}" if _SUFFIX_UNIT.fullmatch(unit) else None


def drawable(e: Expectation) -> str | None:
    """Why a chart of values over time cannot draw `e`, or None when it can."""
    match e:
        case Band() | Exact():
            steps = some_steps(e.span)
            return f"{steps}: the chart's axis is time, not step" if steps else None
        case Median():
            return None
        case Presence():
            return "presence has no number"
        case Corridor():  # a threshold is one value over the whole chart, and the chart's axis is time
            return (
                "a corridor: its bounds change at each step of its reference, and this chart's axis is time, not "
                "step (a threshold is one value over the whole chart); judge the logs with metrics-manual judge, "
                "or open the TensorBoard export, which draws the reference and its bounds at each step"
            )
        case _:
            assert_never(e)


def median_limits(e: Median) -> tuple[float, float] | None:
    """The values a run's median may take within the tolerance, as `judge` counts it (None without one)."""
    if e.tolerance is None:
        return None
    limit = e.tolerance * abs(e.value)
    return e.value - limit, e.value + limit


def threshold_steps(e: Band | Median | Exact) -> Drawn:
    """Grafana threshold steps drawing `e`: steps at a band's min and max, a median and its tolerance, an exact value."""
    base: dict[str, Any] = {"value": None, "color": "transparent"}
    match e:
        case Band():
            steps: list[dict[str, Any]] = [{"value": None, "color": OUT if e.min is not None else IN}]
            if e.min is not None:
                steps.append({"value": e.min, "color": IN})
            if e.max is not None:
                steps.append({"value": e.max, "color": OUT})
            return Drawn(e, steps, MODE["band"])
        case Median():
            limits = median_limits(e)
            values = [limits[0], e.value, limits[1]] if limits else [e.value]
            return Drawn(e, [base, *({"value": v, "color": LINE} for v in values)], MODE["median"])
        case Exact():
            return Drawn(e, [base, {"value": e.value, "color": IN}], MODE["exact"])
        case _:
            assert_never(e)


def drawn(m: MetricExport) -> Drawn | None:
    """What a metric's panel draws: its first drawable band, else exact value, else median (one thresholds set per panel)."""
    for kind in (Band, Exact, Median):
        for e in m.expectations:
            if isinstance(e, kind) and drawable(e) is None:
                return threshold_steps(e)
    return None


# --- text that Grafana shows literally ----------------------------------------------------------------------

_MD_PUNCT = re.compile(r"([!\"#%'()*+,\-./:;=?@\[\\\]^_`{|}~])")
_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;"}


def grafana_markdown(text: Any) -> str:
    """Source text as Markdown that Grafana shows literally: ASCII punctuation backslash-escaped
    (CommonMark), `& < >` as entities so no HTML starts, `$` as an entity so no variable is interpolated."""
    escaped = _MD_PUNCT.sub(r"\\\1", plain(text))
    return re.sub(r"[&<>$]", lambda m: _ENTITY[m.group()], escaped)


def grafana_text(text: Any) -> str:
    """Source text for a plain-text field that Grafana interpolates (titles): a word joiner
    after `$` and between `[[` keeps `$run`, `${x}` and `[[x]]` from naming a variable."""
    return plain(text).replace("$", "$\u2060").replace("[[", "[\u2060[")


def _url(url: str) -> str:
    # A Markdown link destination: no space, parenthesis or angle bracket may end it early.
    return urllib.parse.quote(url, safe=":/#?=&%~+@!,;'*[]")


# --- the dashboard -------------------------------------------------------------------


def uid(profile_id: str) -> str:
    """A stable dashboard uid (Grafana allows 40 characters)."""
    full = f"metrics-manual-{profile_id}"
    return full if len(full) <= 40 else f"{full[:31]}-{hashlib.sha256(full.encode()).hexdigest()[:8]}"


def gauges(m: MetricExport) -> tuple[list[str], list[str]]:
    """The keys a panel queries (a family's members), and the keys left out for having no gauge."""
    keys = m.members or [m.key]
    return [k for k in keys if no_gauge(k) is None], [k for k in keys if no_gauge(k) is not None]


def query(key: str) -> str:
    """The PromQL of one key's gauge for the runs picked in $run (the same metric name as its alert rule)."""
    return f'{gauge_name(key)}{{run_name=~"$run"}}'


def description(m: MetricExport, d: Drawn | None, left_out: list[str], profile_title: str) -> str:
    unit = m.unit
    lines = [grafana_markdown(m.meaning[:1].upper() + m.meaning[1:]) + "."]
    lines.append("")
    lines.append(f"Expected on {grafana_markdown(profile_title)}:")
    lines.append("")
    for e in m.expectations:
        text = describe(e, unit, grafana_markdown)
        if d is not None and e is d.expectation:
            lines.append(f"- {text} (drawn)")
        elif why := drawable(e):
            lines.append(f"- {text} (not drawn: {why})")
        else:
            lines.append(f"- {text} (not drawn: the chart shows one range at a time)")
    if isinstance(d and d.expectation, Median):
        lines += ["", "A median is of a run's per-step values: single values may lie outside its lines."]
    for key in left_out:
        lines += ["", f"{grafana_markdown(key)}: not queried ({grafana_markdown(no_gauge(key))})."]
    if m.url:
        lines += ["", f"[{grafana_markdown(m.key)} in the metrics manual]({_url(m.url)})"]
    return "\n".join(lines)


def panel(m: MetricExport, d: Drawn | None, panel_id: int, x: int, y: int, profile_title: str) -> dict[str, Any]:
    keys, left_out = gauges(m)
    targets = [
        {
            "refId": chr(ord("A") + i) if i < 26 else f"Q{i}",
            "datasource": DATASOURCE,
            "expr": query(key),
            "legendFormat": "{{run_name}}" + (f" {key}" if m.members else ""),
            "range": True,
        }
        for i, key in enumerate(keys)
    ]
    defaults: dict[str, Any] = {
        "color": {"mode": "palette-classic"},
        "custom": {
            "drawStyle": "line",
            "lineWidth": 1,
            "fillOpacity": 0,
            "showPoints": "auto",
            "spanNulls": False,
            "thresholdsStyle": {"mode": d.mode if d else "off"},
        },
        "thresholds": {"mode": "absolute", "steps": d.steps if d else [{"value": None, "color": "transparent"}]},
    }
    if unit := grafana_unit(m.unit):
        defaults["unit"] = unit
    return {
        "type": "timeseries",
        "id": panel_id,
        "title": m.key,
        "description": description(m, d, left_out, profile_title),
        "datasource": DATASOURCE,
        "gridPos": {"h": PANEL_H, "w": PANEL_W, "x": x, "y": y},
        "targets": targets,
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {
            "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True, "calcs": []},
            "tooltip": {"mode": "multi", "sort": "none"},
        },
    }


def variables() -> list[dict[str, Any]]:
    return [
        {
            "type": "datasource",
            "name": "datasource",
            "label": "Prometheus",
            "query": "prometheus",
            "hide": 0,
            "refresh": 1,
            "options": [],
        },
        {
            "type": "query",
            "name": "run",
            "label": "Run",
            "description": "run_name of the Miles runs to show",
            "datasource": DATASOURCE,
            "query": RUN_QUERY,
            "definition": RUN_QUERY,
            "refresh": 2,
            "sort": 1,
            "multi": True,
            "includeAll": True,
            "allValue": ".*",
            "hide": 0,
            "options": [],
        },
    ]


def dashboard(doc: ProfileExport) -> dict[str, Any]:
    """The dashboard of one profile as JSON-ready data."""
    panels: list[dict[str, Any]] = []
    ids = iter(range(1, 1_000_000))
    y = 0
    section = None
    col = 0
    for m in doc.metrics:
        d = drawn(m)
        if d is None or not gauges(m)[0]:
            continue  # nothing to draw, or no gauge to query
        if m.section != section:
            section, col = m.section, 0
            y += PANEL_H if panels and panels[-1]["type"] != "row" else 0
            panels.append(
                {
                    "type": "row",
                    "id": next(ids),
                    "title": grafana_text(m.section_title),
                    "collapsed": False,
                    "gridPos": {"h": ROW_H, "w": GRID_W, "x": 0, "y": y},
                    "panels": [],
                }
            )
            y += ROW_H
        elif col * PANEL_W >= GRID_W:
            col, y = 0, y + PANEL_H
        panels.append(panel(m, d, next(ids), col * PANEL_W, y, doc.profile.title))
        col += 1
    info = doc.profile
    return {
        "uid": uid(info.id),
        "title": grafana_text(f"Metrics manual: {info.title}"),
        "description": grafana_text(f"Miles gauges against the ranges of profile {info.id} ({info.title})"),
        "tags": ["metrics-manual", "miles", info.id],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "templating": {"list": variables()},
        "annotations": {"list": []},
        "panels": panels,
    }


def to_grafana(doc: ProfileExport) -> str:
    return json.dumps(dashboard(doc), indent=2, ensure_ascii=False) + "\n"
