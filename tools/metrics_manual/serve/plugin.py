"""MkDocs plugin: regenerate the pages on every (re)build and fill facts into hand-written pages.

With `watch: [ranges, templates]` in mkdocs.yml, `mkdocs serve` rebuilds on a
YAML edit; this plugin then writes only the generated files whose content
changed, and those writes start no second build (serve/watch.py).

`mkdocs build` fails on an invalid source. `mkdocs serve` does not: a failed build
would leave the browser waiting for a site that never comes, so the plugin keeps
the last good pages and shows the findings on top of every page until a good save.
"""

from __future__ import annotations

import contextlib
import html
import json
import logging
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import jinja2
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin, get_plugin_logger
from mkdocs.structure.files import File, Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page
from mkdocs.utils import CountHandler

from metrics_manual.build import build
from metrics_manual.diagnostics.finding import ManualError, SourceError
from metrics_manual.disk.switch import settle
from metrics_manual.exports.csv_table import CSV_COLUMNS
from metrics_manual.exports.names import FORMATS
from metrics_manual.exports.profile import NO_SITE_URL
from metrics_manual.exports.prometheus import STEP_RULE_FOR
from metrics_manual.history.changes import PAGE as CHANGES_PAGE
from metrics_manual.history.changes import changes_page, changes_page_without_history, history_head
from metrics_manual.runs.forms import FORMS as RUN_FORMS
from metrics_manual.runs.samples import sample_values
from metrics_manual.serve.watch import DocsWatch, watch_docs
from metrics_manual.site.cite import for_build
from metrics_manual.site.nav import METRICS_DIR, metrics_first
from metrics_manual.site.render import environment, template_error
from metrics_manual.source.load import Manual

log = get_plugin_logger(__name__)


# Search runs Material's lunr in the browser over search_index.json, which `index_entries` completes.
# Its separator (mkdocs.yml) ends words at spaces and hyphens only (lunr's query parser splits a typed
# term at a hyphen whatever the separator), so a key, or a fragment of one typed as `rollout_kl`, is one
# term: it matches the words that start with it. Each metric entry carries its key's tails, one from each
# part on (`train/train_rollout_kl`: `train_rollout_kl`, `rollout_kl`, `kl`), in a field of its own: a
# fragment of a key typed from a part on finds the keys that hold it as typed, and no other; words typed
# apart (`rollout kl`) find every key holding them. The field outweighs titles 100 to 1, which outweigh
# text 1000 to 1, so an entry's title (its key, cut at hyphens) only breaks ties. An entry's document
# weighs more than a page's, and among keys a query matches alike the key of fewer parts weighs more
# (`grad_norm`: `train/grad_norm` before `train/critic-grad_norm`).
KEY_FIELD = "key"
KEY_OVER_TITLE = 100
_PART = re.compile(r"[/_\-]")


def entry_boost(parts: int) -> float:
    return 1 + 4 / max(1, parts)


def key_tails(key: str, separator: re.Pattern[str]) -> list[str]:
    """The words of `key` from each of its parts on, cut as search cuts them, once each: what a reader
    may type of it, from the start of any part."""
    tails = [key, *(key[m.end() :] for m in _PART.finditer(key))]
    return list(dict.fromkeys(word for tail in tails for word in separator.split(tail) if re.search(r"\w", word)))


def index_entries(index: Path, manual: Manual) -> None:
    """Give each metric entry of the search index the search plugin wrote its key's tails and its weight."""
    try:
        data = json.loads(index.read_text("utf-8"))
    except (OSError, ValueError):
        return  # no search plugin, or no index: nothing to rank
    anchors = {m.anchor: key for key, m in manual.metrics.items()}
    config = data.setdefault("config", {})
    separator = re.compile(config.get("separator") or r"[\s\-]+")
    fields = config.setdefault("fields", {})
    fields[KEY_FIELD] = {"boost": KEY_OVER_TITLE * fields.get("title", {}).get("boost", 1000.0)}
    for doc in data.get("docs", []):
        page, _, anchor = str(doc.get("location", "")).partition("#")
        if anchor in anchors and page.startswith(METRICS_DIR):  # the entries, not the Changes page's sections
            key = anchors[anchor]
            doc["boost"] = entry_boost(len([w for w in _PART.split(key) if w]))
            doc[KEY_FIELD] = " ".join(key_tails(key, separator))
    index.write_text(json.dumps(data, separators=(",", ":")), "utf-8")


_CODE_BLOCK = re.compile(r"(<pre[^>]*><code[^>]*>)([^<]*)(</code></pre>)")
_TOKEN = re.compile(r"\S+")


def whole_tokens(html_text: str) -> str:
    """Each run of non-space characters of a code block in a `mm-tok` span that never breaks inside
    (extra.css): a browser would break `--code-commit` after a hyphen; lines wrap at spaces only.
    Only blocks of plain text (escaped, no tags) are touched; their text stays byte for byte."""

    def tokens(m: re.Match[str]) -> str:
        return m.group(1) + _TOKEN.sub(lambda t: f'<span class="mm-tok">{t.group()}</span>', m.group(2)) + m.group(3)

    return _CODE_BLOCK.sub(tokens, html_text)


# A drawing is finished HTML on one line of a generated page (site/svg.py escapes every text in it).
# Markdown adds nothing to it and search leaves it out, yet parsing it was most of the build:
# the plugin holds each one out of Markdown and search, and puts it back into the finished page.
# A drawing inside a list item is indented (its profile's block of ranges): the indent stays, the item goes on.
_FINISHED = re.compile(r'^([ \t]*)(<div class="mm-(?:figure|curves)" data-search-exclude>.*</div>)$', re.MULTILINE)
_SLOT = re.compile(r'<div class="mm-slot" data-mm-slot="(\d+)"></div>')


def _problem(exc: BaseException, root: Path) -> str:
    """Why the pages were not updated, as the command says it: findings as `path:line:col: error: ...`,
    a write error as its message (build leaves the old files when it cannot write them)."""
    if isinstance(exc, SourceError):
        return f"the source is invalid; nothing was written:\n{exc}"
    if isinstance(exc, ManualError):
        return str(exc)
    # Not expected from build (it reports these itself); never a traceback all the same.
    # (RecursionError or OSError.)
    if not isinstance(exc, OSError):
        return "a file under ranges/ nests too deeply to read; nothing was written"
    return f"cannot read or write {_display_path(exc.filename, root)}: {exc.strerror}; nothing was changed"


def _display_path(filename: str | None, root: Path) -> str:
    """A path as the reader knows it: relative to the project, the folder for a staged temp file."""
    if not filename:
        return "the generated files"
    path = Path(filename)
    if path.name.startswith(".") and path.name.endswith(".tmp"):
        path = path.parent
    try:
        return path.resolve().relative_to(root).as_posix() + ("/" if path.is_dir() else "")
    except ValueError:
        return str(path)


def _head(root: Path) -> str | None:
    try:
        return history_head(root)
    except ManualError:
        return None


def _tell_terminal(message: str) -> None:
    """An error line in the terminal of `mkdocs serve`, through MkDocs' own handler but not its logger:
    `strict` counts what the logger sees and would fail the rebuild, which makes the browser wait."""
    record = logging.LogRecord("mkdocs.plugins.metrics_manual", logging.ERROR, __file__, 0, message, None, None)
    handlers = [h for h in logging.getLogger("mkdocs").handlers if h.get_name() == "MkDocsStreamHandler"]
    if handlers:
        handlers[0].handle(record)
    else:  # pragma: no cover - MkDocs always installs its stream handler
        print(f"ERROR    -  {message}", file=sys.stderr)


def facts(manual: Manual) -> dict[str, Any]:
    """What a hand-written page with `facts: true` is rendered over: the model, and the lists the code
    defines (the export formats, the run forms, what a form's reader reads from its sample), so that
    no page types them again."""
    return {
        "manual": manual,
        "catalog": manual.catalog,
        "profiles": manual.profiles,
        "csv_columns": CSV_COLUMNS,
        "rule_for": STEP_RULE_FOR,
        "export_formats": FORMATS,
        "run_forms": RUN_FORMS,
        "read_sample": lambda form: sample_values(form, manual.catalog.step_keys),
    }


class MetricsManualPlugin(BasePlugin):  # type: ignore[type-arg,no-untyped-call]  # MkDocs' untyped generic base
    def __init__(self) -> None:
        self.manual: Manual | None = None
        self.root = Path(".")
        self.env: jinja2.Environment | None = None
        self.serving = False
        self.problem: str | None = None  # while serving: why the pages are those of the last good build
        self.cite: Callable[[str], str] = lambda text: text
        self.held: dict[str, list[str]] = {}  # page -> its drawings, held out of Markdown and search
        self.changes: tuple[Any, str] | None = None  # (HEAD and catalog keys, the Changes page): serve rebuilds often
        self.docs_watch: DocsWatch | None = None  # while serving: the watch of docs/ that skips build's own writes

    def on_startup(self, *, command: Literal["build", "gh-deploy", "serve"], dirty: bool) -> None:
        self.serving = command == "serve"

    def on_serve(self, server: LiveReloadServer, config: MkDocsConfig, builder: Callable[..., Any]) -> LiveReloadServer:
        self.serving = True  # also `mkdocs serve --clean`, which starts up as a "build"
        self.docs_watch = watch_docs(server, self.root, config.docs_dir)  # one build per save (serve/watch.py)
        return server

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        self.root = Path(config.config_file_path).resolve().parent
        self.env = environment(self.root / "templates")
        if not getattr(config, "site_url", None) and not self.serving:
            log.info(NO_SITE_URL.removeprefix("note: "))  # info: a warning fails a strict build
        try:
            settle(self.root)  # a switch a killed build left pending: finished before MkDocs reads docs/
        except ManualError as exc:
            self._fail(f"metrics-manual: {exc}")
        return config

    def on_pre_build(self, config: MkDocsConfig) -> None:
        self.problem = None
        # Edit links and last-changed dates: in the HTML of this build only (see site/cite.py).
        self.cite = for_build(self.root, config.repo_url, config.edit_uri, config.docs_dir)
        try:
            with self.docs_watch.writing() if self.docs_watch else contextlib.nullcontext():
                self.manual, todo = build(self.root)
        except (ManualError, RecursionError, OSError) as exc:
            return self._fail(f"metrics-manual: {_problem(exc, self.root)}")
        for rel in todo.hand_edited:
            # While serving, a warning would fail the rebuild under `strict` and stall the browser.
            (log.info if self.serving else log.warning)(f"overwrote hand edits in {rel}")
        if todo.write or todo.remove:
            log.info(f"wrote {len(todo.write)} generated file(s), removed {len(todo.remove)}")

    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        """Add the Changes page, made from the git history of ranges/ (history/changes.py says why not under docs/)."""
        if self.manual is None or files.get_file_from_path(CHANGES_PAGE) is not None:
            return files
        key = (_head(self.root), tuple(self.manual.metrics))
        if self.changes is None or self.changes[0] != key:
            try:
                page = changes_page(self.root, self.manual)
            except ManualError as exc:  # git failed: the page says so rather than failing the site
                page = changes_page_without_history(self.manual, str(exc))
            self.changes = (key, page)
        files.append(File.generated(config, CHANGES_PAGE, content=self.changes[1]))
        return files

    def on_nav(self, nav: Navigation, config: MkDocsConfig, files: Files) -> Navigation:
        sections = [s.id for s in self.manual.catalog.sections] if self.manual else []
        return metrics_first(nav, sections)

    def _fail(self, message: str) -> None:
        if not self.serving:
            raise PluginError(message)
        self.problem = message.removeprefix("metrics-manual: ")
        _tell_terminal(message + "\nServing the last good pages with these findings; save a fix to reload.")

    def on_post_build(self, config: MkDocsConfig) -> None:
        if self.manual is not None:
            index_entries(Path(config.site_dir) / "search" / "search_index.json", self.manual)
        self._post_build_serving()

    def _post_build_serving(self) -> None:
        if self.serving and self.problem is not None:
            # What MkDocs warned of in this build (a link to a page never generated ...) follows from
            # the problem the banner shows; under `strict` it would fail the rebuild and stall the browser.
            for handler in logging.getLogger("mkdocs").handlers:
                if isinstance(handler, CountHandler):
                    handler.counts.clear()

    def on_page_markdown(self, markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        """Pages with `facts: true` in their front matter are Jinja templates over the model;
        drawings are held out of Markdown and search (put back in `on_post_page`)."""
        markdown = self._hold_drawings(markdown, page)
        if isinstance(page.meta.get("title"), str):
            # A title is text (generated pages take it from ranges/); themes print it as HTML.
            page.meta["title"] = html.escape(page.meta["title"])
        if not page.meta.get("facts") or self.env is None:
            return markdown
        if self.manual is None:  # serving, and the source was never valid: nothing to fill in
            return "This page is filled in from `ranges/`, which does not load; see the findings above.\n"
        try:
            return self.env.from_string(markdown).render(facts(self.manual))
        except jinja2.TemplateError as exc:
            err = template_error(exc, self.root)
            self._fail(f"metrics-manual: in docs/{page.file.src_uri}: {err}")
            return "This page is a template that does not render; see the findings above.\n"

    def _hold_drawings(self, markdown: str, page: Page) -> str:
        held: list[str] = []

        def hold(m: re.Match[str]) -> str:
            held.append(m.group(2))
            return f'{m.group(1)}<div class="mm-slot" data-mm-slot="{len(held) - 1}"></div>'

        markdown = _FINISHED.sub(hold, markdown)
        self.held[page.file.src_uri] = held
        return markdown

    def on_post_page(self, output: str, page: Page, config: MkDocsConfig) -> str:
        held = self.held.pop(page.file.src_uri, [])
        if not held:
            return output
        return _SLOT.sub(lambda m: held[int(m.group(1))] if int(m.group(1)) < len(held) else m.group(), output)

    def on_page_content(self, html_text: str, page: Page, config: MkDocsConfig, files: Files) -> str:
        if "title" not in page.meta and page.title and not page.is_homepage:
            # Material passes a title without front matter through `striptags`, which decodes entities
            # (`&lt;/title&gt;` would close the tag); as front matter it prints it as is. A title from
            # the first heading is HTML already; one from the file name is text.
            from_heading = getattr(page, "_title_from_render", None)
            page.meta["title"] = from_heading or html.escape(page.title)
        html_text = self.cite(whole_tokens(html_text))
        if self.problem is None:
            return html_text
        banner = (
            '<div class="admonition failure" id="metrics-manual-invalid" role="alert">'
            '<p class="admonition-title">metrics-manual could not update the pages: this is the last good build</p>'
            f"<pre><code>{html.escape(self.problem)}</code></pre>"
            "<p>Fix it and save: the page reloads by itself.</p></div>\n"
        )
        return banner + html_text
