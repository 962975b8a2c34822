"""Read the generated reference page back for what it means, and compare that with the model.

The page is one entry per metric: a heading with the metric's anchor, then its meaning, its
unit and one line per expectation and profile. Reading back compares phrases, never the
digits of a line, so a source id such as `seeds1to3` or a condition such as `run-2026`
cannot look like a number that drifted.
"""

from __future__ import annotations

import html
import re
from collections import Counter

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.model.phrase import describe, plain, unit_name
from metrics_manual.source.load import Manual

REFERENCE = "docs/reference/metrics.md"
NO_RANGE = "no range"

_HEADING = re.compile(r"^(#{1,6}) .*?\{#([\w-]+)[^}]*\}\s*$")
_LINE = re.compile(r'<span class="mm-range[^"]*"[^>]*>(.*?)</span>\s*<span class="mm-profile">(.*?)</span>')
_TAG = re.compile(r"<[^>]+>")


def _text(markup: str) -> str:
    """What a reader sees of a piece of the page: tags dropped, entities read, spaces folded."""
    return " ".join(html.unescape(_TAG.sub(" ", markup).replace("`", "")).split())


def _entries(lines: list[str]) -> tuple[list[str], dict[str, tuple[int, list[str]]]]:
    """Section anchors in order, and each heading's anchor -> (its line index, the lines up to the next heading)."""
    sections: list[str] = []
    entries: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    for i, line in enumerate(lines):
        if m := _HEADING.match(line):
            current = m.group(2)
            if m.group(1) == "##" and current.startswith("s-ref-"):
                sections.append(current.removeprefix("s-ref-"))
            entries[current] = (i, [])
        elif current is not None:
            entries[current][1].append(line)
    return sections, entries


def reference_findings(manual: Manual, page: str) -> list[Finding]:
    """Every way the reference page's meaning disagrees with the model."""
    out: list[Finding] = []

    def bad(i: int, message: str) -> None:
        out.append(
            Finding(
                REFERENCE, i + 1, 1, f"reference page disagrees with ranges/: {message}", code=codes.REFERENCE_DISAGREES
            )
        )

    sections, entries = _entries(page.splitlines())
    want_sections = [s.id for s in manual.catalog.sections]
    if sections[: len(want_sections)] != want_sections:
        bad(0, f"sections {sections[: len(want_sections)]} instead of {want_sections}")
    titles = {p.title for p in manual.profiles}
    for metric in manual.metrics.values():
        if metric.anchor not in entries:
            bad(0, f"catalog metric {metric.key} has no entry on it")
            continue
        i, body = entries[metric.anchor]
        seen = _text("\n".join(body))
        meaning = plain(metric.meaning)
        if meaning not in seen:
            bad(i, f"the entry of {metric.key} does not say its meaning {meaning!r}")
        unit = unit_name(metric.unit)
        if unit and f"Unit: {plain(unit)}" not in seen:
            bad(i, f"the entry of {metric.key} does not say its unit {unit!r}")
        shown = Counter((_text(m.group(1)), _text(m.group(2))) for line in body for m in _LINE.finditer(line))
        want: Counter[tuple[str, str]] = Counter()
        for p in manual.profiles:
            exps = p.expectations.get(metric.key, [])
            want.update((describe(e, metric.unit), plain(p.title)) for e in exps)
            if not exps:
                want[(NO_RANGE, plain(p.title))] += 1
        for (text, title), n in sorted((want - shown).items()):
            bad(
                i,
                f"{metric.key} on {title!r} should read {text!r}"
                + (f" ({n} times)" if n > 1 else "")
                + ", which is missing",
            )
        for text, title in sorted(shown - want):
            who = "a profile" if title in {plain(t) for t in titles} else "no profile"
            bad(i, f"{metric.key} shows {text!r} for {title!r} ({who}), which the source does not have")
    return out
