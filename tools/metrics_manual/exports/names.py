"""The export formats: one registry of their ids, file suffixes and names in words, without the exporters.

The command's options and help, build's files and the pages' lists all read it, so a format
added here shows everywhere (exports/formats.py `export_text` writes each file; a folder, which
`build` does not write, comes from exports/folder.py `folder_files`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExportFormat:
    id: str  # what --format takes
    suffix: str  # a profile's file under docs/export/: <profile id><suffix>; "" for a folder
    words: str  # what the file is, for people
    folder: bool = False  # a folder of files, written by `export -o DIR` only (not by build)


FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("json", ".json", "JSON"),
    ExportFormat("yaml", ".yaml", "YAML"),
    ExportFormat("csv", ".csv", "CSV"),
    ExportFormat("prometheus", ".rules.yml", "Prometheus alerting rules"),
    ExportFormat("grafana", ".grafana.json", "a Grafana dashboard"),
    ExportFormat("tensorboard", "", "a TensorBoard log folder", folder=True),
)
EXPORT_FORMATS = tuple(f.id for f in FORMATS)
FILE_FORMATS = tuple(f.id for f in FORMATS if not f.folder)  # build writes each under docs/export/
FOLDER_FORMATS = tuple(f.id for f in FORMATS if f.folder)
SUFFIX = {f.id: f.suffix for f in FORMATS if not f.folder}


def formats_in_words() -> str:
    """Every format, as a sentence lists them: "JSON, YAML, ... or a Grafana dashboard"."""
    words = [f"{f.words} ({f.id})" for f in FORMATS]
    return ", ".join(words[:-1]) + " or " + words[-1]
