"""A team's first step: `derive --profile NEW --title ...` makes the profile file from its runs."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from conftest import run_cli, snapshot
from derive_helpers import SEEDS_PROFILE, STEPS, seed_run, seeds_project, write_runs
from metrics_manual.runs.run import Run
from metrics_manual.source.load import load_manual

NEW = "ranges/profiles/my-setup.yaml"
SETUP = (
    "--model",
    "Qwen3-8B",
    "--dataset",
    "MATH",
    "--hardware",
    "8xH100",
    "--prompts-per-step",
    "64",
    "--answers-per-prompt",
    "4",
    "--token-limit",
    "2048",
)


def steady_run(seed: int, steps: int = STEPS) -> Run:
    """A seed run whose wait time is steady enough that the median of its seeds holds for each (10%)."""
    run = seed_run(seed, steps)
    rng = random.Random(seed)
    run.series["perf/train_wait_time"] = {s: rng.uniform(1.9, 2.1) for s in range(steps)}
    return run


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, list[str]]:
    """A project with another team's profile (seeds), and three runs of a new setup inside the project."""
    root = seeds_project(tmp_path / "manual")
    paths = write_runs(root / "runs", {f"seed-{i}": steady_run(i) for i in (1, 2, 3)})
    return root, [f"--run={name}={path.relative_to(root)}" for name, path in paths.items()]


def _derive(root: Path, runs: list[str], *extra: str, title: str = "Three seeds on 8 H100"):  # type: ignore[no-untyped-def]
    return run_cli("derive", "--profile", "my-setup", "--title", title, *SETUP, *runs, *extra, cwd=root)


def test_a_dry_run_shows_the_whole_new_file_and_writes_nothing(team: tuple[Path, list[str]]) -> None:
    root, runs = team
    before = snapshot(root)
    dry = _derive(root, runs, "--capture-to", "captures/my-setup")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert snapshot(root) == before
    diff = dry.stdout.split(f"--- /dev/null\n+++ b/{NEW}\n", 1)[1]
    shown = [line[1:] for line in diff.splitlines()[1:] if line.startswith("+")]
    assert "dry run: nothing written" in dry.stdout
    wrote = _derive(root, runs, "--capture-to", "captures/my-setup", "--write")
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert (root / NEW).read_text("utf-8").splitlines() == shown  # the file the dry run showed, line for line
    assert f"made {NEW}" in wrote.stdout


def test_the_new_profile_holds_what_the_runs_and_options_say_and_nothing_of_another(
    team: tuple[Path, list[str]],
) -> None:
    root, runs = team
    result = _derive(root, runs, "--capture-to", "captures/my-setup", "--code-commit", "31f1ca96", "--write")
    assert result.returncode == 0, result.stdout + result.stderr
    profile = load_manual(root).profile("my-setup")
    assert profile.title == "Three seeds on 8 H100"
    s = profile.setup
    assert (s.framework, s.model, s.dataset, s.hardware.count, s.hardware.name) == (
        "Miles",
        "Qwen3-8B",
        "MATH",
        8,
        "H100",
    )
    assert (s.prompts_per_step, s.answers_per_prompt, s.token_limit) == (64, 4, 2048)
    assert s.steps == STEPS  # what the runs reached
    assert set(profile.sources) == {"seed-1", "seed-2", "seed-3"}
    for name, source in profile.sources.items():
        assert (source.kind, source.path, source.code_commit) == (
            "capture",
            f"captures/my-setup/{name}.jsonl",
            "31f1ca96",
        )  # type: ignore[union-attr]
    # A range for every metric of the catalog the runs log, each from these runs.
    logged = set(seed_run(1).series)
    assert set(profile.expectations) == logged
    assert all(e.sources == ["seed-1", "seed-2", "seed-3"] for es in profile.expectations.values() for e in es)
    # Nothing of the other profile: not its words, not its sources, not its ranges.
    text = (root / NEW).read_text("utf-8")
    theirs = {line.split(":", 1)[1].strip() for line in SEEDS_PROFILE.splitlines() if re.match(r"^\s*\w+: \S", line)}
    ours = {line.split(":", 1)[1].strip() for line in text.splitlines() if ":" in line}
    words = {t for t in theirs if not re.fullmatch(r"[\d.]+", t)} - {"Miles"}  # numbers and the framework may agree
    assert words and not words & ours, words & ours
    for other in ("Made up for tests", "Build your own", "abcdef12", "one box", "M-1", "typed by hand"):
        assert other not in text
    # And the project agrees at once: build, then check re-judges the captures.
    assert run_cli("build", cwd=root).returncode == 0
    checked = run_cli("check", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_runs_of_different_lengths_give_the_longest_and_say_so(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual")
    paths = write_runs(tmp_path / "runs", {"a": steady_run(1, 20), "b": steady_run(2, 16)})
    result = _derive(root, [f"--run={n}={p}" for n, p in paths.items()], "--write")
    assert result.returncode == 0, result.stdout + result.stderr
    assert load_manual(root).profile("my-setup").setup.steps == 20
    assert "the runs reached different numbers of steps (a 20, b 16): the setup says 20" in result.stderr


@pytest.mark.parametrize(
    "profile_id",
    ["../escape", "a/b", "My-Setup", "my_setup", "-x", "x-", "a" * 65, "", "my setup", "x.yaml", "lab\n"],
)
def test_a_new_id_is_a_slug_that_names_a_file_in_the_profiles_folder(
    team: tuple[Path, list[str]], profile_id: str
) -> None:
    root, runs = team
    before = snapshot(root)
    result = run_cli("derive", "--profile", profile_id, "--title", "T", *SETUP, *runs, "--write", cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "names its file and pages" in result.stderr and "Traceback" not in result.stderr
    assert snapshot(root) == before
    assert sorted(p.name for p in (root / "ranges/profiles").iterdir()) == ["seeds.yaml"]


def test_never_through_a_symlink_nor_over_a_file(team: tuple[Path, list[str]], tmp_path: Path) -> None:
    root, runs = team
    outside = tmp_path / "outside"
    outside.mkdir()
    # A link where the new file goes, even one that leads nowhere (the loader already refuses to read it).
    (root / NEW).symlink_to(outside / "planted.yaml")
    refused = _derive(root, runs, "--write")
    assert refused.returncode == 2 and f"{NEW}:1:1: error: " in refused.stderr, refused.stderr
    assert not (outside / "planted.yaml").exists()
    (root / NEW).unlink()
    # The profiles folder itself a link (to a folder of the project, which the loader reads).
    profiles = root / "ranges/profiles"
    real = root / "real-profiles"
    profiles.rename(real)
    profiles.symlink_to(real)
    refused = _derive(root, runs, "--write")
    assert refused.returncode == 2 and "ranges/profiles is a symlink" in refused.stderr, refused.stderr
    assert sorted(os.listdir(real)) == ["seeds.yaml"]
    profiles.unlink()
    real.rename(profiles)
    # A file of that name that holds another profile's id.
    (root / NEW).write_text(SEEDS_PROFILE.replace("id: seeds", "id: elsewhere"), "utf-8")
    taken = _derive(root, runs, "--write")
    assert taken.returncode == 2 and f"{NEW} exists and holds no profile of that id" in taken.stderr, taken.stderr


def test_what_a_new_profile_needs_is_asked_for_by_name(team: tuple[Path, list[str]]) -> None:
    root, runs = team
    before = snapshot(root)
    unknown = run_cli("derive", "--profile", "my-setup", *runs, cwd=root)
    assert unknown.returncode == 2
    assert "unknown profile 'my-setup'; profiles: seeds" in unknown.stderr and "--title TEXT" in unknown.stderr
    partial = run_cli("derive", "--profile", "my-setup", "--title", "T", "--model", "M", *runs, cwd=root)
    assert partial.returncode == 2
    assert "add --dataset, --hardware, --prompts-per-step, --answers-per-prompt, --token-limit" in partial.stderr
    hardware = run_cli("derive", "--profile", "my-setup", "--title", "T", *SETUP[:4], "--hardware", "H100", cwd=root)
    assert hardware.returncode == 2 and "expected COUNTxNAME" in hardware.stderr
    # An existing profile is edited, never renamed or re-set-up by these options.
    existing = run_cli("derive", "--profile", "seeds", "--title", "T", *runs, cwd=root)
    assert existing.returncode == 2 and "profile seeds exists" in existing.stderr
    assert snapshot(root) == before


@pytest.mark.parametrize("title", ["yes", "null", "1:20", "a: b", "#1 run", "<b>bold</b> & 'quotes'", "Überlauf"])
def test_a_title_is_written_as_the_text_it_is(team: tuple[Path, list[str]], title: str) -> None:
    root, runs = team
    result = _derive(root, runs, "--write", title=title)
    assert result.returncode == 0, result.stdout + result.stderr
    assert load_manual(root).profile("my-setup").title == title


def test_a_title_that_is_no_text_is_a_finding_and_writes_nothing(team: tuple[Path, list[str]]) -> None:
    root, runs = team
    before = snapshot(root)
    result = _derive(root, runs, "--write", title="two\nlines")
    assert result.returncode == 2 and re.search(r"ranges/profiles/my-setup\.yaml:\d+:\d+: error: ", result.stderr), (
        result.stderr
    )
    assert snapshot(root) == before
