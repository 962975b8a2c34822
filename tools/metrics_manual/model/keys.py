"""Metric keys and key patterns: `eval/{dataset}` stands for every key with any text where `{dataset}` is.

One matcher serves the catalog (a run's key documented by a pattern), the coverage scan
(an f-string of Miles read as a pattern) and judge (a run's unknown keys).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

_HOLE = re.compile(r"\{[^{}/]*\}")


def is_pattern(key: str) -> bool:
    """Whether the key has a `{name}` hole (a family written as a pattern)."""
    return bool(_HOLE.search(key))


def canonical(key: str) -> str:
    """The key with every hole written `{}`, so `eval/{key}` and `eval/{dataset}` are one pattern."""
    return _HOLE.sub("{}", key)


@functools.lru_cache(maxsize=4096)
def pattern_regex(key: str) -> re.Pattern[str]:
    """A hole is any text inside one segment, empty included (a role prefix may be empty)."""
    parts = _HOLE.split(key)
    return re.compile("[^/]*".join(re.escape(p) for p in parts))


def matches(pattern: str, key: str) -> bool:
    """Whether a concrete key (or a pattern's canonical text) is one of the pattern's keys."""
    return bool(pattern_regex(pattern).fullmatch(key))


def overlap(a: str, b: str) -> bool:
    """Whether two keys or patterns name a common key, as far as their texts tell."""
    if a == b or canonical(a) == canonical(b):
        return True
    return matches(a, canonical(b)) or matches(b, canonical(a))


class KeySet:
    """Documented keys: concrete ones looked up directly, patterns tried in order."""

    def __init__(self, keys: Iterable[str]) -> None:
        self.concrete: set[str] = set()
        self.patterns: list[str] = []
        for k in keys:
            if is_pattern(k):
                self.patterns.append(k)
            else:
                self.concrete.add(k)

    def match(self, key: str) -> str | None:
        """The documented key or pattern that covers `key`, else None."""
        if key in self.concrete:
            return key
        for p in self.patterns:
            if matches(p, key):
                return p
        return None
