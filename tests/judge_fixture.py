"""The judge tests' fixture: a catalog, a profile that ranges it, and a clean run of ten steps."""

from __future__ import annotations

from pathlib import Path

import run_forms
from conftest import write_project
from metrics_manual.exports.document import export_document
from metrics_manual.exports.profile import site_url
from metrics_manual.model.schema import ProfileExport
from metrics_manual.source.load import load_manual

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
      - {key: train/pg_clipfrac, meaning: the share of clipped tokens}
      - {key: train/entropy_loss, meaning: the entropy}
  - id: perf
    title: Performance
    metrics:
      - {key: perf/step_time, meaning: seconds per step, unit: s}
      - {key: perf/rollout_time, meaning: seconds of generation, unit: s}
"""


def profile_head(steps: int = 10) -> str:
    """A judged profile up to its `expectations:` line: the tests' profiles differ in what follows."""
    return f"""\
id: judged
title: A judged setup
summary: Made up for tests.
advice: Build your own.
setup: {{framework: Miles, model: M, dataset: D, hardware: {{count: 1, name: GPU}}, prompts_per_step: 4,
        answers_per_prompt: 2, token_limit: 1024, steps: {steps}}}
sources:
  cap: {{kind: capture, path: cap.json, keys: [a]}}
expectations:
"""


PROFILE = (
    profile_head()
    + """\
  rollout/raw_reward:
    - {kind: band, min: 0.2, max: 0.9, steps: 10}
  rollout/response_lengths:
    - {kind: median, value: 400, steps: 10}
  train/grad_norm:
    - {kind: band, min: 0.1, max: 5}
    - {kind: band, min: 0.5, max: 2, window: {first: 2}, condition: with plain sampling}
  train/ppo_kl:
    - {kind: exact, value: 0, at: {step: 0}}
  train/pg_clipfrac:
    - {kind: exact, value: 0, at: every_step}
  perf/step_time:
    - {kind: presence, at: every_step}
  perf/rollout_time:
    - {kind: median, value: 20, steps: 10, tolerance: 0.05}
"""
)

STEPS = range(10)


def clean_run() -> run_forms.Series:
    return {
        "rollout/raw_reward": {s: 0.5 + 0.01 * s for s in STEPS},
        "rollout/response_lengths": {s: 390.0 + 2 * s for s in STEPS},
        "perf/step_time": {s: 30.0 + s for s in STEPS},
        "perf/rollout_time": {s: 19.5 + 0.1 * s for s in STEPS},
        "train/grad_norm": {s: 1.0 + 0.3 * s for s in STEPS},  # above the window band after step 3
        "train/ppo_kl": {s: 0.001 * s for s in STEPS},
        "train/pg_clipfrac": {s: 0.0 for s in STEPS},
        "train/entropy_loss": {s: 0.3 for s in STEPS},
    }


def judged_project(root: Path, catalog: str = CATALOG, profile: str = PROFILE) -> Path:
    """A project whose one profile, `judged`, ranges the catalog; published, so exports link to it."""
    write_project(root, catalog, {"judged": profile})
    (root / "mkdocs.yml").write_text("site_name: M\nsite_url: https://manual.example/\n", "utf-8")
    return root


def judged_profile(project: Path) -> ProfileExport:
    """The `judged` profile as judge reads it: its export."""
    manual = load_manual(project)
    return export_document(manual, manual.profile("judged"), site_url(project))
