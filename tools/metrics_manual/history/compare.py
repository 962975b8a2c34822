"""`diff`'s two sides: each a git revision or the working tree, loaded and compared."""

from __future__ import annotations

from pathlib import Path

from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.history.diff import RangeDiff, Revision, diff_manuals
from metrics_manual.history.git import default_base, history_state, load_revision, resolve
from metrics_manual.source.load import load_manual

WORKING_TREE = "working tree"


def compare(root: Path, base: str | None, head: str | None) -> RangeDiff:
    """The ranges of `base` (default: the merge base with main) against `head` (default: the working tree).

    Raises UsageError (no history, unknown revision) or SourceError (ranges that do not load).
    """
    why = history_state(root)
    if why:
        raise UsageError(f"cannot read the history of the ranges: {why}")
    base_sha = resolve(root, base) if base else default_base(root)
    base_rev = Revision(name=base or "merge base with main", commit=base_sha)
    old = load_revision(root, base_sha)
    if head is None:
        return diff_manuals(old, load_manual(root), base_rev, Revision(name=WORKING_TREE))
    head_sha = resolve(root, head)
    return diff_manuals(old, load_revision(root, head_sha), base_rev, Revision(name=head, commit=head_sha))
