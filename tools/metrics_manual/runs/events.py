"""The event log (--save-debug-event-data, or --dump-details D: D/events/*.jsonl).

One pydantic event per line; metric lines are
`{"timestamp": ..., "source": {...}, "type": "metric", "rollout_id": null, "attempt": null,
"metrics": {"rollout/step": 3, ...}}`. Other event types (weight checksums, witnesses ...)
can be large and are most of the file, so the file is read in big chunks and a line is
parsed only when it may be a metric line: a line is skipped unparsed only when it holds
neither the bytes `metric` nor a backslash (an escape is the only other way JSON can spell
the word, and duplicate keys make a "type" early in the line no proof), so
any spacing, escaping or key order that json.loads accepts gives the same records.
A metric line with no backslash is decoded by msgspec into a Struct of the keys seen so far
(runs/known_keys.py, runs/event_struct.py) and put a column per key; any other is parsed by orjson
where it reads it as json.loads does, else by json.loads (`_line`).
Line numbers are counted only when a problem needs one. pydantic writes a non-finite value
as `null`, so null is NaN here, never an absent value.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.runs import event_struct
from metrics_manual.runs.collect import (
    MAX_LINE,
    SURROGATE,
    TOO_DEEP,
    Collector,
    as_step,
    corrupt_line,
    fast_record,
    finder,
    invalid_key,
    not_a_step,
    number,
    record_surrogate,
    struct_parser,
)
from metrics_manual.runs.known_keys import SLICE_BYTES

# "metri" and a lone backslash: a byte search that runs fast over hex checksums (the bulk of
# a large event log), where a search for "metric" or "\u" is two to three times slower.
_METRIC, _ESCAPE = b"metri", b"\\"
# A line the Structs decode is at most a chunk and the line carried into it: shorter than MAX_LINE,
# so only `_line` checks the cap (tests/runs/test_events.py holds CHUNK to this).
CHUNK = 4 * 1024 * 1024

# A problem found before line numbers are counted: byte offset of its line, kind, message, severity, column.
Problems = list[tuple[int, Code, str, str, int]]


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    problems: Problems = []
    cut = False
    # msgspec decodes a metric line into a Struct of the keys seen so far (runs/event_struct.py);
    # orjson (or json.loads) reads the others.
    known = _Known(out, problems, missing_step) if struct_parser() is not None else None
    # One buffer read into again and again: a new 4 MB bytes object a chunk costs the kernel a
    # page fault per 4 KB page (a quarter of the time of a plain read). Its lines are copied out.
    buf = bytearray(CHUNK)
    with path.open("rb", buffering=0) as fh:
        tail = b""  # the unfinished last line of what was read so far
        offset = 0  # file offset of tail's first byte (or of the long line's)
        base = 0  # file offset of the chunk's first byte
        long: list[bytes] | None = None  # the pieces of a line longer than a chunk, joined once
        long_len = 0
        while size := fh.readinto(buf):
            chunk = buf if size == len(buf) else buf[:size]
            if out.progress:
                out.progress(len(chunk))
            start = 0  # the first byte of the chunk not yet read
            if long is not None:
                nl = chunk.find(b"\n")
                if nl < 0:
                    long_len += len(chunk)
                    if long_len <= MAX_LINE:
                        long.append(bytes(chunk))
                    else:
                        long.clear()
                    base += len(chunk)
                    continue
                long_len += nl + 1
                if long_len <= MAX_LINE:
                    line = b"".join(long) + bytes(chunk[: nl + 1])
                    _scan(line, 0, len(line), offset, out, problems, missing_step, known)
                else:
                    problems.append((offset, codes.LINE_TOO_LONG, _too_long(), "error", 1))
                offset += long_len
                long, long_len = None, 0
                start = nl + 1
            elif tail:
                # Only the line that runs over from the last chunk is joined: the chunk is read in place.
                nl = chunk.find(b"\n")
                if nl >= 0:
                    line = tail + bytes(chunk[: nl + 1])
                    _scan(line, 0, len(line), offset, out, problems, missing_step, known)
                    offset += len(line)
                    tail, start = b"", nl + 1
            last = chunk.rfind(b"\n", start) + 1
            if last:
                _scan(chunk, start, last, base, out, problems, missing_step, known)
                tail, offset = bytes(chunk[last:]), base + last
            elif start < len(chunk) or tail:
                # No line ends in the rest of this chunk: one line longer than a chunk.
                long = [tail, bytes(chunk[start:])] if tail else [bytes(chunk[start:])]
                long_len, tail = sum(map(len, long)), b""
                offset = base + start - (long_len - (len(chunk) - start))
            base += len(chunk)
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


def _scan(
    data: bytes | bytearray,
    start: int,
    end: int,
    base: int,
    out: Collector,
    problems: Problems,
    missing_step: set[str],
    known: _Known | None = None,
) -> None:
    """Read the metric lines of data[start:end] (whole lines; data[i] is at file offset base + i)."""
    view = memoryview(data)  # a line is copied out once (a bytearray's slice would be copied twice)
    if known is not None:
        known.scan(data, view, start, end, base)
        return
    for begin, stop in lines_to_read(data, start, end):
        _line(bytes(view[begin:stop]), base + begin, out, problems, missing_step)


class _Known:
    """Metric lines msgspec decoded into the Struct of the keys seen so far (runs/event_struct.py),
    from consecutive lines of a chunk, put a column per key; any line it cannot put so is read alone
    (`_line`), in line order."""

    def __init__(self, out: Collector, problems: Problems, missing_step: set[str]) -> None:
        self.out, self.problems, self.missing_step = out, problems, missing_step
        self.keys = event_struct.known_keys(out)
        self.failed = False  # the last line was not decoded: its keys may be new

    def scan(self, data: bytes | bytearray, view: memoryview, start: int, end: int, base: int) -> None:
        first = finder(data)(_ESCAPE, start, end)
        escapes = first >= 0  # a line with a backslash is never decoded
        held: list[Any] = []
        spans: list[tuple[int, int]] = []
        size = 0  # the bytes of the lines held
        for begin, stop in lines_to_read(data, start, end, first):
            if self.failed:  # the lines that failed were read by `_line`: their keys are noted
                self.failed = False
                self.keys.learn()
            line = view[begin:stop]
            if (escapes and data.find(_ESCAPE, begin, stop) >= 0) or (record := self.keys.record(line)) is None:
                self.failed = True
                self._put(held, spans, view, base)
                held, spans, size = [], [], 0
                _line(bytes(line), base + begin, self.out, self.problems, self.missing_step)
                continue
            held.append(record)
            spans.append((begin, stop))
            size += stop - begin
            if size >= SLICE_BYTES:
                self._put(held, spans, view, base)
                held, spans, size = [], [], 0
        self._put(held, spans, view, base)

    def _put(self, held: list[Any], spans: list[tuple[int, int]], view: memoryview, base: int) -> None:
        """Put the records a column per key or, where that fails, halves of them in turn."""
        if not held or event_struct.put_columns(self.out, self.keys, held):
            return
        if len(held) > 8:
            mid = len(held) // 2
            self._put(held[:mid], spans[:mid], view, base)
            self._put(held[mid:], spans[mid:], view, base)
            return
        for begin, stop in spans:
            _line(bytes(view[begin:stop]), base + begin, self.out, self.problems, self.missing_step)


def lines_to_read(
    data: bytes | bytearray, start: int, end: int, escape: int | None = None
) -> Iterator[tuple[int, int]]:
    """(first byte, the newline after it) of each line of data[start:end] that may be a metric line.

    A line may be one only when it holds `metri` or a backslash: the chunk is searched for those
    bytes, not line by line, and only the lines around the hits are cut out and parsed. `escape`:
    the first backslash's position in data[start:end] (-1 for none) when the caller searched already."""
    search = finder(data)  # SIMD where installed: the same hits either way
    find, rfind = data.find, data.rfind  # a newline: memchr
    metri = search(_METRIC, start, end)
    escape = search(_ESCAPE, start, end) if escape is None else escape
    while metri >= 0 or escape >= 0:
        hit = escape if metri < 0 or 0 <= escape < metri else metri
        begin = rfind(b"\n", start, hit) + 1 or start
        stop = find(b"\n", hit, end)
        yield begin, stop
        start = stop + 1
        if 0 <= metri < start:
            metri = search(_METRIC, start, end)
        if 0 <= escape < start:
            escape = search(_ESCAPE, start, end)


def _line(line: bytes, at: int, out: Collector, problems: Problems, missing_step: set[str]) -> None:
    """One line that may be a metric event (at: its file offset)."""
    if len(line) > MAX_LINE:
        problems.append((at, codes.LINE_TOO_LONG, _too_long(), "error", 1))
        return
    event = fast_record(line, out.step_key_set, out.keys)
    if event is not None:  # orjson read it as json.loads would, and never keeps a lone surrogate
        if event.get("type") == "metric":
            _metric(event, at, out, problems, missing_step)
        return
    try:
        event = json.loads(line)
    except RecursionError:
        problems.append((at, codes.CORRUPT_LINE, TOO_DEEP, "error", 1))
        return
    except ValueError as exc:
        message, col = corrupt_line(exc, line)
        problems.append((at, codes.CORRUPT_LINE, message, "error", col))
        return
    if isinstance(event, dict) and event.get("type") == "metric":
        if (b"\\u" in line or b"\xed" in line) and SURROGATE.search(line) and (bad := record_surrogate(event)):
            problems.append((at, codes.INVALID_KEY, invalid_key(bad), "error", 1))
        else:
            _metric(event, at, out, problems, missing_step)


def _metric(event: dict[str, Any], at: int, out: Collector, problems: Problems, missing_step: set[str]) -> None:
    metrics = event.get("metrics")
    if not isinstance(metrics, dict):
        problems.append((at, codes.NOT_A_RECORD, "a metric event without a 'metrics' object", "error", 1))
        return
    attempt = event.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else 0
    steps: dict[str, int] = {}  # each step key's step, read once a record (not once a value)
    for own in out.step_key_set:  # a step key whose value is no step spoils the record
        raw = metrics.get(own)
        if raw is not None:
            if (step := as_step(raw)) is None:
                problems.append((at, codes.NOT_A_STEP, not_a_step(own, raw), "error", 1))
                return
            steps[own] = step
    step_key, put = out.step_key, out.put
    for key in out.kept(metrics):
        value = metrics[key]
        sk = step_key(key)
        if sk is None:
            if key in steps:  # a step key with a step
                out.put_step(key, steps[key])
            continue
        step = steps.get(sk)  # `sk` is a step key: its step, or None where the record has none
        if type(value) is float and step is not None:  # the usual value, as `number` reads it
            put(key, step, value, attempt)
            continue
        if step is None:
            if key not in missing_step:
                missing_step.add(key)
                other = next((k for k in metrics if k in out.step_key_set), None)
                why = out.without_step(key, f"its step key {sk}", other)
                problems.append((at, codes.MISSING_STEP, why, "warning", 1))
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
