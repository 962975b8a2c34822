"""A team's own catalog under ranges/catalogs/: loaded with Miles' catalog, held together with it, and a
key whose namespace has no step key refused where it stands (never accepted and then skipped)."""

from __future__ import annotations

from pathlib import Path

from conftest import TINY_CATALOG, TINY_PROFILE, run_cli, write_project
from metrics_manual.source.load import load_manual

TEAM = """\
team: the MoE team
code: {repository: moe-lab/miles, branch: moe, commit: abcdef12}
step_keys: {moe: train/step}
sections:
  - id: moe
    title: MoE
    metrics:
      - key: train/load_balancing_loss
        meaning: the auxiliary load-balancing loss
      - key: moe/expert_utilization
        meaning: the share of experts that got tokens
"""


def project(tmp_path: Path, team: str = TEAM, catalog: str = TINY_CATALOG, profile: str = TINY_PROFILE) -> Path:
    root = write_project(tmp_path / "p", catalog, {"tiny": profile})
    (root / "ranges" / "catalogs").mkdir()
    (root / "ranges" / "catalogs" / "moe-team.yaml").write_text(team, "utf-8")
    return root


def findings(root: Path) -> list[str]:
    ran = run_cli("validate", "--root", str(root))
    assert ran.returncode == 2, ran.stdout
    return [line for line in ran.stderr.splitlines() if "error" in line and not line.endswith("error(s).")]


def test_a_team_catalog_is_documented_and_rangeable_as_the_teams(tmp_path: Path) -> None:
    profile = TINY_PROFILE + "  train/load_balancing_loss:\n    - {kind: band, min: 0, max: 0.05}\n"
    manual = load_manual(project(tmp_path, profile=profile))
    assert [s.id for s in manual.catalog.sections] == ["rollout", "training", "moe"]
    assert manual.catalog.step_keys["moe"] == "train/step"
    assert [s.id for s in manual.miles_catalog.sections] == ["rollout", "training"]
    assert "moe" not in manual.miles_catalog.step_keys
    team = manual.team_of("moe/expert_utilization")
    assert team is not None and team.id == "moe-team" and team.path == "ranges/catalogs/moe-team.yaml"
    assert manual.team_of("train/grad_norm") is None
    assert manual.profile("tiny").expectations["train/load_balancing_loss"][0].kind == "band"


def test_a_key_whose_namespace_has_no_step_key_is_an_error_where_it_stands(tmp_path: Path) -> None:
    root = project(tmp_path, TEAM.replace("step_keys: {moe: train/step}\n", ""))
    assert findings(root) == [
        "ranges/catalogs/moe-team.yaml:9:14: error: moe/expert_utilization: its namespace 'moe' has no step key, so "
        "no value of it could be placed at its step: add `moe: STEP_KEY` under step_keys in "
        "ranges/catalogs/moe-team.yaml (the step key its records carry, such as train/step or rollout/step) [MM117]"
    ]


def test_in_miles_catalog_too_and_for_a_familys_members(tmp_path: Path) -> None:
    catalog = TINY_CATALOG.replace(
        "members: [train/weight/mean, train/weight/max]", "members: [train/weight/mean, eval/weight/max]"
    )
    assert catalog != TINY_CATALOG
    root = project(tmp_path, catalog=catalog)
    (error,) = findings(root)
    assert error.startswith("ranges/catalog.yaml:22:38: error: eval/weight/max: its namespace 'eval' has no step key")


def test_a_namespace_has_one_step_key(tmp_path: Path) -> None:
    root = project(tmp_path, TEAM.replace("{moe: train/step}", "{moe: train/step, train: rollout/step}"))
    assert findings(root) == [
        "ranges/catalogs/moe-team.yaml:3:37: error: namespace 'train' has the step key train/step in "
        "ranges/catalog.yaml; a namespace has one step key: remove this one, or write train/step [MM118]"
    ]
    # The same step key again is no clash.
    load_manual(project(tmp_path / "same", TEAM.replace("{moe: train/step}", "{moe: train/step, train: train/step}")))


def test_a_key_or_section_of_miles_catalog_is_not_the_teams_too(tmp_path: Path) -> None:
    team = TEAM.replace("id: moe\n", "id: training\n").replace("train/load_balancing_loss", "train/grad_norm")
    assert findings(project(tmp_path, team)) == [
        "ranges/catalogs/moe-team.yaml:5:9: error: duplicate section id 'training' [MM106]",
        "ranges/catalogs/moe-team.yaml:8:14: error: metric 'train/grad_norm' is already in the catalog "
        "(section 'training') [MM106]",
    ]


def test_only_team_catalogs_stand_in_the_folder(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "ranges" / "catalogs" / "MoE Team.yaml").write_text(TEAM, "utf-8")
    (root / "ranges" / "catalogs" / "notes.txt").write_text("x", "utf-8")
    errors = findings(root)
    assert [e.split(": error: ")[0] for e in errors] == [
        "ranges/catalogs/MoE Team.yaml:1:1",
        "ranges/catalogs/notes.txt:1:1",
    ]
    assert all("[MM110]" in e for e in errors)
