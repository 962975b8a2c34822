"""The state of the catalog's audit against the code, for the coverage page: computed from the catalog alone.

The site is built without a Miles checkout, so the page says what the catalog claims (which places carry
an evidence line, at which commit) and leaves the verifying to `metrics-manual coverage --miles PATH`.
"""

from __future__ import annotations

from dataclasses import dataclass

from metrics_manual.model.schema import Catalog, LabVsCode, Metric, NamedAt, Origin, Section


@dataclass(frozen=True)
class Audit:
    entries: list[tuple[Section, Metric]]  # every entry with an origin
    places: list[Origin | NamedAt]  # every origin and named_at
    unverified: list[tuple[Section, Metric]]  # entries with a place that carries no evidence
    lab_vs_code: list[tuple[Section, Metric, LabVsCode]]
    not_logged: list[tuple[Section, Metric]]
    no_origin: list[tuple[Section, Metric]]  # entries that name no place in the code
    not_re_read: list[tuple[Section, Metric]]  # entries whose code changed after they were read (read_at)

    @property
    def evidenced(self) -> int:
        """Places that carry an evidence line."""
        return sum(p.evidence is not None for p in self.places)


def audit(catalog: Catalog) -> Audit:
    entries: list[tuple[Section, Metric]] = []
    places: list[Origin | NamedAt] = []
    unverified: list[tuple[Section, Metric]] = []
    for section in catalog.sections:
        for metric in section.metrics:
            if metric.origin is None:
                continue
            own: list[Origin | NamedAt] = [metric.origin, *([metric.origin.named_at] if metric.origin.named_at else [])]
            entries.append((section, metric))
            places += own
            if any(p.evidence is None for p in own):
                unverified.append((section, metric))
    return Audit(
        entries,
        places,
        unverified,
        [(s, m, row) for s in catalog.sections for m in s.metrics for row in m.lab_vs_code],
        [(s, m) for s in catalog.sections for m in s.metrics if m.not_logged is not None],
        [(s, m) for s in catalog.sections for m in s.metrics if m.origin is None],
        [(s, m) for s, m in entries if m.origin is not None and m.origin.read_at is not None],
    )
