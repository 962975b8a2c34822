"""Load ranges/ into the typed model, collecting every finding with its file, line and column."""
from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import math
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import Finding, SourceError
from .model import AtStep, Band, Catalog, Exact, Median, Metric, Profile
from .source import Document, Loc, read_document

CATALOG = "ranges/catalog.yaml"
PROFILES = "ranges/profiles"

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Manual:
    """The whole validated source."""

    catalog: Catalog
    profiles: tuple[Profile, ...]

    @functools.cached_property
    def metrics(self) -> dict[str, Metric]:
        return {m.key: m for s in self.catalog.sections for m in s.metrics}

    def known_keys(self) -> set[str]:
        """Every key a page may name: metrics, family members and step keys."""
        keys = set(self.metrics)
        for m in self.metrics.values():
            keys.update(m.members)
        keys.update(self.catalog.step_keys.values())
        keys.update(f"{ns}/*" for ns in self.catalog.step_keys)  # a whole namespace, as in `train/*`
        return keys

    def profile(self, profile_id: str) -> Profile:
        for p in self.profiles:
            if p.id == profile_id:
                return p
        raise KeyError(profile_id)


def did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


_KINDS = ("band", "median", "exact", "presence")
_NUMBER_ERRORS = {"int_type", "float_type", "int_parsing", "float_parsing", "int_from_float"}


def _message(err: Any, allowed: list[str]) -> str:
    kind, value = err["type"], err.get("input")
    # Drop the parts a validator adds to the location: union tags and int/float branches.
    loc = [p for p in err["loc"] if p not in _KINDS and p not in ("int", "float")]
    field = str(loc[-1]) if loc and not isinstance(loc[-1], int) else ""
    prefix = f"{field}: " if field else ""
    if kind == "extra_forbidden":
        return f"unknown field {field!r}" + did_you_mean(field, allowed)
    if kind == "missing":
        return f"missing field {field!r}"
    if kind == "union_tag_invalid":
        return f"unknown kind {err['ctx']['tag']!r}; expected one of: {err['ctx']['expected_tags']}"
    if kind == "union_tag_not_found":
        return f"missing field {err['ctx']['discriminator'].strip(chr(39))!r}"
    if kind in _NUMBER_ERRORS and err["loc"][-1] in ("int", "float") or kind in ("float_type", "int_type"):
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return f"{prefix}expected a number, got the string {value!r}"
            if not math.isfinite(number):
                return f"{prefix}{value!r} is not a finite number; ranges must be finite"
            return f"{prefix}expected a number, got the string {value!r}; remove the quotes (YAML wants a dot in a float: 1.0e-3)"
        what = "integer" if kind.startswith("int") and err["loc"][-1] != "int" else "number"
        return f"{prefix}expected {'an' if what == 'integer' else 'a'} {what}, got {value!r}"
    msg = err["msg"].removeprefix("Value error, ")
    if kind.startswith("literal") or kind == "string_pattern_mismatch" or kind.endswith("_type"):
        msg += f", got {value!r}"
    return prefix + msg


@functools.cache
def _field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """Every field name in the model tree: the pool for 'did you mean' on an unknown field."""
    names: set[str] = set()
    stack: list[Any] = [model]
    seen: set[type] = set()
    while stack:
        tp = stack.pop()
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if tp not in seen:
                seen.add(tp)
                names.update(tp.model_fields)
                stack.extend(f.annotation for f in tp.model_fields.values())
        else:
            stack.extend(typing.get_args(tp))
    return tuple(sorted(names))


def validate(model: type[M], doc: Document) -> tuple[M | None, list[Finding]]:
    try:
        return model.model_validate(doc.data), []
    except ValidationError as exc:
        findings = []
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            allowed = list(_field_names(model)) if err["type"] == "extra_forbidden" else []
            if err["type"] == "union_tag_invalid":
                loc = (*loc, "kind")
            findings.append(doc.finding(loc, _message(err, allowed), key=err["type"] == "extra_forbidden"))
        return None, findings


def _check_catalog(catalog: Catalog, doc: Document) -> list[Finding]:
    out: list[Finding] = []
    seen_sections: set[str] = set()
    seen_keys: dict[str, str] = {}
    anchors: dict[str, str] = {}
    for si, section in enumerate(catalog.sections):
        if section.id in seen_sections:
            out.append(doc.finding(("sections", si, "id"), f"duplicate section id {section.id!r}"))
        seen_sections.add(section.id)
        for mi, metric in enumerate(section.metrics):
            loc = ("sections", si, "metrics", mi, "key")
            for key in (metric.key, *metric.members):
                if key in seen_keys:
                    out.append(doc.finding(loc, f"metric {key!r} is already in the catalog (section {seen_keys[key]!r})"))
                seen_keys[key] = section.id
            if metric.anchor in anchors and anchors[metric.anchor] != metric.key:
                out.append(doc.finding(loc, f"{metric.key!r} and {anchors[metric.anchor]!r} give the same anchor {metric.anchor!r}"))
            anchors[metric.anchor] = metric.key
    return out


def _check_profile(profile: Profile, doc: Document, manual_keys: dict[str, Metric], sections: set[str]) -> list[Finding]:
    out: list[Finding] = []
    source_ids = set(profile.sources)
    note_ids = {n.id for n in profile.notes}
    run_steps = profile.setup.steps

    def refs(ids: list[str], loc: Loc) -> None:
        for i, sid in enumerate(ids):
            if sid not in source_ids:
                out.append(doc.finding((*loc, i), f"unknown source {sid!r}; declare it under 'sources'" + did_you_mean(sid, source_ids)))

    for key, expectations in profile.expectations.items():
        if key not in manual_keys:
            out.append(doc.finding(("expectations", key), f"unknown metric {key!r}; add it to {CATALOG} first" + did_you_mean(key, manual_keys), key=True))
        for i, e in enumerate(expectations):  # isinstance, not getattr: this loop runs once per range
            loc = ("expectations", key, i)
            if e.sources:
                refs(e.sources, (*loc, "sources"))
            steps = e.steps if isinstance(e, (Band, Median)) else None
            if steps and steps > run_steps:
                out.append(doc.finding((*loc, "steps"), f"{steps} steps is more than the {run_steps} steps of the setup"))
            if isinstance(e, Exact) and isinstance(e.at, AtStep) and e.at.step >= run_steps:
                out.append(doc.finding((*loc, "at", "step"), f"step {e.at.step} is past the last step of a {run_steps}-step run"))
    for sid in profile.section_notes:
        if sid not in sections:
            out.append(doc.finding(("section_notes", sid), f"unknown section {sid!r}" + did_you_mean(sid, sections), key=True))
        see = profile.section_notes[sid].see
        if see and see not in note_ids:
            out.append(doc.finding(("section_notes", sid, "see"), f"unknown note {see!r}; add it under 'notes'" + did_you_mean(see, note_ids)))
    for i, note in enumerate(profile.notes):
        refs(note.sources, ("notes", i, "sources"))
    return out


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
            gc.enable()


def load_manual(root: Path, *, fast: bool = True) -> Manual:
    """Load and validate everything under root/ranges; raise SourceError with all findings.

    The fast reader keeps no line numbers, so on any finding the whole source is read
    again the slow way, which is the one that reports: both agree on every valid source.
    """
    with gc_paused():
        try:
            return _load(root, fast=fast)
        except SourceError:
            if not fast:
                raise
        return _load(root, fast=False)


def _load(root: Path, *, fast: bool) -> Manual:
    findings: list[Finding] = []
    cat_doc, found = read_document(root / CATALOG, CATALOG, fast=fast)
    findings += found
    catalog = None
    if not found:
        catalog, found = validate(Catalog, cat_doc)
        findings += found
        if catalog:
            findings += _check_catalog(catalog, cat_doc)

    profiles: list[tuple[Profile, Document]] = []
    for file in sorted((root / PROFILES).glob("*.yaml")):
        doc, found = read_document(file, f"{PROFILES}/{file.name}", fast=fast)
        findings += found
        if not found:
            profile, found = validate(Profile, doc)
            findings += found
            if profile:
                profiles.append((profile, doc))

    if catalog:
        keys = {k: m for s in catalog.sections for m in s.metrics for k in (m.key, *m.members)}
        sections = {s.id for s in catalog.sections}
        for profile, doc in profiles:
            findings += _check_profile(profile, doc, keys, sections)
    seen_profiles: dict[str, str] = {}
    seen_notes: dict[str, str] = {}
    for profile, doc in profiles:
        if profile.id in seen_profiles:
            findings.append(doc.finding(("id",), f"profile id {profile.id!r} is already used by {seen_profiles[profile.id]}"))
        seen_profiles[profile.id] = doc.path
        for i, note in enumerate(profile.notes):
            # Notes share the reference page, so their anchors must be unique across profiles.
            if note.id in seen_notes:
                findings.append(doc.finding(("notes", i, "id"), f"note id {note.id!r} is already used by {seen_notes[note.id]}"))
            seen_notes[note.id] = doc.path
    if findings or catalog is None:
        raise SourceError(findings)
    return Manual(catalog, tuple(p for p, _ in profiles))
