"""Edit a YAML file of the source in place: only the values that change differ.

ruamel.yaml's round-trip mode keeps comments, key order, flow or block style, quoting
and folded text. It does not detect a file's indentation, so we try the usual ones and
keep the one that reproduces the unchanged file byte for byte; a file none reproduces
is refused rather than reformatted. derive edits a profile with it (derive/profile_edit.py),
`coverage --write` the catalog (coverage/rewrite.py).
"""

from __future__ import annotations

import difflib
import io
import itertools
import re
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.scalarstring import SingleQuotedScalarString
from ruamel.yaml.tokens import CommentToken

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, SourceError

Indent = tuple[int, int, int]
# mapping indent, sequence indent, offset of the dash: the styles people write by hand.
INDENTS: list[Indent] = [
    (m, s, o)
    for m, s, o in itertools.product((2, 4, 3), (2, 4, 3, 6), (0, 2, 1, 4))
    if o <= s - 2 or (o == 0 and s == 2)
]


def yaml_writer(indent: Indent) -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 1 << 16  # never fold a long line that was not folded
    y.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    return y


def dump(y: YAML, data: Any) -> str:
    out = io.StringIO()
    y.dump(data, out)
    return out.getvalue()


def merge(original: str, base: str, edited: str) -> str:
    """The edited file with every line the edit did not touch as the original has it.

    `base` is ruamel's dump of the unchanged file: it may respace a flow mapping or a
    list ({ a: 1 } -> {a: 1}). Lines that base and edited share are taken from the
    original; only lines the edit changed come from ruamel.
    """
    b, o, e = (t.splitlines(keepends=True) for t in (base, original, edited))
    norm = difflib.SequenceMatcher(None, b, o, autojunk=False).get_opcodes()

    def original_of(i1: int, i2: int) -> list[str]:
        out: list[str] = []
        for tag, n1, n2, m1, m2 in norm:
            if tag == "insert":
                if i1 <= n1 < i2 or (n1 == i2 == len(b)):
                    out += o[m1:m2]
            elif n1 < i2 and n2 > i1:
                if tag == "equal":
                    lo, hi = max(n1, i1), min(n2, i2)
                    out += o[m1 + lo - n1 : m1 + hi - n1]
                elif i1 <= n1 and n2 <= i2:
                    out += o[m1:m2]
                else:  # a respaced block the edit cuts through: its untouched lines as ruamel writes them
                    out += b[max(n1, i1) : min(n2, i2)]
        return out

    lines: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, b, e, autojunk=False).get_opcodes():
        lines += original_of(i1, i2) if tag == "equal" else e[j1:j2]
    return "".join(lines)


_TAB_COMMENT = re.compile(r"[ \t]*\t[ \t]*(?=#)")


def untab_comments(text: str) -> str:
    """The text with each tab in the blanks before a comment made a space (same length, same lines).

    A `#` starts a comment only outside quotes and after a blank; a line is scanned for that
    `#`, so a tab inside a quoted scalar stays.
    """
    if "\t" not in text:
        return text
    out = []
    for line in text.splitlines(keepends=True):
        at = _comment_start(line)
        if at is not None and "\t" in line[:at]:
            m = _TAB_COMMENT.search(line, 0, at + 1)
            while m is not None and m.end() != at:
                m = _TAB_COMMENT.search(line, m.end(), at + 1)
            if m is not None:
                line = line[: m.start()] + " " * (m.end() - m.start()) + line[m.end() :]
        out.append(line)
    return "".join(out)


def _comment_start(line: str) -> int | None:
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote == '"' and c == "\\":
            i += 2
            continue
        if quote is not None:
            if c == quote:
                if quote == "'" and line[i + 1 : i + 2] == "'":
                    i += 2
                    continue
                quote = None
        elif c in "\"'" and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
        i += 1
    return None


def flow_map(values: dict[str, Any]) -> CommentedMap:
    m = CommentedMap(values)
    m.fa.set_flow_style()
    return m


def flow_list(values: list[Any]) -> CommentedSeq:
    s = CommentedSeq(values)
    s.fa.set_flow_style()
    return s


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, bool) or isinstance(new, bool):
        return old is new
    if isinstance(old, (int, float)) and isinstance(new, (int, float)):
        return float(old) == float(new)
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(_same(old[k], new[k]) for k in old)
    return bool(old == new)


def text_scalar(value: str) -> str:
    """A string as the project's YAML 1.1 reader reads it back: quoted where PyYAML would quote it
    (`yes`, `1:20`, `null`, a commit of digits only are strings only quoted, which ruamel's YAML 1.2
    rules leave plain)."""
    plain = yaml.safe_dump(value, allow_unicode=True, width=1 << 16)
    return SingleQuotedScalarString(value) if plain.startswith(("'", '"')) else value


def _last_slot(node: Any) -> tuple[Any, Any, int] | None:
    """Where the comment after the last line of a block node is kept: (container, key, slot)."""
    slot: tuple[Any, Any, int] | None = None
    while True:
        if isinstance(node, CommentedMap) and node and not node.fa.flow_style():
            slot = (node, list(node)[-1], 2)
        elif isinstance(node, CommentedSeq) and node and not node.fa.flow_style():
            slot = (node, len(node) - 1, 0)
        else:
            return slot
        node = node[slot[1]]


def append(container: CommentedMap | CommentedSeq, key: Any, value: Any) -> None:
    """Add an entry at the end of a block container, keeping the blank lines and comments that
    followed its old last entry after the new one (ruamel would leave them above it)."""
    before = _last_slot(container)
    tail = None
    if before is not None:
        holder, k, i = before
        tokens = holder.ca.items.get(k)
        token = tokens[i] if tokens else None
        if isinstance(token, CommentToken) and "\n" in token.value:
            head, _, rest = token.value.partition("\n")
            if rest:
                token.value, tail = head + "\n", rest
    if isinstance(container, CommentedSeq):
        container.append(value)
    else:
        container[key] = value
    after = _last_slot(container)
    if tail is not None and after is not None:
        holder, k, i = after
        tokens = holder.ca.items.setdefault(k, [None, None, None, None])
        old = tokens[i].value if isinstance(tokens[i], CommentToken) else "\n"
        tokens[i] = CommentToken(old + tail, CommentMark(0), None)


_KEY_OPENS = re.compile(r"^( *)[^ #-][^#]*:$")
_ITEM = re.compile(r"^( *)- ")
_KEY = re.compile(r"^( *)[^ #-]")


def _layout(lines: list[str]) -> Indent | None:
    """The file's layout as its first nested mapping and its first block list show it (None: not shown)."""
    mapping = dash = None
    for above, line in zip(lines, lines[1:]):
        opens = _KEY_OPENS.match(above.rstrip())
        if opens is None:
            continue
        depth = len(opens[1])
        item, key = _ITEM.match(line), _KEY.match(line)
        if dash is None and item is not None and len(item[1]) >= depth:
            dash = len(item[1]) - depth
        elif mapping is None and key is not None and len(key[1]) > depth:
            mapping = len(key[1]) - depth
        if mapping is not None and dash is not None:
            return (mapping, dash + 2, dash)
    return None


class YamlEdit:
    """One YAML file of the source, loaded for editing; `text()` is the file with the edits made.

    A subclass says how a scalar it sets is written (`scalar`: derive writes floats so YAML 1.1 reads them)."""

    def __init__(self, text: str, display: str, indent: Indent | None = None, prefer: Indent | None = None) -> None:
        """`indent`: the layout of what the edit adds, for a file too short to show its own (a new one);
        `prefer`: the layout tried first when the file's lines show none (a file of no block list yet)."""
        self.display = display
        # ruamel reads \r\n and a lone \r as \n: edited lines get the file's line ends back.
        self.eol = "\r\n" if "\r\n" in text else "\r" if "\r" in text and "\n" not in text else "\n"
        text = (
            text.replace("\r\n", "\n") if self.eol == "\r\n" else text.replace("\r", "\n") if self.eol == "\r" else text
        )
        # A last line without a newline (a final comment): an entry appended after it would be glued to it.
        self.final_newline = not text or text.endswith("\n")
        text = text if self.final_newline else text + "\n"
        # The comments and blank lines that end the file stay at its end, whatever is appended:
        # ruamel would attach them to the last entry and leave them above a new one.
        lines = text.splitlines(keepends=True)
        end = len(lines)
        while end > 0 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        text, self.tail = "".join(lines[:end]), "".join(lines[end:])
        self.original = text
        readable = untab_comments(text)  # ruamel refuses a tab before a comment; YAML allows it
        try:
            data = self.writer(INDENTS[0]).load(readable)
        except Exception as exc:  # ruamel raises many kinds; each means: cannot edit this file
            mark = getattr(exc, "problem_mark", None)
            line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            why = f"cannot read for editing: {exc.__class__.__name__}"
            raise SourceError([Finding(display, line, col, why, code=codes.UNREADABLE_FILE)]) from None
        if not isinstance(data, CommentedMap):
            why = "the file must hold a YAML mapping at the top"
            raise SourceError([Finding(display, 1, 1, why, code=codes.NOT_A_MAPPING)])
        self.data = data
        # The indentation whose dump is closest to the file; new entries are written with it. Lines
        # are matched, not zipped: a flow mapping over two lines would shift every later line.
        best: tuple[int, YAML, str] | None = None
        lines = readable.splitlines()
        # A long file never dumps back exactly (a \u escape, a respaced flow list): its own layout, read from its
        # lines, is tried first, and taken when the few lines it misses are not the layout's (each dump of a large
        # file costs a tenth of a second).
        enough = len(lines) // 100
        shown = _layout(lines) or prefer
        for tried in [indent] if indent is not None else sorted(INDENTS, key=lambda i: i != shown):
            y = self.writer(tried)
            dumped = dump(y, data)
            matcher = difflib.SequenceMatcher(None, dumped.splitlines(), lines, autojunk=False)
            cost = len(lines) - sum(b.size for b in matcher.get_matching_blocks())
            if best is None or cost < best[0]:
                best = (cost, y, dumped)
            if cost <= enough:
                break
        assert best is not None
        _, self.yaml, self.base = best

    def writer(self, indent: Indent) -> YAML:
        return yaml_writer(indent)

    def scalar(self, value: Any) -> Any:
        """A scalar as the edit writes it (a plain string as YAML 1.1 reads it back; a quoted one as it is)."""
        return text_scalar(value) if type(value) is str else value

    def text(self) -> str:
        out = merge(self.original, self.base, dump(self.yaml, self.data)) + self.tail
        if not self.final_newline and out.endswith("\n"):
            out = out[:-1]
        return out.replace("\n", self.eol) if self.eol != "\n" else out

    def node(self, value: Any, flow: bool) -> Any:
        """Plain data -> ruamel nodes; in a flow style when the place it goes to is written so."""
        if isinstance(value, dict):
            m = CommentedMap({k: self.node(v, flow) for k, v in value.items() if v is not None})
            if flow:
                m.fa.set_flow_style()
            return m
        if isinstance(value, list):
            s = CommentedSeq([self.node(v, True) for v in value])
            s.fa.set_flow_style()  # lists of ids and keys read best on one line
            return s
        return self.scalar(value)

    def update(self, target: CommentedMap, values: dict[str, Any]) -> None:
        """Set each key of `values` in `target` (None removes it); unchanged values keep their text."""
        flow = bool(target.fa.flow_style())
        for key, value in values.items():
            if value is None:
                target.pop(key, None)
            elif key not in target or not _same(target[key], value):
                if isinstance(value, dict) and isinstance(target.get(key), CommentedMap):
                    self.update(target[key], value)
                    for gone in [k for k in target[key] if k not in value]:
                        del target[key][gone]
                else:
                    target[key] = self.node(value, flow)

    def child(self, parent: CommentedMap, key: str, kind: type) -> Any:
        if key not in parent or parent[key] is None:
            append(parent, key, CommentedMap() if kind is CommentedMap else CommentedSeq())
        return parent[key]
