"""Load an exported profile for a tool of your own.

    from metrics_manual.api import load_profile
    profile = load_profile("lab-gb10.json")
    profile.expected("train/grad_norm")   # [Band(kind='band', min=0.35, max=4.95, ...)]

Judge a run against it (the same judgement as `metrics-manual judge`):

    from metrics_manual.api import judge, read_run
    run = read_run([Path("dump/events")], profile.step_keys)   # the step keys the profile carries
    verdict = judge(profile, run, rtol=0.1, exclude_steps=[3])
    verdict.summary, [r for r in verdict.results if r.verdict != "pass"]
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from metrics_manual.judge.rules import DEFAULT_RTOL, Judgement, Result
from metrics_manual.judge.rules import judge as _judge
from metrics_manual.model.schema import AtStep, Band, Exact, Median, MetricExport, Presence, ProfileExport
from metrics_manual.runs.read import read_run
from metrics_manual.runs.series import Run, StepRanges

__all__ = [
    "load_profile",
    "ProfileExport",
    "MetricExport",
    "Band",
    "Median",
    "Exact",
    "Presence",
    "AtStep",
    "judge",
    "read_run",
    "Run",
    "StepRanges",
    "Judgement",
    "Result",
]


def load_profile(path: str | Path) -> ProfileExport:
    """Read an exported profile (.json, .yaml or .yml) into typed objects; ValueError if it is not one."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
        if path.suffix in (".yaml", ".yml"):
            import yaml  # only here: a JSON profile is read without it

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(str(exc)) from None
        else:
            data = json.loads(text)
        return ProfileExport.model_validate(data)
    except (ValueError, OSError, ValidationError, RecursionError) as exc:
        raise ValueError(f"{path}: not an exported metrics-manual profile: {exc}") from None


def judge(
    profile: ProfileExport,
    run: Run,
    *,
    rtol: float = DEFAULT_RTOL,
    exclude_steps: Iterable[int] | StepRanges = (),
) -> Judgement:
    """Every expectation of `profile` held against `run`: pass, fail or error, with the failing steps.
    `exclude_steps`: steps, or `StepRanges([(first, last), ...])` for long ranges."""
    return _judge(profile, run, rtol=rtol, exclude_steps=exclude_steps)
