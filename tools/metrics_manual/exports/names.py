"""The export formats: one registry of their ids, file suffixes, names in words and writers.

The command's options and help, build's files (exports/generated.py), `export -o DIR` for a folder
(exports/folder.py) and the pages' lists all read it, so a format added here shows everywhere. A
writer is named, not imported: the command's help reads this registry and must not load the
exporters (nor the model they import).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, cast

from metrics_manual.imported import imported

if TYPE_CHECKING:
    from metrics_manual.model.schema import ProfileExport


@dataclass(frozen=True)
class ExportFormat:
    id: str  # what --format takes
    suffix: str  # a profile's file under docs/export/: <profile id><suffix>; "" for a folder
    words: str  # what the file is, for people
    writer: str  # "module:function" of metrics_manual.exports: the profile's text, or a folder's files
    folder: bool = False  # a folder of files, written by `export -o DIR` only (not by build)

    def _write(self) -> Callable[[ProfileExport], object]:
        return cast("Callable[[ProfileExport], object]", imported("metrics_manual.exports", self.writer))

    def text(self, doc: ProfileExport) -> str:
        """The profile as the text of this (file) format."""
        assert not self.folder, self.id
        return cast(str, self._write()(doc))

    def files(self, doc: ProfileExport) -> dict[str, Callable[[BinaryIO], None]]:
        """The files of this folder format, by path inside the folder, each with what writes it into an
        open file (a long file is streamed, never held whole)."""
        assert self.folder, self.id
        return cast("dict[str, Callable[[BinaryIO], None]]", self._write()(doc))


FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("json", ".json", "JSON", "document:to_json"),
    ExportFormat("yaml", ".yaml", "YAML", "yaml_text:to_yaml"),
    ExportFormat("csv", ".csv", "CSV", "csv_table:to_csv"),
    ExportFormat("prometheus", ".rules.yml", "Prometheus alerting rules", "prometheus:to_prometheus"),
    ExportFormat("grafana", ".grafana.json", "a Grafana dashboard", "grafana:to_grafana"),
    ExportFormat("tensorboard", "", "a TensorBoard log folder", "tensorboard:tensorboard_files", folder=True),
)
BY_ID = {f.id: f for f in FORMATS}
EXPORT_FORMATS = tuple(f.id for f in FORMATS)
FILE_FORMATS = tuple(f.id for f in FORMATS if not f.folder)  # build writes each under docs/export/
FOLDER_FORMATS = tuple(f.id for f in FORMATS if f.folder)
SUFFIX = {f.id: f.suffix for f in FORMATS if not f.folder}


def formats_in_words() -> str:
    """Every format, as a sentence lists them: "JSON, YAML, ... or a Grafana dashboard"."""
    words = [f"{f.words} ({f.id})" for f in FORMATS]
    return ", ".join(words[:-1]) + " or " + words[-1]
