"""Helpers of the site tests: a strict MkDocs build in a real process, and waiting on a local server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
REFERENCE_DIR = "docs/reference/metrics/"
REFERENCE_MAP = REFERENCE_DIR + "index.md"


def reference_text(files: Mapping[str, str]) -> str:
    """The reference as one text: each section's page in catalog order, then the map of the metrics."""
    pages = [text for rel, text in files.items() if rel.startswith(REFERENCE_DIR) and rel != REFERENCE_MAP]
    return "\n".join([*pages, files[REFERENCE_MAP]])


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"), "-d", str(site)],
        capture_output=True,
        text=True,
        env=ENV,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - localhost only
        return r.read().decode("utf-8")


def wait_for(predicate: Callable[[], object], timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if predicate():
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


def section_of(manual: Any, key: str) -> str:
    """The id of the catalog section that holds a metric (its page: reference/metrics/<id>/)."""
    return next(s.id for s in manual.catalog.sections for m in s.metrics if m.key == key)


def built_reference(site: Path) -> str:
    """The built HTML of the reference: each section's page, then the map (reference/metrics/)."""
    folder = site / "reference/metrics"
    pages = sorted(folder.glob("*/index.html"))
    return "\n".join(p.read_text("utf-8") for p in [*pages, folder / "index.html"])
