"""A range diff as text (a terminal), Markdown (a pull-request comment, the Changes page) or JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from metrics_manual.history.diff import FieldChange, MetricChange, ProfileChange, RangeDiff, Revision
from metrics_manual.markdown import code, literal
from metrics_manual.model.phrase import plain

NO_CHANGE = "No change to the ranges."


def _rev(r: Revision) -> str:
    return r.name + (f" ({r.commit[:12]})" if r.commit and not r.commit.startswith(r.name) else "")


def _field(f: FieldChange, text: Callable[[Any], str]) -> str:
    return f"{text(f.field)}: {text(f.before)} -> {text(f.after)}"


def _metric_lines(m: MetricChange, text: Callable[[Any], str], key: Callable[[str], str]) -> list[str]:
    """The lines of one metric's change: a head line, then one line per changed part or range."""
    head = f"{m.change} {key(m.key)}" + (f" (was {key(m.renamed_from)})" if m.renamed_from else "")
    lines = [head]
    for f in m.fields:
        lines.append(f"    {_field(f, text)}")
    for r in m.ranges:
        if r.change == "added":
            lines.append(f"    added range: {text(r.after)}")
        elif r.change == "removed":
            lines.append(f"    removed range: {text(r.before)}")
        else:
            lines.append(f"    updated range: {text(r.before)} -> {text(r.after)}")
            lines += [f"        {_field(f, text)}" for f in r.fields]
    return lines


def _profile_head(p: ProfileChange, text: Callable[[Any], str]) -> str:
    was = f" (was {text(p.renamed_from)})" if p.renamed_from else ""
    return f"{p.change} profile {text(p.id)} ({text(p.title)}){was}"


def to_text(d: RangeDiff, *, header: bool = True) -> str:
    out = [f"Range changes: {_rev(d.base)} -> {_rev(d.head)}"] if header else []
    if d.empty:
        return "\n".join([*out, NO_CHANGE]) + "\n"
    if d.catalog or d.sections or d.metrics:
        out.append("Catalog")
        out += [f"  {_field(f, plain)}" for f in [*d.catalog, *d.sections]]
        for m in d.metrics:
            out += ["  " + line for line in _metric_lines(m, plain, plain)]
    for p in d.profiles:
        out.append(_profile_head(p, plain)[0].upper() + _profile_head(p, plain)[1:])
        out += [f"  {_field(f, plain)}" for f in p.fields]
        for m in p.metrics:
            out += ["  " + line for line in _metric_lines(m, plain, plain)]
    return "\n".join(out) + "\n"


def _md_list(lines: list[str]) -> list[str]:
    """Indented lines as a nested Markdown list (four spaces per level, as Python-Markdown wants)."""
    out = []
    for line in lines:
        depth = (len(line) - len(line.lstrip(" "))) // 4
        out.append("    " * depth + "- " + line.strip())
    return out


def to_markdown(
    d: RangeDiff,
    *,
    heading: str = "###",
    header: bool = True,
    metric_link: Callable[[str], str | None] | None = None,
) -> str:
    """Markdown for a pull-request comment or a page; text from ranges/ is literal (markdown.literal).

    `metric_link(key)`, when given, makes a metric key a link where it returns one (the Changes page
    links the reference page).
    """

    def key(k: str) -> str:
        url = metric_link(k) if metric_link else None
        return f"[{code(k)}]({url})" if url else code(k)

    out = [f"{heading} Range changes: {literal(_rev(d.base))} → {literal(_rev(d.head))}", ""] if header else []
    if d.empty:
        return "\n".join([*out, NO_CHANGE]) + "\n"
    if d.catalog or d.sections or d.metrics:
        out += [f"{heading}# Catalog", ""]
        out += [f"- {_field(f, literal)}" for f in [*d.catalog, *d.sections]]
        for m in d.metrics:
            out += _md_list(_metric_lines(m, literal, key))
        out.append("")
    for p in d.profiles:
        head = _profile_head(p, literal)
        out += [f"{heading}# {head[0].upper()}{head[1:]}", ""]
        out += [f"- {_field(f, literal)}" for f in p.fields]
        for m in p.metrics:
            out += _md_list(_metric_lines(m, literal, key))
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def to_json(d: RangeDiff) -> str:
    return d.model_dump_json(indent=2) + "\n"
