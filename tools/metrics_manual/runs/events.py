"""The event log (--save-debug-event-data, or --dump-details D: D/events/*.jsonl).

One pydantic event per line; metric lines are
`{"timestamp": ..., "source": {...}, "type": "metric", "rollout_id": null, "attempt": null,
"metrics": {"rollout/step": 3, ...}}`. Other event types (weight checksums, witnesses ...)
can be large and are most of the file, so the file is read in big chunks, each line's head
is looked at for `"type":"metric"`, and only metric lines are parsed.
Line numbers are counted only when a problem needs one. pydantic writes a non-finite value
as `null`, so null is NaN here, never an absent value.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.runs.collect import Collector, as_step, number

_STRICT, _SPACED, _TYPE, _METRIC = b'"type":"metric"', b'"type": "metric"', b'"type"', b'"metric"'
_HEAD = 1024
CHUNK = 4 * 1024 * 1024
# A problem found before line numbers are counted: byte offset of its line, kind, message, severity, column.
Problem = tuple[int, Code, str, str, int]


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    problems: list[Problem] = []
    with path.open("rb") as fh:
        tail = b""  # the unfinished last line of what was read so far
        offset = 0  # file offset of tail's first byte
        while chunk := fh.read(CHUNK):
            data = tail + chunk if tail else chunk
            end = data.rfind(b"\n") + 1
            if end:
                _scan(data, end, offset, out, problems, missing_step)
                tail = data[end:]
                offset += end
            else:
                tail = data  # one line longer than a chunk: keep reading it
            if out.progress:
                out.progress(len(chunk))
    if tail.strip():
        try:
            event = json.loads(tail)
        except ValueError:
            problems.append(
                (
                    offset,
                    codes.CUT_LAST_LINE,
                    "the last line is cut (the run may still be writing this file); it was skipped",
                    "warning",
                    1,
                )
            )
        else:
            if isinstance(event, dict) and event.get("type") == "metric":
                _metric(event, offset, out, problems, missing_step)
    if problems:
        lines = _line_numbers(path, sorted({p[0] for p in problems}))
        for at, code, message, severity, col in problems:
            out.problem(rel, lines[at], message, code=code, severity=severity, col=col)


def _is_metric_line(data: bytes, start: int, stop: int) -> bool:
    """Whether a line may be a metric event, looking at its head only: pydantic writes the
    base fields (timestamp, source, type) first, so "type" is in the first few hundred bytes."""
    head = min(stop, start + _HEAD)
    if data.find(_STRICT, start, head) >= 0 or data.find(_SPACED, start, head) >= 0:
        return True
    # No type in the head (a hand-written or reordered line): look at the whole line.
    return data.find(_TYPE, start, head) < 0 and data.find(_METRIC, start, stop) >= 0


def _scan(
    data: bytes,
    end: int,
    offset: int,
    out: Collector,
    problems: list[Problem],
    missing_step: set[str],
) -> None:
    # One memchr per line and a look at its head: a non-metric event of any size costs almost nothing.
    find = data.find
    start = 0
    while start < end:
        stop = find(b"\n", start, end)
        if _is_metric_line(data, start, stop):
            try:
                event = json.loads(data[start:stop])
            except ValueError as exc:
                problems.append(
                    (offset + start, codes.CORRUPT_LINE, f"corrupt line: {exc}", "error", getattr(exc, "colno", 1))
                )
            else:
                if isinstance(event, dict) and event.get("type") == "metric":
                    _metric(event, offset + start, out, problems, missing_step)
        start = stop + 1


def _metric(event: dict[str, Any], at: int, out: Collector, problems: list[Problem], missing_step: set[str]) -> None:
    metrics = event.get("metrics")
    if not isinstance(metrics, dict):
        problems.append((at, codes.NOT_A_RECORD, "a metric event without a 'metrics' object", "error", 1))
        return
    attempt = event.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0
    for key, value in metrics.items():
        sk = out.step_key(key)
        if sk is None:
            if key in out.step_key_set and (step := as_step(value)) is not None:
                out.put_step(key, step)
            continue
        step = as_step(metrics.get(sk))
        if step is None:
            if key not in missing_step:
                missing_step.add(key)
                problems.append(
                    (
                        at,
                        codes.MISSING_STEP,
                        f"{key} is logged without its step key {sk}; such values were skipped",
                        "warning",
                        1,
                    )
                )
            continue
        v = number(value)
        if v is not None:
            out.put(key, step, v, attempt)


def _line_numbers(path: Path, offsets: list[int]) -> dict[int, int]:
    """1-based line number of each byte offset (sorted), counting newlines in one more pass."""
    found: dict[int, int] = {}
    line, pos, k = 1, 0, 0
    with path.open("rb") as fh:
        while k < len(offsets) and (chunk := fh.read(CHUNK)):
            while k < len(offsets) and offsets[k] < pos + len(chunk):
                found[offsets[k]] = line + chunk.count(b"\n", 0, offsets[k] - pos)
                k += 1
            line += chunk.count(b"\n")
            pos += len(chunk)
    for o in offsets[k:]:
        found[o] = line
    return found
