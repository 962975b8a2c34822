"""The catalog followed to a newer Miles commit: each origin re-anchored where its code only moved, flagged
where it changed, so that nothing is called verified at a commit at which no one read it.

Each origin of the catalog (with its named_at) was read at its base: its `read_at`, else the catalog's commit.
Both that commit and the checkout's HEAD are read from the checkout's own history (commits.py). For each
place (the origin, its named_at):

- the claim must hold at the base: its file is there, its symbol defined in it, its evidence line at its line;
- its evidence line is found at HEAD at the line the diff of its file maps it to; else the one line that reads
  the same (whitespace normalised) in the file (or in its symbol), in the same file or the file git says it
  was renamed to; else anywhere in the checkout's Python files, when exactly one line there reads so;
- its symbol's code is the same at both commits, compared as syntax trees, so a pure line move, reformatting
  or a comment is no change; a symbol renamed (or moved to another class) with the same code is followed.

An origin whose places all only moved gets its new line, path and symbol (and its evidence, when only its
whitespace changed). Any other is flagged, with why and the lines of the Miles diff that touch it: its
evidence line changed, its symbol is gone, its symbol's code changed beside an intact evidence line, or its
key is no longer logged (compare.py). A flagged origin keeps what it says, as read at its base.
"""

from __future__ import annotations

import ast
import difflib
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from metrics_manual.coverage.commits import History
from metrics_manual.coverage.compare import Result, documented_keys
from metrics_manual.coverage.evidence import Place, places
from metrics_manual.coverage.pyfile import parse
from metrics_manual.coverage.scan import SKIPPED_DIRS
from metrics_manual.model.keys import overlap
from metrics_manual.model.schema import Catalog, Metric
from metrics_manual.source.reader import Loc
from metrics_manual.text import shown

DIFF_LINES = 24  # lines of the Miles diff an item of the work list shows


def normal(text: str) -> str:
    """A line with its whitespace normalised: the ends cut, every run inside one space."""
    return " ".join(text.split())


def same_commit(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


@dataclass(frozen=True)
class Anchor:
    """Where a place stands: what the catalog writes for it."""

    path: str
    line: int | None
    symbol: str | None
    evidence: str | None


@dataclass(frozen=True)
class Followed:
    place: Place
    anchor: Anchor | None  # where it stands at HEAD when it only moved; None when it must be read again
    reasons: tuple[str, ...]  # why it must be read again (none: it only moved)
    diff: tuple[str, ...]  # the lines of the Miles diff that touch it

    @property
    def was(self) -> Anchor:
        c = self.place.cited
        return Anchor(c.path, c.line, c.symbol, c.evidence)

    @property
    def moved(self) -> bool:
        return self.anchor is not None and self.anchor != self.was


@dataclass
class Entry:
    """One origin of the catalog and its named_at, followed from its base to HEAD."""

    key: str
    loc: Loc  # the origin's mapping in the catalog
    base: str  # the commit it was last read at
    read_at: str | None  # as the catalog has it
    places: list[Followed] = field(default_factory=list)
    key_reasons: list[str] = field(default_factory=list)  # its key no longer logged, and the like

    @property
    def reasons(self) -> list[str]:
        return [*self.key_reasons, *(r for p in self.places for r in p.reasons)]

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)

    @property
    def diff(self) -> list[str]:
        return [line for p in self.places for line in p.diff]


@dataclass(frozen=True)
class Item:
    """One thing of the work list a person reads: an entry to re-read, or a key logged that no entry documents."""

    key: str
    loc: Loc | None  # the entry's origin (None: a new key, or an entry with no origin)
    reasons: tuple[str, ...]
    diff: tuple[str, ...]


@dataclass
class Move:
    head: str
    catalog_commit: str
    entries: list[Entry] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)  # the work list: flagged entries first

    @property
    def moved(self) -> list[Followed]:
        return [p for e in self.entries if not e.flagged for p in e.places if p.moved]

    @property
    def flagged(self) -> list[Entry]:
        return [e for e in self.entries if e.flagged]


class _Text:
    """One file at one commit: its lines, normalised, and its definitions (parsed only when asked for: the
    search of the whole checkout reads every file, and parses none)."""

    def __init__(self, raw: bytes, path: str) -> None:
        self.raw, self.path = raw, path
        self.lines = raw.decode("utf-8", errors="replace").splitlines()
        self.norm = [normal(s) for s in self.lines]

    @functools.cached_property
    def _parsed(self) -> tuple[dict[str, list[ast.AST]] | None, str]:
        got = parse(self.raw, self.path)
        return (_definitions(got.tree) if got.tree else None), got.why

    @property
    def defs(self) -> dict[str, list[ast.AST]] | None:
        """Dotted name -> its definitions; None: the file does not parse (`why` says why)."""
        return self._parsed[0]

    @property
    def why(self) -> str:
        return self._parsed[1]


class _Reader:
    """The files of two commits, parsed once, and the alignment of each pair of them."""

    def __init__(self, history: History, head: str) -> None:
        self.history = history
        self.head = head
        self._texts: dict[tuple[str, str], _Text | None] = {}
        self._ops: dict[tuple[str, str, str], Sequence[tuple[str, int, int, int, int]]] = {}
        self._renames: dict[str, dict[str, str]] = {}
        self._index: dict[str, list[tuple[str, int]]] | None = None

    def prefetch(self, commit: str, paths: Iterable[str]) -> None:
        todo = [p for p in set(paths) if (commit, p) not in self._texts]
        for p, raw in self.history.read(commit, todo).items():
            self._texts[(commit, p)] = _Text(raw, p) if raw is not None else None

    def text(self, commit: str, path: str) -> _Text | None:
        if (commit, path) not in self._texts:
            self.prefetch(commit, [path])
        return self._texts[(commit, path)]

    def renamed(self, base: str, path: str) -> str | None:
        if base not in self._renames:
            self._renames[base] = self.history.renames(base, self.head)
        return self._renames[base].get(path)

    def ops(self, base: str, old: str, new: str) -> Sequence[tuple[str, int, int, int, int]]:
        if (base, old, new) not in self._ops:
            a, b = self.text(base, old), self.text(self.head, new)
            assert a is not None and b is not None
            matcher = difflib.SequenceMatcher(None, a.norm, b.norm, autojunk=False)
            self._ops[(base, old, new)] = matcher.get_opcodes()
        return self._ops[(base, old, new)]

    def everywhere(self, wanted: str) -> list[tuple[str, int]]:
        """Each (path, line) of the Python files at HEAD (those the scan reads) whose line reads `wanted`."""
        if self._index is None:
            paths = [
                p
                for p in self.history.files(self.head)
                if p.endswith(".py") and not any(d in SKIPPED_DIRS or d.startswith(".") for d in p.split("/")[:-1])
            ]
            self.prefetch(self.head, paths)
            self._index = {}
            for p in paths:
                t = self._texts.get((self.head, p))
                for i, n in enumerate(t.norm if t else [], 1):
                    if n:
                        self._index.setdefault(n, []).append((p, i))
        return self._index.get(wanted, [])


def _definitions(tree: ast.AST) -> dict[str, list[ast.AST]]:
    """Every def, async def and class, by its dotted name (`Class.method`), as evidence.py names them."""
    out: dict[str, list[ast.AST]] = {}
    todo: list[tuple[ast.AST, str]] = [(tree, "")]
    while todo:
        node, prefix = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out.setdefault(prefix + child.name, []).append(child)
                todo.append((child, prefix + child.name + "."))
            else:
                todo.append((child, prefix))
    return out


def _span(node: ast.AST) -> tuple[int, int]:
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return first, node.end_lineno or node.lineno


def _holding(nodes: Iterable[ast.AST], line: int) -> ast.AST | None:
    return next((n for n in nodes if _span(n)[0] <= line <= _span(n)[1]), None)


def _code(node: ast.AST) -> str:
    """A definition's code as its syntax tree, without its name and positions: what a line move, reformatting
    or a comment leaves alone."""
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    name = node.name
    node.name = ""
    try:
        return ast.dump(node, include_attributes=False)
    finally:
        node.name = name


def _short(commit: str) -> str:
    return commit[:12]


def _hunks(
    label: str,
    a: _Text,
    b: _Text | None,
    ops: Sequence[tuple[str, int, int, int, int]],
    spans_a: list[tuple[int, int]],
    spans_b: list[tuple[int, int]],
) -> list[str]:
    """The lines of the diff from `a` to `b` (no context) that touch the given spans of either side."""

    def touches(lo: int, hi: int, spans: list[tuple[int, int]]) -> bool:
        # lines lo+1 .. hi of one side (none: lines put in between line lo and line lo + 1) against its spans
        return any(s <= hi and lo + 1 <= e if hi > lo else s <= lo < e for s, e in spans)

    out: list[str] = []
    if b is None:
        for s, e in spans_a:
            out.append(f"{label} @@ -{s},{e - s + 1} +0,0 @@")
            out += ["-" + line for line in a.lines[s - 1 : e]]
        return out
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if not (touches(i1, i2, spans_a) or touches(j1, j2, spans_b)):
            continue
        out.append(f"{label} @@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        out += ["-" + line for line in a.lines[i1:i2]] + ["+" + line for line in b.lines[j1:j2]]
    return out


class _Place:
    """One place followed from its base to HEAD: where it stands now, or why a person must read it again."""

    def __init__(self, reader: _Reader, place: Place, base: str) -> None:
        self.r, self.place, self.base, self.head = reader, place, base, reader.head
        self.diff: list[str] = []

    def flag(self, reason: str) -> Followed:
        return Followed(self.place, None, (reason,), tuple(self.diff))

    def follow(self) -> Followed:
        c = self.place.cited
        at, head = f"at {_short(self.base)}", f"at {_short(self.head)}"
        # 1. The claim holds at the commit it was read at.
        was = self.r.text(self.base, c.path)
        if was is None:
            return self.flag(f"{c.path} is not in Miles {at}, the commit it was read at")
        node_a: ast.AST | None = None
        if c.symbol is not None:
            nodes = (was.defs or {}).get(c.symbol, [])
            if not nodes:
                why = f" ({was.why})" if was.why else ""
                return self.flag(f"{shown(c.symbol)} is not defined in {c.path} {at}{why}")
            node_a = _holding(nodes, c.line) if c.line is not None else nodes[0]
            if node_a is None:
                return self.flag(f"line {c.line} of {c.path} lies outside {shown(c.symbol)} {at}")
        wanted = normal(c.evidence) if c.evidence is not None and c.line is not None else None
        if wanted is not None and not (c.line and c.line <= len(was.lines) and was.norm[c.line - 1] == wanted):
            return self.flag(f"the evidence does not stand at line {c.line} of {c.path} {at}")
        # 2. The file at HEAD: the same path, or the one git says it was renamed to.
        same = c.path if self.r.text(self.head, c.path) is not None else self.r.renamed(self.base, c.path)
        successor = self.r.text(self.head, same) if same is not None else None
        # 3. The evidence line at HEAD: in that file, else the one line of the checkout that reads it.
        path, now, line, ambiguous = same, successor, None, ""
        if wanted is not None and c.line is not None:
            if successor is not None and same is not None:
                line, ambiguous = self._line(c.line, wanted, c.symbol, same, successor)
            if line is None and not ambiguous:
                found = self.r.everywhere(wanted)
                if len(found) == 1:
                    path, line = found[0]
                    now = self.r.text(self.head, path)
                elif found:
                    where = ", ".join(f"{p}:{n}" for p, n in found[:3]) + (", ..." if len(found) > 3 else "")
                    ambiguous = f"its evidence line left {c.path}, and reads the same at {len(found)} places ({where})"
        # 4. The symbol at HEAD: of the same name and holding the line, else the same code under another name.
        symbol, node_b = c.symbol, None
        if node_a is not None and now is not None and now.defs is not None:
            nodes = now.defs.get(c.symbol or "", [])
            node_b = _holding(nodes, line) if line is not None else (nodes[0] if len(nodes) == 1 else None)
            if node_b is None and line is not None:
                for name, defs in now.defs.items():
                    held = _holding(defs, line)
                    if held is not None and type(held) is type(node_a) and _code(held) == _code(node_a):
                        symbol, node_b = name, held
                        break
        # 5. The lines of the diff of its file that touch it.
        spans_a = [_span(node_a)] if node_a is not None else [(c.line, c.line)] if c.line else []
        spans_b = (
            [_span(node_b)] if node_b is not None and path == same else [(line, line)] if line and path == same else []
        )
        label = c.path if same in (None, c.path) else f"{c.path} -> {same}"
        ops = self.r.ops(self.base, c.path, same) if successor is not None and same is not None else []
        diff = _hunks(label, was, successor, ops, spans_a, spans_b)
        more = [f"... and {len(diff) - DIFF_LINES} more lines of the diff"] if len(diff) > DIFF_LINES else []
        self.diff = diff[:DIFF_LINES] + more
        # 6. Only moved, or to be read again.
        if now is None or path is None:
            return self.flag(f"{c.path} is not in Miles {head}, and git names no file it was renamed to")
        if ambiguous:
            return self.flag(ambiguous)
        if wanted is not None and line is None:
            return self.flag(f"its evidence line is not in {path} {head} any more (nor once anywhere in the checkout)")
        if node_a is not None:
            if now.defs is None:
                return self.flag(f"{path} does not parse {head} ({now.why})")
            if node_b is None:
                if c.symbol not in now.defs:
                    return self.flag(f"{shown(c.symbol)} is not defined in {path} {head}")
                if line is None:
                    return self.flag(f"{shown(c.symbol)} is defined more than once in {path} {head}")
                return self.flag(f"its evidence line now lies outside {shown(c.symbol)} in {path} {head}")
            if _code(node_b) != _code(node_a):
                beside = ", though its evidence line did not" if line is not None else ""
                return self.flag(f"the code of {shown(c.symbol)} in {path} changed{beside}")
        evidence = c.evidence
        if line is not None and c.evidence is not None and now.lines[line - 1].strip() != c.evidence.strip():
            evidence = now.lines[line - 1].strip()  # the same line, its whitespace changed
        return Followed(self.place, Anchor(path, line, symbol, evidence), (), tuple(self.diff))

    def _line(self, at: int, wanted: str, symbol: str | None, path: str, now: _Text) -> tuple[int | None, str]:
        """The line at HEAD of the evidence at line `at`: where the diff maps it, else the one line of the file
        (or of its symbol) that reads it; or why it is not one line."""
        for tag, i1, i2, j1, _ in self.r.ops(self.base, self.place.cited.path, path):
            if tag == "equal" and i1 <= at - 1 < i2:
                return j1 + (at - 1 - i1) + 1, ""
        found = [i for i, n in enumerate(now.norm, 1) if n == wanted]
        if len(found) > 1 and symbol is not None and now.defs is not None:
            found = [i for i in found if _holding(now.defs.get(symbol, []), i) is not None] or found
        if len(found) > 1:
            lines = ", ".join(str(i) for i in found[:5])
            return None, f"its evidence line reads the same at lines {lines} of {path} at {_short(self.head)}"
        return (found[0], "") if found else (None, "")


def move(catalog: Catalog, result: Result, history: History, head: str, *, everything: bool) -> Move:
    """The catalog's origins followed from their base to HEAD: each one whose base is not HEAD (`everything`:
    all of them, the catalog's commit being another), then the work list."""
    out = Move(head, catalog.code.commit)
    reader = _Reader(history, head)
    entries = _entries(catalog, head, everything)
    full = {e.base: history.commit(e.base) for e, _ in entries}
    for base, commit in full.items():  # each commit's files in one read
        paths = [p.cited.path for e, ps in entries if e.base == base for p in ps]
        if commit is not None:
            reader.prefetch(commit, paths)
        reader.prefetch(head, paths)
    for entry, ps in entries:
        commit = full[entry.base]
        if commit is None:
            entry.key_reasons.append(
                f"Miles {entry.base} is not in the checkout's history: fetch it (git fetch origin {entry.base})"
            )
        else:
            entry.places = [_Place(reader, p, commit).follow() for p in ps]
        out.entries.append(entry)
    _key_reasons(catalog, result, out)
    out.items = [Item(e.key, e.loc, tuple(e.reasons), tuple(e.diff)) for e in out.entries if e.flagged]
    out.items += _new_keys(result, reader, catalog.code.commit, history)
    return out


def _entries(catalog: Catalog, head: str, everything: bool) -> list[tuple[Entry, list[Place]]]:
    grouped: dict[Loc, tuple[Entry, list[Place]]] = {}
    for place in places(catalog):
        origin = place.loc if place.part == "origin" else place.loc[:-1]
        if origin not in grouped:
            metric = _metric(catalog, origin)
            assert metric.origin is not None
            read_at = metric.origin.read_at
            base = read_at or catalog.code.commit
            if same_commit(base, head) or not (everything or read_at):
                continue
            grouped[origin] = (Entry(place.key, origin, base, read_at), [])
        grouped[origin][1].append(place)
    return list(grouped.values())


def _metric(catalog: Catalog, loc: Loc) -> Metric:
    _, si, _, mi, *_ = loc
    assert isinstance(si, int) and isinstance(mi, int)
    return catalog.sections[si].metrics[mi]


def _key_reasons(catalog: Catalog, result: Result, out: Move) -> None:
    """The entries whose key HEAD no longer logs (or only times, or logs though marked not logged)."""
    by_key = {e.key: e for e in out.entries}
    docs = documented_keys(catalog)
    head = _short(out.head)
    problems: list[tuple[str, str]] = [
        (g.key, f"{g.key} is no longer logged at {head}") for g in result.documented_not_emitted
    ]
    problems += [
        (d, f"{t.key} is only timed at {head}, in a process that never logs its timers ({t.path}:{t.line})")
        for t in result.timed_not_logged
        if t.documented and not t.marked
        for d, _ in docs
        if overlap(d, t.key)
    ]
    problems += [
        (b.key, f"{b.key} is marked not logged, but {b.path}:{b.line} logs it at {head}")
        for b in result.marked_but_logged
    ]
    for doc, reason in problems:
        metric = next(m for d, m in docs if d == doc)
        entry = by_key.get(metric.key)
        if entry is not None:
            entry.key_reasons.append(reason)
        else:
            out.items.append(Item(metric.key, None, (reason,), ()))


def _new_keys(result: Result, reader: _Reader, base: str, history: History) -> list[Item]:
    """Each key logged at HEAD that the catalog does not document (nor ranges/coverage.yaml explain), with the
    lines of the diff of its file around where its name is built."""
    full = history.commit(base)
    items = []
    for u in result.emitted_not_documented:
        if u.known is not None:
            continue
        diff: list[str] = []
        now = reader.text(reader.head, u.path)
        was = reader.text(full, u.path) if full is not None else None
        if now is not None and was is not None and full is not None:
            diff = _hunks(u.path, was, now, reader.ops(full, u.path, u.path), [], [(u.line, u.line)])
        elif now is not None and 0 < u.line <= len(now.lines):
            diff = [f"{u.path} (new file) @@ +{u.line} @@", "+" + now.lines[u.line - 1]]
        items.append(
            Item(
                u.key,
                None,
                (f"{u.key} is logged at {u.path}:{u.line} ({u.symbol}) and documented nowhere",),
                tuple(diff[:DIFF_LINES]),
            )
        )
    return items
