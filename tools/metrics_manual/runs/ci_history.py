"""The CI history (MILES_CI_GATE_RECORD_DIR): one JSONL file per process, one line per metric.

`{"metric": "train/grad_norm", "series": [[step, value], ...]}`, with the strings "NaN",
"Infinity" and "-Infinity" for non-finite values. Only a whitelist of keys is recorded:
the profile's other metrics cannot be in this form, so judge leaves them not judged.

This is the shortest reader, the one to copy for a new form (CONTRIBUTING.md): stream the file's
records, and for each value ask the Collector which step key places it, then `put` it.
"""

from __future__ import annotations

import json
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.jsonl import records
from metrics_manual.runs.values import as_step, number

# Miles' CiHistoryBackend records only these keys: TARGET_METRIC_KEYS in
# miles/utils/tracking_utils/ci_history.py, radixark/miles at 31f1ca961a94cb860cec3b2dea34ec332bfa8f76.
TARGET_METRIC_KEYS: tuple[str, ...] = (
    "train/grad_norm",
    "train/ppo_kl",
    "train/train_rollout_logprob_abs_diff",
    "train/train_rollout_kl",
    "rollout/raw_reward",
    "rollout/tito_session_mismatch_rate/v1/assistant_text",
    "rollout/tito_session_mismatch_rate/v2/assistant_text",
)


def read(path: Path, rel: str, out: Collector) -> None:
    """Put every value of a CI history file into `out` (`rel`: the file as findings name it)."""
    for n, record in records(path, rel, out):
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
        is_step = key in out.step_key_set
        if not is_step and out.step_key(key) is None:
            continue  # not read: step_key remembered it as unread
        bad = 0
        for i, point in enumerate(series):
            step = as_step(point[0]) if isinstance(point, list) and len(point) == 2 else None
            if step is None:
                if not bad:  # once per line: a hostile line must not print a book
                    shown = json.dumps(point)[:80]
                    why = f"{key}: point {i} is not [step, value] with a step from 0 to 2^63-1: {shown}"
                    out.problem(rel, n, why, code=codes.NOT_A_RECORD)
                bad += 1
                continue
            if is_step:
                out.put_step(key, step)
                continue
            value = number(point[1])
            if value is None:
                out.put_invalid(key, step, point[1], line=n)
            else:
                out.put(key, step, value)
