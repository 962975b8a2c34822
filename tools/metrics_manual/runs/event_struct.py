"""The event log's metric lines that msgspec decoded into a Struct of the keys seen so far
(runs/known_keys.py), put a column per key as runs/events.py `_metric` puts them one by one.

Only lines with no backslash are decoded; a judged key's value is a float or null (pydantic's NaN).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, eq, is_not, lt
from typing import Any

from metrics_manual.runs.collect import MAX_STEP, Collector
from metrics_manual.runs.known_keys import KnownKeys

TOP = ("timestamp", "source", "type", "rollout_id", "attempt")  # a metric event's other keys (runs/events.py)
_METRICS = attrgetter("metrics")
_NULL_NAN: dict[Any, float] = {None: math.nan}


def known_keys(out: Collector) -> KnownKeys:
    """The Struct of the metric events' keys."""

    def owner(record: dict[str, Any]) -> str | None:
        return "" if record.get("type") == "metric" else None

    return KnownKeys(out, owner, tag=None, top=TOP, also=None)


def put_columns(out: Collector, known: KnownKeys, records: Sequence[Any]) -> bool:
    """Put the metric events' values (in line order) a column per key; False, with nothing put, when
    a record needs `_metric`'s words (a step that is no step, a key logged without its step key) or
    an attempt above 0 (the attempt rule, record by record)."""
    kind = known.kinds.get(type(records[0])) if records else None
    if kind is None:
        return not records
    types = list(map(known.getters["type"], records))
    if types.count("metric") != len(types):  # other events are not read
        records = list(compress(records, map(eq, types, repeat("metric"))))
        if not records:
            return True
    attempts = list(map(known.getters["attempt"], records))
    if int in set(map(type, attempts)) and max(a for a in attempts if type(a) is int) > 0:
        return False
    metrics = list(map(_METRICS, records))
    unset = known.msgspec.UNSET
    steps: dict[str, list[Any]] = {}  # each step key's column: its step, or None where it is absent or null
    for own in out.step_key_set:
        if own in kind.attrs:
            col = list(map(attrgetter(kind.attrs[own]), metrics))
            kinds = set(map(type, col)) - {type(None), type(unset)}
            if kinds and (kinds != {int} or _out_of_range(col)):
                return False  # a step key whose value is no step spoils its record: `_metric` says so
            if unset in col:
                col = [None if v is unset else v for v in col]
            steps[own] = col
    step_puts: list[tuple[str, list[int], bool]] = []
    puts: list[tuple[str, array[int], bool, list[float]]] = []
    ready: dict[int, tuple[list[Any], array[int], bool]] = {}  # id of a step column -> it as an array
    for key, get, sk in kind.kept:
        values = list(map(get, metrics))
        present = None
        if unset in values:
            present = list(map(is_not, values, repeat(unset)))
            values = list(compress(values, present))
            if not values:
                continue
        if sk is None:  # a step key's own column: the steps it names
            col = [s for s in values if s is not None]
            if col:
                step_puts.append((key, col, all(map(lt, col, col[1:]))))
            continue
        if sk not in steps:
            return False  # logged without its step key: `_metric` names it
        at = steps[sk] if present is None else list(compress(steps[sk], present))
        if (made := ready.get(id(at))) is None:
            if None in at:
                return False
            made = ready[id(at)] = (at, array("q", at), all(map(lt, at, at[1:])))
        if None in values:
            values = list(map(_NULL_NAN.get, values, values))
        puts.append((key, made[1], made[2], values))
    for key, col, rising in step_puts:
        out.put_steps(key, col, rising)
    for key, at_, rising, values in puts:
        out.put_many(key, at_, array("d", values), rising)
    return True


def _out_of_range(col: list[Any]) -> bool:
    ints = [v for v in col if type(v) is int]
    return min(ints) < 0 or max(ints) > MAX_STEP
