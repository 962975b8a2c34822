"""Metric keys and key patterns: `eval/{dataset}` stands for every key with any text where `{dataset}` is.

One matcher serves the catalog (a run's key documented by a pattern), the coverage scan
(an f-string of Miles read as a pattern) and judge (a run's unknown keys).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

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


def leading_hole(key: str) -> bool:
    """Whether the key's first segment is a hole (`{adapter}/log_probs`: a placeholder namespace's key)."""
    first = key.split("/", 1)[0]
    return first.startswith("{") and _HOLE.fullmatch(first) is not None


class KeySet:
    """Documented keys: concrete ones looked up directly, patterns tried in order. A pattern whose first
    segment is a hole (`{adapter}/log_probs`) never stands for a key of a `reserved` namespace (the
    catalog's concrete ones): `rollout/log_probs` is no adapter's."""

    def __init__(self, keys: Iterable[str], reserved: Iterable[str] = ()) -> None:
        self.concrete: set[str] = set()
        self.patterns: list[str] = []
        self.reserved = frozenset(reserved)
        for k in keys:
            if is_pattern(k):
                self.patterns.append(k)
            else:
                self.concrete.add(k)

    def match(self, key: str) -> str | None:
        """The documented key or pattern that covers `key`, else None."""
        if key in self.concrete:
            return key
        ns = key.split("/", 1)[0]
        for p in self.patterns:
            if matches(p, key) and not (ns in self.reserved and leading_hole(p)):
                return p
        return None


def namespaces(step_keys: Mapping[str, str]) -> list[str]:
    """The concrete namespaces of a catalog's step keys: a placeholder namespace never stands for them."""
    return [ns for ns in step_keys if not is_pattern(ns)]


def step_key_of(key: str, step_keys: Mapping[str, str]) -> str | None:
    """The key that holds `key`'s step (`step_keys`: namespace -> step key, the catalog's): its first
    segment's, else that of a placeholder namespace its leading segments fill (`{adapter}/perf` before
    `{adapter}`), the hole filled: `lora_a/raw_reward_mean` -> `lora_a/step`. A concrete namespace wins,
    so `train/grad_norm` is never an adapter's. None for a key no namespace places."""
    first, _, rest = key.partition("/")
    found = step_keys.get(first)
    if found is not None or not rest:
        return found
    parts = key.split("/")
    for ns, sk in _placeholders(tuple(step_keys.items())):
        n = ns.count("/") + 1
        if len(parts) > n and "/".join(parts[1:n]) == ns.partition("/")[2]:
            return _HOLE.sub(lambda _: first, sk, count=1) if is_pattern(sk) else sk
    return None


@functools.lru_cache(maxsize=64)
def _placeholders(items: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """The placeholder namespaces, the longest first."""
    return sorted(((ns, sk) for ns, sk in items if is_pattern(ns)), key=lambda p: -p[0].count("/"))


def concrete_step_keys(step_keys: Mapping[str, str], keys: Iterable[str]) -> list[str]:
    """Every step key of a run that logged `keys`: the concrete step keys, and each placeholder's
    filled in by the keys that are one (`lora_a/step`), in order."""
    out = {sk for sk in step_keys.values() if not is_pattern(sk)}
    patterns = [sk for sk in step_keys.values() if is_pattern(sk)]
    if patterns:
        out |= {k for k in keys if any(matches(p, k) for p in patterns) and step_key_of(k, step_keys) == k}
    return sorted(out)
