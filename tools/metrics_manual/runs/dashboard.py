"""The dashboard log (--use-miles-dashboard): {dump_details}/dashboard/metrics.jsonl.

One object per `log()` call: `{"ts", "step_key", "step", "metrics": {key: value}}`, written
with json.dumps, so a non-finite value is the bare token NaN, Infinity or -Infinity
(Python's json reads them; runs/jsonl.py reads them as json.loads does). Miles writes `step` as
the value of the record's `step_key` in its `metrics` (`tracking.log`); a record where the two
differ cannot be placed: an error naming both, and the record is skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.jsonl import ended_records, exact_fields, exact_values, last_record
from metrics_manual.runs.lines import LineCursor
from metrics_manual.runs.values import as_step, not_a_step, number


def read(path: Path, rel: str, out: Collector) -> None:
    DashboardLog(path, rel).read(out)


class DashboardLog:
    """Reading one dashboard log, and where it stands: its lines read, the keys already said to be
    logged without their step key, the first and last records' `ts` (the file's span, the rules of a
    merge). The file of a live run is read on from there as it grows (judge --follow)."""

    def __init__(self, path: Path, rel: str) -> None:
        self.rel = rel
        self.cursor = LineCursor(path)
        self.missing_step: set[str] = set()
        self.first: Any = None
        self.last: Any = None

    def read(self, out: Collector, ended: bool = True) -> None:
        """Put the records from where reading stands to the end of the file as it is now. `ended`: the
        file is complete, so its last line is read too (a cut one is a warning); else a line no
        newline ends yet waits."""

        def exact(record: Any, spelled: bool) -> bool:
            """Only the values put_record reads are made exact: the record's own fields and the kept keys'
            values (their keys not noted here: put_record notes them, unless it skips the record). A
            record holds a hundred values and judge reads a few: the others' names are all it notes, and
            orjson reads names as json.loads does. Looking at every value costs as much as json.loads
            itself (docs/benchmarks.md: judge is to stay faster than a json.loads loop)."""
            metrics = record.get("metrics") if type(record) is dict else None
            if type(metrics) is not dict:
                return exact_values(record, spelled)
            own = [k for k in record if k != "metrics"]
            return exact_fields(record, own, spelled) and exact_fields(metrics, out.kept(metrics, False), spelled)

        records = ended_records(self.cursor, self.rel, out, exact=exact)
        for n, record in chain(records, last_record(self.cursor, self.rel, out, exact)) if ended else records:
            if put_record(record, n, self.rel, out, self.missing_step):
                self.last = record["ts"] if "ts" in record else None
                if self.first is None:
                    self.first = self.last
        out.span(self.first, self.last)


def put_record(
    record: Any,
    n: int,
    rel: str,
    out: Collector,
    missing_step: set[str],
    what: str = "dashboard record",
    shown: Callable[[Any], str | None] = lambda value: None,
) -> bool:
    """Put the values of one record of a `log()` call, `{"step_key", "step", "metrics"}` (line `n`), as
    Miles' trackers place them: the dashboard's, and a console log's metric line (runs/console.py);
    `missing_step`: the keys already reported logged without their step key in this file; `what`: the
    record in words; `shown`: a value that is no number in words (None: as runs/values.py shows it).
    False when the record was skipped (a finding)."""
    metrics = record.get("metrics") if isinstance(record, dict) else None
    if not isinstance(metrics, dict):
        out.problem(rel, n, f"not a {what}: no 'metrics' object", code=codes.NOT_A_RECORD)
        return False
    step_key_set = out.step_key_set
    own_key, own_raw = record.get("step_key"), record.get("step")
    own_step = as_step(own_raw)
    put_own = None
    if isinstance(own_key, str) and own_key in step_key_set:  # a list as step_key is no step key
        if own_step is None and own_raw is not None:
            out.problem(rel, n, not_a_step("step", own_raw), code=codes.NOT_A_STEP)
            return False
        inner = as_step(metrics.get(own_key))
        if own_step is not None and inner is not None and inner != own_step:
            # Which of the two is the step cannot be told (the module's docstring).
            why = f"not a {what}: its step is {own_step} but its {own_key} is {inner}; it was skipped"
            out.problem(rel, n, why, code=codes.NOT_A_RECORD)
            return False
        if own_step is not None:
            out.put_step(own_key, own_step)
            put_own = own_key  # its value in metrics, when it has one, is the same step
    steps: dict[str, int] = {}  # each step key's step, read once a record (not once a value)
    for key, sk in out.kept(metrics).items():
        value = metrics[key]
        if sk is None:
            if key in step_key_set and key != put_own and (step := as_step(value)) is not None:
                out.put_step(key, step)
            continue
        step = steps.get(sk)
        if step is None:
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
            steps[sk] = step
        if type(value) is float:  # the usual value, as `number` reads it
            out.put(key, step, value)
        elif (v := number(value)) is None:
            out.put_invalid(key, step, value, line=n, text=shown(value))
        else:
            out.put(key, step, v)
    return True
