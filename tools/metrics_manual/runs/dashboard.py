"""The dashboard log (--use-miles-dashboard): {dump_details}/dashboard/metrics.jsonl.

One object per `log()` call: `{"ts", "step_key", "step", "metrics": {key: value}}`, written
with json.dumps, so a non-finite value is the bare token NaN, Infinity or -Infinity
(Python's json reads them).
"""

from __future__ import annotations

from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector, as_step, json_records, number


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    keep, unread, placed = out.keys, out.unread, out.placed
    for n, record in json_records(path, rel, out):
        metrics = record.get("metrics") if isinstance(record, dict) else None
        if not isinstance(metrics, dict):
            out.problem(rel, n, "not a dashboard record: no 'metrics' object", code=codes.NOT_A_RECORD)
            continue
        own_key, own_step = record.get("step_key"), as_step(record.get("step"))
        if own_key in out.step_key_set and own_step is not None:
            out.put_step(own_key, own_step)
        if keep is not None:
            # Most keys of a record are not judged: name them at C speed, look only at the kept ones.
            unread.update(metrics)
            items = [(k, metrics[k]) for k in keep if k in metrics]
        else:
            items = list(metrics.items())
        for key, value in items:
            sk = placed[key] if key in placed else out.step_key(key)
            if sk is None:
                if key in out.step_key_set and (step := as_step(value)) is not None:
                    out.put_step(key, step)
                continue
            step = as_step(metrics[sk]) if sk in metrics else own_step if own_key == sk else None
            if step is None:
                if key not in missing_step:
                    missing_step.add(key)
                    out.problem(
                        rel,
                        n,
                        f"{key} is logged without its step key {sk}; such values were skipped",
                        code=codes.MISSING_STEP,
                        severity="warning",
                    )
                continue
            v = number(value)
            if v is not None:
                out.put(key, step, v)
