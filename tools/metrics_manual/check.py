"""Check that docs, exports and schemas agree with ranges/, without writing anything."""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from .build import generate
from .errors import Finding
from .export import EXPORT_DIR, read_csv
from .files import MANIFEST, digest, manifest_text, read_manifest, read_text
from .load import Manual, did_you_mean, gc_paused
from .source import read_fast
from .model import ProfileExport
from .readback import REFERENCE, reference_findings

FIX = "run `metrics-manual build`"


@dataclass(frozen=True)
class Drift:
    finding: Finding
    diff: str = ""


def _first_difference(old: str, new: str) -> int:
    for i, (a, b) in enumerate(zip(old.splitlines(), new.splitlines()), start=1):
        if a != b:
            return i
    return min(len(old.splitlines()), len(new.splitlines())) + 1


def compare_files(root: Path, files: dict[str, str]) -> list[Drift]:
    """Generated files on disk against what build would write now."""
    previous = read_manifest(root)
    expected = {**files, MANIFEST: manifest_text(files)}
    out: list[Drift] = []
    for rel, text in expected.items():
        current = read_text(root / rel)
        if current is None:
            out.append(Drift(Finding(rel, 1, 1, f"generated file is missing; {FIX}")))
        elif current != text:
            line = _first_difference(current, text)
            if rel != MANIFEST and rel in previous and digest(current) != previous[rel]:
                why = f"generated file was edited by hand; edit ranges/ or templates/ instead and {FIX}"
            else:
                why = f"generated file is out of date; {FIX}"
            diff = "".join(difflib.unified_diff(current.splitlines(True), text.splitlines(True), f"a/{rel}", f"b/{rel}"))
            out.append(Drift(Finding(rel, line, 1, why), diff))
    strays = {rel for rel in previous if rel not in files}
    export_dir = root / EXPORT_DIR
    if export_dir.is_dir():
        strays |= {p.relative_to(root).as_posix() for p in export_dir.rglob("*") if p.is_file()} - set(files)
    for rel in sorted(strays):
        if (root / rel).exists():
            out.append(Drift(Finding(rel, 1, 1, f"stray generated file: build no longer makes it; {FIX} to remove it")))
    return out


_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def unknown_keys(known: set[str], rel: str, text: str) -> list[Finding]:
    """Code spans that look like a metric key (a known namespace, a slash) but name none."""
    namespaces = {k.split("/", 1)[0] for k in known}
    text = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    out = []
    for match in _CODE_SPAN.finditer(text):
        word = match.group(1).strip()
        head, _, rest = word.partition("/")
        if head in namespaces and rest and re.fullmatch(r"[\w/@.\-*]+", word) and word not in known:
            line = text.count("\n", 0, match.start()) + 1
            col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            out.append(Finding(rel, line, col, f"unknown metric {word!r}: not in ranges/catalog.yaml" + did_you_mean(word, known)))
    return out


def _load_yaml(text: str) -> object:
    # The fast reader gives what PyYAML would, or None where it cannot be sure.
    data = read_fast(text)
    return data if data is not None else yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


def export_findings(manual: Manual, files: dict[str, str]) -> list[Finding]:
    """Load each export back and compare it with the profile it came from."""
    out = []
    for p in manual.profiles:
        for suffix, load in ((".json", json.loads), (".yaml", _load_yaml)):
            rel = f"{EXPORT_DIR}/{p.id}{suffix}"
            back = ProfileExport.model_validate(load(files[rel])).to_profile()
            if back != p:
                out.append(Finding(rel, 1, 1, f"export loaded back differs from profile {p.id}"))
        rel = f"{EXPORT_DIR}/{p.id}.csv"
        back_csv = {k: v for k, v in read_csv(files[rel]).items() if v}
        if back_csv != p.expectations:
            out.append(Finding(rel, 1, 1, f"CSV loaded back differs from the expectations of profile {p.id}"))
    return out


def check(root: Path) -> list[Drift]:
    """Every way the files under root disagree with ranges/ (raises SourceError on bad input)."""
    with gc_paused():
        return _check(root)


def _check(root: Path) -> list[Drift]:
    manual, files = generate(root)
    drifts = compare_files(root, files)
    pages = {p.relative_to(root).as_posix(): read_text(p) or "" for p in sorted((root / "docs").rglob("*.md"))}
    pages.update({rel: text for rel, text in files.items() if rel.endswith(".md")})
    findings: list[Finding] = []
    known = manual.known_keys()
    for rel, text in sorted(pages.items()):
        findings += unknown_keys(known, rel, text)
    # Reading the page back also finds every catalog metric that is missing from it.
    findings += reference_findings(manual, files.get(REFERENCE, ""))
    findings += export_findings(manual, files)
    return drifts + [Drift(f) for f in findings]


def drift_json(drifts: list[Drift]) -> str:
    return json.dumps([{**asdict(d.finding), "diff": d.diff} for d in drifts], indent=2, ensure_ascii=False)
