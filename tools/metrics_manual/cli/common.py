"""What every command shares: finding the project, the common options, and how a bad input exits."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import click

from metrics_manual.diagnostics.finding import Finding, ManualError, SourceError
from metrics_manual.diagnostics.report import FINDING_FORMATS, report

EXIT_DRIFT, EXIT_INPUT = 1, 2


def root_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--root",
        "root",
        type=click.Path(file_okay=False),
        default=None,
        help="Project root: the folder with ranges/ (default: found upwards from here).",
    )(f)


def format_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FINDING_FORMATS),
        default="text",
        show_default=True,
        help="How findings are printed: text, json, or GitHub workflow annotations.",
    )(f)


def show(findings: list[Finding], fmt: str) -> None:
    """Findings on stdout for machines (json, github), on stderr for people (text)."""
    if findings or fmt == "json":
        click.echo(report(findings, fmt), err=fmt == "text")


def fail(err: ManualError, fmt: str = "text", *, wrote_nothing: bool = False) -> NoReturn:
    """Report a bad input or a failed write and exit 2."""
    findings = err.findings if isinstance(err, SourceError) else [Finding("-", 1, 1, str(err), code=err.code)]
    if isinstance(err, SourceError) or fmt != "text":
        show(findings, fmt)
        if fmt == "text":
            click.echo(f"{len(findings)} error(s)" + ("; nothing was written." if wrote_nothing else "."), err=True)
    else:
        click.echo(f"error: {err}", err=True)
    sys.exit(EXIT_INPUT)


# Below this many bytes a progress bar would only flicker.
PROGRESS_FROM = 64 * 1024 * 1024


def progress_bar(shown: bool | None) -> Callable[[int], Any]:
    """A reader's progress bar on stderr: always (True), never (False), or on a terminal for large runs (None)."""

    @contextmanager
    def bar(total: int) -> Iterator[Callable[[int], None] | None]:
        if shown is False or (shown is None and not (sys.stderr.isatty() and total >= PROGRESS_FROM)):
            yield None
            return
        with click.progressbar(length=total, label="reading the run", file=sys.stderr) as b:
            yield b.update

    return bar
