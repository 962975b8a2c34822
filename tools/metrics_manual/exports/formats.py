"""Export a profile as JSON (canonical), YAML, CSV and Prometheus alerting rules (the dashboard: grafana.py)."""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from typing import Any, assert_never

from metrics_manual.exports.grafana import to_grafana
from metrics_manual.exports.names import FILE_FORMATS, SUFFIX
from metrics_manual.model.gauges import gauge_name, no_gauge
from metrics_manual.model.json_schema import schema_text
from metrics_manual.model.kinds import some_steps
from metrics_manual.model.phrase import describe
from metrics_manual.model.schema import (
    EXPECTATION,
    SCHEMA_VERSION,
    AtStep,
    Band,
    Catalog,
    Coverage,
    EveryStep,
    Exact,
    Expectation,
    FirstSteps,
    Median,
    MetricExport,
    Presence,
    Profile,
    ProfileExport,
    ProfileInfo,
    Span,
    Window,
)
from metrics_manual.source.load import Manual

EXPORT_DIR = "docs/export"
SCHEMA_DIR = "docs/schema"  # the source's schemas: editors validate ranges/*.yaml against them
# Each catalog section has a page under it: reference/metrics/<section id>/#<metric anchor>.
REFERENCE_PAGE = "reference/metrics/"

CSV_COLUMNS: dict[str, str] = {
    "profile": "id of the profile",
    "section": "id of the metric's section",
    "key": "the metric key (a family ends in /*)",
    "meaning": "what the metric means",
    "unit": "unit of the metric and of min, max and value; empty when it has none",
    "kind": "band, median, exact, presence, or none (the metric has no range in this profile)",
    "min": "band: lowest expected per-step value; empty when open",
    "max": "band: highest expected per-step value; empty when open",
    "value": "median or exact: the value",
    "tolerance": "median: relative tolerance a run's median may differ by (0.05 = 5%); empty when the source gives none",
    "steps": "band: per-step values over this many steps; median: over this many steps",
    "window_first": "band: holds only in the first N steps of the run",
    "at": "exact: every_step, every_run or step; presence: every_step",
    "at_step": "exact at one step: that step",
    "condition": "when the expectation holds, in words",
    "sources": "ids of the profile's sources, separated by spaces",
    "not_logged": "why no run logs the metric at the catalog's commit (its kind is then none); empty when it is logged",
}


def export_document(manual: Manual, profile: Profile, site_url: str | None) -> ProfileExport:
    metrics = []
    for section in manual.catalog.sections:
        for m in section.metrics:
            metrics.append(  # built from validated parts: no need to validate again
                MetricExport.model_construct(
                    key=m.key,
                    name=m.name,
                    members=m.members,
                    section=section.id,
                    section_title=section.title,
                    meaning=m.meaning,
                    unit=m.unit,
                    url=metric_url(site_url, section.id, m.anchor),
                    not_logged=m.not_logged,
                    renamed_from=m.renamed_from,
                    expectations=profile.expectations.get(m.key, []),
                )
            )
    info = ProfileInfo.model_construct(**{k: getattr(profile, k) for k in ProfileInfo.model_fields})
    return ProfileExport.model_construct(
        schema_version=SCHEMA_VERSION, profile=info, step_keys=dict(manual.catalog.step_keys), metrics=metrics
    )


def metric_url(site_url: str | None, section: str, anchor: str) -> str | None:
    """The metric's entry on its section's page (the old `reference/metrics/#anchor` still lands there)."""
    return f"{site_url.rstrip('/')}/{REFERENCE_PAGE}{section}/#{anchor}" if site_url else None


def _plain(doc: ProfileExport) -> dict[str, Any]:
    # pydantic's Rust serializer is many times faster than model_dump + json.dumps.
    data: dict[str, Any] = json.loads(doc.model_dump_json(exclude_none=True))
    return data


def to_json(doc: ProfileExport) -> str:
    return doc.model_dump_json(indent=2, exclude_none=True) + "\n"


_PLAIN_KEY = re.compile(r"[a-z_][a-z0-9_/-]*")
_PLAIN_STR = re.compile(r"[A-Za-z]([\w ./()+-]*[\w.)])?")
_NOT_YAML_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


@functools.lru_cache(maxsize=4096)
def _key(k: str) -> str:
    return k if _PLAIN_KEY.fullmatch(k) and k not in _YAML_WORDS else _scalar(k) if k else '""'


def yaml_float(v: float) -> str:
    """A finite float as both YAML 1.1 (PyYAML, the source's reader) and 1.2 read it: Python's
    shortest repr, with a dot in the mantissa and a signed exponent (1e-05 -> 1.0e-05), since
    YAML 1.1 reads 1e-05 as a string."""
    text = repr(v)
    mantissa, e, exp = text.partition("e")
    return f"{mantissa if '.' in mantissa else mantissa + '.0'}e{exp if exp[0] in '+-' else '+' + exp}" if e else text


@functools.lru_cache(maxsize=65536, typed=True)  # keys and kinds repeat on every range
def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return yaml_float(v)
    if _PLAIN_STR.fullmatch(v) and v.lower() not in _YAML_WORDS and ": " not in v and " #" not in v:
        return str(v)
    # A JSON string is a YAML double-quoted scalar, once the characters YAML may not hold raw are escaped.
    return _NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(v, ensure_ascii=False))


def _empty(v: Any) -> str:
    return "{}" if isinstance(v, dict) else "[]"


def _emit(data: Any, indent: str, out: list[str]) -> None:
    """Block-style YAML of JSON-like data. PyYAML's representer is pure Python and took
    most of the build on large profiles; this emits the same data in a tenth of the time."""
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, (dict, list)):
                if v:
                    out.append(f"{indent}{_key(k)}:\n")
                    _emit(v, indent + "  ", out)
                else:
                    out.append(f"{indent}{_key(k)}: {_empty(v)}\n")
            else:
                out.append(f"{indent}{_key(k)}: {_scalar(v)}\n")
        return
    child = indent + "  "
    for v in data:
        if isinstance(v, dict) and v:
            start = len(out)
            _emit(v, child, out)
            out[start] = f"{indent}- {out[start][len(child) :]}"  # the first key shares the dash's line
        elif isinstance(v, list) and v:
            out.append(f"{indent}-\n")
            _emit(v, child, out)
        else:
            out.append(f"{indent}- {_empty(v) if isinstance(v, (dict, list)) else _scalar(v)}\n")


def to_yaml_text(data: Any) -> str:
    out: list[str] = []
    _emit(data, "", out)
    return "".join(out)


def to_yaml(doc: ProfileExport) -> str:
    return to_yaml_text(_plain(doc))


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
    data = _plain(doc)
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
                    _text_cell(e.get("condition")),
                    " ".join(e.get("sources", ())),
                    not_logged,
                ]
            )
    return buf.getvalue()


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
        exps.append(EXPECTATION.validate_python(e))
    return out


# --- Prometheus --------------------------------------------------------------------


def _promql_number(v: int | float) -> str:
    return repr(v)


# A rule for some steps only waits this long: Miles sets a log() call's metrics before its step key
# (the key is added to the dict last), so a scrape in the middle of the call pairs a step's values
# with the step before it, until the next scrape. `for` at least the scrape interval lets that pass.
STEP_RULE_FOR = "1m"


def _alert_name(key: str, suffix: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", key)
    return "Miles" + "".join(w[:1].upper() + w[1:] for w in words if w) + suffix


def why_no_alert_rule(e: Expectation) -> str | None:
    """Why no alerting rule can judge `e` honestly, or None when one can (see `_alert`)."""
    match e:
        case Band() | Exact():
            return None
        case Median():
            return "a median over steps: Prometheus keeps scrapes, not steps (a longer step would count more), and the median is known only after its last step"
        case Presence():
            return "presence: a gauge keeps its last value when a step logs nothing, so a missing log looks logged"
        case _:
            assert_never(e)


def _alert(e: Expectation, gauge: str) -> tuple[str, str, str]:
    """The PromQL expression that fires when `gauge` breaks `e` (or is not a finite number), the
    alert name's suffix and its verb."""
    match e:
        case Band():
            low = f"{gauge} < {_promql_number(e.min)}" if e.min is not None else f"{gauge} == -Inf"
            high = f"{gauge} > {_promql_number(e.max)}" if e.max is not None else f"{gauge} == +Inf"
            return f"{low} or {high} or {gauge} != {gauge}", "OutOfRange", "left its range"  # x != x: NaN
        case Exact():  # NaN and the infinities differ from any value
            return f"{gauge} != {_promql_number(e.value)}", "NotExpected", "differs from its expected value"
        case Median() | Presence():
            raise ValueError(f"no alerting rule for a {e.kind}: {why_no_alert_rule(e)}")
        case _:
            assert_never(e)


def _steps_filter(span: Span, step_gauge: str) -> tuple[str, str] | None:
    """The PromQL filter on the step key's gauge that keeps the steps `span` covers, and the alert
    name's words for them; None when it covers every step (no filter).

    The step's number, as Miles logs it: a run resumed at step 100 is past the first 48 steps."""
    match span:
        case Window(first=n) | FirstSteps(count=n):
            return f"{step_gauge} < {n}", f"InFirst{n}Steps"
        case AtStep(step=n):
            return f"{step_gauge} == {n}", f"AtStep{n}"
        case EveryStep():
            return None
        case _:
            assert_never(span)


def _rule_expr(e: Band | Exact, key: str, step_keys: dict[str, str]) -> tuple[str, str, str, bool] | str:
    """The rule's expression, alert name suffix and verb, and whether it is joined with the step's
    gauge; or why `key` can have no rule."""
    if why := no_gauge(key):
        return why
    expr, suffix, verb = _alert(e, gauge_name(key))
    step_key = step_keys.get(key.split("/", 1)[0])
    kept = _steps_filter(e.span, gauge_name(step_key or ""))
    if kept is None:
        return expr, suffix, verb, False
    if step_key is None:
        return f"{some_steps(e.span)}, and the catalog names no step key for its namespace"
    if why := no_gauge(step_key):
        return f"{some_steps(e.span)}, and its step key {step_key} has {why}"
    where, words = kept
    # PromQL's `and` binds tighter than `or`: the band's alternatives in parentheses.
    return f"({expr}) and on(run_name) {where}", suffix + words, verb, True


def _go_literal(text: str) -> str:
    # Annotations are Go templates: a literal '{{' from the source must not start an action.
    return text.replace("{{", '{{ "{{" }}')


def to_prometheus(doc: ProfileExport) -> str:
    rules: list[dict[str, Any]] = []
    left_out: list[str] = []
    names: dict[str, int] = {}
    for m in doc.metrics:
        if m.members:  # a family's gauges are its members; a family range would need one rule each
            keys = m.members
        else:
            keys = [m.key]
        for e in m.expectations:
            text = describe(e, m.unit, sources=True)
            why = why_no_alert_rule(e)
            if why:
                left_out.append(f"{m.key}: {text} ({why})")
                continue
            assert isinstance(e, Band | Exact)  # why_no_alert_rule: the others have no rule
            for key in keys:
                made = _rule_expr(e, key, doc.step_keys)
                if isinstance(made, str):
                    left_out.append(f"{key}: {text} ({made})")
                    continue
                expr, suffix, verb, joined = made
                name = _alert_name(key, suffix)
                names[name] = names.get(name, 0) + 1
                if names[name] > 1:
                    name += str(names[name])
                meaning, title, expected = (_go_literal(t) for t in (m.meaning, doc.profile.title, text))
                annotations = {
                    "summary": f"{_go_literal(key)} {verb} on run {{{{ $labels.run_name }}}}",
                    "description": f"{_go_literal(key)} ({meaning}) is {{{{ $value }}}}; profile {doc.profile.id} ({title}) expects {expected}.",
                    "profile": doc.profile.id,
                    "expected": expected,
                }
                if m.url:
                    annotations["manual_url"] = m.url
                rule: dict[str, Any] = {"alert": name, "expr": expr}
                if joined:
                    rule["for"] = STEP_RULE_FOR
                rule["labels"] = {"severity": "warning", "profile": doc.profile.id, "metric": key}
                rule["annotations"] = annotations
                rules.append(rule)
    head = [
        f"# Prometheus alerting rules for a live Miles run (--use-prometheus), profile {doc.profile.id}.",
        "# Generated by `metrics-manual export`; regenerate, do not edit.",
        "# A rule fires while a metric's gauge is outside its range or not a finite number.",
        "# A range for some steps only (the first N steps, one step) is joined on run_name with the gauge of the",
        "# metric's step key, which Miles sets in the same log() call, after the metrics. Such a rule waits",
        f"# `for: {STEP_RULE_FOR}`: a scrape in the middle of that call (a step's values beside the number of the",
        "# step before) must not fire it.",
        "# Not judged here, since no rule can judge them honestly:"
        if left_out
        else "# Every expectation of the profile has a rule.",
        *(f"# - {line}" for line in left_out),
    ]
    body = to_yaml_text({"groups": [{"name": f"metrics-manual-{doc.profile.id}", "rules": rules}]})
    return "\n".join(head) + "\n" + body


def render_exports(manual: Manual, site_url: str | None) -> dict[str, str]:
    out: dict[str, str] = {f"{EXPORT_DIR}/profile.schema.json": schema_text(ProfileExport, "Exported profile")}
    for p in manual.profiles:
        doc = export_document(manual, p, site_url)
        for fmt in FILE_FORMATS:
            out[f"{EXPORT_DIR}/{p.id}{SUFFIX[fmt]}"] = export_text(doc, fmt)
    return out


def export_text(doc: ProfileExport, fmt: str) -> str:
    if fmt == "json":
        return to_json(doc)
    if fmt == "yaml":
        return to_yaml(doc)
    if fmt == "csv":
        return to_csv(doc)
    if fmt == "grafana":
        return to_grafana(doc)
    if fmt == "prometheus":
        return to_prometheus(doc)
    raise ValueError(f"no exporter for format {fmt!r}")  # a format added to names.FORMATS needs one here


@functools.cache  # a model's schema is a fact of the code: mkdocs serve and the tests build many times a process
def source_schemas() -> dict[str, str]:
    return {
        f"{SCHEMA_DIR}/catalog.schema.json": schema_text(Catalog, "metrics-manual catalog (ranges/catalog.yaml)"),
        f"{SCHEMA_DIR}/profile.schema.json": schema_text(Profile, "metrics-manual profile (ranges/profiles/*.yaml)"),
        f"{SCHEMA_DIR}/coverage.schema.json": schema_text(Coverage, "metrics-manual coverage (ranges/coverage.yaml)"),
    }
