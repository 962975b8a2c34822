"""Read the generated reference pages back for what they mean, and compare that with the model.

Each catalog section has a page (docs/reference/metrics/<id>.md): a heading with the section's
anchor, then one entry per metric: a heading with the metric's anchor, then its meaning, its
unit and one line per expectation and profile. The map (index.md there) links every metric
with the metric's anchor as the link's id, so the old address `reference/metrics/#m-...` still
finds it. Reading back compares phrases, never the digits of a line, so a source id such as
`seeds1to3` or a condition such as `run-2026` cannot look like a number that drifted.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Mapping

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.model.phrase import describe, plain, unit_name
from metrics_manual.model.schema import Section
from metrics_manual.source.load import Manual

REFERENCE_DIR = "docs/reference/metrics/"
MAP = REFERENCE_DIR + "index.md"
NO_RANGE = "no range"
NOT_LOGGED = "Not logged at this commit"
_WHY = "reference page disagrees with ranges/: "

_HEADING = re.compile(r"^(#{1,6}) .*?\{#([\w-]+)[^}]*\}\s*$")
_LINE = re.compile(r'<span class="mm-range[^"]*"[^>]*>(.*?)</span>\s*<span class="mm-profile">(.*?)</span>')
_TAG = re.compile(r"<[^>]+>")


def section_file(section_id: str) -> str:
    """The page of one catalog section, relative to the project."""
    return f"{REFERENCE_DIR}{section_id}.md"


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
            if m.group(1) == "#" and current.startswith("s-ref-"):
                sections.append(current.removeprefix("s-ref-"))
            entries[current] = (i, [])
        elif current is not None:
            entries[current][1].append(line)
    return sections, entries


def _map_links(page: str) -> set[tuple[str, str]]:
    """(section id, anchor) of every map link whose id is the anchor it links to: Markdown links, or
    the raw HTML links of the table of every range (the built site's URL, `<section>/#<anchor>`)."""
    markdown = re.finditer(r"\]\(([\w-]+)\.md#([\w-]+)\)\{ #([\w-]+) \.mm-map-link \}", page)
    raw = re.finditer(r'<a href="([\w-]+)/#([\w-]+)" id="([\w-]+)" class="mm-map-link">', page)
    return {(m.group(1), m.group(2)) for m in (*markdown, *raw) if m.group(2) == m.group(3)}


def reference_findings(manual: Manual, files: Mapping[str, str]) -> list[Finding]:
    """Every way the reference pages' meaning disagrees with the model (`files`: path -> generated text)."""
    out: list[Finding] = []
    map_page = files.get(MAP)
    links = _map_links(map_page or "")
    if map_page is None:
        out.append(Finding(MAP, 1, 1, _WHY + "the map of the metrics is missing", code=codes.REFERENCE_DISAGREES))
    titles = {plain(p.title) for p in manual.profiles}
    for section in manual.catalog.sections:
        rel = section_file(section.id)
        page = files.get(rel)
        if page is None:
            out.append(Finding(rel, 1, 1, _WHY + f"section {section.id} has no page", code=codes.REFERENCE_DISAGREES))
        else:
            out += _section_findings(manual, section, rel, page, titles)
        for metric in section.metrics:
            if map_page is not None and (section.id, metric.anchor) not in links:
                out.append(
                    Finding(
                        MAP,
                        1,
                        1,
                        _WHY + f"no link to {metric.key} by its anchor {metric.anchor}",
                        code=codes.REFERENCE_DISAGREES,
                    )
                )
    return out


def _section_findings(manual: Manual, section: Section, rel: str, page: str, titles: set[str]) -> list[Finding]:
    """Every way one section's page disagrees with the model."""
    out: list[Finding] = []

    def bad(i: int, message: str) -> None:
        out.append(Finding(rel, i + 1, 1, _WHY + message, code=codes.REFERENCE_DISAGREES))

    sections, entries = _entries(page.splitlines())
    if sections != [section.id]:
        bad(0, f"sections {sections} instead of {[section.id]}")
    for metric in section.metrics:
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
        if metric.not_logged is not None and NOT_LOGGED not in seen:
            bad(i, f"the entry of {metric.key} does not say it is {NOT_LOGGED.lower()}")
        shown = Counter((_text(m.group(1)), _text(m.group(2))) for line in body for m in _LINE.finditer(line))
        want: Counter[tuple[str, str]] = Counter()
        # A key no process logs has no range on any profile (MM114), and its entry shows none.
        for p in manual.profiles if metric.not_logged is None else ():
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
            who = "a profile" if title in titles else "no profile"
            bad(i, f"{metric.key} shows {text!r} for {title!r} ({who}), which the source does not have")
    return out
