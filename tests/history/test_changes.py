"""The Changes page: made from the git history of ranges/ when the site is built, never under docs/."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, run_cli, write_project
from git_helpers import commit, edit, git
from metrics_manual.history.changes import changes_page
from metrics_manual.source.load import load_manual


@pytest.fixture
def history(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "proj")
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    git(root, "init", "-q", "-b", "main")
    commit(root, "First ranges")
    edit(root, "ranges/profiles/tiny.yaml", "max: 0.9", "max: 0.95")
    commit(root, "Widen the reward band <b>*after*</b> $run")
    (root / "notes.txt").write_text("not the ranges", "utf-8")
    commit(root, "Unrelated commit")
    edit(root, "ranges/catalog.yaml", "meaning: the gradient norm", "meaning: the global gradient norm")
    commit(root, "Say which gradient norm")
    return root


def _sections(page: str) -> list[str]:
    return re.findall(r"^## (.*)$", page, flags=re.M)


def test_one_entry_per_commit_that_changed_ranges_newest_first(history: Path) -> None:
    page = changes_page(history, load_manual(history))
    heads = [h for h in _sections(page) if not h.startswith("By metric")]
    assert [re.sub(r"`[0-9a-f]{12}` ", "", h.split(" {#")[0]) for h in heads] == [
        "2026-01-02 Say which gradient norm",
        "2026-01-02 Widen the reward band &#60;b&#62;&#42;after&#42;&#60;/b&#62; &#36;run",
        "2026-01-02 First ranges",
    ]
    widen = page.split("Widen the reward band")[1].split("\n## ")[0]
    assert "bounds: 0.5 to 0.9 -> 0.5 to 0.95" in widen
    assert "[`rollout/raw_reward`](reference/metrics/rollout.md#m-rollout-raw_reward)" in widen
    # Each metric of the catalog has its anchor, listing the commits that changed it.
    by_metric = page.split("## By metric")[1]
    grad = by_metric.split("{#m-train-grad_norm}")[1].split("### ")[0]
    assert "Say which gradient norm" in grad and "Widen" not in grad
    assert "{#m-train-pg_clipfrac}" in by_metric


def test_without_history_the_page_says_so_and_keeps_its_anchors(tmp_path: Path, history: Path) -> None:
    plain = write_project(tmp_path / "plain")
    page = changes_page(plain, load_manual(plain))
    assert "not a git repository" in page and "## 20" not in page
    assert "{#m-train-grad_norm}" in page
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{history}", str(shallow)], check=True)
    page = changes_page(shallow, load_manual(shallow))
    assert "a shallow clone" in page and "{#m-rollout-raw_reward}" in page


def test_check_does_not_depend_on_history(history: Path, tmp_path: Path) -> None:
    # The same files pass check with history, and in a copy without .git.
    assert run_cli("build", "--root", str(history)).returncode == 0
    assert not (history / "docs/changes.md").exists()
    assert run_cli("check", "--root", str(history)).returncode == 0
    copy = tmp_path / "copy"
    shutil.copytree(history, copy, ignore=shutil.ignore_patterns(".git"))
    assert run_cli("check", "--root", str(copy)).returncode == 0
    assert "../../changes.md#m-train-grad_norm" in (history / "docs/reference/metrics/training.md").read_text("utf-8")


@pytest.mark.slow
def test_site_build_has_the_page_and_the_links_to_it(history: Path) -> None:
    assert run_cli("build", "--root", str(history)).returncode == 0
    out = subprocess.run(
        [str(Path(sys.executable).parent / "mkdocs"), "build", "--strict", "-q"],
        cwd=history,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert out.returncode == 0, out.stderr
    html = (history / "site/changes/index.html").read_text("utf-8")
    assert "Say which gradient norm" in html and "<b>*after*</b>" not in html
    assert 'id="m-train-grad_norm"' in html
    ref = (history / "site/reference/metrics/training/index.html").read_text("utf-8")
    assert 'href="../../../changes/#m-train-grad_norm"' in ref
