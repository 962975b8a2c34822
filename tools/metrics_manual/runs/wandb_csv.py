"""A W&B run history exported as CSV: one column per key, one row per `wandb.log` call.

Miles logs the step key inside the dict and passes no `step=`, so W&B's `_step` counts
calls, not training steps: a value's step is the row's `train/step` / `rollout/step`
cell (the catalog's step keys). An empty cell is a key that call did not log; pandas'
`to_csv` also writes NaN as an empty cell, so a metric empty at a step it should have
is missing there (an error of judge), never passed.
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
    rows = csv.reader(_text_lines(cursor, out, too_long_at))
    header = next(rows, None)
    if header is None:
        return
    if header and header[0].startswith("\ufeff"):
        header[0] = header[0][1:]
    columns: list[tuple[int, str, int | None, bool]] = []  # index, key, index of its step column, is a step key
    where = {name: i for i, name in enumerate(header)}
    steps_at = [i for i, name in enumerate(header) if name in out.step_key_set]
    for i, name in enumerate(header):
        if name.startswith("_"):
            continue  # W&B's own columns (_step, _runtime, _timestamp), not the run's keys
        sk = out.step_key(name)
        if sk is not None:
            columns.append((i, name, where.get(sk), False))
        elif name in out.step_key_set:
            columns.append((i, name, i, True))
    if not columns:  # no key of a known namespace nor a step key: not a history of a run with this catalog
        known = ", ".join(sorted(out.step_key_set))
        why = f"no column of a step key ({known}) or of a key under one: not a W&B history of this run's keys"
        out.problem(rel, 1, why, code=codes.UNKNOWN_RUN_FORM)
        return
    width = len(header)
    pending: tuple[int, int] | None = None  # a row of the wrong width: cut if it is the last one
    for row in rows:
        n = rows.line_num
        for at in too_long_at:
            out.problem(rel, at, too_long_message(), code=codes.LINE_TOO_LONG)
        too_long_at.clear()
        if pending:
            why = f"corrupt line: {pending[1]} fields where the header has {width}"
            out.problem(rel, pending[0], why, code=codes.CORRUPT_LINE)
            pending = None
        if not row:
            continue
        if len(row) != width:
            pending = (n, len(row))
            continue
        row_steps: dict[int | None, int | None] = {}  # each step column's step, read once a row
        for i, key, si, is_step in columns:
            cell = row[i]
            if not cell:
                continue
            scell = row[si] if si is not None else ""
            step = row_steps[si] if si in row_steps else row_steps.setdefault(si, _step(scell))
            if step is None:
                if scell:
                    why = f"{key}: its step {scell[:40]!r} is not an integer from 0 to 2^63-1"
                    out.problem(rel, n, why, code=codes.NOT_A_STEP)
                    break  # once per row
                if key not in missing_step:
                    missing_step.add(key)
                    other = next((header[j] for j in steps_at if row[j] and j != si), None)
                    why = out.without_step(key, "a step in its step column", other)
                    out.problem(rel, n, why, code=codes.MISSING_STEP, severity="warning", col=i + 1)
                continue
            if is_step:
                out.put_step(key, step)
                continue
            try:
                value = float(cell)
            except ValueError:
                out.put_invalid(key, step, cell, line=n)
                continue
            if math.isinf(value) and cell.strip().lower() not in _INF:
                out.put_invalid(key, step, None, line=n, text=f"{cell[:40]} (out of float range)")
                continue
            out.put(key, step, value)
    for at in too_long_at:
        out.problem(rel, at, too_long_message(), code=codes.LINE_TOO_LONG)
    if pending:
        if pending[1] < width and not _ends_with_newline(cursor):
            out.cut(rel, pending[0])
        else:
            why = f"corrupt line: {pending[1]} fields where the header has {width}"
            out.problem(rel, pending[0], why, code=codes.CORRUPT_LINE)


_INF = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


def _text_lines(cursor: LineCursor, out: Collector, too_long_at: list[int]) -> Iterator[str]:
    """The file's lines as text, each at most MAX_LINE bytes (a longer one is reported and skipped)."""
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
        else:
            yield line.decode("utf-8")


def _ends_with_newline(cursor: LineCursor) -> bool:
    """Whether the file read ends with a newline (a carriage return counts)."""
    last = cursor.last()
    return last is None or (last[1] is not None and last[1].endswith(b"\r"))


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
