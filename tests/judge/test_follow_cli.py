"""`metrics-manual judge --follow` as a user runs it beside a Miles run: a real process, ended by SIGTERM.

A writer thread appends the dashboard log's records one `log()` call at a time; the command prints
each finding on its own line the moment it is certain (one JSON object a line with --format json,
then the verdict), and on SIGTERM the verdict of judge on the same files, with its exit code.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import run_forms
from conftest import run_cli
from judge_fixture import clean_run, judged_project

LATENCY_BOUND = 5.0  # seconds: the design reports within one poll (0.2 s); this only catches a finding never printed


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("project"))


class Follow:
    """The command in a real process; each line it prints, with the time it arrived."""

    def __init__(self, project: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "metrics_manual", "judge", "--follow", "--profile", "judged", *args],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )
        self.lines: list[tuple[float, str]] = []
        self.err: list[str] = []
        self.started = threading.Event()
        self._threads = [threading.Thread(target=self._out), threading.Thread(target=self._err)]
        for t in self._threads:
            t.start()

    def _out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def _err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            if line.startswith("judge --follow: following"):
                self.started.set()

    def end(self, sig: signal.Signals | None = signal.SIGTERM, timeout: float = 60) -> int:
        if sig is not None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        finally:
            self.proc.kill()
            for t in self._threads:
                t.join()
        return code


def faulty_run() -> run_forms.Series:
    run = clean_run()
    run["train/grad_norm"][4] = 7.2
    run["rollout/raw_reward"][6] = float("nan")
    return run


def test_json_lines_as_the_run_writes_then_judges_verdict_on_sigterm(project: Path, tmp_path: Path) -> None:
    (src,) = run_forms.write_dashboard(faulty_run(), tmp_path / "src")
    records = src.read_bytes().splitlines(keepends=True)
    live = tmp_path / "dump" / "dashboard"
    live.mkdir(parents=True)
    follow = Follow(project, str(tmp_path / "dump"), "--format", "json")
    assert follow.started.wait(60), follow.err
    written: dict[tuple[str, int], float] = {}  # (step key, step) -> when its record was written
    with (live / "metrics.jsonl").open("ab") as fh:
        for line in records:
            fh.write(line)
            fh.flush()
            record = json.loads(line)
            written[(record["step_key"], record["step"])] = time.monotonic()
            time.sleep(0.02)
    time.sleep(0.5)  # two looks past the last write
    code = follow.end()
    out = [json.loads(line) for _, line in follow.lines]
    *found, verdict = out
    assert [(f["finding"], f["metric"], f["step"]) for f in found] == [
        ("out_of_range", "train/grad_norm", 4),
        ("not_finite", "rollout/raw_reward", 6),
    ]
    assert all(f["time"].endswith("Z") for f in found)
    judged = run_cli("judge", "--profile", "judged", str(tmp_path / "dump"), "--format", "json", cwd=project)
    assert verdict == json.loads(judged.stdout)
    assert code == judged.returncode == 1
    assert "ended (SIGTERM received)" in "".join(follow.err)
    # Each finding arrived after the record that made it certain (its own: a value written is certain)
    # and soon after it.
    for (arrived, _), f in zip(follow.lines, found):
        certain = written[(f["step_key"], f["step"])]
        assert 0 < arrived - certain < LATENCY_BOUND, (f, arrived - certain)


def test_text_one_line_a_finding_then_the_verdict_on_ctrl_c(project: Path, tmp_path: Path) -> None:
    run_forms.write_events(faulty_run(), tmp_path / "events")
    follow = Follow(project, str(tmp_path / "events"))
    assert follow.started.wait(60), follow.err
    deadline = time.monotonic() + 60
    while len(follow.lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    code = follow.end(signal.SIGINT)
    lines = [line for _, line in follow.lines]
    assert lines[0][9:].startswith("FAIL  train/grad_norm at train/step 4: 7.2; expected 0.1 to 5 per step")
    assert lines[1][9:].startswith("ERROR rollout/raw_reward at rollout/step 6: not a finite number: NaN")
    judged = run_cli("judge", "--profile", "judged", str(tmp_path / "events"), cwd=project)
    assert "\n".join(lines[2:]) + "\n" == judged.stdout
    assert code == 1 and "Traceback" not in "".join(follow.err)


def test_idle_ends_it_with_the_verdict(project: Path, tmp_path: Path) -> None:
    run_forms.write_dashboard(clean_run(), tmp_path / "run")
    result = run_cli("judge", "--follow", "--idle", "0.2", "--profile", "judged", str(tmp_path / "run"), cwd=project)
    assert result.returncode == 0, result.stderr
    assert "ended (no new data for 0.2 s)" in result.stderr
    assert result.stdout == run_cli("judge", "--profile", "judged", str(tmp_path / "run"), cwd=project).stdout


def test_junit_keeps_its_document_and_says_findings_on_stderr(project: Path, tmp_path: Path) -> None:
    run_forms.write_dashboard(faulty_run(), tmp_path / "run")
    args = ["--profile", "judged", str(tmp_path / "run"), "--format", "junit"]
    result = run_cli("judge", "--follow", "--idle", "0.3", *args, cwd=project)
    assert result.stdout == run_cli("judge", *args, cwd=project).stdout
    assert "FAIL  train/grad_norm at train/step 4: 7.2" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--idle", "5"], "--idle and --until-step go with --follow"),
        (["--until-step", "5"], "--idle and --until-step go with --follow"),
        (["--follow", "--idle", "0"], "--idle must be a number of seconds above 0"),
        (["--follow", "--idle", "nan"], "--idle must be a number of seconds above 0"),
        (["--follow", "--until-step", "-1"], "--until-step must be a step from 0 to 2^63-1"),
    ],
)
def test_bad_options_are_bad_input(project: Path, tmp_path: Path, args: list[str], message: str) -> None:
    result = run_cli("judge", "--profile", "judged", str(tmp_path), *args, cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert message in result.stderr


def test_a_path_that_is_not_there_is_bad_input_at_once(project: Path, tmp_path: Path) -> None:
    result = run_cli("judge", "--follow", "--profile", "judged", str(tmp_path / "missing"), cwd=project)
    assert (result.returncode, result.stdout) == (2, "")
    assert "missing:1:1: error: no such file or folder" in result.stderr


def test_a_folder_empty_until_the_end_is_judges_error(project: Path, tmp_path: Path) -> None:
    result = run_cli("judge", "--follow", "--idle", "0.2", "--profile", "judged", str(tmp_path), cwd=project)
    assert result.returncode == 2 and "no metrics file of a known form in this folder" in result.stderr


def test_a_reader_that_goes_away_ends_it_without_a_traceback(project: Path, tmp_path: Path) -> None:
    live = tmp_path / "run"
    live.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "metrics_manual", "judge", "--follow", "--profile", "judged", str(live)],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # as a script reading the findings that ended
    run_forms.write_dashboard(faulty_run(), live)
    try:
        code = proc.wait(60)
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert code == 2, err
    assert "stdout was closed" in err and "Traceback" not in err
