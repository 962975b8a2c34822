"""The MkDocs site: strict build, offline, several profiles, facts in hand-written pages, live reload."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from conftest import REAL_TREE, REPO_ITSELF, TINY_CATALOG, TINY_PROFILE, copy_repo, run_build, snapshot
from metrics_manual.model.phrase import describe
from metrics_manual.source.load import load_manual
from site_helpers import ENV, Built, built_reference, mkdocs_build, mkdocs_build_process, site_over

# The real manual is built once, for validity (a strict build, nothing fetched from the internet). How
# the site behaves when its source changes is read on the repository's site over a fixture source
# (`tree`); the edits find what they change (the first profile, its first band, the first metric).


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return site_over(tmp_path / "manual", TINY_CATALOG, {"tiny": TINY_PROFILE})


def first_profile(root: Path) -> Path:
    return sorted((root / "ranges/profiles").glob("*.yaml"))[0]


def first_band(data: dict) -> tuple[str, dict]:
    """The first band with both bounds of a loaded profile: (metric key, the band)."""
    for key, exps in data.get("expectations", {}).items():
        for e in exps:
            if e.get("kind") == "band" and e.get("min") is not None and e.get("max") is not None:
                return key, e
    raise AssertionError("these tests edit a band with min and max; the first profile has none")


def second_profile(root: Path) -> tuple[str, str, str]:
    """A copy of the first profile with a new id, title, note ids and first band: (title, old phrase, new phrase)."""
    data = yaml.safe_load(first_profile(root).read_text("utf-8"))
    key, band = first_band(data)
    manual = load_manual(root)
    unit = manual.metrics[key].unit
    old = describe(
        next(e for e in manual.profile(data["id"]).expectations[key] if getattr(e, "min", None) == band["min"]), unit
    )
    band.update(min=band["min"] - 0.125, max=band["max"] + 1.5)
    data["id"] += "-seed2"
    data["title"] = "Second lab profile"
    for note in data.get("notes", []):
        note["id"] += "-seed2"
    for note in data.get("section_notes", {}).values():
        if note.get("see"):
            note["see"] += "-seed2"
    (root / "ranges/profiles" / f"{data['id']}.yaml").write_text(
        yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "utf-8"
    )
    manual = load_manual(root)
    new = describe(
        next(e for e in manual.profile(data["id"]).expectations[key] if getattr(e, "min", None) == band["min"]), unit
    )
    return data["title"], old, new


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Built]:
    """The real manual as it is, built once for the tests that only read it: (its root, the build)."""
    root = copy_repo(tmp_path_factory.mktemp("built") / "manual")
    return root, mkdocs_build(root, root / "site")


@pytest.mark.slow
@REAL_TREE
@REPO_ITSELF
def test_strict_build_of_the_manual(built: tuple[Path, Built]) -> None:
    root, result = built
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
    page = built_reference(root / "site")
    manual = load_manual(root)
    for metric in manual.metrics.values():
        assert f'<h3 class="mm-key" id="{metric.anchor}">' in page, metric.key
    for p in manual.profiles:
        for note in p.notes:
            assert f'id="{note.anchor}"' in page


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


@pytest.mark.slow
@REAL_TREE
@REPO_ITSELF
def test_site_fetches_nothing_from_the_internet(built: tuple[Path, Built]) -> None:
    root, result = built
    assert result.returncode == 0, result.stderr
    site = root / "site"
    remote = re.compile(r"^(?:[a-z]+:)?//", re.I)
    offenders = []
    for file in site.rglob("*.html"):
        parser = _Loads()
        parser.feed(file.read_text("utf-8"))
        offenders += [f"{file.relative_to(site)}: {u}" for u in parser.urls if remote.match(u)]
    for file in site.rglob("*.css"):
        offenders += [
            f"{file.relative_to(site)}: {u}"
            for u in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)", file.read_text("utf-8"))
        ]
    assert offenders == []
    assert "fonts.googleapis.com" not in (site / "index.html").read_text("utf-8")


@pytest.mark.slow
def test_a_second_profile_appears_without_template_or_config_change(tree: Path, tmp_path: Path) -> None:
    title, old, new = second_profile(tree)
    result = mkdocs_build(tree, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    page = html.unescape(built_reference(tmp_path / "site"))
    assert title in page and new in page and old in page
    new_id = sorted(p.stem for p in (tree / "ranges/profiles").glob("*-seed2.yaml"))[0]
    assert (tmp_path / f"site/profiles/{new_id}/index.html").exists()
    assert (tmp_path / f"site/export/{new_id}.rules.yml").exists()
    home = (tmp_path / "site/index.html").read_text("utf-8")
    assert title in home


@pytest.mark.slow
def test_hand_written_pages_take_facts_from_the_source(tree: Path, tmp_path: Path) -> None:
    profile = first_profile(tree)
    text = profile.read_text("utf-8")
    prompts = int(re.search(r"prompts_per_step: (\d+)", text).group(1)) + 7
    profile.write_text(re.sub(r"prompts_per_step: \d+", f"prompts_per_step: {prompts}", text), "utf-8")
    catalog = tree / "ranges/catalog.yaml"
    text = catalog.read_text("utf-8")
    assert "url: https://example.org/miles," in text
    catalog.write_text(text.replace("url: https://example.org/miles,", "url: https://example.org/miles-fork,"), "utf-8")
    assert mkdocs_build(tree, tmp_path / "site").returncode == 0
    home = (tmp_path / "site/index.html").read_text("utf-8")
    assert f"{prompts} prompts with" in home
    assert 'href="https://example.org/miles-fork"' in home
    exports = (tmp_path / "site/exports/index.html").read_text("utf-8")
    assert "<code>window_first</code>" in exports
    # The home page lists every key of the catalog, each linked to its entry.
    manual = load_manual(tree)
    for section in manual.catalog.sections:
        for metric in section.metrics:
            link = f'href="reference/metrics/{section.id}/#{metric.anchor}"><code>{metric.key}</code></a>'
            assert link in home, metric.key


@pytest.mark.slow
def test_invalid_source_fails_the_site_build_and_writes_nothing(tree: Path, tmp_path: Path) -> None:
    path = first_profile(tree)
    data = yaml.safe_load(path.read_text("utf-8"))
    _, band = first_band(data)
    low = band["max"] + 1
    band["min"] = low
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    before = snapshot(tree)
    result = mkdocs_build_process(tree, tmp_path / "site")
    assert result.returncode != 0
    rel = path.relative_to(tree).as_posix()
    assert re.search(rf"{re.escape(rel)}:\d+:\d+: error: min {re.escape(str(low))} is above max", result.stderr), (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    assert snapshot(tree) == before


@pytest.mark.slow
def test_inert_text_reads_literally_in_the_browser_html(tree: Path, tmp_path: Path) -> None:
    nasty = "a | b <script>alert(1)</script> *x* `y` [x](y) {{ x }}"
    catalog = tree / "ranges/catalog.yaml"
    text = catalog.read_text("utf-8")
    first = re.search(r"(?m)^(\s+)meaning: (.*)$", text)
    catalog.write_text(text[: first.start()] + f"{first.group(1)}meaning: '{nasty}'" + text[first.end() :], "utf-8")
    metric = next(m for m in load_manual(tree).metrics.values() if m.meaning == nasty)
    assert mkdocs_build(tree, tmp_path / "site").returncode == 0
    page = built_reference(tmp_path / "site")
    body = page.split(f'id="{metric.anchor}"', 1)[1].split("<h", 1)[0]
    meaning = re.search(r'<span class="mm-meaning">(.*?)</span>', body, re.S)
    assert meaning is not None
    assert html.unescape(re.sub(r"<[^>]+>", "", meaning.group(1))) == nasty + "."
    assert "<script>alert(1)" not in page


def test_a_stale_schema_fails_check(tree: Path) -> None:
    run_build(tree)
    schema = tree / "docs/schema/profile.schema.json"
    schema.write_text(
        schema.read_text("utf-8").replace('"Strict"', '"Loose"', 1).replace('"title": "Setup"', '"title": "Old setup"'),
        "utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "metrics_manual", "check", "--root", str(tree)],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert result.returncode == 1
    assert "docs/schema/profile.schema.json:" in result.stdout


@pytest.mark.slow
def test_broken_anchor_fails_the_strict_build(tree: Path, tmp_path: Path) -> None:
    section = load_manual(tree).catalog.sections[0]
    anchor = section.metrics[0].anchor + "-typo"
    link = f"reference/metrics/{section.id}.md#{anchor}"
    (tree / "docs/extra.md").write_text(f"# Extra\n\nSee [the norm]({link}).\n", "utf-8")
    result = mkdocs_build(tree, tmp_path / "site")
    assert result.returncode != 0
    assert anchor in result.stderr
