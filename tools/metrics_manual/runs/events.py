"""The event log (--save-debug-event-data, or --dump-details D: D/events/*.jsonl).

One pydantic event per line; metric lines are
`{"timestamp": ..., "source": {...}, "type": "metric", "rollout_id": null, "attempt": null,
"metrics": {"rollout/step": 3, ...}}`. Other event types (weight checksums, witnesses ...)
can be large: a substring test skips them before any JSON is parsed. pydantic writes a
non-finite value as `null`, so null is NaN here, never an absent value.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .collect import Collector, as_step, lines, number

# pydantic's model_dump_json writes no spaces; the looser test keeps hand-written lines too.
_METRIC = b'"metric"'


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    with path.open("rb") as fh:
        last = b""
        n = 0
        for n, line in lines(fh, out.progress):
            last = line
            if _METRIC not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError as exc:
                if not line.endswith(b"\n"):
                    break  # the last line, judged below
                out.problem(rel, n, f"corrupt line: {exc}", col=getattr(exc, "colno", 1))
                continue
            if isinstance(event, dict) and event.get("type") == "metric":
                _metric(event, rel, n, out, missing_step)
        if last and not last.endswith(b"\n"):
            try:
                json.loads(last)
            except ValueError:
                out.problem(rel, n, "the last line is cut (the run may still be writing this file); it was skipped",
                            severity="warning")


def _metric(event: dict[str, Any], rel: str, n: int, out: Collector, missing_step: set[str]) -> None:
    metrics = event.get("metrics")
    if not isinstance(metrics, dict):
        out.problem(rel, n, "a metric event without a 'metrics' object")
        return
    attempt = event.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0
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
                out.problem(rel, n, f"{key} is logged without its step key {sk}; such values were skipped",
                            severity="warning")
            continue
        v = number(value)
        if v is not None:
            out.put(key, step, v, attempt)
