"""Debian's headless Chromium through Playwright: the flags this closed machine needs, a quiet local server,
a page that records what it requested and what went wrong in it, and what a link to an entry shows."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from metrics_manual.model.schema import metric_anchor

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # Whatever is not on this machine goes to a closed local port and fails at once: a test never waits
    # on the network, and still records the request (the tests assert none left localhost). Routing
    # requests through Playwright instead intercepts every one, local ones too: +70% CPU a page load.
    "--proxy-server=http://127.0.0.1:9",
]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


class WithoutSearch(Quiet):
    """Serves Material's search index with its configuration and no documents. Every page load builds
    the index in a worker, about half of Chromium's time for a page of a fixture tree: a test that does
    not search does not pay for it (the search tests are served the whole index)."""

    def do_GET(self) -> None:
        if not urllib.parse.urlsplit(self.path).path.endswith("/search/search_index.json"):
            return super().do_GET()
        index = json.loads(Path(self.translate_path(self.path)).read_text("utf-8"))
        body = json.dumps({**index, "docs": []}).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextlib.contextmanager
def served(folder: Path, search: bool = False) -> Iterator[str]:
    """The folder on a local HTTP server while the block runs: its base URL. `search`: the pages find
    what a reader types in the search box (otherwise the index is served empty, see WithoutSearch)."""
    handler = Quiet if search else WithoutSearch
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def open_page(browser: Any, **options: Any) -> tuple[Any, Any]:
    """(context, page) with these options; the page records each request's URL and each error it met."""
    context = browser.new_context(**options)
    page = context.new_page()
    page.requests, page.problems = [], []
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    # Anything not on localhost is recorded above; Chromium refuses it (CHROMIUM_ARGS).
    return context, page


def assert_clean(page: Any, base: str) -> None:
    """What every browser test asserts at its end: nothing left localhost, nothing went wrong in the page."""
    outside = [u for u in page.requests if not u.startswith(base) and not u.startswith("data:")]
    assert outside == [], f"requests left localhost: {outside}"
    assert page.problems == []


# Where a landing left the target entry, read in one call: the header's bottom, the heading's top, the
# bottom of the meaning and of the last line the reader must see (the warnings, and each range of the
# profile shown first), that profile, whether the other profiles are folded and how many of their ranges
# show, and the entries of the page with a background.
LANDED = """id => {
  const box = sel => document.querySelector(sel).getBoundingClientRect();
  const entry = document.querySelector(`h3#${CSS.escape(id)} + .mm-entry`);
  const fold = entry.querySelector('details.mm-others');
  const first = [...entry.querySelectorAll('.mm-for')].find(b => !fold || !fold.contains(b));
  const said = [entry.querySelector('.mm-meaning'), ...entry.querySelectorAll(':scope > ul > li > .mm-not-logged'),
    ...entry.querySelectorAll(':scope > ul > li > .mm-lab-vs-code'), ...(first ? first.querySelectorAll('.mm-lines > li') : [])];
  const clear = bg => bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent';
  return {
    header: box('.md-header').bottom,
    heading: box(`h3#${CSS.escape(id)}`).top,
    meaning: entry.querySelector('.mm-meaning').getBoundingClientRect().bottom,
    last: Math.max(...said.map(el => el.getBoundingClientRect().bottom)),
    first: first ? first.dataset.profile : null,
    folded: fold ? !fold.open : null,
    others_shown: fold ? [...fold.querySelectorAll('.mm-range')].filter(r => r.checkVisibility()).length : 0,
    highlighted: [...document.querySelectorAll('h3[id] + .mm-entry')]
      .filter(e => !clear(getComputedStyle(e).backgroundColor)).map(e => e.previousElementSibling.id),
  };
}"""


def landed_well(seen: dict[str, Any], viewport: dict[str, int], key: str, first: str | None = None) -> None:
    """Below the fixed header, the meaning, the warnings and every range of the profile shown first on
    screen, only the target highlighted; with `first`, that profile is the one shown first (on a key
    with ranges) and the others are folded."""
    assert seen["heading"] >= seen["header"] - 1, (key, viewport)
    assert seen["meaning"] <= viewport["height"], (key, viewport)
    assert seen["last"] <= viewport["height"], (key, viewport, seen)
    assert seen["highlighted"] == [metric_anchor(key)], (key, "only the target is highlighted")
    if first is not None and seen["first"] is not None:
        assert seen["first"] == first, (key, seen["first"])
        assert seen["folded"] in (True, None) and seen["others_shown"] == 0, (key, seen)
