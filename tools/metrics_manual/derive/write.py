"""Derive's writes, all or nothing: the runs' captures, the team catalog (--add-keys), then the profile file.

Every target is checked before the first write (no symlink on the way, no folder or other
non-file there, a new profile's name still free, an edited profile still as derive read it), so
the common refusals write nothing. A write that fails anyway (a full disk) undoes the ones before
it: a file this run made is removed, a file it replaced gets its old text back, and a folder it
made is removed, so no capture stands without the profile that names it.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from metrics_manual.derive.new_profile import new_file
from metrics_manual.derive.plan import DerivePlan
from metrics_manual.diagnostics.finding import ManualError
from metrics_manual.disk.files import WriteError, file_kind, read_text, symlink_on_the_way, write_real_file


@dataclass(frozen=True)
class Target:
    base: Path  # no symlink from here (excluded) down to `path`
    path: Path
    text: str
    old: str | None  # the text it replaces; None: a file this run makes
    made: tuple[Path, ...]  # the folders that do not exist yet on the way to it, deepest first


def write_plan(project: Path, p: DerivePlan) -> list[Path]:
    """Write the plan's captures, its team catalog and its profile file (each when it changed); the files
    written, in order.

    A ManualError when any target cannot be written: nothing of this run is left on disk.
    """
    try:
        targets = _targets(project, p)
    except ManualError as err:
        raise WriteError(f"{err}; nothing was written") from None
    done: list[Target] = []
    try:
        for t in targets:
            write_real_file(t.base, t.path, t.text)
            done.append(t)
    except ManualError as err:
        raise WriteError(f"{err}; {_undo(done, targets)}") from None
    return [t.path for t in targets]


def _targets(project: Path, p: DerivePlan) -> list[Target]:
    """Every file the plan writes, each checked: a ManualError for the first that cannot be written safely."""
    targets = [_target(project if t.is_relative_to(project) else t.parent, t, text) for t, text in p.captures.items()]
    if p.added is not None and p.added.new_text != p.added.old_text:  # --add-keys: the team catalog
        catalog = _target(project, p.added.file, p.added.new_text)
        if catalog.old != p.added.old_text:
            raise WriteError(f"cannot write {p.added.display}: it changed since derive read it; run derive again")
        targets.append(catalog)
    if p.new_text != p.old_text:
        if p.created:  # nothing there yet (another program may have put a file or a link there since the plan)
            new_file(project, p.profile_file.stem)
        profile = _target(project, p.profile_file, p.new_text)
        if not p.created and profile.old != p.old_text:
            raise WriteError(f"cannot write {p.display}: it changed since derive read it; run derive again")
        targets.append(profile)
    return targets


def _target(base: Path, path: Path, text: str) -> Target:
    """A file to write, refused before anything is written when it cannot be written safely."""
    link = symlink_on_the_way(base, path)
    if link is not None:
        raise WriteError(f"cannot write {path}: {link} is a symlink; metrics-manual writes only real files and folders")
    try:
        kind = file_kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        kind = None
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {exc.strerror}") from None
    if kind is not None:
        raise WriteError(f"cannot write {path}: {kind} stands there")
    old = read_text(path) if os.path.lexists(path) else None
    if old is None and os.path.lexists(path):
        raise WriteError(f"cannot write {path}: it holds no UTF-8 text, so derive did not write it; move it away")
    made: list[Path] = []
    folder = path.parent
    while not os.path.lexists(folder):
        made.append(folder)
        folder = folder.parent
    return Target(base, path, text, old, tuple(made))


def _undo(done: list[Target], targets: list[Target]) -> str:
    """Put back what the `done` writes changed; what the message says of it."""
    left: list[str] = []
    for t in reversed(done):
        try:
            if t.old is None:
                t.path.unlink(missing_ok=True)
            else:
                write_real_file(t.base, t.path, t.old)
        except (ManualError, OSError):
            left.append(str(t.path))
    for folder in sorted({f for t in targets for f in t.made}, key=lambda f: len(f.parts), reverse=True):
        with contextlib.suppress(OSError):  # not empty: something else was put there meanwhile
            folder.rmdir()
    if left:
        return f"these files could not be put back as they were: {', '.join(left)}"
    return "nothing was written"
