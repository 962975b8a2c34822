"""The site's navigation: the home page, then the metrics pages, then the rest as MkDocs lists it from docs/.

No `nav:` in mkdocs.yml, so a new profile's page or a new hand-written page appears
without a config edit; only the pages readers come for move up, right under the home page: the map of the
metrics (reference/metrics/index.md), then one page per catalog section in catalog order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mkdocs.structure import StructureItem
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

METRICS_DIR = "reference/metrics/"
METRICS_PAGE = METRICS_DIR + "index.md"


def section_page(section_id: str) -> str:
    """The page of one catalog section, relative to docs/."""
    return f"{METRICS_DIR}{section_id}.md"


def metrics_first(nav: Navigation, sections: Sequence[str] = ()) -> Navigation:
    """Move the metrics pages to the top of the navigation, in catalog order (`sections`: the
    catalog's section ids), dropping a section they leave empty."""
    found = _take(nav.items, lambda item: isinstance(item, Section) and _holds_map(item))
    if found is None:
        found = _take(nav.items, lambda item: isinstance(item, Page) and item.file.src_uri == METRICS_PAGE)
    if found is None:
        return nav
    found.parent = None
    if isinstance(found, Section):
        order = {section_page(s): n for n, s in enumerate(sections)}

        def rank(item: object) -> tuple[int, int]:
            uri = item.file.src_uri if isinstance(item, Page) else ""
            return (0, 0) if uri == METRICS_PAGE else (1, order.get(uri, len(order)))

        found.children.sort(key=rank)
    home = next((i for i, it in enumerate(nav.items) if isinstance(it, Page) and it.is_homepage), None)
    nav.items.insert(0 if home is None else home + 1, found)
    # Previous and next links follow the order on screen.
    nav.pages = _pages(nav.items)
    for before, after in zip([None, *nav.pages], [*nav.pages, None]):
        if before is not None:
            before.next_page = after
        if after is not None:
            after.previous_page = before
    return nav


def _holds_map(section: Section) -> bool:
    return any(isinstance(c, Page) and c.file.src_uri == METRICS_PAGE for c in section.children)


def _take(items: list[StructureItem], want: Callable[[object], bool]) -> StructureItem | None:
    """Remove the first item `want` accepts, searching nested sections; drop sections left empty."""
    for item in list(items):
        if want(item):
            items.remove(item)
            return item
        if isinstance(item, Section):
            inner = _take(item.children, want)
            if inner is not None:
                if not item.children:
                    items.remove(item)
                return inner
    return None


def _pages(items: list[StructureItem]) -> list[Page]:

    out: list[Page] = []
    for item in items:
        if isinstance(item, Page):
            out.append(item)
        elif isinstance(item, Section):
            out += _pages(item.children)
    return out
