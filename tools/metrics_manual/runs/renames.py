"""A run's values under a key's former names (the catalog's `renamed_from`) read as the key itself.

A run from an older Miles logs `perf/total_train_time` where a newer one logs `perf/step_time`:
the values are the same quantity, so they are judged as the current key, and the verdict says
they were read under the former name. A run that logs both names at one step with different
values is an error of the key (two names disagree), never a silent pick.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from metrics_manual.runs.collect import same_value
from metrics_manual.runs.run import Run
from metrics_manual.runs.series import Series


def fold(run: Run, renames: Mapping[str, str]) -> Run:
    """`run` with every former key's values moved to its current key (a new Run when anything moved;
    the dicts of `run` are not changed, so a caller's run stays as it was read)."""
    olds = [old for old in renames if old in run.series or old in run.conflicts]
    if not olds:
        return run
    series = dict(run.series)
    invalid = dict(run.invalid)
    conflicts = dict(run.conflicts)
    other_step = dict(run.other_step)
    renamed = {k: list(v) for k, v in run.renamed.items()}
    clashes = {k: list(v) for k, v in run.name_conflicts.items()}
    for old in olds:
        new = renames[old]
        values = series.pop(old, None)
        if old in conflicts:
            conflicts[new] = sorted([*conflicts.get(new, []), *conflicts.pop(old)])
        if old in other_step:
            other_step.setdefault(new, other_step.pop(old))
        if not values:
            continue
        renamed.setdefault(new, []).append(old)
        raw = invalid.pop(old, {})
        current = series.get(new)
        if current is None:
            series[new] = values
            if raw:
                invalid[new] = {**invalid.get(new, {}), **raw}
            continue
        # Both names logged: one series, the current name's value kept where both have one.
        here = new if new in run.series else renamed[new][0]  # the name the values held so far came under
        merged = Series(current.items())
        taken: dict[int, str] = {}
        for step, value in values.items():
            if step not in current:
                merged[step] = value
                if step in raw:
                    taken[step] = raw[step]
            elif not same_value(value, current[step]):
                clashes.setdefault(new, []).append((step, old, value, here, current[step]))
        series[new] = merged
        if taken:
            invalid[new] = {**invalid.get(new, {}), **taken}
    for k in clashes:
        clashes[k].sort()
    return dataclasses.replace(
        run,
        series=series,
        invalid=invalid,
        conflicts=conflicts,
        other_step=other_step,
        renamed=renamed,
        name_conflicts=clashes,
    )
