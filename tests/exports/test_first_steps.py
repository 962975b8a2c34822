"""A range for the first N steps (a band with `steps: N`, or a window) is an alerting rule joined with the
gauge of its step key, which judges those steps only; it is no dashboard threshold, which would judge every
step of a live run, past step N too (docs/exports.md)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import TINY_CATALOG, TINY_PROFILE, require_tool, run_cli, write_project
from metrics_manual.build import generate

# rollout/raw_reward: only a band over the first 10 steps; train/grad_norm: a band over every step and a window;
# rollout/response_lengths: only a window. The profile's setup runs 10 steps.
FIRST_STEPS_PROFILE = (
    TINY_PROFILE.split("expectations:")[0]
    + """\
expectations:
  rollout/raw_reward:
    - {kind: band, min: 0.5, max: 0.9, steps: 4}
  rollout/response_lengths:
    - {kind: band, min: 100, max: 200, window: {first: 3}}
  train/grad_norm:
    - {kind: band, min: 1, max: 3, steps: 10, window: {first: 2}}
    - {kind: band, min: 0.25, max: 4.5}
"""
)


@pytest.fixture
def first_steps(tmp_path: Path) -> Path:
    return write_project(tmp_path / "p", TINY_CATALOG, {"tiny": FIRST_STEPS_PROFILE})


def _rules(root: Path) -> tuple[str, list[dict]]:
    result = run_cli("export", "--root", str(root), "--profile", "tiny", "--format", "prometheus")
    assert result.returncode == 0, result.stderr
    return result.stdout, yaml.safe_load(result.stdout)["groups"][0]["rules"]


def test_rules_for_the_first_steps_read_the_step_gauge(first_steps: Path) -> None:
    text, rules = _rules(first_steps)
    assert [(r["labels"]["metric"], r["expr"].split(" and on(run_name) ")[1:]) for r in rules] == [
        ("rollout/raw_reward", ["miles_metric_rollout_step < 4"]),
        ("rollout/response_lengths", ["miles_metric_rollout_step < 3"]),
        ("train/grad_norm", ["miles_metric_train_step < 2"]),  # the window, not its 10 steps
        ("train/grad_norm", []),
    ]
    assert not [line for line in text.splitlines() if line.startswith("# - ")]


@pytest.mark.promtool
def test_promtool_fires_for_the_every_step_band_and_never_for_a_first_steps_band(
    first_steps: Path, tmp_path: Path
) -> None:
    """A run whose gauges sit far outside every band, at step 30, long past step 4: only the every-step band alerts."""
    promtool = require_tool("promtool")
    text, rules = _rules(first_steps)
    rule_file = tmp_path / "rules.yml"
    rule_file.write_text(text, "utf-8")
    checked = subprocess.run([promtool, "check", "rules", str(rule_file)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    grad = rules[-1]
    series = {
        "miles_metric_rollout_raw_reward": 5.0,
        "miles_metric_rollout_response_lengths": 9000.0,
        "miles_metric_train_grad_norm": 50.0,
        "miles_metric_rollout_step": 30.0,
        "miles_metric_train_step": 30.0,
    }

    def spec(expected_grad_alerts: list[dict]) -> dict:
        return {
            "rule_files": [str(rule_file)],
            "evaluation_interval": "1m",
            "tests": [
                {
                    "interval": "1m",
                    "input_series": [
                        {"series": f'{name}{{run_name="late"}}', "values": f"{value!r}x30"}
                        for name, value in series.items()
                    ],
                    "alert_rule_test": [
                        *(
                            {"eval_time": "20m", "alertname": r["alert"], "exp_alerts": []}
                            for r in rules
                            if r is not grad
                        ),
                        {"eval_time": "20m", "alertname": grad["alert"], "exp_alerts": expected_grad_alerts},
                    ],
                }
            ],
        }

    annotations = {
        k: v.replace("{{ $labels.run_name }}", "late").replace("{{ $value }}", "50")
        for k, v in grad["annotations"].items()
    }
    fired = [{"exp_labels": {**grad["labels"], "run_name": "late"}, "exp_annotations": annotations}]
    test_file = tmp_path / "test.yml"
    test_file.write_text(yaml.safe_dump(spec(fired), sort_keys=False), "utf-8")
    tested = subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True, text=True)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    # The same test fails when the every-step band's alert is not expected: the run does reach promtool.
    test_file.write_text(yaml.safe_dump(spec([]), sort_keys=False), "utf-8")
    assert subprocess.run([promtool, "test", "rules", str(test_file)], capture_output=True).returncode != 0


def test_dashboard_draws_no_first_steps_band(first_steps: Path) -> None:
    _, files = generate(first_steps)
    board = json.loads(files["docs/export/tiny.grafana.json"])
    panels = {p["title"]: p for p in board["panels"] if p["type"] == "timeseries"}
    # A metric with only a range for the first steps has no panel; the every-step band is the one drawn.
    assert "rollout/raw_reward" not in panels and "rollout/response_lengths" not in panels
    grad = panels["train/grad_norm"]
    assert [s["value"] for s in grad["fieldConfig"]["defaults"]["thresholds"]["steps"]] == [None, 0.25, 4.5]
    assert "1 to 3 per step in the first 2 of 10 steps (not drawn: a window of the first steps" in grad["description"]


def test_dashboard_says_why_a_first_steps_band_is_not_drawn(tmp_path: Path) -> None:
    profile = FIRST_STEPS_PROFILE.replace(
        "  rollout/raw_reward:\n", "  rollout/raw_reward:\n    - {kind: exact, value: 0.7, at: every_run}\n"
    )
    _, files = generate(write_project(tmp_path / "p", TINY_CATALOG, {"tiny": profile}))
    board = json.loads(files["docs/export/tiny.grafana.json"])
    panel = next(p for p in board["panels"] if p["title"] == "rollout/raw_reward")
    # The exact value is drawn, though the band comes first in the profile and a band is drawn first.
    assert [s["value"] for s in panel["fieldConfig"]["defaults"]["thresholds"]["steps"]] == [None, 0.7]
    assert (
        "over 4 steps (not drawn: only the first 4 steps: the chart's axis is time, not step)" in panel["description"]
    )
