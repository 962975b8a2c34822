"""A dict's Python repr read as data, never as code: what `logger.info(f"step {n}: {log_dict}")` prints.

    items, end = read_dict(text, at)     # {key: value}, and where the dict's `}` ends; or ReprError

Nothing is evaluated, looked up, imported or called: the text is cut into tokens by one regular
expression (strings, numbers, names, brackets), so a line of any length is read in linear time and
any nesting depth costs no recursion. A value is

- a number: an int or a float as Python prints them (`0.5`, `1e-06`, `3`), `nan`, `inf`, `-inf`, or
  NumPy's scalar repr (NumPy 2 prints `np.float64(0.5)`, `np.int64(3)`; a `np.float32(0.1)` or
  `np.float16` reads back as the float32 or float16 it was, as `float()` of it gives a tracker);
- True, False (`np.True_`, `np.False_`) or None, and a string: kept as such, which are no numbers;
- anything else (a list, a dict, a tuple, a call such as `tensor(0.5)` or `__import__('os')`, a name)
  an `Expression`: its text, for a finding.

A key is a string (a key Python cannot read, or one that is no string, is a `ReprError`). A text
that is no dict repr (a bracket closed by another, a string never closed, text after the dict)
is a ReprError with its column; `cut` says the text ended before the dict did (a line still being
written).
"""

from __future__ import annotations

import ast
import math
import re
import struct
import warnings
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(
    r"""[ \t]*(?:
      (?P<str>[rRbBuU]{0,2}(?:'[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"))
    | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<name>[^\W\d]\w*(?:\.[^\W\d]\w*)*)
    | (?P<punct>[][{}(),:+-])
    | (?P<other>.)
    )""",
    re.X | re.S,
)
# Most of a Miles dict: plain keys and plain numbers, as Python prints them. A dict of these only is
# matched whole and its items found by one findall (in C); any other item is read token by token.
_NUMBER = r"-?(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|inf|nan)"  # each number matched one way only: no backtracking
_PLAIN = re.compile(r"[ \t]*'([^'\\\n]*)'[ \t]*:[ \t]*(" + _NUMBER + r")[ \t]*(?=[,}])")
_PLAIN_ITEM = r"'[^'\\\n]*': -?(?:\d{1,15}(?:\.\d*)?(?:[eE][+-]?\d+)?|inf|nan)"
_PLAIN_DICT = re.compile(r"\{(?:" + _PLAIN_ITEM + r"(?:, " + _PLAIN_ITEM + r")*)?\}")
_PLAIN_ITEMS = re.compile(r"'([^'\\\n]*)': ([^,}]*)")  # the items of a dict _PLAIN_DICT matched
_CLOSE = {"(": ")", "[": "]", "{": "}"}
_CONSTANTS: dict[str, Any] = {
    "True": True,
    "False": False,
    "None": None,
    "nan": float("nan"),
    "inf": float("inf"),
    "np.True_": True,
    "np.False_": False,
    "np.nan": float("nan"),
    "np.inf": float("inf"),
}
_SPELLED = ("nan", "inf")
_FLOATS = {"float64": None, "double": None, "float32": "f", "single": "f", "float16": "e", "half": "e"}
_INTS = {f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)} | {"intp", "uintp", "longlong", "ulonglong"}
MAX_DIGITS = 4300  # Python's own cap on the digits of an int read from text (sys.int_info)


class ReprError(ValueError):
    """Text that is no dict repr: what is wrong, its 0-based offset in the text, and whether the text
    ended first (`cut`: a line still being written)."""

    def __init__(self, message: str, at: int, cut: bool = False) -> None:
        super().__init__(message)
        self.message, self.at, self.cut = message, at, cut


@dataclass(frozen=True, slots=True)
class Expression:
    """A value that is no literal read here (a list, a call, a name ...): its text, never evaluated."""

    text: str


def read_dict(text: str, at: int = 0) -> tuple[dict[str, Any], int]:
    """The dict whose repr starts at `at` (its `{`), its keys in order (a key given twice: the later
    value, as Python reads it), and the offset after its `}`."""
    plain = _PLAIN_DICT.match(text, at)
    if plain is not None:
        pairs = _PLAIN_ITEMS.findall(text, at, plain.end())
        if not pairs:
            return {}, plain.end()
        keys, texts = zip(*pairs, strict=True)
        numbers = list(map(float, texts))  # in C; an int of up to 15 digits is exact so
        if math.isfinite(sum(numbers)):
            return dict(zip(keys, numbers, strict=True)), plain.end()
        return {k: _number(v) for k, v in pairs}, plain.end()  # nan, inf, or out of float range
    kind, tok, at = _next(text, at)
    if tok != "{":
        raise ReprError("not a dict", at - len(tok))
    items: dict[str, Any] = {}
    while True:
        plain = _PLAIN.match(text, at)
        if plain is not None:  # the usual item: a plain key, a plain number
            number = plain.group(2)
            items[plain.group(1)] = _number(number)
            at = plain.end()
        else:
            kind, tok, after = _next(text, at)
            if tok == "}" and not items:
                return items, after
            if kind != "str":
                raise ReprError("a key that is not a string" if tok else "the line ends inside the dict", at, not tok)
            key = _key(tok, after - len(tok))
            kind, tok, at = _next(text, after)
            if tok != ":":
                raise ReprError(f"expected ':' after a key, found {tok[:20]!r}", at - len(tok), not tok)
            value, at = _value(text, at)
            items[key] = value
        kind, tok, at = _next(text, at)
        if tok == "}":
            return items, at
        if tok != ",":
            raise ReprError(f"expected ',' or '}}', found {tok[:20]!r}", at - len(tok), not tok)
        kind, tok, after = _next(text, at)
        if tok == "}":  # a trailing comma
            return items, after


def _next(text: str, at: int) -> tuple[str, str, int]:
    """The next token's kind and text, and the offset after it; ("", "", end) at the end of the text."""
    m = _TOKEN.match(text, at)
    if m is None:  # only blank space is left
        return "", "", len(text)
    kind = m.lastgroup or ""
    if kind == "other" and m.group(kind) in "'\"":
        raise ReprError("a string that is never closed", m.start(kind), cut=True)
    return kind, m.group(kind), m.end()


def _value(text: str, at: int) -> tuple[Any, int]:
    """The value from `at` to the `,` or `}` that ends it (not read), and the offset of that."""
    tokens: list[tuple[str, str]] = []
    open_: list[str] = []
    start = None
    while True:
        kind, tok, after = _next(text, at)
        if not tok:
            raise ReprError("the line ends inside the dict", len(text), cut=True)
        if not open_ and tok in (",", "}"):
            at = after - len(tok)
            break
        if start is None:
            start = after - len(tok)
        if tok in _CLOSE:
            open_.append(_CLOSE[tok])
        elif tok in (")", "]", "}"):
            if not open_ or open_[-1] != tok:
                expected = f"{open_[-1]!r} was expected" if open_ else "no bracket is open"
                raise ReprError(f"{tok!r} where {expected}", after - 1)
            open_.pop()
        if len(tokens) < 6:  # a literal is at most `np.float64 ( - inf )`; longer is an Expression
            tokens.append((kind, tok))
        at = after
    if start is None:
        raise ReprError("a key without a value", at)
    return _literal(tokens, text[start:at].strip()), at


def _literal(tokens: list[tuple[str, str]], text: str) -> Any:
    """The value of a value's tokens, or an Expression of its text."""
    kinds = [k for k, _ in tokens]
    words = [t for _, t in tokens]
    if kinds == ["num"]:
        return _number(words[0])
    if kinds == ["name"] and words[0] in _CONSTANTS:
        return _CONSTANTS[words[0]]
    if kinds == ["str"]:
        try:
            return _string(words[0])
        except ReprError:
            return Expression(text)
    if len(tokens) == 2 and words[0] in ("+", "-") and kinds[1] in ("num", "name"):
        signed = _literal(tokens[1:], text)
        if isinstance(signed, (int, float)) and not isinstance(signed, bool):
            return -signed if words[0] == "-" else signed
    if kinds[:2] == ["name", "punct"] and words[1] == "(" and words[-1] == ")" and 4 <= len(tokens) <= 5:
        return _numpy(words[0], tokens[2:-1], text)
    return Expression(text)


def _numpy(name: str, arg: list[tuple[str, str]], text: str) -> Any:
    """NumPy's scalar repr (`np.float64(0.5)`), as the number a tracker gets of it."""
    module, _, kind = name.rpartition(".")
    if module not in ("np", "numpy"):
        return Expression(text)
    value = _literal(arg, text)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Expression(text)
    if kind in _INTS and isinstance(value, int):
        return value
    if kind not in _FLOATS:
        return Expression(text)
    code = _FLOATS[kind]
    if code is None:
        return float(value)
    try:
        return float(struct.unpack(code, struct.pack(code, value))[0])
    except (OverflowError, struct.error):
        return Expression(text)


def _number(tok: str) -> Any:
    """A number as Python prints it (`nan`, `inf` and `-inf` included): an int, a float, or an Expression
    of one Python never prints (a float out of its range, an int of more digits than it reads)."""
    if tok.isdigit():
        return int(tok) if len(tok) <= MAX_DIGITS else Expression(f"an integer of {len(tok):,} digits")
    value = float(tok)
    if value - value != 0 and tok.lstrip("-") not in _SPELLED:  # an infinity Python would print as inf
        return Expression(f"{tok[:40]} (out of float range)")
    return value


def _string(tok: str) -> str:
    """A string token's value (bytes are no string)."""
    prefix = tok[: min(tok.index("'") if "'" in tok else len(tok), tok.index('"') if '"' in tok else len(tok))]
    if "b" in prefix.lower():
        raise ReprError("bytes, not a string", 0)
    if "\\" not in tok:
        return tok[len(prefix) + 1 : -1]
    with warnings.catch_warnings():  # an unknown escape (\q) is a SyntaxWarning in Python 3.12
        warnings.simplefilter("ignore")
        try:
            value = ast.literal_eval(tok)  # a string literal alone: nothing else is parsed
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise ReprError("a string Python cannot read", 0) from None
    if not isinstance(value, str):
        raise ReprError("not a string", 0)
    return value


def _key(tok: str, at: int) -> str:
    try:
        return _string(tok)
    except ReprError as err:
        raise ReprError(f"a key that is {err.message}", at) from None
