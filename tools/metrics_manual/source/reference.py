"""A corridor's reference curve, read from its pinned capture into the profile before it is validated.

A corridor (model/schema.py) names a capture source of its profile; the curve is that capture's
line of the metric, `{"metric": key, "series": [[step, value], ...]}` (the shape runs/capture.py
writes). The loader puts it into the corridor as `reference.points`, so every stage after it (the
pages, the exports, judge, derive, check) holds the curve itself and reads no file. A capture
arrives in a pull request: it is held to more than a run's file is, and whatever it lacks is a
finding, never a traceback:

- the source is a capture with a `sha256`, at a relative path inside the project reached through
  no symlink, a regular file of at most the source's limit, whose SHA-256 is the one recorded;
- every line is a CI-history line, and the metric has exactly one;
- its series has each step once and in order, each step a whole number from 0, each value a
  finite number (Miles' gate errs on a duplicate step and on a non-finite value alike).

Where the files come from is a `CaptureFiles`: the project's (`ProjectCaptures`, with the captures
derive is about to write in place of the files on disk), or a git revision's (history/git.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.disk.files import symlink_on_the_way
from metrics_manual.source import reader
from metrics_manual.source.reader import Document
from metrics_manual.text import shown

_MARKERS = {"NaN", "Infinity", "-Infinity"}  # how a capture writes a value that is not finite
STEP_LIMIT = 2**63  # a step is a whole number from 0 to 2^63 - 1, as a run's


class Unusable(Exception):
    """A capture file that cannot be read: why, in words, and the code of the finding."""

    def __init__(self, why: str, code: Code = codes.BAD_REFERENCE) -> None:
        super().__init__(why)
        self.why, self.code = why, code


class CaptureFiles(Protocol):
    def read(self, path: str) -> bytes:
        """The bytes of the capture at `path` (relative to the project, already held to stay inside it);
        Unusable when it cannot be read."""
        ...


@dataclass(frozen=True)
class ProjectCaptures:
    """The project's capture files; `pending`: captures about to be written (derive), read in their place."""

    root: Path
    pending: Mapping[Path, str] = field(default_factory=dict)

    def read(self, path: str) -> bytes:
        target = self.root / path
        for written, text in self.pending.items():
            if os.path.abspath(written) == os.path.abspath(target):
                return text.encode("utf-8")
        link = symlink_on_the_way(self.root, target)
        if link is not None:
            raise Unusable(
                f"{link.relative_to(self.root).as_posix()} is a symlink; a reference is read from a real file"
            )
        if not os.path.lexists(target):
            raise Unusable(f"capture {path} is missing", codes.CAPTURE_MISSING)
        reading = reader.Reading(reader.MAX_BYTES, "the project", "a capture is a file of CI-history lines")
        raw, why = reader.read_bytes(target, self.root, reading)
        if raw is None:
            raise Unusable(f"capture {path}: {why}")
        return raw


@dataclass
class _Capture:
    """One capture file as read: its lines by metric (line number, series), or why it cannot be used."""

    lines: dict[str, tuple[int, Any]] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)


def _escapes(path: str) -> bool:
    """Whether `path` is absolute or climbs out of the folder it starts in."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    return PurePosixPath(path).is_absolute() or Path(path).is_absolute() or ".." in parts or not parts


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")  # json.loads would read NaN and Infinity as numbers


def _read_capture(captures: CaptureFiles, path: str, digest: str, doc: Document, sid: str) -> _Capture:
    out = _Capture()
    try:
        raw = captures.read(path)
    except Unusable as err:
        out.problems.append(doc.finding(("sources", sid, "path"), err.why, code=err.code))
        return out
    if hashlib.sha256(raw).hexdigest() != digest:
        why = f"capture {path} changed: its SHA-256 no longer matches; restore it or derive the ranges again"
        out.problems.append(doc.finding(("sources", sid, "sha256"), why, code=codes.CAPTURE_CHANGED))
        return out
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        out.problems.append(
            Finding(path, line, 1, "not UTF-8 text: a capture is CI-history lines", code=codes.BAD_REFERENCE)
        )
        return out
    for n, text_line in enumerate(text.split("\n"), start=1):
        if not text_line.strip():
            continue
        try:
            record = json.loads(text_line, parse_constant=_no_constant)
        except (ValueError, RecursionError):
            record = None
        metric = record.get("metric") if isinstance(record, dict) else None
        series = record.get("series") if isinstance(record, dict) else None
        if not isinstance(metric, str) or not isinstance(series, list):
            why = 'not a CI-history line: expected {"metric": ..., "series": [[step, value], ...]}'
            out.problems.append(Finding(path, n, 1, why, code=codes.BAD_REFERENCE))
            continue
        if metric in out.lines:
            why = f"a second line of {shown(metric)} (the first is line {out.lines[metric][0]}): a capture has one line per metric"
            out.problems.append(Finding(path, n, 1, why, code=codes.BAD_REFERENCE))
            continue
        out.lines[metric] = (n, series)
    return out


def curve(series: list[Any]) -> tuple[list[list[int | float]], str | None]:
    """A series as a reference's points, or why it is not a clean curve (the first fault)."""
    points: list[list[int | float]] = []
    before: int | None = None
    for i, p in enumerate(series):
        if type(p) is not list or len(p) != 2:
            return [], f"point {i + 1} is not [step, value]: {json.dumps(p)[:40]}"
        step, value = p
        if type(step) is not int or not 0 <= step < STEP_LIMIT:
            return [], f"point {i + 1}: the step {json.dumps(step)[:40]} is not a whole number from 0"
        if isinstance(value, str) and value in _MARKERS:
            return [], f"not a finite number at step {step} ({value}): a reference is finite at each of its steps"
        if type(value) not in (int, float):
            return [], f"step {step}: the value {json.dumps(value)[:40]} is not a number"
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            return [], f"not a finite number at step {step}: a reference is finite at each of its steps"
        if before is not None and step <= before:
            again = "again" if step == before else f"after step {before}"
            return [], f"step {step} {again}: a reference has each step once, in order"
        points.append([step, value if type(value) is float or abs(value) < 2**53 else number])
        before = step
    if not points:
        return [], "its series has no point"
    return points, None


def fill_references(doc: Document, captures: CaptureFiles) -> list[Finding]:
    """Put each corridor's curve into the raw data of one profile (`reference.points`), before the
    model validates it; a finding for each reference that cannot be used (the module's rules)."""
    data = doc.data
    if not isinstance(data, dict) or not isinstance(data.get("expectations"), dict):
        return []
    given = data.get("sources")
    sources: dict[str, Any] = given if isinstance(given, dict) else {}
    read: dict[str, _Capture] = {}
    out: list[Finding] = []
    for key, expectations in data["expectations"].items():
        for i, e in enumerate(expectations if isinstance(expectations, list) else []):
            ref = e.get("reference") if isinstance(e, dict) and e.get("kind") == "corridor" else None
            if not isinstance(ref, dict) or not isinstance(ref.get("source"), str):
                continue  # the model says what is wrong with it
            at = ("expectations", key, i, "reference")
            if str(key).endswith("/*") or "{" in str(key):
                why = f"a corridor follows the curve of one key, and {key} stands for several: range it with a band"
                out.append(doc.finding(("expectations", key, i, "kind"), why, code=codes.BAD_REFERENCE))
                ref["points"] = [[0, 0]]  # the finding says it all: a stand-in keeps the model from more
                continue
            if "points" in ref:
                why = (
                    "points: a reference's points are read from its capture; remove them and name the capture in source"
                )
                out.append(doc.finding((*at, "points"), why, code=codes.BAD_REFERENCE, key=True))
                ref["points"] = [[0, 0]]  # the finding says it all: a stand-in keeps the model from more
                continue
            points, problems = _points(doc, captures, sources, read, str(key), ref["source"], at)
            out += problems
            # A reference that cannot be used is a finding of its own: a stand-in keeps the model from a second one.
            ref["points"] = points or [[0, 0]]
    return out


def _points(
    doc: Document,
    captures: CaptureFiles,
    sources: dict[str, Any],
    read: dict[str, _Capture],
    key: str,
    sid: str,
    at: tuple[str | int, ...],
) -> tuple[list[list[int | float]], list[Finding]]:
    """The reference's points, or the findings that keep it from being used."""
    source = sources.get(sid)
    where = (*at, "source")
    if not isinstance(source, dict):
        why = f"unknown source {shown(sid)}: a reference names a capture source of the profile"
        return [], [doc.finding(where, why, code=codes.UNKNOWN_REFERENCE)]
    path, digest = source.get("path"), source.get("sha256")
    if source.get("kind") != "capture" or not isinstance(path, str):
        return [], [
            doc.finding(where, f"source {sid} is no capture: a reference is a capture's line", code=codes.BAD_REFERENCE)
        ]
    if not isinstance(digest, str):
        why = f"capture {sid} has no sha256: a reference is pinned, so that a changed curve cannot pass unseen"
        return [], [doc.finding(("sources", sid, "path"), why, code=codes.BAD_REFERENCE)]
    if _escapes(path):
        why = f"capture {shown(path)} is not inside the project: a reference is a relative path under it"
        return [], [doc.finding(("sources", sid, "path"), why, code=codes.BAD_REFERENCE)]
    first = sid not in read
    capture = read[sid] = read.get(sid) or _read_capture(captures, path, digest, doc, sid)
    if capture.problems:
        return [], capture.problems if first else []
    if key not in capture.lines:
        why = f"capture {path} has no line of {key}: the reference of a metric is the capture's line of its key"
        return [], [doc.finding(where, why, code=codes.BAD_REFERENCE)]
    line, series = capture.lines[key]
    points, fault = curve(series)
    if fault is not None:
        line_at, col = doc.where(where)
        message = f"the reference of {key} ({doc.path}:{line_at}:{col}): {fault}"
        return [], [Finding(path, line, 1, message, code=codes.BAD_REFERENCE)]
    return points, []
