"""A large source is read by worker processes: the same reader, the same manual, the same findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import TINY_PROFILE, write_project
from metrics_manual.diagnostics.finding import SourceError
from metrics_manual.source import reader
from metrics_manual.source.load import load_manual


def _project(root: Path, bad: bool = False) -> Path:
    profiles = {
        f"p{i}": TINY_PROFILE.replace("id: tiny", f"id: p{i}").replace("tiny-notes", f"p{i}-notes") for i in range(5)
    }
    if bad:  # two findings in two files, one of them found only when positions are read
        profiles["p1"] = profiles["p1"].replace("max: 0.9", "max: 0,9")
        profiles["p3"] = profiles["p3"].replace("id: p3", "id: p3\nid: again")
    return write_project(root, profiles=profiles)


def _load(root: Path, monkeypatch, parallel: bool):
    monkeypatch.setattr(reader, "PARALLEL_BYTES", 0 if parallel else 10**12)
    monkeypatch.setattr(reader, "_cores", lambda: 2)
    try:
        return load_manual(root), None
    except SourceError as err:
        return None, [str(f) for f in err.findings]


@pytest.mark.parametrize("bad", [False, True])
def test_worker_processes_read_what_one_process_reads(tmp_path: Path, monkeypatch, bad: bool) -> None:
    root = _project(tmp_path, bad)
    alone = _load(root, monkeypatch, parallel=False)
    here: list[str] = []
    real = reader.read_document

    def recorded(file: Path, display: str, **options):
        here.append(display)  # in a worker, this list is the worker's copy
        return real(file, display, **options)

    monkeypatch.setattr(reader, "read_document", recorded)
    assert _load(root, monkeypatch, parallel=True) == alone
    assert here == []  # nothing was read in this process: the workers read every file
    if bad:
        assert alone[1] and {"p1.yaml", "p3.yaml"} <= {f.split(":")[0].rsplit("/", 1)[-1] for f in alone[1]}, alone
    else:
        assert alone[0] is not None and len(alone[0].profiles) == 5


def test_the_workers_start_before_the_first_document_is_asked_for(tmp_path: Path, monkeypatch) -> None:
    """load imports pydantic and the model while the workers read: they must be running by then."""
    import multiprocessing

    root = _project(tmp_path)
    monkeypatch.setattr(reader, "_cores", lambda: 2)
    files = [(p, f"ranges/profiles/{p.name}") for p in sorted((root / "ranges/profiles").glob("*.yaml"))]
    before = len(multiprocessing.active_children())
    read = reader.read_documents(files, parallel_bytes=0)
    assert len(multiprocessing.active_children()) == before + 2
    docs = [doc.data["id"] for doc, findings in read if not findings]
    assert docs == [f"p{i}" for i in range(5)]
