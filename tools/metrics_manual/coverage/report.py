"""What `coverage` found, for people and tools: the keys as text and JSON, and the findings of a comparison."""

from __future__ import annotations

import json
from dataclasses import asdict

from metrics_manual.coverage import evidence
from metrics_manual.coverage.compare import Result
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, errors
from metrics_manual.source.load import CATALOG, COVERAGE
from metrics_manual.text import inert


def as_json(r: Result, checked: dict[str, object], followed: dict[str, object] | None, found: list[str]) -> str:
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
            "move": followed,
            "findings": found,
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
