"""The pipeline: ranges/ -> model -> pages, exports and schemas, all in memory."""
from __future__ import annotations

import re
from pathlib import Path

from .export import render_exports, source_schemas
from .judge import verdict_schemas
from .load import Manual, gc_paused, load_manual
from .render import render_pages


def site_url(root: Path) -> str | None:
    """site_url of mkdocs.yml, read as text: mkdocs.yml may hold tags a safe loader refuses."""
    try:
        text = (root / "mkdocs.yml").read_text("utf-8")
    except OSError:
        return None
    match = re.search(r"^site_url:\s*['\"]?([^'\"\s#]+)", text, re.M)
    return match.group(1) if match else None


def generate(root: Path, manual: Manual | None = None) -> tuple[Manual, dict[str, str]]:
    """Everything `build` writes, path relative to root -> text. Raises SourceError."""
    with gc_paused():
        manual = manual or load_manual(root)
        files = {**render_pages(manual, root), **render_exports(manual, site_url(root)), **source_schemas(),
                 **verdict_schemas()}
    return manual, files
