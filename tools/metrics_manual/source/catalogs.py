"""The catalogs of ranges/ held together: Miles' (catalog.yaml) and each team's (catalogs/<team>.yaml).

A team documents the keys its fork of Miles logs in a catalog of its own: the manual documents both
as one catalog (`merged`), the pages show a team's keys as the team's, and `coverage` holds only
Miles' catalog against Miles' code. Across every file a key, a former key, an anchor, a gauge and a
section id stand in one place only, a namespace has one step key, and every documented key's
namespace has one: a value is placed at its step by it, so a key without one could never be judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.model.gauges import gauge_name, no_gauge
from metrics_manual.source.reader import Document, Loc

if TYPE_CHECKING:
    from metrics_manual.model.schema import Catalog, Metric, Section, TeamCatalog

CATALOG = "ranges/catalog.yaml"
TEAMS = "ranges/catalogs"
_TEAM_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*\Z")  # the schema's SLUG_PATTERN, without importing pydantic


@dataclass(frozen=True)
class Team:
    """A team catalog: its id (the file's name), its file, and what it documents."""

    id: str
    path: str  # ranges/catalogs/<id>.yaml
    catalog: TeamCatalog


@dataclass(frozen=True)
class Part:
    """One validated catalog file: the document its findings point into, its sections and step keys."""

    doc: Document
    sections: Sequence[Section]
    step_keys: Mapping[str, str]
    commit: str  # the commit its origins were read at (Miles', or the team's fork's)

    def metrics(self) -> Iterator[tuple[Loc, Metric]]:
        """Each metric with its place in the file."""
        for si, section in enumerate(self.sections):
            for mi, metric in enumerate(section.metrics):
                yield ("sections", si, "metrics", mi), metric


def team_files(root: Path) -> tuple[list[Path], list[Finding]]:
    """The team catalogs (ranges/catalogs/<id>.yaml or .yml), and a finding for any other file there."""
    folder = root / TEAMS
    files = sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []
    found: list[Finding] = []
    teams = []
    for p in files:
        if p.suffix not in (".yaml", ".yml") or not _TEAM_ID.match(p.stem):
            why = (
                "not a team catalog: a team catalog is a .yaml file named by the team's id "
                "(lower-case letters, digits and dashes, as moe-team.yaml); rename it or move it out of this folder"
            )
            found.append(Finding(f"{TEAMS}/{p.name}", 1, 1, why, code=codes.NOT_A_SOURCE_FILE))
        else:
            teams.append(p)
    return teams, found


def merged(catalog: Catalog, teams: Sequence[Team]) -> Catalog:
    """Miles' catalog with every team's step keys and sections after its own: what the manual documents."""
    if not teams:
        return catalog
    step_keys = dict(catalog.step_keys)
    for t in teams:
        step_keys |= {ns: sk for ns, sk in t.catalog.step_keys.items() if ns not in step_keys}
    sections = [*catalog.sections, *(s for t in teams for s in t.catalog.sections)]
    return catalog.model_copy(update={"step_keys": step_keys, "sections": sections})


def check_catalogs(parts: Sequence[Part]) -> list[Finding]:
    """What holds across the catalog files (each validated): one place for each name, one step key per
    namespace, and a step key for each documented key."""
    return _names(parts) + _step_keys(parts)


def placeholders(parts: Sequence[Part]) -> list[Finding]:
    """A warning for each meaning `derive --add-keys` wrote and no person has written yet."""
    from metrics_manual.model.schema import PLACEHOLDER_MEANING

    return [
        Finding(
            p.doc.path,
            *p.doc.where((*at, "meaning")),
            f"{m.key}: its meaning is derive's placeholder; write what the value means (the pages show it)",
            severity="warning",
            code=codes.PLACEHOLDER_MEANING,
        )
        for p in parts
        for at, m in p.metrics()
        if m.meaning == PLACEHOLDER_MEANING
    ]


def _step_keys(parts: Sequence[Part]) -> list[Finding]:
    """A namespace has one step key in every file that names one, and every key's namespace has one."""
    out: list[Finding] = []
    given: dict[str, tuple[str, str]] = {}  # namespace -> (its step key, the file that gave it)
    for p in parts:
        for ns, sk in p.step_keys.items():
            first = given.setdefault(ns, (sk, p.doc.path))
            if first[0] != sk:
                out.append(
                    p.doc.finding(
                        ("step_keys", ns),
                        f"namespace {ns!r} has the step key {first[0]} in {first[1]}; a namespace has one step key: "
                        f"remove this one, or write {first[0]}",
                        code=codes.STEP_KEY_CLASH,
                    )
                )
    for p in parts:
        for at, m in p.metrics():
            for j, key in enumerate((m.key, *m.members)):
                ns = key.split("/", 1)[0]
                if ns not in given:
                    out.append(
                        p.doc.finding(
                            at + (("key",) if j == 0 else ("members", j - 1)),
                            f"{key}: its namespace {ns!r} has no step key, so no value of it could be placed at its "
                            f"step: add `{ns}: STEP_KEY` under step_keys in {p.doc.path} (the step key its records "
                            "carry, such as train/step or rollout/step)",
                            code=codes.NO_STEP_KEY,
                        )
                    )
    return out


def _names(parts: Sequence[Part]) -> list[Finding]:
    """Section ids, keys (members and former keys too), anchors and gauge names, each in one place."""
    from metrics_manual.model.schema import metric_anchor

    out: list[Finding] = []
    seen_sections: set[str] = set()
    seen_keys: dict[str, str] = {}  # key -> "section 'x'" (and the file, for another file's)
    anchors: dict[str, str] = {}
    gauges: dict[str, str] = {}  # gauge name -> the first key that gives it
    for p in parts:
        doc = p.doc
        for si, section in enumerate(p.sections):
            if section.id in seen_sections:
                out.append(
                    doc.finding(("sections", si, "id"), f"duplicate section id {section.id!r}", code=codes.DUPLICATE_ID)
                )
            seen_sections.add(section.id)
            where = repr(section.id) if doc is parts[0].doc else f"{section.id!r} of {doc.path}"
            for mi, metric in enumerate(section.metrics):
                at: Loc = ("sections", si, "metrics", mi)
                loc = (*at, "key")
                for key in (metric.key, *metric.members):
                    if key in seen_keys:
                        out.append(
                            doc.finding(
                                loc,
                                f"metric {key!r} is already in the catalog (section {seen_keys[key]})",
                                code=codes.DUPLICATE_ID,
                            )
                        )
                    seen_keys[key] = where
                if metric.anchor in anchors and anchors[metric.anchor] != metric.key:
                    out.append(
                        doc.finding(
                            loc,
                            f"{metric.key!r} and {anchors[metric.anchor]!r} give the same anchor {metric.anchor!r}",
                            code=codes.ANCHOR_CLASH,
                        )
                    )
                anchors[metric.anchor] = metric.key
                out += _gauges(doc, at, metric, gauges)
                for ri, rename in enumerate(metric.renamed_from):
                    old = metric_anchor(rename.key)
                    if rename.key in seen_keys or old in anchors:
                        out.append(
                            doc.finding(
                                (*at, "renamed_from", ri, "key"),
                                f"former key {rename.key!r} is already a key or anchor of the catalog",
                                code=codes.DUPLICATE_ID,
                            )
                        )
                    seen_keys[rename.key] = where
                    anchors[old] = metric.key
    return out


def _gauges(doc: Document, at: Loc, metric: Metric, gauges: dict[str, str]) -> list[Finding]:
    """A finding for each key of `metric` whose Prometheus gauge another key already gives."""
    out = []
    for j, key in enumerate([metric.key, *metric.members]):
        if no_gauge(key) is not None:  # a pattern, or a key Miles exports no gauge for
            continue
        gauge = gauge_name(key)
        if gauges.setdefault(gauge, key) != key:
            out.append(
                doc.finding(
                    (*at, "key") if j == 0 else (*at, "members", j - 1),
                    f"{key!r} and {gauges[gauge]!r} give the same Prometheus gauge {gauge!r}; rename one",
                    code=codes.GAUGE_CLASH,
                )
            )
    return out
