"""`check` holds each profile against its own captures in the repository.

A capture source with a SHA-256 whose file lies inside the project is a pinned capture:
a changed file, or a range that its own captured runs break, is a finding. Captures that
live elsewhere (the lab's) cannot be re-judged; their pages say so.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

from .capture import read_capture, sha256_of
from .derive import breaks, covered_steps
from .errors import Finding
from .load import PROFILES, Manual, profile_files
from .model import Band, CaptureSource, Catalog, Expectation, Median, Profile
from .phrase import describe, num
from .run import Run
from .source import read_document

# What a median may differ from its stated value before check reports it (the judge's default).
MEDIAN_RTOL = 0.10


def repo_capture(root: Path, source: object) -> Path | None:
    """The file of a pinned capture source inside the project, else None."""
    if not isinstance(source, CaptureSource) or source.sha256 is None or Path(source.path).is_absolute():
        return None
    path = (root / source.path).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def captures_in_repo(root: Path, profile: Profile) -> dict[str, Path]:
    """Source id -> file of the profile's captures that are inside the project."""
    return {sid: p for sid, s in profile.sources.items() if (p := repo_capture(root, s)) is not None}


def captured_runs(root: Path, profile: Profile) -> dict[str, Run]:
    """The profile's captured runs that are in the project and readable, by source id."""
    return {sid: read_capture(path, str(path.relative_to(root.resolve())))
            for sid, path in captures_in_repo(root, profile).items() if path.is_file()}


def holds(e: Expectation, key: str, run: Run, skip_first: int, catalog: Catalog) -> list[str]:
    """How one captured run breaks an expectation (empty: it holds).

    The containment rules of `judge` (band bounds included, median within a relative
    tolerance, exact and presence at every step), kept to what a capture can break.
    """
    if not isinstance(e, (Band, Median)):
        return breaks(e, key, run, catalog)
    points = covered_steps(run, key, e, skip_first)
    if not points:
        return [f"{key} is not logged at the steps it covers"]
    bad = [(s, v) for s, v in points if not math.isfinite(v)]
    if isinstance(e, Band):
        bad += [(s, v) for s, v in points if math.isfinite(v) and not e.contains(v)]
        return [f"{num(v) if math.isfinite(v) else v} at step {s}" for s, v in sorted(bad)[:5]]
    if bad:
        return [f"{bad[0][1]} at step {bad[0][0]}"]
    median = statistics.median(v for _, v in points)
    if abs(median - e.value) > MEDIAN_RTOL * abs(e.value):
        return [f"median {num(median)} of {len(points)} steps is more than {num(MEDIAN_RTOL * 100)}% from {num(e.value)}"]
    return []


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
                out.append(doc.finding(("sources", sid, "path"), f"capture {source.path} is missing"))
                continue
            if sha256_of(path) != source.sha256:
                out.append(doc.finding(("sources", sid, "sha256"), f"capture {source.path} changed: its SHA-256 no longer "
                                       "matches; restore it or derive the ranges again"))
            run = read_capture(path, source.path)
            out += run.problems
            runs[sid] = run
        for key, expectations in profile.expectations.items():
            unit = manual.metrics[key].unit if key in manual.metrics else None
            for i, e in enumerate(expectations):
                for sid in e.sources:
                    if sid not in runs:
                        continue
                    source = profile.sources[sid]
                    assert isinstance(source, CaptureSource)
                    found = holds(e, key, runs[sid], source.skip_first or 0, manual.catalog)
                    if found:
                        out.append(doc.finding(("expectations", key, i), f"{key} {describe(e, unit)}: its own capture "
                                               f"{sid!r} breaks it: {'; '.join(found)}"))
    return out
