"""The Changes page: every commit that changed ranges/, newest first, with its diff in words.

The page is a function of the repository's committed history, so it is made by the MkDocs
plugin when the site is built (`mkdocs build`, `mike deploy`) and never written under docs/:
`metrics-manual check` compares docs/ with ranges/ and must give the same answer in a fresh
clone, in a shallow one and in a copy without git, and a page written at build time could
not even hold the commit that adds it. Without history (no git, a shallow clone) the page
says so; its per-metric anchors exist either way, so the reference page's links to them hold.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from metrics_manual import gitrun
from metrics_manual.diagnostics.finding import ManualError
from metrics_manual.history.diff import RangeDiff, Revision, changed_keys, diff_manuals
from metrics_manual.history.git import Commit, commits_touching_ranges, git, history_state, load_revision
from metrics_manual.history.report import to_markdown
from metrics_manual.markdown import code, literal
from metrics_manual.source.load import Manual

PAGE = "changes.md"
REFERENCE = "reference/metrics/"  # each catalog section has a page here: <section id>.md


def commit_anchor(sha: str) -> str:
    return f"c-{sha[:12]}"


class History:
    """The ranges at each commit that changed them, loaded once each."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.loaded: dict[str, Manual | None | ManualError] = {}

    def at(self, sha: str | None) -> Manual | None:
        """The manual at `sha` (None before the first commit or where ranges/ had no catalog); raises ManualError."""
        if sha is None:
            return None
        if sha not in self.loaded:
            try:
                self.loaded[sha] = load_revision(self.root, sha)
            except ManualError as err:
                self.loaded[sha] = err
        got = self.loaded[sha]
        if isinstance(got, ManualError):
            raise got
        return got

    def diff(self, c: Commit) -> RangeDiff | str:
        """The commit's change to the ranges, or why it cannot be told."""
        try:
            new = self.at(c.sha)
        except ManualError:
            return "ranges/ did not load at this commit, so its changes cannot be told."
        try:
            old = self.at(c.parent)
        except ManualError:
            old = None  # the parent's ranges did not load: everything shows as added
        return diff_manuals(
            old, new, Revision(name=c.parent or "nothing", commit=c.parent), Revision(name=c.sha, commit=c.sha)
        )


def history_head(root: Path) -> str | None:
    """HEAD's commit, or None without readable history (what the page's cache is keyed on)."""
    return None if history_state(root) else gitrun.head_commit(root)


def changes_page_without_history(manual: Manual, why: str) -> str:
    return changes_page(None, manual, why=why)


def changes_page(root: Path | None, manual: Manual, *, why: str | None = None) -> str:
    """The Markdown of the Changes page for the project at root, with `manual` the ranges it documents."""

    why = why or (history_state(root) if root is not None else "no project")
    out = [
        "---",
        "title: Changes",
        "---",
        "# Changes to the ranges",
        "",
        "Every commit that changed `ranges/`, newest first, with what changed in the words of this manual.",
        "This page is made from the repository's history when the site is built.",
        "",
    ]
    by_key: dict[str, list[tuple[Commit, str]]] = {}
    if why:
        out += [
            '!!! note "No history"',
            "",
            f"    The site was built from {literal(why)}, without the git history of `ranges/`, so the changes are left out.",
            "",
        ]
    elif root is not None:
        history = History(root)
        head = git(root, "rev-parse", "HEAD").strip()
        commits = commits_touching_ranges(root)
        if not commits:
            out += ["No commit has changed `ranges/` yet.", ""]
        for c in commits:
            d = history.diff(c)
            out += [f"## {c.date} {code(c.sha[:12])} {literal(c.subject)} {{#{commit_anchor(c.sha)}}}", ""]
            if isinstance(d, str):
                out += [d, ""]
                continue
            for key in changed_keys(d):
                by_key.setdefault(key, []).append((c, c.subject))
            if d.empty:
                out += ["The files changed in form only: the ranges they hold are the same.", ""]
                continue
            body = to_markdown(d, heading="###", header=False, metric_link=_linker(manual))
            out += [body.rstrip("\n"), ""]
        out.append(f"Built at commit {code(head[:12])}.")
        out.append("")
    out += ["## By metric {#by-metric}", "", "The commits that changed each metric of the reference page.", ""]
    link = _linker(manual)
    for key, m in manual.metrics.items():
        out += [f"### {code(key)} {{#{m.anchor}}}", ""]
        entries = by_key.get(key, [])
        if why:
            out.append("History not available in this build.")
        elif not entries:
            out.append("No recorded change.")
        for c, subject in entries:
            out.append(f"- [{c.date} {code(c.sha[:12])}](#{commit_anchor(c.sha)}) {literal(subject)}")
        out += ["", f"[The metric on the reference page]({link(key)})", ""]
    return "\n".join(out)


def _linker(manual: Manual) -> Callable[[str], str | None]:
    """Links to the reference page for the keys it still has (a link to a gone anchor would fail the strict build)."""
    pages = {m.key: f"{REFERENCE}{s.id}.md#{m.anchor}" for s in manual.catalog.sections for m in s.metrics}

    def link(key: str) -> str | None:
        return pages.get(key)

    return link
