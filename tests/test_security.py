"""Text from ranges/ is untrusted: it reaches every page as the text it is, never as markup or script."""
from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import markdown
import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import REPO
from metrics_manual.render import inert


def site_markdown(source: str) -> str:
    """Markdown to HTML with the extensions of the site's mkdocs.yml (read, never typed here)."""
    config = yaml.load((REPO / "mkdocs.yml").read_text("utf-8"), Loader=yaml.BaseLoader)  # BaseLoader: !ENV tags stay text
    names, configs = [], {}
    for item in config.get("markdown_extensions", []):
        name, options = (item, {}) if isinstance(item, str) else next(iter(item.items()))
        names.append(name)
        configs[name] = {k: {"true": True, "false": False}.get(v, v) for k, v in (options or {}).items()}
    return markdown.markdown(source, extensions=names, extension_configs=configs)


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
# line, where `---` or `===` would underline it), in a table cell, a heading, emphasis, a list item.
PLACES = {
    "paragraph": ("before\n\n{}\n\nafter", "before {} after", ["p", "p", "p"]),
    "under a line": ("before\n{}\n\nafter", "before {} after", ["p", "p"]),
    "heading": ("# {}\n", "{}", ["h1", "a"]),
    "cell": ("| A | B |\n|---|---|\n| {} | x |\n", "A B {} x", None),
    "emphasis": ("*{}:* x\n", "{}: x", ["p", "em"]),
    "list item": ("- **id**: {}\n", "id: {}", ["ul", "li", "strong"]),
    "sentence start": ("{} and more words\n", "{} and more words", ["p"]),
}
ONE_LINE = st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029"), max_size=40)
MARKDOWN_BITS = st.lists(st.sampled_from(
    ["---", "***", "___", "- ", "+ ", "* ", "1. ", "2) ", "> ", "# ", "=", "-", "    ", "\t", "&lt;", "&amp;", "&#60;",
     "<b>", "</p>", "`", "``", "|", "[x](y)", "![i](y)", "\\", "{#id}", "{: .c}", "!!! note", "[TOC]", "<!--", "-->",
     "  ", "*", "_", "~~", ":", "<http://x>", "&", "#", "==="]), max_size=6).map("".join)


@pytest.mark.parametrize("place", sorted(PLACES))
@settings(max_examples=150, deadline=None)
@given(text=st.one_of(ONE_LINE, MARKDOWN_BITS, st.tuples(MARKDOWN_BITS, ONE_LINE).map("".join)))
@with_examples("---", "- item", "1. one", "1.", "=", "===", "&lt;b&gt;", "+ x", "> q", "# h", "    code", "* * *")
def test_inert_text_displays_literally_wherever_a_template_puts_it(place: str, text: str) -> None:
    source, shown, tags = PLACES[place]
    seen, seen_tags = visible(site_markdown(source.format(inert(text))))
    assert seen == folded(shown.format(folded(text)))
    if tags is not None and folded(text):  # no element from the text: no list, rule, quote, code block or heading of its own
        assert seen_tags == tags, seen_tags
