"""A revision's ranges read from a hostile commit: tree entries that name a place outside the temp folder."""

from __future__ import annotations

import binascii
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, write_project
from git_helpers import commit, git


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
