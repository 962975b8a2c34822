"""An entry's `logged` held to the training backends its origins live under.

Miles trains with one backend per run: Megatron (miles/backends/megatron_utils/) or FSDP
(miles/backends/fsdp_utils/); the code both share lives elsewhere (miles/backends/training_utils/, miles/utils/).
An entry whose origin and named_at lie under one backend's folder only (places in shared code aside) is
computed or named by that backend alone, so a reader of a run on the other must learn from `logged` that the
key is not theirs: `logged` must name that backend. Whether the other backend logs the key too (from a place
the entry does not name) is for the person who reads the code; `logged` then names both.
"""

from __future__ import annotations

import re

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.model.schema import Catalog
from metrics_manual.source.reader import Document

# A backend's folder in Miles -> how `logged` names it.
BACKENDS = {"miles/backends/megatron_utils/": "Megatron", "miles/backends/fsdp_utils/": "FSDP"}


def backend_of(path: str) -> str | None:
    return next((folder for folder in BACKENDS if path.startswith(folder)), None)


def findings(catalog: Catalog, doc: Document) -> list[Finding]:
    """A finding at `logged` for each logged entry whose origins live under one backend that `logged` does not name."""
    out: list[Finding] = []
    for si, section in enumerate(catalog.sections):
        for mi, metric in enumerate(section.metrics):
            o = metric.origin
            if o is None or metric.not_logged is not None:  # never logged: no backend logs it
                continue
            folders = {backend_of(p) for p in [o.path, *([o.named_at.path] if o.named_at else [])]} - {None}
            if len(folders) != 1:
                continue
            (folder,) = folders
            assert folder is not None
            name = BACKENDS[folder]
            if re.search(rf"\b{re.escape(name)}\b", o.logged, re.IGNORECASE) is None:
                line, col = doc.where(("sections", si, "metrics", mi, "origin", "logged"))
                out.append(
                    Finding(
                        doc.path,
                        line,
                        col,
                        f"{metric.key}: logged does not name the {name} backend, yet its origins live only under "
                        f"{folder}",
                        code=codes.LOGGED_OMITS_BACKEND,
                    )
                )
    return out
