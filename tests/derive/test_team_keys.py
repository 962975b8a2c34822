"""A team's own keys, end to end, as a MoE team meets them: its fork logs four keys no catalog has (one of
a namespace with no step key); derive names them, --add-keys documents them in the team's catalog with
placeholders that validate warns of, the pages show them as the team's, and judge then fails a run
whose aux loss explodes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from conftest import TINY_CATALOG, TINY_PROFILE, run_build, run_cli, write_project
from metrics_manual.model.schema import PLACEHOLDER_MEANING
from metrics_manual.source.load import load_manual
from run_forms import Series, write_events

FORK_KEYS = [
    "moe/expert_utilization",
    "train/expert_load_max_over_mean",
    "train/load_balancing_loss",
    "train/moe_dropped_tokens",
]
TEAM = """\
team: the MoE team
code: {repository: moe-lab/miles, url: https://example.org/moe-lab/miles, branch: moe, commit: abcdef12}
"""
MTP = "      - key: train/mtp_loss\n        meaning: the multi-token prediction loss\n"


def moe_run(seed: int, explode_at: int | None = None) -> Series:
    """Ten steps of a MoE fork's run: the catalog's keys and the fork's own."""
    rng = random.Random(seed)
    run: Series = {}
    for s in range(10):
        values = {
            "rollout/raw_reward": 0.6 + rng.uniform(0, 0.2),
            "rollout/response_lengths": 400 + rng.uniform(0, 50),
            "train/grad_norm": 1.5 + rng.uniform(-0.3, 0.3),
            "train/pg_clipfrac": 0.0,
            "train/weight/mean": 0.1 + rng.uniform(0, 0.01),
            "train/mtp_loss": 2 + rng.uniform(-0.1, 0.1),
            "train/load_balancing_loss": 0.01 + rng.uniform(0, 0.002),
            "train/moe_dropped_tokens": float(rng.randint(10, 40)),
            "train/expert_load_max_over_mean": 1.3 + rng.uniform(0, 0.2),
            "moe/expert_utilization": 0.9 + rng.uniform(0, 0.05),
        }
        if s == explode_at:
            values["train/load_balancing_loss"] = 816.0
        for key, value in values.items():
            run.setdefault(key, {})[s] = value
    return run


@pytest.fixture
def moe(tmp_path: Path) -> tuple[Path, list[str]]:
    """The MoE team's project (the tiny catalog and train/mtp_loss) and three healthy runs, as --run options."""
    project = write_project(tmp_path / "p", TINY_CATALOG + MTP, {"tiny": TINY_PROFILE})
    runs = []
    for i in (1, 2, 3):
        write_events(moe_run(i), tmp_path / f"seed-{i}")
        runs += ["--run", f"seed-{i}={tmp_path / f'seed-{i}'}"]
    return project, runs


def derive(project: Path, runs: list[str], *more: str) -> tuple[int, dict[str, object]]:
    ran = run_cli("derive", "--root", str(project), "--profile", "tiny", *runs, "--format", "json", *more)
    return ran.returncode, json.loads(ran.stdout)


def test_derive_names_every_key_it_does_not_range_and_why(moe: tuple[Path, list[str]]) -> None:
    project, runs = moe
    code, out = derive(project, runs)
    assert code == 0
    why = {n["key"]: n["reason"] for n in out["not_ranged"]}  # type: ignore[attr-defined]
    assert set(FORK_KEYS) <= set(why)
    for key in FORK_KEYS:
        assert why[key].startswith("in no catalog") and "--add-keys TEAM" in why[key], why[key]
    assert "its namespace moe has no step key (its records carry train/step)" in why["moe/expert_utilization"]
    assert why["train/step"].startswith("a step key")
    assert why["train/weight/mean"].startswith("a member of the family train/weight/*")
    assert "train/mtp_loss" not in why  # in the catalog and logged by every run: ranged
    text = run_cli("derive", "--root", str(project), "--profile", "tiny", *runs).stdout
    assert "not ranged: " in text and "train/load_balancing_loss" in text.split("not ranged: ", 1)[1]


def test_add_keys_documents_the_forks_keys_and_judge_then_fails_the_exploding_aux_loss(
    moe: tuple[Path, list[str]], tmp_path: Path
) -> None:
    project, runs = moe
    write_events(moe_run(9, explode_at=6), tmp_path / "bad")
    before = run_cli("judge", "--root", str(project), "--profile", "tiny", str(tmp_path / "bad"))
    assert before.returncode == 0, before.stdout  # the 816 passes while no catalog has the key

    (project / "ranges" / "catalogs").mkdir()
    team_file = project / "ranges" / "catalogs" / "moe-team.yaml"
    team_file.write_text(TEAM, "utf-8")
    code, out = derive(project, runs, "--add-keys", "moe-team", "--write")
    assert code == 0, out
    assert out["added"] == {
        "file": "ranges/catalogs/moe-team.yaml",
        "keys": FORK_KEYS,
        "step_keys": {"moe": "train/step"},
    }
    assert not set(FORK_KEYS) & {n["key"] for n in out["not_ranged"]}  # type: ignore[attr-defined]

    manual = load_manual(project)
    team = manual.teams[0]
    assert team.catalog.step_keys == {"moe": "train/step"}
    assert [(m.key, m.meaning) for s in team.catalog.sections for m in s.metrics] == [
        (k, PLACEHOLDER_MEANING) for k in FORK_KEYS
    ]
    assert all(manual.team_of(k) == team for k in FORK_KEYS) and manual.team_of("train/mtp_loss") is None
    assert set(FORK_KEYS) <= set(manual.profile("tiny").expectations)

    validated = run_cli("validate", "--root", str(project))
    assert validated.returncode == 0
    warned = [line for line in validated.stderr.splitlines() if "[MM119]" in line]
    assert len(warned) == 4 and all(line.startswith("ranges/catalogs/moe-team.yaml:") for line in warned)

    run_build(project)
    page = (project / "docs" / "reference" / "metrics" / "moe-team.md").read_text("utf-8")
    entry = page.split("{#m-train-load_balancing_loss", 1)[1].split("\n### ", 1)[0]
    assert (
        "A key of the MoE team, logged by its fork of Miles ([moe-lab/miles](https://example.org/moe-lab/miles)"
        in entry
    )
    assert "`ranges/catalogs/moe-team.yaml`" in entry
    assert "edit ranges/catalogs/moe-team.yaml and ranges/profiles/*.yaml" in page  # the file to edit is the team's
    miles_page = (project / "docs" / "reference" / "metrics" / "training.md").read_text("utf-8")
    assert "mm-team" not in miles_page  # Miles' own keys are not the team's
    assert "edit ranges/catalog.yaml and ranges/profiles/*.yaml" in miles_page

    after = run_cli("judge", "--root", str(project), "--profile", "tiny", str(tmp_path / "bad"))
    assert after.returncode == 1
    assert "FAIL  train/load_balancing_loss" in after.stdout and "step 6: 816" in after.stdout


def test_add_keys_without_the_team_catalog_says_how_to_make_it(moe: tuple[Path, list[str]]) -> None:
    project, runs = moe
    ran = run_cli("derive", "--root", str(project), "--profile", "tiny", *runs, "--add-keys", "moe-team")
    assert ran.returncode == 2
    assert "no team catalog ranges/catalogs/moe-team.yaml" in ran.stderr and "team: " in ran.stderr
    assert not (project / "ranges" / "catalogs").exists() and not (project / "captures").exists()


def test_judge_says_one_true_thing_of_a_logged_key_its_profile_cannot_place(
    moe: tuple[Path, list[str]], tmp_path: Path
) -> None:
    # An exported profile whose step_keys lost the fork's namespace (an older or hand-edited export).
    project, runs = moe
    (project / "ranges" / "catalogs").mkdir()
    (project / "ranges" / "catalogs" / "moe-team.yaml").write_text(TEAM, "utf-8")
    assert derive(project, runs, "--add-keys", "moe-team", "--write")[0] == 0
    exported = tmp_path / "tiny.json"
    ran = run_cli("export", "--root", str(project), "--profile", "tiny", "--format", "json", "-o", str(exported))
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(exported.read_text("utf-8"))
    del doc["step_keys"]["moe"]
    exported.write_text(json.dumps(doc), "utf-8")
    ran = run_cli("judge", "--profile", str(exported), str(tmp_path / "seed-1"))
    line = next(x for x in ran.stdout.splitlines() if "moe/expert_utilization" in x)
    assert line.startswith("ERROR moe/expert_utilization:") and "logged by the run, but its namespace moe" in line
    assert "no value logged" not in ran.stdout


def test_a_hostile_key_is_named_inert(tmp_path: Path) -> None:
    project = write_project(tmp_path / "p", TINY_CATALOG + MTP, {"tiny": TINY_PROFILE})
    runs = []
    for i in (1, 2):
        run = moe_run(i)
        run["train/x\x1b[31mred"] = dict.fromkeys(range(10), 1.0)
        write_events(run, tmp_path / f"seed-{i}")
        runs += ["--run", f"seed-{i}={tmp_path / f'seed-{i}'}"]
    ran = run_cli("derive", "--root", str(project), "--profile", "tiny", *runs)
    assert "\x1b" not in ran.stdout and "train/x\\x1b[31mred" in ran.stdout
    # --add-keys adds no key a catalog cannot hold, and says why.
    (project / "ranges" / "catalogs").mkdir()
    (project / "ranges" / "catalogs" / "moe-team.yaml").write_text(TEAM, "utf-8")
    code, out = derive(project, runs, "--add-keys", "moe-team")
    assert code == 0 and "train/x\x1b[31mred" not in out["added"]["keys"]  # type: ignore[index]
    why = {n["key"]: n["reason"] for n in out["not_ranged"]}  # type: ignore[attr-defined]
    assert "not a key a catalog can hold" in why["train/x\x1b[31mred"]
