"""The runs Miles' own writers wrote (tests/fixtures/miles-writers/, its README says how), the catalog
and profile they are judged against, and what the tests that read them ask of a verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO
from judge_fixture import judged_profile, judged_project, profile_head
from metrics_manual.judge.judging import judged_keys
from metrics_manual.judge.verdict import Judgement
from metrics_manual.model.schema import ProfileExport
from metrics_manual.runs import steps as run_steps
from metrics_manual.runs.read import Run, read_run

MILES = REPO / "tests" / "fixtures" / "miles-writers"
STEP_KEYS = {"train": "train/step", "rollout": "rollout/step", "perf": "rollout/step"}

CATALOG = """\
title: Metrics
code: {repository: example/miles, branch: main, commit: 31f1ca96}
step_keys: {train: train/step, rollout: rollout/step, perf: rollout/step}
sections:
  - id: rollout
    title: Rollout
    metrics:
      - {key: rollout/raw_reward, meaning: the mean reward}
      - {key: rollout/response_lengths, meaning: the mean answer length, unit: tokens}
  - id: training
    title: Training
    metrics:
      - {key: train/grad_norm, meaning: the gradient norm}
      - {key: train/ppo_kl, meaning: the k1 KL between old and new policy}
  - id: perf
    title: Performance
    metrics:
      - {key: perf/rollout_time, meaning: seconds of generation, unit: s}
      - {key: perf/step_time, meaning: seconds per step, unit: s}
"""

PROFILE = (
    profile_head(steps=100)
    + """\
  rollout/raw_reward:
    - {kind: band, min: 0.4, max: 0.8}
  rollout/response_lengths:
    - {kind: band, min: 350, max: 450}
  train/grad_norm:
    - {kind: band, min: 0.5, max: 5}
  train/ppo_kl:
    - {kind: band, min: 0, max: 0.01}
    - {kind: band, min: 0, max: 0.01, window: {first: 2}}
  perf/rollout_time:
    - {kind: band, min: 15, max: 25}
  perf/step_time:
    - {kind: presence, at: every_step}
"""
)


def miles_profile(tmp_path_factory: pytest.TempPathFactory) -> ProfileExport:
    """The profile the runs are judged against (a module's fixture calls it)."""
    return judged_profile(judged_project(tmp_path_factory.mktemp("merge") / "p", CATALOG, PROFILE))


def read(paths: list[Path], profile: ProfileExport) -> Run:
    return read_run(paths, STEP_KEYS, keys=judged_keys(profile))


def bad(j: Judgement) -> dict[str, str]:
    return {r.metric: r.verdict for r in j.results if r.verdict != "pass"}


def result(j: Judgement, metric: str):  # noqa: ANN201
    return next(r for r in j.results if r.metric == metric)


def relogged(j: Judgement, step_key: str) -> list[tuple[int, int]]:
    """The spans of `step_key` named re-logged, over every file."""
    steps = {
        s
        for r in j.run.relogged
        if r.step_key == step_key
        for span in r.steps
        for s in range(span.first, span.last + 1)
    }
    return [(a, b) for a, b in run_steps.StepRanges.of(sorted(steps)).spans()]


def need(form: str) -> None:
    if form == "tensorboard":
        pytest.importorskip("tensorboard", reason="pip install 'metrics-manual[tensorboard]'")
