"""Where the runs' captures go, and the capture source each run becomes in the profile."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from metrics_manual.diagnostics.finding import UsageError
from metrics_manual.disk.files import symlink_on_the_way
from metrics_manual.runs.capture import capture_text, sha256_of
from metrics_manual.runs.run import Run

CAPTURES = "captures"  # default folder of a profile's captures: captures/<profile id>/


def display_path(path: Path, root: Path) -> str:
    """Inside the project: relative to its root, so check finds it on any checkout."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return str(resolved)


@dataclass(frozen=True)
class Folder:
    path: Path | None  # None: the runs are recorded where they are
    note: str | None = None  # what the user should hear of the choice


def capture_folder(root: Path, given: str | None, profile_id: str, runs: dict[str, Path]) -> Folder:
    """Where the runs' captures go: --capture-to, else captures/<profile>/ when a run lies inside the
    project (check re-judges every capture in the project, and reads only compact captures), else
    nowhere (the runs are recorded where they are, with their SHA-256).

    Never inside ranges/, which holds only the source that validate reads.
    """
    if given is None:
        inside = [name for name, path in runs.items() if Path(os.path.abspath(path)).is_relative_to(root)]
        if not inside:
            return Folder(None)
        folder = root / CAPTURES / profile_id
        note = (
            f"run {inside[0]} lies inside the project: its capture goes to {display_path(folder, root)}/ "
            "(pass --capture-to to choose the folder)"
        )
        return Folder(folder, note)
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
    return Folder(folder)


@dataclass
class Captured:
    sources: dict[str, dict[str, object]]  # run name -> its capture source, as the profile holds it
    files: dict[Path, str]  # capture file -> its text, to write


def capture_sources(
    root: Path,
    runs: dict[str, Run],
    paths: dict[str, Path],
    keys: list[str],
    folder: Path | None,
    code_commit: str | None,
    skip_first: int,
) -> Captured:
    """Each run as a capture source: its compact capture in `folder` (of the catalog's `keys`), else the
    run's own file where it is; with its SHA-256, the Miles commit and the warm-up left out."""
    out = Captured({}, {})
    for name, run in runs.items():
        if folder is not None:
            text = capture_text(run, keys)
            target = folder / f"{name}.jsonl"
            out.files[target] = text
            path, digest = display_path(target, root), hashlib.sha256(text.encode("utf-8")).hexdigest()
        else:
            path, digest = display_path(paths[name], root), sha256_of(paths[name])
        out.sources[name] = {
            "kind": "capture",
            "path": path,
            "keys": [name],
            "sha256": digest,
            "code_commit": code_commit,
            "skip_first": skip_first or None,
        }
    return out
