"""Read one YAML file of ranges/ into plain data, remembering where each value stood.

One reader decides what a source is and means. libyaml's event stream is flat (it never
recurses on the input's depth), and a loop with an explicit stack turns it into data, so
no input can exhaust Python's or C's stack. Plain scalars are resolved with PyYAML's own
resolver table, then held to the source's rules: a number is a plain decimal or an
exponent form, never an octal, hexadecimal, binary, base-60 or underscored one that YAML 1.1
would silently read as another value. Duplicate keys, tags, anchors, aliases, merge keys,
dates and non-finite numbers are findings; nothing is ever constructed from a tag.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.disk.files import file_kind
from metrics_manual.text import ECHO, clip, quoted

try:  # libyaml is several times faster; the pure-Python parser gives the same events.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

Loc = tuple[str | int, ...]

MAX_DEPTH = 64  # real sources nest five levels; this only stops hostile input
MAX_FINDINGS = 1000  # a file's findings before its reading stops: 5 MB of duplicate keys must not take GBs
MAX_BYTES = 32 * 2**20

_T = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = (_T + n for n in ("str", "int", "float", "bool", "null"))
# The very table yaml.safe_load resolves plain scalars with (yaml.resolver.Resolver), by first
# character as BaseResolver.resolve looks it up, with our own tag strings (compared with `is`).
_CANONICAL = {t: t for t in (_STR, _INT, _FLOAT, _BOOL, _NULL)}
_WILDCARD = yaml.resolver.Resolver.yaml_implicit_resolvers.get(None, [])
_IMPLICIT = {
    first: tuple((_CANONICAL.get(tag, tag), regexp) for tag, regexp in [*resolvers, *_WILDCARD])
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
    if first is not None
}
_NO_RESOLVERS = tuple((_CANONICAL.get(tag, tag), regexp) for tag, regexp in _WILDCARD)


def _resolve(value: str) -> str:
    """The tag PyYAML gives the plain scalar `value` (what BaseResolver.resolve does, minus its
    generality: a plain, untagged scalar), several times faster."""
    for tag, regexp in _IMPLICIT.get(value[:1], _NO_RESOLVERS):
        if regexp.match(value):
            return str(tag)
    return _STR


_CONSTRUCT = yaml.constructor.SafeConstructor()  # only to show in a hint what YAML 1.1 would have read
# What the source accepts of the forms PyYAML resolves as numbers and booleans.
_DECIMAL_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_DECIMAL_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+][0-9]+)?\Z")
# YAML 1.1 reads `1e-3`, `1.0e3` (it wants a dot and a sign) and `-.5` as strings; a user means numbers.
_NUMBER_AS_TEXT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+\Z|[-+]\.[0-9]+\Z")
_DECIMAL_COMMA = re.compile(r"[-+]?[0-9]+,[0-9]+\Z")
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_QUOTED = re.compile(rf"'(?:[^'\\\n]|\\.){{{ECHO + 1},}}'|\"(?:[^\"\\\n]|\\.){{{ECHO + 1},}}\"")  # a long repr()


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

    def finding(self, loc: Loc, message: str, *, code: Code, key: bool = False) -> Finding:
        line, col = self.where(loc, key=key)
        if len(message) > 2 * ECHO:  # a validator may quote a whole value: keep a bit of it and the hint after it
            message = _QUOTED.sub(lambda m: m.group()[: ECHO + 1] + "…" + m.group()[0], message)
            if len(message) > 4 * ECHO:
                message = message[:ECHO] + "…" + message[-ECHO:]
        return Finding(self.path, line, col, message, code=code)


def _tag(tag: str) -> str:
    return tag.replace(_T, "!!")


def _yaml11_value(tag: str, value: str) -> Any:
    """What yaml.safe_load makes of a plain scalar (for hints)."""
    return _CONSTRUCT.construct_object(ScalarNode(tag, value))


def _as_read(tag: str, value: str) -> str:
    """ " (15)": the value YAML 1.1 reads, for a hint; nothing for a long one."""
    if len(value) > 24:
        return ""
    try:
        return f" ({_yaml11_value(tag, value)})"
    except ValueError:  # PyYAML's own constructor fails on a few, such as `0b_`
        return ""


def _number_form(value: str, tag: str) -> str:
    """Why a plain scalar that YAML 1.1 reads as a number is not one the source accepts."""
    digits = value.lstrip("+-")
    if ":" in value:
        return f"{quoted(value)} reads as a base-60 number{_as_read(tag, value)} in YAML 1.1; quote it if it is text"
    if digits[:2] in ("0x", "0X"):
        return f"{quoted(value)} is a hexadecimal number; write it in decimal{_as_read(tag, value)}"
    if digits[:2] in ("0b", "0B"):
        return f"{quoted(value)} is a binary number; write it in decimal{_as_read(tag, value)}"
    if digits[:1] == "0" and tag == _INT:
        return (
            f"{quoted(value)} reads as an octal number{_as_read(tag, value)} in YAML 1.1; "
            "write it without the leading zero, or quote it if it is text"
        )
    if "_" in value:
        return f"{quoted(value)} has underscores, which YAML 1.1 drops; write {clip(value.replace('_', ''))}"
    return f"{quoted(value)} is not a plain decimal number; write it like 12, -3, 0.35 or 1.0e-3"


class _TooMany(Exception):
    """A file with more findings than anyone reads: the rest of it is not read."""

    def __init__(self, mark: Any) -> None:
        super().__init__()
        self.mark = mark


class _Reader:
    """Builds the data of one document from libyaml's events, collecting findings on the way."""

    def __init__(self, doc: Document, positions: bool) -> None:
        self.doc = doc
        self.positions = positions
        self.findings: list[Finding] = []
        self.anchors: set[str] = set()
        self.root_mark: Any = None
        self.documents = 0  # the documents the stream started: one is a source, more a finding

    def error(self, mark: Any, code: Code, message: str) -> None:
        self.findings.append(Finding(self.doc.path, mark.line + 1, mark.column + 1, message, code=code))
        if len(self.findings) >= MAX_FINDINGS:
            raise _TooMany(mark)

    def resolve(self, value: str) -> str:
        tag = _TAGS.get(value)
        if tag is None:
            if len(_TAGS) >= _CACHED:
                _TAGS.clear()
            tag = _TAGS[value] = _resolve(value)
        return tag

    def scalar(self, ev: ScalarEvent, field: Any) -> Any:
        """The value of a scalar that is not a mapping key; `field` is its key, if any."""
        value = ev.value
        if ev.anchor is not None:
            self.anchor(ev)
        if ev.tag is not None:
            self.error(
                ev.start_mark,
                codes.YAML_TAG,
                f"YAML tag {_tag(ev.tag)!r} is not allowed; only plain strings, numbers, booleans, lists and mappings are",
            )
            return None
        if not ev.implicit[0]:  # quoted or block text
            return value
        before = len(self.findings)
        data = self.plain_value(ev, self.resolve(value), _prefix(field))
        if len(self.findings) == before:
            if len(_PLAIN) >= _CACHED:
                _PLAIN.clear()
            _PLAIN[value] = data
        return data

    def plain_value(self, ev: ScalarEvent, tag: str, field: str) -> Any:
        value = ev.value
        if tag == _STR:
            if _NUMBER_AS_TEXT.match(value):
                return self.finite(ev, field, float(value))
            if _DECIMAL_COMMA.match(value):
                self.comma(ev.start_mark, field, value)
                return None
            return value
        if tag == _INT:
            if _DECIMAL_INT.match(value):
                return int(value)
        elif tag == _FLOAT:
            if value.lstrip("+-").lower() in (".inf", ".nan"):
                return self.finite(ev, field, math.inf)
            if _DECIMAL_FLOAT.match(value):
                return self.finite(ev, field, float(value))
        elif tag == _NULL:
            return None
        elif tag == _BOOL:
            if value in _BOOLS:
                return _BOOLS[value]
            truth = "true" if _yaml11_value(tag, value) else "false"
            self.error(
                ev.start_mark,
                codes.YAML11_BOOLEAN,
                f"{field}{quoted(value)} reads as a boolean ({truth}) in YAML 1.1; "
                f"write {truth}, or quote it if it is text",
            )
            return None
        elif tag == _T + "timestamp":
            self.error(
                ev.start_mark, codes.DATE_VALUE, f"{quoted(value)} reads as a date; quote it to make it a string"
            )
            return None
        else:  # `=` and `<<` as values: YAML 1.1 gives them meanings of their own
            self.error(
                ev.start_mark,
                codes.YAML11_SYMBOL,
                f"{field}{quoted(value)} has a meaning of its own in YAML 1.1 ({_tag(tag)}); quote it",
            )
            return None
        self.error(ev.start_mark, codes.NUMBER_FORM, field + _number_form(value, tag))
        return None

    def finite(self, ev: ScalarEvent, field: str, number: float) -> float | None:
        if math.isfinite(number):
            return number
        self.error(
            ev.start_mark, codes.NON_FINITE, f"{field}{quoted(ev.value)} is not a finite number; ranges must be finite"
        )
        return None

    def comma(self, mark: Any, field: str, text: str) -> None:
        self.error(
            mark,
            codes.DECIMAL_COMMA,
            f"{field}{quoted(text)} looks like a number with a decimal comma; "
            f"write {clip(text.replace(',', '.'))}, or quote it if it is text",
        )

    def key(self, ev: Any, mapping: dict[str, Any], loc: Loc | None, last: Any) -> Any:
        """The key a mapping entry starts with, or _SKIP when the entry is refused; `last` is
        the scalar read before it."""
        if type(ev) is not ScalarEvent:
            self.error(
                ev.start_mark, codes.KEY_NOT_TEXT, "mapping keys must be plain strings, not a collection; quote the key"
            )
            return _SKIP
        key = ev.value
        if ev.anchor is not None:
            self.anchor(ev)
        if ev.tag is not None:
            self.error(
                ev.start_mark, codes.YAML_TAG, f"YAML tag {_tag(ev.tag)!r} is not allowed on a key; quote the key"
            )
            return _SKIP
        tag = _STR if not ev.implicit[0] else self.resolve(key)
        if tag != _STR and key != "<<":
            # `{min: 0,35}`: YAML reads `min: 0` and a key `35`
            if tag in (_INT, _FLOAT) and mapping and _number_just_before(last, ev.start_mark):
                self.comma(last.start_mark, _prefix(next(reversed(mapping))), f"{last.value},{key}")
            else:
                self.error(
                    ev.start_mark,
                    codes.KEY_NOT_TEXT,
                    f"mapping keys must be plain strings, not a {tag.replace(_T, '')}; quote the key",
                )
            return _SKIP
        if key == "<<":
            self.error(ev.start_mark, codes.MERGE_KEY, "merge keys (<<) are not supported here; write the values out")
            return _SKIP
        if key in mapping:
            first = self.doc.keys.get((*loc, key)) if loc is not None else None
            where = f" (first defined at line {first[0]}, column {first[1]})" if first else ""
            self.error(ev.start_mark, codes.DUPLICATE_KEY, f"duplicate key {quoted(key)}{where}")
            return _SKIP
        if loc is not None:
            start: Any = ev.start_mark
            self.doc.keys[(*loc, key)] = (start.line + 1, start.column + 1)
        return key

    def anchor(self, ev: Any) -> None:
        self.anchors.add(ev.anchor)
        self.error(
            ev.start_mark,
            codes.ANCHOR_ALIAS,
            "anchors and aliases (&name, *name) are not supported here; write the value out",
        )

    def alias(self, ev: AliasEvent) -> None:
        if ev.anchor not in self.anchors:  # the anchor got its finding already
            self.anchor(ev)

    def read(self, loader: Any) -> Any:
        """The data of the one document in `loader`'s stream (_EMPTY if there is none)."""
        get = loader.get_event
        positions = self.positions
        values, keys = self.doc.values, self.doc.keys
        plain, tags = _PLAIN, _TAGS
        # The open collection lives in locals (the hot loop reads them for every event): `cont` is the
        # list or dict, `loc` its path from the top (kept only when positions are recorded; None for the
        # list that receives the top value), `pend` what a mapping waits for: _KEY a key, a key its value,
        # _SKIPKEY the end of a refused key, _SKIP the value of a refused entry; None for a list. `stack`
        # keeps the enclosing ones. Plain scalars (most events) are read here, the rarer events by methods.
        top: list[Any] = []
        cont: Any = top  # list[Any] | dict[str, Any]
        loc: Loc | None = None
        pend: Any = None  # a key (str), None in a list, or one of the sentinels
        stack: list[_Open] = []
        last: ScalarEvent | None = None  # a key after it may be the rest of a decimal comma
        while True:
            ev = get()
            kind = type(ev)
            if kind is ScalarEvent:
                if pend is _KEY:
                    key = ev.value
                    # The common case inline: a plain key that PyYAML resolves as a string, new here.
                    if (
                        tags.get(key) is _STR
                        and ev.implicit[0]
                        and ev.tag is None
                        and ev.anchor is None
                        and key not in cont
                    ):
                        pend = key
                        if positions:
                            keys[(*loc, key)] = (ev.start_mark.line + 1, ev.start_mark.column + 1)  # type: ignore[misc]
                    else:
                        pend = self.key(ev, cont, loc if positions else None, last)
                    last = ev
                    continue
                if positions:
                    here = () if loc is None else (*loc, pend if pend is not None else len(cont))
                    values[here] = (ev.start_mark.line + 1, ev.start_mark.column + 1)
                if ev.implicit[0] and ev.tag is None and ev.anchor is None:
                    value = plain.get(ev.value, _MISS)
                    if value is _MISS:
                        value = self.scalar(ev, pend)
                elif ev.tag is None and ev.anchor is None:
                    value = ev.value
                else:
                    value = self.scalar(ev, pend)
                last = ev
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                value = cont
                cont, loc, pend = stack.pop()
                if pend is _SKIPKEY:
                    pend = _SKIP
                    continue
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                if len(stack) >= MAX_DEPTH:  # stop here: reading on would only nest deeper
                    return self.too_deep(ev)
                enclosing, (cont, loc, pend) = self.start(ev, kind, (cont, loc, pend), cont is top)
                stack.append(enclosing)
                continue
            elif kind is AliasEvent:
                self.alias(ev)
                if pend is _KEY:
                    pend = _SKIP
                    continue
                value = None
            else:
                done = self.boundary(ev, kind, top)
                if done is _MISS:
                    continue
                return done
            if pend is None:
                cont.append(value)
            else:
                if pend is not _SKIP:
                    cont[pend] = value
                pend = _KEY

    def too_deep(self, ev: Any) -> None:
        self.error(
            ev.start_mark, codes.TOO_DEEP, f"the data nests deeper than {MAX_DEPTH} levels; a source needs only a few"
        )

    def boundary(self, ev: Any, kind: type, top: list[Any]) -> Any:
        """A document's start or the stream's end: the data to return, or _MISS to read on."""
        if kind is DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                self.error(
                    ev.start_mark,
                    codes.INVALID_YAML,
                    "invalid YAML: expected a single document in the stream but found another document",
                )
                return top[0] if top else None
        elif kind is StreamEndEvent:
            return (top[0] if top else None) if self.documents else _EMPTY
        return _MISS

    def start(self, ev: Any, kind: type, parent: _Open, at_top: bool) -> tuple[_Open, _Open]:
        """A mapping or list starts: what to keep of the enclosing collection, and the new one."""
        cont, loc, pend = parent
        if self.positions or pend is _KEY or at_top or ev.anchor is not None or ev.tag is not None:
            return self.open(ev, kind, parent, at_top)
        # The common case: a plain collection as a value, no position to record.
        return parent, (({}, None, _KEY) if kind is MappingStartEvent else ([], None, None))

    def open(self, ev: Any, kind: type, parent: _Open, at_top: bool) -> tuple[_Open, _Open]:
        """A mapping or list starts, at the top, as a key, with a position to record, an anchor or a tag
        (`start` does the common case itself)."""
        here: Loc | None = None
        cont, loc, pend = parent
        if pend is _KEY:  # a collection as a key: read it only to skip it
            self.key(ev, cont, None, None)
            pend = _SKIPKEY
            if self.positions and loc is not None:
                here = (*loc, -1)  # no value ever sits at index -1 of a mapping
        elif at_top:
            self.root_mark = ev.start_mark
            here = ()
        elif self.positions and loc is not None:
            here = (*loc, pend if pend is not None else len(cont))
            self.doc.values[here] = (ev.start_mark.line + 1, ev.start_mark.column + 1)
        self.start_checks(ev, kind)
        opened: _Open = ({}, here, _KEY) if kind is MappingStartEvent else ([], here, None)
        return (cont, loc, pend), opened

    def start_checks(self, ev: Any, kind: type) -> None:
        """The findings a collection's start may carry: an anchor, a tag."""
        if ev.anchor is not None:
            self.anchor(ev)
        if ev.tag is not None:
            what = "list" if kind is SequenceStartEvent else "mapping"
            self.error(ev.start_mark, codes.YAML_TAG, f"YAML tag {_tag(ev.tag)!r} is not allowed; use a plain {what}")


# A collection being read: the list or dict (list[Any] | dict[str, Any]), its path from the top,
# what it waits for (a key (str), None in a list, or one of the sentinels). A plain tuple: one is
# made for every collection in the source.
_Open = tuple[Any, "Loc | None", Any]


def _number_just_before(last: Any, mark: Any) -> bool:
    """Whether `last` is a plain whole number that ends one comma before `mark`."""
    if not isinstance(last, ScalarEvent) or not last.implicit[0] or not last.value.isdigit():
        return False
    end: Any = last.end_mark
    return bool(end.line == mark.line and end.column + 1 == mark.column)


def _prefix(field: Any) -> str:
    return f"{field}: " if isinstance(field, str) else ""


_KEY, _SKIPKEY, _SKIP, _EMPTY, _MISS = object(), object(), object(), object(), object()
# Plain scalar -> its tag in PyYAML's table, and -> its value where it gave no finding: pure
# functions of the text, shared by every file (metric keys and numbers repeat across profiles).
_TAGS: dict[str, str] = {}
_PLAIN: dict[str, Any] = {}
_CACHED = 2**16  # entries; then the cache starts over, so memory stays flat


# What libyaml (and PyYAML's own reader) refuse anywhere in a stream, even inside quotes: its
# reader stops at the first one, with a message of its own and no line.
_FORBIDDEN = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What it accepts but should not: a byte order mark past the start (skipped at a line's start,
# kept in the text elsewhere) and the line breaks of YAML 1.1 alone (a file's lines would no
# longer be the ones its editor shows, and a quoted value would fold them into spaces).
_ODD = re.compile("[\x85\u2028\u2029\ufeff]")
_ODD_WHY = {
    "\ufeff": "a byte order mark ({}) is allowed only as the first character of a file; remove it",
    "\x85": "{} (a next-line character) is a line break in YAML 1.1 but not in YAML 1.2 or most editors; "
    "use a plain line break, or write the escape {} inside double quotes",
    "\u2028": "{} (a line separator) is a line break in YAML 1.1 but not in YAML 1.2 or most editors; "
    "use a plain line break, or write the escape {} inside double quotes",
    "\u2029": "{} (a paragraph separator) is a line break in YAML 1.1 but not in YAML 1.2 or most editors; "
    "use a plain line break, or write the escape {} inside double quotes",
}


def _escape(char: str) -> str:
    """A character as the escape both Python and YAML's double quotes read: \\x01, \\ufffe."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _char_finding(text: str, at: int, display: str) -> Finding:
    """The finding for the character at `at` that YAML forbids or reads apart: where it stands in the
    file's own lines, which it is, and why."""
    char = text[at]
    # Lines end at \n, \r\n or a lone \r, as YAML and editors count them.
    line = text.count("\n", 0, at) + text.count("\r", 0, at) - text.count("\r\n", 0, at) + 1
    col = at - (max(text.rfind("\n", 0, at), text.rfind("\r", 0, at)) + 1) + 1
    shown = _escape(char)
    if char in _ODD_WHY:
        message = _ODD_WHY[char].format(shown, shown)
    else:
        what = "a non-character" if 0xFFFE <= ord(char) <= 0xFFFF else "a control character"
        message = (
            f"the character {shown} ({what}) is not allowed in YAML, not even inside quotes; "
            f"remove it, or write the escape {shown} inside double quotes"
        )
    return Finding(display, line, col, message, code=codes.FORBIDDEN_CHARACTER)


def _odd_character(text: str, display: str) -> Finding | None:
    """A finding for the first character YAML accepts but reads apart from what the file shows."""
    if text.isascii():  # the common case, at no cost: the flag is kept with the string
        return None
    found = _ODD.search(text)
    return _char_finding(text, found.start(), display) if found else None


def read_yaml(text: str, display: str, *, positions: bool = True) -> tuple[Document, list[Finding]]:
    """The data of YAML `text` and every finding; `display` is the path that findings name.

    positions=False skips recording where each value stood (findings of the reader keep
    theirs): for a source that is expected to validate.
    """
    doc = Document(display, None)
    if odd := _odd_character(text, display):
        return doc, [odd]
    reader = _Reader(doc, positions)
    loader = _Loader(text)
    try:
        data = reader.read(loader)
    except _TooMany as stop:
        line, col = stop.mark.line + 1, stop.mark.column + 1
        message = f"{MAX_FINDINGS:,} findings in this file: the rest of it was not read; fix these first"
        return doc, [*reader.findings, Finding(display, line, col, message, code=codes.INVALID_YAML)]
    except yaml.reader.ReaderError as exc:
        # Its own position counts bytes or characters by the loader, and its message names
        # "<unicode string>": place the character in the file's lines and say what it is.
        if forbidden := _FORBIDDEN.search(text):
            return doc, [*reader.findings, _char_finding(text, forbidden.start(), display)]
        return doc, [  # pragma: no cover - the reader refuses only what _FORBIDDEN finds
            *reader.findings,
            Finding(display, 1, 1, f"invalid YAML: {clip(str(exc.reason))}", code=codes.INVALID_YAML),
        ]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = " ".join(p for p in (exc.context, exc.problem) if p)
        return doc, [*reader.findings, Finding(display, line, col, f"invalid YAML: {problem}", code=codes.INVALID_YAML)]
    except yaml.YAMLError as exc:  # its text's first line: a "position N" on the next would not be the file's
        return doc, [
            *reader.findings,
            Finding(
                display,
                1,
                1,
                f"invalid YAML: {clip(str(exc).splitlines()[0] if str(exc) else '')}",
                code=codes.INVALID_YAML,
            ),
        ]
    finally:
        loader.dispose()
    if data is _EMPTY:
        return doc, [Finding(display, 1, 1, "file is empty; it must hold a YAML mapping", code=codes.NOT_A_MAPPING)]
    doc.data = data
    if not reader.findings and not isinstance(data, dict):
        mark = reader.root_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reader.findings.append(
            Finding(display, line, col, "the file must hold a YAML mapping at the top", code=codes.NOT_A_MAPPING)
        )
    return doc, reader.findings


def byte_position(raw: bytes, at: int) -> tuple[int, int]:
    """1-based line and column of byte `at`."""
    return raw.count(b"\n", 0, at) + 1, at - (raw.rfind(b"\n", 0, at) + 1) + 1


@dataclass(frozen=True)
class Reading:
    """What `read_bytes` reads in one place: its cap, and how its refusals name the place and what it holds."""

    limit: int
    inside: str  # "the project"
    holds: str  # "ranges/ holds only YAML files"


def _source() -> Reading:
    return Reading(MAX_BYTES, "the project", "ranges/ holds only YAML files")  # MAX_BYTES read at each call


def _not_regular(mode: int, reading: Reading) -> str | None:
    kind = file_kind(mode)
    return None if kind is None else f"not a regular file but {kind}; {reading.holds}"


def read_bytes(file: Path, root: Path | None = None, reading: Reading | None = None) -> tuple[bytes | None, str]:
    """The bytes of `file`, or None and why not: only a regular file inside `root`, of at most
    the limit (MAX_BYTES for a source file), is read (a link out of the root, a pipe or a device never is)."""
    r = reading or _source()
    try:
        if root is not None and not file.resolve(strict=True).is_relative_to(root.resolve()):
            return None, f"the file is a link to a place outside {r.inside}; only files inside it are read"
        st = os.stat(file)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python < 3.13
        return None, f"cannot read file: {getattr(exc, 'strerror', None) or 'symbolic link loop'}"
    if (why := _not_regular(st.st_mode, r)) or (why := too_large(st.st_size, r.limit)):
        return None, why
    try:  # O_NONBLOCK: should the file turn into a pipe after the check, opening it still returns at once
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        return None, f"cannot read file: {exc.strerror}"
    with open(fd, "rb", closefd=True) as f:
        st = os.fstat(fd)
        if (why := _not_regular(st.st_mode, r)) or (why := too_large(st.st_size, r.limit)):
            return None, why
        try:
            raw = f.read(r.limit + 1)
        except OSError as exc:
            return None, f"cannot read file: {exc.strerror}"
    return (None, too_large(len(raw), r.limit) or "") if len(raw) > r.limit else (raw, "")


def too_large(size: int, limit: int) -> str | None:
    """Why a file of `size` bytes is not read, or None when it is at most `limit`."""
    if size <= limit:
        return None
    return f"the file has {size:,} bytes; a source file may have at most {limit:,}"


def _decode(file: Path, display: str, root: Path | None) -> tuple[str | None, list[Finding]]:
    raw, why = read_bytes(file, root)
    if raw is None:
        return None, [Finding(display, 1, 1, why, code=codes.UNREADABLE_FILE)]
    try:
        return raw.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError as exc:
        line, col = byte_position(raw, exc.start)
        message = f"file is not UTF-8 (byte 0x{raw[exc.start]:02x}); save it as UTF-8"
        return None, [Finding(display, line, col, message, code=codes.NOT_UTF8)]


def read_document(
    file: Path, display: str, *, fast: bool = False, root: Path | None = None
) -> tuple[Document, list[Finding]]:
    """Read `file`; `display` is the path used in findings (relative to the project root).

    With fast=True the values' positions are not recorded: whether the file is accepted,
    and what it means, are the same; read again without fast to place a validator's findings.
    `root`, when given, is the project: a file that resolves outside it is not read.
    """
    if root is None:  # `display` is relative to the project: the root is as many levels up
        root = file.parents[len(Path(display).parts) - 1] if display and not Path(display).is_absolute() else None
    text, findings = _decode(file, display, root)
    if text is None:
        return Document(display, None), findings
    doc, findings = read_yaml(text, display, positions=not fast)
    if findings and fast:  # the same reader again, to say where a duplicate key was first defined
        doc, findings = read_yaml(text, display)
    return doc, findings


def read_documents(
    files: Sequence[tuple[Path, str]], *, fast: bool = False
) -> Iterator[tuple[Document, list[Finding]]]:
    """`read_document` of each (file, display) in order, as each is read."""
    return (read_document(file, display, fast=fast) for file, display in files)
