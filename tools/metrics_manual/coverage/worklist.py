"""What move.py found, for people and tools: the count of what only moved, and the work list (one item per
entry to read again, with why and the lines of the Miles diff that touch it), as text, findings and JSON.
"""

from __future__ import annotations

from metrics_manual.coverage.move import Item, Move
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.source.reader import Document
from metrics_manual.text import inert


def summary(f: Move) -> str:
    """How many places only moved (and how), and how many entries a person must read again."""
    moved = f.moved
    lines = sum(1 for p in moved if p.anchor and p.anchor.line != p.was.line)
    paths = sum(1 for p in moved if p.anchor and p.anchor.path != p.was.path)
    symbols = sum(1 for p in moved if p.anchor and p.anchor.symbol != p.was.symbol)
    places = sum(len(e.places) for e in f.entries if not e.flagged)
    evidence = sum(1 for e in f.entries if not e.flagged for p in e.places if p.place.cited.evidence is not None)
    return (
        f"{places} places of {len(f.entries) - len(f.flagged)} origins hold at {f.head[:12]} ({evidence} evidence "
        f"lines; {lines} at another line, {paths} in another file, {symbols} in another symbol); "
        f"{len(f.flagged)} origins to read again"
    )


def _where(doc: Document, item: Item) -> tuple[int, int]:
    """The entry's read_at, else its `origin:` key."""
    if item.loc is None:
        return 1, 1
    read_at = (*item.loc, "read_at")
    return doc.values[read_at] if read_at in doc.values else doc.where(item.loc, key=True)


def text(f: Move, doc: Document) -> str:
    if not f.items:
        return f"work list: nothing to read again at Miles {f.head[:12]}"
    out = [f"work list: {len(f.items)} item(s) to read at Miles {f.head[:12]}:"]
    for n, item in enumerate(f.items, 1):
        at = "{}:{}:{}".format(doc.path, *_where(doc, item)) if item.loc is not None else "not in the catalog"
        out.append(f"{n:3}. {inert(item.key)} ({at}): {inert('; '.join(item.reasons))}")
        out += [f"       {inert(line)}" for line in item.diff]
        if not item.diff and item.loc is not None:
            out.append("       (no line of the diff touches its symbols)")
    return "\n".join(out)


def findings(f: Move, doc: Document) -> list[Finding]:
    """A finding for each entry of the work list, at its read_at (or its origin); new keys and keys no longer
    logged are compare.py's findings."""
    out = []
    for e in f.flagged:
        item = Item(e.key, e.loc, (), ())
        line, col = _where(doc, item)
        out.append(
            Finding(
                doc.path,
                line,
                col,
                f"{e.key}: not yet re-read at Miles {f.head[:12]} (last read at {e.base[:12]}): {'; '.join(e.reasons)}",
                code=codes.NOT_RE_READ,
            )
        )
    return out


def as_dict(f: Move, doc: Document) -> dict[str, object]:
    return {
        "head": f.head,
        "catalog_commit": f.catalog_commit,
        "origins": len(f.entries),
        "moved": [
            {
                "key": p.place.key,
                "place": p.place.part,
                "was": {"path": p.was.path, "line": p.was.line, "symbol": p.was.symbol},
                "now": {"path": p.anchor.path, "line": p.anchor.line, "symbol": p.anchor.symbol},
            }
            for p in f.moved
            if p.anchor is not None
        ],
        "work": [
            {
                "key": item.key,
                "at": "{}:{}:{}".format(doc.path, *_where(doc, item)) if item.loc is not None else None,
                "reasons": list(item.reasons),
                "diff": list(item.diff),
            }
            for item in f.items
        ],
    }
