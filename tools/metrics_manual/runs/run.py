"""One run as the readers give it: a series of values per metric key, indexed by its step.

The readers (one per file form a Miles run writes) produce a `Run`; `judge` holds it
against a profile and `derive` computes ranges from several. This module is the
contract between them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from metrics_manual.diagnostics import codes
from metrics_manual.diagnostics.finding import Finding
from metrics_manual.runs.series import Series
from metrics_manual.runs.steps import StepGaps, StepRanges, gaps, split_gaps


@dataclass
class Run:
    """The parts of one run, merged: metric key -> step -> value.

    A non-finite value is kept as float('nan') / float('inf'): it is an error to judge,
    never a missing value. `problems` holds what the readers found (corrupt lines,
    cut last lines as warnings), with the file and line.
    """

    paths: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    series: dict[str, Series] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)
    # Namespace -> the key that holds its step (the catalog's step_keys): judge needs it
    # to know which steps a metric's run reached.
    step_keys: dict[str, str] = field(default_factory=dict)
    # Keys the run logged whose values were not kept (read_run's `keys` filter), at most
    # KEYS_KEPT of them; `unread_beyond` counts how many more there were (up to KEYS_COUNTED).
    unread: set[str] = field(default_factory=set)
    unread_beyond: int = 0
    # Key -> step -> what was logged where a number belongs (a string, null ...); the series holds NaN there.
    invalid: dict[str, dict[int, str]] = field(default_factory=dict)
    # Key -> (step, file, other file) where two files logged different values.
    conflicts: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    # (file, step key) -> steps logged again later in that file (a resumed run); the later record is kept.
    relogged: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    # Step key -> the step not finished (a file's last line is cut): missing values there are no error.
    unfinished: dict[str, int] = field(default_factory=dict)
    # Judged key -> the other step key it was logged with, when its own was missing from the record.
    other_step: dict[str, str] = field(default_factory=dict)
    # Key of a namespace with no step key -> the one step key its records carried (runs/collect.py).
    carried: dict[str, str] = field(default_factory=dict)
    # Key -> the former names (the catalog's renamed_from) the run logged it under; their values are this key's.
    renamed: dict[str, list[str]] = field(default_factory=dict)
    # Key -> (step, one name, its value, another name, its value) where two names of the key disagree.
    name_conflicts: dict[str, list[tuple[int, str, float, str, float]]] = field(default_factory=dict)
    # Keys with values read from a form that stores float32 (TensorBoard): judge compares them at float32 precision.
    float32: set[str] = field(default_factory=set)

    def where(self) -> str:
        """Where a finding of the whole run points: its first path (a file a GitHub annotation can name)."""
        return self.paths[0] if self.paths else "run"

    def steps(self, key: str) -> list[int]:
        """The steps at which `key` was logged, in order."""
        return sorted(self.series.get(key, {}))

    def step_key(self, key: str) -> str | None:
        """The key that holds `key`'s step, from its namespace (train/grad_norm -> train/step)."""
        return self.step_keys.get(key.split("/", 1)[0])

    def logged_steps(self, step_key: str) -> list[int]:
        """Every step of `step_key` at which the run logged anything, in order."""
        own = self.series.get(step_key)
        steps: set[int] = set(own or ())
        for key, values in self.series.items():
            # Most keys are logged at each step of their step key: an array compare, not 100,000 set adds.
            if self.step_key(key) == step_key and (own is None or values.steps_array() != own.steps_array()):
                steps.update(values)
        return sorted(steps)

    def step_gaps(self, step_key: str) -> StepGaps:
        """The steps of `step_key` the run logged, and those with no record between them (`gaps`)."""
        logged = self.logged_steps(step_key)
        return StepGaps(logged, *split_gaps(gaps(logged, step_key), len(logged)))

    def reached(self, step_key: str) -> list[int]:
        """Every step of `step_key` the run reached, in order: those it logged anything at, and
        those with no record between two it logged (up to the cap): the run went through them, so
        a metric is missing there, never "not covered"."""
        return self.step_gaps(step_key).reached()

    def reached_by(self, key: str) -> list[int]:
        """The steps the run reached that `key` is judged on: those of its step key, else its own."""
        sk = self.step_key(key)
        return self.reached(sk) if sk else self.steps(key)

    def first_steps(self, key: str, n: int) -> list[int]:
        """The first `n` steps of the run for `key`: the first `n` its step key reached (whether or
        not `key` itself was logged there), else `key`'s own first `n`.

        The one meaning of "the first N steps of a run": derive's --skip-first leaves these out,
        check excludes them when it re-judges a capture, and a band's `window` covers them.
        """
        return self.reached_by(key)[:n] if n > 0 else []


def gap_findings(
    run: Run, excluded: StepRanges | None = None, step_gaps: Callable[[str], StepGaps] | None = None
) -> list[Finding]:
    """A finding per step key whose steps have gaps (less those `excluded` wholly covers): a warning
    for the steps filled in (the expectations covering them are errors), an error for the rest."""
    out = []
    where = run.where()
    for sk in sorted(set(run.step_keys.values())):
        logged, filled, beyond = (step_gaps or run.step_gaps)(sk)
        if excluded:
            filled = [g for g in filled if not excluded.covers(g.start, g[-1])]
            beyond = [g for g in beyond if not excluded.covers(g.start, g[-1])]
        if not logged or not (filled or beyond):
            continue
        ran = f"(the run logged {len(logged):,} steps from {logged[0]:,} to {logged[-1]:,}, step by step)"
        for gs, severity, what in (
            (filled, "warning", "a value is missing there for every metric of it"),
            (beyond, "error", "more steps than the run logged, so they were not filled in and not judged"),
        ):
            if gs:
                many = sum(map(len, gs))
                shown = ", ".join(f"{g.start}" if len(g) == 1 else f"{g.start}-{g[-1]}" for g in gs[:5])
                more = f" and {len(gs) - 5:,} more gaps" if len(gs) > 5 else ""
                out.append(
                    Finding(
                        where,
                        1,
                        1,
                        f"{sk}: no record at {many:,} step{'s' if many != 1 else ''}: {shown}{more} {ran}; {what}",
                        severity,
                        code=codes.STEPS_NOT_LOGGED,
                    )
                )
    return out
