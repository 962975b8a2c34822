"""The export files build writes under docs/: each profile in each file format, and the schemas.

Each format's writer is named in its registry entry (exports/names.py), so a format added there is
written here with no change.
"""

from __future__ import annotations

from metrics_manual.exports.document import export_document
from metrics_manual.exports.names import BY_ID, FILE_FORMATS, SUFFIX
from metrics_manual.model.json_schema import schema_text
from metrics_manual.model.schema import Catalog, Coverage, Profile, ProfileExport, TeamCatalog
from metrics_manual.source.load import Manual

EXPORT_DIR = "docs/export"
SCHEMA_DIR = "docs/schema"  # the source's schemas: editors validate ranges/*.yaml against them


def render_exports(manual: Manual, site_url: str | None) -> dict[str, str]:
    out: dict[str, str] = {f"{EXPORT_DIR}/profile.schema.json": schema_text(ProfileExport, "Exported profile")}
    for p in manual.profiles:
        doc = export_document(manual, p, site_url)
        for fmt in FILE_FORMATS:
            out[f"{EXPORT_DIR}/{p.id}{SUFFIX[fmt]}"] = export_text(doc, fmt)
    return out


def export_text(doc: ProfileExport, fmt: str) -> str:
    """The profile in the file format `fmt` (names.FILE_FORMATS)."""
    return BY_ID[fmt].text(doc)


def source_schemas() -> dict[str, str]:
    return {
        f"{SCHEMA_DIR}/catalog.schema.json": schema_text(Catalog, "metrics-manual catalog (ranges/catalog.yaml)"),
        f"{SCHEMA_DIR}/profile.schema.json": schema_text(
            Profile, "metrics-manual profile (ranges/profiles/*.yaml)", written=True
        ),
        f"{SCHEMA_DIR}/team-catalog.schema.json": schema_text(
            TeamCatalog, "metrics-manual team catalog (ranges/catalogs/*.yaml)"
        ),
        f"{SCHEMA_DIR}/coverage.schema.json": schema_text(Coverage, "metrics-manual coverage (ranges/coverage.yaml)"),
    }
