"""The event log's rules for a metric line, read by one record's step keys: where each value goes."""

from __future__ import annotations

import json
import math
from pathlib import Path

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
