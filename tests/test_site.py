"""The MkDocs site: strict build, offline, several profiles, facts in hand-written pages, live reload."""
from __future__ import annotations

import html
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import REPO, snapshot

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def mkdocs_build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"),
                           "-d", str(site)], capture_output=True, text=True, env=ENV)


def second_profile(root: Path) -> None:
    text = (root / "ranges/profiles/lab-gb10.yaml").read_text("utf-8")
    text = (text.replace("id: lab-gb10", "id: lab-gb10-seed2").replace("title: Lab runs on one GB10", "title: Second lab profile")
            .replace("min: 0.35, max: 4.95", "min: 0.45, max: 3.25").replace("- id: lab-notes", "- id: seed2-notes")
            .replace("see: lab-notes", "see: seed2-notes"))
    (root / "ranges/profiles/lab-gb10-seed2.yaml").write_text(text, "utf-8")


def test_strict_build_of_the_manual(repo_copy: Path, tmp_path: Path) -> None:
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
    page = (tmp_path / "site/reference/metrics/index.html").read_text("utf-8")
    assert 'id="m-train-grad_norm"' in page and 'id="s-ref-lab-notes"' in page


class _Loads(HTMLParser):
    """Collect the URLs a page loads by itself (not the links a reader may follow)."""

    LOADING_RELS = {"stylesheet", "icon", "preload", "modulepreload", "preconnect", "dns-prefetch", "manifest"}

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed") and a.get("src"):
            self.urls.append(a["src"] or "")
        if tag == "link" and set((a.get("rel") or "").split()) & self.LOADING_RELS:
            self.urls.append(a.get("href") or "")


def test_site_fetches_nothing_from_the_internet(repo_copy: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    assert mkdocs_build(repo_copy, site).returncode == 0
    remote = re.compile(r"^(?:[a-z]+:)?//", re.I)
    offenders = []
    for file in site.rglob("*.html"):
        parser = _Loads()
        parser.feed(file.read_text("utf-8"))
        offenders += [f"{file.relative_to(site)}: {u}" for u in parser.urls if remote.match(u)]
    for file in site.rglob("*.css"):
        offenders += [f"{file.relative_to(site)}: {u}" for u in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", file.read_text("utf-8"))]
    assert offenders == []
    assert "fonts.googleapis.com" not in (site / "index.html").read_text("utf-8")


def test_a_second_profile_appears_without_template_or_config_change(repo_copy: Path, tmp_path: Path) -> None:
    second_profile(repo_copy)
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    page = (tmp_path / "site/reference/metrics/index.html").read_text("utf-8")
    assert "Second lab profile" in page and "0.45 to 3.25" in page and "0.35 to 4.95" in page
    assert (tmp_path / "site/profiles/lab-gb10-seed2/index.html").exists()
    assert (tmp_path / "site/export/lab-gb10-seed2.rules.yml").exists()
    home = (tmp_path / "site/index.html").read_text("utf-8")
    assert "Second lab profile" in home


def test_hand_written_pages_take_facts_from_the_source(repo_copy: Path, tmp_path: Path) -> None:
    profile = repo_copy / "ranges/profiles/lab-gb10.yaml"
    profile.write_text(profile.read_text("utf-8").replace("prompts_per_step: 32", "prompts_per_step: 64"), "utf-8")
    catalog = repo_copy / "ranges/catalog.yaml"
    catalog.write_text(catalog.read_text("utf-8").replace("url: https://github.com/radixark/miles",
                                                          "url: https://example.org/miles-fork"), "utf-8")
    assert mkdocs_build(repo_copy, tmp_path / "site").returncode == 0
    home = (tmp_path / "site/index.html").read_text("utf-8")
    assert "64 prompts with 8 answers each" in home and "32 prompts" not in home
    assert 'href="https://example.org/miles-fork"' in home
    exports = (tmp_path / "site/exports/index.html").read_text("utf-8")
    assert "<code>window_first</code>" in exports


def test_invalid_source_fails_the_site_build_and_writes_nothing(repo_copy: Path, tmp_path: Path) -> None:
    profile = repo_copy / "ranges/profiles/lab-gb10.yaml"
    profile.write_text(profile.read_text("utf-8").replace("min: 0.35, max: 4.95", "min: 5.35, max: 4.95"), "utf-8")
    before = snapshot(repo_copy)
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode != 0
    assert "ranges/profiles/lab-gb10.yaml:65:7: error: min 5.35 is above max 4.95" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(repo_copy) == before


def test_inert_text_reads_literally_in_the_browser_html(repo_copy: Path, tmp_path: Path) -> None:
    nasty = "a | b <script>alert(1)</script> *x* `y` [x](y) {{ x }}"
    catalog = repo_copy / "ranges/catalog.yaml"
    catalog.write_text(catalog.read_text("utf-8").replace("meaning: the gradient norm", f"meaning: '{nasty}'"), "utf-8")
    assert mkdocs_build(repo_copy, tmp_path / "site").returncode == 0
    page = (tmp_path / "site/reference/metrics/index.html").read_text("utf-8")
    row = re.search(r'<tr>\s*<td><span id="m-train-grad_norm"></span>.*?</tr>', page, re.S)
    assert row is not None
    cells = re.findall(r"<td>(.*?)</td>", row.group(), re.S)
    assert len(cells) == 4
    assert html.unescape(re.sub(r"<[^>]+>", "", cells[1])) == nasty
    assert "<script>alert(1)" not in page


def test_a_stale_schema_fails_check(repo_copy: Path) -> None:
    schema = repo_copy / "docs/schema/profile.schema.json"
    schema.write_text(schema.read_text("utf-8").replace('"Strict"', '"Loose"', 1).replace('"title": "Setup"', '"title": "Old setup"'), "utf-8")
    result = subprocess.run([sys.executable, "-m", "metrics_manual", "check", "--root", str(repo_copy)],
                            capture_output=True, text=True, env=ENV)
    assert result.returncode == 1
    assert "docs/schema/profile.schema.json:" in result.stdout


def test_broken_anchor_fails_the_strict_build(repo_copy: Path, tmp_path: Path) -> None:
    (repo_copy / "docs/extra.md").write_text("# Extra\n\nSee [the norm](reference/metrics.md#m-train-grad_nrom).\n", "utf-8")
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode != 0
    assert "m-train-grad_nrom" in result.stderr


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 - localhost only
        return r.read().decode("utf-8")


def wait_for(predicate, timeout: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        try:
            if predicate():
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout} s")


def test_serve_shows_a_yaml_edit_without_a_rebuild_loop(repo_copy: Path, tmp_path: Path) -> None:
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-a", f"127.0.0.1:{port}", "-f",
                             str(repo_copy / "mkdocs.yml")], stdout=log, stderr=subprocess.STDOUT, env=ENV,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/reference/metrics/"
    try:
        wait_for(lambda: "0.35 to 4.95" in fetch(url), 60)
        profile = repo_copy / "ranges/profiles/lab-gb10.yaml"
        profile.write_text(profile.read_text("utf-8").replace("min: 0.35, max: 4.95", "min: 0.35, max: 5.55"), "utf-8")
        took = wait_for(lambda: "0.35 to 5.55" in fetch(url), 30)
        print(f"edit shown after {took:.2f} s")
        time.sleep(3)
        builds = (tmp_path / "serve.log").read_text("utf-8").count("Building documentation")
        time.sleep(3)
        assert (tmp_path / "serve.log").read_text("utf-8").count("Building documentation") == builds, "rebuild loop"
        # One initial build, one for the edit, at most one more for the pages the edit regenerated.
        assert builds <= 3, (tmp_path / "serve.log").read_text("utf-8")
        assert "0.35 to 5.55" in (repo_copy / "docs/reference/metrics.md").read_text("utf-8")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
        log.close()
