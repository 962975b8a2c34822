"""A profile judged on its own captures in the repository (what `check` holds, and `derive` re-runs).

A capture source with a SHA-256 whose file lies inside the project is a pinned capture:
a changed file, or a range that its own captured runs break (by the rules of `judge`),
is a finding. A corridor's reference capture is a curve, not a run: its digest is held, and
nothing is judged on it. Captures that live elsewhere (the lab's) cannot be re-judged; their pages say so.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError
from metrics_manual.exports.document import export_document
from metrics_manual.judge.judging import judge
from metrics_manual.judge.verdict import Result
from metrics_manual.model.kinds import keeps_warm_up
from metrics_manual.model.schema import CaptureSource, ProfileExport
from metrics_manual.runs.capture import captures_in_repo, read_capture_run, sha256_of
from metrics_manual.runs.run import Run
from metrics_manual.source.load import PROFILES, Manual, profile_files
from metrics_manual.source.reader import read_document


def verdicts(export: ProfileExport, run: Run, skip_first: int) -> dict[tuple[str, int], Result]:
    """(metric, expectation index) -> the judge's result for one run.

    The run's first `skip_first` steps (`Run.first_steps`: of each metric's step key, the
    warm-up) are excluded from every expectation but a window, which covers exactly those
    first steps. `derive` calls this too, so the two hold a range against the same steps.
    """
    windows = {
        (k, i)
        for m in export.metrics
        for k in (m.members or [m.key])
        for i, e in enumerate(m.expectations)
        if keeps_warm_up(e.span)
    }
    plain = judge(export, run).results
    if not skip_first:
        return {(r.metric, r.expectation): r for r in plain}
    results = {(r.metric, r.expectation): r for r in plain if (r.metric, r.expectation) in windows}
    # One judgement per distinct warm-up: the metrics of one step key share theirs.
    by_warm_up: dict[tuple[int, ...], set[str]] = {}
    for m in export.metrics:
        for k in m.members or [m.key]:
            by_warm_up.setdefault(tuple(run.first_steps(k, skip_first)), set()).add(k)
    for warm_up, keys in by_warm_up.items():
        for r in judge(export, run, exclude_steps=warm_up).results:
            if r.metric in keys and (r.metric, r.expectation) not in windows:
                results[(r.metric, r.expectation)] = r
    return results


def held_against(expectation_sources: list[str], captured: Iterable[str]) -> list[str]:
    """The captures an expectation is re-judged on: those it names, or all of them when it names
    none (the schema's "none means all of them")."""
    captured = list(captured)
    return [sid for sid in expectation_sources if sid in captured] if expectation_sources else captured


def rejudge(root: Path, manual: Manual) -> list[Finding]:
    """Every profile with captures in the project, held against them."""
    out: list[Finding] = []
    files = {}
    for file in profile_files(root)[0]:
        doc, _ = read_document(file, f"{PROFILES}/{file.name}", fast=True)
        if isinstance(doc.data, dict) and isinstance(doc.data.get("id"), str):
            files[doc.data["id"]] = file
    for profile in manual.profiles:
        pinned = captures_in_repo(root, profile)
        if not pinned:
            continue
        file = files[profile.id]
        doc, _ = read_document(file, f"{PROFILES}/{file.name}")
        runs: dict[str, Run] = {}
        for sid, path in pinned.items():
            source = profile.sources[sid]
            assert isinstance(source, CaptureSource)
            if not path.is_file():
                out.append(
                    doc.finding(
                        ("sources", sid, "path"), f"capture {source.path} is missing", code=codes.CAPTURE_MISSING
                    )
                )
                continue
            if sha256_of(path) != source.sha256:
                out.append(
                    doc.finding(
                        ("sources", sid, "sha256"),
                        f"capture {source.path} changed: its SHA-256 no longer "
                        "matches; restore it or derive the ranges again",
                        code=codes.CAPTURE_CHANGED,
                    )
                )
            if sid in profile.references:  # a curve, not a run: the loader read it, held to its digest
                continue
            try:
                run = read_capture_run(path, source.path, manual.catalog)
            except ManualError as err:
                out += getattr(err, "findings", [doc.finding(("sources", sid, "path"), str(err), code=err.code)])
                continue
            out += run.problems
            runs[sid] = run
        export = export_document(manual, profile, None)
        judged = {
            sid: verdicts(export, run, getattr(profile.sources[sid], "skip_first", None) or 0)
            for sid, run in runs.items()
        }
        for key, expectations in profile.expectations.items():
            for i, e in enumerate(expectations):
                for sid in held_against(e.sources, pinned):
                    r = judged.get(sid, {}).get((key, i))
                    if r is not None and r.verdict != "pass":
                        out.append(
                            doc.finding(
                                ("expectations", key, i),
                                f"{key} {r.expected}: its own capture {sid!r} gives {r.verdict}: {r.reason}",
                                code=codes.CAPTURE_DISAGREES,
                            )
                        )
    return out
