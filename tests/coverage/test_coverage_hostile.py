"""coverage on a hostile checkout: every file it cannot read is a finding naming the file, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, write_project
from metrics_manual.coverage.pyfile import MAX_FILE_BYTES
from metrics_manual.coverage.scan import scan
from miles_tree import NS, tree

# Files ast cannot parse, or that parse deeper than any walk over them can recurse.
TOO_DEEP = {
    "lambdas": "x = " + "lambda: " * 5000 + "1\n",  # the parser: MemoryError
    "nots": "x = " + "not " * 100_000 + "1\n",  # the parser: MemoryError
    "sum": "x = " + "+".join(["1"] * 200_000) + "\n",  # ast's construction: RecursionError
    "strings": "x = " + " + ".join(['"a"'] * 2500) + "\n",  # parses; 2,500 levels deep
}

EVIDENCE_CATALOG = """\
title: Metrics
code: {repository: example/miles, url: https://example.org/miles, branch: main, commit: 31f1ca96}
step_keys: {train: train/step}
sections:
  - id: training
    title: Training
    metrics:
      - key: train/loss
        meaning: the loss
        origin:
          path: miles/loss.py
          symbol: f
          line: 1
          evidence: 'def f(tracker):'
          computed: the loss
          logged: every step
"""


def test_coverage_of_a_long_string_sum_is_no_traceback(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    terms = " + ".join(['"a"'] * 2500)  # parses (ast's own limit is higher), deeper than Python's recursion limit
    miles = tree(
        tmp_path / "miles", {"miles/utils/log.py": f'def f(tracker):\n    tracker.log({{"train/" + {terms}: 1}})\n'}
    )
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))  # a traceback raises here
    assert out.returncode in (0, 1, 2)


@pytest.mark.parametrize("form", sorted(TOO_DEEP))
def test_the_scan_names_a_file_too_deep_and_reads_the_rest(tmp_path: Path, form: str) -> None:
    miles = tree(tmp_path, {"miles/deep.py": TOO_DEEP[form], "miles/ok.py": 'd = {"perf/a_time": 1}\n'})
    result = scan(miles, NS)
    (unread,) = result.unreadable
    assert unread.path == "miles/deep.py"
    assert unread.why in (
        "nests too deep for Python's parser",
        "nests deeper than 100 levels; no Miles file nests that deep",
    )
    assert [e.key for e in result.emissions] == ["perf/a_time"]


@pytest.mark.parametrize("form", sorted(TOO_DEEP))
def test_evidence_on_a_file_too_deep_for_ast_is_a_finding(tmp_path: Path, form: str) -> None:
    project = write_project(tmp_path / "proj", EVIDENCE_CATALOG, {})
    miles = tree(
        tmp_path / "miles",
        {"miles/loss.py": f'def f(tracker):\n    tracker.log({{"train/loss": 1}})\n{TOO_DEEP[form]}'},
    )
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert out.returncode == 1
    (line,) = [x for x in out.stdout.splitlines() if "[MM612]" in x]
    assert "train/loss: origin: 'f' is not defined in miles/loss.py (nests" in line


def test_coverage_names_a_python_file_it_could_not_parse(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    miles = tree(tmp_path / "miles", {"miles/ok.py": "x = 1\n", "miles/broken.py": "def broken(:\n    pass\n"})
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert "miles/broken.py" in out.stdout + out.stderr, "a file the scan skipped is silence, not a finding"


def test_every_file_the_scan_did_not_read_is_a_warning_in_each_format(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    big = "x = 1\n" * (MAX_FILE_BYTES // 6 + 1)
    miles = tree(
        tmp_path / "miles",
        {"miles/ok.py": "x = 1\n", "miles/broken.py": "def broken(:\n    pass\n", "miles/big.py": big},
    )
    (miles / "miles" / "linked.py").symlink_to(miles / "miles" / "ok.py")
    why = {
        "miles/big.py": (1, 1, f"the file has {len(big):,} bytes; a source file may have at most {MAX_FILE_BYTES:,}"),
        "miles/broken.py": (1, 12, "does not parse as Python (invalid syntax (broken.py, line 1))"),
        "miles/linked.py": (1, 1, "a symbolic link; the scan does not follow links"),
    }
    text = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert "; 3 Python file(s) not read" in text.stdout.splitlines()[1]
    assert [x for x in text.stdout.splitlines() if x.endswith("[MM604]")] == [
        f"{path}:{line}:{col}: warning: not read by the scan: {w}; the keys it logs are not seen [MM604]"
        for path, (line, col, w) in why.items()
    ]
    data = json.loads(run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "json").stdout)
    assert data["not_read"] == [{"path": p, "line": li, "col": c, "why": w} for p, (li, c, w) in why.items()]
    github = run_cli("coverage", "--root", str(project), "--miles", str(miles), "--format", "github").stdout
    assert github.count("::warning file=miles/") == 3 and "title=MM604 file-not-scanned::" in github


def test_a_key_logged_only_in_a_file_not_read_is_not_logged_and_the_file_is_named(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", EVIDENCE_CATALOG.split("        origin:")[0], {})  # no origin
    miles = tree(tmp_path / "miles", {"miles/ok.py": "x = 1\n", "miles/loss.py": 'd = {"train/loss": 1}\n)\n'})
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert out.returncode == 1
    assert "not logged:   train/loss" in out.stdout
    assert "miles/loss.py:2:1: warning: not read by the scan: does not parse as Python" in out.stdout


def _coverage_process(project: Path, miles: Path) -> subprocess.CompletedProcess[str]:
    """coverage in a process of its own, given a minute: a read that waits on a pipe fails the test, not the suite."""
    return subprocess.run(
        [sys.executable, "-m", "metrics_manual", "coverage", "--root", str(project), "--miles", str(miles)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_evidence_in_a_file_over_the_scans_cap_is_not_verified(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", EVIDENCE_CATALOG, {})
    big = 'def f(tracker):\n    tracker.log({"train/loss": 1})\n' + "x = 1\n" * (MAX_FILE_BYTES // 6 + 1)
    miles = tree(tmp_path / "miles", {"miles/loss.py": big})
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert out.returncode == 1
    (line,) = [x for x in out.stdout.splitlines() if "[MM611]" in x]
    assert (
        f"train/loss: origin: miles/loss.py cannot be read: the file has {len(big):,} bytes; a source file may "
        f"have at most {MAX_FILE_BYTES:,}"
    ) in line
    assert "evidence: 0 of 1 origins and named_at verified" in out.stdout


def test_a_pipe_named_like_python_is_never_waited_on(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    project = write_project(tmp_path / "proj", EVIDENCE_CATALOG, {})
    miles = tree(tmp_path / "miles", {"miles/ok.py": 'd = {"perf/a_time": 1}\n'})
    os.mkfifo(miles / "miles" / "loss.py")  # nobody writes it: a blocking open would wait for ever
    out = _coverage_process(project, miles)
    assert out.returncode == 1, out.stderr
    (line,) = [x for x in out.stdout.splitlines() if "[MM611]" in x]
    assert "miles/loss.py cannot be read: not a regular file but a named pipe; only regular files are read" in line
    assert [(u.path, u.why) for u in scan(miles, NS).unreadable] == [
        ("miles/loss.py", "not a regular file but a named pipe; only regular files are read")
    ]


def test_a_link_out_of_the_checkout_is_named_as_such(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj", EVIDENCE_CATALOG, {})
    (tmp_path / "elsewhere.py").write_text("def f(tracker):\n    pass\n", "utf-8")
    miles = tree(tmp_path / "miles", {"miles/ok.py": "x = 1\n"})
    (miles / "miles" / "loss.py").symlink_to(tmp_path / "elsewhere.py")
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    (line,) = [x for x in out.stdout.splitlines() if "[MM611]" in x]
    assert "miles/loss.py cannot be read: the file is a link to a place outside the checkout;" in line
