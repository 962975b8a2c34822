"""Where the readers put what they read: one series per metric, the last attempt winning.

Every reader streams its file and calls `Collector.put` once per value; nothing keeps
a file's lines, so memory grows with the number of (metric, step) values, not with
the size of the logs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.runs.series import Series

Progress = Callable[[int], None]
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class Collector:
    """Series by metric key and step, the problems found, and the step keys that place values."""

    def __init__(
        self, step_keys: Mapping[str, str], progress: Progress | None = None, keys: Collection[str] | None = None
    ) -> None:
        self.step_keys = dict(step_keys)
        # Only these keys' values are kept (None: all); the others are only named in `unread`,
        # so a run of many keys costs memory only for the keys that are judged.
        self.step_key_set = set(self.step_keys.values())
        self.keys = None if keys is None else set(keys) | self.step_key_set
        self.unread: set[str] = set()
        self.series: dict[str, Series] = {}
        self.attempts: dict[tuple[str, int], int] = {}
        self.problems: list[Finding] = []
        self.progress = progress
        self.placed: dict[str, str | None] = {}  # key -> its step key, or None when not kept

    def step_key(self, key: str) -> str | None:
        """The key whose value is `key`'s step; None for a step key itself or an unknown namespace."""
        try:
            return self.placed[key]
        except KeyError:
            sk = None if key in self.step_key_set else self.step_keys.get(key.split("/", 1)[0])
            if sk is not None and self.keys is not None and key not in self.keys:
                self.unread.add(key)
                sk = None
            self.placed[key] = sk
            return sk

    def put(self, key: str, step: int, value: float, attempt: int = 0) -> None:
        """Record one value; a repeated step keeps the value of the highest attempt, the later on a tie."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        if attempt or self.attempts:
            old = self.attempts.get((key, step), 0)
            if attempt < old:
                return
            if attempt:
                self.attempts[(key, step)] = attempt
        series[step] = value

    def put_step(self, key: str, step: int) -> None:
        """A step key's own value: the step it names was reached."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        series[step] = float(step)

    def problem(self, path: str, line: int, message: str, *, code: Code, severity: str = "error", col: int = 1) -> None:
        self.problems.append(Finding(path, line, col, message, severity, code=code))


def number(value: Any) -> float | None:
    """A logged value as a float: null and the strings NaN / Infinity / -Infinity are non-finite."""
    if value is None:
        return math.nan
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value in NON_FINITE:
        return NON_FINITE[value]
    return None


def as_step(value: Any) -> int | None:
    """A step value (an int, or a float with no fraction as CSV and JSON may write it)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def lines(fh: IO[bytes], progress: Progress | None) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, line) of a binary file, reporting bytes read every few thousand lines."""
    if progress is None:
        yield from enumerate(fh, 1)
        return
    done = 0
    for n, line in enumerate(fh, 1):
        yield n, line
        if not n & 0x3FF:
            pos = fh.tell()
            progress(pos - done)
            done = pos
    progress(fh.tell() - done)


def json_records(path: Path, rel: str, out: Collector) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSON-lines file, streamed: a corrupt line is an error with
    its line, a cut last line (the run may still be writing) a warning; both are skipped."""
    with path.open("rb") as fh:
        for n, line in lines(fh, out.progress):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                if line.endswith(b"\n"):
                    out.problem(rel, n, f"corrupt line: {exc}", code=codes.CORRUPT_LINE, col=getattr(exc, "colno", 1))
                else:
                    out.problem(
                        rel,
                        n,
                        "the last line is cut (the run may still be writing this file); it was skipped",
                        code=codes.CUT_LAST_LINE,
                        severity="warning",
                    )
                continue
            yield n, record
