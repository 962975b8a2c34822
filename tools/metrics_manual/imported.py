"""A registry entry's "module:name", imported when it is used: a registry (the run forms, the export
formats) names its readers and writers so that listing it, as every --help does, imports none of them."""

from __future__ import annotations

import importlib


def imported(package: str, where: str) -> object:
    """The object `where` ("module:name") names in `package` (e.g. "metrics_manual.runs")."""
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)
