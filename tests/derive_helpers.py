"""Runs the derive tests write themselves: three seeds of a made-up setup, and a profile to derive."""

from __future__ import annotations

import random
from pathlib import Path

from conftest import TINY_CATALOG, write_project
from metrics_manual.runs.capture import capture_text
from metrics_manual.runs.run import Run

SEEDS_CATALOG = (
    TINY_CATALOG.replace("rollout: rollout/step}", "rollout: rollout/step, perf: rollout/step}")
    + """\
      - key: train/ppo_kl
        meaning: the KL between the old and the new policy
  - id: perf
    title: Performance
    metrics:
      - key: perf/step_time
        meaning: seconds of one step
        unit: s
      - key: perf/train_wait_time
        meaning: seconds outside the train block
        unit: s
      - key: perf/rollout_time
        meaning: seconds of the rollout
        unit: s
"""
)

# Seeds with no expectations, over 200 steps: derive proposes every range.
BARE_SEEDS_PROFILE = """\
id: seeds
title: Seed runs
summary: Made up for tests.
advice: Build your own.
setup:
  framework: Miles
  model: M-1
  dataset: D
  hardware: {count: 2, name: GPU}
  prompts_per_step: 4
  answers_per_prompt: 2
  token_limit: 1024
  steps: 200
sources:
  code: {kind: code, repository: Miles, branch: main, commit: abcdef12, parts: [loss]}
"""

# Comments, flow mappings, block lists, a block mapping inside a list, quoting and blank lines:
# what a maintainer writes by hand and what derive must keep.
SEEDS_PROFILE = """\
# A profile derived from seeds: every kind of layout a maintainer writes.
id: seeds
title: Seed runs
summary: Made up for tests.
advice: Build your own.
setup:
  framework: Miles
  model: M-1
  dataset: D
  hardware: {count: 2, name: GPU}   # one box
  prompts_per_step: 4
  answers_per_prompt: 2
  token_limit: 1024
  steps: 12
sources:
  code:
    kind: code
    repository: Miles
    branch: main
    commit: abcdef12
    parts:
      - loss
      - metric

expectations:
  # the reward, per step
  rollout/raw_reward:
    - {kind: band, min: 0.5, max: 0.9, steps: 12}   # typed by hand once
  train/grad_norm:
    - kind: band
      min: 0.25
      max: 4.5
    - {kind: band, min: 1, max: 3, window: {first: 2}, condition: 'in the first steps'}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: every_step}
  train/ppo_kl:
    - {kind: exact, value: 0, at: {step: 0}, condition: "in a healthy run"}
  perf/step_time:
    - {kind: median, value: 150, steps: 12}
  perf/train_wait_time:
    - kind: presence
"""

STEPS = 12


def seed_run(seed: int, steps: int = STEPS) -> Run:
    """One made-up run: noisy values around fixed levels, an invariant that holds."""
    rng = random.Random(seed)
    run = Run()
    for s in range(steps):
        values = {
            "rollout/raw_reward": 0.55 + 0.3 * s / steps + rng.uniform(-0.03, 0.03),
            "rollout/response_lengths": rng.uniform(380, 800),
            "train/grad_norm": (2.5 if s < 2 else 0.9) + rng.uniform(-0.4, 0.4),
            "train/pg_clipfrac": 0.0,
            "train/ppo_kl": 0.0 if s == 0 else rng.uniform(1e-4, 5e-4),
            "perf/step_time": 140 + rng.uniform(0, 25),
            "perf/train_wait_time": rng.uniform(1, 3),
            "perf/rollout_time": 40 + rng.uniform(0, 10),
        }
        for key, value in values.items():
            run.series.setdefault(key, {})[s] = value
    return run


def seeds_project(root: Path, profile: str = SEEDS_PROFILE) -> Path:
    return write_project(root, SEEDS_CATALOG, {"seeds": profile})


def write_runs(folder: Path, runs: dict[str, Run]) -> dict[str, Path]:
    """Each run as a CI-history file, the form of Miles' metric history."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, run in runs.items():
        path = folder / f"{name}.jsonl"
        path.write_text(capture_text(run, sorted(run.series)), "utf-8")
        out[name] = path
    return out
