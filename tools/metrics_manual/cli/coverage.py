"""`metrics-manual coverage --miles PATH`: the catalog held against the keys a Miles checkout logs."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import asdict
from pathlib import Path

import click

from metrics_manual.cli.common import EXIT_DRIFT, EXIT_INPUT, fail, root_option
from metrics_manual.coverage import evidence
from metrics_manual.coverage.compare import Result, compare
from metrics_manual.coverage.scan import python_files, scan
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError, errors
from metrics_manual.diagnostics.report import FINDING_FORMATS, report
from metrics_manual.source.load import CATALOG, COVERAGE, load_manual
from metrics_manual.source.reader import read_document
from metrics_manual.source.root import find_root

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
            "timed_not_logged": [asdict(t) for t in r.timed_not_logged],
            "not_visible": [asdict(n) for n in r.not_visible],
            "not_logged": [asdict(n) for n in r.not_logged],
            "not_read": [asdict(u) for u in r.not_read],
            "marked_but_logged": [asdict(n) for n in r.marked_but_logged],
            "visible_after_all": r.visible_after_all,
            "documented_concrete": {"total": r.concrete, "seen": r.concrete_seen},
            "evidence": checked,
        },
        indent=2,
        ensure_ascii=True,
    )


def as_text(r: Result) -> str:
    lines = [f"Miles {r.commit or '(commit unknown)'}; the catalog reads Miles at {r.catalog_commit}"]
    known_new = [u for u in r.emitted_not_documented if u.known]
    new = [u for u in r.emitted_not_documented if not u.known]
    timed = [t for t in r.timed_not_logged if t.documented and not t.marked]
    lines.append(
        f"{len(r.documented_and_emitted)} documented and logged, {len(new)} logged but undocumented "
        f"({len(known_new)} more known), {len(r.documented_not_emitted)} documented but not logged, "
        f"{len(timed)} documented but timed in a process that never logs its timers, "
        f"{len(r.not_logged)} marked not logged, {len(r.not_visible)} not visible to the scan; "
        f"the scan sees {r.concrete_seen} of the {r.concrete} documented concrete keys; "
        f"{len(r.not_read)} Python file(s) not read"
    )
    for u in new:
        lines.append(f"undocumented: {inert(u.key)}  ({inert(u.path)}:{u.line} {inert(u.symbol)}, {u.form})")
    for g in r.documented_not_emitted:
        lines.append(f"not logged:   {inert(g.key)}")
    for t in r.timed_not_logged:
        where = ", ".join(t.runs_in) or "no process the scan found"
        lines.append(f"timed only:   {inert(t.key)}  ({inert(t.path)}:{t.line}, runs in {inert(where)})")
    for n in r.not_logged:
        lines.append(f"marked:       {inert(n.key)}  (not logged: {inert(n.reason)})")
    for b in r.marked_but_logged:
        lines.append(f"logged:       {inert(b.key)}  ({inert(b.path)}:{b.line}; the catalog says it is not logged)")
    for k in r.visible_after_all:
        lines.append(f"visible:      {inert(k)}  (ranges/coverage.yaml calls it not visible)")
    for u in known_new:
        lines.append(f"known:        {inert(u.key)}  ({inert(u.known or '')})")
    for v in r.not_visible:
        lines.append(f"not visible:  {inert(v.key)}  ({inert(v.reason)})")
    lines += [inert(str(f)) for f in not_read(r)]
    return "\n".join(lines)


def not_read(r: Result) -> list[Finding]:
    """A warning for each Python file the scan could not read: the keys it logs are not seen."""
    return [
        Finding(
            u.path,
            u.line,
            u.col,
            f"not read by the scan: {u.why}; the keys it logs are not seen",
            severity="warning",
            code=codes.FILE_NOT_SCANNED,
        )
        for u in r.not_read
    ]


def evidence_text(v: evidence.Verification, found: list[Finding]) -> str:
    """The evidence's counts, then each finding (a warning for a place without evidence)."""
    at = "at the catalog's commit" if v.at_commit else f"at {v.commit[:12]}" if v.commit else "at an unknown commit"
    if v.changed:
        at += f" with {len(v.changed)} file(s) that differ from it"
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
    ]
    out += [
        Finding(
            t.path,
            t.line,
            1,
            f"{t.key} is documented in {CATALOG} but only timed here, in "
            f"{', '.join(t.runs_in) or 'no process the scan found'}, which never logs its timers",
            code=codes.NO_LONGER_LOGGED,
        )
        for t in r.timed_not_logged
        if t.documented and not t.marked
    ]
    out += [
        Finding(
            b.path,
            b.line,
            1,
            f"{b.key} is logged here, but {CATALOG} marks it not logged",
            code=codes.UNDOCUMENTED_KEY,
        )
        for b in r.marked_but_logged
    ]
    out += [
        Finding(COVERAGE, 1, 1, f"{k} is listed as not visible, but the scan sees it", code=codes.COVERAGE_CONTRADICTS)
        for k in r.visible_after_all
    ]
    return out + not_read(r)


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
    logged, timed in a process that never logs its timers, and not visible to the scan.
    ranges/coverage.yaml names the keys known to stand apart, with why. Then holds each origin's
    and named_at's evidence against the checkout (the file, the symbol, the evidence line at its
    line, the checkout at the catalog's commit), each miss a finding at the catalog field to
    correct (a file or function that moved among them); a place without evidence is a warning.
    Exit 0 when nothing is undocumented, gone, timed only or stale and all evidence holds;
    1 otherwise; 2 on a bad path or source.
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
