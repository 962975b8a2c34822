"""Helpers of the site tests: a strict MkDocs build in a real process, and waiting on a local server."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


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
