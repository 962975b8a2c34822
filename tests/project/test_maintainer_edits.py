"""A maintainer's ordinary edits to the real tree: build, and everything agrees again (CI stays green)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import run_cli
from site_helpers import mkdocs_build


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text("utf-8"))


def save(path: Path, data: dict) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), "utf-8")


def widen_first_band(data: dict) -> bool:
    for exps in data.get("expectations", {}).values():
        for e in exps:
            if e["kind"] == "band" and e.get("max") is not None:
                e["max"] = e["max"] * 2 + 1
                return True
    return False


def renamed_copy(data: dict, new_id: str) -> dict:
    """A second profile: new id, source ids with digits, notes renamed so anchors stay unique."""
    copy = yaml.safe_load(yaml.safe_dump(data))
    copy["id"], copy["title"] = new_id, f"Copy {new_id}"
    ids = {old: f"{new}-{i}" for i, (old, new) in enumerate(zip(copy["sources"], ["seeds1to3", "run-2026"] * 50))}
    copy["sources"] = {ids[k]: v for k, v in copy["sources"].items()}
    notes = {n["id"]: f"{new_id}-{n['id']}" for n in copy.get("notes", [])}
    for note in copy.get("notes", []):
        note["id"] = notes[note["id"]]
        note["sources"] = [ids[s] for s in note.get("sources", [])]
    for note in copy.get("section_notes", {}).values():
        if note.get("see"):
            note["see"] = notes[note["see"]]
    for exps in copy.get("expectations", {}).values():
        for e in exps:
            e["sources"] = [ids[s] for s in e.get("sources", [])]
    # Every range gets these sources: numbers in source ids must not read as numbers of a range.
    first = next(iter(copy["expectations"].values()), None)
    if first:
        first[0]["sources"] = list(ids.values())
    return copy


def agrees(root: Path) -> None:
    built = run_cli("build", "--root", str(root))
    assert built.returncode == 0, built.stdout + built.stderr
    checked = run_cli("check", "--root", str(root))
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.slow
def test_ordinary_edits_keep_docs_and_data_in_agreement(repo_copy: Path, tmp_path: Path) -> None:
    profiles = sorted((repo_copy / "ranges/profiles").glob("*.y*ml"))
    original = profiles[0]
    data = load(original)
    # 1. Change a band (or add one, should the profile have none).
    if not widen_first_band(data):
        key = next(iter(load(repo_copy / "ranges/catalog.yaml")["sections"][0]["metrics"]))["key"]
        data.setdefault("expectations", {})[key] = [{"kind": "band", "min": 0, "max": 1}]
    save(original, data)
    # 2. Add a metric, with a range.
    catalog = load(repo_copy / "ranges/catalog.yaml")
    catalog["sections"].append(
        {
            "id": "added-by-a-maintainer",
            "title": "Added",
            "metrics": [{"key": "train/added_metric", "meaning": "a metric added by a maintainer", "unit": "s"}],
        }
    )
    save(repo_copy / "ranges/catalog.yaml", catalog)
    data["expectations"]["train/added_metric"] = [{"kind": "median", "value": 12.5, "steps": 3}]
    save(original, data)
    # 3. Add a profile whose source ids contain digits.
    save(repo_copy / "ranges/profiles/seeds1to3.yaml", renamed_copy(data, "seeds1to3"))
    agrees(repo_copy)
    reference = "\n".join(p.read_text("utf-8") for p in sorted((repo_copy / "docs/reference/metrics").glob("*.md")))
    assert "train/added_metric" in reference and "Copy seeds1to3" in reference
    # 4. Remove a profile: the first one, whatever it is.
    original.unlink()
    agrees(repo_copy)
    assert not (repo_copy / f"docs/profiles/{data['id']}.md").exists()
    assert not re.search(rf"\b{re.escape(data['id'])}\.json\b", (repo_copy / "docs/.generated.json").read_text("utf-8"))
    result = mkdocs_build(repo_copy, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
