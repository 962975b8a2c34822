"""The Grafana dashboard export: valid for Grafana's published schemas, the profile's numbers as
thresholds, the same gauges as the alerting rules, and text from ranges/ inert."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import markdown
import pytest
import yaml

from conftest import PROJECT, REAL_TREE, REPO, TINY_CATALOG, run_cli, write_project
from metrics_manual.build import generate
from metrics_manual.exports.document import export_document
from metrics_manual.exports.grafana import grafana_markdown, grafana_unit, uid
from metrics_manual.exports.prometheus import to_prometheus
from metrics_manual.model.schema import AtStep, Band, Exact, Median
from metrics_manual.source.load import Manual, load_manual

VENDOR = Path(__file__).parents[1] / "vendor" / "grafana-foundation-sdk"


def _schema(name: str, definition: str | None = None) -> dict[str, Any]:
    doc = json.loads((VENDOR / f"{name}.jsonschema.json").read_text("utf-8"))
    if definition:  # the same document, rooted at one of its definitions
        doc = {**doc, "$ref": f"#/definitions/{definition}"}
    return doc


DASHBOARD = _schema("dashboard", "Dashboard")
OPTIONS = _schema("timeseries", "Options")
CUSTOM = _schema("timeseries", "FieldConfig")
QUERY = _schema("prometheus", "Dataquery")

HOSTILE = "$run ${datasource} [[run]] <script>alert(1)</script> **bold** [x](javascript:alert(1)) https://evil.example"

EVERY_KIND_CATALOG = TINY_CATALOG.replace("title: Training", f"title: 'Training {HOSTILE}'").replace(
    "meaning: the gradient norm", f"meaning: '{HOSTILE}'"
).replace("rollout: rollout/step}", "rollout: rollout/step, perf: rollout/step}") + (
    """\
  - id: more
    title: More
    metrics:
      - key: perf/step_time
        meaning: seconds per step
        unit: s
      - key: rollout/open_low
        meaning: open below
      - key: rollout/open_high
        meaning: open above
        unit: fraction
      - key: rollout/only_windowed
        meaning: only a window
      - key: rollout/median_tol
        meaning: a median with a tolerance
        unit: tokens
      - key: rollout/median_neg
        meaning: a negative median
      - key: rollout/exact_run
        meaning: exact in every run
      - key: rollout/exact_step
        meaning: exact at one step
      - key: rollout/present
        meaning: only logged
      - key: rollout/v1.5
        meaning: a key no gauge can carry
"""
)

EVERY_KIND_PROFILE = (
    """\
id: every-kind
title: 'Every kind $run [[run]]'
summary: Made up for tests.
advice: Build your own.
setup:
  framework: Miles
  model: M-1
  dataset: D
  hardware: {count: 2, name: GPU}
  prompts_per_step: 4
  answers_per_prompt: 2
  token_limit: 1024
  steps: 10
sources:
  summary: {kind: capture, path: cap/sum.json, keys: [runs.a]}
expectations:
  rollout/raw_reward:
    - {kind: band, min: 0.5, max: 0.9, steps: 10}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 10}
  train/grad_norm:
    - {kind: band, min: 1, max: 3, window: {first: 2}}
    - {kind: band, min: 0.25, max: 4.5, condition: '"""
    + HOSTILE
    + """'}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: every_step}
  train/weight/*:
    - {kind: band, min: -1.5, max: 1.5}
  perf/step_time:
    - {kind: band, min: 2, max: 40}
    - {kind: median, value: 10, steps: 10, tolerance: 0.2}
  rollout/open_low:
    - {kind: band, max: 7}
  rollout/open_high:
    - {kind: band, min: 0.125}
  rollout/only_windowed:
    - {kind: band, min: 1, max: 2, window: {first: 3}}
  rollout/median_tol:
    - {kind: median, value: 250, steps: 10, tolerance: 0.1}
  rollout/median_neg:
    - {kind: median, value: -8, steps: 10, tolerance: 0.25}
  rollout/exact_run:
    - {kind: exact, value: 3, at: every_run}
  rollout/exact_step:
    - {kind: exact, value: 1, at: {step: 0}}
  rollout/present:
    - {kind: presence}
  rollout/v1.5:
    - {kind: band, min: 0, max: 1}
"""
)


@pytest.fixture
def every_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SITE_URL", "https://manual.example/")  # links under it (unset, exports carry none)
    root = write_project(tmp_path / "every", EVERY_KIND_CATALOG, {"every-kind": EVERY_KIND_PROFILE})
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    return root


def _panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in board["panels"] if p["type"] == "timeseries"]


def _valid(board: dict[str, Any]) -> None:
    jsonschema.validate(board, DASHBOARD)
    for p in _panels(board):
        jsonschema.validate(p["options"], OPTIONS)
        jsonschema.validate(p["fieldConfig"]["defaults"]["custom"], CUSTOM)
        for t in p["targets"]:
            jsonschema.validate(t, QUERY)


def _boards(root: Path) -> tuple[Manual, dict[str, dict[str, Any]]]:
    manual, files = generate(root)
    return manual, {p.id: json.loads(files[f"docs/export/{p.id}.grafana.json"]) for p in manual.profiles}


def _expected_thresholds(expectations: list[Any]) -> list[float] | None:
    """The numbers a panel must draw, from the profile: a band's bounds first, else an exact value, else a median."""
    for e in expectations:
        if isinstance(e, Band) and e.window is None and e.steps is None:  # a band over every step
            return [v for v in (e.min, e.max) if v is not None]
    for e in expectations:
        if isinstance(e, Exact) and not isinstance(e.at, AtStep):
            return [e.value]
    for e in expectations:
        if isinstance(e, Median):
            if e.tolerance is None:
                return [e.value]
            off = e.tolerance * abs(e.value)
            return [e.value - off, e.value, e.value + off]
    return None


def _rule_metrics(manual: Manual, profile_id: str) -> dict[str, str]:
    """Metric key -> the gauge its alerting rule over every step reads, from the exported rules (a rule
    for some steps only reads the step's gauge too: the dashboard, whose axis is time, draws no such range)."""
    rules = yaml.safe_load(to_prometheus(export_document(manual, manual.profile(profile_id), None)))
    out = {}
    for r in rules["groups"][0]["rules"]:
        if " and on(run_name) " not in r["expr"]:
            out[r["labels"]["metric"]] = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", r["expr"]).group()  # type: ignore[union-attr]
    return out


def _agrees_with_profile(manual: Manual, boards: dict[str, dict[str, Any]]) -> int:
    checked = 0
    for profile in manual.profiles:
        board = boards[profile.id]
        _valid(board)
        rules = _rule_metrics(manual, profile.id)
        panels = {p["title"]: p for p in _panels(board)}
        for key, metric in manual.metrics.items():
            want = _expected_thresholds(profile.expectations.get(key, []))
            gauged = [k for k in (metric.members or [key]) if "." not in k]
            if want is None or not gauged:
                assert key not in panels, f"{key}: nothing to draw, yet a panel"
                continue
            p = panels[key]
            steps = p["fieldConfig"]["defaults"]["thresholds"]["steps"]
            assert steps[0]["value"] is None  # Grafana's base step
            assert [s["value"] for s in steps[1:]] == want, key
            assert p["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] != "off"
            names = [re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", t["expr"]).group() for t in p["targets"]]  # type: ignore[union-attr]
            assert len(names) == len(gauged)
            for member, name in zip(gauged, names):
                if member in rules:
                    assert name == rules[member], f"{member}: panel reads {name}, its alert rule {rules[member]}"
                    checked += 1
            for t in p["targets"]:
                assert t["expr"].endswith('{run_name=~"$run"}')
                assert t["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        for key in rules:
            assert any(key == k or key in manual.metrics[k].members for k in panels), f"{key} has a rule but no panel"
    return checked


@REAL_TREE
def test_real_manual_dashboards_are_valid_and_agree_with_profiles_and_rules() -> None:
    manual = load_manual(PROJECT)
    files = {
        p.id: json.loads((PROJECT / f"docs/export/{p.id}.grafana.json").read_text("utf-8")) for p in manual.profiles
    }
    assert files
    _agrees_with_profile(manual, files)


def test_every_range_kind_is_drawn_or_described(every_kind: Path) -> None:
    manual, boards = _boards(every_kind)
    assert _agrees_with_profile(manual, boards) >= 6
    board = boards["every-kind"]
    panels = {p["title"]: p for p in _panels(board)}
    # Neither a window nor one step nor presence can be drawn on a time axis; a dotted key has no gauge.
    for key in ("rollout/only_windowed", "rollout/exact_step", "rollout/present", "rollout/v1.5"):
        assert key not in panels
    grad = panels["train/grad_norm"]["description"]
    assert "not drawn: a window of the first steps" in grad and "(drawn)" in grad
    step_time = panels["perf/step_time"]
    assert "not drawn: the chart shows one range at a time" in step_time["description"]
    assert step_time["fieldConfig"]["defaults"]["unit"] == "s"
    assert panels["rollout/open_high"]["fieldConfig"]["defaults"]["unit"] == "percentunit"
    assert panels["rollout/median_tol"]["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "dashed"
    assert [t["legendFormat"] for t in panels["train/weight/*"]["targets"]] == [
        "{{run_name}} train/weight/mean",
        "{{run_name}} train/weight/max",
    ]
    # Rows follow the catalog's sections, each row before its panels.
    kinds = [(p["type"], p["title"]) for p in board["panels"]]
    assert [t for k, t in kinds if k == "row"][0] == "Rollout"
    assert kinds.index(("row", "More")) < kinds.index(("timeseries", "perf/step_time"))
    # The grid never overlaps.
    cells = set()
    for p in board["panels"]:
        g = p["gridPos"]
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                assert (x, y) not in cells, p["title"]
                cells.add((x, y))
    assert len({p["id"] for p in board["panels"]}) == len(board["panels"])


def test_text_from_the_source_is_inert_for_grafana(every_kind: Path) -> None:
    _, boards = _boards(every_kind)
    board = boards["every-kind"]
    for p in board["panels"]:
        # Grafana interpolates $var, ${var} and [[var]] in titles and descriptions.
        for field in ("title", "description"):
            text = p.get(field, "")
            assert not re.search(r"\$\w|\$\{|\[\[", text), (field, text)
        if p["type"] == "timeseries":
            html = markdown.markdown(p["description"])
            assert "<script" not in html and "<strong>" not in html and "<em>" not in html
            [link] = re.findall(r"<a href=\"([^\"]*)\"", html)
            anchor = f"m-{p['title'].removesuffix('/*').replace('/', '-')}"
            assert re.fullmatch(rf"https://manual\.example/reference/metrics/[a-z0-9-]+/#{re.escape(anchor)}", link)
    assert not re.search(r"\$\w|\[\[", board["title"])
    row = next(p for p in board["panels"] if p["type"] == "row" and p["title"].startswith("Training"))
    assert "alert(1)" in row["title"]  # shown, not dropped


def test_markdown_escape_keeps_the_words() -> None:
    text = "a <b> & $x [y](z) 1. *k*"
    html = markdown.markdown(grafana_markdown(text))
    assert "<b>" not in html and "<a" not in html and "<em>" not in html
    assert "&lt;b&gt;" in html and "&#36;x" in html


def test_units_and_uids() -> None:
    assert grafana_unit("s") == "s" and grafana_unit("fraction") == "percentunit"
    assert grafana_unit("tokens") == "suffix: tokens"
    assert grafana_unit("<b>") is None and grafana_unit(None) is None
    assert uid("lab-gb10") == "metrics-manual-lab-gb10"
    long = uid("a" * 60)
    assert len(long) <= 40 and long != uid("a" * 61)


def test_the_schemas_reject_a_broken_dashboard(every_kind: Path) -> None:
    _, boards = _boards(every_kind)
    board = boards["every-kind"]
    _valid(board)
    broken = json.loads(json.dumps(board))
    _panels(broken)[0]["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] = "stripes"
    with pytest.raises(jsonschema.ValidationError):
        _valid(broken)
    broken = json.loads(json.dumps(board))
    _panels(broken)[0]["fieldConfig"]["defaults"]["thresholds"]["steps"][1]["value"] = "0.5"
    with pytest.raises(jsonschema.ValidationError):
        _valid(broken)


def test_export_command_writes_the_dashboard(every_kind: Path) -> None:
    out = run_cli("export", "--root", str(every_kind), "--profile", "every-kind", "--format", "grafana")
    assert out.returncode == 0, out.stderr
    board = json.loads(out.stdout)
    assert board["uid"] == "metrics-manual-every-kind" and _panels(board)
    _valid(board)
