"""The catalog's evidence held against a Miles checkout.

Each `origin` and `named_at` of the catalog names a file, a symbol in it and, once audited, one
line of it (`evidence`) at a line number. This module checks each against the checkout: the file
is there, the symbol is defined in it (found with `ast`: a def, async def or class, `Class.method`),
the evidence line stands at its line (whitespace at its ends aside) or where it moved to, and the
checkout is at the catalog's commit. Each miss names the catalog field to correct.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from metrics_manual.coverage.checkout import changed_files
from metrics_manual.coverage.pyfile import read
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.gitrun import head_commit
from metrics_manual.model.schema import Catalog, NamedAt, Origin
from metrics_manual.source.reader import Document, Loc
from metrics_manual.text import clip, shown, shown_path


@dataclass(frozen=True)
class Place:
    """One origin or named_at of one catalog entry."""

    key: str
    part: str  # "origin" or "named_at"
    loc: Loc  # its mapping in the catalog
    cited: Origin | NamedAt


def places(catalog: Catalog) -> Iterator[Place]:
    """Every origin and named_at of the catalog, in its order."""
    for si, section in enumerate(catalog.sections):
        for mi, metric in enumerate(section.metrics):
            if metric.origin is None:
                continue
            loc: Loc = ("sections", si, "metrics", mi, "origin")
            yield Place(metric.key, "origin", loc, metric.origin)
            if metric.origin.named_at is not None:
                yield Place(metric.key, "named_at", (*loc, "named_at"), metric.origin.named_at)


@dataclass(frozen=True)
class Miss:
    """One thing about a place that the checkout does not bear out."""

    code: Code
    field: str  # the field of the place to correct
    message: str  # what is wrong, without the entry's name
    moved_to: int | None = None  # an evidence line found elsewhere in its file


@dataclass(frozen=True)
class Checked:
    place: Place
    misses: tuple[Miss, ...]

    @property
    def verified(self) -> bool:
        """The place carries evidence, and the checkout bears all of it out."""
        return self.place.cited.evidence is not None and not self.misses


@dataclass
class Verification:
    commit: str | None  # the checkout's HEAD; None when it is not a git work tree
    catalog_commit: str
    checked: list[Checked] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # files of the checkout that differ from its commit

    @property
    def at_commit(self) -> bool:
        return self.commit is not None and _same_commit(self.commit, self.catalog_commit)

    @property
    def verified(self) -> list[Checked]:
        return [c for c in self.checked if c.verified]

    @property
    def without_evidence(self) -> list[Checked]:
        return [c for c in self.checked if c.place.cited.evidence is None]


def _same_commit(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def origin_of(place: Place) -> Loc:
    """The catalog mapping of the origin a place belongs to."""
    return place.loc if place.part == "origin" else place.loc[:-1]


def verify(catalog: Catalog, root: Path, skip: Collection[Loc] = ()) -> Verification:
    """Each origin and named_at of the catalog held against the checkout at `root` (those of the origins in
    `skip` aside: move.py holds them to the commit they were read at)."""
    commit = head_commit(root)
    out = Verification(commit, catalog.code.commit, changed=changed_files(root, commit) if commit else [])
    files: dict[str, _File | str] = {}
    for place in places(catalog):
        if origin_of(place) in skip:
            continue
        path = place.cited.path
        if path not in files:
            files[path] = _read(root, path)
        out.checked.append(Checked(place, tuple(_check(place, files[path]))))
    return out


@dataclass(frozen=True)
class _File:
    lines: list[str]
    symbols: dict[str, list[tuple[int, int]]]  # dotted name -> the (first, last) lines of each definition
    unparsed: str  # why ast could not read it ('' when it could)


def _read(root: Path, path: str) -> _File | str:
    """The file's lines and symbols, or why it cannot be read (read as the scan reads: capped, never a pipe,
    never a link out of the checkout)."""
    file = root / path
    if not file.exists() and not file.is_symlink():
        return "is not in the checkout"
    got = read(root, path)
    if got.raw is None:
        return f"cannot be read: {got.why}"
    lines = got.raw.decode("utf-8", errors="replace").splitlines()
    return _File(lines, _symbols(got.tree) if got.tree is not None else {}, got.why)


def _symbols(tree: ast.AST) -> dict[str, list[tuple[int, int]]]:
    """Every def, async def and class, by its dotted name (`Class.method`), with its lines (decorators included)."""
    out: dict[str, list[tuple[int, int]]] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.setdefault(name, []).append((first, child.end_lineno or child.lineno))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def _check(place: Place, file: _File | str) -> Iterator[Miss]:
    cited = place.cited
    if isinstance(file, str):
        yield Miss(codes.EVIDENCE_PATH_MISSING, "path", f"{cited.path} {file}")
        return
    spans: list[tuple[int, int]] = []
    if cited.symbol is not None:
        spans = file.symbols.get(cited.symbol, [])
        if not spans:
            why = file.unparsed or "no def, async def or class of that name"
            # A method named without its class first, then the closest spelling.
            hint = [n for n in file.symbols if n.endswith("." + cited.symbol)][:1] or difflib.get_close_matches(
                cited.symbol, list(file.symbols), n=1, cutoff=0.6
            )
            yield Miss(
                codes.EVIDENCE_SYMBOL_MISSING,
                "symbol",
                f"{shown(cited.symbol)} is not defined in {cited.path} ({why})"
                + (f"; did you mean {hint[0]!r}?" if hint else ""),
            )
    if cited.evidence is None or cited.line is None:
        yield Miss(codes.NOT_VERIFIED, "", "no evidence (line and evidence), so it is not verified against the code")
        return
    wanted = cited.evidence.strip()
    at = cited.line
    if not (at <= len(file.lines) and file.lines[at - 1].strip() == wanted):
        found = [i for i, text in enumerate(file.lines, 1) if text.strip() == wanted]
        if not found:
            now = (
                f"line {at} reads {shown(file.lines[at - 1].strip())}"
                if at <= len(file.lines)
                else (f"the file has {len(file.lines)} lines")
            )
            yield Miss(codes.EVIDENCE_CHANGED, "evidence", f"the evidence is not in {cited.path} any more; {now}")
            return
        # Where it went: inside the symbol first, then the nearest to where it was.
        new = min(found, key=lambda n: (not _inside(n, spans), abs(n - at)))
        also = f" (and {len(found) - 1} more lines of the file read the same)" if len(found) > 1 else ""
        yield Miss(
            codes.EVIDENCE_MOVED,
            "line",
            f"the evidence moved from line {at} to line {new} of {cited.path}{also}",
            moved_to=new,
        )
        at = new
    if spans and not _inside(at, spans):
        where = ", ".join(f"lines {a}-{b}" for a, b in spans)
        yield Miss(
            codes.EVIDENCE_OUTSIDE_SYMBOL,
            "symbol",
            f"line {at} of {cited.path} lies outside {shown(cited.symbol)} ({where})",
        )


def _inside(line: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= line <= b for a, b in spans)


def checkout_findings(v: Verification, doc: Document, followed: str | None = None) -> list[Finding]:
    """The checkout at another commit than the catalog reads (an error; `followed` says what move.py made of
    the difference), at an unknown one (a warning), or with files that differ from its commit (a warning)."""
    line, col = doc.where(("code", "commit"))
    out = []
    if v.commit is None:
        out.append(
            Finding(
                doc.path,
                line,
                col,
                "the checkout's commit is unknown (not a git work tree): the evidence was held against its files as "
                f"they are, not against Miles at {v.catalog_commit[:12]}",
                severity="warning",
                code=codes.CHECKOUT_NOT_AT_COMMIT,
            )
        )
    elif not v.at_commit:
        out.append(
            Finding(
                doc.path,
                line,
                col,
                f"the checkout is at {v.commit[:12]} but the catalog reads Miles at {v.catalog_commit[:12]}: "
                + (followed or "the findings that follow are what moved between the two"),
                code=codes.CHECKOUT_NOT_AT_COMMIT,
            )
        )
    if v.changed and v.commit is not None:
        named = ", ".join(shown_path(p) for p in v.changed[:3]) + (", ..." if len(v.changed) > 3 else "")
        out.append(
            Finding(
                doc.path,
                line,
                col,
                f"{len(v.changed)} file(s) of the checkout differ from its commit {v.commit[:12]} ({clip(named)}): "
                "the scan and the evidence read them as they are, not as Miles has them at that commit",
                severity="warning",
                code=codes.CHECKOUT_MODIFIED,
            )
        )
    return out


def _where(doc: Document, c: Checked, miss: Miss) -> tuple[int, int]:
    """The catalog field a miss asks to correct (the place's mapping when it is no one field)."""
    return doc.where((*c.place.loc, miss.field) if miss.field else c.place.loc)


def findings(v: Verification, doc: Document, followed: str | None = None) -> list[Finding]:
    """Every miss as a finding at the catalog field to correct, the commit's first; 'not verified' is a warning."""
    out = checkout_findings(v, doc, followed)
    for c in v.checked:
        for miss in c.misses:
            line, col = _where(doc, c, miss)
            out.append(
                Finding(
                    doc.path,
                    line,
                    col,
                    f"{c.place.key}: {c.place.part}: {miss.message}",
                    severity="warning" if miss.code is codes.NOT_VERIFIED else "error",
                    code=miss.code,
                )
            )
    return out


def as_dict(v: Verification, doc: Document) -> dict[str, object]:
    """The verification for `coverage --format json`: the counts, then every place with what missed."""
    return {
        "commit": v.commit,
        "catalog_commit": v.catalog_commit,
        "at_commit": v.at_commit,
        "changed": v.changed,
        "places": len(v.checked),
        "verified": len(v.verified),
        "without_evidence": len(v.without_evidence),
        "checked": [
            {
                "key": c.place.key,
                "place": c.place.part,
                "path": c.place.cited.path,
                "symbol": c.place.cited.symbol,
                "line": c.place.cited.line,
                "verified": c.verified,
                "misses": [
                    {
                        "code": m.code.id,
                        "message": m.message,
                        "at": "{}:{}:{}".format(doc.path, *_where(doc, c, m)),
                        **({"moved_to": m.moved_to} if m.moved_to is not None else {}),
                    }
                    for m in c.misses
                ],
            }
            for c in v.checked
        ],
    }
