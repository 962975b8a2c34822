"""The one JSON-lines path of the event log, the dashboard log and the CI history: a line -> its record.

`loads` returns what `json.loads` returns for a line (or raises what it raises), read by orjson
where orjson reads it the same way, which is several times faster. orjson rejects the bare tokens
NaN, Infinity and -Infinity that Python's json.dumps writes (the dashboard log has them), so
`_spelled` writes each as a string holding `~` first, and `exact_values` reads them back as floats. That
is exact when the line holds no `~` and no backslash, and each token is followed by `,`, `}` or `]`:
a token inside a string would have its added quote close the string, with `~` after it, which no
JSON allows (orjson fails and json.loads reads the line); a token followed by `,`, `}` or `]` is no
key; so every string holding `~` that orjson returns was a bare token. orjson also reads an integer
beyond 64 bits as a float (json.loads: an int): a float of 2^63 or more sends the line to json.loads.
tests/runs/test_fast_json.py holds `loads` to json.loads.

`records` streams a file's records with the findings every JSON-lines reader gives alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.lines import LineCursor, too_long_message

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - pinned; without it json.loads reads every line
    _orjson = None  # type: ignore[assignment]

SPELLED: dict[Any, Any] = {"~": math.nan, "~+": math.inf, "~-": -math.inf}  # NaN, Infinity, -Infinity
_FIRST = itemgetter(slice(0, 1))
_VALUE_ENDS = {b",", b"}", b"]"}
BIG = 2.0**63  # orjson reads an integer beyond 64 bits as a float (json.loads: an int): this large or more
NOT_EXACT: Any = object()  # what by_orjson returns for a line json.loads must read


def loads(line: bytes) -> Any:
    """`json.loads(line)`, through orjson where it reads the line the same way."""
    value = by_orjson(line)
    return json.loads(line) if value is NOT_EXACT else value


# Whether orjson read the values a reader uses as json.loads does, those values made so in place
# (`exact_values` checks them all; a reader may check only the values it reads: see dashboard.py).
Exactness = Callable[[Any, bool], bool]


def by_orjson(line: bytes, exact: Exactness | None = None) -> Any:
    """The record orjson reads from the line, or NOT_EXACT where json.loads must read it (orjson
    fails, or may read it otherwise). `exact` (default `exact_values`) decides the second."""
    if _orjson is None or (spelled := _spelled(line)) is None:
        return NOT_EXACT
    try:
        value = _orjson.loads(spelled)
    except (_orjson.JSONDecodeError, RecursionError):
        return NOT_EXACT
    return value if (exact or exact_values)(value, spelled is not line) else NOT_EXACT


def _spelled(line: bytes) -> bytes | None:
    """The line with each bare token as a string holding `~` (the line itself when it has none);
    None when that would not be exact (see the module's docstring)."""
    nans = line.split(b"NaN")
    inf = b"Infinity" in line
    if len(nans) == 1 and not inf:
        return line
    if b"~" in line or b"\\" in line or not set(map(_FIRST, nans[1:])) <= _VALUE_ENDS:
        return None
    line = b'"~"'.join(nans)
    if inf:
        parts = line.split(b"Infinity")
        if not set(map(_FIRST, parts[1:])) <= _VALUE_ENDS:
            return None
        for i, part in enumerate(parts[:-1]):
            parts[i] = part[:-1] + b'"~-' if part.endswith(b"-") else part + b'"~+'
        line = b'"'.join(parts)
    return line


def exact_values(value: Any, spelled: bool) -> bool:
    """Whether orjson read the value as json.loads does (no float of 2^63 or more: it may be an integer
    beyond 64 bits); `spelled`: each spelled token is read back as its float, in place."""
    if type(value) is not dict and type(value) is not list:
        return type(value) is not float or -BIG < value < BIG
    for k, v in value.items() if type(value) is dict else enumerate(value):
        kind = type(v)
        if kind is float:
            if not -BIG < v < BIG:
                return False
        elif kind is str:
            if spelled and v in SPELLED:
                value[k] = SPELLED[v]
        elif (kind is dict or kind is list) and not exact_values(v, spelled):
            return False
    return True


def exact_value(value: Any, spelled: bool) -> tuple[bool, Any]:
    """`exact_values` for one value: whether orjson read it as json.loads does, and the value as
    json.loads reads it."""
    kind = type(value)
    if kind is float:
        return -BIG < value < BIG, value
    if kind is str:
        return True, SPELLED.get(value, value) if spelled else value
    if kind is dict or kind is list:
        return exact_values(value, spelled), value
    return True, value


# --- a file's records, with their findings ---------------------------------------------------

TOO_DEEP = "corrupt line: JSON nested too deeply; it was skipped"
# A lone surrogate can only come from a \uD800-\uDFFF escape or CESU-8 bytes (ED A0-BF ..).
SURROGATE = re.compile(rb"\\u[dD][89abAB]|\\u[dD][c-fC-F]|\xed[\xa0-\xbf]")
_DIGITS = re.compile(r"limit \((\d+) digits\).*value has (\d+) digits")


def records(
    path: Path,
    rel: str,
    out: Collector,
    wanted: Callable[[bytes], bool] | None = None,
    exact: Exactness | None = None,
) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSON-lines file, streamed: a corrupt line is an error with its
    line, a cut last line (the run may still be writing) a warning, a line longer than MAX_LINE an
    error; all are skipped, as is a record with a key that is not valid Unicode (an error).
    `wanted`: lines it says no to are skipped unread (the last line, when no newline ends it, is
    always read: it may be cut). `exact`: see `by_orjson`."""
    cursor = LineCursor(path)
    yield from ended_records(cursor, rel, out, wanted, exact)
    yield from last_record(cursor, rel, out, exact)


def ended_records(
    cursor: LineCursor,
    rel: str,
    out: Collector,
    wanted: Callable[[bytes], bool] | None = None,
    exact: Exactness | None = None,
) -> Iterator[tuple[int, Any]]:
    """`records` of the lines a newline ends, from where `cursor` stands to the end of the file as it
    is now: judge --follow calls it again as the file grows, and `last_record` once it is complete."""
    for n, line in cursor.lines(out.progress):
        if line is None:
            out.problem(rel, n, too_long_message(), code=codes.LINE_TOO_LONG)
        elif (wanted is None or wanted(line)) and (record := _record(line, n, rel, out, True, exact)) is not None:
            yield n, record


def last_record(
    cursor: LineCursor, rel: str, out: Collector, exact: Exactness | None = None
) -> Iterator[tuple[int, Any]]:
    """The record of the line no newline ends, once the file is complete (a cut one is a warning)."""
    if (last := cursor.last()) is not None:
        n, line = last
        if line is None:
            out.problem(rel, n, too_long_message(), code=codes.LINE_TOO_LONG)
        elif (record := _record(line, n, rel, out, False, exact)) is not None:
            yield n, record


def _record(line: bytes, n: int, rel: str, out: Collector, ended: bool, exact: Exactness | None = None) -> Any:
    """The record of line `n` (`ended`: a newline ends it), or None when the line is blank or gives a
    finding (made here)."""
    record = by_orjson(line, exact)  # orjson never returns a lone surrogate
    if record is not NOT_EXACT:
        return record
    try:
        record = json.loads(line)
    except RecursionError:
        out.problem(rel, n, TOO_DEEP, code=codes.CORRUPT_LINE)
        return None
    except ValueError as exc:
        if not line.strip():
            return None
        if ended:
            message, col = corrupt_line(exc, line)
            out.problem(rel, n, message, code=codes.CORRUPT_LINE, col=col)
        else:
            out.cut(rel, n)
        return None
    if (b"\\u" in line or b"\xed" in line) and SURROGATE.search(line) and (bad := record_surrogate(record)):
        out.problem(rel, n, invalid_key(bad), code=codes.INVALID_KEY)
        return None
    return record


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


def record_surrogate(record: Any) -> str | None:
    """A key of a run record (its metrics' keys, a CI-history metric name) that is not valid Unicode."""
    if not isinstance(record, dict):
        return None
    metrics = record.get("metrics")
    keys: list[Any] = [*record, record.get("metric"), record.get("step_key")]
    if isinstance(metrics, dict):
        keys += list(metrics)
    return _surrogate_key(keys)


def _surrogate_key(keys: Iterable[Any]) -> str | None:
    """The first key that is not valid Unicode (a lone surrogate), shown escaped; else None."""
    for k in keys:
        if isinstance(k, str) and not k.isascii():
            try:
                k.encode("utf-8")
            except UnicodeEncodeError:
                return ascii(k)
    return None
