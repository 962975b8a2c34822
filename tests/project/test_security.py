"""Text from ranges/ is untrusted: it reaches every page as the text it is, never as markup or script."""

from __future__ import annotations

import functools
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

import browser_helpers
from conftest import REPO
from metrics_manual.markdown import literal


def site_markdown(source: str) -> str:
    """Markdown to HTML with the extensions of the site's mkdocs.yml (read, never typed here)."""
    md = _site_markdown()
    md.reset()  # one instance for every example: making one with its extensions costs more than a page
    return md.convert(source)


@functools.cache
def _site_markdown() -> markdown.Markdown:
    config = yaml.load(
        (REPO / "mkdocs.yml").read_text("utf-8"), Loader=yaml.BaseLoader
    )  # BaseLoader: !ENV tags stay text
    names, configs = [], {}
    for item in config.get("markdown_extensions", []):
        name, options = (item, {}) if isinstance(item, str) else next(iter(item.items()))
        names.append(name)
        configs[name] = {k: {"true": True, "false": False}.get(v, v) for k, v in (options or {}).items()}
    return markdown.Markdown(extensions=names, extension_configs=configs)


class _Text(HTMLParser):
    """The text a reader sees: character data, without the permalink anchors the toc extension adds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if self.skip or (tag == "a" and "headerlink" in (dict(attrs).get("class") or "")):
            self.skip += 1

    def handle_endtag(self, tag: str) -> None:
        if self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def visible(html_text: str) -> tuple[str, list[str]]:
    parser = _Text()
    parser.feed(html_text)
    parser.close()
    return " ".join("".join(parser.parts).split()), parser.tags


def folded(text: str) -> str:
    return " ".join(text.split())


def with_examples(*texts: str):
    def apply(test):
        for text in texts:
            test = example(text=text)(test)
        return test

    return apply


# Where the templates put a text: alone on a line (after a blank line or right under another
# line, where `---` or `===` would underline it), in a table cell, a heading, emphasis, a list item, a link.
PLACES = {
    "paragraph": ("before\n\n{}\n\nafter", "before {} after", ["p", "p", "p"]),
    "under a line": ("before\n{}\n\nafter", "before {} after", ["p", "p"]),
    "heading": ("# {}\n", "{}", ["h1", "a"]),
    "cell": (
        "| A | B |\n|---|---|\n| {} | x |\n",
        "A B {} x",
        ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"],
    ),
    "emphasis": ("*{}:* x\n", "{}: x", ["p", "em"]),
    "list item": ("- **id**: {}\n", "id: {}", ["ul", "li", "strong"]),
    "sentence start": ("{} and more words\n", "{} and more words", ["p"]),
    "link text": ("**[{}](x.md)**: y\n", "{}: y", ["p", "strong", "a"]),
}
ONE_LINE = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029"), max_size=40)
MARKDOWN_BITS = st.lists(
    st.sampled_from(
        [
            "---",
            "***",
            "___",
            "- ",
            "+ ",
            "* ",
            "1. ",
            "2) ",
            "> ",
            "# ",
            "=",
            "-",
            "    ",
            "\t",
            "&lt;",
            "&amp;",
            "&#60;",
            "<b>",
            "</p>",
            "`",
            "``",
            "|",
            "[x](y)",
            "![i](y)",
            "\\",
            "{#id}",
            "{: .c}",
            "!!! note",
            "[TOC]",
            "<!--",
            "-->",
            "  ",
            "*",
            "_",
            "~~",
            ":",
            "<http://x>",
            "&",
            "#",
            "===",
        ]
    ),
    max_size=6,
).map("".join)


@pytest.mark.parametrize("place", sorted(PLACES))
@settings(max_examples=60, deadline=None)
@given(text=st.one_of(ONE_LINE, MARKDOWN_BITS, st.tuples(MARKDOWN_BITS, ONE_LINE).map("".join)))
@with_examples("---", "- item", "1. one", "1.", "=", "===", "&lt;b&gt;", "+ x", "> q", "# h", "    code", "* * *")
def test_inert_text_displays_literally_wherever_a_template_puts_it(place: str, text: str) -> None:
    source, shown, tags = PLACES[place]
    seen, seen_tags = visible(site_markdown(source.format(literal(text))))
    assert seen == folded(shown.format(folded(text)))
    if folded(text):  # no element from the text: no list, rule, quote, code block or heading of its own
        assert seen_tags == tags, seen_tags


# --- stored XSS: every text field of the source, through the whole site -------------------------


def payload(label: str) -> str:
    """Text that runs script if any output takes it as HTML, and that a reader must see as written."""
    return (
        f"{label} <img src=x onerror=\"window.__xss='{label}'\"></title><svg onload=\"window.__xss='{label}'\">"
        f" &lt;b&gt; | *x* `y` [z](w) x"
    )


RAW = re.compile(r"<img src=x|<svg onload|</title><svg")


def _models(root: type) -> list[type]:
    """The model classes reachable from `root` through its fields."""
    from typing import get_args

    from pydantic import BaseModel

    seen: list[type] = []
    todo = [root]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.append(cls)
        for field in cls.model_fields.values():
            stack = [field.annotation]
            while stack:
                t = stack.pop()
                if isinstance(t, type) and issubclass(t, BaseModel):
                    todo.append(t)
                stack.extend(get_args(t))
    return seen


def text_fields(root: type) -> set[str]:
    """Names of the free-text fields (`Text` in model.py) of `root` and what it holds."""
    return {
        name
        for cls in _models(root)
        for name, field in cls.model_fields.items()
        if "_one_line" in repr(field.annotation) + repr(field.metadata)
    }


def poisoned_sources() -> tuple[str, str, set[str]]:
    """The tiny catalog and profile with every optional text field filled, and a payload in each text
    value the model accepts as text; returns the YAML texts and the field names that got one."""
    from conftest import TINY_CATALOG, TINY_PROFILE
    from metrics_manual.model.schema import Catalog, Profile

    catalog, profile = yaml.safe_load(TINY_CATALOG), yaml.safe_load(TINY_PROFILE)
    catalog["code"]["date"] = "today"
    metric = catalog["sections"][1]["metrics"][0]
    cited = {"path": "p.py", "symbol": "f", "line": 1, "evidence": "e"}
    metric.update(unit="u", origin={**cited, "computed": "c", "logged": "l", "named_at": dict(cited)})
    metric["lab_vs_code"] = [{"lab": "l", "code": "c"}]
    metric["idle"] = {"value": 0, "when": metric["key"], "equals": 0, "why": "w", "at": dict(cited)}
    catalog["sections"][1]["metrics"][2]["not_logged"] = "n"  # train/weight/*: no profile ranges it
    profile["sources"]["log"] = {"kind": "log", "path": "x.log"}
    profile["sources"]["code"]["note"] = "n"
    profile["expectations"]["train/grad_norm"][0]["condition"] = "c"
    hit: set[str] = set()
    count = 0

    def poison(doc: dict, model: type) -> None:
        nonlocal count
        stack: list[tuple[Any, Any, str]] = [(doc, k, str(k)) for k in doc]
        while stack:
            parent, key, name = stack.pop()
            value = parent[key]
            if isinstance(value, dict):
                stack += [(value, k, str(k)) for k in value]
            elif isinstance(value, list):
                stack += [(value, i, name) for i in range(len(value))]
            elif isinstance(value, str):
                count += 1
                parent[key] = payload(f"T{count:02d}")
                try:
                    model.model_validate(doc)
                    hit.add(name)
                except ValueError:  # a key, id, commit, url ...: not free text
                    parent[key] = value

    poison(catalog, Catalog)
    poison(profile, Profile)
    # The lab's words are the metric's own (the load checks it): its poisoned meaning.
    metric["lab_vs_code"][0]["lab"] = metric["meaning"]
    dump = lambda d: yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=10_000)  # noqa: E731
    return dump(catalog), dump(profile), hit


def test_the_fixture_poisons_every_text_field_of_the_model() -> None:
    from metrics_manual.model.schema import Catalog, Profile

    *_, hit = poisoned_sources()
    assert text_fields(Catalog) | text_fields(Profile) <= hit


@pytest.fixture(scope="module")
def poisoned_site(tmp_path_factory: pytest.TempPathFactory):
    import shutil

    from conftest import write_project
    from site_helpers import mkdocs_build

    catalog, profile, _ = poisoned_sources()
    root = write_project(tmp_path_factory.mktemp("xss") / "manual", catalog, {"evil": profile})
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    for page in (REPO / "docs").glob("*.md"):  # the hand-written pages, with their facts
        shutil.copy(page, root / "docs" / page.name)
    shutil.copytree(REPO / "docs" / "stylesheets", root / "docs" / "stylesheets")
    shutil.copytree(REPO / "docs" / "javascripts", root / "docs" / "javascripts")  # the value checker
    # A hand-written page titled by its first heading, filled from the source.
    (root / "docs" / "titled.md").write_text("---\nfacts: true\n---\n# {{ catalog.title|md }}\n\nText.\n", "utf-8")
    result = mkdocs_build(root, root / "site")
    assert result.returncode == 0, result.stderr
    return root / "site"


@pytest.mark.slow
def test_no_output_of_the_site_holds_a_raw_tag_from_the_source(poisoned_site) -> None:
    # Pages, 404, sitemap, search index (Material shows its titles and texts as HTML) ...; not the theme's
    # assets, nor the exports, which are data for tools and carry the text as it is.
    files = [
        p
        for p in sorted(poisoned_site.rglob("*"))
        if p.is_file() and p.suffix != ".gz" and p.relative_to(poisoned_site).parts[0] not in ("assets", "export")
    ]
    assert len([p for p in files if p.suffix == ".html"]) > 5 and poisoned_site / "search/search_index.json" in files
    offenders = [
        f"{p.relative_to(poisoned_site)}: {m.group()}" for p in files for m in RAW.finditer(p.read_text("utf-8"))
    ]
    assert offenders == []
    # The exports are data for tools (JSON, YAML, CSV, rules): they carry the text as it is, and no page embeds them.
    exported = {p.suffix for p in (poisoned_site / "export").iterdir()}
    assert exported <= {".json", ".yaml", ".yml", ".csv"}
    title = yaml.safe_load(poisoned_sources()[0])["title"].split()[0]
    assert f"<title>{title} &lt;img" in (poisoned_site / "reference/metrics/index.html").read_text("utf-8")


# --- the same, as a reader's browser runs it ---------------------------------------------------


@pytest.fixture(scope="module")
def served(poisoned_site):
    """The poisoned site's base URL, its search index served empty (the search test has a server of its own)."""
    with browser_helpers.served(poisoned_site) as base:
        yield base


@pytest.fixture(scope="module")
def served_search(poisoned_site):
    """The poisoned site with its whole search index: every text of the source is in it."""
    with browser_helpers.served(poisoned_site, search=True) as base:
        yield base


@pytest.fixture(scope="module")
def chromium_page(browser, served):
    context = browser.new_context()  # Chromium refuses what is not local (browser_helpers.CHROMIUM_ARGS)
    yield context.new_page()
    context.close()


_ARTICLE = re.compile(r'<article class="md-content__inner[^"]*">(.*?)</article>', re.S)


def pages_to_open(site: Path) -> list[Path]:
    """Each page whose article holds text from the source (or that has no article), and one page whose
    article holds none: the frame around the article (header, navigation, title) is one template, the
    same on every page, so one page shows how it reads. (A page load costs ~0.7 s of Chromium's time.)"""
    pages = sorted(site.rglob("index.html"))
    article = {p: _ARTICLE.search(p.read_text("utf-8")) for p in pages}
    poisoned = [p for p in pages if not article[p] or re.search(r"T\d\d", article[p].group(1))]
    return poisoned + [p for p in pages if p not in poisoned][:1]


@pytest.mark.browser
def test_no_payload_runs_in_chromium_and_each_reads_as_text(poisoned_site, served, chromium_page) -> None:
    page = chromium_page
    shown = ""
    files = pages_to_open(poisoned_site)
    assert len(files) > 5 and poisoned_site / "reference/metrics/index.html" in files
    for file in files:
        url = f"{served}/{file.parent.relative_to(poisoned_site).as_posix()}/".replace("//", "/").replace(":/", "://")
        page.goto(url, wait_until="networkidle")
        assert page.evaluate("window.__xss") is None, url
        shown += " " + page.locator("body").inner_text()
    shown = folded(shown)
    catalog, profile, _ = poisoned_sources()
    labels = sorted(set(re.findall(r"T\d\d(?= <img)", catalog + profile)))
    assert labels
    assert [label for label in labels if folded(payload(label)) not in shown] == []  # each shows as written


@pytest.mark.browser
def test_searching_for_a_payload_runs_nothing(served_search, chromium_page) -> None:
    page = chromium_page
    label = yaml.safe_load(poisoned_sources()[1])["title"].split()[0]
    page.goto(f"{served_search}/", wait_until="networkidle")
    search = page.locator("input.md-search__input")
    search.click()
    page.keyboard.type(payload(label))  # the whole payload, as typed: the query shows, nothing runs
    page.wait_for_timeout(1000)
    assert page.evaluate("window.__xss") is None
    search.fill("")
    page.keyboard.type(f"{label} img onerror")  # words of the payload: results show titles and texts
    page.locator(".md-search-result__item").first.wait_for(timeout=15000)
    results = folded(page.locator(".md-search-result").inner_text())
    assert folded(payload(label)) in results
    assert page.evaluate("window.__xss") is None
    page.locator(".md-search-result__item a").first.click()  # search.highlight marks the words on the page
    page.wait_for_load_state("networkidle")
    assert "h=" in page.url
    assert page.evaluate("window.__xss") is None


@pytest.mark.browser
def test_the_table_and_the_value_checker_show_the_payloads_as_text(poisoned_site, served, chromium_page) -> None:
    """The new outputs: the table of every range (cells, the profile named before each range on a phone), the
    value checker (its metric picker and verdicts, built from the JSON export) and the drawings' legends."""
    page = chromium_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{served}/reference/metrics/training/", wait_until="networkidle")  # a section's page
    form = page.locator("form.mm-check")
    form.wait_for(state="visible")
    catalog, profile, _ = poisoned_sources()
    title = yaml.safe_load(profile)["title"]
    cells = page.locator(".mm-overview td[data-profile]")
    assert cells.count() > 0
    assert {cells.nth(i).get_attribute("data-profile") for i in range(cells.count())} == {folded(title)}
    options = page.locator("form.mm-check select option").evaluate_all("os => os.map(o => [o.value, o.textContent])")
    assert options
    for key, _ in options:
        page.select_option("form.mm-check select", key)
        page.fill("form.mm-check input[name=value]", "1")
        out = page.locator(".mm-check-out")
        assert out.locator("img, svg, script, b").count() == 0
        assert folded(title) in folded(out.inner_text())
    family = yaml.safe_load(catalog)["sections"][1]["metrics"][-1]["name"]
    page.goto(f"{served}/reference/metrics/", wait_until="networkidle")  # the map: every range in a table
    keys = page.locator(".mm-overview tbody th").all_inner_texts()
    assert folded(family) in [folded(k) for k in keys]  # the family's name in the table, as text
    assert page.evaluate("window.__xss") is None
    page.goto(f"{served}/reference/metrics/training/", wait_until="networkidle")
    assert page.locator(".md-content svg g.mm-legend").count() > 0  # the drawings' legends, of fixed words
    assert page.evaluate("window.__xss") is None
    page.set_viewport_size({"width": 1280, "height": 800})
