"""A corridor judged step by step: outside is a fail naming the step, its value, the reference and the
bounds; a value that is not finite is an error; a missing step an error; a shorter run is judged on the
steps it has, and a longer one's steps past the reference are covered by nothing."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_cli
from corridor_fixture import KEY, corridor_project, reward, reward_run
from derive_helpers import write_runs
from metrics_manual.judge.verdict import LISTED
from metrics_manual.model.phrase import measured


def judged(project: Path, run: Path, *args: str) -> tuple[int, dict]:
    r = run_cli("judge", "--root", str(project), "--profile", "p", str(run), "--format", "json", *args)
    return r.returncode, json.loads(r.stdout)


def result(verdict: dict) -> dict:
    [r] = [r for r in verdict["results"] if r["metric"] == KEY]
    return r


def test_a_run_inside_its_corridor_passes_and_one_outside_fails_at_those_steps_with_reference_and_bounds(
    tmp_path: Path,
) -> None:
    project = corridor_project(tmp_path / "p")
    runs = write_runs(tmp_path / "runs", {"ok": reward_run(1), "late": reward_run(2, lag=20)})
    code, ok = judged(project, runs["ok"])
    assert code == 0 and result(ok)["verdict"] == "pass" and result(ok)["steps_judged"] == 100
    code, late = judged(project, runs["late"])
    r = result(late)
    assert code == 1 and r["verdict"] == "fail"
    # Outside exactly where the late run is more than 0.1 from the reference (its bounds: +-0.1).
    run = reward_run(2, lag=20).series[KEY]
    outside = [s for s in range(100) if abs(run[s] - reward(s)) > 0.1]
    assert r["failing_count"] == len(outside) and [p["step"] for p in r["failing_steps"]] == outside[:LISTED]
    step = outside[0]
    ref, lo, hi = reward(step), reward(step) - 0.1, reward(step) + 0.1
    shown = f"step {step}: {measured(run[step], [lo, hi])} (reference {measured(ref)}, corridor {measured(lo)} to {measured(hi)})"
    assert shown in r["reason"], r["reason"]


def test_a_value_that_is_not_finite_is_an_error_not_a_fail(tmp_path: Path) -> None:
    project = corridor_project(tmp_path / "p")
    run = reward_run(1)
    run.series[KEY][40] = float("nan")
    code, verdict = judged(project, write_runs(tmp_path / "runs", {"nan": run})["nan"])
    r = result(verdict)
    assert code == 1 and r["verdict"] == "error" and "not a finite number at 1 step: step 40: NaN" in r["reason"]


def test_a_step_the_reference_has_and_a_finished_run_lacks_is_missing(tmp_path: Path) -> None:
    project = corridor_project(tmp_path / "p")
    run = reward_run(1)
    del run.series[KEY][50]
    code, verdict = judged(project, write_runs(tmp_path / "runs", {"gap": run})["gap"])
    r = result(verdict)
    assert code == 1 and r["verdict"] == "error" and r["steps_missing"] == 1 and "step 50" in r["reason"]


def test_a_shorter_run_passes_on_the_steps_it_has_and_a_longer_one_s_later_steps_are_covered_by_nothing(
    tmp_path: Path,
) -> None:
    project = corridor_project(tmp_path / "p")
    runs = write_runs(tmp_path / "runs", {"short": reward_run(1, steps=60), "long": reward_run(1, steps=130)})
    code, short = judged(project, runs["short"])
    r = result(short)
    assert code == 0 and r["verdict"] == "pass" and (r["steps_judged"], r["steps_expected"]) == (60, 100)
    assert any("not judged at steps 60-99: the run has not reached them" in n["reason"] for n in short["not_judged"])
    code, long = judged(project, runs["long"])
    assert code == 0 and result(long)["verdict"] == "pass"
    [u] = long["uncovered"]
    assert (u["metric"], u["steps"], u["count"]) == (KEY, [{"first": 100, "last": 129}], 30)


def test_the_corridor_s_bounds_are_allowed_and_each_side_reaches_as_far_as_its_own_tolerance(tmp_path: Path) -> None:
    # Up: 10% of |ref| (at least 0.01); down: 0.05. At ref 0.3 the top is 0.33, the bottom 0.25.
    corridor = "{kind: corridor, reference: {source: ref}, rel_up: 0.1, abs_floor_up: 0.01, abs_floor_down: 0.05}"
    project = corridor_project(tmp_path / "p", corridor=corridor)
    from metrics_manual.source.load import load_manual

    [e] = load_manual(project).profile("p").expectations[KEY]
    lo, hi = e.bounds(0.3)  # type: ignore[union-attr]
    assert (round(lo, 12), round(hi, 12)) == (0.25, 0.33)
    run = reward_run(1, noise=0)
    run.series[KEY][0] = hi  # at the edge: inside
    run.series[KEY][1] = e.bounds(reward(1))[0] - 1e-9  # type: ignore[union-attr]  # just under: outside
    code, verdict = judged(project, write_runs(tmp_path / "runs", {"edge": run})["edge"])
    r = result(verdict)
    assert r["verdict"] == "fail" and [p["step"] for p in r["failing_steps"]] == [1]
