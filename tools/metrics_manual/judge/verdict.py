"""The verdict of `metrics-manual judge`: the typed result judge fills in (judge/judging.py).

The typed result is also the JSON output (`--format json`), so its JSON Schema, published as
docs/export/verdict.schema.json, comes from these classes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from metrics_manual.model.json_schema import schema_text
from metrics_manual.model.kinds import Kind
from metrics_manual.runs.collect import KEYS_KEPT

LISTED = 1000  # failing steps listed per result: a run failing everywhere must not print a book
SCHEMA_VERSION: Literal[1] = 1
Verdict = Literal["pass", "fail", "error"]
NonFinite = Literal["NaN", "Infinity", "-Infinity"]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class Point(_Out):
    step: int
    value: float | NonFinite | None = Field(
        description="The value at that step: a number, NaN / Infinity / -Infinity, or null when not logged."
    )


class Observed(_Out):
    """The run's finite values at the steps judged."""

    min: float | None = None
    max: float | None = None
    median: float | None = None
    count: int = Field(default=0, description="How many values were judged (non-finite ones included).")
    min_step: int | None = None
    max_step: int | None = None


class Result(_Out):
    metric: str = Field(description="The logged key (a family's expectation is judged on each member).")
    expectation: int = Field(description="Index, from 0, in that metric's list of expectations in the profile.")
    kind: Kind
    expected: str = Field(description="The expectation in the manual's words.")
    verdict: Verdict
    steps_judged: int
    steps_missing: int = Field(
        default=0,
        description="Steps the expectation covers that the run reached and finished without a value of this metric.",
    )
    steps_expected: int = Field(description="Steps the expectation covers; more than steps_judged on a short run.")
    failing_steps: list[Point] = Field(
        default_factory=list, description=f"The failing steps, in order: the first {LISTED:,}."
    )
    failing_count: int = Field(default=0, description="How many steps failed (all of them, also past the listed ones).")
    observed: Observed
    condition: str | None = Field(None, description="When the expectation holds, in words.")
    tolerance: float | None = Field(None, description="median: the relative tolerance used.")
    tolerance_from: Literal["profile", "rtol"] | None = None
    precision: Literal["float32"] | None = Field(
        None,
        description="float32: the values were read from a form that stores float32 (TensorBoard), so band, median "
        "and exact compared them with their numbers rounded to float32: a value equal to a bound to float32 "
        "precision is at the bound (a tolerance of float32's rounding, a relative 2^-24). The reason names "
        "the values that passed only so.",
    )
    reason: str = Field(description="What was observed, in words.")
    unit: str | None = None
    meaning: str | None = None
    url: str | None = Field(None, description="The metric in the manual.")
    logged_as: list[str] = Field(
        default_factory=list,
        description="Former names of this key (the catalog's renamed_from) the run logged it under: "
        "their values were read as this key.",
    )


class NotJudged(_Out):
    metric: str
    expectation: int | None = None
    reason: str
    no_range: bool = Field(default=False, description="The profile gives the metric no range.")
    logged: bool | None = Field(default=None, description="With no_range: whether the run logged the metric.")


class StepsSeen(_Out):
    first: int
    last: int
    count: int
    no_record: list[Span] = Field(
        default_factory=list,
        description="Steps of a step key counted step by step, between two the run logged, with no record at all "
        f"(a deleted, lost or unreadable line): counted as reached, so a metric is missing there. The first {LISTED:,} spans.",
    )


class Span(_Out):
    first: int
    last: int


class Relogged(_Out):
    path: str
    step_key: str
    steps: list[Span] = Field(description="Steps this file logged again later; the later record was judged.")


class RunInfo(_Out):
    paths: list[str]
    formats: list[str]
    steps: dict[str, StepsSeen] = Field(description="Step key -> the steps the run reached.")
    excluded_steps: list[Span] = Field(default_factory=list, description="--exclude-steps, as ranges.")
    unfinished_steps: dict[str, int] = Field(
        default_factory=dict,
        description="Step key -> its last step, unfinished because the run is judged live (`live`) or a file's "
        "last line (or TensorBoard record) is cut: a value missing there is not judged (the step may still be "
        "being written), never missing.",
    )
    live: bool = Field(
        default=False,
        description="Judged with --live: the run may still be writing, so the last step of each step key is "
        "unfinished. Without it the run is over: a value missing at its last step is an error.",
    )
    relogged: list[Relogged] = Field(
        default_factory=list, description="Steps logged again later in the same file (a resumed run)."
    )
    unlisted_keys: int = Field(
        default=0,
        description=f"About how many more keys not in the catalog the run logged, past the {KEYS_KEPT:,} listed.",
    )


class Uncovered(_Out):
    """Steps of a judged metric that no expectation of it covers: nothing judged them."""

    metric: str
    steps: list[Span] = Field(description=f"The steps, as ranges (the first {LISTED:,} ranges).")
    count: int = Field(description="How many steps.")
    of: int = Field(description="The steps the metric is judged on: those its step key reached, less excluded ones.")


class UnknownKeys(_Out):
    """Keys the run logged that the catalog does not document: what the manual lacks for this run."""

    count: int = Field(description="How many (about how many when `estimated`).")
    estimated: bool = Field(
        default=False, description=f"Past the reader's cap of {KEYS_KEPT:,} named keys the rest were only counted."
    )
    listed: list[str] = Field(
        default_factory=list, description="The first of them by name, sorted (each cut to 120 characters)."
    )


class Problem(_Out):
    """A finding of the run's reader, where `path:line:col` names the file's own line and column."""

    path: str
    line: int
    col: int
    severity: Literal["error", "warning"]
    code: str = Field(description="The kind of finding, as every command names it (MM504; docs/findings.md).")
    message: str


class Summary(_Out):
    passed: int = Field(alias="pass")
    failed: int = Field(alias="fail")
    errors: int = Field(alias="error")
    not_judged: int = Field(description="Expectations and keys not judged, the keys past those listed counted.")
    uncovered: int = Field(default=0, description="Judged metrics with steps no expectation covers.")
    nothing_judged: str | None = Field(
        default=None,
        description="Why no expectation was judged, when none was: a run where nothing is judged is no pass (exit 1).",
    )
    problems: int = Field(
        default=0, description="Errors found while reading the run (corrupt or hostile lines): exit 2."
    )


class Judgement(_Out):
    """The verdict of `metrics-manual judge --format json`."""

    schema_version: Literal[1]
    profile: str
    profile_title: str
    run: RunInfo
    results: list[Result]
    not_judged: list[NotJudged]
    uncovered: list[Uncovered] = Field(
        default_factory=list, description="Judged metrics with steps no expectation covers, and those steps."
    )
    unknown_keys: UnknownKeys = Field(
        default_factory=lambda: UnknownKeys(count=0),
        description="Keys the run logged that the catalog does not document (those listed also named in not_judged).",
    )
    problems: list[Problem] = Field(default_factory=list)
    summary: Summary

    @property
    def exit_code(self) -> int:
        """2 when the run's files did not read cleanly (bad input: the verdicts are not the whole
        story), else 1 on any fail or error or when nothing was judged, else 0."""
        s = self.summary
        return 2 if s.problems else 1 if s.failed or s.errors or s.nothing_judged else 0

    def to_json(self) -> str:
        return self.model_dump_json(indent=2, by_alias=True) + "\n"


VERDICT_SCHEMA = "docs/export/verdict.schema.json"


def verdict_schemas() -> dict[str, str]:
    """The published JSON Schema of `judge --format json`, for build to write next to the profile's."""
    return {VERDICT_SCHEMA: schema_text(Judgement, "metrics-manual judge verdict (--format json)")}
