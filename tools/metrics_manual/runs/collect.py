"""Where the readers put what they read: one series per metric and file, merged at the end.

Every reader streams its file and calls `Collector.put` once per value; nothing keeps
a file's lines, so memory grows with the number of (metric, step) values, not with
the size of the logs.

The rules of a merge (docs/judging.md states them in these words):

- within one file, a step logged again later supersedes the earlier record (a run resumed
  from a checkpoint re-logs its steps); the steps re-logged are named in the result;
- a higher `attempt` (the event log's fault-tolerance retry) wins over a lower one, in one
  file or across files;
- the same metric and step in two different files with different values, at the same
  attempt, is a conflict: an error of that metric naming both files. Values that agree to
  float32 precision (TensorBoard stores float32) are the same value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import IO, Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.runs.series import Series

Progress = Callable[[int], None]
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

# Caps (docs/judging.md, "Limits"): what one hostile file can make the reader hold.
MAX_LINE = 64 * 1024 * 1024  # longest line read; a longer one is a finding and skipped
KEYS_KEPT = 10_000  # distinct keys the run logged but judge does not read, remembered by name
MAX_STEP = 2**63 - 1  # a step is an integer from 0 to this (a signed 64-bit integer)
_SHAPES_KEPT = 4096  # distinct key sets of records whose kept keys are remembered (Collector.kept)
_SKETCH_BITS = 1 << 23  # linear counting of the keys beyond KEYS_KEPT: 1 MB, good to ~10 million

try:  # a JSON parser several times faster than json.loads, used only where it reads a line the same way
    import orjson as _orjson
except ImportError:  # pragma: no cover - pinned; without it json.loads reads every line
    _orjson = None  # type: ignore[assignment]

# A bare NaN / Infinity / -Infinity token as Python's json.dumps writes it (orjson rejects them) is
# spelled as the string, which `number` reads as the same value. Every occurrence is quoted, also one
# inside a string: there the added quote closes the string and N, I or - follows it, which no JSON
# allows, so orjson fails and json.loads reads the line. That holds only in a line without a
# backslash (an escaped quote before the token would stay inside the string), and only where each
# token is followed by `,`, `}` or `]` (so none stands for a key, which `:` follows); json.loads
# reads any other line. (bytes.replace: a regex is 30x slower here.)
_FIRST = itemgetter(slice(0, 1))
_AFTER_VALUE = {b",", b"}", b"]"}


def followed_by(parts: list[bytes], after: set[bytes]) -> bool:
    """Whether each token between the parts (bytes split at the token) is followed by a byte of `after`
    (b"" in `after`: the token may end the bytes). At C speed: a line has a hundred values."""
    return set(map(_FIRST, parts[1:])) <= after


def _values_only(line: bytes) -> bool:
    """Whether each NaN / Infinity in the line is followed by `,`, `}` or `]`."""
    return all(token not in line or followed_by(line.split(token), _AFTER_VALUE) for token in (b"NaN", b"Infinity"))


def _spell_bare(line: bytes) -> bytes:
    if b"NaN" in line:
        line = line.replace(b"NaN", b'"NaN"')
    if b"Infinity" in line:
        parts = line.split(b"Infinity")
        out = [parts[0]]
        for part in parts[1:]:
            out[-1] = out[-1][:-1] + b'"-' if out[-1].endswith(b"-") else out[-1] + b'"'
            out.append(b'Infinity"' + part)
        line = b"".join(out)
    return line


try:  # SIMD substring search: the same hits as bytes.find, 15x faster over hex checksums
    from stringzilla import Str as _Str
except ImportError:  # pragma: no cover - pinned; without it bytes.find searches
    _Str = None


def finder(data: bytes | bytearray) -> Callable[..., int]:
    """`data.find` for a substring, or the same search with SIMD (stringzilla) where it is installed."""
    return _Str(data).find if _Str is not None else data.find


def lines_of(data: bytearray) -> list[Any]:
    """`data.split(b"\\n")`: views into `data` (stringzilla's Str, which msgspec decodes and `bytes()`
    copies out; 4x faster than splitting bytes, which copies every line) where it is installed, else
    bytes. A view reads what `data` holds when it is read: keep `bytes(view)` beyond that."""
    return list(_Str(data).split("\n")) if _Str is not None else bytes(data).split(b"\n")


def fast_parser() -> Any:
    """orjson, or None when it is missing (or set aside, as the tests do to read through json.loads)."""
    return _orjson


try:  # decodes dashboard records into a Struct of known keys, 2-3x faster than orjson (runs/dashboard_struct.py)
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - pinned; without it orjson (or json.loads) reads each line
    _msgspec = None  # type: ignore[assignment]


def struct_parser() -> Any:
    """msgspec, or None when it is missing (or set aside, as the tests do)."""
    return _msgspec


BIG = 2.0**63  # orjson reads an integer beyond 64 bits as a float; json.loads as an int
_IS_FLOAT = float.__instancecheck__  # orjson makes exact floats only


def _below_big(values: Iterable[Any]) -> bool:
    """Whether every float among the values is within (-2^63, 2^63): what orjson read as json.loads does.
    At C speed (a record has a hundred values); orjson never makes a NaN, which `max` would pass over."""
    return bool(max(map(abs, filter(_IS_FLOAT, values)), default=0.0) < BIG)


# A lone surrogate can only come from a \uD800-\uDFFF escape or CESU-8 bytes (ED A0-BF ..).
SURROGATE = re.compile(rb"\\u[dD][89abAB]|\\u[dD][c-fC-F]|\xed[\xa0-\xbf]")


def surrogate_key(keys: Iterable[Any]) -> str | None:
    """The first key that is not valid Unicode (a lone surrogate), shown escaped; else None."""
    for k in keys:
        if isinstance(k, str) and not k.isascii():
            try:
                k.encode("utf-8")
            except UnicodeEncodeError:
                return ascii(k)
    return None


def same_value(a: float, b: float) -> bool:
    """Equal, both NaN, or equal to float32 precision (TensorBoard keeps float32)."""
    if a == b or (a != a and b != b):
        return True
    return math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=1.2e-7)


@dataclass
class Part:
    """One file's values of one metric."""

    path: str
    series: Series
    attempts: dict[int, int]  # step -> attempt, only for steps with an attempt above 0


@dataclass
class Merged:
    """What the collector hands to the Run: merged series and what the merge found."""

    series: dict[str, Series] = field(default_factory=dict)
    invalid: dict[str, dict[int, str]] = field(default_factory=dict)
    conflicts: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    relogged: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (path, step key) -> steps


class Collector:
    """Series by metric key and step, the problems found, and the step keys that place values."""

    def __init__(
        self,
        step_keys: Mapping[str, str],
        progress: Progress | None = None,
        keys: Collection[str] | None = None,
        renames: Mapping[str, str] | None = None,
    ) -> None:
        self.step_keys = dict(step_keys)
        # Former key -> current key (the catalog's renamed_from): a former key is kept apart under its
        # own name, placed by its current key's step key, and folded into the current key by `fold`.
        self.renames = dict(renames or {})
        # Only these keys' values are kept (None: all); the others are only named in `unread`,
        # so a run of many keys costs memory only for the keys that are judged.
        self.step_key_set = set(self.step_keys.values())
        self.keys = None if keys is None else set(keys) | self.step_key_set
        if self.keys is not None:
            self.keys |= {old for old, new in self.renames.items() if new in self.keys}
        self.unread: set[str] = set()
        self.unread_beyond = bytearray(0)  # a linear-counting sketch of the unread keys past KEYS_KEPT
        self.problems: list[Finding] = []
        self.progress = progress
        self.placed: dict[str, str | None] = {}  # key -> its step key, or None when not kept
        self.other_step: dict[str, str] = {}  # judged key -> another step key it was logged with
        self.cut_files: list[str] = []
        self._parts: dict[str, list[Part]] = {}
        self._invalid: dict[str, dict[int, str]] = {}
        self._relogged: dict[tuple[str, str], set[int]] = {}
        self._invalid_seen: set[tuple[str, str]] = set()
        self._shapes: dict[tuple[str, ...], tuple[str, ...]] = {}  # a record's keys -> those to read
        self.begin("")

    # --- one file at a time ---------------------------------------------------------------

    def begin(self, path: str) -> None:
        """Start a file: its values are kept apart until `end`, so two files can be compared."""
        self.path = path
        self.series: dict[str, Series] = {}
        self.attempts: dict[tuple[str, int], int] = {}

    def end(self) -> None:
        by_key: dict[str, dict[int, int]] = {}
        for (k, s), a in self.attempts.items():
            by_key.setdefault(k, {})[s] = a
        for key, series in self.series.items():
            if series:
                self._parts.setdefault(key, []).append(Part(self.path, series, by_key.get(key, {})))
        self.begin("")

    def step_key(self, key: str) -> str | None:
        """The key whose value is `key`'s step; None for a step key itself, an unknown namespace or a
        key whose values are not kept (then it is remembered in `unread`)."""
        try:
            return self.placed[key]
        except KeyError:
            pass
        # One lookup per new key (this is cached in `placed`), never per value.
        named = self.renames.get(key, key)
        sk = None if key in self.step_key_set else self.step_keys.get(named.split("/", 1)[0])
        if sk is not None and self.keys is not None and key not in self.keys:
            sk = None
        if sk is None and key not in self.step_key_set:
            self.note_unread((key,))
        if len(self.placed) < KEYS_KEPT * 2:  # a cache, capped like what it caches
            self.placed[key] = sk
        return sk

    def kept(self, metrics: Mapping[str, Any]) -> tuple[str, ...]:
        """The keys of a record whose values are read, in the record's order; the others are noted
        in `unread` (as `step_key` does for each key). A log() call writes the same keys record after
        record: the keys of one shape are looked at once (noting a key again changes nothing)."""
        shape = tuple(metrics)
        kept = self._shapes.get(shape)
        if kept is None:
            keep, found = self.keys, []
            for key in shape:
                if keep is None or key in keep:
                    found.append(key)
                    self.step_key(key)  # a kept key of no known namespace is noted unread
                else:
                    self.note_unread((key,))
            kept = tuple(found)
            if len(self._shapes) < _SHAPES_KEPT:  # a cache, capped: hostile records of ever new keys
                self._shapes[shape] = kept
        return kept

    def shapes(self) -> Collection[tuple[str, ...]]:
        """The key sets of the records `kept` has looked at (up to a cap), the first seen first: each of
        their keys is noted (its values read, or its name in `unread`)."""
        return self._shapes.keys()

    def note_unread(self, keys: Collection[str]) -> None:
        """Remember keys that are not read; past KEYS_KEPT they are only counted, not kept."""
        unread = self.unread
        if len(unread) + len(keys) <= KEYS_KEPT:
            unread.update(keys)
            return
        for k in keys:
            if k in unread:
                continue
            if len(unread) < KEYS_KEPT:
                unread.add(k)
                continue
            if not self.unread_beyond:
                self.unread_beyond = bytearray(_SKETCH_BITS // 8)
            h = hash(k) & (_SKETCH_BITS - 1)
            self.unread_beyond[h >> 3] |= 1 << (h & 7)

    def unread_beyond_count(self) -> int:
        """About how many distinct unread keys were counted past the cap (linear counting)."""
        if not self.unread_beyond:
            return 0
        zeros = _SKETCH_BITS - int.from_bytes(self.unread_beyond, "little").bit_count()
        return round(_SKETCH_BITS * math.log(_SKETCH_BITS / max(zeros, 1)))

    def put(self, key: str, step: int, value: float, attempt: int = 0) -> None:
        """Record one value. A lower attempt than one already read is dropped; a step logged
        again in the same file at the same attempt replaces the earlier value (and is noted)."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        if attempt or self.attempts:
            old = self.attempts.get((key, step), 0)
            if attempt < old:
                return
            if attempt:
                self.attempts[(key, step)] = attempt
            if attempt > old and step in series:
                series[step] = value  # a retry: the attempt rule decides, not a re-log
                return
        steps = series._steps
        if not steps or step > steps[-1]:  # the usual case, inline: logs come in step order
            steps.append(step)
            series._values.append(value)
        elif series.replace(step, value):
            sk = self.placed.get(key) or self.step_keys.get(key.split("/", 1)[0], "")
            self._relogged.setdefault((self.path, sk), set()).add(step)

    def _series(self, key: str) -> Series:
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        return series

    def put_many(self, key: str, steps: Sequence[int], values: Sequence[float], rising: bool) -> None:
        """`put` of each (step, value) in turn, attempt 0; `rising`: the steps rise. Appended at C
        speed when they rise past the series' last step, as most logs are written (a memory copy
        when they are arrays of the Series' types)."""
        series = self._series(key)
        if rising and not self.attempts and series.extend_rising(steps, values):
            return
        for step, value in zip(steps, values):
            self.put(key, step, value)

    def put_steps(self, key: str, steps: list[int], rising: bool) -> None:
        """`put_step` of each step in turn. The steps a step key reached are a set: a batch that does
        not come after the others (several log() calls name the same step key) is merged in."""
        series = self._series(key)
        if not (rising and series.extend_rising(steps, map(float, steps))):
            series.merge(steps, map(float, steps))

    def put_invalid(
        self, key: str, step: int, raw: Any, attempt: int = 0, *, line: int = 0, text: str | None = None
    ) -> str | None:
        """A value that is not a number (a string, null, a bool, a number out of float range): kept
        as NaN so that no rule can pass it, with what was logged (or `text`) for the result.

        The first such value of a key in a file is also a warning at its `line` (returned as the
        message when `line` is 0, for a reader that counts lines later): the verdict names the
        step, the warning the place."""
        self.put(key, step, math.nan, attempt)
        if len(text := text or _shown(raw)) > 60:
            text = text[:60] + "..."
        self._invalid.setdefault(key, {})[step] = text
        if (self.path, key) in self._invalid_seen:
            return None
        self._invalid_seen.add((self.path, key))
        message = f"{key}: not a number at step {step}: {text} (an error of its expectations)"
        if line:
            self.problem(self.path, line, message, code=codes.NOT_A_NUMBER, severity="warning")
            return None
        return message

    def put_step(self, key: str, step: int) -> None:
        """A step key's own value: the step it names was reached."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        steps = series._steps
        if not steps or step > steps[-1]:
            steps.append(step)
            series._values.append(float(step))
        else:
            series[step] = float(step)

    def cut(self, path: str, line: int, what: str = "line", where: str = "") -> None:
        """The last line (a TensorBoard file's: record, cut `where`) of a file is cut (the run may
        still be writing it): a warning, and the run's last step counts as unfinished."""
        self.cut_files.append(path)
        self.problem(
            path,
            line,
            f"the last {what} is cut{f' {where}' if where else ''} (the run may still be writing this file); "
            "it was skipped and the last step counts as unfinished",
            code=codes.CUT_LAST_LINE,
            severity="warning",
        )

    def without_step(self, key: str, without: str, other: str | None) -> str:
        """A judged key logged without its step (`without`: what it lacks): the other step key it came
        with is kept for the verdict; the words of the warning (every reader says it the same)."""
        if other:
            self.other_step.setdefault(key, other)
        return (
            f"{key} is logged without {without}" + (f" (with {other})" if other else "") + "; such values were skipped"
        )

    def problem(self, path: str, line: int, message: str, *, code: Code, severity: str = "error", col: int = 1) -> None:
        self.problems.append(Finding(path, line, col, message, severity, code=code))

    # --- the merge --------------------------------------------------------------------------

    def finish(self) -> Merged:
        """Every file's series merged by the rules of this module."""
        out = Merged(invalid=self._invalid)
        for key, parts in self._parts.items():
            if len(parts) == 1:
                out.series[key] = parts[0].series
            elif key in self.step_key_set:
                out.series[key] = Series(sorted({(s, float(s)) for p in parts for s in p.series}))
            else:
                out.series[key], conflicts = _merge(parts)
                if conflicts:
                    out.conflicts[key] = conflicts
        out.relogged = {k: sorted(v) for k, v in self._relogged.items()}
        return out


def _merge(parts: list[Part]) -> tuple[Series, list[tuple[int, str, str]]]:
    """One metric's values from several files: the higher attempt wins; a different value at the same
    attempt is a conflict (step, the earlier file, the later file)."""
    kept: dict[int, tuple[float, int, str]] = {}
    conflicts: list[tuple[int, str, str]] = []
    for p in parts:
        attempts = p.attempts
        for step, value in p.series.items():
            attempt = attempts.get(step, 0) if attempts else 0
            old = kept.get(step)
            if old is None or attempt > old[1]:
                kept[step] = (value, attempt, p.path)
            elif attempt == old[1] and not same_value(value, old[0]):
                conflicts.append((step, old[2], p.path))
    return Series(sorted((s, v[0]) for s, v in kept.items())), sorted(conflicts)


def _shown(raw: Any) -> str:
    if raw is None:
        return "null"
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, int):
        return "an integer out of float range" if abs(raw) > 1e308 else str(raw)
    if isinstance(raw, str):
        return ascii(raw)
    if isinstance(raw, list):
        return f"a list of {len(raw)}"
    if isinstance(raw, dict):
        return f"an object of {len(raw)} keys"
    return type(raw).__name__


def number(value: Any) -> float | None:
    """A logged value as a float, or None when it is not a number at all.

    The strings NaN / Infinity / -Infinity (CI history) are non-finite numbers; so is null in the
    event log, which the event reader maps itself (pydantic writes NaN as null)."""
    if type(value) is float:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        try:
            return float(value)
        except OverflowError:
            return None
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    return None


def as_step(value: Any) -> int | None:
    """A step value: an integer from 0 to 2^63-1 (a float with no fraction, as CSV and JSON may write it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_STEP else None
    if isinstance(value, float) and value.is_integer() and 0 <= value <= MAX_STEP:
        return int(value)
    return None


def not_a_step(key: str, value: Any) -> str:
    """The finding for a step key whose value is there but is no step."""
    shown = _shown(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else repr(value)
    return f"{key} is {shown[:40]}, not a step (an integer from 0 to 2^63-1); the record was skipped"


def lines(fh: IO[bytes], progress: Progress | None) -> Iterator[tuple[int, bytes | None]]:
    """(1-based line number, line) of a binary file, read in linear time with at most MAX_LINE bytes
    of one line held: a longer line gives None (the caller reports it) and is skipped to its end."""
    readline = fh.readline
    limit = MAX_LINE + 1
    n = 0
    done = 0
    while line := readline(limit):
        n += 1
        if len(line) == limit and not line.endswith(b"\n"):
            while (more := readline(1 << 20)) and not more.endswith(b"\n"):
                pass
            yield n, None
        else:
            yield n, line
        if progress is not None and not n & 0x3FF:
            pos = fh.tell()
            progress(pos - done)
            done = pos
    if progress is not None:
        progress(fh.tell() - done)


def too_long(out: Collector, rel: str, n: int) -> None:
    out.problem(
        rel,
        n,
        f"a line longer than {MAX_LINE // (1024 * 1024)} MB; it was skipped (see Limits)",
        code=codes.LINE_TOO_LONG,
    )


def fast_record(line: bytes, step_keys: Collection[str], watch: Collection[str] | None = None) -> dict[str, Any] | None:
    """The record json.loads makes of a run-log line (an object of values and a `metrics` object),
    parsed by orjson; None when json.loads must read the line: orjson failed (a corrupt line, a lone
    surrogate, a number out of float range ...), the line is not an object, or orjson may have read
    a value otherwise (an integer beyond 64 bits; a bare NaN where a step or an attempt stands).
    `watch`: the metrics whose values the reader uses (None: all of them); only those are checked.
    The verdicts are the same either way (tests/runs/test_fast_json.py reads files through both)."""
    if _orjson is None:
        return None
    # A byte first (memchr), the token only where it stands: four times faster on a line without either.
    replaced = (b"N" in line and b"NaN" in line) or (b"I" in line and b"Infinity" in line)
    if replaced:
        if b"\\" in line or not _values_only(line):
            return None
        line = _spell_bare(line)
    try:
        record = _orjson.loads(line)
    except _orjson.JSONDecodeError:
        return None
    if type(record) is not dict:
        return None
    if not _below_big(record.values()) or (
        replaced and any(type(v) is str and v in NON_FINITE for v in record.values())
    ):
        return None
    metrics = record.get("metrics")
    if type(metrics) is dict:
        if not _below_big(metrics.values() if watch is None else map(metrics.get, watch)):
            return None
        if replaced:
            for k in step_keys:
                if type(metrics.get(k)) is str:
                    return None
    return record


def json_records(path: Any, rel: str, out: Collector, *, fast: bool = False) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSON-lines file, streamed: a corrupt line is an error with
    its line, a cut last line (the run may still be writing) a warning; both are skipped.
    A record with a key that is not valid Unicode is an error and skipped. `fast`: records
    of `{..., "metrics": {...}}` are parsed by `fast_record` where it reads them the same way."""
    with path.open("rb") as fh:
        for n, line in lines(fh, out.progress):
            if line is None:
                too_long(out, rel, n)
            elif (record := json_record(line, n, rel, out, fast=fast)) is not None:
                yield n, record


# The words of two line findings, the same from every JSON reader (json_record, the event log's).
TOO_DEEP = "corrupt line: JSON nested too deeply; it was skipped"


_DIGITS = re.compile(r"limit \((\d+) digits\).*value has (\d+) digits")


def corrupt_line(exc: ValueError, line: bytes) -> tuple[str, int]:
    """The finding of a line json.loads cannot read: what is wrong, and the file's column of it.

    The parser's own position ("line 1 column 30 (char 29)") is dropped: it counts in the one line
    it was given, so its line 1 is not the file's; the column goes where every finding puts it."""
    if isinstance(exc, UnicodeDecodeError):
        at = min(max(exc.start, 0), len(line) - 1) if line else 0
        byte = f" (byte 0x{line[at]:02x})" if line else ""
        return f"corrupt line: not UTF-8{byte}; it was skipped", len(line[:at].decode("utf-8", "replace")) + 1
    msg, col = getattr(exc, "msg", None), getattr(exc, "colno", None)
    if not isinstance(msg, str) or not isinstance(col, int) or getattr(exc, "lineno", 1) != 1:
        # Not a syntax error: Python's cap on an integer's digits (its words name a setting of Python's).
        digits = _DIGITS.search(str(exc))
        what = (
            f"an integer of {digits.group(2)} digits, more than the {digits.group(1)} Python reads"
            if digits
            else "not JSON"
        )
        return f"corrupt line: {what}; it was skipped", 1
    what = msg.removesuffix(" starting at").removesuffix(" at")
    return f"corrupt line: {what[:1].lower()}{what[1:]}; it was skipped", max(col, 1)


def invalid_key(bad: str) -> str:
    """A record holding a key that is not valid Unicode: it is skipped."""
    return f"a key that is not valid Unicode (a lone surrogate): {bad}; the line was skipped"


def json_record(line: bytes | bytearray, n: int, rel: str, out: Collector, *, fast: bool = False) -> Any:
    """The record of one line as json_records reads it (the line with its newline, if it has one),
    or None when the line is blank or gives a finding (then it is made here)."""
    import json

    line = bytes(line)  # the dashboard's lines are cut from a reused buffer (bytes(line) is line for bytes)
    if fast and (record := fast_record(line, out.step_key_set, out.keys)) is not None:
        return record  # orjson never returns a lone surrogate: no key to check
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except RecursionError:
        out.problem(rel, n, TOO_DEEP, code=codes.CORRUPT_LINE)
        return None
    except ValueError as exc:
        if line.endswith(b"\n"):
            message, col = corrupt_line(exc, line)
            out.problem(rel, n, message, code=codes.CORRUPT_LINE, col=col)
        else:
            out.cut(rel, n)
        return None
    if (b"\\u" in line or b"\xed" in line) and SURROGATE.search(line) and (bad := record_surrogate(record)):
        out.problem(
            rel,
            n,
            invalid_key(bad),
            code=codes.INVALID_KEY,
        )
        return None
    return record


def record_surrogate(record: Any) -> str | None:
    """A key of a run record (its metrics' keys, a CI-history metric name) that is not valid Unicode."""
    if not isinstance(record, dict):
        return None
    metrics = record.get("metrics")
    keys: list[Any] = [*record, record.get("metric"), record.get("step_key")]
    if isinstance(metrics, dict):
        keys += list(metrics)
    return surrogate_key(keys)
