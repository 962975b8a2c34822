"""The project a command works on: the folder that holds ranges/, from --root or found upwards."""

from __future__ import annotations

from pathlib import Path

from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.disk.switch import settle

# What works without a project: judge takes an exported profile's file (docs/judging.md).
OUTSIDE = (
    "; outside a project, judge a run with an exported profile: --profile FILE (as `metrics-manual export` writes it)"
)


def find_root(value: str | None) -> Path:
    """--root DIR, else the nearest folder upwards from here that holds ranges/ (as git finds .git).

    Every command finds its project here, so this is also where a switch that a killed build
    left pending is finished (or undone) before the command reads anything (`switch.settle`).
    """
    root = _find(value)
    settle(root)
    return root


def _find(value: str | None) -> Path:
    if value:
        root = Path(value).resolve()
        if not (root / "ranges").is_dir():
            raise UsageError(
                f"no ranges/ folder in --root {value}; pass the project root (the folder with ranges/){OUTSIDE}"
            )
        return root
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "ranges").is_dir():
            return folder
    raise UsageError(
        f"no ranges/ folder in {here} or any folder above it; run inside a project or pass --root DIR{OUTSIDE}"
    )
