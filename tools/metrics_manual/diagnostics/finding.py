"""The few error kinds of metrics-manual, the one finding type, and the one reporter of findings.

Every command reports what it found the same way: a `Finding` (file, line, column,
severity, message, and for drift a diff), printed by `report` as text, JSON or GitHub
workflow annotations.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

FORMATS = ("text", "json", "github")


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one file, at a 1-based line and column."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"  # "error" fails the command; "warning" is shown and passes
    diff: str = field(default="", compare=False)  # for a drifted file: what would change

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}"

    def github(self) -> str:
        """A GitHub workflow command; every property and the message escaped as GitHub documents."""
        level = "error" if self.severity == "error" else "warning"
        props = ",".join(
            f"{k}={_escape_property(str(v))}" for k, v in (("file", self.path), ("line", self.line), ("col", self.col))
        )
        return f"::{level} {props}::{_escape_data(self.message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def report(findings: list[Finding], fmt: str) -> str:
    """All findings in one format: text (with diffs), json (a list of objects) or github annotations."""
    if fmt == "json":
        return json.dumps([asdict(f) for f in findings], indent=2, ensure_ascii=False)
    if fmt == "github":
        return "\n".join(f.github() for f in findings)
    return "\n".join(str(f) + (f"\n{f.diff.rstrip()}" if f.diff else "") for f in findings)


def shown(value: object, limit: int = 80) -> str:
    """A value from an untrusted file, quoted and cut short for a message (a 10 MB value gives one line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


class ManualError(Exception):
    """Base of every error the command reports without a traceback (exit 2)."""


class SourceError(ManualError):
    """The source under ranges/ (or a template) is invalid; nothing was written."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = sorted(set(findings))
        super().__init__("\n".join(str(f) for f in self.findings))


class UsageError(ManualError):
    """The command was asked for something that does not exist (a profile, a root)."""
