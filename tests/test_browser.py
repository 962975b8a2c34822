"""What a reader sees, in Debian's headless Chromium driven by Playwright."""
from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from conftest import require_tool
from metrics_manual.phrase import describe_all, plain
from metrics_manual.load import load_manual
from test_site import mkdocs_build

pytestmark = pytest.mark.browser
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    from conftest import copy_repo

    root = copy_repo(tmp_path_factory.mktemp("b") / "manual")
    out = root / "site"
    result = mkdocs_build(root, out)
    assert result.returncode == 0, result.stderr
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    chromium = require_tool("/usr/bin/chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover
        pytest.fail("playwright is not installed (make test installs it)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, site):
    _, base = site
    context = browser.new_context()
    page = context.new_page()
    page.requests, page.problems = [], []
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    # Anything not on localhost is recorded above and refused here, so the test never waits on it.
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(base) else route.abort())
    yield page
    outside = [u for u in page.requests if not u.startswith(base) and not u.startswith("data:")]
    assert outside == [], f"requests left localhost: {outside}"
    assert page.problems == []
    context.close()


def test_metrics_page_shows_every_metric_with_its_range(page, site) -> None:
    root, base = site
    manual = load_manual(root)
    page.goto(f"{base}/reference/metrics/")
    profile = manual.profiles[0]
    for key, metric in manual.metrics.items():
        row = page.locator(f"tr:has(#{metric.anchor})")
        assert row.count() == 1, key
        cells = row.locator("td").all_inner_texts()
        assert cells[0].startswith(metric.label if metric.members else key)
        assert cells[1] == metric.meaning
        expected = describe_all(profile.expectations.get(key, []), metric.unit, plain)
        assert cells[3] == expected, key
        assert row.is_visible()


def test_search_finds_grad_norm(page, site) -> None:
    _, base = site
    page.goto(f"{base}/")
    page.locator("input.md-search__input").click()
    page.keyboard.type("grad_norm")  # typed, as a reader does: search listens to key events
    result = page.locator(".md-search-result__item").first
    result.wait_for(timeout=15000)
    assert "grad_norm" in page.locator(".md-search-result").inner_text()


def test_lab_notes_link_lands_on_its_section(page, site) -> None:
    _, base = site
    page.goto(f"{base}/reference/metrics/")
    page.locator(".md-content a[href='#s-ref-lab-notes']").first.click()
    page.wait_for_function("location.hash === '#s-ref-lab-notes'")
    heading = page.locator("#s-ref-lab-notes")
    assert heading.inner_text().startswith("Lab notes")
    box = heading.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"] / 2
    page.screenshot(path=str(Path(site[0]) / "lab-notes.png"))


def test_profile_page_links_downloads_that_exist(page, site) -> None:
    _, base = site
    page.goto(f"{base}/profiles/lab-gb10/")
    links = page.locator(".md-content a[href*='export/']").evaluate_all("els => els.map(e => e.href)")
    assert len(links) == 5
    for href in links:
        response = page.request.get(href)
        assert response.status == 200, href
