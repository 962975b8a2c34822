"""A manual of many profiles, as its reader sees it in Debian's headless Chromium.

The same tiny catalog with 1, 3 and 10 generated profiles (site_helpers.many_profiles): a link to an
entry shows its meaning and the reader's profile's ranges on a phone and a desktop, whatever the
number of profiles; the reader picks a profile once, the browser remembers it, and a shared link
keeps the profile it was sent with; "Is this value normal?" judges against it; without JavaScript
every profile's ranges show.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from browser_helpers import LANDED, assert_clean, landed_well, open_page, served
from metrics_manual.model.phrase import describe, plain
from metrics_manual.source.load import Manual, load_manual
from site_helpers import HOSTILE_TITLE, many_profiles, many_profiles_catalog, mkdocs_build, site_over

pytestmark = pytest.mark.browser
DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module", params=[1, 3, 10], ids=lambda n: f"{n}-profiles")
def tree(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Manual, str]]:
    """(the manual, the base URL of its built and served site) of a fixture tree of n profiles."""
    root = site_over(tmp_path_factory.mktemp("many") / "manual", many_profiles_catalog(), many_profiles(request.param))
    built = mkdocs_build(root, root / "site")
    assert built.returncode == 0, built.stderr
    with served(root / "site") as base:
        yield load_manual(root), base


@pytest.fixture(scope="module")
def context(browser, tree) -> Iterator[Any]:
    """One browser context a tree (a context's first page compiles Material's scripts): each test's tab in it."""
    context = browser.new_context()
    yield context
    context.close()


@pytest.fixture
def tab(context, tree) -> Iterator[Any]:
    """A tab of its own with nothing remembered: the first profile is the reader's until they pick one."""
    _, base = tree
    page = _recording(context.new_page())
    yield page
    if page.url.startswith(base):
        page.evaluate("() => localStorage.clear()")  # the tabs of a context share it
    assert_clean(page, base)
    page.close()


def _recording(page: Any) -> Any:
    """The page records its requests and its errors, as browser_helpers.open_page's does."""
    page.requests, page.problems = [], []
    page.on("request", lambda r: page.requests.append(r.url))
    page.on("console", lambda m: page.problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: page.problems.append(f"page error: {e}"))
    return page


def _sections(manual: Manual) -> list[tuple[str, list[Any]]]:
    return [(f"reference/metrics/{s.id}/", s.metrics) for s in manual.catalog.sections]


def _first_block(page: Any, anchor: str) -> str | None:
    """The profile whose ranges an entry shows first (None: it shows none)."""
    return page.evaluate(
        """id => { const e = document.getElementById(id).nextElementSibling;
          const fold = e.querySelector('details.mm-others');
          const b = [...e.querySelectorAll('.mm-for')].find(b => !fold || !fold.contains(b));
          return b ? b.dataset.profile : null; }""",
        anchor,
    )


_SIDEWAYS = "() => Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth)"
_FIRST_COLUMN = "() => [...document.querySelectorAll('table.mm-table thead th[data-for]')].map(th => th.dataset.for)"


def test_a_link_to_an_entry_shows_its_meaning_and_the_reader_s_ranges(tab, tree) -> None:
    """At both widths, for the first profile's reader and the last one's: the link's load lands on its
    entry, then each other entry of the page as a link on it leads there."""
    manual, base = tree
    readers = {manual.profiles[0].id, manual.profiles[-1].id}
    for reader in sorted(readers):
        for path, metrics in _sections(manual):
            query = "" if reader == manual.profiles[0].id else f"?profile={reader}"
            tab.set_viewport_size(PHONE)
            tab.goto(f"{base}/{path}{query}#{metrics[0].anchor}")
            # The value checker shows above the entry once it has read the exports: the entry stays put.
            tab.locator("form.mm-check").wait_for(state="visible")
            seen = tab.evaluate(LANDED, metrics[0].anchor)
            landed_well(seen, PHONE, metrics[0].key, first=reader)
            at_end = tab.evaluate("() => scrollY + innerHeight >= document.documentElement.scrollHeight - 1")
            assert at_end or abs(seen["heading"] - seen["header"]) <= 2, (metrics[0].key, seen)
            for viewport in (PHONE, DESKTOP):
                tab.set_viewport_size(viewport)
                for metric in metrics:
                    seen = tab.evaluate(f"id => {{ location.hash = id; return ({LANDED})(id); }}", metric.anchor)
                    landed_well(seen, viewport, metric.key, first=reader)
                # However many profiles, the page never scrolls sideways (the table scrolls in its box),
                # and the table names the reader's profile first.
                assert tab.evaluate(_SIDEWAYS) == 0, viewport
                assert tab.evaluate(_FIRST_COLUMN)[:1] == [reader], viewport


def test_the_reader_picks_once_and_a_shared_link_keeps_its_profile(tab, context, tree) -> None:
    manual, base = tree
    ids = [p.id for p in manual.profiles]
    (first, *_), path = ids, _sections(manual)[0][0]
    anchor = manual.catalog.sections[0].metrics[0].anchor
    tab.goto(f"{base}/{path}#{anchor}")
    if len(ids) == 1:  # nothing to pick: no picker, the address as the link gave it
        assert tab.locator("form.mm-pick").count() == 0 and "?" not in tab.url
        return
    picker = tab.locator("form.mm-pick select")
    assert picker.is_visible() and picker.input_value() == first and _first_block(tab, anchor) == first
    # Each option is the profile's title as typed, text and never markup.
    titles = picker.locator("option").evaluate_all("os => os.map(o => [o.value, o.textContent, o.children.length])")
    assert titles == [[p.id, plain(p.title), 0] for p in manual.profiles]
    assert HOSTILE_TITLE in [t for _, t, _ in titles]
    assert tab.url.endswith(f"?profile={first}#{anchor}")  # the address to share says what the reader sees

    # The reader picks the last profile: it comes first at once, and on every page after.
    mine = ids[-1]
    picker.select_option(mine)
    assert _first_block(tab, anchor) == mine and tab.url.endswith(f"?profile={mine}#{anchor}")
    for other, metrics in _sections(manual)[1:]:
        tab.goto(f"{base}/{other}")
        assert _first_block(tab, metrics[0].anchor) == mine

    # A link sent with another profile shows it, in its tab, and leaves the reader's own choice alone.
    shared = _recording(context.new_page())
    shared.goto(f"{base}/{path}?profile={ids[1]}#{anchor}")
    assert _first_block(shared, anchor) == ids[1] and shared.locator("form.mm-pick select").input_value() == ids[1]
    second, metrics = _sections(manual)[1]
    shared.goto(f"{base}/{second}")
    assert _first_block(shared, metrics[0].anchor) == ids[1]
    # An old address of the map, `reference/metrics/?profile=...#m-...`, keeps the profile on its way.
    shared.goto(f"{base}/reference/metrics/?profile={ids[1]}#{metrics[0].anchor}")
    shared.wait_for_url(f"**/{second}?profile={ids[1]}#{metrics[0].anchor}")
    assert_clean(shared, base)
    shared.close()
    tab.goto(f"{base}/{second}")
    assert _first_block(tab, metrics[0].anchor) == mine
    # An id no profile has is no choice: the reader's own holds.
    tab.goto(f"{base}/{path}?profile=no-such-profile#{anchor}")
    assert _first_block(tab, anchor) == mine and tab.url.endswith(f"?profile={mine}#{anchor}")


def test_the_value_checker_judges_against_the_reader_s_profile(tab, tree) -> None:
    """Profile i's reward band is i/10 to i/10 + 0.05: a value in the last profile's band is inside it
    and outside every other."""
    manual, base = tree
    mine = manual.profiles[-1]
    section = next(s for s in manual.catalog.sections if any(m.key == "rollout/raw_reward" for m in s.metrics))
    tab.goto(f"{base}/reference/metrics/{section.id}/?profile={mine.id}")
    tab.locator("form.mm-check").wait_for(state="visible")
    tab.select_option("form.mm-check select[name=metric]", "rollout/raw_reward")
    band = mine.expectations["rollout/raw_reward"][0]
    tab.fill("form.mm-check input[name=value]", str(band.min + 0.01))
    verdicts = tab.locator(".mm-check-out > ul > li").evaluate_all(
        "ls => ls.map(l => [l.dataset.profile, l.dataset.verdict, l.querySelector('.mm-range').textContent])"
    )
    assert verdicts == [[mine.id, "inside", describe(band, None)]]
    others = tab.locator(".mm-check-out details.mm-check-others")
    if len(manual.profiles) == 1:
        assert others.count() == 0
        return
    assert not others.evaluate("d => d.open")
    folded = others.locator("li").evaluate_all("ls => ls.map(l => [l.dataset.profile, l.dataset.verdict])")
    assert folded == [[p.id, "outside"] for p in manual.profiles[:-1]]
    # The reader picks another profile: the box judges against it at once.
    tab.select_option("form.mm-pick select", manual.profiles[0].id)
    first = tab.locator(".mm-check-out > ul > li").evaluate_all(
        "ls => ls.map(l => [l.dataset.profile, l.dataset.verdict])"
    )
    assert first == [[manual.profiles[0].id, "outside"]]


def test_without_javascript_every_profile_s_ranges_show(browser, tree) -> None:
    manual, base = tree
    context, page = open_page(browser, viewport=PHONE, java_script_enabled=False)
    for path, metrics in _sections(manual):
        page.goto(f"{base}/{path}")
        assert page.locator("form.mm-pick").count() == (len(manual.profiles) > 1)
        assert not page.locator("form.mm-pick").is_visible()  # nothing to pick without the script
        shown = page.evaluate(
            """() => [...document.querySelectorAll('h3.mm-key')].map(h => [h.id,
                 [...h.nextElementSibling.querySelectorAll('.mm-for .mm-lines > li')].map(li => [
                   li.querySelector('.mm-range').textContent, li.querySelector('.mm-profile').textContent,
                   li.querySelector('.mm-range').checkVisibility()])])"""
        )
        assert dict(shown) == {m.anchor: [line for p in manual.profiles for line in _lines(m, p)] for m in metrics}, (
            path
        )
    assert_clean(page, base)
    context.close()


def _lines(metric: Any, profile: Any) -> list[list[Any]]:
    """[range, profile title, shown] of each line an entry has for a profile."""
    return [
        [describe(e, metric.unit), plain(profile.title), True] for e in profile.expectations.get(metric.key, [])
    ] or [["no range", plain(profile.title), True]]
