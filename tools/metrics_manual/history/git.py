"""The ranges of a git revision, read with git plumbing (never a checkout), and the commits that touched them."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from metrics_manual import gitrun
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, SourceError, UsageError
from metrics_manual.source.load import Manual, load_manual
from metrics_manual.source.reader import MAX_BYTES, too_large
from metrics_manual.source.reference import Unusable
from metrics_manual.text import clip, shown, shown_path

RANGES = "ranges"
MAIN_BRANCHES = ("main", "origin/main", "master", "origin/master")
# All the files of one revision's ranges/ together (a file alone: the loader's MAX_BYTES): a tree can name
# one compressed blob a thousand times, and each name would be a file written out.
MAX_REVISION_BYTES = 4 * MAX_BYTES


class NoHistory(Exception):
    """The project has no git history to read (not a repository, or a shallow clone)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # YYYY-MM-DD, the author date
    subject: str
    parent: str | None


def git(root: Path, *args: str, check: bool = True) -> str:
    """git's output, run in root with a fixed environment and nothing of the repository's config run (gitrun)."""
    try:
        out = subprocess.run(
            gitrun.command(*args), cwd=root, capture_output=True, env=gitrun.environment(), check=False
        )
    except FileNotFoundError:
        raise NoHistory("git is not installed") from None
    if check and out.returncode != 0:
        raise UsageError(f"git {' '.join(args)}: {out.stderr.decode('utf-8', 'replace').strip()}")
    return out.stdout.decode("utf-8", "replace")


def history_state(root: Path) -> str | None:
    """Why the history cannot be read ('not a git repository', 'a shallow clone'), or None when it can."""
    try:
        inside = git(root, "rev-parse", "--is-inside-work-tree", check=False).strip()
    except NoHistory as exc:
        return str(exc)
    if inside != "true":
        return "not a git repository"
    top = git(root, "rev-parse", "--show-toplevel", check=False).strip()
    if not top or Path(top).resolve() != root.resolve():
        return "a project that is not the top folder of its git repository"
    if git(root, "rev-parse", "--is-shallow-repository", check=False).strip() == "true":
        return "a shallow clone"
    if not git(root, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
        return "a repository without commits"
    return None


def resolve(root: Path, rev: str) -> str:
    """The full commit id of `rev`; UsageError when it names no one commit (nothing, a range, an option)."""
    if not rev.strip() or rev.startswith("-"):
        raise UsageError(f"not a revision: {shown(rev)}; name a commit, a branch or a tag")
    out = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}", check=False)
    if re.fullmatch(r"[0-9a-f]{40}\n?|[0-9a-f]{64}\n?", out):
        return out.strip()
    if out.strip():  # `A..B`, `A...B`: more than one commit
        raise UsageError(f"not a revision: {shown(rev)} is not one commit; name BASE and HEAD apart: diff A B")
    raise UsageError(f"unknown revision {shown(rev)}")


@dataclass(frozen=True)
class Base:
    """The revision `diff` compares with when none is named."""

    sha: str
    name: str  # how the output names it
    note: str | None = None  # when the base is HEAD itself: that, and the bases a user probably meant


def default_base(root: Path) -> Base:
    """The merge base of HEAD with the main branch (main, or origin/main, master ...).

    On the main branch itself (or one that main holds whole) that merge base is HEAD: only the
    working tree's changes would show, so the base says so, with the bases the user probably meant.
    """
    head = git(root, "rev-parse", "HEAD").strip()
    for branch in MAIN_BRANCHES:
        if git(root, "rev-parse", "--verify", "--quiet", branch, check=False).strip():
            base = git(root, "merge-base", "HEAD", branch, check=False).strip()
            if base and base != head:
                return Base(base, f"merge base with {branch}")
            if base:
                return Base(base, f"merge base with {branch}: HEAD itself", _itself(root, branch, head))
    raise UsageError("no main branch to compare with; name the base revision: metrics-manual diff BASE")


def _itself(root: Path, branch: str, head: str) -> str:
    """Why the merge base with `branch` shows no commit of HEAD, and what to name instead."""
    meant = []
    upstream = git(root, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}", check=False).strip()
    for other in dict.fromkeys([upstream, *MAIN_BRANCHES]):
        if other and git(root, "rev-parse", "--verify", "--quiet", other, check=False).strip():
            base = git(root, "merge-base", "HEAD", other, check=False).strip()
            if base and base != head:
                meant.append(
                    f"metrics-manual diff {other} ({'the upstream' if other == upstream else 'its merge base'})"
                )
    before = _before_ranges_changed(root)
    if before:
        meant.append(before)
    said = (
        f"the base is HEAD itself: {branch} holds every commit of HEAD, so their merge base is HEAD and only "
        "the working tree's changes show"
    )
    if not meant:
        return f"{said}; name a base to see the changes of commits: metrics-manual diff BASE"
    return f"{said}; to see the changes of your commits, name a base: {'; or '.join(meant)}"


def _before_ranges_changed(root: Path, most: int = 10_000) -> str | None:
    """`metrics-manual diff HEAD~N`: the last commit before the latest commits in a row that changed ranges/."""
    history = git(root, "rev-list", "--first-parent", f"--max-count={most}", "HEAD").split()
    touched = set(
        git(root, "log", "--first-parent", f"--max-count={most}", "--format=%H", "HEAD", "--", RANGES).split()
    )
    latest = next((i for i, sha in enumerate(history) if sha in touched), None)
    if latest is None:
        return None
    n = latest
    while n < len(history) and history[n] in touched:
        n += 1
    if n == len(history):  # the first commit made ranges/: nothing before it to compare with
        return None
    changed = n - latest
    what = "commit that changed" if changed == 1 else f"{changed} commits in a row that changed"
    return f"metrics-manual diff HEAD~{n} ({history[n][:12]}, the last commit before the latest {what} ranges/)"


def load_revision(root: Path, sha: str) -> Manual:
    """The ranges of one commit through the normal loader: its files copied out of git into a temp folder.

    Findings name the file as `<commit>:ranges/...`. A commit without ranges/ raises SourceError, and so
    does one whose tree names a place outside the temp folder or holds a file larger than the loader reads.
    """
    listing = git(root, "ls-tree", "-r", "-l", "-z", "--full-tree", sha, "--", RANGES)
    with tempfile.TemporaryDirectory(prefix="metrics-manual-rev-") as tmp:
        refused = _copy_out(root, sha, listing, Path(tmp))
        if refused:
            raise SourceError(refused)
        if not (Path(tmp) / RANGES / "catalog.yaml").is_file():
            raise SourceError(
                [
                    Finding(
                        f"{sha[:12]}:{RANGES}/catalog.yaml",
                        1,
                        1,
                        "no catalog at this revision",
                        code=codes.NO_CATALOG_AT_REVISION,
                    )
                ]
            )
        try:
            return load_manual(Path(tmp), captures=RevisionCaptures(root, sha))
        except SourceError as err:
            raise SourceError(
                [
                    Finding(f"{sha[:12]}:{f.path}", f.line, f.col, f.message, f.severity, code=f.code)
                    for f in err.findings
                ]
            ) from None


@dataclass(frozen=True)
class RevisionCaptures:
    """A revision's capture files, read from git as its ranges are (the references of its corridors)."""

    root: Path
    sha: str

    def read(self, path: str) -> bytes:
        listing = git(self.root, "ls-tree", "-l", "-z", "--full-tree", self.sha, "--", path, check=False)
        for entry in listing.split("\0"):
            if not entry:
                continue
            meta, name = entry.split("\t", 1)
            mode, kind, blob, size = meta.split()
            if name != path:
                continue
            if mode == "120000":
                raise Unusable(f"{path} is a symlink at this revision; a reference is read from a real file")
            if kind != "blob":
                raise Unusable(f"{path} is not a file at this revision")
            if big := too_large(int(size), MAX_BYTES):
                raise Unusable(f"capture {path}: {big}")
            try:
                return read_blob(self.root, blob, int(size))
            except OSError as exc:
                raise Unusable(f"capture {path} cannot be read at this revision ({exc.strerror})") from None
        raise Unusable(f"capture {path} is missing", codes.CAPTURE_MISSING)


def _copy_out(root: Path, sha: str, listing: str, tmp: Path) -> list[Finding]:
    """The blobs of `ls-tree -r -l -z` written under tmp; a finding for each entry that is not.

    The tree is untrusted (`git hash-object --literally` makes entries named '..'): a path is
    written only when each of its parts is a plain name, each file is created anew (never through
    a link, never over another entry), and a blob's size is known from the tree before it is read.
    """
    found: list[Finding] = []
    total = 0
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob, size = meta.split()
        if kind != "blob" or mode == "120000":  # a link is not followed, as the loader never follows one out
            continue
        where = f"{sha[:12]}:{clip(shown_path(path))}"
        parts = path.split("/")
        bad = next((p for p in parts if p in ("", ".", "..")), None)
        if bad is not None:
            why = f"a tree entry named {bad!r} would be written outside {RANGES}/; this revision's ranges are not read"
            found.append(Finding(where, 1, 1, why, code=codes.UNSAFE_TREE_ENTRY))
            continue
        if big := too_large(int(size), MAX_BYTES):
            found.append(Finding(where, 1, 1, big, code=codes.UNREADABLE_FILE))
            continue
        total += int(size)
        if total > MAX_REVISION_BYTES:
            why = (
                f"the files of {RANGES}/ at this revision have more than {MAX_REVISION_BYTES:,} bytes; "
                "the rest is not read"
            )
            found.append(Finding(where, 1, 1, why, code=codes.UNREADABLE_FILE))
            break
        try:
            _write_new(tmp, parts, read_blob(root, blob, int(size)))
        except OSError as exc:  # two entries of one name, a file where a folder is
            why = f"cannot copy the tree entry out ({exc.strerror}); this revision's ranges are not read"
            found.append(Finding(where, 1, 1, why, code=codes.UNSAFE_TREE_ENTRY))
    return found


def _write_new(tmp: Path, parts: list[str], data: bytes) -> None:
    """`data` as a new file tmp/parts..., its folders made one by one, none of them followed if a link."""
    at = tmp
    for name in parts[:-1]:
        at = at / name
        try:
            at.mkdir()
        except FileExistsError:
            if at.is_symlink() or not at.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from None
    target = at / parts[-1]
    if not target.resolve().is_relative_to(tmp.resolve()):  # the checks above make this hold: kept as the last word
        raise PermissionError(errno.EACCES, "outside the temp folder")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    with open(fd, "wb", closefd=True) as f:
        f.write(data)


def read_blob(root: Path, blob: str, size: int) -> bytes:
    """The blob's bytes, at most `size` of them (its size as the tree gave it, already held to the cap)."""
    with subprocess.Popen(
        gitrun.command("cat-file", "blob", blob),
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=gitrun.environment(),
    ) as p:
        assert p.stdout is not None
        data = p.stdout.read(size + 1)
        p.kill()
    if len(data) != size:
        raise OSError(errno.EIO, f"the blob has another size than the tree states ({size:,} bytes)")
    return data


def commits_touching_ranges(root: Path) -> list[Commit]:
    """Every commit of HEAD's history that changed ranges/, newest first (merges as their first parent sees them)."""
    out = git(root, "log", "--first-parent", "--format=%H%x00%ad%x00%s", "--date=short", "HEAD", "--", RANGES)
    commits = []
    for line in out.splitlines():
        sha, date, subject = line.split("\0", 2)
        # The real first parent (path limiting would show a rewritten one).
        parent = git(root, "rev-parse", "--verify", "--quiet", f"{sha}^1", check=False).strip() or None
        commits.append(Commit(sha, date, subject, parent))
    return commits
