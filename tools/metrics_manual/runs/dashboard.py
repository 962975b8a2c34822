"""The dashboard log (--use-miles-dashboard): {dump_details}/dashboard/metrics.jsonl.

One object per `log()` call: `{"ts", "step_key", "step", "metrics": {key: value}}`, written
with json.dumps, so a non-finite value is the bare token NaN, Infinity or -Infinity
(Python's json reads them).

The file is read in 4 MB chunks into reused buffers. In a chunk with no backslash and no `~`,
each bare token is spelled as a string of tildes of the same length (`_spell` says why that is
exact), and msgspec decodes each line into a Struct of the keys seen so far (runs/known_keys.py);
those records are put a column per key at C speed (runs/dashboard_struct.py). A spelled line it
cannot decode (new keys, a value of another type) is read by orjson, put a column per key where
its values are plain steps and numbers (`_put_columns`), record by record where not; its keys are
then learned. Any other line is read alone as `json_records` reads it (`json_record`, then
`_record`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from io import BufferedReader
from itertools import repeat
from operator import itemgetter, lt
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.runs import collect
from metrics_manual.runs.collect import (
    BIG,
    MAX_STEP,
    Collector,
    as_step,
    finder,
    json_record,
    lines_of,
    not_a_step,
    number,
    too_long,
)
from metrics_manual.runs.dashboard_struct import known_keys, put_columns
from metrics_manual.runs.known_keys import SLICE_BYTES

CHUNK = 4 * 1024 * 1024

# The spelling of each bare token: a string of its length, of a byte the chunk does not hold.
SPELLED: dict[Any, float] = {"~": math.nan, "~~~~~~": math.inf, "~~~~~~~": -math.inf}
_SPELLED_GET: Callable[[Any, Any], Any] = SPELLED.get
_ZEROED_GET: Callable[[Any, Any], Any] = dict.fromkeys(SPELLED, 0.0).get
_NUMBERS, _PLAIN, _INT = {float, int}, {float, int, str}, {int}
_BATCH = 1024  # records orjson read that are put at once (and held meanwhile)


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    batch = _Batch(out, rel, missing_step)
    # msgspec decodes a spelled line into a Struct of the keys seen so far; orjson (or json.loads)
    # reads the others. Without either, json.loads reads each line.
    known = _Known(out, rel, missing_step) if collect.struct_parser() is not None else None
    fast = collect.fast_parser() is not None or known is not None
    short = min(CHUNK, collect.MAX_LINE)  # no line of a chunk is longer than the cap, unless the cap is shorter
    with path.open("rb") as fh:
        for n, lines, spelled, newline in _blocks(fh, out, fast):
            if lines is None:
                _flush(batch, known)
                too_long(out, rel, n)
                continue
            taken = known.take(n, lines, batch) if spelled and known is not None and short == CHUNK else 0
            for i, view in enumerate(lines[taken:], taken):
                line = bytes(view)  # a line kept (in a batch) outlives the buffer it is a view of
                if len(line) > short and len(line) > collect.MAX_LINE:  # only when a chunk is longer
                    _flush(batch, known)
                    too_long(out, rel, n + i)
                    continue
                if spelled:
                    if known is not None and known.add(n + i, line, batch):
                        continue
                    if (record := _spelled(line)) is not None:
                        batch.add(n + i, line, record)
                        continue
                    line = _unspelled(line)
                _flush(batch, known)
                if (found := json_record(line + newline, n + i, rel, out, fast=True)) is not None:
                    _record(n + i, found, out, rel, missing_step)
    _flush(batch, known)


def _flush(batch: _Batch, known: _Known | None) -> None:
    """Put what both batches hold (one of them holds nothing): lines are put in their order."""
    batch.flush()
    if known is not None:
        known.flush()


def _row_getter(keys: Sequence[str]) -> Any:
    """A function giving the tuple of these keys' values in a dict (an empty tuple for none)."""
    if not keys:
        return lambda _: ()
    if len(keys) == 1:
        one = itemgetter(keys[0])
        return lambda x: (one(x),)
    return itemgetter(*keys)


def _blocks(fh: BufferedReader, out: Collector, fast: bool) -> Iterator[tuple[int, list[Any] | None, bool, bytes]]:
    """(line number of the first line, the lines without their newline, whether they are spelled by
    `_spell`, the newline that ended them) a chunk at a time. A line carried over from one chunk to
    the next comes alone and unspelled, and so does the last line when no newline ends it. A line
    longer than MAX_LINE gives (its number, None, False, b"") and is skipped to its end."""
    n = 1
    carry: list[bytes] = []  # a line that runs over from the last chunk, in pieces
    carried = 0
    # Two buffers read and spelled into again and again: a new 4 MB object a chunk costs the kernel a
    # page fault per 4 KB page (0.2 s of a 1 GB log). The lines are copied out of them.
    buf, spelled_buf = bytearray(CHUNK), bytearray()
    while size := fh.readinto(buf):
        chunk = buf if size == len(buf) else buf[:size]
        if out.progress is not None:
            out.progress(len(chunk))
        start = 0
        if carried:
            first = chunk.find(b"\n")
            if first < 0:  # no line ends in this chunk
                carried += len(chunk)
                if carried <= collect.MAX_LINE:
                    carry.append(bytes(chunk))
                else:
                    carry.clear()
                continue
            carried += first
            yield (
                (n, None, False, b"")
                if carried > collect.MAX_LINE
                else (n, [b"".join([*carry, chunk[:first]])], False, b"\n")
            )
            n += 1
            carry.clear()
            carried = 0
            start = first + 1
        last = chunk.rfind(b"\n") + 1
        if last > start:
            spelled = _spell(chunk, start, last, spelled_buf) if fast else None
            lines = lines_of(spelled or chunk)  # views into the buffers, until the next chunk
            del lines[-1]  # the bytes after the last newline (read from the chunk below)
            if start:
                del lines[0]  # the end of the carried line
            yield n, lines, spelled is not None, b"\n"
            n += len(lines)
        if rest := chunk[max(last, start) :]:  # the start of a line that ends in a later chunk
            carry.append(bytes(rest))
            carried = len(rest)
    if carried:
        yield (n, None, False, b"") if carried > collect.MAX_LINE else (n, [b"".join(carry)], False, b"")


def _spell(chunk: bytearray, start: int, end: int, into: bytearray) -> bytearray | None:
    """The chunk (copied into `into`) with each bare token in chunk[start:end] (whole lines) spelled as
    a string of tildes of the same length (`NaN` -> `"~"`, `Infinity` -> `"~~~~~~"`, `-Infinity` -> `"~~~~~~~"`), which
    orjson and msgspec read; None when it holds a byte that makes this unsafe (then its lines are
    read alone).

    Why a spelled line that parses is the record json.loads reads: the chunk holds no `~`, so
    every string of tildes is a spelled token; it holds no backslash, so a quote added inside a
    string closes it and a tilde follows, which no JSON allows; and each token is followed by `,`
    or `}` (so none is a key, which `:` follows; and none overlaps another, as in `NaNaN`). Each
    token is thus a value, read back by SPELLED. (Integers beyond 64 bits, which orjson reads as
    floats, are caught where values are read.)"""
    if b"\\" in chunk or b"~" in chunk:
        return None
    find = finder(chunk)  # SIMD: 5.3 ms -> 1.5 ms a 4 MB chunk of 110-key records
    nan, inf = find(b"NaN", start, end), find(b"Infinity", start, end)
    if nan < 0 and inf < 0:
        return chunk
    spelled = into  # the tokens are overwritten in place: each spelling is as long
    spelled[:] = chunk
    while nan >= 0:  # a token ends before `end`, a newline: the byte after it is in the chunk
        if chunk[nan + 3] not in _AFTER:
            return None
        spelled[nan : nan + 3] = b'"~"'
        nan = find(b"NaN", nan + 3, end)
    while inf >= 0:
        if chunk[inf + 8] not in _AFTER:
            return None
        if inf > start and chunk[inf - 1] == 45:  # -Infinity
            spelled[inf - 1 : inf + 8] = b'"~~~~~~~"'
        else:
            spelled[inf : inf + 8] = b'"~~~~~~"'
        inf = find(b"Infinity", inf + 8, end)
    return spelled


_AFTER = (44, 125)  # `,` and `}`: what json.dumps writes after a value in an object


def _unspelled(line: bytes) -> bytes:
    """A spelled line as it was (tokens are never next to each other: a `,` or `}` follows each)."""
    return line.replace(b'"~~~~~~~"', b"-Infinity").replace(b'"~~~~~~"', b"Infinity").replace(b'"~"', b"NaN")


def _spelled(line: bytes) -> dict[str, Any] | None:
    """The record of a spelled line as orjson reads it; None when it must be read alone."""
    parser = collect.fast_parser()
    if parser is None:
        return None
    try:
        record = parser.loads(line)
    except parser.JSONDecodeError:
        return None
    if type(record) is not dict or type(record.get("metrics")) is not dict:
        return None
    return record


def _spelled_or(value: Any) -> Any:
    """A spelled token as what json.loads reads (a float), else the value."""
    return _SPELLED_GET(value, value) if type(value) is str else value


class _Group:
    """Records of one shape (step_key, and the kept keys present), a column per kept key."""

    def __init__(self, own: Any, kept: tuple[str, ...]) -> None:
        self.own, self.kept = own, kept
        self.rows: list[tuple[Any, ...]] = []  # the kept keys' values of each record
        self.steps: list[Any] = []  # each record's own `step`
        self.at: list[int] = []  # each record's line number
        self.records: list[dict[str, Any]] = []
        self.lines: list[bytes] = []


def _put_columns(out: Collector, groups: Sequence[_Group]) -> list[_Group]:
    """Put each group's values a column at a time; the groups not put (a value that is not a plain
    step or number, a key logged without its step key), to be read record by record. The groups'
    kept keys other than step keys must be disjoint (else none is put): then putting one group
    before another changes no series, and a step key's series is a set of steps."""
    seen: set[str] = set()
    for g in groups:
        for k in g.kept:
            if k in seen and k not in out.step_key_set:
                return list(groups)
            seen.add(k)
    return [g for g in groups if not _put_group(out, g)]


def _put_group(out: Collector, g: _Group) -> bool:
    step_keys = out.step_key_set
    cols = list(zip(*g.rows)) if g.kept else []
    index = {k: i for i, k in enumerate(g.kept)}
    steps: dict[str, tuple[list[int], bool] | None] = {}

    def step_column(sk: str) -> tuple[list[int], bool] | None:
        if sk not in steps:
            if sk in index:
                steps[sk] = _steps(list(cols[index[sk]]))
            elif g.own == sk:
                steps[sk] = _steps(g.steps)
            else:
                steps[sk] = None  # logged without its step key: the warning names a line
        return steps[sk]

    own_steps = None
    if g.own in step_keys and (own_steps := _steps(g.steps)) is None:
        return False
    puts: list[tuple[str, tuple[list[int], bool], list[Any]]] = []
    step_puts: list[tuple[str, tuple[list[int], bool]]] = []
    for key in g.kept:
        sk = out.step_key(key)
        if sk is None:
            if key in step_keys:
                if (column := step_column(key)) is None:
                    return False
                step_puts.append((key, column))
            continue
        if (column := step_column(sk)) is None:
            return False
        col: Sequence[Any] = cols[index[key]]
        kinds = set(map(type, col))
        if not kinds <= _PLAIN:
            return False
        values = col
        if str in kinds:
            values = list(map(_SPELLED_GET, col, col))
            col = list(map(_ZEROED_GET, col, col))  # a spelled token as 0: every value a number
            if not set(map(type, col)) <= _NUMBERS:
                return False
        if max(col) >= BIG or min(col) <= -BIG:
            return False
        puts.append((key, column, list(values)))
    if own_steps is not None:
        out.put_steps(g.own, *own_steps)
    for key, column in step_puts:
        out.put_steps(key, *column)
    for key, (at, rising), values in puts:
        out.put_many(key, at, values, rising)
    return True


def _steps(col: list[Any]) -> tuple[list[int], bool] | None:
    """A column of steps and whether they rise; None unless every one is an int from 0 to MAX_STEP."""
    if set(map(type, col)) != _INT or min(col) < 0 or max(col) > MAX_STEP:
        return None
    return col, all(map(lt, col, col[1:]))


class _Batch:
    """Records orjson read from a run of consecutive spelled lines, grouped by shape (step_key and
    the metrics' keys in order) and put by `_put_columns`; the others record by record, in line
    order."""

    def __init__(self, out: Collector, rel: str, missing_step: set[str]) -> None:
        self.out, self.rel, self.missing_step = out, rel, missing_step
        self.groups: dict[tuple[Any, tuple[str, ...]], _Group] = {}
        self.size = 0

    def add(self, n: int, line: bytes, record: dict[str, Any]) -> None:
        own = record.get("step_key")
        if type(own) in (list, dict):  # not a step key, and no dict key: read alone
            self.flush()
            _record_spelled(n, line, record, self.out, self.rel, self.missing_step)
            return
        shape = (own, tuple(record["metrics"]))
        group = self.groups.get(shape)
        if group is None:
            group = self.groups[shape] = _Group(own, self.out.kept(record["metrics"]))
        group.records.append(record)
        group.lines.append(line)
        group.at.append(n)
        self.size += 1
        if self.size >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.size:
            return
        groups = list(self.groups.values())
        self.groups, self.size = {}, 0
        for g in groups:  # the columns, at C speed
            g.rows = list(map(_row_getter(g.kept), map(itemgetter("metrics"), g.records)))
            g.steps = list(map(dict.get, g.records, repeat("step")))
        slow = sorted(
            (n, line, r) for g in _put_columns(self.out, groups) for n, line, r in zip(g.at, g.lines, g.records)
        )
        for n, line, record in slow:
            _record_spelled(n, line, record, self.out, self.rel, self.missing_step)


class _Known:
    """Records msgspec decoded into the Struct of the keys seen so far (runs/dashboard_struct.py),
    from consecutive lines, put a column per key; any record it cannot put so is read alone."""

    def __init__(self, out: Collector, rel: str, missing_step: set[str]) -> None:
        self.out, self.rel, self.missing_step = out, rel, missing_step
        self.keys = known_keys(out, SPELLED)
        self.records: list[Any] = []
        self.at: list[int] = []
        self.lines: list[bytes] = []
        self.held = 0  # the bytes of the lines held
        self.failed = False  # the last line was not decoded: its keys may be new

    def add(self, n: int, line: bytes, before: _Batch) -> bool:
        """Decode a spelled line and hold its record; False (nothing held) when it must be read
        otherwise. `before`: the batch of the lines before, put first."""
        if self.failed:  # the lines that failed were read by the ordinary path: their keys are noted
            self.failed = False
            self.keys.learn()
        record = self.keys.record(line)
        if record is None:
            self.failed = True
            self.flush()
            return False
        if before.size:
            before.flush()
        self.records.append(record)
        self.at.append(n)
        self.lines.append(line)
        self.held += len(line)
        if self.held >= SLICE_BYTES:
            self.flush()
        return True

    def take(self, n: int, lines: list[bytes], before: _Batch) -> int:
        """Decode and put the lines of a chunk (the first is line `n`) a slice at a time; the number
        of lines taken: those of the slices that every one decoded, up to the first that did not
        (its lines and the rest are read line by line, by `add`)."""
        if self.failed or self.keys.decode is None:
            return 0
        before.flush()  # the lines before are put first
        self.flush()
        decode, errors = self.keys.decode, self.keys.errors
        per = max(1, len(lines) * SLICE_BYTES // max(1, sum(map(len, lines))))  # lines a slice
        for start in range(0, len(lines), per):
            part = lines[start : start + per]
            try:
                records = list(map(decode, part))
            except errors:
                return start
            self.records, self.at, self.lines = records, list(range(n + start, n + start + len(part))), part
            self.flush()
        return len(lines)

    def flush(self) -> None:
        if self.records:
            self._put(0, len(self.records))
            self.records, self.at, self.lines, self.held = [], [], [], 0

    def _put(self, start: int, stop: int) -> None:
        """Put records[start:stop] a column per key or, where that fails, halves of them in turn."""
        if put_columns(self.out, self.keys, self.records[start:stop]):
            return
        if stop - start > 8:
            mid = (start + stop) // 2
            self._put(start, mid)
            self._put(mid, stop)
            return
        for n, view in zip(self.at[start:stop], self.lines[start:stop]):
            line = bytes(view)
            if (record := _spelled(line)) is not None:
                _record_spelled(n, line, record, self.out, self.rel, self.missing_step)
            elif (found := json_record(_unspelled(line) + b"\n", n, self.rel, self.out)) is not None:
                _record(n, found, self.out, self.rel, self.missing_step)


def _record_spelled(n: int, line: bytes, record: dict[str, Any], out: Collector, rel: str, ms: set[str]) -> None:
    if not _record(n, record, out, rel, ms, spelled=True):
        # a value orjson may have read otherwise: the line is read by json.loads
        if (found := json_record(_unspelled(line) + b"\n", n, rel, out)) is not None:
            _record(n, found, out, rel, ms)


def _record(
    n: int,
    record: Any,
    out: Collector,
    rel: str,
    missing_step: set[str],
    spelled: bool = False,
) -> bool:
    """Put one record's values. `spelled`: orjson read the record from a spelled line (a string of
    tildes is a bare token); then False, with nothing put, when a value it reads may have been read
    otherwise (an integer beyond 64 bits)."""
    metrics = record.get("metrics") if isinstance(record, dict) else None
    if not isinstance(metrics, dict):
        out.problem(rel, n, "not a dashboard record: no 'metrics' object", code=codes.NOT_A_RECORD)
        return True
    step_key_set = out.step_key_set
    own_key, own_raw = record.get("step_key"), record.get("step")
    kept = out.kept(metrics)
    if spelled:
        for v in (own_raw, *(metrics[k] for k in kept)):
            if type(v) is float and not -BIG < v < BIG:
                return False
        own_key, own_raw = _spelled_or(own_key), _spelled_or(own_raw)
        metrics = {k: _spelled_or(v) for k, v in metrics.items()}
    own_step = as_step(own_raw)
    if isinstance(own_key, str) and own_key in step_key_set:  # a list as step_key is no step key
        if own_step is None and own_raw is not None:
            out.problem(rel, n, not_a_step("step", own_raw), code=codes.NOT_A_STEP)
            return True
        if own_step is not None:
            out.put_step(own_key, own_step)
    for key in kept:
        value = metrics[key]
        sk = out.step_key(key)
        if sk is None:
            if key in step_key_set and (step := as_step(value)) is not None:
                out.put_step(key, step)
            continue
        raw = metrics[sk] if sk in metrics else own_raw if own_key == sk else None
        step = as_step(raw)
        if step is None:
            if raw is not None:
                out.problem(rel, n, not_a_step(sk, raw), code=codes.NOT_A_STEP)
                break
            if key not in missing_step:
                missing_step.add(key)
                other = own_key if isinstance(own_key, str) and own_key != sk else None
                other = other or next((k for k in metrics if k in step_key_set and k != sk), None)
                why = out.without_step(key, f"its step key {sk}", other)
                out.problem(rel, n, why, code=codes.MISSING_STEP, severity="warning")
            continue
        v = number(value)
        if v is None:
            out.put_invalid(key, step, value, line=n)
        else:
            out.put(key, step, v)
    return True
