"""Which form a file is in, from its name and its first bytes (never the whole file).

The rule (docs/judging.md states it with a sample line of each form): TensorBoard by its
file name (`tfevents`); a JSON-lines file by the top-level keys of its first line:
`metric` and `series` is the CI history, `step_key` and `metrics` the dashboard log, `type`
with `timestamp` or `source` the event log; a CSV whose header has a key with `/` and
`_step` or a `.../step` column is a W&B export. Anything else is no known form.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

RUN_FORMATS = ("events", "dashboard", "ci-history", "tensorboard", "wandb-csv")
_HEAD = 64 * 1024
_KEY = re.compile(rb'"([A-Za-z_]+)"\s*:')
_SUFFIXES = {
    "events": (".jsonl", ".json"),
    "dashboard": (".jsonl", ".json"),
    "ci-history": (".jsonl", ".json"),
    "wandb-csv": (".csv",),
}


def looks_like(path: Path, form: str) -> bool:
    """Whether a file in a folder is a candidate for `form` (--input-format names the form)."""
    if form == "tensorboard":
        return "tfevents" in path.name
    return path.suffix in _SUFFIXES[form]


def _json_keys(line: bytes) -> set[bytes] | None:
    """The top-level keys of a JSON object line, whatever its spelling (escapes, spacing)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    return {k.encode("utf-8", "replace") for k in record}


def detect(path: Path) -> str | None:
    """The form of a Miles metrics file, or None if it is none of them (or empty)."""
    if "tfevents" in path.name:
        return "tensorboard"
    try:
        with path.open("rb") as fh:
            head = fh.read(_HEAD)
    except OSError:
        return None
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    if first.startswith(b"{"):
        keys = _json_keys(first) if len(first) < len(head) or len(head) < _HEAD else None
        if keys is None:  # a first line longer than the head: its keys as spelled
            keys = set(_KEY.findall(first[:4096]))
        if {b"metric", b"series"} <= keys:
            return "ci-history"
        if {b"step_key", b"metrics"} <= keys:
            return "dashboard"
        if b"type" in keys and (b"timestamp" in keys or b"source" in keys):
            return "events"
        return None
    if path.suffix == ".csv" or b"," in first:
        cells = {c.strip().strip('"') for c in first.decode("utf-8", "replace").split(",")}
        if any("/" in c for c in cells) and ("_step" in cells or any(c.endswith("/step") for c in cells)):
            return "wandb-csv"
    return None
