"""The W&B CSV's reader: a history exported by pandas' to_csv, its cut rows and its nan cells."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import run_forms
from judge_fixture import clean_run
from metrics_manual.api import judge
from metrics_manual.judge.report_text import text
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import wandb_csv
from metrics_manual.runs.read import read_run
from miles_runs import MILES, STEP_KEYS, bad, miles_profile, read, result


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return miles_profile(tmp_path_factory)


@pytest.mark.parametrize("cut", ["inside the last cell", "a cell short", "after a carriage return"])
def test_a_wandb_csv_cut_in_its_last_row_is_a_warning_never_a_complete_row(
    cut: str, tmp_path: Path, profile: ProfileExport
) -> None:
    whole = (MILES / "healthy/wandb/history.csv").read_bytes()
    rows = whole.splitlines(keepends=True)
    last = rows[-1].rstrip(b"\n")
    assert last.endswith(b",30.4"), last  # perf/step_time at step 99, the last column
    cuts = {
        "inside the last cell": last[:-1],
        "a cell short": last[: last.rindex(b",")],
        "after a carriage return": last + b"\r",
    }
    f = tmp_path / "history.csv"
    f.write_bytes(b"".join(rows[:-1]) + cuts[cut])
    run = read([f], profile)
    if cut == "after a carriage return":  # the row is whole: only its line feed is missing
        assert run.series["perf/step_time"][99] == pytest.approx(30.4) and not run.problems
        return
    warned = [(p.line, p.code.id, p.severity) for p in run.problems]
    assert warned == [(len(rows), "MM505", "warning")]
    assert 99 not in run.series["perf/step_time"] and run.unfinished == {"rollout/step": 99, "train/step": 99}
    j = judge(profile, run)
    assert bad(j) == {} and j.exit_code == 0  # the cut step is unfinished: nothing is missing there


def test_a_wandb_csv_header_cut_is_a_warning(tmp_path: Path, profile: ProfileExport) -> None:
    f = tmp_path / "history.csv"
    f.write_bytes((MILES / "healthy/wandb/history.csv").read_bytes().split(b"\n", 1)[0][:-3])
    run = read([f], profile)
    assert [(p.line, p.code.id) for p in run.problems] == [(1, "MM505")] and run.series == {}


def test_a_wandb_csv_with_na_rep_nan_reads_nan_as_non_finite_values(profile: ProfileExport) -> None:
    # pandas' na_rep="nan" writes nan for NaN and for every key a row did not log.
    f = MILES / "healthy/wandb/history-nan-at-50-na-rep-nan.csv"
    assert b",nan," in f.read_bytes()
    run = read([f], profile)
    assert run.relogged == {} and run.problems == []
    assert math.isnan(run.series["train/grad_norm"][50]) and len(run.series["train/grad_norm"]) == 100
    assert all(
        math.isfinite(v) for k, s in run.series.items() for st, v in s.items() if (k, st) != ("train/grad_norm", 50)
    )
    j = judge(profile, run)
    assert bad(j) == {"train/grad_norm": "error"}
    assert [(p.step, p.value) for p in result(j, "train/grad_norm").failing_steps] == [(50, "NaN")]
    assert "re-logged" not in text(j)


def test_a_nan_cell_never_hides_a_number_at_its_step(tmp_path: Path) -> None:
    f = tmp_path / "h.csv"
    f.write_text(
        "_step,_timestamp,rollout/step,rollout/raw_reward,train/step,train/grad_norm\n"
        "0,1.0,0.0,nan,nan,nan\n"  # the perf call of step 0: no raw_reward
        "1,2.0,0.0,0.5,nan,nan\n"  # the rollout call of step 0
        "2,3.0,1.0,0.6,nan,nan\n"
        "3,4.0,1.0,nan,nan,nan\n"
        "4,5.0,nan,nan,0.0,nan\n"  # grad_norm NaN at train step 0
        "5,6.0,nan,7.0,nan,nan\n",  # a number without its step: a warning
        "utf-8",
    )
    run = read_run([f], STEP_KEYS)
    assert dict(run.series["rollout/raw_reward"].items()) == {0: 0.5, 1: 0.6} and run.relogged == {}
    assert math.isnan(run.series["train/grad_norm"][0])
    assert [(p.line, p.code.id) for p in run.problems] == [(7, "MM507")]
    assert wandb_csv.__doc__ and 'na_rep="nan"' in wandb_csv.__doc__


def test_a_cut_last_line_is_a_warning_in_a_csv(tmp_path: Path, profile: ProfileExport) -> None:
    (path,) = run_forms.write_wandb_csv(clean_run(), tmp_path)
    path.write_bytes(path.read_bytes() + b"20,210.0,17960")
    j = judge(profile, read_run([path], STEP_KEYS))
    assert [p.severity for p in j.problems] == ["warning"] and j.exit_code == 0
