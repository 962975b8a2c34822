"""The one reporter of findings: text for people, JSON for tools, GitHub workflow annotations.

Text is one line per finding, `path:line:col: severity: message [MM101]` (what compilers
print, so editors and problem matchers read it), then a drifted file's diff. JSON and
GitHub carry the code, its name and its hint too; docs/findings.md explains each code.
"""

from __future__ import annotations

import json
from typing import Any

from metrics_manual.diagnostics.finding import Finding
from metrics_manual.text import github_data, github_property

FINDING_FORMATS = ("text", "json", "github")


def as_dict(f: Finding) -> dict[str, Any]:
    """A finding as JSON data: where, what, and the kind (code, name, hint)."""
    return {
        "path": f.path,
        "line": f.line,
        "col": f.col,
        "severity": f.severity,
        "code": f.code.id,
        "name": f.code.name,
        "message": f.message,
        "hint": f.code.hint,
        "diff": f.diff,
    }


def annotation(f: Finding) -> str:
    """A GitHub workflow command titled with the code; every property and the message escaped."""
    level = "error" if f.severity == "error" else "warning"
    props = ",".join(
        f"{k}={github_property(str(v))}"
        for k, v in (("file", f.path), ("line", f.line), ("col", f.col), ("title", f.code.title))
    )
    return f"::{level} {props}::{github_data(f.message)}"


def report(findings: list[Finding], fmt: str) -> str:
    """All findings in one format: text (with diffs), json (a list of objects) or github annotations."""
    if fmt == "json":
        return json.dumps([as_dict(f) for f in findings], indent=2, ensure_ascii=False)
    if fmt == "github":
        return "\n".join(annotation(f) for f in findings)
    return "\n".join(str(f) + (f"\n{f.diff.rstrip()}" if f.diff else "") for f in findings)
