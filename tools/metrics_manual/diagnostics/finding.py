"""The one finding type, and the few error kinds of metrics-manual.

Every command reports what it found the same way: a `Finding` (file, line, column,
severity, message, its kind as a code of `diagnostics.codes`, and for drift a diff),
printed by `diagnostics.report` as text, JSON or GitHub workflow annotations.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one file, at a 1-based line and column."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"  # "error" fails the command; "warning" is shown and passes
    diff: str = field(default="", compare=False)  # for a drifted file: what would change
    code: Code = field(kw_only=True)  # the kind of finding: what tools and the command match on

    @property
    def hint(self) -> str:
        return self.code.hint

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}: {self.message} [{self.code.id}]"


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


class ManualError(Exception):
    """Base of every error the command reports without a traceback (exit 2)."""

    code: ClassVar[Code] = codes.USAGE


class MissingExtra(ManualError):
    """An optional package a command needs is not installed (the message says which extra installs it)."""

    code = codes.MISSING_EXTRA


class SourceError(ManualError):
    """The source under ranges/ (or a template) is invalid; nothing was written."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = sorted(set(findings))
        super().__init__("\n".join(str(f) for f in self.findings))


class UsageError(ManualError):
    """The command was asked for something that does not exist (a profile, a root)."""

    code = codes.USAGE
