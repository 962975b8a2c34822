"""The site's navigation: the home page, then the metrics page, then the rest as MkDocs lists it from docs/.

No `nav:` in mkdocs.yml, so a new profile's page or a new hand-written page appears
without a config edit; only the page readers come for moves up, right under the home page.
"""

from __future__ import annotations

from mkdocs.structure import StructureItem
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page

METRICS_PAGE = "reference/metrics.md"


def metrics_first(nav: Navigation) -> Navigation:
    """Move the metrics page to the top of the navigation, under the home page, dropping a section it leaves empty."""
    for item in list(nav.items):
        if isinstance(item, Page) and item.file.src_uri == METRICS_PAGE:
            nav.items.remove(item)
            break
        if isinstance(item, Section):
            found = [c for c in item.children if isinstance(c, Page) and c.file.src_uri == METRICS_PAGE]
            if found:
                item.children.remove(found[0])
                if not item.children:
                    nav.items.remove(item)
                item = found[0]
                break
    else:
        return nav
    item.parent = None
    home = next((i for i, it in enumerate(nav.items) if isinstance(it, Page) and it.is_homepage), None)
    nav.items.insert(0 if home is None else home + 1, item)
    # Previous and next links follow the order on screen.
    nav.pages = _pages(nav.items)
    for before, after in zip([None, *nav.pages], [*nav.pages, None]):
        if before is not None:
            before.next_page = after
        if after is not None:
            after.previous_page = before
    return nav


def _pages(items: list[StructureItem]) -> list[Page]:
    out: list[Page] = []
    for item in items:
        if isinstance(item, Page):
            out.append(item)
        elif isinstance(item, Section):
            out += _pages(item.children)
    return out
