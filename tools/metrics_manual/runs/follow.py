"""A run read as it grows (judge --follow): each file's reader resumed where it stopped.

    follower = RunFollower([Path("dump")], step_keys, keys=..., renames=...)
    while ...:
        if follower.poll():              # what the files gained since the last poll
            run = follower.snapshot()    # the Run of what was read so far
    run = follower.final()               # the Run `read_run` reads from the same files

Each file keeps its own Collector and where its reading stands:

- a form Miles appends to (the event log, the dashboard log, TensorBoard's event files) has a
  reader that reads on where it stopped (its RunForm's `tail`: EventLog, DashboardLog, EventFile);
  a line no newline ends yet (a record cut at the end) waits, never reported while it may still
  be written;
- any other form is read again from the start, into a new Collector, when the file's size, time
  or inode changes: Miles rewrites the CI history whole on every log() (a temp file renamed over
  it), and a W&B CSV is exported whole;
- a file replaced by another (a new inode, or shorter than what was read: Miles' event logger
  opens its file per write so that a checkpoint's snapshot can replace it) is read again from
  the start; a file gone is dropped; new files in the folders given join the run.

`snapshot` merges the files' collectors as `read_run` merges files (in the order it reads them)
and leaves out what only the end can tell (a cut last line, a file with no metric); `final`
reads each file to its end, its last line or record included, and gives the Run that `read_run`
gives for the same files. Bytes read are not kept: memory is the judged keys' values, as judge's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.runs.collect import Collector
from metrics_manual.runs.forms import BY_NAME, Tail, detect_settled, looks_like
from metrics_manual.runs.read import RunInputError, assemble, reading, run_files
from metrics_manual.runs.run import Run
from metrics_manual.text import shown_path

_REFUSED = (codes.NO_SUCH_RUN_FILE, codes.NOT_A_RUN_FILE)  # bad paths, never waited for


_SETTLED = -1  # in place of a size and a time: a file of no known form whose first line is whole
_TRUSTED = 2_000_000_000  # ns: a folder listed this long after its last change holds no change its mtime hides


class _Listing:
    """The files of one folder of the run, as read.py's folder_files lists them, each folder in it
    listed again only when it changed (its mtime moves when a file is made, removed or renamed in
    it): a --dump-details folder holds a file per rollout step, and listing them all 5 times a
    second would cost more than reading the run. A listing made within _TRUSTED of the folder's
    last change is made again at the next look (a file system's clock may be too coarse to tell
    a file made just after the listing)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folders: dict[str, tuple[int, bool, list[str], list[str]]] = {}  # mtime, trusted, file and folder names
        self.listed: list[Path] = []  # the files in name order, as the last look found them

    def files(self) -> tuple[list[Path], list[Path]]:
        """The files, in name order, and those not there at the last look."""
        files: list[str] = []
        if not self._walk(os.fspath(self.root), files) and len(files) == len(self.listed):
            return self.listed, []
        before = set(map(os.fspath, self.listed))
        # In Path's order (part by part), as folder_files sorts them: "a/b" before "a-c".
        self.listed = [Path(f) for f in sorted(files, key=lambda f: f.split(os.sep))]
        return self.listed, [p for p in self.listed if os.fspath(p) not in before]

    def _walk(self, folder: str, files: list[str]) -> bool:
        """Add the files under `folder` to `files`; True when a folder's names changed since the last look."""
        try:
            mtime = os.stat(folder).st_mtime_ns
        except OSError:
            return False
        known = self.folders.get(folder)
        changed = False
        if known is None or known[0] != mtime or not known[1]:
            trusted = time.time_ns() - mtime > _TRUSTED
            here: list[str] = []
            below: list[str] = []
            try:
                with os.scandir(folder) as entries:
                    for e in entries:
                        if e.name.startswith("."):  # hidden, as folder_files passes it over
                            continue
                        if e.is_dir(follow_symlinks=False):
                            below.append(e.path)
                        elif e.is_file():
                            here.append(e.path)
            except OSError:
                return False
            changed = known is None or (here, below) != (known[2], known[3])
            known = self.folders[folder] = (mtime, trusted, here, below)
        files += known[2]
        for sub in known[3]:
            changed |= self._walk(sub, files)
        return changed


class Gone(Exception):
    """The file went away while it was being read (a CI history's temp file renamed over its file)."""


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


@dataclass
class _File:
    """One file of the run and where reading it stands."""

    path: Path
    form: str
    out: Collector
    identity: tuple[int, int] = (0, 0)
    seen: tuple[int, int] = (-1, -1)  # size and mtime at the last read
    tail: Tail | None = None  # the reader that reads on, for a form appended to
    broken: bool = False  # the reader stopped on an error (an OSError ...): the end reads it again

    @property
    def rel(self) -> str:
        return self.out.path

    def read_on(self, st: os.stat_result, live: bool = True) -> bool:
        """Read what the file gained since the last read (`st`: its stat now); True when anything was
        read. `live`: a file gone meanwhile raises Gone (it is dropped), else it is a finding, as judge's."""
        seen = (st.st_size, st.st_mtime_ns)
        if seen == self.seen or self.broken:
            return False
        self.seen = seen
        with reading(self.form, self.rel, self.out):
            try:
                self._read(ended=False)
            except FileNotFoundError:
                if live:
                    raise Gone from None
                self.broken = True
                raise
            except BaseException:
                self.broken = True
                raise
        return True

    def _read(self, ended: bool) -> None:
        form = BY_NAME[self.form]
        if form.tail is not None:
            self.tail = self.tail or form.tail(self.path, self.rel)
            self.tail.read(self.out, ended)
        elif not ended:  # written whole: read whole once, by the form's own reader (a change makes a new _File)
            form.read(self.path, self.rel, self.out)

    def read_last(self) -> None:
        """The end of a complete file: its last line or record, cut or not, as judge reads it."""
        with reading(self.form, self.rel, self.out):
            self._read(ended=True)

    def float32(self) -> set[str]:
        """The keys read from it, when its form stores float32."""
        return set(self.out.series) if BY_NAME[self.form].float32 else set()


class RunFollower:
    """The files of one run (`paths`, as judge takes them), each read as it grows."""

    def __init__(
        self,
        paths: Sequence[Path],
        step_keys: Mapping[str, str],
        input_format: str = "auto",
        keys: Collection[str] | None = None,
        renames: Mapping[str, str] | None = None,
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self.step_keys = dict(step_keys)
        self.input_format = input_format
        self.keys = keys
        self.renames = renames
        self._files: dict[Path, _File] = {}
        self._order: list[tuple[Path, str]] = []  # the files of the run, in the order read_run reads them
        # A file of no known form (yet): its inode, size and mtime, or its inode and _SETTLED.
        self._unknown: dict[Path, tuple[int, int, int]] = {}
        self._listings: dict[Path, _Listing] = {}
        self._looked: dict[Path, list[Path]] = {}  # folder given -> its files worth a look at each poll
        self._listed: dict[Path, int] = {}  # folder given -> how many files it held at the last look

    def check(self) -> None:
        """Raise RunInputError for what judge refuses before it reads (a path that does not exist, a
        pipe, a device); a file or folder holding nothing of a known form yet is waited for."""
        try:
            run_files(self.paths, self.input_format)
        except RunInputError as err:
            refused = [f for f in err.findings if f.code in _REFUSED]
            if refused:
                raise RunInputError(refused) from None

    # --- where the files are -----------------------------------------------------------------

    def _form(self, file: Path, named: bool) -> tuple[str, os.stat_result] | None:
        """The form of a file, as read_run's run_files tells it (`named`: given as a path, not found
        in a folder), and its stat; None for a file not there or of no known form (yet: an empty
        file, a first line still being written, looked at again when it changes)."""
        unknown = self._unknown.get(file)
        try:
            st = file.stat()
        except OSError:
            return None
        if self.input_format != "auto":
            form = self.input_format if named or looks_like(file, self.input_format) else None
            return (form, st) if form else None
        known = self._files.get(file)
        if known is not None and known.identity == _identity(st):
            return known.form, st
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if unknown == stamp or unknown == (st.st_ino, _SETTLED, _SETTLED):
            return None
        form, settled = detect_settled(file)
        if form is not None:
            self._unknown.pop(file, None)
            return form, st
        self._unknown[file] = (st.st_ino, _SETTLED, _SETTLED) if settled else stamp
        return None

    def _settled(self, file: Path) -> bool:
        unknown = self._unknown.get(file)
        return unknown is not None and unknown[1] == _SETTLED

    def _found(self) -> Iterator[tuple[Path, str, os.stat_result]]:
        """Each file of the run now, with its form and stat, in read_run's order; a file that is not
        there (yet) or of no known form (yet: an empty file, a first line still being written) is
        passed over, to be looked at again at the next poll."""
        for path in self.paths:
            found: Iterable[tuple[Path, tuple[str, os.stat_result] | None]]
            if path.is_dir():
                listing = self._listings.setdefault(path, _Listing(path))
                files, new = listing.files()
                if new or path not in self._looked or len(files) != self._listed.get(path):
                    # A file of no known form whose first line is whole is not looked at again
                    # (one replaced under its name by a run's file is read at the end only).
                    for f in new:
                        self._unknown.pop(f, None)
                    self._looked[path] = [f for f in files if not self._settled(f)]
                    self._listed[path] = len(files)
                found = ((f, self._form(f, False)) for f in self._looked[path])
            else:
                found = ((path, self._form(path, True) if path.is_file() else None),)
            for file, known in found:
                if known is not None:
                    yield file, known[0], known[1]

    # --- reading --------------------------------------------------------------------------------

    def _collector(self, file: Path) -> Collector:
        out = Collector(self.step_keys, keys=self.keys, renames=self.renames)
        out.begin(shown_path(file))
        return out

    def _state(self, file: Path, form: str, st: os.stat_result) -> tuple[_File, bool]:
        """The reading state of `file`: a new one when the file is new, of another form, replaced
        (another inode, or shorter than what was read) or, for a form written whole, changed at
        all; True when it is new."""
        f = self._files.get(file)
        if (
            f is None
            or f.form != form
            or f.identity != _identity(st)
            or st.st_size < f.seen[0]
            or (f.seen != (st.st_size, st.st_mtime_ns) and BY_NAME[form].tail is None)
        ):
            f = self._files[file] = _File(file, form, self._collector(file), _identity(st))
            return f, True
        return f, False

    def poll(self) -> bool:
        """Read what the run's files gained since the last poll; True when anything changed (a file
        new, gone or replaced, new lines or records)."""
        changed = False
        order = []
        for file, form, st in self._found():
            f, new = self._state(file, form, st)
            try:
                changed |= f.read_on(st) or new
            except Gone:  # gone between its stat and its read: dropped, as if never seen
                del self._files[file]
                continue
            order.append((file, form))
        gone = set(self._files) - {file for file, _ in order}
        for file in gone:
            del self._files[file]
        changed |= bool(gone) or order != self._order
        self._order = order
        return changed

    def _run(self, files: list[tuple[Path, str]], warnings: list[Finding], total: int) -> Run:
        merged = Collector(self.step_keys, keys=self.keys, renames=self.renames)
        float32: set[str] = set()
        for file, _ in files:
            merged.absorb(self._files[file].out)
            float32 |= self._files[file].float32()
        return assemble(self.paths, files, warnings, merged, self.step_keys, self.renames, total, float32)

    def snapshot(self) -> Run:
        """The Run of what was read so far. What only a complete file can tell is left out: a cut last
        line (it is waited for), a folder with no file yet, files that hold no metric (yet)."""
        return self._run(self._order, [], 0)

    def final(self) -> Run:
        """The run read to the end of each file, as `read_run` reads the same files now: the same
        files (RunInputError as it raises it), their last lines or records, the same findings."""
        files, warnings = run_files(self.paths, self.input_format)
        total = 0
        for file, form in files:
            st = file.stat()
            total += st.st_size
            f, _ = self._state(file, form, st)
            if f.broken:  # read again whole, as read_run reads it
                f = self._files[file] = _File(file, form, self._collector(file), _identity(st))
            f.read_on(st, live=False)
            f.read_last()
        return self._run(files, warnings, total)
