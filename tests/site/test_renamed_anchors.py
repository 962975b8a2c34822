"""Links made before Miles renamed a key keep working: an alert rule exported then (its manual_url
to `#m-<old key>`) resolves on the site built after the rename, on the entry of the new key, and
the site's search index finds the old name there. On a fixture tree, built strictly."""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest
import yaml

from conftest import TINY_CATALOG, TINY_PROFILE, run_cli
from metrics_manual.build import site_url
from metrics_manual.model.schema import metric_anchor
from site_helpers import mkdocs_build, site_over

OLD, NEW = "train/grad_l2", "train/grad_norm"
RENAMED_CATALOG = TINY_CATALOG.replace(
    "        meaning: the gradient norm\n",
    f"        meaning: the gradient norm\n        renamed_from: [{{key: {OLD}, commit: 0123abcd}}]\n",
)
assert RENAMED_CATALOG != TINY_CATALOG and f"key: {NEW}\n" in TINY_CATALOG


def fixture_tree(root: Path, catalog: str, profile: str) -> Path:
    """The repository's site over a fixture source, published under an address."""
    site_over(root, catalog, {"tiny": profile})
    # Published under an address (SITE_URL unset, the exports carry no links to follow).
    config = (root / "mkdocs.yml").read_text("utf-8")
    assert "site_url: !ENV SITE_URL\n" in config
    (root / "mkdocs.yml").write_text(config.replace("site_url: !ENV SITE_URL\n", "site_url: https://manual.example/\n"))
    return root


def manual_urls(rules_yaml: str, key: str) -> list[str]:
    rules = yaml.safe_load(rules_yaml)["groups"][0]["rules"]
    return [r["annotations"]["manual_url"] for r in rules if r["labels"]["metric"] == key]


def entry_html(page: str, anchor: str) -> str:
    """The HTML of one entry: from its heading to the next heading."""
    heading = re.search(rf'<h3\b[^>]*\bid="{re.escape(anchor)}"', page)
    assert heading, f"no heading {anchor}"
    start = heading.start()
    end = page.find("<h3 ", start + 1)
    return page[start : end if end >= 0 else len(page)]


@pytest.fixture(scope="module")
def before_and_after(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path, str]:
    """(manual_url of the alert rules exported before the rename, the site built after it, its site_url)."""
    base = tmp_path_factory.mktemp("renamed")
    before = fixture_tree(base / "before", TINY_CATALOG.replace(NEW, OLD), TINY_PROFILE.replace(NEW, OLD))
    exported = run_cli("export", "--profile", "tiny", "--format", "prometheus", cwd=before)
    assert exported.returncode == 0, exported.stderr
    urls = manual_urls(exported.stdout, OLD)
    assert urls, "the fixture profile has an alert rule on the key"

    after = fixture_tree(base / "after", RENAMED_CATALOG, TINY_PROFILE)
    built = run_cli("build", cwd=after)
    assert built.returncode == 0, built.stderr
    assert manual_urls(run_cli("export", "--profile", "tiny", "--format", "prometheus", cwd=after).stdout, NEW)
    result = mkdocs_build(after, after / "site")
    assert result.returncode == 0, result.stderr
    url = site_url(after)
    assert url is not None
    return urls, after / "site", url


def page_of(site: Path, base: str, url: str) -> tuple[str, str]:
    """(the built page's HTML, the fragment) of a URL under site_url."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path.removeprefix(urllib.parse.urlsplit(base).path.rstrip("/") + "/").removeprefix("/")
    page_file = site / path / "index.html"
    assert page_file.is_file(), f"{url}: the page {page_file} was not built"
    return page_file.read_text("utf-8"), parts.fragment


def land(site: Path, base: str, url: str) -> None:
    """`url` lands on the new key's entry: its anchor is inside that entry, or (the map of the metrics,
    the address from before each section had a page) it is a link that does."""
    page, fragment = page_of(site, base, url)
    found = re.findall(rf'<(\w+)\b([^>]*)\bid="{re.escape(fragment)}"([^>]*)>', page)
    assert len(found) == 1, f"{url}: {len(found)} elements with the id"
    tag, *attrs = found[0]
    if tag == "a" and "mm-map-link" in " ".join(attrs):
        href = re.search(r'href="([^"]+)"', " ".join(attrs))
        assert href, f"{url}: the map's link has no href"
        target = urllib.parse.urljoin(url, href.group(1))
        assert urllib.parse.urlsplit(target).fragment == fragment, target
        return land(site, base, target)
    entry = entry_html(page, metric_anchor(NEW))
    assert f'id="{fragment}"' in entry, f"{url}: the old anchor is not in {NEW}'s entry"
    assert f"<code>{OLD}</code>" in entry


def test_an_alert_rule_exported_before_the_rename_lands_on_the_new_entry(
    before_and_after: tuple[list[str], Path, str],
) -> None:
    urls, site, base = before_and_after
    for url in urls:
        assert url.startswith(base.rstrip("/") + "/") and urllib.parse.urlsplit(url).fragment == metric_anchor(OLD)
        land(site, base, url)


def test_a_link_from_before_the_split_reference_lands_on_the_new_entry(
    before_and_after: tuple[list[str], Path, str],
) -> None:
    # Rules exported when the reference was one page linked reference/metrics/#m-<key>.
    _, site, base = before_and_after
    land(site, base, f"{base.rstrip('/')}/reference/metrics/#{metric_anchor(OLD)}")


def test_search_finds_the_old_name_on_the_new_entry(before_and_after: tuple[list[str], Path, str]) -> None:
    _, site, _ = before_and_after
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    holding = [d["location"] for d in index["docs"] if OLD in d.get("text", "")]
    assert holding, "the old key is in no searchable text"
    assert all(loc.endswith(f"#{metric_anchor(NEW)}") for loc in holding), holding
