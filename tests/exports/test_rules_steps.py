"""Alerting rules that know the step: a range for some steps is joined on run_name with the gauge of the
metric's step key, which Miles sets in the same log() call (prometheus_utils.py), after the metrics."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import TINY_CATALOG, TINY_PROFILE, require_tool, run_cli, write_project
from promtool_rules import doc_rules, fired, held, promtool_test, sample

CATALOG = TINY_CATALOG.replace(
    "step_keys: {train: train/step, rollout: rollout/step}",
    "step_keys: {train: train/step, rollout: rollout/step, perf: rollout/step}",
).replace(
    "      - key: train/pg_clipfrac\n",
    "      - key: train/ppo_kl\n        meaning: the KL of the update\n      - key: train/pg_clipfrac\n",
) + (
    "  - id: perf\n    title: Performance\n    metrics:\n"
    "      - {key: perf/sleep_time, meaning: the time the engine sleeps, unit: s}\n"
    "      - {key: perf/train_wait_time, meaning: the wait before training, unit: s}\n"
)
PROFILE = (
    TINY_PROFILE.split("expectations:")[0].replace("steps: 10", "steps: 60")
    + """\
expectations:
  rollout/raw_reward:
    - {kind: band, min: 0.5, max: 0.9, steps: 48}
  train/grad_norm:
    - {kind: band, min: 0.25, max: 4.5}
  train/ppo_kl:
    - {kind: exact, value: 0, at: {step: 0}}
  perf/sleep_time:
    - {kind: median, value: 0.8, steps: 48}
    - {kind: band, min: 1.9, max: 3.7, window: {first: 2}}
  perf/train_wait_time:
    - {kind: presence, at: every_step}
"""
)
REWARD, STEP, KL, TRAIN_STEP = (
    "miles_metric_rollout_raw_reward",
    "miles_metric_rollout_step",
    "miles_metric_train_ppo_kl",
    "miles_metric_train_step",
)


@pytest.fixture
def rules(tmp_path: Path) -> tuple[Path, dict[str, dict[str, Any]]]:
    """The fixture profile's rule file, and its rules by alert name."""
    root = write_project(tmp_path / "p", CATALOG, {"tiny": PROFILE})
    out = tmp_path / "rules.yml"
    result = run_cli("export", "--root", str(root), "--profile", "tiny", "--format", "prometheus", "-o", str(out))
    assert result.returncode == 0, result.stderr
    return out, {r["alert"]: r for r in doc_rules(out)}


def test_a_range_for_some_steps_is_joined_with_its_step_gauge(rules: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    rule_file, by_name = rules
    assert {name: (r["expr"], r.get("for")) for name, r in by_name.items()} == {
        "MilesRolloutRawRewardOutOfRangeInFirst48Steps": (
            f"({REWARD} < 0.5 or {REWARD} > 0.9 or {REWARD} != {REWARD}) and on(run_name) {STEP} < 48",
            "1m",
        ),
        "MilesTrainGradNormOutOfRange": (
            "miles_metric_train_grad_norm < 0.25 or miles_metric_train_grad_norm > 4.5 "
            "or miles_metric_train_grad_norm != miles_metric_train_grad_norm",
            None,
        ),
        "MilesTrainPpoKlNotExpectedAtStep0": (f"({KL} != 0) and on(run_name) {TRAIN_STEP} == 0", "1m"),
        "MilesPerfSleepTimeOutOfRangeInFirst2Steps": (
            "(miles_metric_perf_sleep_time < 1.9 or miles_metric_perf_sleep_time > 3.7 "
            "or miles_metric_perf_sleep_time != miles_metric_perf_sleep_time) and on(run_name) "
            f"{STEP} < 2",  # perf/ keys count rollout steps (the catalog's step_keys)
            "1m",
        ),
    }
    # What no rule judges honestly is listed in the head, each with why.
    text = rule_file.read_text("utf-8")
    assert [line for line in text.splitlines() if line.startswith("# - ")] == [
        "# - perf/sleep_time: 0.8 s median of 48 steps (a median over steps: Prometheus keeps scrapes, not steps "
        "(a longer step would count more), and the median is known only after its last step)",
        "# - perf/train_wait_time: logged in every step (presence: a gauge keeps its last value when a step logs "
        "nothing, so a missing log looks logged)",
    ]


@pytest.mark.promtool
def test_a_band_for_the_first_48_steps_fires_at_step_10_not_at_step_100(
    rules: tuple[Path, dict[str, dict[str, Any]]],
) -> None:
    promtool = require_tool("promtool")
    rule_file, by_name = rules
    rule = by_name["MilesRolloutRawRewardOutOfRangeInFirst48Steps"]
    series = [
        {"series": f'{REWARD}{{run_name="at-10"}}', "values": held(0.2)},
        {"series": f'{STEP}{{run_name="at-10"}}', "values": held(10)},
        {"series": f'{REWARD}{{run_name="at-100"}}', "values": held(0.2)},
        {"series": f'{STEP}{{run_name="at-100"}}', "values": held(100)},
    ]

    def test(expected: list[dict[str, Any]]) -> dict[str, Any]:
        check = [{"eval_time": "2m", "alertname": rule["alert"], "exp_alerts": expected}]
        return {"interval": "1m", "input_series": series, "alert_rule_test": check}

    ran = promtool_test(promtool, rule_file, [test([fired(rule, "at-10", 0.2)])])
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # Expecting both runs to fire (the step ignored) fails: the run at step 100 is silent.
    both = test([fired(rule, "at-10", 0.2), fired(rule, "at-100", 0.2)])
    assert promtool_test(promtool, rule_file, [both]).returncode != 0


@pytest.mark.promtool
def test_ppo_kl_at_step_0_fires_and_at_step_5_does_not(rules: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    promtool = require_tool("promtool")
    rule_file, by_name = rules
    rule = by_name["MilesTrainPpoKlNotExpectedAtStep0"]
    series = [
        {"series": f'{KL}{{run_name="step-0"}}', "values": held(0.01)},
        {"series": f'{TRAIN_STEP}{{run_name="step-0"}}', "values": held(0)},
        {"series": f'{KL}{{run_name="step-5"}}', "values": held(0.01)},
        {"series": f'{TRAIN_STEP}{{run_name="step-5"}}', "values": held(5)},
        {"series": f'{KL}{{run_name="zero"}}', "values": held(0)},
        {"series": f'{TRAIN_STEP}{{run_name="zero"}}', "values": held(0)},
    ]
    check = [
        # Pending for its `for: 1m` at the first evaluation, firing from the next on.
        {"eval_time": "0m", "alertname": rule["alert"], "exp_alerts": []},
        {"eval_time": "1m", "alertname": rule["alert"], "exp_alerts": [fired(rule, "step-0", 0.01)]},
        {"eval_time": "3m", "alertname": rule["alert"], "exp_alerts": [fired(rule, "step-0", 0.01)]},
    ]
    ran = promtool_test(promtool, rule_file, [{"interval": "1m", "input_series": series, "alert_rule_test": check}])
    assert ran.returncode == 0, ran.stdout + ran.stderr


# A run as Prometheus scrapes it, one scrape a minute, three scrapes a step. Each step's first scrape
# catches Miles in the middle of its log() call: the step's metrics are set, its step key not yet.
SCRAPES_PER_STEP = 3
STEPS = 52


def in_range(step: int) -> dict[str, float]:
    """Values in range at every step a range covers, and outside past its steps, as a learning run goes."""
    return {
        REWARD: 0.6 if step < 48 else 0.95,  # above the band once its 48 steps are over
        "miles_metric_train_grad_norm": 1.0,
        KL: 0.0 if step == 0 else 0.003,  # 0 only at step 0
        "miles_metric_perf_sleep_time": 2.5 if step < 2 else 0.8,  # the first two steps wake a cold engine
        "miles_metric_perf_train_wait_time": 3.0,
    }


def scraped_run(values: Any, steps: int = STEPS) -> list[dict[str, str]]:
    samples: dict[str, list[str]] = {}
    for step in range(steps):
        for scrape in range(SCRAPES_PER_STEP):
            for gauge, v in values(step).items():
                samples.setdefault(gauge, []).append(sample(v))
            shown = step - 1 if scrape == 0 else step  # the step key is set last
            for gauge in (STEP, TRAIN_STEP):
                samples.setdefault(gauge, []).append(sample(shown if shown >= 0 else None))
    return [{"series": f'{g}{{run_name="run"}}', "values": " ".join(v)} for g, v in samples.items()]


@pytest.mark.promtool
def test_an_in_range_run_is_silent_at_every_scrape(rules: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    promtool = require_tool("promtool")
    rule_file, by_name = rules
    checked = subprocess.run([promtool, "check", "rules", str(rule_file)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    minutes = STEPS * SCRAPES_PER_STEP
    check = [{"eval_time": f"{t}m", "alertname": name, "exp_alerts": []} for t in range(minutes) for name in by_name]
    test = {"interval": "1m", "input_series": scraped_run(in_range), "alert_rule_test": check}
    ran = promtool_test(promtool, rule_file, [test])
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # The half-done log() calls are real in this run: without `for`, the scrape that pairs step 1's
    # ppo_kl with step 0 (and step 2's sleep time with step 1, step 48's reward with step 47) fires.
    no_wait = [{k: v for k, v in r.items() if k != "for"} for r in doc_rules(rule_file)]
    rule_file.write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": no_wait}]}, sort_keys=False), "utf-8")
    failed = promtool_test(promtool, rule_file, [test])
    assert failed.returncode != 0
    for name in (
        "MilesTrainPpoKlNotExpectedAtStep0",
        "MilesPerfSleepTimeOutOfRangeInFirst2Steps",
        "MilesRolloutRawRewardOutOfRangeInFirst48Steps",
    ):
        assert name in failed.stdout + failed.stderr


@pytest.mark.promtool
def test_a_run_that_leaves_its_range_is_caught_at_its_step(rules: tuple[Path, dict[str, dict[str, Any]]]) -> None:
    """The same run, with the reward out of its band at step 10 only and a NaN gradient norm at step 20."""
    promtool = require_tool("promtool")
    rule_file, by_name = rules

    def values(step: int) -> dict[str, float]:
        v = in_range(step)
        if step == 10:
            v[REWARD] = 0.3
        if step == 20:
            v["miles_metric_train_grad_norm"] = float("nan")
        return v

    reward = by_name["MilesRolloutRawRewardOutOfRangeInFirst48Steps"]
    grad = by_name["MilesTrainGradNormOutOfRange"]
    at = {step: step * SCRAPES_PER_STEP for step in (10, 11, 20, 21)}  # each step's first scrape
    check = [
        {"eval_time": f"{at[10]}m", "alertname": reward["alert"], "exp_alerts": []},  # pending
        {"eval_time": f"{at[10] + 1}m", "alertname": reward["alert"], "exp_alerts": [fired(reward, "run", 0.3)]},
        {"eval_time": f"{at[10] + 2}m", "alertname": reward["alert"], "exp_alerts": [fired(reward, "run", 0.3)]},
        {"eval_time": f"{at[11]}m", "alertname": reward["alert"], "exp_alerts": []},
        {"eval_time": f"{at[20] - 1}m", "alertname": grad["alert"], "exp_alerts": []},
        {"eval_time": f"{at[20]}m", "alertname": grad["alert"], "exp_alerts": [fired(grad, "run", float("nan"))]},
        {"eval_time": f"{at[21]}m", "alertname": grad["alert"], "exp_alerts": []},
    ]
    test = {"interval": "1m", "input_series": scraped_run(values), "alert_rule_test": check}
    ran = promtool_test(promtool, rule_file, [test])
    assert ran.returncode == 0, ran.stdout + ran.stderr


@pytest.mark.promtool
def test_an_infinity_past_an_open_side_fires(tmp_path: Path) -> None:
    """`at least 0.5` holds for any finite value above it, not for +Inf (judge calls it not a finite number)."""
    promtool = require_tool("promtool")
    profile = (
        TINY_PROFILE.split("expectations:")[0]
        + "expectations:\n  rollout/raw_reward: [{kind: band, min: 0.5}]\n  train/grad_norm: [{kind: band, max: 4.5}]\n"
    )
    root = write_project(tmp_path / "p", TINY_CATALOG, {"tiny": profile})
    rule_file = tmp_path / "rules.yml"
    assert (
        run_cli(
            "export", "--root", str(root), "--profile", "tiny", "--format", "prometheus", "-o", str(rule_file)
        ).returncode
        == 0
    )
    reward, grad = doc_rules(rule_file)
    series = [
        {"series": f'{REWARD}{{run_name="inf"}}', "values": "Inf Inf"},
        {"series": f'{REWARD}{{run_name="big"}}', "values": "1e300 1e300"},
        {"series": 'miles_metric_train_grad_norm{run_name="inf"}', "values": "-Inf -Inf"},
        {"series": 'miles_metric_train_grad_norm{run_name="big"}', "values": "-1e300 -1e300"},
    ]
    check = [
        {"eval_time": "1m", "alertname": reward["alert"], "exp_alerts": [fired(reward, "inf", math.inf)]},
        {"eval_time": "1m", "alertname": grad["alert"], "exp_alerts": [fired(grad, "inf", -math.inf)]},
    ]
    ran = promtool_test(promtool, rule_file, [{"interval": "1m", "input_series": series, "alert_rule_test": check}])
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_key_without_a_step_key_is_refused_before_any_export(tmp_path: Path) -> None:
    # A range of some steps of such a key could never be placed: validate refuses the catalog (MM117),
    # so no export has to leave its rule out.
    catalog = TINY_CATALOG + "  - id: other\n    title: Other\n    metrics:\n      - {key: other/x, meaning: m}\n"
    profile = (
        TINY_PROFILE.split("expectations:")[0]
        + "expectations:\n  other/x: [{kind: band, min: 0, max: 1, steps: 5}, {kind: band, min: 0, max: 2}]\n"
    )
    root = write_project(tmp_path / "p", catalog, {"tiny": profile})
    result = run_cli("export", "--root", str(root), "--profile", "tiny", "--format", "prometheus")
    assert result.returncode == 2 and result.stdout == ""
    assert "its namespace 'other' has no step key" in result.stderr and "[MM117]" in result.stderr
