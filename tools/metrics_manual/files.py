"""Write generated files: only those that changed, each atomically, all or none."""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = "docs/.generated.json"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def manifest_text(files: dict[str, str]) -> str:
    """What build last wrote: path -> sha256. It tells hand edits and stray files apart."""
    return json.dumps({p: digest(files[p]) for p in sorted(files)}, indent=1) + "\n"


def read_manifest(root: Path) -> dict[str, str]:
    try:
        data = json.loads((root / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_text(path: Path) -> str | None:
    """The file's exact text: no newline translation, so a CRLF file compares as written."""
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@dataclass
class WriteReport:
    written: list[str] = field(default_factory=list)
    hand_edited: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0


def write_files(root: Path, files: dict[str, str]) -> WriteReport:
    """Bring the generated files on disk to `files` (plus the manifest), removing stray ones."""
    previous = read_manifest(root)
    everything = {**files, MANIFEST: manifest_text(files)}
    report = WriteReport()
    changed: dict[str, str] = {}
    originals: dict[str, str | None] = {}
    for rel, text in everything.items():
        current = read_text(root / rel)
        if current == text:
            report.unchanged += 1
            continue
        if current is not None and rel in previous and digest(current) != previous[rel]:
            report.hand_edited.append(rel)
        changed[rel], originals[rel] = text, current
    # Stage every file first, then move them in: a failure leaves the old files as they were.
    staged: list[tuple[str, Path]] = []
    try:
        for rel, text in changed.items():
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            staged.append((rel, Path(name)))
    except BaseException:
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
        raise
    done: list[str] = []
    try:
        for rel, tmp in staged:
            os.replace(tmp, root / rel)
            done.append(rel)
    except OSError:
        # Put back what was already replaced, so a failed build leaves every file as it was.
        for rel in done:
            old = originals[rel]
            if old is None:
                (root / rel).unlink(missing_ok=True)
            else:
                (root / rel).write_bytes(old.encode("utf-8"))
        for _, tmp in staged:
            tmp.unlink(missing_ok=True)
        raise
    report.written.extend(done)
    for rel in sorted(set(previous) - set(files)):
        if (root / rel).exists():
            (root / rel).unlink()
            report.removed.append(rel)
    return report
