"""derive on a project without ranges/profiles/, and a --write that fails half-way (the fixes belong to derive's owner)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli
from derive_helpers import seed_run, seeds_project, write_runs

NEW_PROFILE_SETUP = (
    "--title",
    "T",
    "--model",
    "M",
    "--dataset",
    "D",
    "--hardware",
    "2xGPU",
    "--prompts-per-step",
    "4",
    "--answers-per-prompt",
    "2",
    "--token-limit",
    "1024",
)


@pytest.mark.xfail(strict=True, reason="derive/plan.py validate_edit writes into a ranges/profiles/ it never made")
def test_derive_a_new_profile_without_a_profiles_folder_is_no_traceback(tmp_path: Path) -> None:
    project = seeds_project(tmp_path / "proj")
    (project / "ranges" / "profiles" / "seeds.yaml").unlink()
    (project / "ranges" / "profiles").rmdir()
    runs = write_runs(tmp_path / "runs", {"s1": seed_run(1)})
    out = run_cli(
        "derive", "--root", str(project), "--profile", "fresh", *NEW_PROFILE_SETUP, "--run", f"s1={runs['s1']}"
    )
    assert out.returncode in (0, 1, 2)


@pytest.mark.xfail(strict=True, reason="cli/derive.py writes each capture before it knows the next can be written")
def test_derive_write_that_fails_leaves_no_capture_behind(tmp_path: Path) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    (project / "captures" / "fresh").mkdir(parents=True)
    (project / "captures" / "fresh" / "s2.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    out = run_cli(
        "derive",
        "--root",
        str(project),
        "--profile",
        "fresh",
        *NEW_PROFILE_SETUP,
        "--run",
        f"s1={runs['s1']}",
        "--run",
        f"s2={runs['s2']}",
        "--write",
    )
    assert out.returncode == 2
    assert not (project / "captures" / "fresh" / "s1.jsonl").exists(), "exit 2, yet one capture was written"
