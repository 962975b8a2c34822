"""Before any rule, what makes a pass unearned (ERRORS below, the words of docs/judging.md):
a ranged metric missing from the run, a value that is not a finite number anywhere in the
run, two files with different values at one step, a former name of the key (the catalog's
renamed_from, read as the key) and its current name with different values at one step, a step
the expectation covers that the run reached and finished without this metric. Excluded steps
are dropped before all of it.

This module finds those that hold for every expectation of a key (`KeyFacts`) and why a key has no
value at all (`absent`); a missing step is judge/judging.py's, which knows the steps covered.
"""

from __future__ import annotations

import math
from itertools import compress
from operator import not_

from metrics_manual.judge.rules import Failing, listed, point
from metrics_manual.judge.verdict import Verdict
from metrics_manual.model.phrase import count_steps, num
from metrics_manual.runs.ci_history import TARGET_METRIC_KEYS
from metrics_manual.runs.run import Run
from metrics_manual.runs.steps import StepRanges


class KeyFacts:
    """What holds for every expectation of one key: values that are not finite numbers anywhere in
    the run, and steps two files disagree on (excluded steps dropped)."""

    def __init__(self, key: str, run: Run, excluded: StepRanges) -> None:
        values = run.series.get(key)
        self.bad: Failing = []
        if values is not None and not values.finite():
            # At C speed: the values that are not finite, of 100,000 a long run logs.
            vals = values.values()
            bad: Failing = list(compress(values.items(), map(not_, map(math.isfinite, vals))))
            self.bad = [p for p in bad if p[0] not in excluded] if excluded else bad
        self.invalid = run.invalid.get(key, {})
        self.conflicts = [c for c in run.conflicts.get(key, []) if c[0] not in excluded]
        self.names = [c for c in run.name_conflicts.get(key, []) if c[0] not in excluded]

    def errors(self) -> list[str]:
        out = []
        if self.bad:
            out.append(f"not a finite number at {count_steps(len(self.bad))}: {self._listed_bad()}")
        if self.conflicts:
            step, a, b = self.conflicts[0]
            more = f" and {len(self.conflicts) - 1} more" if len(self.conflicts) > 1 else ""
            out.append(
                f"two files disagree at {count_steps(len(self.conflicts))} (step {step}{more}): {a} and {b}"
                " (two processes logged different values; exclude the steps or give one of the files)"
            )
        if self.names:
            step, a, va, b, vb = self.names[0]
            more = f" and {len(self.names) - 1} more" if len(self.names) > 1 else ""
            out.append(
                f"two names of the key disagree at {count_steps(len(self.names))} (step {num(step)}{more}): "
                f"{a} {_listed_value(va)} and {b} {_listed_value(vb)} (a former name, renamed_from in the "
                "catalog, and the current one logged different values; neither was picked)"
            )
        return out

    def _listed_bad(self, most: int = 5) -> str:
        def one(p: tuple[int, float | None]) -> str:
            raw = self.invalid.get(p[0])
            return f"step {num(p[0])}: {raw}" if raw is not None else listed([p], [])

        text = ", ".join(one(p) for p in self.bad[:most])
        return text + (f" and {len(self.bad) - most} more" if len(self.bad) > most else "")


def _listed_value(v: float) -> str:
    value = point(0, v).value
    return value if isinstance(value, str) else num(value) if value is not None else "null"


def absent(key: str, sk: str | None, run: Run) -> tuple[Verdict | None, str]:
    """Why a ranged key has no value at all: (None, reason) when it is not judged."""
    other = run.other_step.get(key)
    if other:
        return "error", f"logged only with the step key {other}, not with its own {sk} (the catalog's); not judged"
    forms = set(run.formats)
    if forms and forms <= {"ci-history"} and key not in TARGET_METRIC_KEYS:
        return None, (
            f"the CI-history form records only Miles' {len(TARGET_METRIC_KEYS)} whitelisted keys (TARGET_METRIC_KEYS) "
            "and this is not one"
        )
    if sk is None and key in run.unread:  # an exported profile whose catalog gives its namespace no step key
        ns = key.split("/", 1)[0]
        return "error", (
            f"logged by the run, but its namespace {ns} has no step key in the profile's catalog, so no value of it "
            f"can be placed at a step; not judged: add `{ns}: STEP_KEY` under the catalog's step_keys and export again"
        )
    return "error", "not in the run: no value logged" + (f" (its step key {sk})" if sk else "")
