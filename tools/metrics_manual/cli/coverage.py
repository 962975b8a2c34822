"""`metrics-manual coverage --miles PATH`: the catalog held against the keys a Miles checkout logs."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

import click

from metrics_manual.cli.common import EXIT_DRIFT, EXIT_INPUT, fail, find_root, root_option
from metrics_manual.coverage import evidence
from metrics_manual.coverage.compare import Result, compare
from metrics_manual.coverage.scan import python_files, scan
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError, errors
from metrics_manual.diagnostics.report import FINDING_FORMATS, report
from metrics_manual.source.load import CATALOG, load_manual
from metrics_manual.source.reader import read_document

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def inert(text: str) -> str:
    """Keys come from untrusted code: control characters are shown escaped, never sent to the terminal."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 256 else f"\\u{ord(m.group()):04x}", text
    )


def as_json(r: Result, checked: dict[str, object]) -> str:
    return json.dumps(
        {
            "commit": r.commit,
            "catalog_commit": r.catalog_commit,
            "documented_and_emitted": r.documented_and_emitted,
            "emitted_not_documented": [asdict(u) for u in r.emitted_not_documented],
            "documented_not_emitted": [asdict(g) for g in r.documented_not_emitted],
            "moved": [asdict(m) for m in r.moved],
            "evidence": checked,
        },
        indent=2,
        ensure_ascii=True,
    )


def as_text(r: Result) -> str:
    lines = [f"Miles {r.commit or '(commit unknown)'}; the catalog reads Miles at {r.catalog_commit}"]
    known_new = [u for u in r.emitted_not_documented if u.known]
    new = [u for u in r.emitted_not_documented if not u.known]
    gone = [g for g in r.documented_not_emitted if not g.known]
    unseen = [g for g in r.documented_not_emitted if g.known]
    lines.append(
        f"{len(r.documented_and_emitted)} documented and logged, {len(new)} logged but undocumented "
        f"({len(known_new)} more known), {len(gone)} documented but not logged ({len(unseen)} not visible to the scan), "
        f"{len(r.moved)} moved"
    )
    for u in new:
        lines.append(f"undocumented: {inert(u.key)}  ({inert(u.path)}:{u.line} {inert(u.symbol)}, {u.form})")
    for g in gone:
        lines.append(f"not logged:   {inert(g.key)}")
    for m in r.moved:
        lines.append(f"moved:        {inert(m.key)}  {inert(m.path)} {inert(m.symbol or '')}: {m.reason}")
    for u in known_new:
        lines.append(f"known:        {inert(u.key)}  ({inert(u.known or '')})")
    return "\n".join(lines)


def evidence_text(v: evidence.Verification, found: list[Finding]) -> str:
    """The evidence's counts, then each finding (a warning for a place without evidence)."""
    at = "at the catalog's commit" if v.at_commit else f"at {v.commit[:12]}" if v.commit else "at an unknown commit"
    head = (
        f"evidence: {len(v.verified)} of {len(v.checked)} origins and named_at verified {at}, "
        f"{len(v.without_evidence)} without evidence, {len(errors(found))} problem(s)"
    )
    return "\n".join([head, *(inert(str(f)) for f in found)])


def findings(r: Result) -> list[Finding]:
    out = [
        Finding(
            u.path, u.line, 1, f"{u.key} is logged here but not documented in {CATALOG}", code=codes.UNDOCUMENTED_KEY
        )
        for u in r.emitted_not_documented
        if not u.known
    ]
    out += [
        Finding(CATALOG, 1, 1, f"{g.key} is documented but Miles no longer logs it", code=codes.NO_LONGER_LOGGED)
        for g in r.documented_not_emitted
        if not g.known
    ]
    out += [
        Finding(CATALOG, 1, 1, f"{m.key}: {m.path} {m.symbol or ''}: {m.reason}", code=codes.ORIGIN_MOVED)
        for m in r.moved
    ]
    return out


@click.command(short_help="Hold the catalog against the keys a Miles checkout logs.")
@root_option
@click.option(
    "--miles",
    "miles",
    required=True,
    type=click.Path(),
    help="A checkout of Miles (read with Python's ast; never imported).",
)
@click.option(
    "--format", "fmt", type=click.Choice(FINDING_FORMATS), default="text", show_default=True, help="Output format."
)
def coverage_command(root: str | None, miles: str, fmt: str) -> None:
    """Scan a Miles checkout for the keys it logs and compare them with the catalog.

    Lists keys documented and logged, logged but not documented, documented but no longer
    logged, and catalog origins whose file or function moved. ranges/coverage.yaml names the
    keys known to stand apart, with why. Then holds each origin's and named_at's evidence
    against the checkout (the file, the symbol, the evidence line at its line, the checkout at
    the catalog's commit), each miss a finding at the catalog field to correct; a place without
    evidence is a warning. Exit 0 when nothing is undocumented, gone or moved and all evidence
    holds; 1 otherwise; 2 on a bad path or source.
    """
    try:
        project = find_root(root)
        manual = load_manual(project)
    except ManualError as err:
        fail(err, fmt)
    path = Path(miles)
    if not path.is_dir() or next(python_files(path), None) is None:
        click.echo(f"{inert(miles)}:1:1: error: not a Miles checkout: no folder with Python files", err=True)
        sys.exit(EXIT_INPUT)
    result = compare(manual.catalog, manual.coverage, scan(path, frozenset(manual.catalog.step_keys)), path)
    # The evidence of each origin and named_at, its findings placed at the catalog's fields.
    checked = evidence.verify(manual.catalog, path)
    catalog_doc, _ = read_document(project / CATALOG, CATALOG)
    found = evidence.findings(checked, catalog_doc)
    if fmt == "json":
        click.echo(as_json(result, evidence.as_dict(checked, catalog_doc)))
    elif fmt == "github":
        click.echo(report(findings(result) + found, "github"))
    else:
        click.echo(as_text(result) + "\n" + evidence_text(checked, found))
    sys.exit(EXIT_DRIFT if result.failing or errors(found) else 0)
