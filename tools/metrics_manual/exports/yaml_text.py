"""YAML written by hand-rolled emitter: the profile's YAML export and the alerting rules' file.

PyYAML's representer is pure Python and took most of the build on large profiles; this emits the
same data, block-style, readable by YAML 1.1 (PyYAML, the source's reader) and 1.2 alike.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from metrics_manual.exports.document import plain_data
from metrics_manual.model.schema import ProfileExport

_PLAIN_KEY = re.compile(r"[a-z_][a-z0-9_/-]*")
_PLAIN_STR = re.compile(r"[A-Za-z]([\w ./()+-]*[\w.)])?")
_NOT_YAML_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


@functools.lru_cache(maxsize=4096)
def _key(k: str) -> str:
    return k if _PLAIN_KEY.fullmatch(k) and k not in _YAML_WORDS else _scalar(k) if k else '""'


def yaml_float(v: float) -> str:
    """A finite float as both YAML 1.1 (PyYAML, the source's reader) and 1.2 read it: Python's
    shortest repr, with a dot in the mantissa and a signed exponent (1e-05 -> 1.0e-05), since
    YAML 1.1 reads 1e-05 as a string."""
    text = repr(v)
    mantissa, e, exp = text.partition("e")
    return f"{mantissa if '.' in mantissa else mantissa + '.0'}e{exp if exp[0] in '+-' else '+' + exp}" if e else text


@functools.lru_cache(maxsize=65536, typed=True)  # keys and kinds repeat on every range
def _scalar(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return yaml_float(v)
    if _PLAIN_STR.fullmatch(v) and v.lower() not in _YAML_WORDS and ": " not in v and " #" not in v:
        return str(v)
    # A JSON string is a YAML double-quoted scalar, once the characters YAML may not hold raw are escaped.
    return _NOT_YAML_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(v, ensure_ascii=False))


def _empty(v: Any) -> str:
    return "{}" if isinstance(v, dict) else "[]"


def _emit(data: Any, indent: str, out: list[str]) -> None:
    """Block-style YAML of JSON-like data. PyYAML's representer is pure Python and took
    most of the build on large profiles; this emits the same data in a tenth of the time."""
    if isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, (dict, list)):
                if v:
                    out.append(f"{indent}{_key(k)}:\n")
                    _emit(v, indent + "  ", out)
                else:
                    out.append(f"{indent}{_key(k)}: {_empty(v)}\n")
            else:
                out.append(f"{indent}{_key(k)}: {_scalar(v)}\n")
        return
    child = indent + "  "
    for v in data:
        if isinstance(v, dict) and v:
            start = len(out)
            _emit(v, child, out)
            out[start] = f"{indent}- {out[start][len(child) :]}"  # the first key shares the dash's line
        elif isinstance(v, list) and v and not any(isinstance(x, (dict, list)) for x in v):
            # A list of scalars in a list (a reference's [step, value]) on one line: its scalars are plain
            # words without , [ ] { } or quoted, as a flow sequence needs them.
            out.append(f"{indent}- [{', '.join(map(_scalar, v))}]\n")
        elif isinstance(v, list) and v:
            out.append(f"{indent}-\n")
            _emit(v, child, out)
        else:
            out.append(f"{indent}- {_empty(v) if isinstance(v, (dict, list)) else _scalar(v)}\n")


def to_yaml_text(data: Any) -> str:
    out: list[str] = []
    _emit(data, "", out)
    return "".join(out)


def to_yaml(doc: ProfileExport) -> str:
    return to_yaml_text(plain_data(doc))
