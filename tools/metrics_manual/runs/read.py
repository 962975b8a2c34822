"""Read the parts of one Miles run, in any form it writes, into one `Run`.

    from metrics_manual.runs import read_run
    run = read_run([Path("dump/events"), Path("tb_logs")], catalog)

The form of each file comes from its content (`detect`), or from `input_format`.
Files are streamed; a folder is searched for files of the known forms.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError
from metrics_manual.disk.files import file_kind
from metrics_manual.model.schema import Catalog
from metrics_manual.runs.collect import Collector, Progress
from metrics_manual.runs.forms import BY_NAME, RUN_FORMATS, detect, looks_like
from metrics_manual.runs.renames import fold
from metrics_manual.runs.run import Run, gap_findings
from metrics_manual.text import inert, shown_path

__all__ = ["read_run", "Run", "RUN_FORMATS", "RunInputError", "detect"]

# A progress bar for `total` bytes, given by the command (a terminal bar) or None: the reader only counts.
ProgressBar = Callable[[int], AbstractContextManager[Progress | None]]


class RunInputError(ManualError):
    """The run cannot be read at all (a missing, unreadable or unknown file): exit 2."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = sorted(set(findings))
        super().__init__("\n".join(str(f) for f in self.findings))


_TRIED = "tried: " + ", ".join(RUN_FORMATS) + "; name the form with --input-format"


def _special(path: Path) -> str | None:
    """What a path that exists but is neither a regular file nor a folder is, in words; None if it does not exist."""
    try:
        return file_kind(os.stat(path).st_mode)
    except (OSError, ValueError):
        return None


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def folder_files(folder: Path) -> list[Path]:
    """The files a folder of a run is searched in, in name order. A hidden file or folder is passed
    over: Miles moves the event folder it restores a checkpoint over aside as .trash_*
    (miles/utils/audit_utils/event_logger/checkpoint.py)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and not _hidden(p.relative_to(folder)))


def run_files(paths: Sequence[Path], input_format: str) -> tuple[list[tuple[Path, str]], list[Finding]]:
    """(file, form) for every part of the run (a folder gives its files of a known form, in name
    order), a warning for each folder that has none, an error for a file name that is not UTF-8."""
    bad: list[Finding] = []
    warnings: list[Finding] = []
    found: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            before = len(found)
            for file in folder_files(path):
                form = input_format if input_format != "auto" and looks_like(file, input_format) else None
                form = form or (detect(file) if input_format == "auto" else None)
                if form:
                    found.append((file, form))
            if len(found) == before:
                warnings.append(
                    Finding(
                        shown_path(path),
                        1,
                        1,
                        f"no metrics file of a known form in this folder ({_TRIED})",
                        "warning",
                        code=codes.NO_RUN_FILES,
                    )
                )
        elif path.is_file():
            form = input_format if input_format != "auto" else detect(path)
            if form is None:
                why = f"not a metrics file of a known form ({_TRIED})"
                bad.append(Finding(shown_path(path), 1, 1, why, code=codes.UNKNOWN_RUN_FORM))
            else:
                found.append((path, form))
        elif kind := _special(path):  # a pipe is never opened: reading it would wait on its writer
            why = f"not a regular file or folder but {kind}; it was not read"
            bad.append(Finding(shown_path(path), 1, 1, why, code=codes.NOT_A_RUN_FILE))
        else:
            bad.append(Finding(shown_path(path), 1, 1, "no such file or folder", code=codes.NO_SUCH_RUN_FILE))
    for file, _ in found:
        try:
            os.fsencode(file).decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(
                Finding(
                    shown_path(file),
                    1,
                    1,
                    "the file name is not UTF-8 (shown with \\x escapes); it was read",
                    "error",
                    code=codes.FILE_NAME_NOT_UTF8,
                )
            )
    if bad:
        raise RunInputError(bad)
    if not found:
        raise RunInputError([Finding(w.path, 1, 1, w.message, code=w.code) for w in warnings])
    return found, warnings


def read_run(
    paths: Sequence[Path],
    catalog: Catalog | Mapping[str, str],
    input_format: str = "auto",
    progress: ProgressBar | None = None,
    keys: Collection[str] | None = None,
    renames: Mapping[str, str] | None = None,
) -> Run:
    """Read every part of one run and merge them: metric key -> step -> value.

    `catalog` gives the step keys (or pass its `step_keys` mapping). `progress`: given the
    run's size in bytes, a context giving the callback that takes each count of bytes read
    (or None for no bar). Raises
    RunInputError for a missing or unknown file; problems inside files (corrupt lines, a
    cut last line) are in `Run.problems`. `keys`: keep only these keys' values (the others
    are named in `Run.unread`); None keeps every key. `renames`: former key -> current key (the
    catalog's renamed_from, `ProfileExport.renames()`): values logged under a former name are read as
    the current key (`Run.renamed` names them; two names disagreeing at a step: `Run.name_conflicts`).
    """
    if input_format != "auto" and input_format not in RUN_FORMATS:
        raise RunInputError(
            [
                Finding(
                    "--input-format",
                    1,
                    1,
                    f"unknown form {input_format!r}; one of: auto, {', '.join(RUN_FORMATS)}",
                    code=codes.UNKNOWN_RUN_FORM,
                )
            ]
        )
    step_keys = catalog.step_keys if isinstance(catalog, Catalog) else dict(catalog)
    files, warnings = run_files([Path(p) for p in paths], input_format)
    total = sum(f.stat().st_size for f, _ in files)
    out = Collector(step_keys, keys=keys, renames=renames)
    if progress is None:
        float32 = _read(files, out)
    else:
        with progress(total) as update:
            out.progress = update
            float32 = _read(files, out)
    return assemble(paths, files, warnings, out, step_keys, renames, total, float32)


def assemble(
    paths: Sequence[Path],
    files: list[tuple[Path, str]],
    warnings: list[Finding],
    out: Collector,
    step_keys: Mapping[str, str],
    renames: Mapping[str, str] | None,
    total: int,
    float32: set[str],
) -> Run:
    """The Run of `files` (`run_files`' answer for `paths`, `total` bytes), whose values are in `out`;
    `float32`: the keys read from a form that stores float32."""
    run = Run(paths=[shown_path(Path(p)) for p in paths], step_keys=dict(step_keys), float32=float32)
    run.problems.extend(warnings)
    for _, form in files:
        if form not in run.formats:
            run.formats.append(form)
    merged = out.finish()
    run.series = merged.series
    run.invalid = merged.invalid
    run.conflicts = merged.conflicts
    run.relogged = merged.relogged
    run.problems += out.problems
    run.other_step = out.other_step
    run.carried = out.carried
    run.unread = out.unread - set(run.series) - out.step_key_set
    run.unread_beyond = len(out.unread_past)
    run = fold(run, renames) if renames else run
    run.problems.extend(gap_findings(run))
    if total and not run.series and not run.unread and not run.problems:
        # Files with bytes in them and not one metric, nor a line the reader refused: read as the
        # wrong form (--input-format events on a dashboard log skips each line as another event).
        forms = ", ".join(sorted({form for _, form in files}))
        run.problems.append(
            Finding(
                run.where(),
                1,
                1,
                f"no metric was read from {len(files)} file{'s' if len(files) != 1 else ''} read as {forms}; "
                "if they hold metrics, they are of another form (--input-format)",
                code=codes.UNKNOWN_RUN_FORM,
            )
        )
    if out.cut_files:
        # A cut last line may hold any metric of the step being written: the run's last step of
        # each step key is unfinished, so a value missing there is no error.
        for sk in sorted(set(step_keys.values())):
            if reached := run.reached(sk):
                run.unfinished[sk] = reached[-1]
    return run


def _read(files: list[tuple[Path, str]], out: Collector) -> set[str]:
    """Read every file into `out`, each apart (`begin` ... `end`); the keys read from a form that
    stores float32."""
    float32: set[str] = set()
    for file, form in files:
        rel = shown_path(file)
        out.begin(rel)
        with reading(form, rel, out):
            BY_NAME[form].read(file, rel, out)
        if BY_NAME[form].float32:
            float32.update(out.series)  # this file's keys, before `end` hands them to the merge
        out.end()
    return float32


@contextmanager
def reading(form: str, rel: str, out: Collector) -> Iterator[None]:
    """Reading a file as `form`: what stops the reader (an OS error, bytes its parser refuses, nesting
    too deep) is a finding of the file, never a traceback."""
    try:
        yield
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        out.problem(rel, 1, f"cannot read as {form}: {inert(str(exc))[:200]}", code=codes.UNREADABLE_RUN)
    except RecursionError:
        out.problem(rel, 1, f"cannot read as {form}: nested too deeply", code=codes.UNREADABLE_RUN)
