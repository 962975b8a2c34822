"""An export that is a folder (TensorBoard's log folder), written whole or not at all.

The folder is the user's place: the export writes into a new folder or an empty one, or replaces
an earlier export of its own, recognised by the list of files it left (MARKER) and nothing else
beside them. It never writes through a symlink, nor into a folder that holds anything else. The
files (the marker first) are written into a new hidden folder beside the target, `.<name>.<pid>.*.tmp`,
then swapped with the earlier export in one step (Linux's renameat2 RENAME_EXCHANGE): the target is
the old folder or the new one, never half of one, and never missing. Elsewhere (another system, a
filesystem without the exchange) the earlier export is renamed aside (`.old`) and the new one into
place: a SIGKILL between the two renames leaves no target until the next export. An error or Ctrl-C
on the way undoes what was done. A SIGKILL can leave a hidden `.tmp` or `.old` folder beside the
target; the next export removes each one that carries its marker and whose process is gone, and
nothing else.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

from metrics_manual.disk.files import WriteError, current_umask
from metrics_manual.text import shown_path

MARKER = "metrics-manual-export.json"  # what the export wrote, so the next one may replace it
WRITTEN_BY = "metrics-manual export"


def write_folder(target: Path, files: Mapping[str, Callable[[BinaryIO], None]], fmt: str, profile: str) -> None:
    """Write `files` (relative paths with `/` -> what writes each) as the folder `target`; WriteError
    if it cannot, with nothing written."""
    target = Path(os.path.abspath(target))  # not resolved: a symlink at the target is refused, not followed
    where = shown_path(target)
    if not target.name:
        raise WriteError(f"cannot write {where}: name a folder")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WriteError(f"cannot write {where}: {exc.strerror}") from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise WriteError(f"cannot write {where}: it is a symlink; the export writes only into a real folder")
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise WriteError(f"cannot write {where}: it is not a folder")
    replaces = st is not None and bool(os.listdir(target))
    if replaces:
        if why := not_an_export(target):
            raise WriteError(f"cannot write {where}: {why}; nothing was written")
    remove_stale(target)
    marker = {"written_by": WRITTEN_BY, "format": fmt, "profile": profile, "files": sorted(files)}
    mode = 0o777 & ~current_umask()
    own = f".{target.name}.{os.getpid()}."
    try:
        staged = Path(tempfile.mkdtemp(prefix=own, suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise WriteError(f"cannot write {where}: {exc.strerror}; nothing was written") from None
    aside: Path | None = None

    def undo() -> None:
        if aside is staged:  # the swap was made: the new export stands, complete
            return
        if aside is not None and not os.path.lexists(target):
            with contextlib.suppress(OSError):
                os.rename(aside, target)  # the earlier export back in its place
        shutil.rmtree(staged, ignore_errors=True)
        if aside is not None:
            with contextlib.suppress(OSError):
                aside.rmdir()  # empty unless the earlier export could not move back

    try:
        os.chmod(staged, mode)
        listing = (json.dumps(marker, indent=2) + "\n").encode()
        # The marker first: a staged folder a SIGKILL leaves behind is known as this tool's at once.
        todo: list[tuple[str, Callable[[BinaryIO], None]]] = [
            (MARKER, functools.partial(_write_bytes, listing)),
            *sorted(files.items()),
        ]
        for rel, write in todo:
            path = staged / rel
            path.parent.mkdir(mode=mode, parents=True, exist_ok=True)
            with open(path, "xb") as fh:
                write(fh)
        if not replaces:
            os.rename(staged, target)  # replaces an empty folder; a folder filled meanwhile makes it fail
            return
        if exchange(staged, target):
            aside = staged  # the earlier export, now where the new one was staged
        else:
            aside = Path(tempfile.mkdtemp(prefix=own, suffix=".old", dir=target.parent))
            os.rename(target, aside)
            os.rename(staged, target)
    except OSError as exc:
        undo()
        raise WriteError(f"cannot write {where}: {exc.strerror}; nothing was written") from None
    except BaseException:  # Ctrl-C, or a bug: no half folder either
        undo()
        raise
    if not_an_export(aside) is None:  # again: a file put there since the first look stays
        shutil.rmtree(aside, ignore_errors=True)


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (renameat2 with RENAME_EXCHANGE, Linux 3.15 and glibc 2.28 on); False
    where the system or the filesystem has no such call, so the caller renames instead."""
    call = getattr(_libc(), "renameat2", None) if sys.platform == "linux" else None
    if call is None:
        return False
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    call.restype = ctypes.c_int
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):  # no exchange here: rename instead
        return False
    raise OSError(err, os.strerror(err))


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def remove_stale(target: Path) -> None:
    """Remove the `.tmp` and `.old` folders an earlier export to `target` left beside it when it was
    killed: only those named for the target, whose process is gone, that are real folders carrying
    this tool's marker over nothing else (a folder a SIGKILL left mid-write holds fewer files than
    its marker lists). Anything else stays."""
    own = re.compile(rf"\.{re.escape(target.name)}\.(?:(\d+)\.)?[A-Za-z0-9_]+\.(?:tmp|old)")
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    for name in names:
        m = own.fullmatch(name)
        if m is None or (m[1] is not None and _alive(int(m[1]))):
            continue
        path = target.parent / name
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode) or not_an_export(path) is not None:
                continue
        except OSError:
            continue
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def not_an_export(folder: Path) -> str | None:
    """Why `folder` is not an earlier export that a new one may replace, or None when it is one: its
    marker lists exactly the files beside it, every one a regular file, and nothing is a symlink."""
    try:
        with open(folder / MARKER, "rb", opener=_no_follow) as fh:
            marker = json.loads(fh.read(1 << 20))
        listed = {str(f) for f in marker["files"]} if marker.get("written_by") == WRITTEN_BY else None
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        listed = None
    if listed is None:
        return f"it is not empty and not a folder that `{WRITTEN_BY}` wrote (it holds no {MARKER} of its own)"
    found: set[str] = set()
    for top, dirs, names in os.walk(folder):  # never follows a symlink to a folder
        for name in [*dirs, *names]:
            path = Path(top) / name
            rel = path.relative_to(folder).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                return f"it holds a symlink, {shown_path(rel)}"
            if not stat.S_ISDIR(mode):
                if not stat.S_ISREG(mode):
                    return f"it holds {shown_path(rel)}, which is not a regular file"
                found.add(rel)
    others = sorted(found - listed - {MARKER})
    if others:
        more = f" and {len(others) - 1} more" if len(others) > 1 else ""
        return f"it holds {shown_path(others[0])}{more}, which the earlier export did not write"
    return None


def _write_bytes(data: bytes, fh: BinaryIO) -> None:
    fh.write(data)


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW)
