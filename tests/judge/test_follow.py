"""judge --follow's findings: which are certain in a live verdict, each reported once.

A run here stops at some step as a live run would between two writes; the findings of its live
verdict (judge(live=True): the last step of each step key unfinished) are those no later record
can change. Then the loop's ends: --idle, --until-step.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest

import run_forms
from conftest import REPO
from judge_fixture import clean_run, judged_profile, judged_project
from metrics_manual.judge.follow import Reported, follow
from metrics_manual.judge.judging import judge, judged_keys
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.follow import RunFollower
from metrics_manual.runs.read import read_run
from metrics_manual.runs.steps import StepRanges
from metrics_manual.runs.values import MAX_STEP

STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return judged_profile(judged_project(tmp_path_factory.mktemp("project")))


def upto(run: run_forms.Series, last: int) -> run_forms.Series:
    return {k: {s: v for s, v in values.items() if s <= last} for k, values in run.items()}


def live_findings(
    profile: ProfileExport,
    run: run_forms.Series,
    tmp: Path,
    excluded: StepRanges | None = None,
    form: str = "dashboard",
) -> set[tuple[str, str | None, int | None]]:
    """(finding, metric or step key, step) of the certain findings of `run` judged live."""
    folder = tmp / f"run-{len(list(tmp.iterdir()))}"
    run_forms.write(form, run, folder)
    read = read_run([folder], STEP_KEYS, keys=judged_keys(profile), renames=profile.renames())
    excluded = excluded or StepRanges()
    verdict = judge(profile, read, exclude_steps=excluded, live=True)
    return {(f.finding, f.metric or f.step_key, f.step) for f in Reported().new(profile, verdict, read, excluded)}


def test_a_value_is_certain_once_its_step_is_finished(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["train/grad_norm"][5] = 9.0
    run["rollout/raw_reward"][5] = math.inf
    assert live_findings(profile, upto(run, 5), tmp_path) == set()  # step 5 is the last: a retry may come
    assert live_findings(profile, upto(run, 6), tmp_path) == {
        ("out_of_range", "train/grad_norm", 5),
        ("not_finite", "rollout/raw_reward", 5),
    }


def test_only_the_first_failing_step_of_an_expectation(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    for step in (2, 3, 7):
        run["train/grad_norm"][step] = 9.0
    run["train/grad_norm"][1] = 3.0  # the window's band (0.5 to 2 in the first 2 steps): expectation 1
    found = live_findings(profile, run, tmp_path)
    assert found == {("out_of_range", "train/grad_norm", 2), ("out_of_range", "train/grad_norm", 1)}


def test_a_missing_value_is_certain_once_a_later_step_is_finished(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    del run["perf/step_time"][4]
    del run["rollout/raw_reward"][4]
    # Step 5 written, not finished: another process may still log its part of step 4.
    assert live_findings(profile, upto(run, 5), tmp_path) == set()
    assert live_findings(profile, upto(run, 6), tmp_path) == {
        ("missing", "perf/step_time", 4),
        ("missing", "rollout/raw_reward", 4),
    }


def test_a_step_with_no_record_at_all_is_one_finding(tmp_path: Path, profile: ProfileExport) -> None:
    run = {k: {s: v for s, v in values.items() if s != 4} for k, values in clean_run().items()}
    found = live_findings(profile, upto(run, 6), tmp_path)
    assert found == {("no_record", "rollout/step", 4), ("no_record", "train/step", 4)}


def test_a_metric_never_logged_is_missing_once_the_run_goes_on(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    del run["train/pg_clipfrac"]
    assert live_findings(profile, upto(run, 1), tmp_path) == set()
    assert live_findings(profile, upto(run, 2), tmp_path) == {("missing", "train/pg_clipfrac", 0)}


def test_a_median_is_certain_once_the_run_passed_its_steps(tmp_path: Path, profile: ProfileExport) -> None:
    """rollout/response_lengths: a median of the first 10 steps, 400 within 10%."""
    run = clean_run()
    run["rollout/response_lengths"] = {s: 600.0 for s in range(11)}
    for key in run:
        run[key].setdefault(10, run[key][9])
    # Step 9, its last, is written and unfinished: a retry of it may still change the median.
    assert ("median", "rollout/response_lengths", None) not in live_findings(profile, upto(run, 9), tmp_path)
    assert ("median", "rollout/response_lengths", None) in live_findings(profile, upto(run, 10), tmp_path)


def test_two_files_that_disagree_are_a_conflict_once_finished(tmp_path: Path, profile: ProfileExport) -> None:
    run = upto(clean_run(), 6)
    other = {"train/grad_norm": dict(run["train/grad_norm"]), "train/ppo_kl": dict(run["train/ppo_kl"])}
    other["train/grad_norm"][3] = 1.5
    folder = tmp_path / "two"
    run_forms.write_dashboard(run, folder / "a")
    run_forms.write_dashboard(other, folder / "b")
    read = read_run([folder], STEP_KEYS, keys=judged_keys(profile))
    verdict = judge(profile, read, live=True)
    found = {(f.finding, f.metric, f.step) for f in Reported().new(profile, verdict, read, StepRanges())}
    assert found == {("conflict", "train/grad_norm", 3)}
    assert not Reported().new(profile, verdict, read, StepRanges([(3, 3)]))  # excluded: said of no step


def test_excluded_steps_give_no_finding(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["train/grad_norm"][3] = 9.0
    assert live_findings(profile, run, tmp_path, StepRanges([(3, 3)])) == set()


def test_findings_are_the_same_in_every_form(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["train/grad_norm"][3] = 9.0
    run["rollout/raw_reward"][2] = math.nan
    del run["perf/step_time"][1]
    want = {
        ("out_of_range", "train/grad_norm", 3),
        ("not_finite", "rollout/raw_reward", 2),
        ("missing", "perf/step_time", 1),
    }
    for form in run_forms.FORMS:
        assert live_findings(profile, run, tmp_path, form=form) == want, form


# --- how it ends ---------------------------------------------------------------------------------


def test_it_ends_after_idle_seconds_without_new_data(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_dashboard(clean_run(), tmp_path / "run")
    follower = RunFollower([tmp_path / "run"], STEP_KEYS, keys=judged_keys(profile))
    verdict, _, why = follow(profile, follower, print, rtol=0.1, excluded=StepRanges(), idle=0.3, poll=0.05)
    assert why == "no new data for 0.3 s"
    assert verdict.summary.failed == verdict.summary.errors == 0


def test_until_step_ends_past_it_and_judges_the_steps_up_to_it(tmp_path: Path, profile: ProfileExport) -> None:
    run = clean_run()
    run["train/pg_clipfrac"][9] = 0.5  # past step 6: not judged
    run_forms.write_dashboard(run, tmp_path / "run")
    follower = RunFollower([tmp_path / "run"], STEP_KEYS, keys=judged_keys(profile))
    verdict, read, why = follow(profile, follower, print, rtol=0.1, excluded=StepRanges(), until_step=6)
    assert why == "every step key finished a step past 6"
    assert verdict.to_json() == judge(profile, read, exclude_steps=StepRanges([(7, MAX_STEP)])).to_json()
    assert verdict.summary.failed == 0 and [(s.first, s.last) for s in verdict.run.excluded_steps] == [(7, MAX_STEP)]


def test_until_step_waits_for_a_later_step_to_be_finished(tmp_path: Path, profile: ProfileExport) -> None:
    run_forms.write_dashboard(upto(clean_run(), 7), tmp_path / "run")
    follower = RunFollower([tmp_path / "run"], STEP_KEYS, keys=judged_keys(profile))
    stopped = threading.Event()
    stop = threading.Timer(0.3, stopped.set)
    stop.start()
    _, _, why = follow(profile, follower, print, rtol=0.1, excluded=StepRanges(), until_step=6, stop=stopped)
    assert why == "stop received"  # step 7 is written, not finished: step 6 may still change


def test_the_judging_page_states_what_is_certain_in_the_codes_words() -> None:
    from metrics_manual.judge import follow as module

    def words(text: str) -> str:
        return " ".join(text.replace("`", "").replace("*", "").split())

    page = words((REPO / "docs" / "judging.md").read_text("utf-8"))
    stated = module.__doc__.split("(docs/judging.md states them in these words):")[1].split("Each is printed once")[0]
    bullets = stated.strip().split("\n- ")
    assert len(bullets) == 6
    for bullet in bullets:
        assert words(bullet.lstrip("- ")) in page, bullet
