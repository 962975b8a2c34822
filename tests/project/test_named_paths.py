"""Every file of the project's code that the templates and the hand-written pages name exists."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

# A path of the project's Python code as prose names it: tools/metrics_manual/model/schema.py.
NAMED = re.compile(r"\btools/[\w./-]+\.py\b")


def _texts() -> list[Path]:
    pages = [*sorted((REPO / "templates").rglob("*.j2")), *sorted((REPO / "docs").glob("*.md"))]
    return [*pages, REPO / "README.md", REPO / "CONTRIBUTING.md"]


def test_every_tools_path_named_in_templates_and_hand_written_pages_exists() -> None:
    named = {(path, m.group()) for path in _texts() for m in NAMED.finditer(path.read_text("utf-8"))}
    assert named, "no path found: the pattern no longer matches how the pages name files"
    missing = sorted(f"{path.relative_to(REPO)}: {name}" for path, name in named if not (REPO / name).is_file())
    assert not missing, missing
