"""A profile as a CSV table (a row per expectation, RFC 4180), and the expectations read back from one."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from metrics_manual.exports.document import plain_data
from metrics_manual.model.schema import EXPECTATION, Expectation, ProfileExport

CSV_COLUMNS: dict[str, str] = {
    "profile": "id of the profile",
    "section": "id of the metric's section",
    "key": "the metric key (a family ends in /*)",
    "meaning": "what the metric means",
    "unit": "unit of the metric and of min, max and value; empty when it has none",
    "kind": "band, median, exact, presence, corridor, or none (the metric has no range in this profile)",
    "min": "band: lowest expected per-step value; empty when open",
    "max": "band: highest expected per-step value; empty when open",
    "value": "median or exact: the value",
    "tolerance": "median: relative tolerance a run's median may differ by (0.05 = 5%); empty when the source gives none",
    "steps": "band: per-step values over this many steps; median: over this many steps",
    "window_first": "band: holds only in the first N steps of the run",
    "at": "exact: every_step, every_run or step; presence: every_step",
    "at_step": "exact at one step: that step",
    "reference_source": "corridor: id of the capture source its reference curve comes from",
    "reference_rolling_median": "corridor: the reference is a rolling median over this many steps; empty when not",
    "reference_points": "corridor: the reference curve, step:value pairs separated by spaces",
    "rel_up": "corridor: above the reference by at most this share of |reference|; empty when not stated",
    "abs_floor_up": "corridor: above the reference by at most this much where the share is less",
    "rel_down": "corridor: below the reference by at most this share of |reference|",
    "abs_floor_down": "corridor: below the reference by at most this much where the share is less",
    "condition": "when the expectation holds, in words",
    "sources": "ids of the profile's sources, separated by spaces",
    "not_logged": "why no run logs the metric at the catalog's commit (its kind is then none); empty when it is logged",
}


def _cell(v: Any) -> str:
    return "" if v is None else str(v) if not isinstance(v, float) else repr(v)


# OWASP's advice against CSV injection: a text cell that a spreadsheet would run as a formula
# starts with a single quote. One quote is added to any text cell starting with these (or with
# a quote, so that reading back removes exactly the one that was added).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def _text_cell(v: Any) -> str:
    text = "" if v is None else str(v)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _text_back(text: str) -> str:
    return text[1:] if text.startswith("'") else text


def to_csv(doc: ProfileExport) -> str:
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\r\n")  # RFC 4180
    w.writerow(CSV_COLUMNS)
    data = plain_data(doc)
    pid = data["profile"]["id"]
    for m in data["metrics"]:
        base = [pid, m["section"], m["key"], _text_cell(m["meaning"]), _text_cell(m.get("unit"))]
        not_logged = _text_cell(m.get("not_logged"))
        if not m["expectations"]:
            w.writerow([*base, "none"] + [""] * (len(CSV_COLUMNS) - 7) + [not_logged])
        for e in m["expectations"]:
            at = e.get("at")
            w.writerow(
                [
                    *base,
                    e["kind"],
                    _cell(e.get("min")),
                    _cell(e.get("max")),
                    _cell(e.get("value")),
                    _cell(e.get("tolerance")),
                    _cell(e.get("steps")),
                    _cell(e["window"]["first"]) if "window" in e else "",
                    "step" if isinstance(at, dict) else _cell(at),
                    _cell(at["step"]) if isinstance(at, dict) else "",
                    *_reference_cells(e.get("reference")),
                    *(_cell(e.get(f)) for f in _TOLERANCES),
                    _text_cell(e.get("condition")),
                    " ".join(e.get("sources", ())),
                    not_logged,
                ]
            )
    return buf.getvalue()


_TOLERANCES = ("rel_up", "abs_floor_up", "rel_down", "abs_floor_down")


def _reference_cells(ref: dict[str, Any] | None) -> list[str]:
    if ref is None:
        return ["", "", ""]
    points = " ".join(f"{_cell(s)}:{_cell(v)}" for s, v in ref["points"])
    return [ref["source"], _cell(ref.get("rolling_median")), points]


def _number(text: str) -> int | float | None:
    if text == "":
        return None
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def read_csv(text: str) -> dict[str, list[Expectation]]:
    """Expectations by metric key from an exported CSV (metrics of kind 'none' map to [])."""
    out: dict[str, list[Expectation]] = {}
    for row in csv.DictReader(io.StringIO(text, newline="")):
        exps = out.setdefault(row["key"], [])
        if row["kind"] == "none":
            continue
        e: dict[str, Any] = {
            "kind": row["kind"],
            "condition": _text_back(row["condition"]) or None,
            "sources": row["sources"].split(),
        }
        e.update({f: _number(row[f]) for f in ("min", "max", "value", "tolerance", "steps") if row[f]})
        if row["window_first"]:
            e["window"] = {"first": int(row["window_first"])}
        if row["at"]:
            e["at"] = {"step": int(row["at_step"])} if row["at"] == "step" else row["at"]
        if row["reference_source"]:
            e["reference"] = {
                "source": row["reference_source"],
                "rolling_median": _number(row["reference_rolling_median"]),
                "points": [[int(s), _number(v)] for s, v in (p.split(":") for p in row["reference_points"].split())],
            }
        e.update({f: _number(row[f]) for f in _TOLERANCES if row[f]})
        exps.append(EXPECTATION.validate_python(e))
    return out
