"""A corridor in the exports that carry it (JSON, YAML and CSV: tests/exports/test_export.py's round trip),
TensorBoard's bounds at each step of its reference, and the Prometheus rules and the Grafana dashboard saying
why they cannot judge or draw it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli
from corridor_fixture import KEY, corridor_project, reward, reward_run
from derive_helpers import write_runs
from metrics_manual.exports.tensorboard import float32
from metrics_manual.runs.read import read_run
from metrics_manual.source.load import load_manual


def export(project: Path, fmt: str, out: Path) -> None:
    r = run_cli("export", "--root", str(project), "--profile", "p", "--format", fmt, "-o", str(out))
    assert r.returncode == 0, r.stderr


def test_an_exported_profile_judges_a_run_as_the_project_does(tmp_path: Path) -> None:
    project = corridor_project(tmp_path / "p")
    runs = write_runs(tmp_path / "runs", {"ok": reward_run(1), "late": reward_run(2, lag=20)})
    for fmt in ("json", "yaml"):
        out = tmp_path / f"p.{fmt}"
        export(project, fmt, out)
        for run in runs.values():
            here = run_cli("judge", "--root", str(project), "--profile", "p", "--format", "json", str(run))
            there = run_cli("judge", "--profile", str(out), "--format", "json", str(run), cwd=tmp_path)
            mine, theirs = (json.loads(r.stdout)["results"] for r in (here, there))
            assert (here.returncode, mine) == (there.returncode, theirs), fmt


def test_tensorboard_draws_the_reference_and_its_bounds_at_each_of_its_steps(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    project = corridor_project(tmp_path / "p")
    manual = load_manual(project)
    [e] = manual.profile("p").expectations[KEY]
    export(project, "tensorboard", tmp_path / "tb")
    for run, at in (
        ("reference", lambda r: (r, None)),
        ("corridor-low", lambda r: (e.bounds(r)[0], True)),
        ("corridor-high", lambda r: (e.bounds(r)[1], False)),
    ):  # type: ignore[union-attr]
        series = read_run([tmp_path / "tb" / run], manual.catalog).series[KEY]
        assert list(series) == list(range(100)), run
        assert [series[s] for s in range(100)] == [float32(*at(reward(s))) for s in range(100)], run
        # Each line, judged as a run, lies in the corridor: its bounds are rounded to float32 on the inside.
        r = run_cli("judge", "--root", str(project), "--profile", "p", "--format", "json", str(tmp_path / "tb" / run))
        [result] = json.loads(r.stdout)["results"]
        assert (r.returncode, result["verdict"], result["steps_judged"]) == (0, "pass", 100), result["reason"]


def test_prometheus_and_grafana_say_why_a_corridor_has_no_rule_and_no_line(tmp_path: Path) -> None:
    root = corridor_project(tmp_path / "p")
    text = (root / "ranges/profiles/p.yaml").read_text("utf-8")
    # A band beside the corridor: the dashboard draws the band and says why the corridor is not drawn.
    (root / "ranges/profiles/p.yaml").write_text(text + "    - {kind: band, min: 0, max: 1}\n", "utf-8")
    export(root, "prometheus", tmp_path / "rules.yml")
    rules = (tmp_path / "rules.yml").read_text("utf-8")
    assert f"# - {KEY}: within 0.1 of a reference curve" in rules
    assert "(a corridor: its bounds change at each of the 100 steps of its reference, and PromQL has no table" in rules
    assert rules.count("alert: ") == 1  # the band's
    export(root, "grafana", tmp_path / "dash.json")
    [panel] = [
        p for p in json.loads((tmp_path / "dash.json").read_text("utf-8"))["panels"] if p["type"] == "timeseries"
    ]
    assert (
        "(not drawn: a corridor: its bounds change at each step of its reference, and this chart"
        in panel["description"]
    )
    assert panel["fieldConfig"]["defaults"]["thresholds"]["steps"][1] == {"value": 0, "color": "green"}
