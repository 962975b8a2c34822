"""`metrics-manual judge`: is this run normal? One verdict per expectation of a profile.

Only click and the command's words are imported with the module (its --help pays for nothing more);
the profile, the readers and the rules are imported when the command runs.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from metrics_manual.cli.common import fail, progress_bar, root_option
from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError, UsageError
from metrics_manual.diagnostics.report import report as report_findings
from metrics_manual.judge.outputs import OUTPUTS
from metrics_manual.model.tolerance import DEFAULT_RTOL
from metrics_manual.runs.forms import RUN_FORMATS
from metrics_manual.runs.values import MAX_STEP
from metrics_manual.text import shown_path

if TYPE_CHECKING:
    from metrics_manual.judge.verdict import Judgement
    from metrics_manual.model.schema import ProfileExport
    from metrics_manual.runs.run import Run
    from metrics_manual.runs.steps import StepRanges

EXIT_INPUT = 2
# ASCII: `\d` and `\s` would take any script's digits ('１', '٣') and spaces.
_RANGE = re.compile(r"^\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?$", re.ASCII)


def parse_steps(text: str) -> StepRanges:
    """'3,7-9' -> the ranges 3-3 and 7-9 (held as ranges, never as sets of steps); ValueError on anything else."""
    from metrics_manual.runs.steps import StepRanges

    spans: list[tuple[int, int]] = []
    for part in text.split(","):
        m = _RANGE.match(part)
        if not m or len(part) > 60:
            raise ValueError(f"{part.strip()[:60]!r} is not a step or a range of steps (3 or 7-9)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            raise ValueError(f"{part.strip()!r}: the range ends before it starts")
        if hi > MAX_STEP:
            raise ValueError(f"{part.strip()!r}: a step is at most 2^63-1")
        spans.append((lo, hi))
    return StepRanges(spans)


def load_profile_arg(value: str, root: str | None) -> tuple[ProfileExport, dict[str, str], Path | None]:
    """--profile: a profile id of the project, or the path of an exported profile (JSON or YAML as
    `export` writes it). Returns the profile, the step keys and the project root (None outside one).
    ProfileFileError for a path that is no exported profile (a folder, a pipe, a CSV ...)."""
    from metrics_manual.api import load_profile
    from metrics_manual.source.root import find_root

    path = Path(value)
    try:
        mode: int | None = os.stat(path).st_mode
    except (OSError, ValueError):
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        return _folder_or_id(value, root)
    if path.suffix.lower() in (".json", ".yaml", ".yml", ".csv") or mode is not None:
        if mode is None:
            raise UsageError(f"--profile {value}: no such file (a profile id, or an exported profile's .json/.yaml)")
        profile = load_profile(path)  # a pipe or a device is named, never opened to wait on
        if not profile.step_keys:
            raise UsageError(
                f"{value}: the exported profile names no step_keys (an older export); export it again "
                "with metrics-manual export"
            )
        try:
            project: Path | None = find_root(root)
        except UsageError:
            project = None
        return profile, dict(profile.step_keys), project
    return _profile_id(value, root)


def _profile_id(value: str, root: str | None) -> tuple[ProfileExport, dict[str, str], Path]:
    from metrics_manual.exports.profile import exported_profile  # the source's reader: only for a profile id
    from metrics_manual.source.root import find_root

    project = find_root(root)
    manual, profile = exported_profile(project, value)
    return profile, dict(manual.catalog.step_keys), project


def _folder_or_id(value: str, root: str | None) -> tuple[ProfileExport, dict[str, str], Path]:
    """A folder given as --profile: the project's profile of that name if there is one (a folder
    named like an id where judge runs), else a finding that says it is a folder."""
    from metrics_manual.judge.profile_file import TAKES, ProfileFileError

    at = shown_path(value)
    folder = ProfileFileError(
        at, [Finding(at, 1, 1, f"a folder, not a profile; {TAKES}", code=codes.NOT_A_PROFILE_FILE)]
    )
    if "/" in value or os.sep in value or value.startswith("."):
        raise folder
    try:
        return _profile_id(value, root)
    except UsageError:
        raise folder from None


def _templates(project: Path | None) -> Path:
    """The report's templates: the project's, else those beside the package (an editable install)."""
    if project is not None and (project / "templates").is_dir():
        return project / "templates"
    return Path(__file__).resolve().parents[3] / "templates"


def _fail(message: str | list[Finding], fmt: str = "text") -> None:
    if isinstance(message, list):
        click.echo(report_findings(message, "github" if fmt == "github" else "text"), err=True)
    else:
        click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_INPUT)


@click.command("judge", short_help="Judge a run against a profile: pass, fail or error.")
@root_option
@click.option(
    "--profile",
    "profile_id",
    required=True,
    help="Id of the profile, or the path of an exported profile (.json/.yaml): then no project is needed.",
)
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(OUTPUTS), default="text", show_default=True, help="How verdicts are printed."
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write a self-contained HTML page with a drawing per judged metric.",
)
@click.option(
    "--exclude-steps", default="", metavar="3,7-9", help="Steps dropped from every judgement (steps and ranges)."
)
@click.option(
    "--rtol",
    type=float,
    default=DEFAULT_RTOL,
    show_default=True,
    help="Relative tolerance of a median whose expectation states none.",
)
@click.option(
    "--input-format",
    type=click.Choice(("auto", *RUN_FORMATS)),
    default="auto",
    show_default=True,
    help="The form of the run's files (default: detected from their content).",
)
@click.option(
    "--live",
    is_flag=True,
    help="The run may still be writing: a value missing at the last step of a step key is not judged. "
    "Without it the run is over, and a value missing there is an error.",
)
@click.option(
    "--progress/--no-progress", default=None, help="Progress bar on stderr (default: on a terminal, for large runs)."
)
@click.option(
    "--follow",
    is_flag=True,
    help="Judge the run while it runs: read its files as they grow and print each finding the moment it is "
    "certain, then the verdict. Ends on Ctrl-C or SIGTERM, --idle or --until-step.",
)
@click.option(
    "--idle", type=float, default=None, metavar="SECONDS", help="With --follow: end after SECONDS without new data."
)
@click.option(
    "--until-step",
    type=int,
    default=None,
    metavar="N",
    help="With --follow: end once every step key the run logs has finished a step past N; "
    "the verdict leaves out the steps past N.",
)
def judge_command(
    root: str | None,
    profile_id: str,
    paths: tuple[Path, ...],
    fmt: str,
    report: Path | None,
    exclude_steps: str,
    rtol: float,
    input_format: str,
    live: bool,
    progress: bool | None,
    follow: bool,
    idle: float | None,
    until_step: int | None,
) -> None:
    """Judge the run whose files or folders are PATHS against a profile: pass, fail or error per expectation.

    Exit 0 when every judged expectation passes, 1 on any fail or error or when nothing was
    judged, 2 on bad input (also a corrupt or hostile line in the run's files: the verdicts are
    printed all the same).
    """
    from metrics_manual.judge.judging import judge, judged_keys
    from metrics_manual.judge.profile_file import ProfileFileError
    from metrics_manual.judge.report_text import render
    from metrics_manual.runs.read import RunInputError, read_run
    from metrics_manual.runs.steps import StepRanges

    excluded = StepRanges()
    try:
        excluded = parse_steps(exclude_steps) if exclude_steps.strip() else excluded
    except ValueError as exc:
        _fail(f"--exclude-steps: {exc}")
    if not rtol > 0 or rtol != rtol or rtol == float("inf"):
        _fail(f"--rtol must be a number above 0, got {rtol}")
    if not follow and (idle is not None or until_step is not None):
        _fail("--idle and --until-step go with --follow")
    if idle is not None and not 0 < idle < float("inf"):
        _fail(f"--idle must be a number of seconds above 0, got {idle}")
    if until_step is not None and not 0 <= until_step <= MAX_STEP:
        _fail(f"--until-step must be a step from 0 to 2^63-1, got {until_step}")

    try:
        profile, step_keys, project = load_profile_arg(profile_id, root)
        if follow:
            result, run = _follow(profile, step_keys, paths, input_format, fmt, rtol, excluded, live, idle, until_step)
        else:
            run = read_run(
                list(paths),
                step_keys,
                input_format,
                progress_bar(progress),
                keys=judged_keys(profile),
                renames=profile.renames(),
            )
            result = judge(profile, run, rtol=rtol, exclude_steps=excluded, live=live)
    except (RunInputError, ProfileFileError) as err:
        _fail(err.findings, fmt)
        return
    except ManualError as err:
        fail(err)
    if report is not None:
        from metrics_manual.disk.files import write_file
        from metrics_manual.judge.report_html import report_html

        try:
            write_file(report, report_html(result, run, profile, _templates(project)))
        except ManualError as err:
            fail(err)
    if follow and fmt == "json":  # one object a line, as the findings before it
        click.echo(result.model_dump_json(by_alias=True))
    else:
        click.echo(render(result, fmt), nl=False)
    sys.exit(result.exit_code)


def _follow(
    profile: ProfileExport,
    step_keys: dict[str, str],
    paths: tuple[Path, ...],
    input_format: str,
    fmt: str,
    rtol: float,
    excluded: StepRanges,
    live: bool,
    idle: float | None,
    until_step: int | None,
) -> tuple[Judgement, Run]:
    """--follow: each finding printed the moment it is certain (text, or one JSON object a line; on
    stderr for JUnit and GitHub, whose document is the verdict); the verdict and its run at the end."""
    from metrics_manual.judge.follow import LiveFinding, follow
    from metrics_manual.judge.judging import judged_keys
    from metrics_manual.runs.follow import RunFollower

    def report(f: LiveFinding) -> None:
        click.echo(f.model_dump_json() if fmt == "json" else f.text(), err=fmt in ("junit", "github"))

    follower = RunFollower(list(paths), step_keys, input_format, judged_keys(profile), profile.renames())
    follower.check()
    ends = "".join(
        [
            f", after {idle:g} s without new data" if idle else "",
            f", past step {until_step}" if until_step is not None else "",
        ]
    )
    shown = ", ".join(shown_path(p) for p in paths)
    click.echo(f"judge --follow: following {shown}; ends on Ctrl-C or SIGTERM{ends}", err=True)
    try:
        result, run, why = follow(
            profile, follower, report, rtol=rtol, excluded=excluded, live=live, idle=idle, until_step=until_step
        )
    except KeyboardInterrupt:  # a second Ctrl-C: stop at once, without the verdict
        click.echo("judge --follow: interrupted again; no verdict", err=True)
        sys.exit(130)
    except BrokenPipeError:  # what read the findings went away (a forwarding script ended)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the interpreter's last flush goes nowhere
        click.echo("judge --follow: stdout was closed; no verdict", err=True)
        sys.exit(EXIT_INPUT)
    click.echo(f"judge --follow: ended ({why}); the verdict of the run as its files are now:", err=True)
    return result, run
