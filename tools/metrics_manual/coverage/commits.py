"""The checkout's own history: a commit's files, the files git says were renamed between two commits, a
commit's date, and whether one commit comes before another.

Everything is read from git's objects with plumbing (gitrun.output: nothing the checkout's config names
runs), never from the work tree: a file at a commit is what that commit holds, a link only the name it points
to (never read as a file), a file larger than the scan's cap is not read.
"""

from __future__ import annotations

import datetime
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from metrics_manual import gitrun
from metrics_manual.coverage.pyfile import MAX_FILE_BYTES

_REGULAR = ("100644", "100755")
_SHA = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class _Entry:
    sha: str
    size: int


class History:
    """The git history of a checkout at `root`, read once per commit and file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, dict[str, _Entry]] = {}
        self._blobs: dict[str, bytes | None] = {}  # blob id -> its bytes (None: too large or unreadable)

    def commit(self, rev: str) -> str | None:
        """The full id of the commit `rev` names, when the history holds it (a shallow clone may not)."""
        out = gitrun.output(self.root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
        sha = out.strip() if out else b""
        return sha.decode("ascii") if _SHA.fullmatch(sha) else None

    def before(self, older: str, newer: str) -> bool:
        """`older` is an ancestor of `newer` (or the same commit)."""
        return gitrun.output(self.root, "merge-base", "--is-ancestor", older, newer) is not None

    def files(self, commit: str) -> dict[str, _Entry]:
        """The regular files of the commit, by path (links, submodules and folders left out)."""
        if commit not in self._trees:
            out = gitrun.output(self.root, "ls-tree", "-r", "-l", "-z", "--full-tree", commit) or b""
            tree: dict[str, _Entry] = {}
            for entry in out.split(b"\0"):
                meta, _, raw_path = entry.partition(b"\t")
                parts = meta.decode("ascii", "replace").split()
                if len(parts) == 4 and parts[0] in _REGULAR and parts[1] == "blob" and parts[3].isdigit():
                    tree[os.fsdecode(raw_path)] = _Entry(parts[2], int(parts[3]))
            self._trees[commit] = tree
        return self._trees[commit]

    def read(self, commit: str, paths: Iterable[str]) -> dict[str, bytes | None]:
        """The bytes of each path at the commit; None for a path it does not hold as a regular file, or one
        larger than the scan reads. The blobs are read in one `git cat-file --batch`."""
        tree = self.files(commit)
        wanted = {p: tree[p] for p in paths if p in tree}
        todo = sorted({e.sha for e in wanted.values() if e.sha not in self._blobs and e.size <= MAX_FILE_BYTES})
        if todo:
            self._blobs.update(self._batch(todo))
        out: dict[str, bytes | None] = {p: None for p in paths}
        for p, e in wanted.items():
            out[p] = self._blobs.get(e.sha)
        return out

    def _batch(self, shas: list[str]) -> dict[str, bytes | None]:
        raw = gitrun.output(self.root, "cat-file", "--batch", stdin="".join(s + "\n" for s in shas).encode("ascii"))
        got: dict[str, bytes | None] = dict.fromkeys(shas)
        at = 0
        while raw is not None and at < len(raw):
            end = raw.find(b"\n", at)
            if end < 0:
                break
            head = raw[at:end].split()
            if len(head) != 3 or not head[2].isdigit():  # `<sha> missing`
                at = end + 1
                continue
            size = int(head[2])
            got[head[0].decode("ascii", "replace")] = raw[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return got

    def renames(self, base: str, head: str) -> dict[str, str]:
        """The files git's rename detection says were renamed from `base` to `head`: old path -> new path."""
        out = gitrun.output(self.root, "diff-tree", "-r", "-z", "-M", "--name-status", base, head)
        fields = out.split(b"\0") if out else []
        renamed: dict[str, str] = {}
        i = 0
        while i < len(fields):
            status = fields[i]
            if status.startswith(b"R") and i + 2 < len(fields):
                renamed[os.fsdecode(fields[i + 1])] = os.fsdecode(fields[i + 2])
                i += 3
            elif status.startswith(b"C") and i + 2 < len(fields):
                i += 3
            else:
                i += 2
        return renamed

    def date(self, commit: str) -> str | None:
        """The commit's date (its committer's, in the committer's time zone) as YYYY-MM-DD."""
        out = gitrun.output(self.root, "cat-file", "commit", commit) or b""
        m = re.search(rb"^committer .*> (\d+) ([+-])(\d\d)(\d\d)$", out.split(b"\n\n", 1)[0], re.MULTILINE)
        if m is None:
            return None
        sign = 1 if m[2] == b"+" else -1
        zone = datetime.timezone(sign * datetime.timedelta(hours=int(m[3]), minutes=int(m[4])))
        return datetime.datetime.fromtimestamp(int(m[1]), zone).date().isoformat()
