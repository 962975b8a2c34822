"""Where the readers put what they read: one series per metric and file, merged at the end.

Every reader streams its file and calls `Collector.put` once per value; nothing keeps
a file's lines, so memory grows with the number of (metric, step) values, not with
the size of the logs.

The rules of a merge (docs/judging.md states them in these words):

- within one file, a later record of a step supersedes an earlier one, whatever its `attempt`:
  one process and its restarts write a file in time order (Miles' EventLogger and the
  dashboard's MetricStore append to it, a W&B history lists its rows in order), and a process
  resumed from a checkpoint logs its steps again and starts its attempts again at 0. A step
  logged again is named in the result as re-logged (a resumed run), unless its later record
  has a higher `attempt` than the one it replaces (the event log's fault-tolerance retry);
- across files, a file whose first record was written after another file's last record is a
  later life of the run (a resumed process in a file of its own, as TensorBoard's new file of
  each process): at a step both log, its record supersedes, whatever the attempts, and the
  step is named re-logged. A record's time is the field its form names (`RunForm.time`, in
  the table of forms); a form without one has none;
- between files whose times overlap (processes writing at once) or are not known, a higher
  `attempt` wins (a retry logged by another process); the same metric and step with different
  values at the same attempt is a conflict: an error of that metric naming both files. Values
  that agree to float32 precision (TensorBoard stores float32) are the same value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.runs.series import Series
from metrics_manual.runs.values import shown

Progress = Callable[[int], None]

# Caps (docs/judging.md, "Limits"): what one hostile file can make the reader hold.
KEYS_KEPT = 10_000  # distinct keys the run logged but judge does not read, remembered by name
KEYS_COUNTED = 1_000_000  # distinct keys past KEYS_KEPT counted (by their hash, 8 bytes each); past it, not
_SHAPES_KEPT = 4096  # distinct key sets of records whose kept keys are remembered (Collector.kept)


def same_value(a: float, b: float) -> bool:
    """Equal, both NaN, or equal to float32 precision (TensorBoard keeps float32)."""
    if a == b or (a != a and b != b):
        return True
    return math.isfinite(a) and math.isfinite(b) and math.isclose(a, b, rel_tol=1.2e-7)


@dataclass
class Part:
    """One file's values of one metric."""

    path: str
    series: Series
    attempts: dict[int, int]  # step -> attempt, only for steps with an attempt above 0
    span: tuple[float, float] | None  # the times of the file's first and last records, when it has them

    def later_than(self, other: Part) -> bool:
        """Whether this file is a later life of the run than `other`: its first record was written
        after the other's last."""
        return self.span is not None and other.span is not None and self.span[0] > other.span[1]


@dataclass(slots=True)
class _Plan:
    """What `Collector.kept` found in one shape of record (its keys, in order)."""

    kept: dict[str, str | None]  # the keys read, in order, each with its step key
    unread: tuple[str, ...]  # the keys to note in `unread`; () once noted


@dataclass
class Merged:
    """What the collector hands to the Run: merged series and what the merge found."""

    series: dict[str, Series] = field(default_factory=dict)
    invalid: dict[str, dict[int, str]] = field(default_factory=dict)
    conflicts: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    relogged: dict[tuple[str, str], list[int]] = field(default_factory=dict)  # (path, step key) -> steps


class Collector:
    """What a reader puts, kept apart per file and merged at the end.

    A reader (runs/ci_history.py is the shortest) is given the file, the name a finding shows it
    by, and a Collector. For each record it asks `step_key(key)` (or `kept(metrics)` for a whole
    record) which values are read and which step key places them, then calls `put` for a number,
    `put_invalid` for a value that is not one, `put_step` for a step key's own value, and `problem`
    (or `cut`, `without_step`) for what it could not use. It reports the bytes it read to `progress`.
    `begin`, `end` and `finish` are called by `read_run`, not by readers.
    """

    def __init__(
        self,
        step_keys: Mapping[str, str],
        progress: Progress | None = None,
        keys: Collection[str] | None = None,
        renames: Mapping[str, str] | None = None,
    ) -> None:
        """`step_keys`: namespace -> its step key (the catalog's); `progress`: given each count of bytes
        read; `keys`: only these keys' values are kept (None: all), the others are only named in
        `unread`, so a run of many keys costs memory only for the keys that are judged; `renames`:
        former key -> current key (the catalog's renamed_from): a former key is kept apart under its own
        name, placed by its current key's step key, and folded into the current key by runs/renames.py."""
        self.step_keys = dict(step_keys)
        self.renames = dict(renames or {})
        self.step_key_set = set(self.step_keys.values())
        self.keys = None if keys is None else set(keys) | self.step_key_set
        if self.keys is not None:
            self.keys |= {old for old, new in self.renames.items() if new in self.keys}
        self.unread: set[str] = set()
        self.unread_past: set[int] = set()  # hashes of the unread keys past KEYS_KEPT, up to KEYS_COUNTED
        self.problems: list[Finding] = []
        self.progress = progress
        self.placed: dict[str, str | None] = {}  # key -> its step key, or None when not kept
        self.other_step: dict[str, str] = {}  # judged key -> another step key it was logged with
        # A key of a namespace with no step key -> the one step key its records carried (derive --add-keys
        # names it as the namespace's step key); a record of several step keys carries none.
        self.carried: dict[str, str] = {}
        self.cut_files: list[str] = []
        self._parts: dict[str, list[Part]] = {}
        self._invalid: dict[str, dict[int, str]] = {}
        self._relogged: dict[tuple[str, str], set[int]] = {}
        self._invalid_seen: set[tuple[str, str]] = set()
        self._shapes: dict[tuple[str, ...], _Plan] = {}  # a record's keys -> those to read
        self._last: Mapping[str, Any] | None = None  # the last record `kept` was asked of, and its plan
        self._last_plan = _Plan({}, ())
        self.begin("")

    # --- one file at a time ---------------------------------------------------------------

    def begin(self, path: str) -> None:
        """Start a file: its values are kept apart until `end`, so two files can be compared."""
        self.path = path
        self.series: dict[str, Series] = {}
        self.attempts: dict[tuple[str, int], int] = {}  # (key, step) -> the attempt of its value, when above 0
        self.times: tuple[float, float] | None = None

    def end(self) -> None:
        """End the file `begin` started: its series join the parts that `finish` merges."""
        self._add_parts(self)
        self.begin("")

    def _add_parts(self, of: Collector) -> None:
        """The series of the file `of` has begun join the parts that `finish` merges."""
        by_key: dict[str, dict[int, int]] = {}
        for (k, s), a in of.attempts.items():
            by_key.setdefault(k, {})[s] = a
        for key, series in of.series.items():
            if series:
                self._parts.setdefault(key, []).append(Part(of.path, series, by_key.get(key, {}), of.times))

    def absorb(self, other: Collector) -> None:
        """Take what `other` read of the one file it has begun, as if that file were read here, and
        leave `other` as it is, to read on: judge --follow keeps a collector per file, resumed as the
        file grows, and merges them into a new one each time (files in the order read_run reads them)."""
        self._add_parts(other)
        self.problems += other.problems
        for key, steps in other._invalid.items():
            self._invalid.setdefault(key, {}).update(steps)
        for where, relogged in other._relogged.items():  # keyed by the file; copied: `finish` adds to them
            self._relogged[where] = set(relogged)
        self.cut_files += other.cut_files
        for key, sk in other.other_step.items():
            self.other_step.setdefault(key, sk)
        for key, sk in other.carried.items():
            self.carried.setdefault(key, sk)
        self.note_unread(other.unread)
        for h in other.unread_past:
            if len(self.unread_past) >= KEYS_COUNTED:
                break
            self.unread_past.add(h)

    def span(self, first: Any, last: Any) -> None:
        """The times of the file's first and last records as the file writes them (seconds, or an ISO
        8601 text): what orders the files of a run's lives (the rules of a merge). A time that
        cannot be read leaves the file without one."""
        a, b = seconds(first), seconds(last)
        self.times = (a, b) if a is not None and b is not None and a <= b else None

    def step_key(self, key: str) -> str | None:
        """The key whose value is `key`'s step; None for a step key itself, an unknown namespace or a
        key whose values are not kept (then it is remembered in `unread`)."""
        try:
            return self.placed[key]
        except KeyError:
            pass
        # One lookup per new key (this is cached in `placed`), never per value.
        sk = self._place(key)
        if sk is None and key not in self.step_key_set:
            self.note_unread((key,))
        if len(self.placed) < KEYS_KEPT * 2:  # a cache, capped like what it caches
            self.placed[key] = sk
        return sk

    def _place(self, key: str) -> str | None:
        """`step_key`'s answer, worked out (not cached, `key` not noted)."""
        named = self.renames.get(key, key)
        sk = None if key in self.step_key_set else self.step_keys.get(named.split("/", 1)[0])
        return None if sk is not None and self.keys is not None and key not in self.keys else sk

    def kept(self, metrics: Mapping[str, Any], note: bool = True) -> Mapping[str, str | None]:
        """The keys of a record whose values are read, in the record's order, each with its step key
        (as `step_key` gives it); the others are noted in `unread`, unless `note` is False (a look at
        a record that may yet be skipped). A log() call writes the same keys record after record: the
        keys of one shape are looked at once, and noted once."""
        plan = self._last_plan
        if metrics is not self._last:  # else asked again of one record (a reader's exactness check, then its put)
            shape = tuple(metrics)
            found = self._shapes.get(shape)
            if found is None:
                found = self._plan(shape)
                if len(self._shapes) < _SHAPES_KEPT:  # a cache, capped: hostile records of ever new keys
                    self._shapes[shape] = found
            self._last = metrics
            plan = self._last_plan = found
        if note and plan.unread:
            self.note_unread(plan.unread)
            plan.unread = ()
        return plan.kept

    def _plan(self, shape: tuple[str, ...]) -> _Plan:
        keep, kept, unread = self.keys, {}, []
        for key in shape:
            if keep is None or key in keep:
                sk = kept[key] = self._place(key)
                if sk is None and key not in self.step_key_set:
                    unread.append(key)  # a kept key of no known namespace
            else:
                unread.append(key)
        self._carry(shape, unread)
        return _Plan(kept, tuple(unread))

    def _carry(self, shape: tuple[str, ...], unread: list[str]) -> None:
        """Note the step key a record of `shape` carries for its keys of a namespace with no step key."""
        carried = [k for k in shape if k in self.step_key_set]
        if len(carried) != 1:
            return
        for key in unread:
            if key.split("/", 1)[0] not in self.step_keys and len(self.carried) < KEYS_KEPT:
                self.carried.setdefault(key, carried[0])

    def note_unread(self, keys: Collection[str]) -> None:
        """Remember keys that are not read: by name up to KEYS_KEPT, then counted up to KEYS_COUNTED."""
        unread = self.unread
        if len(unread) + len(keys) <= KEYS_KEPT:
            unread.update(keys)
            return
        for k in keys:
            if k in unread:
                continue
            if len(unread) < KEYS_KEPT:
                unread.add(k)
            elif len(self.unread_past) < KEYS_COUNTED:
                self.unread_past.add(hash(k))

    def put(self, key: str, step: int, value: float, attempt: int = 0) -> None:
        """Record one value. A step logged again in the same file replaces the earlier value, whatever
        the attempts, and is noted re-logged, unless this is a higher attempt (a retry)."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        if attempt or self.attempts:
            old = self.attempts.pop((key, step), 0)
            if attempt:
                self.attempts[(key, step)] = attempt
            if attempt > old and step in series:
                series[step] = value  # a retry: a higher attempt of the step, no re-log
                return
        if series.replace(step, value):
            self._relogged.setdefault((self.path, self._place(key) or ""), set()).add(step)

    def put_invalid(
        self, key: str, step: int, raw: Any, attempt: int = 0, *, line: int = 0, text: str | None = None
    ) -> str | None:
        """A value that is not a number (a string, null, a bool, a number out of float range): kept
        as NaN so that no rule can pass it, with what was logged (or `text`) for the result.

        The first such value of a key in a file is also a warning at its `line` (returned as the
        message when `line` is 0, for a reader that counts lines later): the verdict names the
        step, the warning the place."""
        self.put(key, step, math.nan, attempt)
        if len(text := text or shown(raw)) > 60:
            text = text[:60] + "..."
        self._invalid.setdefault(key, {})[step] = text
        if (self.path, key) in self._invalid_seen:
            return None
        self._invalid_seen.add((self.path, key))
        message = f"{key}: not a number at step {step}: {text} (an error of its expectations)"
        if line:
            self.problem(self.path, line, message, code=codes.NOT_A_NUMBER, severity="warning")
            return None
        return message

    def put_step(self, key: str, step: int) -> None:
        """A step key's own value: the step it names was reached."""
        series = self.series.get(key)
        if series is None:
            series = self.series[key] = Series()
        series.replace(step, float(step))

    def cut(self, path: str, line: int, what: str = "line", where: str = "") -> None:
        """The last line (a TensorBoard file's: record, cut `where`) of a file is cut (the run may
        still be writing it): a warning, and the run's last step counts as unfinished."""
        self.cut_files.append(path)
        self.problem(
            path,
            line,
            f"the last {what} is cut{f' {where}' if where else ''} (the run may still be writing this file); "
            "it was skipped and the last step counts as unfinished",
            code=codes.CUT_LAST_LINE,
            severity="warning",
        )

    def without_step(self, key: str, without: str, other: str | None) -> str:
        """A judged key logged without its step (`without`: what it lacks): the other step key it came
        with is kept for the verdict; the words of the warning (every reader says it the same)."""
        if other:
            self.other_step.setdefault(key, other)
        return (
            f"{key} is logged without {without}" + (f" (with {other})" if other else "") + "; such values were skipped"
        )

    def problem(self, path: str, line: int, message: str, *, code: Code, severity: str = "error", col: int = 1) -> None:
        """A finding at `path`:`line` (an error unless `severity` says otherwise)."""
        self.problems.append(Finding(path, line, col, message, severity, code=code))

    # --- the merge --------------------------------------------------------------------------

    def finish(self) -> Merged:
        """Every file's series merged by the rules of this module."""
        out = Merged(invalid=self._invalid)
        for key, parts in self._parts.items():
            if len(parts) == 1:
                out.series[key] = parts[0].series
            elif key in self.step_key_set:
                out.series[key] = Series(sorted({(s, float(s)) for p in parts for s in p.series}))
            else:
                out.series[key], conflicts, relogged = _merge(parts)
                if conflicts:
                    out.conflicts[key] = conflicts
                sk = self.placed.get(key) or self.step_keys.get(self.renames.get(key, key).split("/", 1)[0], "")
                for path, steps in relogged.items():
                    self._relogged.setdefault((path, sk), set()).update(steps)
        out.relogged = {k: sorted(v) for k, v in self._relogged.items()}
        return out


def _merge(parts: list[Part]) -> tuple[Series, list[tuple[int, str, str]], dict[str, set[int]]]:
    """One metric's values from several files: a later life's record supersedes (and its step is
    re-logged in that file); else the higher attempt wins; a different value at the same attempt is a
    conflict (step, the earlier file, the later file)."""
    kept: dict[int, tuple[float, int, Part]] = {}
    conflicts: list[tuple[int, str, str]] = []
    relogged: dict[str, set[int]] = {}
    for p in parts:
        attempts = p.attempts
        for step, value in p.series.items():
            attempt = attempts.get(step, 0) if attempts else 0
            old = kept.get(step)
            if old is None:
                kept[step] = (value, attempt, p)
            elif p.later_than(old[2]):
                kept[step] = (value, attempt, p)
                relogged.setdefault(p.path, set()).add(step)
            elif old[2].later_than(p):
                relogged.setdefault(old[2].path, set()).add(step)
            elif attempt > old[1]:
                kept[step] = (value, attempt, p)
            elif attempt == old[1] and not same_value(value, old[0]):
                conflicts.append((step, old[2].path, p.path))
    return Series(sorted((s, v[0]) for s, v in kept.items())), sorted(conflicts), relogged


def seconds(raw: Any) -> float | None:
    """A record's time in seconds: a number as it is, an ISO 8601 text (the event log's `timestamp`,
    without a zone: UTC) or a number in text (a CSV cell); None for anything else."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return None
    try:
        t = float(raw)
    except OverflowError:
        return None
    except ValueError:  # a text that is no number
        try:
            when = datetime.fromisoformat(str(raw))
            t = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
        except (ValueError, OverflowError, OSError):
            return None
    return t if math.isfinite(t) else None
