"""`metrics-manual derive`: compute a profile's ranges from two or three runs and write them back,
or make a new profile from them (the plan: derive/plan.py).

Only click and the command's words are imported with the module (its --help pays for nothing more);
the runs, the model and the statistics are imported when the command runs.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from metrics_manual.cli.common import EXIT_DRIFT, fail, root_option
from metrics_manual.derive.methods import DEFAULT_METHOD
from metrics_manual.diagnostics.finding import ManualError, UsageError
from metrics_manual.runs.forms import RUN_FORMATS
from metrics_manual.text import inert

if TYPE_CHECKING:
    from metrics_manual.derive.new_profile import NewProfile
    from metrics_manual.derive.plan import DerivePlan, RunArg


def parse_runs(values: tuple[str, ...]) -> list[RunArg]:
    from metrics_manual.derive.plan import RunArg
    from metrics_manual.model.schema import SLUG_PATTERN

    out: list[RunArg] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not path:
            raise UsageError(f"--run {value!r}: expected NAME=PATH")
        if not re.fullmatch(SLUG_PATTERN, name):
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


def report(p: DerivePlan, written: bool) -> None:
    for note in p.notes:  # on stderr: what the readers warned of and what derive chose
        click.echo(note, err=True)
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
    if p.added is not None and p.added.keys:
        where = f" and {len(p.added.step_keys)} step key(s)" if p.added.step_keys else ""
        click.echo(
            f"--add-keys: {len(p.added.keys)} key(s){where} added to {p.added.display}, each with a placeholder "
            "meaning for you to write (validate warns until you do): " + ", ".join(p.added.keys)
        )
    if p.not_ranged:
        click.echo(f"not ranged: {len(p.not_ranged)} key(s) the runs log")
        by_reason: dict[str, list[str]] = {}
        for n in p.not_ranged:
            by_reason.setdefault(n.reason, []).append(inert(n.key))
        for reason, keys in by_reason.items():
            shown = ", ".join(keys[:SHOWN]) + (f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else "")
            click.echo(f"  {shown}: {reason}")


SHOWN = 12  # keys named per reason in the text; --format json names every one


def as_json(p: DerivePlan, project: Path, written: bool) -> str:
    """What derive found and did, for a program: each range, each key not ranged and why, the edits."""
    return json.dumps(
        {
            "profile_file": p.display,
            "written": written,
            "ranges": [
                {
                    "key": o.key,
                    "index": o.index,
                    "kind": o.kind,
                    "proposal": o.proposal,
                    "summary": o.summary,
                    "values": o.values,
                    "problems": o.problems,
                    "violation": o.violation,
                }
                for o in p.derivation.outcomes
            ],
            "not_ranged": [{"key": n.key, "reason": n.reason} for n in p.not_ranged],
            "added": None
            if p.added is None
            else {"file": p.added.display, "keys": p.added.keys, "step_keys": p.added.step_keys},
            "leave_one_out": p.left_out,
            "broken": p.broken,
            "diff": _diffs(project, p),
        },
        indent=2,
    )


NEW_PROFILE = "A new profile (an id no profile has yet) also takes"


@click.command("derive", short_help="Compute a profile's ranges from runs.")
@root_option
@click.option(
    "--profile", "profile_id", required=True, help="Id of the profile whose ranges to derive, or of a new profile."
)
@click.option("--run", "runs", multiple=True, metavar="NAME=PATH", help="One run (repeat: two or three seeds).")
@click.option("--metric", "metrics", multiple=True, metavar="KEY", help="Only these metrics (default: all it ranges).")
@click.option(
    "--skip-first", type=click.IntRange(min=0), default=0, show_default=True, help="Warm-up steps to leave out."
)
@click.option(
    "--kind",
    type=click.Choice(("band", "corridor")),
    default="band",
    show_default=True,
    help="band: flat ranges (a band, or a median for a time), each of the profile's derived again; corridor: a "
    "corridor around the runs' per-step mean for each metric every run logs, its reference written to a capture.",
)
@click.option(
    "--method",
    default=DEFAULT_METHOD,
    show_default=True,
    help="margin:F (min and max widened by F times their distance; by a factor for a metric that cannot be "
    "negative), minmax, percentile:5,95 or sigma:3.",
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
    type=click.Choice(("auto", *RUN_FORMATS)),
    default="auto",
    show_default=True,
    help="The form of the runs' files (default: detected from their content), as for judge.",
)
@click.option("--title", default=None, help="New profile: its title (makes ranges/profiles/PROFILE.yaml).")
@click.option("--framework", default="Miles", show_default=True, help="New profile: the RL framework of the runs.")
@click.option("--model", default=None, help="New profile: the model trained.")
@click.option("--dataset", default=None, help="New profile: the prompts' dataset.")
@click.option("--hardware", default=None, metavar="COUNTxNAME", help="New profile: the accelerators, e.g. 8xH100.")
@click.option("--prompts-per-step", type=click.IntRange(min=1), default=None, help="New profile: prompts per step.")
@click.option(
    "--answers-per-prompt", type=click.IntRange(min=1), default=None, help="New profile: answers sampled per prompt."
)
@click.option(
    "--token-limit", type=click.IntRange(min=1), default=None, help="New profile: most tokens an answer may have."
)
@click.option(
    "--add-keys",
    "add_keys_to",
    default=None,
    metavar="TEAM",
    help="Add the keys the runs log and no catalog has to ranges/catalogs/TEAM.yaml (your team's own keys), "
    "each with a placeholder meaning, and range them.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "json")),
    default="text",
    show_default=True,
    help="json: one document with each range, each key not ranged and why, and the diffs.",
)
@click.option("--write", is_flag=True, help="Edit (or create) the profile file (default: print the diff).")
def derive_command(
    root: str | None,
    profile_id: str,
    runs: tuple[str, ...],
    metrics: tuple[str, ...],
    skip_first: int,
    kind: str,
    method: str,
    digits: int,
    capture_to: str | None,
    code_commit: str | None,
    input_format: str,
    title: str | None,
    framework: str,
    model: str | None,
    dataset: str | None,
    hardware: str | None,
    prompts_per_step: int | None,
    answers_per_prompt: int | None,
    token_limit: int | None,
    add_keys_to: str | None,
    fmt: str,
    write: bool,
) -> None:
    """Compute a profile's ranges from runs; print the diff, or --write it into ranges/.

    An id no profile has yet, with --title and the setup options, makes a new profile file from
    the runs: the steps they reached, the setup the options give, a capture source per run and
    a range for every metric of the catalog they all log.

    Runs inside the project are captured (compact, to captures/PROFILE/ unless --capture-to
    says where), so `check` re-judges the ranges on them. With --kind corridor, each metric every
    run logs gets a corridor around the runs' per-step mean, whose curve is written to
    captures/PROFILE/reference.jsonl (pinned by its SHA-256). Every key the runs log that derive
    does not range is named, with why; --add-keys TEAM documents the keys no catalog has in your
    team's catalog (ranges/catalogs/TEAM.yaml) and ranges them. Takes the project's lock, as build does.
    """
    from metrics_manual.derive.new_profile import parse_hardware
    from metrics_manual.derive.plan import plan_derivation
    from metrics_manual.derive.stats import Method, Options
    from metrics_manual.disk.switch import locked
    from metrics_manual.model.schema import SLUG_PATTERN
    from metrics_manual.source.load import load_manual
    from metrics_manual.source.root import find_root

    try:
        project = find_root(root)
        options = Options(
            keys=metrics,
            skip_first=skip_first,
            method=Method.parse(method),
            digits=digits,
            kind="corridor" if kind == "corridor" else "band",
        )
        if code_commit is not None and not re.fullmatch(r"[0-9a-f]{7,40}", code_commit):
            raise UsageError(f"--code-commit {code_commit!r}: expected 7 to 40 lower-case hex digits")
        setup: dict[str, Any] = {
            "framework": framework,
            "model": model,
            "dataset": dataset,
            "hardware": parse_hardware(hardware) if hardware is not None else None,
            "prompts_per_step": prompts_per_step,
            "answers_per_prompt": answers_per_prompt,
            "token_limit": token_limit,
        }
        given = [name for name, v in setup.items() if v is not None and name != "framework"]
        if add_keys_to is not None and not re.fullmatch(SLUG_PATTERN, add_keys_to):
            raise UsageError(f"--add-keys {add_keys_to!r}: a team's id: lower-case letters, digits and dashes")
        run_args = parse_runs(runs)
        with locked(project):
            manual = load_manual(project)
            new = _new_profile(profile_id, [p.id for p in manual.profiles], title, setup, given)
            p = plan_derivation(
                project, manual, profile_id, run_args, options, capture_to, code_commit, input_format, new, add_keys_to
            )
            _show_and_write(project, p, write, fmt)
    except ManualError as err:
        fail(err, wrote_nothing=True)


def _new_profile(
    profile_id: str, known: list[str], title: str | None, setup: dict[str, Any], given: list[str]
) -> NewProfile | None:
    """The new profile the options describe, or None when `profile_id` is a profile of the project."""
    from metrics_manual.derive.new_profile import NewProfile
    from metrics_manual.source.load import did_you_mean

    if profile_id in known:
        if title is not None or given:
            raise UsageError(
                f"profile {profile_id} exists: --title and the setup options make a new profile; "
                f"edit its file to change its title or setup"
            )
        return None
    if title is None:
        raise UsageError(
            f"unknown profile {profile_id!r}; profiles: {', '.join(known) or 'none'}{did_you_mean(profile_id, known)}. "
            "To make a new profile from these runs, add --title TEXT and its setup (docs/deriving.md)"
        )
    new = NewProfile(profile_id, title, setup)
    if new.missing():
        raise UsageError(
            f"a new profile states the setup its ranges hold for, which runs do not record: add {', '.join(new.missing())}"
        )
    return new


def _diffs(project: Path, p: DerivePlan) -> str:
    """The unified diffs of the team catalog (--add-keys) and of the profile file, '' when neither changes."""
    files = [(p.added.file, p.added.old_text, p.added.new_text, False)] if p.added is not None else []
    files.append((p.profile_file, p.old_text, p.new_text, p.created))
    out = []
    for file, old, new, created in files:
        rel = file.relative_to(project).as_posix()
        before = "/dev/null" if created else f"a/{rel}"
        out.append("".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), before, f"b/{rel}")))
    return "".join(out)


def _show_and_write(project: Path, p: DerivePlan, write: bool, fmt: str = "text") -> None:
    from metrics_manual.derive.captures import display_path
    from metrics_manual.derive.write import write_plan

    if fmt == "text":
        report(p, write)
        rel = p.profile_file.relative_to(project).as_posix()
        diff = _diffs(project, p)
        click.echo(diff.rstrip("\n") if diff else f"{rel}: no change")
    else:
        for note in p.notes:
            click.echo(note, err=True)
        for f in p.warnings(write):
            click.echo(str(f), err=True)
    if write:
        try:
            written = write_plan(project, p)
        except ManualError as err:
            fail(err)
        for target in written if fmt == "text" else []:
            if target != p.profile_file:
                click.echo(f"wrote {display_path(target, project)}")
        if p.profile_file in written and fmt == "text":
            made = "made" if p.created else "wrote"
            rel = p.profile_file.relative_to(project).as_posix()
            click.echo(f"{made} {rel}; run `metrics-manual build` to regenerate the pages and exports")
    elif fmt == "text" and (_diffs(project, p) or p.captures):
        click.echo("dry run: nothing written; pass --write to apply")
    if fmt == "json":
        click.echo(as_json(p, project, write))
    if p.broken or p.derivation.violations or any(o.problems for o in p.derivation.outcomes):
        sys.exit(EXIT_DRIFT)
