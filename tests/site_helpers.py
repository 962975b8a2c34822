"""Helpers of the site tests: a strict MkDocs build in a real process, and waiting on a local server."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
REFERENCE_DIR = "docs/reference/metrics/"
REFERENCE_MAP = REFERENCE_DIR + "index.md"


def reference_text(files: Mapping[str, str]) -> str:
    """The reference as one text: each section's page in catalog order, then the map of the metrics."""
    pages = [text for rel, text in files.items() if rel.startswith(REFERENCE_DIR) and rel != REFERENCE_MAP]
    return "\n".join([*pages, files[REFERENCE_MAP]])


def site_over(root: Path, catalog: str, profiles: dict[str, str]) -> Path:
    """The repository's site (mkdocs.yml, hand-written pages, templates) in `root`, over a fixture source
    (`profiles`: id -> text): none of the real manual's generated files, captures or coverage is kept."""
    from conftest import copy_repo

    copy_repo(root)
    for folder in ("ranges", "captures", "docs/reference", "docs/profiles", "docs/export"):
        shutil.rmtree(root / folder, ignore_errors=True)
    (root / "docs/.generated.json").unlink()
    (root / "ranges/profiles").mkdir(parents=True)
    (root / "ranges/catalog.yaml").write_text(catalog, "utf-8")
    for pid, text in profiles.items():
        (root / "ranges/profiles" / f"{pid}.yaml").write_text(text, "utf-8")
    return root


@dataclass(frozen=True)
class Built:
    """What a strict build gave: 0 or 1, and what MkDocs logged (the shape of CompletedProcess)."""

    returncode: int
    stderr: str


def mkdocs_build(root: Path, site: Path) -> Built:
    """`mkdocs build --strict` in this process, as MkDocs' own tests build (a new process costs a
    second of imports). What the user sees of a failed build comes from `mkdocs_build_process`."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("%(levelname)-7s -  %(message)s"))
    logger = logging.getLogger("mkdocs")
    logger.addHandler(handler)
    try:
        with contextlib.redirect_stderr(log):
            build(load_config(str(root / "mkdocs.yml"), site_dir=str(site), strict=True))
        code = 0
    except MkDocsException as e:
        log.write(f"Error: {e}\n")
        code = 1
    finally:
        logger.removeHandler(handler)
    return Built(code, log.getvalue())


def mkdocs_build_process(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` in a real process: what a user sees of a failure (no traceback)."""
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


def built_reference(site: Path) -> str:
    """The built HTML of the reference: each section's page, then the map (reference/metrics/)."""
    folder = site / "reference/metrics"
    pages = sorted(folder.glob("*/index.html"))
    return "\n".join(p.read_text("utf-8") for p in [*pages, folder / "index.html"])
