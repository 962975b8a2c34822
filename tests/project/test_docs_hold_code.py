"""What the README, CONTRIBUTING.md, the hand-written pages and the pre-commit hooks say of the code holds.

These files are not rendered (or not where they say it): where they list what the code defines (the
export formats, the scripts at tools/, the folders `check` reads, the names the verdict's JSON gives its
fields), the list is held here to the code's own. The pages of the site take such lists from the
code through the plugin (`facts: true`) instead.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from pydantic import BaseModel

from conftest import REPO
from metrics_manual.derive.captures import CAPTURES
from metrics_manual.disk.switch import OUT
from metrics_manual.exports.names import EXPORT_FORMATS, FOLDER_FORMATS, FORMATS
from metrics_manual.judge.verdict import Judgement
from metrics_manual.source.load import CATALOG, COVERAGE, PROFILES


def _read(name: str) -> str:
    return (REPO / name).read_text("utf-8")


def test_readme_names_every_export_format() -> None:
    text = _read("README.md")
    intro = " ".join(text.split("\n## ", 1)[0].split())
    missing = [f.words for f in FORMATS if f.words.removeprefix("a ") not in intro]
    assert not missing, f"the README's first section does not name {missing}"
    [line] = [line for line in text.splitlines() if line.startswith("metrics-manual export ")]
    assert re.findall(r"\w+", line.split("#", 1)[1]) == list(EXPORT_FORMATS), line


def test_contributing_says_build_writes_no_folder_format() -> None:
    [row] = [line for line in _read("CONTRIBUTING.md").splitlines() if line.startswith("| `docs/export/<profile>.*`")]
    assert FOLDER_FORMATS and all(f"`{fmt}`" in row for fmt in FOLDER_FORMATS), row


def test_readme_names_every_script_at_tools() -> None:
    layout = _read("README.md").split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    scripts = sorted(p.name for p in (REPO / "tools").glob("*.py"))
    assert scripts and all(name in layout for name in scripts), scripts


def test_pre_commit_hooks_run_on_every_folder_check_reads() -> None:
    hooks = yaml.safe_load(_read(".pre-commit-hooks.yaml"))
    read_by_check = [
        CATALOG,
        COVERAGE,
        f"{PROFILES}/a.yaml",
        "templates/pages/reference/metrics.md.j2",
        f"{OUT}/index.md",
        f"{CAPTURES}/a/seed-1.jsonl",  # where derive writes a profile's captures, which check re-judges
    ]
    assert {h["id"] for h in hooks} == {"metrics-manual-check", "metrics-manual-build"}
    for hook in hooks:
        unseen = [path for path in read_by_check if not re.search(hook["files"], path)]
        assert not unseen, f"{hook['id']} does not run on {unseen}"


def _aliases(model: type[BaseModel], seen: set[type[BaseModel]]) -> set[tuple[str, str]]:
    """(Python name, JSON name) of every field of `model` and the models it holds whose names differ."""
    out: set[tuple[str, str]] = set()
    if model in seen:
        return out
    seen.add(model)
    for name, info in model.model_fields.items():
        if info.alias and info.alias != name:
            out.add((name, info.alias))
        for inner in _models(info.annotation):
            out |= _aliases(inner, seen)
    return out


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in getattr(annotation, "__args__", ()) for m in _models(arg)]


def test_judging_names_each_field_whose_json_name_differs_from_python() -> None:
    aliases = _aliases(Judgement, set())
    assert ("passed", "pass") in aliases  # the walk reaches the summary
    section = _read("docs/judging.md").split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    missing = sorted((n, a) for n, a in aliases if f".{n}`" not in section or f'`"{a}"`' not in section)
    assert not missing, f"docs/judging.md's From Python does not give these names: {missing}"
