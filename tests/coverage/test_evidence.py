"""`coverage --miles` holds each origin's and named_at's evidence against a small Miles-shaped git
repository written here (never a real checkout): the file, the symbol, the line, the commit."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, write_project
from git_helpers import commit, edit, git
from metrics_manual.coverage import evidence
from metrics_manual.source.load import load_manual

TRAINER = """\
import tracking


class Trainer:
    @timed("train")
    def step(self, optimizer):
        grad_norm = optimizer.step()
        log_step(self.args, grad_norm)


def log_step(args, grad_norm):
    log_dict = {"train/grad_norm": grad_norm, "train/step": 1}
    tracking.log(args, log_dict, step_key="train/step")
"""
# The evidence lines of TRAINER, with their line numbers.
COMPUTED = (7, "grad_norm = optimizer.step()")
NAMED = (12, 'log_dict = {"train/grad_norm": grad_norm, "train/step": 1}')

CATALOG = """\
title: Metrics
code: {{repository: example/miles, url: https://example.org/miles, branch: main, commit: {commit}}}
step_keys: {{train: train/step}}
sections:
  - id: training
    title: Training
    metrics:
      - key: train/grad_norm
        meaning: the gradient norm
        origin:
          path: {path}
          symbol: {symbol}
          line: {line}
          evidence: '{evidence}'
          computed: the optimizer's norm
          logged: every train step
          named_at:
            path: miles/trainer.py
            symbol: log_step
            line: {named_line}
            evidence: '{named}'
"""
C = "ranges/catalog.yaml"


def miles_repo(root: Path, text: str = TRAINER) -> tuple[Path, str]:
    """A git repository with miles/trainer.py in one commit; its path and the commit."""
    (root / "miles").mkdir(parents=True)
    (root / "miles" / "trainer.py").write_text(text, "utf-8")
    git(root, "init", "-q", "-b", "main")
    return root, commit(root, "one commit")


def project(tmp_path: Path, sha: str, **fields: Any) -> Path:
    values = {
        "commit": sha,
        "path": "miles/trainer.py",
        "symbol": "Trainer.step",
        "line": COMPUTED[0],
        "evidence": COMPUTED[1],
        "named_line": NAMED[0],
        "named": NAMED[1].replace("'", "''"),
        **fields,
    }
    return write_project(tmp_path / "p", CATALOG.format(**values), profiles={})


def coverage(root: Path, miles: Path) -> tuple[int, dict[str, Any], list[str]]:
    """The exit code, the JSON's evidence part, and the text's finding lines."""
    ran = run_cli("coverage", "--root", str(root), "--miles", str(miles), "--format", "json")
    text = run_cli("coverage", "--root", str(root), "--miles", str(miles))
    assert text.returncode == ran.returncode
    lines = [line for line in text.stdout.splitlines() if line.startswith(C)]
    return ran.returncode, json.loads(ran.stdout)["evidence"], lines


def catalog_line(root: Path, text: str) -> int:
    """The 1-based line of the catalog that holds `text`."""
    lines = (root / C).read_text("utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_evidence_at_its_line_in_its_symbol_at_the_commit_is_verified(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    root = project(tmp_path, sha)
    code, out, lines = coverage(root, miles)
    assert (code, lines) == (0, [])
    assert out["commit"] == sha and out["at_commit"] is True
    assert (out["places"], out["verified"], out["without_evidence"]) == (2, 2, 0)
    assert [(c["key"], c["place"], c["verified"], c["misses"]) for c in out["checked"]] == [
        ("train/grad_norm", "origin", True, []),
        ("train/grad_norm", "named_at", True, []),
    ]
    text = run_cli("coverage", "--root", str(root), "--miles", str(miles)).stdout
    assert "evidence: 2 of 2 origins and named_at verified at the catalog's commit" in text


def test_whitespace_at_the_ends_of_the_evidence_is_aside(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles", TRAINER.replace("optimizer.step()\n", "optimizer.step()   \n"))
    code, out, _ = coverage(project(tmp_path, sha, evidence="  " + COMPUTED[1]), miles)
    assert (code, out["verified"]) == (0, 2)


def test_an_evidence_line_moved_down_three_lines_is_reported_with_its_new_line(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    edit(
        miles,
        "miles/trainer.py",
        "        grad_norm =",
        "        a = 1\n        b = 2\n        c = 3\n        grad_norm =",
    )
    sha = commit(miles, "three lines more")
    root = project(tmp_path, sha)
    code, out, lines = coverage(root, miles)
    at = catalog_line(root, "line: 7")
    assert code == 1
    assert lines == [
        f"{C}:{at}:17: error: train/grad_norm: origin: the evidence moved from line 7 to line 10 of "
        "miles/trainer.py [MM613]",
        # the named_at's line moved down with it
        f"{C}:{catalog_line(root, 'line: 12')}:19: error: train/grad_norm: named_at: the evidence moved from "
        "line 12 to line 15 of miles/trainer.py [MM613]",
    ]
    assert out["checked"][0]["misses"] == [
        {
            "code": "MM613",
            "message": "the evidence moved from line 7 to line 10 of miles/trainer.py",
            "at": f"{C}:{at}:17",
            "moved_to": 10,
        }
    ]
    assert out["verified"] == 0


def test_a_moved_line_that_reads_the_same_at_several_places_goes_to_the_one_in_the_symbol(tmp_path: Path) -> None:
    twice = TRAINER + "\n\ndef other(optimizer):\n    grad_norm = optimizer.step()\n"
    miles, sha = miles_repo(tmp_path / "miles", twice)
    _, out, _ = coverage(project(tmp_path, sha, line=3), miles)
    assert out["checked"][0]["misses"][0]["moved_to"] == 7
    assert "(and 1 more lines of the file read the same)" in out["checked"][0]["misses"][0]["message"]


def test_an_evidence_line_that_changed_is_a_finding_naming_the_entry(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    edit(miles, "miles/trainer.py", "grad_norm = optimizer.step()", "grad_norm = clip(optimizer.step())")
    sha = commit(miles, "clip")
    root = project(tmp_path, sha)
    code, out, lines = coverage(root, miles)
    assert code == 1
    assert lines == [
        f"{C}:{catalog_line(root, 'evidence: ' + repr(COMPUTED[1]))}:21: error: train/grad_norm: origin: the "
        "evidence is not in miles/trainer.py any more; line 7 reads 'grad_norm = clip(optimizer.step())' [MM614]"
    ]
    assert [c["verified"] for c in out["checked"]] == [False, True]


def test_an_evidence_line_past_the_end_of_the_file(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    _, _, lines = coverage(project(tmp_path, sha, line=400, evidence="gone()"), miles)
    assert [line.split(": ", 2)[2] for line in lines] == [
        "train/grad_norm: origin: the evidence is not in miles/trainer.py any more; the file has 13 lines [MM614]"
    ]


def test_a_renamed_symbol_is_a_finding_with_the_new_name(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles", TRAINER.replace("def step(", "def train_step("))
    root = project(tmp_path, sha)
    code, _, lines = coverage(root, miles)
    assert code == 1
    assert lines == [
        f"{C}:{catalog_line(root, 'symbol: Trainer.step')}:19: error: train/grad_norm: origin: 'Trainer.step' is "
        "not defined in miles/trainer.py (no def, async def or class of that name); did you mean "
        "'Trainer.train_step'? [MM612]"
    ]


def test_a_method_named_without_its_class_is_not_found_and_the_class_is_suggested(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    _, _, lines = coverage(project(tmp_path, sha, symbol="step"), miles)
    assert len(lines) == 1 and "did you mean 'Trainer.step'? [MM612]" in lines[0]


def test_evidence_outside_its_symbol(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    root = project(tmp_path, sha, symbol="log_step")
    code, _, lines = coverage(root, miles)
    assert code == 1
    assert lines == [
        f"{C}:{catalog_line(root, 'symbol: log_step')}:19: error: train/grad_norm: origin: line 7 of "
        "miles/trainer.py lies outside 'log_step' (lines 11-13) [MM615]"
    ]


def test_a_decorator_line_is_inside_its_function(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    code, out, _ = coverage(project(tmp_path, sha, line=5, evidence='@timed("train")'.replace("'", "''")), miles)
    assert (code, out["verified"]) == (0, 2)


def test_a_checkout_at_another_commit_is_a_finding_and_the_rest_is_still_reported(tmp_path: Path) -> None:
    miles, first = miles_repo(tmp_path / "miles")
    root = project(tmp_path, first)
    edit(miles, "miles/trainer.py", "import tracking\n", "import tracking\nimport os\n")
    later = commit(miles, "one import more")
    code, out, lines = coverage(root, miles)
    assert code == 1
    assert (out["commit"], out["catalog_commit"], out["at_commit"]) == (later, first, False)
    # Its history holds the catalog's commit: the places are followed there (tests/coverage/test_move.py).
    assert lines == [
        f"{C}:2:89: error: the checkout is at {later[:12]} but the catalog reads Miles at {first[:12]}: 2 places of 1 "
        f"origins hold at {later[:12]} (2 evidence lines; 2 at another line, 0 in another file, 0 in another "
        "symbol); 0 origins to read again; `coverage --write` moves the catalog there [MM617]",
    ]
    # A checkout of the same files whose history does not hold the catalog's commit: each place held to its files.
    other, _ = miles_repo(tmp_path / "other", (miles / "miles" / "trainer.py").read_text("utf-8"))
    code, out, lines = coverage(root, other)
    assert code == 1
    assert lines == [
        f"{C}:2:89: error: the checkout is at {out['commit'][:12]} but the catalog reads Miles at {first[:12]}: its "
        f"history does not hold Miles {first[:12]}, so the catalog cannot be followed there (fetch that commit); "
        "the findings that follow are what differs between the two [MM617]",
        f"{C}:{catalog_line(root, 'line: 7')}:17: error: train/grad_norm: origin: the evidence moved from line 7 "
        "to line 8 of miles/trainer.py [MM613]",
        f"{C}:{catalog_line(root, 'line: 12')}:19: error: train/grad_norm: named_at: the evidence moved from "
        "line 12 to line 13 of miles/trainer.py [MM613]",
    ]
    # Back at the catalog's commit, all holds again.
    git(miles, "checkout", "-q", first)
    assert coverage(root, miles)[0] == 0


def test_a_catalog_at_a_short_commit_matches_its_checkout(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    code, out, _ = coverage(project(tmp_path, sha[:8]), miles)
    assert (code, out["at_commit"]) == (0, True)


def test_a_missing_path_is_a_finding(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    root = project(tmp_path, sha, path="miles/old_trainer.py")
    code, out, lines = coverage(root, miles)
    assert code == 1
    assert lines == [
        f"{C}:{catalog_line(root, 'path: miles/old_trainer.py')}:17: error: train/grad_norm: origin: "
        "miles/old_trainer.py is not in the checkout [MM611]"
    ]
    assert out["checked"][0]["misses"][0]["code"] == "MM611"


def test_a_link_out_of_the_checkout_is_never_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text(TRAINER, "utf-8")
    miles, sha = miles_repo(tmp_path / "miles")
    os.symlink(outside, miles / "miles" / "link.py")
    git(miles, "add", "miles/link.py")  # in the commit, so the checkout does not differ from it
    sha = commit(miles, "a link out")
    _, _, lines = coverage(project(tmp_path, sha, path="miles/link.py"), miles)
    assert len(lines) == 1 and "miles/link.py cannot be read: the file is a link to a place outside" in lines[0]
    _, _, lines = coverage(project(tmp_path / "2", sha, path="../secret.py"), miles)
    assert len(lines) == 1 and "../secret.py cannot be read" in lines[0]


def test_a_place_without_evidence_is_a_warning_and_the_command_passes(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    catalog = CATALOG.format(
        commit=sha, path="miles/trainer.py", symbol="Trainer.step", line=7, evidence="x", named_line=1, named="x"
    )
    bare = "".join(
        line for line in catalog.splitlines(keepends=True) if "line:" not in line and "evidence:" not in line
    )
    root = write_project(tmp_path / "p", bare, profiles={})
    code, out, lines = coverage(root, miles)
    assert code == 0
    assert (out["verified"], out["without_evidence"]) == (0, 2)
    origin, named_at = catalog_line(root, "path: miles/trainer.py"), catalog_line(root, "named_at:") + 1
    assert lines[0].startswith(f"{C}:{origin}:11: warning: train/grad_norm: origin: no evidence (line and evidence)")
    assert lines[1].startswith(f"{C}:{named_at}:13: warning: train/grad_norm: named_at: no evidence")
    assert all(line.endswith("[MM616]") for line in lines)


def test_a_checkout_that_is_not_a_git_work_tree_is_a_warning(tmp_path: Path) -> None:
    miles = tmp_path / "copy"
    (miles / "miles").mkdir(parents=True)
    (miles / "miles" / "trainer.py").write_text(TRAINER, "utf-8")
    code, out, lines = coverage(project(tmp_path, "31f1ca96"), miles)
    assert (code, out["commit"], out["at_commit"], out["verified"]) == (0, None, False, 2)
    assert lines == [
        f"{C}:2:89: warning: the checkout's commit is unknown (not a git work tree): the evidence was held against "
        "its files as they are, not against Miles at 31f1ca96 [MM617]"
    ]


def test_a_file_that_does_not_parse_says_so(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles", TRAINER + "\ndef broken(:\n")
    _, _, lines = coverage(project(tmp_path, sha), miles)
    assert [line.split(": ", 2)[2].split(" (")[0] for line in lines] == [
        "train/grad_norm: origin: 'Trainer.step' is not defined in miles/trainer.py",
        "train/grad_norm: named_at: 'log_step' is not defined in miles/trainer.py",
    ]
    assert all("(does not parse as Python (invalid syntax" in line and line.endswith("[MM612]") for line in lines)


def test_github_format_annotates_the_catalog(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    ran = run_cli(
        "coverage",
        "--root",
        str(project(tmp_path, sha, path="miles/x.py")),
        "--miles",
        str(miles),
        "--format",
        "github",
    )
    assert ran.returncode == 1
    assert "::error file=ranges/catalog.yaml,line=11," in ran.stdout and "MM611" in ran.stdout


@pytest.mark.parametrize("symbol", ["Trainer", "Trainer.step", "log_step"])
def test_symbols_are_found_with_ast(tmp_path: Path, symbol: str) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    manual = load_manual(project(tmp_path, sha, symbol=symbol, line=NAMED[0], evidence=NAMED[1].replace("'", "''")))
    checked = evidence.verify(manual.catalog, miles).checked[0]
    outside = [m.code.id for m in checked.misses]
    assert outside == ([] if symbol in ("log_step",) else ["MM615"])


def test_a_nested_definition_is_found_by_its_dotted_name(tmp_path: Path) -> None:
    nested = textwrap.dedent(
        """\
        if True:
            class Outer:
                class Inner:
                    async def run(self):
                        value = 1
        """
    )
    miles, sha = miles_repo(tmp_path / "miles", nested)
    manual = load_manual(project(tmp_path, sha, symbol="Outer.Inner.run", line=5, evidence="value = 1"))
    assert evidence.verify(manual.catalog, miles).checked[0].verified


# --- a checkout at the catalog's commit whose files differ from it -------------------------------


def test_a_modified_checkout_is_a_warning_naming_how_many_files_differ(tmp_path: Path) -> None:
    miles, sha = miles_repo(tmp_path / "miles")
    (miles / "miles" / "helper.py").write_text("x = 1\n", "utf-8")
    (miles / "miles" / "gone.py").write_text("y = 2\n", "utf-8")
    (miles / "README.txt").write_text("not Python\n", "utf-8")
    sha = commit(miles, "three files more")
    root = project(tmp_path, sha)
    assert coverage(root, miles)[2] == []  # clean: no warning
    (miles / "miles" / "helper.py").write_text("x = 2\n", "utf-8")  # the same size, another content
    (miles / "miles" / "gone.py").unlink()
    (miles / "miles" / "new.py").write_text("z = 3\n", "utf-8")  # untracked, read by the scan
    (miles / "tests").mkdir()
    (miles / "tests" / "test_x.py").write_text("", "utf-8")  # untracked, never read by the scan
    (miles / "README.txt").unlink()
    code, out, lines = coverage(root, miles)
    assert code == 0  # the evidence still holds: a warning, not an error
    assert out["at_commit"] is True
    assert out["changed"] == ["README.txt", "miles/gone.py", "miles/helper.py", "miles/new.py"]
    assert lines == [
        f"{C}:2:89: warning: 4 file(s) of the checkout differ from its commit {sha[:12]} (README.txt, miles/gone.py, "
        "miles/helper.py, ...): the scan and the evidence read them as they are, not as Miles has them at that "
        "commit [MM618]"
    ]
    text = run_cli("coverage", "--root", str(root), "--miles", str(miles)).stdout
    assert "verified at the catalog's commit with 4 file(s) that differ from it" in text


def test_a_link_of_the_commit_is_held_to_its_target(tmp_path: Path) -> None:
    miles, _ = miles_repo(tmp_path / "miles")
    (miles / "miles" / "alias.py").symlink_to("trainer.py")
    sha = commit(miles, "a link")
    root = project(tmp_path, sha)
    assert coverage(root, miles)[1]["changed"] == []
    (miles / "miles" / "alias.py").unlink()
    (miles / "miles" / "alias.py").symlink_to("other.py")
    assert coverage(root, miles)[1]["changed"] == ["miles/alias.py"]


def test_the_checkouts_config_never_runs_a_command(tmp_path: Path) -> None:
    miles, _ = miles_repo(tmp_path / "miles")
    (miles / ".gitattributes").write_text("*.py filter=evil\n", "utf-8")
    sha = commit(miles, "a filter on every Python file")
    ran = tmp_path / "ran"
    for name, value in [
        ("filter.evil.clean", f"touch {ran}-filter; cat"),
        ("filter.evil.process", f"touch {ran}-process"),
        ("core.fsmonitor", f"touch {ran}-fsmonitor; echo"),
        ("core.hooksPath", str(tmp_path / "hooks")),
    ]:
        git(miles, "config", name, value)
    root = project(tmp_path, sha)
    # The file's time changes and its bytes do not: `git status` would hash it through the filter.
    os.utime(miles / "miles" / "trainer.py", (1, 1))
    subprocess.run(["git", "-c", "core.fsmonitor=false", "status", "--porcelain"], cwd=miles, capture_output=True)
    assert list(tmp_path.glob("ran-*")), "git status ran no command of the checkout's config: this test proves nothing"
    for marker in tmp_path.glob("ran-*"):
        marker.unlink()
    os.utime(miles / "miles" / "trainer.py", (2, 2))
    code, out, lines = coverage(root, miles)
    assert (code, out["changed"], lines) == (0, [], [])
    assert not list(tmp_path.glob("ran-*")), "coverage ran a command the checkout's config names"
