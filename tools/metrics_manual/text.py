"""Untrusted text made safe to show: clipped for a message, escaped for a GitHub workflow
command or for XML. Every output that echoes a value from a file goes through here."""

from __future__ import annotations

import os
import re

ECHO = 120  # characters of one value a message may quote


def clip(text: str, limit: int = ECHO) -> str:
    """`text` cut to `limit` characters: what a message may echo of one value."""
    return text if len(text) <= limit else text[:limit] + "…"


def quoted(text: str) -> str:
    """`text` clipped, then quoted as Python does (control characters come out escaped)."""
    return repr(clip(text))


def shown(value: object, limit: int = 80) -> str:
    """A value from an untrusted file, quoted and cut short for a message (a 10 MB value gives one line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def inert(text: str) -> str:
    """Control characters (a newline, the ESC of ANSI/OSC sequences ...) and lone surrogates as
    escapes: a key from a run file cannot forge an output line or drive the terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else ascii(c)[1:-1] for c in text)


def github_data(text: str) -> str:
    """The message of a GitHub workflow command: it ends at a line break."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A property of a GitHub workflow command: it also ends at ',' or '::'."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


# XML 1.0 cannot hold most control characters, even escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_chars(text: str) -> str:
    """`text` with the characters XML 1.0 cannot hold replaced by U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def shown_path(path: os.PathLike[str] | str) -> str:
    """A path as text that prints safely: bytes that are not UTF-8 as \\x escapes, control characters escaped."""
    return inert(os.fsencode(path).decode("utf-8", "backslashreplace"))
