"""The dashboard log's reader: a record's `step` and its step key's value in `metrics`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics_manual.api import judge
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.read import read_run
from miles_runs import MILES, STEP_KEYS, miles_profile, read


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return miles_profile(tmp_path_factory)


def test_a_dashboard_record_whose_step_disagrees_names_the_disagreement(profile: ProfileExport) -> None:
    run = read([MILES / "dashboard-step-disagrees"], profile)
    assert [p.code.id for p in run.problems] == ["MM506"] * 20
    assert (
        run.problems[0].message == "not a dashboard record: its step is 100 but its rollout/step is 0; it was skipped"
    )
    assert run.problems[1].message == "not a dashboard record: its step is 100 but its train/step is 0; it was skipped"
    j = judge(profile, run)
    assert j.exit_code == 2 and not any("no record at" in p.message for p in j.problems)


def test_a_dashboard_record_whose_step_agrees_is_read(tmp_path: Path) -> None:
    f = tmp_path / "metrics.jsonl"
    record = {"ts": 1.0, "step_key": "train/step", "step": 4, "metrics": {"train/step": 4.0, "train/grad_norm": 1.5}}
    f.write_text(json.dumps(record) + "\n", "utf-8")
    run = read_run([f], STEP_KEYS)
    assert dict(run.series["train/grad_norm"].items()) == {4: 1.5} and not run.problems
