"""What derive does with runs it cannot trust for a range: a metric missing at steps an expectation
covers (a record lost in the middle of a run) is a problem of that expectation, as a metric a
run does not log at all; the range is not derived."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import run_cli, snapshot
from derive_helpers import seed_run, seeds_project
from metrics_manual.source.load import load_manual
from run_forms import write as write_form

Series = dict[str, dict[int, float]]


def _seeds() -> dict[str, Series]:
    return {f"seed-{i}": {k: dict(v) for k, v in seed_run(i).series.items()} for i in (1, 2, 3)}


def _drop(run: Series, prefixes: tuple[str, ...], steps: range | list[int]) -> None:
    for key, values in run.items():
        if key.startswith(prefixes):
            for s in steps:
                values.pop(s, None)


def _write(tmp: Path, form: str, runs: dict[str, Series]) -> list[str]:
    args = []
    for name, run in runs.items():
        write_form(form, run, tmp / name)
        args.append(f"--run={name}={tmp / name}")
    return args


def _outcome(stdout: str, head: str) -> list[str]:
    """The lines derive printed for one expectation: its head line and the indented ones after it."""
    lines = stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(head))
    out = [lines[at]]
    for line in lines[at + 1 :]:
        if not line.startswith("  "):
            break
        out.append(line)
    return out


@pytest.mark.parametrize("form", ["events", "ci-history"])
def test_a_run_with_lost_records_gives_no_range_where_they_are_missing(tmp_path: Path, form: str) -> None:
    root = seeds_project(tmp_path / "manual")
    runs = _seeds()
    # seed-2 lost every record of its rollout step key at steps 5-8 (the train records are all there):
    # the run went through those steps (judge fills them in: MM514), so its rollout metrics miss them.
    _drop(runs["seed-2"], ("rollout/", "perf/"), range(5, 9))
    # seed-3 logged its step, but not the reward, at step 10: missing there too.
    _drop(runs["seed-3"], ("rollout/raw_reward",), [10])
    args = _write(tmp_path / "runs", form, runs)
    before = (root / "ranges/profiles/seeds.yaml").read_text("utf-8")

    result = run_cli("derive", "--profile", "seeds", *args, "--write", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
    assert _outcome(result.stdout, "rollout/raw_reward [0] band") == [
        "rollout/raw_reward [0] band",
        "  not derived: run 'seed-2' misses rollout/raw_reward at 4 of the 12 steps it covers: steps 5-8",
        "  not derived: run 'seed-3' misses rollout/raw_reward at 1 of the 12 steps it covers: step 10",
    ]
    # A median is derived from the same steps: not derived either.
    assert _outcome(result.stdout, "perf/step_time [0] median")[1:] == [
        "  not derived: run 'seed-2' misses perf/step_time at 4 of the 12 steps it covers: steps 5-8"
    ]
    # What was not derived stays as it was written; what every run logs in full is derived.
    profile = load_manual(root).profile("seeds")
    reward = profile.expectations["rollout/raw_reward"][0]
    assert (reward.min, reward.max, reward.sources) == (0.5, 0.9, [])  # type: ignore[union-attr]
    assert "{kind: band, min: 0.5, max: 0.9, steps: 12}" in (root / "ranges/profiles/seeds.yaml").read_text("utf-8")
    assert profile.expectations["perf/step_time"][0].value == 150  # type: ignore[union-attr]
    grad = profile.expectations["train/grad_norm"][0]
    assert grad.sources == ["seed-1", "seed-2", "seed-3"] and (grad.min, grad.max) != (0.25, 4.5)  # type: ignore[union-attr]
    assert (root / "ranges/profiles/seeds.yaml").read_text("utf-8") != before


def test_a_gap_in_the_warm_up_left_out_keeps_the_range(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual")
    runs = _seeds()
    _drop(runs["seed-1"], ("rollout/raw_reward",), [1])  # in the warm-up: not a step the range covers
    args = _write(tmp_path / "runs", "ci-history", runs)
    before = snapshot(root)
    left = run_cli(
        "derive", "--profile", "seeds", *args, "--metric", "rollout/raw_reward", "--skip-first", "2", cwd=root
    )
    assert left.returncode == 0, left.stdout + left.stderr
    # 10 steps a run after the warm-up: 30 values; the reward trends, so the band keeps the 12 steps it covers.
    assert re.match(r"rollout/raw_reward \[0\] band: 30 values \(the first 12 steps of each run\)", left.stdout), (
        left.stdout
    )
    kept = run_cli("derive", "--profile", "seeds", *args, "--metric", "rollout/raw_reward", cwd=root)
    assert kept.returncode == 1
    assert "not derived: run 'seed-1' misses rollout/raw_reward at 1 of the 12 steps it covers: step 1" in kept.stdout
    assert snapshot(root) == before  # dry runs


def test_a_window_missing_a_step_is_not_derived(tmp_path: Path) -> None:
    root = seeds_project(tmp_path / "manual")
    runs = _seeds()
    _drop(runs["seed-3"], ("train/grad_norm",), [1])  # inside the window of the first 2 steps
    args = _write(tmp_path / "runs", "events", runs)
    result = run_cli("derive", "--profile", "seeds", *args, "--metric", "train/grad_norm", cwd=root)
    assert result.returncode == 1
    assert _outcome(result.stdout, "train/grad_norm [1] band")[1:] == [
        "  not derived: run 'seed-3' misses train/grad_norm at 1 of the 2 steps it covers: step 1"
    ]
    assert _outcome(result.stdout, "train/grad_norm [0] band")[1:] == [
        "  not derived: run 'seed-3' misses train/grad_norm at 1 of the 12 steps it covers: step 1"
    ]
