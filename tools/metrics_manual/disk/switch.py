"""What is on disk under docs/, and how build switches it to the new generated files.

One plan serves `build` (which carries it out) and `check` (which reports it), so the
two never disagree on what is changed, edited by hand, stray or not ours to touch.

Safety: the manifest (`docs/.generated.json`) arrives in pull requests like any file,
so nothing in it is trusted. Build writes and deletes only inside docs/, never through
a symlink, and deletes a stray file only if its content is still what build wrote.

Atomicity: new files are staged in a hidden folder, then a journal naming them is
written in one rename, then they are moved in. A build killed before the journal
exists leaves the old files; one killed after it is finished by the next command
(`recover`), so readers see all old or all new files, and no staged file survives.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.disk.files import WriteError, mode_for, read_text, write_text
from metrics_manual.text import shown

OUT = "docs"
MANIFEST = f"{OUT}/.generated.json"
JOURNAL = f"{OUT}/.generated.journal"
STAGING = f"{OUT}/.generated.staging"
OLD = ".old"  # inside STAGING: hard links to the files being replaced


def digest(text: str) -> str:
    import hashlib  # here: every command's start imports this module (settle), few write or compare files

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_text(files: dict[str, str]) -> str:
    """What build last wrote: path -> sha256. It tells hand edits and stray files apart."""
    return json.dumps({p: digest(files[p]) for p in sorted(files)}, indent=1) + "\n"


def inside_out(root: Path, rel: object) -> str | None:
    """Why `rel` is not a path build may touch (None when it may): a relative path under
    docs/, in normal form, with no symlink anywhere on the way."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\x00" in rel:
        return "not a relative path"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or pure.as_posix() != rel:
        return "not a plain relative path"
    if pure.parts[0] != OUT or len(pure.parts) < 2:
        return f"outside {OUT}/"
    if rel in (MANIFEST, JOURNAL) or rel.startswith(STAGING + "/") or rel == STAGING:
        return "a file of build's own bookkeeping"
    path = root
    for part in pure.parts:
        path = path / part
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return f"{path.relative_to(root).as_posix()} is a symlink"
        except FileNotFoundError:
            break
        except OSError as exc:
            return exc.strerror or "unreadable"
    return None


def read_manifest(root: Path) -> tuple[dict[str, str], list[Finding]]:
    """The manifest's entries that build may act on, and a finding for each it may not."""
    text = read_text(root / MANIFEST)
    if text is None:
        return {}, []
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return {}, [
            Finding(
                MANIFEST,
                1,
                1,
                f"not valid JSON ({shown(str(exc))}); build rewrites it",
                severity="warning",
                code=codes.MANIFEST_UNREADABLE,
            )
        ]
    if not isinstance(data, dict):
        return {}, [
            Finding(MANIFEST, 1, 1, "not a JSON object; build rewrites it", "warning", code=codes.MANIFEST_UNREADABLE)
        ]
    good: dict[str, str] = {}
    refused: list[Finding] = []
    for rel, sha in data.items():
        why = inside_out(root, rel)
        if why is None and not (isinstance(sha, str) and len(sha) == 64):
            why = "no sha256 digest"
        if why:
            refused.append(
                Finding(
                    MANIFEST,
                    1,
                    1,
                    f"entry {shown(rel)} is ignored: {why}; build never touches it",
                    severity="warning",
                    code=codes.MANIFEST_ENTRY_IGNORED,
                )
            )
        else:
            good[rel] = sha
    return good, refused


@dataclass
class Plan:
    """How the generated files on disk differ from what build makes now."""

    write: dict[str, str] = field(default_factory=dict)  # changed or missing: path -> new text
    missing: list[str] = field(default_factory=list)
    hand_edited: list[str] = field(default_factory=list)  # changed, and not what build last wrote
    unchanged: int = 0
    remove: list[str] = field(default_factory=list)  # strays that build made and may delete
    kept: list[Finding] = field(default_factory=list)  # strays build leaves, and manifest entries it ignores
    refused: list[Finding] = field(default_factory=list)  # targets build may not write (symlinks on the way)

    @property
    def in_sync(self) -> bool:
        return not (self.write or self.remove or self.kept or self.refused)


def plan(root: Path, files: dict[str, str]) -> Plan:
    """Compare the generated `files` (path -> text) and their manifest with what is on disk."""
    previous, ignored = read_manifest(root)
    out = Plan(kept=ignored)
    everything = {**files, MANIFEST: manifest_text(files)}
    for rel, text in everything.items():
        why = inside_out(root, rel) if rel != MANIFEST else None
        if why:
            out.refused.append(Finding(rel, 1, 1, f"build will not write here: {why}", code=codes.WRITE_REFUSED))
            continue
        current = read_text(root / rel)
        if current == text:
            out.unchanged += 1
            continue
        out.write[rel] = text
        if current is None:
            out.missing.append(rel)
        elif rel in previous and digest(current) != previous[rel]:
            out.hand_edited.append(rel)
    folders = generated_folders(files)
    for rel in sorted(set(previous) - set(files)):
        current = read_text(root / rel)
        if current is None:
            continue
        if not in_folders(rel, folders):
            # The manifest arrives in pull requests: it can name a hand-written page with its digest.
            out.kept.append(
                Finding(
                    MANIFEST,
                    1,
                    1,
                    f"entry {shown(rel)} is ignored: outside the folders build generates "
                    f"({', '.join(sorted(folders))}); build never deletes it",
                    severity="warning",
                    code=codes.MANIFEST_ENTRY_IGNORED,
                )
            )
        elif digest(current) == previous[rel]:
            out.remove.append(rel)
        else:
            out.kept.append(
                Finding(
                    rel,
                    1,
                    1,
                    "stray file: build no longer makes it, and it was edited since build "
                    "wrote it, so build keeps it; delete it yourself if it is not needed",
                    code=codes.STRAY_EDITED,
                )
            )
    return out


def generated_folders(files: dict[str, str]) -> set[str]:
    """The folders under docs/ that build generates (docs/reference/, docs/export/, ...), from the files
    it makes now: the only places where it may delete a stray file."""
    return {"/".join(PurePosixPath(rel).parts[:2]) + "/" for rel in files if len(PurePosixPath(rel).parts) > 2}


def in_folders(rel: str, folders: set[str]) -> bool:
    return any(rel.startswith(folder) for folder in folders)


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """One build or check at a time per project: a lock on the docs/ folder itself (no lock file)."""
    out = root / OUT
    if out.is_symlink():
        raise WriteError(f"{OUT}/ is a symlink; build writes only into a real {OUT}/ folder")
    # Imported here: fcntl is POSIX-only, and the rest of this module (the plan, single writes, used
    # by `export -o` and by check's planning) must import wherever Python runs.
    import fcntl

    out.mkdir(exist_ok=True)
    fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting for another metrics-manual command in {root} to finish…", file=sys.stderr, flush=True)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _journal_entries(root: Path) -> tuple[list[str], list[str]] | None:
    text = read_text(root / JOURNAL)
    if text is None:
        return None
    try:
        data = json.loads(text)
        write, remove = data["write"], data["remove"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return None
    ok = [r for r in (*write, *remove) if r == MANIFEST or inside_out(root, r) is None]
    return [r for r in write if r in ok], [r for r in remove if r in ok]


def _remove_staging(root: Path) -> None:
    staging = root / STAGING
    if staging.is_symlink() or staging.is_file():
        staging.unlink()
    elif staging.exists():
        shutil.rmtree(staging)


def recover(root: Path) -> bool:
    """Finish a switch that a build had committed to, or drop one it had not; True if there was one.

    Call it under `locked`. If a file cannot be moved in, every file already moved is put
    back from its saved original and WriteError is raised: old files, never a mix. A journal
    only names paths that pass `inside_out`, so one smuggled in through a pull request cannot
    move files anywhere else.
    """
    had = False
    entries = _journal_entries(root) if (root / JOURNAL).exists() else None
    if entries is not None:
        had = True
        try:
            _roll_forward(root, *entries)
        except OSError as exc:
            what = exc.filename or "the generated files"
            try:
                _roll_back(root, *entries)
                _clear(root)
            except OSError:  # the journal stays: the next command finishes the switch (new files, never a mix)
                raise WriteError(f"cannot write {what}: {exc.strerror}; the next command finishes the switch") from None
            raise WriteError(f"cannot write {what}: {exc.strerror}; nothing was changed") from None
    try:
        return _clear(root) or had
    except OSError as exc:  # the files are complete; only the journal or staging is left for the next command
        raise WriteError(
            f"cannot remove {exc.filename or STAGING}: {exc.strerror}; the files are complete and the next "
            "command tidies up"
        ) from None


def _roll_forward(root: Path, write: list[str], remove: list[str]) -> None:
    for rel in write:
        staged = root / STAGING / rel
        if staged.is_file() and not staged.is_symlink():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, root / rel)
    for rel in remove:
        # Only a file that `apply` itself saved (a hard link in staging, the same inode): a journal
        # that arrived in a pull request cannot hold a hard link, so it can never make us delete a page.
        if _saved_by_apply(root, rel):
            (root / rel).unlink()


def _saved_by_apply(root: Path, rel: str) -> bool:
    target, saved = root / rel, root / STAGING / OLD / rel
    try:
        return not target.is_symlink() and not saved.is_symlink() and os.path.samefile(target, saved)
    except OSError:
        return False


def _roll_back(root: Path, write: list[str], remove: list[str]) -> None:
    """Put back the originals that `apply` saved as hard links, for the files already switched."""
    for rel in write:
        if (root / STAGING / rel).exists():
            continue  # never moved
        old = root / STAGING / OLD / rel
        if old.exists():
            os.replace(old, root / rel)
        else:
            (root / rel).unlink(missing_ok=True)
    for rel in remove:
        old = root / STAGING / OLD / rel
        if old.exists() and not (root / rel).exists():
            os.replace(old, root / rel)


def _clear(root: Path) -> bool:
    had = False
    for leftover in (root / JOURNAL, root / f"{JOURNAL}.new"):
        if leftover.exists() or leftover.is_symlink():
            had = True
            leftover.unlink()
    if (root / STAGING).exists() or (root / STAGING).is_symlink():
        had = True
        _remove_staging(root)
    return had


def apply(root: Path, todo: Plan) -> None:
    """Carry out `todo`: stage every new file, commit the switch with one rename, move them in.

    Call it under `locked`, after `recover`. Raises WriteError (nothing changed) when a file
    cannot be staged or the plan refuses a target.
    """
    if todo.refused:
        raise WriteError("; ".join(f"{f.path}: {f.message}" for f in todo.refused))
    if not todo.write and not todo.remove:
        return
    staging = root / STAGING
    try:
        for rel, text in todo.write.items():
            staged = staging / rel
            staged.parent.mkdir(parents=True, exist_ok=True)
            write_text(staged, text, mode_for(root / rel))
        for rel in todo.write:  # a folder in the way fails here, before anything moved
            parent = (root / rel).parent
            parent.mkdir(parents=True, exist_ok=True)
            if (root / rel).is_dir():
                raise IsADirectoryError(errno.EISDIR, "a folder stands where a generated file belongs", rel)
            if not os.access(parent, os.W_OK):
                raise PermissionError(errno.EACCES, "folder is not writable", str(parent.relative_to(root)))
        for rel in (*todo.write, *todo.remove):  # the originals, kept to undo a switch that fails half-way
            if (root / rel).is_file():
                (staging / OLD / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(root / rel, staging / OLD / rel)
        journal = json.dumps({"write": sorted(todo.write), "remove": todo.remove})
        write_text(root / f"{JOURNAL}.new", journal, 0o644)
        os.replace(root / f"{JOURNAL}.new", root / JOURNAL)  # the commit point
    except OSError as exc:
        with contextlib.suppress(OSError):  # what is left without a journal, the next command removes
            _remove_staging(root)
            (root / f"{JOURNAL}.new").unlink(missing_ok=True)
        what = exc.filename if isinstance(exc.filename, str) else "the generated files"
        raise WriteError(f"cannot write {what}: {exc.strerror}; nothing was changed") from None
    recover(root)


def settle(root: Path) -> None:
    """Finish (or undo) a switch that a killed build left pending, before a command reads anything.

    Every command and the MkDocs plugin call it first, so none reads a mix of old and new
    generated files. Without a journal or staging folder there is nothing to do and no lock
    is taken (and no docs/ folder made).
    """
    if not any(os.path.lexists(root / p) for p in (JOURNAL, f"{JOURNAL}.new", STAGING)):
        return
    with locked(root):
        recover(root)
