"""What `derive` will do, computed before anything is written: the edited profile file, the captures,
what check will report on the runs, and the warnings.

The profile is an existing one, or a new one (derive/new_profile.py) whose file the plan creates.
Everything is validated in memory first: an edit never writes an invalid file.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from metrics_manual.derive.add_keys import CatalogEdit, add_keys
from metrics_manual.derive.captures import CAPTURES, Folder, capture_folder, capture_sources, display_path
from metrics_manual.derive.held import broken_line, failures
from metrics_manual.derive.leave_one_out import leave_one_out
from metrics_manual.derive.new_profile import NewProfile, new_file, profile_text, setup_steps
from metrics_manual.derive.not_ranged import NotRanged, not_ranged
from metrics_manual.derive.profile_edit import NEW_FILE_INDENT, ProfileFile
from metrics_manual.derive.stats import REFERENCE, Derivation, Options, derive
from metrics_manual.diagnostics.finding import Finding, SourceError, UsageError
from metrics_manual.exports.document import export_document
from metrics_manual.model.kinds import keeps_warm_up
from metrics_manual.model.phrase import words
from metrics_manual.model.schema import Corridor, Expectation, Profile
from metrics_manual.runs import read as runs_reader
from metrics_manual.runs.capture import reference_text
from metrics_manual.runs.run import Run
from metrics_manual.source.load import PROFILES, Manual, load_manual, profile_files
from metrics_manual.source.reader import read_document, read_yaml
from metrics_manual.source.reference import ProjectCaptures


@dataclass
class RunArg:
    name: str
    path: Path


def read_run(path: Path, manual: Manual, input_format: str = "auto") -> Run:
    """One run from its files or folder, through the judge's readers (any form a Miles run writes).

    A run that cannot be read at all is a SourceError: its findings print as they are, once each.
    """
    try:
        return runs_reader.read_run([path], manual.catalog, input_format)
    except runs_reader.RunInputError as err:
        raise SourceError(err.findings) from None


def read_runs(runs: list[RunArg], manual: Manual, input_format: str) -> tuple[dict[str, Run], list[str]]:
    """Every run, and the warnings their readers gave; a run with an error is a SourceError (all of them)."""
    loaded: dict[str, Run] = {}
    errors: list[Finding] = []
    notes: list[str] = []
    for r in runs:
        try:
            run = read_run(r.path, manual, input_format)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--run {r.name}={r.path}: cannot read it ({exc.__class__.__name__})") from None
        errors += [p for p in run.problems if p.severity == "error"]
        notes += [str(p) for p in run.problems if p.severity != "error"]
        loaded[r.name] = run
    if errors:
        raise SourceError(errors)
    return loaded, notes


def profile_path(root: Path, profile_id: str) -> Path:
    for file in profile_files(root)[0]:
        doc, _ = read_document(file, file.name, fast=True)
        if isinstance(doc.data, dict) and doc.data.get("id") == profile_id:
            return file
    raise UsageError(f"no file under {PROFILES} holds profile {profile_id!r}")


_SKIP = re.compile(r"(?:^|, )after the first (?:step|\S+ steps)$")


def with_skip(condition: str | None, n: int) -> str | None:
    """The condition saying which warm-up steps are left out (a previous derive's phrase replaced)."""
    kept = _SKIP.sub("", condition or "") or None
    if not n:
        return kept
    return f"{kept}, {skip_phrase(n)}" if kept else skip_phrase(n)


def skip_phrase(n: int) -> str:
    return "after the first step" if n == 1 else f"after the first {words(n)} steps"


def validate_edit(root: Path, edits: Mapping[Path, str], pending: Mapping[Path, str] | None = None) -> Manual:
    """Load the source as it would be with the edited files (a profile, a team catalog) and the captures
    about to be written (`pending`, by path: a corridor's reference): an edit never writes an invalid file."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "ranges", Path(tmp) / "ranges", ignore=shutil.ignore_patterns("captures", "schema"))
        for file, text in edits.items():
            there = Path(tmp) / file.relative_to(root)
            there.parent.mkdir(parents=True, exist_ok=True)  # a project's first profile: no folder yet
            there.write_text(text, "utf-8")
        return load_manual(Path(tmp), captures=ProjectCaptures(root, pending or {}))


@dataclass
class DerivePlan:
    derivation: Derivation
    profile_file: Path
    old_text: str  # "" for a new profile
    new_text: str
    captures: dict[Path, str]
    broken: list[str]  # what check will report on these runs once the edit is written
    left_out: list[str]  # the leave-one-out check, one line per run
    display: str = ""  # the profile file as findings name it
    created: bool = False  # a new profile: the file does not exist yet
    notes: list[str] = field(default_factory=list)  # the readers' warnings and what derive chose for the user
    added: CatalogEdit | None = None  # the team catalog --add-keys edits
    not_ranged: list[NotRanged] = field(default_factory=list)  # the keys the runs log that are not ranged, and why

    def warnings(self, written: bool) -> list[Finding]:
        """What is written but will mislead (a band with no width), at its expectation in the file as
        it is on disk once the command ends: the edited file when `written`, else the file untouched
        (a new profile's file, which a dry run does not write: the text it would write)."""
        if self.created:
            unwritten = "" if written else " (in the new file, which a dry run does not write)"
            return [
                replace(f, message=f.message + unwritten)
                for f in _warnings(self.derivation, self.new_text, self.new_text, self.display)
            ]
        return _warnings(self.derivation, self.new_text if written else self.old_text, self.new_text, self.display)


def plan_derivation(
    root: Path,
    manual: Manual,
    profile_id: str,
    runs: list[RunArg],
    options: Options,
    capture_to: str | None,
    code_commit: str | None,
    input_format: str = "auto",
    new: NewProfile | None = None,
    add_keys_to: str | None = None,
) -> DerivePlan:
    """The derivation of profile `profile_id` (or of the `new` one) from `runs`, nothing written;
    `add_keys_to`: the team whose catalog takes the keys the runs log and no catalog has."""
    target = new_file(root, new.id) if new is not None else None  # refused before the runs are read
    folder = capture_folder(root, capture_to, profile_id, {r.name: r.path for r in runs})
    loaded, notes = read_runs(runs, manual, input_format)
    notes += [folder.note] if folder.note else []
    added, why_not, edits = None, None, {}
    if add_keys_to is not None:
        added, why_not = add_keys(root, manual, loaded, add_keys_to, options.keys)
        if added.keys:
            edits[added.file] = added.new_text
            manual = validate_edit(root, edits)
            if added.step_keys:  # the keys of a namespace that had no step key are read anew, at their steps
                loaded, _ = read_runs(runs, manual, input_format)
    keys = [k for m in manual.metrics.values() for k in (m.members or [m.key])]
    captured = capture_sources(
        root, loaded, {r.name: r.path for r in runs}, keys, folder.path, code_commit, options.skip_first
    )

    if target is not None and new is not None:
        file, old = target, ""
        steps, note = setup_steps(loaded)
        notes += [note] if note else []
        base = profile_text(new, steps, captured.sources)
        manual = validate_edit(root, {**edits, file: base})
    else:
        file = profile_path(root, profile_id)
        old = base = file.read_bytes().decode("utf-8")
    profile = manual.profile(profile_id)
    for sid, s in profile.sources.items():
        if sid in captured.sources and s.kind != "capture":
            raise UsageError(
                f"run name {sid!r} is already a {s.kind} source of profile {profile.id}; pick another name"
            )
    export = export_document(manual, profile, None)
    result = derive(manual, profile, loaded, options, export)
    reference = _reference(root, profile, result, folder, list(captured.sources), code_commit, options.skip_first)
    if reference is not None:
        target, text, source = reference
        captured.files[target] = text
        captured.sources[REFERENCE] = source

    display = file.relative_to(root).as_posix()
    text = _edited_profile(base, display, new is not None, captured.sources, result, profile, options.skip_first)
    edited = validate_edit(root, {**edits, file: text}, captured.files)
    # Judged as check will judge these runs once the edit is written: the two agree by construction.
    after = export_document(edited, edited.profile(profile.id), None)
    broken = [broken_line(b) for b in failures(after, loaded, options.skip_first)]
    left_out = leave_one_out(manual, profile, export, loaded, options) if len(loaded) >= 3 else []
    ranged = {o.key for o in result.outcomes}
    unranged = not_ranged(manual, loaded, ranged, options.keys, why_not)
    return DerivePlan(
        result, file, old, text, captured.files, broken, left_out, display, new is not None, notes, added, unranged
    )


def _edited_profile(
    base: str,
    display: str,
    created: bool,
    sources: Mapping[str, dict[str, Any]],
    result: Derivation,
    profile: Profile,
    skip_first: int,
) -> str:
    """The profile file's text with the runs' capture sources and every derived expectation written in."""
    editor = ProfileFile(base, display, NEW_FILE_INDENT if created else None)
    for sid, source_values in sources.items():
        editor.set_source(sid, source_values)
    run_ids = [sid for sid in sources if sid != REFERENCE]
    for o in result.outcomes:
        if o.values is None or o.problems:
            continue
        values: dict[str, Any] = dict(o.values, sources=run_ids)
        if isinstance(values.get("reference"), dict):  # a corridor: its curve goes to the reference capture
            values["reference"] = {k: v for k, v in values["reference"].items() if k != "points"}
        before = _existing(profile, o.key, o.index)
        if before is None or not keeps_warm_up(before.span):  # a window covers the warm-up: its condition stays
            was = before.condition if before is not None else None
            condition = with_skip(was, skip_first)
            if condition != was:
                values["condition"] = condition  # None removes it
        editor.set_expectation(o.key, o.index, values)
    return editor.text()


def _reference(
    root: Path,
    profile: Profile,
    result: Derivation,
    folder: Folder,
    runs: list[str],
    code_commit: str | None,
    skip_first: int,
) -> tuple[Path, str, dict[str, object]] | None:
    """The capture of the corridors' reference curves (its file, text and source), when derive wrote a
    corridor: one line per metric, the lines of the profile's other corridors on it kept. Inside the
    project always (a reference is read only there): the runs' capture folder when it is inside."""
    curves: dict[str, Any] = {}
    for o in result.outcomes:
        if o.values is not None and not o.problems and isinstance(o.values.get("reference"), dict):
            curves.setdefault(o.key, o.values["reference"]["points"])
    if not curves:
        return None
    if REFERENCE in runs:
        raise UsageError(f"run name {REFERENCE!r} is the source id of the corridors' reference; pick another name")
    old = profile.sources.get(REFERENCE)
    if old is not None and old.kind != "capture":
        raise UsageError(
            f"{REFERENCE!r} is a {old.kind} source of profile {profile.id}; derive writes the corridors' reference "
            "under that id: rename the source"
        )
    kept = False  # a corridor not derived this time keeps its line
    for key, expectations in profile.expectations.items():
        for e in expectations:
            if isinstance(e, Corridor) and e.reference.source == REFERENCE and key not in curves:
                curves[key], kept = e.reference.points, True
    inside = folder.path is not None and Path(os.path.abspath(folder.path)).is_relative_to(root)
    target = (
        folder.path if inside and folder.path is not None else root / CAPTURES / profile.id
    ) / f"{REFERENCE}.jsonl"
    text = reference_text(curves)
    made_from = [*(old.keys if kept and old is not None and old.kind == "capture" else []), *runs]
    source: dict[str, object] = {
        "kind": "capture",
        "path": display_path(target, root),
        "keys": list(dict.fromkeys(made_from)),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "code_commit": code_commit,
        "skip_first": skip_first or None,
    }
    return target, text, source


def _warnings(result: Derivation, on_disk: str, edited: str, display: str) -> list[Finding]:
    """The outcomes' warnings as findings at their expectation in `on_disk`, the profile as the
    file holds it. An expectation only the edit adds (a proposal, in a dry run) is not in the file:
    the finding points at its metric (or `expectations:`) there and names its line in the edit."""
    doc, _ = read_yaml(on_disk, display)
    new_doc = None
    out = []
    for o in result.outcomes:
        if o.values is None or o.problems:
            continue
        loc = ("expectations", o.key, o.index)
        there = _holds(doc.data, loc)
        for code, message in o.warnings:
            if not there:
                new_doc = new_doc or read_yaml(edited, display)[0]
                line, _ = new_doc.where(loc)
                message += f" (a proposed expectation: line {line} of the edited file, which a dry run does not write)"
            finding = doc.finding(loc, message, code=code, key=not there)
            out.append(replace(finding, severity="warning"))
    return out


def _holds(data: Any, loc: tuple[str | int, ...]) -> bool:
    """Whether `loc` (mapping keys and list indexes) is in `data`."""
    for part in loc:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return False
    return True


def _existing(profile: Profile, key: str, index: int) -> Expectation | None:
    items = profile.expectations.get(key, [])
    return items[index] if index < len(items) else None
