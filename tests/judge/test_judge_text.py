"""judge's text output: the verdicts first, the metrics with no range counted in one line (not one
line each), the other reasons listed up to a cap, the summary last; JSON lists every one of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import run_forms
from conftest import run_cli
from judge_fixture import judged_project
from metrics_manual.judge.report_text import NOT_JUDGED_SHOWN

RANGED, UNRANGED, LOGGED_UNRANGED = 3, 30, 7


def _catalog(ranged: int, unranged: int) -> str:
    keys = [f"train/r{i}" for i in range(ranged)] + [f"train/u{i}" for i in range(unranged)]
    metrics = "".join(f"      - {{key: {k}, meaning: a value}}\n" for k in keys)
    return (
        "title: Metrics\ncode: {repository: example/miles, branch: main, commit: 31f1ca96}\n"
        "step_keys: {train: train/step}\nsections:\n  - id: training\n    title: Training\n    metrics:\n" + metrics
    )


def _profile(ranged: int) -> str:
    bands = "".join(f"  train/r{i}:\n    - {{kind: band, min: 0, max: 1}}\n" for i in range(ranged))
    return (
        "id: judged\ntitle: A judged setup\nsummary: Made up.\nadvice: Build your own.\n"
        "setup: {framework: Miles, model: M, dataset: D, hardware: {count: 1, name: GPU}, prompts_per_step: 4,\n"
        "        answers_per_prompt: 2, token_limit: 1024, steps: 10}\n"
        "sources:\n  cap: {kind: capture, path: cap.json, keys: [a]}\nexpectations:\n" + bands
    )


def _run(folder: Path, ranged: int, logged_unranged: int, unknown: int = 0) -> Path:
    run = {f"train/r{i}": {s: 0.5 for s in range(10)} for i in range(ranged)}
    run |= {f"train/u{i}": {s: 0.5 for s in range(10)} for i in range(logged_unranged)}
    run |= {f"train/zz_unknown{i:02d}": {s: 0.5 for s in range(10)} for i in range(unknown)}
    run_forms.write_dashboard(run, folder)
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_project(tmp_path_factory.mktemp("text") / "p", _catalog(RANGED, UNRANGED), _profile(RANGED))


def test_metrics_with_no_range_are_one_line_after_the_verdicts(tmp_path: Path, project: Path) -> None:
    run = _run(tmp_path / "d", RANGED, LOGGED_UNRANGED, unknown=2)
    ran = run_cli("judge", "--profile", "judged", str(run), cwd=project)
    assert ran.returncode == 0, ran
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("profile judged")
    assert [line[:5] for line in lines[1 : 1 + RANGED]] == ["PASS "] * RANGED  # the verdicts come first
    assert lines[1 + RANGED] == "not judged:"
    assert lines[2 + RANGED :] == [
        f"  {UNRANGED} metrics have no range in the profile ({LOGGED_UNRANGED} of them logged by the run); "
        "--format json lists them",
        "  train/zz_unknown00: not in the manual's catalog",
        "  train/zz_unknown01: not in the manual's catalog",
        f"{RANGED} pass, 0 fail, 0 error, {UNRANGED + 2} not judged",
    ]
    # JSON lists each metric, with the reason it always gave.
    data = json.loads(run_cli("judge", "--profile", "judged", str(run), "--format", "json", cwd=project).stdout)
    reasons = [n["reason"] for n in data["not_judged"]]
    assert reasons.count("the profile gives no range (logged by the run)") == LOGGED_UNRANGED
    assert reasons.count("the profile gives no range (not logged by the run)") == UNRANGED - LOGGED_UNRANGED
    assert len(reasons) == data["summary"]["not_judged"] == UNRANGED + 2


def test_one_metric_with_no_range_reads_in_the_singular(tmp_path: Path) -> None:
    project = judged_project(tmp_path / "p", _catalog(1, 1), _profile(1))
    ran = run_cli("judge", "--profile", "judged", str(_run(tmp_path / "d", 1, 0)), cwd=project)
    assert "  1 metric has no range in the profile (not logged by the run); --format json lists it" in ran.stdout


def test_the_other_reasons_are_listed_up_to_a_cap(tmp_path: Path) -> None:
    many = NOT_JUDGED_SHOWN + 7
    project = judged_project(tmp_path / "p", _catalog(many, 0), _profile(many))
    run = _run(tmp_path / "d", many, 0)
    ran = run_cli("judge", "--profile", "judged", str(run), "--exclude-steps", "0-9", cwd=project)
    lines = ran.stdout.splitlines()
    listed = lines[lines.index("not judged:") + 1 : -1]
    assert len(listed) == NOT_JUDGED_SHOWN + 1
    assert all(line.endswith(": every step it covers is excluded") for line in listed[:-1])
    assert listed[-1] == "  and 7 more; --format json lists them"
    assert lines[-1] == (
        f"0 pass, 0 fail, 0 error, {many} not judged; nothing was judged: --exclude-steps leaves no step "
        "that an expectation covers; this is no pass"
    )
    assert ran.returncode == 1
    data = json.loads(
        run_cli(
            "judge", "--profile", "judged", str(run), "--exclude-steps", "0-9", "--format", "json", cwd=project
        ).stdout
    )
    assert len(data["not_judged"]) == many
