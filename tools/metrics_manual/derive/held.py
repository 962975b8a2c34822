"""The runs held against a profile with the derived values in place, as `check` holds its captures."""

from __future__ import annotations

from typing import Any

from metrics_manual.derive.stats import Derivation
from metrics_manual.judge.captures import held_against, verdicts
from metrics_manual.judge.verdict import Result
from metrics_manual.model.schema import EXPECTATION, ProfileExport
from metrics_manual.runs.run import Run


def applied(export: ProfileExport, derivation: Derivation, run_ids: list[str]) -> ProfileExport:
    """The profile as the judge reads it, with the derived values in place (in memory)."""
    by_key: dict[str, dict[int, dict[str, Any]]] = {}
    for o in derivation.outcomes:
        if o.values is not None and not o.problems:
            by_key.setdefault(o.key, {})[o.index] = dict(o.values, sources=run_ids)
    metrics = []
    for m in export.metrics:
        changes = by_key.get(m.key, {})
        if not changes:
            metrics.append(m)
            continue
        items: list[Any] = list(m.expectations)
        for i, values in sorted(changes.items()):
            old = items[i].model_dump(exclude_none=True) if i < len(items) else {}
            new = {k: v for k, v in {**old, **values}.items() if v is not None}
            # Validated by its kind, which the derivation may have changed (a band of one value: exact).
            if i < len(items):
                items[i] = EXPECTATION.validate_python(new)
            else:
                items.append(EXPECTATION.validate_python(new))
        metrics.append(m.model_copy(update={"expectations": items}))
    return export.model_copy(update={"metrics": metrics})


Broken = tuple[str, int, str, Result]  # metric key, expectation index, run name, the judge's result


def failures(export: ProfileExport, runs: dict[str, Run], skip_first: int, every: bool = False) -> list[Broken]:
    """Each expectation a run breaks, judged as check judges its captures (`rejudge.verdicts`,
    every expectation that names the run or names no source; `every`: whatever it names)."""
    judged = {name: verdicts(export, run, skip_first) for name, run in runs.items()}
    out = []
    for m in export.metrics:
        for key in m.members or [m.key]:
            for i, e in enumerate(m.expectations):
                for name in runs if every else held_against(e.sources, runs):
                    r = judged[name].get((key, i))
                    if r is not None and r.verdict != "pass":
                        out.append((key, i, name, r))
    return out


def broken_line(b: Broken) -> str:
    key, i, name, r = b
    return f"{key} [{i}] {r.expected}: run {name!r} gives {r.verdict}: {r.reason}"
