"""`diff`'s two sides: each a git revision or the working tree, loaded and compared."""

from __future__ import annotations

from pathlib import Path

from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.history.diff import RangeDiff, Revision, diff_manuals
from metrics_manual.history.git import Base, default_base, history_state, load_revision, resolve
from metrics_manual.source.load import load_manual

WORKING_TREE = "working tree"


def compare(root: Path, base: str | None, head: str | None) -> tuple[RangeDiff, str | None]:
    """The ranges of `base` (default: the merge base with main) against `head` (default: the working
    tree), and what the user should know of the base it chose (None when BASE was named, or the
    merge base is not HEAD itself).

    Raises UsageError (no history, unknown revision) or SourceError (ranges that do not load).
    """
    why = history_state(root)
    if why:
        raise UsageError(f"cannot read the history of the ranges: {why}")
    found = Base(resolve(root, base), base) if base is not None else default_base(root)
    base_rev = Revision(name=found.name, commit=found.sha)
    old = load_revision(root, found.sha)
    if head is None:  # an empty HEAD is resolved, and refused, like any other
        return diff_manuals(old, load_manual(root), base_rev, Revision(name=WORKING_TREE)), found.note
    head_sha = resolve(root, head)
    return diff_manuals(old, load_revision(root, head_sha), base_rev, Revision(name=head, commit=head_sha)), found.note
