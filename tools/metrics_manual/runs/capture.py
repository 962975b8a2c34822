"""Compact captures of runs: the catalog's keys, one CI-history line per metric, and their SHA-256.

A capture is what a profile's ranges were derived from, small enough to review in a pull
request: `{"metric": key, "series": [[step, value], ...]}` per line, the shape of Miles'
CI history, with non-finite values as the strings "NaN", "Infinity" and "-Infinity"; the
judge's CI-history reader reads it back.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError
from metrics_manual.model.schema import CaptureSource, Catalog, Profile
from metrics_manual.runs.read import read_run
from metrics_manual.runs.run import Run


def _value(v: float) -> float | str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def capture_text(run: Run, keys: Iterable[str]) -> str:
    """The compact capture of `run`: one line per key it logged, in the order of `keys`."""
    lines = []
    for key in keys:
        series = run.series.get(key)
        if series:
            points: list[tuple[int, float | str]] = list(sorted(series.items()))
            if not all(map(math.isfinite, series.values())):
                points = [(step, _value(series[step])) for step, _ in points]
            lines.append(json.dumps({"metric": key, "series": points}, separators=(",", ":"), allow_nan=False))
    return "".join(line + "\n" for line in lines)


def reference_text(curves: Mapping[str, Sequence[Sequence[float]]]) -> str:
    """A capture of reference curves (metric -> [[step, value], ...]): one line per metric, by key."""
    return "".join(
        json.dumps({"metric": key, "series": [list(p) for p in curves[key]]}, separators=(",", ":"), allow_nan=False)
        + "\n"
        for key in sorted(curves)
    )


def sha256_of(path: Path) -> str:
    """SHA-256 of a file, read in blocks; of a folder, of its files' relative paths and digests."""
    if path.is_dir():
        h = hashlib.sha256()
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f"{file.relative_to(path).as_posix()}\0{sha256_of(file)}\n".encode())
        return h.hexdigest()
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def repo_capture(root: Path, source: object) -> Path | None:
    """The file of a pinned capture source inside the project, else None."""
    if not isinstance(source, CaptureSource) or source.sha256 is None or Path(source.path).is_absolute():
        return None
    path = (root / source.path).resolve()
    return path if path.is_relative_to(root.resolve()) else None


def captures_in_repo(root: Path, profile: Profile) -> dict[str, Path]:
    """Source id -> file of the profile's captures that are inside the project."""
    return {sid: p for sid, s in profile.sources.items() if (p := repo_capture(root, s)) is not None}


def read_capture_run(path: Path, shown: str, catalog: Catalog) -> Run:
    """A capture (CI-history lines) through the judge's reader, shown by its path in the project."""
    try:
        run = read_run([path], catalog, input_format="ci-history")
    except ManualError:
        raise
    except (ValueError, OverflowError, RecursionError, MemoryError, OSError) as exc:
        # Captures arrive in pull requests: whatever a reader cannot take is a finding, never a traceback.
        why = f"capture cannot be read: {exc.__class__.__name__}"
        raise CaptureError([Finding(shown, 1, 1, why, code=codes.UNREADABLE_RUN)]) from None
    run.paths = [shown]
    # The reader names the file as it opened it; a finding names it as the project does.
    run.problems = [replace(f, path=shown) if Path(f.path) == path else f for f in run.problems]
    return run


class CaptureError(ManualError):
    """A capture in the project that cannot be read."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__("\n".join(str(f) for f in findings))


def captured_runs(root: Path, profile: Profile, catalog: Catalog) -> dict[str, Run]:
    """The profile's captured runs that are in the project and readable, by source id (a corridor's reference
    is no run)."""
    out = {}
    for sid, path in captures_in_repo(root, profile).items():
        if path.is_file() and sid not in profile.references:  # a reference is a curve, drawn as its corridor
            try:
                out[sid] = read_capture_run(path, str(path.relative_to(root.resolve())), catalog)
            except ManualError:
                continue  # check reports it; a drawing leaves it out
    return out


def captured_runs_by_profile(root: Path, profiles: Iterable[Profile], catalog: Catalog) -> dict[str, dict[str, Run]]:
    """Profile id -> its readable captured runs in the project: what the site draws, read once per build."""
    return {p.id: captured_runs(root, p, catalog) for p in profiles}
