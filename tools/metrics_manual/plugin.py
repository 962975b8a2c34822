"""MkDocs plugin: regenerate the pages on every (re)build and fill facts into hand-written pages.

With `watch: [ranges, templates]` in mkdocs.yml, `mkdocs serve` rebuilds on a
YAML edit; this plugin then writes only the generated files whose content
changed, so the one extra rebuild that those writes cause finds nothing to write.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from .build import build
from .errors import ManualError
from .export import CSV_COLUMNS
from .load import Manual
from .render import environment, template_error
from .site_nav import metrics_first

log = get_plugin_logger(__name__)


class MetricsManualPlugin(BasePlugin):
    def __init__(self) -> None:
        self.manual: Manual | None = None
        self.root = Path(".")
        self.env: jinja2.Environment | None = None

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        self.env = environment(self.root / "templates")
        return config

    def on_pre_build(self, config: MkDocsConfig) -> None:
        try:
            self.manual, todo = build(self.root)
        except ManualError as err:
            raise PluginError(f"metrics-manual: the source is invalid or cannot be written; nothing was written:\n{err}") from None
        for rel in todo.hand_edited:
            log.warning(f"overwrote hand edits in {rel}")
        if todo.write or todo.remove:
            log.info(f"wrote {len(todo.write)} generated file(s), removed {len(todo.remove)}")

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        return metrics_first(nav)

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Pages with `facts: true` in their front matter are Jinja templates over the model."""
        if not page.meta.get("facts") or self.manual is None or self.env is None:
            return markdown
        context: dict[str, Any] = {
            "manual": self.manual, "catalog": self.manual.catalog, "profiles": self.manual.profiles,
            "csv_columns": CSV_COLUMNS,
        }
        try:
            return self.env.from_string(markdown).render(context)
        except jinja2.TemplateError as exc:
            err = template_error(exc, self.root)
            raise PluginError(f"metrics-manual: in docs/{page.file.src_uri}: {err}") from None
