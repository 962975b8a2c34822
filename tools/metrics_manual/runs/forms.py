"""The forms a Miles run writes its metrics in: the registry, and the only list of them.

Each form's entry (a `RunForm`) holds its name, how a file is known to be in it, a sample as Miles
writes it, what in Miles writes it, how a live run grows it, its reader and the reader that reads on
as the file grows. Everything else takes the list from here: detection, the folder search, the
command's --input-format, the messages that name the forms tried, and the judging page's tables
(docs/judging.md renders them). Adding a form is CONTRIBUTING.md's "Add a run form".

Each form names its reader ("module:name" in metrics_manual.runs) instead of importing it: the
commands' --help lists the forms from here, and pays for no reader.

Which form a file is in comes from its name and its first bytes (never the whole file): the forms
are tried in order, the first whose `detect` says yes is taken, and anything else is no known form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

from metrics_manual.imported import imported

RUNS = "metrics_manual.runs"  # where the forms' readers are

if TYPE_CHECKING:
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
        """Whether what detection looks at stays as the file grows: the head is full (what is appended
        is never looked at). A form may be told by any line of the head (the console log), so a whole
        first line settles nothing."""
        return len(self.raw) >= _HEAD

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


# How a live run writes a form's file: "appended" (Miles adds to its end: judge --follow reads on
# where it stopped, with the form's `tail`), "rewritten" (replaced whole on every log(), a temp file
# renamed over it: read again whole when it changes), "exported" (written once, after the run).
Growth = Literal["appended", "rewritten", "exported"]


@dataclass(frozen=True)
class RunForm:
    """One form, with everything a new form needs (CONTRIBUTING.md, "Add a run form"). The judging
    page's tables of forms are rendered from these fields (docs/judging.md), so each is Markdown."""

    name: str  # what --input-format takes
    words: str  # the form for people ("event log")
    named: Callable[[str], bool]  # the file names a folder search takes for it when --input-format names it
    detect: Callable[[Head], bool]  # whether a file's head is in it
    detected: str  # how `detect` tells it, in words
    sample_file: str  # a file of the form as Miles names it
    sample: str  # its first line as Miles writes it (detection takes it; "" when detected by name)
    writes: str  # what in Miles writes it, and where: the flag, the file, the writer
    reader: str  # "module:function" in metrics_manual.runs: `read(path, rel, out)` puts the values into a Collector
    reading: str  # how it is read, in words
    grows: Growth
    # "module:class" of the reader of one file that reads on as it grows (judge --follow), given its path
    # and the name findings show it by: required of a form that is appended to, None for any other (read
    # again whole).
    tailer: str | None
    # What gives a record its time, in words, or None when the form has none: the reader gives each
    # record's time (`Collector.at`) and each file the times of its first and last records
    # (`Collector.span`), which order a run's lives in the merge (runs/collect.py); a file without
    # them cannot be ordered after another.
    time: str | None
    float32: bool = False  # it stores a value as float32: judge compares its values at float32 precision

    def __post_init__(self) -> None:
        if (self.grows == "appended") != (self.tailer is not None):
            raise ValueError(
                f"run form {self.name}: a tailer is required of a form that is appended to, and only of it"
            )

    @property
    def read(self) -> Callable[[Path, str, Collector], None]:
        return cast("Callable[[Path, str, Collector], None]", imported(RUNS, self.reader))

    @property
    def tail(self) -> Callable[[Path, str], Tail] | None:
        return None if self.tailer is None else cast("Callable[[Path, str], Tail]", imported(RUNS, self.tailer))


def _json_lines(name: str) -> bool:
    return name.endswith(_JSON_LINES)


def _wandb_header(cells: set[str]) -> bool:
    return any("/" in c for c in cells) and ("_step" in cells or any(c.endswith("/step") for c in cells))


FORMS: tuple[RunForm, ...] = (
    RunForm(
        name="events",
        words="event log",
        named=_json_lines,
        detect=lambda h: b"type" in h.keys and (b"timestamp" in h.keys or b"source" in h.keys),
        detected="a JSON-lines file whose first line has the top-level keys `type` with `timestamp` or `source`",
        sample_file="rollout_manager.jsonl",
        sample='{"timestamp":"2026-11-30T01:00:00Z","source":{"component":"main"},"type":"metric",'
        '"rollout_id":null,"attempt":null,"metrics":{"rollout/step":3,"rollout/raw_reward":0.5}}',
        writes="`--save-debug-event-data DIR` or `--dump-details D` (`D/events/*.jsonl`, one file per process), "
        "by `EventLogger.log` (`miles/utils/audit_utils/event_logger/logger.py`)",
        reader="events:read",
        reading="lines whose `type` is `metric`; the step is the step key inside `metrics`; a line is skipped "
        "unparsed only when it holds neither the bytes `metric` nor a backslash (an escape is the only other way "
        'JSON can spell the word, and duplicate keys make a `"type"` early in the line no proof), so any spacing, '
        "escaping or key order gives the same records; a repeated step by "
        "[the rules of a merge](#how-the-files-of-one-run-are-merged); `null` is a non-finite value (pydantic "
        "writes NaN and infinity as null)",
        grows="appended",
        tailer="events:EventLog",
        time="`timestamp`",
    ),
    RunForm(
        name="dashboard",
        words="dashboard",
        named=_json_lines,
        detect=lambda h: {b"step_key", b"metrics"} <= h.keys,
        detected="a JSON-lines file whose first line has the top-level keys `step_key` and `metrics`",
        sample_file="metrics.jsonl",
        sample='{"ts": 1796000000.0, "step_key": "rollout/step", "step": 3, "metrics": {"rollout/step": 3, '
        '"rollout/raw_reward": 0.5}}',
        writes="`--use-miles-dashboard`: `dashboard/metrics.jsonl`, by `MetricStore` (`miles/dashboard/store.py`)",
        reader="dashboard:read",
        reading="one object per `log()` call (`ts`, `step_key`, `step`, `metrics`); `NaN`, `Infinity`, "
        "`-Infinity` tokens",
        grows="appended",
        tailer="dashboard:DashboardLog",
        time="`ts`",
    ),
    RunForm(
        name="ci-history",
        words="CI history",
        named=_json_lines,
        detect=lambda h: {b"metric", b"series"} <= h.keys,
        detected="a JSON-lines file whose first line has the top-level keys `metric` and `series`",
        sample_file="13125-bd92a7843fe24cc58ebe4a3edf425304.jsonl",
        sample='{"metric": "train/grad_norm", "series": [[0, 1.2], [1, "NaN"]]}',
        writes="`MILES_CI_GATE_RECORD_DIR`: one `pid-uuid.jsonl` per process, by `CiHistoryBackend` "
        "(`miles/utils/tracking_utils/ci_history.py`)",
        reader="ci_history:read",
        reading='`{"metric", "series": [[step, value], ...]}`, non-finite values as the strings `"NaN"`, '
        '`"Infinity"`, `"-Infinity"`; Miles records only the keys of its '
        "`TARGET_METRIC_KEYS` (at 31f1ca96), so the profile's other metrics are **not judged** in this form (with "
        "that reason), never an error",
        grows="rewritten",  # on every log(), a temp file renamed over it (CiHistoryBackend._write_snapshot_locked)
        tailer=None,
        time=None,
    ),
    RunForm(
        name="tensorboard",
        words="TensorBoard",
        named=lambda name: "tfevents" in name,
        detect=lambda h: "tfevents" in h.name,
        detected="a file whose name holds `tfevents`",
        sample_file="events.out.tfevents.1796000000.host.1.0",
        sample="",
        writes="`--use-tensorboard`: event files, possibly in several folders, by torch's `SummaryWriter` "
        "(`_TensorboardAdapter` in `miles/utils/tracking_utils/tensorboard_utils.py`)",
        reader="tensorboard:read",
        reading="every scalar, streamed record by record (nothing is sampled), both checksums of each record "
        "checked: a record that fails them is an error and the rest of its file is skipped; needs the extra: "
        "`pip install 'metrics-manual[tensorboard]'`",
        grows="appended",
        tailer="tensorboard:EventFile",
        time="`wall_time`",
        float32=True,  # a scalar's simple_value is a float32
    ),
    RunForm(
        name="wandb-csv",
        words="W&B CSV",
        named=lambda name: name.endswith(".csv"),
        detect=lambda h: _wandb_header(h.cells),
        detected="a CSV whose header has a key with `/` and `_step` or a `.../step` column",
        sample_file="history.csv",
        sample="_step,_runtime,_timestamp,rollout/raw_reward,rollout/step",
        writes="a run's history exported as CSV (W&B's `Run.history()`, written by pandas' `to_csv`)",
        reader="wandb_csv:read",
        reading="steps from the step-key columns (`train/step`, `rollout/step` ...), never `_step`, which counts "
        "`log()` calls; an empty cell is a key that call did not log, and pandas writes NaN as an empty cell too: "
        "a metric empty at a step it covers is missing there, an error",
        grows="exported",
        tailer=None,
        time="`_timestamp`",
    ),
    RunForm(  # last: its detection looks at every line of the head, and must leave the others' files to them
        name="console",
        words="console log",
        named=lambda name: name.endswith((".log", ".out", ".err", ".txt")),
        detect=lambda h: cast("re.Pattern[bytes]", imported(RUNS, "console:MILES_LINE")).search(h.raw) is not None,
        detected=f"a file whose first {_HEAD // 1024} KB hold a line in Miles' logging format "
        "(`[2026-11-30 01:00:00.123 rollout_manager] metrics.py:89 - ...`), behind Ray's prefix or not",
        sample_file="run.log",
        sample="(RolloutManager pid=4100) [2026-11-30 01:00:00.123 rollout_manager] metrics.py:89 - perf 3: "
        "{'rollout/raw_reward': 0.5, 'rollout/response_len/mean': np.float64(412.5), 'perf/rollout_time': 20.3}",
        writes="every run, on its console: what `logger.info` prints in the format of `configure_logger_raw` "
        "(`miles/utils/logging_utils.py`), the driver's output under Ray (`tee run.log`, a scheduler's log) or a "
        "worker's `.out` file",
        reader="console:read",
        reading="its metric lines among any others: `step N` (train/step N), `perf N`, `rollout N`, `multi_turn N` "
        "(rollout/step N) and `eval N` (eval/step N), each followed by a dict's Python repr that is read, never "
        "evaluated; N is the rollout id ([the console log](#the-console-log))",
        grows="appended",
        tailer="console:ConsoleLog",
        time="the line's time (local)",
    ),
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
