"""A W&B run history exported as CSV: one column per key, one row per `wandb.log` call.

Miles logs the step key inside the dict and passes no `step=`, so W&B's `_step` counts
calls, not training steps: a value's step is the row's `train/step` / `rollout/step`
cell (the catalog's step keys). An empty cell is a key that call did not log; pandas'
`to_csv` also writes NaN as an empty cell, so a metric empty at a step it should have
is missing there (an error of judge), never passed. With `na_rep="nan"` pandas writes `nan`
both for NaN and for a key a row lacks: a `nan` cell is a key its row did not log where the
row has no step of its step key, and elsewhere a NaN wherever no row of the file gives the
key a number at that step (never a re-logged step). pandas and Python's csv end every row with a
newline: a last row without one was cut (a download or a copy interrupted), so it is skipped
with a warning, never read as complete.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.lines import LineCursor, too_long_message
from metrics_manual.runs.values import as_step


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    too_long_at: list[int] = []
    cursor = LineCursor(path)
    unended: list[int] = []  # the number of the last line once it is read, when no newline ends it
    rows = csv.reader(_text_lines(cursor, out, too_long_at, unended))
    header = next(rows, None)
    if header is None:
        return
    if unended:
        out.cut(rel, 1)
        return
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    where = {name: i for i, name in enumerate(header)}
    steps_at = [i for i, name in enumerate(header) if name in out.step_key_set]
    columns = _columns(header, where, out)
    if not columns:  # no key of a known namespace nor a step key: not a history of a run with this catalog
        known = ", ".join(sorted(out.step_key_set))
        why = f"no column of a step key ({known}) or of a key under one: not a W&B history of this run's keys"
        out.problem(rel, 1, why, code=codes.UNKNOWN_RUN_FORM)
        return
    width = len(header)
    at_time = where.get("_timestamp")
    first = last = None  # the first and last rows' _timestamp: the file's span (the rules of a merge)
    nan_at: dict[tuple[str, int], None] = {}  # a NaN cell's key and step: a value only where no row has a number
    for row in rows:
        n = rows.line_num
        _say_too_long(too_long_at, rel, out)
        if unended:  # pandas' to_csv and Python's csv end every row with a newline: this one was cut
            out.cut(rel, unended[0])
            break
        if not row:
            continue
        if len(row) != width:
            why = f"corrupt line: {len(row)} fields where the header has {width}"
            out.problem(rel, n, why, code=codes.CORRUPT_LINE)
            continue
        if at_time is not None:
            last = row[at_time]
            if first is None:
                first = last
            out.at(last)
        row_steps: dict[int | None, int | None] = {}  # each step column's step, read once a row
        for i, key, si, is_step in columns:
            cell = row[i]
            if not cell:
                continue
            scell = row[si] if si is not None else ""
            step = row_steps[si] if si in row_steps else row_steps.setdefault(si, _step(scell))
            if step is None:
                if scell and not _nan(scell):
                    why = f"{key}: its step {scell[:40]!r} is not an integer from 0 to 2^63-1"
                    out.problem(rel, n, why, code=codes.NOT_A_STEP)
                    break  # once per row
                if _nan(cell):
                    continue  # a key this call did not log (pandas' na_rep="nan" writes it so)
                if key not in missing_step:
                    missing_step.add(key)
                    other = next((header[j] for j in steps_at if row[j] and not _nan(row[j]) and j != si), None)
                    why = out.without_step(key, "a step in its step column", other)
                    out.problem(rel, n, why, code=codes.MISSING_STEP, severity="warning", col=i + 1)
                continue
            if is_step:
                out.put_step(key, step)
                continue
            _put_cell(out, key, step, cell, n, nan_at)
    _say_too_long(too_long_at, rel, out)
    for key, step in nan_at:
        if step not in out.series.get(key, ()):  # (a cell that is no number put its step already)
            out.put(key, step, math.nan)
    out.span(first, last)


def _columns(header: list[str], where: dict[str, int], out: Collector) -> list[tuple[int, str, int | None, bool]]:
    """(index, key, index of its step column, is a step key) of each column the run's keys fill."""
    columns: list[tuple[int, str, int | None, bool]] = []
    for i, name in enumerate(header):
        if name.startswith("_"):
            continue  # W&B's own columns (_step, _runtime, _timestamp), not the run's keys
        sk = out.step_key(name)
        if sk is not None:
            columns.append((i, name, where.get(sk), False))
        elif name in out.step_key_set:
            columns.append((i, name, i, True))
    return columns


def _put_cell(out: Collector, key: str, step: int, cell: str, n: int, nan_at: dict[tuple[str, int], None]) -> None:
    """A metric's cell at its step: a number, a NaN decided at the end of the file, or what is no number."""
    try:
        value = float(cell)
    except ValueError:
        out.put_invalid(key, step, cell, line=n)
        return
    if value != value:  # NaN, or a key this call did not log: decided at the end of the file
        if step not in out.series.get(key, ()):
            nan_at[(key, step)] = None
        return
    if math.isinf(value) and cell.strip().lower() not in _INF:
        out.put_invalid(key, step, None, line=n, text=f"{cell[:40]} (out of float range)")
        return
    if nan_at:  # a number at a step a NaN cell held: the NaN was a key another call did not log
        nan_at.pop((key, step), None)
    out.put(key, step, value)


def _say_too_long(too_long_at: list[int], rel: str, out: Collector) -> None:
    for at in too_long_at:
        out.problem(rel, at, too_long_message(), code=codes.LINE_TOO_LONG)
    too_long_at.clear()


_INF = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


def _nan(cell: str) -> bool:
    """Whether a cell spells NaN (pandas' na_rep="nan", which it also writes for a key a row lacks)."""
    return len(cell) < 8 and cell.strip().lstrip("+-").lower() == "nan"


def _text_lines(cursor: LineCursor, out: Collector, too_long_at: list[int], unended: list[int]) -> Iterator[str]:
    """The file's lines as text, each at most MAX_LINE bytes (a longer one is reported and skipped);
    the number of a last line no newline ends goes into `unended` as it is given out."""
    for n, line in cursor.lines(out.progress):
        if line is None:
            too_long_at.append(n)
            yield "\n"  # keeps csv's line numbers
        else:
            yield line.decode("utf-8") + "\n"
    if (last := cursor.last()) is not None:
        n, line = last
        if line is None:
            too_long_at.append(n)
        elif line.endswith(b"\r"):  # a carriage return ends it: the row is whole
            yield line.decode("utf-8") + "\n"
        else:
            unended.append(n)
            yield line.decode("utf-8")


def _step(cell: str) -> int | None:
    if not cell:
        return None
    try:
        return as_step(int(cell))
    except ValueError:
        pass
    try:
        return as_step(float(cell))
    except ValueError:
        return None
