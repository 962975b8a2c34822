"""`metrics-manual list` and the bare command: what the manual documents, for people and scripts."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from metrics_manual.source.load import load_manual


def test_list_metrics_json_names_each_key_its_section_unit_and_the_profiles_that_range_it(tiny: Path) -> None:
    result = run_cli("list", "metrics", "--format", "json", "--root", str(tiny))
    assert result.returncode == 0, result.stderr
    rows = {r["key"]: r for r in json.loads(result.stdout)}
    manual = load_manual(tiny)
    assert list(rows) == [m.key for s in manual.catalog.sections for m in s.metrics]
    for section in manual.catalog.sections:
        for metric in section.metrics:
            row = rows[metric.key]
            assert (row["section"], row["unit"], row["meaning"]) == (section.id, metric.unit, metric.meaning)
            keys = metric.members or [metric.key]
            ranged = [p.id for p in manual.profiles if any(p.expectations.get(k) for k in keys)]
            assert row["profiles"] == ranged
    assert any(r["profiles"] for r in rows.values()) and any(not r["profiles"] for r in rows.values())


def test_list_profiles_counts_what_each_profile_ranges(tiny: Path) -> None:
    (tiny / "ranges/profiles/empty.yaml").write_text(
        (tiny / "ranges/profiles/tiny.yaml")
        .read_text("utf-8")
        .replace("id: tiny", "id: empty")
        .replace("tiny-notes", "empty-notes")
        .split("expectations:")[0],
        "utf-8",
    )
    result = run_cli("list", "profiles", "--format", "json", "--root", str(tiny))
    assert result.returncode == 0, result.stderr
    rows = {r["id"]: r for r in json.loads(result.stdout)}
    tiny_profile = load_manual(tiny).profile("tiny")
    assert rows["tiny"]["expectations"] == sum(len(v) for v in tiny_profile.expectations.values())
    assert rows["tiny"]["setup"]["steps"] == tiny_profile.setup.steps
    assert rows["empty"]["expectations"] == 0 and rows["empty"]["metrics"] == 0


def test_list_text_is_a_table_with_a_count(tiny: Path) -> None:
    result = run_cli("list", "metrics", "--root", str(tiny))
    lines = result.stdout.splitlines()
    assert result.returncode == 0 and lines[0].split() == ["KEY", "SECTION", "UNIT", "RANGED", "BY"]
    assert lines[-1] == f"{len(lines) - 2} metrics in 2 sections"
    assert any(line.startswith("train/grad_norm ") and line.rstrip().endswith("tiny") for line in lines)


def test_list_on_an_invalid_source_is_bad_input(tiny: Path) -> None:
    (tiny / "ranges/catalog.yaml").write_text("title: [\n", "utf-8")
    result = run_cli("list", "metrics", "--root", str(tiny))
    assert result.returncode == 2 and "ranges/catalog.yaml:" in result.stderr


def test_the_bare_command_prints_the_overview_and_exits_0() -> None:
    result = run_cli()
    assert result.returncode == 0
    for command in ("validate", "build", "check", "export", "judge", "derive", "coverage", "list"):
        assert f"  {command} " in result.stdout
