"""A run's files growing as a live Miles run writes them, for judge --follow.

The run is written whole once by run_forms; `grow` then writes it into a live folder piece by
piece, each form the way Miles writes it: the event log, the dashboard log and TensorBoard's event
files are appended to, in pieces of `chunk` bytes (so a piece may end inside a line or a record,
as a reader can catch a writer); the CI history is rewritten whole after each step, through a
temp file renamed over it (CiHistoryBackend._write_snapshot_locked). A file of a process appears
when its first piece is written.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import run_forms

GROWING_FORMS = ("events", "dashboard", "ci-history", "tensorboard")


def _upto(run: run_forms.Series, last: int) -> run_forms.Series:
    return {k: {s: v for s, v in values.items() if s <= last} for k, values in run.items()}


def pieces(form: str, run: run_forms.Series, src: Path, live: Path, chunk: int = 97) -> Iterator[Callable[[], None]]:
    """Each write of the growing run, in order: calling one writes the next piece into `live`."""
    if form == "ci-history":
        steps = sorted({s for values in run.values() for s in values})
        for last in steps:

            def rewrite(last: int = last) -> None:
                fresh = src / f"step-{last}"
                for path in run_forms.write_ci_history(_upto(run, last), fresh):
                    tmp = live / (path.name + ".tmp")
                    shutil.copyfile(path, tmp)
                    os.replace(tmp, live / path.name)  # atomic, as Miles writes it

            yield rewrite
        return
    files = run_forms.write(form, run, src)
    data = {p: p.read_bytes() for p in files}
    done = dict.fromkeys(files, 0)
    while any(done[p] < len(b) for p, b in data.items()):
        for p, b in data.items():
            if done[p] < len(b):

                def append(p: Path = p, piece: bytes = b[done[p] : done[p] + chunk]) -> None:
                    out = live / p.relative_to(src)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    with out.open("ab") as fh:
                        fh.write(piece)

                yield append
                done[p] += chunk


def grow(form: str, run: run_forms.Series, src: Path, live: Path, pause: float = 0.0, chunk: int = 97) -> None:
    """Write the whole run into `live`, piece by piece, `pause` seconds apart."""
    live.mkdir(parents=True, exist_ok=True)
    for write in pieces(form, run, src, live, chunk):
        write()
        if pause:
            time.sleep(pause)
