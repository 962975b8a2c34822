"""A second team's first day, from the docs alone, keeps CI green; and so do a third's and a fourth's.

On a copy of the project, with three generated runs where docs/deriving.md puts them, the team runs
the commands of its first section as they are written there (the dry run first, then the commands),
and judges a next clean run, longer, with the section's judge command and judge's defaults. Two more
teams then follow the same section with a profile id, a title and runs of their own (a manual grows
by profiles). Then every test that reads the real tree (marked `real_tree`: validity, agreement, a
strict build) runs against that copy of four profiles (METRICS_MANUAL_PROJECT), as `make test`
would in the fourth team's clone, on one copy grown once a suite.
"""

from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, copy_repo, run_cli, snapshot
from run_forms import write as write_form

sys.path.insert(0, str(REPO / "tools"))
from derive_methods import clean_run  # noqa: E402

STEPS = 200  # three healthy runs of 200 steps, as the team had; the next one runs on to 300


def first_profile_commands(page: str) -> list[list[list[str]]]:
    """The commands of each `sh` block of the page's "Your first profile", as argument lists."""
    section = page.split("\n## Your first profile\n", 1)[1].split("\n## ", 1)[0]
    blocks = [part.split("\n```", 1)[0] for part in section.split("```sh\n")[1:]]
    return [
        [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines() if line.strip()]
        for block in blocks
    ]


def as_team(commands: list[list[str]], team: str) -> list[list[str]]:
    """The section's commands as another team types them: its profile id, its title, its runs."""
    derive, *rest = commands
    profile = derive[derive.index("--profile") + 1]
    mine = [a.replace(profile, team).replace("runs/", f"runs/{team}/") for a in derive]
    title = mine.index("--title") + 1
    mine[title] = f"{team}: {mine[title]}"
    return [mine, *rest]


def _runs(command: list[str]) -> dict[str, str]:
    """NAME -> PATH of each --run of a derive command."""
    pairs = [command[i + 1] for i, a in enumerate(command) if a == "--run"]
    pairs += [a.removeprefix("--run=") for a in command if a.startswith("--run=")]
    return dict(p.split("=", 1) for p in pairs)


def first_day(root: Path, commands: list[list[list[str]]], judge: list[str]) -> dict[str, object]:
    """The three teams' first day on the copy at `root`; stops at the first command that fails.
    What the tests read of it afterwards: the teams' profile ids and the next run's verdict."""
    derive = commands[0]
    runs = _runs(derive)
    assert len(runs) == 3, runs
    for seed, path in enumerate(runs.values(), 1):
        write_form("events", clean_run(seed, STEPS), root / path)

    before = snapshot(root)
    dry = run_cli(*[a for a in derive[1:] if a != "--write"], cwd=root)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "--- /dev/null" in dry.stdout and snapshot(root) == before  # the file it would make, nothing written
    for command in commands:
        ran = run_cli(*command[1:], cwd=root)
        assert ran.returncode == 0, f"{shlex.join(command)}\n{ran.stdout}{ran.stderr}"

    # The team's next clean run, half as long again, judged as the page says.
    write_form("events", clean_run(len(runs) + 1, STEPS * 3 // 2, horizon=STEPS), root / judge[-1])
    judged = run_cli(*judge[1:], cwd=root)

    # A third and a fourth team follow the same section, each with its own seeds.
    for n, team in enumerate(("moe-team", "lora-team"), 1):
        team_commands = as_team(commands, team)
        for seed, path in enumerate(_runs(team_commands[0]).values(), 1 + 10 * n):
            write_form("events", clean_run(seed, STEPS), root / path)
        for command in team_commands:
            ran = run_cli(*command[1:], cwd=root)
            assert ran.returncode == 0, f"{shlex.join(command)}\n{ran.stdout}{ran.stderr}"
    return {
        "profiles": [derive[derive.index("--profile") + 1], "moe-team", "lora-team"],
        "judged": [judged.returncode, judged.stdout + judged.stderr],
    }


@pytest.fixture(scope="session")
def grown(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """(the copy, what first_day says of it), made once a suite: the workers of pytest-xdist share the
    base folder's parent, and the first to take its lock grows the copy for all."""
    commands, [judge] = first_profile_commands((REPO / "docs/deriving.md").read_text("utf-8"))
    assert commands and all(c[0] == "metrics-manual" for c in commands), commands
    assert commands[0][1] == "derive" and "--write" in commands[0] and "--title" in commands[0]
    assert judge[:2] == ["metrics-manual", "judge"] and not any(a.startswith("--rtol") for a in judge), judge
    shared = os.environ.get("PYTEST_XDIST_WORKER") is not None
    home = tmp_path_factory.getbasetemp().parent if shared else tmp_path_factory.mktemp("first-day")
    done = home / "first-day.json"
    with open(home / "first-day.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():  # written only when the day went through: a worker after a failure fails too
            root = home / "clone"
            shutil.rmtree(root, ignore_errors=True)
            done.write_text(json.dumps(first_day(copy_repo(root), commands, judge)), "utf-8")
    return home / "clone", json.loads(done.read_text("utf-8"))


@pytest.mark.slow
def test_following_docs_deriving_gives_each_team_a_profile_and_passes_the_next_run(grown) -> None:
    root, day = grown
    for profile in day["profiles"]:
        assert (root / f"ranges/profiles/{profile}.yaml").is_file() and (root / f"docs/profiles/{profile}.md").is_file()
    assert (
        len(list((root / "ranges/profiles").glob("*.yaml"))) == len(list((REPO / "ranges/profiles").glob("*.yaml"))) + 3
    )
    code, output = day["judged"]
    assert code == 0, output  # judge's defaults pass the team's next clean run


@pytest.mark.slow
def test_the_real_tree_s_tests_pass_in_the_grown_clone(grown, real_tree_tests: list[str]) -> None:
    """What CI runs in the fourth team's clone: every test of the real tree, against the grown copy."""
    root, _ = grown
    # The ones this session collected; none (this module run alone): all, found as the whole suite finds them.
    args = real_tree_tests or ["tests"]
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "real_tree", "-n", "0", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "METRICS_MANUAL_PROJECT": str(root)},
    )
    assert tests.returncode == 0, tests.stdout[-6000:] + tests.stderr[-2000:]
    passed = f"{len(real_tree_tests)} passed" if real_tree_tests else " passed"
    assert passed in tests.stdout, tests.stdout[-2000:]
