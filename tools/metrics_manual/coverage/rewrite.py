"""`coverage --write`: the catalog moved to the checkout's HEAD, as a round-trip edit of its file.

The edit (source/yaml_edit.py, as derive edits a profile) keeps the file's comments, order, quoting and
style; only these lines change: the catalog's commit (and its date), and for each origin followed
(move.py) either its new place (path, line, symbol; its evidence when only its whitespace changed) with its
`read_at` removed, or, when it must be read again, a `read_at` naming the commit it was last read at, its
place left as it was. ranges/coverage.yaml, which must speak of the catalog's commit, gets the same commit.
Both files are written all or none, never through a symlink (disk/files.py).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.scalarstring import ScalarString

from metrics_manual.coverage.move import Move, same_commit
from metrics_manual.diagnostics.finding import ManualError, SourceError
from metrics_manual.disk.files import WriteError, read_text, symlink_on_the_way, write_real_file
from metrics_manual.model.schema import Catalog
from metrics_manual.source.load import CATALOG, COVERAGE, validate
from metrics_manual.source.reader import Loc, read_yaml
from metrics_manual.source.yaml_edit import YamlEdit, text_scalar


def _at(data: CommentedMap, loc: Loc) -> CommentedMap:
    node: Any = data
    for part in loc:
        node = node[part]
    assert isinstance(node, CommentedMap)
    return node


def _like(old: Any, new: str) -> str:
    """`new` quoted as `old` was (the catalog quotes its evidence lines)."""
    return type(old)(new) if isinstance(old, ScalarString) else new


def moved_catalog(text: str, follow: Move, date: str | None) -> str:
    """The catalog's text moved to `follow.head`; refused (a SourceError) if what it writes does not validate."""
    edit = YamlEdit(text, CATALOG)
    code = edit.data["code"]
    moved = {"commit": follow.head, **({"date": date} if date and "date" in code else {})}
    edit.update(code, {k: _like(code.get(k), v) for k, v in moved.items()})
    for entry in follow.entries:
        origin = _at(edit.data, entry.loc)
        if entry.flagged:
            if entry.read_at is None:  # the first to come past it: the commit at which it was last read
                origin.insert(0, "read_at", text_scalar(entry.base))
            continue
        for f in entry.places:
            assert f.anchor is not None
            place = origin if f.place.part == "origin" else origin["named_at"]
            a = f.anchor
            new = {"path": a.path, "symbol": a.symbol, "line": a.line, "evidence": a.evidence}
            edit.update(place, {k: _like(place.get(k), v) if isinstance(v, str) else v for k, v in new.items() if v})
        origin.pop("read_at", None)
    for section in edit.data["sections"]:  # read at the commit the catalog moves to: nothing left to read
        for metric in section["metrics"]:
            origin = metric.get("origin")
            if isinstance(origin, CommentedMap) and "read_at" in origin and same_commit(origin["read_at"], follow.head):
                origin.pop("read_at")
    out = edit.text()
    doc, found = read_yaml(out, CATALOG)
    _, problems = validate(Catalog, doc)
    if found or problems:  # never: the edit sets strings and numbers the model takes
        raise SourceError([*found, *problems])
    return out


def moved_coverage(text: str, commit: str) -> str:
    edit = YamlEdit(text, COVERAGE)
    edit.update(edit.data, {"commit": _like(edit.data.get("commit"), commit)})
    return edit.text()


def write(project: Path, changes: list[tuple[Path, str | None, str]]) -> list[Path]:
    """Write each (file, text read, new text) that changed: all or none, atomically, never through a symlink,
    and none that changed since it was read (or could not be read as text). The files written."""
    for path, old, _ in changes:  # every refusal before the first write
        link = symlink_on_the_way(project, path)
        if link is not None:
            raise WriteError(
                f"cannot write {path}: {link} is a symlink; coverage --write writes only real files; nothing was written"
            )
        if old is None or read_text(path) != old:
            raise WriteError(
                f"cannot write {path}: it is no UTF-8 text, or it changed since coverage read it; nothing was written"
            )
    done: list[tuple[Path, str]] = []
    try:
        for path, old, new in changes:
            if new == old or old is None:
                continue
            write_real_file(project, path, new)
            done.append((path, old))
    except ManualError as err:
        for path, old in reversed(done):
            with contextlib.suppress(ManualError):
                write_real_file(project, path, old)
        raise WriteError(f"{err}; nothing was changed") from None
    return [p for p, _ in done]
