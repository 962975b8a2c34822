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
from judge_fixture import judged_profile, judged_project, profile_head
from metrics_manual.api import judge
from metrics_manual.judge.judging import judged_keys
from metrics_manual.judge.report_text import text
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import collect, tensorboard, wandb_csv
from metrics_manual.runs import steps as run_steps
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.read import Run, read_run

MILES = REPO / "tests" / "fixtures" / "miles-writers"
STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}

CATALOG = """\
title: Metrics
code: {repository: example/miles, branch: main, commit: 31f1ca96}
step_keys: {train: train/step, rollout: rollout/step, perf: rollout/step}
sections:
  - id: rollout
    title: Rollout
    metrics:
      - {key: rollout/raw_reward, meaning: the mean reward}
      - {key: rollout/response_lengths, meaning: the mean answer length, unit: tokens}
  - id: training
    title: Training
    metrics:
      - {key: train/grad_norm, meaning: the gradient norm}
      - {key: train/ppo_kl, meaning: the k1 KL between old and new policy}
  - id: perf
    title: Performance
    metrics:
      - {key: perf/rollout_time, meaning: seconds of generation, unit: s}
      - {key: perf/step_time, meaning: seconds per step, unit: s}
"""

PROFILE = (
    profile_head(steps=100)
    + """\
  rollout/raw_reward:
    - {kind: band, min: 0.4, max: 0.8}
  rollout/response_lengths:
    - {kind: band, min: 350, max: 450}
  train/grad_norm:
    - {kind: band, min: 0.5, max: 5}
  train/ppo_kl:
    - {kind: band, min: 0, max: 0.01}
    - {kind: band, min: 0, max: 0.01, window: {first: 2}}
  perf/rollout_time:
    - {kind: band, min: 15, max: 25}
  perf/step_time:
    - {kind: presence, at: every_step}
"""
)


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return judged_profile(judged_project(tmp_path_factory.mktemp("merge") / "p", CATALOG, PROFILE))


def read(paths: list[Path], profile: ProfileExport) -> Run:
    return read_run(paths, STEP_KEYS, keys=judged_keys(profile))


def bad(j: Judgement) -> dict[str, str]:
    return {r.metric: r.verdict for r in j.results if r.verdict != "pass"}


def result(j: Judgement, metric: str):  # noqa: ANN201
    return next(r for r in j.results if r.metric == metric)


def relogged(j: Judgement, step_key: str) -> list[tuple[int, int]]:
    """The spans of `step_key` named re-logged, over every file."""
    steps = {
        s
        for r in j.run.relogged
        if r.step_key == step_key
        for span in r.steps
        for s in range(span.first, span.last + 1)
    }
    return [(a, b) for a, b in run_steps.StepRanges.of(sorted(steps)).spans()]


def need(form: str) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard", reason="pip install 'metrics-manual[tensorboard]'")


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


def test_a_ci_history_of_a_resumed_process_cannot_be_ordered_and_is_a_conflict(profile: ProfileExport) -> None:
    # CiHistoryBackend writes no time: its resumed process's file (a new pid-uuid.jsonl) is not known to be later.
    paths = [MILES / "resume/own-file/first/ci-history", MILES / "resume/own-file/resumed/ci-history"]
    j = judge(profile, read(paths, profile))
    assert bad(j)["train/grad_norm"] == "error" and j.exit_code != 0
    reason = result(j, "train/grad_norm").reason
    files = [f for p in paths for f in p.iterdir()]
    assert len(files) == 2 and "two files disagree at 20 steps" in reason and all(str(f) in reason for f in files)


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


# --- 4. TensorBoard: the scalars plugin named on each tag's first value only -------------------


def test_tensorboard_values_after_a_tag_s_first_are_read(profile: ProfileExport) -> None:
    need("tensorboard")
    j = judge(profile, read([MILES / "tensorboard-tf"], profile))
    assert bad(j) == {} and j.exit_code == 0
    grad = result(j, "train/grad_norm")
    assert grad.steps_judged == 100
    run = read([MILES / "tensorboard-tf"], profile)
    assert len(run.series["train/grad_norm"]) == 100 and run.series["train/grad_norm"][19] == pytest.approx(1.09)


def test_a_tensor_of_a_tag_first_named_by_another_plugin_is_not_a_scalar(tmp_path: Path) -> None:
    need("tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.plugins.scalar.summary_v2 import scalar_pb
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    writer = EventFileWriter(str(tmp_path))
    for step in range(3):
        for tag, plugin in (("train/grad_norm", "scalars"), ("train/hist", "histograms")):
            summary = scalar_pb(tag, 1.0 + step)
            summary.value[0].metadata.plugin_data.plugin_name = plugin
            if step:  # as TensorFlow's writer: the metadata on the first value only
                summary.value[0].ClearField("metadata")
            writer.add_event(event_pb2.Event(step=step, wall_time=1796000000.0 + step, summary=summary))
    writer.add_event(event_pb2.Event(step=3, summary=summary_pb2.Summary()))
    writer.close()
    run = read_run([tmp_path], STEP_KEYS)
    assert dict(run.series["train/grad_norm"].items()) == {0: 1.0, 1: 2.0, 2: 3.0}
    assert "train/hist" not in run.series and not run.problems
    assert tensorboard.__doc__ and "first value" in tensorboard.__doc__


# --- 5. messages --------------------------------------------------------------------------------


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
