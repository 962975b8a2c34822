"""Read one YAML file of ranges/ into plain data, remembering where each value stood.

PyYAML's own constructors accept duplicate keys silently and build objects for
tags; we compose nodes with libyaml and build the data ourselves, so both are
findings, nothing is ever constructed from a tag, and every value keeps its
line and column for error messages.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import Finding

try:  # rapidyaml reads large valid sources fast; without it every file takes the PyYAML path
    import ryml
except ImportError:  # pragma: no cover
    ryml = None

try:  # libyaml is several times faster; the pure-Python parser gives the same nodes.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

Loc = tuple[str | int, ...]

_T = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_T + n for n in ("str", "int", "float", "bool", "null"))
_MAP, _SEQ = _T + "map", _T + "seq"
_scalar = yaml.constructor.SafeConstructor()


@dataclass
class Document:
    """The data of one file and the 1-based (line, col) of each value and key in it."""

    path: str
    data: Any
    values: dict[Loc, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Loc, tuple[int, int]] = field(default_factory=dict)

    def where(self, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """Position of the deepest part of `loc` that exists in the data.

        Parts that are not in the data (such as the tag of a union that a validator
        inserts) are skipped, so a validator's location maps to the nearest value.
        """
        found: Loc = ()
        node = self.data
        for part in loc:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
                node = node[part]
            else:
                continue
            found = (*found, part)
        if key and found in self.keys:
            return self.keys[found]
        return self.values.get(found, (1, 1))

    def finding(self, loc: Loc, message: str, *, key: bool = False) -> Finding:
        line, col = self.where(loc, key=key)
        return Finding(self.path, line, col, message)


def _tag(tag: str) -> str:
    return tag.replace(_T, "!!")


def _pos(node: Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.findings: list[Finding] = []
        self.seen: set[int] = set()

    def error(self, node: Node, message: str) -> None:
        line, col = _pos(node)
        self.findings.append(Finding(self.doc.path, line, col, message))

    def build(self, node: Node, loc: Loc) -> Any:
        self.doc.values[loc] = _pos(node)
        if isinstance(node, ScalarNode):
            return self.scalar(node, loc)
        # An alias repeats a node: refuse it, so a few bytes cannot expand into gigabytes.
        if id(node) in self.seen:
            self.error(node, "anchors and aliases (&name, *name) are not supported here; write the value out")
            return None
        self.seen.add(id(node))
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ:
                self.error(node, f"YAML tag {_tag(node.tag)!r} is not allowed; use a plain list")
                return None
            return [self.build(item, (*loc, i)) for i, item in enumerate(node.value)]
        assert isinstance(node, MappingNode)
        if node.tag != _MAP:
            self.error(node, f"YAML tag {_tag(node.tag)!r} is not allowed; use a plain mapping")
            return None
        out: dict[str, Any] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, ScalarNode) or knode.tag != _STR:
                what = knode.tag.replace(_T, "") if isinstance(knode, ScalarNode) else "collection"
                self.error(knode, f"mapping keys must be plain strings, not a {what}; quote the key")
                continue
            key = knode.value
            if key == "<<":
                self.error(knode, "merge keys (<<) are not supported here; write the values out")
                continue
            kloc = (*loc, key)
            if key in out:
                first = self.doc.keys[kloc]
                self.error(knode, f"duplicate key {key!r} (first defined at line {first[0]}, column {first[1]})")
                continue
            self.doc.keys[kloc] = _pos(knode)
            out[key] = self.build(vnode, kloc)
        return out

    def scalar(self, node: ScalarNode, loc: Loc) -> Any:
        tag = node.tag
        if tag == _STR:
            return node.value
        if tag == _INT:
            return _scalar.construct_yaml_int(node)
        if tag == _FLOAT:
            value = _scalar.construct_yaml_float(node)
            if not math.isfinite(value):
                field = f"{loc[-1]}: " if loc and isinstance(loc[-1], str) else ""
                self.error(node, f"{field}{node.value!r} is not a finite number; ranges must be finite")
                return None
            return value
        if tag == _BOOL:
            return _scalar.construct_yaml_bool(node)
        if tag == _NULL:
            return None
        if tag == _T + "timestamp":
            self.error(node, f"{node.value!r} reads as a date; quote it to make it a string")
        else:
            self.error(node, f"YAML tag {_tag(tag)!r} is not allowed; only plain strings, numbers, booleans, lists and mappings are")
        return None


# The fast path reads YAML 1.2 (rapidyaml), the authoritative one YAML 1.1 (PyYAML). It steps
# aside for any text the two could read differently, and for every construct we refuse.
# Each scan starts with a literal or a character class, so it runs at C speed.
_ODD_CHARACTERS = re.compile(  # what PyYAML will not read, and line breaks other than \n and \r\n
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\x85\u2028\u2029]|\r(?!\n)"
)
_ODD_ASCII = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)")
# Merge keys, directives, document markers, and tabs (PyYAML refuses them where rapidyaml
# may take them for indentation).
_MARKERS = ("<<", "\n%", "\n---", "\n...", "\t")
# Where it starts a node: a tag, an anchor or an alias, a reserved indicator that PyYAML refuses
# and rapidyaml reads as text, or a plain date (YAML 1.1 reads a timestamp).
_NODE_START = re.compile(r"[!&*@`%]|(?<=[0-9]{4})-[0-9][0-9]?-[0-9]")
# Strings in rapidyaml's JSON that YAML 1.1 reads as booleans, nulls or numbers, and numbers
# with an exponent (YAML 1.1 wants a dot and a sign in them).
_RISKY_JSON = re.compile(
    r'"(?=[yYnNoOtTfF~0-9+.-])(?:[yYnN~]|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF|True|TRUE|False|FALSE|Null|NULL'
    r"|[-+]?(?:0[0-7_]+|0[xob][0-9a-fA-F_]*|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|[0-9]+_[0-9_]*"
    r"|[0-9_]*\.?[0-9_]*[eE][-+]?[0-9]+|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|\.(?:inf|Inf|INF|nan|NaN|NAN)"
    r'|[0-9]+\.[0-9_]*(?:[eE][-+][0-9]+)?))"'
)
_EXPONENT = re.compile(r"[0-9][eE][-+]?[0-9]")


def _risky_text(text: str) -> bool:
    odd = _ODD_ASCII if text.isascii() else _ODD_CHARACTERS
    return (text.startswith(("%", "---", "...")) or any(m in text for m in _MARKERS) or odd.search(text) is not None
            or any(_starts_a_node(text, m.start() - (4 if m.group()[0] == "-" else 0)) for m in _NODE_START.finditer(text)))


def _risky_json(emitted: str) -> bool:
    if _RISKY_JSON.search(emitted):
        return True
    # An exponent outside a string: a number YAML 1.1 may read as a string. Outside means an
    # even count of quotes before it on its line; a line with escapes is taken as risky.
    for m in _EXPONENT.finditer(emitted):
        before = emitted[emitted.rfind("\n", 0, m.start()) + 1 : m.start()]
        if "\\" in before or before.count('"') % 2 == 0:
            return True
    return False


def _starts_a_node(text: str, at: int) -> bool:
    before = text[text.rfind("\n", 0, at) + 1 : at].rstrip(" \t")  # this line only: O(line), not O(file)
    return not before or before[-1] in ":[{,-?"


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


def read_fast(text: str) -> Any | None:
    """The data of `text` through rapidyaml, when that is sure to equal what PyYAML reads; else None.

    PyYAML builds a Python object per event and took seconds on large sources; rapidyaml
    parses in C++ and emits JSON. Where the two YAML dialects could differ, or on any
    error at all, this returns None and the caller takes the path that reports positions.
    """
    if ryml is None or _risky_text(text):
        return None
    try:
        with _stderr_silenced():  # rapidyaml prints its parse errors before it raises them
            tree = ryml.parse_in_arena(text.encode("utf-8"))
        emitted = ryml.emit_json(tree)
        if _risky_json(emitted):
            return None
        data = json.loads(emitted, object_pairs_hook=_no_duplicates)
    except Exception:  # any failure of the fast path only means: take the authoritative one
        return None
    return data if isinstance(data, dict) else None


def byte_position(raw: bytes, at: int) -> tuple[int, int]:
    """1-based line and column of byte `at`."""
    return raw.count(b"\n", 0, at) + 1, at - (raw.rfind(b"\n", 0, at) + 1) + 1


def _decode(file: Path, display: str) -> tuple[str | None, list[Finding]]:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        return None, [Finding(display, 1, 1, f"cannot read file: {exc.strerror}")]
    try:
        return raw.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError as exc:
        line, col = byte_position(raw, exc.start)
        return None, [Finding(display, line, col, f"file is not UTF-8 (byte 0x{raw[exc.start]:02x}); save it as UTF-8")]


def read_document(file: Path, display: str, *, fast: bool = False) -> tuple[Document, list[Finding]]:
    """Read `file`; `display` is the path used in findings (relative to the project root).

    With fast=True the data may come without positions: use it only if it validates, and
    read again without fast to report findings.
    """
    doc = Document(display, None)
    text, findings = _decode(file, display)
    if text is None:
        return doc, findings
    if fast and (data := read_fast(text)) is not None:
        doc.data = data
        return doc, []
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        return doc, [Finding(display, line, col, f"invalid YAML: {problem}")]
    except yaml.YAMLError as exc:
        return doc, [Finding(display, 1, 1, f"invalid YAML: {exc}")]
    if node is None:
        return doc, [Finding(display, 1, 1, "file is empty; it must hold a YAML mapping")]
    builder = _Builder(doc)
    doc.data = builder.build(node, ())
    if not builder.findings and not isinstance(doc.data, dict):
        builder.error(node, "the file must hold a YAML mapping at the top")
    return doc, builder.findings
