"""A profile as the document every export is made from (`ProfileExport`), and its canonical JSON.

Every other format (exports/names.py) is written from this document, so they all carry the same data.
"""

from __future__ import annotations

import json
from typing import Any

from metrics_manual.model.schema import SCHEMA_VERSION, MetricExport, Profile, ProfileExport, ProfileInfo
from metrics_manual.source.load import Manual

# Each catalog section has a page under it: reference/metrics/<section id>/#<metric anchor>.
REFERENCE_PAGE = "reference/metrics/"


def export_document(manual: Manual, profile: Profile, site_url: str | None) -> ProfileExport:
    metrics = []
    for section in manual.catalog.sections:
        for m in section.metrics:
            metrics.append(  # built from validated parts: no need to validate again
                MetricExport.model_construct(
                    key=m.key,
                    name=m.name,
                    members=m.members,
                    section=section.id,
                    section_title=section.title,
                    meaning=m.meaning,
                    unit=m.unit,
                    url=metric_url(site_url, section.id, m.anchor),
                    not_logged=m.not_logged,
                    renamed_from=m.renamed_from,
                    expectations=profile.expectations.get(m.key, []),
                )
            )
    info = ProfileInfo.model_construct(**{k: getattr(profile, k) for k in ProfileInfo.model_fields})
    return ProfileExport.model_construct(
        schema_version=SCHEMA_VERSION, profile=info, step_keys=dict(manual.catalog.step_keys), metrics=metrics
    )


def metric_url(site_url: str | None, section: str, anchor: str) -> str | None:
    """The metric's entry on its section's page (the old `reference/metrics/#anchor` still lands there)."""
    return f"{site_url.rstrip('/')}/{REFERENCE_PAGE}{section}/#{anchor}" if site_url else None


def plain_data(doc: ProfileExport) -> dict[str, Any]:
    # pydantic's Rust serializer is many times faster than model_dump + json.dumps.
    data: dict[str, Any] = json.loads(doc.model_dump_json(exclude_none=True))
    return data


def to_json(doc: ProfileExport) -> str:
    """The canonical export: the document as JSON."""
    return doc.model_dump_json(indent=2, exclude_none=True) + "\n"
