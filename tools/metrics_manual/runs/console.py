"""Miles' console log: the metric lines every run prints, found among whatever else its processes print.

Every Miles process logs through `configure_logger_raw` (miles/utils/logging_utils.py:33-38, at
radixark/miles 31f1ca961a94cb860cec3b2dea34ec332bfa8f76):
`[%(asctime)s.%(msecs)03d {name}] %(filename)s:%(lineno)d - %(message)s`, in local time to the
millisecond. Under Ray the driver's console holds every actor's lines behind Ray's prefix
(`(RolloutManager pid=N) `, `, ip=...` for another node, in colour), interleaved with every other
line; a metric line is found wherever its format begins in a line, behind Ray's prefix or another
(a scheduler's label, kubectl's timestamps). The metric lines are a dict printed by its Python
repr, before the trackers get it:

| message | printed by (31f1ca96) | N | the step key the trackers log the dict under |
|---|---|---|---|
| `step N: {...}` (`critic-step N: ...`) | `log_train_step`, miles/backends/training_utils/log_utils.py:542 | train step | train/step, also in the dict |
| `perf N: {...}` | `log_rollout_data`, miles/ray/rollout/metrics.py:89 (the rollout side) | rollout id | rollout/step |
| `perf N: {...}` | `log_perf_data_raw`, miles/utils/train_metric_utils.py:56 (the trainer) | rollout id | rollout/step |
| `rollout N: {...}`, `multi_turn N: {...}` | `gather_log_data`, log_utils.py:123 | rollout id | rollout/step |
| `eval N: {...}` | `log_eval_rollout_data`, miles/ray/rollout/metrics.py:53 | rollout id | eval/step |

The trackers' rollout/step and eval/step are `compute_rollout_step(args, N)`
(miles/utils/metric_utils.py:117), added to the dict after the line is printed: N itself, unless
the run has --wandb-always-use-train-step, which makes them N * rollout_batch_size *
n_samples_per_prompt // global_batch_size, numbers no line prints. This reader places a line's
values at N: the trackers' steps of a run without that flag, the rollout ids of one with it.

A line is a record of its step key (`dashboard.put_record`, as the dashboard places a `log()`
call's record): each value placed by its key's step key, the line's N for the line's own step key.
The dict is read by runs/pyrepr.py, which never evaluates it; a value that is no number (a string,
None, a bool, a list, a call such as `tensor(0.5)`) is an error of its metric, said with its text.
A metric line that is no whole dict repr is a corrupt line (an error; the line is skipped). Lines
are found by bytes.find of `: {` over each chunk (runs/lines.py `lines_holding`), so the other
lines, most of a console, cost a memchr. Python's logging ends every line with a newline: while a
run is followed, a line no newline ends waits; in a complete file, such a last line that is or may
begin a metric line was cut (a warning, the last step unfinished). The file's span (the rules of a
merge) is its first and last metric lines' times, read as UTC: the files of one run agree.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.dashboard import put_record
from metrics_manual.runs.jsonl import invalid_key, record_surrogate
from metrics_manual.runs.lines import LineCursor, too_long_message
from metrics_manual.runs.pyrepr import Expression, ReprError, read_dict
from metrics_manual.text import clip, inert

_PREFIX = rb"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})(?: [^\]\n]*)?\] [^\s\[\]]+:\d+ - "
# A metric line's head: the logging prefix, the message's word and N, and the dict's `{`.
_HEAD = re.compile(_PREFIX + rb"((?:\w+-)?step|perf|rollout|multi_turn|eval) (\d+): \{")
_ANSI = rb"(?:\x1b\[[\d;]*m)*"
# A line in Miles' logging format, at the start of a line, behind Ray's prefix if any (detection).
MILES_LINE = re.compile(rb"(?m)^" + _ANSI + rb"(?:\([^()\n]*\)" + _ANSI + rb" )?" + _PREFIX)
_LOGGED = re.compile(_PREFIX)
_MAY_BE_HEAD = re.compile(rb"[\w-]*(?: \d*(?::(?: )?)?)?")  # a message cut inside a metric line's head
_AFTER = re.compile(r"\s*(?:\x1b\[[\d;]*m)*\s*(?:\[repeated (\d+)x across cluster\].*)?")  # Ray's folding
NEEDLE, DIGITS = b": {", b"0123456789"  # in every metric line: the head's end, `N: {`
STEP_KEY = {  # a message's word -> the step key the trackers log its dict under (the table above)
    "step": "train/step",
    "perf": "rollout/step",
    "rollout": "rollout/step",
    "multi_turn": "rollout/step",
    "eval": "eval/step",
}
WHAT = "console metric line"


def read(path: Path, rel: str, out: Collector) -> None:
    ConsoleLog(path, rel).read(out)


class ConsoleLog:
    """Reading one console log, and where it stands: its lines read, the keys already said to be
    logged without their step key, the first and last metric lines' times (the file's span). The
    file of a live run is read on from there as it grows (judge --follow)."""

    def __init__(self, path: Path, rel: str) -> None:
        self.rel = rel
        self.cursor = LineCursor(path)
        self.missing_step: set[str] = set()
        self.first: str | None = None
        self.last: str | None = None

    def read(self, out: Collector, ended: bool = True) -> None:
        """Put the metric lines from where reading stands to the end of the file as it is now. `ended`:
        the file is complete, so its last line is read too (a cut one is a warning); else a line no
        newline ends yet waits."""
        for n, line in self.cursor.lines_holding(NEEDLE, DIGITS, out.progress):
            if line is None:
                out.problem(self.rel, n, too_long_message(), code=codes.LINE_TOO_LONG)
            else:
                self._line(n, line, out, True)
        if ended and (last := self.cursor.last()) is not None:
            n, line = last
            if line is None:
                out.problem(self.rel, n, too_long_message(), code=codes.LINE_TOO_LONG)
            else:
                self._line(n, line, out, False)
        out.span(self.first, self.last)

    def _line(self, n: int, line: bytes, out: Collector, whole: bool) -> None:
        """Read line `n` if it is a metric line; `whole`: a newline ends it."""
        head = _HEAD.search(line)
        if head is None:
            if not whole and _may_be_cut(line):
                out.cut(self.rel, n)
            return
        brace = head.end() - 1
        try:
            text = line[brace:].decode("utf-8")
        except UnicodeDecodeError as exc:
            at = brace + exc.start
            why = f"corrupt line: not UTF-8 (byte 0x{line[at]:02x}); it was skipped"
            out.problem(self.rel, n, why, code=codes.CORRUPT_LINE, col=_col(line, at))
            return
        try:
            metrics, end = read_dict(text)
        except ReprError as err:
            if err.cut and not whole:
                out.cut(self.rel, n)
            else:
                why = f"corrupt line: not a dict's repr: {err.message}; it was skipped"
                out.problem(self.rel, n, why, code=codes.CORRUPT_LINE, col=_col(line, brace) + err.at)
            return
        after = _AFTER.fullmatch(text, end)
        if after is None and not whole:  # cut inside what follows the dict (Ray's folding)
            out.cut(self.rel, n)
            return
        if after is None:
            why = "corrupt line: not a dict's repr: text after the dict; it was skipped"
            out.problem(self.rel, n, why, code=codes.CORRUPT_LINE, col=_col(line, brace) + end)
            return
        # A lone surrogate comes only from an escape (UTF-8 holds none): a line without a backslash has none.
        if "\\" in text and (bad := record_surrogate({"metrics": metrics})):
            out.problem(self.rel, n, invalid_key(bad), code=codes.INVALID_KEY)
            return
        word, raw = head.group(2).decode(), head.group(3)
        step: Any = int(raw) if len(raw) <= 30 else raw.decode()
        record = {"step_key": STEP_KEY[word.rpartition("-")[2]], "step": step, "metrics": metrics}
        if put_record(record, n, self.rel, out, self.missing_step, WHAT, _shown):
            self.last = head.group(1).decode()
            self.first = self.first or self.last
        if after.group(1):
            why = (
                f"Ray folded {after.group(1)} alike lines of other processes into this metric line "
                "(RAY_DEDUP_LOGS); their values are not in the log"
            )
            out.problem(self.rel, n, why, code=codes.FOLDED_LINES, severity="warning")


def _col(line: bytes, at: int) -> int:
    """The column (1-based, in characters) of byte `at` of a line."""
    return len(line[:at].decode("utf-8", "replace")) + 1


def _shown(value: Any) -> str | None:
    """A value that is no number, in the words of Python's repr (None: as runs/values.py shows it)."""
    if isinstance(value, Expression):
        return inert(clip(value.text, 60))
    if value is None or isinstance(value, bool):
        return repr(value)
    return None


def _may_be_cut(line: bytes) -> bool:
    """Whether a last line no newline ends may be a metric line cut short: it begins no message that
    rules one out (a Miles log line cut inside a metric line's head, or cut before its message)."""
    line = line.rpartition(b"\r")[2]  # a progress bar's \r before a log line
    starts = [m.end() for m in _LOGGED.finditer(line)]  # the messages' starts
    if not starts:
        return bool(line.strip())
    return _MAY_BE_HEAD.fullmatch(line, starts[-1]) is not None
