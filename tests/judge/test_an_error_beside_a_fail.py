"""An expectation that is an error (a value that is not a finite number, a missing step) still names
the steps where the values read leave its range: in the result's failing steps and reason, in text,
JSON and the report (issue 35, case 3). `--follow` prints them too: tests/judge/test_follow_forms.py.

The run is tests/fixtures/miles-lives/error-then-fail/, written by Miles' own event logger:
train/grad_norm NaN (null) at step 5 and 9.7 at step 15.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import run_forms
from conftest import REPO, run_cli
from judge_fixture import CATALOG, PROFILE, clean_run, judged_profile, judged_project
from metrics_manual.judge.judging import judge, judged_keys
from metrics_manual.judge.report_text import render
from metrics_manual.judge.verdict import Judgement, Result
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.read import read_run

RUN = REPO / "tests" / "fixtures" / "miles-lives" / "error-then-fail" / "events"
STEP_KEYS = run_forms.STEP_KEYS
BESIDES = "; the values read fail it too: "


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("beside") / "p", CATALOG, PROFILE)


@pytest.fixture(scope="module")
def profile(project: Path) -> ProfileExport:
    return judged_profile(project)


def judged(paths: list[Path], profile: ProfileExport) -> Judgement:
    return judge(profile, read_run(paths, STEP_KEYS, keys=judged_keys(profile)))


def result(j: Judgement, metric: str, i: int = 0) -> Result:
    return next(r for r in j.results if (r.metric, r.expectation) == (metric, i))


def test_an_error_names_the_out_of_range_steps_after_it(profile: ProfileExport) -> None:
    r = result(judged([RUN], profile), "train/grad_norm")
    assert r.verdict == "error" and r.failing_count == 2
    assert [(p.step, p.value) for p in r.failing_steps] == [(5, "NaN"), (15, 9.7)]
    assert r.reason == (
        "not a finite number at 1 step: step 5: NaN; the values read fail it too: max 9.7 at step 15, min 1 at "
        "step 0; outside at 1 of 20 steps: step 15: 9.7"
    )
    window = result(judged([RUN], profile), "train/grad_norm", 1)  # its first 2 steps: in range there
    assert window.verdict == "error" and BESIDES not in window.reason


def test_the_fails_beside_an_error_are_in_text_and_json(profile: ProfileExport) -> None:
    j = judged([RUN], profile)
    [line] = [line for line in render(j, "text").splitlines() if line.startswith("ERROR train/grad_norm: expected 0.1")]
    assert "step 5: NaN; the values read fail it too:" in line and "outside at 1 of 20 steps: step 15: 9.7" in line
    [out] = [r for r in json.loads(render(j, "json"))["results"] if r["metric"] == "train/grad_norm"][:1]
    assert [(p["step"], p["value"]) for p in out["failing_steps"]] == [(5, "NaN"), (15, 9.7)]


def test_the_report_rings_the_fails_beside_an_error(tmp_path: Path, project: Path) -> None:
    out = tmp_path / "r.html"
    run_cli("judge", "--profile", "judged", str(RUN), "--report", str(out), cwd=project)
    grad = out.read_text("utf-8").split('id="m-train-grad_norm"', 1)[1].split("</section>", 1)[0]
    assert 'class="mm-failing" data-run="run" data-step="15"' in grad


@pytest.mark.parametrize("kind", ["missing", "presence"])
def test_a_missing_step_hides_no_fail_either(kind: str, tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    if kind == "missing":  # a band's error (a step missing) beside its fail (step 8 out of range)
        del run["train/grad_norm"][3]
        run["train/grad_norm"][8] = 9.0
        r = result(judged(run_forms.write_events(run, tmp_path), profile), "train/grad_norm")
        assert r.verdict == "error" and [(p.step, p.value) for p in r.failing_steps] == [(3, None), (8, 9.0)]
    else:  # presence's error (a NaN) beside its own fail (a step missing)
        run["perf/step_time"][2] = float("nan")
        del run["perf/step_time"][6]
        r = result(judged(run_forms.write_events(run, tmp_path), profile), "perf/step_time")
        assert r.verdict == "error" and [(p.step, p.value) for p in r.failing_steps] == [(2, "NaN"), (6, None)]
        assert r.reason.endswith("the values read fail it too: not logged at 1 of 10 steps: step 6")
