"""`metrics-manual coverage --miles PATH`: the catalog held against the keys a Miles checkout logs.

Only click and the command's words are imported with the module (its --help pays for nothing more); the
scan, the model and the move are imported when the command runs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from metrics_manual.cli.common import EXIT_DRIFT, EXIT_INPUT, fail, root_option
from metrics_manual.diagnostics.finding import ManualError, UsageError
from metrics_manual.diagnostics.report import FINDING_FORMATS
from metrics_manual.text import inert, shown_path

if TYPE_CHECKING:
    from metrics_manual.coverage.commits import History
    from metrics_manual.coverage.evidence import Verification
    from metrics_manual.coverage.move import Move
    from metrics_manual.diagnostics.finding import Finding
    from metrics_manual.source.load import Manual
    from metrics_manual.source.reader import Document


def _refuse(message: str, fmt: str) -> NoReturn:
    fail(UsageError(f"cannot move the catalog: {message}; nothing was written"), fmt)


def _moved(project: Path, manual: Manual, f: Move, history: History, path: Path, fmt: str) -> tuple[Manual, list[Path]]:
    """`--write`: the catalog (and ranges/coverage.yaml) moved to the checkout's HEAD; exit 2 when it cannot be."""
    from metrics_manual.coverage.checkout import changed_files
    from metrics_manual.coverage.rewrite import moved_catalog, moved_coverage, write
    from metrics_manual.disk.files import read_text
    from metrics_manual.source.load import CATALOG, COVERAGE, load_manual

    catalog = manual.miles_catalog
    if history.commit(catalog.code.commit) is None:
        _refuse(f"the checkout's history does not hold the catalog's commit {catalog.code.commit}: fetch it", fmt)
    if not history.before(catalog.code.commit, f.head) and history.before(f.head, catalog.code.commit):
        _refuse(f"the checkout's HEAD {f.head[:12]} is older than the catalog's commit {catalog.code.commit[:12]}", fmt)
    changed = changed_files(path, f.head)
    if changed:
        _refuse(
            f"{len(changed)} file(s) of the checkout differ from its HEAD {f.head[:12]} "
            f"({', '.join(shown_path(p) for p in changed[:3])}): commit or stash them first",
            fmt,
        )
    date = history.date(f.head)
    try:
        changes: list[tuple[Path, str | None, str]] = []
        for rel in [CATALOG, *([COVERAGE] if manual.coverage is not None else [])]:
            old = read_text(project / rel)  # None (a link, no text): write refuses it
            new = "" if old is None else moved_catalog(old, f, date) if rel == CATALOG else moved_coverage(old, f.head)
            changes.append((project / rel, old, new))
        wrote = write(project, changes)
    except ManualError as err:
        fail(err, fmt, wrote_nothing=True)
    try:
        return load_manual(project), wrote
    except ManualError as err:  # the moved source does not validate: put the old files back
        write(project, [(file, new, old or "") for file, old, new in changes if file in wrote])
        fail(err, fmt, wrote_nothing=True)


def _findings(
    manual: Manual, project: Path, path: Path, followed: Move | None, *, write: bool, at_head: bool, head: str | None
) -> tuple[Document, Verification, list[Finding]]:
    """(the catalog's document, its evidence held against the checkout, the findings at its fields): the
    evidence of each origin and named_at not followed, the work list, each entry's backends."""
    from metrics_manual.coverage import backends, evidence, worklist
    from metrics_manual.source.load import CATALOG
    from metrics_manual.source.reader import read_document

    catalog_doc, _ = read_document(project / CATALOG, CATALOG)
    skip = [e.loc for e in followed.entries if e.flagged or not write] if followed is not None else []
    checked = evidence.verify(manual.miles_catalog, path, skip)
    note = None
    if followed is not None and not at_head and not write:
        note = f"{worklist.summary(followed)}; `coverage --write` moves the catalog there"
    elif followed is None and head is not None:
        note = (
            f"its history does not hold Miles {manual.miles_catalog.code.commit[:12]}, so the catalog cannot be followed "
            "there (fetch that commit); the findings that follow are what differs between the two"
        )
    found = evidence.findings(checked, catalog_doc, note)
    if followed is not None:
        found += worklist.findings(followed, catalog_doc)
    return catalog_doc, checked, found + backends.findings(manual.miles_catalog, catalog_doc)


def _as_text(
    lines: list[str], followed: Move | None, at_head: bool, doc: Document, checked: Verification, found: list[Finding]
) -> str:
    """The text report: `lines` (the scan's, what --write did), the work list, then the evidence and the
    other findings."""
    from metrics_manual.coverage import worklist
    from metrics_manual.coverage.report import evidence_text

    if followed is not None and not at_head:
        lines.append(worklist.summary(followed))
    if followed is not None and (followed.entries or followed.items):
        lines.append(worklist.text(followed, doc))
    lines.append(evidence_text(checked, found) if checked.checked else "\n".join(inert(str(x)) for x in found))
    return "\n".join(line for line in lines if line)


@click.command(short_help="Hold the catalog against the keys a Miles checkout logs.")
@root_option
@click.option(
    "--miles",
    "miles",
    required=True,
    type=click.Path(),
    help="A checkout of Miles (read with Python's ast and git's objects; never imported).",
)
@click.option(
    "--write",
    is_flag=True,
    help="Move ranges/catalog.yaml to the checkout's HEAD: re-anchor what only moved, keep every origin whose code "
    "changed as it was read (read_at), and print the work list.",
)
@click.option(
    "--format", "fmt", type=click.Choice(FINDING_FORMATS), default="text", show_default=True, help="Output format."
)
def coverage_command(root: str | None, miles: str, write: bool, fmt: str) -> None:
    """Scan a Miles checkout for the keys it logs and compare them with the catalog.

    Lists keys documented and logged, logged but not documented, documented but no longer
    logged, timed in a process that never logs its timers, and not visible to the scan.
    ranges/coverage.yaml names the keys known to stand apart, with why. Then holds each origin's
    and named_at's evidence against the checkout (the file, the symbol, the evidence line at its
    line), each miss a finding at the catalog field to correct; a place without evidence is a
    warning; and each entry's `logged` to the backend its origins live under.

    When the checkout is at another commit than the catalog reads (or an origin carries read_at),
    each origin is followed through the checkout's git history from the commit it was read at:
    what only moved is counted, and each origin whose code changed is an item of the work list
    (why, and the lines of the Miles diff that touch it). --write then moves the catalog to the
    checkout's HEAD: the moved places get their new line, path and symbol; every other origin keeps
    what it says and gets read_at (the commit it was last read at), and stays on the work list
    until a person reads it and removes read_at.

    Exit 0 when nothing is undocumented, gone, timed only or stale, all evidence holds and the work
    list is empty; 1 otherwise; 2 on a bad path or source, or when --write cannot move the catalog
    (nothing is written).
    """
    from dataclasses import replace

    from metrics_manual.coverage import evidence, worklist
    from metrics_manual.coverage.commits import History
    from metrics_manual.coverage.compare import compare
    from metrics_manual.coverage.move import move, same_commit
    from metrics_manual.coverage.report import as_json, as_text, findings
    from metrics_manual.coverage.scan import python_files, scan
    from metrics_manual.diagnostics.finding import errors
    from metrics_manual.diagnostics.report import report
    from metrics_manual.gitrun import head_commit
    from metrics_manual.source.load import load_manual
    from metrics_manual.source.root import find_root

    try:
        project = find_root(root)
        manual = load_manual(project)
    except ManualError as err:
        fail(err, fmt)
    path = Path(miles)
    if not path.is_dir() or next(python_files(path), None) is None:
        click.echo(f"{inert(miles)}:1:1: error: not a Miles checkout: no folder with Python files", err=True)
        sys.exit(EXIT_INPUT)
    # Miles' own catalog throughout: a team's keys (ranges/catalogs/) are its fork's, never held against Miles.
    result = compare(manual.miles_catalog, manual.coverage, scan(path, frozenset(manual.miles_catalog.step_keys)), path)
    head = head_commit(path)
    history = History(path) if head is not None else None
    at_head = head is not None and same_commit(head, manual.miles_catalog.code.commit)
    # Move the origins through the checkout's history when it holds the catalog's commit.
    followed = None
    if head is not None and history is not None and (at_head or history.commit(manual.miles_catalog.code.commit)):
        followed = move(manual.miles_catalog, result, history, head, everything=not at_head)
    moved = ""  # what --write did, said first
    if write:
        if head is None or history is None or followed is None:
            _refuse(
                f"{inert(miles)} is not a git work tree"
                if head is None
                else f"the checkout's history does not hold the catalog's commit {manual.miles_catalog.code.commit}: "
                f"fetch it (git -C {inert(miles)} fetch origin {manual.miles_catalog.code.commit})",
                fmt,
            )
        before = manual.miles_catalog.code.commit
        manual, wrote = _moved(project, manual, followed, history, path, fmt)
        result = replace(result, catalog_commit=manual.miles_catalog.code.commit)  # the same keys, the same scan
        moved = f"moved the catalog from Miles {before[:12]} to {head[:12]}" if wrote else "nothing to move"
        moved += f": wrote {', '.join(p.relative_to(project).as_posix() for p in wrote)}" if wrote else ""
    catalog_doc, checked, found = _findings(manual, project, path, followed, write=write, at_head=at_head, head=head)
    failing = result.failing or bool(errors(found)) or bool(followed and followed.items)
    if fmt == "json":
        follow_part = worklist.as_dict(followed, catalog_doc) if followed is not None else None
        click.echo(as_json(result, evidence.as_dict(checked, catalog_doc), follow_part, [str(f) for f in found]))
    elif fmt == "github":
        click.echo(report(findings(result) + found, "github"))
    else:
        click.echo(_as_text([as_text(result), moved], followed, at_head, catalog_doc, checked, found))
    sys.exit(EXIT_DRIFT if failing else 0)
