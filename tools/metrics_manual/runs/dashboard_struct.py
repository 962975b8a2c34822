"""The dashboard log's fastest path: records decoded into Structs of the keys seen so far.

msgspec decodes a spelled line (runs/dashboard.py `_spell`) into a Struct chosen by its `step_key`
(a tagged union: one Struct for each step key a log() call named), whose fields are the metric keys
the Collector has already noted (`Collector.shapes`: each was read through the ordinary path first)
with that step key, unknown fields forbidden. A record that decodes therefore holds only noted keys:
it needs no key bookkeeping, and the judged keys' values are read a column at a time
(`put_columns`), without building a dict or naming the other keys. A record with a key or step key
not yet seen, or anything msgspec rejects, fails to decode and the caller reads it by the ordinary
path, which notes its keys; the Structs are then rebuilt with them, at most REBUILDS times a file
and with at most MAX_FIELDS keys (past either, such records stay on the ordinary path).

Why a record that decodes is the record json.loads reads: only lines of a spelled chunk are decoded
(no backslash, so every key is written as json.loads reads it, and each bare token is a string of
tildes); every value is decoded, never skipped (msgspec checks neither the UTF-8 nor the digits of
a value it skips, so the top level has fixed fields too); where msgspec reads a value at all it
reads what json.loads reads (integers of any size, the last of duplicate keys; a second `step_key`
must repeat the first), else it fails: a number beyond float range, a lone surrogate, a control
character. A judged key's value is a float in (-2^63, 2^63) or a string, else the line fails
(null, a bool, a list: `_record` gives their words). tests/runs/test_fast_json.py reads files both
ways.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, eq, is_not, lt
from typing import Annotated, Any, Union

from metrics_manual.runs import collect
from metrics_manual.runs.collect import BIG, MAX_STEP, Collector

REBUILDS = 32  # Struct rebuilds a file: each adds keys not seen before (a log() call of new keys)
MAX_FIELDS = 4096  # keys the Structs hold in all (a hostile log of ever new keys stays on the ordinary path)
MAX_OWNERS = 64  # step keys named by log() calls, a Struct each
_PENDING = 8  # lines that failed to decode, kept to learn their keys from
_NEVER = "~"  # the tag of a Struct no record is put from: a spelled NaN as step_key (a lone tagged
# Struct would take a record with no step_key as its own; two never do)


@dataclass
class _Kind:
    """The records of one step key: the keys whose values are read, with their getter and step key
    (None for a step key itself), and the attribute of each key."""

    own: str
    attrs: dict[str, str]
    kept: Sequence[tuple[str, Callable[[Any], Any], str | None]]


class KnownKeys:
    """The Structs of the keys noted so far, by step key, and their decoder."""

    def __init__(self, out: Collector, spelled: dict[Any, float]) -> None:
        self.out, self.spelled = out, spelled
        self.spelled_get = spelled.get  # a spelled token as what json.loads reads
        self.msgspec = collect.struct_parser()
        self.errors = (self.msgspec.DecodeError, RecursionError, ValueError)
        self.owners: dict[str, dict[str, None]] = {}  # step key -> its records' keys, in order
        self.size = 0  # keys in all the Structs
        self.rebuilds = 0
        self.pending: list[bytes] = []  # lines that failed to decode since the last rebuild
        self.kinds: dict[type, _Kind] = {}
        self.shared: set[str] = set()  # read keys logged with more than one step key
        self.decode: Callable[[bytes], Any] | None = None

    def record(self, line: bytes) -> Any:
        """The decoded record of a spelled line, or None when the ordinary path must read it."""
        if self.decode is not None:
            try:
                return self.decode(line)
            except self.errors:
                pass
        if len(self.pending) < _PENDING and self.rebuilds < REBUILDS:
            self.pending.append(line)
        return None

    def learn(self) -> None:
        """After the lines that failed were read by the ordinary path: rebuild the Structs with the
        keys they hold that are now noted, if any."""
        if self.pending and self._learned():
            self.rebuilds += 1
            self._build()
        self.pending.clear()

    def _learned(self) -> bool:
        noted = {k for shape in self.out.shapes() for k in shape}
        grew = False
        for line in self.pending:
            try:
                record = self.msgspec.json.decode(line)
            except self.errors:
                continue
            own = record.get("step_key") if type(record) is dict else None
            metrics = record.get("metrics") if type(record) is dict else None
            if type(own) is not str or own in self.spelled or type(metrics) is not dict:
                continue
            if own not in self.owners:
                if len(self.owners) >= MAX_OWNERS:
                    continue
                self.owners[own], grew = {}, True
            keys = self.owners[own]
            for k in metrics:
                if k not in keys and k in noted and self.size < MAX_FIELDS:
                    keys[k] = None
                    self.size += 1
                    grew = True
        return grew

    def _build(self) -> None:
        ms, out = self.msgspec, self.out
        judged = Union[Annotated[float, ms.Meta(gt=-BIG, lt=BIG)], str]  # noqa: UP007 - a runtime type
        keep, step_keys = out.keys, out.step_key_set
        self.kinds, types = {}, []
        seen: dict[str, set[str]] = {}
        for i, (own, keys) in enumerate([*self.owners.items(), (_NEVER, {})]):
            attrs = {k: f"k{j}" for j, k in enumerate(keys)}
            fields, kept = [], []
            for k, a in attrs.items():
                sk = out.step_key(k) if keep is None or k in keep else None
                read = sk is not None or (k in step_keys and (keep is None or k in keep))
                fields.append((a, judged if sk is not None else Any, ms.UNSET))
                if read:
                    kept.append((k, attrgetter(a), sk))
                    if sk is not None:
                        seen.setdefault(k, set()).add(own)
            metrics = ms.defstruct(
                f"Metrics{i}",
                fields,
                rename={a: k for k, a in attrs.items()},
                forbid_unknown_fields=True,
                gc=False,  # JSON values hold no cycles: records need not be tracked
            )
            record = ms.defstruct(
                f"Record{i}",
                [("metrics", metrics), ("step", Any, None), ("ts", Any, None)],
                tag_field="step_key",
                tag=own,
                forbid_unknown_fields=True,
                gc=False,
            )
            types.append(record)
            if own != _NEVER:
                self.kinds[record] = _Kind(own, attrs, kept)
        self.shared = {k for k, owners in seen.items() if len(owners) > 1}
        self.decode = ms.json.Decoder(Union[tuple(types)]).decode  # noqa: UP007 - built at run time


_STEP, _METRICS = attrgetter("step"), attrgetter("metrics")


def put_columns(out: Collector, known: KnownKeys, records: Sequence[Any]) -> bool:
    """Put the records' values (in line order) a column per key, as runs/dashboard.py `_record` puts
    them one by one; False, with nothing put, when a record needs `_record`'s words (a value that
    is not a plain step or number, a key logged without its step key), or when a read key of these
    records was logged with two step keys (then one column would not keep the line order)."""
    types = list(map(type, records))
    kinds = set(types)
    if len(kinds) == 1:
        parts = [(known.kinds.get(types[0]), records)]
    else:
        if known.shared:
            return False
        parts = [(known.kinds.get(t), list(compress(records, map(eq, types, repeat(t))))) for t in kinds]
    step_puts: list[tuple[str, Sequence[int], bool]] = []
    puts: list[tuple[str, array[int], bool, list[float]]] = []
    for kind, part in parts:
        if kind is None or not _part(out, known, kind, part, step_puts, puts):
            return False
    for key, steps, rising in step_puts:
        out.put_steps(key, list(steps), rising)
    for key, at, rising, values in puts:
        out.put_many(key, at, array("d", values), rising)
    return True


def _part(
    out: Collector,
    known: KnownKeys,
    kind: _Kind,
    records: Sequence[Any],
    step_puts: list[tuple[str, Sequence[int], bool]],
    puts: list[tuple[str, array[int], bool, list[float]]],
) -> bool:
    """The puts of the records of one step key (`kind`), or False."""
    unset = known.msgspec.UNSET
    unset_type, own = type(unset), kind.own
    metrics, raw = list(map(_METRICS, records)), list(map(_STEP, records))
    if own in out.step_key_set:  # a record's own step: the step its step key reached
        col = [r for r in raw if r is not None] if None in raw else raw
        if col:
            if (steps := _steps(col)) is None:
                return False
            step_puts.append((own, *steps))
    columns: dict[str, list[Any]] = {}  # a step key's column
    ready: dict[int, tuple[list[Any], array[int], bool]] = {}  # id of a step column -> it as an array
    for key, get, sk in kind.kept:
        values = list(map(get, metrics))
        kinds = set(map(type, values))
        present = None
        if unset_type in kinds:
            if len(kinds) == 1:
                continue
            present = list(map(is_not, values, repeat(unset)))
            values = list(compress(values, present))
        if sk is None:  # a step key's own column
            if (at := _steps(values)) is None:
                return False
            step_puts.append((key, *at))
            continue
        if sk in kind.attrs:
            if sk not in columns:
                columns[sk] = list(map(attrgetter(kind.attrs[sk]), metrics))
            col = columns[sk] if present is None else list(compress(columns[sk], present))
            if unset in col:  # records without it: each one's own step, when its step key is `sk`
                if col.count(unset) != len(col) or own != sk:
                    return False
                col = raw if present is None else list(compress(raw, present))
        elif own == sk:
            col = raw if present is None else list(compress(raw, present))
        else:
            return False  # logged without its step key: `_record` names it
        if (made := ready.get(id(col))) is None:
            if (steps := _steps(col)) is None:
                return False
            made = ready[id(col)] = (col, array("q", steps[0]), steps[1])
        if str in kinds:  # a spelled token is NaN or an infinity; any other string is no number
            values = list(map(known.spelled_get, values, values))
            if str in set(map(type, values)):
                return False
        puts.append((key, made[1], made[2], values))
    return True


def _steps(col: list[Any]) -> tuple[list[int], bool] | None:
    """A column of steps and whether they rise; None unless every one is an int from 0 to MAX_STEP."""
    if set(map(type, col)) != {int} or min(col) < 0 or max(col) > MAX_STEP:
        return None
    return col, all(map(lt, col, col[1:]))
