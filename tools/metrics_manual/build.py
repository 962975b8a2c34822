"""The pipeline: ranges/ -> model -> pages, exports and schemas in memory; and the build that writes them."""

from __future__ import annotations

from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, SourceError, UsageError
from metrics_manual.disk.files import Plan, apply, locked, plan, recover
from metrics_manual.exports.formats import export_document, render_exports, source_schemas
from metrics_manual.history.diff import diff_schema
from metrics_manual.judge.rules import verdict_schemas
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs.capture import captured_runs_by_profile, captures_in_repo
from metrics_manual.site.render import render_pages
from metrics_manual.source.load import Manual, did_you_mean, gc_paused, load_manual

NO_SITE_URL = (
    "note: site_url is unset in mkdocs.yml (set SITE_URL to where the manual is published): "
    "the exports and the site leave the manual's address out"
)


def site_url(root: Path) -> str | None:
    """site_url of mkdocs.yml as MkDocs reads it, so `!ENV [SITE_URL, ...]` and INHERIT work as they do there."""
    path = root / "mkdocs.yml"
    if not path.is_file():
        return None
    # Imported here: MkDocs' config machinery takes a tenth of a second to import, and only exports need it.
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.exceptions import ConfigurationError
    from mkdocs.utils.yaml import get_yaml_loader, yaml_load

    try:
        with path.open("rb") as fh:
            config = yaml_load(fh, loader=get_yaml_loader(config=MkDocsConfig(config_file_path=str(path))))
    except (OSError, ConfigurationError) as exc:
        raise SourceError([Finding("mkdocs.yml", 1, 1, f"cannot read it: {exc}", code=codes.SITE_CONFIG)]) from None
    url = config.get("site_url")
    return url if isinstance(url, str) and url else None


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


def exported_profile(root: Path, profile_id: str) -> tuple[Manual, ProfileExport]:
    """One profile as tools see it (its metrics from the catalog, links under site_url); UsageError if unknown."""
    manual = load_manual(root)
    ids = [p.id for p in manual.profiles]
    if profile_id not in ids:
        raise UsageError(
            f"unknown profile {profile_id!r}; profiles: {', '.join(ids) or 'none'}" + did_you_mean(profile_id, ids)
        )
    return manual, export_document(manual, manual.profile(profile_id), site_url(root))
