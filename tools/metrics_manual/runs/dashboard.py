"""The dashboard log (--use-miles-dashboard): {dump_details}/dashboard/metrics.jsonl.

One object per `log()` call: `{"ts", "step_key", "step", "metrics": {key: value}}`, written
with json.dumps, so a non-finite value is the bare token NaN, Infinity or -Infinity
(Python's json reads them).
"""

from __future__ import annotations

from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import KEYS_KEPT, Collector, as_step, json_records, not_a_step, number


def read(path: Path, rel: str, out: Collector) -> None:
    missing_step: set[str] = set()
    keep, placed, step_key_set, unread = out.keys, out.placed, out.step_key_set, out.unread
    for n, record in json_records(path, rel, out):
        metrics = record.get("metrics") if isinstance(record, dict) else None
        if not isinstance(metrics, dict):
            out.problem(rel, n, "not a dashboard record: no 'metrics' object", code=codes.NOT_A_RECORD)
            continue
        own_key, own_raw = record.get("step_key"), record.get("step")
        own_step = as_step(own_raw)
        if own_key in step_key_set:
            if own_step is None and own_raw is not None:
                out.problem(rel, n, not_a_step("step", own_raw), code=codes.NOT_A_STEP)
                continue
            if own_step is not None:
                out.put_step(own_key, own_step)
        if keep is not None:
            # Most keys of a record are not judged: name them at C speed, look only at the kept ones.
            if len(unread) + len(metrics) <= KEYS_KEPT:
                unread.update(metrics)  # at C speed; judged and step keys are taken out at the end
            else:
                out.note_unread(metrics.keys() - keep)
            items = [(k, metrics[k]) for k in keep if k in metrics]
        else:
            items = list(metrics.items())
        for key, value in items:
            sk = placed[key] if key in placed else out.step_key(key)
            if sk is None:
                if key in step_key_set and (step := as_step(value)) is not None:
                    out.put_step(key, step)
                continue
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
                    if other:
                        out.other_step.setdefault(key, other)
                    out.problem(
                        rel,
                        n,
                        f"{key} is logged without its step key {sk}"
                        + (f" (with {other})" if other else "")
                        + "; such values were skipped",
                        code=codes.MISSING_STEP,
                        severity="warning",
                    )
                continue
            v = number(value)
            if v is None:
                out.put_invalid(key, step, value, line=n)
            else:
                out.put(key, step, v)
