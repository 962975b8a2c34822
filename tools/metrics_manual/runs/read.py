"""Read the parts of one Miles run, in any form it writes, into one `Run`.

    from metrics_manual.runs import read_run
    run = read_run([Path("dump/events"), Path("tb_logs")], catalog)

The form of each file comes from its content (`detect`), or from `input_format`.
Files are streamed; a folder is searched for files of the known forms.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding, ManualError
from metrics_manual.model.schema import Catalog
from metrics_manual.runs import ci_history, dashboard, events, tensorboard, wandb_csv
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.detect import RUN_FORMATS, detect, looks_like
from metrics_manual.runs.series import Run

__all__ = ["read_run", "Run", "RUN_FORMATS", "RunInputError", "detect"]

READERS: dict[str, Callable[[Path, str, Collector], None]] = {
    "events": events.read,
    "dashboard": dashboard.read,
    "ci-history": ci_history.read,
    "tensorboard": tensorboard.read,
    "wandb-csv": wandb_csv.read,
}
# A progress bar for `total` bytes, given by the command (a terminal bar) or None: the reader only counts.
Progress = Callable[[int], None]
ProgressBar = Callable[[int], AbstractContextManager[Progress | None]]


class RunInputError(ManualError):
    """The run cannot be read at all (a missing, unreadable or unknown file): exit 2."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = sorted(set(findings))
        super().__init__("\n".join(str(f) for f in self.findings))


def _files(paths: Sequence[Path], input_format: str) -> tuple[list[tuple[Path, str]], list[Finding]]:
    """(file, form) for every part of the run (a folder gives its files of a known form, in name
    order), and a warning for each folder that has none."""
    bad: list[Finding] = []
    warnings: list[Finding] = []
    found: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            before = len(found)
            for file in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
                form = input_format if input_format != "auto" and looks_like(file, input_format) else None
                form = form or (detect(file) if input_format == "auto" else None)
                if form:
                    found.append((file, form))
            if len(found) == before:
                warnings.append(
                    Finding(
                        str(path),
                        1,
                        1,
                        "no metrics file of a known form in this folder",
                        "warning",
                        code=codes.NO_RUN_FILES,
                    )
                )
        elif path.is_file():
            form = input_format if input_format != "auto" else detect(path)
            if form is None:
                bad.append(
                    Finding(
                        str(path),
                        1,
                        1,
                        f"not a metrics file of a known form ({', '.join(RUN_FORMATS)}); name the form with --input-format",
                        code=codes.UNKNOWN_RUN_FORM,
                    )
                )
            else:
                found.append((path, form))
        else:
            bad.append(Finding(str(path), 1, 1, "no such file or folder", code=codes.NO_SUCH_RUN_FILE))
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
) -> Run:
    """Read every part of one run and merge them: metric key -> step -> value.

    `catalog` gives the step keys (or pass its `step_keys` mapping). `progress`: given the
    run's size in bytes, a context giving the callback that takes each count of bytes read
    (or None for no bar). Raises
    RunInputError for a missing or unknown file; problems inside files (corrupt lines, a
    cut last line) are in `Run.problems`. `keys`: keep only these keys' values (the others
    are named in `Run.unread`); None keeps every key.
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
    files, warnings = _files([Path(p) for p in paths], input_format)
    total = sum(f.stat().st_size for f, _ in files)
    run = Run(paths=[str(p) for p in paths], step_keys=dict(step_keys))
    run.problems.extend(warnings)
    if progress is None:
        _read(files, Collector(step_keys, keys=keys), run)
    else:
        with progress(total) as update:
            _read(files, Collector(step_keys, update, keys), run)
    return run


def _read(files: list[tuple[Path, str]], out: Collector, run: Run) -> None:
    for file, form in files:
        try:
            READERS[form](file, str(file), out)
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            out.problem(str(file), 1, f"cannot read as {form}: {exc}", code=codes.UNREADABLE_RUN)
        if form not in run.formats:
            run.formats.append(form)
    run.series = out.series
    run.problems += out.problems
    run.unread = out.unread - set(out.series) - out.step_key_set
