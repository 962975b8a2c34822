"""Issue 29, the runs side: the rules of a merge (docs/judging.md) on runs Miles' own writers wrote.

The runs under tests/fixtures/miles-writers/ were written once by Miles' EventLogger, the dashboard's
MetricStore, CiHistoryBackend, TensorBoard's EventFileWriter and pandas' to_csv (its README says how);
a test reads them as they are, or a copy it cuts or thins. Rules that hold in every form are also
held on runs tests/run_forms.py writes in each form.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

import run_forms
from conftest import REPO
from metrics_manual.api import judge
from metrics_manual.judge.report_text import text
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import collect, tensorboard, wandb_csv
from metrics_manual.runs import steps as run_steps
from metrics_manual.runs.collect import Collector
from miles_runs import MILES, STEP_KEYS, bad, miles_profile, need, read, relogged, result


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return miles_profile(tmp_path_factory)


# --- 1. a resume after a retry ------------------------------------------------------------------

RESUMED = {
    "events in one file": ["resume/one-file/events"],
    "dashboard in one file": ["resume/one-file/dashboard"],
    "W&B CSV in one file": ["resume/one-file/wandb"],
    "events, the resumed process in its own file": ["resume/own-file/first/events", "resume/own-file/resumed/events"],
    "TensorBoard, a file each life": ["resume/own-file/first/tensorboard", "resume/own-file/resumed/tensorboard"],
}


@pytest.mark.parametrize("name", RESUMED)
def test_a_resume_after_a_retry_is_judged_on_the_resumed_record(name: str, profile: ProfileExport) -> None:
    # Step 50: NaN at attempt 0, good at attempt 1; a crash after step 60; the process resumed from the
    # step-40 checkpoint logs steps 41-99 at attempt 0 again, train/grad_norm 99.0 at step 50.
    need("tensorboard" if "TensorBoard" in name else "")
    j = judge(profile, read([MILES / p for p in RESUMED[name]], profile))
    assert bad(j) == {"train/grad_norm": "fail"}, name
    failing = result(j, "train/grad_norm").failing_steps
    assert [(p.step, p.value) for p in failing] == [(50, 99.0)], name
    assert relogged(j, "train/step") == [(41, 60)], name  # step 50 named with the rest
    assert "re-logged (a resumed run; the later record is judged)" in text(j)


def test_a_later_record_supersedes_whatever_its_attempt_and_a_retry_is_not_a_relog() -> None:
    out = Collector(STEP_KEYS)
    out.begin("f")
    out.put("train/x", 5, 1.0)
    out.put("train/x", 6, math.nan)
    out.put("train/x", 6, 2.0, attempt=1)  # a retry: replaces, not named
    out.put("train/x", 7, 3.0)
    out.put("train/x", 6, 99.0)  # a resumed process, attempts from 0 again: replaces, named
    out.put("train/x", 7, 4.0, attempt=2)  # a retry in the resumed process
    out.end()
    merged = out.finish()
    assert dict(merged.series["train/x"].items()) == {5: 1.0, 6: 99.0, 7: 4.0}
    assert merged.relogged == {("f", "train/step"): [6]}


def _part(out: Collector, path: str, span: tuple[float, float] | None, value: float, attempt: int = 0) -> None:
    out.begin(path)
    out.put("train/x", 3, value, attempt)
    if span:
        out.span(*span)
    out.end()


def test_a_file_begun_after_another_ended_is_a_later_life_others_go_by_attempt() -> None:
    # A later life supersedes, whatever the attempts, in either order of the files.
    for order in ((0, 1), (1, 0)):
        out = Collector(STEP_KEYS)
        parts = [("first", (10.0, 20.0), 1.0, 1), ("resumed", (30.0, 40.0), 99.0, 0)]
        for i in order:
            _part(out, *parts[i])
        merged = out.finish()
        assert merged.series["train/x"][3] == 99.0 and merged.conflicts == {}
        assert merged.relogged == {("resumed", "train/step"): [3]}
    # Times that overlap (two processes at once), or none: the higher attempt, else a conflict.
    for span in ((15.0, 40.0), None):
        out = Collector(STEP_KEYS)
        _part(out, "a", (10.0, 20.0), 1.0, 1)
        _part(out, "b", span, 99.0, 0)
        merged = out.finish()
        assert merged.series["train/x"][3] == 1.0 and merged.conflicts == {} and merged.relogged == {}
        out = Collector(STEP_KEYS)
        _part(out, "a", (10.0, 20.0), 1.0)
        _part(out, "b", span, 99.0)
        assert out.finish().conflicts == {"train/x": [(3, "a", "b")]}


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        ("2026-12-01T19:57:28.5Z", 1796155048.5),  # pydantic's datetime, the event log's timestamp
        ("2026-12-01T19:57:28.5", 1796155048.5),  # no zone: UTC
        ("1796155048.5", 1796155048.5),  # a CSV cell
        (1796155048.5, 1796155048.5),  # the dashboard's ts, TensorBoard's wall_time
        ("t", None),
        ("nan", None),
        (10**400, None),
        (True, None),
        (None, None),
    ],
)
def test_a_record_s_time_is_read_from_each_form_s_spelling(raw: object, seconds: float | None) -> None:
    assert collect.seconds(raw) == seconds


def test_a_hidden_folder_in_a_run_s_folder_is_passed_over(tmp_path: Path, profile: ProfileExport) -> None:
    # Miles' checkpoint restore moves the event folder aside as .trash_*, next to the restored one.
    shutil.copytree(MILES / "healthy/events", tmp_path / "dump" / "events")
    shutil.copytree(MILES / "resume/one-file/events", tmp_path / "dump" / ".trash_20261201_195728_0c9f3b2a")
    run = read([tmp_path / "dump"], profile)
    assert run.relogged == {} and run.series["train/grad_norm"][50] == pytest.approx(1.0)
    assert all(".trash" not in p.path for p in run.problems)


# --- 2. lost records ----------------------------------------------------------------------------


def _thinned(n: int = 100) -> run_forms.Series:
    """A healthy run whose every odd train/step record is lost."""
    run = {
        "rollout/raw_reward": {s: 0.5 + 0.002 * s for s in range(n)},
        "rollout/response_lengths": {s: 400.0 + s % 7 for s in range(n)},
        "perf/rollout_time": {s: 20.0 for s in range(n)},
        "perf/step_time": {s: 30.0 for s in range(n)},
        "train/grad_norm": {s: 1.0 for s in range(0, n, 2)},
        "train/ppo_kl": {s: 0.001 for s in range(0, n, 2)},
    }
    return run


def _assert_lost(j: Judgement) -> None:
    assert bad(j) == {"train/grad_norm": "error", "train/ppo_kl": "error"}
    assert "missing at 49 steps it covers" in result(j, "train/grad_norm").reason
    gap = [p for p in j.problems if p.code == "MM514"]
    assert len(gap) == 1 and gap[0].message.startswith("train/step: no record at 49 steps: 1, 3, 5, 7, 9")


@pytest.mark.parametrize("form", run_forms.FORMS)
def test_lost_records_of_a_step_key_miles_logs_every_step_are_missing_steps(
    form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    # No two train/step records in a row anywhere, while rollout/step shows all 100 steps.
    need(form)
    j = judge(profile, read(run_forms.write(form, _thinned(), tmp_path / form), profile))
    _assert_lost(j)


def test_lost_first_records_of_train_step_are_the_run_s_first_steps_missing(
    tmp_path: Path, profile: ProfileExport
) -> None:
    # Every even train/step record lost, step 0 too: judge's first-steps rule counts train/step as the gaps do.
    run = _thinned()
    run["train/grad_norm"] = {s + 1: v for s, v in run["train/grad_norm"].items()}
    run["train/ppo_kl"] = {s + 1: v for s, v in run["train/ppo_kl"].items()}
    j = judge(profile, read(run_forms.write("events", run, tmp_path), profile))
    window = next(r for r in j.results if (r.metric, r.expectation) == ("train/ppo_kl", 1))
    assert window.verdict == "error" and "Miles counts steps from 0" in window.reason, window.reason


def test_lost_records_in_an_event_log_miles_wrote(tmp_path: Path, profile: ProfileExport) -> None:
    for f in (MILES / "healthy/events").iterdir():
        kept = [
            line
            for line in f.read_text("utf-8").splitlines(keepends=True)
            if json.loads(line)["metrics"].get("train/step", 0) % 2 == 0
        ]
        (tmp_path / f.name).write_text("".join(kept), "utf-8")
    _assert_lost(judge(profile, read([tmp_path], profile)))


def test_a_step_key_logged_at_an_interval_has_no_gap_to_tell() -> None:
    # eval/step every --eval-interval rollouts; rollout/step with --wandb-always-use-train-step (4 train
    # steps a rollout): strides the logs do not state. train/step: Miles logs every optimizer step.
    assert run_steps.gaps([0, 10, 20, 30], "eval/step") == [] and run_steps.gaps([0, 4, 8], "rollout/step") == []
    assert run_steps.gaps([0, 2, 4], "train/step") == [range(1, 2), range(3, 4)]
    assert run_steps.counted([0, 2, 4], "train/step") and not run_steps.counted([0, 2, 4], "rollout/step")
    assert run_steps.counted([0, 2, 3], "rollout/step") and not run_steps.counted([7], "train/step")


# --- 3. a W&B CSV cut inside its last cell ------------------------------------------------------


# --- 4. TensorBoard: the scalars plugin named on each tag's first value only -------------------


# --- 5. messages --------------------------------------------------------------------------------


# --- the page states them -----------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_the_judging_page_states_these_rules_in_the_code_s_words() -> None:
    from metrics_manual.runs import dashboard

    page = _words((REPO / "docs" / "judging.md").read_text("utf-8")).lower()
    for doc, words in (
        (run_steps.counted.__doc__, "Miles logs it at every step (EVERY_STEP), or the run logged two of its steps"),
        (wandb_csv.__doc__, "pandas and Python's csv end every row with a newline: a last row without one was cut"),
        (wandb_csv.__doc__, 'with na_rep="nan" pandas writes nan both for NaN and for a key a row lacks: a nan cell'),
        (wandb_csv.__doc__, "elsewhere a NaN wherever no row of the file gives the key a number at that step"),
        (tensorboard.__doc__, "A scalar is a simple_value (torch's SummaryWriter) or a one-number tensor of a tag"),
        (tensorboard.__doc__, "keeps that metadata on each tag's first value only): every value of such a tag is read"),
        (dashboard.__doc__, "Miles writes `step` as the value of the record's `step_key` in its `metrics`"),
        (dashboard.__doc__, "(`tracking.log`); a record where the two differ cannot be placed: an error naming both"),
    ):
        assert _words(words).lower() in _words(doc or "").lower(), words
        assert _words(words).lower() in page, words
    assert "train/step" in run_steps.EVERY_STEP and "train/step is in every_step" in page
    assert "not a dashboard record: its step is 100 but its rollout/step is 0; it was skipped" in page
