"""Load an exported profile for a tool of your own.

    from metrics_manual.api import load_profile
    profile = load_profile("lab-gb10.json")
    profile.expected("train/grad_norm")   # [Band(kind='band', min=0.35, max=4.95, ...)]
    profile.expected("train/nope")        # UnknownMetric (a KeyError): the catalog has no such key

Judge a run against it (the same judgement as `metrics-manual judge`):

    from metrics_manual.api import judge, read_run
    run = read_run([Path("dump/events")], profile.step_keys)   # the step keys the profile carries
    verdict = judge(profile, run, rtol=0.1, exclude_steps=[3])
    verdict.summary, [r for r in verdict.results if r.verdict != "pass"]
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from metrics_manual.judge.judging import judge as _judge
from metrics_manual.judge.profile_file import ProfileFileError, read_profile_file
from metrics_manual.judge.verdict import Judgement, Result
from metrics_manual.model.schema import (
    AtStep,
    Band,
    Exact,
    Median,
    MetricExport,
    Presence,
    ProfileExport,
    UnknownMetric,
)
from metrics_manual.model.tolerance import DEFAULT_RTOL
from metrics_manual.runs.read import read_run
from metrics_manual.runs.run import Run
from metrics_manual.runs.steps import StepRanges

__all__ = [
    "load_profile",
    "ProfileFileError",
    "ProfileExport",
    "UnknownMetric",
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
    """Read an exported profile (.json, .yaml or .yml) into typed objects.

    ValueError if it is not one (a `ProfileFileError`: its `findings` say where and why, each at
    the file's line and column, with its code)."""
    return read_profile_file(Path(path))


def judge(
    profile: ProfileExport,
    run: Run,
    *,
    rtol: float = DEFAULT_RTOL,
    exclude_steps: Iterable[int] | StepRanges = (),
    live: bool = False,
) -> Judgement:
    """Every expectation of `profile` held against `run`: pass, fail or error, with the failing steps.
    `exclude_steps`: steps, or `StepRanges([(first, last), ...])` for long ranges. `live`: the run may
    still be writing, so a value missing at the last step of a step key is not judged."""
    return _judge(profile, run, rtol=rtol, exclude_steps=exclude_steps, live=live)
