"""The Miles checkout against its own commit: HEAD, and the files that differ from it.

Evidence verified "at the catalog's commit" holds only if the files read are that commit's. git's own
answer (`git status`) would hash changed files through the filter drivers the checkout's config names,
so the files are compared here: HEAD's tree is listed with git plumbing (gitrun: nothing of the
checkout's config runs) and each file of the same size is hashed as git hashes a blob. A Python file the
scan reads that HEAD does not hold counts too.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from metrics_manual import gitrun
from metrics_manual.coverage.scan import python_files

_CHUNK = 1 << 20


def changed_files(root: Path, commit: str) -> list[str]:
    """The files of the checkout that differ from `commit`: changed, gone, of another kind, or a Python
    file the scan reads that the commit does not hold. Sorted; all of them when the tree cannot be listed."""
    listing = gitrun.output(root, "ls-tree", "-r", "-l", "-z", "--full-tree", commit)
    if listing is None:
        return ["(the commit's files could not be listed)"]
    top = root.resolve()
    tracked: set[str] = set()
    changed: list[str] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, raw_path = entry.split(b"\t", 1)
        mode, kind, sha, size = meta.decode("ascii", "replace").split()
        path = os.fsdecode(raw_path)
        tracked.add(path)
        if kind == "blob" and not _same(root, top, path, mode, sha, size):
            changed.append(path)
    for p in python_files(root):
        rel = p.relative_to(root).as_posix()
        if rel not in tracked:
            changed.append(rel)
    return sorted(changed)


def _same(root: Path, top: Path, path: str, mode: str, sha: str, size: str) -> bool:
    """The file at `path` is the blob `sha` (a link: its target is), read without following a link."""
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return False
    file = root.joinpath(*parts)
    try:
        if not file.parent.resolve().is_relative_to(top):  # a folder of the checkout that is a link out
            return False
        st = os.lstat(file)
        if mode == "120000":
            return stat.S_ISLNK(st.st_mode) and _blob_id(os.fsencode(os.readlink(file)), sha) == sha
        if not stat.S_ISREG(st.st_mode) or st.st_size != int(size):
            return False
        return _file_id(file, st.st_size, sha) == sha
    except (OSError, RuntimeError, ValueError):
        return False


def _hasher(sha: str) -> hashlib._Hash:
    return hashlib.sha256() if len(sha) == 64 else hashlib.sha1()  # noqa: S324 - git's object ids


def _blob_id(data: bytes, sha: str) -> str:
    h = _hasher(sha)
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def _file_id(file: Path, size: int, sha: str) -> str:
    """The blob id of a regular file of `size` bytes, read in chunks (O_NONBLOCK: never a pipe's wait)."""
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb", closefd=True) as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        h = _hasher(sha)
        h.update(b"blob %d\0" % size)
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
