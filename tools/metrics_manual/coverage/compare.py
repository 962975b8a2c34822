"""The catalog's keys held against what a Miles checkout logs: documented, undocumented, gone, timed only.

Where each entry says the key is computed and named (its origins' files, symbols and evidence lines)
is held by evidence.py, one finding per miss at the catalog field to correct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from metrics_manual.coverage.scan import Emission, Scan, Unread
from metrics_manual.gitrun import head_commit
from metrics_manual.model.keys import is_pattern, overlap
from metrics_manual.model.schema import Catalog, Coverage, KnownKey, Metric


@dataclass(frozen=True)
class Undocumented:
    key: str
    path: str
    line: int
    symbol: str
    form: str
    known: str | None  # the reason ranges/coverage.yaml gives, when it lists the key


@dataclass(frozen=True)
class Gone:
    """A documented key that no form of the scan finds, and that ranges/coverage.yaml does not call invisible."""

    key: str


@dataclass(frozen=True)
class Timed:
    """A timer key measured only in processes that never flush their timers into the tracker."""

    key: str
    path: str
    line: int
    symbol: str
    runs_in: tuple[str, ...]  # the processes that run the timer (none flushes); empty: none found
    documented: bool
    marked: bool  # the catalog says so (`not_logged`)


@dataclass(frozen=True)
class NotLogged:
    """A documented key the catalog marks `not_logged`, which the scan finds logged by no process."""

    key: str
    reason: str


@dataclass(frozen=True)
class MarkedButLogged:
    """A documented key the catalog marks `not_logged`, which a process logs after all."""

    key: str
    path: str
    line: int
    symbol: str


@dataclass(frozen=True)
class NotVisible:
    """A documented key the scan cannot see, with the reason ranges/coverage.yaml gives."""

    key: str
    reason: str


@dataclass
class Result:
    commit: str | None
    catalog_commit: str
    documented_and_emitted: list[str] = field(default_factory=list)
    emitted_not_documented: list[Undocumented] = field(default_factory=list)
    documented_not_emitted: list[Gone] = field(default_factory=list)
    timed_not_logged: list[Timed] = field(default_factory=list)
    not_visible: list[NotVisible] = field(default_factory=list)
    not_logged: list[NotLogged] = field(default_factory=list)
    marked_but_logged: list[MarkedButLogged] = field(default_factory=list)
    # ranges/coverage.yaml calls these invisible, but the scan sees them: the entry is stale
    visible_after_all: list[str] = field(default_factory=list)
    not_read: list[Unread] = field(default_factory=list)  # files the scan could not read: their keys are not seen
    concrete: int = 0  # documented concrete keys (no hole), step keys aside
    concrete_seen: int = 0  # of which the scan finds logged, or timed and never logged

    @property
    def failing(self) -> bool:
        """Exit 1: a key undocumented, documented but not logged (gone, or timed and never flushed), marked
        not logged but logged, or a stale entry of ranges/coverage.yaml, that ranges/coverage.yaml does not
        explain."""
        return (
            any(u.known is None for u in self.emitted_not_documented)
            or bool(self.documented_not_emitted)
            or any(t.documented and not t.marked for t in self.timed_not_logged)
            or bool(self.marked_but_logged)
            or bool(self.visible_after_all)
        )


def documented_keys(catalog: Catalog) -> list[tuple[str, Metric]]:
    """Every key or pattern the catalog documents, with its entry (a family stands for its members)."""
    return [(k, m) for s in catalog.sections for m in s.metrics for k in (m.members or [m.key])]


def _known(key: str, entries: list[KnownKey]) -> str | None:
    return next((e.reason for e in entries if overlap(e.key, key)), None)


def _covers(doc: str, e: Emission) -> bool:
    # An open pattern (`perf/{key}_time` over a timer's dict) stands for its family, never for one key.
    return overlap(doc, e.key) and (not e.open or is_pattern(doc))


def compare(catalog: Catalog, coverage: Coverage | None, scan: Scan, root: Path) -> Result:
    known = coverage or Coverage(commit=catalog.code.commit)
    docs = documented_keys(catalog)
    old = [(r.key, m) for s in catalog.sections for m in s.metrics for r in m.renamed_from]
    steps = set(catalog.step_keys.values())
    emitted = {k: v for k, v in scan.keys().items() if k not in steps}
    timed = scan.timed_not_logged()
    out = Result(commit=head_commit(root), catalog_commit=catalog.code.commit, not_read=list(scan.unreadable))
    for key, where in sorted(emitted.items()):
        if any(overlap(d, key) for d, _ in docs + old):
            continue
        first = where[0]
        reason = _known(key, known.undocumented) or _known(key, known.exceptions)
        out.emitted_not_documented.append(Undocumented(key, first.path, first.line, first.symbol, first.form, reason))
    logged = [e for v in emitted.values() for e in v]
    unflushed = [e for v in timed.values() for e in v]
    for doc, m in docs:
        seen = any(_covers(doc, e) for e in logged)
        only_timed = not seen and any(_covers(doc, e) for e in unflushed)
        reason = _known(doc, known.not_visible)
        if seen and m.not_logged:
            e = next(e for e in logged if _covers(doc, e))
            out.marked_but_logged.append(MarkedButLogged(doc, e.path, e.line, e.symbol))
        elif seen:
            out.documented_and_emitted.append(doc)
        elif m.not_logged:
            out.not_logged.append(NotLogged(doc, m.not_logged))
        elif reason is not None and not only_timed:
            out.not_visible.append(NotVisible(doc, reason))
        elif not only_timed:
            out.documented_not_emitted.append(Gone(doc))
        if reason is not None and (seen or only_timed):
            out.visible_after_all.append(doc)
        if not is_pattern(doc) and doc not in steps:
            out.concrete += 1
            out.concrete_seen += seen or only_timed
    for key, where in sorted(timed.items()):
        first = where[0]
        runs = tuple(dict.fromkeys(p for e in where for p in e.runs_in))
        entries = [m for d, m in docs if overlap(d, key)]
        marked = bool(entries) and all(m.not_logged for m in entries)
        out.timed_not_logged.append(Timed(key, first.path, first.line, first.symbol, runs, bool(entries), marked))
    return out
