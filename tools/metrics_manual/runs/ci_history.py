"""The CI history (MILES_CI_GATE_RECORD_DIR): one JSONL file per process, one line per metric.

`{"metric": "train/grad_norm", "series": [[step, value], ...]}`, with the strings "NaN",
"Infinity" and "-Infinity" for non-finite values. Only a whitelist of keys is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector, as_step, json_records, number


def read(path: Path, rel: str, out: Collector) -> None:
    for n, record in json_records(path, rel, out):
        key = record.get("metric") if isinstance(record, dict) else None
        series = record.get("series") if isinstance(record, dict) else None
        if not isinstance(key, str) or not isinstance(series, list):
            out.problem(
                rel,
                n,
                'not a CI history line: expected {"metric": ..., "series": [[step, value], ...]}',
                code=codes.NOT_A_RECORD,
            )
            continue
        for i, point in enumerate(series):
            step = as_step(point[0]) if isinstance(point, list) and len(point) == 2 else None
            value = number(point[1]) if step is not None else None
            if step is None or value is None:
                out.problem(
                    rel, n, f"{key}: point {i} is not [step, value]: {json.dumps(point)[:80]}", code=codes.NOT_A_RECORD
                )
                continue
            if key in out.step_key_set:
                out.put_step(key, step)
            elif out.step_key(key) is not None or (out.keys is None and key not in out.unread):
                out.put(key, step, value)
