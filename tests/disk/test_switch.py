"""What build may touch on disk (disk/switch.py): only its own files under docs/, atomically, one build at a time."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TINY_PROFILE, run_build, run_cli, snapshot
from metrics_manual.build import build as build_in_process
from metrics_manual.build import generate
from metrics_manual.disk import switch
from metrics_manual.disk.files import WriteError
from site_helpers import ENV


def generated(root: Path) -> dict[str, bytes]:
    """The generated files and build's bookkeeping, as bytes."""
    return {rel: data for rel, data in snapshot(root / "docs").items()}


# --- the manifest is untrusted -----------------------------------------------------------


def test_manifest_entries_outside_builds_own_files_are_never_deleted(tiny: Path, tmp_path: Path) -> None:
    run_build(tiny)
    canary = tmp_path / "canary.txt"
    canary.write_text("keep me", "utf-8")
    (tiny / "docs/hand.md").write_text("# mine\n", "utf-8")
    (tiny / "docs/linked").symlink_to(tmp_path)
    manifest = json.loads((tiny / switch.MANIFEST).read_text("utf-8"))
    sha = switch.digest("keep me")
    attack = {
        "../canary.txt": sha,
        str(canary): sha,
        "ranges/catalog.yaml": sha,
        "docs/../ranges/catalog.yaml": sha,
        "docs/linked/canary.txt": sha,
        "docs/hand.md": "0" * 64,
        "docs/.generated.journal": sha,
        "docs/x": 1,
    }
    (tiny / switch.MANIFEST).write_text(json.dumps({**manifest, **attack}), "utf-8")
    before = snapshot(tiny)
    result = run_cli("build", "--root", str(tiny))
    assert result.returncode == 0, result.stderr
    assert canary.read_text("utf-8") == "keep me"
    for rel in ("ranges/catalog.yaml", "docs/hand.md"):
        assert (tiny / rel).read_bytes() == before[rel]
    assert "removed" not in result.stdout.replace("0 removed", "")
    for rel in ("'../canary.txt'", "'ranges/catalog.yaml'", "'docs/../ranges/catalog.yaml'"):
        assert f"docs/.generated.json:1:1: warning: entry {rel} is ignored" in result.stderr
    assert "entry 'docs/linked/canary.txt' is ignored: docs/linked is a symlink" in result.stderr
    # The successful build rewrote the manifest: the next build is quiet.
    assert "warning" not in run_build(tiny).stderr


def test_a_hand_edited_stray_is_kept(tiny: Path) -> None:
    second = TINY_PROFILE.replace("id: tiny", "id: old").replace("tiny-notes", "old-notes")
    (tiny / "ranges/profiles/old.yaml").write_text(second, "utf-8")
    run_build(tiny)
    (tiny / "ranges/profiles/old.yaml").unlink()
    (tiny / "docs/profiles/old.md").write_text("# my notes now\n", "utf-8")
    result = run_build(tiny)
    assert (tiny / "docs/profiles/old.md").read_text("utf-8") == "# my notes now\n"
    assert "removed stray docs/export/old.json" in result.stdout
    assert "docs/profiles/old.md:1:1: error: stray file: build no longer makes it, and it was edited" in result.stderr


def test_build_never_writes_through_a_symlink(tiny: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tiny / "docs/export").symlink_to(outside, target_is_directory=True)
    before = snapshot(tiny)
    result = run_cli("build", "--root", str(tiny))
    assert result.returncode == 2
    assert "build will not write here: docs/export is a symlink" in result.stderr
    assert "Traceback" not in result.stderr
    assert list(outside.iterdir()) == []
    assert snapshot(tiny) == before


# --- a killed build leaves old or new -----------------------------------------------------------


def test_a_switch_interrupted_after_its_commit_point_is_finished(tiny: Path, monkeypatch) -> None:
    run_build(tiny)
    old = generated(tiny)
    profile = tiny / "ranges/profiles/tiny.yaml"
    profile.write_text(profile.read_text("utf-8").replace("max: 0.9", "max: 0.95"), "utf-8")
    moves = []
    real_replace = os.replace

    def die_after_two(src, dst):
        if "staging" in str(src) and len(moves) == 2:
            raise KeyboardInterrupt  # stands for a kill: nothing after this line runs
        moves.append(dst)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", die_after_two)
    with pytest.raises(KeyboardInterrupt):
        build_in_process(tiny)
    monkeypatch.setattr(os, "replace", real_replace)
    assert generated(tiny) != old and (tiny / switch.JOURNAL).exists()  # a mix, but committed
    assert run_cli("check", "--root", str(tiny)).returncode == 0  # the next command finishes the switch
    assert not (tiny / switch.JOURNAL).exists() and not (tiny / switch.STAGING).exists()
    run_build(tiny)
    assert "0 written" in run_build(tiny).stdout


def test_a_failure_half_way_through_the_switch_puts_the_old_files_back(tiny: Path, monkeypatch) -> None:
    run_build(tiny)
    old = snapshot(tiny)
    profile = tiny / "ranges/profiles/tiny.yaml"
    profile.write_text(profile.read_text("utf-8").replace("max: 0.9", "max: 0.95"), "utf-8")
    old[("ranges/profiles/tiny.yaml")] = profile.read_bytes()
    count = []
    real_replace = os.replace

    def fail_third(src, dst):
        if "staging" in str(src) and ".old" not in str(src):
            count.append(dst)
            if len(count) == 3:
                raise OSError(30, "Read-only file system", str(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", fail_third)
    with pytest.raises(WriteError, match="Read-only file system; nothing was changed"):
        build_in_process(tiny)
    assert snapshot(tiny) == old


class Killed(BaseException):
    """Stands for SIGKILL at one step of the switch: no `except OSError` catches it, nothing after it runs."""


# Every call by which the switch changes the disk: the steps a kill can fall between.
STEPS = [(switch, "write_text"), (os, "replace"), (os, "link"), (os, "unlink"), (os, "mkdir"), (shutil, "rmtree")]


def _switch_with_fault(root: Path, files: dict[str, str], monkeypatch, at: int, fault: BaseException | None) -> int:
    """Plan and apply `files` under the lock, `fault` raised at step `at` (1-based); the number of steps taken."""
    taken = 0

    def step(real):
        def call(*args, **kwargs):
            nonlocal taken
            taken += 1
            if taken == at and fault is not None:
                raise fault
            return real(*args, **kwargs)

        return call

    with switch.locked(root):
        switch.recover(root)
        todo = switch.plan(root, files)
        with monkeypatch.context() as m:
            for owner, name in STEPS:
                m.setattr(owner, name, step(getattr(owner, name)))
            switch.apply(root, todo)
    return taken


@pytest.mark.slow
@pytest.mark.parametrize("fault", [Killed(), OSError(5, "Input/output error")], ids=["kill", "error"])
def test_a_fault_at_any_step_of_the_switch_leaves_old_or_new(tiny: Path, monkeypatch, fault: BaseException) -> None:
    """A kill or a failed call at each step of build's switch, in turn: the next command sees all old or
    all new files, and no staging, journal or temporary file is left."""
    run_build(tiny)
    old = generated(tiny)
    saved = tiny.parent / "docs-old"
    shutil.copytree(tiny / "docs", saved, symlinks=True)
    profile = tiny / "ranges/profiles/tiny.yaml"
    profile.write_text(profile.read_text("utf-8").replace("Tiny runs", "Tiny runs, renamed"), "utf-8")
    _, files = generate(tiny)
    steps = _switch_with_fault(tiny, files, monkeypatch, 0, None)
    new = generated(tiny)
    assert new != old and steps > 10
    outcomes = []
    for at in range(1, steps + 1):
        shutil.rmtree(tiny / "docs")
        shutil.copytree(saved, tiny / "docs", symlinks=True)
        try:
            _switch_with_fault(tiny, files, monkeypatch, at, fault)
            outcomes.append("done")
        except Killed:
            outcomes.append("killed")
        except WriteError as err:  # "nothing was changed" before the commit point, else complete
            outcomes.append("refused" if "nothing was changed" in str(err) else "complete")
        except OSError:
            outcomes.append("oserror")
        with switch.locked(tiny):  # what the next command does first
            switch.recover(tiny)
        now = generated(tiny)
        assert now in (old, new), f"step {at} of {steps}: a mix of old and new files"
        assert not (tiny / switch.STAGING).exists() and not (tiny / switch.JOURNAL).exists()
        assert not [p for p in (tiny / "docs").rglob("*") if p.name.endswith((".tmp", ".new"))], at
        outcomes[-1] += "/new" if now == new else "/old"
    # Both sides of the commit point were hit: a kill before it leaves the old files, after it the new;
    # a failed call before it is refused with the old files (WriteError says "nothing was changed").
    if isinstance(fault, Killed):
        assert {"killed/old", "killed/new"} <= set(outcomes), outcomes
    else:
        assert "refused/old" in outcomes and "refused/new" not in outcomes, outcomes
        assert not [o for o in outcomes if o.startswith("oserror")], outcomes  # a message, never a traceback
        assert "complete/old" not in outcomes, outcomes


# --- one build at a time ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_build_waits_for_the_first(tiny: Path) -> None:
    run_build(tiny)
    fd = os.open(tiny / "docs", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = subprocess.Popen(
        [sys.executable, "-m", "metrics_manual", "build", "--root", str(tiny)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stderr is not None
        said = proc.stderr.readline()  # blocks until the build says it waits (or ends), however slow the machine
        assert proc.poll() is None  # it waits
    finally:
        os.close(fd)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, said + err
    assert f"waiting for another metrics-manual command in {tiny} to finish" in said


@pytest.mark.slow
def test_concurrent_builds_racing_on_a_stray_both_succeed(tiny: Path) -> None:
    second = TINY_PROFILE.replace("id: tiny", "id: old").replace("tiny-notes", "old-notes")
    (tiny / "ranges/profiles/old.yaml").write_text(second, "utf-8")
    run_build(tiny)
    (tiny / "ranges/profiles/old.yaml").unlink()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "metrics_manual", "build", "--root", str(tiny)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=120), p.communicate()) for p in procs]
    assert [code for code, _ in results] == [0, 0, 0], results
    assert sum("removed stray docs/profiles/old.md" in out for _, (out, _) in results) == 1
    assert run_cli("check", "--root", str(tiny)).returncode == 0
    _, files = generate(tiny)
    assert all((tiny / rel).read_bytes().decode("utf-8") == text for rel, text in files.items())


def test_a_deeply_nested_manifest_is_a_warning_not_a_traceback(tiny: Path) -> None:
    run_build(tiny)
    (tiny / switch.MANIFEST).write_text("[" * 100_000, "utf-8")
    result = run_cli("build", "--root", str(tiny))
    assert result.returncode == 0, result.stderr
    assert "docs/.generated.json:1:1: warning: not valid JSON" in result.stderr and "Traceback" not in result.stderr


def test_a_tampered_manifest_naming_a_hand_written_page_with_its_digest_deletes_nothing(tiny: Path) -> None:
    run_build(tiny)
    pages = {"docs/hand.md": "# mine\n", "docs/stylesheets/extra.css": "a {}\n", "docs/reference/../index.md": ""}
    for rel, text in pages.items():
        if text:
            (tiny / rel).parent.mkdir(parents=True, exist_ok=True)
            (tiny / rel).write_text(text, "utf-8")
    manifest = json.loads((tiny / switch.MANIFEST).read_text("utf-8"))
    # Each with its own digest: what a pull request can forge to get it deleted as a stray.
    forged = {rel: switch.digest(text) for rel, text in pages.items() if text}
    (tiny / switch.MANIFEST).write_text(json.dumps({**manifest, **forged}), "utf-8")
    result = run_cli("build", "--root", str(tiny))
    assert result.returncode == 0, result.stderr
    for rel in forged:
        assert (tiny / rel).read_text("utf-8") == pages[rel]
        assert f"entry '{rel}' is ignored: outside the folders build generates" in result.stderr
    # The folders come from what build generates: a stray of its own inside them still goes.
    folders = switch.generated_folders(generate(tiny)[1])
    assert folders == {f"docs/{p.name}/" for p in (tiny / "docs").iterdir() if p.is_dir() and p.name != "stylesheets"}
    (tiny / "docs/reference/old.md").write_text("old\n", "utf-8")
    manifest = json.loads((tiny / switch.MANIFEST).read_text("utf-8"))
    (tiny / switch.MANIFEST).write_text(json.dumps({**manifest, "docs/reference/old.md": switch.digest("old\n")}))
    assert "removed stray docs/reference/old.md" in run_build(tiny).stdout


def _pending_switch(root: Path) -> str:
    """A switch that a killed build committed to (its journal written) and never finished."""
    run_build(root)
    rel = "docs/reference/settled.md"
    staged = root / switch.STAGING / rel
    staged.parent.mkdir(parents=True)
    staged.write_text("new\n", "utf-8")
    (root / switch.JOURNAL).write_text(json.dumps({"write": [rel], "remove": []}), "utf-8")
    return rel


@pytest.mark.parametrize(
    "command",
    [
        ["validate"],
        ["export", "--profile", "tiny"],
        ["judge", "--profile", "tiny", "run.jsonl"],
        ["derive", "--profile", "tiny", "--run", "r=run.jsonl"],
        ["check"],
        ["build"],
        ["plugin"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_finishes_a_pending_switch_first(tiny: Path, command: list[str]) -> None:
    rel = _pending_switch(tiny)
    (tiny / "run.jsonl").write_text('{"metric": "train/grad_norm", "series": [[0, 1.0]]}\n', "utf-8")
    if command == ["plugin"]:
        from types import SimpleNamespace

        from metrics_manual.serve.plugin import MetricsManualPlugin

        MetricsManualPlugin().on_config(SimpleNamespace(config_file_path=str(tiny / "mkdocs.yml")))  # type: ignore[arg-type]
    else:
        run_cli(*command, cwd=tiny)
    assert (tiny / rel).read_text("utf-8") == "new\n"
    assert not (tiny / switch.JOURNAL).exists() and not (tiny / switch.STAGING).exists()


def test_a_forged_journal_naming_a_hand_written_page_deletes_nothing(tiny: Path) -> None:
    """A journal that arrived with the files (a pull request) names pages to remove: only a file that
    the build itself saved before switching (a hard link in staging) is ever removed."""
    run_build(tiny)
    page = tiny / "docs/index.md"
    page.write_text("# Hand-written\n", "utf-8")
    stray = "docs/reference/old.md"
    (tiny / stray).write_text("old\n", "utf-8")
    saved = tiny / switch.STAGING / switch.OLD
    (saved / "docs").mkdir(parents=True)
    (saved / "docs/index.md").write_text("# Hand-written\n", "utf-8")  # a copy, as a checkout makes it
    (saved / "docs/reference").mkdir()
    os.link(tiny / stray, saved / stray)  # what apply does before a switch
    (tiny / switch.JOURNAL).write_text(json.dumps({"write": [], "remove": ["docs/index.md", stray]}), "utf-8")
    assert run_cli("validate", cwd=tiny).returncode == 0
    assert page.read_text("utf-8") == "# Hand-written\n"
    assert not (tiny / stray).exists()
    assert not (tiny / switch.JOURNAL).exists() and not (tiny / switch.STAGING).exists()
