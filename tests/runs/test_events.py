"""The event log's reader: a metric line's step keys place its values; attempts, null, other events."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import run_forms
from judge_fixture import clean_run, judged_profile, judged_project
from metrics_manual.api import judge
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.read import read_run

STEP_KEYS = {"train": "train/step", "rollout": "rollout/step"}
KEYS = ["train/loss", "train/grad_norm", "rollout/raw_reward"]


def _line(metrics: dict, attempt: int | None = None) -> str:
    return json.dumps({"timestamp": "t", "source": {}, "type": "metric", "attempt": attempt, "metrics": metrics})


LINES = [
    _line({"train/step": 1, "train/loss": 0.5, "train/grad_norm": None, "rollout/raw_reward": 2, "x/y": 1}),
    _line({"train/step": "one", "train/loss": 9.0}),  # no step: the record is spoiled
    _line({"train/step": 2, "train/loss": "high", "train/grad_norm": 3}),
    _line({"train/step": 3, "train/loss": 7.5}, attempt=2),
    _line({"train/step": 3, "train/loss": 8.5}, attempt=1),  # later, at a lower attempt: a resumed process's
    _line({"rollout/step": 4, "train/loss": 1.5, "rollout/raw_reward": 0.25}),
]


def test_each_value_goes_to_its_step_keys_step(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(LINES) + "\n", "utf-8")
    run = read_run([path], STEP_KEYS, "events", keys=KEYS)
    series = {k: dict(v.items()) for k, v in run.series.items()}
    assert series["train/loss"][1] == 0.5 and series["train/loss"][3] == 8.5
    assert run.relogged == {(str(path), "train/step"): [3]}
    assert math.isnan(series["train/loss"][2]) and run.invalid["train/loss"] == {2: "'high'"}
    assert math.isnan(series["train/grad_norm"][1]) and series["train/grad_norm"][2] == 3.0
    assert type(series["train/grad_norm"][2]) is float
    assert series["rollout/raw_reward"] == {4: 0.25}  # at step 1 it had no rollout/step
    assert sorted(series["train/step"]) == [1, 2, 3] and sorted(series["rollout/step"]) == [4]
    assert 4 not in series["train/loss"] and set(series["train/loss"]) == {1, 2, 3}
    assert sorted(run.unread) == ["x/y"]
    assert [(p.line, p.severity) for p in run.problems] == [
        (1, "warning"),
        (2, "error"),
        (3, "warning"),
        (6, "warning"),
    ]
    messages = [p.message for p in run.problems]
    assert "rollout/raw_reward is logged without its step key rollout/step (with train/step)" in messages[0]
    assert "train/step is 'one', not a step" in messages[1]
    assert "train/loss: not a number at step 2" in messages[2]
    assert "train/loss is logged without its step key train/step (with rollout/step)" in messages[3]


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return judged_profile(judged_project(tmp_path_factory.mktemp("events") / "p"))


def bad(j: Judgement) -> dict[tuple[str, int], str]:
    return {(r.metric, r.expectation): r.verdict for r in j.results if r.verdict != "pass"}


def _steps() -> dict[str, str]:
    return run_forms.STEP_KEYS


def test_the_last_attempt_wins_in_the_event_log(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_events(clean_run(), tmp_path / "ev", retry_step=3)
    # A stale line of the first attempt in another process's file written at the same time (a later line
    # of the same file would be a resumed process's, which supersedes: the rules of a merge).
    stale = {
        "timestamp": "2026-11-30T01:00:03Z",
        "source": {"component": "actor"},
        "type": "metric",
        "rollout_id": None,
        "attempt": 0,
        "metrics": {"train/step": 3, "train/grad_norm": 99.0},
    }
    (tmp_path / "ev" / "actor_cell1_rank0.jsonl").write_text(json.dumps(stale) + "\n", "utf-8")
    read = read_run([tmp_path / "ev"], {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"})
    assert read.series["train/grad_norm"][3] == pytest.approx(1.9)
    assert bad(judge(profile, read)) == {}


def test_null_in_the_event_log_is_a_non_finite_value(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["train/grad_norm"][2] = math.inf
    files = run_forms.write_events(run, tmp_path / "ev")
    assert any(b'"train/grad_norm":null' in f.read_bytes() for f in files)
    j = judge(profile, read_run(files, {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}))
    r = next(r for r in j.results if (r.metric, r.expectation) == ("train/grad_norm", 0))
    assert r.verdict == "error" and [(p.step, p.value) for p in r.failing_steps] == [(2, "NaN")]


def test_a_metric_event_whose_type_comes_late_is_still_read(tmp_path: Path, profile: ProfileExport) -> None:
    files = run_forms.write_events(clean_run(), tmp_path / "ev")
    late = {
        "metrics": {"train/step": 3, "train/grad_norm": 9.5, "pad": "x" * 5000},
        "attempt": 2,
        "type": "metric",
        "timestamp": "2026-11-30T01:00:00Z",
        "source": {"component": "actor"},
    }
    with files[-1].open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(late) + "\n")
        # A large non-metric event that merely mentions "metric" is skipped.
        fh.write(
            json.dumps(
                {
                    "timestamp": "t",
                    "source": {},
                    "type": "witness",
                    "note": '"metric"',
                    "metrics": {"train/step": 4, "train/grad_norm": 1e9},
                }
            )
            + "\n"
        )
    j = judge(profile, read_run(files, _steps()))
    assert bad(j) == {("train/grad_norm", 0): "fail"}
    assert [
        p.step for r in j.results if r.metric == "train/grad_norm" and r.verdict == "fail" for p in r.failing_steps
    ] == [3]
