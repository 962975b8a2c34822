"""Read the reference page back as data and compare it with the model."""
from __future__ import annotations

import html
import re
from collections import Counter

from .errors import Finding
from .load import Manual
from .model import AtStep, Band, Exact, Expectation, Median

REFERENCE = "docs/reference/metrics.md"


def _numbers(e: Expectation) -> list[float]:
    nums: list[float | int | None] = []
    if isinstance(e, Band):
        nums = [e.min, e.max, e.steps, e.window.first if e.window else None]
    elif isinstance(e, Median):
        nums = [e.value, e.steps]
    elif isinstance(e, Exact):
        nums = [e.value, e.at.step if isinstance(e.at, AtStep) else None]
    return [float(n) for n in nums if n is not None]


def _cells(row: str) -> list[str]:
    return [html.unescape(c).strip() for c in row.strip().strip("|").split("|")]


def reference_findings(manual: Manual, page: str) -> list[Finding]:
    """Read the reference page back as data and compare it with the model."""
    out: list[Finding] = []
    lines = page.splitlines()

    def bad(i: int, message: str) -> None:
        out.append(Finding(REFERENCE, i + 1, 1, f"reference page disagrees with ranges/: {message}"))

    rows: dict[str, tuple[int, list[str]]] = {}
    sections: list[str] = []
    for i, line in enumerate(lines):
        if m := re.match(r"^## .* \{#s-ref-([\w-]+)\}$", line):
            sections.append(m.group(1))
        if m := re.match(r'^\| <span id="([^"]+)"></span>', line):
            rows[m.group(1)] = (i, _cells(line))
    want_sections = [s.id for s in manual.catalog.sections]
    if sections[: len(want_sections)] != want_sections:
        bad(0, f"sections {sections[:len(want_sections)]} instead of {want_sections}")
    for section in manual.catalog.sections:
        for metric in section.metrics:
            if metric.anchor not in rows:
                bad(0, f"catalog metric {metric.key} does not appear on it")
                continue
            i, cells = rows[metric.anchor]
            if len(cells) != 3 + len(manual.profiles):
                bad(i, f"row of {metric.key} has {len(cells)} cells, not {3 + len(manual.profiles)}")
                continue
            if " ".join(metric.meaning.split()) != cells[1]:
                bad(i, f"meaning of {metric.key} reads {cells[1]!r}, not {metric.meaning!r}")
            if (metric.unit or "") != cells[2]:
                bad(i, f"unit of {metric.key} reads {cells[2]!r}, not {metric.unit!r}")
            for p, cell in zip(manual.profiles, cells[3:]):
                exps = p.expectations.get(metric.key, [])
                if not exps:
                    if cell != "no range":
                        bad(i, f"{metric.key} on {p.id} reads {cell!r}, not 'no range'")
                    continue
                rest = cell
                for e in exps:
                    if e.condition:
                        cond = " ".join(e.condition.split())
                        if cond not in rest:
                            bad(i, f"condition {cond!r} of {metric.key} on {p.id} is missing")
                        rest = rest.replace(cond, " ")
                got = sorted(float(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*(?:\.\d+)?", rest))
                want = sorted(n for e in exps for n in _numbers(e))
                if got != want:
                    bad(i, f"{metric.key} on {p.id} shows the numbers {got}, the source has {want}")
                kinds = Counter(e.kind for e in exps)
                if rest.count("median") != kinds["median"] or rest.count("logged in every step") != kinds["presence"]:
                    bad(i, f"{metric.key} on {p.id} reads {cell!r}, which does not match its {sum(kinds.values())} expectations")
    return out
