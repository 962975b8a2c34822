"""The export formats and their file suffixes: what the command's options offer, without the exporters."""

from __future__ import annotations

EXPORT_FORMATS = ("json", "yaml", "csv", "prometheus", "grafana")
SUFFIX = {"json": ".json", "yaml": ".yaml", "csv": ".csv", "prometheus": ".rules.yml", "grafana": ".grafana.json"}
