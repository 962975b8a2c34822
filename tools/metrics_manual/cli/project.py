"""The commands over the project itself: validate, build, check, export.

Each imports what it needs when it runs: `validate` never loads the site's or the exports' modules.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from metrics_manual.cli.common import EXIT_DRIFT, fail, format_option, root_option, show
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError, UsageError, errors
from metrics_manual.diagnostics.report import report
from metrics_manual.exports.names import BY_ID, EXPORT_FORMATS, FOLDER_FORMATS, formats_in_words
from metrics_manual.source.root import find_root


@click.command("validate", short_help="Load and validate ranges/.")
@root_option
@format_option
def validate(root: str | None, fmt: str) -> None:
    """Load and validate ranges/ and print every finding."""
    from metrics_manual.source.load import load_manual

    try:
        manual = load_manual(find_root(root))
    except ManualError as err:
        fail(err, fmt)
    show(list(manual.warnings), fmt)  # what loads but a person must still write: a warning, exit 0
    if fmt == "text":
        n = sum(len(v) for p in manual.profiles for v in p.expectations.values())
        click.echo(f"ok: {len(manual.metrics)} metrics, {len(manual.profiles)} profile(s), {n} expectations")


@click.command("build", short_help="Write pages, exports and schemas that changed.")
@root_option
@format_option
def build(root: str | None, fmt: str) -> None:
    """Validate ranges/, then render pages, export profiles and write schemas under docs/.

    Writes only the files whose content changed, all at once: a build that fails or is
    killed leaves the old files.
    """
    from metrics_manual.build import build as build_project

    try:
        _, todo = build_project(find_root(root))
    except ManualError as err:
        fail(err, fmt, wrote_nothing=True)
    show(todo.kept, fmt)
    if fmt != "text":
        return
    for rel in todo.hand_edited:
        click.echo(f"overwrote hand edits in {rel}", err=True)
    for rel in todo.write:
        click.echo(f"wrote {rel}")
    for rel in todo.remove:
        click.echo(f"removed stray {rel}")
    click.echo(f"{len(todo.write)} written, {todo.unchanged} unchanged, {len(todo.remove)} removed")
    from metrics_manual.exports.profile import NO_SITE_URL, site_url

    if (find_root(root) / "mkdocs.yml").is_file() and site_url(find_root(root)) is None:
        click.echo(NO_SITE_URL, err=True)


@click.command("check", short_help="Compare docs/ with ranges/ in memory.")
@root_option
@format_option
def check(root: str | None, fmt: str) -> None:
    """Compare pages, exports and schemas with ranges/ in memory; exit 1 with a diff on drift.

    Writes nothing, except to finish a build that was killed while switching files.
    """
    from metrics_manual.check.drift import check as check_files
    from metrics_manual.check.drift import drift_total

    try:
        findings = check_files(find_root(root))
    except ManualError as err:
        fail(err, fmt)
    if findings or fmt == "json":  # check's findings are its output: stdout in every format
        click.echo(report(findings, fmt))
    bad = errors(findings)
    if fmt == "text":
        if total := drift_total(bad):
            click.echo(total)
        click.echo(advice(bad) if bad else "ok: docs, exports and schemas agree with ranges/")
    sys.exit(EXIT_DRIFT if bad else 0)


BUILD = "run `metrics-manual build` to regenerate files"
CAPTURE_FIRST = {codes.CAPTURE_CHANGED.id, codes.CAPTURE_MISSING.id}  # build would draw what they give now


def advice(bad: list[Finding]) -> str:
    """check's last words: build for the findings whose code build fixes (`Code.rebuild`), and each
    other code's own fix (a changed, missing or disagreeing capture is not build's to fix)."""
    rebuilt = sum(1 for f in bad if f.code.rebuild)
    others = sorted({f.code for f in bad if not f.code.rebuild})
    if not others:
        return f"{len(bad)} problem(s): {BUILD}"
    fixes = "".join(f"\n  {c.id} {c.name}: {c.hint}" for c in others)
    if not rebuilt:
        return f"{len(bad)} problem(s), which `metrics-manual build` does not fix:{fixes}"
    if any(c.id in CAPTURE_FIRST for c in others):  # the pages drawn from a changed capture drift with it
        return (
            f"{len(bad)} problem(s); fix the captures first (a build now would write what a changed or missing "
            f"capture gives into the pages):{fixes}\n  then {BUILD} ({rebuilt} of them)"
        )
    return (
        f"{len(bad)} problem(s): {BUILD} ({rebuilt} of them); build does not fix the other {len(bad) - rebuilt}:{fixes}"
    )


@click.command(
    "export",
    short_help="Export one profile in a format other tools read.",
    help=f"Export one profile as {formats_in_words()}.",  # the formats' registry: the list cannot drift
)
@root_option
@click.option("--profile", "profile_id", required=True, help="Id of the profile to export.")
@click.option(
    "--format", "fmt", type=click.Choice(EXPORT_FORMATS), default="json", show_default=True, help="The export format."
)
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    help="File to write (through a symlink, never onto a device); - for standard output. A folder for "
    "--format tensorboard: a new or empty one, or an earlier export, replaced whole.",
)
def export(root: str | None, profile_id: str, fmt: str, output: str) -> None:
    from metrics_manual.disk.files import write_file
    from metrics_manual.exports.profile import exported_profile

    try:
        if not output:
            raise UsageError("-o: an empty value; name a file (or a folder), or - for standard output")
        if fmt in FOLDER_FORMATS and output == "-":
            raise UsageError(f"--format {fmt} writes a folder: name it with -o DIR")
        _, doc = exported_profile(find_root(root), profile_id)
        if fmt in FOLDER_FORMATS:
            from metrics_manual.exports.folder import write_folder

            write_folder(Path(output), BY_ID[fmt].files(doc), fmt, doc.profile.id)
            return
        text = BY_ID[fmt].text(doc)
        if output == "-":
            click.echo(text, nl=False)
        else:
            write_file(Path(output), text)
    except ManualError as err:
        fail(err)
