"""Load ranges/ into the typed model, collecting every finding with its file, line and column."""

from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import math
import typing
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.codes import Code
from metrics_manual.diagnostics.finding import Finding, SourceError
from metrics_manual.model.keys import overlap
from metrics_manual.source.catalogs import (
    CATALOG,
    TEAMS,
    Part,
    Team,
    check_catalogs,
    merged,
    placeholders,
    team_files,
)
from metrics_manual.source.reader import Document, Loc, read_documents
from metrics_manual.source.reference import CaptureFiles, ProjectCaptures, fill_references
from metrics_manual.text import shown

# pydantic and the model (slow to import) are imported where they are used: importing this module stays cheap.
if TYPE_CHECKING:
    from pydantic import BaseModel

    from metrics_manual.model.schema import Catalog, Coverage, Metric, Profile

__all__ = ["CATALOG", "TEAMS", "Manual", "Team", "load_manual"]
COVERAGE = "ranges/coverage.yaml"
PROFILES = "ranges/profiles"

M = TypeVar("M", bound="BaseModel")


@dataclass(frozen=True)
class Manual:
    """The whole validated source."""

    catalog: Catalog  # Miles' catalog and every team's, merged: what the manual documents
    profiles: tuple[Profile, ...]
    coverage: Coverage | None = None  # ranges/coverage.yaml, when the catalog was checked against Miles
    teams: tuple[Team, ...] = ()  # ranges/catalogs/*.yaml: the keys of the teams' forks
    miles: Catalog | None = None  # ranges/catalog.yaml alone (None: the catalog, when there are no teams)
    warnings: tuple[Finding, ...] = ()  # what loads but a person should still write (a placeholder meaning)

    @property
    def miles_catalog(self) -> Catalog:
        """Miles' own catalog: what `coverage` holds against Miles' code (no team's key is in it)."""
        return self.miles or self.catalog

    @functools.cached_property
    def metrics(self) -> dict[str, Metric]:
        return {m.key: m for s in self.catalog.sections for m in s.metrics}

    @functools.cached_property
    def _owners(self) -> dict[str, Team]:
        return {m.key: t for t in self.teams for s in t.catalog.sections for m in s.metrics}

    def team_of(self, key: str) -> Team | None:
        """The team whose catalog documents `key` (a metric's key), or None for a key of Miles."""
        return self._owners.get(key)

    def known_keys(self) -> set[str]:
        """Every key a page may name: metrics, family members and step keys."""
        keys = set(self.metrics)
        for m in self.metrics.values():
            keys.update(m.members)
        keys.update(self.catalog.step_keys.values())
        keys.update(f"{ns}/*" for ns in self.catalog.step_keys)  # a whole namespace, as in `train/*`
        keys.update(r.key for m in self.metrics.values() for r in m.renamed_from)
        return keys

    def documented(self, *, miles_only: bool = False) -> list[str]:
        """Every key or pattern a run may log that the catalog documents (a family's members, step keys);
        `miles_only`: of Miles' own catalog, without the teams' keys."""
        catalog = self.miles_catalog if miles_only else self.catalog
        keys = [k for s in catalog.sections for m in s.metrics for k in (m.members or [m.key])]
        return keys + list(catalog.step_keys.values())

    def renames(self) -> dict[str, str]:
        """Former key -> the key Miles logs it as now."""
        return {r.key: m.key for m in self.metrics.values() for r in m.renamed_from}

    def profile(self, profile_id: str) -> Profile:
        for p in self.profiles:
            if p.id == profile_id:
                return p
        raise KeyError(profile_id)


# "Did you mean" compares a word with each candidate (difflib, costly per pair). A source of thousands of
# unknown keys against a large catalog must not take hours to report, so a load compares at most this many
# pairs; past that its findings come without the hint.
HINT_COMPARISONS = 50_000
_hint_budget = [HINT_COMPARISONS]


def did_you_mean(word: str, choices: Collection[str]) -> str:
    if len(choices) > _hint_budget[0]:
        return ""
    _hint_budget[0] -= len(choices)
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


_NUMBER_ERRORS = {"int_type", "float_type", "int_parsing", "float_parsing", "int_from_float"}


def _message(err: Any, allowed: list[str]) -> tuple[Code, str]:
    """The kind and the words of one validator error."""
    from metrics_manual.model.kinds import KINDS

    kind, value = err["type"], err.get("input")
    # Drop the parts a validator adds to the location: union tags and int/float branches.
    loc = [p for p in err["loc"] if p not in KINDS and p not in ("int", "float")]
    field = str(loc[-1]) if loc and not isinstance(loc[-1], int) else ""
    prefix = f"{field}: " if field else ""
    if kind == "extra_forbidden":
        if field in allowed:  # a real field in the wrong place: say where it belongs, never "did you mean" itself
            return codes.UNKNOWN_FIELD, f"unknown field {field!r} here; {field!r} belongs in {_places(field)}"
        return codes.UNKNOWN_FIELD, f"unknown field {shown(field)}" + did_you_mean(field, allowed)
    if kind == "missing":
        return codes.MISSING_FIELD, f"missing field {field!r}"
    if kind == "union_tag_invalid":
        expected = err["ctx"]["expected_tags"]
        return codes.UNKNOWN_KIND, f"unknown kind {shown(err['ctx']['tag'])}; expected one of: {expected}"
    if kind == "union_tag_not_found":
        return codes.MISSING_FIELD, f"missing field {err['ctx']['discriminator'].strip(chr(39))!r}"
    if kind in _NUMBER_ERRORS and err["loc"][-1] in ("int", "float") or kind in ("float_type", "int_type"):
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return codes.WRONG_TYPE, f"{prefix}expected a number, got the string {shown(value)}"
            if not math.isfinite(number):
                return codes.NON_FINITE, f"{prefix}{value!r} is not a finite number; ranges must be finite"
            return codes.WRONG_TYPE, f"{prefix}expected a number, got the string {value!r}; remove the quotes"
        what = "integer" if kind.startswith("int") and err["loc"][-1] != "int" else "number"
        return codes.WRONG_TYPE, f"{prefix}expected {'an' if what == 'integer' else 'a'} {what}, got {shown(value)}"
    msg = err["msg"].removeprefix("Value error, ")
    if kind.startswith("literal") or kind == "string_pattern_mismatch" or kind.endswith("_type"):
        msg += f", got {shown(value)}"
    return (codes.WRONG_TYPE if kind.endswith("_type") else codes.INVALID_VALUE), prefix + msg


# How the findings name the place of each part of the model.
_PLACE = {
    "Catalog": "the top of the catalog",
    "Section": "a section",
    "Metric": "a metric",
    "Origin": "a metric's origin",
    "NamedAt": "an origin's named_at",
    "LabVsCode": "a metric's lab_vs_code",
    "CodeRepository": "the catalog's code",
    "Profile": "the top of a profile",
    "Setup": "setup",
    "Hardware": "setup.hardware",
    "CaptureSource": "a capture source",
    "LogSource": "a log source",
    "CodeSource": "a code source",
    "Window": "a band's window",
    "AtStep": "an exact value's at",
    "Band": "a band expectation",
    "Median": "a median expectation",
    "Exact": "an exact expectation",
    "Presence": "a presence expectation",
    "Corridor": "a corridor expectation",
    "Reference": "a corridor's reference",
    "SectionNote": "a section note",
    "Note": "a note",
}


def _places(name: str) -> str:
    """Where a field of this name is allowed, in words: 'setup, a band expectation or a median expectation'."""
    from metrics_manual.model.schema import Catalog, Profile

    places = sorted(
        {
            _PLACE[c.__name__]
            for c in _models(Profile) | _models(Catalog)
            if name in c.model_fields and c.__name__ in _PLACE
        }
    )
    return ", ".join(places[:-1]) + " or " + places[-1] if len(places) > 1 else places[0] if places else "another place"


@functools.cache
def _models(model: type[BaseModel]) -> frozenset[type[BaseModel]]:
    """Every model class in the tree under `model`."""
    from pydantic import BaseModel

    seen: set[type[BaseModel]] = set()
    stack: list[Any] = [model]
    while stack:
        tp = stack.pop()
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp not in seen:
                seen.add(tp)
                stack.extend(f.annotation for f in tp.model_fields.values())
        else:
            stack.extend(typing.get_args(tp))
    return frozenset(seen)


@functools.cache
def _field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """Every field name in the model tree: the pool for 'did you mean' on an unknown field."""
    return tuple(sorted({name for m in _models(model) for name in m.model_fields}))


def validate(model: type[M], doc: Document) -> tuple[M | None, list[Finding]]:
    from pydantic import ValidationError

    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        findings = []
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            allowed = list(_field_names(model)) if err["type"] == "extra_forbidden" else []
            if err["type"] == "union_tag_invalid":
                loc = (*loc, "kind")
            code, message = _message(err, allowed)
            findings.append(doc.finding(loc, message, code=code, key=err["type"] == "extra_forbidden"))
        return None, findings


def _items(value: Any) -> list[tuple[Any, Any]]:
    """Pairs of a mapping or (index, item) of a list from raw data; nothing for anything else."""
    if isinstance(value, dict):
        return list(value.items())
    return list(enumerate(value)) if isinstance(value, list) else []


def _check_profile(data: Any, doc: Document, keys: set[str], sections: set[str]) -> list[Finding]:
    """Cross references of one profile, on its raw data: they are checked even where the model
    found other faults, so a file's independent problems all show in one run."""
    if not isinstance(data, dict):
        return []
    sources = data.get("sources")
    source_ids = set(sources) if isinstance(sources, dict) else None  # None: no sources to hold ids to
    note_ids = {n["id"] for _, n in _items(data.get("notes")) if isinstance(n, dict) and isinstance(n.get("id"), str)}
    setup = data.get("setup")
    run_steps = setup.get("steps") if isinstance(setup, dict) else None
    run_steps = run_steps if isinstance(run_steps, int) and not isinstance(run_steps, bool) else None
    out = _check_expectations(data.get("expectations"), doc, keys, source_ids, run_steps)
    out += _check_section_notes(data.get("section_notes"), doc, sections, note_ids)
    for i, note in _items(data.get("notes")):
        if isinstance(note, dict):
            out += _source_refs(note.get("sources"), ("notes", i, "sources"), doc, source_ids)
    return out


def _source_refs(ids: Any, loc: Loc, doc: Document, source_ids: set[str] | None) -> list[Finding]:
    """A finding for each id in `ids` that is not a source of the profile."""
    if source_ids is None:
        return []
    return [
        doc.finding(
            (*loc, i),
            f"unknown source {shown(sid)}; declare it under 'sources'" + did_you_mean(sid, source_ids),
            code=codes.UNKNOWN_REFERENCE,
        )
        for i, sid in _items(ids)
        if isinstance(sid, str) and sid not in source_ids
    ]


def _check_expectations(
    expectations: Any, doc: Document, keys: set[str], source_ids: set[str] | None, run_steps: int | None
) -> list[Finding]:
    """Each ranged key is documented, each range names the profile's sources and stays inside its run."""
    out: list[Finding] = []
    for key, items in _items(expectations):
        if keys and isinstance(key, str) and key not in keys:
            out.append(
                doc.finding(
                    ("expectations", key),
                    f"unknown metric {shown(key)}; add it to {CATALOG} first (a key of your fork: to {TEAMS}/TEAM.yaml)"
                    + did_you_mean(key, keys),
                    code=codes.UNKNOWN_REFERENCE,
                    key=True,
                )
            )
        if not isinstance(items, list):
            continue
        for i, e in enumerate(items):  # runs once per range: plain look-ups, no tuple unless a finding
            if type(e) is not dict:
                continue
            if srcs := e.get("sources"):
                out += _source_refs(srcs, ("expectations", key, i, "sources"), doc, source_ids)
            steps = e.get("steps")
            if run_steps and type(steps) is int and steps > run_steps:
                out.append(
                    doc.finding(
                        ("expectations", key, i, "steps"),
                        f"{steps} steps is more than the {run_steps} steps of the setup",
                        code=codes.PAST_THE_RUN,
                    )
                )
            at = e.get("at")
            step = at.get("step") if type(at) is dict else None
            if run_steps and type(step) is int and step >= run_steps and e.get("kind") == "exact":
                out.append(
                    doc.finding(
                        ("expectations", key, i, "at", "step"),
                        f"step {step} is past the last step of a {run_steps}-step run",
                        code=codes.PAST_THE_RUN,
                    )
                )
    return out


def _check_section_notes(notes: Any, doc: Document, sections: set[str], note_ids: set[str]) -> list[Finding]:
    """Each section note is of a section of the catalog, and the note it points to is the profile's."""
    out: list[Finding] = []
    for sid, note in _items(notes):
        if sections and isinstance(sid, str) and sid not in sections:
            out.append(
                doc.finding(
                    ("section_notes", sid),
                    f"unknown section {shown(sid)}" + did_you_mean(sid, sections),
                    code=codes.UNKNOWN_REFERENCE,
                    key=True,
                )
            )
        see = note.get("see") if isinstance(note, dict) else None
        if isinstance(see, str) and see not in note_ids:
            out.append(
                doc.finding(
                    ("section_notes", sid, "see"),
                    f"unknown note {shown(see)}; add it under 'notes'" + did_you_mean(see, note_ids),
                    code=codes.UNKNOWN_REFERENCE,
                )
            )
    return out


def _catalog_names(data: Any) -> tuple[set[str], set[str]]:
    """Metric keys (members too) and section ids of a raw catalog, as far as it can be read."""
    keys: set[str] = set()
    sections: set[str] = set()
    for _, section in _items(data.get("sections") if isinstance(data, dict) else None):
        if isinstance(section, dict):
            if isinstance(section.get("id"), str):
                sections.add(section["id"])
            for _, m in _items(section.get("metrics")):
                if isinstance(m, dict):
                    keys.update(
                        k for k in (m.get("key"), *(v for _, v in _items(m.get("members")))) if isinstance(k, str)
                    )
    return keys, sections


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: a large source allocates millions of objects
    that form no cycles, and the collector's passes over them took half the load time."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            # What the pause allocated and kept is all in the youngest generation: the first collection
            # after it would go over every object, at the end of every load. Move it to the oldest, where
            # surviving collections would have put it (two list splices): only a full collection visits it
            # again, and any cycle is still freed.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def load_manual(root: Path, *, fast: bool = True, captures: CaptureFiles | None = None) -> Manual:
    """Load and validate everything under root/ranges; raise SourceError with all findings.

    With fast=True the one reader skips recording where each value stood (the same
    acceptance and meaning); on any finding (a warning too) the source is read again with positions.
    `captures`: where corridors' reference captures are read (default: the project's files).
    """
    files = captures if captures is not None else ProjectCaptures(root)
    with gc_paused():
        try:
            manual = _load(root, files, fast=fast)
            if not (fast and manual.warnings):
                return manual
        except SourceError:
            if not fast:
                raise
        return _load(root, files, fast=False)


# Anchors of the reference page that are not a section's or a note's.
RESERVED_ANCHORS = {"s-ref-origins": "the table of where the keys come from", "s-ref-sources": "the sources"}


def profile_files(root: Path) -> tuple[list[Path], list[Finding]]:
    """The profile files (.yaml or .yml), and a finding for any other file where only sources belong."""
    found: list[Finding] = []
    folder = root / PROFILES
    files = sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []
    top = (
        sorted(p for p in (root / "ranges").iterdir() if not p.name.startswith("."))
        if (root / "ranges").is_dir()
        else []
    )
    for p in top:
        if p.name not in ("catalog.yaml", "coverage.yaml") and not p.is_dir():
            found.append(
                Finding(
                    f"ranges/{p.name}",
                    1,
                    1,
                    f"not part of the source: ranges/ holds catalog.yaml, coverage.yaml, {PROFILES}/ and {TEAMS}/; "
                    "move this file elsewhere",
                    code=codes.NOT_A_SOURCE_FILE,
                )
            )
    profiles = [p for p in files if p.suffix in (".yaml", ".yml")]
    for p in files:
        if p not in profiles:
            found.append(
                Finding(
                    f"{PROFILES}/{p.name}",
                    1,
                    1,
                    "not a profile: profiles are .yaml or .yml files; rename it or move it out of this folder",
                    code=codes.NOT_A_SOURCE_FILE,
                )
            )
    return profiles, found


@dataclass
class _Catalogs:
    """What the catalog files gave: Miles' catalog, the teams', their parts, and the names profiles may use."""

    catalog: Catalog | None = None
    teams: list[Team] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    sections: set[str] = field(default_factory=set)


def _read_catalogs(
    read: Iterator[tuple[Document, list[Finding]]], team_paths: list[Path]
) -> tuple[_Catalogs, list[Finding]]:
    """Miles' catalog and each team's, validated and held together."""
    from metrics_manual.model.schema import Catalog, TeamCatalog

    out, findings = _Catalogs(), []
    cat_doc, found = next(read)
    findings += found
    if not found:
        out.catalog, found = validate(Catalog, cat_doc)
        findings += found
    docs = [cat_doc]
    for path in team_paths:
        doc, found = next(read)
        findings += found
        docs.append(doc)
        team, found = validate(TeamCatalog, doc) if not found else (None, [])
        findings += found
        if team is not None:
            out.teams.append(Team(path.stem, doc.path, team))
            out.parts.append(Part(doc, team.sections, team.step_keys, team.code.commit))
    for doc in docs:
        keys, sections = _catalog_names(doc.data)
        out.keys |= keys
        out.sections |= sections
    if out.catalog is not None:
        out.parts.insert(0, Part(cat_doc, out.catalog.sections, out.catalog.step_keys, out.catalog.code.commit))
        findings += check_catalogs(out.parts)
    return out, findings


def _load(root: Path, captures: CaptureFiles, *, fast: bool) -> Manual:
    _hint_budget[0] = HINT_COMPARISONS  # each load: `serve` loads again at each save
    findings: list[Finding] = []
    files, file_findings = profile_files(root)
    team_paths, team_findings = team_files(root)
    jobs = [
        (root / CATALOG, CATALOG),
        *((file, f"{TEAMS}/{file.name}") for file in team_paths),
        *((file, f"{PROFILES}/{file.name}") for file in files),
    ]
    if (root / COVERAGE).exists():
        jobs.append((root / COVERAGE, COVERAGE))
    # Read in order: each is validated as it comes.
    read = read_documents(jobs, fast=fast)
    from metrics_manual.model.schema import Coverage, Profile

    cats, findings = _read_catalogs(read, team_paths)
    findings += file_findings + team_findings
    profiles: list[tuple[Profile, Document]] = []
    for _ in files:
        doc, found = next(read)
        findings += found
        if found:
            continue
        findings += fill_references(doc, captures)  # each corridor's curve, from its capture
        profile, found = validate(Profile, doc)
        findings += found + _check_profile(doc.data, doc, cats.keys, cats.sections)
        if profile:
            profiles.append((profile, doc))
    catalog = merged(cats.catalog, cats.teams) if cats.catalog is not None else None
    findings += _check_profile_ids(profiles, cats.parts)
    findings += _check_not_logged(cats.parts, profiles) + _check_read_at(cats.parts)
    coverage = None
    if (root / COVERAGE).exists():
        cov_doc, found = next(read)
        findings += found
        if not found:
            coverage, found = validate(Coverage, cov_doc)
            findings += found
            if coverage and cats.catalog:
                findings += _check_coverage(coverage, cats.catalog, cov_doc)
    warnings = placeholders(cats.parts)
    if findings or catalog is None:
        raise SourceError(findings + warnings)
    ordered = sorted((p for p, _ in profiles), key=lambda p: (p.order is None, p.order or 0, p.id))
    teams = tuple(cats.teams)
    return Manual(catalog, tuple(ordered), coverage, teams, cats.catalog if teams else None, tuple(warnings))


def _check_profile_ids(profiles: list[tuple[Profile, Document]], parts: list[Part]) -> list[Finding]:
    """Profile ids are unique, and so are the anchors their notes give on the reference page."""
    findings: list[Finding] = []
    seen_profiles: dict[str, str] = {}
    anchors = dict.fromkeys(RESERVED_ANCHORS, "")
    anchors.update({s.anchor: f"section {s.id!r} of {p.doc.path}" for p in parts for s in p.sections})
    for profile, doc in profiles:
        if profile.id in seen_profiles:
            findings.append(
                doc.finding(
                    ("id",),
                    f"profile id {profile.id!r} is already used by {seen_profiles[profile.id]}",
                    code=codes.DUPLICATE_ID,
                )
            )
        seen_profiles[profile.id] = doc.path
        for i, note in enumerate(profile.notes):
            # Notes are sections of the reference page: their anchors must be unique on it.
            if note.anchor in anchors:
                other = RESERVED_ANCHORS.get(note.anchor) or anchors[note.anchor]
                findings.append(
                    doc.finding(
                        ("notes", i, "id"),
                        f"note id {note.id!r} gives the anchor {note.anchor!r}, "
                        f"which {other} already has; choose another id",
                        code=codes.ANCHOR_CLASH,
                    )
                )
            anchors[note.anchor] = f"note {note.id!r} of {doc.path}"
    return findings


def _check_not_logged(parts: list[Part], profiles: list[tuple[Profile, Document]]) -> list[Finding]:
    """A key no process logs has no range: a range for it could never hold."""
    out: list[Finding] = []
    for part in parts:
        for at, metric in part.metrics():
            if metric.not_logged is None:
                continue
            line, col = part.doc.where((*at, "not_logged"))
            for profile, pdoc in profiles:
                for k in (metric.key, *metric.members):
                    if k in profile.expectations:
                        out.append(
                            pdoc.finding(
                                ("expectations", k),
                                f"{k} is not logged at the catalog's commit ({part.doc.path}:{line}:{col}); "
                                "a range for it can never hold: remove it",
                                code=codes.NOT_LOGGED_WITH_RANGE,
                                key=True,
                            )
                        )
    return out


def _check_read_at(parts: list[Part]) -> list[Finding]:
    """An origin's `read_at` is another commit than its catalog's (the one where a flag is cleared by removing it)."""
    out: list[Finding] = []
    for part in parts:
        code = part.commit
        for at, metric in part.metrics():
            read_at = metric.origin.read_at if metric.origin else None
            if read_at is not None and (read_at.startswith(code) or code.startswith(read_at)):
                out.append(
                    part.doc.finding(
                        (*at, "origin", "read_at"),
                        f"{metric.key}: read_at names the catalog's commit {code[:12]}; an origin without read_at is "
                        "read there: remove it",
                        code=codes.READ_AT_CATALOG_COMMIT,
                    )
                )
    return out


def _check_coverage(coverage: Coverage, catalog: Catalog, doc: Document) -> list[Finding]:
    """coverage.yaml must speak of the catalog's commit, and of keys the catalog does (or does not) document."""
    out: list[Finding] = []
    if not catalog.code.commit.startswith(coverage.commit) and not coverage.commit.startswith(catalog.code.commit):
        out.append(
            doc.finding(
                ("commit",),
                f"checked against Miles {coverage.commit[:12]} but {CATALOG} reads Miles at "
                f"{catalog.code.commit[:12]}; run `metrics-manual coverage --miles PATH` and update this file",
                code=codes.COVERAGE_STALE,
            )
        )
    docs = [k for s in catalog.sections for m in s.metrics for k in (m.members or [m.key])]
    for i, entry in enumerate(coverage.undocumented):
        if any(overlap(d, entry.key) for d in docs):
            out.append(
                doc.finding(
                    ("undocumented", i, "key"),
                    f"{entry.key!r} is documented in {CATALOG}",
                    code=codes.COVERAGE_CONTRADICTS,
                )
            )
    for i, entry in enumerate(coverage.not_visible):
        if not any(overlap(d, entry.key) for d in docs):
            out.append(
                doc.finding(
                    ("not_visible", i, "key"),
                    f"{entry.key!r} is not documented in {CATALOG}",
                    code=codes.COVERAGE_CONTRADICTS,
                )
            )
    return out
