"""Compact captures of runs: the catalog's keys, one CI-history line per metric, and their SHA-256.

A capture is what a profile's ranges were derived from, small enough to review in a pull
request: `{"metric": key, "series": [[step, value], ...]}` per line, the shape of Miles'
CI history, with non-finite values as the strings "NaN", "Infinity" and "-Infinity"; the
judge's CI-history reader reads it back.
"""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Iterable

from .run import Run


def _value(v: float) -> float | str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    return v


def capture_text(run: Run, keys: Iterable[str]) -> str:
    """The compact capture of `run`: one line per key it logged, in the order of `keys`."""
    lines = []
    for key in keys:
        series = run.series.get(key)
        if series:
            points: list[tuple[int, float | str]] = list(sorted(series.items()))
            if not all(map(math.isfinite, series.values())):
                points = [(step, _value(series[step])) for step, _ in points]
            lines.append(json.dumps({"metric": key, "series": points}, separators=(",", ":"), allow_nan=False))
    return "".join(line + "\n" for line in lines)


def sha256_of(path: Path) -> str:
    """SHA-256 of a file, read in blocks; of a folder, of its files' relative paths and digests."""
    if path.is_dir():
        h = hashlib.sha256()
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            h.update(f"{file.relative_to(path).as_posix()}\0{sha256_of(file)}\n".encode("utf-8"))
        return h.hexdigest()
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
