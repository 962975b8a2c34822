"""judge --follow on every form that grows: the findings as the run writes, the verdict of judge at the end.

A writer thread writes a run into a live folder piece by piece, each form as Miles writes it
(tests/growing.py: appended lines and records cut anywhere, the CI history rewritten atomically);
`follow` reads it in the test's thread and ends when the writer is done. Its verdict must equal
judge's on the same files afterwards, and its findings must be the run's faults, each once.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import run_forms
from conftest import REPO
from growing import GROWING_FORMS, Piece, pieces, play
from growing import lives as grown
from judge_fixture import clean_run, judged_profile, judged_project
from metrics_manual.judge.follow import LiveFinding, Reported, follow
from metrics_manual.judge.judging import judge, judged_keys
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.follow import RunFollower
from metrics_manual.runs.read import read_run
from metrics_manual.runs.steps import StepRanges

STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    return judged_profile(judged_project(tmp_path_factory.mktemp("project")))


def faulty_run() -> run_forms.Series:
    run = clean_run()
    run["train/grad_norm"][4] = 7.2  # out of its band at a step the run goes past
    run["rollout/raw_reward"][6] = math.nan
    del run["perf/step_time"][3]  # missing at a step the run goes past
    run["train/pg_clipfrac"][9] = 0.5  # out of range at the last step: certain only at the end
    return run


def followed(
    profile: ProfileExport, form: str, run: run_forms.Series, tmp: Path, chunk: int = 97
) -> tuple[list[LiveFinding], str, Path]:
    """Follow `run` growing in `form`; the findings, the verdict's JSON, and the live folder."""
    live = tmp / "live"
    found, verdict = follow_writes(profile, pieces(form, run, tmp / "src", live, chunk), live)
    return found, verdict, live


def follow_writes(profile: ProfileExport, writes: Iterator[Piece], live: Path) -> tuple[list[LiveFinding], str]:
    """Follow `live` while a writer thread makes `writes`; the findings and the verdict's JSON."""
    live.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    error: list[BaseException] = []

    def writer() -> None:
        try:
            play(writes, pause=0.002)
        except BaseException as exc:  # the test fails on it, after follow ends
            error.append(exc)
        finally:
            stop.set()

    follower = RunFollower([live], STEP_KEYS, keys=judged_keys(profile), renames=profile.renames())
    grew = []  # the polls that read something: the run was read while it grew, not once at the end
    poll = follower.poll
    follower.poll = lambda: grew.append(poll()) or grew[-1]  # type: ignore[method-assign]
    found: list[LiveFinding] = []
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        verdict, _, why = follow(profile, follower, found.append, rtol=0.1, excluded=StepRanges(), stop=stop, poll=0.01)
    finally:
        thread.join()
        assert not error, error  # the writer's own failure first
    assert why == "stop received"
    assert sum(grew) >= 3, grew
    return found, verdict.to_json()


def judged_after(profile: ProfileExport, live: Path) -> str:
    run = read_run([live], STEP_KEYS, keys=judged_keys(profile), renames=profile.renames())
    return judge(profile, run).to_json()


@pytest.mark.parametrize("form", GROWING_FORMS)
def test_the_verdict_at_the_end_is_judges_on_the_same_files(form: str, tmp_path: Path, profile: ProfileExport) -> None:
    found, verdict, live = followed(profile, form, faulty_run(), tmp_path)
    assert verdict == judged_after(profile, live)
    assert '"verdict": "fail"' in verdict and '"verdict": "error"' in verdict


MILES_WRITERS = REPO / "tests" / "fixtures" / "miles-writers"


@pytest.mark.parametrize(
    ("root", "lives"),
    [
        ("healthy/events", ["."]),
        ("healthy/dashboard", ["."]),
        ("healthy/ci-history", ["."]),
        ("healthy/tensorboard", ["."]),
        ("tensorboard-tf", ["."]),
        ("resume/one-file/events", ["."]),  # a retried step, then a process resumed into the same files
        ("resume/one-file/dashboard", ["."]),
        ("resume/own-file", ["first", "resumed"]),  # the resumed process in files of its own
    ],
)
def test_files_of_miles_own_writers_growing_give_judges_verdict(
    root: str, lives: list[str], tmp_path: Path, profile: ProfileExport
) -> None:
    base = MILES_WRITERS / root
    live = tmp_path / "live"
    writes = (w for life in lives for w in grown([base / life], live / life, chunk=1009))
    _, verdict = follow_writes(profile, writes, live)
    assert verdict == judged_after(profile, live)
    assert json.loads(verdict)["run"]["steps"]["train/step"]["last"] == 99


@pytest.mark.parametrize("root", ["healthy", "resume"])
def test_consoles_of_miles_own_logging_growing_give_judges_verdict(
    root: str, tmp_path: Path, profile: ProfileExport
) -> None:
    # tests/fixtures/miles-console: the driver's console and the actors' files, or a first and a resumed life.
    live = tmp_path / "live"
    _, verdict = follow_writes(profile, grown([REPO / "tests" / "fixtures" / "miles-console" / root], live, 4099), live)
    assert verdict == judged_after(profile, live)
    assert json.loads(verdict)["run"]["steps"]["train/step"]["last"] == 99


@pytest.mark.parametrize("form", GROWING_FORMS)
def test_each_fault_is_found_once_and_the_last_step_only_at_the_end(
    form: str, tmp_path: Path, profile: ProfileExport
) -> None:
    found, _, _ = followed(profile, form, faulty_run(), tmp_path)
    seen = [(f.finding, f.metric, f.step) for f in found]
    assert sorted(seen, key=str) == sorted(
        [
            ("out_of_range", "train/grad_norm", 4),
            ("not_finite", "rollout/raw_reward", 6),
            ("missing", "perf/step_time", 3),
            ("out_of_range", "train/pg_clipfrac", 9),
        ],
        key=str,
    ), [f.message for f in found]
    # Step 9 is the run's last: unfinished while the run writes, so its fault comes with the verdict.
    assert seen[-1] == ("out_of_range", "train/pg_clipfrac", 9)
    grad = next(f for f in found if f.metric == "train/grad_norm")
    assert grad.value == pytest.approx(7.2) and grad.expectation == 0 and grad.step_key == "train/step"
    assert grad.message.startswith("train/grad_norm at train/step 4: 7.2; expected 0.1 to 5 per step")


def test_a_clean_run_followed_finds_nothing_and_passes(tmp_path: Path, profile: ProfileExport) -> None:
    found, verdict, live = followed(profile, "events", clean_run(), tmp_path)
    assert found == []
    assert verdict == judged_after(profile, live)
    assert '"fail": 0' in verdict and '"error": 0' in verdict


def test_a_cut_last_line_is_waited_for_then_said_at_the_end(tmp_path: Path, profile: ProfileExport) -> None:
    """Pieces of 23 bytes cut nearly every line while it is read: nothing is said of it; a file that
    ends inside a line at the end is a warning of the verdict, and of the findings, as judge says it."""
    run = clean_run()
    live = tmp_path / "live"
    found, verdict, _ = followed(profile, "dashboard", run, tmp_path, chunk=23)
    assert found == []
    with (live / "metrics.jsonl").open("ab") as fh:
        fh.write(b'{"ts": 1, "step_key": "rollout/step", "step": 10, "metr')
    follower = RunFollower([live], STEP_KEYS, keys=judged_keys(profile), renames=profile.renames())
    stop = threading.Event()
    stop.set()
    late: list[LiveFinding] = []
    result, _, _ = follow(profile, follower, late.append, rtol=0.1, excluded=StepRanges(), stop=stop)
    assert result.to_json() == judged_after(profile, live)
    assert [(f.finding, f.problem.code if f.problem else None) for f in late] == [("problem", "MM505")]


def test_a_corrupt_line_is_said_when_read(tmp_path: Path, profile: ProfileExport) -> None:
    (path,) = run_forms.write_dashboard(clean_run(), tmp_path / "src")
    lines = path.read_bytes().splitlines(keepends=True)
    live = tmp_path / "live"
    live.mkdir()
    follower = RunFollower([live], STEP_KEYS, keys=judged_keys(profile))
    (live / "metrics.jsonl").write_bytes(b"".join(lines[:3]) + b'{"ts": 1, "step_key": oops}\n')
    assert follower.poll()
    run = follower.snapshot()
    reported = Reported()
    new = reported.new(profile, judge(profile, run, live=True), run, StepRanges())
    where = live / "metrics.jsonl"
    assert [f.text()[9:] for f in new] == [
        f"{where}:4:23: error: corrupt line: expecting value; it was skipped [MM504]"
    ]
    assert reported.new(profile, judge(profile, run, live=True), run, StepRanges()) == []  # once


def test_a_file_replaced_by_a_shorter_one_is_read_again(tmp_path: Path, profile: ProfileExport) -> None:
    """Miles' event logger opens its file per write, so that a checkpoint's snapshot can replace it:
    the file read again from its start, and the verdict is judge's on the file as it is."""
    src = tmp_path / "src"
    files = run_forms.write_events(faulty_run(), src)
    live = tmp_path / "live"
    live.mkdir()
    for p in files:
        (live / p.name).write_bytes(p.read_bytes())
    follower = RunFollower([live], STEP_KEYS, keys=judged_keys(profile), renames=profile.renames())
    assert follower.poll()
    restored = run_forms.write_events(clean_run(), tmp_path / "restored")
    for p in restored:
        tmp = live / (p.name + ".new")
        tmp.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
        os.replace(tmp, live / p.name)
    assert follower.poll()
    for p in restored:
        (live / p.name).write_bytes(p.read_bytes())  # the same inode, grown: read on
    follower.poll()
    result = judge(profile, follower.final())
    assert result.to_json() == judged_after(profile, live)
    assert result.summary.failed == 0 and result.summary.errors == 0


def test_new_process_files_join_and_gone_ones_leave(tmp_path: Path, profile: ProfileExport) -> None:
    src = tmp_path / "src"
    main, actor = sorted(run_forms.write_events(clean_run(), src))
    live = tmp_path / "live"
    (live / "events").mkdir(parents=True)
    follower = RunFollower([live], STEP_KEYS, keys=judged_keys(profile))
    assert not follower.poll()
    (live / "events" / main.name).write_bytes(main.read_bytes())
    assert follower.poll()
    assert set(follower.snapshot().series) >= {"train/grad_norm"}
    (live / "events" / actor.name).write_bytes(actor.read_bytes())
    assert follower.poll()
    assert set(follower.snapshot().series) >= {"train/grad_norm", "rollout/raw_reward"}
    (live / "events" / actor.name).unlink()
    assert follower.poll()
    assert "rollout/raw_reward" not in follower.snapshot().series
    assert not follower.poll()
