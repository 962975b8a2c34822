"""A W&B run history exported as CSV: one column per key, one row per `wandb.log` call.

Miles logs the step key inside the dict and passes no `step=`, so W&B's `_step` counts
calls, not training steps: a value's step is the row's `train/step` / `rollout/step`
cell (the catalog's step keys). An empty cell is a key that call did not log.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector, as_step

_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "+inf": "Infinity", "-inf": "-Infinity"}


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    with path.open("rb") as raw:
        fh = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        rows = csv.reader(fh)
        header = next(rows, None)
        if header is None:
            return
        columns: list[tuple[int, str, int | None, bool]] = []  # index, key, index of its step column, is a step key
        where = {name: i for i, name in enumerate(header)}
        for i, name in enumerate(header):
            sk = out.step_key(name)
            if sk is not None:
                columns.append((i, name, where.get(sk), False))
            elif name in out.step_key_set:
                columns.append((i, name, i, True))
        width = len(header)
        done = 0
        pending: tuple[int, int] | None = None  # a row of the wrong width: cut if it is the last one
        for row in rows:
            n = rows.line_num
            if pending:
                why = f"corrupt line: {pending[1]} fields where the header has {width}"
                out.problem(rel, pending[0], why, code=codes.CORRUPT_LINE)
                pending = None
            if out.progress and not n & 0x3FF:
                pos = raw.tell()
                out.progress(pos - done)
                done = pos
            if not row:
                continue
            if len(row) != width:
                pending = (n, len(row))
                continue
            for i, key, si, is_step in columns:
                cell = row[i]
                if not cell:
                    continue
                step = _step(row[si]) if si is not None else None
                if step is None:
                    if key not in missing_step:
                        missing_step.add(key)
                        out.problem(
                            rel,
                            n,
                            f"{key} is logged without a step in its step column; such values were skipped",
                            code=codes.MISSING_STEP,
                            severity="warning",
                            col=i + 1,
                        )
                    continue
                if is_step:
                    out.put_step(key, step)
                    continue
                try:
                    value = float(cell)
                except ValueError:
                    out.problem(rel, n, f"{key}: not a number: {cell[:40]!r}", code=codes.NOT_A_NUMBER, col=i + 1)
                    continue
                out.put(key, step, value)
        if pending:
            if pending[1] < width and not _ends_with_newline(raw):
                out.problem(
                    rel,
                    pending[0],
                    "the last line is cut (the run may still be writing this file); it was skipped",
                    code=codes.CUT_LAST_LINE,
                    severity="warning",
                )
            else:
                why = f"corrupt line: {pending[1]} fields where the header has {width}"
                out.problem(rel, pending[0], why, code=codes.CORRUPT_LINE)
        if out.progress:
            out.progress(raw.tell() - done)


def _ends_with_newline(raw: io.BufferedReader) -> bool:
    raw.seek(0, io.SEEK_END)
    if raw.tell() == 0:
        return True
    raw.seek(-1, io.SEEK_END)
    return raw.read(1) in (b"\n", b"\r")


def _step(cell: str) -> int | None:
    try:
        return as_step(float(cell)) if cell else None
    except ValueError:
        return None
