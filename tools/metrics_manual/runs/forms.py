"""The forms a Miles run writes its metrics in: each form's name, how a file is known to be in it,
and its reader. Adding a form is adding an entry here (CONTRIBUTING.md).

Which form a file is in comes from its name and its first bytes (never the whole file). The rule
(docs/judging.md states it with a sample line of each form): TensorBoard by its file name
(`tfevents`); a JSON-lines file by the top-level keys of its first line: `metric` and `series` is
the CI history, `step_key` and `metrics` the dashboard log, `type` with `timestamp` or `source`
the event log; a CSV whose header has a key with `/` and `_step` or a `.../step` column is a W&B
export. Anything else is no known form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

from metrics_manual.runs import ci_history, dashboard, events, tensorboard, wandb_csv
from metrics_manual.runs.collect import Collector

_HEAD = 64 * 1024
_BLANK = b"\xef\xbb\xbf \t\r\n"  # a BOM and blank space before the first line
_KEY = re.compile(rb'"([A-Za-z_]+)"\s*:')
_JSON_LINES = (".jsonl", ".json")


class Head:
    """What detection looks at: a file's name and its first line, read once when first asked for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = path.name

    @cached_property
    def first(self) -> tuple[bytes, bool]:
        """The first line (at most the first 64 KB, past a BOM and blank space), and whether it is whole."""
        head = self.raw
        first = head.lstrip(_BLANK).split(b"\n", 1)[0]
        return first, len(first) < len(head) or len(head) < _HEAD

    @property
    def settled(self) -> bool:
        """Whether what detection looks at stays as the file grows: a newline ends its first line,
        or the head is full (what is appended is never looked at)."""
        return b"\n" in self.raw.lstrip(_BLANK) or len(self.raw) >= _HEAD

    @cached_property
    def raw(self) -> bytes:
        """The file's first 64 KB (none when it cannot be read)."""
        try:
            with self.path.open("rb") as fh:
                return fh.read(_HEAD)
        except OSError:
            return b""

    @cached_property
    def keys(self) -> set[bytes]:
        """The top-level keys of a first line that is a JSON object, whatever its spelling (escapes,
        spacing); of one longer than the head, its keys as spelled. Empty for any other first line."""
        first, whole = self.first
        if not first.startswith(b"{"):
            return set()
        if whole:
            try:
                record = json.loads(first)
            except (ValueError, RecursionError):
                record = None
            if isinstance(record, dict):
                return {k.encode("utf-8", "replace") for k in record}
            return set()
        return set(_KEY.findall(first[:4096]))

    @cached_property
    def cells(self) -> set[str]:
        """The cells of a first line that is not a JSON object and may be a CSV header."""
        first, _ = self.first
        if first.startswith(b"{") or not (self.path.suffix == ".csv" or b"," in first):
            return set()
        return {c.strip().strip('"') for c in first.decode("utf-8", "replace").split(",")}


class Tail(Protocol):
    """A reader of one file that reads on where it stopped, as the file grows."""

    def read(self, out: Collector, ended: bool = True) -> None:
        """Put what the file holds from where reading stopped; `ended`: the file is complete (its
        last line or record is read, a cut one a warning), else what may still be written waits."""


@dataclass(frozen=True)
class RunForm:
    """One form: its name (--input-format), the file names a folder search takes for it when it is
    named, whether a file's head is in it, and the reader that puts its values into a Collector."""

    name: str
    named: Callable[[str], bool]
    detect: Callable[[Head], bool]
    read: Callable[[Path, str, Collector], None]
    float32: bool = False  # it stores a value as float32: judge compares its values at float32 precision
    # A file of the form grows only at its end (Miles appends to it): its reader for one file (the
    # path, the name findings show it by), which reads on (judge --follow). None: written whole.
    tail: Callable[[Path, str], Tail] | None = None


def _json_lines(name: str) -> bool:
    return name.endswith(_JSON_LINES)


def _wandb_header(cells: set[str]) -> bool:
    return any("/" in c for c in cells) and ("_step" in cells or any(c.endswith("/step") for c in cells))


FORMS: tuple[RunForm, ...] = (
    RunForm(
        "events",
        _json_lines,
        lambda h: b"type" in h.keys and (b"timestamp" in h.keys or b"source" in h.keys),
        events.read,
        tail=events.EventLog,
    ),
    RunForm(
        "dashboard",
        _json_lines,
        lambda h: {b"step_key", b"metrics"} <= h.keys,
        dashboard.read,
        tail=dashboard.DashboardLog,
    ),
    # Rewritten whole on every log() (a temp file renamed over it): read again when it changes.
    RunForm("ci-history", _json_lines, lambda h: {b"metric", b"series"} <= h.keys, ci_history.read),
    RunForm(  # a scalar's simple_value is a float32
        "tensorboard",
        lambda name: "tfevents" in name,
        lambda h: "tfevents" in h.name,
        tensorboard.read,
        float32=True,
        tail=tensorboard.EventFile,
    ),
    RunForm("wandb-csv", lambda name: name.endswith(".csv"), lambda h: _wandb_header(h.cells), wandb_csv.read),
)
BY_NAME = {form.name: form for form in FORMS}
RUN_FORMATS = tuple(BY_NAME)


def detect(path: Path) -> str | None:
    """The form of a Miles metrics file, or None if it is none of them (or empty)."""
    return detect_settled(path)[0]


def detect_settled(path: Path) -> tuple[str | None, bool]:
    """`detect`, and whether its answer stays as the file grows: its first line is whole (a newline
    ends it, or it fills the head), so what is appended is never looked at."""
    head = Head(path)
    return next((form.name for form in FORMS if form.detect(head)), None), head.settled


def looks_like(path: Path, form: str) -> bool:
    """Whether a file in a folder is a candidate for `form` (--input-format names the form)."""
    return BY_NAME[form].named(path.name)
