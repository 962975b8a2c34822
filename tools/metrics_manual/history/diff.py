"""What changed in the ranges between two manuals, in the manual's words.

Changes are grouped as OpenTelemetry Weaver's `registry diff` groups them: added, removed,
renamed, updated. A catalog metric is renamed when one key leaves and another with the same
meaning arrives; a profile is renamed when one id leaves and another with the same title or
setup arrives. An updated range lists each changed part, before -> after, phrased by
model/phrase.py as every page phrases it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any, Literal, assert_never

from pydantic import Field

from metrics_manual.model.json_schema import schema_text
from metrics_manual.model.phrase import (
    corridor_side,
    describe,
    measured,
    num,
    plain,
    reference_steps,
    unit_after_number,
)
from metrics_manual.model.schema import (
    AtStep,
    Band,
    CaptureSource,
    CodeSource,
    Corridor,
    Exact,
    Expectation,
    LogSource,
    Median,
    Metric,
    Presence,
    Profile,
    Source,
    Strict,
)
from metrics_manual.source.load import Manual

DIFF_SCHEMA = "docs/export/diff.schema.json"
ChangeKind = Literal["added", "removed", "renamed", "updated"]
NONE = "none"


class FieldChange(Strict):
    field: str = Field(description="The part that changed: bounds, unit, statistic, window, condition, sources ...")
    before: str = Field(description="The part before, in the manual's words ('none' when it had none).")
    after: str = Field(description="The part after, in the manual's words ('none' when it has none).")


class RangeChange(Strict):
    change: ChangeKind = Field(description="added, removed or updated (a range of the same kind that changed).")
    before: str | None = Field(default=None, description="The range before, in words; none when added.")
    after: str | None = Field(default=None, description="The range after, in words; none when removed.")
    fields: list[FieldChange] = Field(default_factory=list, description="Updated: each part that changed.")


class MetricChange(Strict):
    key: str = Field(description="The metric key after the change (before it, when removed).")
    change: ChangeKind
    renamed_from: str | None = Field(default=None, description="Renamed: the key before.")
    section: str | None = Field(default=None, description="Id of the metric's section (after; before when removed).")
    fields: list[FieldChange] = Field(
        default_factory=list, description="Catalog: meaning, unit, path ... that changed."
    )
    ranges: list[RangeChange] = Field(default_factory=list, description="Profile: the ranges that changed.")
    anchor: str = Field(description="The metric's anchor on the reference page.")


class ProfileChange(Strict):
    id: str = Field(description="The profile id after the change (before it, when removed).")
    title: str
    change: ChangeKind
    renamed_from: str | None = None
    fields: list[FieldChange] = Field(default_factory=list, description="Title, setup and sources that changed.")
    metrics: list[MetricChange] = Field(default_factory=list, description="Metrics whose ranges changed.")


class Revision(Strict):
    name: str = Field(description="As given: a revision, or 'working tree'.")
    commit: str | None = Field(default=None, description="Full commit id; none for the working tree or an empty side.")


class RangeDiff(Strict):
    """What `metrics-manual diff --format json` prints."""

    schema_version: Literal[1] = 1
    base: Revision
    head: Revision
    catalog: list[FieldChange] = Field(default_factory=list, description="The catalog's own fields: title, code.")
    sections: list[FieldChange] = Field(default_factory=list, description="Sections added, removed or retitled.")
    metrics: list[MetricChange] = Field(default_factory=list, description="Catalog entries that changed.")
    profiles: list[ProfileChange] = Field(default_factory=list, description="Profiles that changed.")

    @property
    def empty(self) -> bool:
        return not (self.catalog or self.sections or self.metrics or self.profiles)


# --- parts of a range, in words ------------------------------------------------------


def _w(v: Any) -> str:
    return NONE if v is None or v == [] else plain(v)


def parts(e: Expectation, unit: str | None) -> dict[str, str]:
    """A range cut into the parts a reader compares, each as the manual phrases it."""
    u = unit_after_number(unit)
    out: dict[str, str] = {}
    match e:
        case Band():
            if e.min is not None and e.max is not None:
                out["bounds"] = f"{num(e.min)} to {num(e.max)}{u}"
            else:
                out["bounds"] = f"at least {num(e.min)}{u}" if e.min is not None else f"at most {num(e.max)}{u}"  # type: ignore[arg-type]
            out["statistic"] = "per step" + (f" over {num(e.steps)} steps" if e.steps else "")
            out["window"] = f"the first {num(e.window.first)} steps" if e.window else NONE
        case Median():
            out["bounds"] = f"{num(e.value)}{u}"
            out["statistic"] = f"median of {num(e.steps)} steps"
            out["tolerance"] = f"{num(round(e.tolerance * 100, 10))}%" if e.tolerance is not None else NONE
        case Exact():
            out["bounds"] = f"{num(e.value)}{u}"
            at = e.at
            out["statistic"] = (
                f"at step {num(at.step)}"
                if isinstance(at, AtStep)
                else ("at every step" if at == "every_step" else "in every run")
            )
        case Presence():
            out["statistic"] = "logged in every step"
        case Corridor():
            out["bounds"] = (
                f"{corridor_side(e.rel_up, e.abs_floor_up, u)} above, {corridor_side(e.rel_down, e.abs_floor_down, u)} below"
            )
            out["statistic"] = "per step around a reference curve"
            ref = e.reference
            lo, hi = min(v for _, v in ref.points), max(v for _, v in ref.points)
            smooth = f", a rolling median of {num(ref.rolling_median)} steps" if ref.rolling_median else ""
            out["reference"] = (
                f"source {ref.source}, {reference_steps(e)}, from {measured(lo)} to {measured(hi)}{smooth}"
            )
            # Any change of the curve shows, however small: its points' digest.
            out["reference curve"] = hashlib.sha256(repr(ref.points).encode()).hexdigest()[:12]
        case _:
            assert_never(e)
    out["condition"] = _w(e.condition)
    out["sources"] = ", ".join(e.sources) if e.sources else "all of the profile's sources"
    return out


def _changed(before: dict[str, str], after: dict[str, str]) -> list[FieldChange]:
    return [
        FieldChange(field=k, before=before.get(k, NONE), after=after.get(k, NONE))
        for k in dict.fromkeys([*before, *after])
        if before.get(k, NONE) != after.get(k, NONE)
    ]


def _pair(old: list[Expectation], new: list[Expectation]) -> list[tuple[Expectation | None, Expectation | None]]:
    """Old and new ranges of one metric paired: equal ones first, then the same kind and condition, then the same kind."""
    left, right = list(old), list(new)
    pairs: list[tuple[Expectation | None, Expectation | None]] = []
    rules: tuple[Callable[[Expectation, Expectation], bool], ...] = (
        lambda a, b: a == b,
        lambda a, b: a.kind == b.kind and a.condition == b.condition,
        lambda a, b: a.kind == b.kind,
    )
    for same in rules:
        for a in list(left):
            b = next((b for b in right if same(a, b)), None)
            if b is not None:
                pairs.append((a, b))
                left.remove(a)
                right.remove(b)
    return pairs + [(a, None) for a in left] + [(None, b) for b in right]


def range_changes(
    old: list[Expectation], new: list[Expectation], old_unit: str | None, new_unit: str | None
) -> list[RangeChange]:
    out = []
    for a, b in _pair(old, new):
        if a is None and b is not None:
            out.append(RangeChange(change="added", after=describe(b, new_unit, sources=True)))
        elif b is None and a is not None:
            out.append(RangeChange(change="removed", before=describe(a, old_unit, sources=True)))
        elif a is not None and b is not None and a != b:
            out.append(
                RangeChange(
                    change="updated",
                    before=describe(a, old_unit, sources=True),
                    after=describe(b, new_unit, sources=True),
                    fields=_changed(parts(a, old_unit), parts(b, new_unit)),
                )
            )
    return out


# --- the catalog ---------------------------------------------------------------------


def metric_fields(m: Metric, section: str) -> dict[str, str]:
    o = m.origin
    return {
        "meaning": plain(m.meaning),
        "unit": _w(m.unit),
        "name": _w(m.name),
        "members": ", ".join(m.members) or NONE,
        "section": section,
        "path": _w(o and o.path),
        "symbol": _w(o and o.symbol),
        "computed": _w(o and o.computed),
        "logged": _w(o and o.logged),
    }


def _new_metric_fields(m: Metric, section: str) -> dict[str, str]:
    """What a reader needs of an added metric: its meaning, unit and section (the rest is on its entry)."""
    f = metric_fields(m, section)
    return {k: f[k] for k in ("meaning", "unit", "section")}


def _sections_of(manual: Manual | None) -> dict[str, str]:
    return {m.key: s.id for s in manual.catalog.sections for m in s.metrics} if manual else {}


def renames(
    removed: Iterable[str], added: Iterable[str], old: dict[str, Metric], new: dict[str, Metric]
) -> dict[str, str]:
    """New key -> old key, for a key that left while one with the same meaning arrived (one to one)."""
    out: dict[str, str] = {}
    left = list(removed)
    for key in added:
        match = [k for k in left if old[k].meaning == new[key].meaning and old[k].unit == new[key].unit]
        if len(match) == 1:
            out[key] = match[0]
            left.remove(match[0])
    return out


def catalog_changes(old: Manual | None, new: Manual | None) -> tuple[list[MetricChange], dict[str, str]]:
    om, nm = (old.metrics if old else {}), (new.metrics if new else {})
    osec, nsec = _sections_of(old), _sections_of(new)
    removed = [k for k in om if k not in nm]
    added = [k for k in nm if k not in om]
    renamed = renames(removed, added, om, nm)
    out: list[MetricChange] = []
    for key, m in nm.items():
        if key in om or key in renamed:
            was = renamed.get(key, key)
            fields = _changed(metric_fields(om[was], osec[was]), metric_fields(m, nsec[key]))
            if key in renamed or fields:
                out.append(
                    MetricChange(
                        key=key,
                        change="renamed" if key in renamed else "updated",
                        renamed_from=renamed.get(key),
                        section=nsec[key],
                        fields=fields,
                        anchor=m.anchor,
                    )
                )
        else:
            out.append(
                MetricChange(
                    key=key,
                    change="added",
                    section=nsec[key],
                    fields=_changed({}, _new_metric_fields(m, nsec[key])),
                    anchor=m.anchor,
                )
            )
    gone = set(renamed.values())
    for key, m in om.items():
        if key not in nm and key not in gone:
            out.append(MetricChange(key=key, change="removed", section=osec[key], anchor=m.anchor))
    return out, renamed


def _catalog_fields(old: Manual | None, new: Manual | None) -> list[FieldChange]:
    def fields(m: Manual | None) -> dict[str, str]:
        if m is None:
            return {}
        c = m.catalog.code
        return {"title": plain(m.catalog.title), "code": f"{c.repository} {c.branch} {c.commit}"}

    return _changed(fields(old), fields(new))


def _section_changes(old: Manual | None, new: Manual | None) -> list[FieldChange]:
    o = {s.id: plain(s.title) for s in old.catalog.sections} if old else {}
    n = {s.id: plain(s.title) for s in new.catalog.sections} if new else {}
    return [
        FieldChange(field=f"section {sid}", before=o.get(sid, NONE), after=n.get(sid, NONE))
        for sid in dict.fromkeys([*o, *n])
        if o.get(sid, NONE) != n.get(sid, NONE)
    ]


# --- profiles ------------------------------------------------------------------------


def _source_words(s: Source) -> str:
    match s:
        case CaptureSource():
            extra = f", commit {s.code_commit}" if s.code_commit else ""
            return f"capture {s.path} ({', '.join(s.keys)}{extra})" + (f", sha256 {s.sha256[:12]}" if s.sha256 else "")
        case LogSource():
            return f"log {s.path}"
        case CodeSource():
            return f"code {s.repository} {s.branch} commit {s.commit} ({', '.join(s.parts)})"
        case _:
            assert_never(s)


def profile_fields(p: Profile) -> dict[str, str]:
    s, hw = p.setup, p.setup.hardware
    out = {
        "title": plain(p.title),
        "setup": f"{s.framework}, {s.model} on {s.dataset}, {hw.count} x {hw.name}, "
        f"{s.prompts_per_step} prompts x {s.answers_per_prompt} answers per step, "
        f"at most {s.token_limit} tokens, {s.steps} steps",
    }
    out.update({f"source {sid}": plain(_source_words(src)) for sid, src in p.sources.items()})
    out.update({f"note {n.id}": plain(" ".join(n.paragraphs)) for n in p.notes})
    return out


def _profile_renames(removed: list[Profile], added: list[Profile]) -> dict[str, str]:
    out: dict[str, str] = {}
    left = list(removed)
    for p in added:
        match = [o for o in left if o.title == p.title] or [o for o in left if o.setup == p.setup]
        if len(match) == 1:
            out[p.id] = match[0].id
            left.remove(match[0])
    return out


def profile_changes(old: Manual | None, new: Manual | None, renamed_keys: dict[str, str]) -> list[ProfileChange]:
    op = {p.id: p for p in old.profiles} if old else {}
    np_ = {p.id: p for p in new.profiles} if new else {}
    ou = {k: m.unit for k, m in (old.metrics if old else {}).items()}
    nmetrics = new.metrics if new else {}
    anchors = {k: m.anchor for k, m in {**(old.metrics if old else {}), **nmetrics}.items()}
    renamed = _profile_renames([p for i, p in op.items() if i not in np_], [p for i, p in np_.items() if i not in op])
    out: list[ProfileChange] = []
    for pid, p in np_.items():
        was = renamed.get(pid, pid)
        before = op.get(was)
        metrics: list[MetricChange] = []
        old_exp = dict(before.expectations) if before else {}
        for key, exps in p.expectations.items():
            old_key = renamed_keys.get(key, key)
            prev = old_exp.pop(old_key, [])
            unit = nmetrics[key].unit if key in nmetrics else None
            changes = range_changes(prev, exps, ou.get(old_key), unit)
            if changes:
                change: ChangeKind = "added" if not prev else "removed" if not exps else "updated"
                if old_key != key and prev:
                    change = "renamed"
                metrics.append(
                    MetricChange(
                        key=key,
                        change=change,
                        renamed_from=old_key if change == "renamed" else None,
                        ranges=changes,
                        anchor=anchors[key],
                    )
                )
        for key, prev in old_exp.items():
            metrics.append(
                MetricChange(
                    key=key,
                    change="removed",
                    ranges=range_changes(prev, [], ou.get(key), None),
                    anchor=anchors[key],
                )
            )
        fields = _changed(profile_fields(before) if before else {}, profile_fields(p))
        if before is None:
            out.append(ProfileChange(id=pid, title=plain(p.title), change="added", metrics=metrics))
        elif pid in renamed or fields or metrics:
            out.append(
                ProfileChange(
                    id=pid,
                    title=plain(p.title),
                    change="renamed" if pid in renamed else "updated",
                    renamed_from=renamed.get(pid),
                    fields=fields,
                    metrics=metrics,
                )
            )
    gone = set(renamed.values())
    for pid, p in op.items():
        if pid not in np_ and pid not in gone:
            out.append(ProfileChange(id=pid, title=plain(p.title), change="removed"))
    return out


def diff_manuals(old: Manual | None, new: Manual | None, base: Revision, head: Revision) -> RangeDiff:
    """Every change from `old` to `new` (None: a side with no ranges at all)."""
    metrics, renamed = catalog_changes(old, new)
    return RangeDiff(
        base=base,
        head=head,
        catalog=_catalog_fields(old, new),
        sections=_section_changes(old, new),
        metrics=metrics,
        profiles=profile_changes(old, new, renamed),
    )


def changed_keys(d: RangeDiff) -> set[str]:
    """Every metric key the diff touches (old and new names of a renamed one)."""
    keys = {m.key for m in d.metrics} | {m.renamed_from for m in d.metrics if m.renamed_from}
    for p in d.profiles:
        keys |= {m.key for m in p.metrics} | {m.renamed_from for m in p.metrics if m.renamed_from}
    return {k for k in keys if k}


def diff_schema() -> dict[str, str]:
    """The published JSON Schema of `diff --format json`, for build to write beside the others."""
    return {DIFF_SCHEMA: schema_text(RangeDiff, "metrics-manual diff (--format json)")}
