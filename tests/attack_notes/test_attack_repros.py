"""Reproductions of defects found by the hostile-input review (branch attack); each is a strict xfail.

Each test states what the project's standard expects. It fails today (xfail); when the product is
fixed it passes, and strict=True turns that into a failure, so the fixer removes the marker and the
test stays as a regression test.
"""

from __future__ import annotations

import binascii
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, write_project
from derive_helpers import seed_run, seeds_project, write_runs
from git_helpers import commit, git
from miles_tree import tree

NEW_PROFILE_SETUP = (
    "--title",
    "T",
    "--model",
    "M",
    "--dataset",
    "D",
    "--hardware",
    "2xGPU",
    "--prompts-per-step",
    "4",
    "--answers-per-prompt",
    "2",
    "--token-limit",
    "1024",
)


def _git_out(root: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, input=data, capture_output=True, check=True).stdout.decode().strip()


def _tree(root: Path, entries: list[tuple[str, str, str]]) -> str:
    """A tree object written as is (`--literally`: git's own name checks do not run)."""
    data = b"".join(f"{mode} {name}".encode() + b"\0" + binascii.unhexlify(sha) for mode, name, sha in entries)
    return _git_out(root, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", data=data)


@pytest.mark.xfail(strict=True, reason="history/git.py load_revision joins tree paths without checking for '..'")
def test_diff_never_writes_outside_its_temp_folder(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    commit(root, "first ranges")
    outside = tmp_path / "escaped" / "pwned.yaml"
    blob = _git_out(root, "hash-object", "-w", "--stdin", data=b"written by a tree entry named ..\n")
    sub = _tree(root, [("100644", outside.name, blob)])
    for part in reversed(outside.parent.parts[1:]):
        sub = _tree(root, [("40000", part, sub)])
    for _ in range(len(Path("/tmp").parts) + 8):  # far enough up to reach /
        sub = _tree(root, [("40000", "..", sub)])
    ranges = [("40000", "..", sub)]
    for line in _git_out(root, "ls-tree", "HEAD:ranges").splitlines():
        meta, name = line.split("\t")
        mode, kind, sha = meta.split()
        ranges.append(("40000" if kind == "tree" else mode, name, sha))
    ranges.sort(key=lambda e: e[1] + ("/" if e[0] == "40000" else ""))
    top = []
    for line in _git_out(root, "ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t")
        mode, kind, sha = meta.split()
        top.append(("40000" if kind == "tree" else mode, name, _tree(root, ranges) if name == "ranges" else sha))
    top.sort(key=lambda e: e[1] + ("/" if e[0] == "40000" else ""))
    evil = git(root, "commit-tree", _tree(root, top), "-p", "HEAD", "-m", "evil")
    run_cli("diff", "--root", str(root), "HEAD", evil)
    assert not outside.exists(), "diff wrote a file named by a hostile commit outside its temp folder"


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


@pytest.mark.xfail(strict=True, reason="derive/plan.py validate_edit writes into a ranges/profiles/ it never made")
def test_derive_a_new_profile_without_a_profiles_folder_is_no_traceback(tmp_path: Path) -> None:
    project = seeds_project(tmp_path / "proj")
    (project / "ranges" / "profiles" / "seeds.yaml").unlink()
    (project / "ranges" / "profiles").rmdir()
    runs = write_runs(tmp_path / "runs", {"s1": seed_run(1)})
    out = run_cli(
        "derive", "--root", str(project), "--profile", "fresh", *NEW_PROFILE_SETUP, "--run", f"s1={runs['s1']}"
    )
    assert out.returncode in (0, 1, 2)


@pytest.mark.xfail(strict=True, reason="cli/derive.py writes each capture before it knows the next can be written")
def test_derive_write_that_fails_leaves_no_capture_behind(tmp_path: Path) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    (project / "captures" / "fresh").mkdir(parents=True)
    (project / "captures" / "fresh" / "s2.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    out = run_cli(
        "derive",
        "--root",
        str(project),
        "--profile",
        "fresh",
        *NEW_PROFILE_SETUP,
        "--run",
        f"s1={runs['s1']}",
        "--run",
        f"s2={runs['s2']}",
        "--write",
    )
    assert out.returncode == 2
    assert not (project / "captures" / "fresh" / "s1.jsonl").exists(), "exit 2, yet one capture was written"
