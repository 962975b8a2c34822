"""`metrics-manual export --help` lists every format of the one registry (exports/names.py), and each has an exporter."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from metrics_manual.exports.document import export_document
from metrics_manual.exports.generated import export_text
from metrics_manual.exports.names import FORMATS
from metrics_manual.source.load import load_manual


def _help() -> str:
    result = run_cli("export", "--help")
    assert result.returncode == 0
    return " ".join(result.stdout.split())  # click wraps the help: compare words


def test_help_names_every_format_in_words_and_as_the_option_takes_it() -> None:
    text = _help()
    assert "grafana" in {f.id for f in FORMATS}
    for f in FORMATS:
        assert f"{f.words} ({f.id})" in text, f.id
    assert f"--format [{'|'.join(f.id for f in FORMATS)}]" in text


def test_every_format_of_the_registry_exports(tiny: Path) -> None:
    manual = load_manual(tiny)
    doc = export_document(manual, manual.profile("tiny"), None)
    files = [f for f in FORMATS if not f.folder]
    texts = {f.id: export_text(doc, f.id) for f in files}
    assert len(set(texts.values())) == len(files) and all(texts.values())
    for f in FORMATS:
        if f.folder:  # written by `export -o DIR` (tests/exports/test_tensorboard.py)
            assert f.files(doc), f.id
            continue
        result = run_cli("export", "--root", str(tiny), "--profile", "tiny", "--format", f.id)
        # (click's test runner reads standard output with universal newlines: the CSV's CRLF is \n there)
        assert result.returncode == 0 and result.stdout == texts[f.id].replace("\r\n", "\n"), f.id
    with pytest.raises(KeyError):
        export_text(doc, "xml")  # never a silent fallback to another format
    with pytest.raises(AssertionError):
        next(f for f in FORMATS if f.folder).text(doc)  # a folder is never written as one text
