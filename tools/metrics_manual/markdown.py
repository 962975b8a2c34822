"""Text from ranges/ (or a commit subject, a path) as Markdown that shows it literally: the one escape
of every page, table and pull-request comment the manual writes (site, history)."""

from __future__ import annotations

import re
from typing import Any

# Characters that Markdown, tables or HTML would read as syntax anywhere in a line: shown as
# entities, so text from ranges/ is always literal and never breaks a table or runs as HTML.
_ESCAPED = {c: f"&#{ord(c)};" for c in "&<>|*_`[]\\{}~^#!$"}
_ESCAPED_RE = re.compile("[" + re.escape("".join(_ESCAPED)) + "]")
# What Markdown reads as a block only at the start of a line (a rule or underline `---`, `===`,
# a list item `- `, `+ `, `1. `): the first character, or the number's dot, becomes an entity,
# which displays the same and starts no block. (`>`, `#`, `*` and indents are handled above.)
_LINE_START = "-+="
_LEADING_NUMBER = re.compile(r"^(\d+)([.)])(?=\s|$)")


def literal(text: Any) -> str:
    """Markdown that displays `text` literally, on one line, wherever a template puts it."""
    text = _ESCAPED_RE.sub(lambda m: _ESCAPED[m.group()], " ".join(str(text).split()))
    if text and text[0] in _LINE_START:
        return f"&#{ord(text[0])};{text[1:]}"
    return _LEADING_NUMBER.sub(lambda m: f"{m.group(1)}&#{ord(m.group(2))};", text)


def code(text: Any) -> str:
    """A Markdown code span holding `text` literally, whatever backticks it contains."""
    text = " ".join(str(text).split())
    fence = "`" * (max((len(r) for r in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
