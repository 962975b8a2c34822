"""A revision's ranges read from a hostile commit: tree entries that name a place outside the temp folder,
two entries of one name, blobs larger than the loader reads. Each is a finding; nothing is written outside."""

from __future__ import annotations

import binascii
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli, write_project
from git_helpers import commit, git
from metrics_manual.diagnostics.finding import ManualError, SourceError
from metrics_manual.history import git as history_git
from metrics_manual.history.changes import changes_page
from metrics_manual.source.load import load_manual

Entry = tuple[str, str, str]  # mode, name, object id


def _git_out(root: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, input=data, capture_output=True, check=True).stdout.decode().strip()


def _tree(root: Path, entries: list[Entry]) -> str:
    """A tree object written as is (`--literally`: git's own name checks do not run)."""
    data = b"".join(f"{mode} {name}".encode() + b"\0" + binascii.unhexlify(sha) for mode, name, sha in entries)
    return _git_out(root, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", data=data)


def _blob(root: Path, data: bytes) -> str:
    return _git_out(root, "hash-object", "-w", "--stdin", data=data)


def _entries(root: Path, rev: str) -> list[Entry]:
    out = []
    for line in _git_out(root, "ls-tree", rev).splitlines():
        meta, name = line.split("\t")
        mode, _, sha = meta.split()
        out.append((mode, name, sha))
    return out


def _commit_with_ranges(root: Path, extra: list[Entry]) -> str:
    """A commit on HEAD whose ranges/ holds HEAD's entries and `extra`, written without git's checks."""
    ranges = _tree(root, _entries(root, "HEAD:ranges") + extra)
    top = [(m, n, ranges if n == "ranges" else s) for m, n, s in _entries(root, "HEAD")]
    return git(root, "commit-tree", _tree(root, top), "-p", "HEAD", "-m", "hostile")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = write_project(tmp_path / "proj")
    git(root, "init", "-q", "-b", "main")
    commit(root, "first ranges")
    return root


def _escaping(root: Path, outside: Path) -> list[Entry]:
    """ranges/../../.../<outside>: a chain of trees named '..' far enough up to reach /, then down to `outside`."""
    sub = _tree(root, [("100644", outside.name, _blob(root, b"written by a tree entry named ..\n"))])
    for part in reversed(outside.parent.parts[1:]):
        sub = _tree(root, [("40000", part, sub)])
    for _ in range(len(Path("/tmp").parts) + 8):
        sub = _tree(root, [("40000", "..", sub)])
    return [("40000", "..", sub)]


def test_diff_never_writes_outside_its_temp_folder(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "escaped" / "pwned.yaml"
    evil = _commit_with_ranges(repo, _escaping(repo, outside))
    out = run_cli("diff", "--root", str(repo), "HEAD", evil)
    assert not outside.exists(), "diff wrote a file named by a hostile commit outside its temp folder"
    assert out.returncode == 2
    assert f"{evil[:12]}:ranges/../" in out.stderr
    assert "a tree entry named '..' would be written outside ranges/" in out.stderr and "[MM702]" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_the_changes_page_of_a_hostile_history_writes_nothing_outside(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "escaped-by-the-site" / "pwned.yaml"
    evil = _commit_with_ranges(repo, _escaping(repo, outside))
    git(repo, "update-ref", "refs/heads/main", evil)  # the hostile commit in the history the page walks
    page = changes_page(repo, load_manual(repo))
    assert not outside.exists()
    section = page.split(f"{{#c-{evil[:12]}}}", 1)[1].split("\n## ", 1)[0]
    assert "ranges/ did not load at this commit" in section


@pytest.mark.parametrize("name", [".", "a/../..", "/etc", "a//b"])
def test_every_name_that_is_not_a_plain_name_is_refused(repo: Path, name: str) -> None:
    evil = _commit_with_ranges(repo, [("100644", name, _blob(repo, b"x: 1\n"))])
    with pytest.raises(SourceError) as err:
        history_git.load_revision(repo, evil)
    (f,) = err.value.findings
    assert f.code.id == "MM702" and f.path.startswith(f"{evil[:12]}:ranges/")


def test_an_empty_name_is_refused_by_git_itself(repo: Path) -> None:
    evil = _commit_with_ranges(repo, [("100644", "", _blob(repo, b"x: 1\n"))])
    with pytest.raises(ManualError, match="empty filename in tree entry"):
        history_git.load_revision(repo, evil)


def test_two_entries_of_one_name_are_a_finding(repo: Path) -> None:
    twice = ("100644", "catalog.yaml", _blob(repo, b"title: second\n"))
    evil = _commit_with_ranges(repo, [twice])
    with pytest.raises(SourceError) as err:
        history_git.load_revision(repo, evil)
    (f,) = err.value.findings
    assert f.code.id == "MM702" and f.path == f"{evil[:12]}:ranges/catalog.yaml"
    assert "cannot copy the tree entry out (File exists)" in f.message


def test_a_blob_over_the_cap_is_never_read(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    big = ("100644", "zz.yaml", _blob(repo, b"#" * 5000))
    evil = _commit_with_ranges(repo, [big])
    monkeypatch.setattr(history_git, "MAX_BYTES", 4999)
    read: list[str] = []
    real = history_git.read_blob
    monkeypatch.setattr(history_git, "read_blob", lambda root, sha, size: read.append(sha) or real(root, sha, size))
    with pytest.raises(SourceError) as err:
        history_git.load_revision(repo, evil)
    (f,) = err.value.findings
    assert f.code.id == "MM202" and f.path == f"{evil[:12]}:ranges/zz.yaml"
    assert f.message == "the file has 5,000 bytes; a source file may have at most 4,999"
    assert big[2] not in read and read, "the blob over the cap was read (or no blob at all)"


def test_one_blob_named_many_times_stops_at_the_revision_cap(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blob = _blob(repo, b"#" * 1000)
    evil = _commit_with_ranges(repo, [("100644", f"copy{i:02}.yaml", blob) for i in range(20)])
    monkeypatch.setattr(history_git, "MAX_REVISION_BYTES", 5500)  # the tiny source and a few copies
    with pytest.raises(SourceError) as err:
        history_git.load_revision(repo, evil)
    (f,) = err.value.findings
    assert f.code.id == "MM202" and "at this revision have more than 5,500 bytes" in f.message
