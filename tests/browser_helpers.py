"""Debian's headless Chromium through Playwright: the flags this closed machine needs, and a quiet local server."""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def outside(base: str) -> re.Pattern[str]:
    """Every address but the local site's. Routed by this pattern, Chromium refuses what is not local
    and never waits on Python for what is: routing every request through a Python handler costs a
    round trip each, 20 or more a page."""
    return re.compile(r"^(?!" + re.escape(base) + r"(?:[/?#]|$))")


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """The folder on a local HTTP server while the block runs: its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
