"""The watch of docs/ while serving (serve/watch.py): a reader's edit asks for a build, build's own writes do not."""

from __future__ import annotations

from pathlib import Path

from watchdog.events import FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent

from conftest import TINY_PROFILE, run_build
from metrics_manual.build import build
from metrics_manual.disk.switch import MANIFEST, STAGING
from metrics_manual.serve.watch import DocsWatch


def watching(root: Path) -> tuple[DocsWatch, list[str]]:
    asked: list[str] = []
    return DocsWatch(root, lambda path: asked.append(Path(path).relative_to(root).as_posix())), asked


def test_builds_own_writes_ask_for_no_build(tiny: Path) -> None:
    run_build(tiny)
    watch, asked = watching(tiny)
    profile = tiny / "ranges/profiles/tiny.yaml"
    profile.write_text(TINY_PROFILE.replace("max: 0.9", "max: 0.95"), "utf-8")
    page = tiny / "docs/profiles/tiny.md"
    with watch.writing():
        build(tiny)
        # What the watch sees of the switch while build writes: staged files moved in, the manifest.
        watch.on_any_event(FileMovedEvent(str(tiny / STAGING / "docs/profiles/tiny.md"), str(page)))
        watch.on_any_event(FileModifiedEvent(str(tiny / MANIFEST)))
    watch.on_any_event(FileModifiedEvent(str(page)))  # seen after the build: what it wrote
    watch.on_any_event(FileDeletedEvent(str(tiny / STAGING / "docs/profiles/tiny.md")))
    assert asked == []


def test_a_readers_edits_ask_for_a_build(tiny: Path) -> None:
    run_build(tiny)
    watch, asked = watching(tiny)
    page = tiny / "docs/profiles/tiny.md"
    page.write_text(page.read_text("utf-8") + "\nHAND EDIT\n", "utf-8")  # a generated page edited by hand
    watch.on_any_event(FileModifiedEvent(str(page)))
    hand = tiny / "docs/notes.md"
    hand.write_text("# Notes\n", "utf-8")  # a hand-written page
    watch.on_any_event(FileCreatedEvent(str(hand)))
    page.unlink()  # a generated page deleted by hand: build makes it again
    watch.on_any_event(FileDeletedEvent(str(page)))
    assert asked == ["docs/profiles/tiny.md", "docs/notes.md", "docs/profiles/tiny.md"]  # each names its file


def test_a_readers_edit_while_build_writes_asks_once_it_is_done(tiny: Path) -> None:
    run_build(tiny)
    watch, asked = watching(tiny)
    hand = tiny / "docs/notes.md"
    with watch.writing():
        hand.write_text("# Notes\n", "utf-8")
        watch.on_any_event(FileCreatedEvent(str(hand)))
        assert asked == []  # judged once build is done, against what it wrote
    assert asked == ["docs/notes.md"]


def test_a_stray_build_removes_asks_for_no_build(tiny: Path) -> None:
    second = TINY_PROFILE.replace("id: tiny", "id: old").replace("tiny-notes", "old-notes")
    (tiny / "ranges/profiles/old.yaml").write_text(second, "utf-8")
    run_build(tiny)
    watch, asked = watching(tiny)
    (tiny / "ranges/profiles/old.yaml").unlink()
    with watch.writing():
        build(tiny)
    assert not (tiny / "docs/profiles/old.md").exists()
    watch.on_any_event(FileDeletedEvent(str(tiny / "docs/profiles/old.md")))
    assert asked == []
