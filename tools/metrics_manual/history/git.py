"""The ranges of a git revision, read with git plumbing (never a checkout), and the commits that touched them."""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, SourceError, UsageError
from metrics_manual.source.load import Manual, load_manual

RANGES = "ranges"
MAIN_BRANCHES = ("main", "origin/main", "master", "origin/master")


class NoHistory(Exception):
    """The project has no git history to read (not a repository, or a shallow clone)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str  # YYYY-MM-DD, the author date
    subject: str
    parent: str | None


def git(root: Path, *args: str, check: bool = True) -> str:
    """git's output, run in root with a fixed environment (no pager, no user config of the reader's)."""
    env = {**os.environ, "GIT_PAGER": "cat", "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1"}
    try:
        out = subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)
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
    """The full commit id of `rev`; UsageError when it names no commit."""
    if rev.startswith("-"):
        raise UsageError(f"not a revision: {rev!r}")
    sha = git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).strip()
    if not sha:
        raise UsageError(f"unknown revision {rev!r}")
    return sha


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

    Findings name the file as `<commit>:ranges/...`. A commit without ranges/ raises SourceError.
    """
    listing = git(root, "ls-tree", "-r", "-z", "--full-tree", sha, "--", RANGES)
    entries = [e for e in listing.split("\0") if e]
    with tempfile.TemporaryDirectory(prefix="metrics-manual-rev-") as tmp:
        for entry in entries:
            meta, path = entry.split("\t", 1)
            mode, kind, blob = meta.split()
            if kind != "blob" or mode == "120000":  # a link is not followed, as the loader never follows one out
                continue
            target = Path(tmp, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_blob(root, blob))
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
            return load_manual(Path(tmp))
        except SourceError as err:
            raise SourceError(
                [
                    Finding(f"{sha[:12]}:{f.path}", f.line, f.col, f.message, f.severity, code=f.code)
                    for f in err.findings
                ]
            ) from None


def _blob(root: Path, blob: str) -> bytes:
    out = subprocess.run(["git", "cat-file", "blob", blob], cwd=root, capture_output=True, check=True)
    return out.stdout


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
