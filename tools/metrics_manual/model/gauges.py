"""The gauges Miles exports with --use-prometheus: a key's gauge name, and why a key can have none.

The alerting rules (exports/prometheus.py), the Grafana dashboard (exports/grafana.py) and the check that no two keys of
the catalog give one gauge (source/load.py) read them.
"""

from __future__ import annotations

import re


def gauge_name(key: str) -> str:
    """The gauge Miles exports for `key` with --use-prometheus (prometheus_utils.py)."""
    return "miles_metric_" + key.replace("/", "_").replace("-", "_").replace("@", "_at_")


_METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def no_gauge(key: str) -> str | None:
    """Why Miles can export no gauge for `key` (None when it can): it replaces only / - @."""
    bad = sorted(set(re.sub(r"[a-zA-Z0-9_:]", "", gauge_name(key))))
    if _METRIC_NAME.fullmatch(gauge_name(key)):
        return None
    return f"no gauge: Miles keeps {' '.join(map(repr, bad))} in the name, which Prometheus does not allow"
