"""The event log (--save-debug-event-data, or --dump-details D: D/events/*.jsonl).

One pydantic event per line; metric lines are
`{"timestamp": ..., "source": {...}, "type": "metric", "rollout_id": null, "attempt": null,
"metrics": {"rollout/step": 3, ...}}`. Other event types (weight checksums, witnesses ...)
can be large and are most of the file, so the file is read in big chunks and a line is
parsed only when it may be a metric line: a line is skipped unparsed only when it holds
neither the bytes `metric` nor a backslash (an escape is the only other way JSON can spell
the word, and duplicate keys make a "type" early in the line no proof), so
any spacing, escaping or key order that json.loads accepts gives the same records.
Line numbers are counted only when a problem needs one. pydantic writes a non-finite value
as `null`, so null is NaN here, never an absent value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.runs.collect import (
    MAX_LINE,
    SURROGATE,
    Collector,
    as_step,
    not_a_step,
    number,
    record_surrogate,
)

# "metri" and a lone backslash: a byte search that runs fast over hex checksums (the bulk of
# a large event log), where a search for "metric" or "\u" is two to three times slower.
_STRICT, _METRIC, _ESCAPE = b'"type":"metric"', b"metri", b"\\"
_HEAD = 1024
CHUNK = 4 * 1024 * 1024
# A problem found before line numbers are counted: byte offset of its line, kind, message, severity, column.
Problems = list[tuple[int, Code, str, str, int]]


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    problems: Problems = []
    cut = False
    with path.open("rb") as fh:
        tail = b""  # the unfinished last line of what was read so far
        offset = 0  # file offset of tail's first byte (or of the long line's)
        long: list[bytes] | None = None  # the pieces of a line longer than a chunk, joined once
        long_len = 0
        while chunk := fh.read(CHUNK):
            if out.progress:
                out.progress(len(chunk))
            if long is not None:
                nl = chunk.find(b"\n")
                if nl < 0:
                    long_len += len(chunk)
                    if long_len <= MAX_LINE:
                        long.append(chunk)
                    else:
                        long.clear()
                    continue
                long_len += nl + 1
                if long_len <= MAX_LINE:
                    line = b"".join(long) + chunk[: nl + 1]
                    _scan(line, len(line), offset, out, problems, missing_step)
                else:
                    problems.append((offset, codes.LINE_TOO_LONG, _too_long(), "error", 1))
                offset += long_len
                long, long_len = None, 0
                chunk = chunk[nl + 1 :]
            data = tail + chunk if tail else chunk
            end = data.rfind(b"\n") + 1
            if end:
                _scan(data, end, offset, out, problems, missing_step)
                tail = data[end:]
                offset += end
            elif data:
                long, long_len, tail = [data], len(data), b""  # one line longer than a chunk
        if long is not None:
            if long_len > MAX_LINE:
                problems.append((offset, codes.LINE_TOO_LONG, _too_long(), "error", 1))
            else:
                tail = b"".join(long)
    if tail.strip():
        try:
            event = json.loads(tail)
        except (ValueError, RecursionError):
            cut = True
        else:
            if isinstance(event, dict) and event.get("type") == "metric":
                _metric(event, offset, out, problems, missing_step)
    if problems or cut:
        lines = _line_numbers(path, sorted({p[0] for p in problems} | ({offset} if cut else set())))
        for at, code, message, severity, col in problems:
            out.problem(rel, lines[at], message, code=code, severity=severity, col=col)
        if cut:
            out.cut(rel, lines[offset])


def _too_long() -> str:
    return f"a line longer than {MAX_LINE // (1024 * 1024)} MB; it was skipped (see Limits)"


def _may_be_metric(data: bytes, start: int, stop: int) -> bool:
    """Whether a line may be a metric event. The head check is the fast path (pydantic writes
    "type" among the first fields); otherwise only a line that cannot spell `metric` is skipped."""
    if data.find(_STRICT, start, min(stop, start + _HEAD)) >= 0:
        return True
    return data.find(_METRIC, start, stop) >= 0 or data.find(_ESCAPE, start, stop) >= 0


def _scan(data: bytes, end: int, offset: int, out: Collector, problems: Problems, missing_step: set[str]) -> None:
    # One memchr per line and a look at its bytes: a non-metric event of any size costs little.
    find = data.find
    start = 0
    while start < end:
        stop = find(b"\n", start, end)
        if stop - start > MAX_LINE:
            problems.append((offset + start, codes.LINE_TOO_LONG, _too_long(), "error", 1))
        elif _may_be_metric(data, start, stop):
            line = data[start:stop]
            try:
                event = json.loads(line)
            except RecursionError:
                why = "corrupt line: JSON nested too deeply; it was skipped"
                problems.append((offset + start, codes.CORRUPT_LINE, why, "error", 1))
            except ValueError as exc:
                col = getattr(exc, "colno", 1)
                problems.append((offset + start, codes.CORRUPT_LINE, f"corrupt line: {exc}", "error", col))
            else:
                if isinstance(event, dict) and event.get("type") == "metric":
                    if (
                        (b"\\u" in line or b"\xed" in line)
                        and SURROGATE.search(line)
                        and (bad := record_surrogate(event))
                    ):
                        problems.append(
                            (
                                offset + start,
                                codes.INVALID_KEY,
                                f"a key that is not valid Unicode (a lone surrogate): {bad}; the line was skipped",
                                "error",
                                1,
                            )
                        )
                    else:
                        _metric(event, offset + start, out, problems, missing_step)
        start = stop + 1


def _metric(event: dict[str, Any], at: int, out: Collector, problems: Problems, missing_step: set[str]) -> None:
    metrics = event.get("metrics")
    if not isinstance(metrics, dict):
        problems.append((at, codes.NOT_A_RECORD, "a metric event without a 'metrics' object", "error", 1))
        return
    attempt = event.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else 0
    for own in out.step_key_set:  # a step key whose value is no step spoils the record
        raw = metrics.get(own)
        if raw is not None and as_step(raw) is None:
            problems.append((at, codes.NOT_A_STEP, not_a_step(own, raw), "error", 1))
            return
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
                other = next((k for k in metrics if k in out.step_key_set), None)
                if other:
                    out.other_step.setdefault(key, other)
                problems.append(
                    (
                        at,
                        codes.MISSING_STEP,
                        f"{key} is logged without its step key {sk}"
                        + (f" (with {other})" if other else "")
                        + "; such values were skipped",
                        "warning",
                        1,
                    )
                )
            continue
        if value is None:
            out.put(key, step, math.nan, attempt)  # pydantic's NaN / Infinity
            continue
        v = number(value)
        if v is None:
            if message := out.put_invalid(key, step, value, attempt):
                problems.append((at, codes.NOT_A_NUMBER, message, "warning", 1))
        else:
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
