"""Helpers of the site tests: a strict MkDocs build in a real process, waiting on a local server, and
fixture trees of many profiles."""

from __future__ import annotations

import contextlib
import io
import json
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


# A title that HTML, Markdown and Jinja would each read as syntax: shown as typed, in a picker option too.
HOSTILE_TITLE = "Team 2: <b>MoE</b> & *sparse* | {{ x }} `y`"


def many_profiles_catalog() -> str:
    """The tiny catalog with an entry as full as the real manual's: a meaning of three lines on a
    phone, the lab's words against the code's, a code origin with its evidence line."""
    from conftest import TINY_CATALOG

    return TINY_CATALOG.replace(
        "        meaning: the gradient norm\n",
        "        meaning: the gradient norm, the global L2 norm of the actor's gradients as the optimizer returns it, taken before the\n"
        "          step clips them; 0 when the optimizer is off\n"
        "        lab_vs_code:\n"
        "          - lab: the gradient norm\n"
        "            code: the norm of the whole model's gradient before clipping, summed over every parallel rank\n"
        "        origin:\n"
        "          path: pkg/backends/training_utils/model_utils.py\n"
        "          symbol: train_one_step\n"
        "          line: 624\n"
        "          evidence: 'update_successful, grad_norm, num_zeros_in_grad = optimizer.step()'\n"
        "          computed: the L2 norm\n"
        "          logged: every step\n",
    )


def many_profiles(n: int) -> dict[str, str]:
    """id -> text of `n` profiles of the tiny catalog, each with the ranges a derived profile has (a
    trending band with three source tags, a median, a band and a window, an exact value, presence),
    its numbers its own: profile i's reward band is i/10 to i/10 + 0.05, so a value lies inside one
    profile's band only. Every third profile has no range of the answer length; the second's title
    is HOSTILE_TITLE. Made here rather than written `n` times."""
    from conftest import TINY_PROFILE

    head = TINY_PROFILE.split("sources:")[0]
    out = {}
    for i in range(1, n + 1):
        pid = f"team-{i:02d}"
        title = HOSTILE_TITLE if i == 2 else f"Team {i}: Qwen3-8B on MATH, {i} H100"
        seeds = "".join(
            f"  seed-{k}: {{kind: capture, path: cap/{pid}/seed-{k}.json, keys: [seed-{k}]}}\n" for k in (1, 2, 3)
        )
        lengths = (
            "" if i % 3 == 0 else f"  rollout/response_lengths:\n    - {{kind: median, value: {100 * i}, steps: 10}}\n"
        )
        out[pid] = (
            head.replace("id: tiny", f"id: {pid}").replace("title: Tiny runs", f"title: {json.dumps(title)}")
            + "sources:\n"
            + seeds
            + "expectations:\n"
            + f"  rollout/raw_reward:\n    - {{kind: band, min: {i / 10}, max: {i / 10 + 0.05:.2f}, steps: 10, sources: [seed-1, seed-2, seed-3]}}\n"
            + lengths
            + f"  train/grad_norm:\n    - {{kind: band, min: {0.25 * i}, max: {4.5 * i}, sources: [seed-1, seed-2, seed-3]}}\n"
            + f"    - {{kind: band, min: {i}, max: {3 * i}, window: {{first: 2}}, sources: [seed-1]}}\n"
            + "  train/pg_clipfrac:\n    - {kind: exact, value: 0, at: every_step}\n"
            + "  train/weight/*:\n    - {kind: presence}\n"
        )
    return out
