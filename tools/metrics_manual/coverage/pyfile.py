"""One Python file of a Miles checkout, read and parsed as untrusted input, for the scan and the evidence alike.

A file is read only if it is a regular file inside the checkout of at most MAX_FILE_BYTES (never a pipe:
the read does not block), and parsed only as deep as the walks over its tree can go: a file that does not
parse, or nests deeper than MAX_NESTING, comes back with why, never as an exception.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from metrics_manual.source.reader import Reading, read_bytes
from metrics_manual.text import clip

MAX_FILE_BYTES = 2_000_000  # a generated or hostile file this large is not read
# Levels of the syntax tree (Miles at 31f1ca96 nests 38 at most). The scan's and the evidence's walks
# recurse a few frames a level: deeper, a crafted file would exhaust Python's stack.
MAX_NESTING = 100
CHECKOUT = Reading(MAX_FILE_BYTES, "the checkout", "only regular files are read")


@dataclass(frozen=True)
class Parsed:
    raw: bytes | None  # None: the file was not read
    tree: ast.Module | None  # None: not parsed (why says why)
    why: str = ""
    line: int = 1  # where the parser stopped, when it says
    col: int = 1


def read(root: Path, rel: str) -> Parsed:
    """The file `rel` of the checkout at `root`, read and parsed, or why not."""
    raw, why = read_bytes(root / rel, root, CHECKOUT)
    return parse(raw, rel) if raw is not None else Parsed(None, None, why)


def parse(raw: bytes, rel: str) -> Parsed:
    """The bytes of the file `rel`, parsed, or why not."""
    try:
        tree = ast.parse(raw, filename=rel)
    except SyntaxError as exc:
        return Parsed(raw, None, f"does not parse as Python ({clip(str(exc))})", exc.lineno or 1, exc.offset or 1)
    except ValueError as exc:  # a NUL byte, an unknown encoding declaration
        return Parsed(raw, None, f"does not parse as Python ({clip(str(exc))})")
    except (RecursionError, MemoryError):  # what CPython's parser raises on a file too deep for its own stack
        return Parsed(raw, None, "nests too deep for Python's parser")
    if _deeper_than(tree, MAX_NESTING):
        return Parsed(raw, None, f"nests deeper than {MAX_NESTING} levels; no Miles file nests that deep")
    return Parsed(raw, tree)


def _deeper_than(tree: ast.AST, most: int) -> bool:
    todo = [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > most:
            return True
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False
