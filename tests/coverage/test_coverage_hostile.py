"""coverage on a hostile checkout: every file it cannot read is a finding naming the file, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, write_project
from miles_tree import tree


@pytest.mark.xfail(strict=True, reason="coverage/scan.py template() recurses once per `+` with no depth limit")
def test_coverage_of_a_long_string_sum_is_no_traceback(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    terms = " + ".join(['"a"'] * 2500)  # parses (ast's own limit is higher), deeper than Python's recursion limit
    miles = tree(
        tmp_path / "miles", {"miles/utils/log.py": f'def f(tracker):\n    tracker.log({{"train/" + {terms}: 1}})\n'}
    )
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))  # a traceback raises here
    assert out.returncode in (0, 1, 2)


@pytest.mark.xfail(strict=True, reason="coverage/evidence.py _read catches SyntaxError and ValueError only")
def test_evidence_on_a_file_too_deep_for_ast_is_a_finding(tmp_path: Path) -> None:
    catalog = """\
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
    project = write_project(tmp_path / "proj", catalog, {})
    deep = "x = " + "+".join(["1"] * 200_000)  # ast.parse: RecursionError during ast construction
    miles = tree(
        tmp_path / "miles", {"miles/loss.py": f'def f(tracker):\n    tracker.log({{"train/loss": 1}})\n{deep}\n'}
    )
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert out.returncode in (1, 2)


@pytest.mark.xfail(strict=True, reason="coverage/scan.py collects Scan.unreadable, cli/coverage.py never reports it")
def test_coverage_names_a_python_file_it_could_not_parse(tmp_path: Path) -> None:
    project = write_project(tmp_path / "proj")
    miles = tree(tmp_path / "miles", {"miles/ok.py": "x = 1\n", "miles/broken.py": "def broken(:\n    pass\n"})
    out = run_cli("coverage", "--root", str(project), "--miles", str(miles))
    assert "miles/broken.py" in out.stdout + out.stderr, "a file the scan skipped is silence, not a finding"
