"""Check that docs, exports and schemas agree with ranges/, without writing anything."""
from __future__ import annotations

import difflib
import html
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path


from .build import generate
from .errors import Finding
from .export import EXPORT_DIR, read_csv
from .files import MANIFEST, digest, manifest_text, read_manifest, read_text
from .load import Manual, did_you_mean, gc_paused
from .source import read_yaml
from .model import AtStep, Band, Exact, Expectation, Median, ProfileExport

REFERENCE = "docs/reference/metrics.md"
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


def _numbers(e: Expectation) -> list[float]:
    nums: list[float | int | None] = []
    if isinstance(e, Band):
        nums = [e.min, e.max, e.steps, e.window.first if e.window else None]
    elif isinstance(e, Median):
        nums = [e.value, e.steps]
    elif isinstance(e, Exact):
        nums = [e.value, e.at.step if isinstance(e.at, AtStep) else None]
    return [float(n) for n in nums if n is not None]


def _cells(row: str) -> list[str]:
    return [html.unescape(c).strip() for c in row.strip().strip("|").split("|")]


def reference_findings(manual: Manual, page: str) -> list[Finding]:
    """Read the reference page back as data and compare it with the model."""
    out: list[Finding] = []
    lines = page.splitlines()

    def bad(i: int, message: str) -> None:
        out.append(Finding(REFERENCE, i + 1, 1, f"reference page disagrees with ranges/: {message}"))

    rows: dict[str, tuple[int, list[str]]] = {}
    sections: list[str] = []
    for i, line in enumerate(lines):
        if m := re.match(r"^## .* \{#s-ref-([\w-]+)\}$", line):
            sections.append(m.group(1))
        if m := re.match(r'^\| <span id="([^"]+)"></span>', line):
            rows[m.group(1)] = (i, _cells(line))
    want_sections = [s.id for s in manual.catalog.sections]
    if sections[: len(want_sections)] != want_sections:
        bad(0, f"sections {sections[:len(want_sections)]} instead of {want_sections}")
    for section in manual.catalog.sections:
        for metric in section.metrics:
            if metric.anchor not in rows:
                bad(0, f"catalog metric {metric.key} does not appear on it")
                continue
            i, cells = rows[metric.anchor]
            if len(cells) != 3 + len(manual.profiles):
                bad(i, f"row of {metric.key} has {len(cells)} cells, not {3 + len(manual.profiles)}")
                continue
            if " ".join(metric.meaning.split()) != cells[1]:
                bad(i, f"meaning of {metric.key} reads {cells[1]!r}, not {metric.meaning!r}")
            if (metric.unit or "") != cells[2]:
                bad(i, f"unit of {metric.key} reads {cells[2]!r}, not {metric.unit!r}")
            for p, cell in zip(manual.profiles, cells[3:]):
                exps = p.expectations.get(metric.key, [])
                if not exps:
                    if cell != "no range":
                        bad(i, f"{metric.key} on {p.id} reads {cell!r}, not 'no range'")
                    continue
                rest = cell
                for e in exps:
                    if e.condition:
                        cond = " ".join(e.condition.split())
                        if cond not in rest:
                            bad(i, f"condition {cond!r} of {metric.key} on {p.id} is missing")
                        rest = rest.replace(cond, " ")
                got = sorted(float(n.replace(",", "")) for n in re.findall(r"-?\d[\d,]*(?:\.\d+)?", rest))
                want = sorted(n for e in exps for n in _numbers(e))
                if got != want:
                    bad(i, f"{metric.key} on {p.id} shows the numbers {got}, the source has {want}")
                kinds = Counter(e.kind for e in exps)
                if rest.count("median") != kinds["median"] or rest.count("logged in every step") != kinds["presence"]:
                    bad(i, f"{metric.key} on {p.id} reads {cell!r}, which does not match its {sum(kinds.values())} expectations")
    return out


def _load_yaml(text: str) -> object:
    # The source's own reader: it reads the exporter's YAML as yaml.safe_load does, several times faster.
    return read_yaml(text, "export", positions=False)[0].data


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
