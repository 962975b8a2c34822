"""What a reader sees, in Debian's headless Chromium driven by Playwright.

One site: the repository's pages over a fixture source of three profiles (the real manual's data
is held for validity, agreement and a strict build elsewhere, never read here, so a team that edits
its ranges keeps CI green). Desktop is 1400 px wide, a phone 390 x 844.
"""

from __future__ import annotations

import hashlib
import html
import itertools
import os
import re
import urllib.parse
import urllib.request
from collections.abc import Iterator
from functools import partial
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from browser_helpers import LANDED, assert_clean, landed_well, open_page, served
from conftest import TINY_CATALOG, TINY_PROFILE
from metrics_manual.exports.names import FILE_FORMATS
from metrics_manual.model.phrase import describe, plain
from metrics_manual.model.schema import metric_anchor
from metrics_manual.runs.capture import reference_text
from metrics_manual.source.load import Manual, load_manual
from site_helpers import mkdocs_build, site_over

pytestmark = pytest.mark.browser
DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}

# The fixture: the tiny catalog with code origins (one with evidence, the lab's words against the code's, a
# long evidence line; one without evidence), a renamed key, a key not logged at the commit, and two profiles
# that range the same metric differently; and two keys of the same words, one holding `rollout_kl` as typed.
TWO_CATALOG = (
    TINY_CATALOG.replace(
        "        meaning: the gradient norm\n",
        "        meaning: the gradient norm\n"
        "        lab_vs_code:\n"
        "          - lab: the gradient norm\n"
        "            code: the norm of the whole model's gradient before clipping, summed over every parallel rank\n"
        "        origin:\n"
        "          path: pkg/backends/training_utils/model_utils.py\n"
        "          symbol: Trainer.train_one_step_of_the_model\n"
        "          line: 1234\n"
        "          evidence: 'grad_norm = self.optimizer_of_the_model.step_and_return_the_gradient_norm(scale=1.0)'\n"
        "          computed: the L2 norm\n"
        "          logged: every step\n"
        "          named_at: {path: pkg/log.py, symbol: log_step, line: 7, evidence: 'out[\"train/grad_norm\"] = g'}\n",
    )
    .replace(
        "        meaning: the share of clipped tokens\n",
        "        meaning: the share of clipped tokens\n"
        "        origin: {path: pkg/loss.py, symbol: policy_loss, computed: a share, logged: every step}\n"
        "      - key: train/critic_time\n"
        "        meaning: the critic's training time\n"
        "        unit: s\n"
        "        not_logged: the critic's timer runs in a process that never flushes its timers into the tracker\n",
    )
    .replace(
        "        meaning: the mean answer length\n",
        "        meaning: the mean answer length\n        renamed_from: [{key: rollout/answer_tokens, commit: 0123abcd}]\n",
    )
    # Two keys of the same words, one holding `rollout_kl` as typed (search must find it first).
    .replace(
        "  - id: training\n",
        "      - key: rollout/opd_reverse_kl\n        meaning: the reverse KL to the teacher\n  - id: training\n",
    )
    .replace(
        "      - key: train/pg_clipfrac\n",
        "      - key: train/train_rollout_kl\n        meaning: the KL between engine and trainer\n"
        "      - key: train/pg_clipfrac\n",
    )
)
BIG_PROFILE = (
    TINY_PROFILE.replace("id: tiny", "id: big")
    .replace("title: Tiny runs", "title: Big runs")
    .replace("min: 0.25, max: 4.5", "min: 0.125, max: 7.5")
    .replace("tiny-notes", "big-notes")
    .replace("{kind: median, value: 400, steps: 10", "{kind: median, value: 800, steps: 10")
)
# A third profile with every kind of range the checker and the drawings meet: open band, band over N
# steps, window band, median with its own tolerance, exact at one step, presence, a corridor (its
# reference, 0.001 at step 0 to 0.01 at step 9, pinned under captures/).
EVERY_REFERENCE = reference_text({"train/train_rollout_kl": [(s, 0.001 * (s + 1)) for s in range(10)]})
EVERY_PROFILE = (
    TINY_PROFILE.replace("id: tiny", "id: every")
    .replace("title: Tiny runs", "title: Every kind")
    .replace("tiny-notes", "every-notes")
    .replace(
        "sources:\n",
        "sources:\n  reference: {kind: capture, path: captures/every/reference.jsonl, keys: [mean], "
        f"sha256: {hashlib.sha256(EVERY_REFERENCE.encode()).hexdigest()}}}\n",
    )
    .split("expectations:")[0]
    + """expectations:
  rollout/raw_reward:
    - {kind: band, min: 0.5}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 10, tolerance: 0.05}
  train/grad_norm:
    - {kind: band, min: 0.25, max: 4.5, steps: 8}
    - {kind: band, max: 3, window: {first: 2}}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: {step: 0}}
  train/weight/*:
    - {kind: presence}
  train/train_rollout_kl:
    - {kind: corridor, reference: {source: reference}, rel_up: 0.2, abs_floor_down: 0.001}
"""
)


def _fixture_tree(root: Path) -> Path:
    """The repository's site over the fixture's source (no coverage of the real catalog)."""
    site_over(root, TWO_CATALOG, {"tiny": TINY_PROFILE, "big": BIG_PROFILE, "every": EVERY_PROFILE})
    (root / "captures/every").mkdir(parents=True)
    (root / "captures/every/reference.jsonl").write_text(EVERY_REFERENCE, "utf-8")
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    """(project root, base URL, site folder) of the fixture's built and served site (its search index
    served empty: browser_helpers.WithoutSearch)."""
    root = _fixture_tree(tmp_path_factory.mktemp("b") / "manual")
    out = root / "site"
    result = mkdocs_build(root, out)
    assert result.returncode == 0, result.stderr
    with served(out) as base:
        yield root, base, out


@pytest.fixture(scope="module")
def search_base(site) -> Iterator[str]:
    """The base URL of the same site with its whole search index, for the tests that search."""
    with served(site[2], search=True) as base:
        yield base


@pytest.fixture(scope="module")
def manual(site) -> Manual:
    return load_manual(site[0])


def _close(context, page, base: str) -> None:
    assert_clean(page, base)
    context.close()


# One browser context per set of options for the whole module, opened at first use: a new context
# costs more than most tests' page loads (its first load compiles Material's scripts anew). A test
# that leaves state behind takes it away (a permission) or opens a context of its own (the palette).
_TABS: dict[str, tuple[Any, Any]] = {}


@pytest.fixture(scope="module", autouse=True)
def _tabs_closed(browser) -> Iterator[None]:
    yield
    for context, _ in _TABS.values():
        context.close()
    _TABS.clear()


def _tab(browser, viewport: dict[str, int], **options):
    """The module's page with these options at this width, blank, its records of requests and problems
    emptied, and the reader's profile a test picked forgotten. The width is not an option of the
    context: a desktop and a phone tab are one context."""
    key = str(sorted(options.items()))
    if key not in _TABS:
        _TABS[key] = open_page(browser, viewport=viewport, **options)
    _, page = _TABS[key]
    if page.url.startswith("http") and options.get("java_script_enabled", True):
        page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
    page.goto("about:blank")
    page.set_viewport_size(viewport)
    page.emulate_media(color_scheme="light")
    page.requests.clear()
    page.problems.clear()
    return page


@pytest.fixture
def page(browser, site):
    _, base, _ = site
    page = _tab(browser, viewport=DESKTOP)
    yield page
    assert_clean(page, base)


@pytest.fixture
def search_page(browser, search_base):
    """The desktop tab, for a test that searches (on the server of the whole index)."""
    page = _tab(browser, viewport=DESKTOP)
    yield page
    assert_clean(page, search_base)


def lines(manual: Manual, key: str) -> list[tuple[str, str]]:
    """(range phrase, profile title) of every line a metric's entry shows."""
    metric = manual.metrics[key]
    out: list[tuple[str, str]] = []
    if metric.not_logged:  # a key no process logs shows no range line, not even 'no range'
        return out
    for p in manual.profiles:
        exps = p.expectations.get(key, [])
        out += [(describe(e, metric.unit), plain(p.title)) for e in exps] or [("no range", plain(p.title))]
    return out


# --- one entry per metric ----------------------------------------------------------------


def section_pages(manual: Manual) -> list[tuple[str, list]]:
    """Each catalog section's page (reference/metrics/<id>/) with the metrics it holds."""
    return [(f"reference/metrics/{s.id}/", s.metrics) for s in manual.catalog.sections]


# What a section page shows of each entry, read in one call (a call per element costs a round trip
# to the browser each): heading id -> the entries under that id (one, unless an id is repeated).
_ENTRIES = """() => {
  const out = {};
  const text = el => el.textContent.replace(/\\s+/g, ' ').trim();  // a folded profile's text too
  for (const h of document.querySelectorAll('.md-content h3[id]')) {
    const e = h.nextElementSibling;
    if (!e || !e.classList.contains('mm-entry')) continue;
    (out[h.id] = out[h.id] || []).push({
      heading: h.innerText,
      href: h.querySelector('a') ? h.querySelector('a').getAttribute('href') : null,
      meaning: e.querySelector('.mm-meaning') ? e.querySelector('.mm-meaning').innerText : null,
      lines: [...e.querySelectorAll('.mm-for .mm-lines > li')].map(li =>
        [text(li.querySelector('.mm-range')), text(li.querySelector('.mm-profile'))]),
      weights: [...e.querySelectorAll('.mm-for .mm-range')].map(r => Number(getComputedStyle(r).fontWeight)),
      paths: [...e.querySelectorAll('a.mm-path')].map(a => [a.getAttribute('href'), a.innerText]),
      evidence: [...e.querySelectorAll('.mm-evidence')].map(x => [x.innerText, x.querySelector('a') ? x.querySelector('a').getAttribute('href') : null]),
      unverified: e.querySelectorAll('.mm-unverified').length,
      lab_vs_code: [...e.querySelectorAll('.mm-lab-vs-code')].map(x => x.innerText),
      not_logged: e.querySelector('.mm-not-logged') ? e.querySelector('.mm-not-logged').innerText : null,
      drawings: e.querySelectorAll('svg.mm-ranges').length,
      // Each profile's block: its range lines and its drawing (on the axis every profile's shares).
      blocks: [...e.querySelectorAll('.mm-for')].map(b => {
        const svg = b.querySelector('svg.mm-ranges');
        const kinds = sel => svg ? [...svg.querySelectorAll(sel)].map(g => g.dataset.kind) : [];
        return {
          profile: b.dataset.profile,
          lines: [...b.querySelectorAll('.mm-lines > li')].map(li =>
            [text(li.querySelector('.mm-range')), text(li.querySelector('.mm-profile'))]),
          drawings: b.querySelectorAll('svg.mm-ranges').length,
          label: svg ? svg.getAttribute('aria-label') : null,
          title: svg && svg.querySelector(':scope > title') ? svg.querySelector(':scope > title').textContent : null,
          marks: kinds('g.mm-mark'),
          legend: kinds('g.mm-legend'),
          axis: svg ? [svg.dataset.axisMin, svg.dataset.axisMax] : null,
        };
      }),
    });
  }
  return out;
}"""


def unique(found: dict[str, list[dict]]) -> dict[str, dict]:
    """Heading id -> what the page shows of that entry; an id shown twice fails here."""
    assert all(len(v) == 1 for v in found.values()), [k for k, v in found.items() if len(v) > 1]
    return {k: v[0] for k, v in found.items()}


WIDTHS = {"desktop": DESKTOP, "phone": PHONE}


def pages_read(out: Path) -> list[str]:
    """The pages `reads` opens: every page of the site, the hand-written ones too."""
    return [
        file.parent.relative_to(out).as_posix() + "/" if file.parent != out else ""
        for file in sorted(out.rglob("index.html"))
    ]


@pytest.fixture(scope="module")
def reads(browser, site, manual) -> dict[str, dict[str, dict]]:
    """Every page read once at each width: width -> page -> what `_READ` found; and "landed" -> key ->
    what `LANDED` found when a link on its section's page led to the entry at the phone's width (every
    entry). A page load is the dear part of a browser test (about 0.4 s of Chromium's
    time), so the tests below assert on one read of each page: loaded at one width, then laid out anew at
    the other (CSS decides the layout; the pages alternate which width they load at)."""
    _, base, folder = site
    out: dict[str, dict[str, dict]] = {width: {} for width in WIDTHS} | {"landed": {}}
    page = _tab(browser, viewport=DESKTOP)
    landings = dict(section_pages(manual))
    for path in pages_read(folder):
        page.goto(f"{base}/{path}")
        # The width it loaded at first, then the other: the next page loads at the width this one ends at.
        for width, viewport in sorted(WIDTHS.items(), key=lambda item: item[1] != page.viewport_size):
            _lay_out(page, viewport)
            out[width][path] = page.evaluate(_READ, width == "desktop")
        if landings.get(path):
            _lay_out(page, PHONE)  # where entries are tallest
            for metric in landings[path]:
                # As a link on the page does: setting the hash scrolls to the entry at once (a same-page navigation).
                out["landed"][metric.key] = page.evaluate(
                    f"id => {{ location.hash = id; return ({LANDED})(id); }}", metric.anchor
                )
    assert_clean(page, base)
    return out


def _lay_out(page, viewport: dict[str, int]) -> None:
    if page.viewport_size != viewport:
        page.set_viewport_size(viewport)
        page.evaluate(_TWO_FRAMES)  # the page's own resize handlers run before the read


def test_every_metric_has_an_entry_with_its_meaning_and_ranges(reads, manual) -> None:
    for path, metrics in section_pages(manual):
        shown = unique(reads["desktop"][path]["entries"])
        for metric in metrics:
            _entry_says_its_meaning_and_ranges(shown, manual, metric.key, metric)


def _entry_says_its_meaning_and_ranges(shown: dict[str, dict], manual: Manual, key: str, metric) -> None:
    assert metric.anchor in shown, key
    entry = shown[metric.anchor]
    assert entry["heading"].startswith(key)
    # The key is a permalink to its own entry.
    assert entry["href"] == f"#{metric.anchor}"
    assert plain(metric.meaning) in entry["meaning"]
    assert [tuple(line) for line in entry["lines"]] == lines(manual, key), key
    # A range is in bold; presence ("logged in every step") and "no range" are not ranges.
    for (text, _), weight in zip(entry["lines"], entry["weights"], strict=True):
        assert (weight >= 600) == (text not in ("logged in every step", "no range")), (key, text)


# lunr's English stop words: search drops them from a query, so a key part such as `tis` (train/tis)
# or `all` cannot be searched for (a known limit); queries holding one are left out below.
LUNR_STOP_WORDS = frozenset(
    """a able about across after all almost also am among an and any are as at be because been but by
can cannot could dear did do does either else ever every for from get got had has have he her hers him his how however
i if in into is it its just least let like likely may me might most must my neither no nor not of off often on only or
other our own rather said say says she should since so some than that the their them then there these they this tis
to too twas us wants was we were what when where which while who whom why will with would yet you your""".split()
)


def _first_result(page, query: str) -> tuple[str, str]:
    """Type a query into the site's search, as a reader does: (href, text) of the first result's entry."""
    box = page.locator("input.md-search__input")
    box.click()
    box.fill(query)
    box.press("End")  # search reads the box on a key's release: one search, not one per letter typed
    page.wait_for_function(
        # Results link with ?h= and the query's terms, split as the search splits them (in any order).
        """q => {
          const words = text => [...new Set(text.split(/[\\s\\-\\/_]+/))].filter(t => t).sort().join(' ');
          const want = words(q.toLowerCase());
          return [...document.querySelectorAll('a.md-search-result__link')]
            .some(a => words(new URL(a.href).searchParams.get('h') || '') === want);
        }""",
        arg=query,
        timeout=15000,
    )
    first = page.locator(".md-search-result__item").first.locator("a.md-search-result__link[href*='#']").first
    return first.get_attribute("href") or "", first.inner_text()


def _words(key: str) -> frozenset[str]:
    return frozenset(w for w in re.split(r"[\s\-/_]+", key.lower()) if w)


def queries(manual: Manual) -> list[tuple[str, str]]:
    """(what a reader types, the metric whose entry must come first): every key, and the last segment of a plain key."""

    def words(text: str) -> frozenset[str]:
        return frozenset(w for w in re.split(r"[\s\-/_]+", text.lower()) if w)

    # A family's members are in its entry's text, not its title: a member that holds every word of another
    # metric's own key (eval/{dataset}/repetition_frac and rollout/repetition_frac) finds that key's entry
    # first, its title holding the words. Those members are left out here (a known limit of search).
    last_words = {key: words(key.rsplit("/", 1)[-1]) for key, m in manual.metrics.items() if not m.members}
    searchable = lambda query: not (words(query) & LUNR_STOP_WORDS)  # noqa: E731
    out = []
    for key, metric in manual.metrics.items():
        if metric.members:
            out += [
                (member, key)
                for member in metric.members
                if not any(w and w <= words(member) for other, w in last_words.items() if other != key)
            ]
        else:
            last = key.rsplit("/", 1)[1]
            every_key = [k for m in manual.metrics.values() for k in (m.members or [m.key])]
            shared = sum(1 for other in every_key if other.rsplit("/", 1)[-1] == last) > 1  # rollout/ and train/
            out += [(key, key)] + ([] if shared else [(last, key)])
    # Keys of the same words (rollout/log_probs, rollout/rollout_log_probs) are one query to search.
    same_words: dict[frozenset[str], int] = {}
    for k in manual.metrics:
        same_words[words(k)] = same_words.get(words(k), 0) + 1
    return [(query, key) for query, key in out if searchable(query) and same_words.get(words(query), 0) <= 1]


def test_search_lands_on_the_metric_and_shows_only_its_ranges(search_page, search_base, manual) -> None:
    page = search_page
    page.goto(f"{search_base}/")
    for query, key in queries(manual):
        href, text = _first_result(page, query)
        if manual.metrics[key].members:
            # A member's key is in its family's text, not its title: a metric whose own key shares its
            # words may come first (rollout/response_lengths for rollout/response_len/mean); the family
            # is in the first page's results all the same (a known limit of search by title).
            group = page.locator(".md-search-result__item").first.locator("a.md-search-result__link")
            hrefs = group.evaluate_all("as => as.map(a => a.getAttribute('href'))")
            if not href.endswith(f"#{manual.metrics[key].anchor}"):
                assert any(h.endswith(f"#{manual.metrics[key].anchor}") for h in hrefs), f"{query!r}: {hrefs}"
                continue
        assert href.endswith(f"#{manual.metrics[key].anchor}"), f"{query!r} lands on {href}"
        text = " ".join(text.split())
        own = lines(manual, key)
        for phrase, title in own:
            assert phrase in text and title in text, f"{query!r}: {phrase!r} of {title!r} not in {text!r}"
        mine = {phrase for phrase, _ in own}
        for other in manual.metrics:
            for phrase, _ in lines(manual, other):
                if other != key and phrase not in mine and phrase != "no range":
                    assert phrase not in text, f"{query!r} shows {other}'s {phrase!r}"


def test_an_old_anchor_and_the_old_name_lead_to_the_renamed_entry(search_page, search_base, manual) -> None:
    """Links and alert rules made before Miles renamed a key, and a reader who knows the old name,
    land on the entry of the key it is now."""
    page, base = search_page, search_base
    renamed = [(r.key, m) for m in manual.metrics.values() for r in m.renamed_from]
    assert [old for old, _ in renamed] == ["rollout/answer_tokens"]
    section_of = {m.key: s.id for s in manual.catalog.sections for m in s.metrics}
    for old, metric in renamed:
        old_anchor = metric_anchor(old)
        # The address of an alert rule exported when the reference was one page: the map sends the reader on.
        page.goto(f"{base}/reference/metrics/#{old_anchor}")
        page.wait_for_function(
            "([id, path]) => location.hash === '#' + id && location.pathname.endsWith(path)",
            arg=[old_anchor, f"/reference/metrics/{section_of[metric.key]}/"],
        )
        inside = page.locator(f"h3#{metric.anchor} + .mm-entry #{old_anchor}")
        assert inside.count() == 1, f"#{old_anchor} is not in {metric.key}'s entry"
        line = page.locator(f"h3#{metric.anchor} + .mm-entry li:has(#{old_anchor})")
        assert old in line.inner_text() and line.is_visible()
        box, height = line.bounding_box(), page.viewport_size["height"]
        assert box and 0 <= box["y"] and box["y"] + box["height"] <= height, f"#{old_anchor} is not on screen"
        # An old name that holds every word of a key logged today (perf/total_train_time and
        # perf/train_time) finds that key first: the known limit of search by words (see queries).
        if any(_words(other) <= _words(old) for other in manual.metrics if other != metric.key):
            continue
        page.goto(f"{base}/")
        href, _ = _first_result(page, old)
        assert href.endswith(f"#{metric.anchor}"), f"{old!r} lands on {href}"


# --- phone and desktop --------------------------------------------------------------------

_BEYOND = """() => {
  const width = document.documentElement.clientWidth;
  const out = [];
  if (document.documentElement.scrollWidth > width) out.push('page scrolls sideways: ' + document.documentElement.scrollWidth);
  for (const el of document.querySelectorAll('.md-content *:not(svg *)')) {  // a drawing scales to its box
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
    const what = el.tagName.toLowerCase() + '.' + el.className + ' ' + JSON.stringify((el.textContent || '').slice(0, 40));
    if (r.right > width + 0.5 || r.left < -0.5) out.push(what + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right));
    const s = getComputedStyle(el);
    // The table of every range scrolls in its own box by design (its header and key column stay in
    // view): it is as wide as the profiles are many.
    if (['auto', 'scroll', 'hidden'].includes(s.overflowX) && el.scrollWidth > el.clientWidth + 1 && !el.classList.contains('mm-overview'))
      out.push(what + ' hides ' + (el.scrollWidth - el.clientWidth) + ' px in a scroll box');
  }
  return out;
}"""


def pages_a_reader_reads(manual: Manual) -> list[str]:
    return [
        "reference/metrics/",
        *[path for path, _ in section_pages(manual)],
        "profiles/",
        *[f"profiles/{p.id}/" for p in manual.profiles],
        "",
    ]


def test_nothing_lies_beyond_the_right_edge_of_a_phone(reads, manual) -> None:
    for path in pages_a_reader_reads(manual):
        assert reads["phone"][path]["beyond"] == [], path


def test_desktop_tables_and_code_are_not_cut(reads) -> None:
    for path, read in reads["desktop"].items():
        assert read["beyond"] == [], path


def test_a_link_to_an_entry_shows_it_whole_and_highlighted_on_a_phone(reads, site, manual) -> None:
    """Every entry of the fixture, the first profile's ranges first. How tall the real manual's entries
    are is its data's business: they are measured on fixture trees only (here, and with 1, 3 and 10
    profiles in test_many_profiles.py), so a team that adds a profile keeps CI green."""
    assert set(reads["landed"]) == set(manual.metrics)
    for key, seen in reads["landed"].items():
        landed_well(seen, PHONE, key, first=manual.profiles[0].id)


def test_landing_on_a_metric_shows_its_entry_highlighted(browser, site, manual) -> None:
    """A page opened at an entry's address, at both widths: the first entry of each section (by its
    old address at one width) and the last, which cannot scroll to the top. How a link on the page
    lands on every entry is read by `reads` (test_a_link_to_an_entry_shows_it_whole_...)."""
    _, base, _ = site
    for viewport in (DESKTOP, PHONE):
        page = _tab(browser, viewport=viewport)
        for section in manual.catalog.sections:
            for n, metric in enumerate(section.metrics[:1] + section.metrics[1:][-1:]):
                # The old address, from before each section had a page: the map sends the reader on.
                old = n == 0 and viewport is DESKTOP
                page.goto(f"{base}/reference/metrics/{'' if old else section.id + '/'}#{metric.anchor}")
                # A wait of Playwright's own costs Chromium ~0.5 s a page (its script, compiled anew in
                # every document): the address is waited for, the rest read in the page's own calls.
                page.wait_for_url(partial(_at, f"/reference/metrics/{section.id}/", metric.anchor))
                landed_well(page.evaluate(LANDED, metric.anchor), viewport, metric.key)
        assert_clean(page, base)


def _at(path: str, anchor: str, url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return parts.path.endswith(path) and parts.fragment == anchor


def test_the_old_address_without_javascript_lands_on_a_link_to_the_entry(browser, site, manual) -> None:
    _, base, _ = site
    page = _tab(browser, viewport=PHONE, java_script_enabled=False)
    for section in manual.catalog.sections:
        for metric in section.metrics:
            page.goto(f"{base}/reference/metrics/#{metric.anchor}")
            assert page.url.endswith(f"/reference/metrics/#{metric.anchor}")
            target = page.locator(":target")
            assert target.get_attribute("href") == f"{section.id}/#{metric.anchor}", metric.key
            box = target.bounding_box()
            assert box is not None and 0 <= box["y"] < PHONE["height"], metric.key
    assert_clean(page, base)


# --- schemes, navigation, links ------------------------------------------------------------

_LUMINANCE = """() => {
  const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def test_dark_scheme_follows_the_system_and_the_toggle_switches(browser, site) -> None:
    _, base, _ = site
    # A context of its own: the toggle leaves its choice in the site's storage, emptied before each scheme.
    context, page = open_page(browser, viewport=DESKTOP)
    for scheme, dark in (("dark", True), ("light", False)):
        if page.url.startswith(base):
            page.evaluate("localStorage.clear()")
        page.emulate_media(color_scheme=scheme)
        page.goto(f"{base}/profiles/")  # the frame is every page's: its lightest page
        assert (page.evaluate(_LUMINANCE) < 0.3) == dark, scheme
        page.locator("form[data-md-component=palette] label:visible").first.click()
        page.wait_for_function(
            f"() => document.body.getAttribute('data-md-color-scheme') === '{'default' if dark else 'slate'}'"
        )
        assert (page.evaluate(_LUMINANCE) < 0.3) != dark, f"the toggle did not switch from {scheme}"
    _close(context, page, base)


def test_home_comes_first_then_metrics_and_home_lists_every_key(reads, site, manual) -> None:
    _, base, _ = site
    for path in ("", "reference/metrics/"):
        # The home page, then the metrics pages (a section of the navigation: the map first).
        assert reads["desktop"][path]["nav"][:2] == [f"{base}/", f"{base}/reference/metrics/"], path
    home = reads["desktop"][""]["links"]
    for metric in manual.metrics.values():
        assert any(h.endswith(f"#{metric.anchor}") for h in home), metric.key
    for p in manual.profiles:
        links = reads["desktop"][f"profiles/{p.id}/"]["links"]
        for section in manual.catalog.sections:
            for metric in section.metrics:
                to = f"reference/metrics/{section.id}/#{metric.anchor}"
                assert sum(h.endswith(to) for h in links) == 1, (p.id, metric.key)


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag == "a" and a.get("href"):
            self.links.append(a["href"] or "")


def test_every_link_resolves(site) -> None:
    _, _, out = site
    parsed: dict[Path, _Anchors] = {}
    for file in sorted(out.rglob("*.html")):
        parser = _Anchors()
        parser.feed(file.read_text("utf-8"))
        parsed[file] = parser
    broken = []
    for file, parser in parsed.items():
        for href in parser.links:
            url = urllib.parse.urlsplit(html.unescape(href))
            if url.scheme or url.netloc or href.startswith("mailto:"):
                continue
            path = urllib.parse.unquote(url.path)
            # 404.html links from the site's root (site_url's path is "/").
            target = (
                (out / path.lstrip("/") if path.startswith("/") else (file.parent / path).resolve()) if path else file
            )
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{file.relative_to(out)}: {href}")
            elif url.fragment and target.suffix == ".html" and url.fragment not in parsed[target].ids:
                broken.append(f"{file.relative_to(out)}: {href} (no such anchor)")
    assert broken == []


def test_profile_page_links_downloads_that_exist(reads, manual) -> None:
    for p in manual.profiles:
        links = reads["desktop"][f"profiles/{p.id}/"]["downloads"]
        assert len(links) == len(FILE_FORMATS) + 1  # each file format and the profile's JSON Schema
        for href in links:
            with urllib.request.urlopen(href, timeout=5) as response:  # noqa: S310 - the local server
                assert response.status == 200, href


def test_a_note_link_lands_on_its_section(page, site, manual) -> None:
    _, base, _ = site
    # A section's note on its page links to the profile's notes on the map of the metrics.
    seen = [(sid, n) for p in manual.profiles for sid, n in p.section_notes.items() if n.see]
    if not seen:
        pytest.skip("no section note links to notes")
    section_id, see = seen[0]
    note = next(n for p in manual.profiles for n in p.notes if n.id == see.see)
    page.goto(f"{base}/reference/metrics/{section_id}/")
    page.locator(f".md-content a[href$='#{note.anchor}']").first.click()
    page.wait_for_function(f"location.hash === '#{note.anchor}'")
    heading = page.locator(f"#{note.anchor}")
    assert heading.inner_text().startswith(plain(note.title))
    box = heading.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"] / 2


def test_code_paths_link_to_the_catalog_commit(reads, manual) -> None:
    code = manual.catalog.code
    for path, metrics in section_pages(manual):
        shown = unique(reads["desktop"][path]["entries"])
        for metric in metrics:
            links = shown[metric.anchor]["paths"]
            if metric.origin is None or not code.url:
                assert links == [], metric.key
                continue
            # Where the value is computed, then where its key is named when that is elsewhere, then where it
            # logs an idle value.
            places = [metric.origin] + ([metric.origin.named_at] if metric.origin.named_at else [])
            places += [metric.idle.at] if metric.idle else []
            blob = f"{code.url.rstrip('/')}/blob/{code.commit}/"
            urls = [blob + urllib.parse.quote(p.path, safe="/") for p in places]
            # An evidenced place links to its line, and shows that line beside a link to it.
            at = [f"#L{p.line}" if p.evidence else "" for p in places]
            assert links == [[u + a, p.path] for u, a, p in zip(urls, at, places, strict=True)], metric.key
            evidenced = [(p, u) for p, u in zip(places, urls, strict=True) if p.evidence]
            assert shown[metric.anchor]["evidence"] == [
                [f"at line {p.line}: {plain(p.evidence)}", f"{u}#L{p.line}"] for p, u in evidenced
            ], metric.key
            assert shown[metric.anchor]["unverified"] == len(places) - len(evidenced), metric.key


def test_each_entry_shows_the_lab_against_the_code_and_whether_it_is_logged(reads, manual) -> None:
    commit = manual.catalog.code.commit[:9]
    for path, metrics in section_pages(manual):
        shown = unique(reads["desktop"][path]["entries"])
        for metric in metrics:
            entry = shown[metric.anchor]
            assert entry["lab_vs_code"] == [
                f"The lab's page says “{plain(r.lab)}”. The code at {commit} does: {plain(r.code)}."
                for r in metric.lab_vs_code
            ], metric.key
            expected = f"Not logged at this commit (Miles {commit}): {plain(metric.not_logged)}."
            assert entry["not_logged"] == (expected if metric.not_logged else None), metric.key


# --- drawings ------------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?")


def _numbers(text: str, titles: list[str]) -> list[str]:
    for title in titles:  # a profile title may hold digits of its own (GB10)
        text = text.replace(title, " ")
    return sorted(_NUMBER.findall(text))


def test_each_drawing_says_what_the_text_beside_it_says(reads, manual) -> None:
    """A drawing per profile with a number to place, in that profile's block, on one axis for the entry."""
    titles = sorted({plain(p.title) for p in manual.profiles}, key=len, reverse=True)
    drawn = 0
    for path, metrics in section_pages(manual):
        shown = unique(reads["desktop"][path]["entries"])
        for metric in metrics:
            key, entry = metric.key, shown[metric.anchor]
            if metric.not_logged:
                assert entry["blocks"] == [] and entry["drawings"] == 0, key
                continue
            assert [b["profile"] for b in entry["blocks"]] == [p.id for p in manual.profiles], key
            for p, block in zip(manual.profiles, entry["blocks"], strict=True):
                # A drawing places numbers on an axis: presence alone has none.
                ranged = any(e.kind != "presence" for e in p.expectations.get(key, []))
                assert block["drawings"] == (1 if ranged else 0), (key, p.id)
                if not ranged:
                    continue
                drawn += 1
                said = block["title"]
                assert block["label"] == said
                ranged_lines = [(r, t) for r, t in block["lines"] if r != "no range"]
                for text, title in ranged_lines:
                    assert f"{title}: {text}" in said, (key, said)
                assert _numbers(said, titles) == _numbers(" ".join(r for r, _ in ranged_lines), titles), key
            # One axis for every profile's drawing of the metric: unfolded, they compare in a column.
            assert len({tuple(b["axis"]) for b in entry["blocks"] if b["axis"]}) <= 1, key
    assert drawn > 0


_GEOMETRY = """svg => {
  // Screen x of a value, from two ticks as the browser laid them out.
  const ticks = [...svg.querySelectorAll('g.mm-tick')].map(t => {
    const r = t.querySelector('line').getBoundingClientRect();
    return [parseFloat(t.dataset.value), r.left + r.width / 2];
  });
  const marks = [...svg.querySelectorAll('g.mm-mark[data-kind=band], g.mm-mark[data-kind=window]')].map(g => {
    const r = g.querySelector('rect').getBoundingClientRect();
    return {min: g.dataset.min, max: g.dataset.max, open: g.dataset.open || '', left: r.left, right: r.right};
  });
  const points = [...svg.querySelectorAll('g.mm-mark[data-kind=median], g.mm-mark[data-kind=exact]')].map(g => {
    const r = g.querySelector('path, line').getBoundingClientRect();
    return {value: parseFloat(g.dataset.value), x: r.left + r.width / 2};
  });
  return {ticks, marks, points};
}"""


def test_a_band_is_drawn_from_its_min_to_its_max_on_the_axis(reads, manual) -> None:
    for width in WIDTHS:
        bands = 0
        svgs = [g for read in reads[width].values() for g in read["drawings"]]
        for g in svgs:
            ticks = g["ticks"]
            assert len(ticks) >= 2
            assert [x for _, x in ticks] == sorted(x for _, x in ticks) and [v for v, _ in ticks] == sorted(
                v for v, _ in ticks
            )
            (v0, x0), (v1, x1) = ticks[0], ticks[-1]

            def at(value: float, v0: float = v0, x0: float = x0, v1: float = v1, x1: float = x1) -> float:
                return x0 + (value - v0) * (x1 - x0) / (v1 - v0)

            tolerance = 1.5  # px: stroke width and rounding of coordinates
            for mark in g["marks"]:
                bands += 1
                assert mark["left"] <= mark["right"]
                if mark["min"] is not None and mark["max"] is not None:
                    assert float(mark["min"]) <= float(mark["max"])
                if mark["min"] is not None and mark["open"] != "min":
                    assert abs(mark["left"] - at(float(mark["min"]))) <= tolerance, mark
                if mark["max"] is not None and mark["open"] != "max":
                    assert abs(mark["right"] - at(float(mark["max"]))) <= tolerance, mark
            for point in g["points"]:
                assert abs(point["x"] - at(point["value"])) <= tolerance, point
        if any(getattr(e, "kind", "") == "band" for p in manual.profiles for es in p.expectations.values() for e in es):
            assert bands > 0


# --- every range at a glance -----------------------------------------------------------------


_TABLE = """() => [...document.querySelectorAll('.mm-overview table.mm-table tbody tr')].map(r => [...r.children].map(c =>
  (c.querySelector('.mm-cell') ? [...c.querySelectorAll('.mm-cell')].map(s => s.textContent).join(' ') : c.textContent)
  .replace(/\\s+/g, ' ').trim()))"""


def _table(page) -> list[list[str]]:
    return page.evaluate(_TABLE)


def _empty_cell(metric) -> str:
    """What a table's cell says of a metric without a range on a profile."""
    return "not logged" if metric.not_logged else "no range"


def _rows_say_their_ranges(rows: list[list[str]], manual: Manual, metrics) -> None:
    assert len(rows) == len(metrics)
    for row, metric in zip(rows, metrics):
        key = metric.key
        assert row[0].startswith(plain(metric.label) if metric.members else key)
        assert row[1] == plain(metric.unit or "")
        for cell, p in zip(row[2:], manual.profiles):
            said = [describe(e, metric.unit) for e in p.expectations.get(key, [])] or [_empty_cell(metric)]
            assert cell == " ".join(said), (key, p.id)


def test_the_metrics_pages_open_on_a_table_of_every_range(reads, manual) -> None:
    for width, viewport in WIDTHS.items():
        # The map: every metric, each key linking to its entry on its section's page.
        the_map = reads[width]["reference/metrics/"]
        _rows_say_their_ranges(the_map["table"], manual, list(manual.metrics.values()))
        assert the_map["keys"] == [f"{_section_id(manual, m.key)}/#{m.anchor}" for m in manual.metrics.values()]
        # Each section's page opens on its own metrics' table, on the first screen.
        for path, metrics in section_pages(manual):
            read = reads[width][path]
            _rows_say_their_ranges(read["table"], manual, metrics)
            assert read["table_top"] is not None and read["table_top"] < viewport["height"] / 2, path
            if viewport is PHONE:  # a phone's table names each cell's profile
                assert plain(manual.profiles[0].title) in read["cell_label"], path


def test_each_profile_page_has_the_table_of_its_own_ranges(reads, manual) -> None:
    for p in manual.profiles:
        rows = reads["desktop"][f"profiles/{p.id}/"]["table"]
        assert len(rows) == len(manual.metrics)
        for row, (key, metric) in zip(rows, manual.metrics.items()):
            said = " ".join(describe(e, metric.unit) for e in p.expectations.get(key, [])) or _empty_cell(metric)
            assert row[2].startswith(said), (p.id, key, row)


# --- is this value normal? ---------------------------------------------------------------------


def _check(page, key: str, value: str, step: str = "") -> dict[str, list[str]]:
    """Profile id -> the verdicts the form gives, one per expectation."""
    page.select_option("form.mm-check select[name=metric]", key)
    page.fill("form.mm-check input[name=value]", value)
    step_box = page.locator("form.mm-check input[name=step]")
    if step_box.is_visible():
        step_box.fill(step)
    out: dict[str, list[str]] = {}
    for li in page.locator(".mm-check-out li").all():
        out.setdefault(li.get_attribute("data-profile") or "", []).append(li.get_attribute("data-verdict") or "")
    return out


def test_the_value_checker_gives_each_profile_s_verdict_in_the_entry_s_words(page, site, manual) -> None:
    _, base, _ = site
    checked = 0
    for path, metrics in section_pages(manual):
        ranged_here = [m for m in metrics if any(p.expectations.get(m.key) for p in manual.profiles)]
        if not ranged_here:
            continue
        page.goto(f"{base}/{path}")
        page.locator("form.mm-check").wait_for(state="visible")
        options = page.locator("form.mm-check select option").evaluate_all("os => os.map(o => o.value)")
        assert options == [m.key for m in ranged_here], path  # the metrics of this page that have a range
        for metric in ranged_here:
            _one_metric_checked(page, manual, metric.key, metric)
            checked += 1
    assert checked > 0


def _one_metric_checked(page, manual: Manual, key: str, metric) -> None:
    if True:
        got = _check(page, key, "1")
        assert set(got) == {p.id for p in manual.profiles}, key
        for p in manual.profiles:
            expected = len(p.expectations.get(key, [])) or 1
            assert len(got[p.id]) == expected
            assert all(v in ("inside", "outside", "not covered", "no range", "step needed") for v in got[p.id])
        # The range reads as on the entry (the first profile's, then the others', folded).
        shown = page.locator(".mm-check-out li .mm-range").all_text_contents()
        assert shown == [describe(e, metric.unit) for p in manual.profiles for e in p.expectations.get(key, [])]


# (metric, value, step, verdicts on the `every` profile): verdicts follow from EVERY_PROFILE's numbers.
EVERY_CASES = [
    ("rollout/raw_reward", "0.4", "", ["outside"]),  # below the open band's minimum
    ("rollout/raw_reward", "1e6", "", ["inside"]),  # an open band has no maximum
    ("rollout/response_lengths", "410", "", ["inside"]),  # 2.5% from the median, its tolerance 5%
    ("rollout/response_lengths", "430", "", ["outside"]),
    ("train/grad_norm", "4", "1", ["inside", "outside"]),  # within the band, above the window's max
    ("train/grad_norm", "4", "5", ["inside", "not covered"]),  # past the window
    ("train/grad_norm", "4", "9", ["not covered", "not covered"]),  # past the band's 8 steps too
    ("train/grad_norm", "0.1", "", ["outside", "inside"]),
    ("train/pg_clipfrac", "0", "0", ["inside"]),
    ("train/pg_clipfrac", "0.1", "0", ["outside"]),
    ("train/pg_clipfrac", "0", "3", ["not covered"]),
    ("train/weight/*", "123", "", ["no range"]),  # presence: no number to hold
    ("train/train_rollout_kl", "0.005", "", ["step needed"]),  # a corridor's bounds are a step's
    ("train/train_rollout_kl", "0.0055", "4", ["inside"]),  # reference 0.005: from 0.004 to 0.006
    ("train/train_rollout_kl", "0.0039", "4", ["outside"]),
    ("train/train_rollout_kl", "0.005", "10", ["not covered"]),  # past the reference's last step
]


def test_the_value_checker_verdicts_for_every_kind_of_range(page, site, manual) -> None:
    """The reader of the `every` profile (a link that names it): its verdicts first, the others folded."""
    _, base, _ = site
    for key, value, step, verdicts in EVERY_CASES:
        path = f"{base}/reference/metrics/{_section_id(manual, key)}/?profile=every"
        if page.url != path:
            page.goto(path)
            page.locator("form.mm-check").wait_for(state="visible")
        assert _check(page, key, value, step)["every"] == verdicts, (key, value, step)
        first = page.locator(".mm-check-out > ul > li").evaluate_all("ls => ls.map(l => l.dataset.profile)")
        assert first == ["every"] * len(verdicts), (key, first)
        assert not page.locator(".mm-check-out details.mm-check-others").evaluate("d => d.open")
    page.goto(f"{base}/reference/metrics/{_section_id(manual, 'rollout/raw_reward')}/?profile=every")
    page.locator("form.mm-check").wait_for(state="visible")
    _check(page, "rollout/raw_reward", "0.4")
    words = page.locator(".mm-check-out li[data-profile=every]").inner_text()
    assert "below 0.5 by 0.1" in words
    _check(page, "rollout/raw_reward", "five")
    assert "Type a number" in page.locator(".mm-check-out").inner_text()


def test_without_javascript_the_page_reads_fully_and_the_form_stays_hidden(browser, site, manual) -> None:
    _, base, _ = site
    page = _tab(browser, viewport=PHONE, java_script_enabled=False)
    page.goto(f"{base}/reference/metrics/")
    assert len(_table(page)) == len(manual.metrics)
    for path, metrics in section_pages(manual):
        page.goto(f"{base}/{path}")
        assert not page.locator("form.mm-check").is_visible()
        assert len(_table(page)) == len(metrics)
        visible = page.locator("h3[id] + .mm-entry .mm-meaning").evaluate_all(
            "ms => ms.map(m => [m.closest('.mm-entry').previousElementSibling.id,"
            " m.getClientRects().length > 0 && getComputedStyle(m).visibility !== 'hidden'])"
        )
        assert dict(visible) == {m.anchor: True for m in metrics}, path
    assert_clean(page, base)


def test_a_deep_link_picks_its_metric_and_each_key_has_a_copy_button(page, manual, site) -> None:
    _, base, _ = site
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    ranged = [m for m in manual.metrics.values() if any(p.expectations.get(m.key) for p in manual.profiles)]
    metric = ranged[-1]
    section = _section_id(manual, metric.key)
    page.goto(f"{base}/reference/metrics/{section}/#{metric.anchor}")
    page.locator("form.mm-check").wait_for(state="visible")
    assert page.locator("form.mm-check select").input_value() == metric.key
    on_page = next(ms for path, ms in section_pages(manual) if path == f"reference/metrics/{section}/")
    assert page.locator("h3.mm-key button.mm-copy").count() == len(on_page)
    page.locator(f"h3#{metric.anchor} button.mm-copy").click()
    page.wait_for_function("() => navigator.clipboard.readText().then(t => t.length > 0)")
    assert page.evaluate("navigator.clipboard.readText()") == metric.key
    page.context.clear_permissions()  # the module's tab, as the other tests expect it


# --- drawings: a legend, the domain, size and contrast ------------------------------------------

_CONTRAST = """() => {
  const rgb = c => { const m = c.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const over = (fg, bg, alpha) => fg.slice(0, 3).map((v, i) => v * alpha + bg[i] * (1 - alpha));
  const page = rgb(getComputedStyle(document.body).backgroundColor);
  const low = [];
  // Marks: the strongest of each mark's painted parts (a band's outline, a tick's stroke) against the page.
  for (const g of document.querySelectorAll('.md-content svg g.mm-mark, .md-content svg g.mm-legend')) {
    let best = 0;
    for (const el of g.querySelectorAll('rect, path, line, circle')) {
      const s = getComputedStyle(el);
      for (const [paint, opacity] of [[s.stroke, s.strokeOpacity], [s.fill, s.fillOpacity]]) {
        if (!paint || paint === 'none' || paint.startsWith('url')) continue;
        const c = rgb(paint);
        best = Math.max(best, ratio(over(c, page, c[3] * Number(opacity) * Number(s.opacity)), page));
      }
    }
    if (best && best < 3) low.push(['mark', g.getAttribute('class'), best.toFixed(2)]);
  }
  // Text: drawings' words and numbers, metric keys, table cells.
  for (const el of document.querySelectorAll('.md-content svg text, h3.mm-key code, .mm-table td, .mm-table th')) {
    let bg = page, node = el;
    while (node && node.nodeType === 1) {
      const c = rgb(getComputedStyle(node).backgroundColor);
      if (c[3] > 0) { bg = over(c, page, c[3]); break; }
      node = node.parentElement;
    }
    const s = getComputedStyle(el);
    const c = rgb(el instanceof SVGElement ? s.fill : s.color);
    const r = ratio(over(c, bg, c[3]), bg);
    if (r < 4.5) low.push(['text', el.textContent.slice(0, 30), r.toFixed(2)]);
  }
  return low;
}"""

_SMALL_TEXT = """() => [...document.querySelectorAll('.md-content svg text')].map(t => {
  const size = parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a;
  return [t.textContent, size];
}).filter(([, size]) => size < 11)"""


def test_drawings_and_keys_hold_their_contrast_in_both_schemes_and_text_is_legible_on_a_phone(
    browser, site, manual
) -> None:
    _, base, _ = site
    # Colours do not change with the width: each scheme is read at one width, the phone's for the text size.
    for scheme, viewport in (("light", DESKTOP), ("dark", PHONE)):
        page = _tab(browser, viewport=viewport)
        page.emulate_media(color_scheme=scheme)
        for path, _ in section_pages(manual)[:3]:
            page.goto(f"{base}/{path}")
            assert page.evaluate(_CONTRAST) == [], (path, scheme, viewport)
            if viewport is PHONE:
                assert page.evaluate(_SMALL_TEXT) == [], (path, scheme)
        assert_clean(page, base)


def test_each_drawing_has_a_legend_of_the_marks_it_draws_and_reaches_its_domain(reads, manual) -> None:
    for path, metrics in section_pages(manual):
        shown = unique(reads["desktop"][path]["entries"])
        for metric in metrics:
            key = metric.key
            for block in shown[metric.anchor]["blocks"]:
                if not block["drawings"]:
                    continue
                drawn, legend = set(block["marks"]), set(block["legend"])
                assert drawn <= legend and legend - drawn <= {"open"}, key
                lo, hi = (float(v) for v in block["axis"])
                domain = metric.value_domain
                if domain == "fraction":
                    assert (lo, hi) == (0, 1), key
                elif domain == "non-negative":
                    assert lo == 0, key


# --- the slips ------------------------------------------------------------------------------------


def test_a_deep_link_highlights_its_own_entry_in_the_contents(page, site, manual) -> None:
    """Opened at an entry's address (the first of its page), then at the page's other entries as a link
    on the page reaches them: the contents mark that entry."""
    _, base, _ = site
    for metric in list(manual.metrics.values())[1:8]:
        path = f"{base}/reference/metrics/{_section_id(manual, metric.key)}/"
        if page.url.split("#")[0] != path:
            page.goto(f"{path}#{metric.anchor}")
        else:
            page.evaluate("id => { location.hash = id; }", metric.anchor)
        page.wait_for_timeout(300)
        header = page.locator(".md-header").bounding_box()
        top = page.locator(f"h3#{metric.anchor}").bounding_box()
        assert header and top
        if top["y"] > header["y"] + header["height"] + 2:
            continue  # near the page's end the heading cannot reach the top: the contents mark the last entry
        active = page.locator(".md-nav--secondary a.md-nav__link--active").evaluate_all(
            "as => as.map(a => a.getAttribute('href'))"
        )
        assert active and set(active) == {f"#{metric.anchor}"}, (metric.key, active)


_CODE = """() => {
  const out = [];
  for (const pre of document.querySelectorAll('.md-content pre')) {
    // A token split over two lines has two boxes.
    for (const tok of pre.querySelectorAll('.mm-tok'))
      if (tok.getClientRects().length > 1) out.push('split: ' + tok.textContent);
    const button = pre.querySelector('.md-clipboard');
    if (!button) continue;
    const b = button.getBoundingClientRect();
    const walker = document.createTreeWalker(pre.querySelector('code'), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const r of range.getClientRects())
        if (r.width && r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom)
          out.push('under the copy button: ' + n.textContent.slice(0, 20));
    }
  }
  return out;
}"""


def test_code_blocks_break_between_tokens_and_the_copy_button_covers_no_text(reads) -> None:
    for width in WIDTHS:
        for path, read in reads[width].items():
            assert read["code"] == [], (path, width)


def test_tables_and_code_show_no_escaping_backslash(reads) -> None:
    """A `|` escaped for a Markdown table (the judging options, the maintaining page) shows no backslash."""
    for path, read in reads["desktop"].items():
        assert "\\|" not in read["text"], path


def test_the_site_publishes_no_loopback_address_when_site_url_is_unset(site) -> None:
    root, _, out = site
    if "SITE_URL" in os.environ:
        pytest.skip("SITE_URL is set")
    loopback = re.compile(r"(href|content|src)=\"https?://(127\.0\.0\.1|localhost)")
    for file in out.rglob("*.html"):  # no link or meta tag (prose may name a local address)
        assert not loopback.search(file.read_text("utf-8")), file
    for file in [out / "sitemap.xml", *(root / "docs/export").iterdir()]:
        text = file.read_text("utf-8")
        assert "127.0.0.1" not in text and "localhost" not in text, file
    assert 'rel="canonical"' not in (out / "reference/metrics/index.html").read_text("utf-8")


def fragments(manual: Manual) -> list[tuple[str, str]]:
    """(query, key) for key fragments a reader types: the last segment with spaces for `_`, and each
    `_`-part of at least four letters that no other key has. A query with a word that starts a word of the
    entry's page title (`train` and Training) finds that page too, as the first row: those are left out."""
    parts: dict[str, set[str]] = {}
    for key in manual.metrics:
        for part in re.split(r"[/_]", key):
            parts.setdefault(part, set()).add(key)
    titles = {m.key: s.title.lower().split() for s in manual.catalog.sections for m in s.metrics}
    out = []
    for key, metric in manual.metrics.items():
        if metric.members or "{" in key:
            continue
        last = key.rsplit("/", 1)[1]
        out.append((last.replace("_", " "), key))
        out += [(part, key) for part in last.split("_") if len(part) >= 4 and parts.get(part) == {key}]
    # A query another entry's last segment also spells (`raw reward`: rollout/raw_reward and an adapter's
    # {adapter}/raw_reward_{stat}) names either: left out.
    lasts = {k: k.rsplit("/", 1)[-1].replace("_", " ") for k in manual.metrics}
    shared = {(q, k) for q, k in out if any(q in last for other, last in lasts.items() if other != k)}
    return [
        (q, k)
        for q, k in out
        if (q, k) not in shared and not any(t.startswith(w) for w in q.split() for t in titles[k])
    ]


def test_a_key_fragment_finds_its_entry_first(search_page, search_base, manual) -> None:
    page = search_page
    page.goto(f"{search_base}/")
    for query, key in fragments(manual)[:12]:
        href, _ = _first_result(page, query)
        assert href.endswith(f"#{manual.metrics[key].anchor}"), f"{query!r} lands on {href}"
        # The entry is the first row a reader sees, not the page it is on.
        first_visible = page.locator(".md-search-result__item").first.locator("a.md-search-result__link:visible").first
        assert "#" in (first_visible.get_attribute("href") or ""), query


def literal_fragments(manual: Manual) -> list[tuple[str, str]]:
    """(fragment, key): two or more parts of a key in a row, as written in it (a part ends at `/` or `_`),
    that this key alone holds and another holds only as words apart (`rollout_kl`: `train/train_rollout_kl`
    holds it, `rollout/opd_reverse_kl` holds its words)."""
    keys = [k for k in manual.metrics if not manual.metrics[k].members and "{" not in k]
    words = lambda text: frozenset(w for w in re.split(r"[/_]", text) if w)  # noqa: E731
    out = []
    for key in keys:
        parts = re.findall(r"[^/_]+[/_]?", key)
        for i, j in itertools.combinations(range(len(parts) + 1), 2):
            fragment = "".join(parts[i:j]).rstrip("/_")
            holders = [k for k in keys if fragment in k]
            if j - i >= 2 and holders == [key] and any(words(fragment) <= words(k) for k in keys if k != key):
                out.append((fragment, key))
    return out


def test_a_key_holding_the_typed_fragment_comes_first(search_page, search_base, manual) -> None:
    """An entry whose key holds what was typed, as typed, before the entries that hold only its words."""
    page = search_page
    found = literal_fragments(manual)
    assert ("rollout_kl", "train/train_rollout_kl") in found
    page.goto(f"{search_base}/")
    for query, key in found:
        href, _ = _first_result(page, query)
        assert href.endswith(f"#{manual.metrics[key].anchor}"), f"{query!r} lands on {href}"


def _section_id(manual: Manual, key: str) -> str:
    return next(s.id for s in manual.catalog.sections for m in s.metrics if m.key == key)


# What `reads` takes from a page in one call (a call per element costs a round trip to the browser each);
# a part a page does not have comes back empty. Entries are read at the desktop's width only (the tests read them there).
_TWO_FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
_READ = f"""entries => {{
  const overview = document.querySelector('.mm-overview');
  const cell = document.querySelector('.mm-overview tbody td[data-profile]');
  return {{
    entries: entries ? ({_ENTRIES})() : {{}},
    drawings: [...document.querySelectorAll('svg.mm-ranges')].filter(s => s.checkVisibility()).map({_GEOMETRY}),
    beyond: ({_BEYOND})(),
    code: ({_CODE})(),
    table: ({_TABLE})(),
    table_top: overview ? overview.getBoundingClientRect().y : null,
    cell_label: cell ? getComputedStyle(cell, '::before').content : '',
    keys: [...document.querySelectorAll('.mm-overview tbody th')].map(th => th.querySelector('a').getAttribute('href')),
    nav: [...document.querySelectorAll('nav.md-nav--primary > ul > li')].map(li => (li.querySelector('a') || {{}}).href),
    links: [...document.querySelectorAll('.md-content a[href]')].map(a => a.getAttribute('href')),
    downloads: [...document.querySelectorAll(".md-content a[href*='export/']")].map(a => a.href),
    text: document.querySelector('.md-content').innerText,
  }};
}}"""
