"""derive --write is all or nothing: every target checked before the first write, and a write that
fails midway undoes what the run wrote; a project without ranges/profiles/ gets its first profile.

The first and the symlinked capture come from the hostile-input review (branch attack).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import run_cli, snapshot
from derive_helpers import seed_run, seeds_project, write_runs
from metrics_manual.derive import plan as derive_plan
from metrics_manual.derive import write as derive_write
from metrics_manual.disk.files import WriteError
from metrics_manual.source.load import load_manual

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


def _no_profiles_folder(root: Path) -> Path:
    project = seeds_project(root)
    (project / "ranges" / "profiles" / "seeds.yaml").unlink()
    (project / "ranges" / "profiles").rmdir()
    return project


def _derive_new(project: Path, runs: dict[str, Path], *extra: str) -> Any:
    args = [f"--run={name}={path}" for name, path in runs.items()]
    return run_cli("derive", "--root", str(project), "--profile", "fresh", *NEW_PROFILE_SETUP, *args, *extra)


def test_a_new_profile_without_a_profiles_folder_is_shown_and_nothing_is_made(tmp_path: Path) -> None:
    project = _no_profiles_folder(tmp_path / "proj")
    runs = write_runs(tmp_path / "runs", {"s1": seed_run(1)})
    before = snapshot(project)
    out = _derive_new(project, runs)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "--- /dev/null\n+++ b/ranges/profiles/fresh.yaml" in out.stdout
    assert snapshot(project) == before and not (project / "ranges" / "profiles").exists()


def test_a_new_profile_without_a_profiles_folder_makes_the_folder_with_write(tmp_path: Path) -> None:
    project = _no_profiles_folder(tmp_path / "proj")
    runs = write_runs(tmp_path / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    out = _derive_new(project, runs, "--write")
    assert out.returncode == 0, out.stdout + out.stderr
    assert [p.name for p in (project / "ranges" / "profiles").iterdir()] == ["fresh.yaml"]
    assert set(load_manual(project).profile("fresh").sources) == {"s1", "s2"}


def _then(monkeypatch: pytest.MonkeyPatch, act: Any) -> None:
    """Run `act(project)` after derive has planned and before it writes: another program's change meanwhile."""
    plan = derive_plan.plan_derivation

    def planned(project: Path, *args: Any, **kwargs: Any) -> Any:
        p = plan(project, *args, **kwargs)
        act(project)
        return p

    monkeypatch.setattr(derive_plan, "plan_derivation", planned)  # the command imports it when it runs


def test_a_profiles_folder_linked_in_after_the_plan_is_not_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _no_profiles_folder(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1)})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _then(monkeypatch, lambda root: (root / "ranges" / "profiles").symlink_to(elsewhere))
    out = _derive_new(project, runs, "--write")
    assert out.returncode == 2 and "ranges/profiles is a symlink" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
    assert not any(elsewhere.iterdir())
    assert not (project / "captures").exists(), "exit 2, yet a capture was written"


def test_a_capture_that_is_a_symlink_stops_the_run_before_any_capture_is_written(tmp_path: Path) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    (project / "captures" / "fresh").mkdir(parents=True)
    (project / "captures" / "fresh" / "s2.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    before = snapshot(project)
    out = _derive_new(project, runs, "--write")
    assert out.returncode == 2 and "captures/fresh/s2.jsonl is a symlink" in out.stderr, out.stderr
    assert not (project / "captures" / "fresh" / "s1.jsonl").exists(), "exit 2, yet one capture was written"
    assert snapshot(project) == before and not (tmp_path / "elsewhere.jsonl").exists()
    assert "wrote " not in out.stdout and "nothing was written" in out.stderr


@pytest.mark.parametrize(
    ("plant", "message"),
    [
        (lambda p: p.mkdir(), "a folder stands there"),
        (lambda p: p.write_bytes(b"\xff\xfe not a capture\n"), "holds no UTF-8 text"),
    ],
    ids=["a-folder", "not-utf-8"],
)
def test_a_capture_derive_cannot_replace_stops_the_run_before_any_capture_is_written(
    tmp_path: Path, plant: Any, message: str
) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    (project / "captures" / "fresh").mkdir(parents=True)
    plant(project / "captures" / "fresh" / "s2.jsonl")
    before = snapshot(project)
    out = _derive_new(project, runs, "--write")
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert snapshot(project) == before and not (project / "ranges" / "profiles" / "fresh.yaml").exists()


def test_a_new_profile_file_that_appears_after_the_plan_stops_the_run_before_the_captures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    planted = "id: someone-else\n"
    _then(monkeypatch, lambda root: (root / "ranges" / "profiles" / "fresh.yaml").write_text(planted, "utf-8"))
    out = _derive_new(project, runs, "--write")
    assert out.returncode == 2 and "ranges/profiles/fresh.yaml exists" in out.stderr, out.stderr
    assert (project / "ranges" / "profiles" / "fresh.yaml").read_text("utf-8") == planted
    assert not (project / "captures").exists()


def test_a_profile_edited_after_the_plan_is_not_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    profile = project / "ranges" / "profiles" / "seeds.yaml"
    _then(monkeypatch, lambda root: profile.write_text(profile.read_text("utf-8") + "# a hand edit\n", "utf-8"))
    args = [f"--run={name}={path}" for name, path in runs.items()]
    out = run_cli("derive", "--root", str(project), "--profile", "seeds", *args, "--write")
    assert out.returncode == 2 and "changed since derive read it" in out.stderr, out.stderr
    assert profile.read_text("utf-8").endswith("# a hand edit\n")
    assert not (project / "captures").exists()


def _failing_write(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The first write of a file called `name` fails as a full disk would, after every check passed."""
    real = derive_write.write_real_file
    failed: list[Path] = []

    def write(base: Path, target: Path, text: str) -> None:
        if target.name == name and not failed:
            failed.append(target)
            raise WriteError(f"cannot write {target}: No space left on device")
        real(base, target, text)

    monkeypatch.setattr(derive_write, "write_real_file", write)


def test_a_write_that_fails_midway_removes_what_the_run_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _no_profiles_folder(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    before = snapshot(project)
    _failing_write(monkeypatch, "fresh.yaml")  # the profile: written after both captures
    out = _derive_new(project, runs, "--write")
    assert out.returncode == 2 and "No space left on device" in out.stderr, out.stderr
    assert "nothing was written" in out.stderr
    assert snapshot(project) == before
    # The folders this run made are gone too; nothing hidden is left.
    assert not (project / "captures").exists() and not (project / "ranges" / "profiles").exists()
    assert sorted(p.relative_to(project).as_posix() for p in project.rglob(".*")) == []


def test_a_write_that_fails_midway_restores_the_files_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = seeds_project(tmp_path / "proj")
    runs = write_runs(project / "runs", {"s1": seed_run(1), "s2": seed_run(2)})
    # A previous derive's captures: the first is replaced before the second fails.
    folder = project / "captures" / "seeds"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text("an older capture\n", "utf-8")
    (folder / "s1.jsonl").chmod(0o640)
    before = snapshot(project)
    _failing_write(monkeypatch, "s2.jsonl")
    args = [f"--run={name}={path}" for name, path in runs.items()]
    out = run_cli("derive", "--root", str(project), "--profile", "seeds", *args, "--write")
    assert out.returncode == 2 and "No space left on device" in out.stderr, out.stderr
    assert snapshot(project) == before
    assert (folder / "s1.jsonl").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["s1.jsonl"]
