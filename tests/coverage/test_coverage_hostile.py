"""coverage on a hostile checkout: every file it cannot read is a finding naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, write_project
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


@pytest.mark.xfail(strict=True, reason="coverage/scan.py collects Scan.unreadable, cli/coverage.py never reports it")
def test_coverage_names_a_python_file_it_could_not_parse(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    miles = tree(tmp_path / "miles", {"miles/ok.py": "x = 1\n", "miles/broken.py": "def broken(:\n    pass\n"})
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert "miles/broken.py" in out.stdout + out.stderr, "a file the scan skipped is silence, not a finding"
