"""judge --follow's look at a run's folders: the files read.py's folder_files lists, found again
without listing every folder at every poll."""

from __future__ import annotations

import os
import time
from pathlib import Path

import run_forms
from judge_fixture import clean_run
from metrics_manual.runs.follow import RunFollower, _Listing
from metrics_manual.runs.read import folder_files

STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}


def tree(root: Path) -> None:
    for rel in ["a/b.jsonl", "a-c.jsonl", "a/x/y.txt", "z.csv", ".hidden/h.jsonl", "a/.h.jsonl", "b/.t/q.jsonl"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n", "utf-8")
    (root / "link-to-a").symlink_to(root / "a", target_is_directory=True)
    (root / "link.jsonl").symlink_to(root / "z.csv")
    (root / "dangling.jsonl").symlink_to(root / "nowhere")


def test_the_listing_is_folder_files(tmp_path: Path) -> None:
    tree(tmp_path)
    listing = _Listing(tmp_path)
    files, new = listing.files()
    assert files == folder_files(tmp_path) == new
    (tmp_path / "a" / "x" / "late.jsonl").write_text("{}\n", "utf-8")
    (tmp_path / "a-c.jsonl").unlink()
    (tmp_path / "n" / "m").mkdir(parents=True)
    (tmp_path / "n" / "m" / "deep.jsonl").write_text("{}\n", "utf-8")
    files, new = listing.files()
    assert files == folder_files(tmp_path)
    assert new == [tmp_path / "a" / "x" / "late.jsonl", tmp_path / "n" / "m" / "deep.jsonl"]
    assert listing.files() == (files, [])


def test_a_file_made_within_the_folders_clock_tick_is_found(tmp_path: Path) -> None:
    """A coarse clock leaves a folder's mtime as it was when a file is made just after a listing:
    a listing made so soon after the folder's last change is made again."""
    listing = _Listing(tmp_path)
    assert listing.files() == ([], [])
    before = os.stat(tmp_path).st_mtime_ns
    (tmp_path / "new.jsonl").write_text("{}\n", "utf-8")
    os.utime(tmp_path, ns=(before, before))
    assert listing.files()[0] == [tmp_path / "new.jsonl"]


def test_a_folder_listed_long_after_its_last_change_is_not_listed_again(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text("{}\n", "utf-8")
    old = time.time_ns() - 10**10
    os.utime(tmp_path, ns=(old, old))
    listing = _Listing(tmp_path)
    listing.files()
    (tmp_path / "unseen.jsonl").write_text("{}\n", "utf-8")
    os.utime(tmp_path, ns=(old, old))  # as if its mtime had not moved: the listing is trusted
    assert listing.files()[0] == [tmp_path / "f.jsonl"]


def test_a_file_of_no_known_form_is_looked_at_again_until_its_first_line_is_whole(tmp_path: Path) -> None:
    (path,) = run_forms.write_dashboard(clean_run(), tmp_path / "src")
    live = tmp_path / "live"
    live.mkdir()
    (live / "notes.txt").write_text("not a run\n", "utf-8")
    follower = RunFollower([live], STEP_KEYS)
    growing = live / "metrics.jsonl"
    growing.write_bytes(path.read_bytes()[:20])  # a first line still being written: no form yet
    assert not follower.poll()
    growing.write_bytes(path.read_bytes())
    assert follower.poll()
    assert "rollout/raw_reward" in follower.snapshot().series
