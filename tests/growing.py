"""A run's files growing as a live Miles run writes them, for judge --follow.

Files written whole (by run_forms, or by Miles' own writers in tests/fixtures/miles-writers) are
written again into a live folder piece by piece, each form the way Miles writes it: the event log,
the dashboard log and TensorBoard's event files are appended to, in pieces of `chunk` bytes taken
in turn from each file of a process life (so a piece may end inside a line or a record, as a
reader can catch a writer); a form the registry says is rewritten (the CI history) is rewritten
whole after each step, through a temp file renamed over it (CiHistoryBackend._write_snapshot_locked). A file appears when its first
piece is written; the files of a later life (a process resumed from a checkpoint) once the earlier
life's are whole.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import run_forms
from metrics_manual.runs.forms import BY_NAME, FORMS, detect

GROWING_FORMS = tuple(f.name for f in FORMS if f.grows != "exported")  # the forms a live run writes
Piece = Callable[[], None]


def appended(files: list[tuple[Path, Path]], chunk: int) -> Iterator[Piece]:
    """Each file's bytes (source, live copy) appended in pieces of `chunk` bytes, the files in turn."""
    data = [(src.read_bytes(), dst) for src, dst in files]
    for at in range(0, max((len(b) for b, _ in data), default=0), chunk):
        for b, dst in data:
            if at < len(b):

                def append(dst: Path = dst, piece: bytes = b[at : at + chunk]) -> None:
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    with dst.open("ab") as fh:
                        fh.write(piece)

                yield append


def rewritten(src: Path, dst: Path) -> Iterator[Piece]:
    """A CI history (one line a metric: its series) written as Miles writes it after each step:
    the series up to that step, the whole file each time, atomically; the source's bytes last."""
    lines = [json.loads(line) for line in src.read_text("utf-8").splitlines() if line.strip()]
    steps = sorted({point[0] for line in lines for point in line["series"]})

    def write(text: bytes) -> None:
        dst.parent.mkdir(parents=True, exist_ok=True)
        tmp = dst.with_name(dst.name + ".tmp")
        tmp.write_bytes(text)
        os.replace(tmp, dst)

    for last in steps[:-1]:
        upto = [{**line, "series": [p for p in line["series"] if p[0] <= last]} for line in lines]
        text = "".join(json.dumps(line, allow_nan=False) + "\n" for line in upto).encode("utf-8")
        yield lambda text=text: write(text)
    yield lambda: write(src.read_bytes())


def lives(folders: list[Path], live: Path, chunk: int = 97) -> Iterator[Piece]:
    """The files under each folder (a process life, in order) growing into `live`, at the same
    relative places: a CI history rewritten, the other forms appended."""
    for folder in folders:
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        whole = [p for p in files if (form := detect(p)) and BY_NAME[form].grows == "rewritten"]
        yield from appended([(p, live / p.relative_to(folder)) for p in files if p not in whole], chunk)
        for p in whole:
            yield from rewritten(p, live / p.relative_to(folder))


def pieces(form: str, run: run_forms.Series, src: Path, live: Path, chunk: int = 97) -> Iterator[Piece]:
    """Each write of `run` growing in `form`, in order: calling one writes the next piece into `live`."""
    run_forms.write(form, run, src)
    return lives([src], live, chunk)


def grow(form: str, run: run_forms.Series, src: Path, live: Path, pause: float = 0.0, chunk: int = 97) -> None:
    """Write the whole run into `live`, piece by piece, `pause` seconds apart."""
    play(pieces(form, run, src, live, chunk), pause)


def play(writes: Iterator[Piece], pause: float = 0.0) -> None:
    for write in writes:
        write()
        if pause:
            time.sleep(pause)
