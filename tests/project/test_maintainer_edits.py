"""A maintainer's ordinary edits: build, and everything agrees again (CI stays green).

On a fixture tree: the repository's site (mkdocs.yml, hand-written pages, templates) over a source of
the tests' own, with a profile whose captures are in the project and one whose captures are not. The
real tree's own agreement is tests/check's, and tests/project/test_first_day.py's on a copy where a
team followed docs/deriving.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import TINY_PROFILE, run_cli
from derive_helpers import SEEDS_CATALOG, SEEDS_PROFILE, seed_run, write_runs
from site_helpers import mkdocs_build, site_over


def fixture_tree(root: Path) -> Path:
    """The repository's site over the tests' source: `seeds` derived from three runs captured into the
    project, `tiny` with a capture kept elsewhere."""
    site_over(root, SEEDS_CATALOG, {"seeds": SEEDS_PROFILE, "tiny": TINY_PROFILE.replace("steps: 10", "steps: 12")})
    runs = write_runs(root.parent / "runs", {f"seed-{i}": seed_run(i) for i in (1, 2, 3)})
    derived = run_cli(
        "derive",
        "--profile",
        "seeds",
        *(f"--run={n}={p}" for n, p in runs.items()),
        "--capture-to",
        "captures/seeds",
        "--write",
        cwd=root,
    )
    assert derived.returncode == 0, derived.stdout + derived.stderr
    return root


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
def test_ordinary_edits_keep_docs_and_data_in_agreement(tmp_path: Path) -> None:
    root = fixture_tree(tmp_path / "manual")
    agrees(root)
    assert (root / "captures/seeds/seed-1.jsonl").is_file()  # check re-judged them: they are in the project
    captured = root / "ranges/profiles/seeds.yaml"
    data = load(captured)
    # 1. Change a band of the profile whose captures are in the project (wider: they still pass).
    assert widen_first_band(data)
    save(captured, data)
    # 2. Add a metric, with a range on the profile whose captures are elsewhere.
    catalog = load(root / "ranges/catalog.yaml")
    catalog["sections"].append(
        {
            "id": "added-by-a-maintainer",
            "title": "Added",
            "metrics": [{"key": "train/added_metric", "meaning": "a metric added by a maintainer", "unit": "s"}],
        }
    )
    save(root / "ranges/catalog.yaml", catalog)
    tiny = load(root / "ranges/profiles/tiny.yaml")
    tiny["expectations"]["train/added_metric"] = [{"kind": "median", "value": 12.5, "steps": 3}]
    save(root / "ranges/profiles/tiny.yaml", tiny)
    # 3. Add a profile whose source ids contain digits (a copy of the captured one: its captures are judged too).
    save(root / "ranges/profiles/seeds1to3.yaml", renamed_copy(data, "seeds1to3"))
    agrees(root)
    reference = "\n".join(p.read_text("utf-8") for p in sorted((root / "docs/reference/metrics").glob("*.md")))
    assert "train/added_metric" in reference and "Copy seeds1to3" in reference
    # 4. Remove a profile: the captured one.
    captured.unlink()
    agrees(root)
    assert not (root / "docs/profiles/seeds.md").exists()
    assert not re.search(r"\bseeds\.json\b", (root / "docs/.generated.json").read_text("utf-8"))
    result = mkdocs_build(root, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
