"""The few error kinds of metrics-manual, and the finding they report."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one file, at a 1-based line and column."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message}"

    def github(self) -> str:
        # GitHub workflow command: the message must not contain raw newlines or '%'.
        msg = self.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        level = "error" if self.severity == "error" else "warning"
        return f"::{level} file={self.path},line={self.line},col={self.col}::{msg}"


def format_findings(findings: list[Finding], fmt: str) -> str:
    if fmt == "json":
        return json.dumps([asdict(f) for f in findings], indent=2, ensure_ascii=False)
    if fmt == "github":
        return "\n".join(f.github() for f in findings)
    return "\n".join(str(f) for f in findings)


class ManualError(Exception):
    """Base of every error the command reports without a traceback (exit 2)."""


class SourceError(ManualError):
    """The source under ranges/ (or a template) is invalid; nothing was written."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = sorted(set(findings))
        super().__init__("\n".join(str(f) for f in self.findings))


class UsageError(ManualError):
    """The command was asked for something that does not exist (a profile, a root)."""
