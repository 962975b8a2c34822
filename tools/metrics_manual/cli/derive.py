"""`metrics-manual derive`: compute a profile's ranges from two or three runs and write them back."""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from metrics_manual.check.rejudge import held_against, verdicts
from metrics_manual.cli.common import EXIT_DRIFT, fail, find_root, root_option
from metrics_manual.derive.profile_edit import ProfileFile
from metrics_manual.derive.stats import DEFAULT_METHOD, Derivation, Method, Options, derive
from metrics_manual.diagnostics.finding import Finding, ManualError, SourceError, UsageError
from metrics_manual.disk.files import symlink_on_the_way, write_real_file
from metrics_manual.disk.switch import locked
from metrics_manual.exports.formats import export_document
from metrics_manual.exports.profile import exported_profile
from metrics_manual.judge.rules import Result
from metrics_manual.model.kinds import keeps_warm_up
from metrics_manual.model.phrase import words
from metrics_manual.model.schema import EXPECTATION, Catalog, Expectation, Profile, ProfileExport
from metrics_manual.runs import read as runs_reader
from metrics_manual.runs.capture import capture_text, sha256_of
from metrics_manual.runs.series import Run
from metrics_manual.source.load import PROFILES, Manual, load_manual, profile_files
from metrics_manual.source.reader import read_document, read_yaml

_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def read_run(path: Path, catalog: Catalog, input_format: str = "auto") -> Run:
    """One run from its files or folder, through the judge's readers (any form a Miles run writes).

    A run that cannot be read at all is a SourceError: its findings print as they are, once each.
    """
    try:
        return runs_reader.read_run([path], catalog, input_format)
    except runs_reader.RunInputError as err:
        raise SourceError(err.findings) from None


@dataclass
class RunArg:
    name: str
    path: Path


def parse_runs(values: tuple[str, ...]) -> list[RunArg]:
    out: list[RunArg] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not path:
            raise UsageError(f"--run {value!r}: expected NAME=PATH")
        if not _SLUG.match(name):
            raise UsageError(
                f"--run {value!r}: the run name becomes a source id: lower-case letters, digits and dashes"
            )
        if any(r.name == name for r in out):
            raise UsageError(f"--run {name!r} is given twice")
        if not Path(path).exists():
            raise UsageError(f"--run {value!r}: no such file or folder")
        out.append(RunArg(name, Path(path)))
    if not out:
        raise UsageError("give at least one --run NAME=PATH (two or three seeds make a range)")
    return out


def profile_path(root: Path, profile_id: str) -> Path:
    for file in profile_files(root)[0]:
        doc, _ = read_document(file, file.name, fast=True)
        if isinstance(doc.data, dict) and doc.data.get("id") == profile_id:
            return file
    raise UsageError(f"no file under {PROFILES} holds profile {profile_id!r}")


def _display_path(path: Path, root: Path) -> str:
    """Inside the project: relative to its root, so check finds it on any checkout."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return str(resolved)


_SKIP = re.compile(r"(?:^|, )after the first (?:step|\S+ steps)$")


def with_skip(condition: str | None, n: int) -> str | None:
    """The condition saying which warm-up steps are left out (a previous derive's phrase replaced)."""
    kept = _SKIP.sub("", condition or "") or None
    if not n:
        return kept
    return f"{kept}, {skip_phrase(n)}" if kept else skip_phrase(n)


def skip_phrase(n: int) -> str:
    return "after the first step" if n == 1 else f"after the first {words(n)} steps"


def validate_edit(root: Path, file: Path, text: str) -> Manual:
    """Load the source as it would be with the edited profile: an edit never writes an invalid file."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(root / "ranges", Path(tmp) / "ranges", ignore=shutil.ignore_patterns("captures", "schema"))
        (Path(tmp) / PROFILES / file.name).write_text(text, "utf-8")
        return load_manual(Path(tmp))


CAPTURES = "captures"  # default folder of a profile's captures: captures/<profile id>/


def capture_folder(root: Path, given: str | None, profile_id: str, runs: list[RunArg]) -> Path | None:
    """Where the runs' captures go: --capture-to, else captures/<profile>/ when a run lies inside the
    project (check re-judges every capture in the project, and reads only compact captures), else
    nowhere (the runs are recorded where they are, with their SHA-256).

    Never inside ranges/, which holds only the source that validate reads.
    """
    if given is None:
        inside = [r for r in runs if Path(os.path.abspath(r.path)).is_relative_to(root)]
        if not inside:
            return None
        folder = root / CAPTURES / profile_id
        click.echo(
            f"run {inside[0].name} lies inside the project: its capture goes to {_display_path(folder, root)}/ "
            "(pass --capture-to to choose the folder)",
            err=True,
        )
        return folder
    folder = Path(os.path.abspath(given))  # not resolved: a symlink on the way is refused, not followed
    for real in (folder, folder.resolve()):
        if real.is_relative_to(root / "ranges") or real.is_relative_to(root.resolve() / "ranges"):
            raise UsageError(
                f"--capture-to {given}: inside ranges/, which holds only the source (catalog.yaml and "
                f"profiles/); put captures elsewhere, e.g. --capture-to {CAPTURES}/{profile_id}"
            )
    if folder.is_relative_to(root):
        link = symlink_on_the_way(root, folder)
        if link is not None:
            raise UsageError(
                f"--capture-to {given}: {link.relative_to(root).as_posix()} is a symlink; captures are written only to real folders"
            )
    return folder


@dataclass
class DerivePlan:
    derivation: Derivation
    profile_file: Path
    old_text: str
    new_text: str
    captures: dict[Path, str]
    broken: list[str]  # what check will report on these runs once the edit is written
    left_out: list[str]  # the leave-one-out check, one line per run
    display: str = ""  # the profile file as findings name it

    def warnings(self, written: bool) -> list[Finding]:
        """What is written but will mislead (a band with no width), at its expectation in the file as
        it is on disk once the command ends: the edited file when `written`, else the file untouched."""
        return _warnings(self.derivation, self.new_text if written else self.old_text, self.new_text, self.display)


def applied(export: ProfileExport, derivation: Derivation, run_ids: list[str]) -> ProfileExport:
    """The profile as the judge reads it, with the derived values in place (in memory)."""
    by_key: dict[str, dict[int, dict[str, Any]]] = {}
    for o in derivation.outcomes:
        if o.values is not None and not o.problems:
            by_key.setdefault(o.key, {})[o.index] = dict(o.values, sources=run_ids)
    metrics = []
    for m in export.metrics:
        changes = by_key.get(m.key, {})
        if not changes:
            metrics.append(m)
            continue
        items: list[Any] = list(m.expectations)
        for i, values in sorted(changes.items()):
            old = items[i].model_dump(exclude_none=True) if i < len(items) else {}
            new = {k: v for k, v in {**old, **values}.items() if v is not None}
            if i < len(items):
                items[i] = type(items[i]).model_validate(new)
            else:
                items.append(EXPECTATION.validate_python(new))
        metrics.append(m.model_copy(update={"expectations": items}))
    return export.model_copy(update={"metrics": metrics})


Broken = tuple[str, int, str, Result]  # metric key, expectation index, run name, the judge's result


def _failures(export: ProfileExport, runs: dict[str, Run], skip_first: int, every: bool = False) -> list[Broken]:
    """Each expectation a run breaks, judged as check judges its captures (`rejudge.verdicts`,
    every expectation that names the run or names no source; `every`: whatever it names)."""
    judged = {name: verdicts(export, run, skip_first) for name, run in runs.items()}
    out = []
    for m in export.metrics:
        for key in m.members or [m.key]:
            for i, e in enumerate(m.expectations):
                for name in runs if every else held_against(e.sources, runs):
                    r = judged[name].get((key, i))
                    if r is not None and r.verdict != "pass":
                        out.append((key, i, name, r))
    return out


def _line(b: Broken) -> str:
    key, i, name, r = b
    return f"{key} [{i}] {r.expected}: run {name!r} gives {r.verdict}: {r.reason}"


def leave_one_out(
    manual: Manual, profile: Profile, export: ProfileExport, runs: dict[str, Run], options: Options
) -> list[str]:
    """For each run: derive from all the others, judge it on the ranges they give; lines to print."""
    lines = []
    for name, run in runs.items():
        others = {n: r for n, r in runs.items() if n != name}
        derivation = derive(manual, profile, others, options, export)
        derived = {(o.key, o.index) for o in derivation.outcomes if o.values is not None and not o.problems}
        held = applied(export, derivation, list(others))
        broken = [b for b in _failures(held, {name: run}, options.skip_first, every=True) if (b[0], b[1]) in derived]
        head = f"  {name}, judged on the ranges of {', '.join(others)}:"
        lines.append(f"{head} pass" if not broken else f"{head} would fail {len(broken)}")
        lines += [f"    {_line(b)}" for b in broken]
    return lines


def plan_derivation(
    root: Path,
    manual: Manual,
    export: ProfileExport,
    runs: list[RunArg],
    options: Options,
    capture_to: Path | None,
    code_commit: str | None,
    input_format: str = "auto",
) -> DerivePlan:
    loaded: dict[str, Run] = {}
    findings: list[Finding] = []
    for r in runs:
        try:
            run = read_run(r.path, manual.catalog, input_format)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"--run {r.name}={r.path}: cannot read it ({exc.__class__.__name__})") from None
        findings += [p for p in run.problems if p.severity == "error"]
        for p in run.problems:
            if p.severity != "error":
                click.echo(str(p), err=True)
        loaded[r.name] = run
    if findings:
        raise SourceError(findings)
    profile = manual.profile(export.profile.id)
    result = derive(manual, profile, loaded, options, export)

    keys = [k for m in manual.metrics.values() for k in (m.members or [m.key])]
    captures: dict[Path, str] = {}
    sources: dict[str, dict[str, object]] = {}
    for r in runs:
        if capture_to is not None:
            text = capture_text(loaded[r.name], keys)
            target = capture_to / f"{r.name}.jsonl"
            captures[target] = text
            path, digest = _display_path(target, root), hashlib.sha256(text.encode("utf-8")).hexdigest()
        else:
            path, digest = _display_path(r.path, root), sha256_of(r.path)
        sources[r.name] = {
            "kind": "capture",
            "path": path,
            "keys": [r.name],
            "sha256": digest,
            "code_commit": code_commit,
            "skip_first": options.skip_first or None,
        }
    for sid, s in profile.sources.items():
        if sid in sources and s.kind != "capture":
            raise UsageError(
                f"run name {sid!r} is already a {s.kind} source of profile {profile.id}; pick another name"
            )

    file = profile_path(root, profile.id)
    display = file.relative_to(root).as_posix()
    old = file.read_bytes().decode("utf-8")
    editor = ProfileFile(old, display)
    for sid, values in sources.items():
        editor.set_source(sid, values)
    run_ids = list(sources)
    for o in result.outcomes:
        if o.values is None or o.problems:
            continue
        values = dict(o.values, sources=run_ids)
        before = _existing(profile, o.key, o.index)
        if before is None or not keeps_warm_up(before.span):  # a window covers the warm-up: its condition stays
            was = before.condition if before is not None else None
            condition = with_skip(was, options.skip_first)
            if condition != was:
                values["condition"] = condition  # None removes it
        editor.set_expectation(o.key, o.index, values)
    new = editor.text()
    edited = validate_edit(root, file, new)
    # Judged as check will judge these runs once the edit is written: the two agree by construction.
    after = export_document(edited, edited.profile(profile.id), None)
    broken = [_line(b) for b in _failures(after, loaded, options.skip_first)]
    left_out = leave_one_out(manual, profile, export, loaded, options) if len(loaded) >= 3 else []
    return DerivePlan(result, file, old, new, captures, broken, left_out, display)


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


def report(p: DerivePlan, written: bool) -> None:
    for f in p.warnings(written):  # on stderr, as the runs' warnings: a warning does not change the exit code
        click.echo(str(f), err=True)
    for o in p.derivation.outcomes:
        head = f"{o.key} [{o.index}] {'proposed ' if o.proposal else ''}{o.kind}"
        click.echo(f"{head}: {o.summary}" if o.summary else head)
        for problem in o.problems:
            click.echo(f"  {'violation' if o.violation else 'not derived'}: {problem}")
    if p.left_out:
        click.echo("leave-one-out: would the next run of this setup pass? each run against the others' ranges")
        for line in p.left_out:
            click.echo(line)
    if p.broken:
        click.echo(f"the runs break {len(p.broken)} expectation(s) of the edited profile (check reports these):")
        for line in p.broken:
            click.echo(f"  {line}")


@click.command("derive", short_help="Compute a profile's ranges from runs.")
@root_option
@click.option("--profile", "profile_id", required=True, help="Id of the profile whose ranges to derive.")
@click.option("--run", "runs", multiple=True, metavar="NAME=PATH", help="One run (repeat: two or three seeds).")
@click.option("--metric", "metrics", multiple=True, metavar="KEY", help="Only these metrics (default: all it ranges).")
@click.option(
    "--skip-first", type=click.IntRange(min=0), default=0, show_default=True, help="Warm-up steps to leave out."
)
@click.option(
    "--method",
    default=DEFAULT_METHOD,
    show_default=True,
    help="margin:F (min and max widened by F times their distance), minmax, percentile:5,95 or sigma:3.",
)
@click.option(
    "--digits", type=click.IntRange(1, 15), default=3, show_default=True, help="Significant digits, rounded outward."
)
@click.option(
    "--capture-to",
    type=click.Path(file_okay=False),
    default=None,
    help="Write compact captures of the runs here (default for runs inside the project: captures/PROFILE/).",
)
@click.option("--code-commit", default=None, help="The Miles commit the runs were made with.")
@click.option(
    "--input-format",
    type=click.Choice(("auto", *runs_reader.RUN_FORMATS)),
    default="auto",
    show_default=True,
    help="The form of the runs' files (default: detected from their content), as for judge.",
)
@click.option("--write", is_flag=True, help="Edit the profile file in place (default: print the diff).")
def derive_command(
    root: str | None,
    profile_id: str,
    runs: tuple[str, ...],
    metrics: tuple[str, ...],
    skip_first: int,
    method: str,
    digits: int,
    capture_to: str | None,
    code_commit: str | None,
    input_format: str,
    write: bool,
) -> None:
    """Compute a profile's ranges from runs; print the diff, or --write it into ranges/.

    Runs inside the project are captured (compact, to captures/PROFILE/ unless --capture-to
    says where), so `check` re-judges the ranges on them. Takes the project's lock, as build does.
    """
    try:
        project = find_root(root)
        options = Options(keys=metrics, skip_first=skip_first, method=Method.parse(method), digits=digits)
        with locked(project):
            _derive(project, profile_id, runs, options, capture_to, code_commit, input_format, write)
    except ManualError as err:
        fail(err, wrote_nothing=True)


def _derive(
    project: Path,
    profile_id: str,
    runs: tuple[str, ...],
    options: Options,
    capture_to: str | None,
    code_commit: str | None,
    input_format: str,
    write: bool,
) -> None:
    manual, export = exported_profile(project, profile_id)
    if code_commit is not None and not re.fullmatch(r"[0-9a-f]{7,40}", code_commit):
        raise UsageError(f"--code-commit {code_commit!r}: expected 7 to 40 lower-case hex digits")
    run_args = parse_runs(runs)
    folder = capture_folder(project, capture_to, profile_id, run_args)
    p = plan_derivation(project, manual, export, run_args, options, folder, code_commit, input_format)
    report(p, write)
    rel = p.profile_file.relative_to(project).as_posix()
    diff = "".join(
        difflib.unified_diff(p.old_text.splitlines(True), p.new_text.splitlines(True), f"a/{rel}", f"b/{rel}")
    )
    click.echo(diff.rstrip("\n") if diff else f"{rel}: no change")
    if write:
        try:
            for target, text in p.captures.items():
                write_real_file(project if target.is_relative_to(project) else target.parent, target, text)
                click.echo(f"wrote {_display_path(target, project)}")
            if diff:
                write_real_file(project, p.profile_file, p.new_text)
                click.echo(f"wrote {rel}; run `metrics-manual build` to regenerate the pages and exports")
        except ManualError as err:
            fail(err)
    elif diff or p.captures:
        click.echo("dry run: nothing written; pass --write to apply")
    if p.broken or p.derivation.violations or any(o.problems for o in p.derivation.outcomes):
        sys.exit(EXIT_DRIFT)
