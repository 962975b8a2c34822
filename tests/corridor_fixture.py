"""Corridors in a tiny project: a reference capture pinned under captures/, a profile that follows it, and
the lag example's runs (three healthy seeds whose reward rises from 0.3 to 0.8, and one 20 steps late)."""

from __future__ import annotations

import hashlib
import math
import random
from pathlib import Path

from conftest import TINY_CATALOG, write_project
from metrics_manual.runs.capture import reference_text
from metrics_manual.runs.run import Run
from metrics_manual.runs.series import Series

KEY = "rollout/raw_reward"
STEPS = 100
REFERENCE = "captures/p/reference.jsonl"


def reward(step: int, lag: int = 0) -> float:
    """The lag example's healthy reward: 0.3 at step 0, 0.65 at step 30, near 0.8 at step 99."""
    return 0.3 + 0.5 * (1 - math.exp(-max(step - lag, 0) / 25))


def reward_run(seed: int, *, lag: int = 0, steps: int = STEPS, noise: float = 0.015) -> Run:
    """One run of the reward (and its step key), with Gaussian noise of `noise` at each step."""
    rng = random.Random(seed)
    run = Run()
    run.series[KEY] = Series((s, reward(s, lag) + rng.gauss(0, noise)) for s in range(steps))
    run.series["rollout/step"] = Series((s, float(s)) for s in range(steps))
    return run


def pin(root: Path, rel: str, text: str) -> str:
    """Write a capture at `rel` in the project; its SHA-256, as its source records it."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def curve(steps: range = range(STEPS)) -> list[tuple[int, float]]:
    return [(s, reward(s)) for s in steps]


def corridor_profile(
    sha: str,
    corridor: str = "{kind: corridor, reference: {source: ref}, abs_floor_up: 0.1, abs_floor_down: 0.1}",
    *,
    path: str = REFERENCE,
    extra: str = "",
) -> str:
    """A profile `p` whose reward follows the reference capture at `path` (source id `ref`)."""
    return f"""\
id: p
title: Corridor runs
summary: Made up for tests.
advice: Build your own.
setup: {{framework: Miles, model: M, dataset: D, hardware: {{count: 1, name: GPU}}, prompts_per_step: 4,
        answers_per_prompt: 2, token_limit: 1024, steps: {STEPS}}}
sources:
  ref: {{kind: capture, path: {path}, keys: [mean], sha256: {sha}}}
{extra}expectations:
  {KEY}:
    - {corridor}
"""


def corridor_project(root: Path, text: str | None = None, corridor: str | None = None) -> Path:
    """A tiny project whose profile `p` holds the reward to a corridor around `curve()` (or `text`)."""
    sha = pin(root, REFERENCE, text if text is not None else reference_text({KEY: curve()}))
    args = (sha,) if corridor is None else (sha, corridor)
    return write_project(root, TINY_CATALOG, {"p": corridor_profile(*args)})
