"""One run as the readers give it: a series of values per metric key, indexed by its step.

The readers (one per file form a Miles run writes) produce a `Run`; `judge` holds it
against a profile and `derive` computes ranges from several. This module is the
contract between them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import Finding


@dataclass
class Run:
    """The parts of one run, merged: metric key -> step -> value.

    A non-finite value is kept as float('nan') / float('inf'): it is an error to judge,
    never a missing value. `problems` holds what the readers found (corrupt lines,
    cut last lines as warnings), with the file and line.
    """

    paths: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    series: dict[str, dict[int, float]] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)
    # Namespace -> the key that holds its step (the catalog's step_keys): judge needs it
    # to know which steps a metric's run reached.
    step_keys: dict[str, str] = field(default_factory=dict)
    # Keys the run logged whose values were not kept (read_run's `keys` filter).
    unread: set[str] = field(default_factory=set)

    def steps(self, key: str) -> list[int]:
        """The steps at which `key` was logged, in order."""
        return sorted(self.series.get(key, {}))

    def step_key(self, key: str) -> str | None:
        """The key that holds `key`'s step, from its namespace (train/grad_norm -> train/step)."""
        return self.step_keys.get(key.split("/", 1)[0])

    def reached(self, step_key: str) -> list[int]:
        """Every step of `step_key` at which the run logged anything, in order."""
        steps: set[int] = set(self.series.get(step_key, {}))
        for key, values in self.series.items():
            if self.step_key(key) == step_key:
                steps.update(values)
        return sorted(steps)
