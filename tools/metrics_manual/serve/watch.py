"""`mkdocs serve` builds once per save: the watch of docs/ tells a reader's edit from the plugin's own writes.

MkDocs watches docs/ and builds again on any change there, so a save under ranges/ built twice: once for
the save, once more for the generated files that the first build wrote into docs/. Here MkDocs' watch of
docs/ is replaced by one that judges each change first. The plugin's own writes ask for nothing: a
generated file whose text is what the last build wrote (the manifest says so), a stray that build removed,
and build's bookkeeping (manifest, journal, staging). Anything else asks for a build as MkDocs' own watch
does: a hand-written page, a file added, a generated file edited by hand (the build puts it back).

Changes seen while build writes are judged once it is done, against what it wrote. A plain `mkdocs build`
and `check` never meet this: it is set up in `on_serve` only.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import get_plugin_logger
from watchdog.events import FileSystemEvent, FileSystemEventHandler

from metrics_manual.disk.files import read_text
from metrics_manual.disk.switch import JOURNAL, MANIFEST, STAGING, digest, read_manifest
from metrics_manual.text import shown_path

log = get_plugin_logger("metrics_manual.serve.plugin")  # the plugin's name in MkDocs' log lines

_BOOKKEEPING = (MANIFEST, JOURNAL, f"{JOURNAL}.new")


class DocsWatch(FileSystemEventHandler):
    """Changes under docs/ while serving: a reader's edit calls `rebuild`; the plugin's own writes do not."""

    def __init__(self, root: Path, rebuild: Callable[[str], None]) -> None:
        self.root = root
        self.rebuild = rebuild
        self._lock = threading.Lock()
        self._writing = False
        self._seen_while_writing: set[str] = set()
        self._generated = read_manifest(root)[0]  # path -> sha256 of what build last wrote
        self._removed: set[str] = set()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        paths = {str(p) for p in (event.src_path, event.dest_path) if p}
        with self._lock:
            if self._writing:
                self._seen_while_writing |= paths
                return
        self._judge(paths)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Around build's writes: what changes meanwhile is judged when they are done, against what it wrote."""
        with self._lock:
            self._writing = True
        try:
            yield
        finally:
            generated = read_manifest(self.root)[0]
            with self._lock:
                self._removed = set(self._generated) - set(generated)
                self._generated = generated
                self._writing = False
                seen, self._seen_while_writing = self._seen_while_writing, set()
            self._judge(seen)

    def _judge(self, paths: set[str]) -> None:
        """Ask for a build, naming the first changed path that is not one of build's own writes."""
        for p in sorted(paths):
            if not self._own(p):
                self.rebuild(p)
                return

    def _own(self, path: str) -> bool:
        """Whether the change at `path` is one of build's own writes."""
        try:
            rel = Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return False
        if rel in _BOOKKEEPING or rel == STAGING or rel.startswith(STAGING + "/"):
            return True
        text = read_text(self.root / rel)
        if text is None:
            return rel in self._removed
        return self._generated.get(rel) == digest(text)


def watch_docs(server: LiveReloadServer, root: Path, docs_dir: str) -> DocsWatch | None:
    """Replace MkDocs' watch of `docs_dir` by a DocsWatch; None (MkDocs' watch stays, and a save builds twice)
    when this MkDocs has no build request to call."""
    if not (hasattr(server, "_rebuild_cond") and hasattr(server, "_want_rebuild")):
        return None

    def rebuild(path: str) -> None:  # what MkDocs' own watch does on a change (LiveReloadServer.watch, MkDocs 1.6)
        log.info(f"{shown_path(os.path.relpath(path, root))} changed: building again")
        with server._rebuild_cond:
            server._want_rebuild = True
            server._rebuild_cond.notify_all()

    watch = DocsWatch(root, rebuild)
    server.unwatch(docs_dir)
    server.observer.schedule(watch, docs_dir, recursive=True)
    return watch
