"""Run-log records decoded by msgspec into Structs of the keys seen so far (the dashboard log, the
event log's metric lines).

A record is decoded into a Struct whose `metrics` fields are the metric keys the Collector has
already noted (`Collector.shapes`: each was read through the ordinary path first), unknown fields
forbidden. A record that decodes therefore holds only noted keys: it needs no key bookkeeping, and
the judged keys' values can be read a column at a time (runs/dashboard_struct.py,
runs/event_struct.py), without building a dict or naming the other keys. A record with a key not
yet seen, or anything msgspec rejects, fails to decode and the caller reads it by the ordinary path,
which notes its keys; the Structs are then rebuilt with them, at most REBUILDS times a file and with
at most MAX_FIELDS keys (past either, such records stay on the ordinary path). The dashboard's
records get a Struct per step key (a tagged union on `step_key`: a log() call's keys come with it).

Why a record that decodes is the record json.loads reads: only lines with no backslash are decoded
(every key is then written as json.loads reads it); every value is decoded, never skipped (msgspec
checks neither the UTF-8 nor the digits of a value it skips, so the top level's keys are fields
too, learned like the metrics'); where msgspec reads a value at all it reads what json.loads reads
(integers of any size, the last of duplicate keys; a second `step_key` must repeat the first), else
it fails: a number beyond float range, a lone surrogate, a control character. A judged key's value
is a float in (-2^63, 2^63), or `also` (the dashboard's spelled tokens, the event log's null), else
the line fails. tests/runs/test_fast_json.py reads files both ways.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Annotated, Any, Union

from metrics_manual.runs import collect
from metrics_manual.runs.collect import BIG, Collector

# The bytes of lines decoded into Structs and put at once: the records they make (a Python float
# per value) stay in the CPU's caches and the allocator's free lists. A dashboard log's whole chunk
# (4 MB, 1,200 records of ~110 values) took 3x the time; records of 1,000 values, 128 at a time, 1.2x.
SLICE_BYTES = 512 * 1024
REBUILDS = 32  # Struct rebuilds a file: each adds keys not seen before (a log() call of new keys)
MAX_FIELDS = 4096  # keys the Structs hold in all (a hostile log of ever new keys stays on the ordinary path)
MAX_OWNERS = 64  # step keys named by the dashboard's log() calls, a Struct each
MAX_TOP = 64  # top-level keys of a record
_PENDING = 8  # lines that failed to decode, kept to learn their keys from
_NEVER = "~"  # the tag of a Struct no record is put from: a spelled NaN as step_key (a lone tagged
# Struct would take a record with no step_key as its own; two never do)


@dataclass
class Kind:
    """The records of one owner (the dashboard: a step key): the keys whose values are read, with
    their getter and step key (None for a step key itself), and the attribute of each key."""

    own: str
    attrs: dict[str, str]
    kept: Sequence[tuple[str, Callable[[Any], Any], str | None]]


class KnownKeys:
    """The Structs of the keys noted so far and their decoder.

    `owner`: the owner of a record (as msgspec decodes it, untyped), or None for a record that no
    Struct is for; `tag`: the top-level key whose value is the owner (a Struct each), or None (one
    Struct); `top`: the top-level keys known at first; `also`: the type a judged value may have
    besides a float; `spelled`: spelled tokens (they are no owner)."""

    def __init__(
        self,
        out: Collector,
        owner: Callable[[dict[str, Any]], str | None],
        *,
        tag: str | None,
        top: Sequence[str],
        also: Any,
        spelled: dict[Any, float] | None = None,
    ) -> None:
        self.out, self.owner, self.tag, self.also = out, owner, tag, also
        self.spelled = spelled or {}
        self.msgspec = collect.struct_parser()
        self.errors = (self.msgspec.DecodeError, RecursionError, ValueError)
        self.top = dict.fromkeys(top)  # top-level keys but `metrics` and the tag
        self.owners: dict[str, dict[str, None]] = {}  # owner -> its records' keys, in order
        self.size = 0  # keys in all the Structs
        self.rebuilds = 0
        self.tries = 0  # times lines that failed were learned from
        self.pending: list[bytes] = []  # lines that failed to decode since the last rebuild
        self.kinds: dict[type, Kind] = {}
        self.shared: set[str] = set()  # read keys of more than one owner
        self.decode: Callable[[Any], Any] | None = None

    def record(self, line: Any) -> Any:
        """The decoded record of a line, or None when the ordinary path must read it."""
        if self.decode is not None:
            try:
                return self.decode(line)
            except self.errors:
                pass
        if len(self.pending) < _PENDING and self.rebuilds < REBUILDS and self.tries < 4 * REBUILDS:
            self.pending.append(bytes(line))
        return None

    def learn(self) -> None:
        """After the lines that failed were read by the ordinary path: rebuild the Structs with the
        keys they hold that are now noted, if any."""
        if self.pending:
            self.tries += 1  # lines that fail for other reasons than new keys: learning stops too
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
            if type(record) is not dict or type(metrics := record.get("metrics")) is not dict:
                continue
            if (own := self.owner(record)) is None or own in self.spelled or own == _NEVER:
                continue
            for k in record:
                if k not in self.top and k not in ("metrics", self.tag) and len(self.top) < MAX_TOP:
                    self.top[k], grew = None, True
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
        number = Annotated[float, ms.Meta(gt=-BIG, lt=BIG)]
        judged = number | self.also  # a runtime type
        keep, step_keys = out.keys, out.step_key_set
        self.kinds, types = {}, []
        seen: dict[str, set[str]] = {}
        owners = [*self.owners.items()] + ([(_NEVER, {})] if self.tag is not None else [])
        for i, (own, keys) in enumerate(owners):
            attrs = {k: f"k{j}" for j, k in enumerate(keys)}
            fields, kept = [], []
            for k, a in attrs.items():
                sk = out.step_key(k) if keep is None or k in keep else None
                fields.append((a, judged if sk is not None else Any, ms.UNSET))
                if sk is not None or (k in step_keys and (keep is None or k in keep)):
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
            tops = {f"t{j}": k for j, k in enumerate(self.top)}
            record = ms.defstruct(
                f"Record{i}",
                [("metrics", metrics), *((a, Any, None) for a in tops)],
                rename=tops,
                forbid_unknown_fields=True,
                gc=False,
                **({"tag_field": self.tag, "tag": own} if self.tag is not None else {}),
            )
            types.append(record)
            if own != _NEVER:
                self.kinds[record] = Kind(own, attrs, kept)
        self.shared = {k for k, owners in seen.items() if len(owners) > 1}
        self.getters = {k: attrgetter(f"t{j}") for j, k in enumerate(self.top)}
        self.decode = ms.json.Decoder(Union[tuple(types)] if len(types) > 1 else types[0]).decode  # noqa: UP007
