"""Files as the package reads and writes them: exact text, atomic writes with a plain open()'s mode,
never through a symlink where that matters, and a file that is not regular named in words.

docs/ and the switch of build's generated files are in disk/switch.py.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import ManualError


class WriteError(ManualError):
    """A file cannot be written where it must (a symlink, a read-only folder); the old files stand."""

    code = codes.WRITE_FAILED


def read_text(path: Path) -> str | None:
    """The file's exact text (no newline translation), or None if it is not a readable regular file."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is in words ('a named pipe'): what a message names
    instead of opening it (a pipe would wait on its writer)."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def mode_for(target: Path) -> int:
    """The mode a plain open() would give: the existing file's, else 0666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


def current_umask() -> int:
    """The process umask, read without changing it (os.umask would race other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(path: Path, text: str, mode: int) -> None:
    """Write one new file with exactly `mode` (the umask does not apply twice)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fd = -1
            fh.write(text)
    finally:
        if fd >= 0:
            os.close(fd)


def write_file(target: Path, text: str) -> None:
    """Write one file as a user expects of a path: through a symlink to the file it names, atomically,
    with the mode a plain open() gives; never onto a device, FIFO or folder (use stdout for those)."""
    real = Path(os.path.realpath(target))
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise WriteError(f"cannot write {target}: {exc.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise WriteError(f"cannot write {target}: not a regular file; use -o - to write to standard output")
    tmp = real.with_name(f".{real.name}.metrics-manual.tmp")  # one fixed name: the next write replaces a leftover
    try:
        tmp.unlink(missing_ok=True)
        write_text(tmp, text, mode_for(real))
        os.replace(tmp, real)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError(f"cannot write {target}: {exc.strerror}") from None


def symlink_on_the_way(base: Path, target: Path) -> Path | None:
    """The first symlink from `base` (excluded) down to `target` (included), else None."""
    path = base
    for part in target.relative_to(base).parts:
        path = path / part
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return path
        except FileNotFoundError:
            return None
    return None


def write_real_file(base: Path, target: Path, text: str) -> None:
    """Write `target` (a path under `base`) atomically and never through a symlink: a symlink for
    the file or any folder below `base` is a WriteError; missing folders are made.

    Derive's captures and profile edits go through here, as build's files go through `apply`:
    a file smuggled in as a link cannot redirect a write outside the project.
    """
    link = symlink_on_the_way(base, target)
    if link is not None:
        raise WriteError(
            f"cannot write {target}: {link} is a symlink; metrics-manual writes only real files and folders"
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        link = symlink_on_the_way(base, target)  # a folder swapped for a link meanwhile
        if link is not None:
            raise WriteError(f"cannot write {target}: {link} is a symlink")
        if target.is_dir():
            raise WriteError(f"cannot write {target}: a folder stands there")
        tmp = target.with_name(f".{target.name}.metrics-manual.tmp")
        tmp.unlink(missing_ok=True)
        write_text(tmp, text, mode_for(target))
        os.replace(tmp, target)  # replaces the name itself: never follows a link that appeared there
    except OSError as exc:
        with contextlib.suppress(OSError):
            target.with_name(f".{target.name}.metrics-manual.tmp").unlink(missing_ok=True)
        raise WriteError(f"cannot write {target}: {exc.strerror}") from None
