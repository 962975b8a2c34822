"""The dashboard log's records that msgspec decoded into Structs of the keys seen so far
(runs/known_keys.py, a Struct per step key), put a column per key.

Only lines of a spelled chunk (runs/dashboard.py `_spell`) are decoded: no backslash, each bare
token a string of tildes, which a judged key's value may be besides a float.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, eq, is_not, lt
from typing import Any

from metrics_manual.runs.collect import MAX_STEP, Collector
from metrics_manual.runs.known_keys import Kind, KnownKeys

TOP = ("step", "ts")  # the top-level keys of a record besides metrics and step_key (runs/dashboard.py)


def known_keys(out: Collector, spelled: dict[Any, float]) -> KnownKeys:
    """The Structs of the dashboard's records: one per step key a log() call named."""

    def owner(record: dict[str, Any]) -> str | None:
        own = record.get("step_key")
        return own if type(own) is str else None

    return KnownKeys(out, owner, tag="step_key", top=TOP, also=str, spelled=spelled)


_METRICS = attrgetter("metrics")


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
    kind: Kind,
    records: Sequence[Any],
    step_puts: list[tuple[str, Sequence[int], bool]],
    puts: list[tuple[str, array[int], bool, list[float]]],
) -> bool:
    """The puts of the records of one step key (`kind`), or False."""
    unset = known.msgspec.UNSET
    unset_type, own = type(unset), kind.own
    metrics, raw = list(map(_METRICS, records)), list(map(known.getters["step"], records))
    own_steps: list[Any] = []
    if own in out.step_key_set:  # a record's own step: the step its step key reached
        own_steps = [r for r in raw if r is not None] if None in raw else raw
        if own_steps:
            if (steps := _steps(own_steps)) is None:
                return False
            step_puts.append((own, *steps))
    columns: dict[str, list[Any]] = {}  # a step key's column
    whole: dict[str, list[Any]] = {}  # a step key -> the step of each record, for a key they all hold
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
            if key != own or values != own_steps:  # as Miles logs it, the same steps as `step`: put once
                step_puts.append((key, *at))
            continue
        if present is None and sk in whole:
            col = whole[sk]  # the keys of a log() call share their steps: looked at once
        elif sk in kind.attrs:
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
        if present is None:
            whole[sk] = col
        if (made := ready.get(id(col))) is None:
            if (steps := _steps(col)) is None:
                return False
            made = ready[id(col)] = (col, array("q", steps[0]), steps[1])
        if str in kinds:  # a spelled token is NaN or an infinity; any other string is no number
            values = list(map(known.spelled.get, values, values))
            if str in set(map(type, values)):
                return False
        puts.append((key, made[1], made[2], values))
    return True


def _steps(col: list[Any]) -> tuple[list[int], bool] | None:
    """A column of steps and whether they rise; None unless every one is an int from 0 to MAX_STEP."""
    if set(map(type, col)) != {int} or min(col) < 0 or max(col) > MAX_STEP:
        return None
    return col, all(map(lt, col, col[1:]))
