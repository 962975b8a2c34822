"""The `metrics-manual` command: validate, build, check, export."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from . import check as check_mod
from .build import generate, site_url
from .errors import ManualError, SourceError, UsageError, format_findings
from .export import FORMATS, export_document, export_text
from .files import write_files
from .judge_cli import judge_command
from .load import did_you_mean, load_manual

EXIT_DRIFT, EXIT_INPUT = 1, 2


def _root(value: str | None) -> Path:
    root = Path(value or ".").resolve()
    if not (root / "ranges").is_dir():
        where = f"--root {value}" if value else f"the current folder ({root})"
        raise UsageError(f"no ranges/ folder in {where}; run from the project root or pass --root DIR")
    return root


def root_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--root", "root", type=click.Path(file_okay=False), default=None,
                        help="Project root: the folder with ranges/ (default: current folder).")(f)


def format_option(*choices: str) -> Callable[..., Any]:
    return click.option("--format", "fmt", type=click.Choice(choices), default="text", show_default=True,
                        help="How findings are printed.")


def fail(err: ManualError, fmt: str = "text") -> NoReturn:
    if isinstance(err, SourceError):
        click.echo(format_findings(err.findings, fmt), err=fmt == "text")
        if fmt == "text":
            click.echo(f"{len(err.findings)} error(s); nothing was written.", err=True)
    else:
        click.echo(f"error: {err}", err=True)
    sys.exit(EXIT_INPUT)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Keep the metrics manual true: ranges/ -> pages, profiles and schemas."""


@main.command()
@root_option
@format_option("text", "json")
def validate(root: str | None, fmt: str) -> None:
    """Load and validate ranges/; print every finding."""
    try:
        manual = load_manual(_root(root))
    except ManualError as err:
        fail(err, fmt)
    if fmt == "json":
        click.echo("[]")
    else:
        n = sum(len(v) for p in manual.profiles for v in p.expectations.values())
        click.echo(f"ok: {len(manual.metrics)} metrics, {len(manual.profiles)} profile(s), {n} expectations")


@main.command()
@root_option
@format_option("text", "json")
def build(root: str | None, fmt: str) -> None:
    """Render pages, export profiles and write schemas (only files that changed)."""
    try:
        project = _root(root)
        _, files = generate(project)
    except ManualError as err:
        fail(err, fmt)
    try:
        report = write_files(project, files)
    except OSError as exc:  # every file is staged before any is replaced: the old ones stand
        fail(UsageError(f"cannot write {exc.filename or 'the generated files'}: {exc.strerror}; nothing was changed"))
    for rel in report.hand_edited:
        click.echo(f"overwrote hand edits in {rel}", err=True)
    for rel in report.written:
        click.echo(f"wrote {rel}")
    for rel in report.removed:
        click.echo(f"removed stray {rel}")
    click.echo(f"{len(report.written)} written, {report.unchanged} unchanged, {len(report.removed)} removed")


@main.command()
@root_option
@format_option("text", "json", "github")
def check(root: str | None, fmt: str) -> None:
    """Compare docs, exports and schemas with ranges/ in memory; write nothing."""
    try:
        drifts = check_mod.check(_root(root))
    except ManualError as err:
        fail(err, fmt)
    if fmt == "json":
        click.echo(check_mod.drift_json(drifts))
    elif fmt == "github":
        for d in drifts:
            click.echo(d.finding.github())
    else:
        for d in drifts:
            click.echo(str(d.finding))
            if d.diff:
                click.echo(d.diff.rstrip("\n"))
        click.echo(f"{len(drifts)} problem(s): run `metrics-manual build` to regenerate files" if drifts
                   else "ok: docs, exports and schemas agree with ranges/")
    sys.exit(EXIT_DRIFT if drifts else 0)


@main.command()
@root_option
@click.option("--profile", "profile_id", required=True, help="Id of the profile to export.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write here instead of stdout.")
def export(root: str | None, profile_id: str, fmt: str, output: str | None) -> None:
    """Export one profile as JSON, YAML, CSV or Prometheus alerting rules."""
    try:
        project = _root(root)
        manual = load_manual(project)
        ids = [p.id for p in manual.profiles]
        if profile_id not in ids:
            raise UsageError(f"unknown profile {profile_id!r}; profiles: {', '.join(ids) or 'none'}" + did_you_mean(profile_id, ids))
        doc = export_document(manual, manual.profile(profile_id), site_url(project))
        text = export_text(doc, fmt)
    except ManualError as err:
        fail(err)
    if output is None:
        click.echo(text, nl=False)
        return
    target = Path(output)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        fail(UsageError(f"cannot write {output}: {exc.strerror}"))


main.add_command(judge_command)

if __name__ == "__main__":  # pragma: no cover
    main()
