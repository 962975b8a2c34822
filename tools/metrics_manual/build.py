"""The pipeline: ranges/ -> model -> pages, exports and schemas in memory; and the build that writes them."""

from __future__ import annotations

from pathlib import Path

from metrics_manual.disk.switch import Plan, apply, locked, plan, recover
from metrics_manual.exports.generated import render_exports, source_schemas
from metrics_manual.exports.profile import site_url
from metrics_manual.history.diff import diff_schema
from metrics_manual.judge.verdict import verdict_schemas
from metrics_manual.runs.capture import captured_runs_by_profile, captures_in_repo
from metrics_manual.site.render import render_pages
from metrics_manual.source.load import Manual, gc_paused, load_manual


def generate(root: Path, manual: Manual | None = None) -> tuple[Manual, dict[str, str]]:
    """Everything `build` writes, path relative to root -> text. Raises SourceError."""
    with gc_paused():
        manual = manual or load_manual(root)
        captured = captured_runs_by_profile(root, manual.profiles, manual.catalog)
        in_repo = {p.id: bool(captures_in_repo(root, p)) for p in manual.profiles}
        files = {
            **render_pages(manual, root, captured, in_repo),
            **render_exports(manual, site_url(root)),
            **source_schemas(),
            **verdict_schemas(),
            **diff_schema(),
        }
    return manual, files


def build(root: Path) -> tuple[Manual, Plan]:
    """Validate, generate and bring docs/ to the new files: one build at a time, all or nothing.

    Raises SourceError on bad input and files.WriteError when it cannot write; either way
    the files on disk are the old ones.
    """
    with locked(root):
        recover(root)
        manual, files = generate(root)
        todo = plan(root, files)
        apply(root, todo)
    return manual, todo
