"""The event log (--save-debug-event-data, or --dump-details D: D/events/*.jsonl).

One pydantic event per line; metric lines are
`{"timestamp": ..., "source": {...}, "type": "metric", "rollout_id": null, "attempt": null,
"metrics": {"rollout/step": 3, ...}}`. Other event types (weight checksums, witnesses ...)
can be large and are most of the file, so a line is parsed only when it may be a metric line:
when it holds the bytes `metri` or a backslash (an escape is the only other way JSON can spell
the word, and duplicate keys make a "type" early in the line no proof), so any spacing, escaping
or key order that json.loads accepts gives the same records. pydantic writes a non-finite value
as `null`, so null is NaN here, never an absent value.
"""

from __future__ import annotations

import math
from itertools import chain
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.jsonl import ended_records, last_record
from metrics_manual.runs.lines import LineCursor
from metrics_manual.runs.values import as_step, not_a_step, number


def may_be_metric(line: bytes) -> bool:
    """Whether a line may be a metric event (else it is skipped unparsed)."""
    return b"metri" in line or b"\\" in line


def read(path: Path, rel: str, out: Collector) -> None:
    EventLog(path, rel).read(out)


class EventLog:
    """Reading one event log, and where it stands: its lines read, the keys already said to be logged
    without their step key, the first and last metric events' timestamps (the file's span, the rules
    of a merge). The file of a live run is read on from there as it grows (judge --follow)."""

    def __init__(self, path: Path, rel: str) -> None:
        self.rel = rel
        self.cursor = LineCursor(path)
        self.missing_step: set[str] = set()
        self.first: Any = None
        self.last: Any = None

    def read(self, out: Collector, ended: bool = True) -> None:
        """Put the metric events from where reading stands to the end of the file as it is now.
        `ended`: the file is complete, so its last line is read too (a cut one is a warning); else
        a line no newline ends yet waits."""
        events = ended_records(self.cursor, self.rel, out, may_be_metric)
        for n, event in chain(events, last_record(self.cursor, self.rel, out)) if ended else events:
            if isinstance(event, dict) and event.get("type") == "metric":
                self.last = event.get("timestamp")
                if self.first is None:
                    self.first = self.last
                out.at(self.last)
                metric(event, n, self.rel, out, self.missing_step)
        out.span(self.first, self.last)


def metric(event: dict[str, Any], n: int, rel: str, out: Collector, missing_step: set[str]) -> None:
    """Put the values of one metric event (line `n`); `missing_step`: the keys already reported
    logged without their step key in this file."""
    metrics = event.get("metrics")
    if not isinstance(metrics, dict):
        out.problem(rel, n, "a metric event without a 'metrics' object", code=codes.NOT_A_RECORD)
        return
    attempt = event.get("attempt")
    attempt = attempt if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0 else 0
    out.kept(metrics, False)  # first: an adapter's step key (lora_a/step) joins the step keys
    steps: dict[str, int] = {}  # each step key's step, read once a record (not once a value)
    for own in out.step_key_set:  # a step key whose value is no step spoils the record
        raw = metrics.get(own)
        if raw is not None:
            if (step := as_step(raw)) is None:
                out.problem(rel, n, not_a_step(own, raw), code=codes.NOT_A_STEP)
                return
            steps[own] = step
    for key, sk in out.kept(metrics).items():
        value = metrics[key]
        if sk is None:
            if key in steps:  # a step key with a step
                out.put_step(key, steps[key])
            continue
        step = steps.get(sk)  # `sk` is a step key: its step, or None where the record has none
        if step is None:
            if key not in missing_step:
                missing_step.add(key)
                other = next((k for k in metrics if k in out.step_key_set), None)
                why = out.without_step(key, f"its step key {sk}", other)
                out.problem(rel, n, why, code=codes.MISSING_STEP, severity="warning")
            continue
        if type(value) is float:  # the usual value, as `number` reads it
            out.put(key, step, value, attempt)
        elif value is None:
            out.put(key, step, math.nan, attempt)  # pydantic's NaN / Infinity
        elif (v := number(value)) is None:
            out.put_invalid(key, step, value, attempt, line=n)
        else:
            out.put(key, step, v, attempt)
