"""Copy and cite: edit links and last-changed dates, added to the built HTML only."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path

import pytest

from conftest import TINY_PROFILE
from metrics_manual.build import generate
from metrics_manual.site import cite
from metrics_manual.site.cite import Citations, blame_dates, edit_base, expectation_lines


def test_each_expectation_maps_to_its_lines() -> None:
    text = TINY_PROFILE + "  rollout/extra:\n    - kind: band\n      min: 1\n      max: 2\n"
    lines = expectation_lines(text, "p.yaml")
    rows = text.splitlines()
    assert rows[lines["train/grad_norm", 1][0] - 1].strip().startswith("- {kind: band, min: 1, max: 3")
    first, last = lines["rollout/extra", 0]
    assert (rows[first - 1].strip(), rows[last - 1].strip()) == ("- kind: band", "max: 2")
    assert expectation_lines("not: [valid", "p.yaml") == {}


def test_the_edit_url_points_beside_the_docs_folder() -> None:
    assert edit_base("https://github.com/o/r", "edit/main/docs/", "/x/docs") == "https://github.com/o/r/edit/main/"
    assert edit_base("https://github.com/o/r/", "https://e.org/edit/docs", "docs") == "https://e.org/edit/"
    assert edit_base(None, "edit/main/docs/", "docs") is None and edit_base("https://g/o/r", None, "docs") is None


def _git(root: Path, *args: str, date: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        env=env,
        capture_output=True,
    )


def test_the_date_each_range_last_changed_comes_from_git_blame(tmp_path: Path) -> None:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    profile = tmp_path / "ranges/profiles/tiny.yaml"
    profile.parent.mkdir(parents=True)
    profile.write_text(TINY_PROFILE, "utf-8")
    _git(tmp_path, "init", "-q", date="2026-01-02T10:00:00+00:00")
    _git(tmp_path, "add", ".", date="2026-01-02T10:00:00+00:00")
    _git(tmp_path, "commit", "-qm", "one", date="2026-01-02T10:00:00+00:00")
    profile.write_text(TINY_PROFILE.replace("min: 0.25, max: 4.5", "min: 0.25, max: 4.75"), "utf-8")
    _git(tmp_path, "commit", "-qam", "two", date="2026-03-04T10:00:00+00:00")
    profile.write_text(profile.read_text("utf-8").replace("min: 0.5, max: 0.9", "min: 0.5, max: 0.95"), "utf-8")
    dates = blame_dates(tmp_path, "ranges/profiles/tiny.yaml")
    lines = expectation_lines(profile.read_text("utf-8"), "tiny.yaml")
    assert dates[lines["train/grad_norm", 0][0]] == datetime.date(2026, 3, 4)
    assert dates[lines["train/grad_norm", 1][0]] == datetime.date(2026, 1, 2)
    assert lines["rollout/raw_reward", 0][0] not in dates  # not committed yet: no date
    span = (
        '<li><span class="mm-range mm-kind-band" data-profile="tiny" data-key="train/grad&#95;norm" '
        'data-index="0">0.25 to 4.75 per step</span> <span class="mm-profile">Tiny</span></li>'
    )
    out = Citations(tmp_path, "https://g.example/o/r/edit/main/").cite(span)
    assert f'href="https://g.example/o/r/edit/main/ranges/profiles/tiny.yaml#L{lines["train/grad_norm", 0][0]}"' in out
    assert '<time datetime="2026-03-04">2026-03-04</time>' in out and out.endswith("</span></li>")
    assert Citations(tmp_path, None).cite(span.replace("train/grad&#95;norm", "no/such")) == span.replace(
        "train/grad&#95;norm", "no/such"
    )


def test_without_git_there_is_no_date_and_generated_pages_never_carry_one(tiny: Path, monkeypatch) -> None:
    monkeypatch.setattr(cite.shutil, "which", lambda name: None)
    assert blame_dates(tiny, "ranges/profiles/tiny.yaml") == {}
    _, files = generate(tiny)  # what check compares: no date, no edit link, wherever it runs
    assert not any("mm-changed" in text or "mm-edit" in text for text in files.values())
